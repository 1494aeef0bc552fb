use serde::{Deserialize, Serialize};

/// The webhooks of one version of a kind, as `PROJECT` records them (`create webhook`).
///
/// Defaulting and validation are admission webhooks of this version; conversion belongs to
/// the whole kind, and is recorded on the version it was asked for, as Kubebuilder does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Webhooks {
    /// A mutating webhook that fills in defaults (`--defaulting`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub defaulting: bool,
    /// A validating webhook for creates, updates and deletes (`--validation`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub validation: bool,
    /// The kind's versions convert through a webhook (`--conversion`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub conversion: bool,
}

fn is_false(value: &bool) -> bool {
    !value
}

impl Webhooks {
    /// Whether it records no webhook at all.
    pub fn is_empty(&self) -> bool {
        !(self.defaulting || self.validation || self.conversion)
    }

    /// Whether it has an admission (defaulting or validation) webhook.
    pub fn admission(&self) -> bool {
        self.defaulting || self.validation
    }

    /// The webhooks of both.
    pub fn union(self, other: Webhooks) -> Webhooks {
        Webhooks {
            defaulting: self.defaulting || other.defaulting,
            validation: self.validation || other.validation,
            conversion: self.conversion || other.conversion,
        }
    }

    /// The webhooks of `self` that `other` has too, by their flags (`--defaulting`, ...).
    pub fn shared_flags(&self, other: &Webhooks) -> Vec<&'static str> {
        [
            (self.defaulting && other.defaulting, "--defaulting"),
            (self.validation && other.validation, "--validation"),
            (self.conversion && other.conversion, "--conversion"),
        ]
        .into_iter()
        .filter_map(|(both, flag)| both.then_some(flag))
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_only_the_webhooks_it_has() {
        let webhooks = Webhooks {
            defaulting: true,
            ..Webhooks::default()
        };
        let yaml = serde_saphyr::to_string(&webhooks).unwrap();
        assert_eq!(yaml.trim(), "defaulting: true");
        let read: Webhooks = serde_saphyr::from_str("validation: true\n").unwrap();
        assert!(read.validation && !read.defaulting && !read.conversion);
        assert!(serde_saphyr::from_str::<Webhooks>("mutating: true\n").is_err());
    }

    #[test]
    fn union_and_shared_flags() {
        let defaulting = Webhooks {
            defaulting: true,
            ..Webhooks::default()
        };
        let both = Webhooks {
            validation: true,
            ..defaulting
        };
        assert!(Webhooks::default().is_empty());
        assert!(!defaulting.is_empty() && defaulting.admission());
        assert_eq!(defaulting.union(both), both);
        assert_eq!(both.shared_flags(&defaulting), ["--defaulting"]);
        assert!(defaulting.shared_flags(&Webhooks::default()).is_empty());
    }
}
