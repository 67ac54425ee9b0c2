#!/usr/bin/env bash
# Session 26 device run: radix_partition_tuples (chunked write-combining into interleaved tuples).
#   PART=1: its tests, memcheck and racecheck over them, the other partition tests;
#   PART=2: bench primitives, swwc and tuples at 8..11 bits, uniform and Zipf 1.5, two rounds.
# (The last test call, after the review, ran the tuple tests, memcheck over the several-tile,
# unaligned and skew tests and racecheck over the first two; see BENCHMARKS.md.)
# Binaries from a tarball ($1) unpacked by exp-lib.sh into /tmp/b; logs under $OUT.
set -u
. "$(dirname "$0")/exp-lib.sh"
J=/tmp/b/joinery
T=/tmp/b/joinery_gpu_tests
case "${PART:-1}" in
1)
  step tuples tests 300 $T --gtest_filter='PartitionTuples*'
  step memcheck sanitizer 300 compute-sanitizer --tool memcheck $T --gtest_filter='PartitionTuples*:-*BeyondTwoToThe31Rows'
  step racecheck sanitizer 240 compute-sanitizer --tool racecheck $T --gtest_filter='PartitionTuples.SizesAroundTilesAndBlocks:PartitionTuples.ColumnsOffSixteenByteBoundaries'
  step racecheck-skew sanitizer 300 compute-sanitizer --tool racecheck $T --gtest_filter='PartitionTuples.SignedKeysAndSkew'

  ;;
2)
  for round in 1 2; do
    step "bench-$round" bench 200 $J bench primitives --algorithm swwc,tuples --bits 8,9,10,11 --runs 5 --warmup 1 --out "$OUT/primitives-tuples-s26.jsonl"
    step "zipf-$round" bench 200 $J bench primitives --algorithm swwc,tuples --bits 8,9,11 --zipf 1.5 --runs 5 --warmup 1 --out "$OUT/primitives-tuples-zipf-s26.jsonl"
  done
  ;;
esac
cat "$S"
