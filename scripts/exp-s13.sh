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
if [ "${PART:-1}" = 2 ]; then
  # A/B on one machine: session 12's binary (bins12), the teams (bins13), teams + L2 prefetch
  # (bins13p): uniform int32 to 2^16, dense keys, and spread keys (tier 1) to 2^12.
  for v in 12-cli 13p 13-cli 12-cli 13p; do
    mkdir -p /tmp/v$v && tar xJf build/bins$v.tar.xz -C /tmp/v$v joinery
    step "uniform-$v" bench 120 /tmp/v$v/joinery bench gpu-groupby --algorithm hash --groups 2^16 --runs 3 --warmup 1 --out "$OUT/ab-$v.jsonl"
    step "spread-$v" bench 120 /tmp/v$v/joinery bench gpu-groupby --algorithm hash --spread-keys --groups 2^12 --runs 3 --warmup 1 --out "$OUT/ab-spread-$v.jsonl"
  done
fi
if [ "${PART:-1}" = 3 ]; then
  # Teams as their own instantiation, the layout by bytes a row: tests, sanitizers, A/B against
  # session 12's binary (bins12-cli) on one machine, Zipf to 2^16.
  step gb-tests tests 240 $T --gtest_filter='GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuGroupbyRegistry.*'
  mkdir -p /tmp/v12 && tar xJf build/bins12-cli.tar.xz -C /tmp/v12 joinery
  for v in 12 13b 12 13b; do
    bin=/tmp/v12/joinery; [ $v = 13b ] && bin=$J
    step "uniform-$v" bench 120 $bin bench gpu-groupby --algorithm hash --groups 2^16 --runs 3 --warmup 1 --out "$OUT/ab-$v.jsonl"
  done
  for z in 1.0 1.5; do
    step "gb-zipf$z" bench 120 $J bench gpu-groupby --algorithm hash,automatic --zipf $z --groups 2^16 --runs 3 --warmup 1 --out "$OUT/gb-skew.jsonl"
  done
  step memcheck-dense sanitizer 200 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='GpuHashGroupby.DenseTier*'
  step racecheck-dense sanitizer 300 compute-sanitizer --tool racecheck $T --gtest_filter='GpuHashGroupby.DenseTierSplits*:GpuHashGroupby.DenseTierRuns*'
fi
if [ "${PART:-1}" = 4 ]; then
  # Final code: the dense teams' bound at 40 bytes a row, automatic's sort under moderate skew
  # over many groups. Tests, sanitizers, the uniform and Zipf sweeps to 2^20.
  step gb-tests tests 300 $T --gtest_filter='GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuGroupbyRegistry.*:GpuPartitionGroupby.*:GpuDictionaryGroupby.*'
  step memcheck-new sanitizer 200 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='GpuHashGroupby.DenseTier*:GpuHashGroupby.Automatic*'
  step racecheck-new sanitizer 300 compute-sanitizer --tool racecheck $T --gtest_filter='GpuHashGroupby.DenseTierSplits*:GpuHashGroupby.DenseTierRuns*'
  step gb-uniform32 bench 200 $J bench gpu-groupby --algorithm hash,partition_transformed,sort_transformed,automatic --groups 2^20 --runs 3 --warmup 1 --out "$OUT/gb-uniform-int32.jsonl"
  step gb-uniform64 bench 200 $J bench gpu-groupby --algorithm hash,sort_dictionary,sort_transformed,automatic --key-type int64 --groups 2^20 --runs 3 --warmup 1 --out "$OUT/gb-uniform-int64.jsonl"
  zipf_sweeps 150 1.0 1.5 0.5
fi
if [ "${PART:-1}" = 5 ]; then
  conformance_groupby_checks
fi
if [ "${PART:-1}" = 6 ]; then
  # ncu of the dense tier at g = 2^10 (one block a window) and g = 1; automatic against SGB-TR at
  # Zipf 1, g = 2^20, in both orders (the sort phase inside automatic).
  step ncu-dense ncu 200 ncu --clock-control none --kernel-name regex:hgb_shared_kernel --launch-count 4 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis --section InstructionStats --section SourceCounters $J bench groupby --backend gpu --algorithm hash --rows 2^28 --groups 2^10 --runs 1 --warmup 0
  for order in sort_transformed,automatic automatic,sort_transformed; do
    step "order-$order" bench 150 $J bench gpu-groupby --algorithm $order --zipf 1.0 --groups 2^20 --runs 5 --warmup 1 --out "$OUT/order-${order%%,*}-first.jsonl"
  done
fi
if [ "${PART:-1}" = 7 ]; then
  # Review fixes: the team reported in the phase name, teams of 5 and 7, 8-byte keys at the top of
  # their range, outliers mid-run, the one-group loop in teams.
  step gb-tests tests 300 $T --gtest_filter='GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuGroupbyRegistry.*:GpuPartitionGroupby.*:GpuDictionaryGroupby.*'
  step memcheck-teams sanitizer 240 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='GpuHashGroupby.DenseTierSplits*'
  step racecheck-teams sanitizer 300 compute-sanitizer --tool racecheck $T --gtest_filter='GpuHashGroupby.DenseTierSplits*'
  step gb-uniform32 bench 120 $J bench gpu-groupby --algorithm hash,automatic --groups 2^16 --runs 3 --warmup 1 --out "$OUT/gb-uniform-int32.jsonl"
fi
