//! The grammar every opgen marker shares, after Kubebuilder's:
//!
//! ```text
//! // +opgen:<name>:<key>=<value>,<key>=<item>;<item>
//! ```
//!
//! A marker is a line that is a `//` comment (`///` and `//!` too) whose text starts with
//! `+opgen:`; `+opgen:` anywhere else in a line is prose and ignored. Keys are separated by
//! `,`, list items by `;`, and an item may be quoted (`""` is the core group). Each reader
//! ([`super::rbac`], [`super::webhook`]) names its keys, checks its values and adds the advice
//! under its errors.

const PREFIX: &str = "+opgen:";

/// A marker's file (relative to the project root), line and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub file: String,
    pub line: usize,
    pub text: String,
}

/// A marker that cannot be used: where it is, why, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{}: {problem}\n  {}{}", .place.file, .place.line, .place.text, .hint.as_ref().map(|hint| format!("\n{hint}")).unwrap_or_default())]
pub struct MarkerError {
    pub place: Place,
    pub problem: Problem,
    /// The line of advice under the marker, when there is one.
    pub hint: Option<String>,
}

/// What is wrong with a marker, of any grammar.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    #[error("unknown marker `+opgen:{0}`")]
    UnknownMarker(String),
    #[error("the marker has no arguments")]
    NoArguments,
    #[error("`{0}` is not a `key=value` pair in marker")]
    NotKeyValue(String),
    #[error("the marker has an empty `,`-separated part")]
    EmptyPart,
    #[error("unknown key `{0}` in marker")]
    UnknownKey(String),
    #[error("key `{0}` is given twice in marker")]
    DuplicateKey(&'static str),
    #[error("key `{0}` is missing from marker")]
    MissingKey(&'static str),
    #[error("`{key}` has an empty item in marker")]
    EmptyItem { key: &'static str },
    #[error("`{key}` takes one value, not a list, in marker")]
    NotSingle { key: &'static str },
    #[error("invalid {key} `{value}` in marker: {why}")]
    InvalidValue {
        key: &'static str,
        value: String,
        why: &'static str,
    },
    #[error("unknown verb `{verb}` in marker")]
    UnknownVerb { verb: String, urls: bool },
    #[error("a marker grants either `resources` or `urls`, not both")]
    UrlsWithResources,
    #[error("`urls` cannot be combined with `namespace`: a Role cannot grant URLs")]
    UrlsWithNamespace,
    #[error(
        "`urls` grants non-resource URLs, which only a ClusterRole can, but this project is namespaced, so its manager role is a Role"
    )]
    UrlsInNamespacedProject,
    #[error("webhook name `{name}` is used by {first} too; every webhook has its own name")]
    DuplicateName { name: String, first: String },
}

/// Advice that reads the same in every grammar.
pub fn common_hint(problem: &Problem) -> Option<String> {
    let hint = match problem {
        Problem::EmptyItem { .. } => {
            "Separate items with a single `;`; write the core group as `\"\"`"
        }
        Problem::EmptyPart => "Separate `key=value` pairs with a single `,`, and end with no `,`",
        _ => return None,
    };
    Some(hint.to_owned())
}

/// One grammar's reader: its parser of a marker's text after `+opgen:`, and the advice under
/// its errors.
pub struct Reader<T> {
    pub parse: fn(&str) -> Result<T, Problem>,
    pub hint: fn(&Problem) -> Option<String>,
}

impl<T> Reader<T> {
    pub fn error(&self, place: Place, problem: Problem) -> MarkerError {
        let hint = (self.hint)(&problem);
        MarkerError {
            place,
            problem,
            hint,
        }
    }

    /// The markers of one file's `text` with where each is, and the errors of those that do
    /// not parse; `file` is only for messages.
    pub fn read(&self, file: &str, text: &str) -> (Vec<(Place, T)>, Vec<MarkerError>) {
        let (mut found, mut errors) = (Vec::new(), Vec::new());
        for (place, body) in marker_lines(file, text) {
            match (self.parse)(body) {
                Ok(marker) => found.push((place, marker)),
                Err(problem) => errors.push(self.error(place, problem)),
            }
        }
        (found, errors)
    }
}

/// Every problem found, so that one run reports all of them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", display_all(.0))]
pub struct InvalidMarkers(pub Vec<MarkerError>);

fn display_all(errors: &[MarkerError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Every marker line of one source file's `text`, where it is, and its text after `+opgen:`;
/// `file` is only for messages.
pub fn marker_lines<'a>(
    file: &'a str,
    text: &'a str,
) -> impl Iterator<Item = (Place, &'a str)> + 'a {
    text.lines().enumerate().filter_map(move |(index, line)| {
        let body = marker_body(line)?;
        let place = Place {
            file: file.to_owned(),
            line: index + 1,
            text: line.trim().to_owned(),
        };
        Some((place, body))
    })
}

/// The text after `+opgen:`, when `line` is a marker.
fn marker_body(line: &str) -> Option<&str> {
    let comment = line.trim_start().strip_prefix("//")?;
    let comment = comment.strip_prefix(['/', '!']).unwrap_or(comment);
    comment.trim().strip_prefix(PREFIX)
}

/// The `key=value` pairs of a marker named `name` whose keys are among `keys`, as written
/// (values untrimmed), in their order.
pub struct Arguments<'a> {
    pairs: Vec<(&'static str, &'a str)>,
}

impl<'a> Arguments<'a> {
    /// Splits `body` (the text after `+opgen:`) into the marker's name and its pairs.
    pub fn parse(body: &'a str, name: &str, keys: &[&'static str]) -> Result<Self, Problem> {
        let (found, arguments) = match body.split_once(':') {
            Some((found, arguments)) => (found, Some(arguments)),
            None => (body, None),
        };
        if found != name {
            return Err(Problem::UnknownMarker(found.to_owned()));
        }
        let arguments = match arguments {
            Some(arguments) if !arguments.trim().is_empty() => arguments,
            _ => return Err(Problem::NoArguments),
        };
        let mut pairs: Vec<(&'static str, &'a str)> = Vec::new();
        for pair in arguments.split(',') {
            if pair.trim().is_empty() {
                return Err(Problem::EmptyPart);
            }
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| Problem::NotKeyValue(pair.trim().to_owned()))?;
            let key = key.trim();
            let key = keys
                .iter()
                .copied()
                .find(|known| *known == key)
                .ok_or_else(|| Problem::UnknownKey(key.to_owned()))?;
            if pairs.iter().any(|(given, _)| *given == key) {
                return Err(Problem::DuplicateKey(key));
            }
            pairs.push((key, value));
        }
        Ok(Self { pairs })
    }

    /// The value of `key`, as written, when the marker gives it.
    pub fn get(&self, key: &str) -> Option<&'a str> {
        self.pairs
            .iter()
            .find(|(given, _)| *given == key)
            .map(|(_, value)| *value)
    }
}

/// A required `;`-separated list, each item (trimmed and unquoted) checked by `item`.
pub fn list<T>(
    key: &'static str,
    raw: Option<&str>,
    item: impl Fn(&str) -> Result<T, Problem>,
) -> Result<Vec<T>, Problem> {
    let raw = raw.ok_or(Problem::MissingKey(key))?;
    raw.split(';')
        .map(|part| {
            let part = part.trim();
            if part.is_empty() {
                return Err(Problem::EmptyItem { key });
            }
            item(unquote(key, part)?)
        })
        .collect()
}

/// A list that may be left out: empty then.
pub fn optional_list<T>(
    key: &'static str,
    raw: Option<&str>,
    item: impl Fn(&str) -> Result<T, Problem>,
) -> Result<Vec<T>, Problem> {
    raw.map_or(Ok(Vec::new()), |raw| list(key, Some(raw), item))
}

/// An item without its double quotes, if it has them (`""` is the core group).
pub fn unquote<'a>(key: &'static str, item: &'a str) -> Result<&'a str, Problem> {
    match item.strip_prefix('"') {
        Some(rest) => rest.strip_suffix('"').ok_or_else(|| Problem::InvalidValue {
            key,
            value: item.to_owned(),
            why: "the quote is not closed",
        }),
        None => Ok(item),
    }
}

/// The checks of values look only at characters: they catch typos and marker syntax slips,
/// and leave the finer naming rules to the API server, which reports them when the manifests
/// are applied.
pub fn check_chars(
    key: &'static str,
    value: &str,
    allowed: impl Fn(char) -> bool,
    why: &'static str,
) -> Result<String, Problem> {
    if !value.is_empty() && value.chars().all(allowed) {
        Ok(value.to_owned())
    } else {
        Err(Problem::InvalidValue {
            key,
            value: value.to_owned(),
            why,
        })
    }
}

/// A character of a DNS name as Kubernetes writes groups and resources: lowercase letters,
/// digits, `-` and `.`.
pub fn is_name_char(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.'
}
