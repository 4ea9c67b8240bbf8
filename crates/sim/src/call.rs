//! The call state machine: the one place where a call edge's policy layers are
//! composed, in the documented order, outside in:
//!
//! ```text
//! deadline        plan the attempt: cap, budget sent down, too late to try?
//!  └ retry loop   after a failure: whitelist, max attempts, budget, backoff + jitter
//!     └ breaker   asked once per attempt; open = fail fast, never retried
//!        └ timeout    a timer per attempt
//!           └ network → the callee
//! ```
//!
//! Giving up on an attempt (timeout, or the call is cancelled) always tells the
//! callee: the connection closes. Whether the callee stops depends on what it is
//! doing ([`crate::service`]).

use crate::metrics::{FailReason, Outcome};
use crate::policy::backoff::next_delay;
use crate::policy::breaker::CallOutcome;
use crate::policy::budget::AttemptOutcome;
use crate::policy::deadline::{plan_attempt, AttemptPlan};
use crate::policy::retry::{decide, is_retryable, RetryDecision};
use crate::simulator::{Event, Simulator, NET_DOWN};
use crate::world::*;
use stormsim_engine::{SimDuration, SimTime, StreamKey};
use stormsim_model::{Backoff, Jitter};

/// Salt of the backoff jitter draws of a call.
const BACKOFF: u64 = u64::MAX - 3;

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
            holds_retry: false,
            last_delay: SimDuration::ZERO,
        });
        self.send_attempt(call);
        call
    }

    /// Deadline layer, then the breaker, then the per-attempt timeout and the
    /// network.
    fn send_attempt(&mut self, call_id: CallId) {
        let now = self.now();
        let call = &mut self.calls[call_id];
        call.attempts += 1;
        call.backoff = None;
        let is_retry = std::mem::take(&mut call.holds_retry);
        let (attempt_no, deadline, key, edge) = (call.attempts, call.deadline, call.key, call.edge);
        let policy = &self.edges[edge as usize];
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
            if is_retry {
                self.edge_state[edge as usize].budget.on_retry_finished();
            }
            self.finish_call(call_id, Outcome::Failed(FailReason::DeadlineExceeded));
            return;
        };
        let state = &mut self.edge_state[edge as usize];
        let permit = match state.breaker.as_mut().map(|b| b.try_acquire(now)) {
            None => None,
            Some(Ok(permit)) => Some(permit),
            Some(Err(_open)) => {
                if is_retry {
                    state.budget.on_retry_finished();
                }
                self.services[to].counters.breaker_rejected += 1;
                self.after_attempt(call_id, Outcome::Failed(FailReason::BreakerOpen));
                return;
            }
        };
        if attempt_no == 1 {
            state.budget.on_request(now);
        }
        state.in_flight += 1;
        let key = key.index(u64::from(attempt_no));
        let attempt = self.attempts.insert(Attempt {
            call: call_id,
            edge,
            sent_at: now,
            permit,
            to,
            key,
            attempt_no,
            timer: None,
            ends_at_deadline,
            budget,
            child: None,
        });
        if !timeout.is_infinite() {
            // The edge's own timeout recurs: a FIFO lane. A timeout cut by the
            // deadline or capped varies: the heap.
            let event = Event::AttemptTimeout(attempt);
            let timer = if timeout == self.edges[edge as usize].attempt_timeout {
                self.queue.schedule_constant_timer(timeout, event)
            } else {
                self.queue.schedule_timer(now + timeout, event)
            };
            self.attempts[attempt].timer = Some(timer);
        }
        self.calls[call_id].current = Some(attempt);
        self.send_over_network(key, NET_DOWN, Event::AttemptArrives(attempt));
    }

    /// An attempt ended: settle its breaker permit, its budget accounting and
    /// the edge's in-flight count. `None`: abandoned by its caller, which tells
    /// the breaker nothing (resilience4j's ignored call) and the budget no result.
    fn end_attempt(&mut self, a: &Attempt, outcome: Option<Outcome>) {
        let now = self.now();
        let retry_policy_of_edge = &self.edges[a.edge as usize].retry;
        let budget_outcome = outcome.map(|o| match o {
            Outcome::Ok => AttemptOutcome::Success,
            Outcome::Failed(reason) if is_retryable(retry_policy_of_edge, reason) => {
                AttemptOutcome::RetryableFailure
            }
            Outcome::Failed(_) => AttemptOutcome::NonRetryableFailure,
        });
        let state = &mut self.edge_state[a.edge as usize];
        state.in_flight -= 1;
        if let (Some(breaker), Some(permit)) = (state.breaker.as_mut(), a.permit) {
            let result = match outcome {
                Some(Outcome::Ok) => CallOutcome::Success,
                Some(Outcome::Failed(_)) => CallOutcome::Failure,
                None => CallOutcome::Ignored,
            };
            breaker.record(now, permit, result, now - a.sent_at);
        }
        if let Some(o) = budget_outcome {
            state.budget.on_attempt_result(now, o);
        }
        if a.attempt_no > 1 {
            state.budget.on_retry_finished();
        }
    }

    /// The callee's answer arrived. Ignored if the caller stopped waiting.
    pub(crate) fn on_response(&mut self, attempt: AttemptId, outcome: Outcome) {
        let Some(a) = self.attempts.remove(attempt) else {
            return;
        };
        if let Some(timer) = a.timer {
            self.queue.cancel(timer);
        }
        self.end_attempt(&a, Some(outcome));
        self.calls[a.call].current = None;
        self.after_attempt(a.call, outcome);
    }

    /// The per-attempt timer expired: give up on the attempt, then retry or fail.
    pub(crate) fn on_attempt_timeout(&mut self, attempt: AttemptId) {
        let Some(a) = self.attempts.remove(attempt) else {
            return;
        };
        let outcome = Outcome::Failed(Self::reason_of_expiry(a.ends_at_deadline));
        self.end_attempt(&a, Some(outcome));
        if let Some(child) = a.child {
            self.caller_gone(child);
        }
        self.calls[a.call].current = None;
        self.after_attempt(a.call, outcome);
    }

    /// Retry layer: after a failure, give up, or ask the budget and sleep. A
    /// deadline cuts the sleep short; the next attempt then finds no time left.
    fn after_attempt(&mut self, call_id: CallId, outcome: Outcome) {
        let Outcome::Failed(reason) = outcome else {
            self.finish_call(call_id, Outcome::Ok);
            return;
        };
        let now = self.now();
        let call = &self.calls[call_id];
        let edge = call.edge as usize;
        let policy = &self.edges[edge];
        if decide(&policy.retry, call.attempts, reason) == RetryDecision::GiveUp {
            self.finish_call(call_id, outcome);
            return;
        }
        let to = policy.to;
        let state = &mut self.edge_state[edge];
        let policy = &self.edges[edge];
        if !state.budget.try_retry(now, state.in_flight) {
            self.services[to].counters.budget_denied += 1;
            self.finish_call(call_id, outcome);
            return;
        }
        self.services[to].counters.retries += 1;
        let mut rng = call
            .key
            .index(BACKOFF)
            .index(u64::from(call.attempts))
            .rng();
        let delay = next_delay(&policy.retry, call.attempts, call.last_delay, &mut rng);
        let deadline = call.deadline.unwrap_or(SimTime::NEVER);
        let call = &mut self.calls[call_id];
        call.holds_retry = true;
        call.last_delay = delay;
        if delay == SimDuration::ZERO {
            self.send_attempt(call_id);
        } else {
            let wake = now + delay;
            let fixed = matches!(policy.retry.jitter, Jitter::None)
                && matches!(policy.retry.backoff, Backoff::Fixed(_));
            let event = Event::BackoffDone(call_id);
            let timer = if wake > deadline {
                self.queue.schedule_timer(deadline, event)
            } else if fixed {
                self.queue.schedule_constant_timer(delay, event)
            } else {
                self.queue.schedule_timer(wake, event)
            };
            self.calls[call_id].backoff = Some(timer);
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
        self.end_attempt(&a, None);
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
        if call.holds_retry {
            self.edge_state[call.edge as usize]
                .budget
                .on_retry_finished();
        }
    }
}
