//! The pods of an operand, hardened to the "restricted" Pod Security Standard.

use ::std::collections::BTreeMap;

use ::k8s_openapi::api::core::v1::{
    Capabilities, Container, EmptyDirVolumeSource, PodSecurityContext, PodSpec, PodTemplateSpec,
    SeccompProfile, SecurityContext, Volume, VolumeMount,
};
use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// The pods of an operand, hardened to the "restricted" Pod Security Standard: non-root, no
/// privilege escalation, every capability dropped, the runtime's default seccomp profile, and a
/// read-only root filesystem with an emptyDir volume for each directory the application writes
/// to. The application does not call the Kubernetes API, so it gets no service account token.
#[derive(Clone, Debug)]
pub struct RestrictedPods {
    labels: BTreeMap<String, String>,
    container: Container,
    run_as_user: Option<i64>,
    run_as_group: Option<i64>,
    fs_group: Option<i64>,
    scratch_dirs: Vec<(String, String)>,
}

impl RestrictedPods {
    /// Pods labelled `labels` that run `container`.
    pub fn new(labels: BTreeMap<String, String>, container: Container) -> Self {
        Self {
            labels,
            container,
            run_as_user: None,
            run_as_group: None,
            fs_group: None,
            scratch_dirs: Vec::new(),
        }
    }

    /// Runs the container as the user `uid` and the group `gid`; `None` keeps the image's,
    /// whose user must then be a UID (a user name cannot be checked to be non-root, and the
    /// pod is refused).
    pub fn run_as(mut self, uid: Option<i64>, gid: Option<i64>) -> Self {
        self.run_as_user = uid;
        self.run_as_group = gid;
        self
    }

    /// Gives the files of the pods' volumes to `gid`, so that a persistent volume is writable
    /// by a non-root user.
    pub fn volumes_owned_by(mut self, gid: Option<i64>) -> Self {
        self.fs_group = gid;
        self
    }

    /// Makes each directory writable with an emptyDir volume (volume name, mount path), which
    /// lasts as long as the pod.
    pub fn scratch_dirs(mut self, dirs: &[(&str, &str)]) -> Self {
        let dirs = dirs
            .iter()
            .map(|(name, path)| ((*name).to_owned(), (*path).to_owned()));
        self.scratch_dirs.extend(dirs);
        self
    }

    /// The pod template.
    pub fn template(self) -> PodTemplateSpec {
        let mut container = self.container;
        let scratch_mounts = self.scratch_dirs.iter().map(|(name, path)| VolumeMount {
            name: name.clone(),
            mount_path: path.clone(),
            ..VolumeMount::default()
        });
        let mounts: Vec<VolumeMount> = scratch_mounts
            .chain(container.volume_mounts.take().unwrap_or_default())
            .collect();
        container.volume_mounts = Some(mounts);
        container.security_context = Some(SecurityContext {
            allow_privilege_escalation: Some(false),
            capabilities: Some(Capabilities {
                drop: Some(vec!["ALL".to_owned()]),
                ..Capabilities::default()
            }),
            read_only_root_filesystem: Some(true),
            run_as_non_root: Some(true),
            ..SecurityContext::default()
        });
        let volumes = self.scratch_dirs.into_iter().map(|(name, _)| Volume {
            name,
            empty_dir: Some(EmptyDirVolumeSource::default()),
            ..Volume::default()
        });
        PodTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: Some(self.labels),
                ..ObjectMeta::default()
            }),
            spec: Some(PodSpec {
                containers: vec![container],
                security_context: Some(PodSecurityContext {
                    run_as_non_root: Some(true),
                    run_as_user: self.run_as_user,
                    run_as_group: self.run_as_group,
                    fs_group: self.fs_group,
                    fs_group_change_policy: self.fs_group.map(|_| "OnRootMismatch".to_owned()),
                    seccomp_profile: Some(SeccompProfile {
                        type_: "RuntimeDefault".to_owned(),
                        ..SeccompProfile::default()
                    }),
                    ..PodSecurityContext::default()
                }),
                automount_service_account_token: Some(false),
                enable_service_links: Some(false),
                volumes: Some(volumes.collect()),
                ..PodSpec::default()
            }),
        }
    }
}

#[cfg(test)]
mod tests;
