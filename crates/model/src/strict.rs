//! Reading the format's serde types from JSON, objects only.
//!
//! serde's derived `Deserialize` for a struct also accepts a sequence of its
//! fields in declaration order (`visit_seq`), and serde_json's `Value`
//! deserializer offers a JSON array as one: `"retry": [3]` would load as
//! `{"max_attempts": 3}`, no field name checked, and a whole model could be a
//! 14-element array. The format is objects only, and refusing arrays one type at
//! a time (a `visit_seq` that errors on each of dozens of types) would miss the
//! next type added. So the refusal is made once, here, for every type:
//!
//! - `Strict` is serde_json's `&Value` deserializer with one difference:
//!   `deserialize_struct` (and an externally tagged enum's struct variant)
//!   refuses an array with "invalid type: sequence, expected an object (fields
//!   by name, not by position)" (which [`from_value`] words "expected an object
//!   (fields by name, not by position), got an array"). Everything else is
//!   delegated to serde_json, and the elements of arrays, the values of
//!   objects, `Some` and enum variants are read through `Strict` again, so the
//!   rule holds at any depth.
//!   `serde_path_to_error` wraps it, so each refusal names its JSON path.
//! - An internally tagged enum (`#[serde(tag = "kind")]`, every policy of the
//!   format) does not call `deserialize_struct`: its derived `Deserialize` reads
//!   any value (`deserialize_any`) into serde's private `Content` buffer, taking
//!   the tag from an array's first element and the fields from the rest, by
//!   position (`"backoff": ["fixed", 3]`), then reads the variant's fields from
//!   that buffer. `Strict` recognises such a visitor by the expectation serde
//!   derives for it ("internally tagged enum BackoffSpec", the text of its own
//!   messages) and refuses an array there too.
//! - What the enum buffered never comes back to `Strict`: its variant's fields,
//!   and anything nested in them (a mixture's components, a closed loop's
//!   `think`, a mixture inside a mixture), are read by serde's own
//!   `ContentDeserializer`, which accepts arrays for structs and tagged enums
//!   alike, and no deserializer adapter can intercept that (serde's hook for it
//!   is private API). So [`from_value`] also checks its result: it serializes
//!   the value it read back to JSON and reports every place where the input has
//!   an array and the value read has an object. That check needs nothing but
//!   the types' `Serialize` (the same serde attributes, so the same names); it
//!   is the backstop for whatever serde buffers (untagged enums too), while
//!   `Strict` gives the refusal in place, before any confusing "invalid length"
//!   or "missing field" message about the array read by position.
//!
//! The one case left to serde: inside a tagged enum's fields, an array that
//! does not even fit its type by position (a mixture component `[0.5]`) fails
//! in serde's buffer before anything can be compared, with serde's "invalid
//! length 1, expected struct MixtureComponent with 2 elements" at the enum's
//! path. It is refused all the same, in the same words as the others (at the
//! enum's path).
//!
//! serde's messages name Rust types ("invalid type: floating point `10.0`,
//! expected u32"); [`from_value`] words every message in JSON's terms
//! ([`plain_message`]: "expected a whole number (no decimal point or exponent),
//! got 10.0"), and reports more than serde's first error (see there).

use crate::Problem;
use schemars::JsonSchema;
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, EnumAccess, Expected, IntoDeserializer, MapAccess,
    SeqAccess, Unexpected, VariantAccess, Visitor,
};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Error, Map, Value};
use std::collections::HashMap;
use std::fmt::{self, Write};
use std::sync::{Mutex, OnceLock};

/// Reads a `T` from `value`, objects only (see the [module docs](self)). Every
/// problem names its JSON path, relative to `value` (empty: `value` itself),
/// in words a user of a JSON file reads ([`plain_message`]: no Rust types).
///
/// serde stops at the first error. To report more at once, the field it
/// failed on is taken out of (a copy of) `value` and the read is tried again,
/// up to [`MAX_PROBLEMS_PER_VALUE`] problems: an unknown field, or a wrong
/// value, does not hide the next one. Where an object then lacks a required
/// field (taken out, or missing from the start: reported once, with every
/// other required field missing beside it, from `T`'s JSON Schema), serde
/// cannot read that object on, and has said every problem of its fields: the
/// object is taken out in turn, and reading goes on after it. It stops where
/// the error is not at a field (an array's element, `value` itself). Then,
/// once serde reads the value: every array read as an object.
pub fn from_value<T: DeserializeOwned + Serialize + JsonSchema>(
    value: &Value,
) -> Result<T, Vec<Problem>> {
    let mut problems = Vec::new();
    // `value` with the fields already reported taken out; `None`: unchanged.
    let mut edited: Option<Value> = None;
    // (object's path, key) of each field taken out.
    let mut removed: Vec<(Vec<Step>, String)> = Vec::new();
    let read = loop {
        let current = edited.as_ref().unwrap_or(value);
        let error = match serde_path_to_error::deserialize::<_, T>(Strict(current)) {
            Ok(read) => break Some(read),
            Err(e) => e,
        };
        let mut steps = steps_of(error.path());
        let serde_path = error.path().to_string();
        let message = clean_serde_message(&error.into_inner().to_string());
        let missing = missing_field(&message);
        if let (Some(steps), None) = (&mut steps, missing) {
            steps.extend(field_inside(current, steps, &message));
        }
        let path = match &steps {
            Some(steps) => path_text(steps),
            // serde_path_to_error's own text: `by_number.?`.
            None => serde_path,
        };
        let message = match (missing, &steps) {
            // Missing because it was taken out, after its own problem: said.
            // (Inside a tagged enum, serde says the enum's path: the field
            // taken out may be deeper.)
            (Some(field), Some(steps))
                if value_at(value, steps).is_some_and(|o| o.get(field).is_some())
                    || removed.iter().any(|(at, key)| {
                        at.len() > steps.len() && at.starts_with(steps) && key == field
                    }) =>
            {
                None
            }
            (Some(field), Some(steps)) => Some(
                all_missing_fields::<T>(current, steps, field)
                    .unwrap_or_else(|| plain_message(&message)),
            ),
            _ => Some(plain_message(&message)),
        };
        if let Some(message) = message {
            problems.push(Problem::new(path, message));
        }
        if problems.len() >= MAX_PROBLEMS_PER_VALUE {
            break None;
        }
        // What to take out: the field serde failed on, or the object that
        // lacks a field.
        let Some(mut steps) = steps else { break None };
        let Some(Step::Key(key)) = steps.pop() else {
            break None;
        };
        let doc = edited.get_or_insert_with(|| value.clone());
        let taken_out = value_at_mut(doc, &steps)
            .and_then(Value::as_object_mut)
            .and_then(|object| object.remove(&key));
        if taken_out.is_none() {
            break None;
        }
        removed.push((steps, key));
    };
    if let Some(read) = read {
        let current = edited.as_ref().unwrap_or(value);
        // Serializing a format type cannot fail (string keys, no custom impls);
        // if it did, there would be nothing to compare, and `Strict` alone would
        // stand.
        if let Ok(back) = serde_json::to_value(&read) {
            arrays_read_as_objects(current, &back, &mut String::new(), &mut problems);
        }
        if problems.is_empty() {
            return Ok(read);
        }
    }
    Err(problems)
}

/// Most problems [`from_value`] reports in one value: each costs a read of the
/// whole value again.
pub const MAX_PROBLEMS_PER_VALUE: usize = 20;

/// serde_json appends " at line L column C" to messages from a `Value`, where it is
/// meaningless (always line 0): the JSON path says where. (And from text, where
/// the caller says where once.)
pub(crate) fn clean_serde_message(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

/// One step of a JSON path: an object's key or a list's index.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
}

/// serde_path_to_error's path as steps; `None` where it does not know one (a
/// map key it could not read, an enum's variant).
fn steps_of(path: &serde_path_to_error::Path) -> Option<Vec<Step>> {
    path.iter()
        .map(|segment| match segment {
            serde_path_to_error::Segment::Seq { index } => Some(Step::Index(*index)),
            serde_path_to_error::Segment::Map { key } => Some(Step::Key(key.clone())),
            _ => None,
        })
        .collect()
}

/// The path as the crate writes it: `services[1].steps[0].call`, empty for the
/// value itself.
fn path_text(steps: &[Step]) -> String {
    let mut out = String::new();
    for step in steps {
        match step {
            Step::Key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Step::Index(i) => write!(out, "[{i}]").expect("writing to a String"),
        }
    }
    out
}

/// Where, inside the object at `steps`, the error `message` is, when serde
/// says only the object: an internally tagged enum (a policy, a distribution)
/// reads its fields from a buffer that serde_path_to_error does not follow, so
/// its errors are at the enum's path. An unknown field is that key, in the
/// object or else in the one object under it (at any depth: a quantile
/// table's point, a mixture's component) that has it, if exactly one does; a
/// wrong value is the one field under the object (at any depth) holding the
/// value serde names, if exactly one does. Empty where it cannot be told.
fn field_inside(value: &Value, steps: &[Step], message: &str) -> Vec<Step> {
    let Some(object) = value_at(value, steps).filter(|v| v.is_object()) else {
        return Vec::new();
    };
    let mut matches = Vec::new();
    if let Some(key) = message
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split_once('`'))
        .map(|(key, _)| key)
    {
        if object.get(key).is_some() {
            return vec![Step::Key(key.to_string())];
        }
        having_key(object, key, &mut Vec::new(), &mut matches);
        return only(matches);
    }
    let found = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "))
        .and_then(|rest| rest.rsplit_once(", expected "))
        .map(|(found, _)| found);
    let Some(found) = found else {
        return Vec::new();
    };
    holding(object, found, &mut Vec::new(), &mut matches);
    only(matches)
}

/// The one path of `matches`, or none if there are several (or none).
fn only(matches: Vec<Vec<Step>>) -> Vec<Step> {
    match <[Vec<Step>; 1]>::try_from(matches) {
        Ok([only]) => only,
        Err(_) => Vec::new(),
    }
}

/// The paths under `value` of every field named `key` (`value`'s own too).
fn having_key(value: &Value, key: &str, path: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    match value {
        Value::Object(fields) => {
            for (name, field) in fields {
                path.push(Step::Key(name.clone()));
                if name == key {
                    out.push(path.clone());
                }
                having_key(field, key, path, out);
                path.pop();
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(Step::Index(i));
                having_key(item, key, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

/// The paths under `value` of every scalar that serde would describe as
/// `found` (`string "x"`, `integer `3``, `floating point `2.5``, `boolean
/// `true``, `null`).
fn holding(value: &Value, found: &str, path: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    let number = |prefix: &str| {
        found
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_prefix('`')?.strip_suffix('`'))
            .and_then(|n| n.parse::<f64>().ok())
    };
    let is = match value {
        Value::Object(fields) => {
            for (key, field) in fields {
                path.push(Step::Key(key.clone()));
                holding(field, found, path, out);
                path.pop();
            }
            false
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(Step::Index(i));
                holding(item, found, path, out);
                path.pop();
            }
            false
        }
        Value::String(s) => found.strip_prefix("string ") == Some(format!("{s:?}").as_str()),
        Value::Number(n) => {
            let wanted = if n.is_f64() {
                number("floating point ")
            } else {
                number("integer ")
            };
            wanted.is_some() && wanted == n.as_f64()
        }
        Value::Bool(b) => found == format!("boolean `{b}`"),
        Value::Null => found == "null",
    };
    if is {
        out.push(path.clone());
    }
}

fn value_at<'a>(mut value: &'a Value, steps: &[Step]) -> Option<&'a Value> {
    for step in steps {
        value = match step {
            Step::Key(key) => value.get(key)?,
            Step::Index(i) => value.get(*i)?,
        };
    }
    Some(value)
}

fn value_at_mut<'a>(mut value: &'a mut Value, steps: &[Step]) -> Option<&'a mut Value> {
    for step in steps {
        value = match step {
            Step::Key(key) => value.as_object_mut()?.get_mut(key)?,
            Step::Index(i) => value.as_array_mut()?.get_mut(*i)?,
        };
    }
    Some(value)
}

/// The field of serde's "missing field `x`".
fn missing_field(message: &str) -> Option<&str> {
    message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.strip_suffix('`'))
}

/// "missing fields `a`, `b` and `c`": every required field absent from the
/// object at `steps` in `value`, by `T`'s JSON Schema, if `field` (the one
/// serde names) is among them; `None` where the schema does not say.
fn all_missing_fields<T: JsonSchema>(value: &Value, steps: &[Step], field: &str) -> Option<String> {
    let root = schema_of::<T>();
    let mut schema: &Value = &root;
    let mut here = value;
    for step in steps {
        let object = resolve(&root, schema, here)?;
        (schema, here) = match step {
            Step::Key(key) => {
                let properties = object.get("properties").and_then(|p| p.get(key));
                let extra = object.get("additionalProperties").filter(|x| x.is_object());
                (properties.or(extra)?, here.get(key)?)
            }
            Step::Index(i) => (object.get("items")?, here.get(*i)?),
        };
    }
    let object = resolve(&root, schema, here)?;
    let fields = here.as_object()?;
    let missing: Vec<String> = object
        .get("required")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .filter(|name| !fields.contains_key(*name))
        .map(|name| format!("`{name}`"))
        .collect();
    if !missing.iter().any(|m| m[1..m.len() - 1] == *field) {
        return None;
    }
    Some(match missing.split_last() {
        Some((last, [])) => format!("missing field {last}"),
        Some((last, rest)) => format!("missing fields {} and {last}", rest.join(", ")),
        None => return None,
    })
}

/// `T`'s JSON Schema (draft 2020-12, definitions under `$defs`), made once per
/// type.
fn schema_of<T: JsonSchema>() -> std::sync::Arc<Value> {
    static SCHEMAS: OnceLock<Mutex<HashMap<String, std::sync::Arc<Value>>>> = OnceLock::new();
    let id = T::schema_id().into_owned();
    let mut schemas = SCHEMAS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    schemas
        .entry(id)
        .or_insert_with(|| std::sync::Arc::new(Value::from(schemars::schema_for!(T))))
        .clone()
}

/// The schema `value` is read by: `schema` with its `$ref`s followed, and of
/// its alternatives (`anyOf`, `oneOf`: an `Option`, a tagged enum) the one
/// whose type and `const` fields (the tag) `value` has.
fn resolve<'a>(root: &'a Value, mut schema: &'a Value, value: &Value) -> Option<&'a Value> {
    for _ in 0..64 {
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let name = reference.strip_prefix("#/$defs/")?;
            schema = root.get("$defs")?.get(name)?;
            continue;
        }
        let alternatives = schema
            .get("anyOf")
            .or_else(|| schema.get("oneOf"))
            .and_then(Value::as_array);
        let Some(alternatives) = alternatives else {
            return Some(schema);
        };
        schema = alternatives
            .iter()
            .filter_map(|alternative| resolve(root, alternative, value))
            .find(|alternative| fits(alternative, value))?;
        return Some(schema);
    }
    None
}

/// Whether `T`'s JSON Schema reads the value at `path` of `value` (keys and
/// indices, as problems name them: `services[0].workers`) as a whole number.
/// False where the schema does not say, or `path` names nothing in `value`.
pub(crate) fn is_whole_number_at<T: JsonSchema>(value: &Value, path: &str) -> bool {
    let root = schema_of::<T>();
    let whole = |schema: &Value| match schema.get("type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "integer"),
        _ => false,
    };
    let mut schema: &Value = &root;
    let mut here = value;
    for step in index_steps(path) {
        let Some(resolved) = resolve(&root, schema, here) else {
            return false;
        };
        let next = match &step {
            Step::Key(key) => resolved
                .get("properties")
                .and_then(|p| p.get(key))
                .zip(here.get(key)),
            Step::Index(i) => resolved.get("items").zip(here.get(*i)),
        };
        let Some((field, inside)) = next else {
            return false;
        };
        (schema, here) = (field, inside);
    }
    resolve(&root, schema, here).is_some_and(whole)
}

/// `services[0].steps[1].timeout_ms` as steps (the inverse of [`path_text`]
/// for the model's own keys, which hold no `.` or `[`).
fn index_steps(path: &str) -> Vec<Step> {
    let mut steps = Vec::new();
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let mut pieces = part.split('[');
        if let Some(key) = pieces.next().filter(|k| !k.is_empty()) {
            steps.push(Step::Key(key.to_string()));
        }
        for index in pieces {
            match index.trim_end_matches(']').parse() {
                Ok(i) => steps.push(Step::Index(i)),
                Err(_) => steps.push(Step::Key(index.trim_end_matches(']').to_string())),
            }
        }
    }
    steps
}

/// Whether `value` has the JSON type of `schema` and its `const` fields.
fn fits(schema: &Value, value: &Value) -> bool {
    let type_fits = |t: &str| match t {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    };
    let typed = match schema.get("type") {
        Some(Value::String(t)) => type_fits(t),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).any(type_fits),
        _ => true,
    };
    let tagged = schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .all(|(name, field)| match field.get("const") {
            Some(tag) => value.get(name) == Some(tag),
            None => true,
        });
    typed && tagged
}

/// serde's message in the words of a JSON file, the one place where they are
/// made: "invalid type: floating point `10.0`, expected u32" becomes "expected
/// a whole number (no decimal point or exponent), got 10.0". What was
/// expected comes first, as in the crate's own messages ("expected a positive
/// number, got -5"); Rust's type names (`f64`, `u32`, `struct ModelSpec`)
/// become JSON's (a number, a whole number, an object), and serde's words for
/// what was found (`sequence`, `map`, `string "x"`) JSON's too. A message of
/// another form (an unknown field, a missing one) is kept: it names the field.
pub fn plain_message(message: &str) -> String {
    let message = clean_serde_message(message);
    let invalid = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "));
    // The expectation is a type's description and has no ", expected "; what
    // was found may (a string): split at the last.
    if let Some((found, expected)) = invalid.and_then(|rest| rest.rsplit_once(", expected ")) {
        if found == "map" && expected == "map with a single key" {
            return "expected an object of a single key (the name of a form)".to_string();
        }
        return format!(
            "expected {}, got {}",
            plain_expected(expected, found),
            plain_found(found)
        );
    }
    if let Some((length, expected)) = message
        .strip_prefix("invalid length ")
        .and_then(|rest| rest.split_once(", expected "))
    {
        // serde reads a struct from an array by position, and says the array is
        // too short: the format wants an object.
        if expected.starts_with("struct ") {
            return format!("expected {AN_OBJECT}, got an array");
        }
        let plural = if length == "1" { "" } else { "s" };
        return format!(
            "expected {}, got {length} element{plural}",
            plain_expected(expected, "")
        );
    }
    message
}

/// What serde found, as JSON says it: `string "x"` is the string "x", an
/// integer or a float is the number as written, a sequence is an array.
fn plain_found(found: &str) -> String {
    let quoted = |prefix: &str| {
        found
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_prefix('`'))
            .and_then(|rest| rest.strip_suffix('`'))
            .map(str::to_string)
    };
    if let Some(text) = found.strip_prefix("string ") {
        return format!("the string {text}");
    }
    if let Some(number) = quoted("integer ").or_else(|| quoted("floating point ")) {
        return number;
    }
    if let Some(boolean) = quoted("boolean ") {
        return boolean;
    }
    match found {
        "null" | "unit value" => "null",
        "sequence" => "an array",
        "map" => "an object",
        other => other,
    }
    .to_string()
}

/// What serde expected, as JSON says it; for an integer type, the bound that
/// `found` breaks.
fn plain_expected(expected: &str, found: &str) -> String {
    let float = found
        .strip_prefix("floating point `")
        .and_then(|rest| rest.strip_suffix('`'));
    let integer = found
        .strip_prefix("integer `")
        .and_then(|rest| rest.strip_suffix('`'));
    let whole = |min: &str, max: &str, unsigned: bool| match (float, integer) {
        (Some(x), _) if x.parse::<f64>().is_ok_and(|x| x.fract() == 0.0) => {
            "a whole number (no decimal point or exponent)".to_string()
        }
        (Some(_), _) => "a whole number".to_string(),
        (None, Some(n)) if n.starts_with('-') && unsigned => "a whole number ≥ 0".to_string(),
        (None, Some(n)) if n.starts_with('-') => format!("a whole number ≥ {min}"),
        (None, Some(_)) => format!("a whole number ≤ {max}"),
        (None, None) if unsigned => "a whole number ≥ 0".to_string(),
        (None, None) => "a whole number".to_string(),
    };
    match expected {
        "f64" | "f32" => "a number".to_string(),
        "u8" => whole("0", &u8::MAX.to_string(), true),
        "u16" => whole("0", &u16::MAX.to_string(), true),
        "u32" => whole("0", &u32::MAX.to_string(), true),
        "u64" | "u128" | "usize" => whole("0", &u64::MAX.to_string(), true),
        "i8" => whole(&i8::MIN.to_string(), &i8::MAX.to_string(), false),
        "i16" => whole(&i16::MIN.to_string(), &i16::MAX.to_string(), false),
        "i32" => whole(&i32::MIN.to_string(), &i32::MAX.to_string(), false),
        "i64" | "i128" | "isize" => whole(&i64::MIN.to_string(), &i64::MAX.to_string(), false),
        "a boolean" => "true or false".to_string(),
        "a string" | "string or map" | "a borrowed string" | "a character" => {
            "a string".to_string()
        }
        "a sequence" => "an array".to_string(),
        "a map" | "map" => "an object".to_string(),
        "unit" => "null".to_string(),
        other if other.starts_with("struct ") || other.starts_with("internally tagged enum ") => {
            "an object".to_string()
        }
        other => match other
            .strip_prefix("a tuple of size ")
            .or_else(|| other.strip_prefix("tuple of "))
        {
            Some(n) => format!("an array of {} elements", n.trim_end_matches(" elements")),
            None => other.to_string(),
        },
    }
}

/// What an array was found instead of.
const AN_OBJECT: &str = "an object (fields by name, not by position)";

/// "invalid type: sequence, expected an object (fields by name, not by position)".
fn array_for_object() -> Error {
    de::Error::invalid_type(Unexpected::Seq, &AN_OBJECT)
}

/// The backstop: every path where `input` has an array and `back` (the value
/// read from it, serialized again) has an object, in document order.
fn arrays_read_as_objects(
    input: &Value,
    back: &Value,
    path: &mut String,
    found: &mut Vec<Problem>,
) {
    let start = path.len();
    match (input, back) {
        (Value::Array(_), Value::Object(_)) => {
            found.push(Problem::new(
                path.clone(),
                plain_message(&array_for_object().to_string()),
            ));
        }
        (Value::Array(items), Value::Array(read)) => {
            for (i, (item, read)) in items.iter().zip(read).enumerate() {
                write!(path, "[{i}]").expect("writing to a String");
                arrays_read_as_objects(item, read, path, found);
                path.truncate(start);
            }
        }
        (Value::Object(fields), Value::Object(read)) => {
            for (key, field) in fields {
                if let Some(read) = read.get(key) {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(key);
                    arrays_read_as_objects(field, read, path, found);
                    path.truncate(start);
                }
            }
        }
        _ => {}
    }
}

/// serde_json's `&Value` deserializer, except that a struct must be an object
/// (see the [module docs](self)).
#[derive(Clone, Copy)]
struct Strict<'de>(&'de Value);

/// Whether `visitor` is serde_derive's for an internally tagged enum, which
/// would read an array by position: recognised by the expectation serde derives
/// for it (`#[serde(expecting = ...)]` would hide it; the format uses none, and
/// the backstop in [`from_value`] would still refuse what loads).
fn expects_tagged_enum<'de, V: Visitor<'de>>(visitor: &V) -> bool {
    let expected: &dyn Expected = visitor;
    expected.to_string().starts_with("internally tagged enum ")
}

/// Methods whose values hold no struct (scalars, identifiers, bytes, values
/// skipped): serde_json's, unchanged.
macro_rules! serde_json_reads {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            self.0.$method(visitor)
        }
    )*};
}

impl<'de> Deserializer<'de> for Strict<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Array(_) if expects_tagged_enum(&visitor) => Err(array_for_object()),
            Value::Array(items) => visit_array(items, visitor),
            Value::Object(fields) => visit_object(fields, visitor),
            scalar => scalar.deserialize_any(visitor),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Value::Object(object) => visit_object(object, visitor),
            Value::Array(_) => Err(array_for_object()),
            other => other.deserialize_struct(name, fields, visitor),
        }
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Object(fields) => visit_object(fields, visitor),
            other => other.deserialize_map(visitor),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Array(items) => visit_array(items, visitor),
            other => other.deserialize_seq(visitor),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        // As serde_json: a variant's name, or an object of one key, the name,
        // whose value is the variant's content (read strictly).
        let (variant, content) = match self.0 {
            Value::String(variant) => (variant, None),
            Value::Object(object) if object.len() == 1 => {
                let (variant, content) = object.iter().next().expect("one entry");
                (variant, Some(content))
            }
            other => return other.deserialize_enum(name, variants, visitor),
        };
        visitor.visit_enum(StrictEnum { variant, content })
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.0.deserialize_unit_struct(name, visitor)
    }

    serde_json_reads! {
        deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_i128 deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64
        deserialize_u128 deserialize_f32 deserialize_f64 deserialize_char deserialize_str
        deserialize_string deserialize_bytes deserialize_byte_buf deserialize_unit
        deserialize_identifier deserialize_ignored_any
    }
}

/// As serde_json's `visit_array_ref`, each element read strictly.
fn visit_array<'de, V: Visitor<'de>>(items: &'de [Value], visitor: V) -> Result<V::Value, Error> {
    let mut seq = StrictSeq(items.iter());
    let value = visitor.visit_seq(&mut seq)?;
    all_read(value, seq.0.len(), items.len(), "fewer elements in array")
}

/// As serde_json's map deserializer, each value read strictly.
fn visit_object<'de, V: Visitor<'de>>(
    fields: &'de Map<String, Value>,
    visitor: V,
) -> Result<V::Value, Error> {
    let mut map = StrictMap {
        entries: fields.iter(),
        value: None,
    };
    let value = visitor.visit_map(&mut map)?;
    all_read(
        value,
        map.entries.len(),
        fields.len(),
        "fewer elements in map",
    )
}

/// As serde_json: a visitor that stops before the end of an array or object
/// (a tuple given more elements) is an error.
fn all_read<T>(value: T, unread: usize, len: usize, fewer: &'static str) -> Result<T, Error> {
    if unread == 0 {
        Ok(value)
    } else {
        Err(de::Error::invalid_length(len, &fewer))
    }
}

struct StrictSeq<'de>(std::slice::Iter<'de, Value>);

impl<'de> SeqAccess<'de> for StrictSeq<'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.0
            .next()
            .map(|v| seed.deserialize(Strict(v)))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct StrictMap<'de> {
    entries: serde_json::map::Iter<'de>,
    value: Option<&'de Value>,
}

impl<'de> MapAccess<'de> for StrictMap<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        map_key(key, seed).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.value.take() {
            Some(value) => seed.deserialize(Strict(value)),
            None => Err(de::Error::custom("value is missing")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// Reads a map key with serde_json's own key deserializer (a key is a string
/// with nothing inside to refuse; serde_json also reads numbers and booleans
/// from keys), reached through a map of that one key.
fn map_key<'de, K: DeserializeSeed<'de>>(key: &str, seed: K) -> Result<K::Value, Error> {
    struct FirstKey<K>(K);

    impl<'de, K: DeserializeSeed<'de>> Visitor<'de> for FirstKey<K> {
        type Value = K::Value;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a map of one key")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<K::Value, A::Error> {
            map.next_key_seed(self.0)?
                .ok_or_else(|| de::Error::custom("the key is missing"))
        }
    }

    let mut one = Map::new();
    one.insert(key.to_owned(), Value::Null);
    Value::Object(one).deserialize_map(FirstKey(seed))
}

/// An externally tagged enum's variant: as serde_json's, its content read
/// strictly.
struct StrictEnum<'de> {
    variant: &'de str,
    content: Option<&'de Value>,
}

impl<'de> EnumAccess<'de> for StrictEnum<'de> {
    type Error = Error;
    type Variant = StrictVariant<'de>;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Self::Variant), Error> {
        let variant: de::value::StrDeserializer<'_, Error> = self.variant.into_deserializer();
        seed.deserialize(variant)
            .map(|v| (v, StrictVariant(self.content)))
    }
}

struct StrictVariant<'de>(Option<&'de Value>);

impl<'de> VariantAccess<'de> for StrictVariant<'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        match self.0 {
            Some(content) => <()>::deserialize(Strict(content)),
            None => Ok(()),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        match self.0 {
            Some(content) => seed.deserialize(Strict(content)),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"newtype variant",
            )),
        }
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Some(Value::Array(items)) if items.is_empty() => visitor.visit_unit(),
            Some(content) => Strict(content).deserialize_seq(visitor),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"tuple variant",
            )),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Some(content) => Strict(content).deserialize_struct("", fields, visitor),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"struct variant",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    //! The shapes the format does not use (yet): the rule must hold for them
    //! too, and everything else must read as serde_json reads it.

    use super::*;
    use serde_json::json;
    use std::collections::BTreeMap;

    #[derive(Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Point {
        x: u32,
        #[serde(default)]
        y: u32,
    }

    #[derive(Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    enum External {
        Unit,
        Newtype(Point),
        Tuple(u32, Point),
        Struct { at: Point },
    }

    #[derive(Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
    #[serde(untagged)]
    enum Untagged {
        Name(String),
        Point(Point),
    }

    #[derive(Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
    struct Wrapper(Point);

    #[derive(Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Shapes {
        #[serde(default)]
        point: Option<Point>,
        #[serde(default)]
        list: Vec<Point>,
        #[serde(default)]
        by_number: BTreeMap<u32, Point>,
        #[serde(default)]
        pair: Option<(u32, Point)>,
        #[serde(default)]
        external: Option<External>,
        #[serde(default)]
        untagged: Option<Untagged>,
        #[serde(default)]
        wrapper: Option<Wrapper>,
        #[serde(default)]
        any: Value,
    }

    fn problems(doc: Value) -> Vec<String> {
        match from_value::<Shapes>(&doc) {
            Ok(_) => vec![],
            Err(ps) => ps.iter().map(Problem::to_string).collect(),
        }
    }

    const REFUSED: &str = "expected an object (fields by name, not by position), got an array";

    #[test]
    fn objects_everywhere_read_as_serde_json_reads_them() {
        let doc = json!({
            "point": {"x": 1},
            "list": [{"x": 2, "y": 3}],
            "by_number": {"7": {"x": 4}},
            "pair": [5, {"x": 6}],
            "external": {"tuple": [8, {"x": 9}]},
            "untagged": {"x": 10},
            "wrapper": {"x": 11},
            "any": [[1, 2], {"a": [3]}],
        });
        let strict: Shapes = from_value(&doc).unwrap();
        let lenient: Shapes = serde_json::from_value(doc).unwrap();
        assert_eq!(strict, lenient);
        for external in [
            json!("unit"),
            json!({"unit": null}),
            json!({"newtype": {"x": 1}}),
            json!({"struct": {"at": {"x": 1}}}),
        ] {
            let doc = json!({ "external": external });
            let strict: Shapes = from_value(&doc).unwrap();
            assert_eq!(strict, serde_json::from_value::<Shapes>(doc).unwrap());
        }
    }

    #[test]
    fn arrays_for_objects_are_refused_at_their_paths() {
        for (doc, path) in [
            (json!([]), ""),
            (json!({"point": [1]}), "point"),
            (json!({"list": [{"x": 1}, [2]]}), "list[1]"),
            (json!({"by_number": {"7": [4]}}), "by_number.7"),
            (json!({"pair": [5, [6]]}), "pair[1]"),
            (json!({"external": {"newtype": [1]}}), "external.newtype"),
            (
                json!({"external": {"tuple": [8, [9]]}}),
                "external.tuple[1]",
            ),
            (json!({"external": {"struct": [[1]]}}), "external.struct"),
            (
                json!({"external": {"struct": {"at": [1]}}}),
                "external.struct.at",
            ),
            (json!({"wrapper": [11]}), "wrapper"),
        ] {
            let expected = if path.is_empty() {
                REFUSED.to_string()
            } else {
                format!("{path}: {REFUSED}")
            };
            assert_eq!(problems(doc.clone()), [expected], "{doc}");
        }
    }

    /// An untagged enum buffers its input as serde's `Content`, out of
    /// `Strict`'s reach: the check after the fact refuses what loaded.
    #[test]
    fn an_untagged_enum_read_from_an_array_is_refused_after_the_fact() {
        assert_eq!(
            problems(json!({"untagged": [10, 1], "point": [1]})),
            [format!("point: {REFUSED}"), format!("untagged: {REFUSED}")],
            "Strict refuses first, then (the point taken out) the check after the fact"
        );
        assert_eq!(
            problems(json!({"untagged": [10, 1], "list": [{"x": 1}]})),
            [format!("untagged: {REFUSED}")]
        );
    }

    #[test]
    fn other_errors_are_serde_json_messages_in_json_words() {
        assert_eq!(
            problems(json!({"point": {"x": "one"}})),
            ["point.x: expected a whole number ≥ 0, got the string \"one\""]
        );
        let doc = json!({"by_number": {"seven": {"x": 1}}});
        let lenient = serde_json::from_value::<Shapes>(doc.clone()).unwrap_err();
        assert_eq!(
            problems(doc),
            [format!("by_number.?: {lenient}")],
            "as serde_json, at serde_path_to_error's path"
        );
        assert_eq!(
            problems(json!({"point": {"x": 1, "z": 2}})),
            ["point.z: unknown field `z`, expected `x` or `y`"]
        );
        assert_eq!(
            problems(json!({"external": {"unit": null, "tuple": []}})),
            ["external: expected an object of a single key (the name of a form)"]
        );
    }

    /// Every message serde makes about a value of the wrong type or range,
    /// as `from_value` words it: what was expected first, in JSON's words
    /// (no `f64`, `u32`, `struct`, `sequence`), then what was found as written.
    #[test]
    fn serde_messages_are_worded_for_a_json_file() {
        for (serde, plain) in [
            (
                "invalid type: string \"60\", expected f64",
                "expected a number, got the string \"60\"",
            ),
            (
                "invalid type: floating point `10.0`, expected u32",
                "expected a whole number (no decimal point or exponent), got 10.0",
            ),
            (
                "invalid type: floating point `2.5`, expected u32",
                "expected a whole number, got 2.5",
            ),
            (
                "invalid value: integer `-3`, expected u32",
                "expected a whole number ≥ 0, got -3",
            ),
            (
                "invalid value: integer `5000000000`, expected u32",
                "expected a whole number ≤ 4294967295, got 5000000000",
            ),
            (
                "invalid value: integer `-1`, expected u64",
                "expected a whole number ≥ 0, got -1",
            ),
            (
                "invalid value: integer `18446744073709551615`, expected i64",
                "expected a whole number ≤ 9223372036854775807, got 18446744073709551615",
            ),
            (
                "invalid type: boolean `true`, expected u8",
                "expected a whole number ≥ 0, got true",
            ),
            (
                "invalid type: null, expected a string",
                "expected a string, got null",
            ),
            (
                "invalid type: integer `1`, expected a boolean",
                "expected true or false, got 1",
            ),
            (
                "invalid type: map, expected a sequence",
                "expected an array, got an object",
            ),
            (
                "invalid type: sequence, expected struct ModelSpec",
                "expected an object, got an array",
            ),
            (
                "invalid type: integer `0`, expected internally tagged enum DistSpec",
                "expected an object, got 0",
            ),
            (
                "invalid type: integer `5`, expected string or map",
                "expected a string, got 5",
            ),
            (
                "invalid type: string \"a, expected b\", expected a map",
                "expected an object, got the string \"a, expected b\"",
            ),
            (
                "invalid length 1, expected struct MixtureComponent with 2 elements",
                "expected an object (fields by name, not by position), got an array",
            ),
            (
                "invalid length 3, expected a tuple of size 2",
                "expected an array of 2 elements, got 3 elements",
            ),
            (
                "invalid type: string \"x\", expected f64 at line 0 column 0",
                "expected a number, got the string \"x\"",
            ),
            // Messages that name a field are kept.
            (
                "unknown field `z`, expected `x` or `y`",
                "unknown field `z`, expected `x` or `y`",
            ),
            ("missing field `x`", "missing field `x`"),
            (
                "unknown variant `halt`, expected `finish` or `stop`",
                "unknown variant `halt`, expected `finish` or `stop`",
            ),
        ] {
            assert_eq!(plain_message(serde), plain, "{serde}");
        }
    }

    /// serde stops at the first error; `from_value` takes the field out and
    /// reads again, so each wrong or unknown field is reported, in document
    /// order; an object left without a required field is taken out in turn,
    /// up to an array's element.
    #[test]
    fn every_wrong_field_is_reported_up_to_an_element_that_cannot_be_read() {
        assert_eq!(
            problems(
                json!({"point": {"x": 1, "y": -1, "z": 2}, "list": [{"x": 1.5}], "wrapper": 3})
            ),
            [
                "point.y: expected a whole number ≥ 0, got -1",
                "point.z: unknown field `z`, expected `x` or `y`",
                "list[0].x: expected a whole number, got 1.5",
            ],
            "`x` is required: once it is taken out of list[0], the element cannot be read, \
             and an element stays in its list (the indices after it would move)"
        );
        assert_eq!(
            problems(json!({"point": {"x": "one", "w": 0}, "wrapper": 3})),
            [
                "point.x: expected a whole number ≥ 0, got the string \"one\"",
                "point.w: unknown field `w`, expected `x` or `y`",
                "wrapper: expected an object, got 3",
            ],
            "the point, without its `x`, is taken out, and the wrapper read"
        );
        assert_eq!(
            problems(json!({"point": {"y": 1}, "pair": [1, {"x": -1}]})),
            [
                "point: missing field `x`",
                "pair[1].x: expected a whole number ≥ 0, got -1",
            ]
        );
        let many: Map<String, Value> = (0..100).map(|i| (format!("f{i}"), json!(i))).collect();
        assert_eq!(
            from_value::<Point>(&Value::Object(many)).unwrap_err().len(),
            MAX_PROBLEMS_PER_VALUE
        );
    }

    /// A missing required field is reported with every other required field
    /// missing from the same object, from the type's JSON Schema.
    #[test]
    fn every_missing_required_field_is_named_at_once() {
        #[derive(Debug, Deserialize, Serialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        struct Three {
            a: u32,
            #[serde(default)]
            b: u32,
            c: String,
            d: Vec<u32>,
            #[serde(default)]
            inner: Option<Point>,
            #[serde(default)]
            tagged: Option<Tagged>,
        }
        #[derive(Debug, Deserialize, Serialize, JsonSchema)]
        #[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
        enum Tagged {
            One { p: u32, q: u32 },
            Two { r: u32 },
        }
        let problems = |doc: Value| match from_value::<Three>(&doc) {
            Ok(_) => vec![],
            Err(ps) => ps.iter().map(Problem::to_string).collect(),
        };
        assert_eq!(problems(json!({})), ["missing fields `a`, `c` and `d`"]);
        assert_eq!(problems(json!({"a": 1, "d": []})), ["missing field `c`"]);
        assert_eq!(
            problems(json!({"a": 1, "c": "", "d": [], "inner": {"y": 1}})),
            ["inner: missing field `x`"]
        );
        // A tagged enum: the fields of the form its `kind` names.
        assert_eq!(
            problems(json!({"a": 1, "c": "", "d": [], "tagged": {"kind": "one"}})),
            ["tagged: missing fields `p` and `q`"]
        );
        assert_eq!(
            problems(json!({"a": 1, "c": "", "d": [], "tagged": {"q": 1}})),
            ["tagged: missing field `kind`"]
        );
        // A field reported for its value is not reported missing again.
        assert_eq!(
            problems(json!({"a": -1, "c": "", "d": []})),
            ["a: expected a whole number ≥ 0, got -1"]
        );
    }

    /// A model's whole-number fields are told from its number fields by
    /// the schema, whatever the value written.
    #[test]
    fn whole_number_fields_are_known_by_the_schema() {
        let doc = serde_json::json!({"name": "m",
            "workloads": [{"name": "w", "target": "a", "arrival": {"kind": "poisson", "rate_per_s": 300}}],
            "services": [{"name": "a", "workers": 2}]});
        let whole = |p: &str| is_whole_number_at::<crate::ModelSpec>(&doc, p);
        assert!(whole("services[0].workers"));
        assert!(!whole("workloads[0].arrival.rate_per_s"));
        assert!(!whole("services[1].workers"), "nothing there");
    }
}
