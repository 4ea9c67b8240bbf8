//! Reports of a run, and their stable file formats.
//!
//! `summary.csv` and `timeseries.csv` are contracts that notebooks and scripts
//! rely on: their columns are documented in docs/outputs.md and none is renamed
//! without a note there. Their tidy twins (`summary.tidy.csv`,
//! `timeseries.tidy.csv.gz`) are written from the same rows ([`crate::layout`]).

use crate::analysis::{classify, samples_of, Verdict};
use crate::layout::{Column, Layout, TableWriter};
use crate::measurements::Measurements;
use crate::metrics::{
    round_ms, DegradedCounts, EdgeCounters, FailureCounts, FanOutCounts, LatencyRecorder,
    Quantiles, ServiceCounters,
};
use crate::policy_state::PolicyState;
use crate::timeseries::{ServiceBucket, TimeSeries};
use crate::topology::Topology;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use stormsim_engine::SimTime;
use stormsim_model::{Step, TimelineRole};

pub use crate::attempts::{AttemptOutcomeKind, AttemptRecord, AttemptSink};

/// Why a run stopped before its natural end.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LimitHit {
    /// Too many events.
    #[error("stopped after {0} events (limits.max_events): the model may be unstable; the report is partial")]
    Events(u64),
    /// Too many events, counting the candidate arrivals a load shape's
    /// thinning drew and did not keep.
    #[error("stopped after {events} events and {thinned} candidate arrivals a load shape drew and thinned away (limits.max_events counts both): the model may be unstable, or a shape's rate stays far below its peak for long; the report is partial")]
    EventsAndThinned {
        /// Events delivered.
        events: u64,
        /// Candidate arrivals thinned away.
        thinned: u64,
    },
    /// Too many requests alive at once.
    #[error("stopped with {0} requests in flight (limits.max_in_flight): the model may be unstable; the report is partial")]
    InFlight(u64),
    /// Too many calls alive at once: requests waiting on an answer or on a
    /// retry's backoff.
    #[error("stopped with {0} calls in flight, waiting on an answer or a retry's backoff (limits.max_in_flight): the model may be unstable; the report is partial")]
    CallsInFlight(u64),
    /// The time series would outgrow `limits.max_series_rows` (at most
    /// [`stormsim_model::MAX_SERIES_ROWS`]): a run with no horizon whose events reach far (a
    /// work of 10^12 s, a backoff without a cap), or buckets far narrower
    /// than the run (validation bounds them only against a horizon).
    #[error("stopped at {buckets} time-series buckets of {bucket_s} s ({} s simulated): the series may hold at most {max_rows} rows (limits.max_series_rows), one per bucket and one per service and per workload and bucket; widen timeseries.bucket_s or set horizon_s; the report is partial", *buckets as f64 * bucket_s)]
    Buckets {
        /// Buckets recorded.
        buckets: u64,
        /// Their width, seconds.
        bucket_s: f64,
        /// The limit it reached.
        max_rows: u64,
    },
}

/// What one variant's run measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VariantReport {
    /// Variant name.
    pub variant: String,
    /// Logical requests generated.
    pub requests: u64,
    /// Answered with success, in full or degraded.
    pub succeeded: u64,
    /// Of those, answered in full: no fallback answered anywhere on the way.
    pub answered_full: u64,
    /// Of those, answered degraded by fallbacks, by kind.
    pub degraded: DegradedCounts,
    /// Answered with an error (or given up on by the caller).
    pub failed: u64,
    /// Failures by reason.
    pub failed_by_reason: FailureCounts,
    /// Still unanswered when the run stopped at its horizon.
    pub unanswered: u64,
    /// `succeeded / requests` (`None` without requests).
    pub success_rate: Option<f64>,
    /// Time until the caller got its answer, success or error, ms (`None`:
    /// nothing was answered).
    pub latency_ms: Option<Quantiles>,
    /// The same over succeeded requests only (`None`: none succeeded).
    pub ok_latency_ms: Option<Quantiles>,
    /// Per service, in model order.
    pub services: Vec<ServiceReport>,
    /// Per workload, in model order.
    pub workloads: Vec<WorkloadReport>,
    /// Per call edge: workloads' edges first, then call steps in model order.
    /// In summary.json, not summary.csv.
    pub edges: Vec<EdgeReport>,
    /// The service the load columns report (the model's `focus`).
    pub focus: String,
    /// Most attempts the focus service received in one second.
    pub peak_offered_rps: f64,
    /// Mean attempts per second at the focus service from the trigger's end to
    /// the first intervention (or the end): the load that keeps a storm going.
    pub storm_offered_rps: Option<f64>,
    /// Most attempts per second at the focus service after the trigger ended:
    /// the herd of retries that meets the recovering service.
    pub peak_after_trigger_rps: Option<f64>,
    /// The recovery analysis's verdict, with its evidence, when the model
    /// asks for one and its timeline has a trigger.
    pub verdict: Option<Verdict>,
    /// When the last logical request got its answer, s.
    pub completion_s: f64,
    /// Events simulated.
    pub events: u64,
    /// The events by kind (`Event::KINDS`, those that happened), and the
    /// voided timers the queue skipped: for `stormsim bench`, not an output.
    #[serde(skip)]
    pub events_by_kind: Vec<(&'static str, u64)>,
    /// Virtual time at the end of the run, s.
    pub sim_time_s: f64,
    /// Most logical requests unanswered at once (memory follows this, not the
    /// number of requests simulated).
    pub peak_requests_in_flight: u64,
    /// False when a limit stopped the run: every count in the report is of
    /// a partial run, and `requests` is what it generated before it stopped.
    pub complete: bool,
    /// The limit that stopped it: `max_events`, `max_in_flight` or
    /// `series_rows` (`None` for a complete run).
    pub stopped_by: Option<&'static str>,
    /// The same, as a sentence with the numbers.
    pub stopped_by_limit: Option<String>,
    /// Work left running for senders who gave up ([`crate::zombie`]).
    pub zombies: ZombieReport,
    /// Empirical CDF of latency over all requests, `(ms, fraction)`, for charts.
    #[serde(skip)]
    pub latency_cdf: Vec<(f64, f64)>,
    /// Per-bucket time series, for `timeseries.csv` and charts.
    #[serde(skip)]
    pub series: TimeSeries,
    /// Timeline changes `(time s, name, role)`, for charts.
    #[serde(skip)]
    pub timeline: Vec<(f64, String, Option<TimelineRole>)>,
    /// One record per attempt, in the order they ended (only when asked for).
    #[serde(skip)]
    pub attempts: Vec<AttemptRecord>,
}

/// Zombie requests: tries of workload requests whose sender gave up (a user
/// who left, a client that retried) while work below them still ran.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ZombieReport {
    /// Tries of workload requests that ended without success for their
    /// sender: given up on, or answered with an error.
    pub abandoned: u64,
    /// Tries that were over for their sender (given up on, or answered)
    /// while work below them still ran: zombie requests. An answered try can
    /// leave one too, so this may exceed `abandoned`.
    pub zombies: u64,
    /// Most zombie requests alive at once.
    pub peak: u64,
    /// Closed-loop users who gave up on at least one try (impatient users).
    pub impatient_users: u64,
    /// Zombie requests of closed-loop users, all of them, per impatient user
    /// (`None` without impatient users).
    pub per_impatient_user: Option<f64>,
    /// Mean over impatient users of the most zombies each had alive at once.
    pub user_peak_mean: Option<f64>,
    /// Most zombies one user had alive at once.
    pub user_peak_max: u64,
    /// How many closed-loop users had at most `i` zombies alive at once, for
    /// `i` = 0, 1, 2, ... (summary.json only).
    pub users_by_peak: Vec<u64>,
}

fn zombie_report(z: &crate::zombie::Zombies) -> ZombieReport {
    let users = || z.users.iter().flatten();
    let impatient = || users().filter(|u| u.gave_up > 0);
    let n = impatient().count() as u64;
    // Averages over the impatient users (none: no average).
    let per_impatient = |total: u64| (n > 0).then(|| round_ratio(total as f64 / n as f64));
    ZombieReport {
        abandoned: z.abandoned,
        zombies: z.started,
        peak: z.peak,
        impatient_users: n,
        per_impatient_user: per_impatient(users().map(|u| u64::from(u.total)).sum()),
        user_peak_mean: per_impatient(impatient().map(|u| u64::from(u.peak)).sum()),
        user_peak_max: users().map(|u| u64::from(u.peak)).max().unwrap_or(0),
        users_by_peak: {
            let mut counts = Vec::new();
            for u in users() {
                let peak = u.peak as usize;
                if counts.len() <= peak {
                    counts.resize(peak + 1, 0);
                }
                counts[peak] += 1;
            }
            counts
        },
    }
}

impl AttemptRecord {
    /// Its row of `attempts.csv` ([`ATTEMPT_COLUMNS`]), in variant `variant`
    /// whose services are named `services` in model order. One function for
    /// the rows written from memory and the rows streamed during a run, so
    /// that both give the same bytes.
    pub fn csv_fields(&self, variant: &str, services: &[&str]) -> [String; 10] {
        let ms = |t: SimTime| round_ms(t.as_nanos() as f64 / 1e6).to_string();
        [
            variant.to_string(),
            self.request.to_string(),
            services
                .get(self.service)
                .map_or(String::new(), |s| s.to_string()),
            opt(&self.shard),
            self.replica.to_string(),
            self.attempt_no.to_string(),
            self.hedge.to_string(),
            ms(self.started),
            ms(self.finished),
            self.outcome.as_str().to_string(),
        ]
    }
}

/// What one service saw.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ServiceReport {
    /// Service name.
    pub name: String,
    /// Attempts received.
    pub calls: u64,
    /// `calls / requests`: the amplification of this service's load (`None`
    /// without requests).
    pub calls_per_request: Option<f64>,
    /// Handlers run to their end (success or error).
    pub completed: u64,
    /// Of those, ended with an error.
    pub failed: u64,
    /// Completed for nobody: after its caller, or the sender of the request
    /// it served, had given up (orphan and zombie work).
    pub wasted: u64,
    /// Stopped early by cancellation.
    pub cancelled: u64,
    /// Refused by a full queue.
    pub rejected: u64,
    /// Refused or dropped by admission control.
    pub shed: u64,
    /// Longest queue seen.
    pub max_queue: u64,
    /// Retries sent to this service.
    pub retries: u64,
    /// Retries (and hedges) to this service refused by a retry budget.
    pub budget_denied: u64,
    /// Attempts to this service refused by an open circuit breaker.
    pub breaker_rejected: u64,
    /// Requests refused with 429 by this service, or by a caller's own limiter.
    pub rate_limited: u64,
    /// Calls to this service refused by a caller's full bulkhead.
    pub bulkhead_full: u64,
    /// Attempts to this service refused by a caller's adaptive throttle.
    pub throttled: u64,
    /// Requests refused, dropped (expired queue messages) or cut short
    /// because of their deadline.
    pub expired: u64,
    /// Work steps stopped by their static timeout (statement timeouts).
    pub work_timeouts: u64,
    /// Work steps started after the request's deadline had passed.
    pub started_late: u64,
    /// Hedges sent to this service (part of `calls`).
    pub hedges: u64,
    /// Attempts to this service its callers stopped waiting for and told it
    /// so (a tied hedge's loser, a cancelled call): cancellations requested.
    /// Whether the work then stopped is `cancelled`, or ran on: `wasted`.
    pub cancellations: u64,
    /// Seconds the breakers guarding calls to this service were open, summed
    /// over breakers (one per caller).
    pub breaker_open_s: f64,
    /// Times those breakers opened (closed or half-open → open).
    pub breaker_opened: u64,
    /// Shed by admission control per priority class (`(none)`: no class); only
    /// classes with sheds. In summary.json, not summary.csv.
    pub shed_by_class: Vec<(String, u64)>,
    /// Most attempts received in one second.
    pub peak_offered_rps: f64,
    /// The share of the service's workers busy over the run: busy
    /// worker-time over the worker-time of its instances up (`None` with
    /// unbounded workers).
    pub utilisation: Option<f64>,
    /// The busiest time bucket's `utilisation`: timeseries.csv's highest
    /// `utilisation` for the service.
    pub peak_utilisation: Option<f64>,
    /// How the service's parallel steps ended (absent without one). In
    /// summary.json, not summary.csv.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallel: Option<FanOutCounts>,
}

/// What happened on one call edge, summed over its caller's instances.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EdgeReport {
    /// The caller: a service, or `workload:<name>`.
    pub caller: String,
    /// The callee.
    pub callee: String,
    /// The counters.
    #[serde(flatten)]
    pub counters: EdgeCounters,
    /// For a branch of a parallel step: the latency of its calls that ended
    /// (retries included), from the step's start to the branch's end; calls
    /// cancelled because the step was over are not counted. Absent for
    /// other edges.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<Quantiles>,
}

/// What one workload's callers saw.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkloadReport {
    /// Workload name.
    pub name: String,
    /// Logical requests.
    pub requests: u64,
    /// Of those, succeeded (in full or degraded).
    pub succeeded: u64,
    /// Of those, answered degraded by fallbacks.
    pub degraded: u64,
    /// `succeeded / requests` (`None` without requests).
    pub success_rate: Option<f64>,
    /// Latency of all its requests, ms (`None`: none was answered).
    pub latency_ms: Option<Quantiles>,
}

/// All variants of one model run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunReport {
    /// Model name.
    pub model: String,
    /// Model description.
    pub description: String,
    /// Master seed.
    pub seed: u64,
    /// One report per variant, in file order.
    pub variants: Vec<VariantReport>,
}

/// Peak of a per-bucket count, per second.
fn peak_rps(series: &TimeSeries, count: impl Fn(usize) -> u64) -> f64 {
    let per_s = 1.0 / series.bucket_s();
    (0..series.len())
        .map(|b| count(b) as f64 * per_s)
        .fold(0.0, f64::max)
}

/// Busy worker-time of service `s` over its workers' time up, summed over
/// the series' buckets (the last one cut short at the run's end): the
/// buckets with bounded workers and some up; `None` if there are none.
fn mean_utilisation(series: &TimeSeries, s: usize) -> Option<f64> {
    let (mut busy, mut available) = (0u128, 0u128);
    for b in 0..series.len() {
        let x = series.service(b, s);
        if let Some(worker_ns) = x.worker_ns_up() {
            busy += x.busy_ns;
            available += worker_ns;
        }
    }
    (available > 0).then(|| busy as f64 / available as f64)
}

/// A service's utilisation in one bucket, timeseries.csv's `S.utilisation`:
/// busy worker-time over worker-time up, both over the bucket (`None` with
/// unbounded workers, or none up). Workers still finishing work on an
/// instance taken down count as busy, but not as up: the only way above 1.
fn bucket_utilisation(x: &ServiceBucket) -> Option<f64> {
    let worker_ns = x.worker_ns_up()?;
    Some(x.busy_ns as f64 / worker_ns as f64)
}

/// Service `s`'s highest utilisation in a bucket, as timeseries.csv gives it.
fn peak_utilisation(series: &TimeSeries, s: usize) -> Option<f64> {
    (0..series.len())
        .filter_map(|b| bucket_utilisation(series.service(b, s)))
        .reduce(f64::max)
}

/// The report of a run: what was measured, with the policy state at the end
/// (how long breakers stayed open), in the terms of the model in force.
/// `events`: the events the run handled.
pub(crate) fn variant_report(
    topology: &Topology<'_>,
    policies: &PolicyState,
    measured: &Measurements<'_>,
    events: u64,
    variant: &str,
    stopped: Option<LimitHit>,
) -> VariantReport {
    let requests = measured.requests;
    let latency = LatencyRecorder::merged(
        measured
            .per_workload
            .iter()
            .flat_map(|w| [&w.ok_latency, &w.failed_latency]),
    );
    let ok_latency = LatencyRecorder::merged(measured.per_workload.iter().map(|w| &w.ok_latency));
    let per_request = |x: u64| (requests > 0).then(|| round_ratio(x as f64 / requests as f64));
    // The last bucket's per-workload quantiles are computed when it closes.
    let mut closed = measured.series.clone();
    closed.close();
    let series = &closed;
    // The edges into each service, in edge order: grouped once, not
    // searched for each service (quadratic in a chain of 10^4 services).
    let mut edges_into: Vec<Vec<usize>> = vec![Vec::new(); topology.model.services.len()];
    for (i, edge) in topology.edges.iter().enumerate() {
        edges_into[edge.to].push(i);
    }
    let services = topology
        .model
        .services
        .iter()
        .zip(&measured.services)
        .enumerate()
        .map(|(s, (spec, state))| {
            let ServiceCounters {
                calls,
                completed,
                failed,
                wasted,
                cancelled,
                rejected,
                shed,
                max_queue,
                retries,
                budget_denied,
                breaker_rejected,
                rate_limited,
                bulkhead_full,
                throttled,
                ref shed_by_class,
                refused_429: _,
                expired,
                work_timeouts,
                started_late,
                parallel,
            } = *state;
            let shed_by_class = topology
                .model
                .classes
                .iter()
                .map(String::as_str)
                .chain(std::iter::once("(none)"))
                .zip(shed_by_class)
                .filter(|(_, n)| **n > 0)
                .map(|(c, n)| (c.to_string(), *n))
                .collect();
            // The edges into this service: their callers' state, and counters.
            let into_s = || {
                edges_into[s]
                    .iter()
                    .map(|&i| (&policies.edges[i], &measured.edges[i]))
            };
            let breakers = || {
                into_s()
                    .flat_map(|(callers, _)| callers)
                    .filter_map(|st| st.breaker.as_ref())
            };
            let breaker_open_s: f64 = breakers()
                .map(|b| b.open_time(measured.ended).as_ms() / 1000.0)
                // `sum` of no f64 is -0.0; fold from +0.0 so the column reads 0.
                .fold(0.0, |a, b| a + b);
            let breaker_opened: u64 = breakers().map(|b| b.times_opened(measured.ended)).sum();
            ServiceReport {
                name: spec.name.clone(),
                hedges: into_s().map(|(_, c)| c.hedges).sum(),
                cancellations: into_s().map(|(_, c)| c.cancellations).sum(),
                calls,
                breaker_opened,
                shed_by_class,
                calls_per_request: per_request(calls),
                completed,
                failed,
                wasted,
                cancelled,
                rejected,
                shed,
                max_queue,
                retries,
                budget_denied,
                breaker_rejected,
                rate_limited,
                bulkhead_full,
                throttled,
                expired,
                work_timeouts,
                started_late,
                parallel: (spec.steps.iter())
                    .any(|step| matches!(step, Step::Parallel(_)))
                    .then_some(parallel),
                breaker_open_s: round_ratio(breaker_open_s),
                peak_offered_rps: round_ratio(peak_rps(series, |b| series.service(b, s).offered())),
                utilisation: mean_utilisation(series, s).map(round_ratio),
                peak_utilisation: peak_utilisation(series, s).map(round_ratio),
            }
        })
        .collect();
    let focus = topology.model.focus;
    let changes = topology.changes;
    let role_time = |role| changes.iter().find(|c| c.role == Some(role)).map(|c| c.at);
    // Neither exists for a run that ended before its trigger did.
    let trigger_end = role_time(TimelineRole::TriggerEnd).filter(|&t| t < measured.ended);
    let storm_offered_rps = trigger_end.map(|from| {
        let until = changes
            .iter()
            .filter(|c| c.role == Some(TimelineRole::Intervention) && c.at >= from)
            .map(|c| c.at)
            .next()
            .unwrap_or(measured.ended);
        round_ratio(mean_rate(series, from, until, |b| {
            series.service(b, focus).offered()
        }))
    });
    let peak_after_trigger_rps = trigger_end.map(|from| {
        let first = series.index(from);
        let per_s = 1.0 / series.bucket_s();
        let peak = (first..series.len())
            .map(|b| series.service(b, focus).offered() as f64 * per_s)
            .fold(0.0, f64::max);
        round_ratio(peak)
    });
    let peak_offered_rps = round_ratio(peak_rps(series, |b| series.service(b, focus).offered()));
    let verdict = topology
        .model
        .metastability
        .as_ref()
        .and_then(|policy| classify(&samples_of(series), series.bucket, changes, policy));
    let failed = measured.failures.total();
    let model = topology.model;
    let workloads = model
        .reported_workloads
        .iter()
        .zip(&measured.per_workload)
        .map(|(name, c)| WorkloadReport {
            name: name.clone(),
            requests: c.requests,
            succeeded: c.succeeded,
            degraded: c.degraded.total,
            success_rate: (c.requests > 0)
                .then(|| round_ratio(c.succeeded as f64 / c.requests as f64)),
            latency_ms: c.latency().quantiles(),
        })
        .collect();
    let mut edges: Vec<EdgeReport> = Vec::with_capacity(topology.edges.len());
    // The reported workload of the last workload edge, whose summed copies
    // (consecutive edges) become one edge.
    let mut last_reported = None;
    for (i, ((edge, caller), counters)) in topology
        .edges
        .iter()
        .zip(&topology.edge_caller)
        .zip(&measured.edges)
        .enumerate()
    {
        let caller = match caller {
            Some(s) => model.services[*s].name.clone(),
            None => {
                let reported = model.workload_ids[i].reported_as;
                if last_reported.replace(reported) == Some(reported) {
                    if let Some(summed) = edges.last_mut() {
                        summed.counters.absorb(counters);
                        continue;
                    }
                }
                format!(
                    "workload:{}",
                    model.reported_workloads[usize::from(reported)]
                )
            }
        };
        edges.push(EdgeReport {
            caller,
            callee: model.services[edge.to].name.clone(),
            counters: counters.clone(),
            latency_ms: measured.branch_latency[i]
                .as_ref()
                .and_then(LatencyRecorder::quantiles),
        });
    }
    VariantReport {
        workloads,
        edges,
        variant: variant.to_string(),
        requests,
        succeeded: measured.succeeded,
        answered_full: measured.succeeded - measured.degraded.total,
        degraded: measured.degraded,
        failed,
        failed_by_reason: measured.failures,
        unanswered: requests - measured.succeeded - failed,
        success_rate: per_request(measured.succeeded),
        latency_ms: latency.quantiles(),
        ok_latency_ms: ok_latency.quantiles(),
        services,
        focus: topology.model.services[focus].name.clone(),
        peak_offered_rps,
        storm_offered_rps,
        peak_after_trigger_rps,
        verdict,
        completion_s: seconds(measured.last_answer),
        events,
        sim_time_s: seconds(measured.ended),
        peak_requests_in_flight: measured.peak_in_flight,
        complete: stopped.is_none(),
        stopped_by: stopped.as_ref().map(limit_name),
        stopped_by_limit: stopped.map(|s| s.to_string()),
        events_by_kind: Vec::new(),
        zombies: zombie_report(&measured.zombies),
        latency_cdf: latency.cdf(),
        // The report keeps the closed copy: one clone of the series, not two.
        series: closed,
        timeline: changes
            .iter()
            .map(|c| (seconds(c.at), c.name.clone(), c.role))
            .collect(),
        attempts: Vec::new(),
    }
}

/// The name of a limit in `stopped_by`: the model field that set it.
fn limit_name(hit: &LimitHit) -> &'static str {
    match hit {
        LimitHit::Events(_) | LimitHit::EventsAndThinned { .. } => "max_events",
        LimitHit::InFlight(_) | LimitHit::CallsInFlight(_) => "max_in_flight",
        LimitHit::Buckets { .. } => "series_rows",
    }
}

/// Seconds with microsecond resolution, as the nearest double (one rounding).
fn seconds(t: SimTime) -> f64 {
    (t.as_nanos() as f64 / 1e3).round() / 1e6
}

/// Mean per-second rate of a per-bucket count over the buckets wholly inside
/// `[from, until)` (0 if there are none).
fn mean_rate(
    series: &TimeSeries,
    from: SimTime,
    until: SimTime,
    count: impl Fn(usize) -> u64,
) -> f64 {
    let width = series.bucket.as_nanos().max(1);
    let first = from.as_nanos().div_ceil(width) as usize;
    let last = ((until.as_nanos() / width) as usize).min(series.len());
    if last <= first {
        return 0.0;
    }
    let total: u64 = (first..last).map(count).sum();
    total as f64 / ((last - first) as f64 * series.bucket_s())
}

/// Ratios carry six decimals: more is noise, and fewer digits diff better.
fn round_ratio(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// The failure-reason columns, in `summary.csv` and `timeseries.csv` alike,
/// right after `failed` / `succeeded`.
pub const FAILURE_COLUMNS: &[&str] = &[
    "failed_timeout",
    "failed_deadline_exceeded",
    "failed_rejected",
    "failed_error",
    "failed_connection_refused",
    "failed_breaker_open",
    "failed_rate_limited",
    "failed_bulkhead_full",
    "failed_throttled",
];

/// One cell per [`FAILURE_COLUMNS`] entry.
fn failure_cells(f: &FailureCounts) -> [String; 9] {
    [
        f.timeout,
        f.deadline_exceeded,
        f.rejected,
        f.error,
        f.connection_refused,
        f.breaker_open,
        f.rate_limited,
        f.bulkhead_full,
        f.throttled,
    ]
    .map(|n| n.to_string())
}

/// The fixed leading columns of `summary.csv`; [`FAILURE_COLUMNS`] come after
/// the first seven (through `success_rate`).
pub const SUMMARY_COLUMNS: &[&str] = &[
    "variant",
    "complete",
    "stopped_by",
    "requests",
    "succeeded",
    "failed",
    "success_rate",
    "unanswered",
    "answered_full",
    "degraded",
    "degraded_stale",
    "degraded_default",
    "degraded_call",
    "latency_p50_ms",
    "latency_p90_ms",
    "latency_p99_ms",
    "latency_p999_ms",
    "latency_max_ms",
    "latency_mean_ms",
    "ok_latency_p50_ms",
    "ok_latency_p99_ms",
    "peak_offered_rps",
    "storm_offered_rps",
    "peak_after_trigger_rps",
    "outcome",
    "metastable",
    "recovery_s",
    "recovered_by",
    "recovered_after_s",
    "degraded_from_s",
    "back_at_s",
    "relapsed_at_s",
    "degraded_s",
    "overloaded_s",
    "end_state",
    "degraded_spans",
    "baseline_goodput_rps",
    "baseline_latency_ms",
    "goodput_min_ratio",
    "latency_max_ratio",
    "decisive_t_s",
    "decisive_goodput_ratio",
    "decisive_served_ratio",
    "decisive_demand_ratio",
    "decisive_latency_ratio",
    "decisive_backlog_ratio",
    "decisive_retry_share",
    "end_goodput_ratio",
    "end_served_ratio",
    "end_demand_ratio",
    "end_latency_ratio",
    "end_backlog_ratio",
    "end_retry_share",
    "verdict_reason",
    "completion_s",
    "events",
    "sim_time_s",
    "zombies",
    "peak_zombies",
    "impatient_users",
    "zombies_per_impatient_user",
    "user_peak_zombies_mean",
    "user_peak_zombies_max",
];

/// The columns of [`SUMMARY_COLUMNS`] that hold words (`true`/`false`, an
/// outcome, a limit's or an intervention's name, a sentence): the tidy
/// `summary.tidy.csv` leaves them out so that its `value` column is numeric.
pub const SUMMARY_TEXT_COLUMNS: &[&str] = &[
    "complete",
    "stopped_by",
    "outcome",
    "metastable",
    "recovered_by",
    "end_state",
    "degraded_spans",
    "verdict_reason",
];

/// The columns of `summary.csv` that hold a variant's recovery verdict, from
/// `outcome` to `verdict_reason`: its outcome, the recovery time, the
/// baseline and bars, the decisive and last windows' figures, and the reason.
/// All empty for a model without a `metastability` block. Library API: the
/// Python package's verdicts frame is these columns of the summary.
pub fn verdict_columns() -> &'static [&'static str] {
    let at = |name: &str| {
        SUMMARY_COLUMNS
            .iter()
            .position(|c| *c == name)
            .expect("a summary column")
    };
    &SUMMARY_COLUMNS[at("outcome")..=at("verdict_reason")]
}

/// The per-service columns, each prefixed by `<service>.`.
pub const SERVICE_COLUMNS: &[&str] = &[
    "calls",
    "calls_per_request",
    "completed",
    "failed",
    "wasted",
    "cancelled",
    "rejected",
    "shed",
    "max_queue",
    "retries",
    "budget_denied",
    "breaker_rejected",
    "breaker_open_s",
    "breaker_opened",
    "rate_limited",
    "bulkhead_full",
    "throttled",
    "hedges",
    "cancellations",
    "expired",
    "work_timeouts",
    "started_late",
    "peak_offered_rps",
    "utilisation",
    "peak_utilisation",
];

/// The columns of `attempts.csv`.
pub const ATTEMPT_COLUMNS: &[&str] = &[
    "variant",
    "request_id",
    "service",
    "shard",
    "replica",
    "attempt_no",
    "hedge",
    "started_ms",
    "finished_ms",
    "outcome",
];

/// The per-workload columns, each prefixed by `<workload>.`.
pub const WORKLOAD_COLUMNS: &[&str] = &[
    "requests",
    "succeeded",
    "degraded",
    "success_rate",
    "latency_p99_ms",
];

/// The header of `summary.csv` for a run of one variant whose model is
/// `model`, as [`RunReport::summary_table`] writes it: known before the run,
/// so that a sweep can tell whether a table it resumes has this build's
/// columns.
pub fn summary_header(model: &stormsim_model::Model) -> Vec<String> {
    summary_header_of(
        model.services.iter().map(|s| s.name.as_str()),
        model.reported_workloads.iter().map(String::as_str),
    )
}

/// The header of `summary.csv` for a run of these services and workloads,
/// in this order.
pub fn summary_header_of<'a>(
    services: impl IntoIterator<Item = &'a str>,
    workloads: impl IntoIterator<Item = &'a str>,
) -> Vec<String> {
    let mut header: Vec<String> = SUMMARY_COLUMNS[..7]
        .iter()
        .chain(FAILURE_COLUMNS)
        .chain(&SUMMARY_COLUMNS[7..])
        .map(|c| c.to_string())
        .collect();
    for s in services {
        header.extend(SERVICE_COLUMNS.iter().map(|c| format!("{s}.{c}")));
    }
    for w in workloads {
        header.extend(WORKLOAD_COLUMNS.iter().map(|c| format!("{w}.{c}")));
    }
    header
}

fn opt<T: ToString>(x: &Option<T>) -> String {
    x.as_ref().map_or(String::new(), T::to_string)
}

impl RunReport {
    /// Names of services (or workloads) in the order first seen across variants.
    fn names_in_order<'a, T: 'a>(
        &'a self,
        items: impl Fn(&'a VariantReport) -> &'a [T],
        name: impl Fn(&'a T) -> &'a str,
    ) -> Vec<&'a str> {
        let mut names: Vec<&str> = Vec::new();
        let mut seen = BTreeSet::new();
        for v in &self.variants {
            for item in items(v) {
                if seen.insert(name(item)) {
                    names.push(name(item));
                }
            }
        }
        names
    }

    fn service_names(&self) -> Vec<&str> {
        self.names_in_order(|v| &v.services, |s| &s.name)
    }

    fn workload_names(&self) -> Vec<&str> {
        self.names_in_order(|v| &v.workloads, |w| &w.name)
    }

    /// `summary.csv`'s columns after `variant`: the run's own, then
    /// [`SERVICE_COLUMNS`] for every service and [`WORKLOAD_COLUMNS`] for
    /// every workload in the order first seen.
    pub fn summary_columns(&self) -> Vec<Column<'_>> {
        let mut columns: Vec<Column> = SUMMARY_COLUMNS[1..7]
            .iter()
            .chain(FAILURE_COLUMNS)
            .chain(&SUMMARY_COLUMNS[7..])
            .map(|&metric| Column {
                numeric: !SUMMARY_TEXT_COLUMNS.contains(&metric),
                ..Column::run(metric)
            })
            .collect();
        for s in self.service_names() {
            columns.extend(SERVICE_COLUMNS.iter().map(|c| Column::of(s, c)));
        }
        for w in self.workload_names() {
            columns.extend(WORKLOAD_COLUMNS.iter().map(|c| Column::of(w, c)));
        }
        columns
    }

    /// `summary.csv`'s rows, one per variant, its name first, then a cell per
    /// [`RunReport::summary_columns`] (empty where a variant lacks the
    /// service, or where a metric does not apply, e.g. `recovery_s` without
    /// a trigger).
    fn summary_rows(&self) -> Vec<Vec<String>> {
        let service_names = self.service_names();
        let workload_names = self.workload_names();
        let mut rows = Vec::new();
        for v in &self.variants {
            let l = v.latency_ms.as_ref();
            let ok = v.ok_latency_ms.as_ref();
            let r = v.verdict.as_ref();
            let decisive = r.and_then(|r| r.decisive.as_ref());
            let end = r.and_then(|r| r.at_end.as_ref());
            let thresholds = r.and_then(|r| r.thresholds.as_ref());
            let baseline = r.and_then(|r| r.baseline.as_ref());
            let course = r.and_then(|r| r.course.as_ref());
            let mut row: Vec<String> = vec![
                v.variant.clone(),
                v.complete.to_string(),
                opt(&v.stopped_by),
                v.requests.to_string(),
                v.succeeded.to_string(),
                v.failed.to_string(),
                opt(&v.success_rate),
            ];
            row.extend(failure_cells(&v.failed_by_reason));
            row.extend([
                v.unanswered.to_string(),
                v.answered_full.to_string(),
                v.degraded.total.to_string(),
                v.degraded.stale.to_string(),
                v.degraded.default.to_string(),
                v.degraded.call.to_string(),
                opt(&l.map(|l| l.p50)),
                opt(&l.map(|l| l.p90)),
                opt(&l.map(|l| l.p99)),
                opt(&l.map(|l| l.p999)),
                opt(&l.map(|l| l.max)),
                opt(&l.map(|l| l.mean)),
                opt(&ok.map(|l| l.p50)),
                opt(&ok.map(|l| l.p99)),
                v.peak_offered_rps.to_string(),
                opt(&v.storm_offered_rps),
                opt(&v.peak_after_trigger_rps),
                opt(&r.map(|r| r.outcome.as_str())),
                opt(&r.and_then(|r| r.metastable())),
                opt(&r.and_then(|r| r.recovery_s)),
                opt(&r.and_then(|r| r.recovered_by.clone())),
                opt(&r.and_then(|r| r.recovered_after_s)),
                opt(&course.and_then(|c| c.degraded_from_s)),
                opt(&course.and_then(|c| c.back_at_s)),
                opt(&course.and_then(|c| c.relapsed_at_s)),
                opt(&course.map(|c| c.degraded_s)),
                opt(&course.map(|c| c.overloaded_s)),
                opt(&course.and_then(|c| c.end_state.map(|e| e.as_str()))),
                opt(&course.map(|c| c.spans_text())),
                opt(&baseline.map(|b| b.goodput_rps)),
                opt(&baseline.and_then(|b| b.latency_ms)),
                opt(&thresholds.map(|t| t.goodput_min_ratio)),
                opt(&thresholds.and_then(|t| t.latency_max_ratio)),
                opt(&decisive.map(|e| e.from_s)),
                opt(&decisive.and_then(|e| e.goodput_ratio)),
                opt(&decisive.and_then(|e| e.served_ratio)),
                opt(&decisive.and_then(|e| e.demand_ratio)),
                opt(&decisive.and_then(|e| e.latency_ratio)),
                opt(&decisive.and_then(|e| e.backlog_ratio)),
                opt(&decisive.and_then(|e| e.retry_share)),
                opt(&end.and_then(|e| e.goodput_ratio)),
                opt(&end.and_then(|e| e.served_ratio)),
                opt(&end.and_then(|e| e.demand_ratio)),
                opt(&end.and_then(|e| e.latency_ratio)),
                opt(&end.and_then(|e| e.backlog_ratio)),
                opt(&end.and_then(|e| e.retry_share)),
                opt(&r.map(|r| r.reason.clone())),
                v.completion_s.to_string(),
                v.events.to_string(),
                v.sim_time_s.to_string(),
                v.zombies.zombies.to_string(),
                v.zombies.peak.to_string(),
                v.zombies.impatient_users.to_string(),
                opt(&v.zombies.per_impatient_user),
                opt(&v.zombies.user_peak_mean),
                v.zombies.user_peak_max.to_string(),
            ]);
            for at in places(&service_names, &v.services, |s| &s.name) {
                match at.map(|i| &v.services[i]) {
                    Some(s) => row.extend([
                        s.calls.to_string(),
                        opt(&s.calls_per_request),
                        s.completed.to_string(),
                        s.failed.to_string(),
                        s.wasted.to_string(),
                        s.cancelled.to_string(),
                        s.rejected.to_string(),
                        s.shed.to_string(),
                        s.max_queue.to_string(),
                        s.retries.to_string(),
                        s.budget_denied.to_string(),
                        s.breaker_rejected.to_string(),
                        s.breaker_open_s.to_string(),
                        s.breaker_opened.to_string(),
                        s.rate_limited.to_string(),
                        s.bulkhead_full.to_string(),
                        s.throttled.to_string(),
                        s.hedges.to_string(),
                        s.cancellations.to_string(),
                        s.expired.to_string(),
                        s.work_timeouts.to_string(),
                        s.started_late.to_string(),
                        s.peak_offered_rps.to_string(),
                        opt(&s.utilisation),
                        opt(&s.peak_utilisation),
                    ]),
                    None => row.extend(SERVICE_COLUMNS.iter().map(|_| String::new())),
                }
            }
            for at in places(&workload_names, &v.workloads, |w| &w.name) {
                match at.map(|i| &v.workloads[i]) {
                    Some(w) => row.extend([
                        w.requests.to_string(),
                        w.succeeded.to_string(),
                        w.degraded.to_string(),
                        opt(&w.success_rate),
                        opt(&w.latency_ms.map(|l| l.p99)),
                    ]),
                    None => row.extend(WORKLOAD_COLUMNS.iter().map(|_| String::new())),
                }
            }
            rows.push(row);
        }
        rows
    }

    /// The table of `summary.csv`: its header (the wide names) and one row
    /// per variant.
    pub fn summary_table(&self) -> (Vec<String>, Vec<Vec<String>>) {
        let header = SUMMARY_COLUMNS[..1]
            .iter()
            .map(|c| c.to_string())
            .chain(self.summary_columns().iter().map(Column::wide_name))
            .collect();
        (header, self.summary_rows())
    }

    /// `summary.csv` ([`Layout::Wide`]) or `summary.tidy.csv`
    /// ([`Layout::Tidy`]), into `out`.
    pub fn write_summary<W: Write>(&self, layout: Layout, out: W) -> Result<W, csv::Error> {
        let columns = self.summary_columns();
        let mut table = TableWriter::new(layout, &SUMMARY_COLUMNS[..1], &columns, out)?;
        for row in self.summary_rows() {
            table.row(&row)?;
        }
        table.finish()
    }

    /// `summary.csv` (see [`RunReport::write_summary`]). Library API: the
    /// bytes `stormsim run` writes, which the Python package's frames are
    /// parsed from.
    pub fn summary_csv(&self) -> Result<String, csv::Error> {
        utf8(self.write_summary(Layout::Wide, Vec::new())?)
    }

    /// `attempts.csv` (S4's attempt telemetry): one row per attempt that went
    /// on the wire, in the order they ended, for the variants run with attempt
    /// records (`Simulator::record_attempts`). Times in ms.
    pub fn attempts_csv(&self) -> Result<String, csv::Error> {
        let mut out = csv::Writer::from_writer(Vec::new());
        out.write_record(ATTEMPT_COLUMNS)?;
        for v in &self.variants {
            let services: Vec<&str> = v.services.iter().map(|s| s.name.as_str()).collect();
            for a in &v.attempts {
                out.write_record(a.csv_fields(&v.variant, &services))?;
            }
        }
        finish(out)
    }

    /// `timeseries.csv`'s columns after `variant` and `t_s`: the run's own,
    /// then [`TIMESERIES_SERVICE_COLUMNS`] for every service and
    /// [`TIMESERIES_WORKLOAD_COLUMNS`] for every workload in the order first
    /// seen.
    pub fn timeseries_columns(&self) -> Vec<Column<'_>> {
        let mut columns: Vec<Column> = TIMESERIES_COLUMNS[2..4]
            .iter()
            .chain(FAILURE_COLUMNS)
            .chain(&TIMESERIES_COLUMNS[4..])
            .map(|&metric| Column::run(metric))
            .collect();
        let services = self.service_names();
        let has_cpu = self.have_cpu(&services);
        for (s, has_cpu) in services.into_iter().zip(has_cpu) {
            columns.extend(TIMESERIES_SERVICE_COLUMNS.iter().map(|c| Column::of(s, c)));
            if has_cpu {
                columns.extend(TIMESERIES_CPU_COLUMNS.iter().map(|c| Column::of(s, c)));
            }
        }
        for w in self.workload_names() {
            columns.extend(TIMESERIES_WORKLOAD_COLUMNS.iter().map(|c| Column::of(w, c)));
        }
        columns
    }

    /// For each of `services`, whether it has cores in some variant (a
    /// `cpu`): only those get [`TIMESERIES_CPU_COLUMNS`], so that a model
    /// without one has no columns that are always empty.
    fn have_cpu(&self, services: &[&str]) -> Vec<bool> {
        let mut has_cpu = vec![false; services.len()];
        for v in &self.variants {
            let ts = &v.series;
            let at = places(services, &v.services, |s| &s.name);
            for (flag, at) in has_cpu.iter_mut().zip(at) {
                if let Some(s) = at {
                    *flag |= ts.has_cpu(s);
                }
            }
        }
        has_cpu
    }

    /// `timeseries.csv` ([`Layout::Wide`]: one row per variant and bucket)
    /// or `timeseries.tidy.csv.gz` ([`Layout::Tidy`]), into `out`, a row at a
    /// time. Counts are per bucket, not per second.
    pub fn write_timeseries<W: Write>(&self, layout: Layout, out: W) -> Result<W, csv::Error> {
        let service_names = self.service_names();
        let has_cpu = self.have_cpu(&service_names);
        let workload_names = self.workload_names();
        let columns = self.timeseries_columns();
        let mut table = TableWriter::new(layout, &TIMESERIES_COLUMNS[..2], &columns, out)?;
        for v in &self.variants {
            let ts = &v.series;
            let service_at = places(&service_names, &v.services, |s| &s.name);
            let workload_at = places(&workload_names, &v.workloads, |w| &w.name);
            for b in 0..ts.len() {
                let g = &ts.global[b];
                let mut row = vec![
                    v.variant.clone(),
                    ts.start_s(b).to_string(),
                    g.requests.to_string(),
                    g.succeeded.to_string(),
                ];
                row.extend(failure_cells(&g.failures));
                row.push(g.degraded.to_string());
                row.push(opt(&g.mean_latency_ms().map(round_ms)));
                row.push(g.zombies.to_string());
                for (&at, &has_cpu) in service_at.iter().zip(&has_cpu) {
                    match at {
                        Some(s) => {
                            let x = ts.service(b, s);
                            let busy = ts.mean_over_bucket(b, x.busy_ns);
                            let utilisation = bucket_utilisation(x).map(round_ratio);
                            row.extend([
                                x.offered().to_string(),
                                x.offered_first.to_string(),
                                x.offered_retry.to_string(),
                                x.completed.to_string(),
                                x.wasted.to_string(),
                                x.cancelled.to_string(),
                                x.rejected.to_string(),
                                x.shed.to_string(),
                                x.queue.to_string(),
                                x.in_flight.to_string(),
                                x.breakers_open.to_string(),
                                opt(&x.budget_tokens.map(round_ratio)),
                                opt(&busy.map(round_ratio)),
                                opt(&utilisation),
                                opt(&x.mean_wait_ms().map(round_ms)),
                                opt(&x.mean_service_ms().map(round_ms)),
                            ]);
                            if has_cpu {
                                // Busy cores whenever this variant's service
                                // has a cpu (down instances finish their
                                // work too); their share only of cores up.
                                let cpu = ts.cpu(b, s);
                                let cores_busy = cpu
                                    .and_then(|c| ts.mean_over_bucket(b, c.cores_busy_ns))
                                    .map(round_ratio);
                                let utilisation = cpu.filter(|c| c.core_ns > 0).map(|c| {
                                    round_ratio(c.cores_busy_ns as f64 / c.core_ns as f64)
                                });
                                row.extend([opt(&cores_busy), opt(&utilisation)]);
                            }
                        }
                        None => {
                            let cpu_columns = if has_cpu { TIMESERIES_CPU_COLUMNS } else { &[] };
                            row.extend(
                                TIMESERIES_SERVICE_COLUMNS
                                    .iter()
                                    .chain(cpu_columns)
                                    .map(|_| String::new()),
                            )
                        }
                    }
                }
                for &at in &workload_at {
                    match at {
                        Some(w) => {
                            let x = ts.workload(b, w);
                            row.push(opt(&x.p50_ms.map(round_ms)));
                            row.push(opt(&x.p99_ms.map(round_ms)));
                        }
                        None => {
                            row.extend(TIMESERIES_WORKLOAD_COLUMNS.iter().map(|_| String::new()))
                        }
                    }
                }
                table.row(&row)?;
            }
        }
        table.finish()
    }

    /// `timeseries.csv` (see [`RunReport::write_timeseries`]). Library API,
    /// as [`RunReport::summary_csv`].
    pub fn timeseries_csv(&self) -> Result<String, csv::Error> {
        utf8(self.write_timeseries(Layout::Wide, Vec::new())?)
    }
}

/// Where each of `names` sits among `items` (the first item so named), by
/// one sorted index of `items`: the tables look up every service of every
/// variant, and a search per name made a model of 16,000 services spend
/// seconds writing them.
fn places<'a, T>(
    names: &[&str],
    items: &'a [T],
    name: impl Fn(&'a T) -> &'a str,
) -> Vec<Option<usize>> {
    let mut index = BTreeMap::new();
    for (i, item) in items.iter().enumerate() {
        index.entry(name(item)).or_insert(i);
    }
    names.iter().map(|n| index.get(n).copied()).collect()
}

/// The run-wide columns of `timeseries.csv`; [`FAILURE_COLUMNS`] come after the
/// first four.
pub const TIMESERIES_COLUMNS: &[&str] = &[
    "variant",
    "t_s",
    "requests",
    "succeeded",
    "degraded",
    "mean_latency_ms",
    "zombies",
];

/// The per-service columns of `timeseries.csv`, each prefixed by `<service>.`.
pub const TIMESERIES_SERVICE_COLUMNS: &[&str] = &[
    "offered",
    "offered_first",
    "offered_retry",
    "completed",
    "wasted",
    "cancelled",
    "rejected",
    "shed",
    "queue",
    "in_flight",
    "breakers_open",
    "budget_tokens",
    "busy",
    "utilisation",
    "queue_wait_ms",
    "service_ms",
];

/// The per-service columns of `timeseries.csv` for a service with a `cpu`
/// (in some variant), after [`TIMESERIES_SERVICE_COLUMNS`]: its mean busy
/// cores over the bucket and their share of its cores. A `cpu` service's
/// `busy` counts the workers (threads) holding a request, which may far
/// outnumber its cores.
pub const TIMESERIES_CPU_COLUMNS: &[&str] = &["cores_busy", "cpu_utilisation"];

/// The per-workload columns of `timeseries.csv`, each prefixed by
/// `<workload>.`: latency quantiles of its requests answered in the bucket.
pub const TIMESERIES_WORKLOAD_COLUMNS: &[&str] = &["latency_p50_ms", "latency_p99_ms"];

fn finish(out: csv::Writer<Vec<u8>>) -> Result<String, csv::Error> {
    utf8(out.into_inner().map_err(|e| e.into_error())?)
}

fn utf8(bytes: Vec<u8>) -> Result<String, csv::Error> {
    Ok(String::from_utf8(bytes).expect("CSV of UTF-8 strings is UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_columns_run_from_the_outcome_to_the_reason() {
        let columns = verdict_columns();
        assert_eq!(columns.first(), Some(&"outcome"));
        assert_eq!(columns.last(), Some(&"verdict_reason"));
        assert!(columns.contains(&"metastable") && columns.contains(&"recovery_s"));
        assert!(columns.contains(&"decisive_goodput_ratio"));
        assert!(!columns.contains(&"variant") && !columns.contains(&"completion_s"));
    }
}
