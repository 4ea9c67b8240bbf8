//! Configuration files as their projects' docs show them
//! (`tests/data/config/`, each citing its source), imported and compared
//! field by field with the model values they stand for; every unmapped
//! setting reported; resilience4j's defaults for what is absent; wrong input
//! refused with its path; and every imported model loads.

use serde_json::{json, Value};
use stormsim_import::{import, ImportError, Imported, Problem, Source};

fn data(name: &str) -> (String, String) {
    let path = format!("{}/tests/data/config/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    (name.to_string(), text)
}

fn imported(source: Source, files: &[&str]) -> Imported {
    let inputs: Vec<_> = files.iter().map(|f| data(f)).collect();
    imported_inputs(source, &inputs)
}

/// [`imported`] for a file written in the test.
fn imported_text(source: Source, name: &str, text: &str) -> Imported {
    imported_inputs(source, &[(name.to_string(), text.to_string())])
}

fn imported_inputs(source: Source, inputs: &[(String, String)]) -> Imported {
    let imported = import(source, inputs).unwrap_or_else(|e| match e {
        ImportError::Invalid(ps) => panic!("{ps:#?}"),
    });
    assert!(imported.whole_model);
    // The round trip: what was written loads as a model, without errors.
    let text = serde_json::to_string_pretty(&imported.model).unwrap();
    if let Err(e) = stormsim_model::load_model(&text, &[], None) {
        panic!("the imported model does not load: {e}\n{text}");
    }
    imported
}

fn invalid(source: Source, name: &str, text: &str) -> Vec<Problem> {
    match import(source, &[(name.to_string(), text.to_string())]) {
        Ok(i) => panic!("imported: {:#}", i.model),
        Err(ImportError::Invalid(ps)) => ps,
    }
}

/// `app`'s call step whose class (or, alone, whose callee) is `edge`.
fn step<'a>(model: &'a Value, edge: &str) -> &'a Value {
    let steps = model["services"][0]["steps"].as_array().unwrap();
    steps
        .iter()
        .find(|s| {
            s["only_classes"]
                .as_array()
                .map_or(s["call"] == edge, |c| c[0] == edge)
        })
        .unwrap_or_else(|| panic!("no step for {edge}: {steps:#?}"))
}

fn workload<'a>(model: &'a Value, name: &str) -> &'a Value {
    model["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == name)
        .unwrap_or_else(|| panic!("no workload {name}"))
}

fn service<'a>(model: &'a Value, name: &str) -> &'a Value {
    model["services"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no service {name}"))
}

/// Each `(field, value)` is the step's.
fn assert_policies(step: &Value, expected: &[(&str, Value)]) {
    for (field, value) in expected {
        assert_eq!(&step[field], value, "{field}");
    }
}

fn unmapped_paths(i: &Imported) -> Vec<&str> {
    i.unmapped.iter().map(|u| u.path.as_str()).collect()
}

#[test]
fn config_envoy_bootstrap_maps_route_and_cluster_settings() {
    let i = imported(Source::Envoy, &["envoy-bootstrap.yaml"]);
    let m = &i.model;
    let pay = step(m, "payments");
    assert_eq!(pay["call"], "payments");
    // per_try_timeout: 0.25s is the per-attempt timeout.
    assert_eq!(pay["timeout_ms"], 250.0);
    // num_retries: 3 is 4 attempts.
    assert_eq!(pay["retry"]["max_attempts"], 4);
    assert_eq!(
        pay["retry"]["backoff"],
        json!({"kind": "exponential", "base_ms": 50.0, "multiplier": 2.0, "cap_ms": 1000.0})
    );
    assert_eq!(pay["retry"]["jitter"], "full");
    // 5xx covers every transient failure (reset and connect-failure too).
    assert_eq!(
        pay["retry"]["retry_on"],
        json!([
            "timeout",
            "deadline_exceeded",
            "rejected",
            "error",
            "connection_refused"
        ])
    );
    assert_eq!(
        pay["retry"]["budget"],
        json!({"kind": "envoy", "budget_percent": 25.0, "min_retry_concurrency": 5})
    );
    assert_eq!(pay["connect_timeout_ms"], 500.0);
    assert_eq!(pay["balancer"], "power_of_two_choices");
    assert_eq!(
        pay["outlier_detection"],
        json!({"consecutive_5xx": 3, "interval_ms": 5000.0, "base_ejection_time_ms": 15000.0,
               "max_ejection_time_ms": 300000.0, "max_ejection_percent": 50})
    );
    assert_eq!(
        pay["bulkhead"],
        json!({"max_concurrent_calls": 200, "max_wait_ms": 0.0})
    );
    // The route timeout (2s) covers every attempt: the workload's deadline.
    assert_eq!(workload(m, "client-payments")["deadline_ms"], 2000.0);
    assert_eq!(service(m, "payments")["instances"], 3);

    // A route without retry policy or timeout: Envoy's defaults.
    let cat = step(m, "catalog");
    assert!(cat.get("retry").is_none());
    assert!(cat.get("timeout_ms").is_none());
    assert_eq!(cat["connect_timeout_ms"], 250.0);
    assert_eq!(cat["bulkhead"]["max_concurrent_calls"], 1024);
    assert_eq!(workload(m, "client-catalog")["deadline_ms"], 15000.0);

    let prefix = "static_resources.listeners[0].filter_chains[0].filters[0].typed_config";
    let route0 = format!("{prefix}.route_config.virtual_hosts[0].routes[0]");
    let expected = [
        format!("{route0}.route.retry_policy.retry_host_predicate"),
        format!("{route0}.route.retry_policy.host_selection_retry_max_attempts"),
        format!("{route0}.match"),
        format!("{prefix}.route_config.virtual_hosts[0].domains"),
        format!("{prefix}.http_filters"),
        "static_resources.listeners[0].address".into(),
        "static_resources.clusters[0].circuit_breakers.thresholds[0].max_connections".into(),
        "static_resources.clusters[0].circuit_breakers.thresholds[0].max_pending_requests".into(),
        "static_resources.clusters[0].circuit_breakers.thresholds[1]".into(),
        "static_resources.clusters[0].outlier_detection.enforcing_success_rate".into(),
        "static_resources.clusters[0].type".into(),
        "admin".into(),
    ];
    let paths = unmapped_paths(&i);
    for e in &expected {
        assert!(paths.contains(&e.as_str()), "{e} not reported: {paths:#?}");
    }
    // The HIGH threshold is reported whole, not key by key.
    assert!(!paths
        .iter()
        .any(|p| p.ends_with("thresholds[1].max_requests")));
}

#[test]
fn config_envoy_json_cluster_and_route_files_join() {
    let cluster = r#"{"name": "inventory", "connect_timeout": "1s",
        "circuit_breakers": {"thresholds": [{"max_retries": 2, "max_requests": 50}]},
        "outlier_detection": {}, "upstream_bind_config": {}}"#;
    let routes = r#"
name: local_route
virtual_hosts:
- name: inv
  domains: ["*"]
  retry_policy:
    retry_on: gateway-error
    retriable_status_codes: [409]
  routes:
  - match: {prefix: "/"}
    route:
      cluster: inventory
      timeout: 0s
"#;
    let inputs = [
        ("cluster.json".to_string(), cluster.to_string()),
        ("routes.yaml".to_string(), routes.to_string()),
    ];
    let i = import(Source::Envoy, &inputs).unwrap();
    let s = step(&i.model, "inventory");
    // The virtual host's retry policy applies to its routes; defaults for
    // num_retries (1) and back-off (25 ms, cap 10 × base).
    assert_eq!(s["retry"]["max_attempts"], 2);
    assert_eq!(s["retry"]["backoff"]["base_ms"], 25.0);
    assert_eq!(s["retry"]["backoff"]["cap_ms"], 250.0);
    assert_eq!(
        s["retry"]["retry_on"],
        json!([
            "timeout",
            "deadline_exceeded",
            "rejected",
            "connection_refused"
        ])
    );
    // max_retries is Envoy's budget with no percentage.
    assert_eq!(
        s["retry"]["budget"],
        json!({"kind": "envoy", "budget_percent": 0.0, "min_retry_concurrency": 2})
    );
    assert_eq!(s["bulkhead"]["max_concurrent_calls"], 50);
    assert_eq!(s["connect_timeout_ms"], 1000.0);
    // outlier_detection: {} is on, with Envoy's defaults.
    assert_eq!(
        s["outlier_detection"],
        json!({"consecutive_5xx": 5, "interval_ms": 10000.0, "base_ejection_time_ms": 30000.0,
               "max_ejection_time_ms": 300000.0, "max_ejection_percent": 10})
    );
    // timeout: 0s disables the route timeout.
    assert!(i.model["workloads"][0].get("deadline_ms").is_none());
    let unmapped: Vec<_> = i
        .unmapped
        .iter()
        .map(|u| (u.file.as_str(), u.path.as_str()))
        .collect();
    assert!(unmapped.contains(&("cluster.json", "upstream_bind_config")));
    assert!(unmapped.contains(&(
        "routes.yaml",
        "virtual_hosts[0].retry_policy.retriable_status_codes[0]"
    )));
}

#[test]
fn config_istio_virtual_service_and_destination_rule() {
    let i = imported(Source::Istio, &["istio.yaml"]);
    let m = &i.model;
    let r = step(m, "ratings");
    // perTryTimeout 2s, attempts 3 (retries), timeout 10s for all of them.
    assert_eq!(r["timeout_ms"], 2000.0);
    assert_eq!(r["retry"]["max_attempts"], 4);
    assert_eq!(
        r["retry"]["retry_on"],
        json!([
            "timeout",
            "deadline_exceeded",
            "rejected",
            "connection_refused"
        ])
    );
    assert_eq!(workload(m, "client-ratings")["deadline_ms"], 10000.0);
    // The DestinationRule of ratings.prod.svc.cluster.local.
    assert_eq!(r["connect_timeout_ms"], 30.0);
    assert_eq!(r["balancer"], "power_of_two_choices");
    assert_eq!(r["bulkhead"]["max_concurrent_calls"], 100);
    assert_eq!(
        r["retry"]["budget"],
        json!({"kind": "envoy", "budget_percent": 0.0, "min_retry_concurrency": 4})
    );
    // A route without retries: Istio's default policy (2 retries on
    // connect-failure, refused-stream, unavailable, 503), no timeout, no
    // circuit-breaker limits, a 10 s connect timeout.
    let rv = step(m, "reviews");
    assert_eq!(rv["retry"]["max_attempts"], 3);
    assert_eq!(
        rv["retry"]["retry_on"],
        json!(["connection_refused", "rejected"])
    );
    assert!(rv["retry"].get("budget").is_none());
    assert!(rv.get("bulkhead").is_none());
    assert_eq!(rv["connect_timeout_ms"], 10000.0);
    assert!(workload(m, "client-reviews").get("deadline_ms").is_none());
    // The circuit-breaking task's DestinationRule, which no route names.
    let h = step(m, "httpbin");
    assert!(h.get("retry").is_none());
    assert_eq!(
        h["outlier_detection"],
        json!({"consecutive_5xx": 1, "interval_ms": 1000.0, "base_ejection_time_ms": 180000.0,
               "max_ejection_percent": 100})
    );
    let paths = unmapped_paths(&i);
    for e in [
        "(document 1).spec.http[0].route[0].destination.subset",
        "(document 3).spec.trafficPolicy.connectionPool.tcp.maxConnections",
        "(document 3).spec.trafficPolicy.connectionPool.http.http1MaxPendingRequests",
        "(document 3).spec.trafficPolicy.connectionPool.http.maxRequestsPerConnection",
        "(document 4).spec.subsets",
    ] {
        assert!(paths.contains(&e), "{e} not reported: {paths:#?}");
    }
}

#[test]
fn config_grpc_service_config_retry_hedging_throttling() {
    let i = imported(Source::Grpc, &["grpc-service-config.json"]);
    let m = &i.model;
    let say = step(m, "Greeter");
    assert_eq!(say["call"], "Greeter");
    assert_eq!(
        say["retry"],
        json!({
            "max_attempts": 4,
            "backoff": {"kind": "exponential", "base_ms": 100.0, "multiplier": 2.0, "cap_ms": 1000.0},
            "jitter": "proportional",
            "jitter_factor": 0.2,
            "retry_on": ["rejected", "connection_refused", "deadline_exceeded"],
            "budget": {"kind": "grpc_throttling", "max_tokens": 10.0, "token_ratio": 0.1},
        })
    );
    assert_eq!(say["deadline"], json!({"propagate": true}));
    // timeout: 1.5s bounds the RPC, every attempt included.
    assert_eq!(workload(m, "client-Greeter")["deadline_ms"], 1500.0);
    let again = step(m, "Greeter-2");
    assert_eq!(again["idempotent"], true);
    assert_eq!(
        again["hedge"],
        json!({"delay_ms": 500.0, "max_hedges": 2, "target": "any_other",
               "non_fatal": ["rejected", "connection_refused", "error"]})
    );
    // Hedges draw on the throttling tokens too.
    assert_eq!(again["retry"]["max_attempts"], 1);
    assert_eq!(again["retry"]["budget"]["kind"], "grpc_throttling");
    assert!(workload(m, "client-Greeter-2").get("deadline_ms").is_none());
    // One instance per copy of a hedged call, so that hedges can go.
    assert_eq!(service(m, "Greeter")["instances"], 3);
    let paths = unmapped_paths(&i);
    for e in [
        "methodConfig[0].waitForReady",
        "methodConfig[1].hedgingPolicy.nonFatalStatusCodes[2]",
        "loadBalancingConfig",
    ] {
        assert!(paths.contains(&e), "{e} not reported: {paths:#?}");
    }
}

#[test]
fn config_resilience4j_instances_with_configs_and_defaults() {
    let i = imported(Source::Resilience4j, &["resilience4j-application.yml"]);
    let m = &i.model;
    let a = step(m, "backendA");
    // circuitbreaker backendA: baseConfig default, resilience4j's defaults
    // for what neither sets.
    assert_eq!(
        a["breaker"],
        json!({
            "kind": "resilience4j",
            "failure_rate_threshold": 50.0,
            "slow_call_rate_threshold": 100.0,
            "slow_call_duration_threshold_ms": 60000.0,
            "sliding_window_type": "count_based",
            "sliding_window_size": 10,
            "minimum_number_of_calls": 5,
            "wait_duration_in_open_state_ms": 5000.0,
            "permitted_number_of_calls_in_half_open_state": 3,
            "automatic_transition_from_open_to_half_open_enabled": true,
            "max_wait_duration_in_half_open_state_ms": 0.0,
        })
    );
    // retry: waitDuration 100 (milliseconds, Spring's unit for a number).
    assert_policies(
        a,
        &[
            (
                "retry",
                json!({"max_attempts": 3, "backoff": {"kind": "fixed", "ms": 100.0}, "jitter": "none"}),
            ),
            (
                "bulkhead",
                json!({"max_concurrent_calls": 10, "max_wait_ms": 0.0}),
            ),
            (
                "rate_limit",
                json!({"kind": "resilience4j", "limit_for_period": 10, "limit_refresh_period_ms": 1000.0, "timeout_ms": 0.0}),
            ),
            ("timeout_ms", json!(2000.0)),
        ],
    );

    let b = step(m, "backendB");
    // No baseConfig: configs.default is the base (automatic transition).
    assert_eq!(b["breaker"]["minimum_number_of_calls"], 10);
    assert_eq!(
        b["breaker"]["automatic_transition_from_open_to_half_open_enabled"],
        true
    );
    assert_eq!(
        b["retry"],
        json!({"max_attempts": 3,
               "backoff": {"kind": "exponential", "base_ms": 100.0, "multiplier": 2.0},
               "jitter": "proportional", "jitter_factor": 0.2})
    );
    assert_eq!(
        b["bulkhead"],
        json!({"max_concurrent_calls": 20, "max_wait_ms": 10.0})
    );
    assert_eq!(b["rate_limit"]["limit_for_period"], 6);
    assert_eq!(b["rate_limit"]["limit_refresh_period_ms"], 500.0);
    assert_eq!(b["rate_limit"]["timeout_ms"], 3000.0);

    // backendC: baseConfig shared, kebab-case keys, ISO-8601 duration; only
    // a breaker.
    let c = step(m, "backendC");
    assert_eq!(c["breaker"]["sliding_window_type"], "time_based");
    assert_eq!(c["breaker"]["sliding_window_size"], 100);
    assert_eq!(
        c["breaker"]["permitted_number_of_calls_in_half_open_state"],
        30
    );
    assert_eq!(c["breaker"]["wait_duration_in_open_state_ms"], 1000.0);
    assert_eq!(c["breaker"]["slow_call_duration_threshold_ms"], 2000.0);
    // A config without baseConfig is built on resilience4j's defaults.
    assert_eq!(c["breaker"]["minimum_number_of_calls"], 100);
    assert_eq!(
        c["breaker"]["automatic_transition_from_open_to_half_open_enabled"],
        false
    );
    assert!(c.get("retry").is_none());

    let paths = unmapped_paths(&i);
    for e in [
        "server",
        "resilience4j.timelimiter.configs.default.cancelRunningFuture",
        "resilience4j.retry.configs.default.retryExceptions",
        "resilience4j.circuitbreaker.configs.default.registerHealthIndicator",
        "resilience4j.circuitbreaker.instances.backendB.recordFailurePredicate",
        "resilience4j.thread-pool-bulkhead",
    ] {
        assert!(paths.contains(&e), "{e} not reported: {paths:#?}");
    }
}

#[test]
fn config_resilience4j_absent_fields_take_resilience4j_defaults() {
    let text = "resilience4j:\n  circuitbreaker:\n    instances:\n      inventory:\n  retry:\n    instances:\n      inventory: {}\n  bulkhead:\n    instances:\n      inventory: {}\n  ratelimiter:\n    instances:\n      inventory: {}\n  timelimiter:\n    instances:\n      inventory: {}\n";
    let i = import(Source::Resilience4j, &[("app.yml".into(), text.into())]).unwrap();
    let s = step(&i.model, "inventory");
    assert_eq!(
        s["breaker"],
        json!({
            "kind": "resilience4j",
            "failure_rate_threshold": 50.0,
            "slow_call_rate_threshold": 100.0,
            "slow_call_duration_threshold_ms": 60000.0,
            "sliding_window_type": "count_based",
            "sliding_window_size": 100,
            "minimum_number_of_calls": 100,
            "wait_duration_in_open_state_ms": 60000.0,
            "permitted_number_of_calls_in_half_open_state": 10,
            "automatic_transition_from_open_to_half_open_enabled": false,
            "max_wait_duration_in_half_open_state_ms": 0.0,
        })
    );
    assert_policies(
        s,
        &[
            (
                "retry",
                json!({"max_attempts": 3, "backoff": {"kind": "fixed", "ms": 500.0}, "jitter": "none"}),
            ),
            (
                "bulkhead",
                json!({"max_concurrent_calls": 25, "max_wait_ms": 0.0}),
            ),
            (
                "rate_limit",
                json!({"kind": "resilience4j", "limit_for_period": 50, "limit_refresh_period_ms": 0.0005, "timeout_ms": 5000.0}),
            ),
            ("timeout_ms", json!(1000.0)),
        ],
    );
    assert!(i.unmapped.is_empty(), "{:#?}", i.unmapped);
}

/// The message of the warning at `path`.
fn unmapped_at<'a>(i: &'a Imported, path: &str) -> &'a str {
    i.unmapped
        .iter()
        .find(|u| u.path == path)
        .map(|u| u.message.as_str())
        .unwrap_or_else(|| panic!("{path} not reported: {:#?}", i.unmapped))
}

/// No call step of the model has a fallback: what looks like one in the
/// input is reported, never guessed.
fn assert_no_fallback(model: &Value) {
    for s in model["services"][0]["steps"].as_array().unwrap() {
        assert!(s.get("fallback").is_none(), "{s:#}");
    }
}

#[test]
fn config_resilience4j_fallback_method_is_reported_with_how_to_model_it() {
    // Where people put the annotations' fallbackMethod in configuration:
    // on an instance (kebab case and a dotted key too), a config, a module,
    // resilience4j itself, and Spring Cloud's keys (a Gateway route's CircuitBreaker
    // filter takes a fallbackUri).
    let text = "\
resilience4j:
  fallbackMethod: everywhere
  circuitbreaker:
    fallbackMethod: fallbackForAll
    configs:
      default:
        slidingWindowSize: 10
        fallbackMethod: defaultFallback
    instances:
      inventory:
        baseConfig: default
        fallbackMethod: cachedInventory
  retry:
    instances:
      inventory:
        maxAttempts: 2
        fallback-method: retryFallback
resilience4j.bulkhead.instances.inventory.fallbackMethod: bulkheadFallback
spring:
  cloud:
    gateway:
      routes:
      - id: inventory
        uri: lb://inventory
        filters:
        - name: CircuitBreaker
          args:
            name: inventory
            fallbackUri: forward:/inventory-fallback
    circuitbreaker:
      resilience4j:
        fallbackMethod: springFallback
";
    let i = imported_text(Source::Resilience4j, "app.yml", text);
    for path in [
        "resilience4j.fallbackMethod",
        "resilience4j.circuitbreaker.fallbackMethod",
        "resilience4j.circuitbreaker.configs.default.fallbackMethod",
        "resilience4j.circuitbreaker.instances.inventory.fallbackMethod",
        "resilience4j.retry.instances.inventory.fallback-method",
        "resilience4j.bulkhead.instances.inventory.fallbackMethod",
        "spring.cloud.circuitbreaker.resilience4j.fallbackMethod",
    ] {
        let why = unmapped_at(&i, path);
        assert!(
            why.starts_with("a fallback method: Java code"),
            "{path}: {why}"
        );
        for kind in [
            "stale",
            "default",
            "call",
            "fail",
            "fallback on the call step",
        ] {
            assert!(why.contains(kind), "{path}: {kind} not in {why}");
        }
    }
    let why = unmapped_at(
        &i,
        "spring.cloud.gateway.routes[0].filters[0].args.fallbackUri",
    );
    assert!(why.contains("Spring Cloud Gateway fallback"), "{why}");
    // As before: the key outside resilience4j is reported whole too, and
    // the instance's policies are imported as they were.
    assert_eq!(unmapped_at(&i, "spring"), "not resilience4j configuration");
    let s = step(&i.model, "inventory");
    assert_eq!(s["breaker"]["sliding_window_size"], 10);
    assert_eq!(s["retry"]["max_attempts"], 2);
    assert_eq!(s["bulkhead"]["max_concurrent_calls"], 25);
    assert_no_fallback(&i.model);
}

#[test]
fn config_envoy_aggregate_cluster_is_reported_not_taken_for_a_fallback() {
    // Envoy's documented aggregate cluster, with its clusters and a route.
    let text = r#"{"static_resources": {"clusters": [
        {"name": "aggregate_cluster", "connect_timeout": "0.25s", "lb_policy": "CLUSTER_PROVIDED",
         "cluster_type": {"name": "envoy.clusters.aggregate", "typed_config": {
             "@type": "type.googleapis.com/envoy.extensions.clusters.aggregate.v3.ClusterConfig",
             "clusters": ["primary", "secondary.svc", "tertiary"]}}},
        {"name": "primary", "connect_timeout": "0.1s"},
        {"name": "secondary.svc", "connect_timeout": "1s"},
        {"name": "tertiary"},
        {"name": "resolver", "clusterType": {"name": "envoy.clusters.dynamic_forward_proxy"},
         "lb_subset_config": {"fallback_policy": "ANY_ENDPOINT"}}]}}"#;
    let i = imported_text(Source::Envoy, "aggregate.json", text);
    let why = unmapped_at(&i, "static_resources.clusters[0].cluster_type");
    assert!(
        why.starts_with(r#"an aggregate cluster, failing over through ["primary", "secondary.svc", "tertiary"] in order"#),
        "{why}"
    );
    assert!(why.contains("not per failed call"), "{why}");
    // The nearest model, with the names the import gives the services.
    assert!(
        why.contains(r#"a call step to primary with fallback {"chain":[{"kind":"call","call":"secondary-svc"},{"kind":"call","call":"tertiary"}],"degraded":false}"#),
        "{why}"
    );
    assert!(
        unmapped_at(&i, "static_resources.clusters[4].clusterType").starts_with(
            r#"cluster type "envoy.clusters.dynamic_forward_proxy": a cluster extension"#
        )
    );
    assert!(
        unmapped_at(&i, "static_resources.clusters[4].lb_subset_config")
            .contains("not when a call fails")
    );
    // Every cluster is still an edge of its own, none with a fallback.
    for edge in [
        "aggregate_cluster",
        "primary",
        "secondary-svc",
        "tertiary",
        "resolver",
    ] {
        step(&i.model, edge);
    }
    assert_no_fallback(&i.model);
}

#[test]
fn config_envoy_failover_endpoints_are_not_counted_as_instances() {
    // Three endpoints at priority 0 (one written, one by default), two in
    // the failover priority 1, and a cluster whose first level is 1.
    let text = r#"{"clusters": [
        {"name": "payments", "load_assignment": {"endpoints": [
            {"lb_endpoints": [{}, {}]},
            {"priority": 0, "lb_endpoints": [{}]},
            {"priority": 1, "lb_endpoints": [{}, {}]},
            {"priority": 2, "lb_endpoints": []}]}},
        {"name": "standby", "load_assignment": {"endpoints": [
            {"priority": 1, "lb_endpoints": [{}, {}, {}, {}]},
            {"priority": 2, "lb_endpoints": [{}]}]}}]}"#;
    let i = imported_text(Source::Envoy, "eds.json", text);
    assert_eq!(service(&i.model, "payments")["instances"], 3);
    assert_eq!(service(&i.model, "standby")["instances"], 4);
    let why = unmapped_at(&i, "clusters[0].load_assignment.endpoints[2].priority");
    assert!(
        why.starts_with("2 failover endpoints (priority 1): Envoy sends this level traffic only as priority 0's endpoints turn unhealthy"),
        "{why}"
    );
    assert!(
        unmapped_at(&i, "clusters[1].load_assignment.endpoints[1].priority").starts_with(
            "1 failover endpoint (priority 2): Envoy sends this level traffic only as priority 1's"
        )
    );
    // Priority 0 is the default, and a level without endpoints does
    // nothing: neither is reported.
    let paths = unmapped_paths(&i);
    assert!(!paths
        .iter()
        .any(|p| p.ends_with("endpoints[1].priority") && p.starts_with("clusters[0]")));
    assert!(!paths.contains(&"clusters[0].load_assignment.endpoints[3].priority"));
    assert!(!paths.iter().any(|p| p.ends_with("endpoints[0].priority")));
}

#[test]
fn config_istio_locality_failover_is_reported_not_taken_for_a_fallback() {
    // Istio's locality failover task's DestinationRule.
    let text = "\
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata:
  name: helloworld
spec:
  host: helloworld.sample.svc.cluster.local
  trafficPolicy:
    connectionPool:
      http:
        maxRequestsPerConnection: 1
    loadBalancer:
      simple: ROUND_ROBIN
      localityLbSetting:
        enabled: true
        failover:
          - from: region1
            to: region2
        failoverPriority:
          - topology.kubernetes.io/region
    outlierDetection:
      consecutive5xxErrors: 1
      interval: 1s
      baseEjectionTime: 1m
";
    let i = imported_text(Source::Istio, "dr.yaml", text);
    let lb = "spec.trafficPolicy.loadBalancer.localityLbSetting";
    for key in ["failover", "failoverPriority"] {
        let why = unmapped_at(&i, &format!("{lb}.{key}"));
        assert!(why.starts_with("locality failover:"), "{why}");
        assert!(why.contains("same service"), "{why}");
        assert!(why.contains("not imported as a fallback"), "{why}");
    }
    assert_eq!(
        unmapped_at(&i, &format!("{lb}.enabled")),
        "locality-aware balancing: the model's skeleton has no zones"
    );
    let h = step(&i.model, "helloworld");
    assert_eq!(h["balancer"], "round_robin");
    assert_eq!(h["outlier_detection"]["consecutive_5xx"], 1);
    assert_no_fallback(&i.model);
}

#[test]
fn config_unknown_keys_are_reported_not_dropped() {
    let text = r#"{"methodConfig": [{"name": [{"service": "a.B"}], "timeout": "1s", "retryPolicy":
        {"maxAttempts": 7, "initialBackoff": "1s", "maxBackoff": "2s", "backoffMultiplier": 1.5,
         "retryableStatusCodes": [14, "cancelled"], "colour": "blue"}}], "extra": 1}"#;
    let i = import(Source::Grpc, &[("sc.json".into(), text.into())]).unwrap();
    let paths = unmapped_paths(&i);
    assert!(paths.contains(&"extra"));
    assert!(paths.contains(&"methodConfig[0].retryPolicy.colour"));
    assert!(paths.contains(&"methodConfig[0].retryPolicy.retryableStatusCodes[1]"));
    // maxAttempts above 5 is clamped, and said so.
    assert!(paths.contains(&"methodConfig[0].retryPolicy.maxAttempts"));
    assert_eq!(step(&i.model, "B")["retry"]["max_attempts"], 5);
    // 14 is UNAVAILABLE.
    assert_eq!(
        step(&i.model, "B")["retry"]["retry_on"],
        json!(["rejected", "connection_refused"])
    );
}

#[test]
fn config_bad_input_is_every_problem_with_its_path() {
    let ps = invalid(Source::Envoy, "bad.yaml", "clusters: [ {name: a\n");
    assert_eq!(ps.len(), 1);
    assert!(ps[0].message.starts_with("not valid YAML"), "{ps:?}");

    let ps = invalid(
        Source::Envoy,
        "c.yaml",
        "name: a\nconnect_timeout: -1s\ncircuit_breakers:\n  thresholds:\n  - max_requests: lots\n",
    );
    let paths: Vec<_> = ps.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "connect_timeout",
            "circuit_breakers.thresholds[0].max_requests"
        ]
    );
    assert!(ps[0].message.contains("line 2"), "{ps:?}");
    assert!(ps[0].message.contains("negative"), "{ps:?}");

    // Envoy durations are protobuf's: "250ms" is refused.
    let ps = invalid(
        Source::Envoy,
        "r.yaml",
        "virtual_hosts:\n- name: v\n  routes:\n  - route: {cluster: a, timeout: 250ms}\n",
    );
    assert_eq!(ps[0].path, "virtual_hosts[0].routes[0].route.timeout");

    let ps = invalid(
        Source::Grpc,
        "g.json",
        r#"{"methodConfig": [{"name": [{}], "retryPolicy": {"maxAttempts": 1}, "hedgingPolicy": {"maxAttempts": 2}}]}"#,
    );
    let messages: Vec<_> = ps
        .iter()
        .map(|p| format!("{}: {}", p.path, p.message))
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("only one of retryPolicy")),
        "{messages:#?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("methodConfig[0].retryPolicy.maxAttempts")),
        "{messages:#?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("initialBackoff is required")),
        "{messages:#?}"
    );

    let ps = invalid(
        Source::Resilience4j,
        "a.yml",
        "resilience4j.retry:\n  instances:\n    a:\n      baseConfig: nope\n      waitDuration: 1.5s\n",
    );
    let paths: Vec<_> = ps.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "resilience4j.retry.instances.a.waitDuration",
            "resilience4j.retry.instances.a.baseConfig"
        ]
    );

    let ps = invalid(Source::Istio, "i.yaml", "kind: VirtualService\nspec:\n  http:\n  - timeout: soon\n    route: [{destination: {host: a}}]\n");
    assert_eq!(ps[0].path, "spec.http[0].timeout");

    let ps = invalid(
        Source::Resilience4j,
        "n.yml",
        "spring:\n  application:\n    name: x\n",
    );
    assert!(
        ps[0].message.contains("no resilience4j instances"),
        "{ps:?}"
    );
}

#[test]
fn config_import_is_deterministic() {
    let a = imported(Source::Envoy, &["envoy-bootstrap.yaml"]);
    let b = imported(Source::Envoy, &["envoy-bootstrap.yaml"]);
    assert_eq!(a.model.to_string(), b.model.to_string());
    assert_eq!(a.unmapped, b.unmapped);
    assert_eq!(a.notes, b.notes);
}

/// Found by fuzzing the importers: a `baseConfig` chain is resolved by
/// recursion, once per instance, and its loop was found only once the
/// depth passed the number of configs: a chain of 15,000 (or a two-config
/// loop among 16,000 configs) overflowed the stack and aborted. Chains are
/// cut at 64 links, with a problem at the link.
#[test]
fn regression_a_long_or_looping_base_config_chain_is_refused_not_recursed() {
    let mut chain = String::from("resilience4j:\n  retry:\n    configs:\n");
    for i in 0..5000 {
        chain.push_str(&format!("      c{i}:\n        baseConfig: c{}\n", i + 1));
    }
    chain.push_str(
        "      c5000:\n        maxAttempts: 2\n    instances:\n      a:\n        baseConfig: c0\n",
    );
    let problems = invalid(Source::Resilience4j, "chain.yml", &chain);
    assert!(
        problems.iter().any(|p| p
            .message
            .contains("baseConfig chain loops, or is longer than 64 configs")),
        "{problems:#?}"
    );
    let mut looping = String::from(
        "resilience4j:\n  retry:\n    configs:\n      x:\n        baseConfig: y\n      y:\n        baseConfig: x\n",
    );
    for i in 0..5000 {
        looping.push_str(&format!("      filler{i}:\n        maxAttempts: 2\n"));
    }
    looping.push_str("    instances:\n      a:\n        baseConfig: x\n");
    let problems = invalid(Source::Resilience4j, "loop.yml", &looping);
    assert!(
        problems
            .iter()
            .any(|p| p.message.contains("baseConfig chain loops")),
        "{problems:#?}"
    );
}

/// Found by fuzzing the importers: Spring's dotted keys are expanded into
/// nested ones by recursion, past the YAML reader's nesting limit, and two
/// keys sharing 20,000 dotted segments overflowed the stack. Past the
/// limit a key is kept whole, and reported as a field no module knows.
#[test]
fn regression_a_key_of_thousands_of_dots_is_kept_whole() {
    let deep = vec!["x"; 20_000].join(".");
    // As JSON, which the YAML reader reads too: a plain YAML key stops at
    // 1,024 bytes.
    let text = json!({"resilience4j.retry.instances.a.maxAttempts": 3,
                      format!("{deep}.y"): 1, format!("{deep}.z"): 2})
    .to_string();
    let i = import(Source::Resilience4j, &[("dots.json".into(), text)])
        .unwrap_or_else(|ImportError::Invalid(ps)| panic!("{ps:#?}"));
    let paths = unmapped_paths(&i);
    assert_eq!(paths.len(), 2, "{}", paths.len());
    assert!(paths.iter().all(|p| p.starts_with("x.x.x.")));
    assert_eq!(step(&i.model, "a")["retry"]["max_attempts"], 3);
}
