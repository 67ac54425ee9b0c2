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


SHORT = {"hash": "h", "partition_transformed": "p", "partition": "pu", "sort_transformed": "s",
         "sort_dictionary": "d", "sort": "su", "global_hash": "g"}


def pivot(rows, log2s):
    """One Markdown row a (rows, key type, layout, shape): best G rows/s and its algorithm at
    each g of log2s, then automatic's worst ratio to the best over all g of the file."""
    table = {}
    for (n, kt, lay, shape, g), best_name, gps, frac, ran, ratio in rows:
        entry = table.setdefault((n, kt, lay, shape), {"g": {}, "worst": None, "within": 0,
                                                        "points": 0})
        entry["g"][g] = "%.0f %s" % (gps, SHORT.get(best_name, best_name))
        if ratio is not None:
            entry["points"] += 1
            entry["within"] += ratio >= 1 / 1.1
            if entry["worst"] is None or ratio < entry["worst"][0]:
                entry["worst"] = (ratio, g)
    print("| key | layout | shape | " + " | ".join("2^%d" % e for e in log2s) +
          " | automatic: within 10% | worst |")
    print("| --- " * (len(log2s) + 5) + "|")
    for (n, kt, lay, shape), e in sorted(table.items()):
        cells = [e["g"].get(1 << x, "-") for x in log2s]
        worst = "-" if e["worst"] is None else "%.2f (2^%d)" % (e["worst"][0],
                                                               e["worst"][1].bit_length() - 1)
        print("| %s | %s | %s | %s | %d of %d | %s |" % (kt, lay, shape, " | ".join(cells),
                                                       e["within"], e["points"], worst))
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--markdown", action="store_true", help="a Markdown table of the points")
    ap.add_argument("--pivot", metavar="LOG2_G,..",
                    help="a Markdown table instead: a row a (key, layout, shape), the best "
                         "G rows/s at these g (log2) and automatic's worst ratio over all g")
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
    if a.pivot:
        return pivot(rows, [int(x) for x in a.pivot.split(",")])
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
