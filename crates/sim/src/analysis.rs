//! After the run: did the system come back after its trigger was removed?
//!
//! The question is asked thousands of times in a sweep, on systems from 1 to
//! 10⁵ requests per second and buckets from 0.1 s to 10 s, so no threshold is a
//! fixed fraction of one bucket: every test is of a *window* of `hold`, against
//! the noise the baseline itself shows.
//!
//! - **Baseline**: the buckets wholly inside `[baseline_from, trigger_start)`.
//!   It fixes the mean goodput per bucket `μ`, the latency of answered
//!   requests `L` (count-weighted), the backlog (requests held by services)
//!   and the retries' share of attempts.
//! - **Healthy before the trigger?** Over the baseline's second half, a
//!   system that answers markedly fewer requests than arrive is diverging
//!   (its backlog grows), and one whose attempts are mostly retries while
//!   markedly fewer requests succeed than arrive is already in its storm.
//!   Either is `unhealthy_before_trigger`: the trigger is not blamed.
//! - **Recovered** if a window of `hold` starts within `max_recovery` after
//!   the trigger's end (and before the first intervention) in which
//!   - mean goodput is at least `μ − max(goodput_band·μ, z·σ)`, where `σ` is
//!     the standard error of a window mean against the baseline's mean
//!     (per-bucket variance, floored at the Poisson variance `μ`, and the
//!     variance of the baseline's own window means where it has four or
//!     more); more goodput than the baseline (a backlog draining) is never
//!     degradation;
//!   - latency is at most `latency_factor` times the baseline's worst window
//!     of the same length (or its mean, whichever is larger); less latency
//!     is never degradation. Latency over that bar is excused when nothing
//!     sustains it: the backlog not growing beyond its Poisson noise, retries
//!     under `storm_retry_share` of attempts, and failures no more than the
//!     baseline's share explains. A queue near saturation swings its latency
//!     for minutes after a spike, longer than a baseline can show; a storm
//!     holds it there with retries, failures or a growing queue.
//! - Otherwise **metastable**: still degraded at the horizon, or until an
//!   intervention fixed it (then the intervention and the recovery after it
//!   are reported). A run too short to tell is **undetermined**, with why.
//!
//! Every verdict carries its evidence: the goodput and latency ratios, the
//! backlog against the baseline's and the retry share, at the decisive window
//! and at the end, with the thresholds they were held to.

use crate::timeseries::TimeSeries;
use serde::{Deserialize, Serialize};
use stormsim_engine::{SimDuration, SimTime};
use stormsim_model::{Change, Metastability, TimelineRole};

/// What the analysis concluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Back to the baseline within `max_recovery` after the trigger's end,
    /// and not degraded again for long before the run's end.
    Recovered,
    /// Back within `max_recovery`, then degraded again for `hold` or more
    /// with no new trigger (and while the same system without the trigger
    /// carried its load): it fell back into its bad state by itself.
    Relapsed,
    /// Not back by itself in time: stuck after the trigger was removed.
    Metastable,
    /// Degraded, but so was the same run without its trigger, to the run's
    /// end (or the first intervention): the load after the trigger was more
    /// than the system carries untouched. Overload, not a storm the trigger
    /// started.
    Overloaded,
    /// The baseline itself was degraded or diverging: there was no healthy
    /// state for the trigger to knock the system out of.
    UnhealthyBeforeTrigger,
    /// The run does not show enough to judge (see the reason).
    Undetermined,
}

impl Outcome {
    /// Every outcome, in the order reports list them.
    pub const ALL: [Outcome; 6] = [
        Outcome::Recovered,
        Outcome::Relapsed,
        Outcome::Metastable,
        Outcome::Overloaded,
        Outcome::UnhealthyBeforeTrigger,
        Outcome::Undetermined,
    ];

    /// The outcome spelt `name` (as [`Outcome::as_str`] spells it).
    pub fn parse(name: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.as_str() == name)
    }

    /// The spelling in summary.csv and results.csv.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Recovered => "recovered",
            Outcome::Relapsed => "relapsed",
            Outcome::Metastable => "metastable",
            Outcome::Overloaded => "overloaded",
            Outcome::UnhealthyBeforeTrigger => "unhealthy_before_trigger",
            Outcome::Undetermined => "undetermined",
        }
    }
}

/// The baseline's measured level and noise.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Baseline {
    /// Where it starts and ends, s.
    pub from_s: f64,
    /// Its end (the trigger's start, to a whole bucket), s.
    pub to_s: f64,
    /// Mean goodput, requests per second.
    pub goodput_rps: f64,
    /// Mean latency of answered requests, ms (`None`: none answered).
    pub latency_ms: Option<f64>,
    /// Mean requests held by services (queued or in service).
    pub backlog: f64,
    /// Retries' share of the attempts services received.
    pub retry_share: Option<f64>,
}

/// The bars a window must clear to count as recovered, as ratios to the
/// baseline.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Thresholds {
    /// A window's goodput must be at least this share of the baseline's.
    pub goodput_min_ratio: f64,
    /// A window's latency must be at most this multiple of the baseline's.
    pub latency_max_ratio: Option<f64>,
}

/// What one window showed.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Evidence {
    /// The window's start, s.
    pub from_s: f64,
    /// Its end, s.
    pub to_s: f64,
    /// Its goodput over the baseline's (`None`: the baseline had none):
    /// what it served, whatever its load.
    pub goodput_ratio: Option<f64>,
    /// Its first-try arrivals per second over the baseline's: its demand.
    pub demand_ratio: Option<f64>,
    /// The share of its demand it served (successes per first-try arrival)
    /// over the baseline's share (`None`: no demand in it). The goodput bar
    /// holds this, not the goodput: healthy is serving the load as well as
    /// the baseline did, whatever the load does.
    pub served_ratio: Option<f64>,
    /// The least `served_ratio` that clears the goodput bar at its demand
    /// (the band, or the noise of its demand where that is wider).
    pub served_min_ratio: Option<f64>,
    /// Its latency over the baseline's (`None`: nothing answered in one).
    pub latency_ratio: Option<f64>,
    /// Its mean backlog over the baseline's (`None`: the baseline held none).
    pub backlog_ratio: Option<f64>,
    /// Retries' share of its attempts (`None`: no attempts).
    pub retry_share: Option<f64>,
    /// Whether it served its demand as well as the baseline did, within
    /// the band and the noise.
    pub goodput_ok: bool,
    /// Whether latency cleared its bar.
    pub latency_ok: bool,
    /// Whether the requests held grew over the window by more than the
    /// Poisson noise of its arrivals and answers allows (`noise_z` standard
    /// deviations): a queue diverging, not swinging.
    pub backlog_growing: bool,
    /// Whether retries were at least `storm_retry_share` of its attempts.
    pub retry_storm: bool,
    /// Whether more of its answers were failures than the baseline's share
    /// of failures and its binomial noise (`noise_z` deviations) explain.
    pub failing: bool,
}

impl Evidence {
    /// Whether the window counts as recovered: goodput clears its bar, and
    /// so does latency, unless nothing sustains the slowness. A queue near
    /// saturation swings its latency for minutes after a spike, and a
    /// baseline shorter than those swings cannot show how far; but without
    /// a growing backlog, a storm of retries or more failures than the
    /// baseline's, nothing holds the system in a bad state, and goodput
    /// already says it serves its load.
    pub fn good(&self) -> bool {
        self.goodput_ok
            && (self.latency_ok || !(self.backlog_growing || self.retry_storm || self.failing))
    }
}

/// The verdict on one run, with its reasons.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verdict {
    /// What the analysis concluded.
    pub outcome: Outcome,
    /// Why, in a sentence with the numbers.
    pub reason: String,
    /// Seconds from the trigger's end to the start of the first window back
    /// to the baseline (both bars cleared), when it recovered by itself; a
    /// draining backlog may make that later than `max_recovery` (`None`: not
    /// back before the run ended or an intervention).
    pub recovery_s: Option<f64>,
    /// What ended the degradation: `"trigger end"`, an intervention's name,
    /// or `None` if it lasted to the horizon.
    pub recovered_by: Option<String>,
    /// Seconds from that event to recovery (also for interventions).
    pub recovered_after_s: Option<f64>,
    /// The baseline (`None`: there was none).
    pub baseline: Option<Baseline>,
    /// The bars (`None` without a baseline).
    pub thresholds: Option<Thresholds>,
    /// The window that decided: the recovery, the last one the recovery
    /// window allowed (metastable), or the baseline's second half (unhealthy).
    pub decisive: Option<Evidence>,
    /// The run's last window (before nothing: interventions included).
    pub at_end: Option<Evidence>,
    /// The storm's course from the trigger's start (`None` without a
    /// baseline).
    pub course: Option<Course>,
}

/// The state of the system in the run's last window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EndState {
    /// The last window counts as recovered.
    Healthy,
    /// It does not, and the same run without the trigger was healthy then.
    Degraded,
    /// It does not, and neither did the run without the trigger: overload.
    Overloaded,
}

impl EndState {
    /// The spelling in summary.csv.
    pub fn as_str(self) -> &'static str {
        match self {
            EndState::Healthy => "healthy",
            EndState::Degraded => "degraded",
            EndState::Overloaded => "overloaded",
        }
    }
}

/// A stretch of the run from the trigger's start on in which the system
/// was degraded: from the start of a window that fails to the start of the
/// next one that passes (or the run's end).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Span {
    /// Its start, s.
    pub from_s: f64,
    /// Its end, s.
    pub to_s: f64,
    /// Whether the same run without the trigger was degraded too (at its
    /// start): overload, not the trigger's doing.
    pub overload: bool,
}

/// The storm's course: when it began, when it ended and how, how long it
/// lasted, and the state at the horizon.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Course {
    /// When it first degraded, at or after the trigger's start, s (`None`:
    /// never).
    pub degraded_from_s: Option<f64>,
    /// When it was back (the start of the window that counted as recovered:
    /// by itself, or after the intervention `recovered_by` names), s.
    pub back_at_s: Option<f64>,
    /// When it degraded again after being back, with no new trigger, s.
    pub relapsed_at_s: Option<f64>,
    /// Seconds degraded in all from the trigger's start, overload excluded.
    pub degraded_s: f64,
    /// Seconds in which the same run without the trigger was degraded too.
    pub overloaded_s: f64,
    /// The state in the run's last window.
    pub end_state: Option<EndState>,
    /// The degraded stretches, in time order.
    pub spans: Vec<Span>,
}

impl Course {
    /// `60-420 500-600(overload)`: the spans as summary.csv writes them.
    pub fn spans_text(&self) -> String {
        self.spans
            .iter()
            .map(|s| {
                let mark = if s.overload { "(overload)" } else { "" };
                format!("{}-{}{mark}", s.from_s, s.to_s)
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

impl Verdict {
    /// `Some(true)` if metastable, `Some(false)` if recovered, `None` for the
    /// outcomes that are not a judgement of the trigger.
    ///
    /// A relapse counts as metastable: the system fell back into its bad
    /// state with nothing new pushing it there. Overload is not a judgement
    /// of the trigger (the system without it was degraded too).
    pub fn metastable(&self) -> Option<bool> {
        match self.outcome {
            Outcome::Recovered => Some(false),
            Outcome::Metastable | Outcome::Relapsed => Some(true),
            Outcome::Overloaded | Outcome::UnhealthyBeforeTrigger | Outcome::Undetermined => None,
        }
    }

    fn undetermined(reason: String) -> Verdict {
        Verdict {
            outcome: Outcome::Undetermined,
            reason,
            recovery_s: None,
            recovered_by: None,
            recovered_after_s: None,
            baseline: None,
            thresholds: None,
            decisive: None,
            at_end: None,
            course: None,
        }
    }
}

/// One bucket as the analysis needs it: counts over the bucket, and the
/// backlog sampled at its start.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sample {
    /// Logical requests that arrived (the first-try load).
    pub arrivals: f64,
    /// Logical requests answered with success in full (a fallback's
    /// degraded answer keeps a page up, but the system behind it has not
    /// recovered: those are `degraded`, not here).
    pub succeeded: f64,
    /// Logical requests answered with success, degraded by a fallback.
    pub degraded: f64,
    /// Logical requests answered, success or error.
    pub answered: f64,
    /// Sum of the latencies of the answered ones, ms.
    pub latency_sum_ms: f64,
    /// Requests held by services (queued or in service), summed over services.
    pub backlog: f64,
    /// Attempts services received.
    pub attempts: f64,
    /// Of those, retries.
    pub retries: f64,
    /// The successes its arrivals should have had: each workload's arrivals
    /// times its share of successes in the baseline, summed (set by the
    /// analysis; 0 as read).
    pub expected: f64,
}

/// A run's time series as the analysis reads it: one [`Sample`] per bucket
/// (workloads and services summed), and each workload's arrivals and
/// successes per bucket, so that each is held to its own share.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Samples {
    /// One per bucket.
    pub buckets: Vec<Sample>,
    /// Workloads (as reported: a workload's copies summed).
    pub workloads: usize,
    /// `(first-try arrivals, successes)` of workload `w` in bucket `b`, at
    /// `mix[b * workloads + w]`.
    pub mix: Vec<(f64, f64)>,
}

impl Samples {
    /// Buckets of one workload (or of several held to one share).
    pub fn pooled(buckets: Vec<Sample>) -> Samples {
        Samples {
            workloads: 1,
            mix: buckets.iter().map(|s| (s.arrivals, s.succeeded)).collect(),
            buckets,
        }
    }

    /// Buckets.
    pub fn len(&self) -> usize {
        self.buckets.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }

    /// The buckets with `expected` set from `shares`, each workload's
    /// successes per arrival.
    fn with_expected(&self, shares: &[f64]) -> Vec<Sample> {
        let w = self.workloads.max(1);
        self.buckets
            .iter()
            .enumerate()
            .map(|(b, s)| Sample {
                expected: (self.mix.get(b * w..(b + 1) * w).unwrap_or(&[]).iter())
                    .zip(shares)
                    .map(|((arrivals, _), share)| arrivals * share)
                    .fold(0.0, |a, x| a + x),
                ..*s
            })
            .collect()
    }
}

/// A run's time series as the analysis reads it: one sample per bucket,
/// services summed, and each workload's arrivals and successes.
pub fn samples_of(series: &TimeSeries) -> Samples {
    let buckets = (0..series.len())
        .map(|b| {
            let g = &series.global[b];
            let mut s = Sample {
                arrivals: g.requests as f64,
                succeeded: (g.succeeded - g.degraded) as f64,
                degraded: g.degraded as f64,
                answered: g.answered() as f64,
                latency_sum_ms: g.latency_sum_ns as f64 / 1e6,
                ..Sample::default()
            };
            for x in (0..series.services).map(|i| series.service(b, i)) {
                s.backlog += x.in_flight as f64;
                s.attempts += x.offered() as f64;
                s.retries += x.offered_retry as f64;
            }
            s
        })
        .collect();
    let mix = (0..series.len())
        .flat_map(|b| {
            (0..series.workloads).map(move |w| {
                let x = series.workload(b, w);
                (x.requests as f64, (x.succeeded - x.degraded) as f64)
            })
        })
        .collect();
    Samples {
        buckets,
        workloads: series.workloads,
        mix,
    }
}

/// The same samples in buckets `k` times as wide (a last, partial one
/// dropped): what a run with `timeseries.bucket_s` `k` times larger records,
/// counts summed and the backlog sampled at each wide bucket's start.
pub fn widen(samples: &Samples, k: usize) -> Samples {
    let k = k.max(1);
    let w = samples.workloads.max(1);
    let buckets: Vec<Sample> = samples
        .buckets
        .chunks_exact(k)
        .map(|c| {
            let mut s = Prefix::new(c).sum(0, c.len());
            s.backlog = c[0].backlog;
            s
        })
        .collect();
    let mix = (0..buckets.len())
        .flat_map(|b| {
            (0..w).map(move |x| {
                (0..k)
                    .filter_map(|i| samples.mix.get((b * k + i) * w + x))
                    .fold((0.0, 0.0), |(a, s), (da, ds)| (a + da, s + ds))
            })
        })
        .collect();
    Samples {
        buckets,
        workloads: samples.workloads,
        mix,
    }
}

/// Sums of samples over any range in O(1).
struct Prefix(Vec<Sample>);

impl Prefix {
    fn new(samples: &[Sample]) -> Prefix {
        let mut acc = Sample::default();
        let mut sums = Vec::with_capacity(samples.len() + 1);
        sums.push(acc);
        for s in samples {
            acc.arrivals += s.arrivals;
            acc.succeeded += s.succeeded;
            acc.degraded += s.degraded;
            acc.answered += s.answered;
            acc.latency_sum_ms += s.latency_sum_ms;
            acc.backlog += s.backlog;
            acc.attempts += s.attempts;
            acc.retries += s.retries;
            acc.expected += s.expected;
            sums.push(acc);
        }
        Prefix(sums)
    }

    /// The sum over buckets `[from, to)`.
    fn sum(&self, from: usize, to: usize) -> Sample {
        let (a, b) = (&self.0[from], &self.0[to]);
        Sample {
            arrivals: b.arrivals - a.arrivals,
            succeeded: b.succeeded - a.succeeded,
            degraded: b.degraded - a.degraded,
            answered: b.answered - a.answered,
            latency_sum_ms: b.latency_sum_ms - a.latency_sum_ms,
            backlog: b.backlog - a.backlog,
            attempts: b.attempts - a.attempts,
            retries: b.retries - a.retries,
            expected: b.expected - a.expected,
        }
    }
}

fn ratio(x: f64, of: f64) -> Option<f64> {
    (of > 0.0).then(|| round(x / of))
}

/// Ratios carry four decimals in reports: more is noise.
fn round(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

fn mean_latency(s: &Sample) -> Option<f64> {
    (s.answered > 0.0).then(|| s.latency_sum_ms / s.answered)
}

fn retry_share(s: &Sample) -> Option<f64> {
    (s.attempts > 0.0).then(|| s.retries / s.attempts)
}

/// Everything the window tests need, fixed once the baseline is measured.
#[derive(Clone, Copy)]
struct Judge<'a> {
    prefix: &'a Prefix,
    seconds: &'a dyn Fn(usize) -> f64,
    /// Mean goodput per bucket.
    goodput: f64,
    /// Mean first-try arrivals per bucket.
    arrivals: f64,
    /// The variance of a window's successes about those its arrivals should
    /// have had ([`Sample::expected`]), per expected success (it grows with
    /// the demand, as a count's does).
    residual_var_per_expected: f64,
    /// Successes expected over the whole baseline (the estimate of each
    /// workload's share is that noisy).
    baseline_expected: f64,
    goodput_band: f64,
    latency: Option<f64>,
    latency_max: Option<f64>,
    backlog: f64,
    hold: usize,
    /// Backlog gauges, one per bucket (at its start).
    backlog_at: &'a [Sample],
    noise_z: f64,
    /// The baseline's share of answers that were failures.
    failure_share: f64,
    storm_retry_share: f64,
}

impl Judge<'_> {
    /// The least successes a window must have whose arrivals should have
    /// had `expected` (each workload's share of them in the baseline): that,
    /// less the band or `noise_z` standard deviations of the window's own
    /// noise and of the baseline's estimate of the shares, whichever is
    /// wider.
    fn served_min(&self, expected: f64) -> f64 {
        let var = self.residual_var_per_expected
            * expected
            * (1.0 + expected / self.baseline_expected.max(1.0));
        expected - (self.goodput_band * expected).max(self.noise_z * var.sqrt())
    }

    fn evidence(&self, from: usize, to: usize) -> Evidence {
        let s = self.prefix.sum(from, to);
        let n = (to - from).max(1) as f64;
        let goodput = s.succeeded / n;
        let latency = mean_latency(&s);
        let gauge = |b: usize| {
            self.backlog_at
                .get(b)
                .or(self.backlog_at.last())
                .map_or(0.0, |s| s.backlog)
        };
        let retries = retry_share(&s);
        let expected = s.expected;
        let served_min = self.served_min(expected);
        Evidence {
            from_s: (self.seconds)(from),
            to_s: (self.seconds)(to),
            goodput_ratio: ratio(goodput, self.goodput),
            demand_ratio: ratio(s.arrivals / n, self.arrivals),
            served_ratio: ratio(s.succeeded, expected),
            served_min_ratio: ratio(served_min.max(0.0), expected),
            latency_ratio: latency.zip(self.latency).and_then(|(l, b)| ratio(l, b)),
            backlog_ratio: ratio(s.backlog / n, self.backlog),
            retry_share: retry_share(&s).map(round),
            // A window with no demand has nothing to serve.
            goodput_ok: s.succeeded >= served_min,
            // Nothing answered is no evidence of slowness; goodput decides.
            latency_ok: match (latency, self.latency_max) {
                (Some(l), Some(max)) => l <= max,
                _ => true,
            },
            backlog_growing: gauge(to) - gauge(from)
                > self.noise_z * (s.arrivals + s.answered).max(1.0).sqrt(),
            retry_storm: retries.is_some_and(|r| r >= self.storm_retry_share),
            failing: {
                let expected = self.failure_share * s.answered;
                s.answered - s.succeeded > expected + self.noise_z * (expected + 1.0).sqrt()
            },
        }
    }

    /// The window of `hold` starting at bucket `b`.
    fn window(&self, b: usize) -> Evidence {
        self.evidence(b, b + self.hold)
    }

    /// Whether any request arrived in the window starting at `b`: one with
    /// none shows neither a recovery nor a storm.
    fn has_demand(&self, b: usize) -> bool {
        b + self.hold <= self.backlog_at.len() && self.prefix.sum(b, b + self.hold).arrivals > 0.0
    }

    /// The first bucket in `[from, last_start]` that starts a window ending
    /// by `until` that counts as recovered ([`Evidence::good`]), or, if
    /// `strict`, that is back to the baseline (both bars cleared, nothing
    /// excused).
    fn first_good(
        &self,
        from: usize,
        last_start: usize,
        until: usize,
        strict: bool,
    ) -> Option<usize> {
        let last_start = last_start.min(until.saturating_sub(self.hold));
        (from..=last_start).find(|&b| {
            b + self.hold <= until && self.has_demand(b) && {
                let e = self.window(b);
                if strict {
                    e.goodput_ok && e.latency_ok
                } else {
                    e.good()
                }
            }
        })
    }
}

/// Whether each window from the trigger's start counts as recovered, in the
/// run and in its twin without the trigger.
struct Windows {
    /// The first window's start (the trigger's start, to a whole bucket).
    first: usize,
    /// Per window start from `first`: the run's window counts as recovered
    /// (`None`: no request arrived in it, and it shows nothing either way).
    run: Vec<Option<bool>>,
    /// Per window start from `first`: the twin's does (`true` without a
    /// twin, or past the twin's end: what is not seen is not overload).
    twin: Vec<bool>,
}

impl Windows {
    /// The windows of the run from bucket `first` to `len`, and of its
    /// twin (with its length) up to `twin_until`, the first intervention:
    /// both have it, and what it sheds is no overload.
    fn of(
        judge: &Judge,
        twin: Option<(&Judge, usize)>,
        twin_until: usize,
        first: usize,
        len: usize,
    ) -> Windows {
        let starts = first..(len + 1).saturating_sub(judge.hold).max(first);
        Windows {
            first,
            run: starts
                .clone()
                .map(|b| judge.has_demand(b).then(|| judge.window(b).good()))
                .collect(),
            twin: starts
                .map(|b| match twin {
                    Some((t, twin_len)) if b + t.hold <= twin_len.min(twin_until) => {
                        t.window(b).good()
                    }
                    _ => true,
                })
                .collect(),
        }
    }

    /// Whether the run's window at `b` counts as recovered (`None`: it has
    /// no demand; before the first, or past the end: yes).
    fn run_state(&self, b: usize) -> Option<bool> {
        match b.checked_sub(self.first) {
            Some(i) => self.run.get(i).copied().unwrap_or(Some(true)),
            None => Some(true),
        }
    }

    /// Whether the run's window at `b` counts as recovered (one with no
    /// demand does not).
    fn run_good(&self, b: usize) -> bool {
        self.run_state(b) == Some(true)
    }

    fn twin_good(&self, b: usize) -> bool {
        b < self.first || self.twin.get(b - self.first).copied().unwrap_or(true)
    }

    /// One past the last window start judged.
    fn end(&self) -> usize {
        self.first + self.run.len()
    }

    /// The first window start in `[from, until)` that begins a relapse:
    /// window starts that fail while the twin's pass, none passing between
    /// them (those with no demand show nothing and are passed over), `2 ×
    /// hold` of them: a storm of `L` buckets fails `L + hold - 1` starts, so
    /// it lasted `hold` or more.
    fn relapse(&self, from: usize, until: usize, hold: usize) -> Option<usize> {
        let mut start = None;
        let mut failed = 0;
        for b in from..until.min(self.end()) {
            match self.run_state(b) {
                Some(true) => {
                    start = None;
                    failed = 0;
                }
                Some(false) if self.twin_good(b) => {
                    start.get_or_insert(b);
                    failed += 1;
                    if failed >= 2 * hold {
                        return start;
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// The degraded spans, split where the twin's state changes. A window
    /// start that fails shows degradation somewhere in its window: a span
    /// (or its overload part) starts where the first window that shows it
    /// ends, `hold - 1` buckets on, but for one that starts with the
    /// trigger; it ends where the next window that passes starts. A window
    /// with no demand changes nothing.
    fn spans(&self, seconds: &dyn Fn(usize) -> f64, len: usize, hold: usize) -> Vec<Span> {
        // (first start, one past the last, overload), in buckets.
        let mut raw: Vec<(usize, usize, bool)> = Vec::new();
        let mut open: Option<(usize, bool)> = None;
        for b in self.first..self.end() {
            let Some(good) = self.run_state(b) else {
                continue;
            };
            let overload = !self.twin_good(b);
            match open {
                Some((from, o)) if good || o != overload => {
                    raw.push((from, b, o));
                    open = (!good).then_some((b, overload));
                }
                None if !good => open = Some((b, overload)),
                _ => {}
            }
        }
        if let Some((from, overload)) = open {
            raw.push((from, len.max(from), overload));
        }
        let onset = |from: usize, to: usize| {
            if from == self.first {
                from
            } else {
                (from + hold - 1).min(to)
            }
        };
        let mut spans: Vec<Span> = Vec::new();
        for (i, &(from, to, overload)) in raw.iter().enumerate() {
            let from = onset(from, to);
            // A split within one stretch: the part before ends where this
            // one starts.
            if i > 0 && raw[i - 1].1 == raw[i].0 {
                if let Some(last) = spans.last_mut() {
                    last.to_s = seconds(from).max(last.from_s);
                }
            }
            spans.push(Span {
                from_s: seconds(from),
                to_s: seconds(to),
                overload,
            });
        }
        spans.retain(|s| s.to_s > s.from_s);
        spans
    }
}

/// Classifies a run from its per-bucket samples (as many as the run lasted)
/// and its timeline; `None` when the timeline has no trigger (there is
/// nothing to recover from). As [`classify_with_twin`] without a twin.
pub fn classify(
    samples: &Samples,
    bucket: SimDuration,
    changes: &[Change],
    policy: &Metastability,
) -> Option<Verdict> {
    classify_with_twin(samples, None, bucket, changes, policy)
}

/// Classifies a run from its per-bucket samples, with those of its twin
/// without the trigger where there is one (the same model and seed, the
/// trigger's timeline entries left out): a window in which the twin is
/// degraded too shows overload, not the trigger's storm, and does not count
/// against `max_recovery`.
pub fn classify_with_twin(
    samples: &Samples,
    twin: Option<&Samples>,
    bucket: SimDuration,
    changes: &[Change],
    policy: &Metastability,
) -> Option<Verdict> {
    let mut verdict = classify_full_answers(samples, twin, bucket, changes, policy)?;
    // Judged on full answers: say how many fallbacks served, from the
    // trigger on, if any did.
    let trigger_start = changes
        .iter()
        .find(|c| c.role == Some(TimelineRole::TriggerStart))
        .map(|c| c.at);
    if let Some(at) = trigger_start {
        let from = (at.as_nanos() / bucket.as_nanos().max(1)) as usize;
        let after = Prefix::new(samples.buckets.get(from..).unwrap_or_default());
        let sum = after.sum(0, samples.buckets.len().saturating_sub(from));
        if sum.degraded > 0.0 {
            verdict.reason.push_str(&format!(
                "; judged on full answers: {} of the {} answered from the trigger on were degraded by fallbacks",
                sum.degraded, sum.answered
            ));
        }
    }
    Some(verdict)
}

/// [`classify_with_twin`] without its note on degraded answers.
fn classify_full_answers(
    samples: &Samples,
    twin: Option<&Samples>,
    bucket: SimDuration,
    changes: &[Change],
    policy: &Metastability,
) -> Option<Verdict> {
    let time_of = |role| changes.iter().find(|c| c.role == Some(role)).map(|c| c.at);
    let trigger_start = time_of(TimelineRole::TriggerStart)?;
    let trigger_end = time_of(TimelineRole::TriggerEnd)?;
    let width = bucket.as_nanos().max(1);
    let seconds = |buckets: usize| buckets as f64 * width as f64 / 1e9;
    let per_s = 1e9 / width as f64;
    // Buckets wholly inside [from, to).
    let first_bucket_from = |t: SimTime| t.as_nanos().div_ceil(width) as usize;
    let last_bucket_before = |t: SimTime| (t.as_nanos() / width) as usize;

    let b0 = first_bucket_from(SimTime::ZERO + policy.baseline_from);
    let b1 = last_bucket_before(trigger_start).min(samples.len());
    if b1 <= b0 {
        return Some(Verdict::undetermined(format!(
            "no baseline: the trigger starts at {} s, not after metastability.baseline_from_s ({} s) and a whole bucket, or the run ended before it ({} s)",
            trigger_start.as_secs(),
            policy.baseline_from.as_ms() / 1000.0,
            seconds(samples.len())
        )));
    }
    // Each workload's successes per arrival in the baseline (a workload
    // with no arrivals there is held to all of them together), and what
    // each bucket's arrivals should have had at those shares.
    let pooled = Prefix::new(&samples.buckets).sum(b0, b1);
    let shares: Vec<f64> = (0..samples.workloads.max(1))
        .map(|w| {
            let (a, s) = (b0..b1)
                .filter_map(|b| samples.mix.get(b * samples.workloads.max(1) + w))
                .fold((0.0, 0.0), |(a, s), (da, ds)| (a + da, s + ds));
            if a > 0.0 {
                s / a
            } else if pooled.arrivals > 0.0 {
                pooled.succeeded / pooled.arrivals
            } else {
                0.0
            }
        })
        .collect();
    let run = samples.with_expected(&shares);
    let prefix = Prefix::new(&run);
    let base = prefix.sum(b0, b1);
    let n_base = (b1 - b0) as f64;
    if base.arrivals == 0.0 {
        return Some(Verdict::undetermined(format!(
            "no load in the baseline ({} s to {} s): no request arrived, so there is no share of its load the system served to hold later windows to",
            seconds(b0),
            seconds(b1)
        )));
    }
    let hold = (policy.hold.as_nanos().div_ceil(width) as usize).max(1);
    let goodput = base.succeeded / n_base;
    let arrivals = base.arrivals / n_base;
    let latency = mean_latency(&base);
    let baseline = Baseline {
        from_s: seconds(b0),
        to_s: seconds(b1),
        goodput_rps: round(goodput * per_s),
        latency_ms: latency.map(round),
        backlog: round(base.backlog / n_base),
        retry_share: retry_share(&base).map(round),
    };

    // The noise of a window's successes about the baseline's share of its
    // arrivals, measured in the baseline at its demand: per bucket (times
    // the window's buckets), over whole windows where it has four or more
    // (that catches correlation between buckets), and at least a Poisson
    // count's (a short or quiet baseline must not make the bar tighter
    // than arrivals allow). Per arrival, so that it scales with demand.
    let residual = |s: &Sample| s.succeeded - s.expected;
    let per_bucket_var = if b1 - b0 > 1 {
        run[b0..b1].iter().map(|s| residual(s).powi(2)).sum::<f64>() / (n_base - 1.0)
    } else {
        0.0
    };
    let batch_var = {
        let batches: Vec<f64> = (0..(b1 - b0) / hold)
            .map(|i| residual(&prefix.sum(b0 + i * hold, b0 + (i + 1) * hold)))
            .collect();
        if batches.len() >= 4 {
            let m = batches.iter().sum::<f64>() / batches.len() as f64;
            batches.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (batches.len() - 1) as f64
        } else {
            0.0
        }
    };
    let window_expected = base.expected / n_base * hold as f64;
    let window_var = (per_bucket_var * hold as f64)
        .max(batch_var)
        .max(window_expected);
    let residual_var_per_expected = if window_expected > 0.0 {
        window_var / window_expected
    } else {
        1.0
    };

    // The baseline's worst window of latency: how far a healthy system swings.
    let worst_window_latency = (b1 - b0 >= hold)
        .then(|| {
            (b0..=b1 - hold)
                .filter_map(|b| mean_latency(&prefix.sum(b, b + hold)))
                .fold(f64::NAN, f64::max)
        })
        .filter(|l| !l.is_nan());
    let latency_reference = match (latency, worst_window_latency) {
        (Some(l), Some(w)) => Some(l.max(w)),
        (l, _) => l,
    };
    let latency_max = latency_reference.map(|l| policy.latency_factor * l);
    let judge = Judge {
        prefix: &prefix,
        seconds: &seconds,
        goodput,
        arrivals,
        residual_var_per_expected,
        baseline_expected: base.expected,
        goodput_band: policy.goodput_band,
        latency,
        latency_max,
        backlog: base.backlog / n_base,
        hold,
        backlog_at: &run,
        noise_z: policy.noise_z,
        failure_share: if base.answered > 0.0 {
            (base.answered - base.succeeded) / base.answered
        } else {
            0.0
        },
        storm_retry_share: policy.storm_retry_share,
    };
    let thresholds = Thresholds {
        goodput_min_ratio: ratio(judge.served_min(window_expected).max(0.0), window_expected)
            .unwrap_or(0.0),
        latency_max_ratio: latency_max.zip(latency).and_then(|(m, l)| ratio(m, l)),
    };
    let interventions: Vec<&Change> = changes
        .iter()
        .filter(|c| c.role == Some(TimelineRole::Intervention) && c.at >= trigger_end)
        .collect();
    let end_bucket = first_bucket_from(trigger_end);
    // The search ends at the first intervention, or at another trigger's
    // start: what follows either is no longer the first trigger's doing.
    let next_trigger = changes
        .iter()
        .filter(|c| c.role == Some(TimelineRole::TriggerStart) && c.at > trigger_end)
        .map(|c| last_bucket_before(c.at))
        .next();
    let first_intervention_bucket = interventions
        .first()
        .map_or(samples.len(), |c| last_bucket_before(c.at))
        .min(next_trigger.unwrap_or(usize::MAX));
    let twin_run = twin.map(|t| t.with_expected(&shares));
    let twin_prefix = twin_run.as_deref().map(Prefix::new);
    let twin_judge = twin_run
        .as_deref()
        .zip(twin_prefix.as_ref())
        .map(|(t, p)| Judge {
            prefix: p,
            backlog_at: t,
            ..judge
        });
    let windows = Windows::of(
        &judge,
        twin_judge
            .as_ref()
            .zip(twin_run.as_deref().map(<[Sample]>::len)),
        first_intervention_bucket,
        b1,
        samples.len(),
    );
    let at_end = (samples.len() > b1).then(|| {
        let from = samples.len().saturating_sub(hold).max(b1);
        judge.evidence(from, samples.len())
    });
    let spans = windows.spans(&seconds, samples.len(), hold);
    let total = |overload: bool| {
        round(
            spans
                .iter()
                .filter(|s| s.overload == overload)
                .map(|s| s.to_s - s.from_s)
                // From +0: an empty sum of floats is -0.
                .fold(0.0, |a, b| a + b),
        )
    };
    let mut course = Course {
        degraded_from_s: spans.first().map(|s| s.from_s),
        back_at_s: None,
        relapsed_at_s: None,
        degraded_s: total(false),
        overloaded_s: total(true),
        // The last window that shows anything.
        end_state: (windows.first..windows.end())
            .rev()
            .find_map(|b| windows.run_state(b).map(|good| (b, good)))
            .map(|(b, good)| match (good, windows.twin_good(b)) {
                (true, _) => EndState::Healthy,
                (false, true) => EndState::Degraded,
                (false, false) => EndState::Overloaded,
            }),
        spans,
    };
    let verdict = |outcome, reason, decisive, course: &Course| Verdict {
        outcome,
        reason,
        recovery_s: None,
        recovered_by: None,
        recovered_after_s: None,
        baseline: Some(baseline),
        thresholds: Some(thresholds),
        decisive,
        at_end,
        course: Some(course.clone()),
    };

    if let Some(why) = unhealthy_baseline(&prefix, b0, b1, policy) {
        let late = judge.evidence(b0 + (b1 - b0) / 2, b1);
        return Some(verdict(
            Outcome::UnhealthyBeforeTrigger,
            why,
            Some(late),
            &course,
        ));
    }

    let until = first_intervention_bucket.min(samples.len());
    // The recovery search: a window that counts as recovered must start
    // within `max_recovery` of the trigger's end, counting only the window
    // starts at which the twin without the trigger was healthy (overload
    // stops the clock).
    let allowed = (policy.max_recovery.as_nanos() / width) as usize + 1;
    let mut counted = 0;
    let mut last_counted = None;
    let mut recovered_at = None;
    let mut overload_at_end = false;
    let mut no_demand = false;
    let mut b = end_bucket;
    while b + hold <= until && counted < allowed {
        match windows.run_state(b) {
            Some(true) => {
                recovered_at = Some(b);
                break;
            }
            // No demand: nothing to show, and no time counted.
            None => no_demand = true,
            Some(false) if windows.twin_good(b) => {
                counted += 1;
                last_counted = Some(b);
                overload_at_end = false;
            }
            Some(false) => overload_at_end = true,
        }
        b += 1;
    }
    let overload_seen = b > end_bucket && (end_bucket..b).any(|b| !windows.twin_good(b));
    if let Some(b) = recovered_at {
        let after = seconds(b - end_bucket);
        let e = judge.window(b);
        // When it was back to the baseline: at once, or once the latency a
        // draining backlog excused has come down (searched to the first
        // intervention or the end, past `max_recovery`: the verdict is made).
        let back = judge.first_good(b, until, until, true);
        let back_s = back.map(|b| seconds(b - end_bucket));
        let overloaded = if overload_seen {
            " (its load was more than the system carries untouched for part of that time, which did not count)"
        } else {
            ""
        };
        let reason = match back_s {
            Some(s) if s == after => format!(
                "recovered {after} s after the trigger's end{overloaded}: for {} s {}",
                seconds(hold),
                describe(&e, &thresholds)
            ),
            Some(s) => format!(
                "recovered: from {after} s after the trigger's end{overloaded} nothing held it ({}), and it was back to the baseline {s} s after",
                describe(&e, &thresholds)
            ),
            None => format!(
                "recovered: from {after} s after the trigger's end{overloaded} nothing held it ({}), though its latency stayed above the bar to the end of what was observed",
                describe(&e, &thresholds)
            ),
        };
        course.back_at_s = Some(seconds(b));
        // Fallen back with nothing new pushing it: a relapse, whatever the
        // recovery before it.
        if let Some(r) = windows.relapse(b + 1, until, hold) {
            // Where the first window that shows it ends.
            course.relapsed_at_s = Some(seconds((r + hold - 1).min(samples.len())));
            let again = judge.window((r + hold - 1).min(windows.end() - 1));
            let mut v = verdict(
                Outcome::Relapsed,
                format!(
                    "relapsed: recovered {after} s after the trigger's end, then degraded again from {} s with no new trigger, for {} s or more: at {} s {}",
                    seconds((r + hold - 1).min(samples.len())),
                    seconds(hold),
                    again.from_s,
                    describe(&again, &thresholds)
                ),
                Some(again),
                &course,
            );
            v.recovery_s = back_s;
            return Some(v);
        }
        let mut v = verdict(Outcome::Recovered, reason, Some(e), &course);
        v.recovery_s = back_s;
        v.recovered_by = Some("trigger end".into());
        v.recovered_after_s = back_s;
        return Some(v);
    }
    if counted < allowed && overload_seen && overload_at_end {
        // To the end of what was observed, the same run without the
        // trigger was degraded too.
        let at = judge.window(
            b.saturating_sub(1)
                .max(end_bucket)
                .min(until.saturating_sub(hold)),
        );
        return Some(verdict(
            Outcome::Overloaded,
            format!(
                "overloaded: degraded after the trigger's end, and so was the same run without the trigger, to {} s: the load was more than the system carries untouched (at {} s {})",
                seconds(until),
                at.from_s,
                describe(&at, &thresholds)
            ),
            Some(at),
            &course,
        ));
    }
    // A recovery may start up to `max_recovery` after the trigger's end and
    // must hold for `hold`: a run that ends before that window closes, with
    // no intervention inside it, cannot tell "metastable" from "not yet".
    if counted < allowed && until == samples.len() && samples.len() <= first_intervention_bucket {
        // Where the window would close, the time not counted added.
        let window_end = b + (allowed - counted) - 1 + hold;
        let mut v = Verdict::undetermined(format!(
            "the run ended at {} s, before the recovery window after the trigger's end ({} s) closed at {} s (metastability.max_recovery_s + hold_s{}{}): run longer (lengthen horizon_s, or raise the limit that stopped the run)",
            seconds(until),
            trigger_end.as_secs(),
            seconds(window_end),
            if overload_seen {
                ", not counting the time the system without the trigger was overloaded too"
            } else {
                ""
            },
            if no_demand {
                ", not counting windows in which no request arrived: they show nothing"
            } else {
                ""
            }
        ));
        // What was seen of the storm's course is worth showing still.
        v.course = Some(course);
        return Some(v);
    }
    // The last window the recovery window allowed, or the last one before
    // the first intervention.
    let decisive_start = last_counted.unwrap_or_else(|| {
        (end_bucket + allowed - 1)
            .min(until.saturating_sub(hold))
            .max(end_bucket.min(until))
    });
    let decisive = judge.evidence(decisive_start, (decisive_start + hold).min(until));
    let mut v = verdict(
        Outcome::Metastable,
        format!(
            "not recovered within {} s of the trigger's end{}: at {} s {}",
            policy.max_recovery.as_ms() / 1000.0,
            if overload_seen {
                " (not counting the time the system without the trigger was overloaded too)"
            } else {
                ""
            },
            decisive.from_s,
            describe(&decisive, &thresholds)
        ),
        Some(decisive),
        &course,
    );
    // Back by itself, but later than `max_recovery` allowed (before the
    // first intervention, which then ended nothing).
    let late = (end_bucket..until.saturating_sub(hold).saturating_add(1))
        .find(|&b| b + hold <= until && windows.run_good(b));
    if let Some(b) = late {
        if let Some(course) = v.course.as_mut() {
            course.back_at_s = Some(seconds(b));
        }
        v.reason.push_str(&format!(
            "; back by itself {} s after the trigger's end, later than metastability.max_recovery_s",
            seconds(b - end_bucket)
        ));
        return Some(v);
    }
    for (i, c) in interventions.iter().enumerate() {
        let from = first_bucket_from(c.at);
        // Up to the next intervention, or the end of what was observed (a
        // run may end before the next intervention).
        let until = interventions
            .get(i + 1)
            .map_or(samples.len(), |n| last_bucket_before(n.at))
            .min(samples.len());
        if let Some(b) = judge.first_good(from, until, until, true) {
            v.recovered_by = Some(c.name.clone());
            v.recovered_after_s = Some(seconds(b - from));
            if let Some(course) = v.course.as_mut() {
                course.back_at_s = Some(seconds(b));
            }
            v.reason.push_str(&format!(
                "; back {} s after \u{201c}{}\u{201d}",
                seconds(b - from),
                c.name
            ));
            break;
        }
    }
    Some(v)
}

/// Why the baseline was not a healthy state, if it was not. Judged over its
/// second half, so that a warm-up filling the queues is not held against it.
fn unhealthy_baseline(
    prefix: &Prefix,
    b0: usize,
    b1: usize,
    policy: &Metastability,
) -> Option<String> {
    let late = prefix.sum(b0 + (b1 - b0) / 2, b1);
    if late.arrivals <= 0.0 {
        return None;
    }
    // Short of the arrivals by more than the band and the Poisson noise of
    // the arrivals themselves (a stable queue's backlog swings far less).
    let short_of_arrivals = |x: f64| {
        x < late.arrivals * (1.0 - policy.goodput_band) - policy.noise_z * late.arrivals.sqrt()
    };
    let pct = |x: f64| format!("{:.0}%", 100.0 * x);
    if short_of_arrivals(late.answered) {
        return Some(format!(
            "unhealthy before the trigger: in the baseline's second half the services answered {} of the requests that arrived (backlog growing: more arrive than are served)",
            pct(late.answered / late.arrivals)
        ));
    }
    let share = retry_share(&late).unwrap_or(0.0);
    if share >= policy.storm_retry_share && short_of_arrivals(late.succeeded) {
        return Some(format!(
            "unhealthy before the trigger: in the baseline's second half retries were {} of the attempts (metastability.storm_retry_share: {}) and {} of the requests that arrived succeeded: already in a retry storm",
            pct(share),
            policy.storm_retry_share,
            pct(late.succeeded / late.arrivals)
        ));
    }
    None
}

/// "successes per arrival 0.03 of the baseline's (needs at least 0.9),
/// demand 2.1× the baseline's, latency 12.1× (needs at most 2×),
/// backlog 40× the baseline's, retries 66% of attempts".
fn describe(e: &Evidence, t: &Thresholds) -> String {
    let mut parts = Vec::new();
    match (e.served_ratio, e.served_min_ratio) {
        (Some(g), Some(min)) => parts.push(format!(
            "successes per arrival {g} of the baseline's (needs at least {min})"
        )),
        (Some(g), None) => parts.push(format!("successes per arrival {g} of the baseline's")),
        _ => parts.push("no demand".into()),
    }
    if let Some(d) = e.demand_ratio.filter(|d| (d - 1.0).abs() >= 0.05) {
        parts.push(format!("demand {d}\u{d7} the baseline's"));
    }
    if let (Some(l), Some(max)) = (e.latency_ratio, t.latency_max_ratio) {
        parts.push(format!(
            "latency {l}\u{d7} the baseline's (needs at most {max}\u{d7} while the backlog grows, retries storm or failures rise)"
        ));
    }
    if let Some(b) = e.backlog_ratio {
        let trend = if e.backlog_growing { ", growing" } else { "" };
        parts.push(format!("backlog {b}\u{d7} the baseline's{trend}"));
    }
    if let Some(r) = e.retry_share {
        parts.push(format!("retries {:.0}% of attempts", 100.0 * r));
    }
    if e.failing {
        parts.push("more failures than in the baseline".into());
    }
    parts.join(", ")
}

#[cfg(test)]
#[path = "analysis_tests.rs"]
mod tests;
