//! Copies of a workload (`count`): the same model, variant for variant and
//! change for change, as the copies written out one by one.

mod common;

use common::base;
use serde_json::{json, Value};
use stormsim_model::{load_model, LoadedModel, ModelError};

fn bundled(name: &str) -> Value {
    let path = format!("{}/../../models/{name}.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn load(doc: &Value) -> LoadedModel {
    load_model(&doc.to_string(), &[], None).unwrap_or_else(|e| panic!("{e:?}"))
}

/// The problems of loading `doc`, as printed (none if it loads).
fn problems(doc: &Value) -> Vec<String> {
    match load_model(&doc.to_string(), &[], None) {
        Ok(_) => vec![],
        Err(ModelError { problems }) => problems.iter().map(ToString::to_string).collect(),
    }
}

/// `doc` with every workload that has a `count` written out as that many
/// workloads named `name-01`…, as a model without copies would list them.
fn written_out(doc: &Value) -> Value {
    let mut doc = doc.clone();
    let mut listed = Vec::new();
    for w in doc["workloads"].as_array().unwrap() {
        let Some(count) = w.get("count").and_then(Value::as_u64) else {
            listed.push(w.clone());
            continue;
        };
        for k in 1..=count {
            let mut copy = w.clone();
            let o = copy.as_object_mut().unwrap();
            o.remove("count");
            o.insert(
                "name".into(),
                json!(format!("{}-{k:02}", w["name"].as_str().unwrap())),
            );
            listed.push(copy);
        }
    }
    doc["workloads"] = Value::Array(listed);
    doc
}

/// What a run of `model` is a function of: the model, but the names its
/// workloads have in the file (a copy's is its workload's, for messages).
fn runs_as(model: &stormsim_model::Model) -> String {
    let mut model = model.clone();
    for (w, id) in model.workloads.iter_mut().zip(model.workload_ids.iter()) {
        std::sync::Arc::make_mut(w).model_name = id.name.clone();
    }
    format!("{model:?}")
}

/// The Catalog incident's 20 clients as one workload with `count: 20` load
/// as the same models as the 20 written out: every variant and every
/// timeline change (a run is a function of the model and the seed, so the
/// same models give the same bytes).
#[test]
fn the_incident_with_copies_is_the_incident_written_out() {
    let mut short = bundled("catalog-incident");
    assert_eq!(short["workloads"].as_array().unwrap().len(), 1);
    assert_eq!(short["workloads"][0]["count"], json!(20));
    // The bundled incident reports its copies summed, as one client: that
    // changes its outputs only (tests/summed_copies.rs in the simulator), so
    // the models compared here are those of the copies reported each.
    assert_eq!(short["workloads"][0]["report_copies"], json!("summed"));
    short["workloads"][0]
        .as_object_mut()
        .unwrap()
        .remove("report_copies");
    let (a, b) = (load(&short), load(&written_out(&short)));
    assert_eq!(a.variants.len(), b.variants.len());
    for (va, vb) in a.variants.iter().zip(&b.variants) {
        assert_eq!(runs_as(&va.model), runs_as(&vb.model), "{}", va.name);
        let changes = |v: &stormsim_model::Variant| -> Vec<String> {
            v.changes
                .iter()
                .map(|c| format!("{} {}", c.at.as_nanos(), runs_as(&c.model)))
                .collect()
        };
        assert_eq!(changes(va), changes(vb), "{}", va.name);
        // Each copy keeps the name the model gives it, for messages.
        assert!(va.model.workloads.iter().all(|w| w.model_name == "client"));
    }
    let names: Vec<&str> = a.variants[0]
        .model
        .workload_ids
        .iter()
        .map(|w| w.name.as_str())
        .collect();
    assert_eq!(names.len(), 20);
    assert_eq!((names[0], names[19]), ("client-01", "client-20"));
}

#[test]
fn copies_are_named_with_as_many_digits_as_their_count() {
    let mut doc = base();
    doc["workloads"][0]["count"] = json!(100);
    let loaded = load(&doc);
    let names: Vec<&str> = loaded.variants[0]
        .model
        .workload_ids
        .iter()
        .map(|w| w.name.as_str())
        .collect();
    assert_eq!(
        (names[0], names[9], names[99]),
        ("users-001", "users-010", "users-100")
    );
}

#[test]
fn a_bad_count_or_a_taken_name_is_an_error() {
    let mut doc = base();
    doc["workloads"][0]["count"] = json!(0);
    assert_eq!(
        problems(&doc),
        ["workloads[0].count: expected 1 to 1000 copies, got 0"]
    );
    doc["workloads"][0]["count"] = json!(2);
    let mut other = doc["workloads"][0].clone();
    other["name"] = json!("users-02");
    other.as_object_mut().unwrap().remove("count");
    doc["workloads"].as_array_mut().unwrap().push(other);
    let p = problems(&doc);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].starts_with("workloads: two workloads are named \"users-02\""),
        "{p:?}"
    );
}

#[test]
fn summed_copies_need_copies_and_a_name_of_their_own() {
    let mut doc = base();
    doc["workloads"][0]["report_copies"] = json!("summed");
    assert_eq!(
        problems(&doc),
        ["workloads[0].report_copies: only a workload with `count` has copies to sum"]
    );
    // `a-01` summed is reported as `a-01`, the name of `a`'s first copy.
    doc["workloads"][0]["name"] = json!("a-01");
    doc["workloads"][0]["count"] = json!(2);
    let mut other = doc["workloads"][0].clone();
    other["name"] = json!("a");
    other["report_copies"] = json!("each");
    doc["workloads"].as_array_mut().unwrap().push(other);
    let p = problems(&doc);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].starts_with("workloads: two workloads are reported as \"a-01\""),
        "{p:?}"
    );
    doc["workloads"][1]["report_copies"] = json!("summed");
    assert_eq!(problems(&doc), Vec::<String>::new());
    let loaded = load(&doc);
    assert_eq!(*loaded.variants[0].model.reported_workloads, ["a-01", "a"]);
    assert_eq!(loaded.variants[0].model.workloads.len(), 4);
}
