//! The service side: admission (workers and queue), handler steps, answers,
//! and what a handler does when its caller gives up.

use crate::metrics::{FailReason, Outcome};
use crate::simulator::{Event, Simulator, NET_UP};
use crate::world::*;
use stormsim_model::{CallContext, OnCancel, Step};

impl Simulator<'_> {
    /// An attempt reached its callee: admit it to a worker, queue it, or reject it.
    pub(crate) fn on_attempt_arrives(&mut self, attempt: AttemptId) {
        // Gone: the caller gave up while the request was on the wire.
        let Some(a) = self.attempts.get(attempt) else {
            return;
        };
        let now = self.now();
        let (service_id, key, budget) = (a.to, a.key, a.budget);
        let service = self.service_of(service_id);
        let state = &mut self.services[service_id];
        state.counters.calls += 1;
        let admitted = state.busy < service.workers;
        if !admitted && state.queue.len() >= service.queue_capacity {
            state.counters.rejected += 1;
            let delay = self.network_delay(key, NET_UP);
            self.queue.schedule(
                now + delay,
                Event::ResponseArrives(attempt, Outcome::Failed(FailReason::Rejected)),
            );
            return;
        }
        // A relative budget becomes a deadline on arrival (gRPC); a request
        // without one gets the service's default, if it has one.
        let deadline = budget.or(service.default_deadline).map(|b| now + b);
        let task = self.tasks.insert(Task {
            service: service_id,
            step: 0,
            state: TaskState::Queued,
            parent: attempt,
            key,
            deadline,
            caller_gone: false,
        });
        self.attempts[attempt].child = Some(task);
        let state = &mut self.services[service_id];
        if admitted {
            state.busy += 1;
            self.run_step(task);
        } else {
            state.queue.push_back(task);
            state.counters.max_queue = state.counters.max_queue.max(state.queue.len() as u64);
        }
    }

    /// Runs the task's current step, or answers if the handler is done.
    pub(crate) fn run_step(&mut self, task_id: TaskId) {
        let task = &self.tasks[task_id];
        let service = self.service_of(task.service);
        let Some(step) = service.steps.get(task.step) else {
            self.complete_task(task_id, Outcome::Ok);
            return;
        };
        // A handler that watches for cancellation and whose caller already left
        // (say, while it waited in the queue) stops before the step starts, as
        // Go's `select` on an already-closed `ctx.Done()` returns at once.
        if task.caller_gone && self.step_watches_cancellation(task.service, task.step) {
            self.stop_cancelled(task_id);
            return;
        }
        let now = self.now();
        // Each step draws from its own stream, keyed by the request and the step,
        // so every variant sees the same draws for the same request.
        let step_key = task.key.index(task.step as u64);
        match step {
            Step::Work { dist, on_cancel } => {
                let duration = dist.sample(&mut step_key.rng());
                let at = now + duration;
                self.tasks[task_id].state = match on_cancel {
                    OnCancel::Stop => TaskState::WorkingCancellable(
                        self.queue.schedule_timer(at, Event::WorkDone(task_id)),
                    ),
                    OnCancel::Finish => {
                        self.queue.schedule(at, Event::WorkDone(task_id));
                        TaskState::Working
                    }
                };
            }
            Step::Call(_) => {
                let edge = self.step_edge[task.service][task.step];
                let deadline = task.deadline;
                let call = self.start_call(Owner::Task(task_id), edge, step_key, deadline);
                // The call may already have ended (no time left to try), and the
                // handler moved on; generational keys tell.
                if self.calls.contains_key(call) {
                    self.tasks[task_id].state = TaskState::Calling(call);
                }
            }
        }
    }

    fn step_watches_cancellation(&self, service: usize, step: usize) -> bool {
        match &self.service_of(service).steps[step] {
            Step::Work { on_cancel, .. } => *on_cancel == OnCancel::Stop,
            Step::Call(policy) => policy.context == CallContext::Request,
        }
    }

    pub(crate) fn on_work_done(&mut self, task_id: TaskId) {
        let Some(task) = self.tasks.get_mut(task_id) else {
            return;
        };
        task.step += 1;
        self.run_step(task_id);
    }

    /// A call step ended.
    pub(crate) fn call_finished(&mut self, task_id: TaskId, outcome: Outcome) {
        let Some(task) = self.tasks.get_mut(task_id) else {
            return;
        };
        match outcome {
            Outcome::Ok => {
                task.step += 1;
                task.state = TaskState::Working;
                self.run_step(task_id);
            }
            Outcome::Failed(_) => self.complete_task(task_id, outcome),
        }
    }

    /// The handler ended: answer the caller, or count wasted work if it left.
    fn complete_task(&mut self, task_id: TaskId, outcome: Outcome) {
        let task = self.tasks.remove(task_id).expect("a live task completes");
        let counters = &mut self.services[task.service].counters;
        counters.completed += 1;
        if outcome != Outcome::Ok {
            counters.failed += 1;
        }
        if task.caller_gone {
            counters.wasted += 1;
        } else {
            let delay = self.network_delay(task.key, NET_UP);
            self.queue.schedule(
                self.now() + delay,
                Event::ResponseArrives(task.parent, outcome),
            );
        }
        self.release_worker(task.service);
    }

    /// The caller gave up on this handler's request (its connection closed). The
    /// handler stops only where it watches for that: local work with
    /// `on_cancel: stop`, or a call in the request's context. Elsewhere it runs
    /// on, and what it completes is wasted.
    pub(crate) fn caller_gone(&mut self, task_id: TaskId) {
        let Some(task) = self.tasks.get_mut(task_id) else {
            return;
        };
        task.caller_gone = true;
        let (service, step, state) = (task.service, task.step, task.state);
        let stops = match state {
            TaskState::Queued | TaskState::Working => false,
            TaskState::WorkingCancellable(timer) => {
                self.queue.cancel(timer);
                true
            }
            TaskState::Calling(call) => {
                let watching = self.step_watches_cancellation(service, step);
                if watching {
                    self.cancel_call(call);
                }
                watching
            }
        };
        if stops {
            self.stop_cancelled(task_id);
        }
    }

    /// The handler stops early: no answer, the worker is free.
    fn stop_cancelled(&mut self, task_id: TaskId) {
        let task = self.tasks.remove(task_id).expect("a live task stops");
        self.services[task.service].counters.cancelled += 1;
        self.release_worker(task.service);
    }

    /// A worker is free: give it the head of the queue.
    fn release_worker(&mut self, service_id: usize) {
        // The next task starts from the run loop, not from here: a chain of tasks
        // that end at once would otherwise recurse as deep as the queue is long.
        let state = &mut self.services[service_id];
        match state.queue.pop_front() {
            Some(next) => self.ready.push_back(next),
            None => state.busy -= 1,
        }
    }
}
