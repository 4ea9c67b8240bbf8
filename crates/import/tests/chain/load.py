"""The open-loop load driver: Poisson arrivals at a fixed rate, a fixed
number of requests, each sent when its time comes whatever the earlier ones
are doing, each bounded by a timeout. Writes one CSV line per request: when
it was due and sent (seconds from the start), its latency and its outcome.
It sends no spans: the frontend's SERVER span is each trace's root.
"""

import argparse
import asyncio
import csv
import random
import time

import aiohttp


async def drive(args):
    rng = random.Random(args.seed)
    timeout = aiohttp.ClientTimeout(total=args.timeout_ms / 1000.0)
    rows = []
    async with aiohttp.ClientSession(timeout=timeout) as session:

        async def one(i, due):
            sent = time.monotonic()
            try:
                async with session.get(args.url) as response:
                    await response.read()
                    outcome = "ok" if response.status == 200 else f"http_{response.status}"
            except asyncio.TimeoutError:
                outcome = "timeout"
            except aiohttp.ClientError as error:
                outcome = type(error).__name__
            done = time.monotonic()
            rows.append((i, due - start, sent - start, (done - sent) * 1000.0, outcome))

        start = time.monotonic()
        due = start
        tasks = []
        for i in range(args.requests):
            due += rng.expovariate(args.rate)
            delay = due - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(i, due)))
        await asyncio.wait_for(asyncio.gather(*tasks), args.timeout_ms / 1000.0 + 10)
    rows.sort()
    with open(args.out, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["i", "due_s", "sent_s", "latency_ms", "outcome"])
        for i, due_s, sent_s, latency_ms, outcome in rows:
            out.writerow([i, f"{due_s:.6f}", f"{sent_s:.6f}", f"{latency_ms:.3f}", outcome])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--rate", type=float, required=True)
    parser.add_argument("--requests", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--timeout-ms", type=float, required=True)
    parser.add_argument("--out", required=True)
    asyncio.run(drive(parser.parse_args()))


if __name__ == "__main__":
    main()
