//! The probability of a storm: plain Monte Carlo with Wilson's interval,
//! and, for storms too rare for it, multilevel splitting.
//!
//! A storm is a run judged `metastable` on its own time series (the
//! verdict a run reports before any comparison with its twin without the
//! trigger: a branched run has no such twin, so both estimators judge the
//! same way).
//!
//! # Splitting
//!
//! Fixed-effort multilevel splitting with adaptive levels (Garvels 2000;
//! Cérou and Guyader 2007). The score is the model's focus service's
//! backlog (its requests waiting or served) at each bucket boundary from
//! the trigger's end: a run that recovers drains it, a run stuck in a storm
//! keeps it full. Stage 0 runs `runs_per_stage` runs from time zero, each
//! with its own seed, and records each one's highest backlog after the
//! trigger's end. The next level is the `(1 − keep)` quantile of those
//! highs (at least one request above the last level, at most the service's
//! capacity, queue and workers); the share of runs that reached it is the
//! stage's conditional probability, and the state of each at its first
//! boundary at or above the level is an entrance state. The next stage runs
//! `runs_per_stage` copies of the entrance states (in turn), each with its
//! future re-keyed ([`stormsim_sim::trajectory`]), and so on until the level
//! is the service's capacity. The last stage runs its copies to the end and
//! counts the storms. The estimate is the product of the stages' shares.
//!
//! Its interval comes from `repetitions` independent repetitions of the
//! whole procedure (other seeds, other salts): their mean, and Student's t
//! over them. The validation against plain Monte Carlo, and what it saves,
//! are measured in `crates/sweep/tests/probability.rs` and docs/sweeps.md.

use crate::stopping::{mean_interval, wilson, ALPHA};
use stormsim_engine::{SimDuration, SimTime, StreamKey};
use stormsim_model::{Problem, TimelineRole, Variant};
use stormsim_sim::analysis::Outcome;
use stormsim_sim::trajectory::Trajectory;

/// How a splitting estimate is made.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SplittingSpec {
    /// Runs per stage.
    pub runs_per_stage: u32,
    /// The share of a stage's runs that reach its level (0.2: the top
    /// fifth go on).
    pub keep: f64,
    /// Independent repetitions of the whole procedure, for the interval.
    pub repetitions: u32,
    /// The most stages before giving up (the level climbs at least one
    /// request per stage).
    pub max_stages: u32,
    /// How long after the trigger's end the score is read.
    pub window: SimDuration,
}

impl Default for SplittingSpec {
    fn default() -> Self {
        SplittingSpec {
            runs_per_stage: 100,
            keep: 0.2,
            repetitions: 4,
            max_stages: 30,
            window: SimDuration::from_ms(30_000.0),
        }
    }
}

/// One stage of a splitting repetition.
#[derive(Clone, Debug, PartialEq)]
pub struct Stage {
    /// The stage's level of backlog over the typical one (`None`: the last
    /// stage, which counts storms).
    pub level: Option<i64>,
    /// The share of the stage's runs that reached it (or stormed).
    pub share: f64,
}

/// An estimate of P(storm).
#[derive(Clone, Debug, PartialEq)]
pub struct StormProbability {
    /// `monte carlo` or `splitting`.
    pub method: &'static str,
    /// The estimate.
    pub estimate: f64,
    /// Its 95% interval.
    pub ci: (f64, f64),
    /// Runs simulated in all (a run copied from a state counts as one).
    pub runs: u64,
    /// Plain Monte Carlo: the storms counted.
    pub storms: Option<u64>,
    /// Splitting: each repetition's estimate and stages.
    pub repetitions: Vec<(f64, Vec<Stage>)>,
}

/// Whether a finished run stormed.
fn stormed(report: &stormsim_sim::VariantReport) -> bool {
    report
        .verdict
        .as_ref()
        .is_some_and(|v| v.outcome == Outcome::Metastable)
}

/// Plain Monte Carlo: `runs` runs of the variant `make(seed)` builds, seeds
/// `seed0`, `seed0 + 1`, ..., in parallel; the share that stormed and its
/// Wilson interval.
pub fn monte_carlo(
    make: &(dyn Fn(u64) -> Result<Variant, Vec<Problem>> + Sync),
    seed0: u64,
    runs: u32,
) -> Result<StormProbability, Vec<Problem>> {
    use rayon::prelude::*;
    let storms: Result<Vec<bool>, Vec<Problem>> = (0..runs)
        .into_par_iter()
        .map(|r| {
            let variant = make(seed0 + u64::from(r))?;
            Ok(stormed(&Trajectory::start(&variant).finish()))
        })
        .collect();
    let storms = storms?.iter().filter(|s| **s).count();
    let z = stormsim_stats::normal_quantile(1.0 - ALPHA / 2.0);
    Ok(StormProbability {
        method: "monte carlo",
        estimate: storms as f64 / f64::from(runs.max(1)),
        ci: wilson(storms, runs as usize, z),
        runs: u64::from(runs),
        storms: Some(storms as u64),
        repetitions: Vec::new(),
    })
}

/// Where the score is read: every bucket boundary from the trigger's start
/// to `window` after its end (or the horizon).
fn score_instants(variant: &Variant, window: SimDuration) -> Result<Vec<SimTime>, Vec<Problem>> {
    let role_at = |role| {
        variant
            .changes
            .iter()
            .find(|c| c.role == Some(role))
            .map(|c| c.at)
    };
    let (Some(start), Some(end)) = (
        role_at(TimelineRole::TriggerStart),
        role_at(TimelineRole::TriggerEnd),
    ) else {
        return Err(vec![Problem::new(
            "timeline",
            "splitting needs a trigger with a `trigger_start` and a `trigger_end`: its score is the backlog from one to after the other",
        )]);
    };
    let horizon = variant.model.horizon.ok_or_else(|| {
        vec![Problem::new(
            "horizon_s",
            "splitting needs a horizon: its runs are judged at their end",
        )]
    })?;
    let bucket = variant.model.bucket.as_nanos().max(1);
    let first = start.as_nanos().div_ceil(bucket);
    let last = ((SimTime::ZERO + horizon).as_nanos() / bucket)
        .min((end + window).as_nanos().div_ceil(bucket));
    Ok((first..last.max(first))
        .map(|b| SimTime(b * bucket))
        .collect())
}

/// The focus service's capacity: its queue and its workers over its
/// instances.
fn capacity(variant: &Variant) -> i64 {
    let s = &variant.model.services[variant.model.focus];
    let per_instance = (s.queue_capacity as u64).saturating_add(u64::from(s.workers));
    i64::try_from(per_instance.saturating_mul(u64::from(s.instances.max(1)))).unwrap_or(i64::MAX)
}

/// A run's backlog at each score instant after where it is: `(index of the
/// instant, backlog)`, in order.
fn climb(mut t: Trajectory<'_>, instants: &[SimTime]) -> Vec<(usize, i64)> {
    let mut path = Vec::new();
    // (A run paused at an instant has handled what came before it: its
    // clock is behind that instant, which is read again.)
    let from = t.now();
    for (i, &at) in instants.iter().enumerate().filter(|(_, &at)| at > from) {
        if !t.advance_to(at) {
            break;
        }
        path.push((i, i64::try_from(t.focus_backlog()).unwrap_or(i64::MAX)));
    }
    path
}

/// One splitting repetition, its randomness named by `stream`. The score
/// of a run at an instant is its backlog over the typical one there (the
/// median of stage 0's runs): a run ahead of the others, at any time from
/// the trigger's start, is nearer a storm.
fn split_once<'v>(
    variants: &'v [Variant],
    spec: &SplittingSpec,
    instants: &[SimTime],
    stream: StreamKey,
    runs: &mut u64,
) -> (f64, Vec<Stage>) {
    use rayon::prelude::*;
    let n = spec.runs_per_stage as usize;
    // Stage 0's starting states: one run per seed at time zero.
    let mut starts: Vec<Trajectory<'v>> = variants.iter().map(Trajectory::start).collect();
    let mut stages = Vec::new();
    let mut estimate = 1.0;
    let mut level = i64::MIN;
    let mut typical: Vec<i64> = Vec::new();
    let mut top = i64::MAX;
    for stage in 0..spec.max_stages {
        let salt_of = |i: usize| stream.index(u64::from(stage)).index(i as u64).0;
        // This stage's runs: the starting states themselves at stage 0,
        // else copies of the entrance states in turn, each re-keyed.
        let population: Vec<Trajectory<'v>> = if stage == 0 {
            std::mem::take(&mut starts)
        } else {
            (0..n)
                .map(|i| starts[i % starts.len()].branch(salt_of(i)))
                .collect()
        };
        *runs += population.len() as u64;
        // Each run climbs from a copy, so that the run itself can be taken
        // to its entrance instant afterwards.
        let copies: Vec<Trajectory<'v>> = population.iter().map(Trajectory::branch_exact).collect();
        let paths: Vec<Vec<(usize, i64)>> =
            copies.into_par_iter().map(|t| climb(t, instants)).collect();
        if stage == 0 {
            typical = (0..instants.len())
                .map(|i| {
                    let mut at: Vec<i64> = paths
                        .iter()
                        .filter_map(|p| p.iter().find(|(j, _)| *j == i).map(|(_, b)| *b))
                        .collect();
                    at.sort_unstable();
                    at.get(at.len() / 2).copied().unwrap_or(0)
                })
                .collect();
            // The top: the queue full where it is typically emptiest.
            let cap = capacity(&variants[0]);
            top = typical.iter().map(|t| cap - t).max().unwrap_or(cap);
        }
        let score = |path: &[(usize, i64)]| -> Vec<(usize, i64)> {
            path.iter().map(|(i, b)| (*i, b - typical[*i])).collect()
        };
        let scored: Vec<Vec<(usize, i64)>> = paths.iter().map(|p| score(p)).collect();
        let mut highs: Vec<i64> = scored
            .iter()
            .map(|p| p.iter().map(|(_, s)| *s).max().unwrap_or(i64::MIN))
            .collect();
        highs.sort_unstable();
        let quantile = highs[((1.0 - spec.keep) * highs.len() as f64).floor() as usize];
        let next = quantile.max(level.saturating_add(1)).min(top);
        if next >= top || stage + 1 == spec.max_stages {
            // The last stage: run this population to the end, count storms.
            let storms = population
                .into_par_iter()
                .map(|t| stormed(&t.finish()))
                .filter(|s| *s)
                .count();
            let share = storms as f64 / n.max(1) as f64;
            stages.push(Stage { level: None, share });
            estimate *= share;
            return (estimate, stages);
        }
        let reached: Vec<(Trajectory<'v>, SimTime)> = population
            .into_iter()
            .zip(&scored)
            .filter_map(|(t, p)| {
                p.iter()
                    .find(|(_, s)| *s >= next)
                    .map(|(i, _)| (t, instants[*i]))
            })
            .collect();
        let share = reached.len() as f64 / n.max(1) as f64;
        stages.push(Stage {
            level: Some(next),
            share,
        });
        estimate *= share;
        if reached.is_empty() {
            return (0.0, stages);
        }
        starts = reached
            .into_par_iter()
            .map(|(mut t, at)| {
                t.advance_to(at);
                t
            })
            .collect();
        level = next;
    }
    (estimate, stages)
}

/// Multilevel splitting (module docs): `spec.repetitions` independent
/// repetitions, each from its own seeds `seed0 + ...` and salts; their mean
/// and Student's t interval over them.
pub fn splitting(
    make: &(dyn Fn(u64) -> Result<Variant, Vec<Problem>> + Sync),
    seed0: u64,
    spec: &SplittingSpec,
) -> Result<StormProbability, Vec<Problem>> {
    let n = u64::from(spec.runs_per_stage);
    let mut repetitions = Vec::new();
    let mut runs = 0;
    for rep in 0..u64::from(spec.repetitions.max(1)) {
        let variants: Result<Vec<Variant>, Vec<Problem>> =
            (0..n).map(|i| make(seed0 + rep * n + i)).collect();
        let variants = variants?;
        let instants = score_instants(&variants[0], spec.window)?;
        let stream = StreamKey::root(seed0).label("splitting").index(rep);
        repetitions.push(split_once(&variants, spec, &instants, stream, &mut runs));
    }
    let estimates: Vec<f64> = repetitions.iter().map(|(e, _)| *e).collect();
    let (mean, ci) = mean_interval(&estimates, ALPHA);
    Ok(StormProbability {
        method: "splitting",
        estimate: mean,
        ci: ci.map_or((0.0, 1.0), |(lo, hi)| (lo.max(0.0), hi.min(1.0))),
        runs,
        storms: None,
        repetitions,
    })
}

/// How P(storm) is estimated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Method {
    /// Plain Monte Carlo with this many runs.
    MonteCarlo {
        /// Runs per variant.
        runs: u32,
    },
    /// Multilevel splitting.
    Splitting(SplittingSpec),
}

impl Method {
    /// Splitting with `runs_per_stage` and `repetitions` (the rest as
    /// [`SplittingSpec::default`]) when `splitting`, else Monte Carlo with
    /// `runs`: the command line's and the Python package's flags.
    pub fn from_flags(splitting: bool, runs: u32, runs_per_stage: u32, repetitions: u32) -> Method {
        if splitting {
            Method::Splitting(SplittingSpec {
                runs_per_stage,
                repetitions,
                ..SplittingSpec::default()
            })
        } else {
            Method::MonteCarlo { runs }
        }
    }
}

/// Each of `variants`' P(storm) (the model's first without any), in order,
/// for the model `text` (its files read from `dir`) with `sets`; run `r`
/// has seed `seed + r` (default: the model's seed). Every problem at once.
pub fn per_variant(
    text: &str,
    dir: Option<&std::path::Path>,
    sets: &[(String, serde_json::Value)],
    variants: &[String],
    method: Method,
    seed: Option<u64>,
) -> Result<Vec<(String, StormProbability)>, Vec<Problem>> {
    let base = stormsim_model::load_model_in(text, dir, sets, None).map_err(|e| e.problems)?;
    let names: Vec<String> = if variants.is_empty() {
        vec![base.variants[0].name.clone()]
    } else {
        variants.to_vec()
    };
    let unknown: Vec<Problem> = names
        .iter()
        .filter(|n| !base.variants.iter().any(|v| &v.name == *n))
        .map(|n| Problem::new("variant", format!("the model has no variant {n:?}")))
        .collect();
    if !unknown.is_empty() {
        return Err(unknown);
    }
    let seed0 = seed.unwrap_or(base.variants[0].model.seed);
    names
        .iter()
        .map(|name| {
            let make = |seed: u64| -> Result<Variant, Vec<Problem>> {
                let model = stormsim_model::load_model_in(text, dir, sets, Some(seed))
                    .map_err(|e| e.problems)?;
                Ok(model
                    .variants
                    .into_iter()
                    .find(|v| &v.name == name)
                    .expect("a variant named at every seed"))
            };
            let p = match method {
                Method::Splitting(spec) => splitting(&make, seed0, &spec)?,
                Method::MonteCarlo { runs } => monte_carlo(&make, seed0, runs)?,
            };
            Ok((name.clone(), p))
        })
        .collect()
}

/// The columns of `probability.csv`.
pub const PROBABILITY_COLUMNS: [&str; 8] = [
    "variant",
    "method",
    "p_storm",
    "ci95_low",
    "ci95_high",
    "runs",
    "storms",
    "repetition_estimates",
];

/// `probability.csv`: one row per variant.
pub fn probability_csv(rows: &[(String, StormProbability)]) -> Result<String, csv::Error> {
    let mut out = csv::Writer::from_writer(Vec::new());
    out.write_record(PROBABILITY_COLUMNS)?;
    for (variant, p) in rows {
        out.write_record([
            variant.clone(),
            p.method.to_string(),
            p.estimate.to_string(),
            p.ci.0.to_string(),
            p.ci.1.to_string(),
            p.runs.to_string(),
            p.storms.map_or(String::new(), |s| s.to_string()),
            p.repetitions
                .iter()
                .map(|(e, _)| e.to_string())
                .collect::<Vec<_>>()
                .join(";"),
        ])?;
    }
    let bytes = out.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8(bytes).expect("CSV of UTF-8 strings is UTF-8"))
}

/// The sentence for one variant: "baseline: P(storm) = 0.056, 95%
/// interval 0.047 to 0.067 (112 of 2000 runs stormed; Monte Carlo)".
pub fn sentence(variant: &str, p: &StormProbability) -> String {
    let how = match p.storms {
        Some(storms) => format!("{storms} of {} runs stormed; Monte Carlo", p.runs),
        None => format!(
            "multilevel splitting, {} repetitions, {} runs",
            p.repetitions.len(),
            p.runs
        ),
    };
    format!(
        "{variant}: P(storm) = {}, 95% interval {} to {} ({how})",
        probability(p.estimate),
        probability(p.ci.0),
        probability(p.ci.1)
    )
}

/// A probability as a person reads it: 0.055, 0.0021, 3.4e-5.
fn probability(p: f64) -> String {
    if p == 0.0 {
        "0".into()
    } else if p >= 0.01 {
        format!("{p:.3}")
    } else if p >= 0.001 {
        format!("{p:.4}")
    } else {
        format!("{p:.1e}")
    }
}
