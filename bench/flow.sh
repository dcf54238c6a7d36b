#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Cost of the monitor's flow accounting (bpf/monitor_flow.bpf.h: per send/receive
# call on 6.5+, per packet by cgroup_skb on the cgroup2 root before), as
# ratios against baselines
# measured in the same run, alternating, median of ROUNDS:
#   1. one loopback TCP connection moving BULK_BYTES (bench/bulk tcp);
#   2. UDP_N 64-byte loopback datagrams (bench/bulk udp): the per-packet
#      worst case;
#   3. the loopback connect storm (bench/connect_storm, N_CONN); then the
#      same storm with no monitor, the agent, and the agent --no-flow
#      (what a site that turns flows off saves); ONLY=storm runs just that;
#   5. hunt exfil over HUNT_FLOWS stored flow rows (1% of them big, some
#      flows with two records) against one scan counting those rows.
# Each is run with no monitor (base), with the agent (monitor + flow,
# records stored), and with the monitor pinned and no agent twice: flow
# links attached, then flow links unpinned (detached): that pair isolates
# what the accounting itself costs. Ratios use CPU seconds of the workload
# (both ends and the loopback softirq run in its threads), which
# neighbours on a shared machine disturb less than wall time. Then the
# flow programs' own run time from the kernel's BPF statistics
# (bench/bpf_runtime), per run and as a share of each workload's CPU.
set -uo pipefail
cd "$(dirname "$0")/.."
KS=$(readlink -f "${KSHIELD:-build/kshield}")
B=build/bench
export KSHIELD_BPFFS=/sys/fs/bpf/ks-bench-flow-$$
BULK_BYTES=${BULK_BYTES:-2000000000}
UDP_N=${UDP_N:-200000}
N_CONN=${N_CONN:-15000}
ROUNDS=${ROUNDS:-5}
HUNT_FLOWS=${HUNT_FLOWS:-200000}
DIR=$(mktemp -d /var/tmp/ks-bench-flow.XXXXXX)
STORE=$DIR/events.db
AGENT=

cleanup() {
	[ -n "$AGENT" ] && kill -TERM "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	rm -rf "$KSHIELD_BPFFS" "$DIR"
}
trap cleanup EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }

agent_start() {
	rm -rf "$KSHIELD_BPFFS"
	"$KS" agent --no-shields --store "$STORE" "$@" > "$DIR/agent.log" 2>&1 &
	AGENT=$!
	for _ in $(seq 100); do grep -q "storing events" "$DIR/agent.log" && return 0; sleep 0.1; done
	echo "agent did not start:"; cat "$DIR/agent.log"; exit 1
}
agent_stop() { kill -TERM "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=; }
flow_links() { ls "$KSHIELD_BPFFS"/monitor/link_mon_flow_* 2>/dev/null | wc -l; }

# bench NAME CMD FIELD: FIELD 3 of bulk's output is its rate
bench() {
	local name=$1 cmd=$2 base=() full=() on=() off=() rb=() rf=() w c r n
	for _ in $(seq "$ROUNDS"); do
		read -r w c r < <($cmd); base+=("$c"); rb+=("$r")
		agent_start
		read -r w c r < <($cmd); full+=("$c"); rf+=("$r")
		sleep 0.7	# one drain period: the last records reach the store
		agent_stop
		n=$(flow_links)
		read -r w c r < <($cmd); on+=("$c")
		rm -f "$KSHIELD_BPFFS"/monitor/link_mon_flow_*	# detached: monitor without flow
		read -r w c r < <($cmd); off+=("$c")
		rm -rf "$KSHIELD_BPFFS"
	done
	# per packet: egress, ingress, release; per call (6.5+): send, recv,
	# sendmsg4/6, recvmsg4/6, release
	local want=3
	grep -q "flow on, per call" "$DIR/agent.log" && want=7
	[ "$n" = "$want" ] || { echo "  expected $want flow links pinned, found $n"; exit 1; }
	local B0 F1 N1 O1
	B0=$(printf '%s\n' "${base[@]}" | median); F1=$(printf '%s\n' "${full[@]}" | median)
	N1=$(printf '%s\n' "${on[@]}" | median); O1=$(printf '%s\n' "${off[@]}" | median)
	printf '  %-22s CPU %7.3f s, with agent %7.3f s: ratio %s\n' "$name, no monitor:" "$B0" "$F1" "$(ratio "$F1" "$B0")"
	printf '  %-22s CPU %7.3f s with flow, %7.3f s without: ratio %s (the accounting alone)\n' \
		"monitor, no agent:" "$N1" "$O1" "$(ratio "$N1" "$O1")"
	if [ -n "${3:-}" ]; then
		printf '  %-22s %s no monitor, %s with agent (medians)\n' "$3:" \
			"$(printf '%s\n' "${rb[@]}" | median)" "$(printf '%s\n' "${rf[@]}" | median)"
	fi
}

# The connect storm with no monitor, the agent (flow on), the agent
# --no-flow, alternating in each round.
storm_modes() {
	local base=() on=() off=() w c r B0 N1 O1
	for _ in $(seq "$ROUNDS"); do
		read -r w c r < <("$B/connect_storm" "$N_CONN"); base+=("$c")
		agent_start
		read -r w c r < <("$B/connect_storm" "$N_CONN"); on+=("$c")
		sleep 0.7; agent_stop
		agent_start --no-flow
		[ "$(flow_links)" = 0 ] || { echo "  --no-flow: flow links pinned"; exit 1; }
		read -r w c r < <("$B/connect_storm" "$N_CONN"); off+=("$c")
		sleep 0.7; agent_stop
		rm -rf "$KSHIELD_BPFFS"
	done
	B0=$(printf '%s\n' "${base[@]}" | median); N1=$(printf '%s\n' "${on[@]}" | median)
	O1=$(printf '%s\n' "${off[@]}" | median)
	printf '  CPU: no monitor %.3f s, agent %.3f s, agent --no-flow %.3f s\n' "$B0" "$N1" "$O1"
	printf '  ratios: agent/none %s, --no-flow/none %s, agent/--no-flow %s\n' \
		"$(ratio "$N1" "$B0")" "$(ratio "$O1" "$B0")" "$(ratio "$N1" "$O1")"
}

if [ "${ONLY:-}" = storm ]; then
	echo "== connect storm: $N_CONN connections, flow on/off, median of $ROUNDS ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
	storm_modes
	exit 0
fi

echo "== 1. loopback TCP bulk transfer: $BULK_BYTES bytes, median of $ROUNDS ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
bench "TCP bulk" "$B/bulk tcp $BULK_BYTES" "MB/s"
echo "== 2. loopback UDP: $UDP_N x 64-byte datagrams, median of $ROUNDS"
bench "UDP 64 B" "$B/bulk udp $UDP_N" "datagrams/s sent"
echo "== 3. loopback TCP connect/accept storm: $N_CONN connections, median of $ROUNDS"
bench "connect storm" "$B/connect_storm $N_CONN"
echo "== 3b. the same storm: no monitor, agent, agent --no-flow"
storm_modes
n=$(sqlite3 "$STORE" "SELECT count(*) FROM events WHERE kind = 'flow' AND json_extract(detail, '\$.bytes_out') >= $BULK_BYTES" 2>/dev/null || echo 0)
echo "  stored: $n flow records of the bulk sender (want $ROUNDS, one per agent round)"

echo "== 4. the flow programs' own run time (kernel BPF statistics, monitor pinned, no agent)"
echo "  (runs include any other traffic on the host meanwhile; the share is of the workload's CPU)"
agent_start; agent_stop
L=$KSHIELD_BPFFS/monitor
for w in "bulk tcp $BULK_BYTES" "bulk udp $UDP_N" "connect_storm $N_CONN"; do
	out=$("$B/bpf_runtime" "$L"/link_mon_flow_* "$L"/link_mon_sock_state* -- $B/$w 2>"$DIR/rt")
	cpu=$(echo "$out" | awk '{print $2}')
	awk -v w="$w" -v cpu="$cpu" '{t += $3; printf "  %-30s %-18s %9d runs %7.0f ns/run\n", w, $1, $2, $2 ? $3 / $2 : 0}
		END {printf "  %-30s all: %.3f s of %.3f s workload CPU = %.1f%%\n", w, t / 1e9, cpu, 100 * t / 1e9 / cpu}' "$DIR/rt"
done
rm -rf "$KSHIELD_BPFFS"

echo "== 5. hunt exfil over $HUNT_FLOWS flow rows (1% above --bytes), against a scan counting them"
sqlite3 "$STORE" "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < $HUNT_FLOWS)
 INSERT INTO events(ts, kind, pid, raddr, rport, detail) SELECT (strftime('%s','now') - 3600) * 1000000000 + i * 10000,
 'flow', i % 1000, '203.0.113.' || (i % 200), 443, json_object('proto', 'tcp', 'bytes_out',
 CASE WHEN i % 100 = 0 THEN 60000000 + i ELSE i END, 'final', 1, 'flow', (i % ($HUNT_FLOWS * 3 / 4)) || '-1') FROM n" || exit 1
t() { local a b; a=$(date +%s.%N); "$@" > "$DIR/out" || exit 1; b=$(date +%s.%N); echo "$b - $a" | bc; }
hs=(); ss=()
for _ in 1 2 3; do
	hs+=("$(t "$KS" -j hunt exfil --store "$STORE" --since 2h --limit 0)")
	ss+=("$(t "$KS" -j hunt --store "$STORE" --since 2h --sql "SELECT count(*) AS n FROM events WHERE kind = 'flow' AND ts BETWEEN :since AND :until")")
done
h=$(printf '%s\n' "${hs[@]}" | median); sc=$(printf '%s\n' "${ss[@]}" | median)
hits=$("$KS" -j hunt exfil --store "$STORE" --since 2h --limit 0 | sed -E 's/.*"count":([0-9]+).*/\1/')
printf '  hunt exfil: %.3f s (%s hits, ancestry looked up for each); counting scan: %.3f s; ratio %s\n' "$h" "$hits" "$sc" "$(ratio "$h" "$sc")"
