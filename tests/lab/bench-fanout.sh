#!/usr/bin/env bash
# Fan-out benchmark (not a test): one command on the lab's 64 management-only
# hosts with rocegate's ssh transport and with pdsh, side by side, and the
# same with and without ControlMaster connection reuse, for the whole
# fan-out and for one host command by command. Prints every time and the
# ratios against the targets in DESIGN.md.
#
#   tests/lab/bench-fanout.sh [RUNS]        (default 5 runs per measurement)
#
# Builds the lab with 64 management hosts (tests/lab/lab.sh up --mgmt-hosts
# 64), builds rocegate in release mode, measures, and tears the lab down.
# The lab's sshds share this machine's cores with the clients, so absolute
# times understate what a real cluster sees; the ratios are what to compare.
set -euo pipefail
cd "$(dirname "$0")/../.."

RUNS=${1:-5}
CMD=(cat /proc/net/dev)
INV=inventory/lab-fanout.yaml
LAB=tests/lab/lab.sh
STATE=/run/rocegate-lab

if [ "$(id -u)" != 0 ]; then
    echo "bench-fanout: needs root (it builds the namespace lab)" >&2
    exit 2
fi
command -v pdsh >/dev/null || { echo "bench-fanout: pdsh is not installed (apt-get install pdsh)" >&2; exit 2; }

cargo build --release --quiet
ROCEGATE=target/release/rocegate

trap '"$LAB" down >/dev/null 2>&1 || true' EXIT
"$LAB" up --mgmt-hosts 64

HOSTS="m[01-64]"
# pdsh's ssh module, with the lab's key, known hosts and addresses.
export PDSH_RCMD_TYPE=ssh
export PDSH_SSH_ARGS_APPEND="-F $STATE/ssh_config"

now() { date +%s.%N; }
# median of the numbers on stdin
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
# wall seconds of one run of "$@", output discarded; fails loudly
wall() {
    local t0 t1
    t0=$(now)
    "$@" >/dev/null 2>/tmp/bench-fanout.err || { echo "failed: $*" >&2; cat /tmp/bench-fanout.err >&2; exit 1; }
    t1=$(now)
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f\n", b - a}'
}
# median wall seconds of RUNS runs of "$@"
timed() {
    local i
    for i in $(seq "$RUNS"); do wall "$@"; done | median
}
# median per-run milliseconds that `rocegate exec --repeat` printed, runs 2..N
# (run 1 opens the connections)
per_run_ms() {
    "$@" 2>&1 >/dev/null | sed -n 's/^exec: run \([0-9]*\)\/[0-9]*: .* in \([0-9.]*\) ms$/\1 \2/p' \
        | awk '$1 > 1 {print $2}' | median
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }

echo "== one command (${CMD[*]}) on 64 hosts, median of $RUNS =="
pdsh_s=$(timed pdsh -f 64 -w "$HOSTS" "${CMD[@]}")
rg_s=$(timed "$ROCEGATE" exec -q -i "$INV" -- "${CMD[@]}")
printf 'pdsh -R ssh -f 64             %8.3f s\n' "$pdsh_s"
printf 'rocegate exec (fresh process) %8.3f s   rocegate/pdsh = %s (target <= 1.00)\n' "$rg_s" "$(ratio "$rg_s" "$pdsh_s")"

echo "== the same fan-out repeated in one process: connection reuse =="
reuse_ms=$(per_run_ms "$ROCEGATE" exec -q -i "$INV" --repeat $((RUNS + 1)) -- "${CMD[@]}")
fresh_ms=$(per_run_ms "$ROCEGATE" exec -q -i "$INV" --no-reuse --repeat $((RUNS + 1)) -- "${CMD[@]}")
printf 'ControlMaster reuse           %8.1f ms per fan-out\n' "$reuse_ms"
printf 'fresh connection per command  %8.1f ms per fan-out   fresh/reuse = %s\n' "$fresh_ms" "$(ratio "$fresh_ms" "$reuse_ms")"

echo "== one host, command by command (20 commands) =="
one_reuse=$(per_run_ms "$ROCEGATE" exec -q -i "$INV" -w m01 --repeat 21 -- "${CMD[@]}")
one_fresh=$(per_run_ms "$ROCEGATE" exec -q -i "$INV" -w m01 --no-reuse --repeat 21 -- "${CMD[@]}")
printf 'ControlMaster reuse           %8.1f ms per command\n' "$one_reuse"
printf 'fresh connection per command  %8.1f ms per command   fresh/reuse = %s (target >= 3.00)\n' "$one_fresh" "$(ratio "$one_fresh" "$one_reuse")"
