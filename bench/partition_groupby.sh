#!/usr/bin/env bash
# The partition group-bys (PGB-TR `partition_transformed`, PGB-UR `partition`) on high-cardinality
# spread keys against `hash`, `sort_transformed` and `automatic` (ALGORITHMS): 2^28 rows (ROWS),
# int32 keys (KEY_TYPE) spread by an odd constant, two int32 values, MAX and SUM of both; g =
# 2^14 .. 2^24 (MIN_GROUPS, MAX_GROUPS) uniform, and Zipf 1 / 1.5 (ZIPF) at 2^16 .. 2^24;
# medians of 3 after a warm-up. JSON lines (with each algorithm's phases) are appended to
# OUT_FILE.
#
#   bash bench/partition_groupby.sh JOINERY_BIN OUT_FILE
set -euo pipefail
bin=$1 out=$2
algos=${ALGORITHMS:-partition_transformed,partition,hash,sort_transformed,automatic}
common=(--rows "${ROWS:-268435456}" --key-type "${KEY_TYPE:-int32}" --spread-keys --runs 3
        --warmup 1 --algorithm "$algos" --out "$out")
"$bin" bench gpu-groupby --min-groups "${MIN_GROUPS:-2^14}" --groups "${MAX_GROUPS:-2^24}" \
  "${common[@]}"
for zipf in ${ZIPF:-1 1.5}; do
  "$bin" bench gpu-groupby --min-groups 2^16 --groups "${MAX_GROUPS:-2^24}" --zipf "$zipf" \
    "${common[@]}"
done
