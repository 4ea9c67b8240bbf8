//! The chart of a tipping-point search: where the bisection probed, what it
//! measured there, and how its bracket closed in on the crossing.

use plotters::element::Circle;
use plotters::style::text_anchor::{HPos, VPos};
use plotters::style::Color;

use crate::axes::{draw_x_axis, draw_y_axis, x_axis_height, y_axis_width, Scale};
use crate::canvas::{
    dashed_hline, draw_svg, fill_rect, line, line_height, polyline, Canvas, Rect, TextSpec, MARGIN,
};
use crate::error::drawing;
use crate::header::{Header, LegendItem};
use crate::style::{
    ensure_fonts, format_number, lighten, series_color, size, BACKGROUND, GUIDE, INK, MUTED_INK,
};
use crate::sweep::{finite_range, linear_ticks, SweepPoint, SWEEP_WIDTH};
use crate::PlotError;

/// A tipping-point search: its probes in the order run and the brackets
/// they left.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchChart {
    /// The main title.
    pub title: String,
    /// The line under the title (replications, intervals).
    pub subtitle: String,
    /// The parameter searched, e.g. `services[catalog].queue_capacity`: the
    /// x axis of the top panel, the y axis of the bottom one.
    pub parameter: String,
    /// The metric, e.g. `share of replications metastable`: the top panel's
    /// y axis title.
    pub metric: String,
    /// The probes in the order run: `x` the parameter's value, `mean` the
    /// metric's replication mean with its 95% interval.
    pub probes: Vec<SweepPoint>,
    /// The level whose crossing was sought.
    pub threshold: f64,
    /// The bracket `(low, high)` after each probe from the second, as the
    /// bisection held it; the last is the final bracket.
    pub brackets: Vec<(f64, f64)>,
    /// Whether both ends of the final bracket are beyond their intervals.
    pub certain: bool,
    /// The metric axis's range, e.g. `Some((0.0, 1.0))` for a share; `None`
    /// fits the probes, their intervals and the threshold.
    pub y_range: Option<(f64, f64)>,
}

/// Probes at or above the threshold are drawn in this series colour, those
/// below in [`BELOW`]'s.
const ABOVE: usize = 1;
const BELOW: usize = 0;

/// The colour of a bracket: the above-threshold colour, light, so that
/// the probes and lines drawn over it stay readable.
fn bracket_fill() -> plotters::style::RGBColor {
    lighten(series_color(ABOVE), 0.75)
}

const SWATCH_W: i32 = 36;

enum Swatch {
    Probe(usize),
    Interval,
    Threshold,
    Bracket,
}

struct Entry {
    swatch: Swatch,
    label: String,
}

impl LegendItem for Entry {
    fn label(&self) -> &str {
        &self.label
    }

    fn draw_swatch(&self, canvas: &Canvas<'_>, x: i32, cy: i32) -> Result<(), PlotError> {
        let mid = x + SWATCH_W / 2;
        match self.swatch {
            Swatch::Probe(i) => dot(canvas, (mid, cy), i),
            Swatch::Interval => error_bar(canvas, mid, cy - 9, cy + 9, INK),
            Swatch::Threshold => dashed_hline(canvas, x, x + SWATCH_W, cy, INK, 6, 4),
            Swatch::Bracket => fill_rect(
                canvas,
                (mid - 6, cy - 10),
                (mid + 6, cy + 10),
                bracket_fill(),
            ),
        }
    }
}

/// A probe's marker: a filled circle with a white rim.
pub(crate) fn dot(canvas: &Canvas<'_>, c: (i32, i32), series: usize) -> Result<(), PlotError> {
    canvas
        .draw(&Circle::new(c, 7, BACKGROUND.filled()))
        .map_err(drawing)?;
    canvas
        .draw(&Circle::new(c, 5, series_color(series).filled()))
        .map_err(drawing)
}

/// A vertical error bar from `top` to `bottom` with caps.
pub(crate) fn error_bar(
    canvas: &Canvas<'_>,
    x: i32,
    top: i32,
    bottom: i32,
    color: plotters::style::RGBColor,
) -> Result<(), PlotError> {
    line(canvas, (x, top), (x, bottom), color)?;
    line(canvas, (x - 5, top), (x + 5, top), color)?;
    line(canvas, (x - 5, bottom), (x + 5, bottom), color)
}

fn interval(p: &SweepPoint) -> Option<(f64, f64)> {
    match (p.ci_low, p.ci_high) {
        (Some(a), Some(b)) if a.is_finite() && b.is_finite() => Some((a.min(b), a.max(b))),
        _ => None,
    }
}

/// Renders a search chart as an SVG document of [`SWEEP_WIDTH`] pixels, in
/// two panels.
///
/// The top panel plots each probe's mean against the parameter, with its 95%
/// interval as an error bar, coloured by the side of the threshold it fell
/// on and numbered in the order run (numbers that would collide stack
/// upwards); the threshold is a dashed line and the final bracket a band.
/// The bottom panel replays the bisection: probe number across, the
/// parameter up, each probe's value joined in order and the bracket it left
/// as a bar, narrowing to the final one, whose ends are written beside it.
///
/// # Errors
///
/// [`PlotError::NoVariants`] without probes, [`PlotError::Font`] /
/// [`PlotError::Drawing`] if plotters fails.
pub fn render_search_svg(chart: &SearchChart) -> Result<String, PlotError> {
    let probes: Vec<(usize, &SweepPoint)> = chart
        .probes
        .iter()
        .enumerate()
        .filter(|(_, p)| p.x.is_finite() && p.mean.is_finite())
        .collect();
    if probes.is_empty() {
        return Err(PlotError::NoVariants);
    }
    ensure_fonts()?;
    let width = SWEEP_WIDTH as i32;
    let threshold = Some(chart.threshold).filter(|t| t.is_finite());
    let brackets: Vec<(f64, f64)> = chart
        .brackets
        .iter()
        .copied()
        .filter(|(a, b)| a.is_finite() && b.is_finite())
        .collect();
    let last_bracket = brackets.last().copied();

    // The parameter's range: every probe and bracket end.
    let (p_lo, p_hi, p_ticks) = {
        let values = probes
            .iter()
            .map(|(_, p)| p.x)
            .chain(brackets.iter().flat_map(|(a, b)| [*a, *b]));
        let (lo, hi) = finite_range(values).unwrap_or((0.0, 1.0));
        linear_ticks(lo, hi, 8)
    };
    // The metric's.
    let (m_lo, m_hi, m_ticks) = match chart.y_range {
        Some((a, b)) if a.is_finite() && b.is_finite() && a < b => {
            let (_, _, ticks) = linear_ticks(a, b, 5);
            let ticks = ticks.into_iter().filter(|t| *t >= a && *t <= b).collect();
            (a, b, ticks)
        }
        _ => {
            let values = probes.iter().flat_map(|(_, p)| {
                let (l, h) = interval(p).unwrap_or((p.mean, p.mean));
                [p.mean, l, h]
            });
            let (lo, hi) = finite_range(values.chain(threshold)).unwrap_or((0.0, 1.0));
            linear_ticks(lo, hi, 5)
        }
    };

    let mut legend = vec![
        Entry {
            swatch: Swatch::Probe(ABOVE),
            label: "probe at or above the threshold".into(),
        },
        Entry {
            swatch: Swatch::Probe(BELOW),
            label: "below it".into(),
        },
    ];
    if probes.iter().any(|(_, p)| interval(p).is_some()) {
        legend.push(Entry {
            swatch: Swatch::Interval,
            label: "95% interval".into(),
        });
    }
    if let Some(t) = threshold {
        legend.push(Entry {
            swatch: Swatch::Threshold,
            label: format!("threshold ({})", format_number(t)),
        });
    }
    if let Some((a, b)) = last_bracket {
        legend.push(Entry {
            swatch: Swatch::Bracket,
            label: format!(
                "final bracket: {} to {}{}",
                format_number(a),
                format_number(b),
                if chart.certain { "" } else { " (uncertain)" }
            ),
        });
    }
    let header = Header::layout(&chart.title, &chart.subtitle, &legend, SWATCH_W, width, 10)?;

    let metric_labels: Vec<String> = m_ticks.iter().map(|v| format_number(*v)).collect();
    let param_labels: Vec<String> = p_ticks.iter().map(|v| format_number(*v)).collect();
    let left = MARGIN + y_axis_width(&metric_labels, true)?.max(y_axis_width(&param_labels, true)?);
    let right = width - MARGIN - 20;
    let panel_title_h = line_height(size::AXIS_TITLE) + 8;
    let top = Rect::new(
        left,
        header.bottom + panel_title_h + 14,
        right,
        header.bottom + panel_title_h + 14 + 360,
    );
    let bottom_top = top.bottom + x_axis_height() + 34 + panel_title_h;
    let bottom = Rect::new(left, bottom_top, right, bottom_top + 300);
    let height = bottom.bottom + x_axis_height() + 16;
    let side = |p: &SweepPoint| match threshold {
        Some(t) if p.mean >= t => ABOVE,
        _ => BELOW,
    };
    let panel_title = TextSpec::new(size::AXIS_TITLE, INK)
        .bold()
        .anchor(HPos::Left, VPos::Bottom);

    draw_svg((SWEEP_WIDTH, height as u32), |canvas| {
        header.draw(canvas, &chart.title, &chart.subtitle, &legend, width)?;

        // Top: the metric at each probe.
        panel_title.draw(
            canvas,
            "The metric at each probe (numbered in the order run)",
            (MARGIN, top.top - 14),
        )?;
        // A little air past the end ticks, so that a probe at an end of the
        // interval is not drawn on the axis.
        let air = (p_hi - p_lo) * 0.03;
        let xs = Scale::linear(p_lo - air, p_hi + air, top.left, top.right);
        let ys = Scale::linear(m_lo, m_hi, top.bottom, top.top);
        draw_y_axis(
            canvas,
            top,
            &ys,
            &m_ticks,
            &|v| format_number(v),
            &chart.metric,
            MARGIN,
        )?;
        draw_x_axis(
            canvas,
            top,
            &xs,
            &p_ticks,
            &[],
            &|v| format_number(v),
            &chart.parameter,
        )?;
        if let Some((a, b)) = last_bracket {
            // At least 4 px wide: a bracket of a few units on a wide axis
            // must still show.
            let (x0, x1) = (xs.map(a), xs.map(b));
            let c = (x0 + x1) / 2;
            let (x0, x1) = (x0.min(c - 2), x1.max(c + 2));
            fill_rect(canvas, (x0, top.top), (x1, top.bottom), bracket_fill())?;
        }
        if let Some(t) = threshold.filter(|t| *t >= m_lo && *t <= m_hi) {
            dashed_hline(canvas, top.left, top.right, ys.map(t), INK, 8, 5)?;
        }
        for (_, p) in &probes {
            if let Some((lo, hi)) = interval(p) {
                let color = series_color(side(p));
                error_bar(canvas, xs.map(p.x), ys.map(hi), ys.map(lo), color)?;
            }
        }
        for (_, p) in &probes {
            dot(canvas, (xs.map(p.x), ys.map(p.mean)), side(p))?;
        }
        number_probes(canvas, top, &probes, &xs, &ys)?;

        // Bottom: the bisection, probe by probe.
        panel_title.draw(
            canvas,
            "The bisection: each probe's value and the bracket it left",
            (MARGIN, bottom.top - 14),
        )?;
        let n = chart.probes.len().max(2);
        let ks = Scale::linear(0.5, n as f64 + 0.5, bottom.left, bottom.right);
        let vs = Scale::linear(p_lo - air, p_hi + air, bottom.bottom, bottom.top);
        let short = TextSpec::new(size::AXIS_TITLE, INK).fit(&chart.parameter, bottom.height())?;
        draw_y_axis(
            canvas,
            bottom,
            &vs,
            &p_ticks,
            &|v| format_number(v),
            &short,
            MARGIN,
        )?;
        let numbers: Vec<f64> = (1..=n).map(|k| k as f64).collect();
        draw_x_axis(
            canvas,
            bottom,
            &ks,
            &numbers,
            &[],
            &|v| format!("{v:.0}"),
            "probe, in the order run",
        )?;
        // The bracket after probe k (k from 2) as a bar.
        let bar_half = ((bottom.width() / n as i32) / 5).clamp(3, 14);
        for (i, (a, b)) in brackets.iter().enumerate() {
            let x = ks.map((i + 2) as f64);
            let (y0, y1) = (vs.map(*b), vs.map(*a));
            let c = (y0 + y1) / 2;
            fill_rect(
                canvas,
                (x - bar_half, y0.min(c - 2)),
                (x + bar_half, y1.max(c + 2)),
                bracket_fill(),
            )?;
        }
        let path: Vec<(i32, i32)> = probes
            .iter()
            .map(|(k, p)| (ks.map((k + 1) as f64), vs.map(p.x)))
            .collect();
        polyline(canvas, path.clone(), GUIDE, 1)?;
        for ((_, p), at) in probes.iter().zip(&path) {
            dot(canvas, *at, side(p))?;
        }
        if let Some((a, b)) = last_bracket {
            // Under the last bracket, against the right edge: the late
            // probes all lie near the crossing, above and beside it, and
            // the early ones far off to the left.
            let text = format!("final bracket {} to {}", format_number(a), format_number(b));
            let spec = TextSpec::new(size::VALUE, INK).anchor(HPos::Right, VPos::Top);
            let (w, h) = spec.measure(&text)?;
            let x = bottom.right - 4;
            let below = vs.map(a.min(b)) + 14;
            let y = if below + h > bottom.bottom {
                vs.map(a.max(b)) - 14 - h
            } else {
                below
            };
            fill_rect(canvas, (x - w - 4, y - 2), (x + 3, y + h + 2), BACKGROUND)?;
            spec.draw(canvas, &text, (x, y))?;
        }
        Ok(())
    })
}

/// Writes each probe's number above its interval (or its marker), moving a
/// number up a line while it would overlap one already written, and below
/// the point when there is no room left above.
fn number_probes(
    canvas: &Canvas<'_>,
    plot: Rect,
    probes: &[(usize, &SweepPoint)],
    xs: &Scale,
    ys: &Scale,
) -> Result<(), PlotError> {
    let spec = TextSpec::new(size::VALUE, MUTED_INK).anchor(HPos::Center, VPos::Bottom);
    let h = line_height(size::VALUE);
    let mut placed: Vec<Rect> = Vec::new();
    for (k, p) in probes {
        let text = (k + 1).to_string();
        let w = spec.width(&text)? + 6;
        let x = xs.map(p.x);
        let top_of = |p: &SweepPoint| interval(p).map_or(p.mean, |(_, hi)| hi.max(p.mean));
        let mut bottom = ys.map(top_of(p)) - 8;
        let overlaps = |r: &Rect| {
            placed.iter().any(|q| {
                r.left < q.right && q.left < r.right && r.top < q.bottom && q.top < r.bottom
            })
        };
        let mut rect = Rect::new(x - w / 2, bottom - h, x + w / 2, bottom);
        while overlaps(&rect) && rect.top - h >= plot.top {
            bottom -= h;
            rect = Rect::new(x - w / 2, bottom - h, x + w / 2, bottom);
        }
        if rect.top < plot.top || overlaps(&rect) {
            // No room above: under the point (or its interval).
            let low = interval(p).map_or(p.mean, |(lo, _)| lo.min(p.mean));
            bottom = ys.map(low) + 8 + h;
            rect = Rect::new(x - w / 2, bottom - h, x + w / 2, bottom);
            while overlaps(&rect) && rect.bottom + h <= plot.bottom {
                bottom += h;
                rect = Rect::new(x - w / 2, bottom - h, x + w / 2, bottom);
            }
        }
        spec.draw(canvas, &text, (x, bottom))?;
        placed.push(rect);
    }
    Ok(())
}
