//! The run loop: events, the state of the world, and arrivals.
//!
//! The handlers of the call side live in [`crate::call`], those of the service
//! side in [`crate::service`]; this file owns the loop and the workloads.

use crate::cache::InstanceCache;
use crate::call::CallOrigin;
use crate::hosts::HostPeriods;
use crate::metrics::{
    EdgeCounters, FailReason, FailureCounts, Outcome, ServiceCounters, WorkloadCounters,
};
use crate::policy::balancer::{LoadBalancer, OutlierDetector};
use crate::policy::breaker::{BreakerState, CircuitBreaker};
use crate::policy::concurrency::{CoDel, ConcurrencyLimit};
use crate::policy::hedge::{HedgeBrake, HedgeDelay};
use crate::policy::rate_limit::RateLimiter;
use crate::policy::{self, budget::RetryBudget, Throttle};
use crate::report::{self, AttemptRecord, AttemptSink, VariantReport};
use crate::timeseries::{Gauges, TimeSeries};
use crate::world::*;
use crate::zombie::{Zombies, NO_USER};
use std::collections::VecDeque;
use stormsim_engine::{EventQueue, SimDuration, SimTime, Slab, StreamKey, StreamRng};
use stormsim_model::{Arrival, CallPolicy, Change, Model, ServiceId, Step};

/// Everything that can happen. Small and `Copy`: the queue moves them a lot.
#[derive(Clone, Copy, Debug)]
pub enum Event {
    /// The next request of a workload arrives.
    Arrival {
        /// Index of the workload.
        workload: u32,
        /// Stands while it is the workload's arrival epoch (an owned timer).
        epoch: u32,
    },
    /// An attempt reaches its callee.
    AttemptArrives(AttemptId),
    /// An answer reaches the caller.
    ResponseArrives(AttemptId, Outcome),
    /// A per-attempt timer expires.
    AttemptTimeout(AttemptId),
    /// A retry's backoff sleep ends.
    BackoffDone(CallId),
    /// Local work of a handler ends.
    WorkDone(TaskId),
    /// The timeline's next change applies.
    Change(u32),
    /// A call waiting for a bulkhead slot gives up.
    BulkheadTimeout(CallId),
    /// A call's hedge delay is over: send a duplicate if it still waits.
    HedgeDue(CallId),
    /// A fan-out's deadline.
    FanOutDeadline(FanOutId),
    /// A tied loser's cancellation reaches it.
    CancelLoser(AttemptId),
    /// A closed-loop user is done thinking and sends its next request.
    UserWakes {
        /// Index of the workload.
        workload: u32,
        /// The user.
        user: u32,
    },
    /// Local work reached its limit (a statement timeout, or its request's
    /// deadline) before it was done: it stops and its handler fails.
    WorkExpired(TaskId, FailReason),
}

/// Where attempt records go ([`Simulator::record_attempts`],
/// [`Simulator::stream_attempts`]).
pub(crate) enum AttemptLog<'m> {
    Memory(Vec<AttemptRecord>),
    Stream(Box<dyn AttemptSink + 'm>),
}

impl AttemptLog<'_> {
    pub(crate) fn record(&mut self, record: &AttemptRecord) {
        match self {
            AttemptLog::Memory(records) => records.record(record),
            AttemptLog::Stream(sink) => sink.record(record),
        }
    }
}

/// Why a run stopped before its natural end.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LimitHit {
    /// Too many events.
    #[error("stopped after {0} events (limits.max_events): the model may be unstable; the report is partial")]
    Events(u64),
    /// Too many requests alive at once.
    #[error("stopped with {0} requests in flight (limits.max_in_flight): the model may be unstable; the report is partial")]
    InFlight(u64),
    /// The time series would outgrow [`MAX_SERIES_ROWS`]: a run with no
    /// horizon whose events reach far (a work of 10^12 s), or buckets far
    /// narrower than the run (validation bounds them only against a horizon).
    #[error("stopped at {buckets} time-series buckets of {bucket_s} s ({} s simulated): the series may hold at most {MAX_SERIES_ROWS} rows, one per bucket and one per service and per workload and bucket; widen timeseries.bucket_s or set horizon_s; the report is partial", *buckets as f64 * bucket_s)]
    Buckets {
        /// Buckets recorded.
        buckets: u64,
        /// Their width, seconds.
        bucket_s: f64,
    },
}

/// Most rows a run's time series may hold, run-wide and per service together
/// (the model crate's limit, which validation applies to a horizon).
pub use stormsim_model::MAX_SERIES_ROWS;

/// The live state of a call edge's stateful policies, per caller (each caller
/// service or workload has its own breaker and budget, as each instance of a
/// client library does).
pub(crate) struct EdgeState {
    pub budget: RetryBudget,
    pub breaker: Option<CircuitBreaker>,
    pub limiter: Option<RateLimiter>,
    pub throttle: Option<Throttle>,
    /// Bulkhead slots in use, and the calls waiting for one (FIFO; entries of
    /// calls that stopped waiting are skipped).
    pub bulkhead_in_use: u32,
    pub bulkhead_waiters: VecDeque<CallId>,
    pub balancer: LoadBalancer,
    /// For a fan-out's children: one balancer per shard of the callee, over
    /// that shard's replicas (made when first needed). A shared one would walk
    /// its round-robin cursor past every shard in turn and always land on the
    /// same replica of each.
    pub shard_balancers: Vec<LoadBalancer>,
    pub outlier: Option<OutlierDetector>,
    /// This caller's attempts in flight per callee instance.
    pub outstanding: Vec<u32>,
    /// When to hedge, and whether the brake allows it (edges that hedge).
    pub hedge_delay: Option<HedgeDelay>,
    pub hedge_brake: Option<HedgeBrake>,
    /// Attempts in flight on this edge.
    pub in_flight: u64,
}

impl EdgeState {
    fn new(policy: &CallPolicy, instances: u32) -> EdgeState {
        EdgeState {
            budget: RetryBudget::new(
                &policy
                    .retry
                    .budget
                    .as_ref()
                    .map(policy::budget_config)
                    .unwrap_or_default(),
            ),
            breaker: policy
                .breaker
                .as_ref()
                .map(|b| CircuitBreaker::new(policy::breaker_config(b))),
            limiter: policy.rate_limit.as_ref().map(policy::rate_limiter),
            throttle: policy.throttle.as_ref().map(Throttle::new),
            bulkhead_in_use: 0,
            bulkhead_waiters: VecDeque::new(),
            balancer: LoadBalancer::new(policy::balancer_kind(policy.balancer)),
            shard_balancers: Vec::new(),
            outlier: policy
                .outlier_detection
                .as_ref()
                .map(|o| OutlierDetector::new(policy::outlier_config(o), instances as usize)),
            outstanding: vec![0; instances as usize],
            hedge_delay: policy.hedge.as_ref().map(HedgeDelay::new),
            hedge_brake: policy.hedge.and_then(|h| h.max_ratio).map(HedgeBrake::new),
            in_flight: 0,
        }
    }
}

pub(crate) struct WorkloadState {
    pub rng: StreamRng,
    pub key: StreamKey,
    pub generated: u64,
    /// The epoch of the arrivals that stand: a timeline change that alters
    /// the arrivals bumps it, voiding the pending one (an owned timer).
    pub arrival_epoch: u32,
}

pub(crate) struct ServiceState {
    pub counters: ServiceCounters,
    pub instances: Vec<InstanceState>,
}

/// One instance of a service: its workers, queue and admission state.
pub(crate) struct InstanceState {
    pub limiter: Option<RateLimiter>,
    pub concurrency: Option<ConcurrencyLimit>,
    pub codel: Option<CoDel>,
    pub busy: u32,
    pub queue: VecDeque<TaskId>,
    /// Busy worker-nanoseconds up to `busy_since`.
    pub busy_integral: u128,
    pub busy_since: SimTime,
    /// `busy_integral` at the start of the open time-series bucket.
    pub busy_at_bucket_start: u128,
}

impl InstanceState {
    fn new(spec: &stormsim_model::Service, now: SimTime) -> InstanceState {
        InstanceState {
            limiter: spec.admission.rate_limit.as_ref().map(policy::rate_limiter),
            concurrency: spec
                .admission
                .concurrency_limit
                .as_ref()
                .map(policy::concurrency_limit),
            codel: spec.admission.codel.as_ref().map(policy::codel),
            busy: 0,
            queue: VecDeque::new(),
            busy_integral: 0,
            busy_since: now,
            busy_at_bucket_start: 0,
        }
    }

    /// Busy worker-nanoseconds up to `now`.
    pub fn busy_integral_at(&self, now: SimTime) -> u128 {
        self.busy_integral + u128::from(self.busy) * u128::from((now - self.busy_since).as_nanos())
    }

    /// Requests holding a worker or waiting for one.
    pub fn in_flight(&self) -> u32 {
        self.busy + self.queue.len() as u32
    }
}

/// One run of one variant.
pub struct Simulator<'m> {
    /// The model in force now (the timeline's latest change).
    pub(crate) model: &'m Model,
    pub(crate) changes: &'m [Change],
    pub(crate) queue: EventQueue<Event>,
    /// Logical requests not answered yet.
    pub(crate) roots_in_flight: u64,
    /// An attempt went into a blackholed instance with no connect timeout:
    /// nothing ever answers it, so a run may end with its call (and whatever
    /// waits for it) alive, unanswered, and the drained-run checks do not
    /// apply.
    pub(crate) hung_in_blackhole: bool,
    /// Zero-backoff retries being sent one inside another (see
    /// `call::MAX_RETRIES_IN_PLACE`).
    pub(crate) retry_depth: u32,
    pub(crate) tasks: Slab<Task>,
    pub(crate) calls: Slab<Call>,
    pub(crate) attempts: Slab<Attempt>,
    pub(crate) fan_outs: Slab<FanOutState>,
    pub(crate) cache_loads: Slab<CacheLoad>,
    /// `caches[edge][caller instance]`, for cached call steps (made lazily).
    pub(crate) caches: Vec<Vec<InstanceCache>>,
    /// Per edge: the Zipf table of its cache, and the (keys, exponent) it is for.
    pub(crate) cache_zipf: Vec<((u32, u64), Vec<f64>)>,
    /// Each host's slow periods (models with `hosts.slow`).
    pub(crate) host_periods: Vec<HostPeriods>,
    /// Where each attempt's record goes as it ends, when asked for.
    pub(crate) attempt_log: Option<AttemptLog<'m>>,
    /// Every call edge: one per workload (the caller's own policy), then one per
    /// call step.
    pub(crate) edges: Vec<CallPolicy>,
    /// `step_edge[service][step]`: the edge of a call step.
    pub(crate) step_edge: Vec<Vec<EdgeId>>,
    /// Live breaker and budget state of each edge.
    /// `edge_state[edge][caller instance]`.
    pub(crate) edge_state: Vec<Vec<EdgeState>>,
    /// The calling service of each edge (`None`: a workload).
    pub(crate) edge_caller: Vec<Option<ServiceId>>,
    /// Counters per edge.
    pub(crate) edge_counters: Vec<EdgeCounters>,
    pub(crate) workloads: Vec<WorkloadState>,
    /// Tasks given a worker during the current event, started before the next.
    pub(crate) ready: VecDeque<TaskId>,
    /// Calls given a bulkhead slot during the current event, sent before the next.
    pub(crate) ready_calls: VecDeque<CallId>,
    pub(crate) services: Vec<ServiceState>,
    pub(crate) requests: u64,
    pub(crate) succeeded: u64,
    pub(crate) failures: FailureCounts,
    pub(crate) per_workload: Vec<WorkloadCounters>,
    pub(crate) series: TimeSeries,
    /// Events before this instant fall in the open bucket: a comparison per
    /// event instead of a 64-bit division ([`TimeSeries::first_unopened_instant`]).
    pub(crate) next_bucket_at: SimTime,
    /// When the last logical request got its answer.
    pub(crate) last_answer: SimTime,
    /// Most logical requests unanswered at once.
    pub(crate) peak_in_flight: u64,
    /// The time the run ended (the horizon, or the last event).
    pub(crate) ended: SimTime,
    /// Root attempts and the zombie work below them.
    pub(crate) zombies: Zombies,
    /// Stream of the instances' clock skews.
    pub(crate) clock_key: StreamKey,
}

/// How many places down a lane [`Simulator::warm_up_upcoming`] looks for the
/// entities of events, and for the entities those point to.
const PREFETCH_FAR: usize = 8;
const PREFETCH_NEAR: usize = 4;

/// Salt of the network latency draws of a request's trip down and back up.
pub(crate) const NET_DOWN: u64 = u64::MAX - 1;
pub(crate) const NET_UP: u64 = u64::MAX - 2;

impl<'m> Simulator<'m> {
    /// Prepares a run of `model`, changed over time by `changes` (in time order).
    pub fn new(model: &'m Model, changes: &'m [Change]) -> Simulator<'m> {
        let root = StreamKey::root(model.seed);
        let (edges, step_edge) = edges_of(model);
        let workloads = model
            .workloads
            .iter()
            .map(|w| {
                let key = root.label("workload").label(&w.name);
                WorkloadState {
                    rng: key.label("arrivals").rng(),
                    key,
                    generated: 0,
                    arrival_epoch: 0,
                }
            })
            .collect();
        let services = model
            .services
            .iter()
            .map(|s| ServiceState {
                counters: ServiceCounters {
                    shed_by_class: vec![0; model.classes.len() + 1],
                    ..ServiceCounters::default()
                },
                instances: (0..s.instances)
                    .map(|_| InstanceState::new(s, SimTime::ZERO))
                    .collect(),
            })
            .collect();
        let edge_caller = callers_of(model);
        let edge_state = edges
            .iter()
            .zip(&edge_caller)
            .map(|(e, caller)| {
                let callers = caller.map_or(1, |c| model.services[c].instances);
                (0..callers)
                    .map(|_| EdgeState::new(e, model.services[e.to].instances))
                    .collect()
            })
            .collect();
        Simulator {
            model,
            changes,
            edge_state,
            edge_counters: vec![EdgeCounters::default(); edge_caller.len()],
            edge_caller,
            queue: EventQueue::new(),
            roots_in_flight: 0,
            hung_in_blackhole: false,
            retry_depth: 0,
            tasks: Slab::new(),
            calls: Slab::new(),
            attempts: Slab::new(),
            fan_outs: Slab::new(),
            cache_loads: Slab::new(),
            caches: Vec::new(),
            cache_zipf: Vec::new(),
            host_periods: model
                .hosts
                .and_then(|h| h.slow.map(|periods| (h.count(), periods)))
                .map_or_else(Vec::new, |(hosts, periods)| {
                    (0..hosts)
                        .map(|i| HostPeriods::new(root.label("host").index(u64::from(i)), &periods))
                        .collect()
                }),
            attempt_log: None,
            edges,
            step_edge,
            workloads,
            ready: VecDeque::new(),
            ready_calls: VecDeque::new(),
            services,
            requests: 0,
            succeeded: 0,
            failures: FailureCounts::default(),
            per_workload: model
                .workloads
                .iter()
                .map(|_| WorkloadCounters::default())
                .collect(),
            series: TimeSeries::new(model.bucket, model.services.len(), model.workloads.len()),
            next_bucket_at: SimTime::ZERO,
            last_answer: SimTime::ZERO,
            peak_in_flight: 0,
            ended: SimTime::ZERO,
            zombies: Zombies::new(model.workloads.iter().map(|w| match w.arrival {
                Arrival::ClosedLoop { users } => users,
                _ => 0,
            })),
            clock_key: root.label("clock"),
        }
    }
}

/// The calling service of each edge, in the order of [`edges_of`].
fn callers_of(model: &Model) -> Vec<Option<ServiceId>> {
    let mut callers = vec![None; model.workloads.len()];
    for (s, service) in model.services.iter().enumerate() {
        for step in &service.steps {
            if let Step::Call(_) = step {
                callers.push(Some(s));
            }
        }
    }
    callers
}

/// The host of `instance`. A timeline that lowers a service's `instances`
/// leaves the removed ones draining their work, but `host_of` covers only the
/// current instances: a removed one is taken to share a host with the current
/// instance of the same rank modulo their count (a host the service still
/// uses).
pub(crate) fn host_of_instance(host_of: &[u32], instance: u32) -> usize {
    match host_of.get(instance as usize) {
        Some(&host) => host as usize,
        None if host_of.is_empty() => 0,
        None => host_of[instance as usize % host_of.len()] as usize,
    }
}

/// Every call edge of a model: one per workload (the caller's own policy), then
/// one per call step; and the edge of each call step.
fn edges_of(model: &Model) -> (Vec<CallPolicy>, Vec<Vec<EdgeId>>) {
    {
        let mut edges = Vec::new();
        for w in &model.workloads {
            edges.push(w.edge.clone());
        }
        let mut step_edge = Vec::new();
        for s in &model.services {
            let mut per_step = Vec::new();
            for step in &s.steps {
                match step {
                    Step::Call(policy) => {
                        per_step.push(edges.len() as EdgeId);
                        edges.push(policy.as_ref().clone());
                    }
                    Step::Work { .. } => per_step.push(EdgeId::MAX),
                }
            }
            step_edge.push(per_step);
        }
        (edges, step_edge)
    }
}

impl<'m> Simulator<'m> {
    /// Keeps one record per attempt in the report's `attempts` (memory grows
    /// with the attempts simulated: for tests and models of moderate size).
    pub fn record_attempts(mut self) -> Self {
        self.attempt_log = Some(AttemptLog::Memory(Vec::new()));
        self
    }

    /// Hands each attempt's record to `sink` as the attempt ends, in the
    /// order of [`Simulator::record_attempts`]; the report's `attempts` stays
    /// empty.
    pub fn stream_attempts(mut self, sink: impl AttemptSink + 'm) -> Self {
        self.attempt_log = Some(AttemptLog::Stream(Box::new(sink)));
        self
    }

    /// How much longer local work starting now on `instance` of `service`
    /// takes: its replica's work factor, times its host's slowdown if the host
    /// is in a slow period.
    pub(crate) fn slowdown(&mut self, service: usize, instance: u32) -> f64 {
        let spec = &self.model.services[service];
        let replica_factor = spec.replica_work_factor.as_ref().map_or(1.0, |f| {
            f.get((instance % spec.replicas()) as usize)
                .copied()
                .unwrap_or(1.0)
        });
        replica_factor * self.host_slowdown(service, instance)
    }

    /// The host's slowdown for work starting now on `instance` of `service`.
    fn host_slowdown(&mut self, service: usize, instance: u32) -> f64 {
        let Some(periods) = self.model.hosts.and_then(|h| h.slow) else {
            return 1.0;
        };
        let Some(host_of) = &self.model.services[service].host_of else {
            return 1.0;
        };
        let host = host_of_instance(host_of, instance);
        let now = self.now();
        let slow = self
            .host_periods
            .get_mut(host)
            .is_some_and(|p| p.is_slow(now, &periods));
        if slow {
            periods.factor
        } else {
            1.0
        }
    }

    /// Runs to the end (no event left, or the horizon) or to a limit, and reports.
    pub fn run(mut self, variant: &str) -> VariantReport {
        for (i, w) in self.model.workloads.iter().enumerate() {
            let first = match w.arrival {
                Arrival::Poisson { mean_gap_ns } => {
                    gap_ns(self.workloads[i].rng.exponential(mean_gap_ns))
                }
                Arrival::Constant { .. } | Arrival::AtOnce => SimTime::ZERO,
                Arrival::ClosedLoop { users } => {
                    // Each user starts after one think time, on its own stream.
                    let think = w.think.as_ref().expect("a closed loop thinks");
                    for user in 0..users {
                        let key = self.workloads[i].key.label("user").index(u64::from(user));
                        let at = SimTime::ZERO + think.sample(&mut key.rng());
                        self.schedule_user(i, user, at);
                    }
                    continue;
                }
            };
            self.schedule_arrival(i, first);
        }
        for (i, c) in self.changes.iter().enumerate() {
            self.queue.schedule(c.at, Event::Change(i as u32));
        }
        let horizon = self.model.horizon.map(|h| SimTime::ZERO + h);
        let limits = self.model.limits;
        let mut stopped = None;
        self.open_buckets_until(SimTime::ZERO);
        while let Some((t, event)) = self.next_event() {
            if horizon.is_some_and(|h| t >= h) {
                break;
            }
            if t >= self.next_bucket_at {
                let buckets = self.series.index(t) as u64 + 1;
                if buckets
                    .saturating_mul(1 + (self.services.len() + self.per_workload.len()) as u64)
                    > MAX_SERIES_ROWS
                {
                    stopped = Some(LimitHit::Buckets {
                        buckets: self.series.len() as u64,
                        bucket_s: self.series.bucket_s(),
                    });
                    break;
                }
                self.open_buckets_until(t);
            }
            self.warm_up_upcoming();
            self.dispatch(event, limits.max_events);
            if self.queue.delivered() >= limits.max_events {
                stopped = Some(LimitHit::Events(self.queue.delivered()));
                break;
            }
            if self.tasks.len() as u64 > limits.max_in_flight {
                stopped = Some(LimitHit::InFlight(self.tasks.len() as u64));
                break;
            }
        }
        self.ended = match (horizon, &stopped) {
            (Some(h), None) => h,
            // The event that would have opened too many buckets was not
            // handled: the run ends with the last bucket it opened.
            (_, Some(LimitHit::Buckets { .. })) => self.series.first_unopened_instant(),
            _ => self.queue.now(),
        };
        // The last bucket is the one holding the last instant before the end: a
        // horizon on a bucket boundary opens no empty bucket after it.
        let end = self.ended;
        self.open_buckets_until(SimTime(end.as_nanos().saturating_sub(1)));
        self.close_bucket(end);
        let drained = stopped.is_none() && horizon.is_none() && !self.hung_in_blackhole;
        if let Err(broken) = self.check_invariants(drained) {
            panic!("simulator invariant broken in variant {variant:?}: {broken}");
        }
        let mut report = report::variant_report(&self, variant, stopped);
        if let Some(AttemptLog::Memory(records)) = self.attempt_log.take() {
            report.attempts = records;
        }
        report
    }

    /// What must hold at the end of every run; a failure is a simulator bug,
    /// never a user's mistake. `drained`: the run ended because nothing was left
    /// to do (no horizon, no limit), so every entity must have ended exactly once.
    pub(crate) fn check_invariants(&self, drained: bool) -> Result<(), String> {
        let answered = self.succeeded + self.failures.total();
        if self.zombies.started != self.zombies.ended + self.zombies.alive {
            return Err(format!(
                "{} zombie requests started, {} ended, {} alive",
                self.zombies.started, self.zombies.ended, self.zombies.alive
            ));
        }
        if answered + self.roots_in_flight != self.requests {
            return Err(format!(
                "{} requests, {answered} answered, {} unanswered",
                self.requests, self.roots_in_flight
            ));
        }
        for (index, (spec, state)) in self.model.services.iter().zip(&self.services).enumerate() {
            let c = &state.counters;
            let alive = self.tasks.values().filter(|t| t.service == index);
            let ended = c.rejected + c.shed + c.refused_429 + c.completed + c.cancelled;
            if ended + alive.count() as u64 != c.calls {
                return Err(format!(
                    "service {:?}: {} calls but {ended} ended and the rest are not alive",
                    spec.name, c.calls
                ));
            }
        }
        if drained {
            let leftovers = [
                ("logical requests", self.roots_in_flight as usize),
                ("calls", self.calls.len()),
                ("attempts", self.attempts.len()),
                ("handlers", self.tasks.len()),
                ("fan-outs", self.fan_outs.len()),
                ("cache loads", self.cache_loads.len()),
            ];
            let leftovers = leftovers.into_iter().chain([
                ("root attempts", self.zombies.live_records()),
                ("zombie requests", self.zombies.alive as usize),
            ]);
            for (what, n) in leftovers {
                if n != 0 {
                    return Err(format!("{n} {what} never ended"));
                }
            }
            for callers in &self.edge_state {
                for e in callers {
                    if e.in_flight != 0
                        || e.bulkhead_in_use != 0
                        || e.outstanding.iter().any(|&n| n != 0)
                    {
                        return Err("an edge still counts attempts or bulkhead slots in use".into());
                    }
                }
            }
            for s in &self.services {
                if s.instances
                    .iter()
                    .any(|i| i.busy != 0 || !i.queue.is_empty())
                {
                    return Err("a worker is still busy or a queue not empty".into());
                }
            }
        }
        Ok(())
    }

    /// Opens every bucket up to the one holding `t`, closing the ones before.
    /// Gauges of a bucket are the state at its start: no event happened between
    /// the last one and the boundary.
    fn open_buckets_until(&mut self, t: SimTime) {
        let want = self.series.index(t);
        while self.series.len() <= want {
            let b = self.series.len();
            let boundary = self.series.boundary(b);
            if b > 0 {
                self.close_bucket(boundary);
            }
            let gauges = self.gauges(boundary);
            self.series.open(self.zombies.alive, gauges.into_iter());
        }
        self.next_bucket_at = self.series.first_unopened_instant();
    }

    /// Each service's state at `at`, for the time series.
    fn gauges(&self, at: SimTime) -> Vec<Gauges> {
        let mut gauges: Vec<Gauges> = self
            .services
            .iter()
            .zip(&self.model.services)
            .map(|(s, spec)| {
                let queued: u64 = s.instances.iter().map(|i| i.queue.len() as u64).sum();
                let busy: u64 = s.instances.iter().map(|i| u64::from(i.busy)).sum();
                let up = spec.instances - spec.instances_down;
                Gauges {
                    queue: queued,
                    in_flight: queued + busy,
                    workers: spec.workers.saturating_mul(up),
                    ..Gauges::default()
                }
            })
            .collect();
        for (edge, callers) in self.edges.iter().zip(&self.edge_state) {
            for state in callers {
                let g = &mut gauges[edge.to];
                if let Some(b) = &state.breaker {
                    if b.state(at) == BreakerState::Open {
                        g.breakers_open += 1;
                    }
                }
                if let Some(tokens) = state.budget.tokens(at, state.in_flight) {
                    *g.budget_tokens.get_or_insert(0.0) += tokens;
                }
            }
        }
        gauges
    }

    /// Records the open bucket's busy time up to `at` (its end, or the run's).
    fn close_bucket(&mut self, at: SimTime) {
        let Some(b) = self.series.len().checked_sub(1) else {
            return;
        };
        for s in 0..self.services.len() {
            let mut busy = 0;
            for instance in &mut self.services[s].instances {
                let integral = instance.busy_integral_at(at.max(instance.busy_since));
                busy += integral - instance.busy_at_bucket_start;
                instance.busy_at_bucket_start = integral;
            }
            self.series.set_busy(b, s, busy);
        }
    }

    /// Changes a service's busy count, keeping the busy-time integral exact.
    pub(crate) fn set_busy(&mut self, service: ServiceId, instance: usize, busy: u32) {
        let now = self.now();
        let state = &mut self.services[service].instances[instance];
        state.busy_integral = state.busy_integral_at(now);
        state.busy_since = now;
        state.busy = busy;
    }

    /// The timeline's change `index` applies: from now on the run follows its
    /// model. Work already under way keeps the durations it drew.
    fn on_change(&mut self, index: usize) {
        let before = self.model;
        let model = &self.changes[index].model;
        self.model = model;
        let (edges, step_edge) = edges_of(model);
        // A policy whose configuration is unchanged keeps its state (a breaker
        // stays open across an unrelated change); a changed one starts afresh.
        for (i, edge) in edges.iter().enumerate() {
            let old = &self.edges[i];
            for state in &mut self.edge_state[i] {
                let fresh = EdgeState::new(edge, model.services[edge.to].instances);
                if old.retry.budget != edge.retry.budget {
                    state.budget = state.budget.replaced_by(fresh.budget);
                }
                if old.breaker != edge.breaker {
                    state.breaker = fresh.breaker;
                }
                if old.rate_limit != edge.rate_limit {
                    state.limiter = fresh.limiter;
                }
                if old.throttle != edge.throttle {
                    state.throttle = fresh.throttle;
                }
                if old.balancer != edge.balancer {
                    state.balancer = fresh.balancer;
                    state.shard_balancers.clear();
                }
            }
        }
        self.edges = edges;
        self.step_edge = step_edge;
        let now = self.now();
        for (i, (old, new)) in before.workloads.iter().zip(&model.workloads).enumerate() {
            let same = format!("{:?}{:?}{:?}", old.arrival, old.max_requests, old.duration)
                == format!("{:?}{:?}{:?}", new.arrival, new.max_requests, new.duration);
            // A closed loop's users keep their own pace (a change to their
            // number applies to the next run, not to this one).
            if same || matches!(new.arrival, Arrival::ClosedLoop { .. }) {
                continue;
            }
            // Voids the pending arrival.
            let epoch = &mut self.workloads[i].arrival_epoch;
            *epoch = epoch.wrapping_add(1);
            let next = match new.arrival {
                Arrival::Poisson { mean_gap_ns } => {
                    now + gap(self.workloads[i].rng.exponential(mean_gap_ns))
                }
                Arrival::Constant { rate_per_s } => now + gap(1e9 / rate_per_s),
                Arrival::AtOnce | Arrival::ClosedLoop { .. } => now,
            };
            self.schedule_arrival(i, next);
        }
        for (s, (old, new)) in before.services.iter().zip(&model.services).enumerate() {
            for instance in &mut self.services[s].instances {
                if old.admission.rate_limit != new.admission.rate_limit {
                    instance.limiter = new.admission.rate_limit.as_ref().map(policy::rate_limiter);
                }
                if old.admission.concurrency_limit != new.admission.concurrency_limit {
                    instance.concurrency = new
                        .admission
                        .concurrency_limit
                        .as_ref()
                        .map(policy::concurrency_limit);
                }
                if old.admission.codel != new.admission.codel {
                    instance.codel = new.admission.codel.as_ref().map(policy::codel);
                }
            }
            // Added instances start empty; removed ones keep their work but get
            // no more (callers pick among the model's current instances).
            while self.services[s].instances.len() < new.instances as usize {
                self.services[s]
                    .instances
                    .push(InstanceState::new(new, now));
            }
        }
        for (i, (edge, callers)) in self.edges.iter().zip(&mut self.edge_state).enumerate() {
            // Added caller instances get their own policy state.
            if let Some(caller) = self.edge_caller[i] {
                while callers.len() < self.services[caller].instances.len() {
                    callers.push(EdgeState::new(edge, model.services[edge.to].instances));
                }
            }
            let instances = self.services[edge.to].instances.len();
            for state in callers.iter_mut() {
                if state.outstanding.len() < instances {
                    state.outstanding.resize(instances, 0);
                    if let Some(o) = edge.outlier_detection.as_ref() {
                        // Envoy re-creates host state when the cluster changes.
                        state.outlier =
                            Some(OutlierDetector::new(policy::outlier_config(o), instances));
                    }
                }
            }
        }
        // More workers: start queued requests now.
        for s in 0..self.services.len() {
            let workers = model.services[s].workers;
            for i in 0..self.services[s].instances.len() {
                while self.services[s].instances[i].busy < workers {
                    let Some(next) = self.services[s].instances[i].queue.pop_front() else {
                        break;
                    };
                    let busy = self.services[s].instances[i].busy + 1;
                    self.set_busy(s, i, busy);
                    self.ready.push_back(next);
                }
            }
        }
    }

    /// Handles `event`, then everything it set off at the same instant: tasks
    /// given a worker, calls given a bulkhead slot, and messages over a
    /// zero-latency network, in that order until none is left, or until
    /// `max_events` have been delivered: a zero-time loop (a retry without
    /// backoff against a refusing instance) never leaves this instant, so the
    /// run loop's own check would come only after it ends, if ever.
    fn dispatch(&mut self, event: Event, max_events: u64) {
        self.handle(event);
        loop {
            if self.queue.delivered() >= max_events {
                break;
            }
            if let Some(task) = self.ready.pop_front() {
                if self.tasks.contains_key(task) {
                    self.run_step(task);
                }
            } else if let Some(call) = self.ready_calls.pop_front() {
                if self.calls.contains_key(call) {
                    self.send_attempt(call);
                }
            } else if let Some(event) = self.queue.pop_now() {
                self.handle(event);
            } else {
                break;
            }
        }
    }

    /// The next event that stands. Timeouts, backoffs and arrivals are owned
    /// timers (`EventQueue::schedule_owned`): an attempt's timeout stands
    /// while the attempt lives with its timer armed, a backoff while its call
    /// sleeps, an arrival while its workload's arrivals are unchanged;
    /// answering, abandoning or removing the owner voids them, with no
    /// cancellation of their own.
    #[inline]
    fn next_event(&mut self) -> Option<(SimTime, Event)> {
        let (attempts, calls, workloads) = (&self.attempts, &self.calls, &self.workloads);
        self.queue.pop_with(|event| match *event {
            Event::Arrival { workload, epoch } => {
                workloads[workload as usize].arrival_epoch == epoch
            }
            Event::AttemptTimeout(a) => attempts
                .get(a)
                .is_some_and(|a| a.timer == AttemptTimer::Armed),
            Event::BackoffDone(c) => calls.get(c).is_some_and(|c| c.sleeping),
            _ => true,
        })
    }

    fn handle(&mut self, event: Event) {
        match event {
            Event::Arrival { workload, .. } => self.on_arrival(workload as usize),
            Event::AttemptArrives(a) => self.on_attempt_arrives(a),
            Event::ResponseArrives(a, outcome) => self.on_response(a, outcome),
            Event::AttemptTimeout(a) => self.on_attempt_timeout(a),
            Event::BackoffDone(c) => self.on_backoff_done(c),
            Event::WorkDone(t) => self.on_work_done(t),
            Event::Change(i) => self.on_change(i as usize),
            Event::BulkheadTimeout(c) => self.on_bulkhead_timeout(c),
            Event::HedgeDue(c) => self.on_hedge_due(c),
            Event::FanOutDeadline(f) => self.on_fan_out_deadline(f),
            Event::CancelLoser(a) => self.abandon_attempt(a),
            Event::UserWakes { workload, user } => self.on_user_wakes(workload as usize, user),
            Event::WorkExpired(t, reason) => self.on_work_expired(t, reason),
        }
    }

    /// The clock.
    /// Prefetches the entities of the events a few places down each FIFO lane
    /// (timeouts, backoffs): those entities were last touched a timeout ago,
    /// so each handler would otherwise start with a miss to memory, and the
    /// run is bound by those misses (see `stormsim_engine::Slab`). Two stages:
    /// far ahead the event's own entity, nearer the ones it points to, which
    /// can only be read once it has arrived. A hint: the run's results do not
    /// depend on it.
    fn warm_up_upcoming(&self) {
        match self.queue.upcoming_hint(PREFETCH_FAR) {
            Some(&Event::AttemptTimeout(a)) => self.attempts.prefetch(a),
            Some(&Event::BackoffDone(c) | &Event::BulkheadTimeout(c)) => self.calls.prefetch(c),
            Some(&Event::WorkDone(t)) => self.tasks.prefetch(t),
            _ => {}
        }
        if let Some(&Event::AttemptTimeout(a)) = self.queue.upcoming_hint(PREFETCH_NEAR) {
            if let Some(a) = self.attempts.get(a) {
                self.calls.prefetch(a.call);
                self.zombies.prefetch(a.root);
                if let Some(child) = a.child {
                    self.tasks.prefetch(child);
                }
            }
        }
    }

    pub(crate) fn now(&self) -> SimTime {
        self.queue.now()
    }

    fn schedule_arrival(&mut self, workload: usize, at: SimTime) {
        let w = &self.model.workloads[workload];
        let state = &self.workloads[workload];
        let count_left = w.max_requests.is_none_or(|max| state.generated < max);
        let in_time = w.duration.is_none_or(|d| at < SimTime::ZERO + d);
        if count_left && in_time {
            self.queue.schedule_owned(
                at,
                Event::Arrival {
                    workload: workload as u32,
                    epoch: state.arrival_epoch,
                },
            );
        }
    }

    fn on_arrival(&mut self, workload: usize) {
        let now = self.now();
        let w = &self.model.workloads[workload];
        let state = &mut self.workloads[workload];
        let next = match w.arrival {
            Arrival::Poisson { mean_gap_ns } => now + gap(state.rng.exponential(mean_gap_ns)),
            // Each gap rounds to whole ns: at most 0.5 ns of drift per arrival.
            Arrival::Constant { rate_per_s } => now + gap(1e9 / rate_per_s),
            Arrival::AtOnce | Arrival::ClosedLoop { .. } => now,
        };
        self.start_request(workload, NO_USER);
        self.schedule_arrival(workload, next);
    }

    /// A closed-loop user's next request, unless the workload has ended.
    fn schedule_user(&mut self, workload: usize, user: u32, at: SimTime) {
        let w = &self.model.workloads[workload];
        let count_left = w
            .max_requests
            .is_none_or(|max| self.workloads[workload].generated < max);
        let in_time = w.duration.is_none_or(|d| at < SimTime::ZERO + d);
        if count_left && in_time {
            let workload = workload as u32;
            self.queue.schedule(at, Event::UserWakes { workload, user });
        }
    }

    fn on_user_wakes(&mut self, workload: usize, user: u32) {
        let w = &self.model.workloads[workload];
        // Another user may have sent the last request meanwhile, or a
        // timeline change may have ended the workload sooner.
        let count_left = w
            .max_requests
            .is_none_or(|max| self.workloads[workload].generated < max);
        let in_time = w.duration.is_none_or(|d| self.now() < SimTime::ZERO + d);
        if count_left && in_time {
            self.start_request(workload, user);
        }
    }

    /// A workload's logical request starts: its call, with the workload's
    /// own policies.
    fn start_request(&mut self, workload: usize, user: u32) {
        let now = self.now();
        let w = &self.model.workloads[workload];
        let state = &mut self.workloads[workload];
        let index = state.generated;
        state.generated += 1;
        let key = state.key.index(index);
        let deadline = w.deadline.map(|d| now + d);
        self.requests += 1;
        self.roots_in_flight += 1;
        self.peak_in_flight = self.peak_in_flight.max(self.roots_in_flight);
        self.per_workload[workload].requests += 1;
        self.series.global_mut().requests += 1;
        let class = self.model.workloads[workload].class;
        let owner = Owner::Root {
            arrived: now,
            // The model has at most 65,535 workloads.
            workload: workload as u16,
            user,
        };
        // Numbered modulo 2³² (see `Call::request`).
        let request = (self.requests - 1) as u32;
        let origin = CallOrigin {
            owner,
            request,
            deadline,
            class,
        };
        self.start_call(origin, workload as EdgeId, key, None);
    }

    /// How far the clock of `instance` of `service` is ahead of true time, ns:
    /// the service's offset plus the instance's own skew, drawn once per run
    /// (the same draw however often it is asked for).
    pub(crate) fn clock_offset(&self, service: usize, instance: u32) -> i64 {
        let spec = &self.model.services[service];
        if spec.clock_spread == 0 {
            return spec.clock_offset;
        }
        let u = self
            .clock_key
            .index(service as u64)
            .index(u64::from(instance))
            .rng()
            .unit();
        spec.clock_offset + ((2.0 * u - 1.0) * spec.clock_spread as f64).round() as i64
    }

    /// The clock offset of the caller on `edge` (a workload's, or an instance's).
    pub(crate) fn clock_offset_of_caller(&self, edge: EdgeId, caller: u32) -> i64 {
        match self.edge_caller[edge as usize] {
            Some(service) => self.clock_offset(service, caller),
            None => self.model.workloads[edge as usize].clock_offset,
        }
    }

    pub(crate) fn finish_root(
        &mut self,
        arrived: SimTime,
        workload: u16,
        user: u32,
        key: StreamKey,
        outcome: Outcome,
    ) {
        self.roots_in_flight -= 1;
        if user != NO_USER {
            // The user reads the answer (or gives up), thinks, and asks again.
            let think = self.model.workloads[usize::from(workload)]
                .think
                .as_ref()
                .expect("a closed loop thinks")
                .sample(&mut key.label("think").rng());
            self.schedule_user(usize::from(workload), user, self.now() + think);
        }
        let latency = self.now() - arrived;
        self.last_answer = self.now();
        let per_workload = &mut self.per_workload[usize::from(workload)];
        match outcome {
            Outcome::Ok => {
                per_workload.succeeded += 1;
                per_workload.ok_latency.record(latency);
                self.succeeded += 1;
                self.series.answered(usize::from(workload), latency, None);
            }
            Outcome::Failed(reason) => {
                per_workload.failed_latency.record(latency);
                self.failures.add(reason);
                self.series
                    .answered(usize::from(workload), latency, Some(reason));
            }
        }
    }

    /// A network traversal's latency, keyed by the attempt and the direction.
    pub(crate) fn network_delay(&self, key: StreamKey, direction: u64) -> SimDuration {
        let net = &self.model.network;
        if let Some(constant) = net.constant() {
            constant
        } else {
            net.sample(&mut key.index(direction).rng())
        }
    }

    /// Sends `event` across the network: one hop's latency, keyed by the
    /// request and the direction. A constant latency rides a FIFO lane; none
    /// at all delivers it at the current instant, after the event in hand.
    pub(crate) fn send_over_network(&mut self, key: StreamKey, direction: u64, event: Event) {
        let delay = self.network_delay(key, direction);
        self.deliver_after(delay, event);
    }

    /// Delivers `event` after a hop of `delay`, drawn from the network.
    pub(crate) fn deliver_after(&mut self, delay: SimDuration, event: Event) {
        if delay == SimDuration::ZERO {
            self.queue.schedule_now(event);
        } else if self.model.network.is_constant() {
            self.queue.schedule_constant(delay, event);
        } else {
            self.queue.schedule_in(delay, event);
        }
    }

    pub(crate) fn service_of(&self, id: ServiceId) -> &'m stormsim_model::Service {
        &self.model.services[id]
    }

    pub(crate) fn reason_of_expiry(ends_at_deadline: bool) -> FailReason {
        if ends_at_deadline {
            FailReason::DeadlineExceeded
        } else {
            FailReason::Timeout
        }
    }
}

fn gap(ns: f64) -> SimDuration {
    SimDuration::from_ms(ns / 1e6)
}

fn gap_ns(ns: f64) -> SimTime {
    SimTime::ZERO + gap(ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(service: &str) -> stormsim_model::LoadedModel {
        let text = format!(
            r#"{{"name": "clocks",
            "workloads": [{{"name": "w", "target": "s", "arrival": {{"kind": "at_once"}}, "requests": 1,
                "clock_offset_ms": -7}}],
            "services": [{service}]}}"#
        );
        stormsim_model::load_model(&text, &[], None).unwrap_or_else(|e| panic!("{e:?}"))
    }

    /// Each instance's clock is the service's offset plus its own skew, drawn
    /// once within `[-spread, spread]`: the same however often it is asked,
    /// and the same in another run of the same model.
    #[test]
    fn per_host_clock_skew_is_drawn_once_within_its_spread() {
        let m = model(
            r#"{"name": "s", "instances": 50, "clock_offset_ms": 1000, "clock_spread_ms": 300}"#,
        );
        let v = &m.variants[0];
        let sim = Simulator::new(&v.model, &v.changes);
        let again = Simulator::new(&v.model, &v.changes);
        let offsets: Vec<i64> = (0..50).map(|i| sim.clock_offset(0, i)).collect();
        for (i, &o) in offsets.iter().enumerate() {
            assert!(
                (700_000_000..=1_300_000_000).contains(&o),
                "instance {i}: {o} ns"
            );
            assert_eq!(o, sim.clock_offset(0, i as u32));
            assert_eq!(o, again.clock_offset(0, i as u32));
        }
        let distinct: std::collections::BTreeSet<i64> = offsets.iter().copied().collect();
        assert!(distinct.len() > 40, "the skews should differ per host");
        // A workload's edge reads its own offset; a service's, its instance's.
        assert_eq!(sim.clock_offset_of_caller(0, 0), -7_000_000);
    }

    #[test]
    fn without_a_spread_every_instance_has_the_service_offset() {
        let m = model(r#"{"name": "s", "instances": 3, "clock_offset_ms": -250}"#);
        let v = &m.variants[0];
        let sim = Simulator::new(&v.model, &v.changes);
        assert!((0..3).all(|i| sim.clock_offset(0, i) == -250_000_000));
    }
}
