//! Template overrides end to end: a team's (`OPGEN_TEMPLATES`) and a project's
//! (`.opgen/templates/`) used by `init` and `create api`, a broken override refused with its
//! file and line, and `templates check` and `update` reporting a stale one.

mod common;

use common::{Project, fails_unchanged, opgen, read_tree};
use predicates::prelude::*;

/// `opgen templates show NAME`: the text to start an override of NAME from.
fn shown(name: &str) -> String {
    let temp = tempfile::tempdir().unwrap();
    let output = opgen(temp.path())
        .args(["templates", "show", name])
        .assert()
        .success();
    String::from_utf8(output.get_output().stdout.clone()).unwrap()
}

const DOCKERFILE_LINE: &str = "# Rust toolchain of the build";
const DOCKERFILE_HOUSE: &str = "# House style: the team's registry mirrors every base image.\n";
const CONTROLLER_LINE: &str = "//! Controller for";
const CONTROLLER_HOUSE: &str = "//! Owned by the storage team.\n//!\n";

fn with_house_style(text: &str, line: &str, house: &str) -> String {
    assert!(text.contains(line), "{line:?} in\n{text}");
    text.replacen(line, &format!("{house}{line}"), 1)
}

/// `opgen init name` with the team's overrides in `team`.
fn init_with_team(name: &str, team: &std::path::Path) -> Project {
    let temp = tempfile::tempdir().unwrap();
    opgen(temp.path())
        .args(["init", name, "--domain", "example.com"])
        .env("OPGEN_TEMPLATES", team)
        .assert()
        .success();
    Project {
        root: temp.path().join(name),
        temp,
    }
}

/// `opgen init demo` with the team's overrides in `team`, which must fail with `needle` and
/// write nothing; its stderr.
fn init_refused_with_team(team: &std::path::Path, needle: &str) -> String {
    let temp = tempfile::tempdir().unwrap();
    let before = read_tree(temp.path());
    let init = opgen(temp.path())
        .args(["init", "demo", "--domain", "example.com"])
        .env("OPGEN_TEMPLATES", team)
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&init.get_output().stderr).into_owned();
    assert!(stderr.contains(needle), "{stderr}");
    assert!(read_tree(temp.path()) == before, "init wrote nothing");
    stderr
}

/// Writes, at `path`, an override of the Dockerfile in the team's house style.
fn write_house_dockerfile(path: &std::path::Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        path,
        with_house_style(
            &shown("project/Dockerfile"),
            DOCKERFILE_LINE,
            DOCKERFILE_HOUSE,
        ),
    )
    .unwrap();
}

#[test]
fn init_and_create_api_render_a_teams_and_a_projects_overrides() {
    let team = tempfile::tempdir().unwrap();
    let dockerfile = team.path().join("project/Dockerfile.tera");
    write_house_dockerfile(&dockerfile);

    let styled = init_with_team("styled", team.path());
    let plain = Project::init("styled", "");
    assert_eq!(
        styled.read("Dockerfile"),
        with_house_style(&plain.read("Dockerfile"), DOCKERFILE_LINE, DOCKERFILE_HOUSE)
    );
    // Nothing else changed.
    let mut expected = plain.tree();
    expected.insert("Dockerfile".into(), styled.read("Dockerfile").into_bytes());
    assert!(styled.tree() == expected, "only the Dockerfile differs");

    styled.write(
        ".opgen/templates/resource/controller.rs.tera",
        &with_house_style(
            &shown("resource/controller.rs"),
            CONTROLLER_LINE,
            CONTROLLER_HOUSE,
        ),
    );
    let create = "create api --group db --version v1 --kind Backup";
    styled
        .opgen()
        .args(create.split_whitespace())
        .env("OPGEN_TEMPLATES", team.path())
        .assert()
        .success();
    plain.create_api("--group db --version v1 --kind Backup");
    let controller = "src/controllers/db/backup.rs";
    assert_eq!(
        styled.read(controller),
        with_house_style(&plain.read(controller), CONTROLLER_LINE, CONTROLLER_HOUSE)
    );

    let list = styled
        .opgen()
        .args(["templates", "list"])
        .env("OPGEN_TEMPLATES", team.path())
        .assert()
        .success();
    let list = String::from_utf8_lossy(&list.get_output().stdout).into_owned();
    assert!(
        list.contains(&format!(
            "project/Dockerfile  overridden by {}\n",
            dockerfile.display()
        )),
        "{list}"
    );
    assert!(
        list.contains(
            "resource/controller.rs  overridden by .opgen/templates/resource/controller.rs.tera\n"
        ),
        "{list}"
    );
    assert!(list.contains("\nproject/Makefile\n"), "{list}");
    assert!(
        !list.contains("generated/"),
        "generated machinery is not listed:\n{list}"
    );

    styled
        .opgen()
        .args(["templates", "check"])
        .env("OPGEN_TEMPLATES", team.path())
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "2 template overrides render and are up to date",
        ));
}

#[test]
fn a_broken_override_is_refused_with_its_file_and_line_and_nothing_is_written() {
    let project = Project::init("demo", "");
    // A kind whose controller `templates check` renders with the override.
    project.create_api("--group db --version v1 --kind Archive");
    let file = ".opgen/templates/resource/controller.rs.tera";
    let header = shown("resource/controller.rs")
        .lines()
        .next()
        .unwrap()
        .to_owned();

    project.write(
        file,
        &format!("{header}\n//! {{{{ kind.kind }}}}\n{{% if %}}\n"),
    );
    fails_unchanged(
        &project.root,
        "create api --group db --version v1 --kind Backup",
        1,
        &[&format!("{file}:3: the template override does not parse")],
    );

    project.write(
        file,
        &format!("{header}\n//! {{{{ kind.kind }}}}\n\n{{{{ kind.no_such_value }}}}\n"),
    );
    fails_unchanged(
        &project.root,
        "create api --group db --version v1 --kind Backup",
        1,
        &[&format!(
            "{file}:4: the template override cannot be rendered"
        )],
    );
    let before = project.tree();
    project
        .opgen()
        .args(["templates", "check"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(format!(
            "{file}:4: the template override cannot be rendered"
        )))
        .stderr(predicate::str::contains(
            "1 of 1 template overrides need attention",
        ));
    assert!(project.tree() == before, "check writes nothing");
    std::fs::remove_file(project.root.join(file)).unwrap();

    // The generated machinery is opgen's: an override of it is refused, not ignored.
    project.write(".opgen/templates/generated/src/lib.rs.tera", "// mine\n");
    fails_unchanged(
        &project.root,
        "create api --group db --version v1 --kind Backup",
        1,
        &[
            ".opgen/templates/generated/src/lib.rs.tera overrides `generated/src/lib.rs`, a template of opgen's generated machinery",
        ],
    );
    std::fs::remove_file(
        project
            .root
            .join(".opgen/templates/generated/src/lib.rs.tera"),
    )
    .unwrap();
    project.write(".opgen/templates/project/Dockerfle.tera", "FROM scratch\n");
    fails_unchanged(
        &project.root,
        "create api --group db --version v1 --kind Backup",
        1,
        &[
            "overrides `project/Dockerfle`, which is not a built-in template",
            "the closest is `project/Dockerfile`",
        ],
    );

    // A team's broken override stops `init` before the directory exists.
    let team = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(team.path().join("project")).unwrap();
    std::fs::write(
        team.path().join("project/Makefile.tera"),
        "all:\n\t{{ nope }\n",
    )
    .unwrap();
    init_refused_with_team(
        team.path(),
        &format!(
            "{}:2: the template override does not parse",
            team.path().join("project/Makefile.tera").display()
        ),
    );
}

#[test]
fn templates_check_and_update_report_an_override_whose_built_in_changed() {
    let project = Project::init("demo", "");
    let text = with_house_style(
        &shown("project/Dockerfile"),
        DOCKERFILE_LINE,
        DOCKERFILE_HOUSE,
    );
    // As if made from an older built-in Dockerfile: its recorded hash is not today's.
    let (_, hash) = text.split_once("fnv1a64:").unwrap();
    let stale = text.replacen(&hash[..16], "0123456789abcdef", 1);
    let file = ".opgen/templates/project/Dockerfile.tera";
    project.write(file, &stale);

    let before = project.tree();
    let check = project
        .opgen()
        .args(["templates", "check"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "1 of 1 template overrides need attention",
        ));
    let stdout = String::from_utf8_lossy(&check.get_output().stdout).into_owned();
    assert!(
        stdout.contains(&format!("  {file} (overrides project/Dockerfile)\n")),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("--- {file}\n+++ built-in project/Dockerfile\n")),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("-{}", DOCKERFILE_HOUSE)),
        "{stdout}"
    );
    assert!(
        stdout.contains("-{# opgen: override of project/Dockerfile, made from built-in fnv1a64:0123456789abcdef -#}\n"),
        "{stdout}"
    );
    assert!(project.tree() == before, "check writes nothing");

    project
        .opgen()
        .arg("update")
        .assert()
        .success()
        .stderr(predicate::str::contains(format!(
            "  {file} (overrides project/Dockerfile)"
        )));

    // Refreshed from `templates show`, it is up to date again.
    project.write(file, &text);
    project
        .opgen()
        .args(["templates", "check"])
        .assert()
        .success();
}

#[test]
fn templates_show_refuses_what_cannot_be_overridden() {
    let temp = tempfile::tempdir().unwrap();
    fails_unchanged(
        temp.path(),
        "templates show generated/src/lib.rs",
        1,
        &["a template of opgen's generated machinery"],
    );
    fails_unchanged(
        temp.path(),
        "templates show resource/controler.rs",
        1,
        &[
            "not a built-in template",
            "the closest is `resource/controller.rs`",
        ],
    );
}

/// An override may be a symbolic link: followed when it resolves inside the project or the
/// team's directory (a team links shared files), refused with the reason when it points
/// elsewhere or at nothing. Dotfiles that are no template (`.gitkeep`) are ignored, and so
/// are dot directories that hold none (`.git`).
#[test]
fn a_linked_override_is_used_inside_the_project_or_the_teams_directory_and_refused_elsewhere() {
    use std::os::unix::fs::symlink;

    // The team's Dockerfile is a link to a shared file in a dot directory of the team's.
    let team = tempfile::tempdir().unwrap();
    write_house_dockerfile(&team.path().join(".shared/Dockerfile.tera"));
    std::fs::create_dir_all(team.path().join("project")).unwrap();
    symlink(
        "../.shared/Dockerfile.tera",
        team.path().join("project/Dockerfile.tera"),
    )
    .unwrap();
    std::fs::write(team.path().join("project/.gitkeep"), "").unwrap();
    std::fs::create_dir_all(team.path().join(".git/refs")).unwrap();
    std::fs::write(team.path().join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let styled = init_with_team("styled", team.path());
    assert!(styled.read("Dockerfile").contains(DOCKERFILE_HOUSE));

    // The project's controller override links to a file of the project's; a `.gitkeep` keeps
    // an empty folder in git.
    styled.write(
        "templates/controller.rs.tera",
        &with_house_style(
            &shown("resource/controller.rs"),
            CONTROLLER_LINE,
            CONTROLLER_HOUSE,
        ),
    );
    styled.write(".opgen/templates/.gitkeep", "");
    styled.write(".opgen/templates/project/.DS_Store", "");
    std::fs::create_dir_all(styled.root.join(".opgen/templates/resource")).unwrap();
    symlink(
        "../../../templates/controller.rs.tera",
        styled
            .root
            .join(".opgen/templates/resource/controller.rs.tera"),
    )
    .unwrap();
    styled
        .opgen()
        .args("create api --group db --version v1 --kind Backup".split_whitespace())
        .env("OPGEN_TEMPLATES", team.path())
        .assert()
        .success();
    assert!(
        styled
            .read("src/controllers/db/backup.rs")
            .contains(CONTROLLER_HOUSE)
    );
    styled
        .opgen()
        .args(["templates", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "resource/controller.rs  overridden by .opgen/templates/resource/controller.rs.tera\n",
        ));

    // A link out of both, and a link to nothing, are refused with what they point at.
    let elsewhere = tempfile::tempdir().unwrap();
    let outside = elsewhere.path().join("Makefile.tera");
    std::fs::write(&outside, shown("project/Makefile")).unwrap();
    symlink(
        &outside,
        styled.root.join(".opgen/templates/project/Makefile.tera"),
    )
    .unwrap();
    fails_unchanged(
        &styled.root,
        "create api --group db --version v1 --kind Restore",
        1,
        &[
            &format!(
                ".opgen/templates/project/Makefile.tera is a symbolic link to {}, outside the project and the team's directory (OPGEN_TEMPLATES)",
                std::fs::canonicalize(&outside).unwrap().display()
            ),
            "Copy the file into .opgen/templates",
        ],
    );
    std::fs::remove_file(styled.root.join(".opgen/templates/project/Makefile.tera")).unwrap();
    symlink(
        "missing.tera",
        styled.root.join(".opgen/templates/project/Makefile.tera"),
    )
    .unwrap();
    fails_unchanged(
        &styled.root,
        "create api --group db --version v1 --kind Restore",
        1,
        &[
            ".opgen/templates/project/Makefile.tera is a symbolic link to missing.tera, which does not exist",
        ],
    );
}

/// An override that renders invalid Rust or YAML is refused before anything is written, naming
/// the override and its line, not blaming opgen; `init` checks an override's Rust too.
#[test]
fn an_override_rendering_invalid_rust_or_yaml_is_refused_naming_it() {
    let project = Project::init("demo", "");
    let controller = ".opgen/templates/resource/controller.rs.tera";
    let broken = shown("resource/controller.rs").replacen(
        CONTROLLER_LINE,
        &format!("fn house_style( {{\n{CONTROLLER_LINE}"),
        1,
    );
    let line = broken
        .lines()
        .position(|line| line == "fn house_style( {")
        .unwrap()
        + 1;
    project.write(controller, &broken);
    let create = project
        .opgen()
        .args("create api --group db --version v1 --kind Backup".split_whitespace())
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&create.get_output().stderr).into_owned();
    assert!(!stderr.contains("a bug in opgen"), "{stderr}");
    fails_unchanged(
        &project.root,
        "create api --group db --version v1 --kind Backup",
        1,
        &[
            &format!(
                "{controller}:{line}: the template override renders src/controllers/db/backup.rs, which is not valid Rust: line "
            ),
            "Fix the override",
        ],
    );
    std::fs::remove_file(project.root.join(controller)).unwrap();

    let sample = ".opgen/templates/resource/sample.yaml.tera";
    let broken = shown("resource/sample.yaml").replace("  size: 1\n", "  size: [1\n");
    project.write(sample, &broken);
    let line = broken
        .lines()
        .position(|line| line == "  size: [1")
        .unwrap()
        + 1;
    fails_unchanged(
        &project.root,
        "create api --group db --version v1 --kind Backup",
        1,
        // The override's first line, its header, renders as nothing.
        &[&format!(
            "{sample}:{line}: the template override renders config/samples/db_v1_backup.yaml, which is not valid YAML: line {}: unclosed bracket",
            line - 1
        )],
    );
    std::fs::remove_file(project.root.join(sample)).unwrap();

    // A team's override of the manager's main.rs, which `init` would write as it rendered it.
    let team = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(team.path().join("project/src")).unwrap();
    std::fs::write(
        team.path().join("project/src/main.rs.tera"),
        shown("project/src/main.rs").replace("fn main()", "fn main("),
    )
    .unwrap();
    let stderr = init_refused_with_team(
        team.path(),
        "project/src/main.rs.tera:17: the template override renders src/main.rs, which is not valid Rust",
    );
    assert!(!stderr.contains("a bug in opgen"), "{stderr}");
}
