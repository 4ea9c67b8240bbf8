"""stormsim.run and stormsim.check against the `stormsim` binary's files and
messages."""

from __future__ import annotations

import gzip
import json
import os
import threading
import time

import pandas as pd
import pytest
from conftest import MODELS, read_table, stormsim_cli

import stormsim
from stormsim import _native

CHAIN = MODELS / "deadline-chain.json"
# Half the requests: the same model, quicker.
SHORT = {"workloads[users].requests": 100}
SHORT_ARGS = ["--set", "workloads[users].requests=100"]
# A model whose variants have verdicts: one metastable, three recovered.
SPIKE = MODELS / "error-spike.json"


def cli_run(tmp_path, model, *args):
    """`stormsim run MODEL --out DIR ARGS`: the folder of its files."""
    out = tmp_path / "cli"
    stormsim_cli("run", model, "--out", out, "--quiet", *args)
    return out


def expected_long(wide: pd.DataFrame) -> pd.DataFrame:
    """timeseries.csv's frame in long format, by pandas' own melt."""
    long = wide.melt(id_vars=["t_s", "variant"], var_name="column", value_name="value").dropna(subset=["value"])
    split = long["column"].str.split(".", n=1, expand=True)
    has_dot = split[1].notna()
    long["entity"] = split[0].where(has_dot, "run")
    long["metric"] = split[1].where(has_dot, split[0])
    return long[["variant", "t_s", "entity", "metric", "value"]]


def by_cell(frame: pd.DataFrame) -> pd.DataFrame:
    """A long frame in a canonical order, its value as float."""
    frame = frame.astype({"value": float, "entity": str, "metric": str, "variant": str})
    return frame.sort_values(["variant", "t_s", "entity", "metric"]).reset_index(drop=True)


def test_the_frames_hold_the_numbers_of_the_files_stormsim_run_writes(tmp_path):
    out = cli_run(tmp_path, CHAIN, *SHORT_ARGS)
    native = _native.run_model(str(CHAIN), None, json.dumps(SHORT), None, [], str(CHAIN))
    # The text the frames are parsed from is the files' bytes.
    assert native["summary_csv"] == (out / "summary.csv").read_text()
    assert native["timeseries_csv"] == (out / "timeseries.csv").read_text()
    with gzip.open(out / "timeseries.tidy.csv.gz", "rt", newline="") as tidy:
        assert native["timeseries_tidy_csv"] == tidy.read()

    run = stormsim.run(CHAIN, set=SHORT)
    pd.testing.assert_frame_equal(run.summary, read_table(out / "summary.csv"))
    assert list(run.summary["variant"]) == ["no-timeouts", "per-tier-timeouts", "per-tier-retries", "end-to-end-deadline"]

    wide = read_table(out / "timeseries.csv")
    assert list(run.timeseries.columns) == ["variant", "t_s", "entity", "metric", "value"]
    pd.testing.assert_frame_equal(by_cell(run.timeseries), by_cell(expected_long(wide)))
    # Every entity is the run's, a service's or the workload's.
    assert set(run.timeseries["entity"]) == {"run", "gateway", "A", "B", "users"}
    assert run.timeseries["value"].notna().all()


def test_the_verdicts_are_the_summarys_verdict_columns(tmp_path):
    out = cli_run(tmp_path, SPIKE)
    run = stormsim.run(SPIKE)
    summary = read_table(out / "summary.csv")
    columns = ["variant", "outcome", "metastable", "recovery_s"]
    assert list(run.verdicts.columns[:4]) == columns
    assert run.verdicts.columns[-1] == "verdict_reason"
    assert "decisive_goodput_ratio" in run.verdicts.columns
    pd.testing.assert_frame_equal(run.verdicts, summary[list(run.verdicts.columns)])
    outcomes = dict(zip(run.verdicts["variant"], run.verdicts["outcome"]))
    assert outcomes == {
        "retries": "metastable",
        "no-retries": "recovered",
        "retry-budget": "recovered",
        "fast-failure": "recovered",
    }
    assert run.verdicts["verdict_reason"].str.len().gt(0).all()


def test_a_model_given_as_a_dict_runs_as_its_file():
    as_dict = json.loads(CHAIN.read_text())
    from_dict = stormsim.run(as_dict, set=SHORT)
    from_file = stormsim.run(str(CHAIN), set=SHORT)
    pd.testing.assert_frame_equal(from_dict.summary, from_file.summary)
    pd.testing.assert_frame_equal(from_dict.timeseries, from_file.timeseries)


def test_variants_selects_in_the_models_order(tmp_path):
    out = cli_run(tmp_path, CHAIN, *SHORT_ARGS, "--variant", "per-tier-retries", "--variant", "no-timeouts")
    run = stormsim.run(CHAIN, variants=["per-tier-retries", "no-timeouts"], set=SHORT)
    assert list(run.summary["variant"]) == ["no-timeouts", "per-tier-retries"]
    pd.testing.assert_frame_equal(run.summary, read_table(out / "summary.csv"))
    # Each variant's run is its own: the same rows as in a run of all of them.
    whole = stormsim.run(CHAIN, set=SHORT).summary
    chosen = whole[whole["variant"].isin(["no-timeouts", "per-tier-retries"])].reset_index(drop=True)
    pd.testing.assert_frame_equal(run.summary, chosen)


def test_an_unknown_variant_is_refused_as_the_command_line_refuses_it(tmp_path):
    said = stormsim_cli("run", CHAIN, "--out", tmp_path / "cli", "--quiet", "--variant", "nope", expect=2)
    with pytest.raises(ValueError) as refused:
        stormsim.run(CHAIN, variants=["nope"])
    assert not isinstance(refused.value, stormsim.ModelError)
    assert said.stderr == f"error: {refused.value}\n"


def test_set_and_seed_apply_as_on_the_command_line(tmp_path):
    out = cli_run(tmp_path, CHAIN, *SHORT_ARGS, "--set", "services[B].workers=1", "--seed", "7")
    run = stormsim.run(CHAIN, seed=7, set={**SHORT, "services[B].workers": 1})
    assert run.seed == 7
    pd.testing.assert_frame_equal(run.summary, read_table(out / "summary.csv"))
    default = stormsim.run(CHAIN, set=SHORT)
    assert default.seed == 1
    assert not run.summary.equals(default.summary)
    assert run.summary["requests"].eq(100).all()


def test_two_runs_are_the_same():
    first = stormsim.run(SPIKE, seed=3)
    second = stormsim.run(SPIKE, seed=3)
    for name in ("summary", "timeseries", "verdicts"):
        pd.testing.assert_frame_equal(getattr(first, name), getattr(second, name))


def bad_model(tmp_path):
    model = json.loads(CHAIN.read_text())
    model["services"][2]["workers"] = -1
    model["services"][1]["steps"][1]["call"] = "C"
    model["variants"][1]["set"]["services[A].steps[B].timeout_ms"] = "soon"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(model, indent=2))
    return path, model


def test_a_bad_model_raises_model_error_with_every_problem_as_check_says_it(tmp_path):
    path, model = bad_model(tmp_path)
    said = stormsim_cli("check", path, expect=2)
    for call in (stormsim.check, stormsim.run):
        with pytest.raises(stormsim.ModelError) as refused:
            call(str(path))
        assert said.stderr == f"{refused.value}\n"
    problems = refused.value.problems
    assert len(problems) >= 3
    paths = [p for p, _ in problems]
    assert any(p.startswith("services[2].workers") or p.startswith("services[B].workers") for p in paths), paths
    assert any("variants[1]" in p for p in paths), paths
    # The dict has the same problems, said of the dict.
    with pytest.raises(stormsim.ModelError) as from_dict:
        stormsim.check(model)
    assert from_dict.value.problems == problems
    assert str(from_dict.value).startswith("<model dict>: ")


def test_a_bad_override_is_a_model_error_at_its_path(tmp_path):
    said = stormsim_cli("check", CHAIN, "--set", "services[Z].workers=2", expect=2)
    with pytest.raises(stormsim.ModelError) as refused:
        stormsim.run(str(CHAIN), set={"services[Z].workers": 2})
    assert said.stderr == f"{refused.value}\n"
    assert refused.value.problems[0][0] == "--set services[Z].workers"


def test_invalid_json_and_a_missing_file(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"name": "x",')
    with pytest.raises(stormsim.ModelError) as refused:
        stormsim.check(broken)
    [(path, message)] = refused.value.problems
    assert path == "" and "invalid JSON at line 1" in message
    with pytest.raises(FileNotFoundError):
        stormsim.run(tmp_path / "absent.json")
    with pytest.raises(TypeError):
        stormsim.run(42)


def test_check_returns_the_warnings_check_prints(tmp_path):
    below_round_trip = ["--set", "services[gateway].steps[A].timeout_ms=0.5"]
    said = stormsim_cli("check", CHAIN, *below_round_trip)
    found = stormsim.check(CHAIN, set={"services[gateway].steps[A].timeout_ms": 0.5})
    assert [w.name for w in found] == ["timeout-below-round-trip"]
    assert said.stderr == "".join(f"{CHAIN}: warning[{w.name}]: {w.path}: {w.message}\n" for w in found)
    assert stormsim.check(CHAIN) == []
    assert found[0].name in stormsim.WARNINGS
    # run says them as Python warnings, and keeps them.
    with pytest.warns(stormsim.StormsimWarning, match="timeout-below-round-trip"):
        run = stormsim.run(CHAIN, set={**SHORT, "services[gateway].steps[A].timeout_ms": 0.5})
    assert run.warnings == found


def test_polars_frames_hold_the_same_cells():
    pl = pytest.importorskip("polars")
    as_pandas = stormsim.run(SPIKE, variants=["retries", "no-retries"])
    as_polars = stormsim.run(SPIKE, variants=["retries", "no-retries"], frames="polars")
    for name in ("summary", "timeseries", "verdicts"):
        frame = getattr(as_polars, name)
        assert isinstance(frame, pl.DataFrame)
        expected = getattr(as_pandas, name)
        assert frame.columns == list(expected.columns)
        for column in frame.columns:
            got = [None if v is None else v for v in frame[column].to_list()]
            want = [None if pd.isna(v) else v for v in expected[column].tolist()]
            assert got == want, (name, column)


def test_the_gil_is_released_while_simulating():
    # The main thread keeps running while another simulates: with the GIL
    # held by the simulation, it would stop for the whole run. (The native
    # call alone: parsing the frames holds the GIL, as Python code does.)
    done = []
    simulate = lambda: done.append(_native.run_model(str(SPIKE), None, "{}", None, [], str(SPIKE)))  # noqa: E731
    worker = threading.Thread(target=simulate)
    # From before the start: a thread that takes the GIL at once holds up
    # `start()` itself.
    started = last = time.perf_counter()
    gaps = []
    worker.start()
    while worker.is_alive():
        now = time.perf_counter()
        gaps.append(now - last)
        last = now
    took = time.perf_counter() - started
    assert done and took > 0.1, f"the run took {took:.3f} s: too short to tell"
    assert max(gaps) < took / 2, f"the main thread stopped for {max(gaps):.3f} s of a {took:.3f} s run"




def test_memory_limit_gb_refuses_as_the_command_line_does(tmp_path):
    # 20,000 instances of A calling 20,000 of B: about 1.5 GiB of edge state,
    # under the default ceiling (4 GiB), over a ceiling of 1 GiB.
    wide = {"services[A].instances": 20000, "services[B].instances": 20000}
    wide_args = [a for path, n in wide.items() for a in ("--set", f"{path}={n}")]
    stormsim.check(CHAIN, set=wide)
    said = stormsim_cli("check", CHAIN, *wide_args, "--memory-limit-gb", "1", expect=2)
    with pytest.raises(stormsim.ModelError) as refused:
        stormsim.check(CHAIN, set=wide, memory_limit_gb=1)
    assert said.stderr == f"{refused.value}\n"
    with pytest.raises(ValueError, match="memory_limit_gb"):
        stormsim.check(CHAIN, memory_limit_gb=0)


def test_a_dict_model_reads_its_trace_file_from_the_current_folder(tmp_path, monkeypatch):
    (tmp_path / "peak.csv").write_text("rps\n40\n80\n40\n")
    model = {
        "name": "traced",
        "seed": 3,
        "workloads": [{"name": "users", "target": "api", "duration_s": 3,
                       "arrival": {"kind": "trace", "file": "peak.csv"}}],
        "services": [{"name": "api", "workers": 4, "steps": [{"work": {"kind": "constant", "ms": 5}}]}],
    }
    monkeypatch.chdir(tmp_path)
    from_file = stormsim.run(model)
    model["workloads"][0]["arrival"] = {"kind": "trace", "rates_per_s": [40, 80, 40]}
    inline = stormsim.run(model)
    pd.testing.assert_frame_equal(from_file.summary, inline.summary)


def test_regression_trace_file_reads_anywhere(tmp_path, monkeypatch):
    """A dict's trace files must be in the current folder: a file outside it
    (``..``, an absolute path, a symbolic link that leads out) is a problem
    at the trace's ``file``, its contents unread and unquoted, where any
    readable file was opened and its second line printed in the message.
    ``allow_files_outside=True`` reads it; a model file reads it as
    ``stormsim run`` does."""
    (tmp_path / "secret.csv").write_text("rps\nhunter2\n")
    here = tmp_path / "models"
    here.mkdir()
    (here / "peak.csv").write_text("rps\n40\n80\n")
    (here / "link.csv").symlink_to(tmp_path / "secret.csv")
    monkeypatch.chdir(here)

    def traced(file):
        return {
            "name": "traced",
            "workloads": [{"name": "users", "target": "api", "duration_s": 2,
                           "arrival": {"kind": "trace", "file": file}}],
            "services": [{"name": "api", "steps": [{"work": {"kind": "constant", "ms": 5}}]}],
        }

    for file in ["../secret.csv", str(tmp_path / "secret.csv"), "link.csv"]:
        for call in (stormsim.check, stormsim.run):
            with pytest.raises(stormsim.ModelError) as refused:
                call(traced(file))
            assert refused.value.problems[0][0] == "workloads[0].arrival.file", file
            assert "this model may read files in its own folder only" in str(refused.value), file
            assert "hunter2" not in str(refused.value), file
        with pytest.raises(stormsim.ModelError, match="own folder only"):
            stormsim.sweep({"name": "s", "model": traced(file), "replications": 1,
                            "axes": [{"path": "services[api].workers", "values": [1]}]})
        with pytest.raises(stormsim.ModelError, match="hunter2"):
            stormsim.check(traced(file), allow_files_outside=True)
    stormsim.check(traced("peak.csv"))
    (here / "m.json").write_text(json.dumps(traced("../secret.csv")))
    with pytest.raises(stormsim.ModelError, match="hunter2"):
        stormsim.check(here / "m.json")
    with pytest.raises(stormsim.ModelError, match="own folder only"):
        stormsim.check(here / "m.json", allow_files_outside=False)


def test_fail_on_raises_with_each_failing_variant_as_the_command_line_exits_4(tmp_path):
    # error-spike: `retries` is metastable, the other three recovered.
    with pytest.raises(stormsim.VerdictFailed) as failed:
        stormsim.run(SPIKE, fail_on=["metastable", "relapsed"])
    assert [(v, o) for v, o, _ in failed.value.failing] == [("retries", "metastable")]
    assert failed.value.failing[0][2].startswith("not recovered")
    assert "FAIL retries: metastable: not recovered" in str(failed.value)
    assert list(failed.value.result.verdicts["variant"]) == ["retries", "no-retries", "retry-budget", "fast-failure"]
    done = stormsim_cli("run", SPIKE, "--out", tmp_path / "cli", "--quiet", "--fail-on", "metastable,relapsed", expect=4)
    assert "FAIL error-spike/retries: metastable: not recovered" in done.stderr
    assert "1 variant judged metastable or relapsed or without a verdict" in done.stderr
    # A healthy model passes: 0 from both.
    run = stormsim.run(SPIKE, variants=["no-retries"], fail_on="metastable")
    assert list(run.verdicts["outcome"]) == ["recovered"]
    stormsim_cli(
        "run", SPIKE, "--variant", "no-retries", "--out", tmp_path / "ok", "--quiet", "--fail-on", "metastable"
    )


def test_fail_on_refuses_an_outcome_that_is_none(tmp_path):
    with pytest.raises(ValueError, match="the outcomes are recovered, relapsed, metastable"):
        stormsim.run(SPIKE, fail_on=["stuck"])
    done = stormsim_cli("run", SPIKE, "--out", tmp_path / "cli", "--fail-on", "stuck", expect=2)
    assert "no outcome \"stuck\"" in done.stderr
    assert stormsim.OUTCOMES == (
        "recovered",
        "relapsed",
        "metastable",
        "overloaded",
        "unhealthy_before_trigger",
        "undetermined",
    )


def test_regression_model_file_unbounded(tmp_path):
    """A model file that is not a regular file, or is over 64 MiB, raises an
    OSError saying so before a byte is read (a pipe hung, /dev/zero or a huge
    file was read whole: MemoryError), as the command line refuses it."""
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate((64 << 20) + 1)  # sparse: made at once
    with pytest.raises(OSError, match=r"larger than the 67108864 bytes \(64 MiB\)"):
        stormsim.run(big)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    for path in (fifo, "/dev/zero"):
        with pytest.raises(OSError, match="not a regular file"):
            stormsim.check(path)
