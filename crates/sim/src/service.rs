//! The service side: admission (workers and queue), handler steps, answers,
//! and what a handler does when its caller gives up.

use crate::metrics::{FailReason, Outcome};
use crate::policy::rate_limit::RateDecision;
use crate::simulator::{Delivery, Event, Simulator, NET_UP};
use crate::world::*;
use stormsim_engine::{SimDuration, SimTime, StreamKey};
use stormsim_model::{CallContext, DownMode, DrawnAt, ErrorStatus, ErrorWork, OnCancel, Step};

/// How many places down a service's queue `release_worker` prefetches the
/// handlers, and (nearer, once the handler has arrived) what they point to.
const QUEUE_PREFETCH_FAR: usize = 8;
const QUEUE_PREFETCH_NEAR: usize = 4;

impl Simulator<'_> {
    /// An attempt reached its callee: admission control, then a worker, the
    /// queue, or a rejection.
    ///
    /// In a retry storm most arrivals find the queue full and are refused, so
    /// the attempt and the instance are each read once, up front, and the
    /// deadline is only worked out where it is used.
    pub(crate) fn on_attempt_arrives(&mut self, attempt: AttemptId) {
        // Gone: the caller gave up while the request was on the wire.
        let Some(a) = self.world.attempts.get(attempt) else {
            return;
        };
        let now = self.now();
        let (service_id, key, budget, attempt_no) = (a.to as usize, a.key, a.budget, a.attempt_no);
        let (instance, edge, sent_at) = (a.instance as usize, a.edge, a.sent_at);
        let (orphaned, a_root, class, request) = (a.orphaned, a.root, a.class, a.request);
        // Nothing below changes it before the attempt is answered or kept.
        let timer = Some(a.timer);
        let service = self.topology.service_of(service_id);
        if (instance as u32) < service.instances_down {
            // A down instance: nobody counts the call.
            match service.down_mode {
                DownMode::Refuse => {
                    let reason = FailReason::ConnectionRefused;
                    self.refuse(attempt, timer, key, reason, Delivery::Last)
                }
                DownMode::Blackhole if orphaned => {
                    self.world.attempts.remove(attempt);
                    self.measured.zombies.release(a_root);
                }
                DownMode::Blackhole => {
                    let connect = self.topology.edges[edge as usize].connect_timeout;
                    let answer_at = if connect.is_infinite() {
                        self.world.hung_in_blackhole = true;
                        SimTime::NEVER
                    } else {
                        (sent_at + connect).max(now)
                    };
                    self.arm_timer_unless_answered_by(attempt, answer_at);
                    if !connect.is_infinite() {
                        let at = answer_at;
                        self.queue.schedule(
                            at,
                            Event::ResponseArrives(attempt, Outcome::Failed(FailReason::Timeout)),
                        );
                    }
                }
            }
            return;
        }
        self.measured.services[service_id].calls += 1;
        let bucket = self.measured.series.service_mut(service_id);
        if attempt_no > 1 {
            bucket.offered_retry += 1;
        } else {
            bucket.offered_first += 1;
        }
        let admission = &service.admission;
        if admission.drop_fraction > 0.0
            && key.label("admission").rng().unit() < admission.drop_fraction
        {
            self.shed(service_id, attempt, class, timer, key, FailReason::Rejected);
            return;
        }
        let admission_state = &mut self.policies.admission[service_id][instance];
        if let Some(limiter) = admission_state.limiter.as_mut() {
            let retry_after = match limiter.try_acquire(now) {
                RateDecision::Admit => None,
                // A server does not hold a request for a permit: it refuses it,
                // naming when to come back.
                RateDecision::WaitUntil(t) => Some(t - now),
                RateDecision::Reject { retry_after } => Some(retry_after),
            };
            if let Some(after) = retry_after {
                let counters = &mut self.measured.services[service_id];
                counters.rate_limited += 1;
                counters.refused_429 += 1;
                self.measured.series.service_mut(service_id).rejected += 1;
                self.world.attempts[attempt].retry_after = after;
                self.refuse(attempt, timer, key, FailReason::RateLimited, Delivery::Last);
                return;
            }
        }
        let state = &self.world.instances[service_id][instance];
        let (busy, queued, in_flight) = (state.busy, state.queue.len(), state.in_flight());
        let class_limit = class.map_or(u32::MAX, |c| {
            admission
                .shed_classes
                .get(c as usize)
                .copied()
                .unwrap_or(u32::MAX)
        });
        let over_limit = admission_state
            .concurrency
            .as_ref()
            .is_some_and(|limit| !limit.try_acquire(in_flight));
        if in_flight >= class_limit || over_limit {
            self.shed(service_id, attempt, class, timer, key, FailReason::Rejected);
            return;
        }
        // A relative budget becomes a deadline on arrival (gRPC); an absolute
        // one already is (as this host's clock reads it); a request without
        // one gets the service's default, if it has one.
        let deadline = || match budget {
            SentDeadline::Relative(b) => Some(now + b),
            SentDeadline::At(t) => Some(t),
            SentDeadline::None => service.default_deadline.map(|b| now + b),
        };
        // Deadline middleware: a request that arrives too late to be answered
        // in time is refused before any work (504).
        if let Some(margin) = admission.drop_expired_margin {
            if deadline().is_some_and(|d| now + margin >= d) {
                self.measured.services[service_id].expired += 1;
                self.count_shed(service_id, class);
                let reason = FailReason::DeadlineExceeded;
                self.refuse(attempt, timer, key, reason, Delivery::Last);
                return;
            }
        }
        let admitted = busy < service.workers;
        if !admitted && queued >= service.queue_capacity {
            self.measured.services[service_id].rejected += 1;
            self.measured.series.service_mut(service_id).rejected += 1;
            self.refuse_with_retry_after(service_id, attempt, timer, key, FailReason::Rejected);
            return;
        }
        self.measured.zombies.hold(a_root);
        // Work drawn at admission is slowed by the host as it is now.
        let admitted_slowdown = if service.draws_at_admission {
            // As if in service: those in service now, and itself.
            let in_service = busy + 1;
            self.world
                .slowdown(self.topology.model, service_id, instance as u32, now)
                * service.contention.map_or(1.0, |c| c.factor(in_service))
        } else {
            1.0
        };
        let work_factor = self.correlated_work_factor(edge, request);
        let task = self.world.tasks.insert(Task {
            work_factor,
            request,
            root: a_root,
            service: service_id,
            instance: instance as u32,
            step: 0,
            state: TaskState::Queued,
            parent: attempt,
            key,
            deadline_at: deadline().unwrap_or(SimTime::NEVER),
            // An untied loser that was still on the wire runs for nobody.
            caller_gone: false,
            unheard: orphaned,
            holds_worker: true,
            class,
            fallback_at: 0,
            degraded: 0,
            arrived: now,
            waited_us: 0,
            in_flight_at_arrival: in_flight + 1,
            admitted_epoch: self.topology.epoch,
            admitted_slowdown,
        });
        if orphaned {
            self.world.attempts.remove(attempt);
            self.measured.zombies.release(a_root);
        } else {
            self.world.attempts[attempt].child = Some(task);
            // Kept: it may now run past its timeout.
            self.arm_timer_unless_answered_by(attempt, SimTime::NEVER);
        }
        if admitted {
            self.set_busy(service_id, instance, busy + 1);
            self.measured.series.service_mut(service_id).started += 1;
            self.run_step(task);
        } else {
            self.measured.series.service_mut(service_id).queued += 1;
            let rank = service.queue_discipline.rank_of(class);
            let queue = &mut self.world.instances[service_id][instance].queue;
            queue.push(task, rank);
            let counters = &mut self.measured.services[service_id];
            counters.max_queue = counters.max_queue.max(queue.len() as u64);
        }
    }

    /// Admission control refuses an arriving attempt: 503, counted as shed.
    /// The work factor of the handler an attempt starts: a fan-out child of
    /// a request its fan-out's `correlated_slowdown` makes slow works
    /// `factor` times longer. Drawn per logical request and edge, so that
    /// every attempt, retry and hedge of that request's children agrees.
    fn correlated_work_factor(&self, edge: EdgeId, request: u32) -> f64 {
        let policy = &self.topology.edges[edge as usize];
        let Some(slow) = policy.fan_out.and_then(|f| f.correlated_slowdown) else {
            return 1.0;
        };
        let mut rng = StreamKey::root(self.topology.model.seed)
            .label("correlated slowdown")
            .index(u64::from(edge))
            .index(u64::from(request))
            .rng();
        if slow.p > 0.0 && rng.unit() < slow.p {
            slow.factor
        } else {
            1.0
        }
    }

    fn shed(
        &mut self,
        service: usize,
        attempt: AttemptId,
        class: Option<u8>,
        timer: Option<AttemptTimer>,
        key: StreamKey,
        reason: FailReason,
    ) {
        self.count_shed(service, class);
        self.refuse_with_retry_after(service, attempt, timer, key, reason);
    }

    /// A 503 at arrival, with the service's Retry-After if it sends one, as
    /// the arrival's last act.
    /// Inlined: it is the answer to most arrivals in a storm, and a call of
    /// its own only to make another.
    #[inline(always)]
    fn refuse_with_retry_after(
        &mut self,
        service: usize,
        attempt: AttemptId,
        timer: Option<AttemptTimer>,
        key: StreamKey,
        reason: FailReason,
    ) {
        if let Some(after) = self.topology.service_of(service).admission.retry_after {
            self.world.attempts[attempt].retry_after = after;
        }
        self.refuse(attempt, timer, key, reason, Delivery::Last);
    }

    /// Counts a request refused or dropped by admission control, in the
    /// run's counters (per class) and in the time series.
    fn count_shed(&mut self, service: usize, class: Option<u8>) {
        let counters = &mut self.measured.services[service];
        counters.shed += 1;
        let slot = class.map_or(counters.shed_by_class.len() - 1, usize::from);
        counters.shed_by_class[slot] += 1;
        self.measured.series.service_mut(service).shed += 1;
    }

    /// Answers an attempt at once with an error, before any handler ran.
    /// `timer`: the attempt's timer as read when it arrived, if it is
    /// answered on arrival. Most refusals answer long before a timeout still
    /// pending: then there is nothing to arm, and no need to look the attempt
    /// up again to find that out. `delivery`: [`Delivery::Last`] for a
    /// refusal on arrival, the arrival's last act.
    fn refuse(
        &mut self,
        attempt: AttemptId,
        timer: Option<AttemptTimer>,
        key: StreamKey,
        reason: FailReason,
        delivery: Delivery,
    ) {
        let hop = self.topology.network_delay(key, NET_UP);
        let answer_at = self.now() + hop;
        let answered_first = matches!(
            timer,
            Some(AttemptTimer::Pending { expires, .. }) if answer_at < expires
        );
        if !answered_first {
            self.arm_timer_unless_answered_by(attempt, answer_at);
        }
        let answer = Event::ResponseArrives(attempt, Outcome::Failed(reason));
        match delivery {
            Delivery::Last => self.deliver_last(hop, answer),
            Delivery::Queued => self.deliver_after(hop, answer),
        }
    }

    /// Runs the task's current step, or answers if the handler is done.
    pub(crate) fn run_step(&mut self, task_id: TaskId) {
        let service = self.topology.service_of(self.world.tasks[task_id].service);
        let task = &mut self.world.tasks[task_id];
        // Steps for other classes are skipped (routing by kind of request).
        while let Some(Some(allowed)) = service.only_classes.get(task.step) {
            if task.class.is_some_and(|c| allowed.contains(&c)) {
                break;
            }
            task.step += 1;
        }
        let task = &self.world.tasks[task_id];
        let Some(step) = service.steps.get(task.step) else {
            let answer = Outcome::success_degraded_by(task.degraded);
            self.complete_task(task_id, answer);
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
            Step::Work {
                dist,
                on_cancel,
                timeout,
                deadline: bounded_by_deadline,
                error,
                drawn_at,
            } => {
                let (service_id, instance) = (task.service, task.instance);
                let request_deadline = task.deadline();
                let work_factor = task.work_factor;
                // The duration comes from the model in force when it is drawn,
                // slowed by the host as it is then: at the work's start, or at
                // the request's admission.
                let (dist, slowdown) = match drawn_at {
                    DrawnAt::Start => {
                        // Those in service, itself included.
                        let in_service = self.world.instances[service_id][instance as usize].busy;
                        let contention = service.contention.map_or(1.0, |c| c.factor(in_service));
                        let slowdown =
                            self.world
                                .slowdown(self.topology.model, service_id, instance, now);
                        (dist, slowdown * contention * work_factor)
                    }
                    DrawnAt::Admission => {
                        let then = self.topology.model_at(task.admitted_epoch);
                        // A timeline changes a step's values, never its kind:
                        // the step was work then too.
                        let dist = match &then.services[service_id].steps[task.step] {
                            Step::Work { dist, .. } => dist,
                            Step::Call(_) | Step::Parallel(_) => dist,
                        };
                        (dist, task.admitted_slowdown * work_factor)
                    }
                };
                let slowed = |d: SimDuration| {
                    if slowdown == 1.0 {
                        d
                    } else {
                        SimDuration((d.as_nanos() as f64 * slowdown).round() as u64)
                    }
                };
                let mut duration = slowed(dist.sample(&mut step_key.rng()));
                // A step that fails by itself answers after its failing work,
                // drawn from streams of its own: every variant fails the same
                // requests, and a step that cannot fail draws what it did.
                let failure = error.as_ref().and_then(|e| {
                    let fails = e.p > 0.0 && step_key.label("error").rng().unit() < e.p;
                    fails.then(|| {
                        duration = match &e.work {
                            ErrorWork::Fraction(f) => {
                                SimDuration((duration.as_nanos() as f64 * f).round() as u64)
                            }
                            ErrorWork::Dist(d) => {
                                slowed(d.sample(&mut step_key.label("error work").rng()))
                            }
                        };
                        match e.status {
                            ErrorStatus::Error => FailReason::Error,
                            ErrorStatus::Rejected => FailReason::Rejected,
                        }
                    })
                });
                // The work's limit: a static one (a statement timeout), or
                // what its request's deadline leaves (minus a margin to answer).
                let mut limit = (*timeout, FailReason::Timeout);
                if let (Some(policy), Some(deadline)) = (bounded_by_deadline, request_deadline) {
                    let left = deadline.saturating_since(now).saturating_sub(policy.margin);
                    if left == SimDuration::ZERO || left < policy.min_budget {
                        // Too late to be of use: fail fast, do nothing.
                        self.measured.services[service_id].expired += 1;
                        self.complete_task(task_id, Outcome::Failed(FailReason::DeadlineExceeded));
                        return;
                    }
                    if left < limit.0 {
                        limit = (left, FailReason::DeadlineExceeded);
                    }
                }
                if request_deadline.is_some_and(|d| now >= d) {
                    self.measured.services[service_id].started_late += 1;
                }
                if service.cpu.is_some() {
                    // Its pace depends on the work beside it: the cores' set
                    // times it, and its limit has a timer of its own.
                    let stops = *on_cancel == OnCancel::Stop;
                    self.start_shared_work(task_id, duration, failure, limit, stops);
                    return;
                }
                let cut_short = duration > limit.0;
                let (event, duration) = match failure {
                    _ if cut_short => (Event::WorkFailed(task_id, limit.1), limit.0),
                    Some(reason) => (Event::WorkFailed(task_id, reason), duration),
                    None => (Event::WorkDone(task_id), duration),
                };
                // Only a duration that is the same every time rides a FIFO lane.
                let constant =
                    dist.is_constant() && slowdown == 1.0 && !cut_short && failure.is_none();
                self.world.tasks[task_id].state = match (on_cancel, constant) {
                    (OnCancel::Stop, true) => TaskState::WorkingCancellable(
                        self.queue.schedule_constant_timer(duration, event),
                    ),
                    (OnCancel::Stop, false) => TaskState::WorkingCancellable(
                        self.queue.schedule_timer(now + duration, event),
                    ),
                    (OnCancel::Finish, true) => {
                        self.queue.schedule_constant(duration, event);
                        TaskState::Working
                    }
                    (OnCancel::Finish, false) => {
                        self.queue.schedule(now + duration, event);
                        TaskState::Working
                    }
                };
            }
            Step::Parallel(parallel) => {
                let first_edge = self.topology.step_edge[task.service][task.step];
                self.start_parallel(task_id, first_edge, step_key, parallel);
            }
            Step::Call(_) => {
                let edge = self.topology.step_edge[task.service][task.step];
                let deadline = task.deadline();
                let class = task.class;
                if self.topology.edges[edge as usize].fan_out.is_some() {
                    self.start_fan_out(task_id, edge, step_key);
                    return;
                }
                if self.topology.edges[edge as usize].cache.is_some() {
                    self.start_cached_call(task_id, edge, step_key);
                    return;
                }
                let request = task.request;
                let origin = CallOrigin {
                    owner: Owner::Task(task_id),
                    request,
                    deadline,
                    class,
                };
                let call = self.start_call(origin, edge, step_key, None);
                // The call may already have ended (no time left to try, a
                // breaker open), and the handler moved on: answered, or in
                // its fallback's call; generational keys tell.
                let Some(task) = self.world.tasks.get_mut(task_id) else {
                    return;
                };
                if self.world.calls.contains_key(call) {
                    task.state = TaskState::Calling(call);
                }
                let waits_on_a_call = matches!(task.state, TaskState::Calling(_));
                if waits_on_a_call
                    && task.holds_worker
                    && !self.topology.edges[edge as usize].hold_worker
                {
                    // Handed on: the worker takes the next request.
                    task.holds_worker = false;
                    let (service, instance) = (task.service, task.instance as usize);
                    self.release_worker(service, instance);
                }
            }
        }
    }

    fn step_watches_cancellation(&self, service: usize, step: usize) -> bool {
        match &self.topology.service_of(service).steps[step] {
            Step::Work { on_cancel, .. } => *on_cancel == OnCancel::Stop,
            Step::Call(policy) => policy.context == CallContext::Request,
            // Its branches share one context (validation sees to it).
            Step::Parallel(parallel) => parallel.branches[0].context == CallContext::Request,
        }
    }

    /// Local work failed: it hit its limit (the database cancels the
    /// statement) or failed by itself (its step's `error`); the worker is
    /// free, and the handler fails.
    pub(crate) fn on_work_failed(&mut self, task_id: TaskId, reason: FailReason) {
        let Some(task) = self.world.tasks.get(task_id) else {
            return;
        };
        // Work on shared cores at its limit: it may be done at this very
        // instant; if not, it leaves the cores.
        if let TaskState::Sharing { job, .. } = task.state {
            if !self.shared_work_limit(task_id, job) {
                return;
            }
        }
        let task = &self.world.tasks[task_id];
        let counters = &mut self.measured.services[task.service];
        match reason {
            FailReason::Timeout => counters.work_timeouts += 1,
            FailReason::DeadlineExceeded => counters.expired += 1,
            // Its own error: counted with the handler's failures.
            _ => {}
        }
        self.complete_task(task_id, Outcome::Failed(reason));
    }

    pub(crate) fn on_work_done(&mut self, task_id: TaskId) {
        let Some(task) = self.world.tasks.get_mut(task_id) else {
            return;
        };
        task.step += 1;
        // Its last step done, the handler is: most handlers are one work
        // step, and this answers them without going through `run_step`.
        if task.step >= self.topology.service_of(task.service).steps.len() {
            let answer = Outcome::success_degraded_by(task.degraded);
            self.complete_task(task_id, answer);
        } else {
            self.run_step(task_id);
        }
    }

    /// A call step ended.
    pub(crate) fn call_finished(&mut self, task_id: TaskId, outcome: Outcome) {
        let Some(task) = self.world.tasks.get_mut(task_id) else {
            return;
        };
        match outcome {
            Outcome::Ok | Outcome::Degraded(_) => {
                task.degraded |= outcome.degraded_by();
                if task.fallback_at != 0 {
                    self.fallback_call_answered(task_id);
                }
                let task = &mut self.world.tasks[task_id];
                task.step += 1;
                task.state = TaskState::Working;
                self.run_step(task_id);
            }
            Outcome::Failed(reason) => self.call_step_failed(task_id, reason),
        }
    }

    /// The handler fails with `reason`.
    pub(crate) fn fail_task(&mut self, task_id: TaskId, reason: FailReason) {
        self.complete_task(task_id, Outcome::Failed(reason));
    }

    /// The handler ended: answer the caller, or count wasted work if it left.
    fn complete_task(&mut self, task_id: TaskId, outcome: Outcome) {
        let task = self
            .world
            .tasks
            .remove(task_id)
            .expect("a live task completes");
        let now = self.now();
        let instance = task.instance as usize;
        if let Some(limit) = self.policies.admission[task.service][instance]
            .concurrency
            .as_mut()
        {
            let dropped = !outcome.is_success();
            limit.on_sample(now, now - task.arrived, task.in_flight_at_arrival, dropped);
        }
        let counters = &mut self.measured.services[task.service];
        counters.completed += 1;
        if !outcome.is_success() {
            counters.failed += 1;
        }
        let nobody_reads =
            task.caller_gone || task.unheard || self.measured.zombies.is_over(task.root);
        self.measured.zombies.release(task.root);
        let bucket = self.measured.series.service_mut(task.service);
        bucket.completed += 1;
        let waited = u64::from(task.waited_us) * 1000;
        bucket.service_ns += u128::from((now - task.arrived).as_nanos().saturating_sub(waited));
        if nobody_reads {
            // Its caller may still wait (for a user who has left): the answer
            // goes up all the same, and is wasted at every tier on the way.
            bucket.wasted += 1;
            self.measured.services[task.service].wasted += 1;
        }
        if !(task.caller_gone || task.unheard) {
            self.send_over_network(
                task.key,
                NET_UP,
                Event::ResponseArrives(task.parent, outcome),
            );
        }
        if task.holds_worker {
            self.release_worker(task.service, task.instance as usize);
        }
    }

    /// The caller gave up on this handler's request (its connection closed). The
    /// handler stops only where it watches for that: local work with
    /// `on_cancel: stop`, or a call in the request's context. Elsewhere it runs
    /// on, and what it completes is wasted.
    pub(crate) fn caller_gone(&mut self, task_id: TaskId) {
        let Some(task) = self.world.tasks.get_mut(task_id) else {
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
            TaskState::Sharing { job, stops } => {
                if stops {
                    self.leave_shared_work(task_id, job);
                }
                stops
            }
            TaskState::Calling(call) => {
                // The call in flight decides: the step's own, or a call of
                // its fallback, with a context of its own.
                let watching = match self.world.calls.get(call) {
                    Some(c) => self.topology.edges[c.edge as usize].context == CallContext::Request,
                    None => self.step_watches_cancellation(service, step),
                };
                if watching {
                    if self.world.tasks[task_id].fallback_at != 0 {
                        self.fallback_call_cancelled(task_id);
                    }
                    self.cancel_call(call);
                }
                watching
            }
            TaskState::FanningOut(fan) => {
                let watching = self.step_watches_cancellation(service, step);
                if watching {
                    self.drop_fan_out(fan);
                }
                watching
            }
            TaskState::AwaitingCache(load) => {
                let watching = self.step_watches_cancellation(service, step);
                if watching {
                    self.leave_cache_load(load);
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
        let task = self.world.tasks.remove(task_id).expect("a live task stops");
        self.measured.zombies.release(task.root);
        self.measured.services[task.service].cancelled += 1;
        self.measured.series.service_mut(task.service).cancelled += 1;
        if task.holds_worker {
            self.release_worker(task.service, task.instance as usize);
        }
    }

    /// A worker is free: give it the head of the queue, dropping on the way the
    /// requests admission control says cannot be answered in time.
    pub(crate) fn release_worker(&mut self, service_id: usize, instance: usize) {
        let now = self.now();
        let service = self.topology.service_of(service_id);
        let margin = service.admission.drop_expired_margin;
        // After a scale-down, a freed worker retires instead of taking more work.
        let retiring = self.world.instances[service_id][instance].busy > service.workers;
        while let Some(next) = (!retiring)
            .then(|| {
                self.world.instances[service_id][instance]
                    .queue
                    .pop(&service.queue_discipline)
            })
            .flatten()
        {
            // In a FIFO queue the handlers a few places down it are the next
            // to get a worker; warm them up (see `Simulator::warm_up_upcoming`),
            // and nearer, the root record each will release when it completes
            // and the attempt it will answer, both last touched when it arrived.
            let queue = &self.world.instances[service_id][instance].queue;
            let discipline = &service.queue_discipline;
            if let Some(soon) = queue.upcoming_fifo(QUEUE_PREFETCH_FAR, discipline) {
                self.world.tasks.prefetch(soon);
            }
            if let Some(soon) = queue
                .upcoming_fifo(QUEUE_PREFETCH_NEAR, discipline)
                .and_then(|t| self.world.tasks.get(t))
            {
                self.measured.zombies.prefetch(soon.root);
                if !soon.caller_gone {
                    self.world.attempts.prefetch(soon.parent);
                }
            }
            let task = &self.world.tasks[next];
            let expired = margin.is_some_and(|m| task.deadline().is_some_and(|d| now + m >= d));
            let state = &mut self.world.instances[service_id][instance];
            let queue_empty_after = state.queue.is_empty();
            let arrived = task.arrived;
            let codel_drop = !expired
                && self.policies.admission[service_id][instance]
                    .codel
                    .as_mut()
                    .is_some_and(|c| c.on_dequeue(now, arrived, queue_empty_after));
            if !expired && !codel_drop {
                // The next task starts from the run loop, not from here: a chain of
                // tasks that end at once would otherwise recurse as deep as the
                // queue is long. Its worker is taken now: its wait ends.
                let wait = now - arrived;
                self.world.tasks[next].waited_us =
                    u32::try_from(wait.as_nanos() / 1000).unwrap_or(u32::MAX);
                let bucket = self.measured.series.service_mut(service_id);
                bucket.started += 1;
                bucket.wait_ns += u128::from(wait.as_nanos());
                self.world.ready.push_back(next);
                return;
            }
            let task = self
                .world
                .tasks
                .remove(next)
                .expect("queued tasks are live");
            self.measured.zombies.release(task.root);
            if expired {
                self.measured.services[service_id].expired += 1;
            }
            self.count_shed(service_id, task.class);
            if !task.caller_gone && !task.unheard {
                let reason = if expired {
                    FailReason::DeadlineExceeded
                } else {
                    FailReason::Rejected
                };
                // The queue goes on: not the last act.
                self.refuse(task.parent, None, task.key, reason, Delivery::Queued);
            }
        }
        let busy = self.world.instances[service_id][instance].busy - 1;
        self.set_busy(service_id, instance, busy);
    }
}
