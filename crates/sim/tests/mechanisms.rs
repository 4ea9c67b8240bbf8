//! The mechanisms behind real storms, each against a hand-computed sequence:
//! a work step's own errors, durations drawn at admission, and queue
//! disciplines.

use crate::common;

use common::{ms, run_recording_attempts};
use stormsim_model::load_model;
use stormsim_sim::run_variant;

/// One service `s` with one worker and the given step and service fields;
/// `requests` requests from workload `w` at the given arrival.
fn model(arrival: &str, requests: u32, service_fields: &str, step: &str, extra: &str) -> String {
    format!(
        r#"{{"name": "m",
        "workloads": [{{"name": "w", "target": "s", "arrival": {arrival}, "requests": {requests}}}],
        "services": [{{"name": "s", "workers": 1 {service_fields}, "steps": [{step}]}}]
        {extra}}}"#
    )
}

/// Each request's (arrival order, answer instant ms, outcome) from the
/// attempt records of a workload whose requests are single attempts.
fn answers(text: &str) -> Vec<(u64, f64, &'static str)> {
    let (_, records) = run_recording_attempts(text);
    let mut rows: Vec<(u64, f64, &'static str)> = records
        .iter()
        .map(|r| (r.request, ms(r.finished), r.outcome.as_str()))
        .collect();
    rows.sort_by_key(|r| r.0);
    rows
}

#[test]
fn a_failing_step_answers_error_after_its_share_of_the_work() {
    // 100 ms of work; every execution fails 30% of the way in.
    let text = model(
        r#"{"kind": "at_once"}"#,
        1,
        "",
        r#"{"work": {"kind": "constant", "ms": 100}, "error": {"p": 1, "fraction": 0.3}}"#,
        "",
    );
    assert_eq!(answers(&text), [(0, 30.0, "error")]);
    let report = run_variant(&load_model(&text, &[], None).unwrap().variants[0]);
    assert_eq!(report.failed_by_reason.error, 1);
    assert_eq!(report.services[0].failed, 1);
}

#[test]
fn a_fast_503_has_its_own_latency_and_status() {
    let text = model(
        r#"{"kind": "at_once"}"#,
        1,
        "",
        r#"{"work": {"kind": "constant", "ms": 100},
            "error": {"p": 1, "work": {"kind": "constant", "ms": 1}, "status": "rejected"}}"#,
        "",
    );
    let report = run_variant(&load_model(&text, &[], None).unwrap().variants[0]);
    assert_eq!(report.failed_by_reason.rejected, 1);
    assert_eq!(report.latency_ms.as_ref().unwrap().max, 1.0);
}

/// A step that fails after its work, retried on `error`: 3 attempts of 10 ms
/// each, 5 ms apart (fixed backoff), all failing: answers at 10, 25 and 40 ms.
#[test]
fn retry_on_error_retries_a_step_that_fails_by_itself() {
    let text = r#"{"name": "m",
        "workloads": [{"name": "w", "target": "s", "arrival": {"kind": "at_once"}, "requests": 1,
            "retry": {"max_attempts": 3, "retry_on": ["error"], "jitter": "none",
                      "backoff": {"kind": "fixed", "ms": 5}}}],
        "services": [{"name": "s", "workers": 1,
            "steps": [{"work": {"kind": "constant", "ms": 10}, "error": {"p": 1}}]}]}"#;
    let (report, records) = run_recording_attempts(text);
    let finished: Vec<f64> = records.iter().map(|r| ms(r.finished)).collect();
    assert_eq!(finished, [10.0, 25.0, 40.0]);
    assert_eq!(report.failed_by_reason.error, 1);
    // Not retried when the policy retries only timeouts.
    let (_, records) = run_recording_attempts(&text.replace(r#"["error"]"#, r#"["timeout"]"#));
    assert_eq!(records.len(), 1);
}

/// The share of requests that fail is `p`, within sampling error: 20,000
/// requests at p = 0.1 fail 2,000 ± 4·√(20000·0.1·0.9) ≈ ± 170.
#[test]
fn the_error_share_is_p_within_sampling_error() {
    let text = model(
        r#"{"kind": "poisson", "rate_per_s": 100}"#,
        20_000,
        "",
        r#"{"work": {"kind": "exponential", "mean_ms": 1}, "error": {"p": 0.1}}"#,
        "",
    );
    for seed in [1, 2, 3] {
        let report = run_variant(&load_model(&text, &[], Some(seed)).unwrap().variants[0]);
        let failed = report.failed_by_reason.error as f64;
        let (n, p) = (20_000.0_f64, 0.1_f64);
        let sd = (n * p * (1.0 - p)).sqrt();
        assert!(
            (failed - n * p).abs() < 4.0 * sd,
            "seed {seed}: {failed} failed, expected {} ± {:.0}",
            n * p,
            4.0 * sd
        );
    }
}

/// An error spike on the timeline: p goes 0 → 1 at 100 ms and back at 200 ms;
/// with a request every 10 ms (1 ms of work), those started in [100, 200)
/// fail: 10 of 30.
#[test]
fn a_timeline_error_spike_fails_the_requests_started_during_it() {
    let text = model(
        r#"{"kind": "constant", "rate_per_s": 100}"#,
        30,
        "",
        r#"{"work": {"kind": "constant", "ms": 1}, "error": {"p": 0}}"#,
        r#", "timeline": [
            {"name": "spike", "at_s": 0.1, "set": {"services[s].steps[0].error.p": 1}},
            {"name": "over", "at_s": 0.2, "set": {"services[s].steps[0].error.p": 0}}]"#,
    );
    let rows = answers(&text);
    let failed: Vec<u64> = rows
        .iter()
        .filter(|r| r.2 == "error")
        .map(|r| r.0)
        .collect();
    assert_eq!(failed, (10..20).collect::<Vec<u64>>());
}

/// Three requests at once on one worker; the work is 100 ms until 50 ms, then
/// 10 ms. Drawn at the start, the second and third are drawn after the
/// change: answers at 100, 110, 120 ms. Drawn at admission (all admitted at
/// 0, under the slow model): 100, 200, 300 ms.
#[test]
fn work_drawn_at_admission_keeps_the_duration_of_its_admission() {
    let timeline = r#", "timeline": [
        {"name": "faster", "at_s": 0.05, "set": {"services[s].steps[0].work.ms": 10}}]"#;
    let step = |drawn: &str| {
        format!(r#"{{"work": {{"kind": "constant", "ms": 100}}, "drawn_at": "{drawn}"}}"#)
    };
    let at_start = model(r#"{"kind": "at_once"}"#, 3, "", &step("start"), timeline);
    let at_admission = model(
        r#"{"kind": "at_once"}"#,
        3,
        "",
        &step("admission"),
        timeline,
    );
    let instants = |text: &str| answers(text).iter().map(|r| r.1).collect::<Vec<f64>>();
    assert_eq!(instants(&at_start), [100.0, 110.0, 120.0]);
    assert_eq!(instants(&at_admission), [100.0, 200.0, 300.0]);
}

/// Four requests 1 ms apart on one worker with 10 ms of work. FIFO answers
/// them at 10, 20, 30, 40 ms in arrival order; LIFO serves the first, then
/// the newest waiting each time: the fourth at 20, the third at 30, the
/// second at 40.
#[test]
fn fifo_and_lifo_serve_in_their_orders() {
    let step = r#"{"work": {"kind": "constant", "ms": 10}}"#;
    let arrival = r#"{"kind": "constant", "rate_per_s": 1000}"#;
    let fifo = model(arrival, 4, "", step, "");
    let lifo = model(
        arrival,
        4,
        r#", "queue_discipline": {"kind": "lifo"}"#,
        step,
        "",
    );
    let instants = |text: &str| answers(text).iter().map(|r| r.1).collect::<Vec<f64>>();
    assert_eq!(instants(&fifo), [10.0, 20.0, 30.0, 40.0]);
    assert_eq!(instants(&lifo), [10.0, 40.0, 30.0, 20.0]);
}

/// Two classes, one worker at `s`, 10 ms of work. Batch requests reach `s`
/// at 0 and 1 ms; an interactive one (requests are numbered 0, 1, 2 in the
/// order they start: batch, interactive, batch) goes through a gateway that
/// works 2 ms first, so it reaches `s` at 2 ms, behind the second batch. By
/// priority (interactive first) `s` finishes requests 0, 1, 2 at 10, 20,
/// 30 ms: the interactive one overtakes without preempting; FIFO finishes
/// 0, 2, 1.
#[test]
fn priority_serves_the_higher_class_first_without_preempting() {
    let text = |discipline: &str| {
        format!(
            r#"{{"name": "m",
            "workloads": [
              {{"name": "batch", "target": "s", "class": "batch", "requests": 2,
                "arrival": {{"kind": "constant", "rate_per_s": 1000}}}},
              {{"name": "interactive", "target": "g", "class": "interactive", "requests": 1,
                "arrival": {{"kind": "at_once"}}}}],
            "services": [
              {{"name": "s", "workers": 1 {discipline},
                "steps": [{{"work": {{"kind": "constant", "ms": 10}}}}]}},
              {{"name": "g", "steps": [{{"work": {{"kind": "constant", "ms": 2}}}}, {{"call": "s"}}]}}]}}"#
        )
    };
    let order_at_s = |text: &str| {
        let (_, records) = run_recording_attempts(text);
        let mut at_s: Vec<(f64, u64)> = records
            .iter()
            .filter(|r| r.service == 0)
            .map(|r| (ms(r.finished), r.request))
            .collect();
        at_s.sort_by(|a, b| a.0.total_cmp(&b.0));
        at_s
    };
    let by_priority =
        text(r#", "queue_discipline": {"kind": "priority", "order": ["interactive", "batch"]}"#);
    assert_eq!(order_at_s(&by_priority), [(10.0, 0), (20.0, 1), (30.0, 2)]);
    assert_eq!(order_at_s(&text("")), [(10.0, 0), (20.0, 2), (30.0, 1)]);
}

#[test]
fn bad_parameters_are_reported_at_their_paths() {
    let text = r#"{"name": "m",
        "workloads": [{"name": "w", "target": "s", "arrival": {"kind": "at_once"}, "requests": 1}],
        "services": [{"name": "s", "queue_discipline": {"kind": "priority", "order": ["gold", "gold"]},
            "steps": [
              {"work": {"kind": "constant", "ms": 1}, "error": {"p": 1.5, "fraction": 0.5,
                "work": {"kind": "constant", "ms": 1}}},
              {"call": "t", "error": {"p": 0.1}, "drawn_at": "admission"}]},
          {"name": "t"}]}"#;
    let problems = load_model(text, &[], None).expect_err("invalid").problems;
    let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
    for expected in [
        "services[0].steps[0].error.p",
        "services[0].steps[0].error.fraction",
        "services[0].steps[1].error",
        "services[0].steps[1].drawn_at",
        "services[0].queue_discipline.order[0]",
        "services[0].queue_discipline.order[1]",
    ] {
        assert!(paths.contains(&expected), "{expected} not in {paths:?}");
    }
}

/// Three requests at once on an instance with unbounded workers, 100 ms of
/// work each, each other request in service adding half: the first draws
/// with 1 in service (100 ms), the second with 2 (150 ms), the third with 3
/// (200 ms); quadratic, the third takes 1 + 0.5 × 2² = 3 times (300 ms).
#[test]
fn contention_slows_work_by_the_requests_in_service() {
    let text = |exponent: f64| {
        format!(
            r#"{{"name": "m",
            "workloads": [{{"name": "w", "target": "s", "arrival": {{"kind": "at_once"}}, "requests": 3}}],
            "services": [{{"name": "s", "contention": {{"per_request": 0.5, "exponent": {exponent}}},
              "steps": [{{"work": {{"kind": "constant", "ms": 100}}}}]}}]}}"#
        )
    };
    let instants = |text: &str| answers(text).iter().map(|r| r.1).collect::<Vec<f64>>();
    assert_eq!(instants(&text(1.0)), [100.0, 150.0, 200.0]);
    assert_eq!(instants(&text(2.0)), [100.0, 150.0, 300.0]);
}
