//! `models/admission-work.json`: S completes 1,000 requests/s of 800/s
//! offered; a slowdown doubles the work. When the work's duration is drawn at
//! its start, the backlog built during the slowdown is served at the normal
//! speed once it ends; fixed at admission, it is still slow, so a shorter
//! slowdown tips the storm (the sweep `models/admission-work-tipping.sweep.json`
//! measures the tipping points: 6 s drawn at start, 4 s at admission).

use stormsim_model::load_model;
use stormsim_sim::analysis::Outcome;
use stormsim_sim::run_model;

fn model_text() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/admission-work.json"
    );
    std::fs::read_to_string(path).expect("models/admission-work.json is readable")
}

/// A 4.5 s slowdown lies a second from each tipping point (the sweep's 3
/// replications at each half second agree on both sides), so the verdicts
/// hold on each seed tried.
#[test]
fn a_slowdown_that_start_drawn_work_survives_tips_admission_drawn_work() {
    let overrides = [("timeline[1].at_s".to_string(), serde_json::json!(64.5))];
    for seed in [1, 2, 3] {
        let model = load_model(&model_text(), &overrides, Some(seed)).expect("a valid model");
        let report = run_model(&model);
        let outcome = |name: &str| {
            let v = report
                .variants
                .iter()
                .find(|v| v.variant == name)
                .unwrap_or_else(|| panic!("no variant {name}"));
            let verdict = v.verdict.as_ref().expect("the model has a trigger");
            (verdict.outcome, verdict.reason.clone())
        };
        let (start, why) = outcome("drawn-at-start");
        assert_eq!(start, Outcome::Recovered, "seed {seed}: {why}");
        let (admission, why) = outcome("drawn-at-admission");
        assert_eq!(admission, Outcome::Metastable, "seed {seed}: {why}");
    }
}
