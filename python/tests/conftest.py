"""What the tests share: the repository's models, and the `stormsim` binary
whose files the package's frames must equal."""

from __future__ import annotations

import io
import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"


def binary() -> Path:
    """The command line the frames are compared with: $STORMSIM_BIN, or the
    workspace's debug build (python/run-tests builds it)."""
    path = Path(os.environ.get("STORMSIM_BIN", ROOT / "target" / "debug" / "stormsim"))
    if not path.is_file():
        pytest.fail(f"no stormsim binary at {path}: build it with `cargo build -p stormsim-cli` or set STORMSIM_BIN")
    return path


def stormsim_cli(*args: str, cwd: Path | None = None, expect: int = 0) -> subprocess.CompletedProcess:
    """Runs the `stormsim` binary; fails the test on another exit code."""
    done = subprocess.run([str(binary()), *map(str, args)], capture_output=True, text=True, cwd=cwd)
    assert done.returncode == expect, f"stormsim {' '.join(map(str, args))}: exit {done.returncode}\n{done.stderr}"
    return done


def read_table(path: Path) -> pd.DataFrame:
    """A CSV file of stormsim's as a user reads it: an empty cell is missing,
    and a variant's name is text."""
    return pd.read_csv(path, dtype={"variant": str}, keep_default_na=False, na_values=[""])

