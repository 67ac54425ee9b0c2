#!/usr/bin/env bash
# The check on a lent GPU machine: the tests (GPU tests included, which must run, not skip; the
# CLI tests and the README's examples on the GPU backend), and when asked compute-sanitizer over
# the GPU tests and a short benchmark smoke run. Ends with a one-screen summary; exits non-zero
# when any step failed.
#
#   bash scripts/device-check.sh [--build] [--large] [--sanitize] [--bench] [--python] [--no-tests]
#
#   (default)    environment (nvidia-smi, ldd of the binaries), the quick set of the gtest
#                binaries (all but the large tests), the CLI tests with JOINERY_TEST_BACKEND=gpu
#                and the README's command-line examples (backend auto)
#   --python     the Python package's tests on the GPU backend: the module is built here for
#                python3 (scripts/python-module.sh) against $BUILD_DIR/src/libjoinery.a
#   --large      the large tests instead of the quick set: those past 2^31 rows (LARGE_TESTS)
#   --build      configure and build build/ here first (-DJOINERY_CUDA=ON), else use the
#                binaries carried in build/bin (built on the CPU machine)
#   --sanitize   compute-sanitizer memcheck + racecheck over joinery_gpu_tests, memcheck over
#                the GPU-backend conformance cases (--gtest_filter='*gpu*')
#   --bench      joinery bench smoke and a 2^24 x 2^25 join benchmark (JSON lines in $OUT)
#   --no-tests   skip the test step (e.g. to run --sanitize alone in a second call)
#
# Environment: OUT (default ./device-check-out; at most 8 flat files are written there),
# BUILD_DIR (default build), STEP_TIMEOUT (seconds per command, default 0 = none),
# LARGE_TESTS (gtest pattern of the large tests; default '*PastTwoToThe31*:*BeyondTwoToThe31*'),
# TEST_STEPS (the test steps run, default "gpu unit conformance cli readme": the whole check takes
# more than one 10-minute call on a lent GPU: TEST_STEPS=gpu in one call, the rest in
# another), SANITIZER_GTEST_FILTER (gtest filter of the sanitized GPU tests; default leaves out
# the large ones),
# SANITIZER_ARGS (extra compute-sanitizer arguments, e.g. "--leak-check full"),
# SANITIZER_API_ERRORS (memcheck's --report-api-errors, default "no": tests provoke CUDA errors on
# purpose, e.g. an allocation past the pool's budget, and the library checks every call itself).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 2
build_dir=${BUILD_DIR:-build}
bin=$build_dir/bin
out=${OUT:-./device-check-out}
step_timeout=${STEP_TIMEOUT:-0}
do_build=0 do_sanitize=0 do_bench=0 do_tests=1 do_large=0 do_python=0
large_tests=${LARGE_TESTS:-*PastTwoToThe31*:*BeyondTwoToThe31*}
test_steps=" ${TEST_STEPS:-gpu unit conformance cli readme} "
wants() { [[ $test_steps == *" $1 "* ]]; }  # wants STEP: whether TEST_STEPS names it
for arg in "$@"; do
  case $arg in
    --build) do_build=1 ;;
    --large) do_large=1 ;;
    --sanitize) do_sanitize=1 ;;
    --bench) do_bench=1 ;;
    --python) do_python=1 ;;
    --no-tests) do_tests=0 ;;
    -h|--help) sed -n '2,31p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "device-check: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out" || { echo "device-check: cannot create $out" >&2; exit 2; }

# The only files written under $OUT (8 at most come back from a lent machine).
env_log=$out/environment.txt
build_log=$out/build.log
tests_log=$out/tests.log
san_log=$out/sanitizer.log
bench_log=$out/bench.log
summary=$out/summary.txt
rm -f "$env_log" "$build_log" "$tests_log" "$san_log" "$bench_log" "$out/bench-smoke.jsonl" \
  "$out/bench-join.jsonl"
: >"$summary"

failed=0
device="(no GPU found)"
# A summary line per step, written as soon as the step ends (survives a kill later on).
record() {  # record STEP PASS|FAIL DETAIL
  [[ $2 == PASS ]] || failed=1
  printf '%-34s %-4s %s\n' "$1" "$2" "$3" >>"$summary"
}
# Runs a command with the optional per-step timeout; output appended to a log.
run_logged() {  # run_logged LOG CMD...
  local log=$1; shift
  printf '\n===== %s\n' "$*" >>"$log"
  if [[ $step_timeout -gt 0 ]]; then
    timeout --kill-after=10 "$step_timeout" "$@" >>"$log" 2>&1
  else
    "$@" >>"$log" 2>&1
  fi
}
# gtest's own summary lines of the last run in a log (from the given line on).
gtest_counts() {  # gtest_counts LOG FIRST_LINE -> "ran passed skipped failed"
  tail -n +"$2" "$1" | awk '
    /^\[==========\] [0-9]+ tests? from .* ran/ { ran = $2 }
    /^\[  PASSED  \] [0-9]+ test/ { passed = $4 }
    /^\[  SKIPPED \] [0-9]+ test/ { skipped = $4 }
    /^\[  FAILED  \] [0-9]+ test/ { failed = $4 }
    END { printf "%d %d %d %d\n", ran, passed, skipped, failed }'
}
# Runs one gtest binary (optionally under compute-sanitizer) and records a summary line.
# A test skipped for want of a GPU (any skip in joinery_gpu_tests; elsewhere a skip whose message
# says "no GPU", the convention of the tests) is a failure here: on the GPU machine it must run.
# Other skips (a workload a quadratic algorithm leaves out, a CPU-only test) are only counted.
# A binary that ran no test at all fails too.
gtest_step() {  # gtest_step NAME LOG CMD... (the binary is the argument under $bin/)
  local name=$1 log=$2; shift 2
  local cmd=("$@") arg binary=""
  for arg in "${cmd[@]}"; do [[ $arg == "$bin"/* ]] && binary=$arg; done
  if [[ ! -x ${binary:-} ]]; then
    record "$name" FAIL "${binary:-binary} missing"
    return
  fi
  local first rc
  first=$(( $(wc -l <"$log" 2>/dev/null || echo 0) + 1 ))
  run_logged "$log" "${cmd[@]}"; rc=$?
  local ran passed skipped fails
  read -r ran passed skipped fails < <(gtest_counts "$log" "$first")
  local skipped_names gpu_skipped
  skipped_names=$(tail -n +"$first" "$log" | sed -n 's/^\[  SKIPPED \] \([^ ]*\.[^ ]*\).*/\1/p' |
                  sort -u)
  if [[ $binary == */joinery_gpu_tests ]]; then
    gpu_skipped=$skipped
  else
    gpu_skipped=$(tail -n +"$first" "$log" | grep -v '^\[' | grep -ci 'no GPU')
  fi
  local detail="$passed/$ran passed, $skipped skipped ($gpu_skipped for want of a GPU),"
  detail+=" $fails failed (exit $rc)"
  [[ $ran -eq 0 ]] && detail+="; no test ran"
  [[ $rc -eq 124 || $rc -eq 137 ]] && detail+="; TIMEOUT after ${step_timeout}s"
  local verdict  # compute-sanitizer's own verdict, when it ran under it
  verdict=$(tail -n +"$first" "$log" | grep -oE '(ERROR|RACECHECK) SUMMARY: .*' | tail -n 1)
  [[ -n $verdict ]] && detail+="; $verdict"
  if [[ $skipped -gt 0 ]]; then
    detail+="; skipped: $(head -n 2 <<<"$skipped_names" | tr '\n' ' ')"
    [[ $skipped -gt 2 ]] && detail+="..."
  fi
  if [[ $rc -eq 0 && $fails -eq 0 && $gpu_skipped -eq 0 && $((passed + skipped)) -eq $ran &&
        $ran -gt 0 ]]; then
    record "$name" PASS "$detail"
  else
    record "$name" FAIL "$detail"
  fi
}

# --- 1. environment --------------------------------------------------------------------------
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)   host: $(hostname)   cwd: $root"
  echo "revision: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo; echo "===== nvidia-smi"
} >"$env_log"
if command -v nvidia-smi >/dev/null && nvidia-smi >>"$env_log" 2>&1; then
  device=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null |
           head -n 1)
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  record "gpu" PASS "$gpus GPU(s): $device"
else
  record "gpu" FAIL "nvidia-smi missing or failed: no usable GPU"
fi

# compute-sanitizer: on PATH, beside nvcc, or under the usual CUDA prefixes.
sanitizer=""
for c in "$(command -v compute-sanitizer 2>/dev/null)" \
         "${CUDA_HOME:-/nonexistent}/bin/compute-sanitizer" \
         "$(dirname "$(command -v nvcc 2>/dev/null || echo /nonexistent/x)")/compute-sanitizer" \
         /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda-*/bin/compute-sanitizer \
         /usr/local/cuda/compute-sanitizer/compute-sanitizer /opt/nvidia/*/compute-sanitizer; do
  if [[ -n $c && -x $c ]]; then sanitizer=$c; break; fi
done
{
  echo; echo "===== tools"
  echo "nvcc: $(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || echo none)"
  echo "compute-sanitizer: ${sanitizer:-none}"
  [[ -n $sanitizer ]] && "$sanitizer" --version 2>&1 | tail -n 2
  echo "cmake: $(cmake --version 2>/dev/null | head -n 1)   g++: $(g++ -dumpfullversion 2>/dev/null)"
  echo "cores: $(nproc)"
} >>"$env_log" 2>&1

# --- 2. build (optional) ---------------------------------------------------------------------
if [[ $do_build -eq 1 ]]; then
  : >"$build_log"
  if run_logged "$build_log" cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
       -DJOINERY_CUDA=ON &&
     run_logged "$build_log" cmake --build "$build_dir" -j "$(nproc)"; then
    record "build" PASS "$build_dir (see build.log)"
  else
    record "build" FAIL "see build.log: $(grep -m1 -i 'error' "$build_log" | cut -c1-80)"
  fi
fi

# --- 3. the binaries find their libraries ----------------------------------------------------
binaries=(joinery joinery_unit_tests joinery_conformance_tests joinery_gpu_tests joinery_cli_tests)
# Carried binaries look for libcudart where the build machine had it: when the loader cannot
# find it here, add this machine's CUDA library folders.
if [[ -x $bin/joinery_gpu_tests ]] && ldd "$bin/joinery_gpu_tests" 2>&1 | grep -q 'not found'; then
  for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do
    [[ -d $d ]] && LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  done
  export LD_LIBRARY_PATH
  echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-} (added: a library was not found)" >>"$env_log"
fi
# NCCL (the multi-GPU joins' nccl exchange) is loaded at run time: where the loader does not find
# libnccl.so.2, add the folder of the first copy found (the CUDA toolkit's, or PyTorch's wheel).
if ! ldconfig -p 2>/dev/null | grep -q 'libnccl.so.2'; then
  nccl=$(find /usr/local/cuda*/lib* /usr/lib/x86_64-linux-gnu /opt /usr/local/lib -name 'libnccl.so.2' \
         2>/dev/null | head -n 1)
  if [[ -n $nccl ]]; then
    LD_LIBRARY_PATH=$(dirname "$nccl")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export LD_LIBRARY_PATH
  fi
  echo "libnccl.so.2: ${nccl:-not found} (LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-})" >>"$env_log"
fi
# NVLink multicast stays off on shared machines (KINDS.md); an all-to-all does not use it anyway.
export NCCL_NVLS_ENABLE=0
missing_bins=() missing_libs=()
echo >>"$env_log"; echo "===== ldd" >>"$env_log"
for b in "${binaries[@]}"; do
  if [[ ! -x $bin/$b ]]; then missing_bins+=("$b"); continue; fi
  echo "--- $bin/$b" >>"$env_log"
  ldd "$bin/$b" >>"$env_log" 2>&1
  while read -r lib; do missing_libs+=("$b:$lib"); done < <(ldd "$bin/$b" 2>&1 |
    awk '/not found/ { print $1 }')
done
if [[ $do_tests -eq 0 && $do_sanitize -eq 0 && $do_bench -eq 0 ]]; then
  :  # only the Python step: it builds its own module
elif ((${#missing_bins[@]} == 0 && ${#missing_libs[@]} == 0)); then
  record "binaries + libraries" PASS "${#binaries[@]} binaries in $bin, all libraries found"
else
  record "binaries + libraries" FAIL \
    "missing: ${missing_bins[*]:-} ${missing_libs[*]:+libs not found: ${missing_libs[*]}}"
fi

# --- 4. tests --------------------------------------------------------------------------------
timed() {  # timed STEP-NAME CMD...: runs the command, appends its seconds to the summary line
  local t0=$SECONDS
  "$@"
  sed -i "\$s/\$/ [$((SECONDS - t0)) s]/" "$summary"
}
if [[ $do_tests -eq 1 && $do_large -eq 1 ]]; then
  : >"$tests_log"
  timed gtest_step "tests (large): joinery_gpu_tests" "$tests_log" "$bin/joinery_gpu_tests" \
    "--gtest_filter=$large_tests"
elif [[ $do_tests -eq 1 ]]; then
  : >"$tests_log"
  if wants gpu; then
    timed gtest_step "tests: joinery_gpu_tests" "$tests_log" "$bin/joinery_gpu_tests" \
      "--gtest_filter=-$large_tests"
  fi
  if wants unit; then
    timed gtest_step "tests: joinery_unit_tests" "$tests_log" "$bin/joinery_unit_tests" \
      "--gtest_filter=-$large_tests"
  fi
  if wants conformance; then
    timed gtest_step "tests: joinery_conformance_tests" "$tests_log" \
      "$bin/joinery_conformance_tests" "--gtest_filter=-$large_tests"
  fi
  # The CLI on the GPU backend: every subcommand and output form, results against the oracle
  # and the CPU backend.
  if wants cli; then
    timed gtest_step "tests: joinery_cli_tests (gpu)" "$tests_log" env JOINERY_TEST_BACKEND=gpu \
      "JOINERY_CLI=$(realpath "$bin/joinery")" "$bin/joinery_cli_tests"
  fi
  if wants readme; then
    t0=$SECONDS
    if run_logged "$tests_log" bash tests/cli/readme_examples.sh "$bin/joinery"; then
      record "tests: README examples (auto)" PASS "$(tail -n 1 "$tests_log") [$((SECONDS - t0)) s]"
    else
      record "tests: README examples (auto)" FAIL "see tests.log [$((SECONDS - t0)) s]"
    fi
  fi
fi

if [[ $do_python -eq 1 ]]; then
  [[ -f $tests_log ]] || : >"$tests_log"
  # The Python package on the GPU backend (--python): joinery._native built for this machine's
  # python3 against the library in $build_dir/src (scripts/python-module.sh; needs nanobind,
  # pytest and pyarrow importable, e.g. carried as wheels), its tests with the GPU required
  # (JOINERY_TEST_REQUIRE_GPU=1: the GPU cases and test_gpu.py are collected). Tests that need
  # a dataframe library this machine lacks (pandas, polars, DuckDB) skip and are counted.
  t0=$SECONDS
  if ! pkg=$(BUILD_DIR=$build_dir bash scripts/python-module.sh 2>>"$tests_log" | tail -n 1) ||
     [[ -z $pkg ]]; then
    record "tests: python (gpu)" FAIL "module build failed; see tests.log [$((SECONDS - t0)) s]"
  elif run_logged "$tests_log" env "PYTHONPATH=$root/$pkg${PYTHONPATH:+:$PYTHONPATH}" \
         JOINERY_TEST_REQUIRE_GPU=1 python3 -m pytest -q -p no:cacheprovider -rs python/tests; then
    record "tests: python (gpu)" PASS "$(grep -E ' in [0-9.]+s' "$tests_log" | tail -n 1) [$((SECONDS - t0)) s]"
  else
    record "tests: python (gpu)" FAIL "$(grep -E ' in [0-9.]+s' "$tests_log" | tail -n 1) [$((SECONDS - t0)) s]"
  fi
fi

# --- 5. compute-sanitizer (optional) ---------------------------------------------------------
if [[ $do_sanitize -eq 1 ]]; then
  : >"$san_log"
  if [[ -z $sanitizer ]]; then
    record "sanitizer" FAIL "compute-sanitizer not found (PATH, /usr/local/cuda*/bin)"
  else
    # shellcheck disable=SC2206
    extra=(${SANITIZER_ARGS:-})
    memcheck=("$sanitizer" --tool memcheck --report-api-errors "${SANITIZER_API_ERRORS:-no}"
              --error-exitcode 99 "${extra[@]}")
    racecheck=("$sanitizer" --tool racecheck --error-exitcode 99 "${extra[@]}")
    # The 2^31-element tests run (unsanitized) in the test step; under the sanitizers they would
    # take most of a device call.
    san_filter=--gtest_filter=${SANITIZER_GTEST_FILTER:--$large_tests}
    gtest_step "memcheck: joinery_gpu_tests" "$san_log" "${memcheck[@]}" "$bin/joinery_gpu_tests" "$san_filter"
    gtest_step "racecheck: joinery_gpu_tests" "$san_log" "${racecheck[@]}" "$bin/joinery_gpu_tests" "$san_filter"
    # Until a GPU join/group-by algorithm exists the filter selects nothing (and the sanitizer
    # would refuse a program that makes no CUDA call): say so instead of running it.
    gpu_cases=0
    [[ -x $bin/joinery_conformance_tests ]] &&
      gpu_cases=$("$bin/joinery_conformance_tests" --gtest_list_tests '--gtest_filter=*gpu*' |
                  grep -c '^  ')
    if [[ $gpu_cases -gt 0 ]]; then
      gtest_step "memcheck: conformance *gpu*" "$san_log" "${memcheck[@]}" \
        "$bin/joinery_conformance_tests" '--gtest_filter=*gpu*'
    else
      record "memcheck: conformance *gpu*" PASS "no GPU conformance case in this build yet"
    fi
  fi
fi

# --- 6. benchmark smoke (optional) -----------------------------------------------------------
bench_step() {  # bench_step NAME JSONL ARGS...
  local name=$1 jsonl=$2; shift 2
  rm -f "$jsonl"
  if [[ ! -x $bin/joinery ]]; then record "$name" FAIL "$bin/joinery missing"; return; fi
  run_logged "$bench_log" "$bin/joinery" bench "$@" --out "$jsonl"
  local rc=$? lines=0
  [[ -f $jsonl ]] && lines=$(grep -c . "$jsonl")
  if [[ $rc -eq 0 && $lines -gt 0 ]]; then
    record "$name" PASS "$lines result line(s) in $(basename "$jsonl")"
  else
    record "$name" FAIL "exit $rc, $lines result line(s); see bench.log"
  fi
}
if [[ $do_bench -eq 1 ]]; then
  : >"$bench_log"
  bench_step "bench: smoke" "$out/bench-smoke.jsonl" smoke
  bench_step "bench: join 2^24 x 2^25" "$out/bench-join.jsonl" join \
    --build-rows 16777216 --probe-rows 33554432
  # Each measurement's line (name, median, throughput) without its parameters.
  grep -E 'median' "$bench_log" | sed -E 's/ \{[^}]*\}//' | tail -n 6 | cut -c1-96 |
    sed 's/^/  /' >>"$summary"
fi

# --- summary ---------------------------------------------------------------------------------
listing=$(cd "$out" && ls | tr '\n' ' ')
{
  echo "joinery device check on: $device"
  echo "------------------------------------------------------------------------------------"
  cat "$summary"
  echo "------------------------------------------------------------------------------------"
  if [[ $failed -eq 0 ]]; then echo "RESULT: PASS"; else echo "RESULT: FAIL"; fi
  echo "logs: $out/ ($listing)"
} >"$summary.tmp"
mv "$summary.tmp" "$summary"
cat "$summary"
exit "$failed"
