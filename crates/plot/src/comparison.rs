//! The variant comparison chart: one picture answering "which resilience
//! setting behaves best under this fault?".
//!
//! Layout (1400 × 900 px): title, subtitle and one colour key for all
//! panels at the top; then
//!
//! ```text
//! ┌ latency CDF (log ms) ────────────┐ ┌ success rate (%) ─────────┐
//! │                                  │ │ variant ▇▇▇▇▇▇▇▇▇ 97.0%   │
//! └──────────────────────────────────┘ └───────────────────────────┘
//! ┌ per-service amplification ───────┐ ┌ p50 / p99 latency (ms) ───┐
//! │ calls per request, by service    │ │ variant ▇ p50 14 ms       │
//! │ wasted ▲ / cancelled ▼ work      │ │         ▇▇▇▇▇ p99 404 ms  │
//! │                                  │ │         ▇▇▇ p99 ok 210 ms │
//! └──────────────────────────────────┘ └───────────────────────────┘
//! ```
//!
//! Variant `i` has colour [`series_color`]`(i)` everywhere; past
//! [`MAX_SERIES`] variants the colours come round again, striped (bars and
//! swatches) or dashed (lines), up to [`MAX_VARIANTS`]. The chart grows taller
//! past eight variants ([`comparison_height`]) so that every row of the bar
//! panels keeps room for its bars and labels. The two panels on
//! the right are horizontal bar charts so that long variant names
//! (`end-to-end-deadline`) sit on one line, and they share one name column so
//! their rows line up like a table. In the amplification panel bars are
//! grouped by service and coloured by variant (rather than the other way
//! round) so the colour code never changes meaning between panels, and the
//! variants' effect on one service sits side by side.
//!
//! When some variant has answers that a fallback gave instead of the failed
//! call (degraded: a stale cached value, a default, a secondary service), its
//! success bar is split: the share answered in full in the variant's colour,
//! then the degraded share in a lighter shade of it, with a key on the
//! panel's title line. A model without fallbacks keeps the plain bars.

use plotters::style::text_anchor::{HPos, VPos};
use plotters::style::RGBColor;

use crate::axes::{
    draw_x_axis, draw_y_axis, log_range, log_ticks, x_axis_height, y_axis_width, zero_based_ticks,
    Scale,
};
use crate::canvas::MARGIN;
use crate::canvas::{
    dashed_hline, dashed_polyline, draw_svg, line, line_height, patterned_bar, polyline, Canvas,
    Rect, TextSpec,
};
use crate::header::note;
use crate::style::{
    darken, ensure_fonts, format_compact, format_ms, format_number, format_percent, format_ratio,
    lighten, series_color, series_striped, size, text_on, AXIS, GUIDE, INK, MAX_SERIES,
    MAX_VARIANTS, MUTED_INK,
};
use crate::PlotError;
use std::collections::{BTreeMap, BTreeSet};

/// One variant of a model, as the comparison chart needs it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VariantSeries {
    /// The variant's name, shown in the colour key and on the bar charts.
    pub name: String,
    /// Empirical CDF of end-to-end latency over ALL logical requests
    /// (success or error), as (latency_ms, cumulative fraction in (0,1])
    /// points sorted by latency. May be empty (no requests).
    pub latency_cdf: Vec<(f64, f64)>,
    /// How many logical requests the variant served; 0 marks the variant
    /// "no requests" in the success and percentile panels.
    pub requests: u64,
    /// Fraction of logical requests that succeeded, 0..=1: answered in full
    /// or degraded.
    pub success_rate: f64,
    /// Of all logical requests, the fraction that a fallback answered
    /// (degraded), 0..=`success_rate`; 0 without fallbacks. The success bar
    /// shows it apart, in a lighter shade, so that a variant kept up by
    /// stale or default answers does not pass for a healthy one.
    pub degraded_rate: f64,
    /// Median end-to-end latency, in milliseconds.
    pub latency_p50_ms: f64,
    /// 99th percentile end-to-end latency, in milliseconds.
    pub latency_p99_ms: f64,
    /// 99th percentile latency of the requests that succeeded, in
    /// milliseconds (NaN: none did). Beside the p99 of all requests, which a
    /// timeout caps, it shows what the users who were answered waited: LIFO
    /// and shedding keep it low while the p99 of all sits at the timeout.
    pub ok_latency_p99_ms: f64,
    /// Per service, in model order: (service name, calls received per
    /// logical request).
    pub calls_per_request: Vec<(String, f64)>,
    /// Per service, in model order: (service name, work completed after its
    /// caller gave up).
    pub wasted: Vec<(String, u64)>,
    /// Per service, in model order: (service name, work stopped early by
    /// cancellation).
    pub cancelled: Vec<(String, u64)>,
}

/// Everything the comparison chart shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ComparisonChart {
    /// The headline, e.g. the model name and the fault injected.
    pub title: String,
    /// A line of context under the title (seed, duration, load); may be
    /// empty.
    pub subtitle: String,
    /// The variants to compare, 1 to [`MAX_VARIANTS`], in the order they
    /// should appear (which also fixes their colours and patterns).
    pub variants: Vec<VariantSeries>,
}

/// Width of the comparison chart, in pixels.
pub const COMPARISON_WIDTH: u32 = 1400;
/// Height of the comparison chart with up to [`MAX_SERIES`] variants, in
/// pixels; see [`comparison_height`].
pub const COMPARISON_HEIGHT: u32 = 900;

/// Height of the comparison chart for `variants` variants: 64 px more for
/// each one past [`MAX_SERIES`], so rows of the bar panels stay about as tall
/// as with eight (the panels' rows share the height).
pub fn comparison_height(variants: usize) -> u32 {
    let extra = variants
        .saturating_sub(MAX_SERIES)
        .min(MAX_VARIANTS - MAX_SERIES);
    COMPARISON_HEIGHT + 64 * extra as u32
}

/// Name column width limit: longer variant names are shortened with "…".
const MAX_NAME_WIDTH: i32 = 230;

/// Renders the comparison chart as an SVG document.
///
/// The output depends only on `chart` (no clock, no hash-map order, fonts
/// embedded), so the same input gives a byte-identical file.
///
/// # Errors
///
/// [`PlotError::NoVariants`] if there is no variant (an empty chart would
/// hide the mistake), [`PlotError::TooManyVariants`] past [`MAX_VARIANTS`]
/// (colours and patterns would repeat), and [`PlotError::Font`] / [`PlotError::Drawing`]
/// if plotters fails. Empty or degenerate data (no requests, an empty CDF,
/// all latencies equal, NaN) is not an error: it is drawn as such.
pub fn render_comparison_svg(chart: &ComparisonChart) -> Result<String, PlotError> {
    let n = chart.variants.len();
    PlotError::check_count(n, MAX_VARIANTS)?;
    ensure_fonts()?;

    let height = comparison_height(n);
    draw_svg((COMPARISON_WIDTH, height), |canvas| {
        let width = COMPARISON_WIDTH as i32;
        let height = height as i32;
        let top = draw_header(canvas, chart, width)?;
        let area = Rect::new(MARGIN, top, width - MARGIN, height - 12);
        let col_gap = 48;
        let row_gap = 30;
        let left_w = (area.width() - col_gap) * 56 / 100;
        let row1_h = (area.height() - row_gap) * 45 / 100;
        let split_x = area.left + left_w;
        let split_y = area.top + row1_h;

        let cdf = Rect::new(area.left, area.top, split_x, split_y);
        let amp = Rect::new(area.left, split_y + row_gap, split_x, area.bottom);
        let success = Rect::new(split_x + col_gap, area.top, area.right, split_y);
        let pct = Rect::new(
            split_x + col_gap,
            split_y + row_gap,
            area.right,
            area.bottom,
        );

        let names = NameColumn::new(chart)?;
        draw_cdf_panel(canvas, cdf, chart)?;
        draw_amplification_panel(canvas, amp, chart)?;
        draw_success_panel(canvas, success, chart, &names)?;
        draw_percentile_panel(canvas, pct, chart, &names)?;
        Ok(())
    })
}

/// Title, subtitle and the colour key (wrapped onto as many rows as the
/// names need). Returns the y where the panels may start.
fn draw_header(canvas: &Canvas<'_>, chart: &ComparisonChart, width: i32) -> Result<i32, PlotError> {
    let max_w = width - 2 * MARGIN;
    let mut y = 16;
    let title = TextSpec::new(size::TITLE, INK).bold();
    title.draw(canvas, &title.fit(&chart.title, max_w)?, (MARGIN, y))?;
    y += line_height(size::TITLE);
    if !chart.subtitle.is_empty() {
        let sub = TextSpec::new(size::SUBTITLE, MUTED_INK);
        sub.draw(canvas, &sub.fit(&chart.subtitle, max_w)?, (MARGIN, y + 2))?;
        y += line_height(size::SUBTITLE) + 2;
    }
    y += 12;

    let entry = TextSpec::new(size::LEGEND, INK).anchor(HPos::Left, VPos::Center);
    let swatch = 14;
    let row_h = 24;
    let mut x = MARGIN;
    let mut row_center = y + row_h / 2;
    for (i, v) in chart.variants.iter().enumerate() {
        let name = if v.requests == 0 {
            format!("{} (no requests)", v.name)
        } else {
            v.name.clone()
        };
        let name = entry.fit(&name, 2 * MAX_NAME_WIDTH)?;
        let w = swatch + 6 + entry.width(&name)?;
        if x > MARGIN && x + w > width - MARGIN {
            x = MARGIN;
            row_center += row_h;
        }
        variant_bar(
            canvas,
            (x, row_center - swatch / 2),
            (x + swatch, row_center + swatch / 2),
            i,
            series_color(i),
        )?;
        entry.draw(canvas, &name, (x + swatch + 6, row_center))?;
        x += w + 30;
    }
    Ok(row_center + row_h / 2 + 14)
}

/// Draws a panel's title and returns the area left for its content.
fn panel_title(canvas: &Canvas<'_>, rect: Rect, title: &str) -> Result<Rect, PlotError> {
    let spec = TextSpec::new(size::PANEL_TITLE, INK).bold();
    spec.draw(
        canvas,
        &spec.fit(title, rect.width())?,
        (rect.left, rect.top),
    )?;
    Ok(Rect::new(
        rect.left,
        rect.top + line_height(size::PANEL_TITLE) + 8,
        rect.right,
        rect.bottom,
    ))
}

// ---------------------------------------------------------------- CDF panel

fn draw_cdf_panel(
    canvas: &Canvas<'_>,
    rect: Rect,
    chart: &ComparisonChart,
) -> Result<(), PlotError> {
    let content = panel_title(canvas, rect, "Latency distribution of all requests (CDF)")?;

    let mut min = f64::INFINITY;
    let mut max = f64::NEG_INFINITY;
    for v in &chart.variants {
        for &(ms, _) in &v.latency_cdf {
            if ms.is_finite() && ms > 0.0 {
                min = min.min(ms);
                max = max.max(ms);
            }
        }
    }
    let (lo, hi) = log_range(min, max);

    let y_ticks = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0];
    let pct = |f: f64| format_number(f * 100.0);
    let y_labels: Vec<String> = y_ticks.iter().map(|f| pct(*f)).collect();
    let left = y_axis_width(&y_labels, true)?;
    let guide = TextSpec::new(size::VALUE, MUTED_INK).anchor(HPos::Left, VPos::Center);
    let right = guide.width("p99")? + 10;
    let plot = Rect::new(
        content.left + left,
        content.top + 6,
        content.right - right,
        content.bottom - x_axis_height(),
    );
    let xs = Scale::log10(lo, hi, plot.left, plot.right);
    let ys = Scale::linear(0.0, 1.0, plot.bottom, plot.top);
    let (major, minor) = log_ticks(lo, hi);

    draw_y_axis(
        canvas,
        plot,
        &ys,
        &y_ticks,
        &pct,
        "Requests with latency ≤ x (%)",
        content.left,
    )?;
    draw_x_axis(
        canvas,
        plot,
        &xs,
        &major,
        &minor,
        &format_number,
        "End-to-end latency (ms, log scale)",
    )?;
    let paths: Vec<Vec<(i32, i32)>> = chart
        .variants
        .iter()
        .map(|v| cdf_steps(&v.latency_cdf, &xs, &ys))
        .collect();
    if paths.iter().all(Vec::is_empty) {
        return note(canvas, plot, "no latency samples");
    }
    // Guides first, so the data is drawn over them.
    for (fraction, label) in [(0.5, "p50"), (0.99, "p99")] {
        let y = ys.map(fraction);
        dashed_hline(canvas, plot.left, plot.right, y, GUIDE, 6, 4)?;
        guide.draw(canvas, label, (plot.right + 6, y))?;
    }
    let n = paths.len();
    for (i, path) in paths.into_iter().enumerate() {
        if series_striped(i) {
            dashed_polyline(canvas, &path, series_color(i), line_width(i, n), 10, 6)?;
        } else {
            polyline(canvas, path, series_color(i), line_width(i, n))?;
        }
    }
    Ok(())
}

/// Earlier variants get wider lines, drawn first, so where curves coincide
/// (e.g. every variant has the same fast mode) each colour still shows as a
/// fringe around the later, thinner ones.
fn line_width(i: usize, n: usize) -> u32 {
    if n <= 1 {
        return 3;
    }
    let extra = ((n - 1 - i) * 3 + (n - 1) / 2) / (n - 1);
    2 + extra as u32
}

/// The CDF as a step line in pixels: flat until the next latency, then up.
/// Starts at the first sample (y = 0) and ends at the right edge of the plot.
/// Consecutive points that land on the same pixel row or column are merged,
/// so a CDF of a million samples is still a small path.
fn cdf_steps(cdf: &[(f64, f64)], xs: &Scale, ys: &Scale) -> Vec<(i32, i32)> {
    let mut points: Vec<(f64, f64)> = cdf
        .iter()
        .copied()
        .filter(|(ms, f)| ms.is_finite() && f.is_finite())
        .collect();
    if points.is_empty() {
        return Vec::new();
    }
    points.sort_by(|a, b| a.0.total_cmp(&b.0));

    let mut path = Vec::new();
    let mut prev = 0.0;
    for (ms, f) in points {
        let f = f.clamp(0.0, 1.0);
        let x = xs.map(ms);
        push_merged(&mut path, (x, ys.map(prev)));
        push_merged(&mut path, (x, ys.map(f)));
        prev = f;
    }
    push_merged(&mut path, (xs.p1, ys.map(prev)));
    path
}

fn push_merged(path: &mut Vec<(i32, i32)>, p: (i32, i32)) {
    if path.last() == Some(&p) {
        return;
    }
    if let [.., a, b] = path.as_slice() {
        let same_column = a.0 == b.0 && b.0 == p.0;
        let same_row = a.1 == b.1 && b.1 == p.1;
        if same_column || same_row {
            if let Some(last) = path.last_mut() {
                *last = p;
            }
            return;
        }
    }
    path.push(p);
}

// ------------------------------------------------ horizontal bar panels

/// The variant names column shared by the two horizontal bar panels, so that
/// their rows line up. Each name has its colour swatch in front.
struct NameColumn {
    names: Vec<String>,
    width: i32,
}

const SWATCH: i32 = 12;

impl NameColumn {
    fn new(chart: &ComparisonChart) -> Result<NameColumn, PlotError> {
        let spec = name_spec();
        let mut names = Vec::new();
        let mut widest = 0;
        for v in &chart.variants {
            let name = spec.fit(&v.name, MAX_NAME_WIDTH)?;
            widest = widest.max(spec.width(&name)?);
            names.push(name);
        }
        Ok(NameColumn {
            names,
            width: SWATCH + 6 + widest + 14,
        })
    }

    /// Draws the names left of `plot`, row `i` centred at `center(i)`.
    fn draw(
        &self,
        canvas: &Canvas<'_>,
        plot: Rect,
        center: &dyn Fn(usize) -> i32,
    ) -> Result<(), PlotError> {
        let x = plot.left - self.width;
        for (i, name) in self.names.iter().enumerate() {
            let y = center(i);
            variant_bar(
                canvas,
                (x, y - SWATCH / 2),
                (x + SWATCH, y + SWATCH / 2),
                i,
                series_color(i),
            )?;
            name_spec().draw(canvas, name, (x + SWATCH + 6, y))?;
        }
        line(
            canvas,
            (plot.left, plot.top),
            (plot.left, plot.bottom),
            AXIS,
        )
    }
}

fn name_spec() -> TextSpec {
    TextSpec::new(size::TICK, INK).anchor(HPos::Left, VPos::Center)
}

/// Row `i` of `n` rows in `plot`: its centre and height.
fn row(plot: Rect, i: usize, n: usize) -> (i32, f64) {
    let h = f64::from(plot.height()) / n as f64;
    let center = f64::from(plot.top) + h * (i as f64 + 0.5);
    (center.round() as i32, h)
}

/// A number next to a horizontal bar ending at `x_end`: inside the bar's end
/// if it fits there (in black or white, whichever reads on the colour),
/// otherwise just after it.
pub(crate) fn bar_end_label(
    canvas: &Canvas<'_>,
    text: &str,
    x_start: i32,
    x_end: i32,
    y: i32,
    color: RGBColor,
    allow_inside: bool,
) -> Result<(), PlotError> {
    let spec = TextSpec::new(size::VALUE, INK);
    let w = spec.width(text)?;
    if allow_inside && x_end - x_start >= w + 14 {
        spec.anchor(HPos::Right, VPos::Center)
            .with_color(text_on(color))
            .draw(canvas, text, (x_end - 6, y))
    } else {
        spec.anchor(HPos::Left, VPos::Center)
            .draw(canvas, text, (x_end + 6, y))
    }
}

/// A bar of variant `i`, filled with `fill` (its colour or a shade of it),
/// striped when the variant is in the second round of colours.
pub(crate) fn variant_bar(
    canvas: &Canvas<'_>,
    a: (i32, i32),
    b: (i32, i32),
    i: usize,
    fill: RGBColor,
) -> Result<(), PlotError> {
    let outline = darken(series_color(i), 0.3);
    patterned_bar(canvas, a, b, fill, outline, series_striped(i))
}

fn has_requests(v: &VariantSeries) -> bool {
    v.requests > 0
}

/// Titles a bar panel and returns its plot area: right of the name column,
/// above the x axis.
fn bar_panel(
    canvas: &Canvas<'_>,
    rect: Rect,
    title: &str,
    names: &NameColumn,
) -> Result<Rect, PlotError> {
    let content = panel_title(canvas, rect, title)?;
    Ok(Rect::new(
        content.left + names.width,
        content.top + 4,
        content.right - 12,
        content.bottom - x_axis_height(),
    ))
}

/// A muted note in place of a row's bars, centred on `y`.
pub(crate) fn row_note(
    canvas: &Canvas<'_>,
    plot: Rect,
    y: i32,
    text: &str,
) -> Result<(), PlotError> {
    TextSpec::new(size::VALUE, MUTED_INK)
        .anchor(HPos::Left, VPos::Center)
        .draw(canvas, text, (plot.left + 8, y))
}

/// Whether fallbacks answered some of the variant's requests.
fn answered_degraded(v: &VariantSeries) -> bool {
    has_requests(v) && v.degraded_rate > 0.0
}

/// The parts of a variant's success bar, as fractions of its requests:
/// answered in full, and answered degraded (at most the successes, which a
/// rounded success rate could otherwise undercut).
fn success_parts(v: &VariantSeries) -> (f64, f64) {
    let rate = v.success_rate.clamp(0.0, 1.0);
    // `max` and `min` pass over a NaN (where `clamp` would panic).
    let degraded = v.degraded_rate.max(0.0).min(rate);
    (rate - degraded, degraded)
}

/// How much lighter the degraded part of a success bar is than the variant's
/// colour: the shade the chart gives every secondary bar (p50, cancelled).
const DEGRADED_LIGHTEN: f64 = 0.55;

/// The key's swatch for answers in full: grey, since each variant's bar has
/// its own colour and only the shade tells the parts apart.
const KEY_FULL: RGBColor = MUTED_INK;

/// The key of a split success bar, right-aligned on the panel's title line.
fn draw_degraded_key(canvas: &Canvas<'_>, rect: Rect) -> Result<(), PlotError> {
    let entry = TextSpec::new(size::LEGEND, INK).anchor(HPos::Left, VPos::Center);
    let entries = [
        (KEY_FULL, "answered in full"),
        (lighten(KEY_FULL, DEGRADED_LIGHTEN), "degraded (fallbacks)"),
    ];
    let gap = 20;
    let mut widths = Vec::new();
    for (_, label) in entries {
        widths.push(SWATCH + 6 + entry.width(label)?);
    }
    let total: i32 = widths.iter().sum::<i32>() + gap;
    let y = rect.top + line_height(size::PANEL_TITLE) / 2;
    let mut x = rect.right - total;
    for ((fill, label), w) in entries.into_iter().zip(widths) {
        patterned_bar(
            canvas,
            (x, y - SWATCH / 2),
            (x + SWATCH, y + SWATCH / 2),
            fill,
            darken(KEY_FULL, 0.3),
            false,
        )?;
        entry.draw(canvas, label, (x + SWATCH + 6, y))?;
        x += w + gap;
    }
    Ok(())
}

/// A success bar's label: its rate, or, when fallbacks answered some of it,
/// the two parts in the order the bar shows them and the axis title names
/// them, in full + degraded ("92.9% + 7.1%"): short, since every pixel of
/// the label is one less for the bars.
fn success_label(v: &VariantSeries) -> String {
    let (full, degraded) = success_parts(v);
    if answered_degraded(v) {
        format!("{} + {}", format_percent(full), format_percent(degraded))
    } else {
        format_percent(full + degraded)
    }
}

fn draw_success_panel(
    canvas: &Canvas<'_>,
    rect: Rect,
    chart: &ComparisonChart,
    names: &NameColumn,
) -> Result<(), PlotError> {
    let mut plot = bar_panel(canvas, rect, "Success rate", names)?;
    let split = chart.variants.iter().any(answered_degraded);
    let value = TextSpec::new(size::VALUE, INK);
    if split {
        draw_degraded_key(canvas, rect)?;
        // Labels go after the bars (a two-part label would cross the
        // boundary inside one): leave room for the widest after 100%.
        let mut widest = 0;
        let labelled = |v: &&VariantSeries| has_requests(v) && v.success_rate.is_finite();
        for v in chart.variants.iter().filter(labelled) {
            widest = widest.max(value.width(&success_label(v))?);
        }
        plot.right -= widest + 8;
    } else if (0..chart.variants.len()).any(series_striped) {
        // A striped bar's label goes after its end: leave room for "100%".
        plot.right -= value.width("100%")? + 8;
    }
    let xs = Scale::linear(0.0, 100.0, plot.left, plot.right);
    // Bars shortened for their labels may leave too little room to label
    // every 20%: then every 50%, rather than an axis missing its "100".
    let step_px = xs.map(20.0) - xs.map(0.0);
    let tick_w = TextSpec::new(size::TICK, MUTED_INK).width("100")?;
    let ticks: &[f64] = if step_px >= tick_w + 8 {
        &[0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
    } else {
        &[0.0, 50.0, 100.0]
    };
    let axis_title = if split {
        "Requests that succeeded (%): in full + degraded"
    } else {
        "Requests that succeeded (%)"
    };
    draw_x_axis(canvas, plot, &xs, ticks, &[], &format_number, axis_title)?;
    let n = chart.variants.len();
    names.draw(canvas, plot, &|i| row(plot, i, n).0)?;

    for (i, v) in chart.variants.iter().enumerate() {
        let (y, h) = row(plot, i, n);
        if !has_requests(v) || !v.success_rate.is_finite() {
            let why = if has_requests(v) {
                "n/a"
            } else {
                "no requests"
            };
            row_note(canvas, plot, y, why)?;
            continue;
        }
        let t = (h * 0.62).clamp(4.0, 28.0) as i32;
        let (top, bottom) = (y - t / 2, y - t / 2 + t);
        let (full, degraded) = success_parts(v);
        let x_full = xs.map(full * 100.0);
        let x_end = xs.map((full + degraded) * 100.0);
        let color = series_color(i);
        if x_full > plot.left {
            variant_bar(canvas, (plot.left, top), (x_full, bottom), i, color)?;
        }
        if answered_degraded(v) {
            let fill = lighten(color, DEGRADED_LIGHTEN);
            variant_bar(canvas, (x_full, top), (x_end, bottom), i, fill)?;
        }
        // Inside the bar's end only on plain bars: stripes would cut through
        // the label, and split bars kept room for theirs after them.
        bar_end_label(
            canvas,
            &success_label(v),
            plot.left,
            x_end,
            y,
            color,
            !series_striped(i) && !split,
        )?;
    }
    Ok(())
}

fn draw_percentile_panel(
    canvas: &Canvas<'_>,
    rect: Rect,
    chart: &ComparisonChart,
    names: &NameColumn,
) -> Result<(), PlotError> {
    let plot = bar_panel(
        canvas,
        rect,
        "Latency: p50, p99 and p99 of successes (ok)",
        names,
    )?;
    let value = TextSpec::new(size::VALUE, INK);
    let label = |p: &str, ms: f64| format!("{p} {}", format_ms(ms));
    let bars_of = |v: &VariantSeries| {
        [
            ("p50", v.latency_p50_ms),
            ("p99", v.latency_p99_ms),
            ("p99 ok", v.ok_latency_p99_ms),
        ]
    };

    // Three bars a row: p50 and p99 of all, in the variant's colour (light
    // and full), then the answered requests' p99, darker. A label per bar
    // needs a bar's pitch as tall as its text; thinner rows (many variants)
    // get one label for the three, after the longest bar.
    let n = chart.variants.len();
    let t = (row(plot, 0, n).1 * 0.27).clamp(3.0, 13.0) as i32;
    let label_per_bar = t + 1 >= size::VALUE as i32;
    let row_label = |v: &VariantSeries| {
        // The unit once, at the end: the row must fit beside its bars.
        let [p50, p99, ok] = bars_of(v).map(|(_, ms)| format_ms(ms));
        let bare = |ms: &str| ms.trim_end_matches(" ms").to_string();
        format!("p50 {} · p99 {} · ok {ok}", bare(&p50), bare(&p99))
    };

    // Room for the longest label after the longest bar.
    let mut max_ms: f64 = 0.0;
    let mut label_w = 0;
    for v in chart.variants.iter().filter(|v| has_requests(v)) {
        if !label_per_bar {
            label_w = label_w.max(value.width(&row_label(v))?);
        }
        for (p, ms) in bars_of(v) {
            if ms.is_finite() && ms > 0.0 {
                max_ms = max_ms.max(ms);
            }
            if label_per_bar {
                label_w = label_w.max(value.width(&label(p, ms))?);
            }
        }
    }
    let usable = (plot.width() - label_w - 14).max(plot.width() / 4).max(1);
    let wanted = max_ms * f64::from(plot.width()) / f64::from(usable);
    let (ticks, end) = zero_based_ticks(wanted, 5);
    let xs = Scale::linear(0.0, end, plot.left, plot.right);
    draw_x_axis(
        canvas,
        plot,
        &xs,
        &ticks,
        &[],
        &format_number,
        "Latency (ms)",
    )?;
    names.draw(canvas, plot, &|i| row(plot, i, n).0)?;

    for (i, v) in chart.variants.iter().enumerate() {
        let y = row(plot, i, n).0;
        if !has_requests(v) {
            row_note(canvas, plot, y, "no requests")?;
            continue;
        }
        let color = series_color(i);
        let fills = [lighten(color, 0.55), color, darken(color, 0.35)];
        let first_top = y - t - t / 2 - 1;
        let mut longest = plot.left;
        for (k, ((p, ms), fill)) in bars_of(v).into_iter().zip(fills).enumerate() {
            let top = first_top + k as i32 * (t + 1);
            let x_end = if ms.is_finite() && ms > 0.0 {
                xs.map(ms)
            } else {
                plot.left
            };
            if x_end > plot.left {
                variant_bar(canvas, (plot.left, top), (x_end, top + t), i, fill)?;
            }
            longest = longest.max(x_end);
            if label_per_bar {
                bar_end_label(
                    canvas,
                    &label(p, ms),
                    plot.left,
                    x_end,
                    top + t / 2,
                    fill,
                    false,
                )?;
            }
        }
        if !label_per_bar {
            bar_end_label(canvas, &row_label(v), plot.left, longest, y, color, false)?;
        }
    }
    Ok(())
}

// ------------------------------------------------- amplification panel

/// Per-service numbers of every variant, with the services in first-seen
/// order (model order; a service missing from a variant counts as absent).
struct ServiceTable {
    services: Vec<String>,
    /// `calls[variant][service]`, `None` where the variant has no entry.
    calls: Vec<Vec<Option<f64>>>,
    wasted: Vec<Vec<u64>>,
    cancelled: Vec<Vec<u64>>,
}

impl ServiceTable {
    fn new(chart: &ComparisonChart) -> ServiceTable {
        let mut services: Vec<String> = Vec::new();
        let mut seen = BTreeSet::new();
        for v in &chart.variants {
            let names = v
                .calls_per_request
                .iter()
                .map(|(s, _)| s)
                .chain(v.wasted.iter().map(|(s, _)| s))
                .chain(v.cancelled.iter().map(|(s, _)| s));
            for s in names {
                if seen.insert(s.as_str()) {
                    services.push(s.clone());
                }
            }
        }
        // Each variant's lists indexed once (the first entry of a name, as a
        // search would find), not searched once per service: quadratic in a
        // chain of 10^4 services.
        fn by_service<T: Copy>(services: &[String], list: &[(String, T)]) -> Vec<Option<T>> {
            let mut index = BTreeMap::new();
            for (name, x) in list {
                index.entry(name.as_str()).or_insert(*x);
            }
            services
                .iter()
                .map(|s| index.get(s.as_str()).copied())
                .collect()
        }
        let calls = chart
            .variants
            .iter()
            .map(|v| by_service(&services, &v.calls_per_request))
            .collect();
        let wasted = chart
            .variants
            .iter()
            .map(|v| {
                by_service(&services, &v.wasted)
                    .into_iter()
                    .map(|x| x.unwrap_or(0))
                    .collect()
            })
            .collect();
        let cancelled = chart
            .variants
            .iter()
            .map(|v| {
                by_service(&services, &v.cancelled)
                    .into_iter()
                    .map(|x| x.unwrap_or(0))
                    .collect()
            })
            .collect();
        ServiceTable {
            services,
            calls,
            wasted,
            cancelled,
        }
    }
}

/// Horizontal positions of grouped vertical bars: one group per service, one
/// bar per variant inside it.
struct Groups {
    left: i32,
    group_w: f64,
    slot_w: f64,
    n_variants: usize,
}

/// Widest slot per bar: a lone variant gets a bar, not a wall.
const MAX_SLOT_W: f64 = 64.0;

impl Groups {
    fn new(plot: Rect, n_services: usize, n_variants: usize) -> Groups {
        let group_w = f64::from(plot.width()) / n_services.max(1) as f64;
        Groups {
            left: plot.left,
            group_w,
            slot_w: (group_w * 0.9 / n_variants.max(1) as f64).min(MAX_SLOT_W),
            n_variants,
        }
    }

    /// Left and right pixel of the bar for (service, variant).
    fn bar_x(&self, service: usize, variant: usize) -> (i32, i32) {
        let center = f64::from(self.left) + self.group_w * (service as f64 + 0.5);
        let first = center - self.slot_w * self.n_variants as f64 / 2.0;
        let start = first + self.slot_w * (variant as f64 + 0.08);
        let w = (self.slot_w * 0.84).max(1.0);
        (start.round() as i32, (start + w).round() as i32)
    }

    fn center_x(&self, service: usize) -> i32 {
        (f64::from(self.left) + self.group_w * (service as f64 + 0.5)).round() as i32
    }

    /// How value labels this wide fit on the bars: horizontally if they fit
    /// the slot, else reading upwards if a line of text fits the slot, else
    /// not at all (the y axis still gives the values; overprinted labels
    /// would give none).
    fn label_fit(&self, widest_label: i32) -> LabelFit {
        if f64::from(widest_label + 4) <= self.slot_w {
            LabelFit::Across
        } else if f64::from(line_height(size::VALUE)) <= self.slot_w {
            LabelFit::Upward
        } else {
            LabelFit::None
        }
    }
}

/// How value labels are written on vertical bars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LabelFit {
    Across,
    Upward,
    None,
}

/// Pixels a value label needs beyond the end of its bar.
fn label_extent(fit: LabelFit, widest: i32) -> i32 {
    match fit {
        LabelFit::Across => line_height(size::VALUE) + 4,
        LabelFit::Upward => widest + 8,
        LabelFit::None => 4,
    }
}

/// `fit`, or no labels if they would need more of `plot_h` than
/// [`with_headroom`] can give them (two thirds), so they never leave the plot.
fn fit_in_height(fit: LabelFit, widest: i32, plot_h: i32) -> LabelFit {
    if label_extent(fit, widest) > plot_h / 3 * 2 {
        LabelFit::None
    } else {
        fit
    }
}

/// Scales `max` up so that bars reaching it still leave `extent` pixels of
/// `plot_h` for their labels.
fn with_headroom(max: f64, plot_h: i32, extent: i32) -> f64 {
    let usable = (plot_h - extent).max(plot_h / 3).max(1);
    max * f64::from(plot_h) / f64::from(usable)
}

fn draw_amplification_panel(
    canvas: &Canvas<'_>,
    rect: Rect,
    chart: &ComparisonChart,
) -> Result<(), PlotError> {
    let content = panel_title(canvas, rect, "Per-service amplification and wasted work")?;
    let table = ServiceTable::new(chart);
    if table.services.is_empty() {
        return note(canvas, content, "no per-service data");
    }
    let n_s = table.services.len();
    let n_v = chart.variants.len();
    let value = TextSpec::new(size::VALUE, INK);
    let heading = TextSpec::new(size::AXIS_TITLE, INK);
    let heading_h = line_height(size::AXIS_TITLE) + 12;
    let service_h = 8 + line_height(size::TICK);
    let gap = 16;
    let plots_h = content.height() - 2 * (heading_h + service_h) - gap;
    let calls_h = plots_h / 2;
    let waste_h = plots_h - calls_h;

    // Data and label sizes.
    let mut max_calls: f64 = 0.0;
    let mut calls_label_w = 0;
    for row in &table.calls {
        for c in row.iter().flatten() {
            if c.is_finite() && *c > 0.0 {
                max_calls = max_calls.max(*c);
                calls_label_w = calls_label_w.max(value.width(&format_ratio(*c))?);
            }
        }
    }
    let mut max_waste: u64 = 0;
    let mut waste_label_w = 0;
    for (w_row, c_row) in table.wasted.iter().zip(&table.cancelled) {
        for x in w_row.iter().chain(c_row) {
            if *x > 0 {
                max_waste = max_waste.max(*x);
                waste_label_w = waste_label_w.max(value.width(&format_compact(*x as f64))?);
            }
        }
    }

    // The y-axis column is shared by both charts so their bars line up; size
    // it for labels up to twice the data (the axis end is below that).
    let (probe_calls, _) = zero_based_ticks(max_calls * 2.0, 4);
    let (probe_waste, _) = zero_based_ticks(max_waste as f64 * 2.0, 2);
    let probe: Vec<String> = probe_calls
        .iter()
        .map(|v| format_number(*v))
        .chain(probe_waste.iter().map(|v| format_compact(*v)))
        .collect();
    let axis_w = y_axis_width(&probe, false)?;
    let plot_left = content.left + axis_w;
    let plot_right = content.right - 8;

    // Calls per request.
    let mut y = content.top;
    heading.draw(
        canvas,
        "Calls received per logical request (×)",
        (content.left, y),
    )?;
    y += heading_h;
    let calls_plot = Rect::new(plot_left, y, plot_right, y + calls_h);
    let groups = Groups::new(calls_plot, n_s, n_v);
    let fit = fit_in_height(groups.label_fit(calls_label_w), calls_label_w, calls_h);
    let wanted = with_headroom(max_calls, calls_h, label_extent(fit, calls_label_w));
    let (ticks, end) = zero_based_ticks(wanted, 4);
    let ys = Scale::linear(0.0, end, calls_plot.bottom, calls_plot.top);
    draw_y_axis(canvas, calls_plot, &ys, &ticks, &format_number, "", 0)?;
    if (0.0..=end).contains(&1.0) {
        dashed_hline(
            canvas,
            calls_plot.left,
            calls_plot.right,
            ys.map(1.0),
            GUIDE,
            6,
            4,
        )?;
    }
    line(
        canvas,
        (calls_plot.left, calls_plot.bottom),
        (calls_plot.right, calls_plot.bottom),
        AXIS,
    )?;
    for (vi, row) in table.calls.iter().enumerate() {
        let color = series_color(vi);
        for (si, c) in row.iter().enumerate() {
            let Some(c) = c.filter(|c| c.is_finite() && *c > 0.0) else {
                continue;
            };
            let (x0, x1) = groups.bar_x(si, vi);
            let top = ys.map(c);
            variant_bar(canvas, (x0, top), (x1, calls_plot.bottom), vi, color)?;
            value_label(canvas, &format_ratio(c), (x0 + x1) / 2, top, fit, true)?;
        }
    }
    service_labels(canvas, &table.services, &groups, calls_plot.bottom)?;

    // Wasted (up) and cancelled (down) work.
    y = calls_plot.bottom + service_h + gap;
    let head = "Wasted ▲ / cancelled ▼ work (count)";
    heading.draw(canvas, head, (content.left, y))?;
    let explain = TextSpec::new(size::VALUE, MUTED_INK).anchor(HPos::Right, VPos::Top);
    let explain_room = content.width() - heading.width(head)? - 20;
    let explanation = explain.fit(
        "▲ done after the caller gave up · ▼ cut short",
        explain_room,
    )?;
    explain.draw(canvas, &explanation, (content.right, y + 2))?;
    y += heading_h;
    let waste_plot = Rect::new(plot_left, y, plot_right, y + waste_h);
    let fit = fit_in_height(groups.label_fit(waste_label_w), waste_label_w, waste_h / 2);
    if max_waste == 0 {
        let ys = Scale::linear(-1.0, 1.0, waste_plot.bottom, waste_plot.top);
        draw_y_axis(canvas, waste_plot, &ys, &[0.0], &format_number, "", 0)?;
        line(
            canvas,
            (waste_plot.left, ys.map(0.0)),
            (waste_plot.right, ys.map(0.0)),
            AXIS,
        )?;
        let below = Rect::new(
            waste_plot.left,
            ys.map(0.0),
            waste_plot.right,
            waste_plot.bottom,
        );
        note(canvas, below, "none: no work was wasted or cancelled")?;
    } else {
        let half = waste_h / 2;
        let wanted = with_headroom(max_waste as f64, half, label_extent(fit, waste_label_w));
        let (half_ticks, end) = zero_based_ticks(wanted, 2);
        let ticks: Vec<f64> = half_ticks
            .iter()
            .rev()
            .map(|t| -t)
            .chain(half_ticks.iter().copied().skip(1))
            .collect();
        let ys = Scale::linear(-end, end, waste_plot.bottom, waste_plot.top);
        draw_y_axis(
            canvas,
            waste_plot,
            &ys,
            &ticks,
            &|v| format_compact(v.abs()),
            "",
            0,
        )?;
        let zero = ys.map(0.0);
        for (vi, (w_row, c_row)) in table.wasted.iter().zip(&table.cancelled).enumerate() {
            let color = series_color(vi);
            for (si, (w, c)) in w_row.iter().zip(c_row).enumerate() {
                let (x0, x1) = groups.bar_x(si, vi);
                let mid = (x0 + x1) / 2;
                if *w > 0 {
                    let top = ys.map(*w as f64);
                    variant_bar(canvas, (x0, top), (x1, zero), vi, color)?;
                    value_label(canvas, &format_compact(*w as f64), mid, top, fit, true)?;
                }
                if *c > 0 {
                    let bottom = ys.map(-(*c as f64));
                    let fill = lighten(color, 0.55);
                    variant_bar(canvas, (x0, zero), (x1, bottom), vi, fill)?;
                    value_label(canvas, &format_compact(*c as f64), mid, bottom, fit, false)?;
                }
            }
        }
        line(
            canvas,
            (waste_plot.left, zero),
            (waste_plot.right, zero),
            AXIS,
        )?;
    }
    line(
        canvas,
        (waste_plot.left, waste_plot.bottom),
        (waste_plot.right, waste_plot.bottom),
        crate::style::GRID,
    )?;
    service_labels(canvas, &table.services, &groups, waste_plot.bottom)?;
    Ok(())
}

/// A number at the end of a vertical bar (`y_end`), above it (`above`) or
/// below it, written as `fit` says.
fn value_label(
    canvas: &Canvas<'_>,
    text: &str,
    x: i32,
    y_end: i32,
    fit: LabelFit,
    above: bool,
) -> Result<(), PlotError> {
    let spec = TextSpec::new(size::VALUE, INK);
    let upward = match fit {
        LabelFit::Across => false,
        LabelFit::Upward => true,
        LabelFit::None => return Ok(()),
    };
    match (upward, above) {
        (false, true) => spec
            .anchor(HPos::Center, VPos::Bottom)
            .draw(canvas, text, (x, y_end - 3)),
        (false, false) => spec
            .anchor(HPos::Center, VPos::Top)
            .draw(canvas, text, (x, y_end + 3)),
        (true, true) => {
            spec.anchor(HPos::Left, VPos::Center)
                .upward()
                .draw(canvas, text, (x, y_end - 4))
        }
        (true, false) => {
            spec.anchor(HPos::Right, VPos::Center)
                .upward()
                .draw(canvas, text, (x, y_end + 4))
        }
    }
}

/// Service names centred under their groups, shortened to the group width.
fn service_labels(
    canvas: &Canvas<'_>,
    services: &[String],
    groups: &Groups,
    y: i32,
) -> Result<(), PlotError> {
    let spec = TextSpec::new(size::TICK, INK).anchor(HPos::Center, VPos::Top);
    let max_w = (groups.group_w as i32 - 8).max(10);
    for (i, s) in services.iter().enumerate() {
        spec.draw(canvas, &spec.fit(s, max_w)?, (groups.center_x(i), y + 6))?;
    }
    Ok(())
}
