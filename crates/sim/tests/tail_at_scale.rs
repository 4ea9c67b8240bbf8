//! S4, The Tail at Scale (`models/tail-at-scale.json`): fan-out, hedged and
//! tied requests, correlated slowness, and the hedge brake; plus hand-built
//! hedge timelines and the conservation of attempts.

use crate::common;

use common::{ms, run_recording_attempts};
use std::collections::BTreeSet;
use stormsim_model::load_model;
use stormsim_sim::report::{AttemptOutcomeKind, AttemptRecord};
use stormsim_sim::{run_variant, Simulator, VariantReport};

fn model_text() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/tail-at-scale.json"
    );
    std::fs::read_to_string(path).expect("models/tail-at-scale.json is readable")
}

fn run(name: &str) -> VariantReport {
    let model = load_model(&model_text(), &[], None).expect("the bundled model is valid");
    let variant = model
        .variants
        .iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("no variant {name}"));
    run_variant(variant)
}

/// Share of requests slower than `ms` (read off the latency CDF; the model has
/// no latency near the thresholds used, so the histogram's buckets do not blur it).
fn share_slower_than(r: &VariantReport, ms: f64) -> f64 {
    let at_most = r
        .latency_cdf
        .iter()
        .rev()
        .find(|(x, _)| *x <= ms)
        .map_or(0.0, |(_, f)| *f);
    1.0 - at_most
}

/// The frontend's fan-out edge (the workload's edge comes first).
fn fan_out_edge(r: &VariantReport) -> &stormsim_sim::report::EdgeReport {
    r.edges
        .iter()
        .find(|e| e.caller == "frontend")
        .expect("the frontend calls the leaf")
}

fn leaf(r: &VariantReport) -> &stormsim_sim::ServiceReport {
    r.services.iter().find(|s| s.name == "leaf").unwrap()
}

/// A request waits for all N children, each slow (1 s) with probability 0.01
/// independently: it meets a slow child with probability 1 − 0.99^N. Fast
/// children take at most tens of ms, so "slower than 500 ms" is exactly "met a
/// slow child". Binomial sampling error over 20,000 requests, four standard
/// errors (three checks; a correct simulator fails one with p < 2e-4).
#[test]
fn fan_out_meets_a_slow_child_with_probability_one_minus_099_to_the_n() {
    for (variant, n) in [("fanout-1", 1), ("fanout-10", 10), ("fanout-100", 100)] {
        let r = run(variant);
        assert_eq!(r.succeeded, r.requests, "{variant}");
        assert_eq!(fan_out_edge(&r).counters.fan_out.ok, r.requests);
        assert_eq!(leaf(&r).calls, r.requests * n, "one child per shard");
        let p = 1.0 - 0.99f64.powi(n as i32);
        let se = (p * (1.0 - p) / r.requests as f64).sqrt();
        let share = share_slower_than(&r, 500.0);
        assert!(
            (share - p).abs() < 4.0 * se,
            "{variant}: {share} against {p} ± {}",
            4.0 * se
        );
    }
}

/// Hedging at the p95 of observed child latency: the 1% of slow children are
/// hedged after about 16 ms and answered by the other replica, so the p99 of
/// the fan-out of 10 falls from the slow child's 1 s to tens of ms. Extra load:
/// by construction about 5% of tries outlast their p95 (the window of 1,000
/// tries gives the estimate a spread of ±0.7% per window, averaged over 200
/// windows; the first 100 tries use the fixed 15 ms, about 10% hedged): 4-6%.
#[test]
fn hedging_at_p95_cuts_the_p99_for_about_five_percent_more_load() {
    let plain = run("fanout-10");
    let hedged = run("hedged-p95");
    assert!(
        plain.latency_ms.unwrap().p99 > 10.0 * hedged.latency_ms.unwrap().p99,
        "p99 {} -> {}",
        plain.latency_ms.unwrap().p99,
        hedged.latency_ms.unwrap().p99
    );
    let edge = &fan_out_edge(&hedged).counters;
    let tries = edge.attempts - edge.hedges;
    let extra = edge.hedges as f64 / tries as f64;
    assert!((0.04..0.06).contains(&extra), "hedges per try {extra}");
    // Tied: every loser is cancelled and, its work watching for cancellation,
    // stops: no backend operation completes for nobody.
    let l = leaf(&hedged);
    assert_eq!(edge.cancellations, edge.hedges);
    assert_eq!(l.wasted, 0);
    assert_eq!(l.completed + l.cancelled, l.calls);
}

/// Untied: the same race, but the losers run on and their backend work is
/// wasted; the user sees the same latency (common random numbers).
#[test]
fn untied_losers_run_on_and_their_work_is_wasted() {
    let tied = run("hedged-p95");
    let untied = run("hedged-p95-untied");
    assert_eq!(tied.latency_ms, untied.latency_ms);
    let edge = &fan_out_edge(&untied).counters;
    let l = leaf(&untied);
    assert_eq!(edge.cancellations, 0);
    assert_eq!(edge.losers_untied, edge.hedges);
    // Nothing stops a loser: every backend operation completes. A loser
    // completes for nobody (wasted) unless it had already finished, its answer
    // still on the wire (0.1 ms) when the winner's arrived.
    assert_eq!(l.completed, l.calls);
    assert_eq!(l.cancelled, 0);
    assert!(l.wasted > 0 && l.wasted <= edge.losers_untied);
}

/// Slowness by host (1% of the time, 50×, in periods of 0.2 s on average,
/// much longer than a request): a hedge to the other replica on the same host
/// meets the same slow period, so a request that hits a slow host (about 1 −
/// 0.99^10 ≈ 10% of them) stays slow and the p99 stays above 500 ms; a hedge
/// to the other zone is slow only if both hosts are (≈ 10 × 0.01² = 0.1% of
/// requests, below the 1% a p99 sees).
#[test]
fn hedging_to_the_same_host_helps_much_less_than_to_another_zone() {
    let none = run("host-slow");
    let same = run("host-slow-hedged-same-host");
    let other = run("host-slow-hedged-other-zone");
    assert!(
        none.latency_ms.unwrap().p99 > 500.0,
        "{}",
        none.latency_ms.unwrap().p99
    );
    assert!(
        same.latency_ms.unwrap().p99 > 500.0,
        "{}",
        same.latency_ms.unwrap().p99
    );
    assert!(
        other.latency_ms.unwrap().p99 < 200.0,
        "{}",
        other.latency_ms.unwrap().p99
    );
    assert!(fan_out_edge(&same).counters.hedges > 0);
}

/// Near capacity (89% busy), a fixed 20 ms hedge delay is shorter than the
/// queueing delay, so unbraked hedging duplicates most children — load ×1.8,
/// latency up — while a brake of 5% holds hedges to 5% of tries (plus its
/// initial burst of 10).
#[test]
fn the_brake_bounds_hedges_under_load_while_unbraked_hedging_amplifies_it() {
    let none = run("overload-unhedged");
    let unbraked = run("overload-hedged");
    let braked = run("overload-hedged-braked");
    let hedges_per_try = |r: &VariantReport| {
        let e = &fan_out_edge(r).counters;
        e.hedges as f64 / (e.attempts - e.hedges) as f64
    };
    assert!(
        hedges_per_try(&unbraked) > 0.5,
        "{}",
        hedges_per_try(&unbraked)
    );
    let tries =
        (fan_out_edge(&braked).counters.attempts - fan_out_edge(&braked).counters.hedges) as f64;
    assert!(
        hedges_per_try(&braked) <= 0.05 + 10.0 / tries + 1e-9,
        "{}",
        hedges_per_try(&braked)
    );
    assert!(fan_out_edge(&braked).counters.hedges_braked > 0);
    assert!(
        leaf(&unbraked).calls_per_request.unwrap() > 1.5 * leaf(&braked).calls_per_request.unwrap()
    );
    assert!(unbraked.latency_ms.unwrap().p50 > 2.0 * none.latency_ms.unwrap().p50);
    assert!(braked.latency_ms.unwrap().p50 < 1.5 * none.latency_ms.unwrap().p50);
}

/// One request through `frontend → leaf` (1 ms hops, 50 ms of leaf work,
/// two replicas), hedged after a fixed 10 ms, with `extra` hedge fields.
fn one_hedged_request(extra: &str) -> (VariantReport, Vec<AttemptRecord>) {
    let text = format!(
        r#"{{
        "name": "hedge-timeline",
        "network": {{"one_way": {{"kind": "constant", "ms": 1}}}},
        "workloads": [{{"name": "u", "target": "frontend", "arrival": {{"kind": "at_once"}}, "requests": 1}}],
        "services": [
          {{"name": "frontend", "steps": [{{"call": "leaf", "idempotent": true,
            "hedge": {{"delay_ms": 10 {extra}}}}}]}},
          {{"name": "leaf", "instances": 2, "steps": [{{"work": {{"kind": "constant", "ms": 50}}, "on_cancel": "stop"}}]}}
        ]
      }}"#
    );
    run_recording_attempts(&text)
}

/// Sent at 1 ms, the try reaches the leaf at 2 ms and answers at 52 + 1 ms;
/// the hedge goes at 1 + 10 = 11 ms to the other replica. The try wins at
/// 53 ms: the hedge is cancelled then (tied), or `cancel_delay_ms` later, or
/// left running (untied) and completes at 12 + 50 = 62 ms for nobody.
#[test]
fn a_hedge_goes_at_its_delay_and_the_loser_is_cancelled_when_the_try_wins() {
    let (mut report, records) = one_hedged_request("");
    report.attempts = records.clone();
    let csv = stormsim_sim::RunReport {
        model: "hedge-timeline".into(),
        description: String::new(),
        seed: 1,
        variants: vec![report.clone()],
    }
    .attempts_csv()
    .unwrap();
    assert_eq!(
        csv.lines().collect::<Vec<_>>(),
        [
            "variant,request_id,service,shard,replica,attempt_no,hedge,started_ms,finished_ms,outcome",
            "base,0,leaf,,0,1,0,1,53,success",
            "base,0,leaf,,1,1,1,11,53,cancelled",
            "base,0,frontend,,0,1,0,0,54,success",
        ]
    );
    let leaf_records: Vec<_> = records.iter().filter(|r| r.service == 1).collect();
    assert_eq!(leaf_records.len(), 2, "{records:?}");
    let winner = leaf_records.iter().find(|r| r.hedge == 0).unwrap();
    let hedge = leaf_records.iter().find(|r| r.hedge == 1).unwrap();
    assert_eq!((ms(winner.started), ms(winner.finished)), (1.0, 53.0));
    assert_eq!(winner.outcome, AttemptOutcomeKind::Success);
    assert_eq!((ms(hedge.started), ms(hedge.finished)), (11.0, 53.0));
    assert_eq!(hedge.outcome, AttemptOutcomeKind::Cancelled);
    assert_ne!(
        winner.replica, hedge.replica,
        "a hedge goes to the other replica"
    );
    assert_eq!(report.latency_ms.unwrap().max, 54.0);
    let leaf = report.services.iter().find(|s| s.name == "leaf").unwrap();
    assert_eq!((leaf.completed, leaf.cancelled, leaf.wasted), (1, 1, 0));

    let (_, delayed) = one_hedged_request(r#", "cancel_delay_ms": 5"#);
    let hedge = delayed.iter().find(|r| r.hedge == 1).unwrap();
    assert_eq!(ms(hedge.finished), 58.0, "cancelled 5 ms after the win");

    let (untied, records) = one_hedged_request(r#", "tied": false"#);
    let hedge = records.iter().find(|r| r.hedge == 1).unwrap();
    assert_eq!(
        (ms(hedge.finished), hedge.outcome),
        (53.0, AttemptOutcomeKind::Cancelled)
    );
    let leaf = untied.services.iter().find(|s| s.name == "leaf").unwrap();
    assert_eq!((leaf.completed, leaf.cancelled, leaf.wasted), (2, 0, 1));
}

/// Every child attempt ends exactly once — success, error, timeout or
/// cancelled — and is counted once: one record per attempt sent, no two alike.
#[test]
fn every_attempt_ends_exactly_once() {
    let model = load_model(&model_text(), &[], None).unwrap();
    for name in ["hedged-p95", "hedged-p95-untied", "overload-hedged"] {
        let v = model.variants.iter().find(|v| v.name == name).unwrap();
        let report = Simulator::new(&v.model, &v.changes)
            .record_attempts()
            .run(&v.name);
        let sent: u64 = report.edges.iter().map(|e| e.counters.attempts).sum();
        assert_eq!(report.attempts.len() as u64, sent, "{name}");
        let distinct: BTreeSet<_> = report
            .attempts
            .iter()
            .map(|r| (r.request, r.service, r.shard, r.attempt_no, r.hedge))
            .collect();
        assert_eq!(distinct.len(), report.attempts.len(), "{name}");
        assert!(report.attempts.iter().all(|r| r.finished >= r.started));
    }
}

/// Each replica has its own latency profile: with `replica_work_factor` [1, 3]
/// the second replica of every shard takes three times as long, and the
/// attempt records show it replica by replica (round robin alternates them).
#[test]
fn replicas_have_their_own_latency_profile() {
    let text = r#"{
        "name": "profiles",
        "workloads": [{"name": "u", "target": "front", "arrival": {"kind": "constant", "rate_per_s": 10}, "requests": 4}],
        "services": [
          {"name": "front", "steps": [{"call": "leaf"}]},
          {"name": "leaf", "instances": 4, "shards": 2, "replica_work_factor": [1, 3],
           "steps": [{"work": {"kind": "constant", "ms": 10}}]}
        ]
      }"#;
    let model = load_model(text, &[], None).unwrap_or_else(|e| panic!("{e:?}"));
    let v = &model.variants[0];
    let report = Simulator::new(&v.model, &v.changes)
        .record_attempts()
        .run(&v.name);
    let leaf: Vec<_> = report.attempts.iter().filter(|r| r.service == 1).collect();
    assert_eq!(leaf.len(), 4);
    for r in leaf {
        let took = ms(r.finished) - ms(r.started);
        let expect = if r.replica % 2 == 0 { 10.0 } else { 30.0 };
        assert_eq!(took, expect, "replica {}", r.replica);
    }
}

/// Four shards, each child 10 ms or 100 ms with even odds (independent).
fn quorum_model(fan_out: &str) -> VariantReport {
    let text = format!(
        r#"{{
        "name": "quorum",
        "workloads": [{{"name": "u", "target": "frontend", "arrival": {{"kind": "poisson", "rate_per_s": 100}}, "requests": 1600}}],
        "services": [
          {{"name": "frontend", "steps": [{{"call": "leaf", "fan_out": {fan_out}}}]}},
          {{"name": "leaf", "instances": 4, "shards": 4, "steps": [{{"work": {{"kind": "mixture", "of": [
              {{"p": 0.5, "dist": {{"kind": "constant", "ms": 10}}}},
              {{"p": 0.5, "dist": {{"kind": "constant", "ms": 100}}}}]}}, "on_cancel": "stop"}}]}}
        ]
      }}"#
    );
    let model = load_model(&text, &[], None).unwrap_or_else(|e| panic!("{e:?}"));
    run_variant(&model.variants[0])
}

/// Asserts `count` of `n` is within four binomial standard errors of `p`.
fn assert_share(what: &str, count: u64, n: u64, p: f64) {
    let se = (p * (1.0 - p) / n as f64).sqrt();
    let share = count as f64 / n as f64;
    assert!(
        (share - p).abs() < 4.0 * se,
        "{what}: {share} against {p} ± {}",
        4.0 * se
    );
}

/// `wait_for: 2`: a request is answered with its second success, so it is fast
/// when at least 2 of its 4 children are (11/16), and the children still
/// running are cancelled. `deadline_ms: 50`, waiting for all: at 50 ms it
/// answers with what came — `partial` if 1 to 3 fast children (14/16),
/// `deadline_exceeded` if none (1/16); all four fast (1/16) is `ok` at 10 ms.
#[test]
fn a_fan_out_completes_on_a_quorum_or_at_its_deadline_with_a_partial_answer() {
    let quorum = quorum_model(r#"{"wait_for": 2}"#);
    let n = quorum.requests;
    let edge = &fan_out_edge(&quorum).counters;
    assert_eq!(edge.fan_out.ok, n);
    assert_eq!(quorum.succeeded, n);
    let fast = (share_slower_than(&quorum, 50.0) * n as f64).round() as u64;
    assert_share("quorum answered in 100 ms", fast, n, 5.0 / 16.0);
    assert!(
        edge.cancellations > 0,
        "the children left running are cancelled"
    );

    let partial = quorum_model(r#"{"deadline_ms": 50}"#);
    let f = fan_out_edge(&partial).counters.fan_out;
    assert_eq!(f.total(), n);
    assert_share("ok", f.ok, n, 1.0 / 16.0);
    assert_share("partial", f.partial, n, 14.0 / 16.0);
    assert_share("deadline_exceeded", f.deadline_exceeded, n, 1.0 / 16.0);
    assert_eq!(
        partial.succeeded,
        f.ok + f.partial,
        "a partial answer is an answer"
    );
    assert_eq!(
        partial.failed_by_reason.deadline_exceeded,
        f.deadline_exceeded
    );
}

/// Four shards of 10 ms constant work; a share `p` of requests is slow at
/// every shard (`factor` 5). Each request's children, as (request, took ms).
fn correlated_children(p: f64, requests: u32, extra: &str) -> Vec<(u64, f64)> {
    let text = format!(
        r#"{{
        "name": "correlated",
        "workloads": [{{"name": "u", "target": "frontend", "arrival": {{"kind": "constant", "rate_per_s": 10}}, "requests": {requests}}}],
        "services": [
          {{"name": "frontend", "steps": [{{"call": "leaf", "fan_out": {{"correlated_slowdown": {{"p": {p}, "factor": 5}}}} {extra}}}]}},
          {{"name": "leaf", "instances": 8, "shards": 4, "steps": [{{"work": {{"kind": "constant", "ms": 10}}}}]}}
        ]
      }}"#
    );
    let (_, records) = run_recording_attempts(&text);
    records
        .iter()
        .filter(|r| r.service == 1)
        .map(|r| (r.request, ms(r.finished) - ms(r.started)))
        .collect()
}

/// With `p = 1` every child of every request takes 5 × 10 ms; with `p = 0`,
/// 10 ms: the factor multiplies the child's work, nothing else.
#[test]
fn a_correlated_slowdown_multiplies_every_childs_work() {
    let slow = correlated_children(1.0, 3, "");
    assert_eq!(slow.len(), 12);
    assert!(slow.iter().all(|&(_, took)| took == 50.0), "{slow:?}");
    let fast = correlated_children(0.0, 3, "");
    assert!(fast.iter().all(|&(_, took)| took == 10.0), "{fast:?}");
}

/// With `p = 0.2` over 2,000 requests: every request's four children agree
/// (all slow or all fast), and the share of slow requests is within four
/// binomial standard errors of 0.2. A hedge meets the same slowness: the
/// slowness belongs to the request, not to the replica.
#[test]
fn a_correlated_slowdown_slows_all_of_a_requests_children_or_none() {
    let hedged = r#", "idempotent": true, "hedge": {"delay_ms": 20, "max_hedges": 1}"#;
    for extra in ["", hedged] {
        let children = correlated_children(0.2, 2000, extra);
        let mut by_request: std::collections::BTreeMap<u64, BTreeSet<u64>> = Default::default();
        for (request, took) in children {
            // A hedge cancelled by its sibling's answer ends early: only
            // children that ran to their end show the work's length.
            if took == 10.0 || took == 50.0 {
                by_request.entry(request).or_default().insert(took as u64);
            }
        }
        assert_eq!(by_request.len(), 2000, "{extra}");
        assert!(
            by_request.values().all(|t| t.len() == 1),
            "{extra}: children disagree"
        );
        let slow = by_request.values().filter(|t| t.contains(&50)).count() as u64;
        assert_share("slow requests", slow, 2000, 0.2);
    }
}

/// When slowness belongs to the request (a tenth of requests 100× slower at
/// every shard), as many requests are slow as with independent 1 s calls at
/// fan-out 10, but a hedge meets the same slowness at the other replica:
/// hedging, which takes the independent case's share of slow requests from
/// 9.6% to almost none, leaves this one at a tenth.
#[test]
fn hedging_does_not_help_when_the_slowness_belongs_to_the_request() {
    let n = 20_000;
    for name in ["request-slow", "request-slow-hedged"] {
        let r = run(name);
        assert_eq!(r.requests, n);
        let slow = (share_slower_than(&r, 500.0) * n as f64).round() as u64;
        assert_share(name, slow, n, 0.1);
    }
    let independent = share_slower_than(&run("hedged-p95"), 500.0);
    assert!(independent < 0.01, "hedged-p95: {independent}");
}
