//! The statistical round trip: traces of a known system (`trace_common`),
//! written as OTLP JSON (both JSON mappings) and as Jaeger JSON, imported,
//! and the model's rate, calls per request, work quantiles and error shares
//! compared with the truth; then the model simulated, and its latency
//! compared with the traces' root spans.
//!
//! Tolerances come from sampling error, at four standard errors (a
//! two-sided miss about once in 16,000 per comparison), checked over
//! several seeds (replications, not one lucky seed):
//!
//! - rate: from `n` Poisson arrivals, `(n − 1) / window` has a standard
//!   error of `rate / √n` (the window is a Gamma(n − 1, rate) sum);
//! - a `q`-quantile of `n` draws from a density `f`: standard error
//!   `√(q (1 − q) / n) / f(x_q)` (the asymptotic normality of sample
//!   quantiles), plus 5 µs for Jaeger's whole microseconds;
//! - an error share `p` over `n` executions: binomial, `√(p (1 − p) / n)`.
//!
//! The z-scores of each quantity are also averaged over the replications:
//! the mean of `R` independent standard normals has standard error `1/√R`,
//! so a bias in the import would show there before any single seed fails.

mod trace_common;

use serde_json::Value;
use stormsim_import::{import, Source};
use trace_common::*;

/// Requests per replication, and the replications' seeds.
const N: usize = 1500;
const SEEDS: [u64; 4] = [11, 12, 13, 14];
/// Standard errors a single estimate may be off.
const Z: f64 = 4.0;
/// Jaeger keeps whole microseconds: an own time is off by a few of them.
const ROUNDING_MS: f64 = 0.005;

/// Standard normal quantiles.
const Z50: f64 = 0.0;
const Z90: f64 = 1.281_551_565_545;
const Z99: f64 = 2.326_347_874_041;

/// The `ms` of the point at `q` of a `quantiles` distribution.
fn point(dist: &Value, q: f64) -> f64 {
    dist["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| (p["q"].as_f64().unwrap() - q).abs() < 1e-12)
        .unwrap_or_else(|| panic!("no point at q = {q} in {dist}"))["ms"]
        .as_f64()
        .unwrap()
}

/// A named estimate, its truth and its standard error.
struct Check {
    what: String,
    estimate: f64,
    truth: f64,
    se: f64,
    slack: f64,
}

impl Check {
    fn z(&self) -> f64 {
        (self.estimate - self.truth) / self.se
    }
}

/// Everything compared for one imported model.
fn checks(model: &Value, generated: &Generated) -> Vec<Check> {
    let n = generated.roots.len() as f64;
    let mut out = Vec::new();
    let w = &model["workloads"][0];
    out.push(Check {
        what: "rate".into(),
        estimate: w["arrival"]["rate_per_s"].as_f64().unwrap(),
        truth: RATE,
        se: RATE / n.sqrt(),
        slack: 0.0,
    });
    let a_work = &service(model, "A")["steps"][0]["work"];
    for (q, z) in [(0.5, Z50), (0.9, Z90), (0.99, Z99)] {
        let x = A_MEDIAN_MS * libm::exp(A_SIGMA * z);
        let density = libm::exp(-z * z / 2.0) / (2.0 * std::f64::consts::PI).sqrt() / (x * A_SIGMA);
        out.push(Check {
            what: format!("A own time p{}", q * 100.0),
            estimate: point(a_work, q),
            truth: x,
            se: (q * (1.0 - q) / n).sqrt() / density,
            slack: ROUNDING_MS,
        });
    }
    let b_work = &service(model, "B")["steps"][0]["work"];
    let nb = 2.0 * n;
    for q in [0.5, 0.9, 0.99] {
        out.push(Check {
            what: format!("B own time p{}", q * 100.0),
            estimate: point(b_work, q),
            truth: -B_MEAN_MS * libm::log(1.0 - q),
            se: (q * (1.0 - q) / nb).sqrt() / ((1.0 - q) / B_MEAN_MS),
            slack: ROUNDING_MS,
        });
    }
    let error_p = |s: &str| {
        service(model, s)["steps"][0]["error"]["p"]
            .as_f64()
            .unwrap_or(0.0)
    };
    // A's own share is read over the executions whose calls all
    // succeeded, about n (1 − p)² of them.
    let na = n * (1.0 - P_ERROR).powi(2);
    for (s, count) in [("A", na), ("B", nb)] {
        out.push(Check {
            what: format!("{s} error.p"),
            estimate: error_p(s),
            truth: P_ERROR,
            se: (P_ERROR * (1.0 - P_ERROR) / count).sqrt(),
            slack: 0.0,
        });
    }
    out
}

/// The structure, which is exact: the client is the workload, A works then
/// calls B twice at once, B only works; one-way network as generated.
fn assert_structure(model: &Value, what: &str) {
    let w = &model["workloads"][0];
    assert_eq!(
        (w["name"].as_str(), w["target"].as_str()),
        (Some("client"), Some("A")),
        "{what}"
    );
    assert_eq!(
        model["services"].as_array().unwrap().len(),
        2,
        "{what}: {model:#}"
    );
    let a = service(model, "A");
    let steps = a["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2, "{what}: {a:#}");
    assert_eq!(
        steps[1],
        serde_json::json!({"parallel": {"branches": [{"call": "B"}, {"call": "B"}]}}),
        "{what}: failed B calls were never retried, so no retry policy"
    );
    assert_eq!(
        service(model, "B")["steps"].as_array().unwrap().len(),
        1,
        "{what}"
    );
    let net = &model["network"]["one_way"];
    let net_ms = net["ms"].as_f64().unwrap_or_else(|| point(net, 0.5));
    assert!((net_ms - NET_MS).abs() <= 0.001, "{what}: network {net}");
}

fn import_one(source: Source, name: &str, text: String) -> stormsim_import::Imported {
    import(source, &[(name.to_string(), text)]).unwrap_or_else(|e| match e {
        stormsim_import::ImportError::Invalid(p) => panic!("{name}: {p:#?}"),
    })
}

#[test]
fn rate_calls_work_and_errors_come_back_within_sampling_error() {
    let mut z_sums: Vec<(String, f64)> = Vec::new();
    let mut replications = 0.0;
    for seed in SEEDS {
        let g = generate(seed, N);
        let style = if seed % 2 == 0 {
            OtlpStyle::Collector
        } else {
            OtlpStyle::Protobuf
        };
        let inputs = [
            (
                Source::Otlp,
                format!("seed {seed} otlp {style:?}"),
                otlp(&g.spans, style, 97),
            ),
            (
                Source::Jaeger,
                format!("seed {seed} jaeger"),
                jaeger(&g.spans),
            ),
        ];
        for (source, what, text) in inputs {
            let imported = import_one(source, &what, text);
            assert!(imported.whole_model);
            assert!(
                imported.unmapped.is_empty(),
                "{what}: {:#?}",
                imported.unmapped
            );
            assert_structure(&imported.model, &what);
            assert!(
                imported
                    .notes
                    .iter()
                    .any(|n| n.starts_with("edge A → B: 2.000 calls per request of A")),
                "{what}: {:#?}",
                imported.notes
            );
            for c in checks(&imported.model, &g) {
                let tolerance = Z * c.se + c.slack;
                assert!(
                    (c.estimate - c.truth).abs() <= tolerance,
                    "{what}: {} {} vs truth {} ± {tolerance}",
                    c.what,
                    c.estimate,
                    c.truth
                );
                match z_sums.iter_mut().find(|(w, _)| *w == c.what) {
                    Some((_, z)) => *z += c.z(),
                    None => z_sums.push((c.what.clone(), c.z())),
                }
            }
        }
        replications += 1.0;
    }
    // The OTLP and Jaeger imports of one seed share their sample: the mean
    // over seeds of their mean z has standard error 1/√R at most.
    for (what, sum) in z_sums {
        let mean = sum / (2.0 * replications);
        assert!(
            mean.abs() <= Z / replications.sqrt(),
            "{what}: mean z {mean:.2} over {replications} replications: a bias"
        );
    }
}

/// A sample quantile and the density there, estimated from the sample
/// itself: `2δ / (x(q + δ) − x(q − δ))`.
fn quantile_and_density(sorted: &[f64], q: f64, delta: f64) -> (f64, f64) {
    let at = |p: f64| sorted[((sorted.len() - 1) as f64 * p).round() as usize];
    (
        at(q),
        2.0 * delta / (at((q + delta).min(1.0)) - at(q - delta)),
    )
}

#[test]
fn the_imported_model_runs_and_its_latency_is_the_traces_root_latency() {
    let g = generate(7, 3000);
    let imported = import_one(
        Source::Otlp,
        "chain.jsonl",
        otlp(&g.spans, OtlpStyle::Collector, 50),
    );
    let text = imported.model.to_string();
    // Run longer than the traces, for a sample of its own.
    let runs = 20_000.0 / RATE;
    let sets = vec![(
        "workloads[client].duration_s".to_string(),
        serde_json::json!(runs),
    )];
    let loaded = stormsim_model::load_model(&text, &sets, Some(5))
        .unwrap_or_else(|e| panic!("{e:?}\n{text}"));
    let report = stormsim_sim::run_model(&loaded);
    let v = &report.variants[0];
    let sim = v.ok_latency_ms.as_ref().expect("requests succeeded");
    assert_eq!(v.unanswered, 0);
    // Failures only from the errors drawn: workers and queues never bind.
    assert_eq!(v.failed_by_reason.rejected, 0, "{v:#?}");

    let ok: Vec<f64> = {
        let mut v: Vec<f64> = g
            .roots
            .iter()
            .filter(|(_, e)| !e)
            .map(|(ms, _)| *ms)
            .collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let n_traces = ok.len() as f64;
    let n_sim = v.succeeded as f64;
    // Two independent sample quantiles: standard error of their difference
    // √(q(1−q)(1/n₁ + 1/n₂)) / f, f estimated from the traces; plus the
    // histogram's 0.1% resolution and the interpolation of the model's
    // quantile table (1%: straight lines between its points).
    for (q, delta, sim_q) in [
        (0.5, 0.05, sim.p50),
        (0.9, 0.03, sim.p90),
        (0.99, 0.005, sim.p99),
    ] {
        let (x, f) = quantile_and_density(&ok, q, delta);
        let se = (q * (1.0 - q) * (1.0 / n_traces + 1.0 / n_sim)).sqrt() / f;
        let tolerance = Z * se + 0.011 * x;
        assert!(
            (sim_q - x).abs() <= tolerance,
            "p{}: simulated {sim_q:.3} ms, traces {x:.3} ms ± {tolerance:.3}",
            q * 100.0
        );
    }
}
