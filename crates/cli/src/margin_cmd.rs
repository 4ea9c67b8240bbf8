//! `stormsim margin`: at each load, the trigger size that tips the system in
//! half the runs (and, asked for, 10% and 90%), per variant, with intervals;
//! written as `margin.csv`, `margin_probes.csv` and the margin chart.

use crate::output::write_atomically;
use crate::sweep_charts::{draw_sweep_folder, SPEC_FILE};
use crate::sweep_cmd::said_written;
use anyhow::{Context, Result};
use std::path::Path;
use std::process::ExitCode;
use stormsim_plot::{MarginChart, MarginPoint, MarginSeries};
use stormsim_sweep::margin::{margin_csv, margin_probes_csv, sentence, MarginProbe, MarginResult};
use stormsim_sweep::spec::SweepSpec;
use stormsim_sweep::Sweep;

/// The margin's chart.
pub const MARGIN_CHART: &str = "margin.svg";
/// Its table, one row per variant, load and level.
pub const MARGIN_TABLE: &str = "margin.csv";
/// Every probe.
pub const MARGIN_PROBES: &str = "margin_probes.csv";

/// What `stormsim margin MODEL` asks for when the file is a model, not a
/// sweep file with a `margin` block.
#[derive(clap::Args, Debug)]
pub struct MarginFlags {
    /// For a model file: load levels as factors on every workload's rate
    /// (comma-separated). Default: 1.
    #[arg(long = "load-scale", value_delimiter = ',')]
    pub load_scale: Vec<f64>,
    /// For a model file: the trigger size's path. Default: the
    /// trigger's duration (its `trigger_start` to its `trigger_end`).
    #[arg(long)]
    pub trigger: Option<String>,
    /// For a model file: the smallest trigger size searched.
    #[arg(long)]
    pub from: Option<f64>,
    /// For a model file: the largest.
    #[arg(long)]
    pub to: Option<f64>,
    /// For a model file: stop bisecting at this bracket width.
    #[arg(long)]
    pub tolerance: Option<f64>,
    /// For a model file: the levels of P(storm) (comma-separated).
    /// Default: 0.5.
    #[arg(long, value_delimiter = ',')]
    pub levels: Vec<f64>,
    /// For a model file: the variants compared (repeatable). Default:
    /// the first.
    #[arg(long = "variant", value_name = "NAME")]
    pub variants: Vec<String>,
    /// For a model file: replications of a probe's first look (default 8).
    #[arg(long)]
    pub replications: Option<u32>,
    /// For a model file: the most replications a probe runs when unsure
    /// (default 48).
    #[arg(long = "max-replications")]
    pub max_replications: Option<u32>,
}

impl MarginFlags {
    /// The first flag given, by its name: none may be with a sweep file.
    pub fn first_given(&self) -> Option<&'static str> {
        [
            ("load-scale", !self.load_scale.is_empty()),
            ("trigger", self.trigger.is_some()),
            ("from", self.from.is_some()),
            ("to", self.to.is_some()),
            ("tolerance", self.tolerance.is_some()),
            ("levels", !self.levels.is_empty()),
            ("variant", !self.variants.is_empty()),
            ("replications", self.replications.is_some()),
            ("max-replications", self.max_replications.is_some()),
        ]
        .into_iter()
        .find_map(|(name, given)| given.then_some(name))
    }
}

/// The text of a sweep file with a `margin` block for the model file
/// `model` (a file name beside it) and `flags`, or what is missing.
pub fn sweep_text_for_model(
    model: &Path,
    model_name: &str,
    flags: &MarginFlags,
) -> std::result::Result<String, String> {
    let (Some(from), Some(to)) = (flags.from, flags.to) else {
        return Err(
            "a margin of a model file needs the trigger range: --from and --to (seconds of the trigger's duration, or values of --trigger PATH)"
                .into(),
        );
    };
    let load_scale = if flags.load_scale.is_empty() {
        vec![1.0]
    } else {
        flags.load_scale.clone()
    };
    let (replications, max_replications) = (
        flags.replications.unwrap_or(8),
        flags.max_replications.unwrap_or(48),
    );
    let mut trigger = serde_json::json!({ "from": from, "to": to });
    if let Some(path) = &flags.trigger {
        trigger["path"] = path.clone().into();
    }
    if let Some(t) = flags.tolerance {
        trigger["tolerance"] = t.into();
    }
    let mut margin = serde_json::json!({
        "trigger": trigger,
        "load_scale": load_scale,
        "stop": { "max_replications": max_replications.max(replications) },
    });
    if !flags.levels.is_empty() {
        margin["levels"] = flags.levels.clone().into();
    }
    if !flags.variants.is_empty() {
        margin["variants"] = flags.variants.clone().into();
    }
    let file = model
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let spec = serde_json::json!({
        "name": format!("{model_name}-margin"),
        "description": format!("The storm margin of {file}."),
        "model": file,
        "replications": replications,
        "margin": margin,
    });
    Ok(serde_json::to_string_pretty(&spec).expect("JSON serializes"))
}

/// Runs the margin of `sweep` into `out`.
pub fn run_margin(sweep: &Sweep, out: &Path, jobs: Option<usize>, quiet: bool) -> Result<ExitCode> {
    let Some(margin) = sweep.spec.margin.clone() else {
        eprintln!("{:?} has no `margin` block", sweep.spec.name);
        return Ok(ExitCode::from(2));
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.unwrap_or(0))
        .build()
        .context("cannot start the worker threads")?;
    if !quiet {
        let stop = margin.stop.map_or(String::new(), |s| {
            format!(", up to {} when unsure", s.max_replications)
        });
        eprintln!(
            "margin: {} load level(s) × {} variant(s) × level(s) {:?} of P(storm); {} replications per probe{stop}",
            Sweep::margin_loads(&margin).len(),
            margin.variants.len().max(1),
            margin.levels,
            sweep.spec.replications,
        );
    }
    let started = std::time::Instant::now();
    let on_probe = |p: &MarginProbe| {
        if !quiet {
            let ci = p
                .probe
                .ci
                .map_or(String::new(), |(lo, hi)| format!(" [{lo:.2}, {hi:.2}]"));
            eprintln!(
                "  {:>6.0} s  {} at load {}: trigger {} -> {:.2} of {} runs storm{ci} ({})",
                started.elapsed().as_secs_f64(),
                p.variant,
                p.load,
                p.probe.value,
                p.probe.mean,
                p.probe.used,
                p.probe.stopped.name()
            );
        }
    };
    let result = match pool.install(|| sweep.margin(&on_probe)) {
        Ok(r) => r,
        Err(problem) => {
            eprintln!("{problem}");
            return Ok(ExitCode::from(2));
        }
    };
    std::fs::create_dir_all(out)?;
    write_atomically(&out.join(MARGIN_TABLE), margin_csv(&result)?.as_bytes())?;
    write_atomically(
        &out.join(MARGIN_PROBES),
        margin_probes_csv(&result)?.as_bytes(),
    )?;
    let mut json = serde_json::to_string_pretty(&sweep.spec)?;
    json.push('\n');
    write_atomically(&out.join(SPEC_FILE), json.as_bytes())?;
    let drawn = draw_sweep_folder(out)?;
    for r in &result.rows {
        println!("{}", sentence(&result, r));
    }
    println!(
        "{}",
        said_written(out, &[MARGIN_TABLE, MARGIN_PROBES, SPEC_FILE], &drawn)
    );
    Ok(ExitCode::SUCCESS)
}

/// The chart of a margin: each variant's crossings of its middle level
/// (0.5 when asked for, else the first), and the 10–90% band where both
/// were.
pub fn margin_chart(spec: &SweepSpec, result: &MarginResult) -> MarginChart {
    let levels: Vec<f64> = spec
        .margin
        .as_ref()
        .map(|m| m.levels.clone())
        .unwrap_or_default();
    let (from, to) = spec
        .margin
        .as_ref()
        .map_or((0.0, 1.0), |m| (m.trigger.from, m.trigger.to));
    let main = if levels.iter().any(|l| (l - 0.5).abs() < 1e-9) {
        0.5
    } else {
        levels.first().copied().unwrap_or(0.5)
    };
    let x = |load: f64| result.base_rate.map_or(load, |rate| rate * load);
    let mut names: Vec<&str> = Vec::new();
    for r in &result.rows {
        if !names.contains(&r.variant.as_str()) {
            names.push(&r.variant);
        }
    }
    let series = names
        .iter()
        .map(|name| {
            let rows = |level: f64| {
                result
                    .rows
                    .iter()
                    .filter(move |r| r.variant == *name && (r.level - level).abs() < 1e-9)
            };
            let points = rows(main)
                .map(|r| MarginPoint {
                    load: x(r.load),
                    critical: r.critical,
                    low: r.low,
                    high: r.high,
                    low_sure: r.low_sure,
                    high_sure: r.high_sure,
                    storms_at_every_size: r.critical.is_none()
                        && r.note.contains("every size from"),
                })
                .collect();
            let band = rows(0.1)
                .filter_map(|lo| {
                    let hi = rows(0.9).find(|h| h.load == lo.load)?;
                    Some((x(lo.load), lo.critical?, hi.critical?))
                })
                .collect();
            MarginSeries {
                name: name.to_string(),
                points,
                band,
            }
        })
        .collect();
    let stop = spec
        .margin
        .as_ref()
        .and_then(|m| m.stop)
        .map_or(String::new(), |s| {
            format!(", up to {} where unsure", s.max_replications)
        });
    MarginChart {
        title: format!("{}: the storm margin", spec.name),
        subtitle: format!(
            "the trigger size where {}% of runs end metastable, at each load; {} replications per probe{stop}, common random numbers",
            main * 100.0,
            spec.replications
        ),
        load: if result.base_rate.is_some() {
            "offered load (req/s)".into()
        } else {
            result.load.clone()
        },
        trigger: result.trigger.clone(),
        level: main,
        range: (from, to),
        series,
    }
}
