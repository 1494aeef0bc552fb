use std::str::FromStr;

use super::{InvalidValue, dns, string_newtype};

/// The domain every API group of the project lives under (`db` + `example.com` gives the API
/// group `db.example.com`): a DNS-1123 subdomain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Domain(String);

impl FromStr for Domain {
    type Err = InvalidValue;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match dns::subdomain_problem(value) {
            Some(problem) => Err(InvalidValue::new(
                "domain",
                value,
                format!("{problem} (a domain must be a DNS-1123 subdomain such as `example.com`)"),
            )),
            None => Ok(Self(value.to_owned())),
        }
    }
}

impl Domain {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

string_newtype!(Domain);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_subdomains() {
        assert_eq!("my.org".parse::<Domain>().unwrap().as_str(), "my.org");
        let err = "My.org".parse::<Domain>().unwrap_err().to_string();
        assert!(err.contains("invalid domain `My.org`"), "{err}");
        assert!(err.contains("example.com"), "{err}");
    }
}
