//! Correlated slowness: hosts that go through slow periods (GC pauses, noisy
//! neighbours) together with everything on them.
//!
//! Each host alternates normal and slow periods of exponential lengths on its
//! own random stream, so a host's history is a pure function of the seed, the
//! same in every variant. The periods cost no events: a host's state is only
//! asked for at the current time, which never goes back, so it is advanced
//! lazily to it.

use stormsim_engine::{SimDuration, SimTime, StreamKey, StreamRng};
use stormsim_model::SlowPeriods;

/// The host of `instance`. A timeline that lowers a service's `instances`
/// leaves the removed ones draining their work, but `host_of` covers only the
/// current instances: a removed one is taken to share a host with the current
/// instance of the same rank modulo their count (a host the service still
/// uses).
pub(crate) fn host_of_instance(host_of: &[u32], instance: u32) -> usize {
    match host_of.get(instance as usize) {
        Some(&host) => host as usize,
        None if host_of.is_empty() => 0,
        None => host_of[instance as usize % host_of.len()] as usize,
    }
}

/// Mean cycles (a normal and a slow period) after which a host's state has
/// forgotten where it was: see [`HostPeriods::is_slow`].
const FORGOTTEN_AFTER_CYCLES: f64 = 64.0;

/// One host's alternation of normal and slow periods.
#[derive(Clone, Debug)]
pub struct HostPeriods {
    rng: StreamRng,
    slow: bool,
    /// When the current period ends.
    until: SimTime,
}

impl HostPeriods {
    /// A host that starts in a normal period.
    pub fn new(key: StreamKey, periods: &SlowPeriods) -> HostPeriods {
        let mut rng = key.rng();
        let first = rng.exponential(periods.mean_gap_ns);
        HostPeriods {
            rng,
            slow: false,
            until: SimTime(first as u64),
        }
    }

    /// Whether the host is in a slow period at `now` (never earlier than the
    /// last time asked).
    pub fn is_slow(&mut self, now: SimTime, periods: &SlowPeriods) -> bool {
        // Periods far shorter than the spacing of the questions would cost a
        // draw each, a billion a simulated second for 1 ns periods. Past
        // `FORGOTTEN_AFTER_CYCLES` mean cycles since the current period ended,
        // the host's state is drawn at `now` instead: normal and slow periods
        // of exponential lengths make a two-state Markov chain, whose state
        // after a time t is its stationary law up to e^(-t (1/G + 1/L)) ≤
        // e^(-4 × 64) (t ≥ 64 (G + L), and (G + L)(1/G + 1/L) ≥ 4): below
        // the resolution of a double. The time left in that period is again
        // exponential (it has no memory). Exact in law, one or two draws.
        let cycle = periods.mean_gap_ns + periods.mean_length_ns;
        if self.until <= now
            && (now - self.until).as_nanos() as f64 > FORGOTTEN_AFTER_CYCLES * cycle
        {
            self.slow = self.rng.unit() * cycle < periods.mean_length_ns;
            let mean = if self.slow {
                periods.mean_length_ns
            } else {
                periods.mean_gap_ns
            };
            self.until = now + SimDuration(self.rng.exponential(mean).max(1.0) as u64);
            return self.slow;
        }
        while self.until <= now {
            self.slow = !self.slow;
            let mean = if self.slow {
                periods.mean_length_ns
            } else {
                periods.mean_gap_ns
            };
            // At least 1 ns, so that time moves on.
            self.until += SimDuration(self.rng.exponential(mean).max(1.0) as u64);
        }
        self.slow
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_is_slow_for_its_share_of_the_time() {
        // Slow 1 s in every 10 on average: 10% of the time.
        let periods = SlowPeriods {
            mean_gap_ns: 9e9,
            mean_length_ns: 1e9,
            factor: 10.0,
        };
        let mut host = HostPeriods::new(StreamKey::root(7).label("host"), &periods);
        // 20,000 s, sampled every 100 ms.
        let samples = 200_000;
        let slow = (0..samples)
            .filter(|i| host.is_slow(SimTime(i * 100_000_000), &periods))
            .count();
        let share = slow as f64 / samples as f64;
        // n = 2,000 cycles of mean length L + G = 10 s. By the delta method the
        // share L/(L+G) has variance (σ_L² G² + σ_G² L²) / (n (L+G)⁴) with
        // exponential σ = mean: (1·81 + 81·1) / (2000 · 10⁴) = 8.1e-6, a
        // standard error of 0.0028; four of them.
        assert!((share - 0.1).abs() < 4.0 * 0.0028, "{share}");
    }

    /// Periods of 1 ns asked about once a millisecond: each question draws
    /// the state afresh (the chain forgot), in O(1), slow for its share of
    /// the time. Periods walked one by one would take 10^9 draws a
    /// simulated second. The share over n independent draws has a standard
    /// error of sqrt(p (1 - p) / n): 0.0030 for p = 0.25, n = 20,000.
    #[test]
    fn periods_far_shorter_than_the_questions_are_drawn_at_once() {
        let periods = SlowPeriods {
            mean_gap_ns: 3.0,
            mean_length_ns: 1.0,
            factor: 2.0,
        };
        let mut host = HostPeriods::new(StreamKey::root(3).label("host"), &periods);
        let samples = 20_000;
        let slow = (1..=samples)
            .filter(|i| host.is_slow(SimTime(i * 1_000_000), &periods))
            .count();
        let share = slow as f64 / samples as f64;
        assert!((share - 0.25).abs() < 4.0 * 0.0030, "{share}");
    }

    #[test]
    fn the_same_key_gives_the_same_history() {
        let periods = SlowPeriods {
            mean_gap_ns: 1e6,
            mean_length_ns: 1e6,
            factor: 2.0,
        };
        let history = || {
            let mut host = HostPeriods::new(StreamKey::root(1).index(3), &periods);
            (0..1000)
                .map(|i| host.is_slow(SimTime(i * 1000), &periods))
                .collect::<Vec<_>>()
        };
        assert_eq!(history(), history());
    }
}
