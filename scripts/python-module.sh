#!/usr/bin/env bash
# Builds the joinery Python package for a Python other than the one CMake built it for, against
# the library already built in BUILD_DIR (BUILD_DIR/src/libjoinery.a), with g++ alone: how a lent
# GPU machine, whose Python is not the build machine's, gets joinery._native without building the
# library again. Needs that Python's headers and nanobind (pip). Prints the directory to put on
# PYTHONPATH (BUILD_DIR/python-<extension tag>).
#   PYTHON=python3 BUILD_DIR=build bash scripts/python-module.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
python=${PYTHON:-python3}
library=$build_dir/src/libjoinery.a
[[ -f $library ]] || { echo "python-module.sh: no $library (build the library first)" >&2; exit 1; }
read -r include suffix < <("$python" -c 'import sysconfig
print(sysconfig.get_paths()["include"], sysconfig.get_config_var("EXT_SUFFIX"))')
[[ -f $include/Python.h ]] || { echo "python-module.sh: no Python.h in $include" >&2; exit 1; }
nanobind=$("$python" -c 'import nanobind, os; print(os.path.dirname(nanobind.__file__))')
package=$build_dir/python-${suffix#.}
package=${package%.so}
mkdir -p "$package/joinery"
cp "$root"/python/joinery/*.py "$root"/python/joinery/*.pyi "$root"/python/joinery/py.typed \
  "$package/joinery/"
cuda_libs=()
# A library built with the GPU backend links CUDA's static runtime.
if nm "$library" 2>/dev/null | grep ' U cudaStreamSynchronize' >/dev/null; then  # not -q: pipefail
  cuda_libs=(-L/usr/local/cuda/lib64 -lcudart_static -lrt)
fi
g++ -std=c++20 -O2 -DNDEBUG -fPIC -shared -fvisibility=hidden -fopenmp -pthread \
  -I"$root/include" -I"$include" -I"$nanobind/include" -I"$nanobind/ext/robin_map/include" \
  "$root"/python/src/*.cpp "$nanobind/src/nb_combined.cpp" "$library" "${cuda_libs[@]}" -ldl \
  -o "$package/joinery/_native$suffix"
echo "$package"
