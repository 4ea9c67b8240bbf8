//! The model file format, as serde types: the one source of truth.
//!
//! These types are what a model file *says*; [`crate::validate`] turns them into
//! a checked [`crate::Model`] the simulator runs. Every duration carries its unit
//! in its name (`_ms`, `_s`), every policy is a tagged enum (`"kind": ...`), and
//! unknown fields are errors, so a typo is caught instead of silently ignored.
//! The reference document `docs/model-format.md` and the JSON Schema
//! `docs/model.schema.json` are generated from these types (doc comments
//! included) and checked against them by a test, so they cannot drift.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A model file: a system of workloads and services, and named variants of it.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// Name of the model; also the default output folder `outputs/<name>/`.
    pub name: String,
    /// What the model is and what it should show.
    #[serde(default)]
    pub description: String,
    /// Master seed of every random stream; `stormsim run --seed` overrides it.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// The network between services.
    #[serde(default)]
    pub network: NetworkSpec,
    /// Sources of logical requests.
    pub workloads: Vec<WorkloadSpec>,
    /// The services and what their handlers do.
    pub services: Vec<ServiceSpec>,
    /// Named sets of parameter-path overrides of this model, all run with the same
    /// random numbers (common random numbers). Without variants the model runs once
    /// as the variant `base`.
    #[serde(default)]
    pub variants: Vec<VariantSpec>,
    /// Safety limits: an unstable model stops with a clear message instead of
    /// exhausting memory.
    #[serde(default)]
    pub limits: LimitsSpec,
    /// Stop the run at this virtual time, whatever is still in flight (which is
    /// then neither succeeded nor failed). Absent: run until every request has
    /// its answer.
    #[serde(default)]
    pub horizon_s: Option<f64>,
    /// Changes applied at virtual times: a bad deploy, a rollback, an operator's
    /// intervention. Each entry's `set` uses the same parameter paths as variants.
    #[serde(default)]
    pub timeline: Vec<TimelineEntrySpec>,
    /// Time series of the run, per bucket, written to `timeseries.csv`.
    #[serde(default)]
    pub timeseries: TimeSeriesSpec,
    /// The service whose load the headline columns report (`peak_offered_rps`,
    /// `storm_offered_rps`). Default: the first workload's target.
    #[serde(default)]
    pub focus: Option<String>,
    /// How to tell whether the system recovered after its trigger: needs a
    /// timeline entry with `role: trigger_start` and one with `role: trigger_end`.
    #[serde(default)]
    pub metastability: Option<MetastabilitySpec>,
}

/// A change at a virtual time.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimelineEntrySpec {
    /// Name, shown on charts (`timeline[rollback]` selects this entry in a path).
    pub name: String,
    /// When the change applies, seconds of virtual time.
    pub at_s: f64,
    /// Ramp: move numeric values linearly from what they were to the values in
    /// `set` over this many seconds, in 1-second steps. Absent: a step change.
    #[serde(default)]
    pub over_s: Option<f64>,
    /// What this change means for metastability detection.
    #[serde(default)]
    pub role: Option<TimelineRole>,
    /// Overrides as `PATH: VALUE`, as in a variant.
    #[serde(default)]
    pub set: Map<String, Value>,
}

/// What a timeline change means for the recovery analysis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TimelineRole {
    /// The fault begins (a bad deploy).
    TriggerStart,
    /// The fault is removed (the rollback): from here the system should recover.
    TriggerEnd,
    /// An operator acts on the system (retries off, traffic dropped, capacity
    /// added): a recovery after this is credited to the intervention.
    Intervention,
}

/// Time-series settings.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimeSeriesSpec {
    /// Width of a bucket, seconds.
    #[serde(default = "one")]
    pub bucket_s: f64,
}

impl Default for TimeSeriesSpec {
    fn default() -> Self {
        TimeSeriesSpec { bucket_s: one() }
    }
}

fn one() -> f64 {
    1.0
}

/// Recovery analysis after a trigger: compares each bucket after the trigger
/// ended with the baseline before the trigger started.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MetastabilitySpec {
    /// The baseline is measured from this time to the trigger's start (skips the
    /// warm-up).
    #[serde(default)]
    pub baseline_from_s: f64,
    /// Recovered means goodput within this fraction of the baseline goodput...
    #[serde(default = "default_goodput_band")]
    pub goodput_band: f64,
    /// ...and mean latency of answered requests at most this multiple of the
    /// baseline's...
    #[serde(default = "default_latency_factor")]
    pub latency_factor: f64,
    /// ...held for this many seconds.
    #[serde(default = "default_hold_s")]
    pub hold_s: f64,
    /// A system that needs longer than this after the trigger ended (or an
    /// intervention) to recover is metastable.
    #[serde(default = "default_max_recovery_s")]
    pub max_recovery_s: f64,
}

fn default_goodput_band() -> f64 {
    0.1
}
fn default_latency_factor() -> f64 {
    2.0
}
fn default_hold_s() -> f64 {
    30.0
}
fn default_max_recovery_s() -> f64 {
    120.0
}

fn default_seed() -> u64 {
    1
}

/// The network between services.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkSpec {
    /// One-way latency of every hop (request and response each take one sample).
    #[serde(default = "zero_dist")]
    pub one_way: DistSpec,
}

impl Default for NetworkSpec {
    fn default() -> Self {
        NetworkSpec {
            one_way: zero_dist(),
        }
    }
}

fn zero_dist() -> DistSpec {
    DistSpec::Constant { ms: 0.0 }
}

/// An open-loop source of logical requests: arrivals do not wait for answers.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// Name, unique among workloads.
    pub name: String,
    /// The service that receives the requests.
    pub target: String,
    /// When requests arrive.
    pub arrival: ArrivalSpec,
    /// Stop after this many requests. At least one of `requests` and `duration_s`
    /// is required; with both, whichever comes first.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub requests: Option<u64>,
    /// Stop generating requests after this many seconds of virtual time. At least
    /// one of `requests` and `duration_s` is required.
    #[serde(default)]
    pub duration_s: Option<f64>,
    /// The caller gives up on its request after this long (and closes the
    /// connection, so the target sees a cancellation). Absent: waits forever.
    #[serde(default)]
    pub timeout_ms: Option<f64>,
    /// The caller's deadline: sent with the request as a remaining-time budget
    /// (like gRPC's `grpc-timeout`), and the caller gives up when it expires.
    #[serde(default)]
    pub deadline_ms: Option<f64>,
}

/// An arrival process.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ArrivalSpec {
    /// Exponential gaps (a Poisson process): independent users.
    Poisson {
        /// Mean arrivals per second.
        rate_per_s: f64,
    },
    /// Evenly spaced arrivals, the first at time 0: a load generator.
    Constant {
        /// Arrivals per second.
        rate_per_s: f64,
    },
    /// Every request at time 0: a burst (requires `requests`).
    AtOnce {},
}

/// A service: a pool of workers, a queue, and a handler of steps run in order.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServiceSpec {
    /// Name, unique among services.
    pub name: String,
    /// Requests handled at once. A request holds its worker for its whole
    /// handler, downstream calls included (thread-per-request). Absent: unbounded
    /// (goroutine-per-request).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub workers: Option<u32>,
    /// Requests waiting for a worker (FIFO); when full, a new request is rejected
    /// at once with 503. Absent: unbounded.
    #[serde(default)]
    pub queue_capacity: Option<u32>,
    /// A request that arrives without a deadline gets one this far ahead, as a
    /// gateway that owns the user's time budget does.
    #[serde(default)]
    pub default_deadline_ms: Option<f64>,
    /// The handler, run in order for every request. Empty: answer at once.
    #[serde(default)]
    pub steps: Vec<StepSpec>,
    /// Admission control and load shedding in front of the handler.
    #[serde(default)]
    pub admission: AdmissionSpec,
}

/// Admission control: which arriving or queued requests a service refuses.
/// Refused requests are answered at once with 503 (`rejected`) and counted as
/// `shed`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdmissionSpec {
    /// Refuse this share of arriving requests at random, as a load balancer told
    /// to drop traffic does.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub drop_fraction: f64,
    /// At dequeue, drop requests that can no longer be answered in time.
    #[serde(default)]
    pub drop_expired: Option<DropExpiredSpec>,
}

/// Dropping requests at dequeue by their deadline: a server that knows the
/// caller's deadline need not serve orphans.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DropExpiredSpec {
    /// Drop when less than this remains before the request's deadline (about the
    /// normal service time: a request that cannot finish in time is dropped).
    /// 0: drop only requests already past their deadline.
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    pub margin_ms: f64,
}

/// One step of a handler: either local work (`work`) or a downstream call
/// (`call`, with its edge policies). Exactly one of `work` and `call`;
/// `timeout_ms`, `retry`, `deadline` and `context` apply only to `call`,
/// `on_cancel` only to `work`; anything else is an error.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepSpec {
    /// Local work: its duration distribution. Holds the request's worker.
    #[serde(default)]
    pub work: Option<DistSpec>,
    /// For `work`: what the work does when its caller gives up. `finish` (default):
    /// runs on and its result is wasted; `stop`: it watches for cancellation (as Go
    /// code in a `select` on `ctx.Done()`) and stops early.
    #[serde(default)]
    pub on_cancel: Option<OnCancel>,
    /// A downstream call: the callee's service name.
    #[serde(default)]
    pub call: Option<String>,
    /// For `call`: per-attempt timeout. Absent: no timeout (the deadline, if any,
    /// still bounds each attempt).
    #[serde(default)]
    pub timeout_ms: Option<f64>,
    /// For `call`: the retry loop around attempts. Absent: one attempt.
    #[serde(default)]
    pub retry: Option<RetrySpec>,
    /// For `call`: how the request's deadline shapes attempts and travels down.
    /// Absent: the deadline (if the request has one) only bounds attempts and is
    /// not sent to the callee; present, `propagate` defaults to `true`.
    #[serde(default)]
    pub deadline: Option<DeadlineSpec>,
    /// For `call`: whether the call is tied to this request's lifetime. `request`
    /// (default): when this request's caller gives up, the call is cancelled and
    /// the handler stops (Go's `r.Context()`). `background`: the call runs on
    /// (Go's `context.Background()`), cutting the cancellation wire.
    #[serde(default)]
    pub context: Option<CallContext>,
}

/// What local work does when its caller gives up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnCancel {
    /// Run to the end; the result is wasted work.
    Finish,
    /// Stop at once and free the worker.
    Stop,
}

/// The context a downstream call runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CallContext {
    /// Cancelled with the request that makes it.
    Request,
    /// Independent of the request that makes it.
    Background,
}

/// The retry loop of a call. Counts tries as resilience4j's `maxAttempts` does:
/// the first attempt included.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrySpec {
    /// Attempts in all, the first included (3 = one try and two retries).
    #[schemars(range(min = 1))]
    pub max_attempts: u32,
    /// The wait before each retry. Default: no wait.
    #[serde(default)]
    pub backoff: BackoffSpec,
}

/// The wait before a retry.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum BackoffSpec {
    /// The same wait before every retry (no jitter: retries of requests that
    /// failed together arrive together).
    Fixed {
        /// The wait.
        ms: f64,
    },
}

impl Default for BackoffSpec {
    fn default() -> Self {
        BackoffSpec::Fixed { ms: 0.0 }
    }
}

/// Deadline handling on a call edge. A request's deadline, when it has one,
/// always bounds every attempt and every backoff; this block adds the rest.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeadlineSpec {
    /// Send the callee the remaining budget (attempt timeout minus `margin_ms`) as
    /// a relative deadline, which the callee honours from when it receives it.
    #[serde(default = "yes")]
    pub propagate: bool,
    /// Subtracted from the budget sent down, for the response's trip back; it must
    /// exceed the round trip, or the callee's error arrives after the caller gave up.
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    pub margin_ms: f64,
    /// Cap on the first attempt's timeout, so that a retry has room.
    #[serde(default)]
    pub first_attempt_cap_ms: Option<f64>,
    /// No attempt is sent when less than this remains: a request known to be too
    /// late only costs others.
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    pub min_budget_ms: f64,
}

fn yes() -> bool {
    true
}

/// A distribution of durations, in milliseconds.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum DistSpec {
    /// Always the same.
    Constant {
        /// The duration.
        #[schemars(range(min = 0.0))]
        ms: f64,
    },
    /// Uniform between two bounds.
    Uniform {
        /// Lower bound.
        #[schemars(range(min = 0.0))]
        min_ms: f64,
        /// Upper bound.
        #[schemars(range(min = 0.0))]
        max_ms: f64,
    },
    /// Exponential (memoryless), e.g. the service time of an M/M/c queue.
    Exponential {
        /// Mean.
        mean_ms: f64,
    },
    /// Log-normal, given by two quantiles people read off dashboards.
    Lognormal {
        /// Median (p50).
        median_ms: f64,
        /// 99th percentile; must exceed the median.
        p99_ms: f64,
    },
    /// A mixture: each sample comes from one component, chosen with probability `p`.
    Mixture {
        /// Components; their `p` must sum to 1.
        of: Vec<MixtureComponent>,
    },
}

/// One component of a mixture.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MixtureComponent {
    /// Probability of this component, in [0, 1].
    #[schemars(range(min = 0.0, max = 1.0))]
    pub p: f64,
    /// The component's distribution.
    pub dist: DistSpec,
}

/// A named variant: parameter-path overrides applied to the base model.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VariantSpec {
    /// Name, unique among variants; a row of `summary.csv`.
    pub name: String,
    /// What this variant changes and why.
    #[serde(default)]
    pub description: String,
    /// Overrides as `PATH: VALUE`. A path is dot-separated keys; `[name]` selects
    /// the element of a list with that `name` (for handler steps, the call to that
    /// service), `[3]` the element at an index:
    /// `services[A].steps[B].timeout_ms`, `workloads[users].deadline_ms`.
    #[serde(default)]
    pub set: Map<String, Value>,
}

/// Limits that stop a runaway run with a clear message.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitsSpec {
    /// Most events one variant may simulate.
    #[serde(default = "default_max_events")]
    pub max_events: u64,
    /// Most requests (handler executions) alive at once, in all services.
    #[serde(default = "default_max_in_flight")]
    pub max_in_flight: u64,
}

fn default_max_events() -> u64 {
    2_000_000_000
}

fn default_max_in_flight() -> u64 {
    5_000_000
}

impl Default for LimitsSpec {
    fn default() -> Self {
        LimitsSpec {
            max_events: default_max_events(),
            max_in_flight: default_max_in_flight(),
        }
    }
}
