//! The sweep's tables: `results.csv` (one row per run) and `aggregate.csv`
//! (one row per point: mean and 95% Student-t confidence interval of every
//! numeric column, and the share of replications that ended metastable).

use crate::search::wilson_interval;
use crate::{Row, RunResult, Sweep};
use stormsim_sim::analysis::Outcome;

fn cell(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `results.csv`: `point`, `replication`, `seed`, the axes, then the summary
/// columns of `summary.csv` but those an axis already holds
/// ([`held_by_axis`]). Library API (see [`Sweep::from_text`]).
pub fn results_csv(sweep: &Sweep, results: &[RunResult]) -> Result<String, csv::Error> {
    in_memory(|bytes| write_results_csv(sweep, results, bytes))
}

/// [`results_csv`] written to `sink` run by run.
pub fn write_results_csv(
    sweep: &Sweep,
    results: &[RunResult],
    mut sink: impl std::io::Write,
) -> Result<(), csv::Error> {
    let held = held_by_axis(sweep);
    for (i, r) in results.iter().enumerate() {
        sink.write_all(results_line(sweep, held, r, i == 0)?.as_bytes())?;
    }
    Ok(sink.flush()?)
}

/// One run's line of `results.csv`, with the header line first for run 0;
/// `held` is the sweep's [`held_by_axis`].
pub(crate) fn results_line(
    sweep: &Sweep,
    held: Option<(usize, usize)>,
    r: &RunResult,
    with_header: bool,
) -> Result<String, csv::Error> {
    let mut out = csv::Writer::from_writer(Vec::new());
    let point = &sweep.points[r.point];
    if with_header {
        let mut h = vec!["point".to_string(), "replication".into(), "seed".into()];
        h.extend(point.values.iter().map(|(c, _, _)| c.to_string()));
        h.extend(without_held(held, r.header.iter()).map(String::from));
        out.write_record(&h)?;
    }
    let mut line = vec![
        r.point.to_string(),
        r.replication.to_string(),
        r.seed.to_string(),
    ];
    line.extend(point.values.iter().map(|(_, _, v)| cell(v)));
    line.extend(without_held(held, r.row.iter()).map(String::from));
    out.write_record(&line)?;
    finish(out)
}

/// The summary column that results.csv leaves to an axis, as `(summary
/// column, axis)`: a `variants` axis without a `name` is the column
/// `variant`, and holds the run's variant, which is the summary's `variant`
/// too. Written once, so that a reader that keys a row by its column names
/// (pandas, which renamed the second `variant.1`) finds each name once. (No
/// other axis may be named like a summary column: checked on loading.)
pub(crate) fn held_by_axis(sweep: &Sweep) -> Option<(usize, usize)> {
    let point = sweep.points.first()?;
    // (A sweep has at most one `variants` axis: checked on loading.)
    let axis = (point.values.iter()).position(|(_, path, _)| path.is_none())?;
    if &*point.values[axis].0 != "variant" {
        return None;
    }
    let column = sweep.columns.iter().position(|c| c == "variant")?;
    Some((column, axis))
}

/// The cells of a summary row (or its header) that results.csv writes:
/// all but the one [`held_by_axis`].
pub(crate) fn without_held<'a, S: AsRef<str> + ?Sized + 'a>(
    held: Option<(usize, usize)>,
    cells: impl IntoIterator<Item = &'a S>,
) -> impl Iterator<Item = &'a str> {
    cells
        .into_iter()
        .enumerate()
        .filter(move |(i, _)| held.is_none_or(|(column, _)| column != *i))
        .map(|(_, cell)| cell.as_ref())
}

/// A summary row as results.csv writes it (`written`, without the column
/// [`held_by_axis`]) made whole again from the row's axis cells.
pub(crate) fn with_held_cell(
    held: Option<(usize, usize)>,
    axis_cells: &[String],
    mut written: Vec<String>,
) -> Vec<String> {
    if let Some((column, axis)) = held {
        written.insert(column, axis_cells[axis].clone());
    }
    written
}

/// `row`, whose columns are `header`, laid under `columns` (the sweep's,
/// which hold every one of `header`'s): a column the run's model does not
/// have (a service of another point's variant) is empty.
pub(crate) fn row_under(columns: &[String], header: &[String], row: Vec<String>) -> Vec<String> {
    if header == columns {
        return row;
    }
    // By name, through an index: a model of thousands of services has
    // columns by the hundred thousand.
    let at: std::collections::BTreeMap<&str, usize> = header
        .iter()
        .enumerate()
        .map(|(i, h)| (h.as_str(), i))
        .collect();
    columns
        .iter()
        .map(|c| {
            at.get(c.as_str())
                .map_or_else(String::new, |&i| row[i].clone())
        })
        .collect()
}

/// Mean, and with two or more values the sample standard deviation and the
/// half-width of the 95% Student-t interval, with the t quantiles of
/// earlier calls at hand.
fn mean_ci_with(xs: &[f64], t975: &mut StudentT975) -> (f64, Option<(f64, f64)>) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, None);
    }
    let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let t = t975.of(xs.len() - 1);
    (mean, Some((sd, t * sd / n.sqrt())))
}

/// Student's t 97.5% quantile by degrees of freedom, each found once: it is
/// a root search, and aggregate.csv asks for it once per numeric column
/// (by the hundred) at each of up to a million points, nearly always with
/// the same replications.
#[derive(Default)]
struct StudentT975 {
    /// The quantile by degrees of freedom, once found (a map: a sweep may
    /// have ten million replications, and a table a few distinct counts).
    by_dof: std::collections::BTreeMap<usize, f64>,
}

impl StudentT975 {
    fn of(&mut self, dof: usize) -> f64 {
        *self
            .by_dof
            .entry(dof)
            .or_insert_with(|| stormsim_stats::student_t_quantile(0.975, dof as f64))
    }
}

fn fmt(x: f64) -> String {
    let rounded: f64 = format!("{x:.9e}").parse().unwrap_or(x);
    rounded.to_string()
}

/// The outcomes counted per point in `aggregate.csv`, as `outcome.<name>`.
fn outcomes() -> impl Iterator<Item = &'static str> {
    Outcome::ALL.into_iter().map(Outcome::as_str)
}

/// `aggregate.csv`: per point, the axes; `replications` (all),
/// `complete_replications` and `partial_replications` (runs stopped by a
/// limit: left out of everything that follows, whose counts are of part of a
/// run); over the complete ones, the count of each outcome
/// (`outcome.recovered`, `.relapsed`, `.metastable`, `.overloaded`,
/// `.unhealthy_before_trigger`, `.undetermined`) and its share of them all
/// with its 95% Wilson score interval (`outcome.<o>.share`, `.ci95_low`,
/// `.ci95_high`; empty without complete replications, or where none has a
/// verdict); `metastable_share.n`,
/// the replications judged recovered, relapsed or metastable, and
/// `metastable_share` over them (relapsed counts as metastable) with its
/// 95% Wilson score interval, `metastable_share.ci95_low` and `.ci95_high`
/// (a share of a few replications: Student's t would give a point at 0 or
/// n of n and leave [0, 1] between; all three empty when none was judged,
/// and never to be read without its `n`); and for every numeric summary
/// column `C`: `C.n`
/// (the complete replications where it has a value: a latency of successes
/// with none has none), `C.mean`, `C.sd`, `C.ci95_low`, `C.ci95_high` (all
/// but the mean empty with one value, all empty with none). Library API (see
/// [`Sweep::from_text`]).
pub fn aggregate_csv(sweep: &Sweep, results: &[RunResult]) -> Result<String, csv::Error> {
    in_memory(|bytes| write_aggregate_csv(sweep, results, bytes))
}

/// [`aggregate_csv`] written to `sink` line by line: a sweep of a million
/// points has a table of a gigabyte, which need not be held.
pub fn write_aggregate_csv(
    sweep: &Sweep,
    results: &[RunResult],
    sink: impl std::io::Write,
) -> Result<(), csv::Error> {
    let mut out = csv::Writer::from_writer(sink);
    let Some(first) = results.first() else {
        return Ok(out.flush()?);
    };
    let header = &first.header;
    // Numeric columns: a number in some run and nothing but numbers or empty
    // cells in every run.
    let numeric: Vec<usize> = (0..header.len())
        .filter(|&c| {
            let cells = || results.iter().filter_map(|r| r.row.get(c));
            cells().any(|v| v.parse::<f64>().is_ok())
                && cells().all(|v| v.is_empty() || v.parse::<f64>().is_ok())
        })
        .collect();
    let column = |name: &str| header.iter().position(|h| h == name);
    let (complete, outcome) = (column("complete"), column("outcome"));
    let metastable = column("metastable");
    let mut h: Vec<String> = sweep.points[0]
        .values
        .iter()
        .map(|(c, _, _)| c.to_string())
        .collect();
    h.insert(0, "point".into());
    h.extend(
        [
            "replications",
            "complete_replications",
            "partial_replications",
        ]
        .map(String::from),
    );
    for o in outcomes() {
        h.push(format!("outcome.{o}"));
        for suffix in ["share", "ci95_low", "ci95_high"] {
            h.push(format!("outcome.{o}.{suffix}"));
        }
    }
    h.push("metastable_share.n".into());
    h.push("metastable_share".into());
    h.push("metastable_share.ci95_low".into());
    h.push("metastable_share.ci95_high".into());
    for &c in &numeric {
        for suffix in ["n", "mean", "sd", "ci95_low", "ci95_high"] {
            h.push(format!("{}.{suffix}", header[c]));
        }
    }
    out.write_record(&h)?;
    // Each run's row under its point, in one pass: looking every point's runs
    // up among all runs made a 10^6-point sweep quadratic.
    let slots = sweep.points.iter().map(|p| p.index + 1).max().unwrap_or(0);
    let mut t975 = StudentT975::default();
    let mut by_point: Vec<Vec<&Row>> = vec![Vec::new(); slots];
    for r in results {
        if let Some(rows) = by_point.get_mut(r.point) {
            rows.push(&r.row);
        }
    }
    for point in &sweep.points {
        let all: Vec<&Row> = by_point
            .get(point.index)
            .map_or_else(Vec::new, |rows| rows.clone());
        let rows: Vec<&Row> = all
            .iter()
            .copied()
            .filter(|r| complete.is_none_or(|c| &r[c] != "false"))
            .collect();
        let mut line = vec![point.index.to_string()];
        line.extend(point.values.iter().map(|(_, _, v)| cell(v)));
        line.push(all.len().to_string());
        line.push(rows.len().to_string());
        line.push((all.len() - rows.len()).to_string());
        // Shares of the runs with a verdict at all: none without one.
        let judged_any = outcome.is_some_and(|c| rows.iter().any(|r| !r[c].is_empty()));
        for o in outcomes() {
            let n = outcome.map_or(0, |c| rows.iter().filter(|r| &r[c] == o).count());
            line.push(n.to_string());
            if rows.is_empty() || !judged_any {
                line.extend([String::new(), String::new(), String::new()]);
            } else {
                let (low, high) = wilson_interval(n, rows.len());
                line.extend([fmt(n as f64 / rows.len() as f64), fmt(low), fmt(high)]);
            }
        }
        let verdicts: Vec<&str> =
            metastable.map_or(Vec::new(), |m| rows.iter().map(|r| &r[m]).collect());
        line.push(
            verdicts
                .iter()
                .filter(|v| !v.is_empty())
                .count()
                .to_string(),
        );
        match metastable_share(&verdicts) {
            Some((share, low, high)) => line.extend([fmt(share), fmt(low), fmt(high)]),
            None => line.extend([String::new(), String::new(), String::new()]),
        }
        for &c in &numeric {
            let xs: Vec<f64> = rows
                .iter()
                .filter_map(|r| r[c].parse::<f64>().ok())
                .collect();
            line.push(xs.len().to_string());
            if xs.is_empty() {
                line.extend([String::new(), String::new(), String::new(), String::new()]);
                continue;
            }
            let (mean, spread) = mean_ci_with(&xs, &mut t975);
            line.push(fmt(mean));
            match spread {
                Some((sd, h)) => {
                    line.push(fmt(sd));
                    line.push(fmt(mean - h));
                    line.push(fmt(mean + h));
                }
                None => line.extend([String::new(), String::new(), String::new()]),
            }
        }
        out.write_record(&line)?;
    }
    Ok(out.flush()?)
}

/// The share of `verdicts` (`summary.csv`'s `metastable` cells of one
/// point's replications) that are `true`, with its 95% Wilson interval, over
/// the replications judged recovered or metastable: an empty cell (a run too
/// short to judge, a baseline already unhealthy, or no recovery analysis) is
/// neither. `None` when none did.
fn metastable_share(verdicts: &[&str]) -> Option<(f64, f64, f64)> {
    let judged = verdicts.iter().filter(|v| !v.is_empty()).count();
    if judged == 0 {
        return None;
    }
    let metastable = verdicts.iter().filter(|v| **v == "true").count();
    let (low, high) = wilson_interval(metastable, judged);
    Some((metastable as f64 / judged as f64, low, high))
}

/// A table that `write` writes, as text.
fn in_memory(
    write: impl FnOnce(&mut Vec<u8>) -> Result<(), csv::Error>,
) -> Result<String, csv::Error> {
    let mut bytes = Vec::new();
    write(&mut bytes)?;
    Ok(String::from_utf8(bytes).expect("CSV of UTF-8 strings is UTF-8"))
}

fn finish(out: csv::Writer<Vec<u8>>) -> Result<String, csv::Error> {
    let bytes = out.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8(bytes).expect("CSV of UTF-8 strings is UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean_ci(xs: &[f64]) -> (f64, Option<(f64, f64)>) {
        mean_ci_with(xs, &mut StudentT975::default())
    }

    fn names(list: &str) -> Vec<String> {
        list.split(',').map(String::from).collect()
    }

    #[test]
    fn a_row_is_laid_under_the_sweeps_columns_by_name() {
        let columns = names("requests,c.calls,a.calls,a.shed,b.calls,w.requests");
        let row = row_under(
            &columns,
            &names("requests,a.calls,a.shed,w.requests"),
            names("9,8,7,6"),
        );
        assert_eq!(row, names("9,,8,7,,6"));
        assert_eq!(row_under(&columns, &columns, row.clone()), row);
    }

    #[test]
    fn the_interval_is_students_t() {
        // n = 4, sd = 1.2910 (values 1..4), t(0.975, 3) = 3.1824:
        // half-width = 3.1824 · 1.2910 / 2 = 2.0542.
        let (mean, spread) = mean_ci(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(mean, 2.5);
        let (sd, half) = spread.unwrap();
        assert!((sd - 1.2910).abs() < 1e-4, "{sd}");
        assert!((half - 2.0542).abs() < 1e-3, "{half}");
        assert_eq!(mean_ci(&[7.0]), (7.0, None));
    }

    /// Each quantile is its own degrees of freedom's, whatever was asked
    /// before it (tables: t(0.975) = 12.706, 3.182, 2.042 at 1, 3, 30).
    #[test]
    fn remembered_t_quantiles_are_each_their_own() {
        let mut t975 = StudentT975::default();
        for (dof, expected) in [
            (3, 3.1824),
            (1, 12.7062),
            (30, 2.0423),
            (3, 3.1824),
            (1, 12.7062),
        ] {
            let t = t975.of(dof);
            assert!((t - expected).abs() < 1e-4, "{dof}: {t}");
        }
        let xs = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(mean_ci_with(&xs, &mut t975), mean_ci(&xs));
    }

    /// A replication without a verdict counts neither way: 1 of 2 judged is
    /// a half, with the interval of 1 of 2 (not 1 of 3), and none judged is
    /// no share at all (it used to blank the point whenever one was missing).
    #[test]
    fn the_metastable_share_counts_the_judged_replications() {
        let (share, low, high) = metastable_share(&["true", "", "false"]).unwrap();
        assert_eq!(share, 0.5);
        assert_eq!((low, high), wilson_interval(1, 2));
        assert_eq!(metastable_share(&["", ""]), None);
        assert_eq!(metastable_share(&[]), None);
        let (share, low, _) = metastable_share(&["true", "true", "true"]).unwrap();
        assert_eq!(share, 1.0);
        assert!(low > 0.4 && low < 0.45, "{low}");
    }
}
