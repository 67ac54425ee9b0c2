#!/usr/bin/env python3
"""The Python package's overhead over the library, and the Python user's alternatives beside it.

For each workload the same in-memory pyarrow tables go to joinery.join / joinery.group_by
(wall time of the Python call, against the wall time of the C++ call it makes,
Stats.call_seconds: the overhead is what the import of the inputs, the worker thread and the
export of the result add), and, where installed, to DuckDB and polars. Every engine's result is
checked against what the data holds (the join's row count, the group count and the sums of the
group-by, computed with NumPy) before its time is kept. Medians of
--runs timed runs after one warm-up. One JSON object per measurement on stdout (or --out).

  PYTHONPATH=build/python python3 bench/python/python_api.py [--backend cpu|gpu]
      [--engines joinery,duckdb,polars] [--join-rows 2^24 --probe-rows 2^25]
      [--groupby-rows 2^26 --groups 2^10] [--runs 5]
"""
import argparse
import datetime
import json
import platform
import statistics
import subprocess
import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.compute


def rows_arg(text: str) -> int:
    return 2 ** int(text[2:]) if text.startswith("2^") else int(text)


def timed(fn, runs):
    """Median wall seconds of fn() and its last result. A result is released after its timer
    stops (as a C++ caller's would be after its call returns)."""
    fn()  # warm-up
    walls, result = [], None
    for _ in range(runs):
        result = None
        t0 = time.perf_counter()
        result = fn()
        walls.append(time.perf_counter() - t0)
    return statistics.median(walls), result


def arrow_of(relation):
    """A DuckDB result as a pyarrow Table (DuckDB 2 hands out a RecordBatchReader)."""
    r = relation.arrow()
    return r.read_all() if hasattr(r, "read_all") else r


def join_tables(build_rows, probe_rows, seed=1):
    rng = np.random.default_rng(seed)
    keys = rng.permutation(build_rows).astype(np.int32) + 1  # unique, spread over 1..build_rows
    build = pa.table({"k": keys, "b": rng.integers(0, 2**31 - 1, build_rows, dtype=np.int32)})
    probe = pa.table({"k": rng.integers(1, build_rows + 1, probe_rows, dtype=np.int32),
                      "p": rng.integers(0, 2**31 - 1, probe_rows, dtype=np.int32)})
    return build, probe


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--join-rows", type=rows_arg, default=2**24)
    ap.add_argument("--probe-rows", type=rows_arg, default=2**25)
    ap.add_argument("--groupby-rows", type=rows_arg, default=2**26)
    ap.add_argument("--groups", type=rows_arg, default=2**10)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--engines", default="joinery,duckdb,polars",
                    help="comma list of joinery, duckdb, polars (those not installed are left out)")
    ap.add_argument("--out")
    ap.add_argument("--revision", help="the revision measured (default: git's HEAD, +dirty)")
    args = ap.parse_args()
    out = open(args.out, "a") if args.out else sys.stdout
    revision = args.revision
    if revision is None:
        try:
            git = lambda *a: subprocess.run(["git", *a], capture_output=True, text=True).stdout  # noqa: E731
            revision = git("rev-parse", "--short", "HEAD").strip() or "unknown"
            if git("status", "--porcelain", "--untracked-files=no").strip():
                revision += "+dirty"
        except OSError:
            revision = "unknown"
    common = {"date": datetime.date.today().isoformat(), "revision": revision,
              "host": platform.node(), "backend": args.backend, "runs": args.runs}

    def emit(**fields):
        line = json.dumps({**common, **fields})
        print(line, file=out, flush=True)
        if out is not sys.stdout:
            print(line)

    engines = [e for e in args.engines.split(",") if e]
    if "joinery" in engines:
        import joinery
    duckdb = pl = None
    if "duckdb" in engines:
        try:
            import duckdb
        except ImportError:
            print("duckdb is not installed: left out", file=sys.stderr)
    if "polars" in engines:
        try:
            import polars as pl
        except ImportError:
            print("polars is not installed: left out", file=sys.stderr)

    # --- join: probe (left) x build (right), key + one payload a side, inner --------------
    build, probe = join_tables(args.join_rows, args.probe_rows)
    expected = args.probe_rows  # every probe key has exactly one build row
    join_sizes = {"build_rows": args.join_rows, "probe_rows": args.probe_rows}
    tuples = args.join_rows + args.probe_rows
    if "joinery" in engines:
        stats = []

        def joinery_join():
            table, s = joinery.join(probe, build, on="k", backend=args.backend, return_stats=True)
            stats.append(s.call_seconds)
            return table

        wall, table = timed(joinery_join, args.runs)
        assert table.num_rows == expected, (table.num_rows, expected)
        api = statistics.median(stats[1:])
        del table
        emit(experiment="python-join", engine="joinery", **join_sizes, rows=expected,
             median_s=wall, api_median_s=api, overhead=wall / api - 1, tuples_per_s=tuples / wall)
    if duckdb is not None:
        con = duckdb.connect()
        con.register("build_t", build)
        con.register("probe_t", probe)
        q = "select p.k, p.p, b.b from probe_t p join build_t b on p.k = b.k"
        wall, r = timed(lambda: arrow_of(con.sql(q)), args.runs)
        assert r.num_rows == expected, (r.num_rows, expected)
        del r
        emit(experiment="python-join", engine=f"duckdb {duckdb.__version__}", **join_sizes,
             rows=expected, median_s=wall, tuples_per_s=tuples / wall)
    if pl is not None:
        pb, pp = pl.from_arrow(build), pl.from_arrow(probe)
        wall, r = timed(lambda: pp.join(pb, on="k"), args.runs)
        assert r.height == expected, (r.height, expected)
        del r, pb, pp
        emit(experiment="python-join", engine=f"polars {pl.__version__}", **join_sizes,
             rows=expected, median_s=wall, tuples_per_s=tuples / wall)
    del build, probe

    # --- group-by: int32 key of `groups` spread values, SUM of two int32 columns --------------
    rng = np.random.default_rng(2)
    domain = rng.choice(2**31 - 1, size=args.groups, replace=False).astype(np.int32)
    table = pa.table({"k": domain[rng.integers(0, len(domain), args.groupby_rows)],
                      "v": rng.integers(-1000, 1000, args.groupby_rows, dtype=np.int32),
                      "w": rng.integers(0, 1000, args.groupby_rows, dtype=np.int32)})
    keys = table.column("k").to_numpy()
    groups = len(np.unique(keys))
    v_total = int(table.column("v").to_numpy().astype(np.int64).sum())
    if "joinery" in engines:
        stats = []

        def joinery_group_by():
            result, s = joinery.group_by(table, "k", {"v": "sum", "w": "sum"},
                                         backend=args.backend, return_stats=True)
            stats.append(s.call_seconds)
            return result

        wall, result = timed(joinery_group_by, args.runs)
        assert result.num_rows == groups
        assert pa.compute.sum(result.column("v_sum")).as_py() == v_total
        api = statistics.median(stats[1:])
        emit(experiment="python-groupby", engine="joinery", rows=args.groupby_rows,
             groups=groups, median_s=wall, api_median_s=api, overhead=wall / api - 1,
             rows_per_s=args.groupby_rows / wall)
    if duckdb is not None:
        con = duckdb.connect()
        con.register("t", table)
        q = "select k, sum(v) as v_sum, sum(w) as w_sum from t group by k"
        wall, r = timed(lambda: arrow_of(con.sql(q)), args.runs)
        assert r.num_rows == groups and pa.compute.sum(r.column("v_sum")).as_py() == v_total
        emit(experiment="python-groupby", engine=f"duckdb {duckdb.__version__}",
             rows=args.groupby_rows, groups=groups, median_s=wall,
             rows_per_s=args.groupby_rows / wall)
    if pl is not None:
        frame = pl.from_arrow(table)
        q = lambda: frame.group_by("k").agg(pl.col("v").sum(), pl.col("w").sum())  # noqa: E731
        wall, r = timed(q, args.runs)
        assert r.height == groups and r["v"].sum() == v_total
        emit(experiment="python-groupby", engine=f"polars {pl.__version__}",
             rows=args.groupby_rows, groups=groups, median_s=wall,
             rows_per_s=args.groupby_rows / wall)


if __name__ == "__main__":
    main()
