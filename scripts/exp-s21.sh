#!/usr/bin/env bash
# Session 21 device runs (issue 4: swwc digit split, buffers past 32 tuples); logs in $OUT.
# PART=1: swwc tests under the split / long-buffer knobs; bench sweep of JOINERY_SWWC_SPLIT x
# JOINERY_SWWC_LOG2B x JOINERY_SWWC_POLICY (JOINERY_SWWC_SPLIT exists only on branch
# wip/swwc-digit-split; PART 1-3 ran binaries built from it).
set -u
source "$(dirname "$0")/exp-lib.sh" "${BINS:-build/bins21.tar.xz}"
J=/tmp/b/joinery
T=/tmp/b/joinery_gpu_tests
sw() {  # sw TAG ENV... : bench primitives swwc under the settings
  local tag=$1; shift
  step "sw-$tag" bench 120 env "$@" $J bench primitives --algorithm swwc --runs 5 --warmup 1 --out "$OUT/sw.jsonl"
}
if [ "${PART:-1}" = 1 ]; then
  F='*PartitionAlgorithms*swwc*:-*BeyondTwoToThe31Rows*'
  step tests-s1b7 tests 200 env JOINERY_SWWC_SPLIT=1 JOINERY_SWWC_LOG2B=7 JOINERY_SWWC_POLICY=1 $T --gtest_filter="$F"
  step tests-s2b6 tests 200 env JOINERY_SWWC_SPLIT=2 JOINERY_SWWC_LOG2B=6 $T --gtest_filter="$F"
  sw def X=0
  for p in 0 1 3; do
    for b in 5 6 7; do sw "s1-b$b-p$p" JOINERY_SWWC_SPLIT=1 JOINERY_SWWC_LOG2B=$b JOINERY_SWWC_POLICY=$p; done
  done
  for p in 0 1; do
    for b in 6 7; do sw "s2-b$b-p$p" JOINERY_SWWC_SPLIT=2 JOINERY_SWWC_LOG2B=$b JOINERY_SWWC_POLICY=$p; done
  done
  sw def2 X=0
fi
if [ "${PART:-1}" = 2 ]; then  # no split, buffers of 64 tuples (one block an SM) at 8 bits
  sw def X=0
  for p in 0 1 3; do sw "s0-b6-p$p" JOINERY_SWWC_LOG2B=6 JOINERY_SWWC_POLICY=$p; done
  for p in 1 3; do sw "s0-b5-p$p" JOINERY_SWWC_LOG2B=5 JOINERY_SWWC_POLICY=$p; done
  sw def2 X=0
fi
if [ "${PART:-1}" = 3 ]; then  # 64-tuple buffers under the one-block shapes, alternated with the default
  for i in 1 2; do
    sw "def-$i" X=0
    sw "s0-b6-p3-$i" JOINERY_SWWC_LOG2B=6 JOINERY_SWWC_POLICY=3
    sw "s0-b6-p2-$i" JOINERY_SWWC_LOG2B=6 JOINERY_SWWC_POLICY=2
    sw "s0-b5-p3-$i" JOINERY_SWWC_LOG2B=5 JOINERY_SWWC_POLICY=3
  done
fi
if [ "${PART:-1}" = 4 ]; then  # buffers of 48..112 tuples (JOINERY_SWWC_B) under the one-block shapes; tests
  F='*PartitionAlgorithms*swwc*:SwwcRowIds.*:-*BeyondTwoToThe31Rows*'
  step tests-def tests 200 $T --gtest_filter="$F"
  step tests-b96 tests 200 env JOINERY_SWWC_B=96 JOINERY_SWWC_POLICY=3 $T --gtest_filter="$F"
  step tests-b48 tests 200 env JOINERY_SWWC_B=48 JOINERY_SWWC_POLICY=1 $T --gtest_filter="$F"
  for i in 1 2; do
    sw "def-$i" X=0
    sw "p3-$i" JOINERY_SWWC_POLICY=3
    for p in 3 2; do
      for b in 80 96; do sw "b$b-p$p-$i" JOINERY_SWWC_B=$b JOINERY_SWWC_POLICY=$p; done
    done
    for p in 1 3; do sw "b48-p$p-$i" JOINERY_SWWC_B=48 JOINERY_SWWC_POLICY=$p; done
  done
fi
if [ "${PART:-1}" = 5 ]; then  # aligned flushes (JOINERY_SWWC_ALIGN): tests, memcheck, A/B
  F='*PartitionAlgorithms*swwc*:SwwcRowIds.*:-*BeyondTwoToThe31Rows*'
  step tests-a1 tests 200 env JOINERY_SWWC_ALIGN=1 $T --gtest_filter="$F"
  step tests-a1p3 tests 200 env JOINERY_SWWC_ALIGN=1 JOINERY_SWWC_POLICY=3 $T --gtest_filter="$F"
  step tests-a1b96 tests 200 env JOINERY_SWWC_ALIGN=1 JOINERY_SWWC_B=96 JOINERY_SWWC_POLICY=3 $T --gtest_filter="$F"
  step tests-a1b1 tests 200 env JOINERY_SWWC_ALIGN=1 JOINERY_SWWC_LOG2B=0 $T --gtest_filter="$F"
  for i in 1 2; do
    sw "p3-$i" JOINERY_SWWC_POLICY=3
    sw "p3-a1-$i" JOINERY_SWWC_POLICY=3 JOINERY_SWWC_ALIGN=1
    sw "def-$i" X=0
    sw "def-a1-$i" JOINERY_SWWC_ALIGN=1
  done
  step memcheck-a1 sanitizer 300 env JOINERY_SWWC_ALIGN=1 JOINERY_SWWC_POLICY=3 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter="$F"
fi
if [ "${PART:-1}" = 6 ]; then  # aligned flushes as a template variant: tests, sanitizers, every policy x alignment
  F='*PartitionAlgorithms*swwc*:SwwcRowIds.*:Partition.*:-*BeyondTwoToThe31Rows*'
  step tests-def tests 300 $T --gtest_filter="$F"
  for p in 0 1 2 3; do step "tests-a1p$p" tests 200 env JOINERY_SWWC_ALIGN=1 JOINERY_SWWC_POLICY=$p $T --gtest_filter='*PartitionAlgorithms*swwc*:-*BeyondTwoToThe31Rows*'; done
  step tests-a1b96 tests 200 env JOINERY_SWWC_ALIGN=1 JOINERY_SWWC_B=96 JOINERY_SWWC_POLICY=3 $T --gtest_filter='*PartitionAlgorithms*swwc*:-*BeyondTwoToThe31Rows*'
  step tests-a1b1 tests 200 env JOINERY_SWWC_ALIGN=1 JOINERY_SWWC_LOG2B=0 $T --gtest_filter='*PartitionAlgorithms*swwc*:-*BeyondTwoToThe31Rows*'
  for i in 1 2; do
    sw "def-$i" X=0
    for p in 0 1 2 3; do
      for a in 0 1; do sw "p$p-a$a-$i" JOINERY_SWWC_POLICY=$p JOINERY_SWWC_ALIGN=$a; done
    done
  done
  step memcheck sanitizer 300 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='*PartitionAlgorithms*swwc*:-*BeyondTwoToThe31Rows*'
  step racecheck sanitizer 300 compute-sanitizer --tool racecheck $T --gtest_filter='*PartitionAlgorithms*swwc*:-*BeyondTwoToThe31Rows*:*SizesAroundTiles*'
  step beyond tests 200 $T --gtest_filter='*PartitionAlgorithms.BeyondTwoToThe31Rows/swwc'
fi
if [ "${PART:-1}" = 7 ]; then  # the new rule (swwc_variant_for / swwc_aligned_for): tests, sanitizers, bench; 9-bit probes
  F='*PartitionAlgorithms*:SwwcRowIds.*:Partition.*:PartitionRefusals.*:-*BeyondTwoToThe31Rows*'
  step tests-part tests 400 $T --gtest_filter="$F"
  step memcheck sanitizer 300 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='*PartitionAlgorithms*swwc*:-*BeyondTwoToThe31Rows*'
  step racecheck sanitizer 300 compute-sanitizer --tool racecheck $T --gtest_filter='*PartitionAlgorithms*swwc*:-*BeyondTwoToThe31Rows*:*SizesAroundTiles*'
  for i in 1 2; do
    step "bench-all-$i" bench 200 $J bench primitives --runs 5 --warmup 1 --out "$OUT/prim-all.jsonl"
    sw "p0-b32-$i" JOINERY_SWWC_POLICY=0 JOINERY_SWWC_LOG2B=5
    sw "p3-b48-$i" JOINERY_SWWC_POLICY=3 JOINERY_SWWC_B=48
    sw "p1-b48-$i" JOINERY_SWWC_POLICY=1 JOINERY_SWWC_B=48
    sw "p0-b48-$i" JOINERY_SWWC_POLICY=0 JOINERY_SWWC_B=48
  done
fi
if [ "${PART:-1}" = 8 ]; then  # the every-policy test; 9-bit probes with 24-tuple buffers (two blocks an SM)
  step tests-policies tests 400 $T --gtest_filter='Partition.SwwcUnder*:*PartitionAlgorithms*swwc*:-*BeyondTwoToThe31Rows*'
  for i in 1 2; do
    sw "def-$i" X=0
    sw "p0-b24-a1-$i" JOINERY_SWWC_POLICY=0 JOINERY_SWWC_B=24 JOINERY_SWWC_ALIGN=1
    sw "p0-b24-a0-$i" JOINERY_SWWC_POLICY=0 JOINERY_SWWC_B=24 JOINERY_SWWC_ALIGN=0
    sw "p0-b16-a1-$i" JOINERY_SWWC_POLICY=0 JOINERY_SWWC_LOG2B=4 JOINERY_SWWC_ALIGN=1
    sw "p3-b96-a1-$i" JOINERY_SWWC_POLICY=3 JOINERY_SWWC_B=96 JOINERY_SWWC_ALIGN=1
  done
  step memcheck sanitizer 300 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='Partition.SwwcUnder*'
fi
if [ "${PART:-1}" = 9 ]; then  # A/B of two binaries (the wrap row re-read vs kept in registers): $BINS2 unpacked to /tmp/b2
  mkdir -p /tmp/b2 && tar xJf "$BINS2" -C /tmp/b2
  step tests-policies tests 400 $T --gtest_filter='Partition.SwwcUnder*:*PartitionAlgorithms*swwc*:-*BeyondTwoToThe31Rows*'
  for i in 1 2 3; do
    step "new-$i" bench 120 $J bench primitives --algorithm swwc --runs 5 --warmup 1 --out "$OUT/sw.jsonl"
    step "old-$i" bench 120 /tmp/b2/joinery bench primitives --algorithm swwc --runs 5 --warmup 1 --out "$OUT/sw-old.jsonl"
  done
fi
if [ "${PART:-1}" = 10 ]; then  # final code: partition tests, sanitizers, > 2^31 rows, bench primitives twice
  step tests-part tests 400 $T --gtest_filter='*PartitionAlgorithms*:SwwcRowIds.*:Partition.*:PartitionRefusals.*:-*BeyondTwoToThe31Rows*'
  step memcheck sanitizer 300 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='*PartitionAlgorithms*swwc*:Partition.SwwcUnder*:-*BeyondTwoToThe31Rows*'
  step racecheck sanitizer 400 compute-sanitizer --tool racecheck $T --gtest_filter='*PartitionAlgorithms*swwc*:-*BeyondTwoToThe31Rows*:*SizesAroundTiles*'
  step beyond tests 200 $T --gtest_filter='*PartitionAlgorithms.BeyondTwoToThe31Rows/swwc'
  for i in 1 2; do
    step "bench-all-$i" bench 200 $J bench primitives --runs 5 --warmup 1 --out "$OUT/prim-all.jsonl"
  done
fi
if [ "${PART:-1}" = 11 ]; then  # the wrap test (and the every-policy test) with memcheck
  step tests-wrap tests 300 $T --gtest_filter='Partition.SwwcAligned*:Partition.SwwcUnder*'
  step memcheck-wrap sanitizer 300 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='Partition.SwwcAligned*'
  step racecheck-wrap sanitizer 300 compute-sanitizer --tool racecheck $T --gtest_filter='Partition.SwwcAligned*'
fi
