//! The storm margin: at each load level, the smallest trigger for which the
//! probability of a storm crosses a level (50% by default; 10% and 90% on
//! request), each with its interval.
//!
//! For each variant and load, the trigger size is bisected as a `search`
//! bisects ([`crate::search`]): the probes' share of metastable runs, each
//! probe's replications stopping when its interval is clear of the level
//! ([`crate::stopping`]). Every replication `r` runs with the same seed at
//! every probe, load and variant (common random numbers), so the curves are
//! smooth and two policies are compared on the same arrivals and draws.
//!
//! The critical size's interval comes from the probes themselves, assuming
//! only that a larger trigger storms at least as often: its low end is the
//! largest size probed whose share is surely below the level (the upper end
//! of its interval under it), its high end the smallest whose share is
//! surely at or above it; with no such probe on a side, the end of the
//! range searched stands in, and the interval is marked open there.

use crate::search::{Bracket, Probe};
use crate::spec::MarginSpec;
use crate::stopping::Stopped;
use crate::{Override, Sweep, VariantChoice};
use serde_json::Value;
use stormsim_model::Problem;

/// One probe of a margin: its variant, load, and trigger size.
#[derive(Clone, Debug, PartialEq)]
pub struct MarginProbe {
    /// The variant's name.
    pub variant: String,
    /// The load level, as the margin's load axis counts it.
    pub load: f64,
    /// The probe (its `value` is the trigger size).
    pub probe: Probe,
}

/// The critical trigger size at one variant, load and level.
#[derive(Clone, Debug, PartialEq)]
pub struct MarginRow {
    /// The variant's name.
    pub variant: String,
    /// The load level, as the margin's load axis counts it.
    pub load: f64,
    /// The level of P(storm) whose crossing this is (0.5: half the runs).
    pub level: f64,
    /// The trigger size where the share crosses the level, interpolated
    /// between the two probes around it (`None`: no crossing in the range).
    pub critical: Option<f64>,
    /// Its interval: the largest size surely below the level ...
    pub low: f64,
    /// ... and the smallest surely at or above it.
    pub high: f64,
    /// Whether the low end is a probe surely below the level (not the
    /// range's end standing in).
    pub low_sure: bool,
    /// Whether the high end is a probe surely above.
    pub high_sure: bool,
    /// Without a crossing: which side the whole range is on ("every size
    /// storms", "no size storms"), else empty.
    pub note: String,
}

/// A margin's result: every probe in the order run, and the rows.
#[derive(Clone, Debug, PartialEq)]
pub struct MarginResult {
    /// The trigger size's name (`trigger duration (s)`, or its path).
    pub trigger: String,
    /// The load axis's name (`load scale`, or its path).
    pub load: String,
    /// The total offered rate at load scale 1, req/s, when the load axis
    /// is a scale of every workload's rate (`None` otherwise).
    pub base_rate: Option<f64>,
    /// Every probe, in the order run.
    pub probes: Vec<MarginProbe>,
    /// One row per variant, load and level, in that order.
    pub rows: Vec<MarginRow>,
}

/// What the margin varies, worked out from the model: the overrides of a
/// load level and of a trigger size.
struct Axes {
    trigger_label: String,
    load_label: String,
    base_rate: Option<f64>,
    /// `(path, value at load 1)` per workload rate, for a load scale.
    rates: Vec<(String, f64)>,
    load_path: Option<String>,
    /// The trigger's path, and the instant its size counts from (a
    /// duration moves the trigger's end: `start + size`).
    trigger_path: String,
    trigger_offset: f64,
}

impl Axes {
    fn load_overrides(&self, load: f64) -> Vec<Override> {
        match &self.load_path {
            Some(path) => vec![Override {
                label: format!("margin.load ({path:?})"),
                path: path.clone(),
                value: Value::from(load),
            }],
            None => self
                .rates
                .iter()
                .map(|(path, rate)| Override {
                    label: "margin.load_scale".into(),
                    path: path.clone(),
                    value: Value::from(rate * load),
                })
                .collect(),
        }
    }

    fn trigger_override(&self, size: f64, integer: bool) -> Override {
        let x = self.trigger_offset + size;
        Override {
            label: format!("margin.trigger ({:?})", self.trigger_path),
            path: self.trigger_path.clone(),
            value: if integer {
                Value::from(x.round() as i64)
            } else {
                Value::from(x)
            },
        }
    }
}

impl Sweep {
    /// The margin's loads, in order: its `load_scale` factors or its load
    /// path's values.
    pub fn margin_loads(margin: &MarginSpec) -> Vec<f64> {
        match (&margin.load_scale, &margin.load) {
            (Some(scale), _) => scale.clone(),
            (None, Some(load)) => load.values.clone(),
            (None, None) => Vec::new(),
        }
    }

    /// The variants a margin compares: its own list, else the sweep's
    /// `variant`, else the model's first.
    fn margin_variants(&self, margin: &MarginSpec) -> Vec<Option<VariantChoice>> {
        if margin.variants.is_empty() {
            return vec![self.default_variant()];
        }
        margin
            .variants
            .iter()
            .enumerate()
            .map(|(i, name)| {
                Some(VariantChoice {
                    label: format!("margin.variants[{i}]"),
                    name: name.clone(),
                })
            })
            .collect()
    }

    /// Works out what the margin varies from the model as the first
    /// variant sees it: every problem at once.
    fn margin_axes(&self, margin: &MarginSpec) -> Result<Axes, Vec<Problem>> {
        let mut problems = Vec::new();
        let variants = self.margin_variants(margin);
        let (doc, _, found) = self.document(variants[0].as_ref(), &self.set_overrides());
        problems.extend(found);
        let mut rates = Vec::new();
        let mut base_rate = None;
        match (&margin.load_scale, &margin.load) {
            (Some(_), Some(_)) | (None, None) => problems.push(Problem::new(
                "margin",
                "expected one of `load_scale` (factors on every workload's rate) and `load` (a path and its values)",
            )),
            (Some(_), None) => {
                let workloads = doc
                    .get("workloads")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let mut total = 0.0;
                for (i, w) in workloads.iter().enumerate() {
                    let arrival = w.get("arrival");
                    let rate = arrival
                        .and_then(|a| a.get("rate_per_s"))
                        .and_then(Value::as_f64);
                    let count = w.get("count").and_then(Value::as_f64).unwrap_or(1.0);
                    match rate {
                        Some(rate) => {
                            rates.push((format!("workloads[{i}].arrival.rate_per_s"), rate));
                            total += rate * count;
                        }
                        None => problems.push(Problem::new(
                            "margin.load_scale",
                            format!(
                                "workloads[{i}] has no `arrival.rate_per_s` to scale (its arrival is {}): name a load path instead (`load`: {{\"path\": ..., \"values\": [...]}})",
                                arrival
                                    .and_then(|a| a.get("kind"))
                                    .and_then(Value::as_str)
                                    .unwrap_or("not a rate")
                            ),
                        )),
                    }
                }
                base_rate = Some(total);
            }
            (None, Some(_)) => {}
        }
        if Sweep::margin_loads(margin).is_empty() {
            problems.push(Problem::new("margin", "expected at least one load level"));
        }
        for (i, level) in margin.levels.iter().enumerate() {
            if !(*level > 0.0 && *level < 1.0) {
                problems.push(Problem::new(
                    format!("margin.levels[{i}]"),
                    format!("expected a probability between 0 and 1 (not included), got {level}"),
                ));
            }
        }
        let t = &margin.trigger;
        if !(t.from.is_finite() && t.to.is_finite() && t.from < t.to) {
            problems.push(Problem::new(
                "margin.trigger",
                format!("expected finite `from` < `to`, got {} and {}", t.from, t.to),
            ));
        }
        if t.tolerance.is_some_and(|tol| tol.is_nan() || tol <= 0.0) {
            problems.push(Problem::new("margin.trigger.tolerance", "expected > 0"));
        }
        let (trigger_path, trigger_offset, trigger_label) = match &t.path {
            Some(path) => (path.clone(), 0.0, path.clone()),
            None => {
                let timeline = doc
                    .get("timeline")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let role = |r: &str| {
                    timeline
                        .iter()
                        .position(|e| e.get("role").and_then(Value::as_str) == Some(r))
                };
                match (role("trigger_start"), role("trigger_end")) {
                    (Some(s), Some(e)) => {
                        let at = |i: usize| timeline[i].get("at_s").and_then(Value::as_f64);
                        let start = at(s).unwrap_or(0.0);
                        (
                            format!("timeline[{e}].at_s"),
                            start,
                            "trigger duration (s)".to_string(),
                        )
                    }
                    _ => {
                        problems.push(Problem::new(
                            "margin.trigger.path",
                            "the model's timeline has no trigger with both a `trigger_start` and a `trigger_end`, so there is no duration to vary: name the trigger's size with `path` (a slowdown's factor, a spike's rate)",
                        ));
                        (String::new(), 0.0, String::new())
                    }
                }
            }
        };
        if !problems.is_empty() {
            return Err(problems);
        }
        let (load_label, load_path) = match &margin.load {
            Some(load) if margin.load_scale.is_none() => {
                (load.path.clone(), Some(load.path.clone()))
            }
            _ => ("load scale".to_string(), None),
        };
        Ok(Axes {
            trigger_label,
            load_label,
            base_rate,
            rates,
            load_path,
            trigger_path,
            trigger_offset,
        })
    }

    /// Checks that every variant builds at every load and at both ends of
    /// the trigger range: every problem at once, before anything runs.
    pub fn check_margin(&self) -> Result<(), Vec<Problem>> {
        let margin = self.spec.margin.as_ref().ok_or_else(|| {
            vec![Problem::new(
                "margin",
                "this sweep file has no `margin` block",
            )]
        })?;
        let axes = self.margin_axes(margin)?;
        let mut problems: Vec<Problem> = Vec::new();
        for variant in self.margin_variants(margin) {
            for load in Sweep::margin_loads(margin) {
                for size in [margin.trigger.from, margin.trigger.to] {
                    let mut overrides = self.set_overrides();
                    overrides.extend(axes.load_overrides(load));
                    overrides.push(axes.trigger_override(size, margin.trigger.integer));
                    if let Err(ps) = self.build(variant.as_ref(), &overrides, self.seed) {
                        for p in ps {
                            if !problems.contains(&p) {
                                problems.push(p);
                            }
                        }
                    }
                }
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }

    /// Runs the margin: for each variant and load, bisects the trigger size
    /// for each level. `on_probe` is told of each probe as it completes.
    pub fn margin(&self, on_probe: &dyn Fn(&MarginProbe)) -> Result<MarginResult, Problem> {
        let margin = self
            .spec
            .margin
            .as_ref()
            .ok_or_else(|| Problem::new("margin", "this sweep file has no `margin` block"))?;
        let axes = self.margin_axes(margin).map_err(|ps| {
            let text: Vec<String> = ps.iter().map(|p| p.to_string()).collect();
            Problem::new("margin", text.join("; "))
        })?;
        let t = &margin.trigger;
        let tolerance = t.tolerance.unwrap_or((t.to - t.from) / 32.0);
        let mut result = MarginResult {
            trigger: axes.trigger_label.clone(),
            load: axes.load_label.clone(),
            base_rate: axes.base_rate,
            probes: Vec::new(),
            rows: Vec::new(),
        };
        for variant in self.margin_variants(margin) {
            let name = self.variant_name(variant.as_ref());
            for load in Sweep::margin_loads(margin) {
                // Probes at this variant and load, by size: the levels'
                // bisections share those they both probe.
                let mut probed: Vec<Probe> = Vec::new();
                for &level in &margin.levels {
                    let mut probe_at = |size: f64| -> Result<Probe, Problem> {
                        let size = if t.integer { size.round() } else { size };
                        if let Some(p) = probed.iter().find(|p| p.value == size) {
                            // Probed for another level: its replications
                            // stopped once sure of that level's side, so
                            // they may be too few for this one's; probed
                            // again then, from its first replication.
                            if p.certain(level) || p.stopped != Stopped::Sure {
                                return Ok(p.clone());
                            }
                        }
                        let mut overrides = axes.load_overrides(load);
                        overrides.push(axes.trigger_override(size, t.integer));
                        let mut p = self
                            .probe_at(
                                variant.as_ref(),
                                &overrides,
                                "metastable",
                                level,
                                margin.stop.as_ref(),
                                &format!("{name} at load {load}, {} = {size}", axes.trigger_label),
                            )
                            .map_err(|mut p| {
                                // Said of the margin, not of a search.
                                if p.path == "search.metric" {
                                    p.path = "margin".into();
                                }
                                p
                            })?;
                        p.value = size;
                        let probe = MarginProbe {
                            variant: name.clone(),
                            load,
                            probe: p.clone(),
                        };
                        on_probe(&probe);
                        result.probes.push(probe);
                        probed.retain(|q| q.value != size);
                        probed.push(p.clone());
                        Ok(p)
                    };
                    let lo = probe_at(t.from)?;
                    let hi = probe_at(t.to)?;
                    // Bisected as a search bisects (integer sizes round in
                    // `probe_at`; a middle that rounds to an end stops it).
                    let mut bracket = Bracket::around(lo, hi, level);
                    while let Some(b) = bracket.as_mut() {
                        if b.width() <= tolerance {
                            break;
                        }
                        let m = probe_at(b.middle())?;
                        if !b.narrow(m, level) {
                            break;
                        }
                    }
                    result.rows.push(row(
                        &name,
                        load,
                        level,
                        &probed,
                        bracket.map(|b| (b.lo, b.hi)),
                        t.from,
                        t.to,
                    ));
                }
            }
        }
        Ok(result)
    }

    /// A variant's name as outputs show it.
    fn variant_name(&self, variant: Option<&VariantChoice>) -> String {
        match variant {
            Some(v) => v.name.clone(),
            None => {
                let (_, name, _) = self.document(None, &[]);
                name.unwrap_or_else(|| "default".into())
            }
        }
    }
}

/// The row of one bisection: its crossing interpolated in its final
/// bracket, and the interval from every probe at its variant and load.
fn row(
    variant: &str,
    load: f64,
    level: f64,
    probed: &[Probe],
    bracket: Option<(Probe, Probe)>,
    from: f64,
    to: f64,
) -> MarginRow {
    let surely_below = probed
        .iter()
        .filter(|p| p.ci.is_some_and(|(_, hi)| hi < level))
        .map(|p| p.value)
        .fold(f64::NEG_INFINITY, f64::max);
    let surely_above = probed
        .iter()
        .filter(|p| p.ci.is_some_and(|(lo, _)| lo >= level))
        .map(|p| p.value)
        .fold(f64::INFINITY, f64::min);
    let (low_sure, high_sure) = (surely_below.is_finite(), surely_above.is_finite());
    let (low, high) = (
        if low_sure { surely_below } else { from },
        if high_sure { surely_above } else { to },
    );
    let Some((a, b)) = bracket else {
        let storms = probed.iter().all(|p| p.above(level));
        return MarginRow {
            variant: variant.to_string(),
            load,
            level,
            critical: None,
            low,
            high,
            low_sure,
            high_sure,
            note: if storms {
                format!(
                    "at least {}% of runs storm at every size from {from}",
                    level * 100.0
                )
            } else {
                format!(
                    "fewer than {}% of runs storm at any size up to {to}",
                    level * 100.0
                )
            },
        };
    };
    let (below, above) = if a.above(level) { (b, a) } else { (a, b) };
    // Linear in the share between the bracket's two probes.
    let span = above.mean - below.mean;
    let critical = if span > 0.0 {
        below.value + (level - below.mean) / span * (above.value - below.value)
    } else {
        (below.value + above.value) / 2.0
    };
    let (lo_end, hi_end) = (low.min(high), high.max(low));
    MarginRow {
        variant: variant.to_string(),
        load,
        level,
        critical: Some(critical.clamp(lo_end, hi_end)),
        low,
        high,
        low_sure,
        high_sure,
        note: String::new(),
    }
}

/// The columns of `margin.csv`.
pub const MARGIN_COLUMNS: [&str; 10] = [
    "variant",
    "load",
    "offered_rps",
    "level",
    "critical",
    "ci_low",
    "ci_high",
    "low_sure",
    "high_sure",
    "note",
];

/// `margin.csv`: one row per variant, load and level (tidy: one value per
/// cell); `offered_rps` is the total offered rate at that load when the
/// load is a scale of every workload's rate.
pub fn margin_csv(result: &MarginResult) -> Result<String, csv::Error> {
    let mut out = csv::Writer::from_writer(Vec::new());
    out.write_record(MARGIN_COLUMNS)?;
    for r in &result.rows {
        out.write_record([
            r.variant.clone(),
            r.load.to_string(),
            result
                .base_rate
                .map_or(String::new(), |rate| (rate * r.load).to_string()),
            r.level.to_string(),
            r.critical.map_or(String::new(), |c| c.to_string()),
            r.low.to_string(),
            r.high.to_string(),
            r.low_sure.to_string(),
            r.high_sure.to_string(),
            r.note.clone(),
        ])?;
    }
    let bytes = out.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8(bytes).expect("CSV of UTF-8 strings is UTF-8"))
}

/// A margin's result read back from its `margin.csv` (no probes), for the
/// spec `margin`: what `stormsim plot` redraws the chart from.
pub fn read_margin_csv(text: &str, margin: &MarginSpec) -> Result<MarginResult, String> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| e.to_string())?
        .iter()
        .map(str::to_string)
        .collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| format!("no column {name:?}"))
    };
    let [variant, load, offered, level, critical, low, high, low_sure, high_sure, note] =
        MARGIN_COLUMNS.map(column);
    let (variant, load, offered, level, critical) = (variant?, load?, offered?, level?, critical?);
    let (low, high, low_sure, high_sure, note) = (low?, high?, low_sure?, high_sure?, note?);
    let mut rows = Vec::new();
    let mut base_rate = None;
    for (i, record) in reader.records().enumerate() {
        let record = record.map_err(|e| e.to_string())?;
        let cell = |c: usize| record.get(c).unwrap_or("");
        let number = |c: usize| -> Result<f64, String> {
            cell(c)
                .parse()
                .map_err(|_| format!("line {}: {} is not a number", i + 2, header[c]))
        };
        let row = MarginRow {
            variant: cell(variant).to_string(),
            load: number(load)?,
            level: number(level)?,
            critical: if cell(critical).is_empty() {
                None
            } else {
                Some(number(critical)?)
            },
            low: number(low)?,
            high: number(high)?,
            low_sure: cell(low_sure) == "true",
            high_sure: cell(high_sure) == "true",
            note: cell(note).to_string(),
        };
        if !cell(offered).is_empty() && row.load != 0.0 {
            base_rate = Some(number(offered)? / row.load);
        }
        rows.push(row);
    }
    Ok(MarginResult {
        trigger: margin
            .trigger
            .path
            .clone()
            .unwrap_or_else(|| "trigger duration (s)".into()),
        load: margin
            .load
            .as_ref()
            .map_or("load scale".into(), |l| l.path.clone()),
        base_rate,
        probes: Vec::new(),
        rows,
    })
}

/// `margin_probes.csv`: every probe, in the order run.
pub fn margin_probes_csv(result: &MarginResult) -> Result<String, csv::Error> {
    let mut out = csv::Writer::from_writer(Vec::new());
    out.write_record([
        "variant",
        "load",
        "trigger",
        "metastable_share",
        "ci_low",
        "ci_high",
        "replications_used",
        "replications_left_out",
        "stopped",
    ])?;
    for p in &result.probes {
        let (lo, hi) = p.probe.ci.map_or((String::new(), String::new()), |(l, h)| {
            (l.to_string(), h.to_string())
        });
        let left_out: usize = p.probe.left_out.iter().map(|(_, n)| n).sum();
        out.write_record([
            p.variant.clone(),
            p.load.to_string(),
            p.probe.value.to_string(),
            p.probe.mean.to_string(),
            lo,
            hi,
            p.probe.used.to_string(),
            left_out.to_string(),
            p.probe.stopped.name().to_string(),
        ])?;
    }
    let bytes = out.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8(bytes).expect("CSV of UTF-8 strings is UTF-8"))
}

/// The sentence a person reads for one row: "at 1,200 req/s, a trigger
/// duration (s) of 14 [12, 16] tips the system in half the runs".
pub fn sentence(result: &MarginResult, r: &MarginRow) -> String {
    let load = match result.base_rate {
        Some(rate) => format!("{} req/s (load × {})", group(rate * r.load), r.load),
        None => format!("{} = {}", result.load, r.load),
    };
    let share = match r.level {
        l if (l - 0.5).abs() < 1e-9 => "half the runs".to_string(),
        l => format!("{:.0}% of runs", l * 100.0),
    };
    let bound = |x: f64, sure: bool| {
        if sure {
            short(x)
        } else {
            format!("{} or beyond", short(x))
        }
    };
    match r.critical {
        Some(c) => format!(
            "{}: at {load}, a {} of {} [{}, {}] tips the system in {share}",
            r.variant,
            result.trigger,
            short(c),
            bound(r.low, r.low_sure),
            bound(r.high, r.high_sure),
        ),
        None => format!("{}: at {load}, {}", r.variant, r.note),
    }
}

/// A number as a person writes it: at most 3 significant digits past the
/// whole part.
fn short(x: f64) -> String {
    if x.abs() >= 100.0 {
        group(x)
    } else {
        let s = format!("{x:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// A whole number with thousands separated: 1,200.
fn group(x: f64) -> String {
    let digits = format!("{:.0}", x.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if x < 0.0 {
        format!("-{out}")
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(value: f64, mean: f64, ci: (f64, f64)) -> Probe {
        Probe {
            value,
            mean,
            ci: Some(ci),
            used: 8,
            left_out: Vec::new(),
            stopped: Stopped::Sure,
        }
    }

    #[test]
    fn the_interval_is_between_the_sure_probes() {
        let probed = [
            probe(10.0, 0.0, (0.0, 0.3)),
            probe(40.0, 1.0, (0.7, 1.0)),
            probe(25.0, 0.4, (0.2, 0.6)),
            probe(17.5, 0.1, (0.0, 0.4)),
            probe(32.5, 0.9, (0.6, 1.0)),
        ];
        let bracket = Some((probed[2].clone(), probed[4].clone()));
        let r = row("v", 1.0, 0.5, &probed, bracket, 10.0, 40.0);
        assert_eq!((r.low, r.high), (17.5, 32.5));
        assert!(r.low_sure && r.high_sure);
        // 0.4 at 25 and 0.9 at 32.5: 0.5 a fifth of the way.
        assert!((r.critical.unwrap() - 26.5).abs() < 1e-9);
    }

    #[test]
    fn the_table_reads_back() {
        let margin: MarginSpec = serde_json::from_value(serde_json::json!({
            "trigger": {"from": 1, "to": 10}, "load_scale": [1.0, 2.0]
        }))
        .unwrap();
        let row = |load: f64, critical: Option<f64>| MarginRow {
            variant: "v".into(),
            load,
            level: 0.5,
            critical,
            low: 2.0,
            high: 4.0,
            low_sure: true,
            high_sure: false,
            note: if critical.is_none() {
                "none".into()
            } else {
                String::new()
            },
        };
        let result = MarginResult {
            trigger: "trigger duration (s)".into(),
            load: "load scale".into(),
            base_rate: Some(500.0),
            probes: Vec::new(),
            rows: vec![row(1.0, Some(3.0)), row(2.0, None)],
        };
        let back = read_margin_csv(&margin_csv(&result).unwrap(), &margin).unwrap();
        assert_eq!(back, result);
    }

    #[test]
    fn no_crossing_says_which_side() {
        let probed = [probe(10.0, 1.0, (0.7, 1.0)), probe(40.0, 1.0, (0.7, 1.0))];
        let r = row("v", 1.0, 0.5, &probed, None, 10.0, 40.0);
        assert_eq!(r.critical, None);
        assert!(r.note.contains("every size from 10"), "{}", r.note);
    }

    #[test]
    fn the_sentence_reads_as_a_person_writes() {
        let result = MarginResult {
            trigger: "trigger duration (s)".into(),
            load: "load scale".into(),
            base_rate: Some(1000.0),
            probes: Vec::new(),
            rows: Vec::new(),
        };
        let r = MarginRow {
            variant: "baseline".into(),
            load: 1.2,
            level: 0.5,
            critical: Some(14.04),
            low: 12.0,
            high: 16.0,
            low_sure: true,
            high_sure: false,
            note: String::new(),
        };
        assert_eq!(
            sentence(&result, &r),
            "baseline: at 1,200 req/s (load × 1.2), a trigger duration (s) of 14.04 [12, 16 or beyond] tips the system in half the runs"
        );
    }
}
