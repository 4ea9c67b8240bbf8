//! Tests of the wasted-work chart on a realistic incident and on degenerate
//! inputs. The rendered examples are written to `target/plot-example/` so a
//! person can look at them (`rsvg-convert -w 1400
//! target/plot-example/wasted.svg -o wasted.png`).

use crate::test_support::{assert_well_formed, save, svg_texts};
use crate::{render_wasted_svg, PlotError, ServiceWaste, WastedChart, WastedVariant};

const TIERS: [&str; 4] = ["gateway", "order", "inventory", "db"];

/// A variant whose tiers wasted, cancelled and expired these counts.
fn variant(name: &str, counts: [[u64; 3]; 4]) -> WastedVariant {
    WastedVariant {
        name: name.to_string(),
        services: TIERS
            .iter()
            .zip(counts)
            .map(|(s, [wasted, cancelled, expired])| ServiceWaste {
                name: s.to_string(),
                wasted,
                cancelled,
                expired,
            })
            .collect(),
    }
}

/// The checkout incident: static timeouts waste work at every tier, a
/// gateway deadline cancels it below the gateway, a budget expires it at the
/// database.
fn checkout() -> WastedChart {
    WastedChart {
        title: "checkout-incident: work done for no one, per service".into(),
        subtitle: "whole run, seed 1".into(),
        variants: vec![
            variant(
                "static-30s",
                [
                    [130_521, 0, 0],
                    [130_518, 0, 0],
                    [130_518, 0, 0],
                    [108_954, 0, 0],
                ],
            ),
            variant(
                "gateway-30s",
                [[1_224, 0, 0], [3, 1_221, 0], [3, 1_221, 0], [3, 1_221, 0]],
            ),
            variant(
                "gateway-60s",
                [
                    [128_354, 0, 0],
                    [128_354, 0, 0],
                    [128_354, 0, 0],
                    [109_987, 18_367, 0],
                ],
            ),
            variant("budget-only", [[0; 3], [0; 3], [0; 3], [0, 0, 1_144]]),
        ],
    }
}

#[test]
fn checkout_incident_is_a_readable_svg() {
    let chart = checkout();
    let svg = render_wasted_svg(&chart).expect("renders");
    save("wasted.svg", &svg);
    assert_well_formed(&svg);
    assert!(svg.contains("width=\"1400\""));
    let texts = svg_texts(&svg);
    let count = |text: &str| texts.iter().filter(|t| *t == text).count();
    // One group title per variant, one row name per service in each.
    for v in &chart.variants {
        assert_eq!(count(&v.name), 1, "group {}", v.name);
    }
    for tier in TIERS {
        assert_eq!(count(tier), chart.variants.len(), "rows of {tier}");
    }
    // The counts, written out after their bars.
    for (label, times) in [
        ("130,521 wasted", 1),
        ("3 wasted · 1,221 cancelled", 3),
        ("109,987 wasted · 18,367 cancelled", 1),
        ("1,144 expired", 1),
    ] {
        assert_eq!(count(label), times, "{label:?}");
    }
    assert_eq!(count("none"), 3, "budget-only's clean tiers");
    // The legend names each kind once, and the axis says what is counted.
    for kind in ["wasted:", "cancelled:", "expired:"] {
        assert_eq!(
            texts.iter().filter(|t| t.starts_with(kind)).count(),
            1,
            "legend entry {kind}"
        );
    }
    assert_eq!(count("calls that served no one (count)"), 1);
    assert!(svg.contains("#D55E00") && svg.contains("#56B4E9"));
}

#[test]
fn same_input_gives_identical_bytes() {
    let a = render_wasted_svg(&checkout()).expect("renders");
    let b = render_wasted_svg(&checkout()).expect("renders");
    assert!(a == b, "two renders of the same chart differ");
}

#[test]
fn no_variants_or_too_many_is_an_error() {
    let empty = WastedChart::default();
    assert!(matches!(
        render_wasted_svg(&empty),
        Err(PlotError::NoVariants)
    ));
    let many = WastedChart {
        variants: (0..17)
            .map(|i| variant(&format!("v{i}"), [[1, 0, 0]; 4]))
            .collect(),
        ..WastedChart::default()
    };
    assert!(matches!(
        render_wasted_svg(&many),
        Err(PlotError::TooManyVariants { count: 17, max: 16 })
    ));
}

#[test]
fn clean_variants_and_tiers_take_one_line_each() {
    // deadline-chain: the gateway never wastes anything, no-timeouts nothing
    // at all, and nothing expires anywhere.
    let chart = WastedChart {
        title: "deadline-chain".into(),
        subtitle: String::new(),
        variants: vec![
            variant("no-timeouts", [[0; 3]; 4]),
            variant(
                "per-tier-retries",
                [[0; 3], [82, 0, 0], [54, 120, 0], [0; 3]],
            ),
        ],
    };
    let svg = render_wasted_svg(&chart).expect("renders");
    save("wasted-clean-tiers.svg", &svg);
    assert_well_formed(&svg);
    let texts = svg_texts(&svg);
    assert!(texts
        .iter()
        .any(|t| t == "nothing wasted, cancelled or expired"));
    // gateway and db are left out of every group, and said so once.
    assert!(!texts.iter().any(|t| t == "gateway" || t == "db"));
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("not shown") && t.ends_with(": gateway, db")),
        "{texts:?}"
    );
    // Only the kinds that occur are in the legend.
    assert!(!texts.iter().any(|t| t.starts_with("expired:")));
    assert!(texts.iter().any(|t| t == "54 wasted · 120 cancelled"));
    // Small counts get whole-number ticks.
    assert!(!texts.iter().any(|t| t.contains('.')), "{texts:?}");
}

#[test]
fn all_zero_and_odd_inputs_render() {
    let zero = WastedChart {
        variants: vec![variant("calm", [[0; 3]; 4])],
        ..WastedChart::default()
    };
    let svg = render_wasted_svg(&zero).expect("renders");
    assert_well_formed(&svg);
    assert!(svg_texts(&svg)
        .iter()
        .any(|t| t == "nothing wasted, cancelled or expired"));

    let odd = WastedChart {
        title: "odd".into(),
        subtitle: String::new(),
        variants: vec![
            WastedVariant {
                name: "no services".into(),
                services: Vec::new(),
            },
            WastedVariant {
                name: "a variant whose name goes on and on ".repeat(8),
                services: vec![ServiceWaste {
                    name: "a-service-whose-name-is-far-too-long-for-its-column".into(),
                    wasted: u64::MAX,
                    cancelled: u64::MAX,
                    expired: 1,
                }],
            },
        ],
    };
    let svg = render_wasted_svg(&odd).expect("renders");
    save("wasted-odd.svg", &svg);
    assert_well_formed(&svg);
    assert!(svg.contains('…'), "long names are shortened");
}

#[test]
fn names_are_escaped() {
    let mut chart = checkout();
    chart.variants[0].name = "a<b & \"c\"".into();
    let svg = render_wasted_svg(&chart).expect("renders");
    assert!(svg.contains("a&lt;b &amp;"));
    assert!(!svg.contains("a<b"));
}
