#!/usr/bin/env bash
# Installs what is missing, builds everything (tests included) and runs the tests, in two
# configurations: the default one in build/ (the GPU backend when nvcc is found) and, when that
# one has CUDA, the CPU-only one (-DJOINERY_CUDA=OFF) in build-cpu/, so that both stay green.
# Without a GPU the GPU tests skip with a message; everything else runs on the CPU backend.
#   bash scripts/test.sh [-D... cmake arguments]   (BUILD_DIR, CPU_BUILD_DIR, JOBS as for setup.sh)
# With -D arguments only that one configuration is built and tested.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
cpu_build_dir=${CPU_BUILD_DIR:-$root/build-cpu}
BUILD_DIR=$build_dir bash "$root/scripts/setup.sh" --all "$@"
ctest --test-dir "$build_dir" --output-on-failure
if [[ $# -eq 0 ]] && grep -q '^JOINERY_GPU_BACKEND:INTERNAL=ON' "$build_dir/CMakeCache.txt"; then
  echo "test.sh: the CPU-only configuration (-DJOINERY_CUDA=OFF) in $cpu_build_dir"
  BUILD_DIR=$cpu_build_dir bash "$root/scripts/setup.sh" --all -DJOINERY_CUDA=OFF
  ctest --test-dir "$cpu_build_dir" --output-on-failure
fi
