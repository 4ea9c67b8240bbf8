//! What the run knows before its first event: the model in force, its call
//! edges, who calls along each, and the draws fixed once per run (clock skews,
//! network latencies). Read by every handler, replaced only by a timeline
//! change ([`Topology::apply`]), never changed by traffic.

use crate::policy::retry::RetryRule;
use crate::world::EdgeId;
use stormsim_engine::{SimDuration, StreamKey};
use stormsim_model::{CallPolicy, Change, FallbackUse, Model, Service, ServiceId, Step};

/// The model in force and what is derived from it.
pub(crate) struct Topology<'m> {
    /// The model in force now (the timeline's latest change).
    pub model: &'m Model,
    /// The timeline's changes, in time order.
    pub changes: &'m [Change],
    /// The model at time zero.
    base: &'m Model,
    /// Which model is in force: 0 the base, `i + 1` the timeline's change `i`.
    pub epoch: u32,
    /// Every call edge: one per workload (the caller's own policy), then one
    /// per call step.
    pub edges: Vec<CallPolicy>,
    /// Each edge's retry decision, made ready from its policy.
    pub retry_rules: Vec<RetryRule>,
    /// `step_edge[service][step]`: the edge of a call step
    /// ([`EdgeId::MAX`] for a work step).
    pub step_edge: Vec<Vec<EdgeId>>,
    /// The calling service of each edge (`None`: a workload).
    pub edge_caller: Vec<Option<ServiceId>>,
    /// Per edge, how it is tied to fallbacks (see [`FallbackLink`]).
    pub fallback_links: Vec<FallbackLink>,
    /// Stream of the instances' clock skews.
    clock_key: StreamKey,
}

impl<'m> Topology<'m> {
    /// The topology of `model` at time zero.
    pub fn new(model: &'m Model, changes: &'m [Change]) -> Topology<'m> {
        // Each change is the model with every earlier one applied, and a run
        // applies them by index as they come due (a fork resumes after the
        // last one applied): they must be in time order.
        debug_assert!(
            changes.is_sorted_by_key(|c| c.at),
            "timeline changes out of time order"
        );
        let (edges, step_edge, fallback_links) = edges_of(model);
        Topology {
            model,
            changes,
            base: model,
            epoch: 0,
            retry_rules: retry_rules_of(&edges),
            edges,
            step_edge,
            fallback_links,
            edge_caller: callers_of(model),
            clock_key: StreamKey::root(model.seed).label("clock"),
        }
    }

    /// The timeline's change `index` applies: from now on the run follows
    /// its model. Returns the model it replaces and the edges of that model
    /// (whose policies decide which live policy state survives the change).
    pub fn apply(&mut self, index: usize) -> (&'m Model, Vec<CallPolicy>) {
        let before = self.model;
        self.model = &self.changes[index].model;
        self.epoch = index as u32 + 1;
        let (edges, step_edge, fallback_links) = edges_of(self.model);
        self.step_edge = step_edge;
        self.fallback_links = fallback_links;
        self.retry_rules = retry_rules_of(&edges);
        (before, std::mem::replace(&mut self.edges, edges))
    }

    /// The model that was in force in `epoch` (see [`Topology::epoch`]).
    pub fn model_at(&self, epoch: u32) -> &'m Model {
        match epoch.checked_sub(1) {
            None => self.base,
            Some(change) => &self.changes[change as usize].model,
        }
    }

    /// The spec of service `id` in the model in force.
    pub fn service_of(&self, id: ServiceId) -> &'m Service {
        &self.model.services[id]
    }

    /// The edges of the branches of parallel steps, in edge order.
    pub fn branch_edges(&self) -> Vec<EdgeId> {
        let mut out = Vec::new();
        for (s, service) in self.model.services.iter().enumerate() {
            for (j, step) in service.steps.iter().enumerate() {
                if let Step::Parallel(p) = step {
                    let first = self.step_edge[s][j];
                    out.extend((0..p.branches.len() as EdgeId).map(|b| first + b));
                }
            }
        }
        out
    }

    /// Whether `edge` is a workload's own (its attempts are roots).
    pub fn is_workload_edge(&self, edge: EdgeId) -> bool {
        (edge as usize) < self.model.workloads.len()
    }

    /// How far the clock of `instance` of `service` is ahead of true time, ns:
    /// the service's offset plus the instance's own skew, drawn once per run
    /// (the same draw however often it is asked for).
    pub fn clock_offset(&self, service: usize, instance: u32) -> i64 {
        let spec = &self.model.services[service];
        if spec.clock_spread == 0 {
            return spec.clock_offset;
        }
        let u = self
            .clock_key
            .index(service as u64)
            .index(u64::from(instance))
            .rng()
            .unit();
        spec.clock_offset + ((2.0 * u - 1.0) * spec.clock_spread as f64).round() as i64
    }

    /// The clock offset of the caller on `edge` (a workload's, or an instance's).
    pub fn clock_offset_of_caller(&self, edge: EdgeId, caller: u32) -> i64 {
        match self.edge_caller[edge as usize] {
            Some(service) => self.clock_offset(service, caller),
            None => self.model.workloads[edge as usize].clock_offset,
        }
    }

    /// A network traversal's latency, keyed by the attempt and the direction.
    pub fn network_delay(&self, key: StreamKey, direction: u64) -> SimDuration {
        let net = &self.model.network;
        if let Some(constant) = net.constant() {
            constant
        } else {
            net.sample(&mut key.index(direction).rng())
        }
    }
}

/// Each edge's retry rule.
fn retry_rules_of(edges: &[CallPolicy]) -> Vec<RetryRule> {
    edges.iter().map(|e| RetryRule::of(&e.retry)).collect()
}

/// The calling service of each edge, in the order of [`edges_of`].
fn callers_of(model: &Model) -> Vec<Option<ServiceId>> {
    let mut callers = vec![None; model.workloads.len()];
    for (s, service) in model.services.iter().enumerate() {
        for step in &service.steps {
            callers.extend(step.edges().map(|_| Some(s)));
        }
    }
    callers
}

/// How an edge is tied to fallbacks: where the calls of its own fallback
/// are, and, for the call of a fallback, whose fallback it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FallbackLink {
    /// The edge of its fallback's first `call` (the `k`-th call of the chain
    /// is `first_call + k`); [`EdgeId::MAX`] if it has none.
    pub first_call: EdgeId,
    /// For the call of a fallback: the edge whose fallback it belongs to, and
    /// its place in that chain.
    pub stands_in_for: Option<(EdgeId, u8)>,
}

impl FallbackLink {
    const NONE: FallbackLink = FallbackLink {
        first_call: EdgeId::MAX,
        stands_in_for: None,
    };
}

/// Every call edge of a model: one per workload (the caller's own policy),
/// then each step's edges ([`Step::edges`]): one per call step, and one per
/// branch of a parallel step, then one per `call` of their fallbacks, in
/// model order; the (first) edge of each step (`EdgeId::MAX` for work), and
/// each edge's [`FallbackLink`]. A parallel step's branch `b` is edge
/// `step_edge + b`.
fn edges_of(model: &Model) -> (Vec<CallPolicy>, Vec<Vec<EdgeId>>, Vec<FallbackLink>) {
    // Sized at once: grown by doubling as the call steps' edges follow the
    // workloads', the table could take twice its bytes (a 1,000-copy
    // workload's 520 KB of policies in a 1 MB table).
    let calls: usize = (model.services.iter())
        .flat_map(|s| &s.steps)
        .map(|step| step.edges().count())
        .sum();
    let mut edges: Vec<CallPolicy> = Vec::with_capacity(model.workloads.len() + calls);
    edges.extend(model.workloads.iter().map(|w| (*w.edge).clone()));
    let mut links = vec![FallbackLink::NONE; model.workloads.len()];
    let mut step_edge = Vec::new();
    for s in &model.services {
        let mut per_step = Vec::new();
        for step in &s.steps {
            let calls = step.calls();
            let first = edges.len() as EdgeId;
            per_step.push(if calls.is_empty() { EdgeId::MAX } else { first });
            edges.extend(step.edges().cloned());
            links.resize(edges.len(), FallbackLink::NONE);
            // The fallbacks' calls follow the step's calls, call by call.
            let mut next = first + calls.len() as EdgeId;
            for (b, call) in calls.iter().enumerate() {
                let primary = first + b as EdgeId;
                let chain = call
                    .fallback
                    .iter()
                    .flat_map(|f| f.chain.iter().enumerate());
                for (i, use_) in chain {
                    if matches!(use_, FallbackUse::Call(_)) {
                        let link = &mut links[primary as usize];
                        if link.first_call == EdgeId::MAX {
                            link.first_call = next;
                        }
                        links[next as usize].stands_in_for = Some((primary, i as u8));
                        next += 1;
                    }
                }
            }
        }
        step_edge.push(per_step);
    }
    (edges, step_edge, links)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(service: &str) -> stormsim_model::LoadedModel {
        let text = format!(
            r#"{{"name": "clocks",
            "workloads": [{{"name": "w", "target": "s", "arrival": {{"kind": "at_once"}}, "requests": 1,
                "clock_offset_ms": -7}}],
            "services": [{service}]}}"#
        );
        stormsim_model::load_model(&text, &[], None).unwrap_or_else(|e| panic!("{e:?}"))
    }

    /// Each instance's clock is the service's offset plus its own skew, drawn
    /// once within `[-spread, spread]`: the same however often it is asked,
    /// and the same in another run of the same model.
    #[test]
    fn per_host_clock_skew_is_drawn_once_within_its_spread() {
        let m = model(
            r#"{"name": "s", "instances": 50, "clock_offset_ms": 1000, "clock_spread_ms": 300}"#,
        );
        let v = &m.variants[0];
        let topology = Topology::new(&v.model, &v.changes);
        let again = Topology::new(&v.model, &v.changes);
        let offsets: Vec<i64> = (0..50).map(|i| topology.clock_offset(0, i)).collect();
        for (i, &o) in offsets.iter().enumerate() {
            assert!(
                (700_000_000..=1_300_000_000).contains(&o),
                "instance {i}: {o} ns"
            );
            assert_eq!(o, topology.clock_offset(0, i as u32));
            assert_eq!(o, again.clock_offset(0, i as u32));
        }
        let distinct: std::collections::BTreeSet<i64> = offsets.iter().copied().collect();
        assert!(distinct.len() > 40, "the skews should differ per host");
        // A workload's edge reads its own offset; a service's, its instance's.
        assert_eq!(topology.clock_offset_of_caller(0, 0), -7_000_000);
    }

    #[test]
    fn without_a_spread_every_instance_has_the_service_offset() {
        let m = model(r#"{"name": "s", "instances": 3, "clock_offset_ms": -250}"#);
        let v = &m.variants[0];
        let topology = Topology::new(&v.model, &v.changes);
        assert!((0..3).all(|i| topology.clock_offset(0, i) == -250_000_000));
    }
}
