//! S5's retry amplification (SCENARIOS.md): client → A → B → D, three retrying
//! edges of up to 3 attempts each, against a D that refuses everything with an
//! immediate 503 (`admission.drop_fraction: 1`).
//!
//! Nothing in this model is random: arrivals are evenly spaced, the network and
//! the work are constant, and a drop fraction of 1 drops every request whatever
//! its draw. Requests arrive every 50 ms and the longest retry tree takes 39 ms,
//! so they never overlap. Every count is therefore exact, and the assertions
//! are equalities with the arithmetic (no tolerance), except where a closed-form
//! bound is stated instead.

use crate::common;

use common::service;
use stormsim_model::load_model;
use stormsim_sim::{run_variant, VariantReport};

const N: u64 = 5000;

fn model_text() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/retry-amplification.json"
    );
    std::fs::read_to_string(path).expect("models/retry-amplification.json is readable")
}

fn run_all() -> Vec<VariantReport> {
    let model = load_model(&model_text(), &[], None).expect("the bundled model is valid");
    model.variants.iter().map(run_variant).collect()
}

/// Per tier (client→A, A→B, B→D): attempts received by the callee, retries
/// sent, retries a budget refused.
#[derive(Debug, Default, PartialEq)]
struct Tally {
    calls: [u64; 3],
    retries: [u64; 3],
    denied: [u64; 3],
}

/// The S5 token bucket in tenths of a token (ratio 0.1 = 1 tenth per first
/// attempt, a retry costs 10 tenths, max 10 tokens = 100 tenths), starting
/// full: exact integer arithmetic, no float drift.
struct Bucket(u64);

impl Bucket {
    const MAX: u64 = 100;
    fn deposit(&mut self) {
        self.0 = (self.0 + 1).min(Self::MAX);
    }
    fn try_withdraw(&mut self) -> bool {
        let ok = self.0 >= 10;
        if ok {
            self.0 -= 10;
        }
        ok
    }
}

/// An independent reference for the nested retry loops, one request at a time
/// (requests do not overlap in the model): a call on `tier` makes up to
/// `max_attempts[tier]` attempts; each attempt reaches the callee, whose handler
/// makes the next tier's call; D always fails, so every attempt fails. After a
/// failed attempt with attempts left, the budget (if any) is asked; a refusal
/// ends the call. The first attempt deposits.
fn reference_call(
    tier: usize,
    max_attempts: [u32; 3],
    buckets: &mut Option<[Bucket; 3]>,
    tally: &mut Tally,
) {
    for attempt in 1..=max_attempts[tier] {
        if attempt == 1 {
            if let Some(b) = buckets.as_mut() {
                b[tier].deposit();
            }
        }
        tally.calls[tier] += 1;
        if tier < 2 {
            reference_call(tier + 1, max_attempts, buckets, tally);
        }
        if attempt == max_attempts[tier] {
            break;
        }
        let granted = buckets.as_mut().is_none_or(|b| b[tier].try_withdraw());
        if granted {
            tally.retries[tier] += 1;
        } else {
            tally.denied[tier] += 1;
            break;
        }
    }
}

fn reference(max_attempts: [u32; 3], budget: bool) -> Tally {
    let mut buckets = budget.then_some([
        Bucket(Bucket::MAX),
        Bucket(Bucket::MAX),
        Bucket(Bucket::MAX),
    ]);
    let mut tally = Tally::default();
    for _ in 0..N {
        reference_call(0, max_attempts, &mut buckets, &mut tally);
    }
    tally
}

fn tally_of(r: &VariantReport) -> Tally {
    let s = ["A", "B", "D"].map(|name| service(r, name));
    Tally {
        calls: s.map(|s| s.calls),
        retries: s.map(|s| s.retries),
        denied: s.map(|s| s.budget_denied),
    }
}

#[test]
fn variants_are_named_as_asked() {
    let model = load_model(&model_text(), &[], None).expect("valid");
    let names: Vec<&str> = model.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(
        names,
        ["retry-every-tier", "retry-one-tier", "retry-budget"]
    );
}

#[test]
fn amplification_is_the_retry_arithmetic() {
    let r = run_all();
    for v in &r {
        assert_eq!(v.requests, N, "{}", v.variant);
    }
    let (every, one, budget) = (&r[0], &r[1], &r[2]);

    // Every tier retries: 3, 9 and 27 attempts per user request at A, B and D.
    assert_eq!(
        tally_of(every),
        Tally {
            calls: [3 * N, 9 * N, 27 * N],
            retries: [2 * N, 6 * N, 18 * N],
            denied: [0; 3],
        }
    );
    assert_eq!(service(every, "D").calls_per_request.unwrap(), 27.0);
    assert_eq!(tally_of(every), reference([3, 3, 3], false));

    // One tier (the client) retries: 3 attempts at every service.
    assert_eq!(
        tally_of(one),
        Tally {
            calls: [3 * N; 3],
            retries: [2 * N, 0, 0],
            denied: [0; 3],
        }
    );
    assert_eq!(service(one, "D").calls_per_request.unwrap(), 3.0);

    // A 10% budget at every tier. Demand (2 retries per call) exceeds supply
    // (0.1 per call), so each bucket is spent whenever it holds a whole token:
    // after its first deposit (swallowed by the full bucket) it never reaches
    // the cap again, and it ends below 1 token. On an edge with F first
    // attempts, retries = 10 + 0.1·(F − 1) − (final level in [0, 1)), so
    // exactly ⌊10 + 0.1·(F − 1)⌋ — and the callee receives F plus that.
    let next = |f: u64| f + (100 + (f - 1)) / 10;
    let (a, b) = (next(N), next(next(N)));
    let d = next(b);
    assert_eq!(tally_of(budget).calls, [a, b, d]);
    assert_eq!((a, b, d), (5509, 6069, 6685));
    // The same, with refusals, from the independent step-by-step reference.
    assert_eq!(tally_of(budget), reference([3, 3, 3], true));
    // Against 1.1³: each level adds between 8.9 and 9.9 calls beyond 1.1 × the
    // one above (10 initial tokens, less the deposit the full bucket swallows,
    // less the final fraction), so D/N − 1.331 lies in
    // (1.1²·8.9 + 1.1·8.9 + 8.9, 1.1²·9.9 + 1.1·9.9 + 9.9] / N = (29.5, 32.8] / N:
    // the initial burst is 0.6% of D's load at N = 5,000.
    let per_request = d as f64 / N as f64;
    let (lo, hi) = (
        1.331 + 8.9 * (1.21 + 1.1 + 1.0) / N as f64,
        1.331 + 9.9 * (1.21 + 1.1 + 1.0) / N as f64,
    );
    assert!(
        per_request > lo && per_request <= hi,
        "{per_request} not in ({lo}, {hi}]"
    );
    assert_eq!(service(budget, "D").calls_per_request.unwrap(), per_request);
}

#[test]
fn the_503_travels_up_as_rejected_and_is_retried_at_every_tier() {
    for v in run_all() {
        // D refuses at admission: every attempt is shed (not `rejected`, which
        // counts full-queue refusals only) and no handler runs.
        let d = service(&v, "D");
        assert_eq!(d.shed, d.calls, "{}", v.variant);
        assert_eq!((d.rejected, d.completed), (0, 0), "{}", v.variant);
        // B and A answer every request with the failure of their call: their
        // handlers complete, all with an error, none wasted.
        for name in ["A", "B"] {
            let s = service(&v, name);
            assert_eq!(
                (s.completed, s.failed),
                (s.calls, s.calls),
                "{} {name}",
                v.variant
            );
            assert_eq!(s.wasted + s.cancelled, 0, "{} {name}", v.variant);
        }
        // The user sees D's 503 as `rejected`: the reason is propagated, which
        // is why `retry_on: ["rejected"]` retries it at A and at the client.
        assert_eq!(v.failed, N, "{}", v.variant);
        assert_eq!(v.failed_by_reason.rejected, N, "{}", v.variant);
    }
}

#[test]
fn latency_is_the_hop_arithmetic() {
    let r = run_all();
    // One attempt of B on D: 0.5 ms down + 0.5 ms up. A's attempt on B adds a
    // round trip to B's 3 ms; the client's attempt on A adds one to A's 12 ms.
    assert_eq!(r[0].latency_ms.unwrap().max, 39.0);
    assert!((r[0].latency_ms.unwrap().p50 - 39.0).abs() < 0.04); // HDR bucket midpoint, 0.1%
                                                                 // One tier: 3 attempts × (3 round trips of 1 ms).
    assert_eq!(r[1].latency_ms.unwrap().max, 9.0);
    // The budget can only shorten the tree: the longest is the first request,
    // which still has every tier's initial tokens (the full 39 ms tree needs 18
    // retries at D's edge, more than 10 tokens, so less).
    assert!(r[2].latency_ms.unwrap().max < 39.0 && r[2].latency_ms.unwrap().max >= 9.0);
    // In steady state most requests get no retry at all: 3 round trips.
    assert!((r[2].latency_ms.unwrap().p50 - 3.0).abs() < 0.004);
}

/// `stormsim bench`'s breakdown accounts for every event: the kinds sum to
/// the run's events, every attempt on the wire arrives once and is answered
/// once (nothing times out here), and every logical request is one arrival.
#[test]
fn events_by_kind_account_for_every_event() {
    for r in run_all() {
        let kind = |name: &str| {
            r.events_by_kind
                .iter()
                .find(|(k, _)| *k == name)
                .map_or(0, |(_, n)| *n)
        };
        let handled: u64 = r
            .events_by_kind
            .iter()
            .filter(|(k, _)| !k.starts_with('('))
            .map(|(_, n)| n)
            .sum();
        assert_eq!(handled, r.events, "{}", r.variant);
        let attempts: u64 = r.services.iter().map(|s| s.calls).sum();
        assert_eq!(kind("attempt arrives"), attempts, "{}", r.variant);
        assert_eq!(kind("response arrives"), attempts, "{}", r.variant);
        assert_eq!(kind("arrival"), r.requests, "{}", r.variant);
        assert_eq!(kind("attempt timeout"), 0, "{}", r.variant);
    }
}
