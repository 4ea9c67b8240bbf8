//! The call state machine: the one place where a call edge's policy layers are
//! composed, in the documented order, outside in:
//!
//! ```text
//! deadline (plan the attempt: cap, budget, too late?)
//!   └─ retry loop (after a failure: retry after a backoff, or give up)
//!        └─ per-attempt timeout (a timer per attempt)
//!             └─ network → the callee
//! ```
//!
//! Giving up on an attempt (timeout, or the call is cancelled) always tells the
//! callee: the connection closes. Whether the callee stops depends on what it is
//! doing ([`crate::service`]).

use crate::metrics::{FailReason, Outcome};
use crate::policy::deadline::{plan_attempt, AttemptPlan};
use crate::policy::retry::{decide, RetryDecision};
use crate::simulator::{Event, Simulator, NET_DOWN};
use crate::world::*;
use stormsim_engine::{SimDuration, SimTime, StreamKey};

impl Simulator<'_> {
    /// Starts a call on `edge` for `owner` and sends its first attempt.
    pub(crate) fn start_call(
        &mut self,
        owner: Owner,
        edge: EdgeId,
        key: StreamKey,
        deadline: Option<SimTime>,
    ) -> CallId {
        let call = self.calls.insert(Call {
            owner,
            edge,
            key,
            deadline,
            attempts: 0,
            current: None,
            backoff: None,
        });
        self.send_attempt(call);
        call
    }

    /// Deadline layer, then the per-attempt timeout, then the network.
    fn send_attempt(&mut self, call_id: CallId) {
        let now = self.now();
        let call = &mut self.calls[call_id];
        call.attempts += 1;
        call.backoff = None;
        let (attempt_no, deadline, key) = (call.attempts, call.deadline, call.key);
        let policy = &self.edges[call.edge as usize];
        let to = policy.to;
        let plan = plan_attempt(
            now,
            deadline,
            attempt_no,
            &policy.deadline,
            policy.attempt_timeout,
        );
        let AttemptPlan::Send {
            timeout,
            ends_at_deadline,
            budget,
        } = plan
        else {
            self.finish_call(call_id, Outcome::Failed(FailReason::DeadlineExceeded));
            return;
        };
        let key = key.index(u64::from(attempt_no));
        let attempt = self.attempts.insert(Attempt {
            call: call_id,
            to,
            key,
            attempt_no,
            timer: None,
            ends_at_deadline,
            budget,
            child: None,
        });
        if !timeout.is_infinite() {
            let timer = self
                .queue
                .schedule_timer(now + timeout, Event::AttemptTimeout(attempt));
            self.attempts[attempt].timer = Some(timer);
        }
        self.calls[call_id].current = Some(attempt);
        let delay = self.network_delay(key, NET_DOWN);
        self.queue
            .schedule(now + delay, Event::AttemptArrives(attempt));
    }

    /// The callee's answer arrived. Ignored if the caller stopped waiting.
    pub(crate) fn on_response(&mut self, attempt: AttemptId, outcome: Outcome) {
        let Some(a) = self.attempts.remove(attempt) else {
            return;
        };
        if let Some(timer) = a.timer {
            self.queue.cancel(timer);
        }
        self.calls[a.call].current = None;
        self.after_attempt(a.call, outcome);
    }

    /// The per-attempt timer expired: give up on the attempt, then retry or fail.
    pub(crate) fn on_attempt_timeout(&mut self, attempt: AttemptId) {
        let Some(a) = self.attempts.get(attempt) else {
            return;
        };
        let (call, reason) = (a.call, Self::reason_of_expiry(a.ends_at_deadline));
        self.abandon_attempt(attempt);
        self.calls[call].current = None;
        self.after_attempt(call, Outcome::Failed(reason));
    }

    /// Retry layer: after a failure, sleep and retry, or give up. A deadline cuts
    /// the sleep short; the next attempt then finds no time left and fails.
    fn after_attempt(&mut self, call_id: CallId, outcome: Outcome) {
        let Outcome::Failed(_) = outcome else {
            self.finish_call(call_id, Outcome::Ok);
            return;
        };
        let call = &self.calls[call_id];
        let policy = &self.edges[call.edge as usize];
        match decide(&policy.retry, call.attempts) {
            RetryDecision::GiveUp => self.finish_call(call_id, outcome),
            RetryDecision::RetryAfter(SimDuration::ZERO) => self.send_attempt(call_id),
            RetryDecision::RetryAfter(backoff) => {
                let wake = (self.now() + backoff).min(call.deadline.unwrap_or(SimTime::NEVER));
                let timer = self.queue.schedule_timer(wake, Event::BackoffDone(call_id));
                self.calls[call_id].backoff = Some(timer);
            }
        }
    }

    pub(crate) fn on_backoff_done(&mut self, call: CallId) {
        if self.calls.contains_key(call) {
            self.send_attempt(call);
        }
    }

    /// The call ended: hand the outcome to whoever waits.
    fn finish_call(&mut self, call_id: CallId, outcome: Outcome) {
        let Some(call) = self.calls.remove(call_id) else {
            return;
        };
        match call.owner {
            Owner::Root(root) => self.finish_root(root, outcome),
            Owner::Task(task) => self.call_finished(task, outcome),
        }
    }

    /// Stop waiting for an attempt and tell the callee (its connection closes).
    pub(crate) fn abandon_attempt(&mut self, attempt: AttemptId) {
        let Some(a) = self.attempts.remove(attempt) else {
            return;
        };
        if let Some(timer) = a.timer {
            self.queue.cancel(timer);
        }
        if let Some(child) = a.child {
            self.caller_gone(child);
        }
    }

    /// The owner no longer wants the call: abandon its attempt, stop its sleep.
    /// No outcome is delivered.
    pub(crate) fn cancel_call(&mut self, call_id: CallId) {
        let Some(call) = self.calls.remove(call_id) else {
            return;
        };
        if let Some(attempt) = call.current {
            self.abandon_attempt(attempt);
        }
        if let Some(timer) = call.backoff {
            self.queue.cancel(timer);
        }
    }
}
