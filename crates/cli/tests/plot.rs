//! `stormsim plot DIR` redraws, from a folder's files alone, the very bytes
//! that `stormsim run` and `stormsim sweep` wrote.

mod common;

use common::root;
use std::path::Path;
use std::process::Command;

/// Runs the binary from the repository's root; panics with its stderr unless
/// it succeeds.
fn stormsim(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_stormsim"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("the binary runs");
    assert!(
        out.status.success(),
        "stormsim {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `stormsim run` or `stormsim sweep` of `input` into `out`, quietly.
fn write_quietly(command: &str, input: &Path, out: &Path) {
    stormsim(&[
        command,
        input.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
}

/// The drawn files of `dir` (charts and index.html) with their bytes, sorted
/// by name.
fn drawn(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "svg" || x == "html"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    files.sort();
    files
}

/// Deletes the drawn files of `dir`, runs `stormsim plot dir`, and checks
/// that the same files come back with the same bytes.
fn assert_redrawn_identically(dir: &Path) -> Vec<String> {
    let before = drawn(dir);
    assert!(!before.is_empty(), "nothing was drawn in {}", dir.display());
    for (name, _) in &before {
        std::fs::remove_file(dir.join(name)).unwrap();
    }
    stormsim(&["plot", dir.to_str().unwrap()]);
    let after = drawn(dir);
    let names: Vec<String> = before.iter().map(|(n, _)| n.clone()).collect();
    assert_eq!(
        names,
        after.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>()
    );
    for ((name, a), (_, b)) in before.iter().zip(&after) {
        assert!(a == b, "{name} redrawn differently");
    }
    names
}

#[test]
fn plot_redraws_a_runs_charts_byte_identical() {
    // deadline-chain: comparison and load charts, and S3's zombies and wasted
    // work; retry-budgets: a timeline and wasted work, but no zombie alive at
    // any bucket's start; parallel-page: the branches chart besides (its
    // numbers from summary.json's edges); queue-deadlines: all five, with
    // expired work in wasted.svg; cpu-saturation: its focus service's busy
    // cores (its timeseries.csv's `S.cores_busy`).
    for (model, charts) in [
        (
            "deadline-chain",
            &[
                "comparison.svg",
                "index.html",
                "load.svg",
                "wasted.svg",
                "zombies.svg",
            ][..],
        ),
        (
            "retry-budgets",
            &[
                "comparison.svg",
                "index.html",
                "load.svg",
                "timeline.svg",
                "wasted.svg",
            ][..],
        ),
        (
            "parallel-page",
            &[
                "branches.svg",
                "comparison.svg",
                "index.html",
                "load.svg",
                "timeline.svg",
                "wasted.svg",
                "zombies.svg",
            ][..],
        ),
        (
            "queue-deadlines",
            &[
                "comparison.svg",
                "index.html",
                "load.svg",
                "timeline.svg",
                "wasted.svg",
                "zombies.svg",
            ][..],
        ),
        (
            "cpu-saturation",
            &[
                "comparison.svg",
                "cores.svg",
                "index.html",
                "load.svg",
                "timeline.svg",
                "wasted.svg",
                "zombies.svg",
            ][..],
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let file = root().join("models").join(format!("{model}.json"));
        write_quietly("run", &file, dir.path());
        assert_eq!(assert_redrawn_identically(dir.path()), charts, "{model}");
    }
}

/// A run folder from before S3's zombie accounting has no `zombies` column in
/// timeseries.csv and no `expired` counts in summary.json: `stormsim plot`
/// still redraws it, without a zombies chart and with the waste it has.
#[test]
fn plot_redraws_a_folder_from_before_zombie_accounting() {
    let dir = tempfile::tempdir().unwrap();
    let file = root().join("models/deadline-chain.json");
    let out = dir.path().to_str().unwrap();
    stormsim(&["run", file.to_str().unwrap(), "--out", out, "--quiet"]);

    let series = dir.path().join("timeseries.csv");
    let mut reader = csv::Reader::from_path(&series).unwrap();
    let header = reader.headers().unwrap().clone();
    let zombies = header.iter().position(|c| c == "zombies").unwrap();
    let mut writer = csv::Writer::from_writer(Vec::new());
    let without = |r: &csv::StringRecord| -> Vec<String> {
        (0..r.len())
            .filter(|&i| i != zombies)
            .map(|i| r[i].to_string())
            .collect()
    };
    writer.write_record(without(&header)).unwrap();
    for record in reader.records() {
        writer.write_record(without(&record.unwrap())).unwrap();
    }
    std::fs::write(&series, writer.into_inner().unwrap()).unwrap();

    let summary = dir.path().join("summary.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    for v in json["variants"].as_array_mut().unwrap() {
        for s in v["services"].as_array_mut().unwrap() {
            s.as_object_mut().unwrap().remove("expired");
        }
        // Nor the edges and the latency of succeeded requests the branches
        // chart reads.
        let v = v.as_object_mut().unwrap();
        v.remove("edges");
        v.remove("ok_latency_ms");
    }
    std::fs::write(&summary, json.to_string()).unwrap();

    for (name, _) in drawn(dir.path()) {
        std::fs::remove_file(dir.path().join(name)).unwrap();
    }
    stormsim(&["plot", out]);
    let names: Vec<String> = drawn(dir.path()).into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        ["comparison.svg", "index.html", "load.svg", "wasted.svg"]
    );
}

#[test]
fn plot_redraws_a_sweeps_chart_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = dir.path().join("s.json");
    let doc = serde_json::json!({
        "name": "timeouts",
        "model": root().join("models/deadline-chain.json"),
        "variant": "per-tier-timeouts",
        "replications": 2,
        "axes": [{"path": "services[gateway].steps[A].timeout_ms",
                  "values": [10, 250, 500]}]
    });
    std::fs::write(&sweep, doc.to_string()).unwrap();
    let out = dir.path().join("out");
    write_quietly("sweep", &sweep, &out);
    assert_eq!(
        assert_redrawn_identically(&out),
        ["index.html", "sweep.svg"]
    );
}

#[test]
fn plot_refuses_a_folder_without_results() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_stormsim"))
        .args(["plot", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("neither a run"), "{stderr}");
}

/// A folder an older version wrote has no tidy files: its redrawn page links
/// only to the tables it has (a link to a missing file is a broken page).
#[test]
fn plot_on_a_folder_without_tidy_files_links_only_its_tables() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("chain");
    let out_str = out.to_str().unwrap();
    stormsim(&[
        "run",
        "models/deadline-chain.json",
        "--out",
        out_str,
        "--quiet",
    ]);
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(page.contains("<a href=\"timeseries.tidy.csv.gz\">tidy</a>"));
    for tidy in ["summary.tidy.csv", "timeseries.tidy.csv.gz"] {
        std::fs::remove_file(out.join(tidy)).unwrap();
    }
    stormsim(&["plot", out_str]);
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(!page.contains(".tidy."), "{page}");
    assert!(page.contains(
        "files: <a href=\"summary.csv\">summary.csv</a>, <a href=\"summary.json\">summary.json</a>, \
         <a href=\"timeseries.csv\">timeseries.csv</a>, <a href=\"latency.csv\">latency.csv</a></p>"
    ));
}

/// A variant whose focus service has no cpu (set to null) keeps its place,
/// and so its colour, in cores.svg, with no line ("no data"); `plot` reads
/// its empty cells as such and redraws the same bytes.
#[test]
fn cores_svg_keeps_a_variant_without_a_cpu_in_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("cpus.json");
    std::fs::write(
        &model,
        r#"{"name": "cpus", "horizon_s": 5,
            "workloads": [{"name": "w", "target": "s", "duration_s": 5,
                           "arrival": {"kind": "poisson", "rate_per_s": 50}}],
            "services": [{"name": "s", "cpu": {"cores": 2},
                          "steps": [{"work": {"kind": "exponential", "mean_ms": 20}}]}],
            "variants": [{"name": "no-cpu", "set": {"services[s].cpu": null}},
                         {"name": "two-cores", "set": {}}]}"#,
    )
    .unwrap();
    let out = dir.path().join("out");
    write_quietly("run", &model, &out);
    let names = assert_redrawn_identically(&out);
    assert!(names.iter().any(|n| n == "cores.svg"), "{names:?}");
    let svg = std::fs::read_to_string(out.join("cores.svg")).unwrap();
    let (first, second) = (svg.find("no-cpu · no data"), svg.find("two-cores · peak"));
    assert!(
        first.is_some() && second.is_some() && first < second,
        "the legend in variant order, the first without a line"
    );
}

/// A page whose recommendations fail while they are slow (5 s to 10 s):
/// `default` answers them with a default (degraded), `no-fallback` fails.
const FALLBACK_MODEL: &str = r#"{"name": "fallback-page", "horizon_s": 20,
    "workloads": [{"name": "users", "target": "page", "duration_s": 20,
                   "arrival": {"kind": "poisson", "rate_per_s": 100}}],
    "services": [{"name": "page", "steps": [{"call": "recs", "timeout_ms": 50}]},
                 {"name": "recs", "workers": 4,
                  "steps": [{"work": {"kind": "exponential", "mean_ms": 5}}]}],
    "timeline": [{"name": "recs slow", "at_s": 5, "role": "trigger_start",
                  "set": {"services[recs].steps[0].work.mean_ms": 500}},
                 {"name": "recs back", "at_s": 10, "role": "trigger_end",
                  "set": {"services[recs].steps[0].work.mean_ms": 5}}],
    "variants": [{"name": "no-fallback", "set": {}},
                 {"name": "default",
                  "set": {"services[page].steps[0].fallback":
                          {"chain": [{"kind": "default"}]}}}]}"#;

/// A run of [`FALLBACK_MODEL`] into `dir/out`, which it returns.
fn run_fallback_model(dir: &Path) -> std::path::PathBuf {
    let model = dir.join("fallbacks.json");
    std::fs::write(&model, FALLBACK_MODEL).unwrap();
    let out = dir.join("out");
    write_quietly("run", &model, &out);
    out
}

/// Degraded answers are drawn apart (comparison.svg's success bars,
/// timeline.svg's goodput), and `plot` reads them back from summary.json's
/// `degraded` and timeseries.csv's `degraded` to the same bytes.
#[test]
fn plot_redraws_degraded_answers_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_fallback_model(dir.path());
    let comparison = std::fs::read_to_string(out.join("comparison.svg")).unwrap();
    assert!(comparison.contains("degraded (fallbacks)"));
    let timeline = std::fs::read_to_string(out.join("timeline.svg")).unwrap();
    assert!(timeline.contains("degraded answers/s (fallbacks)"));
    assert!(timeline.contains("goodput (requests answered in full)"));
    assert_redrawn_identically(&out);
}

/// A run folder from before fallbacks has no `degraded` column in
/// timeseries.csv and no `degraded` counts in summary.json: `stormsim plot`
/// still redraws it, with nothing degraded.
#[test]
fn plot_redraws_a_folder_from_before_fallbacks() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_fallback_model(dir.path());

    let series = out.join("timeseries.csv");
    let mut reader = csv::Reader::from_path(&series).unwrap();
    let header = reader.headers().unwrap().clone();
    let degraded = header.iter().position(|c| c == "degraded").unwrap();
    let mut writer = csv::Writer::from_writer(Vec::new());
    let without = |r: &csv::StringRecord| -> Vec<String> {
        (0..r.len())
            .filter(|&i| i != degraded)
            .map(|i| r[i].to_string())
            .collect()
    };
    writer.write_record(without(&header)).unwrap();
    for record in reader.records() {
        writer.write_record(without(&record.unwrap())).unwrap();
    }
    std::fs::write(&series, writer.into_inner().unwrap()).unwrap();

    let summary = out.join("summary.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    for v in json["variants"].as_array_mut().unwrap() {
        let v = v.as_object_mut().unwrap();
        v.remove("degraded");
        v.remove("answered_full");
    }
    std::fs::write(&summary, json.to_string()).unwrap();

    for (name, _) in drawn(&out) {
        std::fs::remove_file(out.join(name)).unwrap();
    }
    stormsim(&["plot", out.to_str().unwrap()]);
    let comparison = std::fs::read_to_string(out.join("comparison.svg")).unwrap();
    assert!(!comparison.contains("degraded"));
    let timeline = std::fs::read_to_string(out.join("timeline.svg")).unwrap();
    assert!(!timeline.contains("degraded answers"));
    assert!(timeline.contains("goodput (successful requests)"));
}
