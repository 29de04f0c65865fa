#!/usr/bin/env bash
# lab.sh: build, check and tear down rocegate's namespace lab, a small real RoCEv2-style
# fabric (4 hosts, 2 leaves, 2 spines, FRR eBGP with ECMP, lldpd, sshd, HTB-shaped veth
# links) plus an optional crowd of management-only sshd hosts. See README.md beside it.
#
# Every node is a network namespace rgl-NODE plus a holder process that owns the node's own
# UTS namespace (hostname = node name) and mount namespace (private /run, /root, /etc/hosts,
# /etc/resolv.conf and, on switches, /etc/frr). Every daemon of a node is started with
# `nsenter` into the holder's namespaces, so an ssh session on a node sees what a login on a
# real box would see: plain `vtysh`, `lldpcli` and `/usr/lib/frr/frrinit.sh` work.
set -euo pipefail

readonly STATE=/run/rocegate-lab
readonly NS_PREFIX=rgl-
readonly BRIDGE=rglmgmt
readonly BRIDGE_ADDR=198.18.0.1/16
readonly SWITCHES=(leaf1 leaf2 spine1 spine2)
readonly HOSTS=(host1 host2 host3 host4)
readonly HOST_RATE=1gbit
readonly UPLINK_RATE=2gbit
readonly CHECK_TIMEOUT_S=${LAB_CHECK_TIMEOUT_S:-60}
readonly SWAP_SETTLE_S=${LAB_SWAP_SETTLE_S:-5}
readonly MAX_MGMT_HOSTS=64

SSH_CONFIG=$STATE/ssh_config

say() { printf 'lab: %s\n' "$*"; }
die() { printf 'lab: error: %s\n' "$*" >&2; exit 1; }

usage() {
  cat <<'EOF'
usage: lab.sh up [--mgmt-hosts N]   build the lab (tearing down any old one), then check it
       lab.sh check                 wait for convergence and verify the lab (exit 0 if good)
       lab.sh down                  stop every lab process, delete namespaces and state
       lab.sh status                one line per node: up or down
       lab.sh shape NODE RATE       set hostN's link (both ends) to RATE, e.g. 500mbit
       lab.sh shape NODE default    restore hostN's link to 1gbit
       lab.sh swap HOST HOST        swap two hosts' cables at their leaf (both on one leaf);
                                    run it again to put them back; returns once the
                                    fabric routes both again without a gap for
                                    LAB_SWAP_SETTLE_S (default 5)
       lab.sh exec NODE CMD...      run CMD in NODE's network, UTS and mount namespaces
       lab.sh slurm-up              start Slurm on the running lab (munged, slurmctld, a
                                    slurmd per host), wait until every host is idle
       lab.sh slurm-check           verify Slurm: srun, salloc + --overlap step, sbcast,
                                    stdin EOF and SIGKILL of a step's srun, drain
       lab.sh slurm-down            stop every Slurm daemon and job, delete its state
                                    (down does this too)
EOF
}

# --- names and addresses --------------------------------------------------------------------

mgmt_addr() {
  case $1 in
    leaf1) echo 198.18.0.2 ;;
    leaf2) echo 198.18.0.3 ;;
    spine1) echo 198.18.0.4 ;;
    spine2) echo 198.18.0.5 ;;
    host[1-4]) echo "198.18.0.1${1#host}" ;;
    m[0-9][0-9]) echo "198.18.1.$((10#${1#m}))" ;;
    *) return 1 ;;
  esac
}

loopback_addr() {
  case $1 in
    leaf1) echo 198.19.255.1 ;;
    leaf2) echo 198.19.255.2 ;;
    spine1) echo 198.19.255.11 ;;
    spine2) echo 198.19.255.12 ;;
  esac
}

asn() {
  case $1 in
    leaf1) echo 65101 ;;
    leaf2) echo 65102 ;;
    spine*) echo 65000 ;;
  esac
}

is_switch() { [[ $1 == leaf[12] || $1 == spine[12] ]]; }
is_host() { [[ $1 == host[1-4] ]]; }

# Nodes of the running lab, as recorded by `up`; the fabric nodes if there is no record.
lab_nodes() {
  if [[ -r $STATE/nodes ]]; then
    cat "$STATE/nodes"
  else
    printf '%s\n' "${SWITCHES[@]}" "${HOSTS[@]}"
  fi
}

holder_pid() {
  local pid
  pid=$(cat "$STATE/$1/holder.pid" 2>/dev/null) || return 1
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

# Runs a command inside a node's network, UTS and mount namespaces.
node_exec() {
  local node=$1 pid
  shift
  pid=$(holder_pid "$node") || die "node $node is not running (run: lab.sh up)"
  (cd / && exec nsenter -t "$pid" -n -u -m -- "$@")
}

# node_exec for a daemon, its output appended to the node's daemons.log. The redirection
# sits on the command inside the subshell, not on a function call: a trap that fires while
# the shell waits would otherwise print into the log (and `up`'s teardown message with it).
node_spawn() {
  local node=$1 pid
  shift
  pid=$(holder_pid "$node") || die "node $node is not running (run: lab.sh up)"
  (cd / && exec nsenter -t "$pid" -n -u -m -- "$@" </dev/null >>"$STATE/$node/daemons.log" 2>&1)
}

# --- preflight ------------------------------------------------------------------------------

require_root() {
  if [[ $(id -u) -ne 0 ]]; then
    printf 'lab: error: the lab needs root (network namespaces, veth, tc); run: sudo %s %s\n' \
      "$0" "$*" >&2
    exit 2
  fi
}

# Dies naming each missing binary and the Debian package to install, given PATH:PACKAGE entries.
require_paths() {
  local missing=() pkgs=() entry path pkg
  for entry in "$@"; do
    path=${entry%%:*}
    pkg=${entry#*:}
    if [[ ! -x $path ]]; then
      missing+=("$path (Debian package $pkg)")
      [[ " ${pkgs[*]} " == *" $pkg "* ]] || pkgs+=("$pkg")
    fi
  done
  if ((${#missing[@]})); then
    printf 'lab: error: missing %s\n' "${missing[@]}" >&2
    printf 'lab: install with: apt-get install -y %s\n' "${pkgs[*]}" >&2
    exit 1
  fi
}

require_tools() {
  require_paths \
    /usr/sbin/sshd:openssh-server /usr/bin/ssh:openssh-client /usr/bin/ssh-keygen:openssh-client \
    /usr/lib/frr/zebra:frr /usr/lib/frr/bgpd:frr /usr/bin/vtysh:frr /usr/lib/frr/frrinit.sh:frr \
    /usr/sbin/lldpd:lldpd /usr/sbin/lldpcli:lldpd /usr/bin/iperf3:iperf3 \
    /usr/bin/ib_write_bw:perftest /usr/sbin/tc:iproute2 /usr/sbin/ip:iproute2 \
    /usr/bin/nsenter:util-linux /usr/bin/unshare:util-linux
  id frr >/dev/null 2>&1 || die "user frr does not exist (reinstall the Debian package frr)"
}

# --- down -----------------------------------------------------------------------------------

lab_namespaces() { ip netns list 2>/dev/null | awk -v p="$NS_PREFIX" 'index($1, p) == 1 {print $1}'; }

lab_pids() {
  local ns f pid nets=()
  for ns in $(lab_namespaces); do ip netns pids "$ns" 2>/dev/null || true; done
  # A node whose namespace name was deleted under it is found through its holder: the pid
  # counts only while it still names a `sleep infinity` (never a stranger that reused the
  # number), and every process sharing the holder's network namespace goes with it.
  for f in "$STATE"/*/holder.pid; do
    pid=$(cat "$f" 2>/dev/null) || continue
    [[ $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) == 'sleep infinity ' ]] || continue
    nets+=("$(readlink "/proc/$pid/ns/net" 2>/dev/null)")
  done
  ((${#nets[@]})) || return 0
  find /proc/[0-9]*/ns/net -maxdepth 0 -printf '%h %l\n' 2>/dev/null |
    awk -v nets="${nets[*]}" 'BEGIN {split(nets, n, " "); for (i in n) want[n[i]] = 1}
      $2 in want {sub("/proc/", "", $1); sub("/ns", "", $1); print $1}' || true
}

lab_down() {
  local pids pid deadline ns
  # munged and slurmctld live in the root namespace: the namespace sweep below misses them.
  slurm_down
  pids=$(lab_pids | sort -u)
  if [[ -n $pids ]]; then
    # shellcheck disable=SC2086
    kill -TERM $pids 2>/dev/null || true
    deadline=$((SECONDS + 5))
    while ((SECONDS < deadline)); do
      pids=$(for pid in $pids; do kill -0 "$pid" 2>/dev/null && echo "$pid"; done || true)
      [[ -z $pids ]] && break
      sleep 0.1
    done
    # shellcheck disable=SC2086
    [[ -n $pids ]] && kill -KILL $pids 2>/dev/null || true
  fi
  for ns in $(lab_namespaces); do ip netns del "$ns" 2>/dev/null || true; done
  ip link del "$BRIDGE" 2>/dev/null || true
  # Bridge-side veth ends vanish with their namespaces; this catches a half-built one.
  ip -o link show 2>/dev/null | awk -F': ' '$2 ~ /^rglm-/ {sub(/@.*/, "", $2); print $2}' |
    while read -r ns; do ip link del "$ns" 2>/dev/null || true; done
  rm -rf "$STATE"
}

# --- up -------------------------------------------------------------------------------------

# The holder runs as `ip netns exec rgl-NODE unshare --uts --mount ... bash -c HOLDER NODE`.
# It names the node, gives it a private /run (so /run/frr, /run/lldpd.socket and pid files
# are the node's own, as on a real box) with the lab's state dir bound back in for sshd, binds
# the node's config over /etc/frr on switches, its own /etc/hosts and /etc/resolv.conf (no
# DNS in the lab: lldpd's FQDN lookup otherwise stalls 10 s on an unreachable resolver) and
# an empty home for root (the build machine's ~/.bashrc would run in every ssh session and
# vtysh would write its history there), records its pid and sleeps until killed. /run may
# hold up to 512 MiB (tmpfs takes memory only as it fills): rocegate's slurm transport puts
# its node agent there with sbcast, and a debug build is about 180 MiB.
# shellcheck disable=SC2016
readonly HOLDER='
set -e
node=$1 state=$2
d=$state/$node
echo "$node" > /proc/sys/kernel/hostname
mount -t tmpfs -o mode=0755,size=512m "rgl-$node-run" "$d/run"
mkdir -p "$d/run/rocegate-lab" "$d/run/sshd" "$d/run/lldpd"
install -d -o frr -g frr -m 0755 "$d/run/frr"
mount --bind "$state" "$d/run/rocegate-lab"
mount -n --move "$d/run" /run
if [ -d "$d/etc-frr" ]; then mount --bind "$d/etc-frr" /etc/frr; fi
mount --bind "$d/hosts" /etc/hosts
mount --bind "$d/home" /root
mount --bind "$state/resolv.conf" /etc/resolv.conf
ip link set lo up
echo $$ > "$d/holder.pid.tmp"
mv "$d/holder.pid.tmp" "$d/holder.pid"
exec sleep infinity
'

start_holder() {
  local node=$1
  setsid ip netns exec "$NS_PREFIX$node" unshare --uts --mount --propagation private \
    bash -c "$HOLDER" holder "$node" "$STATE" </dev/null >>"$STATE/$node/holder.log" 2>&1 &
}

wait_holders() {
  local node deadline=$((SECONDS + 20))
  for node in "$@"; do
    until [[ -s $STATE/$node/holder.pid ]]; do
      ((SECONDS < deadline)) || die "holder of $node did not start: $(cat "$STATE/$node/holder.log")"
      sleep 0.05
    done
  done
}

# `ip -n NS -batch` keeps process spawns down: one per namespace instead of one per command.
ipb() { ip -n "$NS_PREFIX$1" -batch -; }

make_node() {
  local node=$1 addr
  addr=$(mgmt_addr "$node")
  mkdir -p "$STATE/$node/run"
  install -d -m 0700 "$STATE/$node/home"
  ip netns add "$NS_PREFIX$node"
  ip link add "rglm-$node" type veth peer name mgmt0 netns "$NS_PREFIX$node"
  ip link set "rglm-$node" master "$BRIDGE" up
  ipb "$node" <<EOF
link set lo up
addr add $addr/16 dev mgmt0
link set mgmt0 up
EOF
  ssh-keygen -q -t ed25519 -N '' -C "$node" -f "$STATE/$node/ssh_host_ed25519_key"
  printf '%s,%s %s\n' "$node" "$addr" "$(cut -d' ' -f1,2 "$STATE/$node/ssh_host_ed25519_key.pub")" \
    >>"$STATE/known_hosts"
}

# A veth cable between two nodes: cable NODE_A IF_A ADDR_A/31 NODE_B IF_B ADDR_B/31.
cable() {
  ip link add "$2" netns "$NS_PREFIX$1" type veth peer name "$5" netns "$NS_PREFIX$4"
  printf 'addr add %s dev %s\nlink set %s up\n' "$3" "$2" "$2" | ipb "$1"
  printf 'addr add %s dev %s\nlink set %s up\n' "$6" "$5" "$5" | ipb "$4"
}

# HTB root with one default class; reshaping changes the class only, because the kernel
# refuses to "replace" an HTB root with itself ("Change operation not supported"). Any burst
# from 15k to 1m gave iperf3 TCP 95-96 % of the rate here; 64k holds one GSO super-packet.
shape_dev() {
  local node=$1 dev=$2 rate=$3 ns=$NS_PREFIX$1
  if ! tc -n "$ns" qdisc show dev "$dev" root | grep -q '^qdisc htb 1: root'; then
    tc -n "$ns" qdisc replace dev "$dev" root handle 1: htb default 10
  fi
  tc -n "$ns" class replace dev "$dev" parent 1: classid 1:10 \
    htb rate "$rate" ceil "$rate" burst 64k cburst 64k quantum 65536
}

host_leaf_port() {
  case $1 in
    host1) echo "leaf1 swp1" ;;
    host2) echo "leaf1 swp2" ;;
    host3) echo "leaf2 swp1" ;;
    host4) echo "leaf2 swp2" ;;
  esac
}

build_fabric() {
  local host n leaf port l s
  for host in "${HOSTS[@]}"; do
    n=${host#host}
    read -r leaf port <<<"$(host_leaf_port "$host")"
    cable "$leaf" "$port" "198.19.$n.0/31" "$host" eth1 "198.19.$n.1/31"
    echo "route add default via 198.19.$n.0 dev eth1" | ipb "$host"
    shape_dev "$host" eth1 "$HOST_RATE"
    shape_dev "$leaf" "$port" "$HOST_RATE"
  done
  for l in 1 2; do
    for s in 1 2; do
      cable "leaf$l" "swp3$s" "198.19.$((100 + 10 * l + s)).0/31" \
        "spine$s" "swp$l" "198.19.$((100 + 10 * l + s)).1/31"
      shape_dev "leaf$l" "swp3$s" "$UPLINK_RATE"
      shape_dev "spine$s" "swp$l" "$UPLINK_RATE"
    done
  done
  for s in "${SWITCHES[@]}"; do
    ipb "$s" <<EOF
addr add $(loopback_addr "$s")/32 dev lo
EOF
    ip netns exec "$NS_PREFIX$s" sysctl -q -w net.ipv4.ip_forward=1 \
      net.ipv4.fib_multipath_hash_policy=1
  done
}

# BGP peers of a switch: "ADDRESS REMOTE_AS" lines.
bgp_peers() {
  case $1 in
    leaf1) printf '%s 65000\n' 198.19.111.1 198.19.112.1 ;;
    leaf2) printf '%s 65000\n' 198.19.121.1 198.19.122.1 ;;
    spine1) printf '198.19.111.0 65101\n198.19.121.0 65102\n' ;;
    spine2) printf '198.19.112.0 65101\n198.19.122.0 65102\n' ;;
  esac
}

frr_conf() {
  local sw=$1 peer as
  echo "frr defaults datacenter"
  echo "hostname $sw"
  echo "log file /run/frr/frr.log informational"
  echo "service integrated-vtysh-config"
  # With kernel nexthop objects, a port flap left the kernel's ECMP group with one member
  # while zebra believed it had two; plain multipath routes are rewritten whole each time.
  echo "no zebra nexthop kernel enable"
  echo "!"
  # The management subnet is connected on every switch; keep it out of BGP.
  echo "ip prefix-list RGL-MGMT seq 5 permit 198.18.0.0/16 le 32"
  echo "route-map RGL-CONNECTED deny 10"
  echo " match ip address prefix-list RGL-MGMT"
  echo "route-map RGL-CONNECTED permit 20"
  echo "!"
  echo "router bgp $(asn "$sw")"
  echo " bgp router-id $(loopback_addr "$sw")"
  echo " no bgp ebgp-requires-policy"
  echo " timers bgp 3 9"
  while read -r peer as; do
    echo " neighbor $peer remote-as $as"
    echo " neighbor $peer timers connect 5"
  done < <(bgp_peers "$sw")
  echo " address-family ipv4 unicast"
  echo "  redistribute connected route-map RGL-CONNECTED"
  echo "  maximum-paths 4"
  echo " exit-address-family"
  echo "!"
}

write_frr_config() {
  local sw=$1 dir=$STATE/$1/etc-frr
  mkdir -p "$dir"
  # The node's own /etc/frr/daemons: frrinit.sh inside the node reads it.
  cat >"$dir/daemons" <<'EOF'
bgpd=yes
vtysh_enable=yes
zebra_options="  -A 127.0.0.1 -s 90000000"
bgpd_options="   -A 127.0.0.1"
staticd_options="-A 127.0.0.1"
frr_profile="datacenter"
EOF
  echo 'service integrated-vtysh-config' >"$dir/vtysh.conf"
  printf '%s\n' "$(frr_conf "$sw")" >"$dir/frr.conf"
  chown -R frr:frr "$dir"
  chmod 0750 "$dir"
  chmod 0640 "$dir"/*
}

start_sshd() {
  local node=$1
  node_spawn "$node" /usr/sbin/sshd -f /dev/null \
    -o HostKey="$STATE/$node/ssh_host_ed25519_key" \
    -o ListenAddress="$(mgmt_addr "$node")" \
    -o AuthorizedKeysFile="$STATE/authorized_keys" \
    -o PermitRootLogin=prohibit-password -o PasswordAuthentication=no \
    -o KbdInteractiveAuthentication=no -o StrictModes=no -o UseDNS=no \
    -o PrintMotd=no -o PrintLastLog=no -o MaxStartups=200 -o MaxSessions=20 \
    -o PidFile="$STATE/$node/sshd.pid"
}

start_lldpd() {
  local node=$1 ifaces=eth1
  is_switch "$node" && ifaces='swp*'
  cat >"$STATE/$node/lldpd.conf" <<EOF
configure system hostname $node
configure lldp tx-interval 5
configure lldp portidsubtype ifname
EOF
  # Default socket and pid paths are in the node's private /run, so plain `lldpcli`
  # in an ssh session on the node talks to this lldpd.
  node_spawn "$node" /usr/sbin/lldpd -I "$ifaces" -m "$(mgmt_addr "$node")" \
    -O "$STATE/$node/lldpd.conf"
}

start_frr() {
  node_spawn "$1" /usr/lib/frr/frrinit.sh start
}

# /etc/hosts of each node (its own name, then every lab node's management address) and
# a resolv.conf without servers, so that no lookup waits on a resolver the lab cannot reach.
write_name_files() {
  local node
  printf '# rocegate lab: no DNS\noptions timeout:1 attempts:1\nnameserver 127.0.0.1\n' \
    >"$STATE/resolv.conf"
  for node in "$@"; do printf '%s %s\n' "$(mgmt_addr "$node")" "$node" >>"$STATE/hosts"; done
  for node in "$@"; do
    printf '127.0.0.1 localhost\n127.0.1.1 %s\n' "$node" | cat - "$STATE/hosts" >"$STATE/$node/hosts"
  done
}

write_ssh_files() {
  local node
  ssh-keygen -q -t ed25519 -N '' -C rocegate-lab -f "$STATE/id_ed25519"
  cp "$STATE/id_ed25519.pub" "$STATE/authorized_keys"
  echo "# rocegate lab: ssh -F $SSH_CONFIG NODE CMD" >"$SSH_CONFIG"
  for node in "$@"; do
    cat >>"$SSH_CONFIG" <<EOF
Host $node
  HostName $(mgmt_addr "$node")
  User root
  IdentityFile $STATE/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $STATE/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  BatchMode yes
  ConnectTimeout 5
  LogLevel ERROR
EOF
  done
  printf '%s\n' "$@" | grep '^m[0-9]' >"$STATE/mgmt_hosts" || true
  cat >"$STATE/pdsh.env" <<EOF
# source this, then: pdsh -w ^$STATE/mgmt_hosts hostname
export PDSH_RCMD_TYPE=ssh
export PDSH_SSH_ARGS_APPEND="-F $SSH_CONFIG"
EOF
}

# Armed during `up`: any failure, `die` or signal tears the half-built lab down.
on_up_failure() {
  local rc=$1
  trap - EXIT INT TERM
  printf 'lab: up failed or was interrupted (status %d); tearing down\n' "$rc" >&2
  lab_down
  exit $((rc == 0 ? 1 : rc))
}

lab_up() {
  local mgmt_hosts=0 node sw i t0=$EPOCHREALTIME
  while (($#)); do
    case $1 in
      --mgmt-hosts)
        [[ ${2:-} =~ ^[0-9]+$ ]] || die "--mgmt-hosts needs a number 0..$MAX_MGMT_HOSTS"
        mgmt_hosts=$((10#$2))
        shift 2
        ;;
      --mgmt-hosts=*)
        mgmt_hosts=${1#*=}
        [[ $mgmt_hosts =~ ^[0-9]+$ ]] || die "--mgmt-hosts needs a number 0..$MAX_MGMT_HOSTS"
        mgmt_hosts=$((10#$mgmt_hosts))
        shift
        ;;
      *) die "up: unknown argument '$1' (usage: lab.sh up [--mgmt-hosts N])" ;;
    esac
  done
  ((mgmt_hosts <= MAX_MGMT_HOSTS)) || die "--mgmt-hosts $mgmt_hosts: at most $MAX_MGMT_HOSTS"

  local nodes=("${SWITCHES[@]}" "${HOSTS[@]}")
  for ((i = 1; i <= mgmt_hosts; i++)); do nodes+=("$(printf 'm%02d' "$i")"); done

  if [[ -d $STATE ]] || [[ -n $(lab_namespaces) ]]; then
    say "tearing down the old lab"
    lab_down
  fi
  trap 'on_up_failure $?' EXIT
  trap 'on_up_failure 130' INT
  trap 'on_up_failure 143' TERM

  say "building ${#nodes[@]} nodes (${#SWITCHES[@]} switches, ${#HOSTS[@]} hosts, $mgmt_hosts mgmt-only)"
  mkdir -p "$STATE" /run/sshd
  chmod 0755 "$STATE"
  printf '%s\n' "${nodes[@]}" >"$STATE/nodes"
  ip link add "$BRIDGE" type bridge
  ip addr add "$BRIDGE_ADDR" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  : >"$STATE/known_hosts"
  for node in "${nodes[@]}"; do make_node "$node"; done
  write_name_files "${nodes[@]}"
  write_ssh_files "${nodes[@]}"
  for sw in "${SWITCHES[@]}"; do write_frr_config "$sw"; done

  say "starting holders (hostname, private /run, /etc/frr)"
  for node in "${nodes[@]}"; do start_holder "$node"; done
  wait_holders "${nodes[@]}"

  say "cabling the fabric (veth, addresses, HTB: hosts $HOST_RATE, uplinks $UPLINK_RATE)"
  build_fabric

  say "starting frr (zebra, bgpd) on switches, lldpd on hosts and switches, sshd everywhere"
  for sw in "${SWITCHES[@]}"; do start_frr "$sw"; done
  for node in "${SWITCHES[@]}" "${HOSTS[@]}"; do start_lldpd "$node"; done
  for node in "${nodes[@]}"; do start_sshd "$node"; done
  # Each lldpd sent its first frames before its peers listened; send again now rather than
  # waiting for the next tx-interval.
  for node in "${SWITCHES[@]}" "${HOSTS[@]}"; do node_spawn "$node" lldpcli update; done

  # A failed check leaves the lab up to be looked at; an interrupted one tears it down.
  trap - EXIT
  say "built in $(elapsed "$t0") s; checking"
  lab_check
  trap - INT TERM
  say "up in $(elapsed "$t0") s"
}

elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.1f", b - a}'; }

# --- check ----------------------------------------------------------------------------------

lab_ssh() { ssh -F "$SSH_CONFIG" "$@"; }

# Each check_* prints nothing and returns 0 when good, or prints what is wrong.

check_ssh() {
  local node tmp bad=()
  tmp=$(mktemp -d)
  for node in "$@"; do
    lab_ssh "$node" hostname >"$tmp/$node" 2>"$tmp/$node.err" </dev/null &
  done
  wait
  for node in "$@"; do
    [[ $(cat "$tmp/$node") == "$node" ]] ||
      bad+=("$node ($(cat "$tmp/$node" "$tmp/$node.err" | head -c 200 | tr '\n' ' '))")
  done
  rm -rf "$tmp"
  ((${#bad[@]} == 0)) && return 0
  echo "ssh NODE hostname wrong or failing: ${bad[*]}"
  return 1
}

check_bgp() {
  local sw out states est bad=()
  for sw in "${SWITCHES[@]}"; do
    out=$(lab_ssh "$sw" vtysh -c "'show bgp summary json'" </dev/null 2>&1) || {
      bad+=("$sw: vtysh failed: $(head -c 200 <<<"$out" | tr '\n' ' ')")
      continue
    }
    states=$(grep -Eo '"state" *: *"[A-Za-z]+"' <<<"$out" | grep -Eo '[A-Za-z]+"$' | tr -d '"' || true)
    est=$(grep -c '^Established$' <<<"$states" || true)
    if ((est < 2)) || grep -qv '^Established$' <<<"$states"; then
      bad+=("$sw: sessions $(echo $states | tr ' ' ',')")
    fi
  done
  ((${#bad[@]} == 0)) && return 0
  echo "bgp not established: ${bad[*]}"
  return 1
}

check_ecmp() {
  local leaf prefix n bad=()
  for leaf in leaf1 leaf2; do
    for prefix in $([[ $leaf == leaf1 ]] && echo 198.19.3.0/31 198.19.4.0/31 || echo 198.19.1.0/31 198.19.2.0/31); do
      n=$(ip -n "$NS_PREFIX$leaf" route show "$prefix" | grep -c 'nexthop via' || true)
      ((n == 2)) || bad+=("$leaf $prefix: $n next hops")
    done
  done
  ((${#bad[@]} == 0)) && return 0
  echo "ecmp wrong: ${bad[*]}"
  return 1
}

# ICMP with ping where iputils-ping is installed. Without it (a minimal Debian), a TCP SYN
# from one host's data address to a closed port on another answered by "Connection refused"
# proves the same round trip across the fabric; "No route" or a timeout does not.
check_ping() {
  local from=$1 to=$2 out src dst
  src=198.19.${from#host}.1 dst=198.19.${to#host}.1
  if command -v ping >/dev/null 2>&1; then
    node_exec "$from" ping -q -c 2 -i 0.2 -W 1 -I "$src" "$dst" >/dev/null 2>&1 && return 0
    echo "$from ($src) cannot ping $to ($dst)"
    return 1
  fi
  out=$(node_exec "$from" iperf3 -c "$dst" -p 9 -B "$src" -t 1 --connect-timeout 1000 2>&1) || true
  grep -q 'Connection refused' <<<"$out" && return 0
  echo "$from ($src) cannot reach $to ($dst): $out"
  return 1
}

check_lldp() {
  local out
  out=$(lab_ssh host1 lldpcli show neighbors -f json </dev/null 2>&1) || true
  grep -q '"leaf1"' <<<"$out" && grep -q '"swp1"' <<<"$out" && return 0
  echo "lldp: host1 eth1 does not see leaf1 swp1"
  return 1
}

# Runs each check in turn until it passes, within LAB_CHECK_TIMEOUT_S in all; a check that
# is still failing then is printed and the call fails.
until_ok() {
  local deadline=$((SECONDS + CHECK_TIMEOUT_S)) step msg
  for step in "$@"; do
    # shellcheck disable=SC2086
    until msg=$($step); do
      if ((SECONDS >= deadline)); then
        printf 'lab: check failed after %d s: %s\n' "$CHECK_TIMEOUT_S" "$msg" >&2
        return 1
      fi
      sleep 1
    done
  done
}

lab_check() {
  [[ -r $SSH_CONFIG ]] || die "no lab is running (run: lab.sh up)"
  [[ $CHECK_TIMEOUT_S =~ ^[0-9]+$ ]] ||
    die "LAB_CHECK_TIMEOUT_S must be a whole number of seconds, not '$CHECK_TIMEOUT_S'"
  local nodes t0=$EPOCHREALTIME
  mapfile -t nodes < <(lab_nodes)
  until_ok "check_ssh ${nodes[*]}" check_bgp check_ecmp "check_ping host1 host4" check_lldp ||
    return 1
  say "check ok in $(elapsed "$t0") s: ${#nodes[@]} nodes answer ssh with their names," \
    "all 4 bgp sessions established (both ends), 2 ecmp next hops per far host subnet on each leaf," \
    "host1 reaches host4 across the fabric, lldp host1 eth1 sees leaf1 swp1"
}

# --- slurm ----------------------------------------------------------------------------------

# A real Slurm cluster over the lab (README.md, "Slurm in the lab"): one munged and slurmctld
# in the root namespace, one slurmd per host inside the host's namespaces. Every file lives
# under $SLURM_DIR, which each node sees through its /run/rocegate-lab bind.
readonly SLURM_DIR=$STATE/slurm
readonly SLURM_CONF_FILE=$SLURM_DIR/slurm.conf
readonly MUNGE_SOCKET=$STATE/munge/munge.socket.2
readonly SLURM_CTL_NAME=rglctl
readonly SLURM_TIMEOUT_S=${LAB_SLURM_TIMEOUT_S:-60}

require_slurm_tools() {
  require_paths \
    /usr/sbin/munged:munge /usr/sbin/mungekey:munge /usr/sbin/slurmctld:slurmctld \
    /usr/sbin/slurmd:slurmd /usr/bin/srun:slurm-client /usr/bin/salloc:slurm-client \
    /usr/bin/sbcast:slurm-client /usr/bin/scontrol:slurm-client /usr/bin/sinfo:slurm-client
}

# Every Slurm client of the lab runs in the root namespace with the lab's configuration.
lab_slurm() { SLURM_CONF=$SLURM_CONF_FILE "$@"; }

# CPUs, sockets, cores and memory as slurmd detects them here; every host is this machine.
slurm_node_hw() {
  slurmd -C 2>/dev/null | awk 'NR == 1 {sub(/^NodeName=[^ ]* /, ""); print}'
}

slurm_conf() {
  local hw=$1
  cat <<EOF
# rocegate lab: written by tests/lab/lab.sh slurm-up; clients use SLURM_CONF=$SLURM_CONF_FILE
ClusterName=rocegate-lab
# slurmctld runs in the root network namespace (the bridge address) under its own hostname.
SlurmctldHost=$SLURM_CTL_NAME(198.18.0.1)
SlurmctldPort=6817
SlurmdPort=6818
# One munged for the whole lab; every node sees its socket through /run/rocegate-lab.
# cred/munge reads AuthInfo as auth/munge does (22.05), so one line serves both.
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$SLURM_DIR/ctld
SlurmdSpoolDir=$SLURM_DIR/spool/%n
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/slurmd-%n.pid
SlurmctldLogFile=$SLURM_DIR/slurmctld.log
SlurmdLogFile=$SLURM_DIR/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
# Nodes share the machine's cgroups: no cgroup plugin anywhere.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SwitchType=switch/none
MpiDefault=none
# No slurmdbd: only finished jobs (not steps) are kept, for sacct -c.
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$SLURM_DIR/jobcomp.txt
# Whole cores, memory not a consumable: a job on a host leaves room for another.
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# The hosts share 2 CPUs and one memory: trust the lines below, never drain on a mismatch.
SlurmdParameters=config_overrides
# The build machine's rlimits are not the lab's business.
PropagateResourceLimits=NONE
# A host that comes back (slurmd restarted, lab rebuilt) is schedulable at once; a finished
# job leaves squeue after 2 s; a cancelled step's tasks get SIGKILL 2 s after SIGTERM.
ReturnToService=2
MinJobAge=2
KillWait=2
SlurmdTimeout=30
# An salloc --no-shell allocation has no srun to ping: never end it for inactivity.
InactiveLimit=0
NodeName=host[1-4] NodeAddr=198.18.0.1[1-4] $hw State=UNKNOWN
PartitionName=lab Nodes=host[1-4] Default=YES MaxTime=INFINITE State=UP
EOF
}

# Root-namespace daemons of the lab's Slurm (munged, slurmctld), found by the lab paths on
# their command line, so a lost pid file or a stranger with a reused pid never matters.
slurm_root_pids() {
  local f pid cmd
  for f in /proc/[0-9]*/cmdline; do
    pid=${f#/proc/}
    pid=${pid%/cmdline}
    cmd=$(tr '\0' ' ' 2>/dev/null <"$f") || continue
    case $cmd in
      *"--socket=$MUNGE_SOCKET "* | *"slurmctld -f $SLURM_CONF_FILE "*) echo "$pid" ;;
    esac
  done
}

# Slurm clients of the lab (srun, salloc, sbcast...): found by SLURM_CONF in their
# environment. srun outlives a dead controller and ignores SIGTERM while it cannot reach it.
slurm_client_pids() {
  local f pid comm
  for f in /proc/[0-9]*/comm; do
    pid=${f#/proc/}
    pid=${pid%/comm}
    read -r comm 2>/dev/null <"$f" || continue
    case $comm in
      srun | salloc | sbatch | sbcast | sattach | scancel | scontrol | sinfo | squeue | sacct) ;;
      *) continue ;;
    esac
    tr '\0' '\n' 2>/dev/null <"/proc/$pid/environ" | grep -qxF "SLURM_CONF=$SLURM_CONF_FILE" &&
      echo "$pid"
  done
  return 0
}

# slurmd, slurmstepd and every job task in the lab hosts: the slurm daemons in a host's
# network namespace and all their descendants.
slurm_node_pids() {
  local host pid comm roots=()
  for host in "${HOSTS[@]}"; do
    for pid in $(ip netns pids "$NS_PREFIX$host" 2>/dev/null); do
      comm=$(cat "/proc/$pid/comm" 2>/dev/null) || continue
      [[ $comm == slurmd || $comm == slurmstepd ]] && roots+=("$pid")
    done
  done
  ((${#roots[@]})) || return 0
  ps -e -o pid=,ppid= | awk -v roots="${roots[*]}" '
    BEGIN {split(roots, r, " "); for (i in r) keep[r[i]] = 1}
    {parent[$1] = $2}
    END {
      do {
        grew = 0
        for (p in parent) if (!(p in keep) && (parent[p] in keep)) {keep[p] = 1; grew = 1}
      } while (grew)
      for (p in keep) print p
    }'
}

# Sends SIGTERM to a list of pids (one string), then SIGKILL to those alive after 5 s.
kill_and_wait() {
  local pids=$1 pid deadline=$((SECONDS + 5))
  [[ -n ${pids// /} ]] || return 0
  # shellcheck disable=SC2086
  kill -TERM $pids 2>/dev/null || true
  while ((SECONDS < deadline)); do
    # A zombie counts as gone: its parent (slurmd, or init) reaps it in its own time.
    pids=$(for pid in $pids; do
      [[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) =~ ^[^Z]$ ]] && echo "$pid"
    done || true)
    [[ -z $pids ]] && return 0
    sleep 0.1
  done
  # shellcheck disable=SC2086
  kill -KILL $pids 2>/dev/null || true
}

slurm_down() {
  local pids
  # Clients and everything of the jobs at once with SIGKILL: slurmstepd sat out SIGTERM for
  # the full 5 s here, and nothing of theirs outlives the state directory removed below.
  pids=$(slurm_client_pids; slurm_node_pids)
  # shellcheck disable=SC2086
  [[ -z ${pids//[[:space:]]/} ]] || kill -KILL $pids 2>/dev/null || true
  kill_and_wait "$(slurm_root_pids)"
  rm -rf "$SLURM_DIR" "$STATE/munge"
}

start_munged() {
  local d=$SLURM_DIR/munge
  install -d -m 0700 "$d"
  install -d -m 0755 "$STATE/munge"
  mungekey --create --keyfile="$d/munge.key" --bits=1024
  chmod 0400 "$d/munge.key"
  munged --socket="$MUNGE_SOCKET" --key-file="$d/munge.key" --pid-file="$d/munged.pid" \
    --seed-file="$d/munged.seed" --log-file="$d/munged.log" --origin=198.18.0.1 \
    </dev/null >>"$d/munged.out" 2>&1 || die "munged did not start: $(cat "$d/munged.out" "$d/munged.log" 2>/dev/null)"
}

# slurmctld insists that its own hostname is SlurmctldHost's: a UTS namespace of its own
# gives it one without renaming the build machine.
start_slurmctld() {
  # shellcheck disable=SC2016
  setsid unshare --uts sh -c 'echo "$1" >/proc/sys/kernel/hostname && shift && exec "$@"' \
    sh "$SLURM_CTL_NAME" \
    slurmctld -f "$SLURM_CONF_FILE" </dev/null >>"$SLURM_DIR/slurmctld.out" 2>&1 ||
    die "slurmctld did not start: $(tail -n 20 "$SLURM_DIR/slurmctld.out" "$SLURM_DIR/slurmctld.log" 2>/dev/null)"
}

start_slurmd() {
  node_spawn "$1" slurmd -f "$SLURM_CONF_FILE" ||
    die "slurmd on $1 did not start: $(tail -n 20 "$STATE/$1/daemons.log" "$SLURM_DIR/slurmd-$1.log" 2>/dev/null)"
}

# Prints nothing and returns 0 once every host is idle; otherwise prints the node states.
check_slurm_idle() {
  local out
  out=$(lab_slurm sinfo -N -h -o '%N|%T' 2>&1) || { echo "sinfo failed: $out"; return 1; }
  [[ $(sort <<<"$out" | tr '\n' ' ') == "host1|idle host2|idle host3|idle host4|idle " ]] && return 0
  echo "nodes not idle: $(tr '\n' ' ' <<<"$out")"
  return 1
}

wait_slurm_idle() {
  local deadline=$((SECONDS + SLURM_TIMEOUT_S)) msg
  until msg=$(check_slurm_idle); do
    if ((SECONDS >= deadline)); then
      printf 'lab: slurm: not ready after %d s: %s\n' "$SLURM_TIMEOUT_S" "$msg" >&2
      return 1
    fi
    sleep 0.5
  done
}

slurm_up() {
  local host t0=$EPOCHREALTIME hw
  [[ -r $SSH_CONFIG ]] || die "no lab is running (run: lab.sh up)"
  for host in "${HOSTS[@]}"; do holder_pid "$host" >/dev/null || die "node $host is not running"; done
  [[ $SLURM_TIMEOUT_S =~ ^[0-9]+$ ]] ||
    die "LAB_SLURM_TIMEOUT_S must be a whole number of seconds, not '$SLURM_TIMEOUT_S'"
  if [[ -d $SLURM_DIR ]] || [[ -n $(slurm_root_pids) ]]; then
    say "slurm: stopping the old cluster"
    slurm_down
  fi
  # Debian's own services listen on the same ports in the root namespace; say so, not hang.
  if ss -Hltn 'sport = :6817' 2>/dev/null | grep -q .; then
    die "port 6817 (slurmctld) is taken in the root namespace: $(ss -Hltnp 'sport = :6817')"
  fi
  hw=$(slurm_node_hw)
  [[ $hw == CPUs=* ]] || die "slurmd -C printed no hardware line"
  install -d -m 0755 "$SLURM_DIR" "$SLURM_DIR/ctld" "$SLURM_DIR/spool"
  for host in "${HOSTS[@]}"; do install -d -m 0755 "$SLURM_DIR/spool/$host"; done
  slurm_conf "$hw" >"$SLURM_CONF_FILE"
  # slurmd 22.05 initialises a cgroup plugin even when no plugin uses cgroups, and its
  # default, autodetect, fails in a node: `ip netns exec` mounted a fresh /sys there, with
  # nothing on /sys/fs/cgroup. cgroup/v1 loads without touching any cgroup.
  printf '# rocegate lab: see slurm.conf\nCgroupPlugin=cgroup/v1\n' >"$SLURM_DIR/cgroup.conf"
  say "slurm: starting munged, slurmctld ($SLURM_CTL_NAME, 198.18.0.1), slurmd on ${HOSTS[*]}"
  start_munged
  start_slurmctld
  for host in "${HOSTS[@]}"; do start_slurmd "$host"; done
  wait_slurm_idle || return 1
  say "slurm up in $(elapsed "$t0") s: 4 hosts idle in partition lab; use SLURM_CONF=$SLURM_CONF_FILE"
}

# The allocation half of slurm-check, on job $1 (host1 and host2); the caller cancels it.
slurm_check_alloc() {
  local job=$1 out host want tmp
  out=$(lab_slurm timeout 60 srun --jobid="$job" --overlap -N2 hostname 2>&1 | sort | tr '\n' ' ') || true
  [[ $out == "host1 host2 " ]] ||
    { echo "lab: slurm-check: srun --jobid=$job --overlap -N2 hostname printed: $out" >&2; return 1; }
  want="rocegate sbcast $job $RANDOM"
  tmp=$(mktemp)
  echo "$want" >"$tmp"
  out=$(lab_slurm timeout 60 sbcast --jobid="$job" --force "$tmp" /run/rocegate-sbcast-test 2>&1) ||
    { rm -f "$tmp"; echo "lab: slurm-check: sbcast: $out" >&2; return 1; }
  rm -f "$tmp"
  for host in host1 host2; do
    out=$(node_exec "$host" cat /run/rocegate-sbcast-test 2>&1) || true
    [[ $out == "$want" ]] ||
      { echo "lab: slurm-check: $host /run/rocegate-sbcast-test: $out" >&2; return 1; }
    node_exec "$host" rm -f /run/rocegate-sbcast-test
  done
  [[ ! -e /run/rocegate-sbcast-test ]] ||
    { echo "lab: slurm-check: sbcast wrote into the root namespace's /run" >&2; return 1; }
}

# Tasks of step-life checks, found by their exact command line in a host.
slurm_marker_pids() {
  local host pid
  for host in host1 host2; do
    for pid in $(ip netns pids "$NS_PREFIX$host" 2>/dev/null); do
      [[ $(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") == "sleep 3600 " ]] && echo "$pid"
    done
  done
  return 0
}

# What rocegate relies on, in job $1: a closed stdin reaches every task as EOF and leaves the
# step running; SIGKILL to srun (its own process only) cancels the step and ends its tasks.
slurm_check_step_life() {
  local job=$1 out=$SLURM_DIR/check-step.out pid step deadline=$((SECONDS + 20))
  : >"$out"
  # shellcheck disable=SC2016
  SLURM_CONF=$SLURM_CONF_FILE srun --jobid="$job" --overlap -N2 --job-name=rgl-step-life \
    sh -c 'cat >/dev/null; echo "eof $(hostname)"; exec sleep 3600' </dev/null >"$out" 2>&1 &
  pid=$!
  # Not this shell's job any more: no "Killed" report for it below.
  disown "$pid"
  until [[ $(grep -c '^eof host' "$out") == 2 ]]; do
    if ((SECONDS >= deadline)); then
      kill -KILL "$pid" 2>/dev/null || true
      echo "lab: slurm-check: tasks did not report EOF on stdin: $(tr '\n' ' ' <"$out")" >&2
      return 1
    fi
    sleep 0.1
  done
  step=$(lab_slurm squeue -h -s -j "$job" -o '%i %j' | awk '$2 == "rgl-step-life" {print $1}')
  if [[ -z $step ]] || [[ -z $(slurm_marker_pids) ]]; then
    kill -KILL "$pid" 2>/dev/null || true
    echo "lab: slurm-check: after stdin EOF the step or its tasks are gone" >&2
    return 1
  fi
  kill -KILL "$pid"
  while lab_slurm squeue -h -s -j "$job" -o '%i' | grep -qxF "$step" ||
    [[ -n $(slurm_marker_pids) ]]; do
    if ((SECONDS >= deadline)); then
      echo "lab: slurm-check: step $step still runs after SIGKILL to its srun" >&2
      return 1
    fi
    sleep 0.1
  done
  rm -f "$out"
}

slurm_check() {
  [[ -r $SLURM_CONF_FILE ]] || die "no lab slurm is running (run: lab.sh slurm-up)"
  local t0=$EPOCHREALTIME out job rc=0
  wait_slurm_idle || return 1

  # srun in the root namespace: slurmd connects back to it over the bridge for the output.
  out=$(lab_slurm timeout 60 srun -N4 --ntasks-per-node=1 hostname 2>&1 | sort | tr '\n' ' ') || true
  [[ $out == "host1 host2 host3 host4 " ]] ||
    { echo "lab: slurm-check: srun -N4 hostname printed: $out" >&2; return 1; }

  out=$(lab_slurm timeout 60 salloc -N2 -w host1,host2 --no-shell 2>&1) || true
  job=$(sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p' <<<"$out")
  [[ -n $job ]] || { echo "lab: slurm-check: salloc --no-shell: $out" >&2; return 1; }
  slurm_check_alloc "$job" && slurm_check_step_life "$job" || rc=$?
  lab_slurm scancel "$job" || true
  ((rc == 0)) || return 1

  lab_slurm scontrol update NodeName=host3 State=DRAIN Reason=lab-check
  out=$(lab_slurm sinfo -N -h -n host3 -o '%N|%T|%E' 2>&1) || true
  [[ $out == "host3|drained|lab-check" ]] ||
    { echo "lab: slurm-check: after DRAIN, sinfo: $out" >&2; return 1; }
  lab_slurm scontrol update NodeName=host3 State=RESUME
  wait_slurm_idle || return 1

  say "slurm check ok in $(elapsed "$t0") s: srun -N4 hostname from the root namespace printed" \
    "host1..host4; job $job (salloc --no-shell -w host1,host2) ran an --overlap step and sbcast" \
    "a file into both hosts' private /run; a step's tasks saw EOF on stdin and kept" \
    "running, SIGKILL to its srun ended the step; host3 drained and resumed"
}

# --- status, shape, exec --------------------------------------------------------------------

# Daemons a node should run, as "NAME PIDFILE" with the pid file as seen inside the node.
node_daemons() {
  echo "sshd $STATE/$1/sshd.pid"
  if is_switch "$1"; then echo "zebra /run/frr/zebra.pid"; echo "bgpd /run/frr/bgpd.pid"; fi
  if is_switch "$1" || is_host "$1"; then echo "lldpd /run/lldpd.pid"; fi
}

lab_status() {
  local node down=0 missing
  while read -r node; do
    if ! holder_pid "$node" >/dev/null; then
      echo "$node down"
      down=1
      continue
    fi
    # One nsenter per node: the pid files of frr and lldpd live in the node's private /run.
    # shellcheck disable=SC2016
    missing=$(node_daemons "$node" | node_exec "$node" sh -c '
      while read -r name pidfile; do
        pid=$(cat "$pidfile" 2>/dev/null) && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null ||
          printf "%s " "$name"
      done')
    if [[ -n $missing ]]; then
      echo "$node down (not running: ${missing% })"
      down=1
    else
      echo "$node up"
    fi
  done < <(lab_nodes)
  return $down
}

lab_shape() {
  (($# == 2)) || die "usage: lab.sh shape hostN RATE|default"
  local host=$1 rate=$2 leaf port
  is_host "$host" || die "shape: '$host' is not a host (hosts are host1..host4)"
  [[ $rate == default ]] && rate=$HOST_RATE
  [[ $rate =~ ^[0-9]+(\.[0-9]+)?([kmgt]?bit|[kmgt]?bps)$ ]] ||
    die "shape: bad rate '$rate' (examples: 500mbit, 1gbit, default)"
  holder_pid "$host" >/dev/null || die "node $host is not running (run: lab.sh up)"
  read -r leaf port <<<"$(host_leaf_port "$host")"
  shape_dev "$host" eth1 "$rate"
  shape_dev "$leaf" "$port" "$rate"
  say "$host eth1 and $leaf $port shaped to $rate"
}

# Two hosts' cables swapped at their leaf, as a technician who plugs them into each other's
# ports would: the leaf's two veth ends exchange names, so leaf1's swp1 now leads to the
# other host. Addresses and routes follow the devices, so traffic still flows; only what
# LLDP reports (the leaf advertises its ifname as the port id) changes. Swapping again
# restores the cabling the inventory describes.
lab_swap() {
  (($# == 2)) || die "usage: lab.sh swap HOST HOST"
  local a=$1 b=$2 la pa lb pb
  is_host "$a" && is_host "$b" && [[ $a != "$b" ]] ||
    die "swap: give two different hosts (hosts are host1..host4)"
  read -r la pa <<<"$(host_leaf_port "$a")"
  read -r lb pb <<<"$(host_leaf_port "$b")"
  [[ $la == "$lb" ]] ||
    die "swap: $a is on $la and $b on $lb; only two ports of one leaf can be swapped"
  holder_pid "$la" >/dev/null || die "node $la is not running (run: lab.sh up)"
  # An interface must be down to be renamed. zebra follows a rename, but now and then keeps
  # a renamed port's address on the object of its old name: the port then has no connected
  # route in FRR, the leaf stops announcing the host's subnet and the host is cut off for
  # good (seen in CI). So the addresses come off before the renames and go back on the same
  # devices after, and zebra learns each under the device's new name.
  local aa ab
  aa=$(ip -n "$NS_PREFIX$la" -4 -o addr show dev "$pa" | awk '{print $4}')
  ab=$(ip -n "$NS_PREFIX$la" -4 -o addr show dev "$pb" | awk '{print $4}')
  [[ -n $aa && -n $ab ]] || die "swap: $la $pa or $pb has no IPv4 address (run: lab.sh up)"
  ipb "$la" <<EOF
addr del $aa dev $pa
addr del $ab dev $pb
link set $pa down
link set $pb down
link set $pa name rgswap
link set $pb name $pa
link set rgswap name $pb
link set $pa up
link set $pb up
addr add $aa dev $pb
addr add $ab dev $pa
EOF
  # Tell the leaf's lldpd now rather than at its next 5 s interval.
  node_exec "$la" lldpcli update >/dev/null 2>&1 || true
  # The ports went down, so the leaf withdraws hosts' subnets from BGP and originates them
  # again once the ports are up, a second or two later, at a moment zebra chooses (renamed
  # ports confuse its per-name state, so nothing on the leaf says when it is done). Return
  # once the far leaf has routed both subnets over both spines and traffic has crossed,
  # without a gap, for SWAP_SETTLE_S: a test that runs traffic next must not race BGP.
  local far since=$SECONDS
  far=$([[ $la == leaf1 ]] && echo host4 || echo host1)
  while ((SECONDS - since < SWAP_SETTLE_S)); do
    if ! check_ecmp >/dev/null || ! check_ping "$a" "$far" >/dev/null ||
      ! check_ping "$b" "$far" >/dev/null; then
      until_ok check_ecmp "check_ping $a $far" "check_ping $b $far" || return 1
      since=$SECONDS
    fi
    sleep 0.5
  done
  say "$la: the cables of $a ($pa) and $b ($pb) are swapped"
}

main() {
  local cmd=${1:-}
  (($#)) && shift
  case $cmd in
    up | check | down | status | shape | swap | exec | slurm-up | slurm-check | slurm-down) ;;
    -h | --help | help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
  require_root "$cmd" "$@"
  case $cmd in
    up) require_tools; lab_up "$@" ;;
    check) lab_check ;;
    down) lab_down ;;
    status) lab_status ;;
    shape) lab_shape "$@" ;;
    swap) lab_swap "$@" ;;
    slurm-up) require_slurm_tools; slurm_up ;;
    slurm-check) slurm_check ;;
    slurm-down) slurm_down ;;
    exec)
      (($# >= 2)) || die "usage: lab.sh exec NODE CMD..."
      node_exec "$@"
      ;;
  esac
}

main "$@"
