//! Semantic checks: from what a file says ([`ModelSpec`]) to what the simulator
//! runs ([`Model`]). Every problem is collected with its JSON path; nothing here
//! stops at the first.

use crate::dist::Dist;
use crate::error::Problem;
use crate::model::*;
use crate::shape::RateShape;
use crate::spec::*;
use std::collections::BTreeMap;
use std::sync::Arc;
use stormsim_engine::{SimDuration, SimTime};

/// Most hosts a model may have, and instances a service may have: each has
/// state in memory (a limit that names itself, not an allocation failure).
const MAX_HOSTS: u64 = 1_000_000;
const MAX_INSTANCES: u32 = 1_000_000;
/// Longest model name, in bytes: it names the output folder, and file
/// systems allow 255 bytes a name component (with room for a suffix).
pub const MAX_NAME_BYTES: usize = 200;
/// Clock offsets beyond a day are typos, not skew.
const MAX_CLOCK_OFFSET_MS: f64 = 86_400_000.0;
/// More closed-loop users than this are an open-loop workload in disguise.
const MAX_USERS: u32 = 10_000_000;
/// Most rows a run's time series may hold: one per bucket run-wide and one
/// per service and per workload and bucket. A bound on memory that no
/// sensible model nears (the 46-minute Catalog incident, one service and 20
/// workloads, holds 60,720); the
/// simulator stops a run that reaches it (a run with no horizon cannot be
/// bounded here), and validation refuses a horizon that would. A model may
/// lower it (`limits.max_series_rows`), never raise it.
pub const MAX_SERIES_ROWS: u64 = 10_000_000;

/// Probabilities of a mixture must sum to 1 within this.
const PROBABILITY_TOLERANCE: f64 = 1e-9;

struct Checker {
    problems: Vec<Problem>,
}

impl Checker {
    fn fail(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.problems.push(Problem::new(path, message));
    }

    /// A finite number > 0.
    fn positive(&mut self, path: &str, value: f64) -> f64 {
        if !(value.is_finite() && value > 0.0) {
            self.fail(path, format!("expected a positive number, got {value}"));
        }
        value
    }

    /// A finite number ≥ 0.
    fn non_negative(&mut self, path: &str, value: f64) -> f64 {
        if !is_non_negative(value) {
            self.fail(path, format!("expected a number ≥ 0, got {value}"));
        }
        value
    }

    /// A probability in [0, 1].
    fn probability(&mut self, path: &str, value: f64) -> f64 {
        if !is_probability(value) {
            self.fail(
                path,
                format!("expected a probability in [0, 1], got {value}"),
            );
        }
        value
    }

    /// A clock offset in ms (either sign, at most a day), in ns.
    fn clock_offset(&mut self, path: &str, ms: f64) -> i64 {
        if !(ms.is_finite() && ms.abs() <= MAX_CLOCK_OFFSET_MS) {
            self.fail(
                path,
                format!("expected a clock offset within ±{MAX_CLOCK_OFFSET_MS} ms, got {ms}"),
            );
            return 0;
        }
        (ms * 1e6).round() as i64
    }

    fn seconds(&mut self, path: &str, s: f64) -> SimDuration {
        SimDuration::from_ms(self.non_negative(path, s) * 1000.0)
    }

    /// A positive duration in ms, at least the clock's step (1 ns): a smaller
    /// one is 0 on the clock, and a timeout, deadline or pause of 0 lets a
    /// loop go round forever at one instant.
    fn positive_ms(&mut self, path: &str, ms: f64) -> SimDuration {
        self.at_least_a_tick(path, ms, 1e-6, "ms");
        SimDuration::from_ms(self.positive(path, ms))
    }

    /// A positive duration in seconds, at least the clock's step.
    fn positive_s(&mut self, path: &str, s: f64) -> f64 {
        self.at_least_a_tick(path, s, 1e-9, "s");
        self.positive(path, s)
    }

    /// Fails a positive `value` (in units of which `tick` is 1 ns) below 1 ns;
    /// other values are `positive`'s to judge.
    fn at_least_a_tick(&mut self, path: &str, value: f64, tick: f64, unit: &str) {
        if value > 0.0 && value < tick {
            self.fail(
                path,
                below_a_tick(&format!("at least {tick} {unit}"), &small(value)),
            );
        }
    }

    fn optional_positive_ms(&mut self, path: &str, ms: Option<f64>) -> Option<SimDuration> {
        ms.map(|ms| self.positive_ms(path, ms))
    }

    fn unique_names<'a>(&mut self, list: &str, names: impl Iterator<Item = &'a str>) {
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, name) in names.enumerate() {
            if name.is_empty() {
                self.fail(format!("{list}[{i}].name"), "expected a non-empty name");
            } else if let Some(first) = seen.insert(name, i) {
                self.fail(
                    format!("{list}[{i}].name"),
                    format!("duplicate name {name:?} (also {list}[{first}])"),
                );
            }
        }
    }

    fn entity_name(&mut self, path: String, name: &str, reserved_ok: bool) {
        if let Some(message) = entity_name_problem(name, reserved_ok) {
            self.fail(path, message);
        }
    }

    fn dist(&mut self, path: &str, spec: &DistSpec) -> Dist {
        match spec {
            DistSpec::Constant { ms } => Dist::Constant(SimDuration::from_ms(
                self.non_negative(&format!("{path}.ms"), *ms),
            )),
            DistSpec::Uniform { min_ms, max_ms } => {
                let lo = self.non_negative(&format!("{path}.min_ms"), *min_ms);
                let hi = self.non_negative(&format!("{path}.max_ms"), *max_ms);
                if lo > hi {
                    self.fail(
                        format!("{path}.max_ms"),
                        format!("expected max_ms ≥ min_ms ({lo}), got {hi}"),
                    );
                }
                Dist::Uniform {
                    min_ms: lo,
                    max_ms: hi,
                }
            }
            DistSpec::Exponential { mean_ms } => Dist::Exponential {
                mean_ms: self.positive(&format!("{path}.mean_ms"), *mean_ms),
            },
            DistSpec::Lognormal { median_ms, p99_ms } => {
                let median = self.positive(&format!("{path}.median_ms"), *median_ms);
                let p99 = self.positive(&format!("{path}.p99_ms"), *p99_ms);
                if median.is_finite() && p99.is_finite() && p99 <= median {
                    self.fail(
                        format!("{path}.p99_ms"),
                        format!("expected p99_ms > median_ms ({median}), got {p99}"),
                    );
                    return Dist::Constant(SimDuration::ZERO);
                }
                Dist::lognormal_from_quantiles(median, p99)
            }
            DistSpec::Mixture { of } => {
                if of.is_empty() {
                    self.fail(format!("{path}.of"), "expected at least one component");
                    return Dist::Constant(SimDuration::ZERO);
                }
                let mut cumulative = Vec::with_capacity(of.len());
                let mut parts = Vec::with_capacity(of.len());
                let mut sum = 0.0;
                for (i, c) in of.iter().enumerate() {
                    let p_path = format!("{path}.of[{i}].p");
                    if !(c.p.is_finite() && (0.0..=1.0).contains(&c.p)) {
                        self.fail(
                            &p_path,
                            format!("expected a probability in [0, 1], got {}", c.p),
                        );
                    }
                    sum += c.p;
                    cumulative.push(sum);
                    parts.push(self.dist(&format!("{path}.of[{i}].dist"), &c.dist));
                }
                if (sum - 1.0).abs() > PROBABILITY_TOLERANCE {
                    self.fail(
                        format!("{path}.of"),
                        format!("expected probabilities summing to 1, got {sum}"),
                    );
                }
                if let Some(last) = cumulative.last_mut() {
                    *last = 1.0;
                }
                Dist::Mixture { cumulative, parts }
            }
            DistSpec::Quantiles { points, min_ms } => {
                self.guarded(path, |ck| ck.quantiles(path, points, *min_ms))
            }
            DistSpec::Histogram { buckets, min_ms } => {
                self.guarded(path, |ck| ck.histogram(path, buckets, *min_ms))
            }
            DistSpec::Normal { mean_ms, sd_ms } => self.guarded(path, |ck| Dist::TruncatedNormal {
                mean_ms: ck.non_negative(&format!("{path}.mean_ms"), *mean_ms),
                sd_ms: ck.non_negative(&format!("{path}.sd_ms"), *sd_ms),
            }),
            DistSpec::Gamma {
                shape,
                mean_ms,
                scale_ms,
            } => self.guarded(path, |ck| {
                let shape = ck.positive(&format!("{path}.shape"), *shape);
                let scale_ms = match (mean_ms, scale_ms) {
                    (Some(mean), None) => ck.positive(&format!("{path}.mean_ms"), *mean) / shape,
                    (None, Some(scale)) => ck.positive(&format!("{path}.scale_ms"), *scale),
                    (Some(_), Some(_)) => {
                        ck.fail(
                            format!("{path}.scale_ms"),
                            "expected mean_ms or scale_ms, not both",
                        );
                        f64::NAN
                    }
                    (None, None) => {
                        ck.fail(path, "expected mean_ms or scale_ms");
                        f64::NAN
                    }
                };
                Dist::Gamma { shape, scale_ms }
            }),
            DistSpec::Weibull { shape, scale_ms } => self.guarded(path, |ck| Dist::Weibull {
                shape: ck.positive(&format!("{path}.shape"), *shape),
                scale_ms: ck.positive(&format!("{path}.scale_ms"), *scale_ms),
            }),
            DistSpec::Pareto { shape, scale_ms } => self.guarded(path, |ck| {
                if !(shape.is_finite() && *shape > 1.0) {
                    ck.fail(
                        format!("{path}.shape"),
                        format!(
                            "expected a shape > 1 (at 1 or less the mean is infinite), got {shape}"
                        ),
                    );
                }
                Dist::Pareto {
                    shape: *shape,
                    scale_ms: ck.positive(&format!("{path}.scale_ms"), *scale_ms),
                }
            }),
        }
    }

    /// `build`'s distribution if it found no problem and its mean is finite,
    /// else a placeholder: a half-checked table (NaN, out of order) must never
    /// reach a sampler, and a mean that overflows (a Weibull of shape 0.001)
    /// would poison every estimate made from it.
    fn guarded(&mut self, path: &str, build: impl FnOnce(&mut Self) -> Dist) -> Dist {
        let before = self.problems.len();
        let dist = build(self);
        if self.problems.len() > before {
            return Dist::Constant(SimDuration::ZERO);
        }
        let mean = dist.mean_ms();
        if !mean.is_finite() {
            self.fail(
                path,
                format!("expected parameters giving a finite mean, got a mean of {mean} ms"),
            );
        }
        dist
    }

    /// A quantile table as a piecewise-linear CDF from `(min_ms, 0)`. Order is
    /// checked between neighbours that are themselves valid, so one bad value
    /// is one problem, not three.
    fn quantiles(&mut self, path: &str, points: &[QuantilePoint], min_ms: f64) -> Dist {
        let min = self.non_negative(&format!("{path}.min_ms"), min_ms);
        if points.is_empty() {
            self.fail(
                format!("{path}.points"),
                "expected at least one point (the maximum, at q = 1)",
            );
        }
        let mut ms = vec![min];
        let mut cdf = vec![0.0];
        let mut previous = is_non_negative(min).then_some((0.0, min));
        for (i, point) in points.iter().enumerate() {
            let q_path = format!("{path}.points[{i}].q");
            let ms_path = format!("{path}.points[{i}].ms");
            let q = self.probability(&q_path, point.q);
            let at = self.non_negative(&ms_path, point.ms);
            let valid = is_probability(q) && is_non_negative(at);
            if let (true, Some((prev_q, prev_ms))) = (valid, previous) {
                if q < prev_q {
                    self.fail(
                        &q_path,
                        format!("expected q ≥ {prev_q} (the previous point's), got {q}"),
                    );
                }
                if at < prev_ms {
                    let bound = if i == 0 {
                        "min_ms"
                    } else {
                        "the previous point's: a higher quantile cannot be faster"
                    };
                    self.fail(
                        &ms_path,
                        format!("expected ms ≥ {prev_ms} ({bound}), got {at}"),
                    );
                }
            }
            previous = valid.then_some((q, at));
            ms.push(at);
            cdf.push(q);
        }
        if let Some(last) = points.last() {
            if is_probability(last.q) && last.q != 1.0 {
                self.fail(
                    format!("{path}.points[{}].q", points.len() - 1),
                    format!(
                        "expected the last point at q = 1 (the maximum, which bounds the tail), got {}",
                        last.q
                    ),
                );
            }
        }
        Dist::Empirical { ms, cdf }
    }

    /// Cumulative histogram buckets as a piecewise-linear CDF from
    /// `(min_ms, 0)`, uniform within each bucket.
    fn histogram(&mut self, path: &str, buckets: &[HistogramBucket], min_ms: f64) -> Dist {
        let min = self.non_negative(&format!("{path}.min_ms"), min_ms);
        if buckets.is_empty() {
            self.fail(format!("{path}.buckets"), "expected at least one bucket");
        }
        let mut ms = vec![min];
        let mut counts = vec![0.0];
        let mut previous_le = is_non_negative(min).then_some(min);
        let mut previous_count = Some(0.0);
        for (i, bucket) in buckets.iter().enumerate() {
            let le_path = format!("{path}.buckets[{i}].le_ms");
            let count_path = format!("{path}.buckets[{i}].count");
            let le = self.non_negative(&le_path, bucket.le_ms);
            let count = self.non_negative(&count_path, bucket.count);
            let le_ok = is_non_negative(le);
            let count_ok = is_non_negative(count);
            match previous_le {
                Some(prev) if le_ok && i == 0 && le < prev => {
                    self.fail(
                        &le_path,
                        format!("expected le_ms ≥ {prev} (min_ms), got {le}"),
                    );
                }
                Some(prev) if le_ok && i > 0 && le <= prev => self.fail(
                    &le_path,
                    format!("expected le_ms > {prev} (the previous bucket's), got {le}"),
                ),
                _ => {}
            }
            match previous_count {
                Some(prev) if count_ok && count < prev => self.fail(
                    &count_path,
                    format!(
                        "expected count ≥ {prev} (the previous bucket's: counts are cumulative, \
                         observations ≤ le_ms, as Prometheus counts them), got {count}"
                    ),
                ),
                _ => {}
            }
            previous_le = le_ok.then_some(le);
            previous_count = count_ok.then_some(count);
            ms.push(le);
            counts.push(count);
        }
        let total = counts.last().copied().unwrap_or(0.0);
        if !buckets.is_empty() && total == 0.0 {
            self.fail(
                format!("{path}.buckets[{}].count", buckets.len() - 1),
                "expected some observations: the last bucket's (cumulative) count is 0",
            );
        }
        let cdf = counts.iter().map(|c| c / total).collect();
        Dist::Empirical { ms, cdf }
    }
}

fn is_non_negative(x: f64) -> bool {
    x.is_finite() && x >= 0.0
}

fn is_probability(x: f64) -> bool {
    x.is_finite() && (0.0..=1.0).contains(&x)
}

/// What is wrong with `name` as the name of an output folder (`outputs/<name>/`),
/// if anything: a model's and a sweep's names become folders, so one that
/// climbs (`..`), is absolute or hides (a leading '.') could write anywhere.
pub fn folder_name_problem(name: &str) -> Option<String> {
    if name.trim().is_empty() {
        Some("expected a non-empty name".into())
    } else if name.len() > MAX_NAME_BYTES {
        Some(format!(
            "expected a name of at most {MAX_NAME_BYTES} bytes (it names the output folder), got {}",
            name.len()
        ))
    } else if name.contains(char::is_control) {
        Some(format!(
            "expected a name usable as a folder (no control characters), got {name:?}"
        ))
    } else if name.contains(['/', '\\']) || name.starts_with('.') {
        Some(format!(
            "expected a name usable as a folder (no '/', '\\' or leading '.'), got {name:?}"
        ))
    } else {
        None
    }
}

/// The entity of a run's own figures in the tidy output files
/// (`summary.tidy.csv`, `timeseries.tidy.csv.gz`), beside the services' and
/// workloads' names: no service or workload may take it.
pub const RUN_ENTITY: &str = "run";

/// What is wrong with `name` as a service's or workload's name (or, with
/// `reserved_ok`, a priority class's), if anything. These names become
/// column names, `NAME.metric`, in summary.csv, timeseries.csv and a
/// sweep's tables: a '.' would make the split between name and metric
/// ambiguous (`pay.v2.calls`), and ',', quotes and control characters break
/// the CSV headers or the code that reads them. Classes are not columns
/// today; they follow the same rule so that they can become ones.
pub fn entity_name_problem(name: &str, reserved_ok: bool) -> Option<String> {
    if let Some(c) = name
        .chars()
        .find(|&c| matches!(c, '.' | ',' | '"' | '\'') || c.is_control())
    {
        Some(format!(
            "expected a name without '.', ',', quotes or control characters (it names output columns, NAME.metric), got {name:?} with {c:?}"
        ))
    } else if name == RUN_ENTITY && !reserved_ok {
        Some(format!(
            "the name {RUN_ENTITY:?} is reserved: it stands for the run's own figures in summary.tidy.csv and timeseries.tidy.csv.gz"
        ))
    } else {
        None
    }
}

/// Checks a parsed model and resolves it; all problems at once.
pub fn validate(spec: &ModelSpec) -> Result<Model, Vec<Problem>> {
    validate_model(spec, true)
}

/// [`validate`] for the model a timeline change leaves, its timeline (and
/// its variants) taken out of `spec`: those are the base's, checked with it,
/// and checking them again at every one of N changes made loading a model
/// quadratic in its timeline (3,000 entries: 56 s).
pub(crate) fn validate_change(spec: &ModelSpec) -> Result<Model, Vec<Problem>> {
    validate_model(spec, false)
}

fn validate_model(spec: &ModelSpec, with_timeline: bool) -> Result<Model, Vec<Problem>> {
    let mut ck = Checker {
        problems: Vec::new(),
    };
    ck.unique_names("services", spec.services.iter().map(|s| s.name.as_str()));
    ck.unique_names("workloads", spec.workloads.iter().map(|w| w.name.as_str()));
    ck.unique_names("variants", spec.variants.iter().map(|v| v.name.as_str()));
    for (i, s) in spec.services.iter().enumerate() {
        ck.entity_name(format!("services[{i}].name"), &s.name, false);
    }
    for (i, w) in spec.workloads.iter().enumerate() {
        ck.entity_name(format!("workloads[{i}].name"), &w.name, false);
        if let Some(class) = &w.class {
            ck.entity_name(format!("workloads[{i}].class"), class, true);
        }
    }
    if let Some(message) = folder_name_problem(&spec.name) {
        ck.fail("name", message);
    }
    if spec.services.is_empty() {
        ck.fail("services", "expected at least one service");
    }
    if spec.workloads.is_empty() {
        ck.fail("workloads", "expected at least one workload");
    }

    let ids: BTreeMap<&str, ServiceId> = spec
        .services
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.as_str(), i))
        .collect();
    let lookup = |ck: &mut Checker, path: String, name: &str| -> ServiceId {
        match ids.get(name) {
            Some(&id) => id,
            None => {
                ck.fail(path, format!("unknown service {name:?}"));
                0
            }
        }
    };

    let network = ck.dist("network.one_way", &spec.network.one_way);
    let hosts = spec.hosts.as_ref().map(|h| {
        if h.zones == 0 {
            ck.fail("hosts.zones", "expected at least 1 zone, got 0");
        }
        if h.per_zone == 0 {
            ck.fail("hosts.per_zone", "expected at least 1 host per zone, got 0");
        }
        if u64::from(h.zones) * u64::from(h.per_zone) > MAX_HOSTS {
            ck.fail(
                "hosts",
                format!(
                    "expected at most {MAX_HOSTS} hosts in all, got {} zones × {} per zone",
                    h.zones, h.per_zone
                ),
            );
        }
        Hosts {
            zones: h.zones.clamp(1, MAX_HOSTS as u32),
            per_zone: h
                .per_zone
                .clamp(1, (MAX_HOSTS / u64::from(h.zones.max(1))).max(1) as u32),
            slow: h.slow.as_ref().map(|s| {
                let factor = ck.positive("hosts.slow.factor", s.factor);
                if factor < 1.0 {
                    ck.fail(
                        "hosts.slow.factor",
                        format!("expected a slowdown of at least 1, got {factor}"),
                    );
                }
                SlowPeriods {
                    mean_gap_ns: ck.positive_s("hosts.slow.mean_gap_s", s.mean_gap_s) * 1e9,
                    mean_length_ns: ck.positive_s("hosts.slow.mean_length_s", s.mean_length_s)
                        * 1e9,
                    factor,
                }
            }),
        }
    });

    let mut classes: Vec<String> = Vec::new();
    for w in &spec.workloads {
        if let Some(c) = &w.class {
            if !classes.contains(c) {
                classes.push(c.clone());
            }
        }
    }
    if classes.len() > 255 {
        ck.fail("workloads", "at most 255 priority classes");
    }
    if spec.workloads.len() > usize::from(u16::MAX) {
        ck.fail(
            "workloads",
            format!(
                "at most {} workloads, got {}",
                u16::MAX,
                spec.workloads.len()
            ),
        );
    }
    let mut workloads: Vec<Arc<Workload>> = Vec::new();
    let mut workload_ids: Vec<WorkloadId> = Vec::new();
    // The workloads as outputs name them (copies summed or not).
    let mut reported_workloads: Vec<String> = Vec::new();
    for (i, w) in spec.workloads.iter().enumerate() {
        let at = format!("workloads[{i}]");
        let target = lookup(&mut ck, format!("{at}.target"), &w.target);
        let arrival = match &w.arrival {
            &ArrivalSpec::Poisson { rate_per_s } => Arrival::Poisson {
                mean_gap_ns: 1e9 / ck.positive(&format!("{at}.arrival.rate_per_s"), rate_per_s),
            },
            &ArrivalSpec::Constant { rate_per_s } => Arrival::Constant {
                rate_per_s: ck.positive(&format!("{at}.arrival.rate_per_s"), rate_per_s),
            },
            ArrivalSpec::AtOnce {} => {
                if w.requests.is_none() {
                    ck.fail(&at, "an at_once arrival needs `requests`");
                }
                Arrival::AtOnce
            }
            ArrivalSpec::Stages { .. }
            | ArrivalSpec::Sinusoid { .. }
            | ArrivalSpec::Bursts { .. }
            | ArrivalSpec::Trace { .. } => {
                let shape = rate_shape(&mut ck, &format!("{at}.arrival"), &w.arrival);
                Arrival::Shaped(Arc::new(shape))
            }
            &ArrivalSpec::ClosedLoop { users, .. } => {
                if users == 0 || users > MAX_USERS {
                    ck.fail(
                        format!("{at}.arrival.users"),
                        format!("expected 1 to {MAX_USERS} users, got {users}"),
                    );
                }
                Arrival::ClosedLoop {
                    users: users.clamp(1, MAX_USERS),
                }
            }
        };
        let think = match &w.arrival {
            ArrivalSpec::ClosedLoop { think, .. } => {
                let path = format!("{at}.arrival.think");
                // A user who never pauses, and whose try fails at once (an open
                // breaker), would ask again and again at one instant.
                let zero = matches!(think, DistSpec::Constant { ms } if *ms == 0.0)
                    || matches!(think, DistSpec::Uniform { max_ms, .. } if *max_ms == 0.0);
                if zero {
                    ck.fail(&path, "expected a think time above zero");
                }
                let think = ck.dist(&path, think);
                // One whose mean is under the clock's step is mostly 0.
                let mean_ms = think.mean_ms();
                if !zero && mean_ms < 1e-6 {
                    ck.fail(
                        &path,
                        below_a_tick(
                            "a think time of at least 0.000001 ms on average",
                            &format!("{} ms", small(mean_ms)),
                        ),
                    );
                }
                Some(think)
            }
            _ => None,
        };
        if w.requests.is_none() && w.duration_s.is_none() {
            ck.fail(
                &at,
                "expected `requests` or `duration_s` (or both): when does it stop?",
            );
        }
        if w.requests == Some(0) {
            ck.fail(
                format!("{at}.requests"),
                "expected a positive number, got 0",
            );
        }
        let duration = w
            .duration_s
            .map(|s| SimDuration::from_ms(ck.positive(&format!("{at}.duration_s"), s) * 1000.0));
        let workload = Workload {
            model_name: w.name.clone(),
            target,
            arrival,
            max_requests: w.requests,
            duration,
            deadline: ck.optional_positive_ms(&format!("{at}.deadline_ms"), w.deadline_ms),
            edge: {
                let mut edge = call_policy(
                    &mut ck,
                    &at,
                    target,
                    EdgeFields {
                        timeout_ms: w.timeout_ms,
                        connect_timeout_ms: w.connect_timeout_ms,
                        retry: w.retry.as_ref(),
                        breaker: w.breaker.as_ref(),
                        bulkhead: w.bulkhead.as_ref(),
                        rate_limit: w.rate_limit.as_ref(),
                        throttle: w.throttle.as_ref(),
                        balancer: w.balancer,
                        outlier_detection: w.outlier_detection.as_ref(),
                        deadline: w.deadline.as_ref(),
                        context: None,
                    },
                );
                // Without a deadline block, the caller's own deadline is sent down.
                if w.deadline.is_none() {
                    edge.deadline.propagate = w.deadline_ms.is_some();
                }
                if w.deadline.as_ref().is_some_and(|d| !d.subtract_elapsed) {
                    ck.fail(
                        format!("{at}.deadline.subtract_elapsed"),
                        "a workload received no budget to forward: `subtract_elapsed: false` applies to a service's calls",
                    );
                }
                Arc::new(edge)
            },
            class: w
                .class
                .as_ref()
                .and_then(|c| classes.iter().position(|x| x == c))
                .map(|i| i as u8),
            think,
            clock_offset: ck.clock_offset(&format!("{at}.clock_offset_ms"), w.clock_offset_ms),
        };
        let summed = match (w.report_copies, w.count) {
            (CopiesReport::Summed, None) => {
                ck.fail(
                    format!("{at}.report_copies"),
                    "only a workload with `count` has copies to sum",
                );
                false
            }
            (report, _) => report == CopiesReport::Summed,
        };
        let first_reported = reported_workloads.len();
        for (k, name) in copy_names(&mut ck, &at, &w.name, w.count)
            .into_iter()
            .enumerate()
        {
            // One reported workload for all the copies, or one each.
            let reported_as = (first_reported + if summed { 0 } else { k }) as u16;
            if !summed {
                reported_workloads.push(name.clone());
            }
            workload_ids.push(WorkloadId { name, reported_as });
        }
        // The copies share one workload (see `Model::workloads`).
        let workload = Arc::new(workload);
        workloads.extend((workloads.len()..workload_ids.len()).map(|_| Arc::clone(&workload)));
        if summed {
            reported_workloads.push(w.name.clone());
        }
    }

    // Copies take the names `name-01`…: none may be another workload's.
    let mut names: BTreeMap<&str, usize> = BTreeMap::new();
    for (k, w) in workload_ids.iter().enumerate() {
        if let Some(first) = names.insert(&w.name, k) {
            if spec.workloads.iter().any(|s| s.count.is_some()) {
                ck.fail(
                    "workloads",
                    format!(
                        "two workloads are named {:?} once copies are named (workloads #{first} and #{k}, counting copies)",
                        w.name
                    ),
                );
            }
        }
    }
    // Summed copies are reported by the workload's own name, which a copy of
    // another workload may take (`a-01` summed, and `a`'s first copy).
    let mut reported: BTreeMap<&str, usize> = BTreeMap::new();
    for (k, name) in reported_workloads.iter().enumerate() {
        if reported.insert(name, k).is_some() && names.len() == workloads.len() {
            ck.fail(
                "workloads",
                format!("two workloads are reported as {name:?} in outputs, once copies are named and summed: rename one"),
            );
        }
    }
    if workloads.len() > usize::from(u16::MAX) {
        ck.fail(
            "workloads",
            format!(
                "at most {} workloads, copies included, got {}",
                u16::MAX,
                workloads.len()
            ),
        );
    }
    let mut services = Vec::new();
    for (i, s) in spec.services.iter().enumerate() {
        let at = format!("services[{i}]");
        if s.workers == Some(0) {
            ck.fail(format!("{at}.workers"), "expected at least 1 worker, got 0");
        }
        let mut steps = Vec::new();
        let mut only_classes = Vec::new();
        for (j, step) in s.steps.iter().enumerate() {
            let sp = format!("{at}.steps[{j}]");
            if step.hold_worker == Some(false) && j + 1 != s.steps.len() {
                ck.fail(
                    format!("{sp}.hold_worker"),
                    "only a handler's last step may hand its request on (`hold_worker: false`): the steps after it would have no worker",
                );
            }
            if let Some(checked) = check_step(&mut ck, &sp, step, &lookup) {
                steps.push(checked);
                only_classes.push(step.only_classes.as_ref().map(|names| {
                    names
                        .iter()
                        .enumerate()
                        .filter_map(|(k, name)| match classes.iter().position(|c| c == name) {
                            Some(i) => Some(i as u8),
                            None => {
                                ck.fail(
                                    format!("{sp}.only_classes[{k}]"),
                                    format!("unknown class {name:?}: no workload has it"),
                                );
                                None
                            }
                        })
                        .collect()
                }));
            }
        }
        let draws_at_admission = steps.iter().any(|step| {
            matches!(
                step,
                Step::Work {
                    drawn_at: DrawnAt::Admission,
                    ..
                }
            )
        });
        services.push(Service {
            name: s.name.clone(),
            draws_at_admission,
            workers: s.workers.unwrap_or(u32::MAX),
            queue_capacity: s.queue_capacity.map_or(usize::MAX, |c| c as usize),
            contention: s.contention.as_ref().map(|c| {
                let cp = format!("{at}.contention");
                let exponent = c.exponent.unwrap_or(1.0);
                if !(exponent.is_finite() && (1.0..=4.0).contains(&exponent)) {
                    ck.fail(
                        format!("{cp}.exponent"),
                        format!("expected a power from 1 (linear) to 4, got {exponent}"),
                    );
                }
                Contention {
                    per_request: ck.non_negative(&format!("{cp}.per_request"), c.per_request),
                    exponent,
                }
            }),
            cpu: s.cpu.as_ref().map(|c| {
                if c.cores == 0 {
                    ck.fail(format!("{at}.cpu.cores"), "expected at least 1 core, got 0");
                }
                Cpu {
                    cores: c.cores.max(1),
                }
            }),
            queue_discipline: queue_discipline(
                &mut ck,
                &format!("{at}.queue_discipline"),
                s.queue_discipline.as_ref(),
                &classes,
            ),
            default_deadline: ck
                .optional_positive_ms(&format!("{at}.default_deadline_ms"), s.default_deadline_ms),
            steps,
            only_classes,
            admission: Admission {
                drop_fraction: ck.probability(
                    &format!("{at}.admission.drop_fraction"),
                    s.admission.drop_fraction,
                ),
                drop_expired_margin: s.admission.drop_expired.as_ref().map(|d| {
                    SimDuration::from_ms(ck.non_negative(
                        &format!("{at}.admission.drop_expired.margin_ms"),
                        d.margin_ms,
                    ))
                }),
                rate_limit: s.admission.rate_limit.as_ref().map(|r| {
                    check_rate_limit(&mut ck, &format!("{at}.admission.rate_limit"), r);
                    r.clone()
                }),
                shed_classes: {
                    let mut thresholds = vec![u32::MAX; classes.len()];
                    for (name, limit) in &s.admission.shed_classes {
                        match classes.iter().position(|c| c == name) {
                            Some(i) => thresholds[i] = *limit,
                            None => ck.fail(
                                format!("{at}.admission.shed_classes.{name}"),
                                format!("unknown class {name:?}: no workload has it"),
                            ),
                        }
                    }
                    thresholds
                },
                concurrency_limit: s.admission.concurrency_limit.as_ref().map(|c| {
                    check_concurrency_limit(
                        &mut ck,
                        &format!("{at}.admission.concurrency_limit"),
                        c,
                    )
                }),
                retry_after: ck.optional_positive_ms(
                    &format!("{at}.admission.retry_after_ms"),
                    s.admission.retry_after_ms,
                ),
                codel: s.admission.codel.as_ref().map(|c| {
                    ck.positive(&format!("{at}.admission.codel.target_ms"), c.target_ms);
                    ck.positive(&format!("{at}.admission.codel.interval_ms"), c.interval_ms);
                    c.clone()
                }),
            },
            instances: {
                if s.instances == 0 || s.instances > MAX_INSTANCES {
                    ck.fail(
                        format!("{at}.instances"),
                        format!(
                            "expected 1 to {MAX_INSTANCES} instances, got {}",
                            s.instances
                        ),
                    );
                }
                s.instances.clamp(1, MAX_INSTANCES)
            },
            instances_down: {
                if s.instances_down > s.instances {
                    ck.fail(
                        format!("{at}.instances_down"),
                        format!(
                            "expected at most `instances` ({}), got {}",
                            s.instances, s.instances_down
                        ),
                    );
                }
                s.instances_down.min(s.instances)
            },
            down_mode: s.down_mode,
            shards: {
                if s.shards == 0 || s.instances % s.shards.max(1) != 0 {
                    ck.fail(
                        format!("{at}.shards"),
                        format!(
                            "expected a divisor of `instances` ({}), got {}",
                            s.instances, s.shards
                        ),
                    );
                }
                s.shards.max(1)
            },
            host_of: hosts.map(|h| {
                let replicas = (s.instances / s.shards.max(1)).max(1);
                (0..s.instances.min(MAX_INSTANCES))
                    .map(|i| h.host_of(s.placement, i / replicas, i % replicas))
                    .collect()
            }),
            replica_work_factor: s.replica_work_factor.as_ref().map(|factors| {
                let replicas = (s.instances / s.shards.max(1)).max(1);
                if factors.len() != replicas as usize {
                    ck.fail(
                        format!("{at}.replica_work_factor"),
                        format!(
                            "expected one factor per replica ({replicas}), got {}",
                            factors.len()
                        ),
                    );
                }
                factors
                    .iter()
                    .enumerate()
                    .map(|(r, &f)| ck.positive(&format!("{at}.replica_work_factor[{r}]"), f))
                    .collect()
            }),
            clock_offset: ck.clock_offset(&format!("{at}.clock_offset_ms"), s.clock_offset_ms),
            clock_spread: {
                let path = format!("{at}.clock_spread_ms");
                if s.clock_spread_ms.is_finite() && s.clock_spread_ms >= 0.0 {
                    ck.clock_offset(&path, s.clock_spread_ms)
                } else {
                    ck.non_negative(&path, s.clock_spread_ms);
                    0
                }
            },
        });
    }
    // A fan-out waits for all its children (one per shard of the callee), or
    // for at most that many.
    let shards: Vec<u32> = services.iter().map(|s| s.shards).collect();
    for (i, service) in services.iter_mut().enumerate() {
        for (j, step) in service.steps.iter_mut().enumerate() {
            let Step::Call(policy) = step else { continue };
            let callee_shards = shards.get(policy.to).copied().unwrap_or(1);
            let Some(fan_out) = policy.fan_out.as_mut() else {
                continue;
            };
            if fan_out.wait_for == u32::MAX {
                fan_out.wait_for = callee_shards;
            } else if fan_out.wait_for > callee_shards {
                ck.fail(
                    format!("services[{i}].steps[{j}].fan_out.wait_for"),
                    format!(
                        "expected at most the callee's {callee_shards} shards, got {}",
                        fan_out.wait_for
                    ),
                );
            }
        }
    }
    if ck.problems.is_empty() {
        find_call_cycles(&mut ck, &services);
    }
    let focus = match &spec.focus {
        Some(name) => lookup(&mut ck, "focus".into(), name),
        None => workloads.first().map_or(0, |w| w.target),
    };
    let horizon = spec
        .horizon_s
        .map(|h| SimDuration::from_ms(ck.positive("horizon_s", h) * 1000.0));
    let bucket =
        SimDuration::from_ms(ck.positive("timeseries.bucket_s", spec.timeseries.bucket_s) * 1000.0);
    let max_series_rows = spec.limits.max_series_rows;
    if !(1..=MAX_SERIES_ROWS).contains(&max_series_rows) {
        ck.fail(
            "limits.max_series_rows",
            format!("must be from 1 to {MAX_SERIES_ROWS} (the most any run may keep), not {max_series_rows}"),
        );
    }
    if let Some(h) = spec.horizon_s {
        let buckets = (h / spec.timeseries.bucket_s).ceil();
        // As the series keeps them: copies summed into one report are one.
        let rows = buckets * (1 + spec.services.len() + reported_workloads.len()) as f64;
        let limit = max_series_rows.min(MAX_SERIES_ROWS);
        if rows > limit as f64 {
            let most = if limit < MAX_SERIES_ROWS {
                format!("{limit} (limits.max_series_rows)")
            } else {
                format!("{MAX_SERIES_ROWS:.0e}")
            };
            ck.fail(
                "timeseries.bucket_s",
                format!(
                    "the horizon holds {buckets:.3e} buckets of {} s, {rows:.3e} time-series rows with {} services and {} workloads (one per bucket, and one per service and per workload and bucket): at most {most}; widen the buckets or shorten the horizon",
                    spec.timeseries.bucket_s,
                    spec.services.len(),
                    reported_workloads.len()
                ),
            );
        }
    }
    let metastability = spec.metastability.as_ref().map(|m| Metastability {
        baseline_from: ck.seconds("metastability.baseline_from_s", m.baseline_from_s),
        goodput_band: ck.probability("metastability.goodput_band", m.goodput_band),
        latency_factor: ck.positive("metastability.latency_factor", m.latency_factor),
        hold: ck.seconds("metastability.hold_s", m.hold_s),
        noise_z: ck.positive("metastability.noise_z", m.noise_z),
        storm_retry_share: ck.probability("metastability.storm_retry_share", m.storm_retry_share),
        max_recovery: ck.seconds("metastability.max_recovery_s", m.max_recovery_s),
    });
    if metastability.is_some() && with_timeline {
        for role in [TimelineRole::TriggerStart, TimelineRole::TriggerEnd] {
            if !spec.timeline.iter().any(|e| e.role == Some(role)) {
                ck.fail(
                    "metastability",
                    format!("needs a timeline entry with role {:?}", role_name(role)),
                );
            }
        }
    }
    // Names are selectors (`timeline[NAME]`): two alike would make one
    // unreachable.
    ck.unique_names("timeline", spec.timeline.iter().map(|e| e.name.as_str()));
    // A fault cannot end before it starts: a verdict judged from such a
    // window would be about nothing.
    let role_at = |role| {
        spec.timeline
            .iter()
            .enumerate()
            .filter(|(_, e)| e.role == Some(role))
            .map(|(i, e)| (i, e.at_s))
            .next()
    };
    if let (Some((_, start)), Some((end_i, end))) = (
        role_at(TimelineRole::TriggerStart),
        role_at(TimelineRole::TriggerEnd),
    ) {
        if end < start {
            ck.fail(
                format!("timeline[{end_i}].at_s"),
                format!("the trigger_end entry ({end} s) comes before the trigger_start entry ({start} s)"),
            );
        }
    }
    for (i, e) in spec.timeline.iter().enumerate() {
        ck.non_negative(&format!("timeline[{i}].at_s"), e.at_s);
        if let Some(over) = e.over_s {
            ck.positive(&format!("timeline[{i}].over_s"), over);
        }
    }

    if ck.problems.is_empty() {
        Ok(Model {
            name: spec.name.clone(),
            seed: spec.seed,
            network,
            hosts,
            workloads,
            workload_ids: Arc::new(workload_ids),
            services: shared(services),
            limits: Limits {
                max_events: spec.limits.max_events,
                max_in_flight: spec.limits.max_in_flight,
                max_series_rows,
            },
            horizon,
            bucket,
            metastability,
            focus,
            classes,
            reported_workloads: Arc::new(reported_workloads),
        })
    } else {
        Err(ck.problems)
    }
}

/// Each element behind its own [`Arc`], so that timeline steps can share the
/// ones they leave alone ([`Model::share_unchanged_parts`]). Collected into a
/// new vector: `collect` would reuse the elements' buffer, and a step would
/// keep all of it (5.6 KB for twenty workloads, against 160 bytes of
/// pointers).
fn shared<T>(parts: Vec<T>) -> Vec<Arc<T>> {
    let mut arcs = Vec::with_capacity(parts.len());
    arcs.extend(parts.into_iter().map(Arc::new));
    arcs
}

/// A concurrency limit that can never admit (a limit of 0, a floor above
/// its ceiling) or never settles (a backoff that grows the limit) sheds
/// everything or nothing: refused rather than simulated.
fn check_concurrency_limit(
    ck: &mut Checker,
    at: &str,
    c: &ConcurrencyLimitSpec,
) -> ConcurrencyLimitSpec {
    let bounds = |ck: &mut Checker, initial: u32, min: u32, max: u32, max_name: &str| {
        for (name, value) in [
            ("initial_limit", initial),
            ("min_limit", min),
            (max_name, max),
        ] {
            if value == 0 {
                ck.fail(format!("{at}.{name}"), "expected an integer ≥ 1, got 0");
            }
        }
        if min > max {
            ck.fail(
                format!("{at}.min_limit"),
                format!("expected min_limit ≤ {max_name} ({max}), got {min}"),
            );
        } else if initial != 0 && !(min..=max).contains(&initial) {
            ck.fail(
                format!("{at}.initial_limit"),
                format!("expected initial_limit within min_limit..{max_name} ({min}..{max}), got {initial}"),
            );
        }
    };
    match *c {
        ConcurrencyLimitSpec::Fixed { limit } => {
            if limit == 0 {
                ck.fail(format!("{at}.limit"), "expected an integer ≥ 1, got 0");
            }
        }
        ConcurrencyLimitSpec::Aimd {
            initial_limit,
            min_limit,
            max_limit,
            backoff_ratio,
            timeout_ms,
        } => {
            bounds(ck, initial_limit, min_limit, max_limit, "max_limit");
            if !(backoff_ratio > 0.0 && backoff_ratio < 1.0) {
                ck.fail(
                    format!("{at}.backoff_ratio"),
                    format!("expected a ratio strictly between 0 and 1, got {backoff_ratio}"),
                );
            }
            ck.positive_ms(&format!("{at}.timeout_ms"), timeout_ms);
        }
        ConcurrencyLimitSpec::Gradient2 {
            initial_limit,
            min_limit,
            max_concurrency,
            smoothing,
            rtt_tolerance,
        } => {
            bounds(
                ck,
                initial_limit,
                min_limit,
                max_concurrency,
                "max_concurrency",
            );
            if !(0.0..=1.0).contains(&smoothing) {
                ck.fail(
                    format!("{at}.smoothing"),
                    format!("expected a smoothing in [0, 1], got {smoothing}"),
                );
            }
            if !(rtt_tolerance.is_finite() && rtt_tolerance >= 1.0) {
                ck.fail(
                    format!("{at}.rtt_tolerance"),
                    format!("expected a tolerance ≥ 1 (a ratio of latencies), got {rtt_tolerance}"),
                );
            }
        }
    }
    c.clone()
}

fn check_step(
    ck: &mut Checker,
    at: &str,
    step: &StepSpec,
    lookup: &dyn Fn(&mut Checker, String, &str) -> ServiceId,
) -> Option<Step> {
    if let Some(parallel) = &step.parallel {
        return check_parallel(ck, at, step, parallel, lookup);
    }
    if step.optional.is_some() {
        ck.fail(
            format!("{at}.optional"),
            "only a branch of a `parallel` step takes this field",
        );
    }
    match (&step.work, &step.call) {
        (Some(_), Some(_)) => {
            ck.fail(at, "a step is either `work` or `call`, not both");
            None
        }
        (None, None) => {
            ck.fail(
                at,
                "expected `work` (local work), `call` (a downstream call) or `parallel` (calls at once)",
            );
            None
        }
        (Some(work), None) => {
            let call_only = [
                ("retry", step.retry.is_some()),
                ("breaker", step.breaker.is_some()),
                ("bulkhead", step.bulkhead.is_some()),
                ("rate_limit", step.rate_limit.is_some()),
                ("throttle", step.throttle.is_some()),
                ("balancer", step.balancer.is_some()),
                ("outlier_detection", step.outlier_detection.is_some()),
                ("connect_timeout_ms", step.connect_timeout_ms.is_some()),
                ("context", step.context.is_some()),
                ("fan_out", step.fan_out.is_some()),
                ("hedge", step.hedge.is_some()),
                ("cache", step.cache.is_some()),
                ("hold_worker", step.hold_worker.is_some()),
                ("idempotent", step.idempotent.is_some()),
                ("fallback", step.fallback.is_some()),
            ];
            for (field, present) in call_only {
                if present {
                    ck.fail(
                        format!("{at}.{field}"),
                        "only a `call` step takes this field",
                    );
                }
            }
            let deadline = step.deadline.as_ref().map(|d| {
                let dp = format!("{at}.deadline");
                if d.first_attempt_cap_ms.is_some() {
                    ck.fail(
                        format!("{dp}.first_attempt_cap_ms"),
                        "a work step makes no attempts: only `margin_ms` and `min_budget_ms` apply",
                    );
                }
                if d.encoding != DeadlineEncoding::Relative {
                    ck.fail(
                        format!("{dp}.encoding"),
                        "a work step sends no deadline on: `encoding` applies to calls",
                    );
                }
                if !d.subtract_elapsed {
                    ck.fail(
                        format!("{dp}.subtract_elapsed"),
                        "a work step sends no deadline on: `subtract_elapsed` applies to calls",
                    );
                }
                WorkDeadline {
                    margin: SimDuration::from_ms(
                        ck.non_negative(&format!("{dp}.margin_ms"), d.margin_ms),
                    ),
                    min_budget: SimDuration::from_ms(
                        ck.non_negative(&format!("{dp}.min_budget_ms"), d.min_budget_ms),
                    ),
                }
            });
            let error = step.error.as_ref().map(|e| {
                let ep = format!("{at}.error");
                let work = match (&e.work, e.fraction) {
                    (Some(_), Some(_)) => {
                        ck.fail(
                            format!("{ep}.fraction"),
                            "give `work` (the failing execution's own duration) or `fraction` (a share of the step's), not both",
                        );
                        ErrorWork::Fraction(1.0)
                    }
                    (Some(dist), None) => ErrorWork::Dist(ck.dist(&format!("{ep}.work"), dist)),
                    (None, fraction) => ErrorWork::Fraction(
                        ck.probability(&format!("{ep}.fraction"), fraction.unwrap_or(1.0)),
                    ),
                };
                StepError {
                    p: ck.probability(&format!("{ep}.p"), e.p),
                    work,
                    status: e.status.unwrap_or_default(),
                }
            });
            Some(Step::Work {
                dist: ck.dist(&format!("{at}.work"), work),
                on_cancel: step.on_cancel.unwrap_or(OnCancel::Finish),
                timeout: ck
                    .optional_positive_ms(&format!("{at}.timeout_ms"), step.timeout_ms)
                    .unwrap_or(SimDuration::INFINITE),
                deadline,
                error,
                drawn_at: step.drawn_at.unwrap_or_default(),
            })
        }
        (None, Some(callee)) => {
            if step.on_cancel.is_some() {
                ck.fail(
                    format!("{at}.on_cancel"),
                    "only a `work` step takes this field (a call's reaction is its `context`)",
                );
            }
            if step.error.is_some() {
                ck.fail(
                    format!("{at}.error"),
                    "only a `work` step takes this field (a call fails when its callee does)",
                );
            }
            if step.drawn_at.is_some() {
                ck.fail(
                    format!("{at}.drawn_at"),
                    "only a `work` step takes this field (a call's duration is its callee's)",
                );
            }
            // A call to itself is reported as the cycle `A -> A`.
            let to = lookup(ck, format!("{at}.call"), callee);
            let hedge = step.hedge.as_ref().map(|h| {
                if step.idempotent != Some(true) {
                    ck.fail(
                        format!("{at}.hedge"),
                        "hedging sends the same request twice: mark the call `idempotent: true` if it may run twice",
                    );
                }
                hedge_policy(ck, &format!("{at}.hedge"), h)
            });
            let fan_out = step.fan_out.as_ref().map(|f| {
                if f.wait_for == Some(0) {
                    ck.fail(
                        format!("{at}.fan_out.wait_for"),
                        "expected at least 1, got 0",
                    );
                }
                FanOut {
                    // Resolved against the callee's shards once all are known.
                    wait_for: f.wait_for.unwrap_or(u32::MAX),
                    deadline: ck
                        .optional_positive_ms(&format!("{at}.fan_out.deadline_ms"), f.deadline_ms),
                    correlated_slowdown: f.correlated_slowdown.as_ref().map(|c| {
                        let cp = format!("{at}.fan_out.correlated_slowdown");
                        if !(c.factor.is_finite() && c.factor >= 1.0) {
                            ck.fail(
                                format!("{cp}.factor"),
                                format!("expected a slowdown of at least 1, got {}", c.factor),
                            );
                        }
                        CorrelatedSlowdown {
                            p: ck.probability(&format!("{cp}.p"), c.p),
                            factor: c.factor,
                        }
                    }),
                }
            });
            let mut policy = call_policy(
                ck,
                at,
                to,
                EdgeFields {
                    timeout_ms: step.timeout_ms,
                    connect_timeout_ms: step.connect_timeout_ms,
                    retry: step.retry.as_ref(),
                    breaker: step.breaker.as_ref(),
                    bulkhead: step.bulkhead.as_ref(),
                    rate_limit: step.rate_limit.as_ref(),
                    throttle: step.throttle.as_ref(),
                    balancer: step.balancer,
                    outlier_detection: step.outlier_detection.as_ref(),
                    deadline: step.deadline.as_ref(),
                    context: step.context,
                },
            );
            policy.hedge = hedge;
            policy.fan_out = fan_out;
            policy.hold_worker = step.hold_worker.unwrap_or(true);
            policy.cache = step
                .cache
                .as_ref()
                .map(|c| cache_policy(ck, &format!("{at}.cache"), c));
            if policy.cache.is_some() && policy.fan_out.is_some() {
                ck.fail(
                    format!("{at}.cache"),
                    "a cached call cannot also fan out: cache the shards' caller instead",
                );
            }
            if let Some(f) = &step.fallback {
                let mut fallback =
                    check_fallback(ck, &format!("{at}.fallback"), f, &policy, lookup);
                fallback.for_a_write = step.idempotent == Some(false);
                if !policy.hold_worker {
                    let worked = (fallback.chain.iter())
                        .position(|u| matches!(u, FallbackUse::Default { work: Some(_) }));
                    if let Some(i) = worked {
                        ck.fail(
                            format!("{at}.fallback.chain[{i}].work"),
                            "the step hands its request on (`hold_worker: false`): its worker is gone when the call fails, and a default's work would have none; give the default no work, or keep the worker",
                        );
                    }
                }
                policy.fallback = Some(Box::new(fallback));
            }
            Some(Step::Call(Box::new(policy)))
        }
    }
}

/// A call step's fallback; `primary` is the call it stands in for.
fn check_fallback(
    ck: &mut Checker,
    at: &str,
    f: &FallbackSpec,
    primary: &CallPolicy,
    lookup: &dyn Fn(&mut Checker, String, &str) -> ServiceId,
) -> Fallback {
    if f.on.is_empty() {
        ck.fail(
            format!("{at}.on"),
            "expected at least one failure: with none the fallback is never taken (remove it)",
        );
    }
    let n = f.chain.len();
    if !(1..=Fallback::MAX_CHAIN).contains(&n) {
        ck.fail(
            format!("{at}.chain"),
            format!(
                "expected 1 to {} kinds of fallback, got {n}",
                Fallback::MAX_CHAIN
            ),
        );
    }
    let mut chain = Vec::with_capacity(n);
    for (i, use_) in f.chain.iter().enumerate() {
        let up = format!("{at}.chain[{i}]");
        if let Some(last) = i.checked_sub(1).map(|k| &f.chain[k]) {
            if matches!(
                last,
                FallbackUseSpec::Default { .. } | FallbackUseSpec::Fail
            ) {
                let what = match last {
                    FallbackUseSpec::Fail => "`fail` ends the chain",
                    _ => "`default` always answers",
                };
                ck.fail(up.clone(), format!("never reached: {what}"));
            }
        }
        chain.push(match use_ {
            FallbackUseSpec::Stale { max_staleness_ms } => {
                if primary.cache.is_none() {
                    ck.fail(
                        up.clone(),
                        "a `stale` fallback serves from the step's cache: give the step a `cache`",
                    );
                }
                FallbackUse::Stale {
                    max_staleness: ck
                        .positive_ms(&format!("{up}.max_staleness_ms"), *max_staleness_ms),
                }
            }
            FallbackUseSpec::Default { work } => FallbackUse::Default {
                work: work.as_ref().map(|w| ck.dist(&format!("{up}.work"), w)),
            },
            FallbackUseSpec::Fail => FallbackUse::Fail,
            FallbackUseSpec::Call(step) => {
                let refused = "a `call` fallback takes a call's policies but not this field";
                let Some(plain) = nested_call(ck, &up, step, "a `call` fallback", refused, false)
                else {
                    continue;
                };
                match check_step(ck, &up, &plain, lookup) {
                    Some(Step::Call(policy)) => {
                        if policy.to == primary.to {
                            ck.fail(
                                format!("{up}.call"),
                                "a `call` fallback to the service whose call failed is a retry: use `retry`, or fall back to another service",
                            );
                        }
                        FallbackUse::Call(policy)
                    }
                    _ => continue,
                }
            }
        });
    }
    Fallback {
        on: f.on.iter().fold(0, |set, o| set | o.bit()),
        chain,
        degraded: f.degraded,
        for_a_write: false,
    }
}

/// A parallel step: its branches are calls on edges of their own; the step
/// itself takes nothing but its branches, `wait_for`, `deadline_ms` and
/// `only_classes`.
fn check_parallel(
    ck: &mut Checker,
    at: &str,
    step: &StepSpec,
    parallel: &ParallelSpec,
    lookup: &dyn Fn(&mut Checker, String, &str) -> ServiceId,
) -> Option<Step> {
    let own_fields = StepSpec {
        parallel: None,
        only_classes: None,
        ..step.clone()
    };
    for field in present_fields(&own_fields) {
        ck.fail(
            format!("{at}.{field}"),
            "a `parallel` step's policies go on each of its branches",
        );
    }
    let n = parallel.branches.len();
    let pp = format!("{at}.parallel");
    if !(2..=Parallel::MAX_BRANCHES).contains(&n) {
        ck.fail(
            format!("{pp}.branches"),
            format!("expected 2 to {} branches, got {n}", Parallel::MAX_BRANCHES),
        );
    }
    let mut branches = Vec::with_capacity(n);
    let mut required = 0u64;
    for (b, branch) in parallel.branches.iter().enumerate() {
        let bp = format!("{pp}.branches[{b}]");
        let refused = "a branch of a `parallel` step takes a call's policies but not this field";
        let Some(plain) = nested_call(
            ck,
            &bp,
            branch,
            "a branch of a `parallel` step",
            refused,
            true,
        ) else {
            continue;
        };
        if let Some(Step::Call(policy)) = check_step(ck, &bp, &plain, lookup) {
            if b < Parallel::MAX_BRANCHES && branch.optional != Some(true) {
                required |= 1 << b;
            }
            branches.push(*policy);
        }
    }
    // A handler waiting on a group of calls stops for its caller only when
    // the whole group does: branches cut from the request's lifetime beside
    // branches tied to it would leave it half stopped.
    if let Some(b) = (1..n).find(|&b| parallel.branches[b].context != parallel.branches[0].context)
    {
        ck.fail(
            format!("{pp}.branches[{b}].context"),
            "every branch of a `parallel` step takes the same `context` as its first",
        );
    }
    // A branch's fallback call is a child of the same group: it stops with
    // the group, whatever it says.
    for (b, branch) in parallel.branches.iter().enumerate() {
        let chain = branch
            .fallback
            .iter()
            .flat_map(|f| f.chain.iter().enumerate());
        for (i, use_) in chain {
            if let FallbackUseSpec::Call(call) = use_ {
                let group = parallel.branches[0].context.unwrap_or(CallContext::Request);
                if call.context.is_some_and(|c| c != group) {
                    ck.fail(
                        format!("{pp}.branches[{b}].fallback.chain[{i}].context"),
                        "a branch's fallback call ends with its `parallel` step: it takes the branches' `context`",
                    );
                }
            }
        }
    }
    let optional = parallel.branches.iter().any(|b| b.optional == Some(true));
    if let Some(k) = parallel.wait_for {
        if k == 0 || k as usize > n {
            ck.fail(
                format!("{pp}.wait_for"),
                format!("expected 1 to the {n} branches, got {k}"),
            );
        }
        if optional {
            ck.fail(
                format!("{pp}.wait_for"),
                "with `wait_for` any branch may fail (the first `wait_for` successes complete the step): mark no branch `optional`",
            );
        }
    } else if optional && required == 0 {
        ck.fail(
            format!("{pp}.branches"),
            "every branch is `optional`: the step could never fail; make one required, or use `wait_for`",
        );
    }
    let deadline = ck.optional_positive_ms(&format!("{pp}.deadline_ms"), parallel.deadline_ms);
    (branches.len() == n).then(|| {
        Step::Parallel(Box::new(Parallel {
            branches,
            required,
            wait_for: parallel.wait_for,
            deadline,
        }))
    })
}

/// A call inside another step (`what`: a parallel step's branch, a
/// fallback's `call`): a `call` step without the fields that make a step of
/// its own, each refused with `refused`. A branch (`branch`) may be
/// `optional` and have a `fallback`; a fallback's call neither. Returns the
/// step to check as a plain call (`optional` left out), if it calls.
fn nested_call(
    ck: &mut Checker,
    at: &str,
    step: &StepSpec,
    what: &str,
    refused: &str,
    branch: bool,
) -> Option<StepSpec> {
    if step.call.is_none() {
        ck.fail(
            at,
            format!("expected a `call` step: {what} calls a service"),
        );
        return None;
    }
    let not_nested = [
        ("fan_out", step.fan_out.is_some()),
        ("cache", step.cache.is_some()),
        ("hold_worker", step.hold_worker.is_some()),
        ("parallel", step.parallel.is_some()),
        ("only_classes", step.only_classes.is_some()),
        ("optional", !branch && step.optional.is_some()),
        ("fallback", !branch && step.fallback.is_some()),
    ];
    for (field, present) in not_nested {
        if present {
            ck.fail(format!("{at}.{field}"), refused);
        }
    }
    Some(StepSpec {
        optional: None,
        ..step.clone()
    })
}

/// The names of the fields of a step that are set, in declaration order.
fn present_fields(step: &StepSpec) -> Vec<String> {
    match serde_json::to_value(step) {
        Ok(serde_json::Value::Object(fields)) => fields
            .into_iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, _)| k)
            .collect(),
        _ => Vec::new(),
    }
}

/// Most buckets of a `trace` arrival.
pub const MAX_TRACE_BUCKETS: usize = 1_000_000;

/// A shaped arrival's rate function, each value checked at its path.
fn rate_shape(ck: &mut Checker, at: &str, spec: &ArrivalSpec) -> RateShape {
    let rate = |ck: &mut Checker, field: &str, r: f64| ck.non_negative(&format!("{at}.{field}"), r);
    let shape = match spec {
        ArrivalSpec::Stages {
            start_rate_per_s,
            stages,
        } => {
            if stages.is_empty() {
                ck.fail(format!("{at}.stages"), "expected at least one stage");
            }
            let mut t = 0.0;
            let ends = (stages.iter().enumerate())
                .map(|(k, stage)| {
                    t += ck.non_negative(&format!("{at}.stages[{k}].duration_s"), stage.duration_s);
                    let target = format!("stages[{k}].target_rate_per_s");
                    (t, rate(ck, &target, stage.target_rate_per_s))
                })
                .collect();
            RateShape::Stages {
                start: rate(ck, "start_rate_per_s", *start_rate_per_s),
                ends,
            }
        }
        ArrivalSpec::Sinusoid {
            mean_rate_per_s,
            amplitude_rate_per_s,
            period_s,
            phase_s,
        } => {
            let mean = rate(ck, "mean_rate_per_s", *mean_rate_per_s);
            let amplitude = rate(ck, "amplitude_rate_per_s", *amplitude_rate_per_s);
            if amplitude > mean {
                ck.fail(
                    format!("{at}.amplitude_rate_per_s"),
                    format!("expected at most the mean rate ({mean}), so that the rate stays above zero, got {amplitude}"),
                );
            }
            if !phase_s.is_finite() {
                ck.fail(
                    format!("{at}.phase_s"),
                    format!("expected a number, got {phase_s}"),
                );
            }
            RateShape::Sinusoid {
                mean,
                amplitude,
                period: ck.positive(&format!("{at}.period_s"), *period_s),
                phase: *phase_s,
            }
        }
        ArrivalSpec::Bursts {
            base_rate_per_s,
            burst_rate_per_s,
            every_s,
            length_s,
            first_at_s,
        } => {
            let every = ck.positive(&format!("{at}.every_s"), *every_s);
            let length = ck.positive(&format!("{at}.length_s"), *length_s);
            if length > every {
                ck.fail(
                    format!("{at}.length_s"),
                    format!("expected at most `every_s` ({every}), got {length}"),
                );
            }
            RateShape::Bursts {
                base: rate(ck, "base_rate_per_s", *base_rate_per_s),
                burst: rate(ck, "burst_rate_per_s", *burst_rate_per_s),
                every,
                length,
                first_at: ck.non_negative(&format!("{at}.first_at_s"), *first_at_s),
            }
        }
        ArrivalSpec::Trace {
            rates_per_s,
            bucket_s,
            file,
            column: _,
        } => {
            // Loading reads the file into `rates_per_s`: one left means the
            // file's name was set alone (a `--set` of `….file`).
            if file.is_some() {
                ck.fail(
                    format!("{at}.file"),
                    "a trace file is read when the model is loaded, from a trace written whole: set the whole arrival (`workloads[NAME].arrival={\"kind\": \"trace\", \"file\": …}`)",
                );
            }
            if rates_per_s.is_empty() || rates_per_s.len() > MAX_TRACE_BUCKETS {
                ck.fail(
                    format!("{at}.rates_per_s"),
                    format!(
                        "expected 1 to {MAX_TRACE_BUCKETS} rates, got {}",
                        rates_per_s.len()
                    ),
                );
            }
            let rates = (rates_per_s.iter().enumerate())
                .map(|(k, &r)| rate(ck, &format!("rates_per_s[{k}]"), r))
                .collect();
            RateShape::trace(ck.positive(&format!("{at}.bucket_s"), *bucket_s), rates)
        }
        _ => unreachable!("a shaped arrival"),
    };
    if shape.max_rate().is_nan() || shape.max_rate() <= 0.0 {
        ck.fail(at, "expected a rate above zero somewhere");
    }
    shape
}

/// Most copies of one workload (`count`).
pub const MAX_COPIES: u32 = 1000;

/// The names of a workload named `name` and its copies: its own, or
/// `count` copies named `name-01`… (as many digits as `count` has, two at
/// least). None for a count out of range (a problem at `at.count`).
fn copy_names(ck: &mut Checker, at: &str, name: &str, count: Option<u32>) -> Vec<String> {
    let Some(count) = count else {
        return vec![name.to_string()];
    };
    if count == 0 || count > MAX_COPIES {
        ck.fail(
            format!("{at}.count"),
            format!("expected 1 to {MAX_COPIES} copies, got {count}"),
        );
        return Vec::new();
    }
    let width = count.to_string().len().max(2);
    (1..=count).map(|k| format!("{name}-{k:0width$}")).collect()
}

fn cache_policy(ck: &mut Checker, at: &str, c: &CacheSpec) -> CachePolicy {
    if c.keys == 0 {
        ck.fail(format!("{at}.keys"), "expected at least 1 key, got 0");
    }
    CachePolicy {
        keys: c.keys.max(1),
        zipf_s: ck.non_negative(&format!("{at}.zipf_s"), c.zipf_s),
        ttl: ck.positive_ms(&format!("{at}.ttl_ms"), c.ttl_ms),
        coalesce: c.coalesce,
        stale_while_revalidate: ck.optional_positive_ms(
            &format!("{at}.stale_while_revalidate_ms"),
            c.stale_while_revalidate_ms,
        ),
        warm_until: c.warm_until_ms.map(|ms| {
            SimTime::ZERO
                + SimDuration::from_ms(ck.non_negative(&format!("{at}.warm_until_ms"), ms))
        }),
    }
}

fn hedge_policy(ck: &mut Checker, at: &str, h: &HedgeSpec) -> HedgePolicy {
    if h.delay_ms.is_none() && h.percentile.is_none() {
        ck.fail(
            at,
            "expected `delay_ms` (a fixed hedge delay) or `percentile` (adaptive), or both",
        );
    }
    if let Some(p) = h.percentile {
        if !(p > 0.0 && p < 1.0) {
            ck.fail(
                format!("{at}.percentile"),
                format!("expected a quantile strictly between 0 and 1, got {p}"),
            );
        }
    }
    if h.window < 10 {
        ck.fail(
            format!("{at}.window"),
            format!("expected at least 10 latencies, got {}", h.window),
        );
    }
    if h.max_hedges == 0 || h.max_hedges > 255 {
        ck.fail(
            format!("{at}.max_hedges"),
            format!("expected 1 to 255 hedges per try, got {}", h.max_hedges),
        );
    }
    HedgePolicy {
        delay: ck.optional_positive_ms(&format!("{at}.delay_ms"), h.delay_ms),
        percentile: h.percentile,
        window: h.window.max(10),
        max_hedges: h.max_hedges.clamp(1, 255),
        max_ratio: h
            .max_ratio
            .map(|r| ck.non_negative(&format!("{at}.max_ratio"), r)),
        tied: h.tied,
        cancel_delay: SimDuration::from_ms(
            ck.non_negative(&format!("{at}.cancel_delay_ms"), h.cancel_delay_ms),
        ),
        target: h.target,
        non_fatal: OutcomeSet::of(&h.non_fatal),
    }
}

/// The edge-policy fields a call step and a workload share: serde cannot
/// flatten them into one struct while rejecting unknown fields, so the two spec
/// types list them each, and this view lets one function check both.
struct EdgeFields<'a> {
    timeout_ms: Option<f64>,
    connect_timeout_ms: Option<f64>,
    retry: Option<&'a RetrySpec>,
    breaker: Option<&'a BreakerSpec>,
    bulkhead: Option<&'a BulkheadSpec>,
    rate_limit: Option<&'a RateLimitSpec>,
    throttle: Option<&'a ThrottleSpec>,
    balancer: Option<BalancerKind>,
    outlier_detection: Option<&'a OutlierDetectionSpec>,
    deadline: Option<&'a DeadlineSpec>,
    context: Option<CallContext>,
}

/// Checks and resolves the policy stack of one call edge (at `at`).
fn call_policy(ck: &mut Checker, at: &str, to: ServiceId, f: EdgeFields<'_>) -> CallPolicy {
    CallPolicy {
        to,
        attempt_timeout: ck
            .optional_positive_ms(&format!("{at}.timeout_ms"), f.timeout_ms)
            .unwrap_or(SimDuration::INFINITE),
        retry: retry_policy(ck, &format!("{at}.retry"), f.retry),
        deadline: deadline_policy(ck, &format!("{at}.deadline"), f.deadline),
        context: f.context.unwrap_or(CallContext::Request),
        breaker: f
            .breaker
            .map(|b| breaker_policy(ck, &format!("{at}.breaker"), b)),
        bulkhead: f
            .bulkhead
            .map(|b| check_bulkhead(ck, &format!("{at}.bulkhead"), b)),
        rate_limit: f.rate_limit.map(|r| {
            check_rate_limit(ck, &format!("{at}.rate_limit"), r);
            r.clone()
        }),
        throttle: f
            .throttle
            .map(|t| check_throttle(ck, &format!("{at}.throttle"), t)),
        balancer: f.balancer.unwrap_or_default(),
        outlier_detection: f
            .outlier_detection
            .map(|o| check_outlier(ck, &format!("{at}.outlier_detection"), o)),
        connect_timeout: ck
            .optional_positive_ms(&format!("{at}.connect_timeout_ms"), f.connect_timeout_ms)
            .unwrap_or(SimDuration::INFINITE),
        fan_out: None,
        hedge: None,
        cache: None,
        hold_worker: true,
        fallback: None,
    }
}

fn retry_policy(ck: &mut Checker, at: &str, retry: Option<&RetrySpec>) -> RetryPolicy {
    let Some(r) = retry else {
        return RetryPolicy::none();
    };
    if r.max_attempts == 0 {
        ck.fail(
            format!("{at}.max_attempts"),
            "expected at least 1 attempt (the first one counts), got 0",
        );
    }
    let backoff = match &r.backoff {
        BackoffSpec::Fixed { ms } => Backoff::Fixed(SimDuration::from_ms(
            ck.non_negative(&format!("{at}.backoff.ms"), *ms),
        )),
        BackoffSpec::Exponential {
            base_ms,
            multiplier,
            cap_ms,
        } => {
            let base = ck.non_negative(&format!("{at}.backoff.base_ms"), *base_ms);
            if !(multiplier.is_finite() && *multiplier >= 1.0) {
                ck.fail(
                    format!("{at}.backoff.multiplier"),
                    format!("expected a number ≥ 1, got {multiplier}"),
                );
            }
            Backoff::Exponential {
                base: SimDuration::from_ms(base),
                multiplier: *multiplier,
                cap: ck
                    .optional_positive_ms(&format!("{at}.backoff.cap_ms"), *cap_ms)
                    .unwrap_or(SimDuration::INFINITE),
            }
        }
    };
    ck.probability(&format!("{at}.jitter_factor"), r.jitter_factor);
    if let Some(budget) = &r.budget {
        check_budget(ck, &format!("{at}.budget"), budget);
    }
    RetryPolicy {
        max_attempts: r.max_attempts.max(1),
        backoff,
        jitter: r.jitter,
        jitter_factor: r.jitter_factor,
        retry_on: r.retry_on.clone(),
        budget: r.budget.clone(),
    }
}

fn check_budget(ck: &mut Checker, at: &str, budget: &BudgetSpec) {
    match budget {
        BudgetSpec::TokenBucket { ratio, max_tokens } => {
            ck.non_negative(&format!("{at}.ratio"), *ratio);
            ck.positive(&format!("{at}.max_tokens"), *max_tokens);
        }
        BudgetSpec::GrpcThrottling {
            max_tokens,
            token_ratio,
        } => {
            if !(max_tokens.is_finite() && *max_tokens > 0.0 && *max_tokens <= 1000.0) {
                ck.fail(
                    format!("{at}.max_tokens"),
                    format!("expected a number in (0, 1000] (gRPC's range), got {max_tokens}"),
                );
            }
            ck.positive(&format!("{at}.token_ratio"), *token_ratio);
        }
        BudgetSpec::Finagle {
            ttl_s,
            percent_can_retry,
            ..
        } => {
            if !(ttl_s.is_finite() && (1.0..=60.0).contains(ttl_s)) {
                ck.fail(
                    format!("{at}.ttl_s"),
                    format!("expected 1 to 60 seconds (Finagle's range), got {ttl_s}"),
                );
            }
            ck.probability(&format!("{at}.percent_can_retry"), *percent_can_retry);
        }
        BudgetSpec::Envoy { budget_percent, .. } => {
            if !(budget_percent.is_finite() && (0.0..=100.0).contains(budget_percent)) {
                ck.fail(
                    format!("{at}.budget_percent"),
                    format!("expected a percentage in [0, 100], got {budget_percent}"),
                );
            }
        }
        BudgetSpec::RetryCircuitBreaker {
            max_failure_rate,
            window,
        } => {
            ck.probability(&format!("{at}.max_failure_rate"), *max_failure_rate);
            if *window == 0 {
                ck.fail(format!("{at}.window"), "expected at least 1 attempt, got 0");
            }
        }
    }
}

fn breaker_policy(ck: &mut Checker, at: &str, breaker: &BreakerSpec) -> BreakerSpec {
    match breaker {
        BreakerSpec::Resilience4j {
            failure_rate_threshold,
            slow_call_rate_threshold,
            slow_call_duration_threshold_ms,
            sliding_window_size,
            minimum_number_of_calls,
            wait_duration_in_open_state_ms,
            permitted_number_of_calls_in_half_open_state,
            max_wait_duration_in_half_open_state_ms,
            ..
        } => {
            for (field, pct) in [
                ("failure_rate_threshold", failure_rate_threshold),
                ("slow_call_rate_threshold", slow_call_rate_threshold),
            ] {
                if !(pct.is_finite() && *pct > 0.0 && *pct <= 100.0) {
                    ck.fail(
                        format!("{at}.{field}"),
                        format!("expected a percentage in (0, 100], got {pct}"),
                    );
                }
            }
            ck.positive(
                &format!("{at}.slow_call_duration_threshold_ms"),
                *slow_call_duration_threshold_ms,
            );
            for (field, n) in [
                ("sliding_window_size", sliding_window_size),
                ("minimum_number_of_calls", minimum_number_of_calls),
                (
                    "permitted_number_of_calls_in_half_open_state",
                    permitted_number_of_calls_in_half_open_state,
                ),
            ] {
                if *n == 0 {
                    ck.fail(format!("{at}.{field}"), "expected at least 1, got 0");
                }
            }
            ck.positive(
                &format!("{at}.wait_duration_in_open_state_ms"),
                *wait_duration_in_open_state_ms,
            );
            ck.non_negative(
                &format!("{at}.max_wait_duration_in_half_open_state_ms"),
                *max_wait_duration_in_half_open_state_ms,
            );
        }
        BreakerSpec::Consecutive {
            failure_threshold,
            cooldown_ms,
            max_concurrent_probes,
            successes_to_close,
        } => {
            for (field, n) in [
                ("failure_threshold", failure_threshold),
                ("max_concurrent_probes", max_concurrent_probes),
                ("successes_to_close", successes_to_close),
            ] {
                if *n == 0 {
                    ck.fail(format!("{at}.{field}"), "expected at least 1, got 0");
                }
            }
            ck.positive(&format!("{at}.cooldown_ms"), *cooldown_ms);
        }
    }
    breaker.clone()
}

fn check_outlier(ck: &mut Checker, at: &str, o: &OutlierDetectionSpec) -> OutlierDetectionSpec {
    if o.consecutive_5xx == 0 {
        ck.fail(
            format!("{at}.consecutive_5xx"),
            "expected at least 1, got 0",
        );
    }
    ck.positive(&format!("{at}.interval_ms"), o.interval_ms);
    ck.positive(
        &format!("{at}.base_ejection_time_ms"),
        o.base_ejection_time_ms,
    );
    ck.positive(
        &format!("{at}.max_ejection_time_ms"),
        o.max_ejection_time_ms,
    );
    if o.max_ejection_percent > 100 {
        ck.fail(
            format!("{at}.max_ejection_percent"),
            format!(
                "expected a percentage in [0, 100], got {}",
                o.max_ejection_percent
            ),
        );
    }
    o.clone()
}

fn check_bulkhead(ck: &mut Checker, at: &str, b: &BulkheadSpec) -> BulkheadSpec {
    if b.max_concurrent_calls == 0 {
        ck.fail(
            format!("{at}.max_concurrent_calls"),
            "expected at least 1, got 0",
        );
    }
    ck.non_negative(&format!("{at}.max_wait_ms"), b.max_wait_ms);
    b.clone()
}

fn check_rate_limit(ck: &mut Checker, at: &str, r: &RateLimitSpec) {
    match r {
        RateLimitSpec::TokenBucket { rate_per_s, burst } => {
            ck.positive(&format!("{at}.rate_per_s"), *rate_per_s);
            if *burst == 0 {
                ck.fail(format!("{at}.burst"), "expected at least 1, got 0");
            }
        }
        RateLimitSpec::FixedWindow { limit, window_ms }
        | RateLimitSpec::SlidingWindow { limit, window_ms } => {
            if *limit == 0 {
                ck.fail(format!("{at}.limit"), "expected at least 1, got 0");
            }
            ck.positive(&format!("{at}.window_ms"), *window_ms);
        }
        RateLimitSpec::Resilience4j {
            limit_for_period,
            limit_refresh_period_ms,
            timeout_ms,
        } => {
            if *limit_for_period == 0 {
                ck.fail(
                    format!("{at}.limit_for_period"),
                    "expected at least 1, got 0",
                );
            }
            ck.positive(
                &format!("{at}.limit_refresh_period_ms"),
                *limit_refresh_period_ms,
            );
            ck.non_negative(&format!("{at}.timeout_ms"), *timeout_ms);
        }
    }
}

fn check_throttle(ck: &mut Checker, at: &str, t: &ThrottleSpec) -> ThrottleSpec {
    match t {
        ThrottleSpec::Sre { k, window_s } => {
            ck.positive(&format!("{at}.k"), *k);
            ck.positive(&format!("{at}.window_s"), *window_s);
        }
        ThrottleSpec::EnvoyAdmissionControl {
            sampling_window_s,
            sr_threshold,
            aggression,
            max_rejection_probability,
        } => {
            ck.positive(&format!("{at}.sampling_window_s"), *sampling_window_s);
            ck.probability(&format!("{at}.sr_threshold"), *sr_threshold);
            if !(aggression.is_finite() && *aggression >= 1.0) {
                ck.fail(
                    format!("{at}.aggression"),
                    format!("expected a number ≥ 1, got {aggression}"),
                );
            }
            ck.probability(
                &format!("{at}.max_rejection_probability"),
                *max_rejection_probability,
            );
        }
    }
    t.clone()
}

fn deadline_policy(ck: &mut Checker, at: &str, deadline: Option<&DeadlineSpec>) -> DeadlinePolicy {
    match deadline {
        None => DeadlinePolicy::NONE,
        Some(d) => DeadlinePolicy {
            propagate: d.propagate,
            margin: SimDuration::from_ms(ck.non_negative(&format!("{at}.margin_ms"), d.margin_ms)),
            first_attempt_cap: ck
                .optional_positive_ms(
                    &format!("{at}.first_attempt_cap_ms"),
                    d.first_attempt_cap_ms,
                )
                .unwrap_or(SimDuration::INFINITE),
            min_budget: SimDuration::from_ms(
                ck.non_negative(&format!("{at}.min_budget_ms"), d.min_budget_ms),
            ),
            absolute: {
                if d.encoding == DeadlineEncoding::Absolute && !d.propagate {
                    ck.fail(
                        format!("{at}.encoding"),
                        "an absolute deadline is one sent down: `encoding: absolute` needs `propagate: true`",
                    );
                }
                d.encoding == DeadlineEncoding::Absolute
            },
            subtract_elapsed: {
                if !d.subtract_elapsed && d.encoding == DeadlineEncoding::Absolute {
                    ck.fail(
                        format!("{at}.subtract_elapsed"),
                        "an absolute deadline does not go stale: `subtract_elapsed: false` applies to `encoding: relative`",
                    );
                }
                d.subtract_elapsed
            },
        },
    }
}

/// A call cycle would recurse forever: report each one once, at the call that
/// closes it, with the cycle spelled out.
fn find_call_cycles(ck: &mut Checker, services: &[Service]) {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnStack,
        Done,
    }
    // A depth-first search with its own stack of (service, next step to look
    // at), not recursion: a chain of thousands of services must not overflow
    // the thread's stack.
    let mut marks = vec![Mark::New; services.len()];
    for root in 0..services.len() {
        if marks[root] != Mark::New {
            continue;
        }
        let mut stack: Vec<(ServiceId, usize)> = vec![(root, 0)];
        marks[root] = Mark::OnStack;
        while let Some(&mut (s, ref mut next)) = stack.last_mut() {
            // The service's calls in order, a parallel step's branches each.
            let calls = services[s].steps.iter().enumerate().flat_map(|(j, step)| {
                let parallel = matches!(step, Step::Parallel(_));
                (step.calls().iter().enumerate()).flat_map(move |(b, call)| {
                    let branch = parallel.then_some(b);
                    std::iter::once((j, branch, None, call)).chain(
                        (call
                            .fallback
                            .iter()
                            .flat_map(|f| f.chain.iter().enumerate()))
                        .filter_map(move |(i, use_)| match use_ {
                            FallbackUse::Call(policy) => Some((j, branch, Some(i), &**policy)),
                            _ => None,
                        }),
                    )
                })
            });
            let Some((j, branch, fallback, call)) = calls.into_iter().nth(*next) else {
                stack.pop();
                marks[s] = Mark::Done;
                continue;
            };
            *next += 1;
            match marks[call.to] {
                Mark::New => {
                    marks[call.to] = Mark::OnStack;
                    stack.push((call.to, 0));
                }
                Mark::OnStack => {
                    let start = stack.iter().position(|&(x, _)| x == call.to).unwrap_or(0);
                    let cycle: Vec<&str> = stack[start..]
                        .iter()
                        .map(|&(x, _)| x)
                        .chain(std::iter::once(call.to))
                        .map(|x| services[x].name.as_str())
                        .collect();
                    let step = match branch {
                        Some(b) => format!("services[{s}].steps[{j}].parallel.branches[{b}]"),
                        None => format!("services[{s}].steps[{j}]"),
                    };
                    let at = match fallback {
                        Some(i) => format!("{step}.fallback.chain[{i}].call"),
                        None => format!("{step}.call"),
                    };
                    ck.fail(at, format!("call cycle {}", cycle.join(" -> ")));
                }
                Mark::Done => {}
            }
        }
    }
}

/// The name a role has in model files.
pub fn role_name(role: TimelineRole) -> &'static str {
    match role {
        TimelineRole::TriggerStart => "trigger_start",
        TimelineRole::TriggerEnd => "trigger_end",
        TimelineRole::Intervention => "intervention",
    }
}

/// A timeline may change parameters, not the shape of the system: in-flight
/// requests hold indices of services and steps.
pub fn same_shape(a: &Model, b: &Model) -> Result<(), String> {
    // What a run reads once, for the whole run (as it starts, in its loop,
    // or as it reports): a change halfway would be ignored by one reader
    // and followed by another (a forked run's loop reads its limits and
    // horizon again where a run of its own does not).
    let run_wide = [
        ("seed", a.seed != b.seed),
        (
            "limits",
            format!("{:?}", a.limits) != format!("{:?}", b.limits),
        ),
        ("horizon_s", a.horizon != b.horizon),
        ("timeseries", a.bucket != b.bucket),
        (
            "metastability",
            format!("{:?}", a.metastability) != format!("{:?}", b.metastability),
        ),
        ("focus", a.focus != b.focus),
    ];
    if let Some((setting, _)) = run_wide.iter().find(|(_, changed)| *changed) {
        return Err(format!(
            "a timeline change cannot set `{setting}`: it holds for the whole run (set it in the model, a variant or with --set)"
        ));
    }
    let names = |m: &Model| {
        m.services
            .iter()
            .map(|s| s.name.clone())
            .collect::<Vec<_>>()
    };
    if names(a) != names(b) {
        return Err("a timeline change cannot add, remove or rename services".into());
    }
    let renamed =
        (a.workload_ids.iter().map(|w| &w.name)).ne(b.workload_ids.iter().map(|w| &w.name));
    if renamed {
        return Err("a timeline change cannot add, remove or rename workloads".into());
    }
    for ((wa, wb), id) in a
        .workloads
        .iter()
        .zip(&b.workloads)
        .zip(a.workload_ids.iter())
    {
        let closed = |w: &Workload| match w.arrival {
            Arrival::ClosedLoop { users } => Some(users),
            _ => None,
        };
        // A closed loop's users are its own events: they can neither become
        // an arrival process nor grow in number halfway (their think time
        // may change).
        if closed(wa).is_some() != closed(wb).is_some() {
            return Err(format!(
                "a timeline change cannot turn workload {:?} from an open loop into a closed one or back (use a variant)",
                id.name
            ));
        }
        if closed(wa) != closed(wb) {
            return Err(format!(
                "a timeline change cannot change the users of closed-loop workload {:?} (use a variant)",
                id.name
            ));
        }
    }
    for (sa, sb) in a.services.iter().zip(&b.services) {
        // Each step's callees: none for work, one for a call, a parallel
        // step's branches in order.
        let shape = |s: &Service| {
            s.steps
                .iter()
                .map(|st| st.edges().map(|c| c.to).collect::<Vec<_>>())
                .collect::<Vec<_>>()
        };
        if sa.cpu.is_some() != sb.cpu.is_some() {
            return Err(format!(
                "a timeline change cannot add or remove the cpu of service {:?}, only change its cores (use a variant)",
                sa.name
            ));
        }
        if shape(sa) != shape(sb) {
            return Err(format!(
                "a timeline change cannot change the steps of service {:?} (only their parameters)",
                sa.name
            ));
        }
    }
    Ok(())
}

/// A service's queue discipline, its classes resolved to indices.
fn queue_discipline(
    ck: &mut Checker,
    at: &str,
    spec: Option<&QueueDisciplineSpec>,
    classes: &[String],
) -> QueueDiscipline {
    match spec {
        None | Some(QueueDisciplineSpec::Fifo) => QueueDiscipline::Fifo,
        Some(QueueDisciplineSpec::Lifo) => QueueDiscipline::Lifo,
        Some(QueueDisciplineSpec::AdaptiveLifo { above }) => {
            QueueDiscipline::AdaptiveLifo { above: *above }
        }
        Some(QueueDisciplineSpec::Priority { order }) => {
            if order.is_empty() {
                ck.fail(
                    format!("{at}.order"),
                    "expected at least one class, highest priority first",
                );
            }
            let mut rank = vec![u8::MAX; classes.len()];
            for (k, name) in order.iter().enumerate() {
                match classes.iter().position(|c| c == name) {
                    None => ck.fail(
                        format!("{at}.order[{k}]"),
                        format!("unknown class {name:?}: no workload has it"),
                    ),
                    Some(i) if rank[i] != u8::MAX => ck.fail(
                        format!("{at}.order[{k}]"),
                        format!("class {name:?} is listed twice"),
                    ),
                    // At most 255 classes: each a distinct one that a workload has.
                    Some(i) => rank[i] = k as u8,
                }
            }
            let ranks = (order.len().min(254) + 1) as u8;
            for r in &mut rank {
                *r = (*r).min(ranks - 1);
            }
            QueueDiscipline::Priority { rank, ranks }
        }
    }
}

/// The problem with a duration under the clock's step (`expected`: what it
/// must be; `got`: what was written).
fn below_a_tick(expected: &str, got: &str) -> String {
    format!("expected {expected} (1 ns, the clock's step: less is 0 on the clock), got {got}")
}

/// A number as a message shows it: a tiny one in scientific notation (1e-300,
/// not three hundred zeros).
fn small(x: f64) -> String {
    if x != 0.0 && x.abs() < 1e-4 {
        format!("{x:e}")
    } else {
        x.to_string()
    }
}
