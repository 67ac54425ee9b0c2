#!/usr/bin/env bash
# HGB (`hash`) and `automatic` on dense keys (0..g-1) against spread keys (each key times an odd
# constant, `--spread-keys`): 2^28 rows (ROWS), int32 and int64 keys (KEY_TYPES), two int32
# values, MAX and SUM of both, g = 1 .. 2^16 in powers of 4 (MIN_GROUPS, MAX_GROUPS); medians
# of 3 after a warm-up. Dense keys run HGB's dense tier, spread ones its hashed tier 1 (past
# one block's table, tier 2). JSON lines are appended to OUT_FILE.
#
#   bash bench/spread_keys.sh JOINERY_BIN OUT_FILE
set -euo pipefail
bin=$1 out=$2
for key_type in ${KEY_TYPES:-int32 int64}; do
  for layout in dense spread; do
    spread=()
    [[ $layout == spread ]] && spread=(--spread-keys)
    "$bin" bench gpu-groupby --rows "${ROWS:-268435456}" --key-type "$key_type" "${spread[@]}" \
      --min-groups "${MIN_GROUPS:-1}" --groups "${MAX_GROUPS:-2^16}" \
      --algorithm "${ALGORITHMS:-hash,automatic}" --runs 3 --warmup 1 --out "$out"
  done
done
