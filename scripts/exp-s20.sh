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
if [ "${PART:-1}" = 3 ]; then  # where the staged kernel waits: ncu at 8 bits, 4+4 B, 2^26 tuples
  step tests-hier tests 300 $T --gtest_filter='*PartitionAlgorithms*hierarchical*:Partition.Hierarchical*:-*BeyondTwoToThe31Rows*'
  for a in hierarchical swwc; do
    step "ncu-$a" ncu 200 ncu --clock-control none --kernel-name regex:swwc_partition_kernel --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section SourceCounters $J bench primitives --algorithm $a --rows 2^26 --runs 1 --warmup 0
  done
fi
if [ "${PART:-1}" = 4 ]; then  # the map primitive; every primitive at 2^28 and at 2^24 (He et al.'s 16 M)
  step tests-map tests 300 $T --gtest_filter='Map.*:MapRefusals.*:Gather*:Scatter*'
  step memcheck-map sanitizer 200 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='Map.*:-*BeyondTwoToThe31Rows*'
  step racecheck-map sanitizer 200 compute-sanitizer --tool racecheck $T --gtest_filter='Map.*:-*BeyondTwoToThe31Rows*'
  step bench-all bench 300 $J bench primitives --runs 5 --warmup 1 --out "$OUT/prim-all.jsonl"
  step bench-16m bench 200 $J bench primitives --rows 2^24 --runs 5 --warmup 1 --out "$OUT/prim-16m.jsonl"
fi
if [ "${PART:-1}" = 5 ]; then  # every primitive at 2^24 (He et al.'s 16 M); hierarchical's chunk length A/B, alternated
  step bench-16m bench 200 $J bench primitives --rows 2^24 --runs 5 --warmup 1 --out "$OUT/prim-16m.jsonl"
  for i in 1 2; do
    for c in 7 6 8; do
      step "hier-c$c-$i" bench 120 env JOINERY_HSWWC_LOG2C=$c $J bench primitives --algorithm hierarchical --runs 5 --warmup 1 --out "$OUT/hier-c.jsonl"
    done
  done
fi
if [ "${PART:-1}" = 6 ]; then  # hierarchical with 256-row chunks (the new default): chunk and ring A/B; its tests
  step tests-hier tests 300 $T --gtest_filter='*PartitionAlgorithms*hierarchical*:Partition.Hierarchical*:-*BeyondTwoToThe31Rows*'
  for i in 1 2; do
    step "hier-def-$i" bench 120 $J bench primitives --algorithm swwc,hierarchical --runs 5 --warmup 1 --out "$OUT/hier-ab.jsonl"
    for v in JOINERY_HSWWC_LOG2C=9 JOINERY_HSWWC_LOG2C=10 JOINERY_HSWWC_LOG2R=1 JOINERY_HSWWC_LOG2R=4; do
      step "hier-$v-$i" bench 120 env $v $J bench primitives --algorithm hierarchical --runs 5 --warmup 1 --out "$OUT/hier-ab.jsonl"
    done
  done
fi
if [ "${PART:-1}" = 7 ]; then  # the final hierarchical defaults: bench, tests, sanitizers
  step bench-final bench 120 $J bench primitives --algorithm swwc,hierarchical --runs 5 --warmup 1 --out "$OUT/prim-final.jsonl"
  step tests-part tests 400 $T --gtest_filter='*PartitionAlgorithms*:Partition.*:PartitionRefusals.*:Map*:SwwcRowIds.*:-*BeyondTwoToThe31Rows*'
  step memcheck-hier sanitizer 300 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='*PartitionAlgorithms*hierarchical*:Partition.Hierarchical*:-*BeyondTwoToThe31Rows*'
  step racecheck-hier sanitizer 300 compute-sanitizer --tool racecheck $T --gtest_filter='*PartitionAlgorithms*hierarchical*:-*BeyondTwoToThe31Rows*:*SizesAroundTiles*'
fi
if [ "${PART:-1}" = 8 ]; then  # swwc thread/item policies (JOINERY_SWWC_POLICY), alternated; the swwc tests under each
  for i in 1 2; do
    for p in 0 1 2; do
      step "swwc-p$p-$i" bench 120 env JOINERY_SWWC_POLICY=$p $J bench primitives --algorithm swwc --runs 5 --warmup 1 --out "$OUT/swwc-policy.jsonl"
    done
  done
  for p in 1 2; do
    step "tests-p$p" tests 200 env JOINERY_SWWC_POLICY=$p $T --gtest_filter='*PartitionAlgorithms*swwc*:-*BeyondTwoToThe31Rows*'
  done
fi
if [ "${PART:-1}" = 9 ]; then  # swwc policies 0-3 alternated; the swwc tests under policy 3
  for i in 1 2; do
    for p in 0 1 2 3; do
      step "swwc-p$p-$i" bench 120 env JOINERY_SWWC_POLICY=$p $J bench primitives --algorithm swwc --runs 5 --warmup 1 --out "$OUT/swwc-policy.jsonl"
    done
  done
  step "tests-p3" tests 200 env JOINERY_SWWC_POLICY=3 $T --gtest_filter='*PartitionAlgorithms*swwc*:-*BeyondTwoToThe31Rows*'
fi
if [ "${PART:-1}" = 10 ]; then  # swwc's policy chosen per digit width: bench, partition tests, sanitizers
  step bench-swwc bench 120 $J bench primitives --algorithm swwc,stable_cub --runs 5 --warmup 1 --out "$OUT/prim-swwc.jsonl"
  step tests-part tests 400 $T --gtest_filter='*PartitionAlgorithms*:Partition.*:PartitionRefusals.*:SwwcRowIds.*:Split*:-*BeyondTwoToThe31Rows*'
  step beyond-swwc tests 200 $T --gtest_filter='*PartitionAlgorithms.BeyondTwoToThe31Rows/swwc'
  step memcheck-swwc sanitizer 300 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='*PartitionAlgorithms*swwc*:-*BeyondTwoToThe31Rows*'
  step racecheck-swwc sanitizer 300 compute-sanitizer --tool racecheck $T --gtest_filter='*PartitionAlgorithms*swwc*:-*BeyondTwoToThe31Rows*:*SizesAroundTiles*'
fi
if [ "${PART:-1}" = 11 ]; then  # swwc at 9 bits: the one-block policies with their buffer size forced
  for p in 1 3; do
    for b in 3 4 5; do
      step "swwc-p$p-b$b" bench 120 env JOINERY_SWWC_POLICY=$p JOINERY_SWWC_LOG2B=$b $J bench primitives --algorithm swwc --runs 5 --warmup 1 --out "$OUT/swwc-pb.jsonl"
    done
  done
fi
if [ "${PART:-1}" = 12 ]; then  # swwc probes 768x8 and 1024x6 against the chosen policy, alternated; their tests
  for i in 1 2; do
    step "swwc-chosen-$i" bench 120 $J bench primitives --algorithm swwc --runs 5 --warmup 1 --out "$OUT/swwc-probe.jsonl"
    for p in 4 5; do
      step "swwc-p$p-$i" bench 120 env JOINERY_SWWC_POLICY=$p $J bench primitives --algorithm swwc --runs 5 --warmup 1 --out "$OUT/swwc-probe.jsonl"
    done
  done
  for p in 4 5; do
    step "tests-p$p" tests 200 env JOINERY_SWWC_POLICY=$p $T --gtest_filter='*PartitionAlgorithms*swwc*:-*BeyondTwoToThe31Rows*'
  done
fi
if [ "${PART:-1}" = 13 ]; then  # hierarchical under swwc's chosen policies (JOINERY_HSWWC_POLICY=1) against base, alternated
  for i in 1 2; do
    for p in 0 1; do
      step "hier-p$p-$i" bench 120 env JOINERY_HSWWC_POLICY=$p $J bench primitives --algorithm hierarchical --runs 5 --warmup 1 --out "$OUT/hier-policy.jsonl"
    done
  done
  step tests-hp1 tests 300 env JOINERY_HSWWC_POLICY=1 $T --gtest_filter='*PartitionAlgorithms*hierarchical*:Partition.Hierarchical*:-*BeyondTwoToThe31Rows*'
fi
if [ "${PART:-1}" = 14 ]; then  # final: hierarchical with its own policy choice; bench, every partition test, sanitizers
  step bench-final2 bench 120 $J bench primitives --algorithm swwc,hierarchical --runs 5 --warmup 1 --out "$OUT/prim-final2.jsonl"
  step tests-part tests 400 $T --gtest_filter='*PartitionAlgorithms*:Partition.*:PartitionRefusals.*:SwwcRowIds.*:Split*:Map*:-*BeyondTwoToThe31Rows*'
  step memcheck-hier sanitizer 300 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='*PartitionAlgorithms*hierarchical*:Partition.Hierarchical*:-*BeyondTwoToThe31Rows*'
  step racecheck-hier sanitizer 300 compute-sanitizer --tool racecheck $T --gtest_filter='*PartitionAlgorithms*hierarchical*:-*BeyondTwoToThe31Rows*:*SizesAroundTiles*'
  step beyond-hier tests 200 $T --gtest_filter='*PartitionAlgorithms.BeyondTwoToThe31Rows/hierarchical'
fi
if [ "${PART:-1}" = 15 ]; then  # after the review: the commit's release fence, knob caps; bench, tests, racecheck
  step bench-final3 bench 120 $J bench primitives --algorithm swwc,hierarchical,access --runs 5 --warmup 1 --out "$OUT/prim-final3.jsonl"
  step tests-part tests 400 $T --gtest_filter='*PartitionAlgorithms*hierarchical*:Partition.*:PartitionRefusals.*:-*BeyondTwoToThe31Rows*'
  step racecheck-hier sanitizer 300 compute-sanitizer --tool racecheck $T --gtest_filter='*PartitionAlgorithms*hierarchical*:-*BeyondTwoToThe31Rows*:*SizesAroundTiles*'
fi
if [ "${PART:-1}" = 16 ]; then  # the unaligned-output test of hierarchical, and the row-id tests; memcheck of the new test
  step tests-rowids tests 200 $T --gtest_filter='SwwcRowIds.*'
  step memcheck-unaligned sanitizer 200 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='SwwcRowIds.HierarchicalWithUnalignedOutputs'
  step memcheck-hier sanitizer 300 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='*PartitionAlgorithms*hierarchical*:Partition.Hierarchical*:-*BeyondTwoToThe31Rows*'
fi
if [ "${PART:-1}" = 17 ]; then  # after the chunk-state refactor (decide / load_state): tests, racecheck, bench
  step tests-part tests 400 $T --gtest_filter='*PartitionAlgorithms*hierarchical*:Partition.*:SwwcRowIds.*:-*BeyondTwoToThe31Rows*'
  step racecheck-hier sanitizer 300 compute-sanitizer --tool racecheck $T --gtest_filter='*PartitionAlgorithms*hierarchical*:-*BeyondTwoToThe31Rows*:*SizesAroundTiles*'
  step bench-hier bench 120 $J bench primitives --algorithm hierarchical --runs 5 --warmup 1 --out "$OUT/prim-refactor.jsonl"
fi
