//! The circuit breaker: stop sending calls to a dependency that is failing, so
//! that it can recover and the caller fails fast, then probe it before trusting
//! it again.
//!
//! Semantics follow **resilience4j's `CircuitBreaker`** (`CircuitBreakerStateMachine`
//! and `CircuitBreakerMetrics`, 2.x), with its parameter names and defaults:
//! `failureRateThreshold` 50, `slowCallRateThreshold` 100,
//! `slowCallDurationThreshold` 60 s, `slidingWindowType` COUNT_BASED,
//! `slidingWindowSize` 100, `minimumNumberOfCalls` 100,
//! `permittedNumberOfCallsInHalfOpenState` 10, `waitDurationInOpenState` 60 s,
//! `maxWaitDurationInHalfOpenState` 0 (unbounded),
//! `automaticTransitionFromOpenToHalfOpenEnabled` false. On top, the S5 chapter's
//! consecutive-failure breaker (N consecutive failures open it, as in Finagle's
//! `FailureAccrual`; after a cooldown one probe at a time, three successes in a row
//! close it), selected by [`FailureDetection::ConsecutiveFailures`] and
//! [`HalfOpenRule::ConsecutiveSuccesses`] (see [`BreakerConfig::s5_consecutive`]).
//!
//! What is taken from resilience4j's source, because its documentation is silent:
//! - Rates are evaluated after each recorded call, only once the window holds at
//!   least `minimumNumberOfCalls` calls; for COUNT_BASED (and in HALF_OPEN, whose
//!   window is COUNT_BASED of size `permittedNumberOfCallsInHalfOpenState`) that
//!   minimum is `min(minimumNumberOfCalls, window size)`. It opens when the failure
//!   rate ≥ its threshold or the slow-call rate ≥ its threshold. Rates are computed
//!   in `f32` as resilience4j computes them (`failed * 100.0f / total`), so boundary
//!   cases round the same way.
//! - A call is slow when its duration is strictly greater than
//!   `slowCallDurationThreshold`; a slow failure counts as failed and as slow.
//! - TIME_BASED windows are a ring of one-second buckets aligned to whole seconds of
//!   the clock (epoch seconds there, [`SimTime`] seconds here): a call recorded in
//!   second `s` counts until the window moves to second `s + sliding_window_size`.
//! - Without automatic transition, OPEN moves to HALF_OPEN on the first call asked
//!   strictly after `open time + waitDurationInOpenState` (`Instant.isAfter`), and
//!   that call is admitted as the first probe. With it, the move happens at exactly
//!   `open time + waitDurationInOpenState`, calls or not.
//! - HALF_OPEN's `permittedNumberOfCallsInHalfOpenState` is a quota per half-open
//!   episode, not a concurrency limit: a permit is given back only by an ignored
//!   outcome (`releasePermission`), never by a success or a failure. So at most that
//!   many probes reach the recovering dependency. The S5 rule, in contrast, limits
//!   *concurrent* probes: each result gives its permit back.
//! - `maxWaitDurationInHalfOpenState`, when non-zero, sends HALF_OPEN back to OPEN
//!   at exactly `half-open time + max wait` (a scheduled task there), in either
//!   transition mode. resilience4j truncates it to whole milliseconds and ignores a
//!   value under 1 ms; here any non-zero value counts.
//! - Metrics are fresh on entering CLOSED and HALF_OPEN (new state objects there).
//!
//! One deliberate difference: **results of calls admitted in an earlier state are
//! ignored.** Every transition starts a new generation and a [`Permit`] carries the
//! generation it was granted in; [`CircuitBreaker::record`] drops results from an
//! older generation (and counts them in [`CircuitBreaker::stale_results`]).
//! resilience4j records such a late result in whatever state is current: in OPEN
//! that only touches metrics that are discarded before they are read again (so
//! decisions are the same), but in HALF_OPEN or a new CLOSED a call admitted long
//! before would be counted as a probe or as fresh evidence — a race in the Java
//! library, not a policy anyone tunes.
//!
//! How a call edge drives it (one breaker per edge, per attempt, inside the retry
//! loop and outside the per-attempt timeout, as resilience4j's recommended
//! `Retry(CircuitBreaker(TimeLimiter(call)))`):
//! 1. Before sending an attempt: [`CircuitBreaker::try_acquire`]. `Err` means fail
//!    the attempt at once, with no network traffic (the retry layer then decides,
//!    as resilience4j's Retry does with `CallNotPermittedException`). `Ok(permit)`:
//!    keep the permit and the send time with the attempt, and send it.
//! 2. When the attempt ends, exactly once per permit: [`CircuitBreaker::record`]
//!    with the caller's classification ([`CallOutcome`]) and the time since it was
//!    sent. A response: `Success`, or `Failure` for a 5xx/error; a 4xx is `Ignored`.
//!    The per-attempt timeout firing: `Failure`, with the timeout as the duration.
//!    An attempt abandoned without an outcome (the call was cancelled): `Ignored`,
//!    which gives a half-open permit back. A permit never recorded is a leaked
//!    probe: in HALF_OPEN with the resilience4j rule it can keep the breaker
//!    half-open for good (as in resilience4j) unless `max_wait_duration_in_half_open_state`
//!    is set.
//! 3. For metrics, at any time: [`CircuitBreaker::state`], [`CircuitBreaker::open_time`],
//!    [`CircuitBreaker::times_opened`], [`CircuitBreaker::calls_rejected`]. They take
//!    `now` because timed transitions are applied lazily: nothing needs to be
//!    scheduled in the event queue.

use stormsim_engine::{SimDuration, SimTime};

const NANOS_PER_SEC: u64 = 1_000_000_000;

/// The three states of resilience4j's state machine (its DISABLED, FORCED_OPEN and
/// METRICS_ONLY are operator overrides, not behaviour, and are not modelled).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BreakerState {
    /// Calls flow; outcomes are recorded to detect failure.
    Closed,
    /// Every call is rejected locally until the wait is over.
    Open,
    /// A few probe calls are let through to decide between closing and reopening.
    HalfOpen,
}

/// How the caller classified a finished call. Classification is the caller's, as
/// in resilience4j (`recordExceptions`, `ignoreExceptions`, `recordResult`),
/// because only it knows which errors say something about the dependency's health.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallOutcome {
    /// The dependency answered well.
    Success,
    /// The dependency failed: an error, a 5xx, a timeout.
    Failure,
    /// Says nothing about the dependency's health (a 4xx, a cancelled call): never
    /// counted, and a half-open permit is given back.
    Ignored,
}

/// How CLOSED detects that the dependency is failing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureDetection {
    /// Open after this many failures in a row; a success resets the count, an
    /// ignored call does not. Suits sparse traffic, where a rate over a window would
    /// need too long to reach its minimum (S5 chapter; Finagle `FailureAccrual`'s
    /// `consecutiveFailures` 5). Slow calls are not looked at.
    ConsecutiveFailures {
        /// Failures in a row that open the breaker.
        failure_threshold: u32,
    },
    /// resilience4j COUNT_BASED: rates over the last `sliding_window_size` calls.
    CountBased {
        /// Calls in the window (`slidingWindowSize`).
        sliding_window_size: u32,
    },
    /// resilience4j TIME_BASED: rates over the calls of the last
    /// `sliding_window_size` whole seconds.
    TimeBased {
        /// Seconds in the window (`slidingWindowSize`).
        sliding_window_size: u32,
    },
}

/// How HALF_OPEN decides between closing and reopening.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HalfOpenRule {
    /// resilience4j: admit at most `permitted_number_of_calls_in_half_open_state`
    /// calls in the episode, and once `min(minimum_number_of_calls, permitted)` of
    /// their results are recorded, evaluate the failure and slow-call rates over
    /// them: CLOSED if both are below their thresholds, else OPEN.
    Rates {
        /// `permittedNumberOfCallsInHalfOpenState`: probes per half-open episode.
        permitted_number_of_calls_in_half_open_state: u32,
    },
    /// S5 chapter: at most `max_concurrent_probes` probes in flight; any probe
    /// failure reopens; `successes_to_close` successes in a row close. Slow calls
    /// are not looked at.
    ConsecutiveSuccesses {
        /// Probes in flight at once.
        max_concurrent_probes: u32,
        /// Successes in a row that close the breaker.
        successes_to_close: u32,
    },
}

/// The breaker's settings, named after resilience4j's `CircuitBreakerConfig`.
/// Validation (thresholds in (0, 100], sizes ≥ 1) is the model crate's.
#[derive(Clone, Debug, PartialEq)]
pub struct BreakerConfig {
    /// How CLOSED detects failure (`slidingWindowType` and `slidingWindowSize`, or
    /// the consecutive-failure rule).
    pub failure_detection: FailureDetection,
    /// `failureRateThreshold`, percent: open when the failure rate is at least this.
    pub failure_rate_threshold: f64,
    /// `slowCallRateThreshold`, percent: open when the slow-call rate is at least this.
    pub slow_call_rate_threshold: f64,
    /// `slowCallDurationThreshold`: calls strictly longer than this are slow.
    pub slow_call_duration_threshold: SimDuration,
    /// `minimumNumberOfCalls`: rates are not evaluated over fewer recorded calls.
    pub minimum_number_of_calls: u32,
    /// `waitDurationInOpenState`: how long OPEN rejects everything.
    pub wait_duration_in_open_state: SimDuration,
    /// `automaticTransitionFromOpenToHalfOpenEnabled`: move to HALF_OPEN when the
    /// wait ends rather than on the first call after it.
    pub automatic_transition_from_open_to_half_open_enabled: bool,
    /// How HALF_OPEN decides.
    pub half_open_rule: HalfOpenRule,
    /// `maxWaitDurationInHalfOpenState`: back to OPEN if HALF_OPEN has not decided
    /// within this long; zero means unbounded.
    pub max_wait_duration_in_half_open_state: SimDuration,
}

impl BreakerConfig {
    /// resilience4j's `CircuitBreakerConfig.ofDefaults()`.
    pub fn resilience4j_default() -> BreakerConfig {
        BreakerConfig {
            failure_detection: FailureDetection::CountBased {
                sliding_window_size: 100,
            },
            failure_rate_threshold: 50.0,
            slow_call_rate_threshold: 100.0,
            slow_call_duration_threshold: SimDuration::from_secs(60),
            minimum_number_of_calls: 100,
            wait_duration_in_open_state: SimDuration::from_secs(60),
            automatic_transition_from_open_to_half_open_enabled: false,
            half_open_rule: HalfOpenRule::Rates {
                permitted_number_of_calls_in_half_open_state: 10,
            },
            max_wait_duration_in_half_open_state: SimDuration::ZERO,
        }
    }

    /// The S5 chapter's breaker: `failure_threshold` consecutive failures open it;
    /// after `cooldown` it is half-open (automatically: a cooldown is a span of
    /// time, whether or not calls arrive), lets one probe through at a time, and
    /// three successes in a row close it. The rate fields keep resilience4j's
    /// defaults and are unused.
    pub fn s5_consecutive(failure_threshold: u32, cooldown: SimDuration) -> BreakerConfig {
        BreakerConfig {
            failure_detection: FailureDetection::ConsecutiveFailures { failure_threshold },
            wait_duration_in_open_state: cooldown,
            automatic_transition_from_open_to_half_open_enabled: true,
            half_open_rule: HalfOpenRule::ConsecutiveSuccesses {
                max_concurrent_probes: 1,
                successes_to_close: 3,
            },
            ..BreakerConfig::resilience4j_default()
        }
    }
}

impl Default for BreakerConfig {
    /// resilience4j's defaults, the library this module follows.
    fn default() -> Self {
        BreakerConfig::resilience4j_default()
    }
}

/// Proof that a call was admitted; hand it back to [`CircuitBreaker::record`].
/// It names the state generation it was granted in, so that a result arriving
/// after a transition cannot be counted in a state it was not admitted in.
///
/// It keeps the generation's low 32 bits: an attempt holds its permit, and a
/// permit of 4 bytes keeps the attempt small; a stale permit would have to
/// outlive 2³² transitions to be mistaken for a current one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Permit {
    generation: u32,
}

/// A call refused locally (resilience4j's `CallNotPermittedException`): it must
/// fail at once without reaching the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallNotPermitted {
    /// `Open`, or `HalfOpen` when all probe permits are taken.
    pub state: BreakerState,
}

/// Counts of recorded calls in a window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct RateTotals {
    calls: u64,
    failed: u64,
    slow: u64,
}

impl RateTotals {
    fn add(&mut self, failed: bool, slow: bool) {
        self.calls += 1;
        self.failed += u64::from(failed);
        self.slow += u64::from(slow);
    }

    fn subtract(&mut self, other: RateTotals) {
        self.calls -= other.calls;
        self.failed -= other.failed;
        self.slow -= other.slow;
    }
}

/// What a window's rates say, as resilience4j's `CircuitBreakerMetrics.Result`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    BelowMinimumCalls,
    BelowThresholds,
    AboveThresholds,
}

fn verdict(config: &BreakerConfig, totals: RateTotals, minimum_calls: u64) -> Verdict {
    if totals.calls == 0 || totals.calls < minimum_calls {
        return Verdict::BelowMinimumCalls;
    }
    // f32, as resilience4j's `SnapshotImpl` (`failed * 100.0f / total`), so that
    // rates on a threshold's boundary compare the same way.
    let calls = totals.calls as f32;
    let failure_rate = totals.failed as f32 * 100.0 / calls;
    let slow_rate = totals.slow as f32 * 100.0 / calls;
    if failure_rate >= config.failure_rate_threshold as f32
        || slow_rate >= config.slow_call_rate_threshold as f32
    {
        Verdict::AboveThresholds
    } else {
        Verdict::BelowThresholds
    }
}

/// The outcomes of the last `slots.len()` calls (resilience4j's
/// `FixedSizeSlidingWindowMetrics`), with running totals.
#[derive(Clone, Debug)]
struct CountWindow {
    /// Per call: bit 0 failed, bit 1 slow.
    slots: Vec<u8>,
    next: usize,
    filled: usize,
    totals: RateTotals,
}

impl CountWindow {
    fn new(size: u32) -> CountWindow {
        debug_assert!(size > 0, "a count window holds at least one call");
        CountWindow {
            slots: vec![0; size.max(1) as usize],
            next: 0,
            filled: 0,
            totals: RateTotals::default(),
        }
    }

    fn record(&mut self, failed: bool, slow: bool) -> RateTotals {
        if self.filled == self.slots.len() {
            let old = self.slots[self.next];
            self.totals.subtract(RateTotals {
                calls: 1,
                failed: u64::from(old & 1),
                slow: u64::from(old >> 1),
            });
        } else {
            self.filled += 1;
        }
        self.slots[self.next] = u8::from(failed) | (u8::from(slow) << 1);
        self.next = (self.next + 1) % self.slots.len();
        self.totals.add(failed, slow);
        self.totals
    }

    fn reset(&mut self) {
        self.next = 0;
        self.filled = 0;
        self.totals = RateTotals::default();
    }
}

/// The calls of the last `buckets.len()` whole seconds, one bucket per second
/// (resilience4j's `SlidingTimeWindowMetrics`), with running totals
/// (subtract-on-evict). Second `s` lives in bucket `s % len`.
#[derive(Clone, Debug)]
struct TimeWindow {
    buckets: Vec<RateTotals>,
    /// The second of the newest bucket; every bucket is for a second in
    /// `(latest_second - len, latest_second]` or empty.
    latest_second: u64,
    totals: RateTotals,
}

impl TimeWindow {
    fn new(seconds: u32) -> TimeWindow {
        debug_assert!(seconds > 0, "a time window spans at least one second");
        TimeWindow {
            buckets: vec![RateTotals::default(); seconds.max(1) as usize],
            latest_second: 0,
            totals: RateTotals::default(),
        }
    }

    fn record(&mut self, now: SimTime, failed: bool, slow: bool) -> RateTotals {
        let len = self.buckets.len() as u64;
        let second = now.as_nanos() / NANOS_PER_SEC;
        debug_assert!(second >= self.latest_second, "time went backwards");
        if second > self.latest_second {
            // Evict the buckets of the seconds the window moves over (at most all).
            let first_new = (self.latest_second + 1).max(second.saturating_sub(len - 1));
            for s in first_new..=second {
                let bucket = &mut self.buckets[(s % len) as usize];
                self.totals.subtract(*bucket);
                *bucket = RateTotals::default();
            }
            self.latest_second = second;
        }
        self.buckets[(self.latest_second % len) as usize].add(failed, slow);
        self.totals.add(failed, slow);
        self.totals
    }

    fn reset(&mut self) {
        self.buckets.fill(RateTotals::default());
        self.latest_second = 0;
        self.totals = RateTotals::default();
    }
}

/// CLOSED's failure detector.
#[derive(Clone, Debug)]
enum ClosedMetrics {
    Consecutive { failures: u32, threshold: u32 },
    Count(CountWindow),
    Time(TimeWindow),
}

/// HALF_OPEN's bookkeeping for one episode.
#[derive(Clone, Copy, Debug, Default)]
struct HalfOpenEpisode {
    /// Permits out: taken in the episode (rates rule) or in flight (S5 rule).
    permits_taken: u32,
    results: RateTotals,
    consecutive_successes: u32,
}

/// The state and the accounting that timed transitions change. Kept apart so that
/// the `&self` queries can project it to `now` without mutating anything.
#[derive(Clone, Copy, Debug)]
struct Lifecycle {
    state: BreakerState,
    since: SimTime,
    generation: u64,
    times_opened: u64,
    /// Time spent in OPEN periods that have ended.
    ended_open_time: SimDuration,
}

impl Lifecycle {
    fn enter(mut self, to: BreakerState, at: SimTime) -> Lifecycle {
        if self.state == BreakerState::Open {
            self.ended_open_time = self.ended_open_time + at.saturating_since(self.since);
        }
        if to == BreakerState::Open {
            self.times_opened += 1;
        }
        self.state = to;
        self.since = at;
        self.generation += 1;
        self
    }

    /// Applies the transitions that happen by time alone up to `now`: OPEN →
    /// HALF_OPEN at the end of the wait (automatic mode) and HALF_OPEN → OPEN at
    /// the end of the max wait.
    fn at(mut self, config: &BreakerConfig, now: SimTime) -> Lifecycle {
        let wait = config.wait_duration_in_open_state;
        let max_half_open = config.max_wait_duration_in_half_open_state;
        let automatic = config.automatic_transition_from_open_to_half_open_enabled;
        loop {
            match self.state {
                BreakerState::Open if automatic => {
                    let end = self.since + wait;
                    if now < end {
                        return self;
                    }
                    self = self.enter(BreakerState::HalfOpen, end);
                }
                BreakerState::HalfOpen if max_half_open > SimDuration::ZERO => {
                    let end = self.since + max_half_open;
                    if now < end {
                        return self;
                    }
                    self = self.enter(BreakerState::Open, end);
                    if automatic {
                        // With no calls it cycles open → half-open → open; skip
                        // the whole cycles at once so a long idle span is O(1).
                        let period = wait + max_half_open;
                        let cycles =
                            now.saturating_since(self.since).as_nanos() / period.as_nanos();
                        self.since += SimDuration(cycles * period.as_nanos());
                        self.times_opened += cycles;
                        self.ended_open_time =
                            self.ended_open_time + SimDuration(cycles * wait.as_nanos());
                        self.generation += 2 * cycles;
                    }
                }
                _ => return self,
            }
        }
    }

    fn open_time(&self, now: SimTime) -> SimDuration {
        match self.state {
            BreakerState::Open => self.ended_open_time + now.saturating_since(self.since),
            _ => self.ended_open_time,
        }
    }
}

/// A circuit breaker for one call edge: see the module documentation.
#[derive(Clone, Debug)]
pub struct CircuitBreaker {
    config: BreakerConfig,
    lifecycle: Lifecycle,
    closed: ClosedMetrics,
    half_open: HalfOpenEpisode,
    calls_permitted: u64,
    calls_rejected: u64,
    stale_results: u64,
}

impl CircuitBreaker {
    /// A closed breaker at time zero. The window is allocated here, once.
    pub fn new(config: BreakerConfig) -> CircuitBreaker {
        let closed = match config.failure_detection {
            FailureDetection::ConsecutiveFailures { failure_threshold } => {
                debug_assert!(failure_threshold > 0);
                ClosedMetrics::Consecutive {
                    failures: 0,
                    threshold: failure_threshold,
                }
            }
            FailureDetection::CountBased {
                sliding_window_size,
            } => ClosedMetrics::Count(CountWindow::new(sliding_window_size)),
            FailureDetection::TimeBased {
                sliding_window_size,
            } => ClosedMetrics::Time(TimeWindow::new(sliding_window_size)),
        };
        CircuitBreaker {
            config,
            lifecycle: Lifecycle {
                state: BreakerState::Closed,
                since: SimTime::ZERO,
                generation: 0,
                times_opened: 0,
                ended_open_time: SimDuration::ZERO,
            },
            closed,
            half_open: HalfOpenEpisode::default(),
            calls_permitted: 0,
            calls_rejected: 0,
            stale_results: 0,
        }
    }

    /// The settings it was built with.
    pub fn config(&self) -> &BreakerConfig {
        &self.config
    }

    /// Asks to send a call at `now` (resilience4j's `tryAcquirePermission`).
    pub fn try_acquire(&mut self, now: SimTime) -> Result<Permit, CallNotPermitted> {
        self.advance(now);
        if self.lifecycle.state == BreakerState::Open
            && !self
                .config
                .automatic_transition_from_open_to_half_open_enabled
            && now > self.lifecycle.since + self.config.wait_duration_in_open_state
        {
            self.transition(BreakerState::HalfOpen, now);
        }
        let admitted = match self.lifecycle.state {
            BreakerState::Closed => true,
            BreakerState::Open => false,
            BreakerState::HalfOpen => {
                let limit = match self.config.half_open_rule {
                    HalfOpenRule::Rates {
                        permitted_number_of_calls_in_half_open_state,
                    } => permitted_number_of_calls_in_half_open_state,
                    HalfOpenRule::ConsecutiveSuccesses {
                        max_concurrent_probes,
                        ..
                    } => max_concurrent_probes,
                };
                let free = self.half_open.permits_taken < limit;
                self.half_open.permits_taken += u32::from(free);
                free
            }
        };
        if admitted {
            self.calls_permitted += 1;
            Ok(Permit {
                generation: self.lifecycle.generation as u32,
            })
        } else {
            self.calls_rejected += 1;
            Err(CallNotPermitted {
                state: self.lifecycle.state,
            })
        }
    }

    /// Records the result of an admitted call that ended at `now` after running
    /// for `duration`. Results of permits granted before the latest transition are
    /// dropped (see the module documentation).
    pub fn record(
        &mut self,
        now: SimTime,
        permit: Permit,
        outcome: CallOutcome,
        duration: SimDuration,
    ) {
        self.advance(now);
        if permit.generation != self.lifecycle.generation as u32 {
            self.stale_results += 1;
            return;
        }
        let slow = duration > self.config.slow_call_duration_threshold;
        match self.lifecycle.state {
            BreakerState::Closed => self.record_closed(now, outcome, slow),
            BreakerState::HalfOpen => self.record_half_open(now, outcome, slow),
            // Permits are never granted in OPEN and every transition starts a new
            // generation, so no current permit can belong to OPEN.
            BreakerState::Open => unreachable!("a permit of the OPEN generation"),
        }
    }

    fn record_closed(&mut self, now: SimTime, outcome: CallOutcome, slow: bool) {
        let failed = match outcome {
            CallOutcome::Ignored => return,
            CallOutcome::Success => false,
            CallOutcome::Failure => true,
        };
        let minimum = u64::from(self.config.minimum_number_of_calls);
        let opens = match &mut self.closed {
            ClosedMetrics::Consecutive {
                failures,
                threshold,
            } => {
                *failures = if failed { *failures + 1 } else { 0 };
                *failures >= *threshold
            }
            ClosedMetrics::Count(window) => {
                let totals = window.record(failed, slow);
                let minimum = minimum.min(window.slots.len() as u64);
                verdict(&self.config, totals, minimum) == Verdict::AboveThresholds
            }
            ClosedMetrics::Time(window) => {
                let totals = window.record(now, failed, slow);
                verdict(&self.config, totals, minimum) == Verdict::AboveThresholds
            }
        };
        if opens {
            self.transition(BreakerState::Open, now);
        }
    }

    fn record_half_open(&mut self, now: SimTime, outcome: CallOutcome, slow: bool) {
        let episode = &mut self.half_open;
        let next = match self.config.half_open_rule {
            HalfOpenRule::Rates {
                permitted_number_of_calls_in_half_open_state: permitted,
            } => {
                let failed = match outcome {
                    CallOutcome::Ignored => {
                        episode.permits_taken = episode.permits_taken.saturating_sub(1);
                        return;
                    }
                    CallOutcome::Success => false,
                    CallOutcome::Failure => true,
                };
                episode.results.add(failed, slow);
                let minimum = u64::from(self.config.minimum_number_of_calls.min(permitted));
                match verdict(&self.config, episode.results, minimum) {
                    Verdict::BelowMinimumCalls => return,
                    Verdict::BelowThresholds => BreakerState::Closed,
                    Verdict::AboveThresholds => BreakerState::Open,
                }
            }
            HalfOpenRule::ConsecutiveSuccesses {
                successes_to_close, ..
            } => {
                episode.permits_taken = episode.permits_taken.saturating_sub(1);
                match outcome {
                    CallOutcome::Ignored => return,
                    CallOutcome::Failure => BreakerState::Open,
                    CallOutcome::Success => {
                        episode.consecutive_successes += 1;
                        if episode.consecutive_successes < successes_to_close {
                            return;
                        }
                        BreakerState::Closed
                    }
                }
            }
        };
        self.transition(next, now);
    }

    /// The state at `now`, timed transitions included. Without automatic
    /// transition a breaker whose wait is over still reads OPEN until a call is
    /// asked, as resilience4j's `getState()`.
    pub fn state(&self, now: SimTime) -> BreakerState {
        self.lifecycle.at(&self.config, now).state
    }

    /// Total time spent OPEN from the start up to `now`.
    pub fn open_time(&self, now: SimTime) -> SimDuration {
        self.lifecycle.at(&self.config, now).open_time(now)
    }

    /// Transitions to OPEN up to `now`.
    pub fn times_opened(&self, now: SimTime) -> u64 {
        self.lifecycle.at(&self.config, now).times_opened
    }

    /// Calls admitted so far.
    pub fn calls_permitted(&self) -> u64 {
        self.calls_permitted
    }

    /// Calls refused so far, in OPEN or for want of a half-open permit
    /// (resilience4j's `numberOfNotPermittedCalls`).
    pub fn calls_rejected(&self) -> u64 {
        self.calls_rejected
    }

    /// Results dropped because their permit was granted before a transition.
    pub fn stale_results(&self) -> u64 {
        self.stale_results
    }

    /// Applies the timed transitions up to `now`.
    fn advance(&mut self, now: SimTime) {
        debug_assert!(now >= self.lifecycle.since, "time went backwards");
        let projected = self.lifecycle.at(&self.config, now);
        if projected.generation != self.lifecycle.generation {
            self.lifecycle = projected;
            self.on_entry();
        }
    }

    fn transition(&mut self, to: BreakerState, at: SimTime) {
        self.lifecycle = self.lifecycle.enter(to, at);
        self.on_entry();
    }

    /// Fresh metrics on entering a state, as resilience4j builds a new state object
    /// with new metrics.
    fn on_entry(&mut self) {
        match self.lifecycle.state {
            BreakerState::Closed => match &mut self.closed {
                ClosedMetrics::Consecutive { failures, .. } => *failures = 0,
                ClosedMetrics::Count(window) => window.reset(),
                ClosedMetrics::Time(window) => window.reset(),
            },
            BreakerState::HalfOpen => self.half_open = HalfOpenEpisode::default(),
            BreakerState::Open => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: CallOutcome = CallOutcome::Success;
    const F: CallOutcome = CallOutcome::Failure;
    const I: CallOutcome = CallOutcome::Ignored;
    const FAST: SimDuration = SimDuration(1_000_000); // 1 ms

    fn secs(s: u64) -> SimTime {
        SimTime(s * NANOS_PER_SEC)
    }

    fn ms(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000)
    }

    /// Acquires and records one call at `now`; returns the state after it.
    fn call(b: &mut CircuitBreaker, now: SimTime, outcome: CallOutcome) -> BreakerState {
        call_taking(b, now, outcome, FAST)
    }

    fn call_taking(
        b: &mut CircuitBreaker,
        now: SimTime,
        outcome: CallOutcome,
        duration: SimDuration,
    ) -> BreakerState {
        let permit = b.try_acquire(now).expect("admitted");
        b.record(now, permit, outcome, duration);
        b.state(now)
    }

    fn count_based(window: u32, minimum: u32) -> BreakerConfig {
        BreakerConfig {
            failure_detection: FailureDetection::CountBased {
                sliding_window_size: window,
            },
            minimum_number_of_calls: minimum,
            ..BreakerConfig::default()
        }
    }

    /// Opens a breaker at `at` by consecutive failures (threshold 1).
    fn opened_at(mut config: BreakerConfig, at: SimTime) -> CircuitBreaker {
        config.failure_detection = FailureDetection::ConsecutiveFailures {
            failure_threshold: 1,
        };
        let mut b = CircuitBreaker::new(config);
        assert_eq!(call(&mut b, at, F), BreakerState::Open);
        b
    }

    #[test]
    fn defaults_are_resilience4j_and_s5() {
        let d = BreakerConfig::default();
        assert_eq!(d, BreakerConfig::resilience4j_default());
        assert_eq!(
            d.failure_detection,
            FailureDetection::CountBased {
                sliding_window_size: 100
            }
        );
        assert_eq!(d.failure_rate_threshold, 50.0);
        assert_eq!(d.slow_call_rate_threshold, 100.0);
        assert_eq!(d.slow_call_duration_threshold, SimDuration::from_secs(60));
        assert_eq!(d.minimum_number_of_calls, 100);
        assert_eq!(
            d.half_open_rule,
            HalfOpenRule::Rates {
                permitted_number_of_calls_in_half_open_state: 10
            }
        );
        assert_eq!(d.wait_duration_in_open_state, SimDuration::from_secs(60));
        assert!(!d.automatic_transition_from_open_to_half_open_enabled);
        assert_eq!(d.max_wait_duration_in_half_open_state, SimDuration::ZERO);

        let s5 = BreakerConfig::s5_consecutive(5, SimDuration::from_secs(10));
        assert_eq!(
            s5.failure_detection,
            FailureDetection::ConsecutiveFailures {
                failure_threshold: 5
            }
        );
        assert_eq!(
            s5.half_open_rule,
            HalfOpenRule::ConsecutiveSuccesses {
                max_concurrent_probes: 1,
                successes_to_close: 3
            }
        );
        assert_eq!(s5.wait_duration_in_open_state, SimDuration::from_secs(10));
    }

    #[test]
    fn default_breaker_waits_for_100_calls_then_opens_at_50_percent() {
        // 99 failures: 100% failing, but below minimumNumberOfCalls.
        let mut b = CircuitBreaker::new(BreakerConfig::default());
        for _ in 0..99 {
            assert_eq!(call(&mut b, secs(1), F), BreakerState::Closed);
        }
        assert_eq!(call(&mut b, secs(1), F), BreakerState::Open);

        // 50 successes then 50 failures: the 100th call makes exactly 50%.
        let mut b = CircuitBreaker::new(BreakerConfig::default());
        for _ in 0..50 {
            assert_eq!(call(&mut b, secs(1), S), BreakerState::Closed);
        }
        for _ in 0..49 {
            assert_eq!(call(&mut b, secs(1), F), BreakerState::Closed);
        }
        assert_eq!(call(&mut b, secs(1), F), BreakerState::Open);
        assert_eq!(b.times_opened(secs(1)), 1);
    }

    #[test]
    fn opens_on_exactly_the_call_that_crosses_the_threshold() {
        // Window 10, minimum 5, threshold 50%.
        let mut b = CircuitBreaker::new(count_based(10, 5));
        // S S S F F: 5 calls, 40%.
        for outcome in [S, S, S, F, F] {
            assert_eq!(call(&mut b, secs(1), outcome), BreakerState::Closed);
        }
        // 6th: 3 of 6 = 50% ≥ 50.
        assert_eq!(call(&mut b, secs(1), F), BreakerState::Open);
        assert_eq!(
            b.try_acquire(secs(1)),
            Err(CallNotPermitted {
                state: BreakerState::Open
            })
        );
    }

    #[test]
    fn count_based_minimum_is_capped_at_the_window_size() {
        // Window 4, minimumNumberOfCalls 100 → evaluated from 4 calls on.
        let mut b = CircuitBreaker::new(count_based(4, 100));
        for outcome in [S, F, F] {
            assert_eq!(call(&mut b, secs(1), outcome), BreakerState::Closed);
        }
        // S F F S: 2 of 4 = 50%.
        assert_eq!(call(&mut b, secs(1), S), BreakerState::Open);
    }

    #[test]
    fn count_window_slides_old_outcomes_out() {
        let mut b = CircuitBreaker::new(count_based(4, 4));
        // F S S S → 25%; S → window S S S S, the F fell out: 0%;
        // F → S S S F 25%; F → S S F F = 50%: opens, though 3 of all 7 is 43%.
        for outcome in [F, S, S, S, S, F] {
            assert_eq!(call(&mut b, secs(1), outcome), BreakerState::Closed);
        }
        assert_eq!(call(&mut b, secs(1), F), BreakerState::Open);
    }

    #[test]
    fn ignored_calls_are_never_counted() {
        let mut b = CircuitBreaker::new(count_based(4, 4));
        for outcome in [F, I, I, I, I, I, F, S] {
            assert_eq!(call(&mut b, secs(1), outcome), BreakerState::Closed);
        }
        // F F S S = 50% on the 4th counted call.
        assert_eq!(call(&mut b, secs(1), S), BreakerState::Open);
    }

    fn time_based(seconds: u32, minimum: u32) -> BreakerConfig {
        BreakerConfig {
            failure_detection: FailureDetection::TimeBased {
                sliding_window_size: seconds,
            },
            minimum_number_of_calls: minimum,
            ..BreakerConfig::default()
        }
    }

    #[test]
    fn time_window_keeps_a_bucket_for_exactly_the_window() {
        // Window 10 s, minimum 4, 50%. Two failures in second 0.
        // Last nanosecond of second 9: second 0 is still in the window (0..=9):
        // F F S S = 50% opens.
        let mut b = CircuitBreaker::new(time_based(10, 4));
        call(&mut b, ms(500), F);
        call(&mut b, ms(500), F);
        assert_eq!(
            call(&mut b, SimTime(10 * NANOS_PER_SEC - 1), S),
            BreakerState::Closed
        );
        assert_eq!(
            call(&mut b, SimTime(10 * NANOS_PER_SEC - 1), S),
            BreakerState::Open
        );

        // At 10.0 s the window is seconds 1..=10: second 0's failures are gone.
        // F S S there is 3 calls (below the minimum), then S makes 1 of 4 = 25%.
        let mut b = CircuitBreaker::new(time_based(10, 4));
        call(&mut b, ms(500), F);
        call(&mut b, ms(500), F);
        for outcome in [F, S, S, S] {
            assert_eq!(call(&mut b, secs(10), outcome), BreakerState::Closed);
        }
        // Counted so far in the window: F S S S. Add F F: 3 of 6 = 50%.
        assert_eq!(call(&mut b, ms(10_999), F), BreakerState::Closed);
        assert_eq!(call(&mut b, ms(10_999), F), BreakerState::Open);
    }

    #[test]
    fn time_window_buckets_expire_one_by_one_and_after_a_long_gap() {
        // Window 3 s, minimum 3, 50%.
        let mut b = CircuitBreaker::new(time_based(3, 3));
        call(&mut b, ms(100), F); // second 0
        call(&mut b, ms(1_100), S); // second 1
        call(&mut b, ms(2_100), S); // second 2: F S S = 33%
        assert_eq!(b.state(ms(2_100)), BreakerState::Closed);
        // Second 3 evicts second 0 only: S S S = 0%.
        assert_eq!(call(&mut b, ms(3_100), S), BreakerState::Closed);
        // Second 4 evicts second 1: S S F = 33%, then F: S S F F = 50%.
        assert_eq!(call(&mut b, ms(4_100), F), BreakerState::Closed);
        assert_eq!(call(&mut b, ms(4_200), F), BreakerState::Open);

        // A gap longer than the window empties it.
        let mut b = CircuitBreaker::new(time_based(3, 3));
        call(&mut b, ms(100), F);
        call(&mut b, ms(200), F);
        assert_eq!(call(&mut b, secs(25), S), BreakerState::Closed);
        assert_eq!(call(&mut b, secs(25), S), BreakerState::Closed);
        // S S F = 33% (the two old failures would have made it 60%).
        assert_eq!(call(&mut b, secs(26), F), BreakerState::Closed);
    }

    #[test]
    fn slow_successes_alone_open_it() {
        // Slow = strictly over 1 s; slow-call threshold 60%; window 10, minimum 5.
        let config = BreakerConfig {
            slow_call_rate_threshold: 60.0,
            slow_call_duration_threshold: SimDuration::from_secs(1),
            ..count_based(10, 5)
        };
        let mut b = CircuitBreaker::new(config);
        let d = |s: f64| SimDuration::from_ms(s * 1000.0);
        // 2, 1 (exactly the threshold: not slow), 2, 0.1, 0.1 → 2 of 5 = 40%.
        for secs_taken in [2.0, 1.0, 2.0, 0.1, 0.1] {
            assert_eq!(
                call_taking(&mut b, secs(1), S, d(secs_taken)),
                BreakerState::Closed
            );
        }
        // 3 of 6 = 50%, 4 of 7 = 57.1%, 5 of 8 = 62.5% ≥ 60: opens on the 8th.
        assert_eq!(
            call_taking(&mut b, secs(1), S, d(2.0)),
            BreakerState::Closed
        );
        assert_eq!(
            call_taking(&mut b, secs(1), S, d(2.0)),
            BreakerState::Closed
        );
        assert_eq!(call_taking(&mut b, secs(1), S, d(2.0)), BreakerState::Open);
    }

    #[test]
    fn a_slow_failure_counts_as_failed_and_as_slow() {
        // Failure threshold 50%, slow threshold 100%, window 4.
        let config = BreakerConfig {
            slow_call_duration_threshold: SimDuration::from_secs(1),
            ..count_based(4, 4)
        };
        let mut b = CircuitBreaker::new(config);
        let slow = SimDuration::from_secs(2);
        // F(slow) S(slow) S(slow): failure 33%, and all slow but below minimum.
        for outcome in [F, S, S] {
            assert_eq!(
                call_taking(&mut b, secs(1), outcome, slow),
                BreakerState::Closed
            );
        }
        // 4th slow success: failure 25%, slow 4 of 4 = 100% only if the slow
        // failure is counted as slow.
        assert_eq!(call_taking(&mut b, secs(1), S, slow), BreakerState::Open);
    }

    #[test]
    fn consecutive_mode_resets_on_success_not_on_ignored() {
        let mut b =
            CircuitBreaker::new(BreakerConfig::s5_consecutive(3, SimDuration::from_secs(10)));
        for outcome in [F, F, S, F, F, I] {
            assert_eq!(call(&mut b, secs(1), outcome), BreakerState::Closed);
        }
        // The 3rd failure in a row (the ignored call in between does not count).
        assert_eq!(call(&mut b, secs(1), F), BreakerState::Open);
    }

    #[test]
    fn open_rejects_until_the_wait_ends_then_half_open_admits_exactly_the_permits() {
        let config = BreakerConfig {
            half_open_rule: HalfOpenRule::Rates {
                permitted_number_of_calls_in_half_open_state: 3,
            },
            ..BreakerConfig::default()
        };
        let mut b = opened_at(config, secs(10));
        let reject_open = Err(CallNotPermitted {
            state: BreakerState::Open,
        });
        assert_eq!(b.try_acquire(secs(10)), reject_open);
        assert_eq!(b.try_acquire(secs(40)), reject_open);
        // resilience4j admits strictly after the wait (`isAfter`).
        assert_eq!(b.try_acquire(secs(70)), reject_open);
        assert_eq!(b.state(secs(70)), BreakerState::Open, "no call asked yet");
        let probe_at = SimTime(secs(70).0 + 1);
        let probes: Vec<Permit> = (0..3).map(|_| b.try_acquire(probe_at).unwrap()).collect();
        assert_eq!(b.state(probe_at), BreakerState::HalfOpen);
        assert_eq!(
            b.try_acquire(probe_at),
            Err(CallNotPermitted {
                state: BreakerState::HalfOpen
            })
        );
        // A result does not give a permit back (quota per episode)...
        b.record(probe_at, probes[0], S, FAST);
        assert!(b.try_acquire(probe_at).is_err());
        // ...an ignored outcome does.
        b.record(probe_at, probes[1], I, FAST);
        assert!(b.try_acquire(probe_at).is_ok());
        assert!(b.try_acquire(probe_at).is_err());
        assert_eq!(b.calls_rejected(), 6);
        assert_eq!(b.calls_permitted(), 1 + 3 + 1);
    }

    #[test]
    fn s5_probes_are_limited_concurrently() {
        let mut b = opened_at(
            BreakerConfig::s5_consecutive(1, SimDuration::from_secs(10)),
            secs(0),
        );
        let p = b
            .try_acquire(secs(10))
            .expect("one probe after the cooldown");
        assert!(
            b.try_acquire(secs(10)).is_err(),
            "a second concurrent probe"
        );
        b.record(secs(11), p, S, FAST);
        let p = b.try_acquire(secs(11)).expect("the probe came back");
        assert!(b.try_acquire(secs(11)).is_err());
        b.record(secs(12), p, I, FAST);
        assert!(
            b.try_acquire(secs(12)).is_ok(),
            "an ignored probe frees its slot"
        );
        assert_eq!(b.state(secs(12)), BreakerState::HalfOpen);
    }

    fn rates_half_open(permitted: u32, minimum: u32) -> BreakerConfig {
        BreakerConfig {
            half_open_rule: HalfOpenRule::Rates {
                permitted_number_of_calls_in_half_open_state: permitted,
            },
            minimum_number_of_calls: minimum,
            wait_duration_in_open_state: SimDuration::from_secs(10),
            automatic_transition_from_open_to_half_open_enabled: true,
            ..BreakerConfig::default()
        }
    }

    #[test]
    fn half_open_rates_rule_closes_below_and_reopens_at_the_threshold() {
        // 4 permits, minimum 100 → evaluated at 4 results. S S F S = 25%: closes.
        let mut b = opened_at(rates_half_open(4, 100), secs(0));
        let t = secs(10);
        let permits: Vec<Permit> = (0..4).map(|_| b.try_acquire(t).unwrap()).collect();
        for (permit, outcome) in permits[..3].iter().zip([S, S, F]) {
            b.record(t, *permit, outcome, FAST);
            assert_eq!(b.state(t), BreakerState::HalfOpen);
        }
        b.record(t, permits[3], S, FAST);
        assert_eq!(b.state(t), BreakerState::Closed);

        // F F S S = 50%: reopens on the 4th result.
        let mut b = opened_at(rates_half_open(4, 100), secs(0));
        let permits: Vec<Permit> = (0..4).map(|_| b.try_acquire(t).unwrap()).collect();
        for (permit, outcome) in permits[..3].iter().zip([F, F, S]) {
            b.record(t, *permit, outcome, FAST);
            assert_eq!(b.state(t), BreakerState::HalfOpen);
        }
        b.record(t, permits[3], S, FAST);
        assert_eq!(b.state(t), BreakerState::Open);
        assert_eq!(b.times_opened(t), 2);
    }

    #[test]
    fn half_open_evaluates_at_the_minimum_when_it_is_below_the_permits() {
        // minimumNumberOfCalls 2 < 4 permits: two successes close it; the two
        // probes still out are then stale and must not touch the new CLOSED state
        // (one failure would otherwise open this threshold-1 breaker).
        let mut b = opened_at(rates_half_open(4, 2), secs(0));
        let t = secs(10);
        let permits: Vec<Permit> = (0..4).map(|_| b.try_acquire(t).unwrap()).collect();
        b.record(t, permits[0], S, FAST);
        assert_eq!(b.state(t), BreakerState::HalfOpen);
        b.record(t, permits[1], S, FAST);
        assert_eq!(b.state(t), BreakerState::Closed);
        b.record(t, permits[2], F, FAST);
        b.record(t, permits[3], F, FAST);
        assert_eq!(b.state(t), BreakerState::Closed);
        assert_eq!(b.stale_results(), 2);
    }

    #[test]
    fn closing_starts_a_fresh_window() {
        // Window 4, minimum 4: the closed window before opening held F F F F.
        let config = BreakerConfig {
            wait_duration_in_open_state: SimDuration::from_secs(10),
            automatic_transition_from_open_to_half_open_enabled: true,
            half_open_rule: HalfOpenRule::Rates {
                permitted_number_of_calls_in_half_open_state: 1,
            },
            ..count_based(4, 4)
        };
        let mut b = CircuitBreaker::new(config);
        for _ in 0..4 {
            call(&mut b, secs(0), F);
        }
        assert_eq!(b.state(secs(0)), BreakerState::Open);
        assert_eq!(call(&mut b, secs(10), S), BreakerState::Closed);
        // S F F: below the minimum in the fresh window (with the old F F F F kept,
        // the first S would have made F F F S = 75% and opened it); the 4th call
        // makes S F F F = 75%.
        for outcome in [S, F, F] {
            assert_eq!(call(&mut b, secs(11), outcome), BreakerState::Closed);
        }
        assert_eq!(call(&mut b, secs(11), F), BreakerState::Open);
    }

    #[test]
    fn s5_half_open_closes_after_three_successes_and_reopens_on_any_failure() {
        let mut b = opened_at(
            BreakerConfig::s5_consecutive(1, SimDuration::from_secs(10)),
            secs(0),
        );
        assert_eq!(call(&mut b, secs(10), S), BreakerState::HalfOpen);
        assert_eq!(call(&mut b, secs(11), S), BreakerState::HalfOpen);
        assert_eq!(call(&mut b, secs(12), F), BreakerState::Open);
        // A new episode counts successes from zero.
        assert_eq!(call(&mut b, secs(22), S), BreakerState::HalfOpen);
        assert_eq!(call(&mut b, secs(22), S), BreakerState::HalfOpen);
        assert_eq!(call(&mut b, secs(22), S), BreakerState::Closed);
        assert_eq!(b.times_opened(secs(22)), 2);
        assert_eq!(b.open_time(secs(30)), SimDuration::from_secs(20));
    }

    #[test]
    fn automatic_transition_happens_at_exactly_the_end_of_the_wait() {
        let config = BreakerConfig {
            automatic_transition_from_open_to_half_open_enabled: true,
            ..BreakerConfig::default()
        };
        let b = opened_at(config, secs(5));
        assert_eq!(b.state(SimTime(secs(65).0 - 1)), BreakerState::Open);
        assert_eq!(b.state(secs(65)), BreakerState::HalfOpen);
        // No call was needed, so the open time stops at 60 s.
        assert_eq!(b.open_time(secs(500)), SimDuration::from_secs(60));
        let mut b = b;
        assert!(b.try_acquire(secs(65)).is_ok());
    }

    #[test]
    fn max_wait_in_half_open_sends_it_back_to_open() {
        // Not automatic: half-open on the first call after the wait (at 70 s + 1 ns),
        // back to open 10 s later, then the wait starts again.
        let config = BreakerConfig {
            max_wait_duration_in_half_open_state: SimDuration::from_secs(10),
            ..BreakerConfig::default()
        };
        let mut b = opened_at(config, secs(10));
        let t1 = SimTime(secs(70).0 + 1);
        let probe = b.try_acquire(t1).unwrap();
        let back = t1 + SimDuration::from_secs(10);
        assert_eq!(b.state(SimTime(back.0 - 1)), BreakerState::HalfOpen);
        assert_eq!(b.state(back), BreakerState::Open);
        assert_eq!(b.times_opened(back), 2);
        b.record(back, probe, S, FAST);
        assert_eq!(b.stale_results(), 1, "the probe's episode is over");
        let again = back + SimDuration::from_secs(60);
        assert!(b.try_acquire(again).is_err());
        assert!(b.try_acquire(again + SimDuration(1)).is_ok());
        // Open 10..70 s + 1 ns, then from `back` to `again` + 1 ns.
        assert_eq!(
            b.open_time(again + SimDuration(1)),
            SimDuration(60 * NANOS_PER_SEC + 1) + SimDuration(60 * NANOS_PER_SEC + 1)
        );
    }

    #[test]
    fn idle_automatic_cycles_are_accounted_without_calls() {
        // Automatic, wait 60 s, max half-open 10 s, opened at 0: a 70 s cycle.
        // At 1000 s: 14 whole cycles end at 980 s, the 15th open period runs
        // 980..1040 s. Opened 1 + 14 times; open 14 × 60 + 20 = 860 s.
        let config = BreakerConfig {
            automatic_transition_from_open_to_half_open_enabled: true,
            max_wait_duration_in_half_open_state: SimDuration::from_secs(10),
            ..BreakerConfig::default()
        };
        let mut b = opened_at(config, secs(0));
        assert_eq!(b.state(secs(1000)), BreakerState::Open);
        assert_eq!(b.times_opened(secs(1000)), 15);
        assert_eq!(b.open_time(secs(1000)), SimDuration::from_secs(860));
        assert_eq!(b.state(secs(1040)), BreakerState::HalfOpen);
        assert_eq!(b.state(secs(1049)), BreakerState::HalfOpen);
        assert_eq!(b.state(secs(1050)), BreakerState::Open);
        // Applying it (a call) agrees with the projection.
        assert!(b.try_acquire(secs(1045)).is_ok());
        assert_eq!(b.times_opened(secs(1045)), 15);
        assert_eq!(b.open_time(secs(1045)), SimDuration::from_secs(900));
    }

    #[test]
    fn stale_permits_are_ignored() {
        let config = BreakerConfig {
            half_open_rule: HalfOpenRule::Rates {
                permitted_number_of_calls_in_half_open_state: 1,
            },
            wait_duration_in_open_state: SimDuration::from_secs(10),
            ..count_based(2, 2)
        };
        let mut b = CircuitBreaker::new(config);
        let early = b.try_acquire(secs(0)).unwrap();
        let early2 = b.try_acquire(secs(0)).unwrap();
        call(&mut b, secs(1), F);
        assert_eq!(call(&mut b, secs(1), F), BreakerState::Open);
        // Admitted while CLOSED, back while OPEN: dropped.
        b.record(secs(2), early, S, FAST);
        assert_eq!(b.state(secs(2)), BreakerState::Open);
        // The probe is admitted; a CLOSED-era failure arriving now is not a probe.
        let probe = b.try_acquire(secs(12)).unwrap();
        b.record(secs(12), early2, F, FAST);
        assert_eq!(b.state(secs(12)), BreakerState::HalfOpen);
        b.record(secs(13), probe, S, FAST);
        assert_eq!(b.state(secs(13)), BreakerState::Closed);
        assert_eq!(b.stale_results(), 2);
    }

    #[test]
    fn open_time_adds_up_the_open_periods() {
        // Not automatic, wait 60 s, 1 permit. Opened at 10 s; the first call after
        // the wait comes at 100 s (open 90 s), fails at 105 s (open again).
        let config = BreakerConfig {
            half_open_rule: HalfOpenRule::Rates {
                permitted_number_of_calls_in_half_open_state: 1,
            },
            ..BreakerConfig::default()
        };
        let mut b = opened_at(config, secs(10));
        assert_eq!(b.open_time(secs(10)), SimDuration::ZERO);
        assert_eq!(b.open_time(secs(50)), SimDuration::from_secs(40));
        let probe = b.try_acquire(secs(100)).unwrap();
        assert_eq!(b.open_time(secs(103)), SimDuration::from_secs(90));
        b.record(secs(105), probe, F, SimDuration::from_secs(5));
        assert_eq!(b.state(secs(105)), BreakerState::Open);
        assert_eq!(b.open_time(secs(200)), SimDuration::from_secs(90 + 95));
        assert_eq!(b.times_opened(secs(200)), 2);
    }
}
