//! Every chart committed under `outputs/` is well-formed SVG (parsed as XML,
//! not pattern-matched) and names its series: a run's comparison, load,
//! timeline, zombies, wasted-work and branches charts show every variant of its
//! `summary.json`, a sweep's chart its title and what it plots. The unit
//! tests check the renderers on made-up data; this checks what a reader of
//! the repository actually opens.

use std::path::{Path, PathBuf};

fn outputs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../outputs")
}

/// The text of every `<text>` element, trimmed, after checking that `path`
/// parses as XML with an `<svg>` root of positive size.
fn svg_texts(path: &Path) -> Vec<String> {
    let source = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let doc = roxmltree::Document::parse(&source)
        .unwrap_or_else(|e| panic!("{} is not well-formed XML: {e}", path.display()));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg", "{}", path.display());
    for side in ["width", "height"] {
        let px: f64 = root
            .attribute(side)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{} has no numeric {side}", path.display()));
        assert!(px > 0.0, "{} has {side} {px}", path.display());
    }
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or_default().trim().to_string())
        .collect()
}

/// Whether a text element names `series`: the name alone (a panel title, a
/// row of the comparison) or followed by a detail (`name · peak 40k/s`).
fn names(texts: &[String], series: &str) -> bool {
    texts
        .iter()
        .any(|t| t == series || t.starts_with(&format!("{series} ")))
}

/// The folders under `outputs/` that hold `file`.
fn folders_with(file: &str) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(outputs())
        .expect("outputs/ exists")
        .map(|e| e.expect("a readable entry").path())
        .filter(|d| d.join(file).is_file())
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn every_run_chart_is_well_formed_and_shows_every_variant() {
    let runs = folders_with("summary.json");
    assert!(runs.len() >= 8, "the bundled models' runs: {runs:?}");
    let mut charts = 0;
    for dir in runs {
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap())
                .unwrap_or_else(|e| panic!("{}/summary.json: {e}", dir.display()));
        let variants: Vec<&str> = summary["variants"]
            .as_array()
            .expect("a list of variants")
            .iter()
            .map(|v| v["variant"].as_str().expect("a variant name"))
            .collect();
        // Every run has these two; a model with a timeline, the third; a run
        // with zombie requests or wasted work, the next two; a model with
        // parallel steps, the last.
        for (chart, required) in [
            ("comparison.svg", true),
            ("load.svg", true),
            ("timeline.svg", false),
            ("zombies.svg", false),
            ("wasted.svg", false),
            ("branches.svg", false),
        ] {
            let path = dir.join(chart);
            if !path.exists() {
                assert!(!required, "{} is missing", path.display());
                continue;
            }
            let texts = svg_texts(&path);
            for v in &variants {
                assert!(
                    names(&texts, v),
                    "{} does not name variant {v:?}",
                    path.display()
                );
            }
            charts += 1;
        }
    }
    assert!(charts >= 16, "only {charts} charts checked");
}

#[test]
fn every_sweep_chart_is_well_formed_and_says_what_it_plots() {
    for dir in folders_with("sweep.svg") {
        let path = dir.join("sweep.svg");
        let texts = svg_texts(&path);
        let spec: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("sweep.json")).unwrap())
                .unwrap_or_else(|e| panic!("{}/sweep.json: {e}", dir.display()));
        // The metric the sweep file asks for, or one of the defaults.
        let series: Vec<String> = match spec["chart"]["metric"].as_str() {
            Some(metric) => vec![metric.to_string()],
            None => vec![
                "share of replications metastable".into(),
                "success rate".into(),
            ],
        };
        assert!(
            texts
                .iter()
                .any(|t| series.iter().any(|s| t.starts_with(s.as_str()))),
            "{} names none of {series:?}",
            path.display()
        );
        // A variants axis: a line per variant, named in the legend.
        for axis in spec["axes"].as_array().into_iter().flatten() {
            for variant in axis["variants"].as_array().into_iter().flatten() {
                let variant = variant.as_str().expect("a variant's name");
                assert!(
                    names(&texts, variant),
                    "{} does not name variant {variant:?}",
                    path.display()
                );
            }
        }
        assert!(
            texts
                .iter()
                .any(|t| t.contains(": the sweep") || t.contains(": phase diagram")),
            "{} has no title",
            path.display()
        );
    }
}

#[test]
fn every_search_chart_is_well_formed_and_marks_its_bracket() {
    let searches = folders_with("search.csv");
    assert!(!searches.is_empty(), "the bundled search's outputs");
    for dir in searches {
        let path = dir.join("search.svg");
        let texts = svg_texts(&path);
        let probes = std::fs::read_to_string(dir.join("search.csv"))
            .unwrap()
            .lines()
            .count()
            - 1;
        for k in 1..=probes {
            assert!(
                texts.contains(&k.to_string()),
                "{} does not number probe {k}",
                path.display()
            );
        }
        assert!(
            texts.iter().any(|t| t.starts_with("final bracket: ")),
            "{} does not mark its final bracket",
            path.display()
        );
    }
}
