//! Regression tests of issue 17 ("Hardening"), each named after its
//! reproducer in `shared/repro/`: valid models that panicked or ran unbounded.

use serde_json::{json, Value};
use stormsim_model::load_model;
use stormsim_sim::memory::{check_memory, estimate, DEFAULT_MEMORY_LIMIT_BYTES};
use stormsim_sim::{run_variant, VariantReport};

/// Runs the first variant of `doc`.
fn run(doc: &Value) -> VariantReport {
    let model = load_model(&doc.to_string(), &[], Some(1)).unwrap_or_else(|e| panic!("{e}: {doc}"));
    run_variant(&model.variants[0])
}

/// A fan-out that starts after the request's deadline has passed (a work step
/// outlasted it) panicked with "event scheduled in the past" when it armed its
/// own deadline's timer. Its children are refused for the deadline at once,
/// and the request fails as past its deadline.
#[test]
fn panic_fanout_past() {
    for (workload_deadline, service_deadline, context) in [
        (Some(5), None, Some("background")),
        (Some(5), None, None),
        (None, Some(5), None),
    ] {
        let mut w = json!({"name": "w", "target": "a", "requests": 1,
                           "arrival": {"kind": "constant", "rate_per_s": 10}});
        if let Some(d) = workload_deadline {
            w["deadline_ms"] = json!(d);
        }
        let mut call = json!({"call": "b", "fan_out": {"deadline_ms": 50}});
        if let Some(c) = context {
            call["context"] = json!(c);
        }
        let mut a = json!({"name": "a", "steps": [{"work": {"kind": "constant", "ms": 20}}, call]});
        if let Some(d) = service_deadline {
            a["default_deadline_ms"] = json!(d);
        }
        let doc = json!({"name": "fanout-past", "workloads": [w],
                         "services": [a, {"name": "b", "instances": 3, "shards": 3}]});
        let r = run(&doc);
        assert_eq!(r.requests, 1);
        assert_eq!(r.failed, 1, "{doc}");
        assert_eq!(r.failed_by_reason.deadline_exceeded, 1, "{doc}");
        let b = r.services.iter().find(|s| s.name == "b").expect("b");
        assert_eq!(b.calls, 0, "no child reaches b: {doc}");
    }
}

/// A timeline that lowers a service's `instances` on hosts with slow periods
/// panicked (index out of bounds) when a removed instance, still draining its
/// work, started its next step.
#[test]
fn panic_hosts_shrink() {
    let doc = json!({
        "name": "hosts-shrink",
        "hosts": {"zones": 1, "per_zone": 2,
                  "slow": {"mean_gap_s": 0.5, "mean_length_s": 0.1, "factor": 5}},
        "workloads": [{"name": "w", "target": "s", "requests": 100,
                       "arrival": {"kind": "constant", "rate_per_s": 100}}],
        "services": [{"name": "s", "instances": 2,
                      "steps": [{"work": {"kind": "constant", "ms": 10}},
                                {"work": {"kind": "constant", "ms": 10}}]}],
        "timeline": [{"name": "shrink", "at_s": 0.5, "set": {"services[s].instances": 1}}]
    });
    let r = run(&doc);
    assert_eq!(r.requests, 100);
    assert_eq!(r.succeeded, 100);
}

/// The same shrink under hedging to another zone: a hedge excluded the
/// instances its call already had attempts on, a removed one among them.
#[test]
fn panic_hosts_shrink_with_hedges() {
    let doc = json!({
        "name": "hosts-shrink-hedge",
        "hosts": {"zones": 2, "per_zone": 2},
        "workloads": [{"name": "w", "target": "api", "requests": 200,
                       "arrival": {"kind": "constant", "rate_per_s": 200}}],
        "services": [
            {"name": "api", "steps": [{"call": "s", "retry": {"max_attempts": 1}, "idempotent": true,
                                       "hedge": {"delay_ms": 10, "max_hedges": 2, "target": "other_zone"}}]},
            {"name": "s", "instances": 4, "steps": [{"work": {"kind": "constant", "ms": 20}}]}],
        "timeline": [{"name": "shrink", "at_s": 0.5, "set": {"services[s].instances": 1}}]
    });
    let r = run(&doc);
    assert_eq!(r.requests, 200);
    assert_eq!(r.succeeded + r.failed + r.unanswered, r.requests);
}

/// `limits.max_events` was looked at only between dispatches, and a retry
/// loop without backoff against a refusing instance never leaves its instant:
/// 2 × 10⁸ events ran with a limit of 1,000.
#[test]
fn max_events_bypass() {
    let doc = json!({
        "name": "zl",
        "workloads": [{"name": "u", "target": "api", "requests": 1,
                       "arrival": {"kind": "constant", "rate_per_s": 10}}],
        "services": [
            {"name": "api", "steps": [{"call": "db", "retry": {"max_attempts": 100_000_000u64}}]},
            {"name": "db", "instances": 1, "instances_down": 1,
             "steps": [{"work": {"kind": "constant", "ms": 1}}]}],
        "limits": {"max_events": 1000, "max_in_flight": 1000}
    });
    let r = run(&doc);
    let why = r.stopped_by_limit.as_deref().expect("stopped by a limit");
    assert!(why.contains("limits.max_events"), "{why}");
    assert!(r.events <= 1_010, "{} events", r.events);
}

/// The memory a model's run would hold, refused over the default ceiling at
/// the parameter to blame.
fn refused_for_memory(doc: &Value) -> stormsim_sim::memory::TooMuchMemory {
    let model = load_model(&doc.to_string(), &[], Some(1)).unwrap_or_else(|e| panic!("{e}: {doc}"));
    check_memory(&model, DEFAULT_MEMORY_LIMIT_BYTES).expect_err("over the ceiling")
}

/// A caller calling `db` on the step `call` (fields added to the call step).
fn api_calls_db(call: Value, api_instances: u32, db_instances: u32) -> Value {
    let mut step = json!({"call": "db", "timeout_ms": 100});
    for (k, v) in call.as_object().expect("an object") {
        step[k] = v.clone();
    }
    json!({
        "name": "mem",
        "workloads": [{"name": "users", "target": "api", "requests": 200,
                       "arrival": {"kind": "poisson", "rate_per_s": 50}}],
        "services": [
            {"name": "api", "instances": api_instances, "steps": [step]},
            {"name": "db", "instances": db_instances, "steps": [{"work": {"kind": "exponential", "mean_ms": 5}}]}]
    })
}

/// Breaker, cache and throttle sizes passed `check`, then aborted the run on
/// 34–295 GB allocations.
#[test]
fn alloc_abort() {
    for (call, path) in [
        (
            json!({"breaker": {"kind": "resilience4j", "sliding_window_type": "time_based",
                               "sliding_window_size": 4_294_967_295u64}}),
            "services[api].steps[0].breaker.sliding_window_size",
        ),
        (
            json!({"cache": {"keys": 4_294_967_295u64, "ttl_ms": 10}}),
            "services[api].steps[0].cache.keys",
        ),
        (
            json!({"throttle": {"kind": "sre", "window_s": 1e12}}),
            "services[api].steps[0].throttle.window_s",
        ),
        (
            json!({"throttle": {"kind": "envoy_admission_control", "sampling_window_s": 1e12}}),
            "services[api].steps[0].throttle.sampling_window_s",
        ),
    ] {
        let e = refused_for_memory(&api_calls_db(call.clone(), 1, 1));
        assert_eq!(e.path(), path, "{call}");
        let message = e.to_string();
        assert!(
            message.contains("--memory-limit-gb") && message.contains("4.00 GiB"),
            "{message}"
        );
    }
    // The defaults are far below.
    let model = load_model(
        &api_calls_db(json!({"breaker": {"kind": "resilience4j"}}), 1, 1).to_string(),
        &[],
        None,
    )
    .expect("valid");
    assert!(estimate(&model).bytes < 1 << 20);
}

/// Memory grew with caller instances × callee instances (per caller
/// instance, an edge keeps a slot per callee instance): 5.5 GB for 10⁶ × 10³,
/// past 22.8 GB for 10⁶ × 10⁶.
#[test]
fn instances_quadratic() {
    for db in [1_000, 1_000_000] {
        let e = refused_for_memory(&api_calls_db(json!({}), 1_000_000, db));
        assert_eq!(e.path(), "services[api].steps[0]");
        assert!(e.to_string().contains("1000000 caller instance(s)"), "{e}");
    }
    // Each alone is fine.
    let model = load_model(
        &api_calls_db(json!({}), 1_000, 1_000).to_string(),
        &[],
        None,
    )
    .expect("valid");
    check_memory(&model, DEFAULT_MEMORY_LIMIT_BYTES).expect("10³ × 10³ fits");
}

/// A 250-byte model with no horizon and a workload lasting 10¹⁵ s ran to the
/// time-series limit, 2.35 GB a variant, all variants' series kept to the end.
#[test]
fn series_memory() {
    let one = json!({
        "name": "longrun",
        "workloads": [{"name": "u", "target": "api", "duration_s": 1e15,
                       "arrival": {"kind": "poisson", "rate_per_s": 0.5}}],
        "services": [{"name": "api", "workers": 1, "steps": [{"work": {"kind": "constant", "ms": 1}}]}]
    });
    let model = load_model(&one.to_string(), &[], None).expect("valid");
    let alone = check_memory(&model, DEFAULT_MEMORY_LIMIT_BYTES).expect("one variant fits");
    assert!(alone.bytes > 2 << 30, "{alone:?}");
    let mut four = one.clone();
    four["variants"] = json!([{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d"}]);
    let e = refused_for_memory(&four);
    assert_eq!(e.path(), "workloads[u].duration_s");
    assert!(e.to_string().contains("time series of 4 variants"), "{e}");
    // With a ceiling raised, it is accepted.
    let model = load_model(&four.to_string(), &[], None).expect("valid");
    check_memory(&model, 16 << 30).expect("under 16 GiB");
    // A service with a cpu keeps its busy cores a bucket more: 32 bytes
    // (a u128 and a u32, aligned) for each of the 3.3 × 10⁶ buckets (the
    // limit of 10⁷ rows over three a bucket: the run's, api's, u's).
    let mut cpu = one.clone();
    cpu["services"][0]["cpu"] = json!({"cores": 2});
    let model = load_model(&cpu.to_string(), &[], None).expect("valid");
    let with_cpu = check_memory(&model, DEFAULT_MEMORY_LIMIT_BYTES).expect("fits");
    let series = |e: &stormsim_sim::memory::MemoryEstimate| {
        let part = e.biggest.as_ref().expect("the series is the biggest part");
        assert!(part.what.starts_with("the time series"), "{part:?}");
        part.bytes
    };
    assert_eq!(series(&with_cpu) - series(&alone), 32 * (10_000_000 / 3));
}

/// Found by the fuzzer (`fuzz_models`): a call cancelled while it held (or
/// waited for) a bulkhead slot kept it, so the edge ended the run with slots
/// "in use" (a broken invariant: a panic at the end of the run).
#[test]
fn fuzz_cancelled_call_keeps_its_bulkhead_slot() {
    let doc = json!({
        "name": "fuzz-48",
        "workloads": [{"name": "w0", "target": "s0", "requests": 24, "timeout_ms": 19.152,
                       "arrival": {"kind": "closed_loop", "users": 8,
                                   "think": {"kind": "exponential", "mean_ms": 19.236}}}],
        "services": [{"name": "s0", "steps": [{"call": "s3", "bulkhead": {}}]},
                     {"name": "s3", "steps": [{"work": {"kind": "constant", "ms": 23.683}}]}]
    });
    let r = run(&doc);
    assert_eq!(r.requests, 24);
    assert_eq!(
        r.failed_by_reason.timeout, 24,
        "every request outlasts its timeout"
    );
}

/// Found by the fuzzer: a request sent into a blackholed instance with no
/// timeout is never answered; the run ended with it alive and the end-of-run
/// check took that for a leak (a panic). It is unanswered.
#[test]
fn fuzz_blackhole_without_timeout_is_unanswered() {
    let doc = json!({
        "name": "fuzz-23",
        "workloads": [{"name": "w0", "target": "s0", "requests": 53,
                       "arrival": {"kind": "poisson", "rate_per_s": 248.875}}],
        "services": [{"name": "s0", "instances_down": 1, "down_mode": "blackhole"}]
    });
    let r = run(&doc);
    assert_eq!(r.unanswered, 53);
}

/// Found by the fuzzer: outlier detection on an edge whose callee a
/// timeline shrinks (3 instances to 1) failed a debug assertion when a hedge
/// picked among the current instances.
#[test]
fn fuzz_outlier_detection_after_a_shrink() {
    let doc = json!({
        "name": "fuzz-498",
        "workloads": [{"name": "w0", "target": "s0", "requests": 47,
                       "arrival": {"kind": "closed_loop", "users": 1,
                                   "think": {"kind": "exponential", "mean_ms": 31.784}}}],
        "services": [{"name": "s0", "steps": [{"call": "s2", "outlier_detection": {}, "idempotent": true,
                                               "hedge": {"delay_ms": 3.025}}]},
                     {"name": "s2", "instances": 3, "steps": [{"work": {"kind": "exponential", "mean_ms": 10.352}}]}],
        "timeline": [{"name": "t0", "at_s": 0.237, "set": {"services[s2].instances": 1}}]
    });
    let r = run(&doc);
    assert_eq!(r.succeeded, 47);
}

/// A retry without backoff refused locally at once (here: every instance
/// ejected, "no healthy upstream") retried from inside the refusal, one call
/// within another: 10⁷ attempts overflowed the stack (an abort, no report),
/// and `limits.max_events` never saw them.
#[test]
fn stack_overflow_zero_backoff_local_refusals() {
    let doc = json!({
        "name": "rec",
        "workloads": [{"name": "w", "target": "s0", "requests": 1,
                       "arrival": {"kind": "constant", "rate_per_s": 10}}],
        "services": [
            {"name": "s0", "steps": [{"call": "s1",
                "retry": {"max_attempts": 10_000_000, "retry_on": ["rejected", "connection_refused"]},
                "outlier_detection": {"consecutive_5xx": 1, "max_ejection_percent": 100,
                                      "interval_ms": 1e6, "base_ejection_time_ms": 1e6}}]},
            {"name": "s1", "instances": 2, "instances_down": 2}],
        "limits": {"max_events": 1000}
    });
    let r = run(&doc);
    let why = r.stopped_by_limit.as_deref().expect("stopped by a limit");
    assert!(why.contains("limits.max_events"), "{why}");
    // With fewer attempts the loop ends on its own, every attempt refused.
    let mut doc = doc;
    doc["services"][0]["steps"][0]["retry"]["max_attempts"] = json!(500);
    doc["limits"]["max_events"] = json!(1_000_000);
    let r = run(&doc);
    assert_eq!(r.stopped_by_limit, None);
    assert_eq!(r.failed, 1);
}
