use std::str::FromStr;

use crate::model::{InvalidValue, string_newtype};

/// An OLM channel name such as `alpha` or `stable-v1`: a catalog publishes the bundle in it, and
/// a Subscription follows one. It ends up unquoted in a Dockerfile `LABEL` and in a
/// comma-separated annotation, so it is kept to letters, digits, `-`, `_` and `.`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Channel(String);

impl FromStr for Channel {
    type Err = InvalidValue;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        let invalid = |problem: String| InvalidValue::new("channel", value, problem);
        if value.is_empty() {
            return Err(invalid(
                "it is empty (channels are comma-separated, e.g. `alpha,stable`)".into(),
            ));
        }
        if let Some(bad) = value
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || "-_.".contains(*c)))
        {
            return Err(invalid(format!(
                "{bad:?} is not allowed; use letters, digits, `-`, `_` and `.` (e.g. `stable-v1`)"
            )));
        }
        if value.len() > 63 {
            return Err(invalid(format!(
                "it is {} characters long; the limit is 63",
                value.len()
            )));
        }
        Ok(Self(value.to_owned()))
    }
}

impl Channel {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

string_newtype!(Channel);

/// The channels of a bundle and the one a Subscription follows when it names none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Channels {
    list: Vec<Channel>,
    default: Channel,
}

/// Why a list of channels and a default channel do not go together.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChannelsError {
    #[error("no channel given: a bundle is published in at least one (e.g. --channels alpha)")]
    Empty,
    #[error("channel `{0}` is listed twice")]
    Duplicate(String),
    #[error(
        "the default channel `{default}` is not among the channels {}\n\nAdd it to --channels, or pick one of them with --default-channel",
        .channels.join(", ")
    )]
    DefaultNotListed {
        default: String,
        channels: Vec<String>,
    },
}

impl Channels {
    /// `list` with `default` among it; `None` makes the first channel the default.
    pub fn new(list: Vec<Channel>, default: Option<Channel>) -> Result<Self, ChannelsError> {
        let first = list.first().cloned().ok_or(ChannelsError::Empty)?;
        for (i, channel) in list.iter().enumerate() {
            if list[..i].contains(channel) {
                return Err(ChannelsError::Duplicate(channel.to_string()));
            }
        }
        let default = default.unwrap_or(first);
        if !list.contains(&default) {
            return Err(ChannelsError::DefaultNotListed {
                default: default.to_string(),
                channels: list.iter().map(Channel::to_string).collect(),
            });
        }
        Ok(Self { list, default })
    }

    pub fn list(&self) -> &[Channel] {
        &self.list
    }

    pub fn default_channel(&self) -> &Channel {
        &self.default
    }

    /// The list as the bundle annotation holds it: `alpha,stable`.
    pub fn joined(&self) -> String {
        self.list
            .iter()
            .map(Channel::as_str)
            .collect::<Vec<_>>()
            .join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn channels(list: &[&str]) -> Vec<Channel> {
        list.iter().map(|c| c.parse().unwrap()).collect()
    }

    #[test]
    fn channel_names() {
        assert_eq!(
            "stable-v1.2".parse::<Channel>().unwrap().as_str(),
            "stable-v1.2"
        );
        for (bad, why) in [
            ("", "empty"),
            ("al pha", "' ' is not allowed"),
            ("a,b", "',' is not allowed"),
            ("a=b", "'=' is not allowed"),
        ] {
            let err = bad.parse::<Channel>().unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn the_default_is_the_first_channel_unless_named() {
        let both = Channels::new(channels(&["alpha", "stable"]), None).unwrap();
        assert_eq!(both.default_channel().as_str(), "alpha");
        assert_eq!(both.joined(), "alpha,stable");
        let stable = Channels::new(
            channels(&["alpha", "stable"]),
            Some("stable".parse().unwrap()),
        )
        .unwrap();
        assert_eq!(stable.default_channel().as_str(), "stable");
    }

    #[test]
    fn the_default_must_be_listed() {
        let err = Channels::new(channels(&["alpha"]), Some("stable".parse().unwrap()))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("the default channel `stable` is not among the channels alpha"),
            "{err}"
        );
        assert_eq!(Channels::new(vec![], None), Err(ChannelsError::Empty));
        assert_eq!(
            Channels::new(channels(&["alpha", "alpha"]), None),
            Err(ChannelsError::Duplicate("alpha".into()))
        );
    }
}
