//! Reading typed settings out of a [`Node`] tree: every wrong value becomes
//! a [`Problem`] with its path (the import goes on, to report them all), and
//! every key that is not read becomes an [`Unmapped`] warning, so that
//! nothing in the input is dropped silently.

use super::tree::{join, Node, Value};
use crate::{Problem, Unmapped};

/// What one file's import found besides its settings.
pub(crate) struct Cx {
    pub file: String,
    pub problems: Vec<Problem>,
    pub unmapped: Vec<Unmapped>,
}

/// How a format writes durations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DurationSyntax {
    /// Protocol buffers' JSON `Duration` (Envoy, gRPC): seconds with up to
    /// nine decimals and an `s`: `"0.25s"`.
    Proto,
    /// Go's `time.ParseDuration`, as Istio validates its durations: `"1s"`,
    /// `"250ms"`, `"1m30s"`.
    Go,
    /// Spring Boot's `Duration` binding (resilience4j's `application.yml`):
    /// a whole number with an optional unit (`500ms`, `10s`, `1m`; no unit
    /// is milliseconds), or ISO-8601 (`PT0.5S`).
    Spring,
}

/// Keys compared as the formats' own readers compare them: protobuf's JSON
/// reader takes `num_retries` and `numRetries` alike, Go's JSON reader (gRPC
/// service configs) is case-insensitive, and Spring's relaxed binding takes
/// `failure-rate-threshold`, `failureRateThreshold` and
/// `failure_rate_threshold` as one.
pub(crate) fn norm(key: &str) -> String {
    key.chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

impl Cx {
    pub fn new(file: &str) -> Cx {
        Cx {
            file: file.to_string(),
            problems: Vec::new(),
            unmapped: Vec::new(),
        }
    }

    /// Records a problem with `node`'s line.
    pub fn problem(&mut self, path: &str, node: &Node, message: impl AsRef<str>) {
        let message = match node.line {
            0 => message.as_ref().to_string(),
            line => format!("line {line}: {}", message.as_ref()),
        };
        self.problems.push(Problem {
            file: self.file.clone(),
            path: path.to_string(),
            message,
        });
    }

    /// Records a setting the model cannot carry.
    pub fn unmapped(&mut self, path: &str, message: impl Into<String>) {
        self.unmapped.push(Unmapped {
            file: self.file.clone(),
            path: path.to_string(),
            message: message.into(),
        });
    }

    /// A mapping's fields, or a problem.
    pub fn fields<'n>(&mut self, node: &'n Node, path: &str) -> Option<Fields<'n>> {
        match &node.value {
            Value::Map(entries) => Some(Fields::new(entries, path)),
            _ => {
                self.problem(
                    path,
                    node,
                    format!("expected a mapping, found {}", node.kind()),
                );
                None
            }
        }
    }

    /// A list's items, or a problem.
    pub fn list<'n>(&mut self, node: &'n Node, path: &str) -> Option<&'n [Node]> {
        match &node.value {
            Value::Seq(items) => Some(items),
            _ => {
                self.problem(
                    path,
                    node,
                    format!("expected a list, found {}", node.kind()),
                );
                None
            }
        }
    }

    /// A string (a number or boolean is taken as its text, as YAML readers
    /// of these formats do).
    pub fn string(&mut self, node: &Node, path: &str) -> Option<String> {
        match &node.value {
            Value::Str(s) => Some(s.clone()),
            Value::Int(i) => Some(i.to_string()),
            Value::Float(f) => Some(f.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => {
                self.problem(
                    path,
                    node,
                    format!("expected a string, found {}", node.kind()),
                );
                None
            }
        }
    }

    /// A finite number; a string holding one is taken too (protobuf's JSON
    /// writes 64-bit integers as strings, Spring converts strings).
    pub fn number(&mut self, node: &Node, path: &str) -> Option<f64> {
        let n = match &node.value {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            Value::Str(s) => s.trim().parse::<f64>().ok(),
            _ => None,
        };
        match n {
            Some(n) if n.is_finite() => Some(n),
            _ => {
                self.problem(
                    path,
                    node,
                    format!("expected a number, found {}", describe(node)),
                );
                None
            }
        }
    }

    /// A number at least 0.
    pub fn non_negative(&mut self, node: &Node, path: &str) -> Option<f64> {
        let n = self.number(node, path)?;
        if n < 0.0 {
            self.problem(
                path,
                node,
                format!("expected a number at least 0, found {n}"),
            );
            return None;
        }
        Some(n)
    }

    /// A whole number at least 0.
    pub fn count(&mut self, node: &Node, path: &str) -> Option<u64> {
        let n = self.number(node, path)?;
        if n < 0.0 || n.fract() != 0.0 || n > u32::MAX as f64 {
            self.problem(
                path,
                node,
                format!("expected a whole number at least 0, found {n}"),
            );
            return None;
        }
        Some(n as u64)
    }

    /// A boolean (Spring also reads the strings `true` and `false`).
    pub fn boolean(&mut self, node: &Node, path: &str) -> Option<bool> {
        match &node.value {
            Value::Bool(b) => Some(*b),
            Value::Str(s) if s.eq_ignore_ascii_case("true") => Some(true),
            Value::Str(s) if s.eq_ignore_ascii_case("false") => Some(false),
            _ => {
                self.problem(
                    path,
                    node,
                    format!("expected true or false, found {}", describe(node)),
                );
                None
            }
        }
    }

    /// A duration in milliseconds above 0, for a setting its format's
    /// validation requires to be (an outlier detection interval, say).
    pub fn positive_duration_ms(
        &mut self,
        node: &Node,
        path: &str,
        syntax: DurationSyntax,
    ) -> Option<f64> {
        let ms = self.duration_ms(node, path, syntax)?;
        if ms <= 0.0 {
            self.problem(
                path,
                node,
                format!("expected a duration above 0, found {}", describe(node)),
            );
            return None;
        }
        Some(ms)
    }

    /// A duration in milliseconds, never negative.
    pub fn duration_ms(&mut self, node: &Node, path: &str, syntax: DurationSyntax) -> Option<f64> {
        let parsed = match (&node.value, syntax) {
            (Value::Str(s), DurationSyntax::Proto) => parse_proto(s.trim()),
            (Value::Str(s), DurationSyntax::Go) => parse_go(s.trim()),
            (Value::Str(s), DurationSyntax::Spring) => parse_spring(s.trim()),
            (Value::Int(i), DurationSyntax::Spring) => Ok(*i as f64),
            _ => Err(format!("expected a duration, found {}", describe(node))),
        };
        match parsed {
            Ok(ms) if ms < 0.0 => {
                self.problem(
                    path,
                    node,
                    format!("a negative duration ({})", describe(node)),
                );
                None
            }
            Ok(ms) if !ms.is_finite() => {
                self.problem(path, node, "a duration too long to represent");
                None
            }
            Ok(ms) => Some(ms),
            Err(e) => {
                let hint = match syntax {
                    DurationSyntax::Proto => "seconds with an s, as in \"0.25s\"",
                    DurationSyntax::Go => "a number and a unit, as in \"250ms\" or \"1m30s\"",
                    DurationSyntax::Spring => {
                        "a whole number and a unit (500ms, 10s, 1m), milliseconds alone, or ISO-8601 (PT0.5S)"
                    }
                };
                self.problem(path, node, format!("{e}: write {hint}"));
                None
            }
        }
    }
}

/// A value as it is written, for messages.
fn describe(node: &Node) -> String {
    match &node.value {
        Value::Str(s) => format!("{s:?}"),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => node.kind().to_string(),
    }
}

fn parse_proto(s: &str) -> Result<f64, String> {
    let bad = || format!("{s:?} is not a protobuf duration");
    let secs = s.strip_suffix('s').ok_or_else(bad)?;
    if secs.is_empty()
        || !secs
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == '-')
    {
        return Err(bad());
    }
    let v: f64 = secs.parse().map_err(|_| bad())?;
    Ok(v * 1000.0)
}

/// Go's `time.ParseDuration`: a sign, then one or more decimal numbers
/// each with a unit.
fn parse_go(s: &str) -> Result<f64, String> {
    let bad = || format!("{s:?} is not a duration");
    let (negative, mut rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if rest == "0" {
        return Ok(0.0);
    }
    if rest.is_empty() {
        return Err(bad());
    }
    let mut total = 0.0;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        let (num, tail) = rest.split_at(num_len);
        let n: f64 = num.parse().map_err(|_| bad())?;
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_len);
        let per_ms = match unit {
            "ns" => 1e-6,
            "us" | "µs" | "μs" => 1e-3,
            "ms" => 1.0,
            "s" => 1000.0,
            "m" => 60_000.0,
            "h" => 3_600_000.0,
            _ => return Err(bad()),
        };
        total += n * per_ms;
        rest = tail;
    }
    Ok(if negative { -total } else { total })
}

/// Spring Boot's `DurationStyle.detectAndParse` with milliseconds as the
/// default unit.
fn parse_spring(s: &str) -> Result<f64, String> {
    let bad = || format!("{s:?} is not a duration");
    let upper = s.to_ascii_uppercase();
    let iso = upper.strip_prefix('-').unwrap_or(&upper);
    if iso.starts_with("PT") || iso.starts_with('P') {
        return parse_iso(&upper).ok_or_else(bad);
    }
    let digits_end = s
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && (c == '-' || c == '+'))))
        .map_or(s.len(), |(i, _)| i);
    let (num, unit) = s.split_at(digits_end);
    let n: f64 = num.parse::<i64>().map_err(|_| bad())? as f64;
    let per_ms = match unit.to_ascii_lowercase().as_str() {
        "" | "ms" => 1.0,
        "ns" => 1e-6,
        "us" => 1e-3,
        "s" => 1000.0,
        "m" => 60_000.0,
        "h" => 3_600_000.0,
        "d" => 86_400_000.0,
        _ => return Err(bad()),
    };
    Ok(n * per_ms)
}

/// ISO-8601 durations as `java.time.Duration.parse` reads them: `PnDTnHnMn.nS`.
fn parse_iso(s: &str) -> Option<f64> {
    let (negative, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let s = s.strip_prefix('P')?;
    let (days, time) = match s.split_once('T') {
        Some((d, t)) => (d, Some(t)),
        None => (s, None),
    };
    let mut total = 0.0;
    if !days.is_empty() {
        total += days.strip_suffix('D')?.parse::<f64>().ok()? * 86_400_000.0;
    }
    if let Some(mut t) = time {
        if t.is_empty() {
            return None;
        }
        for (unit, per_ms) in [('H', 3_600_000.0), ('M', 60_000.0), ('S', 1000.0)] {
            if let Some((n, rest)) = t.split_once(unit) {
                total += n.parse::<f64>().ok()? * per_ms;
                t = rest;
            }
        }
        if !t.is_empty() {
            return None;
        }
    }
    Some(if negative { -total } else { total })
}

/// The keys of one mapping, taken one by one; what is not taken is reported
/// as unmapped by [`Fields::finish`].
pub(crate) struct Fields<'n> {
    entries: &'n [(String, Node)],
    used: Vec<bool>,
    path: String,
}

impl<'n> Fields<'n> {
    fn new(entries: &'n [(String, Node)], path: &str) -> Fields<'n> {
        Fields {
            entries,
            used: vec![false; entries.len()],
            path: path.to_string(),
        }
    }

    /// The value under `key` (compared by [`norm`]) and its path; a `null`
    /// value counts as absent.
    pub fn take(&mut self, key: &str) -> Option<(&'n Node, String)> {
        let want = norm(key);
        for (i, (k, v)) in self.entries.iter().enumerate() {
            if !self.used[i] && norm(k) == want {
                self.used[i] = true;
                if matches!(v.value, Value::Null) {
                    return None;
                }
                return Some((v, join(&self.path, k)));
            }
        }
        None
    }

    /// Reports every key not taken: `known` gives the reason for the keys
    /// the format has but the model does not; any other key is unknown.
    pub fn finish(self, cx: &mut Cx, known: &[(&str, &str)], what: &str) {
        for (i, (k, _)) in self.entries.iter().enumerate() {
            if self.used[i] {
                continue;
            }
            let path = join(&self.path, k);
            let nk = norm(k);
            let message = match known.iter().find(|(key, _)| norm(key) == nk) {
                Some((_, why)) => why.to_string(),
                None if k.starts_with('@') => continue,
                None => format!("not a field of {what} that this import knows"),
            };
            cx.unmapped(&path, message);
        }
    }
}
