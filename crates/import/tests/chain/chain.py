"""Runs the real chain once: starts leaf, api and frontend (each its own
process, on 127.0.0.1 and a port the system picks), drives them with
load.py, stops them, and leaves in OUT:

- traces.jsonl: every span the services exported, in OTLP/JSON as the
  Collector's file exporter writes it (each service's export requests, one
  service after the other);
- load.csv: the driver's requests (due, sent, latency, outcome);
- NAME.lag.json: how late each service's event loop woke a 10 ms sleeper,
  every 10 ms of the run (ms).

Every wait is bounded, and the services are stopped however this ends: their
stdin is a pipe from this process, so they stop when it closes, and each has
a lifetime it never outlives.
"""

import argparse
import json
import os
import selectors
import subprocess
import sys
import time
from pathlib import Path

from otlp_file import write_json_lines

HERE = Path(__file__).resolve().parent
STARTUP_S = 30
SHUTDOWN_S = 20


class Chain:
    def __init__(self, config_path, out, slow_factor):
        self.config_path = Path(config_path)
        self.config = json.loads(self.config_path.read_text(encoding="utf-8"))
        self.out = Path(out)
        self.slow_factor = slow_factor
        self.procs = []
        load = self.config["load"]
        # Long enough for the load, startup and shutdown; never forever.
        self.lifetime_s = load["requests"] / load["rate_per_s"] + load["timeout_ms"] / 1000 + 120

    def start(self, spec, index, downstream):
        name = spec["name"]
        cmd = [
            sys.executable, str(HERE / "service.py"),
            "--config", str(self.config_path),
            "--name", name,
            "--traces", str(self.out / f"{name}.otlp.bin"),
            "--lag", str(self.out / f"{name}.lag.json"),
            "--seed", str(self.config["load"]["seed"] * 100 + index),
            "--lifetime-s", str(self.lifetime_s),
        ]
        if downstream:
            cmd += ["--downstream", downstream]
        if self.config["slow"]["service"] == name:
            cmd += ["--slow-factor", str(self.slow_factor)]
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.procs.append((name, proc))
        port = read_port(name, proc)
        return f"http://127.0.0.1:{port}/"

    def stop(self):
        for _, proc in self.procs:
            if proc.poll() is None:
                proc.stdin.close()
                proc.terminate()
        failed = []
        deadline = time.monotonic() + SHUTDOWN_S
        for name, proc in self.procs:
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
                failed.append(f"{name} did not stop within {SHUTDOWN_S} s (killed)")
                continue
            if proc.returncode != 0:
                failed.append(f"{name} exited with {proc.returncode}")
        self.procs = []
        return failed

    def run(self):
        self.out.mkdir(parents=True, exist_ok=True)
        services = self.config["services"]
        try:
            # From the leaf up, so that each caller knows its callee's port.
            url = None
            for index in reversed(range(len(services))):
                url = self.start(services[index], index, url)
            load = self.config["load"]
            cmd = [
                sys.executable, str(HERE / "load.py"),
                "--url", url,
                "--rate", str(load["rate_per_s"]),
                "--requests", str(load["requests"]),
                "--seed", str(load["seed"]),
                "--timeout-ms", str(load["timeout_ms"]),
                "--out", str(self.out / "load.csv"),
            ]
            bound = load["requests"] / load["rate_per_s"] * 2 + 60
            subprocess.run(cmd, check=True, timeout=bound, stdin=subprocess.DEVNULL)
        finally:
            problems = self.stop()
        if problems:
            raise RuntimeError("; ".join(problems))
        with open(self.out / "traces.jsonl", "w", encoding="utf-8") as traces:
            for spec in reversed(services):
                part = self.out / f"{spec['name']}.otlp.bin"
                write_json_lines(part, traces)
                part.unlink()
        return self.out


def read_port(name, proc):
    """The port a service prints on its first line, within STARTUP_S."""
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    if not sel.select(STARTUP_S):
        raise RuntimeError(f"{name} printed no port within {STARTUP_S} s")
    line = proc.stdout.readline().split()
    if len(line) != 2 or line[0] != "PORT":
        raise RuntimeError(f"{name} did not start (exit code {proc.poll()})")
    return int(line[1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(HERE / "config.json"))
    parser.add_argument("--out", required=True)
    parser.add_argument("--slow-factor", type=float, default=1.0)
    args = parser.parse_args()
    Chain(args.config, args.out, args.slow_factor).run()
    print(f"wrote {os.path.join(args.out, 'traces.jsonl')} and load.csv")


if __name__ == "__main__":
    main()
