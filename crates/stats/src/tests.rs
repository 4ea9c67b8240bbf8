use super::*;
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// The probabilities the intervals use (two-sided 95%, 99%, 99.9%) and a
/// few others, both tails.
const LEVELS: [f64; 12] = [
    0.0005, 0.005, 0.025, 0.1, 0.3, 0.45, 0.55, 0.7, 0.9, 0.975, 0.995, 0.9995,
];

fn relative_error(ours: f64, reference: f64) -> f64 {
    ((ours - reference) / reference).abs()
}

#[test]
fn normal_quantile_matches_statrs() {
    let normal = Normal::new(0.0, 1.0).unwrap();
    for p in LEVELS
        .into_iter()
        .chain([1e-12, 1e-6, 0.999_999, 1.0 - 1e-12])
    {
        let (ours, reference) = (normal_quantile(p), normal.inverse_cdf(p));
        assert!(
            relative_error(ours, reference) < 1e-13,
            "p = {p}: {ours} against statrs' {reference}"
        );
    }
}

/// Φ⁻¹(0.975) and Φ⁻¹(0.995) within two units in the last place (mpmath:
/// 1.95996398454005423552 and 2.57582930354890076099), and the symmetry.
#[test]
fn normal_quantile_known_values() {
    assert!(relative_error(normal_quantile(0.975), 1.959_963_984_540_054_2) < 2.5e-16);
    assert!(relative_error(normal_quantile(0.995), 2.575_829_303_548_901) < 2.5e-16);
    assert_eq!(normal_quantile(0.5), 0.0);
    for p in DYADIC {
        assert_eq!(normal_quantile(p), -normal_quantile(1.0 - p), "p = {p}");
    }
    assert_eq!(normal_quantile(0.0), f64::NEG_INFINITY);
    assert_eq!(normal_quantile(1.0), f64::INFINITY);
    assert!(normal_quantile(1.5).is_nan() && normal_quantile(f64::NAN).is_nan());
}

/// Where statrs is accurate, the two agree to 10⁻¹², relative to the
/// quantile or to 1 near the median (statrs stops its Newton steps at about
/// 10⁻¹³ of the beta's argument, AS R83; and its ln B(a, b) is a difference
/// of two ln Γs, which loses digits as the degrees of freedom grow: at
/// 1,000, ln Γ(500) is 2,600, whose last bit is 5·10⁻¹³).
#[test]
fn student_t_quantile_matches_statrs() {
    let dofs = (1..=120)
        .map(f64::from)
        .chain([150.5, 200.0, 333.0, 500.0, 1000.0]);
    for dof in dofs {
        let t = StudentsT::new(0.0, 1.0, dof).unwrap();
        for p in LEVELS {
            let (ours, reference) = (student_t_quantile(p, dof), t.inverse_cdf(p));
            assert!(
                (ours - reference).abs() < 1e-12 * reference.abs().max(1.0),
                "dof {dof}, p = {p}: {ours} against statrs' {reference}"
            );
        }
    }
}

/// One and two degrees of freedom have closed forms. Each quantile q is
/// checked by its tail, computed the other way and without cancellation:
/// P(T > q) = atan(1/q)/π at one, for q the quantile of the lower tail
/// negated (1 − tail rounds),, 1/(s·(s + q)) with s = √(2 + q²) at two
/// (that is ½ − q/(2s)). A tail's relative error is about ν times its
/// quantile's, so a few units in the last place are allowed.
#[test]
fn student_t_quantile_closed_forms() {
    let tails = [
        1e-300, 1e-100, 1e-10, 1e-6, 0.0005, 0.005, 0.025, 0.1, 0.3, 0.45,
    ];
    for tail in tails {
        let cauchy = -student_t_quantile(tail, 1.0);
        let back = libm::atan(1.0 / cauchy) / PI;
        assert!(
            relative_error(back, tail) < 4e-15,
            "tail {tail}: {cauchy} gives {back}"
        );
        let two = -student_t_quantile(tail, 2.0);
        let s = (2.0 + two * two).sqrt();
        let back = 1.0 / (s * (s + two));
        // At 10⁻³⁰⁰ the quantile is 7·10¹⁴⁹ and q² overflows: its leading term.
        let back = if s.is_finite() {
            back
        } else {
            1.0 / (2.0 * two * two)
        };
        assert!(
            relative_error(back, tail) < 4e-15,
            "tail {tail}: {two} gives {back}"
        );
    }
}

/// Quantiles to 19 digits from mpmath at 40 (`python3
/// crates/stats/reference-quantiles.py`), of each p as the f64 it is: the
/// intervals' levels across the methods (Newton on the continued fraction
/// below 4,000 degrees of freedom, Cornish–Fisher from 4,000 on), far tails
/// (the Cauchy's, heavy tails where t²/ν overflows, tails too far for
/// Cornish–Fisher), and the median's neighbourhood. All within 6·10⁻¹⁴ of
/// the truth; the largest errors are the continued fraction's rounding just
/// below 4,000 degrees of freedom (4·10⁻¹⁴ at 3,999) and the far tails of
/// a fraction of a degree of freedom (5·10⁻¹⁴ at ½ and 10⁻¹⁰⁰), where a
/// quantile's error is its tail's over ν.
#[test]
fn quantiles_match_high_precision_references() {
    let mut worst = (0.0, 0.0, None);
    for (p, dof, expected) in REFERENCE_QUANTILES {
        let ours = match dof {
            Some(dof) => student_t_quantile(p, dof),
            None => normal_quantile(p),
        };
        let error = relative_error(ours, expected);
        assert!(
            error < 6e-14,
            "dof {dof:?}, p = {p}: {ours} against {expected} ({error:.1e})"
        );
        if error > worst.0 {
            worst = (error, p, dof);
        }
    }
    eprintln!(
        "largest relative error {:.1e} (p = {}, dof {:?})",
        worst.0, worst.1, worst.2
    );
}

/// (p, degrees of freedom or `None` for the normal, quantile), from
/// `reference-quantiles.py`, its 19 digits as printed (more than an f64
/// holds: the nearest is taken).
#[rustfmt::skip]
#[allow(clippy::excessive_precision)]
const REFERENCE_QUANTILES: [(f64, Option<f64>, f64); 66] = [
    (0.9, Some(3.0), 1.637744353696210322),
    (0.975, Some(3.0), 3.182446305283708436),
    (0.995, Some(3.0), 5.840909309733355411),
    (0.9995, Some(3.0), 12.92397863668796432),
    (0.9, Some(10.0), 1.372183641110335775),
    (0.975, Some(10.0), 2.228138851986274225),
    (0.995, Some(10.0), 3.169272672616950712),
    (0.9995, Some(10.0), 4.586893858702707738),
    (0.9, Some(30.0), 1.310415025391395711),
    (0.975, Some(30.0), 2.042272456301237888),
    (0.995, Some(30.0), 2.749995653567224966),
    (0.9995, Some(30.0), 3.645958635042062808),
    (0.9, Some(100.0), 1.290074761346516098),
    (0.975, Some(100.0), 1.983971518523551895),
    (0.995, Some(100.0), 2.625890521438017607),
    (0.9995, Some(100.0), 3.390491311164263613),
    (0.9, Some(1000.0), 1.282398721460924564),
    (0.975, Some(1000.0), 1.962339080826408104),
    (0.995, Some(1000.0), 2.580754698065950771),
    (0.9995, Some(1000.0), 3.300282648423944156),
    (0.9, Some(3000.0), 1.281833823908842365),
    (0.975, Some(3000.0), 1.960755055322458073),
    (0.995, Some(3000.0), 2.577469134838607982),
    (0.9995, Some(3000.0), 3.293772880685501229),
    (0.9, Some(3999.0), 1.281763300363714337),
    (0.975, Some(3999.0), 1.960557377186027383),
    (0.995, Some(3999.0), 2.57705930044838395),
    (0.9995, Some(3999.0), 3.292961407380423355),
    (0.9, Some(4000.0), 1.281763247421085141),
    (0.975, Some(4000.0), 1.960557228793733341),
    (0.995, Some(4000.0), 2.577058992810986454),
    (0.9995, Some(4000.0), 3.292960798302604906),
    (0.9, Some(10000.0), 1.281636229730477671),
    (0.975, Some(10000.0), 1.960201239890625878),
    (0.995, Some(10000.0), 2.576321046668528585),
    (0.9995, Some(10000.0), 3.291499965941635691),
    (0.9, Some(100000.0), 1.281560031449361141),
    (0.975, Some(100000.0), 1.959987707534609259),
    (0.995, Some(100000.0), 2.575878469908374996),
    (0.9995, Some(100000.0), 3.290624031411913658),
    (0.9, Some(1000000.0), 1.281552412129938607),
    (0.975, Some(1000000.0), 1.959966356814106655),
    (0.995, Some(1000000.0), 2.575834220105333847),
    (0.9995, Some(1000000.0), 3.290536461248722117),
    (0.9, Some(10000000.0), 1.281551650203083015),
    (0.975, Some(10000000.0), 1.95996422176720511),
    (0.995, Some(10000000.0), 2.575829795203748663),
    (0.9995, Some(10000000.0), 3.290527704465253435),
    (1e-06, Some(1.0), -318309.8861827434884),
    (1e-10, Some(1.0), -3183098861.837906599),
    (0.9999999999999999, Some(1.0), 2867080569611329.323),
    (1e-300, Some(1.0), -3.183098861837906636e+299),
    (1e-100, Some(0.5), -1.028491156316339971e+199),
    (1e-300, Some(1.5), -5.219469427344636329e+199),
    (1e-20, Some(0.1), -1.604425705666529507e+196),
    (1e-16, Some(4000.0), -8.257464211676918313),
    (1e-300, Some(4000.0), -40.46723042467179766),
    (1e-300, Some(10000.0), -38.35638432100424074),
    (1e-300, Some(100000.0), -37.17467066546621908),
    (0.5000000001, None, 2.506628482030353902e-10),
    (0.4999999999, None, -2.506628482030353902e-10),
    (0.500001, None, 2.506628274705705199e-6),
    (0.5000000001, Some(5.0), 2.63430574210368879e-10),
    (0.500001, Some(30.0), 2.527600226198822733e-6),
    (0.5000000000009095, Some(2.0), 2.572439484307497057e-12),
    (0.6, Some(27.0), 0.2558576589068772037),
];

/// Probabilities p whose 1 − p is exact, for the symmetry.
const DYADIC: [f64; 6] = [
    1.0 / 1024.0,
    1.0 / 64.0,
    3.0 / 128.0,
    1.0 / 8.0,
    3.0 / 8.0,
    511.0 / 1024.0,
];

#[test]
fn student_t_quantile_symmetry_and_edges() {
    for dof in [1.0, 2.0, 3.0, 7.5, 40.0, 1e6] {
        assert_eq!(student_t_quantile(0.5, dof), 0.0);
        for p in DYADIC {
            assert_eq!(
                student_t_quantile(p, dof),
                -student_t_quantile(1.0 - p, dof),
                "dof {dof}, p = {p}"
            );
        }
        assert_eq!(student_t_quantile(1.0, dof), f64::INFINITY);
        assert_eq!(student_t_quantile(0.0, dof), f64::NEG_INFINITY);
    }
    assert!(student_t_quantile(0.975, 0.0).is_nan());
    assert!(student_t_quantile(0.975, -3.0).is_nan());
    assert!(student_t_quantile(0.975, f64::NAN).is_nan());
    // Subnormal degrees of freedom: beyond the largest f64 (it was the
    // normal's quantile, ln B(ν/2, ½) having overflowed).
    for dof in [1e-310, 5e-324] {
        assert_eq!(student_t_quantile(0.975, dof), f64::INFINITY, "dof {dof}");
        assert_eq!(student_t_quantile(0.4, dof), f64::NEG_INFINITY, "dof {dof}");
    }
    assert!(student_t_quantile(1.2, 5.0).is_nan());
}

/// The series for ln(Γ(a + ½)/Γ(a)) takes over from two `lgamma`s at 16:
/// there the two agree to the `lgamma`s' rounding (a few of their last
/// bits, ln Γ being near 30), which a wrong sign or a wrong coefficient but
/// the smallest would not. (The smallest, 31/18432/a⁹, is 2.4·10⁻¹⁴ at 16,
/// about the `lgamma`s' own error; the t quantiles' tests above cover it.)
#[test]
fn ln_beta_half_series_agrees_with_lgamma_where_both_hold() {
    for a in [16.0, 16.5, 17.0, 20.0, 24.5, 30.0] {
        let (low, high) = (libm::lgamma(a), libm::lgamma(a + 0.5));
        let direct = low + beta_tests::LN_GAMMA_HALF - high;
        let series = beta::ln_beta_half(a);
        let rounding = 4.0 * f64::EPSILON * (low.abs() + high.abs());
        assert!(
            (direct - series).abs() < rounding,
            "a = {a}: lgamma gives {direct}, the series {series}"
        );
    }
}

mod beta_tests {
    /// ln Γ(½), as `beta` has it.
    pub const LN_GAMMA_HALF: f64 = 0.572_364_942_924_700_1;
}

/// Far tails of few degrees of freedom, where the density underflows and
/// Newton's tangent is lost (the quantile was −∞): finite, ordered, and at
/// the tail's leading term, P(T > t) ≈ K·t^(−ν)/ν with
/// K = Γ((ν+1)/2)·ν^((ν+1)/2)/(√(νπ)·Γ(ν/2)) (mpmath at 50 digits; the next
/// term is below 10⁻²⁸ of it at these t).
#[test]
fn far_tails_of_few_degrees_of_freedom_are_finite_and_ordered() {
    for dof in [1.5, 2.5, 3.0, 7.0, 33.0] {
        let mut previous = f64::NEG_INFINITY;
        for tail in [1e-20, 1e-100, 1e-200, 1e-300] {
            let q = -student_t_quantile(tail, dof);
            assert!(q.is_finite() && q > previous, "dof {dof}, tail {tail}: {q}");
            previous = q;
        }
    }
    for (dof, tail, expected) in [
        (3.0, 1e-100, 2.225_769_823_822_442e33),
        (3.0, 1e-300, 1.033_110_836_044_653e100),
        (7.0, 1e-100, 3.878_625_840_495_399e14),
        (7.0, 1e-300, 1.445_794_132_648_190_4e43),
    ] {
        let q = -student_t_quantile(tail, dof);
        assert!(
            relative_error(q, expected) < 1e-12,
            "dof {dof}, tail {tail}: {q} against {expected}"
        );
    }
}
