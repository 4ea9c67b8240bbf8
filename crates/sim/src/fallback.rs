//! What a caller does when a call fails: its step's fallback (resilience4j's
//! and Polly's `Fallback`, Hystrix's `getFallback`, failsafe-go's `Fallback`;
//! stale-while-error is RFC 5861's `stale-if-error`).
//!
//! A call step's call ends in failure after its retries (or is refused by a
//! breaker, bulkhead, limiter or throttle). If the failure is one the
//! fallback is `on`, its chain is tried in order:
//!
//! - `stale`: the request's key in the step's cache, if it holds a value that
//!   expired less than `max_staleness` ago, answers at once;
//! - `default`: its work on the caller, then the handler goes on;
//! - `call`: a call to another service on an edge of its own, with its own
//!   policies; its failure passes to the next kind;
//! - `fail`: the step fails.
//!
//! A kind that cannot answer passes the failure on; past the last, the step
//! fails with the last failure (the secondary's, if one failed last). An
//! answer served by a fallback marks the handler's answer degraded
//! ([`Outcome::Degraded`]), and the mark travels up to the request.
//!
//! A branch of a parallel step may have a fallback too (no `stale`: a branch
//! has no cache). Its `default` is a timer of the join (the handler's worker
//! already waits on the join), its `call` another child of the join; either
//! answers for the branch.
//!
//! To the caller's own policies a fallback is invisible: the breaker, the
//! budget and outlier detection saw the call fail, as they should.
//!
//! A timeline change may alter a chain while a request is in it (a kill
//! switch that turns a default on): the request goes on from after the kind
//! it is at, in the chain as it now reads. A fallback's calls are edges,
//! which a change keeps (and their order), so a request in one of them
//! knows which, and goes on after that call's place in the chain.

use crate::cache::cached_key;
use crate::metrics::{Degraded, FailReason, Outcome};
use crate::simulator::{Event, Simulator};
use crate::world::*;
use stormsim_engine::{SimDuration, StreamKey};
use stormsim_model::{Fallback, FallbackUse};

/// Salt of the streams a fallback draws from (a `default`'s work, a `call`'s
/// attempts), so that every variant draws the same for the same request.
const FALLBACK: &str = "fallback";

/// What the chain does next, read out of the model (so that the simulator
/// can be changed while it is acted on).
enum Next {
    /// Serve a stale entry, if one is young enough.
    Stale(SimDuration),
    /// Answer after this work.
    Default(SimDuration),
    /// Call on this edge.
    Call(EdgeId),
    /// Fail.
    Fail,
}

/// Place `i` of `fallback`'s chain as a step to take, for the call on an
/// edge whose fallback calls start at `first_call`; a default's work drawn
/// from `key`.
fn next_of(fallback: &Fallback, i: usize, first_call: EdgeId, key: StreamKey) -> Next {
    match &fallback.chain[i] {
        FallbackUse::Stale { max_staleness } => Next::Stale(*max_staleness),
        FallbackUse::Default { work } => {
            Next::Default(work.as_ref().map_or(SimDuration::ZERO, |w| {
                w.sample(&mut key.label(FALLBACK).index(i as u64).rng())
            }))
        }
        FallbackUse::Call(_) => {
            let calls_before = fallback.chain[..i]
                .iter()
                .filter(|u| matches!(u, FallbackUse::Call(_)))
                .count();
            Next::Call(first_call + calls_before as EdgeId)
        }
        FallbackUse::Fail => Next::Fail,
    }
}

/// The place in `fallback`'s chain just after its `ordinal`-th call (from
/// 0): where a request goes on when that call failed (past the chain if
/// there is no such call).
fn after_call(fallback: &Fallback, ordinal: usize) -> usize {
    (fallback.chain.iter().enumerate())
        .filter(|(_, u)| matches!(u, FallbackUse::Call(_)))
        .nth(ordinal)
        .map_or(fallback.chain.len(), |(i, _)| i + 1)
}

/// The degradation an answer by `kind` carries, if the fallback says its
/// answers are degraded.
fn mark(fallback: &Fallback, kind: u8) -> u8 {
    if fallback.degraded {
        kind
    } else {
        0
    }
}

impl Simulator<'_> {
    /// The call of `task`'s current call step failed with `reason` (its own
    /// call, or a fallback's): its fallback answers, or the handler fails.
    pub(crate) fn call_step_failed(&mut self, task_id: TaskId, reason: FailReason) {
        let task = &self.world.tasks[task_id];
        let edge = self.topology.step_edge[task.service][task.step];
        let stands_in = task.fallback_at;
        // A parallel step's fallbacks are its branches' (see `branch_failed`).
        let is_call = edge != EdgeId::MAX
            && matches!(
                self.topology.service_of(task.service).steps[task.step],
                stormsim_model::Step::Call(_)
            );
        let fallback = is_call
            .then(|| self.topology.edges[edge as usize].fallback.as_deref())
            .flatten();
        let from = match (fallback, stands_in) {
            (None, _) => None,
            (Some(f), 0) => f.takes(reason.as_failure_outcome()).then_some(0),
            (Some(f), call) => Some(after_call(f, usize::from(call) - 1)),
        };
        let Some(from) = from else {
            self.fail_task(task_id, reason);
            return;
        };
        if from == 0 {
            self.measured.edges[edge as usize].fallback.taken += 1;
        }
        self.continue_fallback(task_id, edge, from, reason);
    }

    /// Tries `task`'s fallback on `edge` from place `from` of its chain.
    fn continue_fallback(
        &mut self,
        task_id: TaskId,
        edge: EdgeId,
        from: usize,
        reason: FailReason,
    ) {
        let Some(fallback) = self.topology.edges[edge as usize].fallback.as_deref() else {
            self.fail_task(task_id, reason);
            return;
        };
        let first_call = self.topology.fallback_links[edge as usize].first_call;
        let task = &self.world.tasks[task_id];
        let step_key = task.key.index(task.step as u64);
        for i in from..fallback.chain.len() {
            match next_of(fallback, i, first_call, step_key) {
                Next::Stale(max_staleness) => {
                    let now = self.now();
                    let caller = self.world.tasks[task_id].instance;
                    let served = cached_key(&self.policies, edge, step_key).is_some_and(|key| {
                        (self.policies.caches[edge as usize].get(caller as usize))
                            .and_then(|c| c.entries.get(&key))
                            .is_some_and(|e| e.loaded && now < e.fresh_until + max_staleness)
                    });
                    if served {
                        self.measured.edges[edge as usize].fallback.stale += 1;
                        let task = &mut self.world.tasks[task_id];
                        task.degraded |= mark(fallback, Degraded::STALE);
                        task.fallback_at = 0;
                        task.step += 1;
                        task.state = TaskState::Working;
                        self.run_step(task_id);
                        return;
                    }
                }
                Next::Default(work) => {
                    self.measured.edges[edge as usize].fallback.default += 1;
                    let task = &mut self.world.tasks[task_id];
                    task.degraded |= mark(fallback, Degraded::DEFAULT);
                    task.fallback_at = 0;
                    self.do_default_work(task_id, work);
                    return;
                }
                Next::Call(call_edge) => {
                    let task = &mut self.world.tasks[task_id];
                    // Which of the chain's calls it is in, set first: the
                    // call may end before `start_call` returns.
                    task.fallback_at = (call_edge - first_call) as u8 + 1;
                    let origin = CallOrigin {
                        owner: Owner::Task(task_id),
                        request: task.request,
                        deadline: task.deadline(),
                        class: task.class,
                    };
                    let key = step_key.label(FALLBACK).index(i as u64);
                    let call = self.start_call(origin, call_edge, key, None);
                    if self.world.calls.contains_key(call) {
                        self.world.tasks[task_id].state = TaskState::Calling(call);
                    }
                    return;
                }
                Next::Fail => break,
            }
        }
        self.measured.edges[edge as usize].fallback.failed += 1;
        self.fail_task(task_id, reason);
    }

    /// A fallback's `call` answered for `task`'s current step: the step is
    /// done, degraded if the fallback says so.
    pub(crate) fn fallback_call_answered(&mut self, task_id: TaskId) {
        let task = &self.world.tasks[task_id];
        let edge = self.topology.step_edge[task.service][task.step];
        // (Its fallback still has the call: calls are edges, which a
        // timeline change keeps.)
        let kinds = (self.topology.edges[edge as usize].fallback.as_deref())
            .map_or(Degraded::CALL, |f| mark(f, Degraded::CALL));
        self.measured.edges[edge as usize].fallback.call += 1;
        let task = &mut self.world.tasks[task_id];
        task.degraded |= kinds;
        task.fallback_at = 0;
    }

    /// `task`'s caller left while a call of its step's fallback ran, and the
    /// call stopped with it: the fallback answers nothing.
    pub(crate) fn fallback_call_cancelled(&mut self, task_id: TaskId) {
        let task = &self.world.tasks[task_id];
        let edge = self.topology.step_edge[task.service][task.step];
        self.measured.edges[edge as usize].fallback.cancelled += 1;
    }

    /// A default answer's work on the caller, then the handler goes on as
    /// after any step: a fixed cost (its host's slowdown and the service's
    /// `contention` do not apply), which shares the cores with the other
    /// work of a service with a `cpu`.
    fn do_default_work(&mut self, task_id: TaskId, work: SimDuration) {
        let task = &self.world.tasks[task_id];
        if work == SimDuration::ZERO {
            self.on_work_done(task_id);
        } else if self.topology.service_of(task.service).cpu.is_some() {
            let no_limit = (SimDuration::INFINITE, FailReason::Timeout);
            self.start_shared_work(task_id, work, None, no_limit, false);
        } else {
            let now = self.now();
            self.world.tasks[task_id].state = TaskState::Working;
            self.queue.schedule(now + work, Event::WorkDone(task_id));
        }
    }

    /// A child of a parallel step's join on `edge` ended with `outcome`.
    /// Returns the branch it answers for and the outcome the join should
    /// count, or `None` if the branch's fallback took over (it answers
    /// later, as another child or a timer).
    pub(crate) fn branch_answered(
        &mut self,
        fan: FanOutId,
        edge: EdgeId,
        outcome: Outcome,
    ) -> Option<(EdgeId, Outcome)> {
        let link = self.topology.fallback_links[edge as usize];
        let (branch, from) = match link.stands_in_for {
            Some((primary, i)) => (primary, usize::from(i) + 1),
            None => (edge, 0),
        };
        let Some(fallback) = self.topology.edges[branch as usize].fallback.as_deref() else {
            return Some((edge, outcome));
        };
        let reason = match outcome {
            Outcome::Failed(reason) => reason,
            _ if link.stands_in_for.is_some() => {
                self.measured.edges[branch as usize].fallback.call += 1;
                let kinds = outcome.degraded_by() | mark(fallback, Degraded::CALL);
                return Some((branch, Outcome::success_degraded_by(kinds)));
            }
            _ => return Some((branch, outcome)),
        };
        if from == 0 {
            if !fallback.takes(reason.as_failure_outcome()) {
                return Some((branch, outcome));
            }
            self.measured.edges[branch as usize].fallback.taken += 1;
        }
        let first_call = self.topology.fallback_links[branch as usize].first_call;
        let state = &self.world.fan_outs[fan];
        let first_edge = state.branches.as_ref().map_or(branch, |b| b.first_edge);
        let task = &self.world.tasks[state.task];
        let branch_key = (task.key.index(task.step as u64)).index(u64::from(branch - first_edge));
        for i in from..fallback.chain.len() {
            match next_of(fallback, i, first_call, branch_key) {
                // A branch has no cache (validation sees to it).
                Next::Stale(_) => {}
                Next::Default(work) => {
                    // Counted when it answers: the join may end first.
                    let now = self.now();
                    // A timer, even for no work: the join is being updated.
                    self.queue
                        .schedule(now + work, Event::BranchDefault(fan, branch));
                    return None;
                }
                Next::Call(call_edge) => {
                    let key = branch_key.label(FALLBACK).index(i as u64);
                    self.start_child(fan, call_edge, key, None);
                    return None;
                }
                Next::Fail => break,
            }
        }
        self.measured.edges[branch as usize].fallback.failed += 1;
        Some((branch, outcome))
    }

    /// A branch's `default` is ready: it answers for the branch, if the
    /// join still waits (it may have ended: its deadline, a failed required
    /// branch, the caller gone).
    pub(crate) fn on_branch_default(&mut self, fan: FanOutId, branch: EdgeId) {
        let counts = &mut self.measured.edges[branch as usize].fallback;
        if !self.world.fan_outs.contains_key(fan) {
            counts.cancelled += 1;
            return;
        }
        counts.default += 1;
        // (A timeline change may have taken the fallback away since: what
        // it started answers all the same, degraded.)
        let kinds = (self.topology.edges[branch as usize].fallback.as_deref())
            .map_or(Degraded::DEFAULT, |f| mark(f, Degraded::DEFAULT));
        self.join_child_ended(fan, branch, Outcome::success_degraded_by(kinds));
    }

    /// A join ends with `child` still running: if it is a branch's
    /// fallback call, the fallback answers nothing.
    pub(crate) fn count_fallback_call_cut_off(&mut self, child: CallId) {
        let Some(call) = self.world.calls.get(child) else {
            return;
        };
        if let Some((branch, _)) = self.topology.fallback_links[call.edge as usize].stands_in_for {
            self.measured.edges[branch as usize].fallback.cancelled += 1;
        }
    }
}
