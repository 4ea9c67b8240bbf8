//! The comparison table printed after a run: one row per variant, in four
//! formats (`--format`), of the columns `--columns` chooses.
//!
//! The columns are those of summary.csv (docs/outputs.md), by the same names,
//! with the same values: `csv` prints summary.csv's very cells, `json` the
//! same numbers as numbers, `table` and `markdown` round them for reading
//! (thousands grouped, a success rate as a percentage). Nothing in them is a
//! wall-clock figure: a run of the same model prints the same table on every
//! machine.
//!
//! The default `table` fits [`MAX_WIDTH`] columns: text columns (the variant
//! names, the verdict) are cut with `…` when the whole would not fit.

use anyhow::{bail, Result};
use serde_json::{Map, Number, Value};
use std::collections::BTreeSet;
use stormsim_model::LoadedModel;
use stormsim_sim::report::{
    summary_header_of, FAILURE_COLUMNS, SERVICE_COLUMNS, SUMMARY_COLUMNS, WORKLOAD_COLUMNS,
};
use stormsim_sim::RunReport;

/// The widest the `table` format prints when text columns can be cut to fit.
pub const MAX_WIDTH: usize = 120;

/// Text columns are cut no shorter than this (with their `…`).
const MIN_TEXT_WIDTH: usize = 12;

/// The mark of a variant stopped at one of the model's limits.
const PARTIAL_MARK: &str = " [PARTIAL]";

/// How `run` prints its comparison (`--format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns for a terminal, at most about 120 wide by default.
    Table,
    /// A GitHub-flavoured Markdown table.
    Markdown,
    /// CSV with a header row: summary.csv's cells of the chosen columns.
    Csv,
    /// A JSON array with one object per variant; numbers as numbers, absent
    /// values null.
    Json,
}

impl Format {
    /// Whether the format is data for a program (csv, json): one document
    /// on stdout, nothing else.
    pub fn is_data(self) -> bool {
        matches!(self, Format::Csv | Format::Json)
    }
}

/// The columns of a run's comparison: the default set, or the ones
/// `--columns` named, resolved to summary.csv's names.
#[derive(Clone, Debug, PartialEq)]
pub enum Columns {
    /// Variant, success, p50/p99, the verdict when there is one, and the load,
    /// wasted work and calls per request at the focus service (`csv` and
    /// `json` add `complete` after the variant).
    Default,
    /// These, in this order (summary.csv's names).
    Chosen(Vec<String>),
}

/// Shorthands `--columns` accepts beside summary.csv's names.
const SHORTHANDS: [(&str, &str); 7] = [
    ("success", "success_rate"),
    ("p50", "latency_p50_ms"),
    ("p90", "latency_p90_ms"),
    ("p99", "latency_p99_ms"),
    ("p999", "latency_p999_ms"),
    ("max", "latency_max_ms"),
    ("mean", "latency_mean_ms"),
];

/// The recovery verdict in one column of the human formats: "recovered in
/// 5 s", "metastable (until rollback)"; in csv and json, the three columns
/// it is made of.
const VERDICT: &str = "verdict";
const VERDICT_PARTS: [&str; 3] = ["outcome", "recovery_s", "recovered_by"];

/// What a model's run will have: its services and workloads (in the order
/// summary.csv has them) and its focus service.
pub struct Available {
    services: Vec<String>,
    workloads: Vec<String>,
    focus: String,
}

impl Available {
    /// A loaded model's, before it runs (so that a bad `--columns` is refused
    /// before minutes of work).
    pub fn of_model(model: &LoadedModel) -> Available {
        let mut services: Vec<String> = Vec::new();
        let mut workloads: Vec<String> = Vec::new();
        let (mut seen_services, mut seen_workloads) = (BTreeSet::new(), BTreeSet::new());
        for v in &model.variants {
            for s in &v.model.services {
                if seen_services.insert(s.name.as_str()) {
                    services.push(s.name.clone());
                }
            }
            for w in v.model.workload_ids.iter() {
                if seen_workloads.insert(w.name.as_str()) {
                    workloads.push(w.name.clone());
                }
            }
        }
        let focus = model
            .variants
            .first()
            .and_then(|v| v.model.services.get(v.model.focus))
            .map_or_else(String::new, |s| s.name.clone());
        Available {
            services,
            workloads,
            focus,
        }
    }

    /// Every column name: summary.csv's, in its order, and `verdict`.
    fn names(&self) -> Vec<String> {
        let mut names = summary_header_of(
            self.services.iter().map(String::as_str),
            self.workloads.iter().map(String::as_str),
        );
        names.push(VERDICT.into());
        names
    }

    /// The list of valid names, for an error message.
    fn describe(&self) -> String {
        let run: Vec<&str> = SUMMARY_COLUMNS[..7]
            .iter()
            .chain(FAILURE_COLUMNS)
            .chain(&SUMMARY_COLUMNS[7..])
            .copied()
            .collect();
        let mut out = format!(
            "the columns are: {}, {VERDICT} (outcome and recovery in one; in csv and json: {})",
            run.join(", "),
            VERDICT_PARTS.join(", ")
        );
        if !self.services.is_empty() {
            out.push_str(&format!(
                "; per service S ({}): S.{}",
                self.services.join(", "),
                SERVICE_COLUMNS.join(", S.")
            ));
        }
        if !self.workloads.is_empty() {
            out.push_str(&format!(
                "; per workload W ({}): W.{}",
                self.workloads.join(", "),
                WORKLOAD_COLUMNS.join(", W.")
            ));
        }
        let shorthands: Vec<String> = SHORTHANDS
            .iter()
            .map(|(short, long)| format!("{short} = {long}"))
            .collect();
        out.push_str(&format!(
            "; shorthands: {}, focus.C = {}.C (the focus service)",
            shorthands.join(", "),
            self.focus
        ));
        out
    }
}

/// `--columns` as given (comma-separated names, possibly repeated flags) to
/// the columns of a model's run; an unknown or repeated name is an error
/// that lists the valid ones. No names: the default set.
pub fn resolve(requested: &[String], available: &Available) -> Result<Columns, String> {
    if requested.is_empty() {
        return Ok(Columns::Default);
    }
    let names = available.names();
    let mut chosen: Vec<String> = Vec::new();
    for asked in requested {
        let asked = asked.trim();
        let name = if let Some((_, long)) = SHORTHANDS.iter().find(|(s, _)| *s == asked) {
            long.to_string()
        } else if let Some(column) = asked.strip_prefix("focus.") {
            // A service of that name has it first.
            if names.iter().any(|n| n == asked) {
                asked.to_string()
            } else {
                format!("{}.{column}", available.focus)
            }
        } else {
            asked.to_string()
        };
        if asked.is_empty() {
            return Err(format!(
                "--columns: an empty column name; {}",
                available.describe()
            ));
        }
        if !names.contains(&name) {
            return Err(format!(
                "--columns: unknown column {asked:?}; {}",
                available.describe()
            ));
        }
        if chosen.contains(&name) {
            return Err(format!("--columns: {name:?} is chosen twice"));
        }
        chosen.push(name);
    }
    Ok(Columns::Chosen(chosen))
}

/// The default columns of a run in `format`.
fn default_columns(run: &RunReport, format: Format) -> Vec<String> {
    let focus = run.variants.first().map_or("", |v| v.focus.as_str());
    let mut columns = vec!["variant".to_string()];
    if matches!(format, Format::Csv | Format::Json) {
        columns.push("complete".into());
    }
    columns.push("success_rate".into());
    // Answers a fallback served: part of the successes, not full answers.
    if run.variants.iter().any(|v| v.degraded.total > 0) {
        columns.push("degraded".into());
    }
    columns.extend(
        ["latency_p50_ms", "latency_p99_ms"]
            .iter()
            .map(|c| c.to_string()),
    );
    if run.variants.iter().any(|v| v.verdict.is_some()) {
        columns.push(VERDICT.into());
    }
    columns.push("peak_offered_rps".into());
    if !focus.is_empty() {
        columns.push(format!("{focus}.wasted"));
        columns.push(format!("{focus}.calls_per_request"));
    }
    columns
}

/// What a column holds, for its display and its JSON type.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Text,
    Bool,
    Count,
    Percent,
    Ms,
    Rps,
    Seconds,
    Ratio,
}

/// The kind of the column named `base` (without its `S.` or `W.` prefix).
fn kind_of(base: &str) -> Kind {
    match base {
        "variant" | "stopped_by" | "outcome" | "recovered_by" | "verdict_reason" | VERDICT => {
            Kind::Text
        }
        "complete" | "metastable" => Kind::Bool,
        "success_rate" | "utilisation" | "peak_utilisation" => Kind::Percent,
        "calls_per_request" | "zombies_per_impatient_user" | "user_peak_zombies_mean" => {
            Kind::Ratio
        }
        b if b.ends_with("_ratio") || b.ends_with("_share") => Kind::Ratio,
        b if b.ends_with("_ms") => Kind::Ms,
        b if b.ends_with("_rps") => Kind::Rps,
        b if b.ends_with("_s") => Kind::Seconds,
        _ => Kind::Count,
    }
}

/// A column of the run: its summary.csv name, where it is in summary.csv's
/// rows, its kind, and its label in the human formats (a group above it, a
/// service or workload name or the focus service, and the label under it).
struct Column {
    name: String,
    index: usize,
    kind: Kind,
    group: String,
    label: String,
}

fn column(name: &str, index: usize, run: &RunReport) -> Column {
    let focus = run.variants.first().map_or("", |v| v.focus.as_str());
    let services: Vec<&str> = run
        .variants
        .iter()
        .flat_map(|v| v.services.iter().map(|s| s.name.as_str()))
        .chain(
            run.variants
                .iter()
                .flat_map(|v| v.workloads.iter().map(|w| w.name.as_str())),
        )
        .collect();
    // `S.C`: the longest S that is a service or a workload of the run.
    let (group, base) = match services
        .iter()
        .filter(|s| {
            name.len() > s.len() + 1 && name.starts_with(*s) && name.as_bytes()[s.len()] == b'.'
        })
        .max_by_key(|s| s.len())
    {
        Some(s) => (s.to_string(), &name[s.len() + 1..]),
        None => (String::new(), name),
    };
    let kind = kind_of(base);
    let label = match base {
        "success_rate" => "success".to_string(),
        "calls_per_request" => "calls/req".into(),
        "recovery_s" => "recovery s".into(),
        "peak_offered_rps" => "peak rps".into(),
        "storm_offered_rps" => "storm rps".into(),
        "peak_after_trigger_rps" => "peak after rps".into(),
        b => {
            let b = b.strip_prefix("latency_").unwrap_or(b);
            let b = b.replace("ok_latency_", "ok ");
            let b = match b.strip_suffix("_ms") {
                Some(stem) => format!("{stem} ms"),
                None => match b.strip_suffix("_s") {
                    Some(stem) => format!("{stem} s"),
                    None => b.to_string(),
                },
            };
            b.replace('_', " ")
        }
    };
    // The focus service's load: under its name.
    let group = if group.is_empty()
        && (base.ends_with("_offered_rps") || base == "peak_after_trigger_rps")
    {
        focus.to_string()
    } else {
        group
    };
    Column {
        name: name.to_string(),
        index,
        kind,
        group,
        label,
    }
}

/// Renders `run`'s comparison in `format`. A column that the run does not
/// have (a service no variant ran) is an error.
pub fn render(run: &RunReport, columns: &Columns, format: Format) -> Result<String> {
    let mut names = match columns {
        Columns::Default => default_columns(run, format),
        Columns::Chosen(names) => names.clone(),
    };
    if format.is_data() {
        // The verdict as data: its parts, each once.
        if let Some(at) = names.iter().position(|n| n == VERDICT) {
            names.remove(at);
            let parts: Vec<String> = VERDICT_PARTS
                .iter()
                .filter(|p| !names.iter().any(|n| n == *p))
                .map(|p| p.to_string())
                .collect();
            names.splice(at..at, parts);
        }
    }
    let (header, rows) = run.summary_table();
    let mut chosen = Vec::new();
    for name in &names {
        let lookup = if name == VERDICT { "outcome" } else { name };
        let Some(index) = header.iter().position(|h| h == lookup) else {
            bail!("the run has no column {name:?}");
        };
        chosen.push(column(name, index, run));
    }
    let at = |name: &str| header.iter().position(|h| h == name);
    let partial: Vec<usize> = run
        .variants
        .iter()
        .enumerate()
        .filter(|(_, v)| !v.complete)
        .map(|(i, _)| i)
        .collect();
    Ok(match format {
        Format::Csv => csv(&chosen, &rows)?,
        Format::Json => json(&chosen, &rows)?,
        Format::Table | Format::Markdown => {
            let (recovery, by) = (at("recovery_s"), at("recovered_by"));
            let cells: Vec<Vec<Cell>> = rows
                .iter()
                .enumerate()
                .map(|(i, row)| {
                    chosen
                        .iter()
                        .map(|c| {
                            if c.name == VERDICT {
                                let cell = |at: Option<usize>| at.map_or("", |a| row[a].as_str());
                                verdict(&row[c.index], cell(recovery), cell(by))
                            } else {
                                display(c, &row[c.index], partial.contains(&i))
                            }
                        })
                        .collect()
                })
                .collect();
            let notes: Vec<String> = partial
                .iter()
                .map(|&i| {
                    let v = &run.variants[i];
                    format!(
                        "[PARTIAL] {}: stopped at limits.{}; its counts are of part of a run, not comparable with the others'",
                        v.variant,
                        v.stopped_by.unwrap_or("?")
                    )
                })
                .collect();
            if format == Format::Table {
                table(&chosen, cells, &notes)
            } else {
                markdown(&chosen, &cells, &notes)
            }
        }
    })
}

/// A cell of a human table: its text, and a mark kept whole when the text is
/// cut to fit.
struct Cell {
    text: String,
    mark: &'static str,
}

impl Cell {
    fn width(&self) -> usize {
        self.text.chars().count() + self.mark.chars().count()
    }

    /// The cell in at most `width` characters: the text cut with `…`.
    fn fitted(&self, width: usize) -> String {
        if self.width() <= width {
            return format!("{}{}", self.text, self.mark);
        }
        let room = width.saturating_sub(self.mark.chars().count() + 1);
        let cut: String = self.text.chars().take(room).collect();
        format!("{}…{}", cut.trim_end(), self.mark)
    }
}

/// The verdict column of the human formats, from summary.csv's `outcome`,
/// `recovery_s` and `recovered_by` cells.
fn verdict(outcome: &str, recovery_s: &str, recovered_by: &str) -> Cell {
    let text = match (outcome, recovery_s.parse::<f64>()) {
        ("", _) => "-".to_string(),
        ("recovered", Ok(s)) => format!("recovered in {} s", seconds(s)),
        ("metastable", _) if !recovered_by.is_empty() => {
            format!("metastable (until {recovered_by})")
        }
        (o, _) => o.replace('_', " "),
    };
    Cell { text, mark: "" }
}

/// Seconds, rps: whole ones grouped, below 100 with a decimal if they have
/// a fraction.
fn seconds(x: f64) -> String {
    if x.fract() == 0.0 || x.abs() >= 100.0 {
        grouped(x, 0)
    } else {
        grouped(x, 1)
    }
}

/// A summary.csv cell (`raw`) as the human formats show it; `partial`
/// marks the variant.
fn display(column: &Column, raw: &str, partial: bool) -> Cell {
    let plain = |text: String| Cell { text, mark: "" };
    if column.name == "variant" {
        return Cell {
            text: raw.to_string(),
            mark: if partial { PARTIAL_MARK } else { "" },
        };
    }
    if raw.is_empty() {
        return plain("-".into());
    }
    let Ok(x) = raw.parse::<f64>() else {
        return plain(match (column.kind, raw) {
            (Kind::Bool, "true") => "yes".into(),
            (Kind::Bool, "false") => "no".into(),
            (Kind::Text, _) if column.name == "outcome" => raw.replace('_', " "),
            _ => raw.to_string(),
        });
    };
    plain(match column.kind {
        Kind::Percent => percent(x),
        Kind::Ms if x.abs() >= 1000.0 => grouped(x, 0),
        Kind::Ms => grouped(x, 1),
        Kind::Rps | Kind::Seconds => seconds(x),
        Kind::Ratio => grouped(x, 2),
        Kind::Count if x.fract() == 0.0 => grouped(x, 0),
        Kind::Count | Kind::Text | Kind::Bool => raw.to_string(),
    })
}

/// A share as a percentage with one decimal; never "100.0%" short of all,
/// nor "0.0%" above none.
fn percent(share: f64) -> String {
    let pct = share * 100.0;
    let text = format!("{pct:.1}");
    if text == "100.0" && share < 1.0 {
        ">99.9%".into()
    } else if text == "0.0" && share > 0.0 {
        "<0.1%".into()
    } else {
        format!("{text}%")
    }
}

/// `x` with `decimals` decimals and its thousands grouped: `1,234.5`.
fn grouped(x: f64, decimals: usize) -> String {
    let text = format!("{x:.decimals$}");
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text.as_str()),
    };
    let (whole, fraction) = match digits.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (digits, None),
    };
    let mut out = String::from(sign);
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if let Some(f) = fraction {
        out.push('.');
        out.push_str(f);
    }
    out
}

/// The `table` format: a group line when some columns are a service's, the
/// labels, a rule, the rows, then the notes; text columns cut so that the
/// whole fits [`MAX_WIDTH`] when it can.
fn table(columns: &[Column], rows: Vec<Vec<Cell>>, notes: &[String]) -> String {
    let n = columns.len();
    let mut widths: Vec<usize> = (0..n)
        .map(|c| {
            rows.iter()
                .map(|r| r[c].width())
                .chain([columns[c].label.chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    // Groups: runs of neighbouring columns under one name, each at least as
    // wide as its name and a dash either side.
    let mut groups: Vec<(usize, usize)> = Vec::new();
    let mut c = 0;
    while c < n {
        let mut end = c + 1;
        while end < n && columns[end].group == columns[c].group {
            end += 1;
        }
        if !columns[c].group.is_empty() {
            groups.push((c, end));
        }
        c = end;
    }
    let span = |widths: &[usize], (from, to): (usize, usize)| -> usize {
        widths[from..to].iter().sum::<usize>() + 2 * (to - from - 1)
    };
    for &(from, to) in &groups {
        let need = columns[from].group.chars().count() + 4;
        let have = span(&widths, (from, to));
        if have < need {
            widths[to - 1] += need - have;
        }
    }
    // Cut text columns, the widest first, while the table is too wide, if
    // that makes it fit (a table of many columns is left whole: cutting
    // would lose text and still wrap).
    let total = |widths: &[usize]| widths.iter().sum::<usize>() + 2 * n.saturating_sub(1);
    let shortest = |c: usize| MIN_TEXT_WIDTH.max(columns[c].label.chars().count());
    let cuttable: Vec<usize> = (0..n)
        .filter(|&c| {
            columns[c].kind == Kind::Text
                && !groups.iter().any(|&(from, to)| (from..to).contains(&c))
        })
        .collect();
    let narrowest: Vec<usize> = (0..n)
        .map(|c| {
            if cuttable.contains(&c) {
                widths[c].min(shortest(c))
            } else {
                widths[c]
            }
        })
        .collect();
    if total(&narrowest) <= MAX_WIDTH {
        while total(&widths) > MAX_WIDTH {
            let Some(&c) = cuttable
                .iter()
                .filter(|&&c| widths[c] > shortest(c))
                .max_by_key(|&&c| (widths[c], std::cmp::Reverse(c)))
            else {
                break;
            };
            widths[c] -= 1;
        }
    }
    let mut lines: Vec<String> = Vec::new();
    if !groups.is_empty() {
        let mut line = String::new();
        let mut c = 0;
        while c < n {
            match groups.iter().find(|&&(from, _)| from == c) {
                Some(&(from, to)) => {
                    let w = span(&widths, (from, to));
                    let name = format!(" {} ", columns[from].group);
                    let left = (w - name.chars().count()) / 2;
                    let right = w - name.chars().count() - left;
                    line.push_str(&format!("{}{name}{}", "-".repeat(left), "-".repeat(right)));
                    c = to;
                }
                None => {
                    line.push_str(&" ".repeat(widths[c]));
                    c += 1;
                }
            }
            if c < n {
                line.push_str("  ");
            }
        }
        lines.push(line);
    }
    let row_line = |cells: Vec<String>| -> String {
        cells
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (cell, &w))| {
                if columns[c].kind == Kind::Text {
                    format!("{cell:<w$}")
                } else {
                    format!("{cell:>w$}")
                }
            })
            .collect::<Vec<_>>()
            .join("  ")
    };
    lines.push(row_line(columns.iter().map(|c| c.label.clone()).collect()));
    lines.push("-".repeat(total(&widths)));
    for row in &rows {
        lines.push(row_line(
            row.iter()
                .zip(&widths)
                .map(|(cell, &w)| cell.fitted(w))
                .collect(),
        ));
    }
    for note in notes {
        lines.extend(wrap(note, MAX_WIDTH));
    }
    let mut out = String::new();
    for line in lines {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `text` in lines of at most `width` characters, broken at spaces (a word
/// longer than that stays whole), the lines after the first indented.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let len = line.chars().count();
        if len > 0 && len + 1 + word.chars().count() > width {
            lines.push(std::mem::replace(&mut line, "  ".to_string()));
        }
        if !line.trim().is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines
}

/// The `markdown` format: a GitHub table (numbers right-aligned), then the
/// notes.
fn markdown(columns: &[Column], rows: &[Vec<Cell>], notes: &[String]) -> String {
    let escape = |s: &str| s.replace('|', "\\|");
    let mut out = String::new();
    let labels: Vec<String> = columns
        .iter()
        .map(|c| {
            escape(&if c.group.is_empty() {
                c.label.clone()
            } else {
                format!("{} {}", c.group, c.label)
            })
        })
        .collect();
    out.push_str(&format!("| {} |\n", labels.join(" | ")));
    let rules: Vec<&str> = columns
        .iter()
        .map(|c| if c.kind == Kind::Text { ":---" } else { "---:" })
        .collect();
    out.push_str(&format!("| {} |\n", rules.join(" | ")));
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .map(|c| escape(&format!("{}{}", c.text, c.mark)))
            .collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    if !notes.is_empty() {
        out.push('\n');
        for note in notes {
            out.push_str(&escape(note));
            out.push_str("\n\n");
        }
        out.pop();
    }
    out
}

/// The `csv` format: the chosen columns of summary.csv, cell for cell.
fn csv(columns: &[Column], rows: &[Vec<String>]) -> Result<String> {
    let mut out = csv::Writer::from_writer(Vec::new());
    out.write_record(columns.iter().map(|c| c.name.as_str()))?;
    for row in rows {
        out.write_record(columns.iter().map(|c| row[c.index].as_str()))?;
    }
    Ok(String::from_utf8(out.into_inner()?)?)
}

/// The `json` format: an array of one object per variant, keyed by the
/// columns' names; numbers as numbers, absent values (summary.csv's empty
/// cells) null.
fn json(columns: &[Column], rows: &[Vec<String>]) -> Result<String> {
    let mut array = Vec::new();
    for row in rows {
        let mut object = Map::new();
        for c in columns {
            let raw = row[c.index].as_str();
            let value = match c.kind {
                _ if raw.is_empty() && c.name != "variant" => Value::Null,
                Kind::Text => Value::String(raw.to_string()),
                Kind::Bool => Value::Bool(raw == "true"),
                Kind::Count if raw.parse::<u64>().is_ok() => {
                    Value::Number(raw.parse::<u64>()?.into())
                }
                _ => match raw.parse::<f64>().ok().and_then(Number::from_f64) {
                    Some(n) => Value::Number(n),
                    None => Value::String(raw.to_string()),
                },
            };
            object.insert(c.name.clone(), value);
        }
        array.push(Value::Object(object));
    }
    let mut text = serde_json::to_string_pretty(&Value::Array(array))?;
    text.push('\n');
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped_and_rounded() {
        assert_eq!(grouped(1199664.0, 0), "1,199,664");
        assert_eq!(grouped(999.0, 0), "999");
        assert_eq!(grouped(1000.0, 0), "1,000");
        assert_eq!(grouped(128010.24, 0), "128,010");
        assert_eq!(grouped(655.64, 1), "655.6");
        assert_eq!(grouped(-12345.678, 2), "-12,345.68");
        assert_eq!(grouped(0.0, 1), "0.0");
    }

    #[test]
    fn a_percentage_is_neither_all_nor_none_unless_it_is() {
        assert_eq!(percent(1199664.0 / 3599963.0), "33.3%");
        assert_eq!(percent(1.0), "100.0%");
        assert_eq!(percent(0.99996), ">99.9%");
        assert_eq!(percent(0.0), "0.0%");
        assert_eq!(percent(0.0004), "<0.1%");
    }

    #[test]
    fn a_cut_cell_keeps_its_mark() {
        let cell = Cell {
            text: "host-slow-hedged-other-zone".into(),
            mark: PARTIAL_MARK,
        };
        assert_eq!(cell.fitted(100), "host-slow-hedged-other-zone [PARTIAL]");
        let cut = cell.fitted(20);
        assert_eq!(cut, "host-slow… [PARTIAL]");
        assert_eq!(cut.chars().count(), 20);
    }

    #[test]
    fn long_notes_are_wrapped() {
        let note = "word ".repeat(60);
        let lines = wrap(note.trim_end(), 50);
        assert!(lines.len() > 1);
        assert!(lines.iter().all(|l| l.chars().count() <= 50), "{lines:?}");
    }

    #[test]
    fn kinds_follow_the_names() {
        assert_eq!(kind_of("latency_p99_ms"), Kind::Ms);
        assert_eq!(kind_of("recovery_s"), Kind::Seconds);
        assert_eq!(kind_of("peak_offered_rps"), Kind::Rps);
        assert_eq!(kind_of("calls_per_request"), Kind::Ratio);
        assert_eq!(kind_of("decisive_retry_share"), Kind::Ratio);
        assert_eq!(kind_of("wasted"), Kind::Count);
        assert_eq!(kind_of("stopped_by"), Kind::Text);
    }
}
