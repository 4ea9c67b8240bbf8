//! A run that can be paused, looked at, copied and sent down a new future:
//! what multilevel splitting needs to estimate the probability of a storm
//! too rare for plain Monte Carlo.
//!
//! A copy taken at a pause ([`Trajectory::branch`]) holds the whole state
//! of the run as it is (requests in flight, queues, timers, policies and
//! what was measured so far), and goes on with its randomness re-keyed by a
//! salt: the requests that start after the pause draw their arrivals and
//! work from streams of their own, so that copies of one state are
//! independent futures of it. Requests already in flight keep their draws:
//! they are part of the state.

use crate::simulator::{Advanced, Simulator};
use crate::{LimitHit, VariantReport};
use stormsim_engine::SimTime;
use stormsim_model::Variant;

/// A run of a variant that advances pause by pause.
pub struct Trajectory<'v> {
    sim: Simulator<'v>,
    variant: &'v Variant,
    /// `Some` once the run is over, with the limit it stopped at, if any.
    ended: Option<Option<LimitHit>>,
}

impl<'v> Trajectory<'v> {
    /// The run of `variant` at time zero.
    pub fn start(variant: &'v Variant) -> Trajectory<'v> {
        let mut sim = Simulator::new(&variant.model, &variant.changes);
        sim.start();
        Trajectory {
            sim,
            variant,
            ended: None,
        }
    }

    /// Runs until every event before `pause` is handled; `false` if the run
    /// ended first (its horizon, no event left, or a limit).
    pub fn advance_to(&mut self, pause: SimTime) -> bool {
        if self.ended.is_some() {
            return false;
        }
        match self.sim.advance(Some(pause)) {
            Advanced::Paused => true,
            Advanced::Ended(stopped) => {
                self.ended = Some(stopped);
                false
            }
        }
    }

    /// The instant the run is at.
    pub fn now(&self) -> SimTime {
        self.sim.now()
    }

    /// Whether the run is over.
    pub fn is_over(&self) -> bool {
        self.ended.is_some()
    }

    /// The requests at the model's focus service now, waiting or served
    /// (over its instances): the backlog a storm builds, the score a
    /// splitting estimator climbs.
    pub fn focus_backlog(&self) -> u64 {
        self.sim.backlog_of(self.variant.model.focus)
    }

    /// A copy of this run, as it is now, whose requests from now on draw
    /// from streams re-keyed by `salt`: one of the futures of this state.
    pub fn branch(&self, salt: u64) -> Trajectory<'v> {
        let mut sim = self.sim.fork(&self.variant.model, &self.variant.changes);
        sim.rekey_future(salt);
        Trajectory {
            sim,
            variant: self.variant,
            ended: self.ended.clone(),
        }
    }

    /// An exact copy of this run as it is now: the same future.
    pub fn branch_exact(&self) -> Trajectory<'v> {
        Trajectory {
            sim: self.sim.fork(&self.variant.model, &self.variant.changes),
            variant: self.variant,
            ended: self.ended.clone(),
        }
    }

    /// Runs to the end and reports, its verdict judged on its own time
    /// series (no twin without the trigger: a branched run has none).
    pub fn finish(mut self) -> VariantReport {
        let stopped = match self.ended {
            Some(stopped) => stopped,
            None => match self.sim.advance(None) {
                Advanced::Ended(stopped) => stopped,
                Advanced::Paused => unreachable!("a run with no pause ran to its end"),
            },
        };
        self.sim.finish(&self.variant.name, stopped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stormsim_model::load_model;

    fn small_model() -> stormsim_model::LoadedModel {
        load_model(
            r#"{
              "name": "m", "seed": 3, "horizon_s": 20,
              "workloads": [{"name": "u", "target": "s", "arrival": {"kind": "poisson", "rate_per_s": 200}, "duration_s": 20,
                             "timeout_ms": 100, "retry": {"max_attempts": 3, "backoff": {"kind": "fixed", "ms": 50}}}],
              "services": [{"name": "s", "workers": 4, "queue_capacity": 100,
                            "steps": [{"work": {"kind": "exponential", "mean_ms": 10}}]}]
            }"#,
            &[],
            None,
        )
        .unwrap()
    }

    /// Paused and finished, a trajectory reports what the run reports; a
    /// branch with another salt goes elsewhere, one with the same salt the
    /// same way.
    #[test]
    fn a_paused_run_is_the_run_and_branches_differ_by_salt() {
        let model = small_model();
        let variant = &model.variants[0];
        let whole = crate::Simulator::new(&variant.model, &variant.changes).run(&variant.name);
        let mut t = Trajectory::start(variant);
        assert!(t.advance_to(SimTime::ZERO + stormsim_engine::SimDuration::from_ms(5_000.0)));
        let (a, b, c) = (t.branch(1), t.branch(2), t.branch(1));
        let paused = t.finish();
        assert_eq!(paused.series, whole.series);
        assert_eq!(paused.requests, whole.requests);
        let (a, b, c) = (a.finish(), b.finish(), c.finish());
        assert_eq!(a.series, c.series);
        assert_ne!(a.series, b.series);
        assert_ne!(a.series, whole.series);
        // The past is shared: the first five seconds are the run's.
        assert_eq!(a.series.global[..5], whole.series.global[..5]);
    }
}
