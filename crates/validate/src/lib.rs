//! The simulator against queueing theory.
//!
//! Each model in a folder (`models/validation/`) is a textbook queue — M/M/1,
//! M/D/1, M/G/1, M/M/c, M/G/c/c, M/G/1 processor sharing — whose variants
//! are utilisations. Every
//! variant runs `replications` times with seeds `seed`, `seed + 1`, …; each run
//! yields one estimate per quantity (mean time in system, mean wait, P(wait),
//! P(block), and Little's law on the run's own output), and the estimates'
//! Student-t interval must contain the closed form.
//!
//! Which formula applies is read off the checked model ([`Queue::from_model`]),
//! so the analytic side uses the very parameters the simulator ran. A run is
//! a pure function of (model, seed), and runs are collected in order, so the
//! table is the same bytes on every machine and with any number of threads.
#![warn(missing_docs)]

pub mod formulas;
mod measure;
pub mod queue;
pub mod stats;

pub use measure::Window;
pub use queue::{Quantity, Queue};
pub use stats::Interval;

use rayon::prelude::*;
use std::path::{Path, PathBuf};
use stormsim_model::{load_model, load_model_in, parse_json, ModelError, Variant};
use stormsim_sim::run_variant;

/// The probability that a correct simulator passes every row at once: each
/// row is checked in its Bonferroni interval at `1 − (1 − this) / rows`.
/// With dozens of rows, per-row 95% intervals would fail some row of a
/// correct simulator most of the time; this keeps a false alarm under 1%
/// for the whole table, whatever the dependence between rows.
pub const FAMILY_CONFIDENCE: f64 = 0.99;

/// Replications of the full suite.
pub const DEFAULT_REPLICATIONS: u32 = 20;

/// How to run the suite.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// Runs per variant, each with its own seed (at least 2).
    pub replications: u32,
    /// Multiplies every workload's `duration_s`: below 1 for a quick check,
    /// whose intervals are then wider. Runs still discard their full warm-up,
    /// so a scale too small is refused rather than measured with a bias.
    pub duration_scale: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            replications: DEFAULT_REPLICATIONS,
            duration_scale: 1.0,
        }
    }
}

/// Why the suite could not run.
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    /// An interval needs a spread, so at least two replications.
    #[error("replications must be at least 2 (a confidence interval needs a spread), got {0}")]
    Replications(u32),
    /// The duration scale must be a positive number.
    #[error("the duration scale must be a positive number, got {0}")]
    Scale(f64),
    /// A file or folder could not be read.
    #[error("cannot read {}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The folder holds no model.
    #[error("no model files (*.json) in {}", .0.display())]
    NoModels(PathBuf),
    /// A model file is not a valid model.
    #[error("{}: {} problem(s) found:\n{problems}", path.display(), problems.problems.len())]
    Model {
        /// The model file.
        path: PathBuf,
        /// Every problem found, one a line.
        problems: ModelError,
    },
    /// A variant is not a queue the formulas cover.
    #[error("{}: variant {variant:?} is not a queue the formulas cover: {why}", path.display())]
    Unsupported {
        /// The model file.
        path: PathBuf,
        /// The variant.
        variant: String,
        /// Every reason.
        why: String,
    },
    /// A variant's arrivals stop too soon to measure after its warm-up.
    #[error(
        "{}: variant {variant:?}: arrivals stop at {arrivals_s} s, too soon to measure twice \
         its warm-up of {warm_up_s:.1} s after it (a longer `duration_s`, or a larger scale)",
        path.display()
    )]
    TooShort {
        /// The model file.
        path: PathBuf,
        /// The variant.
        variant: String,
        /// When arrivals stop, s.
        arrivals_s: f64,
        /// The warm-up, s.
        warm_up_s: f64,
    },
    /// A run hit a safety limit: its report is partial.
    #[error("{}: variant {variant:?}, seed {seed}: {why}", path.display())]
    Stopped {
        /// The model file.
        path: PathBuf,
        /// The variant.
        variant: String,
        /// The replication's seed.
        seed: u64,
        /// The limit hit.
        why: String,
    },
    /// The CSV could not be written.
    #[error("writing the CSV: {0}")]
    Csv(#[from] csv::Error),
}

/// One checked quantity of one variant.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The model file's stem (`mm1`).
    pub model: String,
    /// The variant (`rho-0.95`).
    pub variant: String,
    /// Kendall's notation of its queue (`M/M/1`).
    pub queue: String,
    /// Its offered load per server.
    pub utilisation: f64,
    /// What is measured.
    pub quantity: Quantity,
    /// The closed form.
    pub analytic: f64,
    /// Mean of the replications' estimates.
    pub simulated: f64,
    /// 95% Student-t interval of that mean.
    pub ci95: Interval,
    /// The interval the pass decision uses (Bonferroni, see [`FAMILY_CONFIDENCE`]).
    pub check: Interval,
    /// Whether the analytic value lies in `check`.
    pub pass: bool,
}

impl Row {
    /// `M/M/1 ρ=0.95 W ms`.
    pub fn label(&self) -> String {
        format!(
            "{} ρ={:.2} {}",
            self.queue,
            self.utilisation,
            self.quantity.label()
        )
    }
}

/// The suite's result.
#[derive(Clone, Debug, PartialEq)]
pub struct Validation {
    /// Rows in model-file, variant and quantity order.
    pub rows: Vec<Row>,
    /// Replications per variant.
    pub replications: u32,
    /// Confidence of each row's check interval.
    pub row_confidence: f64,
}

/// A model file's queues, checked before anything runs.
struct Case {
    path: PathBuf,
    stem: String,
    /// The file's text with the duration scale applied.
    text: String,
    seed: u64,
    variants: Vec<(String, Queue, Window)>,
}

/// Runs every model in `dir` (its `*.json` files, in name order).
pub fn run_suite(dir: &Path, options: &Options) -> Result<Validation, ValidateError> {
    if options.replications < 2 {
        return Err(ValidateError::Replications(options.replications));
    }
    if !(options.duration_scale.is_finite() && options.duration_scale > 0.0) {
        return Err(ValidateError::Scale(options.duration_scale));
    }
    let cases = model_files(dir)?
        .into_iter()
        .map(|path| load_case(path, options.duration_scale))
        .collect::<Result<Vec<_>, _>>()?;

    // One job per (case, variant, replication), run in parallel and collected
    // in order: the result does not depend on the thread count.
    let mut jobs = Vec::new();
    for (c, case) in cases.iter().enumerate() {
        for r in 0..options.replications {
            let loaded = load_model(&case.text, &[], Some(case.seed.wrapping_add(u64::from(r))))
                .map_err(|e| model_error(&case.path, e))?;
            jobs.extend(
                loaded
                    .variants
                    .into_iter()
                    .enumerate()
                    .map(|(v, variant)| (c, v, variant)),
            );
        }
    }
    let estimates: Vec<Vec<f64>> = jobs
        .par_iter()
        .map(|(c, v, variant)| {
            let case = &cases[*c];
            let (_, queue, window) = &case.variants[*v];
            let report = run_variant(variant);
            if let Some(why) = report.stopped_by_limit {
                return Err(ValidateError::Stopped {
                    path: case.path.clone(),
                    variant: variant.name.clone(),
                    seed: variant.model.seed,
                    why,
                });
            }
            Ok(queue
                .expected()
                .iter()
                .map(|(quantity, _)| match quantity {
                    Quantity::ClassTimeInSystem(k) => {
                        measure::class_time_in_system(&report, *window, queue.classes[*k].0)
                    }
                    _ => measure::estimate(*quantity, &report, *window),
                })
                .collect())
        })
        .collect::<Result<_, _>>()?;

    let (rows, row_confidence) = rows_of(&cases, &jobs, &estimates);
    Ok(Validation {
        rows,
        replications: options.replications,
        row_confidence,
    })
}

/// One row per (case, variant, quantity) from the runs' estimates, each
/// checked at the Bonferroni confidence for this many rows (also returned).
fn rows_of(
    cases: &[Case],
    jobs: &[(usize, usize, Variant)],
    estimates: &[Vec<f64>],
) -> (Vec<Row>, f64) {
    let rows_total: usize = cases
        .iter()
        .flat_map(|c| &c.variants)
        .map(|(_, q, _)| q.expected().len())
        .sum();
    let row_confidence = 1.0 - (1.0 - FAMILY_CONFIDENCE) / rows_total as f64;
    let mut rows = Vec::with_capacity(rows_total);
    for (c, case) in cases.iter().enumerate() {
        for (v, (variant, queue, _)) in case.variants.iter().enumerate() {
            let runs: Vec<&Vec<f64>> = jobs
                .iter()
                .zip(estimates)
                .filter(|((jc, jv, _), _)| *jc == c && *jv == v)
                .map(|(_, e)| e)
                .collect();
            for (k, (quantity, analytic)) in queue.expected().into_iter().enumerate() {
                let xs: Vec<f64> = runs.iter().map(|e| e[k]).collect();
                let check = stats::t_interval(&xs, row_confidence);
                rows.push(Row {
                    model: case.stem.clone(),
                    variant: variant.clone(),
                    queue: queue.notation(),
                    utilisation: queue.utilisation(),
                    quantity,
                    analytic,
                    simulated: stats::mean(&xs),
                    ci95: stats::t_interval(&xs, 0.95),
                    check,
                    pass: check.contains(analytic),
                });
            }
        }
    }
    (rows, row_confidence)
}

/// The `*.json` files of `dir`, in name order (the table's order).
fn model_files(dir: &Path) -> Result<Vec<PathBuf>, ValidateError> {
    let io = |source| ValidateError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.extension().is_some_and(|e| e == "json") {
            files.push(path);
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(ValidateError::NoModels(dir.to_path_buf()));
    }
    Ok(files)
}

fn model_error(path: &Path, problems: ModelError) -> ValidateError {
    ValidateError::Model {
        path: path.to_path_buf(),
        problems,
    }
}

/// Reads a model file, scales its arrival windows, and checks that every
/// variant is a covered queue long enough to measure.
fn load_case(path: PathBuf, duration_scale: f64) -> Result<Case, ValidateError> {
    let text = std::fs::read_to_string(&path).map_err(|source| ValidateError::Io {
        path: path.clone(),
        source,
    })?;
    let mut doc = parse_json(&text).map_err(|e| model_error(&path, e))?;
    if duration_scale != 1.0 {
        let workloads = doc.get_mut("workloads").and_then(|w| w.as_array_mut());
        for workload in workloads.into_iter().flatten() {
            if let Some(d) = workload.get_mut("duration_s") {
                if let Some(seconds) = d.as_f64() {
                    *d = serde_json::json!(seconds * duration_scale);
                }
            }
        }
    }
    let text = doc.to_string();
    let loaded =
        load_model_in(&text, path.parent(), &[], None).map_err(|e| model_error(&path, e))?;
    let mut variants = Vec::new();
    for variant in &loaded.variants {
        let queue =
            Queue::from_model(&variant.model).map_err(|why| ValidateError::Unsupported {
                path: path.clone(),
                variant: variant.name.clone(),
                why,
            })?;
        if !variant.changes.is_empty() {
            return Err(ValidateError::Unsupported {
                path,
                variant: variant.name.clone(),
                why: "a timeline changes the queue mid-run".into(),
            });
        }
        let Some(window) = Window::of(&queue) else {
            return Err(ValidateError::TooShort {
                path,
                variant: variant.name.clone(),
                arrivals_s: queue.arrivals_until / 1000.0,
                warm_up_s: queue.warm_up() / 1000.0,
            });
        };
        variants.push((variant.name.clone(), queue, window));
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(Case {
        stem,
        text,
        seed: loaded.seed,
        variants,
        path,
    })
}

impl Validation {
    /// Whether every row passed.
    pub fn all_pass(&self) -> bool {
        self.rows.iter().all(|r| r.pass)
    }

    /// The table as printed: one line per row, then how to read it.
    pub fn table(&self) -> String {
        let header = [
            "quantity",
            "analytic",
            "simulated",
            "95% CI",
            "check interval",
            "pass",
        ];
        let lines: Vec<[String; 6]> = self
            .rows
            .iter()
            .map(|r| {
                [
                    r.label(),
                    format!("{:.4}", r.analytic),
                    format!("{:.4}", r.simulated),
                    format!("[{:.4}, {:.4}]", r.ci95.low, r.ci95.high),
                    format!("[{:.4}, {:.4}]", r.check.low, r.check.high),
                    if r.pass { "yes" } else { "NO" }.to_string(),
                ]
            })
            .collect();
        let widths: Vec<usize> = (0..header.len())
            .map(|c| {
                lines
                    .iter()
                    .map(|l| l[c].chars().count())
                    .chain([header[c].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let render = |cells: &[String]| {
            let padded: Vec<String> = cells
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(c, (cell, &w))| match c {
                    0 => format!("{cell:<w$}"),
                    _ => format!("{cell:>w$}"),
                })
                .collect();
            padded.join("  ").trim_end().to_string() + "\n"
        };
        let mut out = render(&header.map(String::from));
        out.push_str(&"-".repeat(widths.iter().sum::<usize>() + 2 * (widths.len() - 1)));
        out.push('\n');
        for line in &lines {
            out.push_str(&render(line));
        }
        let passed = self.rows.iter().filter(|r| r.pass).count();
        out.push_str(&format!(
            "\n{passed}/{} rows pass. Simulated: mean of {} replications. Pass: the analytic \
             value lies in the row's {:.4}% Student-t interval (Bonferroni over the rows: {}% \
             that a correct simulator passes them all).\n",
            self.rows.len(),
            self.replications,
            100.0 * self.row_confidence,
            100.0 * FAMILY_CONFIDENCE
        ));
        out
    }

    /// `validation.csv`: one line per row; numbers with six decimals, so that
    /// the bytes do not depend on the last bits of a platform's `libm`.
    pub fn csv(&self) -> Result<String, ValidateError> {
        let mut out = csv::Writer::from_writer(Vec::new());
        out.write_record([
            "model",
            "variant",
            "queue",
            "utilisation",
            "quantity",
            "analytic",
            "simulated",
            "ci95_low",
            "ci95_high",
            "check_low",
            "check_high",
            "replications",
            "pass",
        ])?;
        for r in &self.rows {
            let num = |x: f64| format!("{x:.6}");
            out.write_record([
                r.model.clone(),
                r.variant.clone(),
                r.queue.clone(),
                num(r.utilisation),
                r.quantity.key(),
                num(r.analytic),
                num(r.simulated),
                num(r.ci95.low),
                num(r.ci95.high),
                num(r.check.low),
                num(r.check.high),
                self.replications.to_string(),
                r.pass.to_string(),
            ])?;
        }
        let bytes = out
            .into_inner()
            .map_err(|e| csv::Error::from(e.into_error()))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}
