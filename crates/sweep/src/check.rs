//! Checking a sweep before it runs: the model at every point and at the
//! search's ends, with each problem named by what the sweep file wrote, and
//! said once.
//!
//! A point's problems are told apart by trying the sweep's parts alone. A
//! problem the model has under the sweep's `set` and `variant` alone (the
//! base) is the base's, named by its `set` entry or its model path. One it has
//! with an axis's value alone on top of the base is that axis's: named by the
//! axis, with the values that cause it (where not all do) and how many points
//! share it. Any other comes of axes together and is named by a point that has
//! it. Problems that differ only in a list index (a `[*]` path meeting twenty
//! workloads) are one, with the index as `[*]`.

use crate::spec::AxisSpec;
use crate::{Override, Sweep, VariantChoice};
use rayon::prelude::*;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use stormsim_model::path::Segment;
use stormsim_model::{LoadedModel, ParamPath, Problem, Warning};

/// Where a problem comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Source {
    /// The sweep's `set` and `variant`, or the model under them.
    Base,
    /// An axis's values, alone.
    Axis(usize),
    /// The search's path, at one of its ends.
    Search,
    /// Axes together.
    Point,
}

/// One problem as reported: where it comes from, the problem (its `[*]` form
/// where it is at several elements of a list), and where it shows.
struct Entry {
    source: Source,
    problem: Problem,
    /// How many list elements it is at (1 unless its path has a `[*]`).
    elements: usize,
    /// The points that have it.
    points: BTreeSet<usize>,
    /// The axis's (or the search's) values that give it, in order of appearance.
    values: Vec<Value>,
}

/// A model warning ([`stormsim_model::warnings`]) of a sweep's points: the
/// axes move the values warnings are about (an axis over Envoy's
/// `budget_percent` that reaches 0.2), so each point's model is looked at,
/// not only the model as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PointWarning {
    /// The warning, as at the first point that has it.
    pub warning: Warning,
    /// How many points have it (at the same path).
    pub points: usize,
    /// The first of them.
    pub first_point: usize,
}

/// A point's model as checked: its warnings, or its problems.
type Checked = Result<Vec<Warning>, Vec<Problem>>;

/// What checking every point found.
pub(crate) struct PointsChecked {
    /// Every problem, each once (empty if there is none).
    pub problems: Vec<Problem>,
    /// When there is no problem, the points' warnings.
    pub warnings: Vec<PointWarning>,
    /// The summary columns of results.csv: those of a run of every service
    /// and workload of the points' models, in the order first met.
    pub columns: Vec<String>,
}

/// The warnings of the points' models, each once by its name and path, in
/// the order first met.
fn point_warnings(at_points: Vec<(usize, Vec<Warning>)>) -> Vec<PointWarning> {
    let mut found: Vec<PointWarning> = Vec::new();
    for (point, warnings) in at_points {
        for warning in warnings {
            let same = |w: &&mut PointWarning| {
                w.warning.name == warning.name && w.warning.path == warning.path
            };
            match found.iter_mut().find(same) {
                Some(w) => w.points += 1,
                None => found.push(PointWarning {
                    warning,
                    points: 1,
                    first_point: point,
                }),
            }
        }
    }
    found
}

/// The services and workloads of the points' models, each once, in the order
/// first met: a `variants` axis over variants with services of their own
/// gives points with other columns, and results.csv holds every row under
/// one header.
#[derive(Default)]
struct NamesMet {
    services: FirstSeen,
    workloads: FirstSeen,
}

impl NamesMet {
    fn meet(&mut self, model: &stormsim_model::Model) {
        self.services
            .meet(model.services.iter().map(|s| s.name.as_str()));
        self.workloads
            .meet(model.reported_workloads.iter().map(String::as_str));
    }

    /// Meets the names `later` met, after these.
    fn meet_all(&mut self, later: NamesMet) {
        self.services
            .meet(later.services.order.iter().map(String::as_str));
        self.workloads
            .meet(later.workloads.order.iter().map(String::as_str));
    }

    /// The summary columns of a run of all of them, as `summary.csv` names
    /// them for a run of several variants.
    fn summary_columns(&self) -> Vec<String> {
        stormsim_sim::report::summary_header_of(
            self.services.order.iter().map(String::as_str),
            self.workloads.order.iter().map(String::as_str),
        )
    }
}

/// Names in the order first met, each once. Looked up in a set: every point
/// of a sweep over a model of 16,000 services meets all of them, and a
/// search of the list made checking 8 such points take 6.8 s (2.2 s with the
/// set).
#[derive(Default)]
struct FirstSeen {
    order: Vec<String>,
    seen: BTreeSet<String>,
}

impl FirstSeen {
    fn meet<'a>(&mut self, names: impl Iterator<Item = &'a str>) {
        for name in names {
            if !self.seen.contains(name) {
                self.seen.insert(name.to_string());
                self.order.push(name.to_string());
            }
        }
    }
}

/// Every problem of the sweep's points and of its search's ends, each once;
/// and, when there is none, the points' warnings and summary columns.
pub(crate) fn points(sweep: &Sweep, progress: &crate::CheckProgress<'_>) -> PointsChecked {
    let mut checker = Checker::new(sweep);
    let (total, done) = (sweep.points.len(), AtomicUsize::new(0));
    // Every point's model is built and checked: in parallel, in runs of
    // points whose names are met in point order (so the columns do not
    // depend on the thread count), as a million points take a while.
    let run_of_points = (sweep.points.len() / (rayon::current_num_threads() * 8)).max(1);
    let checked: Vec<(Vec<(usize, Checked)>, NamesMet)> = sweep
        .points
        .par_chunks(run_of_points)
        .map(|points| {
            let mut met = NamesMet::default();
            let checked = points
                .iter()
                .map(|point| {
                    let (variant, overrides) = sweep.inputs_at(point);
                    let checked = checker.check(variant.as_ref(), &overrides, &mut met);
                    progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
                    (point.index, checked)
                })
                .collect();
            (checked, met)
        })
        .collect();
    let mut failing: Vec<(usize, Vec<Problem>)> = Vec::new();
    let mut warned: Vec<(usize, Vec<Warning>)> = Vec::new();
    let mut names = NamesMet::default();
    for (checked, met) in checked {
        names.meet_all(met);
        for (index, checked) in checked {
            match checked {
                Ok(warnings) if !warnings.is_empty() => warned.push((index, warnings)),
                Ok(_) => {}
                Err(problems) => failing.push((index, problems)),
            }
        }
    }
    let search_failing: Vec<(Value, Vec<Problem>)> = search_ends(sweep)
        .into_iter()
        .filter_map(|(value, o)| {
            let mut overrides = sweep.set_overrides();
            overrides.push(o);
            let problems = checker.problems(sweep.default_variant().as_ref(), &overrides);
            (!problems.is_empty()).then_some((value, problems))
        })
        .collect();
    if failing.is_empty() && search_failing.is_empty() {
        return PointsChecked {
            problems: Vec::new(),
            warnings: point_warnings(warned),
            columns: names.summary_columns(),
        };
    }
    let base = checker.problems(sweep.default_variant().as_ref(), &sweep.set_overrides());
    let mut entries: Vec<Entry> = Vec::new();
    for (index, problems) in failing {
        let point = &sweep.points[index];
        let mut groups: Vec<(Source, Option<Value>, Vec<Problem>)> = Vec::new();
        for problem in problems {
            let (source, value) = if base.contains(&problem) {
                (Source::Base, None)
            } else {
                point
                    .values
                    .iter()
                    .enumerate()
                    .find(|(k, (_, _, value))| checker.alone(*k, value, &base).contains(&problem))
                    .map_or((Source::Point, None), |(k, (_, _, value))| {
                        (Source::Axis(k), Some(value.clone()))
                    })
            };
            match groups
                .iter_mut()
                .find(|(s, v, _)| *s == source && *v == value)
            {
                Some((_, _, group)) => group.push(problem),
                None => groups.push((source, value, vec![problem])),
            }
        }
        for (source, value, group) in groups {
            for (problem, elements) in collapse(group) {
                add(
                    &mut entries,
                    source,
                    problem,
                    elements,
                    Some(index),
                    value.clone(),
                );
            }
        }
    }
    for (value, problems) in search_failing {
        let (in_base, own): (Vec<Problem>, Vec<Problem>) =
            problems.into_iter().partition(|p| base.contains(p));
        for (problem, elements) in collapse(in_base) {
            add(&mut entries, Source::Base, problem, elements, None, None);
        }
        for (problem, elements) in collapse(own) {
            add(
                &mut entries,
                Source::Search,
                problem,
                elements,
                None,
                Some(value.clone()),
            );
        }
    }
    entries.sort_by_key(|e| e.source);
    let mut out = Vec::new();
    let mut axes_done = BTreeSet::new();
    let mut search_done = false;
    for e in &entries {
        match e.source {
            Source::Axis(k) => {
                if axes_done.insert(k) {
                    let of_axis: Vec<&Entry> = entries
                        .iter()
                        .filter(|x| x.source == Source::Axis(k))
                        .collect();
                    out.extend(axis_problems(sweep, &mut checker, &base, k, &of_axis));
                }
            }
            Source::Base => {
                let count = counts(e.elements, None, 0);
                out.push(match set_entry_of(sweep, &e.problem) {
                    // A value the sweep's `set` wrote: named by its entry.
                    Some(label) => Problem::new(label, format!("{}{count}", e.problem)),
                    None => Problem::new(
                        e.problem.path.clone(),
                        format!("{}{count}", e.problem.message),
                    ),
                })
            }
            Source::Search => {
                if !search_done {
                    search_done = true;
                    let of_search: Vec<&Entry> = entries
                        .iter()
                        .filter(|x| x.source == Source::Search)
                        .collect();
                    out.extend(search_problems(sweep, &mut checker, &base, &of_search));
                }
            }
            Source::Point => {
                let first = *e.points.first().expect("a point's problem has a point");
                let values: Vec<String> = sweep.points[first]
                    .values
                    .iter()
                    .map(|(column, _, v)| format!("{column} = {v}"))
                    .collect();
                out.push(Problem::new(
                    format!("point {first} ({})", values.join(", ")),
                    format!(
                        "{}{}",
                        e.problem,
                        counts(e.elements, Some(&e.points), sweep.points.len())
                    ),
                ));
            }
        }
    }
    PointsChecked {
        problems: out,
        warnings: Vec::new(),
        columns: Vec::new(),
    }
}

/// The label of the sweep's `set` entry that wrote what `problem` is at (the
/// last one, as it won), if one did: `set["services[A].workers"]`.
fn set_entry_of(sweep: &Sweep, problem: &Problem) -> Option<String> {
    if problem.path.contains([' ', '"']) {
        return None; // a label already, not a model path
    }
    let (doc, _, _) = sweep.document(sweep.default_variant().as_ref(), &[]);
    let at = normalise(&problem.path);
    sweep
        .set_overrides()
        .into_iter()
        .rev()
        .find(|o| {
            concrete(&o.path, &doc).iter().any(|(path, _)| {
                let path = normalise(path);
                at.strip_prefix(path.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
            })
        })
        .map(|o| o.label)
}

/// The share of replications that ended metastable: a chart metric with no
/// column of `summary.csv` behind it (`aggregate.csv` computes it).
pub const METASTABLE_SHARE: &str = "metastable_share";

/// The columns of `summary.csv` that hold text or verdicts, which
/// `aggregate.csv` has no mean of (`metastable` becomes `metastable_share`).
const TEXT_COLUMNS: [&str; 7] = [
    "variant",
    "complete",
    "stopped_by",
    "outcome",
    "metastable",
    "recovered_by",
    "verdict_reason",
];

/// The metrics a sweep's chart may draw: `metastable_share`, then every
/// numeric column of the summary (`summary_columns`, as `summary.csv` names
/// them for the model).
pub(crate) fn chart_metrics(summary_columns: &[String]) -> Vec<String> {
    let mut metrics = vec![METASTABLE_SHARE.to_string()];
    for c in summary_columns {
        // A service of several variants is listed once.
        if !TEXT_COLUMNS.contains(&c.as_str()) && !metrics.contains(c) {
            metrics.push(c.clone());
        }
    }
    metrics
}

/// The problem with the chart's metric, if `aggregate.csv` can have no
/// column of it, with the closest names there are.
pub(crate) fn chart_metric_problem(metric: &str, metrics: &[String]) -> Option<Problem> {
    if metrics.iter().any(|m| m == metric) {
        return None;
    }
    let suggestion = match metric.strip_suffix(".mean") {
        Some(base) if metrics.iter().any(|m| m == base) => {
            format!("write {base:?}: its mean and 95% interval are drawn")
        }
        _ => {
            let mut closest: Vec<(usize, &String)> = metrics
                .iter()
                .map(|m| (edit_distance(metric, m), m))
                .collect();
            closest.sort();
            let near: Vec<String> = closest
                .iter()
                .take(3)
                .filter(|(d, _)| *d <= metric.chars().count().max(4) / 2)
                .map(|(_, m)| format!("{m:?}"))
                .collect();
            let fixed: Vec<&str> = metrics
                .iter()
                .filter(|m| !m.contains('.'))
                .map(String::as_str)
                .collect();
            let did_you_mean = if near.is_empty() {
                String::new()
            } else {
                format!("did you mean {}? ", near.join(" or "))
            };
            format!(
                "{did_you_mean}a metric is one of {}, or a service's or workload's column (`S.wasted`, `W.latency_p99_ms`: see docs/outputs.md)",
                fixed.join(", ")
            )
        }
    };
    Some(Problem::new(
        "chart.metric",
        format!("{metric:?} is not a column of aggregate.csv: {suggestion}"),
    ))
}

/// The Levenshtein distance between two names, in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substituted = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substituted.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

/// How the search's path is named in problems: `search ("PATH")`.
pub(crate) fn search_label(path: &str) -> String {
    format!("search ({path:?})")
}

/// The search's ends, as values of its path and overrides.
fn search_ends(sweep: &Sweep) -> Vec<(Value, Override)> {
    let Some(search) = &sweep.spec.search else {
        return Vec::new();
    };
    let mut ends: Vec<(Value, Override)> = Vec::new();
    for x in [search.from, search.to] {
        let (value, o) = sweep.search_override(search, x);
        if !ends.iter().any(|(v, _)| *v == value) {
            ends.push((value, o));
        }
    }
    ends
}

/// Loads the model under the sweep's parts, and remembers what each axis
/// value alone gives.
struct Checker<'a> {
    sweep: &'a Sweep,
    alone: HashMap<(usize, String), Vec<Problem>>,
}

impl<'a> Checker<'a> {
    fn new(sweep: &'a Sweep) -> Self {
        Checker {
            sweep,
            alone: HashMap::new(),
        }
    }

    /// The model with `variant` and `overrides`: its warnings, or its
    /// problems.
    /// Its services and workloads are met in `met`.
    fn check(
        &self,
        variant: Option<&VariantChoice>,
        overrides: &[Override],
        met: &mut NamesMet,
    ) -> Checked {
        let built = self.sweep.build(variant, overrides, self.sweep.seed)?;
        met.meet(&built.model);
        Ok(stormsim_model::warnings(&LoadedModel {
            name: String::new(),
            description: String::new(),
            seed: self.sweep.seed,
            variants: vec![built],
            selections: Vec::new(),
        }))
    }

    /// The problems of the model with `variant` and `overrides`.
    fn problems(&self, variant: Option<&VariantChoice>, overrides: &[Override]) -> Vec<Problem> {
        self.check(variant, overrides, &mut NamesMet::default())
            .err()
            .unwrap_or_default()
    }

    /// The problems axis `k` at `value` gives on top of the base, beyond the
    /// base's own.
    fn alone(&mut self, k: usize, value: &Value, base: &[Problem]) -> Vec<Problem> {
        let key = (k, value.to_string());
        if let Some(problems) = self.alone.get(&key) {
            return problems.clone();
        }
        let sweep = self.sweep;
        let label = sweep.axis_label(k);
        let mut overrides = sweep.set_overrides();
        let variant = match &sweep.spec.axes[k].path {
            Some(path) => {
                overrides.push(Override {
                    label,
                    path: path.clone(),
                    value: value.clone(),
                });
                sweep.default_variant()
            }
            None => value.as_str().map(|name| VariantChoice {
                label,
                name: name.to_string(),
            }),
        };
        let problems: Vec<Problem> = self
            .problems(variant.as_ref(), &overrides)
            .into_iter()
            .filter(|p| !base.contains(p))
            .collect();
        self.alone.insert(key, problems.clone());
        problems
    }
}

/// Adds a problem's occurrence to the entries.
fn add(
    entries: &mut Vec<Entry>,
    source: Source,
    problem: Problem,
    elements: usize,
    point: Option<usize>,
    value: Option<Value>,
) {
    let entry = match entries
        .iter_mut()
        .position(|e| e.source == source && e.problem == problem)
    {
        Some(i) => &mut entries[i],
        None => {
            entries.push(Entry {
                source,
                problem,
                elements,
                points: BTreeSet::new(),
                values: Vec::new(),
            });
            entries.last_mut().expect("just pushed")
        }
    };
    entry.elements = entry.elements.max(elements);
    entry.points.extend(point);
    if let Some(value) = value {
        if !entry.values.contains(&value) {
            entry.values.push(value);
        }
    }
}

/// The problems of axis `k`, from its entries: each with the values that give
/// it where not all of the axis's do, and how many points have it; a note
/// where the axis sets a field of an object the model does not have; and for
/// a `linear`, `log` or `range` axis without `integer` whose every problem
/// goes away with its values rounded, one problem that says to add it.
fn axis_problems(
    sweep: &Sweep,
    checker: &mut Checker,
    base: &[Problem],
    k: usize,
    entries: &[&Entry],
) -> Vec<Problem> {
    let axis = &sweep.spec.axes[k];
    let label = sweep.axis_label(k);
    let mut all_values: Vec<&Value> = Vec::new();
    for point in &sweep.points {
        let v = &point.values[k].2;
        if !all_values.contains(&v) {
            all_values.push(v);
        }
    }
    let n = sweep.points.len();
    let missing = missing_object(sweep, axis);
    let note = |problem: &Problem| -> String {
        let Some((written, concrete)) = &missing else {
            return String::new();
        };
        let at = normalise(&problem.path);
        let inside = concrete.iter().any(|m| {
            let m = normalise(m);
            at.strip_prefix(m.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
        });
        if inside {
            format!(
                "; the model has no {written}, so the axis creates one holding nothing but \
                 the swept field: give the model one (e.g. in the sweep's `set`) to sweep a \
                 field of it"
            )
        } else {
            String::new()
        }
    };
    // Which entries go away with the axis's values rounded.
    let kind = spaced_kind(axis);
    let whole: Vec<bool> = entries
        .iter()
        .map(|e| {
            kind.is_some()
                && e.values.iter().all(|v| {
                    v.as_f64().is_some_and(|x| {
                        checker
                            .alone(k, &Value::from(x.round() as i64), base)
                            .is_empty()
                    })
                })
        })
        .collect();
    let hint = |values: &[Value]| {
        format!(
            ": the `{}` axis gives numbers with a decimal point ({}) where the model expects \
             whole numbers; add \"integer\": true to the axis to round them",
            kind.unwrap_or("linear"),
            list(values)
        )
    };
    if whole.iter().all(|w| *w) {
        // One problem, however many values show it.
        let mut values: Vec<Value> = Vec::new();
        for e in entries {
            for v in &e.values {
                if !values.contains(v) {
                    values.push(v.clone());
                }
            }
        }
        let points: BTreeSet<usize> = entries
            .iter()
            .flat_map(|e| e.points.iter().copied())
            .collect();
        let first = entries[0];
        return vec![Problem::new(
            label.clone(),
            format!(
                "{}{}{}",
                what(&first.problem, &label),
                counts(first.elements, Some(&points), n),
                hint(&values)
            ),
        )];
    }
    entries
        .iter()
        .zip(&whole)
        .map(|(e, whole)| {
            let shown = if e.values.len() < all_values.len() {
                format!(" = {}", list(&e.values))
            } else {
                String::new()
            };
            Problem::new(
                format!("{label}{shown}"),
                format!(
                    "{}{}{}{}",
                    what(&e.problem, &label),
                    counts(e.elements, Some(&e.points), n),
                    note(&e.problem),
                    if *whole {
                        hint(&e.values)
                    } else {
                        String::new()
                    }
                ),
            )
        })
        .collect()
}

/// The problems of the search's ends, from their entries; where one goes
/// away at a whole number and the search has no `integer`, it says to add it.
fn search_problems(
    sweep: &Sweep,
    checker: &mut Checker,
    base: &[Problem],
    entries: &[&Entry],
) -> Vec<Problem> {
    let Some(search) = &sweep.spec.search else {
        return Vec::new();
    };
    let label = search_label(&search.path);
    entries
        .iter()
        .map(|e| {
            let whole = !search.integer
                && e.values.iter().all(|v| {
                    v.as_f64().is_some_and(|x| {
                        let (_, mut o) = sweep.search_override(search, x);
                        o.value = Value::from(x.round() as i64);
                        let mut overrides = sweep.set_overrides();
                        overrides.push(o);
                        checker
                            .problems(sweep.default_variant().as_ref(), &overrides)
                            .iter()
                            .all(|p| base.contains(p))
                    })
                });
            Problem::new(
                format!("{label} = {}", list(&e.values)),
                format!(
                    "{}{}{}",
                    what(&e.problem, &label),
                    counts(e.elements, None, 0),
                    if whole {
                        ": the search probes numbers with a decimal point where the model \
                         expects whole numbers; add \"integer\": true to the search"
                    } else {
                        ""
                    }
                ),
            )
        })
        .collect()
}

/// `linear`, `log` or `range` for an axis of spaced or sampled numbers not
/// rounded to whole ones.
fn spaced_kind(axis: &AxisSpec) -> Option<&'static str> {
    if axis.integer || axis.path.is_none() {
        return None;
    }
    if axis.linear.is_some() {
        Some("linear")
    } else if axis.log.is_some() {
        Some("log")
    } else if axis.range.is_some() {
        Some("range")
    } else {
        None
    }
}

/// A problem as said after its label: the message alone where the label is
/// its path (an override that names nothing), else path and message.
fn what(problem: &Problem, label: &str) -> String {
    if problem.path == label {
        problem.message.clone()
    } else {
        problem.to_string()
    }
}

/// ` (20 elements, all 20 points)`, or nothing to say.
fn counts(elements: usize, points: Option<&BTreeSet<usize>>, of: usize) -> String {
    let mut parts = Vec::new();
    if elements > 1 {
        parts.push(format!("{elements} elements"));
    }
    if let Some(points) = points {
        match (of, points.len()) {
            (0 | 1, _) => {}
            (of, k) if k == of => parts.push(format!("all {of} points")),
            (of, k) => parts.push(format!("{k} of {of} points")),
        }
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

/// `1, 2.5, "x"`, at most eight values.
fn list(values: &[Value]) -> String {
    let mut shown: Vec<String> = values.iter().take(8).map(Value::to_string).collect();
    if values.len() > 8 {
        shown.push(format!("… ({} in all)", values.len()));
    }
    shown.join(", ")
}

/// A path with every list index as `[*]`.
fn normalise(path: &str) -> String {
    let mut out = String::new();
    let mut rest = path;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find(']') {
            Some(close)
                if after[..close]
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b == b'*') =>
            {
                out.push_str("[*]");
                rest = &after[close + 1..];
            }
            _ => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Problems with the same message at paths that differ only in list indices,
/// as one at the path with `[*]` where the indices differ, and how many there
/// were. Labels (with spaces or quotes) are left alone.
fn collapse(problems: Vec<Problem>) -> Vec<(Problem, usize)> {
    let mut groups: Vec<(String, Vec<Problem>)> = Vec::new();
    for p in problems {
        let key = if p.path.contains([' ', '"']) {
            format!("{}\u{0}{}", p.path, p.message)
        } else {
            format!("{}\u{0}{}", normalise(&p.path), p.message)
        };
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => {
                if !members.contains(&p) {
                    members.push(p);
                }
            }
            None => groups.push((key, vec![p])),
        }
    }
    groups
        .into_iter()
        .map(|(_, members)| {
            let n = members.len();
            let mut first = members[0].clone();
            if n > 1 {
                first.path = merged_path(&members);
            }
            (first, n)
        })
        .collect()
}

/// Paths of one shape, with `[*]` where their indices differ.
fn merged_path(members: &[Problem]) -> String {
    let split = |path: &str| -> Vec<String> {
        path.split_inclusive(['[', ']'])
            .map(str::to_string)
            .collect()
    };
    let first = split(&members[0].path);
    let others: Vec<Vec<String>> = members[1..].iter().map(|p| split(&p.path)).collect();
    first
        .iter()
        .enumerate()
        .map(|(i, piece)| {
            let same = others.iter().all(|o| o.get(i) == Some(piece));
            if same {
                piece.clone()
            } else {
                "*]".to_string()
            }
        })
        .collect()
}

/// The outermost object on an axis's path that the model (under the sweep's
/// `set` and `variant`) does not have, which setting the axis creates: as
/// the axis writes it (`workloads[*].retry.budget`), and the concrete JSON
/// paths (keys and indices, as problems name them) where it is missing.
fn missing_object(sweep: &Sweep, axis: &AxisSpec) -> Option<(String, Vec<String>)> {
    let path = axis.path.as_ref()?;
    let (doc, _, _) = sweep.document(sweep.default_variant().as_ref(), &sweep.set_overrides());
    // Each object on the way: the path up to each '.' after the first key.
    let prefixes = path.match_indices('.').map(|(i, _)| &path[..i]);
    for prefix in prefixes {
        let missing: Vec<String> = concrete(prefix, &doc)
            .into_iter()
            .filter(|(_, present)| !present)
            .map(|(p, _)| p)
            .collect();
        if !missing.is_empty() {
            return Some((prefix.to_string(), missing));
        }
    }
    None
}

/// The concrete paths a parameter path names in `doc`, each with whether it
/// is there (a `[name]` not found names nothing).
fn concrete(path: &str, doc: &Value) -> Vec<(String, bool)> {
    let Ok(parsed) = ParamPath::parse(path) else {
        return Vec::new();
    };
    let named = |e: &Value, name: &str| {
        e.get("name").and_then(Value::as_str) == Some(name)
            || e.get("call").and_then(Value::as_str) == Some(name)
    };
    let mut here: Vec<(String, Option<&Value>)> = vec![(String::new(), Some(doc))];
    for segment in parsed.segments() {
        let mut next = Vec::new();
        for (text, at) in here {
            match segment {
                Segment::Key(key) => {
                    let text = if text.is_empty() {
                        key.clone()
                    } else {
                        format!("{text}.{key}")
                    };
                    next.push((text, at.and_then(|v| v.get(key))));
                }
                Segment::Index(i) => next.push((format!("{text}[{i}]"), at.and_then(|v| v.get(i)))),
                Segment::Named(name) => {
                    let found = at
                        .and_then(Value::as_array)
                        .and_then(|l| l.iter().enumerate().find(|(_, e)| named(e, name)));
                    if let Some((i, e)) = found {
                        next.push((format!("{text}[{i}]"), Some(e)));
                    }
                }
                Segment::All => {
                    for (i, e) in at
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .enumerate()
                    {
                        next.push((format!("{text}[{i}]"), Some(e)));
                    }
                }
                Segment::Append => {}
            }
        }
        here = next;
    }
    here.into_iter().map(|(t, v)| (t, v.is_some())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The columns do not depend on how the points were split among threads:
    /// names met in runs of points, then merged in order, are the names met
    /// one point after another.
    #[test]
    fn names_met_in_runs_are_names_met_in_order() {
        let points: [(&[&str], &[&str]); 4] = [
            (&["api", "db"], &["users"]),
            (&["api", "cache", "db"], &["users"]),
            (&["edge", "api"], &["bots", "users"]),
            (&["api", "db"], &["users"]),
        ];
        let meet = |points: &[(&[&str], &[&str])]| {
            let mut met = NamesMet::default();
            for (services, workloads) in points {
                met.services.meet(services.iter().copied());
                met.workloads.meet(workloads.iter().copied());
            }
            met
        };
        let in_order = meet(&points);
        assert_eq!(in_order.services.order, ["api", "db", "cache", "edge"]);
        assert_eq!(in_order.workloads.order, ["users", "bots"]);
        for split in 1..points.len() {
            let mut met = meet(&points[..split]);
            met.meet_all(meet(&points[split..]));
            assert_eq!(
                (met.services.order, met.workloads.order),
                (
                    in_order.services.order.clone(),
                    in_order.workloads.order.clone()
                )
            );
        }
        let columns = in_order.summary_columns();
        let at = |c: &str| columns.iter().position(|x| x == c).unwrap();
        assert!(at("requests") < at("api.calls"));
        assert!(at("api.calls") < at("edge.calls") && at("edge.calls") < at("users.requests"));
        assert!(at("users.requests") < at("bots.requests"));
    }

    /// A chart metric that is not a column of aggregate.csv is named, with
    /// the names nearest to it; one written as its `.mean` column is told
    /// to drop the suffix.
    #[test]
    fn a_chart_metric_not_in_the_aggregate_is_named_with_the_nearest() {
        let summary: Vec<String> = ["variant", "success_rate", "latency_p99_ms", "outcome"]
            .iter()
            .map(|c| c.to_string())
            .chain(["api.wasted".to_string(), "api.calls".to_string()])
            .collect();
        let metrics = chart_metrics(&summary);
        assert_eq!(
            metrics,
            [
                "metastable_share",
                "success_rate",
                "latency_p99_ms",
                "api.wasted",
                "api.calls"
            ]
        );
        for ok in ["metastable_share", "latency_p99_ms", "api.wasted"] {
            assert!(chart_metric_problem(ok, &metrics).is_none(), "{ok}");
        }
        let typo = chart_metric_problem("latency_p95_ms", &metrics).unwrap();
        assert_eq!(typo.path, "chart.metric");
        assert!(
            typo.message.contains("did you mean \"latency_p99_ms\"?"),
            "{}",
            typo.message
        );
        let mean = chart_metric_problem("api.wasted.mean", &metrics).unwrap();
        assert!(
            mean.message.contains("write \"api.wasted\""),
            "{}",
            mean.message
        );
        let text = chart_metric_problem("outcome", &metrics).unwrap();
        assert!(
            text.message
                .contains("metastable_share, success_rate, latency_p99_ms"),
            "{}",
            text.message
        );
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn problems_at_every_element_of_a_list_are_one() {
        let ps: Vec<Problem> = (0..3)
            .map(|i| {
                Problem::new(
                    format!("workloads[{i}].retry.budget"),
                    "missing field `kind`",
                )
            })
            .chain([Problem::new("services[1].workers", "expected at least 1")])
            .collect();
        let collapsed = collapse(ps);
        assert_eq!(collapsed.len(), 2);
        assert_eq!(collapsed[0].0.path, "workloads[*].retry.budget");
        assert_eq!(collapsed[0].1, 3);
        assert_eq!(collapsed[1].0.path, "services[1].workers");
        // Only the differing index becomes [*].
        let ps = vec![
            Problem::new("services[0].steps[1].x", "m"),
            Problem::new("services[2].steps[1].x", "m"),
        ];
        assert_eq!(collapse(ps)[0].0.path, "services[*].steps[1].x");
        assert_eq!(normalise("a[3].b[x].c[*]"), "a[*].b[x].c[*]");
    }
}
