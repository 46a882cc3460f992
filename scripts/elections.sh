#!/usr/bin/env bash
# Usage: elections.sh [--tsv] RUN_DIR...
#   One row per election of each run, read from RUN/verdict.json: when it started (ms since the run's
#   begin), how long until the live nodes agreed, its messages and announcements, the algorithm's
#   bound and messages+announce as a fraction of it, the faults inside it, the leader, and the
#   messages by kind. A directory holding runs (such as runs/) stands for every run in it.
#   Tab-separated (with a header) when piped, aligned on a terminal; --tsv forces tabs. Needs jq.
#
# A starting point: copy it and change the jq program below.
set -euo pipefail

usage() { sed -n '2,7p' "$0" | sed 's/^# \{0,3\}//' >&2; exit 2; }

tsv=0
runs=()
for arg in "$@"; do
  case "$arg" in
    -h|--help) usage ;;
    --tsv) tsv=1 ;;
    -*) echo "elections.sh: unknown flag $arg" >&2; usage ;;
    *) runs+=("$arg") ;;
  esac
done
[ ${#runs[@]} -ge 1 ] || usage
command -v jq >/dev/null || { echo "elections.sh: needs jq (apt-get install jq)" >&2; exit 2; }

# expand prints the run directories an argument stands for: itself, or the runs directly inside it.
expand() {
  local d=$1 found=0
  if [ -f "$d/verdict.json" ]; then echo "$d"; return 0; fi
  if [ -f "$d/cluster.json" ]; then
    echo "elections.sh: $d has no verdict.json (leaderlab check $d writes it)" >&2
    return 1
  fi
  for sub in "$d"/*/; do
    sub=${sub%/}
    if [ -f "$sub/verdict.json" ]; then echo "$sub"; found=1; fi
  done
  if [ $found = 0 ]; then echo "elections.sh: $d is neither a checked run nor a directory of runs" >&2; return 1; fi
}

list=()
bad=0
for arg in "${runs[@]}"; do
  if found=$(expand "$arg"); then
    while IFS= read -r r; do list+=("$r"); done <<<"$found"
  else
    bad=1
  fi
done
[ ${#list[@]} -gt 0 ] || exit 2

table() {
  printf 'run\talgo\tnodes\telection\tstart_ms\ttook_ms\tmessages\tannounce\ttotal\tbound\tratio\tfaults\tleader\tby_kind\n'
  for run in "${list[@]}"; do
    jq -r --arg run "$run" '
      def ms: . / 1e6 * 1000 | round / 1000;
      . as $v
      | .metrics.elections | to_entries[]
      | .key as $i | .value as $e
      | [ $run, $v.algo, $v.nodes, $i + 1,
          (($e.start_ns - $v.begin_ns) | ms),
          (if $e.end_ns then ($e.end_ns - $e.start_ns) | ms else "never" end),
          $e.messages, $e.announce, ($e.messages + $e.announce),
          ($e.bound // "none"),
          (if ($e.bound // 0) > 0 then (($e.messages + $e.announce) / $e.bound * 100 | round / 100) else "-" end),
          $e.faults, ($e.leader // "none"),
          ($e.by_kind | to_entries | map("\(.key)=\(.value)") | join(","))
        ] | @tsv' "$run/verdict.json" || bad=1
  done
}

if [ $tsv = 0 ] && [ -t 1 ] && command -v column >/dev/null; then
  table | column -t -s $'\t'
else
  table
fi
[ $bad = 0 ] || exit 2
