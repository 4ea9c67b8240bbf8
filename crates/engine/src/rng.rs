//! Keyed random streams.
//!
//! Every random draw in a run comes from a stream named by a [`StreamKey`]: a
//! 64-bit hash of the master seed and a path of labels and indices, e.g.
//! `(seed, "workload", 0, "arrivals")` or `(request 17, step 0, attempt 2)`.
//! Keys are derived by hashing, never by drawing in sequence, so adding a
//! service or a variant does not shift any other stream; and per-request draws
//! are keyed by the request, so every variant of a model sees the same random
//! sequence for the same request (common random numbers).

use rand_core::Rng;
use rand_pcg::Pcg64Mcg;

/// SplitMix64's finaliser: a bijective avalanche mixer on 64 bits.
#[inline]
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Combines a parent key with one more component. Stable across platforms and
/// releases: changing it changes every output, so it is frozen.
#[inline]
pub fn mix(parent: u64, component: u64) -> u64 {
    splitmix64(parent ^ splitmix64(component.wrapping_add(0x632B_E59B_D9B4_E019)))
}

/// FNV-1a of a label, so that string components are stable too.
fn label_hash(label: &str) -> u64 {
    label.bytes().fold(0xCBF2_9CE4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

/// The name of a random stream: a hash of the seed and a path of components.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamKey(pub u64);

impl StreamKey {
    /// The root of all streams of a run with this master seed.
    pub fn root(seed: u64) -> StreamKey {
        StreamKey(mix(0x5354_4F52_4D53_494D, seed)) // "STORMSIM"
    }

    /// A child stream named by an index (a request number, an attempt number).
    #[inline]
    pub fn index(self, i: u64) -> StreamKey {
        StreamKey(mix(self.0, i))
    }

    /// A child stream named by a label (a purpose such as `"arrivals"`).
    pub fn label(self, label: &str) -> StreamKey {
        StreamKey(mix(self.0, label_hash(label)))
    }

    /// A generator for this stream.
    #[inline]
    pub fn rng(self) -> StreamRng {
        let hi = splitmix64(self.0 ^ 0xA076_1D64_78BD_642F);
        let state = (u128::from(hi) << 64) | u128::from(self.0);
        StreamRng(Pcg64Mcg::new(state))
    }
}

/// A PCG generator (`Pcg64Mcg`) with the few draws the simulator needs.
#[derive(Clone, Debug)]
pub struct StreamRng(Pcg64Mcg);

impl StreamRng {
    /// The next raw 64 bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `[0, 1)`, with 53 bits of precision.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `(0, 1]`: safe under `ln`.
    #[inline]
    pub fn unit_open0(&mut self) -> f64 {
        1.0 - self.unit()
    }

    /// Exponential with the given mean, by inversion.
    #[inline]
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * libm::log(self.unit_open0())
    }

    /// Standard normal, by the Box–Muller transform (one of the pair is used,
    /// so each draw costs two uniforms and is independent of earlier draws).
    pub fn standard_normal(&mut self) -> f64 {
        let r = (-2.0 * libm::log(self.unit_open0())).sqrt();
        let theta = std::f64::consts::TAU * self.unit();
        r * libm::cos(theta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_stable_and_distinct() {
        let root = StreamKey::root(1);
        assert_eq!(root, StreamKey::root(1));
        assert_ne!(root, StreamKey::root(2));
        assert_ne!(root.index(0), root.index(1));
        assert_ne!(root.label("a"), root.label("b"));
        // Order of components matters: (a, b) is not (b, a).
        assert_ne!(root.index(1).index(2), root.index(2).index(1));
        // Frozen value: a change here changes every run's output.
        assert_eq!(StreamKey::root(1).index(17).0, 0x39D1_7C36_D87C_F0D2);
    }

    #[test]
    fn same_key_same_sequence() {
        let mut a = StreamKey::root(7).label("x").rng();
        let mut b = StreamKey::root(7).label("x").rng();
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn unit_and_exponential_moments_are_right() {
        // 100k draws: the standard error of a mean of U(0,1) is 0.289/sqrt(n) ≈ 0.0009;
        // of Exp(mean 2), 2/sqrt(n) ≈ 0.0063. Bounds at 5 standard errors.
        let n = 100_000;
        let mut rng = StreamKey::root(3).rng();
        let mean_u: f64 = (0..n).map(|_| rng.unit()).sum::<f64>() / n as f64;
        assert!(
            (mean_u - 0.5).abs() < 5.0 * 0.289 / (n as f64).sqrt(),
            "{mean_u}"
        );
        let mean_e: f64 = (0..n).map(|_| rng.exponential(2.0)).sum::<f64>() / n as f64;
        assert!(
            (mean_e - 2.0).abs() < 5.0 * 2.0 / (n as f64).sqrt(),
            "{mean_e}"
        );
        let zs: Vec<f64> = (0..n).map(|_| rng.standard_normal()).collect();
        let mean_z = zs.iter().sum::<f64>() / n as f64;
        let var_z = zs.iter().map(|z| (z - mean_z).powi(2)).sum::<f64>() / (n - 1) as f64;
        assert!(mean_z.abs() < 5.0 / (n as f64).sqrt(), "{mean_z}");
        // Var of the sample variance of N(0,1) is 2/(n-1).
        assert!(
            (var_z - 1.0).abs() < 5.0 * (2.0 / n as f64).sqrt(),
            "{var_z}"
        );
    }
}
