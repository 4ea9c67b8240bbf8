//! The entities of a run, in slabs addressed by generational keys: a key that
//! outlived its entity simply finds nothing, so a late event is a no-op.

use stormsim_engine::{Key, SimTime, StreamKey, TimerHandle};
use stormsim_model::ServiceId;

/// A handler execution at a service (a server-side request).
pub type TaskId = Key<Task>;
/// A call step in progress: the retry loop over attempts on one edge.
pub type CallId = Key<Call>;
/// One attempt of a call, from send to answer or abandonment.
pub type AttemptId = Key<Attempt>;

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
        /// Its workload.
        workload: u32,
    },
    /// A handler at a service.
    Task(TaskId),
}

/// A call in progress.
pub struct Call {
    /// Who waits for it.
    pub owner: Owner,
    /// The caller's instance (whose breaker, budget, ... it uses).
    pub caller: u32,
    /// Its edge (policies).
    pub edge: EdgeId,
    /// Random stream of the call; attempt `n` uses `key.index(n)`.
    pub key: StreamKey,
    /// The owner's deadline, if any.
    pub deadline: Option<SimTime>,
    /// Attempts sent so far.
    pub attempts: u32,
    /// The attempt in flight, if any.
    pub current: Option<AttemptId>,
    /// The backoff sleep before the next attempt, if sleeping.
    pub backoff: Option<TimerHandle>,
    /// A retry granted by the budget but not sent yet (during the backoff).
    pub holds_retry: bool,
    /// The last backoff (decorrelated jitter grows from it).
    pub last_delay: stormsim_engine::SimDuration,
    /// Where the call stands with its edge's bulkhead.
    pub bulkhead: BulkheadHold,
    /// Priority class of the request that makes it.
    pub class: Option<u8>,
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
    pub to: ServiceId,
    /// Random stream of the attempt and of the handler it starts.
    pub key: StreamKey,
    /// 1 for a first try, more for a retry.
    pub attempt_no: u32,
    /// The per-attempt timeout.
    pub timer: AttemptTimer,
    /// Whether the timer is the deadline (reported as `deadline_exceeded`).
    pub ends_at_deadline: bool,
    /// Budget sent to the callee, if propagated.
    pub budget: Option<stormsim_engine::SimDuration>,
    /// The handler it started at the callee, once arrived and admitted.
    pub child: Option<TaskId>,
    /// A refusal's Retry-After, set by the callee (429).
    pub retry_after: Option<stormsim_engine::SimDuration>,
    /// The callee's instance, chosen by the caller's balancer.
    pub instance: u32,
    /// Priority class of the request.
    pub class: Option<u8>,
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
    /// Armed.
    Armed(TimerHandle),
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
    /// Waiting for a downstream call.
    Calling(CallId),
}

/// A handler execution at a service.
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
    /// Its deadline, in this service's view.
    pub deadline: Option<SimTime>,
    /// The caller gave up: whatever completes now is wasted. A flag here, not
    /// a look at whether `parent` is still alive: the handler is in cache when
    /// it completes, the long-gone attempt is not (measured: the lookup cost
    /// more than the write it saves).
    pub caller_gone: bool,
    /// Priority class, inherited from the logical request.
    pub class: Option<u8>,
    /// When it arrived (queueing delay, latency samples).
    pub arrived: SimTime,
    /// Requests in flight at the service when it was admitted, itself included
    /// (for the adaptive concurrency limit's samples).
    pub in_flight_at_arrival: u32,
}
