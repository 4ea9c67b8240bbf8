//! What a user sees when the input is wrong: a missing file, an unknown
//! variant, a folder that is not there, a bad sweep. Exit code 2 (the input
//! is the user's to fix), every problem once, named by what the user wrote.
//!
//! The model crate's own messages may change: these tests assert on the
//! paths, the labels, the counts and the exit codes, not on its texts.

mod common;

use common::{model, stormsim, write_json};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Output;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The problem lines under "FILE: N problem(s) found:".
fn problem_lines(out: &Output) -> Vec<String> {
    stderr(out)
        .lines()
        .filter(|l| l.starts_with("  "))
        .map(|l| l.trim().to_string())
        .collect()
}

fn check(file: &Path) -> Output {
    stormsim(&["check", file.to_str().unwrap()], &[])
}

/// A sweep of deadline-chain with these fields besides its name and model.
fn sweep_file(dir: &Path, name: &str, fields: Value) -> std::path::PathBuf {
    let mut doc = json!({"name": name, "model": model("deadline-chain.json")});
    for (k, v) in fields.as_object().unwrap() {
        doc[k] = v.clone();
    }
    write_json(&dir.join(format!("{name}.sweep.json")), doc)
}

#[test]
fn a_missing_model_file_exits_2_naming_the_file() {
    for command in [&["check"][..], &["run"], &["bench"], &["run", "--quiet"]] {
        let mut args = command.to_vec();
        args.insert(1, "no/such/model.json");
        let out = stormsim(&args, &[]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("cannot read the model file no/such/model.json"),
            "{err}"
        );
        assert_eq!(err.matches("os error").count(), 1, "said once: {err}");
    }
}

#[test]
fn a_sweep_whose_model_is_missing_exits_2_and_says_it_is_the_sweeps_model() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = write_json(
        &dir.path().join("s.sweep.json"),
        json!({"name": "s", "model": "nope.json",
               "axes": [{"path": "services[A].workers", "values": [1, 2]}]}),
    );
    for command in ["sweep", "check", "search", "merge"] {
        let mut args = vec![command, sweep.to_str().unwrap()];
        if command == "merge" {
            args.push("shard0");
        }
        let out = stormsim(&args, &[]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{command}: {err}");
        assert!(err.contains("1 problem found"), "{err}");
        let lines = problem_lines(&out);
        assert_eq!(lines.len(), 1, "{err}");
        assert!(lines[0].starts_with("model: "), "{err}");
        assert!(lines[0].contains("model file"), "{err}");
        assert!(lines[0].contains("nope.json"), "{err}");
        assert_eq!(err.matches("os error").count(), 1, "said once: {err}");
    }
    // The sweep file itself missing: exit 2 too, named.
    let out = stormsim(&["sweep", "no/such.sweep.json"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no/such.sweep.json"));
}

#[test]
fn bench_names_an_unknown_variant_and_lists_the_models() {
    let m = model("deadline-chain.json");
    let out = stormsim(&["bench", m.to_str().unwrap(), "--variant", "nope"], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out).trim(),
        "error: no variant named \"nope\"; the model's variants are: no-timeouts, \
         per-tier-timeouts, per-tier-retries, end-to-end-deadline"
    );
    // Every unknown one at once, the known ones not among them.
    let out = stormsim(
        &[
            "bench",
            m.to_str().unwrap(),
            "--variant",
            "a",
            "--variant",
            "no-timeouts",
            "--variant",
            "b",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no variant named \"a\", \"b\";"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn plot_says_a_folder_does_not_exist_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nonexist");
    let out = stormsim(&["plot", missing.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("does not exist"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("holds neither"), "{}", stderr(&out));
    // A folder that holds neither a run nor a sweep: exit 2 too.
    let out = stormsim(&["plot", dir.path().to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("holds neither"), "{}", stderr(&out));
}

/// `check` recognises a sweep file (by its name, or by its `model` field) and
/// checks it as `sweep` would: the model at every point.
#[test]
fn check_validates_a_sweep_file() {
    let dir = tempfile::tempdir().unwrap();
    let ok = sweep_file(
        dir.path(),
        "ok",
        json!({"replications": 2, "axes": [{"path": "services[A].steps[B].timeout_ms",
                                             "values": [100, 200, 300]}]}),
    );
    let out = check(&ok);
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("ok — sweep \"ok\"")
            && stdout.contains("3 points × 2 replications = 6 runs"),
        "{stdout}"
    );
    // A sweep in a file not named *.sweep.json: recognised by its `model`.
    let plain = dir.path().join("plain.json");
    std::fs::copy(&ok, &plain).unwrap();
    let out = check(&plain);
    assert!(out.status.success(), "{}", stderr(&out));
    // A bad value at one point is found, as `sweep` finds it.
    let bad = sweep_file(
        dir.path(),
        "bad",
        json!({"axes": [{"path": "services[A].workers", "values": [1, 0, 2]}]}),
    );
    let out = check(&bad);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("1 problem found"), "{}", stderr(&out));
    let lines = problem_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("axes[0] (\"services[A].workers\") = 0: services[1].workers: "),
        "{lines:?}"
    );
    assert!(lines[0].ends_with("(1 of 3 points)"), "{lines:?}");
    // --set is for models.
    let out = stormsim(&["check", ok.to_str().unwrap(), "--set", "a=1"], &[]);
    assert_eq!(out.status.code(), Some(2));
}

/// A sweep's problems are counted as a model's are ("1 problem found", "2
/// problems found"), and every point is checked: a bad value of each axis is
/// found, not only the first point's.
#[test]
fn a_sweep_reports_every_problem_with_proper_plurals() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = sweep_file(
        dir.path(),
        "two",
        json!({"replications": 2, "set": {"services[A].workers": 4},
               "axes": [{"path": "services[B].queue_capacity", "values": [10, -20]},
                        {"path": "services[A].steps[B].timeout_ms", "values": [100, "x"]}]}),
    );
    let out = stormsim(&["sweep", sweep.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains(": 2 problems found:"), "{err}");
    assert!(!err.contains("problem(s)"), "{err}");
    let lines = problem_lines(&out);
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with(
            "axes[0] (\"services[B].queue_capacity\") = -20: services[2].queue_capacity: "
        ),
        "{err}"
    );
    assert!(
        lines[1].starts_with("axes[1] (\"services[A].steps[B].timeout_ms\") = \"x\": services[1].steps[1].timeout_ms: "),
        "{err}"
    );
    for line in &lines {
        assert!(line.ends_with("(2 of 4 points)"), "{err}");
    }
}

/// A problem of the sweep's `set` is named by its entry, its path said once
/// (not as a `--set`, and not "point 0").
#[test]
fn a_set_entry_is_named_as_the_sweep_file_writes_it() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = sweep_file(
        dir.path(),
        "set",
        json!({"set": {"services[catalg].workers": 5},
               "axes": [{"path": "services[A].workers", "values": [1, 2]}]}),
    );
    let out = check(&sweep);
    assert_eq!(out.status.code(), Some(2));
    let lines = problem_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    let line = &lines[0];
    assert!(
        line.starts_with("set[\"services[catalg].workers\"]: "),
        "{line}"
    );
    assert_eq!(
        line.matches("services[catalg].workers").count(),
        1,
        "{line}"
    );
    assert!(
        !line.contains("--set") && !line.contains("point 0"),
        "{line}"
    );
    assert!(line.contains("\"catalg\""), "{line}");
    // A bad value the `set` writes is named by its entry too, once.
    let sweep = sweep_file(
        dir.path(),
        "set-value",
        json!({"set": {"services[A].workers": 0},
               "axes": [{"path": "services[B].workers", "values": [1, 2]}]}),
    );
    let out = check(&sweep);
    assert_eq!(out.status.code(), Some(2));
    let lines = problem_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("set[\"services[A].workers\"]: services[1].workers: "),
        "{lines:?}"
    );
}

/// An axis over a path the model has no object for, met at every element of a
/// `[*]` and at every point: one problem, saying how many elements and points
/// share it, and that the model has no such object.
#[test]
fn identical_problems_across_elements_and_points_are_said_once() {
    let dir = tempfile::tempdir().unwrap();
    // Retries, but no retry budget.
    let workload = |name: &str| {
        json!({"name": name, "target": "s", "requests": 10, "retry": {"max_attempts": 2},
               "arrival": {"kind": "constant", "rate_per_s": 10}})
    };
    let m = write_json(
        &dir.path().join("m.json"),
        json!({"name": "m",
               "workloads": [workload("a"), workload("b"), workload("c")],
               "services": [{"name": "s", "steps": [{"work": {"kind": "constant", "ms": 1}}]}]}),
    );
    let sweep = write_json(
        &dir.path().join("budget.sweep.json"),
        json!({"name": "budget", "model": m,
               "axes": [{"path": "workloads[*].retry.budget.ratio",
                         "linear": {"from": 0.1, "to": 0.4, "steps": 4}},
                        {"path": "services[s].workers", "values": [1, 2]}]}),
    );
    let out = check(&sweep);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("1 problem found"), "{err}");
    let lines = problem_lines(&out);
    assert_eq!(lines.len(), 1, "{err}");
    let line = &lines[0];
    assert!(
        line.starts_with("axes[0] (\"workloads[*].retry.budget.ratio\"): workloads[*].retry"),
        "{line}"
    );
    assert!(line.contains("(3 elements, all 8 points)"), "{line}");
    assert!(
        line.contains("the model has no workloads[*].retry.budget"),
        "{line}"
    );
}

/// A `linear` axis over a whole-number field: the problem points at the axis
/// and says to add `"integer": true`; with it the sweep is fine.
#[test]
fn a_fractional_axis_over_a_whole_number_suggests_integer() {
    let dir = tempfile::tempdir().unwrap();
    let axes = |integer: bool| {
        json!({"axes": [{"path": "services[B].queue_capacity", "values": [10, 20]},
                        {"name": "workers", "path": "services[0].workers",
                         "linear": {"from": 10, "to": 5, "steps": 3}, "integer": integer}]})
    };
    let out = check(&sweep_file(dir.path(), "fraction", axes(false)));
    assert_eq!(out.status.code(), Some(2));
    let lines = problem_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("axes[1] (\"workers\"): services[0].workers: "),
        "{lines:?}"
    );
    assert!(lines[0].contains("(all 6 points)"), "{lines:?}");
    assert!(lines[0].contains("add \"integer\": true"), "{lines:?}");
    let out = check(&sweep_file(dir.path(), "whole", axes(true)));
    assert!(out.status.success(), "{}", stderr(&out));
}

/// Axes that are fine alone but not together: named by a point that has the
/// problem, with its values.
#[test]
fn a_problem_of_axes_together_is_named_by_its_point() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = sweep_file(
        dir.path(),
        "mix",
        json!({"axes": [
            {"name": "fast", "path": "services[B].steps[0].work.of[0].p", "values": [0.7, 0.5], "zip": "z"},
            {"name": "slow", "path": "services[B].steps[0].work.of[1].p", "values": [0.3, 0.4], "zip": "z"}]}),
    );
    let out = check(&sweep);
    assert_eq!(out.status.code(), Some(2));
    let lines = problem_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("point 1 (fast = 0.5, slow = 0.4): services[2].steps[0].work.of: "),
        "{lines:?}"
    );
}

/// An unknown variant, chosen by the sweep or by a `variants` axis, is named
/// with the model's variants.
#[test]
fn a_sweeps_unknown_variant_lists_the_models() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = sweep_file(
        dir.path(),
        "variants",
        json!({"variant": "nope", "axes": [{"variants": ["no-timeouts", "zzz"]}]}),
    );
    let out = check(&sweep);
    assert_eq!(out.status.code(), Some(2));
    let lines = problem_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("axes[0] (\"variant\") = \"zzz\": the model has no variant \"zzz\"; its variants are: no-timeouts, per-tier-timeouts"),
        "{lines:?}"
    );
}

/// `doc` with `"$schema": value` as its first field, as a file written for an
/// editor has it.
fn with_schema(doc: Value, value: Value) -> Value {
    let mut fields = serde_json::Map::new();
    fields.insert("$schema".into(), value);
    fields.extend(doc.as_object().unwrap().clone());
    Value::Object(fields)
}

/// `$schema` (for editors) is accepted in a model file and a sweep file and
/// changes no output; one that is not a string is a problem at its path.
#[test]
fn a_schema_field_is_accepted_and_one_not_a_string_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let chain: Value = serde_json::from_str(&common::read(&model("deadline-chain.json"))).unwrap();
    let annotated = write_json(
        &dir.path().join("annotated.json"),
        with_schema(chain.clone(), json!("../docs/model.schema.json")),
    );
    let mut outputs = Vec::new();
    for (file, out) in [
        (model("deadline-chain.json"), dir.path().join("plain")),
        (annotated.clone(), dir.path().join("annotated")),
    ] {
        let run = stormsim(
            &[
                "run",
                file.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                "--quiet",
            ],
            &[],
        );
        assert!(run.status.success(), "{}", stderr(&run));
        outputs.push(
            ["summary.csv", "latency.csv", "timeseries.csv"]
                .map(|name| common::read(&out.join(name))),
        );
    }
    assert_eq!(outputs[0], outputs[1], "the same outputs with $schema");
    let sweep = sweep_file(
        dir.path(),
        "annotated",
        json!({"$schema": "../docs/sweep.schema.json",
               "axes": [{"path": "services[A].steps[B].timeout_ms", "values": [100, 200]}]}),
    );
    let out = check(&sweep);
    assert!(out.status.success(), "{}", stderr(&out));

    let bad_model = write_json(&dir.path().join("bad.json"), with_schema(chain, json!(3)));
    let bad_sweep = sweep_file(
        dir.path(),
        "bad",
        json!({"$schema": {"$ref": "../docs/sweep.schema.json"},
               "axes": [{"path": "services[A].steps[B].timeout_ms", "values": [100, 200]}]}),
    );
    for (file, at) in [
        (bad_model, "$schema: "),
        (bad_sweep, "sweep file: $schema: "),
    ] {
        let out = check(&file);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let lines = problem_lines(&out);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].starts_with(at), "{lines:?}");
    }
}

/// A value of the wrong type (a string for a number) no longer hides the
/// problems of the rest of the model: `check` said only the first kind,
/// then the others once it was fixed. The field that cannot be read is
/// taken out and the rest checked, in one pass; what hangs on that field
/// is not said twice.
#[test]
fn regression_check_says_unreadable_and_invalid_values_in_one_pass() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_json(
        &dir.path().join("bad.json"),
        json!({"name": "bad", "horizon_s": 10,
               "workloads": [{"name": "u", "target": "nowhere", "duration_s": 5,
                              "arrival": {"kind": "poisson", "rate_per_s": -5},
                              "timeout_ms": "fast"}],
               "services": [{"name": "s", "workers": 0,
                             "steps": [{"work": {"kind": "exponential", "mean_ms": 5}}]}]}),
    );
    let out = check(&file);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let paths: Vec<String> = problem_lines(&out)
        .iter()
        .map(|l| l.split(':').next().unwrap().to_string())
        .collect();
    assert_eq!(
        paths,
        [
            "workloads[0].timeout_ms",
            "workloads[0].target",
            "workloads[0].arrival.rate_per_s",
            "services[0].workers"
        ],
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("4 problems found"),
        "{}",
        stderr(&out)
    );
}
