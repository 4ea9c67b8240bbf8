//! `$schema` at the top of a sweep file (or of its model) names the JSON
//! Schema for editors: it is accepted, changes no result and no recorded
//! input, and is checked like any field.

use serde_json::{json, Value};
use std::fs;
use std::path::Path;
use stormsim_model::Problem;
use stormsim_sweep::inputs::Inputs;
use stormsim_sweep::{Sweep, SweepError};

fn deadline_chain() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/deadline-chain.json");
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

/// `doc` with `$schema` as its first field.
fn with_schema(doc: &Value, schema: Value) -> Value {
    let mut fields = serde_json::Map::new();
    fields.insert("$schema".into(), schema);
    fields.extend(doc.as_object().unwrap().clone());
    Value::Object(fields)
}

fn sweep_over(model: Value) -> Value {
    json!({
        "name": "timeouts",
        "model": model,
        "variant": "per-tier-timeouts",
        "replications": 2,
        "axes": [{"path": "services[gateway].steps[A].timeout_ms", "values": [250, 500]}]
    })
}

/// Loads `sweep` saved beside `model` (as `m.json`).
fn load(dir: &Path, name: &str, sweep: &Value, model: &Value) -> Result<Sweep, SweepError> {
    fs::write(dir.join("m.json"), model.to_string()).unwrap();
    let path = dir.join(name);
    fs::write(&path, sweep.to_string()).unwrap();
    Sweep::load(&path)
}

/// Every run's seed and summary row.
fn results(sweep: &Sweep) -> Vec<(u64, stormsim_sweep::Row)> {
    sweep
        .run(&|_| {})
        .into_iter()
        .map(|r| (r.seed, r.row))
        .collect()
}

#[test]
fn a_sweep_and_model_with_schema_run_as_without() {
    let dir = tempfile::tempdir().unwrap();
    let model = deadline_chain();
    let plain = load(
        dir.path(),
        "plain.sweep.json",
        &sweep_over("m.json".into()),
        &model,
    )
    .unwrap();
    let expected = results(&plain);
    assert_eq!(expected.len(), 4);
    let annotated_model = with_schema(&model, "../docs/model.schema.json".into());
    let annotated_sweep = with_schema(
        &sweep_over("m.json".into()),
        "../docs/sweep.schema.json".into(),
    );
    let annotated = load(
        dir.path(),
        "annotated.sweep.json",
        &annotated_sweep,
        &annotated_model,
    )
    .unwrap();
    assert_eq!(results(&annotated), expected);
    // Nor is it an input of the results: `--resume` and `merge` take the
    // annotated files for the same sweep.
    assert_eq!(
        Inputs::of(&annotated, 0..annotated.runs()),
        Inputs::of(&plain, 0..plain.runs())
    );
    // Inline, the model's own `$schema` is accepted too.
    let inline = with_schema(
        &sweep_over(annotated_model),
        "../docs/sweep.schema.json".into(),
    );
    let inline = load(dir.path(), "inline.sweep.json", &inline, &model).unwrap();
    assert_eq!(results(&inline), expected);
}

/// The problems of `sweep` (saved beside `model`), which must not load.
fn refused(dir: &Path, sweep: &Value, model: &Value) -> Vec<Problem> {
    match load(dir, "s.sweep.json", sweep, model) {
        Err(SweepError::Invalid(e)) => e.problems,
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("loaded: {sweep}"),
    }
}

#[test]
fn a_schema_that_is_not_a_string_is_refused_at_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let model = deadline_chain();
    for value in [json!(3), json!(["a"]), json!({"$ref": "sweep.schema.json"})] {
        let sweep = with_schema(&sweep_over("m.json".into()), value.clone());
        let problems = refused(dir.path(), &sweep, &model);
        assert_eq!(problems.len(), 1, "{value}: {problems:?}");
        assert_eq!(problems[0].path, "sweep file: $schema", "{problems:?}");
        assert!(
            problems[0].message.contains("expected a string"),
            "{problems:?}"
        );
        // The model's, inline: at its path under `model`.
        let sweep = sweep_over(with_schema(&model, value.clone()));
        let problems = refused(dir.path(), &sweep, &model);
        assert_eq!(problems.len(), 1, "{value}: {problems:?}");
        assert_eq!(problems[0].path, "model: $schema", "{problems:?}");
    }
}
