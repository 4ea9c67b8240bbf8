//! What one run measured, from its time series alone.
//!
//! Everything comes from the per-bucket series of the report rather than its
//! summary, for two reasons: the series carries exact sums (latency in ns,
//! busy worker-ns) where the summary's mean comes from an HDR histogram, and
//! buckets let the warm-up be cut off.
//!
//! The steady-state window starts at the first bucket boundary after the
//! warm-up. Means over requests (W, Wq) take the requests answered from then
//! on, to the end of the run (every request is answered: validation models
//! have no horizon). Arrival shares (P(wait), P(block)) take the buckets from
//! then until the last one wholly inside the arrival window, while the system
//! is still stationary.

use crate::queue::{Quantity, Queue};
use stormsim_sim::timeseries::TimeSeries;
use stormsim_sim::VariantReport;

/// The bucket range of the steady state, `[from, arrivals_end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// First bucket after the warm-up.
    pub from: usize,
    /// First bucket not wholly inside the arrival window.
    pub arrivals_end: usize,
}

impl Window {
    /// The window of a queue: the warm-up rounded up to a bucket boundary,
    /// the end of arrivals rounded down. `None` when the measured part would
    /// be shorter than the warm-up: such a run is too short to say anything.
    pub fn of(queue: &Queue) -> Option<Window> {
        let warm_up = queue.warm_up();
        let from = (warm_up / queue.bucket).ceil() as usize;
        let arrivals_end = (queue.arrivals_until / queue.bucket).floor() as usize;
        let measured = arrivals_end.saturating_sub(from) as f64 * queue.bucket;
        (measured >= warm_up && arrivals_end > from).then_some(Window { from, arrivals_end })
    }
}

/// One run's estimate of `quantity`.
pub fn estimate(quantity: Quantity, report: &VariantReport, window: Window) -> f64 {
    let series = &report.series;
    let steady = window.from..window.arrivals_end.min(series.len());
    let answered = window.from.min(series.len())..series.len();
    match quantity {
        Quantity::TimeInSystem => {
            latency_ns(series, answered.clone()) / 1e6 / count(series, answered)
        }
        Quantity::Wait => {
            // Each answered request's wait is its latency less its service
            // time, and the busy worker-time of the same buckets is the sum
            // of their service times (to within the requests in service at
            // the window's start, a handful among tens of thousands).
            let busy: f64 = answered
                .clone()
                .map(|b| series.service(b, 0).busy_ns as f64)
                .sum();
            (latency_ns(series, answered.clone()) - busy) / 1e6 / count(series, answered)
        }
        Quantity::WaitProbability => {
            // Counted per request: the arrivals that found every worker busy
            // and waited, over all arrivals, in the steady window.
            let waited: u64 = steady.clone().map(|b| series.service(b, 0).queued).sum();
            let arrived: u64 = steady.map(|b| series.service(b, 0).offered()).sum();
            waited as f64 / arrived as f64
        }
        Quantity::Blocking => {
            let lost: u64 = steady.clone().map(|b| series.service(b, 0).rejected).sum();
            let arrived: u64 = steady.map(|b| series.global[b].requests).sum();
            lost as f64 / arrived as f64
        }
        Quantity::Little => little_ratio(report),
        Quantity::ClassTimeInSystem(_) => f64::NAN,
    }
}

/// One run's mean time in system of the requests of workload `w` answered
/// from the window's start on, ms.
pub fn class_time_in_system(report: &VariantReport, window: Window, w: usize) -> f64 {
    let series = &report.series;
    let (mut sum_ns, mut n) = (0u128, 0u64);
    for b in window.from.min(series.len())..series.len() {
        let bucket = series.workload(b, w);
        sum_ns += bucket.latency_sum_ns;
        n += bucket.answered;
    }
    sum_ns as f64 / 1e6 / n as f64
}

/// L / (λW) over the whole run, which starts and ends empty: L·T is the
/// in-flight gauge integrated over time (sampled at each bucket start and
/// held for the bucket, the last one only until the run ended), λW·T is the
/// sum of every request's time in the system. Equal when the gauge and the
/// latencies agree.
fn little_ratio(report: &VariantReport) -> f64 {
    let series = &report.series;
    let width_ns = series.bucket.as_nanos() as f64;
    let end_ns = report.sim_time_s * 1e9;
    let area_ns: f64 = (0..series.len())
        .map(|b| {
            let start = b as f64 * width_ns;
            let held = width_ns.min(end_ns - start).max(0.0);
            series.service(b, 0).in_flight as f64 * held
        })
        .sum();
    area_ns / latency_ns(series, 0..series.len())
}

/// Sum of the latencies of the requests answered in `buckets`, ns.
fn latency_ns(series: &TimeSeries, buckets: std::ops::Range<usize>) -> f64 {
    buckets
        .map(|b| series.global[b].latency_sum_ns as f64)
        .sum()
}

/// Requests answered in `buckets`.
fn count(series: &TimeSeries, buckets: std::ops::Range<usize>) -> f64 {
    buckets.map(|b| series.global[b].answered() as f64).sum()
}
