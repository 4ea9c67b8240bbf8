//! Charts for parameter sweeps: a metric against one swept parameter (lines
//! with 95% confidence bands) and against two (a heatmap, or phase diagram,
//! with the boundary where the metric crosses a level).

use plotters::element::Circle;
use plotters::style::text_anchor::{HPos, VPos};
use plotters::style::{Color, RGBColor};

use crate::axes::{draw_x_axis, draw_y_axis, log_range, log_ticks, nice_step};
use crate::axes::{x_axis_height, y_axis_width, Scale};
use crate::canvas::MARGIN;
use crate::canvas::{
    dashed_hline, draw_svg, fill_polygon, fill_rect, line, line_height, polyline, stroke_rect,
    Canvas, Rect, TextSpec,
};
use crate::error::drawing;
use crate::header::{note, Header, LegendItem};
use crate::style::{
    ensure_fonts, format_count, format_number, series_color, size, AXIS, BACKGROUND, GRID_MINOR,
    GUIDE, INK, MAX_SERIES, MUTED_INK,
};
use crate::PlotError;

/// Width of both sweep charts, in pixels.
pub const SWEEP_WIDTH: u32 = 1200;

/// Opacity of a confidence band.
const BAND_ALPHA: f64 = 0.18;

/// One point of a [`SweepSeries`]: the metric's mean at one value of the
/// swept parameter, with its 95% confidence interval if known.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepPoint {
    /// The swept parameter's value.
    pub x: f64,
    /// The metric's mean over the replications at `x`.
    pub mean: f64,
    /// Lower end of the 95% confidence interval of the mean.
    pub ci_low: Option<f64>,
    /// Upper end of the 95% confidence interval of the mean.
    pub ci_high: Option<f64>,
}

/// One line of a sweep chart: a metric's mean vs the swept parameter, with
/// its 95% CI.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepSeries {
    /// The metric (or variant), e.g. `share metastable`: the legend entry.
    pub name: String,
    /// The points, in any order (they are drawn sorted by `x`). Points with
    /// a non-finite `x` or mean are skipped and break the line.
    pub points: Vec<SweepPoint>,
}

/// A metric against one swept parameter: one line per series, with a marker
/// at every swept value and a translucent band for the 95% CI.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepLineChart {
    /// The main title.
    pub title: String,
    /// The line under the title (model, seeds, replications...).
    pub subtitle: String,
    /// The x axis title, e.g. `services[catalog].queue_capacity`.
    pub x_label: String,
    /// The y axis title, e.g. `share of replications metastable`.
    pub y_label: String,
    /// Log₁₀ x axis (non-positive `x` are then skipped).
    pub x_log: bool,
    /// Log₁₀ y axis, for a metric spanning decades: points whose mean is not
    /// positive are skipped, and `y_range` applies only if both ends are
    /// positive.
    pub y_log: bool,
    /// The y axis range, e.g. `Some((0.0, 1.0))` for shares; `None` fits
    /// the data (means and CIs).
    pub y_range: Option<(f64, f64)>,
    /// The lines, 1 to [`MAX_SERIES`].
    pub series: Vec<SweepSeries>,
    /// An optional horizontal dashed reference line at a value, with its
    /// label, e.g. `(0.5, "half metastable")`.
    pub threshold: Option<(f64, String)>,
    /// Shifts each series' line and markers a few pixels sideways (series
    /// `i` of `n` by `(i - (n - 1) / 2) × 6` px), so that series equal at
    /// a point (categories all at 0 or all at 1) are all seen rather than
    /// the last drawn hiding the others. Bands stay where they are.
    pub dodge: bool,
}

/// A 2-D sweep: a metric over a grid of two parameters (a phase diagram).
#[derive(Clone, Debug, PartialEq)]
pub struct HeatmapChart {
    /// The main title.
    pub title: String,
    /// The line under the title.
    pub subtitle: String,
    /// The x axis title (the parameter of the columns).
    pub x_label: String,
    /// The y axis title (the parameter of the rows).
    pub y_label: String,
    /// The grid's column values, sorted ascending.
    pub x_values: Vec<f64>,
    /// The grid's row values, sorted ascending (drawn bottom to top).
    pub y_values: Vec<f64>,
    /// The columns are log-spaced. Cells are drawn equally wide either way
    /// (one per grid value, labelled with it), so a log-spaced grid reads
    /// as a log axis.
    pub x_log: bool,
    /// The rows are log-spaced (see `x_log`).
    pub y_log: bool,
    /// `cells[row][col]`: the metric at `(x_values[col], y_values[row])`;
    /// `None` (or a missing or non-finite entry) = no data.
    pub cells: Vec<Vec<Option<f64>>>,
    /// What the colour means, e.g. `share metastable`: the colour bar title.
    pub value_label: String,
    /// The colour scale's range, e.g. `(0.0, 1.0)`; values outside take the
    /// end colours.
    pub value_range: (f64, f64),
    /// Draws the boundary where the value crosses this level (e.g. 0.5), as
    /// a thick line along the cell edges between neighbours on either side.
    pub boundary: Option<f64>,
}

// ------------------------------------------------------------ header

#[derive(Clone, Copy)]
enum Swatch {
    /// A series: line with its marker.
    Series(usize),
    /// A confidence band.
    Band,
    /// A dashed reference line.
    Dashed,
    /// The heatmap boundary.
    Boundary,
    /// A no-data cell.
    NoData,
    /// A cell that stands for a block of grid points.
    Block,
}

struct LegendEntry {
    swatch: Swatch,
    label: String,
}

const SWATCH_W: i32 = 36;

/// Space above the legend, px.
const LEGEND_GAP: i32 = 10;

impl LegendItem for LegendEntry {
    fn label(&self) -> &str {
        &self.label
    }

    fn draw_swatch(&self, canvas: &Canvas<'_>, x: i32, cy: i32) -> Result<(), PlotError> {
        match self.swatch {
            Swatch::Series(i) => {
                polyline(
                    canvas,
                    vec![(x, cy), (x + SWATCH_W, cy)],
                    series_color(i),
                    3,
                )?;
                marker(canvas, (x + SWATCH_W / 2, cy), i)
            }
            Swatch::Band => fill_polygon(
                canvas,
                vec![
                    (x, cy - 8),
                    (x + SWATCH_W, cy - 8),
                    (x + SWATCH_W, cy + 8),
                    (x, cy + 8),
                ],
                MUTED_INK.mix(0.3),
            ),
            Swatch::Dashed => dashed_hline(canvas, x, x + SWATCH_W, cy, INK, 6, 4),
            Swatch::Boundary => boundary_segment(canvas, (x, cy), (x + SWATCH_W, cy), 0, None),
            Swatch::NoData => no_data_cell(canvas, Rect::new(x + 6, cy - 9, x + 30, cy + 9)),
            Swatch::Block => {
                let (left, top, right, bottom) = (x + 6, cy - 9, x + 30, cy + 9);
                fill_rect(canvas, (left, top), (right, bottom), viridis(0.6))?;
                let (mid_x, mid_y) = ((left + right) / 2, (top + bottom) / 2);
                line(canvas, (mid_x, top), (mid_x, bottom), BACKGROUND)?;
                line(canvas, (left, mid_y), (right, mid_y), BACKGROUND)?;
                stroke_rect(canvas, (left, top), (right, bottom), AXIS)
            }
        }
    }
}

// ------------------------------------------------------------ markers

/// Series `i`'s marker at `c`: a shape per series (circle, square,
/// triangle, diamond, ...) so lines differ by more than colour, with a white
/// rim so it stands out on lines and bands.
fn marker(canvas: &Canvas<'_>, c: (i32, i32), i: usize) -> Result<(), PlotError> {
    let color = series_color(i);
    let shape = |r: i32| -> Vec<(i32, i32)> {
        let (x, y) = c;
        match i % 4 {
            1 => vec![
                (x - r, y - r),
                (x + r, y - r),
                (x + r, y + r),
                (x - r, y + r),
            ],
            2 => vec![(x, y - r - 2), (x + r + 1, y + r), (x - r - 1, y + r)],
            3 => vec![
                (x, y - r - 1),
                (x + r + 1, y),
                (x, y + r + 1),
                (x - r - 1, y),
            ],
            _ => Vec::new(),
        }
    };
    if i.is_multiple_of(4) {
        canvas
            .draw(&Circle::new(c, 7, BACKGROUND.filled()))
            .map_err(drawing)?;
        return canvas
            .draw(&Circle::new(c, 5, color.filled()))
            .map_err(drawing);
    }
    fill_polygon(canvas, shape(7), BACKGROUND.to_rgba())?;
    fill_polygon(canvas, shape(5), color.to_rgba())
}

// ------------------------------------------------------------ line chart

/// A linear axis range with 1-2-5 ticks that holds `lo..=hi`, ending on
/// ticks. Degenerate input (equal or non-finite) gets a sensible range.
pub(crate) fn linear_ticks(lo: f64, hi: f64, target: usize) -> (f64, f64, Vec<f64>) {
    let (lo, hi) = if lo.is_finite() && hi.is_finite() && hi >= lo {
        (lo, hi)
    } else {
        (0.0, 1.0)
    };
    let (lo, hi) = if hi - lo <= f64::EPSILON * lo.abs().max(1.0) {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        (lo - pad, hi + pad)
    } else {
        (lo, hi)
    };
    let step = nice_step(hi - lo, target);
    let a = (lo / step + 1e-9).floor() as i64;
    let b = (hi / step - 1e-9).ceil() as i64;
    let b = b.max(a + 1);
    // Far more ticks than asked for cannot happen with a 1-2-5 step, but a
    // bound keeps odd input from building a huge vector.
    let ticks: Vec<f64> = (a..=b).take(64).map(|k| tidy(k as f64 * step)).collect();
    let first = ticks.first().copied().unwrap_or(lo);
    let last = ticks.last().copied().unwrap_or(hi);
    (first, last, ticks)
}

fn tidy(v: f64) -> f64 {
    let r = (v * 1e9).round() / 1e9;
    if r == 0.0 {
        0.0
    } else {
        r
    }
}

pub(crate) fn finite_range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

/// The usable points of a series, sorted by x.
fn usable_points(s: &SweepSeries, x_log: bool) -> Vec<&SweepPoint> {
    let mut pts: Vec<&SweepPoint> = s
        .points
        .iter()
        .filter(|p| p.x.is_finite() && (!x_log || p.x > 0.0))
        .collect();
    pts.sort_by(|a, b| a.x.total_cmp(&b.x));
    pts
}

fn ci_of(p: &SweepPoint) -> Option<(f64, f64)> {
    match (p.ci_low, p.ci_high) {
        (Some(lo), Some(hi)) if lo.is_finite() && hi.is_finite() => Some((lo.min(hi), lo.max(hi))),
        _ => None,
    }
}

/// Renders a sweep line chart as an SVG document of [`SWEEP_WIDTH`] pixels.
///
/// Each series is a line through its means with a marker (a shape per
/// series) at every swept value and a translucent band between the CI ends
/// where they are known (an error bar for an isolated point with a CI).
/// The optional threshold is a dashed line labelled at its right end.
///
/// # Errors
///
/// [`PlotError::NoVariants`] without series, [`PlotError::TooManyVariants`]
/// past [`MAX_SERIES`], [`PlotError::Font`] / [`PlotError::Drawing`] if
/// plotters fails.
pub fn render_sweep_lines_svg(chart: &SweepLineChart) -> Result<String, PlotError> {
    let n = chart.series.len();
    PlotError::check_count(n, MAX_SERIES)?;
    ensure_fonts()?;
    let width = SWEEP_WIDTH as i32;
    let series: Vec<Vec<&SweepPoint>> = chart
        .series
        .iter()
        .map(|s| usable_points(s, chart.x_log))
        .collect();

    // X range.
    let xr = finite_range(series.iter().flatten().map(|p| p.x));
    let (x_lo, x_hi, x_major, x_minor) = if chart.x_log {
        // The data's range with a little air, not snapped to 1-2-5: a sweep
        // over 1,000..6,000 should fill the plot. Ticks still fall on 1-2-5.
        let (lo, hi) = match xr {
            Some((lo, hi)) if hi > lo => (lo / 1.06, hi * 1.06),
            Some((v, _)) => log_range(v, v),
            None => log_range(1.0, 1000.0),
        };
        let (major, minor) = log_ticks(lo, hi);
        (lo, hi, major, minor)
    } else {
        let (lo, hi) = xr.unwrap_or((0.0, 1.0));
        let (lo, hi, ticks) = linear_ticks(lo, hi, 8);
        (lo, hi, ticks, Vec::new())
    };

    // Y range.
    let drawn = |p: &SweepPoint| p.mean.is_finite() && (!chart.y_log || p.mean > 0.0);
    let (y_lo, y_hi, y_ticks) = match chart.y_range {
        _ if chart.y_log => {
            let (lo, hi) = match chart.y_range {
                Some((a, b)) if a > 0.0 && b > a && b.is_finite() => (a, b),
                _ => {
                    let values = series.iter().flatten().filter(|p| drawn(p)).flat_map(|p| {
                        let (l, h) = ci_of(p).unwrap_or((p.mean, p.mean));
                        [p.mean, l, h]
                    });
                    let thr = chart.threshold.iter().map(|t| t.0);
                    match finite_range(values.chain(thr).filter(|v| *v > 0.0)) {
                        Some((lo, hi)) if hi > lo => (lo / 1.1, hi * 1.1),
                        Some((v, _)) => log_range(v, v),
                        None => log_range(1.0, 1000.0),
                    }
                }
            };
            (lo, hi, log_ticks(lo, hi).0)
        }
        Some((a, b)) if a.is_finite() && b.is_finite() && a < b => {
            let step = nice_step(b - a, 5);
            let first = (a / step - 1e-9).ceil() as i64;
            let last = (b / step + 1e-9).floor() as i64;
            let ticks = (first..=last.min(first + 64))
                .map(|k| tidy(k as f64 * step))
                .collect();
            (a, b, ticks)
        }
        _ => {
            let values = series.iter().flatten().flat_map(|p| {
                let (l, h) = ci_of(p).unwrap_or((p.mean, p.mean));
                [p.mean, l, h]
            });
            let thr = chart.threshold.iter().map(|t| t.0);
            let (lo, hi) = finite_range(values.chain(thr)).unwrap_or((0.0, 1.0));
            linear_ticks(lo, hi, 5)
        }
    };
    let y_label = |v: f64| format_number(v);
    let labels: Vec<String> = y_ticks.iter().map(|v| y_label(*v)).collect();

    let mut legend: Vec<LegendEntry> = chart
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| LegendEntry {
            swatch: Swatch::Series(i),
            label: if s.name.is_empty() {
                format!("series {}", i + 1)
            } else {
                s.name.clone()
            },
        })
        .collect();
    if series.iter().flatten().any(|p| ci_of(p).is_some()) {
        legend.push(LegendEntry {
            swatch: Swatch::Band,
            label: "shaded: 95% confidence interval".into(),
        });
    }
    let threshold = chart
        .threshold
        .as_ref()
        .filter(|(v, _)| v.is_finite() && *v >= y_lo && *v <= y_hi);
    if let Some((v, label)) = threshold {
        legend.push(LegendEntry {
            swatch: Swatch::Dashed,
            label: if label.is_empty() {
                format!("reference: {}", format_number(*v))
            } else {
                format!("{label} ({})", format_number(*v))
            },
        });
    }
    let header = Header::layout(
        &chart.title,
        &chart.subtitle,
        &legend,
        SWATCH_W,
        width,
        LEGEND_GAP,
    )?;
    let plot_left = MARGIN + y_axis_width(&labels, !chart.y_label.is_empty())?;
    // Room on the right for the last x label to centre under its tick.
    let plot = Rect::new(
        plot_left,
        header.bottom + 12,
        width - MARGIN - 20,
        header.bottom + 12 + 440,
    );
    let height = plot.bottom + x_axis_height() + 16;

    let dodge = |i: usize| -> i32 {
        if chart.dodge {
            ((i as f64 - (n as f64 - 1.0) / 2.0) * 6.0).round() as i32
        } else {
            0
        }
    };
    draw_svg((SWEEP_WIDTH, height as u32), |canvas| {
        header.draw(canvas, &chart.title, &chart.subtitle, &legend, width)?;
        let xs = if chart.x_log {
            Scale::log10(x_lo, x_hi, plot.left, plot.right)
        } else {
            Scale::linear(x_lo, x_hi, plot.left, plot.right)
        };
        let ys = if chart.y_log {
            Scale::log10(y_lo, y_hi, plot.bottom, plot.top)
        } else {
            Scale::linear(y_lo, y_hi, plot.bottom, plot.top)
        };
        draw_y_axis(
            canvas,
            plot,
            &ys,
            &y_ticks,
            &y_label,
            &chart.y_label,
            MARGIN,
        )?;
        draw_x_axis(
            canvas,
            plot,
            &xs,
            &x_major,
            &x_minor,
            &|v| format_number(v),
            &chart.x_label,
        )?;
        if let Some((v, _)) = threshold {
            dashed_hline(canvas, plot.left, plot.right, ys.map(*v), INK, 8, 5)?;
        }
        // Bands first, all of them, so no band hides another series' line.
        for (i, pts) in series.iter().enumerate() {
            let color = series_color(i);
            for run in runs(pts, |p| ci_of(p).is_some() && drawn(p)) {
                if run.len() == 1 {
                    let p = run[0];
                    let (lo, hi) = ci_of(p).unwrap_or((p.mean, p.mean));
                    let x = xs.map(p.x) + dodge(i);
                    let (a, b) = (ys.map(lo), ys.map(hi));
                    line(canvas, (x, a), (x, b), color)?;
                    line(canvas, (x - 5, a), (x + 5, a), color)?;
                    line(canvas, (x - 5, b), (x + 5, b), color)?;
                    continue;
                }
                let mut poly: Vec<(i32, i32)> = Vec::new();
                for p in &run {
                    let (_, hi) = ci_of(p).unwrap_or((p.mean, p.mean));
                    poly.push((xs.map(p.x), ys.map(hi)));
                }
                for p in run.iter().rev() {
                    let (lo, _) = ci_of(p).unwrap_or((p.mean, p.mean));
                    poly.push((xs.map(p.x), ys.map(lo)));
                }
                fill_polygon(canvas, poly, color.mix(BAND_ALPHA))?;
            }
        }
        let mut any = false;
        for (i, pts) in series.iter().enumerate() {
            for run in runs(pts, drawn) {
                let path: Vec<(i32, i32)> = run
                    .iter()
                    .map(|p| (xs.map(p.x) + dodge(i), ys.map(p.mean)))
                    .collect();
                polyline(canvas, path, series_color(i), 3)?;
            }
        }
        for (i, pts) in series.iter().enumerate() {
            for p in pts.iter().filter(|p| drawn(p)) {
                any = true;
                marker(canvas, (xs.map(p.x) + dodge(i), ys.map(p.mean)), i)?;
            }
        }
        if let Some((v, label)) = threshold {
            if !label.is_empty() {
                let spec = TextSpec::new(size::VALUE, INK).anchor(HPos::Right, VPos::Bottom);
                let text = spec.fit(label, plot.width() / 3)?;
                let (w, h) = spec.measure(&text)?;
                let y = ys.map(*v) - 4;
                let y = if y - h < plot.top {
                    ys.map(*v) + 4 + h
                } else {
                    y
                };
                let right = plot.right - 6;
                fill_rect(
                    canvas,
                    (right - w - 4, y - h + 1),
                    (right + 3, y),
                    BACKGROUND,
                )?;
                spec.draw(canvas, &text, (right, y))?;
            }
        }
        if !any {
            note(canvas, plot, "no data")?;
        }
        Ok(())
    })
}

/// Maximal runs of consecutive points that satisfy `keep`.
fn runs<'a>(
    pts: &[&'a SweepPoint],
    keep: impl Fn(&SweepPoint) -> bool,
) -> Vec<Vec<&'a SweepPoint>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    for p in pts {
        if keep(p) {
            cur.push(*p);
        } else if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

// ------------------------------------------------------------ heatmap

/// Viridis (matplotlib's perceptually uniform, colour-blind-safe map) at
/// nine evenly spaced stops, from dark purple (low) to yellow (high).
const VIRIDIS: [(u8, u8, u8); 9] = [
    (0x44, 0x01, 0x54),
    (0x47, 0x2D, 0x7B),
    (0x3B, 0x52, 0x8B),
    (0x2C, 0x72, 0x8E),
    (0x21, 0x91, 0x8C),
    (0x28, 0xAE, 0x80),
    (0x5E, 0xC9, 0x62),
    (0xAD, 0xDC, 0x30),
    (0xFD, 0xE7, 0x25),
];

/// The viridis colour at `t` in 0..=1 (clamped; NaN gives the low end).
pub(crate) fn viridis(t: f64) -> RGBColor {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let pos = t * (VIRIDIS.len() - 1) as f64;
    let i = (pos.floor() as usize).min(VIRIDIS.len() - 2);
    let f = pos - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    let c = |x: u8, y: u8| (f64::from(x) + f * (f64::from(y) - f64::from(x))).round() as u8;
    RGBColor(c(a.0, b.0), c(a.1, b.1), c(a.2, b.2))
}

/// Most columns and rows a heatmap draws: cells at least about 4 px wide
/// and tall on the chart's 1,200 px and at most 520 px of height. A finer
/// grid's cells would be thinner than a pixel, and its SVG huge: a grid of
/// 1,000 × 1,000 points, drawn a rectangle each, made 86 MB (155 MB with
/// a boundary along most cells); in blocks, 2.2 MB.
const MAX_DRAWN_COLUMNS: usize = 240;
const MAX_DRAWN_ROWS: usize = 120;

/// A grid too fine to draw cell by cell ([`MAX_DRAWN_COLUMNS`],
/// [`MAX_DRAWN_ROWS`]) as blocks of neighbouring points, each block one
/// cell: the mean of its points' values (no data if none has one),
/// labelled with its middle point's grid values. With the block's size in
/// points (columns, rows); `None` for a grid drawn as it is.
pub(crate) fn in_blocks(chart: &HeatmapChart) -> Option<(HeatmapChart, (usize, usize))> {
    let (cols, rows) = (chart.x_values.len(), chart.y_values.len());
    if cols <= MAX_DRAWN_COLUMNS && rows <= MAX_DRAWN_ROWS {
        return None;
    }
    // (At least 1: a grid with no columns may have too many rows.)
    let wide = cols.div_ceil(MAX_DRAWN_COLUMNS).max(1);
    let tall = rows.div_ceil(MAX_DRAWN_ROWS).max(1);
    // Each block's grid indices, and the one in its middle.
    let blocks = |n: usize, size: usize| -> Vec<std::ops::Range<usize>> {
        (0..n.div_ceil(size))
            .map(|b| b * size..((b + 1) * size).min(n))
            .collect()
    };
    let (col_blocks, row_blocks) = (blocks(cols, wide), blocks(rows, tall));
    let middle = |values: &[f64], block: &std::ops::Range<usize>| {
        values[block.start + (block.len() - 1) / 2]
    };
    let cells = row_blocks
        .iter()
        .map(|rb| {
            col_blocks
                .iter()
                .map(|cb| {
                    let values: Vec<f64> = rb
                        .clone()
                        .flat_map(|r| cb.clone().filter_map(move |c| cell(chart, r, c)))
                        .collect();
                    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
                })
                .collect()
        })
        .collect();
    let drawn = HeatmapChart {
        x_values: col_blocks
            .iter()
            .map(|b| middle(&chart.x_values, b))
            .collect(),
        y_values: row_blocks
            .iter()
            .map(|b| middle(&chart.y_values, b))
            .collect(),
        cells,
        ..chart.clone()
    };
    Some((drawn, (wide, tall)))
}

/// A cell's value, if it has a usable one.
fn cell(chart: &HeatmapChart, row: usize, col: usize) -> Option<f64> {
    chart
        .cells
        .get(row)
        .and_then(|r| r.get(col))
        .copied()
        .flatten()
        .filter(|v| v.is_finite())
}

/// An edge between two cells of a heatmap: of cell (row, column), the one
/// on its right or the one below it.
enum CellEdge {
    Right(usize, usize),
    Below(usize, usize),
}

/// The edges whose two cells lie on either side of `level` (≥ it on one
/// side, below it on the other; an empty cell has no side).
fn boundary_edges(chart: &HeatmapChart, level: f64) -> impl Iterator<Item = CellEdge> + '_ {
    let (rows, cols) = (chart.y_values.len(), chart.x_values.len());
    let side = move |r: usize, c: usize| cell(chart, r, c).map(|v| v >= level);
    (0..rows).flat_map(move |r| {
        (0..cols).flat_map(move |c| {
            let here = side(r, c);
            let differs = move |other: Option<bool>| here.zip(other).is_some_and(|(a, b)| a != b);
            let right = (c + 1 < cols && differs(side(r, c + 1))).then_some(CellEdge::Right(r, c));
            let below = (r + 1 < rows && differs(side(r + 1, c))).then_some(CellEdge::Below(r, c));
            right.into_iter().chain(below)
        })
    })
}

/// A boundary piece from `a` to `b` (horizontal or vertical): a dark line
/// with a white casing, readable on every colour of the scale. `pass` 0
/// draws both; 1 only the casing, 2 only the line (so casings of all pieces
/// go under all lines and corners join cleanly).
fn boundary_segment(
    canvas: &Canvas<'_>,
    a: (i32, i32),
    b: (i32, i32),
    pass: u8,
    clip: Option<Rect>,
) -> Result<(), PlotError> {
    let (x0, x1) = (a.0.min(b.0), a.0.max(b.0));
    let (y0, y1) = (a.1.min(b.1), a.1.max(b.1));
    let rect = |half: i32| {
        let (mut p, mut q) = ((x0 - half, y0 - half), (x1 + half + 1, y1 + half + 1));
        if let Some(c) = clip {
            p = (p.0.max(c.left), p.1.max(c.top));
            q = (q.0.min(c.right), q.1.min(c.bottom));
        }
        (p, q)
    };
    if pass != 2 {
        let (p, q) = rect(3);
        fill_rect(canvas, p, q, BACKGROUND)?;
    }
    if pass != 1 {
        let (p, q) = rect(1);
        fill_rect(canvas, p, q, INK)?;
    }
    Ok(())
}

/// A cell without data: light grey with a diagonal hatch.
fn no_data_cell(canvas: &Canvas<'_>, r: Rect) -> Result<(), PlotError> {
    fill_rect(canvas, (r.left, r.top), (r.right, r.bottom), GRID_MINOR)?;
    let step = 8;
    let (w, h) = (r.width(), r.height());
    let mut k = step;
    while k < w + h {
        // The line x + y = k (relative), clipped to the cell.
        let (x0, y0) = (k.min(w), k - k.min(w));
        let (x1, y1) = (k - k.min(h), k.min(h));
        line(
            canvas,
            (r.left + x0, r.top + y0),
            (r.left + x1, r.top + y1),
            GUIDE,
        )?;
        k += step;
    }
    Ok(())
}

/// Indices of the labels to show, every `k`-th from the first, with `k` the
/// smallest for which labels `widest` pixels wide fit in slots `slot` wide.
fn thinned(count: usize, slot: f64, widest: i32) -> Vec<usize> {
    if count == 0 {
        return Vec::new();
    }
    let need = f64::from(widest + 8);
    let k = if slot <= 0.0 {
        count
    } else {
        ((need / slot).ceil() as usize).clamp(1, count)
    };
    (0..count).step_by(k).collect()
}

/// Renders a heatmap (phase diagram) as an SVG document of [`SWEEP_WIDTH`]
/// pixels.
///
/// One rectangle per grid cell (per block of cells, for a grid finer than
/// the chart's pixels: see `in_blocks`), coloured on the viridis scale over
/// `value_range` (hatched grey where there is no data), with its value
/// written in it when the cell is large enough; rows and columns labelled
/// with their grid values (thinned when crowded); a colour bar with ticks on
/// the right; and, with `boundary`, a thick cased line along every cell edge
/// whose two cells lie on opposite sides of the level.
///
/// An empty grid gives a chart with a "no data" note rather than an error.
///
/// # Errors
///
/// [`PlotError::Font`] / [`PlotError::Drawing`] if plotters fails.
pub fn render_heatmap_svg(chart: &HeatmapChart) -> Result<String, PlotError> {
    ensure_fonts()?;
    let grid = (chart.x_values.len(), chart.y_values.len());
    let blocks = in_blocks(chart);
    let (chart, block) = match &blocks {
        Some((drawn, block)) => (drawn, Some(*block)),
        None => (chart, None),
    };
    let width = SWEEP_WIDTH as i32;
    let cols = chart.x_values.len();
    let rows = chart.y_values.len();
    let (v_lo, v_hi) = {
        let (a, b) = chart.value_range;
        let (a, b) = if a.is_finite() && b.is_finite() {
            (a.min(b), a.max(b))
        } else {
            finite_range(chart.cells.iter().flatten().flatten().copied()).unwrap_or((0.0, 1.0))
        };
        if b > a {
            (a, b)
        } else if a == 0.0 {
            (0.0, 1.0)
        } else {
            (a - a.abs() * 0.5, a + a.abs() * 0.5)
        }
    };
    let level = chart.boundary.filter(|v| v.is_finite());
    let frac = |v: f64| (v - v_lo) / (v_hi - v_lo);

    let mut legend = Vec::new();
    if let Some(l) = level {
        let what = if chart.value_label.is_empty() {
            "the value".to_string()
        } else {
            chart.value_label.clone()
        };
        // The swatch also stands for the level's mark on the colour bar, so
        // it stays when no cell edge has the level between its two sides.
        let nowhere = if boundary_edges(chart, l).next().is_none() {
            " (nowhere in this grid)"
        } else {
            ""
        };
        legend.push(LegendEntry {
            swatch: Swatch::Boundary,
            label: format!("boundary: {what} crosses {}{nowhere}", format_number(l)),
        });
    }
    if let Some((wide, tall)) = block {
        legend.push(LegendEntry {
            swatch: Swatch::Block,
            label: format!(
                "a cell: the mean of {wide} × {tall} grid points (the {} × {} grid as {cols} × {rows})",
                format_count(grid.0 as u64),
                format_count(grid.1 as u64),
            ),
        });
    }
    let any_missing = (0..rows).any(|r| (0..cols).any(|c| cell(chart, r, c).is_none()));
    if any_missing && rows > 0 && cols > 0 {
        legend.push(LegendEntry {
            swatch: Swatch::NoData,
            label: "no data".into(),
        });
    }
    let header = Header::layout(
        &chart.title,
        &chart.subtitle,
        &legend,
        SWATCH_W,
        width,
        LEGEND_GAP,
    )?;

    let tick = TextSpec::new(size::TICK, MUTED_INK);
    let x_labels: Vec<String> = chart.x_values.iter().map(|v| format_number(*v)).collect();
    let y_labels: Vec<String> = chart.y_values.iter().map(|v| format_number(*v)).collect();
    let bar_ticks = {
        let step = nice_step(v_hi - v_lo, 5);
        let first = (v_lo / step - 1e-9).ceil() as i64;
        let last = (v_hi / step + 1e-9).floor() as i64;
        (first..=last.min(first + 64))
            .map(|k| tidy(k as f64 * step))
            .collect::<Vec<f64>>()
    };
    let mut bar_label_w = 0;
    for v in &bar_ticks {
        bar_label_w = bar_label_w.max(tick.width(&format_number(*v))?);
    }
    const BAR_W: i32 = 22;
    // Colour bar: gap, bar, tick marks and labels, gap, upward title.
    let right_w = 28 + BAR_W + 6 + bar_label_w + 10 + line_height(size::AXIS_TITLE);
    let plot_left = MARGIN + y_axis_width(&y_labels, !chart.y_label.is_empty())?;
    let plot_right = width - MARGIN - right_w;
    let plot_w = plot_right - plot_left;
    let cell_h = if cols == 0 {
        60.0
    } else {
        (f64::from(plot_w) / cols as f64 * 0.6).clamp(24.0, 80.0)
    };
    let plot_h = ((cell_h * rows.max(1) as f64).round() as i32).clamp(240, 520);
    let plot = Rect::new(
        plot_left,
        header.bottom + 12,
        plot_right,
        header.bottom + 12 + plot_h,
    );
    let height = plot.bottom + x_axis_height() + 16;
    // Cell edges: column c spans col_x(c)..col_x(c + 1); row r (0 = lowest)
    // spans row_y(r + 1)..row_y(r).
    let col_x = |c: usize| {
        plot.left + (c as f64 * f64::from(plot.width()) / cols.max(1) as f64).round() as i32
    };
    let row_y = |r: usize| {
        plot.bottom - (r as f64 * f64::from(plot.height()) / rows.max(1) as f64).round() as i32
    };

    draw_svg((SWEEP_WIDTH, height as u32), |canvas| {
        header.draw(canvas, &chart.title, &chart.subtitle, &legend, width)?;

        if rows == 0 || cols == 0 {
            stroke_rect(
                canvas,
                (plot.left, plot.top),
                (plot.right, plot.bottom),
                AXIS,
            )?;
            note(canvas, plot, "no data")?;
        }
        // Cells.
        let value_spec = TextSpec::new(size::VALUE, INK).anchor(HPos::Center, VPos::Center);
        let value_h = line_height(size::VALUE);
        // Values are written in every cell or in none: a grid where only
        // the short labels ("0.5") appear would look like it has holes.
        let mut widest_value = 0;
        for r in 0..rows {
            for c in 0..cols {
                if let Some(v) = cell(chart, r, c) {
                    widest_value = widest_value.max(value_spec.width(&format_number(v))?);
                }
            }
        }
        let show_values = rows > 0
            && cols > 0
            && f64::from(plot.height()) / rows as f64 >= f64::from(value_h + 4)
            && f64::from(plot.width()) / cols as f64 >= f64::from(widest_value + 10);
        for r in 0..rows {
            for c in 0..cols {
                let rect = Rect::new(col_x(c), row_y(r + 1), col_x(c + 1), row_y(r));
                match cell(chart, r, c) {
                    Some(v) => {
                        let color = viridis(frac(v));
                        fill_rect(
                            canvas,
                            (rect.left, rect.top),
                            (rect.right, rect.bottom),
                            color,
                        )?;
                        let text = format_number(v);
                        if show_values {
                            value_spec.with_color(crate::style::text_on(color)).draw(
                                canvas,
                                &text,
                                (rect.center_x(), rect.center_y()),
                            )?;
                        }
                    }
                    None => no_data_cell(canvas, rect)?,
                }
            }
        }
        // Boundary.
        if let Some(l) = level {
            let pieces: Vec<_> = boundary_edges(chart, l)
                .map(|edge| match edge {
                    CellEdge::Right(r, c) => {
                        let x = col_x(c + 1);
                        ((x, row_y(r + 1)), (x, row_y(r)))
                    }
                    CellEdge::Below(r, c) => {
                        let y = row_y(r + 1);
                        ((col_x(c), y), (col_x(c + 1), y))
                    }
                })
                .collect();
            for pass in [1, 2] {
                for (a, b) in &pieces {
                    boundary_segment(canvas, *a, *b, pass, Some(plot))?;
                }
            }
        }
        if rows > 0 && cols > 0 {
            stroke_rect(
                canvas,
                (plot.left, plot.top),
                (plot.right, plot.bottom),
                AXIS,
            )?;
        }

        // X axis: labels at column centres.
        let slot = f64::from(plot.width()) / cols.max(1) as f64;
        let mut widest = 0;
        for l in &x_labels {
            widest = widest.max(tick.width(l)?);
        }
        let xt = tick.anchor(HPos::Center, VPos::Top);
        for c in thinned(cols, slot, widest) {
            let x = (col_x(c) + col_x(c + 1)) / 2;
            line(canvas, (x, plot.bottom), (x, plot.bottom + 5), AXIS)?;
            xt.draw(canvas, &x_labels[c], (x, plot.bottom + 8))?;
        }
        let title_top = plot.bottom + 8 + line_height(size::TICK) + 4;
        TextSpec::new(size::AXIS_TITLE, INK)
            .anchor(HPos::Center, VPos::Top)
            .draw(canvas, &chart.x_label, (plot.center_x(), title_top))?;
        // Y axis: labels at row centres.
        let slot = f64::from(plot.height()) / rows.max(1) as f64;
        let yt = tick.anchor(HPos::Right, VPos::Center);
        for r in thinned(rows, slot, line_height(size::TICK) - 8) {
            let y = (row_y(r) + row_y(r + 1)) / 2;
            line(canvas, (plot.left - 5, y), (plot.left, y), AXIS)?;
            yt.draw(canvas, &y_labels[r], (plot.left - 8, y))?;
        }
        if !chart.y_label.is_empty() {
            TextSpec::new(size::AXIS_TITLE, INK)
                .anchor(HPos::Center, VPos::Top)
                .upward()
                .draw(canvas, &chart.y_label, (MARGIN, plot.center_y()))?;
        }

        // Colour bar.
        let bar = Rect::new(
            plot.right + 28,
            plot.top,
            plot.right + 28 + BAR_W,
            plot.bottom,
        );
        let steps = bar.height().max(1);
        let mut y = bar.bottom;
        let chunk = 4;
        while y > bar.top {
            let top = (y - chunk).max(bar.top);
            let t = f64::from(bar.bottom - (y + top) / 2) / f64::from(steps);
            // Overlap the previous chunk by a pixel: no anti-aliased seams.
            fill_rect(
                canvas,
                (bar.left, top),
                (bar.right, (y + 1).min(bar.bottom)),
                viridis(t),
            )?;
            y = top;
        }
        stroke_rect(canvas, (bar.left, bar.top), (bar.right, bar.bottom), AXIS)?;
        let bs = Scale::linear(v_lo, v_hi, bar.bottom, bar.top);
        let bt = tick.anchor(HPos::Left, VPos::Center);
        for v in &bar_ticks {
            let y = bs.map(*v);
            line(canvas, (bar.right, y), (bar.right + 5, y), AXIS)?;
            bt.draw(canvas, &format_number(*v), (bar.right + 8, y))?;
        }
        if let Some(l) = level.filter(|l| *l >= v_lo && *l <= v_hi) {
            let y = bs.map(l);
            boundary_segment(canvas, (bar.left - 4, y), (bar.right, y), 0, None)?;
        }
        let bar_title_x = bar.right + 8 + bar_label_w + 10;
        let spec = TextSpec::new(size::AXIS_TITLE, INK)
            .anchor(HPos::Center, VPos::Top)
            .upward();
        let text = spec.fit(&chart.value_label, bar.height())?;
        spec.draw(canvas, &text, (bar_title_x, bar.center_y()))?;
        Ok(())
    })
}
