"""stormsim.sweep against `stormsim sweep`'s results.csv and aggregate.csv."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from conftest import MODELS, read_table, stormsim_cli

import stormsim
from stormsim import _native

# Two points of the error spike's retries, two replications each: a point
# that stays metastable and one that recovers.
SPIKE_SWEEP = {
    "name": "spike-attempts",
    "model": str(MODELS / "error-spike.json"),
    "variant": "retries",
    "replications": 2,
    "axes": [{"path": "workloads[*].retry.max_attempts", "name": "attempts", "values": [1, 3]}],
}


def write_sweep(tmp_path, sweep):
    path = tmp_path / "spike.sweep.json"
    path.write_text(json.dumps(sweep, indent=2))
    return path


def test_the_frames_hold_the_numbers_of_the_files_stormsim_sweep_writes(tmp_path):
    path = write_sweep(tmp_path, SPIKE_SWEEP)
    out = tmp_path / "cli"
    stormsim_cli("sweep", path, "--out", out, "--quiet")
    native = _native.run_sweep(str(path), None, None, str(path))
    assert native["results_csv"] == (out / "results.csv").read_text()
    assert native["aggregate_csv"] == (out / "aggregate.csv").read_text()

    swept = stormsim.sweep(path)
    assert swept.name == "spike-attempts"
    pd.testing.assert_frame_equal(swept.results, read_table(out / "results.csv"))
    pd.testing.assert_frame_equal(swept.aggregate, read_table(out / "aggregate.csv"))
    assert len(swept.results) == 4 and len(swept.aggregate) == 2
    # The two points are told apart: one attempt recovers, three stay stuck.
    shares = dict(zip(swept.aggregate["attempts"], swept.aggregate["metastable_share"]))
    assert shares[1] < shares[3]


def test_a_sweep_given_as_a_dict_runs_as_its_file_whatever_the_jobs(tmp_path):
    from_file = stormsim.sweep(write_sweep(tmp_path, SPIKE_SWEEP), jobs=2)
    from_dict = stormsim.sweep(SPIKE_SWEEP, jobs=1)
    pd.testing.assert_frame_equal(from_dict.results, from_file.results)
    pd.testing.assert_frame_equal(from_dict.aggregate, from_file.aggregate)


def test_a_bad_sweep_raises_model_error_as_check_says_it(tmp_path):
    bad = {**SPIKE_SWEEP, "replications": 0, "name": "no/folder"}
    path = write_sweep(tmp_path, bad)
    said = stormsim_cli("check", path, expect=2)
    with pytest.raises(stormsim.ModelError) as refused:
        stormsim.sweep(path)
    assert said.stderr == f"{refused.value}\n"
    paths = [p for p, _ in refused.value.problems]
    assert paths == ["name", "replications"], paths
    with pytest.raises(stormsim.ModelError) as from_dict:
        stormsim.sweep(bad)
    assert from_dict.value.problems == refused.value.problems
    with pytest.raises(ValueError, match="jobs takes 1 to 256"):
        stormsim.sweep(SPIKE_SWEEP, jobs=0)


# The Catalog incident at 1/40 scale: a margin of seconds.
SMALL_MARGIN = {
    "name": "small-margin",
    "model": str(MODELS / "catalog-incident.json"),
    "replications": 4,
    "set": {
        "workloads[*].arrival.rate_per_s": 10,
        "workloads[*].duration_s": 300,
        "horizon_s": 300,
        "services[catalog].workers": 5,
        "services[catalog].queue_capacity": 500,
        "timeline[2].at_s": 240,
        "timeline[3].at_s": 270,
    },
    "margin": {
        "trigger": {"from": 0.25, "to": 12.25, "tolerance": 1.0},
        "load_scale": [1.0],
        "stop": {"max_replications": 16},
    },
}


def test_the_margin_frames_hold_the_files_stormsim_margin_writes(tmp_path):
    path = tmp_path / "margin.sweep.json"
    path.write_text(json.dumps(SMALL_MARGIN, indent=2))
    out = tmp_path / "cli"
    printed = stormsim_cli("margin", path, "--out", out, "--quiet")
    native = _native.run_margin(str(path), None, None, str(path))
    assert native["margin_csv"] == (out / "margin.csv").read_text()
    assert native["probes_csv"] == (out / "margin_probes.csv").read_text()

    found = stormsim.margin(SMALL_MARGIN, jobs=1)
    pd.testing.assert_frame_equal(found.margin, read_table(out / "margin.csv"))
    pd.testing.assert_frame_equal(found.probes, read_table(out / "margin_probes.csv"))
    row = found.margin.iloc[0]
    assert row["ci_low"] <= row["critical"] <= row["ci_high"]
    assert found.sentences[0] in printed.stdout


def test_a_sweep_without_a_margin_raises_model_error():
    with pytest.raises(stormsim.ModelError) as refused:
        stormsim.margin({**SMALL_MARGIN, "margin": None})
    assert "margin" in str(refused.value)


SMALL_SETS = {key: value for key, value in SMALL_MARGIN["set"].items()}


def test_the_storm_probability_frame_is_what_stormsim_probability_prints(tmp_path):
    model = MODELS / "catalog-incident.json"
    sets = {**SMALL_SETS, "timeline[1].at_s": 60.9}
    args = [f"--set={path}={json.dumps(value)}" for path, value in sets.items()]
    printed = stormsim_cli(
        "probability", model, "--variant", "baseline", "--variant", "retry-budget", "--runs", "40", "--csv", *args
    )
    frame = stormsim.storm_probability(model, ["baseline", "retry-budget"], runs=40, sets=sets, jobs=1)
    table = tmp_path / "probability.csv"
    table.write_text(printed.stdout)
    pd.testing.assert_frame_equal(frame, read_table(table))
    assert list(frame["variant"]) == ["baseline", "retry-budget"]
    assert all(frame["ci95_low"] <= frame["p_storm"]) and all(frame["p_storm"] <= frame["ci95_high"])
