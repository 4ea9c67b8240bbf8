//! A fuzzer of valid models (issue 17): random models across every feature
//! of the format — retry policies and budgets, breakers, bulkheads, limiters
//! and throttles, deadlines, fan-out, hedges, caches, admission control,
//! hosts and slow periods, timelines (ramps and roles), copies of a workload
//! (`count`), load shapes and traces, and variants — each
//! run with small limits, asserting that nothing panics and that every report
//! is consistent:
//!
//! - succeeded + failed + unanswered = requests, and the failures by reason
//!   sum to the failures (run-wide and per workload where it applies);
//! - latency quantiles are monotone: p50 ≤ p90 ≤ p99 ≤ p999 ≤ max;
//! - a second run, of the variants on a pool of two threads, forked where
//!   they share their past (as the CLI runs them), and a third, with every
//!   message queued rather than delivered at once, give the same report,
//!   byte for byte.
//!
//! The generator draws from the engine's deterministic streams: case `i` of
//! seed `s` is the same model on every machine. A failure prints the model
//! and the command that runs it alone.
//!
//! CI runs [`DEFAULT_CASES`] models on every core (19 s in the debug profile
//! on two cores, three runs of each). Each model caps its time series at
//! 20,000 rows: before that cap, ten models in 1,500 whose uncapped backoff
//! drifts the run to 10^6 s of buckets took 216 s of the 220
//! (`tests/run_limits.rs`). The fuzzer found three bugs in its first 2,000
//! cases (`tests/hardening.rs`, `fuzz_*`), and a fourth when its variants
//! began to move and add timeline entries: an entry that starts while a ramp
//! moves was applied out of time order, and a fork past it panicked
//! (`tests/forked_variants.rs`). Since then 20,000 models of each seed from
//! 1 to 9 and 50,000 of each seed from 10 to 12 have run clean, all three
//! runs alike (1,760 to 1,890 forked variants in each 20,000). Removing
//! either of two conditions of at-once delivery (nothing else due at the
//! instant, the event limit not reached) fails the third run within the
//! first 1,400 cases of seed 1. More, or another seed:
//!
//! ```text
//! STORMSIM_FUZZ_CASES=50000 STORMSIM_FUZZ_SEED=7 \
//!     cargo test -p stormsim-sim --test integration fuzz_models -- --nocapture
//! ```
//!
//! `STORMSIM_FUZZ_PROGRESS=1` prints every hundredth case;
//! `STORMSIM_FUZZ_WRITE=<folder>` writes every valid model there, to run
//! through the command line (its charts and pages too). One case alone:
//! `STORMSIM_FUZZ_CASES=1 STORMSIM_FUZZ_FIRST=<i>`; a failing
//! model is also written to the temporary folder, to run with `stormsim run`.
//! (Not `--release`: the release profile aborts on a panic, so no case could
//! be named.)

use serde_json::{json, Map, Value};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use stormsim_engine::{StreamKey, StreamRng};
use stormsim_model::load_model;
use stormsim_sim::{fork, run_model, run_model_parallel, RunReport, Simulator, VariantReport};

/// Models a plain `cargo test` runs.
const DEFAULT_CASES: u64 = 20_000;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Draws for one model.
struct Gen {
    rng: StreamRng,
}

impl Gen {
    fn chance(&mut self, p: f64) -> bool {
        self.rng.unit() < p
    }
    /// An integer in `lo..=hi`.
    fn int(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.rng.next_u64() % (hi - lo + 1)
    }
    /// A number in `[lo, hi)`, rounded to 3 decimals (readable models).
    fn num(&mut self, lo: f64, hi: f64) -> f64 {
        ((lo + (hi - lo) * self.rng.unit()) * 1000.0).round() / 1000.0
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.int(0, items.len() as u64 - 1) as usize]
    }

    fn dist(&mut self, depth: u32) -> Value {
        match self.int(0, if depth > 0 { 9 } else { 10 }) {
            0 => json!({"kind": "constant", "ms": self.num(0.0, 30.0)}),
            1 => {
                let lo = self.num(0.0, 10.0);
                json!({"kind": "uniform", "min_ms": lo, "max_ms": lo + self.num(0.0, 20.0)})
            }
            2 => json!({"kind": "exponential", "mean_ms": self.num(0.1, 20.0)}),
            3 => {
                let median = self.num(0.5, 10.0);
                json!({"kind": "lognormal", "median_ms": median, "p99_ms": median + self.num(0.5, 80.0)})
            }
            4 => {
                let (a, b) = (self.num(0.0, 10.0), self.num(0.0, 50.0));
                json!({"kind": "quantiles", "points": [
                    {"q": 0.5, "ms": a}, {"q": 0.99, "ms": a + b}, {"q": 1.0, "ms": a + 2.0 * b}]})
            }
            5 => {
                let le = self.num(0.1, 10.0);
                json!({"kind": "histogram", "buckets": [
                    {"le_ms": le, "count": self.int(0, 50)},
                    {"le_ms": le + self.num(0.1, 40.0), "count": 100}]})
            }
            6 => {
                json!({"kind": "normal", "mean_ms": self.num(0.0, 20.0), "sd_ms": self.num(0.0, 10.0)})
            }
            7 => {
                json!({"kind": "gamma", "shape": self.num(0.2, 5.0), "mean_ms": self.num(0.1, 20.0)})
            }
            8 => {
                json!({"kind": "weibull", "shape": self.num(0.5, 4.0), "scale_ms": self.num(0.1, 20.0)})
            }
            9 => {
                json!({"kind": "pareto", "shape": self.num(1.1, 4.0), "scale_ms": self.num(0.1, 5.0)})
            }
            _ => {
                let p = self.num(0.05, 0.95);
                json!({"kind": "mixture", "of": [
                    {"p": p, "dist": self.dist(depth + 1)},
                    {"p": 1.0 - p, "dist": self.dist(depth + 1)}]})
            }
        }
    }

    fn backoff(&mut self) -> Value {
        if self.chance(0.5) {
            json!({"kind": "fixed", "ms": *self.pick(&[0.0, 0.0, 1.0, 5.0, 20.0])})
        } else {
            let mut b = json!({"kind": "exponential", "base_ms": self.num(0.0, 10.0),
                               "multiplier": self.num(1.0, 3.0)});
            if self.chance(0.5) {
                b["cap_ms"] = json!(self.num(1.0, 100.0));
            }
            b
        }
    }

    fn budget(&mut self) -> Value {
        match self.int(0, 4) {
            0 => {
                json!({"kind": "token_bucket", "ratio": self.num(0.0, 1.0), "max_tokens": self.num(1.0, 20.0)})
            }
            4 => {
                json!({"kind": "retry_circuit_breaker", "max_failure_rate": self.num(0.0, 1.0),
                        "window": self.int(1, 200)})
            }
            1 => {
                json!({"kind": "grpc_throttling", "max_tokens": self.num(1.0, 100.0), "token_ratio": self.num(0.01, 1.0)})
            }
            2 => {
                json!({"kind": "finagle", "ttl_s": self.num(1.0, 60.0), "min_retries_per_sec": self.int(0, 20),
                        "percent_can_retry": self.num(0.0, 1.0)})
            }
            _ => {
                json!({"kind": "envoy", "budget_percent": self.num(1.0, 100.0), "min_retry_concurrency": self.int(0, 5)})
            }
        }
    }

    /// A list of outcomes (`retry_on`, a hedge's `non_fatal`), each in it
    /// with even odds.
    fn outcomes(&mut self) -> Value {
        let all = [
            "timeout",
            "deadline_exceeded",
            "rejected",
            "error",
            "connection_refused",
            "rate_limited",
        ];
        let some: Vec<&str> = all.into_iter().filter(|_| self.chance(0.5)).collect();
        json!(some)
    }

    fn retry(&mut self) -> Value {
        let mut r = json!({"max_attempts": *self.pick(&[1, 2, 3, 5, 50, 1000])});
        if self.chance(0.7) {
            r["backoff"] = self.backoff();
        }
        if self.chance(0.5) {
            r["jitter"] =
                json!(*self.pick(&["none", "full", "equal", "decorrelated", "proportional"]));
            r["jitter_factor"] = json!(self.num(0.0, 1.0));
        }
        if self.chance(0.3) {
            r["retry_on"] = self.outcomes();
        }
        if self.chance(0.4) {
            r["budget"] = self.budget();
        }
        r
    }

    fn breaker(&mut self) -> Value {
        if self.chance(0.5) {
            json!({"kind": "resilience4j",
                   "failure_rate_threshold": self.num(1.0, 100.0),
                   "slow_call_rate_threshold": self.num(1.0, 100.0),
                   "slow_call_duration_threshold_ms": self.num(1.0, 100.0),
                   "sliding_window_type": *self.pick(&["count_based", "time_based"]),
                   "sliding_window_size": self.int(1, 50),
                   "minimum_number_of_calls": self.int(1, 20),
                   "wait_duration_in_open_state_ms": self.num(1.0, 500.0),
                   "permitted_number_of_calls_in_half_open_state": self.int(1, 5),
                   "automatic_transition_from_open_to_half_open_enabled": self.chance(0.5),
                   "max_wait_duration_in_half_open_state_ms": self.num(0.0, 200.0)})
        } else {
            json!({"kind": "consecutive", "failure_threshold": self.int(1, 10),
                   "cooldown_ms": self.num(1.0, 500.0), "max_concurrent_probes": self.int(1, 3),
                   "successes_to_close": self.int(1, 5)})
        }
    }

    fn rate_limit(&mut self) -> Value {
        match self.int(0, 3) {
            0 => {
                json!({"kind": "token_bucket", "rate_per_s": self.num(1.0, 500.0), "burst": self.int(1, 20)})
            }
            1 => {
                json!({"kind": "fixed_window", "limit": self.int(1, 50), "window_ms": self.num(1.0, 1000.0)})
            }
            2 => {
                json!({"kind": "sliding_window", "limit": self.int(1, 50), "window_ms": self.num(1.0, 1000.0)})
            }
            _ => json!({"kind": "resilience4j", "limit_for_period": self.int(1, 50),
                        "limit_refresh_period_ms": self.num(0.1, 100.0), "timeout_ms": self.num(0.0, 50.0)}),
        }
    }

    fn throttle(&mut self) -> Value {
        if self.chance(0.5) {
            json!({"kind": "sre", "k": self.num(1.0, 3.0), "window_s": self.num(1.0, 120.0)})
        } else {
            json!({"kind": "envoy_admission_control", "sampling_window_s": self.num(1.0, 60.0),
                   "sr_threshold": self.num(0.5, 1.0), "aggression": self.num(1.0, 3.0),
                   "max_rejection_probability": self.num(0.1, 0.99)})
        }
    }

    fn deadline(&mut self) -> Value {
        let propagate = self.chance(0.7);
        let absolute = propagate && self.chance(0.3);
        let mut d = json!({"propagate": propagate, "margin_ms": self.num(0.0, 3.0),
                           "min_budget_ms": self.num(0.0, 5.0),
                           "encoding": if absolute { "absolute" } else { "relative" },
                           "subtract_elapsed": absolute || self.chance(0.8)});
        if self.chance(0.4) {
            d["first_attempt_cap_ms"] = json!(self.num(1.0, 100.0));
        }
        d
    }

    fn concurrency_limit(&mut self) -> Value {
        match self.int(0, 2) {
            0 => json!({"kind": "fixed", "limit": self.int(1, 20)}),
            1 => {
                let min = self.int(1, 10);
                let max = min + self.int(0, 50);
                json!({"kind": "aimd", "initial_limit": self.int(min, max), "min_limit": min, "max_limit": max,
                       "backoff_ratio": self.num(0.1, 0.99), "timeout_ms": self.num(1.0, 200.0)})
            }
            _ => {
                let min = self.int(1, 10);
                let max = min + self.int(0, 50);
                json!({"kind": "gradient2", "initial_limit": self.int(min, max), "min_limit": min,
                       "max_concurrency": max, "smoothing": self.num(0.0, 1.0),
                       "rtt_tolerance": self.num(1.0, 3.0)})
            }
        }
    }

    /// A call step from a service to `to` (with `to_shards` shards and
    /// `to_instances` instances).
    fn call(&mut self, to: &str, to_shards: u64) -> Value {
        let mut c = Map::new();
        c.insert("call".into(), json!(to));
        let mut maybe = |g: &mut Gen, p: f64, key: &str, f: &dyn Fn(&mut Gen) -> Value| {
            if g.chance(p) {
                c.insert(key.into(), f(g));
            }
        };
        maybe(self, 0.6, "timeout_ms", &|g| json!(g.num(1.0, 100.0)));
        maybe(self, 0.6, "retry", &|g| g.retry());
        maybe(self, 0.2, "balancer", &|g| {
            json!(*g.pick(&[
                "round_robin",
                "random",
                "least_outstanding",
                "power_of_two_choices"
            ]))
        });
        maybe(self, 0.15, "outlier_detection", &|g| {
            json!({"consecutive_5xx": g.int(1, 5), "interval_ms": g.num(10.0, 1000.0),
                   "base_ejection_time_ms": g.num(10.0, 1000.0), "max_ejection_time_ms": g.num(1000.0, 5000.0),
                   "max_ejection_percent": g.int(0, 100), "always_eject_one_host": g.chance(0.5)})
        });
        maybe(
            self,
            0.1,
            "connect_timeout_ms",
            &|g| json!(g.num(1.0, 50.0)),
        );
        maybe(self, 0.25, "breaker", &|g| g.breaker());
        maybe(
            self,
            0.15,
            "bulkhead",
            &|g| json!({"max_concurrent_calls": g.int(1, 10), "max_wait_ms": g.num(0.0, 50.0)}),
        );
        maybe(self, 0.15, "rate_limit", &|g| g.rate_limit());
        maybe(self, 0.15, "throttle", &|g| g.throttle());
        maybe(self, 0.3, "deadline", &|g| g.deadline());
        maybe(self, 0.1, "hold_worker", &|_| json!(true));
        maybe(self, 0.15, "context", &|g| {
            json!(*g.pick(&["request", "background"]))
        });
        let fan_out = to_shards > 1 && self.chance(0.6);
        if fan_out {
            let mut f = Map::new();
            if self.chance(0.5) {
                f.insert("wait_for".into(), json!(self.int(1, to_shards)));
            }
            if self.chance(0.5) {
                f.insert("deadline_ms".into(), json!(self.num(1.0, 100.0)));
            }
            if self.chance(0.2) {
                f.insert(
                    "correlated_slowdown".into(),
                    json!({"p": self.num(0.0, 1.0), "factor": self.num(1.0, 20.0)}),
                );
            }
            c.insert("fan_out".into(), Value::Object(f));
        }
        if self.chance(0.2) {
            c.insert("idempotent".into(), json!(true));
            let mut h = json!({"max_hedges": self.int(1, 3), "tied": self.chance(0.7),
                               "cancel_delay_ms": self.num(0.0, 5.0),
                               "target": *self.pick(&["other_zone", "any_other"])});
            if self.chance(0.7) {
                h["delay_ms"] = json!(self.num(0.5, 30.0));
            }
            if self.chance(0.4) || h.get("delay_ms").is_none() {
                h["percentile"] = json!(self.num(0.5, 0.99));
                h["window"] = json!(self.int(10, 50));
            }
            if self.chance(0.3) {
                h["max_ratio"] = json!(self.num(0.01, 1.0));
            }
            if self.chance(0.3) {
                h["non_fatal"] = self.outcomes();
            }
            c.insert("hedge".into(), h);
        } else if !fan_out && self.chance(0.12) {
            let mut cache = json!({"keys": self.int(1, 50), "ttl_ms": self.num(1.0, 200.0),
                                   "zipf_s": self.num(0.0, 2.0), "coalesce": self.chance(0.5)});
            if self.chance(0.4) {
                cache["stale_while_revalidate_ms"] = json!(self.num(1.0, 100.0));
            }
            if self.chance(0.3) {
                cache["warm_until_ms"] = json!(self.num(0.0, 500.0));
            }
            c.insert("cache".into(), cache);
        }
        Value::Object(c)
    }

    /// Sometimes, a fallback on `call` (service `i`'s call to service `to`):
    /// on some or all failures, a chain of up to three kinds, a `stale` only
    /// where the call has a cache, a `call` to another later service with a
    /// call's policies.
    fn maybe_fallback(
        &mut self,
        call: &mut Value,
        i: usize,
        to: usize,
        names: &[String],
        shape: &[(u64, u64)],
    ) {
        if !self.chance(0.2) {
            return;
        }
        let mut chain = Vec::new();
        for _ in 0..self.int(1, 3) {
            let others: Vec<usize> = (i + 1..names.len()).filter(|&o| o != to).collect();
            match self.int(0, 3) {
                0 if call.get("cache").is_some() => {
                    chain.push(json!({"kind": "stale", "max_staleness_ms": self.num(1.0, 1000.0)}))
                }
                1 if !others.is_empty() => {
                    let other = others[self.int(0, others.len() as u64 - 1) as usize];
                    let mut step = self.call(&names[other], shape[other].0);
                    let fields = step.as_object_mut().expect("a call is an object");
                    for not_in_a_fallback in
                        ["fan_out", "cache", "hold_worker", "hedge", "idempotent"]
                    {
                        fields.remove(not_in_a_fallback);
                    }
                    fields.insert("kind".into(), json!("call"));
                    chain.push(step);
                }
                2 => {
                    // Nothing after a default or `fail`: never reached.
                    let work = self.chance(0.5).then(|| self.dist(0));
                    chain.push(match work {
                        Some(w) => json!({"kind": "default", "work": w}),
                        None => json!({"kind": "default"}),
                    });
                    break;
                }
                _ => {
                    chain.push(json!({"kind": "fail"}));
                    break;
                }
            }
        }
        let mut fallback = json!({"chain": chain, "degraded": self.chance(0.8)});
        if self.chance(0.4) {
            let mut on = self.outcomes();
            if let Some(on) = on.as_array_mut() {
                on.push(json!(*self.pick(&[
                    "breaker_open",
                    "bulkhead_full",
                    "throttled"
                ])));
            }
            fallback["on"] = on;
        }
        call["fallback"] = fallback;
    }

    /// A parallel step of service `i`: 2 to 4 branches, each a call to a
    /// later service with the policies a branch takes, all in one context;
    /// optional branches, or `wait_for`, and a deadline, by chance.
    fn parallel(&mut self, i: usize, names: &[String], shape: &[(u64, u64)]) -> Value {
        let n = names.len() as u64;
        let count = self.int(2, 4);
        let context = *self.pick(&["request", "background"]);
        let first_k = self.chance(0.3);
        let mut branches = Vec::new();
        for b in 0..count {
            let to = self.int(i as u64 + 1, n - 1) as usize;
            let mut branch = self.call(&names[to], shape[to].0);
            let fields = branch.as_object_mut().expect("a call is an object");
            for not_in_a_branch in ["fan_out", "cache", "hold_worker"] {
                fields.remove(not_in_a_branch);
            }
            self.maybe_fallback(&mut branch, i, to, names, shape);
            let fields = branch.as_object_mut().expect("a call is an object");
            fields.insert("context".into(), json!(context));
            // At least one branch stays required.
            if !first_k && b > 0 && self.chance(0.3) {
                fields.insert("optional".into(), json!(true));
            }
            branches.push(branch);
        }
        let mut p = json!({"branches": branches});
        if first_k {
            p["wait_for"] = json!(self.int(1, count));
        }
        if self.chance(0.3) {
            p["deadline_ms"] = json!(self.num(1.0, 100.0));
        }
        json!({"parallel": p})
    }

    fn admission(&mut self, classes: bool) -> Value {
        let mut a = Map::new();
        a.insert(
            "drop_fraction".into(),
            json!(if self.chance(0.15) {
                self.num(0.0, 0.5)
            } else {
                0.0
            }),
        );
        if self.chance(0.15) {
            a.insert(
                "drop_expired".into(),
                json!({"margin_ms": self.num(0.0, 5.0)}),
            );
        }
        if self.chance(0.1) {
            a.insert("rate_limit".into(), self.rate_limit());
        }
        if self.chance(0.15) {
            a.insert("concurrency_limit".into(), self.concurrency_limit());
        }
        if self.chance(0.1) {
            a.insert(
                "codel".into(),
                json!({"target_ms": self.num(1.0, 20.0), "interval_ms": self.num(5.0, 200.0)}),
            );
        }
        if self.chance(0.1) {
            a.insert("retry_after_ms".into(), json!(self.num(1.0, 100.0)));
        }
        if classes && self.chance(0.2) {
            a.insert("shed_classes".into(), json!({"low": self.int(0, 10)}));
        }
        Value::Object(a)
    }

    fn model(&mut self, case: u64) -> Value {
        let n = self.int(1, 4) as usize;
        let names: Vec<String> = (0..n).map(|i| format!("s{i}")).collect();
        // Shards and instances first: call steps depend on their callee's.
        let shape: Vec<(u64, u64)> = (0..n)
            .map(|_| {
                let shards = if self.chance(0.2) { self.int(2, 3) } else { 1 };
                let replicas = self.int(1, 3);
                (shards, shards * replicas)
            })
            .collect();
        let hosts = self.chance(0.25);
        let classes = self.chance(0.3);
        // The service timelines and variants change.
        let target = self.int(0, n as u64 - 1) as usize;
        let target_down = target_has_down(self, &shape, target);
        let mut services = Vec::new();
        let mut target_cpu = false;
        for i in 0..n {
            let (shards, instances) = shape[i];
            let mut s = Map::new();
            s.insert("name".into(), json!(names[i]));
            if self.chance(0.7) {
                s.insert("workers".into(), json!(self.int(1, 8)));
            }
            if self.chance(0.3) {
                s.insert("queue_capacity".into(), json!(self.int(0, 20)));
            }
            if self.chance(0.1) {
                s.insert("default_deadline_ms".into(), json!(self.num(1.0, 200.0)));
            }
            if self.chance(0.3) {
                let discipline = match self.int(0, 3) {
                    0 => json!({"kind": "fifo"}),
                    1 => json!({"kind": "lifo"}),
                    2 => json!({"kind": "adaptive_lifo", "above": self.int(0, 10)}),
                    _ if classes => json!({"kind": "priority", "order": ["low"]}),
                    _ => json!({"kind": "lifo"}),
                };
                s.insert("queue_discipline".into(), discipline);
            }
            if self.chance(0.15) {
                s.insert(
                    "contention".into(),
                    json!({"per_request": self.num(0.0, 0.5), "exponent": self.num(1.0, 3.0)}),
                );
            }
            if self.chance(0.2) {
                s.insert("cpu".into(), json!({"cores": self.int(1, 4)}));
                target_cpu |= i == target;
            }
            s.insert("instances".into(), json!(instances));
            if shards > 1 {
                s.insert("shards".into(), json!(shards));
            }
            if i == target && target_down {
                s.insert("instances_down".into(), json!(self.int(1, instances - 1)));
                s.insert(
                    "down_mode".into(),
                    json!(*self.pick(&["refuse", "blackhole"])),
                );
            }
            if hosts && self.chance(0.5) {
                s.insert(
                    "placement".into(),
                    json!(*self.pick(&["spread", "colocated"])),
                );
            }
            if i != target && self.chance(0.1) {
                let replicas = instances / shards;
                let f: Vec<f64> = (0..replicas).map(|_| self.num(1.0, 4.0)).collect();
                s.insert("replica_work_factor".into(), json!(f));
            }
            if self.chance(0.1) {
                s.insert("clock_offset_ms".into(), json!(self.num(-50.0, 50.0)));
                s.insert("clock_spread_ms".into(), json!(self.num(0.0, 20.0)));
            }
            s.insert("admission".into(), self.admission(classes));
            let mut steps = Vec::new();
            for _ in 0..self.int(0, 3) {
                if i + 1 < n && self.chance(0.55) {
                    let to = self.int(i as u64 + 1, n as u64 - 1) as usize;
                    if self.chance(0.2) {
                        steps.push(self.parallel(i, &names, &shape));
                    } else {
                        let mut call = self.call(&names[to], shape[to].0);
                        self.maybe_fallback(&mut call, i, to, &names, &shape);
                        steps.push(call);
                    }
                } else {
                    let mut w = json!({"work": self.dist(0)});
                    if self.chance(0.2) {
                        w["on_cancel"] = json!(*self.pick(&["finish", "stop"]));
                    }
                    if self.chance(0.1) {
                        w["timeout_ms"] = json!(self.num(1.0, 50.0));
                    }
                    if self.chance(0.2) {
                        let mut e = json!({"p": self.num(0.0, 1.0)});
                        if self.chance(0.4) {
                            e["work"] = self.dist(1);
                        } else if self.chance(0.5) {
                            e["fraction"] = json!(self.num(0.0, 1.0));
                        }
                        if self.chance(0.3) {
                            e["status"] = json!(*self.pick(&["error", "rejected"]));
                        }
                        w["error"] = e;
                    }
                    if self.chance(0.15) {
                        w["drawn_at"] = json!(*self.pick(&["start", "admission"]));
                    }
                    steps.push(w);
                }
            }
            s.insert("steps".into(), json!(steps));
            services.push(Value::Object(s));
        }
        let mut workloads = Vec::new();
        for w in 0..self.int(1, 2) {
            let arrival = match self.int(0, 4) {
                4 => match self.int(0, 3) {
                    0 => json!({"kind": "stages", "start_rate_per_s": self.num(0.0, 100.0),
                                "stages": [{"duration_s": self.num(0.0, 0.5), "target_rate_per_s": self.num(10.0, 500.0)},
                                           {"duration_s": self.num(0.0, 0.5), "target_rate_per_s": self.num(0.0, 500.0)}]}),
                    1 => {
                        let mean = self.num(10.0, 500.0);
                        json!({"kind": "sinusoid", "mean_rate_per_s": mean,
                               "amplitude_rate_per_s": self.num(0.0, mean), "period_s": self.num(0.01, 2.0)})
                    }
                    2 => json!({"kind": "bursts", "base_rate_per_s": self.num(0.0, 100.0),
                                "burst_rate_per_s": self.num(10.0, 1000.0), "every_s": 0.2, "length_s": 0.05}),
                    _ => json!({"kind": "trace", "bucket_s": self.num(0.01, 0.2),
                                "rates_per_s": [self.num(0.0, 300.0), self.num(10.0, 300.0), 0]}),
                },
                0 => json!({"kind": "poisson", "rate_per_s": self.num(10.0, 500.0)}),
                1 => json!({"kind": "constant", "rate_per_s": self.num(10.0, 500.0)}),
                2 => json!({"kind": "at_once"}),
                _ => json!({"kind": "closed_loop", "users": self.int(1, 10),
                            "think": {"kind": "exponential", "mean_ms": self.num(1.0, 50.0)}}),
            };
            let mut wl = json!({"name": format!("w{w}"), "target": names[0],
                                "arrival": arrival, "requests": self.int(1, 60)});
            if self.chance(0.3) {
                wl["duration_s"] = json!(self.num(0.01, 1.0));
            }
            // Copies of the workload: every setting and timeline change of
            // it held once per copy (and shared between them).
            if self.chance(0.15) {
                wl["count"] = json!(self.int(2, 4));
            }
            if self.chance(0.4) {
                wl["timeout_ms"] = json!(self.num(1.0, 200.0));
            }
            if self.chance(0.3) {
                wl["deadline_ms"] = json!(self.num(1.0, 200.0));
            }
            if self.chance(0.3) {
                wl["retry"] = self.retry();
            }
            if classes {
                wl["class"] = json!(if w == 0 { "low" } else { "high" });
            }
            workloads.push(wl);
        }
        let mut m = json!({"name": format!("fuzz-{case}"), "seed": self.int(0, 1000),
                           "workloads": workloads, "services": services,
                           "limits": {"max_events": 50_000, "max_in_flight": 2_000,
                                      "max_series_rows": 20_000}});
        if self.chance(0.3) {
            m["network"] = json!({"one_way": self.dist(1)});
        }
        if hosts {
            let mut h = json!({"zones": self.int(1, 3), "per_zone": self.int(1, 3)});
            if self.chance(0.5) {
                h["slow"] = json!({"mean_gap_s": self.num(0.01, 1.0), "mean_length_s": self.num(0.01, 0.5),
                                   "factor": self.num(1.0, 10.0)});
            }
            m["hosts"] = h;
        }
        if self.chance(0.2) {
            m["horizon_s"] = json!(self.num(0.05, 2.0));
        }
        if self.chance(0.3) {
            m["timeseries"] = json!({"bucket_s": *self.pick(&[0.01, 0.1, 1.0])});
        }
        // What timelines and variants change: paths every model has.
        let shards = shape[target].0;
        let target = names[target].clone();
        // A change, and whether it may ramp (a number there to ramp from).
        let change = |g: &mut Gen| -> (Map<String, Value>, bool) {
            let mut set = Map::new();
            let kind = g.int(0, 9);
            let service = format!("services[{target}]");
            match kind {
                0 => set.insert(format!("{service}.workers"), json!(g.int(1, 8))),
                1 if !target_down => {
                    set.insert(format!("{service}.instances"), json!(g.int(1, 4) * shards))
                }
                3 => set.insert("workloads[w0].timeout_ms".into(), json!(g.num(1.0, 200.0))),
                4 => set.insert("workloads[w0].retry".into(), g.retry()),
                5 => set.insert("workloads[w0].deadline_ms".into(), json!(g.num(1.0, 200.0))),
                6 => set.insert(
                    format!("{service}.admission.concurrency_limit"),
                    g.concurrency_limit(),
                ),
                7 => set.insert(format!("{service}.queue_capacity"), json!(g.int(0, 10))),
                8 => set.insert(format!("{service}.admission.rate_limit"), g.rate_limit()),
                9 => set.insert("workloads[w0].breaker".into(), g.breaker()),
                _ => set.insert(
                    format!("{service}.admission.drop_fraction"),
                    json!(g.num(0.0, 0.9)),
                ),
            };
            // A service with a cpu may have its cores changed (never ramped).
            if target_cpu && g.chance(0.3) {
                set.insert(format!("{service}.cpu.cores"), json!(g.int(1, 4)));
                return (set, false);
            }
            // Only drop_fraction (kinds 2, and 1 when instances stay) ramps.
            (set, kind == 2 || (kind == 1 && target_down))
        };
        let entries = self.int(0, 3);
        if entries > 0 && self.chance(0.6) {
            let mut timeline = Vec::new();
            let mut at = 0.0;
            for e in 0..entries {
                at += self.num(0.0, 0.3);
                let (set, may_ramp) = change(self);
                let mut entry = json!({"name": format!("t{e}"), "at_s": at, "set": set});
                if may_ramp && self.chance(0.3) {
                    entry["over_s"] = json!(self.int(1, 3));
                }
                timeline.push(entry);
            }
            if entries >= 2 && self.chance(0.5) {
                timeline[0]["role"] = json!("trigger_start");
                timeline[1]["role"] = json!("trigger_end");
                if self.chance(0.7) {
                    m["metastability"] = json!({});
                }
            }
            m["timeline"] = json!(timeline);
        }
        let entries = m["timeline"].as_array().map_or(0, Vec::len) as u64;
        let variants = self.int(0, 3);
        if variants > 0 {
            // A variant changes the model from the start, moves or reshapes
            // an entry of the timeline, or adds one (an intervention): then
            // it shares its past with the others until the first change
            // that differs, and the CLI's run forks it there.
            let vs: Vec<Value> = (0..variants)
                .map(|v| {
                    let set = if entries > 0 && self.chance(0.2) {
                        let entry = format!("timeline[t{}]", self.int(0, entries - 1));
                        if self.chance(0.5) {
                            json!({format!("{entry}.at_s"): self.num(0.0, 1.0)})
                        } else {
                            json!({format!("{entry}.role"): "intervention"})
                        }
                    } else if self.chance(0.4) {
                        let at = self.num(0.0, 1.0);
                        json!({"timeline[+]": {"name": format!("late{v}"), "at_s": at, "set": change(self).0}})
                    } else {
                        Value::Object(change(self).0)
                    };
                    json!({"name": format!("v{v}"), "set": set})
                })
                .collect();
            m["variants"] = json!(vs);
        }
        // Now and then, every timeout and deadline twenty times tighter: the
        // paths of giving up (cancellation, expiry, deadlines spent before a
        // step) everywhere at once.
        if self.chance(0.2) {
            squeeze(&mut m);
        }
        m
    }
}

/// Divides every timeout and deadline in `v` by 20.
fn squeeze(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (k, x) in map.iter_mut() {
                let time = k.ends_with("timeout_ms") || k.ends_with("deadline_ms");
                match (time, x.as_f64()) {
                    (true, Some(ms)) => {
                        *x = json!(((ms / 20.0) * 1000.0).round().max(1.0) / 1000.0)
                    }
                    _ => squeeze(x),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(squeeze),
        _ => {}
    }
}

/// Whether the changed service has instances down (then its instance count
/// stays: a change below `instances_down` would be refused).
fn target_has_down(g: &mut Gen, shape: &[(u64, u64)], target: usize) -> bool {
    shape[target].1 > 1 && g.chance(0.15)
}

/// Every consistency check of one variant's report.
fn check_report(v: &VariantReport) -> Result<(), String> {
    let answered = v.succeeded + v.failed + v.unanswered;
    if answered != v.requests {
        return Err(format!(
            "{}: succeeded {} + failed {} + unanswered {} != requests {}",
            v.variant, v.succeeded, v.failed, v.unanswered, v.requests
        ));
    }
    let f = &v.failed_by_reason;
    let by_reason = f.timeout
        + f.deadline_exceeded
        + f.rejected
        + f.error
        + f.connection_refused
        + f.breaker_open
        + f.rate_limited
        + f.bulkhead_full
        + f.throttled;
    if by_reason != v.failed {
        return Err(format!(
            "{}: failures by reason sum to {by_reason}, failed {}",
            v.variant, v.failed
        ));
    }
    let workload_requests: u64 = v.workloads.iter().map(|w| w.requests).sum();
    if workload_requests != v.requests {
        return Err(format!(
            "{}: workloads' requests {workload_requests} != {}",
            v.variant, v.requests
        ));
    }
    for (what, q) in std::iter::once(("latency_ms", &v.latency_ms))
        .chain(std::iter::once(("ok_latency_ms", &v.ok_latency_ms)))
        .chain(
            v.workloads
                .iter()
                .map(|w| ("workload latency_ms", &w.latency_ms)),
        )
    {
        // A latency that does not exist is `None`, never zeros.
        let Some(q) = q else { continue };
        let chain = [q.p50, q.p90, q.p99, q.p999, q.max];
        if chain.iter().any(|x| !x.is_finite()) || chain.windows(2).any(|w| w[0] > w[1]) {
            return Err(format!("{}: {what} not monotone: {chain:?}", v.variant));
        }
    }
    if v.ok_latency_ms.is_some() != (v.succeeded > 0) {
        return Err(format!(
            "{}: ok latency {:?} with {} successes",
            v.variant, v.ok_latency_ms, v.succeeded
        ));
    }
    if v.latency_ms.is_some() != (v.succeeded + v.failed > 0) {
        return Err(format!(
            "{}: latency {:?} with {} answered",
            v.variant,
            v.latency_ms,
            v.succeeded + v.failed
        ));
    }
    for w in &v.workloads {
        if w.succeeded > w.requests {
            return Err(format!(
                "{}: workload {} succeeded {} > requests {}",
                v.variant, w.name, w.succeeded, w.requests
            ));
        }
    }
    Ok(())
}

fn report_bytes(r: &RunReport) -> String {
    format!(
        "{}\n{}\n{}",
        serde_json::to_string(r).expect("a report serializes"),
        r.summary_csv().expect("summary.csv"),
        r.timeseries_csv().expect("timeseries.csv")
    )
}

/// Generates, loads and checks case `i` of `seed`: `Ok(None)` if the model
/// was invalid (skipped), else `Ok` of how many of its variants the CLI's
/// run continues from another's; `Err` with the reason on a failure.
fn run_case(seed: u64, i: u64, pool: &rayon::ThreadPool) -> Result<Option<usize>, String> {
    let mut g = Gen {
        rng: StreamKey::root(seed).label("fuzz-model").index(i).rng(),
    };
    let doc = g.model(i);
    let text = doc.to_string();
    let loaded = match catch_unwind(|| load_model(&text, &[], None)) {
        Ok(Ok(loaded)) => loaded,
        Ok(Err(e)) => {
            if std::env::var_os("STORMSIM_FUZZ_SHOW_INVALID").is_some() {
                eprintln!("case {i} invalid: {}", e.problems[0]);
            }
            return Ok(None);
        }
        Err(_) => return Err("load_model panicked".into()),
    };
    if let Some(dir) = std::env::var_os("STORMSIM_FUZZ_WRITE") {
        let file = std::path::Path::new(&dir).join(format!("fuzz-{seed}-{i}.json"));
        std::fs::write(&file, &text).map_err(|e| format!("{}: {e}", file.display()))?;
    }
    let first = catch_unwind(AssertUnwindSafe(|| run_model(&loaded)))
        .map_err(|p| format!("the run panicked: {}", panic_text(&p)))?;
    for v in &first.variants {
        check_report(v)?;
    }
    let bytes = report_bytes(&first);
    // A second run as the CLI runs it: the variants on two threads, those
    // that share their past with another continuing its run, collected by
    // index. The same bytes.
    let parallel = pool.install(|| run_model_parallel(&loaded));
    if report_bytes(&parallel) != bytes {
        return Err(
            "a second run, on two threads and forked as the CLI runs it, gave other bytes".into(),
        );
    }
    // A third with every message queued, none delivered at once
    // (`Simulator::deliver_last` is a shortcut, not a semantics), on the
    // general engine even for a variant that took the fast path: the same
    // bytes, but for the events count of one that did (the fast path
    // counts its attempts).
    let queued = RunReport {
        variants: loaded
            .variants
            .iter()
            .zip(&first.variants)
            .map(|(v, first)| {
                let mut report = Simulator::new(&v.model, &v.changes)
                    .queue_every_message()
                    .run(&v.name);
                let took_fast_path = first
                    .events_by_kind
                    .iter()
                    .any(|(kind, _)| *kind == stormsim_sim::fast::ATTEMPTS_RESOLVED);
                if took_fast_path {
                    report.events = first.events;
                    report.events_by_kind = first.events_by_kind.clone();
                }
                // Judged as every run is: against its twin without the
                // trigger where that can change the verdict.
                stormsim_sim::twin::judge_against_twin(v, report)
            })
            .collect(),
        ..run_model_header(&loaded)
    };
    if report_bytes(&queued) != bytes {
        return Err("a third run, with every message queued, gave other bytes".into());
    }
    Ok(Some(fork::plan(&loaded.variants).iter().flatten().count()))
}

fn run_model_header(loaded: &stormsim_model::LoadedModel) -> RunReport {
    RunReport {
        model: loaded.name.clone(),
        description: loaded.description.clone(),
        seed: loaded.seed,
        variants: Vec::new(),
    }
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// A failing case's report: its number, how to run it alone, why, and the
/// model (also written to the temporary folder, to run with `stormsim run`).
fn failure_report(seed: u64, i: u64, why: &str) -> String {
    let mut g = Gen {
        rng: StreamKey::root(seed).label("fuzz-model").index(i).rng(),
    };
    let model = g.model(i).to_string();
    let file = std::env::temp_dir().join(format!("stormsim-fuzz-{seed}-{i}.json"));
    let _ = std::fs::write(&file, &model);
    format!(
        "case {i} (STORMSIM_FUZZ_SEED={seed} STORMSIM_FUZZ_FIRST={i} STORMSIM_FUZZ_CASES=1; model in {}): {}\n{model}",
        file.display(),
        why.replace('\n', " ")
    )
}

/// The prefix of the fuzzer's threads' names, whose panics (caught, and
/// reported with their model) its panic hook keeps quiet.
const FUZZ_THREAD: &str = "fuzz-";

#[test]
fn random_valid_models_run_without_panic_and_add_up() {
    let cases = env_u64("STORMSIM_FUZZ_CASES", DEFAULT_CASES);
    let seed = env_u64("STORMSIM_FUZZ_SEED", 1);
    let first = env_u64("STORMSIM_FUZZ_FIRST", 0);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .thread_name(|i| format!("{FUZZ_THREAD}pool-{i}"))
        .build()
        .expect("a pool of two threads");
    // Panics are caught and reported with their model; keep the default
    // hook's message from drowning the report, on the fuzzer's own threads
    // only: the other tests share this process, and keep theirs.
    let default_hook = std::sync::Arc::new(std::panic::take_hook());
    let hook = std::sync::Arc::clone(&default_hook);
    std::panic::set_hook(Box::new(move |info| {
        if !std::thread::current()
            .name()
            .is_some_and(|name| name.starts_with(FUZZ_THREAD))
        {
            hook(info);
        }
    }));
    let progress = std::env::var_os("STORMSIM_FUZZ_PROGRESS").is_some();
    // The cases are independent: each core takes the next one not yet taken.
    // Which core ran a case changes nothing in it (a case is a pure function
    // of its seed and number), and failures are reported in case order.
    let next = AtomicU64::new(first);
    let failed = AtomicU64::new(0);
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let (valid, forked, mut failures) = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..cores)
            .map(|k| {
                let thread = std::thread::Builder::new().name(format!("{FUZZ_THREAD}case-{k}"));
                thread
                    .spawn_scoped(scope, || {
                        let (mut valid, mut forked, mut failures) = (0u64, 0u64, Vec::new());
                        // Up to five failures are enough to read; stop there.
                        while failed.load(Ordering::Relaxed) < 5 {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            if i >= first + cases {
                                break;
                            }
                            if progress && i.is_multiple_of(100) {
                                eprintln!("fuzz: case {i}");
                            }
                            match run_case(seed, i, &pool) {
                                Ok(Some(forks)) => {
                                    valid += 1;
                                    forked += forks as u64;
                                }
                                Ok(None) => {}
                                Err(why) => {
                                    failed.fetch_add(1, Ordering::Relaxed);
                                    failures.push((i, failure_report(seed, i, &why)));
                                }
                            }
                        }
                        (valid, forked, failures)
                    })
                    .expect("a fuzz worker thread")
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("a fuzz worker"))
            .fold((0, 0, Vec::new()), |(v, k, mut f), (wv, wk, wf)| {
                f.extend(wf);
                (v + wv, k + wk, f)
            })
    });
    std::panic::set_hook(Box::new(move |info| default_hook(info)));
    failures.sort_by_key(|(i, _)| *i);
    eprintln!("fuzz: {cases} cases from {first} (seed {seed}) on {cores} threads, {valid} valid models run, {forked} variants forked");
    let failures: Vec<String> = failures.into_iter().map(|(_, f)| f).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // The generator is only useful if most of what it writes is valid
    // (judged over enough cases to tell).
    assert!(
        cases < 1_000 || valid * 10 >= cases * 7,
        "only {valid} of {cases} generated models were valid"
    );
    // Nor are its forks checked unless some variants fork.
    assert!(
        cases < 1_000 || forked * 50 >= cases,
        "only {forked} variants forked in {cases} cases"
    );
}
