//! Work on shared cores: a service's `cpu` (processor sharing, see
//! [`crate::policy::processor_sharing`]). `run_step` hands such work here
//! instead of timing it alone; each instance keeps its set of work in
//! progress and one pending timer, at the set's next finish, rescheduled
//! whenever the set changes (work starts, finishes, is cancelled or hits its
//! limit, or a timeline changes the cores). A work step's limit is wall time:
//! a timer of its own, armed at the work's start.

use crate::metrics::FailReason;
use crate::policy::processor_sharing::JobId;
use crate::simulator::{Event, Simulator};
use crate::world::*;
use stormsim_engine::SimDuration;

impl Simulator<'_> {
    /// `task`'s work of `work` (as drawn and scaled) joins its instance's
    /// cores; it fails with `failure` when done, if its step fails by
    /// itself, and with `limit.1` at `limit.0` from now if not done by then;
    /// it stops if its caller gives up, if `stops`.
    pub(crate) fn start_shared_work(
        &mut self,
        task_id: TaskId,
        work: SimDuration,
        failure: Option<FailReason>,
        limit: (SimDuration, FailReason),
        stops: bool,
    ) {
        let now = self.now();
        let task = &self.world.tasks[task_id];
        let (service, instance) = (task.service, task.instance as usize);
        let limit = (!limit.0.is_infinite()).then(|| {
            self.queue
                .schedule_timer(now + limit.0, Event::WorkFailed(task_id, limit.1))
        });
        let cpu = self.world.instances[service][instance]
            .cpu
            .as_mut()
            .expect("a service with a cpu has one per instance");
        let item = SharedWork {
            task: task_id,
            failure,
            limit,
        };
        let job = cpu.sharing.start(now, work, item);
        self.world.tasks[task_id].state = TaskState::Sharing { job, stops };
        self.reschedule_cpu(service, instance);
    }

    /// The instance's next finish is due.
    pub(crate) fn on_cpu_done(&mut self, service: usize, instance: usize) {
        if let Some(cpu) = self.world.instances[service][instance].cpu.as_mut() {
            cpu.timer = None;
        }
        self.finish_shared_work(service, instance);
    }

    /// Every work on the instance's cores done by now ends (in finish-tag
    /// order), its handler moves on, and the timer is set for the next.
    pub(crate) fn finish_shared_work(&mut self, service: usize, instance: usize) {
        let now = self.now();
        let Some(cpu) = self.world.instances[service][instance].cpu.as_mut() else {
            return;
        };
        let mut done = Vec::new();
        while let Some(work) = cpu.sharing.pop_finished(now) {
            done.push(work);
        }
        if done.is_empty() {
            return;
        }
        self.reschedule_cpu(service, instance);
        for work in done {
            if let Some(timer) = work.limit {
                self.queue.cancel(timer);
            }
            // Out of the set: what follows is the step's end.
            let Some(task) = self.world.tasks.get_mut(work.task) else {
                continue;
            };
            task.state = TaskState::Working;
            match work.failure {
                None => self.on_work_done(work.task),
                Some(reason) => self.on_work_failed(work.task, reason),
            }
        }
    }

    /// `task`'s work leaves its instance's cores unfinished: its caller gave
    /// up (`on_cancel: stop`), or it hit its limit.
    pub(crate) fn leave_shared_work(&mut self, task_id: TaskId, job: JobId) {
        let now = self.now();
        let task = &mut self.world.tasks[task_id];
        task.state = TaskState::Working;
        let (service, instance) = (task.service, task.instance as usize);
        let cpu = self.world.instances[service][instance]
            .cpu
            .as_mut()
            .expect("shared work runs on a cpu");
        if let Some(work) = cpu.sharing.remove(now, job) {
            if let Some(timer) = work.limit {
                self.queue.cancel(timer);
            }
        }
        self.reschedule_cpu(service, instance);
    }

    /// The work's limit came (`Event::WorkFailed` from its own timer) while
    /// it shares the cores: unless done at this very instant, it stops.
    /// Whether it is still in the set is told by its job.
    pub(crate) fn shared_work_limit(&mut self, task_id: TaskId, job: JobId) -> bool {
        let task = &self.world.tasks[task_id];
        let (service, instance) = (task.service, task.instance as usize);
        // Work done at this instant is done, as unshared work that takes
        // exactly its limit is.
        self.finish_shared_work(service, instance);
        let still = self
            .world
            .tasks
            .get(task_id)
            .is_some_and(|t| matches!(t.state, TaskState::Sharing { job: j, .. } if j == job));
        if still {
            self.leave_shared_work(task_id, job);
        }
        still
    }

    /// One timer per instance, at its set's next finish.
    fn reschedule_cpu(&mut self, service: usize, instance: usize) {
        let cpu = self.world.instances[service][instance]
            .cpu
            .as_mut()
            .expect("a cpu to schedule");
        if let Some(timer) = cpu.timer.take() {
            self.queue.cancel(timer);
        }
        if let Some(at) = cpu.sharing.next_finish() {
            let (service, instance) = (service as u32, instance as u32);
            cpu.timer = Some(
                self.queue
                    .schedule_timer(at, Event::CpuDone { service, instance }),
            );
        }
    }

    /// A timeline change to the cores: the work so far was done at the old
    /// rate, the rest goes at the new one.
    pub(crate) fn apply_cpu_change(&mut self) {
        let now = self.now();
        for service in 0..self.world.instances.len() {
            let Some(cpu) = self.topology.model.services[service].cpu else {
                continue;
            };
            for instance in 0..self.world.instances[service].len() {
                let Some(state) = self.world.instances[service][instance].cpu.as_mut() else {
                    continue;
                };
                if state.sharing.cores() != cpu.cores {
                    state.sharing.set_cores(now, cpu.cores);
                    self.reschedule_cpu(service, instance);
                }
            }
        }
    }
}
