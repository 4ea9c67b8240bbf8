//! The live world of a run: its entities (handlers, calls, attempts,
//! fan-outs, cache loads) in slabs addressed by generational keys, where a
//! key that outlived its entity simply finds nothing, so a late event is a
//! no-op; each service instance's workers and queue; each workload's
//! arrivals; and the work set off at the current instant. Created and ended
//! by the handlers as requests come and go.

use crate::hosts::host_of_instance;
use crate::hosts::HostPeriods;
use crate::metrics::FailReason;
use crate::policy::processor_sharing::{JobId, ProcessorSharing};
use crate::policy::queue_discipline::WaitQueue;
use std::collections::VecDeque;
use stormsim_engine::{Key, SimTime, Slab, StreamKey, StreamRng, TimerHandle};
use stormsim_model::{Model, ServiceId};

/// Everything alive in a run.
#[derive(Clone)]
pub(crate) struct World {
    pub tasks: Slab<Task>,
    pub calls: Slab<Call>,
    pub attempts: Slab<Attempt>,
    pub fan_outs: Slab<FanOutState>,
    pub cache_loads: Slab<CacheLoad>,
    /// `instances[service][instance]`: workers and queue.
    pub instances: Vec<Vec<InstanceState>>,
    /// Each workload's arrival process.
    pub workloads: Vec<WorkloadState>,
    /// Tasks given a worker during the current event, started before the next.
    pub ready: VecDeque<TaskId>,
    /// Calls given a bulkhead slot during the current event, sent before the
    /// next.
    pub ready_calls: VecDeque<CallId>,
    /// Logical requests not answered yet.
    pub roots_in_flight: u64,
    /// An attempt went into a blackholed instance with no connect timeout:
    /// nothing ever answers it, so a run may end with its call (and whatever
    /// waits for it) alive, unanswered, and the drained-run checks do not
    /// apply.
    pub hung_in_blackhole: bool,
    /// Zero-backoff retries being sent one inside another (see
    /// `call::MAX_RETRIES_IN_PLACE`).
    pub retry_depth: u32,
    /// Each host's slow periods (models with `hosts.slow`), drawn as the run
    /// reaches them.
    pub host_periods: Vec<HostPeriods>,
    /// Candidate arrivals a load shape's thinning drew and did not keep:
    /// work that is no event, counted with the events against
    /// `limits.max_events` (a shape whose rate is far below its peak for
    /// long would otherwise draw without end inside one event).
    pub thinned_away: u64,
}

impl World {
    /// An empty world for `model`: idle instances, workloads about to start.
    pub fn new(model: &Model) -> World {
        let root = StreamKey::root(model.seed);
        World {
            tasks: Slab::new(),
            calls: Slab::new(),
            attempts: Slab::new(),
            fan_outs: Slab::new(),
            cache_loads: Slab::new(),
            instances: model
                .services
                .iter()
                .map(|s| {
                    (0..s.instances)
                        .map(|_| InstanceState::new(SimTime::ZERO, s.cpu))
                        .collect()
                })
                .collect(),
            workloads: model
                .workload_ids
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
                .collect(),
            ready: VecDeque::new(),
            ready_calls: VecDeque::new(),
            roots_in_flight: 0,
            hung_in_blackhole: false,
            retry_depth: 0,
            host_periods: model
                .hosts
                .and_then(|h| h.slow.map(|periods| (h.count(), periods)))
                .map_or_else(Vec::new, |(hosts, periods)| {
                    (0..hosts)
                        .map(|i| HostPeriods::new(root.label("host").index(u64::from(i)), &periods))
                        .collect()
                }),
            thinned_away: 0,
        }
    }

    /// Changes an instance's busy count at `now`, keeping the busy-time
    /// integral exact.
    pub fn set_busy(&mut self, service: ServiceId, instance: usize, busy: u32, now: SimTime) {
        let state = &mut self.instances[service][instance];
        state.busy_integral = state.busy_integral_at(now);
        state.busy_since = now;
        state.busy = busy;
    }

    /// How much longer local work starting at `now` on `instance` of
    /// `service` takes: its replica's work factor, times its host's slowdown
    /// if the host is in a slow period (drawn as the run reaches it).
    pub fn slowdown(&mut self, model: &Model, service: usize, instance: u32, now: SimTime) -> f64 {
        let spec = &model.services[service];
        let replica_factor = spec.replica_work_factor.as_ref().map_or(1.0, |f| {
            f.get((instance % spec.replicas()) as usize)
                .copied()
                .unwrap_or(1.0)
        });
        let host_factor = match (model.hosts.and_then(|h| h.slow), &spec.host_of) {
            (Some(periods), Some(host_of)) => {
                let host = host_of_instance(host_of, instance);
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
            _ => 1.0,
        };
        replica_factor * host_factor
    }

    /// A timeline change to `model`: added instances start empty; removed
    /// ones keep their work but get no more (callers pick among the model's
    /// current instances).
    pub fn add_instances(&mut self, model: &Model, now: SimTime) {
        for (instances, spec) in self.instances.iter_mut().zip(&model.services) {
            while instances.len() < spec.instances as usize {
                instances.push(InstanceState::new(now, spec.cpu));
            }
        }
    }
}

/// A workload's arrival process.
#[derive(Clone)]
pub(crate) struct WorkloadState {
    pub rng: StreamRng,
    pub key: StreamKey,
    pub generated: u64,
    /// The epoch of the arrivals that stand: a timeline change that alters
    /// the arrivals bumps it, voiding the pending one (an owned timer).
    pub arrival_epoch: u32,
}

/// One instance of a service: its workers and queue (its admission control
/// is policy state, [`crate::policy_state::AdmissionState`]).
#[derive(Clone)]
pub(crate) struct InstanceState {
    pub busy: u32,
    /// Requests waiting for a worker, in the service's discipline.
    pub queue: WaitQueue<TaskId>,
    /// Busy worker-nanoseconds up to `busy_since`.
    pub busy_integral: u128,
    pub busy_since: SimTime,
    /// `busy_integral` at the start of the open time-series bucket.
    pub busy_at_bucket_start: u128,
    /// The cores its requests' work shares, if the service has a `cpu`
    /// (boxed: most services have none, and a model may have 10⁶ instances).
    pub cpu: Option<Box<CpuState>>,
}

impl InstanceState {
    pub(crate) fn new(now: SimTime, cpu: Option<stormsim_model::Cpu>) -> InstanceState {
        InstanceState {
            busy: 0,
            queue: WaitQueue::default(),
            busy_integral: 0,
            busy_since: now,
            busy_at_bucket_start: 0,
            cpu: cpu.map(|c| {
                Box::new(CpuState {
                    sharing: ProcessorSharing::new(c.cores),
                    timer: None,
                    work_done_at_bucket_start: 0,
                })
            }),
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

/// One instance's cores under processor sharing: the work in progress, and
/// the one timer pending for it, at the next finish.
#[derive(Clone)]
pub(crate) struct CpuState {
    pub sharing: ProcessorSharing<SharedWork>,
    pub timer: Option<TimerHandle>,
    /// The cores' work done (`sharing.work_done_ns_at`) at the start of the
    /// open time-series bucket.
    pub work_done_at_bucket_start: u128,
}

/// A handler's work step in an instance's processor-sharing set.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SharedWork {
    /// The handler.
    pub task: TaskId,
    /// Its step's own failure, if it fails when its work is done.
    pub failure: Option<FailReason>,
    /// The timer of its limit (`timeout_ms`, or its deadline), if it has one.
    pub limit: Option<TimerHandle>,
}

/// Whose call it is, and what it inherits from the request it serves.
pub(crate) struct CallOrigin {
    /// Who waits for it.
    pub owner: Owner,
    /// The logical request.
    pub request: u32,
    /// The request's deadline, in the caller's view.
    pub deadline: Option<SimTime>,
    /// The request's priority class.
    pub class: Option<u8>,
}

/// A handler execution at a service (a server-side request).
pub type TaskId = Key<Task>;
/// A call step in progress: the retry loop over attempts on one edge.
pub type CallId = Key<Call>;
/// One attempt of a call, from send to answer or abandonment.
pub type AttemptId = Key<Attempt>;
/// A handler's parallel fan-out, from its children's start to its completion.
pub type FanOutId = Key<FanOutState>;
/// A cache load: the call that fills one key of one instance's cache.
pub type CacheLoadId = Key<CacheLoad>;

/// [`Call::shard`] of a call that is no fan-out's child.
pub const NO_SHARD: u32 = u32::MAX;

/// Index into the flattened table of call edges (workloads first, then steps).
pub type EdgeId = u32;

/// Who is waiting for a call.
#[derive(Clone, Copy, Debug)]
pub enum Owner {
    /// A workload's logical request. It lives in its call: a logical request
    /// is exactly its workload's call, and a separate slab entry would cost
    /// one more cold cache line when it is answered.
    Root {
        /// When it arrived.
        arrived: SimTime,
        /// Its workload (16 bits keep the owner 16 bytes; a model has at
        /// most 65,535 workloads).
        workload: u16,
        /// Its closed-loop user ([`crate::zombie::NO_USER`] for an open loop).
        user: u32,
    },
    /// A handler at a service.
    Task(TaskId),
    /// A handler's fan-out: the call is one of its children.
    FanOut(FanOutId),
    /// A cache load, which belongs to no single request.
    CacheLoad(CacheLoadId),
}

/// A call in progress.
#[derive(Clone)]
pub struct Call {
    /// Who waits for it.
    pub owner: Owner,
    /// The logical request it serves (numbered in arrival order, modulo 2³²:
    /// a 4-byte number keeps the entity small; ids repeat only after four
    /// billion requests).
    pub request: u32,
    /// For a fan-out's child: the callee's shard it goes to ([`NO_SHARD`]:
    /// any replica).
    pub shard: u32,
    /// The root attempt it works for ([`crate::zombie`]); a workload's own
    /// call opens a root per attempt instead.
    pub root: u32,
    /// Hedges in flight or pending, for an edge that hedges.
    pub hedging: Option<Box<Hedging>>,
    /// The caller's instance (whose breaker, budget, ... it uses).
    pub caller: u32,
    /// Its edge (policies).
    pub edge: EdgeId,
    /// Random stream of the call; attempt `n` uses `key.index(n)`.
    pub key: StreamKey,
    /// The owner's deadline (`SimTime::NEVER`: none; a plain time keeps the
    /// call 8 bytes smaller than an `Option`).
    pub deadline: SimTime,
    /// Attempts sent so far.
    pub attempts: u32,
    /// The attempt in flight, if any.
    pub current: Option<AttemptId>,
    /// Sleeping before the next attempt: a `BackoffDone` owned by the call is
    /// queued, and stands while the call lives (removing the call voids it).
    pub sleeping: bool,
    /// A retry granted by the budget but not sent yet (during the backoff).
    pub holds_retry: bool,
    /// The last backoff (decorrelated jitter grows from it).
    pub last_delay: stormsim_engine::SimDuration,
    /// Where the call stands with its edge's bulkhead.
    pub bulkhead: BulkheadHold,
    /// Priority class of the request that makes it.
    pub class: Option<u8>,
}

/// The hedging state of a call: its attempts in flight besides `current`, and
/// the timer of the next hedge.
#[derive(Clone)]
pub struct Hedging {
    /// The policy the call started with: it settles its copies by it (tied
    /// or not) even if a timeline change turns hedging off or changes it
    /// halfway; new hedges follow the edge's current policy.
    pub policy: stormsim_model::HedgePolicy,
    /// Earlier attempts still in flight (`Call::current` is the latest).
    pub others: Vec<AttemptId>,
    /// The replicas this try's copies went to, answered or not: a hedge
    /// avoids them all, as gRPC's hedging passes its load balancer "the list
    /// of previously used addresses" (proposal A6), so a replica that just
    /// failed a copy is not asked again within the try.
    pub used: Vec<u32>,
    /// The next hedge's timer.
    pub timer: Option<TimerHandle>,
    /// Hedges sent for the current try.
    pub sent: u32,
    /// When the current try was sent: a try's latency, hedges included, feeds
    /// the adaptive hedge delay.
    pub try_sent: SimTime,
}

/// A handler's fan-out, or parallel step, in progress: its child calls and
/// how many ended and succeeded.
#[derive(Clone)]
pub struct FanOutState {
    /// The handler that waits.
    pub task: TaskId,
    /// Its children, in shard order (ended ones are stale keys).
    pub children: Vec<CallId>,
    /// Children to start in all.
    pub total: u32,
    /// Children ended, and how many of those succeeded.
    pub ended: u32,
    /// Successes that complete it.
    pub succeeded: u32,
    /// Successes needed.
    pub wait_for: u32,
    /// Its deadline's timer.
    pub timer: Option<TimerHandle>,
    /// Its deadline had passed when it started (the request's, spent by
    /// earlier steps): its children are refused for it at once, and it ends
    /// as past its deadline, not as failed.
    pub started_late: bool,
    /// For a parallel step: which branch is which (`None`: a fan-out over
    /// the callee's shards, whose children are alike).
    pub branches: Option<Branches>,
    /// The kinds of fallback its successful children were degraded by
    /// ([`crate::metrics::Degraded`] bits).
    pub degraded: u8,
}

/// The branches of a parallel step in progress. Branch `b` calls on edge
/// `first_edge + b`.
#[derive(Clone)]
pub struct Branches {
    /// The edge of branch 0.
    pub first_edge: EdgeId,
    /// Bit `b`: branch `b` must succeed (without `wait_for`).
    pub required: u64,
    /// Bit `b`: branch `b` succeeded.
    pub succeeded: u64,
    /// Whether the step completes at its first `wait_for` successes rather
    /// than when its required branches have.
    pub first_k: bool,
    /// When the branches started (together): a branch's latency is from
    /// then to its end.
    pub started: SimTime,
}

/// A load that fills one key of one instance's cache.
#[derive(Clone)]
pub struct CacheLoad {
    /// The cached call step's edge.
    pub edge: EdgeId,
    /// The instance whose cache it fills.
    pub caller: u32,
    /// The key.
    pub key: u32,
    /// Handlers waiting for it (with coalescing, possibly many).
    pub waiters: Vec<TaskId>,
    /// The call, while it runs.
    pub call: Option<CallId>,
    /// Shared by coalesced waiters: no single one may cancel it.
    pub shared: bool,
}

/// One key of one instance's cache.
#[derive(Clone, Copy, Debug, Default)]
pub struct CacheEntry {
    /// Fresh before this time.
    pub fresh_until: SimTime,
    /// It holds a value: loaded once, or warm from the start (a key never
    /// loaded has nothing stale to serve).
    pub loaded: bool,
    /// The shared load in flight, if any.
    pub loading: Option<CacheLoadId>,
}

/// A call's relation to its edge's bulkhead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BulkheadHold {
    /// The edge has no bulkhead, or the call left it.
    None,
    /// Waiting for a slot until the timer fires.
    Waiting(TimerHandle),
    /// Holding a slot until the call ends.
    Holding,
}

/// An attempt the caller still waits for. Freed when it is answered or
/// abandoned; events that find it gone are late and ignored.
#[derive(Clone, Copy)]
pub struct Attempt {
    /// The call it belongs to.
    pub call: CallId,
    /// The call's edge (its breaker and budget).
    pub edge: EdgeId,
    /// The caller's instance.
    pub caller: u32,
    /// When it was sent.
    pub sent_at: SimTime,
    /// The breaker's permit, if the edge has a breaker.
    pub permit: Option<crate::policy::breaker::Permit>,
    /// The callee.
    pub to: u32,
    /// Random stream of the attempt and of the handler it starts.
    pub key: StreamKey,
    /// 1 for a first try, more for a retry.
    pub attempt_no: u32,
    /// The per-attempt timeout.
    pub timer: AttemptTimer,
    /// Whether the timer is the deadline (reported as `deadline_exceeded`).
    pub ends_at_deadline: bool,
    /// The deadline sent to the callee, if propagated.
    pub budget: SentDeadline,
    /// The handler it started at the callee, once arrived and admitted.
    pub child: Option<TaskId>,
    /// A refusal's Retry-After, set by the callee (429); `INFINITE`: none (a
    /// plain duration keeps the attempt 8 bytes smaller than an `Option`).
    pub retry_after: stormsim_engine::SimDuration,
    /// The callee's instance, chosen by the caller's balancer.
    pub instance: u32,
    /// Priority class of the request.
    pub class: Option<u8>,
    /// 0 for the try itself, `n` for its `n`-th hedge.
    pub hedge: u8,
    /// The logical request it serves.
    pub request: u32,
    /// The root attempt it works for (a workload's attempt is its own root).
    pub root: u32,
    /// An untied hedge race's loser still on the wire: its caller stopped
    /// listening, but it reaches its callee and runs there for nobody.
    pub orphaned: bool,
}

/// The deadline an attempt carries to its callee.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SentDeadline {
    /// None: the callee applies its default, if it has one.
    None,
    /// A remaining time, turned into a deadline when the callee receives it.
    Relative(stormsim_engine::SimDuration),
    /// An absolute deadline, already translated into the true time at which
    /// the callee's clock reads it (its skew against the caller's included).
    At(SimTime),
}

/// An attempt's timeout timer.
///
/// Armed lazily: an attempt that reaches its callee before it could expire gets
/// its timer only once the callee keeps it (queues or starts it), or answers it
/// too late. In a retry storm most attempts are refused at once, and a timer
/// armed at send would be cancelled a hop later and left in its lane as a
/// tombstone: three in four entries of the timeout lane, in the Catalog
/// benchmark. The expiry is the same either way; only the order of events due
/// at the very same nanosecond could differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttemptTimer {
    /// No timeout.
    None,
    /// Not armed yet; expires at this time.
    Pending {
        /// When it expires.
        expires: SimTime,
        /// Whether its length is the edge's own timeout (a recurring delay,
        /// for a FIFO lane) rather than one cut by a deadline.
        recurring: bool,
    },
    /// Armed: an `AttemptTimeout` owned by the attempt is queued
    /// (`EventQueue::schedule_owned`). It stands while the attempt lives with
    /// this state; answering, abandoning or orphaning the attempt voids it.
    Armed,
}

/// Where a handler is.
#[derive(Clone, Copy, Debug)]
pub enum TaskState {
    /// Waiting in the service's queue for a worker.
    Queued,
    /// Doing local work that stops when cancelled (its timer can be cancelled).
    WorkingCancellable(TimerHandle),
    /// Doing local work that runs to the end.
    Working,
    /// Doing local work on cores it shares with the instance's other work
    /// (the service's `cpu`): this job of the instance's set; `stops`: it
    /// stops when cancelled (`on_cancel: stop` when it started).
    Sharing {
        /// Its job in the instance's set.
        job: JobId,
        /// Whether it stops when its caller gives up.
        stops: bool,
    },
    /// Waiting for a downstream call.
    Calling(CallId),
    /// Waiting for a fan-out's children.
    FanningOut(FanOutId),
    /// Waiting for a cache load.
    AwaitingCache(CacheLoadId),
}

/// A handler execution at a service.
#[derive(Clone)]
pub struct Task {
    /// The service.
    pub service: ServiceId,
    /// Its instance.
    pub instance: u32,
    /// Index of the current step.
    pub step: usize,
    /// Where it is.
    pub state: TaskState,
    /// The attempt that started it; answers go there unless the caller left.
    pub parent: AttemptId,
    /// Random stream (the parent attempt's).
    pub key: StreamKey,
    /// The logical request it serves.
    pub request: u32,
    /// The root attempt it works for ([`crate::zombie`]).
    pub root: u32,
    /// Its deadline, in this service's view (`SimTime::NEVER`: none; see
    /// [`Task::deadline`]).
    pub deadline_at: SimTime,
    /// Whether it holds one of its service's workers (a handler that handed
    /// its request on with `hold_worker: false` no longer does).
    pub holds_worker: bool,
    /// The caller gave up: whatever completes now is wasted. A flag here, not
    /// a look at whether `parent` is still alive: the handler is in cache when
    /// it completes, the long-gone attempt is not (measured: the lookup cost
    /// more than the write it saves).
    pub caller_gone: bool,
    /// Nobody waits for its answer, but nobody told it either (an untied
    /// hedge race's loser): it runs on, and what it completes is wasted.
    pub unheard: bool,
    /// Priority class, inherited from the logical request.
    pub class: Option<u8>,
    /// Where its current call step is: 0 the step's own call, `i + 1` the
    /// `call` at place `i` of the step's fallback chain.
    pub fallback_at: u8,
    /// The kinds of fallback that answered on the way so far
    /// ([`crate::metrics::Degraded`] bits): its answer is degraded by them.
    pub degraded: u8,
    /// When it arrived (queueing delay, latency samples).
    pub arrived: SimTime,
    /// How long it waited for a worker, µs, saturating at `u32::MAX` (71
    /// minutes): with `arrived`, when its service began, for timeseries.csv's
    /// service times, in four bytes the entity had spare (a `SimTime` made
    /// it 96 bytes).
    pub waited_us: u32,
    /// Requests in flight at the service when it was admitted, itself included
    /// (for the adaptive concurrency limit's samples).
    pub in_flight_at_arrival: u32,
    /// The model in force when it was admitted ([`crate::topology::Topology::epoch`]),
    /// and its instance's slowdown then: the durations of work drawn at
    /// admission (`drawn_at: admission`) come from them.
    pub admitted_epoch: u32,
    pub admitted_slowdown: f64,
    /// What every work step of this handler is multiplied by: a fan-out's
    /// correlated slowdown, for a child of a slow request; else 1.
    pub work_factor: f64,
}

impl Task {
    /// Its deadline, in this service's view.
    pub fn deadline(&self) -> Option<SimTime> {
        (self.deadline_at != SimTime::NEVER).then_some(self.deadline_at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The run is bound by memory traffic on these entities (see
    /// `stormsim_engine::Slab`): a field that grows one is a cost to weigh.
    #[test]
    fn entities_stay_small() {
        for (what, size, limit) in [
            ("Owner", std::mem::size_of::<Owner>(), 16),
            ("Call", std::mem::size_of::<Call>(), 104),
            ("Attempt", std::mem::size_of::<Attempt>(), 120),
            // A slab slot is a cache line aligned (`stormsim_engine::Slab`):
            // up to 120 bytes an entity takes two lines, as 88 did.
            ("Task", std::mem::size_of::<Task>(), 120),
        ] {
            println!("{what}: {size} bytes");
            assert!(size <= limit, "{what} is {size} bytes, more than {limit}");
        }
    }
}
