//! What a run's and a sweep's files say about partial runs, verdicts and
//! quantities that do not exist.

mod common;

use common::{assert_ok, csv_rows, read, stormsim, stormsim_into, write_json};
use serde_json::{json, Value};

/// One server fed 1,000 requests per second; the `slow` variant's 3 ms of
/// work cannot keep up, and `limits.max_in_flight` stops it.
fn limited_model() -> Value {
    json!({
        "name": "limited",
        "workloads": [{"name": "u", "target": "api", "requests": 20000,
                       "arrival": {"kind": "poisson", "rate_per_s": 1000}}],
        "services": [{"name": "api", "workers": 1,
                      "steps": [{"work": {"kind": "exponential", "mean_ms": 0.5}}]}],
        "timeline": [{"name": "noop", "at_s": 5, "set": {}}],
        "limits": {"max_in_flight": 500},
        "variants": [
            {"name": "fast"},
            {"name": "slow", "set": {"services[api].steps[0].work.mean_ms": 3}}
        ]
    })
}

#[test]
fn a_partial_run_is_marked_in_every_output() {
    let dir = tempfile::tempdir().unwrap();
    let model = write_json(&dir.path().join("limited.json"), limited_model());
    let out = dir.path().join("out");
    // Not --quiet: the console table is one of the outputs checked.
    let run = stormsim(
        &[
            "run",
            model.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--accept-partial",
        ],
        &[],
    );
    assert_ok(&run);
    let stdout = String::from_utf8_lossy(&run.stdout);
    // The console table.
    assert!(stdout.contains("\nslow [PARTIAL]"), "{stdout}");
    assert!(
        stdout.contains("[PARTIAL] slow: stopped at limits.max_in_flight"),
        "{stdout}"
    );
    assert!(!stdout.contains("fast [PARTIAL"), "{stdout}");
    // summary.csv and summary.json.
    let rows = csv_rows(&read(&out.join("summary.csv")));
    assert_eq!(rows[0]["complete"], "true");
    assert_eq!(rows[0]["stopped_by"], "");
    assert_eq!(rows[1]["complete"], "false");
    assert_eq!(rows[1]["stopped_by"], "max_in_flight");
    let requests: u64 = rows[1]["requests"].parse().unwrap();
    assert!(requests < 20000, "the count is the one it ran: {requests}");
    let json: Value = serde_json::from_str(&read(&out.join("summary.json"))).unwrap();
    assert_eq!(json["variants"][1]["complete"], false);
    // Every chart and the page name it partial, with the requests it ran.
    let note = format!(
        "slow: stopped by limits.max_in_flight after {} requests",
        stormsim_plot::style::format_count(requests)
    );
    for chart in ["comparison.svg", "load.svg", "timeline.svg"] {
        let svg = read(&out.join(chart));
        assert!(svg.contains("slow [PARTIAL]"), "{chart} lacks the mark");
        assert!(
            !svg.contains("fast [PARTIAL]"),
            "{chart} marks the complete one"
        );
        assert!(svg.contains(&note), "{chart} lacks {note:?}");
    }
    let comparison = read(&out.join("comparison.svg"));
    assert!(
        comparison.contains("20,000 logical requests per variant; PARTIAL"),
        "the subtitle gives the complete variants' count, and says the partial one's apart"
    );
    let page = read(&out.join("index.html"));
    assert!(
        page.contains("<strong>PARTIAL</strong>: stopped by limits.max_in_flight"),
        "{page}"
    );
}

/// `ok_latency_zero`: with no success, the latency of successes is empty,
/// not 0, and a search does not read a crossing into it.
#[test]
fn ok_latency_zero() {
    let dir = tempfile::tempdir().unwrap();
    let model = json!({
        "name": "dropped",
        "workloads": [{"name": "u", "target": "db", "requests": 200,
                       "arrival": {"kind": "poisson", "rate_per_s": 100}}],
        "services": [{"name": "db", "workers": 4, "admission": {"drop_fraction": 1},
                      "steps": [{"work": {"kind": "constant", "ms": 20}}]}]
    });
    let path = write_json(&dir.path().join("dropped.json"), model.clone());
    let out = dir.path().join("out");
    assert_ok(&stormsim_into("run", &path, &out, &[]));
    let rows = csv_rows(&read(&out.join("summary.csv")));
    assert_eq!(rows[0]["succeeded"], "0");
    assert_eq!(rows[0]["ok_latency_p50_ms"], "");
    assert_eq!(rows[0]["ok_latency_p99_ms"], "");
    let json: Value = serde_json::from_str(&read(&out.join("summary.json"))).unwrap();
    assert!(json["variants"][0]["ok_latency_ms"].is_null());

    // A search of the latency of successes over the drop fraction: at 1
    // nothing succeeds, so there is nothing to bisect on, and it says so.
    let mut m = model;
    m["services"][0]["admission"]["drop_fraction"] = json!(0);
    let sweep = json!({
        "name": "se2", "model": m, "replications": 2,
        "search": {"path": "services[db].admission.drop_fraction", "from": 0, "to": 1,
                   "metric": "ok_latency_p99_ms", "threshold": 50, "tolerance": 0.01}
    });
    let sweep = write_json(&dir.path().join("se2.sweep.json"), sweep);
    let search = stormsim(
        &[
            "search",
            sweep.to_str().unwrap(),
            "--out",
            dir.path().join("se2").to_str().unwrap(),
            "--quiet",
        ],
        &[],
    );
    let stderr = String::from_utf8_lossy(&search.stderr);
    assert!(!search.status.success(), "no crossing may be found");
    assert!(
        stderr.contains("no value in any replication") && stderr.contains("2 no value"),
        "{stderr}"
    );
}

/// A sweep whose replications a limit cut short: results.csv marks them,
/// and aggregate.csv counts them and leaves them out.
#[test]
fn a_sweep_leaves_partial_runs_out_of_its_aggregate() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = json!({
        "name": "limsweep", "model": limited_model(), "variant": "fast", "replications": 2,
        "axes": [{"path": "services[api].steps[0].work.mean_ms", "name": "mean",
                  "values": [0.5, 3]}]
    });
    let path = write_json(&dir.path().join("lim.sweep.json"), sweep);
    let out = dir.path().join("out");
    assert_ok(&stormsim_into("sweep", &path, &out, &["--accept-partial"]));
    let results = csv_rows(&read(&out.join("results.csv")));
    let marks: Vec<(&str, &str)> = results
        .iter()
        .map(|r| (r["mean"].as_str(), r["complete"].as_str()))
        .collect();
    assert_eq!(
        marks,
        [
            ("0.5", "true"),
            ("0.5", "true"),
            ("3", "false"),
            ("3", "false")
        ]
    );
    let aggregate = csv_rows(&read(&out.join("aggregate.csv")));
    assert_eq!(aggregate[0]["complete_replications"], "2");
    assert_eq!(aggregate[0]["partial_replications"], "0");
    assert_eq!(aggregate[0]["requests.n"], "2");
    assert_eq!(aggregate[0]["requests.mean"], "20000");
    assert_eq!(aggregate[1]["complete_replications"], "0");
    assert_eq!(aggregate[1]["partial_replications"], "2");
    assert_eq!(aggregate[1]["requests.n"], "0");
    assert_eq!(aggregate[1]["requests.mean"], "");
}

/// timeseries.csv's latency over time: per workload p50 and p99 of the
/// requests answered in each bucket, per service the mean wait for a worker
/// and the mean service time. Constant 10 ms work at one worker: the service
/// time is exactly 10 ms, and a request's latency is its wait plus that.
#[test]
fn timeseries_shows_latency_over_time() {
    let dir = tempfile::tempdir().unwrap();
    let model = json!({
        "name": "steady",
        "workloads": [{"name": "u", "target": "s", "duration_s": 20,
                       "arrival": {"kind": "poisson", "rate_per_s": 60}}],
        "services": [{"name": "s", "workers": 1,
                      "steps": [{"work": {"kind": "constant", "ms": 10}}]}]
    });
    let path = write_json(&dir.path().join("steady.json"), model);
    let out = dir.path().join("out");
    assert_ok(&stormsim_into("run", &path, &out, &[]));
    let rows = csv_rows(&read(&out.join("timeseries.csv")));
    assert!(rows.len() >= 20);
    let num = |r: &std::collections::BTreeMap<String, String>, c: &str| -> Option<f64> {
        let cell = &r[c];
        (!cell.is_empty()).then(|| cell.parse().unwrap())
    };
    let mut waited = false;
    for r in rows.iter().filter(|r| r["succeeded"] != "0") {
        assert_eq!(num(r, "s.service_ms"), Some(10.0), "{r:?}");
        let (p50, p99) = (
            num(r, "u.latency_p50_ms").unwrap(),
            num(r, "u.latency_p99_ms").unwrap(),
        );
        let wait = num(r, "s.queue_wait_ms").unwrap();
        assert!((10.0..=p99).contains(&p50), "{r:?}");
        assert!(wait >= 0.0 && wait < p99, "{r:?}");
        waited |= wait > 0.0;
    }
    // At 60% utilisation some requests queue.
    assert!(waited);
    // A bucket with nothing answered has no quantiles (empty, not 0).
    let last = rows.last().unwrap();
    if last["succeeded"] == "0" {
        assert_eq!(last["u.latency_p50_ms"], "");
    }
}

#[test]
fn fail_on_exits_4_for_each_failing_variant_and_0_for_a_healthy_one() {
    let dir = tempfile::tempdir().unwrap();
    let spike = common::model("error-spike.json");
    // error-spike: `retries` is metastable, the other three recovered.
    let run = stormsim_into(
        "run",
        &spike,
        &dir.path().join("all"),
        &["--fail-on", "metastable,relapsed"],
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(4), "{stderr}");
    let fails: Vec<&str> = stderr.lines().filter(|l| l.starts_with("FAIL ")).collect();
    assert_eq!(fails.len(), 1, "{stderr}");
    assert!(
        fails[0].starts_with("FAIL error-spike/retries: metastable: not recovered within"),
        "{stderr}"
    );
    assert!(stderr.contains(
        "1 variant judged metastable or relapsed or without a verdict (--fail-on; exit code 4)"
    ));
    // The outputs are written all the same.
    assert!(dir.path().join("all/summary.csv").is_file());
    // The healthy variants pass.
    let healthy = stormsim_into(
        "run",
        &spike,
        &dir.path().join("healthy"),
        &[
            "--variant",
            "no-retries",
            "--variant",
            "retry-budget",
            "--fail-on",
            "metastable,relapsed",
        ],
    );
    assert_ok(&healthy);
    assert!(!String::from_utf8_lossy(&healthy.stderr).contains("FAIL"));
    // An outcome that is none: exit 2, naming them all, before running.
    let bad = stormsim_into(
        "run",
        &spike,
        &dir.path().join("bad"),
        &["--fail-on", "stuck"],
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains(
        "the outcomes are recovered, relapsed, metastable, overloaded, unhealthy_before_trigger, undetermined"
    ));
    assert!(!dir.path().join("bad").exists());
}

#[test]
fn a_sweep_fails_on_its_failing_runs_with_their_points() {
    let dir = tempfile::tempdir().unwrap();
    let spike = common::model("error-spike.json");
    let sweep = write_json(
        &dir.path().join("s.sweep.json"),
        json!({
            "name": "attempts",
            "model": spike,
            "variant": "retries",
            "replications": 2,
            "axes": [{"path": "workloads[clients].retry.max_attempts", "values": [1, 3]}]
        }),
    );
    let run = stormsim_into(
        "sweep",
        &sweep,
        &dir.path().join("out"),
        &["--fail-on", "metastable"],
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(4), "{stderr}");
    let fails: Vec<&str> = stderr.lines().filter(|l| l.starts_with("FAIL ")).collect();
    // Three tries storm in both replications; one never does.
    assert_eq!(fails.len(), 2, "{stderr}");
    assert!(
        fails
            .iter()
            .all(|l| l.contains("workloads[clients].retry.max_attempts=3")),
        "{stderr}"
    );
    assert!(fails[0].starts_with("FAIL attempts/point 1 ("), "{stderr}");
    assert!(
        stderr.contains("2 runs judged metastable or without a verdict (--fail-on; exit code 4)")
    );
    let aggregate = csv_rows(&read(&dir.path().join("out/aggregate.csv")));
    assert_eq!(aggregate[1]["outcome.metastable"], "2");
    assert_eq!(aggregate[1]["outcome.metastable.share"], "1");
    assert_eq!(aggregate[1]["metastable_share.n"], "2");
    assert_eq!(aggregate[0]["outcome.recovered.share"], "1");
    assert!(
        aggregate[0]["outcome.recovered.ci95_low"]
            .parse::<f64>()
            .unwrap()
            < 0.5
    );
}

#[test]
fn fail_on_fails_a_variant_it_cannot_judge() {
    // deadline-chain asks for no recovery analysis: a gate that cannot
    // judge does not pass.
    let dir = tempfile::tempdir().unwrap();
    let run = stormsim_into(
        "run",
        &common::model("deadline-chain.json"),
        &dir.path().join("out"),
        &["--variant", "no-timeouts", "--fail-on", "metastable"],
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains(
            "FAIL deadline-chain/no-timeouts: no verdict: the model asks for no recovery analysis"
        ),
        "{stderr}"
    );
}
