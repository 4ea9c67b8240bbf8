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
