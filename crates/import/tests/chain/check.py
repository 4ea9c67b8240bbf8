"""The real chain against its simulation, end to end through trace import.

1. steady: run the chain (chain.py), import its traces with `stormsim import
   otlp`, run the imported model with the client settings traces cannot show
   (config.json's timeouts and retries, as --set overrides), and compare the
   root latency's p50, p90 and p99 and the leaf's calls per request over the
   requests after the warm-up;
2. slow leaf: run the chain again with the leaf's sleep times `slow.factor`
   times longer, run the same imported model with the same change made to the
   leaf's work, and compare the retry amplification (leaf calls per request)
   and the success rate.

Each comparison has a tolerance derived from the run's own samples (see
docs/real-chain.md): prints a table of real against simulated figures, writes
it with every measurement to WORK/figures.json, and exits 1 on a miss.

It exits 1 too, saying why, when a real run is no reference (the chain did
not keep up with its load: its driver's requests timed out or found no
connection) or the imported model lacks the calls the chain makes. On any
failure the work folder is kept, and its path printed.
"""

import argparse
import csv
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from chain import Chain

HERE = Path(__file__).resolve().parent
# Two-sided 99.9%: each run makes 6 judged comparisons, so a correct
# simulation misses one by chance in about 0.6% of runs.
Z = 3.2905
SERVER, CLIENT = 2, 3
STATUS_ERROR = 2
COMMAND_TIMEOUT_S = 300
# The share of a run's requests (after the warm-up) that may end with no
# answer at the driver (its timeout, no connection) for the run to count as
# the chain's: an undisturbed run has none (its slowest requests take under
# 0.5 s of the driver's 2 s).
MOST_UNANSWERED = 0.01
# A real run is measured again, up to MEASUREMENTS times in all, when it
# stalled (its processes waited for a core, taken by the machine's other work
# or by its host): some service's event loop resumed its timers later than
# half the chain's shortest attempt timeout in 1% of its probes or more
# (a loop-lag p99 above STALL_SHARE of that timeout). Stalls that long are a
# race no model of the chain has (a caller that wakes late sees its timer
# and the answer at once, and the timer wins); shorter lateness is part of
# every run, and the slow phase's tolerance widens with its mean. Undisturbed
# runs on two cores have p99s of 5 to 21 ms against the bound of 40 ms
# (docs/real-chain.md); the choice depends on the loops' lateness alone,
# never on the figures judged.
STALL_SHARE = 0.5
MEASUREMENTS = 3


class CheckFailed(Exception):
    """The check cannot compare: the message says why."""


# ---------------------------------------------------------------- traces


def load_spans(path):
    """Every span of an OTLP/JSON file, flattened."""
    spans = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            for resource_spans in json.loads(line)["resourceSpans"]:
                attrs = attributes(resource_spans["resource"].get("attributes", []))
                service = attrs["service.name"]
                for scope in resource_spans.get("scopeSpans", []):
                    for s in scope.get("spans", []):
                        start, end = int(s["startTimeUnixNano"]), int(s["endTimeUnixNano"])
                        spans.append(
                            {
                                "service": service,
                                "trace": s["traceId"],
                                "id": s["spanId"],
                                "parent": s.get("parentSpanId") or None,
                                "kind": s.get("kind", 0),
                                "start_ns": start,
                                "ms": (end - start) / 1e6,
                                "error": s.get("status", {}).get("code") == STATUS_ERROR,
                                "status": s.get("status", {}).get("message") or "",
                                "attrs": attributes(s.get("attributes", [])),
                            }
                        )
    return spans


def attributes(items):
    out = {}
    for item in items:
        (kind, value), = item["value"].items()
        out[item["key"]] = float(value) if kind in ("intValue", "doubleValue") else value
    return out


def quantile(sorted_xs, p):
    """Nearest-rank quantile of a sorted list."""
    return sorted_xs[min(len(sorted_xs) - 1, max(0, math.ceil(p * len(sorted_xs)) - 1))]


def quantile_band(sorted_xs, p):
    """Half the width of the distribution-free two-sided interval of the
    p-quantile at confidence Z: the order statistics at ranks
    n p ± Z sqrt(n p (1 - p))."""
    n = len(sorted_xs)
    spread = Z * math.sqrt(n * p * (1 - p))
    lo = sorted_xs[max(0, math.floor(n * p - spread) - 1)]
    hi = sorted_xs[min(n - 1, math.ceil(n * p + spread) - 1)]
    return (hi - lo) / 2


def mean_sd(xs):
    m = sum(xs) / len(xs)
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / max(1, len(xs) - 1))


def real_figures(out, config):
    """What the real chain did after its warm-up: the driver's latencies and
    outcomes, and from the traces the leaf's attempts per request and every
    service's overhead (its span's own time beyond the sleep it drew)."""
    warmup_s = config["load"]["warmup_s"]
    rows = list(csv.DictReader(open(out / "load.csv", encoding="utf-8")))
    steady = [r for r in rows if float(r["sent_s"]) >= warmup_s]
    latencies = sorted(float(r["latency_ms"]) for r in steady)
    ok = sum(r["outcome"] == "ok" for r in steady)

    spans = load_spans(out / "traces.jsonl")
    children = {}
    for s in spans:
        children.setdefault(s["parent"], []).append(s)
    roots = [s for s in spans if s["parent"] is None]
    first = min(s["start_ns"] for s in roots)
    steady_roots = [s for s in roots if s["start_ns"] - first >= warmup_s * 1e9]
    leaf = config["services"][-1]["name"]
    by_trace = {}
    for s in spans:
        if s["service"] == leaf and s["kind"] == SERVER:
            by_trace[s["trace"]] = by_trace.get(s["trace"], 0) + 1
    attempts = [by_trace.get(r["trace"], 0) for r in steady_roots]

    overhead = {}
    backoff = {c["name"]: c.get("call", {}).get("backoff_ms", 0) for c in config["services"]}
    for s in spans:
        if s["kind"] != SERVER or "chain.work_ms" not in s["attrs"]:
            continue
        waits = sum(c["ms"] for c in children.get(s["id"], []))
        retries = max(0, s["attrs"].get("chain.attempts", 1) - 1)
        own = s["ms"] - waits - retries * backoff[s["service"]]
        overhead.setdefault(s["service"], []).append(own - s["attrs"]["chain.work_ms"])
    gaps = []
    # Attempts no server span answers: the request never reached a handler
    # (a timeout or a refused connection before it was read), by caller and
    # error.
    unreached = {}
    for s in spans:
        if s["kind"] == CLIENT:
            served = [c for c in children.get(s["id"], []) if c["kind"] == SERVER]
            if served:
                gaps.append(s["ms"] - served[0]["ms"])
            else:
                unreached.setdefault(s["service"], []).append(s["status"] or "no error")
    attempts_by = count(s["service"] for s in spans if s["kind"] == CLIENT)
    root_ms = sorted(s["ms"] for s in steady_roots)
    lags = {c["name"]: sorted(json.loads((out / f"{c['name']}.lag.json").read_text(encoding="utf-8"))) for c in config["services"]}
    return {
        "lags": lags,
        "requests": len(rows),
        "steady_requests": len(steady),
        "latencies": latencies,
        "success_rate": ok / len(steady),
        "outcomes": count(r["outcome"] for r in steady),
        "roots": len(roots),
        "steady_roots": len(steady_roots),
        "root_ms": root_ms,
        "attempts": attempts,
        "spans": len(spans),
        "overhead": {k: sorted(v) for k, v in overhead.items()},
        "gaps": sorted(gaps),
        "unreached": {caller: count(why) for caller, why in unreached.items()},
        "client_attempts": attempts_by,
    }


def count(items):
    out = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return out


# ---------------------------------------------------------------- model


def scaled(dist, factor, offset_ms):
    """`dist` with every duration d made offset + factor (d - offset): the
    work `factor` times longer, its fixed overhead `offset_ms` not."""
    kind = dist["kind"]

    def f(ms):
        return round(max(0.0, offset_ms + factor * (ms - offset_ms)), 6)

    if kind == "quantiles":
        return {**dist, "min_ms": f(dist.get("min_ms", 0.0)), "points": [{**p, "ms": f(p["ms"])} for p in dist["points"]]}
    if kind == "histogram":
        return {**dist, "min_ms": f(dist.get("min_ms", 0.0)), "buckets": [{**b, "le_ms": f(b["le_ms"])} for b in dist["buckets"]]}
    if kind == "constant":
        return {**dist, "ms": f(dist["ms"])}
    if kind == "mixture":
        return {**dist, "of": [{**c, "dist": scaled(c["dist"], factor, offset_ms)} for c in dist["of"]]}
    raise ValueError(f"cannot scale a {kind} distribution (the imported model's leaf work)")


def dist_quantile(dist, p):
    """The p-quantile of an imported `quantiles` distribution (None for other kinds)."""
    if dist.get("kind") != "quantiles":
        return None
    prev_q, prev_ms = 0.0, dist.get("min_ms", 0.0)
    for point in dist["points"]:
        if point["q"] >= p:
            if point["q"] == prev_q:
                return point["ms"]
            return prev_ms + (point["ms"] - prev_ms) * (p - prev_q) / (point["q"] - prev_q)
        prev_q, prev_ms = point["q"], point["ms"]
    return dist["points"][-1]["ms"]


def work_step(model, service):
    """The index and distribution of `service`'s one work step in `model`."""
    spec = next(s for s in model["services"] if s["name"] == service)
    works = [(i, step["work"]) for i, step in enumerate(spec.get("steps", [])) if "work" in step]
    if len(works) != 1:
        raise ValueError(f"the imported model's {service} has {len(works)} work steps, not one")
    return works[0]


def unanswered(real):
    """How many of the requests after the warm-up got no answer at the
    driver (a timeout, no connection): not a 200, nor an error a service
    answered with."""
    return sum(n for outcome, n in real["outcomes"].items() if outcome != "ok" and not outcome.startswith("http_"))


def health(phase, real):
    """Why the real run is no reference for the simulation (its requests
    went unanswered: the chain did not keep up with its load), or None."""
    lost = unanswered(real)
    if lost <= MOST_UNANSWERED * real["steady_requests"]:
        return None
    lines = [
        f"{phase}: the real chain did not keep up with its load: {lost} of its {real['steady_requests']} requests after the warm-up"
        f" got no answer at the driver (outcomes: {describe(real['outcomes'])}; an undisturbed run has none, at most"
        f" {MOST_UNANSWERED:.0%} are allowed), so it is no reference for the simulation."
    ]
    lines.append("  its event loops' lateness (a 10 ms sleep's delay, every 10 ms): " + "; ".join(
        f"{name} mean {sum(l) / len(l):.1f} ms, p99 {quantile(l, 0.99):.1f} ms, max {l[-1]:.0f} ms ({len(l)} samples)"
        for name, l in real["lags"].items() if l
    ))
    for caller, why in real["unreached"].items():
        lines.append(
            f"  {caller}: {sum(why.values())} of its {real['client_attempts'].get(caller, 0)} call attempts reached no server (no SERVER span under the CLIENT span): {describe(why)}"
        )
    lines.append(
        "  A starved or stalled chain times out before its calls are even sent, and each timeout costs it more work"
        " (docs/real-chain.md, the machine's scheduler): was the machine busy beside it, without the priority it asks for?"
    )
    return "\n".join(lines)


def stall_bound_ms(config):
    """The loop-lag p99 above which a real run counts as stalled."""
    return STALL_SHARE * min(s["call"]["timeout_ms"] for s in config["services"] if "call" in s)


def stalled(real, bound_ms):
    """Which services' event loops were late by more than `bound_ms` at the
    p99, as `name p99 X ms`, or an empty list."""
    return [
        f"{name} p99 {quantile(lags, 0.99):.1f} ms"
        for name, lags in real["lags"].items()
        if lags and quantile(lags, 0.99) > bound_ms
    ]


def measure(table, phase, config_path, config, work, factor, bound):
    """Run the real chain for `phase` until a run is not stalled, at most
    MEASUREMENTS times; its figures, and the folder they came from.
    Every stalled run is kept (WORK/PHASE-stalled-K) and noted in the table."""
    for attempt in range(1, MEASUREMENTS + 1):
        out = work / phase
        cpu = HostCpu()
        run = Chain(config_path, out, factor).run()
        steal = cpu.steal_share()
        real = real_figures(run, config)
        real["steal"] = steal
        late = stalled(real, bound)
        if not late:
            table.note(phase, "stalled runs measured again", attempt - 1, None)
            if steal is not None:
                table.note(phase, "host steal % (this run)", 100 * steal, None)
            return real, run
        kept = work / f"{phase}-stalled-{attempt}"
        shutil.rmtree(kept, ignore_errors=True)
        out.rename(kept)
        host = "" if steal is None else f"; the host took {100 * steal:.1f}% of the CPU (steal time)"
        say(
            f"{phase}: run {attempt} of at most {MEASUREMENTS} stalled (event loops late beyond {bound:.0f} ms at the p99: "
            + ", ".join(late) + host + f"), kept in {kept}"
            + ("; measuring again" if attempt < MEASUREMENTS else "")
        )
    raise CheckFailed(
        f"{phase}: every one of {MEASUREMENTS} real runs stalled (event loops late beyond {bound:.0f} ms at the p99), so none"
        f" is a reference for the simulation; the runs are in {work}/{phase}-stalled-*. A loop is late when its process"
        " waits for a core: was the machine busy beside the check, or its host taking the CPU (steal time, printed per run)?"
    )


class HostCpu:
    """The machine's CPU time since construction, from /proc/stat: the share
    its host took (steal time), or None where there is no /proc/stat."""

    def __init__(self):
        self.start = self.read()

    @staticmethod
    def read():
        try:
            with open("/proc/stat", encoding="utf-8") as f:
                fields = f.readline().split()
        except OSError:
            return None
        # user nice system idle iowait irq softirq steal (guest time is in user)
        return [int(x) for x in fields[1:9]]

    def steal_share(self):
        end = self.read()
        if self.start is None or end is None:
            return None
        delta = [b - a for a, b in zip(self.start, end)]
        return delta[7] / sum(delta) if sum(delta) else None


def describe(counts):
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))


def missing_calls(model, config):
    """The chain's calls (config.json) that the imported model's handlers do
    not make: (caller, callee) pairs."""
    steps = {s["name"]: s.get("steps", []) for s in model["services"]}
    missing = []
    for spec in config["services"]:
        call = spec.get("call")
        if call and not any(step.get("call") == call["to"] for step in steps.get(spec["name"], [])):
            missing.append((spec["name"], call["to"]))
    return missing


def outline(model):
    """Each service of a model and its steps, one line each."""
    lines = []
    for s in model["services"]:
        steps = []
        for step in s.get("steps", []):
            if "work" in step:
                steps.append("work")
            elif "call" in step:
                steps.append(f"call {step['call']}" + (f" (retry {json.dumps(step['retry'])})" if "retry" in step else ""))
            elif "parallel" in step:
                steps.append("parallel(" + ", ".join(b.get("call", "?") for b in step["parallel"]["branches"]) + ")")
            else:
                steps.append(json.dumps(step))
        lines.append(f"  {s['name']}: " + (", then ".join(steps) or "no steps"))
    return lines


class Simulator:
    def __init__(self, stormsim, config, requests):
        self.stormsim = stormsim
        self.config = config
        self.requests = requests

    def import_traces(self, traces, model_path):
        """Imports `traces` into `model_path`; the model, and the importer's
        notes on each service's handler. What it printed is kept beside the
        model (import.log)."""
        done = run([self.stormsim, "import", "otlp", str(traces), "--out", str(model_path)], both=True)
        (model_path.parent / "import.log").write_text(done, encoding="utf-8")
        handlers = [line for line in done.splitlines() if "handler:" in line]
        return json.loads(model_path.read_text(encoding="utf-8")), handlers

    def client_settings(self, model):
        """What the traces cannot show: each service's pool (none: an asyncio
        server takes every request as it comes), each caller's per-attempt
        timeout and retry loop, the driver's timeout, and how long the
        simulation runs."""
        sets = []
        for spec in self.config["services"]:
            sets.append(f"services[{spec['name']}].workers=null")
            sets.append(f"services[{spec['name']}].queue_capacity=null")
            call = spec.get("call")
            if not call:
                continue
            edge = f"services[{spec['name']}].steps[{call['to']}]"
            sets.append(f"{edge}.timeout_ms={call['timeout_ms']}")
            retry = {"max_attempts": call["max_attempts"], "backoff": {"kind": "fixed", "ms": call["backoff_ms"]}}
            sets.append(f"{edge}.retry={json.dumps(retry)}")
        workload = model["workloads"][0]
        name = workload["name"]
        sets.append(f"workloads[{name}].timeout_ms={self.config['load']['timeout_ms']}")
        sets.append(f"workloads[{name}].requests={self.requests}")
        if "duration_s" in workload:
            sets.append(f"workloads[{name}].duration_s=1e9")
        return sets

    def simulate(self, model_path, sets, out):
        leaf = self.config["services"][-1]["name"]
        columns = f"variant,requests,success_rate,p50,p90,p99,{leaf}.calls_per_request"
        cmd = [self.stormsim, "run", str(model_path), "--out", str(out), "--force", "--quiet", "--format", "json", "--columns", columns]
        for s in sets:
            cmd += ["--set", s]
        rows = json.loads(run(cmd))
        row = rows[0]
        return {
            "requests": row["requests"],
            "success_rate": row["success_rate"],
            "p50": row["latency_p50_ms"],
            "p90": row["latency_p90_ms"],
            "p99": row["latency_p99_ms"],
            "calls_per_request": row[f"{leaf}.calls_per_request"],
        }


def run(cmd, both=False):
    """The command's output (`both`: its standard error after it); raises if it fails."""
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} ... exited {done.returncode}:\n{done.stderr.strip()}")
    return done.stdout + done.stderr if both else done.stdout


# ---------------------------------------------------------------- comparison


class Table:
    def __init__(self):
        self.rows = []

    def judge(self, phase, figure, real, sim, tolerance, derivation):
        diff = sim - real
        ok = abs(diff) <= tolerance
        self.rows.append(
            {"phase": phase, "figure": figure, "real": real, "sim": sim, "diff": diff, "tolerance": tolerance, "ok": ok, "derivation": derivation}
        )

    def note(self, phase, figure, real, sim):
        self.rows.append({"phase": phase, "figure": figure, "real": real, "sim": sim, "diff": None if real is None or sim is None else sim - real, "tolerance": None, "ok": None})

    def print(self):
        print(f"{'phase':<7} {'figure':<28} {'real':>9} {'sim':>9} {'sim-real':>9} {'tolerance':>10}  verdict")
        for r in self.rows:
            verdict = "-" if r["ok"] is None else ("ok" if r["ok"] else "MISS")
            tol = "" if r["tolerance"] is None else f"±{r['tolerance']:.3f}"
            print(f"{r['phase']:<7} {r['figure']:<28} {fmt(r['real']):>9} {fmt(r['sim']):>9} {fmt(r['diff']):>9} {tol:>10}  {verdict}")

    def missed(self):
        return [r for r in self.rows if r["ok"] is False]


def fmt(x):
    if x is None:
        return "-"
    return f"{x:.4f}" if abs(x) < 10 else f"{x:.2f}"


def compare_latency(table, phase, real, sim, n_sim):
    """Root latency quantiles: the real sample's distribution-free interval,
    widened for the model's own estimate from the same number of traces and
    the simulation's sample, plus the driver's hop, which no span covers."""
    lat, roots = real["latencies"], real["root_ms"]
    n = len(lat)
    hop = abs(quantile(lat, 0.5) - quantile(roots, 0.5))
    for p, key in ((0.5, "p50"), (0.9, "p90"), (0.99, "p99")):
        band = quantile_band(lat, p)
        tol = band * math.sqrt(2 + n / n_sim) + hop
        table.judge(
            phase, f"latency {key} ms", quantile(lat, p), sim[key], tol,
            f"{band:.3f} (order statistics, n={n}) x sqrt(2 + n/{n_sim}) + driver hop {hop:.3f}",
        )


def compare_mean(table, phase, figure, xs, sim_value, n_sim, allowance=0.0, why=""):
    m, sd = mean_sd(xs)
    tol = Z * sd * math.sqrt(2 / len(xs) + 1 / n_sim) + allowance
    table.judge(phase, figure, m, sim_value, tol, f"Z {Z} x sd {sd:.4f} x sqrt(2/{len(xs)} + 1/{n_sim}){why}")


def compare_share(table, phase, figure, real_share, n, sim_share, n_sim, allowance=0.0, why=""):
    sd = math.sqrt(max(sim_share * (1 - sim_share), real_share * (1 - real_share)))
    tol = Z * sd * math.sqrt(2 / n + 1 / n_sim) + allowance
    table.judge(phase, figure, real_share, sim_share, tol, f"Z {Z} x binomial sd {sd:.4f} x sqrt(2/{n} + 1/{n_sim}){why}")


def diagnostics(table, phase, real, model, config):
    """Not judged: the figures behind the judged ones."""
    table.note(phase, "requests (after warm-up)", real["steady_requests"], None)
    table.note(phase, "root spans (after warm-up)", real["steady_roots"], None)
    for spec in config["services"]:
        name = spec["name"]
        over = real["overhead"].get(name)
        if over:
            table.note(phase, f"{name} overhead p50 ms", quantile(over, 0.5), None)
            table.note(phase, f"{name} overhead p99 ms", quantile(over, 0.99), None)
        if model is not None:
            _, dist = work_step(model, name)
            for p in (0.5, 0.99):
                design = spec["work"]["median_ms"] if p == 0.5 else spec["work"]["p99_ms"]
                table.note(phase, f"{name} work p{int(p * 100)} design|model", design, dist_quantile(dist, p))
    if real["gaps"]:
        table.note(phase, "client-server gap p50 ms", quantile(real["gaps"], 0.5), None)
    lag_notes(table, phase, real)


def lag_notes(table, phase, real):
    for name, lags in real["lags"].items():
        table.note(phase, f"{name} loop lag mean|p99 ms", sum(lags) / len(lags), quantile(lags, 0.99))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stormsim", required=True, help="the stormsim binary")
    parser.add_argument("--config", default=str(HERE / "config.json"))
    parser.add_argument("--work", help="folder for traces, models and outputs (default: a temporary one, removed)")
    parser.add_argument("--sim-requests", type=int, default=50_000)
    parser.add_argument(
        "--model-scale", metavar="SERVICE=FACTOR",
        help="multiply SERVICE's imported work by FACTOR in every simulation (a wrong model, which the check must catch)",
    )
    parser.add_argument(
        "--stall-bound-ms", type=float,
        help="the loop-lag p99 above which a real run is measured again (default: half the shortest attempt timeout)",
    )
    args = parser.parse_args()
    config = json.loads(Path(args.config).read_text(encoding="utf-8"))
    if args.work:
        work = Path(args.work)
        work.mkdir(parents=True, exist_ok=True)
    else:
        work = Path(tempfile.mkdtemp(prefix="chain-check-"))
        say(f"work folder {work} (removed if the check passes)")
    say(f"priority: {priority()}")
    status = 1
    try:
        status = check(args, config, work)
    except CheckFailed as failure:
        print(f"\nchain-check: FAILED: {failure}", flush=True)
    finally:
        if status == 0 and not args.work:
            shutil.rmtree(work, ignore_errors=True)
        elif status != 0:
            say(f"failed: traces, models and outputs kept in {work}")
    return status


def priority():
    """This process's nice value and, where the kernel groups each session's
    processes for the scheduler, its group's (scripts/chain-check sets both)."""
    text = f"nice {os.nice(0)}"
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled", encoding="utf-8") as f:
            enabled = f.read().strip() == "1"
        with open("/proc/self/autogroup", encoding="utf-8") as f:
            group = f.read().strip()
    except OSError:
        return text
    if not enabled:
        return text + " (no scheduling groups per session)"
    return text + f", its session's scheduling group {group}"


def check(args, config, work):
    sim = Simulator(args.stormsim, config, args.sim_requests)
    table = Table()
    slow = config["slow"]
    leaf = config["services"][-1]["name"]
    load = config["load"]
    bound = args.stall_bound_ms if args.stall_bound_ms is not None else stall_bound_ms(config)
    wrong = None
    if args.model_scale:
        service, factor = args.model_scale.split("=")
        wrong = (service, float(factor))

    def model_work(service):
        """The work step of `service` in the model as simulated: as imported,
        or as --model-scale makes it wrong."""
        index, dist = work_step(model, service)
        if wrong and wrong[0] == service:
            dist = scaled(dist, wrong[1], 0.0)
        return f"services[{service}].steps[{index}].work", dist

    # Steady state.
    say(f"steady: the real chain, {load['requests']} requests at {load['rate_per_s']} per s")
    real, steady = measure(table, "steady", args.config, config, work, 1.0, bound)
    model_path = steady / "model.json"
    say("steady: stormsim import otlp, then stormsim run on the imported model")
    model, handlers = sim.import_traces(steady / "traces.jsonl", model_path)
    unhealthy = health("steady", real)
    missing = missing_calls(model, config)
    if missing:
        lines = [
            "the imported model lacks the calls the chain makes: "
            + ", ".join(f"{a} → {b}" for a, b in missing)
            + f" ({model_path}, imported from {steady / 'traces.jsonl'}). Its services and steps:",
            *outline(model),
            "The importer's handlers (each service's outline most of its executions had):",
            *(f"  {h}" for h in handlers),
        ]
        if unhealthy:
            lines.append("Why, most likely: " + unhealthy)
        raise CheckFailed("\n".join(lines))
    if unhealthy:
        raise CheckFailed(unhealthy)
    base_sets = sim.client_settings(model)
    if wrong:
        path, dist = model_work(wrong[0])
        base_sets.append(f"{path}={json.dumps(dist)}")
    figures = sim.simulate(model_path, base_sets, work / "sim-steady")
    n_sim = figures["requests"]
    compare_latency(table, "steady", real, figures, n_sim)
    compare_mean(table, "steady", f"{leaf} calls/request", real["attempts"], figures["calls_per_request"], n_sim)
    table.note("steady", "success rate", real["success_rate"], figures["success_rate"])
    diagnostics(table, "steady", real, model, config)
    steady_real = real

    # The slow leaf: the real leaf sleeps `factor` times longer; the model's
    # leaf work is stretched by the same factor, all but the leaf's own
    # overhead (its span beyond its sleep, measured in the steady run),
    # which does not grow with the sleep.
    say(f"slow: the real chain with {slow['service']}'s sleeps x{slow['factor']}")
    real, _ = measure(table, "slow", args.config, config, work, slow["factor"], bound)
    unhealthy = health("slow", real)
    if unhealthy:
        raise CheckFailed(unhealthy)
    say("slow: stormsim run on the imported model with the same change")
    offset = quantile(steady_real["overhead"][slow["service"]], 0.5)
    path, dist = model_work(slow["service"])
    sets = [s for s in base_sets if not s.startswith(f"{path}=")] + [f"{path}={json.dumps(scaled(dist, slow['factor'], offset))}"]
    figures = sim.simulate(model_path, sets, work / "sim-slow")
    # How much the judged figures move when the attempt's timeout moves by
    # how far the real race can be off the model's: the leaf's overhead the
    # model holds fixed, plus the mean lateness of the leaf's and the
    # caller's event loops measured in this very run (a stalled caller sees
    # its timer and the answer at once, and the timer wins).
    call = next(s["call"] for s in config["services"] if s.get("call", {}).get("to") == slow["service"])
    caller = next(s["name"] for s in config["services"] if s.get("call", {}).get("to") == slow["service"])
    lag = sum(sum(real["lags"][n]) / len(real["lags"][n]) for n in (caller, slow["service"]))
    shift = offset + lag
    moved = []
    for sign in (-1, 1):
        timeout = call["timeout_ms"] + sign * shift
        moved.append(sim.simulate(model_path, sets + [f"services[{caller}].steps[{slow['service']}].timeout_ms={timeout}"], work / "sim-slow-timer"))
    amp_allow = abs(moved[1]["calls_per_request"] - moved[0]["calls_per_request"]) / 2
    ok_allow = abs(moved[1]["success_rate"] - moved[0]["success_rate"]) / 2
    why = f" + timeout +-{shift:.3f} ms ({offset:.3f} overhead + {lag:.3f} loop lag) moves it {{:.4f}}"
    compare_mean(table, "slow", f"{leaf} calls/request", real["attempts"], figures["calls_per_request"], n_sim, amp_allow, why.format(amp_allow))
    compare_share(table, "slow", "success rate", real["success_rate"], real["steady_requests"], figures["success_rate"], n_sim, ok_allow, why.format(ok_allow))
    for key, p in (("p50", 0.5), ("p99", 0.99)):
        table.note("slow", f"latency {key} ms", quantile(real["latencies"], p), figures[key])
    table.note("slow", "requests (after warm-up)", real["steady_requests"], None)
    lag_notes(table, "slow", real)

    table.print()
    record = {"rows": table.rows, "model_scale": args.model_scale, "sets": {"steady": base_sets, "slow": sets}}
    (work / "figures.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
    missed = table.missed()
    judged = sum(r["ok"] is not None for r in table.rows)
    print()
    if missed:
        print("outside their tolerance: " + ", ".join(f"{r['phase']} {r['figure']}" for r in missed))
    print(f"chain-check: {judged - len(missed)} passed, {len(missed)} failed")
    return 1 if missed else 0


def say(line):
    print(f"chain-check: {line}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
