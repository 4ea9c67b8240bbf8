//! What a run measures: counters per run, workload, service and edge, the
//! time series, zombie work, and the attempt log. Written by the handlers as
//! things happen, read only by the report ([`crate::report`]): nothing in the
//! run decides anything from a measurement.

use crate::attempts::AttemptLog;
use crate::metrics::{
    DegradedCounts, EdgeCounters, FailureCounts, LatencyRecorder, Outcome, ServiceCounters,
    WorkloadCounters,
};
use crate::timeseries::{BucketCapacity, TimeSeries};
use crate::zombie::Zombies;
use stormsim_engine::{SimDuration, SimTime};
use stormsim_model::{Arrival, Model, Service};

/// Everything a run measures.
pub(crate) struct Measurements<'m> {
    /// Logical requests started.
    pub requests: u64,
    /// Logical requests answered with success, in full or degraded.
    pub succeeded: u64,
    /// Of those, answered degraded by fallbacks.
    pub degraded: DegradedCounts,
    /// Logical requests answered with a failure, by reason.
    pub failures: FailureCounts,
    /// Per workload as outputs name them (`Model::reported_workloads`).
    pub per_workload: Vec<WorkloadCounters>,
    /// `reported_as[workload]`: its index into `per_workload` and the
    /// series' workload rows.
    reported_as: Vec<u16>,
    /// `services[service]`.
    pub services: Vec<ServiceCounters>,
    /// `edges[edge]`, summed over callers.
    pub edges: Vec<EdgeCounters>,
    /// `branch_latency[edge]`: for a branch of a parallel step, the latency
    /// of its calls that ended, from the step's start (`None`: any other
    /// edge, whose calls are not timed).
    pub branch_latency: Vec<Option<LatencyRecorder>>,
    pub series: TimeSeries,
    /// `capacity[service]`: its workers and cores up, integrated over the
    /// open bucket.
    pub capacity: Vec<Capacity>,
    /// Events before this instant fall in the open bucket: a comparison per
    /// event instead of a 64-bit division ([`TimeSeries::first_unopened_instant`]).
    pub next_bucket_at: SimTime,
    /// When the last logical request got its answer.
    pub last_answer: SimTime,
    /// Most logical requests unanswered at once.
    pub peak_in_flight: u64,
    /// The time the run ended (the horizon, or the last event).
    pub ended: SimTime,
    /// Root attempts and the zombie work below them.
    pub zombies: Zombies,
    /// Events handled, by [`crate::events::Event::kind_index`]: where a
    /// run's time goes, for `stormsim bench`.
    pub events_by_kind: [u64; crate::events::EVENT_KINDS],
    /// Where each attempt's record goes as it ends, when asked for.
    pub attempt_log: Option<AttemptLog<'m>>,
}

impl Measurements<'_> {
    /// Nothing measured yet, for `edges` call edges of `model`, of which
    /// `branch_edges` are the branches of parallel steps.
    pub fn new(model: &Model, edges: usize, branch_edges: &[u32]) -> Self {
        Measurements {
            requests: 0,
            succeeded: 0,
            degraded: DegradedCounts::default(),
            failures: FailureCounts::default(),
            per_workload: model
                .reported_workloads
                .iter()
                .map(|_| WorkloadCounters::default())
                .collect(),
            reported_as: model.workload_ids.iter().map(|w| w.reported_as).collect(),
            services: model
                .services
                .iter()
                .map(|_| ServiceCounters {
                    shed_by_class: vec![0; model.classes.len() + 1],
                    ..ServiceCounters::default()
                })
                .collect(),
            edges: vec![EdgeCounters::default(); edges],
            branch_latency: (0..edges as u32)
                .map(|e| (branch_edges.binary_search(&e).is_ok()).then(LatencyRecorder::default))
                .collect(),
            series: TimeSeries::new(
                model.bucket,
                model.services.iter().map(|s| s.cpu.is_some()),
                model.reported_workloads.len(),
            ),
            capacity: model
                .services
                .iter()
                .map(|s| Capacity::new(workers_up(s), cores_up(s)))
                .collect(),
            next_bucket_at: SimTime::ZERO,
            last_answer: SimTime::ZERO,
            peak_in_flight: 0,
            ended: SimTime::ZERO,
            zombies: Zombies::new(model.workloads.iter().map(|w| match w.arrival {
                Arrival::ClosedLoop { users } => users,
                _ => 0,
            })),
            attempt_log: None,
            events_by_kind: [0; crate::events::EVENT_KINDS],
        }
    }

    /// The same measurements, for a run forked from this one
    /// ([`crate::Simulator`]'s `fork`): a run that logs its attempts does
    /// not fork.
    pub fn fork<'v>(&self) -> Measurements<'v> {
        debug_assert!(
            self.attempt_log.is_none(),
            "a run that logs attempts forked"
        );
        Measurements {
            requests: self.requests,
            succeeded: self.succeeded,
            degraded: self.degraded,
            failures: self.failures,
            per_workload: self.per_workload.clone(),
            reported_as: self.reported_as.clone(),
            services: self.services.clone(),
            edges: self.edges.clone(),
            branch_latency: self.branch_latency.clone(),
            series: self.series.clone(),
            capacity: self.capacity.clone(),
            next_bucket_at: self.next_bucket_at,
            last_answer: self.last_answer,
            peak_in_flight: self.peak_in_flight,
            ended: self.ended,
            zombies: self.zombies.clone(),
            events_by_kind: self.events_by_kind,
            attempt_log: None,
        }
    }

    /// A logical request of `workload` starts, with `in_flight` unanswered
    /// (itself included).
    pub fn request_started(&mut self, workload: usize, in_flight: u64) {
        self.requests += 1;
        self.peak_in_flight = self.peak_in_flight.max(in_flight);
        let workload = usize::from(self.reported_as[workload]);
        self.per_workload[workload].requests += 1;
        self.series.request_started(workload);
    }

    /// A logical request of `workload` is answered at `now`, after `latency`.
    pub fn request_answered(
        &mut self,
        workload: usize,
        now: SimTime,
        latency: SimDuration,
        outcome: Outcome,
    ) {
        self.last_answer = now;
        let workload = usize::from(self.reported_as[workload]);
        let per_workload = &mut self.per_workload[workload];
        match outcome {
            Outcome::Ok | Outcome::Degraded(_) => {
                per_workload.succeeded += 1;
                per_workload.ok_latency.record(latency);
                self.succeeded += 1;
                let degraded = outcome.degraded_by();
                if degraded != 0 {
                    per_workload.degraded.count(degraded);
                    self.degraded.count(degraded);
                }
            }
            Outcome::Failed(reason) => {
                per_workload.failed_latency.record(latency);
                self.failures.add(reason);
            }
        }
        self.series.answered(workload, latency, outcome);
    }
}

fn instances_up(service: &Service) -> u64 {
    u64::from(service.instances - service.instances_down)
}

/// A service's workers up: over its instances up (`None`: unbounded).
pub(crate) fn workers_up(service: &Service) -> Option<u64> {
    (service.workers != u32::MAX).then(|| u64::from(service.workers) * instances_up(service))
}

/// A service's cores up: over its instances up (0 without a `cpu`).
pub(crate) fn cores_up(service: &Service) -> u64 {
    service
        .cpu
        .map_or(0, |cpu| u64::from(cpu.cores) * instances_up(service))
}

/// A service's workers and cores up, integrated over the open time-series
/// bucket: utilisation's denominator, exact when a timeline change adds or
/// removes them inside a bucket (the workers at the bucket's start would
/// make a bucket that gained workers more than fully busy).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Capacity {
    /// Workers up since `since` (`None`: unbounded).
    workers: Option<u64>,
    /// Cores up since `since`.
    cores: u64,
    since: SimTime,
    /// Worker-nanoseconds up in the open bucket until `since` (`None`: the
    /// workers were unbounded for some of it).
    worker_ns: Option<u128>,
    /// Core-nanoseconds up in the open bucket until `since`.
    core_ns: u128,
}

impl Capacity {
    pub(crate) fn new(workers: Option<u64>, cores: u64) -> Self {
        Capacity {
            workers,
            cores,
            since: SimTime::ZERO,
            worker_ns: Some(0),
            core_ns: 0,
        }
    }

    fn advance(&mut self, now: SimTime) {
        let elapsed = u128::from((now - self.since).as_nanos());
        if elapsed > 0 {
            self.worker_ns = match (self.worker_ns, self.workers) {
                (Some(ns), Some(workers)) => Some(ns + u128::from(workers) * elapsed),
                _ => None,
            };
            self.core_ns += u128::from(self.cores) * elapsed;
        }
        self.since = now;
    }

    /// From `now` on, `workers` and `cores` are up (a timeline change).
    pub fn set(&mut self, now: SimTime, workers: Option<u64>, cores: u64) {
        self.advance(now);
        self.workers = workers;
        self.cores = cores;
    }

    /// Closes the open bucket at `at` (its end, or the run's): what it had.
    pub fn close_bucket(&mut self, at: SimTime) -> BucketCapacity {
        self.advance(at);
        let closed = BucketCapacity {
            worker_ns: self.worker_ns,
            core_ns: self.core_ns,
        };
        self.worker_ns = Some(0);
        self.core_ns = 0;
        closed
    }
}
