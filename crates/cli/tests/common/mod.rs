//! Helpers shared by the binary's integration tests (each test file is its own
//! crate and uses a part of them).
#![allow(dead_code)]

use serde_json::Value;
use std::collections::BTreeMap;
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
    stormsim_in(&root(), args, env)
}

/// Runs the binary from `dir` with `args` and extra `env`.
pub fn stormsim_in<S: AsRef<std::ffi::OsStr>>(
    dir: &Path,
    args: &[S],
    env: &[(&str, &str)],
) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_stormsim"));
    cmd.args(args).current_dir(dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("the binary runs")
}

/// A file's text; panics with its path.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A file's bytes (a `.gz` output is not text); panics with its path.
pub fn read_bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Writes a JSON document (a sweep or model file) and returns its path.
pub fn write_json(path: &Path, doc: Value) -> PathBuf {
    std::fs::write(path, doc.to_string()).expect("the temporary folder is writable");
    path.to_path_buf()
}

/// A CSV's rows as maps from column to cell.
pub fn csv_rows(text: &str) -> Vec<BTreeMap<String, String>> {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records()
        .map(|rec| {
            header
                .iter()
                .cloned()
                .zip(rec.unwrap().iter().map(String::from))
                .collect()
        })
        .collect()
}

/// Every file under `dir`, by its path relative to `dir`, with its bytes.
pub fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                walk(base, &path, out);
            } else {
                let bytes = std::fs::read(&path).expect("an output file");
                out.insert(path.strip_prefix(base).unwrap().to_path_buf(), bytes);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Asserts that two folders' files (as [`files`] reads them) are the same,
/// name for name and byte for byte; `what` names the pair in the messages.
pub fn assert_same_files(
    a: &BTreeMap<PathBuf, Vec<u8>>,
    b: &BTreeMap<PathBuf, Vec<u8>>,
    what: &str,
) {
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        b.keys().collect::<Vec<_>>(),
        "{what}: not the same files"
    );
    for (file, bytes) in a {
        assert!(
            bytes == &b[file],
            "{what}: {} differs: {}",
            file.display(),
            first_difference(bytes, &b[file])
        );
    }
}

/// Where two texts first differ, for a failure message.
pub fn first_difference(a: &[u8], b: &[u8]) -> String {
    let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
    match a
        .lines()
        .zip(b.lines())
        .enumerate()
        .find(|(_, (x, y))| x != y)
    {
        Some((i, (x, y))) => format!("line {}:\n  {x:.300}\n  {y:.300}", i + 1),
        None => format!("one is longer ({} and {} bytes)", a.len(), b.len()),
    }
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

/// `f` of each item, in the items' order, computed on as many threads as
/// the machine has cores: the tests that run every bundled model spend
/// their time waiting for one binary at a time otherwise. A panic in `f`
/// is printed where it happens and fails the caller once every item is
/// done.
pub fn on_each_in_parallel<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let next = AtomicUsize::new(0);
    let mut results: Vec<(usize, R)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers.min(items.len()))
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break done };
                        done.push((i, f(item)));
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a worker panicked (its message is above)"))
            .collect()
    });
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}
