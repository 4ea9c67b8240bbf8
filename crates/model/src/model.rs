//! The checked model the simulator runs: names resolved to indices, times in
//! nanoseconds, every number known to be in range.

use crate::dist::Dist;
pub use crate::spec::{
    BalancerKind, BreakerSpec, BudgetSpec, BulkheadSpec, CallContext, CodelSpec,
    ConcurrencyLimitSpec, DeadlineEncoding, DownMode, DrawnAt, ErrorStatus, FailureOutcome,
    HedgeTarget, Jitter, OnCancel, OutlierDetectionSpec, Placement, RateLimitSpec,
    RetryableOutcome, SlidingWindowType, ThrottleSpec, TimelineRole,
};
use std::sync::Arc;
use stormsim_engine::{SimDuration, SimTime};

/// Index of a service in [`Model::services`].
pub type ServiceId = usize;

/// A validated model: one variant, ready to run.
#[derive(Clone, Debug)]
pub struct Model {
    /// The model's name.
    pub name: String,
    /// Master seed.
    pub seed: u64,
    /// One-way latency of every hop.
    pub network: Dist,
    /// The hosts, if the model places instances on them.
    pub hosts: Option<Hosts>,
    /// Sources of logical requests. A workload's copies (`count`) differ
    /// only in who they are ([`Model::workload_ids`]): they share one
    /// [`Workload`], so that a timeline step that changes them holds it
    /// once, not once per copy.
    pub workloads: Vec<Arc<Workload>>,
    /// Who each of [`Model::workloads`] is, in the same order: its name and
    /// where outputs report it. A timeline cannot add, remove or rename
    /// workloads, so every step shares its model's list.
    pub workload_ids: Arc<Vec<WorkloadId>>,
    /// Services, in model order.
    pub services: Vec<Arc<Service>>,
    /// Safety limits.
    pub limits: Limits,
    /// Stop the run at this time.
    pub horizon: Option<SimDuration>,
    /// Width of a time-series bucket.
    pub bucket: SimDuration,
    /// Recovery analysis settings.
    pub metastability: Option<Metastability>,
    /// The service the headline load columns report.
    pub focus: ServiceId,
    /// Priority class names, in order of first appearance among workloads.
    pub classes: Vec<String>,
    /// The workloads as outputs name them: one per workload, or one per
    /// workload whose copies are summed ([`WorkloadId::reported_as`]).
    /// Shared by every timeline step, as [`Model::workload_ids`] is.
    pub reported_workloads: Arc<Vec<String>>,
}

impl Model {
    /// Points each part equal to `before`'s (a service, a workload, a
    /// workload's call policy) at `before`'s copy. A timeline holds a whole
    /// model per step, and most steps change one value: a ramp changes its
    /// values once a second, for up to 10,000 steps, in every variant. Shared,
    /// the parts a step leaves alone are held once, not once per step.
    pub fn share_unchanged_parts(&mut self, before: &Model) {
        for (service, earlier) in self.services.iter_mut().zip(&before.services) {
            if !Arc::ptr_eq(service, earlier) && service == earlier {
                *service = Arc::clone(earlier);
            }
        }
        // A workload's copies share one `Workload`: compared once, and
        // pointed at the same earlier one together.
        let mut previous: Option<(*const Workload, Arc<Workload>)> = None;
        for (workload, earlier) in self.workloads.iter_mut().zip(&before.workloads) {
            let this = Arc::as_ptr(workload);
            if let Some((_, now)) = previous.as_ref().filter(|(was, _)| *was == this) {
                *workload = Arc::clone(now);
                continue;
            }
            if Arc::ptr_eq(workload, earlier) || workload == earlier {
                *workload = Arc::clone(earlier);
            } else {
                if workload.edge == earlier.edge {
                    Arc::make_mut(workload).edge = Arc::clone(&earlier.edge);
                }
                // A trace's rates (up to 10⁶) held once, not once a step.
                if let (Arrival::Shaped(shape), Arrival::Shaped(before)) =
                    (&workload.arrival, &earlier.arrival)
                {
                    if !Arc::ptr_eq(shape, before) && shape == before {
                        Arc::make_mut(workload).arrival = Arrival::Shaped(Arc::clone(before));
                    }
                }
            }
            previous = Some((this, Arc::clone(workload)));
        }
        if self.workload_ids == before.workload_ids {
            self.workload_ids = Arc::clone(&before.workload_ids);
        }
        if self.reported_workloads == before.reported_workloads {
            self.reported_workloads = Arc::clone(&before.reported_workloads);
        }
    }

    /// The name of workload `index` (a copy's own: `users-0001`).
    pub fn workload_name(&self, index: usize) -> &str {
        &self.workload_ids[index].name
    }

    /// The time series' rows a bucket: one for the whole system, one per
    /// service and one per reported workload. `limits.max_series_rows`
    /// counts these.
    pub fn series_rows_per_bucket(&self) -> u64 {
        1 + self.services.len() as u64 + self.reported_workloads.len() as u64
    }
}

/// Validated hosts: `zones × per_zone` of them, host `h` in zone `h / per_zone`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hosts {
    /// Failure domains.
    pub zones: u32,
    /// Hosts per zone.
    pub per_zone: u32,
    /// Slow periods, if any.
    pub slow: Option<SlowPeriods>,
}

impl Hosts {
    /// Hosts in all.
    pub fn count(&self) -> u32 {
        self.zones * self.per_zone
    }

    /// The host of replica `replica` of shard `shard`.
    pub fn host_of(&self, placement: Placement, shard: u32, replica: u32) -> u32 {
        let (zone, host_in_zone) = match placement {
            Placement::Spread => (replica % self.zones, shard % self.per_zone),
            Placement::Colocated => (shard % self.zones, (shard / self.zones) % self.per_zone),
        };
        zone * self.per_zone + host_in_zone
    }
}

/// Validated slow periods.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SlowPeriods {
    /// Mean normal period, ns.
    pub mean_gap_ns: f64,
    /// Mean slow period, ns.
    pub mean_length_ns: f64,
    /// Slowdown of work started in a slow period.
    pub factor: f64,
}

/// A validated recovery analysis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Metastability {
    /// Baseline from here to the trigger's start.
    pub baseline_from: SimDuration,
    /// Goodput band, a fraction.
    pub goodput_band: f64,
    /// Latency factor over the baseline.
    pub latency_factor: f64,
    /// How long a good window lasts.
    pub hold: SimDuration,
    /// Standard errors of goodput that count as noise.
    pub noise_z: f64,
    /// Retry share of a baseline already in its storm.
    pub storm_retry_share: f64,
    /// Longest recovery that still counts as recovered.
    pub max_recovery: SimDuration,
}

/// A timeline change: from `at` on, the run follows `model`.
#[derive(Clone, Debug)]
pub struct Change {
    /// When.
    pub at: SimTime,
    /// The timeline entry's name.
    pub name: String,
    /// Its role in the recovery analysis.
    pub role: Option<TimelineRole>,
    /// The whole model from then on (all earlier changes included). Its
    /// services and workloads that the change left alone are the previous
    /// step's, shared ([`Model::share_unchanged_parts`]).
    pub model: Model,
}

/// Who a workload is: what tells a workload's copies apart.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadId {
    /// Its name: the model's, or a copy's own (`users-0001`).
    pub name: String,
    /// Index into [`Model::reported_workloads`]: the workload whose counts
    /// and latencies this one's add to in outputs (its own, unless it is a
    /// copy whose copies are summed).
    pub reported_as: u16,
}

/// An open-loop source of logical requests (its name is in
/// [`Model::workload_ids`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    /// The name the model gives it, which its paths use
    /// (`workloads[users]`): its copies' too.
    pub model_name: String,
    /// The service that receives its requests.
    pub target: ServiceId,
    /// When requests arrive.
    pub arrival: Arrival,
    /// Most requests to generate.
    pub max_requests: Option<u64>,
    /// No arrival at or after this time.
    pub duration: Option<SimDuration>,
    /// The caller's deadline budget, sent with the request.
    pub deadline: Option<SimDuration>,
    /// The caller's own call policy (timeout, retries, breaker, ...), the same
    /// layers as a call step's.
    pub edge: Arc<CallPolicy>,
    /// Index into [`Model::classes`], if the workload has a class.
    pub class: Option<u8>,
    /// A closed loop's think time between requests.
    pub think: Option<Dist>,
    /// How far the callers' clocks are ahead of true time, ns.
    pub clock_offset: i64,
}

impl Workload {
    /// How long it keeps arriving, ns, as far as the model says: its
    /// `duration_s`, or the time its `max_requests` take at its rate (the
    /// mean for Poisson gaps; for a closed loop, each user asking in turn a
    /// mean think time apart), whichever is shorter; 0 when neither bounds it.
    pub fn arrivals_span_ns(&self) -> f64 {
        let by_count = self.max_requests.map(|n| match self.arrival {
            Arrival::Poisson { mean_gap_ns } => n as f64 * mean_gap_ns,
            Arrival::Constant { rate_per_s } => n as f64 * 1e9 / rate_per_s,
            Arrival::AtOnce => 0.0,
            // At its highest rate, the soonest the requests can have come.
            Arrival::Shaped(ref shape) => n as f64 * 1e9 / shape.max_rate(),
            Arrival::ClosedLoop { users } => {
                let think_ns = self.think.as_ref().map_or(0.0, |t| t.mean_ms() * 1e6);
                n as f64 / f64::from(users.max(1)) * think_ns
            }
        });
        let by_time = self.duration.map(|d| d.as_nanos() as f64);
        match (by_count, by_time) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => 0.0,
        }
    }
}

/// An arrival process.
#[derive(Clone, Debug, PartialEq)]
pub enum Arrival {
    /// Exponential gaps with this mean.
    Poisson {
        /// Mean gap, in nanoseconds (fractional, so high rates keep precision).
        mean_gap_ns: f64,
    },
    /// Constant gaps of exactly `1e9 / rate` ns, accumulated without drift.
    Constant {
        /// Arrivals per second.
        rate_per_s: f64,
    },
    /// Everything at time zero.
    AtOnce,
    /// A Poisson process whose rate follows a load shape.
    Shaped(Arc<crate::shape::RateShape>),
    /// A closed loop of this many users (think times in [`Workload::think`]).
    ClosedLoop {
        /// Users.
        users: u32,
    },
}

impl Arrival {
    /// The most requests per second it sends: its rate, a shape's peak;
    /// `None` for arrivals with no rate (all at once, a closed loop).
    pub fn highest_rate_per_s(&self) -> Option<f64> {
        match self {
            Arrival::Poisson { mean_gap_ns } => Some(1e9 / mean_gap_ns),
            Arrival::Constant { rate_per_s } => Some(*rate_per_s),
            Arrival::Shaped(shape) => Some(shape.max_rate()),
            Arrival::AtOnce | Arrival::ClosedLoop { .. } => None,
        }
    }
}

/// A service.
#[derive(Clone, Debug, PartialEq)]
pub struct Service {
    /// Name.
    pub name: String,
    /// Concurrent requests (`u32::MAX`: unbounded).
    pub workers: u32,
    /// Waiting requests (`usize::MAX`: unbounded).
    pub queue_capacity: usize,
    /// Which waiting request a freed worker takes.
    pub queue_discipline: QueueDiscipline,
    /// Load-dependent work: `(per_request, exponent)`, if any.
    pub contention: Option<Contention>,
    /// The cores its instances' work shares (processor sharing), if any.
    pub cpu: Option<Cpu>,
    /// Whether a work step draws its duration at admission (`drawn_at:
    /// admission`): only then does admitting a request note the slowdown.
    pub draws_at_admission: bool,
    /// Deadline given to requests that arrive without one.
    pub default_deadline: Option<SimDuration>,
    /// The handler.
    pub steps: Vec<Step>,
    /// Per step: the class indices it runs for (`None`: every request).
    pub only_classes: Vec<Option<Vec<u8>>>,
    /// Admission control.
    pub admission: Admission,
    /// Instances.
    pub instances: u32,
    /// The first this many instances are down.
    pub instances_down: u32,
    /// What callers meet at a down instance.
    pub down_mode: DownMode,
    /// Shards; `instances / shards` replicas each.
    pub shards: u32,
    /// The host of each instance (`None`: the model has no hosts).
    pub host_of: Option<Vec<u32>>,
    /// Work factor per replica (`None`: all 1).
    pub replica_work_factor: Option<Vec<f64>>,
    /// How far the hosts' clocks are ahead of true time, ns.
    pub clock_offset: i64,
    /// Each instance's further clock skew is uniform in `[-x, x]` ns.
    pub clock_spread: i64,
}

impl Service {
    /// Replicas per shard.
    pub fn replicas(&self) -> u32 {
        self.instances / self.shards
    }
}

/// Validated admission control.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Admission {
    /// Share of arrivals refused at random.
    pub drop_fraction: f64,
    /// At dequeue, drop requests with less than this left before their deadline.
    pub drop_expired_margin: Option<SimDuration>,
    /// Server-side rate limit (429).
    pub rate_limit: Option<RateLimitSpec>,
    /// In-flight threshold per class index (`u32::MAX`: none).
    pub shed_classes: Vec<u32>,
    /// Adaptive concurrency limit.
    pub concurrency_limit: Option<ConcurrencyLimitSpec>,
    /// CoDel at dequeue.
    pub codel: Option<CodelSpec>,
    /// Retry-After sent with 503s at arrival.
    pub retry_after: Option<SimDuration>,
}

/// Which waiting request a freed worker takes next (non-preemptive).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum QueueDiscipline {
    /// The oldest.
    #[default]
    Fifo,
    /// The newest.
    Lifo,
    /// The newest while more than `above` wait, else the oldest.
    AdaptiveLifo {
        /// Queue length above which the newest goes first.
        above: u32,
    },
    /// By class, highest rank first, oldest first within a rank.
    Priority {
        /// Rank of each class index (lower first); classes not listed rank
        /// after every listed one, with requests without a class.
        rank: Vec<u8>,
        /// Ranks in all: listed classes, plus one for everything else.
        ranks: u8,
    },
}

impl QueueDiscipline {
    /// The rank of a request of `class` (0 is served first); every request
    /// ranks 0 unless the discipline is by priority.
    pub fn rank_of(&self, class: Option<u8>) -> usize {
        match self {
            QueueDiscipline::Priority { rank, ranks } => class
                .and_then(|c| rank.get(usize::from(c)).copied())
                .unwrap_or(ranks - 1)
                .into(),
            _ => 0,
        }
    }

    /// How many ranks its queue keeps apart.
    pub fn ranks(&self) -> usize {
        match self {
            QueueDiscipline::Priority { ranks, .. } => usize::from(*ranks),
            _ => 1,
        }
    }
}

/// Work that grows with the requests in service.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contention {
    /// Slowdown per other request in service.
    pub per_request: f64,
    /// The curve's power.
    pub exponent: f64,
}

impl Contention {
    /// How much longer work drawn with `in_service` requests in service
    /// (itself included) takes.
    pub fn factor(&self, in_service: u32) -> f64 {
        let others = f64::from(in_service.saturating_sub(1));
        1.0 + self.per_request * libm::pow(others, self.exponent)
    }
}

/// An instance's processors, shared by its requests' work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cpu {
    /// Cores per instance (at least 1).
    pub cores: u32,
}

impl Cpu {
    /// Requests an instance with `workers` can complete at once, in work per
    /// unit of time: its cores, or its workers if fewer.
    pub fn parallelism(&self, workers: u32) -> u32 {
        self.cores.min(workers)
    }
}

/// A work step's own failure.
#[derive(Clone, Debug, PartialEq)]
pub struct StepError {
    /// Probability that an execution fails.
    pub p: f64,
    /// How long a failing execution works.
    pub work: ErrorWork,
    /// What the caller is told.
    pub status: ErrorStatus,
}

/// How long a failing execution works before it answers.
#[derive(Clone, Debug, PartialEq)]
pub enum ErrorWork {
    /// This share of the work it drew (1: all of it).
    Fraction(f64),
    /// Its own duration.
    Dist(Dist),
}

/// One handler step.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Local work.
    Work {
        /// Duration distribution.
        dist: Dist,
        /// Reaction to the caller giving up.
        on_cancel: OnCancel,
        /// Static limit on the work (`INFINITE`: none).
        timeout: SimDuration,
        /// Bound by the request's deadline, if set.
        deadline: Option<WorkDeadline>,
        /// Its own failure, if it may fail.
        error: Option<StepError>,
        /// When its duration is drawn.
        drawn_at: DrawnAt,
    },
    /// A downstream call and its policies.
    Call(Box<CallPolicy>),
    /// Calls to several services at once.
    Parallel(Box<Parallel>),
}

impl Step {
    /// The calls the step makes: none for work, one for a call, each branch
    /// of a parallel step in order. Each is an edge of its own.
    pub fn calls(&self) -> &[CallPolicy] {
        match self {
            Step::Work { .. } => &[],
            Step::Call(policy) => std::slice::from_ref(policy.as_ref()),
            Step::Parallel(parallel) => &parallel.branches,
        }
    }

    /// Every call edge of the step, in edge order: its calls (see
    /// [`Step::calls`]), then the calls of their fallbacks, call by call in
    /// chain order.
    pub fn edges(&self) -> impl Iterator<Item = &CallPolicy> {
        let calls = self.calls();
        calls
            .iter()
            .chain(calls.iter().flat_map(|c| c.fallback_calls()))
    }
}

/// A validated parallel step.
#[derive(Clone, Debug, PartialEq)]
pub struct Parallel {
    /// Each branch's call (at least 2, at most [`Parallel::MAX_BRANCHES`]).
    pub branches: Vec<CallPolicy>,
    /// Bit `i` set: branch `i` is required (not `optional`).
    pub required: u64,
    /// Successes that complete the step (`None`: every branch ends, or a
    /// required one fails).
    pub wait_for: Option<u32>,
    /// When to stop waiting.
    pub deadline: Option<SimDuration>,
}

impl Parallel {
    /// Most branches a parallel step may have (its required set is a `u64`).
    pub const MAX_BRANCHES: usize = 64;
}

/// The policy stack of one call edge.
#[derive(Clone, Debug, PartialEq)]
pub struct CallPolicy {
    /// The callee.
    pub to: ServiceId,
    /// Per-attempt timeout (`INFINITE` if none).
    pub attempt_timeout: SimDuration,
    /// Retry loop.
    pub retry: RetryPolicy,
    /// Deadline shaping and propagation.
    pub deadline: DeadlinePolicy,
    /// Tied to the request's lifetime or not.
    pub context: CallContext,
    /// Circuit breaker, asked before each attempt.
    pub breaker: Option<BreakerSpec>,
    /// Bulkhead around the whole call.
    pub bulkhead: Option<BulkheadSpec>,
    /// Client-side rate limiter, asked before each attempt.
    pub rate_limit: Option<RateLimitSpec>,
    /// Client-side adaptive throttle, asked before each attempt.
    pub throttle: Option<ThrottleSpec>,
    /// Instance choice.
    pub balancer: BalancerKind,
    /// Outlier detection.
    pub outlier_detection: Option<OutlierDetectionSpec>,
    /// Connect timeout at a blackholed instance (`INFINITE` if none).
    pub connect_timeout: SimDuration,
    /// A parallel fan-out over the callee's shards.
    pub fan_out: Option<FanOut>,
    /// Hedged attempts.
    pub hedge: Option<HedgePolicy>,
    /// A cache in front of the call.
    pub cache: Option<CachePolicy>,
    /// The caller keeps its worker while it waits.
    pub hold_worker: bool,
    /// What the caller does when the call fails.
    pub fallback: Option<Box<Fallback>>,
}

impl CallPolicy {
    /// The calls of its fallback, in chain order.
    pub fn fallback_calls(&self) -> impl Iterator<Item = &CallPolicy> {
        self.fallback
            .iter()
            .flat_map(|f| f.chain.iter())
            .filter_map(|use_| match use_ {
                FallbackUse::Call(policy) => Some(policy.as_ref()),
                _ => None,
            })
    }
}

/// A validated fallback (see [`crate::spec::FallbackSpec`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Fallback {
    /// The failures that take it: bit [`FailureOutcome::bit`] of each.
    pub on: u16,
    /// What to try, in order.
    pub chain: Vec<FallbackUse>,
    /// Its answers are degraded.
    pub degraded: bool,
    /// The step is marked a write (`idempotent: false`): a guessed answer
    /// (stale or default) is warned about.
    pub for_a_write: bool,
}

impl Fallback {
    /// Most kinds in a chain.
    pub const MAX_CHAIN: usize = 8;

    /// Whether a call that failed with `failure` takes it.
    pub fn takes(&self, failure: FailureOutcome) -> bool {
        self.on & failure.bit() != 0
    }
}

/// One validated kind of fallback.
#[derive(Clone, Debug, PartialEq)]
pub enum FallbackUse {
    /// A stale cache entry, up to this long past its expiry.
    Stale {
        /// How long past expiry.
        max_staleness: SimDuration,
    },
    /// A default answer after this work on the caller (`None`: at once).
    Default {
        /// Its work.
        work: Option<Dist>,
    },
    /// A call to another service, on an edge of its own.
    Call(Box<CallPolicy>),
    /// Explicit failure.
    Fail,
}

/// A validated cache.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CachePolicy {
    /// Distinct keys.
    pub keys: u32,
    /// Zipf exponent.
    pub zipf_s: f64,
    /// Freshness after a load.
    pub ttl: SimDuration,
    /// Singleflight per instance.
    pub coalesce: bool,
    /// Stale-while-revalidate window.
    pub stale_while_revalidate: Option<SimDuration>,
    /// Warm start: every key fresh until then.
    pub warm_until: Option<SimTime>,
}

/// A validated fan-out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FanOut {
    /// Successes that complete it (at most the callee's shards).
    pub wait_for: u32,
    /// When to stop waiting.
    pub deadline: Option<SimDuration>,
    /// Slowness shared by a request's children, if any.
    pub correlated_slowdown: Option<CorrelatedSlowdown>,
}

/// A share of requests slow at every child of a fan-out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CorrelatedSlowdown {
    /// Probability that a request is slow.
    pub p: f64,
    /// Its children's work factor.
    pub factor: f64,
}

/// A validated hedging policy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HedgePolicy {
    /// The fixed delay, or the one used before enough latencies are known.
    pub delay: Option<SimDuration>,
    /// Adaptive delay's percentile, in (0, 1).
    pub percentile: Option<f64>,
    /// Latencies the percentile is taken over.
    pub window: u32,
    /// Most hedges per call.
    pub max_hedges: u32,
    /// The brake's ratio of hedges to first attempts.
    pub max_ratio: Option<f64>,
    /// Cancel the losers.
    pub tied: bool,
    /// Delay of the losers' cancellation.
    pub cancel_delay: SimDuration,
    /// Where hedges go.
    pub target: HedgeTarget,
    /// The failures after which the next hedge goes at once (gRPC's
    /// `nonFatalStatusCodes`); any other failure ends the try.
    pub non_fatal: OutcomeSet,
}

/// A set of [`RetryableOutcome`]s, a bit each: `Copy`, so that the policies
/// holding one stay `Copy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutcomeSet(u8);

impl OutcomeSet {
    /// The set of `outcomes` (repeats count once).
    pub fn of(outcomes: &[RetryableOutcome]) -> OutcomeSet {
        OutcomeSet(
            outcomes
                .iter()
                .fold(0, |bits, &o| bits | OutcomeSet::bit(o)),
        )
    }

    /// Whether `outcome` is in the set.
    pub fn contains(self, outcome: RetryableOutcome) -> bool {
        self.0 & OutcomeSet::bit(outcome) != 0
    }

    fn bit(outcome: RetryableOutcome) -> u8 {
        1 << outcome as u8
    }
}

/// A validated retry policy.
#[derive(Clone, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (≥ 1).
    pub max_attempts: u32,
    /// Wait before each retry, before jitter.
    pub backoff: Backoff,
    /// How the wait is randomised.
    pub jitter: Jitter,
    /// For proportional jitter.
    pub jitter_factor: f64,
    /// Outcomes retried.
    pub retry_on: Vec<RetryableOutcome>,
    /// The edge's retry budget.
    pub budget: Option<BudgetSpec>,
}

impl RetryPolicy {
    /// One attempt, no retry.
    pub fn none() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 1,
            backoff: Backoff::Fixed(SimDuration::ZERO),
            jitter: Jitter::None,
            jitter_factor: 0.0,
            retry_on: Vec::new(),
            budget: None,
        }
    }
}

/// A validated backoff.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Backoff {
    /// The same wait every time.
    Fixed(SimDuration),
    /// `min(cap, base · multiplier^(n-1))` before retry `n`.
    Exponential {
        /// First wait.
        base: SimDuration,
        /// Growth per retry.
        multiplier: f64,
        /// Longest wait.
        cap: SimDuration,
    },
}

/// A work step bounded by its request's deadline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorkDeadline {
    /// Kept back from the remaining budget (time to answer).
    pub margin: SimDuration,
    /// Below this (after the margin), fail fast without working.
    pub min_budget: SimDuration,
}

/// A validated deadline policy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeadlinePolicy {
    /// Send the remaining budget down.
    pub propagate: bool,
    /// Subtracted from the budget sent down.
    pub margin: SimDuration,
    /// Cap on the first attempt's timeout (`INFINITE` if none).
    pub first_attempt_cap: SimDuration,
    /// No attempt below this remaining budget.
    pub min_budget: SimDuration,
    /// Sent as an absolute time (compared with the callee's clock) rather than
    /// as a remaining time.
    pub absolute: bool,
    /// The hop subtracts what it spent (false: stale relative budgets).
    pub subtract_elapsed: bool,
}

impl DeadlinePolicy {
    /// No propagation, no cap, no minimum: the deadline only bounds attempts.
    pub const NONE: DeadlinePolicy = DeadlinePolicy {
        propagate: false,
        margin: SimDuration::ZERO,
        first_attempt_cap: SimDuration::INFINITE,
        min_budget: SimDuration::ZERO,
        absolute: false,
        subtract_elapsed: true,
    };
}

/// Validated limits.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Most events per variant.
    pub max_events: u64,
    /// Most live requests at once.
    pub max_in_flight: u64,
    /// Most time-series rows per variant, at most [`crate::MAX_SERIES_ROWS`].
    pub max_series_rows: u64,
}
