//! Offered load (or any other [`LineUnit`]) as small multiples: one small
//! panel per series, for more series than one panel of coloured lines can
//! keep apart.
//!
//! Past [`MAX_SERIES`](crate::style::MAX_SERIES) lines, colours repeat and the lines of a storm pile up
//! on each other, so [`render_lines_svg`](crate::render_lines_svg)
//! draws this instead: panels in two columns, each titled with its series'
//! name and peak, its line in the series' colour over a grey band that spans
//! every series at each moment. A reader finds a variant by its name, not its
//! colour, and still sees where it stands among the others. All panels share
//! the time axis and the value scale (requests/s for offered load).

use plotters::style::text_anchor::{HPos, VPos};
use plotters::style::{Color, RGBColor};

use crate::axes::{draw_x_axis, draw_y_axis, x_axis_height, y_axis_width, Scale};
use crate::canvas::{
    draw_svg, fill_polygon, line_height, patterned_bar, polyline, Canvas, Rect, TextSpec, MARGIN,
};
use crate::header::{note, Header};
use crate::style::{darken, ensure_fonts, luminance, series_color, series_striped, size, INK};
use crate::timeline::{
    band, format_rate, pixel_runs, LegendEntry, LineSeries, LineUnit, LoadSeries, Swatch,
    LEGEND_GAP, SWATCH_W, TIMELINE_WIDTH,
};
use crate::PlotError;

/// Panels side by side.
const COLUMNS: usize = 2;
/// Space between the columns.
const COLUMN_GAP: i32 = 40;
/// Height of each panel's plot.
const PLOT_H: i32 = 120;
/// Space between a row's tick labels and the next row's titles.
const ROW_GAP: i32 = 14;
/// The band of all series: light enough that every line reads on it.
const BAND: RGBColor = RGBColor(0xC8, 0xC8, 0xC8);
const BAND_ALPHA: f64 = 0.6;
/// Colours lighter than this (relative luminance; Okabe–Ito's yellow is
/// 0.77, its next lightest 0.44) get a dark edge as lines.
const PALE: f64 = 0.6;

/// Renders `series` (`(name, bucket start times in s, values in `unit`)`) as
/// small multiples; see the module's documentation. Deterministic like every
/// chart.
pub(crate) fn render_load_grid_svg(
    title: &str,
    subtitle: &str,
    unit: &LineUnit,
    series: &[LineSeries],
) -> Result<String, PlotError> {
    ensure_fonts()?;
    let n = series.len();
    let width = TIMELINE_WIDTH as i32;
    let LoadSeries {
        dts,
        time,
        peaks,
        max,
    } = LoadSeries::new(series);
    let (ticks, end, labels) = unit.ticks(max, 3);
    let axis_w = y_axis_width(&labels, true)?;

    let legend = [LegendEntry {
        swatch: Swatch::Area(BAND),
        label: "grey band: from the lowest to the highest variant at each moment".into(),
    }];
    let header = Header::layout(title, subtitle, &legend, SWATCH_W, width, LEGEND_GAP)?;
    let title_h = line_height(size::AXIS_TITLE) + 8;
    let ticks_h = 8 + line_height(size::TICK) + 4;
    let rows = n.div_ceil(COLUMNS) as i32;
    let row_h = title_h + PLOT_H + ticks_h + ROW_GAP;
    let height = header.bottom + rows * row_h + (x_axis_height() - ticks_h) + 16;
    let cell_w = (width - 2 * MARGIN - COLUMN_GAP * (COLUMNS as i32 - 1)) / COLUMNS as i32;

    draw_svg((TIMELINE_WIDTH, height as u32), |canvas| {
        header.draw(canvas, title, subtitle, &legend, width)?;
        for (i, ((name, t, v), dt)) in series.iter().zip(&dts).enumerate() {
            let (row, column) = ((i / COLUMNS) as i32, (i % COLUMNS) as i32);
            let left = MARGIN + column * (cell_w + COLUMN_GAP);
            let top = header.bottom + row * row_h;
            let plot = Rect::new(
                left + axis_w,
                top + title_h,
                left + cell_w,
                top + title_h + PLOT_H,
            );
            let peak = unit.peak_label(peaks[i]);
            draw_cell_title(canvas, (left, top), i, &format!("{name} · {peak}"), cell_w)?;
            let xs = time.scale(plot.left, plot.right);
            let ys = Scale::linear(0.0, end, plot.bottom, plot.top);
            draw_y_axis(
                canvas,
                plot,
                &ys,
                &ticks,
                &format_rate,
                &unit.panel_axis_title,
                left,
            )?;
            // The axis title once, under the last row of each column.
            let last_in_column = i + COLUMNS >= n;
            let axis_title = if last_in_column {
                time.title()
            } else {
                String::new()
            };
            draw_x_axis(
                canvas,
                plot,
                &xs,
                &time.ticks(plot.width()),
                &[],
                &|t| time.label(t),
                &axis_title,
            )?;
            draw_band(canvas, series, &dts, &xs, &ys)?;
            let mut any = false;
            let color = series_color(i);
            for path in pixel_runs(t, *dt, true, &|k| v.get(k).copied(), &xs, &ys) {
                any |= path.len() > 1;
                // Yellow alone, thin, vanishes on white and on the band:
                // give pale colours a dark edge.
                if luminance(color) > PALE {
                    polyline(canvas, path.clone(), darken(color, 0.45), 4)?;
                }
                polyline(canvas, path, color, 2)?;
            }
            if !any {
                note(canvas, plot, "no data")?;
            }
        }
        Ok(())
    })
}

/// A panel's title: the series' swatch (as in the comparison chart's key,
/// striped for the second round of colours) and its name and peak.
fn draw_cell_title(
    canvas: &Canvas<'_>,
    (left, top): (i32, i32),
    i: usize,
    text: &str,
    width: i32,
) -> Result<(), PlotError> {
    let spec = TextSpec::new(size::AXIS_TITLE, INK)
        .bold()
        .anchor(HPos::Left, VPos::Center);
    let center = top + line_height(size::AXIS_TITLE) / 2;
    let color = series_color(i);
    patterned_bar(
        canvas,
        (left, center - 7),
        (left + 14, center + 7),
        color,
        darken(color, 0.3),
        series_striped(i),
    )?;
    spec.draw(canvas, &spec.fit(text, width - 22)?, (left + 22, center))
}

/// The grey band from the lowest to the highest series at each bucket (of
/// the series that have that bucket), under a panel's own line.
fn draw_band(
    canvas: &Canvas<'_>,
    series: &[LineSeries],
    dts: &[f64],
    xs: &Scale,
    ys: &Scale,
) -> Result<(), PlotError> {
    let Some(((_, t, _), dt)) = series.iter().zip(dts).max_by_key(|((_, t, _), _)| t.len()) else {
        return Ok(());
    };
    let at = |k: usize| {
        series
            .iter()
            .filter(move |(_, ts, _)| ts.get(k) == t.get(k))
            .filter_map(move |(_, _, v)| v.get(k).copied().filter(|x| x.is_finite()))
    };
    let upper = pixel_runs(t, *dt, true, &|k| at(k).reduce(f64::max), xs, ys);
    let lower = pixel_runs(t, *dt, true, &|k| at(k).reduce(f64::min), xs, ys);
    for (up, low) in upper.iter().zip(&lower) {
        fill_polygon(canvas, band(up, low), BAND.mix(BAND_ALPHA))?;
    }
    Ok(())
}
