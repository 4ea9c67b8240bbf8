//! Load shapes: a workload's arrivals per one-second bucket against the
//! integral of its rate over the bucket, within Poisson error (4 standard
//! deviations, a false alarm about once in 16,000 buckets), for each shape.

use serde_json::{json, Value};
use stormsim_model::{load_model, Arrival};
use stormsim_sim::run_variant;

/// Runs `arrival` for `seconds` into a service that answers at once, and
/// checks every bucket's arrivals against the shape's expected count.
fn assert_follows_its_shape(arrival: Value, seconds: u32) {
    let doc = json!({
        "name": "shape",
        "horizon_s": seconds,
        "timeseries": {"bucket_s": 1},
        "workloads": [{"name": "users", "target": "s", "arrival": arrival, "duration_s": seconds}],
        "services": [{"name": "s"}]
    });
    let loaded = load_model(&doc.to_string(), &[], None).unwrap_or_else(|e| panic!("{e:?}"));
    let variant = &loaded.variants[0];
    let Arrival::Shaped(shape) = &variant.model.workloads[0].arrival else {
        panic!("a shaped arrival");
    };
    let report = run_variant(variant);
    let series = &report.series.global;
    assert_eq!(series.len(), seconds as usize);
    let mut total = 0.0;
    for (k, bucket) in series.iter().enumerate() {
        let expected = shape.expected_arrivals(k as f64, k as f64 + 1.0, 1000);
        total += expected;
        let got = bucket.requests as f64;
        assert!(
            (got - expected).abs() <= 4.0 * expected.sqrt() + 1.0,
            "{arrival}: second {k}: {got} arrivals, expected {expected:.1}"
        );
    }
    let all = report.requests as f64;
    assert!(
        (all - total).abs() <= 4.0 * total.sqrt() + 1.0,
        "{arrival}: {all} arrivals in all, expected {total:.1}"
    );
}

#[test]
fn stages_ramp_hold_step_and_fall_to_nothing() {
    assert_follows_its_shape(
        json!({"kind": "stages", "start_rate_per_s": 50, "stages": [
            {"duration_s": 10, "target_rate_per_s": 1000},
            {"duration_s": 10, "target_rate_per_s": 1000},
            {"duration_s": 0, "target_rate_per_s": 200},
            {"duration_s": 5, "target_rate_per_s": 200},
            {"duration_s": 5, "target_rate_per_s": 0}
        ]}),
        40,
    );
}

#[test]
fn a_sinusoid_follows_its_cycle() {
    assert_follows_its_shape(
        json!({"kind": "sinusoid", "mean_rate_per_s": 400, "amplitude_rate_per_s": 300,
               "period_s": 20, "phase_s": 5}),
        40,
    );
}

#[test]
fn bursts_come_every_period() {
    assert_follows_its_shape(
        json!({"kind": "bursts", "base_rate_per_s": 20, "burst_rate_per_s": 2000,
               "every_s": 10, "length_s": 2, "first_at_s": 3}),
        40,
    );
}

#[test]
fn a_trace_is_replayed_bucket_by_bucket() {
    let rates: Vec<f64> = (0..30).map(|k| f64::from((k * 37) % 500)).collect();
    assert_follows_its_shape(json!({"kind": "trace", "rates_per_s": rates}), 40);
}

/// A shape's peak is a path like any other: a sweep or a search can vary it.
#[test]
fn a_stages_peak_can_be_set_by_path() {
    let doc = json!({
        "name": "shape", "horizon_s": 10,
        "workloads": [{"name": "users", "target": "s", "duration_s": 10,
            "arrival": {"kind": "stages", "stages": [{"duration_s": 5, "target_rate_per_s": 100}]}}],
        "services": [{"name": "s"}]
    });
    let sets = [(
        "workloads[users].arrival.stages[0].target_rate_per_s".to_string(),
        json!(400),
    )];
    let loaded = load_model(&doc.to_string(), &sets, None).unwrap();
    let Arrival::Shaped(shape) = &loaded.variants[0].model.workloads[0].arrival else {
        panic!("a shaped arrival");
    };
    assert_eq!(shape.max_rate(), 400.0);
}
