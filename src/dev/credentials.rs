//! The identities of a development control plane: an admin token (group `system:masters`)
//! for opgen and the user's `kubectl`, and the key that signs service-account tokens, so the
//! manager can run as its own ServiceAccount. kube-apiserver makes its own serving
//! certificate in `certs/`; clients trust that file.

use std::{
    hash::{BuildHasher, RandomState},
    path::{Path, PathBuf},
};

use anyhow::Context as _;

pub struct Credentials {
    /// Where kube-apiserver writes its self-signed certificate and key.
    pub cert_dir: PathBuf,
    /// Signs service-account tokens (kube-apiserver, kube-controller-manager).
    pub service_account_key: PathBuf,
    /// Verifies them (kube-apiserver).
    pub service_account_public_key: PathBuf,
    /// kube-apiserver's static tokens: the admin's.
    pub token_file: PathBuf,
    pub admin_token: String,
}

impl Credentials {
    /// Writes fresh credentials into `dir`.
    pub fn write(dir: &Path) -> anyhow::Result<Self> {
        let cert_dir = dir.join("certs");
        std::fs::create_dir_all(&cert_dir)?;
        let key = rcgen::KeyPair::generate().context("cannot generate a signing key")?;
        let service_account_key = dir.join("service-account.key");
        std::fs::write(&service_account_key, key.serialize_pem())?;
        let service_account_public_key = dir.join("service-account.pub");
        std::fs::write(&service_account_public_key, key.public_key_pem())?;
        let admin_token = random_token();
        let token_file = dir.join("tokens.csv");
        // token,user,uid,"groups"
        std::fs::write(
            &token_file,
            format!("{admin_token},admin,admin,\"system:masters\"\n"),
        )?;
        Ok(Self {
            cert_dir,
            service_account_key,
            service_account_public_key,
            token_file,
            admin_token,
        })
    }

    /// The certificate clients trust: the one kube-apiserver generates in `cert_dir`.
    pub fn ca(&self) -> PathBuf {
        self.cert_dir.join("apiserver.crt")
    }
}

/// 128 random bits in hex. `RandomState` is seeded from the operating system's randomness,
/// enough for a loopback server that lives as long as a development session.
fn random_token() -> String {
    (0..2)
        .map(|_| format!("{:016x}", RandomState::new().hash_one(0u8)))
        .collect()
}

/// Writes a kubeconfig for `server` that trusts `ca` and authenticates with `token`.
pub fn write_kubeconfig(path: &Path, server: &str, ca: &Path, token: &str) -> anyhow::Result<()> {
    let kubeconfig = format!(
        "apiVersion: v1
kind: Config
clusters:
- name: opgen-dev
  cluster:
    server: {server}
    certificate-authority: {ca}
users:
- name: opgen-dev
  user:
    token: \"{token}\"
contexts:
- name: opgen-dev
  context:
    cluster: opgen-dev
    user: opgen-dev
current-context: opgen-dev
",
        ca = ca.display(),
        token = token.trim()
    );
    std::fs::write(path, kubeconfig).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_differ() {
        let token = random_token();
        assert_eq!(token.len(), 32);
        assert_ne!(token, random_token());
    }
}
