//! Template overrides: a team's house style without a fork of opgen.
//!
//! A project's `.opgen/templates/<name>.tera`, or the same layout in the directory that
//! `OPGEN_TEMPLATES` names (a team's), replaces the built-in template `<name>`; the project's
//! wins over the team's. Only the templates of scaffolded files (the user's) can be overridden:
//! the generated machinery must stay in step with the runtime it drives, so an override of it
//! is refused rather than ignored.
//!
//! `opgen templates show` starts an override with a header comment that records a hash of the
//! built-in text it was made from, so that `templates check` and `update` can say which
//! overrides were made from a built-in template that has changed since.

use std::{
    fmt::Write as _,
    path::{Path, PathBuf},
};

use anyhow::{Context as _, bail};

use crate::templates::{self, Templates};

/// Where a project keeps its overrides, relative to its root.
pub const PROJECT_DIR: &str = ".opgen/templates";
/// The variable naming a team's directory of overrides.
pub const TEAM_VARIABLE: &str = "OPGEN_TEMPLATES";

/// The built-in templates of scaffolded files: a folder (ending in `/`) or one template.
const OVERRIDABLE: &[&str] = &[
    "project/",
    "license/",
    "resource/",
    "foreign/",
    "webhook/defaulting.rs",
    "webhook/validation.rs",
    "webhook/conversion.rs",
    "webhook/config/",
];

/// How an override's first line records the built-in text it was made from. The comment ends
/// with `-#}`, so that it renders as nothing, its line break included.
const HEADER_START: &str = "{# opgen: override of ";
const HEADER_BASE: &str = ", made from built-in ";
const HEADER_END: &str = " -#}";

pub use crate::templates::Override;

impl Override {
    /// The hash of the built-in text the override was made from, if its header records one.
    pub fn base(&self) -> Option<&str> {
        let first = self.text.lines().next()?;
        let rest = first.strip_prefix(HEADER_START)?.strip_suffix(HEADER_END)?;
        let (_, base) = rest.split_once(HEADER_BASE)?;
        Some(base)
    }

    /// The built-in template changed since the override was made from it (or the override
    /// does not say what it was made from).
    pub fn is_stale(&self) -> bool {
        self.base() != Some(fingerprint(builtin_text(&self.name)).as_str())
    }
}

/// Whether the built-in template `name` may be overridden.
pub fn is_overridable(name: &str) -> bool {
    OVERRIDABLE
        .iter()
        .any(|entry| match entry.strip_suffix('/') {
            Some(_) => name.starts_with(entry),
            None => name == *entry,
        })
}

/// Every built-in template that may be overridden, sorted.
pub fn overridable() -> Vec<&'static str> {
    templates::builtin_names()
        .filter(|name| is_overridable(name))
        .collect()
}

/// The text `templates show` prints for `name`: a header recording what the override is made
/// from, then the built-in template.
pub fn starting_text(name: &str) -> anyhow::Result<String> {
    check_name(name, Path::new(name))?;
    let builtin = builtin_text(name);
    Ok(format!(
        "{HEADER_START}{name}{HEADER_BASE}{}{HEADER_END}\n{builtin}",
        fingerprint(builtin)
    ))
}

/// The overrides in effect for the project at `root` (none there yet for `init`): the team's
/// from `OPGEN_TEMPLATES`, replaced by the project's of the same name.
pub fn find(root: &Path) -> anyhow::Result<Vec<Override>> {
    let mut found = Vec::new();
    let team = std::env::var_os(TEAM_VARIABLE)
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from);
    if let Some(team) = &team
        && !team.is_dir()
    {
        bail!(
            "{TEAM_VARIABLE} names {}, which is not a directory\n\nPoint it at a directory of template overrides (laid out as `{PROJECT_DIR}`), or unset it",
            team.display()
        );
    }
    let sources = Sources::new(root, team.as_deref());
    if let Some(team) = &team {
        found = read_dir(team, Path::new(""), &sources)?;
    }
    let own = root.join(PROJECT_DIR);
    if own.is_dir() {
        for own in read_dir(&own, root, &sources)? {
            found.retain(|team: &Override| team.name != own.name);
            found.push(own);
        }
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(found)
}

/// Makes every later render of this process use the overrides in effect for the project at
/// `root`. Fails, naming the file and line, when an override does not parse.
pub fn install(root: &Path) -> anyhow::Result<Vec<Override>> {
    let overrides = find(root)?;
    if !overrides.is_empty() {
        templates::install(Templates::with_overrides(&overrides)?);
    }
    Ok(overrides)
}

/// A unified diff from the override's text to today's built-in template, for a stale one.
pub fn diff_to_builtin(found: &Override) -> String {
    let builtin = builtin_text(&found.name);
    similar::TextDiff::from_lines(found.text.as_str(), builtin)
        .unified_diff()
        .context_radius(2)
        .header(
            &found.file.display().to_string(),
            &format!("built-in {}", found.name),
        )
        .to_string()
}

/// What `update` and `templates check` say of the stale overrides among `found`.
pub fn stale_report(found: &[Override], diff: bool) -> Option<String> {
    let stale: Vec<&Override> = found.iter().filter(|o| o.is_stale()).collect();
    if stale.is_empty() {
        return None;
    }
    let mut report = String::from(
        "these template overrides were made from a built-in template that has changed since (or do not say which):\n",
    );
    for found in &stale {
        let _ = writeln!(
            report,
            "  {} (overrides {})",
            found.file.display(),
            found.name
        );
    }
    report.push_str(
        "Bring this opgen's changes into each, then refresh its first line from `opgen templates show NAME`",
    );
    if diff {
        for found in stale {
            report.push_str("\n\n");
            report.push_str(&diff_to_builtin(found));
        }
    }
    Some(report)
}

/// The project around `dir`, or `dir` when it is in none (a team's overrides still apply).
pub fn root_around(dir: &Path) -> PathBuf {
    dir.ancestors()
        .find(|root| root.join(crate::project::FILE_NAME).is_file())
        .unwrap_or(dir)
        .to_path_buf()
}

/// What `templates list` prints: every overridable template, and the file that overrides it.
pub fn list(root: &Path) -> anyhow::Result<String> {
    let found = find(root)?;
    let mut text = String::new();
    for name in overridable() {
        match found.iter().find(|o| o.name == name) {
            Some(found) => {
                let stale = if found.is_stale() { ", stale" } else { "" };
                let _ = writeln!(
                    text,
                    "{name}  overridden by {}{stale}",
                    found.file.display()
                );
            }
            None => {
                let _ = writeln!(text, "{name}");
            }
        }
    }
    Ok(text)
}

/// What `templates check` found.
pub struct CheckReport {
    pub checked: usize,
    pub failing: usize,
    /// The errors and stale overrides, with diffs; none when all is well.
    pub problems: Option<String>,
}

/// Parses every override in effect for the project at `root`, renders the project's
/// scaffolded files with them, and lists the stale ones with their diffs.
pub fn check(
    root: &Path,
    project: &crate::project::Project,
    interrupt: &crate::interrupt::Interrupt,
) -> anyhow::Result<CheckReport> {
    let found = find(root)?;
    let mut errors = Vec::new();
    for one in &found {
        if let Err(err) = Templates::with_overrides(std::slice::from_ref(one)) {
            errors.push(format!("{err:#}"));
        }
    }
    if errors.is_empty() && !found.is_empty() {
        templates::install(Templates::with_overrides(&found)?);
        if let Err(err) = crate::scaffold::scaffolded_files(project, root, interrupt) {
            errors.push(format!("{err:#}"));
        }
    }
    let stale = found.iter().filter(|o| o.is_stale()).count();
    let mut problems = errors.join("\n\n");
    if let Some(report) = stale_report(&found, true) {
        if !problems.is_empty() {
            problems.push_str("\n\n");
        }
        problems.push_str(&report);
    }
    Ok(CheckReport {
        checked: found.len(),
        failing: errors.len() + stale,
        problems: (!problems.is_empty()).then(|| problems + "\n"),
    })
}

fn builtin_text(name: &str) -> &'static str {
    templates::builtin_source(name).unwrap_or_default()
}

/// A short, stable hash of a template's text (64-bit FNV-1a): enough to tell that a built-in
/// template changed, with no dependency for it.
fn fingerprint(text: &str) -> String {
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("fnv1a64:{hash:016x}")
}

/// The directories an override may come from, through a symbolic link too: the project, and
/// the team's directory. A link to a file elsewhere would make what opgen writes depend on
/// the machine that ran it.
struct Sources {
    dirs: Vec<PathBuf>,
}

impl Sources {
    fn new(root: &Path, team: Option<&Path>) -> Self {
        let dirs = std::iter::once(root)
            .chain(team)
            .filter_map(|dir| std::fs::canonicalize(dir).ok())
            .collect();
        Self { dirs }
    }

    /// Refuses the override at `path` (shown as `file`) when it resolves outside them.
    fn check(&self, path: &Path, file: &Path) -> anyhow::Result<()> {
        let resolved = std::fs::canonicalize(path)
            .with_context(|| format!("cannot resolve {}", file.display()))?;
        if self.dirs.iter().any(|dir| resolved.starts_with(dir)) {
            return Ok(());
        }
        bail!(
            "{} is a symbolic link to {}, outside the project and the team's directory ({TEAM_VARIABLE}): opgen would render what that machine's file holds\n\nCopy the file into {PROJECT_DIR} (or the team's directory), or link to one inside them",
            file.display(),
            resolved.display()
        )
    }
}

/// Whether the walk skips `entry`, a file or directory under `dir`: a dotfile that is not a
/// template (`.gitkeep`, `.DS_Store`, an editor's swap file), and a dot directory that holds
/// no built-in template (`.git`, not `project/.github`).
fn is_ignored(entry: &walkdir::DirEntry, dir: &Path) -> bool {
    let name = entry.file_name().to_string_lossy();
    if entry.depth() == 0 || !name.starts_with('.') {
        return false;
    }
    if !entry.file_type().is_dir() {
        return !name.ends_with(templates::SUFFIX);
    }
    let relative = entry.path().strip_prefix(dir).unwrap_or(entry.path());
    let folder = format!("{}/", relative.to_string_lossy().replace('\\', "/"));
    !templates::builtin_names().any(|name| name.starts_with(&folder))
}

/// The overrides under `dir`, named relative to `base` in messages; a symbolic link is
/// followed when it resolves into one of `sources`, and refused otherwise.
fn read_dir(dir: &Path, base: &Path, sources: &Sources) -> anyhow::Result<Vec<Override>> {
    let mut found = Vec::new();
    let walk = walkdir::WalkDir::new(dir)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|entry| !is_ignored(entry, dir));
    for entry in walk {
        let entry = entry.map_err(|err| unreadable(err, dir, base))?;
        if !entry.file_type().is_file() {
            continue;
        }
        let relative = entry.path().strip_prefix(dir).unwrap_or(entry.path());
        let file = entry.path().strip_prefix(base).unwrap_or(entry.path());
        sources.check(entry.path(), file)?;
        let slashed = relative.to_string_lossy().replace('\\', "/");
        let Some(name) = slashed.strip_suffix(templates::SUFFIX) else {
            bail!(
                "{} is not a template override: overrides end in `{}`\n\nRename it to `{}{}` (the built-in template's name, see `opgen templates list`), or move it out of the directory",
                file.display(),
                templates::SUFFIX,
                slashed,
                templates::SUFFIX
            );
        };
        check_name(name, file)?;
        let text = std::fs::read_to_string(entry.path())
            .with_context(|| format!("cannot read {}", file.display()))?;
        found.push(Override {
            name: name.to_owned(),
            file: file.to_owned(),
            text,
        });
    }
    Ok(found)
}

/// What a walk of `dir` could not read: a link to nothing, a loop of links, or an I/O error.
fn unreadable(err: walkdir::Error, dir: &Path, base: &Path) -> anyhow::Error {
    let shown = |path: &Path| {
        path.strip_prefix(base)
            .unwrap_or(path)
            .display()
            .to_string()
    };
    match (err.path(), err.loop_ancestor()) {
        (Some(path), Some(ancestor)) => anyhow::anyhow!(
            "{} is a symbolic link to {}, which holds it: a loop\n\nPoint the link at a file, or remove it",
            shown(path),
            shown(ancestor)
        ),
        (Some(path), None)
            if err.io_error().map(std::io::Error::kind) == Some(std::io::ErrorKind::NotFound) =>
        {
            let target = std::fs::read_link(path)
                .map(|target| target.display().to_string())
                .unwrap_or_default();
            anyhow::anyhow!(
                "{} is a symbolic link to {target}, which does not exist\n\nPoint it at a template override, or remove it",
                shown(path)
            )
        }
        _ => anyhow::Error::new(err).context(format!("cannot read {}", dir.display())),
    }
}

/// Refuses an override of a template that does not exist or that opgen owns.
fn check_name(name: &str, file: &Path) -> anyhow::Result<()> {
    if templates::builtin_source(name).is_none() {
        let close = overridable()
            .into_iter()
            .min_by_key(|known| strsim::levenshtein(known, name))
            .unwrap_or_default();
        bail!(
            "{} overrides `{name}`, which is not a built-in template\n\nName it after one that `opgen templates list` shows (the closest is `{close}`)",
            file.display()
        );
    }
    if !is_overridable(name) {
        bail!(
            "{} overrides `{name}`, a template of opgen's generated machinery, which must stay in step with the runtime it drives\n\nOnly the templates of scaffolded files can be overridden (`opgen templates list`); remove this one",
            file.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_templates_of_scaffolded_files_are_overridable() {
        for name in [
            "project/Dockerfile",
            "project/.github/workflows/ci.yml",
            "resource/controller.rs",
            "resource/operand/types.rs",
            "license/mit",
            "foreign/controller.rs",
            "webhook/defaulting.rs",
            "webhook/validation.rs",
            "webhook/config/service.yaml",
        ] {
            assert!(is_overridable(name), "{name}");
            assert!(overridable().contains(&name), "{name}");
        }
        for name in [
            "generated/src/runtime/reconcile.rs",
            "group/api_group_mod.rs",
            "webhook/runtime.rs",
            "webhook/mod.rs",
            "bundle/annotations.yaml",
        ] {
            assert!(!is_overridable(name), "{name}");
        }
    }

    #[test]
    fn a_started_override_renders_as_the_built_in_and_is_fresh() {
        let text = starting_text("project/Dockerfile").unwrap();
        let fresh = Override {
            name: "project/Dockerfile".into(),
            file: ".opgen/templates/project/Dockerfile.tera".into(),
            text: text.clone(),
        };
        assert!(!fresh.is_stale());
        assert!(fresh.base().unwrap().starts_with("fnv1a64:"));
        let project = crate::project::Project::for_test("demo", crate::project::Scope::Cluster);
        let values = crate::scaffold::values::ProjectValues::new(&project);
        let overridden = Templates::with_overrides(std::slice::from_ref(&fresh)).unwrap();
        assert_eq!(
            overridden.render("project/Dockerfile", &values).unwrap(),
            templates::builtin()
                .render("project/Dockerfile", &values)
                .unwrap()
        );

        let edited_base = Override {
            text: text.replacen("fnv1a64:", "fnv1a64:0", 1),
            ..fresh.clone()
        };
        assert!(edited_base.is_stale());
        let headless = Override {
            text: builtin_text("project/Dockerfile").to_owned(),
            ..fresh
        };
        assert_eq!(headless.base(), None);
        assert!(headless.is_stale());
    }

    /// docs/templates.md names every value the project's and a kind's templates receive.
    #[test]
    fn the_values_of_the_templates_are_documented() {
        let docs = include_str!("../docs/templates.md");
        let mut project = crate::project::Project::for_test("demo", crate::project::Scope::Cluster);
        project
            .resources
            .push(crate::model::Resource::for_test("db", "v1", "Backup"));
        let values = crate::scaffold::values::ProjectValues::new(&project);
        let json = serde_json::to_value(&values).unwrap();
        for key in json.as_object().unwrap().keys() {
            assert!(
                docs.contains(&format!("`{key}`")),
                "docs/templates.md lacks `{key}`"
            );
        }
        for key in json["kinds"][0].as_object().unwrap().keys() {
            assert!(
                docs.contains(&format!("`kind.{key}`")),
                "docs/templates.md lacks `kind.{key}`"
            );
        }
    }

    #[test]
    fn show_refuses_unknown_and_generated_templates() {
        let err = starting_text("project/Dockerfil").unwrap_err().to_string();
        assert!(err.contains("not a built-in template"), "{err}");
        assert!(err.contains("the closest is `project/Dockerfile`"), "{err}");
        let err = starting_text("generated/src/lib.rs")
            .unwrap_err()
            .to_string();
        assert!(err.contains("generated machinery"), "{err}");
    }
}
