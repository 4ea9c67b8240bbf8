//! Sweeps: one model at many points of its parameter space, each point
//! replicated, run in parallel, with results that do not depend on the thread
//! count or the order runs finish in (collected by index, written on one
//! thread).
#![warn(missing_docs)]

pub mod design;
pub mod resume;
pub mod search;
pub mod spec;
mod table;

pub use design::Point;
pub use spec::{ModelSource, SweepSpec};
pub use table::{aggregate_csv, results_csv};

use rayon::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use stormsim_engine::StreamKey;
use stormsim_model::{apply_overrides, load_model, parse_json, ModelError, Problem};
use stormsim_sim::{run_variant, RunReport, VariantReport};

/// A sweep file, loaded and checked.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The spec.
    pub spec: SweepSpec,
    /// The model file's path.
    pub model_path: PathBuf,
    /// The model file's text.
    pub model_text: String,
    /// The master seed.
    pub seed: u64,
    /// Every point.
    pub points: Vec<Point>,
}

/// A problem loading a sweep.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// The sweep or its model is malformed: every problem, with its path.
    #[error("{0}")]
    Invalid(ModelError),
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
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
    /// The summary header (the same for every run of a sweep).
    pub header: Vec<String>,
    /// The summary row.
    pub row: Vec<String>,
}

impl RunResult {
    /// Events the run simulated (from its `events` column).
    pub fn events(&self) -> u64 {
        self.header
            .iter()
            .position(|h| h == "events")
            .and_then(|i| self.row[i].parse().ok())
            .unwrap_or(0)
    }
}

impl Sweep {
    /// Loads a sweep file and checks it, its model, and every point's model
    /// (so a bad value fails before any run).
    pub fn load(path: &Path) -> Result<Sweep, SweepError> {
        let text = std::fs::read_to_string(path).map_err(|source| SweepError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let doc = parse_json(&text).map_err(SweepError::Invalid)?;
        let spec: SweepSpec = parse_sweep_spec(&doc)?;
        let (model_path, model_text) = match &spec.model {
            ModelSource::File(file) => {
                let model_path = path.parent().unwrap_or(Path::new(".")).join(file);
                let text =
                    std::fs::read_to_string(&model_path).map_err(|source| SweepError::Io {
                        path: model_path.clone(),
                        source,
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
        let base = load_model(&model_text, &[], None).map_err(|mut e| {
            if let ModelSource::Inline(_) = spec.model {
                e.problems = e.problems.into_iter().map(|p| p.within("model")).collect();
            }
            SweepError::Invalid(e)
        })?;
        let seed = spec.seed.unwrap_or(base.seed);
        if spec.replications == 0 {
            return Err(invalid(vec![Problem::new(
                "replications",
                "expected at least 1",
            )]));
        }
        let points = design::points(&spec, seed).map_err(invalid)?;
        let sweep = Sweep {
            spec,
            model_path,
            model_text,
            seed,
            points,
        };
        let mut problems = Vec::new();
        for point in &sweep.points {
            if let Err(e) = sweep.model_at(point, seed) {
                problems.extend(
                    e.problems
                        .into_iter()
                        .map(|p| p.within(&format!("point {}", point.index))),
                );
                break;
            }
        }
        if problems.is_empty() {
            Ok(sweep)
        } else {
            Err(invalid(problems))
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
        let mut doc = parse_json(&self.model_text)?;
        let mut variant = self.spec.variant.clone();
        let mut sets: Vec<(String, Value)> = self
            .spec
            .set
            .iter()
            .map(|(p, v)| (p.clone(), v.clone()))
            .collect();
        for (_, path, value) in &point.values {
            match path {
                Some(p) => sets.push((p.clone(), value.clone())),
                None => variant = value.as_str().map(str::to_string),
            }
        }
        // Fold the chosen variant into the base and drop the variants, so the
        // sweep's overrides apply on top of it.
        let variants = doc
            .as_object_mut()
            .and_then(|o| o.remove("variants"))
            .unwrap_or(Value::Array(Vec::new()));
        let chosen = match &variant {
            None => variants.as_array().and_then(|v| v.first()).cloned(),
            Some(name) => variants
                .as_array()
                .and_then(|v| {
                    v.iter()
                        .find(|x| x.get("name").and_then(Value::as_str) == Some(name))
                })
                .cloned(),
        };
        if let (Some(name), None) = (&variant, &chosen) {
            return Err(ModelError {
                problems: vec![Problem::new(
                    "variant",
                    format!("the model has no variant {name:?}"),
                )],
            });
        }
        if let Some(set) = chosen
            .as_ref()
            .and_then(|v| v.get("set"))
            .and_then(Value::as_object)
        {
            let problems =
                apply_overrides(&mut doc, set.iter().map(|(p, v)| (p.as_str(), v)), &|p| {
                    format!(
                        "variants[{:?}].set[{p:?}]",
                        variant.as_deref().unwrap_or("first")
                    )
                });
            if !problems.is_empty() {
                return Err(ModelError { problems });
            }
        }
        let model = load_model(&doc.to_string(), &sets, Some(seed))?;
        let mut v = model
            .variants
            .into_iter()
            .next()
            .expect("a model has a variant");
        if let Some(chosen) = chosen {
            v.name = chosen
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
        }
        Ok(v)
    }

    /// Runs every (point, replication) on the current rayon pool and returns
    /// the results in index order, whatever order they finish in. `progress`
    /// is called after each run with the number done.
    pub fn run(&self, progress: &(dyn Fn(usize) + Sync)) -> Vec<RunResult> {
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

    /// Run number `i` (point-major: `i = point × replications + replication`).
    pub fn run_one(&self, i: usize) -> RunResult {
        let reps = self.spec.replications as usize;
        let (point, replication) = (i / reps, (i % reps) as u32);
        let seed = self.seed_of(point, replication);
        let variant = self
            .model_at(&self.points[point], seed)
            .expect("every point was checked when the sweep was loaded");
        let (header, row) = summary_of(seed, run_variant(&variant));
        RunResult {
            point,
            replication,
            seed,
            header,
            row,
        }
    }
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
    #[test]
    fn sweep_objects_written_as_arrays_are_rejected() {
        let refused =
            "invalid type: sequence, expected an object (fields by name, not by position)";
        let sweep = |axes: Value, design: Value| json!({"name": "s", "model": "m.json", "axes": axes, "design": design});
        assert!(problems(sweep(
            json!([{"path": "a", "linear": {"from": 1, "to": 2, "steps": 2}}]),
            json!({"kind": "random", "points": 3})
        ))
        .is_empty());
        assert_eq!(
            problems(sweep(
                json!([{"path": "a", "linear": [1, 2, 2]}]),
                json!({"kind": "grid"})
            )),
            [format!("sweep file: axes[0].linear: {refused}")]
        );
        assert_eq!(
            problems(sweep(json!([["a"]]), json!({"kind": "grid"}))),
            [format!("sweep file: axes[0]: {refused}")]
        );
        assert_eq!(
            problems(sweep(json!([]), json!(["random", 3]))),
            [format!("sweep file: design: {refused}")]
        );
        assert_eq!(
            problems(json!(["s", "", "m.json"])),
            [format!("sweep file: {refused}")]
        );
        assert_eq!(
            problems(json!({"model": "m.json"})),
            ["sweep file: missing field `name`"]
        );
    }
}
