#!/usr/bin/env bash
# Issue 41's group-by grid: 2^28 rows (ROWS); g from MIN_GROUPS (2^4) to MAX_GROUPS (2^24) in
# powers of 4; keys dense (0..g-1), spread (each times an odd constant), Zipf 1 and Zipf 1.5
# (spread) (DISTRIBUTIONS); int32 and int64 keys (KEY_TYPES); the aggregate shapes of SHAPES
# (default: all of `joinery bench gpu-groupby --shapes`); every GPU algorithm and `automatic`
# (ALGORITHMS, comma-separated; empty: all). Medians of 3 after a warm-up; JSON lines, with the
# shape, the roofline fraction and what `automatic` ran, are appended to OUT_FILE.
#
#   bash bench/groupby_grid.sh JOINERY_BIN OUT_FILE
set -euo pipefail
bin=$1 out=$2
shapes=${SHAPES:-count,sum1,sum2,max2,mmsc2,mixed4,avg_f64}
algos=()
[[ -n ${ALGORITHMS:-} ]] && algos=(--algorithm "$ALGORITHMS")
for key_type in ${KEY_TYPES:-int32 int64}; do
  for dist in ${DISTRIBUTIONS:-dense spread zipf1 zipf1.5}; do
    layout=()
    case $dist in
      dense) ;;
      spread) layout=(--spread-keys) ;;
      zipf*) layout=(--spread-keys --zipf "${dist#zipf}") ;;
      *) echo "groupby_grid.sh: unknown distribution '$dist'" >&2; exit 2 ;;
    esac
    "$bin" bench gpu-groupby --rows "${ROWS:-268435456}" --key-type "$key_type" "${layout[@]}" \
      --min-groups "${MIN_GROUPS:-2^4}" --groups "${MAX_GROUPS:-2^24}" --shapes "$shapes" \
      "${algos[@]}" --runs 3 --warmup 1 --out "$out"
  done
done
