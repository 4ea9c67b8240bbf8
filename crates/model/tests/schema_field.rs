//! `$schema` at the top of a model file names the JSON Schema for editors: it
//! is accepted (unknown fields are otherwise errors), changes nothing the
//! simulation sees, and is checked like any field.

use std::fs;
use std::path::Path;
use stormsim_model::{load_model, LoadedModel, Problem};

fn bundled(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../models")
        .join(name);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `text` (a JSON object) with `"$schema": VALUE` as its first field, as a
/// file written for an editor has it.
fn with_schema(text: &str, value: &str) -> String {
    let open = text.find('{').expect("a JSON object");
    format!(
        "{}{{\n  \"$schema\": {value},{}",
        &text[..open],
        &text[open + 1..]
    )
}

fn problems(text: &str) -> Vec<Problem> {
    match load_model(text, &[], None) {
        Ok(_) => Vec::new(),
        Err(e) => e.problems,
    }
}

/// Everything a run is made from: every variant's checked model and timeline.
fn what_runs(loaded: &LoadedModel) -> String {
    format!(
        "{} {} {} {:?} {:?}",
        loaded.name, loaded.description, loaded.seed, loaded.variants, loaded.selections
    )
}

#[test]
fn a_model_with_schema_loads_as_without() {
    for name in ["deadline-chain.json", "catalog-incident.json"] {
        let text = bundled(name);
        let plain = load_model(&text, &[], None).unwrap();
        let annotated = with_schema(&text, r#""../docs/model.schema.json""#);
        let loaded = load_model(&annotated, &[], None).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(what_runs(&loaded), what_runs(&plain), "{name}");
        // `null` is the field left out, as for every optional field.
        let loaded = load_model(&with_schema(&text, "null"), &[], None).unwrap();
        assert_eq!(what_runs(&loaded), what_runs(&plain), "{name}");
    }
}

#[test]
fn a_schema_that_is_not_a_string_is_refused_at_its_path() {
    let text = bundled("deadline-chain.json");
    for value in ["3", "true", r#"{"$ref": "model.schema.json"}"#, r#"["a"]"#] {
        let found = problems(&with_schema(&text, value));
        assert_eq!(found.len(), 1, "$schema {value}: {found:?}");
        assert_eq!(found[0].path, "$schema", "$schema {value}: {found:?}");
        assert!(
            found[0].message.contains("expected a string"),
            "$schema {value}: {found:?}"
        );
    }
}

#[test]
fn a_schema_written_twice_is_a_duplicate_key() {
    let text = bundled("deadline-chain.json");
    let twice = with_schema(
        &with_schema(&text, r#""../docs/model.schema.json""#),
        r#""https://example.com/model.schema.json""#,
    );
    let found = problems(&twice);
    assert!(
        found
            .iter()
            .any(|p| p.path == "$schema" && p.message.contains("duplicate key")),
        "{found:?}"
    );
}
