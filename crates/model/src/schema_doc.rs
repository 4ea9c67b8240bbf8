//! Markdown references and JSON Schema files of the file formats, generated
//! from the JSON Schema of their serde types (fields, types, defaults and the
//! types' doc comments), so that neither can drift from the types.
//!
//! A format's own module ([`crate::reference`] for models; the sweep crate's
//! for sweep files) writes the prose that is about that format alone (its
//! examples, its particular conventions) and takes the rest from here: the
//! outline of how the types nest, the conventions every format shares, and one
//! section per type.

use schemars::JsonSchema;
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

/// Unit suffixes of field names and what they mean.
const UNITS: [(&str, &str); 3] = [
    ("_ms", "milliseconds"),
    ("_s", "seconds"),
    ("_per_s", "per second"),
];

/// The JSON Schema (draft 2020-12) of `T` as a value.
pub fn schema_of<T: JsonSchema>() -> Value {
    // Through `Serialize`, which orders each schema's keywords as people expect
    // (`$schema`, `title`, `description`, ..., `$defs` last).
    serde_json::to_value(schemars::schema_for!(T)).expect("a schema is JSON")
}

/// A format's generated reference: a Markdown file and a JSON Schema file,
/// committed, made from the format's serde types.
pub struct Reference {
    /// The format, as the Markdown's title names it: `model`, `sweep file`.
    pub format: &'static str,
    /// Its files, as the Markdown names them: `model files`, `sweep files`.
    pub files: &'static str,
    /// The file of the serde types, from the workspace root.
    pub source: &'static str,
    /// The command that regenerates both files.
    pub regenerate: &'static str,
    /// Where the Markdown is committed, from the workspace root.
    pub markdown_path: &'static str,
    /// Where the JSON Schema is committed, from the workspace root.
    pub schema_path: &'static str,
    /// The JSON Schema of the types, as [`schema_of`] gives it.
    pub schema: fn() -> Value,
    /// The Markdown.
    pub markdown: fn() -> String,
}

impl Reference {
    /// The text of the schema file: the schema pretty-printed, with a
    /// trailing newline and a `$comment` (after the dialect) saying how it
    /// was made.
    pub fn json_schema(&self) -> String {
        let mut with_comment = Map::new();
        let comment = format!(
            "Generated from the serde types in {} by `{}`; do not edit.",
            self.source, self.regenerate
        );
        if let Value::Object(fields) = (self.schema)() {
            for (key, value) in fields {
                let is_dialect = key == "$schema";
                with_comment.insert(key, value);
                if is_dialect {
                    with_comment.insert("$comment".into(), Value::String(comment.clone()));
                }
            }
        }
        let mut text = serde_json::to_string_pretty(&Value::Object(with_comment))
            .expect("a JSON value serializes");
        text.push('\n');
        text
    }

    /// Every property name anywhere in the schema, each once.
    pub fn property_names(&self) -> Vec<String> {
        property_names(&(self.schema)())
    }

    /// The committed files, as `(path from the workspace root, text)`.
    pub fn files(&self) -> [(&'static str, String); 2] {
        [
            (self.markdown_path, (self.markdown)()),
            (self.schema_path, self.json_schema()),
        ]
    }

    /// Writes each file whose committed text differs, atomically (a temporary
    /// file beside it, then a rename), below the workspace `root`, and says for
    /// each whether it was `written` or `up to date`.
    pub fn regenerate(&self, root: &Path) -> std::io::Result<Vec<String>> {
        let mut said = Vec::new();
        for (relative, text) in self.files() {
            let path = root.join(relative);
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            if std::fs::read_to_string(&path).is_ok_and(|old| old == text) {
                said.push(format!("{relative}: up to date"));
            } else {
                write_atomically(&path, &text)?;
                said.push(format!("{relative}: written"));
            }
        }
        Ok(said)
    }

    /// The Markdown's title and the note under it: generated from what, by
    /// which command; `to_change` says what to change instead of the file.
    pub fn heading(&self, out: &mut String, to_change: &str) {
        let schema_file = self.schema_path.rsplit('/').next().unwrap_or_default();
        let _ = writeln!(out, "# The stormsim {} format\n", self.format);
        let _ = writeln!(
            out,
            "> Generated from the serde types in `{}`, doc comments included, by `{}`. Do \
             not edit: change {to_change} and regenerate; a test fails while this file is out \
             of date. The same types give the JSON Schema [`{schema_file}`]({schema_file}), \
             which editors can use to complete and check {}.\n",
            self.source, self.regenerate, self.files
        );
    }
}

fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// The anchor GitHub gives a Markdown heading: lower case, punctuation dropped,
/// spaces as hyphens.
pub fn heading_anchor(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .flat_map(char::to_lowercase)
        .collect()
}

/// Every property name anywhere in `schema`, in document order, each once.
pub fn property_names(schema: &Value) -> Vec<String> {
    let mut names = Vec::new();
    collect_property_names(schema, &mut names);
    names
}

/// What a named schema (the root or a definition) describes.
enum Shape<'a> {
    /// An object with named fields.
    Object,
    /// Objects in several forms told apart by a constant string field (`kind`).
    Tagged {
        tag: String,
        forms: Vec<(String, &'a Value)>,
    },
    /// One of a few strings: (value, description).
    Strings(Vec<(String, Option<String>)>),
    /// Anything else.
    Other,
}

/// A field of a type that holds other types.
struct TypedField<'s> {
    /// For a form of a tagged type: the tag and its value.
    form: Option<(String, String)>,
    /// The field.
    field: String,
    /// Its schema.
    schema: &'s Value,
    /// The types it holds, in order.
    refs: Vec<String>,
}

/// A field that holds another type: where it is, for "used in" links.
struct Use {
    /// The type holding the field.
    owner: String,
    /// For a form of a tagged type, the tag value.
    form: Option<String>,
    /// The field.
    field: String,
}

/// A Markdown reference of a file format, rendered from its JSON Schema.
pub struct SchemaDoc<'a> {
    root: &'a Value,
    root_name: String,
    defs: Map<String, Value>,
}

impl<'a> SchemaDoc<'a> {
    /// The reference of `root`, a schema as [`schema_of`] gives it: its
    /// `title` names the root type, its `$defs` the others.
    pub fn new(root: &'a Value) -> Self {
        SchemaDoc {
            root,
            root_name: root
                .get("title")
                .and_then(Value::as_str)
                .unwrap_or("File")
                .to_string(),
            defs: root
                .get("$defs")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
        }
    }

    /// The root type's name (the schema's `title`).
    pub fn root_name(&self) -> &str {
        &self.root_name
    }

    /// The schema named `name`: the root or a definition.
    fn named(&self, name: &str) -> Option<&Value> {
        if name == self.root_name {
            Some(self.root)
        } else {
            self.defs.get(name)
        }
    }

    /// The type a `$ref` names.
    fn ref_name(&self, reference: &str) -> Option<String> {
        if reference == "#" {
            return Some(self.root_name.clone());
        }
        let name = reference.strip_prefix("#/$defs/")?;
        Some(name.replace("~1", "/").replace("~0", "~"))
    }

    /// Every type referenced inside `schema`, in document order.
    fn refs_in(&self, schema: &Value, out: &mut Vec<String>) {
        match schema {
            Value::Object(map) => {
                for (key, value) in map {
                    match (key.as_str(), value) {
                        ("$defs" | "default" | "examples" | "const" | "enum", _) => {}
                        ("$ref", Value::String(r)) => out.extend(self.ref_name(r)),
                        _ => self.refs_in(value, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| self.refs_in(v, out)),
            _ => {}
        }
    }

    /// The root first, then every definition in the order first referenced,
    /// depth first from the root in field order (so each type comes right after
    /// the first type that uses it, as in the outline); unreferenced
    /// definitions, if any, last.
    fn section_order(&self) -> Vec<String> {
        let mut order = Vec::new();
        let mut seen = HashSet::new();
        seen.insert(self.root_name.clone());
        self.visit(&self.root_name, &mut seen, &mut order);
        for name in self.defs.keys() {
            if seen.insert(name.clone()) {
                order.push(name.clone());
            }
        }
        order
    }

    fn visit(&self, name: &str, seen: &mut HashSet<String>, order: &mut Vec<String>) {
        order.push(name.to_string());
        let Some(schema) = self.named(name) else {
            return;
        };
        let mut refs = Vec::new();
        self.refs_in(schema, &mut refs);
        for r in refs {
            if self.named(&r).is_some() && seen.insert(r.clone()) {
                self.visit(&r, seen, order);
            }
        }
    }

    fn shape<'s>(&self, schema: &'s Value) -> Shape<'s> {
        if schema.get("properties").is_some() {
            return Shape::Object;
        }
        if let Some(values) = schema.get("enum").and_then(Value::as_array) {
            if let Some(strings) = values
                .iter()
                .map(|v| v.as_str().map(|s| (s.to_string(), None)))
                .collect()
            {
                return Shape::Strings(strings);
            }
        }
        let Some(alternatives) = schema
            .get("oneOf")
            .or_else(|| schema.get("anyOf"))
            .and_then(Value::as_array)
        else {
            return Shape::Other;
        };
        let strings: Option<Vec<_>> = alternatives
            .iter()
            .map(|a| {
                let value = a.get("const")?.as_str()?.to_string();
                Some((value, description(a)))
            })
            .collect();
        if let Some(strings) = strings {
            return Shape::Strings(strings);
        }
        let tag_of = |a: &Value, tag: &str| {
            a.get("properties")?
                .get(tag)?
                .get("const")?
                .as_str()
                .map(str::to_string)
        };
        let first_keys = alternatives
            .first()
            .and_then(|a| a.get("properties"))
            .and_then(Value::as_object);
        let tag = first_keys.and_then(|keys| {
            keys.keys()
                .find(|k| alternatives.iter().all(|a| tag_of(a, k).is_some()))
        });
        match tag {
            Some(tag) => Shape::Tagged {
                tag: tag.clone(),
                forms: alternatives
                    .iter()
                    .map(|a| (tag_of(a, tag).unwrap_or_default(), a))
                    .collect(),
            },
            None => Shape::Other,
        }
    }

    /// A link to the section of type `name`.
    pub fn link(&self, name: &str) -> String {
        format!("[{name}](#{})", heading_anchor(name))
    }

    fn form_heading(name: &str, tag: &str, value: &str) -> String {
        format!("{name}: `\"{tag}\": \"{value}\"`")
    }

    /// How a value's type reads in a table.
    fn type_of(&self, schema: &Value) -> String {
        if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
            let Some(name) = self.ref_name(r) else {
                return format!("`{r}`");
            };
            return match self.named(&name).map(|s| self.shape(s)) {
                Some(Shape::Strings(values)) => {
                    format!(
                        "{} ({})",
                        one_of(values.iter().map(|v| &v.0)),
                        self.link(&name)
                    )
                }
                _ => self.link(&name),
            };
        }
        if let Some(c) = schema.get("const") {
            return format!("`{}`", compact(c));
        }
        if let Shape::Strings(values) = self.shape(schema) {
            return one_of(values.iter().map(|v| &v.0));
        }
        if let Some(alternatives) = schema
            .get("anyOf")
            .or_else(|| schema.get("oneOf"))
            .and_then(Value::as_array)
        {
            let types: Vec<String> = alternatives
                .iter()
                .filter(|a| !is_null(a))
                .map(|a| self.type_of(a))
                .collect();
            return if types.is_empty() {
                "null".into()
            } else {
                types.join(" or ")
            };
        }
        let types: Vec<&str> = match schema.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .collect(),
            _ => return "any JSON value".into(),
        };
        let types: Vec<String> = types.iter().map(|t| self.simple_type(t, schema)).collect();
        if types.is_empty() {
            "null".into()
        } else {
            types.join(" or ")
        }
    }

    fn simple_type(&self, t: &str, schema: &Value) -> String {
        match t {
            "integer" | "number" => {
                let mut text = t.to_string();
                if let Some(min) = schema.get("minimum") {
                    let _ = write!(text, " ≥ {min}");
                }
                if let Some(min) = schema.get("exclusiveMinimum") {
                    let _ = write!(text, " > {min}");
                }
                if let Some(max) = schema.get("maximum") {
                    let _ = write!(text, " ≤ {max}");
                }
                if let Some(max) = schema.get("exclusiveMaximum") {
                    let _ = write!(text, " < {max}");
                }
                text
            }
            "boolean" => "boolean (`true` or `false`)".into(),
            "array" => match schema.get("items") {
                Some(items) => format!("list of {}", self.type_of(items)),
                None => "list".into(),
            },
            "object" => match schema.get("additionalProperties") {
                _ if schema.get("properties").is_some() => "object".into(),
                Some(Value::Bool(false)) => "empty object".into(),
                Some(Value::Object(values)) if !values.is_empty() => {
                    format!(
                        "object: any keys, values {}",
                        self.type_of(&Value::Object(values.clone()))
                    )
                }
                _ => "object: any keys, any JSON values".into(),
            },
            other => other.to_string(),
        }
    }

    /// The "required / default" cell.
    fn requirement(schema: &Value, field: &str, required: &[&str]) -> String {
        if required.contains(&field) {
            return "**required**".into();
        }
        match schema.get("default") {
            None | Some(Value::Null) => "optional".into(),
            Some(default) => format!("default `{}`", compact(default)),
        }
    }

    /// A table of an object's fields.
    fn field_table(&self, out: &mut String, object: &Value) {
        let empty = Map::new();
        let properties = object
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let required: Vec<&str> = object
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if properties.is_empty() {
            out.push_str("No fields.\n\n");
            return;
        }
        out.push_str("| Field | Type | Required / default | Description |\n");
        out.push_str("| --- | --- | --- | --- |\n");
        for (field, schema) in properties {
            let _ = writeln!(
                out,
                "| `{field}` | {} | {} | {} |",
                cell(&self.type_of(schema)),
                cell(&Self::requirement(schema, field, &required)),
                cell(
                    &description(schema).unwrap_or_else(|| match schema.get("const") {
                        Some(_) => "Names this form.".into(),
                        None => String::new(),
                    })
                ),
            );
        }
        out.push('\n');
    }

    /// The fields of the type `name` that hold other named types, in order:
    /// (the form they are in, for a tagged type: its tag and value; the
    /// field; its schema; the types it holds).
    fn typed_fields(&self, name: &str) -> Vec<TypedField<'_>> {
        let Some(schema) = self.named(name) else {
            return Vec::new();
        };
        let objects: Vec<(Option<(String, String)>, &Value)> = match self.shape(schema) {
            Shape::Object => vec![(None, schema)],
            Shape::Tagged { tag, forms } => forms
                .into_iter()
                .map(|(value, form)| (Some((tag.clone(), value)), form))
                .collect(),
            _ => Vec::new(),
        };
        let mut fields = Vec::new();
        for (form, object) in objects {
            let properties = object.get("properties").and_then(Value::as_object);
            for (field, field_schema) in properties.into_iter().flatten() {
                let mut refs = Vec::new();
                self.refs_in(field_schema, &mut refs);
                if !refs.is_empty() {
                    fields.push(TypedField {
                        form: form.clone(),
                        field: field.clone(),
                        schema: field_schema,
                        refs,
                    });
                }
            }
        }
        fields
    }

    /// Every field, in every named type, that holds another named type.
    fn uses(&self, order: &[String]) -> Vec<(String, Use)> {
        let mut uses = Vec::new();
        for owner in order {
            for typed in self.typed_fields(owner) {
                for r in typed.refs {
                    uses.push((
                        r,
                        Use {
                            owner: owner.clone(),
                            form: typed.form.as_ref().map(|(_, value)| value.clone()),
                            field: typed.field.clone(),
                        },
                    ));
                }
            }
        }
        uses
    }

    fn use_link(&self, u: &Use) -> String {
        match &u.form {
            None => format!("`{}` in {}", u.field, self.link(&u.owner)),
            Some(value) => {
                let tag = match self.named(&u.owner).map(|s| self.shape(s)) {
                    Some(Shape::Tagged { tag, .. }) => tag,
                    _ => String::new(),
                };
                let heading = Self::form_heading(&u.owner, &tag, value);
                format!(
                    "`{}` in [{} `{value}`](#{})",
                    u.field,
                    u.owner,
                    heading_anchor(&heading)
                )
            }
        }
    }

    /// The nesting of types, as a list: each type's fields that hold other
    /// types, each type expanded where first met.
    fn outline(&self, out: &mut String) {
        let mut expanded = HashSet::new();
        expanded.insert(self.root_name.clone());
        let root = self.root_name.clone();
        let _ = writeln!(out, "- {}: the file", self.link(&root));
        self.outline_of(out, &root, 1, &mut expanded);
        out.push('\n');
    }

    fn outline_of(
        &self,
        out: &mut String,
        name: &str,
        depth: usize,
        expanded: &mut HashSet<String>,
    ) {
        let indent = "  ".repeat(depth);
        for typed in self.typed_fields(name) {
            let within = typed
                .form
                .map(|(tag, value)| format!(" (in `{tag}: {value}`)"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "{indent}- `{}`{within}: {}",
                typed.field,
                self.type_of(typed.schema)
            );
            for r in typed.refs {
                if self.named(&r).is_some() && expanded.insert(r.clone()) {
                    self.outline_of(out, &r, depth + 1, expanded);
                }
            }
        }
    }

    /// The units in field names, for the conventions: (suffix, meaning, an
    /// example field), in the order of [`UNITS`], only those in use.
    fn units(&self) -> Vec<(&'static str, &'static str, String)> {
        let mut names = Vec::new();
        collect_property_names(self.root, &mut names);
        // The longest suffix that matches: `rate_per_s` is per second, not seconds.
        let mut by_length = UNITS.to_vec();
        by_length.sort_by_key(|(suffix, _)| std::cmp::Reverse(suffix.len()));
        let mut found: Vec<(&'static str, &'static str, String)> = Vec::new();
        for name in &names {
            let unit = by_length.iter().find(|(suffix, _)| name.ends_with(suffix));
            if let Some(&(suffix, meaning)) = unit {
                if !found.iter().any(|f| f.0 == suffix) {
                    found.push((suffix, meaning, name.clone()));
                }
            }
        }
        found.sort_by_key(|f| UNITS.iter().position(|u| u.0 == f.0));
        found
    }

    /// The root's required fields, each in backticks.
    pub fn required_fields(&self) -> Vec<String> {
        self.root
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(|f| format!("`{f}`"))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The "Structure" section: how the types nest.
    pub fn structure(&self, out: &mut String) {
        out.push_str("## Structure\n\n");
        out.push_str(
            "How the types nest (only fields that hold another type are shown; a type is \
             expanded where it first appears):\n\n",
        );
        self.outline(out);
    }

    /// The "Conventions" section's heading and the conventions every format
    /// shares, as a list that the format's own may continue: units in names,
    /// unknown fields (`misspelt` for `meant` being the example), optional
    /// fields, tagged objects.
    pub fn conventions(&self, out: &mut String, misspelt: &str, meant: &str) {
        out.push_str("## Conventions\n\n");
        let units = self.units();
        if !units.is_empty() {
            let list: Vec<String> = units
                .iter()
                .map(|(suffix, meaning, example)| format!("`{suffix}` {meaning} (`{example}`)"))
                .collect();
            let names = property_names(self.root);
            let bare: Vec<String> = UNITS
                .iter()
                .map(|(suffix, _)| &suffix[1..])
                .filter(|unit| names.iter().any(|n| n == unit))
                .map(|unit| format!("`{unit}`"))
                .collect();
            let _ = write!(out, "- **Units are in the names**: {}.", and_list(&list));
            if !bare.is_empty() {
                let _ = write!(
                    out,
                    " A field named after a unit alone ({}) is in that unit.",
                    and_list(&bare)
                );
            }
            out.push_str(" Numbers may have fractions: `0.5` ms is half a millisecond.\n");
        }
        let _ = writeln!(
            out,
            "- **Unknown fields are errors**, so a misspelt field (`{misspelt}` for `{meant}`) \
             is reported with its JSON path instead of silently ignored."
        );
        out.push_str(
            "- **Optional fields** may be left out or set to `null`; both mean the field is \
             absent, and its description says what that means. A field with a default takes \
             the default when left out.\n",
        );
        let order = self.section_order();
        let tagged: Vec<(String, String)> = order
            .iter()
            .filter_map(|name| match self.shape(self.named(name)?) {
                Shape::Tagged { tag, .. } => Some((self.link(name), tag)),
                _ => None,
            })
            .collect();
        if let Some((_, first_tag)) = tagged.first() {
            let links: Vec<String> = if tagged.iter().all(|(_, tag)| tag == first_tag) {
                tagged.iter().map(|(link, _)| link.clone()).collect()
            } else {
                tagged
                    .iter()
                    .map(|(link, tag)| format!("{link} (by `{tag}`)"))
                    .collect()
            };
            let _ = writeln!(
                out,
                "- **Objects with several forms are tagged**: a field (`{first_tag}`) \
                 names the form, which decides the other fields: {}.",
                and_list(&links)
            );
        }
    }

    /// The "Types" section, one section per type after it, ending the
    /// document: `out` ends with one newline.
    pub fn types(&self, out: &mut String) {
        let order = self.section_order();
        let uses = self.uses(&order);
        out.push_str("## Types\n\n");
        out.push_str(
            "One section per type, in the order of the outline in [Structure](#structure). \
             Each table gives a field's JSON type, whether it is required or else its \
             default, and what it means.\n\n",
        );
        for name in &order {
            let Some(schema) = self.named(name) else {
                continue;
            };
            let _ = writeln!(out, "## {name}\n");
            if let Some(d) = paragraphs(schema) {
                let _ = writeln!(out, "{d}\n");
            }
            let used: Vec<String> = uses
                .iter()
                .filter(|(r, _)| r == name)
                .map(|(_, u)| self.use_link(u))
                .collect();
            if !used.is_empty() {
                let _ = writeln!(out, "Used as: {}.\n", used.join(", "));
            }
            match self.shape(schema) {
                Shape::Object => self.field_table(out, schema),
                Shape::Strings(values) => {
                    out.push_str("A string, one of:\n\n| Value | Meaning |\n| --- | --- |\n");
                    for (value, meaning) in values {
                        let _ = writeln!(
                            out,
                            "| `{value}` | {} |",
                            cell(&meaning.unwrap_or_default())
                        );
                    }
                    out.push('\n');
                }
                Shape::Tagged { tag, forms } => {
                    let _ = writeln!(
                        out,
                        "An object whose `{tag}` is one of the following; the rest of its \
                         fields depend on it.\n\n| `{tag}` | Meaning |\n| --- | --- |"
                    );
                    for (value, form) in &forms {
                        let heading = Self::form_heading(name, &tag, value);
                        let _ = writeln!(
                            out,
                            "| [`{value}`](#{}) | {} |",
                            heading_anchor(&heading),
                            cell(&summary(form).unwrap_or_default())
                        );
                    }
                    out.push('\n');
                    for (value, form) in &forms {
                        let _ = writeln!(out, "### {}\n", Self::form_heading(name, &tag, value));
                        if let Some(d) = paragraphs(form) {
                            let _ = writeln!(out, "{d}\n");
                        }
                        let _ = writeln!(out, "Written `{}`.\n", skeleton(form));
                        self.field_table(out, form);
                    }
                }
                Shape::Other => match described_alternatives(schema) {
                    Some(alternatives) => {
                        out.push_str("One of:\n\n| Type | Meaning |\n| --- | --- |\n");
                        for (alternative, meaning) in alternatives {
                            let _ = writeln!(
                                out,
                                "| {} | {} |",
                                cell(&self.type_of(alternative)),
                                cell(&meaning)
                            );
                        }
                        out.push('\n');
                    }
                    None => {
                        let _ = writeln!(out, "Type: {}.\n", self.type_of(schema));
                    }
                },
            }
        }
        while out.ends_with("\n\n") {
            out.pop();
        }
    }
}

/// An object with its required fields: constants as they are, the rest `…`.
fn skeleton(object: &Value) -> String {
    let required: Vec<&str> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let fields: Vec<String> = object
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(name, _)| required.contains(&name.as_str()))
        .map(|(name, schema)| {
            let value = schema.get("const").map_or_else(|| "…".to_string(), compact);
            format!("{}: {value}", Value::String(name.clone()))
        })
        .collect();
    format!("{{{}}}", fields.join(", "))
}

/// The alternatives of a schema that is one of several (an untagged enum),
/// each with its description, when every one has one.
fn described_alternatives(schema: &Value) -> Option<Vec<(&Value, String)>> {
    schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))?
        .as_array()?
        .iter()
        .filter(|a| !is_null(a))
        .map(|a| Some((a, description(a)?)))
        .collect()
}

/// A schema's description, its lines joined into one.
fn description(schema: &Value) -> Option<String> {
    let text = schema.get("description")?.as_str()?;
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!joined.is_empty()).then_some(joined)
}

/// A description's paragraphs, each on one line, a blank line between: for a
/// section of its own, where a form's definition may take several.
fn paragraphs(schema: &Value) -> Option<String> {
    let text = schema.get("description")?.as_str()?;
    let kept: Vec<String> = text
        .split("\n\n")
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty())
        .collect();
    (!kept.is_empty()).then(|| kept.join("\n\n"))
}

/// A description's first paragraph: what a table's cell has room for.
fn summary(schema: &Value) -> Option<String> {
    paragraphs(schema).map(|p| p.split("\n\n").next().unwrap_or_default().to_string())
}

fn is_null(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
}

/// `one of: `a`, `b``.
fn one_of<'s>(values: impl Iterator<Item = &'s String>) -> String {
    let values: Vec<String> = values.map(|v| format!("`{v}`")).collect();
    format!("one of: {}", values.join(", "))
}

/// `a`, `a and b`, `a, b and c`.
pub fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// One-line JSON with a space after `:` and `,`, so that a table cell can wrap.
fn compact(value: &Value) -> String {
    match value {
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(compact).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) => {
            let fields: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), compact(v)))
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
        other => other.to_string(),
    }
}

/// Text safe in a Markdown table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// Every property name anywhere in a schema, in document order, without repeats.
fn collect_property_names(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                if key == "properties" {
                    if let Value::Object(properties) = value {
                        for name in properties.keys() {
                            if !out.contains(name) {
                                out.push(name.clone());
                            }
                        }
                    }
                }
                if key != "default" && key != "examples" {
                    collect_property_names(value, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_property_names(v, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_follow_github() {
        assert_eq!(heading_anchor("DistSpec"), "distspec");
        assert_eq!(
            heading_anchor("DistSpec: `\"kind\": \"at_once\"`"),
            "distspec-kind-at_once"
        );
    }
}
