//! What can happen in a run of the general engine: its events, small and
//! `Copy` (the queue moves them a lot), and their kinds, by which
//! `stormsim bench` and the report break a run's events down. The handlers
//! of each kind live by side (`simulator.rs`, `call.rs`, `service.rs`,
//! `join.rs`, `cpu.rs`); this module is what the queue holds and what the
//! measurements count, beneath both.

use crate::metrics::{FailReason, Outcome};
use crate::world::{AttemptId, CallId, EdgeId, FanOutId, TaskId};

/// Everything that can happen. Small and `Copy`: the queue moves them a lot.
/// Aligned to 8 bytes: 16 instead of 12, which a queue entry pads to anyway,
/// so that a copy is two moves of 8 bytes, not a move for each piece.
#[derive(Clone, Copy, Debug)]
#[repr(align(8))]
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
    /// A call's hedge delay is over: send a duplicate if it still waits. With
    /// a failure: the wait a copy's Retry-After asked for is over, and the try
    /// fails with that failure if the hedge cannot go and no copy is out.
    HedgeDue(CallId, Option<FailReason>),
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
    /// Local work failed: it reached its limit (a statement timeout, or its
    /// request's deadline) before it was done, or failed by itself (its
    /// step's `error`). It stops and its handler fails.
    WorkFailed(TaskId, FailReason),
    /// The next work on an instance's shared cores (its service's `cpu`) is
    /// done.
    CpuDone {
        /// Index of the service.
        service: u32,
        /// Its instance.
        instance: u32,
    },
    /// A parallel step's branch failed, and its fallback's default answer
    /// (on the branch's edge) is ready.
    BranchDefault(FanOutId, EdgeId),
}

/// How many kinds of [`Event`] there are.
pub const EVENT_KINDS: usize = 15;

impl Event {
    /// The kinds of event, in the order of [`Event::kind_index`]: what
    /// `stormsim bench` breaks a run's events down by.
    pub const KINDS: [&'static str; EVENT_KINDS] = [
        "arrival",
        "attempt arrives",
        "response arrives",
        "attempt timeout",
        "backoff done",
        "work done",
        "timeline change",
        "bulkhead timeout",
        "hedge due",
        "fan-out deadline",
        "cancel loser",
        "user wakes",
        "work failed",
        "cpu done",
        "branch default",
    ];

    /// This event's place in [`Event::KINDS`].
    #[inline]
    pub fn kind_index(&self) -> usize {
        match self {
            Event::Arrival { .. } => 0,
            Event::AttemptArrives(_) => 1,
            Event::ResponseArrives(..) => 2,
            Event::AttemptTimeout(_) => 3,
            Event::BackoffDone(_) => 4,
            Event::WorkDone(_) => 5,
            Event::Change(_) => 6,
            Event::BulkheadTimeout(_) => 7,
            Event::HedgeDue(..) => 8,
            Event::FanOutDeadline(_) => 9,
            Event::CancelLoser(_) => 10,
            Event::UserWakes { .. } => 11,
            Event::WorkFailed(..) => 12,
            Event::CpuDone { .. } => 13,
            Event::BranchDefault(..) => 14,
        }
    }
}
