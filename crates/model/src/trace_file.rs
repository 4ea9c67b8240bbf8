//! A `trace` arrival's rates read from a CSV file (`"file": "peak.csv"`),
//! the form a recorded traffic trace comes in (an export of per-second
//! request counts from a metrics store).
//!
//! Files are read once, when the model is loaded, and the trace becomes the
//! list of rates it would be if written inline: a loaded model stays a pure
//! value, and a run a function of it and the seed. Every `trace` object in
//! the document is resolved (the workloads', and those a variant, a timeline
//! entry or a `--set` writes whole), each file read once however many
//! documents name it.
//!
//! A model names the files it reads, and by default may name any file the
//! process can read (`../../secrets.csv`, `/etc/passwd`), as a script
//! would: a model from someone else reads what they chose, and a problem
//! message quotes the line it could not read. [`FileAccess::ModelFolder`]
//! confines a model to the files in its own folder, for models that come
//! from others (a service that runs its users' models).

use crate::error::Problem;
use crate::input_file::read_input_file;
use crate::validate::MAX_TRACE_BUCKETS;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// Which files a model may read (a `trace` arrival's `file`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FileAccess {
    /// Any file the process can read, relative to the model's folder or
    /// absolute: the command line's way, whose user runs a model of their
    /// choosing as they would a script.
    #[default]
    Anywhere,
    /// Only files inside the model's folder: no absolute path, no `..`, and
    /// no symbolic link that leads out of it. For models from others.
    ModelFolder,
}

/// Largest trace file read: that of every input file.
pub const MAX_TRACE_FILE_BYTES: u64 = crate::input_file::MAX_INPUT_FILE_BYTES;

/// Reads the trace files named in JSON values, relative to a model's folder.
pub(crate) struct TraceFiles<'d> {
    /// The folder of the model file (`None`: the model came as text, and
    /// names no file it could be relative to).
    dir: Option<&'d Path>,
    /// Which files it may read.
    access: FileAccess,
    /// Each file's rates (or why not), by path and column as written.
    read: BTreeMap<(PathBuf, Option<String>), Result<Vec<f64>, String>>,
}

impl<'d> TraceFiles<'d> {
    pub fn new(dir: Option<&'d Path>, access: FileAccess) -> Self {
        TraceFiles {
            dir,
            access,
            read: BTreeMap::new(),
        }
    }

    /// Whether a file was read (and its trace's `file` replaced by its rates).
    pub fn any_read(&self) -> bool {
        !self.read.is_empty()
    }

    /// Replaces, anywhere in `value`, a `trace` arrival's `file` (and
    /// `column`) by the `rates_per_s` read from it. `at` is `value`'s path,
    /// for problems.
    pub fn inline(&mut self, value: &mut Value, at: &str, problems: &mut Vec<Problem>) {
        match value {
            Value::Object(object) => {
                if object.get("kind").and_then(Value::as_str) == Some("trace")
                    && object.contains_key("file")
                {
                    self.inline_trace(object, at, problems);
                }
                for (key, v) in object.iter_mut() {
                    let here = if at.is_empty() {
                        key.clone()
                    } else if key.contains(['.', '[', ']']) {
                        format!("{at}[{key:?}]")
                    } else {
                        format!("{at}.{key}")
                    };
                    self.inline(v, &here, problems);
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter_mut().enumerate() {
                    self.inline(v, &format!("{at}[{i}]"), problems);
                }
            }
            _ => {}
        }
    }

    fn inline_trace(
        &mut self,
        trace: &mut Map<String, Value>,
        at: &str,
        problems: &mut Vec<Problem>,
    ) {
        let file_at = format!("{at}.file");
        let Some(file) = trace
            .get("file")
            .and_then(Value::as_str)
            .map(str::to_string)
        else {
            problems.push(Problem::new(file_at, "expected a file name (a string)"));
            return;
        };
        if trace.contains_key("rates_per_s") {
            problems.push(Problem::new(
                at,
                "expected `rates_per_s` or `file`, not both: the file's rates would replace the list",
            ));
            return;
        }
        let column = match trace.get("column") {
            None => None,
            Some(Value::String(c)) => Some(c.clone()),
            Some(_) => {
                problems.push(Problem::new(
                    format!("{at}.column"),
                    "expected a column name (a string)",
                ));
                return;
            }
        };
        let Some(dir) = self.dir else {
            problems.push(Problem::new(
                file_at,
                "a trace file is read relative to the model file's folder, and this model was given as text: list the rates in `rates_per_s`, or load the model from its file",
            ));
            return;
        };
        let mut path = dir.join(&file);
        if self.access == FileAccess::ModelFolder {
            match in_folder(dir, &file) {
                // The file as found inside the folder, links followed.
                Ok(Some(found)) => path = found,
                Ok(None) => {}
                Err(why) => {
                    problems.push(Problem::new(
                        file_at,
                        format!("{file}: {why}: this model may read files in its own folder only"),
                    ));
                    return;
                }
            }
        }
        let rates = self
            .read
            .entry((path.clone(), column.clone()))
            .or_insert_with(|| read_rates(&path, column.as_deref()));
        match rates {
            Ok(rates) => {
                trace.remove("file");
                trace.remove("column");
                trace.insert("rates_per_s".into(), Value::from(rates.clone()));
            }
            Err(message) => problems.push(Problem::new(file_at, format!("{file}: {message}"))),
        }
    }
}

/// Where `file` (as written in a model in `dir`) is, if it is in `dir`:
/// its path with every link followed (`None` if there is no such file:
/// reading it says so), or why it is not. A name with `..` is refused as
/// written, even one that comes back in: a model that stays in its folder
/// has no need of it.
fn in_folder(dir: &Path, file: &str) -> Result<Option<PathBuf>, String> {
    let written = Path::new(file);
    if written.has_root()
        || written
            .components()
            .any(|c| matches!(c, Component::Prefix(_)))
    {
        return Err("an absolute path, outside the model's folder".into());
    }
    if written.components().any(|c| c == Component::ParentDir) {
        return Err("a path with `..`, outside the model's folder".into());
    }
    // (A path with no folder, `<dict>`'s, is in the current one.)
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let folder = dir
        .canonicalize()
        .map_err(|e| format!("the model's folder {} cannot be found: {e}", dir.display()))?;
    let Ok(found) = dir.join(written).canonicalize() else {
        return Ok(None);
    };
    if found.starts_with(&folder) {
        Ok(Some(found))
    } else {
        Err("a symbolic link to a file outside the model's folder".into())
    }
}

/// The rates in one column of a CSV file, in order. The first row is a
/// header when its cell in that column is not a number; `column` names the
/// column by its header (required when there are several columns). The
/// file is read as every input file is ([`read_input_file`]).
fn read_rates(path: &Path, column: Option<&str>) -> Result<Vec<f64>, String> {
    let text = read_input_file(path).map_err(|e| e.to_string())?;
    rates_in_csv(&text, column)
}

/// [`read_rates`] on a file's text.
pub(crate) fn rates_in_csv(text: &str, column: Option<&str>) -> Result<Vec<f64>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let mut rows = reader.records().filter(|r| {
        // Blank lines, and comments a metrics export may begin with.
        !matches!(r, Ok(r) if r.iter().all(str::is_empty) || r.get(0).is_some_and(|c| c.starts_with('#')))
    });
    let Some(first) = rows.next() else {
        return Err("no rows".into());
    };
    let first = first.map_err(|e| e.to_string())?;
    let is_number = |cell: &str| cell.parse::<f64>().is_ok();
    let has_header = !first.iter().any(is_number);
    let index = match (column, has_header) {
        (Some(name), true) => first.iter().position(|h| h == name).ok_or_else(|| {
            format!("no column {name:?}; the header has {}", header_list(&first))
        })?,
        (Some(name), false) => {
            return Err(format!(
                "no header row to find the column {name:?} in: the first row is numbers"
            ))
        }
        (None, _) if first.len() == 1 => 0,
        (None, true) => {
            return Err(format!(
                "{} columns: say which holds the rates with `column` (the header has {})",
                first.len(),
                header_list(&first)
            ))
        }
        (None, false) => {
            return Err(format!(
                "{} columns and no header: keep only the rates' column, or add a header and name it with `column`",
                first.len()
            ))
        }
    };
    let header = has_header.then(|| header_list(&first));
    let mut rates = Vec::new();
    let data = (!has_header).then_some(Ok(first));
    for row in data.into_iter().chain(rows) {
        let row = row.map_err(|e| e.to_string())?;
        let cell = row.get(index).unwrap_or("");
        let line = row.position().map_or(0, csv::Position::line);
        rates.push(rate_in(cell, line, index)?);
        if rates.len() > MAX_TRACE_BUCKETS {
            return Err(format!(
                "more than the {MAX_TRACE_BUCKETS} rates (one a bucket) a trace may have"
            ));
        }
    }
    match header {
        // Said here, in the file's terms: the model has no list to blame.
        Some(header) if rates.is_empty() => Err(format!(
            "no rates: the first row ({header}) is not numbers, so it is read as a header, and no row follows it"
        )),
        _ => Ok(rates),
    }
}

/// The rate in `cell` (line `line`, column `index` from 0): a number, and a
/// rate a trace may have (finite, ≥ 0). `nan`, `inf` and `1e400` parse as
/// numbers, but no list of rates could hold them.
fn rate_in(cell: &str, line: u64, index: usize) -> Result<f64, String> {
    let rate = cell.parse::<f64>().map_err(|_| {
        format!(
            "line {line}: expected a rate (a number) in column {}, got {cell:?}",
            index + 1
        )
    })?;
    if rate.is_finite() && rate >= 0.0 {
        Ok(rate)
    } else {
        Err(format!("line {line}: expected a rate ≥ 0, got {cell}"))
    }
}

fn header_list(header: &csv::StringRecord) -> String {
    header
        .iter()
        .map(|h| format!("{h:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_column_with_or_without_a_header() {
        assert_eq!(rates_in_csv("rps\n10\n20.5\n", None), Ok(vec![10.0, 20.5]));
        assert_eq!(rates_in_csv("10\n20.5\n\n", None), Ok(vec![10.0, 20.5]));
    }

    #[test]
    fn a_column_by_its_header() {
        let text = "# exported\ntime,rps\n2024-11-29T00:00:00Z,100\n2024-11-29T00:00:01Z,140\n";
        assert_eq!(rates_in_csv(text, Some("rps")), Ok(vec![100.0, 140.0]));
        let err = rates_in_csv(text, None).unwrap_err();
        assert!(
            err.contains("say which holds the rates with `column`"),
            "{err}"
        );
        assert!(err.contains("\"time\", \"rps\""), "{err}");
        let err = rates_in_csv(text, Some("qps")).unwrap_err();
        assert!(err.starts_with("no column \"qps\""), "{err}");
    }

    #[test]
    fn a_bad_cell_names_its_line() {
        let err = rates_in_csv("rps\n10\nn/a\n", None).unwrap_err();
        assert_eq!(
            err,
            "line 3: expected a rate (a number) in column 1, got \"n/a\""
        );
        assert_eq!(rates_in_csv("", None), Err("no rows".into()));
        for cell in ["nan", "inf", "-inf", "1e400", "-5"] {
            assert_eq!(
                rates_in_csv(&format!("rps\n10\n{cell}\n"), None),
                Err(format!("line 3: expected a rate ≥ 0, got {cell}"))
            );
        }
        let err = rates_in_csv("0x10\n", None).unwrap_err();
        assert!(
            err.starts_with("no rates: the first row (\"0x10\")"),
            "{err}"
        );
    }

    #[test]
    fn only_a_regular_file_is_read() {
        let dir = std::env::temp_dir();
        assert_eq!(read_rates(&dir, None), Err("not a regular file".into()));
        #[cfg(unix)]
        assert_eq!(
            read_rates(Path::new("/dev/zero"), None),
            Err("not a regular file".into())
        );
    }
}
