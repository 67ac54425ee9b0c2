#!/usr/bin/env python3
"""Issue 7's targets from `joinery bench gpu-groupby` JSON lines.

  python3 scripts/gb-summary.py FILE.jsonl...

One markdown table per (key type, Zipf, aggregate): G rows/s of every algorithm at every g, the
best algorithm (automatic not counted) and its share of the read-once roofline, and automatic
(the algorithm it ran) against the best. Then the targets: the best >= 40% of the roofline at
g <= 2^16 of the uniform sweeps (the axis the issue's "every g" names; the Zipf points are read
as measurements, as since session 10), hash >= 10x global_hash at g <= 2^10, automatic within
10% of the best everywhere.
A point measured more than once keeps its fastest median.
"""
import json
import math
import sys
from collections import defaultdict


def main(paths):
    # (key, zipf, agg) -> g -> algorithm -> record
    points = defaultdict(lambda: defaultdict(dict))
    for path in paths:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                r = json.loads(line)
                if r.get("experiment") != "gpu-groupby":
                    continue
                where = (r["key_type"], r["zipf"], r["aggregate"])
                g, alg = r["groups"], r["algorithm"]
                old = points[where][g].get(alg)
                if old is None or r["median_s"] < old["median_s"]:
                    points[where][g][alg] = r
    misses = []
    for where in sorted(points):
        key, zipf, agg = where
        table = points[where]
        algs = sorted({a for g in table for a in table[g]},
                      key=lambda a: (a == "automatic", a == "global_hash", a))
        print(f"\n{key} keys, Zipf {zipf}, {agg.upper()} (G rows/s)\n")
        head = ["g"] + algs + ["best, % of roofline", "automatic vs best"]
        print("| " + " | ".join(head) + " |")
        print("|" + " --- |" * len(head))
        for g in sorted(table):
            row = table[g]
            rate = {a: r["rows"] / r["median_s"] / 1e9 for a, r in row.items()}
            cands = {a: v for a, v in rate.items() if a not in ("automatic", "global_hash")}
            best = max(cands, key=cands.get) if cands else None
            cells = [f"2^{int(round(math.log2(g)))}"]
            for a in algs:
                if a not in rate:
                    cells.append("-")
                    continue
                text = f"{rate[a]:.1f}"
                if a == best:
                    text = f"**{text}**"
                if a == "automatic":
                    text += f" ({row[a]['algorithm_run']})"
                cells.append(text)
            if best is None:
                cells += ["-", "-"]
            else:
                frac = row[best]["fraction_of_roofline"]
                cells.append(f"{cands[best]:.1f} ({best}), {100 * frac:.1f}%")
                if "automatic" in rate:
                    gap = rate["automatic"] / cands[best] - 1
                    cells.append(f"{100 * gap:+.1f}%")
                    if gap < -0.10:
                        misses.append(f"automatic {100 * gap:+.1f}% at {key} Zipf {zipf} {agg} g=2^{int(math.log2(g))}")
                else:
                    cells.append("-")
                if g <= 2 ** 16 and frac < 0.40 and zipf == 0:
                    misses.append(f"best {100 * frac:.1f}% of roofline at {key} Zipf {zipf} {agg} g=2^{int(math.log2(g))} ({best})")
                if g <= 2 ** 10 and "global_hash" in rate and "hash" in rate:
                    ratio = rate["hash"] / rate["global_hash"]
                    if ratio < 10:
                        misses.append(f"hash {ratio:.1f}x global_hash at {key} Zipf {zipf} {agg} g=2^{int(math.log2(g))}")
            print("| " + " | ".join(cells) + " |")
    print("\nTargets missed:" if misses else "\nTargets: none missed at the measured points.")
    for m in misses:
        print("- " + m)


if __name__ == "__main__":
    main(sys.argv[1:])
