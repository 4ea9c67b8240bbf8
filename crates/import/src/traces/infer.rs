//! From executions to a model: per service its own-time distribution, error
//! share and handler shape; per edge its calls per request and retries; the
//! arrival rate; and defaults for what traces cannot show (workers, queues),
//! each said in the notes.

use super::graph::Forest;
use super::shape::{shape, Shape};
use super::span::Kind;
use super::stats::{empirical, ms3, quantile, sorted};
use crate::Unmapped;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Branches a `parallel` step may have (the model's limit).
const MAX_BRANCHES: usize = 64;
/// The most call steps written for one handler: a model with many
/// thousands of steps in one service is slow to check and to read.
const MAX_STEPS: usize = 1000;
/// The most workers (and queue places) a service is given: far above any
/// real pool, and small enough for the model (at most 2³² − 1).
const MAX_WORKERS: usize = 1_000_000;

/// What [`infer`] gives.
pub(crate) struct Inferred {
    pub model: Value,
    pub notes: Vec<String>,
    pub unmapped: Vec<Unmapped>,
}

/// One service's executions, summed up.
#[derive(Default)]
struct ServiceStats {
    execs: usize,
    own_ms: Vec<f64>,
    duration_ms_sum: f64,
    /// Executions whose span failed.
    errors: usize,
    /// ... with no failed call under them: the service's own failures.
    own_errors: usize,
    /// Executions that succeeded although a call of theirs failed.
    absorbed: usize,
    /// Executions with a failed call.
    call_failed: usize,
    /// Handler outlines and how many executions had each, in order of first
    /// appearance.
    shapes: Vec<(Vec<Vec<usize>>, usize)>,
    /// (start, end) of every execution, for the most seen at once.
    intervals: Vec<(u64, u64)>,
    /// Some execution was called by another (it is no trace root only).
    called: bool,
    /// Some entry span is a SERVER or CONSUMER span: it serves requests.
    serves: bool,
}

/// The calls from one service to another, summed up.
#[derive(Default)]
struct EdgeStats {
    attempts: usize,
    logical: usize,
    /// Logical calls in a step with other calls (parallel).
    concurrent: usize,
    /// Logical calls with more than one attempt.
    retried: usize,
    most_attempts: usize,
    /// Attempts made by each logical call that failed on every attempt
    /// while some call on the edge was retried: where retries gave up.
    exhausted: Vec<usize>,
    /// Single-attempt calls that failed.
    failed_once: usize,
    /// From a failed attempt's end to the next attempt's start, ms.
    backoff_ms: Vec<f64>,
}

/// The whole inference.
pub(crate) fn infer(forest: &Forest, model_name: &str, spans_read: usize) -> Inferred {
    let mut notes = Vec::new();
    let mut unmapped = Vec::new();
    let n_services = forest.services.len();
    let shapes: Vec<Shape> = forest.execs.iter().map(shape).collect();
    let mut svc: Vec<ServiceStats> = (0..n_services).map(|_| ServiceStats::default()).collect();
    let mut edges: BTreeMap<(usize, usize), EdgeStats> = BTreeMap::new();
    // Each service's outlines, by outline: where in its `shapes` each is.
    let mut shape_index: Vec<HashMap<Vec<Vec<usize>>, usize>> = vec![HashMap::new(); n_services];
    // Each service's executions.
    let mut execs_of: Vec<Vec<usize>> = vec![Vec::new(); n_services];
    for (e, exec) in forest.execs.iter().enumerate() {
        execs_of[exec.service].push(e);
    }
    for (exec, sh) in forest.execs.iter().zip(&shapes) {
        let s = &mut svc[exec.service];
        s.execs += 1;
        s.own_ms.push(sh.own_ns as f64 / 1e6);
        s.duration_ms_sum += exec.duration_ns() as f64 / 1e6;
        s.intervals.push((exec.start_ns, exec.end_ns));
        s.called |= exec.caller.is_some();
        s.serves |= matches!(exec.kind, Kind::Server | Kind::Consumer);
        let call_failed = sh.logicals.iter().any(|l| l.failed);
        s.call_failed += usize::from(call_failed);
        if exec.error {
            s.errors += 1;
            s.own_errors += usize::from(!call_failed);
        } else if call_failed {
            s.absorbed += 1;
        }
        let sig = sh.signature();
        match shape_index[exec.service].get(&sig) {
            Some(&k) => s.shapes[k].1 += 1,
            None => {
                shape_index[exec.service].insert(sig.clone(), s.shapes.len());
                s.shapes.push((sig, 1));
            }
        }
        for step in &sh.steps {
            for &l in step {
                let lg = &sh.logicals[l];
                let e = edges.entry((exec.service, lg.callee)).or_default();
                e.logical += 1;
                e.attempts += lg.attempts.len();
                e.concurrent += usize::from(step.len() > 1);
                e.most_attempts = e.most_attempts.max(lg.attempts.len());
                if lg.attempts.len() > 1 {
                    e.retried += 1;
                    for w in lg.attempts.windows(2) {
                        let (a, b) = (&exec.calls[w[0]], &exec.calls[w[1]]);
                        e.backoff_ms
                            .push(b.start_ns.saturating_sub(a.end_ns) as f64 / 1e6);
                    }
                }
                if lg.failed {
                    if lg.attempts.len() == 1 {
                        e.failed_once += 1;
                    }
                    e.exhausted.push(lg.attempts.len());
                }
            }
        }
    }

    // Names the model accepts, unique.
    let names = model_names(&forest.services, &mut notes);

    // Arrivals: the roots' start times over the window they span.
    let root_starts: Vec<u64> = forest
        .roots
        .iter()
        .map(|&r| forest.execs[r].start_ns)
        .collect();
    let n_roots = root_starts.len();
    let window_s = match (root_starts.iter().min(), root_starts.iter().max()) {
        (Some(a), Some(b)) => (b - a) as f64 / 1e9,
        _ => 0.0,
    };
    // A Poisson process's rate from n arrivals whose first and last are
    // `window` apart: (n − 1) / window, the unbiased estimate (n / window
    // counts the first arrival, which opened the window, as if inside it).
    let rate_known = n_roots >= 2 && window_s > 0.0;
    let total_rate = if rate_known {
        (n_roots - 1) as f64 / window_s
    } else {
        1.0
    };
    let per_second = |count: usize| total_rate * count as f64 / n_roots.max(1) as f64;

    // Root services in order of first appearance, with their requests.
    let mut root_services: Vec<(usize, usize)> = Vec::new();
    let mut root_index: HashMap<usize, usize> = HashMap::new();
    for &r in &forest.roots {
        let s = forest.execs[r].service;
        match root_index.get(&s) {
            Some(&k) => root_services[k].1 += 1,
            None => {
                root_index.insert(s, root_services.len());
                root_services.push((s, 1));
            }
        }
    }

    // A root service that only ever makes one call and serves nothing is
    // the client itself (a load generator, a browser): it becomes the
    // workload, calling that callee, and the call's retries are its retries.
    let as_client: Vec<Option<usize>> = (0..n_services)
        .map(|s| {
            let st = &svc[s];
            if st.called || st.serves || !root_index.contains_key(&s) {
                return None;
            }
            let mut target = None;
            for sh in execs_of[s].iter().map(|&e| &shapes[e]) {
                if sh.logicals.len() != 1 {
                    return None;
                }
                let callee = sh.logicals[0].callee;
                if target.is_some_and(|t| t != callee) || callee == s {
                    return None;
                }
                target = Some(callee);
            }
            target
        })
        .collect();
    // A service all of whose spans were left out (in a loop, say) has no
    // executions to model.
    let in_model: Vec<bool> = (0..n_services)
        .map(|s| as_client[s].is_none() && svc[s].execs > 0)
        .collect();

    // Each service's handler: the outline most of its executions had.
    let mut modal: Vec<Vec<Vec<usize>>> = svc
        .iter()
        .map(|s| {
            s.shapes
                .iter()
                .enumerate()
                .max_by_key(|(i, (_, n))| (*n, std::cmp::Reverse(*i)))
                .map(|(_, (sig, _))| sig.clone())
                .unwrap_or_default()
        })
        .collect();
    break_cycles(&mut modal, &in_model, &names, &mut unmapped);

    // Retry policies where the traces show retries, one per edge, with
    // their evidence in `edge_notes`.
    let mut edge_notes = Vec::new();
    let retries: BTreeMap<(usize, usize), Value> = edges
        .iter()
        .filter_map(|(&k, e)| {
            retry_policy(
                &format!("{} → {}", names[k.0], names[k.1]),
                e,
                &mut edge_notes,
            )
            .map(|r| (k, r))
        })
        .collect();

    // Notes on what was read.
    let left: usize = forest.left_out.values().sum();
    let mut read_note = format!(
        "read {spans_read} spans: {} in {} traces make {} requests (root spans) of {} service(s)",
        forest.spans_used, forest.traces_used, n_roots, n_services
    );
    if left > 0 {
        let why: Vec<String> = forest
            .left_out
            .iter()
            .map(|(r, n)| format!("{n} {r}"))
            .collect();
        read_note.push_str(&format!("; {left} left out ({})", why.join(", ")));
    }
    notes.push(read_note);

    // Workloads.
    let duration_s = if rate_known {
        window_s.ceil().clamp(60.0, 3600.0)
    } else {
        60.0
    };
    let several = root_services.len() > 1;
    let mut workloads = Vec::new();
    for &(s, n) in &root_services {
        let rate = per_second(n);
        let mut w = Map::new();
        let (name, target, retry) = match as_client[s] {
            Some(t) => {
                let own = sorted(svc[s].own_ms.clone());
                notes.push(format!(
                    "{} only starts traces and calls {}: it is the workload, not a service (its own time, p50 {} ms, is not modelled)",
                    names[s],
                    names[t],
                    ms3(quantile(&own, 0.5))
                ));
                (names[s].clone(), t, retries.get(&(s, t)).cloned())
            }
            None if several => (format!("clients-{}", names[s]), s, None),
            None => ("clients".to_string(), s, None),
        };
        w.insert("name".into(), json!(name));
        w.insert("target".into(), json!(names[target]));
        w.insert(
            "arrival".into(),
            json!({"kind": "poisson", "rate_per_s": sig6(rate)}),
        );
        w.insert("duration_s".into(), json!(duration_s));
        if let Some(r) = retry {
            w.insert("retry".into(), r);
        }
        workloads.push(Value::Object(w));
        if rate_known {
            notes.push(format!(
                "workload {name} → {}: poisson at {} per s, from {n} root spans over the {:.3} s from the first root's start to the last's ({} requests less one, over that window); the traces show when requests came, not how they are spread: Poisson is assumed; duration_s {duration_s} (edit to run longer)",
                names[target],
                sig6(rate),
                window_s,
                n
            ));
        } else {
            notes.push(format!(
                "workload {name} → {}: {n} root span(s) give no rate: poisson at 1 per s is assumed (edit rate_per_s)",
                names[target]
            ));
        }
    }

    // Services.
    let mut services = Vec::new();
    for s in (0..n_services).filter(|&s| in_model[s]) {
        let st = &svc[s];
        let own = sorted(st.own_ms.clone());
        let mut steps = Vec::new();
        let mut work = Map::new();
        work.insert("work".into(), empirical(&own));
        // Own failures among the executions whose calls all succeeded: the
        // model draws its own error before its calls, independently of them,
        // so that is the probability to give it (over every execution, the
        // failures masked by a failed call would be missing from it).
        let clean = st.execs - st.call_failed;
        let error_p = if clean == 0 {
            0.0
        } else {
            st.own_errors as f64 / clean as f64
        };
        if st.own_errors > 0 {
            work.insert("error".into(), json!({"p": sig6(error_p)}));
        }
        steps.push(Value::Object(work));
        let mut outline = vec!["work".to_string()];
        if modal[s].len() > MAX_STEPS {
            unmapped.push(Unmapped {
                file: String::new(),
                path: format!("service {}", names[s]),
                message: format!(
                    "{} calls one after another: the model makes the first {MAX_STEPS} (its latency is short of the traces' by the rest)",
                    modal[s].len()
                ),
            });
        }
        for group in modal[s].iter().take(MAX_STEPS) {
            let branch = |callee: usize| {
                let mut c = Map::new();
                c.insert("call".into(), json!(names[callee]));
                if let Some(r) = retries.get(&(s, callee)) {
                    c.insert("retry".into(), r.clone());
                }
                Value::Object(c)
            };
            if group.len() == 1 {
                steps.push(branch(group[0]));
                outline.push(names[group[0]].clone());
            } else {
                let branches: Vec<Value> = group
                    .iter()
                    .take(MAX_BRANCHES)
                    .map(|&c| branch(c))
                    .collect();
                if group.len() > MAX_BRANCHES {
                    unmapped.push(Unmapped {
                        file: String::new(),
                        path: format!("service {}", names[s]),
                        message: format!(
                            "{} calls at once, more than the {MAX_BRANCHES} branches a parallel step may have: the model makes {MAX_BRANCHES}",
                            group.len()
                        ),
                    });
                }
                outline.push(format!(
                    "parallel({})",
                    group
                        .iter()
                        .take(MAX_BRANCHES)
                        .map(|&c| names[c].as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
                steps.push(json!({"parallel": {"branches": branches}}));
            }
        }

        // Workers: the service's executions at the observed rate hold a
        // worker each for their span's length, so by Little's law L = λ·W
        // are busy on average; with independent arrivals the number busy is
        // about Poisson(L), and L + 6√L + 4 workers are short of one in far
        // fewer than a million instants. At least twice the most seen at
        // once, too, so that bursts the traces show fit.
        let most_at_once = most_at_once(&st.intervals);
        let mean_busy = per_second(st.execs) * st.duration_ms_sum / st.execs as f64 / 1000.0;
        let wanted = (mean_busy + 6.0 * mean_busy.sqrt() + 4.0)
            .ceil()
            .max(2.0 * most_at_once as f64);
        let workers = if wanted > MAX_WORKERS as f64 {
            unmapped.push(Unmapped {
                file: String::new(),
                path: format!("service {}", names[s]),
                message: format!(
                    "{wanted:.0} workers would be needed for what the traces show ({mean_busy:.0} busy on average, {most_at_once} executions at once): the model gets {MAX_WORKERS}, which may queue where the traces did not"
                ),
            });
            MAX_WORKERS
        } else {
            wanted as usize
        };
        let mut service = Map::new();
        service.insert("name".into(), json!(names[s]));
        service.insert("workers".into(), json!(workers));
        service.insert("queue_capacity".into(), json!(workers));
        service.insert("steps".into(), Value::Array(steps));
        services.push(Value::Object(service));

        let shape_n = st
            .shapes
            .iter()
            .find(|(sig, _)| *sig == modal[s])
            .map_or(0, |(_, n)| *n);
        let mut shape_note = format!(
            "service {}: {} spans (executions); own time (span less the union of its calls) p50 {} ms, p99 {} ms, max {} ms; handler: {}, the outline of {shape_n} of {} executions",
            names[s],
            st.execs,
            ms3(quantile(&own, 0.5)),
            ms3(quantile(&own, 0.99)),
            ms3(own.last().copied().unwrap_or(0.0)),
            outline.join(", then "),
            st.execs
        );
        let others: Vec<String> = st
            .shapes
            .iter()
            .filter(|(sig, _)| *sig != modal[s])
            .take(3)
            .map(|(sig, n)| format!("{} ({n})", outline_of(sig, &names)))
            .collect();
        if !others.is_empty() {
            shape_note.push_str(&format!(
                "; other outlines, not modelled: {}",
                others.join("; ")
            ));
        }
        notes.push(shape_note);
        if st.errors > 0 || st.absorbed > 0 {
            notes.push(format!(
                "service {}: error.p {} ({} of the {} spans whose calls all succeeded failed); {} more failed after a call of theirs failed (the model passes such failures up); {} succeeded although a call failed (not modelled: a failed call fails the handler)",
                names[s],
                sig6(error_p),
                st.own_errors,
                st.execs - st.call_failed,
                st.errors - st.own_errors,
                st.absorbed
            ));
        }
        notes.push(format!(
            "service {}: workers {workers}, queue_capacity {workers}: assumed, traces do not show pools (at most {most_at_once} executions at once were seen, {:.2} busy on average at the observed rate); edit them to the real pool sizes",
            names[s], mean_busy
        ));
    }

    // Edges.
    for (&(caller, callee), e) in &edges {
        let execs = svc[caller].execs;
        notes.push(format!(
            "edge {} → {}: {:.3} calls per request of {} ({} attempts, {} calls over {} executions); {:.1}% made at the same time as another call",
            names[caller],
            names[callee],
            e.attempts as f64 / execs as f64,
            names[caller],
            e.attempts,
            e.logical,
            execs,
            100.0 * e.concurrent as f64 / e.logical.max(1) as f64
        ));
    }
    notes.append(&mut edge_notes);

    // Network: half of what a CLIENT span adds to its SERVER child.
    let one_way: Vec<f64> = forest
        .execs
        .iter()
        .flat_map(|e| e.calls.iter().filter_map(|c| c.network_ns))
        .map(|ns| ns as f64 / 2e6)
        .collect();
    let network = if one_way.is_empty() {
        notes.push("network: no CLIENT span with a SERVER child in another service, so no network time is seen: one_way 0 ms".into());
        json!({"kind": "constant", "ms": 0.0})
    } else {
        let one_way = sorted(one_way);
        notes.push(format!(
            "network: one_way from {} CLIENT/SERVER pairs, half of what each CLIENT span lasts beyond its SERVER child: p50 {} ms, p99 {} ms (the model adds it to every hop, the workload's too)",
            one_way.len(),
            ms3(quantile(&one_way, 0.5)),
            ms3(quantile(&one_way, 0.99))
        ));
        empirical(&one_way)
    };

    // Root latency, for comparing a run with the traces.
    let roots_ms = sorted(
        forest
            .roots
            .iter()
            .map(|&r| forest.execs[r].duration_ns() as f64 / 1e6)
            .collect(),
    );
    if !roots_ms.is_empty() {
        notes.push(format!(
            "root spans last p50 {} ms, p90 {} ms, p99 {} ms: compare a run's workload latency with these",
            ms3(quantile(&roots_ms, 0.5)),
            ms3(quantile(&roots_ms, 0.9)),
            ms3(quantile(&roots_ms, 0.99))
        ));
    }

    let model = json!({
        "name": model_name,
        "description": format!(
            "Inferred from {} spans in {} traces by stormsim import: services, calls, own-time distributions, error shares and the arrival rate are as the traces show them; workers, queues and the Poisson arrivals are assumptions to edit.",
            forest.spans_used, forest.traces_used
        ),
        "seed": 1,
        "network": {"one_way": network},
        "workloads": workloads,
        "services": services,
    });
    Inferred {
        model,
        notes,
        unmapped,
    }
}

/// The retry policy an edge's retries show, if any, with a note of the
/// evidence: the most attempts seen on one call is `max_attempts` (a
/// limit when calls were seen failing on that many attempts, else a lower
/// bound, said so); the median wait between attempts is a fixed backoff.
fn retry_policy(edge: &str, e: &EdgeStats, notes: &mut Vec<String>) -> Option<Value> {
    if e.retried == 0 {
        if e.failed_once > 0 {
            notes.push(format!(
                "edge {edge}: {} failed call(s), none retried: no retry policy",
                e.failed_once
            ));
        }
        return None;
    }
    let gave_up_at_most = e
        .exhausted
        .iter()
        .filter(|&&a| a == e.most_attempts)
        .count();
    let backoff = ms3(quantile(&sorted(e.backoff_ms.clone()), 0.5));
    let evidence = if gave_up_at_most > 0 {
        format!(
            "{gave_up_at_most} call(s) failed on all {} attempts, so {} is the limit",
            e.most_attempts, e.most_attempts
        )
    } else {
        format!(
            "no call was seen to fail on every attempt, so the limit may be higher than the {} seen: edit max_attempts",
            e.most_attempts
        )
    };
    let inconsistent = if e.failed_once > 0 {
        format!(
            "; {} other failed call(s) were not retried (a `retry_on` narrower than every failure?)",
            e.failed_once
        )
    } else {
        String::new()
    };
    notes.push(format!(
        "edge {edge}: {} of {} calls retried after a failure ({:.3} attempts per call, at most {}); {evidence}; retry max_attempts {}, backoff fixed {backoff} ms (the median of {} waits from a failed attempt to the next){inconsistent}",
        e.retried,
        e.logical,
        e.attempts as f64 / e.logical as f64,
        e.most_attempts,
        e.most_attempts,
        e.backoff_ms.len()
    ));
    Some(json!({
        "max_attempts": e.most_attempts,
        "backoff": {"kind": "fixed", "ms": backoff}
    }))
}

/// Rounds to 6 significant digits: rates and shares read as measured,
/// without the noise of the last bits.
fn sig6(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return 0.0;
    }
    let scale = 10f64.powi(5 - libm::log10(x.abs()).floor() as i32);
    (x * scale).round() / scale
}

/// The most intervals open at one instant (an end at the instant another
/// starts does not overlap it).
fn most_at_once(intervals: &[(u64, u64)]) -> usize {
    let mut events: Vec<(u64, i8)> = intervals
        .iter()
        .flat_map(|&(s, e)| [(s, 1i8), (e, -1i8)])
        .collect();
    events.sort_unstable();
    let (mut now, mut most) = (0i64, 0i64);
    for (_, d) in events {
        now += i64::from(d);
        most = most.max(now);
    }
    most as usize
}

fn outline_of(sig: &[Vec<usize>], names: &[String]) -> String {
    let mut parts = vec!["work".to_string()];
    for group in sig {
        let callees: Vec<&str> = group.iter().map(|&c| names[c].as_str()).collect();
        parts.push(if callees.len() == 1 {
            callees[0].to_string()
        } else {
            format!("parallel({})", callees.join(", "))
        });
    }
    parts.join(", then ")
}

/// Service names as the model accepts them: no '.', ',', quotes, control
/// characters or brackets (they would break parameter paths), not all
/// digits (a path's `[3]` is a position), not `run`; unique.
fn model_names(services: &[String], notes: &mut Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(services.len());
    let mut taken: HashSet<String> = HashSet::new();
    for s in services {
        let mut name: String = s
            .chars()
            .map(|c| {
                if matches!(c, '.' | ',' | '"' | '\'' | '[' | ']' | '/' | '\\') || c.is_control() {
                    '-'
                } else {
                    c
                }
            })
            .collect();
        if name.is_empty()
            || name.chars().all(|c| c.is_ascii_digit())
            || name == "run"
            || name == "*"
            || name == "+"
        {
            name = format!("svc-{name}");
        }
        let base = name.clone();
        let mut k = 2;
        while taken.contains(&name) {
            name = format!("{base}-{k}");
            k += 1;
        }
        taken.insert(name.clone());
        if name != *s {
            notes.push(format!("service {s:?} is named {name:?} in the model (names there cannot hold '.', ',', quotes or brackets)"));
        }
        out.push(name);
    }
    out
}

/// The model's calls may not form a cycle (a service calling back up its
/// chain): a call that would close one is left out, with a warning. A depth
/// first search without recursion, so that no chain of services is too deep.
fn break_cycles(
    modal: &mut [Vec<Vec<usize>>],
    in_model: &[bool],
    names: &[String],
    unmapped: &mut Vec<Unmapped>,
) {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnPath,
        Done,
    }
    const LEFT_OUT: usize = usize::MAX;
    let mut reported: HashSet<(usize, usize)> = HashSet::new();
    let mut marks = vec![Mark::New; modal.len()];
    for root in 0..modal.len() {
        if !in_model[root] || marks[root] != Mark::New {
            continue;
        }
        marks[root] = Mark::OnPath;
        // (service, step, branch) of each service on the path.
        let mut stack = vec![(root, 0usize, 0usize)];
        while let Some(&mut (s, g, m)) = stack.last_mut() {
            if g >= modal[s].len() {
                marks[s] = Mark::Done;
                stack.pop();
                continue;
            }
            if m >= modal[s][g].len() {
                if let Some(top) = stack.last_mut() {
                    *top = (s, g + 1, 0);
                }
                continue;
            }
            let c = modal[s][g][m];
            if c == LEFT_OUT {
                if let Some(top) = stack.last_mut() {
                    *top = (s, g, m + 1);
                }
                continue;
            }
            match marks[c] {
                Mark::OnPath => {
                    if reported.insert((s, c)) {
                        unmapped.push(Unmapped {
                            file: String::new(),
                            path: format!("service {}", names[s]),
                            message: format!(
                                "its call to {} closes a cycle of calls, which a model cannot have: left out",
                                names[c]
                            ),
                        });
                    }
                    // Left out below, all at once: removing each here
                    // would take time in the square of the calls.
                    modal[s][g][m] = LEFT_OUT;
                    if let Some(top) = stack.last_mut() {
                        *top = (s, g, m + 1);
                    }
                }
                Mark::New => {
                    if let Some(top) = stack.last_mut() {
                        *top = (s, g, m + 1);
                    }
                    marks[c] = Mark::OnPath;
                    stack.push((c, 0, 0));
                }
                Mark::Done => {
                    if let Some(top) = stack.last_mut() {
                        *top = (s, g, m + 1);
                    }
                }
            }
        }
    }
    for steps in modal.iter_mut() {
        for group in steps.iter_mut() {
            group.retain(|&c| c != LEFT_OUT);
        }
        steps.retain(|group| !group.is_empty());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regression_breaking_a_cycle_of_many_calls() {
        // Service 0 calls 1; 1 calls 0 back 10⁵ times, one after another:
        // each call was removed from the middle of its list, in time of the
        // square of the calls, with a warning each.
        let mut modal = vec![vec![vec![1]], vec![vec![0]; 100_000], vec![]];
        modal[1].push(vec![0, 2]);
        let names: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let mut unmapped = Vec::new();
        break_cycles(&mut modal, &[true, true, true], &names, &mut unmapped);
        assert_eq!(modal, vec![vec![vec![1]], vec![vec![2]], vec![]]);
        assert_eq!(unmapped.len(), 1, "{unmapped:#?}");
        assert_eq!(unmapped[0].path, "service b");
    }
}
