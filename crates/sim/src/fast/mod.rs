//! The fast path: a run of plain FIFO services resolved one attempt at a
//! time, with the general engine's measurements.
//!
//! The general engine ([`crate::Simulator`]) delivers up to six events per
//! attempt (3.5 on average in the Catalog incident's `baseline`): its
//! arrival at the callee, its work's end, its answer, its caller's timer,
//! the backoff before the next attempt, and the request's arrival. For a service that serves first come, first served, does one
//! piece of work and calls nobody, and callers whose next attempt depends
//! only on this one's outcome, every one of those instants is known when
//! the attempt reaches its callee (`run.rs`): the run takes one step per
//! attempt. The preconditions are written down and checked in
//! `eligibility.rs` ([`refusals`]); a run that fails any takes the general engine.
//!
//! The same keyed draws, the same rules at ties that matter (a change
//! before everything else at its instant; a timer before an answer or a
//! completion due at the same nanosecond), the same counters, series and
//! verdicts: the cross-check test (`tests/fast_path.rs`) runs every
//! eligible bundled model and fuzzed eligible models both ways and compares
//! their reports. Differences can come only from two events due at the
//! same nanosecond whose order the general engine takes from its queue's
//! insertion order (an arrival and a worker freeing up at one instant), and
//! from the order floating-point sums are added in. What differs by design
//! is the events count: the fast path counts the attempts it resolved.
//!
//! A run on the fast path that would come near a limit
//! (`limits.max_events`, `limits.max_in_flight`, the series' rows) is run
//! again on the general engine, which says where it stopped.

mod eligibility;
mod fifo;
mod run;
mod sends;
mod steps;

pub use eligibility::{refusals, Refusal};

use crate::VariantReport;
use stormsim_model::{Change, Model};

/// The fast path's one kind of step, as `stormsim bench` lists a run's
/// events by kind.
pub const ATTEMPTS_RESOLVED: &str = "attempt (fast path)";

/// Which engine ran a variant, as its report shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Engine {
    /// The fast path: one step per attempt.
    Fast,
    /// The general engine, with the preconditions of the fast path the
    /// variant failed (none: the fast run came near a limit, or the
    /// general engine was asked for).
    General(Vec<Refusal>),
}

impl Engine {
    /// The engine that ran a variant of `model` with `changes`, whose
    /// report is `report`.
    pub fn of(model: &Model, changes: &[Change], report: &VariantReport) -> Engine {
        let fast = report
            .events_by_kind
            .iter()
            .any(|(kind, _)| *kind == ATTEMPTS_RESOLVED);
        if fast {
            Engine::Fast
        } else {
            Engine::General(refusals(model, changes))
        }
    }

    /// One line: the engine, and for the general one the first reason (and
    /// how many more), or all of them with `all`.
    pub fn describe(&self, all: bool) -> String {
        match self {
            Engine::Fast => "fast path (one step per attempt)".into(),
            Engine::General(refusals) => match refusals.as_slice() {
                [] => "general engine".into(),
                [first, rest @ ..] if !all && !rest.is_empty() => {
                    format!("general engine ({first}; {} more)", rest.len())
                }
                all_of_them => format!(
                    "general engine ({})",
                    all_of_them
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            },
        }
    }
}

/// Runs `model` changed by `changes` on the fast path if it meets the
/// preconditions and stays clear of its limits; `None` otherwise (run it
/// on the general engine).
pub fn try_run(model: &Model, changes: &[Change], variant: &str) -> Option<VariantReport> {
    if !refusals(model, changes).is_empty() {
        return None;
    }
    run::run(model, changes, variant)
}
