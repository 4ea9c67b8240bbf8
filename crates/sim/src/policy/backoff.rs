//! How long a retry waits: the base backoff, then jitter.
//!
//! The jitter modes are those of the AWS Architecture Blog's "Exponential
//! Backoff and Jitter" (full, equal, decorrelated), plus proportional jitter as
//! resilience4j (`randomizationFactor`, 0.5) and gRPC (±20%, factor 0.2) apply it.
//! Without jitter, requests that failed together retry together: the
//! thundering herd of S5.

use stormsim_engine::{SimDuration, StreamRng};
use stormsim_model::{Backoff, Jitter, RetryPolicy};

/// The base wait before retry number `retry` (1 = the first retry), before jitter.
pub fn base_delay(backoff: &Backoff, retry: u32) -> SimDuration {
    match *backoff {
        Backoff::Fixed(d) => d,
        Backoff::Exponential {
            base,
            multiplier,
            cap,
        } => {
            let ns = base.as_nanos() as f64 * multiplier.powi(retry.saturating_sub(1) as i32);
            SimDuration(if ns >= cap.as_nanos() as f64 {
                cap.as_nanos()
            } else {
                ns.round() as u64
            })
        }
    }
}

fn uniform(lo: f64, hi: f64, rng: &mut StreamRng) -> f64 {
    lo + (hi - lo) * rng.unit()
}

/// The wait before retry number `retry`, given the previous wait (for
/// decorrelated jitter; the base before the first retry).
pub fn next_delay(
    policy: &RetryPolicy,
    retry: u32,
    previous: SimDuration,
    rng: &mut StreamRng,
) -> SimDuration {
    let base = base_delay(&policy.backoff, retry);
    let d = base.as_nanos() as f64;
    let ns = match policy.jitter {
        Jitter::None => return base,
        Jitter::Full => uniform(0.0, d, rng),
        Jitter::Equal => d / 2.0 + uniform(0.0, d / 2.0, rng),
        Jitter::Proportional => {
            let f = policy.jitter_factor;
            uniform(d * (1.0 - f), d * (1.0 + f), rng)
        }
        Jitter::Decorrelated => {
            let (base, cap) = match policy.backoff {
                Backoff::Fixed(d) => (d, SimDuration::INFINITE),
                Backoff::Exponential { base, cap, .. } => (base, cap),
            };
            let base = base.as_nanos() as f64;
            let previous = (previous.as_nanos() as f64).max(base);
            uniform(base, 3.0 * previous, rng).min(cap.as_nanos() as f64)
        }
    };
    SimDuration(ns.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use stormsim_engine::StreamKey;

    fn policy(backoff: Backoff, jitter: Jitter) -> RetryPolicy {
        RetryPolicy {
            max_attempts: 10,
            backoff,
            jitter,
            jitter_factor: 0.5,
            ..RetryPolicy::none()
        }
    }

    const MS: u64 = 1_000_000;

    fn exp() -> Backoff {
        Backoff::Exponential {
            base: SimDuration(100 * MS),
            multiplier: 2.0,
            cap: SimDuration(5000 * MS),
        }
    }

    #[test]
    fn exponential_doubles_up_to_the_cap() {
        // The S5 chapter's example: base 100 ms, cap 5 s.
        let waits: Vec<u64> = (1..=8)
            .map(|n| base_delay(&exp(), n).as_nanos() / MS)
            .collect();
        assert_eq!(waits, [100, 200, 400, 800, 1600, 3200, 5000, 5000]);
        assert_eq!(
            base_delay(&Backoff::Fixed(SimDuration(500 * MS)), 7),
            SimDuration(500 * MS)
        );
    }

    #[test]
    fn no_jitter_is_exact_and_draws_nothing() {
        let p = policy(Backoff::Fixed(SimDuration(500 * MS)), Jitter::None);
        let mut rng = StreamKey::root(1).rng();
        let before = rng.clone().next_u64();
        assert_eq!(
            next_delay(&p, 1, SimDuration::ZERO, &mut rng),
            SimDuration(500 * MS)
        );
        assert_eq!(rng.next_u64(), before);
    }

    /// Full jitter stays in [0, d] and its mean is d/2. For n = 20k draws the
    /// standard error of the mean is d/sqrt(12 n) ≈ 0.002 d; bound at 5 se.
    #[test]
    fn full_and_equal_jitter_stay_in_range_with_the_right_mean() {
        let n = 20_000;
        for (jitter, lo, hi, mean, sd) in [
            (Jitter::Full, 0.0, 1.0, 0.5, 1.0 / 12f64.sqrt()),
            (Jitter::Equal, 0.5, 1.0, 0.75, 0.5 / 12f64.sqrt()),
            (Jitter::Proportional, 0.5, 1.5, 1.0, 1.0 / 12f64.sqrt()),
        ] {
            let p = policy(exp(), jitter);
            let mut rng = StreamKey::root(2).label("jitter").rng();
            let d = base_delay(&p.backoff, 3).as_nanos() as f64; // 400 ms
            let xs: Vec<f64> = (0..n)
                .map(|_| next_delay(&p, 3, SimDuration::ZERO, &mut rng).as_nanos() as f64 / d)
                .collect();
            assert!(
                xs.iter().all(|&x| (lo..=hi).contains(&x)),
                "{jitter:?} out of range"
            );
            let m = xs.iter().sum::<f64>() / n as f64;
            assert!(
                (m - mean).abs() < 5.0 * sd / (n as f64).sqrt(),
                "{jitter:?} mean {m}"
            );
        }
    }

    #[test]
    fn decorrelated_jitter_grows_from_the_previous_wait_and_respects_the_cap() {
        let p = policy(exp(), Jitter::Decorrelated);
        let mut rng = StreamKey::root(3).rng();
        let mut previous = SimDuration(100 * MS);
        for retry in 1..200 {
            let d = next_delay(&p, retry, previous, &mut rng);
            assert!(d >= SimDuration(100 * MS), "below base: {d}");
            assert!(
                d.as_nanos() <= (3 * previous.as_nanos()).min(5000 * MS),
                "{d} after {previous}"
            );
            previous = d;
        }
    }
}
