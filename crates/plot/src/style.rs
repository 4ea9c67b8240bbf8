//! The look shared by every chart of this crate: fonts, text sizes, the
//! colour palette and how numbers are written.
//!
//! Keeping these in one place is what makes charts drawn at different times
//! (comparison, time series, sweeps, heatmaps) look like one family, and lets
//! a reader carry "orange is `per-tier-retries`" from one panel to the next.

use std::sync::OnceLock;

use plotters::style::{register_font, FontDesc, FontFamily, FontStyle, RGBColor};

use crate::PlotError;

/// The font family written into every SVG `<text>` element.
///
/// Text is laid out (measured) with the embedded DejaVu Sans, so a viewer
/// that has DejaVu Sans draws exactly what was measured; the generic
/// `sans-serif` fallback keeps other viewers close. Plotters writes this name
/// verbatim into `font-family`, and a CSS font list is valid there.
pub const FONT_FAMILY: &str = "DejaVu Sans, sans-serif";

/// Registers the embedded DejaVu Sans (regular and bold) with plotters.
///
/// Plotters is built without system font lookup (so output cannot depend on
/// the machine's fonts); it can only measure text in fonts registered here.
/// The fonts are registered under [`FONT_FAMILY`] and under plotters' default
/// `sans-serif`. Safe to call any number of times and from any thread: the
/// work is done once.
pub fn ensure_fonts() -> Result<(), PlotError> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            for family in [FONT_FAMILY, "sans-serif"] {
                register_font(family, FontStyle::Normal, dejavu::sans::regular())
                    .map_err(|_| format!("DejaVu Sans regular as {family:?}"))?;
                register_font(family, FontStyle::Bold, dejavu::sans::bold())
                    .map_err(|_| format!("DejaVu Sans bold as {family:?}"))?;
            }
            Ok(())
        })
        .clone()
        .map_err(PlotError::Font)
}

/// Text sizes in SVG pixels (the `font-size` a viewer sees).
///
/// Axis text is at least 14 px and titles at least 20 px so a chart stays
/// readable when shown scaled down in a report.
pub mod size {
    // Each size is one whose SVG value comes out exact (see
    // `plotters_font_size`); 13, 15 and 26, for example, do not.

    /// The chart's main title.
    pub const TITLE: f64 = 28.0;
    /// The line under the main title (model, seed, run length...).
    pub const SUBTITLE: f64 = 16.0;
    /// The title of one panel.
    pub const PANEL_TITLE: f64 = 20.0;
    /// Axis titles and sub-panel headings.
    pub const AXIS_TITLE: f64 = 16.0;
    /// Tick labels and category labels.
    pub const TICK: f64 = 14.0;
    /// Legend entries.
    pub const LEGEND: f64 = 14.0;
    /// Numbers written on or next to bars, and small notes: as large as
    /// tick labels, since they carry the data.
    pub const VALUE: f64 = 14.0;
}

/// Plotters writes `font-size = size / 1.24` into the SVG; this returns the
/// plotters size whose SVG font size is exactly `px`, so the file says
/// `font-size="14"` and not `13.999999999999998`. Not every `px` has such a
/// size (13 and 15 do not); then the result is a hair above `px`.
pub fn plotters_font_size(px: f64) -> f64 {
    const SVG_RATIO: f64 = 1.24;
    let start = px * SVG_RATIO;
    if !(start.is_finite() && start > 0.0) {
        return start;
    }
    // Look a few ulps either side for a size that divides back to `px`
    // exactly; failing that, take the smallest one that is not below it.
    let mut fallback = None;
    for step in 0..=16u64 {
        for bits in [start.to_bits().wrapping_sub(step), start.to_bits() + step] {
            let size = f64::from_bits(bits);
            let back = size / SVG_RATIO;
            if back == px {
                return size;
            }
            if back > px && fallback.is_none_or(|f: f64| size < f) {
                fallback = Some(size);
            }
        }
    }
    fallback.unwrap_or(start)
}

/// Text weight: only the two DejaVu Sans faces that are registered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weight {
    /// DejaVu Sans Book.
    Normal,
    /// DejaVu Sans Bold.
    Bold,
}

/// The chart font at `px` SVG pixels. Call [`ensure_fonts`] first, or
/// measuring text with it fails.
pub fn font(px: f64, weight: Weight) -> FontDesc<'static> {
    let style = match weight {
        Weight::Normal => FontStyle::Normal,
        Weight::Bold => FontStyle::Bold,
    };
    FontDesc::new(FontFamily::Name(FONT_FAMILY), plotters_font_size(px), style)
}

/// The Okabe–Ito palette, in its published order: eight colours that stay
/// distinct for the common forms of colour blindness.
pub const OKABE_ITO: [RGBColor; 8] = [
    RGBColor(0xE6, 0x9F, 0x00), // orange
    RGBColor(0x56, 0xB4, 0xE9), // sky blue
    RGBColor(0x00, 0x9E, 0x73), // bluish green
    RGBColor(0xF0, 0xE4, 0x42), // yellow
    RGBColor(0x00, 0x72, 0xB2), // blue
    RGBColor(0xD5, 0x5E, 0x00), // vermillion
    RGBColor(0xCC, 0x79, 0xA7), // reddish purple
    RGBColor(0x00, 0x00, 0x00), // black
];

/// The order in which series take Okabe–Ito colours: strongest contrast on
/// white first, so charts with few series never use yellow (hard to see as a
/// thin line), and neighbours differ in hue and lightness.
const SERIES_ORDER: [usize; 8] = [4, 0, 2, 5, 1, 6, 7, 3];

/// How many series can be told apart by colour.
pub const MAX_SERIES: usize = SERIES_ORDER.len();

/// The colour of series `index` (a variant, a sweep line...). The same index
/// always gets the same colour, in every panel and every chart. Indices past
/// [`MAX_SERIES`] wrap around; callers that need distinct series either
/// check [`MAX_SERIES`] first or tell the second round apart by a pattern
/// ([`series_striped`]).
pub fn series_color(index: usize) -> RGBColor {
    OKABE_ITO[SERIES_ORDER[index % SERIES_ORDER.len()]]
}

/// How many variants the comparison chart can tell apart: each colour twice,
/// plain and then striped (as bars) or dashed (as lines). No palette keeps
/// more than about eight hues apart for colour-blind readers, but a pattern
/// reads the same to everyone, so colour × pattern doubles the count without
/// giving up the Okabe–Ito colours.
pub const MAX_VARIANTS: usize = 2 * MAX_SERIES;

/// Whether series `index` is in the second round of colours, drawn striped
/// (bars, swatches) or dashed (lines) to tell it from series
/// `index - MAX_SERIES`, which has the same colour.
pub fn series_striped(index: usize) -> bool {
    index >= MAX_SERIES
}

/// Main text: titles, labels that carry data.
pub const INK: RGBColor = RGBColor(0x21, 0x21, 0x21);
/// Secondary text: subtitles, tick labels, notes.
pub const MUTED_INK: RGBColor = RGBColor(0x55, 0x55, 0x55);
/// Axis lines and tick marks.
pub const AXIS: RGBColor = RGBColor(0x60, 0x60, 0x60);
/// Major grid lines: visible, but lighter than any data.
pub const GRID: RGBColor = RGBColor(0xDD, 0xDD, 0xDD);
/// Minor grid lines (e.g. 2..9 within a log decade).
pub const GRID_MINOR: RGBColor = RGBColor(0xF0, 0xF0, 0xF0);
/// Reference lines (p50/p99 guides, "1× = no amplification").
pub const GUIDE: RGBColor = RGBColor(0xA0, 0xA0, 0xA0);
/// Chart background.
pub const BACKGROUND: RGBColor = RGBColor(0xFF, 0xFF, 0xFF);

/// `color` mixed with white: `amount` 0 keeps it, 1 gives white. Used for a
/// second, lighter shade of a series colour (e.g. p50 next to p99) that stays
/// opaque, so overlaps do not produce new colours.
pub fn lighten(color: RGBColor, amount: f64) -> RGBColor {
    mix(color, RGBColor(0xFF, 0xFF, 0xFF), amount)
}

/// `color` mixed with black: outlines that keep light colours (yellow)
/// visible on white.
pub fn darken(color: RGBColor, amount: f64) -> RGBColor {
    mix(color, RGBColor(0, 0, 0), amount)
}

fn mix(a: RGBColor, b: RGBColor, t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0);
    let c = |x: u8, y: u8| (f64::from(x) * (1.0 - t) + f64::from(y) * t).round() as u8;
    RGBColor(c(a.0, b.0), c(a.1, b.1), c(a.2, b.2))
}

/// WCAG relative luminance of a colour: 0 for black, 1 for white.
pub fn luminance(color: RGBColor) -> f64 {
    let lin = |c: u8| {
        let c = f64::from(c) / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            libm::pow((c + 0.055) / 1.055, 2.4)
        }
    };
    0.2126 * lin(color.0) + 0.7152 * lin(color.1) + 0.0722 * lin(color.2)
}

/// Black or white, whichever reads better on `background` (by WCAG relative
/// luminance), for labels drawn inside coloured bars.
pub fn text_on(background: RGBColor) -> RGBColor {
    // Contrast with black is (l+0.05)/0.05, with white 1.05/(l+0.05); they
    // are equal at l ≈ 0.179.
    if luminance(background) > 0.179 {
        INK
    } else {
        BACKGROUND
    }
}

/// A number for a label: few digits, no trailing zeros, thousands separated
/// (`0.123`, `1.93`, `14`, `14.5`, `404`, `12,345`). `n/a` if not finite.
///
/// Labels are for reading at a glance; exact values belong in the JSON report.
pub fn format_number(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".to_string();
    }
    let a = v.abs();
    if a >= 100.0 {
        return group_thousands(v.round());
    }
    let decimals = if a == 0.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        // Three significant digits.
        (2 - libm::log10(a).floor() as i32).clamp(0, 12) as usize
    };
    let s = trim_zeros(format!("{v:.decimals$}"));
    if s == "-0" {
        "0".to_string()
    } else {
        s
    }
}

/// A count with thousands separators: `12,345`.
pub fn format_count(n: u64) -> String {
    group_digits(&n.to_string())
}

/// A count of something, grouped and in the singular for one:
/// `1 replication`, `12,000 points` (`noun` in the singular, its plural
/// with an `s`).
pub fn format_counted(n: u64, noun: &str) -> String {
    let plural = if n == 1 { "" } else { "s" };
    format!("{} {noun}{plural}", format_count(n))
}

/// A number in at most about five characters, for tight spots (labels on
/// narrow bars, count axes): below 10,000 as [`format_number`], above with
/// a k / M / G suffix and three significant digits (`10.6k`, `250k`,
/// `1.25M`).
pub fn format_compact(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".to_string();
    }
    let a = v.abs();
    if a < 10_000.0 {
        return format_number(v);
    }
    // Each suffix covers up to where three significant digits would round
    // to 1000 of it.
    const SUFFIXES: [(f64, &str); 6] = [
        (1e3, "k"),
        (1e6, "M"),
        (1e9, "G"),
        (1e12, "T"),
        (1e15, "P"),
        (1e18, "E"),
    ];
    let (unit, suffix) = SUFFIXES
        .iter()
        .copied()
        .find(|(unit, _)| a < unit * 999.5)
        .unwrap_or(SUFFIXES[SUFFIXES.len() - 1]);
    let scaled = v / unit;
    let decimals = if scaled.abs() >= 100.0 {
        0
    } else if scaled.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{}{suffix}", trim_zeros(format!("{scaled:.decimals$}")))
}

/// A fraction (0..=1) as a percentage with one decimal (`97.0%`), with more
/// decimals only where one would round a value that is not 100% up to
/// `100.0%` (or a non-zero one down to `0.0%`); exactly 0 and 1 are `0%` and
/// `100%`.
pub fn format_percent(fraction: f64) -> String {
    if !fraction.is_finite() {
        return "n/a".to_string();
    }
    if fraction == 1.0 {
        return "100%".to_string();
    }
    if fraction == 0.0 {
        return "0%".to_string();
    }
    let p = fraction * 100.0;
    let mut decimals = 1usize;
    while decimals < 4 {
        let shown: f64 = format!("{p:.decimals$}").parse().unwrap_or(p);
        let misleading = (shown >= 100.0 && p < 100.0) || (shown == 0.0 && p > 0.0);
        if !misleading {
            break;
        }
        decimals += 1;
    }
    format!("{p:.decimals$}%")
}

/// A latency in milliseconds: `14 ms`, `0.5 ms`, `1,250 ms`; `n/a` if not
/// finite or negative (no latency is).
pub fn format_ms(ms: f64) -> String {
    if ms.is_finite() && ms >= 0.0 {
        format!("{} ms", format_number(ms))
    } else {
        "n/a".to_string()
    }
}

/// A multiplier with two decimals (`1.00×`, `1.93×`): fixed decimals so a
/// column of them lines up and 1.00 visibly means "no amplification".
pub fn format_ratio(v: f64) -> String {
    if !v.is_finite() {
        "n/a".to_string()
    } else if v.abs() >= 100.0 {
        format!("{}×", format_number(v))
    } else {
        format!("{v:.2}×")
    }
}

fn trim_zeros(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

fn group_thousands(rounded: f64) -> String {
    let s = format!("{rounded:.0}");
    let s = if s == "-0" { "0".to_string() } else { s };
    match s.strip_prefix('-') {
        Some(digits) => format!("-{}", group_digits(digits)),
        None => group_digits(&s),
    }
}

fn group_digits(digits: &str) -> String {
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(format_number(0.0), "0");
        assert_eq!(format_number(-0.0), "0");
        assert_eq!(format_number(0.123_456), "0.123");
        assert_eq!(format_number(0.05), "0.05");
        assert_eq!(format_number(1.0), "1");
        assert_eq!(format_number(1.934), "1.93");
        assert_eq!(format_number(14.0), "14");
        assert_eq!(format_number(14.46), "14.5");
        assert_eq!(format_number(404.3), "404");
        assert_eq!(format_number(12_345.0), "12,345");
        assert_eq!(format_number(-1_234_567.0), "-1,234,567");
        assert_eq!(format_number(f64::NAN), "n/a");
        assert_eq!(format_count(0), "0");
        assert_eq!(format_count(1_000), "1,000");
        assert_eq!(format_count(999), "999");
        assert_eq!(format_compact(3_540.0), "3,540");
        assert_eq!(format_compact(10_620.0), "10.6k");
        assert_eq!(format_compact(250_000.0), "250k");
        assert_eq!(format_compact(999_999.0), "1M");
        assert_eq!(format_compact(1_250_000.0), "1.25M");
        assert_eq!(format_compact(u64::MAX as f64), "18.4E");
    }

    #[test]
    fn percentages_never_round_to_a_lie() {
        assert_eq!(format_percent(1.0), "100%");
        assert_eq!(format_percent(0.0), "0%");
        assert_eq!(format_percent(0.97), "97.0%");
        assert_eq!(format_percent(0.9996), "99.96%");
        assert_eq!(format_percent(0.999_999), "99.9999%");
        assert_eq!(format_percent(0.000_04), "0.004%");
        assert_eq!(format_ratio(1.0), "1.00×");
        assert_eq!(format_ratio(1.934), "1.93×");
        assert_eq!(format_ms(14.0), "14 ms");
    }

    #[test]
    fn font_sizes_are_exact_in_the_svg() {
        for px in [
            size::TITLE,
            size::SUBTITLE,
            size::PANEL_TITLE,
            size::AXIS_TITLE,
            size::TICK,
            size::LEGEND,
            size::VALUE,
        ] {
            assert_eq!(plotters_font_size(px) / 1.24, px);
        }
    }

    #[test]
    fn palette_is_stable_and_distinct() {
        let colors: Vec<RGBColor> = (0..MAX_SERIES).map(series_color).collect();
        for (i, a) in colors.iter().enumerate() {
            for b in &colors[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(series_color(0), RGBColor(0x00, 0x72, 0xB2));
        assert_eq!(text_on(RGBColor(0xF0, 0xE4, 0x42)), INK);
        assert_eq!(text_on(RGBColor(0, 0, 0)), BACKGROUND);
    }
}
