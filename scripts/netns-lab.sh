#!/usr/bin/env bash
# netns-lab.sh up|down|status [N] — leaderlab's cluster lab without VMs, on one Linux machine:
# N network namespaces ll-h1..ll-hN, each a "host" with its own address and a leaderlab agent,
# joined by a bridge in the root namespace, where the launcher runs.
#
#   root namespace:  llbr0 10.77.0.1/24 (a test range of our own)
#   ll-hK:           eth0 10.77.0.(10+K)/24 (veth; its peer ll-hK-br is a port of llbr0), lo up,
#                    default route via 10.77.0.1 (so a node can reach any of the root's addresses)
#                    an agent on 10.77.0.(10+K):7070, working in $LABDIR/hK
#
# up writes $LABDIR/token (0600), $LABDIR/hosts (one agent address per line) and prints the
# `leaderlab run --hosts ...` command to use; any failure on the way undoes what up did. down
# stops every process in the namespaces (agents and the nodes they started), deletes the
# namespaces, veths and bridge; it is idempotent and safe after a failed up. The agents' logs and
# work directories stay in $LABDIR.
#
# Environment: LEADERLAB_BIN the leaderlab binary [./leaderlab]; LEADERLAB_LAB_DIR the token,
# hosts file, pid files and agents' logs [/tmp/leaderlab-netns]; LEADERLAB_LAB_WAIT seconds to
# wait for each agent's port [10].
# Needs root and iproute2 (ip netns, veth, bridge).
#
# Partitions with the iptables backend: bridged traffic between namespaces passes the root
# namespace's iptables FORWARD chain only when br_netfilter is loaded and
# /proc/sys/net/bridge/bridge-nf-call-iptables is 1 (this script leaves that setting alone). Rules
# inside each namespace (its own INPUT/OUTPUT chains) do not depend on it, and that is where the
# agent applies them, since it runs inside the node's namespace. If a root-namespace FORWARD policy
# of DROP (Docker sets one) stops bridged traffic, up says so and names the rule that lets it pass.
set -euo pipefail

LABDIR_DEFAULT=/tmp/leaderlab-netns
LABDIR=${LEADERLAB_LAB_DIR:-$LABDIR_DEFAULT}
BIN=${LEADERLAB_BIN:-./leaderlab}
BRIDGE=llbr0
NET=10.77.0          # the /24; .1 is the bridge (the root namespace), .(10+K) is ll-hK
PORT=7070            # every agent's port
WAIT=${LEADERLAB_LAB_WAIT:-10}   # seconds to wait for each agent's port

prog=$(basename "$0")
say() { echo "$prog: $*" >&2; }
die() { say "$*"; exit 1; }

usage() {
  cat >&2 <<EOF
usage: $prog up|down|status [N]
  up [N]   N namespaces ll-h1..ll-hN (default 3, at most 200) on bridge $BRIDGE ($NET.1/24),
           an agent in each on $NET.(10+K):$PORT; writes \$LABDIR/hosts and \$LABDIR/token
  down     stop the agents, delete the namespaces, veths and bridge (idempotent)
  status   namespaces, agents, and whether each agent's port answers
environment: LEADERLAB_BIN [./leaderlab], LEADERLAB_LAB_DIR [$LABDIR_DEFAULT] (now $LABDIR)
EOF
  exit 2
}

need_root_and_ip() {
  [ "$(id -u)" -eq 0 ] || die "must run as root (network namespaces and a bridge): sudo $0 $*"
  command -v ip >/dev/null || die "needs iproute2 ('ip' not found): apt-get install iproute2"
  ip netns list >/dev/null 2>&1 || die "'ip netns' does not work here (iproute2 too old, or no namespace support)"
}

addr_of() { echo "$NET.$((10 + $1))"; }

# The lab's namespaces, ll-h1..ll-hN as they exist now (not from N: down must find them all).
lab_namespaces() {
  ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^ll-h[0-9]+$' | sort -t h -k2n || true
}

# True when a TCP connect to $1:$2 succeeds within a second; $3, if given, is the namespace to
# connect from.
port_answers() {
  local ns=${3:-}
  if [ -n "$ns" ]; then
    ip netns exec "$ns" timeout 1 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null
  else
    timeout 1 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null
  fi
}

# The pid in $LABDIR/hK.pid if that process still lives in namespace ll-hK (so it is the agent we
# started, or what it exec'd, and not a reused pid); empty otherwise.
agent_pid() {
  local f=$LABDIR/h$1.pid pid
  [ -f "$f" ] || return 0
  pid=$(<"$f")
  [ -n "$pid" ] && [ -d "/proc/$pid" ] || return 0
  if [ "$(ip netns identify "$pid" 2>/dev/null)" = "ll-h$1" ]; then echo "$pid"; fi
}

# Stop every process in namespace $1: SIGTERM, up to 3 s of grace, then SIGKILL. A namespace
# with processes left in it outlives `ip netns delete`, so this comes first.
kill_namespace() {
  local ns=$1 pids _
  mapfile -t pids < <(ip netns pids "$ns" 2>/dev/null || true)
  [ ${#pids[@]} -gt 0 ] || return 0
  kill -TERM "${pids[@]}" 2>/dev/null || true
  for _ in $(seq 30); do
    mapfile -t pids < <(ip netns pids "$ns" 2>/dev/null || true)
    [ ${#pids[@]} -gt 0 ] || return 0
    sleep 0.1
  done
  say "$ns: processes ${pids[*]} did not stop on SIGTERM; SIGKILL"
  kill -KILL "${pids[@]}" 2>/dev/null || true
  for _ in $(seq 20); do
    [ -n "$(ip netns pids "$ns" 2>/dev/null || true)" ] || return 0
    sleep 0.1
  done
}

do_down() {
  local ns k link f pid
  for ns in $(lab_namespaces); do
    k=${ns#ll-h}
    # An agent that somehow left its namespace is still ours if its pid file says so.
    f=$(agent_pid "$k")
    [ -z "$f" ] || kill -TERM "$f" 2>/dev/null || true
    kill_namespace "$ns"
    ip netns delete "$ns" 2>/dev/null || say "$ns: could not delete the namespace"
    echo "deleted namespace $ns"
  done
  # Agents whose namespace is already gone, from their pid files.
  for f in "$LABDIR"/h*.pid; do
    [ -e "$f" ] || continue
    k=$(basename "$f" .pid); k=${k#h}
    pid=$(agent_pid "$k")
    if [ -n "$pid" ]; then kill -KILL "$pid" 2>/dev/null || true; echo "killed agent h$k ($pid)"; fi
    rm -f "$f"
  done
  # A veth dies with its namespace; one left in the root namespace (an up interrupted between
  # creating it and moving its peer) goes here.
  for link in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E '^ll-h[0-9]+-br$' || true); do
    ip link delete "$link" 2>/dev/null && echo "deleted $link"
  done
  if ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link delete "$BRIDGE" type bridge && echo "deleted bridge $BRIDGE"
  fi
  rm -f "$LABDIR/hosts" "$LABDIR/token"
  if [ -d "$LABDIR" ]; then echo "agents' logs and work directories kept in $LABDIR"; fi
}

# Does $BIN have an `agent --log` flag? The agent's own log file then, its stderr otherwise.
agent_has_log_flag() { "$BIN" agent --help 2>&1 | grep -q -- '--log'; }

do_up() {
  local n=$1 k ns addr pid deadline log_flag args out hosts_tmp
  case $n in ''|*[!0-9]*) die "N must be a number of namespaces in 1..200, not '$n'";; esac
  case $WAIT in ''|*[!0-9]*) die "LEADERLAB_LAB_WAIT must be a whole number of seconds, not '$WAIT'";; esac
  if [ "$n" -lt 1 ] || [ "$n" -gt 200 ]; then die "N must be in 1..200, not $n"; fi

  # The binary first: nothing to undo yet if it is missing.
  if [[ $BIN != */* ]]; then BIN=$(command -v "$BIN" || echo "$BIN"); fi
  [ -x "$BIN" ] || die "no leaderlab binary at $BIN: build one (go build -o leaderlab .) or set LEADERLAB_BIN"
  BIN=$(realpath "$BIN")
  "$BIN" agent --help >/dev/null 2>&1 || die "$BIN has no 'agent' command (build leaderlab from a tree that has one)"

  # Refuse to stack on a lab that is up (down would then take both away).
  if ip link show "$BRIDGE" >/dev/null 2>&1 || [ -n "$(lab_namespaces)" ]; then
    die "a lab is already up ($BRIDGE or ll-h* namespaces exist): $prog down first"
  fi
  if [ -n "$(ip -o addr show to "$NET.0/24" 2>/dev/null)" ]; then
    die "$NET.0/24 is already in use here: $(ip -o addr show to "$NET.0/24" | awk '{print $2, $4}')"
  fi

  trap 'say "up failed; undoing"; do_down >/dev/null 2>&1 || true' EXIT
  trap 'exit 130' INT TERM

  install -d -m 0700 "$LABDIR"
  # 32 random bytes as hex, no newline; created 0600 (umask in a subshell).
  (umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$LABDIR/token")

  # The bridge: no STP, so its ports forward at once.
  ip link add "$BRIDGE" type bridge stp_state 0 forward_delay 0
  ip addr add "$NET.1/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up

  for k in $(seq "$n"); do
    ns=ll-h$k addr=$(addr_of "$k")
    ip netns add "$ns"
    # The veth is made with its inner end already in the namespace: no eth0 ever appears here.
    ip link add "$ns-br" type veth peer name eth0 netns "$ns"
    ip link set "$ns-br" master "$BRIDGE"
    ip link set "$ns-br" up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" route add default via "$NET.1"
  done

  # The agent's own log with --log if it has the flag; its output goes next to it either way.
  log_flag=
  agent_has_log_flag && log_flag=1
  for k in $(seq "$n"); do
    ns=ll-h$k addr=$(addr_of "$k")
    install -d -m 0700 "$LABDIR/h$k"
    rm -f "$LABDIR/h$k.pid"
    args=(agent --listen "$addr:$PORT" --token-file "$LABDIR/token" --workdir "$LABDIR/h$k")
    out=$LABDIR/h$k-agent.log
    if [ -n "$log_flag" ]; then args+=(--log "$out"); out=$LABDIR/h$k-agent.stderr; fi
    : >"$LABDIR/h$k-agent.log"   # this up's log only
    # setsid: the agent outlives this script and its terminal. The inner bash records its own pid
    # and execs the agent, so the pid file names the agent whatever setsid and ip do.
    # shellcheck disable=SC2016 # $$ and $@ are the inner bash's
    setsid ip netns exec "$ns" bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$LABDIR/h$k.pid" \
      "$BIN" "${args[@]}" </dev/null >>"$out" 2>&1 &
  done

  # Each agent's port must answer from the root namespace, where the launcher runs.
  for k in $(seq "$n"); do
    addr=$(addr_of "$k")
    deadline=$((SECONDS + WAIT))
    until port_answers "$addr" "$PORT"; do
      pid=$(agent_pid "$k")
      if [ $SECONDS -ge $deadline ] || { [ -f "$LABDIR/h$k.pid" ] && [ -z "$pid" ]; }; then
        say "agent h$k does not answer on $addr:$PORT; the end of its log:"
        for out in "$LABDIR/h$k-agent.log" "$LABDIR/h$k-agent.stderr"; do
          [ ! -s "$out" ] || { echo "== $out" && tail -n 20 "$out"; } >&2
        done
        exit 1
      fi
      sleep 0.1
    done
  done

  # Bridged traffic between namespaces (node to node); see the note on br_netfilter above.
  if [ "$n" -ge 2 ] && ! port_answers "$(addr_of 2)" "$PORT" ll-h1; then
    say "ll-h1 cannot reach $(addr_of 2):$PORT across $BRIDGE, though the root namespace can."
    if [ "$(cat /proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null)" = 1 ]; then
      say "bridged traffic goes through this host's iptables FORWARD chain (bridge-nf-call-iptables=1),"
      say "whose rules or DROP policy stop it; let it pass: iptables -I FORWARD -i $BRIDGE -o $BRIDGE -j ACCEPT"
    fi
    exit 1
  fi

  hosts_tmp=$LABDIR/hosts.tmp
  : >"$hosts_tmp"
  for k in $(seq "$n"); do echo "$(addr_of "$k"):$PORT" >>"$hosts_tmp"; done
  mv "$hosts_tmp" "$LABDIR/hosts"

  trap - EXIT INT TERM
  echo "lab up: $n agents on $(addr_of 1)..$(addr_of "$n") port $PORT, bridge $BRIDGE $NET.1/24"
  echo "run a cluster on it:"
  echo "  $BIN run --hosts $LABDIR/hosts --token-file $LABDIR/token -n $((3 * n)) --chaos 'at 1s kill leader'"
  echo "take it down:"
  echo "  $0 down"
}

do_status() {
  local ns k addr pid state any=
  if ip link show "$BRIDGE" >/dev/null 2>&1; then
    echo "bridge $BRIDGE: $(ip -o -4 addr show dev "$BRIDGE" | awk '{print $4}') $(cat /sys/class/net/$BRIDGE/operstate)"
  else
    echo "bridge $BRIDGE: absent"
  fi
  for ns in $(lab_namespaces); do
    any=1 k=${ns#ll-h} addr=$(addr_of "$k")
    pid=$(agent_pid "$k")
    if [ -n "$pid" ]; then pid="pid $pid"; else pid="not running"; fi
    if port_answers "$addr" "$PORT"; then state=answers; else state="does not answer"; fi
    printf '%-8s %-15s agent %-14s %s:%s %s\n' "$ns" \
      "$(ip -n "$ns" -o -4 addr show dev eth0 2>/dev/null | awk '{print $4}')" \
      "$pid" "$addr" "$PORT" "$state"
  done
  [ -n "$any" ] || echo "no ll-h* namespaces"
  if [ -f "$LABDIR/hosts" ]; then echo "hosts file: $LABDIR/hosts; token: $LABDIR/token"; fi
}

cmd=${1:-}
case $cmd in
  up)     [ $# -le 2 ] || usage; need_root_and_ip "$@"; do_up "${2:-3}" ;;
  down)   [ $# -le 2 ] || usage; need_root_and_ip "$@"; do_down ;;
  status) [ $# -le 2 ] || usage; need_root_and_ip "$@"; do_status ;;
  -h|--help|help) usage ;;
  *) usage ;;
esac
