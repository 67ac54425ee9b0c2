#!/usr/bin/env bash
# The CPU backend's experiments with DuckDB beside them, on the same data and threads.
#   bash bench/run_cpu_experiments.sh [--max-rows 2^26] [--groupby-rows 2^24] [--runs 5]
# Appends to bench/results/<host>/<experiment>.jsonl (RESULTS_DIR to write elsewhere); the
# figures take the latest date of each configuration, so superseded lines can be deleted. DuckDB
# runs from a virtual environment made here; when it cannot be installed, the peer is skipped
# with a message and joinery still runs.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
joinery=${JOINERY:-$root/build/bin/joinery}
max_rows=2^24 gb_rows=2^24 runs=5
while [[ $# -gt 0 ]]; do
  case $1 in
    --max-rows) max_rows=$2; shift 2 ;;
    --groupby-rows) gb_rows=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
pow() { python3 -c "print(eval('$1'.replace('^','**')))"; }
host=$(hostname -s)
dir=${RESULTS_DIR:-$root/bench/results/$host}
mkdir -p "$dir"
"$joinery" bench cpu-bandwidth --rows 2^27 --runs "$runs" --out "$dir/cpu-bandwidth.jsonl"
"$joinery" bench cpu-join-scaling --max-rows "$max_rows" --runs "$runs" --out "$dir/cpu-join-scaling.jsonl"
"$joinery" bench cpu-groupby --rows "$gb_rows" --runs "$runs" --out "$dir/cpu-groupby.jsonl"

# PEER_PYTHON: a python that already has duckdb, numpy and pyarrow (e.g. on a machine without
# network, with duckdb installed from a carried wheel); otherwise a virtual environment is made.
python=${PEER_PYTHON:-}
if [[ -z $python ]]; then
  venv=${VENV:-$root/build/venv-bench}
  if [[ ! -x $venv/bin/python ]] || ! "$venv/bin/python" -c 'import duckdb, numpy, pyarrow' 2>/dev/null; then
    python3 -m venv "$venv" && "$venv/bin/pip" install -q duckdb numpy pyarrow \
      || { echo "DuckDB peer skipped: could not install duckdb/numpy/pyarrow"; exit 0; }
  fi
  python=$venv/bin/python
fi
"$python" -c 'import duckdb, numpy, pyarrow' || { echo "DuckDB peer skipped: $python lacks duckdb/numpy/pyarrow"; exit 0; }
peer() { "$python" "$root/bench/peers/duckdb_peer.py" "$@" --joinery "$joinery" --runs "$runs"; }
n=$((1 << 20)); max=$(pow "$max_rows")
for key in int32 int64; do
  for ((r = n; r <= max; r *= 4)); do peer join --rows $r --key-type $key --out "$dir/duckdb-join.jsonl"; done
done
rows=$(pow "$gb_rows")
for ((g = 1; g <= rows && g <= 16777216; g *= 16)); do
  peer groupby --rows "$rows" --groups $g --out "$dir/duckdb-groupby.jsonl"
done
