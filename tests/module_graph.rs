//! opgen's own module graph, read from the `use` statements and `crate::`/`super::` paths of
//! `src/` as a reviewer would: no two modules reach each other (directly or around a circle),
//! and the lower layers never reach the ones above them. Test modules are left out: a test may
//! use whatever it checks.

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
            found.insert(parts.join("::"), without_tests_and_comments(&text));
        }
    }
    found
}

fn without_tests_and_comments(text: &str) -> String {
    let code = match text.find("#[cfg(test)]\nmod tests") {
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

/// The module of `modules` that `path`, named in `from`, points into, if any.
fn resolve(from: &str, path: &str, modules: &BTreeMap<Module, String>) -> Option<Module> {
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
            _ if modules.contains_key(&join(&base, part)) => base = join(&base, part),
            _ => break,
        }
    }
    Some(base)
}

fn is_within(module: &str, ancestor: &str) -> bool {
    ancestor.is_empty() || module == ancestor || module.starts_with(&format!("{ancestor}::"))
}

fn graph() -> BTreeMap<Module, BTreeSet<Module>> {
    let modules = modules(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    modules
        .iter()
        .map(|(module, code)| {
            let targets = named_paths(code)
                .iter()
                .filter_map(|path| resolve(module, path, &modules))
                // A module reaches into its children and leans on its ancestors' items.
                .filter(|target| !is_within(module, target))
                .collect();
            (module.clone(), targets)
        })
        .collect()
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
