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
    /// Back to the baseline within `max_recovery` after the trigger's end.
    Recovered,
    /// Not back by itself in time: stuck after the trigger was removed.
    Metastable,
    /// The baseline itself was degraded or diverging: there was no healthy
    /// state for the trigger to knock the system out of.
    UnhealthyBeforeTrigger,
    /// The run does not show enough to judge (see the reason).
    Undetermined,
}

impl Outcome {
    /// The spelling in summary.csv and results.csv.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Recovered => "recovered",
            Outcome::Metastable => "metastable",
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
    /// Its goodput over the baseline's (`None`: the baseline had none).
    pub goodput_ratio: Option<f64>,
    /// Its latency over the baseline's (`None`: nothing answered in one).
    pub latency_ratio: Option<f64>,
    /// Its mean backlog over the baseline's (`None`: the baseline held none).
    pub backlog_ratio: Option<f64>,
    /// Retries' share of its attempts (`None`: no attempts).
    pub retry_share: Option<f64>,
    /// Whether goodput cleared its bar.
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
}

impl Verdict {
    /// `Some(true)` if metastable, `Some(false)` if recovered, `None` for the
    /// outcomes that are not a judgement of the trigger.
    pub fn metastable(&self) -> Option<bool> {
        match self.outcome {
            Outcome::Recovered => Some(false),
            Outcome::Metastable => Some(true),
            Outcome::UnhealthyBeforeTrigger | Outcome::Undetermined => None,
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
        }
    }
}

/// One bucket as the analysis needs it: counts over the bucket, and the
/// backlog sampled at its start.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sample {
    /// Logical requests that arrived (the first-try load).
    pub arrivals: f64,
    /// Logical requests answered with success.
    pub succeeded: f64,
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
}

/// A run's time series as the analysis reads it: one sample per bucket,
/// services summed.
pub fn samples_of(series: &TimeSeries) -> Vec<Sample> {
    (0..series.len())
        .map(|b| {
            let g = &series.global[b];
            let mut s = Sample {
                arrivals: g.requests as f64,
                succeeded: g.succeeded as f64,
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
        .collect()
}

/// The same samples in buckets `k` times as wide (a last, partial one
/// dropped): what a run with `timeseries.bucket_s` `k` times larger records,
/// counts summed and the backlog sampled at each wide bucket's start.
pub fn widen(samples: &[Sample], k: usize) -> Vec<Sample> {
    let k = k.max(1);
    samples
        .chunks_exact(k)
        .map(|c| {
            let mut s = Prefix::new(c).sum(0, c.len());
            s.backlog = c[0].backlog;
            s
        })
        .collect()
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
            acc.answered += s.answered;
            acc.latency_sum_ms += s.latency_sum_ms;
            acc.backlog += s.backlog;
            acc.attempts += s.attempts;
            acc.retries += s.retries;
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
            answered: b.answered - a.answered,
            latency_sum_ms: b.latency_sum_ms - a.latency_sum_ms,
            backlog: b.backlog - a.backlog,
            attempts: b.attempts - a.attempts,
            retries: b.retries - a.retries,
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
struct Judge<'a> {
    prefix: &'a Prefix,
    seconds: &'a dyn Fn(usize) -> f64,
    /// Mean goodput per bucket.
    goodput: f64,
    /// Smallest mean goodput per bucket a good window may have.
    goodput_min: f64,
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
        Evidence {
            from_s: (self.seconds)(from),
            to_s: (self.seconds)(to),
            goodput_ratio: ratio(goodput, self.goodput),
            latency_ratio: latency.zip(self.latency).and_then(|(l, b)| ratio(l, b)),
            backlog_ratio: ratio(s.backlog / n, self.backlog),
            retry_share: retry_share(&s).map(round),
            goodput_ok: goodput >= self.goodput_min,
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
            b + self.hold <= until && {
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

/// Classifies a run from its per-bucket samples (as many as the run lasted)
/// and its timeline; `None` when the timeline has no trigger (there is
/// nothing to recover from).
pub fn classify(
    samples: &[Sample],
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
    let prefix = Prefix::new(samples);
    let base = prefix.sum(b0, b1);
    let n_base = (b1 - b0) as f64;
    if base.arrivals == 0.0 && base.answered == 0.0 {
        return Some(Verdict::undetermined(format!(
            "no load in the baseline ({} s to {} s): no request arrived or was answered",
            seconds(b0),
            seconds(b1)
        )));
    }
    let hold = (policy.hold.as_nanos().div_ceil(width) as usize).max(1);
    let goodput = base.succeeded / n_base;
    let latency = mean_latency(&base);
    let baseline = Baseline {
        from_s: seconds(b0),
        to_s: seconds(b1),
        goodput_rps: round(goodput * per_s),
        latency_ms: latency.map(round),
        backlog: round(base.backlog / n_base),
        retry_share: retry_share(&base).map(round),
    };

    // The noise of a window mean of goodput, against the baseline's mean.
    let per_bucket_var = {
        let ss: f64 = samples[b0..b1]
            .iter()
            .map(|s| (s.succeeded - goodput).powi(2))
            .sum();
        let sample_var = if b1 - b0 > 1 {
            ss / (n_base - 1.0)
        } else {
            0.0
        };
        // Counts are at least as noisy as Poisson counts: a short or quiet
        // baseline must not make the bar tighter than arrivals allow.
        sample_var.max(goodput)
    };
    let batch_var = {
        let batches: Vec<f64> = (0..(b1 - b0) / hold)
            .map(|i| prefix.sum(b0 + i * hold, b0 + (i + 1) * hold).succeeded / hold as f64)
            .collect();
        if batches.len() >= 4 {
            let m = batches.iter().sum::<f64>() / batches.len() as f64;
            batches.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (batches.len() - 1) as f64
        } else {
            0.0
        }
    };
    let window_var = (per_bucket_var / hold as f64).max(batch_var) + per_bucket_var / n_base;
    let tolerance = (policy.goodput_band * goodput).max(policy.noise_z * window_var.sqrt());
    let goodput_min = goodput - tolerance;

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
    let thresholds = Thresholds {
        goodput_min_ratio: ratio(goodput_min, goodput).unwrap_or(0.0),
        latency_max_ratio: latency_max.zip(latency).and_then(|(m, l)| ratio(m, l)),
    };
    let judge = Judge {
        prefix: &prefix,
        seconds: &seconds,
        goodput,
        goodput_min,
        latency,
        latency_max,
        backlog: base.backlog / n_base,
        hold,
        backlog_at: samples,
        noise_z: policy.noise_z,
        failure_share: if base.answered > 0.0 {
            (base.answered - base.succeeded) / base.answered
        } else {
            0.0
        },
        storm_retry_share: policy.storm_retry_share,
    };
    let at_end = (samples.len() > b1).then(|| {
        let from = samples.len().saturating_sub(hold).max(b1);
        judge.evidence(from, samples.len())
    });
    let verdict = |outcome, reason, decisive| Verdict {
        outcome,
        reason,
        recovery_s: None,
        recovered_by: None,
        recovered_after_s: None,
        baseline: Some(baseline),
        thresholds: Some(thresholds),
        decisive,
        at_end,
    };

    if let Some(why) = unhealthy_baseline(&prefix, b0, b1, policy) {
        let late = judge.evidence(b0 + (b1 - b0) / 2, b1);
        return Some(verdict(Outcome::UnhealthyBeforeTrigger, why, Some(late)));
    }

    let interventions: Vec<&Change> = changes
        .iter()
        .filter(|c| c.role == Some(TimelineRole::Intervention) && c.at >= trigger_end)
        .collect();
    let end_bucket = first_bucket_from(trigger_end);
    let first_intervention_bucket = interventions
        .first()
        .map_or(samples.len(), |c| last_bucket_before(c.at));
    let last_start = end_bucket + (policy.max_recovery.as_nanos() / width) as usize;
    let until = first_intervention_bucket.min(samples.len());
    if let Some(b) = judge.first_good(end_bucket, last_start, until, false) {
        let after = seconds(b - end_bucket);
        let e = judge.window(b);
        // When it was back to the baseline: at once, or once the latency a
        // draining backlog excused has come down (searched to the first
        // intervention or the end, past `max_recovery`: the verdict is made).
        let back = judge.first_good(b, until, until, true);
        let back_s = back.map(|b| seconds(b - end_bucket));
        let reason = match back_s {
            Some(s) if s == after => format!(
                "recovered {after} s after the trigger's end: for {} s {}",
                seconds(hold),
                describe(&e, &thresholds)
            ),
            Some(s) => format!(
                "recovered: from {after} s after the trigger's end nothing held it ({}), and it was back to the baseline {s} s after",
                describe(&e, &thresholds)
            ),
            None => format!(
                "recovered: from {after} s after the trigger's end nothing held it ({}), though its latency stayed above the bar to the end of what was observed",
                describe(&e, &thresholds)
            ),
        };
        let mut v = verdict(Outcome::Recovered, reason, Some(e));
        v.recovery_s = back_s;
        v.recovered_by = Some("trigger end".into());
        v.recovered_after_s = back_s;
        return Some(v);
    }
    // A recovery may start up to `max_recovery` after the trigger's end and
    // must hold for `hold`: a run that ends before that window closes, with
    // no intervention inside it, cannot tell "metastable" from "not yet".
    let window_end = last_start + hold;
    if samples.len() < window_end && samples.len() <= first_intervention_bucket {
        return Some(Verdict::undetermined(format!(
            "the run ended at {} s, before the recovery window after the trigger's end ({} s) closed at {} s (metastability.max_recovery_s + hold_s): run longer (lengthen horizon_s, or raise the limit that stopped the run)",
            seconds(until),
            trigger_end.as_secs(),
            seconds(window_end)
        )));
    }
    // The last window the recovery window allowed, or the last one before
    // the first intervention.
    let decisive_start = last_start
        .min(until.saturating_sub(hold))
        .max(end_bucket.min(until));
    let decisive = judge.evidence(decisive_start, (decisive_start + hold).min(until));
    let mut v = verdict(
        Outcome::Metastable,
        format!(
            "not recovered within {} s of the trigger's end: at {} s {}",
            policy.max_recovery.as_ms() / 1000.0,
            decisive.from_s,
            describe(&decisive, &thresholds)
        ),
        Some(decisive),
    );
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

/// "goodput 0.03 of the baseline (needs ≥ 0.9), latency 12.1× (needs ≤ 2×),
/// backlog 40× the baseline's, retries 66% of attempts".
fn describe(e: &Evidence, t: &Thresholds) -> String {
    let mut parts = Vec::new();
    match e.goodput_ratio {
        Some(g) => parts.push(format!(
            "goodput {g} of the baseline's (needs at least {})",
            t.goodput_min_ratio
        )),
        None => parts.push("no goodput in the baseline".into()),
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
