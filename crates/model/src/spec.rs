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
use std::collections::BTreeMap;

/// A model file: a system of workloads and services, and named variants of it.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// The JSON Schema the file follows, for editors that complete and check
    /// it as it is typed: the path from the file to `docs/model.schema.json`
    /// (`../docs/model.schema.json` in `models/`), or its URL. The simulation
    /// ignores it.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Name of the model; also the default output folder `outputs/<name>/`:
    /// at most 200 bytes, without control characters, `/` or `\`, and not
    /// starting with `.`.
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
    /// The machines instances run on, in zones (failure domains), and their
    /// correlated slow periods. Absent: one host per instance, never slow.
    #[serde(default)]
    pub hosts: Option<HostsSpec>,
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
    /// Ramp: move numeric values linearly from what they were when it starts
    /// to the values in `set` over this many seconds, in 1-second steps.
    /// Absent: a step change. Entries that start while a ramp moves apply at
    /// their own instants, between its steps (a value the ramp moves too is
    /// set again by its next step). At most 10,000 s; a model's
    /// timelines, its variants' included, resolve into at most 500,000 steps
    /// in all.
    #[serde(default)]
    pub over_s: Option<f64>,
    /// What this change means for metastability detection.
    #[serde(default)]
    pub role: Option<TimelineRole>,
    /// Overrides as `PATH: VALUE`, as in a variant, but not of what holds for
    /// the whole run (`seed`, `limits`, `horizon_s`, `timeseries`,
    /// `metastability`, `focus`), nor of the model's shape (its services,
    /// workloads and steps).
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

/// Recovery analysis after a trigger: compares windows of `hold_s` after the
/// trigger ended with the baseline before the trigger started, against the
/// noise the baseline itself shows (docs/verdicts.md).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MetastabilitySpec {
    /// The baseline is measured from this time to the trigger's start (skips the
    /// warm-up).
    #[serde(default)]
    pub baseline_from_s: f64,
    /// Recovered means a window serves its own demand (successes per
    /// first-try arrival) at most this fraction below the baseline's share,
    /// or within the noise of its demand if that is wider (serving more
    /// than the baseline's share always counts), whatever the load does...
    #[serde(default = "default_goodput_band")]
    pub goodput_band: f64,
    /// ...and its mean latency of answered requests at most this multiple of
    /// the baseline's worst window of the same length (or of its mean, if
    /// larger)...
    #[serde(default = "default_latency_factor")]
    pub latency_factor: f64,
    /// ...over a window of this many seconds.
    #[serde(default = "default_hold_s")]
    pub hold_s: f64,
    /// How many standard errors of a window's successes below the
    /// baseline's share of its demand still count as noise (one-sided): 3
    /// misses a healthy window about once in 740.
    #[serde(default = "default_noise_z")]
    pub noise_z: f64,
    /// A baseline whose attempts are at least this share retries, while
    /// markedly fewer requests succeed than arrive, is already in a retry
    /// storm: `unhealthy_before_trigger`, not the trigger's fault.
    #[serde(default = "default_storm_retry_share")]
    pub storm_retry_share: f64,
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
fn default_noise_z() -> f64 {
    3.0
}
fn default_storm_retry_share() -> f64 {
    0.3
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

/// The machines of the model: `zones` failure domains of `per_zone` hosts each.
/// Services place their instances on them (`placement`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostsSpec {
    /// Failure domains.
    #[schemars(range(min = 1))]
    pub zones: u32,
    /// Hosts in each zone.
    #[schemars(range(min = 1))]
    pub per_zone: u32,
    /// Host-level slow periods (GC pauses, noisy neighbours): every host
    /// alternates between normal and slow periods of exponential lengths, on its
    /// own random stream, and everything that starts on a slow host takes
    /// `factor` times longer. Absent: hosts are never slow.
    #[serde(default)]
    pub slow: Option<SlowPeriodsSpec>,
}

/// An on/off process of slow periods per host.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SlowPeriodsSpec {
    /// Mean time between slow periods, s.
    pub mean_gap_s: f64,
    /// Mean length of a slow period, s.
    pub mean_length_s: f64,
    /// How much longer local work takes when it starts in a slow period (> 1).
    pub factor: f64,
}

/// How a service's instances sit on the hosts. An instance is replica
/// `i % replicas` of shard `i / replicas`, where `replicas = instances / shards`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// Replica `r` of a shard in zone `r % zones` (replicas in different
    /// failure domains), on host `shard % per_zone` of it.
    #[default]
    Spread,
    /// Every replica of a shard on one host (`shard`-th host, zones first):
    /// a hedge to another replica meets the same slow host.
    Colocated,
}

/// An open-loop source of logical requests: arrivals do not wait for answers.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// Name, unique among workloads. It names output columns
    /// (`NAME.latency_p99_ms`), so it may not hold '.', ',', quotes or
    /// control characters, nor be `run` (the run's own figures in the tidy
    /// outputs).
    pub name: String,
    /// The service that receives the requests.
    pub target: String,
    /// When requests arrive.
    pub arrival: ArrivalSpec,
    /// Copies of this client: `count` identical workloads, each with the
    /// arrivals written here and its own policy state (its own breaker,
    /// budget, rate limiter, as separate client processes have), named
    /// `name-01` to `name-N` in outputs (two digits at least). A path names
    /// them together by the workload's name (`workloads[client].retry`),
    /// as written. Absent: one workload, named `name`.
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub count: Option<u32>,
    /// How the copies appear in outputs. `each` (the default): one workload
    /// per copy, `name-01`…, as above. `summed`: one workload `name`, whose
    /// counts add up the copies' and whose latency quantiles are those of all
    /// their requests together: twenty identical clients are one row to a
    /// reader, and one line on a chart. The copies still run apart, each with
    /// its own policy state; only the outputs change. Requires `count`.
    #[serde(default)]
    pub report_copies: CopiesReport,
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
    /// How the caller's attempts carry deadlines, as on a call step: with
    /// `{"propagate": true}` each attempt sends its timeout (minus `margin_ms`) as
    /// the callee's deadline. Absent: only `deadline_ms`, if set, is sent.
    #[serde(default)]
    pub deadline: Option<DeadlineSpec>,
    /// The caller's own retry loop; `timeout_ms` is then per attempt. Absent:
    /// one attempt.
    #[serde(default)]
    pub retry: Option<RetrySpec>,
    /// Picks the callee's instance for each attempt (when it has several).
    #[serde(default)]
    pub balancer: Option<BalancerKind>,
    /// Ejects failing instances from this caller's balancer (Envoy).
    #[serde(default)]
    pub outlier_detection: Option<OutlierDetectionSpec>,
    /// How long connecting to a down (blackholed) instance takes to fail.
    /// Absent: only the attempt's timeout bounds it.
    #[serde(default)]
    pub connect_timeout_ms: Option<f64>,
    /// The caller's circuit breaker, asked before each attempt.
    #[serde(default)]
    pub breaker: Option<BreakerSpec>,
    /// The caller's bulkhead: calls it makes at once.
    #[serde(default)]
    pub bulkhead: Option<BulkheadSpec>,
    /// The caller's own rate limiter (respecting a downstream's quota).
    #[serde(default)]
    pub rate_limit: Option<RateLimitSpec>,
    /// Client-side adaptive throttling: reject locally when the callee rejects.
    #[serde(default)]
    pub throttle: Option<ThrottleSpec>,
    /// Priority class of this workload's requests, carried down the chain
    /// (services may shed classes at different loads). Named as services
    /// and workloads are: no '.', ',', quotes or control characters.
    #[serde(default)]
    pub class: Option<String>,
    /// How far the callers' clocks are ahead of true time, ms (negative:
    /// behind). Matters only to deadlines sent as absolute times.
    #[serde(default)]
    pub clock_offset_ms: f64,
}

/// How a workload's copies appear in outputs ([`WorkloadSpec::report_copies`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CopiesReport {
    /// One workload per copy, named `name-01`….
    #[default]
    Each,
    /// One workload named `name`, summed over the copies.
    Summed,
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
    /// A Poisson process whose rate goes from `start_rate_per_s` through
    /// `stages`, linearly within each, as k6's `stages`: a ramp to a
    /// Black-Friday peak, a hold, a ramp down; a stage of zero length is a
    /// step. After the last stage the rate holds its last target (the
    /// workload's `duration_s` ends it). Every target is addressable by path
    /// (`workloads[users].arrival.stages[1].target_rate_per_s`), so a sweep
    /// or a search can vary the peak.
    Stages {
        /// The rate at time 0. Absent: 0.
        #[serde(default)]
        #[schemars(range(min = 0.0))]
        start_rate_per_s: f64,
        /// The stages, in order.
        stages: Vec<StageSpec>,
    },
    /// A Poisson process with a daily (or any) cycle:
    /// `mean + amplitude × sin(2π (t − phase_s) / period_s)` per second.
    Sinusoid {
        /// The mean rate.
        #[schemars(range(min = 0.0))]
        mean_rate_per_s: f64,
        /// The swing either side of the mean (at most the mean).
        #[schemars(range(min = 0.0))]
        amplitude_rate_per_s: f64,
        /// The cycle's length, s (86,400 for a day).
        period_s: f64,
        /// When the rate crosses its mean going up, s. Absent: 0.
        #[serde(default)]
        phase_s: f64,
    },
    /// A Poisson process at `base_rate_per_s`, and at `burst_rate_per_s` for
    /// `length_s` every `every_s` seconds from `first_at_s`: a cron job, a
    /// marketing push, a retrying batch client.
    Bursts {
        /// The rate between bursts.
        #[schemars(range(min = 0.0))]
        base_rate_per_s: f64,
        /// The rate during a burst.
        #[schemars(range(min = 0.0))]
        burst_rate_per_s: f64,
        /// From one burst's start to the next's, s.
        every_s: f64,
        /// A burst's length, s (at most `every_s`).
        length_s: f64,
        /// The first burst's start, s. Absent: 0.
        #[serde(default)]
        #[schemars(range(min = 0.0))]
        first_at_s: f64,
    },
    /// A recorded traffic trace replayed as a Poisson process: `rates_per_s[k]`
    /// from `k × bucket_s` to `(k + 1) × bucket_s`, then nothing. The rates
    /// are listed, or read from a CSV `file` when the model is loaded.
    Trace {
        /// The rate in each bucket, in order (at most 10⁶). Absent: read from
        /// `file`.
        #[serde(default)]
        rates_per_s: Vec<f64>,
        /// A CSV file of the rates, one row per bucket, relative to the model
        /// file's folder (a sweep's inline model: the sweep file's): its one
        /// column, or the one named `column` in its header row. A header row
        /// (a first row that is not numbers), blank lines and lines starting
        /// with `#` are skipped. Read once, when the model is loaded: a change
        /// to the file needs a new run, and the run is a function of the
        /// rates read (at most 64 MiB). A model names the files it reads:
        /// the command line reads any the user can (`../data/peak.csv`, an
        /// absolute path), as it would run a script; the Python package
        /// reads a model given as a dict only from the current folder (no
        /// absolute path, no `..`, no symbolic link out of it) unless told
        /// `allow_files_outside=True`, so that a service that runs models
        /// from others does not read or quote its own files.
        #[serde(default)]
        file: Option<String>,
        /// The header of the `file`'s column that holds the rates (required
        /// when it has several columns, e.g. `time,rps`).
        #[serde(default)]
        column: Option<String>,
        /// Each bucket's length, s. Absent: 1.
        #[serde(default = "one_second")]
        bucket_s: f64,
    },
    /// A closed loop: a fixed population of `users`, each sending one request,
    /// waiting for its answer (the workload's retries are the user's
    /// refreshes after an error or a timeout), thinking for a `think` sample,
    /// then sending the next. Each user starts after one think time. The offered
    /// load follows the answers: slow answers mean fewer new requests, and
    /// refreshes mean more.
    ClosedLoop {
        /// Users, each with at most one request outstanding.
        #[schemars(range(min = 1))]
        users: u32,
        /// Think time between an answer (or giving up) and the next request.
        think: DistSpec,
    },
}

fn one_second() -> f64 {
    1.0
}

/// One stage of a `stages` arrival.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StageSpec {
    /// How long the stage lasts, s (0: a step to its target).
    #[schemars(range(min = 0.0))]
    pub duration_s: f64,
    /// The rate at the stage's end; linear from the rate before it.
    #[schemars(range(min = 0.0))]
    pub target_rate_per_s: f64,
}

/// A service: a pool of workers, a queue, and a handler of steps run in order.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServiceSpec {
    /// Name, unique among services. It names output columns
    /// (`NAME.calls`), so it may not hold '.', ',', quotes or control
    /// characters, nor be `run` (the run's own figures in the tidy outputs).
    pub name: String,
    /// Requests handled at once. A request holds its worker for its whole
    /// handler, downstream calls included (thread-per-request). Absent: unbounded
    /// (goroutine-per-request).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub workers: Option<u32>,
    /// Requests waiting for a worker; when full, a new request is rejected
    /// at once with 503. Absent: unbounded.
    #[serde(default)]
    pub queue_capacity: Option<u32>,
    /// Which waiting request a freed worker takes. Absent: `fifo`.
    #[serde(default)]
    pub queue_discipline: Option<QueueDisciplineSpec>,
    /// Work that grows with the instance's own load (lock contention,
    /// cache thrashing, a garbage collector under pressure). Absent: work
    /// takes what it draws, however busy the instance.
    #[serde(default)]
    pub contention: Option<ContentionSpec>,
    /// The processors each instance's requests share while they work (a
    /// saturated CPU). Absent: work takes what it draws however many
    /// requests run at once, as if every worker had a core of its own.
    #[serde(default)]
    pub cpu: Option<CpuSpec>,
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
    /// Identical instances behind the callers' load balancers; each has its own
    /// `workers`, queue and admission state.
    #[serde(default = "one_u32")]
    #[schemars(range(min = 1))]
    pub instances: u32,
    /// How many instances (the first ones) are down.
    #[serde(default)]
    pub instances_down: u32,
    /// What a caller meets at a down instance.
    #[serde(default)]
    pub down_mode: DownMode,
    /// The instances form this many shards (each holding a part of the data),
    /// each of `instances / shards` replicas; `instances` must be a multiple. A
    /// `fan_out` call sends one child call per shard, and every attempt of a
    /// child goes to a replica of its shard.
    #[serde(default = "one_u32")]
    #[schemars(range(min = 1))]
    pub shards: u32,
    /// Where the instances run (with the model's `hosts`).
    #[serde(default)]
    pub placement: Placement,
    /// Each replica's own latency profile: replica `r` of every shard takes
    /// `replica_work_factor[r]` times the handler's work (two replicas with
    /// equal code can differ: older hardware, a busier neighbour). Absent:
    /// all alike. One factor per replica (`instances / shards`).
    #[serde(default)]
    pub replica_work_factor: Option<Vec<f64>>,
    /// How far the clocks of this service's hosts are ahead of true time, ms
    /// (negative: behind). Matters only to deadlines sent as absolute times
    /// (`deadline.encoding: absolute`): a host whose clock is ahead sees them
    /// expire early, one behind sees them late.
    #[serde(default)]
    pub clock_offset_ms: f64,
    /// Per-host clock skew on top of `clock_offset_ms`: each instance's clock
    /// is off by a further amount drawn uniformly from `[-x, x]` ms, once per
    /// run, on its own random stream.
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    pub clock_spread_ms: f64,
}

/// What a caller meets at a down instance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DownMode {
    /// Connection refused at once (the host answers with a reset).
    #[default]
    Refuse,
    /// No answer at all: the attempt hangs until its connect timeout (or its
    /// timeout).
    Blackhole,
}

/// A caller's load balancer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BalancerKind {
    /// In turn (Envoy's default).
    #[default]
    RoundRobin,
    /// Uniformly at random.
    Random,
    /// The instance with the fewest of this caller's attempts in flight.
    LeastOutstanding,
    /// The less loaded of two instances drawn at random.
    PowerOfTwoChoices,
}

/// Envoy's outlier detection (consecutive 5xx), kept by each caller: a failing
/// instance is ejected from the caller's balancer for a while.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutlierDetectionSpec {
    /// Consecutive failures that eject an instance.
    #[serde(default = "five_u32")]
    pub consecutive_5xx: u32,
    /// Ejection sweep interval.
    #[serde(default = "ten_thousand")]
    pub interval_ms: f64,
    /// Ejection time, multiplied by the times ejected.
    #[serde(default = "thirty_thousand")]
    pub base_ejection_time_ms: f64,
    /// Longest ejection.
    #[serde(default = "three_hundred_thousand")]
    pub max_ejection_time_ms: f64,
    /// Most instances ejected at once, percent.
    #[serde(default = "ten_u32")]
    pub max_ejection_percent: u32,
    /// Eject one instance even when the percentage allows none (small clusters).
    #[serde(default)]
    pub always_eject_one_host: bool,
}

fn thirty_thousand() -> f64 {
    30_000.0
}
fn three_hundred_thousand() -> f64 {
    300_000.0
}

/// Admission control: which arriving or queued requests a service refuses.
/// Order at arrival: `drop_fraction`, `rate_limit` (429), `shed_classes`,
/// `concurrency_limit`, `drop_expired`, then workers and queue; at dequeue:
/// `drop_expired`, then `codel`.
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
    /// At arrival and at dequeue, drop requests that can no longer be answered
    /// in time (a deadline middleware rejecting with 504 before any work; a
    /// queue consumer acking and dropping expired messages).
    #[serde(default)]
    pub drop_expired: Option<DropExpiredSpec>,
    /// A server-side rate limit: requests over it are refused with 429 and a
    /// Retry-After.
    #[serde(default)]
    pub rate_limit: Option<RateLimitSpec>,
    /// Priority shedding: a request of class `C` is refused when the requests in
    /// flight (working or queued) reach `shed_classes[C]`. Classes not listed
    /// are only bounded by workers and queue.
    #[serde(default)]
    pub shed_classes: BTreeMap<String, u32>,
    /// An adaptive concurrency limit on requests in flight (Netflix
    /// concurrency-limits): arrivals over the limit are refused.
    #[serde(default)]
    pub concurrency_limit: Option<ConcurrencyLimitSpec>,
    /// CoDel on the queue: at dequeue, drop requests that waited too long while
    /// the queue stayed above its target delay.
    #[serde(default)]
    pub codel: Option<CodelSpec>,
    /// A Retry-After sent with every 503 this service answers at arrival (shed or
    /// queue full); callers obey it over their own backoff. Absent: none.
    #[serde(default)]
    pub retry_after_ms: Option<f64>,
}

/// resilience4j's Bulkhead (semaphore): at most `max_concurrent_calls` calls at
/// once; a call that finds it full waits up to `max_wait_ms` (never past its
/// deadline) for a slot, then fails without being sent.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkheadSpec {
    /// Calls at once.
    #[serde(default = "twenty_five")]
    #[schemars(range(min = 1))]
    pub max_concurrent_calls: u32,
    /// Longest wait for a slot; 0 fails fast.
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    pub max_wait_ms: f64,
}

fn twenty_five() -> u32 {
    25
}

/// A rate limiter. On a service it answers 429 with a Retry-After; on a call edge
/// it fails the attempt locally (or, resilience4j, makes it wait).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum RateLimitSpec {
    /// Refills continuously at `rate_per_s`, holds at most `burst`; starts full.
    TokenBucket {
        /// Tokens per second.
        rate_per_s: f64,
        /// Bucket size.
        #[schemars(range(min = 1))]
        burst: u32,
    },
    /// At most `limit` per window, windows aligned to time 0: a burst at the end
    /// of one window and another at the start of the next pass (the boundary flaw).
    FixedWindow {
        /// Requests per window.
        #[schemars(range(min = 1))]
        limit: u32,
        /// Window length.
        window_ms: f64,
    },
    /// At most `limit` in any window of `window_ms` ending now (a sliding log).
    SlidingWindow {
        /// Requests per window.
        #[schemars(range(min = 1))]
        limit: u32,
        /// Window length.
        window_ms: f64,
    },
    /// resilience4j's RateLimiter: `limit_for_period` permits per
    /// `limit_refresh_period_ms`; a caller waits up to `timeout_ms` for one.
    Resilience4j {
        /// Permits per period.
        #[serde(default = "fifty_u32")]
        limit_for_period: u32,
        /// Period.
        #[serde(default = "half_microsecond")]
        limit_refresh_period_ms: f64,
        /// Longest wait for a permit.
        #[serde(default = "five_thousand")]
        timeout_ms: f64,
    },
}

fn fifty_u32() -> u32 {
    50
}
fn half_microsecond() -> f64 {
    0.0005
}
fn five_thousand() -> f64 {
    5000.0
}

/// Client-side adaptive throttling.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ThrottleSpec {
    /// Google SRE (ch. 21): reject locally with probability
    /// max(0, (requests − k·accepts) / (requests + 1)) over a trailing window.
    Sre {
        /// Multiplier of accepts.
        #[serde(default = "two")]
        k: f64,
        /// Trailing window, seconds.
        #[serde(default = "one_twenty")]
        window_s: f64,
    },
    /// Envoy's admission control: reject with probability
    /// ((n − s/sr_threshold)/(n + 1))^(1/aggression), at most
    /// `max_rejection_probability`, over `sampling_window_s`.
    EnvoyAdmissionControl {
        /// Window, seconds.
        #[serde(default = "thirty")]
        sampling_window_s: f64,
        /// Success-rate threshold in (0, 1].
        #[serde(default = "point_nine_five")]
        sr_threshold: f64,
        /// Aggression ≥ 1.
        #[serde(default = "one")]
        aggression: f64,
        /// Cap on the rejection probability.
        #[serde(default = "point_eight")]
        max_rejection_probability: f64,
    },
}

fn one_twenty() -> f64 {
    120.0
}
fn thirty() -> f64 {
    30.0
}
fn point_nine_five() -> f64 {
    0.95
}
fn point_eight() -> f64 {
    0.8
}

/// An adaptive concurrency limit (Netflix concurrency-limits).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ConcurrencyLimitSpec {
    /// A fixed limit.
    Fixed {
        /// Requests in flight.
        #[schemars(range(min = 1))]
        limit: u32,
    },
    /// AIMDLimit: +1 while busy and fast; × `backoff_ratio` on a drop or a
    /// latency over `timeout_ms`.
    Aimd {
        /// Starting limit.
        #[serde(default = "twenty_u32")]
        #[schemars(range(min = 1))]
        initial_limit: u32,
        /// Floor.
        #[serde(default = "twenty_u32")]
        #[schemars(range(min = 1))]
        min_limit: u32,
        /// Ceiling.
        #[serde(default = "two_hundred_u32")]
        #[schemars(range(min = 1))]
        max_limit: u32,
        /// Multiplier on a drop, strictly between 0 and 1.
        #[serde(default = "point_nine")]
        backoff_ratio: f64,
        /// Latency above which a sample counts as a drop.
        #[serde(default = "five_thousand")]
        timeout_ms: f64,
    },
    /// Gradient2Limit: follows the ratio of long-term to current latency.
    Gradient2 {
        /// Starting limit.
        #[serde(default = "twenty_u32")]
        #[schemars(range(min = 1))]
        initial_limit: u32,
        /// Floor.
        #[serde(default = "twenty_u32")]
        #[schemars(range(min = 1))]
        min_limit: u32,
        /// Ceiling.
        #[serde(default = "two_hundred_u32")]
        #[schemars(range(min = 1))]
        max_concurrency: u32,
        /// Smoothing of limit changes, in [0, 1].
        #[serde(default = "point_two")]
        #[schemars(range(min = 0.0, max = 1.0))]
        smoothing: f64,
        /// Latency growth tolerated before backing off (a ratio, ≥ 1).
        #[serde(default = "one_point_five")]
        #[schemars(range(min = 1.0))]
        rtt_tolerance: f64,
    },
}

fn twenty_u32() -> u32 {
    20
}
fn two_hundred_u32() -> u32 {
    200
}
fn point_nine() -> f64 {
    0.9
}
fn one_point_five() -> f64 {
    1.5
}

/// CoDel (Nichols & Jacobson), applied at dequeue.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodelSpec {
    /// Acceptable queueing delay.
    #[serde(default = "five")]
    pub target_ms: f64,
    /// Window over which the delay must stay above target before dropping.
    #[serde(default = "hundred")]
    pub interval_ms: f64,
}

fn five() -> f64 {
    5.0
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

/// Load-dependent work: a work step's drawn duration is multiplied by
/// `1 + per_request × (n − 1)^exponent`, where `n` is the requests in
/// service on the instance (holding a worker, itself included) when the
/// duration is drawn. With `exponent: 1` each request slows the others by a
/// fixed share (an instance's throughput `n / duration` then levels off at
/// `1 / (per_request × work)`); above 1 throughput peaks at some `n` and
/// falls past it: congestive collapse, where a busier instance does less.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContentionSpec {
    /// How much each other request in service slows a request's work.
    #[schemars(range(min = 0.0))]
    pub per_request: f64,
    /// The curve's power: 1 linear, 2 quadratic. Absent: 1.
    #[serde(default)]
    #[schemars(range(min = 1.0))]
    pub exponent: Option<f64>,
}

/// An instance's processors, shared by the work of its requests in service
/// by egalitarian processor sharing (Kleinrock's fluid model of a
/// time-sliced CPU): with `n` requests in a `work` step on the instance,
/// each progresses at `min(1, cores / n)` times its own pace, so the work it
/// drew takes longer the more requests share the cores. `workers` still
/// bounds the requests at once (threads) and the queue is unchanged; a
/// request waiting for a downstream call uses no CPU. Work keeps everything
/// that scales what it draws (`contention`, hosts' slow periods,
/// `replica_work_factor`, `drawn_at`, a step's `error`); a work step's
/// `timeout_ms` or `deadline` limit is wall time, counted from the work's
/// start. With `workers` absent and `cores: 1`, the textbook M/G/1-PS queue.
/// A timeline may change `cores` (work under way keeps the progress it made)
/// but not add or remove the `cpu` block.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CpuSpec {
    /// Cores per instance, a whole number of at least 1. Up to this many
    /// requests work at full pace at once; more share them equally.
    #[schemars(range(min = 1))]
    pub cores: u32,
}

/// Which waiting request a freed worker takes next. Every discipline is
/// non-preemptive: a request that holds a worker keeps it.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueDisciplineSpec {
    /// First come, first served: the oldest waiting request.
    Fifo,
    /// Last come, first served: the newest. Under overload the requests
    /// served are the fresh ones, whose callers still wait; the old ones
    /// wait on (and time out) at the back.
    Lifo,
    /// FIFO while the queue is short, LIFO while it holds more than
    /// `above` requests, as Facebook's servers do under overload ("Fail at
    /// Scale", Maurer, ACM Queue 2015: "during normal operating conditions,
    /// requests are processed in FIFO order, but when a queue is starting to
    /// form, the server switches to LIFO mode").
    AdaptiveLifo {
        /// The queue length above which the newest request is served first.
        above: u32,
    },
    /// Non-preemptive priority by request class: the oldest waiting request
    /// of the first class in `order` that has one; classes not listed, and
    /// requests without a class, after every listed class, oldest first.
    Priority {
        /// Class names, highest priority first.
        order: Vec<String>,
    },
}

/// A work step that fails by itself, with probability `p`: an HTTP 500 or
/// a gRPC INTERNAL from a bug or a bad dependency, a fast 503 from a
/// server that sheds, a slow error that looks like a timeout. The handler
/// answers its caller with the failure and runs none of its later steps.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepErrorSpec {
    /// Probability, in [0, 1], that an execution of the step fails. Drawn
    /// per request from its own stream, so every variant fails the same
    /// requests at the same `p`; a timeline entry or a sweep may change it
    /// (`services[api].steps[0].error.p`), for an error spike.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub p: f64,
    /// How long a failing execution works before it answers, as its own
    /// distribution: a fast 503 (`{"kind": "constant", "ms": 1}`), a slow
    /// error. Absent: as long as a successful one, scaled by `fraction`.
    #[serde(default)]
    pub work: Option<DistSpec>,
    /// Without `work`: the share of the step's drawn work done before it
    /// fails (0.3: it fails 30% of the way in). Absent: 1, the error comes
    /// at the end of the work.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub fraction: Option<f64>,
    /// What the caller is told: `error` (HTTP 500, gRPC INTERNAL; default)
    /// or `rejected` (HTTP 503, gRPC UNAVAILABLE). A retry policy's
    /// `retry_on` decides which it retries.
    #[serde(default)]
    pub status: Option<ErrorStatus>,
}

/// The failure a step's own error reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorStatus {
    /// A server error (HTTP 500, gRPC INTERNAL): `retry_on: ["error"]`.
    #[default]
    Error,
    /// The server is unavailable (HTTP 503, gRPC UNAVAILABLE):
    /// `retry_on: ["rejected"]`.
    Rejected,
}

/// When a work step's duration is fixed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DrawnAt {
    /// When the work starts: from the model in force then, slowed by the
    /// host as it is then (a CPU-bound handler: its cost is paid when it
    /// runs).
    #[default]
    Start,
    /// When the request is admitted to the service: from the model in force
    /// then, slowed by the host as it was then (a delay computed on arrival,
    /// a request whose cost is set by its payload). A request queued during
    /// a slowdown but served after it is still slow.
    Admission,
}

/// One step of a handler: local work (`work`), a downstream call (`call`,
/// with its edge policies), or calls to several services at once
/// (`parallel`, each branch a call with its own policies). Exactly one of
/// `work`, `call` and `parallel`;
/// `connect_timeout_ms`, `retry`, `breaker`, `bulkhead`,
/// `rate_limit`, `throttle`, `balancer`, `outlier_detection` and
/// `context` apply only to `call`,
/// `on_cancel`, `error` and `drawn_at` only to `work`; `timeout_ms` and `deadline` to both;
/// `optional` only to a branch of `parallel`, and a `parallel` step takes
/// nothing else but `only_classes`; anything else is an error.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepSpec {
    /// Local work: its duration distribution. Holds the request's worker.
    #[serde(default)]
    pub work: Option<DistSpec>,
    /// Run this step only for requests of these priority classes (a workload's
    /// `class`, carried down the chain); others skip it. Routes requests by kind:
    /// `{"call": "payments", "only_classes": ["checkout"]}`. Absent: every request.
    #[serde(default)]
    pub only_classes: Option<Vec<String>>,
    /// For `work`: what the work does when its caller gives up. `finish` (default):
    /// runs on and its result is wasted; `stop`: it watches for cancellation (as Go
    /// code in a `select` on `ctx.Done()`) and stops early.
    #[serde(default)]
    pub on_cancel: Option<OnCancel>,
    /// For `work`: it fails by itself with a probability (see
    /// [`StepErrorSpec`]). Absent: it never fails by itself.
    #[serde(default)]
    pub error: Option<StepErrorSpec>,
    /// For `work`: when its duration is drawn, `start` (default) or
    /// `admission` (see [`DrawnAt`]).
    #[serde(default)]
    pub drawn_at: Option<DrawnAt>,
    /// A downstream call: the callee's service name.
    #[serde(default)]
    pub call: Option<String>,
    /// For `call`: per-attempt timeout. Absent: no timeout (the deadline, if any,
    /// still bounds each attempt). For `work`: a static limit on the work (a
    /// database's `statement_timeout`): work that would take longer is stopped
    /// at the limit, frees its worker, and fails the handler with `timeout`.
    #[serde(default)]
    pub timeout_ms: Option<f64>,
    /// For `call`: the retry loop around attempts. Absent: one attempt.
    #[serde(default)]
    pub retry: Option<RetrySpec>,
    /// Picks the callee's instance for each attempt (when it has several).
    #[serde(default)]
    pub balancer: Option<BalancerKind>,
    /// Ejects failing instances from this caller's balancer (Envoy).
    #[serde(default)]
    pub outlier_detection: Option<OutlierDetectionSpec>,
    /// How long connecting to a down (blackholed) instance takes to fail.
    /// Absent: only the attempt's timeout bounds it.
    #[serde(default)]
    pub connect_timeout_ms: Option<f64>,
    /// For `call`: a circuit breaker, asked before each attempt.
    #[serde(default)]
    pub breaker: Option<BreakerSpec>,
    /// For `call`: a bulkhead, the calls this service makes on this edge at once.
    #[serde(default)]
    pub bulkhead: Option<BulkheadSpec>,
    /// For `call`: a client-side rate limiter, asked before each attempt.
    #[serde(default)]
    pub rate_limit: Option<RateLimitSpec>,
    /// For `call`: client-side adaptive throttling, asked before each attempt.
    #[serde(default)]
    pub throttle: Option<ThrottleSpec>,
    /// For `call`: how the request's deadline shapes attempts and travels down.
    /// Absent: the deadline (if the request has one) only bounds attempts and is
    /// not sent to the callee; present, `propagate` defaults to `true`.
    /// For `work`: bound the work by the request's deadline (the statement
    /// timeout is the remaining budget minus `margin_ms`), and fail fast with
    /// `deadline_exceeded`, doing nothing, when that is below `min_budget_ms`;
    /// only `margin_ms` and `min_budget_ms` apply.
    #[serde(default)]
    pub deadline: Option<DeadlineSpec>,
    /// For `call`: send one child call to every shard of the callee at once, and
    /// complete on all, on the first `wait_for` successes, or at `deadline_ms`
    /// with what answered (ok / partial / deadline_exceeded).
    #[serde(default)]
    pub fan_out: Option<FanOutSpec>,
    /// For `call`: send a delayed duplicate of an attempt that has not answered
    /// yet to another replica (The Tail at Scale). Needs `idempotent: true`.
    #[serde(default)]
    pub hedge: Option<HedgeSpec>,
    /// For `call`: a cache in front of the call, one per instance of this
    /// service: fresh entries answer at once; misses load from the callee.
    #[serde(default)]
    pub cache: Option<CacheSpec>,
    /// For `call`: whether the handler keeps its worker while it waits for
    /// the call. `true` (default): thread-per-request, the worker waits too.
    /// `false`: the worker is freed as the call starts and the request is handed
    /// on (an asynchronous server, a pipeline stage); only a handler's last step.
    #[serde(default)]
    pub hold_worker: Option<bool>,
    /// For `call`: the operation may run twice without harm (a read): hedging
    /// is allowed only then.
    #[serde(default)]
    pub idempotent: Option<bool>,
    /// Calls to several services at once (a product page asking inventory,
    /// pricing and reviews together), each branch a `call` step with its own
    /// policies (see [`ParallelSpec`]).
    #[serde(default)]
    pub parallel: Option<ParallelSpec>,
    /// For a branch of `parallel`: the step may succeed without it (a page
    /// rendered without its reviews). Absent: `false`, the branch is required.
    #[serde(default)]
    pub optional: Option<bool>,
    /// For `call`: whether the call is tied to this request's lifetime. `request`
    /// (default): when this request's caller gives up, the call is cancelled and
    /// the handler stops (Go's `r.Context()`). `background`: the call runs on
    /// (Go's `context.Background()`), cutting the cancellation wire.
    #[serde(default)]
    pub context: Option<CallContext>,
    /// For `call` and a branch of `parallel`: what the caller does when the
    /// call fails after its retries, times out or is refused by a breaker,
    /// bulkhead or limiter (see [`FallbackSpec`]). Absent: the failure is
    /// the step's.
    #[serde(default)]
    pub fallback: Option<FallbackSpec>,
}

/// What a caller does when a call fails: serve a stale cached answer, call
/// another service, answer with a safe default, or fail explicitly, tried in
/// the order given (resilience4j's and Polly's `Fallback`, Hystrix's
/// `getFallback`, failsafe-go's `Fallback`; stale-while-error is RFC 5861's
/// `stale-if-error`). The first kind that answers does; a kind that cannot
/// (a stale entry too old, a secondary that fails too) passes the failure to
/// the next; past the last, or at `fail`, the step fails with the last
/// failure. An answer a fallback served counts as degraded (`degraded`), and
/// the request it belongs to is answered degraded, not in full.
///
/// The other side, from Amazon's Builders' Library ("Avoiding fallback in
/// distributed systems"): a path that is rarely taken is rarely tested, and a
/// `call` fallback sends the failed service's load to its secondary exactly
/// when the primary is down. For writes (anything that moves money), fail
/// explicitly: a step marked `idempotent: false` with a `stale` or `default`
/// fallback is warned about.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FallbackSpec {
    /// The failures that take the fallback, by the names of `retry_on` and
    /// `breaker_open`, `bulkhead_full`, `throttled`. Default: every failure.
    #[serde(default = "every_failure")]
    pub on: Vec<FailureOutcome>,
    /// What to try, in order (at least one, at most 8).
    pub chain: Vec<FallbackUseSpec>,
    /// Whether an answer served by the fallback is degraded (a stale price, a
    /// popular list instead of recommendations, a widget hidden): the request
    /// then succeeds degraded. `false`: the answer is as good as the
    /// primary's (a full secondary replica). Default: `true`.
    #[serde(default = "default_true")]
    pub degraded: bool,
}

fn every_failure() -> Vec<FailureOutcome> {
    FailureOutcome::ALL.to_vec()
}

/// A failure a call can end with, by its name in outputs.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum FailureOutcome {
    /// `timeout`: no answer within the attempt's timeout.
    Timeout,
    /// `deadline_exceeded`: the request's deadline ran out.
    DeadlineExceeded,
    /// `rejected`: a 503 (a full queue, shed load, UNAVAILABLE).
    Rejected,
    /// `error`: a 500 or any other server error.
    Error,
    /// `connection_refused`: every instance tried was down.
    ConnectionRefused,
    /// `rate_limited`: a 429, from the callee or the caller's own limiter.
    RateLimited,
    /// `breaker_open`: refused by the caller's open breaker, never sent.
    BreakerOpen,
    /// `bulkhead_full`: the caller's bulkhead had no room.
    BulkheadFull,
    /// `throttled`: the caller's adaptive throttle dropped it.
    Throttled,
}

impl FailureOutcome {
    /// Every failure, in declaration order.
    pub const ALL: [FailureOutcome; 9] = [
        FailureOutcome::Timeout,
        FailureOutcome::DeadlineExceeded,
        FailureOutcome::Rejected,
        FailureOutcome::Error,
        FailureOutcome::ConnectionRefused,
        FailureOutcome::RateLimited,
        FailureOutcome::BreakerOpen,
        FailureOutcome::BulkheadFull,
        FailureOutcome::Throttled,
    ];

    /// Its bit in a set of failures.
    pub fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

/// One kind of fallback, in a [`FallbackSpec`]'s `chain`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum FallbackUseSpec {
    /// Serve the request's key from the step's `cache` though it expired, if
    /// it expired less than `max_staleness_ms` ago (RFC 5861
    /// `stale-if-error`); a key never loaded, or older, passes on. Needs a
    /// `cache` on the step.
    Stale {
        /// How long after expiry an entry may still be served, ms.
        max_staleness_ms: f64,
    },
    /// Answer with a safe default (a popular list, a hidden widget): no
    /// downstream call, just this work on the caller (holding its worker,
    /// sharing its cores), then the handler goes on. Absent `work`: at once.
    Default {
        /// The work of building the default answer.
        #[serde(default)]
        work: Option<DistSpec>,
    },
    /// Call another service instead (a secondary, a degraded path), a `call`
    /// step with its own policies (no `fan_out`, `cache`, `hold_worker`,
    /// `parallel` or `fallback`).
    Call(Box<StepSpec>),
    /// Fail explicitly with the call's failure (for writes: never guess).
    Fail,
}

/// A parallel fan-out: one child call per shard of the callee, each with the
/// step's policies (timeout, retries, hedging).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FanOutSpec {
    /// Complete as soon as this many children succeeded, cancelling the rest.
    /// Absent: all of them (the answer is as slow as the slowest child).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub wait_for: Option<u32>,
    /// Stop waiting after this long and answer with what has come: `partial`
    /// if some children succeeded but fewer than `wait_for`, `deadline_exceeded`
    /// (a failure) if none did. Absent: wait for every child to end.
    #[serde(default)]
    pub deadline_ms: Option<f64>,
    /// Slowness shared by every child of a request (see
    /// [`CorrelatedSlowdownSpec`]). Absent: the children's work is drawn
    /// independently.
    #[serde(default)]
    pub correlated_slowdown: Option<CorrelatedSlowdownSpec>,
}

/// A share of requests that are slow at every shard at once: a hot key, a
/// large payload, a query that is expensive everywhere. The Tail at Scale's
/// latency table, where waiting for all leaves costs far more than a single
/// leaf's tail predicts for independent leaves, needs such a shared factor.
/// Whether a request is slow is drawn once per logical request and fan-out
/// step, on a stream of its own: its retries and hedges meet the same
/// slowness (the key stays hot, whichever replica serves it), and every
/// variant slows the same requests.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CorrelatedSlowdownSpec {
    /// Probability, in [0, 1], that a request is slow.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub p: f64,
    /// How many times longer every work step of every child's handler
    /// takes for a slow request (at least 1).
    #[schemars(range(min = 1.0))]
    pub factor: f64,
}

/// Calls to several services at once, started together by one handler
/// step, as a product page calls inventory, pricing and reviews in parallel
/// (Go's `errgroup`, a `CompletableFuture.allOf`, gRPC's async stubs).
///
/// Each branch is a call with its own policies (timeout, retries, breaker,
/// hedging, deadline), on its own edge. Every branch inherits the request's
/// deadline and class, and is cancelled with it when the request's caller
/// gives up. Without `wait_for` the step waits for every branch to end: it
/// fails as soon as a required branch fails (with that branch's failure,
/// cancelling the others, as `errgroup.WithContext` does), and succeeds when
/// every required branch succeeded; an `optional` branch may fail (the step is
/// then `partial`). With `wait_for: k` it succeeds as soon as `k` branches
/// succeeded, cancelling the rest, and fails as soon as `k` can no longer be
/// reached. At `deadline_ms` it stops waiting: it succeeds (`partial`) if every
/// required branch had succeeded (with `wait_for`, if any branch had), the
/// branches still running are cancelled, and otherwise it fails with
/// `deadline_exceeded`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParallelSpec {
    /// The calls, each a `call` step (no `fan_out`, `cache`, `hold_worker`
    /// or nested `parallel`), with `optional` if the step may succeed
    /// without it. At least 2, at most 64.
    pub branches: Vec<StepSpec>,
    /// Succeed as soon as this many branches succeeded (first `k` of `n`),
    /// cancelling the others. Absent: every branch ends, or a required one
    /// fails. Not with `optional` branches.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub wait_for: Option<u32>,
    /// Stop waiting after this long, ms, and answer with what has come.
    #[serde(default)]
    pub deadline_ms: Option<f64>,
}

/// A cache of the callee's answers, per instance of the calling service. Each
/// request asks for one of `keys` keys, drawn by popularity (Zipf); an entry is
/// fresh for `ttl_ms` after it was loaded.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CacheSpec {
    /// Distinct keys.
    #[schemars(range(min = 1))]
    pub keys: u32,
    /// Popularity: key `k` (from 1) is asked for in proportion to `1 / k^zipf_s`
    /// (0: uniformly).
    #[serde(default = "default_zipf_s")]
    pub zipf_s: f64,
    /// How long a loaded entry stays fresh, ms.
    pub ttl_ms: f64,
    /// Request coalescing (singleflight, per instance): a miss while the key is
    /// already loading waits for that load instead of starting its own. The
    /// load belongs to no single caller (a caller giving up does not cancel
    /// it), and its error is every waiter's error.
    #[serde(default)]
    pub coalesce: bool,
    /// Serve an expired entry for this long after it expired while one
    /// background load refreshes it, off the request path. Absent: an expired
    /// entry is a miss.
    #[serde(default)]
    pub stale_while_revalidate_ms: Option<f64>,
    /// Start with every key cached and fresh until this time, ms (a warm
    /// cache whose entries expire together). Absent: the cache starts empty.
    #[serde(default)]
    pub warm_until_ms: Option<f64>,
}

fn default_zipf_s() -> f64 {
    1.0
}

/// Hedged requests: after `delay_ms` (or at a percentile of the edge's recent
/// latencies) without an answer, send the same request to another replica;
/// the first success wins.
///
/// When a copy fails, the hedge follows gRPC's hedging policy (proposal A6):
/// after a failure in `non_fatal`, the next hedge of the try, if any is left,
/// is sent at once instead of at its delay (or after the callee's Retry-After,
/// A6's pushback), and the hedges after it follow at `delay_ms` from then;
/// after any other failure the other copies are cancelled and the try fails
/// with it. Each hedge goes to a replica that none of the try's copies went
/// to, answered or not (A6 gives the load balancer "the list of previously
/// used addresses"). A hedge that cannot go (its budget, the brake, no
/// replica left unused, an open breaker, no time left) is not sent; the try
/// then fails with its
/// last failure once no copy is left in flight. A try fails when every copy
/// it sent failed and no hedge is left: gRPC then returns the failure (it
/// never retries a hedged call); a `retry` policy on the same call retries the
/// whole try, hedges and all.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HedgeSpec {
    /// A fixed hedge delay, ms. With `percentile`, the delay used until enough
    /// latencies are observed.
    #[serde(default)]
    pub delay_ms: Option<f64>,
    /// Adaptive delay: this percentile (e.g. 0.95) of the latency of this
    /// caller's last `window` successful attempts on the edge.
    #[serde(default)]
    pub percentile: Option<f64>,
    /// Latencies the adaptive delay is computed from.
    #[serde(default = "default_hedge_window")]
    #[schemars(range(min = 10))]
    pub window: u32,
    /// Most hedges per try (besides the try itself): gRPC's `maxAttempts`,
    /// which counts every copy, is `max_hedges + 1`.
    #[serde(default = "one_u32")]
    #[schemars(range(min = 1, max = 255))]
    pub max_hedges: u32,
    /// The brake: hedges may be at most this share of first attempts (a token
    /// bucket of 10 hedges, refilled by `max_ratio` per first attempt); beyond,
    /// hedging stops, as under overload. Absent: no brake.
    #[serde(default)]
    pub max_ratio: Option<f64>,
    /// Tied requests: when one copy succeeds, the others are cancelled (after
    /// `cancel_delay_ms`) and their callee told. Untied (`false`): the losers run
    /// on, and their backend work is wasted.
    #[serde(default = "default_true")]
    pub tied: bool,
    /// Delay before the losers' cancellation reaches them, ms.
    #[serde(default)]
    pub cancel_delay_ms: f64,
    /// Where hedges go.
    #[serde(default)]
    pub target: HedgeTarget,
    /// gRPC's `nonFatalStatusCodes`: failures of a copy after which the next
    /// hedge goes at once and the other copies run on; any other failure is
    /// fatal (the other copies are cancelled, or left to run untied, and the
    /// try fails with it). On a budget that counts failures (gRPC throttling,
    /// the retry circuit breaker), these count as failures as the retried ones
    /// do. gRPC has no default (the field is required); the default here is
    /// `retry_on`'s: every transient failure (`timeout`, `deadline_exceeded`,
    /// `rejected`, `error`, `connection_refused`). `[]`: every failure is
    /// fatal.
    #[serde(default = "default_retry_on")]
    pub non_fatal: Vec<RetryableOutcome>,
}

fn default_hedge_window() -> u32 {
    1000
}

fn default_true() -> bool {
    true
}

/// The replica a hedge goes to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HedgeTarget {
    /// A replica in another zone than those already tried, if there is one;
    /// else any other replica.
    #[default]
    OtherZone,
    /// Any replica not already tried (the balancer's choice among them).
    AnyOther,
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
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrySpec {
    /// Attempts in all, the first included (3 = one try and two retries).
    #[schemars(range(min = 1))]
    pub max_attempts: u32,
    /// The wait before each retry, before jitter. Default: no wait.
    #[serde(default)]
    pub backoff: BackoffSpec,
    /// How the wait is randomised (the four modes of the AWS backoff-and-jitter
    /// analysis, plus proportional jitter as resilience4j and gRPC use).
    #[serde(default)]
    pub jitter: Jitter,
    /// For `jitter: proportional`: the wait is uniform in `[d(1-f), d(1+f)]`
    /// (resilience4j's randomization factor 0.5; gRPC's ±20% is 0.2).
    #[serde(default = "default_jitter_factor")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub jitter_factor: f64,
    /// Outcomes that are retried; anything else fails the call at once. A
    /// breaker's fast failure is never retried. Default: every transient failure
    /// (`timeout`, `deadline_exceeded`, `rejected`, `error`, `connection_refused`).
    #[serde(default = "default_retry_on")]
    pub retry_on: Vec<RetryableOutcome>,
    /// A budget shared by every call on this edge that limits retries collectively
    /// (max attempts limits one request). Absent: no budget.
    #[serde(default)]
    pub budget: Option<BudgetSpec>,
}

fn default_jitter_factor() -> f64 {
    0.5
}

fn default_retry_on() -> Vec<RetryableOutcome> {
    vec![
        RetryableOutcome::Timeout,
        RetryableOutcome::DeadlineExceeded,
        RetryableOutcome::Rejected,
        RetryableOutcome::Error,
        RetryableOutcome::ConnectionRefused,
    ]
}

/// An outcome a retry policy may retry (`retry_on`), or a hedge take as
/// non-fatal (`non_fatal`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RetryableOutcome {
    /// The attempt's timeout expired.
    Timeout,
    /// The callee answered that the deadline expired (gRPC DEADLINE_EXCEEDED).
    DeadlineExceeded,
    /// The callee refused the request (HTTP 503, gRPC UNAVAILABLE).
    Rejected,
    /// Any other server error (HTTP 500).
    Error,
    /// The instance refused the connection (it is down).
    ConnectionRefused,
    /// The callee's rate limit refused it (HTTP 429); the Retry-After is obeyed
    /// over the client's own backoff.
    RateLimited,
}

/// The wait before a retry, before jitter.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum BackoffSpec {
    /// The same wait before every retry (without jitter, retries of requests
    /// that failed together arrive together).
    Fixed {
        /// The wait.
        #[schemars(range(min = 0.0))]
        ms: f64,
    },
    /// `min(cap, base · multiplier^(n-1))` before retry `n`.
    Exponential {
        /// Wait before the first retry.
        #[schemars(range(min = 0.0))]
        base_ms: f64,
        /// Growth per retry.
        #[serde(default = "two")]
        multiplier: f64,
        /// Longest wait.
        #[serde(default)]
        cap_ms: Option<f64>,
    },
}

fn two() -> f64 {
    2.0
}

impl Default for BackoffSpec {
    fn default() -> Self {
        BackoffSpec::Fixed { ms: 0.0 }
    }
}

/// Randomisation of the backoff `d` (AWS "Exponential Backoff and Jitter").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Jitter {
    /// Exactly `d`.
    #[default]
    None,
    /// Uniform in `[0, d]`.
    Full,
    /// `d/2` plus uniform in `[0, d/2]`.
    Equal,
    /// `min(cap, uniform(base, 3 × previous wait))`.
    Decorrelated,
    /// Uniform in `[d(1-f), d(1+f)]`, `f` = `jitter_factor`.
    Proportional,
}

/// A retry budget: limits retries across all calls of an edge.
///
/// Each kind is asked before every retry and every hedge, never before a first
/// attempt; a refused retry is not sent and the call fails at once with its
/// last attempt's failure (a refused hedge is not sent, and the try goes on).
/// Each kind keeps its state per caller instance, as each instance of a client
/// library does.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum BudgetSpec {
    /// The S5 chapter's token bucket: each first attempt adds `ratio` tokens up to
    /// `max_tokens`, each retry spends one; no token, no retry. Starts full.
    ///
    /// Boundary: the chapter's `TrySpend` grants while `tokens >= 1`, so a
    /// bucket holding exactly one token grants a retry (Brooker's adaptive-retry
    /// simulation grants only above one, `bucket > 1.0`; this kind does not
    /// follow it).
    TokenBucket {
        /// Tokens per first attempt (0.1: retries ≈ 10% of traffic).
        #[schemars(range(min = 0.0))]
        ratio: f64,
        /// Bucket size.
        #[serde(default = "ten")]
        max_tokens: f64,
    },
    /// gRPC retry throttling (A6): starts at `max_tokens`; a failed attempt takes
    /// 1, a success gives `token_ratio`; retries only while tokens > max/2.
    ///
    /// Boundary: A6 throttles while `token_count <= maxTokens / 2`, so at
    /// exactly half no retry (nor hedge) is sent; counted in thousandths of a
    /// token with the half rounded down, as gRPC C-core and Java count
    /// (`milli_tokens > max_milli_tokens / 2`). The failed attempt is counted
    /// before its retry is asked for.
    GrpcThrottling {
        /// In (0, 1000].
        max_tokens: f64,
        /// Tokens per success.
        token_ratio: f64,
    },
    /// Finagle's RetryBudget: retries up to `percent_can_retry` of requests over
    /// a `ttl_s` window, plus a reserve of `min_retries_per_sec`.
    ///
    /// Boundary: Finagle's leaky bucket grants a withdrawal while
    /// `count >= n` (`TokenBucket.tryGet`), so a balance of exactly one retry
    /// grants it.
    Finagle {
        /// Window, seconds (1-60).
        #[serde(default = "ten")]
        ttl_s: f64,
        /// Reserve, retries per second.
        #[serde(default = "ten_u32")]
        min_retries_per_sec: u32,
        /// Share of requests that may retry, in [0, 1].
        #[serde(default = "point_two")]
        percent_can_retry: f64,
    },
    /// Envoy's retry budget: concurrent retries at most `budget_percent` of
    /// active requests, and at least `min_retry_concurrency`.
    ///
    /// Boundary: Envoy's `RetryBudgetImpl::canCreate` grants while
    /// `count() < max()`, so with as many retries in flight as the limit no
    /// further retry is sent.
    Envoy {
        /// Percent of active requests.
        #[serde(default = "twenty")]
        budget_percent: f64,
        /// Floor on concurrent retries.
        #[serde(default = "three")]
        min_retry_concurrency: u32,
    },
    /// Marc Brooker's retry circuit breaker ("Fixing retries with token buckets
    /// and circuit breakers", 2022): first attempts always go; a retry goes only
    /// while the failure rate of this caller's last `window` attempts on the
    /// edge is at most `max_failure_rate`.
    ///
    /// The window holds the outcomes of the caller's last `window` attempts
    /// (first attempts, retries and hedges alike) that ended with an answer or
    /// their timeout: failures the retry policy retries count as failures,
    /// successes as successes; failures it never retries (a 4xx) and attempts
    /// the caller cancelled are left out, as gRPC's throttling leaves them out.
    /// It starts as `window` successes (as the token bucket starts full, so a
    /// client that just started may retry), and the failure rate is always
    /// failures in the window / `window`. An attempt's failure is counted
    /// before its retry is asked for.
    ///
    /// Boundary: Brooker's simulator refuses a retry when the failure rate is
    /// above the threshold (`failures / calls > max_rate`), so at exactly
    /// `max_failure_rate` the retry is sent. Brooker's rate is cumulative over
    /// the client's life (failed attempts over calls); this one is over the
    /// window of attempts, so that it follows recent failures and stays in
    /// [0, 1].
    RetryCircuitBreaker {
        /// Retries stop while more than this share of the window's attempts
        /// failed, in [0, 1] (Brooker's simulation: 0.1).
        #[serde(default = "point_one")]
        max_failure_rate: f64,
        /// Attempts the failure rate is taken over, ≥ 1 (resilience4j's
        /// count-based window size).
        #[serde(default = "hundred_u32")]
        #[schemars(range(min = 1))]
        window: u32,
    },
}

fn point_one() -> f64 {
    0.1
}
fn ten() -> f64 {
    10.0
}
fn ten_u32() -> u32 {
    10
}
fn point_two() -> f64 {
    0.2
}
fn twenty() -> f64 {
    20.0
}
fn three() -> u32 {
    3
}

/// A circuit breaker on a call edge, asked once per attempt: open, it fails
/// attempts at once, without the network, with a non-retryable error.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum BreakerSpec {
    /// resilience4j's CircuitBreaker, with its parameter names and defaults.
    Resilience4j {
        /// Open at this failure rate, percent.
        #[serde(default = "fifty")]
        failure_rate_threshold: f64,
        /// Open at this slow-call rate, percent.
        #[serde(default = "hundred")]
        slow_call_rate_threshold: f64,
        /// A call longer than this is slow.
        #[serde(default = "sixty_thousand")]
        slow_call_duration_threshold_ms: f64,
        /// `count_based` (the last N calls) or `time_based` (the last N seconds).
        #[serde(default)]
        sliding_window_type: SlidingWindowType,
        /// N.
        #[serde(default = "hundred_u32")]
        sliding_window_size: u32,
        /// Rates count only once this many calls are recorded.
        #[serde(default = "hundred_u32")]
        minimum_number_of_calls: u32,
        /// How long it stays open.
        #[serde(default = "sixty_thousand")]
        wait_duration_in_open_state_ms: f64,
        /// Calls let through half-open, whose rates decide.
        #[serde(default = "ten_u32")]
        permitted_number_of_calls_in_half_open_state: u32,
        /// Move to half-open when the wait ends, not at the next call.
        #[serde(default)]
        automatic_transition_from_open_to_half_open_enabled: bool,
        /// Back to open after this long half-open (0: unbounded).
        #[serde(default)]
        max_wait_duration_in_half_open_state_ms: f64,
    },
    /// The S5 chapter's breaker: opens after `failure_threshold` consecutive
    /// failures, stays open `cooldown_ms`, then lets `max_concurrent_probes`
    /// through and closes after `successes_to_close` successes in a row.
    Consecutive {
        /// Consecutive failures that open it.
        #[serde(default = "five_u32")]
        failure_threshold: u32,
        /// Time open.
        #[serde(default = "ten_thousand")]
        cooldown_ms: f64,
        /// Probes at once when half-open.
        #[serde(default = "one_u32")]
        max_concurrent_probes: u32,
        /// Successes in a row that close it.
        #[serde(default = "three")]
        successes_to_close: u32,
    },
}

/// resilience4j's sliding window types.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SlidingWindowType {
    /// The last N calls.
    #[default]
    CountBased,
    /// The last N seconds.
    TimeBased,
}

fn fifty() -> f64 {
    50.0
}
fn hundred() -> f64 {
    100.0
}
fn hundred_u32() -> u32 {
    100
}
fn sixty_thousand() -> f64 {
    60_000.0
}
fn five_u32() -> u32 {
    5
}
fn one_u32() -> u32 {
    1
}
fn ten_thousand() -> f64 {
    10_000.0
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
    /// How the deadline travels on the wire.
    #[serde(default)]
    pub encoding: DeadlineEncoding,
    /// Whether this hop subtracts the time it has spent (queueing, working,
    /// sleeping between retries) before it bounds its attempts and sends the
    /// rest down. `false` is the stale-budget bug of a relative encoding: the
    /// hop forwards the budget it received, as if no time had passed, so the
    /// chain overruns its caller's deadline. Only with `encoding: relative`.
    #[serde(default = "yes")]
    pub subtract_elapsed: bool,
}

/// How a deadline travels from caller to callee.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeadlineEncoding {
    /// Remaining time (gRPC's `grpc-timeout`, `X-Timeout-Ms`): the callee
    /// starts its own clock on arrival, so clocks need not agree, but each hop
    /// must subtract what it spent.
    #[default]
    Relative,
    /// A point in time (`X-Request-Deadline: <unix time>`), read off the
    /// caller's clock and compared with the callee's: immune to forgotten
    /// subtractions and to time in queues, but wrong by the clocks' skew
    /// (`clock_offset_ms`).
    Absolute,
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
    /// Empirical, through the quantiles a latency dashboard shows (p50, p90,
    /// p99, p99.9, max): the shape as measured, not a fit.
    ///
    /// `{"kind": "quantiles", "points": [{"q": 0.5, "ms": 12}, {"q": 0.9, "ms":
    /// 40}, {"q": 0.99, "ms": 180}, {"q": 1, "ms": 1500}]}`. The CDF runs in
    /// straight lines from `(min_ms, q = 0)` through the points (so draws are
    /// uniform between neighbouring points), and the mean is that of this
    /// distribution, exactly. The last point must be the maximum, `q` = 1: a
    /// table without one leaves the tail unbounded, and no tail made up for it
    /// would be the one measured.
    Quantiles {
        /// The table, in non-decreasing `q` and `ms`; the last point has `q` = 1.
        /// Equal `ms` at two `q` make an atom (that share of draws exactly that
        /// long); equal `q` at two `ms`, a gap no draw falls in.
        points: Vec<QuantilePoint>,
        /// The least duration, where the CDF starts (q = 0). The default, 0,
        /// spreads everything below the first point down to 0 ms; a dashboard's
        /// min (or p1) here keeps the fast requests as fast as they were.
        #[serde(default)]
        #[schemars(range(min = 0.0))]
        min_ms: f64,
    },
    /// Empirical, from histogram buckets as Prometheus exports them: `le`
    /// upper bounds with cumulative counts.
    ///
    /// So that `increase(…_bucket[1h])` can be pasted bucket by bucket (bounds
    /// converted to ms), counts are cumulative as there: each bucket counts
    /// every observation up to its bound. Draws are uniform within a bucket,
    /// from the previous bound (the first bucket's from `min_ms`) to its own,
    /// as Prometheus's `histogram_quantile` assumes when it interpolates (so a
    /// run's percentiles are those a dashboard computes from the same
    /// buckets), and the mean is that of this distribution, exactly. Prometheus's last
    /// bucket, `+Inf`, has no bound to draw up to: give its count with the
    /// largest duration seen (a dashboard's max) as its `le_ms`.
    Histogram {
        /// Buckets in strictly increasing `le_ms`.
        buckets: Vec<HistogramBucket>,
        /// Lower bound of the first bucket. Prometheus buckets start at 0.
        #[serde(default)]
        #[schemars(range(min = 0.0))]
        min_ms: f64,
    },
    /// Normal, truncated at 0: a duration that varies symmetrically about a
    /// typical value.
    ///
    /// A draw below 0 is drawn again. `mean_ms` and `sd_ms` are the untruncated
    /// normal's, so the draws' mean is higher, by `sd_ms`·φ(β)/Φ(β) with β =
    /// `mean_ms`/`sd_ms` (φ and Φ the standard normal's density and CDF):
    /// 0.80·`sd_ms` at β = 0 (a half-normal), 0.29·`sd_ms` at β = 1, under
    /// 0.0002·`sd_ms` from β = 4 on.
    Normal {
        /// Mean of the untruncated normal, ≥ 0: below 0 most of the normal is cut
        /// away and what is left is an exponential-like tail (better written as
        /// `gamma` or `weibull`).
        #[schemars(range(min = 0.0))]
        mean_ms: f64,
        /// Standard deviation of the untruncated normal; 0 makes it constant.
        #[schemars(range(min = 0.0))]
        sd_ms: f64,
    },
    /// Gamma: the time of `shape` exponential stages in a row (Erlang, for a
    /// whole `shape`).
    ///
    /// Less variable than an exponential for `shape` > 1 (squared coefficient of
    /// variation 1/`shape`), more for `shape` < 1. Give `mean_ms` or `scale_ms`.
    Gamma {
        /// Shape k > 0.
        shape: f64,
        /// Mean, k·scale.
        #[serde(default)]
        mean_ms: Option<f64>,
        /// Scale θ (the mean of each stage).
        #[serde(default)]
        scale_ms: Option<f64>,
    },
    /// Weibull: a tail heavier than an exponential's for `shape` < 1, lighter
    /// for `shape` > 1.
    ///
    /// P(X > x) = exp(−(x/`scale_ms`)^`shape`); `shape` 1 is the exponential.
    Weibull {
        /// Shape k > 0.
        shape: f64,
        /// Scale λ: the 63rd percentile, whatever the shape.
        scale_ms: f64,
    },
    /// Pareto: a power-law tail, where the slowest requests are far slower than
    /// any exponential tail allows.
    ///
    /// P(X > x) = (`scale_ms`/x)^`shape` above `scale_ms`. Every draw is
    /// finite, but at `shape` ≤ 1 the mean is infinite and no run's mean
    /// latency would settle, so `shape` must exceed 1 (up to 2 the variance is
    /// still infinite: means settle slowly).
    Pareto {
        /// Shape α > 1, the tail's exponent.
        shape: f64,
        /// Scale x_m > 0: the least duration.
        scale_ms: f64,
    },
}

/// One row of a quantile table.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuantilePoint {
    /// The quantile, in [0, 1] (0.99 for p99; 1 for the maximum).
    #[schemars(range(min = 0.0, max = 1.0))]
    pub q: f64,
    /// The duration at that quantile.
    #[schemars(range(min = 0.0))]
    pub ms: f64,
}

/// One bucket of a histogram.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistogramBucket {
    /// Upper bound (inclusive), ms: Prometheus's `le` (in seconds there, so
    /// times 1000).
    #[schemars(range(min = 0.0))]
    pub le_ms: f64,
    /// Observations at most `le_ms` (cumulative, so at least the previous
    /// bucket's). Need not be whole: an `increase()` over a window is not.
    #[schemars(range(min = 0.0))]
    pub count: f64,
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

/// Limits that stop a runaway run with a clear message. Besides these,
/// `stormsim check` and `run` estimate the memory a run will hold from the
/// model's sizes (instances, and per caller instance a slot per callee
/// instance; breaker, throttle and cache tables; hosts; every variant's time
/// series; the model itself, a model per timeline step, with every workload
/// copy) and refuse a model over 4 GiB, naming its largest part;
/// `--memory-limit-gb` raises the ceiling.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitsSpec {
    /// Most events one variant may simulate (zero-time loops included: a
    /// retry without backoff against a refusing instance counts its events
    /// too; so do the candidate arrivals a load shape draws and thins away).
    #[serde(default = "default_max_events")]
    pub max_events: u64,
    /// Most requests alive at once: handler executions in all services, and,
    /// counted on their own, calls waiting on an answer or on a retry's
    /// backoff (a workload's requests among them).
    #[serde(default = "default_max_in_flight")]
    pub max_in_flight: u64,
    /// Most time-series rows one variant may keep (one per bucket, and one
    /// per service instance and per workload and bucket), at most the default.
    /// A run with no horizon whose events reach far (a backoff that grows
    /// without a cap) stops there instead of filling memory and disk; a
    /// horizon whose buckets would need more is refused when the model loads.
    #[serde(default = "default_max_series_rows")]
    pub max_series_rows: u64,
}

fn default_max_events() -> u64 {
    2_000_000_000
}

fn default_max_in_flight() -> u64 {
    5_000_000
}

fn default_max_series_rows() -> u64 {
    crate::validate::MAX_SERIES_ROWS
}

impl Default for LimitsSpec {
    fn default() -> Self {
        LimitsSpec {
            max_events: default_max_events(),
            max_in_flight: default_max_in_flight(),
            max_series_rows: default_max_series_rows(),
        }
    }
}
