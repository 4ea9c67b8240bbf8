//! From a run (its [`RunView`]) to charts: which charts a run gets, and the
//! data each one reads.
//!
//! A run with at most 8 variants gets `load.svg` (offered load at the focus
//! service over time, one line per variant) and `comparison.svg`. A model with
//! a timeline also gets `timeline.svg` (up to 10 variants): per variant, offered
//! load (first tries and retries), goodput, capacity and requests in flight,
//! with the timeline's windows shaded.
//!
//! Both show what users got: in `comparison.svg` a variant's success bar is
//! split into the share answered in full and the share fallbacks answered
//! (degraded), and in `timeline.svg` goodput counts the answers in full, the
//! degraded ones a line of their own, so that a page kept up by stale or
//! default answers does not pass for a healthy one.
//!
//! Two more are drawn only when they have something to show (S3's zombie
//! accounting): `zombies.svg`, zombie requests over time, one line per variant,
//! when some variant had one alive at a bucket's start; and `wasted.svg`, per
//! variant and service the work done for nobody, cancelled or expired, when
//! some service wasted or cancelled work.
//!
//! A focus service with a `cpu` (processor sharing) also gets `cores.svg`:
//! its busy cores over time, one line per variant (none where it has no
//! cpu), beside which the timeline's requests in flight (threads held) tell
//! the two apart.
//!
//! A model with parallel steps also gets `branches.svg`: per variant, the p50
//! and p99 of its succeeded requests end to end beside each branch's, the
//! slowest branch's p99 marked, when some branch measured a latency.

use crate::view::{RunView, TimelineEntry, VariantView};
use stormsim_model::TimelineRole;
use stormsim_plot::style::format_count;
use stormsim_plot::{
    BranchesChart, BranchesVariant, ComparisonChart, DegradedSpan, LineSeries, PercentileRow,
    ServiceWaste, TimelineChart, TimelineMark, TimelinePanel, VariantSeries, WastedChart,
    WastedVariant,
};
use stormsim_sim::analysis::Outcome;

/// The comparison chart's data.
pub fn comparison(run: &RunView) -> ComparisonChart {
    ComparisonChart {
        title: format!("{}: variants compared", run.model),
        subtitle: requests_subtitle(run),
        variants: run
            .variants
            .iter()
            .map(|v| VariantSeries {
                name: v.label(),
                latency_cdf: v.latency_cdf.clone(),
                requests: v.requests,
                // A quantity that does not exist is drawn as "n/a", not 0.
                success_rate: v.success_rate.unwrap_or(f64::NAN),
                degraded_rate: if v.requests > 0 {
                    v.degraded as f64 / v.requests as f64
                } else {
                    0.0
                },
                latency_p50_ms: v.p50_ms.unwrap_or(f64::NAN),
                latency_p99_ms: v.p99_ms.unwrap_or(f64::NAN),
                ok_latency_p99_ms: v.ok_p99_ms.unwrap_or(f64::NAN),
                calls_per_request: v
                    .services
                    .iter()
                    .map(|s| (s.name.clone(), s.calls_per_request.unwrap_or(f64::NAN)))
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

/// "3.60 M logical requests per variant, seed 1, …", or, when a limit cut a
/// variant short, how many each ran: the count of the complete ones must not
/// be read as the partial one's.
fn requests_subtitle(run: &RunView) -> String {
    let complete: Vec<&VariantView> = run.variants.iter().filter(|v| v.complete).collect();
    let counts = match complete.first() {
        Some(first) if complete.iter().all(|v| v.requests == first.requests) => {
            format!(
                "{} logical requests per variant",
                format_count(first.requests)
            )
        }
        Some(_) => "logical requests per variant as each ran".to_string(),
        None => "every variant PARTIAL".to_string(),
    };
    format!(
        "{counts}{}, seed {}, common random numbers",
        partial_notes(run),
        run.seed
    )
}

/// "; PARTIAL, counts of part of a run: slow: stopped by … after 697
/// requests", or nothing when every variant is complete.
pub fn partial_notes(run: &RunView) -> String {
    let notes: Vec<String> = run
        .variants
        .iter()
        .filter_map(VariantView::partial_note)
        .collect();
    if notes.is_empty() {
        String::new()
    } else {
        format!("; PARTIAL, counts of part of a run: {}", notes.join("; "))
    }
}

/// A per-bucket count at the focus service as a rate per second.
fn per_second(v: &VariantView, counts: &[u64]) -> Vec<f64> {
    let per_s = 1.0 / v.context.bucket_s;
    counts.iter().map(|&n| n as f64 * per_s).collect()
}

/// Offered attempts per second at the focus service, per variant.
pub fn load_lines(run: &RunView) -> Vec<LineSeries> {
    run.variants
        .iter()
        .map(|v| {
            let ts = &v.series;
            let offered: Vec<u64> = ts
                .offered_first
                .iter()
                .zip(&ts.offered_retry)
                .map(|(f, r)| f + r)
                .collect();
            (v.label(), ts.t_s.clone(), per_second(v, &offered))
        })
        .collect()
}

/// The most zombie requests alive at once in each bucket, per variant, or
/// `None` when there never was one: a chart of flat zeros would only say what
/// the table says better.
pub fn zombie_lines(run: &RunView) -> Option<Vec<LineSeries>> {
    let any = run
        .variants
        .iter()
        .any(|v| v.series.zombies.iter().any(|&n| n > 0));
    any.then(|| {
        run.variants
            .iter()
            .map(|v| {
                let counts = v.series.zombies.iter().map(|&n| n as f64).collect();
                (v.label(), v.series.t_s.clone(), counts)
            })
            .collect()
    })
}

/// The busy-cores chart's data when some variant's focus service has a
/// `cpu`, else `None`: a line per variant, so that each keeps its colour of
/// the other charts; one without a cpu has none ("no data").
pub fn cores_lines(run: &RunView) -> Option<Vec<LineSeries>> {
    let any = run.variants.iter().any(|v| !v.series.cores_busy.is_empty());
    any.then(|| {
        run.variants
            .iter()
            .map(|v| {
                let cores = &v.series.cores_busy;
                let t = if cores.is_empty() {
                    Vec::new()
                } else {
                    v.series.t_s.clone()
                };
                (v.label(), t, cores.clone())
            })
            .collect()
    })
}

/// The wasted-work chart's data, or `None` when no service of any variant
/// wasted or cancelled work (expired requests alone are the deadlines doing
/// their job, and the comparison table shows them).
pub fn wasted(run: &RunView) -> Option<WastedChart> {
    let any = run
        .variants
        .iter()
        .flat_map(|v| &v.services)
        .any(|s| s.wasted > 0 || s.cancelled > 0);
    any.then(|| WastedChart {
        title: format!("{}: work done for no one, per service", run.model),
        subtitle: format!(
            "each service's calls that ended for no one: completed after the requester left, stopped when it left, or refused or cut for their deadline; whole run, seed {}",
            run.seed
        ),
        variants: run
            .variants
            .iter()
            .map(|v| WastedVariant {
                name: v.label(),
                services: v
                    .services
                    .iter()
                    .map(|s| ServiceWaste {
                        name: s.name.clone(),
                        wasted: s.wasted,
                        cancelled: s.cancelled,
                        expired: s.expired,
                    })
                    .collect(),
            })
            .collect(),
    })
}

/// The branches chart's data, or `None` when no variant has a branch of a
/// parallel step that measured a latency (a model without parallel steps).
pub fn branches(run: &RunView) -> Option<BranchesChart> {
    let any = run.variants.iter().any(|v| !v.branches.is_empty());
    any.then(|| BranchesChart {
        title: format!(
            "{}: requests end to end beside each branch of their parallel steps",
            run.model
        ),
        subtitle: format!(
            "p50 and p99: end to end, of the succeeded requests; of a branch, of its calls that ended, \
             from the step's start; seed {}{}",
            run.seed,
            partial_notes(run)
        ),
        variants: run
            .variants
            .iter()
            .map(|v| BranchesVariant {
                name: v.label(),
                whole: PercentileRow {
                    name: "end to end".to_string(),
                    p50_ms: v.ok_p50_ms,
                    p99_ms: v.ok_p99_ms,
                },
                branches: v
                    .branches
                    .iter()
                    .map(|b| PercentileRow {
                        name: format!("{} \u{2192} {}", b.caller, b.callee),
                        p50_ms: Some(b.p50_ms),
                        p99_ms: Some(b.p99_ms),
                    })
                    .collect(),
            })
            .collect(),
    })
}

fn verdict(v: &VariantView) -> Option<String> {
    let r = v.verdict.as_ref()?;
    let verdict = match (r.outcome, &r.recovered_by, r.recovered_after_s) {
        (Outcome::Recovered, _, _) => format!(
            "recovered {} s after the trigger ended",
            r.recovery_s.unwrap_or(0.0)
        ),
        (Outcome::Metastable, Some(by), Some(after)) => {
            format!("metastable: back only {after} s after \u{201c}{by}\u{201d}")
        }
        (Outcome::Metastable, _, _) => match r.course.as_ref().and_then(|c| c.back_at_s) {
            Some(t) => {
                format!("metastable: back only at {t} s, by itself, past the recovery window")
            }
            None => "metastable: still degraded at the horizon".to_string(),
        },
        (Outcome::Relapsed, _, _) => format!(
            "relapsed: recovered, then degraded again from {} s with no new trigger",
            r.course
                .as_ref()
                .and_then(|c| c.relapsed_at_s)
                .unwrap_or(0.0)
        ),
        (Outcome::Overloaded, _, _) => {
            "overloaded: the load after the trigger is more than the system carries untouched"
                .to_string()
        }
        (Outcome::UnhealthyBeforeTrigger, _, _) => {
            "unhealthy before the trigger: no healthy baseline to judge against".to_string()
        }
        (Outcome::Undetermined, _, _) => {
            "no verdict: the run does not show enough to judge".to_string()
        }
    };
    Some(match v.partial_note() {
        Some(note) => format!("PARTIAL ({note}); {verdict}"),
        None => verdict,
    })
}

/// Shaded windows and instants of a variant's timeline: the trigger (from its
/// start to its end), each intervention (to the next change), and the other
/// changes as instants. A ramp's steps share a name and are marked once.
fn marks(changes: &[TimelineEntry], end_s: f64) -> Vec<TimelineMark> {
    let mut out = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
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
                    .map_or(end_s, |e| e.at_s);
                out.push(TimelineMark::window(c.name.clone(), c.at_s, end));
            }
            Some(TimelineRole::Intervention) => {
                let end = changes[i + 1..]
                    .iter()
                    .find(|e| e.name != c.name)
                    .map(|e| e.at_s);
                match end {
                    Some(end) => out.push(TimelineMark::window(c.name.clone(), c.at_s, end)),
                    None => out.push(TimelineMark::instant(c.name.clone(), c.at_s)),
                }
            }
            Some(TimelineRole::TriggerEnd) | None => {
                out.push(TimelineMark::instant(c.name.clone(), c.at_s))
            }
        }
    }
    out
}

/// The timeline chart, if the model has a timeline.
pub fn timeline(run: &RunView) -> Option<TimelineChart> {
    let first = run.variants.first()?;
    if first.context.timeline.is_empty() {
        return None;
    }
    let panels = run
        .variants
        .iter()
        .map(|v| {
            let ts = &v.series;
            let capacity: Option<Vec<f64>> = ts.t_s.iter().map(|&t| v.capacity_at(t)).collect();
            // Goodput is what users got in full: the answers fallbacks gave
            // are a line of their own (none without fallbacks, or from a
            // folder written before them).
            let degraded = |b: usize| ts.degraded.get(b).copied().unwrap_or(0);
            let answered_full: Vec<u64> = (ts.succeeded.iter().enumerate())
                .map(|(b, &n)| n.saturating_sub(degraded(b)))
                .collect();
            TimelinePanel {
                name: v.label(),
                verdict: verdict(v),
                offered_first: per_second(v, &ts.offered_first),
                offered_retry: per_second(v, &ts.offered_retry),
                goodput: per_second(v, &answered_full),
                degraded_answers: per_second(v, &ts.degraded),
                capacity,
                // Requests in flight (queued + in service) show both a growing
                // queue and an exhausted pool (with no queue at all).
                queue: ts.in_flight.iter().map(|&n| n as f64).collect(),
                t_s: ts.t_s.clone(),
                degraded: v
                    .verdict
                    .iter()
                    .flat_map(|r| r.course.iter().flat_map(|c| &c.spans))
                    .map(|s| DegradedSpan {
                        from_s: s.from_s,
                        to_s: s.to_s,
                        overload: s.overload,
                    })
                    .collect(),
            }
        })
        .collect();
    Some(TimelineChart {
        title: format!(
            "{}: load, goodput and requests in flight at {} over time",
            run.model, first.focus
        ),
        subtitle: format!(
            "seed {}; shaded: the timeline's trigger and interventions{}",
            run.seed,
            partial_notes(run)
        ),
        panels,
        marks: marks(&first.context.timeline, first.sim_time_s),
    })
}
