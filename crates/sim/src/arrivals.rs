//! When an open-loop workload's next request arrives: the one rule both
//! engines follow (the general engine's arrival events, the fast path's
//! merged sends), so that a run draws the same arrivals on either.
//!
//! A Poisson workload draws an exponential gap, a constant one adds its
//! fixed gap, and a load shape is a Poisson process whose rate varies,
//! drawn by thinning (Lewis and Shedler, 1979: candidates at the shape's
//! highest rate, each kept with probability `rate(t) / highest`), all on
//! the workload's own stream.

use stormsim_engine::{SimDuration, SimTime, StreamRng};
use stormsim_model::shape::RateShape;
use stormsim_model::{Arrival, Model, Workload};

/// A drawn gap of `ns` nanoseconds as a duration, rounded to whole
/// nanoseconds as every arrival's gap is.
pub(crate) fn gap(ns: f64) -> SimDuration {
    SimDuration::from_ms(ns / 1e6)
}

/// A workload's next arrival after one at `now`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// At this instant (it may lie past the workload's end: scheduling
    /// checks that).
    At(SimTime),
    /// None: a load shape's traffic ended (its end, the workload's or the
    /// horizon reached).
    Ended,
    /// The candidates a load shape drew and thinned away reached the
    /// events the run had left (`limits.max_events` counts both).
    OutOfEvents,
}

/// Workload `w`'s next arrival after `now` under `model`; `arrival` is
/// `model.workloads[w].arrival` (all at once and closed loops arrive now).
/// `thinned` counts a shape's candidates thinned away, up to `thin_cap`.
pub(crate) fn next_after(
    model: &Model,
    w: usize,
    rng: &mut StreamRng,
    now: SimTime,
    thinned: &mut u64,
    thin_cap: u64,
) -> Next {
    match model.workloads[w].arrival {
        Arrival::Poisson { mean_gap_ns } => Next::At(now + gap(rng.exponential(mean_gap_ns))),
        // Each gap rounds to whole ns: at most 0.5 ns of drift per arrival.
        Arrival::Constant { rate_per_s } => Next::At(now + gap(1e9 / rate_per_s)),
        Arrival::Shaped(ref shape) => {
            let end = shape_end(model, &model.workloads[w], shape);
            next_thinned(rng, shape, now, end, thinned, thin_cap)
        }
        Arrival::AtOnce | Arrival::ClosedLoop { .. } => Next::At(now),
    }
}

/// Where a shaped workload's traffic ends: its shape's silence, its
/// duration or the horizon, whichever comes first.
fn shape_end(model: &Model, w: &Workload, shape: &RateShape) -> Option<SimTime> {
    let silent = shape
        .silent_from()
        .map(|s| SimTime::ZERO + SimDuration::from_ms(s * 1e3));
    [w.duration.map(|d| SimTime::ZERO + d), silent]
        .into_iter()
        .chain([model.horizon.map(|h| SimTime::ZERO + h)])
        .flatten()
        .min()
}

/// A shaped workload's next arrival after `from`, by thinning, unless its
/// traffic ends first (`end`) or the candidates thinned away reach
/// `thin_cap` (a rate far below the peak for long, or a peak so high that
/// a gap rounds to 0 ns, would otherwise draw without end).
fn next_thinned(
    rng: &mut StreamRng,
    shape: &RateShape,
    from: SimTime,
    end: Option<SimTime>,
    thinned: &mut u64,
    thin_cap: u64,
) -> Next {
    let highest = shape.max_rate();
    let mean_gap_ns = 1e9 / highest;
    let mut t = from;
    loop {
        t += gap(rng.exponential(mean_gap_ns));
        if end.is_some_and(|e| t >= e) {
            return Next::Ended;
        }
        let rate = shape.rate_at(t.as_nanos() as f64 / 1e9);
        if rng.unit() * highest < rate {
            return Next::At(t);
        }
        *thinned += 1;
        if *thinned >= thin_cap {
            return Next::OutOfEvents;
        }
    }
}

/// Whether a timeline change changed how a workload's requests arrive
/// (its pending arrival is then void, and its next drawn from the change).
pub(crate) fn changed(old: &std::sync::Arc<Workload>, new: &std::sync::Arc<Workload>) -> bool {
    let same = std::sync::Arc::ptr_eq(old, new)
        || (old.max_requests == new.max_requests
            && old.duration == new.duration
            && match (&old.arrival, &new.arrival) {
                // A trace of 10⁶ rates is not spelled out at each change
                // of each copy: a step that leaves it alone shares it.
                (Arrival::Shaped(a), Arrival::Shaped(b)) if std::sync::Arc::ptr_eq(a, b) => true,
                (a, b) => format!("{a:?}") == format!("{b:?}"),
            });
    !same
}
