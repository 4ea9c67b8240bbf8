"""An OpenTelemetry span exporter that writes what the OpenTelemetry
Collector's file exporter writes: one ExportTraceServiceRequest per line in
OTLP/JSON (camelCase fields, enums as integers, 64-bit integers as strings,
trace and span ids in lowercase hex).

The SDK's own OTLP encoder builds the request (encode_spans, the same code
the OTLP/gRPC and OTLP/HTTP exporters send); protobuf's JSON printer writes
bytes fields in base64, so the ids are rewritten in hex as OTLP/JSON
specifies and the collector writes them.
"""

import base64
import json
import threading

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

ID_FIELDS = ("traceId", "spanId", "parentSpanId")


def hex_ids(node):
    """Rewrites every trace or span id below `node` from base64 to hex, in place."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ID_FIELDS and isinstance(value, str):
                node[key] = base64.b64decode(value).hex()
            else:
                hex_ids(value)
    elif isinstance(node, list):
        for value in node:
            hex_ids(value)
    return node


def request_json(spans):
    """One export request of `spans` as one line of OTLP/JSON."""
    message = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    return json.dumps(hex_ids(message), separators=(",", ":"))


class OtlpJsonFileExporter(SpanExporter):
    """Appends each batch the span processor hands over as one line."""

    def __init__(self, path):
        self._file = open(path, "a", encoding="utf-8")
        self._lock = threading.Lock()

    def export(self, spans):
        line = request_json(spans)
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()
        return SpanExportResult.SUCCESS

    def shutdown(self):
        with self._lock:
            self._file.close()

    def force_flush(self, timeout_millis=30000):
        return True
