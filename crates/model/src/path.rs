//! Parameter paths: the one way variants, `--set`, timelines and sweeps name a
//! number (or a whole policy) in a model.
//!
//! A path is dot-separated object keys, where a list is indexed by `[name]` (the
//! element whose `name` is that; for handler steps, the step that calls that
//! service) or `[3]` (by position):
//!
//! ```text
//! services[A].steps[B].timeout_ms
//! workloads[users].deadline_ms
//! services[gateway].steps[0].retry
//! ```
//!
//! Overrides apply to the JSON document before it is parsed, so any field of
//! the format can be overridden, and the result is checked like any model.

use serde_json::Value;
use std::fmt;

/// One step of a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    /// An object key.
    Key(String),
    /// A list element by position.
    Index(usize),
    /// A list element by its `name` (or, for steps, its `call`).
    Named(String),
    /// Every element of a list: `services[*].workers`.
    All,
    /// A new element at the end of a list (last segment only): `timeline[+]`.
    Append,
}

/// A parsed parameter path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamPath {
    text: String,
    segments: Vec<Segment>,
}

impl fmt::Display for ParamPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl ParamPath {
    /// Parses `a.b[x].c[0]`.
    pub fn parse(text: &str) -> Result<ParamPath, String> {
        let mut segments = Vec::new();
        let mut rest = text;
        if rest.is_empty() {
            return Err("empty parameter path".into());
        }
        loop {
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            let key = &rest[..end];
            if key.is_empty() {
                return Err(format!("parameter path {text:?}: empty key"));
            }
            segments.push(Segment::Key(key.to_string()));
            rest = &rest[end..];
            while let Some(after) = rest.strip_prefix('[') {
                let close = after
                    .find(']')
                    .ok_or_else(|| format!("parameter path {text:?}: missing ']'"))?;
                let selector = &after[..close];
                if selector.is_empty() {
                    return Err(format!("parameter path {text:?}: empty []"));
                }
                segments.push(match selector.parse::<usize>() {
                    Ok(i) => Segment::Index(i),
                    Err(_) if selector == "*" => Segment::All,
                    Err(_) if selector == "+" => Segment::Append,
                    Err(_) => Segment::Named(selector.to_string()),
                });
                rest = &after[close + 1..];
            }
            if rest.is_empty() {
                break;
            }
            rest = rest.strip_prefix('.').ok_or_else(|| {
                format!("parameter path {text:?}: expected '.' or '[' before {rest:?}")
            })?;
        }
        if segments[..segments.len() - 1].contains(&Segment::Append) {
            return Err(format!("parameter path {text:?}: [+] can only end a path"));
        }
        Ok(ParamPath {
            text: text.to_string(),
            segments,
        })
    }

    /// The path as text with every selector as written, except that a resolved
    /// `[*]` shows its index: parses back to the same concrete path.
    pub fn to_string_concrete(&self) -> String {
        let mut out = String::new();
        for s in &self.segments {
            match s {
                Segment::Key(k) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(k);
                }
                Segment::Index(i) => out.push_str(&format!("[{i}]")),
                Segment::Named(n) => out.push_str(&format!("[{n}]")),
                Segment::All => out.push_str("[*]"),
                Segment::Append => out.push_str("[+]"),
            }
        }
        out
    }

    /// The segments.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// The concrete paths this one names in `doc`, every selector resolved to
    /// an index: `[*]` to every element of its list, `[name]` to the element
    /// of that name (a path without selectors names itself).
    ///
    /// A handler's steps are selected by what they call. `steps[name]` is
    /// every step that calls `name`, and every branch of a parallel step that
    /// does (`steps[2].parallel.branches[0]`); `steps[*]` is every call step,
    /// parallel steps' branches included, unless the field after it is one
    /// only work takes (`work`, `on_cancel`, `error`, `drawn_at`: the work
    /// steps), `parallel` (the parallel steps) or `only_classes` (every
    /// step). So `services[*].steps[*].retry` reaches every call edge of a
    /// model and nothing else.
    ///
    /// With `[*]`, an element without the rest of the path is skipped ("every
    /// element that has it"); nothing selected at all is an error, saying why.
    pub fn expand(&self, doc: &Value) -> Result<Vec<ParamPath>, String> {
        if !self.segments.iter().any(Segment::is_selector) {
            return Ok(vec![self.clone()]);
        }
        let lenient = self.segments.contains(&Segment::All);
        let mut found = Expansion {
            out: Vec::new(),
            first_miss: None,
        };
        self.resolve(Some(doc), 0, Vec::new(), lenient, &mut found)?;
        if found.out.is_empty() {
            return Err(found
                .first_miss
                .unwrap_or_else(|| format!("{}: [*] matched nothing", self.text)));
        }
        Ok(found.out)
    }

    /// Resolves the selectors of `segments[i..]` below `here`, reached by the
    /// concrete `prefix`.
    fn resolve(
        &self,
        here: Option<&Value>,
        i: usize,
        mut prefix: Vec<Segment>,
        lenient: bool,
        found: &mut Expansion,
    ) -> Result<(), String> {
        let rest = &self.segments[i..];
        if !rest.iter().any(Segment::is_selector) {
            prefix.extend(rest.iter().cloned());
            found.out.push(ParamPath {
                text: self.text.clone(),
                segments: prefix,
            });
            return Ok(());
        }
        let mut miss = |message: String| {
            if lenient {
                found.first_miss.get_or_insert(message);
                Ok(())
            } else {
                Err(message)
            }
        };
        match &rest[0] {
            Segment::Key(key) => {
                let Some(next) = here.and_then(|h| h.get(key)) else {
                    return miss(format!("{}: no field {key:?}", self.text));
                };
                prefix.push(Segment::Key(key.clone()));
                self.resolve(Some(next), i + 1, prefix, lenient, found)
            }
            Segment::Index(index) => {
                let list = here.and_then(Value::as_array);
                let Some(next) = list.and_then(|l| l.get(*index)) else {
                    let len = list.map_or(0, Vec::len);
                    return miss(format!(
                        "{}: index {index} out of range (the list has {len})",
                        self.text
                    ));
                };
                prefix.push(Segment::Index(*index));
                self.resolve(Some(next), i + 1, prefix, lenient, found)
            }
            Segment::Append => unreachable!("[+] ends a path, which has no selector after it"),
            selector @ (Segment::All | Segment::Named(_)) => {
                let Some(list) = here.and_then(Value::as_array) else {
                    let shown = match selector {
                        Segment::Named(name) => format!("[{name}]"),
                        _ => "[*]".to_string(),
                    };
                    return miss(format!("{}: {shown} applied to a non-list", self.text));
                };
                let list_key = match i.checked_sub(1).map(|j| &self.segments[j]) {
                    Some(Segment::Key(k)) => k.as_str(),
                    _ => "",
                };
                let next_key = match rest.get(1) {
                    Some(Segment::Key(k)) => Some(k.as_str()),
                    _ => None,
                };
                let selected = select(list, list_key, selector, next_key);
                if selected.is_empty() {
                    return miss(match selector {
                        Segment::Named(name) => no_element_named(&self.text, name, list),
                        _ if list_key == "steps" => format!(
                            "{}: [*] over steps selects the steps that take the field after it, and there are none here",
                            self.text
                        ),
                        _ => format!("{}: [*] matched an empty list", self.text),
                    });
                }
                for (segments, element) in selected {
                    let mut concrete = prefix.clone();
                    concrete.extend(segments);
                    self.resolve(Some(element), i + 1, concrete, lenient, found)?;
                }
                Ok(())
            }
        }
    }

    /// Sets the value at this path (at every element a `[*]` names that has the
    /// rest of the path), creating the
    /// last key of an object if it is absent (so an optional field can be set).
    /// Every list element and every intermediate object must exist.
    pub fn set(&self, doc: &mut Value, value: Value) -> Result<(), String> {
        if self.segments.iter().any(Segment::is_selector) {
            let paths = self.expand(doc)?;
            if let [only] = &paths[..] {
                return only.set(doc, value);
            }
            // Several places (a `[*]`, or steps that call the same service):
            // every element that has it. `services[*].steps[db]` skips the
            // services that do not call `db`. None having it is an error.
            let mut first_error = None;
            let mut any = false;
            for path in paths {
                match path.set(doc, value.clone()) {
                    Ok(()) => any = true,
                    Err(e) => {
                        first_error.get_or_insert(e);
                    }
                }
            }
            return match (any, first_error) {
                (false, Some(e)) => Err(e),
                (false, None) => Err(format!("{}: [*] matched an empty list", self.text)),
                (true, _) => Ok(()),
            };
        }
        let mut here = doc;
        let last = self.segments.len() - 1;
        for (i, segment) in self.segments.iter().enumerate() {
            let is_last = i == last;
            here = match segment {
                Segment::Key(key) => {
                    let obj = here
                        .as_object_mut()
                        .ok_or_else(|| format!("{}: {key:?} is not inside an object", self.text))?;
                    if is_last {
                        obj.insert(key.clone(), value);
                        return Ok(());
                    }
                    // An absent optional object on the way is created empty (its
                    // other fields take their defaults); a list is never invented.
                    let next_is_key = matches!(self.segments.get(i + 1), Some(Segment::Key(_)));
                    if next_is_key && !obj.contains_key(key) {
                        obj.insert(key.clone(), Value::Object(Default::default()));
                    }
                    obj.get_mut(key)
                        .ok_or_else(|| format!("{}: no field {key:?}", self.text))?
                }
                Segment::Index(index) => {
                    let list = here
                        .as_array_mut()
                        .ok_or_else(|| format!("{}: [{index}] applied to a non-list", self.text))?;
                    let len = list.len();
                    let slot = list.get_mut(*index).ok_or_else(|| {
                        format!(
                            "{}: index {index} out of range (the list has {len})",
                            self.text
                        )
                    })?;
                    if is_last {
                        *slot = value;
                        return Ok(());
                    }
                    slot
                }
                Segment::All => unreachable!("expanded above"),
                Segment::Append => {
                    let list = here
                        .as_array_mut()
                        .ok_or_else(|| format!("{}: [+] applied to a non-list", self.text))?;
                    list.push(value);
                    return Ok(());
                }
                Segment::Named(name) => {
                    let list = here
                        .as_array_mut()
                        .ok_or_else(|| format!("{}: [{name}] applied to a non-list", self.text))?;
                    let Some(index) = list.iter().position(|e| element_is_named(e, name)) else {
                        return Err(no_element_named(&self.text, name, list));
                    };
                    let slot = &mut list[index];
                    if is_last {
                        *slot = value;
                        return Ok(());
                    }
                    slot
                }
            };
        }
        unreachable!("the last segment returns")
    }

    /// The JSON paths (`services[0].steps[1].timeout_ms`: keys and indices, as
    /// problems name them) of what [`set`](Self::set) would set in `doc` (as it
    /// is before the set): one per element a `[*]` names; `[+]` is the index the
    /// new element takes. Empty where the path names nothing.
    pub fn index_paths(&self, doc: &Value) -> Vec<String> {
        let Ok(concrete) = self.expand(doc) else {
            return Vec::new();
        };
        concrete.iter().filter_map(|p| p.index_path(doc)).collect()
    }

    /// [`index_paths`](Self::index_paths) of a path without `[*]`.
    fn index_path(&self, doc: &Value) -> Option<String> {
        let mut out = String::new();
        let mut here = Some(doc);
        for segment in &self.segments {
            match segment {
                Segment::Key(key) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(key);
                    here = here.and_then(|h| h.get(key));
                }
                Segment::Index(i) => {
                    out.push_str(&format!("[{i}]"));
                    here = here.and_then(|h| h.get(*i));
                }
                Segment::Named(name) => {
                    let list = here?.as_array()?;
                    let i = list.iter().position(|e| element_is_named(e, name))?;
                    out.push_str(&format!("[{i}]"));
                    here = list.get(i);
                }
                Segment::Append => {
                    out.push_str(&format!("[{}]", here?.as_array()?.len()));
                    here = None;
                }
                Segment::All => return None,
            }
        }
        Some(out)
    }

    /// The value at this path, if present.
    pub fn get<'a>(&self, doc: &'a Value) -> Option<&'a Value> {
        let mut here = doc;
        for segment in &self.segments {
            here = match segment {
                Segment::Key(key) => here.as_object()?.get(key)?,
                Segment::Index(i) => here.as_array()?.get(*i)?,
                Segment::Named(name) => {
                    let list = here.as_array()?;
                    list.iter().find(|e| element_is_named(e, name))?
                }
                Segment::All => here.as_array()?.first()?,
                Segment::Append => return None,
            };
        }
        Some(here)
    }
}

/// What [`ParamPath::expand`] has found so far.
struct Expansion {
    out: Vec<ParamPath>,
    /// Why the first element a `[*]` reached did not have the rest.
    first_miss: Option<String>,
}

impl Segment {
    fn is_selector(&self) -> bool {
        matches!(self, Segment::All | Segment::Named(_))
    }
}

/// The fields only a work step takes: `steps[*]` before one of them selects
/// the work steps.
const WORK_ONLY_FIELDS: [&str; 4] = ["work", "on_cancel", "error", "drawn_at"];

/// The elements of `list` (the value of `list_key`) that `selector` selects,
/// each with the concrete segments that reach it from the list.
fn select<'a>(
    list: &'a [Value],
    list_key: &str,
    selector: &Segment,
    next_key: Option<&str>,
) -> Vec<(Vec<Segment>, &'a Value)> {
    let one = |j: usize| (vec![Segment::Index(j)], &list[j]);
    let is_call = |e: &Value| e.get("call").is_some();
    let handler_steps = list_key == "steps";
    // A parallel step's branches, as (concrete segments, branch) pairs.
    let branches_of = |j: usize| {
        list[j]
            .get("parallel")
            .and_then(|p| p.get("branches"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .map(move |(b, branch)| {
                let segments = vec![
                    Segment::Index(j),
                    Segment::Key("parallel".into()),
                    Segment::Key("branches".into()),
                    Segment::Index(b),
                ];
                (segments, branch)
            })
    };
    match selector {
        Segment::Named(name) if handler_steps => (0..list.len())
            .flat_map(|j| {
                let step = (element_is_named(&list[j], name)).then(|| one(j));
                let branches = branches_of(j).filter(|(_, b)| element_is_named(b, name));
                step.into_iter().chain(branches)
            })
            .collect(),
        Segment::Named(name) if list_key == "branches" => (0..list.len())
            .filter(|&j| element_is_named(&list[j], name))
            .map(one)
            .collect(),
        Segment::Named(name) => list
            .iter()
            .position(|e| element_is_named(e, name))
            .map(one)
            .into_iter()
            .collect(),
        Segment::All if handler_steps => match next_key {
            Some(field) if WORK_ONLY_FIELDS.contains(&field) => (0..list.len())
                .filter(|&j| list[j].get("work").is_some())
                .map(one)
                .collect(),
            Some("parallel") => (0..list.len())
                .filter(|&j| list[j].get("parallel").is_some())
                .map(one)
                .collect(),
            Some("only_classes") => (0..list.len()).map(one).collect(),
            _ => (0..list.len())
                .flat_map(|j| {
                    let step = is_call(&list[j]).then(|| one(j));
                    step.into_iter().chain(branches_of(j))
                })
                .collect(),
        },
        _ => (0..list.len()).map(one).collect(),
    }
}

fn element_is_named(element: &Value, name: &str) -> bool {
    let field = |f: &str| element.get(f).and_then(Value::as_str) == Some(name);
    field("name") || field("call")
}

/// The names an element answers to in a path (`[name]`): its `name`, and for a
/// handler step the service it calls.
fn element_names(element: &Value) -> impl Iterator<Item = &str> {
    ["name", "call"]
        .into_iter()
        .filter_map(|f| element.get(f).and_then(Value::as_str))
}

/// Why `[name]` in the path `text` selects nothing in `list`: the names
/// there are, and, for the name of a copy (`client-03` of a workload
/// `client` with `count`), that copies are made from their workload and
/// share its settings.
fn no_element_named(text: &str, name: &str, list: &[Value]) -> String {
    let copy_of = list.iter().find_map(|e| {
        let base = e.get("name")?.as_str()?;
        let count = e.get("count")?.as_u64()?;
        let k: u64 = name.strip_prefix(base)?.strip_prefix('-')?.parse().ok()?;
        (1..=count).contains(&k).then_some(base)
    });
    match copy_of {
        Some(base) => format!(
            "{text}: no element named {name:?}: it is a copy of {base:?} (its `count`), and copies share their workload's settings; set them on [{base}], or write this copy out as a workload of its own"
        ),
        None => format!("{text}: no element named {name:?}; {}", names_here(list)),
    }
}

/// Most names [`names_here`] lists.
const MAX_NAMES_LISTED: usize = 12;

/// What `[name]` can select in `list`, for a name that selects nothing: "the
/// names here are: catalog, front" (at most [`MAX_NAMES_LISTED`], then how many
/// more), or that there are none.
fn names_here(list: &[Value]) -> String {
    let mut names: Vec<&str> = Vec::new();
    // A parallel step's branches answer to their callees too.
    let branches = list
        .iter()
        .filter_map(|e| e.get("parallel")?.get("branches")?.as_array())
        .flatten();
    for name in list
        .iter()
        .flat_map(element_names)
        .chain(branches.flat_map(element_names))
    {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let by_index = match list.len() {
        0 => return "the list is empty".to_string(),
        1 => "[0]".to_string(),
        n => format!("[0] to [{}]", n - 1),
    };
    if names.is_empty() {
        return format!("the elements here have no names (select one by position: {by_index})");
    }
    let more = names.len().saturating_sub(MAX_NAMES_LISTED);
    names.truncate(MAX_NAMES_LISTED);
    let mut listed = names.join(", ");
    if more > 0 {
        listed.push_str(&format!(" and {more} more"));
    }
    format!("the names here are: {listed}")
}

/// The name by which `[name]` selects element `index` of `list` (its `name`, a
/// step's `call`), if one does (the first element of that name) and reads back
/// as a name (not a number, `*` or `+`, no `.`, `[` or `]` in it).
pub(crate) fn name_of_element(list: &[Value], index: usize) -> Option<&str> {
    element_names(list.get(index)?).next().filter(|name| {
        !name.is_empty()
            && name.parse::<usize>().is_err()
            && !matches!(*name, "*" | "+")
            && !name.contains(['.', '[', ']'])
            && list.iter().position(|e| element_is_named(e, name)) == Some(index)
    })
}

/// Parses the value of `--set PATH=VALUE`: JSON if it parses, else a string, so
/// that `--set services[A].steps[B].context=background` needs no quotes.
pub fn parse_cli_value(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_keys_names_and_indices() {
        let p = ParamPath::parse("services[A].steps[0].retry").unwrap();
        assert_eq!(
            p.segments(),
            &[
                Segment::Key("services".into()),
                Segment::Named("A".into()),
                Segment::Key("steps".into()),
                Segment::Index(0),
                Segment::Key("retry".into()),
            ]
        );
        assert!(ParamPath::parse("").is_err());
        assert!(ParamPath::parse("a..b").is_err());
        assert!(ParamPath::parse("a[b").is_err());
        assert!(ParamPath::parse("a[]").is_err());
        assert!(ParamPath::parse("a[0]b").is_err());
    }

    #[test]
    fn sets_by_name_by_call_and_creates_optional_fields() {
        let mut doc = json!({"services": [
            {"name": "A", "steps": [{"work": 1}, {"call": "B"}]},
            {"name": "B"}
        ]});
        ParamPath::parse("services[A].steps[B].timeout_ms")
            .unwrap()
            .set(&mut doc, json!(300))
            .unwrap();
        ParamPath::parse("services[1].workers")
            .unwrap()
            .set(&mut doc, json!(4))
            .unwrap();
        assert_eq!(doc["services"][0]["steps"][1]["timeout_ms"], json!(300));
        assert_eq!(doc["services"][1]["workers"], json!(4));
        let got = ParamPath::parse("services[A].steps[B].timeout_ms").unwrap();
        assert_eq!(got.get(&doc), Some(&json!(300)));
    }

    #[test]
    fn missing_elements_are_named_in_the_error() {
        let mut doc = json!({"services": [{"name": "A"}]});
        let err = ParamPath::parse("services[C].workers")
            .unwrap()
            .set(&mut doc, json!(1))
            .unwrap_err();
        assert_eq!(
            err,
            "services[C].workers: no element named \"C\"; the names here are: A"
        );
        let err = ParamPath::parse("services[5].workers")
            .unwrap()
            .set(&mut doc, json!(1))
            .unwrap_err();
        assert!(err.contains("out of range"), "{err}");
        let err = ParamPath::parse("nope[0].x")
            .unwrap()
            .set(&mut doc, json!(1))
            .unwrap_err();
        assert!(err.contains("no field \"nope\""), "{err}");
        // An absent object on the way is created.
        ParamPath::parse("services[A].admission.drop_fraction")
            .unwrap()
            .set(&mut doc, json!(0.3))
            .unwrap();
        assert_eq!(doc["services"][0]["admission"]["drop_fraction"], json!(0.3));
    }

    /// A copy's name (`client-03` of a workload with `count`) is answered
    /// with what copies are, not with a list that lacks it.
    #[test]
    fn a_copys_name_says_copies_share_their_workloads_settings() {
        let mut doc = json!({"workloads": [{"name": "client", "count": 20}, {"name": "batch"}]});
        let err = ParamPath::parse("workloads[client-03].retry.max_attempts")
            .unwrap()
            .set(&mut doc, json!(1))
            .unwrap_err();
        assert!(err.contains("it is a copy of \"client\""), "{err}");
        assert!(err.contains("set them on [client]"), "{err}");
        // Past the copies, or another workload's name: the names there are.
        for path in ["workloads[client-21].x", "workloads[batch-01].x"] {
            let err = ParamPath::parse(path)
                .unwrap()
                .set(&mut doc, json!(1))
                .unwrap_err();
            assert!(err.contains("the names here are: client, batch"), "{err}");
        }
    }

    /// A name that selects nothing is answered with the names that would:
    /// elements' names, steps' calls, at most a dozen.
    #[test]
    fn a_missing_name_lists_the_names_there_are() {
        let set = |doc: &mut Value, path: &str| {
            ParamPath::parse(path)
                .unwrap()
                .set(doc, json!(1))
                .unwrap_err()
        };
        let mut doc = json!({"services": [
            {"name": "front", "steps": [{"work": 1}, {"call": "catalog"}, {"call": "catalog"}]},
            {"name": "catalog", "steps": [{"work": 1}]}
        ]});
        assert_eq!(
            set(&mut doc, "services[catalg].workers"),
            "services[catalg].workers: no element named \"catalg\"; the names here are: front, catalog"
        );
        assert_eq!(
            set(&mut doc, "services[front].steps[db].timeout_ms"),
            "services[front].steps[db].timeout_ms: no element named \"db\"; the names here are: catalog"
        );
        assert_eq!(
            set(&mut doc, "services[catalog].steps[db].timeout_ms"),
            "services[catalog].steps[db].timeout_ms: no element named \"db\"; the elements here have no names (select one by position: [0])"
        );
        let mut doc = json!({"timeline": []});
        assert_eq!(
            set(&mut doc, "timeline[rollback].at_s"),
            "timeline[rollback].at_s: no element named \"rollback\"; the list is empty"
        );
        let services: Vec<Value> = (0..20).map(|i| json!({"name": format!("s{i}")})).collect();
        let mut doc = json!({ "services": services });
        assert_eq!(
            set(&mut doc, "services[x].workers"),
            "services[x].workers: no element named \"x\"; the names here are: \
             s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11 and 8 more"
        );
    }

    #[test]
    fn index_paths_name_what_a_set_reaches() {
        let doc = json!({"services": [
            {"name": "A", "steps": [{"work": 1}, {"call": "B"}]},
            {"name": "B", "steps": [{"call": "C"}]}
        ]});
        let paths = |p: &str| ParamPath::parse(p).unwrap().index_paths(&doc);
        assert_eq!(
            paths("services[A].steps[B].retry"),
            ["services[0].steps[1].retry"]
        );
        assert_eq!(
            paths("services[*].workers"),
            ["services[0].workers", "services[1].workers"]
        );
        assert_eq!(paths("services[+]"), ["services[2]"]);
        assert_eq!(
            paths("services[1].admission.drop"),
            ["services[1].admission.drop"]
        );
        assert_eq!(paths("services[Z].workers"), Vec::<String>::new());
        assert_eq!(
            name_of_element(doc["services"].as_array().unwrap(), 1),
            Some("B")
        );
        let steps = doc["services"][0]["steps"].as_array().unwrap();
        assert_eq!(name_of_element(steps, 0), None, "a work step has no name");
        assert_eq!(
            name_of_element(steps, 1),
            Some("B"),
            "a call step: its call"
        );
        let twice = json!([{"call": "B"}, {"call": "B"}, {"name": "7"}]);
        let twice = twice.as_array().unwrap();
        assert_eq!(name_of_element(twice, 0), Some("B"));
        assert_eq!(name_of_element(twice, 1), None, "[B] selects the first");
        assert_eq!(name_of_element(twice, 2), None, "[7] is an index");
    }

    #[test]
    fn a_star_sets_every_element() {
        let mut doc = json!({"services": [
            {"name": "a", "steps": [{"call": "c"}]},
            {"name": "b", "steps": [{"call": "c"}, {"work": 1}]}
        ]});
        ParamPath::parse("services[*].steps[c].retry")
            .unwrap()
            .set(&mut doc, json!({"max_attempts": 1}))
            .unwrap();
        assert_eq!(
            doc["services"][0]["steps"][0]["retry"],
            json!({"max_attempts": 1})
        );
        assert_eq!(
            doc["services"][1]["steps"][0]["retry"],
            json!({"max_attempts": 1})
        );
        assert!(doc["services"][1]["steps"][1].get("retry").is_none());
        let paths = ParamPath::parse("services[*].name")
            .unwrap()
            .expand(&doc)
            .unwrap();
        assert_eq!(paths.len(), 2);
    }

    /// A mixed handler: work, a call to `db`, a parallel step whose second
    /// branch calls `db`, and a second call to `db`.
    fn mixed() -> Value {
        json!({"services": [
            {"name": "api", "steps": [
                {"work": {"kind": "constant", "ms": 1}},
                {"call": "db"},
                {"parallel": {"branches": [{"call": "cache"}, {"call": "db"}]}},
                {"call": "db"}
            ]},
            {"name": "worker", "steps": [{"work": {"kind": "constant", "ms": 1}}]},
            {"name": "db"}, {"name": "cache"}
        ]})
    }

    fn paths(path: &str, doc: &Value) -> Vec<String> {
        ParamPath::parse(path).unwrap().index_paths(doc)
    }

    #[test]
    fn a_star_over_steps_selects_the_call_steps_and_branches() {
        let doc = mixed();
        let expected = [
            "services[0].steps[1].retry",
            "services[0].steps[2].parallel.branches[0].retry",
            "services[0].steps[2].parallel.branches[1].retry",
            "services[0].steps[3].retry",
        ];
        assert_eq!(paths("services[*].steps[*].retry", &doc), expected);
        // Setting it makes a model whose work steps have no `retry`.
        let mut set = doc.clone();
        ParamPath::parse("services[*].steps[*].retry.max_attempts")
            .unwrap()
            .set(&mut set, json!(1))
            .unwrap();
        assert!(set["services"][0]["steps"][0].get("retry").is_none());
        assert_eq!(
            set["services"][0]["steps"][3]["retry"],
            json!({"max_attempts": 1})
        );
        assert_eq!(
            set["services"][0]["steps"][2]["parallel"]["branches"][0]["retry"],
            json!({"max_attempts": 1})
        );
        // Before a field only work takes, the work steps; before `parallel`,
        // the parallel steps; before `only_classes`, every step.
        assert_eq!(
            paths("services[*].steps[*].drawn_at", &doc),
            [
                "services[0].steps[0].drawn_at",
                "services[1].steps[0].drawn_at"
            ]
        );
        assert_eq!(
            paths("services[api].steps[*].parallel.wait_for", &doc),
            ["services[0].steps[2].parallel.wait_for"]
        );
        assert_eq!(paths("services[api].steps[*].only_classes", &doc).len(), 4);
    }

    #[test]
    fn a_callee_selects_every_step_and_branch_that_calls_it() {
        let doc = mixed();
        assert_eq!(
            paths("services[*].steps[db].timeout_ms", &doc),
            [
                "services[0].steps[1].timeout_ms",
                "services[0].steps[2].parallel.branches[1].timeout_ms",
                "services[0].steps[3].timeout_ms"
            ]
        );
        let mut set = doc.clone();
        ParamPath::parse("services[api].steps[db].timeout_ms")
            .unwrap()
            .set(&mut set, json!(50))
            .unwrap();
        assert_eq!(set["services"][0]["steps"][1]["timeout_ms"], json!(50));
        assert_eq!(set["services"][0]["steps"][3]["timeout_ms"], json!(50));
        assert_eq!(
            set["services"][0]["steps"][2]["parallel"]["branches"][1]["timeout_ms"],
            json!(50)
        );
    }

    #[test]
    fn a_selection_of_nothing_says_why() {
        let doc = mixed();
        let err = |path: &str| {
            ParamPath::parse(path)
                .unwrap()
                .set(&mut doc.clone(), json!(1))
                .unwrap_err()
        };
        assert_eq!(
            err("services[worker].steps[*].retry"),
            "services[worker].steps[*].retry: [*] over steps selects the steps that take the field after it, and there are none here"
        );
        assert_eq!(
            err("services[*].steps[queue].retry"),
            "services[*].steps[queue].retry: no element named \"queue\"; the names here are: db, cache"
        );
    }

    #[test]
    fn a_plus_appends_to_a_list() {
        let mut doc = json!({"timeline": [{"name": "a"}]});
        ParamPath::parse("timeline[+]")
            .unwrap()
            .set(&mut doc, json!({"name": "b"}))
            .unwrap();
        assert_eq!(doc["timeline"][1]["name"], "b");
        assert!(ParamPath::parse("timeline[+].name").is_err());
    }

    #[test]
    fn cli_values_are_json_or_strings() {
        assert_eq!(parse_cli_value("250"), json!(250));
        assert_eq!(parse_cli_value("background"), json!("background"));
        assert_eq!(
            parse_cli_value("{\"max_attempts\":2}"),
            json!({"max_attempts": 2})
        );
    }
}
