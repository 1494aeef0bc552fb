//! The templates, embedded in the binary at build time and rendered with Tera.
//!
//! A template is text with holes: every name and decision reaches it as a prepared value
//! (see `scaffold::values`), so the templates hold no naming logic. A command that scaffolds
//! may first install a project's template overrides (see `overrides`) for every later render.

use std::{
    collections::BTreeMap,
    path::PathBuf,
    sync::{Mutex, OnceLock},
};

use anyhow::Context as _;
use include_dir::{Dir, include_dir};
use serde::Serialize;

static TEMPLATES: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/templates");

/// The suffix every template file carries, so that no template is mistaken for a real file
/// of opgen's own (a `Cargo.toml` template would otherwise hide its folder from cargo).
pub const SUFFIX: &str = ".tera";

/// One template override, as read from its file (see `overrides`, which finds them).
#[derive(Debug, Clone)]
pub struct Override {
    /// The built-in template it replaces, e.g. `project/Dockerfile`.
    pub name: String,
    /// Its file, as the user knows it (relative to the project, or under the team's directory).
    pub file: PathBuf,
    /// Its text, rendered in place of the built-in template's.
    pub text: String,
}

/// The templates of the process once a command installed overrides (see [`install`]).
static INSTALLED: OnceLock<Templates> = OnceLock::new();

pub struct Templates {
    tera: tera::Tera,
    /// The file of each overridden template, by template name: errors in it point there.
    overridden: BTreeMap<String, PathBuf>,
    /// The text of each override, by template name.
    override_texts: BTreeMap<String, String>,
    /// What each override rendered, and the template's name: a later check of a rendered file
    /// (rustfmt, YAML) that fails points at the override rather than at opgen.
    rendered: Mutex<Vec<(String, String)>>,
}

/// Where in an override the fault of a file it rendered lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverridePlace {
    pub file: PathBuf,
    /// The override's line whose text is that of the faulty line, when exactly one is.
    pub line: Option<usize>,
}

impl Templates {
    /// The templates every render of the process uses: the built-in ones, or those a command
    /// installed with the project's overrides.
    pub fn get() -> &'static Templates {
        INSTALLED.get().unwrap_or_else(builtin)
    }

    fn parse() -> anyhow::Result<Self> {
        let mut tera = tera::Tera::new();
        // Generated files are code and YAML, never HTML.
        tera.autoescape_on(Vec::<&str>::new());
        let mut sources = Vec::new();
        collect(&TEMPLATES, &mut sources);
        tera.add_raw_templates(sources)
            .context("the embedded templates do not parse")?;
        Ok(Self {
            tera,
            overridden: BTreeMap::new(),
            override_texts: BTreeMap::new(),
            rendered: Mutex::new(Vec::new()),
        })
    }

    /// The built-in templates with `overrides` in place of those they name. Fails with the
    /// file and line of the first override that does not parse.
    pub fn with_overrides(overrides: &[Override]) -> anyhow::Result<Self> {
        let mut templates = Self::parse()?;
        for found in overrides {
            templates
                .overridden
                .insert(found.name.clone(), found.file.clone());
            templates
                .override_texts
                .insert(found.name.clone(), found.text.clone());
        }
        templates
            .tera
            .add_raw_templates(overrides.iter().map(|o| (o.name.as_str(), o.text.as_str())))
            .map_err(|err| templates.explain(err, "does not parse"))?;
        Ok(templates)
    }

    /// Renders the template `name` (its path under `templates/`, without `.tera`).
    pub fn render(&self, name: &str, values: &impl Serialize) -> anyhow::Result<String> {
        let context = tera::Context::from_serialize(values)
            .with_context(|| format!("cannot prepare the values of template {name}"))?;
        let text = self.tera.render(name, &context).map_err(|err| {
            if self.overridden.is_empty() {
                anyhow::anyhow!("cannot render template {name}: {err:?}")
            } else {
                self.explain(err, "cannot be rendered")
            }
        })?;
        if self.overridden.contains_key(name) {
            self.rendered
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push((text.clone(), name.to_owned()));
        }
        Ok(text)
    }

    /// Whether an override rendered `text`.
    pub fn is_override_output(&self, text: &str) -> bool {
        self.rendered
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .any(|(rendered, _)| rendered == text)
    }

    /// The override that rendered `text`, and the place in it of the first of `lines` (of
    /// `text`, counted from 1, in the order a checker named them) whose text is that of
    /// exactly one line of the override, when an override rendered it.
    pub fn override_place(&self, text: &str, lines: &[usize]) -> Option<OverridePlace> {
        let rendered = self
            .rendered
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (_, name) = rendered.iter().find(|(rendered, _)| rendered == text)?;
        let source = &self.override_texts[name];
        let line = lines.iter().find_map(|&line| {
            let faulty = text.lines().nth(line.checked_sub(1)?)?.trim();
            let mut matches = source
                .lines()
                .enumerate()
                .filter(|(_, source)| !faulty.is_empty() && source.trim() == faulty);
            match (matches.next(), matches.next()) {
                (Some((index, _)), None) => Some(index + 1),
                _ => None,
            }
        });
        Some(OverridePlace {
            file: self.overridden[name].clone(),
            line,
        })
    }

    /// A Tera error, as `file:line: problem` when it lies in an override.
    fn explain(&self, err: tera::Error, what: &str) -> anyhow::Error {
        let report = match err.kind() {
            tera::ErrorKind::SyntaxError(report) | tera::ErrorKind::RenderingError(report) => {
                Some(report)
            }
            _ => None,
        };
        match report.and_then(|r| Some((r, self.overridden.get(r.filename())?))) {
            Some((report, file)) => anyhow::anyhow!(
                "{}:{}: the template override {what}: {}\n\nFix the override (the values it receives are in docs/templates.md; `opgen templates check` tries every override), or remove it to use the built-in template",
                file.display(),
                report.span().start_line,
                report.message()
            ),
            None => anyhow::anyhow!("a template override {what}: {err}"),
        }
    }

    /// The names of the templates under `folder` (e.g. `project/`), sorted.
    pub fn names_under<'a>(&'a self, folder: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        let mut names: Vec<&str> = self
            .tera
            .get_template_names()
            .filter(|name| name.starts_with(folder))
            .collect();
        names.sort_unstable();
        names.into_iter()
    }
}

/// The error for `path`, which an override rendered (at `place`), and which is not valid
/// `language`: `problem` is what the check said, at `line` of the rendered file.
pub fn invalid_output(
    place: &OverridePlace,
    path: &str,
    language: &str,
    line: usize,
    problem: &str,
) -> anyhow::Error {
    let at = match place.line {
        Some(line) => format!("{}:{line}", place.file.display()),
        None => place.file.display().to_string(),
    };
    anyhow::anyhow!(
        "{at}: the template override renders {path}, which is not valid {language}: line {line}: {problem}\n\nFix the override (`opgen templates check` renders every override), or remove it to use the built-in template"
    )
}

/// The built-in templates, parsed once per process.
pub fn builtin() -> &'static Templates {
    static PARSED: OnceLock<Templates> = OnceLock::new();
    PARSED.get_or_init(|| {
        Templates::parse().expect("the embedded templates parse (checked by tests)")
    })
}

/// Makes `templates` the ones every later render of the process uses. A process runs one
/// command, so only the first call counts.
pub fn install(templates: Templates) {
    let _ = INSTALLED.set(templates);
}

/// The names of the built-in templates, sorted.
pub fn builtin_names() -> impl Iterator<Item = &'static str> {
    builtin().names_under("")
}

/// The text of the built-in template `name`, if there is one.
pub fn builtin_source(name: &str) -> Option<&'static str> {
    TEMPLATES
        .get_file(format!("{name}{SUFFIX}"))
        .and_then(|file| file.contents_utf8())
}

fn collect<'a>(dir: &'a Dir<'a>, out: &mut Vec<(String, &'a str)>) {
    for file in dir.files() {
        let path = file.path().to_string_lossy().replace('\\', "/");
        if let (Some(name), Some(text)) = (path.strip_suffix(SUFFIX), file.contents_utf8()) {
            out.push((name.to_owned(), text));
        }
    }
    for sub in dir.dirs() {
        collect(sub, out);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_embedded_template_parses() {
        super::Templates::parse().unwrap();
    }
}
