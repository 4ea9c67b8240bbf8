//! Determinism: every bundled model, run twice, writes the same bytes,
//! whatever the thread count: each model runs once on one thread and once on
//! two, and every output file is compared byte for byte (summary.json holds
//! no wall-clock figure).
//!
//! Sweeps are covered in cli.rs: `a_sweep_is_deterministic_whatever_the_thread_count`
//! (`--jobs 1` against `--jobs 2`) and `merged_shards_equal_the_unsharded_sweep`.

mod common;

use common::{assert_same_files, files, on_each_in_parallel, root};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Models too slow to run whole in a debug build, and how they are cut:
/// catalog-incident takes 4 minutes whole (debug build, two cores), 4 s up to
/// 120 s of virtual time, which still includes its bad deploy at 60 s.
const CUT: &[(&str, &[&str])] = &[("catalog-incident.json", &["--set", "horizon_s=120"])];

/// The bundled models: `models/*.json` and `models/validation/*.json`, without
/// sweep files; not `models/bench/` (benchmarks, minutes each).
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

fn cut_of(model: &Path) -> Option<&'static [&'static str]> {
    let name = model.file_name()?.to_str()?;
    CUT.iter().find(|(m, _)| *m == name).map(|(_, args)| *args)
}

/// Runs `model` into `out` on `threads` threads.
fn run(model: &Path, out: &Path, threads: &str) {
    let output = Command::new(env!("CARGO_BIN_EXE_stormsim"))
        .arg("run")
        .arg(model)
        .arg("--out")
        .arg(out)
        .arg("--quiet")
        .args(cut_of(model).unwrap_or_default())
        .current_dir(root())
        .env("RAYON_NUM_THREADS", threads)
        .output()
        .expect("the binary runs");
    assert!(
        output.status.success(),
        "{} failed: {}",
        model.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Runs `model` on one thread and on two, and compares every output file.
fn assert_deterministic(model: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let (one, two) = (
        dir.path().join("one-thread"),
        dir.path().join("two-threads"),
    );
    run(model, &one, "1");
    run(model, &two, "2");
    let (a, b) = (files(&one), files(&two));
    let name = model.strip_prefix(root()).unwrap_or(model).display();
    assert!(
        a.contains_key(Path::new("summary.json")),
        "{name}: no summary.json in {:?}",
        a.keys()
    );
    assert_same_files(&a, &b, &format!("{name} on one thread and on two"));
}

#[test]
fn every_bundled_model_writes_the_same_bytes_on_one_thread_and_on_two() {
    let models: Vec<PathBuf> = bundled_models()
        .into_iter()
        .filter(|m| cut_of(m).is_none())
        .collect();
    assert!(models.len() >= 10, "too few models found: {models:?}");
    on_each_in_parallel(&models, |model| assert_deterministic(model));
}

/// The cut models, in a test of their own so that the harness runs it beside
/// the others.
#[test]
fn the_slow_bundled_models_cut_short_write_the_same_bytes_twice() {
    let models = bundled_models();
    for (name, _) in CUT {
        let model = models
            .iter()
            .find(|m| m.file_name().unwrap() == *name)
            .unwrap_or_else(|| panic!("models/{name} is gone: update CUT"));
        assert_deterministic(model);
    }
}
