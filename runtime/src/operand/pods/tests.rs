use ::std::collections::BTreeMap;

use super::*;

#[test]
fn pods_run_with_a_restricted_security_context() {
    let container = Container {
        name: "app".to_owned(),
        ..Container::default()
    };
    let template = RestrictedPods::new(BTreeMap::new(), container)
        .run_as(Some(999), Some(1000))
        .template();
    let pod = template.spec.expect("pod spec");
    let pod_context = pod.security_context.expect("pod security context");
    assert_eq!(pod_context.run_as_non_root, Some(true));
    assert_eq!(pod_context.run_as_user, Some(999));
    assert_eq!(pod_context.run_as_group, Some(1000));
    assert_eq!(pod_context.fs_group, None);
    assert_eq!(pod_context.fs_group_change_policy, None);
    assert_eq!(
        pod_context.seccomp_profile.map(|p| p.type_),
        Some("RuntimeDefault".to_owned())
    );
    assert_eq!(pod.automount_service_account_token, Some(false));
    assert_eq!(pod.enable_service_links, Some(false));

    let context = pod.containers[0]
        .security_context
        .clone()
        .expect("security context");
    assert_eq!(context.allow_privilege_escalation, Some(false));
    assert_eq!(context.read_only_root_filesystem, Some(true));
    assert_eq!(context.run_as_non_root, Some(true));
    assert_eq!(context.privileged, None);
    let capabilities = context.capabilities.expect("capabilities");
    assert_eq!(capabilities.drop, Some(vec!["ALL".to_owned()]));
    assert_eq!(capabilities.add, None);
}

#[test]
fn the_read_only_root_filesystem_has_writable_volumes_where_needed() {
    let data = VolumeMount {
        name: "data".to_owned(),
        mount_path: "/data".to_owned(),
        ..VolumeMount::default()
    };
    let container = Container {
        name: "app".to_owned(),
        volume_mounts: Some(vec![data]),
        ..Container::default()
    };
    let template = RestrictedPods::new(BTreeMap::new(), container)
        .run_as(Some(999), Some(999))
        .volumes_owned_by(Some(999))
        .scratch_dirs(&[("tmp", "/tmp"), ("run", "/var/run/app")])
        .template();
    let pod = template.spec.expect("pod spec");

    let mounts: Vec<(&str, &str)> = pod.containers[0]
        .volume_mounts
        .iter()
        .flatten()
        .map(|m| (m.name.as_str(), m.mount_path.as_str()))
        .collect();
    assert_eq!(
        mounts,
        [("tmp", "/tmp"), ("run", "/var/run/app"), ("data", "/data")]
    );
    let volumes = pod.volumes.expect("volumes");
    let names: Vec<&str> = volumes.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(
        names,
        ["tmp", "run"],
        "the data volume comes from elsewhere"
    );
    assert!(volumes.iter().all(|v| v.empty_dir.is_some()));
    let pod_context = pod.security_context.expect("pod security context");
    assert_eq!(pod_context.fs_group, Some(999));
    assert_eq!(
        pod_context.fs_group_change_policy.as_deref(),
        Some("OnRootMismatch")
    );
}
