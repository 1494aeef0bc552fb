//! An object turned into Helm template text: opgen puts tokens where a value of the chart goes,
//! writes the object as YAML, then replaces each token with a call of a named template of
//! `_helpers.tpl`. The Go-template text of what a hole renders lives there, not here.

use anyhow::Context as _;
use serde_json::Value;

/// What replaces a token.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Fill {
    /// Inside a scalar: `image: {{ include "demo.image" . }}`.
    Inline,
    /// The whole value of a key, as a block below it: `resources:` then the helper's YAML.
    Block,
    /// Lines of their own in a map or a list, at the token's column; none when the helper
    /// renders nothing.
    Lines,
}

/// The holes of one object, in the order they were made.
#[derive(Debug)]
pub struct Holes {
    chart: String,
    fills: Vec<(Fill, String)>,
}

impl Holes {
    pub fn new(chart: &str) -> Self {
        Self {
            chart: chart.to_owned(),
            fills: Vec::new(),
        }
    }

    fn push(&mut self, fill: Fill, helper: &str) -> usize {
        self.fills.push((fill, helper.to_owned()));
        self.fills.len() - 1
    }

    /// A token to put inside a string, for `helper`'s output.
    pub fn inline(&mut self, helper: &str) -> String {
        format!("OPGENHOLE{}X", self.push(Fill::Inline, helper))
    }

    /// A string that stands for `helper`'s output as a string value of its own.
    pub fn value(&mut self, helper: &str) -> Value {
        Value::String(self.inline(helper))
    }

    /// A value replaced by `helper`'s YAML block.
    pub fn block(&mut self, helper: &str) -> Value {
        Value::String(format!("OPGENHOLE{}X", self.push(Fill::Block, helper)))
    }

    /// A key to add to a map, whose line becomes `helper`'s lines. The key sorts after every
    /// other, so it is never the first key of a list item.
    pub fn map_lines(&mut self, map: &mut serde_json::Map<String, Value>, helper: &str) {
        let token = format!("zzopgenhole{}x", self.push(Fill::Lines, helper));
        map.insert(token, Value::Null);
    }

    /// An item to add to a list, whose line becomes `helper`'s lines (list items themselves).
    pub fn list_lines(&mut self, list: &mut Vec<Value>, helper: &str) {
        list.push(self.item(helper));
    }

    /// A list item that stands for `helper`'s lines (list items themselves), to put where
    /// they go.
    pub fn item(&mut self, helper: &str) -> Value {
        Value::String(format!("OPGENHOLE{}X", self.push(Fill::Lines, helper)))
    }

    /// `object` as Helm template text.
    pub fn render(&self, object: &Value) -> anyhow::Result<String> {
        let yaml =
            serde_saphyr::to_string(object).context("cannot write a chart object as YAML")?;
        let mut out = String::with_capacity(yaml.len() * 2);
        for line in yaml.lines() {
            out.push_str(&self.fill_line(line));
            out.push('\n');
        }
        Ok(out)
    }

    fn include(&self, helper: &str) -> String {
        format!("include \"{}.{helper}\" .", self.chart)
    }

    /// `helper`'s lines at `column`; the line itself is indented like them, to be read.
    fn lines(&self, helper: &str, column: usize) -> String {
        format!(
            "{:column$}{{{{- {} | nindent {column} }}}}",
            "",
            self.include(helper)
        )
    }

    fn fill_line(&self, line: &str) -> String {
        let mut line = line.to_owned();
        // From the last hole, so that `OPGENHOLE1X` is never found inside `OPGENHOLE11X`.
        for (index, (fill, helper)) in self.fills.iter().enumerate().rev() {
            let token = match fill {
                Fill::Lines if line.contains(&format!("zzopgenhole{index}x")) => {
                    return self.lines(helper, column(&line));
                }
                _ => format!("OPGENHOLE{index}X"),
            };
            if !line.contains(&token) {
                continue;
            }
            line = match fill {
                Fill::Inline => {
                    line.replace(&token, &format!("{{{{ {} }}}}", self.include(helper)))
                }
                Fill::Block => {
                    let key = line
                        .split_once(&token)
                        .map_or("", |(key, _)| key)
                        .trim_end();
                    format!("{key}\n{}", self.lines(helper, column(&line) + 2))
                }
                Fill::Lines => self.lines(helper, column(&line)),
            };
        }
        line
    }
}

/// Where the key or list item of `line` starts (past the `- ` of a list item).
fn column(line: &str) -> usize {
    let indent = line.len() - line.trim_start().len();
    let rest = &line[indent..];
    if let Some(item) = rest.strip_prefix("- ") {
        // A list item's own token: its lines go where the dash is.
        if item.starts_with("OPGENHOLE") {
            return indent;
        }
        return indent + 2;
    }
    indent
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn fills_each_kind_of_hole() {
        let mut holes = Holes::new("demo");
        let mut container = json!({"name": "manager", "args": ["--x"]});
        container["image"] = holes.value("image");
        container["resources"] = holes.block("resources");
        let mut args = container["args"].as_array().unwrap().clone();
        holes.list_lines(&mut args, "leaderElectionArgs");
        container["args"] = Value::Array(args);
        let mut map = container.as_object().unwrap().clone();
        holes.map_lines(&mut map, "imagePullPolicy");
        let object = json!({"spec": {"containers": [Value::Object(map)]}});
        assert_eq!(
            holes.render(&object).unwrap(),
            "spec:\n  containers:\n  - args:\n    - --x\n    {{- include \"demo.leaderElectionArgs\" . | nindent 4 }}\n    image: {{ include \"demo.image\" . }}\n    name: manager\n    resources:\n      {{- include \"demo.resources\" . | nindent 6 }}\n    {{- include \"demo.imagePullPolicy\" . | nindent 4 }}\n"
        );
    }

    #[test]
    fn tells_hole_one_from_hole_eleven() {
        let mut holes = Holes::new("demo");
        let names: Vec<String> = (0..12).map(|n| holes.inline(&format!("h{n}"))).collect();
        let text = holes
            .render(&json!({"a": format!("{}-{}", names[1], names[11])}))
            .unwrap();
        assert_eq!(
            text,
            "a: '{{ include \"demo.h1\" . }}-{{ include \"demo.h11\" . }}'\n".replace('\'', "")
        );
    }
}
