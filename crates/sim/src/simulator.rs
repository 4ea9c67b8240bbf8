//! The run loop: events, the state of the world, and arrivals.
//!
//! The handlers of the call side live in [`crate::call`], those of the service
//! side in [`crate::service`]; this file owns the loop and the workloads.

use crate::metrics::{FailReason, FailureCounts, LatencyRecorder, Outcome, ServiceCounters};
use crate::report::{self, VariantReport};
use crate::world::*;
use slotmap::SlotMap;
use std::collections::VecDeque;
use stormsim_engine::{EventQueue, SimDuration, SimTime, StreamKey, StreamRng};
use stormsim_model::{
    Arrival, CallContext, CallPolicy, DeadlinePolicy, Model, RetryPolicy, ServiceId, Step,
};

/// Everything that can happen. Small and `Copy`: the queue moves them a lot.
#[derive(Clone, Copy, Debug)]
pub enum Event {
    /// The next request of a workload arrives.
    Arrival {
        /// Index of the workload.
        workload: u32,
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
}

/// Why a run stopped before its natural end.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LimitHit {
    /// Too many events.
    #[error("stopped after {0} events (limits.max_events): the model may be unstable; the report is partial")]
    Events(u64),
    /// Too many requests alive at once.
    #[error("stopped with {0} requests in flight (limits.max_in_flight): the model may be unstable; the report is partial")]
    InFlight(u64),
}

pub(crate) struct WorkloadState {
    pub rng: StreamRng,
    pub key: StreamKey,
    pub generated: u64,
}

pub(crate) struct ServiceState {
    pub busy: u32,
    pub queue: VecDeque<TaskId>,
    pub counters: ServiceCounters,
}

/// One run of one variant.
pub struct Simulator<'m> {
    pub(crate) model: &'m Model,
    pub(crate) queue: EventQueue<Event>,
    pub(crate) roots: SlotMap<RootId, Root>,
    pub(crate) tasks: SlotMap<TaskId, Task>,
    pub(crate) calls: SlotMap<CallId, Call>,
    pub(crate) attempts: SlotMap<AttemptId, Attempt>,
    /// Every call edge: one per workload (the caller's own policy), then one per
    /// call step.
    pub(crate) edges: Vec<CallPolicy>,
    /// `step_edge[service][step]`: the edge of a call step.
    pub(crate) step_edge: Vec<Vec<EdgeId>>,
    pub(crate) workloads: Vec<WorkloadState>,
    /// Tasks given a worker during the current event, started before the next.
    pub(crate) ready: VecDeque<TaskId>,
    pub(crate) services: Vec<ServiceState>,
    pub(crate) requests: u64,
    pub(crate) succeeded: u64,
    pub(crate) failures: FailureCounts,
    pub(crate) latency: LatencyRecorder,
    pub(crate) ok_latency: LatencyRecorder,
}

/// Salt of the network latency draws of a request's trip down and back up.
pub(crate) const NET_DOWN: u64 = u64::MAX - 1;
pub(crate) const NET_UP: u64 = u64::MAX - 2;

impl<'m> Simulator<'m> {
    /// Prepares a run of `model`.
    pub fn new(model: &'m Model) -> Simulator<'m> {
        let root = StreamKey::root(model.seed);
        let mut edges = Vec::new();
        for w in &model.workloads {
            edges.push(CallPolicy {
                to: w.target,
                attempt_timeout: w.timeout,
                retry: RetryPolicy {
                    max_attempts: 1,
                    backoff: SimDuration::ZERO,
                },
                deadline: DeadlinePolicy {
                    propagate: w.deadline.is_some(),
                    ..DeadlinePolicy::NONE
                },
                context: CallContext::Request,
            });
        }
        let mut step_edge = Vec::new();
        for s in &model.services {
            let mut per_step = Vec::new();
            for step in &s.steps {
                match step {
                    Step::Call(policy) => {
                        per_step.push(edges.len() as EdgeId);
                        edges.push(policy.clone());
                    }
                    Step::Work { .. } => per_step.push(EdgeId::MAX),
                }
            }
            step_edge.push(per_step);
        }
        let workloads = model
            .workloads
            .iter()
            .map(|w| {
                let key = root.label("workload").label(&w.name);
                WorkloadState {
                    rng: key.label("arrivals").rng(),
                    key,
                    generated: 0,
                }
            })
            .collect();
        let services = model
            .services
            .iter()
            .map(|_| ServiceState {
                busy: 0,
                queue: VecDeque::new(),
                counters: ServiceCounters::default(),
            })
            .collect();
        Simulator {
            model,
            queue: EventQueue::new(),
            roots: SlotMap::with_key(),
            tasks: SlotMap::with_key(),
            calls: SlotMap::with_key(),
            attempts: SlotMap::with_key(),
            edges,
            step_edge,
            workloads,
            ready: VecDeque::new(),
            services,
            requests: 0,
            succeeded: 0,
            failures: FailureCounts::default(),
            latency: LatencyRecorder::default(),
            ok_latency: LatencyRecorder::default(),
        }
    }

    /// Runs to the end (no event left) or to a limit, and reports.
    pub fn run(mut self, variant: &str) -> VariantReport {
        for (i, w) in self.model.workloads.iter().enumerate() {
            let first = match w.arrival {
                Arrival::Poisson { mean_gap_ns } => {
                    gap_ns(self.workloads[i].rng.exponential(mean_gap_ns))
                }
                Arrival::Constant { .. } | Arrival::AtOnce => SimTime::ZERO,
            };
            self.schedule_arrival(i, first);
        }
        let limits = self.model.limits;
        let mut stopped = None;
        while let Some((_, event)) = self.queue.pop() {
            self.dispatch(event);
            if self.queue.delivered() >= limits.max_events {
                stopped = Some(LimitHit::Events(self.queue.delivered()));
                break;
            }
            if self.tasks.len() as u64 > limits.max_in_flight {
                stopped = Some(LimitHit::InFlight(self.tasks.len() as u64));
                break;
            }
        }
        report::variant_report(&self, variant, stopped)
    }

    fn dispatch(&mut self, event: Event) {
        match event {
            Event::Arrival { workload } => self.on_arrival(workload as usize),
            Event::AttemptArrives(a) => self.on_attempt_arrives(a),
            Event::ResponseArrives(a, outcome) => self.on_response(a, outcome),
            Event::AttemptTimeout(a) => self.on_attempt_timeout(a),
            Event::BackoffDone(c) => self.on_backoff_done(c),
            Event::WorkDone(t) => self.on_work_done(t),
        }
        while let Some(task) = self.ready.pop_front() {
            if self.tasks.contains_key(task) {
                self.run_step(task);
            }
        }
    }

    /// The clock.
    pub(crate) fn now(&self) -> SimTime {
        self.queue.now()
    }

    fn schedule_arrival(&mut self, workload: usize, at: SimTime) {
        let w = &self.model.workloads[workload];
        let state = &self.workloads[workload];
        let count_left = w.max_requests.is_none_or(|max| state.generated < max);
        let in_time = w.duration.is_none_or(|d| at < SimTime::ZERO + d);
        if count_left && in_time {
            self.queue.schedule(
                at,
                Event::Arrival {
                    workload: workload as u32,
                },
            );
        }
    }

    fn on_arrival(&mut self, workload: usize) {
        let now = self.now();
        let w = &self.model.workloads[workload];
        let state = &mut self.workloads[workload];
        let index = state.generated;
        state.generated += 1;
        let key = state.key.index(index);
        let next = match w.arrival {
            Arrival::Poisson { mean_gap_ns } => Some(now + gap(state.rng.exponential(mean_gap_ns))),
            // Computed from the index, not summed, so that gaps do not drift.
            Arrival::Constant { rate_per_s } => Some(gap_ns((index + 1) as f64 * 1e9 / rate_per_s)),
            Arrival::AtOnce => Some(now),
        };
        let deadline = w.deadline.map(|d| now + d);
        self.requests += 1;
        let root = self.roots.insert(Root { arrived: now });
        self.start_call(Owner::Root(root), workload as EdgeId, key, deadline);
        if let Some(next) = next {
            self.schedule_arrival(workload, next);
        }
    }

    /// A logical request got its answer.
    pub(crate) fn finish_root(&mut self, root: RootId, outcome: Outcome) {
        let Some(r) = self.roots.remove(root) else {
            return;
        };
        let latency = self.now() - r.arrived;
        self.latency.record(latency);
        match outcome {
            Outcome::Ok => {
                self.succeeded += 1;
                self.ok_latency.record(latency);
            }
            Outcome::Failed(reason) => self.failures.add(reason),
        }
    }

    /// A network traversal's latency, keyed by the attempt and the direction.
    pub(crate) fn network_delay(&self, key: StreamKey, direction: u64) -> SimDuration {
        let net = &self.model.network;
        if net.is_constant() {
            net.sample(&mut key.rng())
        } else {
            net.sample(&mut key.index(direction).rng())
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
