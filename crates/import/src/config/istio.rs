//! Istio `VirtualService` and `DestinationRule` resources (YAML, several
//! documents per file, in one file or several).
//!
//! Istio configures the caller's Envoy sidecar, so its settings map as
//! Envoy's do: each HTTP route destination of a `VirtualService` is an edge
//! carrying the route's `retries` and `timeout`, joined with the
//! `DestinationRule` of that host (connection pool, outlier detection, load
//! balancer). A `DestinationRule` whose host no route names is an edge of
//! its own. Istio's defaults are written for what is absent: its default
//! retry policy (2 retries on `connect-failure`, `refused-stream`,
//! `unavailable`, `cancelled`, `retriable-status-codes` = 503), no route
//! timeout, no circuit-breaker limits, a 10 s connect timeout.

use super::envoy::{self, max_retries_budget, Cluster, Route};
use super::read::{Cx, DurationSyntax::Go};
use super::tree::{index, Node};
use super::{Input, Out};
use serde_json::{json, Map, Value};

/// Istio's `connectTimeout` when absent.
const DEFAULT_CONNECT_TIMEOUT_MS: f64 = 10_000.0;
/// Istio's default retries (`attempts`).
const DEFAULT_ATTEMPTS: u64 = 2;
/// Istio's default `retryOn`.
const DEFAULT_RETRY_ON: &str =
    "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes";
/// Envoy's back-off base, which Istio leaves as it is unless `backoff` is set.
const DEFAULT_BASE_INTERVAL_MS: f64 = 25.0;

fn defaults(host: &str) -> Cluster {
    Cluster {
        name: host.to_string(),
        connect_timeout_ms: DEFAULT_CONNECT_TIMEOUT_MS,
        balancer: None,
        instances: None,
        // Istio sets Envoy's circuit-breaker limits to the largest value:
        // no bulkhead, no limit on concurrent retries.
        max_requests: 0,
        retry_budget: Value::Null,
        outlier_detection: None,
    }
}

/// Istio's hosts as the model names services: a Kubernetes name
/// (`reviews.prod.svc.cluster.local`) by its service (`reviews`), so that a
/// `VirtualService` naming `reviews` meets the `DestinationRule` of the
/// full name.
fn short_host(host: &str) -> String {
    for suffix in [".svc.cluster.local", ".svc"] {
        if let Some(rest) = host.strip_suffix(suffix) {
            return rest.split('.').next().unwrap_or(rest).to_string();
        }
    }
    host.to_string()
}

pub(crate) fn import(inputs: &mut [Input], out: &mut Out) {
    let mut clusters = Vec::new();
    let mut routes = Vec::new();
    super::for_each_document(inputs, |cx, doc, path| {
        resource(cx, doc, path, &mut clusters, &mut routes)
    });
    envoy::edges(clusters, routes, out, "Istio", &defaults);
    super::nothing_found(inputs, out, "VirtualService or DestinationRule");
}

fn resource(
    cx: &mut Cx,
    doc: &Node,
    path: &str,
    clusters: &mut Vec<Cluster>,
    routes: &mut Vec<Route>,
) {
    let Some(mut f) = cx.fields(doc, path) else {
        return;
    };
    let kind = f
        .take("kind")
        .and_then(|(n, p)| cx.string(n, &p))
        .unwrap_or_default();
    if kind == "List" {
        if let Some((n, p)) = f.take("items") {
            if let Some(items) = cx.list(n, &p) {
                for (i, item) in items.iter().enumerate() {
                    resource(cx, item, &index(&p, i), clusters, routes);
                }
            }
        }
        f.take("apiVersion");
        f.finish(cx, &[], "a List");
        return;
    }
    f.take("apiVersion");
    let name = doc
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(|n| match &n.value {
            super::tree::Value::Str(s) => Some(s.clone()),
            _ => None,
        })
        .unwrap_or_default();
    f.take("metadata");
    let spec = f.take("spec");
    f.finish(
        cx,
        &[("status", "status written by Istio: no effect on calls")],
        "an Istio resource",
    );
    let Some((spec, sp)) = spec else {
        cx.problem(path, doc, format!("{kind} {name:?} has no spec"));
        return;
    };
    match kind.as_str() {
        "VirtualService" => virtual_service(cx, spec, &sp, &name, routes),
        "DestinationRule" => {
            if let Some(c) = destination_rule(cx, spec, &sp) {
                clusters.push(c);
            }
        }
        "" => cx.problem(path, doc, "not an Istio resource (no kind)"),
        other => cx.unmapped(path, format!("a {other}: only VirtualService and DestinationRule carry retry, timeout and breaker settings")),
    }
}

fn virtual_service(cx: &mut Cx, spec: &Node, path: &str, name: &str, routes: &mut Vec<Route>) {
    let Some(mut f) = cx.fields(spec, path) else {
        return;
    };
    f.take("hosts");
    if let Some((n, p)) = f.take("http") {
        if let Some(items) = cx.list(n, &p) {
            for (i, item) in items.iter().enumerate() {
                http_route(cx, item, &index(&p, i), name, routes);
            }
        }
    }
    f.finish(
        cx,
        &[
            (
                "gateways",
                "gateways: the caller is the sidecar, as if the route applied to the mesh",
            ),
            ("tcp", "TCP routes: the model's calls are requests"),
            ("tls", "TLS routes: the model's calls are requests"),
            ("exportTo", "visibility: no effect on calls"),
        ],
        "a VirtualService spec",
    );
}

fn http_route(cx: &mut Cx, node: &Node, path: &str, vs: &str, routes: &mut Vec<Route>) {
    let Some(mut f) = cx.fields(node, path) else {
        return;
    };
    let rname = f.take("name").and_then(|(n, p)| cx.string(n, &p));
    let origin = match rname {
        Some(r) => format!("route {r:?} of VirtualService {vs:?}"),
        None => format!("{path} of VirtualService {vs:?}"),
    };
    // Istio leaves the route timeout off unless set.
    let deadline_ms = f
        .take("timeout")
        .and_then(|(n, p)| cx.duration_ms(n, &p, Go))
        .filter(|t| *t > 0.0);
    let retry = match f.take("retries") {
        Some((n, p)) => retries(cx, n, &p),
        None => Some(default_retry()),
    };
    let mut hosts = Vec::new();
    if let Some((n, p)) = f.take("route") {
        if let Some(items) = cx.list(n, &p) {
            for (i, item) in items.iter().enumerate() {
                let ip = index(&p, i);
                let Some(mut d) = cx.fields(item, &ip) else {
                    continue;
                };
                if let Some((dn, dp)) = d.take("destination") {
                    if let Some(mut df) = cx.fields(dn, &dp) {
                        if let Some((h, hp)) = df.take("host") {
                            hosts.extend(cx.string(h, &hp));
                        }
                        df.finish(
                            cx,
                            &[
                                (
                                    "subset",
                                    "subsets: the model's instances of a service are alike",
                                ),
                                ("port", "ports: the model has no ports"),
                            ],
                            "a destination",
                        );
                    }
                }
                d.finish(
                    cx,
                    &[
                        ("weight", "traffic split: each destination has its own workload; set their arrival rates in these proportions"),
                        ("headers", "headers: the model has none"),
                    ],
                    "a route destination",
                );
            }
        }
    }
    f.finish(
        cx,
        &[
            ("match", "request matching: every request of this edge's workload takes the route"),
            ("fault", "fault injection: not mapped; give the upstream's work an error (p) or a slower work distribution instead"),
            ("mirror", "mirroring: the mirrored traffic is not modelled"),
            ("mirrorPercentage", "mirroring: the mirrored traffic is not modelled"),
            ("mirrors", "mirroring: the mirrored traffic is not modelled"),
            ("rewrite", "rewriting: no effect on calls"),
            ("redirect", "a redirect: no upstream call, so no edge"),
            ("directResponse", "a direct response: no upstream call, so no edge"),
            ("headers", "headers: the model has none"),
            ("corsPolicy", "CORS: no effect on calls"),
            ("delegate", "a delegate VirtualService: import it too"),
        ],
        "an HTTP route",
    );
    let (timeout_ms, retry) = match retry {
        Some((t, r)) => (t, r),
        None => (None, None),
    };
    for h in hosts {
        routes.push(Route {
            cluster: short_host(&h),
            origin: origin.clone(),
            deadline_ms,
            timeout_ms,
            retry: retry.clone(),
        });
    }
}

/// Istio's default retry policy, for a route that sets none.
fn default_retry() -> (Option<f64>, Option<Map<String, Value>>) {
    (
        None,
        Some(retry(
            DEFAULT_ATTEMPTS,
            DEFAULT_BASE_INTERVAL_MS,
            default_retry_on(),
        )),
    )
}

/// Istio's default `retryOn` as outcomes (its `cancelled`, which the model
/// never produces, drops out: nothing in the input to report).
fn default_retry_on() -> Vec<&'static str> {
    let mut scratch = Cx::new("");
    envoy::retry_on(&mut scratch, DEFAULT_RETRY_ON, "", &[(503, String::new())])
}

fn retry(retries: u64, base_ms: f64, retry_on: Vec<&'static str>) -> Map<String, Value> {
    let mut r = Map::new();
    r.insert("max_attempts".into(), json!(retries + 1));
    r.insert(
        "backoff".into(),
        json!({"kind": "exponential", "base_ms": base_ms, "multiplier": 2.0, "cap_ms": 10.0 * base_ms}),
    );
    r.insert("jitter".into(), json!("full"));
    r.insert("retry_on".into(), json!(retry_on));
    r
}

type Retry = (Option<f64>, Option<Map<String, Value>>);

fn retries(cx: &mut Cx, node: &Node, path: &str) -> Option<Retry> {
    let mut f = cx.fields(node, path)?;
    let attempts = match f.take("attempts") {
        Some((n, p)) => cx.count(n, &p)?,
        None => DEFAULT_ATTEMPTS,
    };
    let per_try = f
        .take("perTryTimeout")
        .and_then(|(n, p)| cx.duration_ms(n, &p, Go))
        .filter(|t| *t > 0.0);
    let base = match f.take("backoff") {
        Some((n, p)) => cx.duration_ms(n, &p, Go)?,
        None => DEFAULT_BASE_INTERVAL_MS,
    };
    // Istio's retryOn mixes Envoy conditions and bare status codes
    // (retriable-status-codes).
    let mut conditions = Vec::new();
    let mut codes = Vec::new();
    let on_path = f.take("retryOn").and_then(|(n, p)| {
        let text = cx.string(n, &p)?;
        for part in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match part.parse::<u64>() {
                Ok(code) => codes.push((code, p.clone())),
                Err(_) => conditions.push(part.to_string()),
            }
        }
        Some(p)
    });
    f.finish(
        cx,
        &[
            ("retryRemoteLocalities", "localities: the model's skeleton has no zones"),
            ("retryIgnorePreviousHosts", "a retry goes where the model's balancer sends it, which may be the host that failed"),
        ],
        "HTTP retries",
    );
    if attempts == 0 {
        return Some((None, None));
    }
    let retry_on = match on_path {
        Some(p) => {
            if !codes.is_empty() {
                conditions.push("retriable-status-codes".into());
            }
            envoy::retry_on(cx, &conditions.join(","), &p, &codes)
        }
        None => default_retry_on(),
    };
    Some((per_try, Some(retry(attempts, base, retry_on))))
}

fn destination_rule(cx: &mut Cx, spec: &Node, path: &str) -> Option<Cluster> {
    let mut f = cx.fields(spec, path)?;
    let Some((h, hp)) = f.take("host") else {
        cx.problem(path, spec, "a DestinationRule needs a host");
        return None;
    };
    let host = cx.string(h, &hp)?;
    let mut c = defaults(&short_host(&host));
    if let Some((n, p)) = f.take("trafficPolicy") {
        traffic_policy(cx, n, &p, &mut c);
    }
    f.finish(
        cx,
        &[
            ("subsets", "subsets: the model's instances of a service are alike (their own traffic policies are not read)"),
            ("exportTo", "visibility: no effect on calls"),
            ("workloadSelector", "workload selection: the caller is app"),
        ],
        "a DestinationRule spec",
    );
    Some(c)
}

fn traffic_policy(cx: &mut Cx, node: &Node, path: &str, c: &mut Cluster) {
    let Some(mut f) = cx.fields(node, path) else {
        return;
    };
    if let Some((n, p)) = f.take("connectionPool") {
        if let Some(mut pool) = cx.fields(n, &p) {
            if let Some((tn, tp)) = pool.take("tcp") {
                if let Some(mut t) = cx.fields(tn, &tp) {
                    if let Some((cn, cp)) = t.take("connectTimeout") {
                        match cx.duration_ms(cn, &cp, Go) {
                            Some(ms) if ms <= 0.0 => {
                                cx.problem(&cp, cn, "connectTimeout must be above 0")
                            }
                            Some(ms) => c.connect_timeout_ms = ms,
                            None => {}
                        }
                    }
                    t.finish(
                        cx,
                        &[
                            ("maxConnections", "connections: the model has none (the bulkhead is http2MaxRequests)"),
                            ("tcpKeepalive", "TCP keepalive: the model has no connections"),
                            ("maxConnectionDuration", "connection lifetimes: the model has no connections"),
                            ("idleTimeout", "idle connections: the model has no connections"),
                        ],
                        "TCP settings",
                    );
                }
            }
            if let Some((hn, hp)) = pool.take("http") {
                if let Some(mut h) = cx.fields(hn, &hp) {
                    if let Some((mn, mp)) = h.take("http2MaxRequests") {
                        if let Some(v) = cx.count(mn, &mp) {
                            c.max_requests = v;
                        }
                    }
                    if let Some((rn, rp)) = h.take("maxRetries") {
                        if let Some(v) = cx.count(rn, &rp) {
                            c.retry_budget = max_retries_budget(v);
                        }
                    }
                    h.finish(
                        cx,
                        &[
                            (
                                "http1MaxPendingRequests",
                                "the queue for a connection: the model has no connection pool",
                            ),
                            (
                                "maxRequestsPerConnection",
                                "connection reuse: the model has no connections",
                            ),
                            (
                                "idleTimeout",
                                "idle connections: the model has no connections",
                            ),
                            ("h2UpgradePolicy", "protocols: the model has none"),
                            ("useClientProtocol", "protocols: the model has none"),
                            (
                                "maxConcurrentStreams",
                                "HTTP/2 streams: the model has no connections",
                            ),
                        ],
                        "HTTP settings",
                    );
                }
            }
            pool.finish(cx, &[], "connectionPool");
        }
    }
    if let Some((n, p)) = f.take("outlierDetection") {
        c.outlier_detection = outlier(cx, n, &p);
    }
    if let Some((n, p)) = f.take("loadBalancer") {
        if let Some(mut lb) = cx.fields(n, &p) {
            if let Some((sn, sp)) = lb.take("simple") {
                if let Some(s) = cx.string(sn, &sp) {
                    c.balancer = envoy::balancer(cx, &s, &sp);
                }
            }
            if let Some((ln, lp)) = lb.take("localityLbSetting") {
                locality_lb_setting(cx, ln, &lp);
            }
            lb.finish(
                cx,
                &[
                    ("consistentHash", "consistent hashing: not modelled"),
                    (
                        "warmupDurationSecs",
                        "slow start: the model's instances are warm",
                    ),
                ],
                "loadBalancer",
            );
        }
    }
    f.finish(
        cx,
        &[
            ("tls", "TLS: the model has no TLS"),
            (
                "portLevelSettings",
                "per-port policies: the model has no ports",
            ),
            ("tunnel", "tunnelling: no effect on calls"),
            ("proxyProtocol", "the PROXY protocol: no effect on calls"),
        ],
        "a traffic policy",
    );
}

/// `localityLbSetting`, none of it imported, its failover apart: it reads
/// as a fallback and is not one. Istio programs it as Envoy's priority
/// levels by locality, so the sidecar shifts traffic to farther zones or
/// regions of the same service as the nearer endpoints are ejected (it
/// needs outlier detection to act), by share of load, not per failed call;
/// a model `fallback` of kind `call` goes to another service, per call.
fn locality_lb_setting(cx: &mut Cx, node: &Node, path: &str) {
    let Some(mut f) = cx.fields(node, path) else {
        return;
    };
    let failover = "locality failover: Istio shifts traffic to other zones or regions of the same service as the nearer endpoints are ejected, by share of load, not per failed call, so it is not imported as a fallback; the model's skeleton has no zones";
    for key in ["failover", "failoverPriority"] {
        if let Some((_, p)) = f.take(key) {
            cx.unmapped(&p, failover);
        }
    }
    let locality = "locality-aware balancing: the model's skeleton has no zones";
    f.finish(
        cx,
        &[("enabled", locality), ("distribute", locality)],
        "localityLbSetting",
    );
}

/// Istio's outlier detection, in Envoy's terms (Istio's defaults are
/// Envoy's: 5 errors, 10 s, 30 s, 10%).
fn outlier(cx: &mut Cx, node: &Node, path: &str) -> Option<Value> {
    let mut f = cx.fields(node, path)?;
    let mut o = Map::new();
    let consecutive = match f.take("consecutive5xxErrors") {
        Some((n, p)) => cx.count(n, &p),
        None => Some(5),
    };
    o.insert("consecutive_5xx".into(), json!(consecutive?));
    for (key, field, default) in [
        ("interval", "interval_ms", 10_000.0),
        ("baseEjectionTime", "base_ejection_time_ms", 30_000.0),
    ] {
        // Istio's validation: at least 1 ms.
        let v = match f.take(key) {
            Some((n, p)) => cx.positive_duration_ms(n, &p, Go),
            None => Some(default),
        };
        o.insert(field.into(), json!(v?));
    }
    let pct = match f.take("maxEjectionPercent") {
        Some((n, p)) => cx.count(n, &p),
        None => Some(10),
    };
    o.insert("max_ejection_percent".into(), json!(pct?.min(100)));
    f.finish(
        cx,
        &[
            ("consecutiveGatewayErrors", "gateway-error ejection: the model ejects on consecutive failures (consecutive5xxErrors) only"),
            ("consecutiveErrors", "deprecated (gateway errors): the model ejects on consecutive failures (consecutive5xxErrors) only"),
            ("consecutiveLocalOriginFailures", "local-origin failures apart: the model counts every failure together"),
            ("splitExternalLocalOriginErrors", "local-origin failures apart: the model counts every failure together"),
            ("minHealthPercent", "the panic threshold: the model's outlier detection stays on"),
        ],
        "outlierDetection",
    );
    super::envoy::never_ejects(cx, path, "consecutive5xxErrors", o)
}
