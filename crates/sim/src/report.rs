//! Reports of a run, and their stable file formats.
//!
//! `summary.csv` is a contract that notebooks and scripts rely on: its columns
//! are documented in the README and none is renamed without a note there.

use crate::metrics::{round_ms, FailureCounts, Quantiles, ServiceCounters};
use crate::simulator::{LimitHit, Simulator};
use serde::Serialize;

/// What one variant's run measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VariantReport {
    /// Variant name.
    pub variant: String,
    /// Logical requests generated.
    pub requests: u64,
    /// Answered with success.
    pub succeeded: u64,
    /// Answered with an error (or given up on by the caller).
    pub failed: u64,
    /// Failures by reason.
    pub failed_by_reason: FailureCounts,
    /// `succeeded / requests`.
    pub success_rate: f64,
    /// Time until the caller got its answer, success or error, ms.
    pub latency_ms: Quantiles,
    /// The same over succeeded requests only.
    pub ok_latency_ms: Quantiles,
    /// Per service, in model order.
    pub services: Vec<ServiceReport>,
    /// Events simulated.
    pub events: u64,
    /// Virtual time at the end of the run, s.
    pub sim_time_s: f64,
    /// Set when a limit stopped the run: the report is partial.
    pub stopped_by_limit: Option<String>,
    /// Empirical CDF of latency over all requests, `(ms, fraction)`, for charts.
    #[serde(skip)]
    pub latency_cdf: Vec<(f64, f64)>,
}

/// What one service saw.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ServiceReport {
    /// Service name.
    pub name: String,
    /// Attempts received.
    pub calls: u64,
    /// `calls / requests`: the amplification of this service's load.
    pub calls_per_request: f64,
    /// Handlers run to their end (success or error).
    pub completed: u64,
    /// Of those, ended with an error.
    pub failed: u64,
    /// Completed after the caller had given up (orphan work).
    pub wasted: u64,
    /// Stopped early by cancellation.
    pub cancelled: u64,
    /// Refused by a full queue.
    pub rejected: u64,
    /// Longest queue seen.
    pub max_queue: u64,
}

/// All variants of one model run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunReport {
    /// Model name.
    pub model: String,
    /// Model description.
    pub description: String,
    /// Master seed.
    pub seed: u64,
    /// One report per variant, in file order.
    pub variants: Vec<VariantReport>,
}

pub(crate) fn variant_report(
    sim: &Simulator<'_>,
    variant: &str,
    stopped: Option<LimitHit>,
) -> VariantReport {
    let requests = sim.requests;
    let per_request = |x: u64| {
        if requests == 0 {
            0.0
        } else {
            round_ratio(x as f64 / requests as f64)
        }
    };
    let services = sim
        .model
        .services
        .iter()
        .zip(&sim.services)
        .map(|(spec, state)| {
            let ServiceCounters {
                calls,
                completed,
                failed,
                wasted,
                cancelled,
                rejected,
                max_queue,
            } = state.counters;
            ServiceReport {
                name: spec.name.clone(),
                calls,
                calls_per_request: per_request(calls),
                completed,
                failed,
                wasted,
                cancelled,
                rejected,
                max_queue,
            }
        })
        .collect();
    VariantReport {
        variant: variant.to_string(),
        requests,
        succeeded: sim.succeeded,
        failed: sim.failures.total(),
        failed_by_reason: sim.failures,
        success_rate: per_request(sim.succeeded),
        latency_ms: sim.latency.quantiles(),
        ok_latency_ms: sim.ok_latency.quantiles(),
        services,
        events: sim.queue.delivered(),
        sim_time_s: round_ms(sim.queue.now().as_secs() * 1000.0) / 1000.0,
        stopped_by_limit: stopped.map(|s| s.to_string()),
        latency_cdf: sim.latency.cdf(),
    }
}

/// Ratios carry six decimals: more is noise, and fewer digits diff better.
fn round_ratio(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// The fixed leading columns of `summary.csv`.
pub const SUMMARY_COLUMNS: &[&str] = &[
    "variant",
    "requests",
    "succeeded",
    "failed",
    "success_rate",
    "failed_timeout",
    "failed_deadline_exceeded",
    "failed_rejected",
    "failed_error",
    "latency_p50_ms",
    "latency_p90_ms",
    "latency_p99_ms",
    "latency_p999_ms",
    "latency_max_ms",
    "latency_mean_ms",
    "ok_latency_p50_ms",
    "ok_latency_p99_ms",
    "events",
    "sim_time_s",
];

/// The per-service columns, each prefixed by `<service>.`.
pub const SERVICE_COLUMNS: &[&str] = &[
    "calls",
    "calls_per_request",
    "completed",
    "failed",
    "wasted",
    "cancelled",
    "rejected",
    "max_queue",
];

impl RunReport {
    /// `summary.csv`: one row per variant; service columns for every service in
    /// the order first seen (a cell is empty where a variant lacks the service).
    pub fn summary_csv(&self) -> Result<String, csv::Error> {
        let mut service_names: Vec<&str> = Vec::new();
        for v in &self.variants {
            for s in &v.services {
                if !service_names.contains(&s.name.as_str()) {
                    service_names.push(&s.name);
                }
            }
        }
        let mut out = csv::Writer::from_writer(Vec::new());
        let mut header: Vec<String> = SUMMARY_COLUMNS.iter().map(|c| c.to_string()).collect();
        for s in &service_names {
            header.extend(SERVICE_COLUMNS.iter().map(|c| format!("{s}.{c}")));
        }
        out.write_record(&header)?;
        for v in &self.variants {
            let f = &v.failed_by_reason;
            let l = &v.latency_ms;
            let mut row: Vec<String> = vec![
                v.variant.clone(),
                v.requests.to_string(),
                v.succeeded.to_string(),
                v.failed.to_string(),
                v.success_rate.to_string(),
                f.timeout.to_string(),
                f.deadline_exceeded.to_string(),
                f.rejected.to_string(),
                f.error.to_string(),
                l.p50.to_string(),
                l.p90.to_string(),
                l.p99.to_string(),
                l.p999.to_string(),
                l.max.to_string(),
                l.mean.to_string(),
                v.ok_latency_ms.p50.to_string(),
                v.ok_latency_ms.p99.to_string(),
                v.events.to_string(),
                v.sim_time_s.to_string(),
            ];
            for name in &service_names {
                match v.services.iter().find(|s| s.name == *name) {
                    Some(s) => row.extend([
                        s.calls.to_string(),
                        s.calls_per_request.to_string(),
                        s.completed.to_string(),
                        s.failed.to_string(),
                        s.wasted.to_string(),
                        s.cancelled.to_string(),
                        s.rejected.to_string(),
                        s.max_queue.to_string(),
                    ]),
                    None => row.extend(SERVICE_COLUMNS.iter().map(|_| String::new())),
                }
            }
            out.write_record(&row)?;
        }
        let bytes = out.into_inner().map_err(|e| e.into_error())?;
        Ok(String::from_utf8(bytes).expect("CSV of UTF-8 strings is UTF-8"))
    }
}
