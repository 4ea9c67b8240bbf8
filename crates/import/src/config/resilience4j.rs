//! resilience4j instances in a Spring Boot `application.yml`
//! (`resilience4j-spring-boot`): `circuitbreaker`, `retry`, `bulkhead`,
//! `ratelimiter` and `timelimiter`, each with `configs` and `instances`.
//!
//! Each instance name is a backend, so an upstream service, and the edge to
//! it carries every module's instance of that name (as the annotations
//! `@CircuitBreaker(name = "backendA")`, `@Retry(name = "backendA")` name one
//! backend). An instance's settings are resilience4j's defaults, overridden
//! by its `baseConfig` (or else `configs.default`), overridden by its own;
//! every setting is written out, defaults included, so the model says what
//! runs. Keys are compared as Spring's relaxed binding does
//! (`failure-rate-threshold` = `failureRateThreshold`), dotted keys
//! (`resilience4j.circuitbreaker:`) are nested keys, and the documents of a
//! multi-document file are merged in order, later ones winning.

use super::read::{norm, Cx, DurationSyntax::Spring};
use super::skeleton::{upstream, Edge};
use super::tree::{index, join, Node, Value as Y, MAX_DEPTH};
use super::{Input, Out};
use serde_json::{json, Map, Value};

#[derive(Clone, Copy)]
enum Kind {
    Ms,
    Number,
    Count,
    Bool,
    Window,
}

/// A resilience4j setting the model carries: its key, the model field it
/// sets, how it is read, and resilience4j's default.
struct Setting {
    key: &'static str,
    field: &'static str,
    kind: Kind,
    default: Option<f64>,
}

const fn s(key: &'static str, field: &'static str, kind: Kind, default: Option<f64>) -> Setting {
    Setting {
        key,
        field,
        kind,
        default,
    }
}

/// The modules the model has, in the order their policies are written on a
/// call step.
struct Module {
    name: &'static str,
    settings: &'static [Setting],
    unmapped: &'static [(&'static str, &'static str)],
}

const HEALTH: &str =
    "monitoring (health indicator, events): no effect on calls, and the model has none";

/// Why a `fallbackMethod` is not imported, and what to write instead. It
/// belongs to the annotations (`@CircuitBreaker(name = "backendA",
/// fallbackMethod = "…")`, and likewise `@Retry`, `@Bulkhead`,
/// `@RateLimiter`, `@TimeLimiter`), but some put it in configuration too:
/// either way it names Java code, whose answer the model cannot know.
const FALLBACK_METHOD: &str = "a fallback method: Java code, which the model cannot run; model what it does with fallback on the call step it guards, a chain of kinds stale (a cached answer up to max_staleness_ms old; needs the step's cache), default (a fixed answer and its work), call (another service, with its own policies) or fail (fail explicitly, as for writes), and on (the failures that take it; resilience4j's fallback takes every exception its signature accepts)";

/// Spring Cloud Gateway's CircuitBreaker filter (`filters: [{name:
/// CircuitBreaker, args: {name, fallbackUri}}]`) forwards a failed request
/// to a handler or another route; the gateway's routes are not read.
const FALLBACK_URI: &str = "a Spring Cloud Gateway fallback: the failed request is forwarded to a handler or another route, which the import does not read (only resilience4j's instances); model it with fallback on the call step: call for a route to another service, default for a local handler";

/// `fallbackMethod` among the keys of a resilience4j level that are known
/// but not imported: wherever it is put, it is reported as what it is.
const FALLBACK_KEY: (&str, &str) = ("fallbackMethod", FALLBACK_METHOD);

const TIMELIMITER: Module = Module {
    name: "timelimiter",
    settings: &[
        s("timeoutDuration", "timeout_ms", Kind::Ms, Some(1000.0)),
        s("cancelRunningFuture", "cancel", Kind::Bool, Some(1.0)),
    ],
    unmapped: &[("eventConsumerBufferSize", HEALTH)],
};

const RETRY: Module = Module {
    name: "retry",
    settings: &[
        s("maxAttempts", "max_attempts", Kind::Count, Some(3.0)),
        s("maxRetryAttempts", "max_attempts", Kind::Count, None),
        s("waitDuration", "wait_ms", Kind::Ms, Some(500.0)),
        s("enableExponentialBackoff", "exponential", Kind::Bool, Some(0.0)),
        s("exponentialBackoffMultiplier", "multiplier", Kind::Number, Some(1.5)),
        s("exponentialMaxWaitDuration", "cap_ms", Kind::Ms, None),
        s("enableRandomizedWait", "randomized", Kind::Bool, Some(0.0)),
        s("randomizedWaitFactor", "jitter_factor", Kind::Number, Some(0.5)),
    ],
    unmapped: &[
        ("retryExceptions", "exception classes: the model retries every transient failure (timeout, error, 503, refused connection, deadline exceeded); edit retry_on to narrow it"),
        ("ignoreExceptions", "exception classes: the model retries every transient failure (timeout, error, 503, refused connection, deadline exceeded); edit retry_on to narrow it"),
        ("retryExceptionPredicate", "a Java predicate: the model cannot run it; edit retry_on instead"),
        ("resultPredicate", "a Java predicate on results: the model's successes are never retried"),
        ("failAfterMaxAttempts", "how the last failure is reported: no effect on the calls made"),
        ("intervalBiFunction", "a custom Java interval function: the model's backoff is fixed or exponential"),
        ("eventConsumerBufferSize", HEALTH),
    ],
};

const CIRCUITBREAKER: Module = Module {
    name: "circuitbreaker",
    settings: &[
        s("failureRateThreshold", "failure_rate_threshold", Kind::Number, Some(50.0)),
        s("slowCallRateThreshold", "slow_call_rate_threshold", Kind::Number, Some(100.0)),
        s("slowCallDurationThreshold", "slow_call_duration_threshold_ms", Kind::Ms, Some(60_000.0)),
        s("slidingWindowType", "sliding_window_type", Kind::Window, Some(0.0)),
        s("slidingWindowSize", "sliding_window_size", Kind::Count, Some(100.0)),
        s("minimumNumberOfCalls", "minimum_number_of_calls", Kind::Count, Some(100.0)),
        s("waitDurationInOpenState", "wait_duration_in_open_state_ms", Kind::Ms, Some(60_000.0)),
        s("permittedNumberOfCallsInHalfOpenState", "permitted_number_of_calls_in_half_open_state", Kind::Count, Some(10.0)),
        s("automaticTransitionFromOpenToHalfOpenEnabled", "automatic_transition_from_open_to_half_open_enabled", Kind::Bool, Some(0.0)),
        s("maxWaitDurationInHalfOpenState", "max_wait_duration_in_half_open_state_ms", Kind::Ms, Some(0.0)),
    ],
    unmapped: &[
        ("registerHealthIndicator", HEALTH),
        ("allowHealthIndicatorToFail", HEALTH),
        ("eventConsumerBufferSize", HEALTH),
        ("recordExceptions", "exception classes: the model's breaker records every failure of the call"),
        ("ignoreExceptions", "exception classes: the model's breaker records every failure of the call"),
        ("recordFailurePredicate", "a Java predicate: the model's breaker records every failure of the call"),
        ("recordResultPredicate", "a Java predicate on results: the model's successes are never failures"),
        ("ignoreExceptionPredicate", "a Java predicate: the model's breaker records every failure of the call"),
        ("writableStackTraceEnabled", "stack traces: no effect on calls"),
        ("enableExponentialBackoff", "a growing wait in the open state: the model's breaker waits wait_duration_in_open_state_ms each time"),
        ("exponentialBackoffMultiplier", "a growing wait in the open state: the model's breaker waits wait_duration_in_open_state_ms each time"),
        ("exponentialMaxWaitDurationInOpenState", "a growing wait in the open state: the model's breaker waits wait_duration_in_open_state_ms each time"),
        ("enableRandomizedWait", "a randomized wait in the open state: the model's breaker waits wait_duration_in_open_state_ms exactly"),
        ("randomizedWaitFactor", "a randomized wait in the open state: the model's breaker waits wait_duration_in_open_state_ms exactly"),
        ("initialState", "a breaker starting disabled, forced open or metrics-only: the model's starts closed"),
    ],
};

const BULKHEAD: Module = Module {
    name: "bulkhead",
    settings: &[
        s(
            "maxConcurrentCalls",
            "max_concurrent_calls",
            Kind::Count,
            Some(25.0),
        ),
        s("maxWaitDuration", "max_wait_ms", Kind::Ms, Some(0.0)),
    ],
    unmapped: &[
        (
            "fairCallHandlingStrategyEnabled",
            "fairness among waiting calls: the model's waiting calls take slots in arrival order",
        ),
        (
            "writableStackTraceEnabled",
            "stack traces: no effect on calls",
        ),
        ("eventConsumerBufferSize", HEALTH),
    ],
};

const RATELIMITER: Module = Module {
    name: "ratelimiter",
    settings: &[
        s(
            "limitForPeriod",
            "limit_for_period",
            Kind::Count,
            Some(50.0),
        ),
        s(
            "limitRefreshPeriod",
            "limit_refresh_period_ms",
            Kind::Ms,
            Some(0.0005),
        ),
        s("timeoutDuration", "timeout_ms", Kind::Ms, Some(5000.0)),
    ],
    unmapped: &[
        ("registerHealthIndicator", HEALTH),
        ("allowHealthIndicatorToFail", HEALTH),
        ("eventConsumerBufferSize", HEALTH),
        ("subscribeForEvents", HEALTH),
        (
            "writableStackTraceEnabled",
            "stack traces: no effect on calls",
        ),
        (
            "drainPermissionsOnResult",
            "a Java predicate on results: the model's rate limiter spends one permit per call",
        ),
    ],
};

const MODULES: [&Module; 5] = [
    &TIMELIMITER,
    &RETRY,
    &CIRCUITBREAKER,
    &BULKHEAD,
    &RATELIMITER,
];

/// Whether a value fits a setting's range.
type Fits = fn(f64) -> bool;

/// What resilience4j's config builders require of a setting (they refuse
/// anything else when the application starts, so an input outside it is a
/// problem, not a model): `None` for a setting any value read fits.
fn required(module: &str, field: &str) -> Option<(Fits, &'static str)> {
    let percentage: Fits = |v| v > 0.0 && v <= 100.0;
    let at_least_one: Fits = |v| v >= 1.0;
    let positive: Fits = |v| v > 0.0;
    Some(match (module, field) {
        (_, "failure_rate_threshold" | "slow_call_rate_threshold") => {
            (percentage, "above 0 and at most 100")
        }
        (
            _,
            "sliding_window_size"
            | "minimum_number_of_calls"
            | "permitted_number_of_calls_in_half_open_state"
            | "max_attempts"
            | "limit_for_period",
        ) => (at_least_one, "at least 1"),
        (
            _,
            "slow_call_duration_threshold_ms"
            | "wait_duration_in_open_state_ms"
            | "limit_refresh_period_ms"
            | "cap_ms",
        )
        | ("timelimiter", "timeout_ms") => (positive, "above 0"),
        (_, "multiplier") => (at_least_one, "at least 1"),
        (_, "jitter_factor") => (|v| v < 1.0, "below 1"),
        _ => return None,
    })
}

/// One `configs.X` or `instances.X` entry, read.
struct Layer {
    base: Option<(String, String, Node)>,
    values: Map<String, Value>,
}

pub(crate) fn import(inputs: &mut [Input], out: &mut Out) {
    for input in inputs.iter_mut() {
        let cx = &mut input.cx;
        let mut root: Option<Node> = None;
        for doc in &input.docs {
            let doc = expand(doc, 0);
            root = Some(match root {
                None => doc,
                Some(r) => merge(r, doc),
            });
        }
        if input.docs.len() > 1 {
            out.notes.push(format!(
                "{}: {} documents merged in order, later settings winning (Spring profiles are not told apart)",
                cx.file,
                input.docs.len()
            ));
        }
        if let Some(root) = root {
            import_root(cx, &root, out);
        }
    }
    out.notes.push(
        "resilience4j's Retry retries a call its CircuitBreaker refused (CallNotPermittedException) unless told not to; the model never retries a breaker's fast failure".into(),
    );
    super::nothing_found(inputs, out, "resilience4j instances");
}

fn import_root(cx: &mut Cx, root: &Node, out: &mut Out) {
    let Some(mut f) = cx.fields(root, "") else {
        return;
    };
    let Some((r4j, rpath)) = f.take("resilience4j") else {
        f.finish(cx, &[], "resilience4j configuration");
        return;
    };
    for (k, v) in root.entries() {
        if norm(k) != "resilience4j" {
            cx.unmapped(k, "not resilience4j configuration");
            fallbacks_outside(cx, v, k);
        }
    }
    let Some(mut mods) = cx.fields(r4j, &rpath) else {
        return;
    };
    // Instance name → that instance's policies, in the order first named.
    let mut edges: Vec<(String, Map<String, Value>)> = Vec::new();
    for m in MODULES {
        if let Some((node, path)) = mods.take(m.name) {
            module(cx, m, node, &path, &mut edges);
        }
    }
    mods.finish(
        cx,
        &[
            (
                "thread-pool-bulkhead",
                "a thread-pool bulkhead: the model's bulkhead is resilience4j's semaphore Bulkhead (a call step's bulkhead)",
            ),
            FALLBACK_KEY,
        ],
        "resilience4j",
    );
    for (name, policies) in edges {
        let target = upstream(&mut out.upstreams, &name);
        out.edges.push(Edge {
            target,
            origin: format!("resilience4j instance {name:?}"),
            deadline_ms: None,
            policies,
        });
    }
}

fn module(
    cx: &mut Cx,
    m: &Module,
    node: &Node,
    path: &str,
    edges: &mut Vec<(String, Map<String, Value>)>,
) {
    let Some(mut f) = cx.fields(node, path) else {
        return;
    };
    let mut configs: Vec<(String, Layer)> = Vec::new();
    if let Some((n, p)) = f.take("configs") {
        if cx.fields(n, &p).is_some() {
            for (name, v) in n.entries() {
                if let Some(layer) = layer(cx, m, v, &join(&p, name)) {
                    configs.push((name.clone(), layer));
                }
            }
        }
    }
    if let Some((n, p)) = f.take("instances") {
        if cx.fields(n, &p).is_some() {
            for (name, v) in n.entries() {
                let Some(own) = layer(cx, m, v, &join(&p, name)) else {
                    continue;
                };
                let Some(values) = resolve(cx, m, &configs, &own, Some(name), 0) else {
                    continue;
                };
                let policies = match edges.iter_mut().find(|(e, _)| e == name) {
                    Some((_, p)) => p,
                    None => {
                        edges.push((name.clone(), Map::new()));
                        &mut edges.last_mut().expect("just pushed").1
                    }
                };
                policy(m, &values, policies);
            }
        }
    }
    f.finish(
        cx,
        &[
            ("metrics", "metrics: no effect on calls"),
            ("circuitBreakerAspectOrder", "the order of the Spring aspects: the model's order is fixed (retry around breaker around rate limiter around timeout around bulkhead, as resilience4j's default)"),
            ("retryAspectOrder", "the order of the Spring aspects: the model's order is fixed (retry around breaker around rate limiter around timeout around bulkhead, as resilience4j's default)"),
            ("bulkheadAspectOrder", "the order of the Spring aspects: the model's order is fixed"),
            ("rateLimiterAspectOrder", "the order of the Spring aspects: the model's order is fixed"),
            ("timeLimiterAspectOrder", "the order of the Spring aspects: the model's order is fixed"),
            FALLBACK_KEY,
        ],
        &format!("resilience4j.{}", m.name),
    );
}

/// Reads one config or instance.
fn layer(cx: &mut Cx, m: &Module, node: &Node, path: &str) -> Option<Layer> {
    if matches!(node.value, Y::Null) {
        // `backendA:` with nothing under it: every setting inherited.
        return Some(Layer {
            base: None,
            values: Map::new(),
        });
    }
    let mut f = cx.fields(node, path)?;
    let base = f.take("baseConfig").and_then(|(n, p)| {
        let name = cx.string(n, &p)?;
        Some((name, p, n.clone()))
    });
    let mut values = Map::new();
    for st in m.settings {
        let Some((n, p)) = f.take(st.key) else {
            continue;
        };
        let v = match st.kind {
            Kind::Ms => cx.duration_ms(n, &p, Spring).map(|v| json!(v)),
            Kind::Number => cx.non_negative(n, &p).map(|v| json!(v)),
            Kind::Count => cx.count(n, &p).map(|v| json!(v)),
            Kind::Bool => cx.boolean(n, &p).map(|v| json!(v)),
            Kind::Window => cx.string(n, &p).and_then(|w| {
                match w.to_ascii_uppercase().replace('-', "_").as_str() {
                    "COUNT_BASED" => Some(json!("count_based")),
                    "TIME_BASED" => Some(json!("time_based")),
                    _ => {
                        cx.problem(&p, n, format!("{w:?} is not COUNT_BASED or TIME_BASED"));
                        None
                    }
                }
            }),
        };
        if let Some(v) = v {
            if st.field == "cancel" && v == json!(false) {
                cx.unmapped(
                    &p,
                    "cancelRunningFuture false: the model always cancels an attempt that timed out (its callee is told)",
                );
            }
            if m.name == "bulkhead" && st.field == "max_concurrent_calls" && v == json!(0) {
                cx.unmapped(&p, "0 concurrent calls refuses every call: the model's bulkhead needs at least 1; the default (25) is used");
                continue;
            }
            if let (Some((fits, what)), Some(x)) = (required(m.name, st.field), v.as_f64()) {
                if !fits(x) {
                    cx.problem(
                        &p,
                        n,
                        format!(
                            "{} must be {what}, as resilience4j requires, found {x}",
                            st.key
                        ),
                    );
                    continue;
                }
            }
            values.insert(st.field.to_string(), v);
        }
    }
    f.finish(
        cx,
        &[m.unmapped, &[FALLBACK_KEY]].concat(),
        &format!("a resilience4j {} config", m.name),
    );
    Some(Layer { base, values })
}

/// Reports each fallback under a key outside `resilience4j` by its own path
/// (Spring Cloud's: a `fallbackMethod`, or a Gateway route's CircuitBreaker
/// `fallbackUri`), so that it is not lost in the one warning for its
/// top-level key. The tree is at most [`MAX_DEPTH`] deep, so the recursion
/// is bounded.
fn fallbacks_outside(cx: &mut Cx, node: &Node, path: &str) {
    match &node.value {
        Y::Map(entries) => {
            for (k, v) in entries {
                let p = join(path, k);
                match norm(k).as_str() {
                    "fallbackmethod" => cx.unmapped(&p, FALLBACK_METHOD),
                    "fallbackuri" => cx.unmapped(&p, FALLBACK_URI),
                    _ => fallbacks_outside(cx, v, &p),
                }
            }
        }
        Y::Seq(items) => {
            for (i, item) in items.iter().enumerate() {
                fallbacks_outside(cx, item, &index(path, i));
            }
        }
        _ => {}
    }
}

/// The longest `baseConfig` chain resolved: real ones are a link or two, and
/// each link is resolved by recursion, once per instance (a chain of 15,000
/// overflowed the stack; one of 8,000 under 200 instances took 30 s).
const MAX_BASE_CHAIN: usize = 64;

/// An instance's (or, with `instance` None, a config's) settings:
/// resilience4j's defaults, then its base config, then its own. As
/// resilience4j-spring-boot's `create…Config` chooses it, an instance's base
/// is its `baseConfig`, else the config of the instance's own name, else
/// `configs.default`; a config's base is its `baseConfig` only.
fn resolve(
    cx: &mut Cx,
    m: &Module,
    configs: &[(String, Layer)],
    own: &Layer,
    instance: Option<&str>,
    depth: usize,
) -> Option<Map<String, Value>> {
    let has = |name: &str| configs.iter().any(|(n, _)| n == name);
    let base_name = match (&own.base, instance) {
        (Some((name, _, _)), _) => Some(name.as_str()),
        (None, Some(i)) if has(i) => Some(i),
        (None, Some(_)) if has("default") => Some("default"),
        (None, _) => None,
    };
    let mut values = match base_name {
        None => {
            let mut d = Map::new();
            for st in m.settings {
                if let Some(v) = st.default {
                    let v = match st.kind {
                        Kind::Bool => json!(v != 0.0),
                        Kind::Window => json!("count_based"),
                        Kind::Count => json!(v as u64),
                        _ => json!(v),
                    };
                    d.entry(st.field.to_string()).or_insert(v);
                }
            }
            d
        }
        Some(name) => {
            let found = configs.iter().find(|(n, _)| n == name);
            match (found, &own.base) {
                (Some(_), _) if depth > configs.len().min(MAX_BASE_CHAIN) => {
                    if let Some((_, p, n)) = &own.base {
                        cx.problem(
                            p,
                            n,
                            format!("baseConfig chain loops, or is longer than {MAX_BASE_CHAIN} configs"),
                        );
                    }
                    return None;
                }
                (Some((_, base)), _) => resolve(cx, m, configs, base, None, depth + 1)?,
                (None, Some((_, p, n))) => {
                    cx.problem(p, n, format!("no config {name:?} in {}.configs", m.name));
                    return None;
                }
                (None, None) => return None,
            }
        }
    };
    for (k, v) in &own.values {
        values.insert(k.clone(), v.clone());
    }
    Some(values)
}

/// Writes one module's settings as the model's policy.
fn policy(m: &Module, v: &Map<String, Value>, policies: &mut Map<String, Value>) {
    let get = |k: &str| v.get(k).cloned().unwrap_or(Value::Null);
    match m.name {
        "timelimiter" => {
            policies.insert("timeout_ms".into(), get("timeout_ms"));
        }
        "retry" => {
            let wait = get("wait_ms");
            let backoff = if get("exponential") == json!(true) {
                let mut b = Map::new();
                b.insert("kind".into(), json!("exponential"));
                b.insert("base_ms".into(), wait);
                b.insert("multiplier".into(), get("multiplier"));
                if let Some(cap) = v.get("cap_ms") {
                    b.insert("cap_ms".into(), cap.clone());
                }
                Value::Object(b)
            } else {
                json!({"kind": "fixed", "ms": wait})
            };
            let mut r = Map::new();
            r.insert("max_attempts".into(), get("max_attempts"));
            r.insert("backoff".into(), backoff);
            if get("randomized") == json!(true) {
                r.insert("jitter".into(), json!("proportional"));
                r.insert("jitter_factor".into(), get("jitter_factor"));
            } else {
                r.insert("jitter".into(), json!("none"));
            }
            policies.insert("retry".into(), Value::Object(r));
        }
        "circuitbreaker" => {
            let mut b = Map::new();
            b.insert("kind".into(), json!("resilience4j"));
            for st in m.settings {
                if let Some(x) = v.get(st.field) {
                    b.insert(st.field.to_string(), x.clone());
                }
            }
            policies.insert("breaker".into(), Value::Object(b));
        }
        "bulkhead" => {
            policies.insert(
                "bulkhead".into(),
                json!({"max_concurrent_calls": get("max_concurrent_calls"), "max_wait_ms": get("max_wait_ms")}),
            );
        }
        _ => {
            policies.insert(
                "rate_limit".into(),
                json!({
                    "kind": "resilience4j",
                    "limit_for_period": get("limit_for_period"),
                    "limit_refresh_period_ms": get("limit_refresh_period_ms"),
                    "timeout_ms": get("timeout_ms"),
                }),
            );
        }
    }
}

/// Spring reads `a.b: x` as `a: {b: x}`: dotted keys become nested ones,
/// down to [`MAX_DEPTH`] in all (`depth`: the node's own): deeper, a key is
/// kept whole, a field no module knows, since the tree is expanded, merged
/// and read by recursion (a key of 20,000 dots overflowed the stack).
fn expand(node: &Node, depth: usize) -> Node {
    match &node.value {
        Y::Map(entries) => {
            let mut out = Node {
                line: node.line,
                value: Y::Map(Vec::new()),
            };
            for (k, v) in entries {
                let dots = k.matches('.').count();
                let mut parts = if depth + 1 + dots > MAX_DEPTH {
                    vec![k.clone()]
                } else {
                    k.split('.').map(str::to_string).collect::<Vec<_>>()
                };
                let under = depth + parts.len();
                let first = parts.remove(0);
                let mut value = expand(v, under);
                for part in parts.into_iter().rev() {
                    value = Node {
                        line: value.line,
                        value: Y::Map(vec![(part, value)]),
                    };
                }
                let single = Node {
                    line: node.line,
                    value: Y::Map(vec![(first, value)]),
                };
                out = merge(out, single);
            }
            out
        }
        Y::Seq(items) => Node {
            line: node.line,
            value: Y::Seq(items.iter().map(|item| expand(item, depth + 1)).collect()),
        },
        _ => node.clone(),
    }
}

/// `b` over `a`: mappings merge key by key, anything else is replaced.
fn merge(a: Node, b: Node) -> Node {
    match (a.value, b.value) {
        (Y::Map(mut ea), Y::Map(eb)) => {
            for (k, v) in eb {
                match ea.iter().position(|(x, _)| *x == k) {
                    Some(i) => {
                        let old = ea.remove(i).1;
                        ea.insert(i, (k, merge(old, v)));
                    }
                    None => ea.push((k, v)),
                }
            }
            Node {
                line: a.line,
                value: Y::Map(ea),
            }
        }
        (_, value) => Node {
            line: b.line,
            value,
        },
    }
}
