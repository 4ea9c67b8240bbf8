//! The model's warnings through the binary: `check`, `run`, `sweep` and
//! `search` print them to stderr (`FILE: warning[NAME]: PATH: MESSAGE`),
//! leave the exit code alone, and `--no-warnings[=NAME,...]` silences them.

mod common;

use common::{stormsim, write_json};
use serde_json::{json, Value};
use std::path::Path;

/// A small model with two warnings: an Envoy budget written as a fraction,
/// and a timeline change after the horizon.
fn model() -> Value {
    json!({
        "name": "warned",
        "horizon_s": 1,
        "workloads": [{"name": "w", "target": "api", "requests": 5, "timeout_ms": 50,
                       "arrival": {"kind": "constant", "rate_per_s": 10}}],
        "services": [
            {"name": "api", "steps": [{"call": "db", "retry": {"max_attempts": 2,
                "budget": {"kind": "envoy", "budget_percent": 0.2}}}]},
            {"name": "db", "steps": [{"work": {"kind": "constant", "ms": 1}}]}],
        "timeline": [{"name": "late", "at_s": 2, "set": {"services[db].workers": 2}}]
    })
}

const ENVOY: &str = "warning[envoy-budget-percent]: services[api].steps[0].retry.budget.budget_percent: 0.2 is 0.2% of active requests";
const HORIZON: &str =
    "warning[horizon-before-timeline]: timeline[late].at_s: this change comes at 2 s";

fn utf8(p: &Path) -> &str {
    p.to_str().expect("utf-8")
}

/// Runs the binary; returns its exit code and stderr.
fn run(args: &[&str]) -> (Option<i32>, String) {
    let o = stormsim(args, &[]);
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn warning_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains(": warning["))
        .collect()
}

#[test]
fn check_and_run_print_the_warnings_and_exit_0() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_json(&dir.path().join("m.json"), model());
    let out = dir.path().join("out");
    for args in [
        vec!["check", utf8(&file)],
        vec!["run", utf8(&file), "--quiet", "--out", utf8(&out)],
    ] {
        let (code, stderr) = run(&args);
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        let lines = warning_lines(&stderr);
        assert_eq!(lines.len(), 2, "{args:?}: {stderr}");
        assert!(
            lines[0].starts_with(&format!("{}: {ENVOY}", file.display())),
            "{stderr}"
        );
        assert!(
            lines[1].starts_with(&format!("{}: {HORIZON}", file.display())),
            "{stderr}"
        );
    }
    assert!(out.join("summary.json").exists(), "the run ran");
}

#[test]
fn no_warnings_silences_all_of_them_or_those_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_json(&dir.path().join("m.json"), model());
    let out = dir.path().join("out");
    let path = utf8(&file);
    for args in [
        vec!["check", path, "--no-warnings"],
        vec!["run", path, "--quiet", "--out", utf8(&out), "--no-warnings"],
        vec![
            "check",
            path,
            "--no-warnings=envoy-budget-percent,horizon-before-timeline",
        ],
        vec![
            "check",
            path,
            "--no-warnings=envoy-budget-percent",
            "--no-warnings=horizon-before-timeline",
        ],
    ] {
        let (code, stderr) = run(&args);
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        assert_eq!(warning_lines(&stderr), Vec::<&str>::new(), "{args:?}");
    }
    // One named: the other still shows.
    let (code, stderr) = run(&["check", path, "--no-warnings=envoy-budget-percent"]);
    assert_eq!(code, Some(0), "{stderr}");
    let lines = warning_lines(&stderr);
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].contains(HORIZON), "{stderr}");
    // `--no-warnings` takes its names after `=`: the model is not one.
    let (code, stderr) = run(&["check", "--no-warnings", path]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(warning_lines(&stderr), Vec::<&str>::new());
}

#[test]
fn an_unknown_warning_name_is_refused_naming_the_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_json(&dir.path().join("m.json"), model());
    let (code, stderr) = run(&["check", utf8(&file), "--no-warnings=envoy"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("no warning is named \"envoy\"")
            && stderr.contains("envoy-budget-percent")
            && stderr.contains("rate-limit-never-binds"),
        "{stderr}"
    );
}

#[test]
fn sweep_search_and_check_of_a_sweep_print_their_models_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_json(&dir.path().join("m.json"), model());
    let sweep = write_json(
        &dir.path().join("s.sweep.json"),
        json!({"name": "warned-sweep", "model": "m.json", "replications": 1,
               "axes": [{"path": "workloads[w].requests", "values": [2, 3]}]}),
    );
    let search = write_json(
        &dir.path().join("q.sweep.json"),
        json!({"name": "warned-search", "model": "m.json", "replications": 1,
               "search": {"path": "services[db].steps[0].work.ms", "from": 1, "to": 100,
                          "metric": "success_rate", "threshold": 0.5, "tolerance": 20}}),
    );
    let out = dir.path().join("out");
    let out2 = dir.path().join("out2");
    for args in [
        vec!["check", utf8(&sweep)],
        vec![
            "sweep",
            utf8(&sweep),
            "--quiet",
            "--out",
            utf8(&out),
            "--jobs",
            "1",
        ],
        vec![
            "search",
            utf8(&search),
            "--quiet",
            "--out",
            utf8(&out2),
            "--jobs",
            "1",
        ],
    ] {
        let (code, stderr) = run(&args);
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        let lines = warning_lines(&stderr);
        assert_eq!(lines.len(), 2, "{args:?}: {stderr}");
        assert!(
            lines[0].starts_with(&format!("{}: {ENVOY}", file.display())),
            "{args:?}: {stderr}"
        );
        let (code, stderr) = run(&[&args[..], &["--no-warnings"]].concat());
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        assert_eq!(warning_lines(&stderr), Vec::<&str>::new(), "{args:?}");
    }
}

/// A sweep's axes move values the warnings are about: an axis over Envoy's
/// `budget_percent` that reaches 0.2 warns, with how many of the points have
/// it, though the model as written has 20 (20%) and does not.
#[test]
fn a_sweep_warns_of_what_its_axes_set_at_some_points() {
    let dir = tempfile::tempdir().unwrap();
    let mut written = model();
    written["services"][0]["steps"][0]["retry"]["budget"]["budget_percent"] = json!(20);
    write_json(&dir.path().join("m.json"), written);
    let sweep = write_json(
        &dir.path().join("s.sweep.json"),
        json!({"name": "warned-axis", "model": "m.json", "replications": 1,
               "axes": [
                   {"path": "services[api].steps[0].retry.budget.budget_percent",
                    "values": [20, 0.2, 50]},
                   {"path": "workloads[w].requests", "values": [2, 3]}]}),
    );
    let (code, stderr) = run(&["check", utf8(&sweep)]);
    assert_eq!(code, Some(0), "{stderr}");
    let lines = warning_lines(&stderr);
    assert_eq!(lines.len(), 2, "{stderr}");
    let envoy = lines.iter().find(|l| l.contains(ENVOY)).expect(&stderr);
    assert!(
        envoy.ends_with("(at 2 of the 6 points; the first, point 2)"),
        "{stderr}"
    );
    // The change after the horizon is at every point: said as for a model.
    let horizon = lines.iter().find(|l| l.contains(HORIZON)).expect(&stderr);
    assert!(!horizon.contains("points"), "{stderr}");
}
