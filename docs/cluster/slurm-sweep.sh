#!/usr/bin/env bash
# A stormsim sweep as a Slurm job array: one array task per shard, then one
# merge. Not run on the project's machines (they have no Slurm); the mechanism
# it relies on -- `--shard auto/N` reading SLURM_ARRAY_TASK_ID, and `merge` --
# is tested in crates/cli/tests/cli.rs.
#
# Usage, from the repository root, with stormsim built (cargo build --release):
#   SWEEP=models/catalog-phase.sweep.json SHARDS=8 sbatch --array=0-7 docs/cluster/slurm-sweep.sh
#   # when every task is done:
#   target/release/stormsim merge models/catalog-phase.sweep.json outputs/shards/catalog-phase/*
#SBATCH --job-name=stormsim-sweep
#SBATCH --cpus-per-task=4
#SBATCH --time=01:00:00
#SBATCH --output=stormsim-sweep-%A_%a.log
set -euo pipefail
: "${SWEEP:?set SWEEP to the sweep file}"
: "${SHARDS:?set SHARDS to the number of array tasks}"
name=$(basename "$SWEEP" .json)
out="outputs/shards/$name/shard-${SLURM_ARRAY_TASK_ID}"
# --resume: a task that Slurm requeues continues where it stopped.
exec target/release/stormsim sweep "$SWEEP" --shard "auto/$SHARDS" --out "$out" \
  --jobs "${SLURM_CPUS_PER_TASK:-1}" --resume
