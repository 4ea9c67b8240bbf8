//! Every sweep file shipped in models/ loads: its model, its axes and the model
//! of every one of its points are valid (a typo fails here, not after an hour).

use std::path::{Path, PathBuf};
use stormsim_sweep::Sweep;

/// The files of models/ whose names `keep`, in name order.
fn bundled(keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models");
    let mut files: Vec<_> = std::fs::read_dir(&models)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|p| keep(&p.to_string_lossy()))
        .collect();
    files.sort();
    files
}

#[test]
fn every_bundled_sweep_file_loads() {
    let sweeps = bundled(|name| name.ends_with(".sweep.json"));
    assert!(
        sweeps.len() >= 3,
        "the phase diagram, the queue sweep and its search: {sweeps:?}"
    );
    for path in sweeps {
        if let Err(e) = Sweep::load(&path) {
            panic!("{}: {e}", path.display());
        }
    }
}

/// A search on `metastable` whose probe cannot be judged (the run ends before
/// the recovery window closes) stops with the reason, not with "not a number".
#[test]
fn a_search_whose_runs_cannot_be_judged_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let model = serde_json::json!({
        "name": "short",
        "workloads": [{"name": "u", "target": "s", "duration_s": 400,
                       "arrival": {"kind": "poisson", "rate_per_s": 50}}],
        "services": [{"name": "s", "workers": 2,
                      "steps": [{"work": {"kind": "constant", "ms": 10}}]}],
        "timeline": [
            {"name": "slow", "at_s": 20, "role": "trigger_start",
             "set": {"services[s].steps[0].work.ms": 30}},
            {"name": "fixed", "at_s": 30, "role": "trigger_end",
             "set": {"services[s].steps[0].work.ms": 10}}],
        "metastability": {"baseline_from_s": 1}
    });
    let sweep = serde_json::json!({
        "name": "short-search", "model": model, "replications": 1,
        "search": {"path": "horizon_s", "from": 40, "to": 400,
                   "metric": "metastable", "threshold": 0.5, "tolerance": 10}
    });
    let path = dir.path().join("short.sweep.json");
    std::fs::write(&path, sweep.to_string()).unwrap();
    let sweep = Sweep::load(&path).expect("a valid search");
    let problem = sweep.search(&|_| {}).expect_err("40 s cannot be judged");
    let text = problem.to_string();
    assert!(
        text.contains("no value in any replication at horizon_s = 40")
            && text.contains("no verdict")
            && text.contains("lengthen horizon_s"),
        "{text}"
    );
}

/// A resumed table must have the columns this build writes, known before any
/// run (`summary_header`): they are the columns a run writes, for every
/// variant of every bundled model (each run for 2 simulated seconds).
#[test]
fn the_summary_header_known_before_a_run_is_the_one_it_writes() {
    let files = bundled(|name| name.ends_with(".json") && !name.ends_with(".sweep.json"));
    assert!(files.len() >= 10, "{files:?}");
    let short = [("horizon_s".to_string(), serde_json::json!(2))];
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let dir = path.parent();
        let loaded = stormsim_model::load_model_in(&text, dir, &short, None)
            .unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
        for v in &loaded.variants {
            let (written, _) = stormsim_sweep::summary_of(1, stormsim_sim::run_variant(v));
            let known = stormsim_sim::report::summary_header(&v.model);
            assert_eq!(known, written, "{}, variant {}", path.display(), v.name);
        }
    }
}
