//! Regression tests of issue 17 ("Hardening"), model side, each named after
//! its reproducer in `shared/repro/` or the problem it describes: models that
//! were accepted silently and must be refused (every problem at its JSON
//! path) or warned about.

mod common;

use common::{base, with};
use serde_json::{json, Value};
use stormsim_model::{
    load_model, load_model_in_with, warnings, FileAccess, Problem, MAX_NAME_BYTES,
};

/// The problems of `doc` (none: it loads).
fn problems(doc: &Value) -> Vec<Problem> {
    problems_of_text(&doc.to_string())
}

fn problems_of_text(text: &str) -> Vec<Problem> {
    match load_model(text, &[], None) {
        Ok(_) => Vec::new(),
        Err(e) => e.problems,
    }
}

/// Asserts `doc` is refused with a problem at `path` whose message contains
/// `words`.
fn refused_at(doc: &Value, path: &str, words: &str) {
    let ps = problems(doc);
    assert!(
        ps.iter()
            .any(|p| p.path == path && p.message.contains(words)),
        "expected a problem at {path} ({words}), got {ps:?}"
    );
}

fn with_db_limit(limit: Value) -> Value {
    with(base(), "services[B].admission.concurrency_limit", limit)
}

#[test]
fn silent_accept() {
    let at = "services[1].admission.concurrency_limit";
    refused_at(
        &with_db_limit(json!({"kind": "fixed", "limit": 0})),
        &format!("{at}.limit"),
        "≥ 1",
    );
    refused_at(
        &with_db_limit(json!({"kind": "aimd", "initial_limit": 0})),
        &format!("{at}.initial_limit"),
        "≥ 1",
    );
    refused_at(
        &with_db_limit(json!({"kind": "aimd", "min_limit": 100, "max_limit": 1})),
        &format!("{at}.min_limit"),
        "max_limit",
    );
    for ratio in [0.0, 1.0, 1.5, -0.1] {
        refused_at(
            &with_db_limit(json!({"kind": "aimd", "backoff_ratio": ratio})),
            &format!("{at}.backoff_ratio"),
            "between 0 and 1",
        );
    }
    refused_at(
        &with_db_limit(json!({"kind": "gradient2", "smoothing": -0.5})),
        &format!("{at}.smoothing"),
        "[0, 1]",
    );
    // The defaults, and sensible settings, still load.
    for ok in [
        json!({"kind": "fixed", "limit": 1}),
        json!({"kind": "aimd"}),
        json!({"kind": "gradient2"}),
        json!({"kind": "aimd", "initial_limit": 5, "min_limit": 1, "max_limit": 10, "backoff_ratio": 0.5}),
    ] {
        assert_eq!(problems(&with_db_limit(ok.clone())), [], "{ok}");
    }
    // Two timeline entries with one name: `timeline[a]` could reach only one.
    let tl = with(
        base(),
        "timeline",
        json!([{"name": "a", "at_s": 0.1, "set": {"services[B].workers": 2}},
               {"name": "a", "at_s": 0.2, "set": {"services[B].workers": 3}}]),
    );
    refused_at(&tl, "timeline[1].name", "duplicate name \"a\"");
}

/// A key written twice in one object: the last one won, silently.
#[test]
fn silent_accept_duplicate_keys() {
    let text = base()
        .to_string()
        .replace(r#""timeout_ms":100"#, r#""timeout_ms":100,"timeout_ms":1"#);
    assert!(text.contains(r#""timeout_ms":1}"#), "{text}");
    let ps = problems_of_text(&text);
    assert_eq!(ps.len(), 1, "{ps:?}");
    assert_eq!(ps[0].path, "services[0].steps[0].timeout_ms");
    assert!(ps[0].message.contains("duplicate key"), "{}", ps[0].message);
    // Every one at once, with the model's other problems.
    let text = text.replacen(r#""name":"t""#, r#""name":"t","name":"u""#, 1);
    assert_eq!(problems_of_text(&text).len(), 2, "{text}");
    let text = text.replacen(r#""requests":10"#, r#""requests":0"#, 1);
    let ps = problems_of_text(&text);
    assert_eq!(ps.len(), 3, "{ps:?}");
    assert!(
        ps.iter().any(|p| p.path == "workloads[0].requests"),
        "{ps:?}"
    );
}

#[test]
fn trigger_reversed() {
    let doc = with(
        base(),
        "timeline",
        json!([{"name": "end", "at_s": 10, "role": "trigger_end", "set": {"services[B].workers": 4}},
               {"name": "start", "at_s": 50, "role": "trigger_start", "set": {"services[B].workers": 1}}]),
    );
    let doc = with(doc, "metastability", json!({}));
    refused_at(&doc, "timeline[0].at_s", "before the trigger_start");
    // In order, it loads.
    let doc = with(doc, "timeline[0].at_s", json!(60));
    assert_eq!(problems(&doc), []);
}

/// Some editors start a UTF-8 file with a byte-order mark: "expected value at
/// line 1, column 1" said nothing of it.
#[test]
fn byte_order_mark_is_skipped() {
    let text = format!("\u{feff}{}", base());
    assert_eq!(problems_of_text(&text), []);
}

/// A name that `check` accepted and `run` could not make a folder of.
#[test]
fn model_name_check_and_run_agree() {
    for name in [
        "a\u{0}b".to_string(),
        "line\nbreak".to_string(),
        "x".repeat(5000),
        "x".repeat(MAX_NAME_BYTES + 1),
        "a/b".to_string(),
        "..".to_string(),
    ] {
        let ps = problems(&with(base(), "name", json!(name)));
        assert!(
            ps.iter().any(|p| p.path == "name"),
            "{name:?} accepted: {ps:?}"
        );
    }
    assert_eq!(
        problems(&with(base(), "name", json!("x".repeat(MAX_NAME_BYTES)))),
        []
    );
    assert_eq!(
        problems(&with(base(), "name", json!("retry storm — v2"))),
        []
    );
}

/// A hedge on an edge to a one-replica service never fires: `check` warns.
#[test]
fn hedge_that_never_fires_warns() {
    let doc = with(
        base(),
        "services[gateway].steps[B].hedge",
        json!({"delay_ms": 5, "target": "any_other"}),
    );
    let doc = with(doc, "services[gateway].steps[B].idempotent", json!(true));
    let loaded = load_model(&doc.to_string(), &[], None).expect("valid");
    let ws = warnings(&loaded);
    assert_eq!(ws.len(), 1, "{ws:?}");
    assert_eq!(ws[0].path, "services[gateway].steps[0].hedge");
    assert!(ws[0].message.contains("never fires"), "{}", ws[0].message);
    // With two instances it can.
    let doc = with(doc, "services[B].instances", json!(2));
    let loaded = load_model(&doc.to_string(), &[], None).expect("valid");
    assert_eq!(warnings(&loaded), []);
}

/// Loading read and checked the whole model, timeline included, once per
/// timeline entry: quadratic (3,000 entries: 56 s in a release build, 94 s
/// in this debug test). Near linear now; the bound only guards against a
/// return of the quadratic cost (a debug build loads these in under a second).
#[test]
fn check_timeline_slow() {
    let entries: Vec<Value> = (0..3000)
        .map(|i| {
            json!({"name": format!("t{i}"), "at_s": f64::from(i) * 0.01,
                        "set": {"services[B].workers": 1 + i % 7}})
        })
        .collect();
    let doc = with(base(), "timeline", json!(entries));
    let doc = with(
        doc,
        "variants",
        json!([{"name": "a"}, {"name": "b", "set": {"services[B].workers": 3}}]),
    );
    let started = std::time::Instant::now();
    let loaded = load_model(&doc.to_string(), &[], None).expect("valid");
    let took = started.elapsed();
    assert_eq!(loaded.variants.len(), 2);
    assert!(loaded.variants.iter().all(|v| v.changes.len() == 3000));
    assert_eq!(loaded.variants[1].changes[5].model.services[1].workers, 6);
    assert!(
        took.as_secs() < 20,
        "loading 3,000 timeline entries took {took:?}"
    );
}

/// A ramp of a whole-number field moves it in whole steps, each rounded to
/// the nearest: 2 → 10 workers over 8 s is 3, 4, …, 10 and over 3 s is 5,
/// 7, 10, where every step was refused ("expected a whole number ..., got
/// 3.0", a value never written). A number field ramps as before.
#[test]
fn regression_ramp_whole_numbers() {
    let model = |over: u32| {
        json!({"name": "ramp", "horizon_s": 20,
               "workloads": [{"name": "users", "target": "api", "duration_s": 20,
                              "arrival": {"kind": "poisson", "rate_per_s": 300}}],
               "services": [{"name": "api", "workers": 2, "instances": 3,
                             "steps": [{"work": {"kind": "exponential", "mean_ms": 10}}]}],
               "timeline": [{"name": "scale up", "at_s": 5, "over_s": over,
                             "set": {"services[api].workers": 10, "services[api].instances": 3,
                                     "workloads[users].arrival.rate_per_s": 400}}]})
    };
    for (over, workers) in [(8, vec![3, 4, 5, 6, 7, 8, 9, 10]), (3, vec![5, 7, 10])] {
        let loaded = load_model(&model(over).to_string(), &[], None)
            .unwrap_or_else(|e| panic!("{:?}", e.problems));
        let changes = &loaded.variants[0].changes;
        let steps: Vec<u32> = changes
            .iter()
            .map(|c| c.model.services[0].workers)
            .collect();
        assert_eq!(steps, workers);
        assert!(changes.iter().all(|c| c.model.services[0].instances == 3));
    }
    let loaded = load_model(&model(3).to_string(), &[], None).unwrap();
    let rates: Vec<String> = loaded.variants[0]
        .changes
        .iter()
        .map(|c| format!("{:?}", c.model.workloads[0].arrival))
        .collect();
    // 333.33... a second, not 333: a gap of 3 ms exactly.
    assert!(rates[0].contains("mean_gap_ns: 3000000.0 "), "{rates:?}");
}

/// Each timeline step holds a pointer to every workload copy: six 10,000 s
/// ramps over 1,000 copies (6·10⁷ of them) are refused as the model is read,
/// before a step is built, where three such ramps took 9 GB to check. One
/// such ramp (10⁷) loads, its steps sharing one workload for the copies.
#[test]
fn regression_timeline_copies_memory() {
    let doc = with(base(), "workloads[users].count", json!(1000));
    let doc = with(doc, "workloads[users].timeout_ms", json!(100));
    let doc = with(doc, "horizon_s", json!(20_000));
    let doc = with(doc, "timeseries", json!({"bucket_s": 100}));
    let ramp = |i: u32| {
        json!({"name": format!("ramp{i}"), "at_s": f64::from(i), "over_s": 10_000,
               "set": {"workloads[users].timeout_ms": 300 + i}})
    };
    let six = with(
        doc.clone(),
        "timeline",
        json!((0..6).map(ramp).collect::<Vec<_>>()),
    );
    refused_at(
        &six,
        "timeline",
        "at most 50000000 workloads in all the steps",
    );
    let one = with(doc, "timeline", json!([ramp(0)]));
    let loaded = load_model(&one.to_string(), &[], None).expect("valid");
    let steps = &loaded.variants[0].changes;
    assert_eq!(steps.len(), 10_000);
    let last = &steps[9_999].model.workloads;
    assert!(last.iter().all(|w| std::sync::Arc::ptr_eq(w, &last[0])));
}

/// A trace `file` may name any file the process can read (`../..`, an
/// absolute path), and a problem quotes its line: confined to the model's
/// folder ([`FileAccess::ModelFolder`], the Python package's default for a
/// dict), a file outside it (`..`, an absolute path, a symbolic link that
/// leads out) is a problem at the trace's `file`, unread. By default
/// (the command line's) it is read as before.
#[test]
fn regression_trace_file_reads_anywhere() {
    let root = std::env::temp_dir().join(format!("stormsim-confined-{}", std::process::id()));
    let here = root.join("models");
    std::fs::create_dir_all(&here).expect("a temporary folder");
    std::fs::write(root.join("secret.csv"), "rps\nhunter2\n").expect("written");
    std::fs::write(here.join("peak.csv"), "rps\n40\n80\n").expect("written");
    #[cfg(unix)]
    {
        let _ = std::fs::remove_file(here.join("link.csv"));
        std::os::unix::fs::symlink(root.join("secret.csv"), here.join("link.csv")).expect("a link");
    }
    let traced = |file: &str| {
        with(
            base(),
            "workloads[users].arrival",
            json!({"kind": "trace", "file": file}),
        )
        .to_string()
    };
    let load =
        |file: &str, access| load_model_in_with(&traced(file), Some(&here), access, &[], None);
    let absolute = root.join("secret.csv").display().to_string();
    let mut outside = vec!["../secret.csv", "../models/peak.csv", absolute.as_str()];
    if cfg!(unix) {
        outside.push("link.csv");
    }
    for file in outside {
        let problems = load(file, FileAccess::ModelFolder)
            .expect_err(file)
            .problems;
        assert_eq!(problems.len(), 1, "{file}: {problems:?}");
        assert_eq!(problems[0].path, "workloads[0].arrival.file", "{file}");
        assert!(
            problems[0]
                .message
                .contains("this model may read files in its own folder only"),
            "{file}: {problems:?}"
        );
        assert!(
            !problems[0].message.contains("hunter2"),
            "{file}: {problems:?}"
        );
    }
    assert!(load("peak.csv", FileAccess::ModelFolder).is_ok());
    let anywhere = load("../secret.csv", FileAccess::Anywhere)
        .expect_err("not rates")
        .problems;
    assert!(anywhere[0].message.contains("hunter2"), "{anywhere:?}");
    let _ = std::fs::remove_dir_all(&root);
}
