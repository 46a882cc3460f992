#!/usr/bin/env python3
"""Usage: failover.py [--csv FILE] [--by algo|nodes|run|none] RUN_DIR...

Failover times across many runs, from each run's verdict.json (metrics.failovers): for each kind of
fault (kill, pause) and for all together, the count, p50, p90 and max in ms, and how many failovers
never ended (the live nodes never agreed again before the run ended). --by groups the rows further
(by algorithm by default). --csv FILE also writes one row per failover. A directory holding runs
(such as runs/ or a bench --out directory) stands for every run in it.

Quantiles are nearest-rank, as `leaderlab bench failover` computes them. Python standard library only:
copy it and adapt it.
"""

import argparse
import csv
import json
import math
import os
import sys


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


def nearest_rank(sorted_xs, q):
    i = math.ceil(q * len(sorted_xs)) - 1
    return sorted_xs[max(0, min(i, len(sorted_xs) - 1))]


def failovers(run):
    with open(os.path.join(run, "verdict.json")) as f:
        v = json.load(f)
    for fo in (v.get("metrics") or {}).get("failovers") or []:
        yield {
            "run": run,
            "algo": v.get("algo", ""),
            "nodes": v.get("nodes", ""),
            "fault": fo["fault"].split()[0] if fo.get("fault") else "?",
            "what": fo.get("fault", ""),
            "at_ms": fo.get("at_ms"),
            "ms": fo.get("ms"),
            "leader": fo.get("leader"),
        }


def fmt(x):
    return f"{x:.3f}"


def main(argv):
    p = argparse.ArgumentParser(
        prog="failover.py",
        description="Failover times across runs (p50/p90/max), from verdict.json.",
        usage="failover.py [--csv FILE] [--by algo|nodes|run|none] RUN_DIR...",
    )
    p.add_argument("runs", nargs="+", metavar="RUN_DIR")
    p.add_argument("--csv", metavar="FILE", help="also write one row per failover to FILE")
    p.add_argument("--by", choices=["algo", "nodes", "run", "none"], default="algo",
                   help="group the rows by this besides the fault (default: algo)")
    a = p.parse_args(argv)

    rows, bad = [], 0
    for arg in a.runs:
        try:
            for run in expand(arg):
                rows.extend(failovers(run))
        except (ValueError, OSError, json.JSONDecodeError, KeyError) as e:
            print(f"failover.py: {e}", file=sys.stderr)
            bad += 1
    if bad and not rows:
        return 2

    groups = {}
    for r in rows:
        key = "" if a.by == "none" else str(r[a.by])
        for fault in (r["fault"], "all"):
            groups.setdefault((key, fault), []).append(r["ms"])

    head = ([a.by] if a.by != "none" else []) + ["fault", "count", "p50_ms", "p90_ms", "max_ms", "never"]
    table = [head]
    for (key, fault) in sorted(groups, key=lambda k: (k[0], k[1] == "all", k[1])):
        ms = groups[(key, fault)]
        done = sorted(x for x in ms if x is not None)
        never = len(ms) - len(done)
        stats = [fmt(nearest_rank(done, 0.5)), fmt(nearest_rank(done, 0.9)), fmt(done[-1])] if done else ["-", "-", "-"]
        table.append(([key] if a.by != "none" else []) + [fault, str(len(done))] + stats + [str(never)])
    if len(table) == 1:
        print("failover.py: no failover in these runs (no fault took the agreed leader away)", file=sys.stderr)
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
