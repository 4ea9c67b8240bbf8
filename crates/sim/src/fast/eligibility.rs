//! When a run may take the fast path: its preconditions, each written down
//! and checked on the model at time zero and after every timeline change.
//!
//! Each one is what makes an attempt's whole fate known when it reaches
//! its callee ([`super`]): a first-come-first-served queue (its start is
//! fixed by the requests before it), one work step and no call (its end
//! is its start plus one draw), a constant network (its answer's arrival
//! is a sum), no cancellation reaching the callee (its work runs to its
//! end whatever the caller does), admission that reads only the instant
//! and the queue (no limiter, concurrency limit or CoDel that learn from
//! traffic), and caller edges with no policy that learns from outcomes
//! (breaker, budget, throttle, limiter, outlier detection, hedging,
//! bulkhead, cache, fallback), so that the next attempt's instant is known
//! when this one fails.

use stormsim_engine::SimDuration;
use stormsim_model::{Arrival, Change, Model, OnCancel, QueueDiscipline, Step};

/// Why a run cannot take the fast path: where (a JSON path into the
/// model) and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The part of the model, as a model file names it (`services[db]`).
    pub at: String,
    /// The precondition it fails.
    pub why: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.at, self.why)
    }
}

/// Every precondition a run of `model` changed by `changes` fails (none:
/// it may take the fast path), each named once, in model order.
pub fn refusals(model: &Model, changes: &[Change]) -> Vec<Refusal> {
    let mut found: Vec<Refusal> = Vec::new();
    let mut refuse = |at: String, why: &str| {
        if !found.iter().any(|r| r.at == at && r.why == why) {
            found.push(Refusal {
                at,
                why: why.to_string(),
            });
        }
    };
    if model.horizon.is_none() {
        refuse("horizon_s".into(), "no horizon: the run drains");
    }
    let network = model.network.constant();
    let epochs = std::iter::once(model).chain(changes.iter().map(|c| &c.model));
    let mut workers_before: Vec<u32> = model.services.iter().map(|s| s.workers).collect();
    for m in epochs {
        check_model(m, network, &mut refuse);
        for (s, spec) in m.services.iter().enumerate() {
            if spec.workers < workers_before[s] {
                refuse(
                    format!("services[{}].workers", spec.name),
                    "a timeline removes workers",
                );
            }
            workers_before[s] = spec.workers;
        }
    }
    found
}

/// The preconditions one model in force must meet.
fn check_model(model: &Model, network: Option<SimDuration>, refuse: &mut impl FnMut(String, &str)) {
    match (network, model.network.constant()) {
        (Some(first), Some(now)) if first == now => {}
        (Some(_), Some(_)) => refuse("network".into(), "a timeline changes the network"),
        _ => refuse("network".into(), "the network's latency varies"),
    }
    let hop = network.unwrap_or(SimDuration::ZERO);
    if model.hosts.is_some_and(|h| h.slow.is_some()) {
        refuse("hosts.slow".into(), "hosts slow down");
    }
    for (w, workload) in model.workloads.iter().enumerate() {
        let at = || format!("workloads[{}]", model.workload_ids[w].name);
        match workload.arrival {
            Arrival::Poisson { .. } | Arrival::Constant { .. } | Arrival::Shaped(_) => {}
            // Thousands of sends at one instant: over a network with no
            // latency their arrivals tie with workers freeing up in an
            // order the fast path does not reproduce (fuzzed, measured).
            Arrival::AtOnce if hop == SimDuration::ZERO => refuse(
                at() + ".arrival",
                "arrivals all at once over a network with no latency",
            ),
            Arrival::AtOnce => {}
            Arrival::ClosedLoop { .. } => refuse(at() + ".arrival", "a closed loop"),
        }
        if workload.deadline.is_some() {
            refuse(at() + ".deadline", "a request deadline");
        }
        let edge = &workload.edge;
        let mut learns = |field: &str, present: bool| {
            if present {
                refuse(
                    format!("{}.{field}", at()),
                    "a policy that learns from outcomes",
                );
            }
        };
        learns("breaker", edge.breaker.is_some());
        learns("bulkhead", edge.bulkhead.is_some());
        learns("rate_limit", edge.rate_limit.is_some());
        learns("throttle", edge.throttle.is_some());
        learns("outlier_detection", edge.outlier_detection.is_some());
        learns("hedge", edge.hedge.is_some());
        learns("cache", edge.cache.is_some());
        learns("fallback", edge.fallback.is_some());
        learns("fan_out", edge.fan_out.is_some());
        learns("retry.budget", edge.retry.budget.is_some());
        if edge.deadline.absolute {
            refuse(at() + ".deadline", "an absolute deadline (clock skew)");
        }
        // The answer to a refusal must come back before the timer: the
        // general engine then never arms it.
        if edge.attempt_timeout <= hop + hop || edge.deadline.first_attempt_cap <= hop + hop {
            refuse(
                at() + ".timeout_ms",
                "a timeout within the network's round trip",
            );
        }
    }
    for service in &model.services {
        let at = || format!("services[{}]", service.name);
        if service.queue_discipline != QueueDiscipline::Fifo {
            refuse(at() + ".queue", "not first come, first served");
        }
        if service.contention.is_some() {
            refuse(at() + ".contention", "work slows with concurrency");
        }
        if service.cpu.is_some() {
            refuse(at() + ".cpu", "work shares cores");
        }
        if service.instances != 1 || service.shards != 1 {
            refuse(at() + ".instances", "more than one instance");
        }
        if service.instances_down != 0 {
            refuse(at() + ".instances_down", "an instance down");
        }
        if service.replica_work_factor.is_some() {
            refuse(
                at() + ".replica_work_factor",
                "replicas work at different speeds",
            );
        }
        let admission = &service.admission;
        if admission.rate_limit.is_some()
            || !admission.shed_classes.is_empty()
            || admission.concurrency_limit.is_some()
            || admission.codel.is_some()
        {
            refuse(at() + ".admission", "admission that learns from traffic");
        }
        if service.only_classes.iter().any(Option::is_some) {
            refuse(at() + ".steps", "steps for some classes only");
        }
        match service.steps.as_slice() {
            [Step::Work {
                on_cancel,
                timeout,
                deadline,
                error,
                ..
            }] => {
                if *on_cancel != OnCancel::Finish {
                    refuse(
                        at() + ".steps[0].on_cancel",
                        "work that stops when cancelled",
                    );
                }
                if !timeout.is_infinite() || deadline.is_some() {
                    refuse(at() + ".steps[0]", "work cut at a limit");
                }
                if error.is_some() {
                    refuse(at() + ".steps[0].error", "work that fails by itself");
                }
            }
            _ => refuse(at() + ".steps", "not one work step"),
        }
    }
}
