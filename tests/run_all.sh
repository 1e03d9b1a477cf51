#!/usr/bin/env bash
# The whole test suite from a fresh clone: packages, build, every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/install_deps.sh test
build=${TOPOLAUNCH_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)"
cd "$build"
ctest --output-on-failure -j "$(nproc)" --timeout 600
