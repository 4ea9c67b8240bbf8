//! Tests of the comparison chart on realistic and degenerate inputs. The
//! rendered examples are also written to `target/plot-example/` so a person
//! can look at them (`rsvg-convert -w 1400 target/plot-example/comparison.svg
//! -o comparison.png`).

use crate::style::{lighten, series_color};
use crate::test_support::{assert_well_formed, font_sizes, save, svg_texts};
use crate::{render_comparison_svg, ComparisonChart, PlotError, VariantSeries};

/// An empirical CDF from samples, one point per distinct latency.
fn ecdf(mut samples: Vec<f64>) -> Vec<(f64, f64)> {
    samples.sort_by(f64::total_cmp);
    let n = samples.len() as f64;
    let mut out: Vec<(f64, f64)> = Vec::new();
    for (i, x) in samples.iter().enumerate() {
        let f = (i + 1) as f64 / n;
        match out.last_mut() {
            Some(last) if last.0 == *x => last.1 = f,
            _ => out.push((*x, f)),
        }
    }
    out
}

/// 70% of requests fast (around 14 ms), 30% slow, with the slow tail
/// ending so that the 99th percentile is near `p99`.
fn bimodal(p99: f64) -> Vec<(f64, f64)> {
    let mut samples = Vec::new();
    for i in 0..700 {
        samples.push(11.0 + 6.0 * f64::from(i) / 699.0);
    }
    for i in 0..300 {
        samples.push(p99 * (0.55 + 0.46 * f64::from(i) / 299.0));
    }
    ecdf(samples)
}

fn services<T: Copy>(values: [T; 3]) -> Vec<(String, T)> {
    ["gateway", "A", "B"]
        .iter()
        .zip(values)
        .map(|(s, v)| (s.to_string(), v))
        .collect()
}

fn variant(
    name: &str,
    success: f64,
    p99: f64,
    b_calls: f64,
    wasted: [u64; 3],
    cancelled: [u64; 3],
) -> VariantSeries {
    VariantSeries {
        name: name.to_string(),
        latency_cdf: bimodal(p99),
        requests: 12_000,
        success_rate: success,
        degraded_rate: 0.0,
        latency_p50_ms: 14.0,
        latency_p99_ms: p99,
        ok_latency_p99_ms: p99 * 0.6,
        calls_per_request: services([1.0, 1.0, b_calls]),
        wasted: services(wasted),
        cancelled: services(cancelled),
    }
}

/// The example from the design notes: a slow dependency B, four ways of
/// coping with it.
fn realistic() -> ComparisonChart {
    ComparisonChart {
        title: "checkout: B slows down to 400 ms for 30% of calls".to_string(),
        subtitle: "12,000 requests per variant · 200 req/s for 60 s · seed 42".to_string(),
        variants: vec![
            variant("no-timeouts", 1.0, 404.0, 1.0, [0, 0, 0], [0, 0, 0]),
            variant(
                "per-tier-timeouts",
                0.70,
                251.0,
                1.0,
                [0, 0, 3_540],
                [0, 0, 0],
            ),
            variant(
                "per-tier-retries",
                0.97,
                751.0,
                1.93,
                [0, 12, 10_620],
                [0, 0, 0],
            ),
            variant(
                "end-to-end-deadline",
                0.91,
                247.0,
                1.3,
                [0, 0, 410],
                [0, 35, 4_270],
            ),
        ],
    }
}

/// `n` variants with long names and `services` services (some long-named).
fn crowded(n: usize, n_services: usize) -> ComparisonChart {
    let names = [
        "no-timeouts",
        "per-tier-timeouts",
        "per-tier-retries",
        "end-to-end-deadline",
        "retries-with-budget",
        "hedged-requests-10ms",
        "circuit-breaker-fast",
        "load-shedding-queue",
    ];
    let svc_names = [
        "gateway",
        "auth",
        "catalog-service",
        "pricing",
        "inventory-db",
        "B",
    ];
    let variants = (0..n)
        .map(|i| {
            let p99 = 200.0 + 90.0 * i as f64;
            let per_service = |k: usize| {
                svc_names[..n_services]
                    .iter()
                    .enumerate()
                    .map(|(j, s)| (s.to_string(), (k * (i + 1) * (j + 1) * 37) as u64))
                    .collect::<Vec<_>>()
            };
            VariantSeries {
                name: names[i % names.len()].to_string(),
                latency_cdf: bimodal(p99),
                requests: 50_000,
                success_rate: 1.0 - 0.04 * i as f64,
                degraded_rate: 0.0,
                latency_p50_ms: 14.0 + i as f64,
                latency_p99_ms: p99,
                ok_latency_p99_ms: p99 / 2.0,
                calls_per_request: svc_names[..n_services]
                    .iter()
                    .enumerate()
                    .map(|(j, s)| (s.to_string(), 1.0 + 0.13 * (i * j) as f64))
                    .collect(),
                wasted: per_service(3),
                cancelled: per_service(if i % 2 == 0 { 0 } else { 2 }),
            }
        })
        .collect();
    ComparisonChart {
        title: format!("{n} variants, {n_services} services"),
        subtitle: "layout check with long names".to_string(),
        variants,
    }
}

#[test]
fn realistic_chart_is_a_readable_svg() {
    let chart = realistic();
    let svg = render_comparison_svg(&chart).expect("renders");
    save("comparison.svg", &svg);

    assert!(svg.starts_with("<svg"), "{}", &svg[..80]);
    assert!(svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("width=\"1400\"") && svg.contains("height=\"900\""));
    for v in &chart.variants {
        assert!(svg.contains(&v.name), "missing variant {}", v.name);
    }
    for text in [
        "End-to-end latency (ms, log scale)",
        "Requests with latency ≤ x (%)",
        "Requests that succeeded (%)",
        "Latency (ms)",
        "Calls received per logical request (×)",
        "Wasted ▲ / cancelled ▼ work (count)",
        "gateway",
        "p99 751 ms",
        "97.0%",
        "1.93×",
        "10.6k",
    ] {
        assert!(svg.contains(text), "missing {text:?}");
    }
    assert!(svg.contains("font-family=\"DejaVu Sans, sans-serif\""));
    let sizes = font_sizes(&svg);
    assert!(!sizes.is_empty());
    // Every text at least 14 px, titles at least 20 px, all exact.
    assert!(sizes.iter().all(|s| *s >= 14.0), "{sizes:?}");
    assert!(
        sizes.iter().all(|s| s.fract() == 0.0 || s.fract() == 0.5),
        "{sizes:?}"
    );
    assert!(sizes.contains(&28.0) && sizes.contains(&20.0) && sizes.contains(&14.0));
    // Okabe–Ito colours, variant i always the same one.
    for color in ["#0072B2", "#E69F00", "#009E73", "#D55E00"] {
        assert!(svg.contains(color), "missing colour {color}");
    }
}

#[test]
fn same_input_gives_identical_bytes() {
    let a = render_comparison_svg(&realistic()).expect("renders");
    let b = render_comparison_svg(&realistic()).expect("renders");
    assert!(a == b, "two renders of the same chart differ");
}

#[test]
fn no_variants_is_an_error() {
    let chart = ComparisonChart {
        title: "empty".into(),
        subtitle: String::new(),
        variants: Vec::new(),
    };
    assert!(matches!(
        render_comparison_svg(&chart),
        Err(PlotError::NoVariants)
    ));
}

#[test]
fn more_variants_than_colours_and_patterns_is_an_error() {
    let mut chart = crowded(16, 2);
    chart.variants.push(chart.variants[0].clone());
    assert!(matches!(
        render_comparison_svg(&chart),
        Err(PlotError::TooManyVariants { count: 17, max: 16 })
    ));
}

#[test]
fn past_eight_variants_the_chart_grows_and_stripes_the_second_round() {
    for n in [9, 16] {
        let chart = crowded(n, 3);
        let svg = render_comparison_svg(&chart).expect("renders");
        save(&format!("comparison-{n}.svg"), &svg);
        let height = crate::comparison_height(n);
        assert!(height > crate::COMPARISON_HEIGHT);
        assert!(svg.contains(&format!("height=\"{height}\"")));
        for v in &chart.variants {
            assert!(svg.contains(&v.name), "missing variant {}", v.name);
        }
        // Stripes are 2 px white lines; the first eight variants have none.
        assert!(svg.contains("stroke=\"#FFFFFF\" stroke-width=\"2\""));
    }
    let eight = render_comparison_svg(&crowded(8, 3)).expect("renders");
    assert!(!eight.contains("stroke=\"#FFFFFF\" stroke-width=\"2\""));
    assert_eq!(crate::comparison_height(8), crate::COMPARISON_HEIGHT);
}

#[test]
fn one_variant_without_requests_renders() {
    let chart = ComparisonChart {
        title: "nothing happened".into(),
        subtitle: String::new(),
        variants: vec![VariantSeries {
            name: "idle".into(),
            ..VariantSeries::default()
        }],
    };
    let svg = render_comparison_svg(&chart).expect("renders");
    save("comparison-empty.svg", &svg);
    assert!(svg.contains("no latency samples"));
    assert!(svg.contains("no requests"));
    assert!(svg.contains("no per-service data"));
}

#[test]
fn one_variant_renders() {
    let mut chart = realistic();
    chart.variants.truncate(1);
    let svg = render_comparison_svg(&chart).expect("renders");
    save("comparison-1.svg", &svg);
    assert!(svg.contains("no-timeouts"));
    assert!(svg.contains("none: no work was wasted or cancelled"));
}

#[test]
fn eight_variants_and_six_services_render() {
    let svg = render_comparison_svg(&crowded(8, 6)).expect("renders");
    save("comparison-8.svg", &svg);
    assert!(svg.contains("load-shedding-queue"));
    assert!(svg.contains("inventory-db"));
}

#[test]
fn degenerate_values_do_not_panic() {
    // All latencies equal, one at zero, NaNs and out-of-range numbers.
    let equal = VariantSeries {
        name: "all-equal".into(),
        latency_cdf: vec![(14.0, 1.0)],
        requests: 5,
        success_rate: 1.0,
        // More than succeeded: drawn as all of the successes.
        degraded_rate: 2.0,
        latency_p50_ms: 14.0,
        latency_p99_ms: 14.0,
        ok_latency_p99_ms: 14.0,
        calls_per_request: vec![("gateway".into(), 1.0)],
        wasted: vec![("gateway".into(), 0)],
        cancelled: vec![("gateway".into(), 0)],
    };
    let weird = VariantSeries {
        name: "weird-numbers-with-a-really-very-long-name-that-must-be-cut".into(),
        latency_cdf: vec![(0.0, 0.5), (f64::NAN, 0.7), (3.0, 2.0), (1.0, 0.6)],
        requests: 3,
        success_rate: f64::NAN,
        degraded_rate: 0.5,
        latency_p50_ms: f64::INFINITY,
        latency_p99_ms: -1.0,
        ok_latency_p99_ms: f64::NAN,
        calls_per_request: vec![("gateway".into(), f64::NAN), ("other".into(), 0.0)],
        wasted: vec![("other".into(), u64::MAX)],
        cancelled: Vec::new(),
    };
    let chart = ComparisonChart {
        title: "degenerate".into(),
        subtitle: "all latencies equal".into(),
        variants: vec![equal.clone()],
    };
    let svg = render_comparison_svg(&chart).expect("renders");
    save("comparison-equal.svg", &svg);
    assert!(svg.contains("all-equal"));

    let chart = ComparisonChart {
        title: "degenerate".into(),
        subtitle: String::new(),
        variants: vec![equal, weird],
    };
    let svg = render_comparison_svg(&chart).expect("renders");
    save("comparison-weird.svg", &svg);
    assert!(svg.contains('…'));
    let texts = svg_texts(&svg);
    assert!(texts.iter().any(|t| t == "0% + 100%"), "{texts:?}");
    assert!(texts.iter().any(|t| t == "n/a"), "{texts:?}");
}

/// `realistic()` with fallbacks in two variants: `per-tier-timeouts` answers
/// 20% of its requests degraded, `per-tier-retries` a sliver.
fn with_fallbacks() -> ComparisonChart {
    let mut chart = realistic();
    chart.variants[1].degraded_rate = 0.20;
    chart.variants[2].degraded_rate = 0.001;
    chart
}

/// The `fill` of every rectangle, in document order.
fn rect_fills(svg: &str) -> Vec<String> {
    roxmltree::Document::parse(svg)
        .expect("well-formed")
        .descendants()
        .filter(|n| n.has_tag_name("rect"))
        .filter_map(|n| n.attribute("fill").map(str::to_string))
        .collect()
}

/// The lighter shade of variant `i`'s colour that its degraded answers get,
/// as the SVG writes it.
fn degraded_fill(i: usize) -> String {
    let c = lighten(series_color(i), 0.55);
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

#[test]
fn degraded_answers_are_a_part_of_their_own_in_the_success_bar() {
    let chart = with_fallbacks();
    let svg = render_comparison_svg(&chart).expect("renders");
    save("comparison-degraded.svg", &svg);
    assert_well_formed(&svg);
    let texts = svg_texts(&svg);
    for text in [
        "answered in full",
        "degraded (fallbacks)",
        "Requests that succeeded (%): in full + degraded",
        // In full, then degraded, as the bar shows them.
        "50.0% + 20.0%",
        "96.9% + 0.1%",
        // Variants without fallbacks keep their one number.
        "100%",
        "91.0%",
    ] {
        assert!(
            texts.iter().any(|t| t == text),
            "missing {text:?}: {texts:?}"
        );
    }
    // One bar more in the lighter shade (which the p50 bars have too) for
    // each variant with fallbacks: the 0.1% sliver as well, a pixel wide.
    let plain = rect_fills(&render_comparison_svg(&realistic()).expect("renders"));
    let split = rect_fills(&svg);
    for (i, extra) in [(0, 0), (1, 1), (2, 1), (3, 0)] {
        let count = |fills: &[String]| fills.iter().filter(|f| **f == degraded_fill(i)).count();
        assert_eq!(count(&split), count(&plain) + extra, "variant {i}");
    }
}

#[test]
fn striped_variants_split_their_success_bars_too() {
    let mut chart = crowded(16, 3);
    for v in chart.variants.iter_mut().step_by(3) {
        v.degraded_rate = 0.3;
    }
    let svg = render_comparison_svg(&chart).expect("renders");
    save("comparison-16-degraded.svg", &svg);
    assert_well_formed(&svg);
    // Variant 15 (striped) succeeds 40%: 10% in full, 30% degraded.
    let texts = svg_texts(&svg);
    assert!(texts.iter().any(|t| t == "10.0% + 30.0%"), "{texts:?}");
}

#[test]
fn without_degraded_answers_the_success_bars_are_plain() {
    let svg = render_comparison_svg(&realistic()).expect("renders");
    let texts = svg_texts(&svg);
    assert!(texts.iter().any(|t| t == "Requests that succeeded (%)"));
    assert!(texts.iter().any(|t| t == "97.0%"));
    assert!(
        !texts
            .iter()
            .any(|t| t.contains("degraded") || t == "answered in full"),
        "{texts:?}"
    );
}

#[test]
fn names_are_escaped() {
    let mut chart = realistic();
    chart.variants[0].name = "a<b & \"c\"".into();
    let svg = render_comparison_svg(&chart).expect("renders");
    assert!(svg.contains("a&lt;b &amp;"));
    assert!(!svg.contains("a<b"));
}
