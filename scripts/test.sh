#!/usr/bin/env bash
# Installs what is missing, builds everything (tests included) into build/ and runs the tests.
# Without a GPU the GPU tests skip with a message; everything else runs on the CPU backend.
#   bash scripts/test.sh [-D... cmake arguments]      (BUILD_DIR, JOBS as for setup.sh)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
bash "$root/scripts/setup.sh" --all "$@"
ctest --test-dir "$build_dir" --output-on-failure
