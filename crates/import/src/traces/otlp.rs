//! OTLP JSON: one `ExportTraceServiceRequest` per line, as the OpenTelemetry
//! Collector's file exporter writes it, or one such object in a whole file
//! (pretty-printed, as `opentelemetry-proto`'s `examples/trace.json`).
//!
//! Both JSON mappings of the protobuf are read: the collector's (hex ids,
//! `kind` and `status.code` as numbers) and protobuf's canonical one that
//! `MessageToJson` writes (base64 ids, enums by name, 64-bit integers as
//! strings).

use super::span::{at, id_field, read_u64, type_name, Id, Kind, Read, Span};
use serde_json::Value;

/// Reads one OTLP JSON file into `read`.
pub(crate) fn read(file_index: usize, file: &str, text: &str, read: &mut Read) {
    for (prefix, doc) in documents(text) {
        match doc {
            Ok(doc) => request(file_index, file, &prefix, &doc, read),
            // In line order with the other problems.
            Err(e) => read.problem(file, prefix.trim_end_matches(": ").to_string(), e),
        }
    }
}

/// The requests in a file, each with the prefix that locates it (`line 3: `;
/// nothing for a file that is one document). A file that is one JSON value
/// is that document (a list: each of its elements); otherwise each non-blank
/// line is one.
fn documents(text: &str) -> Vec<(String, Result<Value, String>)> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(list)) => {
            return list
                .into_iter()
                .enumerate()
                .map(|(i, v)| (format!("[{i}]."), Ok(v)))
                .collect()
        }
        Ok(doc) => return vec![(String::new(), Ok(doc))],
        Err(whole) => {
            // A pretty-printed document with a mistake in it (its first line
            // alone, `{`, is no JSON either): the whole file's error is the
            // one that says where.
            let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            if matches!(first.trim(), "{" | "[") {
                return vec![(String::new(), Err(format!("not JSON: {whole}")))];
            }
        }
    }
    let mut docs = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let doc = serde_json::from_str::<Value>(line).map_err(|e| format!("not JSON: {e}"));
        docs.push((format!("line {}: ", i + 1), doc));
    }
    docs
}

/// One `ExportTraceServiceRequest`.
fn request(file_index: usize, file: &str, prefix: &str, doc: &Value, read: &mut Read) {
    let Some(list) = doc.get("resourceSpans") else {
        let what = match doc {
            Value::Object(_) => "an object without `resourceSpans`".to_string(),
            other => type_name(other).to_string(),
        };
        read.problem(
            file,
            at(prefix, "resourceSpans"),
            format!("expected an ExportTraceServiceRequest (an object with `resourceSpans`), got {what}"),
        );
        return;
    };
    let Some(list) = list.as_array() else {
        read.problem(
            file,
            at(prefix, "resourceSpans"),
            format!("expected a list, got {}", type_name(list)),
        );
        return;
    };
    for (r, rs) in list.iter().enumerate() {
        let rp = format!("resourceSpans[{r}]");
        if !rs.is_object() {
            read.problem(
                file,
                at(prefix, &rp),
                format!(
                    "expected a ResourceSpans (an object), got {}",
                    type_name(rs)
                ),
            );
            continue;
        }
        let service = service_name(file, prefix, &rp, rs, read);
        // `instrumentationLibrarySpans` is the name OTLP used before 0.15.
        let (key, scopes) = match (rs.get("scopeSpans"), rs.get("instrumentationLibrarySpans")) {
            (Some(s), _) => ("scopeSpans", s),
            (None, Some(s)) => ("instrumentationLibrarySpans", s),
            (None, None) => continue,
        };
        let Some(scopes) = scopes.as_array() else {
            read.problem(
                file,
                at(prefix, &format!("{rp}.{key}")),
                format!("expected a list, got {}", type_name(scopes)),
            );
            continue;
        };
        for (s, scope) in scopes.iter().enumerate() {
            let sp = format!("{rp}.{key}[{s}].spans");
            let Some(spans) = scope.get("spans") else {
                continue;
            };
            let Some(spans) = spans.as_array() else {
                read.problem(
                    file,
                    at(prefix, &sp),
                    format!("expected a list, got {}", type_name(spans)),
                );
                continue;
            };
            for (k, v) in spans.iter().enumerate() {
                let path = format!("{sp}[{k}]");
                if let Some(span) = span(file_index, file, prefix, &path, &service, v, read) {
                    read.spans.push(span);
                }
            }
        }
    }
}

/// The resource's `service.name`; OpenTelemetry's `unknown_service` (with a
/// warning) when there is none.
fn service_name(file: &str, prefix: &str, rp: &str, rs: &Value, read: &mut Read) -> String {
    let attrs = rs.pointer("/resource/attributes").and_then(Value::as_array);
    let found = attrs
        .into_iter()
        .flatten()
        .enumerate()
        .find(|(_, a)| a.get("key").and_then(Value::as_str) == Some("service.name"));
    match found {
        Some((i, a)) => match a.pointer("/value/stringValue").and_then(Value::as_str) {
            Some(name) if !name.trim().is_empty() => name.to_string(),
            _ => {
                read.problem(
                    file,
                    at(prefix, &format!("{rp}.resource.attributes[{i}].value")),
                    "expected `service.name` as a non-empty `stringValue`",
                );
                "unknown_service".to_string()
            }
        },
        None => {
            read.unmapped(
                file,
                at(prefix, &format!("{rp}.resource")),
                "no `service.name` attribute: its spans are read as the service `unknown_service`, as OpenTelemetry names it",
            );
            "unknown_service".to_string()
        }
    }
}

/// One span; `None` (with its problems recorded) when it cannot be read.
fn span(
    file_index: usize,
    file: &str,
    prefix: &str,
    path: &str,
    service: &str,
    v: &Value,
    read: &mut Read,
) -> Option<Span> {
    if !v.is_object() {
        read.problem(
            file,
            at(prefix, path),
            format!("expected a span (an object), got {}", type_name(v)),
        );
        return None;
    }
    let before = read.problems.len();
    let id = |field: &str, required: bool, read: &mut Read| {
        id_field(
            v.get(field),
            required,
            file,
            at(prefix, &format!("{path}.{field}")),
            read,
        )
    };
    let trace = id("traceId", true, read);
    let span_id = id("spanId", true, read);
    let parent = id("parentSpanId", false, read);
    let time = |field: &str, read: &mut Read| -> Option<u64> {
        let fp = at(prefix, &format!("{path}.{field}"));
        match v.get(field) {
            None => {
                read.problem(file, fp, "missing");
                None
            }
            Some(t) => {
                let n = read_u64(t);
                if n.is_none() {
                    read.problem(file, fp, format!("expected nanoseconds since 1970 as an integer (or a string of digits), got {t}"));
                }
                n
            }
        }
    };
    let start = time("startTimeUnixNano", read);
    let end = time("endTimeUnixNano", read);
    if let (Some(s), Some(e)) = (start, end) {
        if e < s {
            read.problem(
                file,
                at(prefix, &format!("{path}.endTimeUnixNano")),
                format!("the span ends ({e}) before it starts ({s})"),
            );
        }
    }
    let kind = match v.get("kind") {
        None | Some(Value::Null) => Kind::Unspecified,
        Some(k) => Kind::from_otlp(k).unwrap_or_else(|| {
            read.unmapped(
                file,
                at(prefix, &format!("{path}.kind")),
                format!("unknown span kind {k}: read as INTERNAL"),
            );
            Kind::Internal
        }),
    };
    let error = match v.pointer("/status/code") {
        None | Some(Value::Null) => false,
        Some(c) => match (c.as_u64(), c.as_str()) {
            (Some(n), _) => n == 2,
            (_, Some("STATUS_CODE_ERROR" | "ERROR")) => true,
            (_, Some("STATUS_CODE_OK" | "STATUS_CODE_UNSET" | "OK" | "UNSET")) => false,
            _ => {
                read.unmapped(
                    file,
                    at(prefix, &format!("{path}.status.code")),
                    format!("unknown status code {c}: read as not an error"),
                );
                false
            }
        },
    };
    if read.problems.len() > before {
        return None;
    }
    let (Some(Id::Some(trace)), Some(Id::Some(id)), Some(parent), Some(start_ns), Some(end_ns)) =
        (trace, span_id, parent, start, end)
    else {
        return None;
    };
    Some(Span {
        trace,
        id,
        parent: match parent {
            Id::None => None,
            Id::Some(p) => Some(p),
        },
        service: service.to_string(),
        kind,
        start_ns,
        end_ns,
        error,
        file: file_index,
        path: at(prefix, path),
    })
}
