//! The simulator against queueing theory: mean time in system of M/M/1, M/M/c
//! (Erlang C) and M/D/1 (Pollaczek–Khinchine), blocking of M/M/c/c (Erlang B),
//! and Little's law on the servers (mean busy workers = λ · E[S]).
//!
//! Each figure is the mean over independent replications (different seeds), and
//! the analytic value must lie in its 99.9% Student-t confidence interval. Runs
//! start empty; at these utilisations the relaxation time (under 1 s) is a tiny
//! fraction of each run (over 60 s), so the start-up bias is far inside the
//! intervals.

use serde_json::{json, Value};
use statrs::distribution::{ContinuousCDF, StudentsT};
use stormsim_model::load_model;
use stormsim_sim::{run_variant, VariantReport};

const REPLICATIONS: u64 = 10;
const MEAN_SERVICE_MS: f64 = 10.0;

fn model(rate_per_s: f64, workers: u32, queue: Option<u32>, work: Value, requests: u64) -> Value {
    let mut server = json!({"name": "server", "workers": workers, "steps": [{"work": work}]});
    if let Some(q) = queue {
        server["queue_capacity"] = json!(q);
    }
    json!({
        "name": "queue",
        "workloads": [{"name": "arrivals", "target": "server",
                       "arrival": {"kind": "poisson", "rate_per_s": rate_per_s},
                       "requests": requests}],
        "services": [server]
    })
}

fn replicate(doc: &Value) -> Vec<VariantReport> {
    (1..=REPLICATIONS)
        .map(|seed| {
            let m = load_model(&doc.to_string(), &[], Some(seed)).expect("valid model");
            run_variant(&m.variants[0])
        })
        .collect()
}

/// Asserts that `analytic` lies in the 99.9% CI of the mean of `xs`.
fn assert_in_ci(what: &str, xs: &[f64], analytic: f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let t = StudentsT::new(0.0, 1.0, n - 1.0)
        .unwrap()
        .inverse_cdf(0.9995);
    let half = t * sd / n.sqrt();
    assert!(
        (mean - analytic).abs() <= half,
        "{what}: simulated {mean:.4} ± {half:.4} (99.9% CI) misses the analytic {analytic:.4}"
    );
}

fn exponential() -> Value {
    json!({"kind": "exponential", "mean_ms": MEAN_SERVICE_MS})
}

/// Erlang C: the probability that an arrival waits in M/M/c with offered load a.
fn erlang_c(c: u32, a: f64) -> f64 {
    let mut term = 1.0;
    let mut sum = 1.0;
    for k in 1..c {
        term *= a / f64::from(k);
        sum += term;
    }
    let top = term * a / f64::from(c) * f64::from(c) / (f64::from(c) - a);
    top / (sum + top)
}

/// Erlang B: blocking probability of M/M/c/c with offered load a.
fn erlang_b(c: u32, a: f64) -> f64 {
    (1..=c).fold(1.0, |b, k| a * b / (f64::from(k) + a * b))
}

#[test]
fn mm1_mean_time_in_system() {
    let mu = 1000.0 / MEAN_SERVICE_MS;
    for rho in [0.5, 0.8] {
        let lambda = rho * mu;
        let runs = replicate(&model(lambda, 1, None, exponential(), 20_000));
        let w: Vec<f64> = runs.iter().map(|r| r.latency_ms.unwrap().mean).collect();
        // W = 1 / (μ − λ).
        assert_in_ci(&format!("M/M/1 ρ={rho} W ms"), &w, 1000.0 / (mu - lambda));
    }
}

#[test]
fn mmc_mean_time_in_system_follows_erlang_c() {
    let (c, mu) = (4, 1000.0 / MEAN_SERVICE_MS);
    for rho in [0.6, 0.9] {
        let lambda = rho * f64::from(c) * mu;
        let a = lambda / mu;
        let runs = replicate(&model(lambda, c, None, exponential(), 40_000));
        let w: Vec<f64> = runs.iter().map(|r| r.latency_ms.unwrap().mean).collect();
        // W = C(c, a) / (cμ − λ) + 1/μ.
        let analytic = 1000.0 * (erlang_c(c, a) / (f64::from(c) * mu - lambda) + 1.0 / mu);
        assert_in_ci(&format!("M/M/{c} ρ={rho} W ms"), &w, analytic);
    }
}

#[test]
fn md1_mean_time_in_system_follows_pollaczek_khinchine() {
    let mu = 1000.0 / MEAN_SERVICE_MS;
    let rho = 0.8;
    let lambda = rho * mu;
    let constant = json!({"kind": "constant", "ms": MEAN_SERVICE_MS});
    let runs = replicate(&model(lambda, 1, None, constant, 20_000));
    let w: Vec<f64> = runs.iter().map(|r| r.latency_ms.unwrap().mean).collect();
    // P-K with deterministic service: Wq = ρ / (2μ(1 − ρ)); W = Wq + 1/μ.
    let analytic = 1000.0 * (rho / (2.0 * mu * (1.0 - rho)) + 1.0 / mu);
    assert_in_ci("M/D/1 ρ=0.8 W ms", &w, analytic);
}

#[test]
fn mmcc_blocking_follows_erlang_b() {
    let (c, mu) = (5, 1000.0 / MEAN_SERVICE_MS);
    let a = 4.0;
    let runs = replicate(&model(a * mu, c, Some(0), exponential(), 20_000));
    let blocked: Vec<f64> = runs
        .iter()
        .map(|r| r.services[0].rejected as f64 / r.requests as f64)
        .collect();
    assert_in_ci("M/M/5/5 a=4 blocking", &blocked, erlang_b(c, a));
}

/// Little's law on the workers: the time-average number busy equals the
/// arrival rate times the mean service time, ρ·c.
#[test]
fn littles_law_holds_on_the_servers() {
    let (c, mu, rho) = (4, 1000.0 / MEAN_SERVICE_MS, 0.7);
    let lambda = rho * f64::from(c) * mu;
    let runs = replicate(&model(lambda, c, None, exponential(), 40_000));
    let busy: Vec<f64> = runs
        .iter()
        .map(|r| {
            let ts = &r.series;
            // Whole buckets only: the last one may be partial.
            let full = ts.len() - 1;
            let total: f64 = (0..full).map(|b| ts.service(b, 0).busy_ns as f64).sum();
            total / (full as f64 * ts.bucket.as_nanos() as f64)
        })
        .collect();
    assert_in_ci("M/M/4 mean busy workers", &busy, lambda / mu);
}

/// The summary's `utilisation` is the share of the workers busy over the
/// run: ρ for M/M/4 (its drain after the last arrival, tens of
/// milliseconds of a 14-second run, is far inside the interval). Its
/// `peak_utilisation` is the busiest bucket's, as timeseries.csv computes
/// it; a service of unbounded workers has neither.
#[test]
fn the_summary_utilisation_is_rho() {
    let (c, mu, rho) = (4, 1000.0 / MEAN_SERVICE_MS, 0.7);
    let lambda = rho * f64::from(c) * mu;
    let runs = replicate(&model(lambda, c, None, exponential(), 40_000));
    let server = |r: &VariantReport| r.services[0].clone();
    let means: Vec<f64> = runs
        .iter()
        .map(|r| server(r).utilisation.unwrap())
        .collect();
    assert_in_ci("M/M/4 utilisation", &means, rho);
    for r in &runs {
        let ts = &r.series;
        let width = ts.bucket.as_nanos() as f64;
        let busiest = (0..ts.len())
            .map(|b| ts.service(b, 0).busy_ns as f64 / width / f64::from(c))
            .fold(0.0, f64::max);
        let peak = server(r).peak_utilisation.unwrap();
        assert!((peak - busiest).abs() <= 5e-7, "{peak} against {busiest}");
        assert!(peak >= server(r).utilisation.unwrap());
    }
    let mut unbounded = model(lambda, c, None, exponential(), 1_000);
    unbounded["services"][0]
        .as_object_mut()
        .unwrap()
        .remove("workers");
    let r = &replicate(&unbounded)[0];
    assert_eq!(
        (server(r).utilisation, server(r).peak_utilisation),
        (None, None)
    );
}

/// The same on a `cpu`, where work shares the cores (processor sharing):
/// the time-average busy cores equal λ·E[S] whatever the discipline (the
/// cores do the work that arrives), and the requests in service, each
/// holding a thread of an unbounded pool, follow M/M/c's birth-death chain
/// (with n in service the cores finish work at min(n, c)·μ), so their mean
/// is M/M/c's mean number in system, ρ·c + C(c, a)·ρ/(1 − ρ).
#[test]
fn littles_law_holds_on_the_cores() {
    let (c, mu, rho) = (4u32, 1000.0 / MEAN_SERVICE_MS, 0.7);
    let lambda = rho * f64::from(c) * mu;
    let mut doc = model(lambda, c, None, exponential(), 40_000);
    doc["services"][0]
        .as_object_mut()
        .unwrap()
        .remove("workers");
    doc["services"][0]["cpu"] = json!({"cores": c});
    let runs = replicate(&doc);
    let mean_over_whole_buckets = |r: &VariantReport, ns: &dyn Fn(usize) -> u128| {
        let full = r.series.len() - 1;
        let total: f64 = (0..full).map(|b| ns(b) as f64).sum();
        total / (full as f64 * r.series.bucket.as_nanos() as f64)
    };
    let cores: Vec<f64> = runs
        .iter()
        .map(|r| mean_over_whole_buckets(r, &|b| r.series.cpu(b, 0).unwrap().cores_busy_ns))
        .collect();
    assert_in_ci("M/M/4-PS mean busy cores", &cores, lambda / mu);
    let threads: Vec<f64> = runs
        .iter()
        .map(|r| mean_over_whole_buckets(r, &|b| r.series.service(b, 0).busy_ns))
        .collect();
    let a = lambda / mu;
    let in_system = a + erlang_c(c, a) * rho / (1.0 - rho);
    assert_in_ci("M/M/4-PS mean requests in service", &threads, in_system);
    // Its c cores were up for the whole of every whole bucket.
    for r in &runs {
        let whole = r.series.len() - 1;
        let width = u128::from(r.series.bucket.as_nanos());
        assert!((0..whole).all(|b| r.series.cpu(b, 0).unwrap().core_ns == u128::from(c) * width));
    }
}

#[test]
fn the_formulas_themselves_are_right() {
    // By hand: B(5, 4) = (4^5/5!) / Σ_{k≤5} 4^k/k! = 8.5333 / 42.8667 = 0.19907.
    assert!((erlang_b(5, 4.0) - 0.19907).abs() < 1e-4);
    // C(4, 3.6): Σ_{k<4} 3.6^k/k! = 18.856; 3.6^4/4! · 4/0.4 = 69.984;
    // 69.984 / (18.856 + 69.984) = 0.78775.
    assert!((erlang_c(4, 3.6) - 0.78775).abs() < 1e-4);
    assert!((erlang_c(1, 0.8) - 0.8).abs() < 1e-12, "M/M/1: P(wait) = ρ");
}

/// A fan-out to N shards with no queueing (unbounded workers, no network) is
/// as slow as the slowest of N independent exponential children: the maximum
/// of N exponentials of mean m has mean m · H_N (H_N the N-th harmonic number,
/// by the memoryless spacings of order statistics) and distribution
/// P(max ≤ t) = (1 − e^(−t/m))^N, checked at its median.
#[test]
fn fan_out_latency_is_the_maximum_of_its_children() {
    for n in [2u32, 10, 50] {
        let doc = json!({
            "name": "fan-out",
            "workloads": [{"name": "users", "target": "root",
                           "arrival": {"kind": "poisson", "rate_per_s": 100},
                           "requests": 2_000}],
            "services": [
                {"name": "root", "steps": [{"call": "leaf", "fan_out": {}}]},
                {"name": "leaf", "shards": n, "instances": n, "steps": [{"work": exponential()}]}
            ]
        });
        let reports = replicate(&doc);
        let harmonic: f64 = (1..=n).map(|k| 1.0 / f64::from(k)).sum();
        let means: Vec<f64> = reports.iter().map(|r| r.latency_ms.unwrap().mean).collect();
        assert_in_ci(
            &format!("mean of the max of {n}"),
            &means,
            MEAN_SERVICE_MS * harmonic,
        );
        // The median of the max: (1 − e^(−t/m))^N = 1/2.
        let median = -MEAN_SERVICE_MS * libm::log(1.0 - libm::pow(0.5, 1.0 / f64::from(n)));
        let medians: Vec<f64> = reports.iter().map(|r| r.latency_ms.unwrap().p50).collect();
        assert_in_ci(&format!("median of the max of {n}"), &medians, median);
    }
}

/// A tandem of two M/M/1 queues (Jackson): A works, then hands the request on
/// to B (`hold_worker: false`) and frees its worker; B works and answers.
/// Burke's theorem makes B's arrivals Poisson too, so the mean time in the
/// system is 1/(μ_A − λ) + 1/(μ_B − λ).
#[test]
fn a_tandem_of_two_queues_is_two_mm1_in_series() {
    let (lambda, mean_a, mean_b) = (70.0, 10.0, 12.0);
    let doc = json!({
        "name": "tandem",
        "workloads": [{"name": "arrivals", "target": "A",
                       "arrival": {"kind": "poisson", "rate_per_s": lambda},
                       "requests": 20_000}],
        "services": [
            {"name": "A", "workers": 1, "steps": [
                {"work": {"kind": "exponential", "mean_ms": mean_a}},
                {"call": "B", "hold_worker": false}]},
            {"name": "B", "workers": 1, "steps": [
                {"work": {"kind": "exponential", "mean_ms": mean_b}}]}
        ]
    });
    let reports = replicate(&doc);
    let (mu_a, mu_b) = (1000.0 / mean_a, 1000.0 / mean_b);
    let analytic = 1000.0 / (mu_a - lambda) + 1000.0 / (mu_b - lambda);
    let means: Vec<f64> = reports.iter().map(|r| r.latency_ms.unwrap().mean).collect();
    assert_in_ci("tandem mean time in system, ms", &means, analytic);
    // Every request passed through both, and A's handlers all completed.
    for r in &reports {
        assert_eq!(r.succeeded, 20_000);
        let a = r.services.iter().find(|s| s.name == "A").unwrap();
        assert_eq!(a.completed, 20_000);
    }
}
