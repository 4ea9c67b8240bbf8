#!/usr/bin/env bash
# A stormsim sweep on a Slurm cluster. Submitted as a job array, each task runs
# one shard (`stormsim sweep --shard auto/N`, which reads the task's index from
# SLURM_ARRAY_TASK_ID); submitted again as a plain job once the array is done,
# it merges the shards (`stormsim merge`) into exactly the bytes of the
# unsharded sweep. scripts/slurm-sweep-check runs it, both ways, on a
# single-node Slurm cluster it starts on localhost (Debian's slurm-wlm), and
# compares the merge with the unsharded sweep byte for byte; CI runs that check.
#
# Usage, from the folder the paths are relative to (the repository's root), on
# a file system every node sees:
#   SWEEP=models/catalog-phase.sweep.json sbatch --array=0-7 docs/cluster/slurm-sweep.sh
#   # "Submitted batch job 1234"; then the merge, run once every task succeeded
#   # (--output: a plain job has no task index for the default log name's %a):
#   SWEEP=models/catalog-phase.sweep.json sbatch --dependency=afterok:1234 \
#     --kill-on-invalid-dep=yes --output=stormsim-sweep-%j.log docs/cluster/slurm-sweep.sh
#   # or, by hand: stormsim merge models/catalog-phase.sweep.json outputs/shards/catalog-phase/shard-*
#
# Settings, from the environment (sbatch passes the submitter's on):
#   SWEEP       the sweep file (required)
#   SHARDS      N, the number of shards (default: the array's size; set it when
#               resubmitting only some tasks, e.g. --array=3,5 of 8: SHARDS=8)
#   SHARDS_DIR  the shards' folder (default outputs/shards/NAME, NAME being the
#               sweep file's name without .sweep.json); shard I goes to shard-I
#   OUT         the merge's folder (default: stormsim merge's, outputs/<sweep name>/)
#   STORMSIM    the binary (default: stormsim on the PATH, else
#               target/release/stormsim, as `cargo build --release` leaves it)
# Logs: stormsim-sweep-JOB_TASK.log in the submission folder (sbatch --output
# chooses another). --requeue: a task that Slurm requeues (a node failed, it was
# preempted) starts again and continues its shard where it stopped (--resume),
# appending to its log. The #SBATCH lines are defaults: sbatch's own options
# override them (e.g. --cpus-per-task, --time, --partition).
#SBATCH --job-name=stormsim-sweep
#SBATCH --cpus-per-task=4
#SBATCH --time=01:00:00
#SBATCH --output=stormsim-sweep-%A_%a.log
#SBATCH --open-mode=append
#SBATCH --requeue
set -euo pipefail
: "${SWEEP:?set SWEEP to the sweep file}"
name=$(basename "$SWEEP")
name=${name%.json}
name=${name%.sweep}
shards_dir=${SHARDS_DIR:-outputs/shards/$name}
if [ -n "${STORMSIM:-}" ]; then
  stormsim=$STORMSIM
elif ! stormsim=$(command -v stormsim); then
  stormsim=target/release/stormsim
fi
[ -x "$stormsim" ] || {
  echo "slurm-sweep.sh: no stormsim binary at $stormsim: set STORMSIM, put stormsim on the PATH, or build it (cargo build --release)" >&2
  exit 1
}

if [ -n "${SLURM_ARRAY_TASK_ID:-}" ]; then
  shards=${SHARDS:-${SLURM_ARRAY_TASK_COUNT:?not a job array: set SHARDS}}
  echo "slurm-sweep.sh: job ${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID} on $(hostname): shard ${SLURM_ARRAY_TASK_ID} of $shards into $shards_dir/shard-${SLURM_ARRAY_TASK_ID}"
  exec "$stormsim" sweep "$SWEEP" --shard "auto/$shards" \
    --out "$shards_dir/shard-${SLURM_ARRAY_TASK_ID}" \
    --jobs "${SLURM_CPUS_PER_TASK:-1}" --resume
fi

# Not an array task: merge the shards.
shopt -s nullglob
found=("$shards_dir"/shard-*)
[ ${#found[@]} -gt 0 ] || {
  echo "slurm-sweep.sh: no shards in $shards_dir: submit the job array first (sbatch --array=0-7 for 8 shards)" >&2
  exit 1
}
echo "slurm-sweep.sh: merging ${#found[@]} shard(s) of $shards_dir"
exec "$stormsim" merge "$SWEEP" "${found[@]}" ${OUT:+--out "$OUT"}
