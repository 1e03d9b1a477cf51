#!/usr/bin/env bash
# The whole test suite from a fresh clone: packages, build, every test; then
# the same tests built with ASan+UBSan (clang, with libFuzzer coverage), every
# fuzz target over its corpus, and a short fuzz campaign.
#   TOPOLAUNCH_SANITIZERS=0    skip the sanitizer build and the fuzzing
#   TOPOLAUNCH_FUZZ_SECONDS=N  campaign length per target (default 10)
set -euo pipefail
cd "$(dirname "$0")/.."
took() { echo "== $1: $(( SECONDS - $2 )) s"; }
start=$SECONDS
bash tests/install_deps.sh test
took "packages" "$start"

build=${TOPOLAUNCH_BUILD_DIR:-build}
start=$SECONDS
# Tests ON explicitly: the README's first command may have configured this
# build folder with them OFF, and the cache would keep that.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTOPOLAUNCH_BUILD_TESTS=ON >/dev/null
cmake --build "$build" -j "$(nproc)"
took "build" "$start"
start=$SECONDS
(cd "$build" && ctest --output-on-failure --no-tests=error -j "$(nproc)" --timeout 600)
took "tests" "$start"

[ "${TOPOLAUNCH_SANITIZERS:-1}" = 0 ] && exit 0

asan=${TOPOLAUNCH_ASAN_BUILD_DIR:-build-asan}
start=$SECONDS
cmake -S . -B "$asan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DTOPOLAUNCH_BUILD_TESTS=ON -DTOPOLAUNCH_SANITIZE=ON -DTOPOLAUNCH_FUZZ=ON >/dev/null
# The benchmarks are not run here; everything else is built.
cmake --build "$asan" -j "$(nproc)" -- topolaunch topolaunch_tests topolaunch_system_tests live_fabric_probe \
  $(sed 's/ .*//; s/^/fuzz_/' "$asan/fuzz_targets.txt")
took "sanitizer build" "$start"
# verify_asan_link_order=0: the ibsim tests preload umad2sim before the
# ASan runtime. Leaks are reported and fail the test like any other error.
# tests/sanitizers/ holds the two reports from other projects' libraries
# (ibsim's umad2sim, libibnetdisc), each with its evidence.
export ASAN_OPTIONS=verify_asan_link_order=0:abort_on_error=0:detect_leaks=1:suppressions=$PWD/tests/sanitizers/asan.supp
export LSAN_OPTIONS=suppressions=$PWD/tests/sanitizers/lsan.supp
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
start=$SECONDS
(cd "$asan" && ctest --output-on-failure --no-tests=error -j "$(nproc)" --timeout 900)
took "tests under ASan+UBSan (with every fuzz corpus)" "$start"
start=$SECONDS
bash tests/fuzz/run_campaign.sh "$asan" "${TOPOLAUNCH_FUZZ_SECONDS:-10}"
took "fuzz campaign" "$start"
