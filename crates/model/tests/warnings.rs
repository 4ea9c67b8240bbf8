//! `check`'s warnings (values that are valid but almost certainly not
//! meant): each fires on its case, at its path with its message, and not on
//! a near miss; none fires on the bundled models but the ones listed.

mod common;

use common::{base, with};
use serde_json::{json, Value};
use std::path::Path;
use stormsim_model::{load_model, warnings, Warning, WARNINGS};

/// The warnings of `doc`, which must load.
fn warnings_of(doc: &Value) -> Vec<Warning> {
    let loaded = load_model(&doc.to_string(), &[], None)
        .unwrap_or_else(|e| panic!("the model loads: {e}\n{doc:#}"));
    warnings(&loaded)
}

/// Asserts `doc` has exactly one warning, `name` at `path` saying `message`.
fn warns(doc: &Value, name: &str, path: &str, message: &str) {
    let ws = warnings_of(doc);
    assert_eq!(
        ws,
        [Warning {
            name: WARNINGS
                .iter()
                .map(|(n, _)| *n)
                .find(|n| *n == name)
                .unwrap(),
            path: path.to_string(),
            message: message.to_string(),
        }],
        "{doc:#}"
    );
}

fn quiet(doc: &Value) {
    let ws = warnings_of(doc);
    assert!(ws.is_empty(), "expected no warning, got {ws:#?}\n{doc:#}");
}

const ENVOY_PATH: &str = "services[gateway].steps[0].retry.budget.budget_percent";

fn with_envoy(percent: f64) -> Value {
    with(
        base(),
        "services[gateway].steps[0].retry",
        json!({"max_attempts": 3, "budget": {"kind": "envoy", "budget_percent": percent}}),
    )
}

#[test]
fn envoy_budget_percent_below_one_warns() {
    warns(
        &with_envoy(0.2),
        "envoy-budget-percent",
        ENVOY_PATH,
        "0.2 is 0.2% of active requests: Envoy's budget_percent is a percent, not a fraction (for 20%, write 20)",
    );
    // A percent as meant, 1% itself, and 0 (the same in either unit): quiet.
    quiet(&with_envoy(20.0));
    quiet(&with_envoy(1.0));
    quiet(&with_envoy(0.0));
}

#[test]
fn envoy_budget_percent_set_by_a_timeline_entry_or_a_variant_warns_there() {
    let mut doc = with_envoy(20.0);
    doc["timeline"] = json!([{"name": "config push", "at_s": 0.5,
        "set": {"services[gateway].steps[0].retry.budget.budget_percent": 0.5}}]);
    warns(
        &doc,
        "envoy-budget-percent",
        ENVOY_PATH,
        "0.5 is 0.5% of active requests: Envoy's budget_percent is a percent, not a fraction (for 50%, write 50) (from timeline entry \"config push\" on)",
    );
    // A ramp down to 0 passes below 1 on its way: only where it ends counts.
    doc["timeline"] = json!([{"name": "wind down", "at_s": 0.5, "over_s": 100,
        "set": {"services[gateway].steps[0].retry.budget.budget_percent": 0}}]);
    quiet(&doc);

    let mut doc = with_envoy(20.0);
    doc["variants"] = json!([
        {"name": "as meant"},
        {"name": "typo", "set": {"services[gateway].steps[0].retry.budget.budget_percent": 0.2}}
    ]);
    warns(
        &doc,
        "envoy-budget-percent",
        ENVOY_PATH,
        "0.2 is 0.2% of active requests: Envoy's budget_percent is a percent, not a fraction (for 20%, write 20) (variants: typo)",
    );
}

fn with_network(one_way: Value) -> Value {
    with(base(), "network", json!({ "one_way": one_way }))
}

#[test]
fn a_timeout_below_the_shortest_round_trip_warns() {
    let doc = with_network(json!({"kind": "constant", "ms": 5}));
    let doc = with(doc, "services[gateway].steps[0].timeout_ms", json!(8));
    warns(
        &doc,
        "timeout-below-round-trip",
        "services[gateway].steps[0].timeout_ms",
        "this timeout, 8 ms, is shorter than the shortest network round trip, 10 ms (twice the least `network.one_way` can draw): no attempt is answered in time",
    );
    // Exactly the round trip, a network whose draws can be short (a
    // log-normal: its least is 0), or a uniform one with a shorter least
    // draw: some attempts can be answered in time.
    quiet(&with(
        doc.clone(),
        "services[gateway].steps[0].timeout_ms",
        json!(10),
    ));
    quiet(&with(
        doc.clone(),
        "network.one_way",
        json!({"kind": "lognormal", "median_ms": 5, "p99_ms": 20}),
    ));
    quiet(&with(
        doc.clone(),
        "network.one_way",
        json!({"kind": "uniform", "min_ms": 3, "max_ms": 10}),
    ));
    // A timeline change that slows the network (a trigger) is meant.
    let mut slowed = with_network(json!({"kind": "constant", "ms": 1}));
    slowed = with(slowed, "services[gateway].steps[0].timeout_ms", json!(8));
    slowed["timeline"] = json!([{"name": "network degrades", "at_s": 0.5,
        "set": {"network.one_way": {"kind": "constant", "ms": 5}}}]);
    quiet(&slowed);
}

#[test]
fn a_workloads_timeout_and_deadline_below_the_round_trip_warn() {
    let doc = with_network(json!({"kind": "uniform", "min_ms": 2, "max_ms": 4}));
    let doc = with(doc, "workloads[users].deadline_ms", json!(3));
    warns(
        &doc,
        "timeout-below-round-trip",
        "workloads[users].deadline_ms",
        "this deadline, 3 ms, is shorter than the shortest network round trip, 4 ms (twice the least `network.one_way` can draw): no request is answered in time",
    );
    let doc = with(doc, "workloads[users].deadline_ms", json!(4));
    quiet(&doc);
    let doc = with(doc, "workloads[users].timeout_ms", json!(3.5));
    warns(
        &doc,
        "timeout-below-round-trip",
        "workloads[users].timeout_ms",
        "this timeout, 3.5 ms, is shorter than the shortest network round trip, 4 ms (twice the least `network.one_way` can draw): no attempt is answered in time",
    );
}

fn with_trigger(doc: Value) -> Value {
    let mut doc = doc;
    doc["timeline"] = json!([
        {"name": "B slows", "at_s": 0.2, "role": "trigger_start",
         "set": {"services[B].steps[0].work": {"kind": "constant", "ms": 50}}},
        {"name": "B heals", "at_s": 0.5, "role": "trigger_end",
         "set": {"services[B].steps[0].work": {"kind": "constant", "ms": 5}}}
    ]);
    doc
}

#[test]
fn a_trigger_window_without_a_metastability_block_warns() {
    let doc = with_trigger(base());
    let ws = warnings_of(&doc);
    let seen: Vec<(&str, &str, &str)> = ws
        .iter()
        .map(|w| (w.name, w.path.as_str(), w.message.as_str()))
        .collect();
    assert_eq!(
        seen,
        [(
            "trigger-without-metastability",
            "timeline[B slows].role",
            "the timeline has a trigger window (\"B slows\" to \"B heals\") and the model has no `metastability` block: no recovery verdict will come (add `\"metastability\": {\"baseline_from_s\": ...}` for one)"
        )]
    );
    // A single role (a trigger that never ends) only marks the charts.
    let mut start_only = doc.clone();
    start_only["timeline"][1]
        .as_object_mut()
        .unwrap()
        .remove("role");
    quiet(&start_only);
    // With the block, the verdict comes; without roles, nothing is asked.
    let mut with_block = doc.clone();
    with_block["metastability"] = json!({});
    quiet(&with_block);
    let mut no_roles = doc;
    for entry in no_roles["timeline"].as_array_mut().unwrap() {
        entry.as_object_mut().unwrap().remove("role");
    }
    quiet(&no_roles);
}

const NEVER_BINDS: &str = "it can refuse only bursts";

fn rate_limit_message(limit: &str, reach: &str, phases: &str) -> String {
    format!(
        "this rate limit's sustained rate, {limit}/s, is above the most that can reach it{phases}, {reach}/s (the open workloads' arrival rates times every edge's most attempts per call on the way: retries, hedges, fan-outs): {NEVER_BINDS}"
    )
}

/// 10 requests/s (Poisson) to the gateway, which calls B with up to 3
/// attempts: at most 30 attempts/s reach B.
fn with_retries() -> Value {
    with(
        base(),
        "services[gateway].steps[0].retry",
        json!({"max_attempts": 3}),
    )
}

#[test]
fn a_client_rate_limit_above_what_can_reach_it_warns() {
    let limit = |rate: f64| {
        with(
            with_retries(),
            "services[gateway].steps[0].rate_limit",
            json!({"kind": "token_bucket", "rate_per_s": rate, "burst": 5}),
        )
    };
    warns(
        &limit(50.0),
        "rate-limit-never-binds",
        "services[gateway].steps[0].rate_limit",
        &rate_limit_message("50", "30", ""),
    );
    // At or below the most that can come (retries included): it may bind.
    quiet(&limit(30.0));
    quiet(&limit(25.0));
    // A timeline surge can bring more than it lets through.
    let mut surge = limit(50.0);
    surge["timeline"] = json!([{"name": "surge", "at_s": 0.5,
        "set": {"workloads[users].arrival.rate_per_s": 20}}]);
    quiet(&surge);
    // A closed loop has no fixed rate: nothing is said.
    let closed = with(
        limit(50.0),
        "workloads[users].arrival",
        json!({"kind": "closed_loop", "users": 2, "think": {"kind": "constant", "ms": 10}}),
    );
    quiet(&closed);
    // A workload's own limiter, by window, sees its arrivals.
    let windowed = with(
        base(),
        "workloads[users].rate_limit",
        json!({"kind": "fixed_window", "limit": 100, "window_ms": 1000}),
    );
    warns(
        &windowed,
        "rate-limit-never-binds",
        "workloads[users].rate_limit",
        &rate_limit_message("100", "10", ""),
    );
    quiet(&with(
        windowed,
        "workloads[users].rate_limit.limit",
        json!(10),
    ));
}

#[test]
fn a_server_rate_limit_above_what_can_reach_it_warns() {
    let limit = |rate: u32| {
        with(
            with_retries(),
            "services[B].admission",
            json!({"rate_limit": {"kind": "sliding_window", "limit": rate, "window_ms": 100}}),
        )
    };
    // 4 per 100 ms: 40/s, above the 30 attempts/s that can come.
    warns(
        &limit(4),
        "rate-limit-never-binds",
        "services[B].admission.rate_limit",
        &rate_limit_message("40", "30", ""),
    );
    quiet(&limit(3));
    // A fan-out over 4 shards sends each call to every shard: 120/s.
    let fan_out = with(limit(4), "services[B].instances", json!(4));
    let fan_out = with(fan_out, "services[B].shards", json!(4));
    let fan_out = with(fan_out, "services[gateway].steps[0].fan_out", json!({}));
    quiet(&fan_out);
    // Where the timeline changes something, every model of the run counts.
    let mut later = limit(4);
    later["timeline"] = json!([{"name": "more workers", "at_s": 0.5,
        "set": {"services[B].workers": 8}}]);
    warns(
        &later,
        "rate-limit-never-binds",
        "services[B].admission.rate_limit",
        &rate_limit_message("40", "30", " in every model of the run"),
    );
}

fn with_horizon(doc: Value, horizon_s: f64, timeline: Value) -> Value {
    let mut doc = doc;
    doc["horizon_s"] = json!(horizon_s);
    doc["timeline"] = timeline;
    doc
}

#[test]
fn a_timeline_change_at_or_after_the_horizon_warns() {
    let change = |at_s: f64| {
        json!([{"name": "late fix", "at_s": at_s,
                "set": {"services[B].workers": 4}}])
    };
    warns(
        &with_horizon(base(), 10.0, change(10.0)),
        "horizon-before-timeline",
        "timeline[late fix].at_s",
        "this change comes at 10 s, at or after horizon_s 10: the run stops first, and it never applies",
    );
    quiet(&with_horizon(base(), 10.0, change(9.5)));
    quiet(&with(base(), "timeline", change(100.0)));
    // A ramp cut short by the horizon never reaches its target.
    let ramp = json!([{"name": "ramp up", "at_s": 8, "over_s": 4,
                       "set": {"workloads[users].arrival.rate_per_s": 20}}]);
    warns(
        &with_horizon(base(), 10.0, ramp.clone()),
        "horizon-before-timeline",
        "timeline[ramp up].over_s",
        "this ramp's last step comes at 12 s, at or after horizon_s 10: the run stops before it reaches its target",
    );
    quiet(&with_horizon(base(), 12.5, ramp));
}

#[test]
fn a_hedge_that_never_fires_warns_with_its_name() {
    let doc = with(
        base(),
        "services[gateway].steps[0].hedge",
        json!({"delay_ms": 5, "target": "any_other"}),
    );
    let doc = with(doc, "services[gateway].steps[0].idempotent", json!(true));
    warns(
        &doc,
        "hedge-never-fires",
        "services[gateway].steps[0].hedge",
        "this hedge never fires: a hedge goes to another replica than its try's, and \"B\" has one instance",
    );
    quiet(&with(doc, "services[B].instances", json!(2)));
}

/// Every warning line names its warning: `warning[NAME]: PATH: MESSAGE`.
#[test]
fn a_warning_prints_its_name_path_and_message() {
    let ws = warnings_of(&with_envoy(0.2));
    assert_eq!(
        ws[0].to_string(),
        format!(
            "warning[envoy-budget-percent]: {ENVOY_PATH}: {}",
            ws[0].message
        )
    );
}

/// The bundled models (not the sweeps) get no warning.
#[test]
fn the_bundled_models_get_no_warning() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let known: [(&str, &str, &str); 0] = [];
    let mut seen = Vec::new();
    let mut files = 0;
    for dir in ["models", "models/validation"] {
        let mut paths: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy();
                name.ends_with(".json") && !name.ends_with(".sweep.json")
            })
            .collect();
        paths.sort();
        for path in paths {
            files += 1;
            let text = std::fs::read_to_string(&path).unwrap();
            let loaded =
                load_model(&text, &[], None).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let file = path.file_name().unwrap().to_string_lossy().into_owned();
            for w in warnings(&loaded) {
                seen.push((file.clone(), w.name, w.path));
            }
        }
    }
    assert!(files >= 25, "found {files} bundled models");
    let seen: Vec<(&str, &str, &str)> = seen
        .iter()
        .map(|(f, n, p)| (f.as_str(), *n, p.as_str()))
        .collect();
    assert_eq!(seen, known);
}

/// Every name is short, stable-looking and listed once.
#[test]
fn warning_names_are_kebab_case_and_unique() {
    for (i, (name, what)) in WARNINGS.iter().enumerate() {
        assert!(
            name.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
            "{name}"
        );
        assert!(!what.is_empty());
        assert!(WARNINGS[..i].iter().all(|(n, _)| n != name), "{name}");
    }
}

/// Found by the fuzzer of valid models: 50 attempts from 8 ms growing by
/// 1.758 wait 4.7 * 10^9 s before the last, and the run, with no horizon,
/// filled ten million rows of time series before it stopped.
#[test]
fn an_uncapped_backoff_waiting_over_a_day_without_a_horizon_warns() {
    let retry = |max_attempts: u32, cap_ms: Option<f64>| {
        let mut backoff = json!({"kind": "exponential", "base_ms": 1000, "multiplier": 2});
        if let Some(cap) = cap_ms {
            backoff["cap_ms"] = json!(cap);
        }
        json!({"max_attempts": max_attempts, "backoff": backoff})
    };
    // 1 s doubling: before retry 17 (attempt 18) the wait is 2^16 s =
    // 65,536 s (quiet), before retry 18, 2^17 s = 131,072 s, over a day.
    let path = "services[gateway].steps[0].retry";
    warns(
        &with(base(), path, retry(19, None)),
        "uncapped-backoff-without-horizon",
        "services[gateway].steps[0].retry.backoff",
        "with no cap_ms, the wait before retry 18 is 131072 s, and with no horizon_s one request that keeps failing holds the run open that long, its time series growing until limits.max_series_rows stops it; set cap_ms or horizon_s",
    );
    quiet(&with(base(), path, retry(18, None)));
    // A cap, or a horizon: quiet.
    quiet(&with(base(), path, retry(40, Some(30_000.0))));
    let mut bounded = with(base(), path, retry(40, None));
    bounded["horizon_s"] = json!(60);
    quiet(&bounded);
    // Nothing retried: quiet.
    let mut never = retry(40, None);
    never["retry_on"] = json!([]);
    quiet(&with(base(), path, never));
}

/// A model of 250 bytes (Poisson arrivals at 0.5/s for 10^15 s, no horizon)
/// passed `check` silently, then ran for two minutes and 2.2 GB until its
/// ten million rows of time series stopped it, a partial report.
#[test]
fn a_workload_meant_to_arrive_for_ever_without_a_horizon_warns() {
    let doc = json!({"name": "longrun",
        "workloads": [{"name": "u", "target": "api", "arrival": {"kind": "poisson", "rate_per_s": 0.5},
                       "duration_s": 1e15}],
        "services": [{"name": "api", "workers": 1, "steps": [{"work": {"kind": "constant", "ms": 1}}]}]});
    warns(
        &doc,
        "arrivals-outlast-series-limit",
        "workloads[u].duration_s",
        "with no horizon_s the run lasts as long as this workload arrives, longer than its time series may grow: at 3 rows a bucket of 1 s it reaches limits.max_series_rows (10000000) at 3333333 s of simulated time, where the run stops, partial; set horizon_s or a shorter duration_s",
    );
    let mut bounded = doc.clone();
    bounded["horizon_s"] = json!(3600);
    quiet(&bounded);
}

/// The arrivals' sure length against the limit: `base()` keeps 4 rows a
/// bucket (the system, two services, one workload), so 400 rows stop a run
/// at 100 s; Poisson arrivals at 10/s surely last their duration less 20
/// mean gaps (2 s).
#[test]
fn arrivals_outlasting_the_series_limit_warn_only_when_surely() {
    let open = |arrival: Value, duration_s: Option<f64>, requests: Option<u64>| {
        let mut doc = base();
        doc["limits"] = json!({"max_series_rows": 400});
        let w = &mut doc["workloads"][0];
        w["arrival"] = arrival;
        w.as_object_mut().unwrap().remove("requests");
        if let Some(d) = duration_s {
            w["duration_s"] = json!(d);
        }
        if let Some(n) = requests {
            w["requests"] = json!(n);
        }
        doc
    };
    let poisson = json!({"kind": "poisson", "rate_per_s": 10});
    let constant = json!({"kind": "constant", "rate_per_s": 10});
    let message = "with no horizon_s the run lasts as long as this workload arrives, longer than its time series may grow: at 4 rows a bucket of 1 s it reaches limits.max_series_rows (400) at 100 s of simulated time, where the run stops, partial; set horizon_s or a shorter duration_s";
    let fires = |doc: &Value| {
        warns(
            doc,
            "arrivals-outlast-series-limit",
            "workloads[users].duration_s",
            message,
        )
    };
    fires(&open(poisson.clone(), Some(102.5), None));
    quiet(&open(poisson.clone(), Some(101.5), None));
    // A count ends Poisson arrivals at a random time: quiet.
    quiet(&open(poisson.clone(), Some(1e6), Some(1_000_000)));
    // Constant arrivals end exactly: 1,001 at 10/s take 100.1 s.
    fires(&open(constant.clone(), None, Some(1_001)));
    quiet(&open(constant.clone(), None, Some(1_000)));
    quiet(&open(constant.clone(), Some(99.0), Some(1_001)));
    // Wider buckets, a horizon (which `check` holds to the limit itself):
    // quiet.
    let mut wide = open(poisson.clone(), Some(102.5), None);
    wide["timeseries"] = json!({"bucket_s": 2});
    quiet(&wide);
    let mut bounded = open(poisson.clone(), Some(1e6), None);
    bounded["horizon_s"] = json!(50);
    quiet(&bounded);
    // A timeline entry that ends the arrivals sooner: quiet.
    let mut shortened = open(poisson, Some(1e6), None);
    shortened["timeline"] =
        json!([{"name": "stop", "at_s": 10, "set": {"workloads[users].duration_s": 50}}]);
    quiet(&shortened);
}

/// A valid model with Poisson arrivals at 4.29·10^9/s passed `check` and
/// ran for minutes until `limits.max_events` stopped it, partial. Each
/// arrival is an event: the warning fires where the arrivals surely
/// outnumber the limit (1,000 here), and not on a near miss. Poisson counts
/// are taken ten standard deviations below their mean: 1,400 expected
/// (10/s for 140 s) surely bring 1,025; 1,300 only 939. A load shape's too.
#[test]
fn arrivals_outnumbering_max_events_warn_only_when_surely() {
    let open = |arrival: Value, duration_s: f64, requests: Option<u64>| {
        let mut doc = base();
        doc["limits"] = json!({"max_events": 1000});
        let w = &mut doc["workloads"][0];
        w["arrival"] = arrival;
        w["duration_s"] = json!(duration_s);
        match requests {
            Some(n) => w["requests"] = json!(n),
            None => {
                w.as_object_mut().unwrap().remove("requests");
            }
        }
        doc
    };
    let poisson = json!({"kind": "poisson", "rate_per_s": 10});
    let constant = json!({"kind": "constant", "rate_per_s": 10});
    let fires = |doc: &Value, surely: &str| {
        warns(
            doc,
            "arrivals-outnumber-max-events",
            "limits.max_events",
            &format!("the workloads surely bring at least {surely} requests before the run ends, each an event at least, more than limits.max_events (1,000) allows: the run stops there (if another limit does not stop it first), partial; raise limits.max_events, or lower the rates or the run's length"),
        )
    };
    fires(&open(poisson.clone(), 140.0, None), "1,025");
    quiet(&open(poisson.clone(), 130.0, None));
    // Constant gaps: 1,001 fit in 100.1 s, 1,000 in 100 s.
    fires(&open(constant.clone(), 100.1, None), "1,001");
    quiet(&open(constant.clone(), 100.0, None));
    // A count, a horizon, a timeline entry that slows the arrivals: each
    // bounds them.
    quiet(&open(constant.clone(), 1e6, Some(1000)));
    fires(&open(constant.clone(), 1e6, Some(1001)), "1,001");
    let mut bounded = open(constant.clone(), 1e6, None);
    bounded["horizon_s"] = json!(100);
    quiet(&bounded);
    let mut slowed = open(constant.clone(), 200.0, None);
    slowed["timeline"] = json!([{"name": "calm", "at_s": 50,
                                 "set": {"workloads[users].arrival.rate_per_s": 5}}]);
    quiet(&slowed);
    // Two workloads add up: 600 each.
    let mut two = open(constant.clone(), 60.0, None);
    let mut other = two["workloads"][0].clone();
    other["name"] = json!("more");
    two["workloads"].as_array_mut().unwrap().push(other);
    fires(&two, "1,200");
    // A shape's arrivals are a Poisson count with its integral for mean:
    // 1,800 up to 140 s (a ramp to 20/s over 100 s, then holding) surely
    // bring 1,375; 1,000 by 100 s only 683. A trace of 10/s for 140 s is
    // the Poisson case's 1,400.
    let ramp = json!({"kind": "stages", "start_rate_per_s": 0,
                      "stages": [{"duration_s": 100, "target_rate_per_s": 20}]});
    fires(&open(ramp.clone(), 140.0, None), "1,375");
    quiet(&open(ramp, 100.0, None));
    let trace = |buckets: usize| json!({"kind": "trace", "rates_per_s": vec![10; buckets]});
    fires(&open(trace(140), 1e6, None), "1,025");
    quiet(&open(trace(130), 1e6, None));
    // All at once: its count; a closed loop has no fixed rate: quiet.
    fires(&open(json!({"kind": "at_once"}), 1.0, Some(1001)), "1,001");
    // An end that rounds to 0 ns lets nothing arrive; gaps round to whole
    // nanoseconds (0.5000000003 ns is 1 ns: half the rate written).
    quiet(&open(json!({"kind": "at_once"}), 1e-10, Some(1001)));
    quiet(&open(
        json!({"kind": "constant", "rate_per_s": 1_999_999_999u64}),
        1e-6,
        None,
    ));
    let think = json!({"kind": "constant", "ms": 1});
    quiet(&open(
        json!({"kind": "closed_loop", "users": 100, "think": think}),
        1e6,
        None,
    ));
}

#[test]
fn a_set_a_moving_ramp_undoes_warns() {
    let rate = "workloads[users].arrival.rate_per_s";
    let ramp = json!({"name": "ramp up", "at_s": 5, "over_s": 10, "set": {rate: 50}});
    let entry = |at_s: f64, path: &str, value: Value| json!({"name": "cap", "at_s": at_s, "set": {path: value}});
    let timeline = |entries: Vec<Value>| with(base(), "timeline", json!(entries));
    warns(
        &timeline(vec![ramp.clone(), entry(9.5, rate, json!(20))]),
        "set-undone-by-ramp",
        "timeline[cap].set[\"workloads[users].arrival.rate_per_s\"]",
        "the ramp \"ramp up\", still moving when this entry starts, sets this value again at 10 s and moves it to its own target by 15 s: this entry's value holds only until then; start the entry after the ramp ends, or end the ramp before it",
    );
    // An entry that sets around what the ramp moves is undone in part.
    let arrival = "workloads[users].arrival";
    let poisson = json!({"kind": "poisson", "rate_per_s": 20});
    assert_eq!(
        warnings_of(&timeline(vec![
            ramp.clone(),
            entry(9.5, arrival, poisson.clone())
        ]))[0]
            .path,
        "timeline[cap].set[\"workloads[users].arrival\"]"
    );
    // In file order or not, an entry that starts during the ramp is undone.
    assert_eq!(
        warnings_of(&timeline(vec![entry(9.5, rate, json!(20)), ramp.clone()])).len(),
        1
    );
    // Quiet: the entry starts at the ramp's end (it applies after its last
    // step), before the ramp (the ramp moves from its value), at the ramp's
    // start but written before it (the same), or sets another value.
    quiet(&timeline(vec![ramp.clone(), entry(15.0, rate, json!(20))]));
    quiet(&timeline(vec![ramp.clone(), entry(4.0, rate, json!(20))]));
    quiet(&timeline(vec![entry(5.0, rate, json!(20)), ramp.clone()]));
    quiet(&timeline(vec![
        ramp.clone(),
        entry(9.5, "services[B].workers", json!(3)),
    ]));
    quiet(&timeline(vec![
        ramp.clone(),
        entry(9.5, "workloads[users].requests", json!(3)),
    ]));
    // At the ramp's start but written after it: its first step undoes it.
    assert_eq!(
        warnings_of(&timeline(vec![ramp, entry(5.0, rate, json!(20))])).len(),
        1
    );
}

/// Found by review: two ramps that share instants were taken for an undo.
/// At each instant they share, the ramp started later applies last, so
/// "ramp every workload, but this one to its own target" leaves this one's
/// value standing; only a step change is undone. And a set of a whole
/// object replaces what was set inside it: the inner set is no longer
/// there to be undone.
#[test]
fn regression_ramps_that_share_instants_undo_nothing() {
    let rate = "workloads[users].arrival.rate_per_s";
    let all_up = json!({"name": "all up", "at_s": 10, "over_s": 60,
                        "set": {"workloads[*].arrival.rate_per_s": 20}});
    let higher = json!({"name": "users higher", "at_s": 10, "over_s": 60, "set": {rate: 40}});
    quiet(&with(base(), "timeline", json!([all_up, higher])));
    let ramp = json!({"name": "ramp up", "at_s": 5, "over_s": 10, "set": {rate: 50}});
    let inner = json!({"name": "cap", "at_s": 8.2, "set": {rate: 20}});
    let whole = json!({"name": "reshape", "at_s": 8.5,
                       "set": {"workloads[users].arrival": {"kind": "poisson", "rate_per_s": 30}}});
    let ws = warnings_of(&with(base(), "timeline", json!([ramp, inner, whole])));
    assert_eq!(ws.len(), 1, "{ws:#?}");
    assert_eq!(
        ws[0].path,
        "timeline[reshape].set[\"workloads[users].arrival\"]"
    );
}

/// Found by review: a load shape changed by the timeline was integrated over
/// the whole run in each model, counting requests where that shape is not in
/// force (9.9 M surely, for a run that gets none). A workload whose shape a
/// change replaces counts none.
#[test]
fn regression_a_reshaped_workload_counts_no_sure_arrivals() {
    let mut doc = base();
    doc["limits"] = json!({"max_events": 1_000_000});
    let w = &mut doc["workloads"][0];
    w.as_object_mut().unwrap().remove("requests");
    w["duration_s"] = json!(1000);
    let mut rates = vec![10_000; 1000];
    rates[0] = 0;
    w["arrival"] = json!({"kind": "trace", "rates_per_s": rates});
    doc["timeline"] = json!([{"name": "burst", "at_s": 1,
        "set": {"workloads[users].arrival": {"kind": "trace", "rates_per_s": [1e7]}}}]);
    quiet(&doc);
}

/// A write answered with a made-up value warns at the kind that guesses; a
/// read, a write that fails explicitly, or one that falls back to another
/// service that can do it, does not.
#[test]
fn a_fallback_that_guesses_a_write_warns() {
    let step = |idempotent: Option<bool>, chain: Value| {
        let mut doc = with(
            base(),
            "services[gateway].steps[0].fallback",
            json!({"chain": chain}),
        );
        if let Some(i) = idempotent {
            doc = with(doc, "services[gateway].steps[0].idempotent", json!(i));
        }
        doc
    };
    let guess = json!([{"kind": "call", "call": "C"}, {"kind": "default"}]);
    let mut doc = step(Some(false), guess.clone());
    doc["services"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "C", "steps": [{"work": {"kind": "constant", "ms": 5}}]}));
    warns(
        &doc,
        "fallback-guesses-a-write",
        "services[gateway].steps[0].fallback.chain[1]",
        "a write (`idempotent: false`) answered with a stale value or a default: the caller is told it happened when it did not; fail explicitly (`fail`) or call a service that can do it",
    );
    quiet(&step(Some(false), json!([{"kind": "fail"}])));
    quiet(&step(None, json!([{"kind": "default"}])));
    quiet(&step(Some(true), json!([{"kind": "default"}])));
}
