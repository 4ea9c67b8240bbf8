//! The closed forms the suite checks the simulator against.
//!
//! References (see `docs/validation.md`): L. Kleinrock, *Queueing Systems,
//! Volume 1: Theory* (Wiley, 1975), ch. 3 for M/M/c (Erlang C) and M/M/c/c
//! (Erlang B), ch. 5 for M/G/1 (Pollaczek–Khinchine); P. M. Morse, "Stochastic
//! properties of waiting lines", *Operations Research* 3 (1955) for the
//! relaxation time of M/M/1.

use stormsim_model::Dist;

/// Erlang B: the probability that an arrival to M/G/c/c finds every server
/// busy and is lost, with offered load `offered` = λ·E[S] in Erlangs. The
/// result holds for any service distribution with that mean (the Erlang loss
/// formula is insensitive), so a loss model need not have exponential service.
///
/// Computed by the recursion B(0) = 1, B(k) = a·B(k−1) / (k + a·B(k−1)), which
/// needs no factorials and so neither overflows nor loses precision for large c.
pub fn erlang_b(servers: u32, offered: f64) -> f64 {
    (1..=servers).fold(1.0, |b, k| offered * b / (f64::from(k) + offered * b))
}

/// Erlang C: the probability that an arrival to M/M/c waits for a server,
/// with offered load `offered` = λ·E[S] < `servers`. Derived from Erlang B,
/// C = c·B / (c − a·(1 − B)), for the same numerical reasons.
pub fn erlang_c(servers: u32, offered: f64) -> f64 {
    let b = erlang_b(servers, offered);
    let c = f64::from(servers);
    c * b / (c - offered * (1.0 - b))
}

/// Mean wait in queue of M/M/c: Wq = C(c, a)·E[S] / (c − a), in the unit of
/// `mean_service`.
pub fn mmc_mean_wait(servers: u32, offered: f64, mean_service: f64) -> f64 {
    erlang_c(servers, offered) * mean_service / (f64::from(servers) - offered)
}

/// Pollaczek–Khinchine mean wait in queue of M/G/1: Wq = λ·E[S²] / (2(1 − ρ)),
/// ρ = λ·E[S]. `rate` is per unit of time of the service moments.
pub fn pollaczek_khinchine_wait(rate: f64, service: Moments) -> f64 {
    let rho = rate * service.mean;
    rate * service.second / (2.0 * (1.0 - rho))
}

/// Cobham's mean wait in queue of class `k` (0 is served first) of an M/G/1
/// with non-preemptive priority classes of arrival rates `rates` (per unit of
/// time of the service moments) and a common service time:
/// Wq_k = W0 / ((1 − σ_{k−1})(1 − σ_k)), with W0 = λ·E[S²]/2 the mean
/// residual work found in service and σ_k = Σ_{i≤k} λ_i·E[S] (A. Cobham,
/// "Priority assignment in waiting line problems", *Operations Research* 2,
/// 1954; Kleinrock, *Queueing Systems, Volume 2*, 1976, §3.6).
pub fn cobham_wait(rates: &[f64], service: Moments, k: usize) -> f64 {
    let total: f64 = rates.iter().sum();
    let residual = total * service.second / 2.0;
    let sigma = |n: usize| rates[..n].iter().sum::<f64>() * service.mean;
    residual / ((1.0 - sigma(k)) * (1.0 - sigma(k + 1)))
}

/// Morse's relaxation time of M/M/1, 1 / (μ(1 − √ρ)²): how long the queue
/// takes to forget its start, and so what a warm-up must exceed. For `servers`
/// servers the queue, when it matters (all busy), drains at c·μ; a service
/// time more variable than exponential (squared coefficient of variation
/// above 1) slows relaxation in proportion to (1 + c_s²)/2, as heavy-traffic
/// limits scale; a less variable one is credited nothing, to stay
/// conservative. In the unit of `service`.
pub fn relaxation_time(servers: u32, rho: f64, service: Moments) -> f64 {
    let drain_rate = f64::from(servers) / service.mean;
    let variability = ((1.0 + service.scv()) / 2.0).max(1.0);
    variability / (drain_rate * (1.0 - rho.sqrt()).powi(2))
}

/// The first two moments of a service time: what P-K needs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Moments {
    /// E[S].
    pub mean: f64,
    /// E[S²].
    pub second: f64,
}

impl Moments {
    /// The moments of a model's duration distribution, in ms and ms², computed
    /// from the same parameters the simulator samples from.
    pub fn of(dist: &Dist) -> Moments {
        Moments {
            mean: dist.mean_ms(),
            second: dist.second_moment_ms2(),
        }
    }

    /// Squared coefficient of variation, Var[S] / E[S]²: 0 for a constant,
    /// 1 for an exponential.
    pub fn scv(&self) -> f64 {
        self.second / (self.mean * self.mean) - 1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64, tolerance: f64) {
        assert!(
            (got - want).abs() <= tolerance,
            "got {got}, want {want} ± {tolerance}"
        );
    }

    /// Two classes at 30/s and 50/s of exponential 10 ms work: W0 = λ·E[S²]/2
    /// = 0.08 × 200 / 2 = 8 ms; the high class waits 8 / (1 − 0.3) ms, the low
    /// one 8 / (0.7 × 0.2) ms; weighted, the FIFO wait ρ/(μ − λ) = 40 ms.
    #[test]
    fn cobham_waits_by_hand() {
        let service = Moments {
            mean: 10.0,
            second: 200.0,
        };
        let rates = [0.03, 0.05];
        close(cobham_wait(&rates, service, 0), 8.0 / 0.7, 1e-12);
        close(cobham_wait(&rates, service, 1), 8.0 / (0.7 * 0.2), 1e-12);
        let weighted = (0.03 * cobham_wait(&rates, service, 0)
            + 0.05 * cobham_wait(&rates, service, 1))
            / 0.08;
        close(weighted, 40.0, 1e-9);
    }

    #[test]
    fn erlang_b_matches_the_tables() {
        // B(5, 4) = (4⁵/5!) / Σ_{k≤5} 4ᵏ/k! = 8.5333 / 42.8667.
        close(erlang_b(5, 4.0), 0.199_07, 1e-5);
        // Erlang B tables: 10 circuits, 5 Erlangs → 1.84% blocking.
        close(erlang_b(10, 5.0), 0.018_38, 1e-5);
        // One server: a / (1 + a).
        close(erlang_b(1, 3.0), 0.75, 1e-12);
        // Large c, where 450⁵⁰⁰ and 500! overflow a double: still a probability.
        let big = erlang_b(500, 450.0);
        assert!(big > 0.0 && big < 1.0, "{big}");
    }

    #[test]
    fn erlang_c_matches_the_tables() {
        // M/M/1: an arrival waits exactly when the server is busy, P = ρ.
        close(erlang_c(1, 0.8), 0.8, 1e-12);
        // M/M/2 at ρ = 0.5: 2ρ² / (1 + ρ) = 1/3.
        close(erlang_c(2, 1.0), 1.0 / 3.0, 1e-12);
        // C(4, 3.6): Σ_{k<4} 3.6ᵏ/k! = 18.856; 3.6⁴/4!·4/0.4 = 69.984.
        close(erlang_c(4, 3.6), 69.984 / (18.856 + 69.984), 1e-5);
    }

    #[test]
    fn mean_waits_match_the_textbook_cases() {
        let exp10 = Moments::of(&Dist::Exponential { mean_ms: 10.0 });
        let const10 = Moments {
            mean: 10.0,
            second: 100.0,
        };
        // M/M/1 at ρ = 0.8, E[S] = 10 ms: Wq = ρ·E[S]/(1 − ρ) = 40 ms, by P-K
        // and by Erlang C alike.
        close(pollaczek_khinchine_wait(0.08, exp10), 40.0, 1e-9);
        close(mmc_mean_wait(1, 0.8, 10.0), 40.0, 1e-9);
        // M/D/1 waits half as long: Wq = ρ·E[S] / (2(1 − ρ)) = 20 ms.
        close(pollaczek_khinchine_wait(0.08, const10), 20.0, 1e-9);
        // M/M/2 at ρ = 0.5, E[S] = 1: Wq = C / (2 − 1) = 1/3.
        close(mmc_mean_wait(2, 1.0, 1.0), 1.0 / 3.0, 1e-12);
    }

    #[test]
    fn moments_follow_the_distributions() {
        let exp = Moments::of(&Dist::Exponential { mean_ms: 10.0 });
        close(exp.scv(), 1.0, 1e-12);
        let uniform = Moments::of(&Dist::Uniform {
            min_ms: 0.0,
            max_ms: 20.0,
        });
        close(uniform.mean, 10.0, 1e-12);
        close(uniform.scv(), 1.0 / 3.0, 1e-12);
        // Log-normal: c_s² = e^{σ²} − 1, whatever μ.
        let ln = Moments::of(&Dist::lognormal_from_quantiles(10.0, 40.0));
        let Dist::LogNormal { sigma, .. } = Dist::lognormal_from_quantiles(10.0, 40.0) else {
            unreachable!("a log-normal by construction")
        };
        close(ln.scv(), libm::exp(sigma * sigma) - 1.0, 1e-12);
        close(
            ln.mean,
            Dist::lognormal_from_quantiles(10.0, 40.0).mean_ms(),
            1e-12,
        );
        // A mixture of two exponentials (hyperexponential) is more variable.
        let h2 = Moments::of(&Dist::Mixture {
            cumulative: vec![0.5, 1.0],
            parts: vec![
                Dist::Exponential { mean_ms: 5.0 },
                Dist::Exponential { mean_ms: 15.0 },
            ],
        });
        close(h2.mean, 10.0, 1e-12);
        close(h2.second, 0.5 * 50.0 + 0.5 * 450.0, 1e-9);
        assert!(h2.scv() > 1.0);
    }

    #[test]
    fn relaxation_time_is_morses_for_mm1() {
        let exp10 = Moments::of(&Dist::Exponential { mean_ms: 10.0 });
        // ρ = 0.81: 1 − √ρ = 0.1, τ = 10 ms / 0.01 = 1 s.
        close(relaxation_time(1, 0.81, exp10), 1000.0, 1e-6);
        // Four servers drain four times as fast.
        close(relaxation_time(4, 0.81, exp10), 250.0, 1e-6);
    }
}
