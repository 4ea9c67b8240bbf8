//! The margin chart: how big a trigger each load can take before it storms.
//! Load across, the critical trigger size up; per variant the 50% line with
//! each point's interval, and the 10–90% band shaded where it was asked for.

use plotters::element::Circle;
use plotters::style::Color;

use crate::axes::{draw_x_axis, draw_y_axis, x_axis_height, y_axis_width, Scale};
use crate::canvas::{draw_svg, fill_polygon, line, polyline, Canvas, Rect, MARGIN};
use crate::error::drawing;
use crate::header::{Header, LegendItem};
use crate::search::{dot, error_bar};
use crate::style::{ensure_fonts, format_number, series_color, BACKGROUND};
use crate::sweep::{finite_range, linear_ticks, SWEEP_WIDTH};
use crate::PlotError;

/// One variant's margin: its critical sizes at each load.
#[derive(Clone, Debug, PartialEq)]
pub struct MarginSeries {
    /// The variant's name.
    pub name: String,
    /// The 50% crossings (or the single level's), by load.
    pub points: Vec<MarginPoint>,
    /// The 10% and 90% crossings (`(load, size at 10%, size at 90%)`), for
    /// the shaded band, where both were found.
    pub band: Vec<(f64, f64, f64)>,
}

/// One load's critical trigger size and its interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MarginPoint {
    /// The load.
    pub load: f64,
    /// The critical size (`None`: no crossing in the range searched).
    pub critical: Option<f64>,
    /// Its interval's low end ...
    pub low: f64,
    /// ... and high end.
    pub high: f64,
    /// Whether the low end is a probe surely below the level (else the
    /// range's floor stands in: the interval is open there).
    pub low_sure: bool,
    /// Whether the high end is a probe surely above it.
    pub high_sure: bool,
    /// Without a crossing: whether every size stormed (drawn at the
    /// range's floor) or none did (at its ceiling).
    pub storms_at_every_size: bool,
}

/// The margin chart.
#[derive(Clone, Debug, PartialEq)]
pub struct MarginChart {
    /// The main title.
    pub title: String,
    /// The line under it.
    pub subtitle: String,
    /// The x axis's title (the load).
    pub load: String,
    /// The y axis's title (the trigger size).
    pub trigger: String,
    /// The level the points are the crossings of (0.5).
    pub level: f64,
    /// The range searched, `(from, to)`.
    pub range: (f64, f64),
    /// One series per variant.
    pub series: Vec<MarginSeries>,
}

const SWATCH_W: i32 = 36;

enum Swatch {
    Line(usize),
    Band(usize),
    Interval,
    Beyond,
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
            Swatch::Line(i) => {
                polyline(
                    canvas,
                    vec![(x, cy), (x + SWATCH_W, cy)],
                    series_color(i),
                    3,
                )?;
                dot(canvas, (mid, cy), i)
            }
            Swatch::Band(i) => fill_polygon(
                canvas,
                vec![
                    (x, cy - 8),
                    (x + SWATCH_W, cy - 8),
                    (x + SWATCH_W, cy + 8),
                    (x, cy + 8),
                ],
                band_color(i),
            ),
            Swatch::Interval => error_bar(canvas, mid, cy - 9, cy + 9, crate::style::INK),
            Swatch::Beyond => hollow(canvas, (mid, cy), crate::style::INK),
        }
    }
}

/// Translucent, so that two variants' bands both show where they overlap.
fn band_color(series: usize) -> plotters::style::RGBAColor {
    series_color(series).mix(0.25)
}

/// A point with no crossing in the range: an open circle at the range's end.
fn hollow(
    canvas: &Canvas<'_>,
    c: (i32, i32),
    color: plotters::style::RGBColor,
) -> Result<(), PlotError> {
    canvas
        .draw(&Circle::new(c, 6, BACKGROUND.filled()))
        .map_err(drawing)?;
    canvas
        .draw(&Circle::new(c, 6, color.stroke_width(2)))
        .map_err(drawing)
}

/// A dashed vertical line from `y0` to `y1`.
fn dashed_vline(
    canvas: &Canvas<'_>,
    x: i32,
    y0: i32,
    y1: i32,
    color: plotters::style::RGBColor,
) -> Result<(), PlotError> {
    let (top, bottom) = (y0.min(y1), y0.max(y1));
    let mut y = top;
    while y < bottom {
        line(canvas, (x, y), (x, (y + 4).min(bottom)), color)?;
        y += 7;
    }
    Ok(())
}

/// Renders the margin chart as an SVG document [`SWEEP_WIDTH`] wide.
///
/// Each variant is a line through its critical sizes, one colour each, with
/// every point's interval as an error bar (slightly offset between variants
/// so that bars at one load do not hide each other); where the 10% and 90%
/// crossings were sought, the band between them is shaded in the variant's
/// colour. A load where no size in the range crossed the level is an open
/// circle at the range's floor (every size stormed) or ceiling (none did).
///
/// # Errors
///
/// [`PlotError::NoVariants`] without points, [`PlotError::Font`] /
/// [`PlotError::Drawing`] if plotters fails.
pub fn render_margin_svg(chart: &MarginChart) -> Result<String, PlotError> {
    if chart.series.iter().all(|s| s.points.is_empty()) {
        return Err(PlotError::NoVariants);
    }
    ensure_fonts()?;
    let width = SWEEP_WIDTH as i32;
    let loads = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.load));
    let (x_lo, x_hi) = finite_range(loads).unwrap_or((0.0, 1.0));
    let (x_lo, x_hi, x_ticks) = if x_lo == x_hi {
        linear_ticks(x_lo * 0.9, x_hi * 1.1 + 1e-9, 8)
    } else {
        linear_ticks(x_lo, x_hi, 8)
    };
    // The size axis fits what was found (crossings, bands, sure interval
    // ends, and the range's end where a load never crossed), from 0: an
    // open interval end runs to the plot's edge, dashed.
    let found = chart.series.iter().flat_map(|s| {
        s.points
            .iter()
            .flat_map(|p| {
                let missed = p.critical.is_none().then_some(if p.storms_at_every_size {
                    chart.range.0
                } else {
                    chart.range.1
                });
                [
                    p.critical,
                    p.low_sure.then_some(p.low).filter(|_| p.critical.is_some()),
                    p.high_sure
                        .then_some(p.high)
                        .filter(|_| p.critical.is_some()),
                    missed,
                ]
            })
            .flatten()
            .chain(s.band.iter().flat_map(|(_, lo, hi)| [*lo, *hi]))
    });
    let (_, top) = finite_range(found.chain([0.0])).unwrap_or((0.0, chart.range.1));
    let (y_lo, y_hi, y_ticks) = linear_ticks(0.0, if top > 0.0 { top * 1.1 } else { 1.0 }, 6);

    let mut legend: Vec<Entry> = chart
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| Entry {
            swatch: Swatch::Line(i),
            label: format!(
                "{} ({}% of runs storm)",
                s.name,
                format_number(chart.level * 100.0)
            ),
        })
        .collect();
    legend.push(Entry {
        swatch: Swatch::Interval,
        label: "interval: surely below to surely above (dashed: open)".into(),
    });
    for (i, s) in chart.series.iter().enumerate() {
        if !s.band.is_empty() {
            legend.push(Entry {
                swatch: Swatch::Band(i),
                label: format!("{}: 10% to 90% of runs storm", s.name),
            });
        }
    }
    if chart
        .series
        .iter()
        .any(|s| s.points.iter().any(|p| p.critical.is_none()))
    {
        legend.push(Entry {
            swatch: Swatch::Beyond,
            label: "no crossing in the range (at its floor: always storms; ceiling: never)".into(),
        });
    }
    let header = Header::layout(&chart.title, &chart.subtitle, &legend, SWATCH_W, width, 10)?;
    let y_labels: Vec<String> = y_ticks.iter().map(|v| format_number(*v)).collect();
    let left = MARGIN + y_axis_width(&y_labels, true)?;
    let right = width - MARGIN - 20;
    let plot = Rect::new(left, header.bottom + 20, right, header.bottom + 20 + 460);
    let height = plot.bottom + x_axis_height() + 16;

    draw_svg((SWEEP_WIDTH, height as u32), |canvas| {
        header.draw(canvas, &chart.title, &chart.subtitle, &legend, width)?;
        let air = (x_hi - x_lo) * 0.04;
        let xs = Scale::linear(x_lo - air, x_hi + air, plot.left, plot.right);
        let ys = Scale::linear(y_lo, y_hi, plot.bottom, plot.top);
        draw_y_axis(
            canvas,
            plot,
            &ys,
            &y_ticks,
            &|v| format_number(v),
            &chart.trigger,
            MARGIN,
        )?;
        draw_x_axis(
            canvas,
            plot,
            &xs,
            &x_ticks,
            &[],
            &|v| format_number(v),
            &chart.load,
        )?;
        for (i, s) in chart.series.iter().enumerate() {
            if s.band.len() >= 2 {
                let mut points: Vec<(i32, i32)> = s
                    .band
                    .iter()
                    .map(|(x, lo, _)| (xs.map(*x), ys.map(*lo)))
                    .collect();
                points.extend(
                    s.band
                        .iter()
                        .rev()
                        .map(|(x, _, hi)| (xs.map(*x), ys.map(*hi))),
                );
                fill_polygon(canvas, points, band_color(i))?;
            } else if let [(x, lo, hi)] = s.band[..] {
                let x = xs.map(x);
                fill_polygon(
                    canvas,
                    vec![
                        (x - 6, ys.map(lo)),
                        (x + 6, ys.map(lo)),
                        (x + 6, ys.map(hi)),
                        (x - 6, ys.map(hi)),
                    ],
                    band_color(i),
                )?;
            }
        }
        let n = chart.series.len() as i32;
        for (i, s) in chart.series.iter().enumerate() {
            let offset = (i as i32 - (n - 1) / 2) * 6;
            let color = series_color(i);
            let line_points: Vec<(i32, i32)> = s
                .points
                .iter()
                .filter_map(|p| p.critical.map(|c| (xs.map(p.load), ys.map(c))))
                .collect();
            polyline(canvas, line_points, color, 3)?;
            for p in &s.points {
                let x = xs.map(p.load) + offset;
                if p.critical.is_some() {
                    let clamp = |v: f64| ys.map(v.clamp(y_lo, y_hi));
                    let (low, high) = (clamp(p.low), clamp(p.high));
                    let c = clamp(p.critical.unwrap_or(p.low));
                    // Sure ends capped; an open end dashed to where it
                    // stands in (or the plot's edge).
                    match (p.low_sure, p.high_sure) {
                        (true, true) => error_bar(canvas, x, high, low, color)?,
                        (low_sure, high_sure) => {
                            for (end, sure) in [(low, low_sure), (high, high_sure)] {
                                if sure {
                                    line(canvas, (x, c), (x, end), color)?;
                                    line(canvas, (x - 5, end), (x + 5, end), color)?;
                                } else {
                                    dashed_vline(canvas, x, c, end, color)?;
                                }
                            }
                        }
                    }
                }
            }
            for p in &s.points {
                let x = xs.map(p.load);
                match p.critical {
                    Some(c) => dot(canvas, (x, ys.map(c)), i)?,
                    None => {
                        let y = if p.storms_at_every_size {
                            chart.range.0
                        } else {
                            chart.range.1
                        };
                        hollow(canvas, (x + offset, ys.map(y)), color)?;
                    }
                }
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_margin_draws_its_lines_bands_and_misses() {
        let chart = MarginChart {
            title: "Storm margin".into(),
            subtitle: "sub".into(),
            load: "offered load (req/s)".into(),
            trigger: "trigger duration (s)".into(),
            level: 0.5,
            range: (0.25, 12.25),
            series: vec![MarginSeries {
                name: "baseline".into(),
                points: vec![
                    MarginPoint {
                        load: 700.0,
                        critical: None,
                        low: 12.25,
                        high: 12.25,
                        low_sure: false,
                        high_sure: false,
                        storms_at_every_size: false,
                    },
                    MarginPoint {
                        load: 1000.0,
                        critical: Some(4.0),
                        low: 3.5,
                        high: 4.5,
                        low_sure: true,
                        high_sure: false,
                        storms_at_every_size: false,
                    },
                ],
                band: vec![(1000.0, 3.0, 5.0)],
            }],
        };
        let svg = render_margin_svg(&chart).unwrap();
        assert!(svg.contains("baseline (50% of runs storm)"));
        assert!(svg.contains("10% to 90%"));
        assert!(svg.contains("no crossing in the range"));
    }
}
