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

/// One and two degrees of freedom have closed forms; the t quantile at 1
/// is 1/tan(πα) (the Cauchy's), at 2 it is (2p − 1)/√(2p(1 − p)).
#[test]
fn student_t_quantile_closed_forms() {
    for p in LEVELS {
        let cauchy = -1.0 / libm::tan(PI * p);
        assert!(
            (student_t_quantile(p, 1.0) - cauchy).abs() < 1e-13 * cauchy.abs().max(1.0),
            "p = {p}"
        );
        let two = (2.0 * p - 1.0) / (2.0 * p * (1.0 - p)).sqrt();
        assert!((student_t_quantile(p, 2.0) - two).abs() < 1e-15 * two.abs().max(1.0));
    }
}

/// Quantiles to 19 digits from mpmath at 40 (`python3
/// crates/stats/reference-quantiles.py`), across the methods: Newton on the
/// continued fraction below 4,000 degrees of freedom, Cornish–Fisher from
/// 4,000 on. Both keep within 10⁻¹³ of the truth (the continued fraction's
/// rounding at 3,000 is 2·10⁻¹⁴).
#[test]
fn student_t_quantile_matches_high_precision_references() {
    for (p, dof, expected) in REFERENCE_QUANTILES {
        let ours = student_t_quantile(p, dof);
        assert!(
            relative_error(ours, expected) < 1e-13,
            "dof {dof}, p = {p}: {ours} against {expected} ({:.1e})",
            relative_error(ours, expected)
        );
    }
}

/// (p, degrees of freedom, quantile), from `reference-quantiles.py`, its
/// 19 digits as printed (more than an f64 holds: the nearest is taken).
#[rustfmt::skip]
#[allow(clippy::excessive_precision)]
const REFERENCE_QUANTILES: [(f64, f64, f64); 44] = [
    (0.9, 3.0e+00, 1.637744353696210105),
    (0.975, 3.0e+00, 3.182446305283709593),
    (0.995, 3.0e+00, 5.840909309733357261),
    (0.9995, 3.0e+00, 12.92397863668748307),
    (0.9, 1.0e+01, 1.372183641110335627),
    (0.975, 1.0e+01, 2.228138851986274748),
    (0.995, 1.0e+01, 3.169272672616951235),
    (0.9995, 1.0e+01, 4.5868938587026359),
    (0.9, 3.0e+01, 1.310415025391395578),
    (0.975, 3.0e+01, 2.04227245630123831),
    (0.995, 3.0e+01, 2.749995653567225332),
    (0.9995, 3.0e+01, 3.645958635042021816),
    (0.9, 1.0e+02, 1.290074761346515969),
    (0.975, 1.0e+02, 1.983971518523552287),
    (0.995, 1.0e+02, 2.625890521438017931),
    (0.9995, 1.0e+02, 3.390491311164229919),
    (0.9, 1.0e+03, 1.282398721460924437),
    (0.975, 1.0e+03, 1.962339080826408485),
    (0.995, 1.0e+03, 2.580754698065951079),
    (0.9995, 1.0e+03, 3.30028264842391291),
    (0.9, 3.0e+03, 1.281833823908842238),
    (0.975, 3.0e+03, 1.960755055322458454),
    (0.995, 3.0e+03, 2.577469134838608289),
    (0.9995, 3.0e+03, 3.293772880685470157),
    (0.9, 4.0e+03, 1.281763247421085015),
    (0.975, 4.0e+03, 1.960557228793733721),
    (0.995, 4.0e+03, 2.577058992810986762),
    (0.9995, 4.0e+03, 3.292960798302573856),
    (0.9, 1.0e+04, 1.281636229730477544),
    (0.975, 1.0e+04, 1.960201239890626258),
    (0.995, 1.0e+04, 2.576321046668528893),
    (0.9995, 1.0e+04, 3.29149996594160468),
    (0.9, 1.0e+05, 1.281560031449361014),
    (0.975, 1.0e+05, 1.959987707534609639),
    (0.995, 1.0e+05, 2.575878469908375303),
    (0.9995, 1.0e+05, 3.29062403141188267),
    (0.9, 1.0e+06, 1.28155241212993848),
    (0.975, 1.0e+06, 1.959966356814107035),
    (0.995, 1.0e+06, 2.575834220105334154),
    (0.9995, 1.0e+06, 3.290536461248691131),
    (0.9, 1.0e+07, 1.281551650203082888),
    (0.975, 1.0e+07, 1.95996422176720549),
    (0.995, 1.0e+07, 2.575829795203748971),
    (0.9995, 1.0e+07, 3.29052770446522245),
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
