//! The chart's `watchNamespace` value, which a cluster-wide operator's values have and a
//! namespaced one's do not (its manager watches the namespace of its release). `values.yaml`
//! is the user's: `opgen edit` adds or removes only that value, with its comment.

const COMMENT: &str = "# The namespace the operator watches; empty watches every namespace.";
const KEY: &str = "watchNamespace:";

/// `values` with the `watchNamespace` value when `cluster_wide`, else without it; and whether
/// that could be done (a value to add goes after the `logging:` block, which must be there).
pub fn with_watch_namespace(values: &str, cluster_wide: bool) -> (String, bool) {
    let lines: Vec<&str> = values.lines().collect();
    let has = lines.iter().any(|line| line.starts_with(KEY));
    let mut out: Vec<String> = Vec::with_capacity(lines.len() + 3);
    if cluster_wide {
        if has {
            return (values.to_owned(), true);
        }
        let Some(logging) = lines.iter().position(|line| line.trim_end() == "logging:") else {
            return (values.to_owned(), false);
        };
        let end = lines[logging + 1..]
            .iter()
            .position(|line| !line.starts_with(' ') && !line.is_empty())
            .map_or(lines.len(), |offset| logging + 1 + offset);
        let last = (logging..end)
            .rev()
            .find(|index| !lines[*index].trim().is_empty())
            .unwrap_or(logging);
        out.extend(lines[..=last].iter().map(|line| (*line).to_owned()));
        out.extend([String::new(), COMMENT.to_owned(), format!("{KEY} \"\"")]);
        out.extend(lines[last + 1..].iter().map(|line| (*line).to_owned()));
    } else {
        if !has {
            return (values.to_owned(), true);
        }
        for (index, line) in lines.iter().enumerate() {
            let next = lines.get(index + 1).copied().unwrap_or_default();
            let blank_before_value =
                line.trim().is_empty() && (next == COMMENT || next.starts_with(KEY));
            if line.starts_with(KEY) || *line == COMMENT || blank_before_value {
                continue;
            }
            out.push((*line).to_owned());
        }
    }
    let mut text = out.join("\n");
    if values.ends_with('\n') {
        text.push('\n');
    }
    (text, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_value_comes_and_goes_with_its_comment() {
        let namespaced = "replicaCount: 1\n\nlogging:\n  # text or json.\n  format: text\n  level: \"\"\n\nresources:\n  limits: {}\n";
        let cluster = "replicaCount: 1\n\nlogging:\n  # text or json.\n  format: text\n  level: \"\"\n\n# The namespace the operator watches; empty watches every namespace.\nwatchNamespace: \"\"\n\nresources:\n  limits: {}\n";
        assert_eq!(
            with_watch_namespace(namespaced, true),
            (cluster.to_owned(), true)
        );
        assert_eq!(
            with_watch_namespace(cluster, false),
            (namespaced.to_owned(), true)
        );
        assert_eq!(
            with_watch_namespace(cluster, true),
            (cluster.to_owned(), true)
        );
        assert_eq!(
            with_watch_namespace("image: {}\n", true),
            ("image: {}\n".to_owned(), false)
        );
    }
}
