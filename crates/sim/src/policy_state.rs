//! The live state of the stateful policies: per call edge and caller
//! instance (breaker, budget, limiter, throttle, bulkhead, balancer, outlier
//! detection, hedge delay and brake), per callee instance (admission:
//! rate limit, concurrency limit, CoDel), and the caches in front of call
//! steps. The state machines themselves are in [`crate::policy`]; this part
//! only holds one of each where the model asks for it, and carries them
//! across a timeline change ([`PolicyState::apply_change`]).

use crate::policy::balancer::{LoadBalancer, OutlierDetector};
use crate::policy::breaker::CircuitBreaker;
use crate::policy::concurrency::{CoDel, ConcurrencyLimit};
use crate::policy::hedge::{HedgeBrake, HedgeDelay};
use crate::policy::rate_limit::RateLimiter;
use crate::policy::{self, budget::RetryBudget, Throttle};
use crate::topology::Topology;
use crate::world::{CacheEntry, CallId};
use std::collections::VecDeque;
use stormsim_model::{CallPolicy, Model, Service};

/// The state of every stateful policy of a run.
#[derive(Clone)]
pub(crate) struct PolicyState {
    /// `edges[edge][caller instance]`: each caller service instance, or
    /// workload, has its own, as each instance of a client library does.
    pub edges: Vec<Vec<EdgeState>>,
    /// `admission[service][instance]`: each instance admits for itself.
    pub admission: Vec<Vec<AdmissionState>>,
    /// `caches[edge][caller instance]`, for cached call steps (made lazily).
    pub caches: Vec<Vec<InstanceCache>>,
    /// Per edge: the Zipf table of its cache, and the (keys, exponent) it is
    /// for.
    pub cache_zipf: Vec<((u32, u64), Vec<f64>)>,
}

/// The live state of a call edge's stateful policies for one caller.
#[derive(Clone)]
pub(crate) struct EdgeState {
    pub budget: RetryBudget,
    pub breaker: Option<CircuitBreaker>,
    pub limiter: Option<RateLimiter>,
    pub throttle: Option<Throttle>,
    /// Bulkhead slots in use, and the calls waiting for one (FIFO; entries of
    /// calls that stopped waiting are skipped).
    pub bulkhead_in_use: u32,
    pub bulkhead_waiters: VecDeque<CallId>,
    pub balancer: LoadBalancer,
    /// For a fan-out's children: one balancer per shard of the callee, over
    /// that shard's replicas (made when first needed). A shared one would walk
    /// its round-robin cursor past every shard in turn and always land on the
    /// same replica of each.
    pub shard_balancers: Vec<LoadBalancer>,
    pub outlier: Option<OutlierDetector>,
    /// This caller's attempts in flight per callee instance.
    pub outstanding: Vec<u32>,
    /// When to hedge, and whether the brake allows it (edges that hedge).
    pub hedge_delay: Option<HedgeDelay>,
    pub hedge_brake: Option<HedgeBrake>,
    /// Attempts in flight on this edge.
    pub in_flight: u64,
}

impl EdgeState {
    /// Whether an attempt's end has anything to tell beyond the counts: its
    /// outlier detection, breaker, throttle, or a budget that reads results
    /// (see `Simulator::end_attempt`).
    #[inline]
    pub(crate) fn learns_from_outcomes(&self) -> bool {
        self.outlier.is_some()
            || self.breaker.is_some()
            || self.throttle.is_some()
            || self.budget.reads_results()
    }

    pub(crate) fn new(policy: &CallPolicy, instances: u32) -> EdgeState {
        EdgeState {
            budget: RetryBudget::new(
                &policy
                    .retry
                    .budget
                    .as_ref()
                    .map(policy::budget_config)
                    .unwrap_or_default(),
            ),
            breaker: policy
                .breaker
                .as_ref()
                .map(|b| CircuitBreaker::new(policy::breaker_config(b))),
            limiter: policy.rate_limit.as_ref().map(policy::rate_limiter),
            throttle: policy.throttle.as_ref().map(Throttle::new),
            bulkhead_in_use: 0,
            bulkhead_waiters: VecDeque::new(),
            balancer: LoadBalancer::new(policy::balancer_kind(policy.balancer)),
            shard_balancers: Vec::new(),
            outlier: policy
                .outlier_detection
                .as_ref()
                .map(|o| OutlierDetector::new(policy::outlier_config(o), instances as usize)),
            outstanding: vec![0; instances as usize],
            hedge_delay: policy.hedge.as_ref().map(HedgeDelay::new),
            hedge_brake: policy.hedge.and_then(|h| h.max_ratio).map(HedgeBrake::new),
            in_flight: 0,
        }
    }
}

/// One service instance's admission control.
#[derive(Clone)]
pub(crate) struct AdmissionState {
    pub limiter: Option<RateLimiter>,
    pub concurrency: Option<ConcurrencyLimit>,
    pub codel: Option<CoDel>,
}

impl AdmissionState {
    pub(crate) fn new(spec: &Service) -> AdmissionState {
        AdmissionState {
            limiter: spec.admission.rate_limit.as_ref().map(policy::rate_limiter),
            concurrency: spec
                .admission
                .concurrency_limit
                .as_ref()
                .map(policy::concurrency_limit),
            codel: spec.admission.codel.as_ref().map(policy::codel),
        }
    }
}

/// The cache of one instance on one edge.
#[derive(Clone, Debug, Default)]
pub(crate) struct InstanceCache {
    /// Keys ever loaded (or warm), by rank; a `BTreeMap` for a deterministic
    /// order whatever the keys.
    pub entries: std::collections::BTreeMap<u32, CacheEntry>,
}

impl PolicyState {
    /// Fresh state for every policy of the topology's model.
    pub fn new(topology: &Topology<'_>) -> PolicyState {
        let model = topology.model;
        let edges = topology
            .edges
            .iter()
            .zip(&topology.edge_caller)
            .map(|(e, caller)| {
                let callers = caller.map_or(1, |c| model.services[c].instances);
                (0..callers)
                    .map(|_| EdgeState::new(e, model.services[e.to].instances))
                    .collect()
            })
            .collect();
        let admission = model
            .services
            .iter()
            .map(|s| (0..s.instances).map(|_| AdmissionState::new(s)).collect())
            .collect();
        PolicyState {
            edges,
            admission,
            caches: Vec::new(),
            cache_zipf: Vec::new(),
        }
    }

    /// A timeline change replaced `before` (with its edges `old_edges`) by
    /// the topology's model. A policy whose configuration is unchanged keeps
    /// its state (a breaker stays open across an unrelated change); a changed
    /// one starts afresh. `instances[service]` is how many instances each
    /// service has now (removed ones keep draining, so never fewer than
    /// before): added ones get their own state, on either side of an edge.
    pub fn apply_change(
        &mut self,
        before: &Model,
        old_edges: &[CallPolicy],
        topology: &Topology<'_>,
        instances: &[usize],
    ) {
        let model = topology.model;
        for (i, edge) in topology.edges.iter().enumerate() {
            let old = &old_edges[i];
            for state in &mut self.edges[i] {
                let fresh = EdgeState::new(edge, model.services[edge.to].instances);
                if old.retry.budget != edge.retry.budget {
                    state.budget = state.budget.replaced_by(fresh.budget);
                }
                if old.breaker != edge.breaker {
                    state.breaker = fresh.breaker;
                }
                if old.rate_limit != edge.rate_limit {
                    state.limiter = fresh.limiter;
                }
                if old.throttle != edge.throttle {
                    state.throttle = fresh.throttle;
                }
                if old.balancer != edge.balancer {
                    state.balancer = fresh.balancer;
                    state.shard_balancers.clear();
                }
            }
        }
        for (s, (old, new)) in before.services.iter().zip(&model.services).enumerate() {
            let admission = &mut self.admission[s];
            for state in admission.iter_mut() {
                if old.admission.rate_limit != new.admission.rate_limit {
                    state.limiter = new.admission.rate_limit.as_ref().map(policy::rate_limiter);
                }
                if old.admission.concurrency_limit != new.admission.concurrency_limit {
                    state.concurrency = new
                        .admission
                        .concurrency_limit
                        .as_ref()
                        .map(policy::concurrency_limit);
                }
                if old.admission.codel != new.admission.codel {
                    state.codel = new.admission.codel.as_ref().map(policy::codel);
                }
            }
            while admission.len() < instances[s] {
                admission.push(AdmissionState::new(new));
            }
        }
        for (i, (edge, callers)) in topology.edges.iter().zip(&mut self.edges).enumerate() {
            if let Some(caller) = topology.edge_caller[i] {
                while callers.len() < instances[caller] {
                    callers.push(EdgeState::new(edge, model.services[edge.to].instances));
                }
            }
            let callee_instances = instances[edge.to];
            for state in callers.iter_mut() {
                if state.outstanding.len() < callee_instances {
                    state.outstanding.resize(callee_instances, 0);
                    if let Some(o) = edge.outlier_detection.as_ref() {
                        // Envoy re-creates host state when the cluster changes.
                        state.outlier = Some(OutlierDetector::new(
                            policy::outlier_config(o),
                            callee_instances,
                        ));
                    }
                }
            }
        }
    }
}
