//! The committed sweep-file reference (`docs/sweep-format.md`) and JSON Schema
//! (`docs/sweep.schema.json`) are what the serde types give now; every example
//! in the reference loads and is checked against the model it names, one per
//! kind of design; the bundled sweep files fit the schema.

#[path = "../../model/tests/common/reference_files.rs"]
mod reference_files;

use reference_files::{schema_problems, workspace_root};
use serde_json::Value;
use std::fs;
use stormsim_sweep::reference::{
    self, Example, BUNDLED_SWEEPS, EXAMPLES, EXAMPLE_MODEL, REFERENCE,
};
use stormsim_sweep::spec::DesignSpec;
use stormsim_sweep::Sweep;

#[test]
fn committed_files_are_up_to_date() {
    reference_files::assert_committed(&REFERENCE);
}

#[test]
fn markdown_covers_the_schema() {
    reference_files::assert_markdown_covers_the_schema(&REFERENCE, 20, 10);
}

/// Loads `example` as `stormsim sweep` and `stormsim check` do: saved beside
/// a copy of the model it names, in a folder of its own.
fn load(example: &Example) -> Sweep {
    let dir = tempfile::tempdir().unwrap();
    fs::copy(
        workspace_root().join("models").join(EXAMPLE_MODEL),
        dir.path().join(EXAMPLE_MODEL),
    )
    .unwrap();
    let path = dir.path().join(example.file);
    fs::write(&path, example.text).unwrap();
    Sweep::load(&path).unwrap_or_else(|e| panic!("{}: {e}", example.file))
}

#[test]
fn every_example_fits_the_schema_and_loads_with_its_points() {
    let schema = reference::schema();
    for example in &EXAMPLES {
        let doc: Value =
            serde_json::from_str(example.text).unwrap_or_else(|e| panic!("{}: {e}", example.file));
        assert_eq!(
            schema_problems(&schema, &doc),
            Vec::<String>::new(),
            "{}",
            example.file
        );
        let sweep = load(example);
        assert_eq!(
            format!("{}.sweep.json", sweep.spec.name),
            example.file,
            "an example is shown under its own name"
        );
        assert_eq!(
            sweep.points.len(),
            example.points,
            "{}: the number of points its text says",
            example.file
        );
        assert!(
            reference::markdown().contains(example.text),
            "{} is not in the reference",
            example.file
        );
    }
}

/// What kind of design an example shows, from what it loads as.
fn design_of(sweep: &Sweep) -> &'static str {
    let spec = &sweep.spec;
    if spec.search.is_some() {
        return "search";
    }
    match spec.design {
        DesignSpec::Random { .. } => "random",
        DesignSpec::LatinHypercube { .. } => "latin_hypercube",
        DesignSpec::Grid if spec.axes.iter().any(|a| a.zip.is_some()) => "zip",
        DesignSpec::Grid
            if spec.axes.iter().any(|a| a.variants.is_some())
                && spec.axes.iter().any(|a| a.path.is_some()) =>
        {
            "numeric axis × variants"
        }
        DesignSpec::Grid => "grid",
    }
}

#[test]
fn the_examples_show_one_of_each_design() {
    let designs: Vec<&str> = EXAMPLES.iter().map(|e| design_of(&load(e))).collect();
    assert_eq!(
        designs,
        [
            "grid",
            "zip",
            "numeric axis × variants",
            "random",
            "latin_hypercube",
            "search"
        ]
    );
}

/// The search example finds the crossing its text says: B answers in 10 ms
/// or in 400 ms, so 90% of users succeed once the gateway waits for the slow
/// answers and the 2.5 ms the hops add.
#[test]
fn the_search_example_finds_the_tipping_point_it_states() {
    let example = EXAMPLES
        .iter()
        .find(|e| e.text.contains("\"search\""))
        .expect("a search example");
    let sweep = load(example);
    let result = sweep
        .search(&|_| {})
        .unwrap_or_else(|p| panic!("{}: {p}", example.file));
    let (low, high) = result.bracket;
    assert!(low < 402.5 && 402.5 < high, "bracket {low}..{high}");
    let stated = format!(
        "between {low:.1} ms and {high:.1} ms in {} probes",
        result.probes.len()
    );
    assert!(
        example
            .about
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .contains(&stated),
        "the example does not say {stated:?}"
    );
}

#[test]
fn the_bundled_sweep_files_fit_the_schema_and_are_all_listed() {
    let schema = reference::schema();
    let mut found: Vec<String> = fs::read_dir(workspace_root().join("models"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".sweep.json"))
        .collect();
    found.sort();
    let mut listed: Vec<String> = BUNDLED_SWEEPS.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(
        found, listed,
        "reference::BUNDLED_SWEEPS lists models/*.sweep.json"
    );
    for name in found {
        let text = fs::read_to_string(workspace_root().join("models").join(&name)).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            schema_problems(&schema, &doc),
            Vec::<String>::new(),
            "{name}"
        );
    }
}
