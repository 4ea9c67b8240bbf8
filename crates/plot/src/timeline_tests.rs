//! Tests of the timeline charts on a realistic incident and on degenerate
//! inputs. The rendered examples are written to `target/plot-example/` so a
//! person can look at them (`rsvg-convert -w 1400
//! target/plot-example/timeline.svg -o timeline.png`).

use crate::test_support::{assert_well_formed, save, svg_texts};
use crate::timeline::{format_rate, reduce_columns};
use crate::{
    render_lines_svg, render_load_lines_svg, render_timeline_svg, DegradedSpan, LineUnit,
    PlotError, TimelineChart, TimelineMark, TimelinePanel, MAX_TIMELINE_PANELS,
};

/// Deterministic noise in [-1, 1] (splitmix64 of `seed` and `i`).
fn noise(seed: u64, i: usize) -> f64 {
    let mut z = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(i as u64)
        .wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

const HORIZON: usize = 2760;
const DEPLOY: f64 = 60.0;
const ROLLBACK: f64 = 420.0;
const INTERVENTION: f64 = 2520.0;
const RESTORED: f64 = 2640.0;

/// How a variant behaves once the bad deploy is rolled back.
#[derive(Clone, Copy, PartialEq)]
enum Fate {
    /// The retry storm outlives the rollback until the intervention.
    Metastable,
    /// Retries die out and the queue drains within 12 s of the rollback.
    RecoversAtRollback,
    /// A retry budget caps retries at 10% of first tries throughout.
    Budget,
}

/// One panel of the incident in the design notes: 8,000/s of first tries;
/// a bad deploy at 60 s cuts capacity from 13,400/s to 873/s and retries
/// triple the offered load; rollback at 420 s; retries turned off and 30%
/// of traffic dropped from 2,520 s to 2,640 s; horizon 2,760 s.
fn incident_panel(name: &str, fate: Fate, seed: u64) -> TimelinePanel {
    let storm_end = match fate {
        Fate::Metastable => INTERVENTION + 3.0,
        Fate::RecoversAtRollback => ROLLBACK + 12.0,
        Fate::Budget => ROLLBACK + 5.0,
    };
    let mut p = TimelinePanel {
        name: name.to_string(),
        degraded: vec![DegradedSpan {
            from_s: DEPLOY,
            to_s: storm_end,
            overload: false,
        }],
        ..TimelinePanel::default()
    };
    let mut capacity = Vec::new();
    let jitter = |k: u64, i: usize, amount: f64| 1.0 + amount * noise(seed * 10 + k, i);
    for i in 0..HORIZON {
        let t = i as f64;
        let cap = if (DEPLOY..ROLLBACK).contains(&t) {
            873.0
        } else {
            13_400.0
        };
        let dropped = (INTERVENTION..RESTORED).contains(&t);
        let first = if dropped { 5_600.0 } else { 8_000.0 } * jitter(1, i, 0.015);
        // Retry waves: a slow swell plus the odd one-second spike.
        let wave = 1.0 + 0.08 * libm::sin(t / 9.0) + if noise(seed, i) > 0.97 { 0.25 } else { 0.0 };
        let ramp = ((t - DEPLOY) / 20.0).clamp(0.0, 1.0);
        let storm_end = match fate {
            Fate::Metastable => INTERVENTION,
            Fate::RecoversAtRollback => ROLLBACK + 12.0,
            Fate::Budget => ROLLBACK + 5.0,
        };
        let in_storm = t >= DEPLOY && t < storm_end;
        let (retry, queue, goodput);
        if fate == Fate::Budget {
            retry = if in_storm {
                800.0 * ramp.max(0.3) * jitter(2, i, 0.05)
            } else {
                3.0 * jitter(2, i, 1.0).max(0.0)
            };
            if (DEPLOY..ROLLBACK).contains(&t) {
                queue = (20_000.0f64).min((t - DEPLOY + 1.0) * 7_900.0);
                goodput = 40.0 * jitter(3, i, 0.5);
            } else if in_storm {
                let left = 1.0 - (t - ROLLBACK) / 5.0;
                queue = 20_000.0 * left;
                goodput = 13_400.0 * jitter(3, i, 0.01);
            } else {
                queue = 12.0 * jitter(4, i, 1.0);
                goodput = first * 0.999;
            }
        } else if in_storm {
            retry = 16_000.0 * ramp * wave * jitter(2, i, 0.02);
            let fill = ((t - DEPLOY + 1.0) * 7_000.0).min(20_000.0);
            if t < ROLLBACK || fate == Fate::Metastable {
                queue = fill * jitter(4, i, 0.005).min(1.0);
                goodput = if t < DEPLOY + 3.0 {
                    873.0
                } else if t < ROLLBACK {
                    0.0
                } else {
                    300.0 * jitter(3, i, 0.8)
                };
            } else {
                // Draining after the rollback.
                let left = 1.0 - (t - ROLLBACK) / 12.0;
                queue = 20_000.0 * left;
                goodput = 13_400.0 * (1.0 - left).max(0.2) * jitter(3, i, 0.01);
            }
        } else if fate == Fate::Metastable && (INTERVENTION..INTERVENTION + 3.0).contains(&t) {
            retry = 0.0;
            let left = 1.0 - (t - INTERVENTION) / 3.0;
            queue = 20_000.0 * left;
            goodput = 13_400.0 * jitter(3, i, 0.01);
        } else {
            retry = 3.0 * jitter(2, i, 1.0).max(0.0);
            queue = 12.0 * jitter(4, i, 1.0);
            goodput = first * 0.999;
        }
        p.t_s.push(t);
        p.offered_first.push(first);
        p.offered_retry.push(retry);
        p.goodput.push(goodput);
        p.queue.push(queue);
        capacity.push(cap);
    }
    p.capacity = Some(capacity);
    p
}

fn incident_marks() -> Vec<TimelineMark> {
    vec![
        TimelineMark::window("bad deploy", DEPLOY, ROLLBACK),
        TimelineMark::instant("rollback", ROLLBACK),
        TimelineMark::window("retries off, 30% dropped", INTERVENTION, RESTORED),
    ]
}

fn realistic() -> TimelineChart {
    let mut metastable = incident_panel("baseline", Fate::Metastable, 1);
    metastable.verdict = Some("metastable — recovered by: retries off, 30% dropped".into());
    let mut recovers = incident_panel("jittered-backoff", Fate::RecoversAtRollback, 2);
    recovers.verdict = Some("recovered 12 s after rollback".into());
    let mut budget = incident_panel("retry-budget", Fate::Budget, 3);
    budget.verdict = Some("recovered 5 s after rollback".into());
    TimelineChart {
        title: "Retry storm after a bad deploy".into(),
        subtitle: "model incident-retry-storm · seed 42 · 1 s buckets · focus service: api".into(),
        panels: vec![metastable, recovers, budget],
        marks: incident_marks(),
    }
}

#[test]
fn realistic_incident_is_a_readable_svg() {
    let chart = realistic();
    let svg = render_timeline_svg(&chart).expect("renders");
    save("timeline.svg", &svg);
    assert_well_formed(&svg);
    assert!(svg.contains("width=\"1400\""));
    for text in [
        "Retry storm after a bad deploy",
        "baseline",
        "jittered-backoff",
        "retry-budget",
        "metastable — recovered by: retries off, 30% dropped",
        "recovered 12 s after rollback",
        "bad deploy",
        "rollback",
        "retries off, 30% dropped",
        "requests/s",
        "queue",
        "time (min)",
        "offered: first tries",
        "offered: retries (stacked on top)",
        "goodput (successful requests)",
        "capacity",
        "\n30k\n",
        "\n20k\n",
        "\n45\n",
    ] {
        assert!(svg.contains(text), "missing {text:?}");
    }
    for color in ["#56B4E9", "#E69F00", "#D55E00", "#CC79A7", "#212121"] {
        assert!(svg.contains(color), "missing colour {color}");
    }
    assert!(svg.len() < 400_000, "{} bytes", svg.len());
}

#[test]
fn same_input_gives_identical_bytes() {
    let a = render_timeline_svg(&realistic()).expect("renders");
    let b = render_timeline_svg(&realistic()).expect("renders");
    assert!(a == b, "two renders of the same chart differ");
}

#[test]
fn ten_noisy_panels_stay_small() {
    let fates = [Fate::Metastable, Fate::RecoversAtRollback, Fate::Budget];
    let panels: Vec<TimelinePanel> = (0..10)
        .map(|i| {
            let mut p = incident_panel(&format!("variant-{i}"), fates[i % 3], 100 + i as u64);
            // Worst case for the reduction: every series noisy everywhere.
            for (k, v) in p.goodput.iter_mut().enumerate() {
                *v += 1_500.0 * noise(7 + i as u64, k).abs();
            }
            for (k, v) in p.queue.iter_mut().enumerate() {
                *v += 2_000.0 * noise(9 + i as u64, k).abs();
            }
            if let Some(c) = p.capacity.as_mut() {
                for (k, v) in c.iter_mut().enumerate() {
                    *v *= 1.0 + 0.05 * noise(11 + i as u64, k);
                }
            }
            p.verdict = Some(format!("verdict {i}"));
            p
        })
        .collect();
    let chart = TimelineChart {
        title: "ten variants".into(),
        subtitle: "2,760 noisy 1 s buckets each".into(),
        panels,
        marks: incident_marks(),
    };
    let svg = render_timeline_svg(&chart).expect("renders");
    save("timeline-10.svg", &svg);
    assert_well_formed(&svg);
    assert!(svg.len() < 2_000_000, "{} bytes", svg.len());
    assert!(svg.contains("variant-9"));
}

#[test]
fn no_panels_or_too_many_is_an_error() {
    let chart = TimelineChart::default();
    assert!(matches!(
        render_timeline_svg(&chart),
        Err(PlotError::NoVariants)
    ));
    let chart = TimelineChart {
        panels: vec![TimelinePanel::default(); MAX_TIMELINE_PANELS + 1],
        ..TimelineChart::default()
    };
    assert!(matches!(
        render_timeline_svg(&chart),
        Err(PlotError::TooManyVariants { count: 17, max: 16 })
    ));
}

#[test]
fn empty_and_zero_panels_render() {
    let empty = TimelinePanel {
        name: "empty".into(),
        ..TimelinePanel::default()
    };
    let zeros = TimelinePanel {
        name: "all-zero".into(),
        verdict: Some(String::new()),
        t_s: (0..100).map(f64::from).collect(),
        offered_first: vec![0.0; 100],
        offered_retry: vec![0.0; 100],
        goodput: vec![0.0; 100],
        degraded_answers: vec![0.0; 100],
        capacity: Some(vec![0.0; 100]),
        queue: vec![0.0; 100],
        degraded: vec![],
    };
    for (name, panels, marks) in [
        ("timeline-empty.svg", vec![empty.clone()], Vec::new()),
        (
            "timeline-empty-marks.svg",
            vec![empty.clone()],
            incident_marks(),
        ),
        (
            "timeline-zero.svg",
            vec![zeros.clone(), empty],
            incident_marks(),
        ),
    ] {
        let chart = TimelineChart {
            title: String::new(),
            subtitle: String::new(),
            panels,
            marks,
        };
        let svg = render_timeline_svg(&chart).expect("renders");
        save(name, &svg);
        assert_well_formed(&svg);
    }
    let chart = TimelineChart {
        title: "nothing".into(),
        subtitle: String::new(),
        panels: vec![TimelinePanel::default()],
        marks: Vec::new(),
    };
    let svg = render_timeline_svg(&chart).expect("renders");
    assert!(svg.contains("no data"));
}

#[test]
fn odd_values_do_not_panic() {
    let n = 300;
    let t: Vec<f64> = (0..n)
        .map(|i| if i == 17 { f64::NAN } else { f64::from(i) })
        .collect();
    let wild = |i: i32| match i % 50 {
        3 => f64::NAN,
        7 => f64::INFINITY,
        11 => -500.0,
        _ => 1_000.0 + f64::from(i),
    };
    let panel = TimelinePanel {
        name: "a <very> long & odd name that goes on and on and on and on and on and on and on"
            .into(),
        verdict: Some("with a verdict that is also far too long to fit on the title line of its panel, so it must be shortened".into()),
        t_s: t,
        offered_first: (0..n).map(wild).collect(),
        offered_retry: (0..n / 2).map(wild).collect(),
        goodput: (0..n).map(|i| wild(i + 1)).collect(),
        degraded_answers: (0..n / 3).map(|i| wild(i + 2)).collect(),
        capacity: Some(vec![1e9; 10]),
        queue: vec![f64::NAN; n as usize],
        // Reversed, outside the run, and not a number: drawn or left out,
        // never a panic.
        degraded: vec![
            DegradedSpan {
                from_s: 200.0,
                to_s: 100.0,
                overload: false,
            },
            DegradedSpan {
                from_s: -50.0,
                to_s: 1e12,
                overload: true,
            },
            DegradedSpan {
                from_s: f64::NAN,
                to_s: 3.0,
                overload: false,
            },
        ],
    };
    let marks = vec![
        TimelineMark::window("reversed", 200.0, 100.0),
        TimelineMark::window("outside", 5_000.0, 6_000.0),
        TimelineMark::window("half outside", -50.0, 20.0),
        TimelineMark::instant("nan", f64::NAN),
        TimelineMark::window("nan end", 30.0, f64::NAN),
        TimelineMark::instant("a", 31.0),
        TimelineMark::instant("b", 32.0),
        TimelineMark::instant("c", 33.0),
        TimelineMark::instant("d", 34.0),
        TimelineMark::instant("crowded label number e", 35.0),
        TimelineMark::instant("crowded label number f", 36.0),
        TimelineMark::instant("crowded label number g", 37.0),
        TimelineMark::instant("crowded label number h", 38.0),
        TimelineMark::instant("crowded label number i", 39.0),
    ];
    let chart = TimelineChart {
        title: "odd".into(),
        subtitle: "not-a-number, infinite and negative values, short series, marks outside".into(),
        panels: vec![panel],
        marks,
    };
    let svg = render_timeline_svg(&chart).expect("renders");
    save("timeline-odd.svg", &svg);
    assert_well_formed(&svg);
    assert!(svg.contains("&lt;very&gt;"));
    assert!(svg.contains('…'));
    assert!(svg.contains("above the scale"));
    assert!(!svg.contains("\noutside\n"));
}

/// The `stroke` of every polyline (legend swatches and lines), in document
/// order.
fn polyline_strokes(svg: &str) -> Vec<String> {
    roxmltree::Document::parse(svg)
        .expect("well-formed")
        .descendants()
        .filter(|n| n.has_tag_name("polyline"))
        .filter_map(|n| n.attribute("stroke").map(str::to_string))
        .collect()
}

/// The colour of the degraded answers' line and its legend swatch.
const DEGRADED_ANSWERS: &str = "#007E5C";

#[test]
fn degraded_answers_are_a_line_of_their_own_only_when_there_are_some() {
    // The retry budget's fallbacks answer 6,000/s during the bad deploy, one
    // second of them 45,000/s: the shared scale grows to show it.
    let mut chart = realistic();
    let budget = &mut chart.panels[2];
    budget.degraded_answers = (budget.t_s.iter())
        .map(|t| match *t {
            t if t == DEPLOY + 100.0 => 45_000.0,
            t if (DEPLOY..ROLLBACK).contains(&t) => 6_000.0,
            _ => 0.0,
        })
        .collect();
    let svg = render_timeline_svg(&chart).expect("renders");
    save("timeline-degraded.svg", &svg);
    assert_well_formed(&svg);
    let texts = svg_texts(&svg);
    for text in [
        "goodput (requests answered in full)",
        "degraded answers/s (fallbacks)",
        "50k",
    ] {
        assert!(texts.iter().any(|t| t == text), "missing {text:?}");
    }
    assert!(!texts.iter().any(|t| t == "goodput (successful requests)"));
    let strokes = polyline_strokes(&svg);
    let lines = strokes.iter().filter(|c| *c == DEGRADED_ANSWERS).count();
    assert_eq!(lines, 2, "a swatch and the budget panel's line");

    // None, or all zero: no line, no legend entry, goodput as it always was.
    for none in [Vec::new(), vec![0.0; HORIZON]] {
        let mut chart = realistic();
        for panel in &mut chart.panels {
            panel.degraded_answers = none.clone();
        }
        let svg = render_timeline_svg(&chart).expect("renders");
        assert!(svg == render_timeline_svg(&realistic()).expect("renders"));
        assert!(!polyline_strokes(&svg).iter().any(|c| c == DEGRADED_ANSWERS));
        let texts = svg_texts(&svg);
        assert!(texts.iter().any(|t| t == "goodput (successful requests)"));
        assert!(!texts.iter().any(|t| t.contains("degraded answers")));
    }
}

#[test]
fn one_bucket_and_short_spans_render() {
    let one = TimelinePanel {
        name: "one bucket".into(),
        t_s: vec![5.0],
        offered_first: vec![10.0],
        offered_retry: vec![5.0],
        goodput: vec![10.0],
        degraded_answers: Vec::new(),
        capacity: None,
        queue: vec![3.0],
        verdict: None,
        degraded: vec![DegradedSpan {
            from_s: 5.0,
            to_s: 5.5,
            overload: false,
        }],
    };
    let chart = TimelineChart {
        title: "one bucket".into(),
        subtitle: String::new(),
        panels: vec![one],
        marks: vec![TimelineMark::instant("now", 5.5)],
    };
    let svg = render_timeline_svg(&chart).expect("renders");
    save("timeline-one.svg", &svg);
    assert_well_formed(&svg);
    assert!(svg.contains("time (s)"));
    assert!(
        !svg.contains("\ncapacity\n"),
        "no capacity series, no legend entry"
    );
}

/// A thundering herd of 2,000 clients retrying every 30 s: without jitter
/// they hit in one-second spikes, with full jitter the load is flat.
fn herd() -> Vec<(String, Vec<f64>, Vec<f64>)> {
    let t: Vec<f64> = (0..600).map(|i| f64::from(i) * 0.5).collect();
    let none: Vec<f64> = t
        .iter()
        .map(|t| if t % 30.0 < 0.5 { 4_000.0 } else { 0.0 })
        .collect();
    let equal: Vec<f64> = t
        .iter()
        .map(|t| {
            let phase = t % 30.0;
            if phase < 15.0 {
                0.0
            } else {
                2_000.0 / 15.0
            }
        })
        .collect();
    let full: Vec<f64> = (0..t.len())
        .map(|i| 2_000.0 / 30.0 * (1.0 + 0.2 * noise(5, i)))
        .collect();
    vec![
        ("no jitter".to_string(), t.clone(), none),
        ("equal jitter".to_string(), t.clone(), equal),
        ("full jitter".to_string(), t, full),
    ]
}

#[test]
fn load_lines_render() {
    let svg = render_load_lines_svg(
        "Thundering herd: 2,000 clients retrying every 30 s",
        "offered requests/s at the server, by jitter mode · 0.5 s buckets",
        &herd(),
    )
    .expect("renders");
    save("timeline-herd.svg", &svg);
    assert_well_formed(&svg);
    for text in [
        "no jitter · peak 4k/s",
        "full jitter",
        "offered requests/s",
        "time (s)",
    ] {
        assert!(svg.contains(text), "missing {text:?}");
    }
    let again = render_load_lines_svg(
        "Thundering herd: 2,000 clients retrying every 30 s",
        "offered requests/s at the server, by jitter mode · 0.5 s buckets",
        &herd(),
    )
    .expect("renders");
    assert!(svg == again);
}

#[test]
fn load_lines_degenerate_inputs() {
    assert!(matches!(
        render_load_lines_svg("x", "", &[]),
        Err(PlotError::NoVariants)
    ));
    let many: Vec<_> = (0..17)
        .map(|i| (format!("s{i}"), vec![0.0], vec![1.0]))
        .collect();
    assert!(matches!(
        render_load_lines_svg("x", "", &many),
        Err(PlotError::TooManyVariants { count: 17, max: 16 })
    ));
    let odd = vec![
        ("empty".to_string(), Vec::new(), Vec::new()),
        ("nan".to_string(), vec![0.0, 1.0, 2.0], vec![f64::NAN; 3]),
        ("zeros".to_string(), vec![0.0, 1.0], vec![0.0, 0.0]),
    ];
    let svg = render_load_lines_svg("odd", "", &odd).expect("renders");
    save("timeline-herd-odd.svg", &svg);
    assert_well_formed(&svg);
    assert!(svg.contains("nan · no data"));
    let svg = render_load_lines_svg("empty", "", &odd[..1]).expect("renders");
    assert!(svg.contains("\nno data\n"));
}

#[test]
fn reduction_keeps_spikes_and_drops_flat_points() {
    // Ten points in one column with a spike in the middle, then a flat run.
    let mut points: Vec<(i32, i32)> = (0..10).map(|k| (5, if k == 4 { 0 } else { 50 })).collect();
    points.extend((6..100).map(|x| (x, 50)));
    let reduced = reduce_columns(&points);
    assert_eq!(reduced, vec![(5, 50), (5, 0), (5, 50), (99, 50)]);
    // A dip is kept as well, in time order.
    let dip = reduce_columns(&[(0, 10), (0, 90), (0, 10), (1, 10)]);
    assert_eq!(dip, vec![(0, 10), (0, 90), (0, 10), (1, 10)]);
}

#[test]
fn rates_are_compact() {
    assert_eq!(format_rate(0.0), "0");
    assert_eq!(format_rate(800.0), "800");
    assert_eq!(format_rate(2_500.0), "2.5k");
    assert_eq!(format_rate(8_000.0), "8k");
    assert_eq!(format_rate(25_000.0), "25k");
    assert_eq!(format_rate(1_250_000.0), "1.25M");
    assert_eq!(format_rate(f64::NAN), "n/a");
}

#[test]
fn load_lines_past_eight_series_are_small_multiples() {
    // Twelve variants of the herd: each panel titled with its name and peak.
    let series: Vec<(String, Vec<f64>, Vec<f64>)> = (0..12)
        .map(|i| {
            let (_, t, v) = herd()[i % 3].clone();
            let scaled = v.iter().map(|x| x * (1.0 + i as f64 / 10.0)).collect();
            (format!("variant-{i}"), t, scaled)
        })
        .collect();
    let svg =
        render_load_lines_svg("twelve variants", "offered requests/s", &series).expect("renders");
    save("load-lines-12.svg", &svg);
    assert_well_formed(&svg);
    for (name, _, _) in &series {
        assert!(
            svg.contains(&format!("{name} · peak")),
            "missing panel {name}"
        );
    }
    assert!(svg.contains("grey band"));
    let height: u32 = svg
        .split("height=\"")
        .nth(1)
        .and_then(|h| h.split('"').next()?.parse().ok())
        .expect("a height");
    assert!(height > 1_000, "six rows of panels, {height} px");
}

/// The most zombie requests alive at once per bucket in three variants of a
/// checkout incident: static timeouts pile them up, a gateway deadline keeps
/// a few thousand, a budget none at all.
fn zombies() -> Vec<(String, Vec<f64>, Vec<f64>)> {
    let t: Vec<f64> = (0..180).map(|i| f64::from(i) * 10.0).collect();
    let rising = |per_bucket: f64, cap: f64| -> Vec<f64> {
        t.iter()
            .map(|t| ((t - 640.0) / 10.0 * per_bucket).clamp(0.0, cap).round())
            .collect()
    };
    vec![
        ("static-30s".to_string(), t.clone(), rising(190.0, 21_390.0)),
        ("gateway-60s".to_string(), t.clone(), rising(190.0, 2_678.0)),
        ("budget-only".to_string(), t.clone(), vec![0.0; t.len()]),
    ]
}

/// The legend texts (`name · peak …`) of a lines chart, in order.
fn legend_texts(svg: &str) -> Vec<String> {
    svg_texts(svg)
        .into_iter()
        .filter(|t| t.contains(" · peak ") || t.ends_with(" · no data"))
        .collect()
}

#[test]
fn count_lines_say_count_not_rate() {
    let series = zombies();
    let svg = render_lines_svg(
        "checkout-incident: zombie requests over time",
        "the most alive at once in each bucket",
        &LineUnit::count("zombie requests"),
        &series,
    )
    .expect("renders");
    save("zombies.svg", &svg);
    assert_well_formed(&svg);
    // One legend entry per variant, each with its peak as a plain count.
    assert_eq!(
        legend_texts(&svg),
        [
            "static-30s · peak 21.4k",
            "gateway-60s · peak 2.68k",
            "budget-only · peak 0"
        ]
    );
    let texts = svg_texts(&svg);
    assert!(texts.iter().any(|t| t == "zombie requests"));
    assert!(!texts.iter().any(|t| t.contains("/s")), "{texts:?}");
    // Each variant's colour twice: its legend swatch and its line (the
    // all-zero one too).
    let strokes = polyline_strokes(&svg);
    for color in ["#0072B2", "#E69F00", "#009E73"] {
        let n = strokes.iter().filter(|c| *c == color).count();
        assert_eq!(n, 2, "{color}: a swatch and a line");
    }
}

#[test]
fn count_axes_have_whole_ticks_only() {
    // At most 2 zombies: a rate axis would tick 0, 0.5, 1, 1.5, 2.
    let t: Vec<f64> = (0..10).map(f64::from).collect();
    let few = vec![(
        "relative-stale".to_string(),
        t,
        vec![0.0, 1.0, 2.0, 1.0, 0.0, 0.0, 2.0, 1.0, 0.0, 0.0],
    )];
    let svg =
        render_lines_svg("few", "", &LineUnit::count("zombie requests"), &few).expect("renders");
    let texts = svg_texts(&svg);
    for tick in ["0", "1", "2"] {
        assert!(texts.iter().any(|t| t == tick), "no tick {tick}: {texts:?}");
    }
    assert!(!texts.iter().any(|t| t == "0.5" || t == "1.5"), "{texts:?}");
    assert_eq!(legend_texts(&svg), ["relative-stale · peak 2"]);
}

#[test]
fn load_lines_are_lines_in_requests_per_second() {
    let a = render_load_lines_svg("herd", "sub", &herd()).expect("renders");
    let b =
        render_lines_svg("herd", "sub", &LineUnit::offered_per_second(), &herd()).expect("renders");
    assert!(a == b, "the load chart is the lines chart in requests/s");
}

#[test]
fn count_lines_degenerate_inputs() {
    let unit = LineUnit::count("zombie requests");
    assert!(matches!(
        render_lines_svg("x", "", &unit, &[]),
        Err(PlotError::NoVariants)
    ));
    let many: Vec<_> = (0..17)
        .map(|i| (format!("s{i}"), vec![0.0], vec![1.0]))
        .collect();
    assert!(matches!(
        render_lines_svg("x", "", &unit, &many),
        Err(PlotError::TooManyVariants { count: 17, max: 16 })
    ));
    let odd = vec![
        ("empty".to_string(), Vec::new(), Vec::new()),
        ("nan".to_string(), vec![0.0, 1.0], vec![f64::NAN, 3.0]),
    ];
    let svg = render_lines_svg("odd", "", &unit, &odd).expect("renders");
    assert_well_formed(&svg);
    assert_eq!(legend_texts(&svg), ["empty · no data", "nan · peak 3"]);
}

#[test]
fn count_lines_past_eight_series_are_small_multiples_in_the_same_unit() {
    let series: Vec<(String, Vec<f64>, Vec<f64>)> = (0..11)
        .map(|i| {
            let (_, t, v) = zombies()[i % 3].clone();
            (format!("variant-{i}"), t, v)
        })
        .collect();
    let svg = render_lines_svg("eleven", "", &LineUnit::count("zombie requests"), &series)
        .expect("renders");
    save("zombies-11.svg", &svg);
    assert_well_formed(&svg);
    assert_eq!(legend_texts(&svg).len(), 11);
    let texts = svg_texts(&svg);
    assert_eq!(texts.iter().filter(|t| *t == "zombie requests").count(), 11);
    assert!(!texts.iter().any(|t| t.contains("/s")), "{texts:?}");
}
