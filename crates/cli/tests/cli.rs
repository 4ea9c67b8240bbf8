//! The `stormsim` binary end to end: outputs, determinism, golden files, and
//! what a user sees when a model is wrong.

mod common;

use common::{assert_ok, model, read, read_bytes, root, stormsim, stormsim_into, write_json};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

fn run_into(dir: &Path, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let m = model("deadline-chain.json");
    let mut args = vec![
        "run",
        m.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
        "--quiet",
    ];
    args.extend_from_slice(extra);
    let out = stormsim(&args, env);
    assert!(
        out.status.success(),
        "run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn run_writes_summary_files_and_a_chart() {
    let dir = tempfile::tempdir().unwrap();
    let out = stormsim(
        &[
            "run",
            model("deadline-chain.json").to_str().unwrap(),
            "--out",
            dir.path().to_str().unwrap(),
        ],
        &[],
    );
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    for v in [
        "no-timeouts",
        "per-tier-timeouts",
        "per-tier-retries",
        "end-to-end-deadline",
    ] {
        assert!(stdout.contains(v), "table lacks {v}:\n{stdout}");
    }
    let csv = read(&dir.path().join("summary.csv"));
    let header = csv.lines().next().unwrap();
    for column in [
        "variant",
        "requests",
        "succeeded",
        "failed",
        "success_rate",
        "latency_p50_ms",
        "latency_p90_ms",
        "latency_p99_ms",
        "latency_p999_ms",
        "latency_max_ms",
        "ok_latency_p50_ms",
        "ok_latency_p99_ms",
        "events",
        "B.calls",
        "B.calls_per_request",
        "A.wasted",
        "B.cancelled",
    ] {
        assert!(
            header.split(',').any(|c| c == column),
            "summary.csv lacks {column}"
        );
    }
    assert_eq!(csv.lines().count(), 5);
    let json: Value = serde_json::from_str(&read(&dir.path().join("summary.json"))).unwrap();
    assert_eq!(json["model"], "deadline-chain");
    assert_eq!(json["tool"], "stormsim");
    assert_eq!(json["seed"], 1);
    assert!(json["version"].is_string());
    assert!(json["events"].as_u64().unwrap() > 0);
    // Wall times go to the terminal, not to a file that is committed.
    assert!(
        json.get("wall_time_s").is_none(),
        "summary.json holds a wall time"
    );
    assert_eq!(json["variants"].as_array().unwrap().len(), 4);
    let svg = read(&dir.path().join("comparison.svg"));
    assert!(svg.starts_with("<svg"));
    // The report page shows every variant and every chart that was drawn.
    let html = read(&dir.path().join("index.html"));
    for needle in [
        "<img src=\"comparison.svg\"",
        "<img src=\"load.svg\"",
        "<img src=\"zombies.svg\"",
        "<img src=\"wasted.svg\"",
        "end-to-end-deadline",
    ] {
        assert!(html.contains(needle), "index.html lacks {needle}");
    }
    assert!(
        !html.contains("timeline.svg"),
        "no timeline was drawn for this model"
    );
    // No parallel step: no branches chart, on disk, on the page or in the
    // list of what was written.
    assert!(!html.contains("branches.svg"));
    assert!(!stdout.contains("branches.svg"), "{stdout}");
    // Nothing half-written is left behind.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            ".stormsim-manifest.json",
            "comparison.svg",
            "index.html",
            "latency.csv",
            "load.svg",
            "summary.csv",
            "summary.json",
            "summary.tidy.csv",
            "timeseries.csv",
            "timeseries.tidy.csv.gz",
            "wasted.svg",
            "zombies.svg"
        ]
    );
}

/// A model with a parallel step gets `branches.svg`: the page's p50 and p99
/// end to end beside each branch's, on index.html after the comparison and
/// in the list of files `run` prints.
#[test]
fn a_model_with_parallel_steps_gets_the_branches_chart() {
    let dir = tempfile::tempdir().unwrap();
    let out = stormsim(
        &[
            "run",
            model("parallel-page.json").to_str().unwrap(),
            "--out",
            dir.path().to_str().unwrap(),
        ],
        &[],
    );
    assert_ok(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let written = stdout
        .lines()
        .find(|l| l.starts_with("wrote "))
        .unwrap_or_else(|| panic!("no list of outputs in {stdout}"));
    assert!(written.contains(", branches.svg, index.html}"), "{written}");

    let svg = read(&dir.path().join("branches.svg"));
    assert!(svg.starts_with("<svg"));
    for needle in [
        ">\nwait-for-all\n<",
        ">\nreviews-optional\n<",
        ">\nend to end\n<",
        ">\npage → inventory\n<",
        ">\npage → pricing\n<",
        ">\npage → reviews\n<",
        "over the slowest branch",
        "slowest branch: p99 ",
    ] {
        assert!(svg.contains(needle), "branches.svg lacks {needle:?}");
    }
    // The numbers are summary.json's: the page's succeeded requests, and
    // the reviews branch (the slowest when the page waits for all).
    let json: Value = serde_json::from_str(&read(&dir.path().join("summary.json"))).unwrap();
    let all = &json["variants"][0];
    assert_eq!(all["variant"], "wait-for-all");
    let ms = |v: &Value| stormsim_plot::style::format_ms(v.as_f64().unwrap());
    let reviews = all["edges"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["caller"] == "page" && e["callee"] == "reviews")
        .expect("the reviews branch");
    assert!(svg.contains(&format!("p99 {} · ", ms(&all["ok_latency_ms"]["p99"]))));
    assert!(svg.contains(&format!(
        "slowest branch: p99 {}",
        ms(&reviews["latency_ms"]["p99"])
    )));

    let html = read(&dir.path().join("index.html"));
    let at = |file: &str| {
        html.find(&format!("<img src=\"{file}\""))
            .unwrap_or_else(|| panic!("index.html lacks {file}"))
    };
    assert!(at("comparison.svg") < at("branches.svg"));
    assert!(at("branches.svg") < at("load.svg"));
}

/// The files a run of the deadline chain writes, whose bytes the tests
/// below compare.
const RUN_FILES: [&str; 11] = [
    "summary.json",
    "summary.csv",
    "summary.tidy.csv",
    "timeseries.csv",
    "timeseries.tidy.csv.gz",
    "latency.csv",
    "comparison.svg",
    "load.svg",
    "zombies.svg",
    "wasted.svg",
    "index.html",
];

#[test]
fn same_model_and_seed_give_the_same_bytes_whatever_the_thread_count() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    run_into(a.path(), &[], &[("RAYON_NUM_THREADS", "1")]);
    run_into(b.path(), &[], &[("RAYON_NUM_THREADS", "2")]);
    for f in RUN_FILES {
        assert!(
            read_bytes(&a.path().join(f)) == read_bytes(&b.path().join(f)),
            "{f} differs"
        );
    }
}

#[test]
fn another_seed_gives_another_run() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    run_into(a.path(), &["--seed", "1"], &[]);
    run_into(b.path(), &["--seed", "2"], &[]);
    assert_ne!(
        read(&a.path().join("summary.csv")),
        read(&b.path().join("summary.csv"))
    );
    let json: Value = serde_json::from_str(&read(&b.path().join("summary.json"))).unwrap();
    assert_eq!(json["seed"], 2);
}

/// Golden files: the reference outputs committed under `outputs/` regenerate
/// byte for byte. After an intended change, regenerate them with the README's
/// main command and commit the diff.
#[test]
fn committed_reference_outputs_regenerate_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    run_into(dir.path(), &[], &[]);
    let golden = root().join("outputs/deadline-chain");
    for f in RUN_FILES {
        assert!(
            read_bytes(&golden.join(f)) == read_bytes(&dir.path().join(f)),
            "outputs/deadline-chain/{f} is stale: run `cargo run --release -- run models/deadline-chain.json` and commit it"
        );
    }
}

#[test]
fn set_overrides_every_variant() {
    let dir = tempfile::tempdir().unwrap();
    run_into(dir.path(), &["--set", "workloads[users].requests=50"], &[]);
    let json: Value = serde_json::from_str(&read(&dir.path().join("summary.json"))).unwrap();
    for v in json["variants"].as_array().unwrap() {
        assert_eq!(v["requests"], 50);
    }
}

/// A run's `--set` overrides are recorded in summary.json and shown on
/// index.html (and `plot` draws the page again with them); a run without any
/// writes no `overrides` key, so the model's reference outputs keep their bytes.
#[test]
fn a_runs_overrides_are_recorded_and_shown() {
    let dir = tempfile::tempdir().unwrap();
    let with = dir.path().join("with");
    run_into(
        &with,
        &[
            "--set",
            "workloads[users].requests=50",
            "--set",
            " services[A].steps[B].context = background ",
        ],
        &[],
    );
    let json: Value = serde_json::from_str(&read(&with.join("summary.json"))).unwrap();
    assert_eq!(
        json["overrides"],
        serde_json::json!([
            "workloads[users].requests=50",
            "services[A].steps[B].context=background"
        ])
    );
    let html = read(&with.join("index.html"));
    assert!(
        html.contains("<code>workloads[users].requests=50</code>"),
        "{html}"
    );
    // `plot` reads them back: the same page.
    std::fs::remove_file(with.join("index.html")).unwrap();
    assert_ok(&stormsim(&["plot", with.to_str().unwrap()], &[]));
    assert_eq!(read(&with.join("index.html")), html);

    let without = dir.path().join("without");
    run_into(&without, &[], &[]);
    let text = read(&without.join("summary.json"));
    assert!(
        !text.contains("\"overrides\""),
        "no overrides key without --set"
    );
    assert!(!read(&without.join("index.html")).contains("overrides"));
}

/// `run --set` into the model's default folder (outputs/<name>/) replaces the
/// reference outputs there: a warning says so; into another folder, none.
#[test]
fn a_run_with_overrides_into_the_default_folder_warns() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(model("deadline-chain.json"), dir.path().join("m.json")).unwrap();
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_stormsim"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_ok(&out);
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let set = ["--set", "workloads[users].requests=20", "--quiet"];
    let stderr = run(&[&["run", "m.json"][..], &set].concat());
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("warning:"))
        .collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(warnings[0].contains("outputs/deadline-chain"), "{stderr}");
    let json: Value = serde_json::from_str(&read(
        &dir.path().join("outputs/deadline-chain/summary.json"),
    ))
    .unwrap();
    assert_eq!(json["overrides"][0], "workloads[users].requests=20");
    // The same folder named with --out is still the default folder.
    let stderr = run(&[
        &["run", "m.json", "--out", "./outputs/deadline-chain/"][..],
        &set,
    ]
    .concat());
    assert!(stderr.contains("warning:"), "{stderr}");
    // Elsewhere, or without --set: no warning.
    let stderr = run(&[&["run", "m.json", "--out", "elsewhere"][..], &set].concat());
    assert!(!stderr.contains("warning:"), "{stderr}");
    let stderr = run(&["run", "m.json", "--quiet"]);
    assert!(!stderr.contains("warning:"), "{stderr}");
}

#[test]
fn check_accepts_every_bundled_model() {
    for entry in std::fs::read_dir(root().join("models")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json")
            && !path.to_string_lossy().contains(".sweep.")
        {
            let out = stormsim(&["check", path.to_str().unwrap()], &[]);
            assert!(
                out.status.success(),
                "{}: {}",
                path.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

#[test]
fn a_bad_model_exits_2_with_every_problem_and_no_panic() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        r#"{
          "name": "bad",
          "workloads": [{"name": "u", "target": "gw", "arrival": {"kind": "poisson", "rate_per_s": -1}, "requests": 5}],
          "services": [
            {"name": "gw", "steps": [{"call": "C"}]},
            {"name": "B", "steps": [{"work": {"kind": "mixture", "of": [{"p": 0.5, "dist": {"kind": "constant", "ms": 1}}]}}]}
          ]
        }"#,
    )
    .unwrap();
    for cmd in ["check", "run"] {
        let out = stormsim(
            &[cmd, bad.to_str().unwrap(), "--set", "services[B].workers=0"],
            &[],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        for expected in [
            "4 problems found",
            "workloads[0].arrival.rate_per_s: expected a positive number, got -1",
            "services[0].steps[0].call: unknown service \"C\"",
            "services[1].steps[0].work.of: expected probabilities summing to 1, got 0.5",
            "services[1].workers: expected at least 1 worker, got 0",
        ] {
            assert!(
                stderr.contains(expected),
                "missing {expected:?} in:\n{stderr}"
            );
        }
    }
    std::fs::write(&bad, "{ not json").unwrap();
    let out = stormsim(&["check", bad.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid JSON at line 1, column 3"));
    let out = stormsim(&["check", "no/such/model.json"], &[]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a missing model is the user's input"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("no/such/model.json"));
    let out = stormsim(
        &[
            "check",
            model("deadline-chain.json").to_str().unwrap(),
            "--set",
            "oops",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected PATH=VALUE"));
}

/// An unstable model (arrivals far above capacity, unbounded queue) stops at
/// its in-flight limit with a message naming the limit and a partial report,
/// instead of exhausting memory.
#[test]
fn an_unstable_model_stops_at_its_limit_with_a_partial_report() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("unstable.json");
    std::fs::write(
        &model,
        r#"{
          "name": "unstable",
          "limits": {"max_in_flight": 5000},
          "workloads": [{"name": "flood", "target": "s",
                         "arrival": {"kind": "poisson", "rate_per_s": 1000}, "duration_s": 3600}],
          "services": [{"name": "s", "workers": 1,
                        "steps": [{"work": {"kind": "constant", "ms": 10}}]}]
        }"#,
    )
    .unwrap();
    let out = dir.path().join("out");
    let run = stormsim_into("run", &model, &out, &[]);
    // The outputs are written, and the exit code says they are partial.
    assert_eq!(run.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("limits.max_in_flight"), "{stderr}");
    assert!(stderr.contains("--accept-partial"), "{stderr}");
    let json: Value = serde_json::from_str(&read(&out.join("summary.json"))).unwrap();
    let stopped = json["variants"][0]["stopped_by_limit"].as_str().unwrap();
    assert!(stopped.contains("partial"), "{stopped}");
    assert!(json["variants"][0]["requests"].as_u64().unwrap() < 3_600_000);
}

/// `run --variant` runs only the variants named, each with the same bytes as
/// in the whole run (randomness is keyed by the variant's name, not its
/// place), and refuses a name the model does not have, listing those it has.
#[test]
fn run_can_run_one_variant_with_the_bytes_of_the_whole_run() {
    let dir = tempfile::tempdir().unwrap();
    let (all, one) = (dir.path().join("all"), dir.path().join("one"));
    let chain = model("deadline-chain.json");
    assert_ok(&stormsim_into("run", &chain, &all, &[]));
    assert_ok(&stormsim_into(
        "run",
        &chain,
        &one,
        &["--variant", "per-tier-retries"],
    ));
    let rows = |d: &Path| -> Vec<String> {
        read(&d.join("summary.csv"))
            .lines()
            .filter(|l| l.starts_with("per-tier-retries,"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(rows(&one), rows(&all));
    assert_eq!(
        read(&one.join("summary.csv")).lines().count(),
        2,
        "a header and one row"
    );
    let bad = stormsim_into(
        "run",
        &chain,
        &dir.path().join("bad"),
        &["--variant", "nope"],
    );
    assert_eq!(bad.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains("no variant named \"nope\"") && stderr.contains("per-tier-retries"),
        "{stderr}"
    );
}

/// A run cut before its trigger ends gets no recovery verdict: `run` says why
/// once, and summary.json carries the reason with the verdict's columns empty
/// (it read as "metastable" in every variant).
#[test]
fn a_run_too_short_to_judge_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("short.json");
    std::fs::write(
        &model,
        r#"{
          "name": "short",
          "horizon_s": 30,
          "workloads": [{"name": "u", "target": "s",
                         "arrival": {"kind": "poisson", "rate_per_s": 100}, "duration_s": 30}],
          "services": [{"name": "s", "workers": 4,
                        "steps": [{"work": {"kind": "constant", "ms": 10}}]}],
          "timeline": [
            {"name": "slow", "at_s": 15, "role": "trigger_start",
             "set": {"services[s].steps[0].work.ms": 100}},
            {"name": "fixed", "at_s": 60, "role": "trigger_end",
             "set": {"services[s].steps[0].work.ms": 10}}],
          "metastability": {"baseline_from_s": 1}
        }"#,
    )
    .unwrap();
    let out = dir.path().join("out");
    let run = stormsim_into("run", &model, &out, &[]);
    assert_ok(&run);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("no recovery verdict for any variant") && stderr.contains("horizon_s"),
        "{stderr}"
    );
    let json: Value = serde_json::from_str(&read(&out.join("summary.json"))).unwrap();
    let v = &json["variants"][0];
    assert_eq!(v["verdict"]["outcome"], "undetermined", "{v}");
    assert!(v["verdict"]["recovery_s"].is_null(), "{v}");
    assert!(v["storm_offered_rps"].is_null(), "{v}");
    assert!(v["verdict"]["reason"].as_str().is_some(), "{v}");
    // The page says it too, with the reason, not a dash as for no analysis.
    let page = read(&out.join("index.html"));
    assert!(
        page.contains("<td>undetermined</td>") && page.contains("lengthen horizon_s"),
        "{page}"
    );
}

/// A sweep's tables are the same bytes whatever the thread count, and replicas
/// use common random numbers: replication r has the same seed at every point.
#[test]
fn a_sweep_is_deterministic_whatever_the_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = write_json(
        &dir.path().join("s.json"),
        serde_json::json!({
            "name": "s",
            "model": model("deadline-chain.json"),
            "variant": "per-tier-timeouts",
            "replications": 3,
            "axes": [{"path": "services[gateway].steps[A].timeout_ms",
                      "values": [10, 250, 500]}]
        }),
    );
    let mut tables = Vec::new();
    for jobs in ["1", "2"] {
        let out = dir.path().join(format!("out{jobs}"));
        assert_ok(&stormsim_into("sweep", &sweep, &out, &["--jobs", jobs]));
        tables.push((
            read(&out.join("results.csv")),
            read(&out.join("aggregate.csv")),
        ));
    }
    assert_eq!(tables[0], tables[1]);
    let results = &tables[0].0;
    assert_eq!(results.lines().count(), 1 + 9);
    let seeds: Vec<&str> = results
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(2).unwrap())
        .collect();
    assert_eq!(
        seeds[0], seeds[3],
        "replication 0 has one seed at every point"
    );
    assert_ne!(seeds[0], seeds[1]);
    // A gateway timeout under B's fast path (10 ms) fails everything, 250 ms
    // lets only the fast 70% through, 500 ms everyone: the axis wins over the
    // variant's own 250 ms.
    let aggregate = &tables[0].1;
    let header: Vec<&str> = aggregate.lines().next().unwrap().split(',').collect();
    let col = header
        .iter()
        .position(|h| *h == "success_rate.mean")
        .unwrap();
    let success: Vec<f64> = aggregate
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(col).unwrap().parse().unwrap())
        .collect();
    assert_eq!(success[0], 0.0, "{success:?}");
    assert!(success[1] > 0.5 && success[1] < 0.9, "{success:?}");
    assert_eq!(success[2], 1.0, "{success:?}");
}

/// An interrupted sweep, resumed (even with a line cut in the middle), ends
/// with the same bytes as an uninterrupted one.
#[test]
fn a_resumed_sweep_ends_with_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = write_json(
        &dir.path().join("s.json"),
        serde_json::json!({
            "name": "s",
            "model": model("deadline-chain.json"),
            "variant": "per-tier-retries",
            "replications": 3,
            "axes": [{"path": "services[A].steps[B].timeout_ms", "values": [100, 300, 500]}]
        }),
    );
    let sweep_into = |out: &Path, extra: &[&str]| {
        assert_ok(&stormsim_into("sweep", &sweep, out, extra));
    };
    let whole = dir.path().join("whole");
    sweep_into(&whole, &[]);
    let pieces = dir.path().join("pieces");
    sweep_into(&pieces, &["--max-runs", "4"]);
    assert!(
        !pieces.join("results.csv").exists(),
        "no finished table before the end"
    );
    assert!(!pieces.join("aggregate.csv").exists());
    // An interruption in the middle of a line.
    let partial = pieces.join("results.csv.partial");
    let mut text = read(&partial);
    text.push_str("4,1,12345,30");
    std::fs::write(&partial, text).unwrap();
    sweep_into(&pieces, &["--resume", "--max-runs", "2"]);
    sweep_into(&pieces, &["--resume"]);
    for f in ["results.csv", "aggregate.csv"] {
        assert_eq!(read(&whole.join(f)), read(&pieces.join(f)), "{f} differs");
    }
    assert!(!partial.exists());
}

#[test]
fn a_bad_sweep_names_its_problems_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = write_json(
        &dir.path().join("bad.json"),
        serde_json::json!({
            "name": "bad",
            "model": model("deadline-chain.json"),
            "axes": [{"path": "services[C].workers", "values": [1]},
                     {"values": [1, 2]}]
        }),
    );
    let run = stormsim(&["sweep", sweep.to_str().unwrap()], &[]);
    assert_eq!(run.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("axes[1]: a `variants` axis has no `path`"),
        "{stderr}"
    );
}

/// A sweep may carry its model inline: the same runs as from the model's file,
/// and an error inside it is named by its path under `model`.
#[test]
fn a_sweep_with_its_model_inline_runs_as_one_with_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = model("deadline-chain.json");
    let inline: Value = serde_json::from_str(&read(&file)).unwrap();
    let results = |name: &str, model: Value| {
        let sweep = write_json(
            &dir.path().join(format!("{name}.json")),
            serde_json::json!({
                "name": name,
                "model": model,
                "variant": "per-tier-timeouts",
                "axes": [{"path": "services[gateway].steps[A].timeout_ms", "values": [10, 500]}]
            }),
        );
        let out = dir.path().join(name);
        let run = stormsim_into("sweep", &sweep, &out, &[]);
        (run, out.join("results.csv"))
    };
    let (by_file, file_results) = results("by-file", Value::from(file.to_str().unwrap()));
    let (by_value, inline_results) = results("inline", inline.clone());
    assert!(by_file.status.success() && by_value.status.success());
    assert_eq!(read(&file_results), read(&inline_results));

    let mut broken = inline;
    broken["services"][0]["workers"] = Value::from(-1);
    let (run, _) = results("broken", broken);
    assert_eq!(run.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("model: services[0].workers"), "{stderr}");
}

/// The search brackets a tipping point: in S1's per-tier-timeouts variant the
/// gateway's timeout decides whether the fast 70% of requests get through, and
/// the fast path takes 12.5 ms from the gateway's send (0.5 ms hops and 0.5 ms
/// of work at A around B's 10 ms). Below it success is 0, above it about 0.7.
#[test]
fn a_search_brackets_the_tipping_point() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = write_json(
        &dir.path().join("s.json"),
        serde_json::json!({
            "name": "s",
            "model": model("deadline-chain.json"),
            "variant": "per-tier-timeouts",
            "replications": 2,
            "search": {"path": "services[gateway].steps[A].timeout_ms", "from": 5, "to": 300,
                       "metric": "success_rate", "threshold": 0.35, "tolerance": 0.25}
        }),
    );
    let out = dir.path().join("out");
    let run = stormsim_into("search", &sweep, &out, &[]);
    assert_ok(&run);
    let stdout = String::from_utf8_lossy(&run.stdout);
    let numbers: Vec<f64> = stdout
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter_map(|w| w.parse().ok())
        .collect();
    // "... between PATH = LOW and HIGH ...": the two numbers after the threshold.
    let (low, high) = (numbers[1], numbers[2]);
    assert!(high - low <= 0.25 + 1e-9, "{stdout}");
    assert!(low <= 12.5 && 12.5 <= high, "{stdout}");
    let csv = read(&out.join("search.csv"));
    assert!(csv.lines().count() >= 4, "{csv}");
}

/// The Catalog incident at 1/40 scale (200 req/s against 5 workers, 60%
/// busy, a queue of 1.5 s of work, 300 s), for margins that run in seconds.
fn small_catalog_margin(dir: &Path, margin: Value) -> PathBuf {
    write_json(
        &dir.join("m.json"),
        serde_json::json!({
            "name": "m",
            "model": model("catalog-incident.json"),
            "replications": 4,
            "set": {
                "workloads[*].arrival.rate_per_s": 10,
                "workloads[*].duration_s": 300,
                "horizon_s": 300,
                "services[catalog].workers": 5,
                "services[catalog].queue_capacity": 500,
                "timeline[2].at_s": 240,
                "timeline[3].at_s": 270
            },
            "margin": margin
        }),
    )
}

/// The margin finds where half the runs storm as the bad deploy lasts
/// longer: a crossing inside its interval, whose ends are probes surely on
/// their sides; the same bytes on a second run (every probe's replications
/// have the seeds they always have); a sentence, a tidy table and a chart.
#[test]
fn a_margin_finds_the_trigger_that_tips_half_the_runs() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = small_catalog_margin(
        dir.path(),
        serde_json::json!({
            "trigger": {"from": 0.25, "to": 12.25, "tolerance": 1.0},
            "load_scale": [1.0],
            "stop": {"max_replications": 16}
        }),
    );
    let out = dir.path().join("out");
    let run = stormsim_into("margin", &sweep, &out, &[]);
    assert_ok(&run);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        stdout.contains("a trigger duration (s) of") && stdout.contains("in half the runs"),
        "{stdout}"
    );
    let table = read(&out.join("margin.csv"));
    let mut rows = csv::Reader::from_reader(table.as_bytes());
    let header = rows.headers().unwrap().clone();
    let row = rows.records().next().unwrap().unwrap();
    let get = |name: &str| row[header.iter().position(|h| h == name).unwrap()].to_string();
    let (critical, low, high): (f64, f64, f64) = (
        get("critical").parse().unwrap(),
        get("ci_low").parse().unwrap(),
        get("ci_high").parse().unwrap(),
    );
    assert!(low <= critical && critical <= high, "{table}");
    assert!(0.25 < critical && critical < 12.25, "{table}");
    assert_eq!(get("level"), "0.5");
    // The interval's ends are probes surely on their sides.
    let probes = read(&out.join("margin_probes.csv"));
    let sure = |value: f64, below: bool| {
        probes.lines().skip(1).any(|line| {
            let cells: Vec<&str> = line.split(',').collect();
            let (v, lo, hi): (f64, f64, f64) = (
                cells[2].parse().unwrap(),
                cells[4].parse().unwrap(),
                cells[5].parse().unwrap(),
            );
            v == value && if below { hi < 0.5 } else { lo >= 0.5 }
        })
    };
    if get("low_sure") == "true" {
        assert!(sure(low, true), "{probes}");
    }
    if get("high_sure") == "true" {
        assert!(sure(high, false), "{probes}");
    }
    assert!(out.join("margin.svg").exists());
    let page = read(&out.join("index.html"));
    assert!(
        page.contains("margin.svg") && page.contains("in half the runs"),
        "{page}"
    );
    let again = dir.path().join("again");
    assert_ok(&stormsim_into("margin", &sweep, &again, &[]));
    assert_eq!(table, read(&again.join("margin.csv")));
    assert_eq!(probes, read(&again.join("margin_probes.csv")));
}

/// A margin of a model file, from its flags: the error spike with retries
/// at its own load crosses 50% inside the range searched.
#[test]
fn a_margin_of_a_model_file_takes_its_range_from_flags() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let model = model("error-spike.json");
    let flags = [
        "--from",
        "1",
        "--to",
        "30",
        "--variant",
        "retries",
        "--max-replications",
        "16",
    ];
    let run = stormsim_into("margin", &model, &out, &flags);
    assert_ok(&run);
    let table = read(&out.join("margin.csv"));
    let mut rows = csv::Reader::from_reader(table.as_bytes());
    let header = rows.headers().unwrap().clone();
    let row = rows.records().next().unwrap().unwrap();
    let critical: f64 = row[header.iter().position(|h| h == "critical").unwrap()]
        .parse()
        .unwrap();
    assert!((1.0..30.0).contains(&critical), "{table}");
    assert!(read(&out.join("sweep.json")).contains("error-spike.json"));
}

/// A margin's problems are all said at once, with their paths, exit 2.
#[test]
fn a_margin_says_every_problem_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = small_catalog_margin(
        dir.path(),
        serde_json::json!({
            "trigger": {"from": 5, "to": 1},
            "load_scale": [1.0],
            "levels": [1.5],
            "variants": ["nope"]
        }),
    );
    let run = stormsim_into("margin", &sweep, &dir.path().join("out"), &[]);
    assert_eq!(run.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&run.stderr);
    for expected in ["margin.levels[0]", "margin.trigger", "margin.variants[0]"] {
        assert!(stderr.contains(expected), "{expected}: {stderr}");
    }
    // A model file's flags with a sweep file are refused, not ignored.
    let flagged = stormsim_into("margin", &sweep, &dir.path().join("out"), &["--from", "1"]);
    assert_eq!(flagged.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&flagged.stderr).contains("--from"));
    // `check` says the same, before anything runs.
    let checked = stormsim(&["check", sweep.to_str().unwrap()], &[]);
    assert_eq!(checked.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&checked.stderr), stderr);
}

/// `stormsim probability`: each variant's share of storms over its runs,
/// with an interval that holds it; a bad variant name is a problem, exit 2.
#[test]
fn probability_counts_storms_per_variant() {
    let sets = [
        "--set=workloads[*].arrival.rate_per_s=10",
        "--set=workloads[*].duration_s=300",
        "--set=horizon_s=300",
        "--set=services[catalog].workers=5",
        "--set=services[catalog].queue_capacity=500",
        "--set=timeline[1].at_s=61.5",
        "--set=timeline[2].at_s=240",
        "--set=timeline[3].at_s=270",
    ];
    let model = model("catalog-incident.json");
    let mut args = vec![
        "probability",
        model.to_str().unwrap(),
        "--runs",
        "20",
        "--csv",
    ];
    args.extend(["--variant", "baseline", "--variant", "retry-budget"]);
    args.extend(sets);
    let run = stormsim(&args, &[]);
    assert_ok(&run);
    let table = String::from_utf8_lossy(&run.stdout).to_string();
    let mut rows = csv::Reader::from_reader(table.as_bytes());
    let header = rows.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let records: Vec<csv::StringRecord> = rows.records().map(Result::unwrap).collect();
    assert_eq!(records.len(), 2, "{table}");
    for r in &records {
        let (p, lo, hi): (f64, f64, f64) = (
            r[col("p_storm")].parse().unwrap(),
            r[col("ci95_low")].parse().unwrap(),
            r[col("ci95_high")].parse().unwrap(),
        );
        assert!(lo <= p && p <= hi, "{table}");
        let storms: f64 = r[col("storms")].parse().unwrap();
        assert_eq!(p, storms / 20.0);
    }
    // A 1.5 s bad deploy at this scale storms in most runs; a retry budget
    // keeps every run out of the storm.
    assert!(
        records[0][col("p_storm")].parse::<f64>().unwrap() > 0.5,
        "{table}"
    );
    assert_eq!(&records[1][col("p_storm")], "0", "{table}");

    let bad = stormsim(
        &["probability", model.to_str().unwrap(), "--variant", "nope"],
        &[],
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no variant \"nope\""));
}

/// A search that stops replications when sure: probes far from the
/// crossing stop at their first look or soon after, probes near it run on,
/// and search.csv says why each stopped.
#[test]
fn a_search_adds_replications_only_where_unsure() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = small_catalog_margin(dir.path(), serde_json::json!(null));
    let mut doc: Value = serde_json::from_str(&read(&sweep)).unwrap();
    let fields = doc.as_object_mut().unwrap();
    fields.remove("margin");
    fields.insert(
        "search".into(),
        serde_json::json!({"path": "timeline[1].at_s", "from": 60.25, "to": 72.25,
                           "metric": "metastable", "threshold": 0.5, "tolerance": 0.1,
                           "stop": {"max_replications": 32}}),
    );
    let sweep = write_json(&dir.path().join("s.json"), doc);
    let out = dir.path().join("out");
    assert_ok(&stormsim_into("search", &sweep, &out, &[]));
    let csv = read(&out.join("search.csv"));
    let rows: Vec<Vec<String>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    let used: Vec<usize> = rows.iter().map(|r| r[4].parse().unwrap()).collect();
    assert!(
        rows.iter()
            .all(|r| ["sure", "cap"].contains(&r[7].as_str())),
        "{csv}"
    );
    assert!(used.iter().all(|n| (4..=32).contains(n)), "{csv}");
    // The ends of the range are plain; the probes around the crossing are not.
    assert!(used[0] < 32 && used[1] < 32, "{csv}");
    assert!(used.iter().max() > used.iter().min(), "{csv}");
}

/// A sweep that stops replications when sure: a point far from the
/// threshold stops early, one near it runs on; aggregate.csv counts each
/// point's replications; the runs are those a fixed count would have made
/// (same seeds); --resume is refused with a reason.
#[test]
fn a_sweep_adds_replications_only_where_unsure() {
    let dir = tempfile::tempdir().unwrap();
    let base = small_catalog_margin(dir.path(), serde_json::json!(null));
    let mut doc: Value = serde_json::from_str(&read(&base)).unwrap();
    let fields = doc.as_object_mut().unwrap();
    fields.remove("margin");
    fields.insert(
        "axes".into(),
        serde_json::json!([{"path": "timeline[1].at_s", "name": "rollback_at_s",
                             "values": [60.25, 61.3, 72.25]}]),
    );
    fields.insert("stop".into(), serde_json::json!({"max_replications": 32}));
    let sweep = write_json(&dir.path().join("s.json"), doc.clone());
    let out = dir.path().join("out");
    assert_ok(&stormsim_into("sweep", &sweep, &out, &[]));
    let aggregate = read(&out.join("aggregate.csv"));
    let mut rows = csv::Reader::from_reader(aggregate.as_bytes());
    let header = rows.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let reps: Vec<u32> = rows
        .records()
        .map(|r| r.unwrap()[col("replications")].parse().unwrap())
        .collect();
    assert_eq!(reps.len(), 3, "{aggregate}");
    assert!(reps.iter().all(|n| (4..=32).contains(n)), "{aggregate}");
    assert!(
        reps[0] < 32 && reps[2] < 32,
        "the plain ends ran on: {aggregate}"
    );
    assert!(
        reps[1] > reps[0] && reps[1] > reps[2],
        "the point near 50% did not: {aggregate}"
    );
    // Its first replications are the fixed-count sweep's runs.
    let fixed_dir = dir.path().join("fixed");
    std::fs::create_dir(&fixed_dir).unwrap();
    let mut fixed = doc;
    fixed.as_object_mut().unwrap().remove("stop");
    let fixed = write_json(&fixed_dir.join("s.json"), fixed);
    let fixed_out = dir.path().join("fixed-out");
    assert_ok(&stormsim_into("sweep", &fixed, &fixed_out, &[]));
    let first_rows = |csv: &str| -> Vec<String> {
        csv.lines()
            .filter(|l| {
                let cells: Vec<&str> = l.split(',').collect();
                cells.len() > 1 && ["0", "1", "2", "3"].contains(&cells[1])
            })
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        first_rows(&read(&out.join("results.csv"))),
        first_rows(&read(&fixed_out.join("results.csv")))
    );
    let resumed = stormsim_into("sweep", &sweep, &out, &["--resume"]);
    assert_eq!(resumed.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&resumed.stderr).contains("runs whole"));

    // A stop of a metric no run reports, capped below the first batch: both
    // said at once.
    let mut bad: Value = serde_json::from_str(&read(&sweep)).unwrap();
    bad["stop"] = serde_json::json!({"max_replications": 2, "metric": "nope"});
    let bad = write_json(&dir.path().join("bad.json"), bad);
    let run = stormsim(&["check", bad.to_str().unwrap()], &[]);
    assert_eq!(run.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("stop.metric") && stderr.contains("stop.max_replications"),
        "{stderr}"
    );
}

/// A sweep of 4 points × 2 replications of the deadline chain, in `dir`.
fn eight_run_sweep(dir: &Path) -> PathBuf {
    write_json(
        &dir.join("s.json"),
        serde_json::json!({
            "name": "s",
            "model": model("deadline-chain.json"),
            "variant": "per-tier-retries",
            "replications": 2,
            "axes": [{"path": "services[A].steps[B].timeout_ms", "values": [100, 300, 500, 700]}]
        }),
    )
}

/// Shards run as separate processes (one through `auto/N` and the variable a
/// Kubernetes indexed job sets), merged, give the unsharded sweep's bytes.
#[test]
fn merged_shards_equal_the_unsharded_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = eight_run_sweep(dir.path());
    let s = sweep.to_str().unwrap();
    let whole = dir.path().join("whole");
    let ok = |out: Output| {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        )
    };
    ok(stormsim(
        &["sweep", s, "--out", whole.to_str().unwrap(), "--quiet"],
        &[],
    ));
    let shard = |i: usize| dir.path().join(format!("shard{i}"));
    for i in 0..3 {
        let out = shard(i);
        if i == 1 {
            let env = [("JOB_COMPLETION_INDEX", "1")];
            ok(stormsim(
                &[
                    "sweep",
                    s,
                    "--shard",
                    "auto/3",
                    "--out",
                    out.to_str().unwrap(),
                    "--quiet",
                ],
                &env,
            ));
        } else {
            let spec = format!("{i}/3");
            ok(stormsim(
                &[
                    "sweep",
                    s,
                    "--shard",
                    &spec,
                    "--out",
                    out.to_str().unwrap(),
                    "--quiet",
                ],
                &[],
            ));
        }
    }
    let merged = dir.path().join("merged");
    let (a, b, c) = (shard(0), shard(1), shard(2));
    ok(stormsim(
        &[
            "merge",
            s,
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            c.to_str().unwrap(),
            "--out",
            merged.to_str().unwrap(),
        ],
        &[],
    ));
    for f in ["results.csv", "aggregate.csv", "sweep.svg"] {
        assert_eq!(read(&whole.join(f)), read(&merged.join(f)), "{f} differs");
    }
    // A missing shard is named, not silently merged.
    let out = stormsim(
        &[
            "merge",
            s,
            a.to_str().unwrap(),
            "--out",
            merged.to_str().unwrap(),
        ],
        &[],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("runs"));
}

/// A shard's log, as a cluster job keeps it, counts the shard's runs against
/// the sweep's: the whole sweep's size, the shard's runs, its progress over
/// them alone, also when it was interrupted and resumed (as a requeued task is).
#[test]
fn a_shards_progress_counts_its_own_runs() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = eight_run_sweep(dir.path());
    let out = dir.path().join("shard1");
    let run = |extra: &str| {
        let args = [
            "sweep",
            sweep.to_str().unwrap(),
            "--shard",
            "auto/3",
            "--out",
            out.to_str().unwrap(),
            extra,
        ];
        let output = stormsim(&args, &[("SLURM_ARRAY_TASK_ID", "1")]);
        let (stdout, stderr) = (
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        );
        assert!(output.status.success(), "{stderr}");
        (stdout, stderr)
    };
    // 8 runs in 3 shards: shard 1 holds runs 2, 3 and 4.
    let (stdout, stderr) = run("--max-runs=1");
    assert!(
        stderr.contains("4 points × 2 replications = 8 runs"),
        "{stderr}"
    );
    assert!(stderr.contains("shard 1/3: runs 2 to 4\n"), "{stderr}");
    assert!(
        stdout.contains("1/3 runs done; continue with --resume"),
        "{stdout}"
    );
    let (stdout, stderr) = run("--resume");
    assert!(stderr.contains("  3/3 runs,"), "{stderr}");
    assert!(
        stdout.contains("shard 1/3 (runs 2 to 4) done in"),
        "{stdout}"
    );
}

/// `stormsim validate`, shortened: the table on stdout, exit 0, and a
/// validation.csv that is the same bytes on a second run (no wall time in it).
/// That every row passes at a useful length is the validate crate's own test.
#[test]
fn validate_prints_the_table_and_writes_the_same_csv_every_run() {
    let dir = tempfile::tempdir().unwrap();
    let run = |out: &Path| {
        stormsim(
            &[
                "validate",
                "--replications",
                "3",
                "--duration-scale",
                "0.1",
                "--out",
                out.to_str().unwrap(),
            ],
            &[],
        )
    };
    let (first, second) = (dir.path().join("a"), dir.path().join("b"));
    let out = run(&first);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.starts_with("quantity"), "{table}");
    assert!(table.contains("M/M/5/5 ρ=0.95 P(block)"), "{table}");
    run(&second);
    let csv = read(&first.join("validation.csv"));
    assert_eq!(csv, read(&second.join("validation.csv")));
    assert!(csv.starts_with("model,variant,queue,utilisation,quantity,analytic,simulated,"));
    assert_eq!(csv.lines().count(), 1 + 86);

    // A model the formulas do not cover is refused as a bad model, with why.
    let models = dir.path().join("models");
    std::fs::create_dir(&models).unwrap();
    std::fs::write(
        models.join("timeout.json"),
        r#"{"name": "t", "workloads": [{"name": "a", "target": "s", "duration_s": 10,
            "timeout_ms": 5, "arrival": {"kind": "poisson", "rate_per_s": 10}}],
            "services": [{"name": "s", "steps": [{"work": {"kind": "constant", "ms": 1}}]}]}"#,
    )
    .unwrap();
    let out = stormsim(&["validate", "--models", models.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("timeout"));
}

/// `run --attempts` writes attempts.csv: one row per attempt on the wire, the
/// hedge of a slow try among them.
#[test]
fn run_with_attempts_writes_one_row_per_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let model = write_json(
        &dir.path().join("m.json"),
        serde_json::json!({
            "name": "m",
            "workloads": [{"name": "u", "target": "front", "arrival": {"kind": "at_once"}, "requests": 2}],
            "services": [
                {"name": "front", "steps": [{"call": "leaf", "idempotent": true, "hedge": {"delay_ms": 10}}]},
                {"name": "leaf", "instances": 2, "steps": [{"work": {"kind": "constant", "ms": 50}}]}
            ]
        }),
    );
    let out = dir.path().join("out");
    assert_ok(&stormsim_into("run", &model, &out, &["--attempts"]));
    let csv = read(&out.join("attempts.csv"));
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(
        rows[0],
        "variant,request_id,service,shard,replica,attempt_no,hedge,started_ms,finished_ms,outcome"
    );
    // Two requests, each: its try and its hedge at the leaf, one at the front.
    assert_eq!(rows.len(), 1 + 2 * 3, "{csv}");
    assert_eq!(rows.iter().filter(|r| r.ends_with(",cancelled")).count(), 2);
    // Without the flag, no attempts.csv.
    let plain = dir.path().join("plain");
    assert_ok(&stormsim_into("run", &model, &plain, &[]));
    assert!(!plain.join("attempts.csv").exists());
}

/// attempts.csv is streamed to disk as the variants run (memory does not grow
/// with the attempts simulated), yet holds exactly the bytes the in-memory
/// records give, in variant order, with one thread or two.
#[test]
fn streamed_attempts_match_the_records_kept_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_json(
        &dir.path().join("m.json"),
        serde_json::json!({
            "name": "m",
            "seed": 7,
            "workloads": [{"name": "u", "target": "front", "duration_s": 2,
                           "arrival": {"kind": "poisson", "rate_per_s": 200}}],
            "services": [
                {"name": "front", "steps": [{"call": "leaf", "timeout_ms": 30, "idempotent": true,
                    "retry": {"max_attempts": 3, "backoff": {"kind": "fixed", "ms": 5}}}]},
                {"name": "leaf", "instances": 3, "workers": 2,
                 "steps": [{"work": {"kind": "exponential", "mean_ms": 8}}]}
            ],
            "variants": [
                {"name": "plain", "set": {}},
                {"name": "hedged, tied", "set": {"services[front].steps[0].hedge": {"delay_ms": 10}}},
                {"name": "slow leaf", "set": {"services[leaf].steps[0].work": {"kind": "exponential", "mean_ms": 20}}}
            ]
        }),
    );
    let loaded = stormsim_model::load_model(&read(&path), &[], None).unwrap();
    let run = stormsim_sim::RunReport {
        model: loaded.name.clone(),
        description: loaded.description.clone(),
        seed: loaded.seed,
        variants: loaded
            .variants
            .iter()
            .map(|v| {
                stormsim_sim::Simulator::new(&v.model, &v.changes)
                    .record_attempts()
                    .run(&v.name)
            })
            .collect(),
    };
    let expected = run.attempts_csv().unwrap();
    assert!(
        expected.lines().count() > 1000,
        "a test with few rows tests little"
    );
    assert!(
        expected.contains("\"hedged, tied\""),
        "names are quoted as CSV"
    );
    for threads in ["1", "2"] {
        let out = dir.path().join(format!("out-{threads}"));
        let args = [
            "run",
            path.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
            "--attempts",
        ];
        assert_ok(&stormsim(&args, &[("RAYON_NUM_THREADS", threads)]));
        assert!(
            read(&out.join("attempts.csv")) == expected,
            "{threads} thread(s)"
        );
    }
}

/// Re-running into an output folder is explicit: a model may replace its own
/// earlier outputs, but not another model's, nor foreign files, without
/// --force; a sweep does not silently discard an interrupted run.
#[test]
fn writing_into_a_foreign_folder_needs_force() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let run_into = |name: &str, extra: &[&str]| stormsim_into("run", &model(name), &out, extra);
    assert!(run_into("deadline-chain.json", &[]).status.success());
    assert!(
        run_into("deadline-chain.json", &[]).status.success(),
        "its own outputs"
    );
    let other = run_into("load-shedding.json", &[]);
    assert_eq!(other.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&other.stderr)
        .contains("holds the outputs of the model \"deadline-chain\""));
    assert!(run_into("load-shedding.json", &["--force"])
        .status
        .success());

    let foreign = dir.path().join("foreign");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), "mine").unwrap();
    let run = stormsim_into("run", &model("deadline-chain.json"), &foreign, &[]);
    assert_eq!(run.status.code(), Some(2));
    assert_eq!(read(&foreign.join("notes.txt")), "mine");

    let sweep = write_json(
        &dir.path().join("s.json"),
        serde_json::json!({"name": "s", "model": model("deadline-chain.json"),
                           "axes": [{"path": "services[A].steps[B].timeout_ms", "values": [100, 300]}]}),
    );
    let sweep_out = dir.path().join("sweep");
    let sweep_into = |extra: &[&str]| stormsim_into("sweep", &sweep, &sweep_out, extra);
    assert!(sweep_into(&["--max-runs", "1"]).status.success());
    let again = sweep_into(&[]);
    assert_eq!(
        again.status.code(),
        Some(2),
        "an interrupted run is not discarded silently"
    );
    assert!(String::from_utf8_lossy(&again.stderr).contains("--resume"));
    assert!(sweep_into(&["--resume"]).status.success());
    assert!(
        sweep_into(&[]).status.success(),
        "a finished sweep of the same name starts over"
    );
}

/// `stormsim bench … | head` and the like: a reader that stops reading ends
/// the command quietly, as it ends `cat`, instead of a panic on the failed
/// write ("failed printing to stdout: Broken pipe").
#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let m = model("deadline-chain.json");
    for args in [
        vec!["bench", m.to_str().unwrap()],
        vec!["check", m.to_str().unwrap()],
    ] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_stormsim"))
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The reader leaves before the command writes its first line.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("panicked"),
            "{args:?} panicked when its reader left: {stderr}"
        );
        assert!(
            out.status.success() || out.status.signal() == Some(libc::SIGPIPE),
            "{args:?}: {:?}, {stderr}",
            out.status
        );
    }
}
