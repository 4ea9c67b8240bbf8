//! A model loaded from its parsed document (as a sweep loads each point's)
//! is the model loaded from its text, for every bundled model: the same
//! variants, timelines and seed, and the same problems for a bad one.

use serde_json::json;
use std::path::Path;
use stormsim_model::{load_model_document, load_model_in, parse_json};

fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .parent()
        .unwrap()
}

#[test]
fn a_document_loads_as_its_text_does() {
    let mut models: Vec<_> = ["models", "models/bench"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(workspace_root().join(dir)).unwrap())
        .map(|entry| entry.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name.ends_with(".json") && !name.ends_with(".sweep.json")
        })
        .collect();
    models.sort();
    assert!(models.len() > 10, "{models:?}");
    for path in models {
        let text = std::fs::read_to_string(&path).unwrap();
        let dir = path.parent();
        let sets = [("seed".to_string(), json!(7))];
        let from_text = load_model_in(&text, dir, &sets, Some(3));
        let from_doc = load_model_document(parse_json(&text).unwrap(), dir, &sets, Some(3));
        assert_eq!(
            format!("{from_text:?}"),
            format!("{from_doc:?}"),
            "{}",
            path.display()
        );
    }
}

#[test]
fn a_bad_document_has_the_problems_of_its_text() {
    let doc = json!({"name": "bad",
        "services": [{"name": "a", "workers": 0, "steps": [{"work": {"kind": "constant", "ms": -1}}]}],
        "workloads": [{"name": "u", "target": "nowhere",
                       "arrival": {"kind": "poisson", "rate_per_s": 10}}]});
    let from_text = load_model_in(&doc.to_string(), None, &[], None).unwrap_err();
    let from_doc = load_model_document(doc, None, &[], None).unwrap_err();
    assert!(from_text.problems.len() >= 2, "{from_text:?}");
    assert_eq!(from_text.problems, from_doc.problems);
}
