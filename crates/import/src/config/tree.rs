//! A configuration document as one tree, whether it was written as YAML or
//! JSON, with the line each value starts on, so that every problem and every
//! unmapped setting can be named by its path and found in the file.
//!
//! YAML is read with `saphyr`, a maintained, pure-Rust YAML 1.2 parser that
//! gives every node its position, resolves anchors and aliases within a node
//! budget (a "billion laughs" file is refused, not expanded) and refuses
//! duplicate keys. JSON is read with `serde_json` (YAML 1.2 is a superset of
//! JSON, but a JSON file indented with tabs is not valid YAML, and
//! `serde_json` names the line and column of a syntax error).

use crate::Problem;
use saphyr::{LoadableYamlNode, MarkedYaml, Scalar, YamlData};

/// One value of a document and the line it starts on (1-based; 0 when
/// unknown, as in JSON input).
#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub line: usize,
    pub value: Value,
}

/// The shapes a configuration value can take. Mappings keep the order of
/// their keys, so that everything derived from them is deterministic.
#[derive(Clone, Debug)]
pub(crate) enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<(String, Node)>),
}

impl Node {
    fn new(line: usize, value: Value) -> Node {
        Node { line, value }
    }

    /// What this value is, for messages ("a string", "a list").
    pub fn kind(&self) -> &'static str {
        match self.value {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) | Value::Float(_) => "a number",
            Value::Str(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }

    /// The entries of a mapping (none for anything else).
    pub fn entries(&self) -> &[(String, Node)] {
        match &self.value {
            Value::Map(entries) => entries,
            _ => &[],
        }
    }

    /// The value under `key`, compared as written.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entries()
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }
}

/// A path inside a document: `clusters[0].circuit_breakers`.
pub(crate) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// The path of a list element.
pub(crate) fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

/// Reads every document of `text` (a YAML stream may hold several,
/// separated by `---`; JSON holds one). Empty documents are left out.
pub(crate) fn parse_documents(file: &str, text: &str) -> Result<Vec<Node>, Vec<Problem>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let problem = |path: String, message: String| Problem {
        file: file.to_string(),
        path,
        message,
    };
    let first = text.trim_start().chars().next();
    if matches!(first, Some('{') | Some('[')) {
        return match serde_json::from_str::<serde_json::Value>(text) {
            Ok(v) => Ok(vec![from_json(&v)]),
            Err(e) => Err(vec![problem(
                String::new(),
                format!(
                    "not valid JSON: line {}, column {}: {e}",
                    e.line(),
                    e.column()
                ),
            )]),
        };
    }
    if let Some((line, depth)) = too_deep(text) {
        return Err(vec![problem(
            String::new(),
            format!(
                "line {line}: lists and mappings nested {depth} deep (aliases expanded), more than the {MAX_DEPTH} this import reads"
            ),
        )]);
    }
    let docs = MarkedYaml::load_from_str(text).map_err(|e| {
        vec![problem(
            String::new(),
            format!(
                "not valid YAML: line {}, column {}: {}",
                e.marker().line(),
                e.marker().col() + 1,
                e.info()
            ),
        )]
    })?;
    let mut problems = Vec::new();
    let mut out = Vec::new();
    for (i, doc) in docs.iter().enumerate() {
        let path = super::document_path(i, docs.len());
        let node = from_yaml(doc, &path, &mut |p, m| problems.push(problem(p, m)));
        if !matches!(node.value, Value::Null) {
            out.push(node);
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}

/// The deepest nesting of lists and mappings a YAML document may have, as
/// `serde_json` limits JSON's: the tree is built, read and dropped by
/// recursion, so an input nested thousands deep would overflow the stack.
pub(crate) const MAX_DEPTH: usize = 128;

/// The line where `text`'s nesting first goes deeper than [`MAX_DEPTH`], and
/// how deep, counting what aliases expand to (`&a` ... `*a` inserts a copy
/// of the anchored node); read from the parser's events, before any tree is
/// built. A syntax error ends the scan: the loader reports it.
fn too_deep(text: &str) -> Option<(usize, usize)> {
    use saphyr_parser::{Event, Parser};
    use std::collections::HashMap;
    // Each open list or mapping's anchor and height so far.
    let mut open: Vec<(usize, usize)> = Vec::new();
    // Each anchored node's height.
    let mut heights: HashMap<usize, usize> = HashMap::new();
    for event in Parser::new_from_str(text) {
        let (event, span) = event.ok()?;
        let height = match event {
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                open.push((anchor, 1));
                if open.len() > MAX_DEPTH {
                    return Some((span.start.line(), open.len()));
                }
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let (anchor, height) = open.pop()?;
                if anchor > 0 {
                    heights.insert(anchor, height);
                }
                height
            }
            Event::Alias(anchor) => {
                let height = heights.get(&anchor).copied().unwrap_or(0);
                if open.len() + height > MAX_DEPTH {
                    return Some((span.start.line(), open.len() + height));
                }
                height
            }
            _ => continue,
        };
        if let Some(parent) = open.last_mut() {
            parent.1 = parent.1.max(height + 1);
        }
    }
    None
}

fn from_json(v: &serde_json::Value) -> Node {
    let value = match v {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        serde_json::Value::String(s) => Value::Str(s.clone()),
        serde_json::Value::Array(items) => Value::Seq(items.iter().map(from_json).collect()),
        serde_json::Value::Object(map) => {
            Value::Map(map.iter().map(|(k, v)| (k.clone(), from_json(v))).collect())
        }
    };
    Node::new(0, value)
}

fn scalar_text(s: &Scalar) -> String {
    match s {
        Scalar::Null => "null".to_string(),
        Scalar::Boolean(b) => b.to_string(),
        Scalar::Integer(i) => i.to_string(),
        Scalar::FloatingPoint(f) => f.to_string(),
        Scalar::String(s) => s.to_string(),
    }
}

fn from_yaml(y: &MarkedYaml, path: &str, problem: &mut dyn FnMut(String, String)) -> Node {
    let line = y.span.start.line();
    let value = match &y.data {
        YamlData::Value(s) => match s {
            Scalar::Null => Value::Null,
            Scalar::Boolean(b) => Value::Bool(*b),
            Scalar::Integer(i) => Value::Int(*i),
            Scalar::FloatingPoint(f) => Value::Float(f.into_inner()),
            Scalar::String(s) => Value::Str(s.to_string()),
        },
        YamlData::Representation(text, _, _) => Value::Str(text.to_string()),
        YamlData::Sequence(items) => Value::Seq(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| from_yaml(item, &index(path, i), problem))
                .collect(),
        ),
        YamlData::Mapping(map) => {
            let mut entries: Vec<(String, Node)> = Vec::with_capacity(map.len());
            let mut merged: Vec<(String, Node)> = Vec::new();
            for (k, v) in map.iter() {
                let key = match &k.data {
                    YamlData::Value(s) => scalar_text(s),
                    YamlData::Representation(text, _, _) => text.to_string(),
                    _ => {
                        problem(
                            path.to_string(),
                            format!(
                                "line {}: a key that is not a plain value (a list or a mapping as a key)",
                                k.span.start.line()
                            ),
                        );
                        continue;
                    }
                };
                let child = from_yaml(v, &join(path, &key), problem);
                if key == "<<" {
                    // YAML 1.1's merge key, which Kubernetes and Spring
                    // files use: the merged mappings' keys, unless the
                    // mapping has them itself.
                    let sources = match child.value {
                        Value::Seq(items) => items,
                        _ => vec![child],
                    };
                    for s in sources {
                        match s.value {
                            Value::Map(es) => merged.extend(es),
                            _ => problem(
                                join(path, "<<"),
                                format!("line {}: a merge key (<<) takes mappings", s.line),
                            ),
                        }
                    }
                } else {
                    entries.push((key, child));
                }
            }
            for (k, v) in merged {
                if !entries.iter().any(|(e, _)| *e == k) {
                    entries.push((k, v));
                }
            }
            Value::Map(entries)
        }
        YamlData::Tagged(_, inner) => return from_yaml(inner, path, problem),
        YamlData::Alias(_) => {
            problem(
                path.to_string(),
                format!("line {line}: an alias to an unknown anchor"),
            );
            Value::Null
        }
        YamlData::BadValue => {
            problem(
                path.to_string(),
                format!("line {line}: a value YAML cannot read (a tag that does not fit it?)"),
            );
            Value::Null
        }
    };
    Node::new(line, value)
}
