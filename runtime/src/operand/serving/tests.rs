use ::k8s_openapi::api::apps::v1::{Deployment, StatefulSet};

use super::*;
use crate::{test_kinds, testing};

#[test]
fn the_container_listens_on_the_named_port_and_is_ready_when_it_accepts_connections() {
    let container = container("web", "nginx:1.27", "http", 8080);
    assert_eq!(
        (container.name.as_str(), container.image.as_deref()),
        ("web", Some("nginx:1.27"))
    );
    let ports = container.ports.expect("container ports");
    assert_eq!(ports.len(), 1);
    assert_eq!(
        (ports[0].name.as_deref(), ports[0].container_port),
        (Some("http"), 8080)
    );
    assert_eq!(ports[0].protocol.as_deref(), Some("TCP"));
    let probe = container.readiness_probe.expect("a readiness probe");
    let socket = probe.tcp_socket.expect("a TCP check");
    assert_eq!(socket.port, IntOrString::String("http".to_owned()));
    assert_eq!(probe.period_seconds, Some(READINESS_PERIOD_SECONDS));
    assert_eq!(
        (container.command, container.env),
        (None, None),
        "the image's own"
    );
}

#[test]
fn the_service_sends_its_port_to_the_pods_port_by_name() {
    let owner: test_kinds::Widget = testing::new_object();
    let labels = AppLabels::new("widget", "server", &owner);
    let service = service::<Deployment, _>(&owner, &labels, "http", 80);
    assert_eq!(service.metadata, owned_by(&owner, labels.all()));
    let spec = service.spec.expect("a service spec");
    assert_eq!(
        spec.cluster_ip, None,
        "a virtual IP, allocated by Kubernetes"
    );
    assert_eq!(spec.selector, Some(labels.selector()));
    let ports = spec.ports.expect("service ports");
    assert_eq!(ports.len(), 1);
    assert_eq!(
        (ports[0].name.as_deref(), ports[0].port),
        (Some("http"), 80)
    );
    let target = IntOrString::String("http".to_owned());
    assert_eq!(ports[0].target_port, Some(target));
}

#[test]
fn a_statefulsets_service_is_headless() {
    let owner: test_kinds::Widget = testing::new_object();
    let labels = AppLabels::new("widget", "server", &owner);
    let spec = service::<StatefulSet, _>(&owner, &labels, "http", 80).spec;
    let cluster_ip = spec.and_then(|spec| spec.cluster_ip);
    assert_eq!(cluster_ip.as_deref(), Some("None"));
}
