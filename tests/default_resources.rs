//! The manager's default memory request and limit (`config/manager/manager.yaml`) hold what the
//! at-scale benchmark measured, as docs/performance.md reports it: the limit the largest peak
//! of opgen's manager at the largest size measured, the request its largest peak at 1,000
//! objects, each with headroom. When a new run of the benchmark reports more memory, this fails
//! until the defaults (and what the template says of them) follow.

mod common;

use common::Project;

/// What the limit must leave above the measured peak: allocations come in bursts (a watch's
/// first list, a read of every workload at a restart), and one run of the benchmark is one
/// sample of them.
const LIMIT_HEADROOM: f64 = 1.4;
/// The request is what the scheduler sets aside; the limit's headroom covers the rest.
const REQUEST_HEADROOM: f64 = 1.3;
/// The size the request is for: a typical operator's objects.
const REQUEST_OBJECTS: u64 = 1_000;

/// One row of a benchmark table: which operator, at how many objects, and its peak RSS in MiB.
#[derive(Debug)]
struct Peak {
    operator: String,
    objects: u64,
    mib: f64,
}

/// Where a benchmark table keeps what this test reads.
#[derive(Clone, Copy)]
struct Columns {
    operator: usize,
    objects: usize,
    /// The memory column, and whether it holds `idle / peak / settled`; none in the tables of
    /// requests by verb.
    rss: Option<(usize, bool)>,
}

/// The peaks of every table between the benchmark's markers in docs/performance.md: the
/// `RSS idle / peak / settled (MiB)` column's middle figure, and the `peak RSS (MiB)` column
/// of the restart table.
fn measured_peaks(markdown: &str) -> Vec<Peak> {
    let start = markdown
        .find("<!-- at-scale results")
        .expect("docs/performance.md lost the at-scale results' start marker");
    let end = markdown
        .find("<!-- end of the at-scale results -->")
        .expect("docs/performance.md lost the at-scale results' end marker");
    let mut peaks = Vec::new();
    // Set by a table's header row, until the line that ends the table.
    let mut table: Option<Columns> = None;
    for line in markdown[start..end].lines() {
        let Some(row) = line.strip_prefix('|') else {
            table = None;
            continue;
        };
        let cells: Vec<&str> = row
            .trim_end_matches('|')
            .split('|')
            .map(str::trim)
            .collect();
        if cells.iter().all(|cell| cell.starts_with("--")) {
            continue;
        }
        let Some(columns) = table else {
            let find = |name: &str| cells.iter().position(|cell| *cell == name);
            table = Some(Columns {
                operator: find("operator").expect("a benchmark table without `operator`"),
                objects: find("objects").expect("a benchmark table without `objects`"),
                rss: find("RSS idle / peak / settled (MiB)")
                    .map(|column| (column, true))
                    .or_else(|| find("peak RSS (MiB)").map(|column| (column, false))),
            });
            continue;
        };
        let Some((rss, idle_peak_settled)) = columns.rss else {
            continue;
        };
        let figure = if idle_peak_settled {
            cells[rss].split('/').nth(1).expect("idle / peak / settled")
        } else {
            cells[rss]
        };
        peaks.push(Peak {
            operator: cells[columns.operator].to_string(),
            objects: cells[columns.objects].parse().expect("a number of objects"),
            mib: figure.trim().parse().expect("a figure in MiB"),
        });
    }
    peaks
}

/// A memory quantity of the form the template uses (`64Mi`, `1Gi`), in MiB.
fn mebibytes(quantity: &str) -> f64 {
    if let Some(mib) = quantity.strip_suffix("Mi") {
        mib.parse().unwrap()
    } else if let Some(gib) = quantity.strip_suffix("Gi") {
        gib.parse::<f64>().unwrap() * 1024.0
    } else {
        panic!("a memory quantity in Mi or Gi, not {quantity:?}")
    }
}

/// The manager container's memory `limits` and `requests` of a new project, in MiB.
fn default_memory() -> (f64, f64) {
    let project = Project::init("sized", "--domain example.com");
    let text = project.read("config/manager/manager.yaml");
    let documents: Vec<serde_json::Value> = serde_saphyr::from_multiple(&text).unwrap();
    let deployment = documents
        .iter()
        .find(|document| document["kind"] == "Deployment")
        .expect("config/manager/manager.yaml has the manager's Deployment");
    let containers = deployment["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap();
    let manager = containers
        .iter()
        .find(|container| container["name"] == "manager")
        .expect("a container called manager");
    let memory = |of: &str| {
        let quantity = manager["resources"][of]["memory"].as_str();
        mebibytes(quantity.unwrap_or_else(|| panic!("the manager has no {of}.memory")))
    };
    (memory("limits"), memory("requests"))
}

#[test]
fn the_default_memory_holds_the_measured_peaks() {
    let markdown = std::fs::read_to_string("docs/performance.md").unwrap();
    let peaks: Vec<Peak> = measured_peaks(&markdown)
        .into_iter()
        .filter(|peak| peak.operator.starts_with("opgen"))
        .collect();
    let largest = peaks.iter().map(|peak| peak.objects).max().unwrap();
    assert!(
        largest >= 10_000,
        "the benchmark's tables should reach 10,000 objects: {peaks:?}"
    );
    let worst = |objects: u64| {
        peaks
            .iter()
            .filter(|peak| peak.objects == objects)
            .max_by(|a, b| a.mib.total_cmp(&b.mib))
            .unwrap_or_else(|| panic!("no opgen row at {objects} objects: {peaks:?}"))
    };
    let (limit, request) = default_memory();
    let at_largest = worst(largest);
    assert!(
        limit >= LIMIT_HEADROOM * at_largest.mib,
        "the memory limit, {limit} MiB, is not {LIMIT_HEADROOM}x the peak measured at {largest} objects ({at_largest:?}): raise it in templates/project/config/manager/manager.yaml.tera"
    );
    let typical = worst(REQUEST_OBJECTS);
    assert!(
        request >= REQUEST_HEADROOM * typical.mib,
        "the memory request, {request} MiB, is not {REQUEST_HEADROOM}x the peak measured at {REQUEST_OBJECTS} objects ({typical:?}): raise it in templates/project/config/manager/manager.yaml.tera"
    );
}

#[test]
fn peaks_are_read_from_both_kinds_of_table() {
    let markdown = "\
<!-- at-scale results -->
| operator | objects | RSS idle / peak / settled (MiB) | requests |
|---|--:|--:|--:|
| opgen | 1000 | 11.7 / 28.5 / 28.4 | 4014 |

| operator | objects | get /version | patch deployments |
|---|--:|--:|--:|
| opgen | 1000 | 1 | 1000 |

| operator | objects | ready (s) | peak RSS (MiB) |
|---|--:|--:|--:|
| Kubebuilder | 10000 | 0.3 | 212.5 |
<!-- end of the at-scale results -->
";
    let peaks = measured_peaks(markdown);
    let read: Vec<(&str, u64, f64)> = peaks
        .iter()
        .map(|peak| (peak.operator.as_str(), peak.objects, peak.mib))
        .collect();
    assert_eq!(read, [("opgen", 1000, 28.5), ("Kubebuilder", 10000, 212.5)]);
}

#[test]
fn quantities_in_mi_and_gi() {
    assert_eq!(mebibytes("256Mi"), 256.0);
    assert_eq!(mebibytes("1Gi"), 1024.0);
}
