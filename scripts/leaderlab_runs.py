"""What leaderlab's analysis scripts share: their command line, finding and reading the run
directories their arguments stand for, and ordering names with numbers in them as people do. Standard library only; the scripts import it from
their own directory."""

import argparse
import os
import re
import sys


def find_runs(arg, seen, skip, needs):
    """The run directories an argument stands for: itself when it is a run directory (one holding
    cluster.json or verdict.json; it is taken when it holds every file of needs), else every run
    directory under it, at any depth, in name order. A run directory's subdirectories are not
    searched, nor a directory already seen (seen maps the real paths found so far to their names: a
    symbolic link back up, or the same run given twice).
    skip(dir, why) is told of each directory left out: a run without one of the files needed, a
    directory with no run at any depth under it (only the topmost such), or one already seen. Returns
    the runs and how many directories were left out as already seen; ValueError when the argument is
    neither a run nor holds one."""
    if not os.path.isdir(arg):
        raise ValueError(f"{arg} is not a directory")

    runs, again = [], [0]

    def walk(d):
        """Adds the runs under d; False when there is no run directory at all under it."""
        real = os.path.realpath(d)
        if real in seen:
            skip(d, f"same directory as {seen[real]}, read once")
            again[0] += 1
            return True
        seen[real] = d
        if any(os.path.isfile(os.path.join(d, f)) for f in ("cluster.json", "verdict.json")):
            missing = [f for f in needs if not os.path.isfile(os.path.join(d, f))]
            if not missing:
                runs.append(d)
            elif missing[0] == "verdict.json":
                skip(d, f"no verdict.json (not checked: leaderlab check {d} writes it)")
            else:
                skip(d, f"no {missing[0]}")
            return True
        try:
            with os.scandir(d) as it:
                subs = sorted((e.name for e in it if e.is_dir()), key=natural)
        except OSError as e:
            skip(d, f"cannot list it ({e.strerror})")
            return True
        found, barren = False, []
        for name in subs:
            sub = os.path.join(d, name)
            if walk(sub):
                found = True
            else:
                barren.append(sub)
        if found:
            for sub in barren:
                skip(sub, "no run directory (with cluster.json) in it")
        return found

    if not walk(arg.rstrip("/") or "/"):
        raise ValueError(f"{arg} is neither a checked run nor a directory of runs")
    return runs, again[0]


def natural(s):
    """A sort key that orders the numbers in s as numbers: n5 before n64 before n128."""
    return [(0, int(p), p) if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", str(s)) if p]


def parser(prog, doc):
    """An argument parser for a script whose docstring is its help: the first paragraph its usage
    ("Usage: ..."), the last its epilog, the others its description. It takes RUN_DIR... as runs."""
    usage, _, rest = doc.partition("\n\n")
    paras = rest.strip().split("\n\n")
    p = argparse.ArgumentParser(
        prog=prog,
        usage=usage.removeprefix("Usage: "),
        description="\n\n".join(paras[:-1]),
        epilog=paras[-1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    p.add_argument("runs", nargs="+", metavar="RUN_DIR", help="a checked run, or a directory holding runs")
    return p


def read_runs(prog, args, needs, take, files):
    """Reads every run the arguments stand for (find_runs) with take(run), saying on stderr what was
    left out and why: an argument that is no run and holds none, a run take could not read (files
    names what it reads), an argument from which no run was read. Ends with how many runs were read
    and directories skipped. Returns (runs read, arguments that gave none)."""
    seen, skipped, read, bad = {}, [], 0, 0

    def skip(d, why):
        skipped.append(d)
        print(f"{prog}: skipped {d}: {why}", file=sys.stderr)

    for arg in args:
        try:
            runs, again = find_runs(arg, seen, skip, needs)
        except ValueError as e:
            print(f"{prog}: {e}", file=sys.stderr)
            bad += 1
            continue
        ok = 0
        for run in runs:
            try:
                take(run)
            except (OSError, ValueError, KeyError, AttributeError, TypeError) as e:
                skip(run, f"{files} unreadable ({e})")
                continue
            ok += 1
        if not ok and not again:
            print(f"{prog}: no checked run read from {arg}", file=sys.stderr)
            bad += 1
        read += ok
    print(f"{prog}: read {read} run{'' if read == 1 else 's'}"
          + (f", skipped {len(skipped)} director{'y' if len(skipped) == 1 else 'ies'} (named above)" if skipped else ""),
          file=sys.stderr)
    return read, bad
