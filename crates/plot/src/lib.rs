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
//! - [`style`]: the palette, fonts and number formats every chart shares.
#![warn(missing_docs)]

mod axes;
mod canvas;
mod comparison;
mod error;
pub mod style;

pub use comparison::{
    render_comparison_svg, ComparisonChart, VariantSeries, COMPARISON_HEIGHT, COMPARISON_WIDTH,
};
pub use error::PlotError;

#[cfg(test)]
mod comparison_tests;
