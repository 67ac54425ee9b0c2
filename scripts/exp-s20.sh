#!/usr/bin/env bash
# Session 20 device runs (issue 4, the Hierarchical partition); logs in $OUT.
# PART=1: the partition tests of hierarchical (and swwc's, unchanged code path), bench primitives
# swwc against hierarchical, A/B of the chunk length and ring size (JOINERY_HSWWC_LOG2C / _LOG2R),
# PART=2: memcheck and racecheck over the hierarchical tests, the > 2^31-row test.
set -u
source "$(dirname "$0")/exp-lib.sh" "${BINS:-build/bins20.tar.xz}"
J=/tmp/b/joinery
T=/tmp/b/joinery_gpu_tests
if [ "${PART:-1}" = 1 ]; then
  step tests-hier tests 300 $T --gtest_filter='*PartitionAlgorithms*hierarchical*:Partition.Hierarchical*:PartitionRefusals.*:*PartitionAlgorithms*swwc*:-*BeyondTwoToThe31Rows*'
  step bench-hier bench 200 $J bench primitives --algorithm swwc,hierarchical --runs 5 --warmup 1 --out "$OUT/prim.jsonl"
  for c in 6 8; do
    step "bench-c$c" bench 120 env JOINERY_HSWWC_LOG2C=$c $J bench primitives --algorithm hierarchical --runs 5 --warmup 1 --out "$OUT/prim-c$c.jsonl"
  done
  step bench-r1 bench 120 env JOINERY_HSWWC_LOG2R=1 $J bench primitives --algorithm hierarchical --runs 5 --warmup 1 --out "$OUT/prim-r1.jsonl"
fi
if [ "${PART:-1}" = 2 ]; then
  step memcheck-hier sanitizer 300 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='*PartitionAlgorithms*hierarchical*:Partition.Hierarchical*:-*BeyondTwoToThe31Rows*'
  step racecheck-hier sanitizer 300 compute-sanitizer --tool racecheck $T --gtest_filter='*PartitionAlgorithms*hierarchical*:-*BeyondTwoToThe31Rows*:*SizesAroundTiles*'
  step beyond tests 200 $T --gtest_filter='*PartitionAlgorithms.BeyondTwoToThe31Rows/hierarchical'
fi
