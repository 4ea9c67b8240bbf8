//! Issue 17 ("Hardening"), through the binary: `check` and `run` agree on
//! what they refuse (exit 2, every problem at its JSON path), the memory
//! ceiling and its flag, and `check`'s warnings (which leave the exit code
//! alone).

mod common;

use common::{stormsim, write_json};
use serde_json::json;
use std::os::unix::fs::OpenOptionsExt;

fn model_with_db_instances(db: u32) -> serde_json::Value {
    json!({
        "name": "mem-cli",
        "workloads": [{"name": "w", "target": "api", "requests": 5,
                       "arrival": {"kind": "constant", "rate_per_s": 10}}],
        "services": [
            {"name": "api", "instances": 1_000_000, "steps": [{"call": "db"}]},
            {"name": "db", "instances": db}]
    })
}

/// `check` and `run` refuse a model over the memory ceiling, naming the
/// flag that raises it; with it raised, `check` accepts it.
#[test]
fn instances_quadratic_is_refused_by_check_and_run() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let file = write_json(
        &dir.path().join("m.json"),
        model_with_db_instances(1_000_000),
    );
    let path = file.to_str().expect("utf-8");
    let out = dir.path().join("out");
    for args in [
        vec!["check", path],
        vec![
            "run",
            path,
            "--quiet",
            "--out",
            out.to_str().expect("utf-8"),
        ],
    ] {
        let o = stormsim(&args, &[]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("services[api].steps[0]: the run would need about")
                && stderr.contains("--memory-limit-gb"),
            "{stderr}"
        );
    }
    assert!(!out.exists(), "nothing written");
    let o = stormsim(&["check", path, "--memory-limit-gb", "10000"], &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = stormsim(&["check", path, "--memory-limit-gb", "-1"], &[]);
    assert_eq!(o.status.code(), Some(2));
}

/// A hedge to a one-instance service never fires: a warning, exit 0.
#[test]
fn check_warns_of_a_hedge_that_never_fires() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let doc = json!({
        "name": "hedge-one",
        "workloads": [{"name": "w", "target": "api", "requests": 5,
                       "arrival": {"kind": "constant", "rate_per_s": 10}}],
        "services": [
            {"name": "api", "steps": [{"call": "db", "idempotent": true,
                                       "hedge": {"delay_ms": 5, "target": "any_other"}}]},
            {"name": "db"}]
    });
    let file = write_json(&dir.path().join("h.json"), doc);
    let o = stormsim(&["check", file.to_str().expect("utf-8")], &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(
            "warning[hedge-never-fires]: services[api].steps[0].hedge: this hedge never fires"
        ),
        "{stderr}"
    );
}

/// A name `check` accepted and `run` could not use: both refuse it now.
#[test]
fn model_name_with_nul_is_refused_by_check_and_run() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut doc = model_with_db_instances(1);
    doc["services"][0]["instances"] = json!(1);
    doc["name"] = json!("a\u{0}b");
    let file = write_json(&dir.path().join("n.json"), doc);
    let path = file.to_str().expect("utf-8");
    for args in [vec!["check", path], vec!["run", path, "--quiet"]] {
        let o = stormsim(&args, &[]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("  name: "), "{stderr}");
    }
}

/// `alloc_abort` through a sweep: a point whose breaker window would take
/// 96 GiB is refused by the sweep's `check` (and so by `sweep`), at that
/// point, as `run` refuses the model; `--memory-limit-gb` raises the ceiling
/// for sweeps as for models.
#[test]
fn a_sweep_point_over_the_memory_ceiling_is_refused() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let model = json!({
        "name": "breaker-window",
        "workloads": [{"name": "users", "target": "api", "requests": 50, "timeout_ms": 1000,
                       "arrival": {"kind": "poisson", "rate_per_s": 50}}],
        "services": [
            {"name": "api", "workers": 8,
             "steps": [{"call": "db", "timeout_ms": 100,
                        "breaker": {"kind": "resilience4j", "sliding_window_type": "time_based",
                                    "sliding_window_size": 60}}]},
            {"name": "db", "workers": 4, "steps": [{"work": {"kind": "exponential", "mean_ms": 5}}]}]
    });
    let sweep = json!({
        "name": "window-sweep", "model": model, "replications": 1,
        "axes": [{"path": "services[api].steps[0].breaker.sliding_window_size",
                  "name": "window", "values": [60, 4294967295u64]}]
    });
    let file = write_json(&dir.path().join("w.sweep.json"), sweep);
    let check = stormsim(&["check", file.to_str().unwrap()], &[]);
    let stderr = String::from_utf8_lossy(&check.stderr);
    assert_eq!(check.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("GiB of memory, over the limit of 4.00 GiB")
            && stderr.contains("4294967295"),
        "{stderr}"
    );
    let out = dir.path().join("out");
    let run = stormsim(
        &[
            "sweep",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ],
        &[],
    );
    assert_eq!(
        run.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

/// A model file that is not a regular file, or is over 64 MiB, is refused
/// before it is read (exit 2, saying why), by `check` and `run` and as a
/// sweep's `model`: a pipe hung `check`, and `/dev/zero` or a huge file
/// was read whole into memory.
#[test]
fn regression_model_file_unbounded() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let big = dir.path().join("big.json");
    // Sparse: 64 MiB and a byte of zeros, made at once.
    std::fs::File::create(&big)
        .and_then(|f| f.set_len((64 << 20) + 1))
        .unwrap();
    let sweep = write_json(
        &dir.path().join("s.sweep.json"),
        json!({"name": "s", "model": "big.json",
               "axes": [{"path": "services[api].workers", "values": [1, 2]}]}),
    );
    let fifo = dir.path().join("fifo.json");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    // Were the pipe opened, a writer that closes at once ends the read:
    // the check fails instead of hanging.
    let writer = fifo.clone();
    std::thread::spawn(move || drop(std::fs::OpenOptions::new().write(true).open(writer)));
    let out = dir.path().join("out");
    let cases: [(Vec<&str>, &str); 5] = [
        (
            vec!["check", big.to_str().unwrap()],
            "larger than the 67108864 bytes (64 MiB)",
        ),
        (
            vec!["run", big.to_str().unwrap(), "--out", out.to_str().unwrap()],
            "larger than the 67108864 bytes (64 MiB)",
        ),
        (
            vec!["check", sweep.to_str().unwrap()],
            "model: cannot read the sweep's model file",
        ),
        (vec!["check", fifo.to_str().unwrap()], "not a regular file"),
        (vec!["check", "/dev/zero"], "not a regular file"),
    ];
    for (args, said) in cases {
        let o = stormsim(&args, &[]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(said), "{args:?}: {said:?} not in {stderr}");
    }
    assert!(!out.exists(), "nothing written");
    // Lets the writer's open return, had nothing read the pipe.
    let _ = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo);
}

/// A workload's copies (`count`) are named by the model's path
/// (`workloads[users]`, not a copy's output name `workloads[users-1000]`)
/// in the memory refusal, with the part summed over the copies (2.24 GiB
/// of 2.24, not "0.00 GiB"), and in warnings, once, not once a copy.
#[test]
fn regression_memory_msg_copy_path() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let file = write_json(
        &dir.path().join("copies.json"),
        json!({"name": "c3", "seed": 1, "horizon_s": 1,
               "workloads": [{"name": "users", "target": "api", "requests": 10, "count": 1000,
                              "arrival": {"kind": "poisson", "rate_per_s": 10},
                              "breaker": {"kind": "resilience4j", "sliding_window_type": "time_based",
                                          "sliding_window_size": 100000}}],
               "services": [{"name": "api", "instances": 1000,
                             "steps": [{"work": {"kind": "constant", "ms": 1}}]}]}),
    );
    let o = stormsim(
        &["check", file.to_str().unwrap(), "--memory-limit-gb", "1"],
        &[],
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "  workloads[users].breaker.sliding_window_size: the run would need about 2.24 GiB"
        ) && stderr.contains(
            "at workloads[users], per caller instance, summed over its 1000 copies (2.24 GiB)"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("users-"), "{stderr}");

    // A rate limit far above the copies' 10/s: one warning, at the model's path.
    let file = write_json(
        &dir.path().join("limited.json"),
        json!({"name": "c4", "horizon_s": 1,
               "workloads": [{"name": "users", "target": "api", "requests": 10, "count": 3,
                              "arrival": {"kind": "poisson", "rate_per_s": 10},
                              "rate_limit": {"kind": "sliding_window", "limit": 1000, "window_ms": 100}}],
               "services": [{"name": "api", "steps": [{"work": {"kind": "constant", "ms": 1}}]}]}),
    );
    let o = stormsim(&["check", file.to_str().unwrap()], &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    let warned: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("rate-limit-never-binds"))
        .collect();
    assert_eq!(warned.len(), 1, "{stderr}");
    assert!(
        warned[0].contains("workloads[users].rate_limit"),
        "{stderr}"
    );
}
