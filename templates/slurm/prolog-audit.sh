#!/bin/bash
# Slurm prolog: keep sick nodes out of jobs with `topolaunch audit --local`.
#
# Install as (or call from) the Prolog= script in slurm.conf. It checks this
# node's HCA ports (state, rate, error counters), its GPUs' PCIe links, the
# GPU count and NUMA memory, bounded by a timeout so a prolog never hangs.
#
#   exit 0 from topolaunch: healthy                  -> prolog succeeds
#   exit 1: findings at or above --fail-on           -> drain with the reason
#   exit 3: a check could not run (no HCA, timeout)  -> drain: could not check
#   exit 2: bad usage (this script is wrong)         -> log it, let the job run
#
# A failing prolog (non-zero exit) makes Slurm drain the node itself, with a
# generic "Prolog error" reason; this script drains it first with the audit's
# own one-line reason, so `sinfo -R` says what is wrong.
set -u

TOPOLAUNCH=${TOPOLAUNCH:-/usr/local/bin/topolaunch}
EXPECT_GPUS=${TOPOLAUNCH_EXPECT_GPUS:-}           # e.g. 8; empty = do not check
AUDIT_TIMEOUT=${TOPOLAUNCH_AUDIT_TIMEOUT:-5}      # seconds for the whole audit
NODE=${SLURMD_NODENAME:-$(hostname -s)}

args=(audit --local --prolog --timeout "$AUDIT_TIMEOUT")
# Site additions, e.g. "--thresholds /etc/infiniband-diags/error_thresholds".
read -r -a extra <<< "${TOPOLAUNCH_AUDIT_ARGS:-}"
args+=("${extra[@]}")
[ -n "$EXPECT_GPUS" ] && args+=(--expect-gpus "$EXPECT_GPUS")

# The outer timeout is a second line of defence: topolaunch stops itself at
# --timeout; `timeout` catches anything that still hangs (exit 124/137).
# stderr goes to a file mktemp makes (O_EXCL, random name, mode 0600): this
# runs as root, and a predictable name in a world-writable folder lets any
# user plant a symlink there and have us overwrite the file it points to.
errfile=$(mktemp "${TMPDIR:-/tmp}/topolaunch-audit.XXXXXXXXXX" 2>/dev/null) || errfile=/dev/null
reason=$(timeout -k 2 $((AUDIT_TIMEOUT + 5)) "$TOPOLAUNCH" "${args[@]}" 2>"$errfile")
status=$?
errors=$(head -c 300 "$errfile" 2>/dev/null | tr '\n' ' ')
[ "$errfile" = /dev/null ] || rm -f -- "$errfile"

drain() {
  # The reason is already one line of safe characters; cut it for sinfo.
  local why=${1:0:200}
  scontrol update nodename="$NODE" state=drain reason="$why"
  logger -t topolaunch-prolog "drained $NODE: $why" 2>/dev/null || true
}

case $status in
  0) exit 0 ;;
  1) drain "${reason:-topolaunch audit: findings}"; exit 1 ;;
  3) drain "${reason:-topolaunch audit: could not check}"; exit 1 ;;
  124|137) drain "topolaunch audit: no answer within $((AUDIT_TIMEOUT + 5)) s"; exit 1 ;;
  2) logger -t topolaunch-prolog "audit usage error on $NODE: $errors" 2>/dev/null || true; exit 0 ;;
  *) drain "topolaunch audit: exit $status"; exit 1 ;;
esac
