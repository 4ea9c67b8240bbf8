//! Pixel-level drawing on an SVG drawing area: text (measured with the
//! embedded font), rectangles and polylines, each failing with a
//! [`PlotError`] instead of plotters' backend-generic error.
//!
//! Charts here lay out every label themselves (rather than through plotters'
//! `ChartBuilder` mesh) because that is the only way to guarantee that labels
//! never overlap and never get clipped, whatever the names and values are.

use plotters::coord::Shift;
use plotters::element::{PathElement, Polygon, Rectangle, Text};
use plotters::prelude::{DrawingArea, IntoDrawingArea, SVGBackend};
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{Color, FontTransform, RGBAColor, RGBColor};

use crate::error::drawing;
use crate::style::{font, Weight, BACKGROUND};
use crate::PlotError;

/// Plotters' ab_glyph backend measures text as if the font size were the
/// line height (ascent − descent), while the SVG sets it as the em size; for
/// DejaVu Sans (2048 units per em, 2384 units ascent − descent, and the 1.24
/// factor of [`crate::style::plotters_font_size`]) widths come out 1/0.94 too
/// wide. Measured: 100 × "M" at 14 px is 1286 px by plotters, 1208 px drawn.
const MEASURED_TO_SVG: f64 = 0.94;

/// The whole picture, in pixels with the origin at the top left.
pub(crate) type Canvas<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// An SVG document `size` pixels wide and high, on the charts' white
/// background, with whatever `draw` puts on it: the start and the end every
/// chart shares.
pub(crate) fn draw_svg(
    size: (u32, u32),
    draw: impl FnOnce(&Canvas<'_>) -> Result<(), PlotError>,
) -> Result<String, PlotError> {
    let mut svg = String::new();
    {
        let canvas = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        canvas.fill(&BACKGROUND).map_err(drawing)?;
        draw(&canvas)?;
        canvas.present().map_err(drawing)?;
    }
    Ok(svg)
}

/// Left and right margin of every chart, px.
pub(crate) const MARGIN: i32 = 24;

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
/// but non-zero value stays visible. With `striped`, white diagonal stripes
/// cross the fill (inside the outline): the pattern that tells a second-round
/// series ([`crate::style::series_striped`]) from the first-round one with
/// the same colour.
pub(crate) fn patterned_bar(
    canvas: &Canvas<'_>,
    a: (i32, i32),
    b: (i32, i32),
    fill: RGBColor,
    outline: RGBColor,
    striped: bool,
) -> Result<(), PlotError> {
    let (p, q) = ordered(a, b);
    let q = (q.0.max(p.0 + 1), q.1.max(p.1 + 1));
    fill_rect(canvas, p, q, fill)?;
    if striped {
        stripes(canvas, p, q)?;
    }
    stroke_rect(canvas, p, q, outline)
}

/// White diagonal stripes inside the rectangle from `p` (top left) to `q`.
fn stripes(canvas: &Canvas<'_>, p: (i32, i32), q: (i32, i32)) -> Result<(), PlotError> {
    // Lines x + y = c, every STRIPE_STEP px, clipped to the inside.
    let (x0, y0, x1, y1) = (p.0 + 1, p.1 + 1, q.0 - 1, q.1 - 1);
    let mut c = x0 + y0 + STRIPE_STEP / 2;
    while c < x1 + y1 {
        let start = x0.max(c - y1);
        let end = x1.min(c - y0);
        if start < end {
            polyline(
                canvas,
                vec![(start, c - start), (end, c - end)],
                RGBColor(0xFF, 0xFF, 0xFF),
                2,
            )?;
        }
        c += STRIPE_STEP;
    }
    Ok(())
}

/// Distance between stripes, along each axis.
const STRIPE_STEP: i32 = 7;

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

/// Fills a polygon (closed implicitly) with a possibly translucent colour.
/// Fewer than three points draw nothing.
pub(crate) fn fill_polygon(
    canvas: &Canvas<'_>,
    points: Vec<(i32, i32)>,
    color: RGBAColor,
) -> Result<(), PlotError> {
    if points.len() < 3 {
        return Ok(());
    }
    canvas
        .draw(&Polygon::new(points, color.filled()))
        .map_err(drawing)
}

/// A dashed polyline of `width` pixels: `dash` pixels drawn, `gap` pixels
/// skipped, measured along the path (so corners and vertical steps are
/// dashed too). Each dash is its own short polyline, because plotters has no
/// `stroke-dasharray`.
///
/// A path much longer than it is wide (a noisy series zig-zagging up and
/// down every pixel) would need thousands of dashes that no one can read as
/// dashes; past 6× its width such a path is drawn solid and 1 px wide
/// instead, which keeps the SVG small and still shows the values.
pub(crate) fn dashed_polyline(
    canvas: &Canvas<'_>,
    points: &[(i32, i32)],
    color: RGBColor,
    width: u32,
    dash: i32,
    gap: i32,
) -> Result<(), PlotError> {
    if points.len() < 2 {
        return Ok(());
    }
    let seg_len =
        |a: (i32, i32), b: (i32, i32)| libm::hypot(f64::from(b.0 - a.0), f64::from(b.1 - a.1));
    let total: f64 = points.windows(2).map(|w| seg_len(w[0], w[1])).sum();
    let (min_x, max_x) = points.iter().fold((i32::MAX, i32::MIN), |(lo, hi), p| {
        (lo.min(p.0), hi.max(p.0))
    });
    if total > 6.0 * f64::from((max_x - min_x).max(1)) + 50.0 {
        return polyline(canvas, points.to_vec(), color, 1);
    }
    let (dash, gap) = (f64::from(dash.max(1)), f64::from(gap.max(0)));
    let period = dash + gap;
    let lerp = |a: (i32, i32), b: (i32, i32), t: f64| {
        (
            (f64::from(a.0) + t * f64::from(b.0 - a.0)).round() as i32,
            (f64::from(a.1) + t * f64::from(b.1 - a.1)).round() as i32,
        )
    };
    // Distance along the path where the current segment starts; the dash
    // being built, if the pen is down.
    let mut walked = 0.0;
    let mut current: Vec<(i32, i32)> = Vec::new();
    for w in points.windows(2) {
        let (a, b) = (w[0], w[1]);
        let len = seg_len(a, b);
        if len == 0.0 {
            continue;
        }
        let mut s = 0.0; // position within this segment
        while s < len {
            let phase = (walked + s) % period;
            let down = phase < dash;
            let to_switch = if down { dash - phase } else { period - phase };
            let e = (s + to_switch).min(len);
            if down {
                if current.is_empty() {
                    current.push(lerp(a, b, s / len));
                }
                let p = lerp(a, b, e / len);
                if current.last() != Some(&p) {
                    current.push(p);
                }
                if s + to_switch <= len {
                    // The dash ends here: lift the pen.
                    polyline(canvas, std::mem::take(&mut current), color, width)?;
                }
            }
            s = e;
        }
        walked += len;
    }
    polyline(canvas, current, color, width)
}

fn ordered(a: (i32, i32), b: (i32, i32)) -> ((i32, i32), (i32, i32)) {
    ((a.0.min(b.0), a.1.min(b.1)), (a.0.max(b.0), a.1.max(b.1)))
}
