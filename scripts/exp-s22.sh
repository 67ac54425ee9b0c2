#!/usr/bin/env bash
# Session 22 device runs (issue 4: packed swwc buffers, 128 tuples a digit at 8 bits); logs in $OUT.
#   BINS=build/bins22.tar.xz PART=1 bash scripts/exp-s22.sh
# PART=1: the swwc tests (packed forced, and the defaults); bench primitives swwc at 7 and 8 bits
# under the default, packed (unaligned / aligned) and 7-bit 128-tuple buffers, alternated.
# PART=2: memcheck and racecheck over the packed tests. JOINERY_SWWC_PACK and the packed tests exist
# only with bench/experiments/swwc-packed.patch applied (branch wip/swwc-packed, b8529c8): PART 1
# ran binaries built from it.
# PART=3: the lo32 sum tests, the GPU group-by tests, memcheck / racecheck over the lo32 tests and
# memcheck over the dense tier's tests (issue 7).
# PART=4 (not run in session 22, no device time left): ncu of swwc at 7 and 8 bits, for the stall
# reasons of its SM-bound pass.
set -u
source "$(dirname "$0")/exp-lib.sh" "${BINS:-build/bins22.tar.xz}"
J=/tmp/b/joinery
T=/tmp/b/joinery_gpu_tests
sw() {  # sw TAG BITS ENV... : bench primitives swwc at BITS under the settings
  local tag=$1 bits=$2; shift 2
  step "sw-$tag" bench 120 env "$@" $J bench primitives --algorithm swwc --bits "$bits" --runs 5 --warmup 1 --out "$OUT/sw.jsonl"
}
if [ "${PART:-1}" = 1 ]; then
  F='Partition.SwwcPackedBuffers:*PartitionAlgorithms*swwc*:Partition.Swwc*:SwwcRowIds.*:SwwcPolicy.*:-*BeyondTwoToThe31Rows*'
  step tests tests 300 $T --gtest_filter="$F"
  for i in 1 2; do
    sw "def-$i" 7,8 X=0
    sw "pack-$i" 8 JOINERY_SWWC_PACK=1
    sw "pack-al-$i" 8 JOINERY_SWWC_PACK=1 JOINERY_SWWC_ALIGN=1
    sw "b128-7-$i" 7 JOINERY_SWWC_B=128 JOINERY_SWWC_POLICY=3
    sw "b128-7-al-$i" 7 JOINERY_SWWC_B=128 JOINERY_SWWC_POLICY=3 JOINERY_SWWC_ALIGN=1
  done
fi
if [ "${PART:-1}" = 2 ]; then  # sanitizers over the packed tests
  step memcheck sanitizer 300 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='Partition.SwwcPackedBuffers*'
  step racecheck sanitizer 280 compute-sanitizer --tool racecheck $T --gtest_filter='Partition.SwwcPackedBuffers'
fi
if [ "${PART:-1}" = 3 ]; then  # issue 7: lo32_sum.cuh (moved out of hash_groupby.cu) and its tests
  step lo32 tests 120 $T --gtest_filter='Lo32Sum.*'
  step gb-tests tests 200 $T --gtest_filter='GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuPartitionGroupby.*:GpuGroupbyRegistry.*:GpuDictionaryGroupby.*'
  step memcheck-lo32 sanitizer 60 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='Lo32Sum.*'
  step racecheck-lo32 sanitizer 90 compute-sanitizer --tool racecheck $T --gtest_filter='Lo32Sum.*'
  step memcheck-dense sanitizer 120 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='GpuHashGroupby.DenseTier*'
fi
if [ "${PART:-1}" = 4 ]; then  # not run yet: where swwc's 8-bit pass spends its time (issue 4's next step)
  for bits in 7 8; do
    step "ncu-swwc-$bits" ncu 200 env JOINERY_SWWC_ALIGN=$([ $bits = 7 ] && echo 1 || echo 0) ncu --clock-control none --kernel-name regex:swwc_partition_kernel --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section InstructionStats --section SourceCounters $J bench primitives --algorithm swwc --bits $bits --rows 2^26 --runs 1 --warmup 0
  done
fi
cat "$S"
