//! Hand-made span trees with known answers: own time with overlapping
//! calls, internal spans, calls without a CLIENT span, retries, errors,
//! spans left out (missing parents, clock skew), and bad input with every
//! problem at its path.

mod trace_common;

use serde_json::{json, Value};
use stormsim_import::{import, ImportError, Imported, Source};
use trace_common::service;

/// A span: (service, id, parent, kind, start ms, end ms, error).
type S = (&'static str, u64, u64, u8, f64, f64, bool);

const SERVER: u8 = 2;
const CLIENT: u8 = 3;
const INTERNAL: u8 = 1;
/// 1 s, so that traces are apart.
const T0: u64 = 1_700_000_000_000_000_000;

/// OTLP JSON, one line per trace: trace `t` starts `t` seconds after T0.
fn otlp(traces: &[Vec<S>]) -> String {
    let mut out = String::new();
    for (t, spans) in traces.iter().enumerate() {
        let base = T0 + t as u64 * 1_000_000_000;
        let mut services: Vec<&str> = Vec::new();
        for s in spans {
            if !services.contains(&s.0) {
                services.push(s.0);
            }
        }
        let resources: Vec<Value> = services
            .iter()
            .map(|&svc| {
                let mine: Vec<Value> = spans
                    .iter()
                    .filter(|s| s.0 == svc)
                    .map(|&(_, id, parent, kind, start, end, error)| {
                        json!({
                            "traceId": format!("{:032x}", t + 1),
                            "spanId": format!("{id:016x}"),
                            "parentSpanId": if parent == 0 { String::new() } else { format!("{parent:016x}") },
                            "name": "op",
                            "kind": kind,
                            "startTimeUnixNano": (base + (start * 1e6) as u64).to_string(),
                            "endTimeUnixNano": (base + (end * 1e6) as u64).to_string(),
                            "status": if error { json!({"code": 2}) } else { json!({}) }
                        })
                    })
                    .collect();
                json!({"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": svc}}]},
                       "scopeSpans": [{"scope": {"name": "t"}, "spans": mine}]})
            })
            .collect();
        out.push_str(&json!({ "resourceSpans": resources }).to_string());
        out.push('\n');
    }
    out
}

fn run(traces: &[Vec<S>]) -> Imported {
    match import(Source::Otlp, &[("t.jsonl".into(), otlp(traces))]) {
        Ok(i) => i,
        Err(ImportError::Invalid(p)) => panic!("{p:#?}"),
    }
}

fn work(model: &Value, name: &str) -> Value {
    service(model, name)["steps"][0]["work"].clone()
}

#[test]
fn own_time_is_the_span_less_the_union_of_its_calls_not_their_sum() {
    // A lasts 100 ms; its calls to B (10–50) and C (30–70) overlap: their
    // union is 60 ms, so A's own time is 40 ms (their sum would leave 20).
    // A's internal span (75–90) is A's own work, not a call.
    let tree = vec![
        ("A", 1, 0, SERVER, 0.0, 100.0, false),
        ("A", 2, 1, CLIENT, 10.0, 50.0, false),
        ("B", 3, 2, SERVER, 11.0, 49.0, false),
        ("A", 4, 1, CLIENT, 30.0, 70.0, false),
        ("C", 5, 4, SERVER, 31.0, 69.0, false),
        ("A", 6, 1, INTERNAL, 75.0, 90.0, false),
    ];
    let i = run(&[tree.clone(), tree]);
    assert_eq!(work(&i.model, "A"), json!({"kind": "constant", "ms": 40.0}));
    assert_eq!(work(&i.model, "B"), json!({"kind": "constant", "ms": 38.0}));
    assert_eq!(
        service(&i.model, "A")["steps"][1],
        json!({"parallel": {"branches": [{"call": "B"}, {"call": "C"}]}})
    );
    // The CLIENT spans last 2 ms longer than their SERVER children: 1 ms
    // each way.
    assert_eq!(
        i.model["network"]["one_way"],
        json!({"kind": "constant", "ms": 1.0})
    );
    assert!(i.unmapped.is_empty(), "{:#?}", i.unmapped);
}

#[test]
fn a_server_span_under_another_services_span_is_a_call_and_sequential_calls_keep_their_order() {
    // No CLIENT spans: C's and B's SERVER spans hang directly under A's
    // internal span, one after the other (C first).
    let tree = vec![
        ("A", 1, 0, SERVER, 0.0, 100.0, false),
        ("A", 2, 1, INTERNAL, 5.0, 95.0, false),
        ("C", 3, 2, SERVER, 10.0, 30.0, false),
        ("B", 4, 2, SERVER, 40.0, 60.0, false),
    ];
    let i = run(&[tree.clone(), tree.clone(), tree]);
    let steps = service(&i.model, "A")["steps"].as_array().unwrap().clone();
    assert_eq!(steps[1..], [json!({"call": "C"}), json!({"call": "B"})]);
    assert_eq!(work(&i.model, "A"), json!({"kind": "constant", "ms": 60.0}));
    // Services in order of first appearance; two requests a second.
    let names: Vec<&str> = i.model["services"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["A", "C", "B"]);
    assert_eq!(
        i.model["workloads"][0]["arrival"],
        json!({"kind": "poisson", "rate_per_s": 1.0})
    );
    assert!(
        i.notes.iter().any(|n| n.contains("Poisson is assumed")),
        "{:#?}",
        i.notes
    );
}

#[test]
fn attempts_after_failures_are_retries_with_their_policy() {
    // A calls B; the first attempts fail and B is tried again 5 ms later.
    // In the third trace every attempt fails, three of them: the limit.
    let attempts = |outcomes: &[bool]| {
        let mut t = vec![("A", 1, 0, SERVER, 0.0, 200.0, outcomes.iter().all(|&f| f))];
        for (k, &failed) in outcomes.iter().enumerate() {
            let start = 10.0 + 20.0 * k as f64;
            let id = 10 + 2 * k as u64;
            t.push(("A", id, 1, CLIENT, start, start + 15.0, failed));
            t.push(("B", id + 1, id, SERVER, start + 1.0, start + 14.0, failed));
        }
        t
    };
    let i = run(&[
        attempts(&[true, false]),
        attempts(&[false]),
        attempts(&[true, true, true]),
        attempts(&[false]),
    ]);
    let call = &service(&i.model, "A")["steps"][1];
    assert_eq!(
        call,
        &json!({"call": "B", "retry": {"max_attempts": 3, "backoff": {"kind": "fixed", "ms": 5.0}}})
    );
    assert!(
        i.notes
            .iter()
            .any(|n| n.starts_with("edge A → B: 2 of 4 calls retried")
                && n.contains("1 call(s) failed on all 3 attempts, so 3 is the limit")),
        "{:#?}",
        i.notes
    );
    // 7 attempts over 4 requests.
    assert!(
        i.notes
            .iter()
            .any(|n| n.starts_with("edge A → B: 1.750 calls per request")),
        "{:#?}",
        i.notes
    );
    // B failed 4 times of 7, by itself; A only after B did.
    assert_eq!(
        service(&i.model, "B")["steps"][0]["error"],
        json!({"p": 0.571429})
    );
    assert!(service(&i.model, "A")["steps"][0].get("error").is_none());
}

#[test]
fn errors_are_each_services_own_share() {
    // Ten requests: A fails by itself in two (its B call succeeded), and in
    // one more because B failed.
    let traces: Vec<Vec<S>> = (0..10)
        .map(|k| {
            let (a_fails, b_fails) = (k < 3, k == 2);
            vec![
                ("A", 1, 0, SERVER, 0.0, 30.0, a_fails),
                ("B", 2, 1, SERVER, 5.0, 25.0, b_fails),
            ]
        })
        .collect();
    let i = run(&traces);
    // 2 own failures among the 9 requests whose calls succeeded.
    assert_eq!(
        service(&i.model, "A")["steps"][0]["error"],
        json!({"p": 0.222222})
    );
    assert_eq!(
        service(&i.model, "B")["steps"][0]["error"],
        json!({"p": 0.1})
    );
}

#[test]
fn spans_that_cannot_be_placed_are_warned_about_and_skewed_ones_noted() {
    let i = run(&[
        // Whole.
        vec![
            ("A", 1, 0, SERVER, 0.0, 30.0, false),
            ("B", 2, 1, SERVER, 5.0, 25.0, false),
        ],
        // B's span outlasts A's by 5 ms: clock skew.
        vec![
            ("A", 1, 0, SERVER, 0.0, 30.0, false),
            ("B", 2, 1, SERVER, 10.0, 35.0, false),
        ],
        // A root, and a fragment whose parent (99) was never exported.
        vec![
            ("A", 1, 0, SERVER, 0.0, 30.0, false),
            ("B", 2, 99, SERVER, 5.0, 25.0, false),
        ],
    ]);
    let at = |path: &str| {
        i.unmapped
            .iter()
            .find(|u| u.path == path)
            .unwrap_or_else(|| panic!("{path}: {:#?}", i.unmapped))
    };
    assert!(at("line 3: resourceSpans[1].scopeSpans[0].spans[0]")
        .message
        .contains("not in the input"));
    // The skewed span is kept: a note counts it and says where it is.
    assert_eq!(i.unmapped.len(), 1);
    let cut = i
        .notes
        .iter()
        .find(|n| n.contains("partly outside their parent"))
        .expect("a note on the span cut to its parent");
    assert!(
        cut.starts_with("1 span(s)")
            && cut.contains("line 2: resourceSpans[1].scopeSpans[0].spans[0]"),
        "{cut}"
    );
    assert!(
        i.notes[0].contains("1 left out (1 parent not in the input)"),
        "{}",
        i.notes[0]
    );
    // The skewed call is cut to A's span: A's own time there is 10 ms.
    let own = work(&i.model, "A");
    assert_eq!(own["min_ms"], json!(10.0), "{own}");
}

#[test]
fn a_trace_whose_root_was_not_exported_starts_at_its_top_span() {
    // Every span of the trace sits under 99, a proxy that is not traced.
    let i = run(&[vec![
        ("A", 1, 99, SERVER, 0.0, 30.0, false),
        ("B", 2, 1, SERVER, 5.0, 25.0, false),
    ]]);
    assert_eq!(i.model["workloads"][0]["target"], "A");
    assert!(i.unmapped[0].message.contains("taken as a root"));
}

#[test]
fn bad_input_is_every_problem_at_its_path() {
    let good = otlp(&[vec![("A", 1, 0, SERVER, 0.0, 30.0, false)]]);
    let mut bad: Value = serde_json::from_str(good.trim()).unwrap();
    let span = &mut bad["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
    span["endTimeUnixNano"] = json!("1");
    span["spanId"] = json!("xyz!");
    let text = format!("{good}{bad}\n{{not json\n{{\"resourceSpans\": 3}}\n");
    let Err(ImportError::Invalid(problems)) = import(Source::Otlp, &[("bad.jsonl".into(), text)])
    else {
        panic!("bad input was accepted");
    };
    let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "line 2: resourceSpans[0].scopeSpans[0].spans[0].spanId",
            "line 2: resourceSpans[0].scopeSpans[0].spans[0].endTimeUnixNano",
            "line 3",
            "line 4: resourceSpans",
        ]
    );
    assert!(problems.iter().all(|p| p.file == "bad.jsonl"));

    let jaeger = r#"{"data": [{"traceID": "1", "spans": [{"traceID": "1", "spanID": "2", "startTime": "x", "duration": 5, "processID": "p9"}], "processes": {}}]}"#;
    let Err(ImportError::Invalid(problems)) =
        import(Source::Jaeger, &[("j.json".into(), jaeger.into())])
    else {
        panic!("bad input was accepted");
    };
    let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(
        paths,
        ["data[0].spans[0].startTime", "data[0].spans[0].processID"]
    );

    for (source, text) in [
        (Source::Otlp, ""),
        (Source::Jaeger, "[]"),
        (Source::Otlp, "[1, 2]"),
        (Source::Jaeger, "\"x\""),
    ] {
        assert!(
            matches!(import(source, &[("e".into(), text.into())]), Err(ImportError::Invalid(p)) if !p.is_empty()),
            "{text}"
        );
    }
}

#[test]
fn the_same_input_gives_the_same_model_and_notes() {
    let traces: Vec<Vec<S>> = (0..20)
        .map(|k| {
            let d = 10.0 + k as f64;
            vec![
                ("gateway", 1, 0, SERVER, 0.0, 3.0 * d, false),
                ("users", 2, 1, SERVER, 1.0, d, false),
                ("orders", 3, 1, SERVER, 1.0, d + 2.0, false),
                ("db", 4, 3, SERVER, 2.0, d, false),
            ]
        })
        .collect();
    let a = run(&traces);
    let b = run(&traces);
    assert_eq!(a.model, b.model);
    assert_eq!(a.notes, b.notes);
}

#[test]
fn the_bundled_samples_import() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/traces");
    let read = |f: &str| std::fs::read_to_string(format!("{data}/{f}")).unwrap();
    // Jaeger's own UI fixture: a repeated span id is left out, and service-x
    // calls service-y twice at once.
    let j = import(
        Source::Jaeger,
        &[("ui".into(), read("jaeger-ui-fixture.json"))],
    )
    .unwrap();
    assert_eq!(
        service(&j.model, "service-x")["steps"][1],
        json!({"parallel": {"branches": [{"call": "service-y"}, {"call": "service-y"}]}})
    );
    assert!(j
        .unmapped
        .iter()
        .any(|u| u.path == "spans[1]" && u.message.contains("read already")));
    // opentelemetry-proto's example: one SERVER span whose caller is not in
    // the file, named `my.service` (no '.' in a model's names).
    let o = import(
        Source::Otlp,
        &[("ex".into(), read("otlp-proto-example.json"))],
    )
    .unwrap();
    assert_eq!(o.model["services"][0]["name"], "my-service");
    assert_eq!(
        work(&o.model, "my-service"),
        json!({"kind": "constant", "ms": 1000.0})
    );
}
