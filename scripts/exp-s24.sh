#!/usr/bin/env bash
# Session 24 device runs; logs in $OUT.
#   BINS=build/bins24a.tar.xz PART=1 bash scripts/exp-s24.sh
# PART=1 (joinery, joinery_gpu_tests): the dense tier's SUM-of-int32 batches in a kernel of their
# own (hgb_dense_kernel's Lo32Only, predicated rows): its group-by tests, then the kernel on and off
# (JOINERY_DENSE_LO32_KERNEL=0) alternated twice in gpu-groupby to 2^16, both key widths, and the
# new kernel's instruction counts (ncu, g = 2^16 SUM, int32 keys, 2^26 rows).
# PART=2 (joinery_gpu_tests, joinery_conformance_tests): the rest of the group-by tests, the
# conformance suite's GPU group-bys, memcheck and racecheck over the dense tier.
set -u
source "$(dirname "$0")/exp-lib.sh" "${BINS:-build/bins24a.tar.xz}"
J=/tmp/b/joinery
T=/tmp/b/joinery_gpu_tests
LO32_TEST='GpuHashGroupby.DenseTierSumsInt32ValuesInThirtyTwoBitPartials'
# gpu-groupby to 2^16, both key widths, with the Lo32Only kernel on and off, alternated twice.
lo32_ab() {
  for i in 1 2; do
    for k in 1 0; do
      for kt in int32 int64; do
        step "gb-k$k-$kt-$i" bench 150 env JOINERY_DENSE_LO32_KERNEL=$k $J bench gpu-groupby --algorithm hash --groups 2^16 --runs 3 --warmup 1 --key-type $kt --out "$OUT/gb-k$k.jsonl"
      done
    done
  done
}
if [ "${PART:-1}" = 1 ]; then
  step lo32-test tests 120 $T --gtest_filter="$LO32_TEST"
  lo32_ab
  M='--metrics smsp__inst_executed.sum,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active'
  step ncu-lo32 ncu 120 ncu --clock-control none --kernel-name 'regex:hgb_dense_kernel<int, .int.2, .bool.1, .bool.1, .bool.1>' --launch-count 2 $M $J bench gpu-groupby --algorithm hash --groups 2^16 --rows 2^26 --runs 1 --warmup 0
  step memcheck-lo32 sanitizer 150 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter="$LO32_TEST"
fi
if [ "${PART:-1}" = 2 ]; then
  step gb-tests tests 240 $T --gtest_filter="GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuPartitionGroupby.*:GpuGroupbyRegistry.*:GpuDictionaryGroupby.*:Lo32Sum.*:-$LO32_TEST"
  step conf-gb tests 240 /tmp/b/joinery_conformance_tests --gtest_filter='*GroupbyConformance*gpu*'
  step racecheck-lo32 sanitizer 240 compute-sanitizer --tool racecheck $T --gtest_filter="$LO32_TEST"
fi
# PART=3 (BINS=build/bins24a.tar.xz): per-instruction counts and stall samples (ncu source page)
# of the Lo32Only team kernel and of the narrow kernel it replaces (JOINERY_DENSE_LO32_KERNEL=0),
# g = 2^16 SUM, int32 keys, 2^26 rows.
if [ "${PART:-1}" = 3 ]; then
  S2='--section SourceCounters --section WarpStateStats --section LaunchStats --import-source no --kernel-name-base mangled'
  for k in 1 0; do
    step "ncu-src-k$k" ncu 150 env JOINERY_DENSE_LO32_KERNEL=$k ncu --clock-control none $S2 --kernel-name "regex:hgb_dense_kernelI[ij]Li2ELb1ELb1ELb${k}E" --launch-skip $((1 - k)) --launch-count 1 -o /tmp/dense$k $J bench gpu-groupby --algorithm hash --groups 2^16 --rows 2^26 --runs 1 --warmup 0
    step "ncu-csv-k$k" ncu 120 sh -c "ncu -i /tmp/dense$k.ncu-rep --page source --csv --print-source sass | gzip > $OUT/dense-src-k$k.csv.gz"
    step "ncu-det-k$k" ncu 60 sh -c "ncu -i /tmp/dense$k.ncu-rep --page details > $OUT/dense-details-k$k.txt"
  done
fi
# PART=4 (BINS=build/bins24a.tar.xz, with the L2 prefetch of the next tile pair and the flag
# compared after the tile; both dropped after this run, JOINERY_DENSE_PREFETCH is gone): the Lo32 test, then three settings alternated twice in gpu-groupby to
# 2^16, both key widths: own kernel with and without the prefetch, and neither; ncu of the new
# kernel as in PART 3.
if [ "${PART:-1}" = 4 ]; then
  step lo32-test tests 120 $T --gtest_filter="$LO32_TEST"
  for i in 1 2; do
    for cfg in k1p1 k1p0 k0p0; do
      k=${cfg:1:1}; p=${cfg:3:1}
      for kt in int32 int64; do
        step "gb-$cfg-$kt-$i" bench 150 env JOINERY_DENSE_LO32_KERNEL=$k JOINERY_DENSE_PREFETCH=$p $J bench gpu-groupby --algorithm hash --groups 2^16 --runs 3 --warmup 1 --key-type $kt --out "$OUT/gb-$cfg.jsonl"
      done
    done
  done
  S2='--section SourceCounters --section WarpStateStats --import-source no --kernel-name-base mangled'
  step "ncu-src-k1p1" ncu 150 ncu --clock-control none $S2 --kernel-name "regex:hgb_dense_kernelI[ij]Li2ELb1ELb1ELb1E" --launch-count 1 -o /tmp/dense $J bench gpu-groupby --algorithm hash --groups 2^16 --rows 2^26 --runs 1 --warmup 0
  step "ncu-csv-k1p1" ncu 120 sh -c "ncu -i /tmp/dense.ncu-rep --page source --csv --print-source sass | gzip > $OUT/dense-src-k1p1.csv.gz"
fi
# PART=5 (BINS=build/bins24a.tar.xz): the Lo32Only kernel's pipelined tiles (dense_lo32_tiles,
# dropped after this run: bench/experiments/dense-lo32-pipelined-tiles.patch against ff328e5):
# the Lo32 test and memcheck over it, the kernel on and off alternated twice in gpu-groupby to
# 2^16, both key widths, and its ncu source page (g = 2^16 SUM, int32 keys, 2^26 rows).
if [ "${PART:-1}" = 5 ]; then
  step lo32-test tests 120 $T --gtest_filter="$LO32_TEST"
  lo32_ab
  S2='--section SourceCounters --section WarpStateStats --import-source no --kernel-name-base mangled'
  step "ncu-src-k1" ncu 150 ncu --clock-control none $S2 --kernel-name "regex:hgb_dense_kernelI[ij]Li2ELb1ELb1ELb1E" --launch-count 1 -o /tmp/dense $J bench gpu-groupby --algorithm hash --groups 2^16 --rows 2^26 --runs 1 --warmup 0
  step "ncu-csv-k1" ncu 120 sh -c "ncu -i /tmp/dense.ncu-rep --page source --csv --print-source sass | gzip > $OUT/dense-src-k1.csv.gz"
  step memcheck-lo32 sanitizer 150 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter="$LO32_TEST"
fi
# PART=6 (BINS=bins of the final build: joinery_gpu_tests, joinery_conformance_tests): the GPU
# group-by tests, the conformance suite's GPU group-bys, memcheck over the dense tier, racecheck
# over the Lo32 test.
if [ "${PART:-1}" = 6 ]; then
  step gb-tests tests 240 $T --gtest_filter="GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuPartitionGroupby.*:GpuGroupbyRegistry.*:GpuDictionaryGroupby.*:Lo32Sum.*"
  step conf-gb tests 240 /tmp/b/joinery_conformance_tests --gtest_filter='*GroupbyConformance*gpu*'
  step memcheck-dense sanitizer 200 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='GpuHashGroupby.DenseTier*'
  step racecheck-lo32 sanitizer 240 compute-sanitizer --tool racecheck $T --gtest_filter="$LO32_TEST"
fi
cat "$S"
