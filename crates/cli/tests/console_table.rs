//! The comparison `run` prints: its width on every bundled model, the
//! columns `--columns` chooses or refuses, each `--format` read back with
//! the numbers of summary.json, and the mark of a partial run.

mod common;

use common::{assert_ok, csv_rows, model, on_each_in_parallel, read, root, stormsim, write_json};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Output;

/// The most columns the default table may take.
const MAX_WIDTH: usize = 120;

/// Bundled models too slow to run whole in a debug build, and how they are
/// cut (as in determinism.rs): catalog-incident up to 120 s of virtual time,
/// which still holds its bad deploy at 60 s.
const CUT: &[(&str, &[&str])] = &[("catalog-incident.json", &["--set", "horizon_s=120"])];

/// `models/*.json` and `models/validation/*.json`, without sweep files (and
/// not `models/bench/`: benchmarks, minutes each).
fn bundled_models() -> Vec<PathBuf> {
    let mut models = Vec::new();
    for dir in ["models", "models/validation"] {
        for entry in std::fs::read_dir(root().join(dir)).expect("the models folder") {
            let path = entry.expect("a folder entry").path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with(".json") && !name.ends_with(".sweep.json") {
                models.push(path);
            }
        }
    }
    models.sort();
    models
}

/// `stormsim run MODEL --out OUT` with `extra` flags.
fn run(model: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "run",
        model.to_str().expect("a UTF-8 path"),
        "--out",
        out.to_str().expect("a UTF-8 path"),
    ];
    args.extend_from_slice(extra);
    stormsim(&args, &[])
}

fn stdout(run: &Output) -> String {
    String::from_utf8(run.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(run: &Output) -> String {
    String::from_utf8_lossy(&run.stderr).into_owned()
}

/// Every line's width in characters (what a terminal shows; `…` is one).
fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

fn summary(out: &Path) -> Value {
    serde_json::from_str(&read(&out.join("summary.json"))).expect("summary.json parses")
}

#[test]
fn the_default_table_fits_120_columns_on_every_bundled_model() {
    let models = bundled_models();
    assert!(models.len() >= 20, "too few models found: {models:?}");
    let dir = tempfile::tempdir().unwrap();
    let widths = on_each_in_parallel(&models, |model| {
        let name = model.file_name().unwrap().to_str().unwrap();
        let cut = CUT
            .iter()
            .find(|(m, _)| *m == name)
            .map_or(&[][..], |(_, args)| *args);
        // --quiet with --format: the table alone on stdout.
        let out = dir.path().join(name);
        let mut extra = vec!["--quiet", "--format", "table", "--accept-partial"];
        extra.extend_from_slice(cut);
        let r = run(model, &out, &extra);
        assert_ok(&r);
        let table = stdout(&r);
        let variants = summary(&out)["variants"].as_array().unwrap().len();
        // Labels, a rule and a row per variant (and a line of service names
        // above when the focus columns are there).
        assert!(
            table.lines().count() >= variants + 2,
            "{name}: {variants} variants in\n{table}"
        );
        assert!(
            table.lines().any(|l| l.starts_with("variant ")),
            "{name}:\n{table}"
        );
        assert!(
            widest(&table) <= MAX_WIDTH,
            "{name}: {} columns:\n{table}",
            widest(&table)
        );
        // No counts as fractions (1199664/3599963).
        let bytes = table.as_bytes();
        assert!(
            !(1..bytes.len().saturating_sub(1)).any(|i| bytes[i] == b'/'
                && bytes[i - 1].is_ascii_digit()
                && bytes[i + 1].is_ascii_digit()),
            "{name}:\n{table}"
        );
        (name.to_string(), widest(&table))
    });
    eprintln!("widths: {widths:?}");
}

#[test]
fn the_table_shows_the_headline_figures_rounded_and_grouped() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let r = run(&model("checkout-incident.json"), &out, &[]);
    assert_ok(&r);
    let text = stdout(&r);
    // The table, then a blank line and the files written (with the wall
    // time, which is not part of the table).
    let (table, wrote) = text
        .split_once("\n\n")
        .expect("a blank line after the table");
    assert!(wrote.starts_with("wrote "), "{wrote}");
    assert!(widest(table) <= MAX_WIDTH, "{table}");
    let lines: Vec<&str> = table.lines().collect();
    assert!(
        lines[0].contains(" db "),
        "the focus service's group: {table}"
    );
    for label in [
        "variant",
        "success",
        "p50 ms",
        "p99 ms",
        "verdict",
        "peak rps",
        "wasted",
        "calls/req",
    ] {
        assert!(lines[1].contains(label), "no {label:?} in {}", lines[1]);
    }
    let json = summary(&out);
    for (v, line) in json["variants"].as_array().unwrap().iter().zip(&lines[3..]) {
        let name = v["variant"].as_str().unwrap();
        assert!(line.starts_with(name), "{line}");
        let rate = v["success_rate"].as_f64().unwrap() * 100.0;
        let shown = if format!("{rate:.1}") == "100.0" && rate < 100.0 {
            ">99.9%".to_string()
        } else {
            format!("{rate:.1}%")
        };
        assert!(line.contains(&shown), "{shown} not in {line}");
        let wasted = v["services"][3]["wasted"].as_u64().unwrap();
        assert!(
            line.contains(&group(wasted)),
            "{} not in {line}",
            group(wasted)
        );
        match v["verdict"]["outcome"].as_str().unwrap() {
            "recovered" => assert!(
                line.contains(&format!(
                    "recovered in {} s",
                    v["verdict"]["recovery_s"].as_f64().unwrap()
                )),
                "{line}"
            ),
            outcome => assert!(line.contains(outcome), "{line}"),
        }
    }
    assert!(
        table.contains("128,010"),
        "p99 grouped, no decimals:\n{table}"
    );
    assert!(!table.contains("128010"), "{table}");
}

/// `n` with its thousands grouped.
fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
fn columns_choose_by_name_and_refuse_unknown_ones() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let chosen = "variant,gateway.cancelled,A.calls_per_request,B.wasted,p999,requests";
    let r = run(
        &model("deadline-chain.json"),
        &out,
        &["--quiet", "--columns", chosen, "--format", "csv"],
    );
    assert_ok(&r);
    let rows = csv_rows(&stdout(&r));
    let csv = read(&out.join("summary.csv"));
    let summary = csv_rows(&csv);
    assert_eq!(rows.len(), summary.len());
    let names = [
        "variant",
        "gateway.cancelled",
        "A.calls_per_request",
        "B.wasted",
        "latency_p999_ms",
        "requests",
    ];
    assert_eq!(
        stdout(&r).lines().next().unwrap(),
        names.join(","),
        "in the order asked, by summary.csv's names"
    );
    for (row, whole) in rows.iter().zip(&summary) {
        for name in names {
            assert_eq!(row[name], whole[name], "{name}: summary.csv's cell");
        }
    }
    // The same columns as a table: labelled under their service.
    let r = run(
        &model("deadline-chain.json"),
        &out,
        &["--quiet", "--columns", chosen],
    );
    assert_ok(&r);
    let table = stdout(&r);
    for label in [
        "gateway",
        "cancelled",
        "calls/req",
        "wasted",
        "p999 ms",
        "requests",
    ] {
        assert!(table.contains(label), "{label:?} not in\n{table}");
    }
    assert!(
        !table.contains("success"),
        "only the columns asked:\n{table}"
    );

    // An unknown column: exit 2 before anything runs, listing the others.
    let fresh = dir.path().join("fresh");
    let r = run(
        &model("deadline-chain.json"),
        &fresh,
        &["--columns", "variant,gateway.wastd"],
    );
    assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
    let err = stderr(&r);
    assert!(err.contains("unknown column \"gateway.wastd\""), "{err}");
    for listed in [
        "success_rate",
        "latency_p99_ms",
        "(gateway, A, B)",
        "S.calls_per_request",
        "S.wasted",
        "S.cancelled",
        "verdict",
    ] {
        assert!(err.contains(listed), "{listed:?} not listed: {err}");
    }
    assert!(!fresh.exists(), "nothing ran");
    assert!(r.stdout.is_empty());
    // A column twice, an empty name, an unknown format: refused too.
    for bad in [
        &["--columns", "p99,latency_p99_ms"][..],
        &["--columns", "variant,,p99"][..],
        &["--format", "yaml"][..],
    ] {
        let r = run(&model("deadline-chain.json"), &fresh, bad);
        assert_eq!(r.status.code(), Some(2), "{bad:?}: {}", stderr(&r));
        assert!(!fresh.exists(), "{bad:?}: nothing ran");
    }
}

#[test]
fn csv_is_the_data_alone_with_summary_jsons_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // Not --quiet: progress goes to stderr, stdout holds the CSV alone.
    let r = run(&model("checkout-incident.json"), &out, &["--format", "csv"]);
    assert_ok(&r);
    assert!(stderr(&r).contains("running 5 variants"), "{}", stderr(&r));
    assert!(stderr(&r).contains("wrote "), "{}", stderr(&r));
    let text = stdout(&r);
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        header,
        [
            "variant",
            "complete",
            "success_rate",
            "latency_p50_ms",
            "latency_p99_ms",
            "outcome",
            "recovery_s",
            "recovered_by",
            "peak_offered_rps",
            "db.wasted",
            "db.calls_per_request"
        ]
    );
    let records: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    let json = summary(&out);
    let variants = json["variants"].as_array().unwrap();
    assert_eq!(records.len(), variants.len());
    let number = |cell: &str| -> Option<f64> { (!cell.is_empty()).then(|| cell.parse().unwrap()) };
    for (rec, v) in records.iter().zip(variants) {
        let db = &v["services"][3];
        assert_eq!(db["name"], "db");
        assert_eq!(&rec[0], v["variant"].as_str().unwrap());
        assert_eq!(&rec[1], "true");
        assert_eq!(number(&rec[2]), v["success_rate"].as_f64());
        assert_eq!(number(&rec[3]), v["latency_ms"]["p50"].as_f64());
        assert_eq!(number(&rec[4]), v["latency_ms"]["p99"].as_f64());
        assert_eq!(&rec[5], v["verdict"]["outcome"].as_str().unwrap());
        assert_eq!(number(&rec[6]), v["verdict"]["recovery_s"].as_f64());
        assert_eq!(&rec[7], v["verdict"]["recovered_by"].as_str().unwrap_or(""));
        assert_eq!(number(&rec[8]), v["peak_offered_rps"].as_f64());
        assert_eq!(number(&rec[9]), db["wasted"].as_f64());
        assert_eq!(number(&rec[10]), db["calls_per_request"].as_f64());
    }
}

#[test]
fn csv_quotes_what_needs_quoting() {
    let dir = tempfile::tempdir().unwrap();
    let doc = json!({
        "name": "quoted",
        "workloads": [{"name": "u", "target": "api", "requests": 200,
                       "arrival": {"kind": "poisson", "rate_per_s": 100}}],
        "services": [{"name": "api", "workers": 4,
                      "steps": [{"work": {"kind": "constant", "ms": 1}}]}],
        "variants": [{"name": "a, \"b\""}, {"name": "plain"}]
    });
    let model = write_json(&dir.path().join("quoted.json"), doc);
    let out = dir.path().join("out");
    let r = run(&model, &out, &["--quiet", "--format", "csv"]);
    assert_ok(&r);
    let text = stdout(&r);
    assert!(
        text.contains("\"a, \"\"b\"\"\""),
        "RFC 4180 quoting:\n{text}"
    );
    let rows = csv_rows(&text);
    assert_eq!(rows[0]["variant"], "a, \"b\"");
    assert_eq!(rows[1]["variant"], "plain");
    // Markdown escapes the pipe of a cell, no more needed here; json the quotes.
    let r = run(&model, &out, &["--quiet", "--format", "json"]);
    assert_ok(&r);
    let parsed: Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(parsed[0]["variant"], "a, \"b\"");
}

#[test]
fn json_is_an_array_of_numbers_and_nulls_with_summary_jsons_values() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let r = run(
        &model("checkout-incident.json"),
        &out,
        &[
            "--format",
            "json",
            "--columns",
            "variant,succeeded,requests,success,p50,p99,max,verdict,focus.wasted,order.cancelled",
        ],
    );
    assert_ok(&r);
    // The whole of stdout is one JSON document.
    let parsed: Value = serde_json::from_slice(&r.stdout).expect("stdout is JSON");
    let rows = parsed.as_array().expect("an array");
    let json = summary(&out);
    let variants = json["variants"].as_array().unwrap();
    assert_eq!(rows.len(), variants.len());
    let mut nulls = 0;
    for (row, v) in rows.iter().zip(variants) {
        let keys: Vec<&str> = row
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        assert_eq!(
            keys,
            [
                "variant",
                "succeeded",
                "requests",
                "success_rate",
                "latency_p50_ms",
                "latency_p99_ms",
                "latency_max_ms",
                "outcome",
                "recovery_s",
                "recovered_by",
                "db.wasted",
                "order.cancelled"
            ],
            "in the order asked, the verdict as its parts"
        );
        assert_eq!(row["variant"], v["variant"]);
        assert!(row["succeeded"].is_u64());
        assert_eq!(row["succeeded"], v["succeeded"]);
        assert_eq!(row["requests"], v["requests"]);
        assert_eq!(row["success_rate"].as_f64(), v["success_rate"].as_f64());
        for (key, q) in [
            ("latency_p50_ms", "p50"),
            ("latency_p99_ms", "p99"),
            ("latency_max_ms", "max"),
        ] {
            assert!(row[key].is_number(), "{key}: {row}");
            assert_eq!(row[key].as_f64(), v["latency_ms"][q].as_f64(), "{key}");
        }
        assert_eq!(row["outcome"], v["verdict"]["outcome"]);
        assert_eq!(
            row["recovery_s"].as_f64(),
            v["verdict"]["recovery_s"].as_f64()
        );
        assert_eq!(row["recovered_by"], v["verdict"]["recovered_by"]);
        nulls += usize::from(row["recovery_s"].is_null());
        assert_eq!(row["db.wasted"], v["services"][3]["wasted"]);
        assert_eq!(row["order.cancelled"], v["services"][1]["cancelled"]);
    }
    assert!(nulls > 0, "a metastable variant has no recovery time: null");
}

#[test]
fn markdown_is_a_github_table() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let r = run(
        &model("deadline-chain.json"),
        &out,
        &["--format", "markdown"],
    );
    assert_ok(&r);
    assert!(stderr(&r).contains("wrote "), "the files written on stderr");
    let text = stdout(&r);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.len(),
        2 + 4,
        "labels, alignments, 4 variants:\n{text}"
    );
    let cells = |line: &str| -> Vec<String> {
        assert!(line.starts_with("| ") && line.ends_with(" |"), "{line}");
        line[2..line.len() - 2]
            .split(" | ")
            .map(String::from)
            .collect()
    };
    let labels = cells(lines[0]);
    assert_eq!(labels[0], "variant");
    assert!(labels.contains(&"gateway wasted".to_string()), "{labels:?}");
    let align = cells(lines[1]);
    assert_eq!(align[0], ":---");
    assert!(align[1..].iter().all(|a| a == "---:"), "{align:?}");
    for line in &lines[2..] {
        assert_eq!(cells(line).len(), labels.len(), "{line}");
    }
    assert!(
        lines[2].starts_with("| no-timeouts | 100.0% |"),
        "{}",
        lines[2]
    );
}

#[test]
fn a_data_format_takes_one_model() {
    let r = stormsim(
        &[
            "run",
            model("deadline-chain.json").to_str().unwrap(),
            model("retry-budgets.json").to_str().unwrap(),
            "--format",
            "json",
        ],
        &[],
    );
    assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
    assert!(stderr(&r).contains("--format json takes one model"));
    assert!(r.stdout.is_empty());
}

/// One server fed 1,000 requests per second; the `slow` variant's 3 ms of
/// work cannot keep up, and `limits.max_in_flight` stops it (as in
/// verdict_outputs.rs), here with a name long enough to be cut.
fn limited_model() -> Value {
    json!({
        "name": "limited",
        "workloads": [{"name": "u", "target": "api", "requests": 20000,
                       "arrival": {"kind": "poisson", "rate_per_s": 1000}}],
        "services": [{"name": "api", "workers": 1,
                      "steps": [{"work": {"kind": "exponential", "mean_ms": 0.5}}]}],
        "limits": {"max_in_flight": 500},
        "variants": [
            {"name": "fast"},
            {"name": "slow-with-a-name-far-too-long-for-a-terminal-table-of-many-columns-so-cut",
             "set": {"services[api].steps[0].work.mean_ms": 3}}
        ]
    })
}

#[test]
fn a_partial_run_is_marked_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let model = write_json(&dir.path().join("limited.json"), limited_model());
    let out = dir.path().join("out");
    let r = run(&model, &out, &["--accept-partial"]);
    assert_ok(&r);
    let text = stdout(&r);
    let table = text.split_once("\n\n").unwrap().0;
    assert!(widest(table) <= MAX_WIDTH, "{table}");
    let slow = table
        .lines()
        .find(|l| l.starts_with("slow-"))
        .expect("a row for slow");
    assert!(slow.contains("… [PARTIAL]"), "cut, the mark kept: {slow}");
    let fast = table.lines().find(|l| l.starts_with("fast")).unwrap();
    assert!(!fast.contains("PARTIAL"), "{fast}");
    assert!(
        table.contains("[PARTIAL] slow-with-a-name"),
        "a note names it whole:\n{table}"
    );
    assert!(table.contains("limits.max_in_flight"), "{table}");

    let r = run(&model, &out, &["--accept-partial", "--format", "markdown"]);
    assert_ok(&r);
    let text = stdout(&r);
    assert!(
        text.contains("-so-cut [PARTIAL] |"),
        "whole, marked:\n{text}"
    );

    let r = run(&model, &out, &["--accept-partial", "--format", "csv"]);
    assert_ok(&r);
    let rows = csv_rows(&stdout(&r));
    assert_eq!(rows[0]["complete"], "true");
    assert_eq!(rows[1]["complete"], "false");
    assert!(rows[1]["variant"].ends_with("-so-cut"), "the name alone");

    let r = run(
        &model,
        &out,
        &[
            "--accept-partial",
            "--format",
            "json",
            "--columns",
            "variant,complete,stopped_by",
        ],
    );
    assert_ok(&r);
    let parsed: Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(parsed[0]["complete"], true);
    assert_eq!(parsed[0]["stopped_by"], Value::Null);
    assert_eq!(parsed[1]["complete"], false);
    assert_eq!(parsed[1]["stopped_by"], "max_in_flight");
}

#[test]
fn the_table_is_the_same_on_every_run() {
    let dir = tempfile::tempdir().unwrap();
    let tables: Vec<String> = ["1", "2"]
        .iter()
        .map(|threads| {
            let out = dir.path().join(threads);
            let r = common::stormsim(
                &[
                    "run",
                    model("retry-budgets.json").to_str().unwrap(),
                    "--out",
                    out.to_str().unwrap(),
                    "--quiet",
                    "--format",
                    "table",
                ],
                &[("RAYON_NUM_THREADS", threads)],
            );
            assert_ok(&r);
            stdout(&r)
        })
        .collect();
    assert_eq!(tables[0], tables[1]);
}
