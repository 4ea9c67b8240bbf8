//! The committed model-format reference (`docs/model-format.md`) and JSON Schema
//! (`docs/model.schema.json`) are what the serde types give now, the reference
//! covers the whole schema, and the example models fit the schema.

#[path = "common/reference_files.rs"]
mod reference_files;

use reference_files::workspace_root;
use serde_json::Value;
use std::fs;
use std::path::PathBuf;
use stormsim_model::reference::{self, REFERENCE};
use stormsim_model::ParamPath;

#[test]
fn committed_files_are_up_to_date() {
    reference_files::assert_committed(&REFERENCE);
}

#[test]
fn markdown_covers_the_schema() {
    reference_files::assert_markdown_covers_the_schema(&REFERENCE, 20, 20);
}

#[test]
fn markdown_renders_optional_fields_maps_and_tagged_enums() {
    let md = reference::markdown();
    // Option<f64>: a number, optional (not "number or null").
    assert!(md.contains("| `timeout_ms` | number | optional |"), "{md}");
    // Option<string enum>: its values inline, and a link to its section.
    assert!(md
        .contains("| `on_cancel` | one of: `finish`, `stop` ([OnCancel](#oncancel)) | optional |"));
    // A map of overrides.
    assert!(md.contains("| `set` | object: any keys, any JSON values | default `{}` |"));
    // Tagged enums: one sub-section per kind, with its own fields.
    for heading in [
        "### DistSpec: `\"kind\": \"lognormal\"`",
        "### ArrivalSpec: `\"kind\": \"at_once\"`",
        "### BackoffSpec: `\"kind\": \"fixed\"`",
    ] {
        assert!(md.lines().any(|l| l == heading), "no heading {heading}");
    }
    assert!(md.contains("| `p99_ms` | number | **required** |"));
    // Defaults from `#[serde(default = ...)]`.
    assert!(md.contains("| `seed` | integer ≥ 0 | default `1` |"));
    assert!(md.contains("| `propagate` | boolean (`true` or `false`) | default `true` |"));
}

fn schema_problems(doc: &Value) -> Vec<String> {
    reference_files::schema_problems(&reference::schema(), doc)
}

fn example_models() -> Vec<(PathBuf, Value)> {
    let dir = workspace_root().join("models");
    let mut paths: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        // Sweep files name a model; they are not models.
        .filter(|p| !p.to_string_lossy().ends_with(".sweep.json"))
        .collect();
    paths.sort();
    assert!(
        paths.iter().any(|p| p.ends_with("deadline-chain.json")),
        "models/deadline-chain.json is missing"
    );
    paths
        .into_iter()
        .map(|p| {
            let text = fs::read_to_string(&p).unwrap();
            let doc =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, doc)
        })
        .collect()
}

#[test]
fn deadline_chain_top_level_keys_are_root_properties() {
    let text = fs::read_to_string(workspace_root().join("models/deadline-chain.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let schema = reference::schema();
    let properties = schema["properties"].as_object().unwrap();
    for key in doc.as_object().unwrap().keys() {
        assert!(
            properties.contains_key(key),
            "top-level key {key:?} is not in the schema"
        );
    }
    for required in schema["required"].as_array().unwrap() {
        assert!(
            doc.get(required.as_str().unwrap()).is_some(),
            "missing {required}"
        );
    }
}

#[test]
fn every_example_model_and_variant_fits_the_schema() {
    for (path, doc) in example_models() {
        let name = path.display();
        assert_eq!(schema_problems(&doc), Vec::<String>::new(), "{name}");
        assert!(
            stormsim_model::parse_spec(&doc).is_ok(),
            "{name}: serde rejects it"
        );
        // Each variant's overrides, applied, still fit: their paths name fields
        // of the format and their values have the right shapes.
        for variant in doc["variants"].as_array().into_iter().flatten() {
            let mut applied = doc.clone();
            for (p, value) in variant["set"].as_object().into_iter().flatten() {
                ParamPath::parse(p)
                    .and_then(|p| p.set(&mut applied, value.clone()))
                    .unwrap_or_else(|e| panic!("{name}, variant {}: {e}", variant["name"]));
            }
            assert_eq!(
                schema_problems(&applied),
                Vec::<String>::new(),
                "{name}, variant {}",
                variant["name"]
            );
        }
    }
}

#[test]
fn the_schema_check_agrees_with_serde_on_broken_models() {
    let text = fs::read_to_string(workspace_root().join("models/deadline-chain.json")).unwrap();
    let good: Value = serde_json::from_str(&text).unwrap();
    let breakages: [(&str, Value); 5] = [
        ("services[gateway].steps[A].timeout", Value::from(250)),
        ("services[B].steps[0].on_cancel", Value::from("abort")),
        (
            "network.one_way",
            serde_json::json!({"kind": "constant", "mean_ms": 1}),
        ),
        (
            "workloads[users].arrival",
            serde_json::json!({"kind": "bursty"}),
        ),
        ("limits", serde_json::json!({"max_events": -1})),
    ];
    for (path, value) in breakages {
        let mut doc = good.clone();
        ParamPath::parse(path)
            .unwrap()
            .set(&mut doc, value)
            .unwrap();
        assert!(
            !schema_problems(&doc).is_empty(),
            "the schema accepts {path}"
        );
        assert!(
            stormsim_model::parse_spec(&doc).is_err(),
            "serde accepts {path}"
        );
    }
}

/// An editor validating a model file against the schema accepts its
/// `$schema` (the schema's own `additionalProperties: false` would otherwise
/// flag it) and flags one that is not a string.
#[test]
fn the_schema_accepts_a_schema_field_that_is_a_string() {
    let text = fs::read_to_string(workspace_root().join("models/deadline-chain.json")).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    let fields = doc.as_object_mut().unwrap();
    fields.insert("$schema".into(), Value::from("../docs/model.schema.json"));
    assert_eq!(schema_problems(&doc), Vec::<String>::new());
    doc["$schema"] = Value::from(3);
    assert_eq!(
        schema_problems(&doc),
        ["$schema: expected string or null, got 3"]
    );
}
