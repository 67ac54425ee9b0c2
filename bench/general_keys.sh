#!/usr/bin/env bash
# The general key path against the one-key path on the same rows: a PK-FK join on two int32 key
# columns (k1, k2) and on the one int64 key that packs them (k1 * 2^16 + k2), inputs in .npy
# files (host memory), `joinery join --summary` (its "seconds": the join call, reading and
# writing excluded), REPS runs of each. FORM=aggregate (count and checksum, the default) or
# table (the result written to WORK_DIR/out_npy). Prints one JSON line per run.
#
#   bash bench/general_keys.sh JOINERY_BIN WORK_DIR [BUILD_LOG2=24] [PROBE_LOG2=25] [BACKEND=gpu]
set -euo pipefail
bin=$1 work=$2 build_log2=${3:-24} probe_log2=${4:-25} backend=${5:-gpu} reps=${REPS:-5}
form=${FORM:-aggregate}
out=()
[ "$form" = table ] && out=(--output "$work/out_npy" --overwrite)
mkdir -p "$work/r" "$work/s"
python3 - "$work" "$build_log2" "$probe_log2" <<'PY'
import sys, numpy as np
work, b, p = sys.argv[1], 1 << int(sys.argv[2]), 1 << int(sys.argv[3])
rng = np.random.default_rng(7)
ids = rng.permutation(b).astype(np.int64)          # unique build keys, shuffled
probe = rng.integers(0, b, p, dtype=np.int64)      # every probe row matches once
for side, v in (("r", ids), ("s", probe)):
    np.save(f"{work}/{side}/k1.npy", (v >> 16).astype(np.int32))
    np.save(f"{work}/{side}/k2.npy", (v & 0xffff).astype(np.int32))
    np.save(f"{work}/{side}/k64.npy", ((v >> 16) << 16 | (v & 0xffff)).astype(np.int64))
    np.save(f"{work}/{side}/pay.npy", rng.integers(1, 1 << 30, len(v), dtype=np.int32))
PY
for shape in one_int64 two_int32; do
  if [ "$shape" = one_int64 ]; then keys="--on k64"; cols="pay"; else keys="--on k1,k2"; cols="pay"; fi
  for _ in $(seq "$reps"); do
    line=$("$bin" join --build "$work/r" --probe "$work/s" $keys --build-columns "$cols" \
           --probe-columns "$cols" --backend "$backend" --summary "${out[@]}")
    echo "{\"shape\":\"$shape\",\"form\":\"$form\",\"build_rows\":$((1 << build_log2)),\"probe_rows\":$((1 << probe_log2)),\"result\":$line}"
  done
done
