//! `models/admission-work.json`: S completes 1,000 requests/s of 800/s
//! offered; a slowdown doubles the work. When the work's duration is drawn at
//! its start, the backlog built during the slowdown is served at the normal
//! speed once it ends; fixed at admission, it is still slow, so a shorter
//! slowdown tips the storm (the sweep `models/admission-work-tipping.sweep.json`
//! measures the tipping points: 6 s drawn at start, 4 s at admission).

use crate::common;

use common::{assert_outcome, run_bundled};
use stormsim_sim::analysis::Outcome;

/// A 4.5 s slowdown lies a second from each tipping point (the sweep's 3
/// replications at each half second agree on both sides), so the verdicts
/// hold on each seed tried.
#[test]
fn a_slowdown_that_start_drawn_work_survives_tips_admission_drawn_work() {
    let overrides = [("timeline[1].at_s".to_string(), serde_json::json!(64.5))];
    for seed in [1, 2, 3] {
        let reports = run_bundled("admission-work", &overrides, seed);
        assert_outcome(&reports, "drawn-at-start", Outcome::Recovered, seed);
        assert_outcome(&reports, "drawn-at-admission", Outcome::Metastable, seed);
    }
}
