//! The one shape both trace formats are read into, and the small readers
//! (ids, timestamps) they share.

use crate::{Problem, Unmapped};
use serde_json::Value;

/// What a span stands for, as OpenTelemetry's `SpanKind` says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Not said (OTLP's 0, or a Jaeger span without a `span.kind` tag).
    Unspecified,
    Internal,
    Server,
    Client,
    Producer,
    Consumer,
}

impl Kind {
    /// OTLP's enum, by number (`2`) or by name (`SPAN_KIND_SERVER`).
    pub(crate) fn from_otlp(v: &Value) -> Option<Kind> {
        if let Some(n) = v.as_u64() {
            return Kind::from_number(n);
        }
        let s = v.as_str()?;
        if let Ok(n) = s.parse::<u64>() {
            return Kind::from_number(n);
        }
        Some(match s.strip_prefix("SPAN_KIND_").unwrap_or(s) {
            "UNSPECIFIED" => Kind::Unspecified,
            "INTERNAL" => Kind::Internal,
            "SERVER" => Kind::Server,
            "CLIENT" => Kind::Client,
            "PRODUCER" => Kind::Producer,
            "CONSUMER" => Kind::Consumer,
            _ => return None,
        })
    }

    fn from_number(n: u64) -> Option<Kind> {
        Some(match n {
            0 => Kind::Unspecified,
            1 => Kind::Internal,
            2 => Kind::Server,
            3 => Kind::Client,
            4 => Kind::Producer,
            5 => Kind::Consumer,
            _ => return None,
        })
    }

    /// Jaeger's `span.kind` tag (OpenTracing's lower-case names).
    pub(crate) fn from_jaeger(s: &str) -> Option<Kind> {
        Some(match s.to_ascii_lowercase().as_str() {
            "server" => Kind::Server,
            "client" => Kind::Client,
            "producer" => Kind::Producer,
            "consumer" => Kind::Consumer,
            "internal" => Kind::Internal,
            "" | "unspecified" => Kind::Unspecified,
            _ => return None,
        })
    }
}

/// One span, whatever format it came in. Ids are normalised (lower-case hex
/// without leading zeros) so that OTLP's hex and base64 forms, and Jaeger's
/// ids with or without their leading zeros, compare equal.
#[derive(Clone, Debug)]
pub(crate) struct Span {
    pub trace: String,
    pub id: String,
    pub parent: Option<String>,
    pub service: String,
    pub kind: Kind,
    /// Unix nanoseconds on the clock of the host that recorded the span.
    pub start_ns: u64,
    pub end_ns: u64,
    /// The span's status says it failed.
    pub error: bool,
    /// Index of its file in the inputs.
    pub file: usize,
    /// Where it is in its file (`line 3: resourceSpans[0].scopeSpans[0].spans[4]`).
    pub path: String,
}

impl Span {
    pub(crate) fn duration_ns(&self) -> u64 {
        self.end_ns - self.start_ns
    }
}

/// What reading the files gave: the spans, what stops the import, and what
/// was read but cannot be used.
#[derive(Debug, Default)]
pub(crate) struct Read {
    pub spans: Vec<Span>,
    pub problems: Vec<Problem>,
    pub unmapped: Vec<Unmapped>,
}

impl Read {
    pub(crate) fn problem(&mut self, file: &str, path: String, message: impl Into<String>) {
        self.problems.push(Problem {
            file: file.to_string(),
            path,
            message: message.into(),
        });
    }

    pub(crate) fn unmapped(&mut self, file: &str, path: String, message: impl Into<String>) {
        self.unmapped.push(Unmapped {
            file: file.to_string(),
            path,
            message: message.into(),
        });
    }
}

/// Joins a location prefix (`line 3: `, or nothing) and a key path.
pub(crate) fn at(prefix: &str, path: &str) -> String {
    format!("{prefix}{path}")
}

/// An id as read: absent or all zeros (no parent), or normalised.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Id {
    None,
    Some(String),
}

/// Reads a trace or span id written as hex (the collector's OTLP/JSON,
/// Jaeger) or as base64 (protobuf's canonical JSON, as Python's
/// `MessageToJson` writes `bytes`). A string of 16 or 32 hex digits is hex
/// (an 8- or 16-byte id is never written in base64 with that length: base64
/// of 8 bytes has 12 characters, of 16 bytes 24); otherwise base64 of 8 or
/// 16 bytes; otherwise hex of any length (Jaeger drops leading zeros).
pub(crate) fn read_id(s: &str) -> Result<Id, String> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(Id::None);
    }
    let all_hex = s.bytes().all(|b| b.is_ascii_hexdigit());
    let hex = if all_hex && (s.len() == 16 || s.len() == 32) {
        s.to_ascii_lowercase()
    } else if let Some(bytes) = base64(s).filter(|b| b.len() == 8 || b.len() == 16) {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    } else if all_hex && s.len() <= 32 {
        s.to_ascii_lowercase()
    } else {
        return Err(format!(
            "{s:?} is not an id: expected 16 or 32 hex digits, or base64 of 8 or 16 bytes"
        ));
    };
    let trimmed = hex.trim_start_matches('0');
    if trimmed.is_empty() {
        Ok(Id::None)
    } else {
        Ok(Id::Some(trimmed.to_string()))
    }
}

/// Reads the id field `v` (at `path`), recording a problem when it is not
/// one; `required`: absent, empty or all zeros is a problem too.
pub(crate) fn id_field(
    v: Option<&Value>,
    required: bool,
    file: &str,
    path: String,
    read: &mut Read,
) -> Option<Id> {
    let problem = match v {
        None | Some(Value::Null) if !required => return Some(Id::None),
        None | Some(Value::Null) => "missing".to_string(),
        Some(Value::String(s)) => match read_id(s) {
            Ok(Id::None) if required => "an id of all zeros is no id".to_string(),
            Ok(id) => return Some(id),
            Err(e) => e,
        },
        Some(other) => format!("expected an id as a string, got {}", type_name(other)),
    };
    read.problem(file, path, problem);
    None
}

/// Decodes standard or URL-safe base64, padded or not; `None` if it is not.
fn base64(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=');
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for b in s.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    // Leftover bits must be padding zeros, and a lone character is no byte.
    (acc == 0 && bits < 6).then_some(out)
}

/// A non-negative integer written as a JSON number or as a string of digits
/// (protobuf's JSON writes 64-bit integers as strings).
pub(crate) fn read_u64(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.is_finite() && *f >= 0.0 && f.fract() == 0.0 && *f < 1.8e19)
                .map(|f| f as u64)
        }),
        Value::String(s) => s.trim().parse::<u64>().ok(),
        _ => None,
    }
}

/// The JSON type of a value, for messages.
pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_in_hex_and_base64_are_the_same_id() {
        let hex = read_id("5B8EFFF798038103D269B633813FC60C").unwrap();
        let b64 = read_id("W47/95gDgQPSabYzgT/GDA==").unwrap();
        assert_eq!(hex, b64);
        assert_eq!(
            read_id("EEE19B7EC3C1B174").unwrap(),
            read_id("7uGbfsPBsXQ=").unwrap()
        );
        assert_eq!(
            read_id("0000000000000002").unwrap(),
            Id::Some("2".to_string())
        );
        assert_eq!(read_id("2").unwrap(), Id::Some("2".to_string()));
        assert_eq!(read_id("").unwrap(), Id::None);
        assert_eq!(read_id("AAAAAAAAAAA=").unwrap(), Id::None);
        assert!(read_id("not an id!").is_err());
    }

    #[test]
    fn integers_as_numbers_or_strings() {
        assert_eq!(
            read_u64(&serde_json::json!("1544712660000000000")),
            Some(1544712660000000000)
        );
        assert_eq!(
            read_u64(&serde_json::json!(1544712660000000000u64)),
            Some(1544712660000000000)
        );
        assert_eq!(read_u64(&serde_json::json!(-1)), None);
        assert_eq!(read_u64(&serde_json::json!("12a")), None);
    }

    #[test]
    fn kinds_by_number_and_name() {
        assert_eq!(Kind::from_otlp(&serde_json::json!(2)), Some(Kind::Server));
        assert_eq!(
            Kind::from_otlp(&serde_json::json!("SPAN_KIND_CLIENT")),
            Some(Kind::Client)
        );
        assert_eq!(Kind::from_otlp(&serde_json::json!(9)), None);
        assert_eq!(Kind::from_jaeger("server"), Some(Kind::Server));
    }
}
