//! A message with no latency that its handler sends as its last act (a
//! refusal's answer, the retry sent when a backoff ends) is handled at once
//! when the run loop would handle it next anyway (`Simulator::deliver_last`).
//! That is a shortcut, not a semantics: every run must report exactly what
//! the queued delivery reports, every attempt ending at the same instant in
//! the same order, the same events counted, and a run cut by its event limit
//! cut at the same event.

use serde_json::{json, Value};
use stormsim_model::{load_model, LoadedModel};
use stormsim_sim::{Simulator, VariantReport};

fn model_file(name: &str) -> String {
    let path = format!("{}/../../models/{name}.json", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn load(text: &str, overrides: &[(&str, Value)]) -> LoadedModel {
    let sets: Vec<(String, Value)> = overrides
        .iter()
        .map(|(path, value)| ((*path).to_string(), value.clone()))
        .collect();
    load_model(text, &sets, None).unwrap_or_else(|e| panic!("{e:?}"))
}

/// Runs every variant of `model` both ways, keeping each attempt's record
/// (in the order attempts end), and asserts the reports are equal. Returns
/// the reports, for the caller to check the run exercised what it meant to.
fn assert_same_both_ways(name: &str, model: &LoadedModel) -> Vec<VariantReport> {
    model
        .variants
        .iter()
        .map(|v| {
            let at_once = Simulator::new(&v.model, &v.changes)
                .record_attempts()
                .run(&v.name);
            let queued = Simulator::new(&v.model, &v.changes)
                .record_attempts()
                .queue_every_message()
                .run(&v.name);
            assert_eq!(
                at_once.attempts.len(),
                queued.attempts.len(),
                "{name}, variant {}: attempts",
                v.name
            );
            if let Some(i) =
                (0..at_once.attempts.len()).find(|&i| at_once.attempts[i] != queued.attempts[i])
            {
                panic!(
                    "{name}, variant {}: attempt {i} ended differently: {:?} at once, {:?} queued",
                    v.name, at_once.attempts[i], queued.attempts[i]
                );
            }
            assert!(
                at_once == queued,
                "{name}, variant {}: reports differ",
                v.name
            );
            at_once
        })
        .collect()
}

/// Every bundled model whose runs are short, over a network with no
/// latency (most bundled models have a hop, where nothing is delivered at
/// once): refusals by full queues, rate limits, shedding and down
/// instances, deadlines, hedges, fan-outs, caches, closed loops and
/// timelines, each sent at the current instant.
#[test]
fn every_short_bundled_model_reports_the_same_delivered_at_once_or_queued() {
    let no_latency = json!({"one_way": {"kind": "constant", "ms": 0}});
    for name in [
        "admission-work",
        "bulkhead",
        "cache-stampede",
        "circuit-breaker",
        "cpu-saturation",
        "deadline-chain",
        "deadline-encodings",
        "error-spike",
        "load-shedding",
        "overload-lifo",
        "parallel-page",
        "retry-amplification",
        "retry-budgets",
        "thundering-herd",
    ] {
        let model = load(&model_file(name), &[("network", no_latency.clone())]);
        assert_same_both_ways(name, &model);
    }
    // Hedges, tied and untied, braked, under overload: a tenth of its requests.
    let model = load(
        &model_file("tail-at-scale"),
        &[
            ("network", no_latency),
            ("workloads[users].requests", json!(2000)),
        ],
    );
    assert_same_both_ways("tail-at-scale", &model);
}

/// The shared benchmark model through its trigger into the storm, where
/// most attempts are refused by the full queue and retried after a fixed
/// backoff: the chains delivered at once.
#[test]
fn catalog_lite_into_its_storm_reports_the_same_delivered_at_once_or_queued() {
    let model = load(
        &model_file("bench/catalog-lite"),
        &[
            ("horizon_s", json!(66)),
            ("workloads[clients].duration_s", json!(66)),
        ],
    );
    let reports = assert_same_both_ways("catalog-lite", &model);
    let catalog = &reports[0].services[0];
    assert!(
        catalog.rejected > 10_000 && catalog.retries > 10_000,
        "into the storm: {} rejected, {} retries",
        catalog.rejected,
        catalog.retries
    );
}

/// A run cut by its event limit stops at the same event both ways: never
/// one delivered at once past the limit, whatever event the limit falls on
/// (in the storm, most fall inside a chain of messages).
#[test]
fn a_run_cut_by_its_event_limit_stops_at_the_same_event_either_way() {
    let text = model_file("bench/catalog-lite");
    for max_events in [2_600_001, 2_600_002, 2_600_003, 2_700_000] {
        let model = load(
            &text,
            &[
                ("horizon_s", json!(70)),
                ("workloads[clients].duration_s", json!(70)),
                ("limits", json!({"max_events": max_events})),
            ],
        );
        let reports = assert_same_both_ways("catalog-lite", &model);
        assert_eq!(reports[0].events, max_events, "cut at the limit");
    }
}

/// A handler that sends several messages at one instant: a page calls a
/// gate that refuses most calls and a backend, together. The gate's
/// refusal is its arrival's last act, but the backend's attempt is still
/// due at that instant, before the refusal's answer: the answer must wait
/// for it (handled at once, it would fail the page and cancel the backend's
/// attempt before it arrived).
#[test]
fn an_answer_waits_for_the_messages_due_before_it() {
    let model = load(
        r#"{
          "name": "refused-branch", "seed": 3, "horizon_s": 20,
          "workloads": [{"name": "users", "target": "page", "duration_s": 20,
                         "arrival": {"kind": "poisson", "rate_per_s": 400}}],
          "services": [
            {"name": "page", "workers": 2, "queue_capacity": 50,
             "steps": [{"parallel": {"branches": [
               {"call": "gate"},
               {"call": "backend"}]}}]},
            {"name": "gate", "workers": 1, "queue_capacity": 0,
             "steps": [{"work": {"kind": "exponential", "mean_ms": 2}}]},
            {"name": "backend", "workers": 4, "queue_capacity": 10,
             "steps": [{"work": {"kind": "exponential", "mean_ms": 3}, "on_cancel": "stop"}]}
          ]
        }"#,
        &[],
    );
    let reports = assert_same_both_ways("refused-branch", &model);
    let gate = &reports[0].services[1];
    assert!(gate.rejected > 1_000, "{} refusals", gate.rejected);
}

/// A retry on an edge that hedges is not its handler's last act: the
/// hedge's timer is armed after it is sent, and must take its place among
/// ties before whatever the attempt's arrival schedules. Here a hedge is
/// due exactly when the work is done (both 10 ms after the retry): the
/// hedge goes first, as in the queued delivery.
#[test]
fn a_hedge_due_with_the_work_keeps_its_place_among_ties() {
    let model = load(
        r#"{
          "name": "hedge-tie", "seed": 5, "horizon_s": 10,
          "workloads": [{"name": "users", "target": "frontend", "duration_s": 10,
                         "arrival": {"kind": "poisson", "rate_per_s": 50}}],
          "services": [
            {"name": "frontend",
             "steps": [{"call": "api",
                        "retry": {"max_attempts": 3, "backoff": {"kind": "fixed", "ms": 5},
                                  "retry_on": ["error"]},
                        "hedge": {"delay_ms": 10, "max_hedges": 1}, "idempotent": true}]},
            {"name": "api", "instances": 2,
             "steps": [{"work": {"kind": "constant", "ms": 10}, "error": {"p": 0.5}}]}]
        }"#,
        &[],
    );
    let reports = assert_same_both_ways("hedge-tie", &model);
    let api = &reports[0].services[1];
    assert!(api.retries > 100, "{} retries", api.retries);
}
