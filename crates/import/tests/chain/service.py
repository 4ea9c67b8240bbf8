"""One service of the real chain: an aiohttp server on 127.0.0.1 whose
handler sleeps for its own work time (drawn from a seeded log-normal) and
then, unless it is the last tier, calls the next service with a per-attempt
timeout and retries. OpenTelemetry's aiohttp instrumentations trace it: a
SERVER span per request handled and a CLIENT span per attempt sent, exported
by the SDK's batch processor to a file (otlp_file.py).

Started by chain.py, which reads the port from its first line of stdout. It
stops on SIGTERM, when its stdin closes (its parent is gone, however it
ended), or after --lifetime-s whatever happens, flushing its spans.
"""

import argparse
import asyncio
import json
import math
import random
import signal
import socket
import sys

import aiohttp
from aiohttp import web
from opentelemetry import trace
from opentelemetry.instrumentation.aiohttp_client import create_trace_config
from opentelemetry.instrumentation.aiohttp_server import AioHttpServerInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from otlp_file import OtlpProtobufFileExporter

# The standard normal's 99th percentile: a log-normal given by its median and
# p99 (as the model's `lognormal` is) has sigma = ln(p99 / median) / Z99.
Z99 = 2.3263478740408408
LAG_PROBE_S = 0.010


def lognormal(rng, median_ms, p99_ms):
    sigma = math.log(p99_ms / median_ms) / Z99
    return median_ms * math.exp(sigma * rng.gauss(0.0, 1.0))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--downstream", help="base URL of the service it calls")
    parser.add_argument("--slow-factor", type=float, default=1.0)
    parser.add_argument("--traces", required=True)
    parser.add_argument("--lag", required=True, help="file for the event loop's measured lateness")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--lifetime-s", type=float, required=True)
    args = parser.parse_args()
    with open(args.config, encoding="utf-8") as f:
        spec = next(s for s in json.load(f)["services"] if s["name"] == args.name)
    asyncio.run(serve(spec, args))


async def serve(spec, args):
    provider = TracerProvider(resource=Resource.create({"service.name": spec["name"]}))
    # A queue far larger than a run's spans, so that none is dropped; a batch
    # every 500 ms keeps each export (which holds the interpreter's lock) short.
    provider.add_span_processor(
        BatchSpanProcessor(
            OtlpProtobufFileExporter(args.traces),
            max_queue_size=200_000,
            schedule_delay_millis=500,
            max_export_batch_size=512,
        )
    )
    AioHttpServerInstrumentor().instrument(tracer_provider=provider)
    rng = random.Random(args.seed)
    work = spec["work"]
    call = spec.get("call")
    error_p = spec.get("error_p", 0.0)
    session = None
    if call:
        session = aiohttp.ClientSession(trace_configs=[create_trace_config(tracer_provider=provider)])

    async def handle(request):
        work_ms = lognormal(rng, work["median_ms"], work["p99_ms"]) * args.slow_factor
        fails = rng.random() < error_p
        span = trace.get_current_span()
        span.set_attribute("chain.work_ms", work_ms)
        await asyncio.sleep(work_ms / 1000.0)
        if fails:
            return web.Response(status=500, text="failed\n")
        if not call:
            return web.Response(text="ok\n")
        outcome = await call_downstream(session, args.downstream, call)
        span.set_attribute("chain.attempts", outcome["attempts"])
        if outcome["ok"]:
            return web.Response(text="ok\n")
        return web.Response(status=502, text=f"{call['to']}: {outcome['last']}\n")

    app = web.Application()
    app.router.add_get("/", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    await web.SockSite(runner, sock).start()
    print(f"PORT {sock.getsockname()[1]}", flush=True)

    stop = asyncio.Event()
    lags = []
    probe = asyncio.create_task(measure_lag(lags))
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGINT, stop.set)
    await loop.connect_read_pipe(lambda: StdinWatch(stop), sys.stdin)
    try:
        await asyncio.wait_for(stop.wait(), args.lifetime_s)
    except asyncio.TimeoutError:
        print(f"{spec['name']}: lifetime of {args.lifetime_s} s over, stopping", file=sys.stderr)
    probe.cancel()
    await runner.cleanup()
    if session:
        await session.close()
    provider.shutdown()
    with open(args.lag, "w", encoding="utf-8") as f:
        json.dump(lags, f)


async def measure_lag(lags):
    """How late the event loop wakes a sleeper: every 10 ms, the time past
    the sleep's end at which it resumed, in ms (the scheduler's and the
    loop's own delays, which every timer in this process also suffers)."""
    loop = asyncio.get_running_loop()
    while True:
        start = loop.time()
        await asyncio.sleep(LAG_PROBE_S)
        lags.append(round((loop.time() - start - LAG_PROBE_S) * 1000.0, 4))


async def call_downstream(session, url, call):
    """The client's retry loop: up to max_attempts, each bounded by
    timeout_ms (connection, request and answer), a fixed backoff between
    them; a 5xx answer or a timeout is retried."""
    timeout = aiohttp.ClientTimeout(total=call["timeout_ms"] / 1000.0)
    last = None
    for attempt in range(1, call["max_attempts"] + 1):
        try:
            async with session.get(url, timeout=timeout) as response:
                await response.read()
                if response.status < 500:
                    return {"ok": True, "attempts": attempt, "last": response.status}
                last = f"HTTP {response.status}"
        except asyncio.TimeoutError:
            last = "timeout"
        except aiohttp.ClientError as error:
            last = type(error).__name__
        if attempt < call["max_attempts"] and call["backoff_ms"] > 0:
            await asyncio.sleep(call["backoff_ms"] / 1000.0)
    return {"ok": False, "attempts": call["max_attempts"], "last": last}


class StdinWatch(asyncio.Protocol):
    """Sets `stop` when stdin reaches its end: the parent closed it or died."""

    def __init__(self, stop):
        self.stop = stop

    def connection_lost(self, exc):
        self.stop.set()


if __name__ == "__main__":
    main()
