#!/usr/bin/env bash
# Session 13 device runs; logs in $OUT. PART=1: the dense tier's teams (tests, sanitizers, the
# uniform and skewed sweeps to 2^18).
set -u
source "$(dirname "$0")/exp-lib.sh" build/bins13.tar.xz
J=/tmp/b/joinery
T=/tmp/b/joinery_gpu_tests
if [ "${PART:-1}" = 1 ]; then
  step gb-tests tests 240 $T --gtest_filter='GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuGroupbyRegistry.*'
  step gb-uniform32 bench 200 $J bench gpu-groupby --algorithm hash,automatic --groups 2^18 --runs 3 --warmup 1 --out "$OUT/gb-uniform-int32.jsonl"
  for z in 1.0 1.5; do
    step "gb-zipf$z" bench 120 $J bench gpu-groupby --algorithm hash --zipf $z --groups 2^16 --runs 3 --warmup 1 --out "$OUT/gb-skew.jsonl"
  done
  step memcheck-dense sanitizer 200 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='GpuHashGroupby.DenseTier*'
  step racecheck-dense sanitizer 300 compute-sanitizer --tool racecheck $T --gtest_filter='GpuHashGroupby.DenseTierSplits*:GpuHashGroupby.DenseTierRuns*'
fi
