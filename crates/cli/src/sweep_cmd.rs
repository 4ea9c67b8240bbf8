//! `stormsim sweep`: run a sweep file and write its tables.

use crate::outdir::{self, Kind, Manifest, OutputLock, SWEEP_FILES};
use crate::output::{write_atomically, write_atomically_with};
use crate::sweep_charts::{draw_sweep_folder, Drawn, DRAWN, SPEC_FILE};
use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use stormsim_plot::style::format_counted;
use stormsim_sim::analysis::Outcome;
use stormsim_sweep::inputs::{Inputs, INPUTS_FILE};
use stormsim_sweep::resume::{
    check_inputs, merge, partial_path, run_resumable, shard_slice, ResultsError, RESULTS_FILE,
};
use stormsim_sweep::search::{describe_left_out, search_csv, Probe};
use stormsim_sweep::stopping::Stopped;
use stormsim_sweep::{write_aggregate_csv, write_results_csv, RunResult, Sweep};

/// Locks `out` for a sweep, merge or search of the sweep `name`, removes what
/// an interrupted write left there, and checks that the folder may be
/// written: without `force`, it must be empty or this sweep's (see
/// `check_sweep_folder`; with `resume`, an interrupted run is expected), and
/// never may a file stormsim did not write stand where it writes. On success
/// the folder's manifest claims the sweep's tables, before any is written
/// (its charts and page are claimed as they are drawn; the lock's release
/// unlists what was not written).
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
    // The tables; each chart and the page are claimed as they are drawn
    // (a chart the sweep does not allow is never listed).
    let tables = SWEEP_FILES.iter().filter(|f| !DRAWN.contains(f));
    manifest.files.extend(tables.map(|f| f.to_string()));
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
    /// The recovery outcomes a run fails on (`--fail-on`).
    pub fail_on: Vec<Outcome>,
}

/// What a sweep's caller needs for its exit code.
pub struct SweepRan {
    /// Runs stopped at one of the model's limits.
    pub partial: usize,
    /// A line per run judged an outcome of `--fail-on`.
    pub failing: Vec<String>,
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
) -> Result<std::result::Result<SweepRan, String>> {
    let SweepOptions {
        jobs,
        resume,
        max_runs,
        shard,
        quiet,
        ref fail_on,
    } = *options;
    if let (Some(stop), true) = (
        &sweep.spec.stop,
        resume || shard.is_some() || max_runs.is_some(),
    ) {
        return Ok(Err(format!(
            "a sweep whose replications stop when sure (`stop`, up to {}) runs whole: --resume, --shard and --max-runs need a fixed number of runs",
            stop.max_replications
        )));
    }
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
        let runs = match &sweep.spec.stop {
            Some(stop) => format!(
                "at first, up to {} a point where unsure",
                stop.max_replications
            ),
            None => format!("= {}", format_counted(sweep.runs() as u64, "run")),
        };
        eprintln!(
            "sweep {:?}: {} × {} {runs} of {}",
            sweep.spec.name,
            format_counted(sweep.points.len() as u64, "point"),
            format_counted(u64::from(sweep.spec.replications), "replication"),
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
                        "  {done}/{total} runs, {elapsed:.0} s elapsed{}, {rate:.1} M events/s",
                        time_left(elapsed, done, total)
                    );
                }
            }
        }
    };
    // The spec first: a folder, even of a sweep still running, says what it holds.
    write_spec(sweep, out)?;
    if sweep.spec.stop.is_some() {
        return run_until_sure(sweep, out, options, &pool, started);
    }
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
    let partial = SweepRan {
        partial: done.results.iter().filter(|r| r.stopped_by_limit).count(),
        failing: failing_runs(sweep, &done.results, fail_on),
    };
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
        outdir::remove_owned(out, "aggregate.csv")?;
        if !quiet {
            println!(
                "{}/{} runs done; continue with --resume",
                done.results.len(),
                total
            );
        }
        return Ok(Ok(partial));
    }
    let drawn = write_tables_and_charts(sweep, out, &done.results, false)?;
    if !quiet {
        println!(
            "{} runs in {:.1} s; {}",
            total,
            started.elapsed().as_secs_f64(),
            said_written(out, &["results.csv", "aggregate.csv", SPEC_FILE], &drawn)
        );
    }
    Ok(Ok(partial))
}

/// A sweep with a stopping rule: its rounds in memory, then its tables
/// and charts, each written whole.
fn run_until_sure(
    sweep: &Sweep,
    out: &Path,
    options: &SweepOptions,
    pool: &rayon::ThreadPool,
    started: Instant,
) -> Result<std::result::Result<SweepRan, String>> {
    let quiet = options.quiet;
    let last_line = AtomicU64::new(0);
    let progress = |done: usize| {
        let elapsed = started.elapsed().as_secs_f64();
        let tick = (elapsed / 10.0) as u64;
        if !quiet && last_line.fetch_max(tick, Ordering::Relaxed) < tick {
            eprintln!("  {done} runs, {elapsed:.0} s elapsed (more where a point is unsure)");
        }
    };
    let results = pool.install(|| sweep.run(&progress));
    let ran = SweepRan {
        partial: results.iter().filter(|r| r.stopped_by_limit).count(),
        failing: failing_runs(sweep, &results, &options.fail_on),
    };
    // A run of rounds has no partial results to resume from: its
    // results.csv is written whole, with the aggregate.
    let drawn = write_tables_and_charts(sweep, out, &results, true)?;
    if !quiet {
        println!(
            "{} runs in {:.1} s (from {} to {} per point); {}",
            results.len(),
            started.elapsed().as_secs_f64(),
            sweep.spec.replications,
            sweep.spec.stop.as_ref().map_or(0, |s| s.max_replications),
            said_written(out, &["results.csv", "aggregate.csv", SPEC_FILE], &drawn)
        );
    }
    Ok(Ok(ran))
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

/// A line per run of `results` judged one of the outcomes `fail_on` names:
/// `point 3 (budget_ratio=0.1, rollback_at_s=420) replication 0 (seed 7),
/// variant base: metastable: REASON`.
pub fn failing_runs(sweep: &Sweep, results: &[RunResult], fail_on: &[Outcome]) -> Vec<String> {
    let Some(first) = results.first() else {
        return Vec::new();
    };
    let column = |name: &str| first.header.iter().position(|h| h == name);
    let (outcome, reason, variant) = (
        column("outcome"),
        column("verdict_reason"),
        column("variant"),
    );
    if fail_on.is_empty() {
        return Vec::new();
    }
    fn cell(r: &RunResult, c: Option<usize>) -> &str {
        c.and_then(|c| r.row.get(c)).unwrap_or("")
    }
    results
        .iter()
        // A run with no verdict fails too: a gate that cannot judge does
        // not pass.
        .filter(|r| Outcome::parse(cell(r, outcome)).is_none_or(|o| fail_on.contains(&o)))
        .map(|r| {
            // (A point's index is its place in the sweep.)
            let axes: Vec<String> = sweep
                .points
                .get(r.point)
                .map(|p| {
                    p.values
                        .iter()
                        .map(|(name, _, value)| format!("{name}={value}"))
                        .collect()
                })
                .unwrap_or_default();
            format!(
                "point {} ({}) replication {} (seed {}), variant {}: {}",
                r.point,
                axes.join(", "),
                r.replication,
                r.seed,
                cell(r, variant),
                verdict_text(Outcome::parse(cell(r, outcome)), cell(r, reason))
            )
        })
        .collect()
}

/// ", about N s left" at `done` of `total` runs after `elapsed` seconds, at
/// the pace so far (nothing before the first run or after the last).
fn time_left(elapsed: f64, done: usize, total: usize) -> String {
    if done == 0 || done >= total {
        return String::new();
    }
    let left = elapsed / done as f64 * (total - done) as f64;
    format!(", about {left:.0} s left")
}

/// What a FAIL line says of a verdict: `outcome: reason` (a reason that
/// starts with its outcome's name already is not given it twice), or why
/// there is none. One wording for `run` and `sweep`.
pub fn verdict_text(outcome: Option<Outcome>, reason: &str) -> String {
    let Some(outcome) = outcome else {
        return "no verdict: the model asks for no recovery analysis (a `metastability` block and a timeline with a trigger)".into();
    };
    let name = outcome.as_str();
    match reason.strip_prefix(name).and_then(|r| r.strip_prefix(": ")) {
        Some(rest) => format!("{name}: {rest}"),
        None => format!("{name}: {reason}"),
    }
}

/// "wrote DIR/{results.csv, ..., index.html}; no sweep.svg: WHY": the
/// tables `tables` and what was `drawn`, and why a chart was not.
pub fn said_written(out: &Path, tables: &[&str], drawn: &Drawn) -> String {
    let mut files = tables.to_vec();
    files.extend(drawn.files());
    let mut said = format!("wrote {}/{{{}}}", out.display(), files.join(", "));
    for missing in drawn.missing() {
        said.push_str("; ");
        said.push_str(&missing);
    }
    said
}

/// Writes `aggregate.csv` (and `results.csv` too with `with_results`, as a
/// merge does) from a whole sweep's results, then the folder's charts and
/// page.
fn write_tables_and_charts(
    sweep: &Sweep,
    out: &Path,
    results: &[stormsim_sweep::RunResult],
    with_results: bool,
) -> Result<Drawn> {
    std::fs::create_dir_all(out)?;
    // Each written as it is made: a million points' tables are gigabytes.
    if with_results {
        write_atomically_with(&out.join("results.csv"), |file| {
            Ok(write_results_csv(
                sweep,
                results,
                std::io::BufWriter::new(file),
            )?)
        })?;
    }
    write_atomically_with(&out.join("aggregate.csv"), |file| {
        Ok(write_aggregate_csv(sweep, results, file)?)
    })?;
    draw_sweep_folder(out)
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
    let drawn = write_tables_and_charts(sweep, out, &results, true)?;
    println!(
        "merged {} runs from {} shard(s); {}",
        results.len(),
        shards.len(),
        said_written(out, &["results.csv", "aggregate.csv", SPEC_FILE], &drawn)
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
        let cap = search.stop.map_or(String::new(), |s| {
            format!(", up to {} while unsure", s.max_replications)
        });
        eprintln!(
            "search: where {} crosses {} as {} goes from {} to {} ({} per probe{cap})",
            search.metric,
            search.threshold,
            search.path,
            search.from,
            search.to,
            format_counted(u64::from(sweep.spec.replications), "replication")
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
                    "; over {}, left out: {}",
                    format_counted(p.used as u64, "replication"),
                    describe_left_out(&p.left_out)
                )
            };
            let stopped = match p.stopped {
                Stopped::Fixed => String::new(),
                Stopped::Sure => format!(" after {} replications, sure of the side", p.used),
                Stopped::Precise => format!(" after {} replications, precise enough", p.used),
                Stopped::Cap => format!(" after {} replications (the cap), unsure", p.used),
            };
            eprintln!(
                "  {} = {}: {} = {:.3}{ci}{left_out}{stopped}",
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
    write_spec(sweep, out)?;
    let drawn = draw_sweep_folder(out)?;
    println!(
        "{} crosses {} between {} = {} and {}{}; {}",
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
        said_written(out, &["search.csv", SPEC_FILE], &drawn)
    );
    Ok(std::process::ExitCode::SUCCESS)
}

/// Writes [`SPEC_FILE`] into `out`.
fn write_spec(sweep: &Sweep, out: &Path) -> Result<()> {
    let mut json = serde_json::to_string_pretty(&sweep.spec)?;
    json.push('\n');
    write_atomically(&out.join(SPEC_FILE), json.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_left_is_the_pace_so_far_over_the_runs_left() {
        assert_eq!(time_left(30.0, 10, 40), ", about 90 s left");
        assert_eq!(time_left(30.0, 0, 40), "");
        assert_eq!(time_left(30.0, 40, 40), "");
    }

    /// A sweep's FAIL lines read "relapsed: relapsed: recovered ..." when
    /// the reason began with its outcome's name; `run`'s did not.
    #[test]
    fn regression_a_fail_line_names_its_outcome_once() {
        assert_eq!(
            verdict_text(
                Some(Outcome::Relapsed),
                "relapsed: recovered 4 s after the trigger's end"
            ),
            "relapsed: recovered 4 s after the trigger's end"
        );
        assert_eq!(
            verdict_text(Some(Outcome::Metastable), "not recovered within 120 s"),
            "metastable: not recovered within 120 s"
        );
        assert!(verdict_text(None, "").starts_with("no verdict: "));
    }
}
