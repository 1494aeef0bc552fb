//! What `opgen update` tells the user: the generated files it left alone or no longer
//! generates, the scaffolded files that differ from today's scaffold, and the next steps.

use std::path::Path;

use crate::{
    apply,
    model::OpgenVersion,
    plan::{Action, GENERATED_MARKER},
    shell::Shell,
    update::{Update, kubernetes::Move, patch::Patch},
};

/// Names the generated files left alone because their header is gone, and the files with a
/// header that this opgen no longer generates.
pub fn generated(update: &Update, shell: &mut Shell) {
    for change in update
        .generated
        .changes
        .iter()
        .filter(|change| change.action == Action::Keep)
    {
        shell.note(&format!(
            "{} lost its `{GENERATED_MARKER}` header, so it is yours and was left as it is; put the header back to let opgen rewrite it",
            change.path
        ));
    }
    for path in &update.leftovers {
        shell.note(&format!(
            "{path} carries opgen's generated header, but opgen {} does not generate it (an older release did): delete it if nothing uses it any more",
            OpgenVersion::running()
        ));
    }
}

/// What a move to another Kubernetes release did and leaves to the user: the release's
/// end of life, the resources granted that one of the releases lacks, and the build to run.
pub fn kubernetes(change: Move, update: &Update, shell: &mut Shell) {
    if let Some(warning) = change.to.end_of_life_warning() {
        shell.warn(&warning);
    }
    for note in &update.kubernetes_notes {
        shell.warn(note);
    }
    shell.note(&format!(
        "the project now builds against Kubernetes {} (k8s-openapi's `{}`): run `cargo build` and `make test-integration` on that release, since code of yours may use APIs that differ between {} and {}",
        change.to,
        change.to.feature(),
        change.from,
        change.to
    ));
}

/// Lists the scaffolded files that differ from today's scaffold, and with `diff` prints how.
pub fn scaffolded(update: &Update, diff: bool, shell: &mut Shell) {
    for change in &update.scaffolded {
        let (verb, old) = match &change.old {
            Some(old) => ("Differs", old.as_str()),
            None => ("Missing", ""),
        };
        shell.status(verb, &change.path);
        if diff {
            shell.print(&apply::unified_diff(&change.path, old, &change.new));
        }
    }
    if update.scaffolded.is_empty() {
        return;
    }
    let count = update.scaffolded.len();
    let (files, differ) = if count == 1 {
        ("file", "differs")
    } else {
        ("files", "differ")
    };
    let how = if diff {
        "the diffs printed show how (yours on the `-` side)"
    } else {
        "see how with `opgen update --diff`"
    };
    shell.note(&format!(
        "{count} scaffolded {files} {differ} from what opgen {} would scaffold for this project today. Scaffolded files are yours, so update leaves them alone: {how}, and bring over by hand what you want",
        OpgenVersion::running()
    ));
    if !update.formatted {
        shell.note(
            "rustfmt was not found, so today's Rust files were compared unformatted: Rust files may be listed for their layout alone",
        );
    }
}

/// What `--patch` wrote to `file`, how to apply it, and what it leaves to `--diff`.
pub fn patch(file: &Path, patch: &Patch, shell: &mut Shell) {
    let file = file.display();
    if patch.is_empty() {
        shell.note(&format!(
            "today's scaffold adds nothing to your scaffolded files, so no patch was written to {file}"
        ));
        return;
    }
    let mut what = Vec::new();
    if !patch.amended.is_empty() {
        what.push(format!("adds lines to {}", patch.amended.join(", ")));
    }
    if !patch.created.is_empty() {
        what.push(format!("creates {}", patch.created.join(", ")));
    }
    shell.note(&format!(
        "{file} {}: what today's scaffold has and your files lack, removing nothing of yours. Review it, then apply it from the project's root with `git apply {file}` (or `patch -p1 < {file}`); leave a file out with `git apply --exclude=PATH {file}`",
        what.join(", and ")
    ));
    if !patch.left_out.is_empty() {
        shell.note(&format!(
            "the patch leaves out the changes that would replace or remove lines of yours, in {}: `opgen update --diff` shows them, to bring over by hand",
            patch.left_out.join(", ")
        ));
    }
}

/// `has_chart`: the project has a Helm chart, whose templates follow the manifests and whose
/// values.yaml (the user's) may lack values of this opgen's chart.
pub fn next_steps(from: &OpgenVersion, unchanged: bool, has_chart: bool) -> String {
    let running = OpgenVersion::running();
    if unchanged {
        return format!(
            "\nThe project's generated files are those of opgen {running} already; nothing changed.\n"
        );
    }
    let updated = if *from == running {
        format!(
            "The project was on opgen {running} already; its generated files that differed from this opgen's were rewritten."
        )
    } else {
        format!("Updated the project from opgen {from} to {running}.")
    };
    let chart = if has_chart {
        "  make helm        # regenerate dist/chart; it names values your values.yaml lacks\n"
    } else {
        ""
    };
    format!(
        "\n{updated} Next steps:\n  make manifests   # rebuild the CRDs and the role with this opgen\n{chart}  make test\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_steps_regenerate_a_chart_the_project_has() {
        let older: OpgenVersion = "0.0.1".parse().unwrap();
        let with_chart = next_steps(&older, false, true);
        assert!(
            with_chart.contains("  make helm        # regenerate dist/chart; it names values your values.yaml lacks\n  make test\n"),
            "{with_chart}"
        );
        assert!(!next_steps(&older, false, false).contains("make helm"));
    }
}
