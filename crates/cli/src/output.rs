//! Running a model's variants and writing what they measured: summary.json,
//! summary.csv and timeseries.csv with their tidy twins, latency.csv, the
//! charts and index.html, each written atomically.

use crate::attempts_file::AttemptRows;
use crate::charts;
use crate::outdir::{check_owner, Kind, Manifest, Staging};
use crate::report_html;
use crate::table;
use crate::view::{RunView, VariantContext};
use anyhow::{Context, Result};
use rayon::prelude::*;
use serde::Serialize;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;
use stormsim_engine::SimTime;
use stormsim_model::LoadedModel;
use stormsim_plot::{
    render_branches_svg, render_comparison_svg, render_lines_svg, render_load_lines_svg,
    render_timeline_svg, render_wasted_svg, LineUnit,
};
use stormsim_sim::analysis::Outcome;
use stormsim_sim::fork::{run_variants, Progress};
use stormsim_sim::layout::Layout;
use stormsim_sim::{RunReport, Simulator, VariantReport};

/// The charts a run may have, in no particular order.
pub const CHARTS: [&str; 7] = [
    "comparison.svg",
    "load.svg",
    "timeline.svg",
    "cores.svg",
    "zombies.svg",
    "wasted.svg",
    "branches.svg",
];

/// `summary.json`. Everything in it is a pure function of (model, seed,
/// overrides): no wall-clock figure, so that a run of the same model writes
/// the same bytes every time. The wall times go to the terminal only.
#[derive(Serialize)]
struct Summary<'a> {
    tool: &'static str,
    version: &'static str,
    model: &'a str,
    description: &'a str,
    seed: u64,
    /// The run's `--set PATH=VALUE` overrides, as given: absent without any,
    /// so that a run of the model as written has the same bytes as before.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    overrides: &'a [String],
    events: u64,
    variants: Vec<VariantSummary<'a>>,
}

#[derive(Serialize)]
struct VariantSummary<'a> {
    #[serde(flatten)]
    report: &'a VariantReport,
    /// What the charts need of the model, so the folder alone redraws them.
    #[serde(flatten)]
    context: &'a VariantContext,
}

/// How `run` prints its comparison after writing the outputs.
pub struct TableOptions {
    /// `--format`.
    pub format: table::Format,
    /// `--columns`, resolved.
    pub columns: table::Columns,
    /// Whether to print it at all (not with `--quiet`, unless `--format` or
    /// `--columns` asked for it).
    pub print: bool,
}

/// Runs every variant (in parallel; results are collected by index, so the
/// output does not depend on the thread count) and writes the outputs, all
/// at once (see [`Staging`]): the folder shows this run or the last, never
/// a mix. `overrides` are the `--set PATH=VALUE` the model was loaded with,
/// recorded in summary.json and shown on index.html. Returns how many
/// variants stopped at one of the model's limits. Call with `out` locked.
pub fn run_and_write(
    model: &LoadedModel,
    overrides: &[String],
    out: &Path,
    quiet: bool,
    record_attempts: bool,
    comparison: &TableOptions,
) -> Result<RunOutcome> {
    let total = model.variants.len();
    if !quiet {
        eprintln!(
            "running {} variant{} of {:?} (seed {}) ...",
            total,
            if total == 1 { "" } else { "s" },
            model.name,
            model.seed
        );
    }
    // Before the runs: attempts.csv's rows are kept there as they come.
    let staging = Staging::begin(out)?;
    let final_out = out;
    let out = staging.path();
    let started = Instant::now();
    let done = AtomicUsize::new(0);
    let finished = AtomicBool::new(false);
    // Rows of attempts.csv go to temporary files as the variants run.
    let results: Vec<(VariantReport, Option<AttemptRows>)> = std::thread::scope(|scope| {
        if !quiet {
            scope.spawn(|| {
                say_every_10_s(&finished, |elapsed| {
                    let done = done.load(Ordering::Relaxed);
                    format!("  ... {elapsed:.0} s: {done}/{total} variants done")
                })
            });
        }
        // Stops the progress thread however the runs end: a panic in a
        // variant (a simulator bug) must reach the user, not leave the scope
        // waiting for a thread that waits for a flag nobody sets.
        let _stop_progress = SetOnDrop(&finished);
        let results = if record_attempts {
            // Each run streams its attempts to a file of its own: from time
            // zero, each on its own.
            model
                .variants
                .par_iter()
                .map(|v| {
                    let t0 = Instant::now();
                    let services = v.model.services.iter().map(|s| s.name.as_str());
                    let mut rows = AttemptRows::new(out, &v.name, services.collect())?;
                    let report = Simulator::new(&v.model, &v.changes)
                        .stream_attempts(&mut rows)
                        .run(&v.name);
                    let report = stormsim_sim::twin::judge_against_twin(v, report);
                    done.fetch_add(1, Ordering::Relaxed);
                    if !quiet {
                        eprintln!(
                            "{}",
                            variant_line(&v.name, &report, report.events, t0, None)
                        );
                    }
                    Ok((report, Some(rows)))
                })
                .collect::<Result<_>>()
        } else {
            // Variants that share their past with an earlier one continue its
            // run from where they differ (the same results, less work).
            let starts: Vec<std::sync::Mutex<Option<Instant>>> =
                model.variants.iter().map(|_| Default::default()).collect();
            let on_progress = |p: Progress<'_>| match p {
                Progress::Started(v) => {
                    *starts[v].lock().expect("no lock is poisoned") = Some(Instant::now());
                }
                Progress::Done {
                    variant,
                    report,
                    branch,
                    events_here,
                } => {
                    done.fetch_add(1, Ordering::Relaxed);
                    if !quiet {
                        let t0 = starts[variant]
                            .lock()
                            .expect("no lock is poisoned")
                            .unwrap_or(started);
                        let from = branch.map(|b| (model.variants[b.trunk].name.as_str(), b.at));
                        let v = &model.variants[variant];
                        let line = variant_line(&v.name, report, events_here, t0, from);
                        eprintln!("{line}{}", engine_note(v, report));
                    }
                }
            };
            Ok(run_variants(&model.variants, &on_progress)
                .into_iter()
                .map(|r| (r, None))
                .collect())
        };
        results
    })?;
    let mut stopped = 0;
    for (r, _) in &results {
        if let Some(limit) = &r.stopped_by_limit {
            eprintln!("warning: variant {:?} {limit}", r.variant);
            stopped += 1;
        }
    }
    // One line for all variants when they share the reason (a short horizon
    // cuts every one of them the same way).
    let undetermined: Vec<(&str, &str)> = results
        .iter()
        .filter_map(|(r, _)| {
            let v = r.verdict.as_ref()?;
            (v.outcome == Outcome::Undetermined).then_some((r.variant.as_str(), v.reason.as_str()))
        })
        .collect();
    if let Some((_, why)) = undetermined.first() {
        if undetermined.iter().all(|(_, w)| w == why) && undetermined.len() == results.len() {
            eprintln!("note: no recovery verdict for any variant: {why}");
        } else {
            for (variant, why) in &undetermined {
                eprintln!("note: no recovery verdict for variant {variant:?}: {why}");
            }
        }
    }
    let mut reports = Vec::with_capacity(results.len());
    let mut attempt_rows = Vec::new();
    for (report, rows) in results {
        reports.push(report);
        attempt_rows.extend(rows);
    }
    let attempt_rows = crate::attempts_file::finish(attempt_rows)?;
    let run = RunReport {
        model: model.name.clone(),
        description: model.description.clone(),
        seed: model.seed,
        variants: reports,
    };

    let view = RunView::from_run(model, &run, overrides);
    let summary = Summary {
        tool: "stormsim",
        version: env!("CARGO_PKG_VERSION"),
        model: &run.model,
        description: &run.description,
        seed: run.seed,
        overrides,
        events: run.variants.iter().map(|v| v.events).sum(),
        variants: run
            .variants
            .iter()
            .zip(&view.variants)
            .map(|(report, v)| VariantSummary {
                report,
                context: &v.context,
            })
            .collect(),
    };
    let mut json = serde_json::to_string_pretty(&summary)?;
    json.push('\n');
    write_atomically(&out.join("summary.json"), json.as_bytes())?;
    for (file, table, layout) in TABLES {
        write_table(&out.join(file), |w| match table {
            Table::Summary => run.write_summary(layout, w).map(drop),
            Table::TimeSeries => run.write_timeseries(layout, w).map(drop),
        })?;
    }
    write_atomically(&out.join("latency.csv"), latency_csv(&view)?.as_bytes())?;
    if record_attempts {
        crate::attempts_file::assemble(&out.join("attempts.csv"), attempt_rows)?;
    }
    let mut written = vec!["summary.json"];
    written.extend(TABLES.map(|(file, _, _)| file));
    written.push("latency.csv");
    if record_attempts {
        written.push("attempts.csv");
    }
    written.extend(write_charts(&view, out)?);
    let mut manifest = Manifest::new(Kind::Run, &model.name);
    manifest.files.extend(written.iter().map(|f| f.to_string()));
    staging.publish(&manifest)?;

    if comparison.print {
        print!(
            "{}",
            table::render(&run, &comparison.columns, comparison.format)?
        );
    }
    if !quiet {
        // With a data format, stdout holds the data alone; the wall time
        // (different every run) is never part of the table.
        let wrote = format!(
            "wrote {}/{{{}}} in {:.2} s",
            final_out.display(),
            written.join(", "),
            started.elapsed().as_secs_f64()
        );
        if comparison.format == table::Format::Table {
            println!("\n{wrote}");
        } else {
            eprintln!("{wrote}");
        }
    }
    Ok(RunOutcome {
        stopped,
        verdicts: run
            .variants
            .iter()
            .map(|v| {
                let verdict = v.verdict.as_ref().map(|r| (r.outcome, r.reason.clone()));
                (v.variant.clone(), verdict)
            })
            .collect(),
    })
}

/// What a run's caller needs for its exit code.
pub struct RunOutcome {
    /// Variants stopped at one of the model's limits.
    pub stopped: usize,
    /// Each variant's name and recovery verdict (outcome and reason), in
    /// the model's order.
    pub verdicts: Vec<(String, Option<(Outcome, String)>)>,
}

/// The tables of a run that come in two layouts.
#[derive(Clone, Copy)]
enum Table {
    Summary,
    TimeSeries,
}

/// The run's tables in both layouts, in the order they are written and
/// listed: each wide file, then its tidy twin (docs/outputs.md). The tidy
/// time series is gzipped: it repeats its keys on every value, nine times
/// the wide file (32 MB for the Catalog incident, 3.1 MB gzipped), and pandas,
/// polars and R read a `.csv.gz` as they read a `.csv`.
const TABLES: [(&str, Table, Layout); 4] = [
    ("summary.csv", Table::Summary, Layout::Wide),
    ("summary.tidy.csv", Table::Summary, Layout::Tidy),
    ("timeseries.csv", Table::TimeSeries, Layout::Wide),
    (TIDY_TIMESERIES, Table::TimeSeries, Layout::Tidy),
];

/// The tidy time series' file: gzipped (see [`TABLES`]).
pub const TIDY_TIMESERIES: &str = "timeseries.tidy.csv.gz";

/// Writes one CSV table atomically, streamed through a buffer (a long time
/// series in its tidy layout is tens of megabytes, never held whole), and
/// through gzip for a `.gz` file name. The gzip header has no time and no
/// name, and the compressor is pinned by Cargo.lock: the same table gives
/// the same bytes on every machine.
fn write_table(
    path: &Path,
    table: impl FnOnce(&mut dyn Write) -> Result<(), csv::Error>,
) -> Result<()> {
    let gzipped = path.extension().is_some_and(|e| e == "gz");
    write_atomically_with(path, |file| {
        let mut buffered = std::io::BufWriter::new(file);
        if gzipped {
            let mut gz = flate2::GzBuilder::new()
                .mtime(0)
                .write(&mut buffered, flate2::Compression::default());
            table(&mut gz).map_err(std::io::Error::other)?;
            gz.finish()?;
        } else {
            table(&mut buffered).map_err(std::io::Error::other)?;
        }
        buffered.flush()
    })
}

/// `latency.csv`: each variant's empirical latency CDF, the curve the
/// comparison chart draws, one row per histogram bucket. Numbers in Rust's
/// shortest round-trip form, so reading them back gives the same curve.
pub const LATENCY_COLUMNS: [&str; 3] = ["variant", "latency_ms", "fraction"];

fn latency_csv(view: &RunView) -> Result<String> {
    let mut out = csv::Writer::from_writer(Vec::new());
    out.write_record(LATENCY_COLUMNS)?;
    for v in &view.variants {
        for (ms, fraction) in &v.latency_cdf {
            out.write_record([v.name.as_str(), &ms.to_string(), &fraction.to_string()])?;
        }
    }
    Ok(String::from_utf8(out.into_inner()?)?)
}

/// Draws a run's charts and its index.html into `out` and returns the names
/// of the files written. A chart the data does not allow is skipped with a
/// note, and removed if an earlier run left one: it must not pass for this
/// run's. `stormsim run` and `stormsim plot` both draw through here.
pub fn write_charts(view: &RunView, out: &Path) -> Result<Vec<&'static str>> {
    let mut written = Vec::new();
    let mut chart =
        |name: &'static str, svg: Result<String, stormsim_plot::PlotError>| -> Result<()> {
            match svg {
                Ok(svg) => {
                    write_atomically(&out.join(name), svg.as_bytes())?;
                    written.push(name);
                }
                Err(e) => eprintln!("note: no {name}: {e}"),
            }
            Ok(())
        };
    chart(
        "comparison.svg",
        render_comparison_svg(&charts::comparison(view)),
    )?;
    chart(
        "load.svg",
        render_load_lines_svg(
            &format!(
                "{}: offered load at {}",
                view.model,
                view.variants.first().map_or("", |v| v.focus.as_str())
            ),
            &format!(
                "attempts per second (first tries and retries), seed {}{}",
                view.seed,
                charts::partial_notes(view)
            ),
            &charts::load_lines(view),
        ),
    )?;
    if let Some(timeline) = charts::timeline(view) {
        chart("timeline.svg", render_timeline_svg(&timeline))?;
    }
    if let Some(cores) = charts::cores_lines(view) {
        let focus = view.variants.first().map_or("", |v| v.focus.as_str());
        chart(
            "cores.svg",
            render_lines_svg(
                &format!("{}: busy cores at {focus} over time", view.model),
                &format!(
                    "the work its cores did, mean busy cores in each bucket (its threads holding a request \
                     are the timeline's in flight); variants whose {focus} has a cpu; seed {}{}",
                    view.seed,
                    charts::partial_notes(view)
                ),
                &LineUnit::mean("busy cores"),
                &cores,
            ),
        )?;
    }
    if let Some(zombies) = charts::zombie_lines(view) {
        chart(
            "zombies.svg",
            render_lines_svg(
                &format!("{}: zombie requests over time", view.model),
                &format!(
                    "tries over for their sender (gave up, or got an error) while work below still runs, \
                     the most alive at once in each bucket; seed {}{}",
                    view.seed,
                    charts::partial_notes(view)
                ),
                &LineUnit::count("zombie requests"),
                &zombies,
            ),
        )?;
    }
    if let Some(wasted) = charts::wasted(view) {
        chart("wasted.svg", render_wasted_svg(&wasted))?;
    }
    if let Some(branches) = charts::branches(view) {
        chart("branches.svg", render_branches_svg(&branches))?;
    }
    // The tables the folder has (a folder of an older version has no tidy
    // files): the page links only to those.
    let tables: Vec<&str> = report_html::TABLE_LINKS
        .iter()
        .copied()
        .filter(|file| out.join(file).is_file())
        .collect();
    write_atomically(
        &out.join("index.html"),
        report_html::index_html(view, &written, &tables).as_bytes(),
    )?;
    // Only charts stormsim wrote: a file of the user's at a chart's name stays.
    for stale in CHARTS.iter().filter(|c| !written.contains(c)) {
        crate::outdir::remove_owned(out, stale)?;
    }
    written.push("index.html");
    Ok(written)
}

/// Sets its flag when dropped, also while unwinding.
pub struct SetOnDrop<'a>(pub &'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// A variant's line as its run ends: the events it delivered itself, in
/// how long, and, for one that continued another's run, from where.
fn variant_line(
    name: &str,
    report: &VariantReport,
    events_here: u64,
    t0: Instant,
    from: Option<(&str, SimTime)>,
) -> String {
    let wall = t0.elapsed().as_secs_f64();
    let line = format!(
        "  {:<24} {:>11} events in {:>7.3} s ({:.1} M events/s)",
        name,
        events_here,
        wall,
        events_here as f64 / wall.max(1e-9) / 1e6
    );
    match from {
        Some((trunk, at)) => format!(
            "{line}, continuing {trunk:?} from {} s ({} events in all)",
            at.as_secs(),
            report.events
        ),
        None => line,
    }
}

/// Which engine ran `variant`: the fast path, or the general engine and the
/// first precondition of the fast path it failed.
fn engine_note(variant: &stormsim_model::Variant, report: &VariantReport) -> String {
    let engine = stormsim_sim::fast::Engine::of(&variant.model, &variant.changes, report);
    format!(" [{}]", engine.describe(false))
}

/// Until `finished`, prints `line(seconds elapsed)` on stderr every 10 s of
/// long work (checking a sweep's points, running variants), so that it is
/// not silent; the first line after 10 s, none for work done sooner. Sleeps
/// in short steps so it ends promptly.
pub fn say_every_10_s(finished: &AtomicBool, line: impl Fn(f64) -> String) {
    let started = Instant::now();
    let mut next_report = 10.0;
    while !finished.load(Ordering::Relaxed) {
        std::thread::sleep(std::time::Duration::from_millis(100));
        let elapsed = started.elapsed().as_secs_f64();
        if elapsed >= next_report && !finished.load(Ordering::Relaxed) {
            eprintln!("{}", line(elapsed));
            next_report += 10.0;
        }
    }
}

/// Whether `run` may write `model`'s outputs into `dir` without `--force`: it
/// does not exist, is empty, or holds this model's earlier outputs (a re-run
/// replaces them; for the same seed, with the same bytes). Anything else — an
/// other model's results, a sweep's, files stormsim did not write — needs `--force`.
pub fn check_run_folder(dir: &Path, model: &str) -> std::result::Result<(), String> {
    check_owner(dir, Kind::Run, model)
}

/// Whether `sweep` may start afresh in `dir` without `--force`: nothing of an
/// interrupted run is there (that needs `--resume`, or `--force` to discard
/// it), and the folder is empty or holds this sweep's earlier results (see
/// `check_run_folder`).
pub fn check_sweep_folder(dir: &Path, sweep: &str) -> std::result::Result<(), String> {
    if dir.join(stormsim_sweep::resume::PARTIAL_FILE).exists() {
        return Err(format!(
            "{} holds an interrupted run of a sweep: continue it with --resume, or pass --force to start over",
            dir.display()
        ));
    }
    check_owner(dir, Kind::Sweep, sweep)
}

/// Writes to a new file in the same folder, then renames it over `path`:
/// an interrupted run never leaves a half-written file that looks complete.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomically_with(path, |file| file.write_all(bytes))
}

/// [`write_atomically`] for an output written piece by piece: `write` fills
/// the new file that then takes the place of `path` (a link planted there is
/// replaced, never written through).
pub fn write_atomically_with(
    path: &Path,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<()> {
    stormsim_sweep::files::write_new_with(path, write)
        .map(drop)
        .with_context(|| format!("cannot write {}", path.display()))
}
