//! Five retry budgets compared on the same traffic (POLICIES.md): a client at
//! λ = 100 requests/s (Poisson), 200 ms per attempt, at most 3 attempts, no
//! backoff, against a server S that hangs on 2% of attempts (p = 0.02) and on
//! every attempt from 60 s to 120 s.
//!
//! What each budget allows, derived from its rules:
//! - healthy, every budget lets every wanted retry through (module docs of
//!   `budget.rs`: demand p + p² = 0.0204 retries per request is below the token
//!   bucket's 0.1 and Finagle's 0.2 + reserve; gRPC's count drifts up by
//!   0.98 × 0.1 − 0.02 per attempt; Envoy's floor of 3 retries in flight is far
//!   above the ~0.03 in flight; the retry circuit breaker refuses only when
//!   more than 10 of the last 100 attempts failed, at p = 0.02 a chance of
//!   8.3e-6 at each failure, about 1% over the ~1,200 failures of the 10 seeds),
//!   so all variants retry exactly alike (common random numbers);
//! - while S hangs, retries per first attempt: none 2; token bucket 0.1; gRPC 0
//!   once 5 failures have taken the count from 10 to 5; Finagle 0.2 plus its
//!   reserve of 10/s = 0.3 at 100/s; Envoy, whose limit is on retries *in
//!   flight*, r ≤ max(3, ⌊0.2 (f + r)⌋) with f first attempts in flight
//!   (Poisson, mean λ × 0.2 s = 20), i.e. r ≤ max(3, ⌊f/4⌋): E = 4.65 retries in
//!   flight for 0.2 s each, at most 0.232 per first attempt; the retry circuit
//!   breaker 0 once more than 10 of its last 100 attempts failed, which the
//!   first 0.3 s of the hang bring about and failures alone then keep.
//!
//! The steady-state window is [70 s, 120 s): S hangs, and Finagle's 10 s window
//! no longer holds deposits from the healthy minute. Counts are attempts
//! received by S per one-second bucket (0.5 ms after they are sent).

use stormsim_model::load_model;
use stormsim_sim::{run_variant, VariantReport};

const VARIANTS: [&str; 6] = [
    "no-budget",
    "token-bucket",
    "grpc",
    "finagle",
    "envoy",
    "retry-circuit-breaker",
];
const SEEDS: u64 = 10;
const P: f64 = 0.02;

fn model_text() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/retry-budgets.json"
    );
    std::fs::read_to_string(path).expect("models/retry-budgets.json is readable")
}

fn run(seed: Option<u64>) -> Vec<VariantReport> {
    let model = load_model(&model_text(), &[], seed).expect("the bundled model is valid");
    let names: Vec<&str> = model.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, VARIANTS);
    model.variants.iter().map(run_variant).collect()
}

/// (first attempts, retries) S received in buckets [from, to).
fn window(v: &VariantReport, from: usize, to: usize) -> (u64, u64) {
    (from..to).fold((0, 0), |(f, r), b| {
        let s = v.series.service(b, 0);
        (f + s.offered_first, r + s.offered_retry)
    })
}

fn tokens(v: &VariantReport, b: usize) -> f64 {
    v.series
        .service(b, 0)
        .budget_tokens
        .expect("a budget has a level")
}

#[test]
fn healthy_traffic_retries_alike_under_every_budget() {
    // Pooled over seeds: retries per first attempt is a sum of independent
    // per-call counts X ∈ {0, 1, 2} with P(1) = p(1 − p), P(2) = p², mean
    // p + p², variance p + 3p² − (p + p²)²; the pooled total must lie within
    // 3.29 sd (99.9%) of its expectation.
    let (mut first, mut retries) = (0u64, 0u64);
    for seed in 1..=SEEDS {
        let r = run(Some(seed));
        let healthy: Vec<(u64, u64)> = r.iter().map(|v| window(v, 0, 60)).collect();
        for (v, w) in r.iter().zip(&healthy) {
            assert_eq!(
                *w, healthy[0],
                "seed {seed}: {} retried differently",
                v.variant
            );
        }
        first += healthy[0].0;
        retries += healthy[0].1;
    }
    let mean = P + P * P;
    let var = P + 3.0 * P * P - mean * mean;
    let expected = mean * first as f64;
    let sd = (var * first as f64).sqrt();
    assert!(
        (retries as f64 - expected).abs() <= 3.29 * sd,
        "{retries} retries for {first} first attempts; expected {expected:.1} ± {:.1}",
        3.29 * sd
    );
}

#[test]
fn while_s_hangs_each_budget_allows_its_share() {
    for seed in 1..=SEEDS {
        let r = run(Some(seed));
        let steady: Vec<(u64, u64)> = r.iter().map(|v| window(v, 70, 120)).collect();
        let share = |i: usize| steady[i].1 as f64 / steady[i].0 as f64;
        let (f, w) = (steady[0].0 as f64, |i: usize| steady[i].1 as f64);
        // Same arrivals in every variant.
        assert!(steady.iter().all(|s| s.0 == steady[0].0));

        // No budget: 2 retries per first attempt. Calls that straddle 70 s or
        // 120 s move their retries in or out: about 60 at each end (the 0.4 s
        // before it, at 100/s, × 1.5), so ±60 is over 4 sd of their difference.
        assert!(
            (w(0) - 2.0 * f).abs() <= 60.0,
            "seed {seed}: {} vs {}",
            w(0),
            2.0 * f
        );

        // Token bucket: tokens(120) = tokens(70) + 0.1 × deposits − retries.
        // Demand spends every whole token at the next failure (first attempts
        // fail at 100/s, 200 ms after their deposit), so the level stays below
        // 1 + 0.1 × the deposits since the last failure: under 1.5 unless 5
        // deposits in a row meet no failure (about 0.5⁵ each time a token is
        // spent), and under 2 in practice. Hence |retries − 0.1 × deposits|
        // < 2, and counting at S moves at most a couple of attempts across
        // each end: ±4.
        assert!(
            (w(1) - 0.1 * f).abs() <= 4.0,
            "seed {seed}: {} vs {}",
            w(1),
            0.1 * f
        );
        for b in 62..=120 {
            assert!(tokens(&r[1], b) < 2.0, "seed {seed} bucket {b}");
        }

        // gRPC: nothing once the count is at or below max/2 = 5, where failures
        // alone keep it. The count leaves 10 at the first failures after 60 s:
        // 4 of them leave it above 5 (9, 8, 7, 6) and may be retried; a stray
        // success of a request sent before 60 s adds 0.1 (at most 2 more).
        let outage = window(&r[2], 60, 120).1;
        assert!(
            outage <= 6,
            "seed {seed}: {outage} gRPC retries while S hangs"
        );
        assert_eq!(window(&r[2], 61, 120).1, 0, "seed {seed}");
        for b in 61..=120 {
            assert!(tokens(&r[2], b) <= 5.0, "seed {seed} bucket {b}");
        }
        // ... and back above 5 soon after S recovers (about 65 healthy attempts
        // to climb from 0), never above max.
        let t = tokens(&r[2], 125);
        assert!(t > 5.0 && t <= 10.0, "seed {seed}: gRPC count {t} at 125 s");

        // Finagle: over the five whole 10 s windows of [70, 120) (its slices
        // are 1 s on a grid from 0), retries = 0.2 × deposits + 5 × 100
        // (reserve) − Σ of the balance at each window's end, in retries.
        // Saturated demand keeps each balance below 1, so retries exceed
        // 0.2 × deposits + 500 − 5. The balance can also end a window
        // negative: a grant needs ≥ 1, but the window then forgets a slice
        // whose deposits paid for earlier grants. That part is not bounded
        // tightly by the rules; over 40 seeds it took at most 6.4 retries from
        // one window and 7.8 from all five together. With ±2 for counting at
        // S: from −7 to +25 (3 × the worst seen).
        let dev = w(3) - (0.2 * f + 500.0);
        assert!(
            (-7.0..=25.0).contains(&dev),
            "seed {seed}: finagle off by {dev}"
        );

        // Envoy: between the floor (3 retries in flight, idle at most the ~10 ms
        // until the next failure asks: ≥ 3 × 0.95 / 0.2 s = 14.25/s, 0.14 per
        // first attempt) and the bound above (0.232, plus 4 sd of a 50 s
        // average, ±0.014): [0.14, 0.25]. Measured ≈ 0.217.
        assert!(
            (0.14..=0.25).contains(&share(4)),
            "seed {seed}: envoy {}",
            share(4)
        );

        // Retry circuit breaker: with f0 ≤ 10 failures in its window when S
        // starts hanging, each failure while there are at most 10 may be
        // retried; the hang's first attempts time out from 60.2 s, so the
        // window passes 10 failures within about 0.1 s, and a success of a
        // request sent before 60 s can push an old failure out (at most 2, as
        // for gRPC): at most 10 + 2 retries, and none after 61 s. Its level
        // (10 − failures in the window) stays negative while S hangs.
        let outage = window(&r[5], 60, 120).1;
        assert!(
            outage <= 12,
            "seed {seed}: {outage} retry-breaker retries while S hangs"
        );
        assert_eq!(window(&r[5], 61, 120).1, 0, "seed {seed}");
        for b in 61..=120 {
            assert!(tokens(&r[5], b) < 0.0, "seed {seed} bucket {b}");
        }
        // 90 successes after the last failure (about 120.2 s) push the
        // failures out: well before 125 s, the window is healthy again.
        let t = tokens(&r[5], 125);
        assert!(
            (0.0..=10.0).contains(&t),
            "seed {seed}: retry breaker at {t} at 125 s"
        );

        // Hence the ordering, with each level well apart.
        assert!(share(2) < share(1) && share(1) < share(4));
        assert!(share(4) < share(3) && share(3) < share(0));
        assert!(share(5) < share(1));
    }
}

#[test]
fn summary_columns_tell_the_same_story() {
    let r = run(None);
    let s: Vec<_> = r.iter().map(|v| &v.services[0]).collect();
    for (v, s) in r.iter().zip(&s) {
        // Every request's first attempt reaches S; the rest are retries, and
        // every retry S received was granted (none is lost on the way).
        assert_eq!(s.calls, v.requests + s.retries, "{}", v.variant);
        // A refusal ends a call with its failure: at most one per failed request.
        assert!(s.budget_denied <= v.failed, "{}", v.variant);
        assert_eq!(v.unanswered, 0);
    }
    assert_eq!(s[0].budget_denied, 0);
    // gRPC refuses the first retry of essentially every request that fails:
    // while S hangs it never retries, and outside that window a request fails
    // only after 3 hung attempts (p³ = 8e-6) or right after recovery, while
    // the count climbs back above 5 — also a refusal.
    assert!(
        r[2].failed - s[2].budget_denied <= 8,
        "{} vs {}",
        r[2].failed,
        s[2].budget_denied
    );
    // Load amplification: grpc < token bucket < envoy < finagle < none, and
    // the retry circuit breaker below the token bucket (it stops retrying for
    // good while S hangs, as gRPC does).
    let amp: Vec<f64> = s.iter().map(|s| s.calls_per_request.unwrap()).collect();
    assert!(
        amp[2] < amp[1] && amp[1] < amp[4] && amp[4] < amp[3] && amp[3] < amp[0],
        "{amp:?}"
    );
    assert!(amp[5] < amp[1], "{amp:?}");
    // Peak load on S: without a budget, the first second of the outage sees
    // first attempts plus both retries (~300/s); a budget flattens it.
    for i in 1..VARIANTS.len() {
        assert!(
            s[i].peak_offered_rps < s[0].peak_offered_rps,
            "{}",
            r[i].variant
        );
    }
}
