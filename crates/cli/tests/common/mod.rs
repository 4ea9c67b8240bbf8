//! Helpers shared by the binary's integration tests (each test file is its own
//! crate and uses a part of them).
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository's root, where the binary runs.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A bundled model file.
pub fn model(name: &str) -> PathBuf {
    root().join("models").join(name)
}

/// Runs the binary from the repository's root with `args` and extra `env`.
pub fn stormsim(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_stormsim"));
    cmd.args(args).current_dir(root());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("the binary runs")
}

/// A file's text; panics with its path.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Writes a JSON document (a sweep or model file) and returns its path.
pub fn write_json(path: &Path, doc: Value) -> PathBuf {
    std::fs::write(path, doc.to_string()).expect("the temporary folder is writable");
    path.to_path_buf()
}

/// A summary.json's bytes without its wall-clock fields (named `wall_...`),
/// the only part of a run's outputs that is not a function of (model, seed).
pub fn without_wall_clock(bytes: &[u8]) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(map) => {
                map.retain(|k, _| !k.starts_with("wall_"));
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v: Value = serde_json::from_slice(bytes).expect("summary.json is JSON");
    strip(&mut v);
    v
}

/// Runs `stormsim <command> <file> --out <out> --quiet <extra>...`.
pub fn stormsim_into(command: &str, file: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        command,
        file.to_str().expect("a UTF-8 path"),
        "--out",
        out.to_str().expect("a UTF-8 path"),
        "--quiet",
    ];
    args.extend_from_slice(extra);
    stormsim(&args, &[])
}

/// Asserts that the binary succeeded, showing its stderr when it did not.
pub fn assert_ok(run: &Output) {
    assert!(
        run.status.success(),
        "stormsim failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
}
