//! The recovery verdict under the load people really have: ramps, flash
//! sales, daily cycles, a step down after the trigger, closed loops and
//! traces. Each shape is run on a healthy system and on one that stays
//! stuck, 400 seeds each: false alarms (a healthy run called anything but
//! recovered) and misses (a stuck run called anything but metastable) must
//! each have a 95% Wilson interval whose upper end is at most 1%.
//!
//! Both systems: two workers, exponential work of 20 ms (100 requests per
//! second), clients that time out after 500 ms and try four times 100 ms
//! apart, a baseline of about 50 requests per second. The trigger makes
//! work eight times slower for 10 s. The healthy system has a queue of 20
//! (a wait of at most 0.2 s, under the timeout: refusals are fast, and
//! nothing is left to retry once the trigger ends). The stuck one has a
//! queue of 1,000: the trigger fills it past the timeout, every answer
//! comes late, four tries per request are more than the workers can serve,
//! and nothing drains it. 400 seeds make 0 of 400 an upper end of 0.95%.
//! Peaks stay at or under 70% of capacity: at 80% the stuck system (a queue
//! of 1,000 behind a 500 ms timeout) tipped into its storm by itself, with
//! no trigger, in 4 of 400 seeds of the flash sale (judged `overloaded`:
//! the run without the trigger was stuck too) and in 1 of 400 seeds of the
//! daily cycle's baseline (`unhealthy_before_trigger`).
//!
//! `cargo test --release -p stormsim-sim --test integration
//! verdicts_under_load:: -- --nocapture` prints each case's counts.

use crate::common::wilson;
use serde_json::{json, Value};
use std::thread;
use stormsim_model::load_model;
use stormsim_sim::analysis::{EndState, Outcome, Verdict};
use stormsim_sim::run_variant;

const SEEDS: u64 = 400;
const HORIZON_S: f64 = 320.0;
const TRIGGER_S: f64 = 100.0;
const TRIGGER_LEN_S: f64 = 10.0;

/// A load shape, with any timeline entries of its own (no role).
struct Shape {
    name: &'static str,
    arrival: Value,
    entries: Vec<Value>,
}

fn shapes() -> Vec<Shape> {
    let poisson = |rate: f64| json!({"kind": "poisson", "rate_per_s": rate});
    // A trace of per-second rates: a slow swell, a faster wobble and a
    // fixed jitter, between 33 and 67 requests per second.
    let trace: Vec<f64> = (0..HORIZON_S as usize)
        .map(|t| {
            let t = t as f64;
            let jitter = ((t as u64 * 7919) % 11) as f64 - 5.0;
            50.0 + 8.0 * libm::sin(t / 61.0) + 6.0 * libm::sin(t / 7.0) + jitter
        })
        .collect();
    vec![
        Shape {
            // Hold, ramp up to the sale, hold, ramp down; the trigger at
            // the peak.
            name: "flash sale (trigger at the peak)",
            arrival: json!({"kind": "stages", "start_rate_per_s": 50, "stages": [
                {"duration_s": 70, "target_rate_per_s": 50},
                {"duration_s": 20, "target_rate_per_s": 70},
                {"duration_s": 60, "target_rate_per_s": 70},
                {"duration_s": 20, "target_rate_per_s": 50}]}),
            entries: vec![],
        },
        Shape {
            name: "daily cycle (trigger at the trough)",
            arrival: json!({"kind": "sinusoid", "mean_rate_per_s": 60,
                            "amplitude_rate_per_s": 10, "period_s": 400, "phase_s": 200}),
            entries: vec![],
        },
        Shape {
            name: "daily cycle (trigger at the crest)",
            arrival: json!({"kind": "sinusoid", "mean_rate_per_s": 60,
                            "amplitude_rate_per_s": 10, "period_s": 400, "phase_s": 0}),
            entries: vec![],
        },
        Shape {
            name: "a step down just after the trigger",
            arrival: poisson(50.0),
            entries: vec![
                json!({"name": "traffic moves away", "at_s": TRIGGER_S + TRIGGER_LEN_S + 2.0,
                                 "set": {"workloads[users].arrival.rate_per_s": 35}}),
            ],
        },
        Shape {
            // 130 users thinking 2 s: about 65 requests per second when
            // served at once; four tries of 500 ms bring it to 118.
            name: "a closed loop",
            arrival: json!({"kind": "closed_loop", "users": 130,
                            "think": {"kind": "exponential", "mean_ms": 2000}}),
            entries: vec![],
        },
        Shape {
            name: "a trace of per-second rates",
            arrival: json!({"kind": "trace", "rates_per_s": trace}),
            entries: vec![],
        },
    ]
}

/// The model: `shape` on the healthy system (`stuck` false) or the stuck
/// one; `peak` adds a planned peak of that rate (a `set` with no role) from
/// `peak_from_s` to `peak_until_s`.
fn model(shape: &Shape, stuck: bool, extra: &[Value]) -> String {
    let slow =
        |ms: f64| json!({"services[api].steps[0].work": {"kind": "exponential", "mean_ms": ms}});
    let mut timeline = vec![
        json!({"name": "bad deploy", "at_s": TRIGGER_S, "role": "trigger_start", "set": slow(160.0)}),
        json!({"name": "rollback", "at_s": TRIGGER_S + TRIGGER_LEN_S, "role": "trigger_end", "set": slow(20.0)}),
    ];
    timeline.extend(shape.entries.iter().cloned());
    timeline.extend(extra.iter().cloned());
    json!({
        "name": "load",
        "horizon_s": HORIZON_S,
        "workloads": [{"name": "users", "target": "api", "arrival": shape.arrival,
                       "duration_s": HORIZON_S,
                       "timeout_ms": 500,
                       "retry": {"max_attempts": 4, "backoff": {"kind": "fixed", "ms": 100}}}],
        "services": [{"name": "api", "workers": 2,
                      "queue_capacity": if stuck { 1000 } else { 20 },
                      "steps": [{"work": {"kind": "exponential", "mean_ms": 20}}]}],
        "timeline": timeline,
        "metastability": {"baseline_from_s": 10, "hold_s": 20, "max_recovery_s": 60}
    })
    .to_string()
}

fn verdict(text: &str, seed: u64) -> Verdict {
    let model = load_model(text, &[], Some(seed)).unwrap_or_else(|e| panic!("{e:?}"));
    run_variant(&model.variants[0]).verdict.expect("a verdict")
}

/// Every seed's verdict, on two threads.
fn verdicts(text: &str, seeds: u64) -> Vec<Verdict> {
    thread::scope(|s| {
        let parts: Vec<_> = (0..2)
            .map(|part| {
                s.spawn(move || {
                    (1..=seeds)
                        .filter(|seed| seed % 2 == part)
                        .map(|seed| verdict(text, seed))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        parts.into_iter().flat_map(|p| p.join().unwrap()).collect()
    })
}

/// Each shape on one system: the seeds judged other than `expected`, at
/// most 1% by the upper end of their Wilson interval.
fn error_rates(stuck: bool, expected: Outcome) {
    let mut failures = Vec::new();
    for shape in shapes() {
        let all = verdicts(&model(&shape, stuck, &[]), SEEDS);
        let wrong: Vec<&Verdict> = all.iter().filter(|v| v.outcome != expected).collect();
        let (lo, hi) = wilson(wrong.len(), all.len());
        eprintln!(
            "{}, {}: {} of {} not {} (95% Wilson {lo:.4} to {hi:.4})",
            shape.name,
            if stuck { "stuck" } else { "healthy" },
            wrong.len(),
            all.len(),
            expected.as_str()
        );
        if hi > 0.01 {
            let first = wrong
                .first()
                .map(|v| format!("{:?}: {}", v.outcome, v.reason));
            failures.push(format!(
                "{}: {} of {} not {}; first: {first:?}",
                shape.name,
                wrong.len(),
                all.len(),
                expected.as_str(),
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn healthy_systems_under_changing_load_are_judged_recovered() {
    error_rates(false, Outcome::Recovered);
}

#[test]
fn stuck_systems_under_changing_load_are_judged_metastable() {
    error_rates(true, Outcome::Metastable);
}

/// A planned peak beyond capacity (150 requests per second to a system that
/// serves 100) from just after the trigger's end.
fn planned_peak(until_s: f64) -> Vec<Value> {
    let rate = |r: f64| json!({"workloads[users].arrival.rate_per_s": r});
    let mut entries = vec![
        json!({"name": "planned peak", "at_s": TRIGGER_S + TRIGGER_LEN_S + 5.0, "set": rate(150.0)}),
    ];
    if until_s < HORIZON_S {
        entries.push(json!({"name": "peak over", "at_s": until_s, "set": rate(50.0)}));
    }
    entries
}

#[test]
fn a_planned_peak_beyond_capacity_after_the_trigger_is_not_metastable() {
    let shape = &shapes()[3];
    let constant = Shape {
        name: "constant",
        arrival: json!({"kind": "poisson", "rate_per_s": 50}),
        entries: vec![],
    };
    for stuck in [false, true] {
        for seed in 1..=10 {
            // To the horizon: overload to the end.
            let v = verdict(&model(&constant, stuck, &planned_peak(HORIZON_S)), seed);
            assert_eq!(
                v.outcome,
                Outcome::Overloaded,
                "stuck {stuck}, seed {seed}: {}",
                v.reason
            );
            assert_eq!(v.metastable(), None);
            let course = v.course.as_ref().unwrap();
            assert_eq!(course.end_state, Some(EndState::Overloaded));
            assert!(course.overloaded_s > 100.0, "{course:?}");
            assert!(course.spans.iter().any(|s| s.overload), "{course:?}");
        }
    }
    // A peak that ends: the healthy system is back once it is over, the
    // overload not counted against its time to recover.
    for seed in 1..=10 {
        let v = verdict(&model(&constant, false, &planned_peak(200.0)), seed);
        assert_eq!(v.outcome, Outcome::Recovered, "seed {seed}: {}", v.reason);
        let back = v.course.as_ref().unwrap().back_at_s.unwrap();
        assert!(back >= 195.0, "seed {seed}: back at {back}: {}", v.reason);
    }
    let _ = shape;
}

/// The storm's course on a stuck and a healthy run: when it degraded, when
/// it came back, for how long, and the state at the horizon.
#[test]
fn the_course_says_when_the_storm_began_and_ended() {
    let shape = &shapes()[0];
    let stuck = verdict(&model(shape, true, &[]), 1);
    let c = stuck.course.as_ref().unwrap();
    let from = c.degraded_from_s.unwrap();
    assert!(
        (TRIGGER_S - 1.0..=TRIGGER_S + TRIGGER_LEN_S).contains(&from),
        "{c:?}"
    );
    assert_eq!(c.back_at_s, None);
    assert_eq!(c.end_state, Some(EndState::Degraded));
    assert!(c.degraded_s > 150.0, "{c:?}");
    let healthy = verdict(&model(shape, false, &[]), 1);
    let c = healthy.course.as_ref().unwrap();
    let back = c.back_at_s.unwrap();
    assert!(
        (TRIGGER_S + TRIGGER_LEN_S..TRIGGER_S + TRIGGER_LEN_S + 30.0).contains(&back),
        "{c:?}"
    );
    assert_eq!(c.end_state, Some(EndState::Healthy));
    assert!(c.degraded_s < 40.0, "{c:?}");
}

/// A bistable system: one FIFO server at 97% utilisation, clients that time
/// out after 9 s and try four times. A 15 s slowdown of a fifth tips it
/// into its storm or not; a run that comes back may fall into it again,
/// minutes later, with nothing on the timeline: by itself (the run without
/// the trigger stays healthy: a relapse), or as the run without the trigger
/// does too (the system storms at this load untouched: not a relapse).
fn bistable() -> String {
    let work =
        |ms: f64| json!({"services[s].steps[0].work": {"kind": "exponential", "mean_ms": ms}});
    json!({
        "name": "bistable", "horizon_s": 1800,
        "workloads": [{"name": "u", "target": "s", "duration_s": 1800,
                       "arrival": {"kind": "poisson", "rate_per_s": 10}, "timeout_ms": 9000,
                       "retry": {"max_attempts": 4, "backoff": {"kind": "fixed", "ms": 100}}}],
        "services": [{"name": "s", "workers": 1, "queue_capacity": 10000,
                      "steps": [{"work": {"kind": "exponential", "mean_ms": 97}}]}],
        "timeline": [
            {"name": "slow", "at_s": 120, "role": "trigger_start", "set": work(120.0)},
            {"name": "fixed", "at_s": 135, "role": "trigger_end", "set": work(97.0)}],
        "metastability": {"baseline_from_s": 20}
    })
    .to_string()
}

#[test]
fn a_run_that_falls_back_into_its_storm_is_never_recovered() {
    let all = verdicts(&bistable(), 40);
    let mut relapsed = 0;
    let mut untouched_too = 0;
    for (seed, v) in (1..).zip(&all) {
        let c = v.course.as_ref().unwrap();
        if v.outcome == Outcome::Recovered {
            // Recovered means healthy to the end, or degraded only where
            // the same run without the trigger was too.
            assert_ne!(c.end_state, Some(EndState::Degraded), "seed {seed}: {c:?}");
            assert_eq!(c.relapsed_at_s, None, "seed {seed}");
            untouched_too += usize::from(c.end_state == Some(EndState::Overloaded));
        }
        if v.outcome == Outcome::Relapsed {
            relapsed += 1;
            let at = c.relapsed_at_s.unwrap();
            assert!(at > 135.0, "seed {seed}: relapsed at {at}");
            assert_eq!(v.metastable(), Some(true));
            assert!(v.reason.contains("with no new trigger"), "{}", v.reason);
        }
    }
    // Not a vacuous property: measured, 4 of these 40 seeds relapse while
    // the run without the trigger stays healthy, and 22 come back and fall
    // into the storm later as the run without the trigger does too (the
    // system storms by itself at this load: not the trigger's doing).
    assert!(relapsed >= 2, "{relapsed} of {} relapsed", all.len());
    assert!(untouched_too >= 10, "{untouched_too} of {}", all.len());
}
