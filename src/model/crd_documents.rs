//! The YAML documents of a CRD file, and the one that defines a kind: projects publish one CRD
//! per file, all their CRDs in one (cert-manager), or a CRD followed by `---` (concatenated
//! manifests, `helm template`). Documents without content are not documents of the file.

use serde_json::Value;

/// One document with content: its text (from its `---` line, if it has one) and where it
/// starts in the file.
#[derive(Debug, Clone, PartialEq)]
pub struct CrdDocument<'a> {
    pub text: &'a str,
    /// The line of the file its text starts on, from 1.
    pub first_line: u64,
    /// The document, read as any YAML.
    pub value: Value,
}

impl CrdDocument<'_> {
    /// What the document defines, for messages: "Certificate of `cert-manager.io`", or "a
    /// `ConfigMap` of `v1`" for what is not a CRD.
    pub fn describe(&self) -> String {
        let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
        if self.value["kind"] == "CustomResourceDefinition" {
            let kind = text(&self.value["spec"]["names"]["kind"]);
            let group = text(&self.value["spec"]["group"]);
            if kind.is_empty() {
                return format!("a CRD of `{group}` without `spec.names.kind`");
            }
            return format!("{kind} of `{group}`");
        }
        let kind = text(&self.value["kind"]);
        if kind.is_empty() {
            return "an object without `kind`".to_owned();
        }
        format!("a `{kind}` of `{}`", text(&self.value["apiVersion"]))
    }

    /// The document read into `T`; the error starts with `what` and gives the line and
    /// column in the file.
    pub fn read<T: serde::de::DeserializeOwned>(&self, what: &str) -> Result<T, String> {
        serde_saphyr::from_str(self.text).map_err(|err| {
            let place = match crate::yaml_error::location(&err) {
                Some((line, column)) => {
                    format!("line {}, column {column}", line + self.first_line - 1)
                }
                None => format!("the document at line {}", self.first_line),
            };
            format!("{what} at {place}: {}", crate::yaml_error::problem(&err))
        })
    }

    fn defines(&self, group: &str, kind: &str) -> bool {
        self.value["kind"] == "CustomResourceDefinition"
            && self.value["spec"]["group"] == group
            && self.value["spec"]["names"]["kind"] == kind
    }
}

/// The documents of `text` that have content, in order; the error says which one is not YAML.
pub fn documents(text: &str) -> Result<Vec<CrdDocument<'_>>, String> {
    let mut found = Vec::new();
    for (start, first_line) in starts(text) {
        let end = text[start..]
            .match_indices('\n')
            .map(|(i, _)| start + i + 1)
            .find(|&next| is_marker(&text[next..]))
            .unwrap_or(text.len());
        let document = &text[start..end];
        if !has_content(document) {
            continue;
        }
        let mut found_here = CrdDocument {
            text: document,
            first_line,
            value: Value::Null,
        };
        found_here.value = found_here.read("it is not valid YAML")?;
        if !found_here.value.is_null() {
            found.push(found_here);
        }
    }
    Ok(found)
}

/// The document that defines `kind` of `group`: the only document of a file that has one,
/// else the one among several that is a CRD of that kind. The error says how many documents
/// there are and what they define.
pub fn select<'a>(
    mut documents: Vec<CrdDocument<'a>>,
    group: &str,
    kind: &str,
) -> Result<CrdDocument<'a>, String> {
    match documents.len() {
        0 => return Err(
            "it holds no YAML document: a CRD file holds a `CustomResourceDefinition` of `apiextensions.k8s.io/v1`"
                .to_owned(),
        ),
        1 => return Ok(documents.remove(0)),
        _ => {}
    }
    let defining: Vec<usize> = (0..documents.len())
        .filter(|&i| documents[i].defines(group, kind))
        .collect();
    if let [only] = defining[..] {
        return Ok(documents.swap_remove(only));
    }
    let listed = documents
        .iter()
        .enumerate()
        .map(|(i, d)| format!("{}. {} (line {})", i + 1, d.describe(), d.first_line))
        .collect::<Vec<_>>()
        .join("; ");
    let count = documents.len();
    if defining.is_empty() {
        Err(format!(
            "none of its {count} YAML documents is the CRD of {kind} of `{group}`: they are {listed}"
        ))
    } else {
        Err(format!(
            "{} of its {count} YAML documents are the CRD of {kind} of `{group}`, and opgen cannot tell which to use: they are {listed}",
            defining.len()
        ))
    }
}

/// The byte offset and line (from 1) of each document's start: the file's start, and every
/// `---` line.
fn starts(text: &str) -> Vec<(usize, u64)> {
    let mut starts = vec![(0, 1)];
    let mut offset = 0;
    for (index, line) in text.split_inclusive('\n').enumerate() {
        if offset > 0 && is_marker(line) {
            starts.push((offset, index as u64 + 1));
        }
        offset += line.len();
    }
    starts
}

/// Whether `rest` starts with a document start marker: `---` alone or before a space.
fn is_marker(rest: &str) -> bool {
    rest.strip_prefix("---")
        .is_some_and(|after| after.is_empty() || after.starts_with([' ', '\t', '\n', '\r']))
}

/// Whether a document's text holds more than markers, directives, comments and blank lines.
fn has_content(document: &str) -> bool {
    document.lines().any(|line| {
        let line = line.trim();
        let line = line
            .strip_prefix("---")
            .or_else(|| line.strip_prefix("..."))
            .map_or(line, str::trim);
        !(line.is_empty() || line.starts_with('#') || line.starts_with('%'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(kind: &str, group: &str) -> String {
        format!(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n  group: {group}\n  names:\n    kind: {kind}\n"
        )
    }

    #[test]
    fn empty_documents_are_not_documents() {
        let one = crd("Certificate", "cert-manager.io");
        for text in [
            one.clone(),
            format!("{one}---\n"),
            format!("---\n{one}---\n# nothing here\n---\n...\n"),
            format!("# A comment first\n---\n{one}--- \n"),
        ] {
            let found = documents(&text).unwrap();
            assert_eq!(found.len(), 1, "{text}");
            let found = documents(&text).unwrap();
            assert_eq!(found[0].describe(), "Certificate of `cert-manager.io`");
            let selected = select(found, "acme.example", "Other").unwrap();
            assert!(selected.text.contains(&one), "{text}");
        }
    }

    #[test]
    fn the_document_of_the_kind_is_picked_among_several() {
        let text = format!(
            "{}---\n{}---\napiVersion: v1\nkind: ConfigMap\n",
            crd("Issuer", "cert-manager.io"),
            crd("Certificate", "cert-manager.io")
        );
        let found = select(documents(&text).unwrap(), "cert-manager.io", "Certificate").unwrap();
        assert_eq!(found.first_line, 7);
        assert!(found.text.starts_with("---\napiVersion"), "{}", found.text);
        assert!(
            found.text.ends_with("kind: Certificate\n"),
            "{}",
            found.text
        );
        let err = select(documents(&text).unwrap(), "cert-manager.io", "Order").unwrap_err();
        assert_eq!(
            err,
            "none of its 3 YAML documents is the CRD of Order of `cert-manager.io`: they are 1. Issuer of `cert-manager.io` (line 1); 2. Certificate of `cert-manager.io` (line 7); 3. a `ConfigMap` of `v1` (line 14)"
        );
        let twice = format!("{text}---\n{}", crd("Certificate", "cert-manager.io"));
        let err = select(documents(&twice).unwrap(), "cert-manager.io", "Certificate").unwrap_err();
        assert!(
            err.starts_with("2 of its 4 YAML documents are the CRD of Certificate"),
            "{err}"
        );
    }

    #[test]
    fn a_file_without_documents_or_with_bad_yaml_says_so() {
        for text in ["", "\n# only a comment\n", "---\n---\n"] {
            assert!(
                select(documents(text).unwrap(), "g", "K")
                    .unwrap_err()
                    .starts_with("it holds no YAML document"),
                "{text:?}"
            );
        }
        let err = documents("a: 1\n---\nb: [\n").unwrap_err();
        assert!(err.starts_with("it is not valid YAML at line "), "{err}");
    }
}
