//! Duplicate keys in a JSON object. serde_json keeps the last of them
//! silently, so `"timeout_ms": 100, "timeout_ms": 1` would run with 1 and
//! whoever reads the file would see 100. A second pass over the text, with a
//! visitor that keeps nothing but the keys of the object it is in, finds
//! every one, with its JSON path.

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::collections::BTreeSet;
use std::fmt;

/// The JSON path of every key written twice (or more) in its object, in the
/// order met; empty if none, or if the text is not JSON (the caller reports
/// that).
pub fn duplicate_keys(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut de = serde_json::Deserializer::from_str(text);
    // A syntax error is reported by the parse proper, with its line.
    let _ = Walk {
        path: String::new(),
        found: &mut found,
    }
    .deserialize(&mut de);
    found
}

/// One value at `path`: its objects' keys are checked, its nested values
/// walked in turn.
struct Walk<'a> {
    path: String,
    found: &'a mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        loop {
            let walk = Walk {
                path: format!("{}[{i}]", self.path),
                found: &mut *self.found,
            };
            if seq.next_element_seed(walk)?.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys = BTreeSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = if self.path.is_empty() {
                key.clone()
            } else {
                format!("{}.{key}", self.path)
            };
            if !keys.insert(key) {
                self.found.push(path.clone());
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            map.next_value_seed(Walk {
                path,
                found: &mut *self.found,
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_duplicate_is_found_at_its_path() {
        let text = r#"{"a": 1, "b": [{"x": 1, "x": 2}, {"y": {"z": 1, "z": 1, "z": 3}}], "a": 2}"#;
        assert_eq!(
            duplicate_keys(text),
            ["b[0].x", "b[1].y.z", "b[1].y.z", "a"]
        );
        assert!(duplicate_keys(r#"{"a": {"a": 1}, "b": [1, "a"]}"#).is_empty());
        assert!(duplicate_keys("{not json").is_empty());
    }
}
