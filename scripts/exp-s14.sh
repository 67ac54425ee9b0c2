#!/usr/bin/env bash
# Session 14 device runs; logs in $OUT. PART=1: the sweeps with the dense tier's lean loop
# (uniform int32 / int64 and Zipf 1, 1.5, 0.5 to 2^20, every algorithm the targets compare).
# PART=2: the group-by tests, the conformance checks and the sanitizers over the dense tier,
# automatic against SGB-TR at Zipf 1, g = 2^20, in both orders.
set -u
source "$(dirname "$0")/exp-lib.sh" build/bins14e.tar.xz
J=/tmp/b/joinery
T=/tmp/b/joinery_gpu_tests
if [ "${PART:-1}" = 1 ]; then
  step gb-uniform32 bench 150 $J bench gpu-groupby --algorithm hash,partition_transformed,sort_transformed,automatic --groups 2^20 --runs 3 --warmup 1 --out "$OUT/gb-uniform-int32.jsonl"
  step gb-uniform64 bench 150 $J bench gpu-groupby --algorithm hash,sort_dictionary,sort_transformed,automatic --key-type int64 --groups 2^20 --runs 3 --warmup 1 --out "$OUT/gb-uniform-int64.jsonl"
  zipf_sweeps 90 1.0 1.5 0.5
fi
if [ "${PART:-1}" = 2 ]; then
  step gb-tests tests 200 $T --gtest_filter='*roupby*'
  conformance_groupby_checks
  step memcheck-dense sanitizer 150 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='GpuHashGroupby.DenseTier*:GpuHashGroupby.Automatic*'
  step racecheck-dense sanitizer 200 compute-sanitizer --tool racecheck $T --gtest_filter='GpuHashGroupby.DenseTierSplits*'
  # automatic (which runs SGB-TR there) against SGB-TR at Zipf 1, g = 2^20, in both orders.
  for order in sort_transformed,automatic automatic,sort_transformed; do
    step "order-$order" bench 60 $J bench gpu-groupby --algorithm $order --zipf 1.0 --groups 2^20 --runs 5 --warmup 1 --out "$OUT/order-${order%%,*}-first.jsonl"
  done
fi
