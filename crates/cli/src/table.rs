//! The comparison table printed after a run.

use stormsim_sim::analysis::Outcome;
use stormsim_sim::metrics::Quantiles;
use stormsim_sim::RunReport;

/// One row per variant: what a person compares first.
pub fn comparison(run: &RunReport) -> String {
    let services: Vec<&str> = run
        .variants
        .first()
        .map(|v| v.services.iter().map(|s| s.name.as_str()).collect())
        .unwrap_or_default();
    let mut header = vec![
        "variant".to_string(),
        "succeeded".into(),
        "p50 ms".into(),
        "p99 ms".into(),
        "max ms".into(),
    ];
    let verdicts = run.variants.iter().any(|v| v.verdict.is_some());
    if verdicts {
        header.push("after the trigger".into());
    }
    for s in &services {
        header.push(format!("{s} calls/req"));
        header.push(format!("{s} wasted"));
        header.push(format!("{s} cancelled"));
    }
    let mut rows = vec![header];
    for v in &run.variants {
        let ms = |q: fn(&Quantiles) -> f64| {
            v.latency_ms
                .as_ref()
                .map_or("-".to_string(), |l| format!("{:.1}", q(l)))
        };
        let name = match v.stopped_by {
            None => v.variant.clone(),
            Some(limit) => format!("{} (PARTIAL: {limit})", v.variant),
        };
        let mut row = vec![
            name,
            format!("{}/{}", v.succeeded, v.requests),
            ms(|l| l.p50),
            ms(|l| l.p99),
            ms(|l| l.max),
        ];
        if verdicts {
            row.push(v.verdict.as_ref().map_or("-".to_string(), |r| {
                match (r.outcome, r.recovery_s, &r.recovered_by) {
                    (Outcome::Recovered, Some(s), _) => format!("recovered in {s} s"),
                    (Outcome::Metastable, _, Some(by)) => format!("metastable (until {by})"),
                    (o, _, _) => o.as_str().replace('_', " "),
                }
            }));
        }
        for s in &services {
            match v.services.iter().find(|x| x.name == *s) {
                Some(x) => {
                    row.push(
                        x.calls_per_request
                            .map_or("-".to_string(), |c| format!("{c:.2}")),
                    );
                    row.push(x.wasted.to_string());
                    row.push(x.cancelled.to_string());
                }
                None => row.extend(["-".into(), "-".into(), "-".into()]),
            }
        }
        rows.push(row);
    }
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (cell, w))| {
                if c == 0 {
                    format!("{cell:<w$}")
                } else {
                    format!("{cell:>w$}")
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
        if i == 0 {
            let rule: usize = widths.iter().sum::<usize>() + 2 * (widths.len() - 1);
            out.push_str(&"-".repeat(rule));
            out.push('\n');
        }
    }
    let partial: Vec<&str> = run
        .variants
        .iter()
        .filter(|v| !v.complete)
        .map(|v| v.variant.as_str())
        .collect();
    if !partial.is_empty() {
        out.push_str(&format!(
            "PARTIAL: {} stopped at a limit: its counts are of part of a run, not comparable with the others\n",
            partial.join(", ")
        ));
    }
    out
}
