//! The YAML files a template override rendered must be YAML: a broken one is refused before
//! anything is written, naming the override, rather than found by a later kustomize error.
//! (Built-in templates render valid YAML for every project, which the tests check.)

use crate::{
    plan::PlannedFile,
    templates::{self, Templates},
    yaml_error,
};

/// Refuses the first YAML file of `files` that an override rendered and that does not parse.
pub fn check(files: &[PlannedFile]) -> anyhow::Result<()> {
    let templates = Templates::get();
    for file in files {
        let yaml = file.path.ends_with(".yaml") || file.path.ends_with(".yml");
        if !yaml || !templates.is_override_output(&file.contents) {
            continue;
        }
        let Err(err) = serde_saphyr::from_multiple::<serde_json::Value>(&file.contents) else {
            continue;
        };
        let line = yaml_error::location(&err).map_or(1, |(line, _)| line as usize);
        if let Some(place) = templates.override_place(&file.contents, &[line]) {
            return Err(templates::invalid_output(
                &place,
                &file.path,
                "YAML",
                line,
                &yaml_error::problem(&err),
            ));
        }
    }
    Ok(())
}
