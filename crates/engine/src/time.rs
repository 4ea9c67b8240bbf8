//! Virtual time as integer nanoseconds.
//!
//! Time is never `f64`: sums of integers are exact, so a run repeats bit for bit
//! on every machine. Durations are sampled in `f64` milliseconds by the model
//! and rounded once, here, to whole nanoseconds.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An instant of virtual time: nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

/// A span of virtual time in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimDuration(pub u64);

const NS_PER_MS: f64 = 1_000_000.0;

impl SimTime {
    /// The start of every run.
    pub const ZERO: SimTime = SimTime(0);
    /// Later than any event: "never".
    pub const NEVER: SimTime = SimTime(u64::MAX);

    /// Nanoseconds since the start.
    pub fn as_nanos(self) -> u64 {
        self.0
    }

    /// Milliseconds since the start, for reports.
    pub fn as_ms(self) -> f64 {
        self.0 as f64 / NS_PER_MS
    }

    /// Seconds since the start, for reports and time series.
    pub fn as_secs(self) -> f64 {
        self.0 as f64 / 1e9
    }

    /// The span from `earlier` to `self`, zero if `earlier` is later.
    pub fn saturating_since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }

    /// `self + span + skew` (skew in ns, either sign), clamped to the range of
    /// times: how a deadline written on one clock reads on another.
    pub fn offset_by(self, span: SimDuration, skew_ns: i64) -> SimTime {
        let t = i128::from(self.0) + i128::from(span.0) + i128::from(skew_ns);
        SimTime(t.clamp(0, i128::from(u64::MAX)) as u64)
    }
}

impl SimDuration {
    /// No time at all.
    pub const ZERO: SimDuration = SimDuration(0);
    /// Longer than any run: "no limit".
    pub const INFINITE: SimDuration = SimDuration(u64::MAX);

    /// Rounds a non-negative number of milliseconds to whole nanoseconds.
    /// Negative and NaN inputs become zero (models validate them away first);
    /// values past `u64::MAX` ns saturate to [`SimDuration::INFINITE`].
    ///
    /// Rounds half away from zero, as `f64::round`, without its call (which
    /// x86-64 makes to the C library, on every sampled duration): below
    /// 2^64 the cast truncates exactly, and the fraction left is exact.
    #[inline]
    pub fn from_ms(ms: f64) -> SimDuration {
        let ns = ms * NS_PER_MS;
        if ns.is_nan() || ns < 0.5 {
            SimDuration::ZERO
        } else if ns >= u64::MAX as f64 {
            SimDuration::INFINITE
        } else {
            let whole = ns as u64;
            SimDuration(whole + u64::from(ns - whole as f64 >= 0.5))
        }
    }

    /// Whole seconds to a duration.
    pub fn from_secs(s: u64) -> SimDuration {
        SimDuration(s.saturating_mul(1_000_000_000))
    }

    /// The span in milliseconds, for reports.
    pub fn as_ms(self) -> f64 {
        self.0 as f64 / NS_PER_MS
    }

    /// Nanoseconds in the span.
    pub fn as_nanos(self) -> u64 {
        self.0
    }

    /// Whether this is [`SimDuration::INFINITE`].
    pub fn is_infinite(self) -> bool {
        self.0 == u64::MAX
    }

    /// The difference, zero if `other` is longer.
    pub fn saturating_sub(self, other: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_sub(other.0))
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    /// Saturates, so `now + SimDuration::INFINITE` is [`SimTime::NEVER`].
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}

impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, d: SimDuration) {
        *self = *self + d;
    }
}

impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(d.0))
    }
}

impl Sub for SimTime {
    type Output = SimDuration;
    /// Panics in debug builds if `rhs` is later: asking for a negative span is a
    /// broken invariant of the caller, not a user error.
    fn sub(self, rhs: SimTime) -> SimDuration {
        debug_assert!(self >= rhs, "negative span {self:?} - {rhs:?}");
        SimDuration(self.0.saturating_sub(rhs.0))
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3} ms", self.as_ms())
    }
}

impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_infinite() {
            f.write_str("∞")
        } else {
            write!(f, "{:.3} ms", self.as_ms())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `from_ms` as it was written with `f64::round`: the same duration for
    /// every input, halves, the edges of exact integers and of u64 included.
    #[test]
    fn rounding_without_the_c_library_is_f64_round() {
        let by_round = |ms: f64| {
            let ns = (ms * NS_PER_MS).round();
            if ns.is_nan() || ns <= 0.0 {
                SimDuration::ZERO
            } else if ns >= u64::MAX as f64 {
                SimDuration::INFINITE
            } else {
                SimDuration(ns as u64)
            }
        };
        let mut ms = vec![
            0.0,
            -0.0,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            4.999_999_999_999_999e-7,
            5e-7,
            5.000_000_000_000_001e-7,
            1.5e-6,
            2.5e-6,
        ];
        for e in [52, 53, 63, 64, 65] {
            let edge = 2f64.powi(e) / NS_PER_MS;
            ms.extend([edge, edge.next_down(), edge.next_up()]);
        }
        // Random bit patterns over every exponent that can give a duration.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let exponent = 1023 - 25 + (x >> 58) % 60; // 2^-25 to 2^34 ms
            ms.push(f64::from_bits((exponent << 52) | (x & ((1 << 52) - 1))));
            ms.push((x % 1_000_000) as f64 / NS_PER_MS + 0.5 / NS_PER_MS);
        }
        for m in ms {
            assert_eq!(SimDuration::from_ms(m), by_round(m), "{m:e} ms");
        }
    }

    #[test]
    fn ms_round_once_to_nanoseconds() {
        assert_eq!(SimDuration::from_ms(0.5), SimDuration(500_000));
        assert_eq!(SimDuration::from_ms(1e-7), SimDuration(0));
        assert_eq!(SimDuration::from_ms(2.0000004e-6), SimDuration(2));
        assert_eq!(SimDuration::from_ms(-3.0), SimDuration::ZERO);
        assert_eq!(SimDuration::from_ms(f64::NAN), SimDuration::ZERO);
        assert_eq!(SimDuration::from_ms(f64::INFINITY), SimDuration::INFINITE);
    }

    #[test]
    fn adding_infinity_saturates_to_never() {
        assert_eq!(SimTime(5) + SimDuration::INFINITE, SimTime::NEVER);
        assert_eq!(SimTime(5).saturating_since(SimTime(9)), SimDuration::ZERO);
        assert_eq!(SimTime(100).offset_by(SimDuration(50), -30), SimTime(120));
        assert_eq!(SimTime(10).offset_by(SimDuration(5), -30), SimTime::ZERO);
        assert_eq!(
            SimTime(10).offset_by(SimDuration::INFINITE, 5),
            SimTime::NEVER
        );
    }
}
