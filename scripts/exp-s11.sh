#!/usr/bin/env bash
# Session 11 device runs: PART=1 the int32 join index (radix A/B, tests, sanitizers) and HGB's
# tier-2 launch bounds; logs in $OUT (at most 8 files).
set -u
source "$(dirname "$0")/exp-lib.sh" build/bins4.tar.xz
J=/tmp/b/joinery
JOIN="bench join --backend gpu --algorithm radix_hash --build-rows 2^27 --probe-rows 2^28 --payloads 0 --output-form index --runs 5 --warmup 1"
if [ "${PART:-1}" = 1 ]; then
  for r in 1 2; do
    step "radix-int64-$r" bench 120 $J $JOIN --index-type int64 --out "$OUT/join-index.jsonl"
    step "radix-int32-$r" bench 120 $J $JOIN --index-type int32 --out "$OUT/join-index.jsonl"
  done
  step api-gpu tests 60 /tmp/b/joinery_unit_tests --gtest_filter='Api.*'
  step gpujoin-int32 tests 300 /tmp/b/joinery_gpu_tests --gtest_filter='GpuJoin.ResultLarger*:GpuJoin.ManyPartitions*:GpuJoin.ManyToMany*:GpuJoin.BuildPartition*'
  step memcheck-int32 sanitizer 120 compute-sanitizer --tool memcheck --report-api-errors no /tmp/b/joinery_unit_tests --gtest_filter='Api.Int32Index*'
  step memcheck-budget sanitizer 120 compute-sanitizer --tool memcheck --report-api-errors no /tmp/b/joinery_gpu_tests --gtest_filter='GpuJoin.ResultLarger*'
  step racecheck-int32 sanitizer 150 compute-sanitizer --tool racecheck /tmp/b/joinery_unit_tests --gtest_filter='Api.Int32Index*'
  step racecheck-direct sanitizer 60 compute-sanitizer --tool racecheck $J bench join --backend gpu --algorithm radix_hash --build-rows 2^16 --probe-rows 2^17 --runs 1 --warmup 0 --payloads 0 --output-form index --index-type int32
  step gb-hash bench 200 $J bench gpu-groupby --algorithm hash --groups 2^20 --runs 5 --warmup 1 --out "$OUT/gb-hash.jsonl"
fi
if [ "${PART:-1}" = 2 ]; then
  step api-gpu tests 60 /tmp/b/joinery_unit_tests --gtest_filter='Api.*'
  step conf-gpu tests 150 /tmp/b/joinery_conformance_tests --gtest_filter='*JoinConformance*gpu*'
  step gb-tests tests 120 /tmp/b/joinery_gpu_tests --gtest_filter='GpuHashGroupby.*'
  step memcheck-new sanitizer 90 compute-sanitizer --tool memcheck --report-api-errors no /tmp/b/joinery_unit_tests --gtest_filter='Api.Int32Index*'
  step memcheck-skew sanitizer 90 compute-sanitizer --tool memcheck --report-api-errors no /tmp/b/joinery_gpu_tests --gtest_filter='GpuHashGroupby.AutomaticPartitions*'
  step racecheck-new sanitizer 90 compute-sanitizer --tool racecheck /tmp/b/joinery_unit_tests --gtest_filter='Api.Int32Index*'
  step racecheck-skew sanitizer 120 compute-sanitizer --tool racecheck /tmp/b/joinery_gpu_tests --gtest_filter='GpuHashGroupby.AutomaticPartitions*'
  for a in no_partition_hash sort_merge radix_hash; do
    for t in int64 int32; do
      step "$a-$t" bench 60 $J bench join --backend gpu --algorithm $a --build-rows 2^27 --probe-rows 2^28 --payloads 0 --output-form index --runs 5 --warmup 1 --index-type $t --out "$OUT/join-index.jsonl"
    done
  done
  for z in 1.5 1.0; do
    step "gb-zipf$z" bench 100 $J bench gpu-groupby --algorithm hash,partition_transformed,automatic --zipf $z --groups 2^20 --runs 3 --warmup 1 --out "$OUT/gb-skew.jsonl"
  done
  step gpujoin-rest tests 150 /tmp/b/joinery_gpu_tests --gtest_filter='GpuJoin.ResultLarger*:GpuJoin.ManyToMany*:GpuJoin.HostResident*'
fi
if [ "${PART:-1}" = 3 ]; then
  # A/B of HGB tier 2's launch bounds: A without (__launch_bounds__(256)), B with (256, 4).
  for r in 1 2; do
    step "gb-A-$r" bench 90 env JOINERY_GIT_REVISION=c51c669-A-no-min-blocks /tmp/b/joinery_A bench gpu-groupby --algorithm hash --groups 2^20 --runs 5 --warmup 1 --out "$OUT/gb-bounds-ab.jsonl"
    step "gb-B-$r" bench 90 env JOINERY_GIT_REVISION=c51c669 $J bench gpu-groupby --algorithm hash --groups 2^20 --runs 5 --warmup 1 --out "$OUT/gb-bounds-ab.jsonl"
  done
  step gb-tests tests 200 /tmp/b/joinery_gpu_tests --gtest_filter='GpuHashGroupby.*:Algorithms/GpuGroupby.*/hash:GpuGroupbyRegistry.*'
  step memcheck-tier2 sanitizer 120 compute-sanitizer --tool memcheck --report-api-errors no /tmp/b/joinery_gpu_tests --gtest_filter='GpuHashGroupby.TierTwo*:GpuHashGroupby.AutomaticTurns*'
  step racecheck-tier2 sanitizer 150 compute-sanitizer --tool racecheck /tmp/b/joinery_gpu_tests --gtest_filter='GpuHashGroupby.TierTwo*'
fi
if [ "${PART:-1}" = 4 ]; then
  # PGB's global table growing 8x instead of jumping to one for every row.
  step pgb-tests tests 200 /tmp/b/joinery_gpu_tests --gtest_filter='GpuPartitionGroupby.*:Algorithms/GpuGroupby.*/partition*'
  step memcheck-pgb sanitizer 120 compute-sanitizer --tool memcheck --report-api-errors no /tmp/b/joinery_gpu_tests --gtest_filter='GpuPartitionGroupby.SkewHides*:GpuPartitionGroupby.Restarts*'
  step gb-zipf1.5 bench 240 $J bench gpu-groupby --algorithm hash,partition_transformed --zipf 1.5 --groups 2^20 --runs 3 --warmup 1 --out "$OUT/gb-pgb-growth.jsonl"
fi
cat "$S"
