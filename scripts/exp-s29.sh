#!/usr/bin/env bash
# Session 29 device runs; logs in $OUT.
#   BINS=build/bins29a.tar.xz OLD_BINS=build/bins29old.tar.xz PART=2,3,4,7 bash scripts/exp-s29.sh
#   BINS=build/bins29t.tar.xz PART=1,5,6 bash scripts/exp-s29.sh
# Tarballs of session 29 (build/, not in the tree): bins29a / bins29b / bins29c the CLI of
# 96ab05c / f5a4225 / f4e79f4 (calls 1 / 4, 6 / 8, 9), bins29old e3a36ca's as joinery_old,
# bins29t / bins29u the test binaries of f5a4225 / f4e79f4 (calls 3 / 7). Call 2 ran
# build/bin/joinery_exp_api_costs alone, call 5 Nsight Compute at 2^20 and 2^24 rows.
# PART=1 (joinery_gpu_tests): the wrapped sums' and the phases' tests, then every GPU group-by test.
# PART=5 (joinery_gpu_tests): memcheck and racecheck over the wrapped sums' and the phases' tests.
# PART=6 (joinery_conformance_tests): the conformance suite's GPU group-bys.
# PART=2 (joinery, and joinery_old from $OLD_BINS: the build of e3a36ca): hash to g = 2^16, the
# new build against e3a36ca's, alternated twice (int32 keys), once (int64).
# PART=3 (joinery, joinery_old): the fixed costs, 2^20 rows at g = 2^16, alternated twice.
# PART=4 (joinery): issue 7's targets at g <= 2^16: hash, PGB-TR and automatic, int32 and int64.
# PART=7 (joinery): every kernel's duration (Nsight Compute, clocks left alone) in one run at
# g = 2^16, SUM and MAX.
set -u
source "$(dirname "$0")/exp-lib.sh" "${BINS:-build/bins29a.tar.xz}"
J=/tmp/b/joinery
T=/tmp/b/joinery_gpu_tests
NEW_TESTS='GpuHashGroupby.DenseTierWrappedSums*:GpuGroupbyPhases.*'
case ",${PART:-1}," in *,1,*)
  step new-tests tests 200 $T --gtest_filter="$NEW_TESTS"
  step gb-tests tests 300 $T --gtest_filter="GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuPartitionGroupby.*:GpuGroupbyRegistry.*:GpuDictionaryGroupby.*:Lo32Sum.*:GpuGroupbyPhases.*"
  ;;
esac
case ",${PART:-1}," in *,5,*)
  step memcheck-new sanitizer 300 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter="$NEW_TESTS"
  step racecheck-new sanitizer 300 compute-sanitizer --tool racecheck $T --gtest_filter="$NEW_TESTS"
  ;;
esac
case ",${PART:-1}," in *,6,*)
  step conf-gb tests 200 /tmp/b/joinery_conformance_tests --gtest_filter='*GroupbyConformance*gpu*'
  ;;
esac
case ",${PART:-1},${PART:-1}," in *,2,*|*,3,*)
  tar xJf "${OLD_BINS:-build/bins29old.tar.xz}" -C /tmp/b
  ;;
esac
case ",${PART:-1}," in *,2,*)
  for i in 1 2; do
    step "old-$i" bench 120 /tmp/b/joinery_old bench gpu-groupby --algorithm hash --groups 2^16 --runs 3 --warmup 1 --out "/tmp/gb-s29-old-int32.jsonl"
    step "new-$i" bench 120 $J bench gpu-groupby --algorithm hash --groups 2^16 --runs 3 --warmup 1 --out "/tmp/gb-s29-new-int32.jsonl"
  done
  step "old64" bench 120 /tmp/b/joinery_old bench gpu-groupby --algorithm hash --key-type int64 --groups 2^16 --runs 3 --warmup 1 --out "/tmp/gb-s29-old-int64.jsonl"
  step "new64" bench 120 $J bench gpu-groupby --algorithm hash --key-type int64 --groups 2^16 --runs 3 --warmup 1 --out "/tmp/gb-s29-new-int64.jsonl"
  ;;
esac
case ",${PART:-1}," in *,3,*)
  for i in 1 2; do
    step "old-small-$i" bench 100 /tmp/b/joinery_old bench gpu-groupby --algorithm hash --rows 2^20 --groups 2^16 --runs 9 --warmup 2 --out "/tmp/gb-s29-old-small.jsonl"
    step "new-small-$i" bench 100 $J bench gpu-groupby --algorithm hash --rows 2^20 --groups 2^16 --runs 9 --warmup 2 --out "/tmp/gb-s29-new-small.jsonl"
  done
  ;;
esac
case ",${PART:-1},${PART:-1}," in *,2,*|*,3,*)
  for f in /tmp/gb-s29-old*.jsonl /tmp/gb-s29-new*.jsonl; do
    [ -f "$f" ] && sed "s|^|$(basename $f .jsonl) |" "$f"
  done > "$OUT/gb-s29-ab.txt"
  ;;
esac
case ",${PART:-1}," in *,4,*)
  step gb-u32 bench 200 $J bench gpu-groupby --algorithm hash,partition_transformed,automatic --groups 2^16 --runs 5 --warmup 1 --out "$OUT/gb-s29-uniform-int32.jsonl"
  step gb-u64 bench 200 $J bench gpu-groupby --algorithm hash,partition_transformed,automatic --key-type int64 --groups 2^16 --runs 5 --warmup 1 --out "$OUT/gb-s29-uniform-int64.jsonl"
  ;;
esac
case ",${PART:-1}," in *,7,*)
  step ncu-kernels ncu 200 ncu --clock-control none --metrics gpu__time_duration.sum $J bench gpu-groupby --algorithm hash --groups 2^16 --rows 2^28 --runs 1 --warmup 0 --out /tmp/ncu-all.jsonl
  ;;
esac
cat "$S"
