//! `stormsim sweep`: run a sweep file and write its tables.

use crate::output::write_atomically;
use anyhow::{Context, Result};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use stormsim_sweep::{aggregate_csv, results_csv, Sweep};

/// Runs `sweep` on `jobs` threads (all cores if `None`) and writes
/// `results.csv` and `aggregate.csv` to `out`.
pub fn run_sweep(sweep: &Sweep, out: &Path, jobs: Option<usize>, quiet: bool) -> Result<()> {
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
    // Progress: a line at most every 5 s, and at the end.
    let last_report = AtomicU64::new(0);
    let progress = |done: usize| {
        if quiet {
            return;
        }
        let elapsed = started.elapsed().as_secs_f64();
        let tick = (elapsed / 5.0) as u64;
        if done == total || last_report.fetch_max(tick, Ordering::Relaxed) < tick {
            let eta = elapsed / done as f64 * (total - done) as f64;
            eprintln!("  {done}/{total} runs, {elapsed:.0} s elapsed, about {eta:.0} s to go");
        }
    };
    let results = pool.install(|| sweep.run(&progress));
    std::fs::create_dir_all(out)
        .with_context(|| format!("cannot create output folder {}", out.display()))?;
    write_atomically(
        &out.join("results.csv"),
        results_csv(sweep, &results)?.as_bytes(),
    )?;
    write_atomically(
        &out.join("aggregate.csv"),
        aggregate_csv(sweep, &results)?.as_bytes(),
    )?;
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
