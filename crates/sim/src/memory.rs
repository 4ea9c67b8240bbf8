//! What a run will hold in memory, estimated from the model before it runs,
//! so that a model whose state cannot fit is refused with the parameter to
//! blame, not aborted by the allocator minutes in (or at once, on a 100 GB
//! breaker window).
//!
//! Counted: the state a run allocates from the model's sizes, whatever its
//! traffic: per-instance service state, per caller instance the state of each
//! call edge (with a slot per callee instance: caller × callee instances),
//! breaker and throttle windows, cache key tables, hosts, closed-loop users,
//! and the time series each variant keeps until the run's end. Not counted:
//! what grows with traffic (requests in flight, bounded by
//! `limits.max_in_flight`; cache entries, a key per request at most; latency
//! samples), which the run limits bound instead.
//!
//! The sizes are those of this build's types (`size_of`); the time series row
//! is the measured cost of a row (see [`SERIES_ROW_BYTES`]). Variants run one
//! after another, each keeping its time series: the estimate is the largest
//! variant's run state plus every variant's series.

use crate::hosts::HostPeriods;
use crate::policy_state::{AdmissionState, EdgeState};
use crate::timeseries::CpuBucket;
use crate::world::{CpuState, InstanceState};
use crate::zombie::UserZombies;
use std::mem::size_of;
use stormsim_model::{
    Arrival, BreakerSpec, BudgetSpec, CallPolicy, LoadedModel, Model, SlidingWindowType, Step,
    ThrottleSpec, Variant, Workload,
};

/// The default ceiling on [`estimate`]: 4 GiB. A model over it is refused by
/// `check` and `run` unless the ceiling is raised (`--memory-limit-gb`).
pub const DEFAULT_MEMORY_LIMIT_BYTES: u64 = 4 << 30;

/// Bytes a time-series row costs while a run holds it: measured, 2.35 GB of
/// resident memory for the 10⁷ rows of a one-service model run to the
/// time-series limit (`shared/repro/series_memory`).
pub const SERIES_ROW_BYTES: u64 = 240;

/// One part of the estimate: what, where in the model, and how big.
#[derive(Clone, Debug, PartialEq)]
pub struct Contributor {
    /// The JSON path of the parameter that sizes it
    /// (`services[api].steps[1].breaker.sliding_window_size`).
    pub path: String,
    /// What it is, in words.
    pub what: String,
    /// Its bytes (saturating: an absurd size stays absurd, never wraps).
    pub bytes: u64,
}

/// The estimate of a model's memory.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryEstimate {
    /// Bytes in all.
    pub bytes: u64,
    /// The largest contributor (of the variant whose state is largest, or the
    /// time series), if anything was counted.
    pub biggest: Option<Contributor>,
}

/// A model whose estimate is over the ceiling.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{}", self.describe("raise it with --memory-limit-gb"))]
pub struct TooMuchMemory {
    /// The estimate.
    pub estimate: MemoryEstimate,
    /// The ceiling, bytes.
    pub limit: u64,
    /// The variant the largest part is in, when the model has several.
    pub variant: Option<String>,
}

impl TooMuchMemory {
    /// The message, with `remedy` (what the caller can do about the
    /// ceiling) in parentheses after it.
    pub fn describe(&self, remedy: &str) -> String {
        format!(
            "the run would need about {} of memory, over the limit of {} ({remedy}): the largest part is {} ({}){}",
            gib(self.estimate.bytes),
            gib(self.limit),
            self.estimate.biggest.as_ref().map_or("", |c| c.what.as_str()),
            self.estimate.biggest.as_ref().map_or(String::new(), |c| gib(c.bytes)),
            variant_note(&self.variant)
        )
    }

    /// The JSON path to blame: the largest contributor's.
    pub fn path(&self) -> &str {
        self.estimate
            .biggest
            .as_ref()
            .map_or("(top level)", |c| c.path.as_str())
    }
}

fn variant_note(variant: &Option<String>) -> String {
    variant
        .as_ref()
        .map_or(String::new(), |v| format!(", in variant {v:?}"))
}

/// Bytes in GiB, for a message.
fn gib(bytes: u64) -> String {
    let g = bytes as f64 / f64::from(1u32 << 30);
    if g >= 1000.0 {
        format!("{g:.3e} GiB")
    } else {
        format!("{g:.2} GiB")
    }
}

/// Refuses `loaded` if its [`estimate`] is over `limit` bytes. Library API:
/// `stormsim run` and `check` refuse a model through here (at the path of
/// [`TooMuchMemory::path`]), and so does the Python package.
pub fn check_memory(loaded: &LoadedModel, limit: u64) -> Result<MemoryEstimate, TooMuchMemory> {
    check_variants(&loaded.variants, limit)
}

/// [`check_memory`] for one variant run alone (a sweep's run).
pub fn check_variant_memory(
    variant: &Variant,
    limit: u64,
) -> Result<MemoryEstimate, TooMuchMemory> {
    check_variants(std::slice::from_ref(variant), limit)
}

fn check_variants(variants: &[Variant], limit: u64) -> Result<MemoryEstimate, TooMuchMemory> {
    let (estimate, variant) = estimate_with_variant(variants);
    if estimate.bytes > limit {
        let variant = variant.filter(|_| variants.len() > 1);
        return Err(TooMuchMemory {
            estimate,
            limit,
            variant,
        });
    }
    Ok(estimate)
}

/// The memory a run of every variant of `loaded` will hold (see the
/// [module docs](self)).
pub fn estimate(loaded: &LoadedModel) -> MemoryEstimate {
    estimate_with_variant(&loaded.variants).0
}

fn estimate_with_variant(variants: &[Variant]) -> (MemoryEstimate, Option<String>) {
    let mut series_total = 0u64;
    let mut biggest_series: Option<Contributor> = None;
    let mut largest_state: (u64, Option<Contributor>, Option<String>) = (0, None, None);
    for variant in variants {
        let series = series(&variant.model);
        series_total = series_total.saturating_add(series.bytes);
        if biggest_series
            .as_ref()
            .is_none_or(|b| series.bytes > b.bytes)
        {
            biggest_series = Some(series);
        }
        // The state a run holds is sized by its largest model: a timeline may
        // add instances or widen a window.
        for model in std::iter::once(&variant.model).chain(variant.changes.iter().map(|c| &c.model))
        {
            let parts = run_state(model);
            let bytes = parts.iter().fold(0u64, |a, c| a.saturating_add(c.bytes));
            if bytes > largest_state.0 {
                let top = parts.into_iter().max_by_key(|c| c.bytes);
                largest_state = (bytes, top, Some(variant.name.clone()));
            }
        }
    }
    let bytes = largest_state.0.saturating_add(series_total);
    let state_top = largest_state.1;
    // The series of all variants together, against the largest state part.
    let series_part = biggest_series.map(|mut s| {
        if variants.len() > 1 {
            s.what = format!(
                "the time series of {} variants ({} rows in the largest)",
                variants.len(),
                s.bytes / SERIES_ROW_BYTES
            );
        }
        s.bytes = series_total;
        s
    });
    let (biggest, variant) = match (state_top, series_part) {
        (Some(s), Some(t)) if t.bytes > s.bytes => (Some(t), None),
        (Some(s), _) => (Some(s), largest_state.2),
        (None, t) => (t, None),
    };
    (MemoryEstimate { bytes, biggest }, variant)
}

fn mul(a: u64, b: u64) -> u64 {
    a.saturating_mul(b)
}

fn size<T>() -> u64 {
    size_of::<T>() as u64
}

/// The time series the run keeps: a row a bucket, and one per service and
/// bucket, until the horizon or, without one, the last arrival (the run's
/// own limit stops it at `limits.max_series_rows`).
fn series(model: &Model) -> Contributor {
    let bucket_ns = model.bucket.as_nanos().max(1) as f64;
    let (span_ns, path) = match model.horizon {
        Some(h) => (h.as_nanos() as f64, "horizon_s".to_string()),
        None => model
            .workloads
            .iter()
            .map(|w| (w.arrivals_span_ns(), format!("workloads[{}]", w.model_name)))
            .fold((0.0, "timeseries.bucket_s".to_string()), |best, this| {
                if this.0 > best.0 {
                    this
                } else {
                    best
                }
            }),
    };
    let per_bucket = model.series_rows_per_bucket();
    let buckets = (span_ns / bucket_ns).ceil().min(u64::MAX as f64) as u64;
    let rows = mul(buckets.max(1), per_bucket).min(model.limits.max_series_rows);
    // The services with a cpu keep a row of their own beside their service
    // row, of a size known exactly (not part of the measured row cost).
    let cpus = model.services.iter().filter(|s| s.cpu.is_some()).count() as u64;
    let cpu_bytes = mul(mul(rows / per_bucket, cpus), size::<CpuBucket>());
    Contributor {
        path: if model.horizon.is_some() {
            path
        } else {
            format!("{path}.duration_s")
        },
        what: format!("the time series, {rows} rows"),
        bytes: mul(rows, SERIES_ROW_BYTES).saturating_add(cpu_bytes),
    }
}

/// The parts of a run's state that the model sizes.
fn run_state(model: &Model) -> Vec<Contributor> {
    let mut parts = Vec::new();
    for s in &model.services {
        parts.push(Contributor {
            path: format!("services[{}].instances", s.name),
            what: format!("the state of {} instances of {:?}", s.instances, s.name),
            bytes: mul(
                u64::from(s.instances),
                size::<InstanceState>()
                    .saturating_add(size::<AdmissionState>())
                    // A shared CPU's set, boxed (its jobs come and go with
                    // the requests in service).
                    .saturating_add(if s.cpu.is_some() {
                        size::<CpuState>()
                    } else {
                        0
                    }),
            ),
        });
        for (j, step) in s.steps.iter().enumerate() {
            let branches = matches!(step, Step::Parallel(_));
            for (b, policy) in step.calls().iter().enumerate() {
                let at = if branches {
                    format!("services[{}].steps[{j}].parallel.branches[{b}]", s.name)
                } else {
                    format!("services[{}].steps[{j}]", s.name)
                };
                edge_state(model, policy, u64::from(s.instances), &at, &mut parts);
            }
        }
    }
    // A workload's copies (`count`) at the workload's path, summed: each
    // part the size of all of them, as the model sizes it.
    for copies in model
        .workloads
        .chunk_by(|a, b| a.model_name == b.model_name)
    {
        let mut summed: Vec<Contributor> = Vec::new();
        for w in copies {
            let mut own = Vec::new();
            workload_state(model, w, &mut own);
            for part in own {
                match summed.iter_mut().find(|s| s.path == part.path) {
                    Some(s) => s.bytes = s.bytes.saturating_add(part.bytes),
                    None => summed.push(part),
                }
            }
        }
        if copies.len() > 1 {
            for part in &mut summed {
                part.what = format!("{}, summed over its {} copies", part.what, copies.len());
            }
        }
        parts.extend(summed);
    }
    if let Some(h) = model.hosts {
        parts.push(Contributor {
            path: "hosts".into(),
            what: format!("{} hosts", h.count()),
            bytes: mul(u64::from(h.count()), size::<HostPeriods>()),
        });
    }
    parts
}

/// A workload's own state: its call edge's, and its closed-loop users.
fn workload_state(model: &Model, w: &Workload, parts: &mut Vec<Contributor>) {
    let at = format!("workloads[{}]", w.model_name);
    edge_state(model, &w.edge, 1, &at, parts);
    if let Arrival::ClosedLoop { users } = w.arrival {
        parts.push(Contributor {
            path: format!("{at}.arrival.users"),
            what: format!("{users} closed-loop users"),
            bytes: mul(u64::from(users), size::<UserZombies>()),
        });
    }
}

/// A call edge's state: one per caller instance, each with a slot per callee
/// instance, and the windows of its policies.
fn edge_state(
    model: &Model,
    policy: &CallPolicy,
    callers: u64,
    at: &str,
    parts: &mut Vec<Contributor>,
) {
    let callee = &model.services[policy.to];
    let callee_instances = u64::from(callee.instances);
    // Outstanding attempts, and outlier detection's record, per callee instance.
    let per_callee = size::<u32>()
        + if policy.outlier_detection.is_some() {
            40
        } else {
            0
        };
    let per_caller = size::<EdgeState>().saturating_add(mul(callee_instances, per_callee));
    parts.push(Contributor {
        path: at.to_string(),
        what: format!(
            "the call edge's state at {at}: {callers} caller instance(s) × {callee_instances} instances of {:?}",
            callee.name
        ),
        bytes: mul(callers, per_caller),
    });
    if let Some(BreakerSpec::Resilience4j {
        sliding_window_type,
        sliding_window_size,
        ..
    }) = &policy.breaker
    {
        // A count window keeps a byte a call; a time window, three counters a
        // second.
        let per_slot = match sliding_window_type {
            SlidingWindowType::CountBased => 1,
            SlidingWindowType::TimeBased => 24,
        };
        parts.push(Contributor {
            path: format!("{at}.breaker.sliding_window_size"),
            what: format!(
                "the breaker's window of {sliding_window_size} slots at {at}, per caller instance"
            ),
            bytes: mul(callers, mul(u64::from(*sliding_window_size), per_slot)),
        });
    }
    if let Some(BudgetSpec::RetryCircuitBreaker { window, .. }) = &policy.retry.budget {
        // A byte an attempt of the window.
        parts.push(Contributor {
            path: format!("{at}.retry.budget.window"),
            what: format!(
                "the retry circuit breaker's window of {window} attempts at {at}, per caller instance"
            ),
            bytes: mul(callers, u64::from(*window)),
        });
    }
    if let Some(throttle) = &policy.throttle {
        // Two counters a bucket, a bucket a second of the window.
        let (field, seconds) = match *throttle {
            ThrottleSpec::Sre { window_s, .. } => ("window_s", window_s.round()),
            ThrottleSpec::EnvoyAdmissionControl {
                sampling_window_s, ..
            } => ("sampling_window_s", sampling_window_s.ceil()),
        };
        let buckets = seconds.clamp(1.0, u64::MAX as f64) as u64;
        parts.push(Contributor {
            path: format!("{at}.throttle.{field}"),
            what: format!("the throttle's window of {buckets} one-second buckets at {at}, per caller instance"),
            bytes: mul(callers, mul(buckets, 16)),
        });
    }
    if let Some(cache) = &policy.cache {
        // The key-popularity table: a weight and a running sum a key.
        parts.push(Contributor {
            path: format!("{at}.cache.keys"),
            what: format!("the cache's table of {} keys at {at}", cache.keys),
            bytes: mul(u64::from(cache.keys), 16),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gib_reads_well() {
        assert_eq!(gib(4 << 30), "4.00 GiB");
        assert_eq!(gib(u64::MAX), "1.718e10 GiB");
    }
}
