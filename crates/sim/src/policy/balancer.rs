//! Spreading a caller's attempts over a service's instances, and taking the
//! instances that keep failing out of rotation.
//!
//! # Load balancing
//!
//! [`LoadBalancer`] picks one of `n` instances (indices `0..n`) among those
//! the caller marks eligible (not ejected, not drained, ...):
//!
//! - **Round robin** (Envoy's default `ROUND_ROBIN` with equal weights): a
//!   cursor over the indices that skips ineligible ones. Envoy cycles over its
//!   current healthy-host list instead; with ejections the two differ only in
//!   where the cycle resumes.
//! - **Random** (Envoy `RANDOM`): uniform over the eligible instances.
//! - **Least outstanding**: the eligible instance with the fewest requests in
//!   flight, ties broken uniformly at random. Lowest-index tie-breaking was
//!   rejected: at low load every instance has zero in flight, so instance 0
//!   would take all the traffic and any fault injected there would look far
//!   worse than it is. (nginx `least_conn` and HAProxy `leastconn` also spread
//!   ties, by round robin.)
//! - **Power of two choices** (Mitzenmacher; Envoy `LEAST_REQUEST` with
//!   `choice_count` 2 and equal weights): two **distinct** eligible instances
//!   sampled uniformly, the one with fewer in flight wins, ties go to the first
//!   sampled. Envoy samples with replacement (both draws may hit the same
//!   host); distinct sampling is the textbook scheme and never wastes the
//!   second choice. The instance with the unique minimum among `k` eligible is
//!   then chosen with probability `1 − C(k−1, 2)/C(k, 2) = 2/k`.
//!
//! Randomness comes only from the `&mut StreamRng` passed to
//! [`LoadBalancer::pick`]; integers are drawn without modulo bias. Envoy's
//! panic threshold (balancing over all hosts when under 50% are healthy) is a
//! policy of the caller: it can pass an all-true `eligible` slice.
//!
//! # Outlier detection: Envoy
//!
//! [`OutlierDetector`] follows Envoy's outlier detection
//! (`source/common/upstream/outlier_detection_impl.cc`) for its
//! `consecutive_5xx` detector, with Envoy's parameter names and defaults:
//!
//! - A failure (the caller maps 5xx, 503 rejections, resets and timeouts to
//!   failures, as Envoy maps local-origin errors to 5xx unless it splits them)
//!   increments the host's consecutive count; a success resets it. When the
//!   count **reaches** `consecutive_5xx` (5), ejection is attempted at once,
//!   not at the next interval. The count is then reset whether or not the
//!   ejection happened, so a refused host needs another full run of failures.
//!   Failures recorded while the host is already ejected (answers to requests
//!   sent before the ejection) count but trigger nothing.
//! - `max_ejection_percent` (10): an ejection happens only if `100 × (ejected
//!   + 1) / hosts <= max_ejection_percent`. This is current Envoy (since the
//!   `always_eject_one_host` option of 1.31): with fewer than 10 hosts and the
//!   default 10%, **nothing** is ejected unless `always_eject_one_host` (default
//!   false) lets the first ejection through whatever the percentage. Envoy
//!   before then compared `100 × ejected / hosts < max` and so always allowed
//!   one; its docs of the time said "will eject at least one host regardless of
//!   the value". Refused ejections are counted as overflows
//!   (`ejections_overflow`).
//! - Ejection time: each host keeps Envoy's `ejectTimeBackoff` multiplier. An
//!   ejection raises it by one while `multiplier × base_ejection_time <
//!   max_ejection_time + base_ejection_time`, and the host stays out for
//!   `min(base_ejection_time × multiplier, max_ejection_time)` (30 s × times
//!   ejected, capped at 300 s). At every interval tick on which a host has been
//!   back in service for at least `interval`, its multiplier drops by one, so a
//!   host that stays healthy is forgiven gradually.
//! - Un-ejection happens at the interval ticks (every `interval`, 10 s, from
//!   time zero, the detector's creation), at the first tick where the ejection
//!   time has fully elapsed, as Envoy's interval timer does; the host's
//!   consecutive count is reset then. Ticks are evaluated lazily from `now`, so
//!   the simulator schedules no timer; a tick at the same instant as a recorded
//!   outcome is taken to happen first.
//!
//! Not modelled: `enforcing_consecutive_5xx` (100% by default: always
//! enforced), `max_ejection_time_jitter` (0 by default), the success-rate and
//! failure-percentage detectors, gateway-failure and local-origin split
//! counters, and active health checks.

use stormsim_engine::{SimDuration, SimTime, StreamRng};

/// How a [`LoadBalancer`] chooses (`"kind"` in a model).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BalancerKind {
    /// Cycle through the eligible instances in index order (Envoy's default).
    #[default]
    RoundRobin,
    /// Uniform over the eligible instances.
    Random,
    /// Fewest in flight; ties broken uniformly at random.
    LeastOutstanding,
    /// Two distinct uniform samples, the less loaded wins; ties to the first.
    PowerOfTwoChoices,
}

/// Picks an instance for each attempt.
#[derive(Clone, Debug)]
pub struct LoadBalancer {
    kind: BalancerKind,
    /// Round robin: the index to try first next time.
    cursor: usize,
}

impl LoadBalancer {
    /// A balancer whose round-robin cycle starts at instance 0.
    pub fn new(kind: BalancerKind) -> Self {
        LoadBalancer { kind, cursor: 0 }
    }

    /// The policy this balancer follows.
    pub fn kind(&self) -> BalancerKind {
        self.kind
    }

    /// Chooses an instance, or `None` if no instance is eligible.
    ///
    /// `outstanding[i]` is the number of requests this caller (or the whole
    /// balancer tier, as the model decides) has in flight to instance `i`;
    /// `eligible[i]` whether `i` may be chosen. Both have one entry per
    /// instance. Round robin draws nothing from `rng`; the others draw only
    /// when there is more than one candidate.
    pub fn pick(
        &mut self,
        outstanding: &[u32],
        eligible: &[bool],
        rng: &mut StreamRng,
    ) -> Option<usize> {
        debug_assert_eq!(outstanding.len(), eligible.len());
        match self.kind {
            BalancerKind::RoundRobin => self.pick_round_robin(eligible),
            BalancerKind::Random => {
                let candidates = count_eligible(eligible);
                if candidates == 0 {
                    return None;
                }
                nth_eligible(eligible, uniform_below(rng, candidates))
            }
            BalancerKind::LeastOutstanding => pick_least_outstanding(outstanding, eligible, rng),
            BalancerKind::PowerOfTwoChoices => {
                let candidates = count_eligible(eligible);
                match candidates {
                    0 => None,
                    1 => nth_eligible(eligible, 0),
                    _ => {
                        let first = uniform_below(rng, candidates);
                        let mut second = uniform_below(rng, candidates - 1);
                        if second >= first {
                            second += 1;
                        }
                        let a = nth_eligible(eligible, first)?;
                        let b = nth_eligible(eligible, second)?;
                        Some(if outstanding[b] < outstanding[a] {
                            b
                        } else {
                            a
                        })
                    }
                }
            }
        }
    }

    fn pick_round_robin(&mut self, eligible: &[bool]) -> Option<usize> {
        let n = eligible.len();
        if n == 0 {
            return None;
        }
        let start = self.cursor % n;
        let chosen = (0..n)
            .map(|step| (start + step) % n)
            .find(|&i| eligible[i])?;
        self.cursor = (chosen + 1) % n;
        Some(chosen)
    }
}

fn count_eligible(eligible: &[bool]) -> usize {
    eligible.iter().filter(|&&e| e).count()
}

/// The index of the `rank`-th (0-based) eligible instance.
fn nth_eligible(eligible: &[bool], rank: usize) -> Option<usize> {
    eligible
        .iter()
        .enumerate()
        .filter(|&(_, &e)| e)
        .nth(rank)
        .map(|(i, _)| i)
}

fn pick_least_outstanding(
    outstanding: &[u32],
    eligible: &[bool],
    rng: &mut StreamRng,
) -> Option<usize> {
    let mut least = u32::MAX;
    let mut ties = 0usize;
    for (&load, _) in outstanding.iter().zip(eligible).filter(|&(_, &e)| e) {
        if load < least {
            least = load;
            ties = 1;
        } else if load == least {
            ties += 1;
        }
    }
    if ties == 0 {
        return None;
    }
    let rank = if ties == 1 {
        0
    } else {
        uniform_below(rng, ties)
    };
    outstanding
        .iter()
        .zip(eligible)
        .enumerate()
        .filter(|&(_, (&load, &e))| e && load == least)
        .nth(rank)
        .map(|(i, _)| i)
}

/// Uniform in `0..n` (`n > 0`) without modulo bias: Lemire's multiply-shift
/// with rejection, one draw in all but a `n / 2^64` fraction of cases.
fn uniform_below(rng: &mut StreamRng, n: usize) -> usize {
    debug_assert!(n > 0);
    let n = n as u64;
    let mut product = u128::from(rng.next_u64()) * u128::from(n);
    if (product as u64) < n {
        let threshold = n.wrapping_neg() % n;
        while (product as u64) < threshold {
            product = u128::from(rng.next_u64()) * u128::from(n);
        }
    }
    (product >> 64) as usize
}

/// Envoy outlier-detection parameters (consecutive-5xx detector), with Envoy's
/// defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutlierDetectionConfig {
    /// `consecutive_5xx`: failures in a row that eject a host; 0 disables.
    pub consecutive_5xx: u32,
    /// `interval`: the period of the sweep that returns hosts to service and
    /// forgives healthy ones.
    pub interval: SimDuration,
    /// `base_ejection_time`: ejection time per unit of the host's multiplier.
    pub base_ejection_time: SimDuration,
    /// `max_ejection_time`: the cap on one ejection's length.
    pub max_ejection_time: SimDuration,
    /// `max_ejection_percent`: the share of hosts that may be out at once.
    pub max_ejection_percent: u32,
    /// `always_eject_one_host`: allow the first ejection whatever the percentage.
    pub always_eject_one_host: bool,
}

impl Default for OutlierDetectionConfig {
    fn default() -> Self {
        OutlierDetectionConfig {
            consecutive_5xx: 5,
            interval: SimDuration::from_secs(10),
            base_ejection_time: SimDuration::from_secs(30),
            max_ejection_time: SimDuration::from_secs(300),
            max_ejection_percent: 10,
            always_eject_one_host: false,
        }
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct HostRecord {
    consecutive_failures: u32,
    /// When the current ejection started; `None` while in service.
    ejected_at: Option<SimTime>,
    /// The interval tick that ends the current ejection (valid while ejected).
    returns_at: SimTime,
    /// Envoy's `ejectTimeBackoff`, as of the last ejection or un-ejection;
    /// the per-tick decay since then is applied when it is next needed.
    backoff: u32,
    /// When the host last came back; the decay counts ticks from there.
    returned_at: Option<SimTime>,
    times_ejected: u32,
}

/// Envoy-style outlier detection over a fixed set of instances.
#[derive(Clone, Debug)]
pub struct OutlierDetector {
    config: OutlierDetectionConfig,
    hosts: Vec<HostRecord>,
    /// Hosts ejected as of the last [`OutlierDetector::record`], whose ejection
    /// may since have ended: the lazy state that `record` catches up.
    ejected: u32,
    /// The earliest `returns_at` among ejected hosts, so that catching up is
    /// O(1) when nothing is due.
    next_return: SimTime,
    ejections: u64,
    overflows: u64,
}

impl OutlierDetector {
    /// A detector for `instances` hosts, all in service, created at time zero
    /// (the origin of its interval ticks).
    pub fn new(config: OutlierDetectionConfig, instances: usize) -> Self {
        debug_assert!(config.max_ejection_time >= config.base_ejection_time);
        OutlierDetector {
            config,
            hosts: vec![HostRecord::default(); instances],
            ejected: 0,
            next_return: SimTime::NEVER,
            ejections: 0,
            overflows: 0,
        }
    }

    /// Records the outcome of a request to `instance` that completed at `now`;
    /// may eject it.
    pub fn record(&mut self, now: SimTime, instance: usize, success: bool) {
        self.return_due_hosts(now);
        let threshold = self.config.consecutive_5xx;
        let host = &mut self.hosts[instance];
        if success {
            host.consecutive_failures = 0;
            return;
        }
        host.consecutive_failures = host.consecutive_failures.saturating_add(1);
        if host.consecutive_failures != threshold || host.ejected_at.is_some() {
            return;
        }
        self.try_eject(now, instance);
        self.hosts[instance].consecutive_failures = 0;
    }

    /// Whether `instance` is out of rotation at `now`.
    pub fn is_ejected(&self, now: SimTime, instance: usize) -> bool {
        let host = &self.hosts[instance];
        host.ejected_at.is_some() && now < host.returns_at
    }

    /// When `instance`'s current ejection ends (an interval tick), if it is
    /// ejected at `now`.
    pub fn ejected_until(&self, now: SimTime, instance: usize) -> Option<SimTime> {
        self.is_ejected(now, instance)
            .then_some(self.hosts[instance].returns_at)
    }

    /// Clears `eligible[i]` for every instance `first + i` ejected at `now`,
    /// leaving the others as they are, so that other reasons for
    /// ineligibility compose. (`first`: a fan-out's child chooses among its
    /// shard's replicas only, and its cost must not grow with the shards.)
    /// `eligible` may be shorter than the instances recorded: a timeline that
    /// lowers `instances` keeps the records of the removed ones (still
    /// answering their attempts), which are no longer candidates.
    pub fn exclude_ejected(&self, now: SimTime, first: usize, eligible: &mut [bool]) {
        debug_assert!(first + eligible.len() <= self.hosts.len());
        for (i, slot) in eligible.iter_mut().enumerate() {
            if self.is_ejected(now, first + i) {
                *slot = false;
            }
        }
    }

    /// Instances out of rotation at `now` (Envoy's `ejections_active`).
    pub fn active_ejections(&self, now: SimTime) -> usize {
        (0..self.hosts.len())
            .filter(|&i| self.is_ejected(now, i))
            .count()
    }

    /// Ejections enforced so far (Envoy's `ejections_enforced_total`).
    pub fn ejections(&self) -> u64 {
        self.ejections
    }

    /// Ejections refused by `max_ejection_percent` (`ejections_overflow`).
    pub fn overflows(&self) -> u64 {
        self.overflows
    }

    /// How many times `instance` has been ejected (Envoy's `num_ejections`).
    pub fn times_ejected(&self, instance: usize) -> u32 {
        self.hosts[instance].times_ejected
    }

    fn try_eject(&mut self, now: SimTime, instance: usize) {
        let hosts = self.hosts.len() as f64;
        let percent_after = 100.0 * f64::from(self.ejected + 1) / hosts;
        let allowed = percent_after <= f64::from(self.config.max_ejection_percent.min(100))
            || (self.config.always_eject_one_host && self.ejected == 0);
        if !allowed {
            self.overflows += 1;
            return;
        }
        let config = self.config;
        let decayed = self.decayed_backoff(now, instance);
        let host = &mut self.hosts[instance];
        host.backoff = decayed;
        let base = config.base_ejection_time.as_nanos();
        let max = config.max_ejection_time.as_nanos();
        if u64::from(host.backoff).saturating_mul(base) < max.saturating_add(base) {
            host.backoff += 1;
        }
        let duration = SimDuration(u64::from(host.backoff).saturating_mul(base).min(max));
        host.ejected_at = Some(now);
        host.returns_at = first_tick_at_or_after(config.interval, now + duration, now);
        host.times_ejected += 1;
        self.next_return = self.next_return.min(host.returns_at);
        self.ejected += 1;
        self.ejections += 1;
    }

    /// The host's multiplier after the decrements of the ticks since it came
    /// back: one per tick at least an interval after its return.
    fn decayed_backoff(&self, now: SimTime, instance: usize) -> u32 {
        let host = &self.hosts[instance];
        match host.returned_at {
            None => host.backoff,
            Some(_) if self.config.interval == SimDuration::ZERO => 0,
            Some(back) => {
                let ticks = now.saturating_since(back).as_nanos() / self.config.interval.as_nanos();
                host.backoff
                    .saturating_sub(u32::try_from(ticks).unwrap_or(u32::MAX))
            }
        }
    }

    /// Puts back every host whose ejection ended at a tick no later than `now`.
    fn return_due_hosts(&mut self, now: SimTime) {
        if now < self.next_return {
            return;
        }
        let mut next_return = SimTime::NEVER;
        for host in &mut self.hosts {
            if host.ejected_at.is_none() {
                continue;
            }
            if host.returns_at <= now {
                host.ejected_at = None;
                host.returned_at = Some(host.returns_at);
                host.consecutive_failures = 0;
                self.ejected -= 1;
            } else {
                next_return = next_return.min(host.returns_at);
            }
        }
        self.next_return = next_return;
    }
}

/// The first interval tick (a multiple of `interval` from time zero) at or
/// after `at` and strictly after `ejected_at`: the tick that sees the ejection
/// time elapsed. A zero interval means un-ejecting exactly at expiry.
fn first_tick_at_or_after(interval: SimDuration, at: SimTime, ejected_at: SimTime) -> SimTime {
    let at = at.max(SimTime(ejected_at.0.saturating_add(1)));
    let period = interval.as_nanos();
    if period == 0 {
        return at;
    }
    SimTime(at.0.div_ceil(period).saturating_mul(period))
}

#[cfg(test)]
mod tests {
    use super::*;
    use stormsim_engine::StreamKey;

    fn rng(seed: u64) -> StreamRng {
        StreamKey::root(seed).label("balancer-test").rng()
    }

    #[test]
    fn round_robin_cycles_in_order_and_skips_ineligible() {
        let mut lb = LoadBalancer::new(BalancerKind::RoundRobin);
        let mut r = rng(1);
        let load = [0; 5];
        let all = [true; 5];
        let picks: Vec<_> = (0..7)
            .map(|_| lb.pick(&load, &all, &mut r).unwrap())
            .collect();
        assert_eq!(picks, vec![0, 1, 2, 3, 4, 0, 1]);
        let some = [true, false, true, false, false];
        let picks: Vec<_> = (0..4)
            .map(|_| lb.pick(&load, &some, &mut r).unwrap())
            .collect();
        assert_eq!(picks, vec![2, 0, 2, 0], "resumes after 1, skipping 1, 3, 4");
        assert_eq!(lb.pick(&load, &all, &mut r), Some(1));
    }

    #[test]
    fn every_kind_returns_none_without_an_eligible_instance() {
        let mut r = rng(2);
        for kind in [
            BalancerKind::RoundRobin,
            BalancerKind::Random,
            BalancerKind::LeastOutstanding,
            BalancerKind::PowerOfTwoChoices,
        ] {
            let mut lb = LoadBalancer::new(kind);
            assert_eq!(lb.pick(&[1, 2], &[false, false], &mut r), None, "{kind:?}");
            assert_eq!(lb.pick(&[], &[], &mut r), None, "{kind:?}");
            assert_eq!(
                lb.pick(&[9, 2], &[true, false], &mut r),
                Some(0),
                "{kind:?}"
            );
        }
    }

    #[test]
    fn least_outstanding_picks_the_minimum() {
        let mut lb = LoadBalancer::new(BalancerKind::LeastOutstanding);
        let mut r = rng(3);
        assert_eq!(lb.pick(&[4, 2, 7, 3], &[true; 4], &mut r), Some(1));
        assert_eq!(
            lb.pick(&[4, 2, 7, 3], &[true, false, true, true], &mut r),
            Some(3)
        );
    }

    /// Counts picks per instance over `trials` picks.
    fn shares(
        kind: BalancerKind,
        load: &[u32],
        eligible: &[bool],
        trials: usize,
        seed: u64,
    ) -> Vec<usize> {
        let mut lb = LoadBalancer::new(kind);
        let mut r = rng(seed);
        let mut counts = vec![0; load.len()];
        for _ in 0..trials {
            counts[lb.pick(load, eligible, &mut r).unwrap()] += 1;
        }
        counts
    }

    /// Asserts that `count` out of `trials` Bernoulli(p) successes is within 5
    /// standard deviations, sqrt(trials·p·(1−p)), of trials·p. A true p fails
    /// this with probability about 6e-7 per check, so a failure means a wrong p,
    /// not bad luck; and 5 s.d. at these sample sizes is still under 1.3
    /// percentage points, tight enough to tell 1/2 from 1/3 or 1/4.
    fn assert_binomial(count: usize, trials: usize, p: f64, what: &str) {
        let n = trials as f64;
        let sd = (n * p * (1.0 - p)).sqrt();
        let deviation = (count as f64 - n * p).abs();
        assert!(
            deviation <= 5.0 * sd,
            "{what}: {count} of {trials}, expected {:.0} ± {:.0}",
            n * p,
            5.0 * sd
        );
    }

    #[test]
    fn least_outstanding_spreads_ties_uniformly() {
        let trials = 30_000;
        let load = [3, 1, 1, 5, 1];
        for seed in [10, 11] {
            let counts = shares(
                BalancerKind::LeastOutstanding,
                &load,
                &[true; 5],
                trials,
                seed,
            );
            assert_eq!(counts[0] + counts[3], 0);
            for i in [1, 2, 4] {
                assert_binomial(counts[i], trials, 1.0 / 3.0, "tied instance");
            }
        }
    }

    #[test]
    fn random_is_uniform_over_eligible_instances() {
        let trials = 50_000;
        for seed in [20, 21] {
            let counts = shares(BalancerKind::Random, &[0; 5], &[true; 5], trials, seed);
            for (i, &c) in counts.iter().enumerate() {
                assert_binomial(c, trials, 0.2, &format!("instance {i}"));
            }
            let eligible = [true, false, true, true, false];
            let counts = shares(BalancerKind::Random, &[0; 5], &eligible, trials, seed);
            assert_eq!(counts[1] + counts[4], 0);
            for i in [0, 2, 3] {
                assert_binomial(counts[i], trials, 1.0 / 3.0, &format!("instance {i}"));
            }
        }
    }

    #[test]
    fn power_of_two_prefers_the_lightly_loaded_instance() {
        // Instance 0 (idle) wins whenever it is in the sampled pair: two distinct
        // draws from 4 miss it with probability (3/4)(2/3) = 1/2, so P(0) = 1/2.
        // Otherwise both sampled instances have 10 in flight and the first sampled
        // wins, uniform over 1, 2, 3: P = (1/2)/3 = 1/6 each.
        let trials = 40_000;
        for seed in [30, 31] {
            let counts = shares(
                BalancerKind::PowerOfTwoChoices,
                &[0, 10, 10, 10],
                &[true; 4],
                trials,
                seed,
            );
            assert_binomial(counts[0], trials, 0.5, "idle instance");
            for i in [1, 2, 3] {
                assert_binomial(counts[i], trials, 1.0 / 6.0, &format!("busy {i}"));
            }
        }
    }

    #[test]
    fn power_of_two_is_uniform_when_loads_tie_and_skips_ineligible() {
        let trials = 40_000;
        let counts = shares(
            BalancerKind::PowerOfTwoChoices,
            &[5; 4],
            &[true; 4],
            trials,
            40,
        );
        for (i, &c) in counts.iter().enumerate() {
            assert_binomial(c, trials, 0.25, &format!("instance {i}"));
        }
        // The idle instance is ineligible: never picked; the rest tie.
        let counts = shares(
            BalancerKind::PowerOfTwoChoices,
            &[0, 10, 10, 10],
            &[false, true, true, true],
            trials,
            41,
        );
        assert_eq!(counts[0], 0);
        for i in [1, 2, 3] {
            assert_binomial(counts[i], trials, 1.0 / 3.0, &format!("instance {i}"));
        }
    }

    #[test]
    fn power_of_two_never_picks_the_busiest_of_three() {
        // With 3 eligible, every pair contains someone less loaded than instance 2.
        let counts = shares(
            BalancerKind::PowerOfTwoChoices,
            &[1, 2, 3],
            &[true; 3],
            5_000,
            50,
        );
        assert_eq!(counts[2], 0);
    }

    #[test]
    fn uniform_below_covers_the_range() {
        let mut r = rng(60);
        let mut seen = [false; 7];
        for _ in 0..1000 {
            seen[uniform_below(&mut r, 7)] = true;
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(uniform_below(&mut r, 1), 0);
    }

    fn secs(s: u64) -> SimTime {
        SimTime(s * 1_000_000_000)
    }

    fn detector(instances: usize) -> OutlierDetector {
        OutlierDetector::new(
            OutlierDetectionConfig {
                max_ejection_percent: 100,
                ..OutlierDetectionConfig::default()
            },
            instances,
        )
    }

    fn fail(d: &mut OutlierDetector, now: SimTime, instance: usize, times: u32) {
        for _ in 0..times {
            d.record(now, instance, false);
        }
    }

    #[test]
    fn ejects_on_exactly_the_fifth_consecutive_failure() {
        let mut d = detector(4);
        let t = secs(1);
        fail(&mut d, t, 2, 4);
        assert!(!d.is_ejected(t, 2));
        d.record(t, 2, false);
        assert!(d.is_ejected(t, 2));
        assert_eq!(d.ejections(), 1);
        assert_eq!(d.active_ejections(t), 1);
        assert!(!d.is_ejected(t, 1));
    }

    #[test]
    fn a_success_resets_the_count() {
        let mut d = detector(4);
        let t = secs(1);
        fail(&mut d, t, 0, 4);
        d.record(t, 0, true);
        fail(&mut d, t, 0, 4);
        assert!(!d.is_ejected(t, 0));
        d.record(t, 0, false);
        assert!(d.is_ejected(t, 0));
    }

    #[test]
    fn returns_at_the_first_interval_tick_after_the_ejection_time() {
        let mut d = detector(4);
        fail(&mut d, secs(1), 0, 5);
        // 30 s from 1 s is 31 s; the sweep runs every 10 s, so back at 40 s.
        assert_eq!(d.ejected_until(secs(1), 0), Some(secs(40)));
        assert!(d.is_ejected(SimTime(secs(40).0 - 1), 0));
        assert!(!d.is_ejected(secs(40), 0));
        assert_eq!(d.active_ejections(secs(40)), 0);
        let mut eligible = [true; 4];
        d.exclude_ejected(secs(39), 0, &mut eligible);
        let mut last_two = [true; 2];
        d.exclude_ejected(secs(39), 2, &mut last_two);
        assert_eq!(last_two, [true, true]);
        assert_eq!(eligible, [false, true, true, true]);
    }

    #[test]
    fn failures_while_ejected_do_not_re_eject_and_the_count_restarts_on_return() {
        let mut d = detector(4);
        fail(&mut d, secs(1), 0, 5);
        fail(&mut d, secs(2), 0, 9); // late answers from before the ejection
        assert_eq!(d.ejections(), 1);
        // Back at 40 s with a clean count: 4 failures are not enough.
        fail(&mut d, secs(41), 0, 4);
        assert!(!d.is_ejected(secs(41), 0));
        d.record(secs(41), 0, false);
        assert!(d.is_ejected(secs(41), 0));
    }

    #[test]
    fn ejection_time_grows_with_each_ejection_and_caps() {
        let mut d = detector(2);
        let mut now = secs(1);
        let mut lengths = Vec::new();
        for _ in 0..13 {
            fail(&mut d, now, 0, 5);
            let until = d.ejected_until(now, 0).unwrap();
            lengths.push((until.0 - now.0) / 1_000_000_000);
            now = until; // re-ejected on its return: no tick to forgive it
        }
        // Multiplier 1, 2, ..., 10, then 11 (the rule's last step), then stuck;
        // 30 s × multiplier capped at 300 s. The first starts at 1 s and ends on
        // the 40 s tick; the others start on a tick, so their lengths are exact.
        assert_eq!(
            lengths,
            vec![39, 60, 90, 120, 150, 180, 210, 240, 270, 300, 300, 300, 300]
        );
        assert_eq!(d.times_ejected(0), 13);
        assert_eq!(d.hosts[0].backoff, 11);
    }

    #[test]
    fn a_healthy_host_is_forgiven_one_step_per_interval() {
        let mut d = detector(2);
        fail(&mut d, secs(0), 0, 5); // multiplier 1, back at 30 s
        fail(&mut d, secs(30), 0, 5); // multiplier 2, back at 90 s
        fail(&mut d, secs(90), 0, 5); // multiplier 3, back at 180 s
        assert_eq!(d.ejected_until(secs(90), 0), Some(secs(180)));
        // Healthy from 180 s: ticks at 190 and 200 s each take one step off, so
        // at 205 s the multiplier is 1 and the next ejection is 2 × 30 s.
        d.record(secs(205), 0, true);
        fail(&mut d, secs(205), 0, 5);
        assert_eq!(d.hosts[0].backoff, 2);
        assert_eq!(d.ejected_until(secs(205), 0), Some(secs(270)));
        // After a long calm the multiplier is back to 0: the next is 30 s again.
        fail(&mut d, secs(1000), 0, 5);
        assert_eq!(d.ejected_until(secs(1000), 0), Some(secs(1030)));
    }

    #[test]
    fn max_ejection_percent_is_respected() {
        // 20 hosts at 10%: (1+1)/20 = 10% ≤ 10% allowed, (2+1)/20 = 15% is not.
        let mut d = OutlierDetector::new(OutlierDetectionConfig::default(), 20);
        fail(&mut d, secs(1), 0, 5); // back at the 40 s tick
        fail(&mut d, secs(15), 1, 5); // back at the 50 s tick
        fail(&mut d, secs(15), 2, 5);
        assert!(d.is_ejected(secs(15), 0) && d.is_ejected(secs(15), 1));
        assert!(!d.is_ejected(secs(15), 2));
        assert_eq!((d.ejections(), d.overflows()), (2, 1));
        // The refused host's count restarted: four more failures do nothing ...
        fail(&mut d, secs(40), 2, 4);
        assert_eq!(d.overflows(), 1);
        // ... and with host 0 back since the 40 s tick, the fifth ejects host 2.
        d.record(secs(40), 2, false);
        assert!(d.is_ejected(secs(40), 2));
        assert_eq!(d.active_ejections(secs(40)), 2);
        assert_eq!((d.ejections(), d.overflows()), (3, 1));
    }

    #[test]
    fn small_clusters_eject_nothing_by_default_unless_one_is_always_allowed() {
        let mut d = OutlierDetector::new(OutlierDetectionConfig::default(), 4);
        fail(&mut d, secs(1), 0, 5);
        assert!(!d.is_ejected(secs(1), 0), "1/4 = 25% > 10%");
        assert_eq!(d.overflows(), 1);

        let mut d = OutlierDetector::new(
            OutlierDetectionConfig {
                always_eject_one_host: true,
                ..OutlierDetectionConfig::default()
            },
            4,
        );
        fail(&mut d, secs(1), 0, 5);
        fail(&mut d, secs(1), 1, 5);
        assert!(d.is_ejected(secs(1), 0));
        assert!(!d.is_ejected(secs(1), 1), "only the first goes through");
        assert_eq!((d.ejections(), d.overflows()), (1, 1));
    }

    #[test]
    fn zero_threshold_disables_detection() {
        let mut d = OutlierDetector::new(
            OutlierDetectionConfig {
                consecutive_5xx: 0,
                max_ejection_percent: 100,
                ..OutlierDetectionConfig::default()
            },
            2,
        );
        fail(&mut d, secs(1), 0, 100);
        assert_eq!(d.ejections(), 0);
    }
}
