//! A handler waiting on several calls at once: a fan-out (one child call per
//! shard of the callee, each with the step's own policies) or a parallel step
//! (one call per branch, each to its own service with its own policies).
//!
//! A fan-out completes when `wait_for` children succeeded (all of them by
//! default, so the answer is as slow as the slowest child), and the children
//! still running are then cancelled. It fails as soon as enough children
//! failed that `wait_for` cannot be reached. At its deadline it answers with
//! what has come: `partial` if some children succeeded, `deadline_exceeded` if
//! none did. A parallel step with `wait_for` follows the same rule.
//!
//! A parallel step without `wait_for` waits for every branch, as Go's
//! `errgroup.WithContext` does: the first failure of a required branch fails
//! the step with that branch's failure and cancels the others; an optional
//! branch may fail (the step is then `partial`). At its deadline it succeeds
//! (`partial`) if every required branch has.
//!
//! Every child inherits the request's deadline and class, and is cancelled
//! when the step ends or the request's caller gives up.

use crate::metrics::{FailReason, FanOutStatus, Outcome};
use crate::simulator::{Event, Simulator};
use crate::world::*;
use stormsim_engine::{SimTime, StreamKey};
use stormsim_model::{CallPolicy, Parallel};

/// How a join stands once a child ended: decided with a status, or not yet.
/// `failed_required` is whether that child was a required branch that failed.
fn decide(state: &FanOutState, failed_required: bool) -> Option<FanOutStatus> {
    let failed = || {
        if state.started_late {
            FanOutStatus::DeadlineExceeded
        } else {
            FanOutStatus::Failed
        }
    };
    match &state.branches {
        Some(branches) if !branches.first_k => {
            if failed_required {
                Some(failed())
            } else if state.ended == state.total {
                Some(if state.succeeded == state.total {
                    FanOutStatus::Ok
                } else {
                    FanOutStatus::Partial
                })
            } else {
                None
            }
        }
        // The first `wait_for` successes, of shards or of branches.
        _ => {
            let reachable = state.succeeded + (state.total - state.ended);
            if state.succeeded >= state.wait_for {
                Some(FanOutStatus::Ok)
            } else if reachable < state.wait_for {
                Some(failed())
            } else {
                None
            }
        }
    }
}

/// How a join stands at its deadline.
fn at_deadline(state: &FanOutState) -> FanOutStatus {
    let enough = match &state.branches {
        Some(branches) if !branches.first_k => branches.required & !branches.succeeded == 0,
        _ => state.succeeded > 0,
    };
    if enough {
        FanOutStatus::Partial
    } else {
        FanOutStatus::DeadlineExceeded
    }
}

impl Simulator<'_> {
    /// Starts the fan-out of `task`'s current step.
    pub(crate) fn start_fan_out(&mut self, task_id: TaskId, edge: EdgeId, step_key: StreamKey) {
        let policy: &CallPolicy = &self.topology.edges[edge as usize];
        let fan_out = policy.fan_out.expect("a fan-out step");
        let total = self.topology.model.services[policy.to].shards;
        let fan = self.open_join(task_id, total, fan_out.wait_for, fan_out.deadline, None);
        for shard in 0..total {
            if !self.start_child(fan, edge, step_key.index(u64::from(shard)), Some(shard)) {
                return;
            }
        }
    }

    /// Starts the branches of `task`'s current step, a parallel one whose
    /// first branch calls on `first_edge`.
    pub(crate) fn start_parallel(
        &mut self,
        task_id: TaskId,
        first_edge: EdgeId,
        step_key: StreamKey,
        parallel: &Parallel,
    ) {
        let total = parallel.branches.len() as u32;
        let branches = Branches {
            first_edge,
            required: parallel.required,
            succeeded: 0,
            first_k: parallel.wait_for.is_some(),
            started: self.now(),
        };
        let wait_for = parallel.wait_for.unwrap_or(total);
        let fan = self.open_join(task_id, total, wait_for, parallel.deadline, Some(branches));
        for b in 0..total {
            if !self.start_child(fan, first_edge + b, step_key.index(u64::from(b)), None) {
                return;
            }
        }
    }

    /// Opens a join for `task`'s current step, with its deadline's timer.
    fn open_join(
        &mut self,
        task_id: TaskId,
        total: u32,
        wait_for: u32,
        deadline_after: Option<stormsim_engine::SimDuration>,
        branches: Option<Branches>,
    ) -> FanOutId {
        let deadline = self.world.tasks[task_id].deadline();
        let now = self.now();
        let timer = deadline_after
            .map(|d| now + d)
            .map(|at| at.min(deadline.unwrap_or(SimTime::NEVER)));
        // The request's deadline may be spent before the join starts (an
        // earlier step outlasted it): no timer in the past, and the children,
        // which inherit that deadline, are each refused for it at once.
        let started_late = timer.is_some_and(|at| at <= now);
        let timer = timer.filter(|_| !started_late);
        let fan = self.world.fan_outs.insert(FanOutState {
            task: task_id,
            children: Vec::with_capacity(total as usize),
            total,
            ended: 0,
            succeeded: 0,
            wait_for,
            timer: None,
            started_late,
            branches,
            degraded: 0,
        });
        self.world.tasks[task_id].state = TaskState::FanningOut(fan);
        if let Some(at) = timer {
            let handle = self.queue.schedule_timer(at, Event::FanOutDeadline(fan));
            self.world.fan_outs[fan].timer = Some(handle);
        }
        fan
    }

    /// Starts one child call of a join; `false` if the join is over already
    /// (a child that ended at once may have completed it).
    pub(crate) fn start_child(
        &mut self,
        fan: FanOutId,
        edge: EdgeId,
        key: StreamKey,
        shard: Option<u32>,
    ) -> bool {
        let task = &self.world.tasks[self.world.fan_outs[fan].task];
        let origin = CallOrigin {
            owner: Owner::FanOut(fan),
            request: task.request,
            deadline: task.deadline(),
            class: task.class,
        };
        let child = self.start_call(origin, edge, key, shard);
        match self.world.fan_outs.get_mut(fan) {
            Some(state) => {
                state.children.push(child);
                true
            }
            None => false,
        }
    }

    /// A child call on `edge` ended: a shard's, a branch's, or the call of
    /// a branch's fallback.
    pub(crate) fn fan_out_child_finished(&mut self, fan: FanOutId, edge: EdgeId, outcome: Outcome) {
        let Some(state) = self.world.fan_outs.get(fan) else {
            return;
        };
        if state.branches.is_none() {
            self.join_child_ended(fan, edge, outcome);
        } else if let Some((branch, outcome)) = self.branch_answered(fan, edge, outcome) {
            self.join_child_ended(fan, branch, outcome);
        }
    }

    /// A child of the join ended with `outcome` (a branch's: on its own
    /// edge, whoever answered for it).
    pub(crate) fn join_child_ended(&mut self, fan: FanOutId, edge: EdgeId, outcome: Outcome) {
        let now = self.now();
        let Some(state) = self.world.fan_outs.get_mut(fan) else {
            return;
        };
        state.ended += 1;
        if outcome.is_success() {
            state.succeeded += 1;
            state.degraded |= outcome.degraded_by();
        }
        let mut failed_required = false;
        if let Some(branches) = &mut state.branches {
            let bit = 1u64 << (edge - branches.first_edge);
            match outcome {
                Outcome::Ok | Outcome::Degraded(_) => branches.succeeded |= bit,
                Outcome::Failed(_) => failed_required = branches.required & bit != 0,
            }
            if let Some(latency) = &mut self.measured.branch_latency[edge as usize] {
                latency.record(now.saturating_since(branches.started));
            }
        }
        if let Some(status) = decide(state, failed_required) {
            // A parallel step fails with its failing branch's failure, as a
            // single call would; a fan-out with `error`.
            let reason = match (&state.branches, outcome) {
                (Some(_), Outcome::Failed(reason)) => reason,
                _ => FailReason::Error,
            };
            self.complete_fan_out(fan, status, reason);
        }
    }

    /// The join's deadline: answer with what has come.
    pub(crate) fn on_fan_out_deadline(&mut self, fan: FanOutId) {
        let Some(state) = self.world.fan_outs.get_mut(fan) else {
            return;
        };
        state.timer = None;
        let status = at_deadline(state);
        self.complete_fan_out(fan, status, FailReason::DeadlineExceeded);
    }

    /// Ends the join: cancels the children still running and hands the
    /// status to the handler (`failure` is what a failed join reports).
    fn complete_fan_out(&mut self, fan: FanOutId, status: FanOutStatus, failure: FailReason) {
        let state = self.drop_fan_out(fan);
        let task = state.task;
        if let Some(t) = self.world.tasks.get(task) {
            if state.branches.is_some() {
                self.measured.services[t.service].parallel.count(status);
            } else {
                let edge = self.topology.step_edge[t.service][t.step];
                self.measured.edges[edge as usize].fan_out.count(status);
            }
        }
        let outcome = match status {
            FanOutStatus::Ok | FanOutStatus::Partial => {
                Outcome::success_degraded_by(state.degraded)
            }
            FanOutStatus::DeadlineExceeded => Outcome::Failed(FailReason::DeadlineExceeded),
            FanOutStatus::Failed => Outcome::Failed(failure),
        };
        self.call_finished(task, outcome);
    }

    /// Removes a join and cancels its timer and its children still running
    /// (their callees are told, as for any abandoned call).
    pub(crate) fn drop_fan_out(&mut self, fan: FanOutId) -> FanOutState {
        let state = self.world.fan_outs.remove(fan).expect("a live fan-out");
        if let Some(timer) = state.timer {
            self.queue.cancel(timer);
        }
        for &child in &state.children {
            self.count_fallback_call_cut_off(child);
            self.cancel_call(child);
        }
        state
    }
}
