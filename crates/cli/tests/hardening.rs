//! Issue 17's reproducers for output folders and sweeps, one test each (named
//! after its reproducer): nothing written outside the output folder, nothing
//! of the user's destroyed, no rows of two sweeps or two models mixed, a
//! corrupt file named instead of a panic, sizes refused before they are
//! allocated, and runs cut short by a limit not passed off as complete.

mod common;

use common::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Output;

/// A model of a few milliseconds' simulation: two services, two variants.
fn small_model(name: &str) -> Value {
    json!({
        "name": name,
        "workloads": [{"name": "users", "target": "api",
                       "arrival": {"kind": "poisson", "rate_per_s": 50},
                       "requests": 60, "timeout_ms": 1000}],
        "services": [
            {"name": "api", "workers": 8, "steps": [
                {"work": {"kind": "lognormal", "median_ms": 20, "p99_ms": 120}},
                {"call": "db", "timeout_ms": 100, "retry": {"max_attempts": 3}}]},
            {"name": "db", "workers": 4, "steps": [{"work": {"kind": "exponential", "mean_ms": 5}}]}
        ],
        "variants": [{"name": "as-is"}, {"name": "tight", "set": {"services[api].steps[db].timeout_ms": 30}}]
    })
}

/// A folder with `model.json` (the small model) and `s.sweep.json`, a sweep
/// of it over `axes` with two replications.
struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new(axes: Value) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        write_json(&dir.path().join("model.json"), small_model("small"));
        let f = Fixture { dir };
        f.write_sweep("s.sweep.json", axes);
        f
    }

    fn write_sweep(&self, file: &str, axes: Value) -> PathBuf {
        write_json(
            &self.path(file),
            json!({"name": "s", "model": "model.json", "variant": "as-is",
                   "replications": 2, "axes": axes}),
        )
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn sweep(&self) -> PathBuf {
        self.path("s.sweep.json")
    }

    /// `stormsim run model.json --out <dir>/<out> --quiet <extra>`.
    fn run_into(&self, out: &str, extra: &[&str]) -> Output {
        stormsim_into("run", &self.path("model.json"), &self.path(out), extra)
    }

    /// `stormsim sweep s.sweep.json --out <dir>/<out> --quiet <extra>`.
    fn sweep_into(&self, out: &str, extra: &[&str]) -> Output {
        stormsim_into("sweep", &self.sweep(), &self.path(out), extra)
    }
}

fn axes() -> Value {
    json!([{"path": "services[db].workers", "name": "workers", "values": [2, 4]},
           {"path": "workloads[users].arrival.rate_per_s", "name": "rate", "values": [50, 100]}])
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts exit code 2, no panic, and a message containing every one of `needles`.
fn assert_refused(out: &Output, needles: &[&str]) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    for needle in needles {
        assert!(err.contains(needle), "{needle:?} not in: {err}");
    }
}

fn args<'a>(list: &[&'a str]) -> Vec<&'a str> {
    list.to_vec()
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn sweep_name_traversal() {
    let f = Fixture::new(axes());
    let target = f.path("pwned");
    for name in [s(&target), "..", ".hidden", "a/b"] {
        let file = write_json(
            &f.path("evil.sweep.json"),
            json!({"name": name, "model": "model.json",
                   "axes": [{"path": "services[api].workers", "values": [1, 2]}],
                   "search": {"path": "services[api].workers", "from": 1, "to": 8,
                              "metric": "success_rate", "threshold": 0.5, "tolerance": 1, "integer": true}}),
        );
        for command in [
            &["check"][..],
            &["sweep", "--quiet"],
            &["search", "--quiet"],
        ] {
            let mut a = command.to_vec();
            a.insert(1, s(&file));
            let out = stormsim(&a, &[]);
            assert_refused(
                &out,
                &[
                    "1 problem found",
                    "name: expected a name usable as a folder",
                ],
            );
        }
        let out = stormsim(&["merge", s(&file), s(&f.path("nothing"))], &[]);
        assert_refused(&out, &["name: expected a name usable as a folder"]);
    }
    assert!(!target.exists(), "nothing written at the sweep's name");
}

#[test]
fn symlink_partial() {
    let f = Fixture::new(axes());
    let victim = f.path("victim.txt");
    std::fs::write(&victim, "VICTIM CONTENT").unwrap();
    let out = f.path("out");
    std::fs::create_dir(&out).unwrap();
    std::os::unix::fs::symlink(&victim, out.join("results.csv.partial")).unwrap();
    // A link stormsim did not make is not replaced, even with --force ...
    assert_refused(&f.sweep_into("out", &["--force"]), &["results.csv.partial"]);
    assert_eq!(read(&victim), "VICTIM CONTENT");
    // ... and one at a name the manifest claims (an interrupted sweep's
    // partial file, replaced by a link) is replaced, never written through.
    std::fs::remove_file(out.join("results.csv.partial")).unwrap();
    assert_ok(&f.sweep_into("out", &["--max-runs", "1", "--force"]));
    std::fs::remove_file(out.join("results.csv.partial")).unwrap();
    std::os::unix::fs::symlink(&victim, out.join("results.csv.partial")).unwrap();
    assert_ok(&f.sweep_into("out", &["--force"]));
    assert_eq!(read(&victim), "VICTIM CONTENT");
    let results = out.join("results.csv");
    assert!(results.symlink_metadata().unwrap().is_file());
    assert_eq!(read(&results).lines().count(), 1 + 8);
}

#[test]
fn sweep_clobbers() {
    let f = Fixture::new(axes());
    let mine = f.path("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("results.csv"), "precious").unwrap();
    std::fs::write(mine.join("aggregate.csv"), "precious").unwrap();
    assert_refused(&f.sweep_into("mine", &[]), &["holds no stormsim outputs"]);
    assert_refused(&f.sweep_into("mine", &["--force"]), &["results.csv"]);
    assert_eq!(read(&mine.join("results.csv")), "precious");
    assert_eq!(read(&mine.join("aggregate.csv")), "precious");

    // run --force keeps every file stormsim did not write: a chart of the
    // user's at a chart's name is refused, anything else is carried over.
    let model = f.path("model.json");
    let mine2 = f.path("mine2");
    std::fs::create_dir(&mine2).unwrap();
    std::fs::write(mine2.join("timeline.svg"), "my chart").unwrap();
    std::fs::write(mine2.join("notes.txt"), "my notes").unwrap();
    assert_refused(
        &stormsim_into("run", &model, &mine2, &["--force"]),
        &["timeline.svg"],
    );
    std::fs::remove_file(mine2.join("timeline.svg")).unwrap();
    assert_ok(&stormsim_into("run", &model, &mine2, &["--force"]));
    assert_eq!(read(&mine2.join("notes.txt")), "my notes");
    // Another model's outputs there, with --force: its files go (the ones
    // this run does not write too), the user's stay.
    let other = write_json(&f.path("other.json"), small_model("other"));
    assert_ok(&stormsim_into(
        "run",
        &other,
        &mine2,
        &["--attempts", "--force"],
    ));
    assert!(mine2.join("attempts.csv").exists());
    assert_ok(&stormsim_into("run", &model, &mine2, &["--force"]));
    assert!(!mine2.join("attempts.csv").exists());
    assert_eq!(read(&mine2.join("notes.txt")), "my notes");
    assert!(read(&mine2.join("summary.json")).contains("\"model\": \"small\""));
}

#[test]
fn run_same_name() {
    let f = Fixture::new(axes());
    let a = write_json(&f.path("a.json"), small_model("hardening-same-name"));
    let mut changed = small_model("hardening-same-name");
    changed["services"][0]["workers"] = json!(2);
    let b = write_json(&f.path("b.json"), changed);
    let out = stormsim(&["run", s(&a), s(&b), "--quiet"], &[]);
    assert_refused(
        &out,
        &["a.json", "b.json", "\"hardening-same-name\"", "--out"],
    );
    assert!(!root().join("outputs/hardening-same-name").exists());
}

#[test]
fn stale_attempts() {
    let f = Fixture::new(axes());
    let out = f.path("out");
    assert_ok(&f.run_into("out", &["--attempts", "--seed", "2"]));
    assert!(out.join("attempts.csv").exists());
    assert_ok(&f.run_into("out", &["--seed", "1"]));
    assert!(
        !out.join("attempts.csv").exists(),
        "an older run's attempts.csv beside new summaries"
    );
}

/// The files of a folder, sorted: each name with its length and a hash of
/// its bytes (a failure then shows which file differs, not every byte).
fn folder_files(dir: &Path) -> Vec<(String, usize, u64)> {
    use std::hash::{Hash, Hasher};
    let mut files: Vec<(String, usize, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| {
            let bytes = std::fs::read(e.path()).unwrap();
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            bytes.hash(&mut hasher);
            (
                e.file_name().to_string_lossy().into_owned(),
                bytes.len(),
                hasher.finish(),
            )
        })
        .collect();
    files.sort();
    files
}

fn leftovers(parent: &Path) -> Vec<String> {
    std::fs::read_dir(parent)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".stormsim-tmp-"))
        .collect()
}

#[test]
fn run_kill_mixed() {
    let f = Fixture::new(axes());
    let model = f.path("model.json");
    let out = f.path("out");
    assert_ok(&f.run_into("out", &["--attempts", "--seed", "2"]));
    let before = folder_files(&out);
    // Killed (abort, as kill -9) once every output is written, before they
    // are in place: the folder is the last run's, whole.
    let killed = stormsim(
        &["run", s(&model), "--out", s(&out), "--quiet", "--seed", "1"],
        &[("STORMSIM_TEST_DIE_BEFORE_SWAP", "1")],
    );
    assert!(!killed.status.success());
    assert_eq!(folder_files(&out), before, "the folder shows the last run");
    assert_eq!(leftovers(f.dir.path()).len(), 1, "what the kill left");
    // The next run removes it, and its outputs replace the last run's whole.
    assert_ok(&stormsim_into("run", &model, &out, &["--seed", "1"]));
    assert_eq!(leftovers(f.dir.path()), Vec::<String>::new());
    assert!(read(&out.join("summary.json")).contains("\"seed\": 1"));
    assert!(!out.join("attempts.csv").exists());
}

#[test]
fn resume_model_changed() {
    let f = Fixture::new(axes());
    assert_ok(&f.sweep_into("out", &["--max-runs", "3"]));
    let mut model = small_model("small");
    model["services"][1]["steps"][0]["work"]["mean_ms"] = json!(50);
    write_json(&f.path("model.json"), model);
    let out = f.sweep_into("out", &["--resume"]);
    assert_refused(&out, &["the model (model.json)", "--force"]);
    // Re-indenting the model is no change.
    write_json(&f.path("model.json"), small_model("small"));
    let pretty = serde_json::to_string_pretty(&small_model("small")).unwrap();
    std::fs::write(f.path("model.json"), pretty).unwrap();
    assert_ok(&f.sweep_into("out", &["--resume"]));
}

#[test]
fn resume_spec_change() {
    let f = Fixture::new(axes());
    assert_ok(&f.sweep_into("out", &["--max-runs", "3"]));
    let mut more = axes();
    more.as_array_mut()
        .unwrap()
        .push(json!({"path": "services[api].workers", "values": [4, 8]}));
    f.write_sweep("s.sweep.json", more);
    let out = f.sweep_into("out", &["--resume"]);
    assert_refused(&out, &["the sweep's `axes`", "--force"]);
    assert!(
        f.path("out/results.csv.partial").exists(),
        "nothing discarded"
    );
}

/// A table begun by another version of stormsim, whose summary has other
/// columns (this one added `S.utilisation`), was continued with this
/// version's rows: results.csv then held rows wider than its header.
/// Resuming it, or merging such a shard, is now refused.
#[test]
fn resume_other_version_columns() {
    let f = Fixture::new(axes());
    assert_ok(&f.sweep_into("out", &["--max-runs", "3"]));
    let partial = f.path("out/results.csv.partial");
    // The same table with one summary column fewer, as a version that did
    // not write it would have left it.
    let narrower: String = read(&partial)
        .lines()
        .map(|line| format!("{}\n", line.rsplit_once(',').unwrap().0))
        .collect();
    std::fs::write(&partial, &narrower).unwrap();
    let out = f.sweep_into("out", &["--resume"]);
    assert_refused(
        &out,
        &[
            "results.csv.partial, line 1",
            "other columns than this version",
            "--force",
        ],
    );
    assert_eq!(read(&partial), narrower, "nothing discarded or appended");
    let parts = shards(&f, 1);
    let whole = read(&parts[0].join("results.csv"));
    let narrower: String = whole
        .lines()
        .map(|line| format!("{}\n", line.rsplit_once(',').unwrap().0))
        .collect();
    std::fs::write(parts[0].join("results.csv"), narrower).unwrap();
    let out = merge(&f.sweep(), &parts, &f.path("merged"));
    assert_refused(&out, &["shard0/results.csv, line 1", "other columns"]);
    assert!(!f.path("merged").exists(), "nothing written");
}

/// A `variants` axis over variants with other services: results.csv's
/// header was the first point's, and the next point's rows, one service
/// wider, were written under it (every cell past the first service's shifted
/// onto another column), and aggregate.csv read them by the first point's
/// header. Every row is now laid under one header, the union of every
/// point's columns, whole, resumed or merged from shards.
#[test]
fn variant_axis_over_other_services_mixes_columns() {
    let f = Fixture::new(json!([{"variants": ["as-is", "cached"]}]));
    let mut model = small_model("small");
    model["variants"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "cached", "set": {
            "services[+]": {"name": "cache", "workers": 2,
                            "steps": [{"work": {"kind": "constant", "ms": 1}}]},
            "services[api].steps[+]": {"call": "cache"}}}));
    write_json(&f.path("model.json"), model);
    assert_ok(&f.sweep_into("whole", &[]));
    let whole = read(&f.path("whole/results.csv"));
    let rows: Vec<Vec<&str>> = whole.lines().map(|l| l.split(',').collect()).collect();
    let header = &rows[0];
    assert!(rows.iter().all(|r| r.len() == header.len()), "{whole}");
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for row in &rows[1..] {
        let cached = row[at("variant")] == "cached";
        assert_eq!(row[at("cache.calls")].is_empty(), !cached, "{whole}");
        // Every request of the small model reaches `api` once, in both.
        assert_eq!(row[at("api.calls")], row[at("requests")], "{whole}");
        assert_eq!(row[at("users.requests")], row[at("requests")], "{whole}");
    }
    let aggregate = read(&f.path("whole/aggregate.csv"));
    let lines: Vec<Vec<&str>> = aggregate.lines().map(|l| l.split(',').collect()).collect();
    let n = lines[0].iter().position(|h| *h == "cache.calls.n").unwrap();
    assert_eq!((lines[1][n], lines[2][n]), ("0", "2"), "{aggregate}");

    assert_ok(&f.sweep_into("resumed", &["--max-runs", "2"]));
    assert_ok(&f.sweep_into("resumed", &["--resume"]));
    assert_eq!(read(&f.path("resumed/results.csv")), whole);
    let parts = shards(&f, 2);
    assert_ok(&merge(&f.sweep(), &parts, &f.path("merged")));
    assert_eq!(read(&f.path("merged/results.csv")), whole);
}

/// A `variants` axis's column is `variant`, and so is the summary's first:
/// results.csv named both, and pandas read the second as `variant.1`.
#[test]
fn variants_axis_writes_variant_twice() {
    let f = Fixture::new(json!([{"variants": ["as-is", "tight"]},
                                {"path": "workloads[users].timeout_ms", "values": [500, 1000]}]));
    assert_ok(&f.sweep_into("whole", &[]));
    let whole = read(&f.path("whole/results.csv"));
    let rows: Vec<Vec<&str>> = whole.lines().map(|l| l.split(',').collect()).collect();
    let header = &rows[0];
    let named = |name: &str| header.iter().filter(|h| **h == name).count();
    assert_eq!(named("variant"), 1, "{whole}");
    let at = header.iter().position(|h| *h == "variant").unwrap();
    assert_eq!(
        &header[..at + 1],
        ["point", "replication", "seed", "variant"]
    );
    assert!(rows.iter().all(|r| r.len() == header.len()), "{whole}");
    // Points are variant-major: 2 timeouts × 2 replications of each.
    let variants: Vec<&str> = rows[1..].iter().map(|r| r[at]).collect();
    assert_eq!(variants, [["as-is"; 4], ["tight"; 4]].concat(), "{whole}");
    let aggregate = read(&f.path("whole/aggregate.csv"));
    let first = aggregate.lines().next().unwrap();
    assert_eq!(first.split(',').filter(|h| *h == "variant").count(), 1);

    // Read back, by a resume and by a merge, the rows are whole again.
    assert_ok(&f.sweep_into("resumed", &["--max-runs", "3"]));
    assert_ok(&f.sweep_into("resumed", &["--resume"]));
    assert_eq!(read(&f.path("resumed/results.csv")), whole);
    assert_eq!(read(&f.path("resumed/aggregate.csv")), aggregate);
    let parts = shards(&f, 3);
    assert_ok(&merge(&f.sweep(), &parts, &f.path("merged")));
    assert_eq!(read(&f.path("merged/results.csv")), whole);
    assert_eq!(read(&f.path("merged/aggregate.csv")), aggregate);
}

/// Of two `variants` axes the last one's variant ran, while results.csv's
/// `variant` column once said the first's: a sweep has one `variants` axis,
/// and a second is refused, with its path, before anything runs.
#[test]
fn second_variants_axis_overriding_the_first_is_refused() {
    let f = Fixture::new(json!([{"variants": ["as-is", "tight"]},
                                {"name": "v2", "variants": ["tight"]}]));
    let out = f.sweep_into("whole", &[]);
    assert_refused(
        &out,
        &["axes[1].variants", "axes[0] is a `variants` axis too"],
    );
    assert!(!f.path("whole").exists(), "nothing written");
}

/// Shards 0..3 of the fixture's sweep into shard0, shard1, shard2.
fn shards(f: &Fixture, count: usize) -> Vec<PathBuf> {
    (0..count)
        .map(|i| {
            let out = f.path(&format!("shard{i}"));
            let spec = format!("{i}/{count}");
            assert_ok(&stormsim_into(
                "sweep",
                &f.sweep(),
                &out,
                &["--shard", &spec],
            ));
            out
        })
        .collect()
}

fn merge(sweep: &Path, shards: &[PathBuf], out: &Path) -> Output {
    let mut a = args(&["merge", s(sweep)]);
    a.extend(shards.iter().map(|p| s(p)));
    a.extend(["--out", s(out)]);
    stormsim(&a, &[])
}

#[test]
fn merge_wrong_sweep() {
    let f = Fixture::new(axes());
    let parts = shards(&f, 3);
    let other = f.write_sweep(
        "other.sweep.json",
        json!([{"path": "services[db].workers", "name": "workers", "values": [7, 4]},
               {"path": "workloads[users].arrival.rate_per_s", "name": "rate", "values": [50, 100]}]),
    );
    let out = merge(&other, &parts, &f.path("merged"));
    assert_refused(&out, &["shard0", "the sweep's `axes`"]);
    assert!(!f.path("merged").exists(), "nothing written");
}

#[test]
fn merge_diff_model() {
    let f = Fixture::new(axes());
    let first = shards(&f, 1);
    let mut model = small_model("small");
    model["services"][0]["workers"] = json!(3);
    write_json(&f.path("model.json"), model);
    let out = merge(&f.sweep(), &first, &f.path("merged"));
    assert_refused(&out, &["shard0", "the model (model.json)"]);
}

#[test]
fn resume_completed() {
    let f = Fixture::new(axes());
    assert_ok(&f.sweep_into("out", &[]));
    let before = folder_files(&f.path("out"));
    assert_ok(&f.sweep_into("out", &["--resume", "--max-runs", "3"]));
    assert_eq!(
        folder_files(&f.path("out")),
        before,
        "nothing deleted or changed"
    );
}

#[test]
fn concurrent_sweeps() {
    let f = Fixture::new(axes());
    let out = f.path("out");
    std::fs::create_dir(&out).unwrap();
    // Another writer holds the folder (as a running sweep does).
    let held = std::fs::File::open(&out).unwrap();
    held.try_lock().unwrap();
    let refused = f.sweep_into("out", &[]);
    assert_refused(&refused, &["another stormsim is writing into", s(&out)]);
    let run = stormsim_into("run", &f.path("model.json"), &out, &[]);
    assert_refused(&run, &["another stormsim is writing into"]);
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
    drop(held);
    assert_ok(&f.sweep_into("out", &[]));
}

#[test]
fn resume_panic() {
    let f = Fixture::new(axes());
    assert_ok(&f.sweep_into("out", &["--max-runs", "2"]));
    let partial = f.path("out/results.csv.partial");
    let good = read(&partial);
    let header = good.lines().next().unwrap().to_string();
    for corrupt in [
        "a,b\n0,0\n".to_string(),
        "a,b,c\n0,0,1\n".to_string(),
        format!("{header}\n0,0\n"),
        format!("{header}\n5,0,1,x\n"),
    ] {
        std::fs::write(&partial, &corrupt).unwrap();
        let out = f.sweep_into("out", &["--resume"]);
        assert_refused(&out, &["results.csv.partial, line"]);
    }
    // A shard's results.csv, the same.
    let parts = shards(&f, 1);
    std::fs::write(parts[0].join("results.csv"), "a,b\n0,0\n").unwrap();
    let out = merge(&f.sweep(), &parts, &f.path("merged"));
    assert_refused(&out, &["shard0/results.csv, line 1"]);
}

#[test]
fn shard_empty() {
    let f = Fixture::new(json!([{"path": "services[db].workers", "values": [2, 4]}]));
    // 4 runs in 6 shards: two have none.
    let parts = shards(&f, 6);
    assert_ok(&f.sweep_into("whole", &[]));
    assert_ok(&merge(&f.sweep(), &parts, &f.path("merged")));
    assert_eq!(
        read(&f.path("merged/results.csv")),
        read(&f.path("whole/results.csv"))
    );
    // An unfinished shard, a missing one: named, with what is missing.
    let unfinished = f.path("unfinished");
    assert_ok(&stormsim_into(
        "sweep",
        &f.sweep(),
        &unfinished,
        &["--shard", "0/1", "--max-runs", "1"],
    ));
    let out = merge(&f.sweep(), &[unfinished], &f.path("m2"));
    assert_refused(&out, &["unfinished", "1 of its 4 runs", "--resume"]);
    let empty = f.path("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = merge(&f.sweep(), &[empty], &f.path("m3"));
    assert_refused(&out, &["empty", "sweep-inputs.json"]);
    let out = merge(&f.sweep(), &[f.path("no-such-shard")], &f.path("m4"));
    assert_refused(&out, &["no-such-shard", "no such folder"]);
}

#[test]
fn jobs_huge() {
    let f = Fixture::new(axes());
    for jobs in ["20000", "0"] {
        let out = f.sweep_into("out", &["--jobs", jobs]);
        assert_refused(&out, &["--jobs takes 1 to 256"]);
    }
    assert_ok(&f.sweep_into("out", &["--jobs", "256"]));
}

#[test]
fn sweep_grid_oom() {
    let f = Fixture::new(axes());
    let huge = f.write_sweep(
        "huge.sweep.json",
        json!([{"path": "services[db].workers", "linear": {"from": 1, "to": 1000, "steps": 1000}, "integer": true},
               {"path": "services[api].workers", "linear": {"from": 1, "to": 1000, "steps": 1000}, "integer": true},
               {"path": "workloads[users].arrival.rate_per_s", "linear": {"from": 1, "to": 1000, "steps": 1000}}]),
    );
    let out_dir = f.path("out");
    for command in ["check", "sweep"] {
        let mut a = vec![command, s(&huge)];
        if command == "sweep" {
            a.extend(["--out", s(&out_dir)]);
        }
        let out = stormsim(&a, &[]);
        assert_refused(
            &out,
            &[
                "1000000000 points (1000 × 1000 × 1000)",
                "limit of 1000000 points",
            ],
        );
    }
    let sampled = write_json(
        &f.path("sampled.sweep.json"),
        json!({"name": "s", "model": "model.json", "design": {"kind": "random", "points": 4000000000u32},
               "axes": [{"path": "services[db].workers", "range": {"from": 1, "to": 9}, "integer": true}]}),
    );
    assert_refused(
        &stormsim(&["check", s(&sampled)], &[]),
        &["4000000000 points"],
    );
}

#[test]
fn silent_accept() {
    let f = Fixture::new(axes());
    let same_path = f.write_sweep(
        "same.sweep.json",
        json!([{"path": "services[db].workers", "values": [1, 2]},
               {"path": "services[db].workers", "values": [3, 4]}]),
    );
    assert_refused(
        &stormsim(&["check", s(&same_path)], &[]),
        &["axes[1].path", "axes[0]'s path too"],
    );
    for column in ["succeeded", "seed", "db.calls", "metastable_share"] {
        let named = f.write_sweep(
            "col.sweep.json",
            json!([{"path": "services[db].workers", "name": column, "values": [1, 2]}]),
        );
        assert_refused(
            &stormsim(&["check", s(&named)], &[]),
            &[
                "axes[0]",
                &format!("the column {column:?} is one of results.csv's"),
            ],
        );
    }
    let search = write_json(
        &f.path("search.sweep.json"),
        json!({"name": "s", "model": "model.json",
               "search": {"path": "services[api].workers", "from": 1, "to": 8,
                          "metric": "success_rate", "threshold": 0.5, "tolerance": 0}}),
    );
    assert_refused(
        &stormsim(&["check", s(&search)], &[]),
        &["search.tolerance: expected a number > 0"],
    );
}

#[test]
fn sweep_limit_silent() {
    let dir = tempfile::tempdir().unwrap();
    let model = write_json(
        &dir.path().join("lim.json"),
        json!({"name": "lim",
               "workloads": [{"name": "u", "target": "api", "arrival": {"kind": "poisson", "rate_per_s": 1000}, "requests": 3000}],
               "services": [{"name": "api", "workers": 1, "steps": [{"work": {"kind": "exponential", "mean_ms": 1}}]}],
               "limits": {"max_in_flight": 50}}),
    );
    let sweep = write_json(
        &dir.path().join("lim.sweep.json"),
        json!({"name": "limsweep", "model": "lim.json",
               "axes": [{"path": "services[api].steps[0].work.mean_ms", "name": "mean", "values": [0.5, 3]}]}),
    );
    let out = dir.path().join("out");
    let swept = stormsim_into("sweep", &sweep, &out, &[]);
    assert_eq!(swept.status.code(), Some(3), "{}", stderr(&swept));
    assert!(stderr(&swept).contains("1 run stopped at one of the model's limits"));
    assert!(out.join("aggregate.csv").exists(), "the tables are written");
    assert_ok(&stormsim_into("sweep", &sweep, &out, &["--accept-partial"]));

    let fast = ["--set", "services[api].steps[0].work.mean_ms=3"];
    let run_out = dir.path().join("run");
    let ran = stormsim_into("run", &model, &run_out, &fast);
    assert_eq!(ran.status.code(), Some(3), "{}", stderr(&ran));
    assert!(stderr(&ran).contains("1 variant stopped at one of the model's limits"));
    let mut accepted = fast.to_vec();
    accepted.push("--accept-partial");
    assert_ok(&stormsim_into("run", &model, &run_out, &accepted));
}

/// Every output is a new file renamed into place: a symlink planted at any
/// output's name (even one the manifest claims as stormsim's) is replaced,
/// its target untouched, by run, sweep, resume, merge and plot alike.
#[test]
fn outputs_are_atomic_and_link_safe() {
    let f = Fixture::new(json!([{"path": "services[db].workers", "values": [2, 4]}]));
    let victims = f.path("victims");
    std::fs::create_dir(&victims).unwrap();
    let plant = |dir: &Path, names: &[&str], kind: &str, name: &str| {
        std::fs::create_dir_all(dir).unwrap();
        for n in names {
            let target = victims.join(format!(
                "{}-{n}",
                dir.file_name().unwrap().to_string_lossy()
            ));
            std::fs::write(&target, "VICTIM").unwrap();
            let link = dir.join(n);
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(&target, &link).unwrap();
        }
        let manifest = json!({"tool": "stormsim", "kind": kind, "name": name, "files": names});
        std::fs::write(dir.join(".stormsim-manifest.json"), manifest.to_string()).unwrap();
    };
    let run_names = [
        "summary.json",
        "summary.csv",
        "summary.tidy.csv",
        "timeseries.csv",
        "timeseries.tidy.csv.gz",
        "latency.csv",
        "attempts.csv",
        "comparison.svg",
        "load.svg",
        "timeline.svg",
        "cores.svg",
        "zombies.svg",
        "wasted.svg",
        "branches.svg",
        "index.html",
    ];
    let sweep_names = [
        "results.csv.partial",
        "results.csv",
        "aggregate.csv",
        "sweep.json",
        "sweep.svg",
        "search.csv",
        "search.svg",
        "index.html",
        "sweep-inputs.json",
    ];
    let run_out = f.path("run");
    plant(&run_out, &run_names, "run", "small");
    assert_ok(&stormsim_into(
        "run",
        &f.path("model.json"),
        &run_out,
        &["--attempts"],
    ));
    // `plot` rewrites the charts and the page, from the tables.
    let charts = run_names
        .iter()
        .position(|n| *n == "comparison.svg")
        .unwrap();
    plant(&run_out, &run_names[charts..], "run", "small");
    let plotted = stormsim(&["plot", s(&run_out)], &[]);
    assert_ok(&plotted);

    let sweep_out = f.path("sweep");
    plant(&sweep_out, &sweep_names, "sweep", "s");
    assert_ok(&f.sweep_into("sweep", &["--force", "--max-runs", "1"]));
    // A resume replaces the partial file rather than appending through it.
    let partial = sweep_out.join("results.csv.partial");
    let text = read(&partial);
    let target = victims.join("resumed-partial");
    std::fs::write(&target, &text).unwrap();
    std::fs::remove_file(&partial).unwrap();
    std::os::unix::fs::symlink(&target, &partial).unwrap();
    assert_ok(&f.sweep_into("sweep", &["--resume"]));
    assert_eq!(read(&target), text, "the link's target is not appended to");
    plant(
        &sweep_out,
        &["sweep.svg", "search.svg", "index.html"],
        "sweep",
        "s",
    );
    assert_ok(&stormsim(&["plot", s(&sweep_out)], &[]));

    let parts = shards(&f, 2);
    let merged = f.path("merged");
    plant(&merged, &sweep_names, "sweep", "s");
    assert_ok(&merge(&f.sweep(), &parts, &merged));

    for victim in std::fs::read_dir(&victims).unwrap() {
        let path = victim.unwrap().path();
        if path != target {
            assert_eq!(
                read(&path),
                "VICTIM",
                "{} written through a link",
                path.display()
            );
        }
    }
    for dir in [&run_out, &sweep_out, &merged] {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            let kind = entry.file_type().unwrap();
            // A planted link stormsim wrote nothing at stays a link; every
            // output it wrote is a file of its own.
            if kind.is_symlink() {
                assert!(
                    !dir.join(&name).exists() || read(&dir.join(&name)) == "VICTIM",
                    "{name}"
                );
            }
        }
    }
    assert!(read(&merged.join("results.csv")).starts_with("point,"));
    assert_eq!(
        read(&merged.join("results.csv")),
        read(&sweep_out.join("results.csv"))
    );
}

/// The names a folder's manifest lists, sorted.
fn manifest_files(dir: &Path) -> Vec<String> {
    let manifest: Value =
        serde_json::from_str(&read(&dir.join(".stormsim-manifest.json"))).unwrap();
    let mut files: Vec<String> = manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect();
    files.sort();
    files
}

/// The names of the files in `dir` but its manifest, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != ".stormsim-manifest.json")
        .collect();
    names.sort();
    names
}

/// A run's or a sweep's data files copied into a folder of the user's (no
/// manifest) make it no folder of stormsim's: `run --out` and `plot` refuse
/// it, the user's page and charts untouched. A sweep's manifest lists only
/// the files it wrote (a 3-axis sweep draws no sweep.svg), so a sweep.svg
/// the user saves there later is never removed.
#[test]
fn regression_plot_clobbers_user_files() {
    let f = Fixture::new(json!([
        {"path": "services[db].workers", "values": [2, 4]},
        {"path": "workloads[users].arrival.rate_per_s", "values": [50, 100]},
        {"path": "services[api].queue_capacity", "values": [10, 100]}]));
    assert_ok(&f.run_into("r", &[]));
    let mine = f.path("mine");
    std::fs::create_dir(&mine).unwrap();
    for file in [
        "summary.json",
        "summary.csv",
        "timeseries.csv",
        "latency.csv",
    ] {
        std::fs::copy(f.path("r").join(file), mine.join(file)).unwrap();
    }
    std::fs::write(mine.join("index.html"), "MY OWN REPORT PAGE").unwrap();
    std::fs::write(mine.join("comparison.svg"), "MY OWN CHART").unwrap();
    assert_refused(&f.run_into("mine", &[]), &["holds no stormsim outputs"]);
    assert_refused(&f.run_into("mine", &["--force"]), &["index.html"]);
    assert_refused(
        &stormsim(&["plot", s(&mine)], &[]),
        &[".stormsim-manifest.json", "never over files of yours"],
    );
    assert_eq!(read(&mine.join("index.html")), "MY OWN REPORT PAGE");
    assert_eq!(read(&mine.join("comparison.svg")), "MY OWN CHART");
    assert!(!mine.join(".stormsim-manifest.json").exists());

    assert_ok(&f.sweep_into("sw", &[]));
    let sw = f.path("sw");
    assert!(!sw.join("sweep.svg").exists(), "3 axes: no chart");
    assert_eq!(manifest_files(&sw), names_in(&sw), "only what was written");
    let mysweep = f.path("mysweep");
    std::fs::create_dir(&mysweep).unwrap();
    for file in [
        "results.csv",
        "aggregate.csv",
        "sweep.json",
        "sweep-inputs.json",
    ] {
        std::fs::copy(sw.join(file), mysweep.join(file)).unwrap();
    }
    std::fs::write(mysweep.join("index.html"), "MY OWN SWEEP NOTES").unwrap();
    std::fs::write(mysweep.join("sweep.svg"), "MY OWN SWEEP CHART").unwrap();
    assert_refused(
        &stormsim(&["plot", s(&mysweep)], &[]),
        &["never over files of yours"],
    );
    assert_eq!(read(&mysweep.join("index.html")), "MY OWN SWEEP NOTES");
    assert_eq!(read(&mysweep.join("sweep.svg")), "MY OWN SWEEP CHART");

    // In the sweep's own folder: a sweep.svg of the user's stays, whatever
    // plot and sweep make of it.
    std::fs::write(sw.join("sweep.svg"), "MY OWN SWEEP CHART").unwrap();
    let _ = stormsim(&["plot", s(&sw)], &[]);
    let _ = f.sweep_into("sw", &[]);
    let _ = f.sweep_into("sw", &["--force"]);
    assert_eq!(read(&sw.join("sweep.svg")), "MY OWN SWEEP CHART");
    assert!(!manifest_files(&sw).contains(&"sweep.svg".to_string()));
}

/// A latency of 1e308 in a run folder's latency.csv (no run writes one: its
/// clock counts 2^64 ns) is refused naming the file and line, exit 2, where
/// the chart's axis grew without bound until the allocator aborted.
#[test]
fn regression_plot_huge_latency_oom() {
    let f = Fixture::new(axes());
    assert_ok(&f.run_into("r", &[]));
    let latency = f.path("r").join("latency.csv");
    let text = read(&latency);
    let lines: Vec<&str> = text.lines().collect();
    let last = lines.len();
    let mut cells: Vec<&str> = lines[last - 1].split(',').collect();
    for (huge, said) in [("1e308", "1e308"), ("inf", "inf"), ("-1", "-1")] {
        cells[1] = huge;
        let mut edited = lines[..last - 1].join("\n");
        edited.push('\n');
        edited.push_str(&cells.join(","));
        edited.push('\n');
        std::fs::write(&latency, edited).unwrap();
        let line = format!("latency.csv line {last}: latency_ms is {said}");
        assert_refused(&stormsim(&["plot", s(&f.path("r"))], &[]), &[&line]);
    }
}

/// `run --out NAME` with a legal last component of 235 to 255 bytes: the
/// temporary folder beside it (`.stormsim-tmp-NAME-XXXXXX`, 21 bytes
/// longer) was over the 255 a file name may have, so the run failed after
/// simulating, leaving an empty output folder. It now writes its outputs.
#[test]
fn regression_out_long_name() {
    let f = Fixture::new(axes());
    for len in [235, 255] {
        let name = "d".repeat(len);
        assert_ok(&f.run_into(&name, &[]));
        assert!(f.path(&name).join("summary.json").is_file());
        assert_ok(&f.run_into(&name, &[]));
    }
    let left: Vec<String> = std::fs::read_dir(f.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(".stormsim"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
