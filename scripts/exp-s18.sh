#!/usr/bin/env bash
# Session 18 device runs (issue 7, SUM of int32 values in 32-bit partials); logs in $OUT.
# PART=1: the new test first, then bench gpu-groupby (hash) with the partials (default and forced
# on) and without (JOINERY_DENSE_LO32=0) at g = 2^16: int32 and int64 keys, Zipf 1; the GPU
# group-by tests and conformance cases. PART=2: memcheck and racecheck over the dense tier tests and
# memcheck over the hash conformance cases. PART=3: the GPU group-by tests and conformance cases,
# then automatic against hash and sort_transformed on int64 Zipf 1 keys to 2^20 and on int32
# uniform keys to 2^18 (the 8-byte skew-stop bound, the 32-bit sums in automatic). PART=4
# (BINS=build/bins18e.tar.xz, OLD=build/bins18c.tar.xz): the spill counts in 32 bits against
# 64-bit spills, int32 and int64 keys, two rounds; then the GPU group-by tests. PART=5 (the final
# binary): the GPU group-by tests and conformance cases, every sort and automatic on int64 Zipf 1
# keys to 2^20 and on int64 uniform keys to 2^22 (the dictionary's build after an overflow),
# memcheck over automatic and the dictionary.
set -u
source "$(dirname "$0")/exp-lib.sh" "${BINS:-build/bins18.tar.xz}"
J=/tmp/b/joinery
T=/tmp/b/joinery_gpu_tests
if [ "${PART:-1}" = 1 ]; then
  step lo32-test tests 200 $T --gtest_filter='GpuHashGroupby.DenseTierSums*'
  gb lo32 JOINERY_NOTHING=1
  gb off JOINERY_DENSE_LO32=0
  gb lo32-64 JOINERY_NOTHING=1 --key-type int64
  gb off-64 JOINERY_DENSE_LO32=0 --key-type int64
  gb forced-z1 JOINERY_DENSE_LO32=1 --zipf 1
  gb z1 JOINERY_NOTHING=1 --zipf 1
  step gb-tests tests 250 $T --gtest_filter='GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuPartitionGroupby.*:GpuGroupbyRegistry.*:GpuDictionaryGroupby.*'
  step conf-gb tests 200 /tmp/b/joinery_conformance_tests --gtest_filter='*GroupbyConformance*gpu*'
fi
if [ "${PART:-1}" = 2 ]; then  # SAN=memcheck|racecheck
  if [ "${SAN:-memcheck}" = memcheck ]; then
    step memcheck-lo32 sanitizer 420 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='GpuHashGroupby.DenseTier*:GpuHashGroupby.Automatic*'
    step memcheck-conf sanitizer 120 compute-sanitizer --tool memcheck --report-api-errors no /tmp/b/joinery_conformance_tests --gtest_filter='*GroupbyConformance*gpu_hash*'
  else
    step racecheck-lo32 sanitizer 540 compute-sanitizer --tool racecheck $T --gtest_filter='GpuHashGroupby.DenseTierSums*'
  fi
fi
if [ "${PART:-1}" = 4 ]; then
  mkdir -p /tmp/old && tar xJf "$OLD" -C /tmp/old
  for r in 1 2; do
    for k in int32 int64; do
      step "gb-spill32-$k-$r" bench 150 $J bench gpu-groupby --algorithm hash --groups 2^16 --runs 3 --warmup 1 --key-type $k --out "$OUT/gb-s18e-spill32.jsonl"
      step "gb-spill64-$k-$r" bench 150 /tmp/old/joinery bench gpu-groupby --algorithm hash --groups 2^16 --runs 3 --warmup 1 --key-type $k --out "$OUT/gb-s18e-spill64.jsonl"
    done
  done
  step gb-tests tests 250 $T --gtest_filter='GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuPartitionGroupby.*:GpuGroupbyRegistry.*:GpuDictionaryGroupby.*'
  step conf-gb tests 200 /tmp/b/joinery_conformance_tests --gtest_filter='*GroupbyConformance*gpu*'
fi
if [ "${PART:-1}" = 3 ]; then
  step gb-tests tests 250 $T --gtest_filter='GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuPartitionGroupby.*:GpuGroupbyRegistry.*:GpuDictionaryGroupby.*'
  step conf-gb tests 200 /tmp/b/joinery_conformance_tests --gtest_filter='*GroupbyConformance*gpu*'
  step gb-zipf1-int64 bench 250 $J bench gpu-groupby --algorithm hash,sort_transformed,automatic --zipf 1 --key-type int64 --groups 2^20 --runs 3 --warmup 1 --out "$OUT/gb-s18-zipf1-int64.jsonl"
  step gb-uniform bench 150 $J bench gpu-groupby --algorithm hash,partition_transformed,sort_transformed,automatic --groups 2^18 --runs 3 --warmup 1 --out "$OUT/gb-s18-uniform.jsonl"
fi
if [ "${PART:-1}" = 5 ]; then
  step gb-tests tests 250 $T --gtest_filter='GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuPartitionGroupby.*:GpuGroupbyRegistry.*:GpuDictionaryGroupby.*'
  step conf-gb tests 200 /tmp/b/joinery_conformance_tests --gtest_filter='*GroupbyConformance*gpu*'
  step gb-zipf1-int64 bench 250 $J bench gpu-groupby --algorithm hash,sort_transformed,sort_dictionary,automatic --zipf 1 --key-type int64 --groups 2^20 --runs 3 --warmup 1 --out "$OUT/gb-s18-final-zipf1-int64.jsonl"
  step gb-uniform-int64 bench 250 $J bench gpu-groupby --algorithm sort_transformed,sort_dictionary,automatic --key-type int64 --groups 2^22 --runs 3 --warmup 1 --out "$OUT/gb-s18-final-uniform-int64.jsonl"
  step memcheck-auto sanitizer 300 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='GpuHashGroupby.Automatic*:GpuDictionaryGroupby.*'
fi
grep -h "G rows/s\|^g =\|FAILED\|PASSED\|ERROR SUMMARY\|RACECHECK SUMMARY" $OUT/*.log | head -150
cat $S
