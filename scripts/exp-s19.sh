#!/usr/bin/env bash
# Session 19 device runs (issue 7); logs in $OUT.
# PART=1 (BINS=build/bins19.tar.xz, OLD=build/bins18h.tar.xz: session 18's final binary): the
# shared-counter probe (joinery_exp_multicast: SUMSH against SUMLO at g = 2^14..2^16); the GPU
# group-by tests and conformance cases after tier 1's capped table and tier 2's warp-counted
# groups; then automatic and the sorts on uniform int64 keys to 2^22 and int32 keys to 2^22, new
# binary against old (tier 1's try and tier 2's first table before the sort). KEYS (default
# int64): the key types of the sweeps; PROBE=0 and TESTS=0 skip the probe and the tests.
# PART=2: memcheck over tier 1, tier 2, automatic and PGB's tests; racecheck over tier 1's.
# PART=3 (the counted 32-bit sums): the dense tier's tests, the GPU group-by tests and
# conformance cases; bench gpu-groupby (hash) to 2^16 with the default choice, with the 32-bit
# sums off (JOINERY_DENSE_LO32=0) and forced counted (=2): int32 and int64 keys, Zipf 1.
# PART=4: memcheck and racecheck over the 32-bit sums' tests.
set -u
source "$(dirname "$0")/exp-lib.sh" "${BINS:-build/bins19.tar.xz}"
J=/tmp/b/joinery
T=/tmp/b/joinery_gpu_tests
GBT='GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuPartitionGroupby.*:GpuGroupbyRegistry.*:GpuDictionaryGroupby.*'
if [ "${PART:-1}" = 1 ]; then
  if [ "${PROBE:-1}" = 1 ] && [ -x /tmp/b/joinery_exp_multicast ]; then
    step probe probe 200 /tmp/b/joinery_exp_multicast
  fi
  if [ "${TESTS:-1}" = 1 ]; then
    step gb-tests tests 250 $T --gtest_filter="$GBT"
    step conf-gb tests 200 /tmp/b/joinery_conformance_tests --gtest_filter='*GroupbyConformance*gpu*'
  fi
  if [ -n "${OLD:-}" ]; then mkdir -p /tmp/old && tar xJf "$OLD" -C /tmp/old; fi
  for k in ${KEYS:-int64}; do
    step "gb-uniform-$k-new" bench 250 $J bench gpu-groupby --algorithm hash,sort_transformed,sort_dictionary,automatic --key-type $k --groups 2^22 --runs 3 --warmup 1 --out "$OUT/gb-s19-uniform-$k.jsonl"
    [ -n "${OLD:-}" ] && step "gb-uniform-$k-old" bench 150 /tmp/old/joinery bench gpu-groupby --algorithm hash,automatic --key-type $k --groups 2^22 --runs 3 --warmup 1 --out "$OUT/gb-s19-uniform-$k-old.jsonl"
  done
fi
if [ "${PART:-1}" = 2 ]; then
  step memcheck-tiers sanitizer 360 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='GpuHashGroupby.SharedTier*:GpuHashGroupby.TierTwo*:GpuHashGroupby.Restarts*:GpuHashGroupby.Automatic*:GpuPartitionGroupby.*'
  step racecheck-tier1 sanitizer 200 compute-sanitizer --tool racecheck $T --gtest_filter='GpuHashGroupby.SharedTier*'
fi
if [ "${PART:-1}" = 3 ]; then
  step dense-tests tests 200 $T --gtest_filter='GpuHashGroupby.DenseTier*'
  step gb-tests tests 250 $T --gtest_filter="$GBT"
  step conf-gb tests 200 /tmp/b/joinery_conformance_tests --gtest_filter='*GroupbyConformance*gpu*'
  for r in 1 2; do
    gb counted-$r JOINERY_NOTHING=1
    gb off-$r JOINERY_DENSE_LO32=0
  done
  gb counted-64 JOINERY_NOTHING=1 --key-type int64
  gb off-64 JOINERY_DENSE_LO32=0 --key-type int64
  gb counted-z1 JOINERY_NOTHING=1 --zipf 1
  gb off-z1 JOINERY_DENSE_LO32=0 --zipf 1
  gb forced-z1 JOINERY_DENSE_LO32=2 --zipf 1
  # One file (few come back from the device): each line tagged with its run.
  for f in "$OUT"/gb-*.jsonl; do
    t=$(basename "$f" .jsonl); sed "s/^{/{\"tag\":\"$t\",/" "$f"; rm "$f"
  done > "$OUT/gb-s19-counted.jsonl.tmp" && mv "$OUT/gb-s19-counted.jsonl.tmp" "$OUT/gb-s19-counted.jsonl"
fi
if [ "${PART:-1}" = 4 ]; then
  step memcheck-lo32 sanitizer 300 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter='GpuHashGroupby.DenseTierSums*:GpuHashGroupby.DenseTierCounted*'
  step racecheck-lo32 sanitizer 280 compute-sanitizer --tool racecheck $T --gtest_filter='GpuHashGroupby.DenseTierSums*:GpuHashGroupby.DenseTierCounted*'
fi
grep -h "G rows/s\|^g =\|FAILED\|PASSED\|ERROR SUMMARY\|RACECHECK SUMMARY" $OUT/*.log | head -150
cat $S
