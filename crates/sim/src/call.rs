//! The call state machine: the one place where a call edge's policy layers are
//! composed, in the documented order, outside in:
//!
//! ```text
//! deadline          plan each attempt: cap, budget sent down, too late to try?
//!  └ bulkhead       a slot for the whole call (fail fast, or wait within the deadline)
//!     └ retry loop  after a failure: whitelist, max attempts, budget, backoff +
//!        │          jitter, or the callee's Retry-After
//!        └ breaker  asked once per attempt; open = fail fast, never retried
//!           └ throttle      adaptive client-side throttling (SRE / Envoy)
//!              └ rate limit the caller's own limiter (may delay the attempt)
//!                 └ timeout   a timer per attempt
//!                    └ network → the callee
//! ```
//!
//! Giving up on an attempt (timeout, or the call is cancelled) always tells the
//! callee: the connection closes. Whether the callee stops depends on what it is
//! doing ([`crate::service`]).

use crate::attempts::{AttemptOutcomeKind, AttemptRecord};
use crate::metrics::{FailReason, Outcome};
use crate::policy::backoff::{base_delay, next_delay};
use crate::policy::balancer::LoadBalancer;
use crate::policy::breaker::CallOutcome;
use crate::policy::budget::AttemptOutcome;
use crate::policy::deadline::{plan_attempt, AttemptPlan};
use crate::policy::hedge::{after_copy, after_unsent_hedge, AfterCopy};
use crate::policy::rate_limit::RateDecision;
use crate::policy::retry::{is_retryable, outcome_of, RetryDecision};
use crate::simulator::{Delivery, Event, Simulator, NET_DOWN};
use crate::topology::Topology;
use crate::world::*;
use crate::zombie::NO_ROOT;
use stormsim_engine::{SimDuration, SimTime, Slab, StreamKey, TimerHandle};
use stormsim_model::{Backoff, CallPolicy, HedgeTarget, Jitter, Model, Service};

/// Retries without backoff sent from inside the handling of the previous
/// attempt's failure, one within another, before the next is queued instead
/// (see `after_attempt`): a loop of local refusals with 10⁷ attempts
/// overflowed the stack.
const MAX_RETRIES_IN_PLACE: u32 = 32;

/// Salt of the backoff jitter draws of a call.
pub(crate) const BACKOFF: u64 = u64::MAX - 3;
/// Salt of an adaptive throttle's draw for an attempt.
const THROTTLE: u64 = u64::MAX - 4;
/// Salt of a balancer's draw for an attempt.
const BALANCE: u64 = u64::MAX - 5;
/// Salt of a hedge's own stream.
const HEDGE: u64 = u64::MAX - 6;

/// Where a hedge may go: not to a replica this call already has an attempt
/// on, and, with `other_zone`, to a zone none of them is in when such a replica
/// is eligible. `eligible[i]` is instance `first + i`'s.
fn exclude_for_hedge(
    callee: &Service,
    model: &Model,
    policy: &CallPolicy,
    tried: &[u32],
    first: usize,
    eligible: &mut [bool],
) {
    for &i in tried {
        // An attempt may be on an instance a timeline has since removed.
        if let Some(e) = (i as usize)
            .checked_sub(first)
            .and_then(|i| eligible.get_mut(i))
        {
            *e = false;
        }
    }
    let other_zone = policy
        .hedge
        .is_some_and(|h| h.target == HedgeTarget::OtherZone);
    let (true, Some(hosts), Some(host_of)) = (other_zone, model.hosts, &callee.host_of) else {
        return;
    };
    let zone = |i: usize| crate::hosts::host_of_instance(host_of, i as u32) as u32 / hosts.per_zone;
    let tried_zones: Vec<u32> = tried.iter().map(|&i| zone(i as usize)).collect();
    let elsewhere: Vec<bool> = eligible
        .iter()
        .enumerate()
        .map(|(i, &e)| e && !tried_zones.contains(&zone(first + i)))
        .collect();
    if elsewhere.contains(&true) {
        eligible.copy_from_slice(&elsewhere);
    }
}

/// [`Simulator::deadline_as_seen`], from the parts of the simulator it reads
/// (so that a handler holding a call may ask it).
fn stale_deadline(
    topology: &Topology<'_>,
    tasks: &Slab<Task>,
    owner: Owner,
    edge: EdgeId,
    now: SimTime,
) -> Option<SimTime> {
    match owner {
        Owner::Task(task) if !topology.edges[edge as usize].deadline.subtract_elapsed => {
            let task = &tasks[task];
            task.deadline()
                .map(|d| now + d.saturating_since(task.arrived))
        }
        _ => None,
    }
}

impl Simulator<'_> {
    /// Starts a call on `edge` for `owner` and sends its first attempt.
    pub(crate) fn start_call(
        &mut self,
        origin: CallOrigin,
        edge: EdgeId,
        key: StreamKey,
        shard: Option<u32>,
    ) -> CallId {
        let CallOrigin {
            owner,
            request,
            deadline,
            class,
        } = origin;
        // Each caller instance keeps its own policy state, as each instance of a
        // client library does.
        let (caller, root) = match owner {
            Owner::Task(task) => {
                let task = &self.world.tasks[task];
                (task.instance, task.root)
            }
            Owner::FanOut(fan) => {
                let task = &self.world.tasks[self.world.fan_outs[fan].task];
                (task.instance, task.root)
            }
            // A cache load serves whoever asks for the key, no one request.
            Owner::CacheLoad(load) => (self.world.cache_loads[load].caller, NO_ROOT),
            // A workload's request opens a root per attempt.
            Owner::Root { .. } => (0, NO_ROOT),
        };
        let policy = &self.topology.edges[edge as usize];
        let bulkhead = policy.bulkhead.clone();
        let hedging = policy.hedge.map(|policy| {
            Box::new(Hedging {
                policy,
                others: Vec::new(),
                used: Vec::new(),
                timer: None,
                sent: 0,
                try_sent: SimTime::ZERO,
            })
        });
        let call = self.world.calls.insert(Call {
            owner,
            request,
            shard: shard.unwrap_or(NO_SHARD),
            root,
            hedging,
            caller,
            edge,
            key,
            deadline: deadline.unwrap_or(SimTime::NEVER),
            attempts: 0,
            current: None,
            sleeping: false,
            holds_retry: false,
            last_delay: SimDuration::ZERO,
            bulkhead: BulkheadHold::None,
            class,
        });
        let Some(bulkhead) = bulkhead else {
            self.send_attempt(call, Delivery::Queued);
            return call;
        };
        // Bulkhead layer (resilience4j semantics): a slot for the whole call.
        let now = self.now();
        let state = &mut self.policies.edges[edge as usize][caller as usize];
        if state.bulkhead_in_use < bulkhead.max_concurrent_calls {
            state.bulkhead_in_use += 1;
            self.world.calls[call].bulkhead = BulkheadHold::Holding;
            self.send_attempt(call, Delivery::Queued);
            return call;
        }
        let give_up = (now + SimDuration::from_ms(bulkhead.max_wait_ms))
            .min(deadline.unwrap_or(SimTime::NEVER));
        if give_up > now {
            state.bulkhead_waiters.push_back(call);
            let timer = self
                .queue
                .schedule_timer(give_up, Event::BulkheadTimeout(call));
            self.world.calls[call].bulkhead = BulkheadHold::Waiting(timer);
        } else {
            let to = self.topology.edges[edge as usize].to;
            self.measured.services[to].bulkhead_full += 1;
            self.measured.edges[edge as usize].bulkhead_full += 1;
            self.finish_call(call, Outcome::Failed(FailReason::BulkheadFull));
        }
        call
    }

    /// A call waited for a bulkhead slot as long as it could.
    pub(crate) fn on_bulkhead_timeout(&mut self, call_id: CallId) {
        let Some(call) = self.world.calls.get_mut(call_id) else {
            return;
        };
        if !matches!(call.bulkhead, BulkheadHold::Waiting(_)) {
            return;
        }
        call.bulkhead = BulkheadHold::None;
        let to = self.topology.edges[call.edge as usize].to;
        self.measured.services[to].bulkhead_full += 1;
        self.measured.edges[call.edge as usize].bulkhead_full += 1;
        self.finish_call(call_id, Outcome::Failed(FailReason::BulkheadFull));
    }

    /// The call leaves its bulkhead: its slot goes to the longest waiter, which
    /// is sent from the run loop.
    fn leave_bulkhead(&mut self, edge: EdgeId, caller: u32, hold: BulkheadHold) {
        match hold {
            BulkheadHold::None => {}
            BulkheadHold::Waiting(timer) => self.queue.cancel(timer),
            BulkheadHold::Holding => {
                let state = &mut self.policies.edges[edge as usize][caller as usize];
                state.bulkhead_in_use -= 1;
                while let Some(next) = state.bulkhead_waiters.pop_front() {
                    let Some(call) = self.world.calls.get_mut(next) else {
                        continue;
                    };
                    let BulkheadHold::Waiting(timer) = call.bulkhead else {
                        continue;
                    };
                    self.queue.cancel(timer);
                    call.bulkhead = BulkheadHold::Holding;
                    state.bulkhead_in_use += 1;
                    self.world.ready_calls.push_back(next);
                    break;
                }
            }
        }
    }

    /// The call's next try: its first attempt, or a retry. Its own copy of
    /// [`Self::launch_attempt`] for hedge 0 (the one every attempt but a
    /// hedge takes), without the hedges' work and checks. `delivery`: where
    /// the caller sends it (an attempt sent as the handler's last act may
    /// reach a callee with no latency at once).
    #[inline(never)]
    pub(crate) fn send_attempt(&mut self, call_id: CallId, delivery: Delivery) {
        self.launch_attempt(call_id, 0, delivery);
    }

    /// Deadline layer, then the breaker, then the per-attempt timeout and the
    /// network, for the call's next try (`hedge` 0) or the `hedge`-th hedge of
    /// its current one. A hedge that cannot go (no time left, breaker open, no
    /// other replica, a local refusal) is simply not sent: the try's copies in
    /// flight go on, and the retry loop is not involved (the caller, told by
    /// the `false` this returns, fails the try if none is left). Returns
    /// whether the attempt was sent.
    ///
    /// Inlined into its two callers, [`Self::send_attempt`] and
    /// [`Self::send_hedge`], so that a try's copy is compiled with `hedge` 0.
    #[inline(always)]
    fn launch_attempt(&mut self, call_id: CallId, hedge: u32, delivery: Delivery) -> bool {
        let now = self.now();
        // The replicas this try has sent a copy to: a hedge goes elsewhere.
        let tried: Vec<u32> = if hedge == 0 {
            Vec::new()
        } else if let Some(h) = self.world.calls[call_id].hedging.as_ref() {
            h.used.clone()
        } else {
            self.attempts_in_flight(call_id)
                .filter_map(|a| self.world.attempts.get(a).map(|a| a.instance))
                .collect()
        };
        // The call, looked up once and held to the end: the layers below
        // touch only other parts of the simulator.
        let call = &mut self.world.calls[call_id];
        if hedge == 0 {
            call.attempts += 1;
            call.sleeping = false;
            if let Some(h) = call.hedging.as_mut() {
                h.sent = 0;
                h.try_sent = now;
                h.used.clear();
            }
        }
        let is_retry = hedge == 0 && std::mem::take(&mut call.holds_retry);
        // A granted retry gives its budget slot back if it is not sent after
        // all; a hedge is charged further down, once nothing local refuses it.
        let mut holds_budget_slot = is_retry;
        let (attempt_no, key, edge, caller) = (call.attempts, call.key, call.edge, call.caller);
        let attempt_key = if hedge == 0 {
            key.index(u64::from(attempt_no))
        } else {
            // A hedge is another request: its own draws at its own replica.
            key.index(u64::from(attempt_no))
                .index(HEDGE)
                .index(u64::from(hedge))
        };
        let deadline = stale_deadline(&self.topology, &self.world.tasks, call.owner, edge, now)
            .or((call.deadline != SimTime::NEVER).then_some(call.deadline));
        let policy = &self.topology.edges[edge as usize];
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
            if holds_budget_slot {
                self.policies.edges[edge as usize][caller as usize]
                    .budget
                    .on_retry_finished();
            }
            if hedge > 0 {
                return false;
            }
            self.finish_call(call_id, Outcome::Failed(FailReason::DeadlineExceeded));
            return false;
        };
        let state = &mut self.policies.edges[edge as usize][caller as usize];
        let permit = match state.breaker.as_mut().map(|b| b.try_acquire(now)) {
            None => None,
            Some(Ok(permit)) => Some(permit),
            Some(Err(_open)) => {
                if holds_budget_slot {
                    state.budget.on_retry_finished();
                }
                self.measured.services[to].breaker_rejected += 1;
                self.measured.edges[edge as usize].breaker_rejected += 1;
                if hedge == 0 {
                    self.after_attempt(call_id, Outcome::Failed(FailReason::BreakerOpen), None);
                }
                return false;
            }
        };
        // Local refusals after the breaker: its permit goes back unused.
        let mut local_refusal = None;
        if let Some(throttle) = state.throttle.as_mut() {
            let mut rng = attempt_key.index(THROTTLE).rng();
            if throttle.should_reject(now, &mut rng) {
                self.measured.services[to].throttled += 1;
                self.measured.edges[edge as usize].throttled += 1;
                local_refusal = Some((FailReason::Throttled, None));
            }
        }
        // The balancer picks the callee's instance among those this caller has
        // not ejected; none left is Envoy's "no healthy upstream" (503).
        let callee = &self.topology.model.services[to];
        let instances = callee.instances as usize;
        let mut instance = 0;
        if (instances > 1 || hedge > 0) && local_refusal.is_none() {
            // A fan-out's child goes to a replica of its shard, through that
            // shard's balancer.
            let (range, balancer) = match (call.shard, callee.shards > 1) {
                (shard, true) if shard != NO_SHARD => {
                    let replicas = callee.replicas() as usize;
                    let kind = state.balancer.kind();
                    if state.shard_balancers.len() < callee.shards as usize {
                        state
                            .shard_balancers
                            .resize_with(callee.shards as usize, || LoadBalancer::new(kind));
                    }
                    let first = shard as usize * replicas;
                    (
                        first..first + replicas,
                        &mut state.shard_balancers[shard as usize],
                    )
                }
                _ => (0..instances, &mut state.balancer),
            };
            // The candidates: the range's instances only (a fan-out's child
            // costs its shard's replicas, not every shard's).
            let mut eligible = vec![true; range.len()];
            if let Some(outlier) = state.outlier.as_ref() {
                outlier.exclude_ejected(now, range.start, &mut eligible);
            }
            if hedge > 0 {
                exclude_for_hedge(
                    callee,
                    self.topology.model,
                    &self.topology.edges[edge as usize],
                    &tried,
                    range.start,
                    &mut eligible,
                );
            }
            let mut rng = attempt_key.index(BALANCE).rng();
            match balancer.pick(&state.outstanding[range.clone()], &eligible, &mut rng) {
                Some(i) => instance = range.start + i,
                None => local_refusal = Some((FailReason::Rejected, None)),
            }
        }
        // gRPC: a hedge draws on the retry throttle like a retry, asked just
        // before it would be sent (after the breaker and the balancer, so a
        // hedge refused locally costs no token); one the budget refuses is
        // simply not sent, its breaker permit unused, and the try goes on.
        if hedge > 0 && local_refusal.is_none() {
            if !state.budget.try_retry(now, state.in_flight) {
                if let (Some(breaker), Some(permit)) = (state.breaker.as_mut(), permit) {
                    breaker.record(now, permit, CallOutcome::Ignored, SimDuration::ZERO);
                }
                self.measured.services[to].budget_denied += 1;
                self.measured.edges[edge as usize].budget_denied += 1;
                return false;
            }
            holds_budget_slot = true;
        }
        let mut send_at = now;
        if local_refusal.is_none() {
            if let Some(limiter) = state.limiter.as_mut() {
                match limiter.try_acquire(now) {
                    RateDecision::Admit => {}
                    RateDecision::WaitUntil(t) => send_at = t,
                    RateDecision::Reject { retry_after } => {
                        self.measured.services[to].rate_limited += 1;
                        self.measured.edges[edge as usize].rate_limited += 1;
                        local_refusal = Some((FailReason::RateLimited, Some(retry_after)));
                    }
                }
            }
        }
        if let Some((reason, retry_after)) = local_refusal {
            if let (Some(breaker), Some(permit)) = (state.breaker.as_mut(), permit) {
                breaker.record(now, permit, CallOutcome::Ignored, SimDuration::ZERO);
            }
            if hedge > 0 && holds_budget_slot {
                // Only the limiter refuses a hedge the budget granted: the
                // budget is asked once nothing at the caller refuses, so the
                // grant is undone, token and all.
                state.budget.on_retry_not_sent(now);
            } else if holds_budget_slot {
                state.budget.on_retry_finished();
            }
            if hedge == 0 {
                self.after_attempt(call_id, Outcome::Failed(reason), retry_after);
            }
            return false;
        }
        if attempt_no == 1 && hedge == 0 {
            state.budget.on_request(now);
            if let Some(brake) = state.hedge_brake.as_mut() {
                brake.on_request(now);
            }
        }
        if hedge > 0 {
            if let Some(brake) = state.hedge_brake.as_mut() {
                brake.on_hedge_sent(now);
            }
            self.measured.edges[edge as usize].hedges += 1;
        }
        state.in_flight += 1;
        state.outstanding[instance] += 1;
        self.measured.edges[edge as usize].attempts += 1;
        let key = attempt_key;
        let root = match call.owner {
            Owner::Root { workload, user, .. } => {
                self.measured.zombies.open(u32::from(workload), user)
            }
            _ => {
                self.measured.zombies.hold(call.root);
                call.root
            }
        };
        let budget = match budget {
            None => SentDeadline::None,
            Some(budget) if self.topology.edges[edge as usize].deadline.absolute => {
                // The caller writes its deadline on its own clock; the callee
                // reads it on its own: the skew between them moves it.
                let skew = self.topology.clock_offset_of_caller(edge, caller)
                    - self.topology.clock_offset(to, instance as u32);
                SentDeadline::At(now.offset_by(budget, skew))
            }
            Some(budget) => SentDeadline::Relative(budget),
        };
        let hop = self.topology.network_delay(key, NET_DOWN);
        // The edge's own timeout recurs: a FIFO lane. A timeout cut by the
        // deadline or capped varies: the heap. Sent now and not expiring on
        // the way, it is armed on arrival, unless refused at once (see
        // AttemptTimer); otherwise it is armed below, once the attempt has its
        // key.
        let recurring = timeout == self.topology.edges[edge as usize].attempt_timeout;
        let arm_now = !timeout.is_infinite() && (send_at > now || hop >= timeout);
        let timer = if timeout.is_infinite() || arm_now {
            AttemptTimer::None
        } else {
            AttemptTimer::Pending {
                expires: now + timeout,
                recurring,
            }
        };
        let attempt = self.world.attempts.insert(Attempt {
            call: call_id,
            edge,
            caller,
            sent_at: now,
            permit,
            to: to as u32,
            key,
            attempt_no,
            timer,
            ends_at_deadline,
            budget,
            child: None,
            retry_after: SimDuration::INFINITE,
            instance: instance as u32,
            class: call.class,
            // The model allows at most 255 hedges per try.
            hedge: u8::try_from(hedge).unwrap_or(u8::MAX),
            request: call.request,
            root,
            orphaned: false,
        });
        // The new attempt is the call's current one; a hedged one stays in
        // flight beside it.
        if let Some(h) = call.hedging.as_mut() {
            if let (Some(previous), true) = (call.current, hedge > 0) {
                h.others.push(previous);
            }
            h.used.push(instance as u32);
        }
        call.current = Some(attempt);
        if arm_now {
            let event = Event::AttemptTimeout(attempt);
            if send_at > now {
                // The limiter made the attempt wait for a permit
                // (resilience4j): its timeout runs from when it is sent.
                self.queue.schedule_owned(send_at + timeout, event);
            } else if recurring {
                self.queue.schedule_constant_owned(timeout, event);
            } else {
                self.queue.schedule_owned(now + timeout, event);
            }
            self.world.attempts[attempt].timer = AttemptTimer::Armed;
        }
        // A call that hedges arms its hedge's timer after sending: then
        // the attempt is not the last act.
        let hedges = self.topology.edges[edge as usize].hedge.is_some();
        if send_at > now {
            self.queue
                .schedule(send_at + hop, Event::AttemptArrives(attempt));
        } else if delivery == Delivery::Last && !hedges {
            self.deliver_last(hop, Event::AttemptArrives(attempt));
        } else {
            self.deliver_after(hop, Event::AttemptArrives(attempt));
        }
        if hedges {
            self.schedule_hedge(call_id);
        }
        true
    }

    /// Arms the timer of the call's next hedge, if its edge hedges, it has
    /// hedges left for this try, and a delay is known yet.
    fn schedule_hedge(&mut self, call_id: CallId) {
        let call = &self.world.calls[call_id];
        let Some(policy) = self.topology.edges[call.edge as usize].hedge else {
            return;
        };
        let Some(hedging) = call.hedging.as_ref() else {
            return;
        };
        if hedging.sent >= policy.max_hedges {
            return;
        }
        let state = &self.policies.edges[call.edge as usize][call.caller as usize];
        let Some(delay) = state.hedge_delay.as_ref().and_then(|d| d.delay()) else {
            return;
        };
        let event = Event::HedgeDue(call_id, None);
        // A fixed delay recurs: a FIFO lane; an adaptive one moves: the heap.
        let timer = if policy.percentile.is_none() {
            self.queue.schedule_constant_timer(delay, event)
        } else {
            self.queue.schedule_timer(self.now() + delay, event)
        };
        self.replace_hedge_timer(call_id, Some(timer));
    }

    /// The call's next hedge timer is `timer` (or none): the one it replaces
    /// is cancelled.
    fn replace_hedge_timer(&mut self, call_id: CallId, timer: Option<TimerHandle>) {
        let Some(hedging) = self.world.calls[call_id].hedging.as_mut() else {
            return;
        };
        if let Some(old) = std::mem::replace(&mut hedging.timer, timer) {
            self.queue.cancel(old);
        }
    }

    /// The hedge delay passed, or the wait a copy's Retry-After asked for
    /// (`failed`: that copy's failure, which the try fails with if the hedge
    /// cannot go and no copy is left in flight): send a hedge to another
    /// replica, if the brake allows.
    pub(crate) fn on_hedge_due(&mut self, call_id: CallId, failed: Option<FailReason>) {
        let Some(call) = self.world.calls.get_mut(call_id) else {
            return;
        };
        let waiting = call.current.is_some();
        let Some(hedging) = call.hedging.as_mut() else {
            return;
        };
        hedging.timer = None;
        if !waiting && failed.is_none() {
            return;
        }
        if self.send_hedge(call_id) {
            return;
        }
        if let (AfterCopy::TryFailed, Some(reason)) = (after_unsent_hedge(waiting), failed) {
            self.after_attempt(call_id, Outcome::Failed(reason), None);
        }
    }

    /// Sends the call's next hedge now, if the brake allows and nothing else
    /// refuses it: whether it went. One that does not go still counts
    /// against `max_hedges`, once the brake let it (no hedge is asked for
    /// again in its place).
    #[inline(never)]
    fn send_hedge(&mut self, call_id: CallId) -> bool {
        let now = self.now();
        let call = &mut self.world.calls[call_id];
        let (edge, caller) = (call.edge as usize, call.caller as usize);
        let Some(hedging) = call.hedging.as_mut() else {
            return false;
        };
        let state = &self.policies.edges[edge][caller];
        // Asked now, spent in `launch_attempt` only if the hedge goes.
        if let Some(brake) = state.hedge_brake.as_ref() {
            if !brake.may_hedge(now) {
                self.measured.edges[edge].hedges_braked += 1;
                return false;
            }
        }
        hedging.sent += 1;
        let hedge = hedging.sent;
        self.launch_attempt(call_id, hedge, Delivery::Queued)
    }

    /// The call's attempts in flight: its current one and its hedges.
    pub(crate) fn attempts_in_flight(
        &self,
        call_id: CallId,
    ) -> impl Iterator<Item = AttemptId> + '_ {
        let call = self.world.calls.get(call_id);
        let current = call.and_then(|c| c.current);
        let others = call
            .and_then(|c| c.hedging.as_ref())
            .map_or(&[][..], |h| &h.others[..]);
        current.into_iter().chain(others.iter().copied())
    }

    /// Arms an attempt's pending timer unless its answer, due at `answer_at`,
    /// comes first (`SimTime::NEVER`: not known yet). A timer due at the same
    /// instant as the answer is armed first, so it wins, as it would have had it
    /// been armed at send.
    pub(crate) fn arm_timer_unless_answered_by(&mut self, attempt: AttemptId, answer_at: SimTime) {
        let now = self.now();
        let Some(a) = self.world.attempts.get_mut(attempt) else {
            return;
        };
        let AttemptTimer::Pending { expires, recurring } = a.timer else {
            return;
        };
        if answer_at < expires {
            return;
        }
        let event = Event::AttemptTimeout(attempt);
        // From arrival, a recurring timeout over a constant hop is itself a
        // constant delay.
        a.timer = AttemptTimer::Armed;
        if recurring && self.topology.model.network.is_constant() {
            self.queue.schedule_constant_owned(expires - now, event);
        } else {
            self.queue.schedule_owned(expires, event);
        }
    }

    /// An attempt ended: settle its breaker permit, its budget accounting and
    /// the edge's in-flight count. `None`: abandoned by its caller, which tells
    /// the breaker nothing (resilience4j's ignored call) and the budget no result.
    ///
    /// Inlined into each caller: the counts are a few writes, and the
    /// policies that learn from outcomes, which most edges have none of, are
    /// told out of line ([`Self::report_outcome`]).
    #[inline(always)]
    fn end_attempt(&mut self, a: &Attempt, outcome: Option<Outcome>) {
        let state = &mut self.policies.edges[a.edge as usize][a.caller as usize];
        state.in_flight -= 1;
        state.outstanding[a.instance as usize] -= 1;
        // Each granted retry and each hedge (both charged to the budget)
        // gives its slot back once, when its attempt ends (no policy told
        // below reads the budget's slots).
        if a.attempt_no > 1 || a.hedge > 0 {
            state.budget.on_retry_finished();
        }
        if state.learns_from_outcomes() {
            self.report_outcome(a, outcome);
        }
    }

    /// [`Self::end_attempt`]'s news for the caller's outlier detection,
    /// breaker, budget and throttle, those it has.
    #[inline(never)]
    fn report_outcome(&mut self, a: &Attempt, outcome: Option<Outcome>) {
        let now = self.now();
        let policy = &self.topology.edges[a.edge as usize];
        let state = &mut self.policies.edges[a.edge as usize][a.caller as usize];
        // A6: the failures a budget counts are the retryable and the
        // non-fatal ones (classified only for a budget that reads them: the
        // whitelist's scan is costly).
        let non_fatal = |reason| {
            policy
                .hedge
                .is_some_and(|h| outcome_of(reason).is_some_and(|o| h.non_fatal.contains(o)))
        };
        let budget_outcome = outcome
            .filter(|_| state.budget.reads_results())
            .map(|o| match o {
                Outcome::Ok | Outcome::Degraded(_) => AttemptOutcome::Success,
                Outcome::Failed(reason)
                    if is_retryable(&policy.retry, reason) || non_fatal(reason) =>
                {
                    AttemptOutcome::RetryableFailure
                }
                Outcome::Failed(_) => AttemptOutcome::NonRetryableFailure,
            });
        if let (Some(outlier), Some(o)) = (state.outlier.as_mut(), outcome) {
            outlier.record(now, a.instance as usize, o.is_success());
        }
        if let (Some(breaker), Some(permit)) = (state.breaker.as_mut(), a.permit) {
            let result = match outcome {
                Some(Outcome::Ok | Outcome::Degraded(_)) => CallOutcome::Success,
                Some(Outcome::Failed(_)) => CallOutcome::Failure,
                None => CallOutcome::Ignored,
            };
            breaker.record(now, permit, result, now - a.sent_at);
        }
        if let Some(o) = budget_outcome {
            state.budget.on_attempt_result(now, o);
        }
        if let (Some(throttle), Some(o)) = (state.throttle.as_mut(), outcome) {
            let refused = matches!(
                o,
                Outcome::Failed(
                    FailReason::Rejected | FailReason::RateLimited | FailReason::Timeout
                )
            );
            throttle.record(now, !refused, o.is_success());
        }
    }

    /// The callee's answer arrived. Ignored if the caller stopped waiting.
    pub(crate) fn on_response(&mut self, attempt: AttemptId, outcome: Outcome) {
        let Some(a) = self.world.attempts.remove(attempt) else {
            return;
        };
        let is_root = self.topology.is_workload_edge(a.edge) && !a.orphaned;
        if is_root {
            self.measured.zombies.end(a.root, outcome.is_success());
        }
        self.measured.zombies.release(a.root);
        if is_root {
            // What the answer left running below it is work for nobody.
            self.settle_zombie(a.root);
        }
        if a.orphaned {
            // Refused on arrival; its caller settled it when it left.
            return;
        }
        // Its timeout, if armed, died with it (an owned timer).
        self.end_attempt(&a, Some(outcome));
        let kind = if outcome.is_success() {
            AttemptOutcomeKind::Success
        } else {
            AttemptOutcomeKind::Error
        };
        self.log_attempt(&a, kind);
        let retry_after = (!a.retry_after.is_infinite()).then_some(a.retry_after);
        if self.settle_copies(a.call, attempt, outcome, retry_after) {
            self.after_attempt(a.call, outcome, retry_after);
        }
    }

    /// The per-attempt timer expired: give up on the attempt, then retry or fail.
    pub(crate) fn on_attempt_timeout(&mut self, attempt: AttemptId) {
        let Some(a) = self.world.attempts.remove(attempt) else {
            return;
        };
        let outcome = Outcome::Failed(FailReason::of_expiry(a.ends_at_deadline));
        self.measured.edges[a.edge as usize].timeouts += 1;
        self.end_attempt(&a, Some(outcome));
        self.log_attempt(&a, AttemptOutcomeKind::Timeout);
        self.give_up_on(&a);
        if self.settle_copies(a.call, attempt, outcome, None) {
            self.after_attempt(a.call, outcome, None);
        }
    }

    /// `attempt` of the call ended with `outcome` (and the callee's
    /// Retry-After, if it sent one): takes it out of the call's attempts in
    /// flight. Returns whether the call moves on (to its retry loop, which
    /// finishes it on a success); not when the call is gone (a loser whose
    /// cancellation was still on its way). A call that hedges settles its try
    /// by gRPC's hedging rules ([`after_copy`]): a success ends the race, and
    /// the other copies are cancelled (tied) or left to run, their answers
    /// ignored (untied), as after a fatal failure; after a non-fatal one the
    /// next hedge goes at once (or after the Retry-After), and the try goes on
    /// while a copy is in flight or a hedge is due.
    ///
    /// A call that does not hedge (most do not) only clears its current
    /// attempt: that check is inlined into each caller, the hedging rules are
    /// in [`Self::settle_hedged_copies`].
    #[inline(always)]
    fn settle_copies(
        &mut self,
        call_id: CallId,
        attempt: AttemptId,
        outcome: Outcome,
        retry_after: Option<SimDuration>,
    ) -> bool {
        let Some(call) = self.world.calls.get_mut(call_id) else {
            return false;
        };
        if call.hedging.is_none() {
            call.current = None;
            return true;
        }
        self.settle_hedged_copies(call_id, attempt, outcome, retry_after)
    }

    /// [`Self::settle_copies`] for a call that hedges (it is alive).
    #[inline(never)]
    fn settle_hedged_copies(
        &mut self,
        call_id: CallId,
        attempt: AttemptId,
        outcome: Outcome,
        retry_after: Option<SimDuration>,
    ) -> bool {
        let call = &mut self.world.calls[call_id];
        let hedging = call.hedging.as_mut().expect("a hedged call");
        if call.current == Some(attempt) {
            call.current = hedging.others.pop();
        } else {
            hedging.others.retain(|&a| a != attempt);
        }
        let in_flight = call.current.is_some();
        // New hedges follow the edge's current policy; the copies sent are
        // judged by the call's.
        let hedge_left = self.topology.edges[call.edge as usize]
            .hedge
            .is_some_and(|p| hedging.sent < p.max_hedges);
        let decision = after_copy(
            hedging.policy.non_fatal,
            outcome,
            hedge_left,
            in_flight,
            retry_after,
        );
        match decision {
            AfterCopy::Won | AfterCopy::Fatal => {}
            AfterCopy::Wait => return false,
            AfterCopy::TryFailed => {
                self.replace_hedge_timer(call_id, None);
                return true;
            }
            AfterCopy::HedgeNow => {
                // Its timer, if armed, is for the hedge that goes now.
                self.replace_hedge_timer(call_id, None);
                if self.send_hedge(call_id) {
                    return false;
                }
                return after_unsent_hedge(in_flight) == AfterCopy::TryFailed;
            }
            AfterCopy::HedgeAfter(wait) => {
                // Never past the deadline: with no copy out, the try then
                // fails when it is due (the hedge finds no time left).
                let now = self.now();
                let call = &self.world.calls[call_id];
                let deadline = self
                    .deadline_as_seen(call.owner, call.edge, now)
                    .unwrap_or(call.deadline);
                // (A pushback comes with a failure: `failed` is that failure.)
                let failed = match outcome {
                    Outcome::Failed(reason) => Some(reason),
                    Outcome::Ok | Outcome::Degraded(_) => None,
                };
                let due = (now + wait).min(deadline.max(now));
                let timer = self
                    .queue
                    .schedule_timer(due, Event::HedgeDue(call_id, failed));
                self.replace_hedge_timer(call_id, Some(timer));
                return false;
            }
        }
        let call = &mut self.world.calls[call_id];
        let hedging = call.hedging.as_mut().expect("a hedged call");
        if let Some(timer) = hedging.timer.take() {
            self.queue.cancel(timer);
        }
        // The try's latency as its caller saw it, from its first attempt to the
        // winning answer: measuring the winning copy alone would see hedged
        // tries as fast and pull the percentile, and with it the delay, down.
        if outcome.is_success() {
            let latency = self.queue.now() - hedging.try_sent;
            let state = &mut self.policies.edges[call.edge as usize][call.caller as usize];
            if let Some(delay) = state.hedge_delay.as_mut() {
                delay.record(latency);
            }
        }
        let losers: Vec<AttemptId> = call
            .current
            .take()
            .into_iter()
            .chain(hedging.others.drain(..))
            .collect();
        let policy = hedging.policy;
        for loser in losers {
            if policy.tied {
                if policy.cancel_delay == SimDuration::ZERO {
                    self.abandon_attempt(loser);
                } else {
                    self.queue
                        .schedule_in(policy.cancel_delay, Event::CancelLoser(loser));
                }
            } else {
                self.leave_running(loser);
            }
        }
        true
    }

    /// An untied loser: the caller stops listening without telling the callee,
    /// whose work runs on and is wasted.
    fn leave_running(&mut self, attempt: AttemptId) {
        let Some(a) = self.world.attempts.get(attempt).copied() else {
            return;
        };
        // Its timeout, if armed, is void once the attempt is removed or
        // orphaned below.
        self.measured.edges[a.edge as usize].losers_untied += 1;
        self.end_attempt(&a, None);
        self.log_attempt(&a, AttemptOutcomeKind::Cancelled);
        if self.topology.is_workload_edge(a.edge) {
            self.measured.zombies.end(a.root, false);
        }
        match a.child {
            // Running: it finishes for nobody; its answer finds no attempt.
            Some(child) => {
                self.world.attempts.remove(attempt);
                self.measured.zombies.release(a.root);
                if let Some(task) = self.world.tasks.get_mut(child) {
                    task.unheard = true;
                }
            }
            // Still on the wire: it arrives all the same (see `orphaned`).
            None => {
                let a = &mut self.world.attempts[attempt];
                a.orphaned = true;
                a.timer = AttemptTimer::None;
            }
        }
        if self.topology.is_workload_edge(a.edge) {
            self.settle_zombie(a.root);
        }
    }

    /// Appends the attempt's record, when records are kept. Called for every
    /// attempt that ends, and most runs keep no records: the check is inlined
    /// into each caller, the recording is not.
    #[inline(always)]
    fn log_attempt(&mut self, a: &Attempt, outcome: AttemptOutcomeKind) {
        if self.measured.attempt_log.is_some() {
            self.record_attempt(a, outcome);
        }
    }

    /// [`Self::log_attempt`]'s recording, for a run that keeps the records.
    #[inline(never)]
    fn record_attempt(&mut self, a: &Attempt, outcome: AttemptOutcomeKind) {
        let Some(log) = self.measured.attempt_log.as_mut() else {
            return;
        };
        let service = &self.topology.model.services[a.to as usize];
        log.record(&AttemptRecord {
            request: u64::from(a.request),
            service: a.to as usize,
            shard: (service.shards > 1).then(|| a.instance / service.replicas()),
            replica: a.instance,
            attempt_no: a.attempt_no,
            hedge: u32::from(a.hedge),
            started: a.sent_at,
            finished: self.queue.now(),
            outcome,
        });
    }

    /// Retry layer: after a failure, give up, or ask the budget and sleep. A
    /// deadline cuts the sleep short; the next attempt then finds no time left.
    ///
    /// A success only finishes the call: that check is inlined into each
    /// caller, the retry layer is [`Self::after_failure`].
    #[inline(always)]
    fn after_attempt(
        &mut self,
        call_id: CallId,
        outcome: Outcome,
        retry_after: Option<SimDuration>,
    ) {
        match outcome {
            Outcome::Ok | Outcome::Degraded(_) => self.finish_call(call_id, outcome),
            Outcome::Failed(reason) => self.after_failure(call_id, reason, retry_after),
        }
    }

    /// [`Self::after_attempt`] for a failed attempt.
    #[inline(never)]
    fn after_failure(
        &mut self,
        call_id: CallId,
        reason: FailReason,
        retry_after: Option<SimDuration>,
    ) {
        let outcome = Outcome::Failed(reason);
        let now = self.now();
        // The call, looked up once: the layers below touch only other parts
        // of the simulator.
        let call = &mut self.world.calls[call_id];
        let edge = call.edge as usize;
        let policy = &self.topology.edges[edge];
        if self.topology.retry_rules[edge].decide(call.attempts, reason) == RetryDecision::GiveUp {
            self.finish_call(call_id, outcome);
            return;
        }
        let to = policy.to;
        let state = &mut self.policies.edges[edge][call.caller as usize];
        if !state.budget.try_retry(now, state.in_flight) {
            self.measured.services[to].budget_denied += 1;
            self.measured.edges[edge].budget_denied += 1;
            self.finish_call(call_id, outcome);
            return;
        }
        self.measured.services[to].retries += 1;
        self.measured.edges[edge].retries += 1;
        // Without jitter there is nothing to draw, and no stream to set up.
        let delay = if policy.retry.jitter == Jitter::None {
            base_delay(&policy.retry.backoff, call.attempts)
        } else {
            let mut rng = call
                .key
                .index(BACKOFF)
                .index(u64::from(call.attempts))
                .rng();
            next_delay(&policy.retry, call.attempts, call.last_delay, &mut rng)
        };
        // A Retry-After (from a 429 or a 503) overrides the client's own backoff
        // (gRPC's pushback does the same).
        let delay = retry_after.unwrap_or(delay);
        let deadline = stale_deadline(
            &self.topology,
            &self.world.tasks,
            call.owner,
            call.edge,
            now,
        )
        .unwrap_or(call.deadline);
        call.holds_retry = true;
        call.last_delay = delay;
        if delay == SimDuration::ZERO && self.world.retry_depth < MAX_RETRIES_IN_PLACE {
            // At once, in place (the order of a run's events as it has always
            // been) ...
            self.world.retry_depth += 1;
            self.send_attempt(call_id, Delivery::Queued);
            self.world.retry_depth -= 1;
        } else if delay == SimDuration::ZERO {
            // ... but a retry refused locally at once (no healthy upstream)
            // retries again from inside this call: past a few levels, the
            // next one waits for its turn in the queue, as an event of this
            // instant, so the stack stays shallow and `limits.max_events`
            // counts the loop.
            call.sleeping = true;
            self.queue.schedule_owned(now, Event::BackoffDone(call_id));
        } else {
            call.sleeping = true;
            let wake = now + delay;
            let fixed = matches!(policy.retry.jitter, Jitter::None)
                && matches!(policy.retry.backoff, Backoff::Fixed(_))
                && retry_after.is_none();
            let event = Event::BackoffDone(call_id);
            if wake > deadline {
                // (Never in the past: a call whose deadline passed has no
                // attempt to retry, but a timer in the past would panic.)
                self.queue.schedule_owned(deadline.max(now), event);
            } else if fixed {
                self.queue.schedule_constant_owned(delay, event);
            } else {
                self.queue.schedule_owned(wake, event);
            }
        }
    }

    /// Delivered only while the call sleeps (an owned timer: see
    /// `Simulator::next_event`), so the call is alive. Sending the retry is
    /// all it does.
    pub(crate) fn on_backoff_done(&mut self, call: CallId) {
        debug_assert!(
            self.world.calls.contains_key(call),
            "a backoff outlived its call"
        );
        self.send_attempt(call, Delivery::Last);
    }

    /// The call ended: hand the outcome to whoever waits.
    fn finish_call(&mut self, call_id: CallId, outcome: Outcome) {
        let Some(call) = self.world.calls.remove(call_id) else {
            return;
        };
        // (Most calls never meet a bulkhead: no call for them.)
        if call.bulkhead != BulkheadHold::None {
            self.leave_bulkhead(call.edge, call.caller, call.bulkhead);
        }
        if let Some(timer) = call.hedging.as_ref().and_then(|h| h.timer) {
            self.queue.cancel(timer);
        }
        match call.owner {
            Owner::Root {
                arrived,
                workload,
                user,
            } => self.finish_root(arrived, workload, user, call.key, outcome),
            Owner::Task(task) => self.call_finished(task, outcome),
            Owner::FanOut(fan) => self.fan_out_child_finished(fan, call.edge, outcome),
            Owner::CacheLoad(load) => self.cache_load_finished(load, outcome),
        }
    }

    /// Stop waiting for an attempt and tell the callee (its connection closes).
    pub(crate) fn abandon_attempt(&mut self, attempt: AttemptId) {
        // Removing it voids its timeout (an owned timer).
        let Some(a) = self.world.attempts.remove(attempt) else {
            return;
        };
        self.measured.edges[a.edge as usize].cancellations += 1;
        self.end_attempt(&a, None);
        self.log_attempt(&a, AttemptOutcomeKind::Cancelled);
        self.give_up_on(&a);
    }

    /// The caller stopped waiting for a removed attempt: its callee is told,
    /// and a workload's attempt whose work runs on becomes a zombie.
    fn give_up_on(&mut self, a: &Attempt) {
        let is_root = self.topology.is_workload_edge(a.edge);
        if is_root {
            self.measured.zombies.end(a.root, false);
        }
        self.measured.zombies.release(a.root);
        if let Some(child) = a.child {
            self.caller_gone(child);
        }
        if is_root {
            self.settle_zombie(a.root);
        }
    }

    /// A try that is over may leave a zombie: count it, and keep the time
    /// series' per-bucket peak, so that a zombie that lives and dies between
    /// two bucket starts still shows.
    ///
    /// A bucket opens with the zombies alive then, and only settling raises
    /// that count: the peak moves only when this settling made a zombie.
    #[inline(always)]
    fn settle_zombie(&mut self, root: u32) {
        let before = self.measured.zombies.alive;
        self.measured.zombies.settle(root);
        let alive = self.measured.zombies.alive;
        if alive > before {
            let bucket = self.measured.series.global_mut();
            bucket.zombies = bucket.zombies.max(alive);
        }
    }

    /// The deadline the call's hop believes in at `now`, when it differs from
    /// the call's real one: the stale-budget bug of a hop that forgets what it
    /// spent plans every attempt, and every backoff, with the budget its
    /// request came in with, as if it had just arrived (working, waiting for a
    /// timed-out attempt and sleeping before a retry all forgotten). `None`: the
    /// real deadline.
    fn deadline_as_seen(&self, owner: Owner, edge: EdgeId, now: SimTime) -> Option<SimTime> {
        stale_deadline(&self.topology, &self.world.tasks, owner, edge, now)
    }

    /// The owner no longer wants the call: abandon its attempt, stop its sleep.
    /// No outcome is delivered.
    pub(crate) fn cancel_call(&mut self, call_id: CallId) {
        let Some(call) = self.world.calls.remove(call_id) else {
            return;
        };
        // Its bulkhead slot (or its place in the wait) goes too, as when it
        // ends: a cancelled call holding it would shrink the bulkhead for good.
        self.leave_bulkhead(call.edge, call.caller, call.bulkhead);
        if let Some(attempt) = call.current {
            self.abandon_attempt(attempt);
        }
        if let Some(hedging) = call.hedging {
            for attempt in hedging.others {
                self.abandon_attempt(attempt);
            }
            if let Some(timer) = hedging.timer {
                self.queue.cancel(timer);
            }
        }
        // Its backoff, if sleeping, died with it (an owned timer).
        if call.holds_retry {
            self.policies.edges[call.edge as usize][call.caller as usize]
                .budget
                .on_retry_finished();
        }
    }
}
