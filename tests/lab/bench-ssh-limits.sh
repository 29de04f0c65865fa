#!/usr/bin/env bash
# SSH limits benchmark (not a test): what one controller pays per OpenSSH
# ControlMaster, and what sshd's MaxSessions and MaxStartups do when a
# controller pushes past them. Numbers for docs/scale.md.
#
#   tests/lab/bench-ssh-limits.sh            (as root; about 90 s)
#
# Starts two throwaway sshds on 127.0.0.1 with a generated host key and an
# authorized key (nothing of the machine's sshd is touched):
#   - "open":    MaxStartups 1000, so opening many masters at once measures
#                the client, not sshd's early drop (on a real pod every node
#                has its own sshd and sees one connection);
#   - "default": OpenSSH's defaults, MaxStartups 10:30:100, MaxSessions 10.
# Every pseudo-host is a distinct ControlPath, so each is its own master
# process and its own TCP connection. sshd and the clients share this
# machine's cores, so times are upper bounds for the client side alone.
set -euo pipefail

if [ "$(id -u)" != 0 ]; then
    echo "bench-ssh-limits: needs root (sshd's privilege separation)" >&2
    exit 2
fi
[ -x /usr/sbin/sshd ] || { echo "bench-ssh-limits: /usr/sbin/sshd is missing (apt-get install openssh-server)" >&2; exit 2; }

D=$(mktemp -d /tmp/bench-ssh-limits.XXXXXX)
SSHD_PIDS=()
BG_PIDS=()
cleanup() {
    local s p
    for s in "$D"/cm*/*; do
        if [ -S "$s" ]; then ssh -F /dev/null -o ControlPath="$s" -O exit x >/dev/null 2>&1 || true; fi
    done
    for p in "${BG_PIDS[@]}" "${SSHD_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -rf "$D"
}
trap cleanup EXIT

mkdir -p /run/sshd
ssh-keygen -q -t ed25519 -N '' -f "$D/host"
ssh-keygen -q -t ed25519 -N '' -f "$D/user"
cp "$D/user.pub" "$D/authorized_keys"

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start_sshd NAME EXTRA-CONFIG: starts an sshd, sets PORT to its port
start_sshd() {
    local name=$1 extra=$2 port
    port=$(free_port); PORT=$port
    cat >"$D/$name.conf" <<EOF
Port $port
ListenAddress 127.0.0.1
HostKey $D/host
AuthorizedKeysFile $D/authorized_keys
PidFile $D/$name.pid
StrictModes no
UsePAM no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
$extra
EOF
    /usr/sbin/sshd -D -e -f "$D/$name.conf" 2>"$D/$name.log" &
    SSHD_PIDS+=("$!")
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        sleep 0.05
    done
}
start_sshd open "MaxStartups 1000
MaxSessions 10"
PORT_OPEN=$PORT
start_sshd default ""
PORT_DEFAULT=$PORT

# ssh to one of the servers: s PORT [ssh options...] -- command
s() {
    local port=$1; shift
    ssh -F /dev/null -i "$D/user" -o IdentitiesOnly=yes -o BatchMode=yes \
        -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
        -o ConnectTimeout=10 -p "$port" -T "$@"
}
now() { date +%s.%N; }

echo "# bench-ssh-limits on $(hostname), $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(ssh -V 2>&1 | cut -d, -f1)"
echo "controller RLIMIT_NOFILE: soft $(ulimit -Sn), hard $(ulimit -Hn)"
read -r lo hi </proc/sys/net/ipv4/ip_local_port_range
echo "ephemeral ports: $lo-$hi ($((hi - lo + 1)) per destination address and port)"

# One master per pseudo-host, 64 at a time: connect, key exchange, public-key
# login, then background (-f -N), so the time is the connection's alone and
# not the remote login shell's start-up (which rocegate's first command pays).
open_masters() { # N DIR
    seq -f 'h%04g' "$1" | xargs -P 64 -I{} \
        ssh -F /dev/null -i "$D/user" -o IdentitiesOnly=yes -o BatchMode=yes \
        -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
        -o ControlMaster=yes -o ControlPersist=600 -o "ControlPath=$2/{}" \
        -p "$PORT_OPEN" -f -N root@127.0.0.1
}
master_pid() { s "$PORT_OPEN" -o ControlPath="$1" -O check x 2>&1 | sed -n 's/.*pid=\([0-9]*\).*/\1/p'; }
for n in 16 64 256; do
    dir="$D/cm$n"; mkdir "$dir"
    t0=$(now); open_masters "$n" "$dir"; t1=$(now)
    up=$(find "$dir" -type s | wc -l)
    awk -v n="$n" -v up="$up" -v a="$t0" -v b="$t1" \
        'BEGIN {printf "open %4d masters at parallelism 64: %.2f s (%.1f ms per master), %d up\n", n, b-a, (b-a)*1000/n, up}'
done
rss=0; pss=0; fds=0; n=0
for sock in "$D"/cm256/*; do
    p=$(master_pid "$sock"); [ -n "$p" ] || continue
    rss=$((rss + $(awk '/^VmRSS/ {print $2}' "/proc/$p/status")))
    pss=$((pss + $(awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup")))
    fds=$((fds + $(find "/proc/$p/fd" -mindepth 1 | wc -l)))
    n=$((n + 1))
done
echo "per idle master (mean of $n): RSS $((rss / n)) KiB, PSS $((pss / n)) KiB, $((fds / n)) fds"
# The open sshd's per-connection processes (no session runs over them yet).
read -ra kids <<<"$(pgrep -d ' ' -P "${SSHD_PIDS[0]}" || true)"
conns=$((16 + 64 + 256)); pk=0
for p in "${kids[@]}"; do pk=$((pk + $(awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup"))); done
echo "target side, $conns idle connections to one sshd: ${#kids[@]} sshd processes, PSS $((pk / conns)) KiB per connection"

# Sessions over one master: 8 running commands (rocegate's per_host), then
# the 11th against MaxSessions 10.
m="$D/cm16/h0001"; mp=$(master_pid "$m")
t0=$(now); s "$PORT_OPEN" -o ControlPath="$m" root@127.0.0.1 true; t1=$(now)
echo "one command over an open master: $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b-a}') s (remote login shell included)"
for _ in $(seq 8); do s "$PORT_OPEN" -o ControlPath="$m" root@127.0.0.1 sleep 60 & BG_PIDS+=("$!"); done
sleep 2
echo "one master with 8 running sessions: $(find "/proc/$mp/fd" -mindepth 1 | wc -l) fds in the master, 8 ssh mux client processes (3 fds each) on the controller"
for _ in 9 10; do s "$PORT_OPEN" -o ControlPath="$m" root@127.0.0.1 sleep 60 & BG_PIDS+=("$!"); done
sleep 2
set +e
t0=$(now)
err=$(s "$PORT_OPEN" -o ControlPath="$m" -o ControlMaster=auto -o ControlPersist=120 root@127.0.0.1 echo eleventh 2>&1); rc=$?
t1=$(now)
set -e
echo "11th session over one master (MaxSessions 10, ControlMaster=auto): exit $rc in $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b-a}') s, output: $(echo "$err" | tr '\n' ' ')"
echo "  master's connection count to sshd now: $(ss -tn state established "( dport = :$PORT_OPEN )" | grep -c 127.0.0.1) (336 masters before)"

# MaxStartups 10:30:100: 100 unauthenticated TCP connections held open at
# once, and 100 real ssh logins started at once, against the default sshd.
ok=0; refused=0; fds=()
for _ in $(seq 100); do
    exec {fd}<>"/dev/tcp/127.0.0.1/$PORT_DEFAULT"; fds+=("$fd")
done
for fd in "${fds[@]}"; do
    line=""; read -r -t 5 line <&"$fd" || true
    case $line in SSH-2.0-*) ok=$((ok + 1)) ;; *) refused=$((refused + 1)); last=$line ;; esac
done
for fd in "${fds[@]}"; do exec {fd}>&-; done
echo "100 idle TCP connections at once: $ok got a banner, $refused dropped (last said: '${last:-nothing}')"
sleep 1
pids=()
for i in $(seq 100); do s "$PORT_DEFAULT" root@127.0.0.1 true 2>"$D/login$i.err" & pids+=("$!"); done
bad=0; for p in "${pids[@]}"; do wait "$p" || bad=$((bad + 1)); done
echo "100 ssh logins started at once: $((100 - bad)) ok, $bad failed"
# (the remote login shell's own start-up noise, pyenv here, is left out)
cat "$D"/login*.err | grep -v -e pyenv -e '^rm: ' | sort | uniq -c | sort -rn | head -3
echo "sshd log: $(grep -c 'MaxStartups' "$D/default.log" || true) lines naming MaxStartups, e.g.: $(grep -m1 'MaxStartups' "$D/default.log" || true)"
