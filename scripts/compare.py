#!/usr/bin/env python3
"""Usage: compare.py [-h] [--svg FILE] [--elections clean|first|all] [--log] RUN_DIR...

Algorithms side by side: messages per election against N. For each run it reads cluster.json (the
algorithm, N, topology, ID placement) and verdict.json (each election's messages, announcements and
bound); for each algorithm and N it prints the mean messages + announcements per election, their
range over the runs, and the algorithm's bound. --svg FILE also draws it: N across, messages up, a
line per algorithm, its bound dashed, the legend right of the plot (--log: both axes logarithmic,
ticks at 1, 2 and 5 times the powers of ten). By default only clean elections count (no fault inside
them); --elections first takes each run's first election, all takes every one.

A directory that is not itself a run stands for every run directory (one holding cluster.json) at any
depth under it; a run directory's own subdirectories (nodes/, ...) are not searched. On stderr it says
how many runs it read and names each directory it left out, and why (such as a run with no
verdict.json). Exit status 2 when an argument is neither a checked run nor holds one.

Python standard library only: copy it and adapt it.
"""

import json
import math
import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from leaderlab_runs import natural, parser, read_runs  # noqa: E402 (the scripts' shared module, beside them)
from xml.sax.saxutils import escape

PROG = "compare.py"
NEEDS = ("cluster.json", "verdict.json")  # the files of a run directory this script reads
PALETTE = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#377eb8"]


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


# Text widths are not measured (no font at hand): the layout allows CHAR_EM em a character, generous
# for a sans-serif face, so that labels and the legend keep clear of each other and of the edges.
FONT = 12
CHAR_EM = 0.65


def text_width(s, size=FONT):
    return len(s) * size * CHAR_EM


def nice_ceil(v):
    if v <= 1:
        return 1
    p = 10 ** math.floor(math.log10(v))
    for m in (1, 2, 5, 10):
        if m * p >= v:
            return m * p
    return 10 * p


def one_two_five(lo, hi):
    """Every 1, 2 or 5 times a power of ten from lo to hi (both > 0), ascending."""
    out = []
    for k in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 2):
        for m in (1, 2, 5):
            v = float(f"{m}e{k}")
            if lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9):
                out.append(v)
    return out


def log_domain(values):
    """The span of a logarithmic axis for these values: from the 1-2-5 value at or below the least
    positive one to the one at or above the greatest."""
    pos = [v for v in values if v and v > 0] or [1, 10]
    lo, hi = min(pos), max(pos)
    below = [v for v in one_two_five(lo / 10, lo) if v <= lo]
    above = [v for v in one_two_five(hi, hi * 10) if v >= hi]
    lo, hi = below[-1], above[0]
    if lo == hi:
        lo, hi = one_two_five(lo / 10, lo)[-2], one_two_five(hi, hi * 10)[1]
    return lo, hi


def fmt_tick(v):
    return str(int(round(v))) if abs(v - round(v)) < 1e-9 else f"{v:g}"


class Axis:
    """A linear or logarithmic axis from lo to hi, drawn from pixel a to pixel b."""

    def __init__(self, lo, hi, a, b, log):
        self.lo, self.hi, self.a, self.b, self.log = lo, hi, a, b, log

    def __call__(self, v):
        if self.log:
            v = min(max(v, self.lo), self.hi) if v and v > 0 else self.lo
            f = (math.log10(v) - math.log10(self.lo)) / (math.log10(self.hi) - math.log10(self.lo))
        else:
            f = (v - self.lo) / (self.hi - self.lo)
        return self.a + f * (self.b - self.a)

    def log_ticks(self, gap):
        """Ticks of a logarithmic axis: at 1, 2 and 5 times each power of ten, or, when those would be
        closer than gap(t1, t2) pixels, at the powers of ten (every one, or every other, ...)."""
        def fits(ts):
            return all(abs(self(t2) - self(t1)) >= gap(t1, t2) for t1, t2 in zip(ts, ts[1:]))
        ts = one_two_five(self.lo, self.hi)
        if fits(ts):
            return ts
        k0, k1 = math.ceil(math.log10(self.lo) - 1e-9), math.floor(math.log10(self.hi) + 1e-9)
        for step in range(1, k1 - k0 + 2):
            ts = [float(f"1e{k}") for k in range(k0, k1 + 1) if (k - k0) % step == 0]
            if fits(ts) or len(ts) <= 2:
                return ts
        return ts


def svg_plot(series, path, log):
    """series: {name: {n: (mean, lo, hi, bound)}} -> an SVG line chart written with plain strings.
    With log both axes are logarithmic, their ticks at 1, 2 and 5 times the powers of ten."""
    names = sorted(series, key=natural)
    ns = sorted({n for s in series.values() for n in s})
    ys = [v for s in series.values() for (m, lo, hi, b) in s.values() for v in (m, lo, hi, b) if v is not None]
    has_bound = {name: any(p[3] for p in series[name].values()) for name in names}

    # The messages axis: its span, then (since its labels' width sets the left margin) its labels.
    if log:
        ylo, yhi = log_domain(ys)
    else:
        ylo, yhi = 0, nice_ceil(max(ys) if ys else 1)

    # The legend, right of the plot, sets the width past it and, when long, the height.
    legend_rows = sum(2 if has_bound[name] else 1 for name in names)
    legend_w = 46 + max([text_width(name) for name in names] + [text_width("its bound")]) + 12
    pw, top, bottom = 500, 40, 50
    h = max(440, top + 10 + legend_rows * 18 + 8 * len(names) + 20)
    ph = h - top - bottom
    y = Axis(ylo, yhi, top + ph, top, log)
    if log:
        yticks = y.log_ticks(lambda a, b: FONT * 1.5)
    else:
        yticks = [ylo + (yhi - ylo) * i / 4 for i in range(5)]
    left = max(60, 32 + max(text_width(fmt_tick(t)) for t in yticks))
    w = math.ceil(left + pw + 16 + legend_w)

    # The N axis: linear, labelled at the Ns of the runs that leave room for a label; or logarithmic,
    # labelled at 1-2-5 values. Either way a mark at every N.
    def label_gap(a, b):
        return (text_width(fmt_tick(a)) + text_width(fmt_tick(b))) / 2 + 6
    if log:
        x = Axis(*log_domain(ns), left, left + pw, True)
        xticks = x.log_ticks(label_gap)
    else:
        nmin, nmax = (ns[0], ns[-1]) if ns else (0, 1)
        if nmax == nmin:
            nmin, nmax = nmin - 1, nmax + 1
        x = Axis(nmin, nmax, left, left + pw, False)
        xticks = []
        for n in ns:  # left to right, each N whose label clears the last one; the last N always
            while xticks and x(n) - x(xticks[-1]) < label_gap(n, xticks[-1]) and (n == ns[-1] or not xticks):
                xticks.pop()
            if not xticks or x(n) - x(xticks[-1]) >= label_gap(n, xticks[-1]):
                xticks.append(n)

    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="{FONT}">',
         f'<rect width="{w}" height="{h}" fill="#fff"/>',
         f'<text x="{left}" y="22" font-size="14" font-weight="bold">Messages + announcements per election against N</text>']
    for t in yticks:
        o.append(f'<line x1="{left}" x2="{left + pw}" y1="{y(t):.1f}" y2="{y(t):.1f}" stroke="#e5e7eb"/>')
        o.append(f'<text class="tick y" x="{left - 6}" y="{y(t) + 4:.1f}" text-anchor="end" fill="#555">{fmt_tick(t)}</text>')
    for t in xticks:
        if log:
            o.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{top}" y2="{top + ph}" stroke="#e5e7eb"/>')
        o.append(f'<text class="tick x" x="{x(t):.1f}" y="{top + ph + 18}" text-anchor="middle" fill="#555">{fmt_tick(t)}</text>')
    for n in ns:
        o.append(f'<line x1="{x(n):.1f}" x2="{x(n):.1f}" y1="{top + ph}" y2="{top + ph + 5}" stroke="#555"/>')
    o.append(f'<line x1="{left}" x2="{left + pw}" y1="{top + ph}" y2="{top + ph}" stroke="#555"/>')
    o.append(f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + ph}" stroke="#555"/>')
    o.append(f'<text x="{left + pw / 2}" y="{h - 10}" text-anchor="middle">N (nodes{", log" if log else ""})</text>')
    o.append(f'<text transform="translate(16 {top + ph / 2}) rotate(-90)" text-anchor="middle">messages per election{" (log)" if log else ""}</text>')
    legend = ['<g class="legend">']
    ly = top + 10
    lx = left + pw + 16
    for i, name in enumerate(names):
        pts = series[name]
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
        legend.append(f'<line x1="{lx}" x2="{lx + 24}" y1="{ly}" y2="{ly}" stroke="{col}" stroke-width="2"/>')
        legend.append(f'<text x="{lx + 30}" y="{ly + 4}">{escape(name)}</text>')
        if has_bound[name]:
            ly += 18
            legend.append(f'<line x1="{lx}" x2="{lx + 24}" y1="{ly}" y2="{ly}" stroke="{col}" stroke-dasharray="5 4"/>')
            legend.append(f'<text x="{lx + 30}" y="{ly + 4}" fill="#555">its bound</text>')
        ly += 26
    o += legend + ["</g>", "</svg>"]
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")


def main(argv):
    p = parser(PROG, __doc__)
    p.add_argument("--svg", metavar="FILE", help="also draw the comparison as an SVG chart")
    p.add_argument("--elections", choices=["clean", "first", "all"], default="clean",
                   help="which elections count (default: clean ones, with no fault inside)")
    p.add_argument("--log", action="store_true", help="logarithmic axes (N and messages) in the SVG")
    a = p.parse_args(argv)

    data = {}

    def take(run):
        key, n, els = load(run, a.elections)
        data.setdefault(key, {}).setdefault(n, []).extend(els)

    read, bad = read_runs(PROG, a.runs, NEEDS, take, "cluster.json or verdict.json")
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

    names = sorted(series, key=natural)
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
