#!/usr/bin/env python3
"""DuckDB, measured side by side with joinery's CPU backend on the same generated data.

The data comes from `joinery gen` with the seeds `joinery bench` uses, so both engines see the
same rows; each DuckDB result is checked against `joinery join/groupby --summary` (count and the
wrapping uint64 checksum) before its time is recorded.

  duckdb_peer.py join --joinery build/bin/joinery --rows R [--probe-rows S] [--key-type int32]
  duckdb_peer.py groupby --joinery build/bin/joinery --rows N --groups G
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import duckdb
import numpy as np
import pyarrow as pa

MASK = (1 << 64) - 1


def gen(joinery, out, kind, rows, key_type, seed, domain=None, payloads=1, payload_type=None):
    cmd = [joinery, "gen", "--kind", kind, "--rows", str(rows), "--key-type", key_type,
           "--payloads", str(payloads), "--payload-type", payload_type or key_type,
           "--seed", str(seed), "-o", out]
    if domain is not None:
        cmd += ["--domain", str(domain)]
    subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)


def load(con, name, directory):
    cols = {f[:-4]: np.load(os.path.join(directory, f))
            for f in sorted(os.listdir(directory)) if f.endswith(".npy")}
    con.register(name + "_arrow", pa.table(cols))
    con.execute(f"CREATE TABLE {name} AS SELECT * FROM {name}_arrow")
    con.unregister(name + "_arrow")


def timed(con, query, runs, warmup):
    result = None
    for _ in range(warmup):
        result = con.execute(query).fetchall()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        result = con.execute(query).fetchall()
        times.append(time.perf_counter() - t0)
    return result, times


def summary(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("experiment", choices=["join", "groupby"])
    p.add_argument("--joinery", required=True)
    p.add_argument("--rows", type=int, required=True, help="join: |R|; groupby: input rows")
    p.add_argument("--probe-rows", type=int, help="join: |S| (default |R|)")
    p.add_argument("--groups", type=int, default=1024)
    p.add_argument("--key-type", default="int32")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--out")
    a = p.parse_args()

    con = duckdb.connect()
    con.execute(f"SET threads TO {a.threads}")
    with tempfile.TemporaryDirectory() as tmp:
        if a.experiment == "join":
            s_rows = a.probe_rows or a.rows
            r_dir, s_dir = os.path.join(tmp, "r"), os.path.join(tmp, "s")
            gen(a.joinery, r_dir, "primary", a.rows, a.key_type, a.seed)
            gen(a.joinery, s_dir, "foreign", s_rows, a.key_type, a.seed + 1, domain=a.rows)
            load(con, "r", r_dir)
            load(con, "s", s_dir)
            query = ("SELECT count(*), sum(s.key::HUGEINT + r.p0 + s.p0) "
                     "FROM r JOIN s ON r.key = s.key")
            expected = summary([a.joinery, "join", "--build", r_dir, "--probe", s_dir, "--on", "key",
                                "--backend", "cpu", "--summary"])
            tuples = a.rows + s_rows
            params = {"build_rows": a.rows, "probe_rows": s_rows, "key_type": a.key_type}
        else:
            t_dir = os.path.join(tmp, "t")
            gen(a.joinery, t_dir, "foreign", a.rows, "int32", a.seed, domain=a.groups, payloads=2,
                payload_type="int32")
            load(con, "t", t_dir)
            query = ("SELECT count(*), sum(key::HUGEINT + m0 + m1 + s0) FROM "
                     "(SELECT key, max(p0) m0, max(p1) m1, sum(p0) s0 FROM t GROUP BY key)")
            expected = summary([a.joinery, "groupby", "--input", t_dir, "--key", "key",
                                "--agg", "max:p0,max:p1,sum:p0", "--backend", "cpu", "--summary"])
            tuples = a.rows
            params = {"rows": a.rows, "groups": a.groups}
        result, times = timed(con, query, a.runs, a.warmup)
    count, total = result[0]
    total = int(total or 0) & MASK
    if count != expected["rows"] or total != expected["checksum"]:
        sys.exit(f"duckdb_peer: DuckDB ({count}, {total}) disagrees with joinery "
                 f"({expected['rows']}, {expected['checksum']})")
    med = statistics.median(times)
    line = dict(params, experiment="duckdb-" + a.experiment, engine="duckdb",
                version=duckdb.__version__, threads=a.threads, runs=a.runs, seconds=times,
                median_s=med, tuples=tuples, throughput_gtuples_s=tuples / med / 1e9,
                rows_out=count, checksum=total, checksum_matches_joinery=True,
                date=datetime.date.today().isoformat())
    print(f"duckdb {a.experiment} {params}: median {med * 1e3:.2f} ms, "
          f"{tuples / med / 1e9:.4f} G tuples/s ({a.threads} threads)")
    if a.out:
        with open(a.out, "a") as f:
            f.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
