//! What the charts and `index.html` show of a run, in one type that is built
//! either from a finished run (`stormsim run`) or read back from the run's
//! folder (`stormsim plot`).
//!
//! The charts read nothing else, so the two ways give the same charts byte
//! for byte as long as every number survives the trip through the folder's
//! files exactly. Two rules keep it so: CSV numbers are written with Rust's
//! shortest round-trip formatting and parsed back exactly, and the few
//! numbers only `summary.json` holds carry at most six decimals (serde_json's
//! default parser is exact for those, not for 17-digit ones).

use serde::{Deserialize, Serialize};
use stormsim_model::{LoadedModel, Step, TimelineRole};
use stormsim_sim::analysis::Outcome;
use stormsim_sim::timeseries::ServiceBucket;
use stormsim_sim::{RunReport, VariantReport};

/// One run, as its charts see it.
#[derive(Clone, Debug, PartialEq)]
pub struct RunView {
    /// Model name.
    pub model: String,
    /// Model description.
    pub description: String,
    /// Master seed.
    pub seed: u64,
    /// The run's `--set` overrides, `PATH=VALUE` as given (empty without).
    pub overrides: Vec<String>,
    /// In the model's order.
    pub variants: Vec<VariantView>,
}

/// One variant, as its charts see it.
#[derive(Clone, Debug, PartialEq)]
pub struct VariantView {
    /// Variant name.
    pub name: String,
    /// Logical requests generated.
    pub requests: u64,
    /// Of those, succeeded.
    pub succeeded: u64,
    /// Of those, answered degraded by fallbacks (0 in a folder written
    /// before fallbacks, which had none).
    pub degraded: u64,
    /// `succeeded / requests` (`None` without requests).
    pub success_rate: Option<f64>,
    /// Median latency of all requests, ms (`None`: none answered).
    pub p50_ms: Option<f64>,
    /// 99th percentile latency of all requests, ms.
    pub p99_ms: Option<f64>,
    /// Median latency of succeeded requests, ms (`None`: none succeeded).
    pub ok_p50_ms: Option<f64>,
    /// 99th percentile latency of succeeded requests, ms.
    pub ok_p99_ms: Option<f64>,
    /// Most attempts the focus service received in one second.
    pub peak_offered_rps: f64,
    /// False when a limit stopped the run: every chart marks it.
    pub complete: bool,
    /// The limit that stopped it.
    pub stopped_by: Option<String>,
    /// The recovery analysis's verdict, when the model asks for one.
    pub verdict: Option<VerdictView>,
    /// Per service, in model order.
    pub services: Vec<ServiceView>,
    /// The branches of parallel steps that measured a latency, in the order
    /// of summary.json's `edges` (model order); empty without parallel
    /// steps.
    pub branches: Vec<BranchView>,
    /// The service the load charts follow.
    pub focus: String,
    /// Virtual time at the end of the run, s.
    pub sim_time_s: f64,
    /// Empirical CDF of latency, `(ms, fraction)` (`latency.csv`).
    pub latency_cdf: Vec<(f64, f64)>,
    /// Per-bucket counts at the focus service (`timeseries.csv`).
    pub series: FocusSeries,
    /// What the model says that the run's files do not (`summary.json`).
    pub context: VariantContext,
}

/// The part of the recovery analysis the charts show.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct VerdictView {
    /// What the analysis concluded.
    pub outcome: Outcome,
    /// Why, with the numbers.
    pub reason: String,
    /// Seconds from the trigger's end to recovery, when it recovered by itself.
    pub recovery_s: Option<f64>,
    /// What ended the degradation.
    pub recovered_by: Option<String>,
    /// Seconds from that event to recovery.
    pub recovered_after_s: Option<f64>,
    /// The storm's course: its degraded stretches and any relapse. Absent
    /// from the summary.json of runs made before it was recorded: no
    /// stretches then, so `stormsim plot` still redraws such a folder.
    #[serde(default)]
    pub course: Option<CourseView>,
}

/// The part of the storm's course the timeline chart shows.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct CourseView {
    /// When it was back, s.
    pub back_at_s: Option<f64>,
    /// When it degraded again after being back, s.
    pub relapsed_at_s: Option<f64>,
    /// The degraded stretches.
    pub spans: Vec<SpanView>,
}

/// A degraded stretch, as summary.json writes it.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
pub struct SpanView {
    /// Its start, s.
    pub from_s: f64,
    /// Its end, s.
    pub to_s: f64,
    /// Overload, not a storm.
    pub overload: bool,
}

/// The per-service numbers of the comparison chart.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct ServiceView {
    /// Service name.
    pub name: String,
    /// Calls received per logical request (`None` without requests).
    pub calls_per_request: Option<f64>,
    /// Work completed after its caller gave up.
    pub wasted: u64,
    /// Work stopped early by cancellation.
    pub cancelled: u64,
    /// Requests refused, dropped or cut short because of their deadline.
    /// Absent from the summary.json of runs made before S3, which did not
    /// count them: 0 there, so `stormsim plot` still redraws such a folder.
    #[serde(default)]
    pub expired: u64,
}

/// One branch of a parallel step: an edge of summary.json with a
/// `latency_ms`, timed from the step's start to the branch's end.
#[derive(Clone, Debug, PartialEq)]
pub struct BranchView {
    /// The service whose parallel step it is.
    pub caller: String,
    /// The service it calls.
    pub callee: String,
    /// Median latency of its calls that ended, ms.
    pub p50_ms: f64,
    /// Their 99th percentile, ms.
    pub p99_ms: f64,
}

/// One variant's time series at its focus service, bucket by bucket.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FocusSeries {
    /// Bucket start times, s.
    pub t_s: Vec<f64>,
    /// First attempts received.
    pub offered_first: Vec<u64>,
    /// Retries received.
    pub offered_retry: Vec<u64>,
    /// Requests queued or in service at the bucket's start.
    pub in_flight: Vec<u64>,
    /// Logical requests answered with success (run-wide).
    pub succeeded: Vec<u64>,
    /// Of those, answered degraded by fallbacks (run-wide); empty when read
    /// from a folder written before fallbacks, which had none.
    pub degraded: Vec<u64>,
    /// The most zombie requests alive at once in the bucket (run-wide): tries
    /// over for their sender while work below them still runs.
    pub zombies: Vec<u64>,
    /// Mean busy cores over each bucket, as `timeseries.csv` rounds them,
    /// when the focus service has a `cpu` in this variant (else empty; a
    /// timeline cannot add or remove one).
    pub cores_busy: Vec<f64>,
}

/// What `summary.json` adds to each variant's report so that the folder alone
/// redraws its charts: the variant's description, its bucket width and its
/// timeline with the focus service's capacity along it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VariantContext {
    /// What the variant changes.
    pub description: String,
    /// Width of a `timeseries.csv` bucket, s.
    pub bucket_s: f64,
    /// Requests per second the focus service can complete at the start
    /// (`null` when unbounded or when its handler calls other services).
    pub focus_capacity_rps: Option<f64>,
    /// The timeline's changes in time order.
    pub timeline: Vec<TimelineEntry>,
}

/// One change of a variant's timeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimelineEntry {
    /// When, s.
    pub at_s: f64,
    /// The timeline entry's name.
    pub name: String,
    /// Its role in the recovery analysis.
    pub role: Option<TimelineRole>,
    /// The focus service's capacity from then on, requests per second.
    pub focus_capacity_rps: Option<f64>,
}

impl RunView {
    /// The view of a finished run of `model`.
    pub fn from_run(model: &LoadedModel, run: &RunReport, overrides: &[String]) -> RunView {
        RunView {
            model: run.model.clone(),
            description: run.description.clone(),
            seed: run.seed,
            overrides: overrides.to_vec(),
            variants: run
                .variants
                .iter()
                .zip(&model.variants)
                .map(|(report, variant)| VariantView::from_report(report, variant))
                .collect(),
        }
    }
}

impl VariantView {
    /// The variant's name as every chart shows it: a partial run says so,
    /// short enough to survive a chart's key (the subtitle or the panel
    /// says which limit stopped it, after how many requests).
    pub fn label(&self) -> String {
        if self.complete {
            self.name.clone()
        } else {
            format!("{} [PARTIAL]", self.name)
        }
    }

    /// "slow: stopped by limits.max_in_flight after 697 requests", for a
    /// partial run.
    pub fn partial_note(&self) -> Option<String> {
        (!self.complete).then(|| {
            format!(
                "{}: stopped by limits.{} after {} requests",
                self.name,
                self.stopped_by.as_deref().unwrap_or("?"),
                stormsim_plot::style::format_count(self.requests)
            )
        })
    }

    fn from_report(v: &VariantReport, variant: &stormsim_model::Variant) -> VariantView {
        let ts = &v.series;
        let s = v
            .services
            .iter()
            .position(|s| s.name == v.focus)
            .unwrap_or(0);
        let at_focus = |count: fn(&ServiceBucket) -> u64| {
            (0..ts.len()).map(|b| count(ts.service(b, s))).collect()
        };
        VariantView {
            name: v.variant.clone(),
            requests: v.requests,
            succeeded: v.succeeded,
            degraded: v.degraded.total,
            success_rate: v.success_rate,
            p50_ms: v.latency_ms.map(|l| l.p50),
            p99_ms: v.latency_ms.map(|l| l.p99),
            ok_p50_ms: v.ok_latency_ms.map(|l| l.p50),
            ok_p99_ms: v.ok_latency_ms.map(|l| l.p99),
            peak_offered_rps: v.peak_offered_rps,
            complete: v.complete,
            stopped_by: v.stopped_by.map(String::from),
            verdict: v.verdict.as_ref().map(|r| VerdictView {
                outcome: r.outcome,
                reason: r.reason.clone(),
                recovery_s: r.recovery_s,
                recovered_by: r.recovered_by.clone(),
                recovered_after_s: r.recovered_after_s,
                course: r.course.as_ref().map(|c| CourseView {
                    back_at_s: c.back_at_s,
                    relapsed_at_s: c.relapsed_at_s,
                    spans: (c.spans.iter())
                        .map(|s| SpanView {
                            from_s: s.from_s,
                            to_s: s.to_s,
                            overload: s.overload,
                        })
                        .collect(),
                }),
            }),
            services: v
                .services
                .iter()
                .map(|s| ServiceView {
                    name: s.name.clone(),
                    calls_per_request: s.calls_per_request,
                    wasted: s.wasted,
                    cancelled: s.cancelled,
                    expired: s.expired,
                })
                .collect(),
            branches: v
                .edges
                .iter()
                .filter_map(|e| {
                    let l = e.latency_ms?;
                    Some(BranchView {
                        caller: e.caller.clone(),
                        callee: e.callee.clone(),
                        p50_ms: l.p50,
                        p99_ms: l.p99,
                    })
                })
                .collect(),
            focus: v.focus.clone(),
            sim_time_s: v.sim_time_s,
            latency_cdf: v.latency_cdf.clone(),
            series: FocusSeries {
                t_s: (0..ts.len()).map(|b| ts.start_s(b)).collect(),
                offered_first: at_focus(|x| x.offered_first),
                offered_retry: at_focus(|x| x.offered_retry),
                in_flight: at_focus(|x| x.in_flight),
                succeeded: ts.global.iter().map(|g| g.succeeded).collect(),
                degraded: ts.global.iter().map(|g| g.degraded).collect(),
                zombies: ts.global.iter().map(|g| g.zombies).collect(),
                cores_busy: cores_busy(ts, s),
            },
            context: VariantContext {
                description: variant.description.clone(),
                bucket_s: ts.bucket_s(),
                focus_capacity_rps: capacity_rps(&variant.model, s),
                timeline: variant
                    .changes
                    .iter()
                    .map(|c| TimelineEntry {
                        at_s: c.at.as_secs(),
                        name: c.name.clone(),
                        role: c.role,
                        focus_capacity_rps: capacity_rps(&c.model, s),
                    })
                    .collect(),
            },
        }
    }

    /// The focus service's capacity at `t_s`: that of the last change at or
    /// before it, else the initial one.
    pub fn capacity_at(&self, t_s: f64) -> Option<f64> {
        self.context
            .timeline
            .iter()
            .rev()
            .find(|c| c.at_s <= t_s)
            .map_or(self.context.focus_capacity_rps, |c| c.focus_capacity_rps)
    }
}

/// The mean busy cores of `service` in each bucket, rounded as timeseries.csv
/// writes them, as `plot` reads them back from it: none when the service has
/// no cpu; a gap (NaN) where the mean is none (a last bucket of no width),
/// and none at all if every bucket is one.
fn cores_busy(ts: &stormsim_sim::timeseries::TimeSeries, service: usize) -> Vec<f64> {
    let cores: Vec<f64> = (0..ts.len())
        .filter_map(|b| {
            let mean = ts.mean_over_bucket(b, ts.cpu(b, service)?.cores_busy_ns);
            Some(mean.map_or(f64::NAN, |m| (m * 1e6).round() / 1e6))
        })
        .collect();
    if cores.iter().all(|c| c.is_nan()) {
        return Vec::new();
    }
    cores
}

/// Requests per second a service can complete with every worker busy:
/// workers (or, with a `cpu`, its cores if fewer) over its mean local work,
/// slowed by its contention with all of them in service; `None` when
/// unbounded or when the handler calls other services. Rounded to six
/// decimals so that `summary.json` carries it exactly.
fn capacity_rps(model: &stormsim_model::Model, service: usize) -> Option<f64> {
    let s = &model.services[service];
    // Requests that progress at full pace at once, and requests in service.
    let (parallel, in_service) = match s.cpu {
        Some(cpu) if s.workers == u32::MAX => (cpu.cores, cpu.cores),
        Some(cpu) => (cpu.parallelism(s.workers), s.workers),
        None => (s.workers, s.workers),
    };
    if parallel == u32::MAX {
        return None;
    }
    let mut work_ms = 0.0;
    for step in &s.steps {
        match step {
            Step::Work { dist, .. } => work_ms += dist.mean_ms(),
            Step::Call(_) | Step::Parallel(_) => return None,
        }
    }
    // Work with every worker busy (a busier service is slower).
    let work_ms = work_ms * s.contention.map_or(1.0, |c| c.factor(in_service));
    let up = f64::from(s.instances - s.instances_down);
    (work_ms > 0.0).then(|| {
        let rps = up * f64::from(parallel) * 1000.0 / work_ms;
        (rps * 1e6).round() / 1e6
    })
}
