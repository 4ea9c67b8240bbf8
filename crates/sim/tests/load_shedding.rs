//! S2, load shedding (models/load-shedding.json): the model's claims, checked
//! against queueing arithmetic.
//!
//! The model: one server, c = 10 workers, s = 20 ms of constant work (capacity
//! μ = c/s = 500 req/s), offered 2000 requests as a Poisson process at
//! λ = 750 req/s (600 `high` at 225/s + 1400 `low` at 525/s), the same requests
//! in every variant (common random numbers).
//!
//! Where the tolerances come from:
//!
//! - `shedding` is an Erlang loss system M/D/c/c. By the insensitivity of the
//!   Erlang B formula its long-run accepted share is 1 − B(c, λs) whatever the
//!   service-time distribution: 1 − B(10, 15) = 0.5897. The mean of replications
//!   must match it within a 99.9% Student-t confidence interval.
//! - Single-run claims (55–70% accepted, p99 of accepted ≤ 22 ms, p99 without
//!   shedding ≥ 1 s, high class ≥ 95%) are checked on the default seed, whose
//!   figures are the ones in `outputs/load-shedding/`, and on further seeds, so a
//!   claim that only holds by luck fails here.
//! - Bounds that follow from the mechanics (a constant 20 ms of work, FIFO
//!   queues, the queue capacity) are asserted exactly or with analytic bounds,
//!   each derived where it is asserted.

use statrs::distribution::{ContinuousCDF, StudentsT};
use stormsim_model::{load_model, LoadedModel};
use stormsim_sim::report::WorkloadReport;
use stormsim_sim::{run_variant, ServiceReport, VariantReport};

const WORKERS: f64 = 10.0;
const WORK_S: f64 = 0.020;
const LAMBDA: f64 = 750.0;
const REQUESTS: f64 = 2000.0;
/// Two-sided 99.9% normal quantile.
const Z_999: f64 = 3.2905;

fn model_text() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/load-shedding.json"
    );
    std::fs::read_to_string(path).expect("models/load-shedding.json is readable")
}

fn load(seed: Option<u64>, sets: &[(&str, serde_json::Value)]) -> LoadedModel {
    let sets: Vec<(String, serde_json::Value)> = sets
        .iter()
        .map(|(p, v)| (p.to_string(), v.clone()))
        .collect();
    load_model(&model_text(), &sets, seed).expect("the bundled model is valid")
}

/// Every variant, in file order.
fn run_all(seed: Option<u64>) -> Vec<VariantReport> {
    load(seed, &[]).variants.iter().map(run_variant).collect()
}

fn by_name<'a>(reports: &'a [VariantReport], name: &str) -> &'a VariantReport {
    reports
        .iter()
        .find(|r| r.variant == name)
        .unwrap_or_else(|| panic!("variant {name}"))
}

fn server(r: &VariantReport) -> &ServiceReport {
    &r.services[0]
}

fn workload<'a>(r: &'a VariantReport, name: &str) -> &'a WorkloadReport {
    r.workloads
        .iter()
        .find(|w| w.name == name)
        .unwrap_or_else(|| panic!("workload {name}"))
}

/// Erlang B: the blocking probability of c servers offered `a` erlangs.
fn erlang_b(c: u32, a: f64) -> f64 {
    (1..=c).fold(1.0, |b, k| a * b / (f64::from(k) + a * b))
}

fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

/// Busy share of the server's workers over the buckets that start before `until_s`.
fn utilisation(r: &VariantReport, until_s: f64) -> f64 {
    let series = &r.series;
    let buckets: Vec<usize> = (0..series.len())
        .filter(|&b| series.start_s(b) + 1e-9 < until_s)
        .collect();
    let busy_ns: u128 = buckets.iter().map(|&b| series.service(b, 0).busy_ns).sum();
    busy_ns as f64 / (buckets.len() as f64 * series.bucket_s() * 1e9 * WORKERS)
}

#[test]
fn four_variants_offer_the_same_load() {
    let r = run_all(None);
    let names: Vec<&str> = r.iter().map(|v| v.variant.as_str()).collect();
    assert_eq!(names, ["no-shedding", "shedding", "priority", "adaptive"]);
    for v in &r {
        assert_eq!(v.requests, 2000, "{}", v.variant);
        assert_eq!(workload(v, "high").requests, 600, "{}", v.variant);
        assert_eq!(workload(v, "low").requests, 1400, "{}", v.variant);
        assert_eq!(server(v).calls, 2000, "{}", v.variant);
        // No network: every refusal is answered, nothing is left unanswered.
        assert_eq!(v.succeeded + v.failed, 2000, "{}", v.variant);
    }
    // Common random numbers: the same arrivals in every variant, so the
    // per-bucket offered load is identical.
    for v in &r[1..] {
        let offered = |x: &VariantReport| -> Vec<u64> {
            (0..x.series.len())
                .map(|b| x.series.service(b, 0).offered())
                .collect()
        };
        let (a, b) = (offered(&r[0]), offered(v));
        let n = a.len().min(b.len());
        assert_eq!(a[..n], b[..n], "{} sees other arrivals", v.variant);
    }
}

/// The semaphore's long-run accepted share is Erlang B's. Each replication is
/// the model stretched 20× (40,000 requests, about 53 s), so the transient of
/// the empty start and the ragged end of the two workloads (together about
/// +0.006 on a 2.7 s run, measured over 300 seeds; it shrinks as 1/length, to
/// about +0.0003 here) is small next to the confidence interval (about ±0.004).
#[test]
fn shedding_accepts_the_erlang_b_share() {
    const REPLICATIONS: u64 = 10;
    let stretch = [
        ("workloads[high].requests", serde_json::json!(600 * 20)),
        ("workloads[low].requests", serde_json::json!(1400 * 20)),
    ];
    let shares: Vec<f64> = (1..=REPLICATIONS)
        .map(|seed| {
            let model = load(Some(seed), &stretch);
            let variant = model
                .variants
                .iter()
                .find(|v| v.name == "shedding")
                .unwrap();
            let r = run_variant(variant);
            assert_eq!(r.requests, 40_000);
            r.success_rate.unwrap()
        })
        .collect();
    let expected = 1.0 - erlang_b(10, LAMBDA * WORK_S);
    assert!((expected - 0.5897).abs() < 1e-4, "Erlang B arithmetic");
    let (mean, sd) = mean_sd(&shares);
    let t = StudentsT::new(0.0, 1.0, (REPLICATIONS - 1) as f64)
        .unwrap()
        .inverse_cdf(0.9995);
    let half_width = t * sd / (REPLICATIONS as f64).sqrt();
    assert!(
        (mean - expected).abs() <= half_width,
        "accepted share {mean:.4} ± {half_width:.4} (99.9% CI) misses Erlang B's {expected:.4}"
    );
    // The interval is narrow enough to mean something: one worker more or less
    // moves the share by about 0.05.
    assert!(half_width < 0.01, "half width {half_width}");
}

/// Every claim of the model, on one run.
fn check_claims(r: &[VariantReport], seed: &str) {
    let no_shed = by_name(r, "no-shedding");
    let shed = by_name(r, "shedding");
    let prio = by_name(r, "priority");
    let adaptive = by_name(r, "adaptive");

    // --- no-shedding: everyone is served, after a wait that grows all along.
    assert_eq!(no_shed.succeeded, 2000, "{seed}");
    // Fluid arithmetic: the queue forms within the first few ms and never
    // empties, so request k starts about (k − 10)/μ and arrives about k/λ:
    // its latency is about k(1/μ − 1/λ) + s = k/1500 + 0.02 s. The p99 is
    // about request 1980's: 1.34 s. Its spread is that of the 1980th arrival
    // time, Gamma(1980, λ): sd = √1980/750 = 0.059 s; ±4 sd.
    let fluid_p99_ms = (0.99 * REQUESTS * (WORK_S / WORKERS - 1.0 / LAMBDA) + WORK_S) * 1e3;
    let sd_ms = (0.99 * REQUESTS).sqrt() / LAMBDA * 1e3;
    let p99 = no_shed.latency_ms.unwrap().p99;
    assert!(
        (p99 - fluid_p99_ms).abs() <= 4.0 * sd_ms,
        "{seed}: no-shedding p99 {p99} ms, fluid {fluid_p99_ms:.0} ± {:.0}",
        4.0 * sd_ms
    );
    // The claim: at least 50 × the 20 ms of work.
    assert!(p99 >= 1000.0, "{seed}: no-shedding p99 {p99} ms < 1 s");
    // Work conservation: 2000 × 20 ms on 10 workers is 4.0 s of work, started
    // when the 10th request arrives (Gamma(10, λ): mean 13 ms, P(> 60 ms) ≈
    // 1e-11) and never interrupted, since the backlog never clears.
    assert!(
        (4.0..4.06).contains(&no_shed.completion_s),
        "{seed}: no-shedding ends at {} s",
        no_shed.completion_s
    );

    // --- shedding: 55–70% accepted, each in exactly 20 ms.
    let share = shed.success_rate.unwrap();
    assert!(
        (0.55..=0.70).contains(&share),
        "{seed}: shedding accepted {share}"
    );
    assert_eq!(shed.failed, shed.failed_by_reason.rejected, "{seed}");
    assert_eq!(
        server(shed).rejected,
        shed.failed,
        "{seed}: 503s at the semaphore"
    );
    assert_eq!(server(shed).max_queue, 0, "{seed}");
    // Nothing waits, and the work is constant: the accepted latency is exactly
    // 20 ms (p99 is an HDR bucket midpoint, within 0.1%; the max is exact).
    assert!(shed.ok_latency_ms.unwrap().p99 <= 1.1 * 20.0, "{seed}");
    assert!(
        (shed.ok_latency_ms.unwrap().max - 20.0).abs() < 1e-9,
        "{seed}"
    );
    assert!(
        (shed.ok_latency_ms.unwrap().p50 - 20.0).abs() < 0.02,
        "{seed}"
    );
    // The semaphore turns away work while workers sit idle (Erlang loss):
    // carried load λs(1 − B) = 8.85 of 10 workers, utilisation 0.885; over the
    // first 2.5 s its sd is about 0.007 (seeds 1-30: 0.870-0.897), so 0.93 is
    // over 6 sd away, while a semaphore that queued would reach about 1.
    let u_shed = utilisation(shed, 2.5);
    assert!(u_shed < 0.93, "{seed}: semaphore utilisation {u_shed}");

    // --- priority: high keeps ≥ 95% (in fact all), low absorbs the shedding.
    let high = workload(prio, "high");
    let low = workload(prio, "low");
    // Low is shed at 10 in flight (working or queued), so it never queues: it
    // only takes a free worker, and while a high request waits every freed
    // worker goes to high. High's queue (capacity 10) drains at the full
    // 500 req/s against 225 req/s of arrivals (ρ = 0.45): P(10 queued) is of
    // order 0.45^10 ≈ 3e-4, so of 600 high requests about 0.2 are refused;
    // refusing 7 or more (99% success fails) has probability below 1e-6.
    assert!(
        high.success_rate.unwrap() >= 0.99,
        "{seed}: high success {}",
        high.success_rate.unwrap()
    );
    // Low never waits: its latency is 0 (shed) or exactly 20 ms.
    assert!(
        (low.latency_ms.unwrap().max - 20.0).abs() < 1e-9,
        "{seed}: low waited"
    );
    // High waits at most for the 10 workers to free once (a queued request has
    // at most 9 ahead of it): latency ≤ 40 ms.
    assert!(high.latency_ms.unwrap().max <= 40.0 + 1e-9, "{seed}");
    // Low absorbs the shedding: it loses more than under the class-blind
    // semaphore, on the same requests.
    let low_blind = workload(shed, "low");
    assert!(
        low.succeeded < low_blind.succeeded,
        "{seed}: low {} vs {} class-blind",
        low.succeeded,
        low_blind.succeeded
    );
    assert!(
        workload(shed, "high").success_rate.unwrap() < 0.8,
        "{seed}: the class-blind semaphore does not protect high"
    );

    // --- adaptive (CoDel): no threshold configured; sheds on queueing delay.
    // A small standing queue keeps every worker busy while requests arrive,
    // so it accepts more than the semaphore, which idles workers.
    let u_codel = utilisation(adaptive, 2.5);
    assert!(u_codel >= 0.95, "{seed}: CoDel utilisation {u_codel}");
    assert!(
        adaptive.succeeded > shed.succeeded,
        "{seed}: CoDel accepted {} vs semaphore {}",
        adaptive.succeeded,
        shed.succeeded
    );
    assert!(server(adaptive).shed > 0, "{seed}: CoDel dropped nothing");
    // Latency stays bounded. CoDel starts dropping once the head's queueing
    // delay has stayed above 5 ms for 20 ms, then drops the n-th request about
    // 40√n ms later (interval/√n spacing), against 250 req/s of excess: in that
    // ramp the backlog grows by at most 0.25τ − (τ/40)² ≤ 25 requests (at
    // τ = 200 ms), on top of the ~10 queued when dropping starts. Each queued
    // request is 2 ms of wait (10 workers × 20 ms), so the typical peak is
    // about 20 + 2 × 35 = 90 ms; Poisson bursts push single peaks higher (the
    // longest queue over seeds 1-30 is 73, the accepted p99 56-98 ms). 150 ms
    // (a backlog of 65) is a bound with room for that, and still catches a
    // CoDel that does not control the queue: without it the p99 is over 1 s,
    // with the RFC's 100 ms interval about 850 ms (the drop rate then needs
    // ~5 s to reach the excess, longer than the burst).
    let p99 = adaptive.ok_latency_ms.unwrap().p99;
    assert!(p99 <= 150.0, "{seed}: CoDel accepted p99 {p99} ms");
    assert!(p99 <= no_shed.latency_ms.unwrap().p99 / 10.0, "{seed}");
}

#[test]
fn claims_hold_at_the_default_seed() {
    check_claims(&run_all(None), "default seed");
}

/// The same claims on 29 more seeds: a claim that holds at seed 1 only by
/// luck fails here. And the margin of the headline figure: the accepted share
/// of one run has an sd of about 0.011 (estimated over these seeds; 0.012 over
/// 300), and the 99.9% prediction interval of one run (mean ± 3.29 sd, about
/// 0.560-0.632) must sit inside the article's 55–70% band.
#[test]
fn claims_hold_across_seeds() {
    let mut shares = Vec::new();
    for seed in 2..=30 {
        let r = run_all(Some(seed));
        check_claims(&r, &format!("seed {seed}"));
        shares.push(by_name(&r, "shedding").success_rate.unwrap());
    }
    let (mean, sd) = mean_sd(&shares);
    assert!(
        mean - Z_999 * sd >= 0.55 && mean + Z_999 * sd <= 0.70,
        "accepted share {mean:.4}, 99.9% prediction interval ± {:.4}",
        Z_999 * sd
    );
}
