//! Reading the docs' fenced blocks, and checking or applying them against generated files.
//!
//! A block's info string says what it is (see `tests/docs.rs` for the whole convention):
//! `rust file=PATH` is the whole of a generated file, `yaml file=PATH excerpt` is lines of
//! one, in order, with `# ...` or `// ...` lines standing for lines left out, and
//! `diff file=PATH` is an edit a reader makes to one.

use std::path::Path;

/// A fenced block of a Markdown file.
#[derive(Debug, Clone)]
pub struct Block {
    /// `docs/tutorial-mysqlcluster.md:120`: where the block's opening fence is.
    pub place: String,
    /// The first word of the info string: `sh`, `rust`, `yaml`.
    pub lang: String,
    /// The other words of the info string: `file=PATH`, `excerpt`, `cluster`.
    pub attrs: Vec<String>,
    pub text: String,
}

impl Block {
    pub fn has(&self, attr: &str) -> bool {
        self.attrs.iter().any(|a| a == attr)
    }

    /// The value of `name=value` in the info string.
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find_map(|a| a.strip_prefix(name)?.strip_prefix('='))
    }

    /// `docs/x.md:12 (```yaml file=… excerpt)`, for messages.
    pub fn describe(&self) -> String {
        format!("{} (```{} {})", self.place, self.lang, self.attrs.join(" "))
    }
}

/// The fenced blocks of `path` (relative to the opgen checkout), in order.
pub fn blocks(path: &str) -> Vec<Block> {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    let text = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    for (index, line) in text.lines().enumerate() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => {
                let mut words = info.split_whitespace().map(str::to_owned);
                open = Some(Block {
                    place: format!("{path}:{}", index + 1),
                    lang: words.next().unwrap_or_default(),
                    attrs: words.collect(),
                    text: String::new(),
                });
            }
            (Some(_), Some("")) => blocks.push(open.take().unwrap()),
            (Some(block), _) => {
                block.text.push_str(line);
                block.text.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "{path}: a code block is not closed");
    blocks
}

/// Whether a line of an excerpt stands for lines left out: `...`, `# ...`, `// ...` (with
/// anything after, such as `# ... mysqlclusters: get, list`).
fn is_elision(line: &str) -> bool {
    let line = line.trim_start();
    ["...", "# ...", "// ..."]
        .iter()
        .any(|mark| line.starts_with(mark))
}

/// The runs of an excerpt: lines between elisions, each of which must appear in the file
/// as it is, one run after the other.
fn runs<T>(lines: Vec<(T, &str)>, elision: impl Fn(&T, &str) -> bool) -> Vec<Vec<(T, &str)>> {
    let mut runs = vec![Vec::new()];
    for (tag, line) in lines {
        if elision(&tag, line) {
            runs.push(Vec::new());
        } else {
            runs.last_mut().unwrap().push((tag, line));
        }
    }
    runs.retain(|run| !run.is_empty());
    runs
}

/// Where `run` appears in `file` as consecutive lines, at or after `from`.
fn find_run(file: &[&str], run: &[&str], from: usize) -> Option<usize> {
    (from..=file.len().saturating_sub(run.len())).find(|&start| {
        run.iter()
            .zip(&file[start..])
            .all(|(want, have)| want.trim_end() == have.trim_end())
    })
}

/// Why `run` is not in `file` after line `from`: its longest beginning that is, and the
/// first line that then differs.
fn explain_missing_run(file: &[&str], run: &[&str], from: usize, path: &str) -> String {
    let (mut best_start, mut best_len) = (None, 0);
    for start in from..file.len() {
        let len = run
            .iter()
            .zip(&file[start..])
            .take_while(|(want, have)| want.trim_end() == have.trim_end())
            .count();
        if len > best_len {
            (best_start, best_len) = (Some(start), len);
        }
    }
    match best_start {
        Some(start) => format!(
            "the doc's line {:?} should follow {:?} but {path}:{} is {:?}",
            run[best_len],
            run[best_len - 1],
            start + best_len + 1,
            file.get(start + best_len)
                .copied()
                .unwrap_or("<end of file>")
        ),
        None => format!(
            "the doc's line {:?} is not in {path} after line {from}",
            run[0]
        ),
    }
}

/// Checks that `excerpt` is lines of `file` (named `path` in messages): each run between
/// elisions consecutive, the runs in order.
pub fn check_excerpt(excerpt: &str, file: &str, path: &str) -> Result<(), String> {
    let file: Vec<&str> = file.lines().collect();
    let lines = excerpt.lines().map(|line| ((), line)).collect();
    let mut from = 0;
    for run in runs(lines, |_, line| is_elision(line)) {
        let run: Vec<&str> = run.into_iter().map(|(_, line)| line).collect();
        match find_run(&file, &run, from) {
            Some(start) => from = start + run.len(),
            None => return Err(explain_missing_run(&file, &run, from, path)),
        }
    }
    Ok(())
}

/// Applies a `diff` block to `file`: its context (` `) and removed (`-`) lines are found
/// as with an excerpt and replaced by its context and added (`+`) lines.
pub fn apply_diff(diff: &str, file: &str, path: &str) -> Result<String, String> {
    let lines = diff
        .lines()
        .map(|line| match line.split_at_checked(1) {
            Some((mark @ (" " | "+" | "-"), rest)) => Ok((mark.chars().next().unwrap(), rest)),
            _ if line.is_empty() || line == "..." => Ok((' ', line)),
            _ => Err(format!(
                "{line:?} is not a diff line (` `, `+`, `-` or `...`)"
            )),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut out: Vec<String> = Vec::new();
    let file_lines: Vec<&str> = file.lines().collect();
    let mut from = 0;
    for hunk in runs(lines, |mark, line| *mark == ' ' && is_elision(line)) {
        let old: Vec<&str> = hunk
            .iter()
            .filter(|(mark, _)| *mark != '+')
            .map(|(_, line)| *line)
            .collect();
        if old.is_empty() {
            return Err("a hunk has no context line to place its added lines".into());
        }
        let start = find_run(&file_lines, &old, from)
            .ok_or_else(|| explain_missing_run(&file_lines, &old, from, path))?;
        out.extend(file_lines[from..start].iter().map(|l| (*l).to_owned()));
        out.extend(
            hunk.iter()
                .filter(|(mark, _)| *mark != '-')
                .map(|(_, line)| (*line).to_owned()),
        );
        from = start + old.len();
    }
    out.extend(file_lines[from..].iter().map(|l| (*l).to_owned()));
    Ok(out.join("\n") + "\n")
}
