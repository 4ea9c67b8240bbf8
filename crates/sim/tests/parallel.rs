//! Parallel steps against hand-computed sequences: a page that calls three
//! services at once (`a` 10 ms, `b` 20 ms, `c` 30 ms of constant work, no
//! network latency), waiting for all, for the first `k`, or with optional
//! branches; failures, deadlines and cancellation flowing to each branch.

use crate::common;

use common::{ms, run_recording_attempts, service};
use stormsim_sim::VariantReport;

/// The page's model: one request, `parallel` as the page's step, `workload`
/// fields added to the workload, and `b_step` as b's handler step.
fn page(parallel: &str, workload: &str, b_step: &str) -> String {
    format!(
        r#"{{"name": "m",
        "workloads": [{{"name": "w", "target": "page", "arrival": {{"kind": "at_once"}}, "requests": 1 {workload}}}],
        "services": [
          {{"name": "page", "steps": [{{"parallel": {parallel}}}]}},
          {{"name": "a", "steps": [{{"work": {{"kind": "constant", "ms": 10}}}}]}},
          {{"name": "b", "steps": [{b_step}]}},
          {{"name": "c", "steps": [{{"work": {{"kind": "constant", "ms": 30}}}}]}}
        ]}}"#
    )
}

const B_OK: &str = r#"{"work": {"kind": "constant", "ms": 20}}"#;
const B_FAILS: &str = r#"{"work": {"kind": "constant", "ms": 20}, "error": {"p": 1}}"#;
const ABC: &str = r#"[{"call": "a"}, {"call": "b"}, {"call": "c"}]"#;

/// Each attempt as (callee name, finished ms, outcome), in callee order, and
/// the workload's own attempt last.
fn run(text: &str) -> (VariantReport, Vec<(&'static str, f64, &'static str)>) {
    let (report, records) = run_recording_attempts(text);
    let names = ["page", "a", "b", "c"];
    let mut rows: Vec<_> = records
        .iter()
        .map(|r| (names[r.service], ms(r.finished), r.outcome.as_str()))
        .collect();
    rows.sort_by(|x, y| (x.0 == "page", x.0).cmp(&(y.0 == "page", y.0)));
    (report, rows)
}

fn parallel_counts(r: &VariantReport) -> (u64, u64, u64, u64) {
    let c = service(r, "page")
        .parallel
        .expect("page has a parallel step");
    (c.ok, c.partial, c.deadline_exceeded, c.failed)
}

#[test]
fn waiting_for_all_answers_with_the_slowest_branch() {
    let (report, rows) = run(&page(&format!(r#"{{"branches": {ABC}}}"#), "", B_OK));
    assert_eq!(
        rows,
        [
            ("a", 10.0, "success"),
            ("b", 20.0, "success"),
            ("c", 30.0, "success"),
            ("page", 30.0, "success")
        ]
    );
    assert_eq!(parallel_counts(&report), (1, 0, 0, 0));
    // Each branch's latency is timed from the step's start.
    let p99 = |callee: &str| {
        let e = report.edges.iter().find(|e| e.callee == callee).unwrap();
        e.latency_ms.unwrap().max
    };
    assert_eq!([p99("a"), p99("b"), p99("c")], [10.0, 20.0, 30.0]);
    // The workload's edge is no branch: it is not timed.
    assert!(report.edges[0].latency_ms.is_none());
}

#[test]
fn the_first_k_successes_complete_the_step_and_cancel_the_rest() {
    let (report, rows) = run(&page(
        &format!(r#"{{"branches": {ABC}, "wait_for": 2}}"#),
        "",
        B_OK,
    ));
    assert_eq!(
        rows,
        [
            ("a", 10.0, "success"),
            ("b", 20.0, "success"),
            ("c", 20.0, "cancelled"),
            ("page", 20.0, "success")
        ]
    );
    assert_eq!(parallel_counts(&report), (1, 0, 0, 0));
    // c's work does not watch for cancellation: it runs on, for nobody.
    assert_eq!(service(&report, "c").wasted, 1);
}

#[test]
fn a_required_branch_failing_fails_the_step_and_cancels_the_others() {
    let (report, rows) = run(&page(&format!(r#"{{"branches": {ABC}}}"#), "", B_FAILS));
    assert_eq!(
        rows,
        [
            ("a", 10.0, "success"),
            ("b", 20.0, "error"),
            ("c", 20.0, "cancelled"),
            ("page", 20.0, "error")
        ]
    );
    // The page fails with its branch's failure.
    assert_eq!(report.failed_by_reason.error, 1);
    assert_eq!(parallel_counts(&report), (0, 0, 0, 1));
    let c_edge = report.edges.iter().find(|e| e.callee == "c").unwrap();
    assert_eq!(c_edge.counters.cancellations, 1);
}

#[test]
fn an_optional_branch_may_fail_and_the_step_waits_for_the_rest() {
    let branches = r#"[{"call": "a"}, {"call": "b", "optional": true}, {"call": "c"}]"#;
    let (report, rows) = run(&page(
        &format!(r#"{{"branches": {branches}}}"#),
        "",
        B_FAILS,
    ));
    assert_eq!(
        rows,
        [
            ("a", 10.0, "success"),
            ("b", 20.0, "error"),
            ("c", 30.0, "success"),
            ("page", 30.0, "success")
        ]
    );
    assert_eq!(report.succeeded, 1);
    assert_eq!(parallel_counts(&report), (0, 1, 0, 0));
}

#[test]
fn at_its_deadline_the_step_answers_with_what_has_come() {
    // c optional: at 25 ms a and b have answered; c is cancelled.
    let branches = r#"[{"call": "a"}, {"call": "b"}, {"call": "c", "optional": true}]"#;
    let (report, rows) = run(&page(
        &format!(r#"{{"branches": {branches}, "deadline_ms": 25}}"#),
        "",
        B_OK,
    ));
    assert_eq!(
        rows,
        [
            ("a", 10.0, "success"),
            ("b", 20.0, "success"),
            ("c", 25.0, "cancelled"),
            ("page", 25.0, "success")
        ]
    );
    assert_eq!(parallel_counts(&report), (0, 1, 0, 0));
    // c required: the step cannot succeed without it.
    let (report, rows) = run(&page(
        &format!(r#"{{"branches": {ABC}, "deadline_ms": 25}}"#),
        "",
        B_OK,
    ));
    assert_eq!(rows[3], ("page", 25.0, "error"));
    assert_eq!(report.failed_by_reason.deadline_exceeded, 1);
    assert_eq!(parallel_counts(&report), (0, 0, 1, 0));
}

/// Each branch has its own policies: b times out after 15 ms and is retried
/// once, 5 ms later (attempts end at 15 and 35 ms); the page fails with b's
/// timeout at 35 ms, cancelling c.
#[test]
fn each_branch_keeps_its_own_timeout_and_retries() {
    let branches = r#"[{"call": "a"},
        {"call": "b", "timeout_ms": 15,
         "retry": {"max_attempts": 2, "retry_on": ["timeout"], "jitter": "none",
                   "backoff": {"kind": "fixed", "ms": 5}}},
        {"call": "c", "timeout_ms": 100}]"#;
    let (report, rows) = run(&page(&format!(r#"{{"branches": {branches}}}"#), "", B_OK));
    assert_eq!(
        rows,
        [
            ("a", 10.0, "success"),
            ("b", 15.0, "timeout"),
            ("b", 35.0, "timeout"),
            ("c", 30.0, "success"),
            // The workload's attempt got an answer: a failure (its reason
            // is b's timeout).
            ("page", 35.0, "error")
        ]
    );
    assert_eq!(report.failed_by_reason.timeout, 1);
}

/// The request's deadline (25 ms, the page's `default_deadline_ms`, as a
/// gateway that owns the user's budget) bounds every branch: c, which would
/// take 30 ms, is given up at 25 ms, and the page fails with
/// `deadline_exceeded`.
#[test]
fn the_request_deadline_bounds_every_branch() {
    let text = page(&format!(r#"{{"branches": {ABC}}}"#), "", B_OK).replace(
        r#"{"name": "page", "#,
        r#"{"name": "page", "default_deadline_ms": 25, "#,
    );
    let (report, rows) = run(&text);
    assert_eq!(
        rows,
        [
            ("a", 10.0, "success"),
            ("b", 20.0, "success"),
            ("c", 25.0, "timeout"),
            ("page", 25.0, "error")
        ]
    );
    assert_eq!(report.failed_by_reason.deadline_exceeded, 1);
}

/// The user gives up at 15 ms: the page's branches still running (b and c)
/// are cancelled then, and the page stops without answering.
#[test]
fn the_callers_cancellation_reaches_every_branch() {
    let (report, rows) = run(&page(
        &format!(r#"{{"branches": {ABC}}}"#),
        r#", "timeout_ms": 15"#,
        B_OK,
    ));
    assert_eq!(
        rows,
        [
            ("a", 10.0, "success"),
            ("b", 15.0, "cancelled"),
            ("c", 15.0, "cancelled"),
            ("page", 15.0, "timeout")
        ]
    );
    assert_eq!(service(&report, "page").cancelled, 1);
    assert_eq!(parallel_counts(&report), (0, 0, 0, 0));
}
