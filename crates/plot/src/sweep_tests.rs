//! Tests of the sweep charts on realistic sweeps and on degenerate inputs.
//! The rendered examples are written to `target/plot-example/` so a person
//! can look at them (`rsvg-convert -w 1400
//! target/plot-example/sweep-heatmap.svg -o sweep-heatmap.png`).

use crate::sweep::{in_blocks, viridis};
use crate::test_support::{assert_well_formed, save};
use crate::{
    render_heatmap_svg, render_sweep_lines_svg, HeatmapChart, PlotError, SweepLineChart,
    SweepPoint, SweepSeries,
};

const CAPACITIES: [f64; 8] = [
    1000.0, 2000.0, 2500.0, 3000.0, 3500.0, 4000.0, 5000.0, 6000.0,
];

/// Share of 20 replications that went metastable, with a Wilson-like CI,
/// and the success rate with a t-interval: the retry storm of the incident
/// persists once the catalog queue holds more than ~3,000 requests.
fn realistic_lines() -> SweepLineChart {
    let shares = [0.0, 0.0, 0.0, 0.05, 0.95, 1.0, 1.0, 1.0];
    let success = [0.62, 0.71, 0.74, 0.72, 0.41, 0.33, 0.27, 0.22];
    let metastable = SweepSeries {
        name: "share of replications metastable".into(),
        points: CAPACITIES
            .iter()
            .zip(shares)
            .map(|(&x, p)| SweepPoint {
                x,
                mean: p,
                ci_low: Some((p - 0.16 * (p * (1.0 - p)).sqrt() - 0.02).max(0.0)),
                ci_high: Some((p + 0.16 * (p * (1.0 - p)).sqrt() + 0.02).min(1.0)),
            })
            .collect(),
    };
    let success = SweepSeries {
        name: "success rate (mean over replications)".into(),
        points: CAPACITIES
            .iter()
            .zip(success)
            .enumerate()
            .map(|(i, (&x, s))| {
                let half = 0.03 + 0.01 * (i % 3) as f64;
                SweepPoint {
                    x,
                    mean: s,
                    ci_low: Some(s - half),
                    ci_high: Some(s + half),
                }
            })
            .collect(),
    };
    SweepLineChart {
        title: "Deeper queues make the retry storm self-sustaining".into(),
        subtitle:
            "model incident-catalog · 20 replications per point · seeds 1–20 · horizon 2,760 s"
                .into(),
        x_label: "services[catalog].queue_capacity (requests)".into(),
        y_label: "share of replications / success rate".into(),
        x_log: false,
        y_log: false,
        y_range: Some((0.0, 1.0)),
        series: vec![metastable, success],
        threshold: Some((0.5, "half metastable".into())),
        dodge: false,
    }
}

const RATIOS: [f64; 8] = [0.05, 0.07, 0.1, 0.14, 0.2, 0.27, 0.37, 0.5];
const DURATIONS: [f64; 6] = [30.0, 60.0, 120.0, 240.0, 420.0, 600.0];

/// Share metastable over retry-budget ratio × fault duration: long faults
/// with generous budgets (top right) tip the system into a metastable state.
fn realistic_heatmap() -> HeatmapChart {
    let cells = DURATIONS
        .iter()
        .enumerate()
        .map(|(r, _)| {
            RATIOS
                .iter()
                .enumerate()
                .map(|(c, _)| {
                    // A smooth logistic in (col + row) with a sharp edge.
                    let z = (c as f64 + 1.3 * r as f64 - 7.5) * 1.6;
                    let v = 1.0 / (1.0 + libm::exp(-z));
                    Some((v * 20.0).round() / 20.0)
                })
                .collect()
        })
        .collect();
    HeatmapChart {
        title: "Where retry budgets stop protecting the catalog".into(),
        subtitle: "model incident-catalog · 20 replications per cell · share that stayed metastable after the fault ended"
            .into(),
        x_label: "retry budget (retries per first try)".into(),
        y_label: "fault duration (s)".into(),
        x_values: RATIOS.to_vec(),
        y_values: DURATIONS.to_vec(),
        x_log: true,
        y_log: false,
        cells,
        value_label: "share metastable".into(),
        value_range: (0.0, 1.0),
        boundary: Some(0.5),
    }
}

#[test]
fn realistic_sweep_lines_are_a_readable_svg() {
    let chart = realistic_lines();
    let svg = render_sweep_lines_svg(&chart).expect("renders");
    save("sweep-lines.svg", &svg);
    assert_well_formed(&svg);
    for text in [
        "Deeper queues make the retry storm self-sustaining",
        "share of replications metastable",
        "success rate (mean over replications)",
        "services[catalog].queue_capacity (requests)",
        "share of replications / success rate",
        "95% confidence interval",
        "half metastable",
        "6,000",
    ] {
        assert!(svg.contains(text), "missing {text:?}");
    }
    assert_eq!(render_sweep_lines_svg(&chart).expect("renders"), svg);
}

#[test]
fn realistic_heatmap_is_a_readable_svg() {
    let chart = realistic_heatmap();
    let svg = render_heatmap_svg(&chart).expect("renders");
    save("sweep-heatmap.svg", &svg);
    assert_well_formed(&svg);
    for text in [
        "Where retry budgets stop protecting the catalog",
        "retry budget (retries per first try)",
        "fault duration (s)",
        "share metastable",
        "crosses 0.5",
        "0.05",
        "600",
    ] {
        assert!(svg.contains(text), "missing {text:?}");
    }
    assert_eq!(render_heatmap_svg(&chart).expect("renders"), svg);
}

/// The legend named a boundary the grid never crossed: with every cell on
/// one side of the level it says so (the colour bar still marks the level).
#[test]
fn heatmap_legend_says_when_no_cell_crosses_the_boundary() {
    let mut chart = realistic_heatmap();
    let crossed = render_heatmap_svg(&chart).expect("renders");
    assert!(crossed.contains("crosses 0.5") && !crossed.contains("nowhere"));
    for row in &mut chart.cells {
        for value in row.iter_mut().flatten() {
            *value = value.min(0.4);
        }
    }
    let below = render_heatmap_svg(&chart).expect("renders");
    assert!(
        below.contains("crosses 0.5 (nowhere in this grid)"),
        "{below}"
    );
    // An empty cell between two sides is no crossing either.
    chart.cells[0][0] = Some(0.9);
    chart.cells[0][1] = None;
    chart.cells[1][0] = None;
    assert!(render_heatmap_svg(&chart)
        .expect("renders")
        .contains("nowhere in this grid"));
}

#[test]
fn viridis_ends_and_clamps() {
    assert_eq!(viridis(0.0), plotters::style::RGBColor(0x44, 0x01, 0x54));
    assert_eq!(viridis(1.0), plotters::style::RGBColor(0xFD, 0xE7, 0x25));
    assert_eq!(viridis(2.0), viridis(1.0));
    assert_eq!(viridis(f64::NAN), viridis(0.0));
}

#[test]
fn sweep_lines_reject_no_or_too_many_series() {
    let mut chart = realistic_lines();
    chart.series.clear();
    assert!(matches!(
        render_sweep_lines_svg(&chart),
        Err(PlotError::NoVariants)
    ));
    let s = realistic_lines().series[0].clone();
    chart.series = vec![s; 9];
    assert!(matches!(
        render_sweep_lines_svg(&chart),
        Err(PlotError::TooManyVariants { count: 9, .. })
    ));
}

#[test]
fn degenerate_sweep_lines_do_not_panic() {
    let p = |x: f64, mean: f64| SweepPoint {
        x,
        mean,
        ci_low: None,
        ci_high: None,
    };
    let cases: Vec<Vec<SweepPoint>> = vec![
        vec![],
        vec![p(3.0, 0.5)],
        vec![p(1.0, 2.0), p(2.0, 2.0), p(3.0, 2.0)],
        vec![p(5.0, 1.0), p(5.0, 1.0)],
        vec![p(f64::NAN, 1.0), p(1.0, f64::NAN), p(f64::INFINITY, 0.0)],
        vec![p(-1.0, 0.0), p(0.0, 1.0), p(1e12, -1e12)],
        vec![SweepPoint {
            x: 1.0,
            mean: 0.5,
            ci_low: Some(f64::NAN),
            ci_high: Some(0.9),
        }],
        vec![SweepPoint {
            x: 2.0,
            mean: 0.5,
            ci_low: Some(0.1),
            ci_high: Some(0.9),
        }],
    ];
    for points in cases {
        for x_log in [false, true] {
            for y_range in [
                None,
                Some((0.0, 1.0)),
                Some((1.0, 1.0)),
                Some((f64::NAN, 2.0)),
            ] {
                let chart = SweepLineChart {
                    title: String::new(),
                    subtitle: String::new(),
                    x_label: String::new(),
                    y_label: String::new(),
                    x_log,
                    y_log: x_log,
                    y_range,
                    series: vec![SweepSeries {
                        name: String::new(),
                        points: points.clone(),
                    }],
                    threshold: Some((f64::NAN, String::new())),
                    dodge: x_log,
                };
                let svg = render_sweep_lines_svg(&chart).expect("renders");
                assert_well_formed(&svg);
            }
        }
    }
}

#[test]
fn degenerate_heatmaps_do_not_panic() {
    let base = realistic_heatmap();
    let mut cases = Vec::new();
    let mut c = base.clone();
    c.x_values.clear();
    c.y_values.clear();
    c.cells.clear();
    cases.push(c);
    let mut c = base.clone();
    c.x_values = vec![1.0];
    c.y_values = vec![1.0];
    c.cells = vec![vec![Some(f64::NAN)]];
    cases.push(c);
    let mut c = base.clone();
    c.cells = vec![vec![None; 3]]; // ragged and mostly missing
    cases.push(c);
    let mut c = base.clone();
    c.value_range = (0.5, 0.5);
    c.boundary = Some(f64::INFINITY);
    cases.push(c);
    let mut c = base.clone();
    c.value_range = (f64::NAN, 1.0);
    cases.push(c);
    let mut c = base.clone();
    c.x_values = (0..200).map(f64::from).collect();
    c.y_values = (0..150).map(f64::from).collect();
    c.cells = (0..150)
        .map(|r| (0..200).map(|k| Some(f64::from(r * k % 7) / 7.0)).collect())
        .collect();
    cases.push(c);
    for chart in cases {
        let svg = render_heatmap_svg(&chart).expect("renders");
        assert_well_formed(&svg);
    }
}

#[test]
fn crowded_and_sparse_charts_stay_readable() {
    // 24 log-spaced columns, 12 rows, a few cells without data.
    let xs: Vec<f64> = (0..24).map(|i| 0.01 * 1.25f64.powi(i)).collect();
    let ys: Vec<f64> = (0..12).map(|i| 30.0 * f64::from(i + 1)).collect();
    let mut chart = realistic_heatmap();
    chart.cells = (0..12)
        .map(|r| {
            (0..24)
                .map(|c| {
                    if (r * 7 + c * 3) % 17 == 0 {
                        return None;
                    }
                    let z = (f64::from(c) / 2.0 + f64::from(r) - 14.0) * 0.9;
                    Some(1.0 / (1.0 + libm::exp(-z)))
                })
                .collect()
        })
        .collect();
    chart.x_values = xs;
    chart.y_values = ys;
    let svg = render_heatmap_svg(&chart).expect("renders");
    save("sweep-heatmap-dense.svg", &svg);
    assert_well_formed(&svg);
    assert!(svg.contains("no data"));

    // Log x, three series, one without CIs and with a gap.
    let mut lines = realistic_lines();
    lines.x_log = true;
    lines.y_range = None;
    lines.threshold = None;
    lines.series[0].points.retain(|p| p.x != 2500.0);
    let mut third = lines.series[1].clone();
    third.name = "goodput / offered".into();
    for p in &mut third.points {
        p.mean *= 0.8;
        p.ci_low = None;
        p.ci_high = None;
    }
    third.points[3].mean = f64::NAN;
    lines.series.push(third);
    let svg = render_sweep_lines_svg(&lines).expect("renders");
    save("sweep-lines-log.svg", &svg);
    assert_well_formed(&svg);
}

/// One line per category of a categorical axis: the share metastable of
/// two variants against the slowdown's end, each with its own band, the
/// legend naming the variants (outputs/admission-work-tipping's shape).
#[test]
fn one_line_per_category_names_each_in_the_legend() {
    let ends: Vec<f64> = (0..19).map(|k| 61.0 + 0.5 * f64::from(k)).collect();
    let series = [("drawn-at-start", 66.0), ("drawn-at-admission", 64.0)]
        .map(|(name, tip)| SweepSeries {
            name: name.into(),
            points: ends
                .iter()
                .map(|&x| {
                    let (mean, ci) = if x < tip {
                        (0.0, (0.0, 0.5615))
                    } else {
                        (1.0, (0.4385, 1.0))
                    };
                    SweepPoint {
                        x,
                        mean,
                        ci_low: Some(ci.0),
                        ci_high: Some(ci.1),
                    }
                })
                .collect(),
        })
        .to_vec();
    let chart = SweepLineChart {
        title: "admission-work-tipping: the sweep".into(),
        subtitle: "38 points × 3 replications; 95% Wilson intervals".into(),
        x_label: "slowdown_end_s".into(),
        y_label: "share of replications metastable".into(),
        x_log: false,
        y_log: false,
        y_range: Some((0.0, 1.0)),
        series,
        threshold: Some((0.5, "half metastable".into())),
        dodge: true,
    };
    let svg = render_sweep_lines_svg(&chart).expect("renders");
    save("sweep-categories.svg", &svg);
    assert_well_formed(&svg);
    let texts = crate::test_support::svg_texts(&svg);
    for text in [
        "drawn-at-start",
        "drawn-at-admission",
        "slowdown_end_s",
        "share of replications metastable",
    ] {
        assert!(texts.iter().any(|t| t == text), "missing {text:?}");
    }
    // A band per category, in its colour.
    for color in [crate::style::series_color(0), crate::style::series_color(1)] {
        let band = format!(
            "<polygon opacity=\"0.18\" fill=\"#{:02X}{:02X}{:02X}\"",
            color.0, color.1, color.2
        );
        assert_eq!(svg.matches(&band).count(), 1, "{band}");
    }
}

/// A log y axis for a metric spanning decades: decade ticks, and a point
/// whose mean is not positive left out rather than drawn at the bottom.
#[test]
fn a_log_y_axis_labels_decades_and_skips_non_positive_means() {
    let point = |x: f64, mean: f64| SweepPoint {
        x,
        mean,
        ci_low: Some(mean * 0.8),
        ci_high: Some(mean * 1.25),
    };
    let mut chart = realistic_lines();
    chart.y_log = true;
    chart.y_range = None;
    chart.threshold = None;
    chart.y_label = "latency_p99_ms (mean)".into();
    chart.series = vec![SweepSeries {
        name: "latency_p99_ms".into(),
        points: vec![
            point(1.0, 12.0),
            point(2.0, 140.0),
            point(3.0, 0.0),
            point(4.0, 9000.0),
        ],
    }];
    let svg = render_sweep_lines_svg(&chart).expect("renders");
    save("sweep-lines-log-y.svg", &svg);
    assert_well_formed(&svg);
    let texts = crate::test_support::svg_texts(&svg);
    for tick in ["10", "100", "1,000"] {
        assert!(
            texts.iter().any(|t| t == tick),
            "no tick {tick:?}: {texts:?}"
        );
    }
    // Three markers (circles) for the three positive means, none for 0.
    let markers = svg.matches("<circle").count();
    chart.series[0].points.retain(|p| p.mean > 0.0);
    let without_zero = render_sweep_lines_svg(&chart).expect("renders");
    assert_eq!(without_zero.matches("<circle").count(), markers);
}

/// A grid of `cols` × `rows` points, smooth (a ramp across a diagonal)
/// with holes of no data.
fn fine_grid(cols: usize, rows: usize) -> HeatmapChart {
    HeatmapChart {
        title: "A sweep of a million points".into(),
        subtitle: "share of runs over the level".into(),
        x_label: "x".into(),
        y_label: "y".into(),
        x_values: (0..cols).map(|i| i as f64).collect(),
        y_values: (0..rows).map(|i| i as f64).collect(),
        x_log: false,
        y_log: false,
        cells: (0..rows)
            .map(|r| {
                (0..cols)
                    .map(|c| {
                        if (r / 50 + c / 70) % 11 == 3 {
                            None
                        } else {
                            let z = (r as f64 - 0.6 * c as f64) / (0.2 * rows as f64);
                            Some((0.5 + z).clamp(0.0, 1.0))
                        }
                    })
                    .collect()
            })
            .collect(),
        value_label: "share".into(),
        value_range: (0.0, 1.0),
        boundary: Some(0.5),
    }
}

/// A grid finer than the chart's pixels is drawn in blocks, each the mean
/// of its points, labelled with its middle point: this million points made
/// an SVG of 86 MB drawn a rectangle each.
#[test]
fn a_million_point_heatmap_is_drawn_in_blocks_of_their_mean() {
    let svg = render_heatmap_svg(&fine_grid(1000, 1000)).unwrap();
    save("sweep-heatmap-million.svg", &svg);
    assert_well_formed(&svg);
    assert!(svg.len() < 5_000_000, "{} bytes", svg.len());
    assert!(
        svg.contains("a cell: the mean of 5 × 9 grid points (the 1,000 × 1,000 grid as 200 × 112)"),
        "the legend says how the grid is drawn"
    );
    // A grid that fits is drawn point by point, with no such entry.
    let svg = render_heatmap_svg(&fine_grid(240, 120)).unwrap();
    assert!(!svg.contains("a cell: the mean"));
}

#[test]
fn a_block_is_the_mean_of_its_points_with_data_and_its_middle_labels_it() {
    // 481 columns: blocks of 3, the last of one column; 5 rows: one each.
    let mut chart = fine_grid(481, 5);
    chart.cells[2][3] = None;
    chart.cells[2][4] = None;
    chart.cells[2][5] = Some(0.25);
    for c in 0..3 {
        chart.cells[4][c] = None;
    }
    let (drawn, block) = in_blocks(&chart).expect("too many columns to draw one by one");
    assert_eq!(block, (3, 1));
    assert_eq!(drawn.x_values.len(), 161);
    assert_eq!(drawn.y_values, chart.y_values);
    // Block 1 of row 2: columns 3, 4, 5, two without data.
    assert_eq!(drawn.cells[2][1], Some(0.25));
    // Block 0 of row 0: the mean of columns 0, 1, 2.
    let mean = (0..3).map(|c| chart.cells[0][c].unwrap()).sum::<f64>() / 3.0;
    assert_eq!(drawn.cells[0][0], Some(mean));
    assert_eq!(drawn.cells[4][0], None, "no point with data: no data");
    // Labelled by their middle point; the last block is column 480 alone.
    assert_eq!(&drawn.x_values[..2], &[1.0, 4.0]);
    assert_eq!(drawn.x_values[160], 480.0);
    assert_eq!(drawn.cells[1][160], chart.cells[1][480]);
    assert!(in_blocks(&fine_grid(240, 120)).is_none());
    // No columns and too many rows: drawn, as an empty grid.
    let svg = render_heatmap_svg(&fine_grid(0, 500)).unwrap();
    assert_well_formed(&svg);
}
