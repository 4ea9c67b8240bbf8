//! gRPC service configs (JSON): `methodConfig[]` with `timeout`,
//! `retryPolicy` and `hedgingPolicy` (gRFC A6), and the channel's
//! `retryThrottling`.
//!
//! A service config belongs to one channel, that is one server: each file is
//! one upstream, named after the first gRPC service its method configs name
//! (`helloworld.Greeter` → `Greeter`). Each entry of a method config's
//! `name` list is an edge, since each names a kind of call with its own
//! policies.

use super::read::{Cx, DurationSyntax::Proto};
use super::skeleton::{upstream, Edge};
use super::tree::{index, join, Node};
use super::{Input, Out};
use serde_json::{json, Map, Value};

/// gRPC clamps `maxAttempts` of retries and hedges to 5 (A6: "If a larger
/// value is specified, it is treated as 5").
const MAX_ATTEMPTS_CLAMP: u64 = 5;

/// gRPC's retries and hedges draw ±20% jitter in C-core; A6 and grpc-java
/// and grpc-go draw uniformly in [0, d]. The model's reference semantics
/// take gRPC's as random(0.8, 1.2) × d (docs/import-config.md says how to
/// model the others).
const GRPC_JITTER_FACTOR: f64 = 0.2;
/// The least duration the model's timeouts and hedge delays take, ms (1 ns):
/// what a gRPC duration of 0 is written as.
const LEAST_MS: f64 = 0.000_001;

/// `ms` of the duration `key` at `path`, for a model field that must be
/// above 0: a shorter one (0) is the least the model has, said so.
fn above_zero(cx: &mut Cx, path: &str, key: &str, ms: f64, meaning: &str) -> f64 {
    if ms < LEAST_MS {
        cx.unmapped(
            path,
            format!("a {key} of {ms} ms ({meaning}): the model's must be above 0, so it is {LEAST_MS} ms (1 ns)"),
        );
    }
    ms.max(LEAST_MS)
}

pub(crate) fn import(inputs: &mut [Input], out: &mut Out) {
    super::for_each_document(inputs, |cx, doc, path| import_config(cx, doc, path, out));
    super::nothing_found(inputs, out, "methodConfig with a name");
}

fn import_config(cx: &mut Cx, doc: &Node, path: &str, out: &mut Out) {
    let Some(mut f) = cx.fields(doc, path) else {
        return;
    };
    let budget = f
        .take("retryThrottling")
        .and_then(|(n, p)| throttling(cx, n, &p));
    let methods = f.take("methodConfig");
    let mut server: Option<String> = None;
    if let Some((list, lpath)) = methods {
        if let Some(items) = cx.list(list, &lpath) {
            // The server's name: the first gRPC service named.
            server = items.iter().find_map(|m| {
                m.get("name")
                    .and_then(|n| match &n.value {
                        super::tree::Value::Seq(names) => names.first().cloned(),
                        _ => None,
                    })
                    .and_then(|n| n.get("service").cloned())
                    .and_then(|s| match s.value {
                        super::tree::Value::Str(s) if !s.is_empty() => {
                            Some(s.rsplit('.').next().unwrap_or(&s).to_string())
                        }
                        _ => None,
                    })
            });
            let target = upstream(&mut out.upstreams, server.as_deref().unwrap_or("server"));
            for (i, m) in items.iter().enumerate() {
                method_config(cx, m, &index(&lpath, i), &target, budget.as_ref(), out);
            }
        }
    }
    if budget.is_some() && server.is_none() && out.edges.is_empty() {
        out.notes.push(
            "retryThrottling applies to retries and hedges, and no method config retries or hedges"
                .into(),
        );
    }
    f.finish(
        cx,
        &[
            ("loadBalancingConfig", "the load-balancing policy: the model's balancer is set per call step (balancer), and gRPC's pick_first has no counterpart"),
            ("loadBalancingPolicy", "the load-balancing policy: the model's balancer is set per call step (balancer), and gRPC's pick_first has no counterpart"),
            ("healthCheckConfig", "client-side health checking: the model has no health checks"),
        ],
        "a gRPC service config",
    );
}

fn throttling(cx: &mut Cx, node: &Node, path: &str) -> Option<Value> {
    let mut f = cx.fields(node, path)?;
    let mut positive = |key: &str, limit: f64| match f.take(key) {
        Some((n, p)) => {
            let v = cx.number(n, &p)?;
            if v <= 0.0 || v > limit {
                cx.problem(
                    &p,
                    n,
                    format!("{key} must be above 0 and at most {limit}, found {v}"),
                );
                return None;
            }
            Some(v)
        }
        None => {
            cx.problem(path, node, format!("retryThrottling needs {key}"));
            None
        }
    };
    let max = positive("maxTokens", 1000.0);
    let ratio = positive("tokenRatio", f64::MAX);
    f.finish(cx, &[], "retryThrottling");
    Some(json!({"kind": "grpc_throttling", "max_tokens": max?, "token_ratio": ratio?}))
}

fn method_config(
    cx: &mut Cx,
    node: &Node,
    path: &str,
    target: &str,
    budget: Option<&Value>,
    out: &mut Out,
) {
    let Some(mut f) = cx.fields(node, path) else {
        return;
    };
    let mut names = Vec::new();
    match f.take("name") {
        Some((n, p)) => {
            if let Some(items) = cx.list(n, &p) {
                for (i, item) in items.iter().enumerate() {
                    if let Some(name) = method_name(cx, item, &index(&p, i)) {
                        names.push(name);
                    }
                }
            }
        }
        None => cx.problem(path, node, "a method config needs a name list"),
    }
    let deadline_ms = f.take("timeout").and_then(|(n, p)| {
        let ms = cx.duration_ms(n, &p, Proto)?;
        Some(above_zero(
            cx,
            &p,
            "timeout",
            ms,
            "every call past its deadline at once",
        ))
    });
    let retry = f.take("retryPolicy");
    let hedge = f.take("hedgingPolicy");
    if retry.is_some() && hedge.is_some() {
        cx.problem(
            path,
            node,
            "only one of retryPolicy and hedgingPolicy may be set",
        );
    }
    let mut policies = Map::new();
    if let Some((n, p)) = retry {
        if let Some((timeout, r)) = retry_policy(cx, n, &p, budget) {
            if let Some(t) = timeout {
                policies.insert("timeout_ms".into(), json!(t));
            }
            policies.insert("retry".into(), r);
        }
    }
    if let Some((n, p)) = hedge {
        if let Some(h) = hedging_policy(cx, n, &p) {
            if let Some(b) = budget {
                // Hedges draw on the same throttling tokens as retries; the
                // model keeps a budget in the retry policy, asked before
                // every retry and every hedge.
                policies.insert("retry".into(), json!({"max_attempts": 1, "budget": b}));
            }
            policies.insert("idempotent".into(), json!(true));
            policies.insert("hedge".into(), h);
        }
    }
    // gRPC sends its deadline to the server (grpc-timeout).
    policies.insert("deadline".into(), json!({"propagate": true}));
    f.finish(
        cx,
        &[
            ("waitForReady", "wait-for-ready: the model fails an attempt on a down instance at once (or after connect_timeout_ms) instead of waiting for the channel"),
            ("maxRequestMessageBytes", "message sizes: the model has no payload sizes"),
            ("maxResponseMessageBytes", "message sizes: the model has no payload sizes"),
        ],
        "a gRPC method config",
    );
    for name in names {
        out.edges.push(Edge {
            target: target.to_string(),
            origin: format!("method config {path}, {name}"),
            deadline_ms,
            policies: policies.clone(),
        });
    }
}

/// `service/method`, `service`, or every method of every service.
fn method_name(cx: &mut Cx, node: &Node, path: &str) -> Option<String> {
    let mut f = cx.fields(node, path)?;
    let service = f
        .take("service")
        .and_then(|(n, p)| cx.string(n, &p))
        .unwrap_or_default();
    let method = f
        .take("method")
        .and_then(|(n, p)| cx.string(n, &p))
        .unwrap_or_default();
    f.finish(cx, &[], "a method name");
    Some(match (service.is_empty(), method.is_empty()) {
        (true, _) => "every method".to_string(),
        (false, true) => format!("every method of {service}"),
        (false, false) => format!("{service}/{method}"),
    })
}

fn max_attempts(cx: &mut Cx, f: &mut super::read::Fields, node: &Node, path: &str) -> Option<u64> {
    let Some((n, p)) = f.take("maxAttempts") else {
        cx.problem(path, node, "maxAttempts is required");
        return None;
    };
    let v = cx.count(n, &p)?;
    if v < 2 {
        cx.problem(&p, n, format!("maxAttempts must be 2 or more, found {v}"));
        return None;
    }
    if v > MAX_ATTEMPTS_CLAMP {
        cx.unmapped(
            &p,
            format!(
                "maxAttempts {v}: gRPC treats it as {MAX_ATTEMPTS_CLAMP}, and so does the model"
            ),
        );
    }
    Some(v.min(MAX_ATTEMPTS_CLAMP))
}

fn positive_duration(
    cx: &mut Cx,
    f: &mut super::read::Fields,
    node: &Node,
    path: &str,
    key: &str,
) -> Option<f64> {
    let Some((n, p)) = f.take(key) else {
        cx.problem(path, node, format!("{key} is required"));
        return None;
    };
    let v = cx.duration_ms(n, &p, Proto)?;
    if v <= 0.0 {
        cx.problem(&p, n, format!("{key} must be above 0"));
        return None;
    }
    Some(v)
}

/// The retry policy, and the per-attempt timeout when it has one.
fn retry_policy(
    cx: &mut Cx,
    node: &Node,
    path: &str,
    budget: Option<&Value>,
) -> Option<(Option<f64>, Value)> {
    let mut f = cx.fields(node, path)?;
    let attempts = max_attempts(cx, &mut f, node, path);
    let initial = positive_duration(cx, &mut f, node, path, "initialBackoff");
    let max = positive_duration(cx, &mut f, node, path, "maxBackoff");
    let multiplier = match f.take("backoffMultiplier") {
        Some((n, p)) => cx
            .number(n, &p)
            .filter(|v| {
                if *v <= 0.0 {
                    cx.problem(&p, n, "backoffMultiplier must be above 0");
                }
                *v > 0.0
            })
            .map(|v| {
                if v < 1.0 {
                    cx.unmapped(
                        &p,
                        format!("a backoffMultiplier of {v}, below 1 (each wait shorter than the last): the model's backoff never shrinks, so it is written as 1 (every wait up to initialBackoff)"),
                    );
                }
                v.max(1.0)
            }),
        None => {
            cx.problem(path, node, "backoffMultiplier is required");
            None
        }
    };
    let retry_on = match f.take("retryableStatusCodes") {
        Some((n, p)) => status_codes(cx, n, &p),
        None => {
            cx.problem(path, node, "retryableStatusCodes is required");
            None
        }
    };
    let per_attempt = f.take("perAttemptRecvTimeout").and_then(|(n, p)| {
        let ms = cx.duration_ms(n, &p, Proto)?;
        Some(above_zero(
            cx,
            &p,
            "perAttemptRecvTimeout",
            ms,
            "every attempt timed out at once",
        ))
    });
    f.finish(cx, &[], "a gRPC retryPolicy");
    let mut r = Map::new();
    r.insert("max_attempts".into(), json!(attempts?));
    r.insert(
        "backoff".into(),
        json!({"kind": "exponential", "base_ms": initial?, "multiplier": multiplier?, "cap_ms": max?}),
    );
    r.insert("jitter".into(), json!("proportional"));
    r.insert("jitter_factor".into(), json!(GRPC_JITTER_FACTOR));
    r.insert("retry_on".into(), json!(retry_on?));
    if let Some(b) = budget {
        r.insert("budget".into(), b.clone());
    }
    Some((per_attempt, Value::Object(r)))
}

fn hedging_policy(cx: &mut Cx, node: &Node, path: &str) -> Option<Value> {
    let mut f = cx.fields(node, path)?;
    let attempts = max_attempts(cx, &mut f, node, path);
    // A6: without hedgingDelay (or with 0) every copy is sent at once; the
    // model's delay must be above 0, so "at once" is its least delay.
    let delay = match f.take("hedgingDelay") {
        Some((n, p)) => cx.duration_ms(n, &p, Proto).map(|d| (d, p)),
        None => Some((0.0, join(path, "hedgingDelay"))),
    }
    .map(|(d, p)| above_zero(cx, &p, "hedgingDelay", d, "every copy at once"));
    // A6: nonFatalStatusCodes is optional, and without it every failure is
    // fatal; the model's default is the opposite, so it is always written.
    let non_fatal = match f.take("nonFatalStatusCodes") {
        Some((n, p)) => status_codes(cx, n, &p),
        None => Some(Vec::new()),
    };
    f.finish(cx, &[], "a gRPC hedgingPolicy");
    Some(json!({
        "delay_ms": delay?,
        "max_hedges": attempts? - 1,
        "target": "any_other",
        "non_fatal": non_fatal?,
    }))
}

/// gRPC status codes (names in any case, or numbers) as the model's
/// outcomes; codes the model never produces are unmapped.
fn status_codes(cx: &mut Cx, node: &Node, path: &str) -> Option<Vec<&'static str>> {
    let items = cx.list(node, path)?;
    let mut out: Vec<&'static str> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let p = index(path, i);
        let Some(code) = cx.string(item, &p) else {
            continue;
        };
        let name = match code.trim().parse::<u32>() {
            Ok(n) => CODES.get(n as usize).copied().unwrap_or("?").to_string(),
            Err(_) => code.trim().to_ascii_uppercase(),
        };
        let outcomes: &[&'static str] = match name.as_str() {
            "UNAVAILABLE" => &["rejected", "connection_refused"],
            "DEADLINE_EXCEEDED" => &["deadline_exceeded"],
            "INTERNAL" | "UNKNOWN" => &["error"],
            "RESOURCE_EXHAUSTED" => &["rate_limited"],
            n if CODES.contains(&n) => {
                cx.unmapped(
                    &p,
                    format!("status {n}: the model's calls never fail with it"),
                );
                &[]
            }
            _ => {
                cx.problem(&p, item, format!("{code:?} is not a gRPC status code"));
                &[]
            }
        };
        for o in outcomes {
            if !out.contains(o) {
                out.push(o);
            }
        }
    }
    Some(out)
}

/// gRPC's status codes, by number.
const CODES: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];
