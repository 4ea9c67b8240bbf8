//! Hostile input for the model parser and validator (issue #9, item 4): no
//! input makes `load_model` panic, hang or allocate without bound, and every
//! rejection says what is wrong, and where.
//!
//! Two property tests (arbitrary JSON documents; random overrides of a bundled
//! model) and hand-written edge cases: empty models, zero, huge and negative
//! numbers, self-calls, deep call chains, many variants, unicode names.
//! Truncations and byte flips of a valid model are in `bad_models.rs`.
//!
//! Inputs that could hang, exhaust memory or overflow the stack are loaded in
//! a child process ([`in_child_process`]) that is killed after a time budget,
//! so that such a bug fails one test instead of taking the test run down.

mod common;

use common::{base, with};
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, RngSeed};
use serde_json::{json, Map, Value};
use std::process::{Command, Stdio};
use std::sync::LazyLock;
use std::time::{Duration, Instant};
use stormsim_engine::SimDuration;
use stormsim_model::{
    load_model, Arrival, LoadedModel, ParamPath, Problem, Step, MAX_RAMP_S,
    MAX_TIMELINE_CHECKED_BYTES, MAX_TIMELINE_STEPS,
};

/// The bundled model the mutations start from.
const DEADLINE_CHAIN: &str = include_str!("../../../models/deadline-chain.json");
/// The format's JSON Schema: the source of real field names and `kind` values.
const SCHEMA: &str = include_str!("../../../docs/model.schema.json");

/// No single load may take longer than this (debug build), whatever its input:
/// a guard against hangs and super-linear blow-ups, not a speed measurement
/// (speed is measured by `stormsim bench`, not by tests). The slowest input
/// here, a 20,000-service call chain, loaded within the earlier 2 s budget in
/// every CI run until one where two other builds shared this 2-core machine
/// (2.26 s, a failure); a quadratic step on it would take minutes.
const LOAD_BUDGET: Duration = Duration::from_secs(10);

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// Loads `text` with `sets` as `--set` overrides, and checks that it took at
/// most [`LOAD_BUDGET`].
fn load_timed(text: &str, sets: &[(String, Value)]) -> Result<LoadedModel, Vec<Problem>> {
    let start = Instant::now();
    let result = load_model(text, sets, None).map_err(|e| e.problems);
    let took = start.elapsed();
    assert!(
        took <= LOAD_BUDGET,
        "loading took {took:?} (budget {LOAD_BUDGET:?}): {}",
        excerpt(text)
    );
    result
}

fn load(doc: &Value) -> Result<LoadedModel, Vec<Problem>> {
    load_timed(&doc.to_string(), &[])
}

/// The problems of a document, as `stormsim check` prints them.
fn problems(doc: &Value) -> Vec<String> {
    match load(doc) {
        Ok(_) => vec![],
        Err(problems) => problems.iter().map(Problem::to_string).collect(),
    }
}

fn accepted(doc: &Value) -> LoadedModel {
    load(doc).unwrap_or_else(|p| panic!("expected the model to load, got {p:#?}"))
}

fn excerpt(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(300).collect();
    if chars.next().is_some() {
        format!("{head}… ({} bytes)", text.len())
    } else {
        head
    }
}

/// The environment variable that tells a re-run of this binary it is the child.
const CHILD_ENV: &str = "STORMSIM_HOSTILE_INPUT_CHILD";

/// Runs `work` in a child process (this test binary, re-run on the test `test`
/// alone) and kills it once `budget` has passed, so that an input that hangs,
/// grows without bound or overflows the stack fails this test instead of
/// aborting the run or the machine. In the parent, returns how long the child
/// took; in the child, runs `work` and returns `None`.
fn in_child_process(
    test: &str,
    budget: Duration,
    work: impl FnOnce() + Send + 'static,
) -> Option<Duration> {
    if std::env::var(CHILD_ENV).as_deref() == Ok(test) {
        // The std default for spawned threads (and rayon's workers), whatever
        // RUST_MIN_STACK says.
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(work)
            .expect("a thread starts")
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
        return None;
    }
    let start = Instant::now();
    let mut child = Command::new(std::env::current_exe().expect("the test binary"))
        .args([test, "--exact", "--include-ignored", "--nocapture"])
        .env(CHILD_ENV, test)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the test binary runs");
    loop {
        if child
            .try_wait()
            .expect("the child can be waited for")
            .is_some()
        {
            let took = start.elapsed();
            let out = child.wait_with_output().expect("the child's output");
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && stdout.contains("1 passed"),
                "{test} failed in its child process ({}) after {took:?}:\n{}{stdout}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
            return Some(took);
        }
        if start.elapsed() > budget {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{test}: no answer after {budget:?} (killed)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

// ---------------------------------------------------------------------------
// Property tests
// ---------------------------------------------------------------------------

/// Every property name and every `const`/`enum` string of the schema.
struct Vocabulary {
    fields: Vec<String>,
    words: Vec<String>,
}

static VOCABULARY: LazyLock<Vocabulary> = LazyLock::new(|| {
    fn walk(v: &Value, fields: &mut Vec<String>, words: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                for (k, x) in map {
                    match (k.as_str(), x) {
                        ("properties", Value::Object(props)) => {
                            fields.extend(props.keys().cloned())
                        }
                        ("const", Value::String(s)) => words.push(s.clone()),
                        ("enum", Value::Array(xs)) => {
                            words.extend(xs.iter().filter_map(Value::as_str).map(String::from))
                        }
                        _ => {}
                    }
                    walk(x, fields, words);
                }
            }
            Value::Array(xs) => xs.iter().for_each(|x| walk(x, fields, words)),
            _ => {}
        }
    }
    let schema: Value = serde_json::from_str(SCHEMA).expect("the schema is JSON");
    let (mut fields, mut words) = (Vec::new(), Vec::new());
    walk(&schema, &mut fields, &mut words);
    for list in [&mut fields, &mut words] {
        list.sort();
        list.dedup();
    }
    assert!(fields.len() > 100, "too few field names: {fields:?}");
    // Names of the bundled model's parts, so that references can resolve.
    words.extend(["gateway", "A", "B", "users", "no-timeouts"].map(String::from));
    Vocabulary { fields, words }
});

/// Numbers at the edges: zero, negative zero, the extremes of f64, the
/// smallest subnormal, and the integer types' limits.
const EDGE_NUMBERS: &[f64] = &[
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    1e300,
    1e308,
    -1e308,
    f64::MAX,
    f64::MIN,
    f64::MIN_POSITIVE,
    5e-324,
    4294967295.0,
    4294967296.0,
    18446744073709551615.0,
    -9223372036854775808.0,
];

fn number(x: f64) -> Value {
    // JSON has no NaN or infinity: `Value::from` would make them null.
    assert!(x.is_finite());
    Value::from(x)
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (0u64..2000).prop_map(Value::from),
        prop::sample::select(EDGE_NUMBERS).prop_map(number),
        (-1e4f64..1e4).prop_map(number),
        any::<f64>()
            .prop_filter("JSON numbers are finite", |x| x.is_finite())
            .prop_map(number),
        any::<String>().prop_map(Value::String),
        prop::sample::select(VOCABULARY.words.clone()).prop_map(Value::String),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(VOCABULARY.fields.clone()),
        1 => any::<String>(),
    ]
}

/// Any JSON value, nested up to `depth` levels, with object keys mostly drawn
/// from the format's real field names.
fn json_value(depth: u32) -> impl Strategy<Value = Value> {
    leaf().prop_recursive(depth, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..8)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// A whole document: any value, or (more often) an object with model fields.
fn document() -> impl Strategy<Value = Value> {
    prop_oneof![
        1 => json_value(4),
        3 => prop::collection::vec((key(), json_value(4)), 0..12)
            .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
    ]
}

fn config(cases: u32) -> ProptestConfig {
    // A fixed seed keeps CI deterministic; PROPTEST_RNG_SEED and
    // PROPTEST_CASES override it for a longer local run.
    ProptestConfig {
        cases,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(9),
        ..ProptestConfig::default()
    }
}

/// The parameter paths of a document, by index and by name (not inside a
/// variant's `set`, whose keys are paths themselves).
#[derive(Default)]
struct ModelPaths {
    /// Every path.
    all: Vec<String>,
    /// Paths to numbers.
    numbers: Vec<String>,
    /// Paths to objects, to which a field can be added.
    objects: Vec<String>,
}

impl ModelPaths {
    fn collect(&mut self, v: &Value, path: &str) {
        if !path.is_empty() {
            self.all.push(path.to_string());
        }
        match v {
            Value::Number(_) => self.numbers.push(path.to_string()),
            Value::Object(map) => {
                if !path.is_empty() {
                    self.objects.push(path.to_string());
                }
                for (k, x) in map {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    if k == "set" {
                        self.all.push(p);
                    } else {
                        self.collect(x, &p);
                    }
                }
            }
            Value::Array(items) => {
                for (i, x) in items.iter().enumerate() {
                    self.collect(x, &format!("{path}[{i}]"));
                    let name = ["name", "call"]
                        .iter()
                        .find_map(|f| x.get(f).and_then(Value::as_str));
                    if let Some(name) = name {
                        self.collect(x, &format!("{path}[{name}]"));
                    }
                }
            }
            _ => {}
        }
    }
}

static MODEL_PATHS: LazyLock<ModelPaths> = LazyLock::new(|| {
    let mut paths = ModelPaths::default();
    paths.collect(&serde_json::from_str(DEADLINE_CHAIN).unwrap(), "");
    paths.all.extend(
        [
            "services[*].workers",
            "services[*].steps[*].timeout_ms",
            "services[*].steps[0]",
            "workloads[*]",
            "variants[+]",
            "timeline[+]",
            "services[+]",
        ]
        .map(String::from),
    );
    paths
});

fn numeric_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::sample::select(EDGE_NUMBERS).prop_map(number),
        (-1e4f64..1e4).prop_map(number),
        (0u64..2000).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
    ]
}

/// A value to set at a parameter path: mostly numbers (most parameters are),
/// else a word of the format, or any JSON value.
fn any_override_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => numeric_value(),
        2 => prop::sample::select(VOCABULARY.words.clone()).prop_map(Value::String),
        1 => any::<bool>().prop_map(Value::Bool),
        1 => Just(Value::Null),
        3 => json_value(3),
    ]
}

/// The format's fields that hold a duration, a rate or a count.
fn numeric_field() -> impl Strategy<Value = String> {
    let numeric: Vec<String> = VOCABULARY
        .fields
        .iter()
        .filter(|f| {
            [
                "_ms",
                "_s",
                "_per_s",
                "_percent",
                "_threshold",
                "_tokens",
                "_calls",
            ]
            .iter()
            .any(|end| f.ends_with(end))
                || [
                    "workers",
                    "instances",
                    "shards",
                    "requests",
                    "keys",
                    "window",
                ]
                .contains(&f.as_str())
        })
        .cloned()
        .collect();
    prop::sample::select(numeric)
}

/// One override: a number at a number's path or in a numeric field added to
/// one of the model's objects (to reach the checks of meaning), anything at
/// any of the model's paths, anything in any field added to one of its
/// objects, or anything at any text at all (which `ParamPath::parse` must
/// take).
fn one_override() -> impl Strategy<Value = (String, Value)> {
    let paths = &*MODEL_PATHS;
    prop_oneof![
        4 => (prop::sample::select(paths.numbers.clone()), numeric_value()),
        3 => (prop::sample::select(paths.all.clone()), any_override_value()),
        3 => (prop::sample::select(paths.objects.clone()), numeric_field(), numeric_value())
            .prop_map(|(p, k, v)| (format!("{p}.{k}"), v)),
        2 => (prop::sample::select(paths.objects.clone()), key(), any_override_value())
            .prop_map(|(p, k, v)| (format!("{p}.{k}"), v)),
        1 => (
            prop_oneof![any::<String>(), "[a-z_\\[\\]\\.\\*\\+0-9]{0,24}"],
            any_override_value()
        ),
    ]
}

/// How an override reaches the model.
#[derive(Clone, Copy, Debug)]
enum Channel {
    /// Edited into the document before loading.
    Document,
    /// `stormsim run --set PATH=VALUE`.
    CommandLine,
    /// A new variant's `set`.
    Variant,
}

fn channel() -> impl Strategy<Value = Channel> {
    prop_oneof![
        Just(Channel::Document),
        Just(Channel::CommandLine),
        Just(Channel::Variant)
    ]
}

/// Every rejection has at least one problem, and each says what is wrong.
fn assert_explained(result: &Result<LoadedModel, Vec<Problem>>) -> Result<(), TestCaseError> {
    if let Err(problems) = result {
        prop_assert!(!problems.is_empty(), "a rejection without a problem");
        for p in problems {
            prop_assert!(
                !p.message.trim().is_empty(),
                "a problem without a message: {p:?}"
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(4096))]

    /// (a) Any JSON document: an error (or a model), never a panic, and every
    /// problem has a message.
    #[test]
    fn any_json_document_is_rejected_cleanly(doc in document()) {
        let text = doc.to_string();
        let result = load_timed(&text, &[]);
        assert_explained(&result)?;
    }

    /// (b) A valid bundled model with random values at random parameter paths,
    /// through each channel an override can take: never a panic, and every
    /// problem names the JSON path it is about.
    #[test]
    fn random_overrides_of_a_bundled_model_name_their_paths(
        overrides in prop::collection::vec(one_override(), 1..4),
        channel in channel(),
    ) {
        let mut doc: Value = serde_json::from_str(DEADLINE_CHAIN).unwrap();
        let mut sets = Vec::new();
        match channel {
            Channel::Document => {
                for (path, value) in &overrides {
                    // A path that does not parse or does not exist changes
                    // nothing here; through the other channels it is an error.
                    if let Ok(p) = ParamPath::parse(path) {
                        let _ = p.set(&mut doc, value.clone());
                    }
                }
            }
            Channel::CommandLine => sets = overrides.clone(),
            Channel::Variant => {
                let set: Map<String, Value> = overrides.iter().cloned().collect();
                doc["variants"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"name": "mutant", "set": set}));
            }
        }
        let result = load_timed(&doc.to_string(), &sets);
        assert_explained(&result)?;
        if let Err(problems) = &result {
            for p in problems {
                prop_assert!(!p.path.is_empty(), "a problem without a path: {p:?}");
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Edge cases by hand
// ---------------------------------------------------------------------------

#[test]
fn empty_and_non_object_documents_are_rejected() {
    // A missing top-level field belongs to the whole document, the top level;
    // every one missing is named.
    assert_eq!(
        problems(&json!({})),
        vec!["(top level): missing fields `name`, `workloads` and `services`"]
    );
    assert_eq!(
        problems(&json!({"name": "x"})),
        vec!["(top level): missing fields `workloads` and `services`"]
    );
    for (doc, expected) in [
        (json!(null), "(top level): expected an object, got null"),
        (
            json!("model"),
            "(top level): expected an object, got the string \"model\"",
        ),
        (json!(0), "(top level): expected an object, got 0"),
    ] {
        assert_eq!(problems(&doc), vec![expected], "{doc}");
    }
    // (An array is refused: see `objects_written_as_arrays_are_rejected`.)
    let p = load(&json!([])).expect_err("[]");
    assert!(p.len() == 1 && p[0].path == "(top level)" && !p[0].message.is_empty());
    // A byte-order mark is skipped (issue 17), so one alone is an empty file,
    // and a second one is not JSON.
    for text in [
        "",
        " ",
        "\u{feff}",
        "\u{feff}\u{feff}{}",
        "{}{}",
        "{\"name\": \"x\"",
    ] {
        let p = load_timed(text, &[]).expect_err(text);
        assert_eq!(p.len(), 1, "{text:?}: {p:?}");
        assert!(p[0].path.is_empty(), "{p:?}");
        assert!(p[0].message.starts_with("invalid JSON at line "), "{p:?}");
    }
}

#[test]
fn empty_workloads_and_services_are_rejected() {
    let doc = json!({"name": "x", "workloads": [], "services": []});
    assert_eq!(
        problems(&doc),
        vec![
            "services: expected at least one service",
            "workloads: expected at least one workload",
        ]
    );
    // A service without steps does nothing, and is allowed.
    let doc = with(base(), "services[B].steps", json!([]));
    accepted(&doc);
}

#[test]
fn zero_rates_are_rejected_at_their_path() {
    let doc = with(
        base(),
        "workloads[users].arrival",
        json!({"kind": "constant", "rate_per_s": 0}),
    );
    assert_eq!(
        problems(&doc),
        vec!["workloads[0].arrival.rate_per_s: expected a positive number, got 0"]
    );
    let doc = with(base(), "workloads[users].arrival.rate_per_s", json!(-0.0));
    assert_eq!(
        problems(&doc),
        vec!["workloads[0].arrival.rate_per_s: expected a positive number, got -0"]
    );
    let doc = with(
        base(),
        "services[gateway].steps[B].rate_limit",
        json!({"kind": "token_bucket", "rate_per_s": 0, "burst": 0}),
    );
    assert_eq!(
        problems(&doc),
        vec![
            "services[0].steps[0].rate_limit.rate_per_s: expected a positive number, got 0",
            "services[0].steps[0].rate_limit.burst: expected at least 1, got 0",
        ]
    );
}

#[test]
fn huge_and_tiny_rates_are_accepted() {
    for rate in [1e300, 1e308, f64::MAX] {
        for kind in ["poisson", "constant"] {
            let doc = with(
                base(),
                "workloads[users].arrival",
                json!({"kind": kind, "rate_per_s": rate}),
            );
            let model = &accepted(&doc).variants[0].model;
            match model.workloads[0].arrival {
                Arrival::Poisson { mean_gap_ns } => {
                    assert!(
                        mean_gap_ns > 0.0 && mean_gap_ns.is_finite(),
                        "{mean_gap_ns}"
                    )
                }
                Arrival::Constant { rate_per_s } => assert_eq!(rate_per_s, rate),
                Arrival::AtOnce | Arrival::ClosedLoop { .. } | Arrival::Shaped(_) => unreachable!(),
            }
        }
    }
    // The smallest positive rate: a mean gap past f64's range, so never.
    let doc = with(base(), "workloads[users].arrival.rate_per_s", json!(5e-324));
    let model = &accepted(&doc).variants[0].model;
    assert!(
        matches!(model.workloads[0].arrival, Arrival::Poisson { mean_gap_ns } if mean_gap_ns == f64::INFINITY)
    );
}

#[test]
fn durations_of_1e308_are_accepted_as_forever() {
    let mut doc = base();
    for (path, value) in [
        ("workloads[users].duration_s", json!(1e308)),
        ("workloads[users].timeout_ms", json!(1e308)),
        ("workloads[users].deadline_ms", json!(f64::MAX)),
        ("services[gateway].steps[B].timeout_ms", json!(1e308)),
        ("services[B].steps[0].work.ms", json!(1e308)),
        ("horizon_s", json!(1e308)),
        ("timeseries.bucket_s", json!(1e308)),
    ] {
        doc = with(doc, path, value);
    }
    let model = &accepted(&doc).variants[0].model;
    let w = &model.workloads[0];
    assert_eq!(w.duration, Some(SimDuration::INFINITE));
    assert_eq!(w.deadline, Some(SimDuration::INFINITE));
    assert_eq!(w.edge.attempt_timeout, SimDuration::INFINITE);
    assert_eq!(model.horizon, Some(SimDuration::INFINITE));
    assert_eq!(model.bucket, SimDuration::INFINITE);
    let Step::Call(call) = &model.services[0].steps[0] else {
        panic!("a call")
    };
    assert_eq!(call.attempt_timeout, SimDuration::INFINITE);
    // Past f64's range, the number is not JSON serde can read: the whole
    // document is rejected, with a line and column.
    let text = base()
        .to_string()
        .replace("\"timeout_ms\":100", "\"timeout_ms\":1e309");
    let p = load_timed(&text, &[]).expect_err("1e309");
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].path.is_empty(), "{p:?}");
    assert!(
        p[0].message.starts_with("invalid JSON at line 1, column ")
            && p[0].message.contains("number out of range"),
        "{p:?}"
    );
}

#[test]
fn negative_durations_are_rejected_at_their_paths() {
    let mut doc = base();
    for (path, value) in [
        ("workloads[users].duration_s", json!(-1)),
        ("workloads[users].deadline_ms", json!(-0.0)),
        ("services[B].steps[0].work.ms", json!(-1e308)),
        (
            "network.one_way",
            json!({"kind": "uniform", "min_ms": -2, "max_ms": -1}),
        ),
        ("horizon_s", json!(-60)),
        ("timeseries.bucket_s", json!(-1)),
    ] {
        doc = with(doc, path, value);
    }
    assert_eq!(
        problems(&doc),
        vec![
            "network.one_way.min_ms: expected a number ≥ 0, got -2".to_string(),
            "network.one_way.max_ms: expected a number ≥ 0, got -1".to_string(),
            "workloads[0].duration_s: expected a positive number, got -1".to_string(),
            "workloads[0].deadline_ms: expected a positive number, got -0".to_string(),
            format!(
                "services[1].steps[0].work.ms: expected a number ≥ 0, got {}",
                -1e308
            ),
            "horizon_s: expected a positive number, got -60".to_string(),
            "timeseries.bucket_s: expected a positive number, got -1".to_string(),
        ]
    );
    // A timeline entry in the past.
    let doc = with(
        base(),
        "timeline",
        json!([{"name": "early", "at_s": -1, "set": {"services[B].workers": 2}}]),
    );
    assert_eq!(
        problems(&doc),
        vec!["timeline[0].at_s: expected a number ≥ 0, got -1"]
    );
}

#[test]
fn self_calls_are_cycles_wherever_they_come_from() {
    // The workload's own target calls itself.
    let doc = with(base(), "services[gateway].steps[B].call", json!("gateway"));
    assert_eq!(
        problems(&doc),
        vec!["services[0].steps[0].call: call cycle gateway -> gateway"]
    );
    // A variant makes B call itself: the problem is located in the variant.
    let doc = with(
        base(),
        "variants",
        json!([{"name": "as-is"}, {"name": "loop", "set": {"services[B].steps[0]": {"call": "B"}}}]),
    );
    assert_eq!(
        problems(&doc),
        vec!["variants[1].set[\"services[B].steps[0]\"].call: call cycle B -> B"]
    );
}

/// `n` services in a line, each calling the next.
fn call_chain(n: usize) -> Value {
    let mut services: Vec<Value> = (0..n - 1)
        .map(|i| json!({"name": format!("s{i}"), "steps": [{"call": format!("s{}", i + 1)}]}))
        .collect();
    services.push(
        json!({"name": format!("s{}", n - 1), "steps": [{"work": {"kind": "constant", "ms": 1}}]}),
    );
    json!({
        "name": "chain",
        "workloads": [{"name": "u", "target": "s0", "arrival": {"kind": "at_once"}, "requests": 1}],
        "services": services
    })
}

fn load_call_chain(n: usize) {
    let model = &accepted(&call_chain(n)).variants[0].model;
    assert_eq!(model.services.len(), n);
    // And closing the chain into a ring is found as one cycle, named in full.
    let doc = with(
        call_chain(n),
        &format!("services[s{}].steps[0]", n - 1),
        json!({"call": "s0"}),
    );
    let p = problems(&doc);
    assert_eq!(p.len(), 1);
    assert!(
        p[0].starts_with(&format!(
            "services[{}].steps[0].call: call cycle s0 -> s1 -> ",
            n - 1
        )) && p[0].ends_with(&format!("s{} -> s0", n - 1)),
        "{}",
        excerpt(&p[0])
    );
}

#[test]
fn deep_call_chains_load() {
    load_call_chain(500);
    // On a 2 MiB stack (the default of spawned threads), in a child process in
    // case it overflows.
    let took = in_child_process("deep_call_chains_load", Duration::from_secs(30), || {
        load_call_chain(5_000)
    });
    if let Some(took) = took {
        eprintln!("a 5,000-service call chain: {took:?} in a child process");
    }
}

/// The call-cycle search (`find_call_cycles` in `validate.rs`) keeps its own
/// stack: a chain of 20,000 services loads without overflowing the thread's
/// (it once recursed per service and aborted past about 8,000 on 2 MiB).
#[test]
fn very_deep_call_chains_load_without_overflowing_the_stack() {
    in_child_process(
        "very_deep_call_chains_load_without_overflowing_the_stack",
        Duration::from_secs(60),
        || load_call_chain(20_000),
    );
}

#[test]
fn a_few_hundred_variants_load() {
    let n = 300;
    let doc = with(
        base(),
        "variants",
        (0..n)
            .map(|i| json!({"name": format!("v{i}"), "set": {"services[B].steps[0].work.ms": i}}))
            .collect(),
    );
    let loaded = accepted(&doc);
    assert_eq!(loaded.variants.len(), n);
    assert_eq!(loaded.variants[n - 1].name, format!("v{}", n - 1));
}

/// Loads [`base`] with a value at a path in a child process killed after
/// `budget` (see [`in_child_process`]): the model must load, or be rejected,
/// in time.
fn load_in_child(test: &str, budget: Duration, (path, value): (&'static str, fn() -> Value)) {
    in_child_process(test, budget, move || {
        let doc = with(base(), path, value());
        if let Err(p) = load_model(&doc.to_string(), &[], None) {
            assert!(!p.problems.is_empty());
        }
    });
}

/// 10^6 variants are refused at once (at most `MAX_VARIANTS`, a sweep file
/// explores more), after the document is parsed once (about 3 s in a debug
/// build); each variant starts from the base without the variants, so loading
/// is linear in their number (it was quadratic: 2,000 took 6.7 s).
#[test]
fn a_million_variants_load_in_seconds() {
    load_in_child(
        "a_million_variants_load_in_seconds",
        Duration::from_secs(30),
        ("variants", || {
            (0..1_000_000)
                .map(|i| json!({"name": format!("v{i}")}))
                .collect()
        }),
    );
}

/// A ramp (`over_s`) is resolved into one checked model per second of ramp,
/// all kept, so its length is bounded (`MAX_RAMP_S`): `over_s: 1e308` is
/// refused at once (it once aborted on a 137 GB allocation).
#[test]
fn a_ramp_over_1e308_seconds_loads_in_bounded_time() {
    load_in_child(
        "a_ramp_over_1e308_seconds_loads_in_bounded_time",
        Duration::from_secs(5),
        ("timeline", || {
            json!([{"name": "r", "at_s": 1, "over_s": 1e308,
                    "set": {"services[B].steps[0].work.ms": 50}}])
        }),
    );
}

/// Ramps of the longest length, `n` of them.
fn long_ramps(n: usize) -> Value {
    (0..n)
        .map(|i| {
            json!({"name": format!("r{i}"), "at_s": 1, "over_s": MAX_RAMP_S,
                   "set": {"services[B].steps[0].work.ms": 5 + i}})
        })
        .collect()
}

fn too_many_steps(doc: &Value) -> Vec<Problem> {
    let Err(e) = load_model(&doc.to_string(), &[], None) else {
        panic!("loaded");
    };
    e.problems
        .into_iter()
        .filter(|p| p.message.starts_with("too many timeline steps"))
        .collect()
}

/// Every timeline step is a checked model held in memory, and nothing
/// bounded their number: 200,000 entries of a two-variant model (600,000
/// steps with the base's) took 78 s and 5.1 GB to check (31.6 s and 2.0 GB
/// once steps shared what they leave alone). More than `MAX_TIMELINE_STEPS`
/// in all are refused before any is built: here 60 ramps of 10,000 steps, in
/// a child process that must end in 20 s (resolving 50 such ramps took
/// 19.8 s in a release build, much longer in a test build).
#[test]
fn check_timeline_steps_are_bounded_before_they_are_built() {
    in_child_process(
        "check_timeline_steps_are_bounded_before_they_are_built",
        Duration::from_secs(20),
        || {
            let problems = too_many_steps(&with(base(), "timeline", long_ramps(60)));
            assert_eq!(problems.len(), 1, "{problems:?}");
            assert_eq!(problems[0].path, "timeline");
            assert!(
                problems[0].message.contains("at most 500000"),
                "{problems:?}"
            );
        },
    );
}

/// The bound counts the steps of the base and of every variant, and says so
/// once: 30 ramps (300,000 steps) pass in one document, not in the base and
/// its variants.
#[test]
fn timeline_steps_are_counted_over_every_variant() {
    let steps = |n: usize| long_ramps(n).as_array().unwrap().len() * MAX_RAMP_S as usize;
    assert!(steps(30) <= MAX_TIMELINE_STEPS && 2 * steps(30) > MAX_TIMELINE_STEPS);
    let doc = with(base(), "timeline", long_ramps(30));
    let doc = with(
        doc,
        "variants",
        json!([{"name": "a"}, {"name": "b"}, {"name": "c"}]),
    );
    let problems = too_many_steps(&doc);
    assert_eq!(problems.len(), 1, "{problems:?}");
}

/// Found by fuzzing extreme values: each timeline step is checked as a whole
/// model, so the time grows with the steps times the model's size, and the
/// bound on steps alone let a model of 101 services (32 KB) with five ramps
/// of 10,000 s (50,000 steps, a tenth of the bound) take 227 s to check.
/// The bytes of model the steps check are bounded too, before any is built:
/// here 50,000 steps of a 6.7 KB model (at most 37,970), while 2,000 pass.
#[test]
fn regression_timeline_steps_of_a_large_model_are_bounded_by_its_size() {
    let mut doc = base();
    let services = doc["services"].as_array_mut().unwrap();
    for i in 0..100 {
        services.push(json!({"name": format!("extra{i}"),
                             "steps": [{"work": {"kind": "constant", "ms": 5}}]}));
    }
    let ramps = |n: usize, over_s: f64| -> Value {
        (0..n)
            .map(|i| {
                json!({"name": format!("r{i}"), "at_s": 1, "over_s": over_s,
                       "set": {"services[B].steps[0].work.ms": 5 + i}})
            })
            .collect()
    };
    let problems = too_many_steps(&with(doc.clone(), "timeline", ramps(5, MAX_RAMP_S)));
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].message.starts_with(
            "too many timeline steps for a model this size: at least 50000, each a whole model of"
        ),
        "{problems:?}"
    );
    let bytes = serde_json::to_vec(&doc).unwrap().len();
    let most = MAX_TIMELINE_CHECKED_BYTES / bytes;
    assert!(
        (2_000..50_000).contains(&most),
        "{bytes} bytes: {most} steps"
    );
    load_model(
        &with(doc, "timeline", ramps(2, 1000.0)).to_string(),
        &[],
        None,
    )
    .expect("2,000 steps of this model pass");
}

/// Hosts are numbered `zone * per_zone + host` in `u32`; more than a million
/// hosts in all are refused, so 3 zones of 2^31 hosts cannot overflow it.
#[test]
fn huge_host_counts_are_rejected_or_accepted_without_overflow() {
    let doc = with(
        with(
            base(),
            "hosts",
            json!({"zones": 3, "per_zone": 2147483648u64}),
        ),
        "services[B].instances",
        json!(3),
    );
    let p = problems(&doc);
    assert!(
        p.iter().any(|x| x.starts_with("hosts: expected at most")),
        "{p:?}"
    );
}

/// serde's derived `Deserialize` also reads a struct from a JSON array of its
/// fields in declaration order (`"retry": [3]` would be `{"max_attempts": 3}`,
/// no field name checked). The format is objects only (docs/model-format.md):
/// `stormsim_model::strict` refuses arrays for every type.
#[test]
fn objects_written_as_arrays_are_rejected() {
    let doc = with(base(), "services[gateway].steps[B].retry", json!([3]));
    let p = problems(&doc);
    assert!(
        p.len() == 1 && p[0].starts_with("services[0].steps[0].retry: expected an object"),
        "{p:?}"
    );
    let mut fields: Vec<Value> = vec![
        json!("by-position"),
        json!(""),
        json!(1),
        json!({}),
        json!(null),
    ];
    fields.extend([base()["workloads"].clone(), base()["services"].clone()]);
    fields.extend([
        json!([]),
        json!({}),
        json!(null),
        json!([]),
        json!({}),
        json!(null),
        json!(null),
    ]);
    let p = problems(&Value::Array(fields));
    assert!(
        p.len() == 1 && p[0].starts_with("(top level): expected an object"),
        "{p:?}"
    );
}

/// The same refusal at any depth, for every array read as an object at once
/// (one problem per list element, as for any structural error), with its path.
#[test]
fn nested_objects_written_as_arrays_are_rejected_with_their_paths() {
    let mut doc = with(
        base(),
        "services[B].steps[0]",
        json!([{"kind": "constant", "ms": 5}]),
    );
    doc = with(doc, "workloads[users]", json!(["users", "gateway"]));
    doc = with(doc, "limits", json!([1000]));
    assert_eq!(
        problems(&doc),
        [
            "limits: expected an object (fields by name, not by position), got an array",
            "workloads[0]: expected an object (fields by name, not by position), got an array",
            "services[1].steps[0]: expected an object (fields by name, not by position), got an array",
        ]
    );
    // Through a variant's overrides, the path names the variant.
    let mut doc = base();
    doc["variants"] = json!([{"name": "v", "set": {"services[gateway].steps[B].retry": [3]}}]);
    assert_eq!(
        problems(&doc),
        ["variants[0].set[\"services[gateway].steps[B].retry\"]: expected an object (fields by name, not by position), got an array"]
    );
    // Arrays where the format has lists, and JSON values that are arrays, load.
    let mut doc = with(
        base(),
        "services[gateway].steps[B].retry",
        json!({"max_attempts": 3, "retry_on": ["timeout", "error"]}),
    );
    doc["variants"] =
        json!([{"name": "v", "set": {"services[gateway].steps[B].retry.retry_on": ["timeout"]}}]);
    accepted(&doc);
}

/// A policy (an internally tagged enum: `kind` names the form) written as an
/// array would be read by position, its tag first (`["fixed", 3]` as
/// `{"kind": "fixed", "ms": 3}`): refused with the same message, also where
/// the array would not even fit (no "invalid length" or "missing field" about
/// fields read by position).
#[test]
fn policies_written_as_arrays_are_rejected() {
    let retry = "services[gateway].steps[B].retry";
    for (path, value, reported_at) in [
        (
            retry,
            json!({"max_attempts": 2, "backoff": ["fixed", 3]}),
            "services[0].steps[0].retry.backoff",
        ),
        (
            retry,
            json!({"max_attempts": 2, "backoff": ["fixed"]}),
            "services[0].steps[0].retry.backoff",
        ),
        (
            retry,
            json!({"max_attempts": 2, "backoff": []}),
            "services[0].steps[0].retry.backoff",
        ),
        (
            "workloads[users].arrival",
            json!(["poisson", 10]),
            "workloads[0].arrival",
        ),
        (
            "workloads[users].arrival",
            json!(["at_once"]),
            "workloads[0].arrival",
        ),
        (
            "services[B].steps[0].work",
            json!(["constant", 5]),
            "services[1].steps[0].work",
        ),
    ] {
        assert_eq!(
            problems(&with(base(), path, value.clone())),
            [format!(
                "{reported_at}: expected an object (fields by name, not by position), got an array"
            )],
            "{path} = {value}"
        );
    }
}

/// Inside a policy, serde reads the fields from its own buffer, where no
/// deserializer can refuse an array; `strict` then checks what was read against
/// the input, and reports every array that became an object (a mixture's
/// components, a closed loop's think time). An array there that does not fit
/// by position is refused by serde itself, at the policy's path.
#[test]
fn objects_written_as_arrays_inside_policies_are_rejected() {
    let expected = "expected an object (fields by name, not by position), got an array";
    let mixture = json!({"kind": "mixture", "of": [
        [0.5, {"kind": "constant", "ms": 1}],
        {"p": 0.5, "dist": ["constant", 2]},
    ]});
    let mut doc = with(base(), "services[B].steps[0].work", mixture);
    doc = with(
        doc,
        "workloads[users].arrival",
        json!({"kind": "closed_loop", "users": 2, "think": ["exponential", 100]}),
    );
    assert_eq!(
        problems(&doc),
        [
            format!("workloads[0].arrival.think: {expected}"),
            format!("services[1].steps[0].work.of[0]: {expected}"),
            format!("services[1].steps[0].work.of[1].dist: {expected}"),
        ]
    );
    // A mixture in a mixture.
    let nested = json!({"kind": "mixture", "of": [
        {"p": 1, "dist": {"kind": "mixture", "of": [[1, {"kind": "constant", "ms": 1}]]}},
    ]});
    assert_eq!(
        problems(&with(base(), "services[B].steps[0].work", nested)),
        [format!(
            "services[1].steps[0].work.of[0].dist.of[0]: {expected}"
        )]
    );
    // Too short to be read by position: serde says so ("invalid length 1,
    // expected struct MixtureComponent with 2 elements") at the policy's path,
    // worded as the rest.
    let p = problems(&with(
        base(),
        "services[B].steps[0].work",
        json!({"kind": "mixture", "of": [[1]]}),
    ));
    assert_eq!(p, [format!("services[1].steps[0].work: {expected}")]);
}

#[test]
fn unicode_names_are_accepted_and_printed_as_written() {
    let doc = json!({
        "name": "модель-模型",
        "description": "Zürich → 東京 🚀",
        "workloads": [{"name": "usuários", "target": "網關",
                       "arrival": {"kind": "poisson", "rate_per_s": 10}, "requests": 10}],
        "services": [
            {"name": "網關", "steps": [{"call": "サービス🚀", "timeout_ms": 100}]},
            {"name": "サービス🚀", "steps": [{"work": {"kind": "constant", "ms": 5}}]}
        ],
        "variants": [
            {"name": "as-is"},
            {"name": "ünïcödé «quoted»", "set": {"services[網關].steps[サービス🚀].timeout_ms": 50}}
        ]
    });
    let loaded = accepted(&doc);
    assert_eq!(loaded.name, "модель-模型");
    assert_eq!(loaded.variants[1].name, "ünïcödé «quoted»");
    let model = &loaded.variants[1].model;
    assert_eq!(model.services[1].name, "サービス🚀");
    let Step::Call(call) = &model.services[0].steps[0] else {
        panic!("a call")
    };
    assert_eq!(call.attempt_timeout, SimDuration::from_ms(50.0));

    // Problems print the names as written (quotes escaped).
    let bad = with(
        doc.clone(),
        "services[網關].steps[0].call",
        json!("ghost👻"),
    );
    assert_eq!(
        problems(&bad),
        vec![
            "services[0].steps[0].call: unknown service \"ghost👻\"",
            // The variant's path named the step by the service it called.
            "variants[1].set[\"services[網關].steps[サービス🚀].timeout_ms\"]: services[網關].steps[サービス🚀].timeout_ms: no element named \"サービス🚀\"; the names here are: ghost👻",
        ]
    );
    let bad = with(
        doc.clone(),
        "variants[1].set",
        json!({"services[サービス🚀].workers": 0, "services[幽霊].workers": 1}),
    );
    assert_eq!(
        problems(&bad),
        vec![
            "variants[1].set[\"services[幽霊].workers\"]: services[幽霊].workers: no element named \"幽霊\"; the names here are: 網關, サービス🚀",
            "variants[1].set[\"services[サービス🚀].workers\"]: expected at least 1 worker, got 0",
        ]
    );
    let bad = with(
        doc,
        "variants[1].set",
        json!({"services[サービス🚀].workers": 0}),
    );
    assert_eq!(
        problems(&bad),
        vec![
            "variants[1].set[\"services[サービス🚀].workers\"]: expected at least 1 worker, got 0"
        ]
    );
    // A name with a quote, a newline and a control character is escaped.
    let odd = with(base(), "workloads[users].target", json!("a\"b\nc\u{7}"));
    assert_eq!(
        problems(&odd),
        vec!["workloads[0].target: unknown service \"a\\\"b\\nc\\u{7}\""]
    );
}

#[test]
fn duplicate_workload_and_variant_names_are_rejected() {
    // (Duplicate services are in bad_models.rs.)
    let doc = with(
        base(),
        "workloads[+]",
        json!({"name": "users", "target": "B", "arrival": {"kind": "at_once"}, "requests": 1}),
    );
    assert_eq!(
        problems(&doc),
        vec!["workloads[1].name: duplicate name \"users\" (also workloads[0])"]
    );
    let doc = with(
        base(),
        "variants",
        json!([{"name": "a"}, {"name": "b"}, {"name": "a"}, {"name": ""}]),
    );
    assert_eq!(
        problems(&doc),
        vec![
            "variants[2].name: duplicate name \"a\" (also variants[0])",
            "variants[3].name: expected a non-empty name",
        ]
    );
}

#[test]
fn a_variant_setting_an_unknown_path_is_rejected_at_its_set() {
    let doc = with(
        base(),
        "variants",
        json!([
            {"name": "ok"},
            {"name": "no-such-step", "set": {"services[gateway].steps[Z].timeout_ms": 5}},
            {"name": "no-such-field", "set": {"services[gateway].colour": "blue"}},
            {"name": "bad-path", "set": {"services[gateway": 1}},
            {"name": "out-of-range", "set": {"services[9].workers": 1}}
        ]),
    );
    let p = problems(&doc);
    let expected = [
        "variants[1].set[\"services[gateway].steps[Z].timeout_ms\"]: services[gateway].steps[Z].timeout_ms: no element named \"Z\"",
        "variants[2].set[\"services[gateway].colour\"]: unknown field `colour`",
        "variants[3].set[\"services[gateway\"]: parameter path \"services[gateway\": missing ']'",
        "variants[4].set[\"services[9].workers\"]: services[9].workers: index 9 out of range (the list has 2)",
    ];
    assert_eq!(p.len(), expected.len(), "{p:#?}");
    for (got, want) in p.iter().zip(expected) {
        assert!(
            got.starts_with(want),
            "{got:?} does not start with {want:?}"
        );
    }
}

/// Durations under the clock's step (1 ns) passed as "positive" and were 0 on
/// the clock: a think time and deadline of 1e-300 ms made a closed loop go
/// round at one instant until it held 8 GB; slow periods of 1e-300 s took
/// 10 s of wall time per simulated second; a 1e-300 ms timeout retried
/// forever at one instant (all found by fuzzing). Each is refused, at its path.
#[test]
fn sub_nanosecond_durations_are_refused() {
    let doc = json!({
        "name": "tiny", "horizon_s": 1,
        "hosts": {"zones": 1, "per_zone": 1,
                  "slow": {"mean_gap_s": 1e-300, "mean_length_s": 2e-10, "factor": 10}},
        "workloads": [{"name": "w", "target": "a", "duration_s": 1, "deadline_ms": 1e-300,
                       "arrival": {"kind": "closed_loop", "users": 1,
                                   "think": {"kind": "exponential", "mean_ms": 1e-7}}}],
        "services": [{"name": "a", "steps": [{"call": "b", "timeout_ms": 1e-300}]},
                     {"name": "b", "steps": [{"work": {"kind": "constant", "ms": 1}}]}]
    });
    let found = problems(&doc);
    for at in [
        "hosts.slow.mean_gap_s: expected at least 0.000000001 s (1 ns, the clock's step",
        "hosts.slow.mean_length_s: expected at least",
        "workloads[0].deadline_ms: expected at least 0.000001 ms",
        "workloads[0].arrival.think: expected a think time of at least 0.000001 ms on average",
        "services[0].steps[0].timeout_ms: expected at least 0.000001 ms",
    ] {
        assert!(
            found.iter().any(|p| p.starts_with(at)),
            "{at:?} not in {found:#?}"
        );
    }
    assert!(
        found.iter().any(|p| p.ends_with("got 1e-300")),
        "{found:#?}"
    );
    assert_eq!(found.len(), 5, "{found:#?}");
    // One nanosecond is the clock's step, and allowed.
    let mut ok = doc.clone();
    ok["hosts"]["slow"] = json!({"mean_gap_s": 1e-9, "mean_length_s": 1e-9, "factor": 10});
    ok["workloads"][0]["deadline_ms"] = json!(1e-6);
    ok["workloads"][0]["arrival"]["think"] = json!({"kind": "constant", "ms": 1e-6});
    ok["services"][0]["steps"][0]["timeout_ms"] = json!(1e-6);
    assert_eq!(problems(&ok), Vec::<String>::new());
}
