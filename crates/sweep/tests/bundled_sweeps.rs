//! Every sweep file shipped in models/ loads: its model, its axes and the model
//! of every one of its points are valid (a typo fails here, not after an hour).

use std::path::Path;
use stormsim_sweep::Sweep;

#[test]
fn every_bundled_sweep_file_loads() {
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models");
    let mut sweeps: Vec<_> = std::fs::read_dir(&models)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".sweep.json"))
        .collect();
    sweeps.sort();
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
