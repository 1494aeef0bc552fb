//! How an operand's application is reached: its container listens on one named TCP port and
//! is ready once that port accepts connections, and a Service in front of its pods sends
//! traffic to that port by name (so the container can move its port without touching the
//! Service). An operand controller starts from these and changes what its application needs,
//! with struct update syntax: `Container { env, ..serving::container(...) }`.

use ::k8s_openapi::api::core::v1::{
    Container, ContainerPort, Probe, Service, ServicePort, ServiceSpec, TCPSocketAction,
};
use ::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use ::kube::Resource;

use super::workload::Workload;
use crate::object::{AppLabels, owned_by};

/// How often the kubelet checks that the application accepts connections.
const READINESS_PERIOD_SECONDS: i32 = 10;

/// A container named `name` that runs `image` and listens on `port`, named `port_name`. It is
/// ready once the port accepts TCP connections: the Service sends traffic to ready pods only.
/// Set `readiness_probe` to check more than that (an HTTP health endpoint, say).
pub fn container(name: &str, image: &str, port_name: &str, port: i32) -> Container {
    Container {
        name: name.to_owned(),
        image: Some(image.to_owned()),
        ports: Some(vec![ContainerPort {
            name: Some(port_name.to_owned()),
            container_port: port,
            protocol: Some("TCP".to_owned()),
            ..ContainerPort::default()
        }]),
        readiness_probe: Some(Probe {
            tcp_socket: Some(TCPSocketAction {
                port: IntOrString::String(port_name.to_owned()),
                ..TCPSocketAction::default()
            }),
            period_seconds: Some(READINESS_PERIOD_SECONDS),
            ..Probe::default()
        }),
        ..Container::default()
    }
}

/// The Service in front of the pods of `owner`'s workload `W`, named after `owner` and owned by
/// it: `port` leads to the pods' port named `port_name`. For a StatefulSet it is headless (no
/// virtual IP), so that it can govern the StatefulSet and give each pod a DNS name
/// (`<name>-0.<name>`); a Deployment's gets a virtual IP.
pub fn service<W, K>(owner: &K, labels: &AppLabels, port_name: &str, port: i32) -> Service
where
    W: Workload,
    K: Resource<DynamicType = ()>,
{
    Service {
        metadata: owned_by(owner, labels.all()),
        spec: Some(ServiceSpec {
            type_: Some("ClusterIP".to_owned()),
            cluster_ip: W::HEADLESS_SERVICE.then(|| "None".to_owned()),
            selector: Some(labels.selector()),
            ports: Some(vec![ServicePort {
                name: Some(port_name.to_owned()),
                port,
                target_port: Some(IntOrString::String(port_name.to_owned())),
                protocol: Some("TCP".to_owned()),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    }
}

#[cfg(test)]
mod tests;
