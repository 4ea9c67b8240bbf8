//! `models/error-spike.json`: S completes 800 requests/s; clients send 500/s
//! with up to 3 attempts on errors and timeouts. A 30 s spike of 60% errors
//! (after the work) needs 1.96 attempts per request, 980/s: S queues, attempts
//! time out, and timeouts alone then keep 3 attempts per request (1,500/s)
//! after the spike. One attempt, a 10% retry budget, or failures that cost S
//! 1 ms instead of the whole work, stay below 800/s and recover.

use crate::common;

use common::{assert_outcome, run_bundled, variant};
use stormsim_sim::analysis::Outcome;

/// Margins are wide (1,500 or 980 attempts/s against 800/s; at most about
/// 550/s and 1.6 × 500 × 1 ms of work for the recovering variants), so each
/// seed tried shows the same verdicts.
#[test]
fn an_error_spike_outlives_itself_only_when_errors_are_retried_freely() {
    for seed in [1, 2, 3] {
        let reports = run_bundled("error-spike", &[], seed);
        assert_outcome(&reports, "retries", Outcome::Metastable, seed);
        for name in ["no-retries", "retry-budget", "fast-failure"] {
            assert_outcome(&reports, name, Outcome::Recovered, seed);
        }
        // The spike's errors reach the callers as errors, or, answered fast,
        // as 503s.
        let no_retries = variant(&reports, "no-retries").failed_by_reason;
        assert!(no_retries.error > 8_000, "seed {seed}: {no_retries:?}");
        let fast = variant(&reports, "fast-failure").failed_by_reason;
        assert!(
            fast.rejected > 0 && fast.error == 0,
            "seed {seed}: {fast:?}"
        );
    }
}
