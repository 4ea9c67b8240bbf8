"""Writes shop.otlp.jsonl and shop.jaeger.json: 80 requests of a small shop,
as an OpenTelemetry SDK with the collector's file exporter (one
ExportTraceServiceRequest per line, hex ids, kinds and status codes as
numbers, times as strings) and Jaeger's query API would give them.

frontend (SERVER) -> checkout: a CLIENT span in frontend, its SERVER child
in checkout. checkout calls inventory and pricing at once, then payments;
a failed payments attempt (5%) is tried again 20 ms later. Run:
    python3 make_shop.py
"""
import json
import random

rng = random.Random(2024)
T0 = 1_735_000_000_000_000_000  # ns
NET = 300_000  # ns, one way
spans = []  # (service, trace, id, parent, kind, start, end, error)
next_id = [0x1000]


def new_id():
    next_id[0] += 1
    return next_id[0] * 0x9E3779B1 % (1 << 64)


def call(trace, parent, caller, callee, start, work_ns, error=False):
    """A CLIENT span in caller and the callee's SERVER span; returns the end."""
    cid, sid = new_id(), new_id()
    s_start = start + NET
    s_end = s_start + work_ns
    spans.append((caller, trace, cid, parent, 3, start, s_end + NET, error))
    spans.append((callee, trace, sid, cid, 2, s_start, s_end, error))
    return s_end + NET, sid


t = T0
for r in range(80):
    t += int(rng.expovariate(20.0) * 1e9)
    trace = rng.getrandbits(128)
    root = new_id()
    f_start = t
    # frontend works, then calls checkout
    f_work = int(rng.lognormvariate(0, 0.4) * 2e6)
    c_start = f_start + f_work
    # checkout's own work, then inventory and pricing at once
    cid, sid = new_id(), new_id()
    ch_start = c_start + NET
    w = int(rng.lognormvariate(0, 0.5) * 3e6)
    par = ch_start + w
    e1, _ = call(trace, sid, "checkout", "inventory", par, int(rng.expovariate(1 / 6e6)))
    e2, _ = call(trace, sid, "checkout", "pricing", par, int(rng.expovariate(1 / 4e6)))
    at = max(e1, e2)
    failed = rng.random() < 0.05
    end, _ = call(trace, sid, "checkout", "payments", at, int(rng.lognormvariate(0, 0.3) * 8e6), failed)
    if failed:
        end, _ = call(trace, sid, "checkout", "payments", end + 20_000_000, int(rng.lognormvariate(0, 0.3) * 8e6))
    ch_end = end + int(rng.expovariate(1 / 1e6))
    spans.append(("checkout", trace, sid, cid, 2, ch_start, ch_end, False))
    spans.append(("frontend", trace, cid, root, 3, c_start, ch_end + NET, False))
    spans.append(("frontend", trace, root, None, 2, f_start, ch_end + NET + 500_000, False))

services = ["frontend", "checkout", "inventory", "pricing", "payments"]
with open("shop.otlp.jsonl", "w") as f:
    for batch in range(0, len(spans), 60):
        chunk = spans[batch:batch + 60]
        resources = []
        for svc in services:
            mine = [
                {
                    "traceId": f"{s[1]:032x}",
                    "spanId": f"{s[2]:016x}",
                    "parentSpanId": "" if s[3] is None else f"{s[3]:016x}",
                    "flags": 256,
                    "name": "POST /" + svc,
                    "kind": s[4],
                    "startTimeUnixNano": str(s[5]),
                    "endTimeUnixNano": str(s[6]),
                    "status": {"code": 2, "message": "503"} if s[7] else {},
                }
                for s in chunk if s[0] == svc
            ]
            if mine:
                resources.append({
                    "resource": {"attributes": [
                        {"key": "service.name", "value": {"stringValue": svc}},
                        {"key": "telemetry.sdk.language", "value": {"stringValue": "python"}},
                    ]},
                    "scopeSpans": [{"scope": {"name": "opentelemetry.instrumentation.flask", "version": "0.48b0"}, "spans": mine}],
                    "schemaUrl": "https://opentelemetry.io/schemas/1.11.0",
                })
        f.write(json.dumps({"resourceSpans": resources}, separators=(",", ":")) + "\n")

traces = {}
for s in spans:
    traces.setdefault(s[1], []).append(s)
data = []
for trace, members in traces.items():
    pids = {svc: f"p{i + 1}" for i, svc in enumerate(services)}
    data.append({
        "traceID": f"{trace:032x}",
        "spans": [
            {
                "traceID": f"{trace:032x}",
                "spanID": f"{s[2]:016x}",
                "flags": 1,
                "operationName": "POST /" + s[0],
                "references": [] if s[3] is None else [{"refType": "CHILD_OF", "traceID": f"{trace:032x}", "spanID": f"{s[3]:016x}"}],
                "startTime": s[5] // 1000,
                "duration": s[6] // 1000 - s[5] // 1000,
                "tags": [{"key": "span.kind", "type": "string", "value": "server" if s[4] == 2 else "client"}]
                + ([{"key": "error", "type": "bool", "value": True}] if s[7] else []),
                "logs": [],
                "processID": pids[s[0]],
                "warnings": None,
            }
            for s in members
        ],
        "processes": {pids[svc]: {"serviceName": svc, "tags": []} for svc in services},
        "warnings": None,
    })
with open("shop.jaeger.json", "w") as f:
    json.dump({"data": data, "total": 0, "limit": 0, "offset": 0, "errors": None}, f, indent=1)
