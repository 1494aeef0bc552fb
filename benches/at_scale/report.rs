//! The results as Markdown tables and an SVG chart, and their place in docs/performance.md.

use std::{collections::BTreeSet, fmt::Write as _, path::Path, time::Duration};

use crate::measure::{AFTER, CREATORS, RESTART_SETTLE, Run};

/// Where docs/performance.md holds a set of results.
pub struct Section {
    begin: &'static str,
    end: &'static str,
    /// The chart's file beside it, if it has one.
    chart: Option<&'static str>,
}

/// Both operators at each size.
pub const COMPARISON: Section = Section {
    begin: "<!-- at-scale results: written by `cargo bench --bench at_scale` -->",
    end: "<!-- end of the at-scale results -->",
    chart: Some("performance-at-scale.svg"),
};

/// opgen's operand at each `--max-concurrent-reconciles`.
pub const CONCURRENCY: Section = Section {
    begin: "<!-- concurrency results: written by `cargo bench --bench at_scale -- --concurrency …` -->",
    end: "<!-- end of the concurrency results -->",
    chart: None,
};

/// The tables: costs per run, then the requests each operator sent.
pub fn tables(runs: &[Run], machine: &str) -> String {
    let mut text = String::new();
    let _ = writeln!(text, "Measured on {machine}.\n");
    let _ = writeln!(
        text,
        "| operator | objects | all created (s) | workloads (s) | statuses (s) | operator CPU (s) | RSS idle / peak / settled (MiB) | KiB per object, peak / settled | control-plane CPU (s) | requests | status writes per object | events | reconcile errors |"
    );
    let _ = writeln!(
        text,
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
    );
    for run in runs {
        let per_object = |rss: f64| (rss - run.rss_idle) * 1024.0 / run.objects as f64;
        let status_writes: u64 = run
            .requests
            .iter()
            .filter(|(request, _)| request.ends_with("/status") && is_write(request))
            .map(|(_, count)| count)
            .sum();
        let _ = writeln!(
            text,
            "| {} | {} | {} | {} | {} | {:.1} + {:.1} | {:.1} / {:.1} / {:.1} | {:.1} / {:.1} | {:.1} + {:.1} | {} | {:.2} | {} | {} |",
            run.operator,
            run.objects,
            seconds(run.created),
            seconds(run.workloads),
            seconds(run.statuses),
            run.operator_cpu.0,
            run.operator_cpu.1,
            run.rss_idle,
            run.rss_peak,
            run.rss_settled,
            per_object(run.rss_peak),
            per_object(run.rss_settled),
            run.control_plane_cpu.0,
            run.control_plane_cpu.1,
            run.requests.values().sum::<u64>(),
            status_writes as f64 / run.objects as f64,
            run.events,
            run.errors,
        );
    }
    let _ = writeln!(
        text,
        "\nAll created: when the last `kubectl create` returned ({CREATORS} at once, the objects dealt among them); no operator is done before it. CPU: until every object reported a status, + in the {} s after. Requests and events: the whole run, from the API server's audit log.\n",
        AFTER.as_secs()
    );
    let kinds: BTreeSet<&String> = runs.iter().flat_map(|r| r.requests.keys()).collect();
    let _ = write!(text, "| operator | objects |");
    for kind in &kinds {
        let _ = write!(text, " {kind} |");
    }
    let _ = write!(text, "\n|---|--:|");
    for _ in &kinds {
        let _ = write!(text, "--:|");
    }
    text.push('\n');
    for run in runs {
        let _ = write!(text, "| {} | {} |", run.operator, run.objects);
        for kind in &kinds {
            let _ = write!(text, " {} |", run.requests.get(*kind).copied().unwrap_or(0));
        }
        text.push('\n');
    }
    let _ = writeln!(
        text,
        "\nA restart: each manager started again over the objects it made, once they had converged.\n"
    );
    let _ = writeln!(
        text,
        "| operator | objects | ready (s) | every object reconciled (s) | operator CPU (s) | control-plane CPU (s) | peak RSS (MiB) | requests | of which writes |"
    );
    let _ = writeln!(text, "|---|--:|--:|--:|--:|--:|--:|--:|--:|");
    for run in runs {
        let restart = &run.restart;
        let writes: u64 = restart
            .requests
            .iter()
            .filter(|(request, _)| is_write(request))
            .map(|(_, count)| count)
            .sum();
        let _ = writeln!(
            text,
            "| {} | {} | {:.1} | {} | {:.1} | {:.1} | {:.1} | {} | {} |",
            run.operator,
            run.objects,
            restart.ready.as_secs_f64(),
            seconds(restart.resynced),
            restart.operator_cpu,
            restart.control_plane_cpu,
            restart.rss_peak,
            restart.requests.values().sum::<u64>(),
            writes,
        );
    }
    let _ = writeln!(
        text,
        "\nCPU and requests: from the restart until every object was reconciled once, + {} s. Writes: every verb but get, list and watch.",
        RESTART_SETTLE.as_secs()
    );
    text
}

/// Whether a request (`verb resource`) writes.
fn is_write(request: &str) -> bool {
    let verb = request.split(' ').next().unwrap_or_default();
    !matches!(verb, "get" | "list" | "watch")
}

fn seconds(duration: Option<Duration>) -> String {
    duration.map_or("not converged".to_owned(), |d| {
        format!("{:.1}", d.as_secs_f64())
    })
}

/// What a panel of the chart shows of a run.
type Measure = fn(&Run) -> Option<f64>;

/// Two panels side by side, against the number of objects: peak memory, and the time until
/// every object reported a status; one line per operator.
pub fn chart(runs: &[Run]) -> String {
    const COLOURS: [&str; 3] = ["#1f77b4", "#d62728", "#2ca02c"];
    let operators: Vec<&str> = runs.iter().fold(Vec::new(), |mut seen, run| {
        if !seen.contains(&run.operator.as_str()) {
            seen.push(&run.operator);
        }
        seen
    });
    let sizes: Vec<usize> = runs
        .iter()
        .map(|r| r.objects)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let panels: [(&str, Measure); 2] = [
        ("peak RSS (MiB)", |r| Some(r.rss_peak)),
        ("time to every status (s)", |r| {
            r.statuses.map(|d| d.as_secs_f64())
        }),
    ];
    let (width, height, margin) = (360.0, 240.0, 50.0);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
        2.0 * width + margin,
        height + 2.0 * margin
    );
    for (index, (title, value)) in panels.iter().enumerate() {
        let left = margin + index as f64 * (width + margin / 2.0);
        let plot_width = width - margin;
        let top = margin;
        let bottom = margin + height - margin;
        let max = runs
            .iter()
            .filter_map(value)
            .fold(0.0_f64, f64::max)
            .max(1.0)
            * 1.1;
        let x = |i: usize| left + plot_width * (i as f64 + 0.5) / sizes.len() as f64;
        let y = |v: f64| bottom - (bottom - top) * v / max;
        let _ = writeln!(
            svg,
            "<text x=\"{left}\" y=\"{}\" font-weight=\"bold\">{title}</text>",
            top - 20.0
        );
        let _ = writeln!(
            svg,
            "<line x1=\"{left}\" y1=\"{bottom}\" x2=\"{}\" y2=\"{bottom}\" stroke=\"black\"/>",
            left + plot_width
        );
        let _ = writeln!(
            svg,
            "<line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{bottom}\" stroke=\"black\"/>"
        );
        for tick in 0..=4 {
            let v = max * f64::from(tick) / 4.0;
            let _ = writeln!(
                svg,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{v:.0}</text>",
                left - 4.0,
                y(v) + 4.0
            );
        }
        for (i, size) in sizes.iter().enumerate() {
            let _ = writeln!(
                svg,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{size} objects</text>",
                x(i),
                bottom + 16.0
            );
        }
        for (operator, colour) in operators.iter().zip(COLOURS) {
            let points: Vec<String> = sizes
                .iter()
                .enumerate()
                .filter_map(|(i, size)| {
                    let run = runs
                        .iter()
                        .find(|r| r.operator == *operator && r.objects == *size)?;
                    Some(format!("{:.1},{:.1}", x(i), y(value(run)?)))
                })
                .collect();
            let _ = writeln!(
                svg,
                "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\" points=\"{}\"/>",
                points.join(" ")
            );
            for point in &points {
                let (px, py) = point.split_once(',').unwrap_or_default();
                let _ = writeln!(
                    svg,
                    "<circle cx=\"{px}\" cy=\"{py}\" r=\"3\" fill=\"{colour}\"/>"
                );
            }
        }
    }
    for (i, (operator, colour)) in operators.iter().zip(COLOURS).enumerate() {
        let x = margin + i as f64 * 180.0;
        let y = height + margin + 20.0;
        let _ = writeln!(
            svg,
            "<rect x=\"{x}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{colour}\"/>",
            y - 10.0
        );
        let _ = writeln!(svg, "<text x=\"{}\" y=\"{y}\">{operator}</text>", x + 18.0);
    }
    svg.push_str("</svg>\n");
    svg
}

/// Puts the results between the markers of `section` in docs/performance.md, and its chart
/// beside it.
pub fn write_docs(root: &Path, section: &Section, tables: &str, chart: &str) -> anyhow::Result<()> {
    let docs = root.join("docs/performance.md");
    let text = std::fs::read_to_string(&docs)?;
    let (Some(begin), Some(end)) = (text.find(section.begin), text.find(section.end)) else {
        anyhow::bail!(
            "{} has lost its markers ({} … {})",
            docs.display(),
            section.begin,
            section.end
        );
    };
    let image = section.chart.map_or(String::new(), |file| {
        format!("![Peak memory and time to converge against the number of objects]({file})\n\n")
    });
    let updated = format!(
        "{}{}\n\n{image}{tables}\n{}",
        &text[..begin],
        section.begin,
        &text[end..]
    );
    std::fs::write(&docs, updated)?;
    if let Some(file) = section.chart {
        std::fs::write(root.join("docs").join(file), chart)?;
    }
    Ok(())
}
