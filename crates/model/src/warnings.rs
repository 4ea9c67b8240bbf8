//! What a valid model says that is almost certainly not meant: not an error
//! (the model runs, and means something), but worth a line from `check` and
//! `run`. Warnings never change an exit code.
//!
//! Each warning has a short stable name ([`WARNINGS`]), shown in its line
//! (`warning[envoy-budget-percent]: PATH: ...`), by which `--no-warnings=NAME`
//! silences it. Each is decided so that it is right when it fires: where a
//! rule needs a bound (the shortest round trip, the most traffic that can
//! reach a rate limit), it takes the one that makes it fire least.
//!
//! A warning looks at every variant; one that holds in some variants only
//! says which. Where timeline changes matter (a change may add the replicas
//! a hedge needs, slow the network, raise the traffic), the rule says how.

use crate::{
    Backoff, BudgetSpec, CallPolicy, Change, Dist, FallbackUse, LoadedModel, Model, RateLimitSpec,
    Step, TimelineRole, Variant,
};
use std::fmt;
use stormsim_engine::SimDuration;

/// Every warning's name, with what it says (for `--no-warnings=NAME` and the
/// docs).
pub const WARNINGS: &[(&str, &str)] = &[
    (
        "fallback-guesses-a-write",
        "a `stale` or `default` fallback on a call marked `idempotent: false` (a write: fail explicitly, never guess)",
    ),
    (
        "hedge-never-fires",
        "a hedge to a callee with one replica (of its shard, for a fan-out)",
    ),
    (
        "envoy-budget-percent",
        "an Envoy retry budget's budget_percent below 1 (it is a percent, not a fraction)",
    ),
    (
        "timeout-below-round-trip",
        "an attempt timeout or a workload's deadline shorter than the shortest network round trip",
    ),
    (
        "trigger-without-metastability",
        "a timeline with a trigger window (trigger_start and trigger_end) in a model without a metastability block (no verdict comes)",
    ),
    (
        "rate-limit-never-binds",
        "a rate limit whose sustained rate is above the most traffic that can reach it",
    ),
    (
        "horizon-before-timeline",
        "a timeline change at or after horizon_s (the run stops first)",
    ),
    (
        "uncapped-backoff-without-horizon",
        "an exponential backoff without cap_ms whose last retry waits over a day, in a model without horizon_s (the run lasts as long)",
    ),
    (
        "arrivals-outlast-series-limit",
        "a workload that keeps arriving, in a model without horizon_s, longer than limits.max_series_rows lets the time series grow (the run stops there, partial)",
    ),
    (
        "arrivals-outnumber-max-events",
        "workloads that surely bring more requests before the run ends than limits.max_events allows events (each is one at least: the run stops there, partial)",
    ),
    (
        "set-undone-by-ramp",
        "a timeline step change that sets a value a ramp already moving sets again at its next step (steps apply in time order: the ramp's wins)",
    ),
];

/// One warning: its name (one of [`WARNINGS`]), the JSON path it is about,
/// and what it says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// Its stable name, one of [`WARNINGS`].
    pub name: &'static str,
    /// The JSON path it is about (names for indices where elements have
    /// names: `services[api].steps[0].timeout_ms`).
    pub path: String,
    /// What is almost certainly not meant, and why.
    pub message: String,
}

impl Warning {
    fn new(name: &'static str, path: impl Into<String>, message: impl Into<String>) -> Warning {
        debug_assert!(WARNINGS.iter().any(|(n, _)| *n == name), "{name}");
        Warning {
            name,
            path: path.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Warning {
    /// `warning[NAME]: PATH: MESSAGE`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "warning[{}]: {}: {}", self.name, self.path, self.message)
    }
}

/// Every warning of a loaded model, rule by rule, each in model order, each
/// at the JSON path it is about (with the variants it holds in, when not all
/// of them). Library API: what `stormsim check` and `run` print, and the
/// Python package returns.
pub fn warnings(loaded: &LoadedModel) -> Vec<Warning> {
    let rules: [fn(&Variant) -> Vec<Warning>; 11] = [
        hedges_that_never_fire,
        fallbacks_that_guess_a_write,
        envoy_budget_percent,
        timeouts_below_round_trip,
        trigger_without_metastability,
        rate_limits_that_never_bind,
        horizon_before_timeline,
        uncapped_backoff_without_horizon,
        arrivals_outlast_series_limit,
        arrivals_outnumber_max_events,
        sets_undone_by_ramps,
    ];
    let mut found: Vec<(Warning, Vec<&str>)> = Vec::new();
    for rule in rules {
        let start = found.len();
        for variant in &loaded.variants {
            // A workload's copies (`count`) warn at its one path, once.
            for warning in rule(variant) {
                match found[start..].iter_mut().find(|(w, _)| *w == warning) {
                    Some((_, names)) if names.last() == Some(&variant.name.as_str()) => {}
                    Some((_, names)) => names.push(&variant.name),
                    None => found.push((warning, vec![&variant.name])),
                }
            }
        }
    }
    let all = loaded.variants.len();
    found
        .into_iter()
        .map(|(mut w, names)| {
            if names.len() < all {
                w.message = format!("{} (variants: {})", w.message, names.join(", "));
            }
            w
        })
        .collect()
}

/// The models a variant's run goes through: as it starts, then after each
/// timeline change (each step of a ramp).
fn models_of(variant: &Variant) -> Vec<&Model> {
    std::iter::once(&variant.model)
        .chain(variant.changes.iter().map(|c| &c.model))
        .collect()
}

/// Where a call edge is in a model: the same place in every model of a run
/// (a timeline change keeps the shape of the system).
#[derive(Clone, Copy)]
enum EdgeAt {
    /// A workload's own edge to its target.
    Workload(usize),
    /// Service `s`'s step `j`, branch `b` (0 for a call step).
    Step(usize, usize, usize),
}

impl EdgeAt {
    fn policy(self, model: &Model) -> &CallPolicy {
        match self {
            EdgeAt::Workload(w) => &model.workloads[w].edge,
            EdgeAt::Step(s, j, b) => &model.services[s].steps[j].calls()[b],
        }
    }
}

/// Every call edge of `model` with its JSON path, in model order: the
/// workloads', then each service's steps and parallel branches.
fn edges(model: &Model) -> Vec<(String, EdgeAt)> {
    let mut out: Vec<(String, EdgeAt)> = (model.workloads.iter().enumerate())
        .map(|(w, workload)| {
            (
                format!("workloads[{}]", workload.model_name),
                EdgeAt::Workload(w),
            )
        })
        .collect();
    for (s, service) in model.services.iter().enumerate() {
        for (j, step) in service.steps.iter().enumerate() {
            let at = format!("services[{}].steps[{j}]", service.name);
            match step {
                Step::Work { .. } => {}
                Step::Call(_) => out.push((at, EdgeAt::Step(s, j, 0))),
                Step::Parallel(p) => out.extend((0..p.branches.len()).map(|b| {
                    (
                        format!("{at}.parallel.branches[{b}]"),
                        EdgeAt::Step(s, j, b),
                    )
                })),
            }
        }
    }
    out
}

/// A hedge goes to another replica than those its try is on: where the
/// callee has one (of its shard, for a fan-out's child) in every model of the
/// run (a timeline change may add the replicas it needs), no hedge is ever
/// sent.
fn hedges_that_never_fire(variant: &Variant) -> Vec<Warning> {
    let models = models_of(variant);
    let first = models[0];
    let mut out = Vec::new();
    for (at, edge) in edges(first) {
        let policy = edge.policy(first);
        if policy.hedge.is_none() {
            continue;
        }
        let fan_out = policy.fan_out.is_some();
        let never = models.iter().all(|m| {
            let callee = &m.services[edge.policy(m).to];
            let choices = if fan_out {
                callee.replicas()
            } else {
                callee.instances
            };
            choices <= 1
        });
        if never {
            let callee = &first.services[policy.to];
            let what = if fan_out {
                format!("each shard of {:?} has one replica", callee.name)
            } else {
                format!("{:?} has one instance", callee.name)
            };
            out.push(Warning::new(
                "hedge-never-fires",
                format!("{at}.hedge"),
                format!(
                    "this hedge never fires: a hedge goes to another replica than its try's, and {what}"
                ),
            ));
        }
    }
    out
}

/// A write's answer cannot be made up: a stale value or a default in place
/// of a failed write tells the user it happened when it did not (S5: "never
/// guess for anything that moves money"). A `call` fallback (another
/// service that can do the write) and `fail` are fine.
fn fallbacks_that_guess_a_write(variant: &Variant) -> Vec<Warning> {
    edge_warnings(variant, "fallback-guesses-a-write", |at, policy| {
        let fallback = policy.fallback.as_deref().filter(|f| f.for_a_write)?;
        let i = (fallback.chain.iter())
            .position(|u| matches!(u, FallbackUse::Stale { .. } | FallbackUse::Default { .. }))?;
        Some((
            format!("{at}.fallback.chain[{i}]"),
            "a write (`idempotent: false`) answered with a stale value or a default: the caller is told it happened when it did not; fail explicitly (`fail`) or call a service that can do it".into(),
        ))
    })
}

/// Envoy's `budget_percent` is a percent (Envoy's `Percent`, 20.0 = 20%):
/// a value above 0 and below 1 reads as a fraction written where a percent
/// was meant (0.2 for 20%). Checked in the model as the variant starts and
/// as each timeline entry leaves it (a ramp's last step: its steps on the
/// way pass through small values by design).
fn envoy_budget_percent(variant: &Variant) -> Vec<Warning> {
    edge_warnings(variant, "envoy-budget-percent", |at, policy| {
        let Some(BudgetSpec::Envoy { budget_percent, .. }) = &policy.retry.budget else {
            return None;
        };
        (*budget_percent > 0.0 && *budget_percent < 1.0).then(|| {
            (
                format!("{at}.retry.budget.budget_percent"),
                format!(
                    "{p} is {p}% of active requests: Envoy's budget_percent is a percent, not a fraction (for {pct}%, write {pct})",
                    p = number(*budget_percent),
                    pct = number(budget_percent * 100.0),
                ),
            )
        })
    })
}

/// A rule about call edges, looked for in the model as the variant starts
/// and as each timeline entry leaves it: `fires` gives the path and message
/// of an edge it fires on, said once per path, where it first fires.
fn edge_warnings(
    variant: &Variant,
    name: &'static str,
    fires: impl Fn(&str, &CallPolicy) -> Option<(String, String)>,
) -> Vec<Warning> {
    let mut out: Vec<Warning> = Vec::new();
    for (model, entry) in start_and_entry_ends(variant) {
        for (at, edge) in edges(model) {
            let Some((path, message)) = fires(&at, edge.policy(model)) else {
                continue;
            };
            if out.iter().any(|w| w.path == path) {
                continue;
            }
            let since = entry.map_or(String::new(), |entry| {
                format!(" (from timeline entry {entry:?} on)")
            });
            out.push(Warning::new(name, path, format!("{message}{since}")));
        }
    }
    out
}

/// The model as the variant starts, then the model each timeline entry
/// leaves (a ramp: its last step), with the entry's name.
///
/// From the last change back, so that an entry's last step is the first of
/// its name met: n log n in the timeline's length, not n² (a model may have
/// tens of thousands of entries).
fn start_and_entry_ends(variant: &Variant) -> Vec<(&Model, Option<&str>)> {
    let mut seen = std::collections::BTreeSet::new();
    let mut ends: Vec<(&Model, Option<&str>)> = variant
        .changes
        .iter()
        .rev()
        .filter(|c| seen.insert(c.name.as_str()))
        .map(|c| (&c.model, Some(c.name.as_str())))
        .collect();
    ends.push((&variant.model, None));
    ends.reverse();
    ends
}

/// The least a draw of `dist` can be, in ms: the bottom of its support (0
/// where that is unbounded below, as for a log-normal or an exponential).
fn least_ms(dist: &Dist) -> f64 {
    match dist {
        Dist::Constant(d) => d.as_ms(),
        Dist::Uniform { min_ms, .. } => *min_ms,
        Dist::Mixture { parts, .. } => parts.iter().map(least_ms).fold(f64::INFINITY, f64::min),
        Dist::Empirical { ms, .. } => ms.first().copied().unwrap_or(0.0),
        Dist::Pareto { scale_ms, .. } => *scale_ms,
        Dist::Exponential { .. }
        | Dist::LogNormal { .. }
        | Dist::TruncatedNormal { .. }
        | Dist::Gamma { .. }
        | Dist::Weibull { .. } => 0.0,
    }
    .max(0.0)
}

/// An attempt crosses the network twice (its request, its answer), each a
/// draw of `network.one_way`: an attempt timeout (or a workload's deadline)
/// below twice the least a draw can be is over before any answer can come,
/// whatever the callee does. The least, not the mean: a timeout that some
/// attempts can meet is not flagged (so a network whose draws can be near 0,
/// a log-normal, flags nothing). It warns only where that holds in every
/// model of the run (a timeline change may slow the network on purpose).
fn timeouts_below_round_trip(variant: &Variant) -> Vec<Warning> {
    let models = models_of(variant);
    let first = models[0];
    // The shortest round trip of each model, in ns (draws are rounded to
    // whole ns: round down, so that the bound is never above a real one).
    let round_trip: Vec<f64> = models
        .iter()
        .map(|m| 2.0 * (least_ms(&m.network) * 1e6).floor())
        .collect();
    let below = |timeout_ns: &dyn Fn(&Model) -> Option<f64>| {
        models
            .iter()
            .zip(&round_trip)
            .all(|(m, rt)| timeout_ns(m).is_some_and(|t| t < *rt))
    };
    let describe = |what: &str, ms: f64| {
        let rt = round_trip[0] / 1e6;
        let net = if models.len() > 1 {
            " in every model of the run"
        } else {
            ""
        };
        format!(
            "this {what}, {} ms, is shorter than the shortest network round trip, {} ms (twice the least `network.one_way` can draw){net}: no {} is answered in time",
            number(ms),
            number(rt),
            if what == "deadline" { "request" } else { "attempt" },
        )
    };
    let mut out = Vec::new();
    for (at, edge) in edges(first) {
        let timeout = |m: &Model| {
            let t = edge.policy(m).attempt_timeout;
            (!t.is_infinite()).then(|| t.as_nanos() as f64)
        };
        if below(&timeout) {
            let ms = first_ms(timeout(first));
            out.push(Warning::new(
                "timeout-below-round-trip",
                format!("{at}.timeout_ms"),
                describe("timeout", ms),
            ));
        }
        if let EdgeAt::Workload(w) = edge {
            let deadline = |m: &Model| m.workloads[w].deadline.map(|d| d.as_nanos() as f64);
            if below(&deadline) {
                out.push(Warning::new(
                    "timeout-below-round-trip",
                    format!("{at}.deadline_ms"),
                    describe("deadline", first_ms(deadline(first))),
                ));
            }
        }
    }
    out
}

fn first_ms(ns: Option<f64>) -> f64 {
    ns.unwrap_or(0.0) / 1e6
}

/// A trigger window (`trigger_start` and `trigger_end` roles) is what the
/// recovery analysis judges, and it runs only with a `metastability` block:
/// without one, no verdict comes.
fn trigger_without_metastability(variant: &Variant) -> Vec<Warning> {
    if variant.model.metastability.is_some() {
        return Vec::new();
    }
    // A verdict needs a whole trigger window: a single role (a trigger that
    // never ends, an end without a start) only marks the charts, and a
    // `metastability` block would be refused without the other.
    let first = |role: TimelineRole| variant.changes.iter().find(|c| c.role == Some(role));
    let (Some(start), Some(end)) = (
        first(TimelineRole::TriggerStart),
        first(TimelineRole::TriggerEnd),
    ) else {
        return Vec::new();
    };
    vec![Warning::new(
        "trigger-without-metastability",
        format!("timeline[{}].role", start.name),
        format!(
            "the timeline has a trigger window ({:?} to {:?}) and the model has no `metastability` block: no recovery verdict will come (add `\"metastability\": {{\"baseline_from_s\": ...}}` for one)",
            start.name, end.name
        ),
    )]
}

/// The sustained rate of a rate limit, per second.
fn sustained_rate(limit: &RateLimitSpec) -> f64 {
    match limit {
        RateLimitSpec::TokenBucket { rate_per_s, .. } => *rate_per_s,
        RateLimitSpec::FixedWindow { limit, window_ms }
        | RateLimitSpec::SlidingWindow { limit, window_ms } => {
            f64::from(*limit) * 1000.0 / window_ms
        }
        RateLimitSpec::Resilience4j {
            limit_for_period,
            limit_refresh_period_ms,
            ..
        } => f64::from(*limit_for_period) * 1000.0 / limit_refresh_period_ms,
    }
}

/// The most attempts one call on `policy`'s edge can send to its callee:
/// `max_attempts`, each try with up to `max_hedges` hedges, times the
/// callee's shards for a fan-out.
fn most_attempts_per_call(model: &Model, policy: &CallPolicy) -> f64 {
    let hedges = policy.hedge.map_or(0, |h| h.max_hedges);
    let shards = if policy.fan_out.is_some() {
        model.services[policy.to].shards
    } else {
        1
    };
    f64::from(policy.retry.max_attempts) * (1.0 + f64::from(hedges)) * f64::from(shards)
}

/// The most requests per second that can reach each service, and each edge's
/// source (the requests per second of the workload, or arriving at the
/// service, whose handler makes the calls): each open workload's arrival rate
/// times the most attempts per call of every edge on the way (retries,
/// hedges, fan-outs; every call step taken, whatever its `only_classes`; a
/// cache taken as missing). A closed-loop or at-once workload has no fixed
/// rate: what it reaches is unbounded (infinite).
fn most_rates(model: &Model) -> Vec<f64> {
    let n = model.services.len();
    let mut rate = vec![0.0_f64; n];
    for w in &model.workloads {
        let arrivals = w.arrival.highest_rate_per_s().unwrap_or(f64::INFINITY);
        rate[w.target] += arrivals * most_attempts_per_call(model, &w.edge);
    }
    // The calls form no cycle (checked): in topological order (Kahn's), so
    // that a service's rate is whole before it is passed on, without
    // recursion (a long chain of services must not overflow the stack).
    let mut callers_left = vec![0usize; n];
    for s in &model.services {
        for step in &s.steps {
            for c in step.calls() {
                callers_left[c.to] += 1;
            }
        }
    }
    let mut ready: Vec<usize> = (0..n).filter(|&s| callers_left[s] == 0).collect();
    while let Some(s) = ready.pop() {
        for step in &model.services[s].steps {
            for c in step.calls() {
                rate[c.to] += rate[s] * most_attempts_per_call(model, c);
                callers_left[c.to] -= 1;
                if callers_left[c.to] == 0 {
                    ready.push(c.to);
                }
            }
        }
    }
    rate
}

/// A rate limit never binds (but on bursts) when its sustained rate is above
/// the most requests per second that can reach it: for a client-side limit
/// (asked before each attempt), the attempts its edge can send (what reaches
/// the calling service, or the workload's arrivals, times the edge's most
/// attempts per call); for a service's `admission.rate_limit`, what can reach
/// the service. Every model of the run counts (a timeline surge): the least
/// sustained rate the limit has against the most that can reach it. An
/// at-once or closed-loop workload upstream has no fixed rate: no warning.
fn rate_limits_that_never_bind(variant: &Variant) -> Vec<Warning> {
    let models = models_of(variant);
    let rates: Vec<Vec<f64>> = models.iter().map(|m| most_rates(m)).collect();
    let first = models[0];
    let mut out = Vec::new();
    let mut check = |path: String, limit_and_reach: &dyn Fn(usize) -> Option<(f64, f64)>| {
        let (mut least_limit, mut most_reach, mut any) = (f64::INFINITY, 0.0_f64, false);
        for i in 0..models.len() {
            if let Some((limit, reach)) = limit_and_reach(i) {
                least_limit = least_limit.min(limit);
                most_reach = most_reach.max(reach);
                any = true;
            }
        }
        if any && least_limit > most_reach && most_reach.is_finite() {
            let phases = if models.len() > 1 {
                " in every model of the run"
            } else {
                ""
            };
            out.push(Warning::new(
                "rate-limit-never-binds",
                path,
                format!(
                    "this rate limit's sustained rate, {}/s, is above the most that can reach it{phases}, {}/s (the open workloads' arrival rates times every edge's most attempts per call on the way: retries, hedges, fan-outs): it can refuse only bursts",
                    number(least_limit),
                    number(most_reach)
                ),
            ));
        }
    };
    for (at, edge) in edges(first) {
        check(format!("{at}.rate_limit"), &|i| {
            let m = models[i];
            let policy = edge.policy(m);
            let limit = sustained_rate(policy.rate_limit.as_ref()?);
            let source = match edge {
                EdgeAt::Workload(w) => {
                    (m.workloads[w].arrival.highest_rate_per_s()).unwrap_or(f64::INFINITY)
                }
                EdgeAt::Step(s, _, _) => rates[i][s],
            };
            Some((limit, source * most_attempts_per_call(m, policy)))
        });
    }
    for (s, service) in first.services.iter().enumerate() {
        check(
            format!("services[{}].admission.rate_limit", service.name),
            &|i| {
                let limit = models[i].services[s].admission.rate_limit.as_ref()?;
                Some((sustained_rate(limit), rates[i][s]))
            },
        );
    }
    out
}

/// A run stops at `horizon_s`: a timeline change at or after it never
/// applies; a ramp whose last step is at or after it never reaches its
/// target.
fn horizon_before_timeline(variant: &Variant) -> Vec<Warning> {
    let Some(horizon) = variant.model.horizon else {
        return Vec::new();
    };
    let horizon_s = horizon.as_nanos() as f64 / 1e9;
    let mut out = Vec::new();
    let mut i = 0;
    while i < variant.changes.len() {
        let name = &variant.changes[i].name;
        let steps: Vec<&Change> = variant.changes[i..]
            .iter()
            .take_while(|c| c.name == *name)
            .collect();
        i += steps.len();
        let first = steps[0].at;
        let last = steps[steps.len() - 1].at;
        if first.as_nanos() >= horizon.as_nanos() {
            out.push(Warning::new(
                "horizon-before-timeline",
                format!("timeline[{name}].at_s"),
                format!(
                    "this change comes at {} s, at or after horizon_s {}: the run stops first, and it never applies",
                    number(first.as_secs()),
                    number(horizon_s)
                ),
            ));
        } else if last.as_nanos() >= horizon.as_nanos() {
            out.push(Warning::new(
                "horizon-before-timeline",
                format!("timeline[{name}].over_s"),
                format!(
                    "this ramp's last step comes at {} s, at or after horizon_s {}: the run stops before it reaches its target",
                    number(last.as_secs()),
                    number(horizon_s)
                ),
            ));
        }
    }
    out
}

/// The longest wait [`uncapped_backoff_without_horizon`] lets pass: a day.
const LONGEST_SENSIBLE_WAIT_S: f64 = 86_400.0;

/// Without `horizon_s` a run lasts until its last event. A retry whose
/// exponential backoff has no cap can wait, before its last attempt, longer
/// than anything in the model means (50 attempts from 8 ms doubling wait
/// 10^12 s): one request that keeps failing then holds the run open that
/// long, opening a bucket of time series a second until
/// `limits.max_series_rows` stops it (ten million rows by default: minutes
/// and gigabytes, and a partial report). Jitter aside: the wait before it is
/// what the model asks for.
fn uncapped_backoff_without_horizon(variant: &Variant) -> Vec<Warning> {
    if variant.model.horizon.is_some() {
        return Vec::new();
    }
    edge_warnings(variant, "uncapped-backoff-without-horizon", |at, policy| {
        let retry = &policy.retry;
        let Backoff::Exponential {
            base,
            multiplier,
            cap,
        } = retry.backoff
        else {
            return None;
        };
        if !cap.is_infinite() || retry.max_attempts < 2 || retry.retry_on.is_empty() {
            return None;
        }
        // Before retry n (attempt n + 1) the wait is base · multiplier^(n-1);
        // the last retry is the last attempt.
        let last_retry = retry.max_attempts - 1;
        let wait_s = base.as_ms() / 1000.0 * multiplier.powi(last_retry as i32 - 1);
        (wait_s > LONGEST_SENSIBLE_WAIT_S).then(|| {
            (
                format!("{at}.retry.backoff"),
                format!(
                    "with no cap_ms, the wait before retry {last_retry} is {wait} s, and with no horizon_s one request that keeps failing holds the run open that long, its time series growing until limits.max_series_rows stops it; set cap_ms or horizon_s",
                    wait = if wait_s < 1e9 { number(wait_s) } else { format!("{wait_s:.3e}") },
                ),
            )
        })
    })
}

/// Without `horizon_s` a run lasts at least as long as its workloads keep
/// arriving, and opens a bucket of time series per `timeseries.bucket_s`
/// meanwhile. A workload that arrives for longer than
/// `limits.max_series_rows` lets the series grow (a `duration_s` of 10^15 s,
/// meant as "for ever") runs until that limit stops it: ten million rows by
/// default, minutes and gigabytes for a partial report and exit code 3.
///
/// Right when it fires: the time it counts is the least the arrivals surely
/// last in every model of the run, the workload's `duration_s` (less 20 mean
/// gaps for Poisson arrivals, whose last one may come early: a chance of
/// e^-20 that none comes in the last 20) or, for constant arrivals, the time
/// its `max_requests` take if sooner. Arrivals whose end is random (Poisson
/// with `max_requests`, a shape, a closed loop) do not warn.
fn arrivals_outlast_series_limit(variant: &Variant) -> Vec<Warning> {
    let start = &variant.model;
    if start.horizon.is_some() {
        return Vec::new();
    }
    // The run loop stops before the bucket that would take the series past
    // its limit.
    let bucket_s = start.bucket.as_nanos() as f64 / 1e9;
    let per_bucket = start.series_rows_per_bucket();
    let stops_at_s = (start.limits.max_series_rows / per_bucket) as f64 * bucket_s;
    let models = models_of(variant);
    let mut out = Vec::new();
    for (index, workload) in start.workloads.iter().enumerate() {
        let surely_ns = models
            .iter()
            .map(|m| surely_arriving_ns(&m.workloads[index]))
            .fold(f64::INFINITY, f64::min);
        if surely_ns / 1e9 > stops_at_s {
            out.push(Warning::new(
                "arrivals-outlast-series-limit",
                format!("workloads[{}].duration_s", workload.model_name),
                format!(
                    "with no horizon_s the run lasts as long as this workload arrives, longer than its time series may grow: at {per_bucket} rows a bucket of {} s it reaches limits.max_series_rows ({}) at {} s of simulated time, where the run stops, partial; set horizon_s or a shorter duration_s",
                    number(bucket_s),
                    start.limits.max_series_rows,
                    seconds(stops_at_s),
                ),
            ));
        }
    }
    out
}

/// How long `workload`'s arrivals surely last, ns (see
/// [`arrivals_outlast_series_limit`]); 0 when their end is random.
fn surely_arriving_ns(workload: &crate::Workload) -> f64 {
    let duration_ns = workload.duration.map(|d| d.as_nanos() as f64);
    match (&workload.arrival, workload.max_requests, duration_ns) {
        (crate::Arrival::Poisson { mean_gap_ns }, None, Some(d)) => d - 20.0 * mean_gap_ns,
        (crate::Arrival::Constant { rate_per_s }, count, Some(d)) => {
            count.map_or(d, |n| d.min(n as f64 * 1e9 / rate_per_s))
        }
        (crate::Arrival::Constant { rate_per_s }, Some(n), None) => n as f64 * 1e9 / rate_per_s,
        _ => 0.0,
    }
}

/// Each request's arrival is an event, so a run whose workloads surely
/// bring more requests than `limits.max_events` stops there, partial, after
/// minutes of work (a Poisson rate of 4.29·10^9/s passes every check). Only
/// arrivals that surely come count ([`requests_surely_sent`]), at the least the
/// models of the run give, so that a warning is right when it fires.
fn arrivals_outnumber_max_events(variant: &Variant) -> Vec<Warning> {
    let start = &variant.model;
    // The run ends by its horizon, or without one where its time series
    // reaches its limit ([`arrivals_outlast_series_limit`]).
    let run_end = start.horizon.unwrap_or_else(|| {
        let buckets = start.limits.max_series_rows / start.series_rows_per_bucket();
        SimDuration(start.bucket.as_nanos().saturating_mul(buckets))
    });
    let models = models_of(variant);
    // A workload's copies share one workload in every model: what one
    // surely sends, each sends (worked out once: a trace may have 10⁶ rates).
    let copy_of_previous = |index: usize| {
        index > 0
            && (models.iter())
                .all(|m| std::sync::Arc::ptr_eq(&m.workloads[index], &m.workloads[index - 1]))
    };
    let mut previous = 0.0;
    let surely: f64 = (0..start.workloads.len())
        .map(|index| {
            if !copy_of_previous(index) {
                previous = surely_sent(&models, index, run_end);
            }
            previous
        })
        .sum();
    let max_events = start.limits.max_events;
    if surely <= max_events as f64 {
        return Vec::new();
    }
    vec![Warning::new(
        "arrivals-outnumber-max-events",
        "limits.max_events",
        format!(
            "the workloads surely bring at least {} requests before the run ends, each an event at least, more than limits.max_events ({}) allows: the run stops there (if another limit does not stop it first), partial; raise limits.max_events, or lower the rates or the run's length",
            count(surely),
            count(max_events as f64),
        ),
    )]
}

/// How many requests workload `index` surely sends before `run_end` in a
/// run that follows `models` (the first at time zero): the fewest any of
/// them sends; none if its load shape changes (a shape's rate is a function
/// of the run's time: each model's integral over the whole run counts where
/// it is not in force).
fn surely_sent(models: &[&Model], index: usize, run_end: SimDuration) -> f64 {
    let arrival = &models[0].workloads[index].arrival;
    let reshaped = models.iter().any(|m| {
        let theirs = &m.workloads[index].arrival;
        let same = match (arrival, theirs) {
            (crate::Arrival::Shaped(a), crate::Arrival::Shaped(b))
                if std::sync::Arc::ptr_eq(a, b) =>
            {
                true
            }
            _ => theirs == arrival,
        };
        !same
            && matches!(
                (arrival, theirs),
                (crate::Arrival::Shaped(_), _) | (_, crate::Arrival::Shaped(_))
            )
    });
    if reshaped {
        return 0.0;
    }
    models
        .iter()
        .map(|m| requests_surely_sent(&m.workloads[index], run_end))
        .fold(f64::INFINITY, f64::min)
}

/// How many requests `workload` surely sends before `run_end` (and its
/// `duration_s` and `requests`): for Poisson arrivals, ten standard
/// deviations below the mean (fewer has a chance under e^-50, 2·10^-22, by
/// Chernoff's bound on a Poisson count's lower tail); for constant ones,
/// the gaps that fit; for a shape, ten standard deviations below its
/// rate's integral (its arrivals are a Poisson count); for all at once, its
/// `requests`. 0 for a closed loop, whose pace is the system's.
fn requests_surely_sent(workload: &crate::Workload, run_end: SimDuration) -> f64 {
    let limit = workload.max_requests.map_or(f64::INFINITY, |n| n as f64);
    let end_ns = workload
        .duration
        .map_or(run_end, |d| d.min(run_end))
        .as_nanos() as f64;
    if end_ns <= 0.0 {
        return 0.0;
    }
    // Gaps are rounded to whole nanoseconds: each is at most half a
    // nanosecond longer than drawn, a constant one at most its ceiling.
    let surely = match &workload.arrival {
        crate::Arrival::Poisson { mean_gap_ns } => {
            let mean = end_ns / (mean_gap_ns + 0.5);
            (mean - 10.0 * mean.sqrt()).max(0.0)
        }
        crate::Arrival::Constant { rate_per_s } => (end_ns / (1e9 / rate_per_s).ceil()).floor(),
        crate::Arrival::Shaped(shape) => {
            // Thinning's candidates come at the highest rate, each gap
            // rounded as a Poisson one's; the kept ones are a Poisson count
            // with the rate's integral for mean.
            let candidate_gap_ns = 1e9 / shape.max_rate();
            let rounded = candidate_gap_ns / (candidate_gap_ns + 0.5);
            let mean = shape.arrivals_until(end_ns / 1e9) * rounded;
            (mean - 10.0 * mean.sqrt()).max(0.0)
        }
        crate::Arrival::AtOnce if limit.is_finite() => limit,
        crate::Arrival::AtOnce | crate::Arrival::ClosedLoop { .. } => 0.0,
    };
    surely.min(limit)
}

/// A timeline entry that starts while a ramp moves and sets a value the ramp
/// moves too holds only until the ramp's next step, which sets the ramp's
/// value again (steps apply in time order; the resolution finds each case,
/// [`crate::UndoneByRamp`]). An entry meant to win must start after the
/// ramp ends, or the ramp end before it.
fn sets_undone_by_ramps(variant: &Variant) -> Vec<Warning> {
    variant
        .undone_by_ramps
        .iter()
        .map(|u| {
            Warning::new(
                "set-undone-by-ramp",
                format!("timeline[{}].set[{:?}]", u.entry, u.path),
                format!(
                    "the ramp {:?}, still moving when this entry starts, sets this value again at {} s and moves it to its own target by {} s: this entry's value holds only until then; start the entry after the ramp ends, or end the ramp before it",
                    u.ramp,
                    number(u.undone_at_s),
                    number(u.ramp_ends_s),
                ),
            )
        })
        .collect()
}

/// A count for a message: whole, with thousands separated, in scientific
/// notation from 10^12.
fn count(n: f64) -> String {
    if n >= 1e12 {
        return format!("{n:.3e}");
    }
    let digits = format!("{}", n.floor() as u64);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Seconds for a message: as [`number`], in scientific notation from 10^9.
fn seconds(s: f64) -> String {
    if s < 1e9 {
        number(s)
    } else {
        format!("{s:.3e}")
    }
}

/// A number for a message: whole numbers without a fraction, others to at
/// most 3 decimals (6 below 1).
fn number(x: f64) -> String {
    let s = if x.abs() < 1.0 {
        format!("{x:.6}")
    } else {
        format!("{x:.3}")
    };
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}
