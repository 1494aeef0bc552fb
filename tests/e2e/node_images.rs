//! The images the node scenario runs, built with buildah on this machine. No registry is
//! reachable here, so the base images a user's `make docker-build` pulls are replaced by local
//! stand-ins with the same contract (docs/testing.md lists what differs):
//!
//! - `gcr.io/distroless/static:nonroot`, the manager's base: CA certificates, `/etc/passwd`
//!   naming `nonroot` (65532), no shell, no package manager. The stand-in is tagged with that
//!   name in the local image store, so the project's own last stage builds from it unchanged.
//! - the builder stages (`rust:…-alpine` with cargo-chef, which fetch crates and apk
//!   packages): the test builds the manager as they do, `cargo build --release --locked`,
//!   statically linked, and the last stage copies that binary in place of the builder's.
//! - `curlimages/curl`, which the generated e2e test runs to read `/metrics`: Debian's curl with
//!   the shared libraries it links, from this machine.
//! - the operand: busybox's `httpd` serving a page that names the image's version on the
//!   port the kinds declare, so its readiness probe passes once it listens.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

/// The name the project's Dockerfile gives its last stage's base image.
pub const STATIC_BASE: &str = "gcr.io/distroless/static:nonroot";
/// The port the operand images serve on (the kinds' `--port`).
pub const OPERAND_PORT: u16 = 8080;
/// The user every image here runs as: distroless' `nonroot`.
const NONROOT: &str = "65532";

/// `buildah <args>`; panics with its output if it fails.
fn buildah(args: &[&str]) -> String {
    let output = Command::new("buildah")
        .args(args)
        .output()
        .unwrap_or_else(|err| panic!("cannot run buildah (a Debian package): {err}"));
    assert!(
        output.status.success(),
        "buildah {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Removes the images `tags` and the stand-in base from buildah's store (those not there are
/// passed over): they are the scenario's own, about 150 MB, and a run builds them again.
pub fn remove(tags: &[&str]) {
    for tag in tags.iter().chain(&[STATIC_BASE]) {
        let _ = Command::new("buildah")
            .args(["rmi", "--force", tag])
            .output();
    }
}

/// Builds `containerfile` in `context` as `tag`, from local images only.
fn build(context: &Path, containerfile: &str, tag: &str) {
    let file = context.join("Containerfile.e2e");
    std::fs::write(&file, containerfile).unwrap();
    buildah(&[
        "build",
        "--pull=never",
        "--quiet",
        "-f",
        &file.to_string_lossy(),
        "-t",
        tag,
        &context.to_string_lossy(),
    ]);
}

/// A fresh directory for one image's build context.
fn context_dir(scratch: &Path, name: &str) -> PathBuf {
    let dir = scratch.join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The stand-in for distroless `static:nonroot`, tagged [`STATIC_BASE`].
pub fn static_base(scratch: &Path) {
    let dir = context_dir(scratch, "static-base");
    std::fs::write(
        dir.join("passwd"),
        format!("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:{NONROOT}:{NONROOT}:nonroot:/home/nonroot:/sbin/nologin\n"),
    )
    .unwrap();
    std::fs::write(
        dir.join("group"),
        format!("root:x:0:\nnonroot:x:{NONROOT}:\n"),
    )
    .unwrap();
    std::fs::copy(
        "/etc/ssl/certs/ca-certificates.crt",
        dir.join("ca-certificates.crt"),
    )
    .expect("this machine has CA certificates (Debian's ca-certificates)");
    build(
        &dir,
        &format!(
            "FROM scratch\nCOPY passwd group /etc/\nCOPY ca-certificates.crt /etc/ssl/certs/\nUSER {NONROOT}:{NONROOT}\nWORKDIR /home/nonroot\n"
        ),
        STATIC_BASE,
    );
}

/// The manager's image `tag`: the project's own Dockerfile from its last `FROM` on (the
/// runtime stage), with the statically linked release `binary` in place of the builder
/// stage's. Panics if the Dockerfile no longer has the shape this relies on.
pub fn manager(scratch: &Path, dockerfile: &str, name: &str, binary: &Path, tag: &str) {
    let last_stage = dockerfile
        .rfind("\nFROM ")
        .map(|at| &dockerfile[at + 1..])
        .expect("the Dockerfile has stages");
    assert!(
        last_stage.starts_with(&format!("FROM {STATIC_BASE}\n")),
        "the Dockerfile's last stage is not built on {STATIC_BASE}:\n{last_stage}"
    );
    let from_builder = format!("COPY --from=builder /workspace/target/release/{name} /manager");
    assert!(
        last_stage.contains(&from_builder),
        "the Dockerfile's last stage does not copy the builder's binary ({from_builder}):\n{last_stage}"
    );
    let dir = context_dir(scratch, "manager");
    std::fs::copy(binary, dir.join(name)).unwrap();
    build(
        &dir,
        &last_stage.replace(&from_builder, &format!("COPY {name} /manager")),
        tag,
    );
}

/// An operand image `tag` whose page says `version`.
pub fn operand(scratch: &Path, version: &str, tag: &str) {
    let dir = context_dir(scratch, &format!("operand-{version}"));
    std::fs::copy("/bin/busybox", dir.join("busybox"))
        .expect("busybox-static is installed (scripts/cluster.sh installs it)");
    std::fs::create_dir_all(dir.join("www")).unwrap();
    std::fs::write(dir.join("www/index.html"), format!("operand {version}\n")).unwrap();
    build(
        &dir,
        &format!(
            "FROM scratch\nCOPY busybox /bin/busybox\nCOPY www /www\nUSER {NONROOT}:{NONROOT}\nENTRYPOINT [\"/bin/busybox\", \"httpd\", \"-f\", \"-p\", \"{OPERAND_PORT}\", \"-h\", \"/www\"]\n"
        ),
        tag,
    );
}

/// The stand-in for `curlimages/curl` as `tag`: this machine's curl and every shared library
/// it loads, at their paths, with `curl` as the entrypoint.
pub fn curl(scratch: &Path, tag: &str) {
    let dir = context_dir(scratch, "curl");
    let curl = Path::new("/usr/bin/curl");
    let ldd = Command::new("ldd").arg(curl).output().expect("ldd runs");
    assert!(ldd.status.success(), "ldd {curl:?} failed");
    let mut files = vec![curl.to_path_buf()];
    // Lines are `name => /path (address)` or `/path (address)`; the vDSO has no file.
    files.extend(
        String::from_utf8_lossy(&ldd.stdout)
            .lines()
            .filter_map(|line| line.split_whitespace().find(|word| word.starts_with('/')))
            .map(PathBuf::from),
    );
    for file in &files {
        let to = dir.join("root").join(file.strip_prefix("/").unwrap());
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        // The file itself, not a symbolic link into this machine.
        std::fs::copy(file, &to).unwrap_or_else(|err| panic!("copying {file:?}: {err}"));
    }
    let certs = dir.join("root/etc/ssl/certs");
    std::fs::create_dir_all(&certs).unwrap();
    std::fs::copy(
        "/etc/ssl/certs/ca-certificates.crt",
        certs.join("ca-certificates.crt"),
    )
    .unwrap();
    build(
        &dir,
        &format!(
            "FROM scratch\nCOPY root/ /\nUSER {NONROOT}:{NONROOT}\nENTRYPOINT [\"/usr/bin/curl\"]\n"
        ),
        tag,
    );
}
