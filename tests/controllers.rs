//! A kind's controller holds its domain only; the machinery every controller needs lives once,
//! in the `opgen-runtime` crate. Checked on a project with a plain kind and operand kinds on
//! a Deployment and on a StatefulSet (with and without a port, with and without autoscaling):
//! each controller stays within its size budget, and no two controllers of different shapes
//! share a run of six lines that differ only in names, strings and numbers (the sign of
//! plumbing copied into each of them).

mod common;

use std::collections::HashMap;

use common::Project;

/// The most lines, tests included, of a plain kind's controller and of an operand kind's.
const PLAIN_BUDGET: usize = 200;
const OPERAND_BUDGET: usize = 600;
/// Lines in a row that make a shared run.
const RUN: usize = 6;

/// The controllers of the project: (path, budget).
const CONTROLLERS: &[(&str, usize)] = &[
    ("src/controllers/web/site.rs", PLAIN_BUDGET),
    ("src/controllers/cache/memcached.rs", OPERAND_BUDGET),
    ("src/controllers/db/my_sql_cluster.rs", OPERAND_BUDGET),
    ("src/controllers/queue/worker.rs", OPERAND_BUDGET),
    ("src/controllers/queue/store.rs", OPERAND_BUDGET),
    ("src/controllers/db/my_sql_backup.rs", OPERAND_BUDGET),
    (
        "src/controllers/db/my_sql_backup_schedule.rs",
        OPERAND_BUDGET,
    ),
];

fn project() -> Project {
    let project = Project::init("shapes", "");
    project.create_api("--group web --version v1 --kind Site");
    project.create_api(
        "--group cache --version v1 --kind Memcached --image memcached:1.6 --workload deployment --port 11211 --autoscale",
    );
    project.create_api(
        "--group db --version v1alpha1 --kind MySQLCluster --image mysql:8.0 --workload statefulset --port 3306",
    );
    project
        .create_api("--group queue --version v1 --kind Worker --image busybox:1.36 -- sleep 3600");
    project.create_api(
        "--group queue --version v1 --kind Store --image redis:7 --workload statefulset --autoscale",
    );
    project.create_api(
        "--group db --version v1alpha1 --kind MySQLBackup --image mysql:8.0 --workload job -- mysqldump",
    );
    project.create_api(
        "--group db --version v1alpha1 --kind MySQLBackupSchedule --image mysql:8.0 --workload cronjob",
    );
    project
}

/// The shape of a line of Rust: every identifier, string and number replaced by a placeholder,
/// white space dropped. `None` for what carries no logic: blank lines, comments, `use` lines and
/// lone punctuation.
fn shape(line: &str) -> Option<String> {
    let line = line.trim();
    if line.is_empty() || line.starts_with("//") || line.starts_with("use ") {
        return None;
    }
    if line.chars().all(|c| !c.is_alphanumeric() && c != '"') {
        return None;
    }
    let mut shape = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '"' {
            while let Some(c) = chars.next() {
                match c {
                    '\\' => {
                        chars.next();
                    }
                    '"' => break,
                    _ => {}
                }
            }
            shape.push('s');
        } else if c.is_alphanumeric() || c == '_' {
            while chars
                .peek()
                .is_some_and(|c| c.is_alphanumeric() || *c == '_')
            {
                chars.next();
            }
            shape.push('w');
        } else if !c.is_whitespace() {
            shape.push(c);
        }
    }
    Some(shape)
}

/// Every run of [`RUN`] shaped lines of `text`, with the line number it starts at.
fn runs(text: &str) -> HashMap<Vec<String>, usize> {
    let lines: Vec<(usize, String)> = text
        .lines()
        .enumerate()
        .filter_map(|(number, line)| shape(line).map(|shape| (number + 1, shape)))
        .collect();
    lines
        .windows(RUN)
        .map(|window| {
            let shapes = window.iter().map(|(_, shape)| shape.clone()).collect();
            (shapes, window[0].0)
        })
        .collect()
}

#[test]
fn controllers_stay_within_their_budget() {
    let project = project();
    for (path, budget) in CONTROLLERS {
        let lines = project.read(path).lines().count();
        assert!(
            lines <= *budget,
            "{path} has {lines} lines, over its budget of {budget}"
        );
    }
}

#[test]
fn controllers_of_different_shapes_share_no_run_of_lines() {
    let project = project();
    // Two operands of the same workload, with or without a port, come from one template and
    // differ only in names: compare each controller with those of other shapes.
    let shapes = [
        &CONTROLLERS[0..1],
        &[CONTROLLERS[1], CONTROLLERS[3]],
        &[CONTROLLERS[2], CONTROLLERS[4]],
        // A Job's and a CronJob's controllers both build the Job's pods the same way.
        &CONTROLLERS[5..7],
    ];
    for (i, group) in shapes.iter().enumerate() {
        for other in shapes.iter().skip(i + 1) {
            for (a, _) in group.iter() {
                for (b, _) in other.iter() {
                    let theirs = runs(&project.read(b));
                    for (run, line) in runs(&project.read(a)) {
                        if let Some(their_line) = theirs.get(&run) {
                            panic!(
                                "{a}:{line} and {b}:{their_line} share {RUN} lines of the same \
                                 shape: move what they share into opgen-runtime"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn a_shape_ignores_names_strings_and_numbers() {
    assert_eq!(
        shape(r#"let a = f("x\"y", 3);"#),
        shape(r#"let bb = g("", 42);"#)
    );
    assert_ne!(shape("let a = f(x);"), shape("let a = f(x, y);"));
    assert_eq!(shape("    // a comment"), None);
    assert_eq!(shape("use crate::runtime::Context;"), None);
    assert_eq!(shape("    })"), None);
}
