//! S3, deadlines across long chains, impatient users and queues: the budget
//! arithmetic by hand, fail-fast policies, zombie accounting, and the claims
//! of the three S3 models.
//!
//! The hand-built chains use constant work and no network latency, so every
//! instant is exact. The model claims are structural (a policy that stops all
//! work at the deadline leaves no zombie: exactly zero, on every seed) or
//! compare variants run on the same random numbers with margins far wider
//! than the seed-to-seed spread, which the tests measure over three seeds
//! rather than trust to one.

use crate::common;

use common::{ms, run_recording_attempts as run_text, service};
use stormsim_model::load_model;
use stormsim_sim::report::AttemptOutcomeKind;
use stormsim_sim::{run_model, VariantReport};

/// S3's example chain: the client's 10 s deadline; the gateway spends 100 ms,
/// Order 300 ms, Inventory 200 ms; the DB's statement timeout is what is left
/// minus 50 ms, and its query would take 20 s. `margin` is subtracted at each
/// call; `inventory_min` is Inventory's fail-fast threshold.
fn s3_chain(margin: f64, inventory_min: f64) -> String {
    let call = |to: &str, min: f64| {
        format!(
            r#"{{"call": "{to}", "deadline": {{"margin_ms": {margin}, "min_budget_ms": {min}}}}}"#
        )
    };
    let (order, inventory, db) = (
        call("order", 0.0),
        call("inventory", 0.0),
        call("db", inventory_min),
    );
    format!(
        r#"{{
        "name": "s3-chain",
        "workloads": [{{"name": "client", "target": "gateway", "arrival": {{"kind": "at_once"}},
            "requests": 1, "deadline_ms": 10000, "deadline": {{"margin_ms": {margin}}}}}],
        "services": [
          {{"name": "gateway", "steps": [{{"work": {{"kind": "constant", "ms": 100}}}}, {order}]}},
          {{"name": "order", "steps": [{{"work": {{"kind": "constant", "ms": 300}}}}, {inventory}]}},
          {{"name": "inventory", "steps": [{{"work": {{"kind": "constant", "ms": 200}}}}, {db}]}},
          {{"name": "db", "steps": [{{"work": {{"kind": "constant", "ms": 20000}},
            "deadline": {{"margin_ms": 50}}}}]}}
        ]
      }}"#
    )
}

/// Without margins the DB starts at 600 ms with 10 − 0.6 = 9.4 s left (S3's
/// arithmetic), so its statement timeout is 9.35 s: the query is stopped at
/// 9,950 ms and the error reaches the client 50 ms before its deadline.
#[test]
fn the_budget_shrinks_by_what_each_hop_spent() {
    let (report, records) = run_text(&s3_chain(0.0, 0.0));
    let db = records
        .iter()
        .find(|r| r.service == 3)
        .expect("the DB was called");
    assert_eq!((ms(db.started), ms(db.finished)), (600.0, 9_950.0));
    assert_eq!(db.outcome, AttemptOutcomeKind::Error);
    assert_eq!(report.failed_by_reason.deadline_exceeded, 1);
    assert_eq!(service(&report, "db").expired, 1);
    assert_eq!(service(&report, "db").started_late, 0);
    assert_eq!(report.zombies.zombies, 0, "nothing outlives the answer");
}

/// With a 100 ms margin at each of the four sends (client, gateway, Order,
/// Inventory) the DB receives 10 − 0.6 − 0.4 = 9.0 s and stops at 9.0 − 0.05.
#[test]
fn each_hop_keeps_its_margin_back() {
    let (_, records) = run_text(&s3_chain(100.0, 0.0));
    let db = records
        .iter()
        .find(|r| r.service == 3)
        .expect("the DB was called");
    assert_eq!(ms(db.finished), 600.0 + 9_000.0 - 50.0);
}

/// Inventory needs 9.5 s for its call but has 10 − 0.6 = 9.4 s: it fails fast
/// and the DB is never called.
#[test]
fn a_hop_fails_fast_below_what_the_next_call_needs() {
    let (report, records) = run_text(&s3_chain(0.0, 9_500.0));
    assert!(records.iter().all(|r| r.service != 3), "the DB was called");
    assert_eq!(service(&report, "db").calls, 0);
    assert_eq!(report.failed_by_reason.deadline_exceeded, 1);
    assert_eq!(report.latency_ms.unwrap().max, 600.0);
}

/// One DB worker behind a Poisson load of twice its capacity, each request
/// with a 1 s budget: `fail_fast` refuses what arrives or is dequeued too late
/// and bounds the work by the deadline.
fn overloaded(fail_fast: bool, seed: u64) -> VariantReport {
    let policy = if fail_fast {
        r#", "admission": {"drop_expired": {"margin_ms": 0}}"#
    } else {
        ""
    };
    let bound = if fail_fast {
        r#", "deadline": {"margin_ms": 0}"#
    } else {
        ""
    };
    let text = format!(
        r#"{{
        "name": "overloaded", "seed": {seed},
        "workloads": [{{"name": "w", "target": "db", "arrival": {{"kind": "poisson", "rate_per_s": 200}},
            "requests": 4000, "deadline_ms": 1000}}],
        "services": [{{"name": "db", "workers": 1 {policy},
            "steps": [{{"work": {{"kind": "exponential", "mean_ms": 10}} {bound}}}]}}]
      }}"#
    );
    run_text(&text).0
}

/// No work starts after its deadline when the policy says fail fast; without
/// the policy, an overloaded queue starts plenty (so the check can fail).
#[test]
fn no_work_starts_after_its_deadline_under_a_fail_fast_policy() {
    for seed in 1..=3 {
        let strict = overloaded(true, seed);
        let db = service(&strict, "db");
        assert_eq!(db.started_late, 0, "seed {seed}");
        assert!(db.expired > 0, "seed {seed}: the policy never acted");
        let lax = overloaded(false, seed);
        assert!(service(&lax, "db").started_late > 1000, "seed {seed}");
    }
}

/// A user who gives up after 1.5 s on work that takes 3.5 s leaves a zombie
/// from 1.5 s to 3.5 s: alive during the buckets [1, 2), [2, 3) and [3, 4).
#[test]
fn a_zombie_lives_exactly_as_long_as_the_work_its_user_left() {
    let text = r#"{
        "name": "one-zombie", "horizon_s": 6,
        "workloads": [{"name": "u", "target": "s", "arrival": {"kind": "at_once"}, "requests": 1,
            "timeout_ms": 1500}],
        "services": [{"name": "s", "steps": [{"work": {"kind": "constant", "ms": 3500}}]}]
      }"#;
    let (report, _) = run_text(text);
    let gauge: Vec<u64> = report.series.global.iter().map(|g| g.zombies).collect();
    assert_eq!(gauge, [0, 1, 1, 1, 0, 0]);
    assert_eq!((report.zombies.zombies, report.zombies.peak), (1, 1));
    assert_eq!(service(&report, "s").wasted, 1);
    // Watching for the caller, the work stops with the user: no zombie.
    let watching = text.replace(r#""ms": 3500}"#, r#""ms": 3500}, "on_cancel": "stop""#);
    let (report, _) = run_text(&watching);
    assert_eq!(report.zombies.zombies, 0);
    assert_eq!(service(&report, "s").cancelled, 1);
}

/// Closed-loop users who refresh pile zombies up; the run drains (no horizon),
/// so every zombie must have ended, completed or cancelled: the simulator's
/// end-of-run invariants check it (started = ended, no root left) and would
/// panic. The per-user counts add up to the run's.
///
/// (With `on_cancel: stop` this chain would have none to count: each user's
/// timeout frees a worker for the next request in the FIFO queue, which is
/// younger, so a live request always starts before its own timeout.)
#[test]
fn zombie_accounting_is_conserved() {
    for (cancel, seed) in [("finish", 1), ("finish", 2), ("finish", 3)] {
        let text = format!(
            r#"{{
            "name": "refreshers", "seed": {seed},
            "workloads": [{{"name": "users", "target": "front",
                "arrival": {{"kind": "closed_loop", "users": 300, "think": {{"kind": "exponential", "mean_ms": 5000}}}},
                "duration_s": 120, "timeout_ms": 2000,
                "retry": {{"max_attempts": 3, "backoff": {{"kind": "fixed", "ms": 200}}}}}}],
            "services": [
              {{"name": "front", "steps": [{{"call": "back"}}]}},
              {{"name": "back", "workers": 3,
                "steps": [{{"work": {{"kind": "exponential", "mean_ms": 80}}, "on_cancel": "{cancel}"}}]}}
            ]
          }}"#
        );
        let (report, _) = run_text(&text);
        let z = &report.zombies;
        assert!(z.zombies > 0, "{cancel}/{seed}: no zombie to account for");
        let per_user_total =
            z.per_impatient_user.expect("impatient users") * z.impatient_users as f64;
        assert!((per_user_total - z.zombies as f64).abs() < 1e-3 * z.zombies as f64);
        assert_eq!(z.users_by_peak.iter().sum::<u64>(), 300);
        assert!(z.peak >= z.user_peak_max);
        assert_eq!(report.unanswered, 0);
    }
}

fn bundled(name: &str, seed: u64) -> Vec<VariantReport> {
    let path = format!("{}/../../models/{name}.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let model = load_model(&text, &[], Some(seed)).unwrap_or_else(|e| panic!("{e:?}"));
    run_model(&model).variants
}

fn variant<'a>(reports: &'a [VariantReport], name: &str) -> &'a VariantReport {
    reports
        .iter()
        .find(|r| r.variant == name)
        .unwrap_or_else(|| panic!("no variant {name}"))
}

/// `models/checkout-incident.json`: static 30 s timeouts with refreshing
/// users pile several zombies on each impatient user and saturate the DB for
/// good; budgets with cancellation leave none and recover; the 60 s gateway
/// wastes the DB on users who left.
#[test]
fn checkout_incident_claims() {
    for seed in 1..=3 {
        let r = bundled("checkout-incident", seed);
        let incident = variant(&r, "static-30s");
        // A zombie lives as long as the DB queue's wait (minutes, once the
        // queue grows without bound), and each user refreshes every ~32 s,
        // up to 4 tries: S3's "3-4 zombie requests per impatient user".
        assert!(
            incident.zombies.user_peak_mean.unwrap() >= 3.0,
            "seed {seed}"
        );
        assert_eq!(
            incident.verdict.as_ref().and_then(|r| r.metastable()),
            Some(true)
        );
        let db = service(incident, "db");
        assert!(
            db.wasted * 2 > db.completed,
            "seed {seed}: the DB works mostly for zombies"
        );

        let fixed = variant(&r, "budget-and-cancellation");
        assert_eq!(fixed.zombies.zombies, 0, "seed {seed}");
        assert_eq!(service(fixed, "db").wasted, 0, "seed {seed}");
        assert_eq!(
            fixed.verdict.as_ref().and_then(|r| r.metastable()),
            Some(false)
        );
        assert!(fixed.success_rate.unwrap() > 0.99, "seed {seed}");
        assert!(
            fixed.succeeded > 2 * incident.succeeded,
            "seed {seed}: goodput kept"
        );

        let short = service(variant(&r, "gateway-30s"), "db");
        let long = service(variant(&r, "gateway-60s"), "db");
        // A structural contrast: at 30 s the chain's work ends with the user
        // (a handful of queries finish in the same instant), at 60 s the DB
        // stays saturated by departed users (about half its completions).
        assert!(long.wasted > 100 * (short.wasted + 1), "seed {seed}");
        assert!(
            variant(&r, "gateway-60s").zombies.peak > 10 * variant(&r, "gateway-30s").zombies.peak,
            "seed {seed}"
        );
    }
}

/// `models/deadline-encodings.json`: the correct encodings hold the deadline
/// (no work outlives it: zero zombies, structurally); stale relative budgets
/// and a DB clock behind overrun it; a DB clock ahead fails requests early.
#[test]
fn deadline_encoding_claims() {
    for seed in 1..=3 {
        let r = bundled("deadline-encodings", seed);
        for holds in ["relative", "absolute"] {
            let v = variant(&r, holds);
            assert_eq!(v.zombies.zombies, 0, "{holds}, seed {seed}");
            assert_eq!(service(v, "db").wasted, 0, "{holds}, seed {seed}");
        }
        let relative = variant(&r, "relative");
        for overruns in [
            "relative-stale",
            "absolute-db-behind",
            "count-based-retries",
        ] {
            let v = variant(&r, overruns);
            assert!(v.zombies.zombies > 0, "{overruns}, seed {seed}");
            assert!(service(v, "orders").wasted + service(v, "db").wasted > 0);
        }
        // 400 ms of a DB budget of at most 485 ms lost: most slow queries and
        // many fast ones fail, and retries too.
        let early = variant(&r, "absolute-db-ahead");
        assert!(
            early.success_rate.unwrap() < relative.success_rate.unwrap() - 0.1,
            "seed {seed}"
        );
        assert_eq!(early.zombies.zombies, 0, "seed {seed}");
        assert!(service(early, "db").expired > 5 * service(relative, "db").expired);
    }
}

/// `models/queue-deadlines.json`: dropping expired messages serves live work
/// as soon as the consumers are back; processing everything first drains a
/// backlog of dead messages (12,000 at 50/s of spare capacity: about 4 min).
#[test]
fn queue_deadline_claims() {
    for seed in 1..=3 {
        let r = bundled("queue-deadlines", seed);
        let all = variant(&r, "process-everything");
        let drop = variant(&r, "drop-expired");
        let recovery = |v: &VariantReport| {
            v.verdict
                .as_ref()
                .and_then(|r| r.recovery_s)
                .expect("recovers")
        };
        assert!(recovery(all) > 180.0, "seed {seed}: {}", recovery(all));
        assert!(recovery(drop) * 5.0 < recovery(all), "seed {seed}");
        let (c_all, c_drop) = (service(all, "consumers"), service(drop, "consumers"));
        assert!(c_all.wasted > 50 * c_drop.wasted, "seed {seed}");
        // The stall backs up about 200/s × 60 s = 12,000 messages, and all
        // but the last 5 s of them (about 11,000) are dead when the consumers
        // come back: dropping finds at least half of that.
        assert!(
            c_drop.expired > 5_000,
            "seed {seed}: messages dropped as expired"
        );
        // Processing everything drains that backlog at the spare 50/s for
        // about 240 s while serving 250/s, every one of them older than 5 s:
        // about 60,000 late starts, and as many live jobs of the same
        // stretch (about 200/s × 240 s = 48,000) lost; the bounds leave a
        // third of slack for the draws.
        assert!(c_all.started_late > 40_000 && c_drop.started_late == 0);
        assert!(drop.succeeded > all.succeeded + 30_000, "seed {seed}");
    }
}

/// The deadline middleware comes before the queue: a request that arrives too
/// late is refused as expired (504) even when the queue is full, and its
/// refusal carries no Retry-After.
#[test]
fn an_expired_arrival_is_refused_before_the_queue_is_asked() {
    let text = r#"{
        "name": "middleware",
        "workloads": [
          {"name": "long", "target": "s", "arrival": {"kind": "at_once"}, "requests": 1},
          {"name": "late", "target": "s", "arrival": {"kind": "at_once"}, "requests": 1, "deadline_ms": 50}
        ],
        "services": [{"name": "s", "workers": 1, "queue_capacity": 0,
          "admission": {"drop_expired": {"margin_ms": 100}, "retry_after_ms": 1000},
          "steps": [{"work": {"kind": "constant", "ms": 1000}}]}]
      }"#;
    let (report, _) = run_text(text);
    let s = service(&report, "s");
    assert_eq!((s.expired, s.rejected, s.shed), (1, 0, 1));
    assert_eq!(report.failed_by_reason.deadline_exceeded, 1);
    assert_eq!(report.latency_ms.unwrap().max, 1000.0);
}
