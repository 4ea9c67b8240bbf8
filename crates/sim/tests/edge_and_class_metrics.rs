//! Per-edge counters and per-class shedding in the report agree with the
//! per-service totals they break down.

use serde_json::json;
use stormsim_model::load_model;
use stormsim_sim::run_variant;

#[test]
fn edge_and_class_breakdowns_add_up_to_the_service_totals() {
    let doc = json!({
        "name": "breakdowns",
        "workloads": [
            {"name": "gold", "class": "gold", "target": "front",
             "arrival": {"kind": "poisson", "rate_per_s": 300}, "duration_s": 20},
            {"name": "free", "class": "free", "target": "front",
             "arrival": {"kind": "poisson", "rate_per_s": 600}, "duration_s": 20}
        ],
        "services": [
            {"name": "front", "steps": [{"call": "back", "timeout_ms": 100,
                                          "retry": {"max_attempts": 3}}]},
            {"name": "back", "workers": 10, "queue_capacity": 20,
             "admission": {"shed_classes": {"free": 12}},
             "steps": [{"work": {"kind": "exponential", "mean_ms": 15}}]}
        ]
    });
    let model = load_model(&doc.to_string(), &[], None).unwrap();
    let r = run_variant(&model.variants[0]);
    let back = r.services.iter().find(|s| s.name == "back").unwrap();
    assert!(back.shed > 0, "the free class must be shed at 12 in flight");
    // Only the free class is ever shed by its threshold.
    assert_eq!(back.shed_by_class, vec![("free".to_string(), back.shed)]);
    let edge = r.edges.iter().find(|e| e.caller == "front").unwrap();
    assert_eq!(edge.callee, "back");
    assert_eq!(
        edge.counters.attempts, back.calls,
        "no attempt is lost on the wire"
    );
    assert_eq!(edge.counters.retries, back.retries);
    let workload_edges: Vec<&str> = r.edges.iter().map(|e| e.caller.as_str()).collect();
    assert_eq!(workload_edges, ["workload:gold", "workload:free", "front"]);
}
