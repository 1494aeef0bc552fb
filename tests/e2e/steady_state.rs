//! A steady operator sends nothing: once its objects match what it wants, a reconcile of an
//! operand whose spec did not change reads and writes nothing, as the API server's own request
//! counts show.

use std::{collections::BTreeMap, time::Duration};

use crate::{
    common::{kubectl::Kubectl, operator::Operator, wait::wait_for},
    manifests::{Crd, Sample},
    on_cluster::SETTLE,
};

/// What an operand's reconcile can send about its objects, by (verb, resource, subresource):
/// no other client of the control plane here reads them one by one or applies them (the
/// kube-controller-manager watches them and updates their status with PUT).
type Requests = BTreeMap<(String, String, String), u64>;

/// What an operand's reconcile makes: the PodDisruptionBudgets too, as the samples are
/// scaled to two replicas before (the disruption controller writes their status with PUT).
const OWNED: [&str; 4] = [
    "deployments",
    "statefulsets",
    "services",
    "poddisruptionbudgets",
];

/// Pokes every operand sample (an annotation: a watch event, no new generation), waits until
/// `operator` has reconciled each, and checks that the API server received no read and no
/// apply of the workloads, Services or statuses meanwhile.
pub fn check(
    kubectl: &Kubectl,
    operator: &Operator,
    namespace: &str,
    operands: &[(&Crd, &Sample)],
) {
    let resources: Vec<&str> = OWNED
        .into_iter()
        .chain(operands.iter().map(|(crd, _)| crd.plural.as_str()))
        .collect();
    let counts = || operator_requests(kubectl, &resources);
    // Settled: what the earlier steps changed has been reconciled.
    let mut before = counts();
    wait_for("the operator to settle", SETTLE, || {
        std::thread::sleep(Duration::from_secs(3));
        let now = counts();
        if now == before {
            Ok(())
        } else {
            before = now;
            Err(format!("still sending: {before:?}"))
        }
    });
    let reconciled: u64 = operator.reconciliations().values().sum();

    for (crd, sample) in operands {
        let poke = format!("e2e.opgen.io/poked={reconciled}");
        let resource = format!("{}/{}", crd.name, sample.name);
        kubectl.ok(&["annotate", &resource, &poke, "--overwrite", "-n", namespace]);
    }
    let wanted = reconciled + operands.len() as u64;
    wait_for("a reconcile of each poked operand", SETTLE, || {
        let now: u64 = operator.reconciliations().values().sum();
        if now >= wanted {
            Ok(())
        } else {
            Err(format!("{now} reconciles, waiting for {wanted}"))
        }
    });
    // A request of the last reconcile may still be on its way.
    std::thread::sleep(Duration::from_secs(2));

    let after = counts();
    let sent: Vec<String> = after
        .iter()
        .filter(|(series, count)| before.get(*series) != Some(count))
        .map(|((verb, resource, subresource), count)| {
            let was = before.get(&(verb.clone(), resource.clone(), subresource.clone()));
            format!(
                "{verb} {resource}/{subresource}: {} more",
                count - was.unwrap_or(&0)
            )
        })
        .collect();
    assert!(
        sent.is_empty(),
        "steady reconciles of unchanged operands sent requests: {sent:?}"
    );
}

/// `apiserver_request_total` summed by (verb, resource, subresource), for the reads of single
/// objects and the writes an operand's reconcile makes, of `resources`.
fn operator_requests(kubectl: &Kubectl, resources: &[&str]) -> Requests {
    let metrics = kubectl.ok(&["get", "--raw", "/metrics"]);
    let mut counts = Requests::new();
    for line in metrics.lines() {
        let Some(rest) = line.strip_prefix("apiserver_request_total{") else {
            continue;
        };
        let Some((labels, value)) = rest.rsplit_once("} ") else {
            continue;
        };
        let label = |name: &str| {
            labels
                .split(',')
                .find_map(|pair| pair.strip_prefix(&format!("{name}=\"")))
                .and_then(|value| value.strip_suffix('"'))
                .unwrap_or_default()
                .to_owned()
        };
        let (verb, resource) = (label("verb"), label("resource"));
        if !resources.contains(&resource.as_str())
            || !["GET", "APPLY", "PATCH", "POST"].contains(&verb.as_str())
        {
            continue;
        }
        // The custom objects themselves: the test's own `kubectl annotate` reads and patches
        // them; a reconcile writes their status only.
        let subresource = label("subresource");
        let owned = OWNED.contains(&resource.as_str());
        if !owned && subresource != "status" {
            continue;
        }
        let value: f64 = value
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("bad sample: {line}"));
        *counts.entry((verb, resource, subresource)).or_default() += value as u64;
    }
    counts
}
