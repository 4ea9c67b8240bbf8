"""stormsim for Python: run resilience models and sweeps, get data frames.

    import stormsim
    run = stormsim.run("models/deadline-chain.json", set={"workloads[users].requests": 100})
    run.summary        # summary.csv of `stormsim run`, one row per variant
    run.timeseries     # timeseries.tidy.csv.gz: variant, t_s, entity, metric, value
    run.verdicts       # per variant: outcome, metastable, recovery_s, the figures, the reason

The simulator is the compiled ``stormsim._native`` (the Rust crates that the
``stormsim`` command runs); its tables come back as the CSV text the command
writes, parsed here into pandas (or polars) data frames: the same numbers as
the command's files. Simulations run with the GIL released.
"""

from __future__ import annotations

import csv
import io
import json
import os
import warnings as _warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Optional, Sequence, Union

from . import _native
from ._errors import ModelError, VerdictFailed

__all__ = [
    "ModelError",
    "ModelWarning",
    "OUTCOMES",
    "PartialRunWarning",
    "Run",
    "StormsimWarning",
    "MarginResult",
    "SweepResult",
    "TIMESERIES_COLUMNS",
    "VERDICT_COLUMNS",
    "VerdictFailed",
    "WARNINGS",
    "check",
    "margin",
    "run",
    "storm_probability",
    "sweep",
]

__version__ = _native.__version__

#: The columns of ``Run.verdicts`` after ``variant``: those of summary.csv
#: from ``outcome`` to ``verdict_reason``.
VERDICT_COLUMNS: tuple[str, ...] = tuple(_native.VERDICT_COLUMNS)

#: The recovery outcomes a verdict may have, and ``fail_on`` takes.
OUTCOMES: tuple[str, ...] = tuple(_native.OUTCOMES)

#: The columns of ``Run.timeseries`` (long format, as timeseries.tidy.csv.gz).
TIMESERIES_COLUMNS: tuple[str, ...] = ("variant", "t_s", "entity", "metric", "value")

#: Every model warning's name, with what it is about.
WARNINGS: dict[str, str] = dict(_native.WARNINGS)

#: Columns read as text whatever they hold: a variant named "1" or "NA"
#: stays a name. The others' types are inferred.
_TEXT_COLUMNS = ("variant", "entity", "metric")


class ModelWarning(NamedTuple):
    """A value that is valid but almost certainly not meant (see ``WARNINGS``)."""

    name: str
    """Its stable name, one of ``WARNINGS``."""
    path: str
    """The JSON path it is about."""
    message: str
    """What is almost certainly not meant, and why."""


class StormsimWarning(UserWarning):
    """A model's warning, issued by ``run`` as ``stormsim run`` prints it."""


class PartialRunWarning(RuntimeWarning):
    """A run stopped at one of the model's ``limits``: its numbers describe a
    cut-short run (``stormsim run`` and ``sweep`` exit 3 for it)."""


@dataclass(frozen=True, repr=False)
class Run:
    """The result of ``stormsim.run``: frames of every variant run."""

    model: str
    """The model's name."""
    seed: int
    """The master seed the variants ran with."""
    summary: Any
    """summary.csv: one row per variant."""
    timeseries: Any
    """The time series in long format, as ``stormsim run``'s
    timeseries.tidy.csv.gz: ``variant, t_s, entity, metric, value``."""
    verdicts: Any
    """One row per variant: ``variant`` and ``VERDICT_COLUMNS``."""
    warnings: list = field(default_factory=list)
    """The model's warnings (``ModelWarning``), of every variant."""
    stopped: dict = field(default_factory=dict)
    """The variants that stopped at one of the model's limits, with why."""

    def __repr__(self) -> str:
        n = len(self.summary)
        cut = f", {len(self.stopped)} cut short by a limit" if self.stopped else ""
        return f"<stormsim.Run {self.model!r} seed {self.seed}: {n} variant{'' if n == 1 else 's'}{cut}>"


@dataclass(frozen=True, repr=False)
class SweepResult:
    """The result of ``stormsim.sweep``: its two tables."""

    name: str
    """The sweep's name."""
    results: Any
    """results.csv: one row per run (point, replication)."""
    aggregate: Any
    """aggregate.csv: one row per point, with means and 95% intervals."""
    stopped: int = 0
    """How many runs stopped at one of the model's limits."""

    def __repr__(self) -> str:
        return f"<stormsim.SweepResult {self.name!r}: {len(self.results)} runs, {len(self.aggregate)} points>"


@dataclass(frozen=True, repr=False)
class MarginResult:
    """The result of ``stormsim.margin``: its two tables and its sentences."""

    name: str
    """The sweep's name."""
    margin: Any
    """margin.csv: one row per variant, load and level, with the critical
    trigger size and its interval."""
    probes: Any
    """margin_probes.csv: every probe, its share of storms and interval."""
    sentences: list = field(default_factory=list)
    """One sentence per row of ``margin``, as ``stormsim margin`` prints."""

    def __repr__(self) -> str:
        return f"<stormsim.MarginResult {self.name!r}: {len(self.margin)} rows, {len(self.probes)} probes>"


def _source(document: Any, what: str) -> dict:
    """A model or sweep as the native functions take it: a file's path, or a
    dict as JSON text; with the name its errors carry."""
    if isinstance(document, (str, os.PathLike)):
        path = os.fspath(document)
        return {"path": path, "text": None, "source": path}
    if isinstance(document, Mapping):
        # NaN is not JSON: refused here rather than sent as something else.
        text = json.dumps(document, allow_nan=False)
        return {"path": None, "text": text, "source": f"<{what} dict>"}
    raise TypeError(f"the {what} must be a path (str or pathlib.Path) or a dict, not {type(document).__name__}")


def _files_outside(allow_files_outside: Optional[bool], src: dict) -> bool:
    """Whether the model may read files outside its folder: as asked, or by
    default a model file may (as ``stormsim run`` reads it) and a dict may
    not (it often comes from someone else)."""
    if allow_files_outside is None:
        return src["path"] is not None
    return bool(allow_files_outside)


def _sets_json(sets: Optional[Mapping]) -> str:
    if sets is None:
        return "{}"
    if not isinstance(sets, Mapping):
        raise TypeError(f"`set` must be a dict of {{PATH: VALUE}}, not {type(sets).__name__}")
    return json.dumps(dict(sets), allow_nan=False)


def _fail_on(fail_on: Optional[Sequence[str]]) -> list[str]:
    """``fail_on`` checked: outcome names, as ``--fail-on`` takes them."""
    if fail_on is None:
        return []
    if isinstance(fail_on, str):
        fail_on = [fail_on]
    names = [str(o).strip() for o in fail_on]
    unknown = [o for o in names if o not in OUTCOMES]
    if unknown:
        raise ValueError(f"no outcome {', '.join(map(repr, unknown))}; the outcomes are {', '.join(OUTCOMES)}")
    return names


def _failing(rows: list[dict], fail_on: list[str], where) -> list[tuple[str, str, str]]:
    """``(where, outcome, reason)`` of each row (a summary.csv or results.csv
    row, read as text) judged an outcome of ``fail_on``, or with no verdict
    at all where ``fail_on`` asks for one (a gate that cannot judge does not
    pass), as ``--fail-on`` does."""
    if not fail_on:
        return []
    no_verdict = ("no verdict", "the model asks for no recovery analysis")
    return [
        (where(r), *((r["outcome"], r.get("verdict_reason", "")) if r.get("outcome") else no_verdict))
        for r in rows
        if not r.get("outcome") or r["outcome"] in fail_on
    ]


def _frame_kind(frames: str) -> str:
    if frames not in ("pandas", "polars"):
        raise ValueError(f"frames must be 'pandas' or 'polars', not {frames!r}")
    return frames


def _frame(text: str, frames: str):
    """A data frame of CSV text as stormsim writes it: an empty cell is a
    missing value, and only an empty cell (a variant named "NA" is a name)."""
    header = next(csv.reader(io.StringIO(text)), [])
    text_columns = [c for c in _TEXT_COLUMNS if c in header]
    if frames == "polars":
        try:
            import polars as pl
        except ImportError as e:
            raise ImportError("frames='polars' needs polars: pip install polars") from e
        if not header:
            return pl.DataFrame()
        return pl.read_csv(
            io.BytesIO(text.encode()),
            infer_schema_length=None,
            schema_overrides={c: pl.String for c in text_columns},
        )
    import pandas as pd

    if not header:
        return pd.DataFrame()
    return pd.read_csv(
        io.StringIO(text),
        dtype={c: str for c in text_columns},
        keep_default_na=False,
        na_values=[""],
    )


def check(
    model: Union[str, os.PathLike, Mapping],
    *,
    set: Optional[Mapping] = None,
    memory_limit_gb: Optional[float] = None,
    allow_files_outside: Optional[bool] = None,
) -> list:
    """Checks a model without running it, as ``stormsim check`` does.

    ``model`` is a model file's path (``str`` or ``pathlib.Path``; the files
    it names, such as a trace's, are read from its folder) or the model as a
    dict (the files it names are read from the current folder). ``set``
    overrides parameters in every variant, ``{PATH: VALUE}``, as ``--set
    PATH=VALUE`` does. ``memory_limit_gb`` is the ceiling on the memory a
    run is estimated to need (4 GiB by default, as ``--memory-limit-gb``): a
    model over it is a problem naming its largest part. Returns the model's warnings, a list of
    ``ModelWarning(name, path, message)``; raises ``ModelError`` with every
    problem if the model cannot run.

    ``allow_files_outside``: whether the files the model names (a trace's
    ``file``) may be outside its folder (an absolute path, ``..``, or a
    symbolic link that leads out). By default a model file's may, as
    ``stormsim check`` reads them, and a dict's may not: a model taken from
    someone else then reads nothing beyond the current folder (a file
    outside it is a problem at the trace's ``file``). ``True`` allows it.
    """
    src = _source(model, "model")
    found = _native.check_model(
        src["path"],
        src["text"],
        _sets_json(set),
        src["source"],
        memory_limit_gb,
        _files_outside(allow_files_outside, src),
    )
    return [ModelWarning(*w) for w in found]


def run(
    model: Union[str, os.PathLike, Mapping],
    seed: Optional[int] = None,
    variants: Optional[Sequence[str]] = None,
    set: Optional[Mapping] = None,
    *,
    frames: str = "pandas",
    memory_limit_gb: Optional[float] = None,
    fail_on: Optional[Sequence[str]] = None,
    allow_files_outside: Optional[bool] = None,
) -> Run:
    """Runs a model's variants, as ``stormsim run`` does (without writing files).

    ``model``: a model file's path or the model as a dict (see ``check``).
    ``seed`` overrides the model's master seed; ``variants`` runs only those
    named (in the model's order); ``set`` overrides parameters in every
    variant, ``{PATH: VALUE}``; ``memory_limit_gb`` and
    ``allow_files_outside`` as for ``check`` (a dict's files must be in the
    current folder unless ``allow_files_outside=True``). The variants run in parallel, with the GIL
    released; the result is the same whatever the number of cores.

    Returns a ``Run`` whose ``summary``, ``timeseries`` (long format) and
    ``verdicts`` are pandas data frames, or polars ones with
    ``frames="polars"``. The model's warnings are issued as
    ``StormsimWarning`` and kept in ``Run.warnings``; a variant stopped at
    one of the model's limits issues a ``PartialRunWarning``. Raises
    ``ModelError`` if the model cannot run, ``ValueError`` for a variant it
    does not have or an outcome that is none of ``OUTCOMES``.

    ``fail_on``: recovery outcomes (``["metastable", "relapsed"]``) that
    fail the run, as ``stormsim run --fail-on`` does: ``VerdictFailed`` is
    raised, listing each variant judged one of them with its reason; its
    ``result`` is the ``Run``.
    """
    frames = _frame_kind(frames)
    fail_on = _fail_on(fail_on)
    if isinstance(variants, str):
        variants = [variants]
    src = _source(model, "model")
    out = _native.run_model(
        src["path"],
        src["text"],
        _sets_json(set),
        seed,
        list(variants or []),
        src["source"],
        memory_limit_gb,
        _files_outside(allow_files_outside, src),
    )
    found = [ModelWarning(*w) for w in out["warnings"]]
    for w in found:
        _warnings.warn(f"{src['source']}: warning[{w.name}]: {w.path}: {w.message}", StormsimWarning, stacklevel=2)
    stopped = dict(out["stopped"])
    for variant, why in stopped.items():
        _warnings.warn(f"variant {variant!r} {why}", PartialRunWarning, stacklevel=2)
    summary = _frame(out["summary_csv"], frames)
    columns = ["variant", *VERDICT_COLUMNS]
    verdicts = summary.select(columns) if frames == "polars" else summary[columns].copy()
    result = Run(
        model=out["model"],
        seed=out["seed"],
        summary=summary,
        timeseries=_frame(out["timeseries_tidy_csv"], frames),
        verdicts=verdicts,
        warnings=found,
        stopped=stopped,
    )
    rows = list(csv.DictReader(io.StringIO(out["summary_csv"])))
    failing = _failing(rows, fail_on, lambda r: r["variant"])
    if failing:
        raise VerdictFailed(out["model"], failing, result)
    return result


def sweep(
    sweep: Union[str, os.PathLike, Mapping],
    jobs: Optional[int] = None,
    *,
    frames: str = "pandas",
    memory_limit_gb: Optional[float] = None,
    fail_on: Optional[Sequence[str]] = None,
    allow_files_outside: Optional[bool] = None,
) -> SweepResult:
    """Runs a sweep, as ``stormsim sweep`` does (without writing files).

    ``sweep``: a sweep file's path (its ``model`` path is read from the
    file's folder) or the sweep as a dict (a ``model`` path in it is read
    from the current folder; an inline model works too). ``jobs``: worker
    threads, 1 to 256 (all cores by default); the results do not depend on
    it. ``memory_limit_gb``: the ceiling on each run's estimated memory, as
    for ``check`` (a point over it is refused). Returns a ``SweepResult`` whose ``results`` and ``aggregate`` are
    the tables of results.csv and aggregate.csv. Raises ``ModelError`` if
    the sweep or its model cannot run; a run stopped at one of the model's
    limits issues a ``PartialRunWarning``. ``fail_on`` as for ``run``: a
    run judged one of those outcomes raises ``VerdictFailed`` (each failing
    run as ``point P replication R``), its ``result`` the ``SweepResult``.
    ``allow_files_outside`` as for ``check``: a sweep dict's trace files
    (its model's, or its own) must be in the model's folder unless it is
    ``True``.
    """
    frames = _frame_kind(frames)
    fail_on = _fail_on(fail_on)
    src = _source(sweep, "sweep")
    out = _native.run_sweep(
        src["path"], src["text"], jobs, src["source"], memory_limit_gb, _files_outside(allow_files_outside, src)
    )
    if out["stopped"]:
        n = out["stopped"]
        _warnings.warn(
            f"{n} run{'' if n == 1 else 's'} stopped at one of the model's limits: their numbers describe cut-short runs",
            PartialRunWarning,
            stacklevel=2,
        )
    result = SweepResult(
        name=out["name"],
        results=_frame(out["results_csv"], frames),
        aggregate=_frame(out["aggregate_csv"], frames),
        stopped=out["stopped"],
    )
    rows = list(csv.DictReader(io.StringIO(out["results_csv"])))
    failing = _failing(rows, fail_on, lambda r: f"point {r['point']} replication {r['replication']}")
    if failing:
        raise VerdictFailed(out["name"], failing, result)
    return result


def margin(
    sweep: Union[str, os.PathLike, Mapping],
    jobs: Optional[int] = None,
    *,
    frames: str = "pandas",
    memory_limit_gb: Optional[float] = None,
    allow_files_outside: Optional[bool] = None,
) -> MarginResult:
    """Finds the storm margin, as ``stormsim margin`` does (without writing
    files): for a sweep with a ``margin`` block, at each load and variant,
    the trigger size at which the share of runs that storm crosses each
    level, with its interval.

    ``sweep``, ``jobs``, ``frames``, ``memory_limit_gb`` and
    ``allow_files_outside`` as for ``sweep``. Returns a ``MarginResult``
    whose ``margin`` and ``probes`` are the tables of margin.csv and
    margin_probes.csv. Raises ``ModelError`` if the sweep, its margin or its
    model cannot run.
    """
    frames = _frame_kind(frames)
    src = _source(sweep, "sweep")
    out = _native.run_margin(
        src["path"], src["text"], jobs, src["source"], memory_limit_gb, _files_outside(allow_files_outside, src)
    )
    return MarginResult(
        name=out["name"],
        margin=_frame(out["margin_csv"], frames),
        probes=_frame(out["probes_csv"], frames),
        sentences=list(out["sentences"]),
    )


def storm_probability(
    model: Union[str, os.PathLike, Mapping],
    variants: Optional[Sequence[str]] = None,
    *,
    runs: int = 400,
    splitting: bool = False,
    runs_per_stage: int = 100,
    repetitions: int = 4,
    sets: Optional[Mapping] = None,
    seed: Optional[int] = None,
    jobs: Optional[int] = None,
    frames: str = "pandas",
    allow_files_outside: Optional[bool] = None,
):
    """The probability of a storm per variant, as ``stormsim probability
    --csv`` gives it: a frame of one row per variant (``p_storm``,
    ``ci95_low``, ``ci95_high``, ``runs``, ...).

    Plain Monte Carlo with ``runs`` runs (Wilson's interval), or with
    ``splitting`` multilevel splitting, ``runs_per_stage`` runs per stage
    and ``repetitions`` independent repetitions (Student's t interval over
    them), for storms too rare for Monte Carlo. ``model``, ``sets``,
    ``seed`` and ``allow_files_outside`` as for ``run``; run ``r`` has seed
    ``seed + r``. Raises ``ModelError`` if the model cannot run.
    """
    frames = _frame_kind(frames)
    src = _source(model, "model")
    text = _native.storm_probability(
        src["path"],
        src["text"],
        _sets_json(sets),
        seed,
        list(variants or []),
        src["source"],
        runs,
        splitting,
        runs_per_stage,
        repetitions,
        jobs,
        _files_outside(allow_files_outside, src),
    )
    return _frame(text, frames)
