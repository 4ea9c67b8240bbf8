//! The model an import writes: a whole model that `stormsim check` takes as
//! it is, so that a user can run the imported policies at once and then
//! replace the placeholders (arrival rates, work, workers) with their own.
//!
//! Its shape: the service whose configuration was imported is `app`; each
//! upstream it calls (an Envoy cluster, an Istio host, a resilience4j
//! instance, a gRPC server) is a service of its own; each edge from `app` to
//! an upstream is a call step of `app` carrying the imported policies. A
//! workload per edge sends requests to `app`, each of a class that only that
//! edge's step serves, so that an edge's overall timeout (Envoy's route
//! timeout, Istio's `timeout`, gRPC's `timeout`: time for all attempts
//! together) is that workload's `deadline_ms`, which bounds every attempt
//! and backoff of the call, as those timeouts do. Call steps, not workload
//! edges, carry the policies because only a call step can hedge.

use crate::Source;
use serde_json::{json, Map, Value};

/// One edge from `app` to an upstream.
#[derive(Clone, Debug)]
pub(crate) struct Edge {
    /// The upstream service it calls.
    pub target: String,
    /// Where it comes from in the input, for notes (`route "checkout" of
    /// virtual host "backend"`).
    pub origin: String,
    /// Time for the whole call, all attempts included.
    pub deadline_ms: Option<f64>,
    /// The call step's policies (`timeout_ms`, `retry`, `breaker`…), in the
    /// order they are written.
    pub policies: Map<String, Value>,
}

/// An upstream service.
#[derive(Clone, Debug)]
pub(crate) struct Upstream {
    pub name: String,
    /// Instances, when the input says (Envoy's endpoints).
    pub instances: Option<u64>,
    /// What it stands for in the input, when the name had to change.
    pub stands_for: Option<String>,
}

/// Placeholder arrival rate of each workload, requests per second.
const PLACEHOLDER_RATE_PER_S: f64 = 50.0;
/// Placeholder run length, seconds.
const PLACEHOLDER_DURATION_S: f64 = 60.0;
/// Placeholder mean work of each upstream, ms.
const PLACEHOLDER_WORK_MS: f64 = 10.0;
/// Placeholder workers of each upstream instance.
const PLACEHOLDER_WORKERS: u64 = 16;

/// A name the model accepts for a service, workload or class (and that a
/// parameter path can select): ASCII letters, digits, `-` and `_`, every
/// other run of characters one `-`.
pub(crate) fn model_name(raw: &str) -> String {
    let mut out = String::new();
    for c in raw.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_matches('-').to_string();
    if out.is_empty() {
        "upstream".to_string()
    } else if out == "run" {
        // The model's name for the run's own figures in its tables.
        "run-upstream".to_string()
    } else {
        out
    }
}

/// Adds `name` to `upstreams` unless there, and returns it.
pub(crate) fn upstream(upstreams: &mut Vec<Upstream>, raw: &str) -> String {
    let name = model_name(raw);
    if !upstreams.iter().any(|u| u.name == name) {
        upstreams.push(Upstream {
            name: name.clone(),
            instances: None,
            stands_for: (name != raw).then(|| raw.to_string()),
        });
    }
    name
}

/// The whole model for `edges` to `upstreams`, and the notes that say what
/// in it is a placeholder.
pub(crate) fn build(
    source: Source,
    files: &[String],
    upstreams: &[Upstream],
    edges: &[Edge],
) -> (Value, Vec<String>) {
    let label = match source {
        Source::Envoy => "envoy",
        Source::Istio => "istio",
        Source::Resilience4j => "resilience4j",
        Source::Grpc => "grpc",
        Source::Otlp => "otlp",
        Source::Jaeger => "jaeger",
    };
    let mut notes = Vec::new();
    let mut caller = "app".to_string();
    while upstreams.iter().any(|u| u.name == caller) {
        caller.push_str("-caller");
    }
    // Edge names: the upstream's, with -2, -3… for further edges to it.
    let mut names: Vec<String> = Vec::with_capacity(edges.len());
    for e in edges {
        let mut name = e.target.clone();
        let mut n = 1;
        while names.contains(&name) {
            n += 1;
            name = format!("{}-{n}", e.target);
        }
        names.push(name);
    }
    let several = edges.len() > 1;
    let mut workloads = Vec::new();
    let mut steps = Vec::new();
    for (e, name) in edges.iter().zip(&names) {
        let mut step = Map::new();
        step.insert("call".into(), json!(e.target));
        if several {
            step.insert("only_classes".into(), json!([name]));
        }
        step.extend(e.policies.clone());
        steps.push(Value::Object(step));
        let mut w = Map::new();
        let wname = if several {
            format!("client-{name}")
        } else {
            "client".to_string()
        };
        w.insert("name".into(), json!(wname));
        w.insert("target".into(), json!(caller));
        w.insert(
            "arrival".into(),
            json!({"kind": "poisson", "rate_per_s": PLACEHOLDER_RATE_PER_S}),
        );
        w.insert("duration_s".into(), json!(PLACEHOLDER_DURATION_S));
        if several {
            w.insert("class".into(), json!(name));
        }
        if let Some(d) = e.deadline_ms {
            w.insert("deadline_ms".into(), json!(d));
        }
        workloads.push(Value::Object(w));
        notes.push(format!(
            "edge {caller} -> {} ({}): workload {wname}",
            e.target, e.origin
        ));
    }
    let mut services = vec![json!({"name": caller, "steps": steps})];
    let mut all_have_instances = true;
    for u in upstreams {
        let mut s = Map::new();
        s.insert("name".into(), json!(u.name));
        s.insert("workers".into(), json!(PLACEHOLDER_WORKERS));
        // A hedge goes to another replica than its try's: an upstream
        // that is hedged to gets one instance per copy, or its hedges
        // would never go.
        let hedged = edges
            .iter()
            .filter(|e| e.target == u.name)
            .filter_map(|e| e.policies.get("hedge")?.get("max_hedges")?.as_u64())
            .max();
        let instances = match (u.instances, hedged) {
            (Some(n), _) => Some(n.max(1)),
            (None, Some(h)) => {
                notes.push(format!(
                    "service {} has {} instances (a placeholder), one per copy of a hedged call",
                    u.name,
                    h + 1
                ));
                Some(h + 1)
            }
            (None, None) => None,
        };
        match instances {
            Some(n) => {
                s.insert("instances".into(), json!(n));
            }
            None => all_have_instances = false,
        }
        s.insert(
            "steps".into(),
            json!([{"work": {"kind": "exponential", "mean_ms": PLACEHOLDER_WORK_MS}}]),
        );
        services.push(Value::Object(s));
        if let Some(raw) = &u.stands_for {
            notes.push(format!("service {} stands for {raw:?}", u.name));
        }
    }
    notes.push(format!(
        "placeholders to edit: every workload's arrival (Poisson, {PLACEHOLDER_RATE_PER_S} requests/s) and duration_s ({PLACEHOLDER_DURATION_S}); every upstream's work (exponential, mean {PLACEHOLDER_WORK_MS} ms) and workers ({PLACEHOLDER_WORKERS}){}; service {caller} (the caller whose configuration this is) does no work of its own",
        if all_have_instances {
            ""
        } else {
            " and, where the input gives none, instances (1)"
        }
    ));
    let description = format!(
        "Imported by `stormsim import {label}` from {}. The call steps of {caller} carry the imported policies; arrival rates, work and workers are placeholders to replace with measured values.",
        files.join(", ")
    );
    let model = json!({
        "name": format!("imported-{label}"),
        "description": description,
        "workloads": workloads,
        "services": services,
    });
    (model, notes)
}
