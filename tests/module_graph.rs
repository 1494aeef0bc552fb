//! The module graphs of opgen (`src/`) and of its runtime crate (`runtime/src/`), read from the
//! `use` statements and `crate::`/`super::` paths as a reviewer would: no two modules reach
//! each other (directly or around a circle), and the lower layers never reach the ones above
//! them. Test modules are left out (inline `mod tests`, and the files of modules declared
//! under `#[cfg(test)]`): a test may use whatever it checks. A path through a re-export
//! (`crate::Context`) counts as an arrow to the module that defines the item.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::Path,
};

/// A module path below the crate root, `scaffold::values`; the root is empty.
type Module = String;

/// Arrows that would point up: `(from, to)`, each a module and everything below it; an empty
/// `to` is any module outside `from`.
const FORBIDDEN: &[(&str, &str)] = &[
    ("files", ""),
    ("yaml_error", ""),
    ("model", ""),
    ("plan", "project"),
    ("project", "plan"),
    ("project", "scaffold"),
    ("project", "manifests"),
    ("scaffold", "manifests"),
    ("scaffold", "commands"),
    ("manifests", "scaffold"),
    ("manifests", "commands"),
    ("bundle", "commands"),
    ("helm", "commands"),
    ("update", "commands"),
    ("project_change", "commands"),
    // Only the commands read what the user typed; the layers below take model types.
    ("bundle", "cli"),
    ("project", "cli"),
    ("scaffold", "cli"),
    ("manifests", "cli"),
    ("plan", "cli"),
    ("apply", "cli"),
    ("helm", "cli"),
    ("update", "cli"),
    ("project_change", "cli"),
];

/// Modules that reach nothing of the crate (the rules above hold them to it), so that every
/// layer, the model too, may use them.
const LEAVES: &[&str] = &["files", "yaml_error"];

/// The runtime's layers, lowest first: a module may reach its own layer and those below, never
/// one above. The leaves are what every job shares; `webhook` reaches nothing of the
/// controllers, and only the test harnesses reach everything.
const RUNTIME_LAYERS: &[&[&str]] = &[
    &["identity", "error", "object", "conditions"],
    &["metrics"],
    &["client"],
    &["controller"],
    &["operand"],
    &["webhook"],
    &["manager"],
    &["testing", "envtest"],
];

/// The modules under `src` and their code without tests and comments; the files of modules
/// declared under `#[cfg(test)]` are left out.
fn modules(src: &Path) -> BTreeMap<Module, String> {
    let mut found = BTreeMap::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|ext| ext != "rs") {
                continue;
            }
            let relative = path.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = relative
                .components()
                .map(|part| part.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            if parts.first().is_some_and(|first| first == "bin") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            found.insert(parts.join("::"), text);
        }
    }
    let test_only: Vec<Module> = found
        .iter()
        .flat_map(|(module, text)| {
            test_modules(text)
                .into_iter()
                .map(move |name| join(module, &name))
        })
        .collect();
    found.retain(|module, _| {
        !test_only
            .iter()
            .any(|test| module == test || module.starts_with(&format!("{test}::")))
    });
    found
        .into_iter()
        .map(|(module, text)| (module, without_tests_and_comments(&text)))
        .collect()
}

/// The modules `text` declares under `#[cfg(test)]` in files of their own.
fn test_modules(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "#[cfg(test)]" {
            continue;
        }
        let Some(next) = lines.next() else { break };
        let declaration = next.trim();
        let declaration = declaration
            .strip_prefix("pub(crate) ")
            .or_else(|| declaration.strip_prefix("pub(super) "))
            .unwrap_or(declaration);
        if let Some(name) = declaration
            .strip_prefix("mod ")
            .and_then(|rest| rest.strip_suffix(';'))
        {
            names.push(name.to_owned());
        }
    }
    names
}

fn without_tests_and_comments(text: &str) -> String {
    let code = match text.find("#[cfg(test)]\nmod tests {") {
        Some(end) => &text[..end],
        None => text,
    };
    code.lines()
        .map(|line| match line.find("//") {
            Some(start) => &line[..start],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every path a `use` tree names: `a::{b, c::{d}}` → `a::b`, `a::c::d`.
fn expand(prefix: &str, tree: &str, out: &mut Vec<String>) {
    let mut depth = 0;
    let mut start = 0;
    let mut items = Vec::new();
    for (index, c) in tree.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&tree[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    items.push(&tree[start..]);
    for item in items {
        let item: String = item.split_whitespace().collect::<Vec<_>>().join(" ");
        match (item.find('{'), item.rfind('}')) {
            (Some(open), Some(close)) if open < close => {
                let head = item[..open].trim().trim_end_matches("::");
                expand(&join(prefix, head), &item[open + 1..close], out);
            }
            _ => {
                let leaf = item.split(" as ").next().unwrap_or_default().trim();
                if !leaf.is_empty() {
                    out.push(join(prefix, leaf));
                }
            }
        }
    }
}

fn join(prefix: &str, rest: &str) -> String {
    match (prefix.is_empty(), rest.is_empty()) {
        (true, _) => rest.to_owned(),
        (_, true) => prefix.to_owned(),
        _ => format!("{prefix}::{rest}"),
    }
}

fn parent(module: &str) -> String {
    module
        .rsplit_once("::")
        .map_or("", |(parent, _)| parent)
        .to_owned()
}

/// The paths `code` names: those of its `use` statements, and inline `crate::…`/`super::…`.
fn named_paths(code: &str) -> Vec<String> {
    let mut paths = Vec::new();
    let mut rest = code;
    while let Some(start) = rest.find("use ") {
        let before = rest[..start].chars().last();
        let tail = &rest[start + 4..];
        let Some(end) = tail.find(';') else { break };
        if before.is_none_or(|c| !c.is_alphanumeric() && c != '_') {
            expand("", &tail[..end], &mut paths);
        }
        rest = &tail[end..];
    }
    for anchor in ["crate::", "super::"] {
        for (index, _) in code.match_indices(anchor) {
            let before = code[..index].chars().last();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let path: String = code[index..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            paths.push(path.trim_end_matches(':').to_owned());
        }
    }
    paths
}

/// What each module re-exports with `pub use`: the name it gives the item, and the path it
/// names, as written in that module.
type Reexports = BTreeMap<Module, BTreeMap<String, String>>;

fn reexports(modules: &BTreeMap<Module, String>) -> Reexports {
    modules
        .iter()
        .map(|(module, code)| {
            let mut names = BTreeMap::new();
            let mut rest = code.as_str();
            while let Some(start) = rest.find("pub use ") {
                let tail = &rest[start + "pub use ".len()..];
                let Some(end) = tail.find(';') else { break };
                let mut paths = Vec::new();
                expand("", &tail[..end], &mut paths);
                for path in paths {
                    let name = path.rsplit("::").next().unwrap_or_default().to_owned();
                    names.insert(name, path);
                }
                rest = &tail[end..];
            }
            (module.clone(), names)
        })
        .collect()
}

/// The module of `modules` that `path`, named in `from`, points into, if any: through a
/// re-export, the module that defines the item.
fn resolve(
    from: &str,
    path: &str,
    modules: &BTreeMap<Module, String>,
    reexports: &Reexports,
) -> Option<Module> {
    resolve_within(from, path, modules, reexports, 0)
}

fn resolve_within(
    from: &str,
    path: &str,
    modules: &BTreeMap<Module, String>,
    reexports: &Reexports,
    depth: usize,
) -> Option<Module> {
    let mut parts = path.split("::");
    let mut base = match parts.next()? {
        "crate" => String::new(),
        "super" => parent(from),
        "self" => from.to_owned(),
        first if modules.contains_key(&join(from, first)) => join(from, first),
        _ => return None,
    };
    for part in parts {
        match part {
            "super" => base = parent(&base),
            "self" => {}
            _ if modules.contains_key(&join(&base, part)) => base = join(&base, part),
            _ => {
                let reexported = reexports.get(&base).and_then(|names| names.get(part));
                return match reexported {
                    Some(target) if depth < 8 && base != from => {
                        resolve_within(&base, target, modules, reexports, depth + 1).or(Some(base))
                    }
                    _ => Some(base),
                };
            }
        }
    }
    Some(base)
}

fn is_within(module: &str, ancestor: &str) -> bool {
    ancestor.is_empty() || module == ancestor || module.starts_with(&format!("{ancestor}::"))
}

/// The module graph of the crate whose sources are in `src` (relative to this repository).
fn graph_of(src: &str) -> BTreeMap<Module, BTreeSet<Module>> {
    let modules = modules(&Path::new(env!("CARGO_MANIFEST_DIR")).join(src));
    let reexports = reexports(&modules);
    modules
        .iter()
        .map(|(module, code)| {
            let targets = named_paths(code)
                .iter()
                .filter_map(|path| resolve(module, path, &modules, &reexports))
                // A module reaches into its children and leans on its ancestors' items.
                .filter(|target| !is_within(module, target))
                .collect();
            (module.clone(), targets)
        })
        .collect()
}

fn graph() -> BTreeMap<Module, BTreeSet<Module>> {
    graph_of("src")
}

fn runtime_graph() -> BTreeMap<Module, BTreeSet<Module>> {
    graph_of("runtime/src")
}

/// The layer of `module` in [`RUNTIME_LAYERS`], or `None` for the crate root.
fn runtime_layer(module: &str) -> Option<usize> {
    let top = module.split("::").next().unwrap_or_default();
    RUNTIME_LAYERS.iter().position(|layer| layer.contains(&top))
}

/// The modules that reach each other around a circle, each circle once.
fn circles(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<BTreeSet<Module>> {
    let reach = |from: &Module| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(module) = todo.pop() {
            for next in graph.get(&module).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&Module, BTreeSet<Module>> =
        graph.keys().map(|module| (module, reach(module))).collect();
    let mut circles: Vec<BTreeSet<Module>> = Vec::new();
    for (module, seen) in &reached {
        if !seen.contains(*module) {
            continue;
        }
        let circle: BTreeSet<Module> = seen
            .iter()
            .filter(|other| {
                reached
                    .get(other)
                    .is_some_and(|back| back.contains(*module))
            })
            .cloned()
            .collect();
        if !circles.contains(&circle) {
            circles.push(circle);
        }
    }
    circles
}

#[test]
fn no_module_reaches_one_that_reaches_it_back() {
    let graph = graph();
    assert!(
        graph.contains_key("plan") && graph["commands::create_api::resource"].contains("scaffold")
    );
    assert_eq!(circles(&graph), Vec::<BTreeSet<Module>>::new());
}

#[test]
fn no_arrow_points_up() {
    let graph = graph();
    let mut up = Vec::new();
    for (module, targets) in &graph {
        for target in targets {
            let into_a_leaf = LEAVES.iter().any(|leaf| is_within(target, leaf));
            if into_a_leaf && !LEAVES.iter().any(|leaf| is_within(module, leaf)) {
                continue;
            }
            for (from, to) in FORBIDDEN {
                let outside = !is_within(target, from);
                if outside && is_within(module, from) && is_within(target, to) {
                    up.push(format!("{module} -> {target}"));
                }
            }
        }
    }
    assert_eq!(up, Vec::<String>::new());
}

#[test]
fn no_runtime_module_reaches_one_that_reaches_it_back() {
    let graph = runtime_graph();
    // The reader sees the runtime's arrows, through its re-exports too.
    assert!(graph["operand::reconciler"].contains("controller::setup"));
    assert!(
        graph["testing"].contains("client::context"),
        "{:?}",
        graph["testing"]
    );
    assert_eq!(circles(&graph), Vec::<BTreeSet<Module>>::new());
}

#[test]
fn every_runtime_module_has_a_layer_and_no_arrow_points_up() {
    let graph = runtime_graph();
    let unplaced: Vec<&Module> = graph
        .keys()
        .filter(|module| !module.is_empty() && runtime_layer(module).is_none())
        .collect();
    assert_eq!(
        unplaced,
        Vec::<&Module>::new(),
        "add them to RUNTIME_LAYERS"
    );
    let mut up = Vec::new();
    for (module, targets) in &graph {
        let Some(from) = runtime_layer(module) else {
            continue;
        };
        for target in targets {
            if runtime_layer(target).is_some_and(|to| to > from) {
                up.push(format!("{module} -> {target}"));
            }
        }
    }
    assert_eq!(up, Vec::<String>::new());
}

#[test]
fn test_modules_are_left_out_and_reexports_followed() {
    let runtime = runtime_graph();
    assert!(runtime.contains_key("client::context"));
    assert!(
        !runtime
            .keys()
            .any(|module| module.ends_with("tests") || module == "test_kinds"),
        "{:?}",
        runtime.keys().collect::<Vec<_>>()
    );
    let modules: BTreeMap<Module, String> = [
        ("".to_owned(), "pub use self::a::b::Item;\n".to_owned()),
        ("a".to_owned(), String::new()),
        ("a::b".to_owned(), String::new()),
        ("c".to_owned(), "use crate::Item;\n".to_owned()),
    ]
    .into();
    let found = reexports(&modules);
    assert_eq!(
        resolve("c", "crate::Item", &modules, &found).as_deref(),
        Some("a::b")
    );
    assert_eq!(
        test_modules(
            "#[cfg(test)]\nmod tests;\n#[cfg(test)]\npub(crate) mod fixtures;\nmod kept;\n"
        ),
        ["tests", "fixtures"]
    );
}

#[test]
fn the_reader_finds_circles_and_nested_use_trees() {
    let mut paths = Vec::new();
    expand("", "crate::{a::{b, c::D as E}, f}", &mut paths);
    assert_eq!(paths, ["crate::a::b", "crate::a::c::D", "crate::f"]);
    let graph: BTreeMap<Module, BTreeSet<Module>> = [
        ("a", &["b"][..]),
        ("b", &["c"][..]),
        ("c", &["a"][..]),
        ("d", &["a"][..]),
    ]
    .iter()
    .map(|(module, targets)| {
        (
            module.to_string(),
            targets.iter().map(|t| t.to_string()).collect(),
        )
    })
    .collect();
    let found = circles(&graph);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0], ["a", "b", "c"].map(String::from).into());
}
