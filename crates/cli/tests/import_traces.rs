//! `stormsim import otlp|jaeger`: the binary on trace files writes a model
//! that `stormsim check` accepts, says what it inferred on stderr, exits 2
//! with every problem's path on bad input, and never replaces a file
//! without `--force`.

mod common;

use common::{read, root, stormsim};
use std::path::PathBuf;

fn data(name: &str) -> PathBuf {
    root().join("crates/import/tests/data/traces").join(name)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn otlp_and_jaeger_files_import_as_models_that_check() {
    let dir = tempfile::tempdir().unwrap();
    for (source, file) in [("otlp", "shop.otlp.jsonl"), ("jaeger", "shop.jaeger.json")] {
        let out = dir.path().join(format!("{source}.json"));
        let o = stormsim(
            &[
                "import",
                source,
                data(file).to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ],
            &[],
        );
        let stderr = text(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{source}: {stderr}");
        assert!(stderr.contains("read 732 spans"), "{source}: {stderr}");
        assert!(
            stderr.contains("edge checkout → payments: 1.075 calls per request"),
            "{stderr}"
        );
        assert!(stderr.contains("wrote a model to"), "{stderr}");
        let model: serde_json::Value = serde_json::from_str(&read(&out)).unwrap();
        assert_eq!(model["workloads"][0]["target"], "frontend");
        let c = stormsim(&["check", out.to_str().unwrap()], &[]);
        assert_eq!(
            c.status.code(),
            Some(0),
            "{}{}",
            text(&c.stdout),
            text(&c.stderr)
        );
    }
}

#[test]
fn bad_input_exits_2_with_every_problem_at_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.jsonl");
    let good = std::fs::read_to_string(data("shop.otlp.jsonl")).unwrap();
    let first = good.lines().next().unwrap();
    let broken = first.replacen("\"startTimeUnixNano\":\"", "\"startTimeUnixNano\":\"x", 1);
    std::fs::write(&bad, format!("{first}\n{broken}\nnot json\n")).unwrap();
    let o = stormsim(&["import", "otlp", bad.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(2));
    let stderr = text(&o.stderr);
    assert!(
        stderr.contains("at line 2: resourceSpans[0].scopeSpans[0].spans[0].startTimeUnixNano:"),
        "{stderr}"
    );
    assert!(stderr.contains("at line 3: not JSON"), "{stderr}");
    assert!(o.stdout.is_empty());

    let o = stormsim(
        &[
            "import",
            "jaeger",
            data("shop.otlp.jsonl").to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
}

#[test]
fn out_never_replaces_a_file_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("model.json");
    std::fs::write(&out, "mine").unwrap();
    let file = data("shop.jaeger.json");
    let args = [
        "import",
        "jaeger",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let o = stormsim(&args, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--force"), "{}", text(&o.stderr));
    assert_eq!(read(&out), "mine");
    let o = stormsim(&[&args[..], &["--force"]].concat(), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(read(&out).contains("\"workloads\""));
}

/// `import --out` writes the model with the mode a file written directly
/// gets (0644 under umask 022), not a temporary file's 0600; and the line
/// that sums up spans past the listed ones names no empty file or path.
#[test]
fn regression_import_output_mode_0600() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let grpc = dir.path().join("grpc.json");
    std::fs::write(
        &grpc,
        r#"{"methodConfig":[{"name":[{"service":"a.B"}],"timeout":"1s"}]}"#,
    )
    .unwrap();
    let out = dir.path().join("model.json");
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg("umask 022 && exec \"$0\" import grpc \"$1\" --out \"$2\"")
        .args([
            env!("CARGO_BIN_EXE_stormsim"),
            grpc.to_str().unwrap(),
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644, "{mode:o}");

    // Every span's parent missing: ten listed, the rest summed up.
    let mut doc: serde_json::Value =
        serde_json::from_str(&read(&data("shop.jaeger.json"))).unwrap();
    for trace in doc["data"].as_array_mut().unwrap() {
        for span in trace["spans"].as_array_mut().unwrap() {
            let id = span["traceID"].clone();
            span["references"] = serde_json::json!([
                {"refType": "CHILD_OF", "traceID": id, "spanID": "ffffffffffffffff"}]);
        }
    }
    let orphans = dir.path().join("orphans.jaeger.json");
    std::fs::write(&orphans, doc.to_string()).unwrap();
    let o = stormsim(&["import", "jaeger", orphans.to_str().unwrap()], &[]);
    let stderr = text(&o.stderr);
    assert!(
        stderr.contains("\nwarning: not imported: 722 more spans"),
        "{stderr}"
    );
    assert!(!stderr.contains(" at :"), "{stderr}");
}
