//! From reports to charts: which charts a run gets, and the data each one reads.
//!
//! A run with at most 8 variants gets `load.svg` (offered load at the focus
//! service over time, one line per variant) and `comparison.svg`. A model with
//! a timeline also gets `timeline.svg` (up to 10 variants): per variant, offered
//! load (first tries and retries), goodput, capacity and requests in flight,
//! with the timeline's windows shaded.

use stormsim_model::{LoadedModel, Step, TimelineRole, Variant};
use stormsim_plot::{ComparisonChart, TimelineChart, TimelineMark, TimelinePanel, VariantSeries};
use stormsim_sim::{RunReport, VariantReport};

/// The comparison chart's data.
pub fn comparison(run: &RunReport) -> ComparisonChart {
    ComparisonChart {
        title: format!("{}: variants compared", run.model),
        subtitle: format!(
            "{} logical requests per variant, seed {}, common random numbers",
            run.variants.first().map_or(0, |v| v.requests),
            run.seed
        ),
        variants: run
            .variants
            .iter()
            .map(|v| VariantSeries {
                name: v.variant.clone(),
                latency_cdf: v.latency_cdf.clone(),
                requests: v.requests,
                success_rate: v.success_rate,
                latency_p50_ms: v.latency_ms.p50,
                latency_p99_ms: v.latency_ms.p99,
                calls_per_request: v
                    .services
                    .iter()
                    .map(|s| (s.name.clone(), s.calls_per_request))
                    .collect(),
                wasted: v
                    .services
                    .iter()
                    .map(|s| (s.name.clone(), s.wasted))
                    .collect(),
                cancelled: v
                    .services
                    .iter()
                    .map(|s| (s.name.clone(), s.cancelled))
                    .collect(),
            })
            .collect(),
    }
}

fn focus_index(v: &VariantReport) -> usize {
    v.services
        .iter()
        .position(|s| s.name == v.focus)
        .unwrap_or(0)
}

/// Offered attempts per second at the focus service, per variant.
pub fn load_lines(run: &RunReport) -> Vec<(String, Vec<f64>, Vec<f64>)> {
    run.variants
        .iter()
        .map(|v| {
            let ts = &v.series;
            let s = focus_index(v);
            let per_s = 1.0 / ts.bucket_s();
            let t = (0..ts.len()).map(|b| ts.start_s(b)).collect();
            let rps = (0..ts.len())
                .map(|b| ts.service(b, s).offered() as f64 * per_s)
                .collect();
            (v.variant.clone(), t, rps)
        })
        .collect()
}

/// Requests per second a service can complete: workers over its mean local
/// work; `None` when unbounded or when the handler calls other services.
fn capacity_rps(model: &stormsim_model::Model, service: usize) -> Option<f64> {
    let s = &model.services[service];
    if s.workers == u32::MAX {
        return None;
    }
    let mut work_ms = 0.0;
    for step in &s.steps {
        match step {
            Step::Work { dist, .. } => work_ms += dist.mean_ms(),
            Step::Call(_) => return None,
        }
    }
    let up = f64::from(s.instances - s.instances_down);
    (work_ms > 0.0).then(|| up * f64::from(s.workers) * 1000.0 / work_ms)
}

fn verdict(v: &VariantReport) -> Option<String> {
    let r = v.recovery.as_ref()?;
    Some(match (r.metastable, &r.recovered_by, r.recovered_after_s) {
        (false, _, _) => format!(
            "recovered {} s after the trigger ended",
            r.recovery_s.unwrap_or(0.0)
        ),
        (true, Some(by), Some(after)) => {
            format!("metastable: back only after \u{201c}{by}\u{201d} (+{after} s)")
        }
        (true, _, _) => "metastable: still degraded at the horizon".to_string(),
    })
}

/// Shaded windows and instants of a variant's timeline: the trigger (from its
/// start to its end), each intervention (to the next change), and the other
/// changes as instants. A ramp's steps share a name and are marked once.
fn marks(variant: &Variant, end_s: f64) -> Vec<TimelineMark> {
    let changes = &variant.changes;
    let mut out = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    let secs = |c: &stormsim_model::Change| c.at.as_secs();
    for (i, c) in changes.iter().enumerate() {
        if seen.contains(&c.name.as_str()) {
            continue;
        }
        seen.push(&c.name);
        match c.role {
            Some(TimelineRole::TriggerStart) => {
                let end = changes
                    .iter()
                    .find(|e| e.role == Some(TimelineRole::TriggerEnd))
                    // A trigger that never ends lasts to the end of the run.
                    .map_or(end_s, secs);
                out.push(TimelineMark::window(c.name.clone(), secs(c), end));
            }
            Some(TimelineRole::Intervention) => {
                let end = changes[i + 1..].iter().find(|e| e.name != c.name).map(secs);
                match end {
                    Some(end) => out.push(TimelineMark::window(c.name.clone(), secs(c), end)),
                    None => out.push(TimelineMark::instant(c.name.clone(), secs(c))),
                }
            }
            Some(TimelineRole::TriggerEnd) | None => {
                out.push(TimelineMark::instant(c.name.clone(), secs(c)))
            }
        }
    }
    out
}

/// The timeline chart, if the model has a timeline.
pub fn timeline(model: &LoadedModel, run: &RunReport) -> Option<TimelineChart> {
    let first = model.variants.first()?;
    if first.changes.is_empty() {
        return None;
    }
    let panels = run
        .variants
        .iter()
        .zip(&model.variants)
        .map(|(v, variant)| {
            let ts = &v.series;
            let s = focus_index(v);
            let per_s = 1.0 / ts.bucket_s();
            let t_s: Vec<f64> = (0..ts.len()).map(|b| ts.start_s(b)).collect();
            let capacity: Option<Vec<f64>> = t_s
                .iter()
                .map(|&t| {
                    let active = variant
                        .changes
                        .iter()
                        .rev()
                        .find(|c| c.at.as_secs() <= t)
                        .map_or(&variant.model, |c| &c.model);
                    capacity_rps(active, s)
                })
                .collect();
            TimelinePanel {
                name: v.variant.clone(),
                verdict: verdict(v),
                offered_first: (0..ts.len())
                    .map(|b| ts.service(b, s).offered_first as f64 * per_s)
                    .collect(),
                offered_retry: (0..ts.len())
                    .map(|b| ts.service(b, s).offered_retry as f64 * per_s)
                    .collect(),
                goodput: ts
                    .global
                    .iter()
                    .map(|g| g.succeeded as f64 * per_s)
                    .collect(),
                capacity,
                // Requests in flight (queued + in service) show both a growing
                // queue and an exhausted pool (with no queue at all).
                queue: (0..ts.len())
                    .map(|b| ts.service(b, s).in_flight as f64)
                    .collect(),
                t_s,
            }
        })
        .collect();
    Some(TimelineChart {
        title: format!(
            "{}: load, goodput and requests in flight at {} over time",
            run.model, run.variants[0].focus
        ),
        subtitle: format!(
            "seed {}; shaded: the timeline's trigger and interventions",
            run.seed
        ),
        panels,
        marks: marks(first, run.variants[0].sim_time_s),
    })
}
