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
//!   by name, not by position)". Everything else is delegated to serde_json,
//!   and the elements of arrays, the values of objects, `Some` and enum variants
//!   are read through `Strict` again, so the rule holds at any depth.
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
//! The one case left to serde's own message: inside a tagged enum's fields, an
//! array that does not even fit its type by position (a mixture component
//! `[0.5]`) fails in serde's buffer before anything can be compared, with
//! serde's "invalid length 1, expected struct MixtureComponent with 2 elements"
//! at the enum's path. It is refused all the same.

use crate::Problem;
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, EnumAccess, Expected, IntoDeserializer, MapAccess,
    SeqAccess, Unexpected, VariantAccess, Visitor,
};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Error, Map, Value};
use std::fmt::{self, Write};

/// Reads a `T` from `value`, objects only (see the [module docs](self)). Every
/// problem names its JSON path, relative to `value` (empty: `value` itself):
/// the first error serde meets, or every array read as an object.
pub fn from_value<T: DeserializeOwned + Serialize>(value: &Value) -> Result<T, Vec<Problem>> {
    let read: T = serde_path_to_error::deserialize(Strict(value)).map_err(|e| {
        let path = match e.path().to_string() {
            root if root == "." => String::new(),
            path => path,
        };
        vec![Problem::new(
            path,
            clean_serde_message(&e.into_inner().to_string()),
        )]
    })?;
    let mut problems = Vec::new();
    // Serializing a format type cannot fail (string keys, no custom impls); if
    // it did, there would be nothing to compare, and `Strict` alone would stand.
    if let Ok(back) = serde_json::to_value(&read) {
        arrays_read_as_objects(value, &back, &mut String::new(), &mut problems);
    }
    if problems.is_empty() {
        Ok(read)
    } else {
        Err(problems)
    }
}

/// serde_json appends " at line L column C" to messages from a `Value`, where it is
/// meaningless (always line 0): the JSON path says where.
fn clean_serde_message(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
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
            found.push(Problem::new(path.clone(), array_for_object().to_string()));
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

    #[derive(Debug, PartialEq, Deserialize, Serialize)]
    #[serde(deny_unknown_fields)]
    struct Point {
        x: u32,
        #[serde(default)]
        y: u32,
    }

    #[derive(Debug, PartialEq, Deserialize, Serialize)]
    #[serde(rename_all = "snake_case")]
    enum External {
        Unit,
        Newtype(Point),
        Tuple(u32, Point),
        Struct { at: Point },
    }

    #[derive(Debug, PartialEq, Deserialize, Serialize)]
    #[serde(untagged)]
    enum Untagged {
        Name(String),
        Point(Point),
    }

    #[derive(Debug, PartialEq, Deserialize, Serialize)]
    struct Wrapper(Point);

    #[derive(Debug, PartialEq, Deserialize, Serialize)]
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

    const REFUSED: &str =
        "invalid type: sequence, expected an object (fields by name, not by position)";

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
            ["point: invalid type: sequence, expected an object (fields by name, not by position)"],
            "Strict refuses first"
        );
        assert_eq!(
            problems(json!({"untagged": [10, 1], "list": [{"x": 1}]})),
            [format!("untagged: {REFUSED}")]
        );
    }

    #[test]
    fn other_errors_keep_serde_json_messages_without_its_position() {
        assert_eq!(
            problems(json!({"point": {"x": "one"}})),
            ["point.x: invalid type: string \"one\", expected u32"]
        );
        let doc = json!({"by_number": {"seven": {"x": 1}}});
        let lenient = serde_json::from_value::<Shapes>(doc.clone()).unwrap_err();
        assert_eq!(
            problems(doc),
            [format!("by_number.?: {lenient}")],
            "as serde_json"
        );
        assert_eq!(
            problems(json!({"point": {"x": 1, "z": 2}})),
            ["point.z: unknown field `z`, expected `x` or `y`"]
        );
        assert_eq!(
            problems(json!({"external": {"unit": null, "tuple": []}})),
            ["external: invalid value: map, expected map with a single key"]
        );
    }
}
