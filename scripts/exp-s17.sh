#!/usr/bin/env bash
# Session 17 device runs (issue 7, the dense tier's narrow loads); logs in $OUT.
# PART=1: bench gpu-groupby (hash) with the narrow form and without (JOINERY_DENSE_NARROW=0) on
# uniform int32 / int64 keys and Zipf 1.5 up to g = 2^16; the GPU group-by tests; the
# conformance cases; each dense layout forced (JOINERY_DENSE_BATCH). PART=2: memcheck and racecheck over the dense tier and the hash conformance
# cases. PART=3: every algorithm and automatic to g = 2^18 (Zipf 0 / 1 / 1.5, int64 keys).
# PART=4 (issue 4): the swwc partition with its buffer size forced. PART=5 (BINS=build/bins17b.tar.xz):
# after the swwc buffer rule change, bench primitives, the partition tests and their sanitizers.
# PART=6 (BINS=build/bins17c.tar.xz, with joinery_base): the offset-based slot test A/B and tests
# (SANITIZE=1: memcheck and racecheck over the dense tier too). PART=7 (BINS=build/bins17e.tar.xz):
# automatic with 8-byte keys to 2^22 groups, the binary before the shared group estimate against
# after; the GPU group-by tests. PART=8 (BINS=build/bins17f.tar.xz): automatic with int64 Zipf 1
# keys against every algorithm, int64 uniform keys against sort_dictionary, the tests.
set -u
source "$(dirname "$0")/exp-lib.sh" "${BINS:-build/bins17.tar.xz}"
J=/tmp/b/joinery
T=/tmp/b/joinery_gpu_tests
if [ "${PART:-1}" = 1 ]; then
  gb new JOINERY_NOTHING=1
  gb general JOINERY_DENSE_NARROW=0
  gb new64 JOINERY_NOTHING=1 --key-type int64
  gb general64 JOINERY_DENSE_NARROW=0 --key-type int64
  gb newz JOINERY_NOTHING=1 --zipf 1.5
  gb batch2 JOINERY_DENSE_BATCH=2
  gb batch1 JOINERY_DENSE_BATCH=1
  step gb-tests tests 200 $T --gtest_filter='GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuPartitionGroupby.*:GpuGroupbyRegistry.*:GpuDictionaryGroupby.*'
  step conf-gb tests 200 /tmp/b/joinery_conformance_tests --gtest_filter='*GroupbyConformance*gpu*'
fi
if [ "${PART:-1}" = 2 ]; then
  step memcheck-dense sanitizer 250 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='GpuHashGroupby.DenseTier*:GpuHashGroupby.Automatic*'
  step racecheck-dense sanitizer 200 compute-sanitizer --tool racecheck $T --gtest_filter='GpuHashGroupby.DenseTier*'
  step memcheck-conf sanitizer 120 compute-sanitizer --tool memcheck --report-api-errors no /tmp/b/joinery_conformance_tests --gtest_filter='*GroupbyConformance*gpu_hash*'
fi
if [ "${PART:-1}" = 3 ]; then
  for z in 0 1 1.5; do
    step "gb-all-z$z" bench 140 $J bench gpu-groupby --algorithm hash,partition_transformed,sort_transformed,automatic --groups 2^18 --zipf $z --runs 3 --warmup 1 --out "$OUT/gb-all.jsonl"
  done
  step gb-all-64 bench 140 $J bench gpu-groupby --algorithm hash,partition_transformed,sort_dictionary,automatic --groups 2^18 --key-type int64 --runs 3 --warmup 1 --out "$OUT/gb-all.jsonl"
fi
if [ "${PART:-1}" = 4 ]; then  # issue 4: swwc buffer sizes forced (JOINERY_SWWC_LOG2B), 8-11 bits
  step swwc-default bench 150 $J bench primitives --algorithm swwc --runs 5 --warmup 1 --out "$OUT/swwc-default.jsonl"
  for b in 5 4; do
    step "swwc-b$b" bench 150 env JOINERY_SWWC_LOG2B=$b $J bench primitives --algorithm swwc --runs 5 --warmup 1 --out "$OUT/swwc-b$b.jsonl"
  done
fi
if [ "${PART:-1}" = 5 ]; then  # issue 4 after the swwc buffer rule change: bench, tests, sanitizers
  step prim bench 200 $J bench primitives --runs 5 --warmup 1 --out "$OUT/primitives.jsonl"
  step part-tests tests 300 $T --gtest_filter='*PartitionAlgorithms*:SwwcRowIds.*:PartitionRefusals.*:*RadixJoin*:*Radix*Past*:*GpuPartitionGroupby*'
  step memcheck-swwc sanitizer 200 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='SwwcRowIds.*:*PartitionAlgorithms*swwc*:-*BeyondTwoToThe31Rows*'
  step racecheck-swwc sanitizer 200 compute-sanitizer --tool racecheck $T --gtest_filter='SwwcRowIds.*:*PartitionAlgorithms*swwc*:-*BeyondTwoToThe31Rows*'
fi
if [ "${PART:-1}" = 6 ]; then  # the offset-based slot test (BINS=build/bins17c.tar.xz): A/B, tests
  B=/tmp/b/joinery_base
  for r in 1 2; do
    step "gb-base-$r" bench 150 $B bench gpu-groupby --algorithm hash --groups 2^16 --runs 3 --warmup 1 --out "$OUT/gb-base-$r.jsonl"
    gb "offset-$r" JOINERY_NOTHING=1
  done
  step gb-base64 bench 150 $B bench gpu-groupby --algorithm hash --groups 2^16 --runs 3 --warmup 1 --key-type int64 --out "$OUT/gb-base64.jsonl"
  gb offset64 JOINERY_NOTHING=1 --key-type int64
  step gb-tests tests 200 $T --gtest_filter='GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuPartitionGroupby.*:GpuGroupbyRegistry.*:GpuDictionaryGroupby.*'
  if [ -n "${SANITIZE:-}" ]; then
    step memcheck-dense sanitizer 150 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='GpuHashGroupby.DenseTier*:GpuHashGroupby.Automatic*'
    step racecheck-dense sanitizer 200 compute-sanitizer --tool racecheck $T --gtest_filter='GpuHashGroupby.DenseTier*'
  fi
fi
if [ "${PART:-1}" = 7 ]; then  # automatic with 8-byte keys, one group estimate (BINS=build/bins17e.tar.xz)
  B=/tmp/b/joinery_base
  for z in 0 1; do
    step "auto64-base-z$z" bench 200 $B bench gpu-groupby --algorithm automatic --key-type int64 --groups 2^22 --zipf $z --runs 3 --warmup 1 --out "$OUT/auto64-base.jsonl"
    step "auto64-new-z$z" bench 200 $J bench gpu-groupby --algorithm automatic --key-type int64 --groups 2^22 --zipf $z --runs 3 --warmup 1 --out "$OUT/auto64-new.jsonl"
  done
  step gb-tests tests 200 $T --gtest_filter='GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuPartitionGroupby.*:GpuGroupbyRegistry.*:GpuDictionaryGroupby.*'
fi
if [ "${PART:-1}" = 8 ]; then  # automatic under skew with 8-byte keys (BINS=build/bins17f.tar.xz)
  step z1-64 bench 250 $J bench gpu-groupby --algorithm hash,sort_transformed,sort_dictionary,partition_transformed,automatic --key-type int64 --zipf 1 --groups 2^20 --runs 3 --warmup 1 --out "$OUT/z1-64.jsonl"
  step z0-64 bench 200 $J bench gpu-groupby --algorithm sort_dictionary,automatic --key-type int64 --groups 2^22 --runs 3 --warmup 1 --out "$OUT/z0-64.jsonl"
  step gb-tests tests 200 $T --gtest_filter='GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuPartitionGroupby.*:GpuGroupbyRegistry.*:GpuDictionaryGroupby.*'
  step conf-gb tests 200 /tmp/b/joinery_conformance_tests --gtest_filter='*GroupbyConformance*gpu*'
fi
