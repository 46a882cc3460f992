#!/usr/bin/env bash
# elections.sh: one row per election of each run. Run it with --help for its usage.
#
# A starting point: copy it and change the jq program below.
set -euo pipefail

prog=elections.sh

usage() {
  cat <<'USAGE'
Usage: elections.sh [-h] [--tsv] RUN_DIR...

One row per election of each run, read from RUN/verdict.json: when it started (ms since the run's
begin), how long until the live nodes agreed, its messages and announcements, the algorithm's bound
and messages+announce as a fraction of it, the faults inside it, the leader, and the messages by
kind. Tab-separated (with a header) when piped, aligned on a terminal. Needs jq.

A directory that is not itself a run stands for every run directory (one holding cluster.json) at any
depth under it; a run directory's own subdirectories (nodes/, ...) are not searched. On stderr it says
how many runs it read and names each directory it left out, and why (such as a run with no
verdict.json). Exit status 2 when an argument is neither a checked run nor holds one.

Options:
  -h, --help   print this help and exit
  --tsv        tab-separated even on a terminal
USAGE
}

tsv=0
runs=()
for arg in "$@"; do
  case "$arg" in
    -h|--help) usage; exit 0 ;;
    --tsv) tsv=1 ;;
    -*) echo "$prog: unknown flag $arg" >&2; usage >&2; exit 2 ;;
    *) runs+=("$arg") ;;
  esac
done
[ ${#runs[@]} -ge 1 ] || { usage >&2; exit 2; }
command -v jq >/dev/null || { echo "$prog: needs jq (apt-get install jq)" >&2; exit 2; }

list=()     # the run directories found, in order
skipped=0   # how many directories were left out
again=0     # how many of them as already met
skip() { echo "$prog: skipped $1: $2" >&2; skipped=$((skipped + 1)); }

# seen_put REAL NAME records that the directory whose real path is REAL was met as NAME; seen_get REAL
# sets first to that name, or fails. A map in bash 4 and later; lines of a string in bash 3.
if [ "${BASH_VERSINFO[0]}" -ge 4 ]; then
  declare -A seen=()
  seen_put() { seen[$1]=$2; }
  seen_get() { [ -n "${seen[$1]+x}" ] && first=${seen[$1]}; }
else
  seen=$'\n'
  seen_put() { seen+=$1$'\t'$2$'\n'; }
  seen_get() {
    case $seen in
      *$'\n'"$1"$'\t'*) first=${seen#*$'\n'"$1"$'\t'}; first=${first%%$'\n'*} ;;
      *) return 1 ;;
    esac
  }
fi

# walk DIR [REAL] adds the run directories under DIR (or DIR itself) to list: a run directory is one
# holding cluster.json or verdict.json, and its subdirectories are not searched. REAL is DIR's real
# path when known. It fails when there is no run directory at all under DIR; the caller names such a
# directory (only the topmost one).
walk() {
  local d=$1 real=${2:-} first sub found=1 barren=() subs=()
  if [ -z "$real" ]; then
    real=$(CDPATH='' cd -P -- "$d" 2>/dev/null && pwd -P) || { skip "$d" "cannot enter it"; return 0; }
  fi
  if seen_get "$real"; then
    skip "$d" "same directory as $first, read once"
    again=$((again + 1))
    return 0
  fi
  seen_put "$real" "$d"
  if [ -f "$d/cluster.json" ] || [ -f "$d/verdict.json" ]; then
    if [ -f "$d/verdict.json" ]; then list+=("$d")
    else skip "$d" "no verdict.json (not checked: leaderlab check $d writes it)"; fi
    return 0
  fi
  [ -r "$d" ] || { skip "$d" "cannot list it"; return 0; }
  while IFS= read -r -d '' sub; do subs+=("$sub"); done < <(
    shopt -s nullglob dotglob
    for sub in "$d"/*/; do sub=${sub%/}; printf '%s\0' "${sub##*/}"; done | natural_sort)
  for sub in ${subs[@]+"${subs[@]}"}; do
    # A subdirectory's real path is its parent's and its name, unless it is a symbolic link.
    if [ -L "$d/$sub" ]; then walk "$d/$sub"; else walk "$d/$sub" "${real%/}/$sub"; fi && found=0 || barren+=("$d/$sub")
  done
  if [ $found = 0 ]; then
    for sub in ${barren[@]+"${barren[@]}"}; do skip "$sub" "no run directory (with cluster.json) in it"; done
  fi
  return $found
}

# natural_sort orders NUL-terminated names with the numbers in them as numbers (n5 before n64).
natural_sort() {
  if sort -z -V </dev/null >/dev/null 2>&1; then LC_ALL=C sort -z -V; else LC_ALL=C sort -z; fi
}

# read_run RUN adds the rows of RUN's elections to body, or names RUN as left out.
body=''
read=0
read_run() {
  local run=$1 rows why
  if rows=$(jq -r --arg run "$run" '
      def ms: . / 1e6 * 1000 | round / 1000;
      . as $v
      | (.metrics.elections // []) | to_entries[]
      | .key as $i | .value as $e
      | [ $run, $v.algo, $v.nodes, $i + 1,
          (($e.start_ns - $v.begin_ns) | ms),
          (if $e.end_ns then ($e.end_ns - $e.start_ns) | ms else "never" end),
          $e.messages, $e.announce, ($e.messages + $e.announce),
          ($e.bound // "none"),
          (if ($e.bound // 0) > 0 then (($e.messages + $e.announce) / $e.bound * 100 | round / 100) else "-" end),
          $e.faults, ($e.leader // "none"),
          ($e.by_kind | to_entries | map("\(.key)=\(.value)") | join(","))
        ] | @tsv' "$run/verdict.json" 2>/dev/null); then
    [ -z "$rows" ] || body+=$rows$'\n'
    read=$((read + 1))
  else
    why=$(jq empty "$run/verdict.json" 2>&1 | tail -n 1) || true
    skip "$run" "verdict.json unreadable (${why:-not the verdict this script knows})"
  fi
}

# The rows are kept until every run is read, so that the count comes before the table.
bad=0
for arg in "${runs[@]}"; do
  [ "$arg" = / ] || arg=${arg%/}
  if [ ! -d "$arg" ]; then
    echo "$prog: $arg is not a directory" >&2; bad=1; continue
  fi
  from=${#list[@]} read_before=$read again_before=$again
  if ! walk "$arg"; then
    echo "$prog: $arg is neither a checked run nor a directory of runs" >&2; bad=1; continue
  fi
  for run in ${list[@]+"${list[@]:$from}"}; do read_run "$run"; done
  if [ $read = "$read_before" ] && [ $again = "$again_before" ]; then
    echo "$prog: no checked run read from $arg" >&2; bad=1
  fi
done
summary="$prog: read $read run$([ $read = 1 ] || echo s)"
[ $skipped = 0 ] || summary+=", skipped $skipped director$([ $skipped = 1 ] && echo y || echo ies) (named above)"
echo "$summary" >&2
[ $read -gt 0 ] || exit 2

table() {
  printf 'run\talgo\tnodes\telection\tstart_ms\ttook_ms\tmessages\tannounce\ttotal\tbound\tratio\tfaults\tleader\tby_kind\n'
  printf '%s' "$body"
}

if [ $tsv = 0 ] && [ -t 1 ] && command -v column >/dev/null; then
  table | column -t -s $'\t'
else
  table
fi
[ $bad = 0 ] || exit 2
