//! The top of every chart but the comparison: a title, a subtitle and a legend
//! wrapped onto as many rows as it needs. Each chart draws its own swatches;
//! this lays out and draws everything else.

use crate::canvas::{line_height, Canvas, TextSpec, MARGIN};
use crate::error::PlotError;
use crate::style::{size, INK, MUTED_INK};
use plotters::style::text_anchor::{HPos, VPos};

/// Legend rows are this tall.
const ROW_H: i32 = 24;

/// One legend entry, as each chart defines it: a label after a swatch.
pub(crate) trait LegendItem {
    fn label(&self) -> &str;
    /// Draws the swatch with its left edge at `x`, centred on `y`.
    fn draw_swatch(&self, canvas: &Canvas<'_>, x: i32, y: i32) -> Result<(), PlotError>;
}

/// A laid-out header.
pub(crate) struct Header {
    /// Left x and row centre y of each legend entry.
    pub positions: Vec<(i32, i32)>,
    /// Where the content below may start.
    pub bottom: i32,
    swatch_w: i32,
}

fn legend_spec() -> TextSpec {
    TextSpec::new(size::LEGEND, INK).anchor(HPos::Left, VPos::Center)
}

impl Header {
    /// Lays out `title`, `subtitle` and the `legend` (each entry's swatch
    /// `swatch_w` wide) in a chart `width` wide, leaving `gap` px above the
    /// legend.
    pub fn layout(
        title: &str,
        subtitle: &str,
        legend: &[impl LegendItem],
        swatch_w: i32,
        width: i32,
        gap: i32,
    ) -> Result<Header, PlotError> {
        let mut y = 16;
        if !title.is_empty() {
            y += line_height(size::TITLE);
        }
        if !subtitle.is_empty() {
            y += line_height(size::SUBTITLE) + 2;
        }
        y += gap;
        let entry = legend_spec();
        let (mut x, mut center) = (MARGIN, y + ROW_H / 2);
        let mut positions = Vec::new();
        for item in legend {
            let label = entry.fit(item.label(), width - 2 * MARGIN - swatch_w - 8)?;
            let w = swatch_w + 8 + entry.width(&label)?;
            if x > MARGIN && x + w > width - MARGIN {
                x = MARGIN;
                center += ROW_H;
            }
            positions.push((x, center));
            x += w + 32;
        }
        let bottom = if positions.is_empty() {
            y
        } else {
            center + ROW_H / 2 + gap - 2
        };
        Ok(Header {
            positions,
            bottom,
            swatch_w,
        })
    }

    /// Draws the title, the subtitle and the legend laid out for them.
    pub fn draw(
        &self,
        canvas: &Canvas<'_>,
        title: &str,
        subtitle: &str,
        legend: &[impl LegendItem],
        width: i32,
    ) -> Result<(), PlotError> {
        let max_w = width - 2 * MARGIN;
        let mut y = 16;
        if !title.is_empty() {
            let spec = TextSpec::new(size::TITLE, INK).bold();
            spec.draw(canvas, &spec.fit(title, max_w)?, (MARGIN, y))?;
            y += line_height(size::TITLE);
        }
        if !subtitle.is_empty() {
            let sub = TextSpec::new(size::SUBTITLE, MUTED_INK);
            sub.draw(canvas, &sub.fit(subtitle, max_w)?, (MARGIN, y + 2))?;
        }
        let entry = legend_spec();
        for (item, &(x, cy)) in legend.iter().zip(&self.positions) {
            item.draw_swatch(canvas, x, cy)?;
            let label = entry.fit(item.label(), max_w - self.swatch_w - 8)?;
            entry.draw(canvas, &label, (x + self.swatch_w + 8, cy))?;
        }
        Ok(())
    }
}

/// A muted note centred in `rect`, for a plot or panel without data.
pub(crate) fn note(
    canvas: &Canvas<'_>,
    rect: crate::canvas::Rect,
    text: &str,
) -> Result<(), PlotError> {
    TextSpec::new(size::AXIS_TITLE, MUTED_INK)
        .anchor(HPos::Center, VPos::Center)
        .draw(canvas, text, (rect.center_x(), rect.center_y()))
}
