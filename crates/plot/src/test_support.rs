//! What the renderers' unit tests share: writing an example for a person to
//! look at, the checks every chart passes, and reading the font sizes and
//! texts back out of an SVG.

use std::path::PathBuf;

/// Writes `svg` under `target/plot-example/` for inspection (`rsvg-convert
/// -w 1400 target/plot-example/NAME -o NAME.png`). Failures are ignored: the
/// file is a convenience, not what a test checks.
pub(crate) fn save(name: &str, svg: &str) {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    let dir = target.join("plot-example");
    if std::fs::create_dir_all(&dir).is_ok() {
        let _ = std::fs::write(dir.join(name), svg);
    }
}

/// Every `font-size` the SVG sets.
pub(crate) fn font_sizes(svg: &str) -> Vec<f64> {
    svg.split("font-size=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next()?.parse().ok())
        .collect()
}

/// The text of every `<text>` element, trimmed, after checking that `svg`
/// parses as XML with an `<svg>` root: what a reader of the chart sees.
pub(crate) fn svg_texts(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).expect("the chart is well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or_default().trim().to_string())
        .collect()
}

/// The checks every chart passes: a whole SVG document, no non-finite number
/// in any attribute, and no text under 14 px.
pub(crate) fn assert_well_formed(svg: &str) {
    assert!(svg.starts_with("<svg"), "{}", &svg[..80.min(svg.len())]);
    assert!(svg.trim_end().ends_with("</svg>"));
    // Attribute values (every other piece between quotes) hold numbers only.
    for value in svg.split('"').skip(1).step_by(2) {
        assert!(
            !value.contains("NaN") && !value.contains("inf"),
            "non-finite number in {value:?}"
        );
    }
    let sizes = font_sizes(svg);
    assert!(sizes.iter().all(|s| *s >= 14.0), "{sizes:?}");
}
