"""OTLP to a file, as a service and the OpenTelemetry Collector share the
work: each service's span processor hands its batches to
OtlpProtobufFileExporter, which encodes them with the SDK's own OTLP encoder
(encode_spans, the code the OTLP/gRPC and OTLP/HTTP exporters send) and
appends each ExportTraceServiceRequest, length-prefixed, to a file, the
bytes it would send on the wire; after the run, write_json_lines writes what
the Collector's file exporter writes of those requests: one per line in
OTLP/JSON (camelCase fields, enums as integers, 64-bit integers as strings,
trace and span ids in lowercase hex).

The JSON is written after the run, not in the service: turning a batch into
JSON costs about twice its encoding, in the export thread, which holds the
interpreter's lock while it works and so delays the service's event loop.
protobuf's JSON printer writes bytes fields in base64; the ids are rewritten
in hex, as OTLP/JSON specifies and the Collector writes them.
"""

import base64
import json
import struct
import threading

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

ID_FIELDS = ("traceId", "spanId", "parentSpanId")
LENGTH = struct.Struct(">I")


class OtlpProtobufFileExporter(SpanExporter):
    """Appends each batch as one length-prefixed ExportTraceServiceRequest."""

    def __init__(self, path):
        self._file = open(path, "ab")
        self._lock = threading.Lock()

    def export(self, spans):
        data = encode_spans(spans).SerializeToString()
        with self._lock:
            self._file.write(LENGTH.pack(len(data)) + data)
            self._file.flush()
        return SpanExportResult.SUCCESS

    def shutdown(self):
        with self._lock:
            self._file.close()

    def force_flush(self, timeout_millis=30000):
        return True


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


def write_json_lines(protobuf_path, out):
    """Writes each request of an exporter's file as one line of OTLP/JSON to
    the text file `out`; returns how many."""
    with open(protobuf_path, "rb") as f:
        data = f.read()
    pos = count = 0
    while pos < len(data):
        (length,) = LENGTH.unpack_from(data, pos)
        pos += LENGTH.size
        request = ExportTraceServiceRequest.FromString(data[pos : pos + length])
        pos += length
        message = MessageToDict(request, use_integers_for_enums=True)
        out.write(json.dumps(hex_ids(message), separators=(",", ":")) + "\n")
        count += 1
    return count
