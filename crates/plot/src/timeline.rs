//! Time-series charts: what happened, second by second, during an incident.
//!
//! [`render_timeline_svg`] stacks one panel per variant on one time axis;
//! [`crate::render_load_lines_svg`] draws one line per series in a single panel.
//! Both reduce long series per pixel column (see [`pixel_runs`]) so that
//! spikes survive and the SVG stays small.

use plotters::style::text_anchor::{HPos, VPos};
use plotters::style::{Color, RGBColor};

use crate::axes::{draw_x_axis, draw_y_axis, nice_step, x_axis_height, y_axis_width};
use crate::axes::{whole_ticks, zero_based_ticks, Scale};
use crate::canvas::MARGIN;
use crate::canvas::{
    dashed_polyline, draw_svg, fill_polygon, fill_rect, line, line_height, patterned_bar, polyline,
    Canvas, Rect, TextSpec,
};
use crate::header::{note, Header, LegendItem};
use crate::style::{
    darken, ensure_fonts, format_compact, format_number, series_color, size, AXIS, BACKGROUND,
    GRID, INK, MAX_SERIES, MAX_VARIANTS, MUTED_INK, OKABE_ITO,
};
use crate::PlotError;

/// One variant's time series, as one panel of a [`TimelineChart`].
///
/// All series are per bucket and aligned with `t_s`; a series shorter than
/// `t_s` simply ends early.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TimelinePanel {
    /// The variant, e.g. `baseline` or `retry-budget`: the panel's title.
    pub name: String,
    /// What happened to this variant, e.g. `metastable — recovered by:
    /// retries off, 30% dropped` or `recovered 12 s after rollback`; shown
    /// after the name in the panel's title line.
    pub verdict: Option<String>,
    /// Bucket start times, in seconds since the start of the run,
    /// increasing (typically 1 s buckets, up to a few thousand of them).
    pub t_s: Vec<f64>,
    /// First attempts per second reaching the focus service.
    pub offered_first: Vec<f64>,
    /// Retries per second reaching the focus service (stacked on top of the
    /// first attempts).
    pub offered_retry: Vec<f64>,
    /// Logical requests answered in full per second: the successful ones,
    /// less those in `degraded_answers`.
    pub goodput: Vec<f64>,
    /// Logical requests per second that a fallback answered (a stale cached
    /// value, a default, a secondary service): successes, but degraded ones,
    /// drawn as a line of their own so that a page kept up by fallbacks does
    /// not pass for a healthy one. Empty (or all zero) without fallbacks:
    /// no line then.
    pub degraded_answers: Vec<f64>,
    /// The focus service's capacity, requests per second, over time (e.g.
    /// 13,400/s normally and 873/s during a bad deploy); `None` if unknown.
    pub capacity: Option<Vec<f64>>,
    /// Requests at the focus service at each bucket start, drawn in the strip
    /// under the panel: the caller chooses which count (the CLI passes requests
    /// in flight, queued plus in service, which shows a growing queue and an
    /// exhausted pool alike).
    pub queue: Vec<f64>,
    /// The stretches in which the recovery analysis found the variant
    /// degraded, drawn as a bar along the top of its panel: a storm in
    /// red, overload (the same run without the trigger degraded too) in
    /// amber. Empty without a verdict.
    pub degraded: Vec<DegradedSpan>,
}

/// A stretch of a panel's run in which it was degraded.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DegradedSpan {
    /// Its start, s.
    pub from_s: f64,
    /// Its end, s.
    pub to_s: f64,
    /// Overload (the run without the trigger was degraded too), not a storm.
    pub overload: bool,
}

/// A labelled moment or window shared by all panels: a fault, a rollback,
/// an intervention.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TimelineMark {
    /// What happened, e.g. `bad deploy` or `retries off, 30% dropped`.
    pub label: String,
    /// When it started (or happened), in seconds.
    pub start_s: f64,
    /// When it ended, in seconds; `None` for an instant (drawn as a
    /// vertical line rather than a shaded window).
    pub end_s: Option<f64>,
}

impl TimelineMark {
    /// A window from `start_s` to `end_s`, shaded in every panel.
    pub fn window(label: impl Into<String>, start_s: f64, end_s: f64) -> TimelineMark {
        TimelineMark {
            label: label.into(),
            start_s,
            end_s: Some(end_s),
        }
    }

    /// An instant at `at_s`, drawn as a vertical line in every panel.
    pub fn instant(label: impl Into<String>, at_s: f64) -> TimelineMark {
        TimelineMark {
            label: label.into(),
            start_s: at_s,
            end_s: None,
        }
    }
}

/// Everything the timeline chart shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TimelineChart {
    /// The headline, e.g. the model and the fault.
    pub title: String,
    /// A line of context under the title (seed, bucket size, focus
    /// service); may be empty.
    pub subtitle: String,
    /// One panel per variant, 1 to [`MAX_TIMELINE_PANELS`], stacked top to
    /// bottom in this order. They share the time axis and the requests/s
    /// scale (and the queue scale), so panels compare directly.
    pub panels: Vec<TimelinePanel>,
    /// Windows and instants drawn across all panels, labelled above the
    /// first one.
    pub marks: Vec<TimelineMark>,
}

/// Width of the timeline charts, in pixels. Their height depends on the
/// number of panels (about 270 px per panel plus the header).
pub const TIMELINE_WIDTH: u32 = 1400;

/// How many panels a timeline chart stacks: as many variants as the
/// comparison chart tells apart. Each panel keeps its height, so the chart
/// only grows longer (about 4,500 px for 16), and a reader scrolls.
pub const MAX_TIMELINE_PANELS: usize = MAX_VARIANTS;

/// Height of a panel's main (requests/s) plot.
const PLOT_H: i32 = 168;
/// Height of a panel's queue strip, and the gap above it.
const QUEUE_H: i32 = 50;
const QUEUE_GAP: i32 = 14;
/// Space between one panel's queue strip and the next panel's title.
const PANEL_GAP: i32 = 20;

/// First tries: sky blue; retries: orange. The classic colour-blind-safe
/// pair, light enough as fills for the dark lines to stand out on them.
const FIRST_COLOR: RGBColor = OKABE_ITO[1];
const RETRY_COLOR: RGBColor = OKABE_ITO[0];
/// Opacity of the stacked areas, so the shaded windows and grid show
/// through.
const AREA_ALPHA: f64 = 0.6;
const GOODPUT_COLOR: RGBColor = INK;
/// Okabe–Ito bluish green (#009E73) darkened by a fifth to stand out on the
/// translucent areas: the one hue no other series of the panel has, for
/// answers that are successes but not the real thing.
const DEGRADED_ANSWERS_COLOR: RGBColor = RGBColor(0x00, 0x7E, 0x5C);
/// Vermillion: a limit, distinct from the orange fill by being a dashed
/// line rather than an area.
const CAPACITY_COLOR: RGBColor = OKABE_ITO[5];
/// Reddish purple, for the queue strip: unlike any rate colour.
const QUEUE_COLOR: RGBColor = OKABE_ITO[6];
/// Windows: a light grey that still shows through the translucent areas.
const WINDOW_SHADE: RGBColor = RGBColor(0xE4, 0xE4, 0xE4);
/// The bracket under a window's label.
const WINDOW_BRACKET: RGBColor = RGBColor(0x9A, 0x9A, 0x9A);
/// Instants (rollback): a dark grey dashed vertical line.
const INSTANT_COLOR: RGBColor = RGBColor(0x4A, 0x4A, 0x4A);
/// The bar over a degraded stretch: a storm in Okabe–Ito vermillion (a bar,
/// where capacity is a dashed line), overload in its yellow, darkened to
/// show on white.
const STORM_COLOR: RGBColor = OKABE_ITO[5];
const OVERLOAD_COLOR: RGBColor = RGBColor(0xC8, 0xB4, 0x00);
/// The bar's height, px, and the shade under it.
const DEGRADED_BAR_H: i32 = 6;
const DEGRADED_SHADE_ALPHA: f64 = 0.10;

/// Renders the timeline chart as an SVG document, [`TIMELINE_WIDTH`] wide
/// and as tall as its panels need (about 270 px each).
///
/// Panels are stacked on one time axis and share one requests/s scale (and
/// one queue scale), so a reader sees at a glance where the load rose,
/// whether it came down again, and what brought it down:
///
/// ```text
///            bad deploy  ▼ rollback                  retries off, 30% dropped
///            ├────────┤  ┆                                          ├──┤
/// baseline   metastable — recovered by: retries off, 30% dropped
///        30k ┤   ▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒      retries
/// requests/s ┤   ░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░ ░░░ first tries
///          0 ┼━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ goodput
///        20k ┤   ██████████████████████████████████████████████
///    queue 0 ┼──────────────────────────────────────────────────────
/// retry-budget  recovered 5 s after rollback
/// …
///            0     5     10     15     20     25     30     35     40     45
///                                 time (min)
/// ```
///
/// In each panel the offered load is a stacked area (first tries in sky
/// blue, retries in orange on top, both translucent), goodput a solid
/// near-black line, the answers fallbacks gave (degraded, left out of
/// goodput) a bluish-green line when there are any, and capacity a dashed
/// vermillion line; the queue length has its own thin strip (reddish purple)
/// under the panel, so its very different scale never competes with the
/// rates. Windows are light grey bands through every panel, instants dashed
/// vertical lines, and each is labelled once, above the first panel. A
/// capacity far above the load (over 1.6× its peak) is left out of the
/// scale, with a note in the panel.
///
/// # Long series
///
/// Rates are per bucket, so a series is drawn as steps (each bucket holds
/// its value until the next one starts) while buckets are at least 2 px
/// wide; narrower buckets, whose steps could not be seen, are drawn as one
/// point in the middle of each bucket. Coordinates are whole pixels, and
/// every run of points that falls into the same pixel column is then reduced
/// to at most four: the first, the lowest, the highest and the last, in time
/// order (the "M4" reduction of Jugel et al., VLDB 2014). Unlike averaging
/// or keeping one value per column, this is lossless at the drawn
/// resolution: the reduced line covers the same pixels as the full one, so
/// one-bucket spikes (a retry wave, a synchronised herd) stay fully visible.
/// Points that do not change the drawn path (inside a horizontal or vertical
/// stretch) are dropped too, so a flat series costs a handful of points. A
/// line in a 1,300 px wide plot thus never holds more than about 5,200
/// points however many buckets it has, and ten panels of 3,000 noisy
/// buckets stay under 2 MB (about 1.8 MB when every series is noisy; a
/// typical incident is a tenth of that).
///
/// # Odd data
///
/// Nothing here panics or fails on odd numbers: non-finite times or values
/// are gaps in the lines and areas, negative values are drawn at 0, series
/// of different lengths are each drawn as far as they go together with
/// `t_s` (a missing retry series counts as no retries), and a panel without
/// any value says "no data". The output depends only on `chart`, so the
/// same input gives a byte-identical file.
///
/// # Errors
///
/// [`PlotError::NoVariants`] without panels, [`PlotError::TooManyVariants`]
/// past [`MAX_TIMELINE_PANELS`], and [`PlotError::Font`] /
/// [`PlotError::Drawing`] if plotters fails. Empty, all-zero or non-finite
/// data is drawn as such, never an error.
pub fn render_timeline_svg(chart: &TimelineChart) -> Result<String, PlotError> {
    let n = chart.panels.len();
    PlotError::check_count(n, MAX_TIMELINE_PANELS)?;
    ensure_fonts()?;

    let width = TIMELINE_WIDTH as i32;
    let dts: Vec<f64> = chart.panels.iter().map(|p| bucket_width(&p.t_s)).collect();
    let time = TimeAxis::from_data(
        chart
            .panels
            .iter()
            .zip(&dts)
            .map(|(p, dt)| (&p.t_s[..], *dt)),
        &chart.marks,
    );
    let scales = ValueScales::new(chart);

    // Horizontal layout: the y-axis column is sized for the widest label of
    // either scale, and every plot shares it.
    let labels: Vec<String> = scales
        .rate_ticks
        .iter()
        .chain(&scales.queue_ticks)
        .map(|v| format_rate(*v))
        .collect();
    let plot_left = MARGIN + y_axis_width(&labels, true)?;
    let plot_right = width - MARGIN;
    let xs = time.scale(plot_left, plot_right);

    // Vertical layout.
    let legend = legend_entries(chart);
    let header = Header::layout(
        &chart.title,
        &chart.subtitle,
        &legend,
        SWATCH_W,
        width,
        LEGEND_GAP,
    )?;
    let marks = MarkLayout::new(&chart.marks, &time, &xs, width)?;
    let marks_top = header.bottom;
    let panels_top = marks_top + marks.height();
    let panel_h = panel_title_height() + PLOT_H + QUEUE_GAP + QUEUE_H;
    let n_i32 = n as i32;
    let panels_bottom = panels_top + n_i32 * panel_h + (n_i32 - 1) * PANEL_GAP;
    let height = panels_bottom + x_axis_height() + 16;

    draw_svg((TIMELINE_WIDTH, height as u32), |canvas| {
        header.draw(canvas, &chart.title, &chart.subtitle, &legend, width)?;
        marks.draw(canvas, marks_top, panels_top, panels_bottom)?;

        let mut top = panels_top;
        for (i, (panel, dt)) in chart.panels.iter().zip(&dts).enumerate() {
            let ctx = PanelContext {
                xs: &xs,
                time: &time,
                scales: &scales,
                marks: &marks,
                last: i + 1 == n,
            };
            draw_panel(canvas, top, plot_left, plot_right, panel, *dt, &ctx)?;
            top += panel_h + PANEL_GAP;
        }
        Ok(())
    })
}

/// One line of [`crate::render_lines_svg`] and [`crate::render_load_lines_svg`]: its name,
/// its bucket start times in seconds, and its value in each bucket.
pub type LineSeries = (String, Vec<f64>, Vec<f64>);

/// What the values of a line chart ([`crate::render_lines_svg`]) are, for its
/// y axis and its legend: offered load is a rate per second, zombie requests
/// are a count, and a chart must not write "/s" after a count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineUnit {
    /// The y axis title of the one-panel chart, e.g. `offered requests/s`.
    pub axis_title: String,
    /// The y axis title of each small multiple (past [`MAX_SERIES`] series),
    /// where the axis is shorter: e.g. `requests/s`.
    pub panel_axis_title: String,
    /// Written right after each series' peak in the legend (or panel title):
    /// `/s` for a rate, empty for a count.
    pub peak_suffix: String,
    /// Values are whole numbers (a count of requests): the y axis then has
    /// whole-number ticks only, never "0.5 requests".
    pub whole: bool,
}

impl LineUnit {
    /// Offered requests per second: the unit of `load.svg`.
    pub fn offered_per_second() -> LineUnit {
        LineUnit {
            axis_title: "offered requests/s".into(),
            panel_axis_title: "requests/s".into(),
            peak_suffix: "/s".into(),
            whole: false,
        }
    }

    /// A count of things at an instant, e.g. `zombie requests` alive at each
    /// bucket's start; `axis_title` serves both forms of the chart.
    pub fn count(axis_title: impl Into<String>) -> LineUnit {
        let axis_title = axis_title.into();
        LineUnit {
            panel_axis_title: axis_title.clone(),
            axis_title,
            peak_suffix: String::new(),
            whole: true,
        }
    }

    /// A mean over each bucket of something counted, e.g. `busy cores`:
    /// fractions are real (a core busy half the bucket is 0.5).
    pub fn mean(axis_title: impl Into<String>) -> LineUnit {
        LineUnit {
            whole: false,
            ..LineUnit::count(axis_title)
        }
    }

    /// A series' peak as the legend writes it: `peak 4k/s`, `peak 21.4k`.
    pub(crate) fn peak_label(&self, peak: Option<f64>) -> String {
        peak.map_or("no data".to_string(), |p| {
            format!("peak {}{}", format_rate(p), self.peak_suffix)
        })
    }

    /// Ticks of the value axis from 0 past `max` in at most `intervals`
    /// steps: the ticks, the axis end, and the tick labels (whole numbers
    /// only for whole values).
    pub(crate) fn ticks(&self, max: f64, intervals: usize) -> (Vec<f64>, f64, Vec<String>) {
        let (ticks, end) = if self.whole {
            whole_ticks(max, intervals)
        } else {
            zero_based_ticks(max, intervals)
        };
        let labels = ticks.iter().map(|v| format_rate(*v)).collect();
        (ticks, end, labels)
    }
}

/// The lines chart of [`crate::lines::render_lines_svg`] in one panel, for
/// at most [`MAX_SERIES`] series.
pub(crate) fn render_lines_one_panel(
    title: &str,
    subtitle: &str,
    unit: &LineUnit,
    series: &[LineSeries],
) -> Result<String, PlotError> {
    let n = series.len();
    debug_assert!(n <= MAX_SERIES);
    ensure_fonts()?;

    let width = TIMELINE_WIDTH as i32;
    let LoadSeries {
        dts,
        time,
        peaks,
        max,
    } = LoadSeries::new(series);
    let (ticks, end, labels) = unit.ticks(max, 5);
    let plot_left = MARGIN + y_axis_width(&labels, true)?;
    let plot_right = width - MARGIN;
    let xs = time.scale(plot_left, plot_right);

    let legend: Vec<LegendEntry> = series
        .iter()
        .zip(&peaks)
        .enumerate()
        .map(|(i, ((name, _, _), peak))| LegendEntry {
            swatch: Swatch::Line(series_color(i), 3),
            label: format!("{name} · {}", unit.peak_label(*peak)),
        })
        .collect();
    let header = Header::layout(title, subtitle, &legend, SWATCH_W, width, LEGEND_GAP)?;
    let plot_h = 400;
    let plot = Rect::new(
        plot_left,
        header.bottom + 8,
        plot_right,
        header.bottom + 8 + plot_h,
    );
    let height = plot.bottom + x_axis_height() + 16;

    draw_svg((TIMELINE_WIDTH, height as u32), |canvas| {
        header.draw(canvas, title, subtitle, &legend, width)?;
        let ys = Scale::linear(0.0, end, plot.bottom, plot.top);
        draw_y_axis(
            canvas,
            plot,
            &ys,
            &ticks,
            &format_rate,
            &unit.axis_title,
            MARGIN,
        )?;
        draw_x_axis(
            canvas,
            plot,
            &xs,
            &time.ticks(plot.width()),
            &[],
            &|t| time.label(t),
            &time.title(),
        )?;
        let mut any = false;
        for (i, ((_, t, v), dt)) in series.iter().zip(&dts).enumerate() {
            let paths = pixel_runs(t, *dt, true, &|k| v.get(k).copied(), &xs, &ys);
            for path in paths {
                any |= path.len() > 1;
                polyline(canvas, path, series_color(i), line_width(i, n))?;
            }
        }
        if !any {
            note(canvas, plot, "no data")?;
        }
        Ok(())
    })
}

/// What both forms of the load chart derive from its series before drawing.
pub(crate) struct LoadSeries {
    /// Each series' bucket width, s.
    pub dts: Vec<f64>,
    /// The shared time axis.
    pub time: TimeAxis,
    /// Each series' peak, if it has a value.
    pub peaks: Vec<Option<f64>>,
    /// The highest peak (0 without any).
    pub max: f64,
}

impl LoadSeries {
    pub(crate) fn new(series: &[LineSeries]) -> LoadSeries {
        let dts: Vec<f64> = series.iter().map(|(_, t, _)| bucket_width(t)).collect();
        let time = TimeAxis::from_data(series.iter().zip(&dts).map(|(s, dt)| (&s.1[..], *dt)), &[]);
        let peaks: Vec<Option<f64>> = series
            .iter()
            .map(|(_, t, v)| {
                finite_max(t.iter().zip(v).filter(|(t, _)| t.is_finite()).map(|x| *x.1))
            })
            .collect();
        let max = peaks.iter().flatten().fold(0.0f64, |m, v| m.max(*v));
        LoadSeries {
            dts,
            time,
            peaks,
            max,
        }
    }
}

/// Earlier series get wider lines, drawn first, so where lines coincide
/// every colour still shows as a fringe (as in the comparison chart).
fn line_width(i: usize, n: usize) -> u32 {
    if n <= 1 {
        return 2;
    }
    let extra = ((n - 1 - i) * 3 + (n - 1) / 2) / (n - 1);
    2 + extra as u32
}

// ------------------------------------------------------------ numbers

/// A requests/s number for axis ticks and legends: `0`, `800`, `2.5k`,
/// `25k`, `1.25M`.
pub(crate) fn format_rate(v: f64) -> String {
    let a = v.abs();
    if (999.5..10_000.0).contains(&a) {
        format!("{}k", format_number(v / 1e3))
    } else {
        // `n/a`, plain below 1,000, and k / M / G… from 10,000 up.
        format_compact(v)
    }
}

/// The largest finite value, if any.
fn finite_max(values: impl Iterator<Item = f64>) -> Option<f64> {
    values.filter(|v| v.is_finite()).reduce(f64::max)
}

/// The usual spacing of bucket start times (the median of the positive
/// steps), or 1 s if there is none.
fn bucket_width(t: &[f64]) -> f64 {
    let mut steps: Vec<f64> = t
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|d| d.is_finite() && *d > 0.0)
        .collect();
    if steps.is_empty() {
        return 1.0;
    }
    steps.sort_by(f64::total_cmp);
    steps[steps.len() / 2]
}

// ----------------------------------------------------------- time axis

/// The shared time axis: its range in seconds and the unit it is labelled
/// in (seconds up to 10 minutes, then minutes, then hours past 5 hours).
pub(crate) struct TimeAxis {
    lo: f64,
    hi: f64,
    unit: f64,
    unit_name: &'static str,
}

impl TimeAxis {
    /// From the first bucket start to the end of the last bucket of any
    /// series; marks only set the range when there is no data at all.
    pub(crate) fn from_data<'a>(
        series: impl Iterator<Item = (&'a [f64], f64)>,
        marks: &[TimelineMark],
    ) -> TimeAxis {
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        for (t, dt) in series {
            for t in t.iter().filter(|t| t.is_finite()) {
                lo = lo.min(*t);
                hi = hi.max(t + dt);
            }
        }
        if !(lo.is_finite() && hi.is_finite()) {
            for m in marks {
                for t in [Some(m.start_s), m.end_s].into_iter().flatten() {
                    if t.is_finite() {
                        lo = lo.min(t);
                        hi = hi.max(t);
                    }
                }
            }
            lo = lo.min(0.0);
        }
        let (lo, hi) = if lo.is_finite() && hi.is_finite() && hi > lo {
            (lo, hi)
        } else if lo.is_finite() {
            (lo, lo + 60.0)
        } else {
            (0.0, 60.0)
        };
        let span = hi - lo;
        let (unit, unit_name) = if span <= 600.0 {
            (1.0, "s")
        } else if span <= 5.0 * 3600.0 {
            (60.0, "min")
        } else {
            (3600.0, "h")
        };
        TimeAxis {
            lo,
            hi,
            unit,
            unit_name,
        }
    }

    pub(crate) fn scale(&self, left: i32, right: i32) -> Scale {
        Scale::linear(self.lo, self.hi, left, right)
    }

    /// Tick times in seconds, at 1-2-5 steps of the display unit, about one
    /// per 100 px.
    pub(crate) fn ticks(&self, width_px: i32) -> Vec<f64> {
        let lo = self.lo / self.unit;
        let hi = self.hi / self.unit;
        let step = nice_step(hi - lo, (width_px / 100).max(2) as usize);
        let first = (lo / step - 1e-9).ceil() as i64;
        let last = (hi / step + 1e-9).floor() as i64;
        (first..=last)
            .take(200)
            .map(|k| tidy(k as f64 * step) * self.unit)
            .collect()
    }

    pub(crate) fn label(&self, t_s: f64) -> String {
        format_number(tidy(t_s / self.unit))
    }

    pub(crate) fn title(&self) -> String {
        format!("time ({})", self.unit_name)
    }

    /// Whether `t` (seconds) is on the axis.
    fn contains(&self, t: f64) -> bool {
        t >= self.lo && t <= self.hi
    }
}

/// Removes floating-point dust (0.30000000000000004 → 0.3).
fn tidy(v: f64) -> f64 {
    let r = (v * 1e9).round() / 1e9;
    if r == 0.0 {
        0.0
    } else {
        r
    }
}

// -------------------------------------------------------- value scales

/// The scales shared by all panels: requests/s and queue length.
struct ValueScales {
    rate_ticks: Vec<f64>,
    rate_end: f64,
    queue_ticks: Vec<f64>,
    queue_end: f64,
    /// Capacity above this is not drawn (it would flatten the load).
    capacity_limit: f64,
    /// Capacity is above the axis somewhere: say so rather than hide it.
    capacity_off_scale: Option<f64>,
}

impl ValueScales {
    fn new(chart: &TimelineChart) -> ValueScales {
        let mut load: f64 = 0.0;
        let mut capacity: f64 = 0.0;
        let mut queue: f64 = 0.0;
        for p in &chart.panels {
            let n = p.t_s.len();
            let total = p
                .offered_first
                .iter()
                .zip(&p.offered_retry)
                .take(n)
                .map(|(f, r)| f.max(0.0) + r.max(0.0));
            let first = p.offered_first.iter().take(n).copied();
            let good = p.goodput.iter().take(n).copied();
            let degraded = p.degraded_answers.iter().take(n).copied();
            if let Some(m) = finite_max(total.chain(first).chain(good).chain(degraded)) {
                load = load.max(m);
            }
            if let Some(c) = &p.capacity {
                if let Some(m) = finite_max(c.iter().take(n).copied()) {
                    capacity = capacity.max(m);
                }
            }
            if let Some(m) = finite_max(p.queue.iter().take(n).copied()) {
                queue = queue.max(m);
            }
        }
        // Capacity is part of the picture when it is within reach of the
        // load; a capacity far above the load (an idle service) would only
        // squash the load into the bottom of the panel.
        let capacity_in_view = capacity > 0.0 && (load == 0.0 || capacity <= 1.6 * load);
        let wanted = if capacity_in_view {
            load.max(capacity)
        } else {
            load
        };
        let (rate_ticks, rate_end) = zero_based_ticks(wanted, 5);
        let (queue_ticks, queue_end) = zero_based_ticks(queue, 1);
        ValueScales {
            rate_ticks,
            rate_end,
            queue_ticks,
            queue_end,
            capacity_limit: rate_end,
            capacity_off_scale: (capacity > rate_end).then_some(capacity),
        }
    }
}

// ------------------------------------------------------- pixel series

/// A series in pixels: one polyline per run of consecutive buckets that
/// have a finite time and value (`value(i)` is `None` for a missing value),
/// each reduced per pixel column as described under "Long series" in
/// [`render_timeline_svg`].
///
/// With `steps`, bucket `i` holds its value from `t[i]` to the next bucket
/// start (at most `dt` later), or is one point in the middle of that if
/// buckets are narrower than 2 px; otherwise points are joined by straight
/// lines (for samples taken at an instant, such as a queue length).
pub(crate) fn pixel_runs(
    t: &[f64],
    dt: f64,
    steps: bool,
    value: &dyn Fn(usize) -> Option<f64>,
    xs: &Scale,
    ys: &Scale,
) -> Vec<Vec<(i32, i32)>> {
    let bucket_px = dt / (xs.hi - xs.lo) * f64::from(xs.p1 - xs.p0);
    let midpoints = steps && bucket_px.abs() < 2.0;
    let mut runs = Vec::new();
    let mut raw: Vec<(i32, i32)> = Vec::new();
    for (i, &t0) in t.iter().enumerate() {
        let v = if t0.is_finite() {
            value(i).filter(|v| v.is_finite())
        } else {
            None
        };
        let Some(v) = v else {
            if !raw.is_empty() {
                runs.push(reduce_columns(&raw));
                raw.clear();
            }
            continue;
        };
        let y = ys.map(v.max(0.0));
        let next = t.get(i + 1).copied().filter(|n| n.is_finite() && *n > t0);
        let end = next.map_or(t0 + dt, |n| n.min(t0 + dt));
        if midpoints {
            raw.push((xs.map((t0 + end) / 2.0), y));
        } else {
            raw.push((xs.map(t0), y));
            if steps {
                raw.push((xs.map(end), y));
            }
        }
    }
    if !raw.is_empty() {
        runs.push(reduce_columns(&raw));
    }
    // A lone point (one sample between gaps) would draw nothing: make it a
    // short dash so it stays visible.
    for run in &mut runs {
        if let [(x, y)] = run[..] {
            *run = vec![(x - 1, y), (x + 1, y)];
        }
    }
    runs
}

/// Keeps, of each run of points in one pixel column, the first, the lowest,
/// the highest and the last (in their original order), and drops points
/// that lie inside a straight horizontal or vertical stretch. The drawn
/// path covers the same pixels as the full one.
pub(crate) fn reduce_columns(points: &[(i32, i32)]) -> Vec<(i32, i32)> {
    let mut out: Vec<(i32, i32)> = Vec::new();
    let mut start = 0;
    while start < points.len() {
        let x = points[start].0;
        let len = points[start..].iter().take_while(|p| p.0 == x).count();
        let column = &points[start..start + len];
        let (mut lowest, mut highest) = (0, 0);
        for (k, p) in column.iter().enumerate() {
            if p.1 < column[lowest].1 {
                lowest = k;
            }
            if p.1 > column[highest].1 {
                highest = k;
            }
        }
        let mut keep = [0, lowest, highest, len - 1];
        keep.sort_unstable();
        let mut previous = None;
        for k in keep {
            if previous != Some(k) {
                push_simplified(&mut out, column[k]);
                previous = Some(k);
            }
        }
        start += len;
    }
    out
}

/// Appends `p`, first dropping the last point if it lies on the straight
/// horizontal or vertical segment from the one before it to `p`.
fn push_simplified(path: &mut Vec<(i32, i32)>, p: (i32, i32)) {
    if path.last() == Some(&p) {
        return;
    }
    if let [.., a, b] = path.as_slice() {
        let between = |lo: i32, mid: i32, hi: i32| mid >= lo.min(hi) && mid <= lo.max(hi);
        let vertical = a.0 == b.0 && b.0 == p.0 && between(a.1, b.1, p.1);
        let horizontal = a.1 == b.1 && b.1 == p.1 && between(a.0, b.0, p.0);
        if vertical || horizontal {
            if let Some(last) = path.last_mut() {
                *last = p;
            }
            return;
        }
    }
    path.push(p);
}

/// The area under a run, down to `base`.
fn area_under(run: &[(i32, i32)], base: i32) -> Vec<(i32, i32)> {
    let (Some(first), Some(last)) = (run.first(), run.last()) else {
        return Vec::new();
    };
    let mut points = run.to_vec();
    points.push((last.0, base));
    points.push((first.0, base));
    points
}

/// The band between two runs over the same buckets.
pub(crate) fn band(upper: &[(i32, i32)], lower: &[(i32, i32)]) -> Vec<(i32, i32)> {
    upper
        .iter()
        .copied()
        .chain(lower.iter().rev().copied())
        .collect()
}

// -------------------------------------------------------------- header

/// What a legend entry's swatch looks like.
#[derive(Clone, Copy)]
pub(crate) enum Swatch {
    /// A translucent filled square, as the stacked areas.
    Area(RGBColor),
    /// A short solid line of the given width.
    Line(RGBColor, u32),
    /// A short dashed line.
    Dashed(RGBColor),
    /// A solid bar with a darker outline, as the bars of the wasted-work
    /// chart.
    Bar(RGBColor),
}

pub(crate) struct LegendEntry {
    pub swatch: Swatch,
    pub label: String,
}

pub(crate) const SWATCH_W: i32 = 28;

/// Whether fallbacks answered some of the panel's requests, in the buckets
/// it draws.
fn has_degraded_answers(panel: &TimelinePanel) -> bool {
    (panel.degraded_answers.iter())
        .take(panel.t_s.len())
        .any(|v| v.is_finite() && *v > 0.0)
}

fn legend_entries(chart: &TimelineChart) -> Vec<LegendEntry> {
    let fallbacks = chart.panels.iter().any(has_degraded_answers);
    let mut entries = vec![
        LegendEntry {
            swatch: Swatch::Area(FIRST_COLOR),
            label: "offered: first tries".into(),
        },
        LegendEntry {
            swatch: Swatch::Area(RETRY_COLOR),
            label: "offered: retries (stacked on top)".into(),
        },
        LegendEntry {
            swatch: Swatch::Line(GOODPUT_COLOR, 2),
            // With fallbacks, goodput leaves out what they answered.
            label: if fallbacks {
                "goodput (requests answered in full)"
            } else {
                "goodput (successful requests)"
            }
            .into(),
        },
    ];
    if fallbacks {
        entries.push(LegendEntry {
            swatch: Swatch::Line(DEGRADED_ANSWERS_COLOR, 2),
            label: "degraded answers/s (fallbacks)".into(),
        });
    }
    if chart.panels.iter().any(|p| p.capacity.is_some()) {
        entries.push(LegendEntry {
            swatch: Swatch::Dashed(CAPACITY_COLOR),
            label: "capacity".into(),
        });
    }
    entries.push(LegendEntry {
        swatch: Swatch::Area(QUEUE_COLOR),
        label: "in flight: queued + in service (strip under each panel)".into(),
    });
    let spans = || chart.panels.iter().flat_map(|p| &p.degraded);
    if spans().any(|s| !s.overload) {
        entries.push(LegendEntry {
            swatch: Swatch::Line(STORM_COLOR, 6),
            label: "judged degraded by the verdict (bar on top)".into(),
        });
    }
    if spans().any(|s| s.overload) {
        entries.push(LegendEntry {
            swatch: Swatch::Line(OVERLOAD_COLOR, 6),
            label: "overloaded: degraded without the trigger too".into(),
        });
    }
    entries
}

/// Space above the legend, px.
pub(crate) const LEGEND_GAP: i32 = 12;

impl LegendItem for LegendEntry {
    fn label(&self) -> &str {
        &self.label
    }

    fn draw_swatch(&self, canvas: &Canvas<'_>, x: i32, cy: i32) -> Result<(), PlotError> {
        match self.swatch {
            Swatch::Area(c) => {
                fill_rect(canvas, (x, cy - 8), (x + SWATCH_W, cy + 8), BACKGROUND)?;
                fill_polygon(
                    canvas,
                    vec![
                        (x, cy - 8),
                        (x + SWATCH_W, cy - 8),
                        (x + SWATCH_W, cy + 8),
                        (x, cy + 8),
                    ],
                    c.mix(AREA_ALPHA),
                )
            }
            Swatch::Line(c, w) => polyline(canvas, vec![(x, cy), (x + SWATCH_W, cy)], c, w),
            Swatch::Dashed(c) => {
                dashed_polyline(canvas, &[(x, cy), (x + SWATCH_W, cy)], c, 2, 7, 4)
            }
            Swatch::Bar(c) => patterned_bar(
                canvas,
                (x, cy - 8),
                (x + SWATCH_W, cy + 8),
                c,
                darken(c, 0.3),
                false,
            ),
        }
    }
}

// --------------------------------------------------------------- marks

/// A mark in pixels: where it is and where its label goes.
struct PlacedMark {
    /// Start (or the instant) and, for a window, its end (> start).
    x0: i32,
    x1: Option<i32>,
    label: String,
    label_left: i32,
    label_w: i32,
    /// Label row, 0 being the one nearest the plots.
    row: usize,
}

/// The marks above the first panel: labels packed into as few rows as
/// keep them from touching, each above a bracket spanning its window (or a
/// tick at its instant).
struct MarkLayout {
    marks: Vec<PlacedMark>,
    rows: usize,
}

const MARK_ROW_H: i32 = 26;
const MAX_MARK_ROWS: usize = 6;

impl MarkLayout {
    fn new(
        marks: &[TimelineMark],
        time: &TimeAxis,
        xs: &Scale,
        width: i32,
    ) -> Result<MarkLayout, PlotError> {
        let spec = mark_spec();
        let mut placed: Vec<PlacedMark> = Vec::new();
        // Place left to right (ties in input order), so rows fill like text.
        let mut order: Vec<(f64, usize)> = marks
            .iter()
            .enumerate()
            .filter(|(_, m)| m.start_s.is_finite())
            .map(|(i, m)| (m.start_s, i))
            .collect();
        order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        for (_, i) in order {
            let m = &marks[i];
            let end = m.end_s.filter(|e| e.is_finite());
            let (x0, x1) = match end {
                Some(e) => {
                    let (a, b) = (m.start_s.min(e), m.start_s.max(e));
                    if b < time.lo || a > time.hi {
                        continue;
                    }
                    let (x0, x1) = (xs.map(a), xs.map(b));
                    (x0, Some(x1.max(x0 + 1)))
                }
                None => {
                    if !time.contains(m.start_s) {
                        continue;
                    }
                    (xs.map(m.start_s), None)
                }
            };
            let label = spec.fit(&m.label, (width - 2 * MARGIN) / 2)?;
            let label_w = spec.width(&label)?;
            let center = x1.map_or(x0, |x1| (x0 + x1) / 2);
            let label_left = (center - label_w / 2)
                .min(width - MARGIN - label_w)
                .max(MARGIN);
            let (l, r) = (label_left, label_left + label_w);
            // The first row where the label touches no other label, its
            // instant line crosses no label below it, and no instant line
            // from a row above crosses it.
            let fits = |row: usize| {
                placed.iter().all(|p| {
                    let (pl, pr) = (p.label_left, p.label_left + p.label_w);
                    let apart = r + 12 <= pl || pr + 12 <= l;
                    let same_row_ok = p.row != row || apart;
                    let my_line_ok = x1.is_some() || p.row >= row || x0 < pl || x0 > pr;
                    let their_line_ok = p.x1.is_some() || p.row <= row || p.x0 < l || p.x0 > r;
                    same_row_ok && my_line_ok && their_line_ok
                })
            };
            let relaxed = |row: usize| {
                placed.iter().all(|p| {
                    p.row != row || p.label_left + p.label_w + 12 <= l || r + 12 <= p.label_left
                })
            };
            // Crowded: accept a line through a label rather than text over
            // text; failing that, leave the label out (the mark stays).
            let row = (0..MAX_MARK_ROWS)
                .find(|r| fits(*r))
                .or_else(|| (0..MAX_MARK_ROWS).find(|r| relaxed(*r)));
            let (row, label, label_w) = match row {
                Some(row) => (row, label, label_w),
                None => (0, String::new(), 0),
            };
            placed.push(PlacedMark {
                x0,
                x1,
                label,
                label_left,
                label_w,
                row,
            });
        }
        let rows = placed.iter().map(|p| p.row + 1).max().unwrap_or(0);
        Ok(MarkLayout {
            marks: placed,
            rows,
        })
    }

    /// Height of the marks area above the first panel.
    fn height(&self) -> i32 {
        if self.rows == 0 {
            0
        } else {
            self.rows as i32 * MARK_ROW_H + 6
        }
    }

    /// Labels, brackets and ticks; each window's shading from its bracket
    /// down to `bottom` (the bottom of the last panel), one continuous band
    /// so label and window connect; and each instant's line down to
    /// `panels_top` (panels draw it in their plots, over their data, but not
    /// through their title lines).
    fn draw(
        &self,
        canvas: &Canvas<'_>,
        top: i32,
        panels_top: i32,
        bottom: i32,
    ) -> Result<(), PlotError> {
        let spec = mark_spec();
        let row_top = |row: usize| top + (self.rows - 1 - row) as i32 * MARK_ROW_H;
        // Shading first, under every label.
        for m in &self.marks {
            let bracket_y = row_top(m.row) + line_height(size::VALUE) + 2;
            if let Some(x1) = m.x1 {
                fill_rect(canvas, (m.x0, bracket_y), (x1, bottom), WINDOW_SHADE)?;
            }
        }
        for m in &self.marks {
            let y = row_top(m.row);
            let bracket_y = y + line_height(size::VALUE) + 2;
            spec.draw(canvas, &m.label, (m.label_left, y))?;
            match m.x1 {
                Some(x1) => {
                    fill_rect(
                        canvas,
                        (m.x0, bracket_y),
                        (x1, bracket_y + 3),
                        WINDOW_BRACKET,
                    )?;
                    for x in [m.x0, x1 - 1] {
                        line(
                            canvas,
                            (x, bracket_y - 3),
                            (x, bracket_y + 3),
                            WINDOW_BRACKET,
                        )?;
                    }
                }
                None => {
                    fill_polygon(
                        canvas,
                        vec![
                            (m.x0 - 5, bracket_y - 3),
                            (m.x0 + 6, bracket_y - 3),
                            (m.x0, bracket_y + 4),
                        ],
                        INSTANT_COLOR.mix(1.0),
                    )?;
                    instant_line(canvas, m.x0, bracket_y + 4, panels_top)?;
                }
            }
        }
        Ok(())
    }
}

/// The dashed vertical line of an instant from `y0` to `y1`. Dashes are
/// aligned to absolute pixel rows, so the pieces drawn in each plot line up
/// like one line.
fn instant_line(canvas: &Canvas<'_>, x: i32, y0: i32, y1: i32) -> Result<(), PlotError> {
    const DASH: i32 = 4;
    const PERIOD: i32 = 7;
    let mut k = y0.div_euclid(PERIOD);
    while k * PERIOD < y1 {
        let (a, b) = ((k * PERIOD).max(y0), (k * PERIOD + DASH).min(y1));
        if b > a {
            line(canvas, (x, a), (x, b), INSTANT_COLOR)?;
        }
        k += 1;
    }
    Ok(())
}

fn mark_spec() -> TextSpec {
    TextSpec::new(size::VALUE, INK)
}

// -------------------------------------------------------------- panels

fn panel_title_height() -> i32 {
    line_height(size::PANEL_TITLE) + 6
}

struct PanelContext<'a> {
    xs: &'a Scale,
    time: &'a TimeAxis,
    scales: &'a ValueScales,
    marks: &'a MarkLayout,
    /// The bottom panel carries the time axis labels.
    last: bool,
}

fn draw_panel(
    canvas: &Canvas<'_>,
    top: i32,
    plot_left: i32,
    plot_right: i32,
    panel: &TimelinePanel,
    dt: f64,
    ctx: &PanelContext<'_>,
) -> Result<(), PlotError> {
    // Title line: the name in bold, the verdict after it.
    let name_spec = TextSpec::new(size::PANEL_TITLE, INK)
        .bold()
        .anchor(HPos::Left, VPos::Bottom);
    let baseline = top + line_height(size::PANEL_TITLE) - 2;
    let name = name_spec.fit(&panel.name, (plot_right - MARGIN) / 2)?;
    name_spec.draw(canvas, &name, (MARGIN, baseline))?;
    if let Some(verdict) = panel.verdict.as_deref().filter(|v| !v.is_empty()) {
        let x = MARGIN + name_spec.width(&name)? + 14;
        let spec = TextSpec::new(size::SUBTITLE, INK).anchor(HPos::Left, VPos::Bottom);
        let verdict = spec.fit(verdict, plot_right - x)?;
        spec.draw(canvas, &verdict, (x, baseline - 1))?;
    }

    let plot_top = top + panel_title_height();
    let plot = Rect::new(plot_left, plot_top, plot_right, plot_top + PLOT_H);
    let strip_top = plot.bottom + QUEUE_GAP;
    let strip = Rect::new(plot_left, strip_top, plot_right, strip_top + QUEUE_H);
    let xs = ctx.xs;
    let scales = ctx.scales;
    let ys = Scale::linear(0.0, scales.rate_end, plot.bottom, plot.top);
    let qs = Scale::linear(0.0, scales.queue_end, strip.bottom, strip.top);

    // Background (the windows are already shaded): grid and axes.
    let ticks = ctx.time.ticks(plot.width());
    for t in &ticks {
        let x = xs.map(*t);
        line(canvas, (x, plot.top), (x, plot.bottom), GRID)?;
        if !ctx.last {
            line(canvas, (x, strip.top), (x, strip.bottom), GRID)?;
        }
    }
    if ctx.last {
        draw_x_axis(
            canvas,
            strip,
            xs,
            &ticks,
            &[],
            &|t| ctx.time.label(t),
            &ctx.time.title(),
        )?;
    }
    draw_y_axis(
        canvas,
        plot,
        &ys,
        &scales.rate_ticks,
        &format_rate,
        "requests/s",
        MARGIN,
    )?;
    draw_y_axis(
        canvas,
        strip,
        &qs,
        &scales.queue_ticks,
        &format_rate,
        "",
        MARGIN,
    )?;
    TextSpec::new(size::TICK, MUTED_INK)
        .anchor(HPos::Center, VPos::Top)
        .upward()
        .draw(canvas, "in flight", (MARGIN, strip.center_y()))?;

    // Offered load: first tries, and retries stacked on them. A bucket is
    // drawn where both are known (a missing retry series counts as none).
    let n = panel.t_s.len();
    let first = |i: usize| -> Option<f64> {
        let f = panel.offered_first.get(i).copied()?;
        let r = if panel.offered_retry.is_empty() {
            0.0
        } else {
            panel.offered_retry.get(i).copied()?
        };
        (f.is_finite() && r.is_finite()).then_some(f.max(0.0))
    };
    let total = |i: usize| -> Option<f64> {
        let f = first(i)?;
        let r = panel.offered_retry.get(i).copied().unwrap_or(0.0);
        Some(f + r.max(0.0))
    };
    let first_runs = pixel_runs(&panel.t_s, dt, true, &first, xs, &ys);
    let total_runs = pixel_runs(&panel.t_s, dt, true, &total, xs, &ys);
    let mut any = false;
    for (f, t) in first_runs.iter().zip(&total_runs) {
        any = true;
        fill_polygon(
            canvas,
            area_under(f, plot.bottom),
            FIRST_COLOR.mix(AREA_ALPHA),
        )?;
        fill_polygon(canvas, band(t, f), RETRY_COLOR.mix(AREA_ALPHA))?;
    }

    // Degraded stretches: a bar along the top and a faint shade under it.
    for span in &panel.degraded {
        let (x0, x1) = (xs.map(span.from_s), xs.map(span.to_s.max(span.from_s)));
        let (x0, x1) = (
            x0.clamp(plot.left, plot.right),
            x1.clamp(plot.left, plot.right),
        );
        if x1 <= x0 {
            continue;
        }
        let color = if span.overload {
            OVERLOAD_COLOR
        } else {
            STORM_COLOR
        };
        fill_polygon(
            canvas,
            vec![
                (x0, plot.top),
                (x1, plot.top),
                (x1, plot.bottom),
                (x0, plot.bottom),
            ],
            color.mix(DEGRADED_SHADE_ALPHA),
        )?;
        fill_rect(
            canvas,
            (x0, plot.top),
            (x1, plot.top + DEGRADED_BAR_H),
            color,
        )?;
    }

    // Queue strip.
    let queue = |i: usize| panel.queue.get(i).copied();
    for run in pixel_runs(&panel.t_s, dt, false, &queue, xs, &qs) {
        any = true;
        fill_polygon(
            canvas,
            area_under(&run, strip.bottom),
            QUEUE_COLOR.mix(0.45),
        )?;
        polyline(canvas, run, darken(QUEUE_COLOR, 0.25), 1)?;
    }

    // Instants over the areas, under the lines.
    for m in ctx.marks.marks.iter().filter(|m| m.x1.is_none()) {
        for r in [plot, strip] {
            instant_line(canvas, m.x0, r.top, r.bottom)?;
        }
    }

    if let Some(capacity) = &panel.capacity {
        let limit = scales.capacity_limit;
        let value = |i: usize| capacity.get(i).copied().filter(|c| *c <= limit);
        for run in pixel_runs(&panel.t_s, dt, true, &value, xs, &ys) {
            any = true;
            dashed_polyline(canvas, &run, CAPACITY_COLOR, 2, 8, 5)?;
        }
    }
    // Under goodput, which is the line that must read first.
    if has_degraded_answers(panel) {
        let degraded = |i: usize| panel.degraded_answers.get(i).copied();
        for run in pixel_runs(&panel.t_s, dt, true, &degraded, xs, &ys) {
            any = true;
            polyline(canvas, run, DEGRADED_ANSWERS_COLOR, 2)?;
        }
    }
    let good = |i: usize| panel.goodput.get(i).copied();
    for run in pixel_runs(&panel.t_s, dt, true, &good, xs, &ys) {
        any = true;
        polyline(canvas, run, GOODPUT_COLOR, 2)?;
    }

    // Baselines over the data.
    line(
        canvas,
        (plot.left, plot.bottom),
        (plot.right, plot.bottom),
        AXIS,
    )?;
    line(
        canvas,
        (strip.left, strip.bottom),
        (strip.right, strip.bottom),
        AXIS,
    )?;
    if let (Some(c), true) = (scales.capacity_off_scale, panel.capacity.is_some()) {
        TextSpec::new(size::VALUE, CAPACITY_COLOR)
            .anchor(HPos::Right, VPos::Top)
            .draw(
                canvas,
                &format!("capacity up to {}/s: above the scale", format_rate(c)),
                (plot.right - 6, plot.top + 4),
            )?;
    }
    if !any || n == 0 {
        note(canvas, plot, "no data")?;
    }
    Ok(())
}
