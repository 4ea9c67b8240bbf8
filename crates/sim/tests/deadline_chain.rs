//! S1, the deadline chain (SCENARIOS.md): the model's claims, checked against
//! the arithmetic of the model and against the article's table.
//!
//! B is slow (400 ms) with p = 0.3 independently per call, so every count below
//! has a closed-form expectation. Tolerances come from sampling error: the
//! replication means must agree with the expectations within a 99.9% Student-t
//! confidence interval, and single runs (the default seed, and the article's own
//! single measurement) within a 99.9% prediction interval of one run.

use crate::common;

use common::service;
use statrs::distribution::{ContinuousCDF, StudentsT};
use stormsim_model::load_model;
use stormsim_sim::{run_model, VariantReport};

const P_SLOW: f64 = 0.3;
const N: f64 = 200.0;
/// Replications for the mean checks: each is 200 requests × 4 variants.
const REPLICATIONS: u64 = 200;
/// Two-sided 99.9% normal quantile, for prediction intervals of one run.
const Z_999: f64 = 3.2905;

fn model_text() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/deadline-chain.json"
    );
    std::fs::read_to_string(path).expect("models/deadline-chain.json is readable")
}

fn run(seed: Option<u64>) -> Vec<VariantReport> {
    let model = load_model(&model_text(), &[], seed).expect("the bundled model is valid");
    run_model(&model).variants
}

/// A metric of one variant's report.
struct Metric {
    variant: usize,
    name: &'static str,
    get: fn(&VariantReport) -> f64,
    /// Expectation from the model's arithmetic.
    expected: f64,
    /// The article's figure.
    article: f64,
}

fn metrics() -> Vec<Metric> {
    let p = P_SLOW;
    let a_requests = 1.0 + p + p * p; // A requests per user request in scenario 3
    vec![
        Metric {
            variant: 1,
            name: "succeeded",
            get: |r| r.succeeded as f64,
            expected: N * (1.0 - p),
            article: 139.0,
        },
        Metric {
            variant: 1,
            name: "A wasted",
            get: |r| service(r, "A").wasted as f64,
            expected: N * p,
            article: 61.0,
        },
        Metric {
            variant: 2,
            name: "succeeded",
            get: |r| r.succeeded as f64,
            expected: N * (1.0 - p.powi(3)),
            article: 194.0,
        },
        Metric {
            variant: 2,
            name: "B calls per request",
            get: |r| service(r, "B").calls_per_request.unwrap(),
            expected: a_requests * a_requests,
            article: 2.10,
        },
        Metric {
            variant: 2,
            name: "A wasted",
            get: |r| service(r, "A").wasted as f64,
            expected: N * p * a_requests,
            article: 98.0,
        },
        Metric {
            variant: 2,
            name: "B early stops",
            get: |r| service(r, "B").cancelled as f64,
            expected: N * (p + p * p + p.powi(3)) * a_requests,
            article: 140.0,
        },
        Metric {
            variant: 3,
            name: "succeeded",
            get: |r| r.succeeded as f64,
            expected: N * (1.0 - p * p),
            article: 180.0,
        },
        Metric {
            variant: 3,
            name: "B calls per request",
            get: |r| service(r, "B").calls_per_request.unwrap(),
            expected: 1.0 + p,
            article: 1.30,
        },
        Metric {
            variant: 3,
            name: "B early stops",
            get: |r| service(r, "B").cancelled as f64,
            expected: N * (p + p * p),
            article: 80.0,
        },
    ]
}

fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

#[test]
fn variants_are_named_as_the_article_numbers_them() {
    let names: Vec<String> = run(None).into_iter().map(|v| v.variant).collect();
    assert_eq!(
        names,
        [
            "no-timeouts",
            "per-tier-timeouts",
            "per-tier-retries",
            "end-to-end-deadline"
        ]
    );
}

/// What the arithmetic fixes exactly, at any seed: no randomness in these.
#[test]
fn deterministic_figures_follow_the_timeout_arithmetic() {
    for seed in [1, 2, 3] {
        let r = run(Some(seed));
        // p50: B's 10 ms plus 4 ms of hops and handler overhead, as in the article.
        for v in &r {
            assert!(
                (v.latency_ms.unwrap().p50 - 14.0).abs() < 0.02,
                "{} p50 {}",
                v.variant,
                v.latency_ms.unwrap().p50
            );
            assert_eq!(v.requests, 200);
        }
        // 1: everyone succeeds; a slow B is 400 + 4 ms.
        assert_eq!(r[0].succeeded, 200);
        assert!((r[0].latency_ms.unwrap().max - 404.0).abs() < 1e-9);
        assert!((service(&r[0], "B").calls_per_request.unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(service(&r[0], "A").wasted, 0);
        assert_eq!(service(&r[0], "B").cancelled, 0);
        // 2: every slow B is a 504 at 250 ms (+1.5 ms of hops), and wasted work at A.
        assert_eq!(service(&r[1], "A").wasted, r[1].failed);
        assert_eq!(r[1].failed, r[1].failed_by_reason.timeout);
        assert_eq!(service(&r[1], "B").cancelled, 0);
        assert!((r[1].latency_ms.unwrap().max - 251.5).abs() < 1e-9);
        // 3: a user never waits past 3 × 250 ms (+1.5 ms).
        assert!(r[2].latency_ms.unwrap().max <= 751.5 + 1e-9);
        // 4: nobody waits past the 250 ms budget; no wasted work anywhere; the
        // gateway's budget is what ends failures.
        assert!(r[3].latency_ms.unwrap().max <= 250.5);
        assert!(r[3].services.iter().all(|s| s.wasted == 0));
        assert_eq!(r[3].failed, r[3].failed_by_reason.deadline_exceeded);

        // Common random numbers: request k's first trip to B draws the same
        // fast/slow in every variant. The users who waited > 100 ms in scenario
        // 1 are exactly those who fail in scenario 2, and a failure in 3 or 4
        // needs a slow first trip too.
        let fast_in_1 = r[0]
            .latency_cdf
            .iter()
            .take_while(|(ms, _)| *ms <= 100.0)
            .last()
            .map_or(0.0, |(_, fraction)| *fraction);
        assert_eq!((fast_in_1 * 200.0).round() as u64, r[1].succeeded);
        assert!(r[2].failed <= r[1].failed);
        assert!(r[3].failed <= r[1].failed);
    }
}

/// Replication means agree with the model's arithmetic within a 99.9% CI.
#[test]
fn replication_means_match_the_arithmetic() {
    let runs: Vec<Vec<VariantReport>> = (1..=REPLICATIONS).map(|s| run(Some(s))).collect();
    let t = StudentsT::new(0.0, 1.0, (REPLICATIONS - 1) as f64)
        .expect("valid t")
        .inverse_cdf(0.9995);
    for m in metrics() {
        let xs: Vec<f64> = runs.iter().map(|r| (m.get)(&r[m.variant])).collect();
        let (mean, sd) = mean_sd(&xs);
        let half_width = t * sd / (REPLICATIONS as f64).sqrt();
        assert!(
            (mean - m.expected).abs() <= half_width,
            "variant {} {}: mean {mean:.3} ± {half_width:.3} (99.9% CI) misses the expected {:.3}",
            m.variant,
            m.name,
            m.expected
        );
    }
}

/// The default seed's run, and the article's single measurement, are each
/// plausible as one run: within a 99.9% prediction interval (the sd of one run
/// estimated from 200 replications).
#[test]
fn the_default_run_and_the_article_are_within_sampling_error() {
    let default_run = run(None);
    let runs: Vec<Vec<VariantReport>> = (1..=REPLICATIONS).map(|s| run(Some(1000 + s))).collect();
    for m in metrics() {
        let xs: Vec<f64> = runs.iter().map(|r| (m.get)(&r[m.variant])).collect();
        let (_, sd) = mean_sd(&xs);
        let ours = (m.get)(&default_run[m.variant]);
        for (who, value) in [("default seed", ours), ("article", m.article)] {
            assert!(
                (value - m.expected).abs() <= Z_999 * sd,
                "variant {} {}: {who} {value:.3} is outside {:.3} ± {:.3}",
                m.variant,
                m.name,
                m.expected,
                Z_999 * sd
            );
        }
    }
}

#[test]
fn variants_run_in_parallel_give_the_report_run_in_order() {
    let model = load_model(&model_text(), &[], Some(3)).expect("the bundled model is valid");
    let parallel = stormsim_sim::run_model_parallel(&model);
    assert_eq!(parallel, run_model(&model));
}
