//! Whether the project's own files still reach the runtime as `crate::runtime`: the path of the
//! machinery that opgen 0.1 generated into `src/runtime/`, and that 0.2 kept as an alias of
//! `opgen-runtime` in the generated `src/lib.rs`. Files scaffolded by those releases name it
//! (`use crate::runtime::reconcile::RESYNC_PERIOD;`, `use ::<crate>::{controllers,
//! runtime::manager};`); today's name `opgen_runtime` itself. The generated `src/lib.rs` keeps
//! the alias, under those releases' module paths, for as long as one of the project's files
//! names it, so that `opgen update` never breaks a file it does not own.

use std::path::Path;

use crate::{files::rust_files, plan::GENERATED_MARKER};

/// Whether a Rust file of the project at `root` (under `src/` or `tests/`, opgen's generated
/// files left out) names the alias; `crate_ident` is the manager crate's name in Rust.
pub fn named_in(root: &Path, crate_ident: &str) -> anyhow::Result<bool> {
    for dir in ["src", "tests"] {
        let dir = root.join(dir);
        if !dir.is_dir() {
            continue;
        }
        for (_, text) in rust_files(root, &dir)? {
            let generated = text
                .lines()
                .next()
                .is_some_and(|first| first.contains(GENERATED_MARKER));
            if !generated && names_alias(&text, crate_ident) {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// Whether `text` names a module `runtime` of the crate (`crate::runtime`, `<crate>::runtime`)
/// or a path that starts there (`runtime::run`, after `use crate::runtime::{self}`), outside
/// comments. `kube::runtime` and `opgen_runtime` are other things.
fn names_alias(text: &str, crate_ident: &str) -> bool {
    text.lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .any(|code| {
            code.match_indices("runtime").any(|(start, _)| {
                let before = &code[..start];
                let after = &code[start + "runtime".len()..];
                let word_start = before
                    .chars()
                    .last()
                    .is_none_or(|c| !c.is_alphanumeric() && c != '_');
                let word_end = after
                    .chars()
                    .next()
                    .is_none_or(|c| !c.is_alphanumeric() && c != '_');
                if !word_start || !word_end {
                    return false;
                }
                match before.strip_suffix("::") {
                    Some(parent) => {
                        let parent = parent
                            .rsplit(|c: char| !c.is_alphanumeric() && c != '_')
                            .next()
                            .unwrap_or_default();
                        parent == "crate" || parent == crate_ident
                    }
                    None => after.starts_with("::"),
                }
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_alias_is_told_from_kube_and_the_crate() {
        for named in [
            "use crate::runtime::reconcile::RESYNC_PERIOD;",
            "use crate::runtime::{self, Context};",
            "use ::demo_operator::runtime::workload::Workload as _;",
            "use ::demo_operator::{controllers, runtime::manager};",
            "    runtime::run(ctx, Reconciler).await",
        ] {
            assert!(names_alias(named, "demo_operator"), "{named}");
        }
        for other in [
            "use ::kube::runtime::controller::Action;",
            "use ::opgen_runtime::{Context, RESYNC_PERIOD};",
            "// the machinery in `crate::runtime` runs them",
            "let runtime = 3;",
            "use ::other::runtime::Thing;",
        ] {
            assert!(!names_alias(other, "demo_operator"), "{other}");
        }
    }

    #[test]
    fn generated_files_and_other_folders_do_not_count() {
        let dir = tempfile::tempdir().unwrap();
        let write = |path: &str, text: &str| {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            "src/controllers/mod.rs",
            &format!("// {GENERATED_MARKER}\nuse crate::runtime::Context;\n"),
        );
        write("vendor/x/src/lib.rs", "use crate::runtime::Context;\n");
        write("src/main.rs", "use ::demo::{controllers, manager};\n");
        assert!(!named_in(dir.path(), "demo").unwrap());
        write(
            "tests/integration/db/backup.rs",
            "use ::demo::runtime::workload::Workload as _;\n",
        );
        assert!(named_in(dir.path(), "demo").unwrap());
    }
}
