//! S5's thundering herd (models/thundering-herd.json): 10,000 clients fail
//! together during a 20 s outage, then retry with exponential backoff.
//!
//! Without jitter every client sleeps exactly 1, 2, 4, ... s, so all 10,000
//! retries of one generation arrive in the same instant: the wave at 31 s meets
//! the recovered server (2,000 req/s of capacity and 200 queued) whole, as does
//! every later one. Arithmetic fixes the no-jitter figures exactly; for the
//! jittered modes the claim is a regime claim with a wide margin: their largest
//! wave after recovery stays under the server's capacity.

use stormsim_model::load_model;
use stormsim_sim::{run_model, VariantReport};

const CLIENTS: f64 = 10_000.0;
const CAPACITY_RPS: f64 = 2_000.0;

fn run() -> Vec<VariantReport> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/thundering-herd.json"
    );
    let model = load_model(&std::fs::read_to_string(path).unwrap(), &[], None).unwrap();
    run_model(&model).variants
}

#[test]
fn jitter_breaks_the_herd_up() {
    let reports = run();
    let by = |name: &str| reports.iter().find(|r| r.variant == name).unwrap();

    let herd = by("no-jitter");
    // The whole herd retries in one instant after recovery.
    assert_eq!(herd.peak_after_trigger_rps, Some(CLIENTS));
    // The last wave leaves at 1+2+4+8+16+32+32 = 95 s (+ hops and 10 ms work).
    assert!(
        (herd.completion_s - 95.0).abs() < 0.2,
        "{}",
        herd.completion_s
    );
    // Each wave gets at most capacity·(one wave's span) + queue served: most fail.
    assert!(
        (herd.succeeded as f64) < 0.1 * CLIENTS,
        "{}",
        herd.succeeded
    );

    for mode in ["full-jitter", "equal-jitter", "decorrelated-jitter"] {
        let r = by(mode);
        let peak = r.peak_after_trigger_rps.unwrap();
        assert!(peak < CAPACITY_RPS, "{mode}: after-recovery peak {peak}");
        assert!(
            r.succeeded as f64 >= 0.9 * CLIENTS,
            "{mode}: {}",
            r.succeeded
        );
        assert!(r.completion_s < herd.completion_s, "{mode}");
        let calls = r.services[0].calls;
        assert!(calls < herd.services[0].calls, "{mode}: {calls} calls");
    }
}
