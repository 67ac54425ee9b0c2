#!/usr/bin/env bash
# Session 23 device runs; logs in $OUT.
#   BINS=build/bins23.tar.xz PART=1 bash scripts/exp-s23.sh
# PART=1: session 22's Lo32Sum tests (changed after their last GPU run), the GPU group-by tests,
# memcheck / racecheck over Lo32Sum, memcheck over the dense tier; the counted-sum probe with 8-bit
# counters (joinery_exp_multicast, SUMB8, issue 7); ncu of swwc at 7 and 8 bits (issue 4).
set -u
source "$(dirname "$0")/exp-lib.sh" "${BINS:-build/bins23.tar.xz}"
J=/tmp/b/joinery
T=/tmp/b/joinery_gpu_tests
# gpu-groupby (hash, to 2^16, both key widths) of $J and /tmp/b/joinery_old, alternated twice;
# `gb_ab swwc` also runs bench primitives swwc at 8-11 bits before each binary's group-bys.
gb_ab() {
  for i in 1 2; do
    for b in old new; do
      bin=$J; [ $b = old ] && bin=/tmp/b/joinery_old
      if [ "${1:-}" = swwc ]; then
        step "sw-$b-$i" bench 150 $bin bench primitives --algorithm swwc --bits 8,9,10,11 --runs 5 --warmup 1 --out "$OUT/sw-$b.jsonl"
      fi
      for kt in int32 int64; do
        step "gb-$b-$kt-$i" bench 150 $bin bench gpu-groupby --algorithm hash --groups 2^16 --runs 3 --warmup 1 --key-type $kt --out "$OUT/gb-$b.jsonl"
      done
    done
  done
}
if [ "${PART:-1}" = 1 ]; then
  step lo32 tests 120 $T --gtest_filter='Lo32Sum.*'
  step probe probe 240 /tmp/b/joinery_exp_multicast
  step gb-tests tests 200 $T --gtest_filter='GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuPartitionGroupby.*:GpuGroupbyRegistry.*:GpuDictionaryGroupby.*'
  step memcheck-lo32 sanitizer 60 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='Lo32Sum.*'
  step racecheck-lo32 sanitizer 90 compute-sanitizer --tool racecheck $T --gtest_filter='Lo32Sum.*'
  step memcheck-dense sanitizer 120 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='GpuHashGroupby.DenseTier*'
  for bits in 7 8; do
    step "ncu-swwc-$bits" ncu 150 env JOINERY_SWWC_ALIGN=$([ $bits = 7 ] && echo 1 || echo 0) ncu --clock-control none --kernel-name regex:swwc_partition_kernel --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section InstructionStats --section SourceCounters $J bench primitives --algorithm swwc --bits $bits --rows 2^26 --runs 1 --warmup 0
  done
fi

# PART=2: where the time goes: ncu stall reasons of the dense tier's kernel (g = 2^16, MAX and
# SUM, int32 and int64 keys, 2^26 rows) and of swwc's 8-bit pass.
if [ "${PART:-1}" = 2 ]; then
  M='--metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,smsp__cycles_active.avg,gpu__time_duration.sum,launch__grid_size,smsp__issue_active.avg.pct_of_peak_sustained_active'
  for kt in int32 int64; do
    step "ncu-dense-$kt" ncu 200 ncu --clock-control none --kernel-name regex:hgb_dense_kernel --launch-count 40 $M $J bench gpu-groupby --algorithm hash --groups 2^16 --rows 2^26 --runs 1 --warmup 0 --key-type $kt
  done
  for kt in int32 int64; do
    step "gb-base-$kt" bench 150 $J bench gpu-groupby --algorithm hash --groups 2^16 --runs 3 --warmup 1 --key-type $kt --out "$OUT/gb-base.jsonl"
  done
  step ncu-swwc-8 ncu 120 ncu --clock-control none --kernel-name regex:swwc_partition_kernel --launch-count 1 $M $J bench primitives --algorithm swwc --bits 8 --rows 2^26 --runs 1 --warmup 0
fi
# PART=3: the dense tier's narrow loads into 32-bit registers (BINS=build/bins23c.tar.xz: joinery
# new, joinery_old built at a9b627f; the tests run where joinery_gpu_tests is in the tarball): the group-by tests, memcheck over the
# dense tier, old and new alternated at g <= 2^16 for both key widths, ncu instruction counts.
if [ "${PART:-1}" = 3 ]; then
  if [ -x $T ]; then
    step gb-tests tests 200 $T --gtest_filter='GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuPartitionGroupby.*:GpuGroupbyRegistry.*:GpuDictionaryGroupby.*:Lo32Sum.*'
  fi
  gb_ab
  M='--metrics smsp__inst_executed.sum,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active'
  step ncu-dense ncu 120 ncu --clock-control none --kernel-name regex:hgb_dense_kernel --launch-skip 16 --launch-count 2 $M $J bench gpu-groupby --algorithm hash --groups 2^16 --rows 2^26 --runs 1 --warmup 0
  [ -x $T ] && step memcheck-dense sanitizer 120 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='GpuHashGroupby.DenseTier*'
fi
# PART=4: the tests of the change of PART 3 (BINS=build/bins23d.tar.xz: joinery_gpu_tests and
# joinery_conformance_tests): the GPU group-by and Lo32Sum tests, the conformance suite's GPU
# group-bys, memcheck over the dense tier and the skewed / distinct / hot conformance cases,
# racecheck over the dense tier.
if [ "${PART:-1}" = 4 ]; then
  step gb-tests tests 200 $T --gtest_filter='GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuPartitionGroupby.*:GpuGroupbyRegistry.*:GpuDictionaryGroupby.*:Lo32Sum.*'
  step conf-gb tests 240 /tmp/b/joinery_conformance_tests --gtest_filter='*GroupbyConformance*gpu*'
  step memcheck-dense sanitizer 120 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='GpuHashGroupby.DenseTier*'
  step memcheck-conf sanitizer 240 compute-sanitizer --tool memcheck --report-api-errors no /tmp/b/joinery_conformance_tests --gtest_filter='*GroupbyConformance*gpu*zipf*:*GroupbyConformance*gpu*distinct*:*GroupbyConformance*gpu*hot*'
  step racecheck-dense sanitizer 240 compute-sanitizer --tool racecheck $T --gtest_filter='GpuHashGroupby.DenseTier*'
fi
# PART=5: per-instruction counts and stall samples (ncu source page, SASS) of swwc's 8-bit pass and
# of the dense tier's team kernel at g = 2^16 (int32 keys, SUM), 2^26 rows (BINS=build/bins23c.tar.xz).
if [ "${PART:-1}" = 5 ]; then
  S2='--section SourceCounters --section WarpStateStats --import-source no'
  step ncu-swwc-src ncu 150 ncu --clock-control none $S2 --kernel-name regex:swwc_partition_kernel --launch-count 1 -o /tmp/swwc $J bench primitives --algorithm swwc --bits 8 --rows 2^26 --runs 1 --warmup 0
  step ncu-swwc-csv ncu 120 sh -c "ncu -i /tmp/swwc.ncu-rep --page source --csv --print-source sass | gzip > $OUT/swwc-src.csv.gz"
  step ncu-dense-src ncu 150 ncu --clock-control none $S2 --kernel-name regex:hgb_dense_kernel --launch-skip 17 --launch-count 1 -o /tmp/dense $J bench gpu-groupby --algorithm hash --groups 2^16 --rows 2^26 --runs 1 --warmup 0
  step ncu-dense-csv ncu 120 sh -c "ncu -i /tmp/dense.ncu-rep --page source --csv --print-source sass | gzip > $OUT/dense-src.csv.gz"
fi
# PART=6 (BINS=build/bins23e.tar.xz: joinery new, joinery_old built at a9b627f): swwc's flush
# copy with its addresses once a buffer, and the dense tier's sum_lo32 loop on 32-bit shared
# addresses (dropped after this run: bench/experiments/dense-lo32-shared-addresses.patch), old and
# new alternated: bench primitives swwc at 8-11 bits, gpu-groupby to 2^16.
if [ "${PART:-1}" = 6 ]; then
  gb_ab swwc
fi
# PART=7 (BINS=build/bins23f.tar.xz: joinery_gpu_tests, joinery_conformance_tests): the tests of
# PART 6's swwc change: swwc and Hierarchical (every policy, aligned runs that wrap, row ids,
# 2^31+ rows), the radix joins that use swwc, the conformance suite's GPU joins and group-bys;
# memcheck and racecheck over swwc. (The dense tier's change of PART 6 was dropped: it cost MAX
# at 2^16 4-10%; bench/experiments/dense-lo32-shared-addresses.patch.)
if [ "${PART:-1}" = 7 ]; then
  F='*PartitionAlgorithms*swwc*:*PartitionAlgorithms*hierarchical*:Partition.Swwc*:Partition.Hierarchical*:SwwcRowIds.*:GpuJoin.RadixJoinPartitionedBySwwcThenCub:GpuJoin.ManyPartitions*'
  step sw-tests tests 300 $T --gtest_filter="$F"
  step conf tests 300 /tmp/b/joinery_conformance_tests --gtest_filter='*gpu*'
  step memcheck-sw sanitizer 200 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='*PartitionAlgorithms*swwc*:Partition.Swwc*:SwwcRowIds.*:-*BeyondTwoToThe31Rows*'
  step racecheck-sw sanitizer 200 compute-sanitizer --tool racecheck $T --gtest_filter='*PartitionAlgorithms*swwc*:Partition.Swwc*:-*BeyondTwoToThe31Rows*'
fi
# PART=8 (BINS=build/bins23e.tar.xz): the radix join, which partitions with swwc (row ids), old and
# new alternated.
if [ "${PART:-1}" = 8 ]; then
  for b in old new old new; do
    bin=$J; [ $b = old ] && bin=/tmp/b/joinery_old
    step "join-$b" bench 60 $bin bench join --backend gpu --algorithm radix_hash --build-rows 2^27 --probe-rows 2^28 --payloads 0 --output-form index --index-type int32 --runs 5 --warmup 1 --out "$OUT/join-$b.jsonl"
  done
fi
# PART=9 (prepared for the next session, not run): bench/experiments/dense-lo32-own-kernel.patch
# (the dense tier's SUM-of-int32 batches in a kernel of their own, hgb_dense_kernel<..., Lo32Only>)
# applied and built into joinery and joinery_gpu_tests, joinery_old from main without it: the
# group-by tests (where joinery_gpu_tests is in BINS), then old and new alternated to 2^16. The
# three do not fit one carry with the tracked files (64 MiB): two calls, two tarballs.
if [ "${PART:-1}" = 9 ]; then
  [ -x $T ] && step gb-tests tests 200 $T --gtest_filter='GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuPartitionGroupby.*:Lo32Sum.*'
  [ -x $J ] && gb_ab
fi
cat "$S"
