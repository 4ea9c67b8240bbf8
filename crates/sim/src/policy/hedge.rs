//! Hedged requests, after Dean & Barroso's "The Tail at Scale" and gRPC's
//! hedging policy (A6): when an attempt has not answered after a delay, send
//! the same request to another replica; the first success wins.
//!
//! Two decisions live here, each a small state machine with pure methods:
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
//!
//! Where hedges go, and what happens to the losers (tied requests cancel them,
//! untied ones let them run), is composed in [`crate::call`].

use crate::policy::budget::{RetryBudget, RetryBudgetConfig, TokenBucketConfig};
use stormsim_engine::{SimDuration, SimTime};
use stormsim_model::HedgePolicy;

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

#[cfg(test)]
mod tests {
    use super::*;
    use stormsim_model::HedgeTarget;

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
}
