//! Value scales (linear and log₁₀), tick selection, and drawing of axes with
//! grid lines, tick labels and titles.
//!
//! Ticks are chosen here rather than by plotters so that they are always
//! "nice" numbers (1-2-5 steps, decades on log axes), never crowd each other,
//! and the axis ends exactly on a tick.

use plotters::style::text_anchor::{HPos, VPos};

use crate::canvas::{line, line_height, Canvas, Rect, TextSpec};
use crate::style::{size, AXIS, GRID, GRID_MINOR, INK, MUTED_INK};
use crate::PlotError;

/// How data values are spread along an axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum ScaleKind {
    Linear,
    /// Equal distance per decade; the domain must be positive.
    Log10,
}

/// Maps a data interval onto a pixel interval (`p0` is where `lo` lands;
/// `p1` may be smaller than `p0`, as on a y axis where up is smaller).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Scale {
    pub lo: f64,
    pub hi: f64,
    pub p0: i32,
    pub p1: i32,
    pub kind: ScaleKind,
}

impl Scale {
    pub fn linear(lo: f64, hi: f64, p0: i32, p1: i32) -> Scale {
        Scale {
            lo,
            hi,
            p0,
            p1,
            kind: ScaleKind::Linear,
        }
    }

    pub fn log10(lo: f64, hi: f64, p0: i32, p1: i32) -> Scale {
        Scale {
            lo,
            hi,
            p0,
            p1,
            kind: ScaleKind::Log10,
        }
    }

    /// Where `v` lands, clamped to the axis (values outside are drawn at the
    /// nearest end rather than outside the plot).
    pub fn map(&self, v: f64) -> i32 {
        let t = match self.kind {
            ScaleKind::Linear => (v - self.lo) / (self.hi - self.lo),
            ScaleKind::Log10 => {
                let v = if v > 0.0 { v } else { self.lo };
                (libm::log10(v) - libm::log10(self.lo))
                    / (libm::log10(self.hi) - libm::log10(self.lo))
            }
        };
        let t = if t.is_finite() {
            t.clamp(0.0, 1.0)
        } else {
            0.0
        };
        (f64::from(self.p0) + t * f64::from(self.p1 - self.p0)).round() as i32
    }
}

/// A 1-2-5 step (…, 0.5, 1, 2, 5, 10, …) that splits `span` into at most
/// about `target` intervals.
pub(crate) fn nice_step(span: f64, target: usize) -> f64 {
    let target = target.max(1) as f64;
    if !(span.is_finite() && span > 0.0) {
        return 1.0;
    }
    let raw = span / target;
    let mag = libm::pow(10.0, libm::log10(raw).floor());
    let norm = raw / mag;
    let m = if norm <= 1.0 {
        1.0
    } else if norm <= 2.0 {
        2.0
    } else if norm <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// Ticks for a linear axis that starts at 0 and must reach at least `max`,
/// with at most `max_intervals` intervals: returns the ticks (0, step,
/// 2·step, …) and the last one, which becomes the axis end. Of the 1-2-2.5-5
/// steps that fit, the one whose end wastes least room is taken (ties go to
/// more grid lines). A non-positive or non-finite `max` gives the axis 0..1.
pub(crate) fn zero_based_ticks(max: f64, max_intervals: usize) -> (Vec<f64>, f64) {
    let max = if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    };
    let max_intervals = max_intervals.max(1);
    let min_intervals = (max_intervals / 2).max(2).min(max_intervals);
    let e = libm::log10(max).floor() as i32;
    let mut best: Option<(f64, usize, f64)> = None; // (end, intervals, step)
    for exp in (e - 2)..=(e + 1) {
        for m in [10u32, 20, 25, 50] {
            let step = decimal(m, exp - 1);
            let n = (max / step - 1e-9).ceil().max(1.0) as usize;
            if n < min_intervals || n > max_intervals {
                continue;
            }
            let end = clean(n as f64 * step);
            let better = match best {
                None => true,
                Some((b_end, b_n, _)) => end < b_end || (end == b_end && n > b_n),
            };
            if better {
                best = Some((end, n, step));
            }
        }
    }
    let (n, step) = match best {
        Some((_, n, step)) => (n, step),
        None => {
            let step = nice_step(max, max_intervals);
            ((max / step - 1e-9).ceil().max(1.0) as usize, step)
        }
    };
    let ticks: Vec<f64> = (0..=n).map(|i| clean(i as f64 * step)).collect();
    let end = ticks.last().copied().unwrap_or(1.0);
    (ticks, end)
}

/// [`zero_based_ticks`] for an axis of whole numbers (counts): the same axis
/// end, without the fractional ticks, so no label reads "0.5 requests".
pub(crate) fn whole_ticks(max: f64, max_intervals: usize) -> (Vec<f64>, f64) {
    let (mut ticks, end) = zero_based_ticks(max, max_intervals);
    ticks.retain(|t| t.fract() == 0.0);
    (ticks, end)
}

/// Removes floating-point dust (0.30000000000000004 → 0.3) so labels and
/// SVG coordinates stay tidy and identical across platforms.
fn clean(v: f64) -> f64 {
    let r = (v * 1e9).round() / 1e9;
    if r == 0.0 {
        0.0
    } else {
        r
    }
}

/// A positive axis range for a log scale that holds `min..=max` with a
/// little air on both sides and ends on 1-2-5 values (10, 20, 50, 100, …),
/// so the ends carry labelled ticks. Degenerate input (no positive value,
/// all values equal) still gives a range at least 2× wide; so does a
/// maximum whose air would overflow (an infinite end has ticks without end).
pub(crate) fn log_range(min: f64, max: f64) -> (f64, f64) {
    if !(min.is_finite() && max.is_finite() && min > 0.0 && max >= min) {
        return (1.0, 1000.0);
    }
    let lo = snap_125(min / 1.1, false);
    let mut hi = snap_125(max * 1.1, true);
    if hi <= lo {
        hi = snap_125(lo * 1.5, true);
    }
    if !hi.is_finite() {
        return (1.0, 1000.0);
    }
    (lo, hi)
}

/// The nearest 1-2-5 value below (or above, if `up`) `v > 0`.
fn snap_125(v: f64, up: bool) -> f64 {
    let e = libm::log10(v).floor() as i32;
    let candidates = [(1, e), (2, e), (5, e), (1, e + 1)];
    if up {
        candidates
            .iter()
            .map(|(m, e)| decimal(*m, *e))
            .find(|c| *c >= v * (1.0 - 1e-12))
            .unwrap_or_else(|| decimal(1, e + 1))
    } else {
        candidates
            .iter()
            .rev()
            .map(|(m, e)| decimal(*m, *e))
            .find(|c| *c <= v * (1.0 + 1e-12))
            .unwrap_or_else(|| decimal(1, e))
    }
}

/// `m × 10^e` as the nearest f64 (what the literal `5e-3` would be), so tick
/// values are exactly the numbers their labels show; `powi` products are
/// often one ulp off.
fn decimal(m: u32, e: i32) -> f64 {
    format!("{m}e{e}")
        .parse()
        .unwrap_or(f64::from(m) * 10f64.powi(e))
}

/// Ticks for a log axis over `lo..=hi`: labelled `major` ticks and
/// unlabelled `minor` grid lines.
///
/// Spans of three or more decades are labelled at decades only (every
/// second or third decade on very wide spans); narrower spans are labelled
/// at 1-2-5 so there are always at least two labels.
pub(crate) fn log_ticks(lo: f64, hi: f64) -> (Vec<f64>, Vec<f64>) {
    let inside = |v: &f64| *v >= lo * (1.0 - 1e-9) && *v <= hi * (1.0 + 1e-9);
    let first = libm::log10(lo).floor() as i32;
    let last = libm::log10(hi).ceil() as i32;
    let mut all = Vec::new();
    for e in first..=last {
        for m in 1..=9 {
            let v = decimal(m, e);
            if inside(&v) {
                all.push((m, v));
            }
        }
    }
    let decades: Vec<f64> = all.iter().filter(|(m, _)| *m == 1).map(|x| x.1).collect();
    let (major, minor_allowed): (Vec<f64>, bool) = if decades.len() >= 3 {
        let every = decades.len().div_ceil(8);
        let major = decades.iter().copied().step_by(every).collect();
        (major, decades.len() <= 6)
    } else {
        let major = all
            .iter()
            .filter(|(m, _)| matches!(m, 1 | 2 | 5))
            .map(|x| x.1)
            .collect();
        (major, true)
    };
    let minor = if minor_allowed {
        all.iter()
            .map(|x| x.1)
            .filter(|v| !major.contains(v))
            .collect()
    } else {
        Vec::new()
    };
    (major, minor)
}

/// Draws a horizontal value axis under `plot`: grid lines across the plot at
/// every tick (lighter at `minor` ones), the axis line, labels under the
/// ticks and `title` centred under the labels. Returns the y just below the
/// title.
///
/// Labels that would touch the previous one are skipped (the grid line
/// stays), so a long label can never overprint its neighbour.
pub(crate) fn draw_x_axis(
    canvas: &Canvas<'_>,
    plot: Rect,
    scale: &Scale,
    major: &[f64],
    minor: &[f64],
    label: &dyn Fn(f64) -> String,
    title: &str,
) -> Result<i32, PlotError> {
    for v in minor {
        let x = scale.map(*v);
        line(canvas, (x, plot.top), (x, plot.bottom), GRID_MINOR)?;
    }
    for v in major {
        let x = scale.map(*v);
        line(canvas, (x, plot.top), (x, plot.bottom), GRID)?;
    }
    line(
        canvas,
        (plot.left, plot.bottom),
        (plot.right, plot.bottom),
        AXIS,
    )?;
    let tick = TextSpec::new(size::TICK, MUTED_INK).anchor(HPos::Center, VPos::Top);
    let label_top = plot.bottom + 8;
    let mut last_right = i32::MIN;
    for v in major {
        let x = scale.map(*v);
        line(canvas, (x, plot.bottom), (x, plot.bottom + 5), AXIS)?;
        let text = label(*v);
        let w = tick.width(&text)?;
        if x - w / 2 > last_right + 6 {
            tick.draw(canvas, &text, (x, label_top))?;
            last_right = x + w / 2;
        }
    }
    let title_top = label_top + line_height(size::TICK) + 4;
    TextSpec::new(size::AXIS_TITLE, INK)
        .anchor(HPos::Center, VPos::Top)
        .draw(canvas, title, (plot.center_x(), title_top))?;
    Ok(title_top + line_height(size::AXIS_TITLE))
}

/// Height that [`draw_x_axis`] needs under the plot.
pub(crate) fn x_axis_height() -> i32 {
    8 + line_height(size::TICK) + 4 + line_height(size::AXIS_TITLE)
}

/// Draws a vertical value axis left of `plot`: grid lines, axis line, labels
/// right-aligned against the ticks and, if `title` is not empty, the title
/// reading upwards at `title_x` (its top edge; see [`y_axis_width`]).
pub(crate) fn draw_y_axis(
    canvas: &Canvas<'_>,
    plot: Rect,
    scale: &Scale,
    major: &[f64],
    label: &dyn Fn(f64) -> String,
    title: &str,
    title_x: i32,
) -> Result<(), PlotError> {
    for v in major {
        let y = scale.map(*v);
        line(canvas, (plot.left, y), (plot.right, y), GRID)?;
    }
    line(
        canvas,
        (plot.left, plot.top),
        (plot.left, plot.bottom),
        AXIS,
    )?;
    let tick = TextSpec::new(size::TICK, MUTED_INK).anchor(HPos::Right, VPos::Center);
    let mut last_top = i32::MAX;
    let h = line_height(size::TICK);
    for v in major {
        let y = scale.map(*v);
        line(canvas, (plot.left - 5, y), (plot.left, y), AXIS)?;
        // Ticks go bottom-up; skip a label that would touch the one below.
        if y + h / 2 < last_top {
            tick.draw(canvas, &label(*v), (plot.left - 8, y))?;
            last_top = y - h / 2;
        }
    }
    if !title.is_empty() {
        TextSpec::new(size::AXIS_TITLE, INK)
            .anchor(HPos::Center, VPos::Top)
            .upward()
            .draw(canvas, title, (title_x, plot.center_y()))?;
    }
    Ok(())
}

/// Width that [`draw_y_axis`] needs left of the plot for these labels and a
/// title (`with_title`), measured from the widest label.
pub(crate) fn y_axis_width(labels: &[String], with_title: bool) -> Result<i32, PlotError> {
    let tick = TextSpec::new(size::TICK, MUTED_INK);
    let mut widest = 0;
    for l in labels {
        widest = widest.max(tick.width(l)?);
    }
    let title = if with_title {
        line_height(size::AXIS_TITLE) + 6
    } else {
        0
    };
    Ok(widest + 8 + title + 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_ticks_are_nice_and_reach_the_max() {
        let (t, end) = zero_based_ticks(751.0, 5);
        assert_eq!(t, vec![0.0, 200.0, 400.0, 600.0, 800.0]);
        assert_eq!(end, 800.0);
        let (t, end) = zero_based_ticks(1.93, 4);
        assert_eq!(end, 2.0);
        assert_eq!(t, vec![0.0, 0.5, 1.0, 1.5, 2.0]);
        let (_, end) = zero_based_ticks(1034.0, 6);
        assert_eq!(end, 1200.0);
        let (t, end) = zero_based_ticks(7.0, 2);
        assert_eq!((t.len(), end), (3, 10.0));
        let (_, end) = zero_based_ticks(0.0, 4);
        assert_eq!(end, 1.0);
        let (_, end) = zero_based_ticks(f64::NAN, 4);
        assert_eq!(end, 1.0);
    }

    #[test]
    fn whole_ticks_leave_out_fractions() {
        // 0.5 steps up to 2 would label half a request.
        assert_eq!(zero_based_ticks(2.0, 5).0, vec![0.0, 0.5, 1.0, 1.5, 2.0]);
        assert_eq!(whole_ticks(2.0, 5), (vec![0.0, 1.0, 2.0], 2.0));
        assert_eq!(whole_ticks(751.0, 5).0, zero_based_ticks(751.0, 5).0);
    }

    #[test]
    fn log_range_snaps_to_125() {
        assert_eq!(log_range(14.0, 404.0), (10.0, 500.0));
        assert_eq!(log_range(14.0, 14.0), (10.0, 20.0));
        assert_eq!(log_range(0.0, 0.0), (1.0, 1000.0));
        assert_eq!(log_range(1.0, 1e308), (1.0, 1000.0));
        let (lo, hi) = log_range(0.001, 0.001);
        assert!(lo < 0.001 && hi > 0.001, "{lo} {hi}");
    }

    #[test]
    fn log_ticks_label_decades_or_125() {
        let (major, minor) = log_ticks(1.0, 1000.0);
        assert_eq!(major, vec![1.0, 10.0, 100.0, 1000.0]);
        assert!(minor.contains(&20.0));
        let (major, _) = log_ticks(10.0, 500.0);
        assert_eq!(major, vec![10.0, 20.0, 50.0, 100.0, 200.0, 500.0]);
        let (major, _) = log_ticks(10.0, 20.0);
        assert_eq!(major, vec![10.0, 20.0]);
        let (major, minor) = log_ticks(1e-3, 1e9);
        assert!(major.len() <= 8, "{major:?}");
        assert!(minor.is_empty());
    }

    #[test]
    fn scales_clamp() {
        let s = Scale::linear(0.0, 100.0, 10, 110);
        assert_eq!(s.map(50.0), 60);
        assert_eq!(s.map(500.0), 110);
        let l = Scale::log10(10.0, 1000.0, 0, 200);
        assert_eq!(l.map(100.0), 100);
        assert_eq!(l.map(0.0), 0);
        let y = Scale::linear(0.0, 1.0, 300, 100);
        assert_eq!(y.map(1.0), 100);
    }
}
