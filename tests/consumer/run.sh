#!/usr/bin/env bash
# Installs a joinery build into a scratch prefix, then configures, builds and runs a tiny
# find_package(joinery) consumer against it.
#   usage: bash run.sh <joinery build dir> <consumer source dir>
set -euo pipefail

fail() { echo "install_consumer: FAIL: $*" >&2; exit 1; }

[[ $# -eq 2 ]] || fail "usage: bash run.sh <joinery build dir> <consumer source dir>"
build_dir=$(cd "$1" && pwd) || fail "no joinery build directory at '$1'"
src_dir=$(cd "$2" && pwd) || fail "no consumer source directory at '$2'"
cache="$build_dir/CMakeCache.txt"
[[ -f $cache ]] || fail "$build_dir is not a configured CMake build (no CMakeCache.txt)"

# Read a cache entry (NAME:TYPE=value) of the joinery build.
cache_get() { sed -n "s/^$1:[A-Z]*=//p" "$cache" | head -n 1; }

scratch=$(mktemp -d "${TMPDIR:-/tmp}/joinery-consumer.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
prefix="$scratch/prefix"
consumer_build="$scratch/build"

echo "install_consumer: installing $build_dir into $prefix"
cmake --install "$build_dir" --prefix "$prefix" >"$scratch/install.log" 2>&1 || {
  cat "$scratch/install.log" >&2; fail "cmake --install failed"; }
[[ -f $prefix/include/joinery/join.hpp ]] || fail "headers were not installed"
config=$(find "$prefix" -name joinery-config.cmake -print -quit)
[[ -n $config ]] || fail "joinery-config.cmake was not installed"

# Same generator and compiler as the joinery build; the CUDA toolkit's location when it used CUDA
# (the package config does find_dependency(CUDAToolkit)).
args=(-S "$src_dir" -B "$consumer_build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release)
generator=$(cache_get CMAKE_GENERATOR)
[[ -n $generator ]] && args+=(-G "$generator")
cxx=$(cache_get CMAKE_CXX_COMPILER)
[[ -n $cxx ]] && args+=(-DCMAKE_CXX_COMPILER="$cxx")
nvcc=$(cache_get CMAKE_CUDA_COMPILER)
if [[ -n $nvcc && $nvcc != *NOTFOUND* && -x $nvcc ]]; then
  args+=(-DCUDAToolkit_ROOT="$(dirname "$(dirname "$(readlink -f "$nvcc")")")")
fi

echo "install_consumer: configuring the consumer"
cmake "${args[@]}" >"$scratch/configure.log" 2>&1 || {
  cat "$scratch/configure.log" >&2; fail "configuring the consumer against the install failed"; }
echo "install_consumer: building the consumer"
cmake --build "$consumer_build" >"$scratch/build.log" 2>&1 || {
  cat "$scratch/build.log" >&2; fail "building the consumer failed"; }
echo "install_consumer: running the consumer"
app="$consumer_build/app"
[[ -x $app ]] || fail "the consumer executable was not built"
"$app" || fail "the consumer ran but its results were wrong (exit $?)"
echo "install_consumer: PASS"
