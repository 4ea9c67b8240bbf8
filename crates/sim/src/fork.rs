//! Counterfactuals that share their past: a variant that differs from an
//! earlier one only from some instant on (an intervention added at T+16 min,
//! a timeline entry changed late in the run) does not simulate the same
//! first minutes again. The earlier variant's run pauses at that instant, a
//! copy of its whole state goes on as the later variant, and the earlier run
//! resumes.
//!
//! The copy goes on exactly as a run of its own from time zero would
//! (`Simulator::fork`): a run is a pure function of its model, timeline and
//! seed, and up to the pause the two runs had the same ones. Its report is
//! the same, byte for byte, whether it forked or not, on any number of
//! threads; only the time it takes differs. The tests hold every bundled
//! model's forked runs to their own runs.

use crate::simulator::{Advanced, Simulator};
use crate::VariantReport;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};
use stormsim_engine::SimTime;
use stormsim_model::{Arrival, Change, Model, Variant, Workload};

/// Where a variant's run starts: from another's state, at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Branch {
    /// The variant whose run it continues (an earlier one, run from zero).
    pub trunk: usize,
    /// The first instant at which the two differ: the run is shared before it.
    pub at: SimTime,
}

/// For each variant, the earlier variant it shares the longest past with,
/// and until when; `None` for a variant run from time zero (every variant
/// that shares no past, and every trunk). Two variants share their past
/// until the first timeline change that is not the same in both (same
/// instant, same model from then on), when the model they start with is
/// the same.
pub fn plan(variants: &[Variant]) -> Vec<Option<Branch>> {
    if variants.len() < 2 {
        return vec![None; variants.len()];
    }
    let mut parts = PartPrints::default();
    let prints: Vec<Fingerprints> = variants.iter().map(|v| parts.variant(v)).collect();
    // A variant on the fast path runs whole on its own: it costs less than
    // the general engine's run from a copy.
    let fast: Vec<bool> = variants
        .iter()
        .map(|v| crate::fast::refusals(&v.model, &v.changes).is_empty())
        .collect();
    let mut plan: Vec<Option<Branch>> = Vec::with_capacity(variants.len());
    for (j, later) in variants.iter().enumerate() {
        if fast[j] {
            plan.push(None);
            continue;
        }
        let horizon = later.model.horizon.map(|h| SimTime::ZERO + h);
        let best = (0..j)
            .filter(|&i| plan[i].is_none() && !fast[i])
            .filter_map(|i| {
                let at = shared_until(&prints[i], &prints[j])?;
                Some(Branch { trunk: i, at })
            })
            // Worth a copy: some of the run is shared, and not all of it
            // (two variants that never differ run on their own).
            .filter(|b| b.at > SimTime::ZERO && horizon.is_none_or(|h| b.at < h))
            // The longest past; the earliest trunk among equals.
            .max_by_key(|b| (b.at, std::cmp::Reverse(b.trunk)));
        plan.push(best);
    }
    plan
}

/// What a variant's run is doing, for a progress display.
#[derive(Debug)]
pub enum Progress<'r> {
    /// It started (from time zero, or as a copy of its trunk).
    Started(usize),
    /// It ended.
    Done {
        /// Which variant.
        variant: usize,
        /// Its report.
        report: &'r VariantReport,
        /// The run it continued, if it forked from one.
        branch: Option<Branch>,
        /// Events it delivered itself (its trunk delivered the rest).
        events_here: u64,
    },
}

/// Runs every variant of `variants`, in parallel on the current rayon pool,
/// each forked from the run it shares its past with ([`plan`]); reports in
/// the variants' order, the same as [`crate::run_variant`]'s for each.
/// `progress` hears of each run as it starts and ends, from whichever
/// thread runs it.
pub fn run_variants(
    variants: &[Variant],
    progress: &(dyn Fn(Progress<'_>) + Sync),
) -> Vec<VariantReport> {
    let plan = plan(variants);
    let results: Vec<Mutex<Option<VariantReport>>> =
        variants.iter().map(|_| Mutex::new(None)).collect();
    let finished = |variant: usize, report: VariantReport, branch, events_here| {
        let report = crate::twin::judge_against_twin(&variants[variant], report);
        progress(Progress::Done {
            variant,
            report: &report,
            branch,
            events_here,
        });
        *results[variant].lock().expect("no run panicked") = Some(report);
    };
    rayon::scope(|scope| {
        for (trunk, _) in plan.iter().enumerate().filter(|(_, b)| b.is_none()) {
            let mut forks: Vec<(usize, Branch)> = plan
                .iter()
                .enumerate()
                .filter_map(|(j, b)| b.filter(|b| b.trunk == trunk).map(|b| (j, b)))
                .collect();
            forks.sort_by_key(|(j, b)| (b.at, *j));
            let finished = &finished;
            if forks.is_empty() {
                spawn_alone(scope, &variants[trunk], trunk, progress, finished);
                continue;
            }
            scope.spawn(move |scope| {
                progress(Progress::Started(trunk));
                let v = &variants[trunk];
                let mut run = Simulator::new(&v.model, &v.changes);
                run.start();
                let mut ended = None;
                let mut forks = forks.into_iter();
                for (j, branch) in forks.by_ref() {
                    let w = &variants[j];
                    match run.advance(Some(branch.at)) {
                        Advanced::Paused => {
                            let copy = run.fork(&w.model, &w.changes);
                            let shared = copy.queue.delivered();
                            scope.spawn(move |_| {
                                progress(Progress::Started(j));
                                let report = run_to_end(copy, &w.name);
                                let here = report.events - shared;
                                finished(j, report, Some(branch), here);
                            });
                        }
                        Advanced::Ended(stopped) => {
                            // Over (a limit, or nothing left) before the
                            // pause: this one and the rest run on their own.
                            ended = Some(stopped);
                            spawn_alone(scope, w, j, progress, finished);
                            break;
                        }
                    }
                }
                for (j, _) in forks {
                    spawn_alone(scope, &variants[j], j, progress, finished);
                }
                let stopped = match ended {
                    Some(stopped) => stopped,
                    None => match run.advance(None) {
                        Advanced::Ended(stopped) => stopped,
                        Advanced::Paused => unreachable!("a run with no pause ran to its end"),
                    },
                };
                let report = run.finish(&v.name, stopped);
                let events = report.events;
                finished(trunk, report, None, events);
            });
        }
    });
    results
        .into_iter()
        .map(|r| {
            r.into_inner()
                .expect("no run panicked")
                .expect("every variant ran")
        })
        .collect()
}

/// A forked run from where it is to its end.
fn run_to_end(mut run: Simulator<'_>, variant: &str) -> VariantReport {
    match run.advance(None) {
        Advanced::Ended(stopped) => run.finish(variant, stopped),
        Advanced::Paused => unreachable!("a run with no pause ran to its end"),
    }
}

/// Runs `variant` (the `index`th) from time zero, in a task of its own.
fn spawn_alone<'s, F>(
    scope: &rayon::Scope<'s>,
    variant: &'s Variant,
    index: usize,
    progress: &'s (dyn Fn(Progress<'_>) + Sync),
    finished: &'s F,
) where
    F: Fn(usize, VariantReport, Option<Branch>, u64) + Sync,
{
    scope.spawn(move |_| {
        progress(Progress::Started(index));
        let report = crate::run_alone(variant);
        let events = report.events;
        finished(index, report, None, events);
    });
}

/// Two fingerprints of everything a run reads from a variant: its model at
/// time zero, and each timeline change's instant and model. Two 64-bit
/// hashes of the `Debug` text (which spells every number exactly), so
/// that two variants that differ are never taken as the same.
struct Fingerprints {
    start: [u64; 2],
    changes: Vec<(SimTime, [u64; 2])>,
}

/// The fingerprints of the parts of models (workloads, services, the
/// workloads' names), each found once per allocation: a workload's copies
/// share one, and a timeline step shares with the step before it what it
/// leaves alone, so that a trace of 10⁶ rates in 1,000 copies over 100
/// steps is formatted once, not 10⁵ times. Keyed by address, which is the
/// part's while the variants are borrowed.
#[derive(Default)]
struct PartPrints {
    known: HashMap<usize, [u64; 2]>,
    /// Bytes of `Debug` text hashed, for the tests.
    hashed: u64,
}

impl PartPrints {
    fn variant(&mut self, variant: &Variant) -> Fingerprints {
        Fingerprints {
            start: self.model(&variant.model),
            changes: variant
                .changes
                .iter()
                .map(|c: &Change| (c.at, self.model(&c.model)))
                .collect(),
        }
    }

    /// The model's fingerprint: its own fields' text, then its parts'
    /// fingerprints in order.
    fn model(&mut self, model: &Model) -> [u64; 2] {
        let mut parts = Vec::with_capacity(model.workloads.len() + model.services.len() + 2);
        parts.extend(model.workloads.iter().map(|w| self.workload(w)));
        parts.extend(model.services.iter().map(|s| self.part(s)));
        parts.push(self.part(&model.workload_ids));
        parts.push(self.part(&model.reported_workloads));
        let own = Model {
            workloads: Vec::new(),
            services: Vec::new(),
            workload_ids: Arc::default(),
            reported_workloads: Arc::default(),
            ..model.clone()
        };
        self.hash(&own, |hasher| parts.hash(hasher))
    }

    /// A workload's fingerprint: its fields', its load shape's apart (a
    /// step that changes the workload's timeout keeps its trace).
    fn workload(&mut self, workload: &Arc<Workload>) -> [u64; 2] {
        let key = Arc::as_ptr(workload) as *const () as usize;
        if let Some(known) = self.known.get(&key) {
            return *known;
        }
        let print = match &workload.arrival {
            Arrival::Shaped(shape) => {
                let shape = self.part(shape);
                let own = Workload {
                    arrival: Arrival::AtOnce,
                    ..Workload::clone(workload)
                };
                self.hash(&own, |hasher| ("shaped", shape).hash(hasher))
            }
            _ => self.hash(workload, |_| {}),
        };
        self.known.insert(key, print);
        print
    }

    fn part<T: std::fmt::Debug>(&mut self, part: &Arc<T>) -> [u64; 2] {
        let key = Arc::as_ptr(part) as *const () as usize;
        if let Some(known) = self.known.get(&key) {
            return *known;
        }
        let print = self.hash(part, |_| {});
        self.known.insert(key, print);
        print
    }

    /// Two salted hashes of `value`'s `Debug` text, then of what `then`
    /// adds.
    fn hash(
        &mut self,
        value: &dyn std::fmt::Debug,
        then: impl Fn(&mut std::hash::DefaultHasher),
    ) -> [u64; 2] {
        [0u8, 1].map(|salt| {
            let mut hasher = HashWriter(std::hash::DefaultHasher::new(), 0);
            salt.hash(&mut hasher.0);
            write!(hasher, "{value:?}").expect("hashing does not fail");
            self.hashed += hasher.1;
            then(&mut hasher.0);
            hasher.0.finish()
        })
    }
}

/// Feeds formatted text to a hasher, without building the text, counting
/// its bytes.
struct HashWriter(std::hash::DefaultHasher, u64);

impl std::fmt::Write for HashWriter {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.write(s.as_bytes());
        self.1 += s.len() as u64;
        Ok(())
    }
}

/// Until when runs of `a` and `b` are the same: the instant of the first
/// timeline change not in both (`None`: they differ from time zero, or
/// never).
fn shared_until(pa: &Fingerprints, pb: &Fingerprints) -> Option<SimTime> {
    if pa.start != pb.start {
        return None;
    }
    let same = pa
        .changes
        .iter()
        .zip(&pb.changes)
        .take_while(|(x, y)| x == y)
        .count();
    let next_a = pa.changes.get(same).map(|c| c.0);
    let next_b = pb.changes.get(same).map(|c| c.0);
    match (next_a, next_b) {
        (None, None) => None,
        (x, y) => x.into_iter().chain(y).min(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The incident's variants, with `overrides`.
    fn catalog_incident(overrides: &[(String, serde_json::Value)]) -> Vec<Variant> {
        let text = include_str!("../../../models/catalog-incident.json");
        stormsim_model::load_model(text, overrides, None)
            .expect("a valid model")
            .variants
    }

    /// As it is, the incident's scale-outs take the fast path: each runs
    /// whole on its own, and nothing forks.
    #[test]
    fn variants_on_the_fast_path_run_on_their_own() {
        assert!(plan(&catalog_incident(&[])).iter().all(Option::is_none));
    }

    /// A workload of 200 copies whose arrivals follow a trace of 10⁴ rates,
    /// in two variants with a timeline: telling which variants share their
    /// past hashes each part's text once, where every copy's trace was
    /// spelled out again in each variant and step (0.12 s a copy and
    /// variant for a trace of 10⁶ rates, before the run began).
    #[test]
    fn regression_trace_copies_slow() {
        let rates: Vec<f64> = (0..10_000).map(|k| f64::from(k % 3)).collect();
        let model = serde_json::json!({
            "name": "trace-copies", "horizon_s": 10,
            "workloads": [{"name": "users", "target": "api", "duration_s": 10, "count": 200,
                           "timeout_ms": 100,
                           "arrival": {"kind": "trace", "bucket_s": 0.001, "rates_per_s": rates}}],
            "services": [{"name": "api", "steps": [{"work": {"kind": "constant", "ms": 1}}]}],
            "timeline": [{"name": "more", "at_s": 2, "set": {"services[api].workers": 4}},
                         {"name": "slower", "at_s": 4, "set": {"workloads[users].timeout_ms": 50}}],
            "variants": [{"name": "a"}, {"name": "b", "set": {"services[api].workers": 2}}]
        });
        let variants = stormsim_model::load_model(&model.to_string(), &[], None)
            .expect("a valid model")
            .variants;
        let mut parts = PartPrints::default();
        for v in &variants {
            parts.variant(v);
        }
        let one_trace = format!("{rates:?}").len() as u64;
        // Two salted hashes of each variant's trace, at most: the steps
        // share it, as the copies do.
        assert!(
            parts.hashed < 2 * 2 * one_trace + 200_000,
            "{} bytes hashed, a trace is {one_trace}",
            parts.hashed
        );
    }

    /// With a breaker on every client (so that no variant may take the
    /// fast path), the scale-outs continue the baseline's run from their
    /// intervention.
    #[test]
    fn the_incident_scale_outs_continue_the_baseline_from_their_intervention() {
        let breaker = serde_json::json!({"kind": "resilience4j"});
        let variants = catalog_incident(&[("workloads[*].breaker".into(), breaker)]);
        let plan = plan(&variants);
        let named: Vec<(&str, Option<Branch>)> = variants
            .iter()
            .map(|v| v.name.as_str())
            .zip(plan.iter().copied())
            .collect();
        let at_1020 = Some(Branch {
            trunk: 0,
            at: SimTime::ZERO + stormsim_engine::SimDuration::from_ms(1_020_000.0),
        });
        for (name, branch) in named {
            let expected = if name.starts_with("scale-out") {
                at_1020
            } else {
                None
            };
            assert_eq!(branch, expected, "variant {name}");
        }
    }
}
