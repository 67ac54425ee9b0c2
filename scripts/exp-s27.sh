#!/usr/bin/env bash
# Session 27 device runs; logs in $OUT.
#   BINS=build/bins27a.tar.xz PART=1 bash scripts/exp-s27.sh
# PART=1 (joinery_gpu_tests): the wrapped sums' test, the other group-by tests.
# PART=5 (joinery_gpu_tests): memcheck and racecheck over the wrapped sums' test.
# PART=2 (joinery): hash at g <= 2^16 with the wrapped sums on and off (JOINERY_DENSE_WSUM=0),
# alternated twice, int32 and int64 keys.
# PART=3 (joinery): issue 7's targets at g <= 2^16: hash, PGB-TR and automatic, int32 and int64
# keys (the points past 2^16 and the sorts do not run the wrapped sums).
# PART=4 (joinery_conformance_tests): the suite's GPU group-bys.
# (A PART=6 timed a temporary build with JOINERY_WSUM_VARIANT choosing among eight forms of the
# kernel; its log is bench/results/nvidia-h200/gb-s27-variants.log.)
set -u
source "$(dirname "$0")/exp-lib.sh" "${BINS:-build/bins27a.tar.xz}"
J=/tmp/b/joinery
T=/tmp/b/joinery_gpu_tests
WSUM_TEST='GpuHashGroupby.DenseTierWrappedSums'
case ",${PART:-1}," in *,1,*)
  step wsum-test tests 150 $T --gtest_filter="$WSUM_TEST"
  step gb-tests tests 200 $T --gtest_filter="GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuPartitionGroupby.*:GpuGroupbyRegistry.*:GpuDictionaryGroupby.*:Lo32Sum.*:-$WSUM_TEST"
  ;;
esac
case ",${PART:-1}," in *,5,*)
  step memcheck-wsum sanitizer 300 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter="$WSUM_TEST"
  step racecheck-wsum sanitizer 400 compute-sanitizer --tool racecheck $T --gtest_filter="$WSUM_TEST"
  ;;
esac
case ",${PART:-1}," in *,2,*)
  for i in 1 2; do
    for w in 1 0; do
      step "ab-w$w-$i" bench 120 env JOINERY_DENSE_WSUM=$w $J bench gpu-groupby --algorithm hash --groups 2^16 --runs 3 --warmup 1 --out "$OUT/gb-s27-wsum$w-int32.jsonl"
      step "ab64-w$w-$i" bench 120 env JOINERY_DENSE_WSUM=$w $J bench gpu-groupby --algorithm hash --key-type int64 --groups 2^16 --runs 3 --warmup 1 --out "$OUT/gb-s27-wsum$w-int64.jsonl"
    done
  done
  ;;
esac
case ",${PART:-1}," in *,3,*)
  step gb-u32 bench 200 $J bench gpu-groupby --algorithm hash,partition_transformed,automatic --groups 2^16 --runs 5 --warmup 1 --out "$OUT/gb-s27-uniform-int32.jsonl"
  step gb-u64 bench 200 $J bench gpu-groupby --algorithm hash,partition_transformed,automatic --key-type int64 --groups 2^16 --runs 5 --warmup 1 --out "$OUT/gb-s27-uniform-int64.jsonl"
  ;;
esac
case ",${PART:-1}," in *,4,*)
  step conf-gb tests 120 /tmp/b/joinery_conformance_tests --gtest_filter='*GroupbyConformance*gpu*'
  ;;
esac
cat "$S"
