//! `stormsim sweep`: run a sweep file and write its tables.

use crate::output::write_atomically;
use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use stormsim_sweep::resume::run_resumable;
use stormsim_sweep::search::{search_csv, Probe};
use stormsim_sweep::{aggregate_csv, Sweep};

/// Runs `sweep` on `jobs` threads (all cores if `None`) and writes
/// `results.csv` and `aggregate.csv` to `out`; with `resume`, continues an
/// interrupted sweep; with `max_runs`, stops after that many more runs.
pub fn run_sweep(
    sweep: &Sweep,
    out: &Path,
    jobs: Option<usize>,
    resume: bool,
    max_runs: Option<usize>,
    quiet: bool,
) -> Result<()> {
    let total = sweep.runs();
    if !quiet {
        eprintln!(
            "sweep {:?}: {} points × {} replications = {} runs of {}",
            sweep.spec.name,
            sweep.points.len(),
            sweep.spec.replications,
            total,
            sweep.model_path.display()
        );
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
    let done = pool
        .install(|| run_resumable(sweep, out, resume, max_runs, &progress))
        .with_context(|| format!("cannot write the sweep's results in {}", out.display()))?;
    if let Some(bar) = bar {
        bar.finish();
    }
    let aggregate = out.join("aggregate.csv");
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
        return Ok(());
    }
    write_atomically(&aggregate, aggregate_csv(sweep, &done.results)?.as_bytes())?;
    if !quiet {
        println!(
            "{} runs in {:.1} s; wrote {}/{{results.csv, aggregate.csv}}",
            total,
            started.elapsed().as_secs_f64(),
            out.display()
        );
    }
    Ok(())
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
    let on_probe = |p: &Probe| {
        if !quiet {
            let ci = p.ci.map_or(String::new(), |(lo, hi)| {
                format!(" (95% CI {lo:.3} to {hi:.3})")
            });
            eprintln!(
                "  {} = {}: {} = {:.3}{ci}",
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
