#!/usr/bin/env python3
"""Render the figures of docs/BENCHMARKS.md from the JSON lines in bench/results.

    python3 bench/plot.py                      # every figure into docs/figures/
    python3 bench/plot.py --results DIR --out DIR

Input: bench/results/<device>/<experiment>.jsonl (one JSON object a line, as `joinery bench`
writes them) and bench/results/peers.json (peers measured outside the repository, with their
source). A file may hold several runs of one configuration: the lines of the latest date are
taken, and their medians' median is plotted. Needs matplotlib (bench/requirements.txt).
"""
import argparse
import json
import math
import os
import statistics
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
H200 = "nvidia-h200"
XEON = "h200-host-xeon-16c"
EPYC = "dev-2core-epyc"
# Device-to-device copy of the H200 that the joins' rooflines use (primitives section of
# BENCHMARKS.md: 4.25 TB/s, bytes read + written).
H200_COPY_BPS = 4.25e12
# Bytes the radix join must move a row of either side: 36 to partition (swwc + CUB pass with
# generated row ids: 4 histogram + 4 read + 8 written, 4 + 8 read + 8 written) and 8 to read
# the partitions once; plus the row ids of each match (BENCHMARKS.md, gpu-joins).
RADIX_BYTES_PER_ROW = 44
ALGO_STYLE = {
    "radix_hash": ("C0", "o"), "no_partition_hash": ("C1", "s"), "sort_merge": ("C2", "^"),
    "indexed_nested_loop": ("C3", "v"), "nested_loop": ("C4", "x"),
    "hash": ("C0", "o"), "partition_transformed": ("C1", "s"), "partition": ("C5", "s"),
    "sort_transformed": ("C2", "^"), "sort_dictionary": ("C3", "v"), "sort": ("C6", "^"),
    "global_hash": ("C7", "x"), "automatic": ("k", "."),
    "swwc": ("C0", "o"), "chunked_swwc": ("C1", "D"), "stable_cub": ("C2", "^"),
    "block_scatter": ("C3", "v"), "shared_atomic": ("C4", "x"), "hierarchical": ("C5", "s"),
}
MEASURED = {
    "seconds", "median_s", "min_s", "max_s", "gbps", "fraction_of_copy", "fraction_of_roofline",
    "copy_gbps", "throughput_gtuples_s", "throughput_grows_s", "phases", "phase_median_s",
    "checksum", "checksum_matches_joinery", "rows_out", "groups_out", "revision", "date", "runs",
    "warmup", "bytes", "bytes_moved", "roofline_s", "input_bytes", "predicted_gftr_ms",
    "predicted_gfur_ms", "strategy_used", "algorithm_run", "host_cpu", "device", "version",
    "engine", "tuples", "tag", "algorithm_used", "op_seconds", "phase_s", "bytes_h2d", "bytes_d2h",
    "link_h2d_gbs", "link_d2h_gbs", "both_ways_pinned_gbs", "h2d_pinned_gbs", "d2h_pinned_gbs",
    "h2d_pageable_staged_gbs", "d2h_pageable_staged_gbs", "host_parallel_copy_gbs_read_plus_write",
}


def load(results, device, experiment):
    """The latest runs of every configuration in results/device/experiment.jsonl: a list of
    dicts, one a configuration, whose median_s is the median of the latest date's medians."""
    path = os.path.join(results, device, experiment + ".jsonl")
    if not os.path.exists(path):
        return []
    groups = defaultdict(list)
    for line in open(path):
        if line.strip():
            r = json.loads(line)
            if "median_s" not in r:  # a measurement of the machine (out-of-core's link line)
                continue
            config = {k: v for k, v in r.items() if k not in MEASURED}
            groups[json.dumps(config, sort_keys=True)].append(r)
    out = []
    for rows in groups.values():
        last = max(str(r.get("date")) for r in rows)
        rows = [r for r in rows if str(r.get("date")) == last]
        r = dict(rows[-1])
        r["median_s"] = statistics.median(x["median_s"] for x in rows)
        r["n_lines"] = len(rows)
        out.append(r)
    return out


def where(rows, **kw):
    return [r for r in rows if all(r.get(k) == v for k, v in kw.items())]


def provenance(rows):
    dates = sorted({str(r.get("date")) for r in rows})
    revs = sorted({str(r.get("revision")) for r in rows})
    d = dates[0] if len(dates) == 1 else dates[0] + ".." + dates[-1]
    return d + ", rev. " + ", ".join(revs)


def log2_label(v):
    e = math.log2(v)
    return "2^%d" % e if e == int(e) else "%g" % v


def pow2_ticks(ax, values, step=2):
    """Ticks at every step-th power of two of the range of values (a log2 x axis)."""
    lo = int(math.floor(math.log2(min(values))))
    hi = int(math.ceil(math.log2(max(values))))
    ticks = [2.0 ** e for e in range(lo, hi + 1) if (e - lo) % step == 0]
    ax.set_xticks(ticks, ["$2^{%d}$" % round(math.log2(t)) for t in ticks])
    ax.minorticks_off()


def new_fig(w=6.4, h=4.0, n=1, m=1):
    fig, axes = plt.subplots(m, n, figsize=(w, h), squeeze=False)
    return fig, axes


def finish(fig, out, name, source):
    fig.text(0.005, 0.005, source, fontsize=6, color="0.35", ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    path = os.path.join(out, name)
    fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)
    print("wrote", os.path.relpath(path, ROOT))
    return path


def peers_of(peers, experiment, device=H200):
    return [p for p in peers if p["experiment"] == experiment and p["device"] == device]


# ----------------------------------------------------------------------------------------- joins
def join_tp(r):
    return r["tuples"] / r["median_s"] / 1e9


def radix_roofline(r):
    """G tuples/s the radix join's own bytes allow at the H200's copy bandwidth."""
    id_bytes = 4 if r.get("index_type") == "int32" else 8
    nbytes = RADIX_BYTES_PER_ROW * r["tuples"] + 2 * id_bytes * r["rows_out"]
    return r["tuples"] / (nbytes / H200_COPY_BPS) / 1e9


def gpu_join_lines(ax, rows, xkey, xs_label=None, roofline=True):
    for algo in ["radix_hash", "no_partition_hash", "sort_merge", "indexed_nested_loop"]:
        pts = sorted(((r[xkey], join_tp(r)) for r in rows if r["algorithm"] == algo), key=lambda p: p[0])
        if pts:
            c, m = ALGO_STYLE[algo]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=m, color=c, label=algo)
    if roofline:
        pts = sorted(((r[xkey], radix_roofline(r)) for r in rows if r["algorithm"] == "radix_hash"),
                     key=lambda p: p[0])
        ax.plot([p[0] for p in pts], [p[1] for p in pts], ls="--", color="C0", lw=1,
                label="radix_hash roofline (its bytes at 4.25 TB/s)")
    ax.set_ylabel("G tuples/s  ((|R|+|S|) / time)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)


def fig_gpu_joins(results, peers, out):
    rows = [r for r in load(results, H200, "gpu-joins") if r["backend"] == "gpu" and not r.get("writer")]
    if not rows:
        return []
    made = []
    default = dict(key_type="int32", zipf=0.0, match_ratio=1.0, mn_keys=None)
    # 1. The default workload against the peers.
    fig, ax = new_fig(7.2, 4.2)
    ax = ax[0][0]
    dflt = where(rows, build_rows=2**27, probe_rows=2**28, **default)
    bars = []
    for algo in ["radix_hash", "no_partition_hash", "sort_merge", "indexed_nested_loop"]:
        for ids in ["int32", "int64"]:
            rr = where(dflt, algorithm=algo, index_type=ids)
            if rr:
                bars.append(("joinery " + algo + "\n(" + ids + " ids)", join_tp(rr[0]), ALGO_STYLE[algo][0]))
    for p in peers_of(peers, "gpu-joins"):
        for pt in p["points"]:
            if pt.get("build_rows") == 2**27 and pt.get("probe_rows") == 2**28 and pt.get("key_type") == "int32":
                name = p["peer"].split(" (")[0]
                if name.startswith("cuCollections") and any(b[0].startswith("cuCollections") for b in bars):
                    continue  # the latest measurement (listed first in peers.json) only
                bars.append((name + ("\n" + pt["what"] if "what" in pt else ""), pt["value"], "0.6"))
    seen = set()
    bars = [b for b in bars if not (b[0] in seen or seen.add(b[0]))]
    ax.barh(range(len(bars)), [b[1] for b in bars], color=[b[2] for b in bars])
    ax.set_yticks(range(len(bars)), [b[0] for b in bars], fontsize=7)
    ax.invert_yaxis()
    for i, b in enumerate(bars):
        ax.text(b[1] + 0.5, i, "%.1f" % b[1], va="center", fontsize=7)
    rr = where(dflt, algorithm="radix_hash", index_type="int32")
    if rr:
        ax.axvline(radix_roofline(rr[0]), ls="--", color="C0", lw=1)
        ax.text(radix_roofline(rr[0]), len(bars) - 0.5, " radix_hash roofline\n (int32 ids)", fontsize=7,
                color="C0", va="bottom")
    ax.set_xlabel("G tuples/s, |R| = 2^27 PK, |S| = 2^28 FK, int32 keys (grey: peers, same H200)")
    ax.grid(axis="x", alpha=0.3)
    made.append(finish(fig, out, "gpu-joins-default.svg", "H200, " + provenance(dflt) + "; peers: bench/results/peers.json"))
    # 2. |R| = |S| from 2^20 to 2^28.
    fig, ax = new_fig()
    ax = ax[0][0]
    sz = [r for r in where(rows, index_type="int64", **default) if r["build_rows"] == r["probe_rows"]]
    gpu_join_lines(ax, sz, "build_rows")
    ax.set_xscale("log", base=2)
    pow2_ticks(ax, [r["build_rows"] for r in sz], step=2)
    ax.set_xlabel("|R| = |S| (rows, int32 keys, PK-FK)")
    ax.legend(fontsize=7)
    made.append(finish(fig, out, "gpu-joins-size.svg", "H200, int64 ids, " + provenance(sz)))
    # 3. Zipf skew of the foreign keys.
    fig, ax = new_fig()
    ax = ax[0][0]
    zr = where(rows, build_rows=2**27, probe_rows=2**28, key_type="int32", match_ratio=1.0, mn_keys=None,
               index_type="int64")
    gpu_join_lines(ax, zr, "zipf")
    ax.set_xlabel("Zipf exponent of the probe side's keys (|R| = 2^27, |S| = 2^28)")
    ax.legend(fontsize=7)
    made.append(finish(fig, out, "gpu-joins-zipf.svg", "H200, int64 ids, " + provenance(zr)))
    # 4. Match ratio.
    fig, ax = new_fig()
    ax = ax[0][0]
    mr = where(rows, build_rows=2**27, probe_rows=2**28, key_type="int32", zipf=0.0, mn_keys=None,
               index_type="int64")
    gpu_join_lines(ax, mr, "match_ratio")
    ax.set_xlabel("match ratio (share of probe rows with a match; |R| = 2^27, |S| = 2^28)")
    ax.legend(fontsize=7)
    made.append(finish(fig, out, "gpu-joins-match.svg", "H200, int64 ids, " + provenance(mr)))
    # 5. Build side against a fixed probe side.
    fig, ax = new_fig()
    ax = ax[0][0]
    br = where(rows, probe_rows=2**28, index_type="int64", **default)
    gpu_join_lines(ax, br, "build_rows")
    ax.set_xscale("log", base=2)
    pow2_ticks(ax, [r["build_rows"] for r in br], step=1)
    ax.set_xlabel("|R| (build rows) with |S| = 2^28 (|R|:|S| from 1:32 to 1:1)")
    ax.legend(fontsize=7)
    made.append(finish(fig, out, "gpu-joins-build-size.svg", "H200, int64 ids, " + provenance(br)))
    return made


def fig_wide_joins(results, peers, out):
    rows = load(results, H200, "wide-joins")
    if not rows:
        return []
    made = []

    def ms(r):
        return r["median_s"] * 1e3

    # GFUR vs GFTR against the match ratio, with the model's predicted materialization.
    fig, axes = new_fig(9.0, 3.8, n=2)
    sel = [r for r in rows if r["build_rows"] == 2**26 and r["probe_rows"] == 2**26 and r["payloads"] == 2
           and r["zipf"] == 0.0 and r.get("mn_keys") is None and r["key_type"] == "int32"]
    for ax, algo in zip(axes[0], ["radix_hash", "sort_merge"]):
        for strat, c in [("gfur", "C3"), ("gftr", "C0"), ("automatic", "k")]:
            pts = sorted((r["match_ratio"], ms(r)) for r in sel if r["algorithm"] == algo and r["strategy"] == strat)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o" if strat != "automatic" else ".",
                        color=c, ls="-" if strat != "automatic" else ":", label="measured join, " + strat)
        gf = sorted((r["match_ratio"], r["predicted_gfur_ms"], r["predicted_gftr_ms"]) for r in sel
                    if r["algorithm"] == algo and r["strategy"] == "gfur")
        ax.plot([p[0] for p in gf], [p[1] for p in gf], ls="--", color="C3", label="model: GFUR materialization")
        ax.plot([p[0] for p in gf], [p[2] for p in gf], ls="--", color="C0", label="model: GFTR materialization")
        ax.set_title(algo + ", |R| = |S| = 2^26, 2 int32 payloads a side", fontsize=8)
        ax.set_xlabel("match ratio")
        ax.set_ylabel("ms")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    made.append(finish(fig, out, "wide-joins-match.svg", "H200, " + provenance(sel)))
    # Payload columns a side.
    fig, axes = new_fig(9.0, 3.8, n=2)
    sel = [r for r in rows if r["build_rows"] == 2**25 and r["probe_rows"] == 2**26 and r["match_ratio"] == 1.0
           and r["zipf"] == 0.0 and r.get("mn_keys") is None and r["key_type"] == "int32"]
    for ax, algo in zip(axes[0], ["radix_hash", "sort_merge"]):
        for strat, c in [("gfur", "C3"), ("gftr", "C0")]:
            pts = sorted((r["payloads"], ms(r)) for r in sel if r["algorithm"] == algo and r["strategy"] == strat)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", color=c, label="measured join, " + strat)
        gf = sorted((r["payloads"], r["predicted_gfur_ms"], r["predicted_gftr_ms"]) for r in sel
                    if r["algorithm"] == algo and r["strategy"] == "gfur")
        ax.plot([p[0] for p in gf], [p[1] for p in gf], ls="--", color="C3", label="model: GFUR materialization")
        ax.plot([p[0] for p in gf], [p[2] for p in gf], ls="--", color="C0", label="model: GFTR materialization")
        ax.set_title(algo + ", |R| = 2^25, |S| = 2^26, 100% match", fontsize=8)
        ax.set_xlabel("int32 payload columns a side")
        ax.set_ylabel("ms")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    made.append(finish(fig, out, "wide-joins-payloads.svg", "H200, " + provenance(sel)))
    # The wide default against Wu et al.'s artifact.
    fig, ax = new_fig(7.0, 3.4)
    ax = ax[0][0]
    sel = [r for r in rows if r["build_rows"] == 2**27 and r["probe_rows"] == 2**28 and r["payloads"] == 2]
    bars = []
    for algo in ["radix_hash", "sort_merge", "no_partition_hash"]:
        for strat in ["gftr", "gfur"]:
            rr = [r for r in sel if r["algorithm"] == algo and r.get("strategy") == strat]
            if not rr and algo == "no_partition_hash":
                rr = [r for r in sel if r["algorithm"] == algo]
                strat = "gfur"
            if rr:
                bars.append(("joinery %s %s" % (algo, strat.upper()), join_tp(rr[0]), ALGO_STYLE[algo][0]))
    for p in peers_of(peers, "wide-joins"):
        for pt in p["points"]:
            bars.append(("Wu et al. " + pt["what"], pt["value"], "0.6"))
    seen = set()
    bars = [b for b in bars if not (b[0] in seen or seen.add(b[0]))]
    ax.barh(range(len(bars)), [b[1] for b in bars], color=[b[2] for b in bars])
    ax.set_yticks(range(len(bars)), [b[0] for b in bars], fontsize=7)
    ax.invert_yaxis()
    for i, b in enumerate(bars):
        ax.text(b[1] + 0.2, i, "%.1f" % b[1], va="center", fontsize=7)
    ax.set_xlabel("G tuples/s, wide default: 2^27 x 2^28, 2 int32 payloads a side, table out (grey: peer)")
    ax.grid(axis="x", alpha=0.3)
    made.append(finish(fig, out, "wide-joins-default.svg", "H200, " + provenance(sel) + "; peers: bench/results/peers.json"))
    return made


# -------------------------------------------------------------------------------------- group-by
def gb_tp(r):
    return r["rows"] / r["median_s"] / 1e9


def gb_roofline(rows):
    v = [r["rows"] / r["roofline_s"] / 1e9 for r in rows if r.get("roofline_s")]
    return statistics.median(v) if v else None


def fig_gpu_groupby(results, peers, out):
    rows = load(results, H200, "gpu-groupby")
    if not rows:
        return []
    made = []
    dense = [r for r in rows if not r.get("spread_keys") and r["zipf"] == 0.0 and r["rows"] == 2**28]
    algos = ["hash", "partition_transformed", "partition", "sort_transformed", "sort_dictionary", "sort",
             "global_hash", "automatic"]
    fig, axes = new_fig(10.0, 7.0, n=2, m=2)
    used = []
    for i, kt in enumerate(["int32", "int64"]):
        for j, agg in enumerate(["max", "sum"]):
            ax = axes[i][j]
            sel = [r for r in dense if r["key_type"] == kt and r["aggregate"] == agg]
            used += sel
            for algo in algos:
                pts = sorted((r["groups"], gb_tp(r)) for r in sel if r["algorithm"] == algo)
                if pts:
                    c, m = ALGO_STYLE[algo]
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=m, ms=3, color=c, label=algo,
                            ls=":" if algo == "automatic" else "-")
            rl = gb_roofline(sel)
            if rl:
                ax.axhline(rl, ls="--", color="0.3", lw=1, label="read-once roofline")
            for p in peers_of(peers, "gpu-groupby"):
                pts = [pt for pt in p["points"] if pt["key_type"] == kt and pt["aggregate"] == agg]
                if pts:
                    ax.plot([pt["groups"] for pt in pts], [pt["value"] for pt in pts], ls="none", marker="*",
                            ms=8, color="C9", label="cuco hash group-by (peer)")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            pow2_ticks(ax, [r["groups"] for r in sel], step=4)
            ax.set_title("%s keys, %s of two int32 columns, 2^28 rows, dense keys" % (kt, agg.upper()), fontsize=8)
            ax.set_xlabel("groups g")
            ax.set_ylabel("G rows/s")
            ax.grid(alpha=0.3)
            if i == 0:
                ax.legend(fontsize=6, ncol=2, loc="lower left")
    made.append(finish(fig, out, "gpu-groupby-groups.svg", "H200, " + provenance(used) + "; peers: bench/results/peers.json"))
    # Dense against spread keys (HGB).
    spread = [r for r in rows if r.get("spread_keys") and r["zipf"] == 0.0]
    if spread:
        fig, axes = new_fig(9.0, 3.8, n=2)
        used = []
        for ax, agg in zip(axes[0], ["max", "sum"]):
            gmax = max(r["groups"] for r in spread)
            d = [r for r in dense if r["key_type"] == "int32" and r["aggregate"] == agg and r["algorithm"] == "hash"
                 and r["groups"] <= gmax]
            s = [r for r in spread if r["key_type"] == "int32" and r["aggregate"] == agg and r["algorithm"] == "hash"]
            used += d + s
            for sel, label, c in [(d, "hash, dense keys 0..g-1", "C0"), (s, "hash, spread keys (--spread-keys)", "C1")]:
                pts = sorted((r["groups"], gb_tp(r)) for r in sel)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", color=c, label=label)
            rl = gb_roofline(d + s)
            if rl:
                ax.axhline(rl, ls="--", color="0.3", lw=1, label="read-once roofline")
            ax.set_xscale("log", base=2)
            pow2_ticks(ax, [r["groups"] for r in s], step=2)
            ax.set_ylim(bottom=0)
            ax.set_title("int32 keys, %s of two int32 columns, 2^28 rows" % agg.upper(), fontsize=8)
            ax.set_xlabel("groups g")
            ax.set_ylabel("G rows/s")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        made.append(finish(fig, out, "gpu-groupby-spread.svg", "H200, " + provenance(used)))
    # Zipf skew: the best algorithm at each g, and automatic.
    fig, axes = new_fig(9.0, 3.8, n=2)
    used = []
    for ax, agg in zip(axes[0], ["max", "sum"]):
        for k, z in enumerate([0.0, 0.5, 1.0, 1.5]):
            sel = [r for r in rows if not r.get("spread_keys") and r["zipf"] == z and r["key_type"] == "int32"
                   and r["aggregate"] == agg and r["groups"] <= 2**20]
            used += sel
            best = defaultdict(float)
            for r in sel:
                if r["algorithm"] != "automatic":
                    best[r["groups"]] = max(best[r["groups"]], gb_tp(r))
            pts = sorted(best.items())
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, color="C%d" % k,
                    label="Zipf %.1f, best" % z)
            auto = sorted((r["groups"], gb_tp(r)) for r in sel if r["algorithm"] == "automatic")
            ax.plot([p[0] for p in auto], [p[1] for p in auto], ls=":", color="C%d" % k, label="Zipf %.1f, automatic" % z)
        rl = gb_roofline(used)
        if rl:
            ax.axhline(rl, ls="--", color="0.3", lw=1, label="read-once roofline")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        pow2_ticks(ax, [r["groups"] for r in used], step=4)
        ax.set_title("int32 keys, %s of two int32 columns, 2^28 rows" % agg.upper(), fontsize=8)
        ax.set_xlabel("groups g")
        ax.set_ylabel("G rows/s")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6, ncol=2)
    made.append(finish(fig, out, "gpu-groupby-zipf.svg", "H200, " + provenance(used)))
    return made


# ------------------------------------------------------------------------------------ primitives
def fig_primitives(results, peers, out):
    rows = [r for r in load(results, H200, "primitives") if r["rows"] == 2**28]
    if not rows:
        return []
    made = []
    fig, axes = new_fig(10.0, 4.0, n=2)
    used = []
    for ax, (kb, pb) in zip(axes[0], [(4, 4), (8, 8)]):
        sel = [r for r in rows if r["key_bytes"] == kb and r["payload_bytes"] == pb and r["zipf"] == 0.0]
        used += sel
        for prim, algo, label in [("radix_partition_tuples", "chunked_swwc", "radix_partition_tuples (interleaved)"),
                                  ("radix_partition", "swwc", "swwc"), ("radix_partition", "stable_cub", "stable_cub"),
                                  ("radix_partition", "block_scatter", "block_scatter"),
                                  ("radix_partition", "hierarchical", "hierarchical"),
                                  ("radix_partition", "shared_atomic", "shared_atomic")]:
            pts = sorted((r["bits"], r["bytes"] / r["median_s"] / 1e9) for r in sel
                         if r["primitive"] == prim and r.get("algorithm") == algo)
            if pts:
                c, m = ALGO_STYLE[algo]
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=m, color=c, label=label)
        copy = [r["bytes"] / r["median_s"] / 1e9 for r in sel if r["primitive"] == "copy"]
        if copy:
            cp = statistics.median(copy)
            ax.axhline(cp, ls="--", color="0.3", lw=1, label="device copy (roofline)")
            ax.axhline(0.7 * cp, ls=":", color="0.5", lw=1, label="70% of copy")
        if (kb, pb) == (4, 4):
            for p in peers_of(peers, "primitives"):
                pts = sorted((pt["bits"], pt["value"]) for pt in p["points"])
                name = p["peer"]
                if "Hierarchical" in name:
                    ax.plot([q[0] for q in pts], [q[1] for q in pts], ls="-.", color="C5", lw=1,
                            label="Triton artifact Hierarchical (issue 4)")
                elif "Linear" in name:
                    ax.plot([q[0] for q in pts], [q[1] for q in pts], ls="-.", color="0.4", lw=1,
                            label="Triton artifact best, Linear (issue 4)")
                else:
                    ax.plot([q[0] for q in pts], [q[1] for q in pts], ls="none", marker="*", ms=8, color="C9",
                            label="Triton artifact best (2026-11-27)")
        ax.set_title("2^28 tuples of %d+%d bytes, uniform keys" % (kb, pb), fontsize=8)
        ax.set_xlabel("radix bits (fanout 2^bits)")
        ax.set_ylabel("GB/s (read + written, histogram + scan + pass)")
        ax.set_xticks([8, 9, 10, 11])
        ax.set_ylim(0, 1.5 * (statistics.median(copy) if copy else ax.get_ylim()[1]))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6, ncol=2, loc="upper center")
    made.append(finish(fig, out, "primitives-partition.svg", "H200, " + provenance(used) + "; peers: bench/results/peers.json"))
    # Map, gather, scatter, sorts, split against the copy.
    fig, ax = new_fig(7.5, 3.8)
    ax = ax[0][0]
    items = [("map", "hash_murmur", "map (murmur)"), ("gather", "clustered", "gather, clustered"),
             ("gather", "unclustered", "gather, unclustered"), ("scatter", "clustered", "scatter, clustered"),
             ("scatter", "unclustered", "scatter, unclustered"), ("prefix_scan", None, "prefix scan (int64)"),
             ("radix_histogram", None, "radix histogram"), ("split", "stable_cub", "split (256 groups)"),
             ("sort_pairs", "radix_cub", "CUB radix sort of pairs"),
             ("merge_sort_pairs", "merge_path", "merge sort of pairs")]
    used = []
    for k, width in enumerate([4, 8]):
        vals = []
        for prim, algo, label in items:
            rr = [r for r in rows if r["primitive"] == prim and r.get("algorithm") == algo and r["zipf"] == 0.0
                  and width in (r["key_bytes"], r["payload_bytes"]) and (r.get("bits") in (None, 8))]
            if prim == "prefix_scan" and width == 4:
                rr = []
            used += rr
            copy = [r for r in rows if r["primitive"] == "copy" and r["zipf"] == 0.0 and r["key_bytes"] == width]
            if rr and all(r.get("fraction_of_copy") for r in rr):
                frac = statistics.median(r["fraction_of_copy"] for r in rr)  # against its run's own copy
            elif rr and copy:
                frac = statistics.median(r["bytes"] / r["median_s"] for r in rr) / statistics.median(
                    r["bytes"] / r["median_s"] for r in copy)
            else:
                frac = float("nan")
            vals.append(100 * frac)
        ax.barh([i + 0.4 * k for i in range(len(items))], vals, height=0.4, label="%d-byte values / keys" % width,
                color="C%d" % k)
    ax.set_yticks([i + 0.2 for i in range(len(items))], [it[2] for it in items], fontsize=7)
    ax.invert_yaxis()
    ax.axvline(100, ls="--", color="0.3", lw=1)
    ax.set_xlabel("% of the device copy (bytes read + written), 2^28 elements")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=7)
    made.append(finish(fig, out, "primitives-other.svg", "H200, " + provenance(used)))
    return made


# ----------------------------------------------------------------------------------------- CPU
def cpu_figure(results, out, experiment, peer, name, draw, xkey, step, title_tail, xlabel, ylabel):
    """Two panels (the H200's host, the development box) of one CPU experiment beside its DuckDB
    peer; draw(ax, rows, duck, bandwidth GB/s or None) plots the series."""
    fig, axes = new_fig(10.0, 4.0, n=2)
    any_data = False
    for ax, (dev, title) in zip(axes[0], [(XEON, "H200's host, 16-core Xeon, 16 threads"),
                                          (EPYC, "development box, 2-core EPYC, 2 threads")]):
        rows = load(results, dev, experiment)
        if not rows:
            continue
        any_data = True
        bw = load(results, dev, "cpu-bandwidth")
        gbs = bw[0]["bytes_moved"] / bw[0]["median_s"] / 1e9 if bw else None
        draw(ax, rows, load(results, dev, peer), gbs)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        pow2_ticks(ax, [r[xkey] for r in rows], step=step)
        ax.set_title(title + title_tail, fontsize=8)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    if not any_data:
        plt.close(fig)
        return []
    used = load(results, XEON, experiment) + load(results, EPYC, experiment)
    return [finish(fig, out, name, provenance(used))]


def fig_cpu(results, peers, out):
    def joins(ax, rows, duck, gbs):
        for algo in ["radix_hash", "sort_merge", "indexed_nested_loop", "no_partition_hash"]:
            pts = sorted((r["build_rows"], join_tp(r)) for r in rows if r["algorithm"] == algo and r["key_type"] == "int32")
            c, m = ALGO_STYLE[algo]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=m, color=c, label=algo)
        pts = sorted((r["build_rows"], r["tuples"] / r["median_s"] / 1e9) for r in duck
                     if r["key_type"] == "int32" and r["build_rows"] == r["probe_rows"])
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="*", ms=8, color="C9", label="DuckDB 2.0.0 (peer)")
        if gbs:
            ax.axhline(gbs / 8, ls="--", color="0.3", lw=1, label="read both inputs once (8 B a tuple)")

    def groupbys(ax, rows, duck, gbs):
        for algo in ["hash", "sort"]:
            pts = sorted((r["groups"], r["rows"] / r["median_s"] / 1e9) for r in rows if r["algorithm"] == algo)
            c, m = ALGO_STYLE[algo]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=m, color=c, label=algo)
        pts = sorted((r["groups"], r["rows"] / r["median_s"] / 1e9) for r in duck)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="*", ms=8, color="C9", label="DuckDB 2.0.0 (peer)")
        if gbs:
            ax.axhline(gbs / 12, ls="--", color="0.3", lw=1, label="read once (12 B a row)")

    return (cpu_figure(results, out, "cpu-join-scaling", "duckdb-join", "cpu-joins.svg", joins,
                       "build_rows", 2, ", int32 keys, |R| = |S|", "|R| = |S|", "G tuples/s") +
            cpu_figure(results, out, "cpu-groupby", "duckdb-groupby", "cpu-groupby.svg", groupbys,
                       "groups", 4, ", MAX, MAX, SUM", "groups g", "G rows/s"))


# ------------------------------------------------------------------------------- out of core
def fig_out_of_core(results, peers, out):
    """Data in host memory: the streamed sweep against the link roofline, and the default join
    from pageable and pinned memory by each route beside the device-resident ceiling."""
    rows = load(results, H200, "out-of-core")
    sweep = sorted(where(rows, case="streamed"), key=lambda r: r["probe_rows"])
    default = [r for r in where(rows, case="default") if r["backend"] == "gpu"]
    if not sweep or not default:
        return []
    fig, axes = new_fig(9.6, 3.6, n=2)
    ax = axes[0][0]
    xs = [r["probe_rows"] for r in sweep]
    tuples = [r["build_rows"] + r["probe_rows"] for r in sweep]
    ax.plot(xs, [t / r["median_s"] / 1e9 for t, r in zip(tuples, sweep)], marker="o", color="C0",
            label="streamed, |R| = 2^27 resident")
    ax.plot(xs, [t / r["roofline_s"] / 1e9 for t, r in zip(tuples, sweep)], ls="--", color="C0",
            lw=1, label="link roofline (|R|+|S| x 8 B at the pinned H2D rate)")
    ax.set_xscale("log", base=2)
    pow2_ticks(ax, xs, 1)
    ax.set_xlabel("|S| (pinned host memory, 4-byte key + 4-byte payload)")
    ax.set_ylabel("G tuples/s  ((|R|+|S|) / wall time)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title("streamed join from pinned host memory, aggregate output")
    ax = axes[0][1]
    order = [("device", "radix_hash"), ("pinned_host", "streamed"), ("pinned_host", "radix_hash"),
             ("host", "streamed"), ("host", "radix_hash")]
    labels, ms, roof = [], [], []
    for space, algo in order:
        hit = where(default, input_space=space, algorithm=algo)
        if hit:
            labels.append("%s, %s" % (space, algo))
            ms.append(hit[0]["median_s"] * 1e3)
            roof.append(hit[0].get("roofline_s", 0) * 1e3)
    ys = list(range(len(labels)))
    ax.barh(ys, ms, color="C0", alpha=0.8, label="median wall time")
    ax.scatter([r for r in roof if r > 0], [y for y, r in zip(ys, roof) if r > 0], marker="|",
               s=300, color="k", label="link roofline")
    ax.set_yticks(ys, labels)
    ax.invert_yaxis()
    ax.set_xlabel("ms (2^27 x 2^28, one 4-byte payload a side, aggregate output)")
    ax.grid(alpha=0.3, axis="x")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title("the default join by where its inputs start")
    return [finish(fig, out, "out-of-core.svg", "H200, " + provenance(sweep + default))]


def fig_out_of_core_triton(results, peers, out):
    """Past the device: triton's cached share and its sizes around a budget (no cliff), and the
    streamed group-by by group count, each against the link roofline."""
    rows = load(results, H200, "out-of-core-triton")
    gb = load(results, H200, "out-of-core-groupby")
    share = sorted([r for r in where(rows, case="triton", algorithm="triton")
                    if r.get("cached_share_asked", -1) >= 0], key=lambda r: r["cached_share"])
    cliff = where(rows, case="cliff")
    groups = where(gb, case="groupby")
    if not share or not cliff or not groups:
        return []
    fig, axes = new_fig(12.0, 3.6, n=3)
    ax = axes[0][0]
    xs = [r["cached_share"] for r in share]
    ax.plot(xs, [r["throughput_gtuples_s"] for r in share], marker="o", color="C0", label="triton")
    ax.plot(xs, [(r["build_rows"] + r["probe_rows"]) / r["roofline_s"] / 1e9 for r in share],
            ls="--", color="C0", lw=1, label="link roofline of its two passes")
    ax.set_xlabel("share of partitions cached in device memory")
    ax.set_ylabel("G tuples/s  ((|R|+|S|) / wall time)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title("triton, 2^28 x 2^28 rows of 8 + 8 bytes, pinned memory")
    ax = axes[0][1]
    for algo, color in (("automatic", "k"), ("triton", "C0")):
        pts = sorted(where(cliff, algorithm=algo), key=lambda r: r["build_rows"])
        xs = [2 * 16 * r["build_rows"] / r["device_budget"] for r in pts]
        label = "automatic (streamed, then triton)" if algo == "automatic" else "triton"
        ax.plot(xs, [r["throughput_gtuples_s"] for r in pts], marker="o", color=color, label=label)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("data / device memory budget (1 GiB)")
    ax.set_ylabel("G tuples/s")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper right")
    ax.set_title("no cliff: Lutz's workload from 1/4 to 8x the budget")
    ax = axes[0][2]
    for algo, space, color, label in (("streamed", "pinned_host", "C0", "streamed group-by"),
                                      ("automatic", "pinned_host", "C1", "one copy, then the in-GPU group-by")):
        pts = sorted(where(groups, algorithm=algo, input_space=space), key=lambda r: r["groups"])
        ax.plot([r["groups"] for r in pts], [r["throughput_grows_s"] for r in pts], marker="o",
                color=color, label=label)
    pts = sorted(where(groups, algorithm="streamed"), key=lambda r: r["groups"])
    ax.plot([r["groups"] for r in pts], [r["rows"] / r["roofline_s"] / 1e9 for r in pts], ls="--",
            color="k", lw=1, label="link roofline (12 bytes a row)")
    ax.set_xscale("log", base=2)
    pow2_ticks(ax, [r["groups"] for r in pts], 4)
    ax.set_xlabel("groups")
    ax.set_ylabel("G rows/s")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower left")
    ax.set_title("group-by of 2^30 rows in pinned memory, SUM of two int32")
    return [finish(fig, out, "out-of-core-triton.svg",
                   "H200, " + provenance(share + cliff + groups))]


def fig_multi_gpu(results, peers, out):
    """Several GPUs: the joins' wall time by phase on 1 and more GPUs, per workload and input
    space, beside the single-GPU radix join."""
    rows = load(results, "nvidia-h200-x4", "multi-gpu")
    joins = [r for r in rows if r["case"].startswith("workload_")]
    if not joins:
        return []
    panels = sorted({(r["case"], r["input_space"]) for r in joins})
    fig, axes = new_fig(4.8 * len(panels), 3.4, n=len(panels))
    phases = ["share", "key ranges", "partition", "exchange", "local join", "gather output"]
    for (case, space), ax in zip(panels, axes[0]):
        runs = where(joins, case=case, input_space=space)
        bars = [r for r in runs if r["algorithm"].startswith("multi_gpu")]
        bars.sort(key=lambda r: (r["algorithm"], r["gpus"]))
        labels = ["%s, %d GPU%s" % (r["algorithm"][10:], r["gpus"], "s" if r["gpus"] > 1 else "")
                  for r in bars]
        ys = list(range(len(bars)))
        left = [0.0] * len(bars)
        for i, ph in enumerate(phases):
            w = [r["phase_s"].get(ph, 0) * 1e3 for r in bars]
            ax.barh(ys, w, left=left, color="C%d" % i, label=ph)
            left = [a + b for a, b in zip(left, w)]
        # Distributed inputs have no single-GPU run of their own: the one from GPU 0's memory.
        single = where(runs, algorithm="radix_hash") or where(
            joins, case=case, input_space="device", algorithm="radix_hash")
        if single:
            ax.axvline(single[0]["median_s"] * 1e3, color="k", ls="--", lw=1,
                       label="radix_hash on 1 GPU")
        ax.set_yticks(ys, labels)
        ax.invert_yaxis()
        ax.set_xlabel("ms (phases of the median run's last call)")
        ax.grid(alpha=0.3, axis="x")
        ax.set_title("workload %s, inputs in %s" % (case[-1], space))
    axes[0][0].legend(fontsize=6, loc="lower right")
    return [finish(fig, out, "multi-gpu.svg", "4 x H200, " + provenance(joins))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "figures"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "joinery", "font.size": 8,
                         "axes.titlesize": 8, "figure.dpi": 100})
    peers_path = os.path.join(args.results, "peers.json")
    peers = json.load(open(peers_path))["peers"] if os.path.exists(peers_path) else []
    made = []
    for f in (fig_gpu_joins, fig_wide_joins, fig_gpu_groupby, fig_primitives, fig_cpu,
              fig_out_of_core, fig_out_of_core_triton, fig_multi_gpu):
        made += f(args.results, peers, args.out)
    if not made:
        sys.exit("no results found under " + args.results)
    print(len(made), "figures")


if __name__ == "__main__":
    main()
