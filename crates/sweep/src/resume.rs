//! Sweeps that survive interruption: rows are appended to
//! `results.csv.partial` in run order as runs finish (a run that finishes early
//! waits in memory for those before it), so the file is always a valid prefix;
//! `--resume` reads it back, skips the runs it holds, and appends the rest. The
//! finished file is renamed to `results.csv`: the same bytes as an
//! uninterrupted sweep, and never a half-written file that looks complete.
//!
//! Rows are only ever mixed with rows of the same inputs: the folder's
//! [`crate::inputs::INPUTS_FILE`] must match the sweep resumed or
//! merged ([`check_inputs`]), and every row read back must be the run it
//! claims to be (its point, replication and seed), or the file is named with
//! the line that is not.

use crate::inputs::{Inputs, INPUTS_FILE};
use crate::{files, table, Row, RunResult, Sweep};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The table of a sweep still running (or interrupted).
pub const PARTIAL_FILE: &str = "results.csv.partial";
/// The table of a finished sweep (or shard).
pub const RESULTS_FILE: &str = "results.csv";

/// The file a sweep in progress writes.
pub fn partial_path(out: &Path) -> PathBuf {
    out.join(PARTIAL_FILE)
}

/// A problem with a sweep's results on disk: each names the file or folder.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A results file is not a table of this sweep's runs.
    #[error("{}, line {line}: {why}", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// Its line, from 1.
        line: usize,
        /// What is wrong with it.
        why: String,
    },
    /// The folder's results were computed from other inputs than the sweep
    /// given, or it does not say what from.
    #[error("{}: {why}", dir.display())]
    Inputs {
        /// The folder.
        dir: PathBuf,
        /// What changed, or what is missing.
        why: String,
    },
    /// A shard's folder cannot be merged: missing, unfinished or empty.
    #[error("{}: {why}", dir.display())]
    Shard {
        /// The shard's folder.
        dir: PathBuf,
        /// What is missing.
        why: String,
    },
    /// The shards together do not hold every run once.
    #[error("{0}")]
    Coverage(String),
}

impl ResultsError {
    /// Whether the problem is in the user's files (exit code 2), not a
    /// failure to read or write them.
    pub fn is_bad_input(&self) -> bool {
        !matches!(self, ResultsError::Io { .. })
    }
}

fn io_at(path: &Path) -> impl FnOnce(std::io::Error) -> ResultsError + '_ {
    move |source| ResultsError::Io {
        path: path.to_path_buf(),
        source,
    }
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
    /// The summary column an axis holds ([`table::held_by_axis`]).
    held: Option<(usize, usize)>,
}

impl Appender {
    /// Writes every waiting result that continues the file's prefix.
    fn flush_prefix(&mut self, sweep: &Sweep) -> std::io::Result<()> {
        while let Some(result) = self.waiting.remove(&self.next) {
            let line = table::results_line(sweep, self.held, &result, self.next == self.first)
                .map_err(std::io::Error::other)?;
            self.file.write_all(line.as_bytes())?;
            self.next += 1;
            self.written.push(result);
        }
        self.file.flush()
    }
}

/// The cells of one CSV line.
fn cells_of(line: &str) -> Option<Vec<String>> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(line.as_bytes())
        .records()
        .next()?
        .ok()
        .map(|r| r.iter().map(str::to_string).collect())
}

/// Why a table whose summary columns are `found` cannot hold this build's
/// rows, whose columns are `expected`: a table begun by another version of
/// stormsim, with other columns, would be continued with rows its header
/// does not name.
fn other_columns(found: &[String], expected: &[String]) -> Option<String> {
    if found == expected {
        return None;
    }
    let at = found
        .iter()
        .zip(expected)
        .take_while(|(f, e)| f == e)
        .count();
    let name = |columns: &[String]| {
        columns
            .get(at)
            .map_or("nothing".into(), |c| format!("{c:?}"))
    };
    Some(format!(
        "its rows have other columns than this version of stormsim writes ({} summary columns, \
         this version {}; the first to differ is {} where this version writes {}): it was begun \
         by another version",
        found.len(),
        expected.len(),
        name(found),
        name(expected)
    ))
}

/// The rows of a results file whose first row is run `first`, as results,
/// and the byte length of its complete lines (a last line an interruption
/// cut short, without its newline, is dropped). Every other line must be a
/// row of this sweep: the header its columns, each row the next run with its
/// seed, as wide as the header.
fn read_rows(
    sweep: &Sweep,
    path: &Path,
    first: usize,
) -> Result<(Vec<RunResult>, u64), ResultsError> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), 0)),
        Err(e) => return Err(io_at(path)(e)),
    };
    let mut reader = BufReader::new(file);
    let malformed = |line: usize, why: String| ResultsError::Malformed {
        path: path.to_path_buf(),
        line,
        why,
    };
    let mut results = Vec::new();
    let mut kept = 0u64;
    let mut header_read = false;
    let lead: Vec<String> = ["point", "replication", "seed"]
        .iter()
        .map(|c| c.to_string())
        .chain(
            sweep
                .points
                .first()
                .into_iter()
                .flat_map(|p| p.values.iter().map(|(c, _, _)| c.to_string())),
        )
        .collect();
    let held = table::held_by_axis(sweep);
    let written_columns: Vec<String> = table::without_held(held, sweep.columns.iter())
        .map(String::from)
        .collect();
    let complete_column = sweep.columns.iter().position(|c| c == "complete");
    let reps = sweep.spec.replications as usize;
    let mut line = String::new();
    for number in 1.. {
        line.clear();
        let n = reader.read_line(&mut line).map_err(io_at(path))?;
        if n == 0 || !line.ends_with('\n') {
            break;
        }
        let cells = cells_of(&line).ok_or_else(|| malformed(number, "not a line of CSV".into()))?;
        if !header_read {
            if cells.len() <= lead.len() || cells[..lead.len()] != lead[..] {
                return Err(malformed(
                    number,
                    format!(
                        "expected a header starting {} and then the summary's columns, found {:?}",
                        lead.join(","),
                        line.trim_end()
                    ),
                ));
            }
            if let Some(why) = other_columns(&cells[lead.len()..], &written_columns) {
                return Err(malformed(number, why));
            }
            header_read = true;
        } else {
            let index = first + results.len();
            if index >= sweep.runs() {
                return Err(malformed(
                    number,
                    format!("a row past the sweep's last run ({})", sweep.runs()),
                ));
            }
            if cells.len() != lead.len() + written_columns.len() {
                return Err(malformed(
                    number,
                    format!(
                        "{} cells where the header has {}",
                        cells.len(),
                        lead.len() + written_columns.len()
                    ),
                ));
            }
            let (point, replication) = (index / reps, (index % reps) as u32);
            let seed = sweep.seed_of(point, replication);
            let expect = [point.to_string(), replication.to_string(), seed.to_string()];
            if cells[..3] != expect[..] {
                return Err(malformed(
                        number,
                        format!(
                            "expected run {index} (point {point}, replication {replication}, seed {seed}), found point {}, replication {}, seed {}",
                            cells[0], cells[1], cells[2]
                        ),
                    ));
            }
            let row =
                table::with_held_cell(held, &cells[3..lead.len()], cells[lead.len()..].to_vec());
            let stopped_by_limit = complete_column.is_some_and(|c| row[c] == "false");
            results.push(RunResult {
                point,
                replication,
                seed,
                header: sweep.columns.clone(),
                row: Row::new(row),
                stopped_by_limit,
            });
        }
        kept += n as u64;
    }
    Ok((results, kept))
}

/// The recorded inputs of the results in `dir`, if it records them.
pub fn read_inputs(dir: &Path) -> Result<Option<Inputs>, ResultsError> {
    let path = dir.join(INPUTS_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_at(&path)(e)),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| ResultsError::Malformed {
            path: path.clone(),
            line: e.line(),
            why: format!("not a record of a sweep's inputs: {e}"),
        })
}

/// Refuses to continue the results in `dir` (a results file there) unless
/// they record the same inputs as `sweep`'s runs `slice`: the advice is
/// `advice` (how to start afresh).
pub fn check_inputs(
    sweep: &Sweep,
    dir: &Path,
    slice: std::ops::Range<usize>,
    advice: &str,
) -> Result<(), ResultsError> {
    let now = Inputs::of(sweep, slice);
    let why = match read_inputs(dir)? {
        None => format!(
            "has results but no {INPUTS_FILE} saying what they were computed from (written by an older stormsim?), so they cannot be continued safely: {advice}"
        ),
        Some(then) => {
            let changes = then.changes(&now, true);
            if changes.is_empty() {
                return Ok(());
            }
            format!(
                "its results were computed from other inputs (changed since: {}); {advice}",
                changes.join(", ")
            )
        }
    };
    Err(ResultsError::Inputs {
        dir: dir.to_path_buf(),
        why,
    })
}

/// Runs the sweep's runs `slice` (all of them, or a shard's) into `out`:
/// resuming `results.csv.partial` if `resume` (or a finished `results.csv`,
/// which is then left as it is), at most `max_runs` more runs if given,
/// appending rows in run order. When every run of the slice is done the
/// partial file becomes `results.csv`. The caller checks the folder's
/// inputs first ([`check_inputs`]).
pub fn run_resumable(
    sweep: &Sweep,
    out: &Path,
    slice: std::ops::Range<usize>,
    resume: bool,
    max_runs: Option<usize>,
    progress: &(dyn Fn(usize, u64) + Sync),
) -> Result<Progress, ResultsError> {
    std::fs::create_dir_all(out).map_err(io_at(out))?;
    let partial = partial_path(out);
    let finished = out.join(RESULTS_FILE);
    if resume && !partial.exists() && finished.exists() {
        // A finished sweep resumed once too often: nothing to run, nothing
        // to discard.
        let (results, _) = read_rows(sweep, &finished, slice.start)?;
        if results.len() == slice.len() {
            return Ok(Progress {
                results,
                complete: true,
            });
        }
        return Err(ResultsError::Malformed {
            path: finished,
            line: results.len() + 1,
            why: format!(
                "holds {} of its {} runs, yet it is a finished table",
                results.len(),
                slice.len()
            ),
        });
    }
    // A finished table from an earlier sweep must not pass for this one's
    // while it runs (or if it is interrupted). (Removing a link removes the
    // link, not its target.)
    match std::fs::remove_file(&finished) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io_at(&finished)(e)),
        _ => {}
    }
    let (done, kept) = if resume {
        read_rows(sweep, &partial, slice.start)?
    } else {
        (Vec::new(), 0)
    };
    // The kept prefix goes into a new file that replaces the partial one:
    // never opened through a link planted at its name, never truncating a
    // file another name shares (a hard link).
    let file = files::write_new_with(&partial, |tmp| {
        if kept > 0 {
            let mut old = File::open(&partial)?.take(kept);
            std::io::copy(&mut old, tmp)?;
        }
        Ok(())
    })
    .map_err(io_at(&partial))?;
    let start = slice.start + done.len();
    let end = max_runs.map_or(slice.end, |m| (start + m).min(slice.end));
    let appender = Mutex::new(Appender {
        file,
        first: slice.start,
        next: start,
        waiting: BTreeMap::new(),
        written: done,
        held: table::held_by_axis(sweep),
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
        return Err(io_at(&partial)(e));
    }
    let appender = appender.into_inner().expect("unpoisoned");
    let complete = appender.next == slice.end;
    appender.file.sync_all().map_err(io_at(&partial))?;
    if complete {
        std::fs::rename(&partial, &finished).map_err(io_at(&finished))?;
    }
    Ok(Progress {
        results: appender.written,
        complete,
    })
}

/// The runs of shard `index` of `count`: a contiguous slice, the shards
/// together covering every run exactly once.
pub fn shard_slice(runs: usize, index: usize, count: usize) -> std::ops::Range<usize> {
    // In 128 bits: index × runs must not overflow, whatever N is given.
    let at = |i: usize| (i as u128 * runs as u128 / count.max(1) as u128) as usize;
    at(index)..at(index + 1)
}

/// One shard's results: its folder must be a finished shard of `sweep`
/// (the same inputs), its `results.csv` every run of its slice.
fn read_shard(sweep: &Sweep, dir: &Path) -> Result<Vec<RunResult>, ResultsError> {
    let shard_error = |why: String| ResultsError::Shard {
        dir: dir.to_path_buf(),
        why,
    };
    if !dir.is_dir() {
        return Err(shard_error(
            "no such folder: give the output folders of the sweep's shards".into(),
        ));
    }
    let partial = partial_path(dir);
    let finished = dir.join(RESULTS_FILE);
    let Some(then) = read_inputs(dir)? else {
        return Err(shard_error(format!(
            "holds no {INPUTS_FILE}, so not a shard's results (or an older stormsim's): run the shard with `stormsim sweep SWEEP --shard I/N --out {}`",
            dir.display()
        )));
    };
    let now = Inputs::of(sweep, 0..sweep.runs());
    let changes = then.changes(&now, false);
    if !changes.is_empty() {
        return Err(shard_error(format!(
            "its runs were computed from other inputs than this sweep's (they differ in: {})",
            changes.join(", ")
        )));
    }
    let [start, end] = then.slice;
    if !finished.exists() {
        let done = read_rows(sweep, &partial, start).map(|(r, _)| r.len());
        return Err(shard_error(match (partial.exists(), done) {
            (true, Ok(done)) => format!(
                "the shard is unfinished: {PARTIAL_FILE} holds {done} of its {} runs (finish it with `stormsim sweep SWEEP --shard I/N --out {} --resume`)",
                end - start,
                dir.display()
            ),
            _ => format!("has no {RESULTS_FILE}: the shard has not run, or was interrupted"),
        }));
    }
    let (results, _) = read_rows(sweep, &finished, start)?;
    if results.len() != end - start {
        return Err(shard_error(format!(
            "{RESULTS_FILE} holds {} of the shard's {} runs (runs {start} to {end})",
            results.len(),
            end - start
        )));
    }
    Ok(results)
}

/// Merges shards' results into the whole sweep's, in run order; every shard
/// must be a finished shard of this sweep, and every run must appear exactly
/// once. (A shard with no runs, as when there are more shards than runs,
/// adds none.)
pub fn merge(sweep: &Sweep, shards: &[PathBuf]) -> Result<Vec<RunResult>, ResultsError> {
    let reps = sweep.spec.replications as usize;
    let mut all: Vec<RunResult> = Vec::new();
    for shard in shards {
        all.extend(read_shard(sweep, shard)?);
    }
    all.sort_by_key(|r| r.point * reps + r.replication as usize);
    for (i, r) in all.iter().enumerate() {
        if r.point * reps + r.replication as usize != i {
            return Err(ResultsError::Coverage(format!(
                "the shards do not cover run {i} exactly once (point {}, replication {})",
                i / reps,
                i % reps
            )));
        }
    }
    if all.len() != sweep.runs() {
        return Err(ResultsError::Coverage(format!(
            "the shards hold {} of the sweep's {} runs",
            all.len(),
            sweep.runs()
        )));
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::shard_slice;

    #[test]
    fn shards_cover_every_run_once_even_when_there_are_more_shards_than_runs() {
        let slices: Vec<_> = (0..5).map(|i| shard_slice(3, i, 5)).collect();
        assert_eq!(slices.iter().map(|s| s.len()).sum::<usize>(), 3);
        assert!(slices.windows(2).all(|w| w[0].end == w[1].start));
        let huge = usize::MAX / 2;
        assert_eq!(shard_slice(10, huge - 1, huge), 9..10);
    }
}
