//! `summary.tidy.csv` and `timeseries.tidy.csv.gz` hold the values of
//! `summary.csv` and `timeseries.csv`, one line per value: every non-empty
//! number of a wide file is in its tidy twin exactly once, with the same
//! digits, and the tidy file holds nothing else. The wide files are read as
//! a user would read them, splitting `ENTITY.metric` at its '.'.

mod common;

use common::{assert_ok, model, read, stormsim, stormsim_into, write_json};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;
use stormsim_sim::report::SUMMARY_TEXT_COLUMNS;

/// A value's place: its key cells (the variant, and a bucket's start), its
/// entity (`run` for the run's own figures) and its metric.
type Place = (Vec<String>, String, String);

/// Every non-empty cell of a wide file by its place.
fn wide_cells(path: &Path, keys: &[&str]) -> BTreeMap<Place, String> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(&header[..keys.len()], keys, "{}", path.display());
    let mut cells = BTreeMap::new();
    for record in reader.records() {
        let record = record.unwrap();
        let key: Vec<String> = record.iter().take(keys.len()).map(String::from).collect();
        for (column, cell) in header.iter().zip(record.iter()).skip(keys.len()) {
            if cell.is_empty() {
                continue;
            }
            let (entity, metric) = column.split_once('.').unwrap_or(("run", column));
            assert!(!metric.contains('.'), "{column}: two '.' in a column name");
            let place = (key.clone(), entity.to_string(), metric.to_string());
            assert!(
                cells.insert(place, cell.to_string()).is_none(),
                "{}: column {column} twice",
                path.display()
            );
        }
    }
    cells
}

/// A tidy file's text (gunzipped for a `.gz`).
fn tidy_text(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if path.extension().is_some_and(|e| e == "gz") {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut text)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        text
    } else {
        String::from_utf8(bytes).unwrap()
    }
}

/// Every line of a tidy file by its place; a place seen twice fails.
fn tidy_cells(path: &Path, keys: &[&str]) -> BTreeMap<Place, String> {
    let text = tidy_text(path);
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let expected: Vec<&str> = keys
        .iter()
        .copied()
        .chain(["entity", "metric", "value"])
        .collect();
    assert_eq!(header, expected, "{}", path.display());
    let mut cells = BTreeMap::new();
    for record in reader.records() {
        let record = record.unwrap();
        let cell = |i: usize| record.get(i).unwrap().to_string();
        let place = (
            (0..keys.len()).map(cell).collect(),
            cell(keys.len()),
            cell(keys.len() + 1),
        );
        let value = cell(keys.len() + 2);
        assert!(
            value.parse::<f64>().is_ok_and(f64::is_finite),
            "{}: {place:?} has the value {value:?}, not a number",
            path.display()
        );
        assert!(
            cells.insert(place.clone(), value).is_none(),
            "{}: {place:?} twice",
            path.display()
        );
    }
    cells
}

/// Each tidy file against its wide twin in `dir`; returns how many values
/// the tidy files hold, and how many text cells of the summary they left out.
fn assert_tidy_matches_wide(dir: &Path) -> (usize, usize) {
    let mut values = 0;
    let mut text = 0;
    for (wide, tidy, keys) in [
        ("summary.csv", "summary.tidy.csv", &["variant"][..]),
        (
            "timeseries.csv",
            "timeseries.tidy.csv.gz",
            &["variant", "t_s"][..],
        ),
    ] {
        let mut wide_cells = wide_cells(&dir.join(wide), keys);
        let tidy_cells = tidy_cells(&dir.join(tidy), keys);
        for (place, value) in &tidy_cells {
            match wide_cells.remove(place) {
                Some(cell) => assert_eq!(&cell, value, "{tidy}: {place:?}"),
                None => panic!("{tidy}: {place:?} = {value} is not in {wide}"),
            }
        }
        // What is left of the wide file: the summary's words (a number
        // left out would fail the second assertion), nothing else.
        for ((_, entity, metric), cell) in &wide_cells {
            assert!(
                entity == "run" && SUMMARY_TEXT_COLUMNS.contains(&metric.as_str()),
                "{wide}: {entity}.{metric} = {cell:?} is not in {tidy}"
            );
            assert!(
                cell.parse::<f64>().is_err(),
                "{wide}: {metric} = {cell} is a number, left out of {tidy}"
            );
        }
        values += tidy_cells.len();
        text += wide_cells.len();
    }
    (values, text)
}

fn run(model_file: &str, extra: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    assert_ok(&stormsim_into("run", &model(model_file), dir.path(), extra));
    dir
}

/// Three services and two workloads (the bulkhead), and the Catalog
/// incident's twenty client copies over nine variants, cut to a minute.
#[test]
fn tidy_files_hold_the_wide_files_values_once_each() {
    let bulkhead = run("bulkhead.json", &[]);
    let (values, _) = assert_tidy_matches_wide(bulkhead.path());
    let summary = read(&bulkhead.path().join("summary.tidy.csv"));
    for line in [
        "bulkheads,run,requests,",
        "bulkheads,C,calls,",
        "shared-pool,recommendation,latency_p99_ms,",
    ] {
        assert!(summary.contains(line), "summary.tidy.csv lacks {line}");
    }
    assert!(values > 10_000, "{values} values");

    let catalog = run(
        "catalog-incident.json",
        &[
            "--set",
            "horizon_s=60",
            "--set",
            "workloads[client].duration_s=60",
            "--no-warnings",
        ],
    );
    let (_, text) = assert_tidy_matches_wide(catalog.path());
    // Each variant's `complete`, `outcome` and `verdict_reason` at least.
    assert!(text >= 9 * 3, "{text} cells of words");
    let timeseries = tidy_text(&catalog.path().join("timeseries.tidy.csv.gz"));
    // Its twenty clients are reported summed, as one workload.
    assert!(timeseries.contains("\nbaseline,59,client,latency_p99_ms,"));
    assert!(!timeseries.contains(",client-20,"));
}

/// The verdict's words stay in summary.csv, its numbers are in both.
#[test]
fn a_verdicts_words_stay_wide_and_its_numbers_go_tidy() {
    let dir = run("circuit-breaker.json", &[]);
    assert_tidy_matches_wide(dir.path());
    let wide = read(&dir.path().join("summary.csv"));
    let tidy = read(&dir.path().join("summary.tidy.csv"));
    assert!(wide.contains(",recovered,"), "{wide}");
    assert!(!tidy.contains("recovered,"), "{tidy}");
    assert!(tidy.contains(",run,decisive_goodput_ratio,"), "{tidy}");
}

/// `run` writes the tidy files, lists them among what it wrote, and links
/// them from index.html.
#[test]
fn the_tidy_files_are_listed_where_the_outputs_are() {
    let dir = tempfile::tempdir().unwrap();
    let out = stormsim(
        &[
            "run",
            model("circuit-breaker.json").to_str().unwrap(),
            "--out",
            dir.path().to_str().unwrap(),
        ],
        &[],
    );
    assert_ok(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(
            "/{summary.json, summary.csv, summary.tidy.csv, timeseries.csv, timeseries.tidy.csv.gz, latency.csv, "
        ),
        "{stdout}"
    );
    let html = read(&dir.path().join("index.html"));
    for file in ["summary.tidy.csv", "timeseries.tidy.csv.gz"] {
        assert!(html.contains(&format!("<a href=\"{file}\">")), "{html}");
    }
    let manifest = read(&dir.path().join(".stormsim-manifest.json"));
    assert!(
        manifest.contains("\"timeseries.tidy.csv.gz\""),
        "{manifest}"
    );
}

/// A service named `pay.v2` would give the column `pay.v2.calls`, which
/// reads as service `pay`'s metric `v2.calls`: the model is refused before
/// it runs (exit 2), naming the field.
#[test]
fn a_name_with_the_column_separator_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_json(
        &dir.path().join("dotted.json"),
        json!({
            "name": "dotted",
            "workloads": [{"name": "users", "target": "pay.v2", "requests": 10,
                           "arrival": {"kind": "constant", "rate_per_s": 10}}],
            "services": [{"name": "pay.v2", "steps": [{"work": {"kind": "constant", "ms": 1}}]}]
        }),
    );
    let out_dir = dir.path().join("out");
    let out = stormsim_into("run", &file, &out_dir, &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("services[0].name: expected a name without '.'"),
        "{stderr}"
    );
    assert!(!out_dir.exists(), "a refused model wrote outputs");
}
