//! A variant that shares its past with an earlier one continues that run
//! from the instant they differ (`stormsim_sim::fork`): its report must be
//! the one a run of its own gives, byte for byte, on any number of threads.

use stormsim_engine::{SimDuration, SimTime};
use stormsim_model::{load_model, LoadedModel};
use stormsim_sim::fork::{plan, run_variants, Branch, Progress};
use stormsim_sim::{run_variant, VariantReport};

/// A two-tier storm with every kind of timer and policy state a fork must
/// copy: retries with jittered backoff on FIFO lanes and the heap, a
/// breaker, a retry budget, a constant network hop, instances behind a
/// balancer, a trigger and its rollback. Its variants differ from the
/// baseline at a bucket boundary, between boundaries, at the instant of a
/// shared change (tied with it), by moving a shared change, by adding
/// instances, and from time zero.
const STORM: &str = r#"{
  "name": "fork-storm",
  "seed": 7,
  "horizon_s": 40,
  "network": {"one_way": {"kind": "constant", "ms": 0.5}},
  "workloads": [{
    "name": "users", "target": "frontend",
    "arrival": {"kind": "poisson", "rate_per_s": 400},
    "duration_s": 40, "timeout_ms": 1000,
    "retry": {"max_attempts": 3, "backoff": {"kind": "fixed", "ms": 200},
              "retry_on": ["timeout", "rejected"]}
  }],
  "services": [
    {"name": "frontend", "workers": 64, "queue_capacity": 200,
     "steps": [{"work": {"kind": "constant", "ms": 1}},
               {"call": "backend", "timeout_ms": 300,
                "retry": {"max_attempts": 3,
                          "backoff": {"kind": "exponential", "base_ms": 20, "multiplier": 2, "cap_ms": 200},
                          "jitter": "full", "retry_on": ["timeout", "rejected"],
                          "budget": {"kind": "token_bucket", "ratio": 0.2, "max_tokens": 20}},
                "breaker": {"kind": "resilience4j", "wait_duration_in_open_state_ms": 2000}}]},
    {"name": "backend", "instances": 3, "workers": 4, "queue_capacity": 30,
     "steps": [{"work": {"kind": "lognormal", "median_ms": 5, "p99_ms": 30}}]}
  ],
  "timeline": [
    {"name": "slow deploy", "at_s": 5, "role": "trigger_start",
     "set": {"services[backend].steps[0].work": {"kind": "lognormal", "median_ms": 40, "p99_ms": 400}}},
    {"name": "rollback", "at_s": 15, "role": "trigger_end",
     "set": {"services[backend].steps[0].work": {"kind": "lognormal", "median_ms": 5, "p99_ms": 30}}}
  ],
  "variants": [
    {"name": "baseline", "set": {}},
    {"name": "scale at 20 s", "set": {"timeline[+]": {"name": "scale", "at_s": 20, "role": "intervention",
      "set": {"services[backend].workers": 8}}}},
    {"name": "retries off with the rollback", "set": {"timeline[+]": {"name": "no retries", "at_s": 15,
      "set": {"workloads[*].retry.max_attempts": 1}}}},
    {"name": "later rollback", "set": {"timeline[1].at_s": 25}},
    {"name": "more instances between buckets", "set": {"timeline[+]": {"name": "instances", "at_s": 12.3456789,
      "set": {"services[backend].instances": 5}}}},
    {"name": "no breaker", "set": {"services[frontend].steps[1].breaker": null}}
  ]
}"#;

fn storm() -> LoadedModel {
    load_model(STORM, &[], None).unwrap_or_else(|e| panic!("{e:?}"))
}

fn at_s(s: f64) -> SimTime {
    SimTime::ZERO + SimDuration::from_ms(s * 1e3)
}

fn forked(model: &LoadedModel, threads: usize) -> Vec<VariantReport> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool");
    pool.install(|| run_variants(&model.variants, &|_: Progress<'_>| {}))
}

#[test]
fn variants_fork_where_they_first_differ_and_not_before() {
    let model = storm();
    let branch = |at| {
        Some(Branch {
            trunk: 0,
            at: at_s(at),
        })
    };
    assert_eq!(
        plan(&model.variants),
        [
            None,
            branch(20.0),
            branch(15.0),
            branch(15.0),
            branch(12.3456789),
            None
        ]
    );
}

#[test]
fn a_forked_run_reports_what_its_own_run_does_on_any_number_of_threads() {
    let model = storm();
    let alone: Vec<VariantReport> = model.variants.iter().map(run_variant).collect();
    // Not a storm that never happened: the trigger's retries and refusals
    // are there to be copied.
    assert!(alone[0].services.iter().any(|s| s.rejected > 0));
    for threads in [1, 2, 3] {
        let together = forked(&model, threads);
        assert_eq!(together.len(), alone.len());
        for (f, a) in together.iter().zip(&alone) {
            assert_eq!(f, a, "variant {:?} on {threads} threads", a.variant);
        }
    }
}

/// A variant that adds an intervention while the base's ramp moves (and
/// another change of the base's has started during it) forks from the base
/// at the intervention, and runs the ramp's later steps as its own run does. (Found by the fuzzer of valid models: the ramp's steps
/// once came after the entries that start during it, and the fork skipped
/// the ones its trunk had not reached.)
#[test]
fn a_variant_that_intervenes_during_a_ramp_forks_to_its_own_run() {
    let doc = serde_json::json!({
        "name": "ramp-and-intervention",
        "workloads": [{"name": "w", "target": "s", "duration_s": 30,
                       "arrival": {"kind": "poisson", "rate_per_s": 100},
                       "timeout_ms": 200, "retry": {"max_attempts": 3}}],
        "services": [{"name": "s", "workers": 2, "queue_capacity": 50,
                      "steps": [{"work": {"kind": "exponential", "mean_ms": 15}}]}],
        "timeline": [{"name": "ramp", "at_s": 5, "over_s": 10,
                      "set": {"workloads[w].arrival.rate_per_s": 160}},
                     {"name": "slow", "at_s": 8,
                      "set": {"services[s].steps[0].work.mean_ms": 20}}],
        "variants": [
            {"name": "base"},
            {"name": "scale-out", "set": {"timeline[+]": {"name": "scale-out", "at_s": 9.5,
                                                          "set": {"services[s].workers": 4}}}}
        ]
    });
    let model = load_model(&doc.to_string(), &[], None).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(
        plan(&model.variants),
        [
            None,
            Some(Branch {
                trunk: 0,
                at: at_s(9.5)
            })
        ]
    );
    let alone: Vec<VariantReport> = model.variants.iter().map(run_variant).collect();
    assert_eq!(forked(&model, 2), alone);
}

#[test]
fn a_trunk_that_stops_at_a_limit_before_the_fork_leaves_its_forks_to_run_alone() {
    // The baseline stops at 100,000 events, before any intervention.
    let sets = [("limits.max_events".to_string(), serde_json::json!(100_000))];
    let model = load_model(STORM, &sets, None).unwrap_or_else(|e| panic!("{e:?}"));
    let alone: Vec<VariantReport> = model.variants.iter().map(run_variant).collect();
    assert!(alone[0].stopped_by_limit.is_some());
    assert_eq!(forked(&model, 2), alone);
}

#[test]
fn progress_hears_each_variant_start_and_end_once_with_the_events_it_ran() {
    let model = storm();
    let planned = plan(&model.variants);
    let heard = std::sync::Mutex::new(Vec::new());
    let reports = run_variants(&model.variants, &|p: Progress<'_>| {
        let line = match p {
            Progress::Started(v) => (v, "started", 0, 0),
            Progress::Done {
                variant,
                report,
                branch,
                events_here,
            } => {
                let shared = report.events - events_here;
                assert_eq!(shared > 0, branch.is_some(), "variant {variant}");
                // Every fork the plan made happened (none ran alone).
                assert_eq!(branch, planned[variant], "variant {variant}");
                (variant, "done", report.events, events_here)
            }
        };
        heard.lock().unwrap().push(line);
    });
    let mut heard = heard.into_inner().unwrap();
    heard.sort();
    let mut expected = Vec::new();
    for (v, r) in reports.iter().enumerate() {
        expected.push((
            v,
            "done",
            r.events,
            heard.iter().find(|h| h.0 == v && h.1 == "done").unwrap().3,
        ));
        expected.push((v, "started", 0, 0));
    }
    expected.sort();
    assert_eq!(heard, expected);
}

#[test]
fn the_incident_scale_out_forked_at_t_plus_16_min_matches_its_own_run() {
    // The bundled incident's timeline and variants, at a quarter of its
    // load and ten simulated seconds past the fork, with a breaker on the
    // clients (as it is, every one of these variants takes the fast path,
    // which never forks).
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/catalog-incident.json"
    );
    let text = std::fs::read_to_string(path).expect("the bundled model");
    let sets = [
        ("horizon_s".to_string(), serde_json::json!(1030)),
        (
            "workloads[client].arrival.rate_per_s".to_string(),
            serde_json::json!(100),
        ),
        (
            "workloads[client].breaker".to_string(),
            serde_json::json!({"kind": "resilience4j"}),
        ),
    ];
    let model = load_model(&text, &sets, None).unwrap_or_else(|e| panic!("{e:?}"));
    let keep = ["baseline", "scale-out-small"];
    let variants: Vec<_> = model
        .variants
        .into_iter()
        .filter(|v| keep.contains(&v.name.as_str()))
        .collect();
    assert_eq!(plan(&variants)[1].map(|b| b.at), Some(at_s(1020.0)));
    let together = run_variants(&variants, &|_: Progress<'_>| {});
    assert_eq!(together[1], run_variant(&variants[1]));
}
