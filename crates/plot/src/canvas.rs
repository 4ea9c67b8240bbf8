//! Pixel-level drawing on an SVG drawing area: text (measured with the
//! embedded font), rectangles and polylines, each failing with a
//! [`PlotError`] instead of plotters' backend-generic error.
//!
//! Charts here lay out every label themselves (rather than through plotters'
//! `ChartBuilder` mesh) because that is the only way to guarantee that labels
//! never overlap and never get clipped, whatever the names and values are.

use plotters::coord::Shift;
use plotters::element::{PathElement, Rectangle, Text};
use plotters::prelude::{DrawingArea, SVGBackend};
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{Color, FontTransform, RGBColor};

use crate::error::drawing;
use crate::style::{font, Weight};
use crate::PlotError;

/// Plotters' ab_glyph backend measures text as if the font size were the
/// line height (ascent − descent), while the SVG sets it as the em size; for
/// DejaVu Sans (2048 units per em, 2384 units ascent − descent, and the 1.24
/// factor of [`crate::style::plotters_font_size`]) widths come out 1/0.94 too
/// wide. Measured: 100 × "M" at 14 px is 1286 px by plotters, 1208 px drawn.
const MEASURED_TO_SVG: f64 = 0.94;

/// The whole picture, in pixels with the origin at the top left.
pub(crate) type Canvas<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// A pixel rectangle (right and bottom exclusive, as plotters draws them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rect {
    pub left: i32,
    pub top: i32,
    pub right: i32,
    pub bottom: i32,
}

impl Rect {
    pub fn new(left: i32, top: i32, right: i32, bottom: i32) -> Rect {
        Rect {
            left,
            top,
            right: right.max(left),
            bottom: bottom.max(top),
        }
    }

    pub fn width(&self) -> i32 {
        self.right - self.left
    }

    pub fn height(&self) -> i32 {
        self.bottom - self.top
    }

    pub fn center_x(&self) -> i32 {
        (self.left + self.right) / 2
    }

    pub fn center_y(&self) -> i32 {
        (self.top + self.bottom) / 2
    }
}

/// How a piece of text is drawn: size, weight, colour, which point of the
/// text sits on the anchor, and whether it reads upwards (rotated 90° to the
/// left, as y-axis titles and labels on narrow bars do).
#[derive(Clone, Copy)]
pub(crate) struct TextSpec {
    pub px: f64,
    pub weight: Weight,
    pub color: RGBColor,
    pub h: HPos,
    pub v: VPos,
    pub upward: bool,
}

impl TextSpec {
    pub fn new(px: f64, color: RGBColor) -> TextSpec {
        TextSpec {
            px,
            weight: Weight::Normal,
            color,
            h: HPos::Left,
            v: VPos::Top,
            upward: false,
        }
    }

    pub fn bold(mut self) -> TextSpec {
        self.weight = Weight::Bold;
        self
    }

    pub fn with_color(mut self, color: RGBColor) -> TextSpec {
        self.color = color;
        self
    }

    pub fn anchor(mut self, h: HPos, v: VPos) -> TextSpec {
        self.h = h;
        self.v = v;
        self
    }

    pub fn upward(mut self) -> TextSpec {
        self.upward = true;
        self
    }

    /// Width and height of `text` when drawn horizontally, in pixels,
    /// rounded up.
    pub fn measure(&self, text: &str) -> Result<(i32, i32), PlotError> {
        let (w, _) = font(self.px, self.weight).box_size(text).map_err(drawing)?;
        let w = (f64::from(w) * MEASURED_TO_SVG).ceil() as i32 + 1;
        Ok((w, line_height(self.px)))
    }

    /// Width of `text` in pixels (see [`TextSpec::measure`]).
    pub fn width(&self, text: &str) -> Result<i32, PlotError> {
        Ok(self.measure(text)?.0)
    }

    /// `text`, shortened with an ellipsis if needed so it is at most `max`
    /// pixels wide. Used for user-chosen names, which can be any length.
    pub fn fit(&self, text: &str, max: i32) -> Result<String, PlotError> {
        if self.width(text)? <= max {
            return Ok(text.to_string());
        }
        let chars: Vec<char> = text.chars().collect();
        let mut keep = chars.len();
        while keep > 0 {
            keep -= 1;
            let candidate: String = chars[..keep].iter().collect::<String>() + "…";
            if self.width(&candidate)? <= max {
                return Ok(candidate);
            }
        }
        Ok(String::new())
    }

    /// Draws `text` with its anchor point at `at`.
    pub fn draw(&self, canvas: &Canvas<'_>, text: &str, at: (i32, i32)) -> Result<(), PlotError> {
        if text.is_empty() {
            return Ok(());
        }
        let mut desc = font(self.px, self.weight);
        if self.upward {
            desc = desc.transform(FontTransform::Rotate270);
        }
        let style = desc.color(&self.color).pos(Pos::new(self.h, self.v));
        canvas
            .draw(&Text::new(text.to_string(), at, style))
            .map_err(drawing)
    }
}

/// The vertical space one line of text at `px` needs, including a little
/// leading, so stacked lines never touch.
pub(crate) fn line_height(px: f64) -> i32 {
    (px * 1.25).ceil() as i32
}

/// Fills the rectangle spanned by two corners (in any order).
pub(crate) fn fill_rect(
    canvas: &Canvas<'_>,
    a: (i32, i32),
    b: (i32, i32),
    color: RGBColor,
) -> Result<(), PlotError> {
    let (p, q) = ordered(a, b);
    canvas
        .draw(&Rectangle::new([p, q], color.filled()))
        .map_err(drawing)
}

/// Outlines the rectangle spanned by two corners (in any order).
pub(crate) fn stroke_rect(
    canvas: &Canvas<'_>,
    a: (i32, i32),
    b: (i32, i32),
    color: RGBColor,
) -> Result<(), PlotError> {
    let (p, q) = ordered(a, b);
    canvas
        .draw(&Rectangle::new([p, q], color.stroke_width(1)))
        .map_err(drawing)
}

/// A bar: filled, with a 1 px outline so light colours (yellow) keep an edge
/// on white. Bars thinner than a pixel are drawn one pixel wide, so a small
/// but non-zero value stays visible.
pub(crate) fn bar(
    canvas: &Canvas<'_>,
    a: (i32, i32),
    b: (i32, i32),
    fill: RGBColor,
    outline: RGBColor,
) -> Result<(), PlotError> {
    let (p, mut q) = ordered(a, b);
    if q.0 == p.0 {
        q.0 += 1;
    }
    if q.1 == p.1 {
        q.1 += 1;
    }
    fill_rect(canvas, p, q, fill)?;
    stroke_rect(canvas, p, q, outline)
}

/// A polyline of `width` pixels.
pub(crate) fn polyline(
    canvas: &Canvas<'_>,
    points: Vec<(i32, i32)>,
    color: RGBColor,
    width: u32,
) -> Result<(), PlotError> {
    if points.len() < 2 {
        return Ok(());
    }
    canvas
        .draw(&PathElement::new(points, color.stroke_width(width)))
        .map_err(drawing)
}

/// A straight line of 1 px.
pub(crate) fn line(
    canvas: &Canvas<'_>,
    a: (i32, i32),
    b: (i32, i32),
    color: RGBColor,
) -> Result<(), PlotError> {
    polyline(canvas, vec![a, b], color, 1)
}

/// A dashed horizontal line from `x0` to `x1` at `y` (dash and gap lengths
/// in pixels), drawn as separate segments because plotters has no
/// `stroke-dasharray`.
pub(crate) fn dashed_hline(
    canvas: &Canvas<'_>,
    x0: i32,
    x1: i32,
    y: i32,
    color: RGBColor,
    dash: i32,
    gap: i32,
) -> Result<(), PlotError> {
    let mut x = x0;
    while x < x1 {
        let end = (x + dash).min(x1);
        line(canvas, (x, y), (end, y), color)?;
        x = end + gap;
    }
    Ok(())
}

fn ordered(a: (i32, i32), b: (i32, i32)) -> ((i32, i32), (i32, i32)) {
    ((a.0.min(b.0), a.1.min(b.1)), (a.0.max(b.0), a.1.max(b.1)))
}
