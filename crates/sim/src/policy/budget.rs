//! Retry budgets: may this edge send one more retry (or hedge) right now?
//!
//! `max_attempts` limits one call; a budget limits the collective, which is
//! what keeps a slow dependency from being buried under retries (S5's Catalog
//! incident: a 10% budget caps the load at about 8,800 req/s instead of
//! 25,000). Five published designs are modelled, each with its library's
//! parameter names and defaults, behind one API so that a model can compare
//! them on the same traffic:
//!
//! | kind | follows | a retry costs | refilled by | retry allowed while |
//! |---|---|---|---|---|
//! | `token_bucket` | the S5 chapter's Go `Budget` | 1 token | `ratio` per original request | tokens ≥ 1 (`TrySpend`: `tokens >= 1`) |
//! | `grpc_throttling` | gRPC `retryThrottling` (A6) | nothing (failures cost 1) | `tokenRatio` per success | tokens > `maxTokens` / 2 (A6 throttles at `token_count <= maxTokens / 2`) |
//! | `finagle` | Finagle `RetryBudget` | `1 / percentCanRetry` deposits | 1 per request, plus a reserve of `minRetriesPerSec × ttl`, over a `ttl` window | balance ≥ 1 retry (`tryGet`: `count >= n`) |
//! | `envoy` | Envoy `retry_budget` | a slot while in flight | the retry ending | in flight < max(`budget_percent` × active, `min_retry_concurrency`) (`canCreate`: `count() < max()`) |
//! | `retry_circuit_breaker` | Brooker's retry circuit breaker | nothing (failures count) | successes displacing failures from the window | failures in the last `window` attempts ≤ `max_failure_rate` × `window` (Brooker's simulator refuses at `failures / calls > max_rate`) |
//! | `none` | — | — | — | always |
//!
//! Each rule is tested at its boundary by a test named `boundary_*` for it.
//! Where designs disagree at the boundary, each kind keeps its own library's:
//! the chapter's bucket grants at exactly one token where Brooker's
//! adaptive-retry simulation (`bucket > 1.0`) would not, and gRPC refuses at
//! exactly half.
//!
//! Google SRE client-side adaptive throttling is a different layer (it rejects
//! first attempts too) and lives elsewhere.
//!
//! # Driving it
//!
//! One [`RetryBudget`] per caller → callee edge, shared by every call on it
//! (gRPC keeps one per server name per channel, Finagle one per client, Envoy
//! one per cluster and priority). The call state machine, for each call:
//!
//! 1. [`RetryBudget::on_request`] once, when the first attempt is sent — not
//!    for retries or hedges.
//! 2. [`RetryBudget::on_attempt_result`] whenever any attempt (first, retry or
//!    hedge) ends with an answer or its per-attempt timeout. Attempts that never
//!    left the caller (an open breaker, a rate limiter) and attempts the caller
//!    cancelled (the losing hedge, the deadline) are not results, as A6 does not
//!    count its transparent retries. gRPC's count and the retry circuit
//!    breaker's window move.
//! 3. If that attempt was a granted retry or hedge,
//!    [`RetryBudget::on_retry_finished`] — exactly once per granted retry,
//!    also when the call is abandoned before the retry is sent (deadline during
//!    the backoff sleep) or the retry is cancelled.
//! 4. Only once the retry policy would retry (retryable failure, attempts left,
//!    deadline not passed): [`RetryBudget::try_retry`]. On `false` the call
//!    gives up with its last failure; a budget never delays. For a hedge, ask
//!    `try_retry` just before sending it (gRPC hedges draw on the same
//!    throttle; a denied hedge is simply not sent).
//!
//! The order 2 → 3 → 4 matters: gRPC counts the failure before it decides
//! (`RecordFailure` returns the verdict), and Envoy releases the previous
//! retry's slot before it asks for the next (`resetRetry` at the top of
//! `shouldRetry`). Ask at decision time, before the backoff sleep, as gRPC,
//! Finagle and Envoy do (Envoy counts the retry as active through its
//! backoff). The chapter's Go loop spends its token after the sleep instead;
//! the only difference is that a call whose deadline expires mid-sleep has
//! spent nothing there.
//!
//! `active_requests` is the edge's attempts in flight (first attempts, retries
//! and hedges alike, without the attempt that just failed) plus those queued at
//! the caller for the edge — Envoy's `rq_active + rq_pending`. Only `envoy`
//! reads it.
//!
//! # Exact arithmetic
//!
//! Token levels are integers in each library's own fixed point (gRPC's C-core
//! and Java keep thousandths, Finagle scales by 1000), so sums are exact and a
//! run repeats bit for bit. The chapter's bucket is `float64` in Go, where ten
//! deposits of 0.1 sum to 0.9999999999999999 and would deny the retry they
//! paid for; here it counts millionths of a token, so they make exactly 1.

use stormsim_engine::{SimDuration, SimTime};

/// How an attempt ended, as far as a budget cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// The callee answered successfully.
    Success,
    /// A failure the retry policy retries (timeout, 503, reset), or gRPC
    /// pushback saying "do not retry", which A6 also counts as a failure.
    RetryableFailure,
    /// A failure no retry can fix (a 4xx): gRPC ignores it, so a caller
    /// sending malformed requests does not throttle its own retries.
    NonRetryableFailure,
}

/// Which budget an edge uses, with that library's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum RetryBudgetConfig {
    /// No budget: every retry the retry policy wants is sent (the Catalog
    /// incident's shared wrapper).
    #[default]
    None,
    /// The S5 chapter's token bucket.
    TokenBucket(TokenBucketConfig),
    /// gRPC `retryThrottling`.
    GrpcThrottling(GrpcThrottlingConfig),
    /// Finagle `RetryBudget`.
    Finagle(FinagleBudgetConfig),
    /// Envoy `retry_budget`.
    Envoy(EnvoyBudgetConfig),
    /// Brooker's retry circuit breaker.
    RetryCircuitBreaker(RetryCircuitBreakerConfig),
}

/// The S5 chapter's retry budget: every original request adds `ratio` tokens
/// up to `max_tokens`, every retry spends one.
///
/// The bucket starts full, as the chapter's `NewBudget(max, ratio)` does
/// (`tokens: max`): a client that has just started, or that sends little
/// traffic, can still retry `max_tokens` times.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TokenBucketConfig {
    /// The chapter's `max`: the burst of retries a full bucket allows. The
    /// chapter gives no value; 10 is ours (ten retries on a cold start, refilled
    /// by 100 originals at the default ratio). Below 1, no retry is ever
    /// allowed.
    pub max_tokens: f64,
    /// The chapter's `ratio`: tokens per original request, so retries stay
    /// below about `ratio` of the originals (0.1 = 10%). Kept to a millionth of
    /// a token.
    pub ratio: f64,
}

impl Default for TokenBucketConfig {
    fn default() -> Self {
        TokenBucketConfig {
            max_tokens: 10.0,
            ratio: 0.1,
        }
    }
}

/// gRPC's `retryThrottling` (proposal A6), kept per server name per channel.
///
/// Both fields are required in gRPC's service config, which has no defaults;
/// [`Default`] gives A6's own example, `{"maxTokens": 10, "tokenRatio": 0.1}`,
/// which throttles once failures exceed about 10% of successes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GrpcThrottlingConfig {
    /// `maxTokens`, in (0, 1000]: the count starts here and never exceeds it.
    pub max_tokens: f64,
    /// `tokenRatio`, > 0: tokens added per success. Up to 3 decimal places, as
    /// gRPC supports (it counts thousandths of a token).
    pub token_ratio: f64,
}

impl Default for GrpcThrottlingConfig {
    fn default() -> Self {
        GrpcThrottlingConfig {
            max_tokens: 10.0,
            token_ratio: 0.1,
        }
    }
}

/// Finagle's `RetryBudget(ttl, minRetriesPerSec, percentCanRetry)`; the
/// defaults are Finagle's `RetryBudget()`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FinagleBudgetConfig {
    /// `ttl`, 1 to 60 s: deposits and withdrawals expire after about this long.
    pub ttl: SimDuration,
    /// `minRetriesPerSec`: a reserve of `minRetriesPerSec × ttl` retries per
    /// window for clients that just started or send little; 0 for none.
    pub min_retries_per_sec: u32,
    /// `percentCanRetry`, in [0, 1000] (a fraction despite the name: 0.2 lets
    /// one request in five be retried), on top of the reserve.
    pub percent_can_retry: f64,
}

impl Default for FinagleBudgetConfig {
    fn default() -> Self {
        FinagleBudgetConfig {
            ttl: SimDuration::from_secs(10),
            min_retries_per_sec: 10,
            percent_can_retry: 0.2,
        }
    }
}

/// Envoy's `circuit_breakers.thresholds[].retry_budget`; the defaults are
/// Envoy's. When set, it replaces the threshold's `max_retries`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EnvoyBudgetConfig {
    /// `budget_percent`, in percent as Envoy's `Percent` (20.0 = 20%): the
    /// share of active requests that may be retries in flight.
    pub budget_percent: f64,
    /// `min_retry_concurrency`: retries in flight always allowed, however few
    /// requests are active.
    pub min_retry_concurrency: u32,
}

impl Default for EnvoyBudgetConfig {
    fn default() -> Self {
        EnvoyBudgetConfig {
            budget_percent: 20.0,
            min_retry_concurrency: 3,
        }
    }
}

/// Marc Brooker's retry circuit breaker ("Fixing retries with token buckets
/// and circuit breakers", brooker.co.za, 2022, and its simulator's
/// `CircuitBreakerRetryStrategy`): first attempts always go; a retry goes while
/// the recent failure rate is at most a threshold, none above it.
///
/// "Recent" is a count window: the outcomes of the caller's last `window`
/// attempts on the edge (first attempts, retries and hedges; a result is an
/// answer or a per-attempt timeout, as for gRPC; non-retryable failures are
/// left out), starting as `window` successes, so that a client that just
/// started may retry as the full token bucket lets it. The failure rate is
/// failures in the window / `window`. Brooker's simulator keeps cumulative
/// counts instead (failed attempts over calls since the client started); the
/// window makes the breaker close again once successes have pushed the
/// failures out, which a cumulative rate would take ever longer to do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryCircuitBreakerConfig {
    /// The threshold, a share in [0, 1]: a retry goes while failures in the
    /// window ≤ `max_failure_rate × window` (at exactly the threshold it goes,
    /// as Brooker's `if failures / calls > max_rate: return False` lets it).
    /// Kept to a millionth.
    pub max_failure_rate: f64,
    /// Attempts in the window, ≥ 1.
    pub window: u32,
}

impl Default for RetryCircuitBreakerConfig {
    /// Brooker's simulation's threshold, 10%, over resilience4j's default
    /// count window of 100 calls (Brooker's post gives no window).
    fn default() -> Self {
        RetryCircuitBreakerConfig {
            max_failure_rate: 0.1,
            window: 100,
        }
    }
}

/// A retry budget of one of the kinds of [`RetryBudgetConfig`], with counters
/// for reports. See the module documentation for when to call what.
#[derive(Clone, Debug)]
pub struct RetryBudget {
    state: BudgetState,
    retries_allowed: u64,
    retries_denied: u64,
    /// Granted retries not yet reported finished. Envoy's limit is on this;
    /// for the other kinds it only checks the caller's bookkeeping.
    retries_in_flight: u64,
}

#[derive(Clone, Debug)]
enum BudgetState {
    Unlimited,
    TokenBucket(TokenBucket),
    Grpc(GrpcThrottle),
    Finagle(FinagleBudget),
    Envoy(EnvoyBudget),
    RetryBreaker(RetryBreaker),
}

impl RetryBudget {
    /// A budget in its initial state: the token bucket and gRPC full, Finagle
    /// with only its reserve, Envoy with no retry in flight, the retry circuit
    /// breaker's window all successes.
    pub fn new(config: &RetryBudgetConfig) -> Self {
        let state = match config {
            RetryBudgetConfig::None => BudgetState::Unlimited,
            RetryBudgetConfig::TokenBucket(c) => BudgetState::TokenBucket(TokenBucket::new(c)),
            RetryBudgetConfig::GrpcThrottling(c) => BudgetState::Grpc(GrpcThrottle::new(c)),
            RetryBudgetConfig::Finagle(c) => BudgetState::Finagle(FinagleBudget::new(c)),
            RetryBudgetConfig::Envoy(c) => BudgetState::Envoy(EnvoyBudget::new(c)),
            RetryBudgetConfig::RetryCircuitBreaker(c) => {
                BudgetState::RetryBreaker(RetryBreaker::new(c))
            }
        };
        RetryBudget {
            state,
            retries_allowed: 0,
            retries_denied: 0,
            retries_in_flight: 0,
        }
    }

    /// The kind's name in the model format: `none`, `token_bucket`,
    /// `grpc_throttling`, `finagle`, `envoy` or `retry_circuit_breaker`.
    pub fn kind(&self) -> &'static str {
        match self.state {
            BudgetState::Unlimited => "none",
            BudgetState::TokenBucket(_) => "token_bucket",
            BudgetState::Grpc(_) => "grpc_throttling",
            BudgetState::Finagle(_) => "finagle",
            BudgetState::Envoy(_) => "envoy",
            BudgetState::RetryBreaker(_) => "retry_circuit_breaker",
        }
    }

    /// The first attempt of a call is sent: the token bucket earns `ratio`,
    /// Finagle deposits.
    #[inline]
    pub fn on_request(&mut self, now: SimTime) {
        match &mut self.state {
            BudgetState::TokenBucket(b) => b.deposit(),
            BudgetState::Finagle(b) => b.deposit(now),
            BudgetState::Unlimited
            | BudgetState::Grpc(_)
            | BudgetState::Envoy(_)
            | BudgetState::RetryBreaker(_) => {}
        }
    }

    /// Whether [`RetryBudget::on_attempt_result`] moves anything: only gRPC's
    /// count and the retry circuit breaker's window read attempts' results,
    /// so a caller may skip classifying an outcome no one reads.
    #[inline]
    pub fn reads_results(&self) -> bool {
        matches!(
            self.state,
            BudgetState::Grpc(_) | BudgetState::RetryBreaker(_)
        )
    }

    /// An attempt (first, retry or hedge) ended with `outcome`: gRPC's count
    /// moves, the retry circuit breaker's window slides. Report it before
    /// asking [`RetryBudget::try_retry`] about the retry that would follow it.
    pub fn on_attempt_result(&mut self, now: SimTime, outcome: AttemptOutcome) {
        // No kind here reacts to results over time; `now` keeps the call shape
        // of the other layers (`record(now, outcome)`).
        let _ = now;
        match &mut self.state {
            BudgetState::Grpc(t) => t.record(outcome),
            BudgetState::RetryBreaker(b) => b.record(outcome),
            _ => {}
        }
    }

    /// Whether a retry would be allowed now, without charging it: for charts
    /// and for deciding whether to arm a hedge timer at all.
    #[inline]
    pub fn can_retry(&self, now: SimTime, active_requests: u64) -> bool {
        match &self.state {
            BudgetState::Unlimited => true,
            BudgetState::TokenBucket(b) => b.can_withdraw(),
            BudgetState::Grpc(t) => t.above_threshold(),
            BudgetState::Finagle(b) => b.can_withdraw(now),
            BudgetState::Envoy(e) => self.retries_in_flight < e.limit(active_requests),
            BudgetState::RetryBreaker(b) => b.allows(),
        }
    }

    /// May the call send a retry (or hedge) now? If so the retry is charged:
    /// a token leaves the bucket, Finagle withdraws, Envoy counts one more
    /// retry in flight until [`RetryBudget::on_retry_finished`]. gRPC and the
    /// retry circuit breaker charge nothing here: they already counted the
    /// failure.
    #[inline]
    pub fn try_retry(&mut self, now: SimTime, active_requests: u64) -> bool {
        let allowed = self.can_retry(now, active_requests);
        if allowed {
            match &mut self.state {
                BudgetState::TokenBucket(b) => b.withdraw(),
                BudgetState::Finagle(b) => b.withdraw(now),
                BudgetState::Unlimited
                | BudgetState::Grpc(_)
                | BudgetState::Envoy(_)
                | BudgetState::RetryBreaker(_) => {}
            }
            self.retries_allowed += 1;
            self.retries_in_flight += 1;
        } else {
            self.retries_denied += 1;
        }
        allowed
    }

    /// A retry granted by [`RetryBudget::try_retry`] ended (answered, timed
    /// out, cancelled) or will never be sent. Call exactly once per granted
    /// retry; Envoy frees its slot.
    pub fn on_retry_finished(&mut self) {
        debug_assert!(
            self.retries_in_flight > 0,
            "on_retry_finished without a granted retry in flight"
        );
        self.retries_in_flight = self.retries_in_flight.saturating_sub(1);
    }

    /// A retry (or hedge) granted by [`RetryBudget::try_retry`] will not be
    /// sent after all, refused by a layer the budget is meant to be asked
    /// after (a hedge refused by the client's rate limiter): the charge is
    /// undone (the token goes back to the bucket, Finagle's withdrawal is
    /// cancelled) and Envoy frees its slot. Counts as
    /// [`RetryBudget::on_retry_finished`]; the grant stays counted in
    /// [`RetryBudget::retries_allowed`]. Call at the instant of the grant.
    pub fn on_retry_not_sent(&mut self, now: SimTime) {
        match &mut self.state {
            BudgetState::TokenBucket(b) => b.refund(),
            BudgetState::Finagle(b) => b.refund(now),
            BudgetState::Unlimited
            | BudgetState::Grpc(_)
            | BudgetState::Envoy(_)
            | BudgetState::RetryBreaker(_) => {}
        }
        self.on_retry_finished();
    }

    /// The budget's level for the "budget tokens" time series, in the
    /// library's own terms; `None` for `none`, which has no level.
    ///
    /// - `token_bucket`: tokens (a retry costs 1).
    /// - `grpc_throttling`: gRPC's `token_count`; retries stop at `maxTokens`/2.
    /// - `finagle`: Finagle's `balance` (retries it would allow back to back),
    ///   unrounded.
    /// - `envoy`: retry slots left, `limit − in flight`, negative when the
    ///   active requests fell and left more retries in flight than the limit.
    /// - `retry_circuit_breaker`: failures the window can still take with
    ///   retries allowed, `⌊max_failure_rate × window⌋ − failures`; retries
    ///   stop below 0.
    pub fn tokens(&self, now: SimTime, active_requests: u64) -> Option<f64> {
        match &self.state {
            BudgetState::Unlimited => None,
            BudgetState::TokenBucket(b) => Some(b.level()),
            BudgetState::Grpc(t) => Some(t.level()),
            BudgetState::Finagle(b) => Some(b.balance(now)),
            BudgetState::Envoy(e) => {
                Some(e.limit(active_requests) as f64 - self.retries_in_flight as f64)
            }
            BudgetState::RetryBreaker(b) => Some(b.level()),
        }
    }

    /// Retries granted by [`RetryBudget::try_retry`] so far.
    pub fn retries_allowed(&self) -> u64 {
        self.retries_allowed
    }

    /// Retries refused by [`RetryBudget::try_retry`] so far.
    pub fn retries_denied(&self) -> u64 {
        self.retries_denied
    }

    /// This budget's replacement by `fresh` (a timeline change to its
    /// configuration): the retries and hedges it granted that are still in
    /// flight move to the new one, which they report to when they end, and
    /// which counts them as in flight (Envoy's limit) meanwhile.
    pub fn replaced_by(&self, mut fresh: RetryBudget) -> RetryBudget {
        fresh.retries_in_flight = self.retries_in_flight;
        fresh
    }

    /// Granted retries not yet reported by [`RetryBudget::on_retry_finished`].
    pub fn retries_in_flight(&self) -> u64 {
        self.retries_in_flight
    }
}

/// Rounds a non-negative amount to a fixed point with `scale` units per token;
/// negative and NaN become 0 (`as` saturates).
fn to_fixed(amount: f64, scale: u64) -> u64 {
    (amount * scale as f64).round() as u64
}

/// Millionths of a token: the chapter's bucket without float drift.
const MICRO: u64 = 1_000_000;

#[derive(Clone, Debug)]
struct TokenBucket {
    tokens: u64,
    max: u64,
    ratio: u64,
}

impl TokenBucket {
    fn new(c: &TokenBucketConfig) -> Self {
        let max = to_fixed(c.max_tokens, MICRO);
        TokenBucket {
            tokens: max,
            max,
            ratio: to_fixed(c.ratio, MICRO),
        }
    }

    fn deposit(&mut self) {
        self.tokens = (self.tokens + self.ratio).min(self.max);
    }

    fn can_withdraw(&self) -> bool {
        self.tokens >= MICRO
    }

    fn withdraw(&mut self) {
        self.tokens -= MICRO;
    }

    /// Undoes a [`TokenBucket::withdraw`] of this instant.
    fn refund(&mut self) {
        self.tokens = (self.tokens + MICRO).min(self.max);
    }

    fn level(&self) -> f64 {
        self.tokens as f64 / MICRO as f64
    }
}

/// Thousandths of a token, as gRPC C-core and Java count.
const MILLI: u64 = 1_000;

#[derive(Clone, Debug)]
struct GrpcThrottle {
    milli_tokens: u64,
    max_milli_tokens: u64,
    milli_token_ratio: u64,
}

impl GrpcThrottle {
    fn new(c: &GrpcThrottlingConfig) -> Self {
        let max = to_fixed(c.max_tokens, MILLI);
        GrpcThrottle {
            milli_tokens: max,
            max_milli_tokens: max,
            milli_token_ratio: to_fixed(c.token_ratio, MILLI),
        }
    }

    fn record(&mut self, outcome: AttemptOutcome) {
        match outcome {
            AttemptOutcome::Success => {
                self.milli_tokens =
                    (self.milli_tokens + self.milli_token_ratio).min(self.max_milli_tokens);
            }
            AttemptOutcome::RetryableFailure => {
                self.milli_tokens = self.milli_tokens.saturating_sub(MILLI);
            }
            AttemptOutcome::NonRetryableFailure => {}
        }
    }

    /// A6: "more than half". The halving is integer division on thousandths,
    /// as in C-core (`new_value > max_milli_tokens / 2`).
    fn above_threshold(&self) -> bool {
        self.milli_tokens > self.max_milli_tokens / 2
    }

    fn level(&self) -> f64 {
        self.milli_tokens as f64 / MILLI as f64
    }
}

/// Finagle's `TokenRetryBudget.ScaleFactor`: lets `percentCanRetry` exceed 1
/// with integer tokens.
const FINAGLE_SCALE: f64 = 1000.0;
/// Finagle's leaky bucket is a `WindowedAdder(ttl, 10 slices)`.
const FINAGLE_SLICES: usize = 10;

/// Finagle's `TokenRetryBudget` over `TokenBucket.newLeakyBucket(ttl, reserve)`,
/// in Finagle's integer units:
///
/// - each request deposits `1000` (0 when `percentCanRetry` = 0);
/// - each retry withdraws `W = ⌊1000 / percentCanRetry⌋` (1 when
///   `percentCanRetry` = 0): at 0.2, five requests pay for one retry;
/// - `reserve = minRetriesPerSec × ⌊ttl⌋ in whole seconds × W`, present in
///   every window and never spent for good;
/// - `balance = reserve + Σ (deposits − withdrawals) over the window`, and a
///   retry is allowed iff `balance ≥ W`.
///
/// Withdrawals expire like deposits, so the reserve renews each window: with no
/// traffic, `minRetriesPerSec × ttl` retries at once (100 by default), then none
/// until they age out — on average `minRetriesPerSec`, but in bursts.
#[derive(Clone, Debug)]
struct FinagleBudget {
    deposit: i64,
    withdrawal: i64,
    reserve: i64,
    window: WindowedSum,
}

impl FinagleBudget {
    fn new(c: &FinagleBudgetConfig) -> Self {
        let percent = c.percent_can_retry;
        debug_assert!((0.0..=FINAGLE_SCALE).contains(&percent));
        // Only credit from time when nothing can be earned: every retry costs 1
        // and the reserve is all there is (Finagle's own comment).
        let (deposit, withdrawal) = if percent == 0.0 {
            (0, 1)
        } else {
            // Truncation as Finagle's `.toInt`: 0.3 costs 3333, not 3333.3.
            (
                FINAGLE_SCALE as i64,
                ((FINAGLE_SCALE / percent) as i64).max(1),
            )
        };
        // Finagle's `ttl.inSeconds` truncates to whole seconds.
        let ttl_secs = (c.ttl.as_nanos() / 1_000_000_000) as i64;
        FinagleBudget {
            deposit,
            withdrawal,
            reserve: i64::from(c.min_retries_per_sec)
                .saturating_mul(ttl_secs)
                .saturating_mul(withdrawal),
            window: WindowedSum::new(c.ttl),
        }
    }

    fn deposit(&mut self, now: SimTime) {
        if self.deposit > 0 {
            self.window.add(now, self.deposit);
        }
    }

    fn count(&self, now: SimTime) -> i64 {
        self.window.sum(now) + self.reserve
    }

    fn can_withdraw(&self, now: SimTime) -> bool {
        self.count(now) >= self.withdrawal
    }

    fn withdraw(&mut self, now: SimTime) {
        self.window.add(now, -self.withdrawal);
    }

    /// Undoes a [`FinagleBudget::withdraw`] of this instant (same slice).
    fn refund(&mut self, now: SimTime) {
        self.window.add(now, self.withdrawal);
    }

    fn balance(&self, now: SimTime) -> f64 {
        self.count(now) as f64 / self.withdrawal as f64
    }
}

/// A sum over the last `ttl`, kept in [`FINAGLE_SLICES`] slices of `ttl / 10`
/// on a fixed grid from time zero: slice `k` covers `[k·s, (k+1)·s)`. The sum
/// covers the current slice and the 9 before it, so an entry counts for
/// between 0.9·ttl and ttl — as Finagle's `WindowedAdder` (a current slice plus
/// 9 kept ones), whose boundaries follow the times it is read instead of a
/// grid. Each slot remembers its slice number, so reading needs no mutation
/// and a slot left over from an old lap is simply out of range.
#[derive(Clone, Debug)]
struct WindowedSum {
    slice_nanos: u64,
    slots: [WindowSlot; FINAGLE_SLICES],
}

#[derive(Clone, Copy, Debug, Default)]
struct WindowSlot {
    slice: u64,
    sum: i64,
}

impl WindowedSum {
    fn new(ttl: SimDuration) -> Self {
        WindowedSum {
            slice_nanos: (ttl.as_nanos() / FINAGLE_SLICES as u64).max(1),
            slots: [WindowSlot::default(); FINAGLE_SLICES],
        }
    }

    fn slice_of(&self, now: SimTime) -> u64 {
        now.as_nanos() / self.slice_nanos
    }

    fn add(&mut self, now: SimTime, amount: i64) {
        let slice = self.slice_of(now);
        let slot = &mut self.slots[(slice % FINAGLE_SLICES as u64) as usize];
        debug_assert!(slot.slice <= slice, "time went backwards");
        if slot.slice != slice {
            *slot = WindowSlot { slice, sum: 0 };
        }
        slot.sum += amount;
    }

    fn sum(&self, now: SimTime) -> i64 {
        let current = self.slice_of(now);
        self.slots
            .iter()
            .filter(|s| s.slice <= current && current - s.slice < FINAGLE_SLICES as u64)
            .map(|s| s.sum)
            .sum()
    }
}

/// Envoy's `RetryBudgetImpl`: a limit on concurrent retries that follows the
/// load. Its state is the retries in flight, kept by [`RetryBudget`].
#[derive(Clone, Debug)]
struct EnvoyBudget {
    budget_percent: f64,
    min_retry_concurrency: u64,
}

impl EnvoyBudget {
    fn new(c: &EnvoyBudgetConfig) -> Self {
        EnvoyBudget {
            budget_percent: c.budget_percent,
            min_retry_concurrency: u64::from(c.min_retry_concurrency),
        }
    }

    /// `std::max<uint64_t>(budget_percent / 100.0 * current_active,
    /// min_retry_concurrency)`: the percentage truncates, so 24 active requests
    /// at 20% allow 4 retries (4.8), 25 allow 5.
    fn limit(&self, active_requests: u64) -> u64 {
        let by_share = (self.budget_percent / 100.0 * active_requests as f64) as u64;
        by_share.max(self.min_retry_concurrency)
    }
}

/// Brooker's retry circuit breaker over the last `window` attempt outcomes.
/// The window starts as `window` successes, which are not stored: the ring
/// grows to `window` entries, the successes not yet pushed out implicit.
#[derive(Clone, Debug)]
struct RetryBreaker {
    /// Whether each of the recorded attempts failed; once full, `next` is the
    /// oldest.
    ring: Vec<bool>,
    next: usize,
    window: usize,
    /// Failures in the ring.
    failures: u64,
    /// The most failures the window may hold with retries allowed:
    /// `⌊max_failure_rate × window⌋`, from the rate in millionths, so that
    /// 0.57 × 100 is 57 (in `f64` it is 56.99999999999999, which would refuse
    /// at exactly 57%).
    most_failures: u64,
}

impl RetryBreaker {
    fn new(c: &RetryCircuitBreakerConfig) -> Self {
        let window = c.window.max(1);
        RetryBreaker {
            ring: Vec::new(),
            next: 0,
            window: window as usize,
            failures: 0,
            most_failures: to_fixed(c.max_failure_rate.min(1.0), MICRO) * u64::from(window) / MICRO,
        }
    }

    fn record(&mut self, outcome: AttemptOutcome) {
        let failed = match outcome {
            AttemptOutcome::Success => false,
            AttemptOutcome::RetryableFailure => true,
            AttemptOutcome::NonRetryableFailure => return,
        };
        if self.ring.len() < self.window {
            if self.ring.is_empty() {
                self.ring.reserve_exact(self.window);
            }
            self.ring.push(failed);
        } else {
            let oldest = std::mem::replace(&mut self.ring[self.next], failed);
            self.failures -= u64::from(oldest);
            self.next = (self.next + 1) % self.window;
        }
        self.failures += u64::from(failed);
    }

    /// Brooker's `failures / calls > max_rate` refuses; at the threshold a
    /// retry goes.
    fn allows(&self) -> bool {
        self.failures <= self.most_failures
    }

    fn level(&self) -> f64 {
        self.most_failures as f64 - self.failures as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime(x * 1_000_000)
    }

    fn secs(x: u64) -> SimTime {
        ms(x * 1000)
    }

    fn token_bucket(max_tokens: f64, ratio: f64) -> RetryBudget {
        RetryBudget::new(&RetryBudgetConfig::TokenBucket(TokenBucketConfig {
            max_tokens,
            ratio,
        }))
    }

    fn grpc(max_tokens: f64, token_ratio: f64) -> RetryBudget {
        RetryBudget::new(&RetryBudgetConfig::GrpcThrottling(GrpcThrottlingConfig {
            max_tokens,
            token_ratio,
        }))
    }

    fn finagle(ttl_s: u64, min_retries_per_sec: u32, percent_can_retry: f64) -> RetryBudget {
        RetryBudget::new(&RetryBudgetConfig::Finagle(FinagleBudgetConfig {
            ttl: SimDuration::from_secs(ttl_s),
            min_retries_per_sec,
            percent_can_retry,
        }))
    }

    fn envoy_default() -> RetryBudget {
        RetryBudget::new(&RetryBudgetConfig::Envoy(EnvoyBudgetConfig::default()))
    }

    fn retry_breaker(max_failure_rate: f64, window: u32) -> RetryBudget {
        RetryBudget::new(&RetryBudgetConfig::RetryCircuitBreaker(
            RetryCircuitBreakerConfig {
                max_failure_rate,
                window,
            },
        ))
    }

    /// Grants as many retries as it can at `now`, returning how many.
    fn drain(b: &mut RetryBudget, now: SimTime) -> u64 {
        let mut n = 0;
        while b.try_retry(now, 0) {
            n += 1;
            assert!(n < 1_000_000, "budget never runs dry");
        }
        n
    }

    // --- token bucket (S5) ---

    #[test]
    fn token_bucket_starts_full_so_a_cold_client_can_retry() {
        let mut b = token_bucket(3.0, 0.1);
        assert_eq!(b.tokens(SimTime::ZERO, 0), Some(3.0));
        assert_eq!(drain(&mut b, SimTime::ZERO), 3);
        assert_eq!(b.retries_allowed(), 3);
        assert_eq!(b.retries_denied(), 1);
        assert_eq!(b.tokens(SimTime::ZERO, 0), Some(0.0));
    }

    #[test]
    fn token_bucket_ten_requests_at_a_tenth_buy_exactly_one_retry() {
        let mut b = token_bucket(2.0, 0.1);
        drain(&mut b, SimTime::ZERO);
        for i in 1..=9 {
            b.on_request(ms(i));
        }
        // 0.9 tokens: not a whole one.
        assert!(!b.try_retry(ms(9), 0));
        b.on_request(ms(10));
        // In float64, 0.1 added ten times is 0.9999999999999999; here exactly 1.
        assert_eq!(b.tokens(ms(10), 0), Some(1.0));
        assert!(b.try_retry(ms(10), 0));
        assert!(!b.try_retry(ms(10), 0));
    }

    #[test]
    fn token_bucket_refill_caps_at_max() {
        let mut b = token_bucket(2.0, 0.25);
        assert!(b.try_retry(SimTime::ZERO, 0)); // 1 left
        for i in 0..3 {
            b.on_request(ms(i)); // 1.25, 1.5, 1.75
        }
        assert_eq!(b.tokens(ms(3), 0), Some(1.75));
        for i in 3..100 {
            b.on_request(ms(i));
        }
        assert_eq!(b.tokens(ms(100), 0), Some(2.0));
        assert_eq!(drain(&mut b, ms(100)), 2);
    }

    #[test]
    fn token_bucket_ignores_time_and_results() {
        let mut b = token_bucket(1.0, 0.1);
        b.on_attempt_result(secs(1), AttemptOutcome::RetryableFailure);
        b.on_attempt_result(secs(1), AttemptOutcome::Success);
        assert_eq!(b.tokens(secs(3600), 0), Some(1.0));
    }

    #[test]
    fn token_bucket_below_one_token_never_retries() {
        let mut b = token_bucket(0.5, 0.1);
        for i in 0..100 {
            b.on_request(ms(i));
        }
        assert!(!b.try_retry(ms(100), 0));
    }

    // --- gRPC retryThrottling (A6) ---

    #[test]
    fn grpc_retries_only_while_strictly_more_than_half() {
        // maxTokens 10: threshold 5. Each retryable failure costs 1.
        let mut t = grpc(10.0, 0.1);
        for expected in [9.0, 8.0, 7.0, 6.0] {
            t.on_attempt_result(SimTime::ZERO, AttemptOutcome::RetryableFailure);
            assert_eq!(t.tokens(SimTime::ZERO, 0), Some(expected));
            assert!(t.try_retry(SimTime::ZERO, 0), "{expected} > 5");
        }
        t.on_attempt_result(SimTime::ZERO, AttemptOutcome::RetryableFailure);
        assert_eq!(t.tokens(SimTime::ZERO, 0), Some(5.0));
        assert!(
            !t.try_retry(SimTime::ZERO, 0),
            "exactly half is not more than half"
        );
        // One success: 5.1 > 5.
        t.on_attempt_result(SimTime::ZERO, AttemptOutcome::Success);
        assert_eq!(t.tokens(SimTime::ZERO, 0), Some(5.1));
        assert!(t.try_retry(SimTime::ZERO, 0));
        assert_eq!((t.retries_allowed(), t.retries_denied()), (5, 1));
    }

    #[test]
    fn grpc_try_retry_charges_nothing() {
        let mut t = grpc(10.0, 0.1);
        for _ in 0..100 {
            assert!(t.try_retry(SimTime::ZERO, 0));
        }
        assert_eq!(t.tokens(SimTime::ZERO, 0), Some(10.0));
    }

    #[test]
    fn grpc_odd_max_halves_in_thousandths() {
        // maxTokens 3: threshold 1.5. After one failure 2 > 1.5; after two, 1.
        let mut t = grpc(3.0, 0.5);
        t.on_attempt_result(SimTime::ZERO, AttemptOutcome::RetryableFailure);
        assert!(t.can_retry(SimTime::ZERO, 0));
        t.on_attempt_result(SimTime::ZERO, AttemptOutcome::RetryableFailure);
        assert!(!t.can_retry(SimTime::ZERO, 0));
        // 1 + 0.5 = 1.5: still not above; one more success: 2.
        t.on_attempt_result(SimTime::ZERO, AttemptOutcome::Success);
        assert!(!t.can_retry(SimTime::ZERO, 0));
        t.on_attempt_result(SimTime::ZERO, AttemptOutcome::Success);
        assert!(t.can_retry(SimTime::ZERO, 0));
    }

    #[test]
    fn grpc_count_stays_between_zero_and_max() {
        let mut t = grpc(10.0, 0.1);
        for _ in 0..25 {
            t.on_attempt_result(SimTime::ZERO, AttemptOutcome::RetryableFailure);
        }
        assert_eq!(t.tokens(SimTime::ZERO, 0), Some(0.0));
        // From the floor, 51 successes are needed to pass 5 (50 make exactly 5).
        for _ in 0..50 {
            t.on_attempt_result(SimTime::ZERO, AttemptOutcome::Success);
        }
        assert_eq!(t.tokens(SimTime::ZERO, 0), Some(5.0));
        assert!(!t.can_retry(SimTime::ZERO, 0));
        t.on_attempt_result(SimTime::ZERO, AttemptOutcome::Success);
        assert!(t.can_retry(SimTime::ZERO, 0));
        for _ in 0..1000 {
            t.on_attempt_result(SimTime::ZERO, AttemptOutcome::Success);
        }
        assert_eq!(t.tokens(SimTime::ZERO, 0), Some(10.0));
    }

    #[test]
    fn grpc_ignores_non_retryable_failures_and_requests() {
        let mut t = grpc(2.0, 0.1);
        for i in 0..100 {
            t.on_request(ms(i));
            t.on_attempt_result(ms(i), AttemptOutcome::NonRetryableFailure);
        }
        assert_eq!(t.tokens(ms(100), 0), Some(2.0));
        assert!(t.can_retry(ms(100), 0));
    }

    // --- Finagle RetryBudget ---

    #[test]
    fn finagle_units_match_token_retry_budget() {
        let RetryBudget {
            state: BudgetState::Finagle(f),
            ..
        } = RetryBudget::new(&RetryBudgetConfig::Finagle(FinagleBudgetConfig::default()))
        else {
            unreachable!()
        };
        assert_eq!((f.deposit, f.withdrawal, f.reserve), (1000, 5000, 500_000));
        assert_eq!(f.window.slice_nanos, 1_000_000_000);
        let RetryBudget {
            state: BudgetState::Finagle(f),
            ..
        } = finagle(10, 10, 0.3)
        else {
            unreachable!()
        };
        assert_eq!(f.withdrawal, 3333, "1000 / 0.3 truncated");
    }

    #[test]
    fn finagle_reserve_allows_min_rate_times_ttl_with_no_traffic() {
        let mut b = finagle(10, 10, 0.2);
        assert_eq!(b.tokens(SimTime::ZERO, 0), Some(100.0));
        assert_eq!(drain(&mut b, SimTime::ZERO), 100);
        // The reserve does not trickle back per second: the withdrawals made in
        // slice 0 count until slice 10 begins, at exactly ttl.
        assert!(!b.can_retry(secs(5), 0));
        assert!(!b.can_retry(SimTime(10_000_000_000 - 1), 0));
        assert_eq!(drain(&mut b, secs(10)), 100);
    }

    #[test]
    fn finagle_deposits_buy_percent_of_a_retry_on_top_of_the_reserve() {
        let mut b = finagle(10, 10, 0.2);
        assert_eq!(drain(&mut b, ms(0)), 100);
        for i in 1..=4 {
            b.on_request(ms(i));
        }
        assert!(!b.try_retry(ms(4), 0), "four requests are 0.8 of a retry");
        b.on_request(ms(5));
        assert!(b.try_retry(ms(5), 0));
        assert!(!b.try_retry(ms(5), 0));
        for i in 6..16 {
            b.on_request(ms(i));
        }
        assert_eq!(drain(&mut b, ms(16)), 2);
    }

    #[test]
    fn finagle_without_reserve_pays_only_from_deposits() {
        let mut b = finagle(10, 0, 0.2);
        assert_eq!(b.tokens(SimTime::ZERO, 0), Some(0.0));
        assert!(!b.try_retry(SimTime::ZERO, 0));
        for i in 0..5 {
            b.on_request(ms(i));
        }
        assert_eq!(b.tokens(ms(5), 0), Some(1.0));
        assert!(b.try_retry(ms(5), 0));
        assert_eq!(b.tokens(ms(5), 0), Some(0.0));
    }

    #[test]
    fn finagle_deposits_expire_after_ttl() {
        // ttl 10 s, slices of 1 s. Deposits at 0.5 s sit in slice 0 and leave
        // the window when slice 10 starts: at 10 s, after 9.5 s (in (0.9, 1]·ttl).
        let mut b = finagle(10, 0, 0.2);
        for _ in 0..10 {
            b.on_request(ms(500));
        }
        assert_eq!(b.tokens(ms(9_999), 0), Some(2.0));
        assert_eq!(b.tokens(secs(10), 0), Some(0.0));
        assert!(!b.try_retry(secs(10), 0));
        // A deposit at 9.9 s still counts at 18.9 s, not at 19 s.
        b.on_request(ms(9_900));
        for _ in 0..4 {
            b.on_request(ms(18_000));
        }
        assert!(b.can_retry(ms(18_999), 0));
        assert!(!b.can_retry(secs(19), 0));
    }

    #[test]
    fn finagle_window_forgets_slots_from_an_old_lap() {
        let mut b = finagle(10, 0, 0.2);
        for _ in 0..5 {
            b.on_request(secs(3));
        }
        // 23 s lands in the same slot as 3 s, two laps later: the old sum is
        // out of range before it is overwritten, and overwritten on write.
        assert_eq!(b.tokens(secs(23), 0), Some(0.0));
        b.on_request(secs(23));
        assert_eq!(b.tokens(secs(23), 0), Some(0.2));
    }

    #[test]
    fn finagle_zero_percent_spends_only_the_reserve_one_by_one() {
        let mut b = finagle(2, 3, 0.0);
        for i in 0..100 {
            b.on_request(ms(i));
        }
        assert_eq!(drain(&mut b, ms(100)), 6);
        let mut none = finagle(10, 0, 0.0);
        none.on_request(SimTime::ZERO);
        assert!(!none.try_retry(SimTime::ZERO, 0));
    }

    #[test]
    fn finagle_reserve_uses_whole_seconds_of_ttl() {
        let mut b = RetryBudget::new(&RetryBudgetConfig::Finagle(FinagleBudgetConfig {
            ttl: SimDuration::from_ms(1_900.0),
            min_retries_per_sec: 10,
            percent_can_retry: 0.2,
        }));
        assert_eq!(drain(&mut b, SimTime::ZERO), 10, "ttl.inSeconds = 1");
    }

    // --- Envoy retry_budget ---

    #[test]
    fn a_replacement_takes_over_the_retries_in_flight() {
        let mut old = envoy_default();
        for _ in 0..5 {
            assert!(old.try_retry(SimTime::ZERO, 25));
        }
        let mut new = old.replaced_by(envoy_default());
        // They count against the new limit, and are given back to it.
        assert!(!new.try_retry(SimTime::ZERO, 25));
        for _ in 0..5 {
            new.on_retry_finished();
        }
        assert_eq!(new.retries_in_flight(), 0);
        assert!(new.try_retry(SimTime::ZERO, 25));
    }

    #[test]
    fn envoy_25_active_requests_allow_5_concurrent_retries() {
        let mut e = envoy_default();
        for _ in 0..5 {
            assert!(e.try_retry(SimTime::ZERO, 25));
        }
        assert!(!e.try_retry(SimTime::ZERO, 25));
        assert_eq!(e.retries_in_flight(), 5);
        assert_eq!(e.tokens(SimTime::ZERO, 25), Some(0.0));
        e.on_retry_finished();
        assert!(e.try_retry(SimTime::ZERO, 25));
        assert_eq!((e.retries_allowed(), e.retries_denied()), (6, 1));
    }

    #[test]
    fn envoy_never_below_min_retry_concurrency() {
        let mut e = envoy_default();
        for _ in 0..3 {
            assert!(e.try_retry(SimTime::ZERO, 0));
        }
        assert!(!e.try_retry(SimTime::ZERO, 0));
        // 15 active: 20% is 3, the floor is 3.
        assert!(!e.try_retry(SimTime::ZERO, 15));
    }

    #[test]
    fn envoy_share_truncates_like_envoy() {
        let e = envoy_default();
        let BudgetState::Envoy(ref budget) = e.state else {
            unreachable!()
        };
        assert_eq!(budget.limit(24), 4, "4.8 truncates");
        assert_eq!(budget.limit(25), 5);
        assert_eq!(budget.limit(29), 5);
        assert_eq!(budget.limit(30), 6);
        assert_eq!(budget.limit(1000), 200);
    }

    #[test]
    fn envoy_limit_follows_load_down() {
        let mut e = envoy_default();
        for _ in 0..10 {
            assert!(e.try_retry(SimTime::ZERO, 50));
        }
        // Load fell to 10 active: limit 3, 10 in flight, 7 over.
        assert_eq!(e.tokens(SimTime::ZERO, 10), Some(-7.0));
        for _ in 0..7 {
            e.on_retry_finished();
        }
        assert!(!e.try_retry(SimTime::ZERO, 10));
        e.on_retry_finished();
        assert!(e.try_retry(SimTime::ZERO, 10));
    }

    // --- retry circuit breaker (Brooker) ---

    /// Feeds `outcomes` ('S' success, 'F' retryable failure, 'N' non-retryable
    /// failure) one by one, and after each says whether a retry would be
    /// allowed: '+' yes, '-' no.
    fn retries_after(b: &mut RetryBudget, outcomes: &str) -> String {
        outcomes
            .chars()
            .map(|c| {
                let outcome = match c {
                    'S' => AttemptOutcome::Success,
                    'F' => AttemptOutcome::RetryableFailure,
                    'N' => AttemptOutcome::NonRetryableFailure,
                    _ => unreachable!("{c}"),
                };
                b.on_attempt_result(SimTime::ZERO, outcome);
                if b.can_retry(SimTime::ZERO, 0) {
                    '+'
                } else {
                    '-'
                }
            })
            .collect()
    }

    #[test]
    fn retry_breaker_retries_while_the_window_holds_at_most_its_share_of_failures() {
        // Window 10, 20%: at most 2 failures among the last 10 attempts. The
        // window starts as 10 successes: a cold client may retry.
        let mut b = retry_breaker(0.2, 10);
        assert!(b.can_retry(SimTime::ZERO, 0));
        // F F: 1 then 2 failures (2/10 = 20%, at the threshold: allowed); the
        // third makes 3/10.
        assert_eq!(retries_after(&mut b, "FFF"), "++-");
        // Seven successes fill the window (F F F S S S S S S S): still 3.
        assert_eq!(retries_after(&mut b, "SSSSSSS"), "-------");
        // Each further success pushes the oldest failure out: 2, 1, 0.
        assert_eq!(retries_after(&mut b, "SSS"), "+++");
        // Failures come back in as successes leave: F → 1, F → 2, F → 3.
        assert_eq!(retries_after(&mut b, "FFF"), "++-");
        assert_eq!(b.tokens(SimTime::ZERO, 0), Some(-1.0));
    }

    #[test]
    fn boundary_retry_circuit_breaker_retries_at_exactly_the_threshold() {
        // Brooker's simulator: `if failures / calls > max_rate: return False`.
        // 10% of 100 is 10 failures: the 10th still allows, the 11th does not.
        let mut b = retry_breaker(0.1, 100);
        assert_eq!(retries_after(&mut b, &"F".repeat(11)), "++++++++++-");
        assert_eq!(b.tokens(SimTime::ZERO, 0), Some(-1.0));
        // In millionths, exactly: 0.57 × 100 is 57 (56.99999999999999 in f64).
        let mut b = retry_breaker(0.57, 100);
        let seq = retries_after(&mut b, &"F".repeat(58));
        assert_eq!(&seq[56..], "+-", "57 failures of 100 is 57%");
        // 0 allows no failure at all; 1 allows every failure.
        assert_eq!(retries_after(&mut retry_breaker(0.0, 5), "F"), "-");
        assert_eq!(
            retries_after(&mut retry_breaker(1.0, 5), "FFFFFFFF"),
            "++++++++"
        );
    }

    #[test]
    fn retry_breaker_charges_nothing_and_ignores_non_retryable_failures() {
        let mut b = retry_breaker(0.2, 10);
        for _ in 0..100 {
            b.on_request(SimTime::ZERO);
            assert!(b.try_retry(SimTime::ZERO, 0));
            b.on_retry_finished();
        }
        // A 4xx is left out of the window: it neither fails nor dilutes.
        assert_eq!(
            retries_after(&mut b, "NNNNNFFNNNNNNNNNNNN"),
            "+++++++++++++++++++"
        );
        assert_eq!(retries_after(&mut b, "F"), "-");
        assert_eq!(b.tokens(SimTime::ZERO, 0), Some(-1.0));
    }

    #[test]
    fn retry_breaker_stops_retrying_a_dead_callee_until_successes_return() {
        // All attempts fail, 3 attempts a call: calls 1 to 3 make failures 1-9
        // and retry twice each; call 4 fails a 10th time (10/100, allowed),
        // retries, fails an 11th: denied, and every failure after it.
        let mut b = retry_breaker(0.1, 100);
        let retries = all_failing(&mut b, 1000, SimDuration::from_ms(1.0), 3);
        assert_eq!(retries, 7);
        // The window is all failures: 90 successes bring it back to 10.
        assert_eq!(b.tokens(SimTime::ZERO, 0), Some(-90.0));
        let healed = retries_after(&mut b, &"S".repeat(90));
        assert_eq!(healed.find('+'), Some(89), "{healed}");
    }

    // --- each rule at its boundary ---

    #[test]
    fn boundary_token_bucket_chapter_try_spend_grants_at_exactly_one_token() {
        // `if b.tokens >= 1 { b.tokens--; return true }`: one token is enough.
        let mut b = token_bucket(1.0, 0.25);
        assert_eq!(b.tokens(SimTime::ZERO, 0), Some(1.0));
        assert!(b.try_retry(SimTime::ZERO, 0), "exactly 1 token grants");
        assert_eq!(b.tokens(SimTime::ZERO, 0), Some(0.0));
        for i in 0..3 {
            b.on_request(ms(i));
        }
        assert_eq!(b.tokens(ms(3), 0), Some(0.75));
        assert!(!b.try_retry(ms(3), 0), "0.75 does not");
        b.on_request(ms(3));
        assert!(b.try_retry(ms(3), 0), "exactly 1 again");
    }

    #[test]
    fn boundary_grpc_a6_throttles_at_exactly_half_of_max_tokens() {
        // A6: "If token_count is less than or equal to the threshold, defined
        // to be (maxTokens / 2), then RPCs will not be retried". maxTokens 4:
        // after two failures the count is 2, exactly half.
        let mut t = grpc(4.0, 0.5);
        t.on_attempt_result(SimTime::ZERO, AttemptOutcome::RetryableFailure);
        assert_eq!(t.tokens(SimTime::ZERO, 0), Some(3.0));
        assert!(t.try_retry(SimTime::ZERO, 0));
        t.on_attempt_result(SimTime::ZERO, AttemptOutcome::RetryableFailure);
        assert_eq!(t.tokens(SimTime::ZERO, 0), Some(2.0));
        assert!(!t.try_retry(SimTime::ZERO, 0), "2 is not above 4 / 2");
        t.on_attempt_result(SimTime::ZERO, AttemptOutcome::Success);
        assert_eq!(t.tokens(SimTime::ZERO, 0), Some(2.5));
        assert!(t.try_retry(SimTime::ZERO, 0));
    }

    #[test]
    fn boundary_finagle_try_get_grants_at_a_balance_of_exactly_one_withdrawal() {
        // `tryGet(n)`: `val ok = count >= n`. At 20% a retry withdraws 5000 and
        // a request deposits 1000: four requests are 4000, five exactly 5000.
        let mut b = finagle(10, 0, 0.2);
        for i in 0..4 {
            b.on_request(ms(i));
        }
        assert!(!b.try_retry(ms(4), 0), "a balance of 0.8 retries");
        b.on_request(ms(4));
        assert_eq!(b.tokens(ms(4), 0), Some(1.0));
        assert!(b.try_retry(ms(4), 0), "a balance of exactly 1 retry grants");
        assert_eq!(b.tokens(ms(4), 0), Some(0.0));
    }

    #[test]
    fn boundary_envoy_can_create_refuses_with_as_many_in_flight_as_the_limit() {
        // `canCreate`: `count() < max()`. 15 active at 20% is 3, the floor 3:
        // the third retry in flight is allowed, a fourth is not.
        let mut e = envoy_default();
        for _ in 0..3 {
            assert!(e.try_retry(SimTime::ZERO, 15));
        }
        assert_eq!(e.tokens(SimTime::ZERO, 15), Some(0.0));
        assert!(!e.try_retry(SimTime::ZERO, 15), "3 in flight of 3");
        e.on_retry_finished();
        assert!(e.try_retry(SimTime::ZERO, 15), "2 in flight of 3");
    }

    // --- none ---

    #[test]
    fn none_always_allows_and_has_no_level() {
        let mut b = RetryBudget::new(&RetryBudgetConfig::default());
        assert_eq!(b.kind(), "none");
        for _ in 0..1000 {
            assert!(b.try_retry(SimTime::ZERO, 0));
        }
        assert_eq!(b.tokens(SimTime::ZERO, 0), None);
        assert_eq!((b.retries_allowed(), b.retries_denied()), (1000, 0));
    }

    #[test]
    fn kinds_are_named_as_in_the_model_format() {
        let names: Vec<_> = [
            RetryBudgetConfig::None,
            RetryBudgetConfig::TokenBucket(TokenBucketConfig::default()),
            RetryBudgetConfig::GrpcThrottling(GrpcThrottlingConfig::default()),
            RetryBudgetConfig::Finagle(FinagleBudgetConfig::default()),
            RetryBudgetConfig::Envoy(EnvoyBudgetConfig::default()),
            RetryBudgetConfig::RetryCircuitBreaker(RetryCircuitBreakerConfig::default()),
        ]
        .iter()
        .map(|c| RetryBudget::new(c).kind())
        .collect();
        assert_eq!(
            names,
            [
                "none",
                "token_bucket",
                "grpc_throttling",
                "finagle",
                "envoy",
                "retry_circuit_breaker"
            ]
        );
    }

    // --- long-run share of retries ---

    /// A steady stream of calls, one every `gap`, to a callee that always
    /// fails; each call wants up to `max_attempts` attempts, driven in the order
    /// the module documentation prescribes. Attempts take no time, so no retry
    /// is in flight when the next is asked for. Returns (calls, retries sent).
    fn all_failing(b: &mut RetryBudget, calls: u64, gap: SimDuration, max_attempts: u32) -> u64 {
        let mut retries = 0;
        let mut now = SimTime::ZERO;
        for _ in 0..calls {
            b.on_request(now);
            b.on_attempt_result(now, AttemptOutcome::RetryableFailure);
            for _ in 1..max_attempts {
                if !b.try_retry(now, 1) {
                    break;
                }
                retries += 1;
                b.on_attempt_result(now, AttemptOutcome::RetryableFailure);
                b.on_retry_finished();
            }
            now += gap;
        }
        retries
    }

    #[test]
    fn token_bucket_caps_retries_at_ratio_of_requests() {
        // Demand (2 retries per call) exceeds supply, so every whole token is
        // spent as soon as it exists and the bucket is full only before the
        // first call, whose deposit the cap swallows: retries = max +
        // ratio·(N − 1) − final level, the final level in [0, 1). Deterministic,
        // so the bound is exact; the share tends to the ratio as 10/N.
        let mut b = token_bucket(10.0, 0.1);
        let n = 100_000;
        let retries = all_failing(&mut b, n, SimDuration::from_ms(1.0), 3);
        let most = 10.0 + 0.1 * (n - 1) as f64;
        assert!(
            retries as f64 <= most && retries as f64 > most - 1.0,
            "{retries} vs {most}"
        );
        assert!((retries as f64 / n as f64 - 0.1).abs() < 1e-3);
        assert_eq!(b.retries_allowed(), retries);
        assert_eq!(b.retries_in_flight(), 0);
    }

    #[test]
    fn finagle_caps_retries_at_percent_of_requests() {
        // min 0, 20%, 1000 calls/s for 300 s = 30 whole windows of 10 s. With
        // C(t) = 1000·deposits − 5000·retries since the start, the window sum at
        // a time in the last slice of window k (slices 10k..10k+9) is
        // C(t) − C(k·ttl). A grant leaves that sum ≥ 0, and after every call
        // saturated demand leaves it < 5000 (else one more retry would have been
        // granted). A call lands in every slice, so C at each window's end is
        // ≥ C at its start and < C at its start + 5000: over 30 windows,
        // 0 ≤ C(300 s) < 150,000, i.e. 0.2·N − 30 < retries ≤ 0.2·N. Exact
        // arithmetic, so the bound is deterministic (the share tends to 0.2
        // within 30/N).
        let mut b = finagle(10, 0, 0.2);
        let n = 300_000;
        let retries = all_failing(&mut b, n, SimDuration::from_ms(1.0), 3);
        let cap = n / 5;
        assert!(retries <= cap && retries > cap - 30, "{retries} vs {cap}");
        assert!(b.retries_denied() > 0);
    }

    #[test]
    fn grpc_stops_retrying_a_dead_callee_for_good() {
        // All attempts fail: after (max − max/2) = 5 failures the count sits at
        // or below half and nothing ever refills it.
        let mut t = grpc(10.0, 0.1);
        let retries = all_failing(&mut t, 1000, SimDuration::from_ms(1.0), 3);
        // Call 1: fails (9), retry, fails (8), retry, fails (7). Call 2: fails
        // (6), retry, fails (5), denied. Then never again.
        assert_eq!(retries, 3);
        assert_eq!(t.tokens(SimTime::ZERO, 0), Some(0.0));
    }
}
