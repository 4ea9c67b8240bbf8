//! SVG charts for stormsim results.
//!
//! Charts are drawn with plotters' SVG backend and returned as a `String`, so
//! the caller decides where and how (atomically) to write them. Text is
//! measured with DejaVu Sans embedded in the binary, never with system
//! fonts, and nothing depends on the clock or on hash-map order: the same
//! input always gives a byte-identical file, which keeps charts diffable and
//! reproducible alongside the `(model, seed)` they came from.
//!
//! - [`render_comparison_svg`]: compare variants of one model (latency CDF,
//!   success rate, p50/p99, per-service amplification and wasted work).
//! - [`render_timeline_svg`]: an incident over time, one panel per variant
//!   (offered load split into first tries and retries, goodput, capacity,
//!   queue length), with fault and intervention windows marked.
//! - [`render_load_lines_svg`]: offered load over time, one line per series;
//!   [`render_lines_svg`] the same for any [`LineUnit`] (zombie requests).
//! - [`render_wasted_svg`]: per variant and service, the work done for nobody
//!   (wasted), cut short (cancelled) and dropped by deadlines (expired).
//! - [`render_branches_svg`]: per variant, the requests' p50 and p99 end to
//!   end beside each branch of a parallel step, the slowest branch's p99
//!   marked: the whole is slower than its slowest part.
//! - [`render_sweep_lines_svg`]: a metric against one swept parameter,
//!   one line per series with 95% confidence bands.
//! - [`render_heatmap_svg`]: a metric over a grid of two swept parameters
//!   (a phase diagram), with the boundary where it crosses a level.
//! - [`render_search_svg`]: a tipping-point search, its probes with their
//!   intervals against the threshold and the bisection's brackets closing in.
//! - [`render_margin_svg`]: the storm margin, the trigger size each load
//!   can take before half the runs storm, per variant, with intervals and
//!   the 10–90% band.
//! - [`style`]: the palette, fonts and number formats every chart shares.
#![warn(missing_docs)]

mod axes;
mod branches;
mod canvas;
mod comparison;
mod error;
mod header;
mod lines;
mod load_grid;
mod margin;
mod search;
pub mod style;
mod sweep;
mod timeline;
mod wasted;

pub use branches::{
    render_branches_svg, BranchesChart, BranchesVariant, PercentileRow, BRANCHES_WIDTH,
};
pub use comparison::{
    comparison_height, render_comparison_svg, ComparisonChart, VariantSeries, COMPARISON_HEIGHT,
    COMPARISON_WIDTH,
};
pub use error::PlotError;
pub use lines::{render_lines_svg, render_load_lines_svg};
pub use margin::{render_margin_svg, MarginChart, MarginPoint, MarginSeries};
pub use search::{render_search_svg, SearchChart};
pub use sweep::{
    render_heatmap_svg, render_sweep_lines_svg, HeatmapChart, SweepLineChart, SweepPoint,
    SweepSeries, SWEEP_WIDTH,
};
pub use timeline::{
    render_timeline_svg, DegradedSpan, LineSeries, LineUnit, TimelineChart, TimelineMark,
    TimelinePanel, MAX_TIMELINE_PANELS, TIMELINE_WIDTH,
};
pub use wasted::{render_wasted_svg, ServiceWaste, WastedChart, WastedVariant, WASTED_WIDTH};

#[cfg(test)]
mod branches_tests;
#[cfg(test)]
mod comparison_tests;
#[cfg(test)]
mod search_tests;
#[cfg(test)]
mod sweep_tests;
#[cfg(test)]
mod test_support;
#[cfg(test)]
mod timeline_tests;
#[cfg(test)]
mod wasted_tests;
