#!/usr/bin/env bash
# Session 12 device runs; logs in $OUT. PART=1 PGB's fixes and the skew switch (tests, sanitizers,
# Zipf sweeps); 2 the one-accumulator dense tier and the uniform int32 sweep; 3 int64 and Zipf
# sweeps; 4 the GPU group-by conformance cases, Api.* and memcheck; 5 the refactored automatic tests.
set -u
source "$(dirname "$0")/exp-lib.sh" build/bins12.tar.xz
J=/tmp/b/joinery
T=/tmp/b/joinery_gpu_tests
if [ "${PART:-1}" = 1 ]; then
  step gb-tests tests 240 $T --gtest_filter='GpuPartitionGroupby.*:Algorithms/GpuGroupby.*:GpuHashGroupby.*:GpuGroupbyRegistry.*:GpuDictionaryGroupby.*'
  step memcheck-pgb sanitizer 150 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='GpuPartitionGroupby.SkewHides*:GpuPartitionGroupby.Restarts*:GpuHashGroupby.AutomaticPartitions*'
  step racecheck-pgb sanitizer 150 compute-sanitizer --tool racecheck $T --gtest_filter='GpuPartitionGroupby.SkewHides*:GpuPartitionGroupby.Restarts*'
  for z in ${ZIPFS:-1.5 1.0 0.5}; do
    step "gb-zipf$z" bench 200 $J bench gpu-groupby --algorithm hash,partition_transformed,sort_transformed,automatic --zipf $z --groups 2^20 --runs 3 --warmup 1 --out "$OUT/gb-skew.jsonl"
  done
  step gb-uniform bench 200 $J bench gpu-groupby --algorithm partition_transformed,automatic --groups 2^24 --runs 3 --warmup 1 --out "$OUT/gb-uniform.jsonl"
fi
if [ "${PART:-1}" = 2 ]; then
  # The dense tier one accumulator a pass: tests, sanitizers, and the sweeps at the final code.
  step gb-tests tests 240 $T --gtest_filter='GpuPartitionGroupby.*:Algorithms/GpuGroupby.*:GpuHashGroupby.*:GpuGroupbyRegistry.*:GpuDictionaryGroupby.*'
  step memcheck-dense sanitizer 150 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='GpuHashGroupby.DenseTierRuns*'
  step racecheck-dense sanitizer 200 compute-sanitizer --tool racecheck $T --gtest_filter='GpuHashGroupby.DenseTierRuns*'
  step gb-uniform32 bench 330 $J bench gpu-groupby --groups 2^26 --runs 3 --warmup 1 --out "$OUT/gb-uniform-int32.jsonl"
fi
if [ "${PART:-1}" = 3 ]; then
  step gb-uniform64 bench 240 $J bench gpu-groupby --algorithm hash,sort_transformed,sort_dictionary,partition_transformed,automatic --key-type int64 --groups 2^26 --runs 3 --warmup 1 --out "$OUT/gb-uniform-int64.jsonl"
  zipf_sweeps 120 0.5 1.0 1.5
fi
if [ "${PART:-1}" = 4 ]; then
  conformance_groupby_checks
fi
if [ "${PART:-1}" = 5 ]; then
  step auto-tests tests 120 $T --gtest_filter='GpuHashGroupby.Automatic*'
fi
if [ "${PART:-1}" = 6 ]; then
  # Tier 2's hot keys in shared memory (each try built from its own commit).
  step gb-tests tests 240 $T --gtest_filter='GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuGroupbyRegistry.*'
  step memcheck-hot sanitizer 150 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='GpuHashGroupby.TierTwo*'
  step racecheck-hot sanitizer 200 compute-sanitizer --tool racecheck $T --gtest_filter='GpuHashGroupby.TierTwo*'
  zipf_sweeps 120 1.0 1.5
  step gb-uniform bench 120 $J bench gpu-groupby --algorithm hash --groups 2^22 --runs 3 --warmup 1 --out "$OUT/gb-uniform.jsonl"
fi
if [ "${PART:-1}" = 7 ]; then
  # ncu of HGB's tier 2 (hgb_global_kernel) at g = 2^18: uniform, Zipf 1 and Zipf 1.5 keys.
  for z in 0 1.0 1.5; do
    step "ncu-zipf$z" ncu 150 ncu --clock-control none --kernel-name regex:hgb_global_kernel --launch-count 2 --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats $J bench groupby --backend gpu --algorithm hash --rows 2^28 --groups 2^18 --zipf $z --runs 1 --warmup 0
  done
fi
if [ "${PART:-1}" = 8 ]; then
  # ncu of tier 2's hot-key instantiation at Zipf 1, g = 2^18.
  step ncu-hot ncu 200 ncu --clock-control none --kernel-name regex:hgb_global_kernel --launch-count 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy --section InstructionStats --section SourceCounters $J bench groupby --backend gpu --algorithm hash --rows 2^28 --groups 2^18 --zipf 1.0 --runs 1 --warmup 0
fi
if [ "${PART:-1}" = 9 ]; then
  # The review's changes: the overflow helper, the estimate against the host's profile.
  step gb-tests tests 240 $T --gtest_filter='GpuPartitionGroupby.*:Algorithms/GpuGroupby.*:GpuHashGroupby.*:GpuGroupbyRegistry.*:GpuDictionaryGroupby.*'
  step memcheck sanitizer 150 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='GpuPartitionGroupby.Estimate*:GpuPartitionGroupby.SkewHides*:GpuPartitionGroupby.Restarts*:GpuHashGroupby.SharedTierOverflowing*'
  step racecheck sanitizer 200 compute-sanitizer --tool racecheck $T --gtest_filter='GpuPartitionGroupby.Estimate*:GpuPartitionGroupby.SkewHides*:GpuPartitionGroupby.Restarts*'
fi
cat "$S"
