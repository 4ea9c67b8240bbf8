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
