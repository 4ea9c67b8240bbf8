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
    next: usize,
    waiting: BTreeMap<usize, RunResult>,
    written: Vec<RunResult>,
}

impl Appender {
    /// Writes every waiting result that continues the file's prefix.
    fn flush_prefix(&mut self, sweep: &Sweep) -> std::io::Result<()> {
        while let Some(result) = self.waiting.remove(&self.next) {
            let line = table::results_line(sweep, &result, self.next == 0)
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
fn read_partial(sweep: &Sweep, path: &Path) -> std::io::Result<(Vec<RunResult>, u64)> {
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
                let index = results.len();
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

/// Runs the sweep into `out`: resuming `results.csv.partial` if `resume`, at
/// most `max_runs` more runs if given, appending rows in run order. When every
/// run is done the partial file becomes `results.csv`.
pub fn run_resumable(
    sweep: &Sweep,
    out: &Path,
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
        read_partial(sweep, &partial)?
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
    let start = done.len();
    let end = max_runs.map_or(sweep.runs(), |m| (start + m).min(sweep.runs()));
    let appender = Mutex::new(Appender {
        file,
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
    let complete = appender.next == sweep.runs();
    appender.file.sync_all()?;
    if complete {
        std::fs::rename(&partial, out.join("results.csv"))?;
    }
    Ok(Progress {
        results: appender.written,
        complete,
    })
}
