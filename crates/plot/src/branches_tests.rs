//! Tests of the branches chart on the parallel page's run and on degenerate
//! inputs. The rendered examples are written to `target/plot-example/` so a
//! person can look at them (`rsvg-convert -w 1400
//! target/plot-example/branches.svg -o branches.png`).

use crate::test_support::{assert_well_formed, save, svg_texts};
use crate::{render_branches_svg, BranchesChart, BranchesVariant, PercentileRow, PlotError};

fn row(name: &str, p50: f64, p99: f64) -> PercentileRow {
    PercentileRow {
        name: name.to_string(),
        p50_ms: Some(p50),
        p99_ms: Some(p99),
    }
}

fn variant(name: &str, whole: (f64, f64), branches: [(f64, f64); 3]) -> BranchesVariant {
    BranchesVariant {
        name: name.to_string(),
        whole: row("end to end", whole.0, whole.1),
        branches: ["inventory", "pricing", "reviews"]
            .iter()
            .zip(branches)
            .map(|(s, (p50, p99))| row(&format!("page → {s}"), p50, p99))
            .collect(),
    }
}

/// models/parallel-page.json, seed 1: waiting for all three branches, the
/// page's p99 is past reviews'; with reviews optional and cut at 60 ms, the
/// slowest branch is inventory.
fn parallel_page() -> BranchesChart {
    BranchesChart {
        title: "parallel-page: requests end to end against each parallel branch".into(),
        subtitle: "seed 1".into(),
        variants: vec![
            variant(
                "wait-for-all",
                (38.126, 141.492),
                [(20.406, 98.14), (15.675, 89.555), (25.797, 121.733)],
            ),
            variant(
                "reviews-optional",
                (38.257, 118.522),
                [(21.111, 100.762), (16.241, 92.963), (25.813, 60.0)],
            ),
        ],
    }
}

#[test]
fn parallel_page_is_a_readable_svg() {
    let chart = parallel_page();
    let svg = render_branches_svg(&chart).expect("renders");
    save("branches.svg", &svg);
    assert_well_formed(&svg);
    assert!(svg.contains("width=\"1400\""));
    let texts = svg_texts(&svg);
    let count = |text: &str| texts.iter().filter(|t| *t == text).count();
    // Each variant in the legend and as its group's title; one row of each
    // kind per variant.
    for v in &chart.variants {
        assert_eq!(count(&v.name), 2, "legend and group title of {}", v.name);
    }
    for name in [
        "end to end",
        "page → inventory",
        "page → pricing",
        "page → reviews",
    ] {
        assert_eq!(count(name), 2, "rows of {name}");
    }
    // Every bar's value, after it.
    for label in [
        "p50 38.1 ms",
        "p50 20.4 ms",
        "p99 98.1 ms",
        "p99 89.6 ms",
        "p99 122 ms",
        "p99 101 ms",
        "p99 60 ms",
    ] {
        assert_eq!(count(label), 1, "{label:?} in {texts:?}");
    }
    // The whole against its slowest branch: reviews, then inventory.
    assert_eq!(count("p99 141 ms · 19.8 ms over the slowest branch"), 1);
    assert_eq!(count("p99 119 ms · 17.8 ms over the slowest branch"), 1);
    assert_eq!(count("slowest branch: p99 122 ms"), 1);
    assert_eq!(count("slowest branch: p99 101 ms"), 1);
    assert_eq!(count("the slowest branch's p99 (dashed)"), 1);
    assert_eq!(count("Latency (ms)"), 1);
}

/// The bars of variant `i` are in its colour (p99) and a lighter shade
/// (p50), and the marker is a dashed line in the group.
#[test]
fn bars_have_their_variants_colours_and_the_marker_is_drawn() {
    let one = BranchesChart {
        variants: vec![parallel_page().variants[0].clone()],
        ..BranchesChart::default()
    };
    let svg = render_branches_svg(&one).expect("renders");
    // Blue, the first series colour: the swatches and the 4 p99 bars.
    assert!(
        svg.matches("fill=\"#0072B2\"").count() >= 4 + 2,
        "p99 bars in the variant's colour"
    );
    // The marker's dashes: short vertical segments in muted ink, 2 px wide,
    // from the group's title to its last row (and two in the legend).
    let dashes = svg
        .lines()
        .filter(|l| l.contains("stroke=\"#555555\" stroke-width=\"2\""))
        .count();
    assert!(dashes > 10, "{dashes} dashes");

    let two = parallel_page();
    let svg = render_branches_svg(&two).expect("renders");
    // The second variant's colour (orange) too.
    assert!(svg.contains("#E69F00"));
}

#[test]
fn same_input_gives_identical_bytes() {
    let a = render_branches_svg(&parallel_page()).expect("renders");
    let b = render_branches_svg(&parallel_page()).expect("renders");
    assert!(a == b, "two renders of the same chart differ");
}

#[test]
fn no_variants_or_too_many_is_an_error() {
    assert!(matches!(
        render_branches_svg(&BranchesChart::default()),
        Err(PlotError::NoVariants)
    ));
    let v = parallel_page().variants[0].clone();
    let many = BranchesChart {
        variants: (0..17)
            .map(|i| BranchesVariant {
                name: format!("v{i}"),
                ..v.clone()
            })
            .collect(),
        ..BranchesChart::default()
    };
    assert!(matches!(
        render_branches_svg(&many),
        Err(PlotError::TooManyVariants { count: 17, max: 16 })
    ));
}

#[test]
fn a_whole_faster_than_its_slowest_branch_says_so() {
    // Waiting for the first two of three: the page beats its slowest branch.
    let chart = BranchesChart {
        variants: vec![variant(
            "first-2-of-3",
            (20.0, 90.0),
            [(20.0, 98.0), (15.0, 89.0), (25.0, 120.0)],
        )],
        ..BranchesChart::default()
    };
    let texts = svg_texts(&render_branches_svg(&chart).expect("renders"));
    assert!(
        texts
            .iter()
            .any(|t| t == "p99 90 ms · 30 ms under the slowest branch"),
        "{texts:?}"
    );
}

#[test]
fn missing_values_and_odd_inputs_render() {
    let odd = BranchesChart {
        title: "odd".into(),
        subtitle: String::new(),
        variants: vec![
            // Nothing succeeded, and one branch never ended a call.
            BranchesVariant {
                name: "all failed".into(),
                whole: PercentileRow {
                    name: "end to end".into(),
                    p50_ms: None,
                    p99_ms: None,
                },
                branches: vec![
                    row("page → a", 0.0, 0.0),
                    PercentileRow {
                        name: "page → b".into(),
                        p50_ms: Some(f64::NAN),
                        p99_ms: None,
                    },
                    PercentileRow {
                        name: "page → c".into(),
                        p50_ms: Some(5.0),
                        p99_ms: None,
                    },
                ],
            },
            BranchesVariant {
                name: "no branches".into(),
                whole: row("end to end", 1.0, 2.0),
                branches: Vec::new(),
            },
            BranchesVariant {
                name: "a variant whose name goes on and on ".repeat(8),
                whole: row("end to end", 1e9, 1e12),
                branches: vec![row(
                    &"a-service-whose-name-is-far-too-long → for-its-column".repeat(3),
                    1e-6,
                    1e12,
                )],
            },
        ],
    };
    let svg = render_branches_svg(&odd).expect("renders");
    save("branches-odd.svg", &svg);
    assert_well_formed(&svg);
    let texts = svg_texts(&svg);
    assert!(svg.contains('…'), "long names are shortened");
    assert!(texts.iter().any(|t| t == "n/a: nothing measured"));
    assert!(texts
        .iter()
        .any(|t| t == "no branch of a parallel step measured"));
    assert!(texts.iter().any(|t| t == "p99 n/a"), "{texts:?}");
    // Without an end-to-end p99 there is nothing to compare with.
    assert!(texts.iter().any(|t| t == "p99 2 ms"), "{texts:?}");
}

#[test]
fn names_are_escaped() {
    let mut chart = parallel_page();
    chart.variants[0].name = "a<b & \"c\"".into();
    chart.variants[0].branches[0].name = "x → <y>".into();
    let svg = render_branches_svg(&chart).expect("renders");
    assert!(svg.contains("a&lt;b &amp;"));
    assert!(svg.contains("x → &lt;y&gt;"));
    assert!(!svg.contains("a<b") && !svg.contains("<y>"));
}
