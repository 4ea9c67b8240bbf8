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
    // deadline-chain: comparison and load charts; retry-budgets: a timeline too.
    for (model, charts) in [
        (
            "deadline-chain",
            &["comparison.svg", "index.html", "load.svg"][..],
        ),
        (
            "retry-budgets",
            &["comparison.svg", "index.html", "load.svg", "timeline.svg"][..],
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let file = root().join("models").join(format!("{model}.json"));
        stormsim(&[
            "run",
            file.to_str().unwrap(),
            "--out",
            dir.path().to_str().unwrap(),
            "--quiet",
        ]);
        assert_eq!(assert_redrawn_identically(dir.path()), charts, "{model}");
    }
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
    stormsim(&[
        "sweep",
        sweep.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(assert_redrawn_identically(&out), ["sweep.svg"]);
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
