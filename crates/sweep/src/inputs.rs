//! What a sweep's results were computed from, recorded beside them
//! ([`INPUTS_FILE`]): a content hash of each part of the sweep spec that
//! shapes the rows, of the model, and the slice of runs the folder holds.
//! `--resume` and `merge` compare it with the sweep they are given and refuse
//! to mix rows of another model or another sweep, saying what changed.
//!
//! The hashes are 64-bit FNV-1a over canonical JSON (object keys sorted, no
//! white space), so re-indenting or reordering a file's keys changes nothing
//! and the same inputs give the same bytes on every machine.

use crate::{ModelSource, Sweep};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::ops::Range;

/// The file, in a sweep's (or a shard's) output folder.
pub const INPUTS_FILE: &str = "sweep-inputs.json";

/// The contents of [`INPUTS_FILE`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Inputs {
    /// Always `stormsim`.
    pub tool: String,
    /// The sweep's name.
    pub sweep: String,
    /// The model, as the sweep file names it (a file, or `inline`).
    pub model: String,
    /// Each part's hash, `fnv1a64:` and 16 hex digits, by part name (see
    /// [`describe`]).
    pub hashes: BTreeMap<String, String>,
    /// The runs of the whole sweep.
    pub runs: usize,
    /// The runs this folder holds (a shard's slice, or all of them), as
    /// `[start, end)`.
    pub slice: [usize; 2],
}

/// 64-bit FNV-1a.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// JSON with object keys sorted and no white space.
pub fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::from(k.as_str()).to_string());
                out.push(':');
                write_canonical(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn hash_of(value: &Value) -> String {
    format!("fnv1a64:{:016x}", fnv1a64(canonical(value).as_bytes()))
}

/// What a part's hash covers, as a refusal says it changed.
pub fn describe(part: &str, model: &str) -> String {
    match part {
        "model" => format!("the model ({model})"),
        "version" => "the stormsim version".into(),
        "seed" => "the master seed".into(),
        other => format!("the sweep's `{other}`"),
    }
}

impl Inputs {
    /// The inputs of `sweep`'s runs `slice`.
    pub fn of(sweep: &Sweep, slice: Range<usize>) -> Inputs {
        let spec = &sweep.spec;
        let mut model_doc = stormsim_model::parse_json(&sweep.model_text).unwrap_or(Value::Null);
        // For editors only: adding or moving it changes no result.
        if let Some(fields) = model_doc.as_object_mut() {
            fields.remove("$schema");
        }
        let parts: [(&str, Value); 8] = [
            ("model", model_doc),
            ("axes", json(&spec.axes)),
            ("design", json(&spec.design)),
            ("set", Value::Object(spec.set.clone())),
            ("variant", json(&spec.variant)),
            ("replications", Value::from(spec.replications)),
            ("independent_seeds", Value::from(spec.independent_seeds)),
            ("seed", Value::from(sweep.seed)),
        ];
        let mut hashes: BTreeMap<String, String> = parts
            .iter()
            .map(|(k, v)| (k.to_string(), hash_of(v)))
            .collect();
        hashes.insert(
            "version".into(),
            hash_of(&Value::from(env!("CARGO_PKG_VERSION"))),
        );
        Inputs {
            tool: "stormsim".into(),
            sweep: spec.name.clone(),
            model: match &spec.model {
                ModelSource::File(f) => f.clone(),
                ModelSource::Inline(_) => "inline".into(),
            },
            hashes,
            runs: sweep.runs(),
            slice: [slice.start, slice.end],
        }
    }

    /// The file's text (pretty JSON, a final newline).
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("plain data serializes");
        text.push('\n');
        text
    }

    /// What differs between `self` (the recorded inputs) and `now`, in
    /// words, each part once; the slice too, with `compare_slice`.
    pub fn changes(&self, now: &Inputs, compare_slice: bool) -> Vec<String> {
        let mut changes: Vec<String> = Vec::new();
        let parts: std::collections::BTreeSet<&String> =
            self.hashes.keys().chain(now.hashes.keys()).collect();
        for part in parts {
            if self.hashes.get(part) != now.hashes.get(part) {
                changes.push(describe(part, &now.model));
            }
        }
        if self.runs != now.runs && changes.is_empty() {
            changes.push(format!(
                "the number of runs ({} then, {} now)",
                self.runs, now.runs
            ));
        }
        if compare_slice && self.slice != now.slice {
            changes.push(format!(
                "the slice of runs (runs {} to {} then, {} to {} now: another --shard)",
                self.slice[0], self.slice[1], now.slice[0], now.slice[1]
            ));
        }
        changes
    }
}

/// A part of the spec as a JSON value.
fn json<T: Serialize>(part: &T) -> Value {
    serde_json::to_value(part).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fnv1a_matches_its_reference_values() {
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x85944171f73967e8);
    }

    #[test]
    fn canonical_json_ignores_key_order_and_spacing() {
        let a: Value = serde_json::from_str(r#"{"b": [1, {"y": 2, "x": 1}], "a": "s"}"#).unwrap();
        let b = json!({"a": "s", "b": [1, {"x": 1, "y": 2}]});
        assert_eq!(canonical(&a), canonical(&b));
        assert_eq!(canonical(&b), r#"{"a":"s","b":[1,{"x":1,"y":2}]}"#);
    }
}
