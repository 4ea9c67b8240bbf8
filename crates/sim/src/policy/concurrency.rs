//! Server-side adaptive admission: how many requests a service lets in at once,
//! and which queued requests it sheds because they have waited too long.
//!
//! # Concurrency limits: Netflix concurrency-limits
//!
//! [`ConcurrencyLimit`] follows `com.netflix.concurrency.limits` (the Java
//! library, `limit/*.java` and `limiter/SimpleLimiter.java`), keeping its
//! parameter names and defaults:
//!
//! - **Fixed** (`FixedLimit`): a constant; the bulkhead case, for comparison.
//! - **AIMD** (`AIMDLimit`): loss based. On each completed request, if it was
//!   dropped or its RTT exceeded `timeout` (strictly greater), the limit becomes
//!   `(int) (limit × backoffRatio)` (truncated); otherwise, if the request saw
//!   `inflight × 2 >= limit` when it was admitted, the limit grows by one; the
//!   result is always clamped as `min(maxLimit, max(minLimit, limit))`, also
//!   when neither branch fired. Defaults: `initialLimit` 20, `minLimit` 20,
//!   `maxLimit` 200, `backoffRatio` 0.9 (the builder accepts [0.5, 1.0)),
//!   `timeout` 5 s. (Older releases floored at 1 and shrank by at least one per
//!   drop; the current one, followed here, has min/max and plain truncation.)
//! - **Gradient2** (`Gradient2Limit`): latency based. It compares each sample's
//!   RTT (`shortRtt`) with a slow exponential average of RTTs (`longRtt`, a
//!   warm-up mean over the first 10 samples, then an EMA with factor
//!   `2 / (longWindow + 1)`):
//!
//!   ```text
//!   if longRtt / shortRtt > 2: longRtt ← longRtt × 0.95   (recover after overload)
//!   if inflight < estimatedLimit / 2: keep the limit        (app limited: no evidence)
//!   gradient = clamp(rttTolerance × longRtt / shortRtt, 0.5, 1.0)
//!   newLimit = estimatedLimit × gradient + queueSize
//!   newLimit = estimatedLimit × (1 − smoothing) + newLimit × smoothing
//!   estimatedLimit = clamp(newLimit, minLimit, maxConcurrency); limit = (int) estimatedLimit
//!   ```
//!
//!   Defaults: `initialLimit` 20, `minLimit` 20, `maxConcurrency` 200,
//!   `smoothing` 0.2, `rttTolerance` 1.5, `longWindow` 600, `queueSize` 4 (a
//!   constant; the library also accepts a function of the limit). Gradient2
//!   ignores `didDrop`. It was chosen over Envoy's adaptive-concurrency filter
//!   because it updates on every sample with no sampling-window timers and no
//!   periodic min-RTT probing phase, so its state is a handful of numbers.
//!
//! The limiter around a limit is `SimpleLimiter`: a request is admitted iff the
//! number already in flight is below the limit ([`ConcurrencyLimit::try_acquire`]),
//! and on completion `onSample(startTime, rtt, inflight, didDrop)` is called with
//! the in-flight count **captured when the request was admitted, itself
//! included** (`inFlight.incrementAndGet()` in `AbstractLimiter`), not the count
//! at completion. Requests that completed with an "ignore" outcome (e.g. a
//! client error) are not sampled at all. The library's `WindowedLimit`
//! decorator (aggregating samples per window before updating) is not modelled:
//! both algorithms here update on each sample, as they do undecorated.
//!
//! # Queue management: CoDel (RFC 8289)
//!
//! [`CoDel`] is Controlled Delay (Nichols & Jacobson; RFC 8289), applied to a
//! service's request queue: `target` 5 ms, `interval` 100 ms. It decides at
//! dequeue time whether to drop the head request from its sojourn time. The
//! control law is the RFC's: once the sojourn time has stayed at or above
//! `target` for a whole `interval` (`first_above_time`), CoDel enters the
//! dropping state and drops at `drop_next`, advanced by `interval / sqrt(count)`
//! after each drop, until a sojourn time falls below `target`. Re-entering soon
//! after leaving resumes from the previous drop rate (`count = count −
//! lastcount` if that is above 1 and the last drop was under 16 intervals ago;
//! the Linux variant, which the RFC adopts). Where the RFC's pseudocode and
//! Linux differ, the RFC is followed: the drop is allowed at `now >=
//! first_above_time` (Linux waits for strictly after) and `interval /
//! sqrt(count)` is computed exactly, rounded once to whole nanoseconds (Linux
//! uses a Newton-iterated reciprocal square root).
//!
//! Facebook's "adaptive LIFO + CoDel" (Maurer, *Fail at Scale*, 2015) is a
//! simpler relative: it keeps a constant short timeout (e.g. 5 ms) for queued
//! requests while the queue has not been empty for the last interval (100 ms),
//! and serves LIFO under overload. LIFO is a queue discipline of the service,
//! not part of this module.

use stormsim_engine::{SimDuration, SimTime};

/// Netflix `AIMDLimit` parameters, with the library's defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AimdConfig {
    /// `initialLimit`: the limit before the first sample (not clamped until then).
    pub initial_limit: u32,
    /// `minLimit`: the floor of the limit.
    pub min_limit: u32,
    /// `maxLimit`: the ceiling of the limit.
    pub max_limit: u32,
    /// `backoffRatio`: multiplies the limit on a drop; in [0.5, 1.0).
    pub backoff_ratio: f64,
    /// `timeout`: an RTT strictly above this counts as a drop.
    pub timeout: SimDuration,
}

impl Default for AimdConfig {
    fn default() -> Self {
        AimdConfig {
            initial_limit: 20,
            min_limit: 20,
            max_limit: 200,
            backoff_ratio: 0.9,
            timeout: SimDuration::from_secs(5),
        }
    }
}

/// Netflix `Gradient2Limit` parameters, with the library's defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gradient2Config {
    /// `initialLimit`: the limit before the first sample.
    pub initial_limit: u32,
    /// `minLimit`: the floor of the estimated limit.
    pub min_limit: u32,
    /// `maxConcurrency`: the ceiling of the estimated limit.
    pub max_concurrency: u32,
    /// `smoothing`: how much of each new estimate replaces the old, in (0, 1].
    pub smoothing: f64,
    /// `rttTolerance` (≥ 1): how much slower than the long-term average a
    /// sample may be before the limit shrinks (1.5 tolerates +50%).
    pub rtt_tolerance: f64,
    /// `longWindow`: the long-term RTT average spans about this many samples.
    pub long_window: u32,
    /// `queueSize`: headroom added to each estimate, so the limit keeps
    /// probing upward while latency is flat.
    pub queue_size: u32,
}

impl Default for Gradient2Config {
    fn default() -> Self {
        Gradient2Config {
            initial_limit: 20,
            min_limit: 20,
            max_concurrency: 200,
            smoothing: 0.2,
            rtt_tolerance: 1.5,
            long_window: 600,
            queue_size: 4,
        }
    }
}

/// Which limit algorithm a service uses (`"kind"` in a model).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LimitConfig {
    /// Netflix `FixedLimit`: never moves.
    Fixed {
        /// The constant limit.
        limit: u32,
    },
    /// Netflix `AIMDLimit`.
    Aimd(AimdConfig),
    /// Netflix `Gradient2Limit`.
    Gradient2(Gradient2Config),
}

/// Samples averaged plainly before the long-term RTT switches to an EMA, as
/// `ExpAvgMeasurement(longWindow, 10)` does in `Gradient2Limit`.
const LONG_RTT_WARMUP_SAMPLES: u32 = 10;

/// Netflix's `ExpAvgMeasurement`: a plain mean over a warm-up, then an EMA.
///
/// The average is a statistic in f64 nanoseconds, not a clock: nothing is
/// scheduled from it, and IEEE arithmetic keeps it deterministic.
#[derive(Clone, Copy, Debug)]
struct LongRttAverage {
    value_ns: f64,
    warmup_sum_ns: f64,
    samples: u32,
    factor: f64,
}

impl LongRttAverage {
    fn new(window: u32) -> Self {
        LongRttAverage {
            value_ns: 0.0,
            warmup_sum_ns: 0.0,
            samples: 0,
            factor: 2.0 / (f64::from(window) + 1.0),
        }
    }

    /// Adds a sample and returns the new average. During the warm-up the mean
    /// is recomputed from the sum, so a decay applied in between is undone, as
    /// in the library.
    fn add(&mut self, sample_ns: f64) -> f64 {
        if self.samples < LONG_RTT_WARMUP_SAMPLES {
            self.samples += 1;
            self.warmup_sum_ns += sample_ns;
            self.value_ns = self.warmup_sum_ns / f64::from(self.samples);
        } else {
            self.value_ns = self.value_ns * (1.0 - self.factor) + sample_ns * self.factor;
        }
        self.value_ns
    }
}

#[derive(Clone, Copy, Debug)]
enum Algorithm {
    Fixed,
    Aimd(AimdConfig),
    Gradient2 {
        config: Gradient2Config,
        /// Fractional, so that +0.8 per sample accumulates between whole limits.
        estimated_limit: f64,
        long_rtt: LongRttAverage,
    },
}

/// An adaptive concurrency limit in the manner of Netflix concurrency-limits.
///
/// Admission is `in_flight < limit()`; every admitted request that completes
/// (successfully or dropped) feeds one [`ConcurrencyLimit::on_sample`].
#[derive(Clone, Debug)]
pub struct ConcurrencyLimit {
    algorithm: Algorithm,
    limit: u32,
}

impl ConcurrencyLimit {
    /// A limit at its initial value.
    pub fn new(config: LimitConfig) -> Self {
        match config {
            LimitConfig::Fixed { limit } => ConcurrencyLimit {
                algorithm: Algorithm::Fixed,
                limit,
            },
            LimitConfig::Aimd(aimd) => {
                debug_assert!(aimd.min_limit <= aimd.max_limit);
                debug_assert!(aimd.backoff_ratio > 0.0 && aimd.backoff_ratio < 1.0);
                ConcurrencyLimit {
                    algorithm: Algorithm::Aimd(aimd),
                    limit: aimd.initial_limit,
                }
            }
            LimitConfig::Gradient2(gradient) => {
                debug_assert!(gradient.min_limit <= gradient.max_concurrency);
                debug_assert!(gradient.rtt_tolerance >= 1.0);
                ConcurrencyLimit {
                    algorithm: Algorithm::Gradient2 {
                        config: gradient,
                        estimated_limit: f64::from(gradient.initial_limit),
                        long_rtt: LongRttAverage::new(gradient.long_window),
                    },
                    limit: gradient.initial_limit,
                }
            }
        }
    }

    /// The current limit: how many requests may be in flight at once.
    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// Whether a new request may start while `in_flight` others are running
    /// (`SimpleLimiter`'s semaphore). A limit that just shrank below the
    /// current in-flight count rejects until enough requests finish; nothing
    /// already running is cancelled.
    pub fn try_acquire(&self, in_flight: u32) -> bool {
        in_flight < self.limit
    }

    /// Feeds one completed request.
    ///
    /// `latency` is the time from admission to completion. `in_flight` is the
    /// in-flight count when this request was admitted, itself included (the
    /// library's `inflight`). `dropped` is `onDropped`: the request timed out
    /// or was rejected downstream because of overload. `now` is unused by
    /// these per-sample algorithms (the library ignores `startTime` too) and
    /// kept so that windowed variants fit the same call.
    pub fn on_sample(&mut self, now: SimTime, latency: SimDuration, in_flight: u32, dropped: bool) {
        let _ = now;
        match &mut self.algorithm {
            Algorithm::Fixed => {}
            Algorithm::Aimd(config) => {
                self.limit = aimd_update(config, self.limit, latency, in_flight, dropped);
            }
            Algorithm::Gradient2 {
                config,
                estimated_limit,
                long_rtt,
            } => {
                // A zero RTT would divide by zero (the library then computes NaN):
                // count it as one nanosecond, far below any modelled latency.
                let short_rtt = latency.as_nanos().max(1) as f64;
                let long = long_rtt.add(short_rtt);
                if long / short_rtt > 2.0 {
                    long_rtt.value_ns *= 0.95;
                }
                if f64::from(in_flight) < *estimated_limit / 2.0 {
                    self.limit = *estimated_limit as u32;
                    return;
                }
                let gradient = (config.rtt_tolerance * long / short_rtt).clamp(0.5, 1.0);
                let mut new_limit = *estimated_limit * gradient + f64::from(config.queue_size);
                new_limit =
                    *estimated_limit * (1.0 - config.smoothing) + new_limit * config.smoothing;
                new_limit = new_limit
                    .min(f64::from(config.max_concurrency))
                    .max(f64::from(config.min_limit));
                *estimated_limit = new_limit;
                self.limit = new_limit as u32;
            }
        }
    }
}

/// `AIMDLimit._update`, with its exact integer arithmetic.
fn aimd_update(
    config: &AimdConfig,
    limit: u32,
    latency: SimDuration,
    in_flight: u32,
    dropped: bool,
) -> u32 {
    let next = if dropped || latency > config.timeout {
        (f64::from(limit) * config.backoff_ratio) as u32
    } else if u64::from(in_flight) * 2 >= u64::from(limit) {
        limit.saturating_add(1)
    } else {
        limit
    };
    // `Math.min(maxLimit, Math.max(minLimit, next))`: the ceiling wins if the
    // bounds cross, where `u32::clamp` would panic.
    next.max(config.min_limit).min(config.max_limit)
}

/// CoDel parameters (RFC 8289's `TARGET` and `INTERVAL`), with its defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoDelConfig {
    /// Acceptable standing queue delay: sojourn times below it never cause drops.
    pub target: SimDuration,
    /// How long the delay must stay above `target` before dropping starts; also
    /// the base of the drop spacing `interval / sqrt(count)`.
    pub interval: SimDuration,
}

impl Default for CoDelConfig {
    fn default() -> Self {
        CoDelConfig {
            target: SimDuration::from_ms(5.0),
            interval: SimDuration::from_ms(100.0),
        }
    }
}

/// Where the RFC's multi-packet dequeue loop stands between two calls of
/// [`CoDel::on_dequeue`], which sees one request at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AfterDrop {
    /// The last call delivered a request (or none was seen yet).
    Nothing,
    /// The last call dropped the request that entered the dropping state; the
    /// RFC delivers the next request whatever its sojourn time.
    DeliverNext,
    /// The last call dropped a request while dropping; the next request's
    /// verdict decides whether `drop_next` advances or dropping stops.
    AdvanceOnNext,
}

/// CoDel (RFC 8289) as a dequeue-time drop decision on a request queue.
///
/// Drive it from the place where a free worker takes the head of the queue:
/// call [`CoDel::on_dequeue`] for that request; on `true`, discard it (shed,
/// counted as a CoDel drop) and immediately take the next head at the same
/// `now`, calling again, until a request is delivered or the queue is empty.
#[derive(Clone, Debug)]
pub struct CoDel {
    config: CoDelConfig,
    /// When the sojourn time, above target since, will have been so for an
    /// interval; `None` while below target (the RFC's 0).
    first_above_time: Option<SimTime>,
    dropping: bool,
    drop_next: SimTime,
    /// Drops since entering the dropping state (possibly resumed from before).
    count: u32,
    last_count: u32,
    after_drop: AfterDrop,
    drops: u64,
}

impl CoDel {
    /// A controller that has seen no request yet.
    pub fn new(config: CoDelConfig) -> Self {
        debug_assert!(config.interval > SimDuration::ZERO);
        CoDel {
            config,
            first_above_time: None,
            dropping: false,
            drop_next: SimTime::ZERO,
            count: 0,
            last_count: 0,
            after_drop: AfterDrop::Nothing,
            drops: 0,
        }
    }

    /// Decides for the request just taken from the head of the queue: `true`
    /// means drop it.
    ///
    /// `enqueued_at` gives its sojourn time. `queue_is_empty_after` says whether
    /// taking it emptied the queue: the RFC's `bytes() <= MAXPACKET` test, so a
    /// request that leaves nothing behind is never dropped and resets the
    /// above-target timer (a queue that drains is not a standing queue).
    pub fn on_dequeue(
        &mut self,
        now: SimTime,
        enqueued_at: SimTime,
        queue_is_empty_after: bool,
    ) -> bool {
        let ok_to_drop = self.assess(now, now.saturating_since(enqueued_at), queue_is_empty_after);
        match std::mem::replace(&mut self.after_drop, AfterDrop::Nothing) {
            AfterDrop::DeliverNext => return false,
            AfterDrop::AdvanceOnNext => {
                if !ok_to_drop {
                    self.dropping = false;
                    return false;
                }
                self.drop_next = self.control_law(self.drop_next);
                return self.drop_if_due(now);
            }
            AfterDrop::Nothing => {}
        }
        if self.dropping {
            if !ok_to_drop {
                self.dropping = false;
                return false;
            }
            self.drop_if_due(now)
        } else if ok_to_drop {
            self.dropping = true;
            let delta = self.count.saturating_sub(self.last_count);
            let since_last_drop = now.saturating_since(self.drop_next);
            self.count =
                if delta > 1 && since_last_drop.as_nanos() < 16 * self.config.interval.as_nanos() {
                    delta
                } else {
                    1
                };
            self.drop_next = self.control_law(now);
            self.last_count = self.count;
            self.after_drop = AfterDrop::DeliverNext;
            self.drops += 1;
            true
        } else {
            false
        }
    }

    /// Whether CoDel is in its dropping state.
    pub fn is_dropping(&self) -> bool {
        self.dropping
    }

    /// When the next drop is due, while dropping.
    pub fn next_drop_at(&self) -> Option<SimTime> {
        self.dropping.then_some(self.drop_next)
    }

    /// Requests dropped so far.
    pub fn drops(&self) -> u64 {
        self.drops
    }

    /// The RFC's `dodequeue` verdict for one request: has the sojourn time been
    /// at or above target for at least an interval?
    fn assess(&mut self, now: SimTime, sojourn: SimDuration, queue_is_empty_after: bool) -> bool {
        if sojourn < self.config.target || queue_is_empty_after {
            self.first_above_time = None;
            return false;
        }
        match self.first_above_time {
            None => {
                self.first_above_time = Some(now + self.config.interval);
                false
            }
            Some(at) => now >= at,
        }
    }

    /// The RFC's `while (now >= drop_next && dropping)` step, one request at a time.
    fn drop_if_due(&mut self, now: SimTime) -> bool {
        if now >= self.drop_next {
            self.count = self.count.saturating_add(1);
            self.after_drop = AfterDrop::AdvanceOnNext;
            self.drops += 1;
            true
        } else {
            false
        }
    }

    /// `t + interval / sqrt(count)`, rounded once to whole nanoseconds.
    fn control_law(&self, t: SimTime) -> SimTime {
        let spacing = self.config.interval.as_nanos() as f64 / f64::from(self.count.max(1)).sqrt();
        t + SimDuration(spacing.round() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: f64) -> SimDuration {
        SimDuration::from_ms(v)
    }

    fn at_ms(v: u64) -> SimTime {
        SimTime(v * 1_000_000)
    }

    fn aimd(initial: u32, min: u32, max: u32) -> ConcurrencyLimit {
        ConcurrencyLimit::new(LimitConfig::Aimd(AimdConfig {
            initial_limit: initial,
            min_limit: min,
            max_limit: max,
            backoff_ratio: 0.9,
            timeout: ms(100.0),
        }))
    }

    #[test]
    fn fixed_limit_never_moves() {
        let mut l = ConcurrencyLimit::new(LimitConfig::Fixed { limit: 7 });
        l.on_sample(SimTime::ZERO, ms(1e6), 7, true);
        l.on_sample(SimTime::ZERO, ms(1.0), 7, false);
        assert_eq!(l.limit(), 7);
        assert!(l.try_acquire(6));
        assert!(!l.try_acquire(7));
    }

    #[test]
    fn aimd_follows_the_hand_computed_sequence() {
        let mut l = aimd(10, 1, 12);
        let t = SimTime::ZERO;
        let mut seen = Vec::new();
        // (latency ms, in_flight at admission, dropped) → expected limit
        let steps: [(f64, u32, bool, u32); 9] = [
            (10.0, 5, false, 11),   // 5·2 = 10 ≥ 10 → +1
            (10.0, 5, false, 11),   // 10 < 11: app limited, unchanged
            (10.0, 6, false, 12),   // 12 ≥ 11 → +1
            (10.0, 12, false, 12),  // 13 capped at max 12
            (10.0, 12, true, 10),   // drop: ⌊12 · 0.9⌋ = ⌊10.8⌋
            (100.0, 5, false, 11),  // RTT = timeout is not a drop: 10 ≥ 10 → +1
            (100.001, 9, false, 9), // RTT > timeout: ⌊11 · 0.9⌋ = ⌊9.9⌋
            (1.0, 1, true, 8),      // ⌊8.1⌋
            (1.0, 1, true, 7),      // ⌊7.2⌋
        ];
        for (latency, in_flight, dropped, _) in steps {
            l.on_sample(t, ms(latency), in_flight, dropped);
            seen.push(l.limit());
        }
        let expected: Vec<u32> = steps.iter().map(|s| s.3).collect();
        assert_eq!(seen, expected);
        // Keep dropping: 7 → 6 (6.3) → 5 (5.4) → 4 (4.5) → 3 (3.6) → 2 (2.7)
        // → 1 (1.8) → 0 (0.9) clamped to min 1 → 1.
        let mut tail = Vec::new();
        for _ in 0..8 {
            l.on_sample(t, ms(1.0), 1, true);
            tail.push(l.limit());
        }
        assert_eq!(tail, vec![6, 5, 4, 3, 2, 1, 1, 1]);
    }

    #[test]
    fn aimd_defaults_never_shrink_below_twenty() {
        let mut l = ConcurrencyLimit::new(LimitConfig::Aimd(AimdConfig::default()));
        assert_eq!(l.limit(), 20);
        l.on_sample(SimTime::ZERO, SimDuration::from_secs(6), 20, false);
        assert_eq!(l.limit(), 20, "min_limit 20 = initial_limit 20");
        l.on_sample(SimTime::ZERO, ms(10.0), 10, false);
        assert_eq!(l.limit(), 21);
    }

    #[test]
    fn aimd_clamps_an_out_of_range_initial_limit_on_the_first_sample() {
        let mut l = aimd(500, 1, 200);
        assert_eq!(l.limit(), 500);
        l.on_sample(SimTime::ZERO, ms(1.0), 0, false);
        assert_eq!(l.limit(), 200, "even a sample that changes nothing clamps");
    }

    #[test]
    fn admission_compares_in_flight_with_the_limit() {
        let l = aimd(3, 1, 10);
        assert!(l.try_acquire(0));
        assert!(l.try_acquire(2));
        assert!(!l.try_acquire(3));
        assert!(!l.try_acquire(4));
    }

    fn gradient(min: u32, max: u32) -> ConcurrencyLimit {
        ConcurrencyLimit::new(LimitConfig::Gradient2(Gradient2Config {
            min_limit: min,
            max_concurrency: max,
            ..Gradient2Config::default()
        }))
    }

    fn estimated(l: &ConcurrencyLimit) -> f64 {
        match l.algorithm {
            Algorithm::Gradient2 {
                estimated_limit, ..
            } => estimated_limit,
            _ => unreachable!(),
        }
    }

    fn long_rtt_ms(l: &ConcurrencyLimit) -> f64 {
        match l.algorithm {
            Algorithm::Gradient2 { long_rtt, .. } => long_rtt.value_ns / 1e6,
            _ => unreachable!(),
        }
    }

    #[test]
    fn gradient2_follows_the_hand_computed_first_steps() {
        let mut l = gradient(1, 200);
        let t = SimTime::ZERO;
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        // 1: long = 10, gradient = min(1, 1.5·10/10) = 1 → 20 + 4 = 24 → 0.8·20 + 0.2·24 = 20.8
        l.on_sample(t, ms(10.0), 20, false);
        assert!(close(estimated(&l), 20.8), "{}", estimated(&l));
        assert_eq!(l.limit(), 20);
        // 2: same → 21.6
        l.on_sample(t, ms(10.0), 20, false);
        assert!(close(estimated(&l), 21.6));
        assert_eq!(l.limit(), 21);
        // 3: RTT 30: long = (10+10+30)/3 = 16.667, gradient = 1.5·16.667/30 = 0.8333
        //    → 21.6·0.8333 + 4 = 22 → 0.8·21.6 + 0.2·22 = 21.68
        l.on_sample(t, ms(30.0), 20, false);
        assert!(close(estimated(&l), 21.68), "{}", estimated(&l));
        // 4: RTT 60: long = 110/4 = 27.5, gradient = 1.5·27.5/60 = 0.6875
        //    → 21.68·0.6875 + 4 = 18.905 → 0.8·21.68 + 0.2·18.905 = 21.125
        l.on_sample(t, ms(60.0), 20, false);
        assert!(close(estimated(&l), 21.125), "{}", estimated(&l));
        assert_eq!(l.limit(), 21);
    }

    #[test]
    fn gradient2_shrinks_when_latency_rises_and_grows_back_when_it_recovers() {
        let mut l = gradient(5, 200);
        let t = SimTime::ZERO;
        // Steady 10 ms with the limit saturated: +0.8 per sample.
        for _ in 0..50 {
            let in_flight = l.limit();
            l.on_sample(t, ms(10.0), in_flight, false);
        }
        assert!((estimated(&l) - 60.0).abs() < 1e-9, "20 + 50 · 0.8");
        // Latency jumps to 50 ms: gradient = max(0.5, 1.5·~10/50) = 0.5, so each
        // sample moves the limit to 0.9·L + 0.8, towards the fixed point 8.
        let mut previous = f64::MAX;
        for _ in 0..40 {
            let in_flight = l.limit();
            l.on_sample(t, ms(50.0), in_flight, false);
            assert!(estimated(&l) < previous);
            previous = estimated(&l);
        }
        let congested = l.limit();
        assert!(congested < 15, "{congested}");
        // Latency recovers: gradient = 1 again, +0.8 per sample.
        for _ in 0..50 {
            let in_flight = l.limit();
            l.on_sample(t, ms(10.0), in_flight, false);
        }
        assert!(l.limit() >= congested + 39, "{} vs {congested}", l.limit());
    }

    #[test]
    fn gradient2_does_not_move_while_app_limited_and_ignores_drops() {
        let mut l = gradient(1, 200);
        let t = SimTime::ZERO;
        for _ in 0..20 {
            l.on_sample(t, ms(10.0), 9, true); // 9 < 20 / 2
        }
        assert_eq!(estimated(&l), 20.0);
        l.on_sample(t, ms(10.0), 10, true); // 10 ≥ 10 and drops are ignored: grows
        assert!((estimated(&l) - 20.8).abs() < 1e-9);
    }

    #[test]
    fn gradient2_long_rtt_decays_fast_after_overload() {
        let mut l = gradient(1, 200);
        let t = SimTime::ZERO;
        for _ in 0..10 {
            l.on_sample(t, ms(100.0), 0, false); // warm-up mean: 100 ms
        }
        assert!((long_rtt_ms(&l) - 100.0).abs() < 1e-9);
        // A 10 ms sample: EMA → 100·(1 − 2/601) + 10·2/601 = 99.7005; ratio > 2 → × 0.95.
        l.on_sample(t, ms(10.0), 0, false);
        let f = 2.0 / 601.0;
        let expected = (100.0 * (1.0 - f) + 10.0 * f) * 0.95;
        assert!(
            (long_rtt_ms(&l) - expected).abs() < 1e-9,
            "{}",
            long_rtt_ms(&l)
        );
    }

    #[test]
    fn gradient2_survives_zero_latency() {
        let mut l = gradient(1, 200);
        l.on_sample(SimTime::ZERO, SimDuration::ZERO, 20, false);
        assert!(estimated(&l).is_finite());
        assert_eq!(l.limit(), 20);
    }

    #[test]
    fn gradient2_respects_min_and_max() {
        let mut l = gradient(18, 22);
        for _ in 0..100 {
            let in_flight = l.limit();
            l.on_sample(SimTime::ZERO, ms(10.0), in_flight, false);
        }
        assert_eq!(l.limit(), 22);
        for _ in 0..200 {
            let in_flight = l.limit();
            l.on_sample(SimTime::ZERO, ms(1000.0), in_flight, false);
        }
        assert_eq!(l.limit(), 18);
    }

    /// Dequeues one request per millisecond from `from` to `to` (inclusive), each
    /// with the given sojourn, the queue never emptying; returns the drop times in ms.
    fn run(codel: &mut CoDel, from: u64, to: u64, sojourn_ms: f64) -> Vec<u64> {
        let mut drops = Vec::new();
        for t in from..=to {
            let now = at_ms(t);
            let enqueued = SimTime(now.0 - ms(sojourn_ms).0);
            // Keep dequeuing at this instant until a request is delivered.
            while codel.on_dequeue(now, enqueued, false) {
                drops.push(t);
            }
        }
        drops
    }

    #[test]
    fn codel_never_drops_below_target() {
        let mut c = CoDel::new(CoDelConfig::default());
        assert!(run(&mut c, 1000, 3000, 4.999).is_empty());
        assert!(!c.is_dropping());
        assert_eq!(c.drops(), 0);
    }

    #[test]
    fn codel_drops_only_after_a_full_interval_above_target() {
        let mut c = CoDel::new(CoDelConfig::default());
        // Exactly at target counts as above (the RFC's `sojourn < TARGET` is below).
        // Above from 1000 ms: not yet at 1099 ms, first drop at 1100 ms.
        assert!(run(&mut c, 1000, 1099, 5.0).is_empty());
        assert_eq!(run(&mut c, 1100, 1100, 5.0), vec![1100]);
        assert!(c.is_dropping());
        assert_eq!(c.next_drop_at(), Some(at_ms(1200)));
    }

    #[test]
    fn codel_restarts_the_interval_when_sojourn_dips_or_the_queue_drains() {
        let mut c = CoDel::new(CoDelConfig::default());
        assert!(run(&mut c, 1000, 1050, 8.0).is_empty());
        // One request below target resets the timer.
        assert!(!c.on_dequeue(at_ms(1051), at_ms(1050), false));
        assert!(run(&mut c, 1052, 1151, 8.0).is_empty());
        assert_eq!(run(&mut c, 1152, 1152, 8.0), vec![1152]);

        let mut c = CoDel::new(CoDelConfig::default());
        assert!(run(&mut c, 1000, 1050, 8.0).is_empty());
        // Emptying the queue also resets it, even with a long sojourn.
        assert!(!c.on_dequeue(at_ms(1051), at_ms(1000), true));
        assert!(run(&mut c, 1052, 1151, 8.0).is_empty());
        assert_eq!(run(&mut c, 1152, 1152, 8.0), vec![1152]);
    }

    #[test]
    fn codel_drop_spacing_follows_interval_over_sqrt_count() {
        let mut c = CoDel::new(CoDelConfig::default());
        let drops = run(&mut c, 1000, 1424, 20.0);
        // First drop at 1100 (count 1, next at 1200). Then drop_next advances from
        // itself by 100/√count ms, rounded to ns: 1200 → +70.710678 = 1270.710678
        // → +57.735027 = 1328.445705 → +50 = 1378.445705 → +44.721360 = 1423.167065;
        // each drop lands on the first whole-ms dequeue at or after drop_next.
        assert_eq!(drops, vec![1100, 1200, 1271, 1329, 1379, 1424]);
        // The request served right after the drop at 1424 advanced drop_next, count
        // being 6 now: 1423.167065 + 100/√6 = 1423.167065 + 40.824829.
        assert_eq!(c.next_drop_at(), Some(SimTime(1_423_167_065 + 40_824_829)));
        assert_eq!(c.drops(), 6);
    }

    #[test]
    fn codel_drops_back_to_back_when_far_behind_schedule() {
        let mut c = CoDel::new(CoDelConfig::default());
        assert_eq!(run(&mut c, 1000, 1100, 20.0), vec![1100]);
        // Next dequeue 300 ms late: drop_next 1200, then +70.71, +57.74, +50 → 1378.4;
        // at 1500 all of 1200, 1270.7, 1328.4, 1378.4, 1423.2, 1464.0 are due,
        // then 1464.0 + 100/√7 = 1501.8 is not.
        let now = at_ms(1500);
        let mut dropped = 0;
        while c.on_dequeue(now, at_ms(1400), false) {
            dropped += 1;
        }
        assert_eq!(dropped, 6);
        assert!(c.next_drop_at().unwrap() > now);
    }

    #[test]
    fn codel_leaves_dropping_below_target_and_resumes_its_rate_soon_after() {
        let mut c = CoDel::new(CoDelConfig::default());
        run(&mut c, 1000, 1424, 20.0); // 6 drops: count 6, last_count 1
        assert!(!c.on_dequeue(at_ms(1425), at_ms(1424), false));
        assert!(!c.is_dropping());
        // Above target again from 1426; allowed to drop at 1526. The last drop_next
        // (1463.992 ms) is 62 ms before that, under 16 intervals, and
        // count − last_count = 5 > 1, so count resumes at 5: next = 1526 + 100/√5.
        assert!(run(&mut c, 1426, 1525, 20.0).is_empty());
        assert_eq!(run(&mut c, 1526, 1526, 20.0), vec![1526]);
        assert_eq!(c.next_drop_at(), Some(SimTime(1_526_000_000 + 44_721_360)));
    }

    #[test]
    fn codel_starts_over_after_a_long_calm() {
        let mut c = CoDel::new(CoDelConfig::default());
        run(&mut c, 1000, 1424, 20.0);
        assert!(run(&mut c, 1425, 4000, 1.0).is_empty()); // > 16 intervals calm
        assert_eq!(run(&mut c, 4001, 4101, 20.0), vec![4101]);
        assert_eq!(c.next_drop_at(), Some(at_ms(4201)), "count back to 1");
    }

    #[test]
    fn codel_delivers_the_request_after_the_first_drop_unconditionally() {
        let mut c = CoDel::new(CoDelConfig {
            target: ms(5.0),
            interval: ms(1.0),
        });
        assert!(!c.on_dequeue(at_ms(10), at_ms(0), false)); // above target until 11 ms
                                                            // At 25 ms CoDel enters dropping (drop_next = 26 ms); the request right
                                                            // after that entering drop is served whatever its sojourn, the next one
                                                            // at 26 ms is dropped by the control law.
        assert!(c.on_dequeue(at_ms(25), at_ms(0), false));
        assert!(!c.on_dequeue(at_ms(25), at_ms(0), false));
        assert!(c.on_dequeue(at_ms(26), at_ms(0), false));
    }
}
