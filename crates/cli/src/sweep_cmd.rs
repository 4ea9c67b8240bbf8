//! `stormsim sweep`: run a sweep file and write its tables.

use crate::outdir::{self, Kind, Manifest, OutputLock, SWEEP_FILES};
use crate::output::write_atomically;
use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use stormsim_plot::style::format_count;
use stormsim_plot::{
    render_heatmap_svg, render_sweep_lines_svg, HeatmapChart, SweepLineChart, SweepPoint,
    SweepSeries,
};
use stormsim_sweep::inputs::{Inputs, INPUTS_FILE};
use stormsim_sweep::resume::{
    check_inputs, merge, partial_path, run_resumable, shard_slice, ResultsError, RESULTS_FILE,
};
use stormsim_sweep::search::{describe_left_out, search_csv, Probe};
use stormsim_sweep::{aggregate_csv, results_csv, Sweep};

/// Locks `out` for a sweep, merge or search of the sweep `name`, removes what
/// an interrupted write left there, and checks that the folder may be
/// written: without `force`, it must be empty or this sweep's (see
/// `check_sweep_folder`; with `resume`, an interrupted run is expected), and
/// never may a file stormsim did not write stand where it writes. On success
/// the folder's manifest claims the sweep's files, before any is written.
pub fn claim_folder(
    out: &Path,
    name: &str,
    force: bool,
    resume: bool,
) -> Result<std::result::Result<OutputLock, String>> {
    let lock = match OutputLock::acquire(out)? {
        Ok(lock) => lock,
        Err(message) => return Ok(Err(message)),
    };
    outdir::clean_leftovers(out)?;
    let checked = if force || resume {
        Ok(())
    } else {
        crate::output::check_sweep_folder(out, name)
    };
    if let Err(message) = checked.and_then(|()| outdir::refuse_foreign(out, &SWEEP_FILES)) {
        return Ok(Err(message));
    }
    let mut manifest = match outdir::read_manifest(out) {
        Some(m) if m.kind == Kind::Sweep && m.name == name => m,
        // Another's (with --force): its files are replaced as this sweep's.
        Some(m) => Manifest {
            files: m.files,
            ..Manifest::new(Kind::Sweep, name)
        },
        None => Manifest::new(Kind::Sweep, name),
    };
    manifest
        .files
        .extend(SWEEP_FILES.iter().map(|f| f.to_string()));
    manifest.write(out)?;
    Ok(Ok(lock))
}

/// How `stormsim sweep` runs.
pub struct SweepOptions {
    /// Worker threads (all cores if `None`).
    pub jobs: Option<usize>,
    /// Continue an interrupted sweep.
    pub resume: bool,
    /// Stop after this many more runs.
    pub max_runs: Option<usize>,
    /// Run only this slice `(I, N)` of the runs.
    pub shard: Option<(usize, usize)>,
    /// Print nothing but errors.
    pub quiet: bool,
}

/// Runs `sweep` and writes `results.csv` and `aggregate.csv` to `out` (with
/// `out` claimed: [`claim_folder`]); with `resume`, continues an interrupted
/// sweep, if its recorded inputs are this sweep's; with `max_runs`, stops
/// after that many more runs. Returns how many runs (of this invocation's
/// and the resumed ones) stopped at a limit, or why the folder's results
/// cannot be continued.
pub fn run_sweep(
    sweep: &Sweep,
    out: &Path,
    options: &SweepOptions,
) -> Result<std::result::Result<usize, String>> {
    let SweepOptions {
        jobs,
        resume,
        max_runs,
        shard,
        quiet,
    } = *options;
    let slice = match shard {
        Some((index, count)) => shard_slice(sweep.runs(), index, count),
        None => 0..sweep.runs(),
    };
    let has_results = partial_path(out).exists() || out.join(RESULTS_FILE).exists();
    if resume && has_results {
        let advice = "pass --force instead of --resume to start afresh (it discards them)";
        match check_inputs(sweep, out, slice.clone(), advice) {
            Ok(()) => {}
            Err(e @ ResultsError::Malformed { .. }) => return Ok(Err(format!("{e}; {advice}"))),
            Err(e) => return bad_input(e),
        }
    }
    write_atomically(
        &out.join(INPUTS_FILE),
        Inputs::of(sweep, slice.clone()).to_json().as_bytes(),
    )?;
    // Progress counts this invocation's slice: a shard's runs, not the sweep's.
    let (first, total) = (slice.start, slice.len());
    if !quiet {
        eprintln!(
            "sweep {:?}: {} points × {} replications = {} runs of {}",
            sweep.spec.name,
            sweep.points.len(),
            sweep.spec.replications,
            sweep.runs(),
            sweep.model_path.display()
        );
        if let Some((index, count)) = shard {
            eprintln!("shard {index}/{count}: {}", shard_runs(&slice));
        }
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.unwrap_or(0))
        .build()
        .context("cannot start the worker threads")?;
    let started = Instant::now();
    // Progress: a bar with ETA and events per second on a terminal; plain
    // lines every 10 s (and at the end) when stderr is a file or a pipe.
    let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
        let bar = ProgressBar::new(total as u64);
        bar.set_style(
            ProgressStyle::with_template(
                "  {bar:30} {pos}/{len} runs · {elapsed_precise} · ETA {eta} · {msg}",
            )
            .expect("a valid template"),
        );
        bar
    });
    let events = AtomicU64::new(0);
    let last_line = AtomicU64::new(0);
    let progress = |done: usize, run_events: u64| {
        if quiet {
            return;
        }
        let done = done - first;
        let all = events.fetch_add(run_events, Ordering::Relaxed) + run_events;
        let elapsed = started.elapsed().as_secs_f64();
        let rate = all as f64 / elapsed.max(1e-9) / 1e6;
        match &bar {
            Some(bar) => {
                bar.set_position(done as u64);
                bar.set_message(format!("{rate:.1} M events/s"));
            }
            None => {
                let tick = (elapsed / 10.0) as u64;
                if done == total || last_line.fetch_max(tick, Ordering::Relaxed) < tick {
                    eprintln!(
                        "  {done}/{total} runs, {elapsed:.0} s elapsed, {rate:.1} M events/s"
                    );
                }
            }
        }
    };
    // The spec first: a folder, even of a sweep still running, says what it holds.
    write_spec(sweep, out)?;
    let done = match pool
        .install(|| run_resumable(sweep, out, slice.clone(), resume, max_runs, &progress))
    {
        Ok(done) => done,
        Err(e @ ResultsError::Malformed { .. }) if resume => {
            return Ok(Err(format!(
                "{e}: it cannot be continued; pass --force instead of --resume to start afresh (it discards it)"
            )))
        }
        Err(e) => return bad_input(e),
    };
    if let Some(bar) = bar {
        bar.finish();
    }
    let partial = done.results.iter().filter(|r| r.stopped_by_limit).count();
    let aggregate = out.join("aggregate.csv");
    if let (Some((index, count)), true) = (shard, done.complete) {
        if !quiet {
            println!(
                "shard {index}/{count} ({}) done in {}; combine the shards with `stormsim merge`",
                shard_runs(&slice),
                out.display()
            );
        }
        return Ok(Ok(partial));
    }
    if !done.complete {
        // An earlier, complete aggregate must not pass for this sweep's.
        if aggregate.exists() {
            std::fs::remove_file(&aggregate)?;
        }
        if !quiet {
            println!(
                "{}/{} runs done; continue with --resume",
                done.results.len(),
                total
            );
        }
        return Ok(Ok(partial));
    }
    write_tables_and_chart(sweep, out, &done.results, false)?;
    if !quiet {
        println!(
            "{} runs in {:.1} s; wrote {}/{{results.csv, aggregate.csv, sweep.json, sweep.svg}}",
            total,
            started.elapsed().as_secs_f64(),
            out.display()
        );
    }
    Ok(Ok(partial))
}

/// Which of the sweep's runs a shard holds, in words.
fn shard_runs(slice: &std::ops::Range<usize>) -> String {
    if slice.is_empty() {
        "no runs: more shards than runs".to_string()
    } else {
        format!("runs {} to {}", slice.start, slice.end - 1)
    }
}

/// A problem with the results on disk: the user's to fix (exit 2), said as
/// such; a failure to read or write them is an error.
fn bad_input<T>(e: ResultsError) -> Result<std::result::Result<T, String>> {
    if e.is_bad_input() {
        Ok(Err(e.to_string()))
    } else {
        Err(e.into())
    }
}

/// Writes `aggregate.csv` and `sweep.svg` (and `results.csv` too with
/// `with_results`, as a merge does) from a whole sweep's results.
fn write_tables_and_chart(
    sweep: &Sweep,
    out: &Path,
    results: &[stormsim_sweep::RunResult],
    with_results: bool,
) -> Result<()> {
    std::fs::create_dir_all(out)?;
    if with_results {
        write_atomically(
            &out.join("results.csv"),
            results_csv(sweep, results)?.as_bytes(),
        )?;
    }
    let table = aggregate_csv(sweep, results)?;
    write_atomically(&out.join("aggregate.csv"), table.as_bytes())?;
    write_sweep_chart(&SweepShape::of(sweep), &table, out)
}

/// Writes `sweep.svg` from the aggregate table, or removes an earlier one
/// when the sweep's shape has no chart. `stormsim plot` draws through here too.
pub fn write_sweep_chart(shape: &SweepShape, aggregate: &str, out: &Path) -> Result<()> {
    let chart_path = out.join("sweep.svg");
    match sweep_chart(shape, aggregate) {
        Some(Ok(svg)) => write_atomically(&chart_path, svg.as_bytes())?,
        Some(Err(e)) => eprintln!("note: no sweep.svg: {e}"),
        None => {
            if chart_path.exists() {
                std::fs::remove_file(&chart_path)?;
            }
        }
    }
    Ok(())
}

/// `stormsim merge`: the shards' results into the whole sweep's tables, the
/// same bytes as an unsharded run. The shards are read first: a merge that
/// cannot be made leaves `out` as it was (or absent).
pub fn merge_shards(
    sweep: &Sweep,
    out: &Path,
    shards: &[std::path::PathBuf],
) -> Result<std::process::ExitCode> {
    let results = match merge(sweep, shards) {
        Ok(results) => results,
        Err(e) if e.is_bad_input() => {
            eprintln!("error: cannot merge the shards: {e}");
            return Ok(std::process::ExitCode::from(crate::EXIT_BAD_INPUT));
        }
        Err(e) => return Err(e).context("cannot merge the shards"),
    };
    let _lock = match claim_folder(out, &sweep.spec.name, true, false)? {
        Ok(lock) => lock,
        Err(message) => {
            eprintln!("error: {message}");
            return Ok(std::process::ExitCode::from(crate::EXIT_BAD_INPUT));
        }
    };
    write_atomically(
        &out.join(INPUTS_FILE),
        Inputs::of(sweep, 0..sweep.runs()).to_json().as_bytes(),
    )?;
    write_spec(sweep, out)?;
    write_tables_and_chart(sweep, out, &results, true)?;
    println!(
        "merged {} runs from {} shard(s) into {}/{{results.csv, aggregate.csv, sweep.json, sweep.svg}}",
        results.len(),
        shards.len(),
        out.display()
    );
    Ok(std::process::ExitCode::SUCCESS)
}

/// Parses `--shard I/N`, or `auto/N` (the index from `SLURM_ARRAY_TASK_ID` or
/// `JOB_COMPLETION_INDEX`, as a Slurm job array or a Kubernetes indexed job
/// sets it).
pub fn parse_shard(text: &str) -> Result<(usize, usize), String> {
    let (index, count) = text
        .split_once('/')
        .ok_or_else(|| format!("--shard {text:?}: expected I/N"))?;
    let count: usize = count
        .parse()
        .ok()
        .filter(|c| *c > 0)
        .ok_or_else(|| format!("--shard {text:?}: N must be a positive whole number"))?;
    let index: usize = if index == "auto" {
        let var = ["SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"]
            .iter()
            .find_map(|v| std::env::var(v).ok())
            .ok_or("--shard auto/N needs SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX")?;
        var.trim()
            .parse()
            .map_err(|_| format!("shard index {var:?} is not a whole number"))?
    } else {
        index
            .parse()
            .map_err(|_| format!("--shard {text:?}: I must be a whole number"))?
    };
    if index >= count {
        return Err(format!("--shard {index}/{count}: I must be below N"));
    }
    Ok((index, count))
}

/// Runs the sweep file's tipping-point search and writes `search.csv`.
pub fn run_search(
    sweep: &Sweep,
    out: &Path,
    jobs: Option<usize>,
    quiet: bool,
) -> Result<std::process::ExitCode> {
    let Some(search) = sweep.spec.search.clone() else {
        eprintln!("{:?} has no `search` block", sweep.spec.name);
        return Ok(std::process::ExitCode::from(2));
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.unwrap_or(0))
        .build()
        .context("cannot start the worker threads")?;
    if !quiet {
        eprintln!(
            "search: where {} crosses {} as {} goes from {} to {} ({} replications per probe)",
            search.metric,
            search.threshold,
            search.path,
            search.from,
            search.to,
            sweep.spec.replications
        );
    }
    // A share of replications has Wilson's interval, any other metric Student's t.
    let interval = if search.metric == "metastable" {
        "Wilson interval"
    } else {
        "CI"
    };
    let on_probe = |p: &Probe| {
        if !quiet {
            let ci = p.ci.map_or(String::new(), |(lo, hi)| {
                format!(" (95% {interval} {lo:.3} to {hi:.3})")
            });
            let left_out = if p.left_out.is_empty() {
                String::new()
            } else {
                format!(
                    "; over {} replications, left out: {}",
                    p.used,
                    describe_left_out(&p.left_out)
                )
            };
            eprintln!(
                "  {} = {}: {} = {:.3}{ci}{left_out}",
                search.path, p.value, search.metric, p.mean
            );
        }
    };
    let result = match pool.install(|| sweep.search(&on_probe)) {
        Ok(r) => r,
        Err(problem) => {
            eprintln!("{problem}");
            return Ok(std::process::ExitCode::from(2));
        }
    };
    std::fs::create_dir_all(out)?;
    write_atomically(
        &out.join("search.csv"),
        search_csv(&result, &search.path)?.as_bytes(),
    )?;
    println!(
        "{} crosses {} between {} = {} and {}{}; wrote {}/search.csv",
        search.metric,
        search.threshold,
        search.path,
        result.bracket.0,
        result.bracket.1,
        if result.certain {
            " (both ends beyond their 95% intervals)"
        } else {
            " (uncertain: an end's 95% interval straddles the threshold; add replications)"
        },
        out.display()
    );
    Ok(std::process::ExitCode::SUCCESS)
}

/// What the sweep chart says about the sweep besides its table: its name
/// (in the title), its axes' columns and its size (in the subtitle).
#[derive(Clone, Debug, PartialEq)]
pub struct SweepShape {
    /// The sweep's name.
    pub name: String,
    /// The axes' columns in `aggregate.csv`, in axis order.
    pub axes: Vec<String>,
    /// How many points.
    pub points: usize,
    /// Runs per point.
    pub replications: u32,
}

impl SweepShape {
    /// The shape of a loaded sweep.
    pub fn of(sweep: &Sweep) -> SweepShape {
        SweepShape {
            name: sweep.spec.name.clone(),
            axes: sweep
                .points
                .first()
                .map(|p| p.values.iter().map(|(c, _, _)| c.clone()).collect())
                .unwrap_or_default(),
            points: sweep.points.len(),
            replications: sweep.spec.replications,
        }
    }
}

/// `sweep.json`: the sweep's spec, written beside its tables so that the
/// folder says what was swept and `stormsim plot` can title the chart.
pub const SPEC_FILE: &str = "sweep.json";

/// Writes [`SPEC_FILE`] into `out`.
fn write_spec(sweep: &Sweep, out: &Path) -> Result<()> {
    let mut json = serde_json::to_string_pretty(&sweep.spec)?;
    json.push('\n');
    write_atomically(&out.join(SPEC_FILE), json.as_bytes())
}

/// The sweep's chart, from its aggregate table: with one numeric axis, lines of
/// the share metastable and the success rate (with 95% intervals) against it;
/// with two, a heatmap (phase diagram) of the share metastable, or of the
/// success rate without a recovery analysis, with the 0.5 boundary drawn.
/// `None` for other shapes (a categorical axis, more than two axes).
pub fn sweep_chart(
    sweep: &SweepShape,
    aggregate: &str,
) -> Option<Result<String, stormsim_plot::PlotError>> {
    let mut reader = csv::Reader::from_reader(aggregate.as_bytes());
    // Only the columns the chart reads are kept: a table of a million points
    // has a hundred-odd columns, most of them not drawn.
    let drawn = [
        "metastable_share",
        "metastable_share.ci95_low",
        "metastable_share.ci95_high",
        "success_rate.mean",
        "success_rate.ci95_low",
        "success_rate.ci95_high",
    ];
    let kept: Vec<usize> = reader
        .headers()
        .ok()?
        .iter()
        .enumerate()
        .filter(|(_, h)| drawn.contains(h) || sweep.axes.iter().any(|a| a == h))
        .map(|(i, _)| i)
        .collect();
    let keep = |r: &csv::StringRecord| -> Vec<String> {
        kept.iter()
            .map(|&i| r.get(i).unwrap_or("").to_string())
            .collect()
    };
    let header: Vec<String> = keep(reader.headers().ok()?);
    let rows: Vec<Vec<String>> = reader
        .records()
        .filter_map(Result::ok)
        .map(|r| keep(&r))
        .collect();
    let col = |name: &str| header.iter().position(|h| h == name);
    let num = |row: &Vec<String>, c: Option<usize>| c.and_then(|c| row[c].parse::<f64>().ok());
    let axes = &sweep.axes;
    let numeric_axes: Vec<&String> = axes
        .iter()
        .filter(|a| rows.iter().all(|r| num(r, col(a)).is_some()))
        .collect();
    let share = col("metastable_share").filter(|&c| rows.iter().all(|r| !r[c].is_empty()));
    let subtitle = if share.is_some() {
        format!(
            "{} points × {} replications; 95% intervals: Wilson for the share, Student-t for the success rate",
            format_count(sweep.points as u64),
            format_count(u64::from(sweep.replications))
        )
    } else {
        format!(
            "{} points × {} replications; 95% Student-t intervals",
            format_count(sweep.points as u64),
            format_count(u64::from(sweep.replications))
        )
    };
    match (axes.len(), numeric_axes.len()) {
        (1, 1) => {
            let x = col(numeric_axes[0]);
            let mut series = Vec::new();
            if let Some(share) = share {
                series.push(SweepSeries {
                    name: "share of replications metastable".into(),
                    points: rows
                        .iter()
                        .map(|r| SweepPoint {
                            x: num(r, x).unwrap_or(f64::NAN),
                            mean: num(r, Some(share)).unwrap_or(f64::NAN),
                            ci_low: num(r, col("metastable_share.ci95_low")),
                            ci_high: num(r, col("metastable_share.ci95_high")),
                        })
                        .collect(),
                });
            }
            series.push(SweepSeries {
                name: "success rate".into(),
                points: rows
                    .iter()
                    .map(|r| SweepPoint {
                        x: num(r, x).unwrap_or(f64::NAN),
                        mean: num(r, col("success_rate.mean")).unwrap_or(f64::NAN),
                        ci_low: num(r, col("success_rate.ci95_low")),
                        ci_high: num(r, col("success_rate.ci95_high")),
                    })
                    .collect(),
            });
            Some(render_sweep_lines_svg(&SweepLineChart {
                title: format!("{}: the sweep", sweep.name),
                subtitle,
                x_label: numeric_axes[0].clone(),
                y_label: "share".into(),
                x_log: false,
                y_range: Some((0.0, 1.0)),
                series,
                threshold: share.map(|_| (0.5, "half metastable".to_string())),
            }))
        }
        (2, 2) => {
            let (xc, yc) = (col(numeric_axes[0]), col(numeric_axes[1]));
            let mut xs: Vec<f64> = rows.iter().filter_map(|r| num(r, xc)).collect();
            let mut ys: Vec<f64> = rows.iter().filter_map(|r| num(r, yc)).collect();
            for v in [&mut xs, &mut ys] {
                v.sort_by(f64::total_cmp);
                v.dedup();
            }
            let (value, label) = match share {
                Some(s) => (Some(s), "share of replications metastable"),
                None => (col("success_rate.mean"), "success rate (mean)"),
            };
            let mut cells = vec![vec![None; xs.len()]; ys.len()];
            for r in &rows {
                let (Some(x), Some(y)) = (num(r, xc), num(r, yc)) else {
                    continue;
                };
                let i = xs.iter().position(|v| *v == x)?;
                let j = ys.iter().position(|v| *v == y)?;
                cells[j][i] = num(r, value);
            }
            Some(render_heatmap_svg(&HeatmapChart {
                title: format!("{}: phase diagram", sweep.name),
                // A cell shows a mean, not its interval: aggregate.csv has them.
                subtitle: format!(
                    "{} points × {} replications; each cell the mean of its replications (95% intervals in aggregate.csv)",
                    format_count(sweep.points as u64),
            format_count(u64::from(sweep.replications))
                ),
                x_label: numeric_axes[0].clone(),
                y_label: numeric_axes[1].clone(),
                x_values: xs,
                y_values: ys,
                x_log: false,
                y_log: false,
                cells,
                value_label: label.into(),
                value_range: (0.0, 1.0),
                boundary: Some(0.5),
            }))
        }
        _ => None,
    }
}
