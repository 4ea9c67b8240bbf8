//! Timeline changes apply at their exact times, ramps move in one-second
//! steps, and a 503's Retry-After overrides the client's own backoff.

use serde_json::{json, Value};
use stormsim_model::load_model;
use stormsim_sim::{run_variant, VariantReport};

fn run(doc: &Value) -> VariantReport {
    let m = load_model(&doc.to_string(), &[], None).expect("valid model");
    run_variant(&m.variants[0])
}

fn steady(timeline: Value) -> Value {
    json!({
        "name": "timeline",
        "workloads": [{"name": "w", "target": "s",
                       "arrival": {"kind": "constant", "rate_per_s": 10}, "duration_s": 30}],
        "services": [{"name": "s", "steps": [{"work": {"kind": "constant", "ms": 5}}]}],
        "timeline": timeline
    })
}

/// Arrivals every 100 ms from 0; the change at exactly 10 s precedes the
/// arrival at 10 s (it was scheduled first), so every request arriving in
/// [10, 11) takes 50 ms and every one before takes 5 ms.
#[test]
fn a_change_applies_at_its_exact_time() {
    let r = run(&steady(json!([{"name": "slow", "at_s": 10,
        "set": {"services[s].steps[0].work": {"kind": "constant", "ms": 50}}}])));
    let mean = |b: usize| r.series.global[b].mean_latency_ms().unwrap();
    assert_eq!(mean(9), 5.0);
    assert_eq!(mean(10), 50.0);
    assert_eq!(mean(29), 50.0);
}

/// A ramp from 10 to 20 requests/s over 10 s from t = 10 s: one step per
/// second, reaching 20/s at 20 s.
#[test]
fn a_ramp_moves_in_one_second_steps() {
    let r = run(&steady(json!([{"name": "ramp", "at_s": 10, "over_s": 10,
        "set": {"workloads[w].arrival.rate_per_s": 20}}])));
    let arrivals = |b: usize| r.series.global[b].requests;
    assert_eq!(arrivals(5), 10);
    assert_eq!(arrivals(25), 20);
    assert!(arrivals(15) > 10 && arrivals(15) < 20, "{}", arrivals(15));
    assert!(
        (11..20).all(|b| arrivals(b) <= arrivals(b + 1) + 1),
        "rates rise"
    );
}

/// A ramp from 10 to 20 requests/s over 10 s from t = 10 s, and work ten
/// times slower from t = 12 s, while the ramp moves. The changes apply in
/// time order: the slow work stays through the ramp's later steps, and the
/// ramp's end is not applied at 12 s. (The timeline's steps were once
/// resolved entry by entry: the change at 12 s carried the ramp's 20/s,
/// and each later step of the ramp put the work back to 5 ms.)
#[test]
fn an_entry_that_starts_during_a_ramp_is_not_undone_by_its_later_steps() {
    let doc = steady(json!([
        {"name": "ramp", "at_s": 10, "over_s": 10,
         "set": {"workloads[w].arrival.rate_per_s": 20}},
        {"name": "slow", "at_s": 12,
         "set": {"services[s].steps[0].work": {"kind": "constant", "ms": 50}}}]));
    let m = load_model(&doc.to_string(), &[], None).expect("valid model");
    let times: Vec<_> = m.variants[0].changes.iter().map(|c| c.at).collect();
    assert!(times.is_sorted(), "changes in time order: {times:?}");
    let r = run_variant(&m.variants[0]);
    let mean = |b: usize| r.series.global[b].mean_latency_ms().unwrap();
    let arrivals = |b: usize| r.series.global[b].requests;
    assert_eq!(
        (mean(11), mean(12), mean(15), mean(25)),
        (5.0, 50.0, 50.0, 50.0)
    );
    assert!(
        arrivals(12) < 15,
        "the ramp at 12 s is at 12/s: {}",
        arrivals(12)
    );
    assert_eq!(arrivals(25), 20);
}

/// One worker, no queue; two requests at once: the second is refused. With a
/// Retry-After of 300 ms it retries after 300 ms, when the first (100 ms) is
/// done, and succeeds; with only its own 10 ms backoff it is refused again.
#[test]
fn a_503_retry_after_overrides_the_backoff() {
    let doc = |retry_after: Value| {
        json!({
            "name": "retry-after",
            "workloads": [{"name": "w", "target": "s", "arrival": {"kind": "at_once"},
                           "requests": 2,
                           "retry": {"max_attempts": 2,
                                     "backoff": {"kind": "fixed", "ms": 10}}}],
            "services": [{"name": "s", "workers": 1, "queue_capacity": 0,
                          "admission": {"retry_after_ms": retry_after},
                          "steps": [{"work": {"kind": "constant", "ms": 100}}]}]
        })
    };
    let obeyed = run(&doc(json!(300)));
    assert_eq!(obeyed.succeeded, 2);
    assert_eq!(obeyed.latency_ms.unwrap().max, 400.0);
    let own_backoff = run(&doc(Value::Null));
    assert_eq!(own_backoff.succeeded, 1);
    assert_eq!(own_backoff.failed_by_reason.rejected, 1);
}

/// Turning hedging off halfway: calls already hedging settle their copies by
/// the policy they started with (this panicked: the settling read the edge's
/// current policy, which had none), and no hedge is sent after the change.
#[test]
fn a_timeline_can_turn_hedging_off_while_calls_hedge() {
    let model = |timeline: Value| {
        json!({
            "name": "hedging-off",
            "workloads": [{"name": "u", "target": "front", "duration_s": 10,
                           "arrival": {"kind": "poisson", "rate_per_s": 500}}],
            "services": [
                {"name": "front", "steps": [{"call": "leaf", "timeout_ms": 300,
                    "idempotent": true, "hedge": {"delay_ms": 5, "tied": true}}]},
                {"name": "leaf", "instances": 3, "workers": 8,
                 "steps": [{"work": {"kind": "exponential", "mean_ms": 12}}]}
            ],
            "timeline": timeline
        })
    };
    let always = run(&model(json!([])));
    let off = run(&model(json!([{"name": "hedging off", "at_s": 5,
        "set": {"services[front].steps[0].hedge": null}}])));
    let hedges = |v: &VariantReport| v.services.iter().find(|s| s.name == "leaf").unwrap().hedges;
    assert!(hedges(&always) > 1_000, "{}", hedges(&always));
    // The first 5 s are the same run (common random numbers), so about half
    // of the hedges (plus those already due at the change); then none. With
    // over 1,000 hedges a half, Poisson noise is under 2% of the total: 60%
    // separates "half" from "hedging went on" by far more than that.
    assert!(
        hedges(&off) > 0 && hedges(&off) < hedges(&always) * 6 / 10,
        "{} of {}",
        hedges(&off),
        hedges(&always)
    );
    assert_eq!(off.requests, always.requests);
}

/// A service saturated from the start (one request each 10 ms, 100 ms of
/// work each), given 4 workers instead of 1, and 4 cores instead of 1,
/// half-way through its first 1 s bucket. The bucket had 2.5 worker-seconds
/// up, all busy: its utilisation is 1, where dividing by the workers at the
/// bucket's start made it 2.5; and so for the cores.
#[test]
fn utilisation_is_at_most_one_when_workers_are_added_inside_a_bucket() {
    let doc = json!({
        "name": "scale-up",
        "workloads": [{"name": "w", "target": "s",
                       "arrival": {"kind": "constant", "rate_per_s": 100}, "duration_s": 3}],
        "services": [{"name": "s", "workers": 1, "cpu": {"cores": 1},
                      "steps": [{"work": {"kind": "constant", "ms": 100}}]}],
        "timeline": [{"name": "scale up", "at_s": 0.5,
                      "set": {"services[s].workers": 4, "services[s].cpu.cores": 4}}]
    });
    let (report, csv) = run_with_timeseries(&doc);
    let (header, rows) = cells(&csv);
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (workers, cores) = (column("s.utilisation"), column("s.cpu_utilisation"));
    assert_eq!(rows[0][workers], "1", "{csv}");
    assert_eq!(rows[0][cores], "1", "{csv}");
    for row in &rows[1..] {
        for at in [workers, cores] {
            let share: f64 = row[at].parse().unwrap();
            assert!(share <= 1.0, "{} above 1: {row:?}", header[at]);
        }
    }
    // Over the run: 300 requests of 0.1 s are 30 worker-seconds busy; 5
    // end by 0.5 s, the other 295 take 74 rounds of the 4 workers (the last
    // of 3), to 7.9 s: 0.5 + 4 × 7.4 = 30.1 worker-seconds up.
    let s = &report.variants[0].services[0];
    assert_eq!(s.utilisation, Some((30.0f64 / 30.1 * 1e6).round() / 1e6));
    assert_eq!(s.peak_utilisation, Some(1.0));
}

/// A service kept saturated (one worker and one core, a request each 10 ms
/// of 100 ms of work) by a run whose horizon, 2.5 s, cuts its last 1 s
/// bucket in half: every bucket has its worker and its core busy throughout,
/// the last one too, where dividing by the bucket's whole width read it as
/// idle half the time (0.5).
#[test]
fn busy_in_the_last_bucket_is_a_mean_over_the_part_the_run_lasted() {
    let doc = json!({
        "name": "cut-short",
        "horizon_s": 2.5,
        "workloads": [{"name": "w", "target": "s", "duration_s": 2.5,
                       "arrival": {"kind": "constant", "rate_per_s": 100}}],
        "services": [{"name": "s", "workers": 1, "cpu": {"cores": 1},
                      "steps": [{"work": {"kind": "constant", "ms": 100}}]}]
    });
    let (_, csv) = run_with_timeseries(&doc);
    let (header, rows) = cells(&csv);
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (t, busy, cores) = (column("t_s"), column("s.busy"), column("s.cores_busy"));
    let starts: Vec<&str> = rows.iter().map(|r| r[t]).collect();
    assert_eq!(starts, ["0", "1", "2"], "{csv}");
    for row in &rows {
        assert_eq!((row[busy], row[cores]), ("1", "1"), "{csv}");
    }
}

/// A run that drains on the instant a bucket starts (three requests a second
/// apart, each 1 s of work, the last done at exactly 3 s) has a last bucket
/// of no width: it counts what ended at that instant, and its busy means are
/// empty, as a mean over no time is none. (They read 0, busy workers and
/// cores of a service that never idled.)
#[test]
fn a_last_bucket_of_no_width_has_no_busy_mean() {
    let doc = json!({
        "name": "ends-on-a-boundary",
        "workloads": [{"name": "w", "target": "s", "requests": 3,
                       "arrival": {"kind": "constant", "rate_per_s": 1}}],
        "services": [{"name": "s", "workers": 4, "cpu": {"cores": 4},
                      "steps": [{"work": {"kind": "constant", "ms": 1000}}]}]
    });
    let (_, csv) = run_with_timeseries(&doc);
    let (header, rows) = cells(&csv);
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (t, succeeded) = (column("t_s"), column("succeeded"));
    let (busy, cores) = (column("s.busy"), column("s.cores_busy"));
    let table: Vec<_> = rows
        .iter()
        .map(|r| (r[t], r[succeeded], r[busy], r[cores]))
        .collect();
    assert_eq!(
        table,
        [
            ("0", "0", "1", "1"),
            ("1", "1", "1", "1"),
            ("2", "1", "1", "1"),
            ("3", "1", "", "")
        ],
        "{csv}"
    );
}

/// The report of a run of `doc`, and its timeseries.csv.
fn run_with_timeseries(doc: &serde_json::Value) -> (stormsim_sim::RunReport, String) {
    let model = load_model(&doc.to_string(), &[], None).expect("valid model");
    let report = stormsim_sim::run_model(&model);
    let csv = report.timeseries_csv().unwrap();
    (report, csv)
}

/// A CSV table's header and rows, as cells.
fn cells(csv: &str) -> (Vec<&str>, Vec<Vec<&str>>) {
    let mut lines = csv.lines().map(|line| line.split(',').collect::<Vec<_>>());
    let header = lines.next().expect("a header");
    (header, lines.collect())
}

/// A scale-up gives the waiting requests workers at once; each one's wait
/// ends there as it would when a worker frees up: counted as started, its
/// wait measured, its service time the work alone. Before the fix they
/// started uncounted and their waits went into their service times.
#[test]
fn regression_scale_up_counts_the_starts_and_waits_it_causes() {
    let doc = json!({
        "name": "scale-up",
        "horizon_s": 20,
        "workloads": [{"name": "w", "target": "s",
                       "arrival": {"kind": "constant", "rate_per_s": 10}, "duration_s": 10}],
        "services": [{"name": "s", "workers": 1, "queue_capacity": 1000,
                      "steps": [{"work": {"kind": "constant", "ms": 400}}]}],
        "timeline": [{"name": "scale-up", "at_s": 5, "set": {"services[s].workers": 100}}]
    });
    let r = run(&doc);
    let s = &r.series;
    let total = |f: &dyn Fn(&stormsim_sim::timeseries::ServiceBucket) -> u128| -> u128 {
        (0..s.len()).map(|b| f(s.service(b, 0))).sum()
    };
    // 100 requests, every one admitted and served within the horizon.
    assert_eq!(total(&|x| u128::from(x.completed)), 100);
    assert_eq!(total(&|x| u128::from(x.started)), 100);
    // Each handler's service time is its 400 ms of work, wait excluded
    // (the wait is cut to whole µs, the rest of it stays: < 1 µs each).
    let service_ns = total(&|x| x.service_ns);
    assert!(
        (40_000_000_000..40_000_100_000).contains(&service_ns),
        "{service_ns}"
    );
    // Before 5 s one worker starts 13 (at 0, 0.4, ..., 4.8 s); the 37
    // that arrived by then and wait start at 5 s.
    let wait_ns = total(&|x| x.wait_ns);
    let waited_until_5s: u128 = (0..50u128)
        .map(|i| {
            let arrived = i * 100_000_000;
            let start = if i < 13 {
                (i * 400_000_000).max(arrived)
            } else {
                5_000_000_000.max(arrived)
            };
            start - arrived
        })
        .sum();
    assert_eq!(wait_ns, waited_until_5s);
}
