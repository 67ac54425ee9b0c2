#!/usr/bin/env bash
# Session 15 device runs (issue 5, the radix join); logs in $OUT. PART=1: the
# default workload (2^27 x 2^28, index form, int32 and int64 ids) A/B: $B (before) against $J
# with CUB's partitioning (the lean direct pass alone) and with the swwc + CUB partitioning; then the GPU join tests and the radix join's conformance
# cases. PART=2: the sanitizers over the lean direct pass and the
# partitioning. PART=3: bench gpu-joins. PART=4: the
# partitioning's tests (and memcheck), the conformance cases, the GPU join tests (but the one PART 1 ran alone) and bench gpu-joins.
set -u
source "$(dirname "$0")/exp-lib.sh" "${BINS:-build/bins15.tar.xz}"
J=/tmp/b/joinery
B=/tmp/b/joinery_base
T=/tmp/b/joinery_gpu_tests
join_default() {  # join_default BINARY TAG IDS [ENV=VALUE]
  step "join-$2-$3" bench 120 env ${4:-JOINERY_NOTHING=1} $1 bench join --backend gpu --algorithm radix_hash --build-rows 2^27 --probe-rows 2^28 --payloads 0 --output-form index --index-type $3 --runs 5 --warmup 1 --out "$OUT/join-$2-$3.jsonl"
}
if [ "${PART:-1}" = 1 ]; then
  for round in 1 2; do
    for ids in int32 int64; do
      join_default $B base$round $ids
      join_default $J cubpart$round $ids JOINERY_RADIX_PARTITION=cub
      join_default $J new$round $ids
    done
  done
  step gpujoin tests 200 $T --gtest_filter='GpuJoin.*'
  step conf-radix tests 240 /tmp/b/joinery_conformance_tests --gtest_filter='*JoinConformance*gpu_radix_hash*'
fi
if [ "${PART:-1}" = 2 ]; then
  step racecheck-several sanitizer 240 compute-sanitizer --tool racecheck $T --gtest_filter='GpuJoin.KeysOnlyIndexFormWithSeveralMatchesPerProbeRow'
  step memcheck-several sanitizer 120 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='GpuJoin.KeysOnlyIndexFormWithSeveralMatchesPerProbeRow'
  # 2^20 build rows: 9 radix bits, so the swwc + CUB partitioning runs too.
  for args in "--index-type int32" "--index-type int64" "--key-type int64" "--zipf 1.5"; do
    step "racecheck-radix $args" sanitizer 120 compute-sanitizer --tool racecheck $J bench join --backend gpu --algorithm radix_hash --build-rows 2^20 --probe-rows 2^21 --payloads 0 --output-form index $args --runs 1 --warmup 0
    step "memcheck-radix $args" sanitizer 120 compute-sanitizer --tool memcheck $J bench join --backend gpu --algorithm radix_hash --build-rows 2^20 --probe-rows 2^21 --payloads 0 --output-form index $args --runs 1 --warmup 0
  done
  step memcheck-conf-radix sanitizer 300 compute-sanitizer --tool memcheck --report-api-errors no /tmp/b/joinery_conformance_tests --gtest_filter='*JoinConformance*gpu_radix_hash*'
fi
if [ "${PART:-1}" = 3 ]; then
  step gpu-joins bench 480 $J bench gpu-joins --runs 3 --warmup 1 --out "$OUT/gpu-joins.jsonl"
fi
if [ "${PART:-1}" = 4 ]; then  # after the sample's change: the tests, then the sweep
  step swwc-join tests 120 $T --gtest_filter='SwwcRowIds.*'
  step memcheck-swwc-join sanitizer 200 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='SwwcRowIds.JoinPartitioning*'
  step conf-radix tests 240 /tmp/b/joinery_conformance_tests --gtest_filter='*JoinConformance*gpu_radix_hash*'
  step gpujoin tests 400 $T --gtest_filter='GpuJoin.*:-GpuJoin.BuildPartitionLargerThanASharedMemoryChunk'
  step gpu-joins bench 120 $J bench gpu-joins --runs 3 --warmup 1 --out "$OUT/gpu-joins.jsonl"
fi
