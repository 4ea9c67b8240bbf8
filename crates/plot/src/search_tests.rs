//! Tests of the search chart on a realistic bisection and on degenerate
//! input. The rendered example is written to `target/plot-example/`
//! (`rsvg-convert -w 1400 target/plot-example/search.svg -o search.png`).

use crate::test_support::{assert_well_formed, save, svg_texts};
use crate::{render_search_svg, PlotError, SearchChart, SweepPoint};

/// The Catalog queue search: 9 probes of 3 replications each, the share
/// metastable with Wilson intervals, closing in on 3,383 to 3,422.
fn catalog_search() -> SearchChart {
    let below = (0.0, 0.5615);
    let above = (0.4385, 1.0);
    let probes = [
        (1000.0, 0.0, below),
        (6000.0, 1.0, above),
        (3500.0, 1.0, above),
        (2250.0, 0.0, below),
        (2875.0, 0.0, below),
        (3188.0, 0.0, below),
        (3344.0, 0.0, below),
        (3422.0, 0.6667, (0.2077, 0.9385)),
        (3383.0, 0.0, below),
    ]
    .map(|(x, mean, (lo, hi))| SweepPoint {
        x,
        mean,
        ci_low: Some(lo),
        ci_high: Some(hi),
    })
    .to_vec();
    SearchChart {
        title: "catalog-queue-search: where metastable crosses 0.5".into(),
        subtitle: "9 probes × 3 replications; 95% Wilson intervals".into(),
        parameter: "services[catalog].queue_capacity".into(),
        metric: "share of replications metastable".into(),
        probes,
        threshold: 0.5,
        brackets: vec![
            (1000.0, 6000.0),
            (1000.0, 3500.0),
            (2250.0, 3500.0),
            (2875.0, 3500.0),
            (3188.0, 3500.0),
            (3344.0, 3500.0),
            (3344.0, 3422.0),
            (3383.0, 3422.0),
        ],
        certain: false,
        y_range: Some((0.0, 1.0)),
    }
}

#[test]
fn a_realistic_search_numbers_every_probe_and_marks_its_bracket() {
    let chart = catalog_search();
    let svg = render_search_svg(&chart).expect("renders");
    save("search.svg", &svg);
    assert_well_formed(&svg);
    let texts = svg_texts(&svg);
    for text in [
        "catalog-queue-search: where metastable crosses 0.5",
        "services[catalog].queue_capacity",
        "share of replications metastable",
        "threshold (0.5)",
        "final bracket: 3,383 to 3,422 (uncertain)",
        "final bracket 3,383 to 3,422",
        "probe, in the order run",
    ] {
        assert!(texts.iter().any(|t| t == text), "missing {text:?}");
    }
    // Every probe's number is written twice: above its point in the top
    // panel, and as a tick of the bottom panel's axis.
    for k in 1..=9 {
        let n = texts.iter().filter(|t| **t == k.to_string()).count();
        assert!(n >= 2, "probe {k} is written {n} times");
    }
    assert_eq!(render_search_svg(&chart).expect("renders"), svg);
}

#[test]
fn a_search_without_probes_is_refused_and_odd_ones_do_not_panic() {
    let mut chart = catalog_search();
    chart.probes.clear();
    assert!(matches!(
        render_search_svg(&chart),
        Err(PlotError::NoVariants)
    ));
    let point = |x: f64, mean: f64, ci: Option<(f64, f64)>| SweepPoint {
        x,
        mean,
        ci_low: ci.map(|c| c.0),
        ci_high: ci.map(|c| c.1),
    };
    let cases = [
        (vec![point(5.0, 0.3, None)], vec![], f64::NAN, None),
        (
            vec![point(1.0, 2.0, None), point(1.0, 2.0, None)],
            vec![(1.0, 1.0)],
            2.0,
            Some((1.0, 1.0)),
        ),
        (
            vec![
                point(f64::NAN, 1.0, None),
                point(3.0, f64::INFINITY, Some((0.0, 1.0))),
                point(-1e12, 1e12, Some((f64::NAN, 2.0))),
                point(7.0, -3.0, Some((-4.0, -2.0))),
            ],
            vec![(f64::NAN, 1.0), (-1e12, 7.0)],
            0.0,
            Some((f64::NAN, 1.0)),
        ),
    ];
    for (probes, brackets, threshold, y_range) in cases {
        let chart = SearchChart {
            title: String::new(),
            subtitle: String::new(),
            parameter: String::new(),
            metric: String::new(),
            probes,
            threshold,
            brackets,
            certain: true,
            y_range,
        };
        let svg = render_search_svg(&chart).expect("renders");
        assert_well_formed(&svg);
    }
}
