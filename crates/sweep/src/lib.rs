//! Sweeps: one model at many points of its parameter space, each point
//! replicated, run in parallel, with results that do not depend on the thread
//! count or the order runs finish in (collected by index, written on one
//! thread).
#![warn(missing_docs)]

mod check;
pub mod design;
pub mod files;
pub mod inputs;
pub mod margin;
pub mod probability;
pub mod reference;
pub mod resume;
mod row;
pub mod search;
pub mod spec;
pub mod stopping;
mod table;

pub use check::{PointWarning, METASTABLE_SHARE};
pub use design::Point;
pub use row::Row;
pub use spec::{ChartSpec, ModelSource, SearchSpec, SweepSpec};
pub use table::{aggregate_csv, results_csv, write_aggregate_csv, write_results_csv};

use rayon::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use stormsim_engine::StreamKey;
use stormsim_model::{
    apply_overrides, inline_trace_files_with, load_model, load_model_document, parse_json,
    FileAccess, ModelError, Problem,
};
use stormsim_sim::memory::{check_variant_memory, DEFAULT_MEMORY_LIMIT_BYTES};
use stormsim_sim::{run_variant, RunReport, VariantReport};

/// The most worker threads a sweep (or search) takes, `--jobs`: more than
/// this only adds threads that wait (and at tens of thousands, the system
/// refuses them).
pub const MAX_JOBS: u16 = 256;

/// A sweep file, loaded and checked.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The spec.
    pub spec: SweepSpec,
    /// The model file's path.
    pub model_path: PathBuf,
    /// The model file's text.
    pub model_text: String,
    /// `model_text` parsed when the sweep was loaded: each point's model is
    /// built from it.
    model_doc: Value,
    /// The master seed.
    pub seed: u64,
    /// Every point.
    pub points: Vec<Point>,
    /// The ceiling on a run's estimated memory, bytes: a point over it is a
    /// problem of the sweep file, as a model over it is of a model file.
    pub memory_limit: u64,
    /// The model warnings of the points, found as they were checked.
    pub warnings: Vec<PointWarning>,
    /// The summary columns of every row of results.csv: every point's
    /// model's, each once (points whose models have other services have
    /// other columns; a row leaves those its model lacks empty).
    pub columns: Arc<[String]>,
}

/// A problem loading a sweep.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// The sweep or its model is malformed: every problem, with its path.
    #[error("{0}")]
    Invalid(ModelError),
    /// The sweep file could not be read. (The reason is the error's source,
    /// not in its message, so that an error chain says it once.)
    #[error("cannot read the sweep file {}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

fn invalid(problems: Vec<Problem>) -> SweepError {
    SweepError::Invalid(ModelError { problems })
}

/// An override a sweep applies to its model: the label its problems carry
/// (where the sweep file writes it), its path and its value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Override {
    /// `set["PATH"]`, `axes[1] ("workers")`, `search ("PATH")`.
    pub label: String,
    /// The parameter path.
    pub path: String,
    /// The value.
    pub value: Value,
}

/// A variant chosen by name, and where the sweep file chooses it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct VariantChoice {
    /// `variant`, or a `variants` axis's label.
    pub label: String,
    /// The variant's name.
    pub name: String,
}

/// "the model has no variant "x"; its variants are: a, b".
fn no_variant_message(name: &str, variants: &[Value]) -> String {
    let names: Vec<&str> = variants
        .iter()
        .filter_map(|v| v.get("name").and_then(Value::as_str))
        .collect();
    if names.is_empty() {
        format!("the model has no variant {name:?}; it declares none")
    } else {
        format!(
            "the model has no variant {name:?}; its variants are: {}",
            names.join(", ")
        )
    }
}

/// Told, as a sweep's points are checked, how many are, of how many.
pub type CheckProgress<'a> = dyn Fn(usize, usize) + Sync + 'a;

/// One run's result: its row of `summary.csv` (the full report, time series
/// included, is dropped as soon as the run ends, so memory does not grow with
/// the runs' length).
#[derive(Clone, Debug)]
pub struct RunResult {
    /// The point.
    pub point: usize,
    /// The replication, from 0.
    pub replication: u32,
    /// The seed it ran with.
    pub seed: u64,
    /// The summary header (the same for every run of a sweep, so shared:
    /// a million runs held for the tables must not hold a million copies).
    pub header: Arc<[String]>,
    /// The summary row, under `header`.
    pub row: Row,
    /// Whether the run stopped at one of the model's `limits` (its row then
    /// describes a cut-short run). Rows read back from a file say it only
    /// where the table has a `complete` column.
    pub stopped_by_limit: bool,
}

impl RunResult {
    /// Events the run simulated (from its `events` column).
    pub fn events(&self) -> u64 {
        self.header
            .iter()
            .position(|h| h == "events")
            .and_then(|i| self.row.get(i)?.parse().ok())
            .unwrap_or(0)
    }
}

/// A sweep file's text, read as every input file is.
fn read_sweep_file(path: &Path) -> Result<String, SweepError> {
    stormsim_model::read_input_file(path).map_err(|source| SweepError::Io {
        path: path.to_path_buf(),
        source,
    })
}

impl Sweep {
    /// Loads a sweep file and checks it, its model, every point's model and
    /// the search's ends (so a bad value fails before any run). Every problem
    /// is reported once, named by what the sweep file wrote: its `set`
    /// (`set["PATH"]`), an axis (`axes[1] ("workers")`, with the values that
    /// fail where not all do and how many points share the problem), its
    /// `search`, or its `variant`; a missing model file is a problem at `model`.
    pub fn load(path: &Path) -> Result<Sweep, SweepError> {
        Sweep::load_with_memory_limit(path, DEFAULT_MEMORY_LIMIT_BYTES)
    }

    /// [`Sweep::load`], with every point's run held to `memory_limit` bytes
    /// of estimated memory (`--memory-limit-gb`).
    pub fn load_with_memory_limit(path: &Path, memory_limit: u64) -> Result<Sweep, SweepError> {
        Sweep::load_with_progress(path, memory_limit, &|_, _| {})
    }

    /// [`Sweep::load_with_memory_limit`], telling `progress` how many of the
    /// points' models are checked, of how many (from the checking threads):
    /// a million points take a minute.
    pub fn load_with_progress(
        path: &Path,
        memory_limit: u64,
        progress: &CheckProgress<'_>,
    ) -> Result<Sweep, SweepError> {
        Sweep::from_text_with_progress(&read_sweep_file(path)?, path, memory_limit, progress)
    }

    /// [`Sweep::load_with_memory_limit`] for a sweep's text, as if it were
    /// the file `path`: a `model` path is read from `path`'s folder, and an
    /// inline model is known by `path`. Library API: the Python package
    /// loads a sweep given as a dict through here (with the current folder's
    /// path), and runs it with [`Sweep::run`], [`results_csv`] and
    /// [`aggregate_csv`].
    pub fn from_text(text: &str, path: &Path, memory_limit: u64) -> Result<Sweep, SweepError> {
        Sweep::from_text_with_progress(text, path, memory_limit, &|_, _| {})
    }

    /// [`Sweep::from_text`], reading only the trace files `files` allows
    /// (the model's and the sweep's own). Library API: the Python package
    /// loads a sweep given as a dict through here, its files confined to
    /// the model's folder unless told otherwise.
    pub fn from_text_with(
        text: &str,
        path: &Path,
        memory_limit: u64,
        files: FileAccess,
    ) -> Result<Sweep, SweepError> {
        Sweep::read(text, path, memory_limit, &|_, _| {}, files)
    }

    /// [`Sweep::load_with_memory_limit`], reading only the trace files
    /// `files` allows. Library API, as [`Sweep::from_text_with`].
    pub fn load_with(
        path: &Path,
        memory_limit: u64,
        files: FileAccess,
    ) -> Result<Sweep, SweepError> {
        Sweep::from_text_with(&read_sweep_file(path)?, path, memory_limit, files)
    }

    /// [`Sweep::from_text`], with [`Sweep::load_with_progress`]'s `progress`.
    pub fn from_text_with_progress(
        text: &str,
        path: &Path,
        memory_limit: u64,
        progress: &CheckProgress<'_>,
    ) -> Result<Sweep, SweepError> {
        Sweep::read(text, path, memory_limit, progress, FileAccess::Anywhere)
    }

    /// A sweep from its text, as if it were the file `path`, its trace
    /// files read as `files` allows.
    fn read(
        text: &str,
        path: &Path,
        memory_limit: u64,
        progress: &CheckProgress<'_>,
        files: FileAccess,
    ) -> Result<Sweep, SweepError> {
        let mut doc = parse_json(text).map_err(SweepError::Invalid)?;
        let mut spec: SweepSpec = parse_sweep_spec(&doc)?;
        let (model_path, model_text) = match &spec.model {
            ModelSource::File(file) => {
                let model_path = path.parent().unwrap_or(Path::new(".")).join(file);
                // The sweep's input, like any of its fields: a problem at `model`.
                let text = stormsim_model::read_input_file(&model_path).map_err(|e| {
                    let written = if model_path == Path::new(file) {
                        String::new()
                    } else {
                        format!(" ({file:?}, from the sweep file's folder)")
                    };
                    invalid(vec![Problem::new(
                        "model",
                        format!(
                            "cannot read the sweep's model file {}{written}: {e}",
                            model_path.display()
                        ),
                    )])
                })?;
                (model_path, text)
            }
            // Inline: the sweep file is the model's file; its errors name paths
            // inside the model, as a model file's would.
            ModelSource::Inline(model) => (
                path.to_path_buf(),
                serde_json::to_string_pretty(model).expect("a JSON object serializes"),
            ),
        };
        // Trace files named by the sweep itself (a trace written whole as an
        // axis's value, or in `set`) are read once, here, relative to the
        // model's folder as each point's model would read them: their rates
        // are then in the sweep's inputs and its hash, like the model's.
        if let Some(fields) = doc.as_object_mut() {
            // (The model is read below, as a model.)
            let model = fields.shift_remove("model");
            let read = inline_trace_files_with(&mut doc, model_path.parent(), files);
            if let (Some(model), Some(fields)) = (model, doc.as_object_mut()) {
                fields.insert("model".into(), model);
            }
            if read.map_err(SweepError::Invalid)? {
                spec = parse_sweep_spec(&doc)?;
            }
        }
        let inline_problems = |mut e: ModelError| {
            if let ModelSource::Inline(_) = spec.model {
                e.problems = e.problems.into_iter().map(|p| p.within("model")).collect();
            }
            SweepError::Invalid(e)
        };
        // The model as read, its trace files' rates in it: every point, shard
        // and resumed run then has the same rates (and the inputs' hash
        // covers them), whatever later happens to the files.
        let model_dir = model_path.parent();
        let mut model_doc = parse_json(&model_text).map_err(inline_problems)?;
        let model_text = match inline_trace_files_with(&mut model_doc, model_dir, files) {
            Ok(true) => serde_json::to_string_pretty(&model_doc).expect("a JSON value serializes"),
            Ok(false) => model_text,
            Err(e) => return Err(inline_problems(e)),
        };
        let base = load_model(&model_text, &[], None).map_err(inline_problems)?;
        let seed = spec.seed.unwrap_or(base.seed);
        let mut problems = spec_problems(&spec, &base);
        if spec.replications == 0 {
            problems.push(Problem::new("replications", "expected at least 1"));
        }
        let points = design::points(&spec, seed).unwrap_or_else(|ps| {
            problems.extend(ps);
            Vec::new()
        });
        if !problems.is_empty() {
            return Err(invalid(problems));
        }
        let sweep = Sweep {
            spec,
            model_path,
            model_text,
            model_doc,
            seed,
            points,
            memory_limit,
            warnings: Vec::new(),
            columns: Arc::from([]),
        };
        let mut checked = check::points(&sweep, progress);
        if let Some(stop) = &sweep.spec.stop {
            checked
                .problems
                .extend(stop_problems(&sweep.spec, stop, &checked.columns));
        }
        if checked.problems.is_empty() {
            Ok(Sweep {
                warnings: checked.warnings,
                columns: checked.columns.into(),
                ..sweep
            })
        } else {
            Err(invalid(checked.problems))
        }
    }

    /// Runs in the sweep: points × replications.
    pub fn runs(&self) -> usize {
        self.points.len() * self.spec.replications as usize
    }

    /// The seed of a run: `seed + r` at every point (common random numbers), or
    /// a hash of (seed, point, r) with `independent_seeds`.
    pub fn seed_of(&self, point: usize, replication: u32) -> u64 {
        if self.spec.independent_seeds {
            StreamKey::root(self.seed)
                .index(point as u64)
                .index(u64::from(replication))
                .0
        } else {
            self.seed.wrapping_add(u64::from(replication))
        }
    }

    /// The model variant at `point`, for a replication's seed.
    pub fn variant_at(
        &self,
        point: &Point,
        seed: u64,
    ) -> Result<stormsim_model::Variant, ModelError> {
        self.model_at(point, seed)
    }

    /// The model variant a point runs: the variant's own overrides first, then
    /// the sweep's `set`, then the point's values, so that an axis always wins
    /// (a variant that sets the swept parameter must not mask the axis).
    fn model_at(&self, point: &Point, seed: u64) -> Result<stormsim_model::Variant, ModelError> {
        let (variant, overrides) = self.inputs_at(point);
        self.build(variant.as_ref(), &overrides, seed)
            .map_err(ModelError::from)
    }

    /// The sweep's `set`, as overrides named by where the sweep file writes
    /// them: `set["services[A].workers"]`.
    pub(crate) fn set_overrides(&self) -> Vec<Override> {
        self.spec
            .set
            .iter()
            .map(|(p, v)| Override {
                label: format!("set[{p:?}]"),
                path: p.clone(),
                value: v.clone(),
            })
            .collect()
    }

    /// How problems name axis `i`: `axes[1] ("workers")`, by its column.
    pub(crate) fn axis_label(&self, i: usize) -> String {
        match self.spec.axes.get(i) {
            Some(axis) => format!("axes[{i}] ({:?})", design::column(axis)),
            None => format!("axes[{i}]"),
        }
    }

    /// The sweep's own choice of variant (`variant`), if it makes one.
    pub(crate) fn default_variant(&self) -> Option<VariantChoice> {
        self.spec.variant.as_ref().map(|name| VariantChoice {
            label: "variant".into(),
            name: name.clone(),
        })
    }

    /// What a point runs: its variant (a `variants` axis's, else the sweep's),
    /// and the overrides: the sweep's `set`, then its axes' values in order.
    pub(crate) fn inputs_at(&self, point: &Point) -> (Option<VariantChoice>, Vec<Override>) {
        let mut variant = self.default_variant();
        let mut overrides = self.set_overrides();
        for (i, (_, path, value)) in point.values.iter().enumerate() {
            let label = self.axis_label(i);
            match path {
                Some(path) => overrides.push(Override {
                    label,
                    path: path.to_string(),
                    value: value.clone(),
                }),
                None => {
                    variant = value.as_str().map(|name| VariantChoice {
                        label,
                        name: name.to_string(),
                    })
                }
            }
        }
        (variant, overrides)
    }

    /// The value a search probes at `x` (a whole number with `integer`) and
    /// its override, named `search ("PATH")`.
    pub(crate) fn search_override(&self, search: &SearchSpec, x: f64) -> (Value, Override) {
        let value = if search.integer {
            Value::from(x.round() as i64)
        } else {
            Value::from(x)
        };
        let o = Override {
            label: check::search_label(&search.path),
            path: search.path.clone(),
            value: value.clone(),
        };
        (value, o)
    }

    /// The model's document with `variant` folded into the base (its first
    /// without a choice) and `overrides` applied in order, and the problems of
    /// the choice and of each override that names nothing (skipped: the
    /// others still apply, so that every problem shows at once), named by
    /// their labels.
    pub(crate) fn document(
        &self,
        variant: Option<&VariantChoice>,
        overrides: &[Override],
    ) -> (Value, Option<String>, Vec<Problem>) {
        let mut problems = Vec::new();
        let mut doc = self.model_doc.clone();
        // Fold the chosen variant into the base and drop the variants, so the
        // sweep's overrides apply on top of it.
        let variants = doc
            .as_object_mut()
            .and_then(|o| o.remove("variants"))
            .unwrap_or(Value::Array(Vec::new()));
        let variants = variants.as_array().cloned().unwrap_or_default();
        let chosen = match variant {
            None => variants.first().cloned(),
            Some(choice) => {
                let found = variants
                    .iter()
                    .find(|x| x.get("name").and_then(Value::as_str) == Some(&choice.name))
                    .cloned();
                if found.is_none() {
                    problems.push(Problem::new(
                        choice.label.clone(),
                        no_variant_message(&choice.name, &variants),
                    ));
                }
                found
            }
        };
        if let Some(set) = chosen
            .as_ref()
            .and_then(|v| v.get("set"))
            .and_then(Value::as_object)
        {
            let name = chosen
                .as_ref()
                .and_then(|v| v.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("first");
            problems.extend(apply_overrides(
                &mut doc,
                set.iter().map(|(p, v)| (p.as_str(), v)),
                &|p| format!("variants[{name:?}].set[{p:?}]"),
            ));
        }
        for o in overrides {
            problems.extend(
                apply_overrides(&mut doc, [(o.path.as_str(), &o.value)], &|_| {
                    o.label.clone()
                })
                .into_iter()
                .map(|mut p| {
                    // The label names the path already: say it once.
                    if let Some(rest) = p.message.strip_prefix(&format!("{}: ", o.path)) {
                        p.message = rest.to_string();
                    }
                    p
                }),
            );
        }
        let name = chosen.as_ref().map(|v| {
            v.get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        });
        (doc, name, problems)
    }

    /// The checked variant for `variant` and `overrides` (see
    /// [`document`](Self::document)), or every problem.
    pub(crate) fn build(
        &self,
        variant: Option<&VariantChoice>,
        overrides: &[Override],
        seed: u64,
    ) -> Result<stormsim_model::Variant, Vec<Problem>> {
        let (doc, name, mut problems) = self.document(variant, overrides);
        // (A trace written whole by an axis or `set` may still name a file.)
        match load_model_document(doc, self.model_path.parent(), &[], Some(seed)) {
            Ok(model) if problems.is_empty() => {
                let mut v = model
                    .variants
                    .into_iter()
                    .next()
                    .expect("a model has a variant");
                if let Some(name) = name {
                    v.name = name;
                }
                // A point whose model would outgrow memory is refused as
                // `run` refuses a model, not aborted on.
                match check_variant_memory(&v, self.memory_limit) {
                    Ok(_) => Ok(v),
                    Err(too_much) => Err(vec![Problem::new(too_much.path(), too_much.to_string())]),
                }
            }
            Ok(_) => Err(problems),
            Err(e) => {
                problems.extend(e.problems);
                Err(problems)
            }
        }
    }

    /// Runs every (point, replication) on the current rayon pool and returns
    /// the results in index order, whatever order they finish in. `progress`
    /// is called after each run with the number done. Library API: the rows
    /// [`results_csv`] and [`aggregate_csv`] make the tables of (the same
    /// bytes as `stormsim sweep` writes, which runs them resumably instead).
    pub fn run(&self, progress: &(dyn Fn(usize) + Sync)) -> Vec<RunResult> {
        if let Some(stop) = &self.spec.stop {
            return self.run_until_sure(stop, progress);
        }
        let done = AtomicUsize::new(0);
        (0..self.runs())
            .into_par_iter()
            .map(|i| {
                let result = self.run_one(i);
                progress(done.fetch_add(1, Ordering::Relaxed) + 1);
                result
            })
            .collect()
    }

    /// [`Sweep::run`] with a stopping rule: every point's first
    /// `replications`, then, in rounds, a batch more at each point whose
    /// interval still straddles the threshold, until none does or each is
    /// at its cap. The results in point-major order, each point's
    /// replications from 0 up (their seeds as a fixed count would give
    /// them: common random numbers across points).
    fn run_until_sure(
        &self,
        stop: &spec::SweepStopSpec,
        progress: &(dyn Fn(usize) + Sync),
    ) -> Vec<RunResult> {
        let rule = stopping::Rule::new(self.spec.replications, Some(&stop.rule()));
        let done = AtomicUsize::new(0);
        let mut results: Vec<RunResult> = Vec::new();
        let mut next: Vec<(usize, u32)> = (0..self.points.len())
            .flat_map(|p| (0..rule.first).map(move |r| (p, r)))
            .collect();
        let mut ran = vec![0u32; self.points.len()];
        while !next.is_empty() {
            let round: Vec<RunResult> = next
                .par_iter()
                .map(|&(point, replication)| {
                    let result = self.run_at(point, replication);
                    progress(done.fetch_add(1, Ordering::Relaxed) + 1);
                    result
                })
                .collect();
            for &(point, _) in &next {
                ran[point] += 1;
            }
            results.extend(round);
            let values = stopping::values_by_point(&results, &stop.metric, self.points.len());
            next = (0..self.points.len())
                .filter(|&p| {
                    let (_, ci) = stopping::quantity(&stop.metric, &values[p], rule.alpha_per_look);
                    // A point with no value yet (every run partial or
                    // unjudged) is unsure until its cap.
                    if values[p].is_empty() {
                        ran[p] < rule.max
                    } else {
                        rule.look(ran[p], ci, stop.threshold).is_none()
                    }
                })
                .flat_map(|p| {
                    let from = ran[p];
                    (from..from + rule.next_batch(from)).map(move |r| (p, r))
                })
                .collect();
        }
        results.sort_by_key(|r| (r.point, r.replication));
        results
    }

    /// Run number `i` (point-major: `i = point × replications + replication`).
    pub fn run_one(&self, i: usize) -> RunResult {
        let reps = self.spec.replications as usize;
        self.run_at(i / reps, (i % reps) as u32)
    }

    /// The run of `point`'s replication `replication`.
    pub fn run_at(&self, point: usize, replication: u32) -> RunResult {
        let seed = self.seed_of(point, replication);
        let variant = self
            .model_at(&self.points[point], seed)
            .expect("every point was checked when the sweep was loaded");
        let report = run_variant(&variant);
        let stopped_by_limit = report.stopped_by_limit.is_some();
        let (header, row) = summary_of(seed, report);
        let row = table::row_under(&self.columns, &header, row);
        RunResult {
            point,
            replication,
            seed,
            header: self.columns.clone(),
            row: Row::new(row),
            stopped_by_limit,
        }
    }
}

/// The problems of a sweep's `stop`: one for a search or a margin (they
/// have their own), a metric no run reports, a cap below the first batch.
fn stop_problems(spec: &SweepSpec, stop: &spec::SweepStopSpec, columns: &[String]) -> Vec<Problem> {
    let mut problems = Vec::new();
    if spec.search.is_some() || spec.margin.is_some() {
        problems.push(Problem::new(
            "stop",
            "a search's or a margin's stopping rule is its own `stop` (`search.stop`, `margin.stop`)",
        ));
    }
    if stop.metric != "metastable" && !columns.contains(&stop.metric) {
        problems.push(Problem::new(
            "stop.metric",
            format!(
                "{:?} is not a column of the summary: `metastable` or a numeric column such as `success_rate`",
                stop.metric
            ),
        ));
    }
    if stop.max_replications < spec.replications {
        problems.push(Problem::new(
            "stop.max_replications",
            format!(
                "{} is below `replications` ({}), the first batch",
                stop.max_replications, spec.replications
            ),
        ));
    }
    problems
}

/// The problems of the sweep file's own fields that no point's model shows:
/// a name that cannot be a folder, two axes on one path or two `variants`
/// axes (the second would silently win while rows carry both), a column
/// named twice or like one of the tables' own, and a search that cannot end.
fn spec_problems(spec: &SweepSpec, base: &stormsim_model::LoadedModel) -> Vec<Problem> {
    let mut problems = Vec::new();
    if let Some(message) = stormsim_model::folder_name_problem(&spec.name) {
        problems.push(Problem::new("name", message));
    }
    let reserved = reserved_columns(base);
    let mut columns: Vec<String> = Vec::new();
    for (i, axis) in spec.axes.iter().enumerate() {
        let column = design::column(axis);
        let same_path = axis.path.as_deref().and_then(|path| {
            spec.axes[..i]
                .iter()
                .position(|a| a.path.as_deref().map(str::trim) == Some(path.trim()))
                .map(|j| (path, j))
        });
        let earlier_variants = (axis.path.is_none() && axis.variants.is_some())
            .then(|| {
                spec.axes[..i]
                    .iter()
                    .position(|a| a.path.is_none() && a.variants.is_some())
            })
            .flatten();
        if let Some(j) = earlier_variants {
            problems.push(Problem::new(
                format!("axes[{i}].variants"),
                format!("axes[{j}] is a `variants` axis too: a run has one variant, and this axis's would silently override that one's (list every variant on one axis)"),
            ));
        } else if let Some((path, j)) = same_path {
            problems.push(Problem::new(
                format!("axes[{i}].path"),
                format!("{path:?} is axes[{j}]'s path too: one would silently override the other (sweep each path on one axis)"),
            ));
        } else if columns.contains(&column) {
            problems.push(Problem::new(
                format!("axes[{i}]"),
                format!("the column {column:?} is another axis's too: give one a `name`"),
            ));
        } else if reserved.contains(&column) && !(axis.path.is_none() && column == "variant") {
            // (A `variants` axis's own column is `variant`, as the summary's is.)
            problems.push(Problem::new(
                format!("axes[{i}]"),
                format!("the column {column:?} is one of results.csv's or aggregate.csv's own: give the axis another `name`"),
            ));
        }
        columns.push(column);
    }
    if let Some(metric) = spec.chart.as_ref().and_then(|c| c.metric.as_deref()) {
        let metrics = check::chart_metrics(&summary_columns(base));
        problems.extend(check::chart_metric_problem(metric, &metrics));
    }
    if let Some(search) = &spec.search {
        if !(search.tolerance.is_finite() && search.tolerance > 0.0) {
            problems.push(Problem::new(
                "search.tolerance",
                format!("expected a number > 0, got {}", search.tolerance),
            ));
        }
    }
    problems
}

/// The columns results.csv and aggregate.csv have besides the axes': the
/// run's (point, replication, seed), the summary's (fixed, per service and
/// per workload of the model) and the aggregate's.
fn reserved_columns(base: &stormsim_model::LoadedModel) -> Vec<String> {
    let mut reserved: Vec<String> = [
        "point",
        "replication",
        "seed",
        "replications",
        "metastable_share.n",
        "metastable_share",
        "metastable_share.ci95_low",
        "metastable_share.ci95_high",
    ]
    .iter()
    .map(|c| c.to_string())
    .collect();
    reserved.extend(summary_columns(base));
    reserved
}

/// The columns `summary.csv` may have for any variant of the model: the
/// fixed ones, and those of each of its services and workloads.
fn summary_columns(base: &stormsim_model::LoadedModel) -> Vec<String> {
    use stormsim_sim::report::{
        FAILURE_COLUMNS, SERVICE_COLUMNS, SUMMARY_COLUMNS, WORKLOAD_COLUMNS,
    };
    let mut columns: Vec<String> = SUMMARY_COLUMNS
        .iter()
        .chain(FAILURE_COLUMNS)
        .map(|c| c.to_string())
        .collect();
    for v in &base.variants {
        for s in &v.model.services {
            columns.extend(SERVICE_COLUMNS.iter().map(|c| format!("{}.{c}", s.name)));
        }
        for w in v.model.workload_ids.iter() {
            columns.extend(WORKLOAD_COLUMNS.iter().map(|c| format!("{}.{c}", w.name)));
        }
    }
    columns
}

/// The summary table of one run (header, row), as `summary.csv` has it.
pub fn summary_of(seed: u64, report: VariantReport) -> (Vec<String>, Vec<String>) {
    let run = RunReport {
        model: String::new(),
        description: String::new(),
        seed,
        variants: vec![report],
    };
    let (header, mut rows) = run.summary_table();
    (header, rows.remove(0))
}

/// Deserializes a sweep spec as a model's parts are (objects only:
/// `stormsim_model::strict`), naming each problem's JSON path.
fn parse_sweep_spec(doc: &Value) -> Result<SweepSpec, SweepError> {
    stormsim_model::strict::from_value::<SweepSpec>(doc).map_err(|problems| {
        invalid(
            problems
                .into_iter()
                .map(|p| p.within("sweep file"))
                .collect(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(doc: Value) -> Vec<String> {
        match parse_sweep_spec(&doc) {
            Ok(_) => vec![],
            Err(e) => e.to_string().lines().map(str::to_string).collect(),
        }
    }

    /// As in a model file, an object written as an array of its fields by
    /// position is refused, with its path; so is the design (a tagged enum).
    /// (The wording is the model crate's: only its stable part is asserted.)
    #[test]
    fn sweep_objects_written_as_arrays_are_rejected() {
        let refused = "expected an object (fields by name, not by position)";
        let sweep = |axes: Value, design: Value| json!({"name": "s", "model": "m.json", "axes": axes, "design": design});
        assert!(problems(sweep(
            json!([{"path": "a", "linear": {"from": 1, "to": 2, "steps": 2}}]),
            json!({"kind": "random", "points": 3})
        ))
        .is_empty());
        let refused_at = |doc: Value, at: &str| {
            let found = problems(doc);
            assert_eq!(found.len(), 1, "{found:?}");
            assert!(
                found[0].starts_with(&format!("{at}: ")) && found[0].contains(refused),
                "{found:?}"
            );
        };
        refused_at(
            sweep(
                json!([{"path": "a", "linear": [1, 2, 2]}]),
                json!({"kind": "grid"}),
            ),
            "sweep file: axes[0].linear",
        );
        refused_at(
            sweep(json!([["a"]]), json!({"kind": "grid"})),
            "sweep file: axes[0]",
        );
        refused_at(sweep(json!([]), json!(["random", 3])), "sweep file: design");
        refused_at(json!(["s", "", "m.json"]), "sweep file");
        let found = problems(json!({"model": "m.json"}));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("sweep file: ") && found[0].contains("`name`"),
            "{found:?}"
        );
    }

    /// Loading tells how many points' models are checked, up to all of them,
    /// from whichever thread checked each.
    #[test]
    fn loading_tells_how_many_points_are_checked() {
        let sweep = json!({
            "name": "s", "replications": 1,
            "model": {"name": "m", "horizon_s": 1,
                      "workloads": [{"name": "w", "target": "a", "requests": 1,
                                     "arrival": {"kind": "poisson", "rate_per_s": 1}}],
                      "services": [{"name": "a", "workers": 1, "steps": []}]},
            "axes": [{"path": "services[a].workers", "values": [1, 2, 3, 4, 5, 6, 7]},
                     {"path": "workloads[w].arrival.rate_per_s", "values": [1, 2, 3]}]
        });
        let told = std::sync::Mutex::new(Vec::new());
        let progress = |done: usize, all: usize| told.lock().unwrap().push((done, all));
        let loaded = Sweep::from_text_with_progress(
            &sweep.to_string(),
            Path::new("s.sweep.json"),
            u64::MAX,
            &progress,
        );
        assert!(loaded.is_ok());
        let mut told = told.into_inner().unwrap();
        told.sort();
        assert_eq!(told, (1..=21).map(|done| (done, 21)).collect::<Vec<_>>());
    }
}
