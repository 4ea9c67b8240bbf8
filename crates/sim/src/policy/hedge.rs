//! Hedged requests, after Dean & Barroso's "The Tail at Scale" and gRPC's
//! hedging policy (A6): when an attempt has not answered after a delay, send
//! the same request to another replica; the first success wins.
//!
//! Three decisions live here, each a small state machine or pure function:
//!
//! - **When** ([`HedgeDelay`]): a fixed delay, or a percentile (say p95) of
//!   the latency of the caller's last `window` successful attempts, so that
//!   only about 5% of requests are hedged whatever the latency is today. Until
//!   a tenth of the window is known, the fixed delay (if any) stands in.
//! - **Whether** ([`HedgeBrake`]): hedges are extra load, and they come
//!   exactly when the backend is slow, which under overload is when it can
//!   least afford them. A token bucket, as the S5 retry budget: every first
//!   attempt adds `max_ratio` tokens (up to 10), every hedge spends one; with
//!   none left hedging stops, so hedges stay below `max_ratio` of requests.
//!   Like the budget's `token_bucket`, it grants at exactly one token.
//! - **After a copy ends** ([`after_copy`]): gRPC's hedging policy (A6,
//!   "Summary of Retry and Hedging Logic"). A success wins; a failure whose
//!   outcome is not in the policy's `non_fatal` set is fatal: the other copies
//!   are cancelled and the try fails with it; after a non-fatal failure the
//!   next hedge in line, if any is left, is sent at once instead of at its
//!   delay ("the next hedged request in line is sent immediately, shortcutting
//!   its hedging delay"), or after the callee's Retry-After (A6's pushback:
//!   "Send next hedged request in n ms"), and the hedges after it follow at the
//!   hedge delay from then; with no hedge left the try waits for its other
//!   copies, and fails with the last failure once none is left. A6's
//!   `maxAttempts` counts every copy: it is `max_hedges + 1`.
//!
//! Where hedges go, and what happens to the losers (tied requests cancel them,
//! untied ones let them run), is composed in `call.rs`.

use crate::metrics::Outcome;
use crate::policy::budget::{RetryBudget, RetryBudgetConfig, TokenBucketConfig};
use crate::policy::retry::outcome_of;
use stormsim_engine::{SimDuration, SimTime};
use stormsim_model::{HedgePolicy, OutcomeSet};

/// Tokens the brake holds at most: a burst of ten hedges.
const BRAKE_TOKENS: f64 = 10.0;

/// The hedge delay of one caller on one edge.
#[derive(Clone, Debug)]
pub struct HedgeDelay {
    fixed: Option<SimDuration>,
    percentile: Option<f64>,
    /// The last `window` latencies, in ns, as a ring.
    recent: Vec<u64>,
    next: usize,
    window: usize,
    /// The percentile of `recent`, recomputed every tenth of a window.
    cached: Option<SimDuration>,
    since_cached: usize,
}

impl HedgeDelay {
    /// A delay for `policy`.
    pub fn new(policy: &HedgePolicy) -> HedgeDelay {
        HedgeDelay {
            fixed: policy.delay,
            percentile: policy.percentile,
            recent: Vec::new(),
            next: 0,
            window: policy.window as usize,
            cached: None,
            since_cached: 0,
        }
    }

    /// Records the latency of a successful attempt.
    pub fn record(&mut self, latency: SimDuration) {
        let Some(p) = self.percentile else {
            return;
        };
        if self.recent.len() < self.window {
            self.recent.push(latency.as_nanos());
        } else {
            self.recent[self.next] = latency.as_nanos();
            self.next = (self.next + 1) % self.window;
        }
        self.since_cached += 1;
        let refresh = (self.window / 10).max(1);
        if self.recent.len() >= refresh && (self.cached.is_none() || self.since_cached >= refresh) {
            self.cached = Some(SimDuration(percentile_of(&self.recent, p)));
            self.since_cached = 0;
        }
    }

    /// The delay now: the observed percentile once known, else the fixed
    /// delay, else none (do not hedge yet).
    pub fn delay(&self) -> Option<SimDuration> {
        self.cached.or(self.fixed)
    }
}

/// The `p` quantile of `values` (nearest rank), without disturbing them.
fn percentile_of(values: &[u64], p: f64) -> u64 {
    let mut sorted = values.to_vec();
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    *sorted.select_nth_unstable(rank).1
}

/// The hedge brake of one caller on one edge (absent: no brake).
#[derive(Clone, Debug)]
pub struct HedgeBrake {
    tokens: RetryBudget,
}

impl HedgeBrake {
    /// A brake letting hedges reach `max_ratio` of first attempts.
    pub fn new(max_ratio: f64) -> HedgeBrake {
        HedgeBrake {
            tokens: RetryBudget::new(&RetryBudgetConfig::TokenBucket(TokenBucketConfig {
                max_tokens: BRAKE_TOKENS,
                ratio: max_ratio,
            })),
        }
    }

    /// A first attempt was sent: it earns hedges.
    pub fn on_request(&mut self, now: SimTime) {
        self.tokens.on_request(now);
    }

    /// Whether a hedge may go now, without spending: asked when the hedge
    /// delay passes. The token is spent by [`HedgeBrake::on_hedge_sent`],
    /// once nothing else refuses the hedge, so that a hedge the caller's own
    /// layers or the retry budget refuse costs the brake nothing.
    pub fn may_hedge(&self, now: SimTime) -> bool {
        self.tokens.can_retry(now, 0)
    }

    /// A hedge [`HedgeBrake::may_hedge`] allowed was sent, at the same
    /// instant: it spends a token.
    pub fn on_hedge_sent(&mut self, now: SimTime) {
        let spent = self.tokens.try_retry(now, 0);
        debug_assert!(spent, "a hedge sent without the brake's allowance");
        if spent {
            self.tokens.on_retry_finished();
        }
    }
}

/// What a hedged try does when one of its copies ends (A6's summary, cases 1
/// to 3 and 5; a pushback that says "do not retry" does not exist here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterCopy {
    /// A success: the try is won; the other copies are cancelled (tied) or
    /// left to run (untied).
    Won,
    /// A fatal failure: the other copies are cancelled (or left to run,
    /// untied) and the try fails with it.
    Fatal,
    /// A non-fatal failure with a hedge left: send it now.
    HedgeNow,
    /// A non-fatal failure with a hedge left, and the callee's Retry-After:
    /// send it after that long.
    HedgeAfter(SimDuration),
    /// A non-fatal failure, no hedge left, other copies in flight: wait for
    /// them.
    Wait,
    /// A non-fatal failure, no hedge left and no copy in flight: the try fails
    /// with it.
    TryFailed,
}

/// Decides, by A6, after a copy of a hedged try ended with `outcome`.
/// `hedge_left`: the try may send another hedge (fewer than `max_hedges`
/// sent); `others_in_flight`: other copies of the try are still out;
/// `pushback`: the callee's Retry-After with a failure. A hedge that then
/// cannot go leaves the try to [`after_unsent_hedge`].
pub fn after_copy(
    non_fatal: OutcomeSet,
    outcome: Outcome,
    hedge_left: bool,
    others_in_flight: bool,
    pushback: Option<SimDuration>,
) -> AfterCopy {
    let Outcome::Failed(reason) = outcome else {
        return AfterCopy::Won;
    };
    if !outcome_of(reason).is_some_and(|o| non_fatal.contains(o)) {
        return AfterCopy::Fatal;
    }
    match (hedge_left, pushback) {
        (true, Some(wait)) if wait > SimDuration::ZERO => AfterCopy::HedgeAfter(wait),
        (true, _) => AfterCopy::HedgeNow,
        (false, _) if others_in_flight => AfterCopy::Wait,
        (false, _) => AfterCopy::TryFailed,
    }
}

/// The hedge [`after_copy`] asked for could not go (its budget, the brake, no
/// other replica, ...): A6's throttled hedge, "if there are no other
/// already-sent hedged RPCs the failure is returned". No further hedge is
/// sent for the try.
pub fn after_unsent_hedge(others_in_flight: bool) -> AfterCopy {
    if others_in_flight {
        AfterCopy::Wait
    } else {
        AfterCopy::TryFailed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::FailReason;
    use stormsim_model::{HedgeTarget, RetryableOutcome};

    fn policy(delay_ms: Option<f64>, percentile: Option<f64>, window: u32) -> HedgePolicy {
        HedgePolicy {
            delay: delay_ms.map(SimDuration::from_ms),
            percentile,
            window,
            max_hedges: 1,
            max_ratio: None,
            tied: true,
            cancel_delay: SimDuration::ZERO,
            target: HedgeTarget::OtherZone,
            non_fatal: OutcomeSet::default(),
        }
    }

    #[test]
    fn a_fixed_delay_is_the_delay() {
        let d = HedgeDelay::new(&policy(Some(10.0), None, 100));
        assert_eq!(d.delay(), Some(SimDuration::from_ms(10.0)));
    }

    #[test]
    fn the_adaptive_delay_follows_the_percentile_of_recent_latencies() {
        let mut d = HedgeDelay::new(&policy(Some(50.0), Some(0.95), 100));
        // Before a tenth of the window is known, the fixed delay stands in.
        for ms in 1..=9 {
            d.record(SimDuration::from_ms(f64::from(ms)));
        }
        assert_eq!(d.delay(), Some(SimDuration::from_ms(50.0)));
        // 1..=100 ms: the 95th value.
        for ms in 10..=100 {
            d.record(SimDuration::from_ms(f64::from(ms)));
        }
        assert_eq!(d.delay(), Some(SimDuration::from_ms(95.0)));
        // The window forgets: 100 latencies of 1 s push the old ones out.
        for _ in 0..100 {
            d.record(SimDuration::from_ms(1000.0));
        }
        assert_eq!(d.delay(), Some(SimDuration::from_ms(1000.0)));
    }

    #[test]
    fn no_delay_no_hedge_until_latencies_are_known() {
        let mut d = HedgeDelay::new(&policy(None, Some(0.5), 20));
        assert_eq!(d.delay(), None);
        d.record(SimDuration::from_ms(4.0));
        d.record(SimDuration::from_ms(8.0));
        assert_eq!(d.delay(), Some(SimDuration::from_ms(4.0)));
    }

    /// The brake's allowance, spent as the call state machine spends it:
    /// asked first, charged only if the hedge goes.
    fn hedge_if_allowed(brake: &mut HedgeBrake, now: SimTime) -> bool {
        let allowed = brake.may_hedge(now);
        if allowed {
            brake.on_hedge_sent(now);
        }
        allowed
    }

    #[test]
    fn the_brake_bounds_hedges_to_their_ratio_of_requests() {
        let mut brake = HedgeBrake::new(0.05);
        let now = SimTime::ZERO;
        // The bucket starts full: a burst of ten.
        let burst = (0..100)
            .filter(|_| hedge_if_allowed(&mut brake, now))
            .count();
        assert_eq!(burst, 10);
        // Then one hedge per 20 requests.
        let mut hedges = 0;
        for _ in 0..1000 {
            brake.on_request(now);
            if hedge_if_allowed(&mut brake, now) {
                hedges += 1;
            }
        }
        assert_eq!(hedges, 50);
    }

    #[test]
    fn asking_the_brake_spends_nothing() {
        let mut brake = HedgeBrake::new(0.05);
        let now = SimTime::ZERO;
        // Asked a hundred times, sent never: the ten tokens are all still there.
        assert!((0..100).all(|_| brake.may_hedge(now)));
        let sent = (0..100)
            .filter(|_| hedge_if_allowed(&mut brake, now))
            .count();
        assert_eq!(sent, 10);
        assert!(!brake.may_hedge(now));
    }

    // --- after a copy ends (A6) ---

    fn unavailable_and_timeout() -> OutcomeSet {
        OutcomeSet::of(&[RetryableOutcome::Rejected, RetryableOutcome::Timeout])
    }

    const REJECTED: Outcome = Outcome::Failed(FailReason::Rejected);

    #[test]
    fn a_success_wins_whatever_is_left() {
        for (left, others) in [(true, true), (true, false), (false, true), (false, false)] {
            assert_eq!(
                after_copy(OutcomeSet::default(), Outcome::Ok, left, others, None),
                AfterCopy::Won
            );
        }
    }

    #[test]
    fn a_non_fatal_failure_sends_the_next_hedge_at_once() {
        let nf = unavailable_and_timeout();
        // With or without other copies out: A6 does not wait for the delay.
        assert_eq!(
            after_copy(nf, REJECTED, true, true, None),
            AfterCopy::HedgeNow
        );
        assert_eq!(
            after_copy(nf, REJECTED, true, false, None),
            AfterCopy::HedgeNow
        );
        let timeout = Outcome::Failed(FailReason::Timeout);
        assert_eq!(
            after_copy(nf, timeout, true, false, None),
            AfterCopy::HedgeNow
        );
        // No hedge left: wait for the others, or fail the try.
        assert_eq!(after_copy(nf, REJECTED, false, true, None), AfterCopy::Wait);
        assert_eq!(
            after_copy(nf, REJECTED, false, false, None),
            AfterCopy::TryFailed
        );
    }

    #[test]
    fn a_pushback_delays_the_next_hedge() {
        let nf = unavailable_and_timeout();
        let wait = SimDuration::from_ms(30.0);
        assert_eq!(
            after_copy(nf, REJECTED, true, false, Some(wait)),
            AfterCopy::HedgeAfter(wait)
        );
        // A zero Retry-After is no delay; none left, nothing to delay.
        assert_eq!(
            after_copy(nf, REJECTED, true, true, Some(SimDuration::ZERO)),
            AfterCopy::HedgeNow
        );
        assert_eq!(
            after_copy(nf, REJECTED, false, true, Some(wait)),
            AfterCopy::Wait
        );
    }

    #[test]
    fn a_fatal_failure_ends_the_try_whatever_is_left() {
        let nf = unavailable_and_timeout();
        let error = Outcome::Failed(FailReason::Error);
        for (left, others) in [(true, true), (true, false), (false, true), (false, false)] {
            assert_eq!(after_copy(nf, error, left, others, None), AfterCopy::Fatal);
        }
        // An empty set makes every failure fatal, a Retry-After too.
        let wait = Some(SimDuration::from_ms(5.0));
        assert_eq!(
            after_copy(OutcomeSet::default(), REJECTED, true, true, wait),
            AfterCopy::Fatal
        );
    }

    #[test]
    fn a_hedge_that_cannot_go_leaves_the_try_to_its_copies_in_flight() {
        assert_eq!(after_unsent_hedge(true), AfterCopy::Wait);
        assert_eq!(after_unsent_hedge(false), AfterCopy::TryFailed);
    }

    #[test]
    fn boundary_the_brake_grants_at_exactly_one_token() {
        // 0.25 a first attempt: four refill one token exactly.
        let mut brake = HedgeBrake::new(0.25);
        let now = SimTime::ZERO;
        while hedge_if_allowed(&mut brake, now) {}
        for _ in 0..3 {
            brake.on_request(now);
        }
        assert!(!brake.may_hedge(now), "0.75 tokens");
        brake.on_request(now);
        assert!(brake.may_hedge(now), "exactly 1 token");
    }
}
