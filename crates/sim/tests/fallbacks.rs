//! Fallbacks against hand-computed sequences: a page calls a database
//! through a cache of one key (fresh for 100 ms), with no network latency
//! and constant work, one request every 100 ms from time 0; the database
//! goes down at 150 ms. What each request gets follows from the chain.

use crate::common;

use common::{ms, run_recording_attempts};
use stormsim_model::load_model;
use stormsim_sim::analysis::Outcome;
use stormsim_sim::metrics::{DegradedCounts, FallbackCounts};
use stormsim_sim::VariantReport;

/// The page's model: `requests` requests, 100 ms apart; the page's call
/// step is `{"call": "db", <step>}`; the database (10 ms of work) goes down
/// at 150 ms.
fn page(step: &str, requests: u32) -> String {
    format!(
        r#"{{"name": "m",
        "workloads": [{{"name": "w", "target": "page", "requests": {requests},
            "arrival": {{"kind": "constant", "rate_per_s": 10}}}}],
        "services": [
          {{"name": "page", "steps": [{{"call": "db", {step}}}]}},
          {{"name": "db", "steps": [{{"work": {{"kind": "constant", "ms": 10}}}}]}},
          {{"name": "secondary", "steps": [{{"work": {{"kind": "constant", "ms": 7}}}}]}}
        ],
        "timeline": [{{"name": "db down", "at_s": 0.15, "set": {{"services[db].instances_down": 1}}}}]}}"#
    )
}

/// A cache of one key, fresh for 100 ms after each load, and a breaker that
/// opens at the first failure and stays open past the test's end.
const CACHED: &str = r#""cache": {"keys": 1, "ttl_ms": 100},
    "breaker": {"kind": "consecutive", "failure_threshold": 1, "cooldown_ms": 60000}"#;

/// The first variant's report, with the page's edge to the database.
fn run(text: &str) -> (VariantReport, FallbackCounts) {
    let (report, _) = run_recording_attempts(text);
    let edge = report
        .edges
        .iter()
        .find(|e| e.caller == "page" && e.callee == "db")
        .expect("the page calls the database");
    let fallback = edge.counters.fallback;
    (report, fallback)
}

fn degraded(total: u64, stale: u64, default: u64, call: u64) -> DegradedCounts {
    DegradedCounts {
        total,
        stale,
        default,
        call,
    }
}

/// 0 and 100 ms: a load, then a fresh hit. 200 ms: the miss is refused
/// (the database is down) and the breaker opens; the entry expired at 110
/// ms, 90 ms ago: stale. 300 ms: the breaker refuses; 190 ms stale: served.
/// From 400 ms the entry is 290 ms past expiry, more than 250: the default.
#[test]
fn breaker_open_serves_stale_within_its_age_then_the_default() {
    let chain = r#""fallback": {"chain": [{"kind": "stale", "max_staleness_ms": 250},
        {"kind": "default", "work": {"kind": "constant", "ms": 5}}]}"#;
    let (report, fallback) = run(&page(&format!("{CACHED}, {chain}"), 8));
    assert_eq!((report.succeeded, report.answered_full), (8, 2));
    assert_eq!(report.degraded, degraded(6, 2, 4, 0));
    assert_eq!(
        fallback,
        FallbackCounts {
            taken: 6,
            stale: 2,
            default: 4,
            call: 0,
            failed: 0,
            cancelled: 0
        }
    );
    // Two loads reached the database: at 0 ms and the refused one at 200.
    let db = report.services.iter().find(|s| s.name == "db").unwrap();
    assert_eq!(
        db.calls, 1,
        "a down instance's refusal is no call it served"
    );
    assert_eq!(report.edges[1].counters.breaker_rejected, 5);
    // A stale answer is at once; a default after its 5 ms of work.
    let max = report.latency_ms.unwrap().max;
    assert_eq!(max, 10.0, "the first load is the slowest answer");
    // (Quantiles to an HDR histogram's 3 significant digits.)
    let p50 = report.ok_latency_ms.unwrap().p50;
    assert!((p50 - 5.0).abs() <= 0.005, "{p50}");
}

/// Only the breaker's refusals take the fallback: the refused connection
/// at 200 ms fails the request.
#[test]
fn only_the_failures_listed_take_the_fallback() {
    let chain = r#""fallback": {"on": ["breaker_open"],
        "chain": [{"kind": "stale", "max_staleness_ms": 250}, {"kind": "default"}]}"#;
    let (report, fallback) = run(&page(&format!("{CACHED}, {chain}"), 8));
    assert_eq!((report.succeeded, report.failed), (7, 1));
    assert_eq!(report.failed_by_reason.connection_refused, 1);
    assert_eq!(report.degraded, degraded(5, 1, 4, 0));
    assert_eq!((fallback.taken, fallback.failed), (5, 0));
}

/// A write fails explicitly: `fail` ends the chain with the call's failure.
#[test]
fn a_write_fails_explicitly() {
    let chain = r#""idempotent": false, "fallback": {"chain": [{"kind": "fail"}]}"#;
    let (report, fallback) = run(&page(chain, 4));
    // 0 and 100 ms are served; 200 and 300 ms are refused.
    assert_eq!((report.succeeded, report.failed), (2, 2));
    assert_eq!(report.failed_by_reason.connection_refused, 2);
    assert_eq!(report.degraded, DegradedCounts::default());
    assert_eq!((fallback.taken, fallback.failed), (2, 2));
}

/// A `call` fallback answers from the secondary (7 ms), degraded; with the
/// secondary down too, the next kind (a default) answers.
#[test]
fn a_secondary_answers_and_its_failure_passes_to_the_next_kind() {
    let chain =
        r#""fallback": {"chain": [{"kind": "call", "call": "secondary"}, {"kind": "default"}]}"#;
    let (report, fallback) = run(&page(chain, 4));
    assert_eq!(report.degraded, degraded(2, 0, 0, 2));
    assert_eq!((fallback.taken, fallback.call, fallback.default), (2, 2, 0));
    // The secondary's answers: 200 + 7 and 300 + 7 ms.
    let (_, records) = run_recording_attempts(&page(chain, 4));
    let secondary: Vec<f64> = records
        .iter()
        .filter(|r| r.service == 2)
        .map(|r| ms(r.finished))
        .collect();
    assert_eq!(secondary, [207.0, 307.0]);

    let down = page(chain, 4).replace(
        r#""set": {"services[db].instances_down": 1}"#,
        r#""set": {"services[db].instances_down": 1, "services[secondary].instances_down": 1}"#,
    );
    let (report, fallback) = run(&down);
    assert_eq!(report.degraded, degraded(2, 0, 2, 0));
    assert_eq!((fallback.call, fallback.default), (0, 2));
}

/// A fallback whose answers are as good as the primary's (a full replica)
/// leaves the requests answered in full.
#[test]
fn answers_not_marked_degraded_are_full() {
    let chain = r#""fallback": {"degraded": false,
        "chain": [{"kind": "call", "call": "secondary"}]}"#;
    let (report, fallback) = run(&page(chain, 4));
    assert_eq!((report.succeeded, report.answered_full), (4, 4));
    assert_eq!(fallback.call, 2);
}

/// The mark travels up: a gateway in front of the page answers degraded
/// too, and its own breaker counts the page's degraded answers as answers.
#[test]
fn a_degraded_answer_travels_up_to_the_request() {
    let text = page(r#""fallback": {"chain": [{"kind": "default"}]}"#, 6)
        .replace(r#""target": "page""#, r#""target": "gateway""#)
        .replace(
            r#""services": ["#,
            r#""services": [{"name": "gateway", "steps": [{"call": "page",
            "breaker": {"kind": "consecutive", "failure_threshold": 1}}]},"#,
        );
    let (report, _) = run_recording_attempts(&text);
    assert_eq!((report.succeeded, report.degraded.default), (6, 4));
    let gateway_edge = report.edges.iter().find(|e| e.callee == "page").unwrap();
    assert_eq!(gateway_edge.counters.breaker_rejected, 0);
}

/// A parallel step's branch that fails (20 ms of work, then an error) is
/// stood in for by its default (3 ms): the page answers at 23 ms, degraded;
/// a branch's `call` fallback goes to another service as another child.
#[test]
fn a_branch_fallback_answers_for_the_branch() {
    let model = |b_fallback: &str| {
        format!(
            r#"{{"name": "m",
            "workloads": [{{"name": "w", "target": "page", "arrival": {{"kind": "at_once"}}, "requests": 1}}],
            "services": [
              {{"name": "page", "steps": [{{"parallel": {{"branches": [
                  {{"call": "a"}}, {{"call": "b", "fallback": {b_fallback}}}]}}}}]}},
              {{"name": "a", "steps": [{{"work": {{"kind": "constant", "ms": 10}}}}]}},
              {{"name": "b", "steps": [{{"work": {{"kind": "constant", "ms": 20}}, "error": {{"p": 1}}}}]}},
              {{"name": "c", "steps": [{{"work": {{"kind": "constant", "ms": 4}}}}]}}
            ]}}"#
        )
    };
    let (report, _) = run_recording_attempts(&model(
        r#"{"chain": [{"kind": "default", "work": {"kind": "constant", "ms": 3}}]}"#,
    ));
    assert_eq!(report.succeeded, 1);
    assert_eq!(report.degraded, degraded(1, 0, 1, 0));
    assert_eq!(report.latency_ms.unwrap().max, 23.0);

    let (report, records) =
        run_recording_attempts(&model(r#"{"chain": [{"kind": "call", "call": "c"}]}"#));
    assert_eq!(report.degraded, degraded(1, 0, 0, 1));
    assert_eq!(report.latency_ms.unwrap().max, 24.0);
    let c: Vec<f64> = records
        .iter()
        .filter(|r| r.service == 3)
        .map(|r| ms(r.finished))
        .collect();
    assert_eq!(c, [24.0]);
    let b_edge = report.edges.iter().find(|e| e.callee == "b").unwrap();
    assert_eq!(
        (
            b_edge.counters.fallback.taken,
            b_edge.counters.fallback.call
        ),
        (1, 1)
    );
}

/// A system serving only fallbacks has not recovered: after the trigger the
/// breaker stays open (a cooldown longer than the run), every answer is a
/// default, and the verdict, judged on full answers, says so.
#[test]
fn a_system_serving_only_fallbacks_has_not_recovered() {
    let text = r#"{"name": "m", "horizon_s": 250,
        "workloads": [{"name": "w", "target": "page", "duration_s": 250,
            "arrival": {"kind": "poisson", "rate_per_s": 50}}],
        "services": [
          {"name": "page", "steps": [{"call": "db",
              "breaker": {"kind": "consecutive", "failure_threshold": 5, "cooldown_ms": 1000000},
              "fallback": {"chain": [{"kind": "default"}]}}]},
          {"name": "db", "workers": 4, "steps": [{"work": {"kind": "exponential", "mean_ms": 10}}]}
        ],
        "timeline": [
          {"name": "db down", "at_s": 40, "role": "trigger_start", "set": {"services[db].instances_down": 1}},
          {"name": "db back", "at_s": 50, "role": "trigger_end", "set": {"services[db].instances_down": 0}}
        ],
        "metastability": {"baseline_from_s": 5}}"#;
    let model = load_model(text, &[], None).unwrap_or_else(|e| panic!("{e:?}"));
    let report = &stormsim_sim::run_model(&model).variants[0];
    assert!(
        report.success_rate.unwrap() > 0.999,
        "every request answered"
    );
    let verdict = report.verdict.as_ref().unwrap();
    assert_eq!(verdict.outcome, Outcome::Metastable, "{}", verdict.reason);
    assert!(
        verdict.reason.contains("judged on full answers"),
        "{}",
        verdict.reason
    );
}

/// `check`'s problems with fallbacks, each at its path, all at once.
#[test]
fn check_refuses_fallbacks_that_cannot_work() {
    /// `text`'s problems, as `check` prints them.
    fn problems_of(text: &str) -> Vec<String> {
        match load_model(text, &[], None) {
            Ok(_) => Vec::new(),
            Err(e) => e.problems.iter().map(|p| p.to_string()).collect(),
        }
    }
    // The page's problems with `step` as its call step's fields.
    let problems = |step: &str| problems_of(&page(step, 1));
    /// Asserts a problem at a path containing `at` says `says`.
    fn has(problems: &[String], at: &str, says: &str) {
        assert!(
            problems.iter().any(|p| p.contains(at) && p.contains(says)),
            "no {at:?} saying {says:?} in {problems:?}"
        );
    }
    has(
        &problems(r#""fallback": {"chain": [{"kind": "stale", "max_staleness_ms": 1000}]}"#),
        "services[0].steps[0].fallback.chain[0]",
        "cache",
    );
    has(
        &problems(r#""fallback": {"chain": [{"kind": "call", "call": "db"}]}"#),
        "fallback.chain[0].call",
        "retry",
    );
    has(
        &problems(r#""fallback": {"chain": [{"kind": "call", "call": "page"}]}"#),
        "fallback.chain[0].call",
        "call cycle page -> page",
    );
    has(
        &problems(r#""fallback": {"on": ["timeout", "teapot"], "chain": [{"kind": "default"}]}"#),
        "fallback.on",
        "teapot",
    );
    let never =
        problems(r#""fallback": {"on": [], "chain": [{"kind": "default"}, {"kind": "fail"}]}"#);
    assert_eq!(never.len(), 2, "{never:?}");
    has(&never, "fallback.on", "");
    has(&never, "fallback.chain[1]", "never reached");
    let on_work = problems_of(&page(r#""timeout_ms": 100"#, 1).replace(
        r#"{"work": {"kind": "constant", "ms": 7}}"#,
        r#"{"work": {"kind": "constant", "ms": 7}, "fallback": {"chain": [{"kind": "fail"}]}}"#,
    ));
    has(
        &on_work,
        "services[2].steps[0].fallback",
        "only a `call` step",
    );
}

/// models/fallbacks.json, at several seeds: both sides of a fallback.
/// Without one, shoppers retry failed pages and keep recs down; a default
/// keeps every page up and cuts those retries, and recs recovers; a call to
/// recs-lite instead sends it more than it completes, and its own users'
/// retries keep it down after recs is back.
#[test]
fn the_bundled_fallbacks_keep_the_page_up_or_become_the_next_outage() {
    for seed in 1..=4 {
        let reports = common::run_bundled("fallbacks", &[], seed);
        common::assert_outcome(&reports, "no-fallback", Outcome::Metastable, seed);
        common::assert_outcome(&reports, "default", Outcome::Recovered, seed);
        common::assert_outcome(&reports, "stale-then-default", Outcome::Recovered, seed);
        common::assert_outcome(&reports, "secondary", Outcome::Metastable, seed);
        let workload = |variant: &str, name: &str| {
            let v = common::variant(&reports, variant);
            let w = v.workloads.iter().find(|w| w.name == name).unwrap();
            (w.success_rate.unwrap(), w.degraded)
        };
        let page_retries = |variant: &str| {
            let v = common::variant(&reports, variant);
            v.edges
                .iter()
                .find(|e| e.caller == "workload:shoppers")
                .unwrap()
                .counters
                .retries
        };
        // Without a fallback half the pages fail; with one, all are answered,
        // those during the slowdown degraded.
        assert!(workload("no-fallback", "shoppers").0 < 0.6, "seed {seed}");
        for variant in ["default", "stale-then-default", "secondary"] {
            let (success, degraded) = workload(variant, "shoppers");
            assert!(success > 0.999, "seed {seed}, {variant}: {success}");
            assert!(degraded > 0, "seed {seed}, {variant}");
        }
        // The shoppers' retries that fed the storm are gone.
        let (storm, kept_up) = (page_retries("no-fallback"), page_retries("default"));
        assert!(kept_up * 100 < storm, "seed {seed}: {kept_up} vs {storm}");
        // The secondary's users pay: searches fail, where no other variant
        // loses any.
        assert!(workload("default", "searchers").0 > 0.999, "seed {seed}");
        let (searches, _) = workload("secondary", "searchers");
        assert!(searches < 0.5, "seed {seed}: {searches}");
    }
}

/// A branch's fallback call is a child of its parallel step, cancelled with
/// it: `check` refuses a `context` that says otherwise.
#[test]
fn a_branch_fallback_call_takes_the_branches_context() {
    let model = |context: &str| {
        format!(
            r#"{{"name": "m",
            "workloads": [{{"name": "w", "target": "page", "arrival": {{"kind": "at_once"}}, "requests": 1}}],
            "services": [
              {{"name": "page", "steps": [{{"parallel": {{"branches": [
                  {{"call": "a"}},
                  {{"call": "b", "fallback": {{"chain": [{{"kind": "call", "call": "a"{context}}}]}}}}]}}}}]}},
              {{"name": "a", "steps": [{{"work": {{"kind": "constant", "ms": 1}}}}]}},
              {{"name": "b", "steps": [{{"work": {{"kind": "constant", "ms": 1}}}}]}}
            ]}}"#
        )
    };
    assert!(load_model(&model(""), &[], None).is_ok());
    assert!(load_model(&model(r#", "context": "request""#), &[], None).is_ok());
    let refused = load_model(&model(r#", "context": "background""#), &[], None)
        .expect_err("a background call in a request-context group");
    assert!(
        refused.problems.iter().any(
            |p| p.path == "services[0].steps[0].parallel.branches[1].fallback.chain[0].context"
        ),
        "{refused}"
    );
}
