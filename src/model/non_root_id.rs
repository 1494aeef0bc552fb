use std::{fmt, str::FromStr};

use serde::{Deserialize, Serialize};

use super::InvalidValue;

/// A numeric user or group ID other than root's, that a pod's security context can name:
/// 1 to 2147483647 (Kubernetes refuses larger ones). Operands run with `runAsNonRoot`, and
/// the kubelet can only check a number to be non-root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "i64", into = "i64")]
pub struct NonRootId(i64);

/// Kubernetes' limit of `runAsUser`, `runAsGroup` and `fsGroup`.
const MAX: i64 = i32::MAX as i64;

impl NonRootId {
    pub fn get(self) -> i64 {
        self.0
    }
}

impl TryFrom<i64> for NonRootId {
    type Error = InvalidValue;

    fn try_from(id: i64) -> Result<Self, Self::Error> {
        let problem = match id {
            0 => "0 is root, and the pods run as non-root (`runAsNonRoot: true`)",
            ..0 => "an ID is not negative",
            1..=MAX => return Ok(Self(id)),
            _ => "Kubernetes accepts IDs up to 2147483647",
        };
        Err(InvalidValue::new("UID", &id.to_string(), problem))
    }
}

impl From<NonRootId> for i64 {
    fn from(id: NonRootId) -> Self {
        id.0
    }
}

impl FromStr for NonRootId {
    type Err = InvalidValue;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value.trim().parse::<i64>() {
            Ok(id) => id.try_into(),
            Err(_) => Err(InvalidValue::new(
                "UID",
                value,
                "it is not a number (a name cannot be checked to be non-root)",
            )),
        }
    }
}

impl fmt::Display for NonRootId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_non_root_ids_kubernetes_allows() {
        for ok in ["1", "999", "11211", "2147483647"] {
            assert_eq!(ok.parse::<NonRootId>().unwrap().to_string(), ok);
        }
    }

    #[test]
    fn refuses_root_negative_large_and_named_ids() {
        for (bad, why) in [
            ("0", "0 is root"),
            ("-1", "not negative"),
            ("2147483648", "up to 2147483647"),
            ("mysql", "not a number"),
            ("", "not a number"),
        ] {
            let err = bad.parse::<NonRootId>().unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn reads_and_writes_as_a_number_and_validates_on_reading() {
        let id: NonRootId = serde_saphyr::from_str("999").unwrap();
        assert_eq!(id.get(), 999);
        assert_eq!(serde_saphyr::to_string(&id).unwrap().trim(), "999");
        let err = serde_saphyr::from_str::<NonRootId>("0").unwrap_err();
        assert!(err.to_string().contains("0 is root"), "{err}");
    }
}
