//! The comparison table printed after a run.

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
    for s in &services {
        header.push(format!("{s} calls/req"));
        header.push(format!("{s} wasted"));
        header.push(format!("{s} cancelled"));
    }
    let mut rows = vec![header];
    for v in &run.variants {
        let mut row = vec![
            v.variant.clone(),
            format!("{}/{}", v.succeeded, v.requests),
            format!("{:.1}", v.latency_ms.p50),
            format!("{:.1}", v.latency_ms.p99),
            format!("{:.1}", v.latency_ms.max),
        ];
        for s in &services {
            match v.services.iter().find(|x| x.name == *s) {
                Some(x) => {
                    row.push(format!("{:.2}", x.calls_per_request));
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
    out
}
