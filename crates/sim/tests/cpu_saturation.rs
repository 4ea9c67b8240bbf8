//! `models/cpu-saturation.json`: 400 threads sharing 4 cores (processor
//! sharing), 20 ms of CPU per request (gamma, shape 4): at most 200
//! requests/s. Offered 250/s for a minute with a 500 ms client timeout, the
//! threads fill and each request runs at 4/400 of its pace: a 20 ms request
//! takes 2 s, nearly every one times out, and goodput falls to a few
//! requests a second while S completes 200/s for callers that have left.
//! The retries hold the collapse after the overload; one attempt lets it
//! drain. With 4 threads and a FIFO queue of 50 the same CPU serves about
//! 200/s throughout.

use crate::common;

use common::{assert_outcome, run_bundled, variant, verdict};
use stormsim_sim::analysis::Outcome;
use stormsim_sim::VariantReport;

/// Goodput over `[from_s, to_s)`: requests answered with success per
/// second, and as a share of the requests that arrived then.
fn goodput(v: &VariantReport, from_s: f64, to_s: f64) -> (f64, f64) {
    let width = v.series.bucket_s();
    let buckets = (from_s / width) as usize..(to_s / width) as usize;
    let succeeded: u64 = v.series.global[buckets.clone()]
        .iter()
        .map(|b| b.succeeded)
        .sum();
    let requests: u64 = v.series.global[buckets].iter().map(|b| b.requests).sum();
    (
        succeeded as f64 / (to_s - from_s),
        succeeded as f64 / requests as f64,
    )
}

/// The margins are wide against sampling error: over the 50 s after the
/// threads fill, S's completions vary by about ±1/s (a renewal count of
/// 10,000 with c_s² = 0.25) and the requests by ±2.2/s (Poisson), so a share
/// of 1-2% against a bound of 5%, and 200/s against a bound of 190/s, cannot
/// flip on a seed.
#[test]
fn a_shared_cpu_collapses_in_an_overload_where_a_fifo_queue_keeps_serving() {
    for seed in [1, 2, 3] {
        let reports = run_bundled("cpu-saturation", &[], seed);
        // Before the overload every variant answers nearly everything.
        for name in ["shared-cpu", "shared-cpu-no-retries", "threads-equal-cores"] {
            let (_, share) = goodput(variant(&reports, name), 10.0, 60.0);
            assert!(share > 0.99, "seed {seed}, {name}: {share} before");
        }
        // In the overload, once the threads have filled (10 s).
        for name in ["shared-cpu", "shared-cpu-no-retries"] {
            let (rate, share) = goodput(variant(&reports, name), 70.0, 120.0);
            assert!(share < 0.05, "seed {seed}, {name}: {share} ({rate}/s)");
            // S is busy all the while: its 400 threads held, its completions
            // at capacity but for callers that have left.
            let v = variant(&reports, name);
            let width = v.series.bucket_s();
            let overload = (70.0 / width) as usize..(120.0 / width) as usize;
            let (mut completed, mut wasted, mut busy_ns) = (0, 0, 0u128);
            for b in overload {
                let s = v.series.service(b, 0);
                completed += s.completed;
                wasted += s.wasted;
                busy_ns += s.busy_ns;
            }
            let busy_threads = busy_ns as f64 / 50e9;
            assert!(busy_threads > 390.0, "seed {seed}, {name}: {busy_threads}");
            assert!(completed as f64 / 50.0 > 190.0, "seed {seed}, {name}");
            assert!(wasted * 100 > completed * 95, "seed {seed}, {name}");
        }
        let (rate, share) = goodput(variant(&reports, "threads-equal-cores"), 70.0, 120.0);
        assert!(
            rate > 190.0 && share > 0.75,
            "seed {seed}: {rate}/s, {share}"
        );
        // After it: the retries hold the collapse; without them, or with a
        // FIFO queue, S recovers.
        assert_outcome(&reports, "shared-cpu", Outcome::Metastable, seed);
        let (_, share) = goodput(variant(&reports, "shared-cpu"), 180.0, 300.0);
        assert!(share < 0.05, "seed {seed}: {share} after the overload");
        for name in ["shared-cpu-no-retries", "threads-equal-cores"] {
            assert_outcome(&reports, name, Outcome::Recovered, seed);
            let (_, share) = goodput(variant(&reports, name), 180.0, 300.0);
            assert!(share > 0.99, "seed {seed}, {name}: {share} after");
        }
        let drained = verdict(&reports, "shared-cpu-no-retries").recovery_s;
        assert!(
            drained.is_some_and(|s| s > 0.0 && s < 30.0),
            "seed {seed}: {drained:?}"
        );
    }
}
