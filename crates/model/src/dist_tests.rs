use super::*;
use stormsim_engine::StreamKey;
fn sample_mean(d: &Dist, n: usize) -> f64 {
    let mut rng = StreamKey::root(11).rng();
    (0..n).map(|_| d.sample(&mut rng).as_ms()).sum::<f64>() / n as f64
}

#[test]
fn mixture_picks_components_with_their_probabilities() {
    // S1's B: 70% 10 ms, 30% 400 ms. The share of slow draws in n = 100k is
    // binomial: sd = sqrt(0.21/n) ≈ 0.00145; bound at 5 sd.
    let d = Dist::Mixture {
        cumulative: vec![0.7, 1.0],
        parts: vec![
            Dist::Constant(SimDuration::from_ms(10.0)),
            Dist::Constant(SimDuration::from_ms(400.0)),
        ],
    };
    let n = 100_000;
    let mut rng = StreamKey::root(5).rng();
    let slow = (0..n)
        .filter(|_| d.sample(&mut rng) == SimDuration::from_ms(400.0))
        .count();
    let share = slow as f64 / n as f64;
    assert!(
        (share - 0.3).abs() < 5.0 * (0.21f64 / n as f64).sqrt(),
        "{share}"
    );
    assert!((d.mean_ms() - 127.0).abs() < 1e-9);
}

#[test]
fn lognormal_quantiles_land_where_asked() {
    let d = Dist::lognormal_from_quantiles(20.0, 80.0);
    let mut rng = StreamKey::root(9).rng();
    let mut xs: Vec<f64> = (0..200_000).map(|_| d.sample(&mut rng).as_ms()).collect();
    xs.sort_by(f64::total_cmp);
    let median = xs[100_000];
    let p99 = xs[198_000];
    // Order-statistic noise at n = 200k is well under 2% at these quantiles.
    assert!((median / 20.0 - 1.0).abs() < 0.02, "median {median}");
    assert!((p99 / 80.0 - 1.0).abs() < 0.03, "p99 {p99}");
}

#[test]
fn sample_means_match_analytic_means() {
    // sd of the mean of n = 100k samples: uniform (10-2)/sqrt(12)/sqrt(n) ≈ 0.0073,
    // exponential 5/sqrt(n) ≈ 0.016. Bound at 5 sd.
    let u = Dist::Uniform {
        min_ms: 2.0,
        max_ms: 10.0,
    };
    assert!((sample_mean(&u, 100_000) - 6.0).abs() < 5.0 * 0.0073);
    let e = Dist::Exponential { mean_ms: 5.0 };
    assert!((sample_mean(&e, 100_000) - 5.0).abs() < 5.0 * 0.016);
}

// The checks of the kinds below compare draws with the distribution's own
// mean and CDF, with tolerances from sampling error alone: a sample mean is
// within Z standard errors, sqrt(Var/n) with Var the distribution's (not the
// sample's), and the share of draws at most a point x is within Z binomial
// standard errors, sqrt(p(1 − p)/n) with p = F(x) (a quantile's error, in the
// probability scale, where it needs no density). At Z = 5 a correct sampler
// fails one check with probability about 6e-7 (two-sided normal tail), so
// the few dozen checks here fail together for fewer than one seed in 10,000:
// no seed was chosen to make them pass.
const Z: f64 = 5.0;
const N: usize = 200_000;

/// `N` draws of `d`, in ms, from a stream of its own: before the rounding to
/// whole ns, which moves the quantiles within a ns of 0 that some shapes have
/// (a gamma of shape 0.2 has its p5 at 1 ns).
fn draws(d: &Dist, seed: u64) -> Vec<f64> {
    let mut rng = StreamKey::root(seed).label("dist_tests").rng();
    (0..N).map(|_| d.sample_ms(&mut rng)).collect()
}

fn assert_mean(xs: &[f64], mean: f64, variance: f64) {
    let got = xs.iter().sum::<f64>() / xs.len() as f64;
    let tolerance = Z * (variance / xs.len() as f64).sqrt();
    assert!(
        (got - mean).abs() <= tolerance,
        "sample mean {got}, want {mean} ± {tolerance}"
    );
}

/// The share of `xs` at most `x` against `p` = F(x).
fn assert_cdf(xs: &[f64], x: f64, p: f64) {
    // The binomial's normal approximation, which Z assumes, needs a hundred or
    // so draws on each side: at n·p ≈ 0.1 one stray draw is 15 "standard errors".
    assert!(
        xs.len() as f64 * p.min(1.0 - p) >= 100.0,
        "p = {p} is too extreme to check with {} draws",
        xs.len()
    );
    let got = xs.iter().filter(|&&v| v <= x).count() as f64 / xs.len() as f64;
    let tolerance = Z * (p * (1.0 - p) / xs.len() as f64).sqrt();
    assert!(
        (got - p).abs() <= tolerance,
        "share ≤ {x}: {got}, want {p} ± {tolerance}"
    );
}

fn close(got: f64, want: f64) {
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
        "got {got}, want {want}"
    );
}

/// A dashboard's p50 12, p90 40, p99 180, p99.9 600 and max 1500 ms, from 0.
fn dashboard() -> Dist {
    Dist::Empirical {
        ms: vec![0.0, 12.0, 40.0, 180.0, 600.0, 1500.0],
        cdf: vec![0.0, 0.5, 0.9, 0.99, 0.999, 1.0],
    }
}

/// Inversion kinds take one `unit()` per sample, and the sample is the inverse
/// CDF at it: what keeps common random numbers aligned across variants.
fn assert_one_draw_by_inversion(d: &Dist, inverse: impl Fn(f64) -> f64) {
    for i in 0..100 {
        let key = StreamKey::root(3).index(i);
        let mut sampled = key.rng();
        let got = d.sample(&mut sampled);
        let mut expected = key.rng();
        let u = expected.unit();
        assert_eq!(got, SimDuration::from_ms(inverse(u)), "u = {u}");
        assert_eq!(
            sampled.next_u64(),
            expected.next_u64(),
            "one draw, not more"
        );
    }
}

#[test]
fn a_quantile_table_is_inverted_by_straight_lines_between_its_points() {
    let Dist::Empirical { ms, cdf } = dashboard() else {
        unreachable!()
    };
    let at = |u| empirical_quantile(&ms, &cdf, u);
    close(at(0.0), 0.0);
    close(at(0.25), 6.0); // halfway from (0, 0) to (12, 0.5)
    close(at(0.5), 12.0); // a point is its own quantile
    close(at(0.7), 26.0); // halfway from 12 to 40
    close(at(0.95), 40.0 + 140.0 * 5.0 / 9.0); // 117.78: 5/9 of 0.9 → 0.99
    close(at(0.995), 180.0 + 420.0 * 5.0 / 9.0); // 413.33
    close(at(0.9995), 1050.0); // halfway from 600 to 1500
    close(
        at(1.0 - f64::EPSILON / 2.0),
        1500.0 - 900.0 * f64::EPSILON / 2.0 / 0.001,
    );
    // Mean: each segment's midpoint by its probability,
    // 0.5·6 + 0.4·26 + 0.09·110 + 0.009·390 + 0.001·1050.
    close(dashboard().mean_ms(), 27.86);
    // E[X²]: each segment's (a² + ab + b²)/3 by its probability,
    // 0.5·48 + 0.4·2224/3 + 0.09·41200/3 + 0.009·166800 + 0.001·1170000.
    close(dashboard().second_moment_ms2(), 4_227.733_333_333_333);
    assert_one_draw_by_inversion(&dashboard(), at);
}

#[test]
fn a_quantile_table_has_atoms_where_ms_repeats_and_gaps_where_q_does() {
    // 30%..80% exactly 10 ms.
    let atom = Dist::Empirical {
        ms: vec![0.0, 10.0, 10.0, 20.0],
        cdf: vec![0.0, 0.3, 0.8, 1.0],
    };
    let Dist::Empirical { ms, cdf } = &atom else {
        unreachable!()
    };
    close(empirical_quantile(ms, cdf, 0.3), 10.0);
    close(empirical_quantile(ms, cdf, 0.6), 10.0);
    close(empirical_quantile(ms, cdf, 0.9), 15.0);
    close(atom.mean_ms(), 0.3 * 5.0 + 0.5 * 10.0 + 0.2 * 15.0);
    // Nothing between 10 and 30 ms: the CDF jumps at q = 0.5.
    let gap = Dist::Empirical {
        ms: vec![0.0, 10.0, 30.0, 40.0],
        cdf: vec![0.0, 0.5, 0.5, 1.0],
    };
    let Dist::Empirical { ms, cdf } = &gap else {
        unreachable!()
    };
    close(empirical_quantile(ms, cdf, 0.5 - 1e-9), 10.0 - 2e-8);
    close(empirical_quantile(ms, cdf, 0.5), 30.0);
    close(gap.mean_ms(), 0.5 * 5.0 + 0.5 * 35.0);
    let xs = draws(&gap, 1);
    assert!(!xs.iter().any(|&x| x > 10.0 && x < 30.0));
}

#[test]
fn quantile_table_draws_have_its_mean_and_quantiles() {
    let d = dashboard();
    let xs = draws(&d, 1);
    assert_mean(&xs, 27.86, 4_227.733_333_333_333 - 27.86 * 27.86);
    for (x, p) in [
        (6.0, 0.25),
        (12.0, 0.5),
        (40.0, 0.9),
        (117.777_777_777_777_8, 0.95),
        (180.0, 0.99),
        (600.0, 0.999),
    ] {
        assert_cdf(&xs, x, p);
    }
    assert!(xs.iter().all(|&x| (0.0..=1500.0).contains(&x)));
}

#[test]
fn histogram_buckets_are_uniform_within() {
    // Cumulative buckets ≤10: 500, ≤50: 900, ≤250: 990, ≤1000: 1000, as
    // validation turns them into a CDF.
    let d = Dist::Empirical {
        ms: vec![0.0, 10.0, 50.0, 250.0, 1000.0],
        cdf: vec![0.0, 0.5, 0.9, 0.99, 1.0],
    };
    let Dist::Empirical { ms, cdf } = &d else {
        unreachable!()
    };
    let at = |u| empirical_quantile(ms, cdf, u);
    close(at(0.25), 5.0);
    close(at(0.7), 30.0);
    close(at(0.95), 50.0 + 200.0 * 5.0 / 9.0);
    close(at(0.995), 625.0);
    // 0.5·5 + 0.4·30 + 0.09·150 + 0.01·625.
    close(d.mean_ms(), 34.25);
    // 0.5·100/3 + 0.4·3100/3 + 0.09·77500/3 + 0.01·437500.
    close(d.second_moment_ms2(), 7130.0);
    let xs = draws(&d, 2);
    assert_mean(&xs, 34.25, 7130.0 - 34.25 * 34.25);
    for (x, p) in [(5.0, 0.25), (10.0, 0.5), (50.0, 0.9), (250.0, 0.99)] {
        assert_cdf(&xs, x, p);
    }
}

/// Φ, from statrs.
fn phi(x: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    Normal::standard().cdf(x)
}

/// Φ⁻¹, from statrs.
fn phi_inverse(p: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    Normal::standard().inverse_cdf(p)
}

#[test]
fn truncated_normal_mean_is_shifted_by_the_inverse_mills_ratio() {
    // Half-normal: σ·√(2/π).
    let half = Dist::TruncatedNormal {
        mean_ms: 0.0,
        sd_ms: 10.0,
    };
    close(half.mean_ms(), 7.978_845_608_028_654);
    // E[X²] of a half-normal is σ²: nothing of the square is cut away.
    close(half.second_moment_ms2(), 100.0);
    // β = 1: 10 + 10·φ(1)/Φ(1) = 10 + 10·0.241970724519/0.841344746069.
    let one = Dist::TruncatedNormal {
        mean_ms: 10.0,
        sd_ms: 10.0,
    };
    close(one.mean_ms(), 12.875_999_709_391_4);
    // μ² + σ² + μσ·λ.
    close(one.second_moment_ms2(), 228.759_997_093_914);
    // β = 4: barely moved, 40 + 10·1.3383e-4/0.99997.
    let four = Dist::TruncatedNormal {
        mean_ms: 40.0,
        sd_ms: 10.0,
    };
    close(four.mean_ms(), 40.001_338_344_637_8);
    // sd 0 is the point at the mean.
    let point = Dist::TruncatedNormal {
        mean_ms: 7.0,
        sd_ms: 0.0,
    };
    close(point.mean_ms(), 7.0);
    close(point.second_moment_ms2(), 49.0);
    assert!(draws(&point, 1).iter().all(|&x| x == 7.0));
}

#[test]
fn truncated_normal_draws_follow_the_truncated_cdf() {
    for (mean_ms, sd_ms, seed) in [(10.0, 10.0, 3), (0.0, 5.0, 4), (50.0, 10.0, 5)] {
        let d = Dist::TruncatedNormal { mean_ms, sd_ms };
        let xs = draws(&d, seed);
        assert!(xs.iter().all(|&x| x >= 0.0));
        let mean = d.mean_ms();
        assert_mean(&xs, mean, d.second_moment_ms2() - mean * mean);
        // F(x) = (Φ((x − μ)/σ) − Φ(−μ/σ)) / Φ(μ/σ), inverted.
        let (cut, kept) = (phi(-mean_ms / sd_ms), phi(mean_ms / sd_ms));
        for p in [0.01, 0.1, 0.5, 0.9, 0.99] {
            assert_cdf(&xs, mean_ms + sd_ms * phi_inverse(cut + p * kept), p);
        }
    }
    // By hand, β = 1 at x = μ: (0.5 − Φ(−1))/Φ(1) = 0.341344746/0.841344746.
    let xs = draws(
        &Dist::TruncatedNormal {
            mean_ms: 10.0,
            sd_ms: 10.0,
        },
        6,
    );
    assert_cdf(&xs, 10.0, 0.405_713_291_327_5);
}

#[test]
fn gamma_moments_and_cdf_by_hand() {
    // Shape 2, scale 10 (Erlang-2): F(x) = 1 − e^(−x/θ)(1 + x/θ).
    let erlang = Dist::Gamma {
        shape: 2.0,
        scale_ms: 10.0,
    };
    close(erlang.mean_ms(), 20.0);
    close(erlang.second_moment_ms2(), 600.0); // k(k + 1)θ²
    let xs = draws(&erlang, 7);
    assert_mean(&xs, 20.0, 200.0); // kθ²
    assert_cdf(&xs, 10.0, 1.0 - 2.0 / std::f64::consts::E); // 0.2642
    assert_cdf(&xs, 20.0, 1.0 - 3.0 * libm::exp(-2.0)); // 0.5940
    assert_cdf(&xs, 30.0, 1.0 - 4.0 * libm::exp(-3.0)); // 0.8009
                                                        // Shape ½, scale 2 is χ² with one degree of freedom, Z²: F(x) = erf(√(x/2)),
                                                        // and needs the boost for shape < 1.
    let chi2 = Dist::Gamma {
        shape: 0.5,
        scale_ms: 2.0,
    };
    close(chi2.mean_ms(), 1.0);
    let xs = draws(&chi2, 8);
    assert_mean(&xs, 1.0, 2.0);
    assert_cdf(&xs, 0.1, 0.248_170_365_954_8); // erf(√0.05)
    assert_cdf(&xs, 1.0, 0.682_689_492_137_1); // erf(1/√2)
    assert_cdf(&xs, 4.0, 0.954_499_736_103_6); // erf(√2)
}

#[test]
fn gamma_draws_follow_statrs_cdf_across_shapes() {
    use statrs::distribution::{ContinuousCDF, Gamma};
    for (shape, scale_ms, seed) in [
        (0.2, 5.0, 9),
        (1.0, 3.0, 10),
        (9.0, 1.5, 11),
        (400.0, 0.1, 12),
    ] {
        let d = Dist::Gamma { shape, scale_ms };
        let xs = draws(&d, seed);
        assert_mean(&xs, shape * scale_ms, shape * scale_ms * scale_ms);
        let reference = Gamma::new(shape, 1.0 / scale_ms).unwrap();
        for p in [0.05, 0.25, 0.5, 0.75, 0.95, 0.99] {
            assert_cdf(&xs, reference.inverse_cdf(p), p);
        }
    }
}

#[test]
fn weibull_is_inverted_in_closed_form() {
    let rayleigh = Dist::Weibull {
        shape: 2.0,
        scale_ms: 10.0,
    };
    let at = |u| weibull_quantile(2.0, 10.0, u);
    close(at(0.0), 0.0);
    close(at(1.0 - libm::exp(-1.0)), 10.0); // the scale is the 63rd percentile
    close(at(0.75), 11.774_100_225_154_747); // 10·√(ln 4)
    close(rayleigh.mean_ms(), 8.862_269_254_527_58); // 10·Γ(3/2) = 5√π
    close(rayleigh.second_moment_ms2(), 100.0); // 10²·Γ(2)
    assert_one_draw_by_inversion(&rayleigh, at);
    let heavy = Dist::Weibull {
        shape: 0.5,
        scale_ms: 10.0,
    };
    close(weibull_quantile(0.5, 10.0, 0.75), 19.218_120_556_728_056); // 10·(ln 4)²
    close(heavy.mean_ms(), 20.0); // 10·Γ(3)
    close(heavy.second_moment_ms2(), 2400.0); // 10²·Γ(5)
}

#[test]
fn weibull_draws_have_its_mean_and_quantiles() {
    for (shape, scale_ms, seed) in [(2.0, 10.0, 13), (0.5, 10.0, 14)] {
        let d = Dist::Weibull { shape, scale_ms };
        let xs = draws(&d, seed);
        let mean = d.mean_ms();
        assert_mean(&xs, mean, d.second_moment_ms2() - mean * mean);
        for p in [0.1, 0.5, 0.9, 0.99] {
            // F(x) = 1 − exp(−(x/λ)^k), inverted by hand.
            assert_cdf(
                &xs,
                scale_ms * libm::pow(-libm::log(1.0 - p), 1.0 / shape),
                p,
            );
        }
    }
}

#[test]
fn pareto_is_inverted_in_closed_form() {
    let d = Dist::Pareto {
        shape: 3.0,
        scale_ms: 10.0,
    };
    let at = |u| pareto_quantile(3.0, 10.0, u);
    close(at(0.0), 10.0); // the scale is the minimum
    close(at(0.875), 20.0); // 10·(1/8)^(−1/3)
    close(at(0.999), 100.0); // 10·(1/1000)^(−1/3)
    close(d.mean_ms(), 15.0); // αx_m/(α − 1)
    close(d.second_moment_ms2(), 300.0); // αx_m²/(α − 2)
    assert_one_draw_by_inversion(&d, at);
    // Moments that do not exist are infinite, not garbage.
    let at_one = Dist::Pareto {
        shape: 1.0,
        scale_ms: 10.0,
    };
    assert_eq!(at_one.mean_ms(), f64::INFINITY);
    let at_two = Dist::Pareto {
        shape: 2.0,
        scale_ms: 10.0,
    };
    close(at_two.mean_ms(), 20.0);
    assert_eq!(at_two.second_moment_ms2(), f64::INFINITY);
}

#[test]
fn pareto_draws_have_its_mean_and_quantiles() {
    // α = 5: a finite variance (and fourth moment) for the mean's check.
    let d = Dist::Pareto {
        shape: 5.0,
        scale_ms: 10.0,
    };
    let xs = draws(&d, 15);
    assert_mean(&xs, 12.5, 500.0 / 3.0 - 12.5 * 12.5);
    assert!(xs.iter().all(|&x| x >= 10.0));
    // α = 3: F(x) = 1 − (x_m/x)^α, at x = 20 (7/8) and 100 (0.999).
    let xs = draws(
        &Dist::Pareto {
            shape: 3.0,
            scale_ms: 10.0,
        },
        16,
    );
    assert_cdf(&xs, 12.0, 1.0 - (10.0f64 / 12.0).powi(3));
    assert_cdf(&xs, 20.0, 0.875);
    assert_cdf(&xs, 100.0, 0.999);
}
