//! The charts and pages of sweeps and searches, end to end: a numeric axis
//! × variants gets a line per variant, a search its chart of probes, every
//! folder its index.html, a sweep without a chart says so, and `plot`
//! draws them all again from the folder's files.

mod common;

use common::{assert_ok, model, read, stormsim, stormsim_into, write_json};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::Path;

/// The text of every `<text>` element of an SVG, after checking it parses.
fn svg_texts(path: &Path) -> Vec<String> {
    let source = read(path);
    let doc = roxmltree::Document::parse(&source)
        .unwrap_or_else(|e| panic!("{} is not well-formed: {e}", path.display()));
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or_default().trim().to_string())
        .collect()
}

/// The colours of the chart's data lines (3 px wide: grid and axes are 1).
fn line_colours(svg: &str) -> BTreeSet<String> {
    svg.split("<polyline")
        .skip(1)
        .filter(|p| p.contains("stroke-width=\"3\""))
        .filter_map(|p| Some(p.split("stroke=\"").nth(1)?.split('"').next()?.to_string()))
        .collect()
}

/// A small policy × load sweep: two of S1's variants (timeouts at every
/// tier, or retries too) at three arrival rates, 2 replications each.
fn policy_by_load(name: &str, extra: Value) -> Value {
    let mut sweep = json!({
        "name": name,
        "description": "Per-tier timeouts against per-tier retries as the load grows.",
        "model": model("deadline-chain.json"),
        "replications": 2,
        "axes": [
            {"path": "workloads[users].arrival.rate_per_s", "name": "rate", "values": [10, 20, 40]},
            {"name": "variant", "variants": ["per-tier-timeouts", "per-tier-retries"]}
        ]
    });
    if let (Some(sweep), Some(extra)) = (sweep.as_object_mut(), extra.as_object()) {
        sweep.extend(extra.clone());
    }
    sweep
}

/// A numeric axis × variants draws one line per variant of the success rate
/// (S1 has no recovery analysis), with its band and the variants in the
/// legend; the page shows the chart and links every file; `plot` draws the
/// same bytes, and with a `chart.metric` the chart of that metric.
#[test]
fn a_numeric_axis_by_variants_gets_a_line_per_variant_and_a_page() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_json(
        &dir.path().join("s.json"),
        policy_by_load("policy-load", json!({})),
    );
    let out = dir.path().join("out");
    let run = stormsim(
        &[
            "sweep",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert_ok(&run);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        stdout.contains("{results.csv, aggregate.csv, sweep.json, sweep.svg, index.html}"),
        "{stdout}"
    );
    let chart = out.join("sweep.svg");
    let texts = svg_texts(&chart);
    for text in [
        "per-tier-timeouts",
        "per-tier-retries",
        "rate",
        "success rate (mean)",
    ] {
        assert!(texts.iter().any(|t| t == text), "no {text:?} in {texts:?}");
    }
    assert_eq!(line_colours(&read(&chart)).len(), 2, "one line per variant");

    let page = read(&out.join("index.html"));
    for needle in [
        "<h1>policy-load</h1>",
        "Per-tier timeouts against per-tier retries",
        "<img src=\"sweep.svg\"",
        "<a href=\"results.csv\">",
        "<a href=\"aggregate.csv\">",
        "<a href=\"sweep.json\">",
        "<code>workloads[users].arrival.rate_per_s</code>",
        "10, 20, 40",
        "the variants per-tier-timeouts, per-tier-retries",
        "6 points × 2 replications = 12 runs",
    ] {
        assert!(page.contains(needle), "index.html lacks {needle:?}");
    }

    // Drawn again from the folder: the same bytes.
    let (svg, html) = (read(&chart), page);
    std::fs::remove_file(&chart).unwrap();
    std::fs::remove_file(out.join("index.html")).unwrap();
    assert_ok(&stormsim(&["plot", out.to_str().unwrap()], &[]));
    assert_eq!(read(&chart), svg);
    assert_eq!(read(&out.join("index.html")), html);

    // Another metric, on a log axis, as the sweep file's `chart` asks.
    let spec_path = out.join("sweep.json");
    let mut spec: Value = serde_json::from_str(&read(&spec_path)).unwrap();
    spec["chart"] = json!({"metric": "latency_p99_ms", "log_y": true});
    write_json(&spec_path, spec);
    assert_ok(&stormsim(&["plot", out.to_str().unwrap()], &[]));
    let texts = svg_texts(&chart);
    assert!(
        texts.iter().any(|t| t == "latency_p99_ms (mean)"),
        "{texts:?}"
    );
    assert_eq!(line_colours(&read(&chart)).len(), 2);
}

/// A variant whose model lacks the charted metric (a service of another
/// variant's) is named in the legend as having none, not drawn as an empty
/// line the reader must puzzle over.
#[test]
fn a_variant_without_the_metric_says_so_in_the_legend() {
    let dir = tempfile::tempdir().unwrap();
    let service = |name: &str| json!({"name": name, "workers": 2, "steps": [{"work": {"kind": "constant", "ms": 1}}]});
    let model = json!({
        "name": "m", "horizon_s": 2,
        "workloads": [{"name": "w", "target": "a", "duration_s": 2,
                       "arrival": {"kind": "poisson", "rate_per_s": 50}}],
        "services": [service("a")],
        "variants": [{"name": "alone"},
                     {"name": "with-b", "set": {"services[+]": service("b"),
                                                "services[a].steps[+]": {"call": "b"}}}]
    });
    let file = write_json(
        &dir.path().join("s.json"),
        json!({"name": "s", "model": model, "replications": 2,
               "axes": [{"path": "workloads[w].arrival.rate_per_s", "name": "rate", "values": [50, 100]},
                        {"variants": ["alone", "with-b"]}],
               "chart": {"metric": "b.utilisation"}}),
    );
    let out = dir.path().join("out");
    assert_ok(&stormsim_into("sweep", &file, &out, &[]));
    let chart = out.join("sweep.svg");
    let texts = svg_texts(&chart);
    for text in ["alone (no b.utilisation)", "with-b", "b.utilisation (mean)"] {
        assert!(texts.iter().any(|t| t == text), "no {text:?} in {texts:?}");
    }
}

/// A sweep whose shape has no chart (three axes) says so instead of
/// claiming a sweep.svg, and the chart an earlier run of it drew is gone.
#[test]
fn a_sweep_without_a_chart_does_not_claim_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let sweep = |axes: Value| {
        let file = write_json(
            &dir.path().join("s.json"),
            json!({"name": "three", "model": model("deadline-chain.json"), "axes": axes}),
        );
        let run = stormsim(
            &[
                "sweep",
                file.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                "--force",
            ],
            &[],
        );
        assert_ok(&run);
        String::from_utf8_lossy(&run.stdout).into_owned()
    };
    let timeout = json!({"path": "services[gateway].steps[A].timeout_ms", "values": [10, 500]});
    sweep(json!([timeout]));
    assert!(out.join("sweep.svg").exists());
    let stdout = sweep(json!([
        timeout,
        {"path": "workloads[users].arrival.rate_per_s", "values": [20]},
        {"name": "variant", "variants": ["per-tier-timeouts"]}
    ]));
    let wrote = stdout.lines().last().unwrap_or_default();
    assert!(
        wrote.contains("{results.csv, aggregate.csv, sweep.json, index.html}; no sweep.svg: "),
        "{stdout}"
    );
    assert!(wrote.contains("this sweep has 3 axes"), "{stdout}");
    assert!(
        !out.join("sweep.svg").exists(),
        "the earlier chart is removed"
    );
    let page = read(&out.join("index.html"));
    assert!(page.contains("<strong>No chart</strong>"), "{page}");
    assert!(!page.contains("sweep.svg"), "{page}");
}

/// A search draws its probes and bracket and gets a page saying the
/// bracket it found; `plot` draws both again, the same bytes.
#[test]
fn a_search_gets_its_chart_and_page() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_json(
        &dir.path().join("s.json"),
        json!({
            "name": "gateway-timeout",
            "model": model("deadline-chain.json"),
            "variant": "per-tier-timeouts",
            "replications": 2,
            "search": {"path": "services[gateway].steps[A].timeout_ms", "from": 5, "to": 300,
                       "metric": "success_rate", "threshold": 0.35, "tolerance": 1}
        }),
    );
    let out = dir.path().join("out");
    let run = stormsim_into("search", &file, &out, &[]);
    assert_ok(&run);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        stdout.contains("{search.csv, sweep.json, search.svg, index.html}"),
        "{stdout}"
    );
    let probes = read(&out.join("search.csv")).lines().count() - 1;
    let texts = svg_texts(&out.join("search.svg"));
    for k in 1..=probes {
        assert!(texts.contains(&k.to_string()), "probe {k} is not numbered");
    }
    assert!(
        texts.iter().any(|t| t.starts_with("final bracket: ")),
        "{texts:?}"
    );
    let page = read(&out.join("index.html"));
    for needle in [
        "<h1>gateway-timeout</h1>",
        "<img src=\"search.svg\"",
        "<a href=\"search.csv\">",
        "success_rate crosses 0.35 between services[gateway].steps[A].timeout_ms = ",
    ] {
        assert!(page.contains(needle), "index.html lacks {needle:?}");
    }
    let (svg, html) = (read(&out.join("search.svg")), page);
    std::fs::remove_file(out.join("search.svg")).unwrap();
    assert_ok(&stormsim(&["plot", out.to_str().unwrap()], &[]));
    assert_eq!(read(&out.join("search.svg")), svg);
    assert_eq!(read(&out.join("index.html")), html);
}

/// A chart metric that is no column of aggregate.csv is refused when the
/// sweep file is checked, at `chart.metric`, with the nearest names.
#[test]
fn check_refuses_a_chart_metric_not_in_the_aggregate() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_json(
        &dir.path().join("bad.sweep.json"),
        policy_by_load("bad", json!({"chart": {"metric": "latency_p95_ms"}})),
    );
    let run = stormsim(&["check", file.to_str().unwrap()], &[]);
    assert_eq!(run.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("chart.metric: \"latency_p95_ms\" is not a column of aggregate.csv: did you mean \"latency_p90_ms\" or \"latency_p99_ms\""),
        "{stderr}"
    );
    let good = write_json(
        &dir.path().join("good.sweep.json"),
        policy_by_load(
            "good",
            json!({"chart": {"metric": "B.wasted", "log_x": true}}),
        ),
    );
    assert_ok(&stormsim(&["check", good.to_str().unwrap()], &[]));
}

/// One replication is said in the singular, and its charts claim no
/// interval a single run cannot give: the line chart's subtitle said
/// "× 1 replications; 95% Student-t intervals", the heatmap's "each cell the
/// mean of its replications", and `sweep` began "× 1 replications".
#[test]
fn one_replication_is_said_in_the_singular_and_claims_no_interval() {
    let dir = tempfile::tempdir().unwrap();
    let line = json!({
        "name": "one-rep-line",
        "model": model("deadline-chain.json"),
        "replications": 1,
        "axes": [{"path": "workloads[users].arrival.rate_per_s", "name": "rate", "values": [10, 20, 40]}]
    });
    let grid = json!({
        "name": "one-rep-grid",
        "model": model("deadline-chain.json"),
        "replications": 1,
        "axes": [
            {"path": "workloads[users].arrival.rate_per_s", "name": "rate", "values": [10, 20]},
            {"path": "services[B].workers", "name": "workers", "values": [4, 8]}
        ]
    });
    for (name, sweep, expected) in [
        (
            "line",
            line,
            [
                "sweep \"one-rep-line\": 3 points × 1 replication = 3 runs",
                "3 points × 1 replication; no intervals from one replication",
            ],
        ),
        (
            "grid",
            grid,
            [
                "sweep \"one-rep-grid\": 4 points × 1 replication = 4 runs",
                "4 points × 1 replication; each cell one run",
            ],
        ),
    ] {
        let file = write_json(&dir.path().join(format!("{name}.json")), sweep);
        let out = dir.path().join(name);
        let run = stormsim(
            &[
                "sweep",
                file.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ],
            &[],
        );
        assert_ok(&run);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(stderr.contains(expected[0]), "{stderr}");
        let texts = svg_texts(&out.join("sweep.svg"));
        assert!(
            texts.iter().any(|t| t == expected[1]),
            "no {:?} in {texts:?}",
            expected[1]
        );
        assert!(
            !texts.iter().any(|t| t.contains("replications")),
            "{texts:?}"
        );
    }
}
