#!/usr/bin/env bash
# netns-lab.sh up|down|status [N] — leaderlab's cluster lab without VMs, on one Linux machine:
# N network namespaces ll-h1..ll-hN, each a "host" with its own address running a real OpenSSH
# sshd, joined by a bridge in the root namespace, where the launcher runs. The launcher reaches
# them as it reaches any SSH host (leaderlab run --ssh-config): it uploads its binary and runs
# `leaderlab agent --stdio` over SSH.
#
#   root namespace:  llbr0 10.77.0.1/24 (a test range of our own)
#   ll-hK:           eth0 10.77.0.(10+K)/24 (veth; its peer ll-hK-br is a port of llbr0), lo up,
#                    default route via 10.77.0.1 (so a node can reach any of the root's addresses)
#                    sshd on 10.77.0.(10+K):22 with a host key of its own, taking the lab's client
#                    key for root; its sessions get XDG_STATE_HOME and XDG_CACHE_HOME under
#                    $LABDIR/hK, so each host keeps its own binary and run directories although
#                    the namespaces share one filesystem
#
# up makes the lab's keys (a client key pair $LABDIR/id_ed25519, a host key per host, and
# $LABDIR/known_hosts naming each host's key), writes $LABDIR/ssh-config (one Host hK each, as
# `vagrant ssh-config` would, with StrictHostKeyChecking yes) and $LABDIR/hosts (their names, for
# --hosts with ids=), and prints the `leaderlab run --ssh-config ...` command to use; any failure on
# the way undoes what up did. down stops every process in the namespaces (sshd, agents, nodes),
# deletes the namespaces, veths and bridge; it is idempotent and safe after a failed up. The sshd
# logs and the hosts' directories stay in $LABDIR.
#
# Environment: LEADERLAB_BIN a leaderlab binary, only to print the command [./leaderlab];
# LEADERLAB_LAB_DIR the keys, configs, pid files and logs [/tmp/leaderlab-netns];
# LEADERLAB_LAB_WAIT seconds to wait for each sshd's port [10].
# Needs root, iproute2 (ip netns, veth, bridge) and openssh-server (sshd, ssh-keygen).
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
PORT=22              # every sshd's port
WAIT=${LEADERLAB_LAB_WAIT:-10}   # seconds to wait for each sshd's port
SSHD=$(command -v sshd || echo /usr/sbin/sshd)

prog=$(basename "$0")
say() { echo "$prog: $*" >&2; }
die() { say "$*"; exit 1; }

usage() {
  cat >&2 <<EOF
usage: $prog up|down|status [N]
  up [N]   N namespaces ll-h1..ll-hN (default 3, at most 200) on bridge $BRIDGE ($NET.1/24),
           sshd in each on $NET.(10+K):$PORT; writes \$LABDIR/ssh-config and \$LABDIR/hosts
  down     stop everything in the namespaces, delete them, the veths and bridge (idempotent)
  status   namespaces, sshd, and whether each sshd's port answers
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

# The pid in $LABDIR/hK.pid if that process still lives in namespace ll-hK (so it is the sshd we
# started, and not a reused pid); empty otherwise.
sshd_pid() {
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
    # An sshd that somehow left its namespace is still ours if its pid file says so.
    f=$(sshd_pid "$k")
    [ -z "$f" ] || kill -TERM "$f" 2>/dev/null || true
    kill_namespace "$ns"
    ip netns delete "$ns" 2>/dev/null || say "$ns: could not delete the namespace"
    echo "deleted namespace $ns"
  done
  # sshds whose namespace is already gone, from their pid files.
  for f in "$LABDIR"/h*.pid; do
    [ -e "$f" ] || continue
    k=$(basename "$f" .pid); k=${k#h}
    pid=$(sshd_pid "$k")
    if [ -n "$pid" ]; then kill -KILL "$pid" 2>/dev/null || true; echo "killed sshd h$k ($pid)"; fi
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
  rm -f "$LABDIR/hosts" "$LABDIR/ssh-config"
  if [ -d "$LABDIR" ]; then echo "sshd logs and the hosts' directories kept in $LABDIR"; fi
}

do_up() {
  local n=$1 k ns addr pid deadline log_flag args out hosts_tmp
  case $n in ''|*[!0-9]*) die "N must be a number of namespaces in 1..200, not '$n'";; esac
  case $WAIT in ''|*[!0-9]*) die "LEADERLAB_LAB_WAIT must be a whole number of seconds, not '$WAIT'";; esac
  if [ "$n" -lt 1 ] || [ "$n" -gt 200 ]; then die "N must be in 1..200, not $n"; fi

  # The tools first: nothing to undo yet if one is missing.
  [ -x "$SSHD" ] || die "no sshd ($SSHD): apt-get install openssh-server"
  command -v ssh-keygen >/dev/null || die "no ssh-keygen: apt-get install openssh-client"
  if [[ $BIN != */* ]]; then BIN=$(command -v "$BIN" || echo "$BIN"); fi
  [ ! -x "$BIN" ] || BIN=$(realpath "$BIN")

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
  rm -f "$LABDIR/id_ed25519" "$LABDIR/id_ed25519.pub" "$LABDIR/known_hosts"
  ssh-keygen -q -t ed25519 -N '' -C "leaderlab-netns-lab" -f "$LABDIR/id_ed25519"
  install -m 0600 "$LABDIR/id_ed25519.pub" "$LABDIR/authorized_keys"
  install -d -m 0755 /run/sshd   # sshd's privilege separation directory

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

  # A host key and an sshd per namespace; known_hosts names each host's key by its address.
  : >"$LABDIR/known_hosts"
  for k in $(seq "$n"); do
    ns=ll-h$k addr=$(addr_of "$k") hd=$LABDIR/h$k
    install -d -m 0700 "$hd" "$hd/state" "$hd/cache"
    rm -f "$hd/ssh_host_ed25519_key" "$hd/ssh_host_ed25519_key.pub" "$LABDIR/h$k.pid"
    ssh-keygen -q -t ed25519 -N '' -C "ll-h$k" -f "$hd/ssh_host_ed25519_key"
    echo "$addr $(cut -d' ' -f1,2 "$hd/ssh_host_ed25519_key.pub")" >>"$LABDIR/known_hosts"
    cat >"$hd/sshd_config" <<EOF
# sshd of the leaderlab namespace lab's host h$k (scripts/netns-lab.sh)
ListenAddress $addr:$PORT
HostKey $hd/ssh_host_ed25519_key
PidFile $LABDIR/h$k.pid
AuthorizedKeysFile $LABDIR/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
SetEnv XDG_STATE_HOME=$hd/state XDG_CACHE_HOME=$hd/cache
Subsystem sftp internal-sftp
LogLevel VERBOSE
EOF
    "$SSHD" -t -f "$hd/sshd_config" || die "sshd refuses $hd/sshd_config (above)"
    : >"$LABDIR/h$k-sshd.log"   # this up's log only
    # setsid: sshd outlives this script and its terminal; -D keeps it in the foreground so that
    # the pid file and the namespace name the process we started.
    setsid ip netns exec "$ns" "$SSHD" -D -f "$hd/sshd_config" -E "$LABDIR/h$k-sshd.log" </dev/null >/dev/null 2>&1 &
  done

  # Each sshd's port must answer from the root namespace, where the launcher runs.
  for k in $(seq "$n"); do
    addr=$(addr_of "$k")
    deadline=$((SECONDS + WAIT))
    until port_answers "$addr" "$PORT"; do
      if [ $SECONDS -ge $deadline ]; then
        say "sshd h$k does not answer on $addr:$PORT; the end of its log:"
        tail -n 20 "$LABDIR/h$k-sshd.log" >&2 || true
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
  {
    echo "# the leaderlab namespace lab's hosts (scripts/netns-lab.sh up $n), as vagrant ssh-config writes them"
    for k in $(seq "$n"); do
      cat <<EOF
Host h$k
  HostName $(addr_of "$k")
  Port $PORT
  User root
  IdentityFile $LABDIR/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $LABDIR/known_hosts
  StrictHostKeyChecking yes
EOF
      echo "h$k" >>"$hosts_tmp"
    done
  } >"$LABDIR/ssh-config.tmp"
  mv "$LABDIR/ssh-config.tmp" "$LABDIR/ssh-config"
  mv "$hosts_tmp" "$LABDIR/hosts"

  trap - EXIT INT TERM
  echo "lab up: $n hosts with sshd on $(addr_of 1)..$(addr_of "$n") port $PORT, bridge $BRIDGE $NET.1/24"
  echo "run a cluster on it:"
  echo "  ${BIN:-leaderlab} run --ssh-config $LABDIR/ssh-config -n $((3 * n)) --chaos 'at 1s kill leader'"
  echo "(ssh -F $LABDIR/ssh-config h1 to look around) take it down:"
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
    pid=$(sshd_pid "$k")
    if [ -n "$pid" ]; then pid="pid $pid"; else pid="not running"; fi
    if port_answers "$addr" "$PORT"; then state=answers; else state="does not answer"; fi
    printf '%-8s %-15s sshd %-14s %s:%s %s\n' "$ns" \
      "$(ip -n "$ns" -o -4 addr show dev eth0 2>/dev/null | awk '{print $4}')" \
      "$pid" "$addr" "$PORT" "$state"
  done
  [ -n "$any" ] || echo "no ll-h* namespaces"
  if [ -f "$LABDIR/ssh-config" ]; then echo "ssh config: $LABDIR/ssh-config; hosts file: $LABDIR/hosts"; fi
}

cmd=${1:-}
case $cmd in
  up)     [ $# -le 2 ] || usage; need_root_and_ip "$@"; do_up "${2:-3}" ;;
  down)   [ $# -le 2 ] || usage; need_root_and_ip "$@"; do_down ;;
  status) [ $# -le 2 ] || usage; need_root_and_ip "$@"; do_status ;;
  -h|--help|help) usage ;;
  *) usage ;;
esac
