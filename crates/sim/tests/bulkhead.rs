//! S5's bulkhead (models/bulkhead.json): a slow optional dependency (C, from
//! 100 ms to 10 s at t = 20 s) empties A's shared pool of 250 threads and takes
//! the critical payments down with it, unless each downstream has its own
//! bulkhead (payment 200, recommendation 50, failing fast).
//!
//! Bounds by Little's law, for 24,000 payment requests (200/s for 120 s):
//! - shared pool: all 4,000 payments before 20 s succeed; at most the 2,000 of
//!   20–30 s while the pool fills; after 30 s the pool turns over 250 threads
//!   every ~10 s, 25 admissions/s for everyone, so at most 25 × 90 = 2,250 more.
//!   Success ≤ 8,250 / 24,000 = 34.4%, plus Poisson noise on the counts (< 1%).
//! - bulkheads: C holds at most 50 threads and payments about 10 (200/s × 51 ms),
//!   so the pool never fills: only the ~10 payments in flight at the horizon
//!   fail to complete, 0.04%.

use stormsim_model::load_model;
use stormsim_sim::{run_model, VariantReport, WorkloadReport};

fn run() -> Vec<VariantReport> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/bulkhead.json");
    let model = load_model(&std::fs::read_to_string(path).unwrap(), &[], None).unwrap();
    run_model(&model).variants
}

fn workload<'a>(r: &'a VariantReport, name: &str) -> &'a WorkloadReport {
    r.workloads.iter().find(|w| w.name == name).unwrap()
}

#[test]
fn bulkheads_keep_payments_healthy_when_recommendations_slow_down() {
    let reports = run();
    let shared = reports.iter().find(|r| r.variant == "shared-pool").unwrap();
    let bulkheads = reports.iter().find(|r| r.variant == "bulkheads").unwrap();

    let pay_shared = workload(shared, "payment").success_rate.unwrap();
    assert!(pay_shared < 0.35, "shared pool: payments {pay_shared}");
    // Payments fail at A (its pool is full), not at B, which stays healthy.
    let a = &shared.services[0];
    assert!(a.rejected > 10_000, "A refused {}", a.rejected);
    assert_eq!(shared.services[1].failed, 0);

    let pay_bulkheads = workload(bulkheads, "payment").success_rate.unwrap();
    assert!(pay_bulkheads > 0.99, "bulkheads: payments {pay_bulkheads}");
    assert_eq!(bulkheads.services[0].rejected, 0, "the pool never fills");
    // Recommendations pay the price: C's bulkhead refuses the excess at once.
    let c = &bulkheads.services[2];
    assert!(
        c.bulkhead_full > 10_000,
        "C bulkhead refused {}",
        c.bulkhead_full
    );
    assert!(workload(bulkheads, "recommendation").success_rate.unwrap() < 0.5);
}
