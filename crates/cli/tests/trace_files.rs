//! A `trace` arrival read from a CSV file (`"file"`): the same run as the
//! rates listed inline, found beside the model (or a sweep with its model
//! inline), and every problem with the file named at its path.

mod common;

use common::{assert_ok, read, stormsim_into, write_json};
use serde_json::{json, Value};
use std::path::Path;

fn model(arrival: Value) -> Value {
    json!({
        "name": "traced",
        "seed": 3,
        "workloads": [{"name": "users", "target": "api", "arrival": arrival, "duration_s": 6}],
        "services": [{"name": "api", "workers": 4,
                      "steps": [{"work": {"kind": "exponential", "mean_ms": 20}}]}]
    })
}

const RATES: [f64; 6] = [50.0, 80.0, 120.0, 200.0, 90.0, 40.0];

/// `time,rps` as a metrics store would export it, with a comment line.
fn write_trace(dir: &Path) {
    let mut csv = String::from("# requests per second, one row per second\ntime,rps\n");
    for (k, r) in RATES.iter().enumerate() {
        csv.push_str(&format!("2026-11-27T00:00:0{k}Z,{r}\n"));
    }
    std::fs::write(dir.join("black-friday.csv"), csv).unwrap();
}

#[test]
fn a_trace_file_runs_as_its_rates_listed_inline() {
    let dir = tempfile::tempdir().unwrap();
    write_trace(dir.path());
    let from_file = write_json(
        &dir.path().join("from-file.json"),
        model(json!({"kind": "trace", "file": "black-friday.csv", "column": "rps"})),
    );
    let inline = write_json(
        &dir.path().join("inline.json"),
        model(json!({"kind": "trace", "rates_per_s": RATES})),
    );
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    assert_ok(&stormsim_into("run", &from_file, &a, &[]));
    assert_ok(&stormsim_into("run", &inline, &b, &[]));
    for file in ["summary.csv", "timeseries.csv"] {
        assert_eq!(read(&a.join(file)), read(&b.join(file)), "{file}");
    }
    // The file's rates shaped the run: 580 requests expected over 6 s, a
    // Poisson count, within 5 of its standard deviations (√580).
    let requests: f64 = common::csv_rows(&read(&a.join("summary.csv")))[0]["requests"]
        .parse()
        .unwrap();
    assert!((requests - 580.0).abs() < 5.0 * 580f64.sqrt(), "{requests}");
}

/// `stormsim check`'s complaints about a model in `dir` whose arrival is
/// `arrival` (it must be refused, with exit 2).
fn refused(dir: &Path, arrival: Value) -> String {
    let path = write_json(&dir.join("model.json"), model(arrival));
    let out = common::stormsim(&["check", path.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(2));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_missing_file_or_a_bad_row_is_an_error_at_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let stderr = refused(dir.path(), json!({"kind": "trace", "file": "nowhere.csv"}));
    assert!(
        stderr.contains("workloads[0].arrival.file: nowhere.csv:"),
        "{stderr}"
    );

    std::fs::write(dir.path().join("bad.csv"), "rps\n10\n12\nn/a\n").unwrap();
    let stderr = refused(dir.path(), json!({"kind": "trace", "file": "bad.csv"}));
    let expected = "workloads[0].arrival.file: bad.csv: line 4: expected a rate (a number) in column 1, got \"n/a\"";
    assert!(stderr.contains(expected), "{stderr}");

    // Two columns and no `column`: which one is meant is asked, not guessed.
    write_trace(dir.path());
    let stderr = refused(
        dir.path(),
        json!({"kind": "trace", "file": "black-friday.csv"}),
    );
    assert!(
        stderr.contains("say which holds the rates with `column`"),
        "{stderr}"
    );

    // The rates listed and a file: which wins is not guessed either.
    let both = json!({"kind": "trace", "file": "black-friday.csv", "rates_per_s": [1]});
    let stderr = refused(dir.path(), both);
    assert!(
        stderr.contains("expected `rates_per_s` or `file`, not both"),
        "{stderr}"
    );
}

/// A sweep with its model inline reads the file beside the sweep file, once:
/// the sweep's recorded model holds the rates, so a later change to the file
/// cannot mix into a resumed sweep.
#[test]
fn a_sweep_reads_the_trace_beside_it_once() {
    let dir = tempfile::tempdir().unwrap();
    write_trace(dir.path());
    let sweep = write_json(
        &dir.path().join("sweep.json"),
        json!({
            "name": "traced-sweep",
            "model": model(json!({"kind": "trace", "file": "black-friday.csv", "column": "rps"})),
            "axes": [{"path": "services[api].workers", "values": [4, 8, 16]}]
        }),
    );
    resumes_until_the_trace_changes(dir.path(), &sweep, "the model");
}

/// Runs part of `sweep`, resumes it with the same trace file, changes the
/// file, and expects `--resume` to refuse, naming `what` changed.
fn resumes_until_the_trace_changes(dir: &Path, sweep: &Path, what: &str) {
    let out = dir.join("out");
    assert_ok(&stormsim_into("sweep", sweep, &out, &["--max-runs", "2"]));
    // The same file: the sweep resumes.
    assert_ok(&stormsim_into(
        "sweep",
        sweep,
        &out,
        &["--resume", "--max-runs", "1"],
    ));
    // A changed file is a changed input: refused, not mixed.
    std::fs::write(dir.join("black-friday.csv"), "rps\n10\n10\n10\n").unwrap();
    let refused = stormsim_into("sweep", sweep, &out, &["--resume"]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains(what), "{stderr}");
}

/// A trace file named only by an axis's value is read once too, and its
/// rates are in the sweep's inputs: a changed file makes `--resume` refuse
/// instead of mixing the points run before the change with those after it.
#[test]
fn regression_a_trace_file_on_an_axis_cannot_mix_into_a_resumed_sweep() {
    let dir = tempfile::tempdir().unwrap();
    write_trace(dir.path());
    let sweep = write_json(
        &dir.path().join("sweep.json"),
        json!({
            "name": "traced-axis",
            "model": model(json!({"kind": "poisson", "rate_per_s": 50})),
            "axes": [{"path": "workloads[users].arrival", "values": [
                {"kind": "poisson", "rate_per_s": 50},
                {"kind": "trace", "file": "black-friday.csv", "column": "rps"}
            ]}],
            "replications": 2
        }),
    );
    resumes_until_the_trace_changes(dir.path(), &sweep, "the sweep's `axes`");
    // A missing file is a problem at its place in the sweep.
    std::fs::remove_file(dir.path().join("black-friday.csv")).unwrap();
    let missing = stormsim_into("sweep", &sweep, &dir.path().join("out2"), &[]);
    assert_eq!(missing.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(stderr.contains("axes[0].values[1].file"), "{stderr}");
}

/// A trace file's cell that parses as a number but is no rate (nan, inf,
/// 1e400, -5), and a one-row file read as a header ("0x10"), are problems
/// of the file at `arrival.file`, with its line, not of a `rates_per_s`
/// the model does not have.
#[test]
fn regression_trace_csv_messages() {
    let dir = tempfile::tempdir().unwrap();
    let trace = json!({"kind": "trace", "file": "rates.csv"});
    for cell in ["nan", "inf", "1e400", "-5"] {
        std::fs::write(dir.path().join("rates.csv"), format!("rps\n10\n{cell}\n")).unwrap();
        let stderr = refused(dir.path(), trace.clone());
        let expected = format!(
            "workloads[0].arrival.file: rates.csv: line 3: expected a rate ≥ 0, got {cell}"
        );
        assert!(stderr.contains(&expected), "{stderr}");
        assert!(!stderr.contains("rates_per_s"), "{stderr}");
    }
    std::fs::write(dir.path().join("rates.csv"), "0x10\n").unwrap();
    let stderr = refused(dir.path(), trace);
    assert!(
        stderr.contains("workloads[0].arrival.file: rates.csv: no rates: the first row (\"0x10\")"),
        "{stderr}"
    );
    assert!(!stderr.contains("rates_per_s"), "{stderr}");
}
