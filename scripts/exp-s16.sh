#!/usr/bin/env bash
# Session 16 device runs (issue 7, the dense tier's teams); logs in $OUT. PART=1: bench
# gpu-groupby (hash) A/B, $B (before) against $J, uniform int32 / int64 keys and Zipf 1.5 up to
# g = 2^16, then $J with each dense layout forced (JOINERY_DENSE_BATCH); the GPU group-by tests.
# PART=2: the conformance cases, the API tests and the sanitizers over the dense tier.
set -u
source "$(dirname "$0")/exp-lib.sh" "${BINS:-build/bins16.tar.xz}"
J=/tmp/b/joinery
B=/tmp/b/joinery_base
T=/tmp/b/joinery_gpu_tests
gb() {  # gb BINARY TAG [ENV=VALUE] [extra bench args...]
  local bin=$1 tag=$2 env=${3:-JOINERY_NOTHING=1}; shift 3
  step "gb-$tag" bench 150 env $env $bin bench gpu-groupby --algorithm hash --groups ${GROUPS_MAX:-2^16} --runs 3 --warmup 1 --out "$OUT/gb-$tag.jsonl" "$@"
}
if [ "${PART:-1}" = 1 ]; then
  gb $B base JOINERY_NOTHING=1
  gb $J new JOINERY_NOTHING=1
  gb $J batch2 JOINERY_DENSE_BATCH=2
  gb $J batch1 JOINERY_DENSE_BATCH=1
  gb $B base64 JOINERY_NOTHING=1 --key-type int64
  gb $J new64 JOINERY_NOTHING=1 --key-type int64
  gb $B basez JOINERY_NOTHING=1 --zipf 1.5
  gb $J newz JOINERY_NOTHING=1 --zipf 1.5
  step gb-tests tests 400 $T --gtest_filter='GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuPartitionGroupby.*:GpuGroupbyRegistry.*:GpuDictionaryGroupby.*'
fi
if [ "${PART:-1}" = 2 ]; then
  conformance_groupby_checks
  step memcheck-dense sanitizer 300 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='GpuHashGroupby.DenseTier*:GpuHashGroupby.Automatic*:GpuHashGroupby.OneGroup*'
  step racecheck-dense sanitizer 300 compute-sanitizer --tool racecheck $T --gtest_filter='GpuHashGroupby.DenseTier*'
fi
if [ "${PART:-1}" = 3 ]; then  # the final code: sweeps with every algorithm; PART=4: tests, sanitizers
  for z in 0 1 1.5; do
    step "gb-all-z$z" bench 200 $J bench gpu-groupby --algorithm hash,partition_transformed,sort_transformed,automatic --groups 2^18 --zipf $z --runs 3 --warmup 1 --out "$OUT/gb-all.jsonl"
  done
  step gb-all-64 bench 200 $J bench gpu-groupby --algorithm hash,partition_transformed,sort_dictionary,automatic --groups 2^18 --key-type int64 --runs 3 --warmup 1 --out "$OUT/gb-all.jsonl"
fi
if [ "${PART:-1}" = 4 ]; then
  step gb-tests tests 300 $T --gtest_filter='GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuPartitionGroupby.*:GpuGroupbyRegistry.*:GpuDictionaryGroupby.*'
  step conf-gb tests 240 /tmp/b/joinery_conformance_tests --gtest_filter='*GroupbyConformance*gpu*'
  step memcheck-dense sanitizer 200 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='GpuHashGroupby.DenseTier*:GpuHashGroupby.Automatic*'
  step racecheck-dense sanitizer 200 compute-sanitizer --tool racecheck $T --gtest_filter='GpuHashGroupby.DenseTier*'
  step memcheck-conf sanitizer 200 compute-sanitizer --tool memcheck --report-api-errors no /tmp/b/joinery_conformance_tests --gtest_filter='*GroupbyConformance*gpu_hash*'
fi
if [ "${PART:-1}" = 5 ]; then  # after the tie-break toward smaller teams: hash at Zipf 0 / 1.5, the tests
  gb $J final JOINERY_NOTHING=1
  gb $J finalz JOINERY_NOTHING=1 --zipf 1.5
  step gb-tests tests 300 $T --gtest_filter='GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuPartitionGroupby.*:GpuGroupbyRegistry.*:GpuDictionaryGroupby.*'
  step memcheck-dense sanitizer 200 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='GpuHashGroupby.DenseTier*:GpuHashGroupby.Automatic*'
  step racecheck-dense sanitizer 200 compute-sanitizer --tool racecheck $T --gtest_filter='GpuHashGroupby.DenseTier*'
fi
