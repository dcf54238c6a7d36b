#!/usr/bin/env bash
# Monitor, agent and store benchmarks (issue 4). Every figure is a ratio
# against a baseline measured in the same run, because these machines are
# shared and noisy; absolute figures are printed beside for reference.
#
#  1. exec storm (fork + exec /bin/true): with the agent vs without, and the
#     peers where installed (auditd execve rule, bpftrace, execsnoop);
#  2. loopback TCP connect/accept storm: with the agent vs without, and
#     auditd connect/accept rules, bpftrace on inet_sock_set_state;
#     for both: events stored and lost, so "none lost" is checked, not assumed;
#  3. sustained ingest into the store (decode + INSERT, every index) against
#     raw SQLite (one 12-integer-column INSERT, one index), per CPU second
#     too, since wall time on a shared machine measures the neighbours;
#  4. a selective hunt (one binary, one day) over HUNT_N (10M) stored events,
#     against process start-up and the same query without indexes;
#  5. the agent's resident memory during the connect storm.
#
# Peers: bash bench/install-peers installs them (bench only). Knobs:
# N_EXEC, N_CONN, ROUNDS, INGEST_N, HUNT_N.
set -uo pipefail
cd "$(dirname "$0")/.."
KS=$(readlink -f "${KSHIELD:-build/kshield}")
B=build/bench
export KSHIELD_BPFFS=/sys/fs/bpf/ks-bench-mon
N_EXEC=${N_EXEC:-1500}
N_CONN=${N_CONN:-15000}
ROUNDS=${ROUNDS:-3}
INGEST_N=${INGEST_N:-1000000}
HUNT_N=${HUNT_N:-10000000}
DIR=$(mktemp -d /var/tmp/ks-bench-mon.XXXXXX)
STORE=$DIR/events.db
AGENT=
AUDITD_PID=

cleanup() {
	[ -n "$AGENT" ] && kill -TERM "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	stop_auditd
	rm -rf "$KSHIELD_BPFFS" "$DIR"
}
trap cleanup EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }

agent_start() {
	rm -rf "$KSHIELD_BPFFS"
	"$KS" agent --no-shields --store "$STORE" > "$DIR/agent.log" 2>&1 &
	AGENT=$!
	for _ in $(seq 100); do grep -q "storing events" "$DIR/agent.log" && return 0; sleep 0.1; done
	echo "agent did not start:"; cat "$DIR/agent.log"; exit 1
}
agent_stop() {
	kill -TERM "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
	rm -rf "$KSHIELD_BPFFS"		# unpinned: the monitor detaches
}
lost_total() { "$KS" -j stats --store "$STORE" | sed -E 's/.*"total":([0-9]+)\}.*/\1/; t; s/.*/0/'; }
count() { sqlite3 "$STORE" "$1" 2>/dev/null || echo 0; }

start_auditd() {
	command -v auditd >/dev/null || return 1
	auditctl -D >/dev/null 2>&1
	auditd -s disable >/dev/null 2>&1 || auditd >/dev/null 2>&1 || return 1
	sleep 0.5
	AUDITD_PID=$(cat /var/run/auditd.pid 2>/dev/null)
	auditctl -e 1 >/dev/null
}
stop_auditd() {
	command -v auditctl >/dev/null || return 0
	auditctl -D >/dev/null 2>&1; auditctl -e 0 >/dev/null 2>&1
	[ -n "$AUDITD_PID" ] && kill "$AUDITD_PID" 2>/dev/null
	AUDITD_PID=
}

# storm NAME CMD: baseline vs agent, ROUNDS alternating rounds. The storm
# programs print wall and CPU seconds; ratios use CPU seconds (the storm's
# own user + system time, where the monitor's BPF programs run), which the
# neighbours on a shared machine disturb far less than wall time. Also
# prints events lost, read from the pinned counters.
storm() {
	local name=$1 cmd=$2 bw=() bc=() ow=() oc=() mc=() w c lost0 lost1
	for r in $(seq "$ROUNDS"); do
		read -r w c < <($cmd); bw+=("$w"); bc+=("$c")
		agent_start
		lost0=$(lost_total)
		read -r w c < <($cmd); ow+=("$w"); oc+=("$c")
		sleep 0.7	# one drain period
		lost1=$(lost_total)
		rss=$(awk '/VmRSS/ {print $2}' /proc/$AGENT/status)
		ringrss=$(awk '/^[0-9a-f]/ {m=($6 ~ /bpf-map/)} m && /^Rss:/ {s+=$2} END {print s+0}' /proc/$AGENT/smaps)
		# the kernel side alone: monitor pinned, no agent reading
		kill -TERM "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
		read -r w c < <($cmd); mc+=("$c")
		rm -rf "$KSHIELD_BPFFS"
	done
	MON=$(printf '%s\n' "${mc[@]}" | median)
	BASE=$(printf '%s\n' "${bc[@]}" | median); o=$(printf '%s\n' "${oc[@]}" | median)
	BASE_WALL=$(printf '%s\n' "${bw[@]}" | median); OWALL=$(printf '%s\n' "${ow[@]}" | median)
	printf '%-26s CPU %7.3f s, with agent %7.3f s: ratio %s   (wall %.2f s / %.2f s: %s)   lost: %d\n' \
		"$name, no monitor:" "$BASE" "$o" "$(ratio "$o" "$BASE")" "$BASE_WALL" "$OWALL" \
		"$(ratio "$OWALL" "$BASE_WALL")" "$((lost1 - lost0))"
	printf '  %-24s CPU %7.3f s: ratio %s (the BPF side alone)\n' "monitor, agent stopped:" "$MON" "$(ratio "$MON" "$BASE")"
}

peer() {	# peer LABEL BASE CMD START STOP
	local label=$1 base=$2 cmd=$3 w c
	eval "$4" || { printf '  %-32s not installed\n' "$label"; return; }
	sleep 1
	read -r w c < <($cmd)
	eval "$5"
	printf '  %-32s CPU %7.3f s: ratio %s   (wall %.2f s)\n' "$label" "$c" "$(ratio "$c" "$base")" "$w"
}

echo "== 1. exec storm: $N_EXEC x fork+exec /bin/true, median of $ROUNDS"
storm "exec storm" "$B/exec_storm $N_EXEC"
echo "  stored: $(count "SELECT count(*) FROM events WHERE kind = 'exec' AND binary = '/bin/true'") exec rows of /bin/true over all rounds"
EXEC_BASE=$BASE
peer "auditd (execve rule)" "$EXEC_BASE" "$B/exec_storm $N_EXEC" \
	'start_auditd && auditctl -a always,exit -F arch=b64 -S execve >/dev/null' 'stop_auditd'
peer "bpftrace (printf per exec)" "$EXEC_BASE" "$B/exec_storm $N_EXEC" \
	'command -v bpftrace >/dev/null && { bpftrace -e "tracepoint:sched:sched_process_exec { printf(\"%d %s\n\", pid, comm); }" > /dev/null 2>&1 & PEER=$!; }' \
	'kill $PEER; wait $PEER 2>/dev/null'
EXECSNOOP=$(command -v execsnoop || ls /usr/sbin/execsnoop /usr/sbin/execsnoop-bpfcc 2>/dev/null | head -1)
peer "libbpf-tools execsnoop" "$EXEC_BASE" "$B/exec_storm $N_EXEC" \
	'[ -n "$EXECSNOOP" ] && { $EXECSNOOP > /dev/null 2>&1 & PEER=$!; }' 'kill $PEER; wait $PEER 2>/dev/null'

echo "== 2. loopback TCP connect/accept storm: $N_CONN connections, median of $ROUNDS"
storm "connect storm" "$B/connect_storm $N_CONN"
printf '  events/s into the agent (last round): %.0f\n' "$(awk -v n="$N_CONN" -v t="$OWALL" 'BEGIN {print 2*n/t}')"
printf '  agent RSS during the storm: %d kB total, of which %d kB is the mapped 16 MiB ring buffer (kernel memory mapped twice); %d kB without it\n' \
	"$rss" "$ringrss" "$((rss - ringrss))"
CONN_BASE=$BASE
peer "auditd (connect/accept rules)" "$CONN_BASE" "$B/connect_storm $N_CONN" \
	'start_auditd && auditctl -a always,exit -F arch=b64 -S connect -S accept -S accept4 >/dev/null' 'stop_auditd'
peer "bpftrace (printf per connection)" "$CONN_BASE" "$B/connect_storm $N_CONN" \
	'command -v bpftrace >/dev/null && { bpftrace -e "tracepoint:sock:inet_sock_set_state /args->newstate == 1/ { printf(\"%d %d\n\", args->sport, args->dport); }" > /dev/null 2>&1 & PEER=$!; }' \
	'kill $PEER; wait $PEER 2>/dev/null'

echo "== 3. sustained ingest into the store: $INGEST_N events (30% exec, 30% exit, 40% connect/accept)"
# in one process: the store, then raw SQLite, each timed by wall and CPU
$B/store_ingest run "$DIR" "$INGEST_N" 0 | sed 1d

echo "== 4. selective hunt over $HUNT_N stored events (10 days, 2000 binaries)"
HUNT_DB=${HUNT_DB:-/var/tmp/ks-bench-hunt-v2-$HUNT_N.db}	# v2: the store schema
if [ ! -s "$HUNT_DB" ]; then
	echo "  filling $HUNT_DB (once; reused by later runs)"
	$B/store_ingest fill "$HUNT_DB" "$HUNT_N" 10 2000 > /dev/null || exit 1
fi
day=$(date -u -d '5 days ago' +%Y-%m-%dT00:00:00Z); next=$(date -u -d '4 days ago' +%Y-%m-%dT00:00:00Z)
HUNT="$KS hunt binary --binary /usr/bin/prog-42 --since $day --until $next --store $HUNT_DB"
hits=$($KS -j hunt binary --binary /usr/bin/prog-42 --since "$day" --until "$next" --store "$HUNT_DB" | sed -E 's/.*"count":([0-9]+).*/\1/')
csv=$DIR/hunt.csv
hyperfine -N --warmup 2 --runs 10 --export-csv "$csv" "$HUNT" "$KS --version" \
	"$KS hunt binary --binary /usr/bin/prog-42 --limit 0 --store $HUNT_DB" \
	> /dev/null 2>&1
# hyperfine CSV: command,mean,stddev,median,user,system,min,max (seconds)
wall() { awk -F, -v r="$1" 'NR==r {print $2*1000}' "$csv"; }
cpu_ms() { awk -F, -v r="$1" 'NR==r {print ($5+$6)*1000}' "$csv"; }
h=$(wall 2); v=$(wall 3); s=$(wall 4); hc=$(cpu_ms 2); vc=$(cpu_ms 3); sc=$(cpu_ms 4)
printf '  hunt (one binary, one day, %s hits with ancestry): %.1f ms wall, %.1f ms CPU\n' "$hits" "$h" "$hc"
printf '  kshield --version (start-up):                       %.1f ms wall, %.1f ms CPU\n' "$v" "$vc"
printf '  same binary over all 10 days:                       %.0f ms wall, %.0f ms CPU\n' "$s" "$sc"
printf '  hunt minus start-up: %.1f ms CPU; ratio one day/ten days %s (CPU)\n' \
	"$(awk -v a="$hc" -v b="$vc" 'BEGIN {print a - b}')" "$(ratio "$hc" "$sc")"
echo "  (bench/store_ingest run DIR N: the same hunts against the version 1 layout)"
