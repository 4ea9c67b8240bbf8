//! `stormsim._native`: the workspace's library crates as a Python module.
//!
//! Each function takes a model (or a sweep) as a file's path or as JSON text,
//! simulates with the GIL released, and returns the tables as the CSV text
//! `stormsim run` and `stormsim sweep` write: the Python layer
//! (`stormsim/__init__.py`) parses that text into data frames, so that the
//! frames and the command line's files have one source. A model that cannot
//! run raises `stormsim.ModelError` with every problem and its JSON path.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;
use std::path::{Path, PathBuf};
use stormsim_model::{load_model_in_with, FileAccess, LoadedModel, Problem};
use stormsim_sim::memory::{check_memory, DEFAULT_MEMORY_LIMIT_BYTES};
use stormsim_sweep::{aggregate_csv, results_csv, Sweep, SweepError};

/// Where a model or a sweep comes from: a file (its folder holds the files it
/// names), or JSON text (a Python dict; relative paths in it are from the
/// current folder).
enum Source {
    File(PathBuf),
    Text(String),
}

impl Source {
    fn new(path: Option<PathBuf>, text: Option<String>) -> PyResult<Source> {
        match (path, text) {
            (Some(path), None) => Ok(Source::File(path)),
            (None, Some(text)) => Ok(Source::Text(text)),
            _ => Err(PyValueError::new_err(
                "expected a path or JSON text, not both",
            )),
        }
    }
}

/// Why a call could not give its tables: each becomes its Python exception
/// once the GIL is held again.
enum Failure {
    /// The model or sweep has problems (`stormsim.ModelError`).
    Problems(Vec<Problem>),
    /// A file could not be read (`OSError`, its subclass by the error kind).
    Io(std::io::Error),
    /// An argument the caller gave is not one the model takes (`ValueError`).
    Value(String),
}

impl Failure {
    /// The Python exception: a `stormsim.ModelError(source, problems)` for a
    /// model's problems, `source` naming the file in its message as the
    /// command line's exit-2 lines do.
    fn into_py_err(self, py: Python<'_>, source: &str) -> PyErr {
        match self {
            Failure::Problems(problems) => {
                let problems: Vec<(String, String)> =
                    problems.into_iter().map(|p| (p.path, p.message)).collect();
                match py
                    .import("stormsim._errors")
                    .and_then(|m| m.getattr("ModelError"))
                    .and_then(|class| class.call1((source, problems)))
                {
                    Ok(error) => PyErr::from_value(error),
                    Err(import_failed) => import_failed,
                }
            }
            Failure::Io(e) => e.into(),
            Failure::Value(message) => PyValueError::new_err(message),
        }
    }
}

/// `--set PATH=VALUE` overrides, from a JSON object (`{PATH: VALUE}`, in the
/// order given).
fn parse_sets(sets_json: &str) -> Result<Vec<(String, Value)>, Failure> {
    match serde_json::from_str::<Value>(sets_json) {
        Ok(Value::Object(sets)) => Ok(sets.into_iter().collect()),
        _ => Err(Failure::Value(format!(
            "`set` must be a dict of {{PATH: VALUE}}, got {sets_json}"
        ))),
    }
}

/// Which files a model may read: anywhere, or (`allow_files_outside`
/// false) only those in its folder.
fn file_access(allow_files_outside: bool) -> FileAccess {
    if allow_files_outside {
        FileAccess::Anywhere
    } else {
        FileAccess::ModelFolder
    }
}

/// Loads a model as `stormsim run` and `stormsim check` do: overrides, seed,
/// then the memory ceiling (a model over it is a problem at the path of its
/// largest part); its files read as `files` allows.
fn load(
    source: &Source,
    sets_json: &str,
    seed: Option<u64>,
    memory_limit: u64,
    files: FileAccess,
) -> Result<LoadedModel, Failure> {
    let sets = parse_sets(sets_json)?;
    let loaded = match source {
        Source::File(path) => {
            let text = stormsim_model::read_input_file(path).map_err(Failure::Io)?;
            load_model_in_with(&text, path.parent(), files, &sets, seed)
        }
        // A dict's trace files are read from the current folder.
        Source::Text(text) => load_model_in_with(text, Some(Path::new(".")), files, &sets, seed),
    }
    .map_err(|e| Failure::Problems(e.problems))?;
    if let Err(too_big) = check_memory(&loaded, memory_limit) {
        return Err(Failure::Problems(vec![Problem::new(
            too_big.path(),
            too_big.to_string(),
        )]));
    }
    Ok(loaded)
}

/// The memory ceiling in bytes, from GiB as `--memory-limit-gb` takes it
/// (the command line's default, 4 GiB, when `None`).
fn memory_limit_bytes(gib: Option<f64>) -> PyResult<u64> {
    match gib {
        None => Ok(DEFAULT_MEMORY_LIMIT_BYTES),
        Some(g) if g.is_finite() && g > 0.0 && g <= 1e9 => Ok((g * (1u64 << 30) as f64) as u64),
        Some(g) => Err(PyValueError::new_err(format!(
            "memory_limit_gb must be a positive number of GiB, got {g}"
        ))),
    }
}

/// A table's CSV text; writing it into memory fails only as an I/O error.
fn csv_text(text: Result<String, csv::Error>) -> Result<String, Failure> {
    text.map_err(|e| Failure::Io(e.into()))
}

/// A model's warnings, as (name, path, message).
fn warnings_of(loaded: &LoadedModel) -> Vec<(String, String, String)> {
    stormsim_model::warnings(loaded)
        .into_iter()
        .map(|w| (w.name.to_string(), w.path, w.message))
        .collect()
}

/// Checks a model without running it: its warnings, or `ModelError`.
#[pyfunction]
#[pyo3(signature = (path, text, sets_json, source, memory_limit_gb=None, allow_files_outside=false))]
fn check_model(
    py: Python<'_>,
    path: Option<PathBuf>,
    text: Option<String>,
    sets_json: &str,
    source: &str,
    memory_limit_gb: Option<f64>,
    allow_files_outside: bool,
) -> PyResult<Vec<(String, String, String)>> {
    let model = Source::new(path, text)?;
    let limit = memory_limit_bytes(memory_limit_gb)?;
    let files = file_access(allow_files_outside);
    py.detach(|| load(&model, sets_json, None, limit, files).map(|loaded| warnings_of(&loaded)))
        .map_err(|f| f.into_py_err(py, source))
}

/// What a run of a model gives Python.
struct RunTables {
    model: String,
    seed: u64,
    summary_csv: String,
    timeseries_csv: String,
    timeseries_tidy_csv: String,
    warnings: Vec<(String, String, String)>,
    /// (variant, why) for each variant stopped at one of the model's limits.
    stopped: Vec<(String, String)>,
}

/// Runs a model's variants (`variants`, or all) in parallel and returns a
/// dict: `model`, `seed`, `summary_csv`, `timeseries_csv` and
/// `timeseries_tidy_csv` (the bytes of `stormsim run`'s summary.csv,
/// timeseries.csv and timeseries.tidy.csv.gz unzipped), `warnings` and
/// `stopped` (variants cut short by a limit).
#[pyfunction]
#[pyo3(signature = (path, text, sets_json, seed, variants, source, memory_limit_gb=None, allow_files_outside=false))]
#[allow(clippy::too_many_arguments)]
fn run_model(
    py: Python<'_>,
    path: Option<PathBuf>,
    text: Option<String>,
    sets_json: &str,
    seed: Option<u64>,
    variants: Vec<String>,
    source: &str,
    memory_limit_gb: Option<f64>,
    allow_files_outside: bool,
) -> PyResult<Py<PyDict>> {
    let model = Source::new(path, text)?;
    let limit = memory_limit_bytes(memory_limit_gb)?;
    let files = file_access(allow_files_outside);
    let run = || -> Result<RunTables, Failure> {
        let mut loaded = load(&model, sets_json, seed, limit, files)?;
        // Of every variant, as the command line: the file is what they are about.
        let warnings = warnings_of(&loaded);
        loaded.select_variants(&variants).map_err(Failure::Value)?;
        let report = stormsim_sim::run_model_parallel(&loaded);
        Ok(RunTables {
            model: report.model.clone(),
            seed: report.seed,
            summary_csv: csv_text(report.summary_csv())?,
            timeseries_csv: csv_text(report.timeseries_csv())?,
            timeseries_tidy_csv: csv_text(
                report
                    .write_timeseries(stormsim_sim::layout::Layout::Tidy, Vec::new())
                    .map(|bytes| String::from_utf8(bytes).expect("CSV of UTF-8 cells")),
            )?,
            warnings,
            stopped: report
                .variants
                .iter()
                .filter_map(|v| Some((v.variant.clone(), v.stopped_by_limit.clone()?)))
                .collect(),
        })
    };
    let tables = py.detach(run).map_err(|f| f.into_py_err(py, source))?;
    let out = PyDict::new(py);
    out.set_item("model", tables.model)?;
    out.set_item("seed", tables.seed)?;
    out.set_item("summary_csv", tables.summary_csv)?;
    out.set_item("timeseries_csv", tables.timeseries_csv)?;
    out.set_item("timeseries_tidy_csv", tables.timeseries_tidy_csv)?;
    out.set_item("warnings", tables.warnings)?;
    out.set_item("stopped", tables.stopped)?;
    Ok(out.unbind())
}

/// Refuses a number of worker threads outside 1 to [`stormsim_sweep::MAX_JOBS`].
fn check_jobs(jobs: Option<usize>) -> PyResult<()> {
    let most = usize::from(stormsim_sweep::MAX_JOBS);
    match jobs.filter(|j| !(1..=most).contains(j)) {
        Some(jobs) => Err(PyValueError::new_err(format!(
            "{jobs} worker threads: jobs takes 1 to {most}"
        ))),
        None => Ok(()),
    }
}

/// `jobs` worker threads (all cores if `None`).
fn pool(jobs: Option<usize>) -> Result<rayon::ThreadPool, Failure> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.unwrap_or(0))
        .build()
        .map_err(|e| Failure::Io(std::io::Error::other(e)))
}

/// Loads a sweep as `stormsim sweep` does, its files read as `files` allows.
fn load_sweep(source: &Source, limit: u64, files: FileAccess) -> Result<Sweep, Failure> {
    let loaded = match source {
        Source::File(path) => Sweep::load_with(path, limit, files),
        Source::Text(text) => Sweep::from_text_with(text, Path::new("<dict>"), limit, files),
    };
    loaded.map_err(|e| match e {
        SweepError::Invalid(e) => Failure::Problems(e.problems),
        SweepError::Io { source, .. } => Failure::Io(source),
    })
}

/// Runs a sweep (a file, or JSON text as if it were a file in the current
/// folder) on `jobs` threads (all cores if `None`) and returns a dict:
/// `name`, `results_csv` and `aggregate_csv` (the bytes of `stormsim
/// sweep`'s results.csv and aggregate.csv; the results do not depend on
/// `jobs`) and `stopped` (how many runs stopped at a limit).
#[pyfunction]
#[pyo3(signature = (path, text, jobs, source, memory_limit_gb=None, allow_files_outside=false))]
fn run_sweep(
    py: Python<'_>,
    path: Option<PathBuf>,
    text: Option<String>,
    jobs: Option<usize>,
    source: &str,
    memory_limit_gb: Option<f64>,
    allow_files_outside: bool,
) -> PyResult<Py<PyDict>> {
    let sweep_source = Source::new(path, text)?;
    let limit = memory_limit_bytes(memory_limit_gb)?;
    check_jobs(jobs)?;
    let run = || -> Result<(String, String, String, usize), Failure> {
        let sweep = load_sweep(&sweep_source, limit, file_access(allow_files_outside))?;
        let pool = pool(jobs)?;
        let results = pool.install(|| sweep.run(&|_| {}));
        let stopped = results.iter().filter(|r| r.stopped_by_limit).count();
        Ok((
            sweep.spec.name.clone(),
            csv_text(results_csv(&sweep, &results))?,
            csv_text(aggregate_csv(&sweep, &results))?,
            stopped,
        ))
    };
    let (name, results, aggregate, stopped) =
        py.detach(run).map_err(|f| f.into_py_err(py, source))?;
    let out = PyDict::new(py);
    out.set_item("name", name)?;
    out.set_item("results_csv", results)?;
    out.set_item("aggregate_csv", aggregate)?;
    out.set_item("stopped", stopped)?;
    Ok(out.unbind())
}

/// Runs a sweep file's storm margin (`stormsim margin`), its source as for
/// [`run_sweep`]. Returns a dict of `name`, `margin_csv` and `probes_csv`
/// (the bytes of margin.csv and margin_probes.csv) and `sentences` (one
/// per row, as `stormsim margin` prints them).
#[pyfunction]
#[pyo3(signature = (path, text, jobs, source, memory_limit_gb=None, allow_files_outside=false))]
fn run_margin(
    py: Python<'_>,
    path: Option<PathBuf>,
    text: Option<String>,
    jobs: Option<usize>,
    source: &str,
    memory_limit_gb: Option<f64>,
    allow_files_outside: bool,
) -> PyResult<Py<PyDict>> {
    let sweep_source = Source::new(path, text)?;
    let limit = memory_limit_bytes(memory_limit_gb)?;
    check_jobs(jobs)?;
    let run = || -> Result<(String, String, String, Vec<String>), Failure> {
        let sweep = load_sweep(&sweep_source, limit, file_access(allow_files_outside))?;
        sweep.check_margin().map_err(Failure::Problems)?;
        let pool = pool(jobs)?;
        let result = pool
            .install(|| sweep.margin(&|_| {}))
            .map_err(|p| Failure::Problems(vec![p]))?;
        let sentences = result
            .rows
            .iter()
            .map(|r| stormsim_sweep::margin::sentence(&result, r))
            .collect();
        Ok((
            sweep.spec.name.clone(),
            csv_text(stormsim_sweep::margin::margin_csv(&result))?,
            csv_text(stormsim_sweep::margin::margin_probes_csv(&result))?,
            sentences,
        ))
    };
    let (name, margin, probes, sentences) =
        py.detach(run).map_err(|f| f.into_py_err(py, source))?;
    let out = PyDict::new(py);
    out.set_item("name", name)?;
    out.set_item("margin_csv", margin)?;
    out.set_item("probes_csv", probes)?;
    out.set_item("sentences", sentences)?;
    Ok(out.unbind())
}

/// P(storm) per variant (`stormsim probability --csv`): the model as for
/// [`run_model`]; `splitting` with `runs_per_stage` and `repetitions`, or
/// plain Monte Carlo with `runs`. Returns the bytes of the table.
#[pyfunction]
#[pyo3(signature = (path, text, sets_json, seed, variants, source, runs=400, splitting=false, runs_per_stage=100, repetitions=4, jobs=None, allow_files_outside=false))]
#[allow(clippy::too_many_arguments)]
fn storm_probability(
    py: Python<'_>,
    path: Option<PathBuf>,
    text: Option<String>,
    sets_json: &str,
    seed: Option<u64>,
    variants: Vec<String>,
    source: &str,
    runs: u32,
    splitting: bool,
    runs_per_stage: u32,
    repetitions: u32,
    jobs: Option<usize>,
    allow_files_outside: bool,
) -> PyResult<String> {
    use stormsim_sweep::probability::{per_variant, probability_csv, Method};
    let model = Source::new(path, text)?;
    if (splitting && (runs_per_stage < 2 || repetitions < 2)) || (!splitting && runs == 0) {
        return Err(PyValueError::new_err(
            "runs must be at least 1; with splitting, runs_per_stage and repetitions at least 2",
        ));
    }
    let files = file_access(allow_files_outside);
    let run = || -> Result<String, Failure> {
        // Checked as a run checks it (files, memory) before the runs.
        load(&model, sets_json, seed, DEFAULT_MEMORY_LIMIT_BYTES, files)?;
        let sets = parse_sets(sets_json)?;
        let (text, dir) = match &model {
            Source::File(path) => (
                stormsim_model::read_input_file(path).map_err(Failure::Io)?,
                path.parent().map(Path::to_path_buf),
            ),
            Source::Text(text) => (text.clone(), Some(PathBuf::from("."))),
        };
        let method = Method::from_flags(splitting, runs, runs_per_stage, repetitions);
        let pool = pool(jobs)?;
        let rows = pool
            .install(|| per_variant(&text, dir.as_deref(), &sets, &variants, method, seed))
            .map_err(Failure::Problems)?;
        csv_text(probability_csv(&rows))
    };
    py.detach(run).map_err(|f| f.into_py_err(py, source))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(check_model, m)?)?;
    m.add_function(wrap_pyfunction!(run_model, m)?)?;
    m.add_function(wrap_pyfunction!(run_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(run_margin, m)?)?;
    m.add_function(wrap_pyfunction!(storm_probability, m)?)?;
    m.add(
        "VERDICT_COLUMNS",
        stormsim_sim::report::verdict_columns().to_vec(),
    )?;
    m.add(
        "OUTCOMES",
        stormsim_sim::analysis::Outcome::ALL
            .map(stormsim_sim::analysis::Outcome::as_str)
            .to_vec(),
    )?;
    m.add(
        "WARNINGS",
        stormsim_model::WARNINGS
            .iter()
            .map(|(name, what)| (*name, *what))
            .collect::<Vec<_>>(),
    )?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
