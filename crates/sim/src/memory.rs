//! What a run will hold in memory, estimated from the model before it runs,
//! so that a model whose state cannot fit is refused with the parameter to
//! blame, not aborted by the allocator minutes in (or at once, on a 100 GB
//! breaker window).
//!
//! Counted: the state a run allocates from the model's sizes, whatever its
//! traffic: per-instance service state, per caller instance the state of each
//! call edge (with a slot per callee instance: caller × callee instances),
//! breaker and throttle windows, cache key tables, hosts, closed-loop users,
//! and the time series each variant keeps until the run's end; and the
//! loaded model itself, held for the whole run: every variant's model and
//! its timeline, a model per step (a ramp: one a second), each counted less
//! what it shares with the step before it (see
//! [`Model::share_unchanged_parts`]), so that a ramp over a workload's 1,000
//! copies counts the one workload each step changes and the 1,000 pointers
//! to it, as it holds them. Not counted:
//! what grows with traffic (requests in flight, bounded by
//! `limits.max_in_flight`; cache entries, a key per request at most; latency
//! samples), which the run limits bound instead.
//!
//! The sizes are those of this build's types (`size_of`); the time series row
//! is the measured cost of a row (see [`SERIES_ROW_BYTES`]). Variants run one
//! after another, each keeping its time series: the estimate is the largest
//! variant's run state plus every variant's series and every variant's
//! models.

use crate::hosts::HostPeriods;
use crate::policy_state::{AdmissionState, EdgeState};
use crate::timeseries::CpuBucket;
use crate::world::{CpuState, InstanceState};
use crate::zombie::UserZombies;
use std::mem::size_of;
use std::sync::Arc;
use stormsim_model::shape::RateShape;
use stormsim_model::{
    Arrival, BreakerSpec, BudgetSpec, CallPolicy, Dist, ErrorWork, LoadedModel, Model,
    QueueDiscipline, Service, SlidingWindowType, Step, ThrottleSpec, Variant, Workload, WorkloadId,
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
    let models = models_held(variants);
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
    let bytes = largest_state
        .0
        .saturating_add(series_total)
        .saturating_add(models.bytes);
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
    let (biggest, variant) = match biggest {
        Some(b) if b.bytes >= models.bytes => (Some(b), variant),
        _ => (Some(models), None),
    };
    (MemoryEstimate { bytes, biggest }, variant)
}

/// Bytes an [`Arc`] adds to what it holds: its two counts.
const ARC_COUNTS: u64 = 2 * size_of::<usize>() as u64;

/// What the variants' models hold, all of them for the whole run: each
/// variant's model at time zero, its timeline's models and those of its
/// timeline without the trigger ([`Variant::without_trigger`]), each step
/// counted less the parts it shares with the one before it.
fn models_held(variants: &[Variant]) -> Contributor {
    let mut bytes = 0u64;
    let mut steps = 0usize;
    for v in variants {
        bytes = bytes.saturating_add(model_held(&v.model, None));
        for changes in std::iter::once(&v.changes).chain(&v.without_trigger) {
            steps += changes.len();
            let mut before = &v.model;
            for c in changes {
                let own = model_held(&c.model, Some(before))
                    .saturating_add(size::<stormsim_model::Change>())
                    .saturating_add(c.name.capacity() as u64);
                bytes = bytes.saturating_add(own);
                before = &c.model;
            }
            bytes = bytes.saturating_add(mul(
                changes.capacity() as u64,
                size::<stormsim_model::Change>(),
            ));
        }
    }
    let workloads = variants.first().map_or(0, |v| v.model.workloads.len());
    Contributor {
        path: if steps > 0 { "timeline" } else { "workloads" }.into(),
        what: format!(
            "the model's {} variant(s) and {steps} timeline step(s), each a model of {workloads} workload(s) (copies included)",
            variants.len()
        ),
        bytes,
    }
}

/// The bytes `model` holds that it does not share with `before` (the step
/// before it): the model's own fields, a pointer a workload and a service,
/// and each part it does not share. A workload's copies share one
/// [`Workload`], counted once.
fn model_held(model: &Model, before: Option<&Model>) -> u64 {
    let mut bytes = size::<Model>()
        .saturating_add(model.name.capacity() as u64)
        .saturating_add(strings(&model.classes))
        .saturating_add(mul(
            model.workloads.capacity() as u64,
            size::<Arc<Workload>>(),
        ))
        .saturating_add(mul(
            model.services.capacity() as u64,
            size::<Arc<Service>>(),
        ));
    if let Some(hosts) = &model.hosts {
        bytes = bytes.saturating_add(size_of_val(hosts) as u64);
    }
    if !same(&model.workload_ids, before.map(|b| &b.workload_ids)) {
        let ids = &model.workload_ids;
        bytes = bytes
            .saturating_add(ARC_COUNTS + size::<Vec<WorkloadId>>())
            .saturating_add(mul(ids.capacity() as u64, size::<WorkloadId>()))
            .saturating_add(ids.iter().map(|w| w.name.capacity() as u64).sum());
    }
    if !same(
        &model.reported_workloads,
        before.map(|b| &b.reported_workloads),
    ) {
        bytes = bytes
            .saturating_add(ARC_COUNTS + size::<Vec<String>>())
            .saturating_add(strings(&model.reported_workloads));
    }
    let mut last: Option<&Arc<Workload>> = None;
    for (i, w) in model.workloads.iter().enumerate() {
        if same(w, last) {
            continue;
        }
        last = Some(w);
        let earlier = before.and_then(|b| b.workloads.get(i));
        if same(w, earlier) {
            continue;
        }
        bytes = bytes
            .saturating_add(ARC_COUNTS + size::<Workload>())
            .saturating_add(w.model_name.capacity() as u64)
            .saturating_add(w.think.as_ref().map_or(0, dist_heap));
        if !same(&w.edge, earlier.map(|e| &e.edge)) {
            bytes = bytes
                .saturating_add(ARC_COUNTS + size::<CallPolicy>())
                .saturating_add(policy_heap(&w.edge));
        }
        if let Arrival::Shaped(shape) = &w.arrival {
            let earlier_shape = earlier.and_then(|e| match &e.arrival {
                Arrival::Shaped(s) => Some(s),
                _ => None,
            });
            if !same(shape, earlier_shape) {
                bytes = bytes
                    .saturating_add(ARC_COUNTS + size::<RateShape>())
                    .saturating_add(shape_heap(shape));
            }
        }
    }
    for (i, s) in model.services.iter().enumerate() {
        if !same(s, before.and_then(|b| b.services.get(i))) {
            bytes = bytes
                .saturating_add(ARC_COUNTS + size::<Service>())
                .saturating_add(service_heap(s));
        }
    }
    bytes
}

/// Whether `a` is `b`, shared.
fn same<T>(a: &Arc<T>, b: Option<&Arc<T>>) -> bool {
    b.is_some_and(|b| Arc::ptr_eq(a, b))
}

/// The heap a list of strings holds.
fn strings(list: &Vec<String>) -> u64 {
    mul(list.capacity() as u64, size::<String>())
        .saturating_add(list.iter().map(|s| s.capacity() as u64).sum())
}

/// The heap a service holds beyond its own struct.
fn service_heap(s: &Service) -> u64 {
    let mut bytes = (s.name.capacity() as u64)
        .saturating_add(mul(s.steps.capacity() as u64, size::<Step>()))
        .saturating_add(mul(
            s.only_classes.capacity() as u64,
            size::<Option<Vec<u8>>>(),
        ))
        .saturating_add(
            s.only_classes
                .iter()
                .flatten()
                .map(|c| c.capacity() as u64)
                .sum(),
        )
        .saturating_add(
            s.host_of
                .as_ref()
                .map_or(0, |h| mul(h.capacity() as u64, 4)),
        )
        .saturating_add(
            s.replica_work_factor
                .as_ref()
                .map_or(0, |f| mul(f.capacity() as u64, 8)),
        )
        .saturating_add(mul(s.admission.shed_classes.capacity() as u64, 4));
    if let QueueDiscipline::Priority { rank, .. } = &s.queue_discipline {
        bytes = bytes.saturating_add(rank.capacity() as u64);
    }
    for step in &s.steps {
        bytes = bytes.saturating_add(match step {
            Step::Work { dist, error, .. } => dist_heap(dist).saturating_add(match error {
                Some(e) => match &e.work {
                    ErrorWork::Dist(d) => dist_heap(d),
                    ErrorWork::Fraction(_) => 0,
                },
                None => 0,
            }),
            Step::Call(policy) => size::<CallPolicy>().saturating_add(policy_heap(policy)),
            Step::Parallel(parallel) => {
                size_of_val(parallel.as_ref()) as u64
                    + mul(parallel.branches.capacity() as u64, size::<CallPolicy>())
                    + parallel.branches.iter().map(policy_heap).sum::<u64>()
            }
        });
    }
    bytes
}

/// The heap a call policy holds beyond its own struct.
fn policy_heap(p: &CallPolicy) -> u64 {
    mul(
        p.retry.retry_on.capacity() as u64,
        size::<stormsim_model::RetryableOutcome>(),
    )
}

/// The heap a distribution holds beyond its own enum.
fn dist_heap(d: &Dist) -> u64 {
    match d {
        Dist::Mixture { cumulative, parts } => mul(cumulative.capacity() as u64, 8)
            .saturating_add(mul(parts.capacity() as u64, size::<Dist>()))
            .saturating_add(parts.iter().map(dist_heap).sum()),
        Dist::Empirical { ms, cdf } => {
            mul(ms.capacity() as u64, 8).saturating_add(mul(cdf.capacity() as u64, 8))
        }
        _ => 0,
    }
}

/// The heap a load shape holds beyond its own enum.
fn shape_heap(s: &RateShape) -> u64 {
    match s {
        RateShape::Stages { ends, .. } => mul(ends.capacity() as u64, 16),
        RateShape::Trace { rates, .. } => mul(rates.capacity() as u64, 8),
        _ => 0,
    }
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

/// Bytes every run holds whatever its model: the event queue's first
/// blocks, the counters of the whole run. Measured: a run of a
/// one-service, one-workload model allocates 3 KB as it is made.
const FIXED_RUN_BYTES: u64 = 16 << 10;

/// The run's tables, a row per call edge, workload and service: each call
/// edge's policy and retry rule, counters and latencies; each workload's
/// arrivals and zombie accounting; each service's counters and capacity.
fn run_tables(model: &Model) -> Contributor {
    let edges = (model.workloads.len() as u64).saturating_add(
        model
            .services
            .iter()
            .flat_map(|s| &s.steps)
            .map(|step| step.edges().count() as u64)
            .sum(),
    );
    let per_edge = size::<CallPolicy>()
        + size::<crate::policy::retry::RetryRule>()
        + size::<Option<usize>>()
        + size::<crate::metrics::EdgeCounters>()
        + size::<Option<crate::metrics::LatencyRecorder>>()
        + size::<Vec<EdgeState>>();
    let per_workload =
        size::<crate::world::WorkloadState>() + size::<Vec<UserZombies>>() + size::<u16>();
    let per_reported =
        size::<crate::metrics::WorkloadCounters>() + size::<crate::timeseries::OpenLatencies>();
    let per_service = size::<crate::metrics::ServiceCounters>()
        + size::<crate::measurements::Capacity>()
        + 3 * size::<Vec<u32>>()
        + mul(model.classes.len() as u64 + 1, size::<u64>());
    let steps: u64 = model.services.iter().map(|s| s.steps.len() as u64).sum();
    Contributor {
        path: "workloads".into(),
        what: format!(
            "the run's tables of {edges} call edges and {} workloads (copies included)",
            model.workloads.len()
        ),
        bytes: FIXED_RUN_BYTES
            .saturating_add(mul(edges, per_edge))
            .saturating_add(mul(model.workloads.len() as u64, per_workload))
            .saturating_add(mul(model.reported_workloads.len() as u64, per_reported))
            .saturating_add(mul(model.services.len() as u64, per_service))
            .saturating_add(mul(steps, size::<u32>())),
    }
}

/// The parts of a run's state that the model sizes.
fn run_state(model: &Model) -> Vec<Contributor> {
    let mut parts = vec![run_tables(model)];
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
                let chain = policy
                    .fallback
                    .iter()
                    .flat_map(|f| f.chain.iter().enumerate());
                for (i, use_) in chain {
                    if let stormsim_model::FallbackUse::Call(fallback) = use_ {
                        let at = format!("{at}.fallback.chain[{i}]");
                        edge_state(model, fallback, u64::from(s.instances), &at, &mut parts);
                    }
                }
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
