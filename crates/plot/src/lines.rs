//! The lines chart (values over time, one line per series: offered load
//! per variant, zombie requests per variant): one panel of lines up to
//! [`MAX_SERIES`] series ([`crate::timeline`]), small multiples past it
//! (see `load_grid.rs`). Above both, so that neither names the other.

use crate::load_grid::render_load_grid_svg;
use crate::style::{MAX_SERIES, MAX_VARIANTS};
use crate::timeline::{render_lines_one_panel, LineSeries, LineUnit};
use crate::PlotError;

/// Renders offered load over time, one line per series, in one panel: e.g.
/// a thundering herd under different jitter modes. Each series is `(name,
/// bucket start times in seconds, offered requests per second)`; the legend
/// gives each one's peak, since peaks are what such a chart compares.
///
/// This is [`render_lines_svg`] in [`LineUnit::offered_per_second`]; see it
/// for the layout, the small multiples past [`MAX_SERIES`] series and the
/// errors.
pub fn render_load_lines_svg(
    title: &str,
    subtitle: &str,
    series: &[LineSeries],
) -> Result<String, PlotError> {
    render_lines_svg(title, subtitle, &LineUnit::offered_per_second(), series)
}

/// Renders values over time, one line per series, in one panel: offered
/// load per variant ([`render_load_lines_svg`]), zombie requests per
/// variant. Each series is `(name, bucket start times in seconds, values)`,
/// the values in `unit`; the legend gives each one's peak, since peaks are
/// what such a chart compares.
///
/// Same conventions as [`crate::render_timeline_svg`]: [`crate::TIMELINE_WIDTH`] wide
/// (and about 550 px high), deterministic, time labelled in s, min or h
/// depending on the span, long series reduced without losing spikes, odd
/// values drawn as gaps. Series `i` has colour [`crate::style::series_color`]`(i)`, and earlier
/// series are drawn with wider lines underneath later ones, so coinciding
/// lines still show every colour.
///
/// Past [`MAX_SERIES`] series, where colours would repeat and the lines
/// would bury each other, the chart is small multiples instead: one panel
/// per series, over a grey band that spans them all (see `load_grid.rs`).
///
/// # Errors
///
/// [`PlotError::NoVariants`] without series, [`PlotError::TooManyVariants`]
/// past [`MAX_VARIANTS`] (panel swatches would repeat), [`PlotError::Font`] /
/// [`PlotError::Drawing`] if plotters fails.
pub fn render_lines_svg(
    title: &str,
    subtitle: &str,
    unit: &LineUnit,
    series: &[LineSeries],
) -> Result<String, PlotError> {
    PlotError::check_count(series.len(), MAX_VARIANTS)?;
    if series.len() > MAX_SERIES {
        render_load_grid_svg(title, subtitle, unit, series)
    } else {
        render_lines_one_panel(title, subtitle, unit, series)
    }
}
