//! The values an operand kind's templates see (`create api --image`): its application, as the
//! workload's controller, types and sample print it.

use serde::Serialize;

use super::rust;
use crate::model::{Operand, SampleEnv, Workload, WritableDir};

/// An operand kind's application (see `model::Operand` and `model::KnownImage`).
#[derive(Debug, Serialize)]
pub struct OperandValues {
    /// The default image: `mysql:8.0`.
    pub image: String,
    /// `Deployment` or `StatefulSet`, as Kubernetes spells the kind.
    pub workload: &'static str,
    /// `deployments` or `statefulsets`, as RBAC rules name them.
    pub workload_resource: &'static str,
    /// The workload as `--workload` names it: `cronjob`.
    pub workload_flag: &'static str,
    pub statefulset: bool,
    /// The workload is a CronJob (the batch templates serve a Job and a CronJob).
    pub cronjob: bool,
    pub port: Option<u16>,
    /// The kind has a `spec.autoscaling`, and its controller a HorizontalPodAutoscaler.
    pub autoscale: bool,
    /// The UID the pods run as: `--run-as-user`, else the known image's user; absent for an
    /// unknown image without `--run-as-user`, whose own user then applies.
    pub run_as_user: Option<i64>,
    /// The GID the pods run as, which also owns the persistent volume (`fsGroup`); present
    /// exactly when `run_as_user` is.
    pub run_as_group: Option<i64>,
    pub command: Vec<String>,
    /// The arguments of `command` as Rust string literals, quotes included.
    pub command_literals: Vec<String>,
    /// The longest name of an object of the kind, and of its workload.
    pub name_max: usize,
    /// How many characters may stand between the first and the last of a name:
    /// `name_max - 2`, for the name's regular expression.
    pub name_middle_max: usize,
    /// The image's name without registry, path, tag or digest (`mysql`): the pods'
    /// `app.kubernetes.io/component`.
    pub component: String,
    /// Where a StatefulSet mounts each pod's persistent volume: the image's data directory,
    /// else `/data`.
    pub data_dir: String,
    /// The emptyDir volumes of the pods, `/tmp` first: every directory the image writes to,
    /// since the root filesystem is read-only. On a Deployment this includes the known
    /// image's data directory (see `ephemeral_data_dir`).
    pub scratch_dirs: Vec<WritableDirValues>,
    /// The known image's data directory when it is an emptyDir (on a Deployment), so its data
    /// lasts only as long as the pod.
    pub ephemeral_data_dir: Option<String>,
    /// Environment variables the sample object needs for the image to start.
    pub sample_env: Vec<SampleEnvValues>,
    /// What the workload runs, in words: `a StatefulSet, behind a Service`.
    pub runs_as: String,
    /// `RUN_AS_USER` and `RUN_AS_GROUP` as Rust: `Some(999)` or `None`.
    pub run_as_user_literal: String,
    pub run_as_group_literal: String,
    /// The types of `k8s_openapi::api::core::v1` the controller names.
    pub core_types: Vec<&'static str>,
    /// What the controller takes from `kube` and from `crate::runtime` beyond what every
    /// controller of its workload does.
    pub kube_uses: Vec<&'static str>,
    pub runtime_uses: Vec<&'static str>,
    /// The names of the tests whose subject depends on the flags.
    pub tests: TestNames,
    /// The templates of the kind's types, sample, controller and integration test.
    #[serde(skip)]
    pub templates: OperandTemplates,
}

/// The templates of an operand kind's files, by its workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OperandTemplates {
    pub types: &'static str,
    pub sample: &'static str,
    pub controller: &'static str,
    pub integration_test: &'static str,
}

/// The templates of the kinds whose pods serve (a Deployment or a StatefulSet), with the
/// workload's controller.
const fn serving(controller: &'static str) -> OperandTemplates {
    OperandTemplates {
        types: "resource/operand/types.rs",
        sample: "resource/operand/sample.yaml",
        controller,
        integration_test: "resource/operand/integration_test.rs",
    }
}

/// The templates of the kinds whose pods run to completion (a Job or a CronJob).
const fn batch(controller: &'static str) -> OperandTemplates {
    OperandTemplates {
        types: "resource/operand/batch/types.rs",
        sample: "resource/operand/batch/sample.yaml",
        controller,
        integration_test: "resource/operand/batch/integration_test.rs",
    }
}

/// Names of the scaffolded tests that say what the flags chose.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct TestNames {
    /// A Deployment's container test: the command it runs, or the image's entrypoint.
    pub container: &'static str,
    /// A Deployment's first-reconcile test: what it applies.
    pub new_object: &'static str,
    /// The integration test.
    pub integration: &'static str,
}

/// What a workload's controller is made of, beyond the values every workload shares. A new
/// workload is a template and an arm of [`WorkloadController::of`].
struct WorkloadController {
    templates: OperandTemplates,
    /// The types of `k8s_openapi::api::core::v1` it names without a Service.
    core_types: &'static [&'static str],
    /// What its Service, when it has one, takes from `kube`.
    service_kube_uses: &'static [&'static str],
}

impl WorkloadController {
    fn of(workload: Workload) -> Self {
        match workload {
            Workload::Deployment => Self {
                templates: serving("resource/operand/controller/deployment.rs"),
                core_types: &["Container"],
                service_kube_uses: &[],
            },
            Workload::StatefulSet => Self {
                templates: serving("resource/operand/controller/statefulset.rs"),
                core_types: &[
                    "Container",
                    "PersistentVolumeClaim",
                    "PersistentVolumeClaimSpec",
                    "VolumeMount",
                    "VolumeResourceRequirements",
                ],
                // The Service governs the StatefulSet by the name of its object.
                service_kube_uses: &["ResourceExt as _"],
            },
            // No Service: `--port` is refused for pods that run to completion.
            Workload::Job => Self {
                templates: batch("resource/operand/controller/job.rs"),
                core_types: &["Container"],
                service_kube_uses: &[],
            },
            Workload::CronJob => Self {
                templates: batch("resource/operand/controller/cronjob.rs"),
                core_types: &["Container"],
                service_kube_uses: &[],
            },
        }
    }
}

/// `value` as a Rust `Option<i64>`.
fn option_literal(value: Option<i64>) -> String {
    value.map_or_else(|| "None".to_owned(), |value| format!("Some({value})"))
}

/// A volume of the pods and where it is mounted.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct WritableDirValues {
    pub volume: String,
    pub path: String,
}

/// An environment variable of the sample object, with its comment, one line per item.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct SampleEnvValues {
    pub name: String,
    pub value: String,
    pub comment: Vec<String>,
}

/// The data directory of an image opgen does not know: a StatefulSet mounts its volume there.
const DEFAULT_DATA_DIR: &str = "/data";

impl OperandValues {
    pub fn new(operand: &Operand) -> Self {
        let known = operand.known_image();
        let statefulset = operand.workload == Workload::StatefulSet;
        let known_data_dir = known.and_then(|k| k.data_dir);
        let ephemeral_data_dir = known_data_dir.filter(|_| !statefulset);
        let tmp = WritableDir {
            volume: "tmp",
            path: "/tmp",
        };
        let data = ephemeral_data_dir.map(|path| WritableDir {
            volume: "data",
            path,
        });
        let scratch_dirs = std::iter::once(&tmp)
            .chain(known.map_or(&[][..], |k| k.scratch_dirs))
            .chain(data.as_ref())
            .map(|dir| WritableDirValues {
                volume: dir.volume.to_owned(),
                path: dir.path.to_owned(),
            })
            .collect();
        let run_as = operand.run_as();
        let name_max = operand.workload.max_name_len();
        let controller = WorkloadController::of(operand.workload);
        let service = operand.port.is_some();
        let mut core_types = controller.core_types.to_vec();
        let (mut kube_uses, mut runtime_uses) = (Vec::new(), Vec::new());
        if service {
            core_types.push("Service");
            kube_uses.extend(controller.service_kube_uses);
            runtime_uses.push("operand::serving");
        }
        if operand.autoscale {
            runtime_uses.push("operand::Autoscaling");
        }
        let runs_as = match service {
            true => format!("a {}, behind a Service", operand.workload.kind()),
            false => format!("a {}", operand.workload.kind()),
        };
        let tests = TestNames {
            container: match operand.command.is_empty() {
                true => "the_container_runs_the_spec_with_the_image_entrypoint",
                false => "the_container_runs_the_spec_with_the_command",
            },
            new_object: match service {
                true => "a_new_object_gets_a_service_and_a_deployment_then_a_status",
                false => "a_new_object_gets_a_deployment_then_a_status",
            },
            integration: match service {
                true => "runs_behind_a_service_and_scales",
                false => "runs_and_scales",
            },
        };
        Self {
            image: operand.image.to_string(),
            workload: operand.workload.kind(),
            workload_resource: operand.workload.resource(),
            workload_flag: operand.workload.flag(),
            statefulset,
            cronjob: operand.workload == Workload::CronJob,
            port: operand.port,
            autoscale: operand.autoscale,
            run_as_user: run_as.map(|r| r.user.get()),
            run_as_group: run_as.map(|r| r.group.get()),
            command: operand.command.clone(),
            command_literals: operand
                .command
                .iter()
                .map(|argument| rust::string_literal(argument))
                .collect(),
            name_max,
            name_middle_max: name_max - 2,
            component: operand.image.component().to_owned(),
            data_dir: known_data_dir.unwrap_or(DEFAULT_DATA_DIR).to_owned(),
            scratch_dirs,
            ephemeral_data_dir: ephemeral_data_dir.map(str::to_owned),
            sample_env: known
                .map_or(&[][..], |k| k.sample_env)
                .iter()
                .map(SampleEnvValues::new)
                .collect(),
            runs_as,
            run_as_user_literal: option_literal(run_as.map(|r| r.user.get())),
            run_as_group_literal: option_literal(run_as.map(|r| r.group.get())),
            core_types,
            kube_uses,
            runtime_uses,
            tests,
            templates: controller.templates,
        }
    }
}

impl SampleEnvValues {
    fn new(env: &SampleEnv) -> Self {
        Self {
            name: env.name.to_owned(),
            value: env.value.to_owned(),
            comment: env.why.iter().map(|line| (*line).to_owned()).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn operand_values(image: &str, workload: Workload, run_as_user: Option<i64>) -> OperandValues {
        OperandValues::new(&Operand {
            image: image.parse().unwrap(),
            workload,
            port: None,
            run_as_user: run_as_user.map(|uid| uid.try_into().unwrap()),
            command: Vec::new(),
            references: None,
            autoscale: false,
        })
    }

    fn dirs(values: &OperandValues) -> Vec<(&str, &str)> {
        values
            .scratch_dirs
            .iter()
            .map(|d| (d.volume.as_str(), d.path.as_str()))
            .collect()
    }

    #[test]
    fn a_known_image_on_a_statefulset_keeps_its_data_on_the_volume() {
        let values = operand_values("docker.io/library/mysql:8.0", Workload::StatefulSet, None);
        assert_eq!(values.component, "mysql");
        assert_eq!(values.data_dir, "/var/lib/mysql");
        assert_eq!(dirs(&values), [("tmp", "/tmp"), ("run", "/var/run/mysqld")]);
        assert_eq!(values.ephemeral_data_dir, None);
        assert_eq!(
            (values.run_as_user, values.run_as_group),
            (Some(999), Some(999))
        );
        assert_eq!(
            values
                .sample_env
                .iter()
                .map(|e| e.name.as_str())
                .collect::<Vec<_>>(),
            ["MYSQL_RANDOM_ROOT_PASSWORD"]
        );
        assert!(!values.sample_env[0].comment.is_empty());
    }

    #[test]
    fn a_known_image_on_a_deployment_keeps_its_data_in_an_empty_dir() {
        let values = operand_values("postgres:17-alpine", Workload::Deployment, None);
        assert_eq!(
            dirs(&values),
            [
                ("tmp", "/tmp"),
                ("run", "/var/run/postgresql"),
                ("data", "/var/lib/postgresql")
            ]
        );
        assert_eq!(
            values.ephemeral_data_dir.as_deref(),
            Some("/var/lib/postgresql")
        );
        assert_eq!(
            (values.run_as_user, values.run_as_group),
            (Some(70), Some(70))
        );
    }

    #[test]
    fn rust_literals_and_name_limits_are_prepared() {
        let values = OperandValues::new(&Operand {
            image: "memcached:1.6".parse().unwrap(),
            workload: Workload::StatefulSet,
            port: None,
            run_as_user: None,
            command: vec!["memcached".into(), "say \"hi\"\n".into()],
            references: None,
            autoscale: false,
        });
        assert_eq!(
            values.command_literals,
            [r#""memcached""#, r#""say \"hi\"\n""#]
        );
        assert_eq!((values.name_max, values.name_middle_max), (52, 50));
        assert_eq!(values.workload, "StatefulSet");
        assert_eq!(values.workload_resource, "statefulsets");
    }

    #[test]
    fn an_unknown_image_gets_defaults_and_its_own_user() {
        let values = operand_values("ghcr.io/org/app:v1", Workload::StatefulSet, None);
        assert_eq!(values.component, "app");
        assert_eq!(values.data_dir, "/data");
        assert_eq!(dirs(&values), [("tmp", "/tmp")]);
        assert_eq!((values.run_as_user, values.run_as_group), (None, None));
        assert!(values.sample_env.is_empty());

        let values = operand_values("ghcr.io/org/app:v1", Workload::Deployment, Some(1000));
        assert_eq!(values.ephemeral_data_dir, None);
        assert_eq!(
            (values.run_as_user, values.run_as_group),
            (Some(1000), Some(1000))
        );
    }

    #[test]
    fn every_workload_has_its_own_controller_template() {
        use clap::ValueEnum as _;
        let mut seen = Vec::new();
        for workload in Workload::value_variants() {
            let templates = WorkloadController::of(*workload).templates;
            let OperandTemplates {
                types,
                sample,
                controller,
                integration_test,
            } = templates;
            for template in [types, sample, controller, integration_test] {
                assert!(
                    crate::templates::builtin_source(template).is_some(),
                    "{template}"
                );
            }
            assert!(
                !seen.contains(&controller),
                "{controller} serves two workloads"
            );
            seen.push(controller);
        }
        let job = WorkloadController::of(Workload::Job).templates;
        assert_eq!(job.types, "resource/operand/batch/types.rs");
        assert_eq!(
            WorkloadController::of(Workload::CronJob).templates.sample,
            job.sample
        );
    }

    #[test]
    fn a_service_adds_its_imports_and_names_its_tests() {
        let mut operand = Operand {
            image: "mysql:8.0".parse().unwrap(),
            workload: Workload::StatefulSet,
            port: Some(3306),
            run_as_user: None,
            command: vec!["mysqld".into()],
            references: None,
            autoscale: false,
        };
        let values = OperandValues::new(&operand);
        assert_eq!(values.runs_as, "a StatefulSet, behind a Service");
        assert!(values.core_types.contains(&"Service"));
        assert_eq!(values.kube_uses, ["ResourceExt as _"]);
        assert_eq!(values.runtime_uses, ["operand::serving"]);
        assert_eq!(values.tests.integration, "runs_behind_a_service_and_scales");
        assert_eq!(
            (
                values.run_as_user_literal.as_str(),
                values.run_as_group_literal.as_str()
            ),
            ("Some(999)", "Some(999)")
        );

        operand.workload = Workload::Deployment;
        operand.port = None;
        operand.image = "ghcr.io/org/app:v1".parse().unwrap();
        let values = OperandValues::new(&operand);
        assert_eq!(values.runs_as, "a Deployment");
        assert_eq!(values.core_types, ["Container"]);
        assert!(values.kube_uses.is_empty() && values.runtime_uses.is_empty());
        assert_eq!(
            values.tests,
            TestNames {
                container: "the_container_runs_the_spec_with_the_command",
                new_object: "a_new_object_gets_a_deployment_then_a_status",
                integration: "runs_and_scales",
            }
        );
        assert_eq!(values.run_as_user_literal, "None");

        operand.autoscale = true;
        let values = OperandValues::new(&operand);
        assert!(values.autoscale);
        assert_eq!(values.runtime_uses, ["operand::Autoscaling"]);
    }
}
