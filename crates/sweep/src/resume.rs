//! Sweeps that survive interruption: rows are appended to
//! `results.csv.partial` in run order as runs finish (a run that finishes early
//! waits in memory for those before it), so the file is always a valid prefix;
//! `--resume` reads it back, skips the runs it holds, and appends the rest. The
//! finished file is renamed to `results.csv`: the same bytes as an
//! uninterrupted sweep, and never a half-written file that looks complete.

use crate::{table, RunResult, Sweep};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The file a sweep in progress writes.
pub fn partial_path(out: &Path) -> PathBuf {
    out.join("results.csv.partial")
}

/// What a resumable run did.
pub struct Progress {
    /// Every result so far, in run order.
    pub results: Vec<RunResult>,
    /// Whether every run is done (and `results.csv` is in place).
    pub complete: bool,
}

struct Appender {
    file: File,
    /// The first run of this slice (its row carries the header).
    first: usize,
    next: usize,
    waiting: BTreeMap<usize, RunResult>,
    written: Vec<RunResult>,
}

impl Appender {
    /// Writes every waiting result that continues the file's prefix.
    fn flush_prefix(&mut self, sweep: &Sweep) -> std::io::Result<()> {
        while let Some(result) = self.waiting.remove(&self.next) {
            let line = table::results_line(sweep, &result, self.next == self.first)
                .map_err(std::io::Error::other)?;
            self.file.write_all(line.as_bytes())?;
            self.next += 1;
            self.written.push(result);
        }
        self.file.flush()
    }
}

/// The rows already in a partial file, as results, and the byte length of its
/// complete lines (a line cut by an interruption is dropped).
fn read_partial(
    sweep: &Sweep,
    path: &Path,
    first: usize,
) -> std::io::Result<(Vec<RunResult>, u64)> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), 0)),
        Err(e) => return Err(e),
    };
    let mut reader = BufReader::new(file);
    let mut results = Vec::new();
    let mut kept = 0u64;
    let mut header: Option<Vec<String>> = None;
    let axes = sweep.points[0].values.len();
    let mut line = String::new();
    loop {
        line.clear();
        let n = reader.read_line(&mut line)?;
        if n == 0 || !line.ends_with('\n') {
            break;
        }
        let cells: Vec<String> = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(line.as_bytes())
            .records()
            .next()
            .and_then(Result::ok)
            .map(|r| r.iter().map(str::to_string).collect())
            .unwrap_or_default();
        match &header {
            None => header = Some(cells),
            Some(h) => {
                if cells.len() != h.len() {
                    break;
                }
                let index = first + results.len();
                let reps = sweep.spec.replications as usize;
                let expect = [(index / reps).to_string(), (index % reps).to_string()];
                if cells[0] != expect[0] || cells[1] != expect[1] {
                    return Err(std::io::Error::other(format!(
                        "{} does not continue this sweep at run {index}: start it afresh without --resume",
                        path.display()
                    )));
                }
                results.push(RunResult {
                    point: index / reps,
                    replication: (index % reps) as u32,
                    seed: cells[2].parse().unwrap_or_default(),
                    header: h[3 + axes..].to_vec(),
                    row: cells[3 + axes..].to_vec(),
                });
            }
        }
        kept += n as u64;
    }
    Ok((results, kept))
}

/// Runs the sweep's runs `slice` (all of them, or a shard's) into `out`:
/// resuming `results.csv.partial` if `resume`, at most `max_runs` more runs if
/// given, appending rows in run order. When every run of the slice is done the
/// partial file becomes `results.csv`.
pub fn run_resumable(
    sweep: &Sweep,
    out: &Path,
    slice: std::ops::Range<usize>,
    resume: bool,
    max_runs: Option<usize>,
    progress: &(dyn Fn(usize, u64) + Sync),
) -> std::io::Result<Progress> {
    std::fs::create_dir_all(out)?;
    // A finished table from an earlier sweep must not pass for this one's
    // while it runs (or if it is interrupted).
    match std::fs::remove_file(out.join("results.csv")) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let partial = partial_path(out);
    let (done, kept) = if resume {
        read_partial(sweep, &partial, slice.start)?
    } else {
        (Vec::new(), 0)
    };
    let mut file = OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(!resume)
        .open(&partial)?;
    // Drop a line an interruption cut short, then append after the prefix.
    file.set_len(kept)?;
    file.seek(SeekFrom::End(0))?;
    let start = slice.start + done.len();
    let end = max_runs.map_or(slice.end, |m| (start + m).min(slice.end));
    let appender = Mutex::new(Appender {
        file,
        first: slice.start,
        next: start,
        waiting: BTreeMap::new(),
        written: done,
    });
    let counter = AtomicUsize::new(start);
    let failure: Mutex<Option<std::io::Error>> = Mutex::new(None);
    (start..end).into_par_iter().for_each(|i| {
        let result = sweep.run_one(i);
        let events = result.events();
        let mut a = appender
            .lock()
            .expect("no writer panics while holding the lock");
        a.waiting.insert(i, result);
        if let Err(e) = a.flush_prefix(sweep) {
            failure.lock().expect("unpoisoned").get_or_insert(e);
        }
        drop(a);
        progress(counter.fetch_add(1, Ordering::Relaxed) + 1, events);
    });
    if let Some(e) = failure.into_inner().expect("unpoisoned") {
        return Err(e);
    }
    let appender = appender.into_inner().expect("unpoisoned");
    let complete = appender.next == slice.end;
    appender.file.sync_all()?;
    if complete {
        std::fs::rename(&partial, out.join("results.csv"))?;
    }
    Ok(Progress {
        results: appender.written,
        complete,
    })
}

/// The runs of shard `index` of `count`: a contiguous slice, the shards
/// together covering every run exactly once.
pub fn shard_slice(runs: usize, index: usize, count: usize) -> std::ops::Range<usize> {
    (index * runs / count)..((index + 1) * runs / count)
}

/// Reads a finished `results.csv` (a whole sweep's or a shard's) back into
/// results, checking that its rows are consecutive runs of `sweep`.
pub fn read_results(sweep: &Sweep, path: &Path) -> std::io::Result<Vec<RunResult>> {
    let text = std::fs::read_to_string(path)?;
    let first_row = text
        .lines()
        .nth(1)
        .ok_or_else(|| std::io::Error::other(format!("{}: no rows", path.display())))?;
    let reps = sweep.spec.replications as usize;
    let mut cells = first_row.split(',');
    let point: usize = cells.next().and_then(|c| c.parse().ok()).unwrap_or(0);
    let replication: usize = cells.next().and_then(|c| c.parse().ok()).unwrap_or(0);
    let (results, _) = read_partial(sweep, path, point * reps + replication)?;
    Ok(results)
}

/// Merges shards' results into the whole sweep's, in run order; every run must
/// appear exactly once.
pub fn merge(sweep: &Sweep, shards: &[PathBuf]) -> std::io::Result<Vec<RunResult>> {
    let reps = sweep.spec.replications as usize;
    let mut all: Vec<RunResult> = Vec::new();
    for shard in shards {
        all.extend(read_results(sweep, &shard.join("results.csv"))?);
    }
    all.sort_by_key(|r| r.point * reps + r.replication as usize);
    for (i, r) in all.iter().enumerate() {
        if r.point * reps + r.replication as usize != i {
            return Err(std::io::Error::other(format!(
                "the shards do not cover run {i} exactly once (point {}, replication {})",
                i / reps,
                i % reps
            )));
        }
    }
    if all.len() != sweep.runs() {
        return Err(std::io::Error::other(format!(
            "the shards hold {} of the sweep's {} runs",
            all.len(),
            sweep.runs()
        )));
    }
    Ok(all)
}
