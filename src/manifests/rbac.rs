//! The manager role, from RBAC markers (placeholder until the renderer lands).

use crate::project::Project;

pub struct Rule;

pub fn render_role(_rules: &[Rule], project: &Project) -> String {
    let _ = project;
    String::new()
}
