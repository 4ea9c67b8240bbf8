//! Caches: a hot key expiring under a crowd of 5,000 requests, with and without
//! coalescing and stale-while-revalidate (`models/cache-stampede.json`); and the
//! hit ratio of a TTL cache under Zipf popularity against its renewal formula
//! (`models/cache-zipf.json`).

use statrs::distribution::{ContinuousCDF, StudentsT};
use stormsim_model::load_model;
use stormsim_sim::metrics::CacheCounts;
use stormsim_sim::{run_variant, ServiceReport, VariantReport};

fn model_text(file: &str) -> String {
    let path = format!("{}/../../models/{file}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn run(name: &str, seed: Option<u64>) -> VariantReport {
    let file = if name.starts_with("ttl-") {
        "cache-zipf.json"
    } else {
        "cache-stampede.json"
    };
    let model = load_model(&model_text(file), &[], seed).expect("the bundled model is valid");
    let v = model.variants.iter().find(|v| v.name == name).unwrap();
    run_variant(v)
}

fn db(r: &VariantReport) -> &ServiceReport {
    r.services.iter().find(|s| s.name == "db").unwrap()
}

fn cache(r: &VariantReport) -> CacheCounts {
    r.edges
        .iter()
        .find(|e| e.caller == "frontend")
        .unwrap()
        .counters
        .cache
}

/// The hot key has expired when 5,000 requests for it reach four instances:
/// without coalescing each is a miss and a database query; with it, one load
/// per instance and everyone else waits for it; with stale-while-revalidate,
/// every request is answered from the stale entry (two 0.5 ms hops) and each
/// instance refreshes it once in the background.
#[test]
fn a_hot_key_expiring_under_a_crowd() {
    let plain = run("no-coalescing", None);
    assert_eq!(db(&plain).calls, 5000);
    assert_eq!(cache(&plain).misses, 5000);
    // 5,000 queries of 20 ms on 20 workers: 5 s of backlog.
    assert!(
        plain.latency_ms.unwrap().p99 > 4000.0,
        "{}",
        plain.latency_ms.unwrap().p99
    );

    let coalesced = run("coalescing", None);
    assert_eq!(db(&coalesced).calls, 4, "one load per instance");
    let c = cache(&coalesced);
    assert_eq!((c.misses, c.coalesced), (4, 4996));
    assert_eq!(
        coalesced.succeeded, 5000,
        "the waiters share the load's answer"
    );
    assert!(
        coalesced.latency_ms.unwrap().max < 25.0,
        "{}",
        coalesced.latency_ms.unwrap().max
    );

    let swr = run("stale-while-revalidate", None);
    let c = cache(&swr);
    assert_eq!((c.misses, c.stale_hits, c.refreshes), (0, 5000, 4));
    assert_eq!(db(&swr).calls, 4, "only the background refreshes");
    assert_eq!(swr.latency_ms.unwrap().max, 1.0);
}

/// A key asked for at rate λ (Poisson, per instance) lives in cycles: a miss,
/// its load (L = 2 ms: two hops and 1 ms of work, during which requests join
/// it), then a TTL of T = 0.5 s of hits; so its share of hits is
/// λT / (1 + λL + λT). Summed over 10,000 Zipf keys (s = 1) with λ_k = 2,000/s
/// × p_k / 4 instances (a random balancer thins the Poisson stream). The run
/// starts empty, as right after an expiry, so the only bias is the first TTL
/// (about 0.25 s / 300 s of the hits of rarely asked keys, < 0.001). Five seeds;
/// the formula must lie in the 99.9% Student-t interval of their mean.
#[test]
fn the_hit_ratio_follows_the_renewal_formula() {
    let (n, s, lambda, ttl, load) = (10_000, 1.0f64, 2000.0 / 4.0, 0.5, 0.002);
    let weights: Vec<f64> = (1..=n).map(|k| libm::pow(f64::from(k), -s)).collect();
    let total: f64 = weights.iter().sum();
    let analytic: f64 = weights
        .iter()
        .map(|w| {
            let p = w / total;
            let l = lambda * p;
            p * l * ttl / (1.0 + l * load + l * ttl)
        })
        .sum();
    let ratios: Vec<f64> = (1..=5)
        .map(|seed| {
            let r = run("ttl-0.5s", Some(seed));
            cache(&r).hits as f64 / r.requests as f64
        })
        .collect();
    let m = ratios.len() as f64;
    let mean = ratios.iter().sum::<f64>() / m;
    let sd = (ratios.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (m - 1.0)).sqrt();
    let t = StudentsT::new(0.0, 1.0, m - 1.0)
        .expect("valid degrees of freedom")
        .inverse_cdf(0.9995);
    let half = t * sd / m.sqrt();
    assert!(
        (mean - analytic).abs() < half,
        "hit ratio {mean} ± {half} against {analytic}"
    );
}
