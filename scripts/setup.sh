#!/usr/bin/env bash
# Installs what joinery needs (Debian 12 packages, only those missing) and configures + builds it
# into build/ (Release, Ninja; the GPU backend when nvcc is found, e.g. /usr/local/cuda/bin/nvcc).
#
#   bash scripts/setup.sh           # library + the joinery CLI (build/bin/joinery)
#   bash scripts/setup.sh --all     # everything: tests, and the Python package in a virtual
#                                   # environment in the build directory (python-env)
#   bash scripts/setup.sh --deps    # only install the packages
#   extra arguments starting with -D go to cmake, e.g. -DJOINERY_CUDA=OFF
# Environment: BUILD_DIR (default build), JOBS (default: number of cores).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
mode=cli
cmake_args=()
for arg in "$@"; do
  case $arg in
    --all) mode=all ;;
    --deps) mode=deps ;;
    -D*) cmake_args+=("$arg") ;;
    -h|--help) sed -n '2,10p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "setup.sh: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
  esac
done

# --- packages --------------------------------------------------------------------------------
install_packages() {  # apt-get install "$@" as root or through sudo
  if ! command -v apt-get >/dev/null; then
    echo "setup.sh: missing packages ($*) and no apt-get: install them by hand" >&2
    exit 1
  fi
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null; then
      sudo=(sudo)
    else
      echo "setup.sh: need root or sudo to install: $*" >&2
      exit 1
    fi
  fi
  echo "setup.sh: installing $*"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}
packages=(cmake ninja-build g++ libgtest-dev libcli11-dev nlohmann-json3-dev git)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  install_packages "${missing[@]}"
else
  echo "setup.sh: all packages present (${packages[*]})"
fi
[[ $mode == deps ]] && exit 0

# --- Python: the joinery package and its tests (with --all) ---------------------------------
# A virtual environment in the build directory holds what python/requirements-test.txt names
# (nanobind to build the module; pytest, NumPy, pyarrow, pandas, polars, DuckDB to test it).
if [[ $mode == all && " ${cmake_args[*]} " != *" -DJOINERY_PYTHON=OFF "* ]]; then
  python=${PYTHON:-python3}
  has_headers='import os, sysconfig, venv, ensurepip
assert os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))'
  if ! "$python" -c "$has_headers" 2>/dev/null; then
    install_packages python3 python3-dev python3-venv
    python=python3
  fi
  python_env=$build_dir/python-env
  requirements=$root/python/requirements-test.txt
  if ! cmp -s "$requirements" "$python_env/requirements-test.txt"; then
    echo "setup.sh: Python environment in $python_env"
    rm -rf "$python_env"
    "$python" -m venv "$python_env"
    "$python_env/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements"
    cp "$requirements" "$python_env/requirements-test.txt"
  fi
  cmake_args+=(-DJOINERY_PYTHON=ON "-DPython_EXECUTABLE=$python_env/bin/python")
fi

# --- configure and build ---------------------------------------------------------------------
if [[ " ${cmake_args[*]} " == *" -DJOINERY_CUDA=OFF "* ]]; then
  echo "setup.sh: JOINERY_CUDA=OFF: building the CPU backend only"
elif [[ -x /usr/local/cuda/bin/nvcc ]] || command -v nvcc >/dev/null; then
  echo "setup.sh: CUDA toolkit found: building the GPU backend too"
else
  echo "setup.sh: no CUDA toolkit: building the CPU backend only"
fi
cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${cmake_args[@]}"
if [[ $mode == all ]]; then
  cmake --build "$build_dir" -j "$jobs"
else
  cmake --build "$build_dir" -j "$jobs" --target joinery_cli
fi
echo "setup.sh: built into $build_dir"
