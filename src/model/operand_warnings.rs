//! What opgen tells of an operand it scaffolds but cannot vouch for, from its table of known
//! images: its pods run as a non-root number, with no capabilities and a read-only root
//! filesystem, which not every image supports.

use super::{KnownImage, Operand};

impl Operand {
    /// The warnings `create api --image` prints, each with its way out; `controller_file`
    /// is where the pods' user is set.
    pub fn warnings(&self, controller_file: &str) -> Vec<String> {
        let operand = self;
        let image = &operand.image;
        let Some(known) = operand.known_image() else {
            if operand.run_as().is_some() {
                return Vec::new();
            }
            return vec![format!(
                "opgen does not know which user `{image}` runs as. Its pods run with `runAsNonRoot`, so the kubelet refuses to start them if the image runs as root, or names its user rather than giving a number\n\nIf it does, set RUN_AS_USER and RUN_AS_GROUP in {controller_file} to a non-root user the image supports (`create api --run-as-user <UID>` sets them)"
            )];
        };
        let mut warnings = Vec::new();
        let repository = known.repository;
        if let Some(needs_root) = &known.needs_root {
            let instead = KnownImage::by_repository(needs_root.instead)
                .expect("the table names its own entries (tested)");
            warnings.push(format!(
                "`{repository}` does not run in the pods opgen scaffolds: {}\n\nUse `{}` instead, which listens on {} as UID {}: --image {}:<tag> --port {}",
                needs_root.why,
                instead.repository,
                instead.port,
                instead.user.uid,
                instead.repository,
                instead.port
            ));
        }
        let image_user = known.user_of(image);
        if let Some(uid) = operand.run_as_user.filter(|uid| *uid != image_user.uid()) {
            warnings.push(format!(
                "--run-as-user {uid} differs from the user of `{repository}`, `{}` (UID {}, GID {}): the pods run as {uid}, so the image must work as that user although its files belong to {}\n\nDrop --run-as-user to run as {}",
                image_user.name, image_user.uid, image_user.gid, image_user.uid, image_user.uid
            ));
        }
        if let Some(port) = operand.port.filter(|port| *port != known.port) {
            warnings.push(format!(
                "`{repository}` listens on port {}, not {port}: configure it to listen on {port}, or its readiness probe fails and the Service reaches nothing",
                known.port
            ));
        }
        warnings
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Workload;

    fn warnings(image: &str, port: Option<u16>, run_as_user: Option<i64>) -> Vec<String> {
        let operand = Operand {
            image: image.parse().unwrap(),
            workload: Workload::Deployment,
            port,
            run_as_user: run_as_user.map(|uid| uid.try_into().unwrap()),
            command: Vec::new(),
            references: None,
            autoscale: false,
        };
        operand.warnings("src/controllers/web/site.rs")
    }

    #[test]
    fn a_known_image_run_as_published_needs_no_warning() {
        assert!(warnings("mysql:8.0", Some(3306), None).is_empty());
        assert!(warnings("mysql:8.0", None, Some(999)).is_empty());
        assert!(warnings("redis:7-alpine", Some(6379), Some(999)).is_empty());
    }

    #[test]
    fn an_unknown_image_without_a_uid_is_warned_of_and_told_the_fix() {
        let warning = one_warning("ghcr.io/org/app:v1", None, None);
        for needle in [
            "`ghcr.io/org/app:v1`",
            "runAsNonRoot",
            "--run-as-user",
            "RUN_AS_GROUP in src/controllers/web/site.rs",
        ] {
            assert!(warning.contains(needle), "{needle}: {warning}");
        }
        assert!(warnings("ghcr.io/org/app:v1", None, Some(1000)).is_empty());
    }

    /// The one warning about an operand.
    fn one_warning(image: &str, port: Option<u16>, run_as_user: Option<i64>) -> String {
        let mut found = warnings(image, port, run_as_user);
        assert_eq!(found.len(), 1, "{found:?}");
        found.remove(0)
    }

    #[test]
    fn a_uid_that_contradicts_a_known_image_is_said() {
        let warning = one_warning("mysql:8.0", None, Some(1000));
        let expected = "--run-as-user 1000 differs from the user of `mysql`, `mysql` (UID 999";
        assert!(warning.contains(expected), "{warning}");
    }

    #[test]
    fn nginx_is_pointed_to_its_unprivileged_variant() {
        let warning = one_warning("nginx:1.27", Some(80), None);
        let expected = "--image nginxinc/nginx-unprivileged:<tag> --port 8080";
        assert!(warning.contains(expected), "{warning}");
        assert!(warnings("nginxinc/nginx-unprivileged:1.27", Some(8080), None).is_empty());
    }

    #[test]
    fn a_port_the_known_image_does_not_listen_on_is_said() {
        let warning = one_warning("nginxinc/nginx-unprivileged:1.27", Some(80), None);
        assert!(
            warning.contains("listens on port 8080, not 80"),
            "{warning}"
        );
    }
}
