//! scripts/regenerate-outputs, run in a scratch copy of the repository's
//! layout against stand-ins for `cargo` and `stormsim`: it runs the binary
//! cargo reports having built (wherever CARGO_TARGET_DIR puts it, not
//! target/release), and starts every sweep over with `--force`.
#![cfg(unix)]

mod common;

use common::root;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

fn executable(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn the_script_runs_the_binary_cargo_built_and_forces_sweeps() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for sub in ["scripts", "models", "bin", "elsewhere/release"] {
        std::fs::create_dir_all(d.join(sub)).unwrap();
    }
    let script = d.join("scripts/regenerate-outputs");
    std::fs::copy(root().join("scripts/regenerate-outputs"), &script).unwrap();
    std::fs::copy(
        root().join("scripts/built-stormsim"),
        d.join("scripts/built-stormsim"),
    )
    .unwrap();
    std::fs::write(d.join("models/a.json"), r#"{"name": "a"}"#).unwrap();
    std::fs::write(d.join("models/b.sweep.json"), r#"{"name": "b"}"#).unwrap();
    std::fs::write(
        d.join("models/c.sweep.json"),
        r#"{"name": "c", "search": {}}"#,
    )
    .unwrap();
    let log = d.join("log");
    let fake = d.join("elsewhere/release/stormsim");
    executable(&fake, "#!/bin/sh\necho \"$*\" >> \"$STORMSIM_LOG\"\n");
    // cargo's JSON messages: a library, then the binary, where it put it.
    executable(
        &d.join("bin/cargo"),
        "#!/bin/sh\n\
         echo '{\"reason\":\"compiler-artifact\",\"target\":{\"name\":\"stormsim_model\"},\"executable\":null}'\n\
         echo \"{\\\"reason\\\":\\\"compiler-artifact\\\",\\\"target\\\":{\\\"name\\\":\\\"stormsim\\\"},\\\"executable\\\":\\\"$FAKE_STORMSIM\\\"}\"\n\
         echo '{\"reason\":\"build-finished\",\"success\":true}'\n",
    );
    let path = format!(
        "{}:{}",
        d.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .arg(&script)
        .env("PATH", path)
        .env("CARGO_TARGET_DIR", d.join("elsewhere"))
        .env("FAKE_STORMSIM", &fake)
        .env("STORMSIM_LOG", &log)
        .current_dir(d)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let calls = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        calls.lines().collect::<Vec<_>>(),
        [
            "run models/a.json",
            "validate",
            "sweep models/b.sweep.json --force",
            "search models/c.sweep.json"
        ]
    );
}
