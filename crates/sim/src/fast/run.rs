//! The fast path's run: one step per attempt, taken in the order attempts
//! are sent.
//!
//! An attempt sent at `s` reaches its callee at `t = s + h` (a constant
//! hop). There its fate is decided whole: refused (by admission, a
//! deadline, or a full queue), or admitted with its start from the FIFO
//! recursion ([`super::fifo`]) and its end one keyed draw later. From that
//! follow, at instants known now, everything the general engine would do
//! with separate events: the answer at `end + h` or the caller's timeout at
//! `s + T`, the refusal's answer at `t + h`, the retry decision there and
//! the next attempt's send after its backoff, pushed back into the order
//! of sends. Every measurement is a sum over instants known at that moment,
//! so each goes straight into the bucket of its instant; the gauges at
//! bucket starts are differences over buckets, and a bucket's zombie peak
//! sorts the zombies' starts and ends inside it when it closes.
//!
//! What a later attempt can change of an earlier one's fate is only the
//! queue it finds, and that is the FIFO's: attempts are taken in the order
//! they reach the callee, the order of their sends.

use super::fifo::{FifoServer, Slot};
use super::sends::{Order, Sends};
use super::steps::Steps;
use crate::arrivals;
use crate::call::BACKOFF;
use crate::measurements::{cores_up, workers_up, Capacity, Measurements};
use crate::metrics::{FailReason, Outcome};
use crate::policy::backoff::{base_delay, next_delay};
use crate::policy::retry::{RetryDecision, RetryRule};
use crate::policy_state::PolicyState;
use crate::report::{self, VariantReport};
use crate::timeseries::{GlobalBucket, OpenLatencies, ServiceBucket, TimeSeries};
use crate::topology::Topology;
use std::collections::VecDeque;
use stormsim_engine::{SimDuration, SimTime, StreamKey, StreamRng};
use stormsim_model::{Arrival, Change, DrawnAt, Jitter, Model, Step};

/// The models in force over a run: the one at time zero and each
/// timeline change's, up to the horizon.
struct Epochs<'m> {
    base: &'m Model,
    changes: &'m [Change],
    /// The epoch of the run's present, and the instants it spans: nearly
    /// every instant asked about is in it.
    current: usize,
    current_from: u64,
    current_until: u64,
}

impl<'m> Epochs<'m> {
    /// Which model is in force at `t`: 0 the base, `i + 1` change `i`.
    /// A change at `t` is in force at `t` (it precedes everything else
    /// due then).
    #[inline]
    fn index_at(&self, t: u64) -> usize {
        if (self.current_from..self.current_until).contains(&t) {
            return self.current;
        }
        self.changes.partition_point(|c| c.at.as_nanos() <= t)
    }

    /// The run's present enters epoch `epoch`.
    fn enter(&mut self, epoch: usize) {
        self.current = epoch;
        self.current_from = match epoch {
            0 => 0,
            i => self.changes[i - 1].at.as_nanos(),
        };
        self.current_until = self
            .changes
            .get(epoch)
            .map_or(u64::MAX, |c| c.at.as_nanos());
    }

    fn model(&self, epoch: usize) -> &'m Model {
        match epoch {
            0 => self.base,
            i => &self.changes[i - 1].model,
        }
    }

    fn at(&self, t: u64) -> &'m Model {
        self.model(self.index_at(t))
    }
}

/// An attempt to send. Where it stands in the order of sends (its
/// instant, when it was scheduled, and its place among those scheduled
/// then: the event queue's order among events due at one instant) is kept
/// beside it, as its [`Order`].
#[derive(Clone, Copy, Debug)]
struct Send {
    workload: u32,
    /// Its number within its call (1: the first try).
    attempt: u32,
    /// The call's stream; attempt `n` draws from `key.index(n)`.
    key: StreamKey,
    /// When its logical request arrived.
    arrived: u64,
    /// The backoff slept before it (decorrelated jitter reads it).
    last_delay: SimDuration,
}

/// One workload's arrivals, drawn as the general engine draws them.
struct WorkloadArrivals {
    rng: StreamRng,
    key: StreamKey,
    generated: u64,
}

/// The run's state and what it measures.
struct FastRun<'m> {
    epochs: Epochs<'m>,
    horizon: u64,
    bucket: u64,
    buckets: usize,
    hop: u64,
    services: usize,
    retry_rules: Vec<Vec<RetryRule>>,
    servers: Vec<FifoServer>,
    arrivals: Vec<WorkloadArrivals>,
    /// Candidate arrivals a load shape drew and thinned away.
    thinned: u64,
    /// Whether those reached the event limit (the general engine would
    /// stop there: the run is left to it).
    out_of_events: bool,
    max_events: u64,
    sends: Sends<Send>,
    seq: u64,
    /// Logical requests in flight: up at each arrival, down at its answer.
    roots: Steps,
    attempts: u64,
    max_in_flight: u64,
    measured: Measurements<'m>,
    /// `rows[b * services + s]`, every bucket up to the horizon.
    rows: Vec<ServiceBucket>,
    global: Vec<GlobalBucket>,
    /// Differences of the gauges at bucket starts: `+1` at the first
    /// bucket start inside an interval, `-1` after the last.
    queue_diff: Vec<i64>,
    in_flight_diff: Vec<i64>,
    busy_ns: Vec<u128>,
    /// Zombies alive: up when a try is over with work still alive below
    /// it, down when that work ends.
    zombies: Steps,
    /// Per-workload latencies of the buckets not closed yet, from
    /// `first_open`.
    open: VecDeque<Vec<OpenLatencies>>,
    first_open: usize,
    /// Where the first open bucket starts.
    first_open_start: u64,
    closed: Vec<crate::timeseries::WorkloadBucket>,
    reported_as: Vec<usize>,
}

/// Runs `model` changed by `changes` on the fast path; `None` if it would
/// come near a limit (the general engine then runs it, and reports where
/// it stopped). The caller has checked the preconditions
/// ([`super::eligibility::refusals`]).
pub(crate) fn run(model: &Model, changes: &[Change], variant: &str) -> Option<VariantReport> {
    let horizon = model.horizon.expect("a fast run has a horizon").as_nanos();
    // The changes a run reaches: those before its horizon.
    let all_changes = changes;
    let reached = changes.partition_point(|c| c.at.as_nanos() < horizon);
    let changes = &changes[..reached];
    let bucket = model.bucket.as_nanos().max(1);
    let buckets = horizon.div_ceil(bucket).max(1) as usize;
    let limits = model.limits;
    if (buckets as u64).saturating_mul(model.series_rows_per_bucket()) > limits.max_series_rows {
        return None;
    }
    let mut run = FastRun::new(model, changes, horizon, bucket, buckets);
    run.go()?;
    // Every attempt costs the general engine at most its arrival, its
    // work's end, its answer, its timer and its backoff, and each request
    // one arrival: a run whose bound stays under the event limit could
    // not have reached it.
    // A load shape's candidates thinned away count against the limit too.
    let bound = run
        .attempts
        .saturating_mul(6)
        .saturating_add(run.measured.requests)
        .saturating_add(changes.len() as u64)
        .saturating_add(run.thinned);
    if bound >= limits.max_events {
        return None;
    }
    Some(run.finish(model, all_changes, reached, variant))
}

impl<'m> FastRun<'m> {
    fn new(
        model: &'m Model,
        changes: &'m [Change],
        horizon: u64,
        bucket: u64,
        buckets: usize,
    ) -> FastRun<'m> {
        let mut epochs = Epochs {
            base: model,
            changes,
            current: 0,
            current_from: 0,
            current_until: 0,
        };
        epochs.enter(0);
        let services = model.services.len();
        let mut servers: Vec<FifoServer> = model
            .services
            .iter()
            .map(|s| FifoServer::new(workers_up(s)))
            .collect();
        // Workers a change adds are free from its instant on.
        let mut before: Vec<Option<u64>> = model.services.iter().map(|s| workers_up(s)).collect();
        for change in changes {
            for (s, spec) in change.model.services.iter().enumerate() {
                let now = workers_up(spec);
                if let (Some(was), Some(now)) = (before[s], now) {
                    if now > was {
                        servers[s].add_workers(now - was, change.at.as_nanos());
                    }
                }
                before[s] = now;
            }
        }
        let retry_rules = (0..=changes.len())
            .map(|e| {
                epochs
                    .model(e)
                    .workloads
                    .iter()
                    .map(|w| RetryRule::of(&w.edge.retry))
                    .collect()
            })
            .collect();
        let root = StreamKey::root(model.seed);
        let arrivals = model
            .workload_ids
            .iter()
            .map(|w| {
                let key = root.label("workload").label(&w.name);
                WorkloadArrivals {
                    rng: key.label("arrivals").rng(),
                    key,
                    generated: 0,
                }
            })
            .collect();
        let edges = model.workloads.len();
        let mut measured = Measurements::new(model, edges, &[]);
        measured.ended = SimTime(horizon);
        let workloads = model.reported_workloads.len();
        FastRun {
            epochs,
            horizon,
            bucket,
            buckets,
            hop: model.network.constant().map_or(0, |d| d.as_nanos()),
            services,
            retry_rules,
            servers,
            arrivals,
            thinned: 0,
            out_of_events: false,
            max_events: model.limits.max_events,
            sends: Sends::new(model.workloads.len()),
            seq: 0,
            roots: Steps::new(buckets),
            attempts: 0,
            max_in_flight: model.limits.max_in_flight,
            measured,
            rows: vec![ServiceBucket::default(); buckets * services],
            global: vec![GlobalBucket::default(); buckets],
            queue_diff: vec![0; (buckets + 1) * services],
            in_flight_diff: vec![0; (buckets + 1) * services],
            busy_ns: vec![0; buckets * services],
            zombies: Steps::new(buckets),
            open: VecDeque::from([vec![OpenLatencies::default(); workloads]]),
            first_open: 0,
            first_open_start: 0,
            closed: Vec::with_capacity(buckets * workloads),
            reported_as: model
                .workload_ids
                .iter()
                .map(|w| usize::from(w.reported_as))
                .collect(),
        }
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// The bucket holding `t`. Nearly every instant measured is in the
    /// first open bucket or the next: two comparisons instead of a 64-bit
    /// division, which would cost more than the rest of a counter's update.
    #[inline]
    fn bucket_of(&self, t: u64) -> usize {
        let from = self.first_open_start;
        if t >= from {
            let past = t - from;
            if past < self.bucket {
                return self.first_open;
            }
            if past < 2 * self.bucket {
                return self.first_open + 1;
            }
        }
        (t / self.bucket) as usize
    }

    /// The run, to its horizon; `None` at the in-flight limit.
    fn go(&mut self) -> Option<()> {
        // Time zero: each workload's first arrival, before any change,
        // even one at time zero.
        for w in 0..self.arrivals.len() {
            let first = match self.epochs.base.workloads[w].arrival {
                Arrival::Constant { .. } => Some(0),
                _ => self.next_arrival(w, 0, 0),
            };
            if let Some(first) = first {
                self.schedule_arrival(w, first, 0, 0);
            }
        }
        let mut next_change = 0;
        loop {
            if self.out_of_events {
                return None;
            }
            let next = self.sends.peek();
            let send_at = next.map_or(u64::MAX, |(order, _)| order.0);
            // A change precedes everything due at its instant.
            if let Some(change) = self.epochs.changes.get(next_change) {
                let at = change.at.as_nanos();
                if at <= send_at {
                    self.apply_change(next_change, at);
                    next_change += 1;
                    continue;
                }
            }
            let Some((order, arrival)) = next.filter(|_| send_at < self.horizon) else {
                break;
            };
            self.close_buckets_before(order.0)?;
            let send = match arrival {
                Some(w) => {
                    self.sends.pop();
                    self.root_arrives(w, order.0)
                }
                None => self.sends.pop(),
            };
            self.attempt(order, send);
        }
        while self.first_open < self.buckets {
            self.close_bucket()?;
        }
        Some(())
    }

    /// Schedules workload `w`'s next arrival at `at`, if it has requests
    /// and time left (as the model in force at `now` says).
    fn schedule_arrival(&mut self, w: usize, at: u64, now: u64, epoch: usize) {
        let spec = &self.epochs.model(epoch).workloads[w];
        let count_left = spec
            .max_requests
            .is_none_or(|max| self.arrivals[w].generated < max);
        let in_time = spec.duration.is_none_or(|d| at < d.as_nanos());
        let next = (count_left && in_time).then(|| {
            let order = (at, now, self.next_seq());
            let placeholder = Send {
                workload: w as u32,
                attempt: 1,
                key: StreamKey(0),
                arrived: at,
                last_delay: SimDuration::ZERO,
            };
            (order, placeholder)
        });
        self.sends.set_arrival(w, next);
    }

    /// Workload `w`'s next arrival after one at `now`, as the model of
    /// `epoch` says ([`arrivals::next_after`]); `None` if there is none.
    fn next_arrival(&mut self, w: usize, now: u64, epoch: usize) -> Option<u64> {
        let next = arrivals::next_after(
            self.epochs.model(epoch),
            w,
            &mut self.arrivals[w].rng,
            SimTime(now),
            &mut self.thinned,
            self.max_events,
        );
        match next {
            arrivals::Next::At(at) => Some(at.as_nanos()),
            arrivals::Next::Ended => None,
            arrivals::Next::OutOfEvents => {
                self.out_of_events = true;
                None
            }
        }
    }

    /// The timeline's change `index` applies at `at`: a workload whose
    /// arrivals changed draws its next one from here.
    fn apply_change(&mut self, index: usize, at: u64) {
        self.epochs.enter(index + 1);
        let before = self.epochs.model(index);
        let after = self.epochs.model(index + 1);
        for (w, (old, new)) in before.workloads.iter().zip(&after.workloads).enumerate() {
            if !arrivals::changed(old, new) {
                continue;
            }
            self.sends.set_arrival(w, None);
            if let Some(next) = self.next_arrival(w, at, index + 1) {
                self.schedule_arrival(w, next, at, index + 1);
            }
        }
    }

    /// Workload `w`'s request arrives at `a`: its next is drawn, and its
    /// first attempt goes.
    fn root_arrives(&mut self, w: usize, a: u64) -> Send {
        let epoch = self.epochs.index_at(a);
        let next = self.next_arrival(w, a, epoch);
        let index = self.arrivals[w].generated;
        self.arrivals[w].generated += 1;
        let key = self.arrivals[w].key.index(index);
        let b = self.bucket_of(a);
        self.roots.rise(b, a);
        let m = &mut self.measured;
        m.requests += 1;
        let reported = self.reported_as[w];
        m.per_workload[reported].requests += 1;
        self.global[b].requests += 1;
        self.open_latencies(b)[reported].requests += 1;
        match next {
            Some(next) => self.schedule_arrival(w, next, a, epoch),
            None => self.sends.set_arrival(w, None),
        }
        Send {
            workload: w as u32,
            attempt: 1,
            key,
            arrived: a,
            last_delay: SimDuration::ZERO,
        }
    }

    /// The per-workload latencies of open bucket `b`.
    fn open_latencies(&mut self, b: usize) -> &mut Vec<OpenLatencies> {
        let i = b - self.first_open;
        let workloads = self.reported_as_len();
        while self.open.len() <= i {
            self.open
                .push_back(vec![OpenLatencies::default(); workloads]);
        }
        &mut self.open[i]
    }

    fn reported_as_len(&self) -> usize {
        self.measured.per_workload.len()
    }

    /// Closes every bucket that ends at or before `t`: nothing measured
    /// from here on falls in them.
    /// `None` if the requests in flight passed `limits.max_in_flight`.
    fn close_buckets_before(&mut self, t: u64) -> Option<()> {
        let upto = self.bucket_of(t).min(self.buckets);
        while self.first_open < upto {
            self.close_bucket()?;
        }
        Some(())
    }

    fn close_bucket(&mut self) -> Option<()> {
        let b = self.first_open;
        let workloads = self.reported_as_len();
        let mut latencies = self
            .open
            .pop_front()
            .unwrap_or_else(|| vec![OpenLatencies::default(); workloads]);
        for l in &mut latencies {
            self.closed.push(l.close());
        }
        let (_, peak) = self.zombies.close(b);
        self.global[b].zombies = peak;
        let (_, in_flight) = self.roots.close(b);
        self.measured.peak_in_flight = self.measured.peak_in_flight.max(in_flight);
        if in_flight > self.max_in_flight {
            return None;
        }
        self.first_open += 1;
        self.first_open_start += self.bucket;
        Some(())
    }

    /// One attempt, sent at `order.0`: its whole fate.
    fn attempt(&mut self, order: Order, send: Send) {
        let (s, scheduled) = (order.0, order.1);
        let w = send.workload as usize;
        self.attempts += 1;
        let m_s = self.epochs.at(s);
        let edge = &m_s.workloads[w].edge;
        let mut timeout = edge.attempt_timeout;
        if send.attempt == 1 && edge.deadline.first_attempt_cap < timeout {
            timeout = edge.deadline.first_attempt_cap;
        }
        let budget = (edge.deadline.propagate && !timeout.is_infinite())
            .then(|| timeout.saturating_sub(edge.deadline.margin));
        let expires = if timeout.is_infinite() {
            u64::MAX
        } else {
            s.saturating_add(timeout.as_nanos())
        };
        let class = m_s.workloads[w].class;
        self.measured.edges[w].attempts += 1;
        let key = send.key.index(u64::from(send.attempt));
        let t = s + self.hop;
        if t >= self.horizon {
            return;
        }
        let m_t = self.epochs.at(t);
        let c = m_t.workloads[w].target;
        let spec = &m_t.services[c];
        self.measured.services[c].calls += 1;
        let row = self.row(t, c);
        if send.attempt > 1 {
            row.offered_retry += 1;
        } else {
            row.offered_first += 1;
        }
        let fate = Fate {
            send,
            expires,
            service: c,
        };
        let admission = &spec.admission;
        if admission.drop_fraction > 0.0
            && key.label("admission").rng().unit() < admission.drop_fraction
        {
            self.count_shed(c, class, t);
            self.refused(fate, t, FailReason::Rejected, admission.retry_after);
            return;
        }
        let deadline = match budget {
            Some(b) => Some(t + b.as_nanos()),
            None => spec.default_deadline.map(|d| t + d.as_nanos()),
        };
        let margin = admission.drop_expired_margin.map(|m| m.as_nanos());
        if let Some(margin) = margin {
            if deadline.is_some_and(|d| t + margin >= d) {
                self.measured.services[c].expired += 1;
                self.count_shed(c, class, t);
                self.refused(fate, t, FailReason::DeadlineExceeded, None);
                return;
            }
        }
        // Where the arrival stands among events due at its instant: it was
        // scheduled when sent, or, over a network with no latency, it is
        // handled as its send is, which was scheduled before.
        let arrival_scheduled = if self.hop == 0 { scheduled } else { s };
        let waiting = self.servers[c].waiting_at(t, arrival_scheduled);
        let slot = self.servers[c].slot_for(t, arrival_scheduled);
        if slot.waits && waiting >= spec.queue_capacity {
            self.measured.services[c].rejected += 1;
            self.row(t, c).rejected += 1;
            self.refused(fate, t, FailReason::Rejected, admission.retry_after);
            return;
        }
        if slot.waits {
            self.row(t, c).queued += 1;
            let counters = &mut self.measured.services[c];
            counters.max_queue = counters.max_queue.max(waiting as u64 + 1);
        } else {
            self.row(t, c).started += 1;
        }
        let start = slot.start;
        if slot.waits {
            self.gauge_interval(c, t, start, true);
        }
        // Dropped when a worker is free for it: too near its deadline.
        if let (true, Some(margin), Some(d)) = (slot.waits, margin, deadline) {
            if start + margin >= d {
                self.dropped_at_dequeue(fate, slot, t, class);
                return;
            }
        }
        let drawn_from = match spec.steps.first() {
            Some(Step::Work { drawn_at, .. }) if *drawn_at == DrawnAt::Admission => m_t,
            _ => self.epochs.at(start),
        };
        let Some(Step::Work { dist, .. }) = drawn_from.services[c].steps.first() else {
            unreachable!("a fast service is one work step")
        };
        let duration = dist.sample(&mut key.index(0).rng()).as_nanos();
        let end = start.saturating_add(duration);
        self.servers[c].occupy(slot, end);
        let mut waited_us = 0;
        if slot.waits && start < self.horizon {
            let wait = start - t;
            waited_us = u32::try_from(wait / 1000).unwrap_or(u32::MAX);
            let row = self.row(start, c);
            row.started += 1;
            row.wait_ns += u128::from(wait);
        }
        if deadline.is_some_and(|d| start >= d) && start < self.horizon {
            self.measured.services[c].started_late += 1;
        }
        self.busy(c, start, end);
        self.gauge_interval(c, t, end, false);
        if end < self.horizon {
            self.measured.services[c].completed += 1;
            let wasted = expires <= end;
            let row = self.row(end, c);
            row.completed += 1;
            row.service_ns += u128::from((end - t).saturating_sub(u64::from(waited_us) * 1000));
            if wasted {
                row.wasted += 1;
                self.measured.services[c].wasted += 1;
            }
        }
        let answer = end.saturating_add(self.hop);
        if answer < expires {
            self.answered(fate.send, answer, Outcome::Ok);
        } else {
            self.timed_out(fate, Some(end));
        }
    }

    /// The service's row of the bucket holding `t` (before the horizon).
    fn row(&mut self, t: u64, service: usize) -> &mut ServiceBucket {
        let b = self.bucket_of(t);
        &mut self.rows[b * self.services + service]
    }

    /// A request counts in a gauge at each bucket start in `(from, to]`:
    /// there from before that instant, not gone before it.
    fn gauge_interval(&mut self, service: usize, from: u64, to: u64, queue: bool) {
        let first = self.bucket_of(from) + 1;
        let after = (self.bucket_of(to) + 1).min(self.buckets);
        if first > after || first >= self.buckets {
            return;
        }
        let diff = if queue {
            &mut self.queue_diff
        } else {
            &mut self.in_flight_diff
        };
        diff[first * self.services + service] += 1;
        diff[after * self.services + service] -= 1;
    }

    /// A worker of `service` is busy over `[start, end)`, within the run.
    fn busy(&mut self, service: usize, start: u64, end: u64) {
        let end = end.min(self.horizon);
        let mut from = start;
        while from < end {
            let b = self.bucket_of(from);
            let until = ((b as u64 + 1) * self.bucket).min(end);
            self.busy_ns[b * self.services + service] += u128::from(until - from);
            from = until;
        }
    }

    fn count_shed(&mut self, service: usize, class: Option<u8>, t: u64) {
        let counters = &mut self.measured.services[service];
        counters.shed += 1;
        let slot = class.map_or(counters.shed_by_class.len() - 1, usize::from);
        counters.shed_by_class[slot] += 1;
        self.row(t, service).shed += 1;
    }

    /// Refused at `t` with `reason`: the answer reaches the caller a hop
    /// later, before its timer (a precondition).
    fn refused(
        &mut self,
        fate: Fate,
        t: u64,
        reason: FailReason,
        retry_after: Option<SimDuration>,
    ) {
        let at = t + self.hop;
        if at >= self.horizon {
            return;
        }
        self.measured.zombies.abandoned += 1;
        self.after_failure(fate, at, reason, retry_after, 0);
    }

    /// Waited in the line until a worker was free at `slot.start`, and was
    /// dropped there (its deadline too near).
    fn dropped_at_dequeue(&mut self, fate: Fate, slot: Slot, t: u64, class: Option<u8>) {
        let c = fate.service;
        let start = slot.start;
        self.servers[c].leave_line(slot);
        self.gauge_interval(c, t, start, false);
        if start < self.horizon {
            self.measured.services[c].expired += 1;
            self.count_shed(c, class, start);
        }
        // The caller's timer (armed on arrival) against the dequeue (its
        // worker's end, scheduled when that work started).
        let caller_left_first = fate.expires < start
            || (fate.expires == start && !super::fifo::comes_before(slot.freed_by, t));
        if caller_left_first {
            // Its caller left first: no answer, a zombie while it waited.
            self.timed_out(fate, Some(start));
            return;
        }
        let answer = start + self.hop;
        if answer < fate.expires {
            if answer < self.horizon {
                self.measured.zombies.abandoned += 1;
                self.after_failure(fate, answer, FailReason::DeadlineExceeded, None, 2);
            }
        } else {
            self.timed_out(fate, None);
        }
    }

    /// The caller's timer fired at `fate.expires` with the attempt's work
    /// still alive until `alive_until` (a zombie from then), if it is.
    fn timed_out(&mut self, fate: Fate, alive_until: Option<u64>) {
        let at = fate.expires;
        if at >= self.horizon {
            return;
        }
        let w = fate.send.workload as usize;
        self.measured.edges[w].timeouts += 1;
        self.measured.zombies.abandoned += 1;
        if let Some(until) = alive_until.filter(|&u| u >= at) {
            self.measured.zombies.started += 1;
            let b = self.bucket_of(at);
            self.zombies.rise(b, at);
            if until < self.horizon {
                self.measured.zombies.ended += 1;
                let b = self.bucket_of(until);
                self.zombies.fall(b, until);
            }
        }
        self.after_failure(fate, at, FailReason::Timeout, None, 1);
    }

    /// The retry layer, at `at` after a failure: give up and answer, or
    /// sleep and send the next attempt.
    fn after_failure(
        &mut self,
        fate: Fate,
        at: u64,
        reason: FailReason,
        retry_after: Option<SimDuration>,
        cause: usize,
    ) {
        let send = fate.send;
        let w = send.workload as usize;
        let epoch = self.epochs.index_at(at);
        if self.retry_rules[epoch][w].decide(send.attempt, reason) == RetryDecision::GiveUp {
            self.answered(send, at, Outcome::Failed(reason));
            return;
        }
        let policy = &self.epochs.model(epoch).workloads[w].edge;
        self.measured.services[policy.to].retries += 1;
        self.measured.edges[w].retries += 1;
        let delay = if policy.retry.jitter == Jitter::None {
            base_delay(&policy.retry.backoff, send.attempt)
        } else {
            let mut rng = send.key.index(BACKOFF).index(u64::from(send.attempt)).rng();
            next_delay(&policy.retry, send.attempt, send.last_delay, &mut rng)
        };
        let delay = retry_after.unwrap_or(delay);
        let order = (at.saturating_add(delay.as_nanos()), at, self.next_seq());
        let next = Send {
            attempt: send.attempt + 1,
            last_delay: delay,
            ..send
        };
        self.sends.push_retry(cause, next.attempt, order, next);
    }

    /// The logical request of `send` is answered at `at` with `outcome`.
    fn answered(&mut self, send: Send, at: u64, outcome: Outcome) {
        if at >= self.horizon {
            return;
        }
        let b = self.bucket_of(at);
        self.roots.fall(b, at);
        let latency = SimDuration(at - send.arrived);
        let reported = self.reported_as[send.workload as usize];
        let m = &mut self.measured;
        m.last_answer = m.last_answer.max(SimTime(at));
        let per_workload = &mut m.per_workload[reported];
        let g = &mut self.global[b];
        g.latency_sum_ns += u128::from(latency.as_nanos());
        match outcome {
            Outcome::Failed(reason) => {
                per_workload.failed_latency.record(latency);
                m.failures.add(reason);
                g.failures.add(reason);
            }
            _ => {
                per_workload.succeeded += 1;
                per_workload.ok_latency.record(latency);
                m.succeeded += 1;
                g.succeeded += 1;
            }
        }
        let open = &mut self.open_latencies(b)[reported];
        open.record(latency);
        open.succeeded += u64::from(outcome.is_success());
    }

    /// The run's measurements, whole, and its report.
    /// `changes`: the whole timeline, of which the first `reached` came
    /// before the horizon (the report reads the rest: a trigger that would
    /// have ended later).
    fn finish(
        mut self,
        model: &'m Model,
        changes: &'m [Change],
        reached: usize,
        variant: &str,
    ) -> VariantReport {
        let (horizon, services) = (self.horizon, self.services);
        // Capacity over each bucket, the timeline's changes applied in turn.
        let mut capacity: Vec<Capacity> = model
            .services
            .iter()
            .map(|s| Capacity::new(workers_up(s), cores_up(s)))
            .collect();
        let mut pending = changes[..reached].iter().peekable();
        let (mut queue, mut in_flight) = (vec![0i64; services], vec![0i64; services]);
        for b in 0..self.buckets {
            let end = ((b as u64 + 1) * self.bucket).min(horizon);
            for s in 0..services {
                queue[s] += self.queue_diff[b * services + s];
                in_flight[s] += self.in_flight_diff[b * services + s];
                let row = &mut self.rows[b * services + s];
                row.queue = queue[s] as u64;
                row.in_flight = in_flight[s] as u64;
                row.busy_ns = self.busy_ns[b * services + s];
            }
            while let Some(change) = pending.next_if(|c| c.at.as_nanos() < end) {
                for (cap, spec) in capacity.iter_mut().zip(&change.model.services) {
                    cap.set(change.at, workers_up(spec), cores_up(spec));
                }
            }
            for (s, cap) in capacity.iter_mut().enumerate() {
                let closed = cap.close_bucket(SimTime(end));
                self.rows[b * services + s].worker_ns =
                    closed.worker_ns.unwrap_or(ServiceBucket::UNBOUNDED);
            }
        }
        let z = &mut self.measured.zombies;
        z.alive = self.zombies.alive();
        z.peak = self.global.iter().map(|g| g.zombies).max().unwrap_or(0);
        self.measured.last_answer = self.measured.last_answer.min(SimTime(horizon));
        self.measured.series = TimeSeries::from_rows(
            model.bucket,
            services,
            std::mem::take(&mut self.global),
            std::mem::take(&mut self.rows),
            std::mem::take(&mut self.closed),
            SimTime(horizon),
        );
        let mut topology = Topology::new(model, changes);
        for i in 0..reached {
            topology.apply(i);
        }
        let policies = PolicyState::new(&topology);
        let events = self.attempts + reached as u64;
        let mut report =
            report::variant_report(&topology, &policies, &self.measured, events, variant, None);
        report.events_by_kind = vec![
            (super::ATTEMPTS_RESOLVED, self.attempts),
            ("timeline change", reached as u64),
        ];
        report.events_by_kind.retain(|(_, n)| *n > 0);
        report
    }
}

/// What an attempt's fate needs from its send.
#[derive(Clone, Copy)]
struct Fate {
    send: Send,
    /// When its caller's timer fires (`u64::MAX`: never).
    expires: u64,
    service: usize,
}
