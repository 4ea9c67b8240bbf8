//! Hedges and retry budgets together (gRPC's semantics, `budget.rs`): a hedge
//! draws on the edge's retry budget as a retry does, a hedge the budget
//! refuses is simply not sent, and each granted retry or hedge gives its slot
//! back exactly once (an Envoy budget counts retries in flight; a hedge of a
//! retry used to give back a slot it never took, which a debug assertion in
//! `RetryBudget::on_retry_finished` caught).

use serde_json::json;
use stormsim_model::load_model;
use stormsim_sim::{run_variant, VariantReport};

/// Front calls leaf (slow, `replicas` of it) with a 30 ms timeout, 3
/// attempts, `budget` (none if null) and, if `hedge`, a hedge after 10 ms:
/// with 3 replicas most tries hedge, and some retry.
fn run_with(budget: serde_json::Value, replicas: u32, hedge: bool, seed: u64) -> VariantReport {
    let mut step = json!({"call": "leaf", "timeout_ms": 30, "idempotent": true,
        "retry": {"max_attempts": 3, "backoff": {"kind": "fixed", "ms": 5}}});
    if !budget.is_null() {
        step["retry"]["budget"] = budget;
    }
    if hedge {
        step["hedge"] = json!({"delay_ms": 10});
    }
    let doc = json!({
        "name": "hedge-budgets",
        "workloads": [{"name": "u", "target": "front", "duration_s": 20,
                       "arrival": {"kind": "poisson", "rate_per_s": 200}}],
        "services": [
            {"name": "front", "steps": [step]},
            {"name": "leaf", "instances": replicas, "workers": 4,
             "steps": [{"work": {"kind": "exponential", "mean_ms": 12}}]}
        ]
    });
    let model = load_model(&doc.to_string(), &[], Some(seed)).expect("a valid model");
    run_variant(&model.variants[0])
}

fn run(budget: serde_json::Value, seed: u64) -> VariantReport {
    run_with(budget, 3, true, seed)
}

fn leaf(v: &VariantReport) -> &stormsim_sim::ServiceReport {
    v.services.iter().find(|s| s.name == "leaf").expect("leaf")
}

#[test]
fn a_token_bucket_pays_for_hedges_and_retries_alike() {
    for seed in 1..=3 {
        let free = run(serde_json::Value::Null, seed);
        let bucket = run(
            json!({"kind": "token_bucket", "ratio": 0.1, "max_tokens": 10}),
            seed,
        );
        let (f, b) = (leaf(&free), leaf(&bucket));
        assert!(
            f.hedges > 1_000 && f.retries > 0,
            "the test needs hedges and retries: {f:?}"
        );
        // Every hedge and retry spends a token; each first attempt at the edge
        // deposits 0.1, and the bucket starts with at most 10.
        let first = b.calls - b.hedges - b.retries;
        let spent = (b.hedges + b.retries) as f64;
        assert!(
            spent <= 10.0 + 0.1 * first as f64 + 1e-6,
            "seed {seed}: {spent} hedges and retries from {first} first attempts"
        );
        assert!(
            b.budget_denied > 0 && b.hedges < f.hedges,
            "seed {seed}: {b:?}"
        );
    }
}

/// An Envoy budget counts retries in flight: every hedge and retry it grants
/// is given back once (a double release trips the debug assertion in
/// `on_retry_finished`, and tests run with debug assertions).
#[test]
fn an_envoy_budget_gets_every_slot_back_once() {
    for seed in 1..=3 {
        let v = run(
            json!({"kind": "envoy", "budget_percent": 20, "min_retry_concurrency": 3}),
            seed,
        );
        assert!(leaf(&v).hedges > 0, "seed {seed}");
        assert!(leaf(&v).budget_denied > 0, "seed {seed}: the limit binds");
    }
}

/// A hedge is charged only once nothing local refuses it: with one replica,
/// every hedge finds no other replica to go to and is refused at the caller,
/// and the token bucket must grant exactly the retries it grants without
/// hedging (the same draws: randomness is keyed by the call path).
#[test]
fn a_hedge_refused_at_the_caller_costs_no_token() {
    let run_single = |hedge: bool| {
        let bucket = json!({"kind": "token_bucket", "ratio": 0.1, "max_tokens": 10});
        let v = run_with(bucket, 1, hedge, 1);
        let l = leaf(&v);
        (l.calls, l.retries, l.budget_denied, l.hedges)
    };
    let (plain, hedged) = (run_single(false), run_single(true));
    assert!(plain.1 > 0 && plain.2 > 0, "the budget binds: {plain:?}");
    assert_eq!(hedged.3, 0, "no hedge can be sent with one replica");
    assert_eq!(hedged, plain);
}

/// A timeline change to the budget while retries and hedges it granted are
/// in flight: they give their slots back to the new budget, which took them
/// over (a fresh budget knew of none, and a debug assertion caught the
/// release).
#[test]
fn a_budget_changed_by_the_timeline_takes_over_the_slots_in_flight() {
    let mut doc = serde_json::json!({
        "name": "budget-change",
        "workloads": [{"name": "u", "target": "front", "duration_s": 10,
                       "arrival": {"kind": "poisson", "rate_per_s": 200}}],
        "services": [
            {"name": "front", "steps": [{"call": "leaf", "timeout_ms": 30, "idempotent": true,
                "hedge": {"delay_ms": 10},
                "retry": {"max_attempts": 3, "backoff": {"kind": "fixed", "ms": 5},
                          "budget": {"kind": "envoy", "budget_percent": 20, "min_retry_concurrency": 3}}}]},
            {"name": "leaf", "instances": 3, "workers": 4,
             "steps": [{"work": {"kind": "exponential", "mean_ms": 12}}]}
        ]
    });
    let changes: Vec<_> = (1..10)
        .map(|s| {
            json!({"name": format!("budget {s}"), "at_s": s,
                   "set": {"services[front].steps[0].retry.budget.budget_percent": 20 + s}})
        })
        .collect();
    doc["timeline"] = serde_json::Value::Array(changes);
    let model = load_model(&doc.to_string(), &[], Some(1)).expect("a valid model");
    let v = run_variant(&model.variants[0]);
    assert!(
        leaf(&v).hedges > 100 && leaf(&v).budget_denied > 0,
        "{:?}",
        leaf(&v)
    );
}

/// The hedge brake (`max_ratio`) is asked when the hedge delay passes but
/// spent only when the hedge is sent: with one replica no hedge can go, so
/// none may cost the brake a token. (Spending at the ask drained its ten
/// tokens on hedges never sent, and later ones counted as braked.)
#[test]
fn a_hedge_refused_at_the_caller_costs_no_brake_token() {
    let doc = json!({
        "name": "brake-one-replica",
        "workloads": [{"name": "u", "target": "front", "duration_s": 20,
                       "arrival": {"kind": "poisson", "rate_per_s": 200}}],
        "services": [
            {"name": "front", "steps": [{"call": "leaf", "timeout_ms": 30, "idempotent": true,
                "hedge": {"delay_ms": 10, "max_ratio": 0.05}}]},
            {"name": "leaf", "workers": 4,
             "steps": [{"work": {"kind": "exponential", "mean_ms": 12}}]}
        ]
    });
    let model = load_model(&doc.to_string(), &[], Some(1)).expect("a valid model");
    let v = run_variant(&model.variants[0]);
    let edge = &v
        .edges
        .iter()
        .find(|e| e.callee == "leaf")
        .expect("the edge")
        .counters;
    assert_eq!(edge.hedges, 0, "no hedge can be sent with one replica");
    assert_eq!(edge.hedges_braked, 0, "{edge:?}");
}

/// A hedge the budget granted and the caller's rate limiter then refused is
/// not sent: its token goes back. With a bucket of 10 tokens that never
/// refills (no retries: `max_attempts` 1; the deposit of each first attempt
/// rounds to nothing), exactly 10 hedges are sent however many the limiter
/// refuses on the way. (When a refused hedge kept its token, seed 1 sent 4.)
#[test]
fn a_hedge_the_limiter_refuses_gets_its_token_back() {
    let doc = json!({
        "name": "limiter-refund",
        "workloads": [{"name": "u", "target": "front", "duration_s": 20,
                       "arrival": {"kind": "poisson", "rate_per_s": 200}}],
        "services": [
            {"name": "front", "steps": [{"call": "leaf", "timeout_ms": 30, "idempotent": true,
                "hedge": {"delay_ms": 8},
                "rate_limit": {"kind": "token_bucket", "rate_per_s": 150, "burst": 3},
                "retry": {"max_attempts": 1,
                          "budget": {"kind": "token_bucket", "ratio": 1e-9, "max_tokens": 10}}}]},
            {"name": "leaf", "instances": 3, "workers": 4,
             "steps": [{"work": {"kind": "exponential", "mean_ms": 12}}]}
        ]
    });
    for seed in 1..=3 {
        let model = load_model(&doc.to_string(), &[], Some(seed)).expect("a valid model");
        let v = run_variant(&model.variants[0]);
        let l = leaf(&v);
        assert!(
            l.rate_limited > 1_000,
            "seed {seed}: the limiter must refuse often: {l:?}"
        );
        assert_eq!(l.hedges, 10, "seed {seed}: {l:?}");
        assert!(l.budget_denied > 0, "seed {seed}: the bucket runs dry");
    }
}
