"""Reading stormsim's outputs from the notebooks in this folder.

The notebooks import this module (Jupyter starts their kernel in this folder).
It finds `outputs/` and `models/` at the repository's root, next to this file;
the environment variable STORMSIM_OUTPUTS names another outputs folder.

A missing file or column is reported with the command that produces it, and
the notebook goes on without that section; with STORMSIM_NOTEBOOK_STRICT=1
(set by run-headless, so that CI notices when the outputs and the notebooks
drift apart) it is an error instead.
"""

import json
import os
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
OUTPUTS = Path(os.environ.get("STORMSIM_OUTPUTS") or ROOT / "outputs")
MODELS = ROOT / "models"  # only for the timeline markers and model facts
STRICT = os.environ.get("STORMSIM_NOTEBOOK_STRICT") == "1"


def setup():
    """Display options shared by the notebooks; prints where the outputs come from."""
    pd.set_option("display.width", 200)
    pd.set_option("display.max_columns", 30)
    pd.set_option("display.max_rows", 80)
    plt.rcParams.update({"figure.dpi": 100, "axes.grid": True, "grid.alpha": 0.3, "font.size": 9})
    print(f"outputs: {OUTPUTS}" + ("" if OUTPUTS.is_dir() else "  (not found!)"))


def sweep_file(name):
    """The sweep (or search) file that writes outputs/<name>/, or None if there is none."""
    for path in (MODELS / f"{name}.sweep.json", MODELS / "sweeps" / f"{name}.json"):
        if path.is_file():
            return path
    return None


def how_to_produce(name):
    """The command, from the repository root, that writes outputs/<name>/."""
    sweep = sweep_file(name)
    if sweep is not None:
        verb = "search" if "search" in json.loads(sweep.read_text()) else "sweep"
        return f"cargo run --release -- {verb} {sweep.relative_to(ROOT)}"
    return f"cargo run --release -- run models/{name}.json"


def missing(message):
    """Says what is missing and how to make it; an error in strict mode."""
    if STRICT:
        raise RuntimeError(message)
    print(message)


def read_output(name, file, directory=None, key="variant"):
    """One stormsim CSV as a DataFrame, or None (with a message saying how to produce it).

    `key` is a column every such file has: `variant` for `run`, `point` for a sweep's files.
    """
    path = (directory or OUTPUTS / name) / file
    if not path.is_file():
        missing(f"Missing {path}.\nProduce it from the repository root with:\n"
                f"    {how_to_produce(name)}\nthen re-run this notebook.")
        return None
    df = pd.read_csv(path)
    if key not in df.columns:
        missing(f"{path} has no `{key}` column: is it a stormsim output? Re-create it with:\n"
                f"    {how_to_produce(name)}")
        return None
    if key == "variant":
        df["variant"] = df["variant"].astype(str)
    return df


# The columns of summary.csv that hold words, not numbers; summary.tidy.csv leaves them out
# (docs/outputs.md), so `read_summary` takes them from summary.csv.
TEXT_COLUMNS = ["complete", "stopped_by", "outcome", "metastable", "recovered_by", "verdict_reason"]


def read_tidy(name, table, directory=None):
    """A run's `summary.tidy.csv` or `timeseries.tidy.csv.gz` (`table` is "summary" or "timeseries"):
    one row per value, with the columns `variant` (and `t_s`), `entity`, `metric` and `value`.
    `entity` is a service's or a workload's name, or `run` for the run's own figures."""
    # The time series is gzipped (docs/outputs.md); pandas reads either alike.
    file = {"summary": "summary.tidy.csv", "timeseries": "timeseries.tidy.csv.gz"}[table]
    return read_output(name, file, directory)


def pivot(tidy):
    """A tidy table with one row per variant (and bucket) and one column per entity and metric,
    named `requests` for the run's own figures and `catalog.offered` for a service's or a
    workload's, as the sections below use them. The pivot is one line; the rest keeps the file's
    order of rows and columns, and reads whole-number columns as integers, as `pd.read_csv` reads
    the wide file. A figure the run does not have (no row in the tidy file) is NaN."""
    keys = [c for c in ("variant", "t_s") if c in tidy.columns]
    wide = tidy.pivot(index=keys, columns=["entity", "metric"], values="value")
    rows = tidy[keys].drop_duplicates()
    wide = wide.reindex(index=pd.MultiIndex.from_frame(rows) if len(keys) > 1 else rows[keys[0]],
                        columns=list(dict.fromkeys(zip(tidy["entity"], tidy["metric"]))))
    wide.columns = [metric if entity == "run" else f"{entity}.{metric}" for entity, metric in wide.columns]
    whole = [c for c in wide.columns if wide[c].notna().all() and (wide[c] % 1 == 0).all()]
    # One block per column type, not per column: pandas warns of a fragmented frame otherwise.
    return wide.reset_index().astype(dict.fromkeys(whole, "int64")).copy()


def read_timeseries(name, directory=None):
    """A run's time series, one row per variant and bucket, from `timeseries.tidy.csv.gz` (or None)."""
    tidy = read_tidy(name, "timeseries", directory)
    return None if tidy is None else pivot(tidy)


def read_summary(name, directory=None):
    """A run's summary, one row per variant: its numbers from `summary.tidy.csv`, its words
    (`outcome`, `metastable`, ...) from `summary.csv` (or None if either is missing)."""
    tidy = read_tidy(name, "summary", directory)
    words = read_output(name, "summary.csv", directory)
    if tidy is None or words is None:
        return None
    return pivot(tidy).merge(words[["variant"] + [c for c in TEXT_COLUMNS if c in words.columns]],
                             on="variant", how="left")


def has_columns(df, columns, name, what):
    """True if every column is there; otherwise says which are missing (an older/newer stormsim?)."""
    absent = [c for c in columns if c not in df.columns]
    if absent:
        missing(f"{what}: columns {absent} are missing. The file may come from another stormsim "
                f"version; regenerate it with:\n    {how_to_produce(name)}")
    return not absent


def variants_in_order(df):
    return list(dict.fromkeys(df["variant"]))


def as_bool(series):
    """`true`/`false` in the CSV (blank when not applicable) -> True/False/None."""
    return series.map(lambda x: {"true": True, "false": False}.get(str(x).strip().lower()))


def prepare_timeseries(ts, summary):
    """Sorts the rows, finds the bucket width, and drops buckets that start at or after the end of
    the run (a run stopped by `horizon_s` ends with an empty, zero-width bucket at t = horizon)."""
    order = {v: i for i, v in enumerate(variants_in_order(ts))}
    ts = ts.sort_values(["variant", "t_s"], key=lambda s: s.map(order) if s.name == "variant" else s,
                        kind="stable").reset_index(drop=True)
    steps = ts.groupby("variant", sort=False)["t_s"].diff()
    steps = steps[steps > 0]
    width = float(steps.min()) if len(steps) else 1.0
    if summary is not None and "sim_time_s" in summary.columns:
        end = ts["variant"].map(summary.drop_duplicates("variant").set_index("variant")["sim_time_s"])
        after_end = ts["t_s"] >= end - 1e-9  # NaN end (variant not in summary) -> kept
        if after_end.any():
            print(f"dropped {int(after_end.sum())} bucket(s) starting at the end of their run "
                  f"(zero width, all counters 0)")
        ts = ts[~after_end].reset_index(drop=True)
    print(f"{len(ts)} rows, {ts['variant'].nunique()} variants, bucket width {width:g} s")
    return ts, width


ROLE_STYLE = {  # timeline roles -> line colour
    "trigger_start": "tab:red",
    "trigger_end": "tab:green",
    "intervention": "tab:purple",
    None: "0.4",
}


def timeline_events(model):
    """(at_s, name, role) per variant, from models/<model>.json: the base timeline plus entries a
    variant appends with `timeline[+]`. Markers only; empty if the model file is not there."""
    path = MODELS / f"{model}.json"
    try:
        spec = json.loads(path.read_text())
    except (OSError, ValueError):
        return [], {}

    def entry(e):
        return (float(e["at_s"]), str(e.get("name", "")), e.get("role"))

    base = sorted(entry(e) for e in spec.get("timeline", []) if isinstance(e, dict) and "at_s" in e)
    per_variant = {}
    for v in spec.get("variants", []):
        extra = [entry(val) for key, val in (v.get("set") or {}).items()
                 if key.startswith("timeline[") and isinstance(val, dict) and "at_s" in val]
        per_variant[v.get("name")] = sorted(base + extra)
    return base, per_variant


def mark_events(ax, events, t0=None, t1=None, labels=False):
    """Dashed vertical lines at the timeline's events, coloured by role."""
    for at, name, role in events:
        if (t0 is not None and at < t0) or (t1 is not None and at > t1):
            continue
        ax.axvline(at, color=ROLE_STYLE.get(role, "0.4"), lw=0.9, ls="--", alpha=0.8)
        if labels:
            ax.annotate(name, (at, 1), xycoords=("data", "axes fraction"), xytext=(2, -2),
                        textcoords="offset points", va="top", fontsize=7, rotation=90,
                        color=ROLE_STYLE.get(role, "0.4"))


def reconcile(name, ts, summary):
    """Totals of a time series against its summary.csv, per variant (None without both files)."""
    if ts is None or summary is None:
        return None
    if not (has_columns(ts, ["requests", "succeeded"], name, f"{name} timeseries")
            and has_columns(summary, ["requests", "succeeded", "failed"], name, f"{name} summary")):
        return None
    ts_failures = [c for c in ts.columns if c.startswith("failed_")]
    totals = ts.groupby("variant", sort=False)[["requests", "succeeded"] + ts_failures].sum()
    s = summary.set_index("variant")
    out = pd.DataFrame({
        "requests (ts - summary)": totals["requests"] - s["requests"],
        "succeeded (ts - summary)": totals["succeeded"] - s["succeeded"],
        "failed in ts": totals[ts_failures].sum(axis=1),
        "failed in summary": s["failed"],
    })
    out["failed not in ts"] = out["failed in summary"] - out["failed in ts"]
    reasons = [c for c in s.columns if c.startswith("failed_") and c not in ts_failures]
    out["of which (summary reasons without a ts column)"] = s[reasons].apply(
        lambda r: ", ".join(f"{c}={r[c]:.0f}" for c in reasons if pd.notna(r[c]) and r[c] != 0) or "-",
        axis=1)
    return out.loc[[v for v in totals.index if v in out.index]]
