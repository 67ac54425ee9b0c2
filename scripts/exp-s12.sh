#!/usr/bin/env bash
# Session 12 device runs: PART=1 PGB's early stop on a full global table and the re-applied skew
# switch of `automatic` (tests, sanitizers, the Zipf sweeps); logs in $OUT.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/b
S=$OUT/summary.txt; : > "$S"
tar xJf "${BINS:-build/bins12.tar.xz}" -C /tmp/b || { echo "untar failed" >> "$S"; exit 1; }
export JOINERY_DEVICE_BANDWIDTHS=4.144e12,2.961e12,6.63e11,62914560,268435456,1.855e12,2.318e12
step() { # step NAME LOG TIMEOUT cmd...
  local name=$1 log=$2 t=$3; shift 3
  local t0=$(date +%s)
  echo "=== $name: $*" >> "$OUT/$log.log"
  timeout "$t" "$@" >> "$OUT/$log.log" 2>&1; local rc=$?
  echo "$name rc=$rc $(( $(date +%s) - t0 ))s" >> "$S"
}
nvidia-smi -L > "$OUT/env.log" 2>&1
J=/tmp/b/joinery
T=/tmp/b/joinery_gpu_tests
if [ "${PART:-1}" = 1 ]; then
  step gb-tests tests 240 $T --gtest_filter='GpuPartitionGroupby.*:Algorithms/GpuGroupby.*:GpuHashGroupby.*:GpuGroupbyRegistry.*:GpuDictionaryGroupby.*'
  step memcheck-pgb sanitizer 150 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='GpuPartitionGroupby.SkewHides*:GpuPartitionGroupby.Restarts*:GpuHashGroupby.AutomaticPartitions*'
  step racecheck-pgb sanitizer 150 compute-sanitizer --tool racecheck $T --gtest_filter='GpuPartitionGroupby.SkewHides*:GpuPartitionGroupby.Restarts*'
  for z in ${ZIPFS:-1.5 1.0 0.5}; do
    step "gb-zipf$z" bench 200 $J bench gpu-groupby --algorithm hash,partition_transformed,sort_transformed,automatic --zipf $z --groups 2^20 --runs 3 --warmup 1 --out "$OUT/gb-skew.jsonl"
  done
  step gb-uniform bench 200 $J bench gpu-groupby --algorithm partition_transformed,automatic --groups 2^24 --runs 3 --warmup 1 --out "$OUT/gb-uniform.jsonl"
fi
if [ "${PART:-1}" = 2 ]; then
  # The dense tier one accumulator a pass: tests, sanitizers, and the sweeps at the final code.
  step gb-tests tests 240 $T --gtest_filter='GpuPartitionGroupby.*:Algorithms/GpuGroupby.*:GpuHashGroupby.*:GpuGroupbyRegistry.*:GpuDictionaryGroupby.*'
  step memcheck-dense sanitizer 150 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='GpuHashGroupby.DenseTierRuns*'
  step racecheck-dense sanitizer 200 compute-sanitizer --tool racecheck $T --gtest_filter='GpuHashGroupby.DenseTierRuns*'
  step gb-uniform32 bench 330 $J bench gpu-groupby --groups 2^26 --runs 3 --warmup 1 --out "$OUT/gb-uniform-int32.jsonl"
fi
if [ "${PART:-1}" = 3 ]; then
  step gb-uniform64 bench 240 $J bench gpu-groupby --algorithm hash,sort_transformed,sort_dictionary,partition_transformed,automatic --key-type int64 --groups 2^26 --runs 3 --warmup 1 --out "$OUT/gb-uniform-int64.jsonl"
  for z in 0.5 1.0 1.5; do
    step "gb-zipf$z" bench 120 $J bench gpu-groupby --algorithm hash,partition_transformed,sort_transformed,automatic --zipf $z --groups 2^20 --runs 3 --warmup 1 --out "$OUT/gb-skew.jsonl"
  done
fi
if [ "${PART:-1}" = 4 ]; then
  # Every group-by of the conformance suite on the GPU, the API tests, and memcheck over the
  # skewed and many-group cases (the estimate, PGB's restarts, the dense tier).
  step conf-gb tests 240 /tmp/b/joinery_conformance_tests --gtest_filter='*GroupbyConformance*gpu*'
  step api tests 120 /tmp/b/joinery_unit_tests --gtest_filter='Api.*'
  step memcheck-conf sanitizer 200 compute-sanitizer --tool memcheck --report-api-errors no /tmp/b/joinery_conformance_tests --gtest_filter='*GroupbyConformance*gpu*zipf*:*GroupbyConformance*gpu*distinct*:*GroupbyConformance*gpu*hot*'
fi
cat "$S"
