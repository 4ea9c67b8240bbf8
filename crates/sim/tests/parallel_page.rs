//! `models/parallel-page.json`: a page that calls inventory, pricing and
//! reviews at once. Waiting for all three, a page takes the slowest of three
//! independent draws, so its latency follows the product of their CDFs and
//! its p99 lies above every branch's own p99; a failing required branch fails
//! the page; an optional one with a timeout removes both the failures and
//! most of the tail.
//!
//! Every service has unbounded workers and the network is a constant 0.5 ms
//! each way, so a page's latency is exactly `2 ms + max(W_inventory,
//! W_pricing, W_reviews)`: the closed form below, with no queueing in it.

use crate::common;

use common::{run_bundled, service, variant};
use statrs::distribution::{ContinuousCDF, Normal};
use stormsim_sim::VariantReport;

/// `(median, p99)` of each branch's lognormal work, ms, as in the model.
const INVENTORY: (f64, f64) = (20.0, 100.0);
const PRICING: (f64, f64) = (15.0, 90.0);
const REVIEWS: (f64, f64) = (25.0, 120.0);
/// Two hops for the page, two for each branch.
const PAGE_HOPS_MS: f64 = 2.0;
/// Reviews' timeout in the `reviews-optional` variant, ms.
const REVIEWS_TIMEOUT_MS: f64 = 60.0;

/// How long the tests run the model, s.
const RUN_S: f64 = 600.0;

fn longer() -> Vec<(String, serde_json::Value)> {
    ["horizon_s", "workloads[users].duration_s"]
        .map(|path| (path.to_string(), serde_json::json!(RUN_S)))
        .to_vec()
}

fn lognormal_cdf((median, p99): (f64, f64), ms: f64) -> f64 {
    if ms <= 0.0 {
        return 0.0;
    }
    let z99 = Normal::standard().inverse_cdf(0.99);
    let sigma = libm::log(p99 / median) / z99;
    Normal::standard().cdf(libm::log(ms / median) / sigma)
}

/// The p-quantile of a continuous CDF, by bisection, and the density there
/// (a central difference), which sets the sampling error of an empirical
/// quantile: `sqrt(p (1 − p) / n) / f(x_p)`.
fn quantile_and_density(cdf: impl Fn(f64) -> f64, p: f64) -> (f64, f64) {
    let (mut lo, mut hi) = (0.0, 10_000.0);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let h = 0.01;
    (lo, (cdf(lo + h) - cdf(lo - h)) / (2.0 * h))
}

/// Asserts that the reported p99 is the closed form's within 4 standard
/// errors of an empirical quantile over `n` answers, plus the histogram's
/// 0.1% resolution.
fn assert_p99(reported: f64, cdf: impl Fn(f64) -> f64, n: u64, what: &str) {
    let (x, f) = quantile_and_density(cdf, 0.99);
    let se = (0.99 * 0.01 / n as f64).sqrt() / f;
    let tolerance = 4.0 * se + 0.001 * x;
    assert!(
        (reported - x).abs() <= tolerance,
        "{what}: p99 {reported} ms, closed form {x:.2} ± {tolerance:.2} ms"
    );
}

fn branch_p99(r: &VariantReport, callee: &str) -> f64 {
    let edge = r.edges.iter().find(|e| e.callee == callee).unwrap();
    edge.latency_ms.unwrap().p99
}

#[test]
fn a_page_is_as_slow_as_its_slowest_branch_and_fails_with_a_required_one() {
    for seed in [1, 2, 3] {
        // Ten minutes rather than the model's one: 120,000 pages put the
        // p99's standard error near 1 ms.
        let reports = run_bundled("parallel-page", &longer(), seed);
        let all = variant(&reports, "wait-for-all");
        // Successful pages are those whose reviews did not fail, which is
        // drawn apart from the work: their latency is still the maximum.
        let max_of_three = |y: f64| {
            let w = y - PAGE_HOPS_MS;
            lognormal_cdf(INVENTORY, w) * lognormal_cdf(PRICING, w) * lognormal_cdf(REVIEWS, w)
        };
        let page_p99 = all.ok_latency_ms.unwrap().p99;
        assert_p99(page_p99, max_of_three, all.succeeded, "wait-for-all page");
        // Above the slowest branch's own p99 by more than 10%.
        let slowest = ["inventory", "pricing", "reviews"]
            .map(|b| branch_p99(all, b))
            .into_iter()
            .fold(0.0, f64::max);
        assert!(
            page_p99 > 1.1 * slowest,
            "seed {seed}: page p99 {page_p99} vs slowest branch {slowest}"
        );

        // Half of reviews' answers fail from 20 s to 40 s: that share of
        // the run's pages fail with them (binomial, 4 standard errors).
        let n = all.requests as f64;
        let share = 0.5 * 20.0 / RUN_S;
        let expected = n * share;
        let sd = (n * share * (1.0 - share)).sqrt();
        let failed = all.failed_by_reason.error as f64;
        assert!(
            (failed - expected).abs() < 4.0 * sd,
            "seed {seed}: {failed} pages failed, expected {expected:.0} ± {:.0}",
            4.0 * sd
        );
        let counts = service(all, "page").parallel.unwrap();
        assert_eq!(counts.failed, all.failed_by_reason.error, "seed {seed}");
        // Those failures cancel the branches still running.
        let cancelled = |r: &VariantReport, callee: &str| {
            let e = r.edges.iter().find(|e| e.callee == callee).unwrap();
            e.counters.cancellations
        };
        assert!(cancelled(all, "inventory") > 0, "seed {seed}");
        assert!(
            cancelled(all, "inventory") + cancelled(all, "pricing") <= 2 * counts.failed,
            "seed {seed}"
        );

        // Reviews optional with a 60 ms timeout: no page fails, and the tail
        // is that of inventory and pricing together (the reviews branch
        // ends by 61 ms, below the p99).
        let optional = variant(&reports, "reviews-optional");
        let unanswered = optional.requests - optional.succeeded - optional.failed;
        assert_eq!(optional.failed, 0, "seed {seed}");
        assert!(
            unanswered < 20,
            "seed {seed}: {unanswered} in flight at the end"
        );
        let max_of_two = |y: f64| {
            let w = y - PAGE_HOPS_MS;
            let reviews = if y - 1.0 >= REVIEWS_TIMEOUT_MS {
                1.0
            } else {
                lognormal_cdf(REVIEWS, w)
            };
            lognormal_cdf(INVENTORY, w) * lognormal_cdf(PRICING, w) * reviews
        };
        let optional_p99 = optional.ok_latency_ms.unwrap().p99;
        assert_p99(
            optional_p99,
            max_of_two,
            optional.succeeded,
            "reviews-optional page",
        );
        assert!(optional_p99 < branch_p99(all, "reviews"), "seed {seed}");
        let counts = service(optional, "page").parallel.unwrap();
        assert_eq!(
            counts.ok + counts.partial,
            optional.succeeded,
            "seed {seed}"
        );
        assert!(counts.partial > 0, "seed {seed}");
    }
}
