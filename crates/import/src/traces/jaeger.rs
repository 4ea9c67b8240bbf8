//! Jaeger's JSON: what its UI's "Download JSON" and its query API's
//! `/api/traces` give, `{"data": [trace, ...]}`, where a trace is
//! `{"traceID", "spans": [...], "processes": {"p1": {"serviceName"}}}`. A
//! file holding one trace object, or a list of them, is read too.
//!
//! Times are microseconds (`startTime` since 1970, `duration`); a span's
//! parent is its `CHILD_OF` reference in the same trace (else a
//! `FOLLOWS_FROM` one, else the legacy `parentSpanID`); its kind is the
//! `span.kind` tag; it failed when it has the tag `error=true` or
//! `otel.status_code=ERROR`.

use super::span::{id_field, read_id, read_u64, type_name, Id, Kind, Read, Span};
use serde_json::Value;

/// Reads one Jaeger JSON file into `read`.
pub(crate) fn read(file_index: usize, file: &str, text: &str, read: &mut Read) {
    let doc = match serde_json::from_str::<Value>(text) {
        Ok(doc) => doc,
        Err(e) => {
            read.problem(file, String::new(), format!("not JSON: {e}"));
            return;
        }
    };
    let traces: Vec<(String, &Value)> = match &doc {
        Value::Object(o) if o.contains_key("data") => match &o["data"] {
            Value::Array(list) => list
                .iter()
                .enumerate()
                .map(|(i, t)| (format!("data[{i}]"), t))
                .collect(),
            Value::Null => Vec::new(),
            other => {
                read.problem(
                    file,
                    "data".into(),
                    format!("expected a list of traces, got {}", type_name(other)),
                );
                return;
            }
        },
        Value::Object(o) if o.contains_key("spans") => vec![(String::new(), &doc)],
        Value::Array(list) => list
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("[{i}]"), t))
            .collect(),
        other => {
            read.problem(
                file,
                String::new(),
                format!("expected Jaeger's JSON ({{\"data\": [trace, ...]}}, or a trace with `spans`), got {}", type_name(other)),
            );
            return;
        }
    };
    for (tp, t) in traces {
        trace(file_index, file, &tp, t, read);
    }
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

/// One trace: its spans, their services from `processes`.
fn trace(file_index: usize, file: &str, tp: &str, t: &Value, read: &mut Read) {
    let Some(spans) = t.get("spans").and_then(Value::as_array) else {
        read.problem(
            file,
            join(tp, "spans"),
            "expected a trace's `spans` as a list",
        );
        return;
    };
    let processes = t.get("processes").and_then(Value::as_object);
    for (k, v) in spans.iter().enumerate() {
        let path = join(tp, &format!("spans[{k}]"));
        if let Some(span) = span(file_index, file, &path, v, processes, read) {
            read.spans.push(span);
        }
    }
}

fn span(
    file_index: usize,
    file: &str,
    path: &str,
    v: &Value,
    processes: Option<&serde_json::Map<String, Value>>,
    read: &mut Read,
) -> Option<Span> {
    if !v.is_object() {
        read.problem(
            file,
            path.to_string(),
            format!("expected a span (an object), got {}", type_name(v)),
        );
        return None;
    }
    let before = read.problems.len();
    let id = |field: &str, read: &mut Read| match id_field(
        v.get(field),
        true,
        file,
        format!("{path}.{field}"),
        read,
    ) {
        Some(Id::Some(id)) => Some(id),
        _ => None,
    };
    let trace = id("traceID", read);
    let span_id = id("spanID", read);
    let micros = |field: &str, read: &mut Read| -> Option<u64> {
        let fp = format!("{path}.{field}");
        match v.get(field) {
            None => {
                read.problem(file, fp, "missing");
                None
            }
            Some(t) => {
                let n = read_u64(t).and_then(|us| us.checked_mul(1000));
                if n.is_none() {
                    read.problem(
                        file,
                        fp,
                        format!("expected microseconds as a non-negative integer, got {t}"),
                    );
                }
                n
            }
        }
    };
    let start = micros("startTime", read);
    let duration = micros("duration", read);
    let end = match (start, duration) {
        (Some(s), Some(d)) => {
            let e = s.checked_add(d);
            if e.is_none() {
                read.problem(
                    file,
                    format!("{path}.duration"),
                    "the span ends after the year 2554",
                );
            }
            e
        }
        _ => None,
    };
    let parent = parent(file, path, v, trace.as_deref(), read);
    let service = service(file, path, v, processes, read);
    let tags = v.get("tags").and_then(Value::as_array);
    let tag = |key: &str| {
        tags.into_iter()
            .flatten()
            .enumerate()
            .find(|(_, t)| t.get("key").and_then(Value::as_str) == Some(key))
            .map(|(i, t)| (i, t.get("value").unwrap_or(&Value::Null)))
    };
    let kind = match tag("span.kind") {
        None => Kind::Unspecified,
        Some((i, k)) => match k.as_str().and_then(Kind::from_jaeger) {
            Some(kind) => kind,
            None => {
                read.unmapped(
                    file,
                    format!("{path}.tags[{i}].value"),
                    format!("unknown span kind {k}: read as internal"),
                );
                Kind::Internal
            }
        },
    };
    let error = matches!(tag("error"), Some((_, Value::Bool(true))))
        || matches!(tag("error"), Some((_, Value::String(s))) if s.eq_ignore_ascii_case("true"))
        || matches!(tag("otel.status_code"), Some((_, Value::String(s))) if s == "ERROR");
    if read.problems.len() > before {
        return None;
    }
    Some(Span {
        trace: trace?,
        id: span_id?,
        parent: parent?,
        service: service?,
        kind,
        start_ns: start?,
        end_ns: end?,
        error,
        file: file_index,
        path: path.to_string(),
    })
}

/// The span's parent: `Some(None)` for a root, `None` on a problem.
fn parent(
    file: &str,
    path: &str,
    v: &Value,
    trace: Option<&str>,
    read: &mut Read,
) -> Option<Option<String>> {
    let refs = match v.get("references") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(r)) => r.as_slice(),
        Some(other) => {
            read.problem(
                file,
                format!("{path}.references"),
                format!("expected a list, got {}", type_name(other)),
            );
            return None;
        }
    };
    // A reference to another trace (a link) is no parent.
    let same_trace = |r: &Value| match r.get("traceID").and_then(Value::as_str) {
        None => true,
        Some(t) => matches!((read_id(t), trace), (Ok(Id::Some(t)), Some(own)) if t == own),
    };
    let of_type = |kind: &str| {
        refs.iter()
            .enumerate()
            .find(|(_, r)| r.get("refType").and_then(Value::as_str) == Some(kind) && same_trace(r))
    };
    let found = of_type("CHILD_OF").or_else(|| of_type("FOLLOWS_FROM"));
    let (fp, raw) = match found {
        Some((i, r)) => (format!("{path}.references[{i}].spanID"), r.get("spanID")),
        None => (format!("{path}.parentSpanID"), v.get("parentSpanID")),
    };
    match id_field(raw, false, file, fp, read)? {
        Id::None => Some(None),
        Id::Some(p) => Some(Some(p)),
    }
}

/// The span's service: its process's `serviceName`, from the trace's
/// `processes` by `processID`, or from an embedded `process`.
fn service(
    file: &str,
    path: &str,
    v: &Value,
    processes: Option<&serde_json::Map<String, Value>>,
    read: &mut Read,
) -> Option<String> {
    let (fp, process) = match (v.get("processID").and_then(Value::as_str), v.get("process")) {
        (Some(pid), _) => (
            format!("{path}.processID"),
            processes
                .and_then(|p| p.get(pid))
                .ok_or_else(|| format!("no process {pid:?} in the trace's `processes`")),
        ),
        (None, Some(p)) => (format!("{path}.process"), Ok(p)),
        (None, None) => (
            format!("{path}.processID"),
            Err("missing: no process names the span's service".to_string()),
        ),
    };
    match process.map(|p| p.get("serviceName").and_then(Value::as_str)) {
        Ok(Some(name)) if !name.trim().is_empty() => Some(name.to_string()),
        Ok(_) => {
            read.problem(file, fp, "the span's process has no `serviceName`");
            None
        }
        Err(e) => {
            read.problem(file, fp, e);
            None
        }
    }
}
