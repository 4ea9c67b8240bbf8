//! A workload's copies reported summed (`report_copies: "summed"`): the same
//! run as with the copies reported one by one, only told as one workload.

use serde_json::{json, Value};
use stormsim_model::load_model;
use stormsim_sim::{run_model, VariantReport};

/// Four clients with their own breakers and retries against a service that
/// slows down for a while, so that the copies' counts differ (failures,
/// retries, breaker refusals), and a second workload reported on its own.
fn model(report_copies: &str) -> Value {
    json!({
        "name": "copies",
        "seed": 7,
        "workloads": [
            {"name": "client", "count": 4, "report_copies": report_copies,
             "target": "api", "arrival": {"kind": "poisson", "rate_per_s": 60},
             "duration_s": 20, "timeout_ms": 200,
             "retry": {"max_attempts": 3, "backoff": {"kind": "fixed", "ms": 10}},
             "breaker": {"kind": "resilience4j", "failure_rate_threshold": 50,
                         "sliding_window_type": "count_based", "sliding_window_size": 20,
                         "minimum_number_of_calls": 10, "wait_duration_in_open_state_ms": 1000,
                         "permitted_number_of_calls_in_half_open_state": 5}},
            {"name": "batch", "target": "api",
             "arrival": {"kind": "poisson", "rate_per_s": 20}, "duration_s": 20}
        ],
        "services": [
            {"name": "api", "workers": 40,
             "steps": [{"work": {"kind": "exponential", "mean_ms": 60}}]}
        ],
        "timeline": [
            {"name": "slow", "at_s": 5, "set": {"services[api].steps[0].work.mean_ms": 400}},
            {"name": "fast", "at_s": 10, "set": {"services[api].steps[0].work.mean_ms": 60}}
        ]
    })
}

fn run(doc: &Value) -> VariantReport {
    let loaded = load_model(&doc.to_string(), &[], None).unwrap_or_else(|e| panic!("{e:?}"));
    run_model(&loaded).variants.remove(0)
}

#[test]
fn summed_copies_are_the_same_run_told_as_one_workload() {
    let (each, summed) = (run(&model("each")), run(&model("summed")));

    let names =
        |r: &VariantReport| -> Vec<String> { r.workloads.iter().map(|w| w.name.clone()).collect() };
    assert_eq!(
        names(&each),
        ["client-01", "client-02", "client-03", "client-04", "batch"]
    );
    assert_eq!(names(&summed), ["client", "batch"]);

    // The copies ran apart (their own breakers), so their counts differ…
    let copies = &each.workloads[..4];
    assert!(
        copies.iter().any(|c| c.succeeded != copies[0].succeeded),
        "the copies should not all succeed alike: {copies:?}"
    );
    // …and the summed workload adds them up.
    let client = &summed.workloads[0];
    assert_eq!(
        client.requests,
        copies.iter().map(|c| c.requests).sum::<u64>()
    );
    assert_eq!(
        client.succeeded,
        copies.iter().map(|c| c.succeeded).sum::<u64>()
    );
    assert_eq!(summed.workloads[1], each.workloads[4]);

    // One edge for the copies, its counters the sum of theirs.
    let callers =
        |r: &VariantReport| -> Vec<String> { r.edges.iter().map(|e| e.caller.clone()).collect() };
    assert_eq!(callers(&summed), ["workload:client", "workload:batch"]);
    let mut sum = each.edges[0].counters.clone();
    for e in &each.edges[1..4] {
        sum.absorb(&e.counters);
    }
    assert_eq!(summed.edges[0].counters, sum);
    assert!(sum.retries > 0 && sum.breaker_rejected > 0, "{sum:?}");

    // Everything else is the same run, byte for byte.
    let rest = |r: &VariantReport| {
        let mut r = r.clone();
        r.workloads.clear();
        r.edges.clear();
        serde_json::to_string(&r).unwrap()
    };
    assert_eq!(rest(&each), rest(&summed));
}

/// With the copies the only workload, the summed workload's latency
/// quantiles are the run's: those of all its requests together, not a mean
/// of the copies' quantiles.
#[test]
fn summed_latencies_are_those_of_all_the_copies_requests() {
    let mut doc = model("summed");
    doc["workloads"].as_array_mut().unwrap().truncate(1);
    let r = run(&doc);
    assert_eq!(r.workloads.len(), 1);
    assert!(r.latency_ms.is_some());
    assert_eq!(r.workloads[0].latency_ms, r.latency_ms);
}
