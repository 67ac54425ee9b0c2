# Shared by the scripts/exp-s*.sh device runs (sourced): $OUT and its summary, the binaries
# unpacked from $BINS (default: $1) into /tmp/b, the H200's measured bandwidths, and
# `step NAME LOG TIMEOUT cmd...`, which appends the command's output to $OUT/LOG.log and its exit
# status and seconds to the summary.
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/b
S=$OUT/summary.txt; : > "$S"
tar xJf "${BINS:-$1}" -C /tmp/b || { echo "untar failed" >> "$S"; exit 1; }
export JOINERY_DEVICE_BANDWIDTHS=4.144e12,2.961e12,6.63e11,62914560,268435456,1.855e12,2.318e12
step() {
  local name=$1 log=$2 t=$3; shift 3
  local t0=$(date +%s)
  echo "=== $name: $*" >> "$OUT/$log.log"
  timeout "$t" "$@" >> "$OUT/$log.log" 2>&1; local rc=$?
  echo "$name rc=$rc $(( $(date +%s) - t0 ))s" >> "$S"
}
nvidia-smi -L > "$OUT/env.log" 2>&1
# Every group-by of the conformance suite on the GPU, the API tests, memcheck over the skewed and
# many-group conformance cases; the binaries in /tmp/b.
conformance_groupby_checks() {
  step conf-gb tests 240 /tmp/b/joinery_conformance_tests --gtest_filter='*GroupbyConformance*gpu*'
  step api tests 120 /tmp/b/joinery_unit_tests --gtest_filter='Api.*'
  step memcheck-conf sanitizer 240 compute-sanitizer --tool memcheck --report-api-errors no /tmp/b/joinery_conformance_tests --gtest_filter='*GroupbyConformance*gpu*zipf*:*GroupbyConformance*gpu*distinct*:*GroupbyConformance*gpu*hot*'
}
# The Zipf sweeps of the skewed group-bys to 2^20: `zipf_sweeps TIMEOUT Z...` ($J: the CLI).
zipf_sweeps() {
  local t=$1; shift
  for z in "$@"; do
    step "gb-zipf$z" bench "$t" $J bench gpu-groupby --algorithm hash,partition_transformed,sort_transformed,automatic --zipf $z --groups 2^20 --runs 3 --warmup 1 --out "$OUT/gb-skew.jsonl"
  done
}
# `gb TAG ENV=VALUE [args...]`: bench gpu-groupby, hash only, to ${GROUPS_MAX:-2^16} groups with one
# environment setting, JSON lines to $OUT/gb-TAG.jsonl ($J: the CLI, set by the script).
gb() {
  local tag=$1 env=$2; shift 2
  step "gb-$tag" bench 150 env $env $J bench gpu-groupby --algorithm hash --groups ${GROUPS_MAX:-2^16} --runs 3 --warmup 1 --out "$OUT/gb-$tag.jsonl" "$@"
}
