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
cat "$S"
