//! What a run counts while it runs. Memory is constant in the number of
//! requests simulated: counters and HDR histograms (3 significant digits).

use serde::Serialize;
use stormsim_engine::SimDuration;

/// Why a request or an attempt failed. The reason travels up the chain: a
/// gateway whose call timed out answers its caller with `timeout`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FailReason {
    /// A per-attempt timeout (or the caller's own timeout) expired.
    Timeout,
    /// The request's deadline expired, or too little of it remained to try.
    DeadlineExceeded,
    /// A full queue refused the request (HTTP 503).
    Rejected,
    /// Any other failure.
    Error,
    /// The instance refused the connection (it is down), or no instance was
    /// left to try.
    ConnectionRefused,
    /// A circuit breaker refused the attempt without sending it.
    BreakerOpen,
    /// A rate limit refused it (HTTP 429, or the caller's own limiter).
    RateLimited,
    /// The caller's bulkhead was full (and stayed full for its wait).
    BulkheadFull,
    /// The caller's adaptive throttle rejected it locally.
    Throttled,
}

impl FailReason {
    /// How work that reached its limit failed: past the request's deadline,
    /// or past its own timeout.
    pub fn of_expiry(ends_at_deadline: bool) -> FailReason {
        if ends_at_deadline {
            FailReason::DeadlineExceeded
        } else {
            FailReason::Timeout
        }
    }
}

/// How an attempt or a handler ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Success.
    Ok,
    /// Success, but somewhere on the way a fallback answered in place of a
    /// failed call (a stale value, a default, a secondary): the kinds used,
    /// as [`Degraded`] bits. To the caller's policies (retries, breakers,
    /// outlier detection) an answer like any other.
    Degraded(u8),
    /// Failure, with its reason.
    Failed(FailReason),
}

impl Outcome {
    /// An answer, in full or degraded.
    pub fn is_success(self) -> bool {
        !matches!(self, Outcome::Failed(_))
    }

    /// The kinds of fallback that answered on the way (0: none).
    pub fn degraded_by(self) -> u8 {
        match self {
            Outcome::Degraded(kinds) => kinds,
            _ => 0,
        }
    }

    /// A success, degraded by `kinds` (none: in full).
    pub fn success_degraded_by(kinds: u8) -> Outcome {
        if kinds == 0 {
            Outcome::Ok
        } else {
            Outcome::Degraded(kinds)
        }
    }
}

/// The kinds of fallback that can degrade an answer, as bits of
/// [`Outcome::Degraded`].
pub struct Degraded;

impl Degraded {
    /// A stale cache entry was served.
    pub const STALE: u8 = 1;
    /// A default answer was served.
    pub const DEFAULT: u8 = 2;
    /// Another service answered in place of the failed one.
    pub const CALL: u8 = 4;
}

impl FailReason {
    /// Its name in the model format, as a fallback's `on` lists it.
    pub fn as_failure_outcome(self) -> stormsim_model::FailureOutcome {
        use stormsim_model::FailureOutcome as F;
        match self {
            FailReason::Timeout => F::Timeout,
            FailReason::DeadlineExceeded => F::DeadlineExceeded,
            FailReason::Rejected => F::Rejected,
            FailReason::Error => F::Error,
            FailReason::ConnectionRefused => F::ConnectionRefused,
            FailReason::BreakerOpen => F::BreakerOpen,
            FailReason::RateLimited => F::RateLimited,
            FailReason::BulkheadFull => F::BulkheadFull,
            FailReason::Throttled => F::Throttled,
        }
    }
}

/// Answers degraded by fallbacks, by kind. A request degraded by several
/// kinds (a stale price and a default recommendation) counts under each,
/// and once in `total`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DegradedCounts {
    /// Answered degraded.
    pub total: u64,
    /// Of those, with a stale cache entry on the way.
    pub stale: u64,
    /// With a default answer on the way.
    pub default: u64,
    /// With a secondary service's answer on the way.
    pub call: u64,
}

impl DegradedCounts {
    /// Counts one answer degraded by `kinds` ([`Degraded`] bits; 0: not).
    pub fn count(&mut self, kinds: u8) {
        if kinds == 0 {
            return;
        }
        self.total += 1;
        self.stale += u64::from(kinds & Degraded::STALE != 0);
        self.default += u64::from(kinds & Degraded::DEFAULT != 0);
        self.call += u64::from(kinds & Degraded::CALL != 0);
    }

    /// Adds `other`'s counts to these.
    pub fn absorb(&mut self, other: &DegradedCounts) {
        self.total += other.total;
        self.stale += other.stale;
        self.default += other.default;
        self.call += other.call;
    }
}

/// What a call step's fallback did with the calls that failed into it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FallbackCounts {
    /// Failed calls that took the fallback (their failure was in `on`).
    pub taken: u64,
    /// Of those, answered from a stale cache entry.
    pub stale: u64,
    /// Answered with a default.
    pub default: u64,
    /// Answered by a secondary service (a `call` fallback that succeeded).
    pub call: u64,
    /// Failed all the same: every kind passed, or `fail`.
    pub failed: u64,
    /// Stopped before an answer: the request's caller left, or its parallel
    /// step ended, while a fallback's call or a branch's default was under
    /// way. `taken` is the sum of the five.
    pub cancelled: u64,
}

/// Counts of failures by reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FailureCounts {
    /// Timeouts.
    pub timeout: u64,
    /// Deadlines exceeded.
    pub deadline_exceeded: u64,
    /// Rejections by a full queue.
    pub rejected: u64,
    /// Other errors.
    pub error: u64,
    /// Connections refused.
    pub connection_refused: u64,
    /// Refused by an open circuit breaker.
    pub breaker_open: u64,
    /// Refused by a rate limit.
    pub rate_limited: u64,
    /// Refused by a full bulkhead.
    pub bulkhead_full: u64,
    /// Refused by an adaptive throttle.
    pub throttled: u64,
}

impl FailureCounts {
    /// Counts one failure.
    pub fn add(&mut self, reason: FailReason) {
        match reason {
            FailReason::Timeout => self.timeout += 1,
            FailReason::DeadlineExceeded => self.deadline_exceeded += 1,
            FailReason::Rejected => self.rejected += 1,
            FailReason::Error => self.error += 1,
            FailReason::ConnectionRefused => self.connection_refused += 1,
            FailReason::BreakerOpen => self.breaker_open += 1,
            FailReason::RateLimited => self.rate_limited += 1,
            FailReason::BulkheadFull => self.bulkhead_full += 1,
            FailReason::Throttled => self.throttled += 1,
        }
    }

    /// All failures.
    pub fn total(&self) -> u64 {
        self.timeout
            + self.deadline_exceeded
            + self.rejected
            + self.error
            + self.connection_refused
            + self.breaker_open
            + self.rate_limited
            + self.bulkhead_full
            + self.throttled
    }
}

/// Per-service counters. "Calls" are attempts that reached the service.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServiceCounters {
    /// Attempts received.
    pub calls: u64,
    /// Requests whose handler ran to its end (success or error).
    pub completed: u64,
    /// Of those, ended with an error.
    pub failed: u64,
    /// Completed after the caller had given up: work written into a closed
    /// connection (orphan work).
    pub wasted: u64,
    /// Stopped early because the caller gave up and the handler was watching.
    pub cancelled: u64,
    /// Refused at once by a full queue.
    pub rejected: u64,
    /// Refused or dropped by admission control.
    pub shed: u64,
    /// Longest queue seen.
    pub max_queue: u64,
    /// Retries sent to this service (granted by policy and budget).
    pub retries: u64,
    /// Retries (and hedges) to this service a budget refused.
    pub budget_denied: u64,
    /// Attempts to this service an open breaker refused.
    pub breaker_rejected: u64,
    /// Requests refused with 429 by this service, or by a caller's own limiter.
    pub rate_limited: u64,
    /// Calls to this service refused by a caller's full bulkhead.
    pub bulkhead_full: u64,
    /// Attempts to this service refused by a caller's adaptive throttle.
    pub throttled: u64,
    /// Shed by admission control, per priority class (the last entry: requests
    /// without a class).
    pub shed_by_class: Vec<u64>,
    /// Refused with 429 by this service's own rate limit (part of
    /// `rate_limited`, which also counts callers' limiters).
    pub refused_429: u64,
    /// Requests this service would not serve because of their deadline:
    /// refused at arrival or dropped at dequeue by `drop_expired` (a queue's
    /// expired messages, acked and dropped), failed fast before a work step,
    /// or work cut at the deadline.
    pub expired: u64,
    /// Work steps stopped by their static `timeout_ms` (statement timeouts).
    pub work_timeouts: u64,
    /// Work steps started when the request's deadline, as this service sees
    /// it, had already passed: work nobody can use. Zero when every work step
    /// fails fast (its `deadline`); `drop_expired` alone covers only the
    /// first step (work after a call step can still start late).
    pub started_late: u64,
    /// How this service's parallel steps ended.
    pub parallel: FanOutCounts,
}

/// Per call edge (a workload's or a call step's), summed over caller instances.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct EdgeCounters {
    /// Attempts sent (first tries and retries).
    pub attempts: u64,
    /// Retries sent.
    pub retries: u64,
    /// Attempts that timed out (or hit the deadline).
    pub timeouts: u64,
    /// Retries (and hedges) a budget refused.
    pub budget_denied: u64,
    /// Attempts an open breaker refused.
    pub breaker_rejected: u64,
    /// Attempts the adaptive throttle refused.
    pub throttled: u64,
    /// Attempts the caller's own rate limiter refused.
    pub rate_limited: u64,
    /// Calls the bulkhead refused.
    pub bulkhead_full: u64,
    /// Hedges sent (attempts that duplicate one still in flight).
    pub hedges: u64,
    /// Hedges the brake refused.
    pub hedges_braked: u64,
    /// Attempts cancelled because another copy of theirs won (tied requests),
    /// or because their call was cancelled: cancellations requested.
    pub cancellations: u64,
    /// Losers of a hedge race left running (untied requests).
    pub losers_untied: u64,
    /// How the fan-outs of this step ended.
    pub fan_out: FanOutCounts,
    /// What its cache did.
    pub cache: CacheCounts,
    /// What its fallback did.
    pub fallback: FallbackCounts,
}

impl EdgeCounters {
    /// Adds `other`'s counts to these: the edges of a workload's copies
    /// reported as one. Every field is named, so that a new counter cannot be
    /// left out of the sum.
    pub fn absorb(&mut self, other: &EdgeCounters) {
        let EdgeCounters {
            attempts,
            retries,
            timeouts,
            budget_denied,
            breaker_rejected,
            throttled,
            rate_limited,
            bulkhead_full,
            hedges,
            hedges_braked,
            cancellations,
            losers_untied,
            fan_out:
                FanOutCounts {
                    ok,
                    partial,
                    deadline_exceeded,
                    failed,
                },
            cache:
                CacheCounts {
                    hits,
                    stale_hits,
                    misses,
                    coalesced,
                    refreshes,
                },
            fallback:
                FallbackCounts {
                    taken,
                    stale,
                    default,
                    call,
                    failed: fallback_failed,
                    cancelled: fallback_cancelled,
                },
        } = other;
        self.attempts += attempts;
        self.retries += retries;
        self.timeouts += timeouts;
        self.budget_denied += budget_denied;
        self.breaker_rejected += breaker_rejected;
        self.throttled += throttled;
        self.rate_limited += rate_limited;
        self.bulkhead_full += bulkhead_full;
        self.hedges += hedges;
        self.hedges_braked += hedges_braked;
        self.cancellations += cancellations;
        self.losers_untied += losers_untied;
        self.fan_out.ok += ok;
        self.fan_out.partial += partial;
        self.fan_out.deadline_exceeded += deadline_exceeded;
        self.fan_out.failed += failed;
        self.cache.hits += hits;
        self.cache.stale_hits += stale_hits;
        self.cache.misses += misses;
        self.cache.coalesced += coalesced;
        self.cache.refreshes += refreshes;
        self.fallback.taken += taken;
        self.fallback.stale += stale;
        self.fallback.default += default;
        self.fallback.call += call;
        self.fallback.failed += fallback_failed;
        self.fallback.cancelled += fallback_cancelled;
    }
}

/// A cached call step's requests, by what the cache did with them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CacheCounts {
    /// Answered from a fresh entry.
    pub hits: u64,
    /// Answered from an expired entry within stale-while-revalidate.
    pub stale_hits: u64,
    /// Missed and loaded from the backend on the request path.
    pub misses: u64,
    /// Missed and joined a load already in flight (coalescing).
    pub coalesced: u64,
    /// Background refreshes started (stale-while-revalidate).
    pub refreshes: u64,
}

/// How a fan-out ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FanOutStatus {
    /// `wait_for` children succeeded.
    Ok,
    /// Its deadline came with some children succeeded, fewer than `wait_for`.
    Partial,
    /// Its deadline came with none succeeded.
    DeadlineExceeded,
    /// Too many children failed to reach `wait_for`.
    Failed,
}

/// Fan-outs by how they ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FanOutCounts {
    /// Complete.
    pub ok: u64,
    /// Partial at the deadline.
    pub partial: u64,
    /// Nothing at the deadline.
    pub deadline_exceeded: u64,
    /// Failed children.
    pub failed: u64,
}

impl FanOutCounts {
    /// Counts one fan-out.
    pub fn count(&mut self, status: FanOutStatus) {
        match status {
            FanOutStatus::Ok => self.ok += 1,
            FanOutStatus::Partial => self.partial += 1,
            FanOutStatus::DeadlineExceeded => self.deadline_exceeded += 1,
            FanOutStatus::Failed => self.failed += 1,
        }
    }

    /// Fan-outs in all.
    pub fn total(&self) -> u64 {
        self.ok + self.partial + self.deadline_exceeded + self.failed
    }
}

/// What one workload's callers saw.
#[derive(Clone, Default)]
pub struct WorkloadCounters {
    /// Logical requests.
    pub requests: u64,
    /// Of those, succeeded (in full or degraded).
    pub succeeded: u64,
    /// Of those, answered degraded by fallbacks.
    pub degraded: DegradedCounts,
    /// Latency of its requests that succeeded. Each answer is recorded once,
    /// here or in `failed_latency` (a histogram's counts are hundreds of
    /// kilobytes, and a second record per answer was a second cache miss);
    /// the latency of all requests, the workload's and the run's, and the
    /// run's success latency are merged from these at the end, exactly
    /// ([`LatencyRecorder::merged`]).
    pub ok_latency: LatencyRecorder,
    /// Latency of its requests that failed.
    pub failed_latency: LatencyRecorder,
}

impl WorkloadCounters {
    /// Latency of all of its requests.
    pub fn latency(&self) -> LatencyRecorder {
        LatencyRecorder::merged([&self.ok_latency, &self.failed_latency])
    }
}

/// Latency of logical requests, from arrival to the answer (success or error).
///
/// Kept as the counts of an HDR histogram of 1 ns to an hour (growing past
/// it) at 3 significant digits, indexed as `hdrhistogram` indexes them: a
/// record is an index and an increment, once per answered request, where the
/// library's own record also checks its range and keeps its total, minimum
/// and maximum, behind a call. Quantiles and the mean are read from the
/// counts as `hdrhistogram` reads its own, to the bit.
///
/// Only the span of buckets recorded is held, from its lowest power of two:
/// latencies of milliseconds start past ten thousand empty buckets, which a
/// run would otherwise clear, and a time series hold, once per bucket.
#[derive(Clone, Debug, Default)]
pub struct LatencyRecorder {
    /// The histogram bucket `counts[0]` counts: a multiple of the half
    /// sub-bucket count (a power of two's first bucket).
    first: usize,
    /// `counts[i]`: latencies recorded in the histogram's bucket `first + i`;
    /// from the lowest power of two recorded to the end of the highest.
    counts: Vec<u64>,
    max: SimDuration,
}

/// The same latencies, wherever their spans start.
impl PartialEq for LatencyRecorder {
    fn eq(&self, other: &Self) -> bool {
        self.max == other.max && self.recorded().eq(other.recorded())
    }
}

/// An HDR histogram from 1 ns at 3 significant digits: 2·10³ distinct values
/// need 2¹¹ sub-buckets, of which each bucket past the first uses the upper
/// half; a value's bucket is its power of two above the first bucket's 2¹¹.
const HDR_HALF_SUB_BUCKETS_LOG2: u32 = 10;
const HDR_SUB_BUCKET_MASK: u64 = (1 << (HDR_HALF_SUB_BUCKETS_LOG2 + 1)) - 1;
const HDR_LEADING_ZEROS_BASE: u32 = 64 - (HDR_HALF_SUB_BUCKETS_LOG2 + 1);

/// The index of `value`'s bucket, as `hdrhistogram::Histogram` computes it
/// for a histogram from 1 ns at 3 significant digits.
#[inline]
fn hdr_index(value: u64) -> usize {
    let bucket = HDR_LEADING_ZEROS_BASE - (value | HDR_SUB_BUCKET_MASK).leading_zeros();
    let sub_bucket = (value >> bucket) as usize;
    ((bucket as usize + 1) << HDR_HALF_SUB_BUCKETS_LOG2) + sub_bucket
        - (1 << HDR_HALF_SUB_BUCKETS_LOG2)
}

/// The span of buckets a recorder holds for bucket `index`: its power of
/// two's, as `first..end` (the first power of two spans two halves).
fn span_of(index: usize) -> (usize, usize) {
    let half = 1usize << HDR_HALF_SUB_BUCKETS_LOG2;
    let first = if index < 2 * half {
        0
    } else {
        index & !(half - 1)
    };
    (first, (index | (half - 1)) + 1)
}

/// The lowest value of the bucket at `index` (the inverse of [`hdr_index`]).
fn hdr_value(index: usize) -> u64 {
    let half = 1usize << HDR_HALF_SUB_BUCKETS_LOG2;
    let bucket = (index >> HDR_HALF_SUB_BUCKETS_LOG2).saturating_sub(1);
    let sub_bucket = if index < half {
        index
    } else {
        (index & (half - 1)) + half
    };
    (sub_bucket as u64) << bucket
}

/// Quantiles of a latency distribution, in ms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Quantiles {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Largest, exact.
    pub max: f64,
    /// Mean.
    pub mean: f64,
}

impl LatencyRecorder {
    /// Records one latency.
    #[inline]
    pub fn record(&mut self, latency: SimDuration) {
        // Below `first` wraps to past the end: one comparison for both.
        let at = hdr_index(latency.as_nanos()).wrapping_sub(self.first);
        if at >= self.counts.len() {
            return self.record_outside(latency);
        }
        self.counts[at] += 1;
        self.max = self.max.max(latency);
    }

    /// A latency in a bucket outside the span held: the span grows to its
    /// power of two, then it is recorded.
    #[cold]
    #[inline(never)]
    fn record_outside(&mut self, latency: SimDuration) {
        let index = hdr_index(latency.as_nanos());
        let (first, end) = if self.counts.is_empty() {
            span_of(index)
        } else {
            let (low, high) = span_of(index);
            (
                low.min(self.first),
                high.max(self.first + self.counts.len()),
            )
        };
        self.respan(first, end);
        self.counts[index - self.first] += 1;
        self.max = self.max.max(latency);
    }

    /// Holds buckets `first..end`, a span that covers the one held.
    fn respan(&mut self, first: usize, end: usize) {
        if first == self.first && end == self.first + self.counts.len() {
            return;
        }
        let mut counts = vec![0; end - first];
        let offset = self.first.wrapping_sub(first);
        if !self.counts.is_empty() {
            counts[offset..offset + self.counts.len()].copy_from_slice(&self.counts);
        }
        (self.first, self.counts) = (first, counts);
    }

    /// All of `parts` in one: the latency of every request is the union of the
    /// latencies per workload, so it is merged once at the end rather than
    /// recorded twice per request.
    pub fn merged<'a>(parts: impl IntoIterator<Item = &'a LatencyRecorder>) -> LatencyRecorder {
        let parts: Vec<&LatencyRecorder> =
            parts.into_iter().filter(|p| !p.counts.is_empty()).collect();
        let mut all = LatencyRecorder::default();
        let Some(first) = parts.iter().map(|p| p.first).min() else {
            return all;
        };
        let end = parts
            .iter()
            .map(|p| p.first + p.counts.len())
            .max()
            .unwrap_or(first);
        all.respan(first, end);
        for part in parts {
            let at = part.first - first;
            for (sum, count) in all.counts[at..].iter_mut().zip(&part.counts) {
                *sum += count;
            }
            all.max = all.max.max(part.max);
        }
        all
    }

    /// Requests recorded.
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The midpoint of bucket `index`, in ns: `hdrhistogram`'s
    /// `median_equivalent` of any value in it (half its width above its
    /// lowest value, rounded down).
    fn bucket_midpoint(index: usize) -> u64 {
        let width_log2 = (index >> HDR_HALF_SUB_BUCKETS_LOG2).saturating_sub(1);
        hdr_value(index) + ((1u64 << width_log2) >> 1)
    }

    /// The recorded buckets, lowest first, as `(index, count)`.
    fn recorded(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        (self.counts.iter().enumerate())
            .filter(|(_, count)| **count > 0)
            .map(|(at, count)| (self.first + at, *count))
    }

    /// Quantiles, each the midpoint of its histogram bucket (within 0.1%), except
    /// the exact maximum. `None` when nothing was recorded: a latency that
    /// does not exist is not zero.
    ///
    /// Read from the counts in one pass, as `hdrhistogram` reads its own
    /// (`value_at_quantile`, `median_equivalent`, `mean`), to the bit: building
    /// that histogram allocated and cleared 270 KB (33,792 buckets) and
    /// walked its buckets again for each figure, most of a small run's time.
    pub fn quantiles(&self) -> Option<Quantiles> {
        let total = self.count();
        if total == 0 {
            return None;
        }
        const LEVELS: [f64; 4] = [0.50, 0.90, 0.99, 0.999];
        // The rank each level needs, as `value_at_quantile` counts it: the
        // ceiling of its share of the total, at least the first.
        let ranks = LEVELS.map(|p| ((p * total as f64).ceil() as u64).max(1));
        let mut at = [0u64; 4];
        let mut found = 0;
        let (mut seen, mut mean) = (0u64, 0.0f64);
        for (index, count) in self.recorded() {
            let midpoint = Self::bucket_midpoint(index);
            seen += count;
            while found < ranks.len() && seen >= ranks[found] {
                at[found] = midpoint;
                found += 1;
            }
            mean += midpoint as f64 * count as f64 / total as f64;
        }
        let ms = |ns: u64| round_ms(ns.min(self.max.as_nanos()) as f64 / 1e6);
        Some(Quantiles {
            p50: ms(at[0]),
            p90: ms(at[1]),
            p99: ms(at[2]),
            p999: ms(at[3]),
            max: round_ms(self.max.as_ms()),
            mean: round_ms(mean / 1e6),
        })
    }

    /// The empirical CDF as `(latency ms, fraction ≤ it)` points, one per
    /// recorded bucket, at the bucket's midpoint.
    pub fn cdf(&self) -> Vec<(f64, f64)> {
        let n = self.count() as f64;
        let mut seen = 0u64;
        self.recorded()
            .map(|(index, count)| {
                seen += count;
                let ms = Self::bucket_midpoint(index) as f64 / 1e6;
                (round_ms(ms), seen as f64 / n)
            })
            .collect()
    }
}

/// Reports carry microsecond resolution: finer digits are histogram noise.
pub fn round_ms(ms: f64) -> f64 {
    (ms * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Latencies around every power of two, and past the hour the histogram
    /// is first sized for.
    fn awkward_latencies() -> Vec<u64> {
        let mut values = vec![0, 1, 2, 1023, 1024, 2047, 2048, 2049, 3_600_000_000_000];
        for shift in 0..62 {
            let p = 1u64 << shift;
            values.extend([p - 1, p, p + 1, p + p / 3, p + p / 2]);
        }
        values.extend((0..10_000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20));
        values
    }

    use hdrhistogram::Histogram;

    /// A histogram sized for an hour, resizing itself past it: the one
    /// whose bucket indices the recorder's counts share.
    fn empty_histogram() -> Histogram<u64> {
        let mut histogram = Histogram::new_with_bounds(1, 3_600_000_000_000, 3)
            .expect("valid bounds and precision");
        histogram.auto(true);
        histogram
    }

    /// The recorder's counts as an `hdrhistogram`: each bucket's count
    /// recorded at the bucket's lowest value.
    fn histogram(recorder: &LatencyRecorder) -> Histogram<u64> {
        let mut histogram = empty_histogram();
        for (index, count) in recorder.recorded() {
            histogram
                .record_n(hdr_value(index), count)
                .expect("an auto-resizing histogram takes any u64");
        }
        histogram
    }

    /// The quantiles as `hdrhistogram` reads them from its histogram (how
    /// the recorder read them before it read its counts itself).
    fn quantiles_by_hdrhistogram(recorder: &LatencyRecorder) -> Option<Quantiles> {
        let histogram = histogram(recorder);
        if histogram.is_empty() {
            return None;
        }
        let max = recorder.max.as_nanos();
        let q = |p: f64| {
            let v = histogram.value_at_quantile(p);
            round_ms(histogram.median_equivalent(v).min(max) as f64 / 1e6)
        };
        Some(Quantiles {
            p50: q(0.50),
            p90: q(0.90),
            p99: q(0.99),
            p999: q(0.999),
            max: round_ms(recorder.max.as_ms()),
            mean: round_ms(histogram.mean() / 1e6),
        })
    }

    fn cdf_by_hdrhistogram(recorder: &LatencyRecorder) -> Vec<(f64, f64)> {
        let histogram = histogram(recorder);
        let n = histogram.len() as f64;
        let mut seen = 0u64;
        histogram
            .iter_recorded()
            .map(|v| {
                seen += v.count_at_value();
                let ms = histogram.median_equivalent(v.value_iterated_to()) as f64 / 1e6;
                (round_ms(ms), seen as f64 / n)
            })
            .collect()
    }

    /// The quantiles, mean and CDF read from the counts are, bit for bit,
    /// those `hdrhistogram` reads from the same counts: on the awkward
    /// latencies, on sets of one to a few latencies (where each rank is a
    /// ceiling), and on log-normal-like spreads of many sizes.
    #[test]
    fn reading_the_counts_is_reading_hdrhistogram() {
        let mut sets: Vec<Vec<u64>> = vec![awkward_latencies(), vec![0], vec![7], vec![1, 2]];
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for size in [1usize, 2, 3, 5, 10, 99, 100, 101, 999, 1000, 1001, 12_345] {
            for _ in 0..4 {
                // Latencies from 1 µs to about an hour, denser at the low end.
                let set = (0..size)
                    .map(|_| (next() % 1_000_000) << (next() % 32))
                    .collect();
                sets.push(set);
            }
        }
        for set in sets {
            let mut recorder = LatencyRecorder::default();
            for &ns in &set {
                recorder.record(SimDuration(ns));
            }
            let (quantiles, reference) =
                (recorder.quantiles(), quantiles_by_hdrhistogram(&recorder));
            let bits = |q: Option<Quantiles>| {
                q.map(|q| [q.p50, q.p90, q.p99, q.p999, q.max, q.mean].map(f64::to_bits))
            };
            assert_eq!(bits(quantiles), bits(reference), "{} latencies", set.len());
            let bits = |cdf: Vec<(f64, f64)>| {
                cdf.into_iter()
                    .map(|(x, y)| (x.to_bits(), y.to_bits()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(bits(recorder.cdf()), bits(cdf_by_hdrhistogram(&recorder)));
            // Recorded the other way round, the span grows downwards: the
            // same recorder.
            let mut reversed = LatencyRecorder::default();
            for &ns in set.iter().rev() {
                reversed.record(SimDuration(ns));
            }
            assert_eq!(reversed, recorder);
        }
        assert_eq!(quantiles_by_hdrhistogram(&LatencyRecorder::default()), None);
    }

    /// The counts give the very histogram, counts, total, extremes and all,
    /// that recording each latency in `hdrhistogram` gives.
    #[test]
    fn counts_rebuild_the_histogram_that_records_each_latency() {
        let mut direct = empty_histogram();
        let mut recorder = LatencyRecorder::default();
        for ns in awkward_latencies() {
            direct.record(ns).expect("auto-resizing");
            recorder.record(SimDuration(ns));
        }
        let rebuilt = histogram(&recorder);
        assert!(rebuilt == direct);
        assert_eq!(rebuilt.len(), direct.len());
        assert_eq!(recorder.count(), direct.len());
        for ns in awkward_latencies() {
            assert_eq!(
                hdr_value(hdr_index(ns)),
                direct.lowest_equivalent(ns),
                "{ns}"
            );
        }
    }

    #[test]
    fn merging_adds_the_counts() {
        let (mut a, mut b) = (LatencyRecorder::default(), LatencyRecorder::default());
        let mut direct = empty_histogram();
        for (i, ns) in awkward_latencies().into_iter().enumerate() {
            if i % 3 == 0 {
                a.record(SimDuration(ns))
            } else {
                b.record(SimDuration(ns))
            }
            direct.record(ns).expect("auto-resizing");
        }
        let merged = LatencyRecorder::merged([&a, &b]);
        assert!(histogram(&merged) == direct);
        assert_eq!(merged.max, a.max.max(b.max));
        assert_eq!(merged.quantiles(), {
            let both = LatencyRecorder::merged([&b, &a]);
            both.quantiles()
        });
        assert!(LatencyRecorder::default().quantiles().is_none());
    }
}
