//! The two layouts of a run's tables: wide (`summary.csv`,
//! `timeseries.csv`: one column per entity and metric, named
//! `ENTITY.metric`) and tidy (`summary.tidy.csv`, `timeseries.tidy.csv.gz`: one
//! row per value, the entity and the metric in columns of their own).
//!
//! Both are written from the same rows by [`TableWriter`], so that they hold
//! the same values in the same digits: a data-frame user who pivots the tidy
//! file gets the wide file's cells, and no column name has to be split.

use std::io::Write;

/// The entity of the run's own figures (a variant's `requests`,
/// `success_rate`, its failure reasons, its verdict's ratios) in the tidy
/// files. Spelled out rather than left empty, because pandas, polars and R
/// all read an empty cell as missing; model validation refuses it as the
/// name of a service or a workload, so it can only mean the run.
pub use stormsim_model::RUN_ENTITY;

/// The columns a tidy file adds after its key columns.
pub const TIDY_COLUMNS: [&str; 3] = ["entity", "metric", "value"];

/// One column of a wide table: a metric of the run or of one service or
/// workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column<'a> {
    /// The service or workload measured; `None` for the run's own figure.
    pub entity: Option<&'a str>,
    /// What is measured, as documented in docs/outputs.md.
    pub metric: &'static str,
    /// False for a column of words (`outcome`, `verdict_reason`, `true` or
    /// `false`): the tidy layout leaves it out, so that its `value` column
    /// holds numbers only and a data frame reads it as such.
    pub numeric: bool,
}

impl<'a> Column<'a> {
    /// A number the run measured of itself.
    pub fn run(metric: &'static str) -> Self {
        Column {
            entity: None,
            metric,
            numeric: true,
        }
    }

    /// A number measured of one service or workload.
    pub fn of(entity: &'a str, metric: &'static str) -> Self {
        Column {
            entity: Some(entity),
            metric,
            numeric: true,
        }
    }

    /// The column's name in the wide file: `metric`, or `ENTITY.metric`
    /// (unambiguous because validation refuses a `.` in entity names).
    pub fn wide_name(&self) -> String {
        match self.entity {
            Some(entity) => format!("{entity}.{}", self.metric),
            None => self.metric.to_string(),
        }
    }

    /// The column's entity in the tidy file.
    pub fn tidy_entity(&self) -> &str {
        self.entity.unwrap_or(RUN_ENTITY)
    }
}

/// Which layout a [`TableWriter`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// A header of the key columns and every column's wide name; one line per row.
    Wide,
    /// A header of the key columns and [`TIDY_COLUMNS`]; one line per
    /// non-empty cell of a numeric column. An empty cell (a figure the run
    /// does not have) has no line.
    Tidy,
}

/// Writes a table's rows as CSV in one [`Layout`], row by row, so that a
/// long time series goes to its file without being held in memory.
pub struct TableWriter<'a, W: Write> {
    layout: Layout,
    keys: usize,
    columns: &'a [Column<'a>],
    out: csv::Writer<W>,
}

impl<'a, W: Write> TableWriter<'a, W> {
    /// Writes the header: `keys` name the leading cells of every row (the
    /// variant, and the bucket's start in a time series).
    pub fn new(
        layout: Layout,
        keys: &[&str],
        columns: &'a [Column<'a>],
        out: W,
    ) -> Result<Self, csv::Error> {
        let mut out = csv::Writer::from_writer(out);
        match layout {
            Layout::Wide => out.write_record(
                keys.iter()
                    .map(|k| k.to_string())
                    .chain(columns.iter().map(Column::wide_name)),
            )?,
            Layout::Tidy => out.write_record(keys.iter().chain(&TIDY_COLUMNS))?,
        }
        Ok(TableWriter {
            layout,
            keys: keys.len(),
            columns,
            out,
        })
    }

    /// One row: its key cells, then one cell per column, in order.
    pub fn row(&mut self, cells: &[String]) -> Result<(), csv::Error> {
        debug_assert_eq!(cells.len(), self.keys + self.columns.len());
        match self.layout {
            Layout::Wide => self.out.write_record(cells),
            Layout::Tidy => {
                let (keys, values) = cells.split_at(self.keys);
                for (column, value) in self.columns.iter().zip(values) {
                    if !column.numeric || value.is_empty() {
                        continue;
                    }
                    debug_assert!(value.parse::<f64>().is_ok(), "{column:?}: {value:?}");
                    self.out
                        .write_record(keys.iter().map(String::as_str).chain([
                            column.tidy_entity(),
                            column.metric,
                            value.as_str(),
                        ]))?;
                }
                Ok(())
            }
        }
    }

    /// Flushes the CSV and hands back what it wrote into.
    pub fn finish(self) -> Result<W, csv::Error> {
        self.out.into_inner().map_err(|e| e.into_error().into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(layout: Layout) -> String {
        let columns = [
            Column::run("requests"),
            Column {
                numeric: false,
                ..Column::run("outcome")
            },
            Column::of("api", "calls"),
            Column::of("users", "latency_p99_ms"),
        ];
        let mut w = TableWriter::new(layout, &["variant"], &columns, Vec::new()).unwrap();
        for row in [
            ["a", "10", "recovered", "12", "3.5"],
            ["b, c", "0", "", "", ""],
        ] {
            w.row(&row.map(String::from)).unwrap();
        }
        String::from_utf8(w.finish().unwrap()).unwrap()
    }

    #[test]
    fn wide_names_join_entity_and_metric() {
        assert_eq!(
            written(Layout::Wide),
            "variant,requests,outcome,api.calls,users.latency_p99_ms\n\
             a,10,recovered,12,3.5\n\
             \"b, c\",0,,,\n"
        );
    }

    #[test]
    fn tidy_has_a_line_per_number_and_none_for_words_or_empty_cells() {
        assert_eq!(
            written(Layout::Tidy),
            "variant,entity,metric,value\n\
             a,run,requests,10\n\
             a,api,calls,12\n\
             a,users,latency_p99_ms,3.5\n\
             \"b, c\",run,requests,0\n"
        );
    }
}
