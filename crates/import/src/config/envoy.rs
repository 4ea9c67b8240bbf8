//! Envoy cluster and route configuration (YAML or JSON, v3 API): a
//! bootstrap (`static_resources`), a discovery response (`resources`), a
//! route configuration (`virtual_hosts`), a cluster, or a list of them, in
//! one file or several.
//!
//! Each route to a cluster is an edge carrying the route's retry policy and
//! timeouts and the cluster's circuit breakers, outlier detection and
//! connect timeout; a cluster no route names is an edge with the cluster's
//! settings alone. Envoy's defaults are written out for what is absent
//! (`num_retries` 1, back-off 25 ms to 250 ms, route timeout 15 s,
//! `max_requests` 1024, `max_retries` 3, `connect_timeout` 5 s), since Envoy
//! applies them whether written or not.

use super::read::{norm, Cx, DurationSyntax::Proto, Fields};
use super::skeleton::{model_name, upstream, Edge};
use super::tree::{index, Node, Value as Y};
use super::{Input, Out};
use serde_json::{json, Map, Value};

/// Envoy's route timeout when a route sets none.
const DEFAULT_ROUTE_TIMEOUT_MS: f64 = 15_000.0;
/// `retry_back_off.base_interval` when absent.
const DEFAULT_BASE_INTERVAL_MS: f64 = 25.0;
/// `circuit_breakers` defaults (per cluster and priority).
const DEFAULT_MAX_REQUESTS: u64 = 1024;
const DEFAULT_MAX_RETRIES: u64 = 3;
/// The most instances a service of the model may have.
const MAX_INSTANCES: u64 = 1_000_000;
/// `connect_timeout` when absent.
const DEFAULT_CONNECT_TIMEOUT_MS: f64 = 5000.0;

/// A cluster's settings that go on the edges to it.
#[derive(Clone, Debug)]
pub(crate) struct Cluster {
    pub name: String,
    pub connect_timeout_ms: f64,
    pub balancer: Option<&'static str>,
    pub instances: Option<u64>,
    pub max_requests: u64,
    /// `max_retries`, or the retry budget that overrides it.
    pub retry_budget: Value,
    pub outlier_detection: Option<Value>,
}

impl Cluster {
    /// A cluster the input names but does not define: Envoy's defaults.
    pub fn defaults(name: &str) -> Cluster {
        Cluster {
            name: name.to_string(),
            connect_timeout_ms: DEFAULT_CONNECT_TIMEOUT_MS,
            balancer: None,
            instances: None,
            max_requests: DEFAULT_MAX_REQUESTS,
            retry_budget: max_retries_budget(DEFAULT_MAX_RETRIES),
            outlier_detection: None,
        }
    }
}

/// Envoy's `max_retries` (concurrent retries per cluster) as the model's
/// Envoy budget: no percentage, a floor of `n`.
pub(crate) fn max_retries_budget(n: u64) -> Value {
    json!({"kind": "envoy", "budget_percent": 0.0, "min_retry_concurrency": n})
}

/// A route's edge before its cluster's settings join it.
#[derive(Clone, Debug)]
pub(crate) struct Route {
    pub cluster: String,
    pub origin: String,
    pub deadline_ms: Option<f64>,
    pub timeout_ms: Option<f64>,
    pub retry: Option<Map<String, Value>>,
}

#[derive(Default)]
struct Found {
    clusters: Vec<Cluster>,
    routes: Vec<Route>,
}

pub(crate) fn import(inputs: &mut [Input], out: &mut Out) {
    let mut found = Found::default();
    super::for_each_document(inputs, |cx, doc, path| document(cx, doc, path, &mut found));
    edges(
        found.clusters,
        found.routes,
        out,
        "Envoy",
        &Cluster::defaults,
    );
    super::nothing_found(inputs, out, "Envoy clusters or routes");
}

/// Joins routes and clusters into edges: each route to its cluster, then
/// each cluster no route names.
pub(crate) fn edges(
    clusters: Vec<Cluster>,
    routes: Vec<Route>,
    out: &mut Out,
    what: &str,
    defaults: &dyn Fn(&str) -> Cluster,
) {
    for r in &routes {
        let c = match clusters.iter().find(|c| c.name == r.cluster) {
            Some(c) => c.clone(),
            None => {
                out.notes.push(format!(
                    "{what} settings for {:?} are not in the input: its edge has {what}'s defaults",
                    r.cluster
                ));
                defaults(&r.cluster)
            }
        };
        let target = upstream(&mut out.upstreams, &r.cluster);
        set_instances(out, &target, c.instances);
        out.edges.push(Edge {
            target,
            origin: r.origin.clone(),
            deadline_ms: r.deadline_ms,
            policies: policies(&c, r.timeout_ms, r.retry.clone()),
        });
    }
    for c in &clusters {
        if routes.iter().any(|r| r.cluster == c.name) {
            continue;
        }
        let target = upstream(&mut out.upstreams, &c.name);
        set_instances(out, &target, c.instances);
        out.edges.push(Edge {
            target,
            origin: format!(
                "{what} cluster {:?}, which no route names (no retries)",
                c.name
            ),
            deadline_ms: None,
            policies: policies(c, None, None),
        });
    }
}

fn set_instances(out: &mut Out, target: &str, n: Option<u64>) {
    if let Some(u) = out.upstreams.iter_mut().find(|u| u.name == target) {
        if n.is_some() {
            u.instances = n;
        }
    }
}

/// A call step's policies, in the order a reader looks for them.
fn policies(
    c: &Cluster,
    timeout_ms: Option<f64>,
    retry: Option<Map<String, Value>>,
) -> Map<String, Value> {
    let mut p = Map::new();
    if let Some(t) = timeout_ms {
        p.insert("timeout_ms".into(), json!(t));
    }
    if let Some(mut r) = retry {
        if !c.retry_budget.is_null() {
            r.insert("budget".into(), c.retry_budget.clone());
        }
        p.insert("retry".into(), Value::Object(r));
    }
    p.insert("connect_timeout_ms".into(), json!(c.connect_timeout_ms));
    if let Some(b) = c.balancer {
        p.insert("balancer".into(), json!(b));
    }
    if let Some(o) = &c.outlier_detection {
        p.insert("outlier_detection".into(), o.clone());
    }
    if c.max_requests > 0 {
        p.insert(
            "bulkhead".into(),
            json!({"max_concurrent_calls": c.max_requests, "max_wait_ms": 0.0}),
        );
    }
    p
}

fn document(cx: &mut Cx, doc: &Node, path: &str, found: &mut Found) {
    match &doc.value {
        Y::Seq(items) => {
            for (i, item) in items.iter().enumerate() {
                document(cx, item, &index(path, i), found);
            }
        }
        Y::Map(_) => {
            let has = |k: &str| doc.get(k).is_some();
            if has("static_resources") || has("staticResources") {
                bootstrap(cx, doc, path, found);
            } else if has("resources") {
                let Some(mut f) = cx.fields(doc, path) else {
                    return;
                };
                if let Some((n, p)) = f.take("resources") {
                    if let Some(items) = cx.list(n, &p) {
                        for (i, item) in items.iter().enumerate() {
                            document(cx, item, &index(&p, i), found);
                        }
                    }
                }
                f.finish(
                    cx,
                    &[
                        ("version_info", "xDS bookkeeping"),
                        ("type_url", "xDS bookkeeping"),
                        ("nonce", "xDS bookkeeping"),
                    ],
                    "a discovery response",
                );
            } else if has("clusters") || has("listeners") {
                let Some(mut f) = cx.fields(doc, path) else {
                    return;
                };
                resources(cx, &mut f, found);
                f.finish(cx, &[], "Envoy static resources");
            } else if has("virtual_hosts") || has("virtualHosts") {
                route_configuration(cx, doc, path, found);
            } else if has("filter_chains") || has("filterChains") {
                listener(cx, doc, path, found);
            } else if has("name") {
                cluster(cx, doc, path, found);
            } else {
                cx.problem(path, doc, "not an Envoy bootstrap, cluster, listener or route configuration (no static_resources, clusters, virtual_hosts or name)");
            }
        }
        _ => cx.problem(
            path,
            doc,
            format!("expected an Envoy configuration, found {}", doc.kind()),
        ),
    }
}

fn bootstrap(cx: &mut Cx, doc: &Node, path: &str, found: &mut Found) {
    let Some(mut f) = cx.fields(doc, path) else {
        return;
    };
    if let Some((n, p)) = f.take("static_resources") {
        if let Some(mut sr) = cx.fields(n, &p) {
            resources(cx, &mut sr, found);
            sr.finish(
                cx,
                &[("secrets", "TLS secrets: the model has no TLS")],
                "static_resources",
            );
        }
    }
    f.finish(
        cx,
        &[
            ("admin", "Envoy's admin interface: no effect on calls"),
            ("node", "the node's identity: no effect on calls"),
            ("dynamic_resources", "xDS sources: only static configuration is read; import a dump of the dynamic resources instead"),
            ("layered_runtime", "runtime overrides: not read (a runtime key that changes a default is not seen)"),
            ("stats_sinks", "statistics: no effect on calls"),
            ("overload_manager", "Envoy's own overload actions: the model has no proxy resources"),
        ],
        "an Envoy bootstrap",
    );
}

fn resources(cx: &mut Cx, f: &mut Fields, found: &mut Found) {
    if let Some((n, p)) = f.take("listeners") {
        if let Some(items) = cx.list(n, &p) {
            for (i, item) in items.iter().enumerate() {
                listener(cx, item, &index(&p, i), found);
            }
        }
    }
    if let Some((n, p)) = f.take("clusters") {
        if let Some(items) = cx.list(n, &p) {
            for (i, item) in items.iter().enumerate() {
                cluster(cx, item, &index(&p, i), found);
            }
        }
    }
}

fn listener(cx: &mut Cx, node: &Node, path: &str, found: &mut Found) {
    let Some(mut f) = cx.fields(node, path) else {
        return;
    };
    f.take("name");
    if let Some((n, p)) = f.take("filter_chains") {
        if let Some(chains) = cx.list(n, &p) {
            for (i, chain) in chains.iter().enumerate() {
                let cp = index(&p, i);
                let Some(mut cf) = cx.fields(chain, &cp) else {
                    continue;
                };
                if let Some((fs, fp)) = cf.take("filters") {
                    if let Some(filters) = cx.list(fs, &fp) {
                        for (j, filter) in filters.iter().enumerate() {
                            network_filter(cx, filter, &index(&fp, j), found);
                        }
                    }
                }
                cf.finish(
                    cx,
                    &[
                        (
                            "filter_chain_match",
                            "connection matching: the model has one kind of connection",
                        ),
                        ("transport_socket", "TLS: the model has no TLS"),
                    ],
                    "a filter chain",
                );
            }
        }
    }
    f.finish(
        cx,
        &[
            (
                "address",
                "the listener's address: the model has no network addresses",
            ),
            (
                "listener_filters",
                "listener filters: no counterpart in the model",
            ),
            (
                "per_connection_buffer_limit_bytes",
                "buffer sizes: the model has no payload sizes",
            ),
        ],
        "an Envoy listener",
    );
}

fn network_filter(cx: &mut Cx, node: &Node, path: &str, found: &mut Found) {
    let Some(mut f) = cx.fields(node, path) else {
        return;
    };
    let name = f
        .take("name")
        .and_then(|(n, p)| cx.string(n, &p))
        .unwrap_or_default();
    let Some((tc, tp)) = f.take("typed_config") else {
        f.finish(cx, &[], "a network filter");
        cx.unmapped(
            path,
            format!("network filter {name:?}: only the HTTP connection manager's routes are read"),
        );
        return;
    };
    let is_hcm = name.contains("http_connection_manager")
        || tc
            .get("@type")
            .is_some_and(|t| matches!(&t.value, Y::Str(s) if s.contains("HttpConnectionManager")));
    f.finish(cx, &[], "a network filter");
    if !is_hcm {
        cx.unmapped(
            path,
            format!("network filter {name:?}: only the HTTP connection manager's routes are read"),
        );
        return;
    }
    let Some(mut h) = cx.fields(tc, &tp) else {
        return;
    };
    if let Some((rc, rp)) = h.take("route_config") {
        route_configuration(cx, rc, &rp, found);
    }
    h.finish(
        cx,
        &[
            ("rds", "routes from RDS: not in the file; import a dump of the route configuration instead"),
            ("http_filters", "HTTP filters (rate limits, fault injection, admission control…): not read; set the model's policies by hand"),
            ("stat_prefix", "statistics: no effect on calls"),
            ("codec_type", "the HTTP codec: the model has no protocols"),
            ("access_log", "logging: no effect on calls"),
        ],
        "the HTTP connection manager",
    );
}

fn route_configuration(cx: &mut Cx, node: &Node, path: &str, found: &mut Found) {
    let Some(mut f) = cx.fields(node, path) else {
        return;
    };
    f.take("name");
    if let Some((n, p)) = f.take("virtual_hosts") {
        if let Some(hosts) = cx.list(n, &p) {
            for (i, host) in hosts.iter().enumerate() {
                virtual_host(cx, host, &index(&p, i), found);
            }
        }
    }
    f.finish(cx, &[], "a route configuration");
}

fn virtual_host(cx: &mut Cx, node: &Node, path: &str, found: &mut Found) {
    let Some(mut f) = cx.fields(node, path) else {
        return;
    };
    let vname = f
        .take("name")
        .and_then(|(n, p)| cx.string(n, &p))
        .unwrap_or_default();
    // A virtual host's retry policy is its routes' unless they have one.
    let host_retry = f
        .take("retry_policy")
        .and_then(|(n, p)| retry_policy(cx, n, &p));
    if let Some((n, p)) = f.take("routes") {
        if let Some(routes) = cx.list(n, &p) {
            for (i, r) in routes.iter().enumerate() {
                route(cx, r, &index(&p, i), &vname, host_retry.as_ref(), found);
            }
        }
    }
    f.finish(
        cx,
        &[
            ("domains", "host matching: every request of an edge's workload takes its route"),
            ("hedge_policy", "Envoy's hedging (on per-try timeout): not mapped; the model's hedge is gRPC's, set on a call step by hand"),
            ("rate_limits", "rate limit descriptors: the rate limit service is not in the input"),
            ("typed_per_filter_config", "per-filter settings: HTTP filters are not read"),
            ("request_headers_to_add", "headers: the model has none"),
            ("response_headers_to_add", "headers: the model has none"),
        ],
        "a virtual host",
    );
}

fn route(
    cx: &mut Cx,
    node: &Node,
    path: &str,
    vhost: &str,
    host_retry: Option<&(Option<f64>, Map<String, Value>)>,
    found: &mut Found,
) {
    let Some(mut f) = cx.fields(node, path) else {
        return;
    };
    let rname = f.take("name").and_then(|(n, p)| cx.string(n, &p));
    let origin = match &rname {
        Some(n) => format!("route {n:?} of virtual host {vhost:?}"),
        None => format!("{path} (virtual host {vhost:?})"),
    };
    if let Some((n, p)) = f.take("route") {
        route_action(cx, n, &p, &origin, host_retry, found);
    }
    f.finish(
        cx,
        &[
            (
                "match",
                "request matching: every request of this edge's workload takes the route",
            ),
            (
                "direct_response",
                "a direct response: no upstream call, so no edge",
            ),
            ("redirect", "a redirect: no upstream call, so no edge"),
            ("decorator", "tracing: no effect on calls"),
            ("metadata", "metadata: no effect on calls"),
            (
                "typed_per_filter_config",
                "per-filter settings: HTTP filters are not read",
            ),
            ("request_headers_to_add", "headers: the model has none"),
            ("response_headers_to_add", "headers: the model has none"),
        ],
        "a route",
    );
}

fn route_action(
    cx: &mut Cx,
    node: &Node,
    path: &str,
    origin: &str,
    host_retry: Option<&(Option<f64>, Map<String, Value>)>,
    found: &mut Found,
) {
    let Some(mut f) = cx.fields(node, path) else {
        return;
    };
    let mut clusters = Vec::new();
    if let Some((n, p)) = f.take("cluster") {
        clusters.extend(cx.string(n, &p));
    }
    if let Some((n, p)) = f.take("weighted_clusters") {
        if let Some(mut w) = cx.fields(n, &p) {
            if let Some((cs, cp)) = w.take("clusters") {
                if let Some(items) = cx.list(cs, &cp) {
                    for (i, item) in items.iter().enumerate() {
                        let ip = index(&cp, i);
                        let Some(mut cf) = cx.fields(item, &ip) else {
                            continue;
                        };
                        if let Some((nn, np)) = cf.take("name") {
                            clusters.extend(cx.string(nn, &np));
                        }
                        cf.finish(cx, &[("weight", "traffic split: each cluster has its own workload; set their arrival rates in these proportions")], "a weighted cluster");
                    }
                }
            }
            w.finish(cx, &[("total_weight", "traffic split: each cluster has its own workload; set their arrival rates in these proportions")], "weighted_clusters");
        }
    }
    let deadline_ms = match f.take("timeout") {
        // 0 disables the route timeout.
        Some((n, p)) => cx.duration_ms(n, &p, Proto).filter(|t| *t > 0.0),
        None => Some(DEFAULT_ROUTE_TIMEOUT_MS),
    };
    let retry = match f.take("retry_policy") {
        Some((n, p)) => retry_policy(cx, n, &p),
        None => host_retry.cloned(),
    };
    f.finish(
        cx,
        &[
            ("cluster_header", "a cluster chosen by a header: no edge can be drawn"),
            ("cluster_specifier_plugin", "a cluster chosen by a plugin: no edge can be drawn"),
            ("idle_timeout", "the stream idle timeout: the model has no streams"),
            ("max_stream_duration", "stream durations and gRPC timeout headers: not mapped (the route timeout is the deadline)"),
            ("prefix_rewrite", "path rewriting: no effect on calls"),
            ("regex_rewrite", "path rewriting: no effect on calls"),
            ("host_rewrite_literal", "host rewriting: no effect on calls"),
            ("auto_host_rewrite", "host rewriting: no effect on calls"),
            ("hedge_policy", "Envoy's hedging (on per-try timeout): not mapped; the model's hedge is gRPC's, set on a call step by hand"),
            ("request_mirror_policies", "mirroring: the mirrored traffic is not modelled"),
            ("rate_limits", "rate limit descriptors: the rate limit service is not in the input"),
            ("hash_policy", "hashing for ring-hash or Maglev: not modelled"),
            ("priority", "routing priority: the model has one priority"),
            ("upgrade_configs", "protocol upgrades: no effect on calls"),
        ],
        "a route action",
    );
    if clusters.is_empty() {
        return;
    }
    let (timeout_ms, retry) = match retry {
        Some((t, r)) => (t, Some(r)),
        None => (None, None),
    };
    for c in clusters {
        found.routes.push(Route {
            cluster: c,
            origin: origin.to_string(),
            deadline_ms,
            timeout_ms,
            retry: retry.clone(),
        });
    }
}

/// A retry policy: the per-try timeout and the model's retry (without its
/// budget, which is the cluster's).
fn retry_policy(cx: &mut Cx, node: &Node, path: &str) -> Option<(Option<f64>, Map<String, Value>)> {
    let mut f = cx.fields(node, path)?;
    let retry_on_text = f
        .take("retry_on")
        .and_then(|(n, p)| Some((cx.string(n, &p)?, p)));
    let codes = f.take("retriable_status_codes").and_then(|(n, p)| {
        let items = cx.list(n, &p)?;
        Some(
            items
                .iter()
                .enumerate()
                .filter_map(|(i, it)| cx.count(it, &index(&p, i)).map(|c| (c, index(&p, i))))
                .collect::<Vec<_>>(),
        )
    });
    let num_retries = match f.take("num_retries") {
        Some((n, p)) => cx.count(n, &p),
        None => Some(1),
    };
    let per_try = f
        .take("per_try_timeout")
        .and_then(|(n, p)| cx.duration_ms(n, &p, Proto))
        .filter(|t| *t > 0.0);
    let (base, cap) = match f.take("retry_back_off") {
        Some((n, p)) => back_off(cx, n, &p)?,
        None => (DEFAULT_BASE_INTERVAL_MS, 10.0 * DEFAULT_BASE_INTERVAL_MS),
    };
    f.finish(
        cx,
        &[
            ("retry_host_predicate", "a retry goes where the model's balancer sends it, which may be the host that failed (no host predicate)"),
            ("host_selection_retry_max_attempts", "host selection retries: the model has no retry host predicate"),
            ("retry_priority", "retries sent to other priority levels (previous_priorities: failover endpoints, or an aggregate cluster's next cluster): the model has one priority level, and a retry goes where the balancer sends it"),
            ("per_try_idle_timeout", "the per-try idle timeout: the model has no streams"),
            ("retriable_headers", "header-based retry conditions: the model's responses have no headers"),
            ("retriable_request_headers", "request headers: the model's requests have none"),
            ("rate_limited_retry_back_off", "back-off from rate-limit headers: the model obeys Retry-After on rate_limited"),
            ("retry_options_predicates", "retry option predicates: not modelled"),
        ],
        "a retry policy",
    );
    let codes = codes.unwrap_or_default();
    let retry_on = match retry_on_text {
        Some((text, p))
            if text
                .split(',')
                .any(|c| c.trim() == "retriable-status-codes") =>
        {
            retry_on(cx, &text, &p, &codes)
        }
        Some((text, p)) => {
            for (_, cp) in &codes {
                cx.unmapped(
                    cp,
                    "never retried: retry_on does not name retriable-status-codes",
                );
            }
            retry_on(cx, &text, &p, &[])
        }
        None => {
            for (_, cp) in &codes {
                cx.unmapped(
                    cp,
                    "never retried: retry_on does not name retriable-status-codes",
                );
            }
            Vec::new()
        }
    };
    let mut r = Map::new();
    r.insert("max_attempts".into(), json!(num_retries? + 1));
    r.insert(
        "backoff".into(),
        json!({"kind": "exponential", "base_ms": base, "multiplier": 2.0, "cap_ms": cap}),
    );
    r.insert("jitter".into(), json!("full"));
    r.insert("retry_on".into(), json!(retry_on));
    Some((per_try, r))
}

/// `retry_back_off`: base interval and cap (10 × base when absent).
pub(crate) fn back_off(cx: &mut Cx, node: &Node, path: &str) -> Option<(f64, f64)> {
    let mut f = cx.fields(node, path)?;
    let base = match f.take("base_interval") {
        Some((n, p)) => {
            let b = cx.duration_ms(n, &p, Proto)?;
            if b <= 0.0 {
                cx.problem(&p, n, "base_interval must be above 0");
                return None;
            }
            b
        }
        None => {
            cx.problem(path, node, "retry_back_off needs base_interval");
            return None;
        }
    };
    let cap = match f.take("max_interval") {
        Some((n, p)) => {
            let m = cx.duration_ms(n, &p, Proto)?;
            if m <= 0.0 {
                cx.problem(&p, n, "max_interval must be above 0");
                return None;
            }
            m
        }
        None => 10.0 * base,
    };
    f.finish(cx, &[], "retry_back_off");
    Some((base, cap))
}

/// Envoy's `retry_on` conditions (comma-separated) as the model's outcomes;
/// Istio's `retryOn` uses the same names.
pub(crate) fn retry_on(
    cx: &mut Cx,
    text: &str,
    path: &str,
    codes: &[(u64, String)],
) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    let mut add = |os: &[&'static str]| {
        for o in os {
            if !out.contains(o) {
                out.push(o);
            }
        }
    };
    for cond in text.split(',').map(str::trim).filter(|c| !c.is_empty()) {
        match cond {
            // Any 5xx, or no response at all (reset, per-try timeout),
            // connect failures and refused streams included.
            "5xx" => add(&[
                "timeout",
                "deadline_exceeded",
                "rejected",
                "error",
                "connection_refused",
            ]),
            // 502, 503, 504, and no response at all.
            "gateway-error" => add(&[
                "timeout",
                "deadline_exceeded",
                "rejected",
                "connection_refused",
            ]),
            "reset" => add(&["timeout", "connection_refused"]),
            "connect-failure" => add(&["connection_refused"]),
            "refused-stream" | "unavailable" => add(&["rejected"]),
            "deadline-exceeded" => add(&["deadline_exceeded"]),
            "internal" => add(&["error"]),
            "resource-exhausted" | "envoy-ratelimited" => add(&["rate_limited"]),
            "retriable-status-codes" => {
                for (code, p) in codes {
                    match code {
                        429 => add(&["rate_limited"]),
                        500 | 502 => add(&["error"]),
                        503 => add(&["rejected"]),
                        504 => add(&["deadline_exceeded"]),
                        _ => cx.unmapped(
                            p,
                            format!("status {code}: the model's calls never answer with it"),
                        ),
                    }
                }
                if codes.is_empty() {
                    cx.unmapped(path, "retriable-status-codes without retriable_status_codes: Envoy takes it as 503 only when Istio sets it; nothing is retried for it here");
                }
            }
            other => cx.unmapped(
                path,
                format!("retry condition {other:?}: the model's calls never fail that way"),
            ),
        }
    }
    out
}

fn cluster(cx: &mut Cx, node: &Node, path: &str, found: &mut Found) {
    let Some(mut f) = cx.fields(node, path) else {
        return;
    };
    let Some(name) = f.take("name").and_then(|(n, p)| cx.string(n, &p)) else {
        cx.problem(path, node, "a cluster needs a name");
        return;
    };
    let mut c = Cluster::defaults(&name);
    if let Some((n, p)) = f.take("connect_timeout") {
        match cx.duration_ms(n, &p, Proto) {
            Some(t) if t <= 0.0 => cx.problem(&p, n, "connect_timeout must be above 0"),
            Some(t) => c.connect_timeout_ms = t,
            None => {}
        }
    }
    if let Some((n, p)) = f.take("lb_policy") {
        if let Some(lb) = cx.string(n, &p) {
            c.balancer = balancer(cx, &lb, &p);
        }
    }
    if let Some((n, p)) = f.take("load_assignment") {
        c.instances = endpoints(cx, n, &p);
    }
    if let Some((n, p)) = f.take("circuit_breakers") {
        circuit_breakers(cx, n, &p, &mut c);
    }
    if let Some((n, p)) = f.take("outlier_detection") {
        c.outlier_detection = outlier_detection(cx, n, &p);
    }
    if let Some((n, p)) = f.take("cluster_type") {
        cx.unmapped(&p, cluster_type(n));
    }
    f.finish(
        cx,
        &[
            (
                "type",
                "service discovery: the model's instances are fixed (instances)",
            ),
            ("dns_lookup_family", "DNS: the model has no name resolution"),
            ("dns_refresh_rate", "DNS: the model has no name resolution"),
            ("transport_socket", "TLS: the model has no TLS"),
            (
                "typed_extension_protocol_options",
                "protocol options (HTTP/2, pools): the model has no protocols or connections",
            ),
            (
                "http2_protocol_options",
                "protocol options (HTTP/2, pools): the model has no protocols or connections",
            ),
            (
                "http_protocol_options",
                "protocol options (HTTP/2, pools): the model has no protocols or connections",
            ),
            (
                "health_checks",
                "active health checks: the model ejects instances only by outlier detection",
            ),
            (
                "common_lb_config",
                "load-balancer tuning (panic threshold, zone awareness): not modelled",
            ),
            (
                "least_request_lb_config",
                "least-request tuning: the model's power_of_two_choices draws two",
            ),
            (
                "per_connection_buffer_limit_bytes",
                "buffer sizes: the model has no payload sizes",
            ),
            (
                "upstream_connection_options",
                "TCP options: the model has no connections",
            ),
            (
                "max_requests_per_connection",
                "connection reuse: the model has no connections",
            ),
            (
                "lb_subset_config",
                "subset load balancing (its fallback_policy picks other endpoints of this cluster when no subset matches a request, not when a call fails): the model's instances of a service are alike",
            ),
        ],
        "an Envoy cluster",
    );
    found.clusters.push(c);
}

/// Why a cluster's `cluster_type` (a cluster extension) is not imported. An
/// aggregate cluster is named with its clusters because it reads as a
/// fallback to a secondary service and is not one: Envoy treats its
/// clusters' priority levels as one list and shifts traffic down it as
/// hosts turn unhealthy (health checks, outlier detection), by share of
/// load, not per failed call as a model `fallback` answers, so mapping it to
/// one would be wrong whenever the primary is partly healthy.
fn cluster_type(node: &Node) -> String {
    let text = |n: Option<&Node>| match n.map(|n| &n.value) {
        Some(Y::Str(s)) => s.clone(),
        _ => String::new(),
    };
    let name = text(field(node, "name"));
    let config = field(node, "typed_config");
    let aggregate = name == "envoy.clusters.aggregate"
        || text(config.and_then(|c| c.get("@type"))).contains("clusters.aggregate.");
    if !aggregate {
        return format!("cluster type {name:?}: a cluster extension, not modelled; the cluster is imported as a fixed set of instances");
    }
    let clusters: Vec<String> = config
        .and_then(|c| field(c, "clusters"))
        .map(|l| match &l.value {
            Y::Seq(items) => items.iter().map(|i| text(Some(i))).collect(),
            _ => Vec::new(),
        })
        .unwrap_or_default();
    let mut why = format!(
        "an aggregate cluster, failing over through {clusters:?} in order: Envoy shifts its traffic to a later cluster as the earlier ones' hosts turn unhealthy, by share of load, not per failed call, so it is not imported as a fallback: it is imported as an upstream of its own, apart from its clusters"
    );
    if let [first, rest @ ..] = clusters.as_slice() {
        if !rest.is_empty() {
            let chain: Vec<Value> = rest
                .iter()
                .map(|c| json!({"kind": "call", "call": model_name(c)}))
                .collect();
            let fallback = json!({"chain": chain, "degraded": false});
            why.push_str(&format!(
                ". Nearest in the model: a call step to {} with fallback {fallback}, which sends each failed call on instead",
                model_name(first)
            ));
        }
    }
    why
}

/// The value under `key` of a mapping, its key compared as protobuf's JSON
/// reader compares them (`typed_config` = `typedConfig`), for a setting that
/// is read only to be described.
fn field<'n>(node: &'n Node, key: &str) -> Option<&'n Node> {
    let want = norm(key);
    node.entries()
        .iter()
        .find(|(k, _)| norm(k) == want)
        .map(|(_, v)| v)
}

pub(crate) fn balancer(cx: &mut Cx, lb: &str, path: &str) -> Option<&'static str> {
    match lb.to_ascii_uppercase().as_str() {
        "ROUND_ROBIN" => Some("round_robin"),
        "RANDOM" => Some("random"),
        // Envoy's least request picks the better of two random hosts
        // (choice_count 2) when weights are equal.
        "LEAST_REQUEST" | "LEAST_CONN" => Some("power_of_two_choices"),
        other => {
            cx.unmapped(path, format!("load balancing {other}: the model has round_robin, random, least_outstanding and power_of_two_choices"));
            None
        }
    }
}

/// The number of endpoints of a `load_assignment` that take its traffic:
/// those of its first priority level. Envoy sends a later level traffic only
/// as the earlier levels' endpoints turn unhealthy (under about 72% healthy,
/// with the default overprovisioning factor of 1.4): a failover by health,
/// not per failed call, which the model (one level, no health checks) does
/// not have. Counted as instances, a later level's endpoints would take
/// traffic all along; so they are reported and left out.
fn endpoints(cx: &mut Cx, node: &Node, path: &str) -> Option<u64> {
    let mut f = cx.fields(node, path)?;
    f.take("cluster_name");
    // Each locality's priority, the path to name it by, and its endpoints.
    let mut localities: Vec<(u64, String, u64)> = Vec::new();
    if let Some((n, p)) = f.take("endpoints") {
        for (i, locality) in cx.list(n, &p)?.iter().enumerate() {
            let lp = index(&p, i);
            let Some(mut lf) = cx.fields(locality, &lp) else {
                continue;
            };
            let count = match lf.take("lb_endpoints") {
                Some((e, ep)) => cx.list(e, &ep).map_or(0, |l| l.len() as u64),
                None => 0,
            };
            let priority = match lf.take("priority") {
                Some((pn, pp)) => cx.count(pn, &pp).map(|v| (v, pp)),
                None => Some((0, lp.clone())),
            };
            lf.finish(
                cx,
                &[
                    (
                        "locality",
                        "zones: the model's skeleton has none (hosts.zones)",
                    ),
                    (
                        "load_balancing_weight",
                        "weights: the model's instances are alike",
                    ),
                ],
                "locality endpoints",
            );
            if let Some((priority, pp)) = priority {
                localities.push((priority, pp, count));
            }
        }
    }
    f.finish(
        cx,
        &[(
            "policy",
            "endpoint policies (overprovisioning, drops): not modelled",
        )],
        "a load assignment",
    );
    let first = localities
        .iter()
        .filter(|(_, _, n)| *n > 0)
        .map(|(priority, _, _)| *priority)
        .min();
    let mut count = 0u64;
    for (priority, pp, n) in localities {
        match first {
            Some(first) if priority == first => count += n,
            Some(first) if n > 0 => cx.unmapped(
                &pp,
                format!("{n} failover endpoint{} (priority {priority}): Envoy sends this level traffic only as priority {first}'s endpoints turn unhealthy, a failover by health, not per failed call; the model has one priority level, so they are not counted in the upstream's instances", if n == 1 { "" } else { "s" }),
            ),
            _ => {}
        }
    }
    if count > MAX_INSTANCES {
        cx.unmapped(
            path,
            format!("{count} endpoints: the model has at most {MAX_INSTANCES} instances of a service, and gets that many"),
        );
        count = MAX_INSTANCES;
    }
    (count > 0).then_some(count)
}

fn circuit_breakers(cx: &mut Cx, node: &Node, path: &str, c: &mut Cluster) {
    let Some(mut f) = cx.fields(node, path) else {
        return;
    };
    if let Some((n, p)) = f.take("thresholds") {
        if let Some(items) = cx.list(n, &p) {
            for (i, t) in items.iter().enumerate() {
                thresholds(cx, t, &index(&p, i), c);
            }
        }
    }
    f.finish(
        cx,
        &[(
            "per_host_thresholds",
            "per-host limits: the model's bulkhead is per edge",
        )],
        "circuit_breakers",
    );
}

fn thresholds(cx: &mut Cx, node: &Node, path: &str, c: &mut Cluster) {
    let Some(mut f) = cx.fields(node, path) else {
        return;
    };
    if let Some((n, p)) = f.take("priority") {
        let prio = cx.string(n, &p).unwrap_or_default();
        if !prio.eq_ignore_ascii_case("DEFAULT") {
            // The whole threshold is reported, not each of its keys.
            cx.unmapped(
                path,
                format!("thresholds for priority {prio}: the model's requests have one priority"),
            );
            return;
        }
    }
    if let Some((n, p)) = f.take("max_requests") {
        if let Some(v) = cx.count(n, &p) {
            if v == 0 {
                cx.unmapped(&p, "0 admits no request: the model's bulkhead needs at least 1; Envoy's default (1024) is used");
            } else {
                c.max_requests = v;
            }
        }
    }
    if let Some((n, p)) = f.take("max_retries") {
        if let Some(v) = cx.count(n, &p) {
            c.retry_budget = max_retries_budget(v);
        }
    }
    if let Some((n, p)) = f.take("retry_budget") {
        if let Some(mut b) = cx.fields(n, &p) {
            let percent = match b.take("budget_percent") {
                Some((pn, pp)) => cx.fields(pn, &pp).and_then(|mut pf| {
                    let v = pf.take("value").and_then(|(vn, vp)| {
                        let v = cx.non_negative(vn, &vp)?;
                        if v > 100.0 {
                            cx.problem(&vp, vn, format!("a percent is at most 100, found {v}"));
                            return None;
                        }
                        Some(v)
                    });
                    pf.finish(cx, &[], "a percent");
                    v
                }),
                None => Some(20.0),
            };
            let min = match b.take("min_retry_concurrency") {
                Some((mn, mp)) => cx.count(mn, &mp),
                None => Some(3),
            };
            b.finish(cx, &[], "retry_budget");
            if let (Some(percent), Some(min)) = (percent, min) {
                // The budget overrides max_retries.
                c.retry_budget = json!({"kind": "envoy", "budget_percent": percent, "min_retry_concurrency": min});
            }
        }
    }
    f.finish(
        cx,
        &[
            (
                "max_connections",
                "connections: the model has none (the bulkhead is max_requests)",
            ),
            (
                "max_pending_requests",
                "the queue for a connection: the model has no connection pool",
            ),
            (
                "max_connection_pools",
                "connection pools: the model has none",
            ),
            ("track_remaining", "statistics: no effect on calls"),
        ],
        "thresholds",
    );
}

/// Outlier detection: the settings the model has; Envoy's others (success
/// rate, failure percentage, gateway failures) are unmapped.
pub(crate) fn outlier_detection(cx: &mut Cx, node: &Node, path: &str) -> Option<Value> {
    let mut f = cx.fields(node, path)?;
    let mut o = Map::new();
    let mut count = |f: &mut Fields, cx: &mut Cx, key: &str, field: &str, default: u64| {
        let v = match f.take(key) {
            Some((n, p)) => cx.count(n, &p),
            None => Some(default),
        };
        if let Some(v) = v {
            o.insert(field.into(), json!(v));
        }
    };
    count(&mut f, cx, "consecutive_5xx", "consecutive_5xx", 5);
    let ms = |f: &mut Fields, cx: &mut Cx, key: &str, field: &str, default: f64| match f.take(key) {
        // Envoy's validation: every duration of outlier detection above 0.
        Some((n, p)) => cx
            .positive_duration_ms(n, &p, Proto)
            .map(|v| (field.to_string(), json!(v))),
        None => Some((field.to_string(), json!(default))),
    };
    let interval = ms(&mut f, cx, "interval", "interval_ms", 10_000.0);
    let base = ms(
        &mut f,
        cx,
        "base_ejection_time",
        "base_ejection_time_ms",
        30_000.0,
    );
    let max = ms(
        &mut f,
        cx,
        "max_ejection_time",
        "max_ejection_time_ms",
        300_000.0,
    );
    for (k, v) in [interval, base, max].into_iter().flatten() {
        o.insert(k, v);
    }
    let pct = match f.take("max_ejection_percent") {
        Some((n, p)) => cx.count(n, &p),
        None => Some(10),
    };
    if let Some(p) = pct {
        o.insert("max_ejection_percent".into(), json!(p.min(100)));
    }
    if let Some((n, p)) = f.take("always_eject_one_host") {
        if let Some(b) = cx.boolean(n, &p) {
            o.insert("always_eject_one_host".into(), json!(b));
        }
    }
    let success_rate = "success-rate ejection: the model ejects on consecutive failures only";
    let failure_pct = "failure-percentage ejection: the model ejects on consecutive failures only";
    f.finish(
        cx,
        &[
            ("consecutive_gateway_failure", "gateway-failure ejection: the model ejects on consecutive failures (consecutive_5xx) only"),
            ("enforcing_consecutive_gateway_failure", "gateway-failure ejection: the model ejects on consecutive failures (consecutive_5xx) only"),
            ("enforcing_consecutive_5xx", "enforcement below 100%: the model always ejects"),
            ("consecutive_local_origin_failure", "local-origin failures apart: the model counts every failure together"),
            ("enforcing_consecutive_local_origin_failure", "local-origin failures apart: the model counts every failure together"),
            ("split_external_local_origin_errors", "local-origin failures apart: the model counts every failure together"),
            ("success_rate_minimum_hosts", success_rate),
            ("success_rate_request_volume", success_rate),
            ("success_rate_stdev_factor", success_rate),
            ("enforcing_success_rate", success_rate),
            ("enforcing_local_origin_success_rate", success_rate),
            ("failure_percentage_threshold", failure_pct),
            ("enforcing_failure_percentage", failure_pct),
            ("enforcing_failure_percentage_local_origin", failure_pct),
            ("failure_percentage_minimum_hosts", failure_pct),
            ("failure_percentage_request_volume", failure_pct),
            ("max_ejection_time_jitter", "jitter of ejection times: the model's are exact"),
            ("successful_active_health_check_uneject_host", "active health checks: the model has none"),
        ],
        "outlier_detection",
    );
    never_ejects(cx, path, "consecutive_5xx", o)
}

/// Outlier detection that ejects after 0 consecutive failures never ejects
/// (Envoy counts up to it; Istio documents 0 as "off"): left out, said so,
/// as the model's needs at least 1.
pub(crate) fn never_ejects(
    cx: &mut Cx,
    path: &str,
    key: &str,
    o: Map<String, Value>,
) -> Option<Value> {
    if o.get("consecutive_5xx") == Some(&json!(0)) {
        cx.unmapped(
            &super::tree::join(path, key),
            format!("{key} 0: outlier detection never ejects, so the model has none here"),
        );
        return None;
    }
    Some(Value::Object(o))
}
