//! The sweep file format: a base model and axes over parameter paths.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A sweep: one model run at many points of its parameter space, each point
/// `replications` times.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SweepSpec {
    /// The JSON Schema the file follows, for editors that complete and check
    /// it as it is typed: the path from the file to `docs/sweep.schema.json`
    /// (`../docs/sweep.schema.json` in `models/`), or its URL. Sweeps and
    /// searches ignore it.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Name; the default output folder is `outputs/<name>/`.
    pub name: String,
    /// What the sweep explores.
    #[serde(default)]
    pub description: String,
    /// The base model: a file name, relative to the sweep file, or the model
    /// itself, inline.
    pub model: ModelSource,
    /// The model's variant to run at every point (default: its first). A
    /// `variants` axis overrides it.
    #[serde(default)]
    pub variant: Option<String>,
    /// Runs per point.
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub replications: u32,
    /// Master seed (default: the model's). Replication `r` runs with seed
    /// `seed + r` at every point (common random numbers: curves are smooth and
    /// comparisons paired) unless `independent_seeds`.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Give every (point, replication) its own seed instead.
    #[serde(default)]
    pub independent_seeds: bool,
    /// Overrides applied at every point, before the axes (`PATH: VALUE`).
    #[serde(default)]
    pub set: Map<String, Value>,
    /// The axes (for `stormsim sweep`).
    #[serde(default)]
    pub axes: Vec<AxisSpec>,
    /// A tipping-point search (for `stormsim search`): bisect one parameter for
    /// where a metric crosses a threshold.
    #[serde(default)]
    pub search: Option<SearchSpec>,
    /// Replications that stop when the answer is known (for `stormsim
    /// sweep`): every point runs `replications`, then batches while the
    /// interval of its `metric` straddles `threshold`, up to
    /// `max_replications`. A search and a margin have their own `stop`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<SweepStopSpec>,
    /// The storm margin (for `stormsim margin`): at each load, the trigger
    /// size where the probability of a storm crosses each level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin: Option<MarginSpec>,
    /// How points are chosen: the full grid (default), or a sample.
    #[serde(default)]
    pub design: DesignSpec,
    /// What `sweep.svg` draws, where the default is not what the sweep is
    /// about (a latency, wasted work) or its axis spans decades.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart: Option<ChartSpec>,
}

/// The chart of a sweep (`sweep.svg`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChartSpec {
    /// The metric drawn, its mean over replications with its 95% interval:
    /// `metastable_share`, or a numeric column of `summary.csv`
    /// (`success_rate`, `ok_latency_p99_ms`, `S.wasted` for a service `S`),
    /// drawn from `aggregate.csv`'s `C.mean`, `C.ci95_low` and `C.ci95_high`.
    /// Default: `metastable_share` where the model is judged for recovery,
    /// else `success_rate`.
    #[serde(default)]
    pub metric: Option<String>,
    /// A log₁₀ x axis, for an axis swept over decades.
    #[serde(default)]
    pub log_x: bool,
    /// A log₁₀ y axis, for a metric that spans decades (latencies, counts).
    #[serde(default)]
    pub log_y: bool,
}

/// Where a sweep's base model comes from.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ModelSource {
    /// A model file, relative to the sweep file.
    File(String),
    /// The model, inline (a JSON object, as in a model file).
    Inline(Map<String, Value>),
}

fn one() -> u32 {
    1
}

/// One axis: a parameter path and its values, or a set of the model's variants.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AxisSpec {
    /// The parameter path (as in variants); absent for a `variants` axis.
    #[serde(default)]
    pub path: Option<String>,
    /// Column name in the results (default: the path, or `variant`).
    #[serde(default)]
    pub name: Option<String>,
    /// Explicit values (any JSON).
    #[serde(default)]
    pub values: Option<Vec<Value>>,
    /// `steps` values evenly spaced from `from` to `to`.
    #[serde(default)]
    pub linear: Option<RangeSpec>,
    /// `steps` values evenly spaced in log scale from `from` to `to` (> 0).
    #[serde(default)]
    pub log: Option<RangeSpec>,
    /// For `random` and `latin_hypercube` designs: the interval sampled.
    #[serde(default)]
    pub range: Option<SampleRangeSpec>,
    /// A categorical axis over the model's variants (one such axis per
    /// sweep: a run has one variant).
    #[serde(default)]
    pub variants: Option<Vec<String>>,
    /// Axes with the same `zip` group move together (equal lengths) instead of
    /// forming a product.
    #[serde(default)]
    pub zip: Option<String>,
    /// Round sampled or spaced values to whole numbers (worker counts, queue
    /// sizes).
    #[serde(default)]
    pub integer: bool,
}

/// Evenly spaced values.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RangeSpec {
    /// First value.
    pub from: f64,
    /// Last value.
    pub to: f64,
    /// Number of values (≥ 2, or 1 for `from` alone).
    #[schemars(range(min = 1))]
    pub steps: u32,
}

/// An interval to sample.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SampleRangeSpec {
    /// Lower bound.
    pub from: f64,
    /// Upper bound.
    pub to: f64,
    /// Sample uniformly in the log (`log`, bounds > 0) or linearly (`linear`).
    #[serde(default)]
    pub scale: Scale,
}

/// Linear or logarithmic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    /// Uniform.
    #[default]
    Linear,
    /// Log-uniform.
    Log,
}

/// How points are chosen.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum DesignSpec {
    /// Every combination of the axes' values (zipped groups move together).
    #[default]
    Grid,
    /// `points` independent uniform samples of the `range` axes.
    Random {
        /// How many points.
        points: u32,
    },
    /// A Latin hypercube of `points` samples: each axis's range is cut into
    /// `points` strata and each stratum is used exactly once.
    LatinHypercube {
        /// How many points.
        points: u32,
    },
}

/// A sweep's stopping rule: the decision each point's replications serve,
/// and the rule's batches and cap ([`crate::stopping`]).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SweepStopSpec {
    /// The quantity decided: `metastable` (the share of runs that ended
    /// metastable), or a numeric `summary.csv` column (its mean).
    #[serde(default = "default_stop_metric")]
    pub metric: String,
    /// The level whose side each point's quantity must be on (default 0.5).
    #[serde(default = "default_stop_threshold")]
    pub threshold: f64,
    /// The most replications a point may run.
    pub max_replications: u32,
    /// Replications added at each look (default: `replications`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<u32>,
    /// Stop too once the interval's half-width is at most this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub half_width: Option<f64>,
}

fn default_stop_metric() -> String {
    "metastable".into()
}

fn default_stop_threshold() -> f64 {
    0.5
}

impl SweepStopSpec {
    /// The rule's batches and cap.
    pub fn rule(&self) -> crate::stopping::StopSpec {
        crate::stopping::StopSpec {
            max_replications: self.max_replications,
            batch: self.batch,
            half_width: self.half_width,
        }
    }
}

/// The storm margin: for each variant and load level, the smallest trigger
/// for which the share of metastable runs crosses each level.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MarginSpec {
    /// The trigger's size and the range searched.
    pub trigger: TriggerSize,
    /// Load levels as factors on every workload's `arrival.rate_per_s`
    /// (1: the model's load). Give this or `load`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_scale: Option<Vec<f64>>,
    /// Load levels as values of one path (a workload's rate, a shape's
    /// peak). Give this or `load_scale`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadAxis>,
    /// The probabilities of a storm whose crossings are sought (default
    /// `[0.5]`; `[0.1, 0.5, 0.9]` adds the band).
    #[serde(default = "default_levels")]
    pub levels: Vec<f64>,
    /// The variants compared, on one chart (default: the sweep's
    /// `variant`, else the model's first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<String>,
    /// Replications that stop when the side of each level is known
    /// (recommended: a share of 3 replications is never sure of 0.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<crate::stopping::StopSpec>,
}

fn default_levels() -> Vec<f64> {
    vec![0.5]
}

/// The size of the model's trigger that a margin searches.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TriggerSize {
    /// The parameter path of the trigger's size (a slowdown's work, a
    /// spike's rate). Absent: the trigger's duration, seconds from its
    /// `trigger_start` to its `trigger_end` (which moves).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The smallest size searched.
    pub from: f64,
    /// The largest.
    pub to: f64,
    /// Stop bisecting when the bracket is this narrow (default: a 32nd of
    /// the range).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<f64>,
    /// Whole numbers only.
    #[serde(default)]
    pub integer: bool,
}

/// Load levels as one path's values.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoadAxis {
    /// The path.
    pub path: String,
    /// Its values, in order.
    pub values: Vec<f64>,
}

/// Bisection for the value of one parameter where a metric's replication mean
/// crosses a threshold, e.g. where the share of metastable runs crosses 50%.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchSpec {
    /// The parameter path searched.
    pub path: String,
    /// One end of the interval.
    pub from: f64,
    /// The other end; the metric must be on opposite sides of the threshold at
    /// the two ends.
    pub to: f64,
    /// A `summary.csv` column (its mean over replications), or `metastable`
    /// (the share of replications that ended metastable).
    pub metric: String,
    /// The level whose crossing is sought.
    pub threshold: f64,
    /// Stop when the bracket is this narrow.
    pub tolerance: f64,
    /// Probe whole numbers only (worker counts, queue sizes).
    #[serde(default)]
    pub integer: bool,
    /// Replications that stop when the answer is known: each probe runs
    /// `replications`, then adds batches until its interval is clear of
    /// `threshold`, up to `max_replications` (absent: `replications`
    /// exactly).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<crate::stopping::StopSpec>,
}
