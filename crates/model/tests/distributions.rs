//! The distributions copied from dashboards and the parametric ones: each
//! form loads into the distribution its parameters say, and each bad
//! parameter is one problem at its JSON path, all of them at once.

mod common;

use common::{base, with};
use serde_json::{json, Value};
use stormsim_model::{load_model, Dist, ModelError, Step};

const AT: &str = "services[B].steps[0].work";
const PATH: &str = "services[1].steps[0].work";

/// The distribution `work` loads as.
fn loaded(work: Value) -> Dist {
    let doc = with(base(), AT, work);
    let model = load_model(&doc.to_string(), &[], None)
        .unwrap_or_else(|e| panic!("{:?}", e.problems))
        .variants
        .remove(0)
        .model;
    match &model.services[1].steps[0] {
        Step::Work { dist, .. } => dist.clone(),
        other => panic!("{other:?}"),
    }
}

/// Every problem of a model whose B works for `work`, without the common
/// path prefix.
fn problems(work: Value) -> Vec<String> {
    let doc = with(base(), AT, work);
    match load_model(&doc.to_string(), &[], None) {
        Ok(_) => vec![],
        Err(ModelError { problems }) => problems
            .iter()
            .map(|p| {
                let text = p.to_string();
                text.strip_prefix(PATH)
                    .unwrap_or_else(|| panic!("{text}"))
                    .to_string()
            })
            .collect(),
    }
}

#[test]
fn a_dashboards_quantiles_load_as_a_piecewise_linear_cdf_from_zero() {
    let table = json!({"kind": "quantiles", "points": [
        {"q": 0.5, "ms": 12}, {"q": 0.9, "ms": 40}, {"q": 0.99, "ms": 180},
        {"q": 0.999, "ms": 600}, {"q": 1.0, "ms": 1500}]});
    assert_eq!(
        loaded(table.clone()),
        Dist::Empirical {
            ms: vec![0.0, 12.0, 40.0, 180.0, 600.0, 1500.0],
            cdf: vec![0.0, 0.5, 0.9, 0.99, 0.999, 1.0],
        }
    );
    let mut from_four = table;
    from_four["min_ms"] = json!(4);
    assert_eq!(
        loaded(from_four),
        Dist::Empirical {
            ms: vec![4.0, 12.0, 40.0, 180.0, 600.0, 1500.0],
            cdf: vec![0.0, 0.5, 0.9, 0.99, 0.999, 1.0],
        }
    );
    // A point at q = 0 is allowed: nothing below it.
    assert_eq!(
        loaded(json!({"kind": "quantiles", "points": [{"q": 0, "ms": 3}, {"q": 1, "ms": 9}]})),
        Dist::Empirical {
            ms: vec![0.0, 3.0, 9.0],
            cdf: vec![0.0, 0.0, 1.0],
        }
    );
}

#[test]
fn cumulative_histogram_buckets_load_as_shares_of_the_last_count() {
    let buckets = json!({"kind": "histogram", "buckets": [
        {"le_ms": 10, "count": 500}, {"le_ms": 50, "count": 900},
        {"le_ms": 250, "count": 990}, {"le_ms": 1000, "count": 1000}]});
    assert_eq!(
        loaded(buckets),
        Dist::Empirical {
            ms: vec![0.0, 10.0, 50.0, 250.0, 1000.0],
            cdf: vec![0.0, 0.5, 0.9, 0.99, 1.0],
        }
    );
    // Fractional counts (an increase() over a window), an empty first bucket
    // and a floor.
    assert_eq!(
        loaded(json!({"kind": "histogram", "min_ms": 1, "buckets": [
            {"le_ms": 2, "count": 0}, {"le_ms": 4, "count": 0.75}, {"le_ms": 8, "count": 3}]})),
        Dist::Empirical {
            ms: vec![1.0, 2.0, 4.0, 8.0],
            cdf: vec![0.0, 0.0, 0.25, 1.0],
        }
    );
}

#[test]
fn parametric_kinds_load_with_their_parameters() {
    assert_eq!(
        loaded(json!({"kind": "normal", "mean_ms": 20, "sd_ms": 5})),
        Dist::TruncatedNormal {
            mean_ms: 20.0,
            sd_ms: 5.0
        }
    );
    let gamma = Dist::Gamma {
        shape: 2.0,
        scale_ms: 10.0,
    };
    assert_eq!(
        loaded(json!({"kind": "gamma", "shape": 2, "mean_ms": 20})),
        gamma
    );
    assert_eq!(
        loaded(json!({"kind": "gamma", "shape": 2, "scale_ms": 10})),
        gamma
    );
    assert_eq!(
        loaded(json!({"kind": "weibull", "shape": 1.5, "scale_ms": 30})),
        Dist::Weibull {
            shape: 1.5,
            scale_ms: 30.0
        }
    );
    assert_eq!(
        loaded(json!({"kind": "pareto", "shape": 2.5, "scale_ms": 8})),
        Dist::Pareto {
            shape: 2.5,
            scale_ms: 8.0
        }
    );
}

#[test]
fn a_bad_quantile_table_is_reported_point_by_point() {
    let table = |points: Value| json!({"kind": "quantiles", "points": points});
    assert_eq!(
        problems(table(
            json!([{"q": 0.5, "ms": 12}, {"q": 0.4, "ms": 40}, {"q": 1, "ms": 99}])
        )),
        [".points[1].q: expected q ≥ 0.5 (the previous point's), got 0.4"]
    );
    assert_eq!(
        problems(table(json!([{"q": 0.5, "ms": 12}, {"q": 0.9, "ms": 10}, {"q": 1, "ms": 99}]))),
        [".points[1].ms: expected ms ≥ 12 (the previous point's: a higher quantile cannot be faster), got 10"]
    );
    // Out of range: one problem each, and no order problems from them.
    assert_eq!(
        problems(table(
            json!([{"q": -0.1, "ms": 5}, {"q": 0.5, "ms": 4}, {"q": 1.5, "ms": -3}])
        )),
        [
            ".points[0].q: expected a probability in [0, 1], got -0.1",
            ".points[2].q: expected a probability in [0, 1], got 1.5",
            ".points[2].ms: expected a number ≥ 0, got -3",
        ]
    );
    assert_eq!(
        problems(table(json!([{"q": 0.5, "ms": 12}, {"q": 0.99, "ms": 180}]))),
        [".points[1].q: expected the last point at q = 1 (the maximum, which bounds the tail), got 0.99"]
    );
    assert_eq!(
        problems(table(json!([]))),
        [".points: expected at least one point (the maximum, at q = 1)"]
    );
    assert_eq!(
        problems(json!({"kind": "quantiles", "min_ms": 20,
                        "points": [{"q": 0.5, "ms": 12}, {"q": 1, "ms": 99}]})),
        [".points[0].ms: expected ms ≥ 20 (min_ms), got 12"]
    );
    assert_eq!(
        problems(json!({"kind": "quantiles", "min_ms": -1, "points": [{"q": 1, "ms": 9}]})),
        [".min_ms: expected a number ≥ 0, got -1"]
    );
    // Fields are by name, and named at the point they are wrong in; the
    // rest of the table is checked all the same (every problem at once).
    assert_eq!(
        problems(table(
            json!([{"q": 0.5, "ms": 12}, {"q": 1, "ms": 5, "p": 0.5}])
        )),
        [
            ".points[1].p: unknown field `p`, expected `q` or `ms`",
            ".points[1].ms: expected ms ≥ 12 (the previous point's: a higher quantile cannot be faster), got 5"
        ]
    );
    assert_eq!(
        problems(table(json!([[0.5, 12], [1, 100]]))),
        [
            ".points[0]: expected an object (fields by name, not by position), got an array",
            ".points[1]: expected an object (fields by name, not by position), got an array",
        ]
    );
}

#[test]
fn a_bad_histogram_is_reported_bucket_by_bucket() {
    let histogram = |buckets: Value| json!({"kind": "histogram", "buckets": buckets});
    assert_eq!(
        problems(histogram(json!([
            {"le_ms": 10, "count": 5}, {"le_ms": 10, "count": 8}, {"le_ms": 5, "count": 9}]))),
        [
            ".buckets[1].le_ms: expected le_ms > 10 (the previous bucket's), got 10",
            ".buckets[2].le_ms: expected le_ms > 10 (the previous bucket's), got 5",
        ]
    );
    assert_eq!(
        problems(histogram(json!([
            {"le_ms": 10, "count": 5}, {"le_ms": 20, "count": 3}, {"le_ms": 30, "count": 9}]))),
        [
            ".buckets[1].count: expected count ≥ 5 (the previous bucket's: counts are cumulative, \
          observations ≤ le_ms, as Prometheus counts them), got 3"
        ]
    );
    assert_eq!(
        problems(histogram(
            json!([{"le_ms": 10, "count": -1}, {"le_ms": 20, "count": 3}])
        )),
        [".buckets[0].count: expected a number ≥ 0, got -1"]
    );
    assert_eq!(
        problems(histogram(json!([{"le_ms": 10, "count": 0}, {"le_ms": 20, "count": 0}]))),
        [".buckets[1].count: expected some observations: the last bucket's (cumulative) count is 0"]
    );
    assert_eq!(
        problems(histogram(json!([]))),
        [".buckets: expected at least one bucket"]
    );
    assert_eq!(
        problems(json!({"kind": "histogram", "min_ms": 15,
                        "buckets": [{"le_ms": 10, "count": 1}, {"le_ms": 20, "count": 2}]})),
        [".buckets[0].le_ms: expected le_ms ≥ 15 (min_ms), got 10"]
    );
    // Prometheus's +Inf bucket, pasted as it is.
    assert_eq!(
        problems(histogram(
            json!([{"le_ms": 10, "count": 1}, {"le_ms": "+Inf", "count": 2}])
        )),
        [".buckets[1].le_ms: expected a number, got the string \"+Inf\""]
    );
}

#[test]
fn bad_parametric_parameters_are_reported_at_their_fields() {
    assert_eq!(
        problems(json!({"kind": "normal", "mean_ms": -1, "sd_ms": -2})),
        [
            ".mean_ms: expected a number ≥ 0, got -1",
            ".sd_ms: expected a number ≥ 0, got -2"
        ]
    );
    assert_eq!(
        problems(json!({"kind": "gamma", "shape": 0, "mean_ms": -5})),
        [
            ".shape: expected a positive number, got 0",
            ".mean_ms: expected a positive number, got -5"
        ]
    );
    assert_eq!(
        problems(json!({"kind": "gamma", "shape": 2, "mean_ms": 5, "scale_ms": 2})),
        [".scale_ms: expected mean_ms or scale_ms, not both"]
    );
    assert_eq!(
        problems(json!({"kind": "gamma", "shape": 2})),
        [": expected mean_ms or scale_ms"]
    );
    assert_eq!(
        problems(json!({"kind": "weibull", "shape": -1, "scale_ms": 0})),
        [
            ".shape: expected a positive number, got -1",
            ".scale_ms: expected a positive number, got 0"
        ]
    );
    // Γ(1 + 1/0.001) overflows a double: no estimate could use that mean.
    assert_eq!(
        problems(json!({"kind": "weibull", "shape": 0.001, "scale_ms": 1})),
        [": expected parameters giving a finite mean, got a mean of inf ms"]
    );
    assert_eq!(
        problems(json!({"kind": "pareto", "shape": 1, "scale_ms": -4})),
        [
            ".shape: expected a shape > 1 (at 1 or less the mean is infinite), got 1",
            ".scale_ms: expected a positive number, got -4"
        ]
    );
    assert!(
        problems(json!({"kind": "weibull", "shape": 1, "scale_ms": 1, "mean_ms": 2}))[0]
            .starts_with(".mean_ms: unknown field `mean_ms`")
    );
}

#[test]
fn problems_inside_a_mixture_name_the_component() {
    assert_eq!(
        problems(json!({"kind": "mixture", "of": [
            {"p": 0.5, "dist": {"kind": "quantiles", "points": [{"q": 0.9, "ms": 5}]}},
            {"p": 0.5, "dist": {"kind": "pareto", "shape": 0.5, "scale_ms": 1}}]})),
        [
            ".of[0].dist.points[0].q: expected the last point at q = 1 (the maximum, which bounds the tail), got 0.9",
            ".of[1].dist.shape: expected a shape > 1 (at 1 or less the mean is infinite), got 0.5",
        ]
    );
}
