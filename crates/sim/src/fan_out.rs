//! A handler's parallel fan-out: one child call per shard of the callee, all at
//! once, each with the step's own policies (timeout, retries, hedging).
//!
//! It completes when `wait_for` children succeeded (all of them by default, so
//! the answer is as slow as the slowest child), and the children still running
//! are then cancelled. It fails as soon as enough children failed that
//! `wait_for` cannot be reached. At its deadline it answers with what has
//! come: `partial` if some children succeeded, `deadline_exceeded` if none did.

use crate::metrics::{FailReason, FanOutStatus, Outcome};
use crate::simulator::{Event, Simulator};
use crate::world::*;
use stormsim_engine::StreamKey;
use stormsim_model::CallPolicy;

impl Simulator<'_> {
    /// Starts the fan-out of `task`'s current step.
    pub(crate) fn start_fan_out(&mut self, task_id: TaskId, edge: EdgeId, step_key: StreamKey) {
        let policy: &CallPolicy = &self.topology.edges[edge as usize];
        let fan_out = policy.fan_out.expect("a fan-out step");
        let total = self.topology.model.services[policy.to].shards;
        let task = &self.world.tasks[task_id];
        let (deadline, class, request) = (task.deadline(), task.class, task.request);
        let now = self.now();
        let timer = fan_out
            .deadline
            .map(|d| now + d)
            .map(|at| at.min(deadline.unwrap_or(stormsim_engine::SimTime::NEVER)));
        // The request's deadline may be spent before the fan-out starts (an
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
            wait_for: fan_out.wait_for,
            timer: None,
            started_late,
        });
        self.world.tasks[task_id].state = TaskState::FanningOut(fan);
        if let Some(at) = timer {
            let handle = self.queue.schedule_timer(at, Event::FanOutDeadline(fan));
            self.world.fan_outs[fan].timer = Some(handle);
        }
        for shard in 0..total {
            let origin = CallOrigin {
                owner: Owner::FanOut(fan),
                request,
                deadline,
                class,
            };
            let child =
                self.start_call(origin, edge, step_key.index(u64::from(shard)), Some(shard));
            // A child that ended at once may have completed the fan-out.
            match self.world.fan_outs.get_mut(fan) {
                Some(state) => state.children.push(child),
                None => return,
            }
        }
    }

    /// A child call ended.
    pub(crate) fn fan_out_child_finished(&mut self, fan: FanOutId, outcome: Outcome) {
        let Some(state) = self.world.fan_outs.get_mut(fan) else {
            return;
        };
        state.ended += 1;
        if outcome == Outcome::Ok {
            state.succeeded += 1;
        }
        let reachable = state.succeeded + (state.total - state.ended);
        if state.succeeded >= state.wait_for {
            self.complete_fan_out(fan, FanOutStatus::Ok);
        } else if reachable < state.wait_for {
            let status = if state.started_late {
                FanOutStatus::DeadlineExceeded
            } else {
                FanOutStatus::Failed
            };
            self.complete_fan_out(fan, status);
        }
    }

    /// The fan-out's deadline: answer with what has come.
    pub(crate) fn on_fan_out_deadline(&mut self, fan: FanOutId) {
        let Some(state) = self.world.fan_outs.get_mut(fan) else {
            return;
        };
        state.timer = None;
        let status = if state.succeeded > 0 {
            FanOutStatus::Partial
        } else {
            FanOutStatus::DeadlineExceeded
        };
        self.complete_fan_out(fan, status);
    }

    /// Ends the fan-out: cancels the children still running and hands the
    /// status to the handler.
    fn complete_fan_out(&mut self, fan: FanOutId, status: FanOutStatus) {
        let state = self.drop_fan_out(fan);
        let task = state.task;
        if let Some(t) = self.world.tasks.get(task) {
            let edge = self.topology.step_edge[t.service][t.step];
            self.measured.edges[edge as usize].fan_out.count(status);
        }
        let outcome = match status {
            FanOutStatus::Ok | FanOutStatus::Partial => Outcome::Ok,
            FanOutStatus::DeadlineExceeded => Outcome::Failed(FailReason::DeadlineExceeded),
            FanOutStatus::Failed => Outcome::Failed(FailReason::Error),
        };
        self.call_finished(task, outcome);
    }

    /// Removes a fan-out and cancels its timer and its children still running
    /// (their callees are told, as for any abandoned call).
    pub(crate) fn drop_fan_out(&mut self, fan: FanOutId) -> FanOutState {
        let state = self.world.fan_outs.remove(fan).expect("a live fan-out");
        if let Some(timer) = state.timer {
            self.queue.cancel(timer);
        }
        for &child in &state.children {
            self.cancel_call(child);
        }
        state
    }
}
