//! A seeded mutation fuzzer for every importer. Each source's sample inputs
//! (`tests/data/`) are mutated byte by byte (flips, deletions, duplicated
//! runs, truncation, odd bytes and UTF-8), as trees (a key deleted, a value
//! of another type, negative, zero, huge or non-finite numbers, huge
//! durations, empty lists and maps, deep nesting, duplicated entries; for
//! traces, swapped span and parent ids that make cycles, missing, equal or
//! reversed start and end times), and joined by hand-written edge cases
//! (empty and scalar files, YAML anchor bombs and self-referencing aliases,
//! a resilience4j `baseConfig` loop, Envoy without routes or clusters, gRPC
//! `maxAttempts` 0, 1 and huge, one-span, all-error, hour-long and 10⁵-span
//! traces, Jaeger without processes).
//!
//! Every case must hold these properties:
//! - the import never panics (caught with `catch_unwind`; a stack overflow
//!   would abort the whole test binary instead, which fails it too);
//! - a failed import says why: at least one problem, each with a message;
//! - a whole model that an import writes loads as `stormsim check` loads it;
//! - a few trace-derived models also run, briefly, without panicking.
//!
//! Time per case is measured and the slowest are printed; with
//! `STORMSIM_FUZZ_MAX_CASE_MS` set, a slower case fails the run. The normal
//! run does `DEFAULT_CASES` mutations per source; `STORMSIM_FUZZ_CASES=N`
//! does `N` per source, and `STORMSIM_FUZZ_SEED` changes the seed. A failing
//! input is written to the test's temporary folder, named in the message.

use rand_core::Rng;
use rand_pcg::Pcg64Mcg;
use serde_json::{json, Value};
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};
use stormsim_import::{import, ImportError, Imported, Source};

/// Mutated inputs per source in the normal test run.
const DEFAULT_CASES: usize = 200;
const DEFAULT_SEED: u64 = 0x5354_4f52_4d46_555a;

// ---------------------------------------------------------------------
// Randomness
// ---------------------------------------------------------------------

struct Fuzz(Pcg64Mcg);

impl Fuzz {
    fn new(seed: u64, stream: u64) -> Fuzz {
        Fuzz(Pcg64Mcg::new(
            (u128::from(seed) << 64) | u128::from(stream.wrapping_mul(2).wrapping_add(1)),
        ))
    }

    fn below(&mut self, n: usize) -> usize {
        (self.0.next_u64() % n.max(1) as u64) as usize
    }

    fn percent(&mut self, p: u64) -> bool {
        self.0.next_u64() % 100 < p
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

// ---------------------------------------------------------------------
// Samples
// ---------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq)]
enum Format {
    /// YAML documents (written back as flow YAML, JSON's syntax after a
    /// comment, so that the YAML reader reads them).
    Yaml,
    /// One JSON document.
    Json,
    /// One JSON document per line (OTLP from the collector).
    JsonLines,
}

struct Sample {
    name: String,
    text: String,
    format: Format,
    docs: Vec<Value>,
}

fn data(path: &str) -> String {
    let path = format!("{}/tests/data/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn yaml_to_json(y: &saphyr::Yaml) -> Value {
    use saphyr::{Scalar, Yaml};
    match y {
        Yaml::Value(s) => match s {
            Scalar::Null => Value::Null,
            Scalar::Boolean(b) => json!(b),
            Scalar::Integer(i) => json!(i),
            Scalar::FloatingPoint(f) => json!(f.into_inner()),
            Scalar::String(s) => json!(s.to_string()),
        },
        Yaml::Representation(s, _, _) => json!(s.to_string()),
        Yaml::Sequence(items) => Value::Array(items.iter().map(yaml_to_json).collect()),
        Yaml::Mapping(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let key = match yaml_to_json(k) {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    (key, yaml_to_json(v))
                })
                .collect(),
        ),
        Yaml::Tagged(_, inner) => yaml_to_json(inner),
        _ => Value::Null,
    }
}

fn sample(name: &str, text: String, format: Format) -> Sample {
    use saphyr::LoadableYamlNode;
    let docs = match format {
        Format::Yaml => saphyr::Yaml::load_from_str(&text)
            .expect("the sample is YAML")
            .iter()
            .map(yaml_to_json)
            .collect(),
        Format::Json => vec![serde_json::from_str(&text).expect("the sample is JSON")],
        Format::JsonLines => text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).expect("each line is JSON"))
            .collect(),
    };
    Sample {
        name: name.to_string(),
        text,
        format,
        docs,
    }
}

fn samples(source: Source) -> Vec<Sample> {
    match source {
        Source::Envoy => vec![sample(
            "envoy-bootstrap.yaml",
            data("config/envoy-bootstrap.yaml"),
            Format::Yaml,
        )],
        Source::Istio => vec![sample(
            "istio.yaml",
            data("config/istio.yaml"),
            Format::Yaml,
        )],
        Source::Resilience4j => vec![sample(
            "application.yml",
            data("config/resilience4j-application.yml"),
            Format::Yaml,
        )],
        Source::Grpc => vec![sample(
            "service-config.json",
            data("config/grpc-service-config.json"),
            Format::Json,
        )],
        Source::Otlp => {
            // The first two requests of the shop's traces: enough spans for
            // every shape, small enough to import many times.
            let shop: String = data("traces/shop.otlp.jsonl")
                .lines()
                .take(2)
                .map(|l| format!("{l}\n"))
                .collect();
            vec![
                sample(
                    "example.json",
                    data("traces/otlp-proto-example.json"),
                    Format::Json,
                ),
                sample("shop.otlp.jsonl", shop, Format::JsonLines),
            ]
        }
        Source::Jaeger => {
            let mut shop: Value = serde_json::from_str(&data("traces/shop.jaeger.json")).unwrap();
            shop["data"].as_array_mut().unwrap().truncate(6);
            vec![
                sample(
                    "fixture.json",
                    data("traces/jaeger-ui-fixture.json"),
                    Format::Json,
                ),
                sample("shop.jaeger.json", shop.to_string(), Format::Json),
            ]
        }
    }
}

fn emit(docs: &[Value], format: Format, fz: &mut Fuzz) -> String {
    match format {
        Format::Yaml if docs.len() == 1 && fz.percent(30) => {
            serde_json::to_string_pretty(&docs[0]).unwrap()
        }
        Format::Yaml => {
            let parts: Vec<String> = docs.iter().map(Value::to_string).collect();
            format!("# fuzzed\n{}\n", parts.join("\n---\n"))
        }
        Format::Json if fz.percent(50) => serde_json::to_string_pretty(&docs[0]).unwrap(),
        Format::Json => docs[0].to_string(),
        Format::JsonLines => docs.iter().map(|d| format!("{d}\n")).collect(),
    }
}

// ---------------------------------------------------------------------
// Byte-level mutations
// ---------------------------------------------------------------------

const ODD: &[&str] = &[
    "\0",
    "\u{feff}",
    "\u{fffd}",
    "\u{10ffff}",
    "é",
    "𝄞",
    "\u{202e}",
    "\t",
    "\r",
    "\n",
    "\"",
    "'",
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    "- ",
    "&a ",
    "*a",
    "!!binary ",
    "!!int ",
    "<<: ",
    "%YAML 1.2\n",
    "---\n",
    "...\n",
    "? ",
    "|",
    ">",
    "#",
    "@",
    "`",
    "\\",
    "\\u0000",
    "\\ud800",
    "1e999",
    "-0",
    "NaN",
    ".inf",
    "0x10",
    "99999999999999999999",
];

fn mutate_bytes(text: &str, fz: &mut Fuzz) -> String {
    let mut b = text.as_bytes().to_vec();
    for _ in 0..1 + fz.below(3) {
        let len = b.len();
        match fz.below(6) {
            0 if len > 0 => {
                let i = fz.below(len);
                b[i] ^= 1 << fz.below(8);
            }
            1 if len > 0 => {
                let i = fz.below(len);
                let n = (1 + fz.below(16)).min(len - i);
                b.drain(i..i + n);
            }
            2 if len > 0 => {
                let i = fz.below(len);
                let n = (1 + fz.below(64)).min(len - i);
                let run: Vec<u8> = b[i..i + n].to_vec();
                let at = fz.below(len + 1);
                b.splice(at..at, run);
            }
            3 => b.truncate(fz.below(len + 1)),
            _ => {
                let at = fz.below(len + 1);
                let odd = fz.pick(ODD).as_bytes().to_vec();
                b.splice(at..at, odd);
            }
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

// ---------------------------------------------------------------------
// Tree-level mutations
// ---------------------------------------------------------------------

fn pointers(v: &Value, here: &str, out: &mut Vec<String>) {
    out.push(here.to_string());
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                let k = k.replace('~', "~0").replace('/', "~1");
                pointers(c, &format!("{here}/{k}"), out);
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                pointers(c, &format!("{here}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn weird_numbers() -> Vec<Value> {
    vec![
        json!(-1),
        json!(0),
        json!(1),
        json!(-0.0),
        json!(0.5),
        json!(-0.5),
        json!(1e-300),
        json!(1e308),
        json!(-1e308),
        json!(f64::MAX),
        json!(4294967295u64),
        json!(4294967296u64),
        json!(i64::MAX),
        json!(i64::MIN),
        json!(u64::MAX),
        json!(9007199254740993u64),
        json!("NaN"),
        json!("inf"),
        json!("-inf"),
        json!("1e999"),
        json!("-0"),
        json!(""),
    ]
}

fn weird_strings() -> Vec<Value> {
    vec![
        json!("1e308s"),
        json!("1e400s"),
        json!("-1s"),
        json!("0s"),
        json!("0.000000001s"),
        json!("99999999999999999999s"),
        json!("9223372036854775807s"),
        json!("1e308h"),
        json!("2562047h"),
        json!("9223372036854775807ms"),
        json!("-9223372036854775808"),
        json!("PT1e308S"),
        json!("P999999999999D"),
        json!("PT-1S"),
        json!("-PT1S"),
        json!("P"),
        json!("PT"),
        json!("1..5s"),
        json!("s"),
        json!("ms"),
        json!("NaNs"),
        json!("infs"),
        json!(""),
        json!(" "),
        json!("\u{0}"),
        json!("a.b,c[0]\"'"),
        json!("run"),
        json!("*"),
        json!("123"),
        json!("é".repeat(150)),
        json!("x".repeat(5000)),
        json!("ffffffffffffffffffffffffffffffff"),
        json!("00000000000000000000000000000000"),
        json!("AAAAAAAAAAA="),
        json!("////////////////////w=="),
    ]
}

fn weird_value(fz: &mut Fuzz) -> Value {
    match fz.below(4) {
        0 => fz.pick(&weird_numbers()).clone(),
        1 => fz.pick(&weird_strings()).clone(),
        2 => fz
            .pick(&[
                Value::Null,
                json!(true),
                json!(false),
                json!([]),
                json!({}),
                json!([null]),
                json!({"": null}),
                json!([[[]]]),
            ])
            .clone(),
        _ => fz
            .pick(&[json!(-1), json!(0), json!(1e308), json!("1e308s")])
            .clone(),
    }
}

fn nest(v: Value, depth: usize, list: bool) -> Value {
    let mut v = v;
    for _ in 0..depth {
        v = if list { json!([v]) } else { json!({ "a": v }) };
    }
    v
}

/// How deep `v` nests, without recursion.
fn depth_of(v: &Value) -> usize {
    let mut stack = vec![(v, 1)];
    let mut most = 0;
    while let Some((v, d)) = stack.pop() {
        most = most.max(d);
        match v {
            Value::Array(a) => stack.extend(a.iter().map(|c| (c, d + 1))),
            Value::Object(m) => stack.extend(m.values().map(|c| (c, d + 1))),
            _ => {}
        }
    }
    most
}

fn parent_of(pointer: &str) -> Option<(&str, String)> {
    let cut = pointer.rfind('/')?;
    let key = pointer[cut + 1..].replace("~1", "/").replace("~0", "~");
    Some((&pointer[..cut], key))
}

fn mutate_tree(doc: &mut Value, fz: &mut Fuzz) {
    let mut ps = Vec::new();
    pointers(doc, "", &mut ps);
    let p = fz.pick(&ps).clone();
    let other = fz.pick(&ps).clone();
    match fz.below(9) {
        // Delete a key or an element.
        0 => {
            if let Some((parent, key)) = parent_of(&p) {
                match doc.pointer_mut(parent) {
                    Some(Value::Object(m)) => {
                        m.shift_remove(&key);
                    }
                    Some(Value::Array(a)) => {
                        if let Ok(i) = key.parse::<usize>() {
                            if i < a.len() {
                                a.remove(i);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        // A value of another kind, or a number or string of the odd sort.
        1 | 2 => {
            let v = doc.pointer_mut(&p).unwrap();
            *v = match v {
                Value::Number(_) => fz.pick(&weird_numbers()).clone(),
                Value::String(_) if fz.percent(60) => fz.pick(&weird_strings()).clone(),
                _ => weird_value(fz),
            };
        }
        // Empty.
        3 => {
            let v = doc.pointer_mut(&p).unwrap();
            *v = match v {
                Value::Array(_) => json!({}),
                Value::Object(_) => json!([]),
                _ if fz.percent(50) => json!([]),
                _ => json!({}),
            };
            if fz.percent(50) {
                match v {
                    Value::Array(a) => a.clear(),
                    Value::Object(m) => m.clear(),
                    _ => {}
                }
            }
        }
        // Deep nesting.
        4 => {
            let depth = *fz.pick(&[3, 60, 126, 200, 2000]);
            // Nesting on nesting would overflow this test's own recursion
            // (writing, walking and dropping the tree).
            if depth_of(doc) + depth > 2100 {
                return;
            }
            let list = fz.percent(50);
            let v = doc.pointer_mut(&p).unwrap();
            *v = nest(v.take(), depth, list);
        }
        // A duplicated entry.
        5 => match doc.pointer_mut(&p).unwrap() {
            Value::Array(a) if !a.is_empty() => {
                let copies = *fz.pick(&[1, 2, 50]);
                let i = fz.below(a.len());
                for _ in 0..copies {
                    let e = a[i].clone();
                    a.push(e);
                }
            }
            Value::Object(m) if !m.is_empty() => {
                let (k, e) = m.iter().nth(fz.below(m.len())).unwrap();
                let (k, e) = (format!("{k}_"), e.clone());
                m.insert(k, e);
            }
            _ => {}
        },
        // Another part of the document grafted here.
        6 => {
            let graft = doc.pointer(&other).unwrap().clone();
            *doc.pointer_mut(&p).unwrap() = graft;
        }
        // A key renamed to another casing or spelling.
        7 => {
            if let Some((parent, key)) = parent_of(&p) {
                if let Some(Value::Object(m)) = doc.pointer_mut(parent) {
                    if let Some(v) = m.shift_remove(&key) {
                        let renamed = match fz.below(3) {
                            0 => key.to_uppercase(),
                            1 => key.replace('_', "-"),
                            _ => format!("{key}x"),
                        };
                        m.insert(renamed, v);
                    }
                }
            }
        }
        // Scalars negated or scaled.
        _ => {
            if let Some(v) = doc.pointer_mut(&p) {
                if let Some(n) = v.as_f64() {
                    *v = json!(n * *fz.pick(&[-1.0, 0.0, 1e6, 1e-6, 1e300]));
                }
            }
        }
    }
}

// ---------------------------------------------------------------------
// Span-level mutations (OTLP and Jaeger)
// ---------------------------------------------------------------------

fn span_pointers(v: &Value, here: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if m.contains_key("spanId")
                || m.contains_key("spanID") && !here.contains("/references/")
            {
                out.push(here.to_string());
            }
            for (k, c) in m {
                let k = k.replace('~', "~0").replace('/', "~1");
                span_pointers(c, &format!("{here}/{k}"), out);
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                span_pointers(c, &format!("{here}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn is_jaeger(span: &Value) -> bool {
    span.get("spanID").is_some()
}

fn span_id(span: &Value) -> Value {
    span.get("spanId")
        .or_else(|| span.get("spanID"))
        .cloned()
        .unwrap_or(Value::Null)
}

fn set_parent(span: &mut Value, parent: Value) {
    if is_jaeger(span) {
        let trace = span["traceID"].clone();
        span["references"] = json!([{"refType": "CHILD_OF", "traceID": trace, "spanID": parent}]);
    } else {
        span["parentSpanId"] = parent;
    }
}

fn parent_id(span: &Value) -> Value {
    if is_jaeger(span) {
        span.pointer("/references/0/spanID")
            .cloned()
            .unwrap_or(Value::Null)
    } else {
        span.get("parentSpanId").cloned().unwrap_or(Value::Null)
    }
}

fn mutate_spans(doc: &mut Value, fz: &mut Fuzz) {
    let mut ps = Vec::new();
    span_pointers(doc, "", &mut ps);
    if ps.is_empty() {
        return;
    }
    let a = fz.pick(&ps).clone();
    let b = fz.pick(&ps).clone();
    let (a_id, b_id) = (
        span_id(doc.pointer(&a).unwrap()),
        span_id(doc.pointer(&b).unwrap()),
    );
    let all = fz.percent(20);
    let targets: Vec<String> = if all { ps.clone() } else { vec![a.clone()] };
    match fz.below(12) {
        // Swap a span's id with another's parent id.
        0 => {
            let bp = parent_id(doc.pointer(&b).unwrap());
            let sa = doc.pointer_mut(&a).unwrap();
            let key = if is_jaeger(sa) { "spanID" } else { "spanId" };
            sa[key] = bp;
            set_parent(doc.pointer_mut(&b).unwrap(), a_id);
        }
        // Its own parent.
        1 => set_parent(doc.pointer_mut(&a).unwrap(), a_id),
        // A cycle of two.
        2 => {
            set_parent(doc.pointer_mut(&a).unwrap(), b_id);
            set_parent(doc.pointer_mut(&b).unwrap(), a_id);
        }
        // Every span's parent the next one: a cycle through all.
        3 => {
            let ids: Vec<Value> = ps
                .iter()
                .map(|p| span_id(doc.pointer(p).unwrap()))
                .collect();
            for (i, p) in ps.iter().enumerate() {
                let next = ids[(i + 1) % ids.len()].clone();
                set_parent(doc.pointer_mut(p).unwrap(), next);
            }
        }
        // A start or end missing.
        4 => {
            for t in &targets {
                let s = doc.pointer_mut(t).unwrap().as_object_mut().unwrap();
                let key = *fz.pick(&[
                    "startTimeUnixNano",
                    "endTimeUnixNano",
                    "startTime",
                    "duration",
                ]);
                s.shift_remove(key);
            }
        }
        // Start and end equal: zero-length spans.
        5 => {
            for t in &targets {
                let s = doc.pointer_mut(t).unwrap();
                if is_jaeger(s) {
                    s["duration"] = json!(0);
                } else {
                    s["endTimeUnixNano"] = s["startTimeUnixNano"].clone();
                }
            }
        }
        // The end before the start.
        6 => {
            for t in &targets {
                let s = doc.pointer_mut(t).unwrap();
                if is_jaeger(s) {
                    s["duration"] = json!(-5);
                } else {
                    let start = s["startTimeUnixNano"].clone();
                    s["startTimeUnixNano"] = s["endTimeUnixNano"].clone();
                    s["endTimeUnixNano"] = start;
                }
            }
        }
        // Times at the edges of what fits.
        7 => {
            let v = fz
                .pick(&[
                    json!(0),
                    json!(1),
                    json!(u64::MAX),
                    json!("18446744073709551615"),
                    json!(18446744073709551u64),
                    json!(9_223_372_036_854_775_807u64),
                    json!(1e19),
                    json!(-1),
                    json!("1e3"),
                ])
                .clone();
            for t in &targets {
                let s = doc.pointer_mut(t).unwrap();
                let key = if is_jaeger(s) {
                    *fz.pick(&["startTime", "duration"])
                } else {
                    *fz.pick(&["startTimeUnixNano", "endTimeUnixNano"])
                };
                s[key] = v.clone();
            }
        }
        // All in error.
        8 => {
            for t in &targets {
                let s = doc.pointer_mut(t).unwrap();
                if is_jaeger(s) {
                    let tags = s["tags"].as_array_mut();
                    if let Some(tags) = tags {
                        tags.push(json!({"key": "error", "type": "bool", "value": true}));
                    }
                } else {
                    s["status"] = json!({"code": 2});
                }
            }
        }
        // Another kind.
        9 => {
            let kind = fz
                .pick(&[
                    json!(0),
                    json!(1),
                    json!(2),
                    json!(3),
                    json!(4),
                    json!(5),
                    json!(6),
                    json!(-1),
                    json!("SPAN_KIND_PRODUCER"),
                    json!("bogus"),
                ])
                .clone();
            for t in &targets {
                let s = doc.pointer_mut(t).unwrap();
                if is_jaeger(s) {
                    s["tags"] = json!([{"key": "span.kind", "type": "string", "value": kind.as_str().unwrap_or("consumer")}]);
                } else {
                    s["kind"] = kind.clone();
                }
            }
        }
        // The same id as another span, or as no span.
        10 => {
            let s = doc.pointer_mut(&a).unwrap();
            let key = if is_jaeger(s) { "spanID" } else { "spanId" };
            s[key] = if fz.percent(50) {
                b_id
            } else {
                json!("0000000000000000")
            };
        }
        // Parents made roots.
        _ => {
            for t in &targets {
                set_parent(doc.pointer_mut(t).unwrap(), json!(""));
            }
        }
    }
}

// ---------------------------------------------------------------------
// The properties
// ---------------------------------------------------------------------

thread_local! {
    static GUARDED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Inside [`guarded`], keeps the message and place of a panic for the
/// report instead of printing it; elsewhere panics print as usual.
fn quiet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !GUARDED.with(std::cell::Cell::get) {
                return default(info);
            }
            let msg = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let place = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            PANIC.with(|p| *p.borrow_mut() = Some(format!("{msg} at {place}")));
        }));
    });
}

/// Runs `f`, a panic in it caught: `Err` with its message and place.
fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    GUARDED.with(|g| g.set(true));
    let result = catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(false));
    result.map_err(|_| PANIC.with(|p| p.borrow_mut().take()).unwrap_or_default())
}

fn file_name(source: Source) -> &'static str {
    match source {
        Source::Envoy => "envoy.yaml",
        Source::Istio => "istio.yaml",
        Source::Resilience4j => "application.yml",
        Source::Grpc => "service-config.json",
        Source::Otlp => "traces.otlp.jsonl",
        Source::Jaeger => "traces.jaeger.json",
    }
}

fn is_traces(source: Source) -> bool {
    matches!(source, Source::Otlp | Source::Jaeger)
}

#[derive(Default)]
struct Report {
    cases: usize,
    imported: usize,
    refused: usize,
    slowest: Vec<(Duration, String)>,
    failures: Vec<String>,
    /// Trace-derived models to run, with their case.
    to_run: Vec<(String, Value)>,
    ran: usize,
}

fn max_case_ms() -> Option<u128> {
    std::env::var("STORMSIM_FUZZ_MAX_CASE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
}

impl Report {
    fn fail(&mut self, source: Source, case: &str, text: &str, what: String) {
        let dir = format!("{}/fuzz-failures", env!("CARGO_TARGET_TMPDIR"));
        let _ = std::fs::create_dir_all(&dir);
        let path = format!("{dir}/{}-{}.txt", file_name(source), self.failures.len());
        let _ = std::fs::write(&path, text);
        self.failures
            .push(format!("{source:?} {case} ({path}): {what}"));
    }

    fn time(&mut self, took: Duration, source: Source, case: &str, text: &str) {
        self.slowest.push((took, format!("{source:?} {case}")));
        self.slowest.sort_by_key(|(d, _)| std::cmp::Reverse(*d));
        self.slowest.truncate(5);
        if let Some(max) = max_case_ms() {
            if took.as_millis() > max {
                self.fail(
                    source,
                    case,
                    text,
                    format!("took {} ms, more than {max}", took.as_millis()),
                );
            }
        }
    }

    /// Imports `text` and checks every property of one case.
    fn check(&mut self, source: Source, case: &str, text: &str) -> Option<Imported> {
        self.cases += 1;
        if std::env::var_os("STORMSIM_FUZZ_VERBOSE").is_some() {
            // The case being imported, kept should the process abort.
            eprintln!("{source:?} {case}");
            let _ = std::fs::write(
                format!("{}/fuzz-last-case.txt", env!("CARGO_TARGET_TMPDIR")),
                text,
            );
        }
        let inputs = [(file_name(source).to_string(), text.to_string())];
        let started = Instant::now();
        let result = guarded(|| import(source, &inputs));
        let imported = match result {
            Err(why) => {
                self.fail(source, case, text, format!("the import panicked: {why}"));
                None
            }
            Ok(Err(ImportError::Invalid(problems))) => {
                self.refused += 1;
                if problems.is_empty() {
                    self.fail(source, case, text, "refused with no problem".into());
                }
                if let Some(p) = problems.iter().find(|p| p.message.trim().is_empty()) {
                    self.fail(
                        source,
                        case,
                        text,
                        format!("a problem without a message: {p:?}"),
                    );
                }
                None
            }
            Ok(Ok(imported)) => {
                self.imported += 1;
                if let Some(u) = imported
                    .unmapped
                    .iter()
                    .find(|u| u.message.trim().is_empty())
                {
                    self.fail(
                        source,
                        case,
                        text,
                        format!("a warning without a message: {u:?}"),
                    );
                }
                if imported.whole_model {
                    let model = serde_json::to_string_pretty(&imported.model).unwrap();
                    let loaded =
                        guarded(|| stormsim_model::load_model(&model, &[], None).map(|_| ()));
                    match loaded {
                        Err(why) => {
                            self.fail(
                                source,
                                case,
                                text,
                                format!("loading the model panicked: {why}"),
                            );
                        }
                        Ok(Err(e)) => self.fail(
                            source,
                            case,
                            text,
                            format!("the imported model does not load: {e}"),
                        ),
                        Ok(Ok(())) => {}
                    }
                }
                Some(imported)
            }
        };
        // The import and the load of what it wrote.
        self.time(started.elapsed(), source, case, text);
        imported
    }

    /// Checks a case and keeps a trace-derived model to run, up to `keep`.
    fn check_and_keep(&mut self, source: Source, case: &str, text: &str, keep: usize) {
        if let Some(imported) = self.check(source, case, text) {
            if is_traces(source) && imported.whole_model && self.to_run.len() < keep {
                self.to_run
                    .push((format!("{source:?} {case}"), imported.model));
            }
        }
    }

    /// Runs each kept model for at most a few requests per workload and a
    /// few virtual seconds: a model the import wrote runs without panicking.
    fn run_kept(&mut self) {
        for (case, mut model) in std::mem::take(&mut self.to_run) {
            for w in model["workloads"].as_array_mut().into_iter().flatten() {
                w["requests"] = json!(50);
                let d = w["duration_s"].as_f64().unwrap_or(5.0).min(5.0);
                w["duration_s"] = json!(d);
            }
            model["horizon_s"] = json!(10.0);
            let text = model.to_string();
            let Ok(loaded) = stormsim_model::load_model(&text, &[], None) else {
                // Already reported by `check`.
                continue;
            };
            let started = Instant::now();
            let ran = guarded(|| stormsim_sim::run_variant(&loaded.variants[0]));
            if let Err(why) = ran {
                self.failures
                    .push(format!("{case}: running its model panicked: {why}\n{text}"));
            }
            self.ran += 1;
            let took = started.elapsed();
            self.slowest
                .push((took, format!("running the model of {case}")));
            self.slowest.sort_by_key(|(d, _)| std::cmp::Reverse(*d));
            self.slowest.truncate(5);
            if let Some(max) = max_case_ms() {
                if took.as_millis() > max {
                    self.failures.push(format!(
                        "{case}: running its model took {} ms",
                        took.as_millis()
                    ));
                }
            }
        }
    }

    fn finish(self, what: &str) {
        eprintln!(
            "{what}: {} cases, {} imported, {} refused, {} models run; slowest: {}",
            self.cases,
            self.imported,
            self.refused,
            self.ran,
            self.slowest
                .iter()
                .map(|(d, c)| format!("{} ms {c}", d.as_millis()))
                .collect::<Vec<_>>()
                .join("; ")
        );
        if !self.failures.is_empty() {
            let shown: Vec<&str> = self.failures.iter().take(30).map(String::as_str).collect();
            panic!(
                "{} of {} cases broke a property:\n{}",
                self.failures.len(),
                self.cases,
                shown.join("\n")
            );
        }
    }
}

fn cases_per_source() -> usize {
    std::env::var("STORMSIM_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_CASES)
}

fn seed() -> u64 {
    std::env::var("STORMSIM_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_SEED)
}

/// One mutated input of `samples`.
fn mutant(source: Source, samples: &[Sample], fz: &mut Fuzz) -> (String, String) {
    let s = fz.pick(samples);
    let how = fz.below(10);
    let mut label = format!("{} ", s.name);
    let text = if how < 3 {
        label.push_str("bytes");
        mutate_bytes(&s.text, fz)
    } else {
        let mut docs = s.docs.clone();
        for _ in 0..1 + fz.below(3) {
            let d = fz.below(docs.len());
            if is_traces(source) && fz.percent(50) {
                mutate_spans(&mut docs[d], fz);
            } else {
                mutate_tree(&mut docs[d], fz);
            }
        }
        let text = emit(&docs, s.format, fz);
        if how == 9 {
            label.push_str("tree+bytes");
            mutate_bytes(&text, fz)
        } else {
            label.push_str("tree");
            text
        }
    };
    (label, text)
}

fn fuzz(sources: &[Source], what: &str) {
    quiet_panics();
    let n = cases_per_source();
    let seed = seed();
    let mut report = Report::default();
    for (k, &source) in sources.iter().enumerate() {
        let samples = samples(source);
        for s in &samples {
            report.check_and_keep(source, &format!("{} as it is", s.name), &s.text, 4);
        }
        let mut fz = Fuzz::new(seed, k as u64);
        for i in 0..n {
            let (label, text) = mutant(source, &samples, &mut fz);
            // Models to run: a few per source, more in a longer run.
            let keep = report.to_run.len() + usize::from(i % 50 == 0);
            report.check_and_keep(source, &format!("#{i} (seed {seed}) {label}"), &text, keep);
        }
        report.run_kept();
    }
    report.finish(what);
}

#[test]
fn fuzz_configuration_importers() {
    fuzz(
        &[
            Source::Envoy,
            Source::Istio,
            Source::Resilience4j,
            Source::Grpc,
        ],
        "configuration",
    );
}

#[test]
fn fuzz_trace_importers() {
    fuzz(&[Source::Otlp, Source::Jaeger], "traces");
}

// ---------------------------------------------------------------------
// Hand-written edge cases
// ---------------------------------------------------------------------

const ALL: [Source; 6] = [
    Source::Envoy,
    Source::Istio,
    Source::Resilience4j,
    Source::Grpc,
    Source::Otlp,
    Source::Jaeger,
];

fn anchor_bomb() -> String {
    let mut s = String::from("a0: &a0 [\"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\"]\n");
    for i in 1..10 {
        let p = i - 1;
        s.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    s
}

fn common_cases() -> Vec<(String, String)> {
    let deep = |n: usize, open: &str, close: &str| format!("{}{}", open.repeat(n), close.repeat(n));
    let mut block = String::new();
    for i in 0..3000 {
        block.push_str(&" ".repeat(i));
        block.push_str("a:\n");
    }
    vec![
        ("empty".into(), String::new()),
        ("blank".into(), " \n\t\n".into()),
        ("null".into(), "null".into()),
        ("tilde".into(), "~".into()),
        ("a number".into(), "42".into()),
        ("a huge number".into(), "-1e999".into()),
        ("a string".into(), "\"text\"".into()),
        ("a bare word".into(), "envoy".into()),
        ("true".into(), "true".into()),
        ("an empty list".into(), "[]".into()),
        ("an empty map".into(), "{}".into()),
        ("a list of null".into(), "[null]".into()),
        ("a list of a list".into(), "[[]]".into()),
        ("a YAML list".into(), "- a\n- b\n".into()),
        ("empty documents".into(), "---\n---\n...\n".into()),
        ("a byte-order mark".into(), "\u{feff}".into()),
        ("a byte-order mark and {}".into(), "\u{feff}{}".into()),
        ("NUL bytes".into(), "\0\0\0".into()),
        ("replacement chars".into(), "\u{fffd}\u{fffd}".into()),
        ("an anchor bomb".into(), anchor_bomb()),
        ("a self-referencing alias".into(), "a: &a [*a]\n".into()),
        (
            "a self-referencing mapping".into(),
            "a: &a\n  b: *a\n".into(),
        ),
        ("a merge of itself".into(), "a: &a\n  <<: *a\n".into()),
        ("an unknown alias".into(), "a: *nope\n".into()),
        (
            "deep flow YAML lists".into(),
            format!("# deep\n{}", deep(100_000, "[", "]")),
        ),
        (
            "deep flow YAML maps".into(),
            format!("# deep\n{}", deep(100_000, "{a: ", "}")),
        ),
        ("deep JSON lists".into(), deep(100_000, "[", "]")),
        ("deep JSON maps".into(), deep(100_000, "{\"a\":", "}")),
        ("deep block YAML".into(), block),
        ("a duplicate YAML key".into(), "a: 1\na: 2\n".into()),
        ("a duplicate JSON key".into(), "{\"a\": 1, \"a\": 2}".into()),
        ("a tab-indented mapping".into(), "a:\n\tb: 1\n".into()),
        (
            "a YAML 1.1 directive".into(),
            "%YAML 1.1\n---\na: 1\n".into(),
        ),
        ("a binary tag".into(), "a: !!binary AAAA\n".into()),
        ("a bad int tag".into(), "a: !!int x\n".into()),
        ("a complex key".into(), "? [a, b]\n: 1\n".into()),
        ("an unterminated string".into(), "a: \"b\n".into()),
        ("a long line".into(), "a".repeat(1 << 20)),
        ("a long key".into(), format!("{}: 1\n", "k".repeat(1 << 16))),
    ]
}

fn grpc_with(retry: Value) -> String {
    json!({"methodConfig": [{"name": [{"service": "s.S"}], "retryPolicy": retry}]}).to_string()
}

fn source_cases(source: Source) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = Vec::new();
    let mut add = |name: &str, text: String| v.push((name.to_string(), text));
    match source {
        Source::Envoy => {
            add("no static resources", "static_resources: {}\n".into());
            add(
                "no routes or clusters",
                "static_resources:\n  listeners: []\n  clusters: []\n".into(),
            );
            add(
                "a cluster and no routes",
                "static_resources:\n  clusters:\n  - name: c\n".into(),
            );
            add(
                "a route to an unknown cluster",
                "virtual_hosts:\n- name: v\n  domains: ['*']\n  routes:\n  - match: {prefix: /}\n    route: {cluster: nowhere}\n".into(),
            );
            for (what, retry) in [
                ("num_retries 0", "num_retries: 0"),
                ("num_retries huge", "num_retries: 4294967295"),
                ("num_retries negative", "num_retries: -1"),
                ("per_try_timeout 1e308s", "per_try_timeout: 1e308s"),
                ("per_try_timeout 0s", "per_try_timeout: 0s"),
                (
                    "base_interval huge",
                    "retry_back_off: {base_interval: 1e300s, max_interval: 1e301s}",
                ),
                (
                    "max_interval below base",
                    "retry_back_off: {base_interval: 10s, max_interval: 1s}",
                ),
                ("base_interval 0", "retry_back_off: {base_interval: 0s}"),
            ] {
                add(
                    what,
                    format!("virtual_hosts:\n- name: v\n  domains: ['*']\n  routes:\n  - match: {{prefix: /}}\n    route:\n      cluster: c\n      timeout: 1e308s\n      retry_policy: {{retry_on: 5xx, {retry}}}\n"),
                );
            }
            add(
                "a route timeout of 0 and a huge idle timeout",
                "virtual_hosts:\n- name: v\n  domains: ['*']\n  routes:\n  - match: {prefix: /}\n    route: {cluster: c, timeout: 0s, idle_timeout: 1e308s}\n".into(),
            );
            add(
                "a million and one endpoints",
                json!({"clusters": [{"name": "c", "load_assignment": {"endpoints": [{"lb_endpoints": vec![0; 1_000_001]}]}}]}).to_string(),
            );
            add(
                "breaker thresholds at the edges",
                "clusters:\n- name: c\n  connect_timeout: 1e308s\n  circuit_breakers:\n    thresholds:\n    - {max_requests: 0, max_retries: 4294967295, retry_budget: {budget_percent: {value: 1e308}, min_retry_concurrency: 0}}\n  outlier_detection: {consecutive_5xx: 0, interval: 0s, base_ejection_time: 1e308s, max_ejection_percent: 1000}\n".into(),
            );
            add(
                "outlier detection negative percent",
                "clusters:\n- name: c\n  outlier_detection: {consecutive_5xx: 4294967295, max_ejection_percent: -5, interval: 0.000000001s}\n".into(),
            );
        }
        Source::Istio => {
            add("a kind alone", "kind: VirtualService\n".into());
            add(
                "no spec",
                "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: x}\n"
                    .into(),
            );
            add("no hosts", "kind: VirtualService\nspec: {hosts: [], http: [{route: [{destination: {host: a}}]}]}\n".into());
            for (what, retries) in [
                ("attempts 0", "{attempts: 0}"),
                (
                    "attempts huge",
                    "{attempts: 4294967295, perTryTimeout: 1e308s}",
                ),
                ("attempts negative", "{attempts: -3}"),
                (
                    "perTryTimeout huge",
                    "{attempts: 3, perTryTimeout: 2562047h}",
                ),
                ("perTryTimeout zero", "{attempts: 3, perTryTimeout: 0s}"),
            ] {
                add(
                    what,
                    format!("kind: VirtualService\nspec:\n  hosts: [a]\n  http:\n  - route: [{{destination: {{host: a}}}}]\n    timeout: 1e308s\n    retries: {retries}\n"),
                );
            }
            add(
                "a destination rule at the edges",
                "kind: DestinationRule\nspec:\n  host: a\n  trafficPolicy:\n    connectionPool: {tcp: {maxConnections: 0, connectTimeout: 1e308s}, http: {http1MaxPendingRequests: 0, http2MaxRequests: 4294967295, maxRetries: -1}}\n    outlierDetection: {consecutive5xxErrors: 0, interval: 0s, baseEjectionTime: 1e308h, maxEjectionPercent: 101}\n".into(),
            );
            add(
                "a subset list of scalars",
                "kind: DestinationRule\nspec: {host: a, subsets: [1, 2]}\n".into(),
            );
        }
        Source::Resilience4j => {
            add(
                "a baseConfig loop",
                "resilience4j.retry:\n  configs:\n    a: {baseConfig: b, maxAttempts: 2}\n    b: {baseConfig: a}\n  instances:\n    x: {baseConfig: a}\n".into(),
            );
            add(
                "a baseConfig of itself",
                "resilience4j.circuitbreaker:\n  configs:\n    a: {baseConfig: a}\n  instances:\n    x: {baseConfig: a}\n".into(),
            );
            add(
                "an instance that is its own baseConfig",
                "resilience4j.retry:\n  instances:\n    x: {baseConfig: x}\n".into(),
            );
            add(
                "an unknown baseConfig",
                "resilience4j.retry:\n  instances:\n    x: {baseConfig: nowhere}\n".into(),
            );
            let mut chain = String::from("resilience4j.retry:\n  configs:\n");
            for i in 0..2000 {
                chain.push_str(&format!("    c{i}: {{baseConfig: c{}}}\n", i + 1));
            }
            chain.push_str("    c2000: {maxAttempts: 3}\n  instances:\n    x: {baseConfig: c0}\n");
            add("a long baseConfig chain", chain);
            for (what, retry) in [
                ("maxAttempts 0", "maxAttempts: 0"),
                ("maxAttempts huge", "maxAttempts: 4294967295"),
                ("maxAttempts negative", "maxAttempts: -1"),
                ("waitDuration huge", "waitDuration: 9223372036854775807d"),
                ("waitDuration ISO huge", "waitDuration: PT1e308S"),
                ("a backoff multiplier of 0", "enableExponentialBackoff: true\n      exponentialBackoffMultiplier: 0"),
                ("a backoff multiplier huge", "enableExponentialBackoff: true\n      exponentialBackoffMultiplier: 1e308\n      exponentialMaxWaitDuration: 1e308"),
                ("a randomized wait factor of 5", "enableRandomizedWait: true\n      randomizedWaitFactor: 5"),
            ] {
                add(what, format!("resilience4j.retry:\n  instances:\n    x:\n      {retry}\n"));
            }
            for (what, cb) in [
                ("failureRateThreshold 0", "failureRateThreshold: 0"),
                ("failureRateThreshold 1000", "failureRateThreshold: 1000"),
                ("slidingWindowSize 0", "slidingWindowSize: 0"),
                (
                    "minimumNumberOfCalls huge",
                    "minimumNumberOfCalls: 4294967295\n      slidingWindowSize: 1",
                ),
                ("slowCallRateThreshold -1", "slowCallRateThreshold: -1"),
                ("waitDurationInOpenState 0", "waitDurationInOpenState: 0"),
                (
                    "a time window huge",
                    "slidingWindowType: TIME_BASED\n      slidingWindowSize: 4294967295",
                ),
                (
                    "permitted half-open 0",
                    "permittedNumberOfCallsInHalfOpenState: 0",
                ),
            ] {
                add(
                    what,
                    format!("resilience4j.circuitbreaker:\n  instances:\n    x:\n      {cb}\n"),
                );
            }
            add(
                "bulkhead and limiter at the edges",
                "resilience4j.bulkhead:\n  instances:\n    x: {maxConcurrentCalls: 0, maxWaitDuration: 1e308}\nresilience4j.ratelimiter:\n  instances:\n    x: {limitForPeriod: 0, limitRefreshPeriod: 0, timeoutDuration: -1}\nresilience4j.timelimiter:\n  instances:\n    x: {timeoutDuration: 0}\n".into(),
            );
            add(
                "a thread-pool bulkhead at the edges",
                "resilience4j.thread-pool-bulkhead:\n  instances:\n    x: {maxThreadPoolSize: 0, coreThreadPoolSize: 4294967295, queueCapacity: 4294967295}\n".into(),
            );
        }
        Source::Grpc => {
            for attempts in [
                json!(0),
                json!(1),
                json!(2),
                json!(5),
                json!(6),
                json!(1_000_000_000),
                json!(4294967295u64),
                json!(u64::MAX),
                json!(-1),
                json!(1.5),
                json!("4"),
                Value::Null,
            ] {
                add(
                    &format!("retry maxAttempts {attempts}"),
                    grpc_with(
                        json!({"maxAttempts": attempts, "initialBackoff": "0.1s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}),
                    ),
                );
                add(
                    &format!("hedging maxAttempts {attempts}"),
                    json!({"methodConfig": [{"name": [{"service": "s.S"}], "hedgingPolicy": {"maxAttempts": attempts, "hedgingDelay": "0.1s"}}]}).to_string(),
                );
            }
            for (what, retry) in [
                (
                    "a backoff of 1e308s",
                    json!({"maxAttempts": 3, "initialBackoff": "1e308s", "maxBackoff": "1e308s", "backoffMultiplier": 1e308, "retryableStatusCodes": ["UNAVAILABLE"]}),
                ),
                (
                    "a backoff of 0s",
                    json!({"maxAttempts": 3, "initialBackoff": "0s", "maxBackoff": "0s", "backoffMultiplier": 0, "retryableStatusCodes": ["UNAVAILABLE"]}),
                ),
                (
                    "a negative multiplier",
                    json!({"maxAttempts": 3, "initialBackoff": "1s", "maxBackoff": "0.5s", "backoffMultiplier": -2, "retryableStatusCodes": []}),
                ),
                ("no status codes", json!({"maxAttempts": 3})),
            ] {
                add(what, grpc_with(retry));
            }
            add(
                "a timeout of 1e308s",
                json!({"methodConfig": [{"name": [{"service": "s"}], "timeout": "1e308s"}]})
                    .to_string(),
            );
            add(
                "a timeout of 0s",
                json!({"methodConfig": [{"name": [{"service": "s"}], "timeout": "0s"}]})
                    .to_string(),
            );
            add("a hedging delay of 1e308s", json!({"methodConfig": [{"name": [{"service": "s"}], "hedgingPolicy": {"maxAttempts": 3, "hedgingDelay": "1e308s"}}]}).to_string());
            add("no method config", json!({"methodConfig": []}).to_string());
            add(
                "a method config without names",
                json!({"methodConfig": [{"name": [], "timeout": "1s"}]}).to_string(),
            );
            add(
                "an empty name",
                json!({"methodConfig": [{"name": [{}], "timeout": "1s"}]}).to_string(),
            );
            add("throttling at the edges", json!({"methodConfig": [{"name": [{"service": "s"}], "timeout": "1s"}], "retryThrottling": {"maxTokens": 0, "tokenRatio": -1}}).to_string());
            add("throttling huge", json!({"methodConfig": [{"name": [{"service": "s"}], "timeout": "1s"}], "retryThrottling": {"maxTokens": 1e308, "tokenRatio": 1e308}}).to_string());
            add("both policies", json!({"methodConfig": [{"name": [{"service": "s"}], "retryPolicy": {"maxAttempts": 3}, "hedgingPolicy": {"maxAttempts": 3}}]}).to_string());
            add("many names", json!({"methodConfig": [{"name": (0..500).map(|i| json!({"service": format!("s{i}"), "method": "m"})).collect::<Vec<_>>(), "timeout": "1s"}]}).to_string());
        }
        Source::Otlp => {
            add(
                "one span",
                otlp(&[span_at("a", 1, None, 0, 1_000_000, false, 2)]),
            );
            add(
                "all spans in error",
                otlp(&[
                    span_at("a", 1, None, 0, 10_000_000, true, 2),
                    span_at("b", 2, Some(1), 1_000_000, 9_000_000, true, 2),
                    span_at("a", 3, None, 20_000_000, 30_000_000, true, 2),
                    span_at("b", 4, Some(3), 21_000_000, 29_000_000, true, 2),
                ]),
            );
            add(
                "a 1-hour trace",
                otlp(&[
                    span_at("a", 1, None, 0, 3_600_000_000_000, false, 2),
                    span_at("b", 2, Some(1), 1, 3_599_999_999_999, false, 2),
                ]),
            );
            add(
                "0-length spans",
                otlp(&[
                    span_at("a", 1, None, 5, 5, false, 2),
                    span_at("b", 2, Some(1), 5, 5, false, 2),
                    span_at("a", 3, None, 5, 5, false, 2),
                ]),
            );
            add(
                "two roots at once",
                otlp(&[
                    span_at("a", 1, None, 0, 1_000_000, false, 2),
                    span_at("a", 2, None, 0, 1_000_000, false, 2),
                ]),
            );
            add(
                "two roots a nanosecond apart",
                otlp(&[
                    span_at("a", 1, None, 0, 1_000_000, false, 2),
                    span_at("a", 2, None, 1, 1_000_000, false, 2),
                ]),
            );
            add(
                "roots centuries apart",
                otlp(&[
                    span_at("a", 1, None, 0, 1_000_000, false, 2),
                    span_at("a", 2, None, u64::MAX - 10, u64::MAX, false, 2),
                ]),
            );
            add(
                "a child longer than its parent",
                otlp(&[
                    span_at("a", 1, None, 100, 200, false, 2),
                    span_at("b", 2, Some(1), 0, u64::MAX, false, 2),
                ]),
            );
            add(
                "a client call to itself",
                otlp(&[
                    span_at("a", 1, None, 0, 1000, false, 2),
                    span_at("a", 2, Some(1), 10, 900, false, 3),
                    span_at("a", 3, Some(2), 20, 800, false, 2),
                ]),
            );
            add(
                "a service calling back up its chain",
                otlp(&[
                    span_at("a", 1, None, 0, 1000, false, 2),
                    span_at("b", 2, Some(1), 10, 900, false, 2),
                    span_at("a", 3, Some(2), 20, 800, false, 2),
                ]),
            );
            add(
                "a service whose name is all odd characters",
                otlp(&[span_at("..[]\"'", 1, None, 0, 1000, false, 2)]),
            );
            add(
                "a service with a 500-byte name",
                otlp(&[
                    span_at(&"é".repeat(250), 1, None, 0, 1000, false, 2),
                    span_at(&"x".repeat(500), 2, Some(1), 10, 900, false, 2),
                ]),
            );
            add("no service name", json!({"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "01", "spanId": "01", "startTimeUnixNano": 0, "endTimeUnixNano": 10}]}]}]}).to_string());
            add(
                "a span whose parent is itself",
                otlp(&[span_at("a", 1, Some(1), 0, 10, false, 2)]),
            );
            add("10^5 spans", otlp(&many_spans(100_000, Many::Siblings)));
            add("10^5 retries", otlp(&many_spans(100_000, Many::Retries)));
            add(
                "a chain of 10^4 services",
                otlp(&many_spans(10_000, Many::Chain)),
            );
            add(
                "10^4 services called at once",
                otlp(&many_spans(10_000, Many::FanOut)),
            );
            // In a longer run only: the regression tests import the first,
            // and the others take seconds to check and minutes to run
            // (10⁵ services, every request through all of them).
            if cases_per_source() > DEFAULT_CASES {
                add(
                    "10^5 calls back up the chain",
                    otlp(&many_spans(100_000, Many::CallBack)),
                );
                add(
                    "a chain of 10^5 services",
                    otlp(&many_spans(100_000, Many::Chain)),
                );
                add(
                    "10^5 calls at once",
                    otlp(&many_spans(100_000, Many::FanOut)),
                );
                add("10^5 roots", otlp(&many_spans(100_000, Many::Roots)));
            }
        }
        Source::Jaeger => {
            let span = |id: u64, parent: Option<u64>, process: &str| {
                let mut s = json!({"traceID": "01", "spanID": format!("{id:016x}"), "operationName": "op", "startTime": 1_700_000_000_000_000u64 + id, "duration": 1000 - id, "processID": process, "tags": []});
                if let Some(p) = parent {
                    s["references"] = json!([{"refType": "CHILD_OF", "traceID": "01", "spanID": format!("{p:016x}")}]);
                }
                s
            };
            let spans = json!([span(1, None, "p1"), span(2, Some(1), "p2")]);
            add(
                "missing processes",
                json!({"data": [{"traceID": "01", "spans": spans}]}).to_string(),
            );
            add(
                "processes null",
                json!({"data": [{"traceID": "01", "spans": spans, "processes": null}]}).to_string(),
            );
            add(
                "processes a list",
                json!({"data": [{"traceID": "01", "spans": spans, "processes": []}]}).to_string(),
            );
            add("a process without a name", json!({"data": [{"traceID": "01", "spans": spans, "processes": {"p1": {}, "p2": {"serviceName": ""}}}]}).to_string());
            add("one process for all", json!({"data": [{"traceID": "01", "spans": [span(1, None, "p1"), span(2, Some(1), "p1")], "processes": {"p1": {"serviceName": "a"}}}]}).to_string());
            add("data null", json!({"data": null}).to_string());
            add("no traces", json!({"data": []}).to_string());
            add(
                "a trace without spans",
                json!({"data": [{"traceID": "01"}]}).to_string(),
            );
            add("references to another trace", json!({"data": [{"traceID": "01", "spans": [{"traceID": "01", "spanID": "02", "startTime": 1, "duration": 1, "references": [{"refType": "CHILD_OF", "traceID": "99", "spanID": "01"}], "process": {"serviceName": "a"}}]}]}).to_string());
            add("a duration past 2554", json!({"data": [{"traceID": "01", "spans": [{"traceID": "01", "spanID": "02", "startTime": 1, "duration": u64::MAX / 1000, "process": {"serviceName": "a"}}]}]}).to_string());
            add(
                "10^5 spans",
                jaeger_many(if cases_per_source() > DEFAULT_CASES {
                    100_000
                } else {
                    20_000
                }),
            );
        }
    }
    v
}

fn span_at(
    service: &str,
    id: u64,
    parent: Option<u64>,
    start: u64,
    end: u64,
    error: bool,
    kind: u64,
) -> (String, Value) {
    let mut s = json!({
        "traceId": "0af7651916cd43dd8448eb211c80319c",
        "spanId": format!("{id:016x}"),
        "name": "op",
        "kind": kind,
        "startTimeUnixNano": start.to_string(),
        "endTimeUnixNano": end.to_string(),
    });
    if let Some(p) = parent {
        s["parentSpanId"] = json!(format!("{p:016x}"));
    }
    if error {
        s["status"] = json!({"code": 2});
    }
    (service.to_string(), s)
}

/// One OTLP request: the spans grouped by service.
fn otlp(spans: &[(String, Value)]) -> String {
    let mut by_service: Vec<(String, Vec<Value>)> = Vec::new();
    for (service, span) in spans {
        match by_service.iter_mut().find(|(s, _)| s == service) {
            Some((_, list)) => list.push(span.clone()),
            None => by_service.push((service.clone(), vec![span.clone()])),
        }
    }
    let resource_spans: Vec<Value> = by_service
        .into_iter()
        .map(|(service, spans)| {
            json!({
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
                "scopeSpans": [{"spans": spans}],
            })
        })
        .collect();
    json!({ "resourceSpans": resource_spans }).to_string()
}

#[derive(Clone, Copy)]
enum Many {
    /// A root and `n` calls to one service one after the other.
    Siblings,
    /// A root and `n` failed attempts at one call, each right after the last.
    Retries,
    /// `n` services each calling the next.
    Chain,
    /// A root calling `n` services at once.
    FanOut,
    /// `n` requests.
    Roots,
    /// The root calls `b`, which calls the root's service back `n` times.
    CallBack,
}

fn many_spans(n: u64, how: Many) -> Vec<(String, Value)> {
    const START: u64 = 1_700_000_000_000_000_000;
    let total = 10 * (n + 2);
    let mut out = vec![span_at("root", 1, None, START, START + total, false, 2)];
    for i in 0..n {
        let id = i + 2;
        out.push(match how {
            Many::Siblings => span_at(
                "b",
                id,
                Some(1),
                START + 10 * i + 1,
                START + 10 * i + 9,
                false,
                2,
            ),
            Many::Retries => span_at(
                "b",
                id,
                Some(1),
                START + 10 * i + 1,
                START + 10 * i + 9,
                true,
                2,
            ),
            Many::Chain => span_at(
                &format!("s{i}"),
                id,
                Some(id - 1),
                START + i + 1,
                START + total - i - 1,
                false,
                2,
            ),
            Many::FanOut => span_at(
                &format!("s{i}"),
                id,
                Some(1),
                START + 1,
                START + total - 1,
                false,
                2,
            ),
            Many::Roots => span_at(
                "root",
                id,
                None,
                START + 1000 * i,
                START + 1000 * i + 999,
                false,
                2,
            ),
            Many::CallBack if i == 0 => {
                span_at("b", id, Some(1), START + 1, START + total - 1, false, 2)
            }
            Many::CallBack => span_at(
                "root",
                id,
                Some(2),
                START + 10 * i + 1,
                START + 10 * i + 9,
                false,
                2,
            ),
        });
    }
    out
}

fn jaeger_many(n: u64) -> String {
    let spans: Vec<Value> = (0..n)
        .map(|i| {
            let mut s = json!({"traceID": "01", "spanID": format!("{:x}", i + 1), "startTime": 1_700_000_000_000_000u64 + 10 * i, "duration": 5, "processID": if i == 0 { "p1" } else { "p2" }});
            if i > 0 {
                s["references"] = json!([{"refType": "CHILD_OF", "traceID": "01", "spanID": "1"}]);
                s["startTime"] = json!(1_700_000_000_000_000u64 + 10 * i);
            } else {
                s["duration"] = json!(10 * n + 10);
            }
            s
        })
        .collect();
    json!({"data": [{"traceID": "01", "spans": spans, "processes": {"p1": {"serviceName": "a"}, "p2": {"serviceName": "b"}}}]}).to_string()
}

#[test]
fn hand_written_edge_cases() {
    quiet_panics();
    let mut report = Report::default();
    for source in ALL {
        for (name, text) in common_cases().into_iter().chain(source_cases(source)) {
            report.check_and_keep(source, &name, &text, usize::MAX);
        }
    }
    report.run_kept();
    report.finish("edge cases");
}

// ---------------------------------------------------------------------
// Regressions: each input the fuzzer found, and what the import does now
// ---------------------------------------------------------------------

fn problems(source: Source, text: &str) -> Vec<stormsim_import::Problem> {
    match import(source, &[(file_name(source).to_string(), text.to_string())]) {
        Ok(i) => panic!("imported: {:#}", i.model),
        Err(ImportError::Invalid(ps)) => ps,
    }
}

/// Imports `text`, loads the model, and gives both.
fn loads(source: Source, text: &str) -> Imported {
    let imported = import(source, &[(file_name(source).to_string(), text.to_string())])
        .unwrap_or_else(|e| match e {
            ImportError::Invalid(ps) => panic!("{ps:#?}"),
        });
    let model = imported.model.to_string();
    if let Err(e) = stormsim_model::load_model(&model, &[], None) {
        panic!("the imported model does not load: {e}\n{model}");
    }
    imported
}

fn warned(imported: &Imported, path: &str, words: &str) {
    assert!(
        imported
            .unmapped
            .iter()
            .any(|u| u.path == path && u.message.contains(words)),
        "no warning at {path} with {words:?}: {:#?}",
        imported.unmapped
    );
}

#[test]
fn regression_yaml_nested_deeper_than_the_stack() {
    // Block YAML 3000 deep overflowed the stack (an abort, not a panic).
    let mut deep = String::new();
    for i in 0..3000 {
        deep.push_str(&" ".repeat(i));
        deep.push_str("a:\n");
    }
    for source in [Source::Envoy, Source::Istio, Source::Resilience4j] {
        let ps = problems(source, &deep);
        assert!(ps[0].message.contains("nested 129 deep"), "{ps:#?}");
    }
    // Aliases count as what they expand to: each level below nests the
    // last one's anchor inside 100 more lists.
    let mut text = format!("a0: &a0 {}1{}\n", "[".repeat(100), "]".repeat(100));
    for i in 1..4 {
        text.push_str(&format!(
            "a{i}: &a{i} {}*a{}{}\n",
            "[".repeat(100),
            i - 1,
            "]".repeat(100)
        ));
    }
    let ps = problems(Source::Envoy, &text);
    assert!(ps[0].message.contains("aliases expanded"), "{ps:#?}");
    // 128 deep is read as before.
    let ok = format!(
        "static_resources: {}{{}}{}\n",
        "[".repeat(120),
        "]".repeat(120)
    );
    let ps = problems(Source::Envoy, &ok);
    assert!(ps.iter().all(|p| !p.message.contains("nested")), "{ps:#?}");
}

#[test]
fn regression_resilience4j_settings_outside_what_resilience4j_accepts() {
    // failureRateThreshold 4294967295 was written into a model that the
    // model's check refused; resilience4j refuses it at startup too.
    for (module, setting, bad) in [
        ("circuitbreaker", "failureRateThreshold", "4294967295"),
        ("circuitbreaker", "slowCallRateThreshold", "0"),
        ("circuitbreaker", "slidingWindowSize", "0"),
        ("circuitbreaker", "waitDurationInOpenState", "0"),
        ("retry", "maxAttempts", "0"),
        ("retry", "exponentialBackoffMultiplier", "0.5"),
        ("retry", "randomizedWaitFactor", "1"),
        ("ratelimiter", "limitForPeriod", "0"),
        ("ratelimiter", "limitRefreshPeriod", "0"),
        ("timelimiter", "timeoutDuration", "0"),
    ] {
        let text =
            format!("resilience4j.{module}:\n  instances:\n    x:\n      {setting}: {bad}\n");
        let ps = problems(Source::Resilience4j, &text);
        assert_eq!(ps.len(), 1, "{ps:#?}");
        assert_eq!(
            ps[0].path,
            format!("resilience4j.{module}.instances.x.{setting}")
        );
        assert!(
            ps[0].message.contains("as resilience4j requires"),
            "{ps:#?}"
        );
    }
    // The edges of what it accepts import and load.
    loads(
        Source::Resilience4j,
        "resilience4j.circuitbreaker:\n  instances:\n    x: {failureRateThreshold: 100, slowCallRateThreshold: 0.5}\n",
    );
}

#[test]
fn regression_grpc_backoff_multiplier_below_one() {
    // A6 takes any multiplier above 0; the model's backoff never shrinks.
    let imported = loads(
        Source::Grpc,
        &grpc_with(
            json!({"maxAttempts": 3, "initialBackoff": "1s", "maxBackoff": "2s", "backoffMultiplier": 0.000002, "retryableStatusCodes": ["UNAVAILABLE"]}),
        ),
    );
    let retry = &imported.model["services"][0]["steps"][0]["retry"];
    assert_eq!(retry["backoff"]["multiplier"], json!(1.0));
    warned(
        &imported,
        "methodConfig[0].retryPolicy.backoffMultiplier",
        "below 1",
    );
}

#[test]
fn regression_grpc_durations_of_zero() {
    // A hedging delay of 0 (or none), a timeout of 0s: the model needs
    // them above 0.
    let imported = loads(
        Source::Grpc,
        &json!({"methodConfig": [{"name": [{"service": "s"}], "hedgingPolicy": {"maxAttempts": 3}}]}).to_string(),
    );
    assert_eq!(
        imported.model["services"][0]["steps"][0]["hedge"]["delay_ms"],
        json!(0.000001)
    );
    warned(
        &imported,
        "methodConfig[0].hedgingPolicy.hedgingDelay",
        "every copy at once",
    );
    let imported = loads(
        Source::Grpc,
        &json!({"methodConfig": [{"name": [{"service": "s"}], "timeout": "0s", "hedgingPolicy": {"maxAttempts": 2, "hedgingDelay": "0s"}}]}).to_string(),
    );
    assert_eq!(
        imported.model["workloads"][0]["deadline_ms"],
        json!(0.000001)
    );
    warned(&imported, "methodConfig[0].timeout", "past its deadline");
    let imported = loads(
        Source::Grpc,
        &grpc_with(
            json!({"maxAttempts": 2, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 1, "retryableStatusCodes": ["UNAVAILABLE"], "perAttemptRecvTimeout": "0s"}),
        ),
    );
    assert_eq!(
        imported.model["services"][0]["steps"][0]["timeout_ms"],
        json!(0.000001)
    );
}

#[test]
fn regression_envoy_more_endpoints_than_a_model_has_instances() {
    let text = json!({"clusters": [{"name": "c", "load_assignment": {"endpoints": [{"lb_endpoints": vec![0; 1_000_001]}]}}]}).to_string();
    let imported = loads(Source::Envoy, &text);
    assert_eq!(imported.model["services"][1]["instances"], json!(1_000_000));
    warned(
        &imported,
        "clusters[0].load_assignment",
        "1000001 endpoints",
    );
}

#[test]
fn regression_more_edges_than_a_model_has_classes() {
    let names = |n: usize| -> Vec<Value> {
        (0..n)
            .map(|i| json!({"service": format!("s{i}")}))
            .collect()
    };
    let text = json!({"methodConfig": [{"name": names(256), "timeout": "1s"}]}).to_string();
    let ps = problems(Source::Grpc, &text);
    assert!(ps[0].message.starts_with("256 edges"), "{ps:#?}");
    let text = json!({"methodConfig": [{"name": names(255), "timeout": "1s"}]}).to_string();
    loads(Source::Grpc, &text);
}

#[test]
fn regression_trace_workers_beyond_what_a_model_has() {
    // A child that lasts 584 years at one request per second "needs" more
    // workers than a model may have.
    let imported = loads(
        Source::Otlp,
        &otlp(&[
            span_at("a", 1, None, 100, 200, false, 2),
            span_at("b", 2, Some(1), 0, u64::MAX, false, 2),
        ]),
    );
    let b = &imported.model["services"][1];
    assert_eq!(b["workers"], json!(1_000_000), "{b:#}");
    warned(&imported, "service b", "the model gets 1000000");
}

#[test]
fn regression_trace_with_more_calls_than_a_handler_has_steps() {
    // 10⁵ calls one after another: 10⁵ steps took the model's check half a
    // minute, and finding retries among them took time in their square.
    let imported = loads(Source::Otlp, &otlp(&many_spans(100_000, Many::Siblings)));
    let steps = imported.model["services"][0]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1001);
    warned(&imported, "service root", "100000 calls one after another");
    // 10⁵ calls back to the root's service (whose own handler, as most of
    // its executions show it, calls nothing: no cycle).
    let imported = loads(Source::Otlp, &otlp(&many_spans(100_000, Many::CallBack)));
    let b = &imported.model["services"][1];
    assert_eq!(b["steps"].as_array().unwrap().len(), 1001, "{b:#}");
}

#[test]
fn regression_trace_service_whose_spans_were_all_left_out() {
    // Every span of p1's service is in a parent loop; the trace's only
    // root is a span whose parent is missing. The service was written with
    // 0 workers (its 0 executions' mean busy time is 0 / 0).
    let span = |id: &str, parent: &str, process: &str| {
        json!({"traceID": "01", "spanID": id, "startTime": 1_485_467_191_639_875u64, "duration": 5,
               "references": [{"refType": "CHILD_OF", "traceID": "01", "spanID": parent}], "processID": process})
    };
    let text = json!({"traceID": "01", "spans": [span("2", "4", "p1"), span("4", "2", "p2"), span("5", "3", "p2")],
                      "processes": {"p1": {"serviceName": "a"}, "p2": {"serviceName": "b"}}})
    .to_string();
    let imported = loads(Source::Jaeger, &text);
    let services = imported.model["services"].as_array().unwrap();
    assert_eq!(services.len(), 1, "{services:#?}");
    assert_eq!(services[0]["name"], "b");
}

#[test]
fn regression_envoy_and_istio_values_their_validation_refuses() {
    // A budget of 25000000%, a max_interval or connect timeout of 0: the
    // model's check refused what Envoy's (and Istio's) validation refuses.
    for (what, cluster, path) in [
        (
            "budget",
            "circuit_breakers: {thresholds: [{retry_budget: {budget_percent: {value: 25000000}}}]}",
            "clusters[0].circuit_breakers.thresholds[0].retry_budget.budget_percent.value",
        ),
        (
            "connect",
            "connect_timeout: 0s",
            "clusters[0].connect_timeout",
        ),
    ] {
        let ps = problems(
            Source::Envoy,
            &format!("clusters:\n- name: c\n  {cluster}\n"),
        );
        assert_eq!(ps.len(), 1, "{what}: {ps:#?}");
        assert_eq!(ps[0].path, path, "{what}");
    }
    let route = "virtual_hosts:\n- name: v\n  domains: ['*']\n  routes:\n  - match: {prefix: /}\n    route: {cluster: c, retry_policy: {retry_on: 5xx, retry_back_off: {base_interval: 1s, max_interval: 0s}}}\n";
    let ps = problems(Source::Envoy, route);
    assert!(
        ps[0].message.contains("max_interval must be above 0"),
        "{ps:#?}"
    );
    let ps = problems(
        Source::Istio,
        "kind: DestinationRule\nspec: {host: a, trafficPolicy: {connectionPool: {tcp: {connectTimeout: 0s}}}}\n",
    );
    assert!(
        ps[0].message.contains("connectTimeout must be above 0"),
        "{ps:#?}"
    );
}

#[test]
fn regression_outlier_detection_after_zero_failures() {
    // consecutive_5xx 0 was written as it is; the model needs at least 1.
    // It never ejects (Istio documents 0 as off): no outlier detection.
    let imported = loads(
        Source::Envoy,
        "clusters:\n- name: c\n  outlier_detection: {consecutive_5xx: 0}\n",
    );
    assert!(imported.model["services"][0]["steps"][0]
        .get("outlier_detection")
        .is_none());
    warned(
        &imported,
        "clusters[0].outlier_detection.consecutive_5xx",
        "never ejects",
    );
    let imported = loads(
        Source::Istio,
        "kind: DestinationRule\nspec: {host: a, trafficPolicy: {outlierDetection: {consecutive5xxErrors: 0}}}\n",
    );
    warned(
        &imported,
        "spec.trafficPolicy.outlierDetection.consecutive5xxErrors",
        "never ejects",
    );
}

#[test]
fn regression_upstream_named_run() {
    // "run" is the model's name for the run's own figures.
    for (source, text) in [
        (Source::Envoy, "clusters:\n- name: run\n".to_string()),
        (
            Source::Grpc,
            json!({"methodConfig": [{"name": [{"service": "run"}], "timeout": "1s"}]}).to_string(),
        ),
    ] {
        let imported = loads(source, &text);
        assert_eq!(imported.model["services"][1]["name"], "run-upstream");
    }
}

#[test]
fn regression_outlier_detection_durations_of_zero() {
    // An interval or ejection time of 0 was written as it is; Envoy's and
    // Istio's validation refuse it, and so does the model's check.
    for key in ["interval", "base_ejection_time", "max_ejection_time"] {
        let ps = problems(
            Source::Envoy,
            &format!("clusters:\n- name: c\n  outlier_detection: {{{key}: 0s}}\n"),
        );
        assert_eq!(ps.len(), 1, "{ps:#?}");
        assert_eq!(ps[0].path, format!("clusters[0].outlier_detection.{key}"));
    }
    for key in ["interval", "baseEjectionTime"] {
        let ps = problems(
            Source::Istio,
            &format!("kind: DestinationRule\nspec: {{host: a, trafficPolicy: {{outlierDetection: {{{key}: 0s}}}}}}\n"),
        );
        assert_eq!(
            ps[0].path,
            format!("spec.trafficPolicy.outlierDetection.{key}"),
            "{ps:#?}"
        );
    }
}
