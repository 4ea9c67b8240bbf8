//! From a sweep's axes to its points: the grid (a product over zip groups) or a
//! sample (random, Latin hypercube), deterministic for a seed.

use crate::spec::{AxisSpec, DesignSpec, Scale, SweepSpec};
use serde_json::Value;
use std::sync::Arc;
use stormsim_engine::StreamKey;
use stormsim_model::Problem;

/// One point of the sweep: a value per axis.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Position in the sweep, from 0.
    pub index: usize,
    /// `(axis column, path or None for the variant axis, value)`, in axis
    /// order. The column and path are each axis's, shared by every point (a
    /// sweep has up to a million).
    pub values: Vec<(Arc<str>, Option<Arc<str>>, Value)>,
}

/// The column name of an axis.
pub fn column(axis: &AxisSpec) -> String {
    axis.name.clone().unwrap_or_else(|| match &axis.path {
        Some(p) => p.clone(),
        None => "variant".into(),
    })
}

fn number(x: f64, integer: bool) -> Value {
    if integer {
        Value::from(x.round() as i64)
    } else {
        // Twelve significant digits: 0.1 + 0.2 steps print as 0.3, not 0.30000000000000004.
        let rounded: f64 = format!("{x:.12e}").parse().unwrap_or(x);
        Value::from(rounded)
    }
}

/// The values of a grid axis, or the problems with it.
fn grid_values(i: usize, axis: &AxisSpec) -> Result<Vec<Value>, Problem> {
    let at = format!("axes[{i}]");
    let given = [
        axis.values.is_some(),
        axis.linear.is_some(),
        axis.log.is_some(),
        axis.range.is_some(),
        axis.variants.is_some(),
    ];
    if given.iter().filter(|g| **g).count() != 1 {
        return Err(Problem::new(
            at,
            "expected exactly one of `values`, `linear`, `log`, `range`, `variants`",
        ));
    }
    if axis.variants.is_some() == axis.path.is_some() {
        return Err(Problem::new(
            at,
            "a `variants` axis has no `path`; every other axis needs one",
        ));
    }
    let spaced = |r: &crate::spec::RangeSpec, log: bool| -> Result<Vec<Value>, Problem> {
        if r.steps == 0 || !r.from.is_finite() || !r.to.is_finite() {
            return Err(Problem::new(
                format!("{at}.{}", if log { "log" } else { "linear" }),
                "expected finite `from` and `to` and at least 1 step",
            ));
        }
        if log && (r.from <= 0.0 || r.to <= 0.0) {
            return Err(Problem::new(
                format!("{at}.log"),
                "log spacing needs bounds > 0",
            ));
        }
        let n = r.steps as usize;
        Ok((0..n)
            .map(|k| {
                let f = if n == 1 {
                    0.0
                } else {
                    k as f64 / (n - 1) as f64
                };
                let x = if log {
                    libm::exp(libm::log(r.from) + f * (libm::log(r.to) - libm::log(r.from)))
                } else {
                    r.from + f * (r.to - r.from)
                };
                number(x, axis.integer)
            })
            .collect())
    };
    match axis {
        AxisSpec { values: Some(v), .. } if v.is_empty() => {
            Err(Problem::new(format!("{at}.values"), "expected at least one value"))
        }
        AxisSpec { values: Some(v), .. } => Ok(v.clone()),
        AxisSpec { linear: Some(r), .. } => spaced(r, false),
        AxisSpec { log: Some(r), .. } => spaced(r, true),
        AxisSpec { variants: Some(v), .. } if v.is_empty() => {
            Err(Problem::new(format!("{at}.variants"), "expected at least one variant"))
        }
        AxisSpec { variants: Some(v), .. } => Ok(v.iter().map(|s| Value::from(s.as_str())).collect()),
        _ => Err(Problem::new(
            format!("{at}.range"),
            "a `range` axis needs a `random` or `latin_hypercube` design; a grid needs `values`, `linear` or `log`",
        )),
    }
}

/// The most points a sweep may have. Every point is held in memory (a few
/// hundred bytes each) and checked before any run, so a grid of 1000³ points
/// is refused, with its count, before anything is allocated for it.
pub const MAX_POINTS: u64 = 1_000_000;

/// The most runs (points × replications) a sweep may have: each finished run
/// keeps its row of results.csv in memory (a few kilobytes) until the tables
/// are written.
pub const MAX_RUNS: u64 = 10_000_000;

/// How many values a grid axis has, counted without making them.
fn grid_len(axis: &AxisSpec) -> Option<u64> {
    if let Some(v) = &axis.values {
        Some(v.len() as u64)
    } else if let Some(r) = axis.linear.as_ref().or(axis.log.as_ref()) {
        Some(u64::from(r.steps))
    } else {
        axis.variants.as_ref().map(|v| v.len() as u64)
    }
}

/// The number of points the spec's design gives, counted from the axes'
/// sizes (a zip group counts once, by its first axis), or `None` when it does
/// not fit in 64 bits.
pub fn point_count(spec: &SweepSpec) -> Option<u64> {
    if spec.axes.is_empty() {
        return Some(0);
    }
    match spec.design {
        DesignSpec::Random { points } | DesignSpec::LatinHypercube { points } => {
            Some(u64::from(points))
        }
        DesignSpec::Grid => {
            let mut seen_zips: Vec<&str> = Vec::new();
            let mut total: u64 = 1;
            for axis in &spec.axes {
                if let Some(zip) = axis.zip.as_deref() {
                    if seen_zips.contains(&zip) {
                        continue;
                    }
                    seen_zips.push(zip);
                }
                total = total.checked_mul(grid_len(axis).unwrap_or(1))?;
            }
            Some(total)
        }
    }
}

/// The problem of a design too large to hold, naming its size and the limits.
fn size_problem(spec: &SweepSpec) -> Option<Problem> {
    let sizes: Vec<String> = spec
        .axes
        .iter()
        .map(|a| grid_len(a).map_or("?".into(), |n| n.to_string()))
        .collect();
    let at = match spec.design {
        DesignSpec::Grid => "axes",
        _ => "design.points",
    };
    let shape = match spec.design {
        DesignSpec::Grid => format!(" ({})", sizes.join(" × ")),
        _ => String::new(),
    };
    let reps = u64::from(spec.replications.max(1));
    match point_count(spec) {
        None => Some(Problem::new(
            at,
            format!("the design has more than 2^64 points{shape}, more than the limit of {MAX_POINTS} points"),
        )),
        Some(n) if n > MAX_POINTS => Some(Problem::new(
            at,
            format!("the design has {n} points{shape}, more than the limit of {MAX_POINTS} points: split the sweep into several files"),
        )),
        Some(n) if n.saturating_mul(reps) > MAX_RUNS => Some(Problem::new(
            "replications",
            format!(
                "{n} points × {reps} replications = {} runs, more than the limit of {MAX_RUNS} runs: split the sweep into several files",
                n.saturating_mul(reps)
            ),
        )),
        Some(_) => None,
    }
}

/// Every point of the sweep, in a fixed order (the first axis varies slowest).
/// A design of more than [`MAX_POINTS`] points or [`MAX_RUNS`] runs is
/// refused before any point is made.
pub fn points(spec: &SweepSpec, seed: u64) -> Result<Vec<Point>, Vec<Problem>> {
    if spec.axes.is_empty() {
        if spec.search.is_some() || spec.margin.is_some() {
            return Ok(Vec::new());
        }
        return Err(vec![Problem::new(
            "axes",
            "expected at least one axis (or a `search` or a `margin`)",
        )]);
    }
    if let Some(problem) = size_problem(spec) {
        return Err(vec![problem]);
    }
    match spec.design {
        DesignSpec::Grid => grid(spec),
        DesignSpec::Random { points } => sample(spec, seed, points, false),
        DesignSpec::LatinHypercube { points } => sample(spec, seed, points, true),
    }
}

fn grid(spec: &SweepSpec) -> Result<Vec<Point>, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut values = Vec::new();
    for (i, axis) in spec.axes.iter().enumerate() {
        match grid_values(i, axis) {
            Ok(v) => values.push(v),
            Err(p) => {
                problems.push(p);
                values.push(Vec::new());
            }
        }
    }
    // Groups in order of first appearance; an axis without `zip` is its own group.
    let mut groups: Vec<(Option<String>, Vec<usize>)> = Vec::new();
    for (i, axis) in spec.axes.iter().enumerate() {
        match axis
            .zip
            .as_ref()
            .and_then(|z| groups.iter_mut().find(|(g, _)| g.as_ref() == Some(z)))
        {
            Some((_, members)) => members.push(i),
            None => groups.push((axis.zip.clone(), vec![i])),
        }
    }
    for (name, members) in &groups {
        let lengths: Vec<usize> = members.iter().map(|&i| values[i].len()).collect();
        if lengths.windows(2).any(|w| w[0] != w[1]) {
            problems.push(Problem::new(
                format!("axes[{}].zip", members[0]),
                format!(
                    "zipped axes ({:?}) must have equal numbers of values, got {lengths:?}",
                    name.as_deref().unwrap_or("")
                ),
            ));
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let sizes: Vec<usize> = groups.iter().map(|(_, m)| values[m[0]].len()).collect();
    let total: usize = sizes.iter().product();
    let names = axis_names(spec);
    let mut out = Vec::with_capacity(total);
    for index in 0..total {
        // Mixed-radix digits, the first group most significant.
        let mut rest = index;
        let mut digits = vec![0; groups.len()];
        for g in (0..groups.len()).rev() {
            digits[g] = rest % sizes[g];
            rest /= sizes[g];
        }
        let mut point = Vec::with_capacity(spec.axes.len());
        for (i, (column, path)) in names.iter().enumerate() {
            let g = groups
                .iter()
                .position(|(_, m)| m.contains(&i))
                .expect("every axis has a group");
            point.push((column.clone(), path.clone(), values[i][digits[g]].clone()));
        }
        out.push(Point {
            index,
            values: point,
        });
    }
    Ok(out)
}

fn sample(spec: &SweepSpec, seed: u64, n: u32, latin: bool) -> Result<Vec<Point>, Vec<Problem>> {
    let mut problems = Vec::new();
    if n == 0 {
        problems.push(Problem::new("design.points", "expected at least 1 point"));
    }
    for (i, axis) in spec.axes.iter().enumerate() {
        match (&axis.range, &axis.path) {
            (Some(r), Some(_)) => {
                let ok = r.from.is_finite() && r.to.is_finite() && r.from <= r.to;
                if !ok || (r.scale == Scale::Log && r.from <= 0.0) {
                    problems.push(Problem::new(
                        format!("axes[{i}].range"),
                        "expected finite from ≤ to (and from > 0 in log scale)",
                    ));
                }
            }
            _ => problems.push(Problem::new(
                format!("axes[{i}]"),
                "a sampled design needs every axis to have a `path` and a `range`",
            )),
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let n = n as usize;
    let root = StreamKey::root(seed).label("sweep-design");
    let mut columns: Vec<Vec<Value>> = Vec::new();
    for (i, axis) in spec.axes.iter().enumerate() {
        let r = axis.range.as_ref().expect("checked");
        let mut rng = root.index(i as u64).rng();
        // Latin hypercube: stratum k of n used once, in a random order (a
        // Fisher-Yates shuffle), jittered within the stratum.
        let mut strata: Vec<usize> = (0..n).collect();
        if latin {
            for k in (1..n).rev() {
                let j = (rng.next_u64() % (k as u64 + 1)) as usize;
                strata.swap(k, j);
            }
        }
        let column: Vec<Value> = (0..n)
            .map(|k| {
                let u = if latin {
                    (strata[k] as f64 + rng.unit()) / n as f64
                } else {
                    rng.unit()
                };
                let x = match r.scale {
                    Scale::Linear => r.from + u * (r.to - r.from),
                    Scale::Log => {
                        libm::exp(libm::log(r.from) + u * (libm::log(r.to) - libm::log(r.from)))
                    }
                };
                number(x, axis.integer)
            })
            .collect();
        columns.push(column);
    }
    let names = axis_names(spec);
    Ok((0..n)
        .map(|k| Point {
            index: k,
            values: (names.iter().zip(&columns))
                .map(|((column, path), c)| (column.clone(), path.clone(), c[k].clone()))
                .collect(),
        })
        .collect())
}

/// Each axis's column and path, once for all the points.
fn axis_names(spec: &SweepSpec) -> Vec<(Arc<str>, Option<Arc<str>>)> {
    (spec.axes.iter())
        .map(|axis| (Arc::from(column(axis)), axis.path.as_deref().map(Arc::from)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(axes: Value, design: Value) -> SweepSpec {
        serde_json::from_value(
            json!({"name": "s", "model": "m.json", "axes": axes, "design": design}),
        )
        .unwrap()
    }

    fn grid_of(axes: Value) -> Vec<Vec<Value>> {
        points(&spec(axes, json!({"kind": "grid"})), 1)
            .unwrap()
            .into_iter()
            .map(|p| p.values.into_iter().map(|(_, _, v)| v).collect())
            .collect()
    }

    #[test]
    fn a_grid_is_the_product_with_the_first_axis_slowest() {
        let g = grid_of(json!([
            {"path": "a", "values": [1, 2]},
            {"path": "b", "linear": {"from": 0.1, "to": 0.3, "steps": 3}}
        ]));
        assert_eq!(
            g,
            vec![
                vec![json!(1), json!(0.1)],
                vec![json!(1), json!(0.2)],
                vec![json!(1), json!(0.3)],
                vec![json!(2), json!(0.1)],
                vec![json!(2), json!(0.2)],
                vec![json!(2), json!(0.3)],
            ]
        );
    }

    #[test]
    fn zipped_axes_move_together_and_log_spacing_is_geometric() {
        let g = grid_of(json!([
            {"path": "a", "values": [1, 2, 3], "zip": "z"},
            {"path": "b", "log": {"from": 1, "to": 100, "steps": 3}, "zip": "z"},
            {"variants": ["x", "y"]}
        ]));
        assert_eq!(g.len(), 6);
        assert_eq!(g[0], vec![json!(1), json!(1.0), json!("x")]);
        assert_eq!(g[3], vec![json!(2), json!(10.0), json!("y")]);
        assert_eq!(g[5], vec![json!(3), json!(100.0), json!("y")]);
    }

    #[test]
    fn bad_axes_are_reported_with_their_path() {
        let s = spec(
            json!([
                {"path": "a", "values": [1, 2], "zip": "z"},
                {"path": "b", "values": [1], "zip": "z"},
                {"values": [1]},
                {"path": "c", "range": {"from": 0, "to": 1}}
            ]),
            json!({"kind": "grid"}),
        );
        let problems: Vec<String> = points(&s, 1)
            .unwrap_err()
            .iter()
            .map(|p| p.to_string())
            .collect();
        assert_eq!(problems.len(), 3, "{problems:#?}");
        assert!(problems[0].starts_with("axes[2]: a `variants` axis has no `path`"));
        assert!(problems[1].starts_with("axes[3].range: a `range` axis needs"));
        assert!(problems[2].starts_with("axes[0].zip: zipped axes"));
    }

    #[test]
    fn a_latin_hypercube_uses_every_stratum_once() {
        let s = spec(
            json!([{"path": "a", "range": {"from": 0, "to": 10}},
                   {"path": "b", "range": {"from": 1, "to": 1000, "scale": "log"}}]),
            json!({"kind": "latin_hypercube", "points": 10}),
        );
        let ps = points(&s, 7).unwrap();
        assert_eq!(ps, points(&s, 7).unwrap(), "deterministic for a seed");
        let mut strata: Vec<usize> = ps
            .iter()
            .map(|p| p.values[0].2.as_f64().unwrap().floor() as usize)
            .collect();
        strata.sort();
        assert_eq!(strata, (0..10).collect::<Vec<_>>());
        let mut decades: Vec<usize> = ps
            .iter()
            .map(|p| (libm::log10(p.values[1].2.as_f64().unwrap()) * 10.0 / 3.0).floor() as usize)
            .collect();
        decades.sort();
        assert_eq!(decades, (0..10).collect::<Vec<_>>(), "log strata");
        assert_ne!(points(&s, 8).unwrap(), ps, "another seed, another sample");
    }
}
