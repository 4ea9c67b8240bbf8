//! A bad model file never panics: every problem is reported with its JSON path
//! and what was expected, all at once.

mod common;

use common::{base, with};
use serde_json::{json, Value};
use stormsim_model::{load_model, parse_cli_value, ModelError};

fn problems(doc: &Value) -> Vec<String> {
    problems_text(&doc.to_string())
}

fn problems_text(text: &str) -> Vec<String> {
    match load_model(text, &[], None) {
        Ok(_) => vec![],
        Err(ModelError { problems }) => problems.iter().map(|p| p.to_string()).collect(),
    }
}

#[test]
fn the_base_is_valid() {
    assert_eq!(problems(&base()), Vec::<String>::new());
}

#[test]
fn malformed_json_names_line_and_column() {
    let p = problems_text("{\n  \"name\": \"x\",\n  \"services\": [\n}");
    assert_eq!(p.len(), 1);
    assert!(
        p[0].starts_with("invalid JSON at line 4, column 1"),
        "{p:?}"
    );
}

#[test]
fn unknown_fields_are_errors_with_their_path() {
    let doc = with(base(), "services[gateway].steps[0].timeot_ms", json!(5));
    let p = problems(&doc);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].starts_with(
            "services[0].steps[0].timeot_ms: unknown field `timeot_ms`, expected one of `work`"
        ),
        "{p:?}"
    );
    let doc = with(base(), "colour", json!("blue"));
    let p = problems(&doc);
    assert!(p[0].starts_with("colour: unknown field `colour`"), "{p:?}");
}

#[test]
fn wrong_types_and_bad_kinds_are_reported() {
    let doc = with(
        base(),
        "services[B].steps[0].work",
        json!({"kind": "gaussian", "ms": 1}),
    );
    let p = problems(&doc);
    assert!(p[0].starts_with("services[1].steps[0].work.kind: unknown variant `gaussian`, expected one of `constant`"), "{p:?}");
    let doc = with(base(), "workloads[users].requests", json!("many"));
    let p = problems(&doc);
    assert!(
        p[0].starts_with("workloads[0].requests: invalid type: string \"many\""),
        "{p:?}"
    );
}

#[test]
fn unknown_service_is_named() {
    let doc = with(base(), "services[gateway].steps[0].call", json!("C"));
    assert_eq!(
        problems(&doc),
        vec!["services[0].steps[0].call: unknown service \"C\""]
    );
}

#[test]
fn out_of_range_numbers_say_what_was_expected() {
    let doc = with(base(), "services[gateway].steps[0].timeout_ms", json!(-5));
    assert_eq!(
        problems(&doc),
        vec!["services[0].steps[0].timeout_ms: expected a positive number, got -5"]
    );
    let doc = with(base(), "services[B].workers", json!(0));
    assert_eq!(
        problems(&doc),
        vec!["services[1].workers: expected at least 1 worker, got 0"]
    );
    let doc = with(base(), "workloads[users].arrival.rate_per_s", json!(0));
    assert_eq!(
        problems(&doc),
        vec!["workloads[0].arrival.rate_per_s: expected a positive number, got 0"]
    );
    // JSON has no NaN: on the command line "NaN" is a string, and a type error.
    let doc = with(
        base(),
        "services[gateway].steps[0].timeout_ms",
        parse_cli_value("NaN"),
    );
    assert!(problems(&doc)[0].contains("invalid type: string \"NaN\", expected f64"));
}

#[test]
fn mixture_probabilities_must_sum_to_one() {
    let doc = with(
        base(),
        "services[B].steps[0].work",
        json!({"kind": "mixture", "of": [
            {"p": 0.7, "dist": {"kind": "constant", "ms": 10}},
            {"p": 0.2, "dist": {"kind": "constant", "ms": 400}}]}),
    );
    assert_eq!(
        problems(&doc),
        vec!["services[1].steps[0].work.of: expected probabilities summing to 1, got 0.8999999999999999"]
    );
}

#[test]
fn call_cycles_are_spelled_out() {
    let doc = with(base(), "services[B].steps", json!([{"call": "gateway"}]));
    assert_eq!(
        problems(&doc),
        vec!["services[1].steps[0].call: call cycle gateway -> B -> gateway"]
    );
    let doc = with(base(), "services[B].steps", json!([{"call": "B"}]));
    assert_eq!(
        problems(&doc),
        vec!["services[1].steps[0].call: call cycle B -> B"]
    );
}

#[test]
fn all_problems_are_reported_at_once() {
    let mut doc = base();
    for (path, value) in [
        ("services[gateway].steps[0].call", json!("C")),
        ("services[gateway].steps[0].timeout_ms", json!(-1)),
        ("services[B].workers", json!(0)),
        ("workloads[users].target", json!("nowhere")),
    ] {
        doc = with(doc, path, value);
    }
    let p = problems(&doc);
    assert_eq!(p.len(), 4, "{p:#?}");
    // Structural problems in several list elements are also collected.
    let mut doc = base();
    doc = with(doc, "services[gateway].stepz", json!([]));
    doc = with(doc, "services[B].workers", json!(-3));
    doc = with(doc, "workloads[users].arrival", json!({"kind": "poisson"}));
    let p = problems(&doc);
    assert_eq!(p.len(), 3, "{p:#?}");
    assert!(
        p.iter()
            .any(|m| m.starts_with("workloads[0].arrival: missing field `rate_per_s`")),
        "{p:#?}"
    );
    assert!(
        p.iter()
            .any(|m| m.starts_with("services[0].stepz: unknown field `stepz`")),
        "{p:#?}"
    );
    assert!(
        p.iter()
            .any(|m| m.starts_with("services[1].workers: invalid value: integer `-3`")),
        "{p:#?}"
    );
}

#[test]
fn variant_problems_name_the_variant_and_the_override() {
    let doc = with(
        base(),
        "variants",
        json!([
            {"name": "ok", "set": {}},
            {"name": "typo", "set": {"services[C].workers": 2}},
            {"name": "bad", "set": {"services[B].workers": 0}}
        ]),
    );
    assert_eq!(
        problems(&doc),
        vec![
            "variants[1].set[\"services[C].workers\"]: services[C].workers: no element named \"C\"",
            "variants[2] (\"bad\"): services[1].workers: expected at least 1 worker, got 0",
        ]
    );
}

#[test]
fn duplicate_names_and_missing_stop_conditions() {
    let doc = with(base(), "services[1].name", json!("gateway"));
    let p = problems(&doc);
    assert!(
        p.contains(&"services[1].name: duplicate name \"gateway\" (also services[0])".to_string()),
        "{p:?}"
    );
    let mut doc = base();
    doc["workloads"][0]
        .as_object_mut()
        .unwrap()
        .remove("requests");
    assert_eq!(
        problems(&doc),
        vec!["workloads[0]: expected `requests` or `duration_s` (or both): when does it stop?"]
    );
}

#[test]
fn random_garbage_never_panics() {
    // A cheap fuzz: truncations and byte flips of a valid model must give
    // errors, never a panic.
    let text = base().to_string();
    for cut in 0..text.len() {
        let _ = problems_text(&text[..cut]);
    }
    let bytes = text.as_bytes();
    for i in 0..bytes.len() {
        for b in [b'0', b'-', b'"', b'[', b'}', b'x'] {
            let mut mutated = bytes.to_vec();
            mutated[i] = b;
            if let Ok(s) = String::from_utf8(mutated) {
                let _ = problems_text(&s);
            }
        }
    }
}

/// Fan-out, hedging and placement (S4) are checked like the rest: hedging a
/// call that may not run twice, a fan-out waiting for more children than the
/// callee has shards, shards that do not divide the instances, a hedge with
/// no delay, a slowdown below 1 — all reported at once, each at its path.
#[test]
fn fan_out_and_hedging_problems_name_their_paths() {
    let mut doc = with(base(), "services[gateway].steps[0].hedge", json!({}));
    doc = with(
        doc,
        "services[gateway].steps[0].fan_out",
        json!({"wait_for": 5}),
    );
    doc = with(doc, "services[B].shards", json!(3));
    doc = with(doc, "services[B].instances", json!(4));
    doc = with(
        doc,
        "hosts",
        json!({"zones": 2, "per_zone": 1, "slow": {"mean_gap_s": 10, "mean_length_s": 1, "factor": 0.5}}),
    );
    let p = problems(&doc);
    let expect = [
        "services[0].steps[0].hedge: hedging sends the same request twice",
        "services[0].steps[0].hedge: expected `delay_ms`",
        "services[1].shards: expected a divisor of `instances` (4), got 3",
        "hosts.slow.factor: expected a slowdown of at least 1",
        "services[0].steps[0].fan_out.wait_for: expected at most the callee's 3 shards, got 5",
    ];
    for e in expect {
        assert!(
            p.iter().any(|x| x.starts_with(e)),
            "missing {e:?} in {p:#?}"
        );
    }
    // A work step takes none of them.
    let doc = with(base(), "services[B].steps[0].hedge", json!({"delay_ms": 5}));
    assert!(problems(&doc)
        .iter()
        .any(|x| x.starts_with("services[1].steps[0].hedge: only a `call` step takes this field")));
}

#[test]
fn cache_problems_name_their_paths() {
    let doc = with(
        base(),
        "services[gateway].steps[0].cache",
        json!({"keys": 0, "ttl_ms": -1, "zipf_s": -2}),
    );
    let p = problems(&doc);
    for e in [
        "services[0].steps[0].cache.keys: expected at least 1 key, got 0",
        "services[0].steps[0].cache.ttl_ms: expected a positive number",
        "services[0].steps[0].cache.zipf_s: expected",
    ] {
        assert!(
            p.iter().any(|x| x.starts_with(e)),
            "missing {e:?} in {p:#?}"
        );
    }
}

#[test]
fn only_a_last_step_may_hand_its_request_on() {
    let doc = with(
        base(),
        "services[gateway].steps[0].hold_worker",
        json!(false),
    );
    assert_eq!(problems(&doc), Vec::<String>::new());
    let doc = with(
        doc,
        "services[gateway].steps[+]",
        json!({"work": {"kind": "constant", "ms": 1}}),
    );
    let p = problems(&doc);
    assert!(
        p.iter()
            .any(|x| x.starts_with("services[0].steps[0].hold_worker: only a handler's last step")),
        "{p:?}"
    );
}

/// A horizon that would need more than ten million time-series buckets is
/// refused with the limit named, before any run fills them.
#[test]
fn too_many_time_series_buckets_are_refused() {
    let doc = with(base(), "horizon_s", json!(1e7));
    let doc = with(doc, "timeseries", json!({"bucket_s": 0.1}));
    let p = problems(&doc);
    assert!(
        p.iter()
            .any(|x| x.starts_with("timeseries.bucket_s: the horizon holds 1.000e8 buckets")),
        "{p:?}"
    );
    let doc = with(base(), "horizon_s", json!(1e7));
    assert_eq!(
        problems(&doc),
        Vec::<String>::new(),
        "1e7 buckets of 1 s is the limit"
    );
}

/// S3's fields: closed-loop users, clocks, deadline encodings, bounded work.
#[test]
fn deadline_and_closed_loop_mistakes_are_named() {
    let mut doc = with(
        base(),
        "workloads[users].arrival",
        json!({"kind": "closed_loop", "users": 0, "think": {"kind": "constant", "ms": -1}}),
    );
    doc = with(doc, "workloads[users].clock_offset_ms", json!(1e12));
    doc = with(doc, "services[B].clock_spread_ms", json!(-5));
    doc = with(
        doc,
        "services[gateway].steps[B].deadline",
        json!({"encoding": "absolute", "subtract_elapsed": false}),
    );
    doc = with(
        doc,
        "services[B].steps[0].deadline",
        json!({"first_attempt_cap_ms": 10, "encoding": "absolute"}),
    );
    doc = with(doc, "services[B].steps[0].timeout_ms", json!(0));
    let p = problems(&doc);
    for expected in [
        "workloads[0].arrival.users: expected 1 to 10000000 users, got 0",
        "workloads[0].arrival.think.ms: expected a number ≥ 0, got -1",
        "workloads[0].clock_offset_ms: expected a clock offset within ±86400000 ms, got 1000000000000",
        "services[1].clock_spread_ms: expected a number ≥ 0, got -5",
        "services[0].steps[0].deadline.subtract_elapsed: an absolute deadline does not go stale",
        "services[1].steps[0].deadline.first_attempt_cap_ms: a work step makes no attempts",
        "services[1].steps[0].deadline.encoding: a work step sends no deadline on",
        "services[1].steps[0].timeout_ms: expected a positive number, got 0",
    ] {
        assert!(p.iter().any(|x| x.starts_with(expected)), "{expected:?} not in {p:#?}");
    }
}

#[test]
fn a_closed_loop_with_a_work_timeout_and_a_deadline_bound_is_valid() {
    let mut doc = with(
        base(),
        "workloads[users].arrival",
        json!({"kind": "closed_loop", "users": 10, "think": {"kind": "exponential", "mean_ms": 100}}),
    );
    doc = with(doc, "services[B].steps[0].timeout_ms", json!(50));
    doc = with(
        doc,
        "services[B].steps[0].deadline",
        json!({"margin_ms": 5, "min_budget_ms": 1}),
    );
    doc = with(doc, "services[B].clock_offset_ms", json!(-300.5));
    assert_eq!(problems(&doc), Vec::<String>::new());
}

/// A closed loop's users are events of their own: a timeline may change their
/// think time but neither their number nor the kind of arrival.
#[test]
fn a_timeline_cannot_reshape_a_closed_loop() {
    let closed = with(
        base(),
        "workloads[users].arrival",
        json!({"kind": "closed_loop", "users": 10, "think": {"kind": "constant", "ms": 100}}),
    );
    let change = |set: Value| {
        with(
            closed.clone(),
            "timeline",
            json!([{"name": "change", "at_s": 1, "set": set}]),
        )
    };
    let p = problems(&change(json!({
        "workloads[users].arrival": {"kind": "poisson", "rate_per_s": 5}
    })));
    assert!(
        p.iter()
            .any(|x| x.contains("from an open loop into a closed one or back")),
        "{p:?}"
    );
    let p = problems(&change(json!({"workloads[users].arrival.users": 20})));
    assert!(
        p.iter().any(|x| x.contains("cannot change the users")),
        "{p:?}"
    );
    let p = problems(&change(json!({
        "workloads[users].arrival.think": {"kind": "constant", "ms": 500}
    })));
    assert_eq!(p, Vec::<String>::new());
    // A user who never pauses could ask again and again at one instant.
    let p = problems(&with(
        closed,
        "workloads[users].arrival.think",
        json!({"kind": "constant", "ms": 0}),
    ));
    assert!(
        p.iter()
            .any(|x| x.starts_with("workloads[0].arrival.think: expected a think time above zero")),
        "{p:?}"
    );
}
