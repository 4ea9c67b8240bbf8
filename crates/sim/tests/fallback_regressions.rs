//! Fallbacks' regressions: each test a bug a review of the first version
//! found, on a minimal model, asserting what happens now.

use crate::common;

use common::{run_recording_attempts, service};
use stormsim_model::load_model;
use stormsim_sim::metrics::FallbackCounts;
use stormsim_sim::VariantReport;

fn edge<'a>(r: &'a VariantReport, caller: &str, callee: &str) -> &'a FallbackCounts {
    &r.edges
        .iter()
        .find(|e| e.caller == caller && e.callee == callee)
        .unwrap_or_else(|| panic!("no edge {caller} -> {callee}"))
        .counters
        .fallback
}

fn adds_up(f: &FallbackCounts) -> bool {
    f.taken == f.stale + f.default + f.call + f.failed + f.cancelled
}

/// `hold_worker: false` frees the page's only worker as the call starts;
/// the call is refused 2 ms later and the `default` does 100 ms of work on
/// the caller, which the docs say holds its worker. Ten requests at once
/// should take turns on the one worker (or `check` should refuse a default
/// with work on a step that hands its request on). The first version: all ten defaults
/// run at once with no worker: every request answers at 104 ms.
#[test]
fn regression_a_default_after_a_handed_on_call_needs_a_worker() {
    let text = r#"{"name": "hw",
     "network": {"one_way": {"kind": "constant", "ms": 1}},
     "workloads": [{"name": "w", "target": "page", "requests": 10, "arrival": {"kind": "at_once"}}],
     "services": [
       {"name": "page", "workers": 1, "steps": [
          {"call": "db", "hold_worker": false,
           "fallback": {"chain": [{"kind": "default", "work": {"kind": "constant", "ms": 100}}]}}]},
       {"name": "db", "instances_down": 1, "steps": [{"work": {"kind": "constant", "ms": 10}}]}
     ]}"#;
    let refused = load_model(text, &[], None).expect_err("check refuses it");
    assert!(
        refused
            .problems
            .iter()
            .any(|p| p.path == "services[0].steps[0].fallback.chain[0].work"
                && p.message.contains("hold_worker")),
        "{refused}"
    );
}

/// `hold_worker: false`, and the breaker (opened by the first request)
/// refuses the primary at once: the fallback `call` (100 ms) should run
/// with the worker handed on, as it does when the primary fails later.
/// The first version: the handler keeps its only worker for the whole fallback call, so
/// requests 20 ms apart queue behind each other (p99 760 ms, not ~116).
#[test]
fn regression_a_handed_on_step_stays_handed_on_when_its_primary_is_refused_at_once() {
    let text = r#"{"name": "hw3",
     "network": {"one_way": {"kind": "constant", "ms": 1}},
     "workloads": [{"name": "w", "target": "page", "requests": 10, "arrival": {"kind": "constant", "rate_per_s": 50}}],
     "services": [
       {"name": "page", "workers": 1, "steps": [
          {"call": "db", "hold_worker": false,
           "breaker": {"kind": "consecutive", "failure_threshold": 1, "cooldown_ms": 60000},
           "fallback": {"chain": [{"kind": "call", "call": "secondary"}]}}]},
       {"name": "db", "steps": [{"work": {"kind": "constant", "ms": 10}, "error": {"p": 1}}]},
       {"name": "secondary", "steps": [{"work": {"kind": "constant", "ms": 100}}]}
     ]}"#;
    let (report, _) = run_recording_attempts(text);
    assert_eq!(report.degraded.call, 10);
    let max = report.latency_ms.unwrap().max;
    assert!(
        max < 150.0,
        "the worker was held through the fallback call: max {max} ms"
    );
}

/// A fallback `call` with `context: background` is not tied to the
/// request: when the caller gives up (50 ms) it should run on. The first version: the
/// primary step's context (`request`) decides, and the background call is
/// cancelled with the handler. The fallback's counts then do not add up
/// either: taken 1, nothing else.
#[test]
fn regression_a_background_fallback_call_outlives_its_caller() {
    let text = r#"{"name": "ctx",
     "workloads": [{"name": "w", "target": "page", "requests": 1, "arrival": {"kind": "at_once"}, "timeout_ms": 50}],
     "services": [
       {"name": "page", "steps": [
          {"call": "db",
           "fallback": {"chain": [{"kind": "call", "call": "secondary", "context": "background"}]}},
          {"work": {"kind": "constant", "ms": 1}}]},
       {"name": "db", "instances_down": 1, "steps": [{"work": {"kind": "constant", "ms": 10}}]},
       {"name": "secondary", "steps": [{"work": {"kind": "constant", "ms": 200}}]}
     ]}"#;
    let (report, _) = run_recording_attempts(text);
    let to_secondary = report
        .edges
        .iter()
        .find(|e| e.callee == "secondary")
        .unwrap();
    assert_eq!(
        to_secondary.counters.cancellations, 0,
        "the background call was cancelled"
    );
    assert_eq!(service(&report, "page").cancelled, 0);
    let f = edge(&report, "page", "db");
    assert!(adds_up(f), "{f:?}");
}

/// The same, with the fallback call in the request's context: cancelled
/// with the handler, as it should be, but then the page's fallback counts
/// `taken` 1 and nothing else. `taken = stale + default + call + failed`
/// should hold (count it as `failed`, or add a `cancelled`).
#[test]
fn regression_fallback_counts_add_up_when_the_caller_gives_up_mid_chain() {
    let text = r#"{"name": "ctx",
     "workloads": [{"name": "w", "target": "page", "requests": 1, "arrival": {"kind": "at_once"}, "timeout_ms": 50}],
     "services": [
       {"name": "page", "steps": [
          {"call": "db", "fallback": {"chain": [{"kind": "call", "call": "secondary"}]}}]},
       {"name": "db", "instances_down": 1, "steps": [{"work": {"kind": "constant", "ms": 10}}]},
       {"name": "secondary", "steps": [{"work": {"kind": "constant", "ms": 200}}]}
     ]}"#;
    let (report, _) = run_recording_attempts(text);
    assert_eq!(service(&report, "page").cancelled, 1);
    let f = edge(&report, "page", "db");
    assert!(adds_up(f), "{f:?}");
}

/// A timeline moves the `call` (to a failing secondary) from first to last
/// place while a request is in it: [call, stale] becomes [stale, call].
/// The secondary fails once; its failure should pass on past the call, not
/// call the secondary a second time. The first version: `fallback_at` (1: after place 0
/// of the old chain) is read in the new chain, whose place 1 is the call.
#[test]
fn regression_a_timeline_change_of_the_chain_does_not_repeat_a_fallback_call() {
    let text = r#"{"name": "tl",
     "workloads": [{"name": "w", "target": "page", "requests": 1, "arrival": {"kind": "at_once"}}],
     "services": [
       {"name": "page", "steps": [
          {"call": "db", "cache": {"keys": 1, "ttl_ms": 10},
           "fallback": {"chain": [{"kind": "call", "call": "secondary"}, {"kind": "stale", "max_staleness_ms": 1000}]}}]},
       {"name": "db", "instances_down": 1, "steps": [{"work": {"kind": "constant", "ms": 10}}]},
       {"name": "secondary", "steps": [{"work": {"kind": "constant", "ms": 100}, "error": {"p": 1}}]}
     ],
     "timeline": [{"name": "reorder", "at_s": 0.05, "set": {"services[page].steps[0].fallback.chain": [
         {"kind": "stale", "max_staleness_ms": 1000}, {"kind": "call", "call": "secondary"}]}}]}"#;
    let (report, _) = run_recording_attempts(text);
    assert_eq!(service(&report, "secondary").calls, 1);
    assert_eq!(report.failed, 1);
}

/// A branch's default (50 ms) is pending when a timeline removes the
/// branch's fallback (a chain with no `call` changes no edge, so `check`
/// allows it). The first version: the default's timer fires into
/// `on_branch_default`'s `expect("a branch with a fallback")`: a panic
/// (an abort in release builds, `panic = "abort"`).
#[test]
fn regression_a_timeline_dropping_a_branch_fallback_with_its_default_pending_does_not_panic() {
    let text = r#"{"name": "brtl",
     "workloads": [{"name": "w", "target": "page", "requests": 1, "arrival": {"kind": "at_once"}}],
     "services": [
       {"name": "page", "steps": [{"parallel": {"branches": [
          {"call": "a"},
          {"call": "b", "fallback": {"chain": [{"kind": "default", "work": {"kind": "constant", "ms": 50}}]}}]}}]},
       {"name": "a", "steps": [{"work": {"kind": "constant", "ms": 10}}]},
       {"name": "b", "steps": [{"work": {"kind": "constant", "ms": 20}, "error": {"p": 1}}]}
     ],
     "timeline": [{"name": "drop the fallback", "at_s": 0.04,
       "set": {"services[page].steps[0].parallel.branches[1].fallback": null}}]}"#;
    let (report, _) = run_recording_attempts(text);
    assert_eq!(report.requests, 1);
}

/// A branch fails at 20 ms, its `call` fallback fails at 25 ms, its default
/// (50 ms of work) would answer at 75 ms, but the join's deadline fails the
/// step at 40 ms. The default never answered: it should not be counted as
/// `default` (the first version counted it when its timer was set).
#[test]
fn regression_a_branch_default_cut_off_by_the_join_is_not_counted_as_an_answer() {
    let text = r#"{"name": "br",
     "workloads": [{"name": "w", "target": "page", "requests": 1, "arrival": {"kind": "at_once"}}],
     "services": [
       {"name": "page", "steps": [{"parallel": {"deadline_ms": 40, "branches": [
          {"call": "a"},
          {"call": "b", "fallback": {"chain": [{"kind": "call", "call": "c"}, {"kind": "default", "work": {"kind": "constant", "ms": 50}}]}}]}}]},
       {"name": "a", "steps": [{"work": {"kind": "constant", "ms": 10}}]},
       {"name": "b", "steps": [{"work": {"kind": "constant", "ms": 20}, "error": {"p": 1}}]},
       {"name": "c", "steps": [{"work": {"kind": "constant", "ms": 5}, "error": {"p": 1}}]}
     ]}"#;
    let (report, _) = run_recording_attempts(text);
    assert_eq!(report.failed_by_reason.deadline_exceeded, 1);
    let f = edge(&report, "page", "b");
    assert_eq!(f.default, 0, "{f:?}");
}

/// mid's call fails and its default answers: degraded. The page caches
/// mid's answer for 10 s, and nine hits later serve that default as a full
/// answer. Either the degraded answer is not cached, or a hit on it is
/// degraded too: every one of the ten answers is a default.
#[test]
fn regression_a_cached_degraded_answer_stays_degraded() {
    let text = r#"{"name": "cachedeg",
     "workloads": [{"name": "w", "target": "page", "requests": 10, "arrival": {"kind": "constant", "rate_per_s": 10}}],
     "services": [
       {"name": "page", "steps": [{"call": "mid", "cache": {"keys": 1, "ttl_ms": 10000}}]},
       {"name": "mid", "steps": [{"call": "db", "fallback": {"chain": [{"kind": "default"}]}}]},
       {"name": "db", "instances_down": 1, "steps": [{"work": {"kind": "constant", "ms": 10}}]}
     ]}"#;
    let (report, _) = run_recording_attempts(text);
    assert_eq!(report.succeeded, 10);
    assert_eq!(report.answered_full, 0, "{:?}", report.degraded);
}

/// (Older than fallbacks, beside the `loaded` flag they added.) With
/// `stale_while_revalidate_ms`, a key never loaded is "stale" for the
/// window's first 30 ms of the run (its `fresh_until` is 0): the database
/// is down all run, yet requests at 0, 10 and 20 ms succeed in full.
#[test]
fn regression_stale_while_revalidate_serves_no_key_never_loaded() {
    let text = r#"{"name": "swr",
     "workloads": [{"name": "w", "target": "page", "requests": 5, "arrival": {"kind": "constant", "rate_per_s": 100}}],
     "services": [
       {"name": "page", "steps": [{"call": "db", "cache": {"keys": 1, "ttl_ms": 1000, "stale_while_revalidate_ms": 30}}]},
       {"name": "db", "instances_down": 1, "steps": [{"work": {"kind": "constant", "ms": 10}}]}
     ]}"#;
    let (report, _) = run_recording_attempts(text);
    assert_eq!(report.succeeded, 0);
}
