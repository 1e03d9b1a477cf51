#!/bin/bash
# sbatch script: audit every node of the allocation, then start the job with
# `topolaunch run` (srun as the engine: each node's agent is a step of this
# job, so scancel, the time limit and accounting reach every worker).
#
#   sbatch -N 16 templates/slurm/sbatch-run.sh train.py --lr 3e-4
#
# Everything after the script name goes to `topolaunch run` as it is: its
# options first, then SCRIPT and the script's arguments. Set here or in the
# environment sbatch passes on:
#   TOPOLAUNCH             the binary (default: topolaunch on PATH)
#   TOPOLAUNCH_AUDIT       "off" skips the audit
#   TOPOLAUNCH_AUDIT_ARGS  extra `audit --local` options, e.g. "--expect-gpus 8"
#   TOPOLAUNCH_AUDIT_TIMEOUT  seconds each node's audit may take (default 5)
#
# Exit status: topolaunch run's (0 ok, 1 the job failed, 3 a node's preflight
# failed, nothing started, 130 interrupted); 4 when the audit found a node
# unfit, before any worker started (its findings are in the job's output).
#
# GPUs: the step that starts the workers gets the GPUs the job asked for, so
# the job asks for every GPU of its nodes (set your nodes' count here, or
# override it: sbatch --gpus-per-node=4 ...). An --exclusive job that asks
# for none gets none where the site constrains devices (cgroup.conf
# ConstrainDevices=yes).
# --no-kill: a node that fails leaves the job (and the other nodes) running,
# so `topolaunch run --max-restarts N` can replace it with a spare node of the
# allocation; without it Slurm ends the whole job on the first failed node.
#SBATCH --job-name=topolaunch
#SBATCH --exclusive
#SBATCH --gpus-per-node=8
#SBATCH --no-kill
#SBATCH --output=%x-%j.out
set -u

TOPOLAUNCH=${TOPOLAUNCH:-topolaunch}
read -r -a audit_args <<< "${TOPOLAUNCH_AUDIT_ARGS:-}"

if [ "${TOPOLAUNCH_AUDIT:-on}" != off ]; then
  # One task per node; --label names the node's task on each line. Every
  # node audits itself, bounded by --timeout, so a hung check cannot hold
  # the allocation.
  if ! srun --ntasks-per-node=1 --ntasks="$SLURM_JOB_NUM_NODES" --kill-on-bad-exit=0 --label \
      "$TOPOLAUNCH" audit --local --timeout "${TOPOLAUNCH_AUDIT_TIMEOUT:-5}" "${audit_args[@]}"; then
    echo "topolaunch: the audit found nodes unfit for this job (above); nothing was started" >&2
    exit 4
  fi
fi

exec "$TOPOLAUNCH" run --launcher srun "$@"
