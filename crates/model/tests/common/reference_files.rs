//! Checks of a generated format reference (a Markdown file and a JSON Schema
//! made by `stormsim_model::schema_doc`), shared by the model's and the sweep
//! file's reference tests: the committed files are what the types give now,
//! the Markdown covers the schema and its links lead somewhere, and a
//! document fits the schema.
//!
//! Included by path (`#[path = ...] mod reference_files;`) from each crate's
//! `tests/reference_doc.rs`.
#![allow(dead_code)]

use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use stormsim_model::schema_doc::{heading_anchor, Reference};

/// The workspace root (the including crate's manifest folder is two below).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Fails unless the committed files of `reference` are what its types give now, showing the first line that differs
/// and the command that regenerates them; and unless the committed schema,
/// its `$comment` aside, is the types' schema.
pub fn assert_committed(reference: &Reference) {
    for (relative, expected) in reference.files() {
        assert_file_is(
            reference,
            &workspace_root().join(relative),
            relative,
            &expected,
        );
    }
    let mut committed: Value = serde_json::from_str(&reference.json_schema()).unwrap();
    committed.as_object_mut().unwrap().remove("$comment");
    assert_eq!(committed, (reference.schema)());
}

fn assert_file_is(reference: &Reference, path: &Path, relative: &str, expected: &str) {
    let regenerate = reference.regenerate;
    let committed = match fs::read_to_string(path) {
        Ok(text) => text.replace("\r\n", "\n"),
        Err(e) => panic!("{relative} cannot be read ({e}); generate it with `{regenerate}`"),
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
        "{relative} is out of date with {}: regenerate it with `{regenerate}` and commit \
         the result.\nFirst difference, line {line}:\n  committed: {old}\n  generated: {new}",
        reference.source
    );
}

/// Fails unless the Markdown of `reference` has a table row for every field
/// (more than `fields` of them), a section for every type, linked to, and
/// in-page links (more than `links`) that lead to its headings.
pub fn assert_markdown_covers_the_schema(reference: &Reference, fields: usize, links: usize) {
    let markdown = (reference.markdown)();
    let names = reference.property_names();
    assert!(names.len() > fields, "too few fields found: {names:?}");
    assert_a_row_per_field(&markdown, &names);
    assert_a_section_per_type(&markdown, &(reference.schema)());
    assert_links_lead_to_headings(&markdown, links);
}

/// Fails unless `markdown` has a table row for every field in `names`.
fn assert_a_row_per_field(markdown: &str, names: &[String]) {
    for name in names {
        assert!(
            markdown.contains(&format!("| `{name}` |")),
            "the reference has no table row for the field `{name}`"
        );
    }
}

/// Fails unless `markdown` has a section for the root type and every
/// definition of `schema`, and links to each.
fn assert_a_section_per_type(markdown: &str, schema: &Value) {
    let root = schema["title"].as_str().unwrap();
    let defs = schema["$defs"].as_object().unwrap();
    for name in std::iter::once(root).chain(defs.keys().map(String::as_str)) {
        assert!(
            markdown.lines().any(|l| l == format!("## {name}")),
            "the reference has no section for {name}"
        );
        assert!(
            markdown.contains(&format!("](#{})", heading_anchor(name))),
            "nothing in the reference links to {name}"
        );
    }
}

/// Fails unless every in-page link of `markdown` leads to one of its headings,
/// no two headings share an anchor, and there are more than `at_least` links.
fn assert_links_lead_to_headings(markdown: &str, at_least: usize) {
    let mut anchors = Vec::new();
    let mut in_code = false;
    for line in markdown.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        }
        if !in_code && line.starts_with('#') {
            let anchor = heading_anchor(line.trim_start_matches('#').trim());
            assert!(
                !anchors.contains(&anchor),
                "two headings have the anchor #{anchor}"
            );
            anchors.push(anchor);
        }
    }
    let mut rest = markdown;
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
    assert!(links > at_least, "too few links: {links}");
}

/// The problems of `value` against `schema` (the subset of JSON Schema that
/// schemars emits for the format's types), each with its JSON path.
pub fn schema_problems(schema: &Value, value: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    check(schema, schema, value, "", &mut problems);
    problems
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
