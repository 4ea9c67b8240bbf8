//! A run that would outgrow its time series stops with a partial report, as
//! the other run limits do, instead of exhausting memory: without a horizon,
//! validation cannot bound the buckets, and one far-off event would make the
//! run open every bucket up to it.

use serde_json::json;
use stormsim_model::load_model;
use stormsim_sim::run_variant;

#[test]
fn an_event_a_billion_seconds_away_stops_the_run_at_the_series_limit() {
    // No horizon: the run lasts as long as its one request, whose work takes
    // 10^9 s, 10^9 one-second buckets.
    let doc = json!({
        "name": "far-work",
        "workloads": [{"name": "u", "target": "s", "requests": 1,
                       "arrival": {"kind": "poisson", "rate_per_s": 1}}],
        "services": [{"name": "s", "steps": [{"work": {"kind": "constant", "ms": 1e12}}]}]
    });
    let model = load_model(&doc.to_string(), &[], Some(1)).expect("a valid model");
    let v = run_variant(&model.variants[0]);
    let why = v.stopped_by_limit.as_deref().expect("stopped by a limit");
    assert!(
        why.contains("time-series buckets") && why.contains("timeseries.bucket_s"),
        "{why}"
    );
    // The request arrived (within the first seconds) and was never answered;
    // the series holds only the buckets opened before the far event.
    assert!(v.series.len() < 100, "{} buckets", v.series.len());
    assert_eq!(v.workloads[0].requests, 1);
    assert_eq!(v.workloads[0].succeeded, 0);
}

/// Found by the fuzzer of valid models: retries whose exponential backoff
/// has no cap reach 10^9 s by their fiftieth attempt, and the run, with no
/// horizon, filled ten million rows of time series (2.3 GB, 70 s) before the
/// built-in limit stopped it. A model may lower that limit.
#[test]
fn regression_an_uncapped_backoff_stops_at_a_lowered_series_row_limit() {
    let doc = json!({
        "name": "uncapped-backoff",
        "workloads": [{"name": "u", "target": "s", "requests": 5,
                       "arrival": {"kind": "poisson", "rate_per_s": 100},
                       "timeout_ms": 10,
                       "retry": {"max_attempts": 50,
                                 "backoff": {"kind": "exponential", "base_ms": 8, "multiplier": 1.8}}}],
        "services": [{"name": "s", "steps": [{"work": {"kind": "constant", "ms": 50}}]}],
        "limits": {"max_series_rows": 1000}
    });
    let model = load_model(&doc.to_string(), &[], Some(1)).expect("a valid model");
    let v = run_variant(&model.variants[0]);
    let why = v.stopped_by_limit.as_deref().expect("stopped by a limit");
    assert!(
        why.contains("at most 1000 rows (limits.max_series_rows)"),
        "{why}"
    );
    // A row a bucket, and one for the service and one for the workload:
    // the run stops before the event that would need more than 1000 rows,
    // with the buckets opened until then.
    assert!(v.series.len() * 3 <= 1000, "{} buckets", v.series.len());
    assert_eq!(v.requests, 5);
    assert_eq!(v.succeeded + v.failed + v.unanswered, v.requests);
    assert!(v.unanswered > 0, "the run stopped before every retry ended");
}

/// The series keeps a row per service, not per replica, and the run stops
/// at its limit counting them so: with a horizon, a model validation lets
/// through runs whole.
#[test]
fn replicas_add_no_series_rows_of_their_own() {
    // 100 one-second buckets, each a row of its own, one for the service
    // and one for the workload: 300 rows.
    let replicated = |max_series_rows: u64| {
        json!({
            "name": "replicas",
            "horizon_s": 100,
            "workloads": [{"name": "u", "target": "s", "duration_s": 100,
                           "arrival": {"kind": "poisson", "rate_per_s": 50}}],
            "services": [{"name": "s", "instances": 50,
                          "steps": [{"work": {"kind": "constant", "ms": 1}}]}],
            "limits": {"max_series_rows": max_series_rows}
        })
        .to_string()
    };
    let model = load_model(&replicated(300), &[], Some(1)).expect("a valid model");
    let v = run_variant(&model.variants[0]);
    assert_eq!(v.stopped_by_limit, None);
    assert_eq!(v.series.len(), 100);
    assert!(v.requests > 4000, "{} requests", v.requests);
    // One row fewer is refused before the run, by validation.
    let refused = load_model(&replicated(299), &[], Some(1)).expect_err("over the limit");
    assert!(
        refused
            .to_string()
            .contains("at most 299 (limits.max_series_rows)"),
        "{refused}"
    );
}

/// Found by fuzzing extreme values: a load shape draws its arrivals by
/// thinning (candidates at its peak rate, each kept with the rate's share
/// of it), and the candidates it did not keep counted toward no limit. A
/// ramp to 10^12/s drew candidates 0 ns apart, and a burst of 1 µs at
/// 900 s drew 9·10^10 candidates before its first arrival: both ran until
/// killed. They count with the events against `limits.max_events` now.
#[test]
fn regression_a_shape_far_below_its_peak_stops_at_the_event_limit() {
    let shaped = |arrival: serde_json::Value, max_events: u64| {
        json!({
            "name": "thinned",
            "limits": {"max_events": max_events},
            "workloads": [{"name": "u", "target": "s", "duration_s": 1000, "arrival": arrival}],
            "services": [{"name": "s", "steps": [{"work": {"kind": "constant", "ms": 1}}]}]
        })
    };
    let ramp = json!({"kind": "stages",
                      "stages": [{"duration_s": 10, "target_rate_per_s": 1e12}]});
    let burst = json!({"kind": "bursts", "base_rate_per_s": 0, "burst_rate_per_s": 1e8,
                       "every_s": 1000, "length_s": 1e-6, "first_at_s": 900});
    for (arrival, max_events) in [(ramp, 100_000), (burst, 1000)] {
        let doc = shaped(arrival, max_events);
        let model = load_model(&doc.to_string(), &[], Some(1)).expect("a valid model");
        let v = run_variant(&model.variants[0]);
        let why = v.stopped_by_limit.as_deref().expect("stopped by a limit");
        assert!(
            why.contains("thinned away (limits.max_events counts both)"),
            "{why}"
        );
        assert!(v.events <= max_events, "{} events", v.events);
    }
}

/// Found by fuzzing extreme values: a client call sleeping in its retry's
/// backoff is no handler execution, and `limits.max_in_flight` counted only
/// those. A million requests a second, each refused and then waiting 31
/// years to retry, filled 5.5 GB before the allocator aborted. Calls alive
/// count on their own against the same limit now.
#[test]
fn regression_calls_waiting_on_a_backoff_stop_at_the_in_flight_limit() {
    let doc = json!({
        "name": "sleepers",
        "limits": {"max_in_flight": 1000},
        "workloads": [{"name": "u", "target": "s", "duration_s": 300,
                       "arrival": {"kind": "constant", "rate_per_s": 1000},
                       "retry": {"max_attempts": 2, "backoff": {"kind": "fixed", "ms": 1e12}}}],
        "services": [{"name": "s", "admission": {"drop_fraction": 1}}]
    });
    let model = load_model(&doc.to_string(), &[], Some(1)).expect("a valid model");
    let v = run_variant(&model.variants[0]);
    let why = v.stopped_by_limit.as_deref().expect("stopped by a limit");
    assert!(
        why.starts_with("stopped with 1001 calls in flight, waiting on an answer or a retry's backoff (limits.max_in_flight)"),
        "{why}"
    );
    assert_eq!(v.workloads[0].requests, 1001);
}
