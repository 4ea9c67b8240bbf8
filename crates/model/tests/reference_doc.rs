//! The committed model-format reference (`docs/model-format.md`) and JSON Schema
//! (`docs/model.schema.json`) are what the serde types give now, the reference
//! covers the whole schema, and the example models fit the schema.

use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use stormsim_model::reference::{self, MARKDOWN_PATH, REGENERATE, SCHEMA_PATH};
use stormsim_model::ParamPath;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Fails unless the committed file at `relative` is `expected`, showing the first
/// line that differs and how to regenerate.
fn assert_committed(relative: &str, expected: &str) {
    let path = workspace_root().join(relative);
    let committed = match fs::read_to_string(&path) {
        Ok(text) => text.replace("\r\n", "\n"),
        Err(e) => panic!("{relative} cannot be read ({e}); generate it with `{REGENERATE}`"),
    };
    if committed == expected {
        return;
    }
    let (line, old, new) = committed
        .lines()
        .map(Some)
        .chain(std::iter::repeat(None))
        .zip(expected.lines().map(Some).chain(std::iter::repeat(None)))
        .enumerate()
        .find(|(_, (a, b))| a != b)
        .map(|(i, (a, b))| {
            (
                i + 1,
                a.unwrap_or("<end of file>"),
                b.unwrap_or("<end of file>"),
            )
        })
        .unwrap_or((0, "<trailing newline>", "<trailing newline>"));
    panic!(
        "{relative} is out of date with crates/model/src/spec.rs: regenerate it with `{REGENERATE}` \
         and commit the result.\nFirst difference, line {line}:\n  committed: {old}\n  generated: {new}"
    );
}

#[test]
fn committed_markdown_is_up_to_date() {
    assert_committed(MARKDOWN_PATH, &reference::markdown());
}

#[test]
fn committed_schema_is_up_to_date() {
    assert_committed(SCHEMA_PATH, &reference::json_schema());
}

#[test]
fn committed_schema_is_the_schema_of_the_types() {
    let mut committed: Value = serde_json::from_str(&reference::json_schema()).unwrap();
    committed.as_object_mut().unwrap().remove("$comment");
    assert_eq!(committed, reference::schema());
}

#[test]
fn markdown_mentions_every_field() {
    let markdown = reference::markdown();
    let names = reference::property_names();
    assert!(names.len() > 20, "too few fields found: {names:?}");
    for name in names {
        assert!(
            markdown.contains(&format!("| `{name}` |")),
            "the reference has no table row for the field `{name}`"
        );
    }
}

#[test]
fn markdown_has_a_section_per_type() {
    let markdown = reference::markdown();
    let schema = reference::schema();
    let root = schema["title"].as_str().unwrap();
    let defs = schema["$defs"].as_object().unwrap();
    for name in std::iter::once(root).chain(defs.keys().map(String::as_str)) {
        assert!(
            markdown.lines().any(|l| l == format!("## {name}")),
            "the reference has no section for {name}"
        );
        assert!(
            markdown.contains(&format!("](#{})", reference::heading_anchor(name))),
            "nothing in the reference links to {name}"
        );
    }
}

#[test]
fn markdown_links_lead_to_headings() {
    let markdown = reference::markdown();
    let mut anchors = Vec::new();
    let mut in_code = false;
    for line in markdown.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        }
        if !in_code && line.starts_with('#') {
            let anchor = reference::heading_anchor(line.trim_start_matches('#').trim());
            assert!(
                !anchors.contains(&anchor),
                "two headings have the anchor #{anchor}"
            );
            anchors.push(anchor);
        }
    }
    let mut rest = markdown.as_str();
    let mut links = 0;
    while let Some(i) = rest.find("](#") {
        let after = &rest[i + 3..];
        let end = after.find(')').expect("a link ends");
        let target = &after[..end];
        assert!(
            anchors.iter().any(|a| a == target),
            "link to #{target}, which no heading has"
        );
        links += 1;
        rest = &after[end..];
    }
    assert!(links > 20, "too few links: {links}");
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

/// Checks `value` against `schema` (the subset of JSON Schema that schemars
/// emits for the model types), collecting problems with their JSON paths.
fn check(root: &Value, schema: &Value, value: &Value, path: &str, problems: &mut Vec<String>) {
    let at = if path.is_empty() { "(top level)" } else { path };
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let target = match r.strip_prefix("#/$defs/") {
            Some(name) => &root["$defs"][name],
            None if r == "#" => root,
            None => panic!("unexpected $ref {r}"),
        };
        assert!(!target.is_null(), "dangling $ref {r}");
        check(root, target, value, path, problems);
    }
    if let Some(c) = schema.get("const") {
        if c != value {
            problems.push(format!("{at}: expected {c}, got {value}"));
            return;
        }
    }
    for keyword in ["oneOf", "anyOf"] {
        let Some(alternatives) = schema.get(keyword).and_then(Value::as_array) else {
            continue;
        };
        let outcomes: Vec<Vec<String>> = alternatives
            .iter()
            .map(|alt| {
                let mut found = Vec::new();
                check(root, alt, value, path, &mut found);
                found
            })
            .collect();
        let passing = outcomes.iter().filter(|o| o.is_empty()).count();
        let ok = if keyword == "oneOf" {
            passing == 1
        } else {
            passing >= 1
        };
        if !ok {
            // Report the alternative chosen by the value's `kind`, if any.
            let chosen = alternatives.iter().position(|alt| {
                alt["properties"]["kind"]["const"] == value["kind"] && !value["kind"].is_null()
            });
            match chosen {
                Some(i) if passing == 0 => problems.extend(outcomes[i].iter().cloned()),
                _ => problems.push(format!(
                    "{at}: {value} matches {passing} of the {keyword} alternatives"
                )),
            }
        }
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !types.is_empty() {
        let fits = |t: &str| match t {
            "null" => value.is_null(),
            "boolean" => value.is_boolean(),
            "string" => value.is_string(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "array" => value.is_array(),
            "object" => value.is_object(),
            other => panic!("unexpected type {other}"),
        };
        if !types.iter().any(|t| fits(t)) {
            problems.push(format!(
                "{at}: expected {}, got {value}",
                types.join(" or ")
            ));
            return;
        }
    }
    if let (Some(min), Some(x)) = (
        schema.get("minimum").and_then(Value::as_f64),
        value.as_f64(),
    ) {
        if x < min {
            problems.push(format!("{at}: {x} is below the minimum {min}"));
        }
    }
    if let Value::Object(fields) = value {
        let properties = schema.get("properties").and_then(Value::as_object);
        for name in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = name.as_str().unwrap();
            if !fields.contains_key(name) {
                problems.push(format!("{at}: missing field `{name}`"));
            }
        }
        for (key, field_value) in fields {
            let field_path = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            match properties.and_then(|p| p.get(key)) {
                Some(field_schema) => check(root, field_schema, field_value, &field_path, problems),
                None => match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => {
                        problems.push(format!("{field_path}: unknown field"))
                    }
                    Some(extra @ Value::Object(_)) => {
                        check(root, extra, field_value, &field_path, problems)
                    }
                    _ => {}
                },
            }
        }
    }
    if let (Value::Array(items), Some(item_schema)) = (value, schema.get("items")) {
        for (i, item) in items.iter().enumerate() {
            check(root, item_schema, item, &format!("{path}[{i}]"), problems);
        }
    }
}

fn schema_problems(doc: &Value) -> Vec<String> {
    let schema = reference::schema();
    let mut problems = Vec::new();
    check(&schema, &schema, doc, "", &mut problems);
    problems
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
