//! One run of one variant: the state in its parts, the run loop, and the
//! workloads' arrivals.
//!
//! The state is split by who owns it, so that what a function takes says what
//! it may touch:
//!
//! | part | what | changed by |
//! |---|---|---|
//! | [`Topology`] | the model in force, its call edges, who calls on each | a timeline change only |
//! | `queue` | the clock and the pending events | every handler |
//! | [`World`] | the live entities, each instance's workers and queue, each workload's arrivals | the handlers, as requests come and go |
//! | [`PolicyState`] | breakers, budgets, limiters, balancers, bulkheads, admission, caches | the handlers, through the [`crate::policy`] state machines |
//! | [`Measurements`] | counters, the time series, zombie work, the attempt log | the handlers, write-only; read by [`crate::report`] |
//!
//! The handlers are methods of [`Simulator`] because an event can touch every
//! part (an answer updates a breaker, frees an attempt, counts a success and
//! may start a retry); they live by side: the call side in [`crate::call`],
//! the service side in [`crate::service`], fan-outs and parallel steps in [`crate::join`],
//! caches in [`crate::cache`]. The order of a call edge's policy layers is
//! composed in one place, [`crate::call`].

use crate::arrivals;
use crate::attempts::{AttemptLog, AttemptSink};
pub use crate::events::Event;
use crate::measurements::{cores_up, workers_up, Measurements};
use crate::metrics::Outcome;
use crate::policy::breaker::BreakerState;
use crate::policy_state::PolicyState;
use crate::report::{self, LimitHit, VariantReport};
use crate::timeseries::Gauges;
use crate::topology::Topology;
use crate::world::*;
use crate::zombie::NO_USER;
use stormsim_engine::{EventQueue, SimDuration, SimTime, StreamKey};
use stormsim_model::{Arrival, Change, Model, ServiceId};

/// Where in its handler a message is sent, which decides how one with no
/// latency may be delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// Somewhere in the handler: queued at the current instant, after what
    /// is due at it already ([`Simulator::deliver_after`]).
    Queued,
    /// As the handler's last act, after which it changes and schedules
    /// nothing: handled at once when it is next anyway
    /// ([`Simulator::deliver_last`]).
    Last,
}

/// Most rows a run's time series may hold, run-wide and per service together
/// (the model crate's limit, which validation applies to a horizon).
pub use stormsim_model::MAX_SERIES_ROWS;

/// One run of one variant.
pub struct Simulator<'m> {
    pub(crate) topology: Topology<'m>,
    pub(crate) queue: EventQueue<Event>,
    pub(crate) world: World,
    pub(crate) policies: PolicyState,
    pub(crate) measured: Measurements<'m>,
    /// The first of the queue's places set aside for the timeline's changes.
    change_seqs: u64,
    /// Whether a message its handler sends as its last act may be handled
    /// at once ([`Simulator::deliver_last`]); off only to compare with the
    /// queued delivery.
    at_once: bool,
}

/// Where [`Simulator::advance`] left a run.
pub(crate) enum Advanced {
    /// Every event before the pause was handled, none after.
    Paused,
    /// The run is over, at the limit it stopped at if any.
    Ended(Option<LimitHit>),
}

/// Where [`Simulator::deliver`] stopped.
enum Delivered {
    /// The run is over, at the limit it stopped at if any.
    Ended(Option<LimitHit>),
    /// It handled an event it was asked to watch for.
    Watched,
}

/// Places among ties set aside for a run's timeline: more than any
/// timeline has changes.
const TIMELINE_PLACES: u64 = 1 << 32;

/// How many places down a lane [`Simulator::warm_up_upcoming`] looks for the
/// entities of events, and for the entities those point to.
const PREFETCH_FAR: usize = 8;
const PREFETCH_NEAR: usize = 4;

/// Salt of the network latency draws of a request's trip down and back up.
pub(crate) const NET_DOWN: u64 = u64::MAX - 1;
pub(crate) const NET_UP: u64 = u64::MAX - 2;

impl<'m> Simulator<'m> {
    /// Prepares a run of `model`, changed over time by `changes` (in time order).
    pub fn new(model: &'m Model, changes: &'m [Change]) -> Simulator<'m> {
        let topology = Topology::new(model, changes);
        Simulator {
            queue: EventQueue::new(),
            world: World::new(model),
            policies: PolicyState::new(&topology),
            measured: Measurements::new(model, topology.edges.len(), &topology.branch_edges()),
            topology,
            change_seqs: 0,
            at_once: true,
        }
    }
}

impl<'m> Simulator<'m> {
    /// Keeps one record per attempt in the report's `attempts` (memory grows
    /// with the attempts simulated: for tests and models of moderate size).
    pub fn record_attempts(mut self) -> Self {
        self.measured.attempt_log = Some(AttemptLog::Memory(Vec::new()));
        self
    }

    /// Hands each attempt's record to `sink` as the attempt ends, in the
    /// order of [`Simulator::record_attempts`]; the report's `attempts` stays
    /// empty.
    pub fn stream_attempts(mut self, sink: impl AttemptSink + 'm) -> Self {
        self.measured.attempt_log = Some(AttemptLog::Stream(Box::new(sink)));
        self
    }

    /// Queues every message with no latency at the current instant, even
    /// one its handler sends as its last act, which [`Simulator::deliver_last`]
    /// otherwise handles at once: the run loop's own order, which at-once
    /// delivery must give byte for byte. For the tests that compare them.
    #[doc(hidden)]
    pub fn queue_every_message(mut self) -> Self {
        self.at_once = false;
        self
    }

    /// Runs to the end (no event left, or the horizon) or to a limit, and reports.
    pub fn run(mut self, variant: &str) -> VariantReport {
        self.start();
        match self.advance(None) {
            Advanced::Ended(stopped) => self.finish(variant, stopped),
            Advanced::Paused => unreachable!("a run with no pause ran to its end"),
        }
    }

    /// Schedules the workloads' first arrivals and the timeline's changes,
    /// and opens the first bucket: the run at time zero.
    pub(crate) fn start(&mut self) {
        for (i, w) in self.topology.model.workloads.iter().enumerate() {
            let first = match w.arrival {
                Arrival::Constant { .. } | Arrival::AtOnce => SimTime::ZERO,
                Arrival::Poisson { .. } | Arrival::Shaped(_) => {
                    if let Some(at) = self.next_arrival(i, SimTime::ZERO) {
                        self.schedule_arrival(i, at);
                    }
                    continue;
                }
                Arrival::ClosedLoop { users } => {
                    // Each user starts after one think time, on its own stream.
                    let think = w.think.as_ref().expect("a closed loop thinks");
                    for user in 0..users {
                        let key = self.world.workloads[i]
                            .key
                            .label("user")
                            .index(u64::from(user));
                        let at = SimTime::ZERO + think.sample(&mut key.rng());
                        self.schedule_user(i, user, at);
                    }
                    continue;
                }
            };
            self.schedule_arrival(i, first);
        }
        // The timeline's places among ties are set aside now, whatever its
        // length: a run forked from this one's state puts its own timeline
        // where a run of its own would (see `Simulator::fork`).
        self.change_seqs = self.queue.reserve_seqs(TIMELINE_PLACES);
        for (i, c) in self.topology.changes.iter().enumerate() {
            let seq = self.change_seqs + i as u64;
            self.queue
                .schedule_reserved(c.at, seq, Event::Change(i as u32));
        }
        self.open_buckets_until(SimTime::ZERO);
    }

    /// Delivers events until the run ends (no event left, the horizon, or
    /// a limit: `Ended` with the limit), or, with `pause`, until every event
    /// before `pause` was handled and the next is due at or after it
    /// (`Paused`: the state a run that differs from `pause` on can fork
    /// from). From one bucket before `pause`, each event's time is looked at
    /// before it is taken; an event that leaps past the whole bucket is taken
    /// and the run goes on to its end without pausing.
    pub(crate) fn advance(&mut self, pause: Option<SimTime>) -> Advanced {
        let Some(pause) = pause else {
            return match self.deliver(SimTime::NEVER, SimTime::NEVER) {
                Delivered::Ended(stopped) => Advanced::Ended(stopped),
                Delivered::Watched => unreachable!("nothing is watched without a pause"),
            };
        };
        let bucket = self.measured.series.bucket.as_nanos();
        let mut watch_from = SimTime(pause.as_nanos().saturating_sub(bucket));
        loop {
            // Paused here before (another fork at the same instant), or near.
            if self.now() >= watch_from {
                let (attempts, calls, workloads) = (
                    &self.world.attempts,
                    &self.world.calls,
                    &self.world.workloads,
                );
                let next = self
                    .queue
                    .next_standing_time(|e| stands(e, attempts, calls, workloads));
                if next.is_none_or(|t| t >= pause) {
                    return Advanced::Paused;
                }
                // One event at a time from here.
                watch_from = SimTime::ZERO;
            }
            match self.deliver(watch_from, pause) {
                Delivered::Ended(stopped) => return Advanced::Ended(stopped),
                Delivered::Watched => {}
            }
        }
    }

    /// The run loop: delivers events until the run ends (`Ended`), or until
    /// it has handled one due at or after `watch_from` and before `pause`
    /// (`Watched`). One due at or after `pause` is past the pause: the
    /// watch is over and the loop goes on. The watch costs nothing per event:
    /// it is one more instant the loop looks at ([`Simulator::advance`]).
    fn deliver(&mut self, mut watch_from: SimTime, pause: SimTime) -> Delivered {
        let horizon = self.topology.model.horizon.map(|h| SimTime::ZERO + h);
        let limits = self.topology.model.limits;
        let mut stopped = None;
        // The first instant at which the loop has more to do than deliver:
        // the horizon, the start of a bucket not open yet, or a watch before
        // a pause. One comparison per event instead of one for each.
        let look_at = |measured: &Measurements, watch_from: SimTime| {
            horizon
                .unwrap_or(SimTime::NEVER)
                .min(measured.next_bucket_at)
                .min(watch_from)
        };
        let mut next_look_at = look_at(&self.measured, watch_from);
        let mut watched = false;
        while let Some((t, event)) = self.next_event() {
            if t >= next_look_at {
                if horizon.is_some_and(|h| t >= h) {
                    break;
                }
                if t >= watch_from {
                    watched = t < pause;
                    watch_from = SimTime::NEVER;
                }
                if t >= self.measured.next_bucket_at {
                    let buckets = self.measured.series.index(t) as u64 + 1;
                    if buckets.saturating_mul(self.topology.model.series_rows_per_bucket())
                        > limits.max_series_rows
                    {
                        stopped = Some(LimitHit::Buckets {
                            buckets: self.measured.series.len() as u64,
                            bucket_s: self.measured.series.bucket_s(),
                            max_rows: limits.max_series_rows,
                        });
                        break;
                    }
                    self.open_buckets_until(t);
                }
                next_look_at = look_at(&self.measured, watch_from);
                if watched {
                    return self.deliver_watched(event, limits);
                }
            }
            self.warm_up_upcoming();
            if self.dispatch(event, limits.max_events) {
                stopped = Some(self.events_limit_hit());
                break;
            }
            if let Some(hit) = self.in_flight_limit_hit(limits.max_in_flight) {
                stopped = Some(hit);
                break;
            }
        }
        // A load shape that stopped drawing at the event limit leaves no
        // event behind to notice it.
        if stopped.is_none() && self.events_counted() >= limits.max_events {
            stopped = Some(self.events_limit_hit());
        }
        Delivered::Ended(stopped)
    }

    /// Handles a watched event (see [`Simulator::deliver`]), out of the run
    /// loop's way.
    #[inline(never)]
    fn deliver_watched(&mut self, event: Event, limits: stormsim_model::Limits) -> Delivered {
        if self.dispatch(event, limits.max_events) {
            return Delivered::Ended(Some(self.events_limit_hit()));
        }
        if let Some(hit) = self.in_flight_limit_hit(limits.max_in_flight) {
            return Delivered::Ended(Some(hit));
        }
        Delivered::Watched
    }

    /// What counts against `limits.max_events`: the events delivered, and
    /// the candidate arrivals a load shape drew and thinned away.
    fn events_counted(&self) -> u64 {
        self.queue
            .delivered()
            .saturating_add(self.world.thinned_away)
    }

    /// The run stopped at `limits.max_events`: what it had counted.
    fn events_limit_hit(&self) -> LimitHit {
        match self.world.thinned_away {
            0 => LimitHit::Events(self.queue.delivered()),
            thinned => LimitHit::EventsAndThinned {
                events: self.queue.delivered(),
                thinned,
            },
        }
    }

    /// Whether more requests are alive than `limits.max_in_flight` allows:
    /// handler executions, or calls waiting on an answer or a backoff
    /// (each counted on its own).
    #[inline(always)]
    fn in_flight_limit_hit(&self, max_in_flight: u64) -> Option<LimitHit> {
        let (tasks, calls) = (self.world.tasks.len() as u64, self.world.calls.len() as u64);
        if tasks > max_in_flight {
            Some(LimitHit::InFlight(tasks))
        } else if calls > max_in_flight {
            Some(LimitHit::CallsInFlight(calls))
        } else {
            None
        }
    }

    /// Ends the run (`stopped`: the limit it stopped at, if any) and reports.
    pub(crate) fn finish(mut self, variant: &str, stopped: Option<LimitHit>) -> VariantReport {
        let horizon = self.topology.model.horizon.map(|h| SimTime::ZERO + h);
        self.measured.ended = match (horizon, &stopped) {
            (Some(h), None) => h,
            // The event that would have opened too many buckets was not
            // handled: the run ends with the last bucket it opened.
            (_, Some(LimitHit::Buckets { .. })) => self.measured.series.first_unopened_instant(),
            _ => self.queue.now(),
        };
        // The last bucket is the one holding the last instant before the end: a
        // horizon on a bucket boundary opens no empty bucket after it.
        let end = self.measured.ended;
        self.open_buckets_until(SimTime(end.as_nanos().saturating_sub(1)));
        self.close_bucket(end);
        self.measured.series.end_at(end);
        let drained = stopped.is_none() && horizon.is_none() && !self.world.hung_in_blackhole;
        if let Err(broken) = self.check_invariants(drained) {
            panic!("simulator invariant broken in variant {variant:?}: {broken}");
        }
        let mut report = report::variant_report(
            &self.topology,
            &self.policies,
            &self.measured,
            self.queue.delivered(),
            variant,
            stopped,
        );
        report.events_by_kind = Event::KINDS
            .iter()
            .zip(self.measured.events_by_kind)
            .filter(|(_, n)| *n > 0)
            .map(|(kind, n)| (*kind, n))
            .chain([("(stale timers skipped)", self.queue.stale_popped())])
            .collect();
        if let Some(AttemptLog::Memory(records)) = self.measured.attempt_log.take() {
            report.attempts = records;
        }
        report
    }

    /// A run of `model` with `changes`, from this run's state as it is now:
    /// paused ([`Simulator::advance`]) before `model` and `changes` differ
    /// from this run's own (the same model at time zero, the same timeline
    /// up to the pause). It goes on exactly as a run of its own from time
    /// zero would: the same state, and its own timeline in the queue where
    /// that run would have it. Events already delivered count as its own.
    /// Not for a run that streams its attempts.
    pub(crate) fn fork<'v>(&self, model: &'v Model, changes: &'v [Change]) -> Simulator<'v> {
        let applied = self.topology.epoch as usize;
        let mut topology = Topology::new(model, changes);
        if let Some(last) = applied.checked_sub(1) {
            topology.apply(last);
        }
        let mut queue = self.queue.clone();
        queue.remove_from_heap(|e| matches!(e, Event::Change(_)));
        for (i, c) in changes.iter().enumerate().skip(applied) {
            let seq = self.change_seqs + i as u64;
            queue.schedule_reserved(c.at, seq, Event::Change(i as u32));
        }
        Simulator {
            topology,
            queue,
            world: self.world.clone(),
            policies: self.policies.clone(),
            measured: self.measured.fork(),
            change_seqs: self.change_seqs,
            at_once: self.at_once,
        }
    }

    /// The requests at `service` now, waiting or served, over its
    /// instances ([`crate::trajectory::Trajectory::focus_backlog`]).
    pub(crate) fn backlog_of(&self, service: usize) -> u64 {
        self.world.instances[service]
            .iter()
            .map(|i| u64::from(i.in_flight()))
            .sum()
    }

    /// From now on, what has not happened yet draws from streams re-keyed
    /// by `salt`: the arrival gaps after the one already scheduled, every
    /// new request's own draws (work, errors, backoff jitter), and the work
    /// of the handlers still waiting in a queue (a server does not know how
    /// long a request takes until it runs it). Work under way keeps its
    /// draws: it is part of the state.
    pub(crate) fn rekey_future(&mut self, salt: u64) {
        for state in &mut self.world.workloads {
            state.key = state.key.label("branch").index(salt);
            state.rng = state.key.label("arrivals").rng();
        }
        for task in self.world.tasks.values_mut() {
            if matches!(task.state, TaskState::Queued) {
                task.key = task.key.label("branch").index(salt);
            }
        }
    }

    /// What must hold at the end of every run; a failure is a simulator bug,
    /// never a user's mistake. `drained`: the run ended because nothing was left
    /// to do (no horizon, no limit), so every entity must have ended exactly once.
    pub(crate) fn check_invariants(&self, drained: bool) -> Result<(), String> {
        let answered = self.measured.succeeded + self.measured.failures.total();
        if self.measured.zombies.started
            != self.measured.zombies.ended + self.measured.zombies.alive
        {
            return Err(format!(
                "{} zombie requests started, {} ended, {} alive",
                self.measured.zombies.started,
                self.measured.zombies.ended,
                self.measured.zombies.alive
            ));
        }
        if answered + self.world.roots_in_flight != self.measured.requests {
            return Err(format!(
                "{} requests, {answered} answered, {} unanswered",
                self.measured.requests, self.world.roots_in_flight
            ));
        }
        // One pass over the live handlers, not one per service.
        let mut alive = vec![0u64; self.topology.model.services.len()];
        for t in self.world.tasks.values() {
            alive[t.service] += 1;
        }
        let services = self.topology.model.services.iter();
        for ((spec, c), alive) in services.zip(&self.measured.services).zip(alive) {
            let ended = c.rejected + c.shed + c.refused_429 + c.completed + c.cancelled;
            if ended + alive != c.calls {
                return Err(format!(
                    "service {:?}: {} calls but {ended} ended and the rest are not alive",
                    spec.name, c.calls
                ));
            }
        }
        if drained {
            let leftovers = [
                ("logical requests", self.world.roots_in_flight as usize),
                ("calls", self.world.calls.len()),
                ("attempts", self.world.attempts.len()),
                ("handlers", self.world.tasks.len()),
                ("fan-outs", self.world.fan_outs.len()),
                ("cache loads", self.world.cache_loads.len()),
            ];
            let leftovers = leftovers.into_iter().chain([
                ("root attempts", self.measured.zombies.live_records()),
                ("zombie requests", self.measured.zombies.alive as usize),
            ]);
            for (what, n) in leftovers {
                if n != 0 {
                    return Err(format!("{n} {what} never ended"));
                }
            }
            for callers in &self.policies.edges {
                for e in callers {
                    if e.in_flight != 0
                        || e.bulkhead_in_use != 0
                        || e.outstanding.iter().any(|&n| n != 0)
                    {
                        return Err("an edge still counts attempts or bulkhead slots in use".into());
                    }
                }
            }
            for instances in &self.world.instances {
                if instances.iter().any(|i| i.busy != 0 || !i.queue.is_empty()) {
                    return Err("a worker is still busy or a queue not empty".into());
                }
                if instances
                    .iter()
                    .any(|i| i.cpu.as_ref().is_some_and(|c| !c.sharing.is_empty()))
                {
                    return Err("work still shares an instance's cores".into());
                }
            }
        }
        Ok(())
    }

    /// Opens every bucket up to the one holding `t`, closing the ones before.
    /// Gauges of a bucket are the state at its start: no event happened between
    /// the last one and the boundary.
    fn open_buckets_until(&mut self, t: SimTime) {
        let want = self.measured.series.index(t);
        while self.measured.series.len() <= want {
            let b = self.measured.series.len();
            let boundary = self.measured.series.boundary(b);
            if b > 0 {
                self.close_bucket(boundary);
            }
            let gauges = gauges(&self.topology, &self.world, &self.policies, boundary);
            self.measured
                .series
                .open(self.measured.zombies.alive, gauges.into_iter());
        }
        self.measured.next_bucket_at = self.measured.series.first_unopened_instant();
    }

    /// Records the open bucket's busy time up to `at` (its end, or the run's).
    fn close_bucket(&mut self, at: SimTime) {
        let Some(b) = self.measured.series.len().checked_sub(1) else {
            return;
        };
        for s in 0..self.world.instances.len() {
            let (mut busy, mut cores_busy) = (0, 0);
            for instance in &mut self.world.instances[s] {
                let integral = instance.busy_integral_at(at.max(instance.busy_since));
                busy += integral - instance.busy_at_bucket_start;
                instance.busy_at_bucket_start = integral;
                if let Some(cpu) = instance.cpu.as_mut() {
                    let work_done = cpu.sharing.work_done_ns_at(at);
                    cores_busy += work_done - cpu.work_done_at_bucket_start;
                    cpu.work_done_at_bucket_start = work_done;
                }
            }
            let capacity = self.measured.capacity[s].close_bucket(at);
            self.measured
                .series
                .close_service(b, s, busy, cores_busy, capacity);
        }
    }

    /// Changes a service's busy count now, keeping the busy-time integral
    /// exact.
    pub(crate) fn set_busy(&mut self, service: ServiceId, instance: usize, busy: u32) {
        let now = self.now();
        self.world.set_busy(service, instance, busy, now);
    }

    /// The timeline's change `index` applies: from now on the run follows its
    /// model. Work already under way keeps the durations it drew.
    fn on_change(&mut self, index: usize) {
        let (before, old_edges) = self.topology.apply(index);
        let model = self.topology.model;
        let now = self.now();
        for (capacity, spec) in self.measured.capacity.iter_mut().zip(&model.services) {
            capacity.set(now, workers_up(spec), cores_up(spec));
        }
        self.world.add_instances(model, now);
        self.apply_cpu_change();
        let instances: Vec<usize> = self.world.instances.iter().map(Vec::len).collect();
        self.policies
            .apply_change(before, &old_edges, &self.topology, &instances);
        for (i, (old, new)) in before.workloads.iter().zip(&model.workloads).enumerate() {
            // A closed loop's users keep their own pace (a change to their
            // number applies to the next run, not to this one).
            if !arrivals::changed(old, new) || matches!(new.arrival, Arrival::ClosedLoop { .. }) {
                continue;
            }
            // Voids the pending arrival.
            let epoch = &mut self.world.workloads[i].arrival_epoch;
            *epoch = epoch.wrapping_add(1);
            if let Some(next) = self.next_arrival(i, now) {
                self.schedule_arrival(i, next);
            }
        }
        // More workers: each takes the head of the queue now, as a worker
        // that frees up does (`release_worker`): its wait ends, or it is
        // dropped there if admission control says it cannot be answered
        // in time.
        for s in 0..self.world.instances.len() {
            let workers = model.services[s].workers;
            for i in 0..self.world.instances[s].len() {
                while self.world.instances[s][i].busy < workers
                    && !self.world.instances[s][i].queue.is_empty()
                {
                    let busy = self.world.instances[s][i].busy + 1;
                    self.set_busy(s, i, busy);
                    self.release_worker(s, i);
                }
            }
        }
    }

    /// Handles `event`, then everything it set off at the same instant: tasks
    /// given a worker, calls given a bulkhead slot, and messages over a
    /// zero-latency network, in that order until none is left, or until
    /// `max_events` have been delivered: a zero-time loop (a retry without
    /// backoff against a refusing instance) never leaves this instant, so the
    /// run loop's own check would come only after it ends, if ever. Whether
    /// it stopped at `max_events`.
    #[inline(always)]
    fn dispatch(&mut self, event: Event, max_events: u64) -> bool {
        self.handle(event);
        loop {
            if self.events_counted() >= max_events {
                return true;
            }
            if let Some(task) = self.world.ready.pop_front() {
                if self.world.tasks.contains_key(task) {
                    self.run_step(task);
                }
            } else if let Some(call) = self.world.ready_calls.pop_front() {
                if self.world.calls.contains_key(call) {
                    self.send_attempt(call, Delivery::Queued);
                }
            } else if let Some(event) = self.queue.pop_now() {
                self.handle(event);
            } else {
                return false;
            }
        }
    }

    /// The next event that stands. Timeouts, backoffs and arrivals are owned
    /// timers (`EventQueue::schedule_owned`): an attempt's timeout stands
    /// while the attempt lives with its timer armed, a backoff while its call
    /// sleeps, an arrival while its workload's arrivals are unchanged;
    /// answering, abandoning or removing the owner voids them, with no
    /// cancellation of their own.
    #[inline]
    fn next_event(&mut self) -> Option<(SimTime, Event)> {
        let (attempts, calls, workloads) = (
            &self.world.attempts,
            &self.world.calls,
            &self.world.workloads,
        );
        self.queue
            .pop_with(|event| stands(event, attempts, calls, workloads))
    }

    fn handle(&mut self, event: Event) {
        self.measured.events_by_kind[event.kind_index()] += 1;
        match event {
            Event::Arrival { workload, .. } => self.on_arrival(workload as usize),
            Event::AttemptArrives(a) => self.on_attempt_arrives(a),
            Event::ResponseArrives(a, outcome) => self.on_response(a, outcome),
            Event::AttemptTimeout(a) => self.on_attempt_timeout(a),
            Event::BackoffDone(c) => self.on_backoff_done(c),
            Event::WorkDone(t) => self.on_work_done(t),
            Event::Change(i) => self.on_change(i as usize),
            Event::BulkheadTimeout(c) => self.on_bulkhead_timeout(c),
            Event::HedgeDue(c, failed) => self.on_hedge_due(c, failed),
            Event::FanOutDeadline(f) => self.on_fan_out_deadline(f),
            Event::CancelLoser(a) => self.abandon_attempt(a),
            Event::UserWakes { workload, user } => self.on_user_wakes(workload as usize, user),
            Event::WorkFailed(t, reason) => self.on_work_failed(t, reason),
            Event::CpuDone { service, instance } => {
                self.on_cpu_done(service as usize, instance as usize)
            }
            Event::BranchDefault(fan, branch) => self.on_branch_default(fan, branch),
        }
    }

    /// The clock.
    /// Prefetches the entities of the events a few places down each FIFO lane
    /// (timeouts, backoffs): those entities were last touched a timeout ago,
    /// so each handler would otherwise start with a miss to memory, and the
    /// run is bound by those misses (see `stormsim_engine::Slab`). Two stages:
    /// far ahead the event's own entity, nearer the ones it points to, which
    /// can only be read once it has arrived. A hint: the run's results do not
    /// depend on it.
    fn warm_up_upcoming(&self) {
        match self.queue.upcoming_hint(PREFETCH_FAR) {
            Some(&Event::AttemptTimeout(a)) => self.world.attempts.prefetch(a),
            Some(&Event::BackoffDone(c) | &Event::BulkheadTimeout(c)) => {
                self.world.calls.prefetch(c)
            }
            Some(&Event::WorkDone(t)) => self.world.tasks.prefetch(t),
            _ => {}
        }
        if let Some(&Event::AttemptTimeout(a)) = self.queue.upcoming_hint(PREFETCH_NEAR) {
            if let Some(a) = self.world.attempts.get(a) {
                self.world.calls.prefetch(a.call);
                self.measured.zombies.prefetch(a.root);
                if let Some(child) = a.child {
                    self.world.tasks.prefetch(child);
                }
            }
        }
    }

    pub(crate) fn now(&self) -> SimTime {
        self.queue.now()
    }

    fn schedule_arrival(&mut self, workload: usize, at: SimTime) {
        let w = &self.topology.model.workloads[workload];
        let state = &self.world.workloads[workload];
        let count_left = w.max_requests.is_none_or(|max| state.generated < max);
        let in_time = w.duration.is_none_or(|d| at < SimTime::ZERO + d);
        if count_left && in_time {
            self.queue.schedule_owned(
                at,
                Event::Arrival {
                    workload: workload as u32,
                    epoch: state.arrival_epoch,
                },
            );
        }
    }

    fn on_arrival(&mut self, workload: usize) {
        let now = self.now();
        let next = self.next_arrival(workload, now);
        self.start_request(workload, NO_USER);
        if let Some(at) = next {
            self.schedule_arrival(workload, at);
        }
    }

    /// A workload's next arrival after `now` ([`arrivals::next_after`]);
    /// `None` once a load shape's traffic ended, or once the candidates it
    /// thinned away, with the events, reach `limits.max_events` (the run
    /// then stops there, partial).
    fn next_arrival(&mut self, workload: usize, now: SimTime) -> Option<SimTime> {
        let model = &self.topology.model;
        let thin_cap = model
            .limits
            .max_events
            .saturating_sub(self.queue.delivered());
        let world = &mut self.world;
        match arrivals::next_after(
            model,
            workload,
            &mut world.workloads[workload].rng,
            now,
            &mut world.thinned_away,
            thin_cap,
        ) {
            arrivals::Next::At(at) => Some(at),
            arrivals::Next::Ended | arrivals::Next::OutOfEvents => None,
        }
    }

    /// A closed-loop user's next request, unless the workload has ended.
    fn schedule_user(&mut self, workload: usize, user: u32, at: SimTime) {
        let w = &self.topology.model.workloads[workload];
        let count_left = w
            .max_requests
            .is_none_or(|max| self.world.workloads[workload].generated < max);
        let in_time = w.duration.is_none_or(|d| at < SimTime::ZERO + d);
        if count_left && in_time {
            let workload = workload as u32;
            self.queue.schedule(at, Event::UserWakes { workload, user });
        }
    }

    fn on_user_wakes(&mut self, workload: usize, user: u32) {
        let w = &self.topology.model.workloads[workload];
        // Another user may have sent the last request meanwhile, or a
        // timeline change may have ended the workload sooner.
        let count_left = w
            .max_requests
            .is_none_or(|max| self.world.workloads[workload].generated < max);
        let in_time = w.duration.is_none_or(|d| self.now() < SimTime::ZERO + d);
        if count_left && in_time {
            self.start_request(workload, user);
        }
    }

    /// A workload's logical request starts: its call, with the workload's
    /// own policies.
    fn start_request(&mut self, workload: usize, user: u32) {
        let now = self.now();
        let w = &self.topology.model.workloads[workload];
        let state = &mut self.world.workloads[workload];
        let index = state.generated;
        state.generated += 1;
        let key = state.key.index(index);
        let deadline = w.deadline.map(|d| now + d);
        self.world.roots_in_flight += 1;
        self.measured
            .request_started(workload, self.world.roots_in_flight);
        let class = self.topology.model.workloads[workload].class;
        let owner = Owner::Root {
            arrived: now,
            // The model has at most 65,535 workloads.
            workload: workload as u16,
            user,
        };
        // Numbered modulo 2³² (see `Call::request`).
        let request = (self.measured.requests - 1) as u32;
        let origin = CallOrigin {
            owner,
            request,
            deadline,
            class,
        };
        self.start_call(origin, workload as EdgeId, key, None);
    }

    pub(crate) fn finish_root(
        &mut self,
        arrived: SimTime,
        workload: u16,
        user: u32,
        key: StreamKey,
        outcome: Outcome,
    ) {
        self.world.roots_in_flight -= 1;
        if user != NO_USER {
            // The user reads the answer (or gives up), thinks, and asks again.
            let think = self.topology.model.workloads[usize::from(workload)]
                .think
                .as_ref()
                .expect("a closed loop thinks")
                .sample(&mut key.label("think").rng());
            self.schedule_user(usize::from(workload), user, self.now() + think);
        }
        let now = self.now();
        self.measured
            .request_answered(usize::from(workload), now, now - arrived, outcome);
    }

    /// Sends `event` across the network: one hop's latency, keyed by the
    /// request and the direction. A constant latency rides a FIFO lane; none
    /// at all delivers it at the current instant, after the event in hand.
    pub(crate) fn send_over_network(&mut self, key: StreamKey, direction: u64, event: Event) {
        let delay = self.topology.network_delay(key, direction);
        self.deliver_after(delay, event);
    }

    /// [`Self::deliver_after`] for a message its handler sends as its very
    /// last act ([`Delivery::Last`]). One with no latency is handled at once,
    /// inside that handler, when the run loop would handle it next anyway:
    /// nothing else is due at this instant (no message queued before it, no
    /// handler or call ready to go on) and the run's event limit is not
    /// reached. The order of events, their count and every result are those
    /// of the queued delivery; what is saved is the trip through the queue
    /// and the run loop's dispatch, for the commonest messages of a storm:
    /// a refusal's answer and the retry sent when its backoff ends (6% of
    /// catalog-lite's time, docs/performance.md).
    pub(crate) fn deliver_last(&mut self, delay: SimDuration, event: Event) {
        let next_anyway = delay == SimDuration::ZERO
            && self.at_once
            && self.queue.nothing_due_now()
            && self.world.ready.is_empty()
            && self.world.ready_calls.is_empty()
            && self.events_counted() < self.topology.model.limits.max_events;
        if next_anyway {
            self.queue.count_delivered_at_once();
            self.handle(event);
        } else {
            self.deliver_after(delay, event);
        }
    }

    /// Delivers `event` after a hop of `delay`, drawn from the network.
    pub(crate) fn deliver_after(&mut self, delay: SimDuration, event: Event) {
        if delay == SimDuration::ZERO {
            self.queue.schedule_now(event);
        } else if self.topology.model.network.is_constant() {
            self.queue.schedule_constant(delay, event);
        } else {
            self.queue.schedule_in(delay, event);
        }
    }
}

/// Each service's state at `at`, for the time series: the live world's
/// queues and requests in flight, the policies' open breakers and budget
/// tokens.
fn gauges(
    topology: &Topology<'_>,
    world: &World,
    policies: &PolicyState,
    at: SimTime,
) -> Vec<Gauges> {
    let mut gauges: Vec<Gauges> = world
        .instances
        .iter()
        .map(|instances| {
            let queued: u64 = instances.iter().map(|i| i.queue.len() as u64).sum();
            let busy: u64 = instances.iter().map(|i| u64::from(i.busy)).sum();
            Gauges {
                queue: queued,
                in_flight: queued + busy,
                ..Gauges::default()
            }
        })
        .collect();
    for (edge, callers) in topology.edges.iter().zip(&policies.edges) {
        for state in callers {
            let g = &mut gauges[edge.to];
            if let Some(b) = &state.breaker {
                if b.state(at) == BreakerState::Open {
                    g.breakers_open += 1;
                }
            }
            if let Some(tokens) = state.budget.tokens(at, state.in_flight) {
                *g.budget_tokens.get_or_insert(0.0) += tokens;
            }
        }
    }
    gauges
}

/// Whether an owned timer still stands (see [`Simulator::next_event`]).
#[inline(always)]
fn stands(
    event: &Event,
    attempts: &stormsim_engine::Slab<Attempt>,
    calls: &stormsim_engine::Slab<Call>,
    workloads: &[WorkloadState],
) -> bool {
    match *event {
        Event::Arrival { workload, epoch } => workloads[workload as usize].arrival_epoch == epoch,
        Event::AttemptTimeout(a) => attempts
            .get(a)
            .is_some_and(|a| a.timer == AttemptTimer::Armed),
        Event::BackoffDone(c) => calls.get(c).is_some_and(|c| c.sleeping),
        _ => true,
    }
}
