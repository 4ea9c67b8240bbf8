//! `stormsim import` on configuration files: one file of each kind imports
//! (exit 0, a model on stdout that `stormsim check` accepts, warnings on
//! stderr), bad input exits 2 naming the path of the problem, and `--out`
//! never replaces a file unless `--force` says so.

mod common;

use common::{root, stormsim};
use std::path::PathBuf;

fn data(name: &str) -> String {
    root()
        .join("crates/import/tests/data/config")
        .join(name)
        .display()
        .to_string()
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary folder")
}

#[test]
fn import_config_each_kind_writes_a_model_check_accepts() {
    let dir = tmp();
    for (kind, file) in [
        ("envoy", "envoy-bootstrap.yaml"),
        ("istio", "istio.yaml"),
        ("resilience4j", "resilience4j-application.yml"),
        ("grpc", "grpc-service-config.json"),
    ] {
        let out = stormsim(&["import", kind, &data(file)], &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{kind}: {stderr}");
        let model: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert_eq!(model["name"], format!("imported-{kind}"));
        assert!(stderr.contains("placeholders to edit"), "{kind}: {stderr}");
        assert!(stderr.contains("warning: "), "{kind}: {stderr}");
        let path: PathBuf = dir.path().join(format!("{kind}.json"));
        std::fs::write(&path, &out.stdout).unwrap();
        let check = stormsim(&["check", &path.display().to_string()], &[]);
        assert_eq!(
            check.status.code(),
            Some(0),
            "{kind}: {}",
            String::from_utf8_lossy(&check.stderr)
        );
    }
}

#[test]
fn import_config_bad_input_exits_2_with_the_path() {
    let dir = tmp();
    let bad = dir.path().join("route.yaml");
    std::fs::write(
        &bad,
        "virtual_hosts:\n- name: v\n  routes:\n  - route:\n      cluster: a\n      retry_policy:\n        per_try_timeout: -0.5s\n",
    )
    .unwrap();
    let out = stormsim(&["import", "envoy", &bad.display().to_string()], &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("at virtual_hosts[0].routes[0].route.retry_policy.per_try_timeout"),
        "{stderr}"
    );
    assert!(stderr.contains("negative"), "{stderr}");
    assert!(out.stdout.is_empty());

    let not_yaml = dir.path().join("app.yml");
    std::fs::write(&not_yaml, "resilience4j: [unclosed\n").unwrap();
    let out = stormsim(
        &["import", "resilience4j", &not_yaml.display().to_string()],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not valid YAML"));
}

#[test]
fn import_config_out_never_replaces_a_file_without_force() {
    let dir = tmp();
    let out_file = dir.path().join("model.json");
    std::fs::write(&out_file, "keep me").unwrap();
    let out_arg = out_file.display().to_string();
    let file = data("grpc-service-config.json");
    let out = stormsim(&["import", "grpc", &file, "--out", &out_arg], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--force"));
    assert_eq!(std::fs::read_to_string(&out_file).unwrap(), "keep me");

    let out = stormsim(
        &["import", "grpc", &file, "--out", &out_arg, "--force"],
        &[],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let model: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    assert_eq!(model["name"], "imported-grpc");

    let fresh = dir.path().join("fresh.json");
    let out = stormsim(
        &[
            "import",
            "grpc",
            &file,
            "--out",
            &fresh.display().to_string(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("wrote a model to"));
    assert!(fresh.exists());
}
