//! Instances behind a caller's load balancer: down instances, retries onto a
//! healthy one, outlier ejection, and connect timeouts at blackholed hosts.

use serde_json::{json, Value};
use stormsim_model::load_model;
use stormsim_sim::{run_variant, VariantReport};

fn model(edge: Value, server: Value) -> Value {
    json!({
        "name": "instances",
        "workloads": [{"name": "users", "target": "client",
                       "arrival": {"kind": "constant", "rate_per_s": 100}, "requests": 4000}],
        "services": [
            {"name": "client", "steps": [edge]},
            server
        ]
    })
}

fn run(doc: &Value) -> VariantReport {
    let loaded = load_model(&doc.to_string(), &[], None).expect("valid model");
    run_variant(&loaded.variants[0])
}

fn server(extra: Value) -> Value {
    let mut s = json!({"name": "server", "instances": 4, "instances_down": 1, "workers": 10,
                       "steps": [{"work": {"kind": "constant", "ms": 5}}]});
    for (k, v) in extra.as_object().unwrap() {
        s[k] = v.clone();
    }
    s
}

/// Round robin over 4 instances with one refusing: exactly every fourth
/// attempt fails (sequential requests, so the cursor is deterministic).
#[test]
fn round_robin_meets_the_down_instance_one_time_in_four() {
    let r = run(&model(
        json!({"call": "server", "timeout_ms": 1000}),
        server(json!({})),
    ));
    assert_eq!(r.failed, 1000);
    assert_eq!(r.failed_by_reason.connection_refused, 1000);
    // The down instance never counts a call.
    assert_eq!(r.services[1].calls, 3000);
}

/// One retry always lands on the next instance, which is up. The cursor then
/// cycles 0 (down), 1 (the retry), 2, 3 for every three requests: requests 1,
/// 4, 7, ... meet the down instance, so ceil(4000 / 3) = 1334 retry.
#[test]
fn a_retry_goes_to_another_instance() {
    let edge = json!({"call": "server", "timeout_ms": 1000, "retry": {"max_attempts": 2}});
    let r = run(&model(edge, server(json!({}))));
    assert_eq!(r.succeeded, 4000);
    assert_eq!(r.services[1].retries, 1334);
}

/// Envoy outlier detection ejects the refusing instance after 5 consecutive
/// failures for 30 s (then 60 s, ...): over 40 s of traffic it can fail at most
/// 5 attempts per ejection cycle, instead of 1000.
#[test]
fn outlier_detection_ejects_the_down_instance() {
    let edge = json!({"call": "server", "timeout_ms": 1000,
                      "outlier_detection": {"always_eject_one_host": true}});
    let r = run(&model(edge, server(json!({}))));
    assert!(r.failed <= 10, "failed {}", r.failed);
    assert!(
        r.failed >= 5,
        "the first 5 failures come before the ejection: {}",
        r.failed
    );
}

/// A blackholed instance answers nothing: the attempt fails at the connect
/// timeout (100 ms), not at the 1 s response timeout.
#[test]
fn a_connect_timeout_bounds_attempts_to_a_blackholed_instance() {
    let edge = json!({"call": "server", "timeout_ms": 1000, "connect_timeout_ms": 100});
    let r = run(&model(edge, server(json!({"down_mode": "blackhole"}))));
    assert_eq!(r.failed, 1000);
    assert_eq!(r.failed_by_reason.timeout, 1000);
    assert!(
        r.latency_ms.unwrap().max < 101.0,
        "max latency {}",
        r.latency_ms.unwrap().max
    );
    let edge = json!({"call": "server", "timeout_ms": 1000});
    let r = run(&model(edge, server(json!({"down_mode": "blackhole"}))));
    assert!(
        r.latency_ms.unwrap().max >= 1000.0,
        "without a connect timeout: {}",
        r.latency_ms.unwrap().max
    );
}

/// Least outstanding and power of two choices spread load: with 4 healthy
/// instances and no failures, all requests succeed.
#[test]
fn every_balancer_serves_healthy_instances() {
    for kind in [
        "round_robin",
        "random",
        "least_outstanding",
        "power_of_two_choices",
    ] {
        let edge = json!({"call": "server", "timeout_ms": 1000, "balancer": kind});
        let r = run(&model(edge, server(json!({"instances_down": 0}))));
        assert_eq!(r.succeeded, 4000, "{kind}");
    }
}

/// Each caller instance keeps its own breaker, as each instance of a client
/// library does: against a dead server, two client instances each let exactly
/// `failure_threshold` = 5 calls through before their own breaker opens.
#[test]
fn each_caller_instance_has_its_own_breaker() {
    let doc = json!({
        "name": "per-caller",
        "workloads": [{"name": "users", "target": "client",
                       "arrival": {"kind": "constant", "rate_per_s": 100}, "requests": 1000}],
        "services": [
            {"name": "client", "instances": 2, "steps": [
                {"call": "server", "timeout_ms": 1000,
                 "breaker": {"kind": "consecutive", "failure_threshold": 5, "cooldown_ms": 100000}}]},
            {"name": "server", "admission": {"drop_fraction": 1.0}}
        ]
    });
    let r = run(&doc);
    let server = &r.services[1];
    assert_eq!(server.calls, 10);
    assert_eq!(server.breaker_opened, 2);
    assert_eq!(server.breaker_rejected, 990);
    assert_eq!(r.failed_by_reason.breaker_open, 990);
}
