//! Load shapes: the rate of an open-loop workload as a function of time, for
//! arrivals that follow a ramp to a peak, a day's cycle, bursts, or a
//! recorded trace. Arrivals are a Poisson process with this rate
//! (non-homogeneous), drawn by thinning (Lewis and Shedler, 1979): candidates
//! at the shape's highest rate, each kept with probability `rate(t) / max`.

/// A validated load shape; times in seconds from the run's start, rates in
/// requests per second.
#[derive(Clone, Debug, PartialEq)]
pub enum RateShape {
    /// Piecewise linear, as k6's `stages`: from `start` at time 0 to each
    /// stage's target at the stage's end, then holding the last target.
    Stages {
        /// The rate at time 0.
        start: f64,
        /// Each stage's end time and target rate, in time order (a stage of
        /// zero length is a step).
        ends: Vec<(f64, f64)>,
    },
    /// `mean + amplitude · sin(2π (t − phase) / period)`: a day's cycle.
    Sinusoid {
        /// The mean rate.
        mean: f64,
        /// The swing either side of it (at most `mean`).
        amplitude: f64,
        /// The cycle's length, s.
        period: f64,
        /// When the rate crosses its mean going up, s.
        phase: f64,
    },
    /// `burst` for `length` seconds every `every` seconds from `first_at`,
    /// `base` otherwise.
    Bursts {
        /// The rate between bursts.
        base: f64,
        /// The rate during a burst.
        burst: f64,
        /// From one burst's start to the next's, s.
        every: f64,
        /// A burst's length, s (at most `every`).
        length: f64,
        /// The first burst's start, s.
        first_at: f64,
    },
    /// A recorded trace: `rates[k]` from `k · bucket` to `(k + 1) · bucket`,
    /// then nothing. Made by [`RateShape::trace`], which finds its peak and
    /// its last busy bucket once: a run asks for both at every arrival, and
    /// a trace may have 10⁶ buckets.
    Trace {
        /// Each bucket's length, s.
        bucket: f64,
        /// The rate in each bucket.
        rates: Vec<f64>,
        /// The highest of `rates`.
        peak: f64,
        /// How many buckets until the last with a rate above zero.
        busy_buckets: usize,
    },
}

impl RateShape {
    /// A trace of `rates`, a bucket of `bucket` seconds each.
    pub fn trace(bucket: f64, rates: Vec<f64>) -> RateShape {
        RateShape::Trace {
            bucket,
            peak: rates.iter().copied().fold(0.0, f64::max),
            busy_buckets: rates.iter().rposition(|&r| r > 0.0).map_or(0, |k| k + 1),
            rates,
        }
    }

    /// The rate at `t` seconds.
    pub fn rate_at(&self, t: f64) -> f64 {
        match self {
            RateShape::Stages { start, ends } => {
                let (mut t0, mut r0) = (0.0, *start);
                for &(t1, r1) in ends {
                    if t < t1 {
                        // A stage of zero length never holds `t`: a step.
                        return r0 + (r1 - r0) * (t - t0) / (t1 - t0);
                    }
                    (t0, r0) = (t1, r1);
                }
                r0
            }
            RateShape::Sinusoid {
                mean,
                amplitude,
                period,
                phase,
            } => {
                let angle = std::f64::consts::TAU * (t - phase) / period;
                (mean + amplitude * libm::sin(angle)).max(0.0)
            }
            RateShape::Bursts {
                base,
                burst,
                every,
                length,
                first_at,
            } => {
                let since = t - first_at;
                if since >= 0.0 && since.rem_euclid(*every) < *length {
                    *burst
                } else {
                    *base
                }
            }
            RateShape::Trace { bucket, rates, .. } => {
                let k = (t / bucket).floor();
                if k < 0.0 {
                    return 0.0;
                }
                rates.get(k as usize).copied().unwrap_or(0.0)
            }
        }
    }

    /// The highest rate the shape reaches.
    pub fn max_rate(&self) -> f64 {
        match self {
            RateShape::Stages { start, ends } => ends.iter().map(|e| e.1).fold(*start, f64::max),
            RateShape::Sinusoid {
                mean, amplitude, ..
            } => mean + amplitude,
            RateShape::Bursts { base, burst, .. } => base.max(*burst),
            RateShape::Trace { peak, .. } => *peak,
        }
    }

    /// The time from which the rate is zero for good, if there is one: no
    /// arrival comes after it.
    pub fn silent_from(&self) -> Option<f64> {
        match self {
            RateShape::Stages { start, ends } => {
                let last = ends.last().map_or(*start, |e| e.1);
                (last == 0.0).then(|| {
                    // The end of the last stage that had a rate above zero.
                    let mut from = 0.0;
                    let mut before = *start;
                    for &(t, r) in ends {
                        if before > 0.0 || r > 0.0 {
                            from = t;
                        }
                        before = r;
                    }
                    from
                })
            }
            RateShape::Trace {
                bucket,
                busy_buckets,
                ..
            } => Some(*busy_buckets as f64 * bucket),
            RateShape::Sinusoid { .. } | RateShape::Bursts { .. } => None,
        }
    }

    /// The expected number of arrivals from time 0 to `t` seconds: the
    /// rate's integral, in closed form (for the check that a run surely
    /// brings more requests than it may handle).
    pub fn arrivals_until(&self, t: f64) -> f64 {
        if t <= 0.0 {
            return 0.0;
        }
        match self {
            RateShape::Stages { start, ends } => {
                let (mut t0, mut r0) = (0.0, *start);
                let mut sum = 0.0;
                for &(t1, r1) in ends {
                    if t <= t1 {
                        // A stage of zero length is not reached here.
                        let r = r0 + (r1 - r0) * (t - t0) / (t1 - t0);
                        return sum + (r0 + r) / 2.0 * (t - t0);
                    }
                    sum += (r0 + r1) / 2.0 * (t1 - t0);
                    (t0, r0) = (t1, r1);
                }
                sum + r0 * (t - t0)
            }
            RateShape::Sinusoid {
                mean,
                amplitude,
                period,
                phase,
            } => {
                // The amplitude is at most the mean: the rate is never
                // clipped at zero.
                let angle = |x: f64| std::f64::consts::TAU * (x - phase) / period;
                let swing = amplitude * period / std::f64::consts::TAU;
                mean * t + swing * (libm::cos(angle(0.0)) - libm::cos(angle(t)))
            }
            RateShape::Bursts {
                base,
                burst,
                every,
                length,
                first_at,
            } => {
                let since = t - first_at;
                let in_bursts = if since <= 0.0 {
                    0.0
                } else {
                    let whole = (since / every).floor();
                    whole * length + (since - whole * every).min(*length)
                };
                base * t + (burst - base) * in_bursts
            }
            RateShape::Trace { bucket, rates, .. } => rates
                .iter()
                .enumerate()
                .map(|(k, rate)| {
                    let from = k as f64 * bucket;
                    rate * (t.min(from + bucket) - from).max(0.0)
                })
                .sum(),
        }
    }

    /// The expected number of arrivals from `a` to `b` seconds: the rate's
    /// integral, by the trapezoid rule over `steps` pieces (exact for
    /// stages whose corners fall on the pieces' edges).
    pub fn expected_arrivals(&self, a: f64, b: f64, steps: u32) -> f64 {
        let h = (b - a) / f64::from(steps);
        (0..steps)
            .map(|k| {
                let (x0, x1) = (a + h * f64::from(k), a + h * f64::from(k + 1));
                // Midpoint of a bucket's inside for pieces that straddle a
                // step or a trace bucket's edge: the trapezoid of the ends.
                (self.rate_at(x0) + self.rate_at(x1)) / 2.0 * h
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_are_linear_between_targets_and_hold_the_last() {
        // From 100/s: up to 500/s over 10 s, a step to 200/s, hold.
        let s = RateShape::Stages {
            start: 100.0,
            ends: vec![(10.0, 500.0), (10.0, 200.0), (30.0, 200.0)],
        };
        assert_eq!(s.rate_at(0.0), 100.0);
        assert_eq!(s.rate_at(5.0), 300.0);
        // Just before the step, the ramp's end (to rounding).
        assert!((s.rate_at(9.999_999) - 499.99996).abs() < 1e-6);
        assert_eq!(s.rate_at(10.0), 200.0);
        assert_eq!(s.rate_at(1e6), 200.0);
        assert_eq!(s.max_rate(), 500.0);
        assert_eq!(s.silent_from(), None);
    }

    #[test]
    fn stages_down_to_zero_end_the_arrivals() {
        let s = RateShape::Stages {
            start: 0.0,
            ends: vec![(10.0, 100.0), (20.0, 0.0), (30.0, 0.0)],
        };
        assert_eq!(s.silent_from(), Some(20.0));
        assert_eq!(s.rate_at(25.0), 0.0);
        // The integral of a triangle of base 20 s and height 100/s.
        assert!((s.expected_arrivals(0.0, 30.0, 30) - 1000.0).abs() < 1e-9);
    }

    #[test]
    fn a_sinusoid_swings_about_its_mean() {
        let s = RateShape::Sinusoid {
            mean: 300.0,
            amplitude: 200.0,
            period: 100.0,
            phase: 0.0,
        };
        assert!((s.rate_at(25.0) - 500.0).abs() < 1e-9);
        assert!((s.rate_at(75.0) - 100.0).abs() < 1e-9);
        assert_eq!(s.max_rate(), 500.0);
        // A whole period holds mean × period arrivals.
        assert!((s.expected_arrivals(0.0, 100.0, 10_000) - 30_000.0).abs() < 1e-3);
    }

    #[test]
    fn bursts_repeat_from_their_first() {
        let s = RateShape::Bursts {
            base: 10.0,
            burst: 1000.0,
            every: 60.0,
            length: 5.0,
            first_at: 30.0,
        };
        assert_eq!(s.rate_at(29.9), 10.0);
        assert_eq!(s.rate_at(30.0), 1000.0);
        assert_eq!(s.rate_at(34.9), 1000.0);
        assert_eq!(s.rate_at(35.0), 10.0);
        assert_eq!(s.rate_at(92.0), 1000.0);
    }

    /// Each shape's closed-form integral against the trapezoid rule on a
    /// grid of 1 ms pieces, whose error is at most half a piece's worth of
    /// each step's jump (a step inside a piece, or at the end: the rule
    /// takes the rate after it), under ten pieces at the highest rate for
    /// the steps of these shapes up to 157 s, plus the curvature term for
    /// the sinusoid (t·h²/12·max|r''|, about 10^-5).
    #[test]
    fn arrivals_until_is_the_rates_integral() {
        let shapes = [
            RateShape::Stages {
                start: 100.0,
                ends: vec![(10.0, 500.0), (10.0, 200.0), (30.0, 200.0)],
            },
            RateShape::Sinusoid {
                mean: 300.0,
                amplitude: 200.0,
                period: 100.0,
                phase: 7.0,
            },
            RateShape::Bursts {
                base: 10.0,
                burst: 1000.0,
                every: 60.0,
                length: 5.0,
                first_at: 30.0,
            },
            RateShape::trace(2.0, vec![5.0, 0.0, 7.0, 0.0]),
        ];
        for shape in &shapes {
            for t in [0.0, 3.0, 10.0, 25.0, 32.5, 100.0, 157.0] {
                let steps = (t * 1000.0) as u32;
                let grid = if t > 0.0 {
                    shape.expected_arrivals(0.0, t, steps)
                } else {
                    0.0
                };
                let exact = shape.arrivals_until(t);
                let bound = 10.0 * 1e-3 * shape.max_rate();
                assert!(
                    (exact - grid).abs() <= bound,
                    "{shape:?} to {t}: {exact} against {grid}"
                );
            }
        }
        // By hand: the stages' 3,000 + 4,000 to 30 s; three bursts by 157 s.
        assert_eq!(shapes[0].arrivals_until(30.0), 7000.0);
        assert_eq!(shapes[2].arrivals_until(157.0), 10.0 * 157.0 + 990.0 * 15.0);
        assert_eq!(shapes[3].arrivals_until(1e9), 2.0 * 12.0);
    }

    #[test]
    fn a_trace_is_its_buckets_then_nothing() {
        let s = RateShape::trace(2.0, vec![5.0, 0.0, 7.0, 0.0]);
        assert_eq!(s.rate_at(1.9), 5.0);
        assert_eq!(s.rate_at(2.0), 0.0);
        assert_eq!(s.rate_at(5.0), 7.0);
        assert_eq!(s.rate_at(9.0), 0.0);
        assert_eq!(s.silent_from(), Some(6.0));
        assert_eq!(s.max_rate(), 7.0);
    }
}
