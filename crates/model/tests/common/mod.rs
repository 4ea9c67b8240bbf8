//! Helpers shared by the model's integration tests.
#![allow(dead_code)]

use serde_json::{json, Value};
use stormsim_model::ParamPath;

/// A small valid model: a gateway calling B.
pub fn base() -> Value {
    json!({
        "name": "t",
        "workloads": [{"name": "users", "target": "gateway",
                       "arrival": {"kind": "poisson", "rate_per_s": 10}, "requests": 10}],
        "services": [
            {"name": "gateway", "steps": [{"call": "B", "timeout_ms": 100}]},
            {"name": "B", "steps": [{"work": {"kind": "constant", "ms": 5}}]}
        ]
    })
}

/// `doc` with `value` set at the parameter path `path`.
pub fn with(mut doc: Value, path: &str, value: Value) -> Value {
    ParamPath::parse(path)
        .unwrap()
        .set(&mut doc, value)
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    doc
}
