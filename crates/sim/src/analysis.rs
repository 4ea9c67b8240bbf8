//! After the run: did the system come back after its trigger was removed?
//!
//! A variant *recovered* if, within `max_recovery` after the trigger ended and
//! before any intervention, goodput came back within `goodput_band` of its
//! pre-trigger baseline and the mean latency of answered requests within
//! `latency_factor` of the baseline's, and both held for `hold`. Otherwise it is
//! *metastable*: still degraded at the horizon, or until an intervention fixed
//! it (then the intervention and the recovery after it are reported).

use serde::Serialize;
use stormsim_engine::{SimDuration, SimTime};
use stormsim_model::{Change, Metastability, TimelineRole};

/// The verdict on one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Recovery {
    /// True if the system did not recover by itself in time.
    pub metastable: bool,
    /// Seconds from the trigger's end to the start of the first good stretch,
    /// when it recovered by itself; `None` otherwise.
    pub recovery_s: Option<f64>,
    /// What ended the degradation: `"trigger end"`, an intervention's name, or
    /// `None` if it lasted to the horizon.
    pub recovered_by: Option<String>,
    /// Seconds from that event to recovery (also for interventions).
    pub recovered_after_s: Option<f64>,
    /// Baseline goodput, requests per second.
    pub baseline_goodput_rps: f64,
    /// Baseline mean latency of answered requests, ms.
    pub baseline_latency_ms: f64,
}

/// One bucket as the analysis needs it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Succeeded requests in the bucket.
    pub goodput: f64,
    /// Mean latency of answered requests, ms (`None` if none were answered).
    pub latency_ms: Option<f64>,
}

/// What the analysis made of a run.
#[derive(Clone, Debug, PartialEq)]
pub enum Classification {
    /// The timeline has no trigger (`trigger_start` and `trigger_end`): there
    /// is nothing to recover from.
    NoTrigger,
    /// There is a trigger, but the run does not show enough to judge: why.
    /// A verdict here would be a guess (a run cut before the trigger ends
    /// would read as "still degraded at the horizon").
    Undetermined(String),
    /// The verdict.
    Judged(Recovery),
}

impl Classification {
    /// The verdict, if one was reached.
    pub fn recovery(self) -> Option<Recovery> {
        match self {
            Classification::Judged(r) => Some(r),
            _ => None,
        }
    }
}

/// Classifies a run from its per-bucket samples (as many as the run lasted)
/// and its timeline.
pub fn classify(
    samples: &[Sample],
    bucket: SimDuration,
    changes: &[Change],
    policy: &Metastability,
) -> Classification {
    let time_of = |role| changes.iter().find(|c| c.role == Some(role)).map(|c| c.at);
    let (Some(trigger_start), Some(trigger_end)) = (
        time_of(TimelineRole::TriggerStart),
        time_of(TimelineRole::TriggerEnd),
    ) else {
        return Classification::NoTrigger;
    };
    let width = bucket.as_nanos().max(1);
    let seconds = |buckets: usize| buckets as f64 * width as f64 / 1e9;
    // Buckets wholly inside [from, to).
    let first_bucket_from = |t: SimTime| t.as_nanos().div_ceil(width) as usize;
    let last_bucket_before = |t: SimTime| (t.as_nanos() / width) as usize;

    let b0 = first_bucket_from(SimTime::ZERO + policy.baseline_from);
    let b1 = last_bucket_before(trigger_start).min(samples.len());
    if b1 <= b0 {
        return Classification::Undetermined(format!(
            "no baseline: the trigger starts at {} s, not after metastability.baseline_from_s ({} s) and a whole bucket, or the run ended before it ({} s)",
            trigger_start.as_secs(),
            policy.baseline_from.as_ms() / 1000.0,
            seconds(samples.len())
        ));
    }
    let baseline = &samples[b0..b1];
    let per_s = 1e9 / width as f64;
    let baseline_goodput = baseline.iter().map(|s| s.goodput).sum::<f64>() / baseline.len() as f64;
    let latencies: Vec<f64> = baseline.iter().filter_map(|s| s.latency_ms).collect();
    let baseline_latency = if latencies.is_empty() {
        0.0
    } else {
        latencies.iter().sum::<f64>() / latencies.len() as f64
    };
    let good = |s: &Sample| {
        (s.goodput - baseline_goodput).abs() <= policy.goodput_band * baseline_goodput
            && s.latency_ms
                .is_none_or(|l| l <= policy.latency_factor * baseline_latency)
    };
    let hold = (policy.hold.as_nanos().div_ceil(width) as usize).max(1);
    // The first bucket from `from` that starts `hold` good buckets in a row.
    let first_good_stretch = |from: usize, until: usize| -> Option<usize> {
        let until = until.min(samples.len());
        let mut run = 0;
        for (b, sample) in samples.iter().enumerate().take(until).skip(from) {
            if good(sample) {
                run += 1;
                if run == hold {
                    return Some(b + 1 - hold);
                }
            } else {
                run = 0;
            }
        }
        None
    };

    let interventions: Vec<&Change> = changes
        .iter()
        .filter(|c| c.role == Some(TimelineRole::Intervention) && c.at >= trigger_end)
        .collect();
    let end_bucket = first_bucket_from(trigger_end);
    let first_intervention_bucket = interventions
        .first()
        .map_or(samples.len(), |c| last_bucket_before(c.at));
    // A recovery may start up to `max_recovery` after the trigger's end and
    // must hold for `hold`: a run that ends before that window does, with no
    // intervention inside it, cannot tell "metastable" from "not yet". In
    // buckets, as the search below counts them.
    let window_end = end_bucket + (policy.max_recovery.as_nanos() / width) as usize + hold;
    let observed_until = first_intervention_bucket.min(samples.len());
    let window_cut_by_the_end =
        samples.len() < window_end && samples.len() <= first_intervention_bucket;
    let mut verdict = Recovery {
        baseline_goodput_rps: baseline_goodput * per_s,
        baseline_latency_ms: baseline_latency,
        ..Recovery::default()
    };
    if let Some(b) = first_good_stretch(end_bucket, first_intervention_bucket) {
        let after = seconds(b.saturating_sub(end_bucket));
        if after <= policy.max_recovery.as_ms() / 1000.0 {
            verdict.recovery_s = Some(after);
            verdict.recovered_by = Some("trigger end".into());
            verdict.recovered_after_s = Some(after);
            return Classification::Judged(verdict);
        }
    }
    if window_cut_by_the_end {
        return Classification::Undetermined(format!(
            "the run ended at {} s, before the recovery window after the trigger's end ({} s) closed at {} s (metastability.max_recovery_s + hold_s): run longer (lengthen horizon_s, or raise the limit that stopped the run)",
            seconds(observed_until),
            trigger_end.as_secs(),
            seconds(window_end)
        ));
    }
    verdict.metastable = true;
    for (i, c) in interventions.iter().enumerate() {
        let from = first_bucket_from(c.at);
        let until = interventions
            .get(i + 1)
            .map_or(samples.len(), |n| last_bucket_before(n.at));
        if let Some(b) = first_good_stretch(from, until) {
            verdict.recovered_by = Some(c.name.clone());
            verdict.recovered_after_s = Some(seconds(b.saturating_sub(from)));
            break;
        }
    }
    Classification::Judged(verdict)
}

#[cfg(test)]
mod tests {
    use super::*;
    use stormsim_model::Model;

    fn change(at_s: u64, name: &str, role: TimelineRole, model: &Model) -> Change {
        Change {
            at: SimTime::ZERO + SimDuration::from_secs(at_s),
            name: name.into(),
            role: Some(role),
            model: model.clone(),
        }
    }

    fn model() -> Model {
        let text = r#"{"name": "m", "workloads": [{"name": "w", "target": "s",
            "arrival": {"kind": "poisson", "rate_per_s": 1}, "requests": 1}],
            "services": [{"name": "s"}]}"#;
        stormsim_model::load_model(text, &[], None)
            .unwrap()
            .variants[0]
            .model
            .clone()
    }

    const POLICY: Metastability = Metastability {
        baseline_from: SimDuration(10_000_000_000),
        goodput_band: 0.1,
        latency_factor: 2.0,
        hold: SimDuration(30_000_000_000),
        max_recovery: SimDuration(120_000_000_000),
    };

    fn series(len: usize, bad: impl Fn(usize) -> bool) -> Vec<Sample> {
        (0..len)
            .map(|b| {
                if bad(b) {
                    Sample {
                        goodput: 0.0,
                        latency_ms: Some(2500.0),
                    }
                } else {
                    Sample {
                        goodput: 100.0,
                        latency_ms: Some(5.0),
                    }
                }
            })
            .collect()
    }

    fn timeline(with_intervention: bool) -> Vec<Change> {
        let m = model();
        let mut t = vec![
            change(60, "deploy", TimelineRole::TriggerStart, &m),
            change(120, "rollback", TimelineRole::TriggerEnd, &m),
        ];
        if with_intervention {
            t.push(change(300, "retries off", TimelineRole::Intervention, &m));
        }
        t
    }

    #[test]
    fn a_system_that_comes_back_after_the_rollback_recovered() {
        // Degraded from 60 s to 135 s: 15 s after the rollback at 120 s.
        let s = series(600, |b| (60..135).contains(&b));
        let v = classify(&s, SimDuration::from_secs(1), &timeline(true), &POLICY)
            .recovery()
            .unwrap();
        assert!(!v.metastable);
        assert_eq!(v.recovery_s, Some(15.0));
        assert_eq!(v.recovered_by.as_deref(), Some("trigger end"));
        assert!((v.baseline_goodput_rps - 100.0).abs() < 1e-9);
        assert!((v.baseline_latency_ms - 5.0).abs() < 1e-9);
    }

    #[test]
    fn a_system_that_needs_the_intervention_is_metastable() {
        // Degraded from 60 s until 320 s: 20 s after the intervention at 300 s.
        let s = series(600, |b| (60..320).contains(&b));
        let v = classify(&s, SimDuration::from_secs(1), &timeline(true), &POLICY)
            .recovery()
            .unwrap();
        assert!(v.metastable);
        assert_eq!(v.recovery_s, None);
        assert_eq!(v.recovered_by.as_deref(), Some("retries off"));
        assert_eq!(v.recovered_after_s, Some(20.0));
    }

    #[test]
    fn a_system_degraded_to_the_horizon_is_metastable_with_no_recovery() {
        let s = series(600, |b| b >= 60);
        let v = classify(&s, SimDuration::from_secs(1), &timeline(false), &POLICY)
            .recovery()
            .unwrap();
        assert!(v.metastable);
        assert_eq!(v.recovered_by, None);
    }

    #[test]
    fn a_recovery_slower_than_the_limit_is_metastable() {
        // Back 130 s after the rollback: longer than max_recovery (120 s).
        let s = series(600, |b| (60..250).contains(&b));
        let v = classify(&s, SimDuration::from_secs(1), &timeline(false), &POLICY)
            .recovery()
            .unwrap();
        assert!(v.metastable);
    }

    #[test]
    fn a_run_cut_before_the_recovery_window_closes_is_undetermined() {
        // Still degraded when the run ends at 200 s, 80 s after the rollback:
        // it might still come back within max_recovery (120 s).
        let s = series(200, |b| b >= 60);
        let c = classify(&s, SimDuration::from_secs(1), &timeline(false), &POLICY);
        let Classification::Undetermined(why) = c else {
            panic!("{c:?}")
        };
        assert!(why.contains("lengthen horizon_s"), "{why}");
        // And one cut before the rollback itself.
        let s = series(100, |b| b >= 60);
        let c = classify(&s, SimDuration::from_secs(1), &timeline(false), &POLICY);
        assert!(matches!(c, Classification::Undetermined(_)), "{c:?}");
        // A recovery seen before the cut is a verdict all the same.
        let s = series(200, |b| (60..135).contains(&b));
        let v = classify(&s, SimDuration::from_secs(1), &timeline(false), &POLICY);
        assert_eq!(v.recovery().unwrap().recovery_s, Some(15.0));
        // An intervention inside the window (at 200 s, before it closes at
        // 270 s) ends what needs observing: a run cut at 210 s is judged.
        let m = model();
        let mut t = timeline(false);
        t.push(change(200, "retries off", TimelineRole::Intervention, &m));
        let s = series(210, |b| b >= 60);
        let c = classify(&s, SimDuration::from_secs(1), &t, &POLICY);
        assert!(c.recovery().unwrap().metastable);
    }

    /// The window's end in buckets is where the search for a recovery stops
    /// looking: a trigger ending between buckets and a hold that is not a
    /// whole number of buckets. Trigger end 120.5 s, max_recovery 10 s, hold
    /// 1.5 s (2 buckets), 1 s buckets: a stretch may start up to bucket
    /// 121 + 10 = 131 and needs buckets 131 and 132, so a run of 132 buckets
    /// cannot tell; one of 133 can (and here it recovered, at 10 s).
    #[test]
    fn the_window_ends_where_the_search_for_a_recovery_stops() {
        let policy = Metastability {
            max_recovery: SimDuration::from_secs(10),
            hold: SimDuration::from_ms(1500.0),
            ..POLICY
        };
        let m = model();
        let t = vec![
            change(60, "deploy", TimelineRole::TriggerStart, &m),
            Change {
                at: SimTime::ZERO + SimDuration::from_ms(120_500.0),
                ..change(120, "rollback", TimelineRole::TriggerEnd, &m)
            },
        ];
        let bad = |b: usize| (60..131).contains(&b);
        let c = classify(&series(132, bad), SimDuration::from_secs(1), &t, &policy);
        assert!(matches!(c, Classification::Undetermined(_)), "{c:?}");
        let c = classify(&series(133, bad), SimDuration::from_secs(1), &t, &policy);
        let r = c.recovery().unwrap();
        assert!(!r.metastable);
        assert_eq!(r.recovery_s, Some(10.0));
    }

    #[test]
    fn a_timeline_without_a_trigger_is_not_classified() {
        let s = series(600, |_| false);
        let c = classify(&s, SimDuration::from_secs(1), &[], &POLICY);
        assert_eq!(c, Classification::NoTrigger);
    }

    #[test]
    fn a_short_good_blip_is_not_a_recovery() {
        // Good for 10 s (less than hold = 30 s) inside the storm.
        let s = series(600, |b| (60..200).contains(&b) && !(150..160).contains(&b));
        let v = classify(&s, SimDuration::from_secs(1), &timeline(false), &POLICY)
            .recovery()
            .unwrap();
        assert_eq!(v.recovery_s, Some(80.0));
    }
}
