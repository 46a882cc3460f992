#!/usr/bin/env python3
"""Usage: compare.py [--svg FILE] [--elections clean|first|all] [--log] RUN_DIR...

Algorithms side by side: messages per election against N. For each run it reads cluster.json (the
algorithm, N, topology, ID placement) and verdict.json (each election's messages, announcements and
bound); for each algorithm and N it prints the mean messages + announcements per election, their
range over the runs, and the algorithm's bound. --svg FILE also draws it: N across, messages up, a
line per algorithm, its bound dashed (--log: a logarithmic messages axis). By default only clean
elections count (no fault inside them); --elections first takes each run's first election, all takes
every one. A directory holding runs stands for every run in it.

Python standard library only: copy it and adapt it.
"""

import argparse
import json
import math
import os
import sys
from xml.sax.saxutils import escape

PALETTE = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#377eb8"]


def expand(path):
    """The run directories an argument stands for: itself, or the checked runs directly inside it."""
    if os.path.isfile(os.path.join(path, "verdict.json")):
        return [path]
    if os.path.isfile(os.path.join(path, "cluster.json")):
        raise ValueError(f"{path} has no verdict.json (leaderlab check {path} writes it)")
    if not os.path.isdir(path):
        raise ValueError(f"{path} is not a directory")
    runs = sorted(
        os.path.join(path, d)
        for d in os.listdir(path)
        if os.path.isfile(os.path.join(path, d, "verdict.json"))
    )
    if not runs:
        raise ValueError(f"{path} is neither a checked run nor a directory of runs")
    return runs


def load(run, which):
    """(series key parts, N, [(total, bound)]) of one run."""
    with open(os.path.join(run, "cluster.json")) as f:
        c = json.load(f)
    with open(os.path.join(run, "verdict.json")) as f:
        v = json.load(f)
    elections = (v.get("metrics") or {}).get("elections") or []
    if which == "first":
        elections = elections[:1]
    elif which == "clean":
        elections = [e for e in elections if not e.get("faults")]
    out = [(e["messages"] + e["announce"], e.get("bound")) for e in elections]
    key = (c.get("algo", "?"), c.get("topology", ""), c.get("placement", ""))
    return key, len(c.get("nodes") or []), out


def nice_ceil(v):
    if v <= 1:
        return 1
    p = 10 ** math.floor(math.log10(v))
    for m in (1, 2, 5, 10):
        if m * p >= v:
            return m * p
    return 10 * p


def svg_plot(series, path, log):
    """series: {name: {n: (mean, lo, hi, bound)}} -> an SVG line chart written with plain strings."""
    w, h, left, right, top, bottom = 760, 440, 70, 190, 40, 50
    pw, ph = w - left - right, h - top - bottom
    ns = sorted({n for s in series.values() for n in s})
    ys = [v for s in series.values() for (m, lo, hi, b) in s.values() for v in (m, hi, b) if v]
    ymax = nice_ceil(max(ys) if ys else 1)
    nmin, nmax = (ns[0], ns[-1]) if ns else (0, 1)
    if nmax == nmin:
        nmin, nmax = nmin - 1, nmax + 1

    def x(n):
        return left + (n - nmin) / (nmax - nmin) * pw

    def y(v):
        if log:
            v = max(v, 1)
            return top + ph - math.log10(v) / math.log10(max(ymax, 10)) * ph
        return top + ph - v / ymax * ph

    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">',
         f'<rect width="{w}" height="{h}" fill="#fff"/>',
         f'<text x="{left}" y="22" font-size="14" font-weight="bold">Messages + announcements per election against N</text>']
    ticks = [10 ** k for k in range(0, int(math.log10(max(ymax, 10))) + 1)] if log else [ymax * i / 4 for i in range(5)]
    for t in ticks:
        o.append(f'<line x1="{left}" x2="{left + pw}" y1="{y(t):.1f}" y2="{y(t):.1f}" stroke="#e5e7eb"/>')
        o.append(f'<text x="{left - 6}" y="{y(t) + 4:.1f}" text-anchor="end" fill="#555">{t:g}</text>')
    for n in ns:
        o.append(f'<line x1="{x(n):.1f}" x2="{x(n):.1f}" y1="{top + ph}" y2="{top + ph + 5}" stroke="#555"/>')
        o.append(f'<text x="{x(n):.1f}" y="{top + ph + 18}" text-anchor="middle" fill="#555">{n}</text>')
    o.append(f'<line x1="{left}" x2="{left + pw}" y1="{top + ph}" y2="{top + ph}" stroke="#555"/>')
    o.append(f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + ph}" stroke="#555"/>')
    o.append(f'<text x="{left + pw / 2}" y="{h - 10}" text-anchor="middle">N (nodes)</text>')
    o.append(f'<text transform="translate(16 {top + ph / 2}) rotate(-90)" text-anchor="middle">messages per election{" (log)" if log else ""}</text>')
    for i, (name, pts) in enumerate(sorted(series.items())):
        col = PALETTE[i % len(PALETTE)]
        keys = sorted(pts)
        line = " ".join(f"{x(n):.1f},{y(pts[n][0]):.1f}" for n in keys)
        o.append(f'<polyline class="series" data-name="{escape(name)}" fill="none" stroke="{col}" stroke-width="2" points="{line}"/>')
        bound = [(n, pts[n][3]) for n in keys if pts[n][3]]
        if bound:
            bl = " ".join(f"{x(n):.1f},{y(b):.1f}" for n, b in bound)
            o.append(f'<polyline class="bound" fill="none" stroke="{col}" stroke-width="1.2" stroke-dasharray="5 4" points="{bl}"/>')
        for n in keys:
            m, lo, hi, b = pts[n]
            o.append(f'<line x1="{x(n):.1f}" x2="{x(n):.1f}" y1="{y(lo):.1f}" y2="{y(hi):.1f}" stroke="{col}" stroke-width="1"/>')
            o.append(f'<circle class="point" cx="{x(n):.1f}" cy="{y(m):.1f}" r="3.5" fill="{col}"><title>{escape(name)}, N={n}: mean {m:.1f} (range {lo}-{hi}), bound {b if b else "none"}</title></circle>')
        ly = top + 10 + i * 36
        o.append(f'<line x1="{left + pw + 16}" x2="{left + pw + 40}" y1="{ly}" y2="{ly}" stroke="{col}" stroke-width="2"/>')
        o.append(f'<text x="{left + pw + 46}" y="{ly + 4}">{escape(name)}</text>')
        o.append(f'<line x1="{left + pw + 16}" x2="{left + pw + 40}" y1="{ly + 16}" y2="{ly + 16}" stroke="{col}" stroke-dasharray="5 4"/>')
        o.append(f'<text x="{left + pw + 46}" y="{ly + 20}" fill="#555">its bound</text>')
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")


def main(argv):
    p = argparse.ArgumentParser(
        prog="compare.py",
        description="Algorithms side by side: messages per election against N, from verdict.json and cluster.json.",
        usage="compare.py [--svg FILE] [--elections clean|first|all] [--log] RUN_DIR...",
    )
    p.add_argument("runs", nargs="+", metavar="RUN_DIR")
    p.add_argument("--svg", metavar="FILE", help="also draw the comparison as an SVG chart")
    p.add_argument("--elections", choices=["clean", "first", "all"], default="clean",
                   help="which elections count (default: clean ones, with no fault inside)")
    p.add_argument("--log", action="store_true", help="a logarithmic messages axis in the SVG")
    a = p.parse_args(argv)

    data, bad = {}, 0
    for arg in a.runs:
        try:
            for run in expand(arg):
                key, n, els = load(run, a.elections)
                data.setdefault(key, {}).setdefault(n, []).extend(els)
        except (ValueError, OSError, json.JSONDecodeError, KeyError) as e:
            print(f"compare.py: {e}", file=sys.stderr)
            bad += 1
    if not data:
        return 2

    # A series per algorithm; its topology and placement are named only when one algorithm was run
    # with several.
    variants = {}
    for algo, topo, place in data:
        variants.setdefault(algo, set()).add((topo, place))
    series = {}
    for (algo, topo, place), by_n in data.items():
        name = algo if len(variants[algo]) == 1 else f"{algo} ({topo}, {place})"
        for n, els in by_n.items():
            if not els:
                continue
            totals = [t for t, _ in els]
            bounds = [b for _, b in els if b]
            series.setdefault(name, {})[n] = (sum(totals) / len(totals), min(totals), max(totals), max(bounds) if bounds else None, len(totals))

    names = sorted(series)
    ns = sorted({n for s in series.values() for n in s})
    print(f"messages + announce per election ({a.elections} elections): mean [min-max] / bound (elections)")
    table = [["N"] + names]
    for n in ns:
        row = [str(n)]
        for name in names:
            if n in series[name]:
                m, lo, hi, b, k = series[name][n]
                row.append(f"{m:.1f} [{lo}-{hi}] / {b if b else '-'} ({k})")
            else:
                row.append("-")
        table.append(row)
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    for r in table:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    if a.svg:
        svg_plot({k: {n: v[:4] for n, v in s.items()} for k, s in series.items()}, a.svg, a.log)
    return 2 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
