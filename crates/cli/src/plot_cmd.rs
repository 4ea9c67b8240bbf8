//! `stormsim plot DIR`: draws the charts of a run or a sweep again from the
//! files in its folder, without simulating anything — after a change to the
//! charts, or to get them for a run made with `--quiet` elsewhere.
//!
//! A run folder is read through the same [`RunView`] that `stormsim run`
//! draws from, and a sweep's or search's folder by the same
//! [`draw_sweep_folder`] that `stormsim sweep` and `search` draw with, from
//! the same files, so the charts come out byte-identical to the ones the
//! run, the sweep or the search wrote.

use crate::output::{write_charts, LATENCY_COLUMNS};
use crate::sweep_charts::{draw_sweep_folder, DRAWN, SPEC_FILE};
use crate::sweep_cmd::said_written;
use crate::view::{
    BranchView, FocusSeries, RunView, ServiceView, VariantContext, VariantView, VerdictView,
};
use anyhow::{Context, Result};
use serde::Deserialize;
use std::path::Path;
use std::process::ExitCode;

/// Redraws the charts of the run or sweep in `dir` and says what it wrote. A
/// folder that does not exist, or holds neither, is the user's to fix: it is
/// said, with exit code 2.
pub fn plot(dir: &Path) -> Result<ExitCode> {
    let refuse = |why: String| {
        eprintln!("error: {why}");
        Ok(ExitCode::from(crate::EXIT_BAD_INPUT))
    };
    if !dir.exists() {
        return refuse(format!(
            "{} does not exist: give the output folder of a run or a sweep",
            dir.display()
        ));
    }
    if !dir.is_dir() {
        return refuse(format!(
            "{} is not a folder: give the output folder of a run or a sweep",
            dir.display()
        ));
    }
    let _lock = match crate::outdir::OutputLock::acquire(dir)? {
        Ok(lock) => lock,
        Err(message) => return refuse(message),
    };
    // What is redrawn is stormsim's: a folder without its manifest is the
    // user's, a file of the user's at a chart's name is refused, and each
    // file is claimed before it is written.
    let run = dir.join("summary.json").exists();
    let tables = [
        "aggregate.csv",
        "search.csv",
        crate::margin_cmd::MARGIN_TABLE,
    ];
    if !run && !tables.iter().any(|t| dir.join(t).exists()) {
        return refuse(format!(
            "{} holds neither a run (summary.json) nor a whole sweep (aggregate.csv), a search (search.csv) or a margin (margin.csv)",
            dir.display()
        ));
    }
    if crate::outdir::read_manifest(dir).is_none() {
        return refuse(format!(
            "{} has no {}, the list of the files stormsim wrote there: plot redraws only a folder stormsim wrote, never over files of yours; run the model or the sweep again with --out to a folder of its own",
            dir.display(),
            crate::outdir::MANIFEST_FILE
        ));
    }
    if run {
        let mut names = crate::output::CHARTS.to_vec();
        names.push(crate::outdir::RUN_PAGE);
        if let Err(message) = crate::outdir::refuse_foreign(dir, &names) {
            return refuse(message);
        }
        let view = match read_run(dir) {
            Ok(view) => view,
            Err(e) => match e.downcast_ref::<BadTable>() {
                Some(bad) => return refuse(bad.to_string()),
                None => return Err(e),
            },
        };
        // Claimed before drawing; those not drawn are unlisted as the lock
        // is released.
        crate::outdir::claim(dir, &names)?;
        let written = write_charts(&view, dir)?;
        println!("wrote {}/{{{}}}", dir.display(), written.join(", "));
    } else {
        if let Err(message) = crate::outdir::refuse_foreign(dir, &DRAWN) {
            return refuse(message);
        }
        if !dir.join(SPEC_FILE).exists() {
            return refuse(format!(
                "{} has no {SPEC_FILE}, which says what was swept (written by an older stormsim? run the sweep or the search again)",
                dir.display()
            ));
        }
        let drawn = draw_sweep_folder(dir)?;
        println!("{}", said_written(dir, &[], &drawn));
    }
    Ok(ExitCode::SUCCESS)
}

fn read_text(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

// ------------------------------------------------------------------ runs

/// The fields of `summary.json` the charts read (serde skips the others).
#[derive(Deserialize)]
struct SummaryFile {
    model: String,
    description: String,
    seed: u64,
    #[serde(default)]
    overrides: Vec<String>,
    variants: Vec<VariantFile>,
}

#[derive(Deserialize)]
struct VariantFile {
    variant: String,
    requests: u64,
    succeeded: u64,
    /// Absent from the summary.json of runs made before fallbacks: none.
    #[serde(default)]
    degraded: DegradedFile,
    success_rate: Option<f64>,
    latency_ms: Option<Percentiles>,
    /// Absent from the summary.json of runs made before it was added.
    #[serde(default)]
    ok_latency_ms: Option<Percentiles>,
    peak_offered_rps: f64,
    complete: bool,
    stopped_by: Option<String>,
    verdict: Option<VerdictView>,
    services: Vec<ServiceView>,
    /// Absent from the summary.json of runs made before edges were reported.
    #[serde(default)]
    edges: Vec<EdgeFile>,
    focus: String,
    sim_time_s: f64,
    #[serde(flatten)]
    context: VariantContext,
}

/// The answers fallbacks gave, of which the charts show the total.
#[derive(Default, Deserialize)]
struct DegradedFile {
    total: u64,
}

/// A call edge: a branch of a parallel step when it has a `latency_ms`.
#[derive(Deserialize)]
struct EdgeFile {
    caller: String,
    callee: String,
    #[serde(default)]
    latency_ms: Option<Percentiles>,
}

#[derive(Deserialize)]
struct Percentiles {
    p50: f64,
    p99: f64,
}

/// A run's view from `summary.json`, `timeseries.csv` and `latency.csv`.
fn read_run(dir: &Path) -> Result<RunView> {
    let path = dir.join("summary.json");
    let summary: SummaryFile = serde_json::from_str(&read_text(&path)?).with_context(|| {
        format!(
            "{} lacks what the charts need (written by an older stormsim? run the model again)",
            path.display()
        )
    })?;
    let mut variants: Vec<VariantView> = summary
        .variants
        .into_iter()
        .map(|v| VariantView {
            name: v.variant,
            requests: v.requests,
            succeeded: v.succeeded,
            degraded: v.degraded.total,
            success_rate: v.success_rate,
            p50_ms: v.latency_ms.as_ref().map(|l| l.p50),
            p99_ms: v.latency_ms.as_ref().map(|l| l.p99),
            ok_p50_ms: v.ok_latency_ms.as_ref().map(|l| l.p50),
            ok_p99_ms: v.ok_latency_ms.as_ref().map(|l| l.p99),
            peak_offered_rps: v.peak_offered_rps,
            complete: v.complete,
            stopped_by: v.stopped_by,
            verdict: v.verdict,
            services: v.services,
            branches: v
                .edges
                .into_iter()
                .filter_map(|e| {
                    let l = e.latency_ms?;
                    Some(BranchView {
                        caller: e.caller,
                        callee: e.callee,
                        p50_ms: l.p50,
                        p99_ms: l.p99,
                    })
                })
                .collect(),
            focus: v.focus,
            sim_time_s: v.sim_time_s,
            latency_cdf: Vec::new(),
            series: FocusSeries::default(),
            context: v.context,
        })
        .collect();
    read_timeseries(&dir.join("timeseries.csv"), &mut variants)?;
    read_latency(&dir.join("latency.csv"), &mut variants)?;
    Ok(RunView {
        model: summary.model,
        description: summary.description,
        seed: summary.seed,
        overrides: summary.overrides,
        variants,
    })
}

/// A table of the folder that no run writes (a cell that is not a number
/// in range, a column or a variant missing): the user's to fix, said with
/// exit code 2, naming the file and the line.
#[derive(Debug)]
struct BadTable(String);

impl std::fmt::Display for BadTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadTable {}

/// The longest latency a run measures, in ms: its clock counts 2^64 ns.
/// Past it a value is no run's, and one near `f64::MAX` would stretch the
/// chart's axis past what a number can hold.
const MAX_LATENCY_MS: f64 = u64::MAX as f64 / 1e6;

/// The largest count or time (in s) a run writes in its time series: 2^64.
const MAX_SERIES_VALUE: f64 = u64::MAX as f64;

/// A CSV table whose cells are looked up by column name.
struct Table {
    path: String,
    header: csv::StringRecord,
    reader: csv::Reader<std::fs::File>,
    /// The largest value a run writes in any of its cells.
    largest: f64,
}

impl Table {
    fn open(path: &Path, largest: f64) -> Result<Table> {
        let mut reader = csv::Reader::from_path(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let header = reader.headers()?.clone();
        Ok(Table {
            path: path.display().to_string(),
            header,
            reader,
            largest,
        })
    }

    fn column(&self, name: &str) -> Result<usize> {
        self.optional_column(name)
            .ok_or_else(|| BadTable(format!("{} has no column {name:?}", self.path)).into())
    }

    fn optional_column(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }

    /// Calls `row` with each record, and a parser of its cells that names the
    /// line and column of a cell that is not a number from 0 to the table's
    /// largest.
    fn for_each(
        &mut self,
        mut row: impl FnMut(&csv::StringRecord, &dyn Fn(usize) -> Result<f64>) -> Result<()>,
    ) -> Result<()> {
        let (path, header, largest) = (&self.path, &self.header, self.largest);
        for record in self.reader.records() {
            let record = record.with_context(|| format!("cannot read {path}"))?;
            let line = record.position().map_or(0, |p| p.line());
            let number = |c: usize| -> Result<f64> {
                let cell = record.get(c).unwrap_or_default();
                match cell.parse::<f64>() {
                    Ok(v) if (0.0..=largest).contains(&v) => Ok(v),
                    Ok(_) => Err(BadTable(format!(
                        "{path} line {line}: {} is {cell}: a run writes a number from 0 to {largest:.3e} there",
                        &header[c]
                    ))
                    .into()),
                    Err(_) => Err(BadTable(format!(
                        "{path} line {line}: {} is not a number",
                        &header[c]
                    ))
                    .into()),
                }
            };
            row(&record, &number)?;
        }
        Ok(())
    }
}

/// The variant a row belongs to.
fn variant_of<'a>(
    variants: &'a mut [VariantView],
    record: &csv::StringRecord,
    path: &str,
) -> Result<&'a mut VariantView> {
    let name = record.get(0).unwrap_or_default();
    variants
        .iter_mut()
        .find(|v| v.name == name)
        .ok_or_else(|| BadTable(format!("{path}: variant {name:?} is not in summary.json")).into())
}

fn read_timeseries(path: &Path, variants: &mut [VariantView]) -> Result<()> {
    let mut table = Table::open(path, MAX_SERIES_VALUE)?;
    let t = table.column("t_s")?;
    let succeeded = table.column("succeeded")?;
    // Written since S3's zombie accounting: a folder from an earlier run has
    // no zombies to draw.
    let zombies = table.optional_column("zombies");
    // Written since fallbacks: a folder from an earlier run had no degraded
    // answers.
    let degraded = table.optional_column("degraded");
    // Every variant reads its own focus service's columns; its busy cores
    // only if it has a cpu (the column, and in this variant a value).
    let mut focus_columns = Vec::new();
    for v in variants.iter() {
        let c = |what: &str| table.column(&format!("{}.{what}", v.focus));
        focus_columns.push((
            v.name.clone(),
            [c("offered_first")?, c("offered_retry")?, c("in_flight")?],
            table.optional_column(&format!("{}.cores_busy", v.focus)),
        ));
    }
    let shown = path.display().to_string();
    table.for_each(|record, number| {
        let v = variant_of(variants, record, &shown)?;
        let ([first, retry, in_flight], cores_busy) = focus_columns
            .iter()
            .find(|(name, _, _)| *name == v.name)
            .map(|(_, c, cores)| (*c, *cores))
            .expect("a column set per variant");
        let s = &mut v.series;
        s.t_s.push(number(t)?);
        // Counts are whole numbers well below 2^53: exact as f64.
        s.succeeded.push(number(succeeded)? as u64);
        s.offered_first.push(number(first)? as u64);
        s.offered_retry.push(number(retry)? as u64);
        s.in_flight.push(number(in_flight)? as u64);
        if let Some(zombies) = zombies {
            s.zombies.push(number(zombies)? as u64);
        }
        if let Some(degraded) = degraded {
            s.degraded.push(number(degraded)? as u64);
        }
        // Empty in a variant whose focus service has no cpu: a gap, which
        // the end turns into no line at all if the variant has no value.
        if let Some(cores) = cores_busy {
            let empty = record.get(cores).is_none_or(str::is_empty);
            s.cores_busy
                .push(if empty { f64::NAN } else { number(cores)? });
        }
        Ok(())
    })?;
    for v in variants {
        if v.series.cores_busy.iter().all(|c| c.is_nan()) {
            v.series.cores_busy.clear();
        }
    }
    Ok(())
}

fn read_latency(path: &Path, variants: &mut [VariantView]) -> Result<()> {
    let mut table = Table::open(path, MAX_LATENCY_MS)?;
    let [_, ms, fraction] = LATENCY_COLUMNS.map(|c| table.column(c));
    let (ms, fraction) = (ms?, fraction?);
    let shown = path.display().to_string();
    table.for_each(|record, number| {
        variant_of(variants, record, &shown)?
            .latency_cdf
            .push((number(ms)?, number(fraction)?));
        Ok(())
    })
}
