//! Admission limiters that decide each request on the spot, with no queue of
//! their own: rate limiters that cap how many requests pass per unit of time,
//! and two success-rate throttles that shed a share of load that grows with the
//! share the backend refuses.
//!
//! Semantics and parameter names follow the libraries users tune in production
//! (see shared/POLICIES.md):
//!
//! - [`RateLimiter`] with [`RateLimiterConfig::Resilience4j`] is resilience4j's
//!   `AtomicRateLimiter`: `limitForPeriod` permissions refreshed at each
//!   `limitRefreshPeriod` boundary, callers may wait up to `timeoutDuration` for
//!   a permission, which is reserved so later callers queue behind it. The
//!   other kinds are the textbook limiters of the S5 chapter: a token bucket,
//!   a fixed window (with its boundary flaw) and an exact sliding log.
//! - [`AdaptiveThrottle`] is Google SRE client-side adaptive throttling (SRE
//!   book, ch. 21, "Handling Overload"): reject locally with probability
//!   `max(0, (requests − K·accepts) / (requests + 1))` over a trailing window.
//! - [`AdmissionControl`] is Envoy's admission control HTTP filter
//!   (`envoy.filters.http.admission_control`): `sampling_window`,
//!   `sr_threshold`, `aggression`, `max_rejection_probability`, `rps_threshold`.
//!
//! Every method takes `now` explicitly and expects it never to go backwards
//! between calls on one limiter, as the event queue guarantees; an earlier
//! `now` is tolerated (treated as no time elapsed) rather than trusted.
//! Randomness comes only from the `&mut StreamRng` the caller passes, and each
//! randomised decision draws exactly one value whatever the state, so that the
//! stream's later draws do not depend on the limiter's state (common random
//! numbers across the variants of a model).

use stormsim_engine::{SimDuration, SimTime, StreamRng};

const NANOS_PER_SEC: u64 = 1_000_000_000;

// ---------------------------------------------------------------------------
// Rate limiters
// ---------------------------------------------------------------------------

/// Which rate limiter, with its parameters. A plain value: validation (positive
/// windows and periods, `burst ≥ 1`) is the model crate's job.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RateLimiterConfig {
    /// A bucket of `burst` tokens, full at the start, refilled continuously at
    /// `rate_per_s`; each request takes one token. Allows bursts of `burst` and
    /// a long-run rate of `rate_per_s`.
    TokenBucket {
        /// Tokens added per second (fractional rates are fine: the refill is
        /// exact to 10⁻⁶ token per second, see [`RateLimiter`]).
        rate_per_s: f64,
        /// Capacity of the bucket: the largest burst admitted at once.
        burst: u32,
    },
    /// At most `limit` requests per window, the windows being `[k·window,
    /// (k+1)·window)` counted from time zero. Kept for its boundary flaw: up to
    /// 2 × `limit` can pass within a short span straddling a boundary.
    FixedWindow {
        /// Requests admitted per window.
        limit: u32,
        /// Length of each window.
        window: SimDuration,
    },
    /// At most `limit` admissions in any trailing window `(now − window, now]`,
    /// exactly (a sliding log; see [`RateLimiter`]).
    SlidingWindow {
        /// Admissions allowed within any trailing window.
        limit: u32,
        /// Length of the trailing window.
        window: SimDuration,
    },
    /// resilience4j's `RateLimiter` (`AtomicRateLimiter`).
    Resilience4j {
        /// `limitForPeriod`: permissions available in each refresh period.
        limit_for_period: u32,
        /// `limitRefreshPeriod`: length of a period; permissions are reset to
        /// `limit_for_period` at each multiple of it (counted from time zero).
        limit_refresh_period: SimDuration,
        /// `timeoutDuration`: how long a caller may wait for a permission.
        timeout: SimDuration,
    },
}

impl Default for RateLimiterConfig {
    /// resilience4j's defaults: `limitForPeriod` 50, `limitRefreshPeriod`
    /// 500 ns, `timeoutDuration` 5 s — the only kind here with library defaults.
    fn default() -> Self {
        RateLimiterConfig::Resilience4j {
            limit_for_period: 50,
            limit_refresh_period: SimDuration(500),
            timeout: SimDuration::from_secs(5),
        }
    }
}

/// What a rate limiter decides for one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateDecision {
    /// Go ahead now.
    Admit,
    /// A permission is reserved for this caller at the given time: hold the
    /// request until then and send it without asking again. Only the
    /// resilience4j kind answers this.
    WaitUntil(SimTime),
    /// Refused. `retry_after`, counted from the `now` of the call, is when a
    /// permission would next be available if nobody else took it first: what
    /// a server would put in `Retry-After`.
    Reject {
        /// Time from `now` until the limiter would admit this caller.
        retry_after: SimDuration,
    },
}

/// A rate limiter of one of the kinds of [`RateLimiterConfig`], with counters.
///
/// Why each kind keeps the state it keeps:
/// - **Token bucket**: the credit is an integer in units of 10⁻¹⁵ token, and
///   the refill per nanosecond is `round(rate_per_s × 10⁶)` such units, fixed
///   once at construction. Refill is then integer arithmetic on elapsed
///   nanoseconds with the remainder carried, so it never drifts however often
///   it is polled (an `f64` bucket loses a little at every update), and it is
///   exact for any rate that is a multiple of 10⁻⁶ per second. `retry_after`
///   is the ceiling of the missing credit over the refill per nanosecond.
/// - **Fixed window**: the index of the current window and a counter.
/// - **Sliding window**: chosen as a *sliding log* rather than the weighted
///   two-window approximation, because it is exact: a ring buffer of the last
///   `limit` admission times (memory O(`limit`), grown only as admissions
///   happen). A request is admitted iff fewer than `limit` admissions lie in
///   `(now − window, now]`, i.e. iff the buffer is not full or its oldest
///   entry is at or before `now − window`. A rejected caller learns when that
///   oldest admission leaves the window.
/// - **Resilience4j**: the active cycle and its permissions, which go negative
///   when permissions of future cycles are reserved, exactly as in
///   `AtomicRateLimiter.calculateNextState`. Cycles are counted from time zero,
///   as for a limiter created at the start of the run.
#[derive(Clone, Debug)]
pub struct RateLimiter {
    config: RateLimiterConfig,
    state: LimiterState,
    admitted: u64,
    delayed: u64,
    rejected: u64,
}

#[derive(Clone, Debug)]
enum LimiterState {
    TokenBucket(TokenBucket),
    FixedWindow(FixedWindow),
    SlidingWindow(SlidingLog),
    Resilience4j(Resilience4jLimiter),
}

impl RateLimiter {
    /// A limiter in its initial state: token bucket full, windows empty,
    /// resilience4j with `limit_for_period` permissions in cycle 0.
    pub fn new(config: RateLimiterConfig) -> Self {
        let state = match config {
            RateLimiterConfig::TokenBucket { rate_per_s, burst } => {
                LimiterState::TokenBucket(TokenBucket::new(rate_per_s, burst))
            }
            RateLimiterConfig::FixedWindow { limit, window } => {
                debug_assert!(window > SimDuration::ZERO, "fixed window must be positive");
                LimiterState::FixedWindow(FixedWindow {
                    limit,
                    window_ns: window.as_nanos().max(1),
                    index: 0,
                    count: 0,
                })
            }
            RateLimiterConfig::SlidingWindow { limit, window } => {
                LimiterState::SlidingWindow(SlidingLog {
                    limit: limit as usize,
                    window,
                    times: Vec::new(),
                    oldest: 0,
                })
            }
            RateLimiterConfig::Resilience4j {
                limit_for_period,
                limit_refresh_period,
                timeout,
            } => {
                debug_assert!(
                    limit_refresh_period > SimDuration::ZERO,
                    "limitRefreshPeriod must be positive"
                );
                LimiterState::Resilience4j(Resilience4jLimiter {
                    limit: i64::from(limit_for_period),
                    period_ns: limit_refresh_period.as_nanos().max(1),
                    timeout,
                    active_cycle: 0,
                    active_permissions: i64::from(limit_for_period),
                })
            }
        };
        RateLimiter {
            config,
            state,
            admitted: 0,
            delayed: 0,
            rejected: 0,
        }
    }

    /// Asks for one permission at `now`. A [`RateDecision::WaitUntil`] has
    /// already taken its permission: the caller must not ask again.
    pub fn try_acquire(&mut self, now: SimTime) -> RateDecision {
        let decision = match &mut self.state {
            LimiterState::TokenBucket(b) => b.try_acquire(now),
            LimiterState::FixedWindow(w) => w.try_acquire(now),
            LimiterState::SlidingWindow(l) => l.try_acquire(now),
            LimiterState::Resilience4j(r) => r.try_acquire(now),
        };
        match decision {
            RateDecision::Admit => self.admitted += 1,
            RateDecision::WaitUntil(_) => {
                self.admitted += 1;
                self.delayed += 1;
            }
            RateDecision::Reject { .. } => self.rejected += 1,
        }
        decision
    }

    /// How long a rejected caller is held before it learns of the rejection.
    ///
    /// resilience4j's blocking `acquirePermission` parks the caller for the
    /// whole `timeoutDuration` when the permission would come too late, and
    /// only then fails with `RequestNotPermitted`
    /// (`waitForPermissionIfNecessary`); so a rejection by that kind surfaces
    /// `timeout` after the request. The other kinds answer at once (zero).
    pub fn rejection_delay(&self) -> SimDuration {
        match self.config {
            RateLimiterConfig::Resilience4j { timeout, .. } => timeout,
            _ => SimDuration::ZERO,
        }
    }

    /// The configuration this limiter was built with.
    pub fn config(&self) -> &RateLimiterConfig {
        &self.config
    }

    /// Requests admitted so far, delayed ones included.
    pub fn admitted(&self) -> u64 {
        self.admitted
    }

    /// Requests admitted with a wait ([`RateDecision::WaitUntil`]) so far.
    pub fn delayed(&self) -> u64 {
        self.delayed
    }

    /// Requests rejected so far.
    pub fn rejected(&self) -> u64 {
        self.rejected
    }
}

/// One token in credit units: 10¹⁵, so that a refill of `rate_per_s` tokens
/// per second is `rate_per_s × 10⁶` units per nanosecond.
const CREDIT_PER_TOKEN: u128 = 1_000_000_000_000_000;

#[derive(Clone, Debug)]
struct TokenBucket {
    /// Credit units added per nanosecond.
    refill_per_ns: u128,
    capacity: u128,
    credit: u128,
    last: SimTime,
}

impl TokenBucket {
    fn new(rate_per_s: f64, burst: u32) -> Self {
        debug_assert!(burst >= 1, "a token bucket needs room for one token");
        let scaled = (rate_per_s * 1e6).round();
        // `as` saturates a huge rate; NaN and negative rates never refill.
        let refill_per_ns = if scaled > 0.0 { scaled as u128 } else { 0 };
        let capacity = u128::from(burst) * CREDIT_PER_TOKEN;
        TokenBucket {
            refill_per_ns,
            capacity,
            credit: capacity,
            last: SimTime::ZERO,
        }
    }

    fn try_acquire(&mut self, now: SimTime) -> RateDecision {
        let elapsed = u128::from(now.saturating_since(self.last).as_nanos());
        self.last = self.last.max(now);
        self.credit = self
            .credit
            .saturating_add(elapsed.saturating_mul(self.refill_per_ns))
            .min(self.capacity);
        if self.credit >= CREDIT_PER_TOKEN {
            self.credit -= CREDIT_PER_TOKEN;
            return RateDecision::Admit;
        }
        let missing = CREDIT_PER_TOKEN - self.credit;
        let retry_after = if self.refill_per_ns == 0 {
            SimDuration::INFINITE
        } else {
            let ns = missing.div_ceil(self.refill_per_ns);
            SimDuration(u64::try_from(ns).unwrap_or(u64::MAX))
        };
        RateDecision::Reject { retry_after }
    }
}

#[derive(Clone, Debug)]
struct FixedWindow {
    limit: u32,
    window_ns: u64,
    index: u64,
    count: u32,
}

impl FixedWindow {
    fn try_acquire(&mut self, now: SimTime) -> RateDecision {
        let index = now.as_nanos() / self.window_ns;
        if index > self.index {
            self.index = index;
            self.count = 0;
        }
        if self.count < self.limit {
            self.count += 1;
            RateDecision::Admit
        } else {
            let next_start = u128::from(self.index + 1) * u128::from(self.window_ns);
            let ns = next_start.saturating_sub(u128::from(now.as_nanos()));
            RateDecision::Reject {
                retry_after: SimDuration(u64::try_from(ns).unwrap_or(u64::MAX)),
            }
        }
    }
}

#[derive(Clone, Debug)]
struct SlidingLog {
    limit: usize,
    window: SimDuration,
    /// Admission times; once full, a ring whose oldest entry is at `oldest`.
    times: Vec<SimTime>,
    oldest: usize,
}

impl SlidingLog {
    fn try_acquire(&mut self, now: SimTime) -> RateDecision {
        if self.limit == 0 {
            return RateDecision::Reject {
                retry_after: SimDuration::INFINITE,
            };
        }
        if self.times.len() < self.limit {
            self.times.push(now);
            return RateDecision::Admit;
        }
        let leaves_at = self.times[self.oldest] + self.window;
        if leaves_at <= now {
            self.times[self.oldest] = now;
            self.oldest = (self.oldest + 1) % self.limit;
            RateDecision::Admit
        } else {
            RateDecision::Reject {
                retry_after: leaves_at - now,
            }
        }
    }
}

#[derive(Clone, Debug)]
struct Resilience4jLimiter {
    limit: i64,
    period_ns: u64,
    timeout: SimDuration,
    active_cycle: u64,
    /// Negative when permissions of coming cycles are reserved.
    active_permissions: i64,
}

impl Resilience4jLimiter {
    fn try_acquire(&mut self, now: SimTime) -> RateDecision {
        if self.limit <= 0 {
            return RateDecision::Reject {
                retry_after: SimDuration::INFINITE,
            };
        }
        let now_ns = now.as_nanos();
        let cycle = (now_ns / self.period_ns).max(self.active_cycle);
        if cycle != self.active_cycle {
            let refilled = i128::from(self.active_permissions)
                + i128::from(cycle - self.active_cycle) * i128::from(self.limit);
            // Bounded by `limit`, so the narrowing cannot fail.
            self.active_permissions = refilled.min(i128::from(self.limit)) as i64;
            self.active_cycle = cycle;
        }
        let wait_ns = if self.active_permissions >= 1 {
            0
        } else {
            // nanosToWaitForPermission with permits = 1: the rest of this
            // cycle, plus whole cycles until the reservations ahead are served.
            let period = u128::from(self.period_ns);
            let to_next_cycle = (u128::from(cycle) + 1) * period - u128::from(now_ns);
            let short = 1 - i128::from(self.active_permissions) - i128::from(self.limit);
            let full_cycles = if short > 0 {
                (short as u128).div_ceil(self.limit as u128)
            } else {
                0
            };
            u64::try_from(full_cycles * period + to_next_cycle).unwrap_or(u64::MAX)
        };
        let wait = SimDuration(wait_ns);
        if wait <= self.timeout {
            self.active_permissions -= 1;
            if wait == SimDuration::ZERO {
                RateDecision::Admit
            } else {
                RateDecision::WaitUntil(now + wait)
            }
        } else {
            RateDecision::Reject { retry_after: wait }
        }
    }
}

// ---------------------------------------------------------------------------
// Trailing-window counters shared by the two throttles
// ---------------------------------------------------------------------------

/// Two counters over a trailing window, as a ring of `n` time buckets of equal
/// width aligned to time zero. The window at `now` is the bucket holding `now`
/// and the `n − 1` before it, so it reaches back between `(n − 1)·width` and
/// `n·width`: exact to one bucket, with memory O(n) whatever the traffic.
#[derive(Clone, Debug)]
struct BucketRing {
    width_ns: u64,
    slots: Vec<[u64; 2]>,
    /// Index (time / width) of the newest bucket; every slot holds a bucket
    /// of index in `(newest − n, newest]` or zeros.
    newest: u64,
    totals: [u64; 2],
}

impl BucketRing {
    fn new(width: SimDuration, buckets: u64) -> Self {
        let n = buckets.max(1);
        BucketRing {
            width_ns: width.as_nanos().max(1),
            slots: vec![[0; 2]; usize::try_from(n).expect("bucket count fits in memory")],
            newest: 0,
            totals: [0; 2],
        }
    }

    fn len(&self) -> u64 {
        self.slots.len() as u64
    }

    fn index_of(&self, now: SimTime) -> u64 {
        now.as_nanos() / self.width_ns
    }

    /// Slots of the buckets that fall out of the window when the newest
    /// bucket moves from `newest` to `index`: those of `newest + 1 ..= index`,
    /// at most all `len` of them. Borrows nothing, so `advance` can clear them.
    fn expiring(newest: u64, len: u64, index: u64) -> impl Iterator<Item = usize> {
        let steps = index.saturating_sub(newest).min(len);
        (1..=steps).map(move |i| ((newest + i) % len) as usize)
    }

    fn advance(&mut self, now: SimTime) {
        let index = self.index_of(now);
        if index <= self.newest {
            return;
        }
        for slot in Self::expiring(self.newest, self.len(), index) {
            for (total, count) in self.totals.iter_mut().zip(self.slots[slot]) {
                *total -= count;
            }
            self.slots[slot] = [0; 2];
        }
        self.newest = index;
    }

    fn add(&mut self, now: SimTime, counter: usize, count: u64) {
        self.advance(now);
        let slot = (self.newest % self.len()) as usize;
        self.slots[slot][counter] += count;
        self.totals[counter] += count;
    }

    /// The totals over the window at `now`, without moving it.
    fn totals_at(&self, now: SimTime) -> [u64; 2] {
        let mut totals = self.totals;
        for slot in Self::expiring(self.newest, self.len(), self.index_of(now)) {
            for (total, count) in totals.iter_mut().zip(self.slots[slot]) {
                *total -= count;
            }
        }
        totals
    }
}

// ---------------------------------------------------------------------------
// Google SRE client-side adaptive throttling
// ---------------------------------------------------------------------------

const REQUESTS: usize = 0;
const ACCEPTS: usize = 1;
const SUCCESSES: usize = 1;

/// Parameters of [`AdaptiveThrottle`], named as in the SRE book.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveThrottleConfig {
    /// The trailing window over which `requests` and `accepts` are counted
    /// (the book: "the last two minutes").
    pub window: SimDuration,
    /// Number of time buckets the window is kept in; its resolution is
    /// `window / buckets` (1 s by default).
    pub buckets: u32,
    /// The multiplier `K`: the client keeps sending until `requests` reaches
    /// `K × accepts`. The book recommends 2; lower is more aggressive.
    pub k: f64,
}

impl Default for AdaptiveThrottleConfig {
    /// The book's values: a 2-minute window, `K` = 2; buckets of 1 s.
    fn default() -> Self {
        AdaptiveThrottleConfig {
            window: SimDuration::from_secs(120),
            buckets: 120,
            k: 2.0,
        }
    }
}

/// The window's counts of [`AdaptiveThrottle`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThrottleCounts {
    /// Requests the application wanted to send, locally rejected ones included.
    pub requests: u64,
    /// Requests the backend accepted (did not refuse as overloaded).
    pub accepts: u64,
}

/// Google SRE client-side adaptive throttling: a client that sees its backend
/// refuse requests rejects a growing share locally, so a refusing backend is
/// not also flooded by the cost of refusing.
///
/// `requests` counts every request the application layer asks about, *whether
/// or not it is then rejected locally*: the book defines it as "the number of
/// requests attempted by the application layer (at the client, on top of the
/// adaptive throttling system)", and grpc-go's adaptive throttler (used by
/// RLS) does the same: a locally throttled request is added to its throttle
/// count, and its requests are accepts plus throttles. That is what makes the throttle self-limiting: local rejections
/// raise `requests` without `accepts`, so while the backend accepts nothing
/// the probability tends to 1 yet a trickle still gets through to probe it.
///
/// The probability for a request is computed from the window *before* that
/// request is counted, so a client with no history never rejects its first
/// request (counting it first would give 1/2).
#[derive(Clone, Debug)]
pub struct AdaptiveThrottle {
    config: AdaptiveThrottleConfig,
    ring: BucketRing,
    locally_rejected: u64,
}

impl AdaptiveThrottle {
    /// A throttle with an empty window.
    pub fn new(config: AdaptiveThrottleConfig) -> Self {
        let buckets = u64::from(config.buckets.max(1));
        let width = SimDuration(config.window.as_nanos().div_ceil(buckets));
        AdaptiveThrottle {
            config,
            ring: BucketRing::new(width, buckets),
            locally_rejected: 0,
        }
    }

    /// Decides whether to reject the request the application wants to send at
    /// `now`, and counts it in `requests` either way. Draws exactly one value
    /// from `rng`.
    pub fn should_reject(&mut self, now: SimTime, rng: &mut StreamRng) -> bool {
        self.ring.advance(now);
        let p = self.probability_of(self.ring.totals);
        let draw = rng.unit();
        self.ring.add(now, REQUESTS, 1);
        let reject = draw < p;
        if reject {
            self.locally_rejected += 1;
        }
        reject
    }

    /// Counts a response from the backend that was not a refusal for overload
    /// (any answer but 429/503/`RESOURCE_EXHAUSTED`-style rejections).
    pub fn record_accept(&mut self, now: SimTime) {
        self.ring.add(now, ACCEPTS, 1);
    }

    /// The probability with which a request at `now` would be rejected.
    pub fn rejection_probability(&self, now: SimTime) -> f64 {
        self.probability_of(self.ring.totals_at(now))
    }

    /// `requests` and `accepts` over the window at `now`.
    pub fn window_counts(&self, now: SimTime) -> ThrottleCounts {
        let [requests, accepts] = self.ring.totals_at(now);
        ThrottleCounts { requests, accepts }
    }

    /// Requests rejected locally so far (over the whole run).
    pub fn locally_rejected(&self) -> u64 {
        self.locally_rejected
    }

    /// The configuration this throttle was built with.
    pub fn config(&self) -> &AdaptiveThrottleConfig {
        &self.config
    }

    fn probability_of(&self, [requests, accepts]: [u64; 2]) -> f64 {
        let requests = requests as f64;
        let excess = requests - self.config.k * accepts as f64;
        if excess > 0.0 {
            excess / (requests + 1.0)
        } else {
            0.0
        }
    }
}

// ---------------------------------------------------------------------------
// Envoy admission control
// ---------------------------------------------------------------------------

/// Parameters of [`AdmissionControl`], named as in Envoy's
/// `envoy.extensions.filters.http.admission_control.v3.AdmissionControl`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdmissionControlConfig {
    /// `sampling_window`: the trailing window of request outcomes.
    pub sampling_window: SimDuration,
    /// `sr_threshold` as a fraction in (0, 1]: the lowest success rate at which
    /// nothing is rejected (Envoy takes a percentage and caps it at 100%).
    pub sr_threshold: f64,
    /// `aggression`: the exponent 1/aggression bends the curve so that higher
    /// values reject more at mild failure rates. Envoy clamps values below 1.0
    /// up to 1.0, and so does this filter.
    pub aggression: f64,
    /// `max_rejection_probability` as a fraction: the cap, so that some
    /// traffic always reaches the upstream to show it has recovered.
    pub max_rejection_probability: f64,
    /// `rps_threshold`: below this average rate over the window (whole
    /// requests per second, rounded down as Envoy does) nothing is rejected.
    pub rps_threshold: u32,
}

impl Default for AdmissionControlConfig {
    /// Envoy's defaults: window 30 s, threshold 95%, aggression 1.0, cap 80%,
    /// no rps threshold.
    fn default() -> Self {
        AdmissionControlConfig {
            sampling_window: SimDuration::from_secs(30),
            sr_threshold: 0.95,
            aggression: 1.0,
            max_rejection_probability: 0.8,
            rps_threshold: 0,
        }
    }
}

/// The window's counts of [`AdmissionControl`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdmissionCounts {
    /// `n`: outcomes recorded (requests that passed the filter and completed).
    pub requests: u64,
    /// `s`: of those, the successful ones.
    pub successes: u64,
}

/// Envoy's admission control filter: rejects with probability
/// `min(max(0, (n − s / sr_threshold) / (n + 1))^(1 / aggression),
/// max_rejection_probability)` over the sampling window.
///
/// Unlike the SRE throttle, requests it rejects are *not* counted: Envoy sets
/// `record_request_ = false` on a rejected stream, so `n` and `s` describe only
/// what the upstream did; `n` grows when an outcome is recorded, not when a
/// request is asked about.
///
/// Choices where Envoy's behaviour does not carry over verbatim:
/// - The window is kept in 1-second buckets as Envoy's thread-local controller
///   does (its hard-coded history granularity), but aligned to time zero rather
///   than to the first request of each bucket.
/// - The average rate for `rps_threshold` is `n / window` in whole seconds,
///   rounded down (Envoy divides by the larger of the window and the age of its
///   oldest bucket, which is the window once the history is full).
/// - The draw is Envoy's: reject iff `10⁴ · p > r mod 10⁴` for a random
///   64-bit `r`, i.e. the probability is resolved to 4 digits.
#[derive(Clone, Debug)]
pub struct AdmissionControl {
    config: AdmissionControlConfig,
    ring: BucketRing,
    window_secs: u64,
    rejected: u64,
}

/// The resolution of Envoy's rejection draw (`accuracy` in its source).
const ENVOY_DRAW_ACCURACY: u64 = 10_000;

impl AdmissionControl {
    /// A filter with an empty sampling window.
    pub fn new(config: AdmissionControlConfig) -> Self {
        let window = config.sampling_window.as_nanos().max(1);
        let width = window.min(NANOS_PER_SEC);
        AdmissionControl {
            config,
            ring: BucketRing::new(SimDuration(width), window.div_ceil(width)),
            window_secs: (window / NANOS_PER_SEC).max(1),
            rejected: 0,
        }
    }

    /// Decides whether to reject a request at `now`. Does not count it: call
    /// [`AdmissionControl::record`] when a request that was let through
    /// completes. Draws exactly one value from `rng`.
    pub fn should_reject(&mut self, now: SimTime, rng: &mut StreamRng) -> bool {
        self.ring.advance(now);
        let p = self.probability_of(self.ring.totals);
        let draw = rng.next_u64() % ENVOY_DRAW_ACCURACY;
        let reject = ENVOY_DRAW_ACCURACY as f64 * p > draw as f64;
        if reject {
            self.rejected += 1;
        }
        reject
    }

    /// Records the outcome of a request the filter let through, at the time
    /// its response (or its failure: timeout, reset, 5xx) is known.
    pub fn record(&mut self, now: SimTime, success: bool) {
        self.ring.add(now, REQUESTS, 1);
        if success {
            self.ring.add(now, SUCCESSES, 1);
        }
    }

    /// The probability with which a request at `now` would be rejected, the
    /// `rps_threshold` gate included.
    pub fn rejection_probability(&self, now: SimTime) -> f64 {
        self.probability_of(self.ring.totals_at(now))
    }

    /// `n` and `s` over the sampling window at `now`.
    pub fn window_counts(&self, now: SimTime) -> AdmissionCounts {
        let [requests, successes] = self.ring.totals_at(now);
        AdmissionCounts {
            requests,
            successes,
        }
    }

    /// Requests rejected so far (over the whole run).
    pub fn rejected(&self) -> u64 {
        self.rejected
    }

    /// The configuration this filter was built with.
    pub fn config(&self) -> &AdmissionControlConfig {
        &self.config
    }

    fn probability_of(&self, [requests, successes]: [u64; 2]) -> f64 {
        let c = &self.config;
        if requests / self.window_secs < u64::from(c.rps_threshold) {
            return 0.0;
        }
        let n = requests as f64;
        let sr_threshold = c.sr_threshold.min(1.0);
        let linear = (n - successes as f64 / sr_threshold) / (n + 1.0);
        if linear.is_nan() || linear <= 0.0 {
            return 0.0;
        }
        let aggression = c.aggression.max(1.0);
        let p = if aggression == 1.0 {
            linear
        } else {
            libm::pow(linear, 1.0 / aggression)
        };
        p.min(c.max_rejection_probability)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stormsim_engine::StreamKey;

    fn ms(x: f64) -> SimDuration {
        SimDuration::from_ms(x)
    }
    fn secs(s: u64) -> SimDuration {
        SimDuration::from_secs(s)
    }
    fn at_ms(x: f64) -> SimTime {
        SimTime::ZERO + ms(x)
    }
    fn at_s(s: u64) -> SimTime {
        SimTime::ZERO + secs(s)
    }
    fn reject(retry_after: SimDuration) -> RateDecision {
        RateDecision::Reject { retry_after }
    }
    fn rng(seed: u64) -> StreamRng {
        StreamKey::root(seed).label("rate_limit_test").rng()
    }

    // --- token bucket -----------------------------------------------------

    #[test]
    fn token_bucket_starts_full_and_refills_one_token_per_100_ms_at_10_per_s() {
        let mut b = RateLimiter::new(RateLimiterConfig::TokenBucket {
            rate_per_s: 10.0,
            burst: 5,
        });
        for _ in 0..5 {
            assert_eq!(b.try_acquire(SimTime::ZERO), RateDecision::Admit);
        }
        assert_eq!(b.try_acquire(SimTime::ZERO), reject(ms(100.0)));
        // One nanosecond short of the token: still refused, 1 ns to go.
        assert_eq!(
            b.try_acquire(SimTime(100_000_000 - 1)),
            reject(SimDuration(1))
        );
        assert_eq!(b.try_acquire(at_ms(100.0)), RateDecision::Admit);
        // Exactly one token came: the next caller waits a full interval.
        assert_eq!(b.try_acquire(at_ms(100.0)), reject(ms(100.0)));
        assert_eq!(b.try_acquire(at_ms(150.0)), reject(ms(50.0)));
        assert_eq!(b.admitted(), 6);
        assert_eq!(b.rejected(), 4);
        assert_eq!(b.delayed(), 0);
        assert_eq!(b.rejection_delay(), SimDuration::ZERO);
    }

    #[test]
    fn token_bucket_refill_stops_at_burst() {
        let mut b = RateLimiter::new(RateLimiterConfig::TokenBucket {
            rate_per_s: 10.0,
            burst: 5,
        });
        for _ in 0..5 {
            b.try_acquire(SimTime::ZERO);
        }
        let later = at_s(3600);
        for _ in 0..5 {
            assert_eq!(b.try_acquire(later), RateDecision::Admit);
        }
        assert_eq!(b.try_acquire(later), reject(ms(100.0)));
    }

    #[test]
    fn token_bucket_with_a_non_integer_interval_does_not_drift() {
        // 3 tokens/s: one every 333 333 333⅓ ns, not a whole number of ns.
        let mut b = RateLimiter::new(RateLimiterConfig::TokenBucket {
            rate_per_s: 3.0,
            burst: 3,
        });
        for _ in 0..3 {
            b.try_acquire(SimTime::ZERO);
        }
        // ceil(10^15 / (3·10^6)) = ceil(333 333 333.3) ns.
        assert_eq!(
            b.try_acquire(SimTime::ZERO),
            reject(SimDuration(333_333_334))
        );
        // Poll every millisecond for 10 s, taking what is there: the fractional
        // remainders are carried, so exactly 3 × 10 = 30 tokens arrive, the
        // 30th exactly at 10 s.
        let mut got = 0;
        for t in 1..=10_000u64 {
            if b.try_acquire(SimTime(t * 1_000_000)) == RateDecision::Admit {
                got += 1;
            }
        }
        assert_eq!(got, 30);
        assert_eq!(
            b.try_acquire(at_s(10)),
            reject(SimDuration(333_333_334)),
            "the bucket is empty exactly at 10 s, with no leftover credit"
        );
    }

    #[test]
    fn token_bucket_with_zero_rate_never_refills() {
        let mut b = RateLimiter::new(RateLimiterConfig::TokenBucket {
            rate_per_s: 0.0,
            burst: 1,
        });
        assert_eq!(b.try_acquire(SimTime::ZERO), RateDecision::Admit);
        assert_eq!(b.try_acquire(at_s(1000)), reject(SimDuration::INFINITE));
    }

    // --- fixed and sliding windows -----------------------------------------

    /// S5: 100 requests at 0:59 and 100 at 1:01 against "100 per minute".
    fn burst_at(limiter: &mut RateLimiter, t: SimTime, n: u32) -> (u32, Vec<RateDecision>) {
        let mut admitted = 0;
        let mut rejections = Vec::new();
        for _ in 0..n {
            match limiter.try_acquire(t) {
                RateDecision::Admit => admitted += 1,
                other => rejections.push(other),
            }
        }
        (admitted, rejections)
    }

    #[test]
    fn fixed_window_lets_twice_the_limit_through_across_a_boundary() {
        let mut w = RateLimiter::new(RateLimiterConfig::FixedWindow {
            limit: 100,
            window: secs(60),
        });
        assert_eq!(burst_at(&mut w, at_s(59), 100), (100, vec![]));
        // The 101st in the first minute waits for the boundary at 60 s.
        assert_eq!(w.try_acquire(at_s(59)), reject(secs(1)));
        // The flaw: a fresh window at 60 s admits another full 100 at 61 s,
        // so 200 pass within 2 s against a limit of 100 per minute.
        assert_eq!(burst_at(&mut w, at_s(61), 100), (100, vec![]));
        assert_eq!(w.try_acquire(at_s(61)), reject(secs(59)));
        assert_eq!(w.admitted(), 200);
        assert_eq!(w.rejected(), 2);
    }

    #[test]
    fn fixed_window_resets_at_multiples_of_the_window_from_time_zero() {
        let mut w = RateLimiter::new(RateLimiterConfig::FixedWindow {
            limit: 1,
            window: secs(10),
        });
        assert_eq!(w.try_acquire(at_s(9)), RateDecision::Admit);
        assert_eq!(
            w.try_acquire(SimTime(10_000_000_000 - 1)),
            reject(SimDuration(1))
        );
        assert_eq!(w.try_acquire(at_s(10)), RateDecision::Admit);
        // Skipping several windows resets too.
        assert_eq!(w.try_acquire(at_s(55)), RateDecision::Admit);
        assert_eq!(w.try_acquire(at_s(55)), reject(secs(5)));
    }

    #[test]
    fn sliding_window_rejects_the_boundary_burst() {
        let mut w = RateLimiter::new(RateLimiterConfig::SlidingWindow {
            limit: 100,
            window: secs(60),
        });
        assert_eq!(burst_at(&mut w, at_s(59), 100), (100, vec![]));
        // At 61 s all 100 admissions of 59 s are inside (1 s, 61 s]: they
        // leave at 59 + 60 = 119 s, 58 s from now.
        let (admitted, rejections) = burst_at(&mut w, at_s(61), 100);
        assert_eq!(admitted, 0);
        assert!(rejections.iter().all(|d| *d == reject(secs(58))));
        assert_eq!(
            w.try_acquire(SimTime(119_000_000_000 - 1)),
            reject(SimDuration(1))
        );
        // At 119 s the window (59 s, 119 s] excludes them: a full 100 again.
        assert_eq!(burst_at(&mut w, at_s(119), 100), (100, vec![]));
        assert_eq!(w.try_acquire(at_s(119)), reject(secs(60)));
    }

    #[test]
    fn sliding_log_wraps_its_ring_and_reports_when_the_oldest_leaves() {
        let mut w = RateLimiter::new(RateLimiterConfig::SlidingWindow {
            limit: 3,
            window: secs(10),
        });
        for t in [0, 1, 2] {
            assert_eq!(w.try_acquire(at_s(t)), RateDecision::Admit);
        }
        // The oldest, 0 s, leaves at 10 s; its slot then takes 10 s.
        assert_eq!(w.try_acquire(at_s(5)), reject(secs(5)));
        assert_eq!(w.try_acquire(at_s(10)), RateDecision::Admit);
        // Next oldest, 1 s, leaves at 11 s; then 2 s at 12 s.
        assert_eq!(w.try_acquire(at_s(10)), reject(secs(1)));
        assert_eq!(w.try_acquire(at_s(11)), RateDecision::Admit);
        assert_eq!(w.try_acquire(at_s(12)), RateDecision::Admit);
        // The log is now {10, 11, 12} s, wrapped: 10 s leaves at 20 s.
        assert_eq!(w.try_acquire(at_s(12)), reject(secs(8)));
        assert_eq!(w.try_acquire(at_s(20)), RateDecision::Admit);
    }

    #[test]
    fn window_limiters_with_zero_limit_reject_everything() {
        let mut s = RateLimiter::new(RateLimiterConfig::SlidingWindow {
            limit: 0,
            window: secs(1),
        });
        assert_eq!(s.try_acquire(at_s(5)), reject(SimDuration::INFINITE));
        let mut f = RateLimiter::new(RateLimiterConfig::FixedWindow {
            limit: 0,
            window: secs(1),
        });
        assert_eq!(f.try_acquire(at_ms(500.0)), reject(ms(500.0)));
    }

    // --- resilience4j -------------------------------------------------------

    #[test]
    fn resilience4j_defaults_are_the_librarys() {
        assert_eq!(
            RateLimiterConfig::default(),
            RateLimiterConfig::Resilience4j {
                limit_for_period: 50,
                limit_refresh_period: SimDuration(500),
                timeout: secs(5),
            }
        );
        let mut r = RateLimiter::new(RateLimiterConfig::default());
        assert_eq!(burst_at(&mut r, SimTime(100), 50), (50, vec![]));
        // The 51st waits for the next 500 ns cycle, well within 5 s.
        assert_eq!(
            r.try_acquire(SimTime(100)),
            RateDecision::WaitUntil(SimTime(500))
        );
        assert_eq!(r.rejection_delay(), secs(5));
    }

    #[test]
    fn resilience4j_reserves_future_permissions_so_later_callers_queue_behind() {
        // 2 permissions per second, callers wait up to 2.5 s.
        let mut r = RateLimiter::new(RateLimiterConfig::Resilience4j {
            limit_for_period: 2,
            limit_refresh_period: secs(1),
            timeout: ms(2500.0),
        });
        let t = at_ms(200.0);
        assert_eq!(r.try_acquire(t), RateDecision::Admit);
        assert_eq!(r.try_acquire(t), RateDecision::Admit);
        // Cycle 1 (from 1 s) serves the next two, cycle 2 (from 2 s) two more.
        assert_eq!(r.try_acquire(t), RateDecision::WaitUntil(at_s(1)));
        assert_eq!(r.try_acquire(t), RateDecision::WaitUntil(at_s(1)));
        assert_eq!(r.try_acquire(t), RateDecision::WaitUntil(at_s(2)));
        assert_eq!(r.try_acquire(t), RateDecision::WaitUntil(at_s(2)));
        // Cycle 3 starts 2.8 s from now, past the 2.5 s timeout: refused and,
        // unlike the waiters, nothing is reserved.
        assert_eq!(r.try_acquire(t), reject(ms(2800.0)));
        assert_eq!(r.try_acquire(t), reject(ms(2800.0)));
        // At 1 s cycle 1's permissions go to the two reservations ahead (-4 + 2
        // = -2), so a newcomer gets cycle 3's first, at 3 s: 2 s ≤ 2.5 s.
        assert_eq!(r.try_acquire(at_s(1)), RateDecision::WaitUntil(at_s(3)));
        assert_eq!(r.admitted(), 7);
        assert_eq!(r.delayed(), 5);
        assert_eq!(r.rejected(), 2);
    }

    #[test]
    fn resilience4j_waits_when_the_wait_equals_the_timeout() {
        let mut r = RateLimiter::new(RateLimiterConfig::Resilience4j {
            limit_for_period: 1,
            limit_refresh_period: secs(1),
            timeout: secs(1),
        });
        assert_eq!(r.try_acquire(SimTime::ZERO), RateDecision::Admit);
        // resilience4j reserves when timeoutDuration >= nanosToWait.
        assert_eq!(
            r.try_acquire(SimTime::ZERO),
            RateDecision::WaitUntil(at_s(1))
        );
        assert_eq!(r.try_acquire(SimTime::ZERO), reject(secs(2)));
    }

    #[test]
    fn resilience4j_with_zero_timeout_never_waits_and_never_banks_idle_cycles() {
        let mut r = RateLimiter::new(RateLimiterConfig::Resilience4j {
            limit_for_period: 3,
            limit_refresh_period: ms(100.0),
            timeout: SimDuration::ZERO,
        });
        assert_eq!(burst_at(&mut r, at_ms(10.0), 3), (3, vec![]));
        assert_eq!(r.try_acquire(at_ms(10.0)), reject(ms(90.0)));
        // Ten idle cycles refill to limit_for_period, not 10 × it.
        let (admitted, rejections) = burst_at(&mut r, at_ms(1050.0), 5);
        assert_eq!(admitted, 3);
        assert_eq!(rejections, vec![reject(ms(50.0)); 2]);
        assert_eq!(r.rejection_delay(), SimDuration::ZERO);
    }

    // --- bucket ring --------------------------------------------------------

    #[test]
    fn bucket_ring_forgets_exactly_the_buckets_that_leave_the_window() {
        let mut ring = BucketRing::new(secs(1), 3);
        ring.add(at_ms(500.0), 0, 1); // bucket 0
        ring.add(at_ms(1500.0), 0, 10); // bucket 1
        ring.add(at_ms(2500.0), 1, 100); // bucket 2
        assert_eq!(ring.totals_at(at_ms(2999.0)), [11, 100]);
        assert_eq!(ring.totals_at(at_s(3)), [10, 100]); // bucket 0 gone
        assert_eq!(ring.totals_at(at_s(5)), [0, 0]);
        assert_eq!(ring.totals_at(at_s(500)), [0, 0]);
        ring.advance(at_s(4));
        assert_eq!(ring.totals, [0, 100]);
        ring.add(at_s(1000), 0, 7); // a jump far past the window
        assert_eq!(ring.totals, [7, 0]);
        assert_eq!(ring.totals_at(at_s(1000)), [7, 0]);
    }

    // --- SRE adaptive throttling -----------------------------------------------

    fn throttle_with(requests: u64, accepts: u64) -> AdaptiveThrottle {
        let mut t = AdaptiveThrottle::new(AdaptiveThrottleConfig::default());
        t.ring.add(SimTime::ZERO, REQUESTS, requests);
        t.ring.add(SimTime::ZERO, ACCEPTS, accepts);
        t
    }

    #[test]
    fn adaptive_throttle_defaults_are_the_books() {
        let c = AdaptiveThrottleConfig::default();
        assert_eq!(c.window, secs(120));
        assert_eq!(c.k, 2.0);
        assert_eq!(AdaptiveThrottle::new(c).ring.width_ns, NANOS_PER_SEC);
    }

    #[test]
    fn adaptive_throttle_probability_follows_the_formula() {
        let mut rng = rng(1);
        let mut t = AdaptiveThrottle::new(AdaptiveThrottleConfig::default());
        let now = at_s(1);
        assert_eq!(t.rejection_probability(now), 0.0);
        // The very first request is never rejected: p is taken before it counts.
        assert!(!t.should_reject(now, &mut rng));
        for _ in 0..9 {
            t.should_reject(now, &mut rng);
        }
        // requests 10, accepts 0: 10 / 11.
        assert_eq!(t.rejection_probability(now), 10.0 / 11.0);
        for _ in 0..4 {
            t.record_accept(now);
        }
        // (10 − 2·4) / 11 = 2/11.
        assert_eq!(t.rejection_probability(now), 2.0 / 11.0);
        t.record_accept(now);
        // 10 − 2·5 = 0: nothing rejected at exactly requests = K·accepts.
        assert_eq!(t.rejection_probability(now), 0.0);
        assert_eq!(
            t.window_counts(now),
            ThrottleCounts {
                requests: 10,
                accepts: 5
            }
        );
        // K = 1.1: the client sheds as soon as the backend refuses ~9%.
        let mut eager = AdaptiveThrottle::new(AdaptiveThrottleConfig {
            k: 1.1,
            ..Default::default()
        });
        eager.ring.add(now, REQUESTS, 100);
        eager.ring.add(now, ACCEPTS, 80);
        assert!((eager.rejection_probability(now) - 12.0 / 101.0).abs() < 1e-12);
    }

    #[test]
    fn adaptive_throttle_counts_locally_rejected_requests() {
        let mut rng = rng(2);
        let mut t = throttle_with(1000, 0);
        let now = at_s(1);
        let mut rejected = 0;
        for _ in 0..200 {
            if t.should_reject(now, &mut rng) {
                rejected += 1;
            }
        }
        // All 200 count, sent or not; the probability keeps climbing to 1.
        assert_eq!(t.window_counts(now).requests, 1200);
        assert_eq!(t.locally_rejected(), rejected);
        assert!(rejected > 0);
        assert_eq!(t.rejection_probability(now), 1200.0 / 1201.0);
    }

    #[test]
    fn adaptive_throttle_never_rejects_while_the_backend_accepts() {
        let mut rng = rng(3);
        let mut t = AdaptiveThrottle::new(AdaptiveThrottleConfig::default());
        for i in 0..5_000u64 {
            let now = SimTime(i * 10_000_000);
            assert!(!t.should_reject(now, &mut rng));
            t.record_accept(now);
        }
        assert_eq!(t.locally_rejected(), 0);
    }

    #[test]
    fn adaptive_throttle_forgets_after_the_window() {
        let mut rng = rng(4);
        let mut t = AdaptiveThrottle::new(AdaptiveThrottleConfig::default());
        for _ in 0..10 {
            t.should_reject(at_ms(500.0), &mut rng); // bucket [0 s, 1 s)
        }
        // Still inside the 120 one-second buckets ending at 119.999 s.
        assert_eq!(t.rejection_probability(at_ms(119_999.0)), 10.0 / 11.0);
        // From 120 s the window is buckets 1..=120: the burst is gone.
        assert_eq!(t.rejection_probability(at_s(120)), 0.0);
        assert_eq!(
            t.window_counts(at_s(120)),
            ThrottleCounts {
                requests: 0,
                accepts: 0
            }
        );
        assert!(!t.should_reject(at_s(120), &mut rng));
    }

    #[test]
    fn adaptive_throttle_rejection_share_matches_the_probability() {
        // requests 1000, accepts 250, K 2: p = (1000 − 500) / 1001 ≈ 0.4995.
        let base = throttle_with(1000, 250);
        let p = 500.0 / 1001.0;
        assert_eq!(base.rejection_probability(SimTime::ZERO), p);
        // Each draw asks a fresh copy, so every draw sees exactly p. The number
        // rejected in N draws is Binomial(N, p): its share has standard error
        // sqrt(p(1 − p) / N) ≤ 0.5 / sqrt(N) = 0.0025 for N = 40 000. A bound
        // of 5 standard errors (0.0125) fails by chance with probability
        // about 6e-7 per seed, so it holds for any seed, not a tuned one.
        let n = 40_000;
        let tolerance = 5.0 * (p * (1.0 - p) / n as f64).sqrt();
        for seed in [11, 12, 13] {
            let mut rng = rng(seed);
            let rejected = (0..n)
                .filter(|_| base.clone().should_reject(SimTime::ZERO, &mut rng))
                .count();
            let share = rejected as f64 / n as f64;
            assert!(
                (share - p).abs() < tolerance,
                "seed {seed}: share {share} vs p {p} ± {tolerance}"
            );
        }
    }

    // --- Envoy admission control ------------------------------------------------

    fn admission_with(config: AdmissionControlConfig, n: u64, s: u64) -> AdmissionControl {
        let mut a = AdmissionControl::new(config);
        a.ring.add(SimTime::ZERO, REQUESTS, n);
        a.ring.add(SimTime::ZERO, SUCCESSES, s);
        a
    }

    #[test]
    fn admission_control_defaults_are_envoys() {
        let c = AdmissionControlConfig::default();
        assert_eq!(c.sampling_window, secs(30));
        assert_eq!(c.sr_threshold, 0.95);
        assert_eq!(c.aggression, 1.0);
        assert_eq!(c.max_rejection_probability, 0.8);
        assert_eq!(c.rps_threshold, 0);
        let a = AdmissionControl::new(c);
        assert_eq!((a.ring.width_ns, a.ring.len()), (NANOS_PER_SEC, 30));
    }

    #[test]
    fn admission_control_probability_follows_the_formula() {
        let c = AdmissionControlConfig::default();
        let p = |n, s| admission_with(c, n, s).rejection_probability(SimTime::ZERO);
        assert_eq!(p(0, 0), 0.0);
        // All successes, or a success rate right at 95%: nothing rejected.
        assert_eq!(p(100, 100), 0.0);
        assert_eq!(p(100, 95), 0.0);
        // 50% success: (100 − 50 / 0.95) / 101 = 47.368… / 101 ≈ 0.46899.
        let half = (100.0 - 50.0 / 0.95) / 101.0;
        assert!((p(100, 50) - half).abs() < 1e-12);
        assert!((half - 0.468_99).abs() < 1e-5);
        // Nothing succeeds: 100/101, capped at max_rejection_probability.
        assert_eq!(p(100, 0), 0.8);
        // aggression 2 takes the square root: higher at mild failure rates.
        let aggressive = AdmissionControlConfig {
            aggression: 2.0,
            ..c
        };
        let pa = admission_with(aggressive, 100, 50).rejection_probability(SimTime::ZERO);
        assert!((pa - half.sqrt()).abs() < 1e-12);
        // Envoy clamps aggression below 1 up to 1.
        let meek = AdmissionControlConfig {
            aggression: 0.5,
            ..c
        };
        let pm = admission_with(meek, 100, 50).rejection_probability(SimTime::ZERO);
        assert!((pm - half).abs() < 1e-12);
    }

    #[test]
    fn admission_control_does_not_count_what_it_rejects() {
        let mut rng = rng(5);
        let mut a = admission_with(AdmissionControlConfig::default(), 100, 0);
        for _ in 0..100 {
            a.should_reject(at_s(1), &mut rng);
        }
        assert!(a.rejected() > 0);
        assert_eq!(
            a.window_counts(at_s(1)),
            AdmissionCounts {
                requests: 100,
                successes: 0
            }
        );
        a.record(at_s(1), true);
        a.record(at_s(1), false);
        assert_eq!(
            a.window_counts(at_s(1)),
            AdmissionCounts {
                requests: 102,
                successes: 1
            }
        );
    }

    #[test]
    fn admission_control_lets_everything_through_below_the_rps_threshold() {
        let c = AdmissionControlConfig {
            rps_threshold: 5,
            ..Default::default()
        };
        let mut rng = rng(6);
        // 149 failures in 30 s: 4 rps (rounded down) < 5, so no rejection.
        let mut a = admission_with(c, 149, 0);
        assert_eq!(a.rejection_probability(SimTime::ZERO), 0.0);
        for _ in 0..1000 {
            assert!(!a.should_reject(SimTime::ZERO, &mut rng));
        }
        // The 150th makes 5 rps: the formula applies, capped at 0.8.
        a.record(SimTime::ZERO, false);
        assert_eq!(a.rejection_probability(SimTime::ZERO), 0.8);
    }

    #[test]
    fn admission_control_forgets_after_the_sampling_window() {
        let mut a = AdmissionControl::new(AdmissionControlConfig::default());
        for _ in 0..10 {
            a.record(at_ms(200.0), false);
        }
        assert_eq!(a.rejection_probability(at_ms(29_999.0)), 0.8);
        assert_eq!(a.rejection_probability(at_s(30)), 0.0);
        a.record(at_s(30), true);
        assert_eq!(
            a.window_counts(at_s(30)),
            AdmissionCounts {
                requests: 1,
                successes: 1
            }
        );
    }

    #[test]
    fn admission_control_rejection_share_matches_the_capped_probability() {
        // All failures: p = min(1000/1001, 0.8) = 0.8, and should_reject does
        // not change the counts, so every draw sees p = 0.8. Envoy's draw
        // rejects iff r mod 10⁴ < 8000, probability 0.8 up to a 2^-50 modulo
        // bias. Binomial share: standard error sqrt(0.8·0.2 / 40 000) = 0.002;
        // 5 of them (0.01) fail by chance with probability about 6e-7.
        let n = 40_000;
        let p = 0.8;
        let tolerance = 5.0 * (p * (1.0 - p) / n as f64).sqrt();
        for seed in [21, 22, 23] {
            let mut rng = rng(seed);
            let mut a = admission_with(AdmissionControlConfig::default(), 1000, 0);
            let rejected = (0..n)
                .filter(|_| a.should_reject(SimTime::ZERO, &mut rng))
                .count();
            let share = rejected as f64 / n as f64;
            assert!(
                (share - p).abs() < tolerance,
                "seed {seed}: share {share} vs p {p} ± {tolerance}"
            );
            assert_eq!(a.rejected(), rejected as u64);
        }
    }
}
