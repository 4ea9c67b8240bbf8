//! The branches chart: a request that waits for several calls made at once
//! (a parallel step) beside each of those calls, so that one sees that the
//! whole is slower than its slowest part, and what changes when it stops
//! waiting for one of them.
//!
//! ```text
//! ▇ wait-for-all  ▇ reviews-optional  ┆ the slowest branch's p99 (dashed)
//!
//! ■ wait-for-all                              ┆ slowest branch: p99 122 ms
//!   end to end        ▇▇▇▇ p50 38.1 ms        ┆
//!                     ▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇ p99 141 ms · 19.8 ms over the …
//!   page → inventory  ▇▇ p50 20.4 ms          ┆
//!                     ▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇ p99 98.1 ms
//!   page → reviews    ▇▇▇ p50 25.8 ms         ┆
//!                     ▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇┆ p99 122 ms
//! ■ reviews-optional
//!   …
//!                     0      50      100      150      200
//!                                 Latency (ms)
//! ```
//!
//! One group per variant, titled with its name after its colour swatch;
//! in it one row for the requests end to end and one per branch, each with
//! a p50 bar (a light shade of the variant's colour) over a p99 bar (its
//! colour), as in the comparison chart's percentile panel. A dashed line
//! through the group marks its slowest branch's p99, the bars behind it,
//! and the end-to-end p99 says how far past it (or short of it) the whole
//! is. All groups share one scale.

use plotters::style::text_anchor::{HPos, VPos};

use crate::axes::{draw_x_axis, x_axis_height, zero_based_ticks, Scale};
use crate::canvas::{
    draw_svg, fill_rect, line, line_height, polyline, Canvas, Rect, TextSpec, MARGIN,
};
use crate::comparison::{row_note, variant_bar};
use crate::header::{Header, LegendItem};
use crate::style::{
    ensure_fonts, format_compact, format_ms, format_number, lighten, series_color, size, AXIS,
    BACKGROUND, GRID, INK, MAX_VARIANTS, MUTED_INK,
};
use crate::timeline::{LEGEND_GAP, SWATCH_W};
use crate::PlotError;

/// One row of the chart: a p50 and a p99, in milliseconds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PercentileRow {
    /// What the row measures, e.g. `page → reviews`.
    pub name: String,
    /// Median, ms (`None`: nothing was measured; drawn as such).
    pub p50_ms: Option<f64>,
    /// 99th percentile, ms.
    pub p99_ms: Option<f64>,
}

impl PercentileRow {
    fn p99(&self) -> Option<f64> {
        self.p99_ms.filter(|ms| ms.is_finite() && *ms >= 0.0)
    }

    fn is_empty(&self) -> bool {
        [self.p50_ms, self.p99_ms]
            .iter()
            .all(|ms| !ms.is_some_and(|ms| ms.is_finite() && ms >= 0.0))
    }
}

/// One variant: its requests end to end and each branch, as one group.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BranchesVariant {
    /// The variant, e.g. `reviews-optional`: the group's title.
    pub name: String,
    /// The requests end to end (its name labels the row, e.g. `end to
    /// end`); drawn first, in bold.
    pub whole: PercentileRow,
    /// One row per branch of a parallel step, in model order.
    pub branches: Vec<PercentileRow>,
}

impl BranchesVariant {
    /// The index of the branch with the highest p99, if any has one (the
    /// first of equals).
    fn slowest(&self) -> Option<usize> {
        let mut best: Option<(usize, f64)> = None;
        for (i, b) in self.branches.iter().enumerate() {
            if let Some(ms) = b.p99() {
                if best.is_none_or(|(_, top)| ms > top) {
                    best = Some((i, ms));
                }
            }
        }
        best.map(|(i, _)| i)
    }
}

/// Everything the branches chart shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BranchesChart {
    /// The headline, e.g. the model and what the chart shows.
    pub title: String,
    /// A line of context under the title; may be empty.
    pub subtitle: String,
    /// One group per variant, 1 to [`MAX_VARIANTS`], top to bottom in this
    /// order (which also gives their colours, as in every chart of a run).
    pub variants: Vec<BranchesVariant>,
}

/// Width of the branches chart, in pixels; its height grows with the number
/// of rows (40 px each).
pub const BRANCHES_WIDTH: u32 = 1400;

/// One row: two bars and their labels.
const ROW_H: i32 = 40;
/// A bar's thickness.
const BAR_T: i32 = 14;
/// Space between the end-to-end row and the branches' rows.
const WHOLE_GAP: i32 = 6;
/// Space under each group's last row.
const GROUP_GAP: i32 = 16;
/// Row names longer than this are shortened with "…".
const MAX_NAME_WIDTH: i32 = 260;
/// Row names are indented under their variant's name.
const INDENT: i32 = 22;
/// The swatch before a variant's name.
const SWATCH: i32 = 14;
/// The marker of the slowest branch's p99.
const MARKER_COLOR: plotters::style::RGBColor = MUTED_INK;

/// Renders the branches chart as an SVG document, [`BRANCHES_WIDTH`] wide
/// and as tall as its rows need.
///
/// Each row has a p50 bar over a p99 bar, each followed by its value
/// (`p50 38.1 ms`, `p99 141 ms`). In each group a dashed line marks the
/// highest p99 of its branches, labelled above the group's rows; the
/// end-to-end p99 label adds how far past that line (`· 19.8 ms over the
/// slowest branch`) or short of it the whole is. A row without a value says
/// "n/a"; a variant without branches says so. The value labels sit on white
/// so that neither the grid nor the marker crosses them.
///
/// The output depends only on `chart`, so the same input gives a
/// byte-identical file.
///
/// # Errors
///
/// [`PlotError::NoVariants`] without variants, [`PlotError::TooManyVariants`]
/// past [`MAX_VARIANTS`], [`PlotError::Font`] / [`PlotError::Drawing`] if
/// plotters fails. Missing or odd values are drawn as such, never an error.
pub fn render_branches_svg(chart: &BranchesChart) -> Result<String, PlotError> {
    PlotError::check_count(chart.variants.len(), MAX_VARIANTS)?;
    ensure_fonts()?;
    let width = BRANCHES_WIDTH as i32;

    let mut legend: Vec<Key> = chart
        .variants
        .iter()
        .enumerate()
        .map(|(i, v)| Key::Variant(i, v.name.clone()))
        .collect();
    if chart.variants.iter().any(|v| v.slowest().is_some()) {
        legend.push(Key::Marker);
    }
    let header = Header::layout(
        &chart.title,
        &chart.subtitle,
        &legend,
        SWATCH_W,
        width,
        LEGEND_GAP,
    )?;

    // The name column: every row's name, the end-to-end ones in bold.
    let mut name_w = 0;
    for v in &chart.variants {
        name_w = name_w.max(whole_spec().width(&whole_spec().fit(&v.whole.name, MAX_NAME_WIDTH)?)?);
        for b in &v.branches {
            name_w = name_w.max(name_spec().width(&name_spec().fit(&b.name, MAX_NAME_WIDTH)?)?);
        }
    }
    let plot_left = MARGIN + INDENT + name_w + 16;
    let plot_right = width - MARGIN;

    let labels: Vec<Labels> = chart.variants.iter().map(Labels::new).collect();
    let xs = scale(&chart.variants, &labels, plot_left, plot_right)?;
    let (ticks, end) = zero_based_ticks(xs.hi, 6);
    let xs = Scale::linear(0.0, end, plot_left, plot_right);

    // Vertical layout: each group's title, then its rows.
    let title_h = line_height(size::AXIS_TITLE) + 8;
    let mut tops = Vec::new();
    let mut y = header.bottom + 4;
    for v in &chart.variants {
        tops.push(y);
        y += title_h + group_rows_h(v) + GROUP_GAP;
    }
    let groups_bottom = y - GROUP_GAP;
    let height = groups_bottom + x_axis_height() + 16;

    draw_svg((BRANCHES_WIDTH, height as u32), |canvas| {
        header.draw(canvas, &chart.title, &chart.subtitle, &legend, width)?;
        for (i, ((v, l), &top)) in chart.variants.iter().zip(&labels).zip(&tops).enumerate() {
            draw_group(canvas, i, v, l, top, title_h, (&xs, &ticks))?;
        }
        let axis = Rect::new(plot_left, groups_bottom, plot_right, groups_bottom);
        draw_x_axis(
            canvas,
            axis,
            &xs,
            &ticks,
            &[],
            &format_compact,
            "Latency (ms)",
        )?;
        Ok(())
    })
}

/// The height of a group's rows: the end-to-end row, then one per branch
/// (or one for the note that there is none).
fn group_rows_h(v: &BranchesVariant) -> i32 {
    ROW_H + WHOLE_GAP + v.branches.len().max(1) as i32 * ROW_H
}

/// A group: its title, with the marker's label at the marker, then its rows.
fn draw_group(
    canvas: &Canvas<'_>,
    i: usize,
    v: &BranchesVariant,
    labels: &Labels,
    top: i32,
    title_h: i32,
    (xs, ticks): (&Scale, &[f64]),
) -> Result<(), PlotError> {
    let rows_top = top + title_h;
    let band = Rect::new(xs.p0, rows_top, xs.p1, rows_top + group_rows_h(v));
    for t in ticks {
        let x = xs.map(*t);
        line(canvas, (x, band.top), (x, band.bottom), GRID)?;
    }

    // The title: the variant's swatch and name.
    let title_y = top + title_h / 2 - 3;
    variant_bar(
        canvas,
        (MARGIN, title_y - SWATCH / 2),
        (MARGIN + SWATCH, title_y + SWATCH / 2),
        i,
        series_color(i),
    )?;
    let title = TextSpec::new(size::AXIS_TITLE, INK)
        .bold()
        .anchor(HPos::Left, VPos::Center);
    let name = title.fit(&v.name, xs.p1 - MARGIN - SWATCH - 8)?;
    title.draw(canvas, &name, (MARGIN + SWATCH + 8, title_y))?;
    let title_right = MARGIN + SWATCH + 8 + title.width(&name)?;

    // The marker, behind the bars, with its label on the title's line when
    // there is room for it there.
    if let Some(ms) = v.slowest().and_then(|s| v.branches[s].p99()) {
        let x = xs.map(ms);
        dashed_vline(canvas, x, title_y + 8, band.bottom)?;
        let spec = TextSpec::new(size::VALUE, MUTED_INK);
        let text = format!("slowest branch: p99 {}", format_ms(ms));
        let w = spec.width(&text)?;
        // Right of the line, or left of it where the plot ends too soon.
        let left = if x + 6 + w <= xs.p1 { x + 6 } else { x - 6 - w };
        if left > title_right + 16 {
            spec.anchor(HPos::Left, VPos::Center)
                .draw(canvas, &text, (left, title_y))?;
        }
    }

    line(
        canvas,
        (band.left, band.top),
        (band.left, band.bottom),
        AXIS,
    )?;
    let row_center = |r: usize| {
        let gap = if r == 0 { 0 } else { WHOLE_GAP };
        rows_top + gap + r as i32 * ROW_H + ROW_H / 2
    };
    draw_row(canvas, i, &v.whole, &labels.whole, row_center(0), xs, true)?;
    if v.branches.is_empty() {
        let y = row_center(1);
        let plot = Rect::new(xs.p0, y - ROW_H / 2, xs.p1, y + ROW_H / 2);
        return row_note(canvas, plot, y, "no branch of a parallel step measured");
    }
    for (r, (b, l)) in v.branches.iter().zip(&labels.branches).enumerate() {
        draw_row(canvas, i, b, l, row_center(r + 1), xs, false)?;
    }
    Ok(())
}

/// One row: its name, its p50 bar over its p99 bar, each with its label.
fn draw_row(
    canvas: &Canvas<'_>,
    i: usize,
    row: &PercentileRow,
    labels: &[String; 2],
    center: i32,
    xs: &Scale,
    whole: bool,
) -> Result<(), PlotError> {
    let spec = if whole { whole_spec() } else { name_spec() };
    let name = spec.fit(&row.name, MAX_NAME_WIDTH)?;
    spec.draw(canvas, &name, (MARGIN + INDENT, center))?;
    if row.is_empty() {
        let plot = Rect::new(xs.p0, center - ROW_H / 2, xs.p1, center + ROW_H / 2);
        return row_note(canvas, plot, center, "n/a: nothing measured");
    }
    let color = series_color(i);
    // Each bar with the band its label's box covers: from the row's middle
    // to past the bar's outer edge, all the room its letters may take.
    let edge = ROW_H / 2 - 1;
    let bars = [
        (
            row.p50_ms,
            lighten(color, 0.55),
            center - 1 - BAR_T,
            (center - edge, center),
        ),
        (row.p99_ms, color, center + 1, (center, center + edge)),
    ];
    for ((ms, fill, top, band), label) in bars.into_iter().zip(labels) {
        let x_end = match ms {
            Some(ms) if ms.is_finite() && ms > 0.0 => xs.map(ms),
            _ => xs.p0,
        };
        if x_end > xs.p0 {
            variant_bar(canvas, (xs.p0, top), (x_end, top + BAR_T), i, fill)?;
        }
        boxed_label(canvas, label, (x_end + 6, top + BAR_T / 2), band)?;
    }
    Ok(())
}

/// The marker: a dashed vertical line from `y0` down to `y1` at `x`
/// (plotters has no `stroke-dasharray`, and [`dashed_polyline`] draws a line
/// with no width solid).
///
/// [`dashed_polyline`]: crate::canvas::dashed_polyline
fn dashed_vline(canvas: &Canvas<'_>, x: i32, y0: i32, y1: i32) -> Result<(), PlotError> {
    let mut y = y0;
    while y < y1 {
        let end = (y + 6).min(y1);
        polyline(canvas, vec![(x, y), (x, end)], MARKER_COLOR, 2)?;
        y = end + 4;
    }
    Ok(())
}

/// A value label left-anchored at `x` and vertically centred on `y`, on a
/// white box from `top` to `bottom` that hides the grid and the marker
/// behind it.
fn boxed_label(
    canvas: &Canvas<'_>,
    text: &str,
    (x, y): (i32, i32),
    (top, bottom): (i32, i32),
) -> Result<(), PlotError> {
    let spec = TextSpec::new(size::VALUE, INK).anchor(HPos::Left, VPos::Center);
    let w = spec.width(text)?;
    fill_rect(canvas, (x - 4, top), (x + w + 4, bottom), BACKGROUND)?;
    spec.draw(canvas, text, (x, y))
}

fn name_spec() -> TextSpec {
    TextSpec::new(size::TICK, INK).anchor(HPos::Left, VPos::Center)
}

fn whole_spec() -> TextSpec {
    name_spec().bold()
}

/// The value labels of a group: `[p50, p99]` for its end-to-end row and
/// for each branch.
struct Labels {
    whole: [String; 2],
    branches: Vec<[String; 2]>,
}

impl Labels {
    fn new(v: &BranchesVariant) -> Labels {
        let pair = |row: &PercentileRow| {
            [
                format!("p50 {}", ms_or_na(row.p50_ms)),
                format!("p99 {}", ms_or_na(row.p99_ms)),
            ]
        };
        let mut whole = pair(&v.whole);
        let slowest = v.slowest().and_then(|s| v.branches[s].p99());
        if let (Some(all), Some(part)) = (v.whole.p99(), slowest) {
            whole[1] = format!("{} · {}", whole[1], versus(all, part));
        }
        Labels {
            whole,
            branches: v.branches.iter().map(pair).collect(),
        }
    }

    fn all(&self) -> impl Iterator<Item = &String> {
        self.whole.iter().chain(self.branches.iter().flatten())
    }
}

fn ms_or_na(ms: Option<f64>) -> String {
    ms.map_or_else(|| "n/a".to_string(), format_ms)
}

/// "19.8 ms over the slowest branch", "3.2 ms under the slowest branch", or
/// "same as the slowest branch" when the difference rounds to nothing.
fn versus(whole_ms: f64, branch_ms: f64) -> String {
    let d = whole_ms - branch_ms;
    let shown = format_number(d.abs());
    if shown == "0" {
        "same as the slowest branch".to_string()
    } else if d > 0.0 {
        format!("{shown} ms over the slowest branch")
    } else {
        format!("{shown} ms under the slowest branch")
    }
}

/// A scale from 0 on which every bar still has room for its label after it
/// in `left..right` (its end is made a round number by the caller).
fn scale(
    variants: &[BranchesVariant],
    labels: &[Labels],
    left: i32,
    right: i32,
) -> Result<Scale, PlotError> {
    let value = TextSpec::new(size::VALUE, INK);
    let width = f64::from(right - left);
    let mut end: f64 = 1.0;
    for (v, l) in variants.iter().zip(labels) {
        let rows = std::iter::once(&v.whole).chain(&v.branches);
        let values = rows.flat_map(|r| [r.p50_ms, r.p99_ms]);
        for (ms, label) in values.zip(l.all()) {
            let Some(ms) = ms.filter(|ms| ms.is_finite() && *ms > 0.0) else {
                continue;
            };
            // A bar of `ms` ending at x needs x + 9 + its label's width ≤ right.
            let room = (width - 9.0 - f64::from(value.width(label)?)).max(width / 3.0);
            end = end.max(ms * width / room);
        }
    }
    Ok(Scale::linear(0.0, end, left, right))
}

/// A legend entry: a variant's colour, or the marker.
enum Key {
    Variant(usize, String),
    Marker,
}

impl LegendItem for Key {
    fn label(&self) -> &str {
        match self {
            Key::Variant(_, name) => name,
            Key::Marker => "the slowest branch's p99 (dashed)",
        }
    }

    fn draw_swatch(&self, canvas: &Canvas<'_>, x: i32, cy: i32) -> Result<(), PlotError> {
        match self {
            Key::Variant(i, _) => variant_bar(
                canvas,
                (x, cy - SWATCH / 2),
                (x + SWATCH_W, cy + SWATCH / 2),
                *i,
                series_color(*i),
            ),
            Key::Marker => dashed_vline(canvas, x + SWATCH_W / 2, cy - 9, cy + 9),
        }
    }
}
