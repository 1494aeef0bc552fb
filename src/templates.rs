//! The templates, embedded in the binary at build time and rendered with Tera.
//!
//! A template is text with holes: every name and decision reaches it as a prepared value
//! (see `scaffold::values`), so the templates hold no naming logic.

use std::sync::OnceLock;

use anyhow::Context as _;
use include_dir::{Dir, include_dir};
use serde::Serialize;

static TEMPLATES: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/templates");

/// The suffix every template file carries, so that no template is mistaken for a real file
/// of opgen's own (a `Cargo.toml` template would otherwise hide its folder from cargo).
const SUFFIX: &str = ".tera";

pub struct Templates {
    tera: tera::Tera,
}

impl Templates {
    /// The parsed templates, shared by every render of the process.
    pub fn get() -> &'static Templates {
        static PARSED: OnceLock<Templates> = OnceLock::new();
        PARSED.get_or_init(|| {
            Templates::parse().expect("the embedded templates parse (checked by tests)")
        })
    }

    fn parse() -> anyhow::Result<Self> {
        let mut tera = tera::Tera::new();
        // Generated files are code and YAML, never HTML.
        tera.autoescape_on(Vec::<&str>::new());
        let mut sources = Vec::new();
        collect(&TEMPLATES, &mut sources);
        tera.add_raw_templates(sources)
            .context("the embedded templates do not parse")?;
        Ok(Self { tera })
    }

    /// Renders the template `name` (its path under `templates/`, without `.tera`).
    pub fn render(&self, name: &str, values: &impl Serialize) -> anyhow::Result<String> {
        let context = tera::Context::from_serialize(values)
            .with_context(|| format!("cannot prepare the values of template {name}"))?;
        self.tera
            .render(name, &context)
            .map_err(|err| anyhow::anyhow!("cannot render template {name}: {err:?}"))
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
