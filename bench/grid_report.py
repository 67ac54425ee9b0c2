#!/usr/bin/env python3
"""How `automatic` chose on a group-by grid: for each point (key type, key layout, shape, g) of
`joinery bench gpu-groupby` JSON lines, the fastest algorithm, its G rows/s and roofline
fraction, and what `automatic` ran at what share of the best. Ends with the share of points
where `automatic` is within 10% of the best and its worst ratio (issue 41's criteria). Where a
file holds several runs of a point, the latest line of each algorithm is taken.

    python3 bench/grid_report.py FILE.jsonl [--markdown]
"""
import argparse
import json
import sys


def layout(r):
    if r.get("zipf", 0):
        return "zipf%g" % r["zipf"]
    return "spread" if r.get("spread_keys") else "dense"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--markdown", action="store_true", help="a Markdown table of the points")
    a = ap.parse_args()
    points = {}
    with open(a.file) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            r = json.loads(line)
            if r.get("experiment") != "gpu-groupby":
                continue
            key = (r["rows"], r["key_type"], layout(r), r.get("shape", r["aggregate"]), r["groups"])
            points.setdefault(key, {})[r["algorithm"]] = r
    within = total = 0
    worst = (1.0, None)
    rows = []
    for key in sorted(points):
        algos = points[key]
        measured = {n: r for n, r in algos.items() if n != "automatic"}
        if not measured:
            continue
        best_name, best = min(measured.items(), key=lambda kv: kv[1]["median_s"])
        gps = best["rows"] / best["median_s"] / 1e9
        auto = algos.get("automatic")
        ratio = ran = None
        if auto is not None:
            ratio = best["median_s"] / auto["median_s"]
            ran = auto.get("algorithm_run", "?")
            total += 1
            within += ratio >= 1 / 1.1
            if ratio < worst[0]:
                worst = (ratio, key)
        rows.append((key, best_name, gps, best["fraction_of_roofline"], ran, ratio))
    if a.markdown:
        print("| rows | key | layout | shape | g | best | G rows/s | of roofline | automatic ran | "
              "automatic / best |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for (n, kt, lay, shape, g), best_name, gps, frac, ran, ratio in rows:
        g_label = "2^%d" % (g.bit_length() - 1) if g & (g - 1) == 0 else str(g)
        r_label = "-" if ratio is None else "%.2f" % ratio
        if a.markdown:
            print("| 2^%d | %s | %s | %s | %s | %s | %.1f | %.2f | %s | %s |" %
                  (n.bit_length() - 1, kt, lay, shape, g_label, best_name, gps, frac, ran or "-", r_label))
        else:
            print("%-6s %-8s %-8s %-5s best %-22s %7.1f G rows/s (%.2f of roofline)  "
                  "automatic ran %-22s %s" % (kt, lay, shape, g_label, best_name, gps, frac,
                                              ran or "-", r_label))
    if total:
        print("\nautomatic within 10%% of the best at %d of %d points (%.0f%%); worst %.2f at %s" %
              (within, total, 100.0 * within / total, worst[0], worst[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
