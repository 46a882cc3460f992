#!/usr/bin/env python3
"""Usage: failover.py [-h] [--csv FILE] [--by algo|nodes|run|none] RUN_DIR...

Failover times across many runs, from each run's verdict.json (metrics.failovers): for each kind of
fault (kill, pause) and for all together, the count, p50, p90 and max in ms, and how many failovers
never ended (the live nodes never agreed again before the run ended). --by groups the rows further
(by algorithm by default), in the key's order with numbers as numbers (N = 5, 8, 64, 128; run
directories ...-n5-... before ...-n64-...). --csv FILE also writes one row per failover.

A directory that is not itself a run stands for every run directory (one holding cluster.json) at any
depth under it; a run directory's own subdirectories (nodes/, ...) are not searched. On stderr it says
how many runs it read and names each directory it left out, and why (such as a run with no
verdict.json). Exit status 2 when an argument is neither a checked run nor holds one.

Quantiles are nearest-rank, as `leaderlab bench failover` computes them. Python standard library only:
copy it and adapt it.
"""

import csv
import json
import math
import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from leaderlab_runs import natural, parser, read_runs  # noqa: E402 (the scripts' shared module, beside them)

PROG = "failover.py"
NEEDS = ("verdict.json",)  # the files of a run directory this script reads


def nearest_rank(sorted_xs, q):
    i = math.ceil(q * len(sorted_xs)) - 1
    return sorted_xs[max(0, min(i, len(sorted_xs) - 1))]


def failovers(run):
    with open(os.path.join(run, "verdict.json")) as f:
        v = json.load(f)
    out = []
    for fo in (v.get("metrics") or {}).get("failovers") or []:
        out.append({
            "run": run,
            "algo": v.get("algo", ""),
            "nodes": v.get("nodes", ""),
            "fault": fo["fault"].split()[0] if fo.get("fault") else "?",
            "what": fo.get("fault", ""),
            "at_ms": fo.get("at_ms"),
            "ms": fo.get("ms"),
            "leader": fo.get("leader"),
        })
    return out


def fmt(x):
    return f"{x:.3f}"


def main(argv):
    p = parser(PROG, __doc__)
    p.add_argument("--csv", metavar="FILE", help="also write one row per failover to FILE")
    p.add_argument("--by", choices=["algo", "nodes", "run", "none"], default="algo",
                   help="group the rows by this besides the fault (default: algo)")
    a = p.parse_args(argv)

    rows = []
    read, bad = read_runs(PROG, a.runs, NEEDS, lambda run: rows.extend(failovers(run)), "verdict.json")
    if not read:
        return 2

    groups = {}
    for r in rows:
        key = "" if a.by == "none" else r[a.by]
        for fault in (r["fault"], "all"):
            groups.setdefault((key, fault), []).append(r["ms"])

    head = ([a.by] if a.by != "none" else []) + ["fault", "count", "p50_ms", "p90_ms", "max_ms", "never"]
    table = [head]
    for (key, fault) in sorted(groups, key=lambda k: (natural(k[0]), k[1] == "all", k[1])):
        ms = groups[(key, fault)]
        done = sorted(x for x in ms if x is not None)
        never = len(ms) - len(done)
        stats = [fmt(nearest_rank(done, 0.5)), fmt(nearest_rank(done, 0.9)), fmt(done[-1])] if done else ["-", "-", "-"]
        table.append(([str(key)] if a.by != "none" else []) + [fault, str(len(done))] + stats + [str(never)])
    if len(table) == 1:
        print(f"{PROG}: no failover in these runs (no fault took the agreed leader away)", file=sys.stderr)
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    for row in table:
        print("  ".join(c.ljust(w) if i < len(head) - 5 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip())

    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["run", "algo", "nodes", "fault", "at_ms", "ms", "leader", "what"])
            for r in rows:
                w.writerow([r["run"], r["algo"], r["nodes"], r["fault"], r["at_ms"],
                            "" if r["ms"] is None else r["ms"], "" if r["leader"] is None else r["leader"], r["what"]])
    return 2 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
