//! A cache in front of a call step, one per instance of the calling service.
//!
//! A request asks for one of `keys` keys, drawn by Zipf popularity from its own
//! stream (so every variant asks for the same keys). Then, at the instance:
//!
//! - **fresh** (loaded less than `ttl` ago): the step is done at once;
//! - **stale**, within `stale_while_revalidate` of expiry: served at once too,
//!   and one background load refreshes the key, off the request path;
//! - **miss**: load it from the callee. With `coalesce` (singleflight), a miss
//!   while the key is loading joins that load instead. A shared load belongs
//!   to no single caller: one giving up does not cancel it, and its error is
//!   every waiter's error. Without coalescing every miss is its own call, in
//!   its request's context.
//!
//! A hot key expiring under a crowd is the stampede: every request in the crowd
//! misses, and without coalescing each one queries the backend.

use crate::metrics::Outcome;
use crate::policy_state::{InstanceCache, PolicyState};
use crate::simulator::Simulator;
use crate::world::*;
use stormsim_engine::{SimTime, StreamKey};
use stormsim_model::CachePolicy;

/// Salt of a request's key draw.
const CACHE_KEY: u64 = u64::MAX - 7;
/// Salt of a load's stream.
const CACHE_LOAD: u64 = u64::MAX - 8;

/// Cumulative Zipf weights of keys 1..=n with exponent `s`, for inverse-CDF
/// draws: key `k` has weight `1 / k^s`.
pub(crate) fn zipf_cumulative(n: u32, s: f64) -> Vec<f64> {
    let weights: Vec<f64> = (1..=n).map(|k| libm::pow(f64::from(k), -s)).collect();
    let total: f64 = weights.iter().sum();
    let mut acc = 0.0;
    weights
        .iter()
        .map(|w| {
            acc += w / total;
            acc
        })
        .collect()
}

/// The key (0-based rank) whose cumulative weight first reaches `u`.
fn draw_key(cumulative: &[f64], u: f64) -> u32 {
    cumulative
        .partition_point(|&c| c < u)
        .min(cumulative.len() - 1) as u32
}

/// The key a request asks the cache on `edge` for, at the call step whose
/// stream is `step_key` (the same draw however often it is made: the step
/// and its fallback ask for the same key). `None` if the edge's Zipf table
/// is not made (the step never reached its cache: a timeline change gave
/// it one since).
pub(crate) fn cached_key(policies: &PolicyState, edge: EdgeId, step_key: StreamKey) -> Option<u32> {
    let cumulative = &policies.cache_zipf.get(edge as usize)?.1;
    (!cumulative.is_empty()).then(|| draw_key(cumulative, step_key.index(CACHE_KEY).rng().unit()))
}

impl Simulator<'_> {
    /// A handler reaches a cached call step.
    pub(crate) fn start_cached_call(&mut self, task_id: TaskId, edge: EdgeId, step_key: StreamKey) {
        let now = self.now();
        let policy: CachePolicy = self.topology.edges[edge as usize]
            .cache
            .expect("a cached call step");
        let caller = self.world.tasks[task_id].instance;
        let e = edge as usize;
        // Made when first needed, and again when a timeline change alters them.
        if self.policies.caches.len() <= e {
            self.policies.caches.resize_with(e + 1, Vec::new);
            self.policies
                .cache_zipf
                .resize_with(e + 1, Default::default);
        }
        if self.policies.caches[e].len() <= caller as usize {
            self.policies.caches[e].resize_with(caller as usize + 1, InstanceCache::default);
        }
        if self.policies.cache_zipf[e].0 != (policy.keys, policy.zipf_s.to_bits()) {
            self.policies.cache_zipf[e] = (
                (policy.keys, policy.zipf_s.to_bits()),
                zipf_cumulative(policy.keys, policy.zipf_s),
            );
        }
        let key = cached_key(&self.policies, edge, step_key).expect("the table was just made");
        let cache = &mut self.policies.caches[e][caller as usize];
        let entry = *cache.entries.entry(key).or_insert(CacheEntry {
            fresh_until: policy.warm_until.unwrap_or(SimTime::ZERO),
            loaded: policy.warm_until.is_some(),
            loading: None,
        });
        let counters = &mut self.measured.edges[edge as usize].cache;
        if now < entry.fresh_until {
            counters.hits += 1;
            self.call_finished(task_id, Outcome::Ok);
            return;
        }
        // Only a key that holds a value has one to serve stale.
        let stale_ok = entry.loaded
            && policy
                .stale_while_revalidate
                .is_some_and(|window| now < entry.fresh_until + window);
        if stale_ok {
            counters.stale_hits += 1;
            if entry.loading.is_none() {
                counters.refreshes += 1;
                self.start_cache_load(edge, caller, key, None, step_key, true);
            }
            self.call_finished(task_id, Outcome::Ok);
            return;
        }
        if let (true, Some(load)) = (policy.coalesce, entry.loading) {
            counters.coalesced += 1;
            self.world.cache_loads[load].waiters.push(task_id);
            self.world.tasks[task_id].state = TaskState::AwaitingCache(load);
            return;
        }
        counters.misses += 1;
        self.start_cache_load(edge, caller, key, Some(task_id), step_key, policy.coalesce);
    }

    /// Starts a load of `key` into `caller`'s cache, for `waiter` if any
    /// (`shared`: coalesced, or a background refresh).
    fn start_cache_load(
        &mut self,
        edge: EdgeId,
        caller: u32,
        key: u32,
        waiter: Option<TaskId>,
        step_key: StreamKey,
        shared: bool,
    ) {
        let load = self.world.cache_loads.insert(CacheLoad {
            edge,
            caller,
            key,
            waiters: waiter.into_iter().collect(),
            call: None,
            shared,
        });
        if shared {
            if let Some(entry) = self.policies.caches[edge as usize][caller as usize]
                .entries
                .get_mut(&key)
            {
                entry.loading = Some(load);
            }
        }
        // The first waiter's request names the load in the telemetry; a shared
        // load keeps none of its deadline, its own call's policies bound it.
        let (request, deadline, class) = match waiter.and_then(|t| self.world.tasks.get(t)) {
            Some(t) => (
                t.request,
                (!shared).then_some(t.deadline()).flatten(),
                t.class,
            ),
            None => (0, None, None),
        };
        if let Some(task) = waiter {
            self.world.tasks[task].state = TaskState::AwaitingCache(load);
        }
        let origin = CallOrigin {
            owner: Owner::CacheLoad(load),
            request,
            deadline,
            class,
        };
        let call = self.start_call(origin, edge, step_key.index(CACHE_LOAD), None);
        if let Some(l) = self.world.cache_loads.get_mut(load) {
            l.call = Some(call);
        }
    }

    /// A load ended: fill the entry on success and hand the outcome to every
    /// handler still waiting for it.
    pub(crate) fn cache_load_finished(&mut self, load: CacheLoadId, outcome: Outcome) {
        let Some(l) = self.world.cache_loads.remove(load) else {
            return;
        };
        let now = self.now();
        let ttl = self.topology.edges[l.edge as usize]
            .cache
            .map(|c| c.ttl)
            .expect("a cached edge");
        if let Some(entry) = self.policies.caches[l.edge as usize][l.caller as usize]
            .entries
            .get_mut(&l.key)
        {
            if entry.loading == Some(load) {
                entry.loading = None;
            }
            // A degraded answer (a fallback's, below) is not kept: a later
            // hit would serve it as a full one.
            if outcome == Outcome::Ok {
                entry.fresh_until = now + ttl;
                entry.loaded = true;
            }
        }
        for task in l.waiters {
            let waiting = self
                .world
                .tasks
                .get(task)
                .is_some_and(|t| matches!(t.state, TaskState::AwaitingCache(x) if x == load));
            if waiting {
                self.call_finished(task, outcome);
            }
        }
    }

    /// A waiting handler's caller left and the step watches for it: it stops
    /// waiting; its own (unshared) load is cancelled, a shared one runs on.
    pub(crate) fn leave_cache_load(&mut self, load: CacheLoadId) {
        let Some(l) = self.world.cache_loads.get(load) else {
            return;
        };
        if l.shared {
            return;
        }
        let call = l.call;
        self.world.cache_loads.remove(load);
        if let Some(call) = call {
            self.cancel_call(call);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_draws_follow_the_weights() {
        let c = zipf_cumulative(3, 1.0);
        // Weights 1, 1/2, 1/3 over 11/6.
        assert!((c[0] - 6.0 / 11.0).abs() < 1e-12);
        assert!((c[1] - 9.0 / 11.0).abs() < 1e-12);
        assert!((c[2] - 1.0).abs() < 1e-12);
        assert_eq!(draw_key(&c, 0.0), 0);
        assert_eq!(draw_key(&c, 0.5), 0);
        assert_eq!(draw_key(&c, 0.6), 1);
        assert_eq!(draw_key(&c, 0.99), 2);
        assert_eq!(draw_key(&c, 1.0), 2);
        // s = 0: uniform.
        let u = zipf_cumulative(4, 0.0);
        assert!((u[1] - 0.5).abs() < 1e-12);
    }
}
