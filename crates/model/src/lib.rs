//! The stormsim model file format.
//!
//! Loading a model goes in four stages, each reporting every problem it finds
//! with its JSON path:
//!
//! 1. JSON syntax ([`parse_json`]);
//! 2. overrides: `--set PATH=VALUE` on the base, then each variant's `set`
//!    (and `--set` again: it wins) ([`ParamPath`]);
//! 3. structure: the serde types of [`spec`] (unknown fields are errors, and
//!    objects must be objects: [`strict`]);
//! 4. meaning: [`validate()`] (unknown services, ranges, probabilities, cycles).
//!
//! A syntax error, or a `--set` that names nothing, stops there. Otherwise the
//! base, every timeline change and every variant are checked, also after a
//! problem in another, and their problems reported together; a problem the base
//! has (or an earlier timeline change left) is reported once, not again in
//! each variant (or later change) that still has it. What remains staged: the
//! meaning of a model (and of its timeline) is checked only once its types are
//! read, and a variant's only once its own are; the types of one object stop
//! at a required field that is wrong or missing ([`strict::from_value`]).
//!
//! A problem in what an override wrote is named by the override, as written
//! (`variants[1].set["services[A].workers"]`, `timeline[0].set[...]`); another
//! one in a variant or a change by it and its path, with names for indices
//! (`variants[1] ("v2"): services[A].shards`).
//!
//! The result is a [`LoadedModel`]: one checked [`Model`] per variant.
#![warn(missing_docs)]

pub mod dist;
mod duplicate_keys;
mod error;
pub mod input_file;
pub mod model;
pub mod path;
pub mod reference;
pub mod schema_doc;
pub mod shape;
pub mod spec;
pub mod strict;
mod trace_file;
mod validate;
mod warnings;

pub use dist::Dist;
pub use error::{ModelError, Problem, TOP_LEVEL};
pub use input_file::{read_input_file, InputFileError, MAX_INPUT_FILE_BYTES};
pub use model::*;
pub use path::{parse_cli_value, ParamPath};
pub use spec::ModelSpec;
pub use trace_file::{FileAccess, MAX_TRACE_FILE_BYTES};
pub use validate::{
    entity_name_problem, folder_name_problem, validate, MAX_NAME_BYTES, MAX_SERIES_ROWS, RUN_ENTITY,
};
pub use warnings::{warnings, Warning, WARNINGS};

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};
use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashSet};
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
    /// The overrides (`--set`, a variant's `set`) whose path reached more
    /// than one place, each with how many and where: `--set
    /// services[*].steps[*].retry: 4 places (services[0].steps[1], …)`.
    pub selections: Vec<String>,
}

impl LoadedModel {
    /// What is wrong with `names` as variants of this model: `None` if each
    /// is one, else the names that are not and the model's variants. Library
    /// API: `stormsim run --variant`, `bench` and the Python package say it
    /// in the same words.
    pub fn unknown_variants(&self, names: &[String]) -> Option<String> {
        let unknown: Vec<String> = names
            .iter()
            .filter(|n| !self.variants.iter().any(|v| &v.name == *n))
            .map(|n| format!("{n:?}"))
            .collect();
        if unknown.is_empty() {
            return None;
        }
        let variants: Vec<&str> = self.variants.iter().map(|v| v.name.as_str()).collect();
        Some(format!(
            "no variant named {}; the model's variants are: {}",
            unknown.join(", "),
            variants.join(", ")
        ))
    }

    /// Keeps only the variants `names` (all if it is empty), in the model's
    /// order whatever the order asked: a comparison reads the same however
    /// its variants were picked. Refuses (keeping them all) a name that is no
    /// variant, saying so as [`LoadedModel::unknown_variants`] does. Library
    /// API, as `stormsim run --variant` selects.
    pub fn select_variants(&mut self, names: &[String]) -> Result<(), String> {
        if let Some(message) = self.unknown_variants(names) {
            return Err(message);
        }
        if !names.is_empty() {
            self.variants.retain(|v| names.contains(&v.name));
        }
        Ok(())
    }
}

/// A line for each override in `applied` that reached several places.
fn several_places(applied: &[Applied]) -> impl Iterator<Item = &Applied> + '_ {
    applied.iter().filter(|a| a.paths.len() > 1)
}

impl Applied {
    /// `LABEL: N places (P1, P2, P3, P4 and K more)`.
    fn places(&self) -> String {
        const LISTED: usize = 4;
        let mut listed = self.paths[..self.paths.len().min(LISTED)].join(", ");
        if self.paths.len() > LISTED {
            listed.push_str(&format!(" and {} more", self.paths.len() - LISTED));
        }
        format!("{}: {} places ({listed})", self.label, self.paths.len())
    }
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
    /// The same timeline without its trigger (the entries whose role is
    /// `trigger_start` or `trigger_end`): the run the recovery analysis
    /// compares with to tell a storm from a load the system could not carry
    /// even untouched, or from one it falls into with no trigger at all.
    /// `None` without a trigger or a `metastability` block.
    pub without_trigger: Option<Vec<Change>>,
    /// Whether its load or capacity may change after the trigger for
    /// another reason than the trigger before the recovery is judged: a
    /// timeline entry with no role before the first intervention after the
    /// trigger's end, a load shape, a closed loop, a workload that stops
    /// (`duration_s` or `requests`) before the horizon. Where not, a run
    /// still degraded after the trigger cannot be overloaded (the same
    /// system carried the same load before it).
    pub load_may_change: bool,
    /// The values its timeline sets that a ramp moving at the time sets
    /// again at its next step (for a warning: the later step wins).
    pub undone_by_ramps: Vec<UndoneByRamp>,
}

/// A timeline entry's set that a ramp already moving when the entry started
/// overwrites at its next step: steps apply in time order, so the entry's
/// value holds only until then, and the ramp's target from its end.
#[derive(Clone, Debug, PartialEq)]
pub struct UndoneByRamp {
    /// The entry's name.
    pub entry: String,
    /// The path as the entry writes it.
    pub path: String,
    /// The ramp's name.
    pub ramp: String,
    /// When the ramp first sets the path again, s.
    pub undone_at_s: f64,
    /// When the ramp ends, s.
    pub ramp_ends_s: f64,
}

/// Parses JSON text, reporting a syntax error with its line and column (once:
/// serde_json's message ends with them too).
///
/// A UTF-8 byte-order mark at the start (some Windows editors write one) is
/// skipped. A key written twice in one object is refused at its path: JSON
/// readers disagree on which one wins, and serde_json's "the last" would run a
/// value the reader of the file may not see.
pub fn parse_json(text: &str) -> Result<Value, ModelError> {
    let (value, duplicates) = parse_json_and_duplicates(text)?;
    if duplicates.is_empty() {
        Ok(value)
    } else {
        Err(duplicates.into())
    }
}

/// [`parse_json`], with the duplicate keys apart: a model's are reported
/// with its other problems, all at once.
fn parse_json_and_duplicates(text: &str) -> Result<(Value, Vec<Problem>), ModelError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let value: Value = serde_json::from_str(text).map_err(|e| {
        ModelError::from(vec![Problem::new(
            "",
            format!(
                "invalid JSON at line {}, column {}: {}",
                e.line(),
                e.column(),
                strict::clean_serde_message(&e.to_string())
            ),
        )])
    })?;
    let duplicates = duplicate_keys::duplicate_keys(text)
        .into_iter()
        .map(|path| {
            Problem::new(
                path,
                "duplicate key: this object has it twice (JSON keeps only one)",
            )
        })
        .collect();
    Ok((value, duplicates))
}

/// Reads a `T` from `value` (objects only: see [`strict`]), its problems'
/// paths inside `prefix`.
fn deserialize_at<T: DeserializeOwned + Serialize + JsonSchema>(
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

/// Deserializes a model document, collecting the structural problems of each
/// list element and of the top level instead of stopping at the first (see
/// [`strict::from_value`]). A problem of the document as a whole is at
/// [`TOP_LEVEL`].
pub fn parse_spec(doc: &Value) -> Result<ModelSpec, Vec<Problem>> {
    if let Ok(spec) = strict::from_value::<ModelSpec>(doc) {
        return Ok(spec);
    }
    let mut problems = Vec::new();
    let mut skeleton = doc.clone();
    if let Some(obj) = skeleton.as_object_mut() {
        fn each<T: DeserializeOwned + Serialize + JsonSchema>(
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
        each::<spec::TimelineEntrySpec>(obj, "timeline", &mut problems);
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
    for p in &mut problems {
        if p.path.is_empty() {
            p.path = TOP_LEVEL.to_string();
        }
    }
    Err(problems)
}

/// `doc` with the field at each problem's path taken out, and those paths;
/// `None` where a problem is not at an object's field (an element of a
/// list, the document itself, no path at all): taking that out would move
/// what follows it, or leave nothing to read.
fn without_fields(doc: &Value, problems: &[Problem]) -> Option<(Value, Vec<String>)> {
    let mut doc = doc.clone();
    let mut taken_out = Vec::new();
    for problem in problems {
        let steps = problem_path_steps(&problem.path)?;
        let (key, parent) = match steps.split_last()? {
            (PathStep::Key(key), parent) => (key, parent),
            (PathStep::Index(_), _) => return None,
        };
        let mut at = &mut doc;
        for step in parent {
            at = match step {
                PathStep::Key(k) => at.get_mut(k.as_str())?,
                PathStep::Index(i) => at.get_mut(*i)?,
            };
        }
        // Already gone: a problem said twice, or inside one taken out.
        at.as_object_mut()?.remove(key.as_str());
        taken_out.push(problem.path.clone());
    }
    Some((doc, taken_out))
}

/// One step of a problem's path.
enum PathStep {
    Key(String),
    Index(usize),
}

/// `services[1].steps[0].work` as its steps; `None` for anything else (the
/// top level, a name in brackets, no path).
fn problem_path_steps(path: &str) -> Option<Vec<PathStep>> {
    let mut steps = Vec::new();
    for part in path.split('.') {
        let (key, mut rest) = part.split_once('[').map_or((part, ""), |(k, r)| (k, r));
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return None;
        }
        steps.push(PathStep::Key(key.to_string()));
        while !rest.is_empty() {
            let (index, after) = rest.split_once(']')?;
            steps.push(PathStep::Index(index.parse().ok()?));
            rest = after.strip_prefix('[').unwrap_or(after);
            if !after.is_empty() && !after.starts_with('[') {
                return None;
            }
        }
    }
    Some(steps)
}

/// Applies `PATH = VALUE` overrides in order.
pub fn apply_overrides<'a>(
    doc: &mut Value,
    sets: impl IntoIterator<Item = (&'a str, &'a Value)>,
    where_: &dyn Fn(&str) -> String,
) -> Vec<Problem> {
    let sets = sets
        .into_iter()
        .map(|(path, value)| (where_(path), path, value, true));
    apply_sets(doc, sets).0
}

/// One override applied to a document: where it was written, and what it set.
struct Applied {
    /// Where it was written, as a problem's path:
    /// `variants[1].set["services[A].workers"]`.
    label: String,
    /// The JSON paths it set ([`ParamPath::index_paths`]).
    paths: Vec<String>,
    /// The entry's own (a variant's or a timeline change's), not a `--set`.
    own: bool,
    /// Its path has a `[*]`: a problem says which element.
    star: bool,
}

/// Applies overrides (label, path, value, own) in order: the problems of those
/// whose path names nothing (at their label), and the others, applied.
fn apply_sets<'a>(
    doc: &mut Value,
    sets: impl IntoIterator<Item = (String, &'a str, &'a Value, bool)>,
) -> (Vec<Problem>, Vec<Applied>) {
    let mut problems = Vec::new();
    let mut applied = Vec::new();
    for (label, path, value, own) in sets {
        let result = ParamPath::parse(path).and_then(|p| {
            let paths = p.index_paths(doc);
            p.set(doc, value.clone()).map(|()| paths)
        });
        match result {
            Ok(paths) => applied.push(Applied {
                // (A ramp's step sets a `[*]` resolved: its label has it.)
                star: path.contains("[*]") || label.contains("[*]"),
                label,
                paths,
                own,
            }),
            Err(message) => problems.push(Problem::new(label, message)),
        }
    }
    (problems, applied)
}

/// Locates the problems of `doc`, a document made by the overrides `applied`:
/// a problem at (or inside) what an override set is named by the override as
/// written, then the rest of its path (`variants[1].set["services[A].retry"]
/// .max_attempts`; for a `[*]`, which element: `(at services[B].workers)`);
/// any other by `context` and its path, with names for indices (`variants[1]
/// ("v2"): services[A].shards`), unless it is in `seen` (reported already: the
/// base's, an earlier change's, which the document still has).
fn locate(
    problems: Vec<Problem>,
    applied: &[Applied],
    doc: &Value,
    context: &str,
    seen: &HashSet<Problem>,
) -> Vec<Problem> {
    problems
        .into_iter()
        .filter_map(|p| {
            // The override that wrote the value: the last one applied that set
            // the path or a part of it (a later one replaced what an earlier one
            // wrote inside it, however long the earlier one's path).
            let mut best: Option<(&Applied, usize)> = None;
            for a in applied {
                for set in &a.paths {
                    let inside = p.path.strip_prefix(set.as_str()).is_some_and(|rest| {
                        rest.is_empty() || rest.starts_with('.') || rest.starts_with('[')
                    });
                    if inside {
                        best = Some((a, set.len()));
                    }
                }
            }
            let by_entry = |a: &Applied, len: usize| {
                let mut path = format!("{}{}", a.label, &p.path[len..]);
                if a.star {
                    path.push_str(&format!(" (at {})", with_names(doc, &p.path)));
                }
                Problem::new(path, p.message.clone())
            };
            match best {
                Some((a, len)) if a.own => Some(by_entry(a, len)),
                _ if seen.contains(&p) => None,
                Some((a, len)) => Some(by_entry(a, len)),
                None => Some(
                    Problem {
                        path: with_names(doc, &p.path),
                        message: p.message,
                    }
                    .within(context),
                ),
            }
        })
        .collect()
}

/// A problem's JSON path with each list index written as the name that selects
/// that element in a parameter path, where one does (`services[1].steps[0]`
/// becomes `services[A].steps[B]`): what a variant's `set` would write. As it
/// is where it is no such path.
fn with_names(doc: &Value, path: &str) -> String {
    let Ok(parsed) = ParamPath::parse(path) else {
        return path.to_string();
    };
    let mut out = String::new();
    let mut here = Some(doc);
    for segment in parsed.segments() {
        match segment {
            path::Segment::Key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
                here = here.and_then(|h| h.get(key));
            }
            path::Segment::Index(i) => {
                let list = here.and_then(Value::as_array);
                match list.and_then(|l| path::name_of_element(l, *i)) {
                    Some(name) => out.push_str(&format!("[{name}]")),
                    None => out.push_str(&format!("[{i}]")),
                }
                here = list.and_then(|l| l.get(*i));
            }
            _ => return path.to_string(),
        }
    }
    out
}

/// Loads a model from its text: the base with `cli_sets` applied, then each
/// variant: the file's base, the variant's own `set`, then `cli_sets`, so
/// that `--set` wins in every variant (as a sweep's axes do) and each
/// document gets every `--set` exactly once (one ending in `[+]` adds one
/// element; one selecting by name selects in the document it finds). A
/// `--set` of `variants…` shapes the variants themselves and applies to the
/// base only. A problem in `cli_sets` is reported once, at the base. `seed`
/// overrides the file's seed. Library API: the Python package loads a model
/// given as a dict through here.
pub fn load_model(
    text: &str,
    cli_sets: &[(String, Value)],
    seed: Option<u64>,
) -> Result<LoadedModel, ModelError> {
    load_model_in(text, None, cli_sets, seed)
}

/// Replaces every `trace` arrival's `file` in `doc`, a model document, by
/// the rates it holds, read from `dir` (see [`load_model_in`]). True when a
/// file was read: a sweep keeps the model as read, so that every point, shard
/// and resumed run sees the same rates whatever happens to the file later.
pub fn inline_trace_files(
    doc: &mut Value,
    dir: Option<&std::path::Path>,
) -> Result<bool, ModelError> {
    inline_trace_files_with(doc, dir, FileAccess::Anywhere)
}

/// [`inline_trace_files`], reading only the files `access` allows.
pub fn inline_trace_files_with(
    doc: &mut Value,
    dir: Option<&std::path::Path>,
    access: FileAccess,
) -> Result<bool, ModelError> {
    let mut files = trace_file::TraceFiles::new(dir, access);
    let mut problems = Vec::new();
    files.inline(doc, "", &mut problems);
    if problems.is_empty() {
        Ok(files.any_read())
    } else {
        Err(problems.into())
    }
}

/// [`load_model`] for a model whose files (a `trace` arrival's `file`) are
/// in the folder `dir`: the model file's, or a sweep's with its model inline.
/// Without a folder (`None`), a model that names a file is an error. It may
/// name any file ([`FileAccess::Anywhere`]). Library API: `stormsim run` and
/// `check` load a model file through here.
pub fn load_model_in(
    text: &str,
    dir: Option<&std::path::Path>,
    cli_sets: &[(String, Value)],
    seed: Option<u64>,
) -> Result<LoadedModel, ModelError> {
    load_model_in_with(text, dir, FileAccess::Anywhere, cli_sets, seed)
}

/// [`load_model_in`], reading only the files `access` allows. Library API:
/// the Python package loads a model through here (a dict's confined to the
/// current folder unless told otherwise).
pub fn load_model_in_with(
    text: &str,
    dir: Option<&std::path::Path>,
    access: FileAccess,
    cli_sets: &[(String, Value)],
    seed: Option<u64>,
) -> Result<LoadedModel, ModelError> {
    let (written_base, duplicates) = parse_json_and_duplicates(text)?;
    load_parsed(written_base, duplicates, dir, access, cli_sets, seed)
}

/// [`load_model_in`] for a model already parsed into a JSON document (which
/// has no duplicate keys: a map holds each once). A sweep builds each
/// point's document from the model's as values, and would otherwise write
/// it out and parse it again, for each of up to a million points and each
/// of their runs.
pub fn load_model_document(
    doc: Value,
    dir: Option<&std::path::Path>,
    cli_sets: &[(String, Value)],
    seed: Option<u64>,
) -> Result<LoadedModel, ModelError> {
    load_parsed(doc, Vec::new(), dir, FileAccess::Anywhere, cli_sets, seed)
}

/// Loads a parsed model document whose duplicate keys were `duplicates`
/// (reported with its other problems).
fn load_parsed(
    mut written_base: Value,
    duplicates: Vec<Problem>,
    dir: Option<&std::path::Path>,
    access: FileAccess,
    cli_sets: &[(String, Value)],
    seed: Option<u64>,
) -> Result<LoadedModel, ModelError> {
    // Trace files become the rates they hold, wherever a trace is written
    // whole: in the file (its workloads, variants, timeline) or a `--set`.
    let mut files = trace_file::TraceFiles::new(dir, access);
    let mut problems = Vec::new();
    files.inline(&mut written_base, "", &mut problems);
    let mut cli_sets = cli_sets.to_vec();
    for (path, value) in &mut cli_sets {
        files.inline(value, &format!("--set {path}"), &mut problems);
    }
    if !problems.is_empty() {
        return Err(problems.into());
    }
    let cli_sets = cli_sets.as_slice();
    let mut base = written_base.clone();
    let cli = |context: &str| {
        let context = context.to_string();
        cli_sets.iter().map(move |(p, v)| {
            let label = match context.as_str() {
                "" => format!("--set {p}"),
                context => format!("{context}: --set {p}"),
            };
            (label, p.as_str(), v, false)
        })
    };
    let (problems, applied) = apply_sets(&mut base, cli(""));
    if !problems.is_empty() {
        return Err(problems.into());
    }
    let mut selections: Vec<String> = several_places(&applied).map(Applied::places).collect();
    let mut problems = duplicates;
    // Where the file cannot be read as written: the same file with the
    // fields it could not read taken out, so that the problems of the rest
    // (a service that is not there, a rate below zero) are said with them.
    let mut read_without = None;
    let spec = parse_spec(&base)
        .map_err(|ps| {
            read_without = without_fields(&base, &ps);
            problems.extend(ps)
        })
        .ok();
    // Each timeline step becomes a checked model held in memory: their number
    // is bounded before any is built.
    // Each variant starts from the file's base (not yet `--set`) without the
    // variants: copying them all into each would make loading quadratic in
    // their number.
    let template = variant_template(&written_base);
    drop(written_base);
    let steps = timeline_steps_in_all(&base, &template, cli);
    let step_bytes = model_bytes_a_step_checks(&base);
    if steps > 0 && steps.saturating_mul(step_bytes) > MAX_TIMELINE_CHECKED_BYTES {
        let most = (MAX_TIMELINE_CHECKED_BYTES / step_bytes).min(MAX_TIMELINE_STEPS);
        problems.push(Problem::new(
            "timeline",
            format!(
                "too many timeline steps for a model this size: at least {steps}, each a whole \
                 model of {step_bytes} bytes of JSON to check, at most {MAX_TIMELINE_CHECKED_BYTES} \
                 bytes in all, so at most {most} steps (a step change is one, a ramp one per \
                 second of `over_s`, counted in the base and in every variant): shorten the \
                 ramps, merge entries, give a rate that changes often as a `trace` arrival, or \
                 explore the variants with a sweep file"
            ),
        ));
        return Err(problems.into());
    }
    if steps > MAX_TIMELINE_STEPS {
        problems.push(Problem::new(
            "timeline",
            format!(
                "too many timeline steps: at least {steps}, at most {MAX_TIMELINE_STEPS} (a step \
                 change is one, a ramp one per second of `over_s`, counted in the base and in \
                 every variant; each is a checked model held in memory): shorten the ramps, \
                 merge entries, give a rate that changes often as a `trace` arrival, or explore \
                 the variants with a sweep file"
            ),
        ));
        return Err(problems.into());
    }
    let copies = workloads_with_copies(&base);
    if steps.saturating_mul(copies) > MAX_TIMELINE_WORKLOAD_STEPS {
        problems.push(Problem::new(
            "timeline",
            format!(
                "too many timeline steps for this many workloads: at least {steps} steps of \
                 {copies} workloads (copies included), each step a model that holds every \
                 workload, at most {MAX_TIMELINE_WORKLOAD_STEPS} workloads in all the steps, \
                 so at most {} steps: shorten the ramps, merge entries, lower the workloads' \
                 `count`, or explore the variants with a sweep file",
                MAX_TIMELINE_WORKLOAD_STEPS / copies.max(1)
            ),
        ));
        return Err(problems.into());
    }
    let base_variant = spec.as_ref().and_then(|spec| {
        build_variant(&base, spec, "base", "")
            .map_err(|ps| problems.extend(ps))
            .ok()
    });
    if let Some((doc, taken_out)) = &read_without {
        let rest = parse_spec(doc).and_then(|spec| build_variant(doc, &spec, "base", ""));
        if let Err(ps) = rest {
            // A problem of what was taken out, or of the object it was
            // taken from (a field it needs), is one already said.
            let about_taken_out = |p: &Problem| {
                taken_out.iter().any(|t| {
                    p.path == *t
                        || p.path.starts_with(&format!("{t}."))
                        || p.path.starts_with(&format!("{t}["))
                        || t.starts_with(&format!("{}.", p.path))
                })
            };
            let said: HashSet<Problem> = problems.iter().cloned().collect();
            problems.extend(
                ps.into_iter()
                    .filter(|p| !about_taken_out(p) && !said.contains(p)),
            );
        }
    }
    let written = match &spec {
        Some(spec) => spec.variants.len(),
        None => base
            .get("variants")
            .and_then(Value::as_array)
            .map_or(0, Vec::len),
    };
    if written > MAX_VARIANTS {
        problems.push(Problem::new(
            "variants",
            format!(
                "at most {MAX_VARIANTS} variants, got {written}: explore more points with a sweep file"
            ),
        ));
        return Err(problems.into());
    }
    // The variants as written: where the file could not be read, each one that
    // can be (the others have their problems already), so that its overrides
    // are checked all the same.
    let variant_specs: Vec<(usize, spec::VariantSpec)> = match &spec {
        Some(spec) => spec.variants.iter().cloned().enumerate().collect(),
        None => base
            .get("variants")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .filter_map(|(i, v)| strict::from_value(v).ok().map(|v| (i, v)))
            .collect(),
    };
    if spec.is_none() {
        problems.extend(timeline_path_problems(&base));
    }
    // The base's problems show again in every variant: each is reported once.
    let seen: HashSet<Problem> = problems.iter().cloned().collect();
    let mut variants = Vec::new();
    if variant_specs.is_empty() {
        variants.extend(base_variant);
    } else {
        // Checked, its problems noted: its timeline's models are not held
        // beside the variants'.
        drop(base_variant);
    }
    for (i, v) in &variant_specs {
        let mut doc = template.clone();
        let here = format!("variants[{i}] ({:?})", v.name);
        let (set_problems, applied) = apply_sets(&mut doc, variant_sets(*i, &v.set, cli(&here)));
        problems.extend(set_problems);
        // A `--set` was noted once, above: only the variant's own here.
        selections.extend(
            several_places(&applied)
                .filter(|a| a.own)
                .map(Applied::places),
        );
        match parse_spec(&doc).and_then(|s| build_variant(&doc, &s, &v.name, &v.description)) {
            Ok(variant) => variants.push(variant),
            Err(ps) => problems.extend(locate(ps, &applied, &doc, &here, &seen)),
        }
    }
    let Some(spec) = spec.filter(|_| problems.is_empty()) else {
        return Err(problems.into());
    };
    let seed = seed.unwrap_or(spec.seed);
    for v in &mut variants {
        v.model.seed = seed;
        for c in v
            .changes
            .iter_mut()
            .chain(v.without_trigger.iter_mut().flatten())
        {
            c.model.seed = seed;
        }
    }
    Ok(LoadedModel {
        name: spec.name,
        description: spec.description,
        seed,
        variants,
        selections,
    })
}

/// Checks one variant's document and resolves its timeline: each change is the
/// document with every earlier change applied, checked like any model. Every
/// change is checked, also after a problem (a problem the document had before
/// the change, the model's own or an earlier change's, is not reported again).
fn build_variant(
    doc: &Value,
    spec: &ModelSpec,
    name: &str,
    description: &str,
) -> Result<Variant, Vec<Problem>> {
    let model = validate(spec);
    let problems = model.as_ref().err().cloned().unwrap_or_default();
    let resolved = resolve_timeline(doc, spec, model.as_ref().ok(), problems, |_| true);
    // The same timeline without its trigger, for the recovery analysis to
    // tell a storm from load the system could not carry without it.
    let has_trigger = |m: &Model| {
        let has = |role| spec.timeline.iter().any(|e| e.role == Some(role));
        m.metastability.is_some()
            && has(TimelineRole::TriggerStart)
            && has(TimelineRole::TriggerEnd)
    };
    let load_may_change = model.as_ref().is_ok_and(|m| load_may_change(spec, m));
    let twin_wanted = model.as_ref().is_ok_and(has_trigger);
    let without_trigger = (resolved.problems.is_empty() && twin_wanted).then(|| {
        resolve_timeline(doc, spec, model.as_ref().ok(), Vec::new(), |entry| {
            !matches!(
                entry.role,
                Some(TimelineRole::TriggerStart | TimelineRole::TriggerEnd)
            )
        })
        .changes
    });
    let ResolvedTimeline {
        changes,
        problems,
        undone_by_ramps,
        ..
    } = resolved;
    match model {
        Ok(model) if problems.is_empty() => Ok(Variant {
            name: name.to_string(),
            description: description.to_string(),
            model,
            changes,
            without_trigger,
            load_may_change,
            undone_by_ramps,
        }),
        _ => Err(problems),
    }
}

/// Resolves `spec`'s timeline entries that `keep` keeps against `doc` (see
/// `build_variant`), `problems` being those the document already has.
fn resolve_timeline(
    doc: &Value,
    spec: &ModelSpec,
    model: Option<&Model>,
    problems: Vec<Problem>,
    keep: impl Fn(&spec::TimelineEntrySpec) -> bool,
) -> ResolvedTimeline {
    // The problems of the document as each change finds it, as found.
    let seen: HashSet<Problem> = problems.iter().cloned().collect();
    // The model each change leaves, without the timeline and the variants:
    // reading and checking those again at each of N changes would be
    // quadratic (their problems are the base's, reported with it).
    let mut current = doc.clone();
    if let Some(o) = current.as_object_mut() {
        o.remove("timeline");
        o.remove("variants");
    }
    let mut resolved = ResolvedTimeline {
        current,
        changes: Vec::new(),
        problems,
        seen,
        failed: vec![false; spec.timeline.len()],
        started: vec![usize::MAX; spec.timeline.len()],
        last_set: BTreeMap::new(),
        undone_by_ramps: Vec::new(),
        undone_found: BTreeSet::new(),
    };
    // Every step of every entry, in time order: a ramp's steps interleave
    // with the entries that start while it moves, and each change is the
    // model with every step before it applied. An entry's steps are made
    // when it starts, from the values then (a ramp moves from there); a
    // step due at or before that instant, made earlier, applies first.
    let mut order: Vec<usize> = (0..spec.timeline.len())
        .filter(|&i| keep(&spec.timeline[i]))
        .collect();
    order.sort_by(|&a, &b| spec.timeline[a].at_s.total_cmp(&spec.timeline[b].at_s));
    let mut pending = BinaryHeap::new();
    let mut made = 0;
    for (start, i) in order.into_iter().enumerate() {
        let entry = &spec.timeline[i];
        resolved.started[i] = start;
        while pending
            .peek()
            .is_some_and(|Reverse(step): &Reverse<PendingStep>| step.at_s <= entry.at_s)
        {
            if let Some(Reverse(step)) = pending.pop() {
                resolved.apply(step, spec, model);
            }
        }
        match timeline_steps(&resolved.current, entry, i) {
            Ok(steps) => {
                for (at_s, sets) in steps {
                    pending.push(Reverse(PendingStep {
                        at_s,
                        made,
                        entry: i,
                        sets,
                    }));
                    made += 1;
                }
            }
            Err(p) => resolved.problems.push(p),
        }
    }
    while let Some(Reverse(step)) = pending.pop() {
        resolved.apply(step, spec, model);
    }
    resolved
}

/// Whether a variant's load or capacity may change after its trigger for
/// another reason before its recovery is judged ([`Variant::load_may_change`]):
/// a timeline entry with no role before the first intervention after the
/// trigger's end (the search for a recovery ends there), a load shape, a
/// closed loop, or a workload that stops before the horizon. Arrivals all
/// at once are over before any baseline.
fn load_may_change(spec: &ModelSpec, model: &Model) -> bool {
    let trigger_end = (spec.timeline.iter())
        .filter(|e| e.role == Some(TimelineRole::TriggerEnd))
        .map(|e| e.at_s)
        .fold(f64::INFINITY, f64::min);
    let first_intervention = (spec.timeline.iter())
        .filter(|e| e.role == Some(TimelineRole::Intervention) && e.at_s >= trigger_end)
        .map(|e| e.at_s)
        .fold(f64::INFINITY, f64::min);
    let horizon = model.horizon.map_or(f64::INFINITY, |h| h.as_ms() / 1000.0);
    spec.timeline
        .iter()
        .any(|e| e.role.is_none() && e.at_s < first_intervention)
        || model.workloads.iter().any(|w| {
            matches!(w.arrival, Arrival::Shaped(_) | Arrival::ClosedLoop { .. })
                || w.max_requests.is_some()
                || w.duration.is_some_and(|d| d.as_ms() / 1000.0 < horizon)
        })
}

/// A step of a timeline entry (a plain change, or one second of a ramp),
/// made when its entry starts and applied at its instant.
struct PendingStep {
    at_s: f64,
    /// Its place among steps due at the same instant: the order made.
    made: usize,
    /// The entry's index in the timeline as written.
    entry: usize,
    /// (The path as written in the entry, the path to set, the value.)
    sets: Vec<(String, String, Value)>,
}

impl PartialEq for PendingStep {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PendingStep {}

impl PartialOrd for PendingStep {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for PendingStep {
    /// By instant, then in the order made.
    fn cmp(&self, other: &Self) -> Ordering {
        self.at_s
            .total_cmp(&other.at_s)
            .then(self.made.cmp(&other.made))
    }
}

/// A variant's timeline as it is resolved into changes, step by step in
/// time order (see `build_variant`).
struct ResolvedTimeline {
    /// The document with every step so far applied.
    current: Value,
    /// The changes so far, in time order.
    changes: Vec<Change>,
    problems: Vec<Problem>,
    /// The problems of the document as each change found it.
    seen: HashSet<Problem>,
    /// The entries a step of which had a problem: their later steps are
    /// not applied.
    failed: Vec<bool>,
    /// Each entry's place in the order the entries start (ties in file
    /// order): an entry that starts after a ramp did starts while it moves,
    /// if a step of the ramp applies after it.
    started: Vec<usize>,
    /// Each JSON path a step has set (`services[0].workers`), with the entry
    /// that set it last and the path as that entry writes it.
    last_set: BTreeMap<String, (usize, String)>,
    /// Sets undone by a ramp, each once (by the first ramp to undo it), in
    /// the order found.
    undone_by_ramps: Vec<UndoneByRamp>,
    /// Those found, each by the first ramp to undo it: (the entry, its
    /// path as written).
    undone_found: BTreeSet<(usize, String)>,
}

impl ResolvedTimeline {
    /// Applies `step` to the document and checks the model it makes, a
    /// change of its own; `model`: the variant's model at time zero, if it
    /// is valid.
    fn apply(&mut self, step: PendingStep, spec: &ModelSpec, model: Option<&Model>) {
        let i = step.entry;
        if self.failed[i] {
            return;
        }
        let entry = &spec.timeline[i];
        let here = format!("timeline[{i}] ({:?})", entry.name);
        let (set_problems, applied) = apply_sets(
            &mut self.current,
            step.sets.iter().map(|(written, path, v)| {
                (
                    format!("timeline[{i}].set[{written:?}]"),
                    path.as_str(),
                    v,
                    true,
                )
            }),
        );
        if !set_problems.is_empty() {
            self.problems.extend(set_problems);
            self.failed[i] = true;
            return;
        }
        match parse_spec(&self.current).and_then(|s| validate::validate_change(&s)) {
            Ok(mut changed) => {
                if let Some(before) = self.changes.last().map(|c| &c.model).or(model) {
                    changed.share_unchanged_parts(before);
                }
                if let Some(model) = model {
                    if let Err(message) = validate::same_shape(model, &changed) {
                        self.problems.push(Problem::new(here, message));
                        self.failed[i] = true;
                        return;
                    }
                }
                self.note_sets(&step, &applied, spec);
                self.changes.push(Change {
                    at: SimTime::ZERO + SimDuration::from_ms(step.at_s * 1000.0),
                    name: entry.name.clone(),
                    role: entry.role,
                    model: changed,
                });
            }
            Err(ps) => {
                let located = locate(ps.clone(), &applied, &self.current, &here, &self.seen);
                self.problems.extend(located);
                self.seen.extend(ps);
                self.failed[i] = true;
            }
        }
    }

    /// Records what `step` (applied, as `applied`) set, and, for a ramp's
    /// step, each value it sets again that a step change started after the
    /// ramp had set: at, inside or around the same path.
    fn note_sets(&mut self, step: &PendingStep, applied: &[Applied], spec: &ModelSpec) {
        let i = step.entry;
        let entry = &spec.timeline[i];
        let is_ramp = entry.over_s.is_some_and(|o| o > 0.0);
        for (applied, (written, _, _)) in applied.iter().zip(&step.sets) {
            for path in &applied.paths {
                if is_ramp {
                    for (j, their_path) in overlapping(&self.last_set, path) {
                        // Another ramp is no victim: at each instant the two
                        // share, the one started later applies last, and
                        // its value stands.
                        let j_is_ramp = spec.timeline[*j].over_s.is_some_and(|o| o > 0.0);
                        if *j == i || j_is_ramp || self.started[*j] < self.started[i] {
                            continue;
                        }
                        let undone = UndoneByRamp {
                            entry: spec.timeline[*j].name.clone(),
                            path: their_path.clone(),
                            ramp: entry.name.clone(),
                            undone_at_s: step.at_s,
                            ramp_ends_s: entry.at_s + entry.over_s.unwrap_or(0.0),
                        };
                        if self.undone_found.insert((*j, their_path.clone())) {
                            self.undone_by_ramps.push(undone);
                        }
                    }
                }
                // What was set inside this path is replaced with it.
                let inside: Vec<String> = self
                    .last_set
                    .range::<str, _>((
                        std::ops::Bound::Excluded(path.as_str()),
                        std::ops::Bound::Unbounded,
                    ))
                    .map(|(set, _)| set)
                    .take_while(|set| set.starts_with(path.as_str()))
                    .filter(|set| set[path.len()..].starts_with(['.', '[']))
                    .cloned()
                    .collect();
                for set in inside {
                    self.last_set.remove(&set);
                }
                self.last_set.insert(path.clone(), (i, written.clone()));
            }
        }
    }
}

/// The entries of `last_set` whose path touches a value `path` sets too:
/// the path itself, those it is inside (`work` for `work.mean_ms`), and
/// those inside it.
fn overlapping<'a, T>(
    last_set: &'a BTreeMap<String, T>,
    path: &'a str,
) -> impl Iterator<Item = &'a T> + 'a {
    let boundaries = path
        .char_indices()
        .filter(|&(_, c)| c == '.' || c == '[')
        .map(|(k, _)| k);
    let outside = boundaries.filter_map(|k| last_set.get(&path[..k]));
    let inside = last_set
        .range::<str, _>((std::ops::Bound::Included(path), std::ops::Bound::Unbounded))
        .take_while(move |(set, _)| set.starts_with(path))
        .filter(move |(set, _)| {
            let rest = &set[path.len()..];
            rest.is_empty() || rest.starts_with(['.', '['])
        })
        .map(|(_, t)| t);
    outside.chain(inside)
}

/// The timeline's paths that name nothing, for a model whose types could not
/// be read (its entries are not checked as models): each entry's `set` as
/// written, applied in file order to the base.
fn timeline_path_problems(base: &Value) -> Vec<Problem> {
    let mut doc = base.clone();
    let entries = base.get("timeline").and_then(Value::as_array);
    let mut problems = Vec::new();
    for (i, entry) in entries.into_iter().flatten().enumerate() {
        let Some(set) = entry.get("set").and_then(Value::as_object) else {
            continue;
        };
        let sets = set
            .iter()
            .map(|(p, v)| (format!("timeline[{i}].set[{p:?}]"), p.as_str(), v, true));
        problems.extend(apply_sets(&mut doc, sets).0);
    }
    problems
}

/// Longest ramp (`over_s`), in seconds, i.e. steps.
pub const MAX_RAMP_S: f64 = 10_000.0;

/// Most timeline steps a model may resolve into, in its base and all its
/// variants (a step change is one step, a ramp one per second): each is a
/// checked model held in memory, 2 to 6 KB for a small model whose steps
/// share what they leave alone. At the limit (50 ramps of 10,000 s on a
/// two-service model), `check` took 19.8 s and 0.96 GB in a release build.
pub const MAX_TIMELINE_STEPS: usize = 500_000;

/// Most bytes of model JSON the timeline's steps may take to check, all
/// steps of the base and the variants together: each step is checked as a
/// whole model, in time proportional to its size (a model of 101 services,
/// 32 KB, took 4.5 ms a step, so 50,000 steps 227 s; the two-service model
/// at [`MAX_TIMELINE_STEPS`], 508 bytes, 19.8 to 48 s). The limit is that
/// worst case's, whatever the model's size.
pub const MAX_TIMELINE_CHECKED_BYTES: usize = 256_000_000;

/// Most workloads (copies included) in all the timeline steps together:
/// each step is a model that holds a pointer to each of its workloads (the
/// copies of one share it: see [`Model::workloads`]) and checks each
/// copy's name. At the limit, the pointers alone take 400 MB; a
/// 10,000 s ramp over 1,000 copies is a fifth of it.
pub const MAX_TIMELINE_WORKLOAD_STEPS: usize = 50_000_000;

/// The workloads of a model document once copied (`count`), as written in
/// it (a count out of range counts as the most allowed: it is refused).
fn workloads_with_copies(doc: &Value) -> usize {
    let workloads = doc.get("workloads").and_then(Value::as_array);
    workloads
        .into_iter()
        .flatten()
        .map(|w| match w.get("count").and_then(Value::as_u64) {
            Some(n) => n.clamp(1, u64::from(validate::MAX_COPIES)) as usize,
            None => 1,
        })
        .sum()
}

/// The bytes of JSON a timeline step checks: the model without its
/// timeline and variants, compact.
fn model_bytes_a_step_checks(doc: &Value) -> usize {
    let Some(fields) = doc.as_object() else {
        return 1;
    };
    let model: Map<String, Value> = fields
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "timeline" | "variants"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    serde_json::to_vec(&model).map_or(1, |bytes| bytes.len().max(1))
}

/// The file's base (`written`, not yet `--set`) without its variants: each
/// variant's document starts from it ([`variant_sets`]).
fn variant_template(written: &Value) -> Value {
    let mut template = written.clone();
    if let Some(o) = template.as_object_mut() {
        o.remove("variants");
    }
    template
}

/// The sets that make variant `i`'s document of the [`variant_template`]:
/// its `own` set, then the command line's (`cli`), less those that shape the
/// variants themselves.
fn variant_sets<'a>(
    i: usize,
    own: &'a Map<String, Value>,
    cli: impl Iterator<Item = (String, &'a str, &'a Value, bool)>,
) -> impl Iterator<Item = (String, &'a str, &'a Value, bool)> {
    let shapes_variants = |p: &str| p == "variants" || p.starts_with("variants[");
    own.iter()
        .map(move |(p, x)| (format!("variants[{i}].set[{p:?}]"), p.as_str(), x, true))
        .chain(cli.filter(move |(_, p, _, _)| !shapes_variants(p)))
}

/// The timeline steps of `base` and of each of its variants, counted in
/// their documents before any is checked. A variant's timeline is the base's,
/// unless its own `set` changes the timeline: then it is counted in its own
/// document, made as loading makes it (the [`variant_template`] and
/// [`variant_sets`], with the command line's sets, `cli`).
fn timeline_steps_in_all<'a, Cli>(
    base: &'a Value,
    template: &Value,
    cli: impl Fn(&str) -> Cli,
) -> usize
where
    Cli: Iterator<Item = (String, &'a str, &'a Value, bool)>,
{
    let in_base = timeline_steps_in(base);
    let variants = base.get("variants").and_then(Value::as_array);
    // Past the limits, the count stops: the model is refused either way.
    let in_variants = variants
        .into_iter()
        .flatten()
        .take(MAX_VARIANTS)
        .enumerate()
        .map(|(i, variant)| {
            let Some(own) = variant.get("set").and_then(Value::as_object) else {
                return in_base;
            };
            if !own.keys().any(|path| path.starts_with("timeline")) {
                return in_base;
            }
            let mut doc = template.clone();
            apply_sets(&mut doc, variant_sets(i, own, cli("")));
            timeline_steps_in(&doc)
        });
    let mut steps = in_base;
    for in_variant in in_variants {
        steps = steps.saturating_add(in_variant);
        if steps > MAX_TIMELINE_STEPS {
            break;
        }
    }
    steps
}

/// The steps a document's timeline resolves into ([`timeline_steps`]): one
/// per step change, one per second of a ramp (an entry that is not one, or a
/// ramp longer than allowed, counts as the problem it will be reported as:
/// one step, or the longest ramp).
fn timeline_steps_in(doc: &Value) -> usize {
    let entries = doc.get("timeline").and_then(Value::as_array);
    let steps_of = |entry: &Value| match entry.get("over_s").and_then(Value::as_f64) {
        Some(over) if over > 0.0 => ramp_steps(over.min(MAX_RAMP_S)) as usize,
        _ => 1,
    };
    entries.into_iter().flatten().map(steps_of).sum()
}

/// The steps of a ramp `over` seconds long (at most [`MAX_RAMP_S`]): one a
/// second, at least one.
fn ramp_steps(over: f64) -> u32 {
    over.round().max(1.0) as u32
}

/// A ramp's step value: `value`, or for a whole-number field (`workers`,
/// `instances`, a queue's capacity) the nearest whole number, written as
/// one: each step of 2 → 10 workers over 3 s is 5, 7, then 10 (not the
/// 4.67 no whole-number field takes).
fn ramp_value(value: f64, whole: bool) -> Value {
    match whole {
        false => Value::from(value),
        true if value.round() >= 0.0 => Value::from(value.round() as u64),
        true => Value::from(value.round() as i64),
    }
}

/// Most variants a model may have: each is a whole checked model in memory; a
/// sweep explores more.
pub const MAX_VARIANTS: usize = 10_000;

/// The step changes of timeline entry `i`: one step for a plain change; for a
/// ramp, one per second (at least one) moving each numeric value linearly from
/// its value before the ramp to its target, reaching it at `at_s + over_s`.
/// Each set is (the path as written in the entry, the path to set, the value).
#[allow(clippy::type_complexity)]
fn timeline_steps(
    doc: &Value,
    entry: &spec::TimelineEntrySpec,
    i: usize,
) -> Result<Vec<(f64, Vec<(String, String, Value)>)>, Problem> {
    let sets: Vec<(String, String, Value)> = entry
        .set
        .iter()
        .map(|(p, v)| (p.clone(), p.clone(), v.clone()))
        .collect();
    let Some(over) = entry.over_s.filter(|o| *o > 0.0) else {
        return Ok(vec![(entry.at_s, sets)]);
    };
    // One checked model per step: a longer ramp would hold memory without bound.
    if over > MAX_RAMP_S {
        return Err(Problem::new(
            format!("timeline[{i}].over_s"),
            format!("a ramp moves in steps of 1 s: at most {MAX_RAMP_S} s, got {over}"),
        ));
    }
    // Resolve `[*]` so each element ramps from its own value.
    let at = |path: &str| format!("timeline[{i}].set[{path:?}]");
    let mut ramps = Vec::new();
    for (path, _, target) in &sets {
        let parsed = ParamPath::parse(path).map_err(|m| Problem::new(at(path), m))?;
        for concrete in parsed.expand(doc).map_err(|m| Problem::new(at(path), m))? {
            let from = concrete.get(doc).and_then(Value::as_f64);
            let (Some(from), Some(to)) = (from, target.as_f64()) else {
                return Err(Problem::new(
                    at(path),
                    "a ramp (`over_s`) needs numbers: the current value and the target",
                ));
            };
            let whole = (concrete.index_paths(doc).first())
                .is_some_and(|p| strict::is_whole_number_at::<ModelSpec>(doc, p));
            ramps.push((path, concrete, from, to, whole));
        }
    }
    let n = ramp_steps(over);
    Ok((1..=n)
        .map(|j| {
            let f = f64::from(j) / f64::from(n);
            let at = entry.at_s + over * f;
            let step = ramps
                .iter()
                .map(|(written, p, from, to, whole)| {
                    (
                        written.to_string(),
                        p.to_string_concrete(),
                        ramp_value(from + (to - from) * f, *whole),
                    )
                })
                .collect();
            (at, step)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn count(doc: &Value) -> usize {
        timeline_steps_in_all(doc, &variant_template(doc), |_| std::iter::empty())
    }

    #[test]
    fn a_step_change_is_one_step_and_a_ramp_one_a_second() {
        let doc = json!({"timeline": [
            {"name": "a", "at_s": 1, "set": {}},
            {"name": "b", "at_s": 1, "over_s": 0.2, "set": {}},
            {"name": "c", "at_s": 1, "over_s": 99.6, "set": {}},
            {"name": "d", "at_s": 1, "over_s": 1e308, "set": {}},
            {"name": "e", "at_s": 1, "over_s": "ten", "set": {}},
        ]});
        assert_eq!(count(&doc), 1 + 1 + 100 + MAX_RAMP_S as usize + 1);
    }

    #[test]
    fn each_variant_counts_the_base_timeline_or_its_own() {
        let timeline = json!([{"name": "r", "at_s": 1, "over_s": 50, "set": {}}]);
        let doc = json!({"timeline": timeline, "variants": [
            {"name": "same"},
            {"name": "other", "set": {"services[0].workers": 3}},
            {"name": "shorter", "set": {"timeline[r].over_s": 10}},
            {"name": "more", "set": {"timeline[+]": {"name": "s", "at_s": 2, "set": {}}}},
        ]});
        assert_eq!(count(&doc), 50 + 50 + 50 + 10 + 51);
    }

    /// The count is made on the documents loading builds: over the variants,
    /// it is the number of steps their loaded timelines hold, with the
    /// command line's sets applied after each variant's own.
    #[test]
    fn the_count_is_the_steps_loading_builds() {
        let doc = json!({
        "name": "m", "horizon_s": 100,
        "workloads": [{"name": "w", "target": "a", "requests": 1,
                       "arrival": {"kind": "poisson", "rate_per_s": 1}}],
        "services": [{"name": "a", "workers": 2, "steps": []}],
        "timeline": [{"name": "r", "at_s": 1, "over_s": 20, "set": {"workloads[w].arrival.rate_per_s": 8}}],
        "variants": [
            {"name": "same"},
            {"name": "shorter", "set": {"timeline[r].over_s": 5}},
            {"name": "more", "set": {"timeline[+]": {"name": "s", "at_s": 50, "set": {"workloads[w].arrival.rate_per_s": 3}}}},
        ]});
        let cli = vec![(
            "timeline[+]".to_string(),
            json!({"name": "t", "at_s": 60, "over_s": 3, "set": {"workloads[w].arrival.rate_per_s": 4}}),
        )];
        let loaded = load_model_in(&doc.to_string(), None, &cli, None).unwrap();
        let built: usize = loaded.variants.iter().map(|v| v.changes.len()).sum();
        let mut base = doc.clone();
        apply_sets(
            &mut base,
            std::iter::once((String::new(), "timeline[+]", &cli[0].1, false)),
        );
        let counted = timeline_steps_in_all(&base, &variant_template(&doc), |_| {
            std::iter::once((String::new(), "timeline[+]", &cli[0].1, false))
        });
        assert_eq!(
            (built, counted - timeline_steps_in(&base)),
            (23 + 8 + 24, 23 + 8 + 24)
        );
    }

    #[test]
    fn the_command_line_applies_to_a_variant_that_changes_the_timeline() {
        let doc = json!({"timeline": [{"name": "r", "at_s": 1, "set": {}}], "variants": [
            {"name": "ramped", "set": {"timeline[r].over_s": 10}},
        ]});
        let extra = json!({"name": "s", "at_s": 2, "over_s": 5, "set": {}});
        let steps = timeline_steps_in_all(&doc, &variant_template(&doc), |_| {
            std::iter::once((String::new(), "timeline[+]", &extra, false))
        });
        // The base as given (the command line applied already) and the
        // variant: its own set, then the command line's.
        assert_eq!(steps, 1 + 10 + 5);
    }
}
