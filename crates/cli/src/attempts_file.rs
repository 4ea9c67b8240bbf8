//! `attempts.csv`, streamed: each variant writes its attempts' rows to an
//! anonymous temporary file in the output folder as the run goes (on the
//! disk the output goes to, not in a `/tmp` that may be memory), and the file
//! is assembled from them in variant order once every variant is done.
//! Memory then follows the requests in flight even with `--attempts`
//! (tail-at-scale's 11 variants kept 264 MB of records in memory when they
//! were collected first), and the bytes are those of
//! [`stormsim_sim::RunReport::attempts_csv`] over the same records, whatever
//! the thread count (a test checks it).

use anyhow::{Context, Result};
use std::fs::File;
use std::io::{Seek, Write};
use std::path::Path;
use stormsim_sim::report::{AttemptRecord, AttemptSink, ATTEMPT_COLUMNS};

/// One variant's rows, written as its attempts end.
pub struct AttemptRows<'a> {
    variant: &'a str,
    services: Vec<&'a str>,
    /// Buffered by the CSV writer itself.
    rows: csv::Writer<File>,
    /// The first write that failed; the run goes on, writing nothing more,
    /// and [`finish`] reports it before any output is written.
    error: Option<csv::Error>,
}

impl<'a> AttemptRows<'a> {
    /// Rows of `variant`, whose services are `services` in model order, kept
    /// in an unnamed temporary file in `dir` (gone when dropped, even if the
    /// run is killed).
    pub fn new(dir: &Path, variant: &'a str, services: Vec<&'a str>) -> Result<Self> {
        let file = tempfile::tempfile_in(dir).with_context(|| {
            format!(
                "cannot create a temporary file for attempts.csv in {}",
                dir.display()
            )
        })?;
        Ok(AttemptRows {
            variant,
            services,
            rows: csv::WriterBuilder::new()
                .has_headers(false)
                .from_writer(file),
            error: None,
        })
    }

    /// The rows written, as a file read from its start.
    fn into_file(self) -> Result<RowsFile> {
        if let Some(e) = self.error {
            return Err(e).context("cannot write the rows of attempts.csv");
        }
        let mut file = self
            .rows
            .into_inner()
            .map_err(|e| e.into_error())
            .context("cannot write the rows of attempts.csv")?;
        file.rewind()?;
        Ok(RowsFile(file))
    }
}

impl AttemptSink for AttemptRows<'_> {
    fn record(&mut self, record: &AttemptRecord) {
        if self.error.is_some() {
            return;
        }
        if let Err(e) = self
            .rows
            .write_record(record.csv_fields(self.variant, &self.services))
        {
            self.error = Some(e);
        }
    }
}

/// One variant's rows, all written and flushed.
pub struct RowsFile(File);

/// Flushes every variant's rows and reports the first write that failed:
/// called before any output is written, so that a failed attempts.csv does
/// not leave new summaries beside an old one.
pub fn finish(variants: Vec<AttemptRows<'_>>) -> Result<Vec<RowsFile>> {
    variants.into_iter().map(AttemptRows::into_file).collect()
}

/// Writes `attempts.csv` at `path` (atomically): the header, then each
/// variant's rows in the order given.
pub fn assemble(path: &Path, files: Vec<RowsFile>) -> Result<()> {
    crate::output::write_atomically_with(path, |out| {
        let mut header = csv::Writer::from_writer(Vec::new());
        header.write_record(ATTEMPT_COLUMNS)?;
        out.write_all(&header.into_inner().map_err(|e| e.into_error())?)?;
        for RowsFile(mut file) in files {
            std::io::copy(&mut file, out)?;
        }
        Ok(())
    })
}
