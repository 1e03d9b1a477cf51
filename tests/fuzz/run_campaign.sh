#!/usr/bin/env bash
# Fuzzes every target (or the ones named) for SECONDS each, from its seeds.
#   bash tests/fuzz/run_campaign.sh BUILD_DIR SECONDS [TARGET...]
# BUILD_DIR must be configured with -DTOPOLAUNCH_FUZZ=ON (clang). New inputs
# go to a scratch corpus (kept in $TOPOLAUNCH_FUZZ_WORK when set, else a
# temporary folder that is removed); the repository is never written. On a
# crash the input is printed as base64, to be saved under
# tests/fuzz/crashers/TARGET/ once fixed. Exit 1 when any target crashed.
set -uo pipefail
build=${1:?build folder}
seconds=${2:?seconds per target}
shift 2
list="$build/fuzz_targets.txt"
[ -f "$list" ] || { echo "run_campaign: $list missing: configure $build with -DTOPOLAUNCH_FUZZ=ON" >&2; exit 2; }
work=${TOPOLAUNCH_FUZZ_WORK:-}
cleanup=""
if [ -z "$work" ]; then work=$(mktemp -d); cleanup=$work; fi
trap '[ -n "$cleanup" ] && rm -rf -- "$cleanup"' EXIT
failed=0
ran=0
while read -r target seeds; do
  [ -n "$target" ] || continue
  if [ $# -gt 0 ] && [[ " $* " != *" $target "* ]]; then continue; fi
  mkdir -p "$work/$target/corpus" "$work/$target/artifacts"
  start=$SECONDS
  # shellcheck disable=SC2086  # seeds is a list of folders
  "$build/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
    -artifact_prefix="$work/$target/artifacts/" -print_final_stats=1 \
    "$work/$target/corpus" $seeds > "$work/$target/log" 2>&1
  status=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$target/log" | grep -o '[0-9]*$')
  ran=$((ran + 1))
  if [ $status -ne 0 ]; then
    failed=$((failed + 1))
    echo "fuzz $target: FAILED (exit $status) after $((SECONDS - start)) s"
    grep -E 'ERROR|SUMMARY|fuzz property failed|==[0-9]+==' "$work/$target/log" | head -20
    for a in "$work/$target/artifacts"/*; do
      [ -f "$a" ] || continue
      echo "crasher $(basename "$a") (base64):"
      head -c 65536 "$a" | base64
    done
  else
    echo "fuzz $target: ok, ${runs:-?} inputs in $((SECONDS - start)) s, corpus $(ls "$work/$target/corpus" | wc -l) files"
  fi
done < "$list"
echo "fuzz: $((ran - failed)) passed, $failed failed"
[ $failed -eq 0 ]
