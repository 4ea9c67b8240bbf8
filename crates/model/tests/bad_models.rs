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
        p[0].starts_with(
            "workloads[0].requests: expected a whole number ≥ 0, got the string \"many\""
        ),
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
    assert_eq!(
        problems(&doc),
        ["services[0].steps[0].timeout_ms: expected a number, got the string \"NaN\""]
    );
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
fn an_unknown_field_inside_a_distribution_is_named_where_it_is() {
    // A tagged enum's fields are read from serde's buffer, which names no
    // path inside it: the field is found in the document instead.
    let doc = with(
        base(),
        "services[B].steps[0].work",
        json!({"kind": "mixture", "of": [
            {"p": 1, "dist": {"kind": "constant", "ms": 1}, "weight": 2}]}),
    );
    assert_eq!(
        problems(&doc),
        ["services[1].steps[0].work.of[0].weight: unknown field `weight`, expected `p` or `dist`"]
    );
    // Where two objects have it, it cannot be told which: the enum's path.
    let doc = with(
        base(),
        "services[B].steps[0].work",
        json!({"kind": "mixture", "of": [
            {"p": 0.5, "dist": {"kind": "constant", "ms": 1}, "weight": 2},
            {"p": 0.5, "dist": {"kind": "constant", "ms": 1}, "weight": 2}]}),
    );
    assert_eq!(
        problems(&doc),
        ["services[1].steps[0].work: unknown field `weight`, expected `p` or `dist`"]
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
            .any(|m| m == "services[1].workers: expected a whole number ≥ 0, got -3"),
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
            "variants[1].set[\"services[C].workers\"]: services[C].workers: no element named \"C\"; the names here are: gateway, B",
            "variants[2].set[\"services[B].workers\"]: expected at least 1 worker, got 0",
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

/// Service and workload names become column names (`pay.v2.calls` could be
/// service `pay` and metric `v2.calls`), and `run` is the run's own entity
/// in the tidy outputs: both are refused where the name is written.
#[test]
fn names_that_would_make_output_columns_ambiguous_are_refused() {
    let mut doc = with(base(), "services[gateway].steps[0].call", json!("pay.v2"));
    doc = with(doc, "services[B].name", json!("pay.v2"));
    doc = with(doc, "workloads[users].name", json!("web,mobile"));
    doc = with(doc, "workloads[web,mobile].class", json!("say \"hi\""));
    assert_eq!(
        problems(&doc),
        vec![
            "services[1].name: expected a name without '.', ',', quotes or control characters (it names output columns, NAME.metric), got \"pay.v2\" with '.'",
            "workloads[0].name: expected a name without '.', ',', quotes or control characters (it names output columns, NAME.metric), got \"web,mobile\" with ','",
            "workloads[0].class: expected a name without '.', ',', quotes or control characters (it names output columns, NAME.metric), got \"say \\\"hi\\\"\" with '\"'",
        ]
    );
    let tab = with(base(), "workloads[users].name", json!("a\tb"));
    assert_eq!(problems(&tab).len(), 1, "{:?}", problems(&tab));

    let mut doc = with(base(), "services[gateway].steps[0].call", json!("run"));
    doc = with(doc, "services[B].name", json!("run"));
    doc = with(doc, "workloads[users].name", json!("run"));
    let reserved = "the name \"run\" is reserved: it stands for the run's own figures in summary.tidy.csv and timeseries.tidy.csv.gz";
    assert_eq!(
        problems(&doc),
        vec![
            format!("services[1].name: {reserved}"),
            format!("workloads[0].name: {reserved}"),
        ]
    );
    // A class is no entity of the tidy files: `run` is a class like another.
    let class = with(base(), "workloads[users].class", json!("run"));
    assert_eq!(problems(&class), Vec::<String>::new());
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
fn retry_budget_problems_name_their_paths() {
    let retry = |budget: Value| {
        with(
            base(),
            "services[gateway].steps[0].retry",
            json!({"max_attempts": 3, "budget": budget}),
        )
    };
    let at = "services[0].steps[0].retry.budget";
    let doc = retry(json!({"kind": "retry_circuit_breaker", "max_failure_rate": 1.5, "window": 0}));
    assert_eq!(
        problems(&doc),
        [
            format!("{at}.max_failure_rate: expected a probability in [0, 1], got 1.5"),
            format!("{at}.window: expected at least 1 attempt, got 0"),
        ]
    );
    let doc = retry(json!({"kind": "retry_circuit_breaker", "max_failure_rate": -0.1}));
    assert_eq!(
        problems(&doc),
        [format!(
            "{at}.max_failure_rate: expected a probability in [0, 1], got -0.1"
        )]
    );
    // Its defaults are valid: Brooker's 10% over 100 attempts.
    assert!(problems(&retry(json!({"kind": "retry_circuit_breaker"}))).is_empty());
    let doc = retry(json!({"kind": "retry_circuit_breaker", "threshold": 0.1}));
    let p = problems(&doc);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].starts_with(&format!("{at}.threshold: unknown field")),
        "{p:?}"
    );
}

#[test]
fn a_hedge_names_an_unknown_non_fatal_outcome() {
    let doc = with(base(), "services[gateway].steps[0].idempotent", json!(true));
    let doc = with(
        doc,
        "services[gateway].steps[0].hedge",
        json!({"delay_ms": 5, "non_fatal": ["timeout", "unavailable"]}),
    );
    let p = problems(&doc);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].starts_with("services[0].steps[0].hedge.non_fatal[1]:"),
        "{p:?}"
    );
    let doc = with(doc, "services[gateway].steps[0].hedge.non_fatal", json!([]));
    assert!(problems(&doc).is_empty());
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

/// A horizon whose time series would hold more than ten million rows (one per
/// bucket, and one per service and per workload and bucket) is refused with
/// the limit named, before any run fills them.
#[test]
fn too_many_time_series_buckets_are_refused() {
    let services = base()["services"].as_array().unwrap().len() as f64;
    let workloads = base()["workloads"].as_array().unwrap().len() as f64;
    // Exactly the limit in 1 s buckets, then one bucket more.
    let at_limit = (1e7 / (1.0 + services + workloads)).floor();
    let doc = with(base(), "horizon_s", json!(at_limit));
    assert_eq!(
        problems(&doc),
        Vec::<String>::new(),
        "{at_limit} s is within"
    );
    let doc = with(base(), "horizon_s", json!(at_limit + 1.0));
    let p = problems(&doc);
    assert!(
        p.iter()
            .any(|x| x.starts_with("timeseries.bucket_s: the horizon holds")
                && x.contains("at most 1e7")),
        "{p:?}"
    );
    let doc = with(base(), "horizon_s", json!(1e7));
    let doc = with(doc, "timeseries", json!({"bucket_s": 0.1}));
    assert!(!problems(&doc).is_empty());
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

/// What holds for the whole run (its seed, limits, horizon, time-series
/// bucket, recovery analysis and focus) is read once: a timeline may not set
/// it halfway, where a run from zero ignored the change and a forked run's
/// loop followed it (a raised `limits.max_events` also let a message
/// delivered at once pass the limit the loop kept). A variant may set it.
#[test]
fn a_timeline_cannot_set_what_holds_for_the_whole_run() {
    let change = |path: &str, value: Value| {
        with(
            base(),
            "timeline",
            json!([{"name": "late", "at_s": 1, "set": {path: value}}]),
        )
    };
    for (path, value, setting) in [
        ("seed", json!(7), "seed"),
        ("limits.max_events", json!(100_000_000), "limits"),
        ("horizon_s", json!(30), "horizon_s"),
        ("timeseries.bucket_s", json!(0.1), "timeseries"),
        (
            "metastability",
            json!({"baseline_from_s": 0}),
            "metastability",
        ),
        ("focus", json!("B"), "focus"),
    ] {
        let p = problems(&change(path, value.clone()));
        assert_eq!(
            p,
            [format!(
                "timeline[0] (\"late\"): a timeline change cannot set `{setting}`: it holds for the whole run (set it in the model, a variant or with --set)"
            )],
            "{path}"
        );
        let variant = with(
            base(),
            "variants",
            json!([{"name": "v", "set": {path: value}}]),
        );
        // (A recovery analysis also needs a trigger in the timeline.)
        let p = problems(&variant);
        assert!(!p.iter().any(|x| x.contains("cannot set")), "{path}: {p:?}");
    }
}

/// A service's `cpu`: at least one core, a whole number, no other field; a
/// timeline may change its cores but not add or remove the block.
#[test]
fn a_cpu_has_whole_cores_and_keeps_its_shape_over_a_timeline() {
    let cases = [
        (
            json!({"cores": 0}),
            "services[1].cpu.cores: expected at least 1 core, got 0",
        ),
        (
            json!({"cores": 1.5}),
            "services[1].cpu.cores: expected a whole number, got 1.5",
        ),
        (
            json!({"cores": -2}),
            "services[1].cpu.cores: expected a whole number ≥ 0, got -2",
        ),
        (json!({}), "services[1].cpu: missing field `cores`"),
        (
            json!({"cores": 2, "threads": 4}),
            "services[1].cpu.threads: unknown field `threads`, expected `cores`",
        ),
    ];
    for (cpu, expected) in cases {
        let p = problems(&with(base(), "services[B].cpu", cpu.clone()));
        assert!(p.iter().any(|x| x == expected), "{cpu}: {p:?}");
    }
    let with_cpu = with(base(), "services[B].cpu", json!({"cores": 2}));
    assert_eq!(problems(&with_cpu), Vec::<String>::new());
    let change = |doc: &Value, set: Value| {
        with(
            doc.clone(),
            "timeline",
            json!([{"name": "change", "at_s": 1, "set": set}]),
        )
    };
    let p = problems(&change(&with_cpu, json!({"services[B].cpu.cores": 1})));
    assert_eq!(p, Vec::<String>::new());
    let p = problems(&change(&with_cpu, json!({"services[B].cpu.cores": 0})));
    assert!(
        p.iter()
            .any(|x| x.contains("expected at least 1 core, got 0")),
        "{p:?}"
    );
    for (doc, set) in [
        (&base(), json!({"services[B].cpu": {"cores": 1}})),
        (&with_cpu, json!({"services[B].cpu": null})),
    ] {
        let p = problems(&change(doc, set));
        assert!(
            p.iter()
                .any(|x| x.contains("cannot add or remove the cpu of service \"B\"")),
            "{p:?}"
        );
    }
}

/// serde's messages name Rust types (`f64`, `u32`, `struct ModelSpec`); a
/// model's author reads JSON: every type error says what JSON value was
/// expected, then what was found, at its path.
#[test]
fn type_errors_are_in_json_words() {
    let mut doc = with(base(), "horizon_s", json!("60"));
    doc = with(doc, "services[B].queue_capacity", json!(-3));
    doc = with(doc, "services[gateway].workers", json!(10.0));
    doc = with(doc, "services[B].instances", json!(2.5));
    doc = with(doc, "workloads[users].requests", json!(1e20));
    doc = with(doc, "services[B].steps[0].work", json!(5));
    doc = with(
        doc,
        "hosts",
        json!({"zones": 5000000000u64, "per_zone": true}),
    );
    doc = with(doc, "limits", json!([]));
    let p = problems(&doc);
    for expected in [
        "horizon_s: expected a number, got the string \"60\"",
        "services[1].queue_capacity: expected a whole number ≥ 0, got -3",
        "services[0].workers: expected a whole number (no decimal point or exponent), got 10.0",
        "services[1].instances: expected a whole number, got 2.5",
        "workloads[0].requests: expected a whole number (no decimal point or exponent), got 1e+20",
        "services[1].steps[0].work: expected an object, got 5",
        "hosts.zones: expected a whole number ≤ 4294967295, got 5000000000",
        "limits: expected an object (fields by name, not by position), got an array",
    ] {
        assert!(
            p.iter().any(|x| x == expected),
            "{expected:?} not in {p:#?}"
        );
    }
    for x in &p {
        for rust in ["f64", "u32", "u64", "struct ", "sequence", "invalid type"] {
            assert!(!x.contains(rust), "{rust:?} in {x:?}");
        }
    }
}

/// The document as a whole is named, and every required field it lacks is
/// listed at once.
#[test]
fn a_top_level_problem_names_the_top_level_and_every_missing_field() {
    assert_eq!(
        problems_text("{}"),
        ["(top level): missing fields `name`, `workloads` and `services`"]
    );
    assert_eq!(
        problems(&json!({"name": "x", "services": []})),
        ["(top level): missing field `workloads`"]
    );
    let mut doc = base();
    doc["workloads"][0]
        .as_object_mut()
        .unwrap()
        .remove("target");
    doc["workloads"][0]
        .as_object_mut()
        .unwrap()
        .remove("arrival");
    assert_eq!(
        problems(&doc),
        ["workloads[0]: missing fields `target` and `arrival`"]
    );
    assert_eq!(
        problems(&json!([1, 2])),
        ["(top level): expected an object (fields by name, not by position), got an array"]
    );
}

/// serde_json's syntax message ends with the line and column the message
/// already starts with: they are said once.
#[test]
fn invalid_json_says_where_once() {
    assert_eq!(
        problems_text("{\"name\": \"x\", \n"),
        ["invalid JSON at line 2, column 0: EOF while parsing a value"]
    );
    assert_eq!(
        problems_text(""),
        ["invalid JSON at line 1, column 0: EOF while parsing a value"]
    );
    assert_eq!(
        problems_text("{\"name\": \"x\" \"b\": 1}"),
        ["invalid JSON at line 1, column 14: expected `,` or `}`"]
    );
}

/// A problem in what a variant's `set` entry wrote is named by that entry, its
/// key as written (and then the path inside the value it wrote); another
/// problem of the variant, by the variant and a path with names.
#[test]
fn variant_problems_are_named_by_the_set_entry_that_made_them() {
    let doc = with(
        base(),
        "variants",
        json!([
            {"name": "retry", "set": {"services[gateway].steps[B].retry": {"max_attempts": 0}}},
            {"name": "loop", "set": {"services[B].steps": [{"call": "gateway"}]}},
            {"name": "typo", "set": {"services[B].workrs": 2, "workloads[users].requests": -1}},
            {"name": "shards", "set": {"services[B].shards": 3}},
            {"name": "instances", "set": {"services[B].instances": 3}},
            {"name": "every", "set": {"services[*].workers": 0}},
            {"name": "slow", "set": {"services[B].steps[0].work.ms": "slow"}}
        ]),
    );
    let doc = with(doc, "services[B].instances", json!(4));
    let doc = with(doc, "services[B].shards", json!(2));
    assert_eq!(
        problems(&doc),
        [
            "variants[0].set[\"services[gateway].steps[B].retry\"].max_attempts: expected at least 1 attempt (the first one counts), got 0",
            "variants[1].set[\"services[B].steps\"][0].call: call cycle gateway -> B -> gateway",
            "variants[2].set[\"workloads[users].requests\"]: expected a whole number ≥ 0, got -1",
            "variants[2].set[\"services[B].workrs\"]: unknown field `workrs`, expected one of `name`, `workers`, `queue_capacity`, `queue_discipline`, `contention`, `cpu`, `default_deadline_ms`, `steps`, `admission`, `instances`, `instances_down`, `down_mode`, `shards`, `placement`, `replica_work_factor`, `clock_offset_ms`, `clock_spread_ms`",
            "variants[3].set[\"services[B].shards\"]: expected a divisor of `instances` (4), got 3",
            "variants[4] (\"instances\"): services[B].shards: expected a divisor of `instances` (3), got 2",
            "variants[5].set[\"services[*].workers\"] (at services[gateway].workers): expected at least 1 worker, got 0",
            "variants[5].set[\"services[*].workers\"] (at services[B].workers): expected at least 1 worker, got 0",
            "variants[6].set[\"services[B].steps[0].work.ms\"]: expected a number, got the string \"slow\"",
        ]
    );
}

/// Inside a policy or a distribution (`kind` names its form), serde reads the
/// fields from a buffer and says only the policy's path: the field is found
/// (an unknown key; the one field holding the wrong value), and each of its
/// wrong fields is reported.
#[test]
fn problems_inside_a_policy_name_the_field() {
    let mut doc = with(
        base(),
        "workloads[users].arrival",
        json!({"kind": "poisson", "rate_per_s": "x", "burst": 3}),
    );
    doc = with(
        doc,
        "services[B].steps[0].work",
        json!({"kind": "mixture", "of": [
            {"p": 0.5, "dist": {"kind": "constant", "ms": "slow"}},
            {"p": 0.5, "dist": {"kind": "constant", "ms": 1}}
        ]}),
    );
    doc = with(
        doc,
        "services[gateway].steps[B].retry",
        json!({"max_attempts": 2, "backoff": {"kind": "fixed", "ms": true, "extra": 1}, "jitter_factor": "x"}),
    );
    assert_eq!(
        problems(&doc),
        [
            "workloads[0].arrival.rate_per_s: expected a number, got the string \"x\"",
            "workloads[0].arrival.burst: unknown field `burst`, expected `rate_per_s`",
            "services[0].steps[0].retry.backoff.ms: expected a number, got true",
            "services[0].steps[0].retry.backoff.extra: unknown field `extra`, expected `ms`",
            // After the backoff, whose `ms` (required) was wrong, is taken out.
            "services[0].steps[0].retry.jitter_factor: expected a number, got the string \"x\"",
            "services[1].steps[0].work.of[0].dist.ms: expected a number, got the string \"slow\"",
        ]
    );
    // A field after a policy lacking a required field is read too.
    let doc = with(
        base(),
        "workloads[users].arrival",
        json!({"kind": "poisson"}),
    );
    let doc = with(doc, "workloads[users].requests", json!(2.5));
    assert_eq!(
        problems(&doc),
        [
            "workloads[0].arrival: missing field `rate_per_s`",
            "workloads[0].requests: expected a whole number, got 2.5",
        ]
    );
    // Where two fields hold the value serde names, the policy's path stands.
    let doc = with(
        base(),
        "services[B].steps[0].work",
        json!({"kind": "uniform", "min_ms": "a", "max_ms": "a"}),
    );
    assert_eq!(
        problems(&doc),
        ["services[1].steps[0].work: expected a number, got the string \"a\""]
    );
}

/// Every problem of every part is reported at once: all variants, the
/// timeline's paths beside the variants', several wrong fields of one object,
/// and a variant's own mistakes even where the base has some (without the
/// base's again).
#[test]
fn problems_of_every_part_come_out_together() {
    let mut doc = with(base(), "colour", json!("blue"));
    doc = with(doc, "horizon_s", json!("60"));
    doc = with(doc, "services[B].workrs", json!(1));
    doc = with(doc, "services[B].workers", json!(-1));
    doc = with(
        doc,
        "timeline",
        json!([{"at_s": 10, "set": {"services[gatewey].workers": 2}}]),
    );
    doc = with(
        doc,
        "variants",
        json!([
            {"name": "a", "set": {"services[C].workers": 2}},
            {"name": "b", "set": {"services[B].steps[0].work.ms": "slow", "services[Z].workers": 1}}
        ]),
    );
    let p = problems(&doc);
    assert_eq!(
        p,
        [
            "colour: unknown field `colour`, expected one of `$schema`, `name`, `description`, `seed`, `network`, `hosts`, `workloads`, `services`, `variants`, `limits`, `horizon_s`, `timeline`, `timeseries`, `focus`, `metastability`",
            "horizon_s: expected a number, got the string \"60\"",
            "services[1].workrs: unknown field `workrs`, expected one of `name`, `workers`, `queue_capacity`, `queue_discipline`, `contention`, `cpu`, `default_deadline_ms`, `steps`, `admission`, `instances`, `instances_down`, `down_mode`, `shards`, `placement`, `replica_work_factor`, `clock_offset_ms`, `clock_spread_ms`",
            "services[1].workers: expected a whole number ≥ 0, got -1",
            "timeline[0]: missing field `name`",
            "timeline[0].set[\"services[gatewey].workers\"]: services[gatewey].workers: no element named \"gatewey\"; the names here are: gateway, B",
            "variants[0].set[\"services[C].workers\"]: services[C].workers: no element named \"C\"; the names here are: gateway, B",
            "variants[1].set[\"services[Z].workers\"]: services[Z].workers: no element named \"Z\"; the names here are: gateway, B",
            "variants[1].set[\"services[B].steps[0].work.ms\"]: expected a number, got the string \"slow\"",
        ]
    );
    // A valid base: the timeline's paths and values beside the variants'.
    let doc = with(
        base(),
        "timeline",
        json!([
            {"name": "t", "at_s": 10, "set": {"services[gatewey].workers": 2}},
            {"name": "u", "at_s": 20, "set": {"services[B].workers": 0}}
        ]),
    );
    let doc = with(
        doc,
        "variants",
        json!([{"name": "a", "set": {"services[C].workers": 2}}, {"name": "b"}]),
    );
    assert_eq!(
        problems(&doc),
        [
            "timeline[0].set[\"services[gatewey].workers\"]: services[gatewey].workers: no element named \"gatewey\"; the names here are: gateway, B",
            "timeline[1].set[\"services[B].workers\"]: expected at least 1 worker, got 0",
            "variants[0].set[\"services[C].workers\"]: services[C].workers: no element named \"C\"; the names here are: gateway, B",
        ]
    );
}

/// `--set PATH=VALUE` overrides a parameter in every variant: applied again
/// after each variant's own `set`, it wins over a variant that sets the same
/// path (as a sweep's axes do).
#[test]
fn a_cli_set_wins_over_a_variant_setting_the_same_path() {
    let doc = with(
        base(),
        "variants",
        json!([
            {"name": "plain"},
            {"name": "more-workers", "set": {"services[B].workers": 8, "services[B].queue_capacity": 5}},
            {"name": "new-steps", "set": {"services[B].steps": [{"work": {"kind": "constant", "ms": 1}}]}}
        ]),
    );
    let sets = [
        ("services[B].workers".to_string(), json!(3)),
        ("services[B].steps[0].work.ms".to_string(), json!(7)),
    ];
    let loaded = load_model(&doc.to_string(), &sets, None).unwrap();
    assert_eq!(loaded.variants.len(), 3);
    let seven = with(base(), "services[B].steps[0].work.ms", json!(7));
    let seven = load_model(&seven.to_string(), &[], None).unwrap();
    let step_of_7_ms = format!("{:?}", seven.variants[0].model.services[1].steps[0]);
    for v in &loaded.variants {
        let b = &v.model.services[1];
        assert_eq!(b.workers, 3, "{}", v.name);
        assert_eq!(format!("{:?}", b.steps[0]), step_of_7_ms, "{}", v.name);
    }
    // What --set does not touch stays the variant's.
    assert_eq!(loaded.variants[1].model.services[1].queue_capacity, 5);
    // A --set that names nothing is reported once, at the base.
    let bad = [("services[Q].workers".to_string(), json!(3))];
    match load_model(&doc.to_string(), &bad, None) {
        Ok(_) => panic!("services[Q] names nothing"),
        Err(ModelError { problems }) => assert_eq!(
            problems.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
            ["--set services[Q].workers: services[Q].workers: no element named \"Q\"; the names here are: gateway, B"]
        ),
    }
    // A new element (`[+]`) is added once, not again in each variant.
    let add = [("services[+]".to_string(), json!({"name": "C", "steps": []}))];
    let loaded = load_model(&doc.to_string(), &add, None).unwrap();
    for v in &loaded.variants {
        assert_eq!(v.model.services.len(), 3, "{}", v.name);
    }
    // Each document gets each --set once: a rename applies in every variant
    // (a second application found no "B" to rename and failed every variant).
    let rename = [("services[B].name".to_string(), json!("Bee"))];
    let renamed = with(doc.clone(), "services[gateway].steps[0].call", json!("Bee"));
    let loaded = load_model(&renamed.to_string(), &rename, None).unwrap();
    for v in &loaded.variants {
        assert_eq!(v.model.services[1].name, "Bee", "{}", v.name);
    }
    // A --set of the variants themselves shapes them (it applies to the base
    // only: a variant's document has no `variants`).
    let shape = [(
        "variants[plain].set".to_string(),
        json!({"services[B].workers": 6}),
    )];
    let loaded = load_model(&doc.to_string(), &shape, None).unwrap();
    assert_eq!(loaded.variants[0].model.services[1].workers, 6);
}

/// Every timeline change is checked, also after one with a problem, and a
/// problem a change leaves in the document is not reported again by the
/// changes after it.
#[test]
fn every_timeline_change_is_checked_once() {
    let doc = with(
        base(),
        "timeline",
        json!([
            {"name": "zero", "at_s": 1, "set": {"services[B].workers": 0}},
            {"name": "later", "at_s": 2, "set": {"services[B].queue_capacity": 4}},
            {"name": "long", "at_s": 3, "over_s": 1e6, "set": {"services[B].workers": 2}},
            {"name": "longer", "at_s": 4, "over_s": 1e7, "set": {"services[B].workers": 2}},
            {"name": "ramp", "at_s": 5, "over_s": 2, "set": {"services[*].workers": "x"}},
            {"name": "shards", "at_s": 6, "set": {"services[B].instances": 3, "services[B].shards": 2}}
        ]),
    );
    assert_eq!(
        problems(&doc),
        [
            "timeline[0].set[\"services[B].workers\"]: expected at least 1 worker, got 0",
            "timeline[2].over_s: a ramp moves in steps of 1 s: at most 10000 s, got 1000000",
            "timeline[3].over_s: a ramp moves in steps of 1 s: at most 10000 s, got 10000000",
            "timeline[4].set[\"services[*].workers\"]: a ramp (`over_s`) needs numbers: the current value and the target",
            "timeline[5].set[\"services[B].shards\"]: expected a divisor of `instances` (3), got 2",
        ]
    );
    // A ramp's steps are named by the entry's path as written, and a `[*]` by
    // the element: the first step, from 1 worker halfway to -2 (-0.5, a
    // whole number of workers rounded to -1).
    let doc = with(base(), "services[*].workers", json!(1));
    let doc = with(
        doc,
        "timeline",
        json!([{"name": "drain", "at_s": 1, "over_s": 2, "set": {"services[*].workers": -2}}]),
    );
    assert_eq!(
        problems(&doc),
        [
            "timeline[0].set[\"services[*].workers\"] (at services[gateway].workers): expected a whole number ≥ 0, got -1",
            "timeline[0].set[\"services[*].workers\"] (at services[B].workers): expected a whole number ≥ 0, got -1",
        ]
    );
    // A problem the change does not write is named by the change, with names.
    let doc = with(base(), "services[B].instances", json!(4));
    let doc = with(doc, "services[B].shards", json!(2));
    let doc = with(
        doc,
        "timeline",
        json!([{"name": "scale-in", "at_s": 1, "set": {"services[B].instances": 3}}]),
    );
    assert_eq!(
        problems(&doc),
        ["timeline[0] (\"scale-in\"): services[B].shards: expected a divisor of `instances` (3), got 2"]
    );
}

/// A problem in a value is blamed on the override that wrote it last: a
/// variant's own `services[B].workers` (4, fine), then a `--set` of the whole
/// `services[B]` with 0 workers. The 0 is the `--set`'s, reported once at the
/// base, not the variant's (the longest path used to win the blame).
#[test]
fn a_problem_is_blamed_on_the_override_that_wrote_the_value() {
    let doc = with(
        base(),
        "variants",
        json!([{"name": "v", "set": {"services[B].workers": 4}}]),
    );
    let sets = [(
        "services[B]".to_string(),
        json!({"name": "B", "workers": 0, "steps": [{"work": {"kind": "constant", "ms": 5}}]}),
    )];
    let problems: Vec<String> = match load_model(&doc.to_string(), &sets, None) {
        Ok(_) => panic!("0 workers is refused"),
        Err(ModelError { problems }) => problems.iter().map(|p| p.to_string()).collect(),
    };
    assert!(
        problems
            .iter()
            .any(|p| p.contains("expected at least 1 worker, got 0")),
        "{problems:?}"
    );
    assert!(
        problems.iter().all(|p| !p.starts_with("variants[0]")),
        "{problems:?}"
    );
}

/// A parallel step's problems, all at once, each at its path: too few
/// branches, a branch that is not a call, `wait_for` beyond the branches or
/// beside optional branches, mixed contexts, policies on the step itself,
/// fields a branch cannot take, a bad deadline, and `optional` outside a
/// branch.
#[test]
fn parallel_step_problems_name_their_paths() {
    let mut doc = base();
    doc["services"][0]["steps"] = json!([
        {"parallel": {"branches": [{"call": "B"}]}},
        {"parallel": {"branches": [{"call": "B"}, {"work": {"kind": "constant", "ms": 1}}],
                      "wait_for": 3, "deadline_ms": -1}},
        {"parallel": {"branches": [{"call": "B", "optional": true}, {"call": "B", "context": "background"}],
                      "wait_for": 1},
         "timeout_ms": 5, "retry": {"max_attempts": 2}},
        {"parallel": {"branches": [{"call": "B", "fan_out": {}},
                                   {"call": "B", "optional": true, "cache": {"keys": 1, "ttl_ms": 1}}]}},
        {"parallel": {"branches": [{"call": "B", "optional": true}, {"call": "B", "optional": true}]}},
        {"call": "B", "optional": true}
    ]);
    let p = problems(&doc);
    let expect = [
        "services[0].steps[0].parallel.branches: expected 2 to 64 branches, got 1",
        "services[0].steps[1].parallel.branches[1]: expected a `call` step",
        "services[0].steps[1].parallel.wait_for: expected 1 to the 2 branches, got 3",
        "services[0].steps[1].parallel.deadline_ms: ",
        "services[0].steps[2].timeout_ms: a `parallel` step's policies go on each of its branches",
        "services[0].steps[2].retry: a `parallel` step's policies go on each of its branches",
        "services[0].steps[2].parallel.branches[1].context: every branch of a `parallel` step takes the same `context`",
        "services[0].steps[2].parallel.wait_for: with `wait_for` any branch may fail",
        "services[0].steps[3].parallel.branches[0].fan_out: a branch of a `parallel` step takes a call's policies but not this field",
        "services[0].steps[3].parallel.branches[1].cache: a branch of a `parallel` step",
        "services[0].steps[4].parallel.branches: every branch is `optional`",
        "services[0].steps[5].optional: only a branch of a `parallel` step takes this field",
    ];
    for e in expect {
        assert!(
            p.iter().any(|x| x.starts_with(e)),
            "missing {e:?} in {p:#?}"
        );
    }
    assert_eq!(p.len(), expect.len(), "{p:#?}");
}

/// A call cycle through a branch is named at each branch that closes it.
#[test]
fn a_call_cycle_through_a_parallel_branch_is_named_at_the_branch() {
    let mut doc = base();
    doc["services"][1]["steps"] = json!([
        {"parallel": {"branches": [{"call": "gateway"}, {"call": "gateway"}]}}
    ]);
    let p = problems(&doc);
    assert_eq!(
        p,
        [
            "services[1].steps[0].parallel.branches[0].call: call cycle gateway -> B -> gateway",
            "services[1].steps[0].parallel.branches[1].call: call cycle gateway -> B -> gateway"
        ]
    );
}

/// A fan-out's correlated slowdown takes a probability and a slowdown of at
/// least 1.
#[test]
fn correlated_slowdown_problems_name_their_paths() {
    let doc = with(
        base(),
        "services[gateway].steps[0].fan_out",
        json!({"correlated_slowdown": {"p": 1.5, "factor": 0.5}}),
    );
    assert_eq!(
        problems(&doc),
        [
            "services[0].steps[0].fan_out.correlated_slowdown.factor: expected a slowdown of at least 1, got 0.5",
            "services[0].steps[0].fan_out.correlated_slowdown.p: expected a probability in [0, 1], got 1.5"
        ]
    );
}

/// Load shapes are checked at their paths: a sinusoid that would go below
/// zero, a burst longer than its period, no stage, a negative rate, a trace
/// with no rate above zero.
#[test]
fn load_shape_problems_name_their_paths() {
    let arrival = |a: Value| {
        let doc = with(base(), "workloads[users].arrival", a);
        problems(&doc)
    };
    assert_eq!(
        arrival(json!({"kind": "sinusoid", "mean_rate_per_s": 10, "amplitude_rate_per_s": 20, "period_s": 60})),
        ["workloads[0].arrival.amplitude_rate_per_s: expected at most the mean rate (10), so that the rate stays above zero, got 20"]
    );
    assert_eq!(
        arrival(
            json!({"kind": "bursts", "base_rate_per_s": 1, "burst_rate_per_s": 10, "every_s": 5, "length_s": 6})
        ),
        ["workloads[0].arrival.length_s: expected at most `every_s` (5), got 6"]
    );
    let p = arrival(json!({"kind": "stages", "stages": []}));
    assert!(
        p.contains(&"workloads[0].arrival.stages: expected at least one stage".to_string()),
        "{p:?}"
    );
    let p =
        arrival(json!({"kind": "stages", "stages": [{"duration_s": 5, "target_rate_per_s": -1}]}));
    assert!(
        p[0].starts_with("workloads[0].arrival.stages[0].target_rate_per_s: "),
        "{p:?}"
    );
    assert_eq!(
        arrival(json!({"kind": "trace", "rates_per_s": [0, 0]})),
        ["workloads[0].arrival: expected a rate above zero somewhere"]
    );
}

#[test]
fn selecting_variants_keeps_the_models_order_or_names_the_unknown_ones() {
    let mut doc = base();
    doc["variants"] = json!([
        {"name": "a", "set": {}},
        {"name": "b", "set": {}},
        {"name": "c", "set": {}}
    ]);
    let loaded = load_model(&doc.to_string(), &[], None).expect("valid");
    let names = |m: &stormsim_model::LoadedModel| -> Vec<String> {
        m.variants.iter().map(|v| v.name.clone()).collect()
    };
    let mut chosen = loaded.clone();
    assert_eq!(chosen.select_variants(&["c".into(), "a".into()]), Ok(()));
    assert_eq!(names(&chosen), ["a", "c"]);
    let mut all = loaded.clone();
    assert_eq!(all.select_variants(&[]), Ok(()));
    assert_eq!(names(&all), ["a", "b", "c"]);
    let mut refused = loaded.clone();
    assert_eq!(
        refused.select_variants(&["a".into(), "x".into(), "y".into()]),
        Err("no variant named \"x\", \"y\"; the model's variants are: a, b, c".to_string())
    );
    assert_eq!(names(&refused), ["a", "b", "c"]);
}

#[test]
fn a_series_row_limit_outside_its_range_is_refused_at_its_path() {
    for rows in [0u64, 10_000_001] {
        let doc = with(base(), "limits", json!({"max_series_rows": rows}));
        let p = problems(&doc);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].starts_with("limits.max_series_rows: must be from 1 to 10000000"),
            "{p:?}"
        );
    }
    let doc = with(base(), "limits", json!({"max_series_rows": 10_000_000}));
    assert_eq!(problems(&doc), Vec::<String>::new());
}

#[test]
fn a_horizon_over_a_lowered_series_limit_is_refused_naming_the_limit() {
    // The base has 2 services and 1 workload: 4 rows a bucket, 100 buckets.
    let doc = with(base(), "horizon_s", json!(100));
    let doc = with(doc, "limits", json!({"max_series_rows": 399}));
    let p = problems(&doc);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].starts_with("timeseries.bucket_s:")
            && p[0].contains("at most 399 (limits.max_series_rows)"),
        "{p:?}"
    );
    let doc = with(doc, "limits", json!({"max_series_rows": 400}));
    assert_eq!(problems(&doc), Vec::<String>::new());
}

/// Validation counted a series row per workload copy where the series keeps
/// one for copies summed into one report: twenty summed clients made a
/// horizon that fits look twenty times too long.
#[test]
fn regression_copies_summed_into_one_report_are_one_series_row_a_bucket() {
    // 2 services and 1 reported workload (20 copies summed): 4 rows a
    // bucket, 100 buckets.
    let doc = with(base(), "horizon_s", json!(100));
    let doc = with(doc, "workloads[users].count", json!(20));
    let doc = with(doc, "workloads[users].report_copies", json!("summed"));
    let doc = with(doc, "limits", json!({"max_series_rows": 400}));
    assert_eq!(problems(&doc), Vec::<String>::new());
    let doc = with(doc, "limits", json!({"max_series_rows": 399}));
    let p = problems(&doc);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].contains("with 2 services and 1 workloads"), "{p:?}");
}
