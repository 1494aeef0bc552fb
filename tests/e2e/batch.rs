//! Job and CronJob operands (`create api --workload job|cronjob`) on the control plane. No
//! kubelet runs there, so the test plays its part: it writes the phase of the Job's pod as an
//! administrator, and kube-controller-manager's Job controller takes it from there.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{
    common::{kubectl::Kubectl, wait::wait_for},
    manifests::{Crd, Sample},
    on_cluster::{SETTLE, Setup, check_owned, condition, wait_for_event},
};

/// Whether `sample` is of a kind that runs to completion: a Job (or CronJob) operand.
pub fn runs_to_completion(sample: &Sample) -> bool {
    sample.object["spec"]["backoffLimit"].is_number()
}

/// The checks of a Job or CronJob operand, which end with its deletion.
pub fn check(kubectl: &Kubectl, setup: &Setup, crd: &Crd, sample: &Sample) {
    if sample.object["spec"]["schedule"].is_string() {
        check_cronjob(kubectl, setup, crd, sample);
    } else {
        check_job(kubectl, setup, crd, sample);
    }
}

/// `kubectl patch <crd> <name> --type=merge -p <patch>`.
fn patch(kubectl: &Kubectl, namespace: &str, what: &str, name: &str, patch: &Value) {
    let patch = patch.to_string();
    kubectl.ok(&[
        "patch",
        what,
        name,
        "-n",
        namespace,
        "--type=merge",
        "-p",
        &patch,
    ]);
}

/// The object's status once `accept` is content with it.
fn wait_for_status(
    kubectl: &Kubectl,
    namespace: &str,
    crd: &Crd,
    name: &str,
    what: &str,
    accept: impl Fn(&Value) -> bool,
) -> Value {
    wait_for(&format!("{name} {what}"), SETTLE, || {
        let object = kubectl.try_json(&["get", &crd.name, name, "-n", namespace])?;
        match accept(&object) {
            true => Ok(object),
            false => Err(format!("status: {}", object["status"])),
        }
    })
}

/// Whether the condition `type_` of `object` has `status` (and `reason`, if given).
fn has_condition(object: &Value, type_: &str, status: &str, reason: Option<&str>) -> bool {
    condition(object, type_)
        .is_some_and(|c| c["status"] == status && reason.is_none_or(|reason| c["reason"] == reason))
}

/// Plays the kubelet: the Job's pod (once its controller made it) ends in `phase`.
fn end_pod(kubectl: &Kubectl, namespace: &str, job: &str, phase: &str) {
    let selector = format!("batch.kubernetes.io/job-name={job}");
    let pod = wait_for(&format!("a pod of the Job {job}"), SETTLE, || {
        let pods = kubectl.try_json(&["get", "pods", "-l", &selector, "-n", namespace])?;
        pods["items"][0]["metadata"]["name"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| "no pod yet".to_owned())
    });
    let status = json!({"status": {"phase": phase}}).to_string();
    kubectl.ok(&[
        "patch",
        "pod",
        &pod,
        "-n",
        namespace,
        "--subresource=status",
        "--type=merge",
        "-p",
        &status,
    ]);
}

/// The Job of `name`, owned by it, with the object's run reported as it goes.
fn check_job(kubectl: &Kubectl, setup: &Setup, crd: &Crd, sample: &Sample) {
    let namespace = setup.namespace();
    let name = &sample.name;
    let job = wait_for(&format!("the Job of {name}"), SETTLE, || {
        kubectl.try_json(&["get", "job", name, "-n", &namespace])
    });
    let owner = kubectl.json(&["get", &crd.name, name, "-n", &namespace]);
    check_owned(setup, &job, &owner);
    wait_for_event(kubectl, crd, name, "Created");

    // Succeeded: the pod succeeds, the Job completes, the object says so with the time.
    end_pod(kubectl, &namespace, name, "Succeeded");
    let object = wait_for_status(kubectl, &namespace, crd, name, "Succeeded", |o| {
        o["status"]["phase"] == "Succeeded"
            && o["status"]["completionTime"].is_string()
            && has_condition(o, "Complete", "True", None)
    });
    assert_eq!(object["status"]["attempts"], 1, "{}", object["status"]);

    // A spec change afterwards: reported, and no second Job.
    let image = json!({"spec": {"image": "registry.example/e2e/backup:2"}});
    patch(kubectl, &namespace, &crd.name, name, &image);
    wait_for_status(kubectl, &namespace, crd, name, "Outdated", |o| {
        has_condition(o, "Outdated", "True", Some("JobImmutable"))
            && o["status"]["observedGeneration"] == o["metadata"]["generation"]
    });
    wait_for_event(kubectl, crd, name, "Outdated");
    let selector = format!("app.kubernetes.io/instance={name}");
    let jobs = kubectl.json(&["get", "jobs", "-l", &selector, "-n", &namespace]);
    assert_eq!(jobs["items"].as_array().map(Vec::len), Some(1), "{jobs}");

    // Failed: a Job that may not retry fails with the pod, and the object says why.
    let failing = format!("{name}-failing");
    let mut object = sample.object.clone();
    object["metadata"]["name"] = json!(failing);
    object["spec"]["backoffLimit"] = json!(0);
    kubectl
        .apply(&object.to_string(), &["-n", &namespace])
        .unwrap_or_else(|err| panic!("{err}"));
    end_pod(kubectl, &namespace, &failing, "Failed");
    wait_for_status(kubectl, &namespace, crd, &failing, "Failed", |o| {
        o["status"]["phase"] == "Failed"
            && has_condition(o, "Failed", "True", Some("BackoffLimitExceeded"))
    });
    wait_for_event(kubectl, crd, &failing, "Failed");

    for name in [name.as_str(), &failing] {
        delete_and_collect(kubectl, &namespace, crd, name, "job");
    }
    check_reference(kubectl, &namespace, crd, sample, "job");
}

/// How soon a waiting object gets its Job (or its CronJob resumed) once the object it
/// references exists: what the watch of the referenced kind takes, far below any requeue the
/// controller could make.
const REFERENCE_FOUND: Duration = Duration::from_secs(10);

/// A Job or CronJob operand (`child`: `job` or `cronjob`) that references another kind
/// (`--references`): an object naming a missing one reports `ReferenceNotFound` and gets no
/// Job, or a suspended CronJob; once that object is created, it gets its Job, or its CronJob
/// resumed, within seconds, brought back by the watch of the referenced kind, with the
/// object's address in the environment of the Job's pods.
fn check_reference(kubectl: &Kubectl, namespace: &str, crd: &Crd, sample: &Sample, child: &str) {
    let spec = sample.object["spec"].as_object().expect("a spec");
    let Some((field, reference)) = spec
        .iter()
        .find(|(field, value)| field.ends_with("Ref") && value["name"].is_string())
    else {
        return;
    };
    // `postgresClusterRef` names a `postgrescluster`, the referenced kind's singular name.
    let referenced_kind = field.trim_end_matches("Ref").to_lowercase();
    let existing = kubectl.json(&[
        "get",
        &referenced_kind,
        reference["name"].as_str().unwrap(),
        "-n",
        namespace,
    ]);
    let waiting = format!("{}-waiting", sample.name);
    let later = format!("{}-later", reference["name"].as_str().unwrap());
    let mut object = sample.object.clone();
    object["metadata"]["name"] = json!(waiting);
    object["spec"][field] = json!({ "name": later });
    kubectl
        .apply(&object.to_string(), &["-n", namespace])
        .unwrap_or_else(|err| panic!("{err}"));
    let object = wait_for_status(
        kubectl,
        namespace,
        crd,
        &waiting,
        "ReferenceNotFound",
        |o| has_condition(o, "Referenced", "False", Some("ReferenceNotFound")),
    );
    let suspended = |cronjob: &Value| cronjob["spec"]["suspend"].as_bool() == Some(true);
    if child == "cronjob" {
        // Made, but suspended: no Job starts that could not reach the object, and the status
        // says so.
        let cronjob = wait_for(
            &format!("the suspended CronJob of {waiting}"),
            SETTLE,
            || {
                let cronjob = kubectl.try_json(&["get", "cronjob", &waiting, "-n", namespace])?;
                match suspended(&cronjob) {
                    true => Ok(cronjob),
                    false => Err(format!("suspend: {}", cronjob["spec"]["suspend"])),
                }
            },
        );
        assert!(
            pod_env(&cronjob["spec"]["jobTemplate"]["spec"]).is_empty(),
            "{waiting}: an address before the object exists: {cronjob}"
        );
        let message = condition(&object, "Referenced").expect("Referenced")["message"].clone();
        assert!(
            message
                .as_str()
                .is_some_and(|m| m.contains("the CronJob is suspended")),
            "{message}"
        );
        wait_for_status(kubectl, namespace, crd, &waiting, "Scheduled False", |o| {
            has_condition(o, "Scheduled", "False", Some("ReferenceNotFound"))
        });
    } else {
        assert!(
            kubectl
                .try_json(&["get", "job", &waiting, "-n", namespace])
                .is_err(),
            "{waiting} got a Job before the object it references exists"
        );
    }

    let referenced = json!({
        "apiVersion": existing["apiVersion"],
        "kind": existing["kind"],
        "metadata": { "name": later },
        "spec": existing["spec"],
    });
    kubectl
        .apply(&referenced.to_string(), &["-n", namespace])
        .unwrap_or_else(|err| panic!("{err}"));
    let created = Instant::now();
    let job_spec = match child {
        "cronjob" => {
            let cronjob = wait_for(
                &format!("the CronJob of {waiting} resumed once {later} exists"),
                REFERENCE_FOUND,
                || {
                    let cronjob =
                        kubectl.try_json(&["get", "cronjob", &waiting, "-n", namespace])?;
                    match suspended(&cronjob) {
                        false => Ok(cronjob),
                        true => Err("still suspended".to_owned()),
                    }
                },
            );
            cronjob["spec"]["jobTemplate"]["spec"].clone()
        }
        _ => {
            let job = wait_for(
                &format!("the Job of {waiting} once {later} exists"),
                REFERENCE_FOUND,
                || kubectl.try_json(&["get", "job", &waiting, "-n", namespace]),
            );
            job["spec"].clone()
        }
    };
    // The referenced object's name, and its Service's address (an operand with a port), as
    // `<KIND>_NAME`, `<KIND>_HOST` and `<KIND>_PORT`.
    let env = pod_env(&job_spec);
    let host = env
        .iter()
        .find(|(name, _)| name.ends_with("_HOST"))
        .unwrap_or_else(|| panic!("no <KIND>_HOST in the Job's environment: {env:?}"));
    let prefix = host.0.trim_end_matches("_HOST");
    let value = |suffix: &str| {
        let name = format!("{prefix}{suffix}");
        env.iter()
            .find(|(var, _)| *var == name)
            .map(|(_, value)| value.as_str())
            .unwrap_or_else(|| panic!("no {name} in the Job's environment: {env:?}"))
    };
    assert_eq!(host.1, format!("{later}.{namespace}.svc"), "{env:?}");
    assert_eq!(value("_NAME"), later, "{env:?}");
    assert!(value("_PORT").parse::<u16>().is_ok(), "{env:?}");
    wait_for_status(kubectl, namespace, crd, &waiting, "Referenced", |o| {
        has_condition(o, "Referenced", "True", None)
    });
    println!(
        "[e2e] {waiting}: its {child} {:.1?} after {later} was created",
        created.elapsed()
    );
    if child == "cronjob" {
        wait_for_event(kubectl, crd, &waiting, "Resumed");
        wait_for_status(kubectl, namespace, crd, &waiting, "on schedule", |o| {
            has_condition(o, "Scheduled", "True", Some("OnSchedule"))
        });
    }
    delete_and_collect(kubectl, namespace, crd, &waiting, child);
    kubectl.ok(&[
        "delete",
        &referenced_kind,
        &later,
        "-n",
        namespace,
        "--wait",
    ]);
}

/// The CronJob of `name` on its schedule, suspended on demand; a schedule that is not cron
/// is refused; then, for a kind with a reference, [`check_reference`].
fn check_cronjob(kubectl: &Kubectl, setup: &Setup, crd: &Crd, sample: &Sample) {
    let namespace = setup.namespace();
    let name = &sample.name;
    let cronjob = wait_for(&format!("the CronJob of {name}"), SETTLE, || {
        kubectl.try_json(&["get", "cronjob", name, "-n", &namespace])
    });
    let owner = kubectl.json(&["get", &crd.name, name, "-n", &namespace]);
    check_owned(setup, &cronjob, &owner);
    assert_eq!(
        cronjob["spec"]["schedule"],
        sample.object["spec"]["schedule"]
    );
    wait_for_event(kubectl, crd, name, "Created");
    wait_for_status(kubectl, &namespace, crd, name, "on schedule", |o| {
        has_condition(o, "Scheduled", "True", Some("OnSchedule"))
    });

    patch(
        kubectl,
        &namespace,
        &crd.name,
        name,
        &json!({"spec": {"suspend": true}}),
    );
    wait_for(&format!("the CronJob of {name} suspended"), SETTLE, || {
        let cronjob = kubectl.try_json(&["get", "cronjob", name, "-n", &namespace])?;
        match cronjob["spec"]["suspend"].as_bool() {
            Some(true) => Ok(()),
            other => Err(format!("suspend: {other:?}")),
        }
    });
    wait_for_status(kubectl, &namespace, crd, name, "suspended", |o| {
        has_condition(o, "Scheduled", "False", Some("Suspended"))
    });
    wait_for_event(kubectl, crd, name, "Suspended");

    let mut invalid = sample.object.clone();
    invalid["metadata"]["name"] = json!("invalid-schedule");
    invalid["spec"]["schedule"] = json!("every day");
    let refused = kubectl
        .apply(&invalid.to_string(), &["-n", &namespace])
        .expect_err("a schedule that is not cron accepted");
    assert!(
        refused.contains("spec.schedule must be five cron fields"),
        "{refused}"
    );

    delete_and_collect(kubectl, &namespace, crd, name, "cronjob");
    check_reference(kubectl, &namespace, crd, sample, "cronjob");
}

/// The environment variables (name, value) of the first container of the pods of `job_spec`
/// (a Job's spec, or a CronJob's `jobTemplate.spec`).
fn pod_env(job_spec: &Value) -> Vec<(String, String)> {
    job_spec["template"]["spec"]["containers"][0]["env"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|var| {
            Some((
                var["name"].as_str()?.to_owned(),
                var["value"].as_str()?.to_owned(),
            ))
        })
        .collect()
}

/// Deletes `name`; Kubernetes' garbage collector deletes its `child` (`job` or `cronjob`).
fn delete_and_collect(kubectl: &Kubectl, namespace: &str, crd: &Crd, name: &str, child: &str) {
    kubectl.ok(&["delete", &crd.name, name, "-n", namespace]);
    // It learns of a new kind by rediscovering the API every 30 seconds.
    wait_for(
        &format!("the garbage collector to delete the {child} {name}"),
        SETTLE * 2,
        || match kubectl.try_ok(&["get", child, name, "-n", namespace]) {
            Ok(found) => Err(format!("still there: {found}")),
            Err(_) => Ok(()),
        },
    );
}
