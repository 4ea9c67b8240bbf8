//! The stormsim model file format.
//!
//! Loading a model goes in four stages, each reporting every problem it finds
//! with its JSON path:
//!
//! 1. JSON syntax ([`parse_json`]);
//! 2. overrides: `--set PATH=VALUE` on the base, then each variant's `set`
//!    ([`ParamPath`]);
//! 3. structure: the serde types of [`spec`] (unknown fields are errors, and
//!    objects must be objects: [`strict`]);
//! 4. meaning: [`validate()`] (unknown services, ranges, probabilities, cycles).
//!
//! The result is a [`LoadedModel`]: one checked [`Model`] per variant.
#![warn(missing_docs)]

pub mod dist;
mod error;
pub mod model;
pub mod path;
pub mod reference;
pub mod spec;
pub mod strict;
mod validate;

pub use dist::Dist;
pub use error::{ModelError, Problem};
pub use model::*;
pub use path::{parse_cli_value, ParamPath};
pub use spec::ModelSpec;
pub use validate::validate;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use stormsim_engine::{SimDuration, SimTime};

/// A model file, loaded and checked: its variants, each ready to run.
#[derive(Clone, Debug)]
pub struct LoadedModel {
    /// The model's name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// The master seed (after `--seed`).
    pub seed: u64,
    /// Variants in file order; `base` alone when the file declares none.
    pub variants: Vec<Variant>,
}

/// One variant of a model.
#[derive(Clone, Debug)]
pub struct Variant {
    /// Name.
    pub name: String,
    /// What it changes.
    pub description: String,
    /// The checked model with the variant's overrides applied, as it starts.
    pub model: Model,
    /// Its timeline: the model from each change on, in time order.
    pub changes: Vec<Change>,
}

/// Parses JSON text, reporting a syntax error with its line and column.
pub fn parse_json(text: &str) -> Result<Value, ModelError> {
    serde_json::from_str(text).map_err(|e| {
        ModelError::from(vec![Problem::new(
            "",
            format!(
                "invalid JSON at line {}, column {}: {e}",
                e.line(),
                e.column()
            ),
        )])
    })
}

/// Reads a `T` from `value` (objects only: see [`strict`]), its problems'
/// paths inside `prefix`.
fn deserialize_at<T: DeserializeOwned + Serialize>(
    value: &Value,
    prefix: &str,
) -> Result<T, Vec<Problem>> {
    strict::from_value(value).map_err(|problems| {
        problems
            .into_iter()
            .map(|mut p| {
                p.path = match (prefix.is_empty(), p.path.as_str()) {
                    (true, _) => p.path,
                    (false, "") => prefix.to_string(),
                    (false, inner) if inner.starts_with('[') => format!("{prefix}{inner}"),
                    (false, inner) => format!("{prefix}.{inner}"),
                };
                p
            })
            .collect()
    })
}

/// Deserializes a model document, collecting one structural problem per list
/// element and per top-level field instead of stopping at the first.
pub fn parse_spec(doc: &Value) -> Result<ModelSpec, Vec<Problem>> {
    if let Ok(spec) = strict::from_value::<ModelSpec>(doc) {
        return Ok(spec);
    }
    let mut problems = Vec::new();
    let mut skeleton = doc.clone();
    if let Some(obj) = skeleton.as_object_mut() {
        fn each<T: DeserializeOwned + Serialize>(
            obj: &mut serde_json::Map<String, Value>,
            key: &str,
            out: &mut Vec<Problem>,
        ) {
            if let Some(Value::Array(items)) = obj.get(key) {
                for (i, item) in items.iter().enumerate() {
                    if let Err(ps) = deserialize_at::<T>(item, &format!("{key}[{i}]")) {
                        out.extend(ps);
                    }
                }
                obj.insert(key.to_string(), Value::Array(Vec::new()));
            }
        }
        each::<spec::WorkloadSpec>(obj, "workloads", &mut problems);
        each::<spec::ServiceSpec>(obj, "services", &mut problems);
        each::<spec::VariantSpec>(obj, "variants", &mut problems);
    }
    if let Err(ps) = deserialize_at::<ModelSpec>(&skeleton, "") {
        problems.splice(0..0, ps);
    }
    if problems.is_empty() {
        // Unreachable in practice: the per-part passes found nothing, yet the whole
        // failed. Report the whole's error rather than nothing.
        problems = deserialize_at::<ModelSpec>(doc, "")
            .err()
            .unwrap_or_else(|| vec![Problem::new("", "the model could not be read")]);
    }
    Err(problems)
}

/// Applies `PATH = VALUE` overrides in order.
pub fn apply_overrides<'a>(
    doc: &mut Value,
    sets: impl IntoIterator<Item = (&'a str, &'a Value)>,
    where_: &dyn Fn(&str) -> String,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    for (path, value) in sets {
        let result = ParamPath::parse(path).and_then(|p| p.set(doc, value.clone()));
        if let Err(message) = result {
            problems.push(Problem::new(where_(path), message));
        }
    }
    problems
}

/// Loads a model from its text: the base with `cli_sets` applied, then each
/// variant. `seed` overrides the file's seed.
pub fn load_model(
    text: &str,
    cli_sets: &[(String, Value)],
    seed: Option<u64>,
) -> Result<LoadedModel, ModelError> {
    let mut base = parse_json(text)?;
    let problems = apply_overrides(
        &mut base,
        cli_sets.iter().map(|(p, v)| (p.as_str(), v)),
        &|p| format!("--set {p}"),
    );
    if !problems.is_empty() {
        return Err(problems.into());
    }
    let spec = parse_spec(&base)?;
    let base_variant = build_variant(&base, &spec, "base", "")?;
    let seed = seed.unwrap_or(spec.seed);

    if spec.variants.len() > MAX_VARIANTS {
        return Err(vec![Problem::new(
            "variants",
            format!(
                "at most {MAX_VARIANTS} variants, got {}: explore more points with a sweep file",
                spec.variants.len()
            ),
        )]
        .into());
    }
    let mut variants = Vec::new();
    let mut problems = Vec::new();
    if spec.variants.is_empty() {
        variants.push(base_variant);
    }
    // Each variant starts from the base without the variants: copying them
    // all into each would make loading quadratic in their number.
    let mut template = base.clone();
    if let Some(o) = template.as_object_mut() {
        o.remove("variants");
    }
    for (i, v) in spec.variants.iter().enumerate() {
        let mut doc = template.clone();
        let here = format!("variants[{i}] ({:?})", v.name);
        let set_problems =
            apply_overrides(&mut doc, v.set.iter().map(|(p, x)| (p.as_str(), x)), &|p| {
                format!("variants[{i}].set[{p:?}]")
            });
        if !set_problems.is_empty() {
            problems.extend(set_problems);
            continue;
        }
        match parse_spec(&doc).and_then(|s| build_variant(&doc, &s, &v.name, &v.description)) {
            Ok(variant) => variants.push(variant),
            Err(ps) => problems.extend(ps.into_iter().map(|p| p.within(&here))),
        }
    }
    for v in &mut variants {
        v.model.seed = seed;
        for c in &mut v.changes {
            c.model.seed = seed;
        }
    }
    if !problems.is_empty() {
        return Err(problems.into());
    }
    Ok(LoadedModel {
        name: spec.name,
        description: spec.description,
        seed,
        variants,
    })
}

/// Checks one variant's document and resolves its timeline: each change is the
/// document with every earlier change applied, checked like any model.
fn build_variant(
    doc: &Value,
    spec: &ModelSpec,
    name: &str,
    description: &str,
) -> Result<Variant, Vec<Problem>> {
    let model = validate(spec)?;
    let mut order: Vec<usize> = (0..spec.timeline.len()).collect();
    order.sort_by(|&a, &b| spec.timeline[a].at_s.total_cmp(&spec.timeline[b].at_s));
    let mut problems = Vec::new();
    let mut changes = Vec::new();
    let mut current = doc.clone();
    for i in order {
        let entry = &spec.timeline[i];
        let here = format!("timeline[{i}] ({:?})", entry.name);
        for (at_s, sets) in timeline_steps(&current, entry).map_err(|p| vec![p.within(&here)])? {
            let set_problems = apply_overrides(
                &mut current,
                sets.iter().map(|(p, v)| (p.as_str(), v)),
                &|p| format!("timeline[{i}].set[{p:?}]"),
            );
            if !set_problems.is_empty() {
                problems.extend(set_problems);
                break;
            }
            match parse_spec(&current).and_then(|s| validate(&s)) {
                Ok(changed) => {
                    if let Err(message) = validate::same_shape(&model, &changed) {
                        problems.push(Problem::new(here.clone(), message));
                        break;
                    }
                    changes.push(Change {
                        at: SimTime::ZERO + SimDuration::from_ms(at_s * 1000.0),
                        name: entry.name.clone(),
                        role: entry.role,
                        model: changed,
                    });
                }
                Err(ps) => {
                    problems.extend(ps.into_iter().map(|p| p.within(&here)));
                    break;
                }
            }
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Variant {
        name: name.to_string(),
        description: description.to_string(),
        model,
        changes,
    })
}

/// Longest ramp (`over_s`), in seconds, i.e. steps.
pub const MAX_RAMP_S: f64 = 10_000.0;

/// Most variants a model may have: each is a whole checked model in memory; a
/// sweep explores more.
pub const MAX_VARIANTS: usize = 10_000;

/// The step changes of one timeline entry: one step for a plain change; for a
/// ramp, one per second (at least one) moving each numeric value linearly from
/// its value before the ramp to its target, reaching it at `at_s + over_s`.
#[allow(clippy::type_complexity)]
fn timeline_steps(
    doc: &Value,
    entry: &spec::TimelineEntrySpec,
) -> Result<Vec<(f64, Vec<(String, Value)>)>, Problem> {
    let sets: Vec<(String, Value)> = entry
        .set
        .iter()
        .map(|(p, v)| (p.clone(), v.clone()))
        .collect();
    let Some(over) = entry.over_s.filter(|o| *o > 0.0) else {
        return Ok(vec![(entry.at_s, sets)]);
    };
    // One checked model per step: a longer ramp would hold memory without bound.
    if over > MAX_RAMP_S {
        return Err(Problem::new(
            "over_s",
            format!("a ramp moves in steps of 1 s: at most {MAX_RAMP_S} s, got {over}"),
        ));
    }
    // Resolve `[*]` so each element ramps from its own value.
    let mut ramps = Vec::new();
    for (path, target) in &sets {
        let parsed =
            ParamPath::parse(path).map_err(|m| Problem::new(format!("set[{path:?}]"), m))?;
        for concrete in parsed
            .expand(doc)
            .map_err(|m| Problem::new(format!("set[{path:?}]"), m))?
        {
            let from = concrete.get(doc).and_then(Value::as_f64);
            let (Some(from), Some(to)) = (from, target.as_f64()) else {
                return Err(Problem::new(
                    format!("set[{path:?}]"),
                    "a ramp (`over_s`) needs numbers: the current value and the target",
                ));
            };
            ramps.push((concrete, from, to));
        }
    }
    let n = over.round().max(1.0) as u32;
    Ok((1..=n)
        .map(|j| {
            let f = f64::from(j) / f64::from(n);
            let at = entry.at_s + over * f;
            let step = ramps
                .iter()
                .map(|(p, from, to)| (p.to_string_concrete(), Value::from(from + (to - from) * f)))
                .collect();
            (at, step)
        })
        .collect())
}
