//! The one error type of this crate.
//!
//! Plotters' own errors are generic over the backend and hold boxed font
//! errors; callers only ever need to report them, so they are flattened to
//! strings here.

/// Why a chart could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// The chart has no variants: there is nothing to compare, and an empty
    /// picture would look like a rendering bug rather than an input problem.
    #[error("nothing to plot: the chart has no variants")]
    NoVariants,
    /// More variants than the palette has distinguishable colours; reusing a
    /// colour would make two variants indistinguishable in every panel.
    #[error("too many variants to tell apart: {count} (at most {max})")]
    TooManyVariants {
        /// How many variants the chart had.
        count: usize,
        /// How many the palette can tell apart.
        max: usize,
    },
    /// The embedded DejaVu font could not be registered with plotters.
    #[error("could not register the embedded font: {0}")]
    Font(String),
    /// Plotters failed while drawing (the message is plotters' own).
    #[error("drawing failed: {0}")]
    Drawing(String),
}

/// Converts any plotters drawing error into a [`PlotError::Drawing`].
pub(crate) fn drawing<E: std::fmt::Display>(e: E) -> PlotError {
    PlotError::Drawing(e.to_string())
}

impl PlotError {
    /// Checks a chart's number of variants (or panels): at least one, at most
    /// `max`.
    pub(crate) fn check_count(count: usize, max: usize) -> Result<(), PlotError> {
        match count {
            0 => Err(PlotError::NoVariants),
            n if n > max => Err(PlotError::TooManyVariants { count: n, max }),
            _ => Ok(()),
        }
    }
}
