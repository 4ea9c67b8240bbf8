//! The wasted-work chart: where the work of requests nobody waited for went,
//! tier by tier.
//!
//! A request whose sender gave up (a timeout, an error, an impatient user)
//! may still have work running below it. Each service then either finishes
//! that work for nobody (wasted), stops it early because it was told to
//! (cancelled), or refuses or drops it because its deadline passed
//! (expired). The comparison chart shows wasted and cancelled work among
//! four other panels; this chart gives it the whole picture:
//!
//! ```text
//! wasted ▇ completed for nobody   cancelled ▇ stopped early   expired ▇ …
//!
//! static-30s
//!      gateway ▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇ 130,521 wasted
//!        order ▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇ 130,518 wasted
//!           db ▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇ 108,954 wasted
//! gateway-30s
//!      gateway ▏ 1,224 wasted
//!        order ▏ 3 wasted · 1,221 cancelled
//! budget-only
//!              nothing wasted, cancelled or expired
//!              0        50k        100k       150k
//!                 calls that served no one (count)
//! ```
//!
//! One group per variant, titled with its name, one bar per service in model
//! order. Colour says what happened to the work, not which variant did it,
//! since that is what the chart compares; so, unlike the other charts, the
//! variants get no colour swatch here (a vermillion one would read as
//! "wasted"). Every bar has its counts written after it, and all groups
//! share one scale.

use plotters::style::text_anchor::{HPos, VPos};
use plotters::style::RGBColor;

use crate::axes::{draw_x_axis, whole_ticks, x_axis_height, Scale};
use crate::canvas::{draw_svg, line, line_height, patterned_bar, Canvas, Rect, TextSpec, MARGIN};
use crate::comparison::{bar_end_label, row_note};
use crate::header::Header;
use crate::style::{
    darken, ensure_fonts, format_compact, format_count, size, AXIS, GRID, INK, MAX_VARIANTS,
    MUTED_INK, OKABE_ITO,
};
use crate::timeline::{LegendEntry, Swatch, LEGEND_GAP, SWATCH_W};
use crate::PlotError;

/// What one service did with work nobody was waiting for any more.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServiceWaste {
    /// The service, e.g. `db`.
    pub name: String,
    /// Handlers it completed after their caller, or the sender of the
    /// request they served, had given up.
    pub wasted: u64,
    /// Handlers it stopped early because their caller cancelled them.
    pub cancelled: u64,
    /// Requests it refused, dropped (expired queue messages) or cut short
    /// because their deadline had passed.
    pub expired: u64,
}

impl ServiceWaste {
    fn total(&self) -> u64 {
        self.wasted
            .saturating_add(self.cancelled)
            .saturating_add(self.expired)
    }
}

/// One variant's services, as one group of bars.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WastedVariant {
    /// The variant, e.g. `static-30s`: the group's title.
    pub name: String,
    /// Per service, in model order: one bar each.
    pub services: Vec<ServiceWaste>,
}

/// Everything the wasted-work chart shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WastedChart {
    /// The headline, e.g. the model and what the chart shows.
    pub title: String,
    /// A line of context under the title; may be empty.
    pub subtitle: String,
    /// One group per variant, 1 to [`MAX_VARIANTS`], top to bottom in this
    /// order.
    pub variants: Vec<WastedVariant>,
}

/// Width of the wasted-work chart, in pixels; its height grows with the
/// number of bars (about 24 px each).
pub const WASTED_WIDTH: u32 = 1400;

/// Vermillion: work done for nobody, the waste the chart is about.
const WASTED_COLOR: RGBColor = OKABE_ITO[5];
/// Sky blue: work cut short, mostly saved.
const CANCELLED_COLOR: RGBColor = OKABE_ITO[1];
/// Grey: work refused or dropped before (or instead of) running.
const EXPIRED_COLOR: RGBColor = RGBColor(0xAA, 0xAA, 0xAA);

/// One bar's row.
const ROW_H: i32 = 24;
/// A bar's thickness.
const BAR_H: i32 = 16;
/// Space under each group's last row.
const GROUP_GAP: i32 = 14;
/// Service names longer than this are shortened with "…".
const MAX_NAME_WIDTH: i32 = 220;
/// Service names are indented under their variant's name.
const INDENT: i32 = 16;

/// The three fates of the work, in the order the bars stack them.
const KINDS: [(&str, RGBColor); 3] = [
    ("wasted", WASTED_COLOR),
    ("cancelled", CANCELLED_COLOR),
    ("expired", EXPIRED_COLOR),
];

fn counts(s: &ServiceWaste) -> [u64; 3] {
    [s.wasted, s.cancelled, s.expired]
}

/// Renders the wasted-work chart as an SVG document, [`WASTED_WIDTH`] wide
/// and as tall as its bars need.
///
/// Each bar stacks, left to right, the service's wasted (vermillion),
/// cancelled (sky blue) and expired (grey) counts, and is followed by the
/// non-zero ones written out (`3 wasted · 1,221 cancelled`); a service with
/// none says "none", and a variant with none at any service is one line,
/// "nothing wasted, cancelled or expired". Services with none in every
/// variant are left out, and named in a note under the axis, so a model with
/// many clean tiers keeps a short chart. The legend lists only the kinds
/// that occur (wasted always). All groups share one linear scale, sized so
/// that every bar's label fits after it.
///
/// The output depends only on `chart`, so the same input gives a
/// byte-identical file.
///
/// # Errors
///
/// [`PlotError::NoVariants`] without variants, [`PlotError::TooManyVariants`]
/// past [`MAX_VARIANTS`] (the limit of every chart of a run's variants, so
/// that a run's charts all show the same ones), [`PlotError::Font`] /
/// [`PlotError::Drawing`] if plotters fails. All-zero data is drawn as such,
/// never an error.
pub fn render_wasted_svg(chart: &WastedChart) -> Result<String, PlotError> {
    PlotError::check_count(chart.variants.len(), MAX_VARIANTS)?;
    ensure_fonts()?;
    let width = WASTED_WIDTH as i32;

    let layout = Layout::new(chart)?;
    let legend: Vec<LegendEntry> = KINDS
        .iter()
        .zip([
            "wasted: completed after its caller or sender gave up",
            "cancelled: stopped early by its caller",
            "expired: refused, dropped or cut short for its deadline",
        ])
        .enumerate()
        .filter(|(k, _)| *k == 0 || layout.kind_occurs[*k])
        .map(|(_, ((_, color), label))| LegendEntry {
            swatch: Swatch::Bar(*color),
            label: label.to_string(),
        })
        .collect();
    let header = Header::layout(
        &chart.title,
        &chart.subtitle,
        &legend,
        SWATCH_W,
        width,
        LEGEND_GAP,
    )?;

    // Vertical layout: each group's title, then its rows.
    let title_h = line_height(size::AXIS_TITLE) + 8;
    let mut tops = Vec::new();
    let mut y = header.bottom + 4;
    for rows in &layout.rows {
        tops.push(y);
        y += title_h + rows.len().max(1) as i32 * ROW_H + GROUP_GAP;
    }
    let groups_bottom = y - GROUP_GAP;
    let note_h = if layout.left_out.is_empty() {
        0
    } else {
        line_height(size::VALUE) + 8
    };
    let height = groups_bottom + x_axis_height() + note_h + 16;

    let plot_left = MARGIN + INDENT + layout.name_w + 14;
    let plot_right = width - MARGIN;
    let xs = layout.scale(plot_left, plot_right)?;
    let (ticks, end) = whole_ticks(xs.hi, 6);
    let xs = Scale::linear(0.0, end, plot_left, plot_right);

    draw_svg((WASTED_WIDTH, height as u32), |canvas| {
        header.draw(canvas, &chart.title, &chart.subtitle, &legend, width)?;
        for ((variant, rows), &top) in chart.variants.iter().zip(&layout.rows).zip(&tops) {
            let title = TextSpec::new(size::AXIS_TITLE, INK).bold();
            let name = title.fit(&variant.name, width - 2 * MARGIN)?;
            title.draw(canvas, &name, (MARGIN, top))?;
            draw_rows(canvas, &layout, rows, top + title_h, (&xs, &ticks))?;
        }
        let axis = Rect::new(plot_left, groups_bottom, plot_right, groups_bottom);
        let below = draw_x_axis(
            canvas,
            axis,
            &xs,
            &ticks,
            &[],
            &format_compact,
            "calls that served no one (count)",
        )?;
        if !layout.left_out.is_empty() {
            let spec = TextSpec::new(size::VALUE, MUTED_INK);
            let text = format!(
                "not shown, with nothing wasted, cancelled or expired in any variant: {}",
                layout.left_out.join(", ")
            );
            spec.draw(
                canvas,
                &spec.fit(&text, width - 2 * MARGIN)?,
                (MARGIN, below + 8),
            )?;
        }
        Ok(())
    })
}

/// A group's rows from `rows_top` down, on the shared scale `xs` with its
/// grid at `ticks`: a bar per service, or one note if there is none.
fn draw_rows(
    canvas: &Canvas<'_>,
    layout: &Layout,
    rows: &[ServiceWaste],
    rows_top: i32,
    (xs, ticks): (&Scale, &[f64]),
) -> Result<(), PlotError> {
    let band = Rect::new(
        xs.p0,
        rows_top,
        xs.p1,
        rows_top + rows.len().max(1) as i32 * ROW_H,
    );
    // The grid under the axis line; none behind a note, which it would cross.
    if !rows.is_empty() {
        for t in ticks {
            let x = xs.map(*t);
            line(canvas, (x, band.top), (x, band.bottom), GRID)?;
        }
    }
    line(
        canvas,
        (band.left, band.top),
        (band.left, band.bottom),
        AXIS,
    )?;
    if rows.is_empty() {
        let note = "nothing wasted, cancelled or expired";
        return row_note(canvas, band, band.center_y(), note);
    }
    for (r, s) in rows.iter().enumerate() {
        let center = rows_top + r as i32 * ROW_H + ROW_H / 2;
        draw_row(canvas, layout, s, (MARGIN + INDENT, center), xs)?;
    }
    Ok(())
}

/// One service's row: its name, its stacked bar and its counts.
fn draw_row(
    canvas: &Canvas<'_>,
    layout: &Layout,
    s: &ServiceWaste,
    (name_x, center): (i32, i32),
    xs: &Scale,
) -> Result<(), PlotError> {
    let name = name_spec().fit(&s.name, MAX_NAME_WIDTH)?;
    name_spec().draw(canvas, &name, (name_x, center))?;
    let plot = Rect::new(xs.p0, center - ROW_H / 2, xs.p1, center + ROW_H / 2);
    if s.total() == 0 {
        return row_note(canvas, plot, center, "none");
    }
    let mut sum = 0u64;
    let mut x_end = xs.p0;
    for ((_, color), n) in KINDS.iter().zip(counts(s)) {
        if n == 0 {
            continue;
        }
        let x0 = xs.map(sum as f64);
        sum = sum.saturating_add(n);
        // A non-zero count keeps at least a pixel, so it never vanishes.
        x_end = xs.map(sum as f64).max(x0 + 1);
        patterned_bar(
            canvas,
            (x0, center - BAR_H / 2),
            (x_end, center + BAR_H / 2),
            *color,
            darken(*color, 0.3),
            false,
        )?;
    }
    bar_end_label(canvas, &layout.label(s), xs.p0, x_end, center, INK, false)
}

fn name_spec() -> TextSpec {
    TextSpec::new(size::TICK, INK).anchor(HPos::Left, VPos::Center)
}

/// What the chart draws, measured before drawing.
struct Layout {
    /// Per variant, the rows to draw: its services that are not left out,
    /// or none at all when every one of them is zero.
    rows: Vec<Vec<ServiceWaste>>,
    /// Services with nothing in any variant, in first-seen order.
    left_out: Vec<String>,
    /// Whether any service has a non-zero count of each kind.
    kind_occurs: [bool; 3],
    /// The widest service name drawn, px.
    name_w: i32,
}

impl Layout {
    fn new(chart: &WastedChart) -> Result<Layout, PlotError> {
        let all = chart.variants.iter().flat_map(|v| &v.services);
        let mut left_out: Vec<String> = Vec::new();
        let mut kind_occurs = [false; 3];
        for s in all.clone() {
            for (k, n) in counts(s).into_iter().enumerate() {
                kind_occurs[k] |= n > 0;
            }
        }
        let shown = |name: &str| all.clone().any(|s| s.name == name && s.total() > 0);
        for s in all.clone() {
            if !shown(&s.name) && !left_out.contains(&s.name) {
                left_out.push(s.name.clone());
            }
        }
        let mut name_w = 0;
        let mut rows = Vec::new();
        for v in &chart.variants {
            let kept: Vec<ServiceWaste> = if v.services.iter().all(|s| s.total() == 0) {
                Vec::new()
            } else {
                v.services
                    .iter()
                    .filter(|s| shown(&s.name))
                    .cloned()
                    .collect()
            };
            for s in &kept {
                name_w = name_w.max(name_spec().width(&name_spec().fit(&s.name, MAX_NAME_WIDTH)?)?);
            }
            rows.push(kept);
        }
        Ok(Layout {
            rows,
            left_out,
            kind_occurs,
            name_w,
        })
    }

    /// The counts after a bar: the non-zero ones, each with its kind.
    fn label(&self, s: &ServiceWaste) -> String {
        KINDS
            .iter()
            .zip(counts(s))
            .filter(|(_, n)| *n > 0)
            .map(|((kind, _), n)| format!("{} {kind}", format_count(n)))
            .collect::<Vec<_>>()
            .join(" · ")
    }

    /// A scale from 0 on which every bar still has room for its label after
    /// it in `left..right` (its end is made a round number by the caller).
    fn scale(&self, left: i32, right: i32) -> Result<Scale, PlotError> {
        let value = TextSpec::new(size::VALUE, INK);
        let width = f64::from(right - left);
        // The most value per pixel any bar allows: a bar of `total` ending
        // at x needs x + 6 + its label's width ≤ right.
        let mut end: f64 = 1.0;
        for s in self.rows.iter().flatten().filter(|s| s.total() > 0) {
            let room = (width - 6.0 - f64::from(value.width(&self.label(s))?)).max(width / 3.0);
            end = end.max(s.total() as f64 * width / room);
        }
        Ok(Scale::linear(0.0, end, left, right))
    }
}
