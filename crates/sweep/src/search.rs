//! Tipping points: bisect one parameter for where a metric's replication mean
//! crosses a threshold, with every probe replicated and its 95% interval
//! reported, so the boundary comes with its uncertainty: Wilson's score
//! interval for `metastable` (a share of replications), Student's t for any
//! other metric.

use crate::spec::SearchSpec;
use crate::stopping::{quantity, wilson, Rule, StopSpec, Stopped};
use crate::{summary_of, Override, Sweep, VariantChoice};
use rayon::prelude::*;
use stormsim_model::Problem;
use stormsim_sim::analysis::Outcome;
use stormsim_sim::{run_variant, VariantReport};

/// One probe of the search.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    /// The parameter's value.
    pub value: f64,
    /// The metric's mean over replications.
    pub mean: f64,
    /// Its 95% interval. For `metastable`, a share of replications, Wilson's
    /// score interval ([`wilson_interval`]: within [0, 1], and not a point at
    /// 0 or n of n); for any other metric Student's t (`None` with one
    /// replication). With a stopping rule, each look's interval at the level
    /// that keeps the looks' joint error at 5% ([`crate::stopping`]).
    pub ci: Option<(f64, f64)>,
    /// Replications the mean is over.
    pub used: usize,
    /// Why the probe ran no more replications.
    pub stopped: Stopped,
    /// Replications left out, and why: a run stopped by a limit (partial), a
    /// baseline already unhealthy, no verdict, no value (a latency of
    /// successes with none). Counted by reason, in the order first met.
    pub left_out: Vec<(String, usize)>,
}

impl Probe {
    /// Which side of the threshold the mean is on.
    pub fn above(&self, threshold: f64) -> bool {
        self.mean >= threshold
    }

    /// Whether the interval leaves no doubt about the side.
    pub fn certain(&self, threshold: f64) -> bool {
        self.ci
            .is_some_and(|(lo, hi)| lo >= threshold || hi < threshold)
    }
}

/// The result: every probe in order, and the final bracket.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchResult {
    /// Probes in the order run.
    pub probes: Vec<Probe>,
    /// The bracket `(low, high)` holding the crossing.
    pub bracket: (f64, f64),
    /// Whether both ends of the bracket are on their side beyond their 95%
    /// intervals; if not, the boundary is as uncertain as the noise.
    pub certain: bool,
}

impl Sweep {
    /// Runs the metric at one value: its replications in parallel, by
    /// batches while the stopping rule ([`crate::stopping`]) asks for more.
    /// Replication `r` has the same seed at every value (common random
    /// numbers), however many a probe ends up running.
    pub(crate) fn probe_at(
        &self,
        variant: Option<&VariantChoice>,
        extra: &[Override],
        metric: &str,
        threshold: f64,
        stop: Option<&StopSpec>,
        label: &str,
    ) -> Result<Probe, Problem> {
        let mut overrides = self.set_overrides();
        overrides.extend_from_slice(extra);
        let rule = Rule::new(self.spec.replications, stop);
        let mut xs = Vec::new();
        let mut left_out: Vec<(String, usize)> = Vec::new();
        let (mut ran, mut batch) = (0u32, rule.first);
        loop {
            let observations: Result<Vec<Observation>, Problem> = (ran..ran + batch)
                .into_par_iter()
                .map(|r| {
                    let seed = self.seed_of(0, r);
                    let built = self.build(variant, &overrides, seed).map_err(|ps| {
                        let problems: Vec<String> = ps.iter().map(|p| p.to_string()).collect();
                        Problem::new(label.to_string(), problems.join("; "))
                    })?;
                    observe(metric, run_variant(&built), seed)
                })
                .collect();
            ran += batch;
            for o in observations? {
                match o {
                    Observation::Value(x) => xs.push(x),
                    Observation::LeftOut(why) => {
                        match left_out.iter_mut().find(|(w, _)| *w == why) {
                            Some((_, n)) => *n += 1,
                            None => left_out.push((why, 1)),
                        }
                    }
                }
            }
            let (mean, ci) = quantity(metric, &xs, rule.alpha_per_look);
            let stopped = if xs.is_empty() {
                // Nothing to judge yet: more replications may give values,
                // up to the cap.
                (ran >= rule.max).then_some(Stopped::Cap)
            } else {
                rule.look(ran, ci, threshold)
            };
            if let Some(stopped) = stopped {
                if xs.is_empty() {
                    return Err(Problem::new(
                        "search.metric",
                        format!(
                            "{metric:?} has no value in any replication at {label}: {}",
                            describe_left_out(&left_out)
                        ),
                    ));
                }
                return Ok(Probe {
                    value: f64::NAN,
                    mean,
                    ci,
                    used: xs.len(),
                    left_out,
                    stopped,
                });
            }
            batch = rule.next_batch(ran);
        }
    }

    /// A probe of the sweep file's `search` at `value`.
    fn probe(&self, search: &SearchSpec, value: f64) -> Result<Probe, Problem> {
        let (_, over) = self.search_override(search, value);
        let variant = self.default_variant();
        let mut probe = self
            .probe_at(
                variant.as_ref(),
                &[over],
                &search.metric,
                search.threshold,
                search.stop.as_ref(),
                &format!("{} = {value}", search.path),
            )
            .map_err(|mut p| {
                if p.path != "search.metric" {
                    p.path = format!("search at {value}");
                }
                p
            })?;
        probe.value = if search.integer { value.round() } else { value };
        Ok(probe)
    }

    /// Bisects `search.path` between `from` and `to` until the bracket is at
    /// most `tolerance` wide. `on_probe` is told of each probe as it completes.
    pub fn search(&self, on_probe: &dyn Fn(&Probe)) -> Result<SearchResult, Problem> {
        let search = self
            .spec
            .search
            .as_ref()
            .ok_or_else(|| Problem::new("search", "this sweep file has no `search` block"))?;
        if !(search.tolerance > 0.0 && search.from.is_finite() && search.to.is_finite()) {
            return Err(Problem::new(
                "search",
                "expected finite `from` and `to` and a positive `tolerance`",
            ));
        }
        let mut probes = Vec::new();
        let mut run = |value: f64| -> Result<Probe, Problem> {
            let p = self.probe(search, value)?;
            on_probe(&p);
            probes.push(p.clone());
            Ok(p)
        };
        let (lo, hi) = (run(search.from)?, run(search.to)?);
        if lo.above(search.threshold) == hi.above(search.threshold) {
            return Err(Problem::new(
                "search",
                format!(
                    "the metric is on the same side of {} at both ends ({} at {}, {} at {}): widen the interval",
                    search.threshold, lo.mean, lo.value, hi.mean, hi.value
                ),
            ));
        }
        let mut bracket = Bracket { lo, hi };
        while bracket.width() > search.tolerance {
            let m = run(bracket.middle())?;
            if !bracket.narrow(m, search.threshold) {
                break;
            }
        }
        let certain = bracket.certain(search.threshold);
        Ok(SearchResult {
            probes,
            bracket: bracket.ends(),
            certain,
        })
    }
}

/// The two probes that hold the crossing between them, on opposite sides of
/// the threshold.
pub(crate) struct Bracket {
    pub lo: Probe,
    pub hi: Probe,
}

impl Bracket {
    /// The bracket of `lo` and `hi` if they are on opposite sides of
    /// `threshold` (`None`: no crossing between them).
    pub fn around(lo: Probe, hi: Probe, threshold: f64) -> Option<Bracket> {
        (lo.above(threshold) != hi.above(threshold)).then_some(Bracket { lo, hi })
    }

    pub fn width(&self) -> f64 {
        (self.hi.value - self.lo.value).abs()
    }

    pub fn middle(&self) -> f64 {
        (self.lo.value + self.hi.value) / 2.0
    }

    /// The bracket's ends, lower first.
    fn ends(&self) -> (f64, f64) {
        (
            self.lo.value.min(self.hi.value),
            self.lo.value.max(self.hi.value),
        )
    }

    /// Whether both ends are on their side beyond their 95% intervals.
    fn certain(&self, threshold: f64) -> bool {
        self.lo.certain(threshold) && self.hi.certain(threshold)
    }

    /// Puts the probe `m` at the end on its side of the threshold; `false`
    /// (the bracket unchanged) when it probed an end again, as integer
    /// probes do once nothing is left between the ends.
    pub fn narrow(&mut self, m: Probe, threshold: f64) -> bool {
        if m.value == self.lo.value || m.value == self.hi.value {
            return false;
        }
        if m.above(threshold) == self.lo.above(threshold) {
            self.lo = m;
        } else {
            self.hi = m;
        }
        true
    }
}

/// A search's bracket after each of its probes from the second (before it,
/// there is none), and whether the last is certain (see
/// [`SearchResult::certain`]): the bisection replayed from its probes in the
/// order run, as `search.csv` lists them, so that a chart of a search's file
/// shows the brackets the search held. `None` with fewer than two probes or
/// ends on one side.
pub fn replay_brackets(probes: &[Probe], threshold: f64) -> Option<(Vec<(f64, f64)>, bool)> {
    let [lo, hi, rest @ ..] = probes else {
        return None;
    };
    if lo.above(threshold) == hi.above(threshold) {
        return None;
    }
    let mut bracket = Bracket {
        lo: lo.clone(),
        hi: hi.clone(),
    };
    let mut brackets = vec![bracket.ends()];
    for m in rest {
        bracket.narrow(m.clone(), threshold);
        brackets.push(bracket.ends());
    }
    Some((brackets, bracket.certain(threshold)))
}

/// What one replication of a probe gave.
enum Observation {
    /// The metric's value.
    Value(f64),
    /// No value the mean may use, and why.
    LeftOut(String),
}

/// The metric's value in one replication's report. A run stopped by a
/// limit is left out whatever its cells say (its counts are of part of a
/// run); so is a cell that is empty (the quantity does not exist there), and
/// for `metastable` every outcome that is not a judgement of the trigger.
fn observe(metric: &str, report: VariantReport, seed: u64) -> Result<Observation, Problem> {
    if let Some(limit) = report.stopped_by {
        return Ok(Observation::LeftOut(format!(
            "partial (stopped by limits.{limit})"
        )));
    }
    let verdict = report.verdict.clone();
    let (header, row) = summary_of(seed, report);
    let column = header.iter().position(|h| *h == metric).ok_or_else(|| {
        Problem::new(
            "search.metric",
            format!("no column {metric:?} in the summary"),
        )
    })?;
    let cell = row[column].as_str();
    if metric == "metastable" {
        return Ok(match (cell, verdict) {
            ("true", _) => Observation::Value(1.0),
            ("false", _) => Observation::Value(0.0),
            (_, Some(v)) if v.outcome == Outcome::UnhealthyBeforeTrigger => {
                Observation::LeftOut("unhealthy before the trigger".into())
            }
            (_, Some(v)) if v.outcome == Outcome::Overloaded => Observation::LeftOut(
                "overloaded (degraded without the trigger too)".into(),
            ),
            (_, Some(v)) => Observation::LeftOut(format!("no verdict: {}", v.reason)),
            (_, None) => Observation::LeftOut(
                "no verdict: the model asks for no recovery analysis (no `metastability`, or no trigger in its timeline)".into(),
            ),
        });
    }
    if cell.is_empty() {
        return Ok(Observation::LeftOut(format!("no value of {metric:?}")));
    }
    cell.parse::<f64>().map(Observation::Value).map_err(|_| {
        Problem::new(
            "search.metric",
            format!("{metric:?} is not a number here: {cell:?}"),
        )
    })
}

/// "2 partial (stopped by limits.max_in_flight), 1 unhealthy before the
/// trigger".
pub fn describe_left_out(left_out: &[(String, usize)]) -> String {
    left_out
        .iter()
        .map(|(why, n)| format!("{n} {why}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The 95% Wilson score interval of a proportion: `successes` of `n` trials
/// (here, replications that ended metastable). Unlike the normal (Wald) or
/// Student-t interval of the 0/1 values, it stays within [0, 1] and is not a
/// single point when every trial or none succeeded: 0 of 3 gives 0 to 0.56.
/// `(0, 1)` for no trials.
pub fn wilson_interval(successes: usize, n: usize) -> (f64, f64) {
    wilson(successes, n, stormsim_stats::normal_quantile(0.975))
}

/// The columns of `search.csv` after the first (the parameter's path).
pub const SEARCH_COLUMNS: [&str; 7] = [
    "mean",
    "ci95_low",
    "ci95_high",
    "replications_used",
    "replications_left_out",
    "left_out_why",
    "stopped",
];

/// `search.csv`: every probe (value, mean, 95% interval, replications used
/// and left out with why), in the order run.
pub fn search_csv(result: &SearchResult, path: &str) -> Result<String, csv::Error> {
    let mut out = csv::Writer::from_writer(Vec::new());
    out.write_record(std::iter::once(path).chain(SEARCH_COLUMNS))?;
    for p in &result.probes {
        let (lo, hi) = p.ci.map_or((String::new(), String::new()), |(l, h)| {
            (l.to_string(), h.to_string())
        });
        let left_out: usize = p.left_out.iter().map(|(_, n)| n).sum();
        out.write_record([
            p.value.to_string(),
            p.mean.to_string(),
            lo,
            hi,
            p.used.to_string(),
            left_out.to_string(),
            describe_left_out(&p.left_out),
            p.stopped.name().to_string(),
        ])?;
    }
    let bytes = out.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8(bytes).expect("CSV of UTF-8 strings is UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stopping::ALPHA;

    fn probe(value: f64, mean: f64, ci: (f64, f64)) -> Probe {
        Probe {
            value,
            mean,
            ci: Some(ci),
            used: 3,
            left_out: Vec::new(),
            stopped: Stopped::Fixed,
        }
    }

    /// The bisection replayed from outputs/catalog-queue-search's probes
    /// holds the brackets the search held, to its final 3,383 to 3,422; a
    /// probe at an end (integer probes with nothing between) leaves it be.
    #[test]
    fn the_brackets_replay_from_the_probes() {
        let below = (0.0, 0.56);
        let above = (0.44, 1.0);
        let probes = [
            probe(1000.0, 0.0, below),
            probe(6000.0, 1.0, above),
            probe(3500.0, 1.0, above),
            probe(2250.0, 0.0, below),
            probe(2875.0, 0.0, below),
            probe(3188.0, 0.0, below),
            probe(3344.0, 0.0, below),
            probe(3422.0, 0.67, (0.21, 0.94)),
            probe(3383.0, 0.0, below),
        ];
        let (brackets, certain) = replay_brackets(&probes, 0.5).unwrap();
        assert_eq!(
            brackets,
            [
                (1000.0, 6000.0),
                (1000.0, 3500.0),
                (2250.0, 3500.0),
                (2875.0, 3500.0),
                (3188.0, 3500.0),
                (3344.0, 3500.0),
                (3344.0, 3422.0),
                (3383.0, 3422.0),
            ]
        );
        assert!(!certain, "3 replications never settle a share of 0.5");
        let mut again = probes[..3].to_vec();
        again.push(probe(3500.0, 1.0, above));
        let (brackets, _) = replay_brackets(&again, 0.5).unwrap();
        assert_eq!(brackets.last(), Some(&(1000.0, 3500.0)));
        assert!(replay_brackets(&probes[..1], 0.5).is_none());
        assert!(replay_brackets(&[probes[0].clone(), probes[3].clone()], 0.5).is_none());
    }

    /// Wilson's interval for a share of replications: never outside [0, 1],
    /// and not a single point at 0 or n of n (the Student-t interval of 0/1
    /// values gave "0.667 (95% CI -0.768 to 2.101)" and "0 (CI 0 to 0)").
    #[test]
    fn a_share_has_wilsons_interval() {
        let (lo, hi) = wilson_interval(0, 3);
        assert_eq!(lo, 0.0);
        // (z²/2n)/(1 + z²/n) · 2 with z = 1.96, n = 3: 0.5615.
        assert!((hi - 0.5615).abs() < 1e-3, "{hi}");
        let (lo, hi) = wilson_interval(2, 3);
        assert!((0.0..=1.0).contains(&lo) && (0.0..=1.0).contains(&hi));
        assert!(lo < 2.0 / 3.0 && 2.0 / 3.0 < hi, "{lo} {hi}");
        assert!(
            (lo - 0.2077).abs() < 1e-3 && (hi - 0.9385).abs() < 1e-3,
            "{lo} {hi}"
        );
        let (lo, hi) = wilson_interval(3, 3);
        assert_eq!(hi, 1.0);
        assert!((lo - 0.4385).abs() < 1e-3, "{lo}");
        // Symmetric: k of n and n - k of n mirror each other.
        let (a, b) = wilson_interval(1, 7);
        let (c, d) = wilson_interval(6, 7);
        assert!((a - (1.0 - d)).abs() < 1e-12 && (b - (1.0 - c)).abs() < 1e-12);
    }

    /// A probe of `metastable` gets Wilson's interval; of another metric,
    /// Student's t, as before.
    #[test]
    fn a_probe_of_metastable_has_wilsons_interval_and_others_students() {
        let (mean, ci) = quantity("metastable", &[0.0, 0.0, 0.0], ALPHA);
        let (lo, hi) = ci.unwrap();
        assert_eq!((mean, lo), (0.0, 0.0));
        assert!(hi > 0.5 && hi < 0.6, "{hi}");
        let (mean, ci) = quantity("metastable", &[1.0, 0.0, 1.0], ALPHA);
        let (lo, hi) = ci.unwrap();
        assert!((mean - 2.0 / 3.0).abs() < 1e-12);
        assert!(
            0.0 <= lo && lo < mean && mean < hi && hi <= 1.0,
            "{lo} {hi}"
        );
        // One replication: an interval all the same (not yet certain of a side).
        assert!(quantity("metastable", &[1.0], ALPHA).1.is_some());
        let (mean, ci) = quantity("success_rate", &[1.0, 2.0, 3.0, 4.0], ALPHA);
        let (lo, hi) = ci.unwrap();
        assert_eq!(mean, 2.5);
        assert!((hi - mean - 2.0542).abs() < 1e-3 && (mean - lo - 2.0542).abs() < 1e-3);
        assert_eq!(quantity("success_rate", &[0.5], ALPHA), (0.5, None));
    }
}
