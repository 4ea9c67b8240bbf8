//! Processor sharing (a service's `cpu`) through the simulator, against
//! hand-computed sequences: with `n` requests working on an instance of
//! `cores`, each progresses at `min(1, cores / n)`.

use crate::common;

use common::{ms, run_recording_attempts, service};

/// One service `s` with the given fields and one work step; workloads as
/// given; timeline entries as given.
fn model(workloads: &str, service_fields: &str, step: &str, timeline: &str) -> String {
    format!(
        r#"{{"name": "m", "workloads": [{workloads}],
        "services": [{{"name": "s" {service_fields}, "steps": [{step}]}}],
        "timeline": [{timeline}]}}"#
    )
}

/// `n` requests at once from workload `w`, with the given extra fields.
fn at_once(n: u32, extra: &str) -> String {
    format!(
        r#"{{"name": "w", "target": "s", "arrival": {{"kind": "at_once"}}, "requests": {n} {extra}}}"#
    )
}

const TEN_MS: &str = r#"{"work": {"kind": "constant", "ms": 10}}"#;

/// Each attempt's (workload request, answer instant ms, outcome), in
/// answer order.
fn answers(text: &str) -> Vec<(u64, f64, String)> {
    let (_, records) = run_recording_attempts(text);
    let mut rows: Vec<(u64, f64, String)> = records
        .iter()
        .map(|r| (r.request, ms(r.finished), r.outcome.as_str().to_string()))
        .collect();
    rows.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    rows
}

fn instants(text: &str) -> Vec<f64> {
    answers(text).iter().map(|r| r.1).collect()
}

/// Three requests of 10 ms at once: on one core each runs at a third and all
/// end at 30 ms; on two, at two thirds, ending at 15 ms; on three or more as
/// if alone. Without a cpu, 10 ms each, as before.
#[test]
fn requests_at_once_share_the_cores() {
    let run = |fields: &str| instants(&model(&at_once(3, ""), fields, TEN_MS, ""));
    assert_eq!(run(r#", "cpu": {"cores": 1}"#), [30.0; 3]);
    assert_eq!(run(r#", "cpu": {"cores": 2}"#), [15.0; 3]);
    assert_eq!(run(r#", "cpu": {"cores": 3}"#), [10.0; 3]);
    assert_eq!(run(""), [10.0; 3]);
}

/// Two requests of 2 ms, 1 ms apart, on one core: the first runs alone for
/// 1 ms, then both at half pace; the first has 1 ms left and ends at 3 ms,
/// when the second has had 1 ms: it ends alone at 4 ms.
#[test]
fn a_later_request_slows_the_one_in_service() {
    let workload = r#"{"name": "w", "target": "s", "arrival": {"kind": "constant", "rate_per_s": 1000}, "requests": 2}"#;
    let text = model(
        workload,
        r#", "cpu": {"cores": 1}"#,
        r#"{"work": {"kind": "constant", "ms": 2}}"#,
        "",
    );
    assert_eq!(
        answers(&text),
        [
            (0, 3.0, "success".to_string()),
            (1, 4.0, "success".to_string())
        ]
    );
}

/// Workers still bound the requests at once: two workers on one core take
/// two of three requests, which end together at 20 ms; the third waits in
/// the queue, then runs alone: 30 ms.
#[test]
fn workers_bound_who_shares_the_cores() {
    let text = model(
        &at_once(3, ""),
        r#", "workers": 2, "cpu": {"cores": 1}"#,
        TEN_MS,
        "",
    );
    assert_eq!(instants(&text), [20.0, 20.0, 30.0]);
}

/// A work step's limit is wall time from the work's start: three requests
/// that would end at 30 ms on one core all fail at a 25 ms statement
/// timeout (the caller sees a failed answer); with a limit of exactly 30 ms they end in time, as unshared work
/// that takes exactly its limit does.
#[test]
fn the_work_limit_is_wall_time() {
    let step = |timeout: u32| {
        format!(r#"{{"work": {{"kind": "constant", "ms": 10}}, "timeout_ms": {timeout}}}"#)
    };
    let text = model(&at_once(3, ""), r#", "cpu": {"cores": 1}"#, &step(25), "");
    let (report, _) = run_recording_attempts(&text);
    assert_eq!(service(&report, "s").work_timeouts, 3);
    assert!(answers(&text).iter().all(|r| r.1 == 25.0 && r.2 == "error"));
    let text = model(&at_once(3, ""), r#", "cpu": {"cores": 1}"#, &step(30), "");
    assert!(answers(&text)
        .iter()
        .all(|r| r.1 == 30.0 && r.2 == "success"));
}

/// Work that stops when its caller leaves frees the cores for the rest: two
/// requests of 10 ms on one core, one caller giving up at 5 ms (each had
/// 2.5 ms): the other does its last 7.5 ms alone, ending at 12.5 ms. Work
/// that finishes anyway keeps sharing: 20 ms.
#[test]
fn a_cancelled_request_leaves_the_cores() {
    let workloads = |on_cancel: &str| {
        let text = model(
            &format!(
                "{}, {}",
                at_once(1, r#", "timeout_ms": 5"#),
                at_once(1, "").replace(r#""name": "w""#, r#""name": "patient""#)
            ),
            r#", "cpu": {"cores": 1}"#,
            &format!(r#"{{"work": {{"kind": "constant", "ms": 10}}, "on_cancel": "{on_cancel}"}}"#),
            "",
        );
        let (report, records) = run_recording_attempts(&text);
        let patient = records
            .iter()
            .find(|r| r.outcome.as_str() == "success")
            .map(|r| ms(r.finished));
        (service(&report, "s").cancelled, patient)
    };
    assert_eq!(workloads("stop"), (1, Some(12.5)));
    assert_eq!(workloads("finish"), (0, Some(20.0)));
}

/// A timeline adding a core halfway: two requests of 10 ms on one core have
/// 5 ms each by 10 ms; on two cores they do the rest at full pace, ending at
/// 15 ms.
#[test]
fn a_timeline_change_of_cores_keeps_the_progress_made() {
    let text = model(
        &at_once(2, ""),
        r#", "cpu": {"cores": 1}"#,
        TEN_MS,
        r#"{"name": "more", "at_s": 0.01, "set": {"services[s].cpu.cores": 2}}"#,
    );
    assert_eq!(instants(&text), [15.0, 15.0]);
}

/// A step that fails half way in shares the cores for half its work: two
/// requests of 10 ms failing at half of it, on one core, fail at 10 ms.
#[test]
fn a_failing_step_shares_its_share_of_the_work() {
    let text = model(
        &at_once(2, ""),
        r#", "cpu": {"cores": 1}"#,
        r#"{"work": {"kind": "constant", "ms": 10}, "error": {"p": 1, "fraction": 0.5}}"#,
        "",
    );
    assert!(answers(&text).iter().all(|r| r.1 == 10.0 && r.2 == "error"));
}

/// `timeseries.csv` tells a `cpu` service's busy cores apart from its busy
/// workers (threads): three requests of 10 ms at once on two cores keep both
/// busy for 15 ms, 30 ms of the cores' time in the first 1 s bucket (0.03
/// cores on average, 1.5% of two), while each holds a thread for 15 ms (0.045
/// threads). A service without a `cpu` in any variant has no such columns;
/// one with a `cpu` in one variant only has them, empty in the other.
#[test]
fn the_time_series_shows_busy_cores_beside_busy_threads() {
    let text = r#"{"name": "m", "horizon_s": 2,
        "workloads": [
            {"name": "w", "target": "s", "arrival": {"kind": "at_once"}, "requests": 3},
            {"name": "v", "target": "t", "arrival": {"kind": "at_once"}, "requests": 1}],
        "services": [
            {"name": "s", "cpu": {"cores": 2}, "steps": [{"work": {"kind": "constant", "ms": 10}}]},
            {"name": "t", "steps": [{"work": {"kind": "constant", "ms": 10}}]}],
        "variants": [
            {"name": "cpu", "set": {}},
            {"name": "no-cpu", "set": {"services[s].cpu": null}}]}"#;
    let model = stormsim_model::load_model(text, &[], None).unwrap_or_else(|e| panic!("{e:?}"));
    let csv = stormsim_sim::run_model(&model).timeseries_csv().unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|c| *c == name);
    assert!(column("s.cores_busy").is_some() && column("s.cpu_utilisation").is_some());
    assert_eq!(column("t.cores_busy"), None);
    assert_eq!(column("t.cpu_utilisation"), None);
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let cell = |row: &[&str], name: &str| row[column(name).unwrap()].to_string();
    let first = |variant: &str| {
        rows.iter()
            .find(|r| r[0] == variant && r[1] == "0")
            .expect("a first bucket")
    };
    let with_cpu = first("cpu");
    assert_eq!(cell(with_cpu, "s.cores_busy"), "0.03");
    assert_eq!(cell(with_cpu, "s.cpu_utilisation"), "0.015");
    assert_eq!(cell(with_cpu, "s.busy"), "0.045");
    let without = first("no-cpu");
    assert_eq!(cell(without, "s.cores_busy"), "");
    assert_eq!(cell(without, "s.cpu_utilisation"), "");
    assert_eq!(cell(without, "s.busy"), "0.03");
}

/// With every instance down, the cores still at work on what the instance
/// held are counted (`cores_busy`), but their share of the cores up is not
/// a number (`cpu_utilisation` empty): three requests of 1.5 s on two cores
/// from 0 s end at 2.25 s, the instance down from 0.5 s on. In the first
/// bucket its 2 cores were up for half of it, and busy for all of it: work
/// outliving its instance is the one way above 1.
#[test]
fn busy_cores_are_counted_while_no_instance_is_up() {
    let text = r#"{"name": "m", "horizon_s": 4,
        "workloads": [{"name": "w", "target": "s", "arrival": {"kind": "at_once"}, "requests": 3}],
        "services": [{"name": "s", "cpu": {"cores": 2},
                      "steps": [{"work": {"kind": "constant", "ms": 1500}}]}],
        "timeline": [{"name": "down", "at_s": 0.5, "set": {"services[s].instances_down": 1}}]}"#;
    let model = stormsim_model::load_model(text, &[], None).unwrap_or_else(|e| panic!("{e:?}"));
    let csv = stormsim_sim::run_model(&model).timeseries_csv().unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = |name: &str| header.iter().position(|c| *c == name).unwrap();
    let cells: Vec<(String, String)> = lines
        .map(|l| {
            let row: Vec<&str> = l.split(',').collect();
            (
                row[at("s.cores_busy")].to_string(),
                row[at("s.cpu_utilisation")].to_string(),
            )
        })
        .collect();
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        cells[..4],
        [
            pair("2", "2"),
            pair("2", ""),
            pair("0.5", ""),
            pair("0", "")
        ]
    );
}
