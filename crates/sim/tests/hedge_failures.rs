//! A hedged call whose copies fail, by gRPC's hedging policy (proposal A6,
//! "Summary of Retry and Hedging Logic"): after a non-fatal failure the next
//! hedge goes at once, not at its delay, and the ones after it follow at the
//! delay from then; after a Retry-After (A6's pushback) it goes when that
//! says; after a fatal failure the other copies are cancelled and the try
//! fails. Each test is one request on a hand-built timeline (1 ms hops), its
//! attempts' instants computed by hand.

use crate::common;

use common::run_recording_attempts;
use stormsim_sim::{RunReport, VariantReport};

/// `frontend → leaf` (3 replicas, round robin from replica 0), one request;
/// `leaf` and `hedge` are the leaf's and the hedge's extra fields, `blocker`
/// a second workload's fields (or empty).
fn one_request(leaf: &str, hedge: &str, blocker: &str) -> Vec<String> {
    let blocker = if blocker.is_empty() {
        String::new()
    } else {
        format!(r#", {{"name": "blocker", "target": "leaf", {blocker}}}"#)
    };
    let text = format!(
        r#"{{
        "name": "hedge-failures",
        "network": {{"one_way": {{"kind": "constant", "ms": 1}}}},
        "workloads": [{{"name": "u", "target": "frontend", "arrival": {{"kind": "at_once"}}, "requests": 1}}{blocker}],
        "services": [
          {{"name": "frontend", "steps": [{{"call": "leaf", "idempotent": true, "hedge": {{{hedge}}}}}]}},
          {{"name": "leaf", "instances": 3, {leaf},
            "steps": [{{"work": {{"kind": "constant", "ms": 10}}, "on_cancel": "stop"}}]}}
        ]
      }}"#
    );
    let (mut report, records) = run_recording_attempts(&text);
    report.attempts = records;
    attempts(report)
}

/// The attempts' CSV, without its header, one line per attempt:
/// `variant,request_id,service,shard,replica,attempt_no,hedge,started_ms,finished_ms,outcome`.
fn attempts(report: VariantReport) -> Vec<String> {
    let csv = RunReport {
        model: "hedge-failures".into(),
        description: String::new(),
        seed: 1,
        variants: vec![report],
    }
    .attempts_csv()
    .unwrap();
    csv.lines().skip(1).map(str::to_string).collect()
}

/// Replica 0 is down (it refuses at once); replica 1 takes 50 ms, replica 2
/// 10 ms. The hedge delay is 20 ms, two hedges at most.
///
/// The try goes at 1 ms to replica 0 and its refusal is back at 3 ms: a
/// non-fatal failure, so hedge 1 goes at 3 ms (not at 1 + 20 = 21 ms) to
/// replica 1, where it would answer at 4 + 50 + 1 = 55 ms. The next hedge
/// follows at the delay from then, at 3 + 20 = 23 ms, to replica 2 (replica 1
/// already has a copy): back at 24 + 10 + 1 = 35 ms, the winner; hedge 1 is
/// cancelled then, and the user has the answer at 36 ms. (Before, the refused
/// try went to the retry loop, which has no retry here: the user had a
/// `connection_refused` at 4 ms.)
#[test]
fn a_non_fatal_failure_sends_the_next_hedge_at_once_and_the_rest_at_the_delay() {
    let lines = one_request(
        r#""instances_down": 1, "replica_work_factor": [1, 5, 1]"#,
        r#""delay_ms": 20, "max_hedges": 2"#,
        "",
    );
    assert_eq!(
        lines,
        [
            "base,0,leaf,,0,1,0,1,3,error",
            "base,0,leaf,,2,1,2,23,35,success",
            "base,0,leaf,,1,1,1,3,35,cancelled",
            "base,0,frontend,,0,1,0,0,36,success",
        ]
    );
}

/// As above with one hedge at most: hedge 1 goes at 3 ms and answers at
/// 55 ms; the user has it at 56 ms.
#[test]
fn with_one_hedge_the_failed_try_is_answered_by_its_hedge() {
    let lines = one_request(
        r#""instances_down": 1, "replica_work_factor": [1, 5, 1]"#,
        r#""delay_ms": 20"#,
        "",
    );
    assert_eq!(
        lines,
        [
            "base,0,leaf,,0,1,0,1,3,error",
            "base,0,leaf,,1,1,1,3,55,success",
            "base,0,frontend,,0,1,0,0,56,success",
        ]
    );
}

/// Every copy fails and no hedge is left: the try fails with the last
/// failure. All three replicas take 50 ms and time out after 20 ms: the try
/// at 1 ms times out at 21 ms, hedge 1 goes then and times out at 41 ms,
/// hedge 2 then and at 61 ms; the user has the timeout at 62 ms.
#[test]
fn when_every_copy_fails_the_try_fails_with_the_last_failure() {
    let text = r#"{
        "name": "hedge-failures",
        "network": {"one_way": {"kind": "constant", "ms": 1}},
        "workloads": [{"name": "u", "target": "frontend", "arrival": {"kind": "at_once"}, "requests": 1}],
        "services": [
          {"name": "frontend", "steps": [{"call": "leaf", "idempotent": true, "timeout_ms": 20,
            "hedge": {"delay_ms": 30, "max_hedges": 2}}]},
          {"name": "leaf", "instances": 3,
            "steps": [{"work": {"kind": "constant", "ms": 50}, "on_cancel": "stop"}]}
        ]
      }"#;
    let (mut report, records) = run_recording_attempts(text);
    report.attempts = records;
    let failed = report.failed_by_reason.timeout;
    assert_eq!(
        attempts(report),
        [
            "base,0,leaf,,0,1,0,1,21,timeout",
            "base,0,leaf,,1,1,1,21,41,timeout",
            "base,0,leaf,,2,1,2,41,61,timeout",
            "base,0,frontend,,0,1,0,0,62,error",
        ]
    );
    assert_eq!(failed, 1);
}

/// A fatal failure (`connection_refused` is not in `non_fatal`) ends the try
/// at once: the try goes at 1 ms to replica 0 (down), hedge 1 at 1.5 ms to
/// replica 1 (50 ms); the refusal is back at 3 ms and hedge 1 is cancelled
/// then; the user has the failure at 4 ms. (Before, the try waited for hedge
/// 1, answered at 2.5 + 50 + 1 = 53.5 ms.)
#[test]
fn a_fatal_failure_cancels_the_other_copies_and_fails_the_try() {
    let lines = one_request(
        r#""instances_down": 1, "replica_work_factor": [1, 5, 1]"#,
        r#""delay_ms": 0.5, "non_fatal": ["timeout"]"#,
        "",
    );
    assert_eq!(
        lines,
        [
            "base,0,leaf,,0,1,0,1,3,error",
            "base,0,leaf,,1,1,1,1.5,3,cancelled",
            "base,0,frontend,,0,1,0,0,4,error",
        ]
    );
}

/// A6's pushback: the next hedge goes when the callee's Retry-After says, and
/// the one after it at the delay from then. Every replica takes 50 ms with
/// one worker and no queue, and answers a 503 with a Retry-After of 7 ms
/// when busy; a second workload's request (request 1) reaches replica 0 at
/// 1 ms and holds it until 51 ms.
///
/// The try reaches replica 0 at 2 ms, busy: its 503 is back at 3 ms, so hedge
/// 1 goes at 3 + 7 = 10 ms (not at once, nor at the delay, 1 + 20 = 21 ms),
/// to replica 1: back at 11 + 50 + 1 = 62 ms. Hedge 2 follows at 10 + 20 =
/// 30 ms, to replica 2, and is cancelled when hedge 1 wins at 62 ms; the user
/// has the answer at 63 ms.
#[test]
fn a_retry_after_delays_the_next_hedge_and_the_rest_follow_at_the_delay() {
    let lines = one_request(
        r#""workers": 1, "queue_capacity": 0, "replica_work_factor": [5, 5, 5],
           "admission": {"retry_after_ms": 7}"#,
        r#""delay_ms": 20, "max_hedges": 2"#,
        r#""arrival": {"kind": "at_once"}, "requests": 1"#,
    );
    assert_eq!(
        lines,
        [
            "base,0,leaf,,0,1,0,1,3,error",
            "base,1,leaf,,0,1,0,0,52,success",
            "base,0,leaf,,1,1,1,10,62,success",
            "base,0,leaf,,2,1,2,30,62,cancelled",
            "base,0,frontend,,0,1,0,0,63,success",
        ]
    );
}

/// A hedge avoids every replica its try has sent a copy to, answered or not
/// (A6: the load balancer is given "the list of previously used
/// addresses"), not only those with a copy still in flight.
///
/// Two replicas, round robin from replica 0, which is down (it refuses at
/// once); replica 1 takes 50 ms. The try goes to replica 0 at 1 ms and is
/// refused at 3 ms; hedge 1 goes at once, to replica 1, and would answer at
/// 4 + 50 + 1 = 55 ms. Hedge 2 is due at 3 + 20 = 23 ms: replica 1 has a copy
/// and replica 0 failed one, so it is not sent, and the user has hedge 1's
/// answer at 56 ms. (Before, hedge 2 went back to replica 0 at 23 ms and was
/// refused again at 25 ms.)
#[test]
fn regression_hedge_returned_to_a_replica_that_had_failed_its_try() {
    let text = r#"{
        "name": "hedge-failures",
        "network": {"one_way": {"kind": "constant", "ms": 1}},
        "workloads": [{"name": "u", "target": "frontend", "arrival": {"kind": "at_once"}, "requests": 1}],
        "services": [
          {"name": "frontend", "steps": [{"call": "leaf", "idempotent": true,
             "hedge": {"delay_ms": 20, "max_hedges": 2}}]},
          {"name": "leaf", "instances": 2, "instances_down": 1, "replica_work_factor": [1, 5],
            "steps": [{"work": {"kind": "constant", "ms": 10}, "on_cancel": "stop"}]}
        ]
      }"#;
    let (mut report, records) = run_recording_attempts(text);
    report.attempts = records;
    assert_eq!(
        attempts(report),
        [
            "base,0,leaf,,0,1,0,1,3,error",
            "base,0,leaf,,1,1,1,3,55,success",
            "base,0,frontend,,0,1,0,0,56,success",
        ]
    );
}
