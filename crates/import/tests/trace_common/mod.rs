//! Synthetic traces of a known system, written as OTLP JSON and as Jaeger
//! JSON, for the import's round-trip tests.
//!
//! The system: a client calls `A`; `A` works (log-normal own time, split at
//! a uniform point into work before and after its calls), calling `B` twice
//! at once in between; `B` works an exponential time. Every hop takes a
//! constant network delay each way, so each CLIENT span lasts exactly
//! `2 · NET` longer than its SERVER child. `A` and `B` each fail by
//! themselves with probability `P_ERROR`; `A` also fails when a `B` call did.
#![allow(dead_code)]

use serde_json::{json, Value};

/// Requests per second.
pub const RATE: f64 = 40.0;
/// Median and log-scale σ of A's own time, ms.
pub const A_MEDIAN_MS: f64 = 8.0;
pub const A_SIGMA: f64 = 0.6;
/// Mean of B's own time (exponential), ms.
pub const B_MEAN_MS: f64 = 4.0;
/// One-way network delay, ms.
pub const NET_MS: f64 = 0.25;
/// Each service's own error probability.
pub const P_ERROR: f64 = 0.01;

/// SplitMix64: a small seeded generator, so that the tests need no crate.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1).
    pub fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * libm::log(self.uniform())
    }

    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * libm::log(u)).sqrt() * libm::cos(2.0 * std::f64::consts::PI * v)
    }
}

/// A span as generated, times in ns since 1970.
#[derive(Clone, Debug)]
pub struct GenSpan {
    pub trace: u128,
    pub id: u64,
    pub parent: Option<u64>,
    pub service: &'static str,
    pub kind: &'static str,
    pub start_ns: u64,
    pub end_ns: u64,
    pub error: bool,
}

/// What was generated, with the truth the import should recover.
pub struct Generated {
    pub spans: Vec<GenSpan>,
    /// Each root's duration, ms, and whether it failed.
    pub roots: Vec<(f64, bool)>,
    /// A's and B's own times as drawn, ms.
    pub a_own_ms: Vec<f64>,
    pub b_own_ms: Vec<f64>,
}

fn ns(ms: f64) -> u64 {
    (ms * 1e6).round() as u64
}

/// `n` requests of the system, Poisson arrivals at [`RATE`].
pub fn generate(seed: u64, n: usize) -> Generated {
    let mut rng = Rng::new(seed);
    let mut g = Generated {
        spans: Vec::new(),
        roots: Vec::new(),
        a_own_ms: Vec::new(),
        b_own_ms: Vec::new(),
    };
    let mut t_ms = 1_700_000_000_000.0;
    let mut next_id = seed << 32;
    let mut id = || {
        next_id += 1;
        next_id
    };
    for _ in 0..n {
        t_ms += rng.exponential(1000.0 / RATE);
        let trace = (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64());
        let a_own = A_MEDIAN_MS * libm::exp(A_SIGMA * rng.normal());
        let before = a_own * rng.uniform();
        let a_start = t_ms + NET_MS;
        let calls_start = a_start + before;
        let (client_id, a_id) = (id(), id());
        let mut a_error = rng.uniform() < P_ERROR;
        let mut calls_end = calls_start;
        for _ in 0..2 {
            let b = rng.exponential(B_MEAN_MS);
            let b_error = rng.uniform() < P_ERROR;
            a_error |= b_error;
            let (c_id, b_id) = (id(), id());
            let end = calls_start + 2.0 * NET_MS + b;
            g.spans.push(GenSpan {
                trace,
                id: c_id,
                parent: Some(a_id),
                service: "A",
                kind: "CLIENT",
                start_ns: ns(calls_start),
                end_ns: ns(end),
                error: b_error,
            });
            g.spans.push(GenSpan {
                trace,
                id: b_id,
                parent: Some(c_id),
                service: "B",
                kind: "SERVER",
                start_ns: ns(calls_start + NET_MS),
                end_ns: ns(calls_start + NET_MS + b),
                error: b_error,
            });
            g.b_own_ms.push(b);
            calls_end = calls_end.max(end);
        }
        let a_end = calls_end + (a_own - before);
        g.spans.push(GenSpan {
            trace,
            id: a_id,
            parent: Some(client_id),
            service: "A",
            kind: "SERVER",
            start_ns: ns(a_start),
            end_ns: ns(a_end),
            error: a_error,
        });
        let root_end = a_end + NET_MS;
        g.spans.push(GenSpan {
            trace,
            id: client_id,
            parent: None,
            service: "client",
            kind: "CLIENT",
            start_ns: ns(t_ms),
            end_ns: ns(root_end),
            error: a_error,
        });
        g.a_own_ms.push(a_own);
        g.roots
            .push(((ns(root_end) - ns(t_ms)) as f64 / 1e6, a_error));
        // Each request is written when its last span ends: order is not
        // by start, as an exporter's batches are not.
    }
    g
}

fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(A[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The two JSON mappings of OTLP the import reads.
#[derive(Clone, Copy, Debug)]
pub enum OtlpStyle {
    /// The collector's file exporter: hex ids, `kind` and `status.code` as
    /// numbers, times as strings.
    Collector,
    /// protobuf's `MessageToJson`: base64 ids, enums by name, times as
    /// strings.
    Protobuf,
}

/// OTLP JSON lines: one `ExportTraceServiceRequest` per batch of spans, a
/// resource per service in each.
pub fn otlp(spans: &[GenSpan], style: OtlpStyle, batch: usize) -> String {
    let mut out = String::new();
    for chunk in spans.chunks(batch) {
        let mut resources = Vec::new();
        for service in ["client", "A", "B"] {
            let mine: Vec<Value> = chunk
                .iter()
                .filter(|s| s.service == service)
                .map(|s| otlp_span(s, style))
                .collect();
            if mine.is_empty() {
                continue;
            }
            resources.push(json!({
                "resource": {"attributes": [
                    {"key": "service.name", "value": {"stringValue": service}},
                    {"key": "telemetry.sdk.language", "value": {"stringValue": "python"}}
                ]},
                "scopeSpans": [{"scope": {"name": "opentelemetry.instrumentation.requests"}, "spans": mine}]
            }));
        }
        out.push_str(&json!({"resourceSpans": resources}).to_string());
        out.push('\n');
    }
    out
}

fn otlp_span(s: &GenSpan, style: OtlpStyle) -> Value {
    let (trace, id, parent, kind, status) = match style {
        OtlpStyle::Collector => (
            format!("{:032x}", s.trace),
            format!("{:016x}", s.id),
            s.parent.map_or(String::new(), |p| format!("{p:016x}")),
            json!(if s.kind == "SERVER" { 2 } else { 3 }),
            if s.error {
                json!({"code": 2, "message": "boom"})
            } else {
                json!({})
            },
        ),
        OtlpStyle::Protobuf => (
            base64(&s.trace.to_be_bytes()),
            base64(&s.id.to_be_bytes()),
            s.parent.map_or(String::new(), |p| base64(&p.to_be_bytes())),
            json!(format!("SPAN_KIND_{}", s.kind)),
            if s.error {
                json!({"code": "STATUS_CODE_ERROR"})
            } else {
                json!({"code": "STATUS_CODE_UNSET"})
            },
        ),
    };
    let mut v = json!({
        "traceId": trace,
        "spanId": id,
        "name": format!("{} {}", s.kind, s.service),
        "kind": kind,
        "startTimeUnixNano": s.start_ns.to_string(),
        "endTimeUnixNano": s.end_ns.to_string(),
        "status": status,
    });
    if !parent.is_empty() {
        v["parentSpanId"] = json!(parent);
    }
    v
}

/// Jaeger's JSON (`{"data": [trace, ...]}`), times in µs as Jaeger keeps
/// them.
pub fn jaeger(spans: &[GenSpan]) -> String {
    let mut traces: Vec<(u128, Vec<Value>)> = Vec::new();
    for s in spans {
        let mut tags =
            vec![json!({"key": "span.kind", "type": "string", "value": s.kind.to_lowercase()})];
        if s.error {
            tags.push(json!({"key": "error", "type": "bool", "value": true}));
        }
        let references: Vec<Value> = s
            .parent
            .map(|p| json!({"refType": "CHILD_OF", "traceID": format!("{:032x}", s.trace), "spanID": format!("{p:016x}")}))
            .into_iter()
            .collect();
        let start_us = s.start_ns / 1000;
        let span = json!({
            "traceID": format!("{:032x}", s.trace),
            "spanID": format!("{:016x}", s.id),
            "operationName": format!("{} {}", s.kind, s.service),
            "references": references,
            "startTime": start_us,
            "duration": s.end_ns / 1000 - start_us,
            "tags": tags,
            "logs": [],
            "processID": match s.service { "client" => "p1", "A" => "p2", _ => "p3" },
            "warnings": null
        });
        match traces.iter_mut().find(|(t, _)| *t == s.trace) {
            Some((_, list)) => list.push(span),
            None => traces.push((s.trace, vec![span])),
        }
    }
    let data: Vec<Value> = traces
        .into_iter()
        .map(|(t, spans)| {
            json!({
                "traceID": format!("{t:032x}"),
                "spans": spans,
                "processes": {
                    "p1": {"serviceName": "client", "tags": []},
                    "p2": {"serviceName": "A", "tags": []},
                    "p3": {"serviceName": "B", "tags": []}
                },
                "warnings": null
            })
        })
        .collect();
    json!({"data": data, "total": 0, "limit": 0, "offset": 0, "errors": null}).to_string()
}

/// The service named `name` of a model document.
pub fn service<'a>(model: &'a Value, name: &str) -> &'a Value {
    model["services"]
        .as_array()
        .and_then(|list| list.iter().find(|s| s["name"] == name))
        .unwrap_or_else(|| panic!("no service {name} in {model:#}"))
}
