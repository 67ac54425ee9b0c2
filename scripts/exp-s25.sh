#!/usr/bin/env bash
# Session 25 device runs; logs in $OUT.
#   BINS=build/bins25a.tar.xz PART=1 bash scripts/exp-s25.sh
# PART=1 (joinery_gpu_tests): the Lo32 test, which now also asserts which dense kernel ran (the
# phase name's ", own 32-bit sum kernel"), the other group-by tests, and the swwc / Hierarchical
# partition tests (session 23's ff328e5 had not run on a GPU).
# PART=6 (BINS=build/bins25c.tar.xz, joinery_conformance_tests): the suite's GPU group-bys.
# PART=12: the Lo32 test, then PART 2.
# PART=2 (joinery): issue 7's sweep at the current revision: every algorithm the targets compare,
# uniform int32 and int64 keys to g = 2^26, the global hash baseline to 2^10, MAX and SUM.
# PART=3 (joinery): Zipf 0.5 / 1 / 1.5 to 2^20 (hash, PGB-TR, SGB-TR, automatic); issue 4's
# partition table (swwc, 8..11 bits).
# PART=5 (joinery, joinery_gpu_tests): swwc with the next tile prefetched into shared memory
# (JOINERY_SWWC_PREFETCH=1) against without, alternated twice, 8..11 bits; the swwc tests that
# run it, memcheck and racecheck over them.
# PART=7 (joinery, joinery_gpu_tests): the swwc / Hierarchical tests (PART 1's), and the Zipf 1
# point where automatic missed 10% (2^20, against SGB-TR) again: SGB-TR and automatic in both
# orders, 7 runs.
# PART=4 (joinery_gpu_tests): racecheck over the dense tier's team test, and the Hierarchical
# partition's 2^31-row case, neither run to completion before.
set -u
source "$(dirname "$0")/exp-lib.sh" "${BINS:-build/bins25a.tar.xz}"
J=/tmp/b/joinery
T=/tmp/b/joinery_gpu_tests
LO32_TEST='GpuHashGroupby.DenseTierSumsInt32ValuesInThirtyTwoBitPartials'
if [ "${PART:-1}" = 1 ] || [ "${PART:-1}" = 12 ]; then
  step lo32-test tests 150 $T --gtest_filter="$LO32_TEST"
fi
if [ "${PART:-1}" = 1 ]; then
  step gb-tests tests 150 $T --gtest_filter="GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuPartitionGroupby.*:GpuGroupbyRegistry.*:GpuDictionaryGroupby.*:Lo32Sum.*:-$LO32_TEST"
  step sw-tests tests 200 $T --gtest_filter='*PartitionAlgorithms*swwc*:*PartitionAlgorithms*hierarchical*:Partition.Swwc*:Partition.Hierarchical*:SwwcRowIds.*:-*BeyondTwoToThe31Rows*'
fi
if [ "${PART:-1}" = 2 ] || [ "${PART:-1}" = 12 ]; then
  step gb-u32 bench 200 $J bench gpu-groupby --algorithm hash,partition_transformed,sort_transformed,sort_dictionary,automatic --groups 2^26 --runs 3 --warmup 1 --out "$OUT/gb-s25-uniform-int32.jsonl"
  step gb-u64 bench 200 $J bench gpu-groupby --algorithm hash,partition_transformed,sort_transformed,sort_dictionary,automatic --key-type int64 --groups 2^26 --runs 3 --warmup 1 --out "$OUT/gb-s25-uniform-int64.jsonl"
  step gb-base bench 90 $J bench gpu-groupby --algorithm global_hash --groups 2^10 --runs 3 --warmup 1 --out "$OUT/gb-s25-uniform-int32.jsonl"
fi
if [ "${PART:-1}" = 3 ]; then
  for z in 0.5 1.0 1.5; do
    step "gb-zipf$z" bench 150 $J bench gpu-groupby --algorithm hash,partition_transformed,sort_transformed,automatic --zipf $z --groups 2^20 --runs 3 --warmup 1 --out "$OUT/gb-s25-zipf.jsonl"
  done
  step prims bench 120 $J bench primitives --algorithm swwc --bits 8,9,10,11 --runs 5 --warmup 1 --out "$OUT/primitives-s25.jsonl"
fi
if [ "${PART:-1}" = 4 ]; then
  step racecheck-team sanitizer 420 compute-sanitizer --tool racecheck $T --gtest_filter='GpuHashGroupby.DenseTierSplitsAWideWindowOverATeamOfBlocks'
  step beyond-hier tests 150 $T --gtest_filter='*PartitionAlgorithms.BeyondTwoToThe31Rows/hierarchical'
fi
if [ "${PART:-1}" = 5 ]; then
  step sw-every tests 240 $T --gtest_filter='Partition.SwwcUnderEveryPolicyAndFlushAlignment'
  for i in 1 2; do
    for f in 0 1; do
      step "prims-f$f-$i" bench 100 env JOINERY_SWWC_PREFETCH=$f $J bench primitives --algorithm swwc --bits 8,9,10,11 --runs 5 --warmup 1 --out "$OUT/swwc-prefetch-f$f.jsonl"
    done
  done
fi
if [ "${PART:-1}" = 6 ]; then
  step conf-gb tests 90 /tmp/b/joinery_conformance_tests --gtest_filter='*GroupbyConformance*gpu*'
fi
if [ "${PART:-1}" = 7 ]; then
  step sw-tests tests 240 $T --gtest_filter='*PartitionAlgorithms*swwc*:*PartitionAlgorithms*hierarchical*:Partition.Swwc*:Partition.Hierarchical*:SwwcRowIds.*:-*BeyondTwoToThe31Rows*'
  for order in sort_transformed,automatic automatic,sort_transformed; do
    step "zipf1-$order" bench 120 $J bench gpu-groupby --algorithm $order --zipf 1.0 --groups 2^20 --runs 7 --warmup 1 --out "$OUT/gb-s25-zipf1-${order%%,*}-first.jsonl"
  done
fi
