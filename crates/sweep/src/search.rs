//! Tipping points: bisect one parameter for where a metric's replication mean
//! crosses a threshold, with every probe replicated and its 95% interval
//! reported, so the boundary comes with its uncertainty.

use crate::design::Point;
use crate::spec::SearchSpec;
use crate::{summary_of, Sweep};
use rayon::prelude::*;
use serde_json::Value;
use stormsim_model::Problem;
use stormsim_sim::run_variant;

/// One probe of the search.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    /// The parameter's value.
    pub value: f64,
    /// The metric's mean over replications.
    pub mean: f64,
    /// Its 95% Student-t interval (`None` with one replication).
    pub ci: Option<(f64, f64)>,
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
    /// Runs the metric at one value, every replication (in parallel).
    fn probe(&self, search: &SearchSpec, value: f64) -> Result<Probe, Problem> {
        let v = if search.integer {
            Value::from(value.round() as i64)
        } else {
            Value::from(value)
        };
        let point = Point {
            index: 0,
            values: vec![(search.path.clone(), Some(search.path.clone()), v)],
        };
        let xs: Result<Vec<f64>, Problem> = (0..self.spec.replications)
            .into_par_iter()
            .map(|r| {
                let seed = self.seed_of(0, r);
                let variant = self
                    .variant_at(&point, seed)
                    .map_err(|e| Problem::new("search", e.to_string()))?;
                let (header, row) = summary_of(seed, run_variant(&variant));
                let column = header
                    .iter()
                    .position(|h| *h == search.metric)
                    .ok_or_else(|| {
                        Problem::new(
                            "search.metric",
                            format!("no column {:?} in the summary", search.metric),
                        )
                    })?;
                let cell = &row[column];
                match (search.metric.as_str(), cell.as_str()) {
                    ("metastable", "true") => Ok(1.0),
                    ("metastable", "false") => Ok(0.0),
                    (m, c) => c.parse::<f64>().map_err(|_| {
                        Problem::new(
                            "search.metric",
                            format!("{m:?} is not a number here: {c:?}"),
                        )
                    }),
                }
            })
            .collect();
        let xs = xs?;
        let (mean, spread) = crate::table::mean_ci(&xs);
        let ci = spread.map(|(_, half)| (mean - half, mean + half));
        Ok(Probe {
            value: if search.integer { value.round() } else { value },
            mean,
            ci,
        })
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
        let (mut lo, mut hi) = (run(search.from)?, run(search.to)?);
        if lo.above(search.threshold) == hi.above(search.threshold) {
            return Err(Problem::new(
                "search",
                format!(
                    "the metric is on the same side of {} at both ends ({} at {}, {} at {}): widen the interval",
                    search.threshold, lo.mean, lo.value, hi.mean, hi.value
                ),
            ));
        }
        while (hi.value - lo.value).abs() > search.tolerance {
            let mid = (lo.value + hi.value) / 2.0;
            let m = run(mid)?;
            if m.value == lo.value || m.value == hi.value {
                break; // integer probes: nothing left between the ends
            }
            if m.above(search.threshold) == lo.above(search.threshold) {
                lo = m;
            } else {
                hi = m;
            }
        }
        let certain = lo.certain(search.threshold) && hi.certain(search.threshold);
        Ok(SearchResult {
            probes,
            bracket: (lo.value.min(hi.value), lo.value.max(hi.value)),
            certain,
        })
    }
}

/// `search.csv`: every probe (value, mean, 95% interval), in the order run.
pub fn search_csv(result: &SearchResult, path: &str) -> Result<String, csv::Error> {
    let mut out = csv::Writer::from_writer(Vec::new());
    out.write_record([path, "mean", "ci95_low", "ci95_high"])?;
    for p in &result.probes {
        let (lo, hi) = p.ci.map_or((String::new(), String::new()), |(l, h)| {
            (l.to_string(), h.to_string())
        });
        out.write_record([p.value.to_string(), p.mean.to_string(), lo, hi])?;
    }
    let bytes = out.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8(bytes).expect("CSV of UTF-8 strings is UTF-8"))
}
