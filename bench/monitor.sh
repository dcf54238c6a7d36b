#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Monitor, agent and store benchmarks (issues 4 and 17). Every figure is a
# ratio against a baseline measured in the same run, because these
# machines are shared and noisy; absolute figures are printed beside.
#
#  1. exec storm (fork + exec /bin/true) and
#  2. loopback TCP connect/accept storm, each in modes alternating within
#     every round:
#       none         nothing loaded (the baseline of the round),
#       default      the agent as `make run` starts it: packaging/kshield.conf
#                    (monitor, flows, every bundled shield),
#       no-shields   the same with --no-shields,
#       no-flow      the same with --no-flow,
#       base         with BASE=PATH: the default config run by another
#                    kshield binary (before/after a change, same round),
#     and the peers (bench/install-peers): auditd, libbpf-tools
#     (execsnoop / tcplife), bpftrace printing each event.
#     Per mode, the least of REPS (3; 1 for the exec storm) back-to-back
#     runs of the workload, each figure on its own (a neighbour on a
#     shared machine only ever adds time): wall of the workload, machine
#     CPU (busy time of every CPU
#     from the start to 1 s after the end, and on until the agent or peer
#     is idle (settle): /proc/stat, the agent's and the peers' work
#     included, and the neighbours' too), and attributed CPU
#     (the workload's own plus the agent's or peer's process); the ratio
#     of each is taken against the none run of the same round, median
#     over ROUNDS. For the agent modes, the events stored are counted (by
#     the storm's pid) and the losses read from the pinned counters: "every
#     event stored" is checked, not assumed; 2b repeats the storm with
#     FLOW_BYTES per connection, whose flow records are counted too;
#  2c. per-hook cost: every program the default configuration attached,
#     its runs and run time during each storm (kernel BPF statistics,
#     bench/bpf_runtime), ns per call and share of the workload's CPU;
#  3. sustained ingest into the store (decode + INSERT, every index) against
#     raw SQLite, per CPU second too;
#  4. a selective hunt (one binary, one day) over HUNT_N (10M) stored events,
#     against process start-up and the same query without indexes;
#  5. the agent's resident memory during the connect storm (2).
#
# Knobs: N_EXEC, N_CONN, FLOW_BYTES, ROUNDS, REPS, PEERS=0 (skip peers), MODES,
# ONLY=exec|connect|flow|cost (one section), INGEST_N, HUNT_N, BASE (a
# kshield binary to compare: mode "base" in 1, 2, 2b and 2c).
set -uo pipefail
cd "$(dirname "$0")/.."
KS=$(readlink -f "${KSHIELD:-build/kshield}")
B=build/bench
SHIELDS=${SHIELDS_DIR:-build/shields}
export KSHIELD_BPFFS=/sys/fs/bpf/ks-bench-mon-$$
N_EXEC=${N_EXEC:-2000}
N_CONN=${N_CONN:-20000}
FLOW_BYTES=${FLOW_BYTES:-100}
ROUNDS=${ROUNDS:-5}
REPS=${REPS:-3}
PEERS=${PEERS:-1}
MODES=${MODES:-"default no-shields no-flow"}
ONLY=${ONLY:-}
BASE=${BASE:+$(readlink -f "$BASE")}
[ -n "$BASE" ] && MODES="$MODES base"
AGENT_BIN=$KS
INGEST_N=${INGEST_N:-1000000}
HUNT_N=${HUNT_N:-10000000}
DIR=$(mktemp -d /var/tmp/ks-bench-mon.XXXXXX)
STORE=$DIR/events.db
AGENT=
PEER=
AUDITD_PID=
HZ=$(getconf CLK_TCK)

cleanup() {
	[ -n "$AGENT" ] && kill -TERM "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	[ -n "$PEER" ] && kill "$PEER" 2>/dev/null && wait "$PEER" 2>/dev/null
	stop_auditd
	rm -rf "$KSHIELD_BPFFS" "$DIR"
}
trap cleanup EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", b ? a / b : 0}'; }
least() { awk -v a="$1" -v b="$2" 'BEGIN {print (a == "" || b + 0 < a + 0) ? b : a}'; }

# agent_start [ARGS]: the agent as `make run` starts it (its config file,
# the bundled shields), store (new) and bpffs root of this bench's own.
agent_start() {
	rm -rf "$KSHIELD_BPFFS"
	# a new store each run: every run starts alike, and a BASE binary of
	# an older store schema refuses a store migrated by this one
	rm -f "$STORE" "$STORE-wal" "$STORE-shm"
	"$AGENT_BIN" agent --config packaging/kshield.conf --shields-dir "$SHIELDS" --store "$STORE" "$@" \
		> "$DIR/agent.log" 2>&1 &
	AGENT=$!
	# started once storing, and (unless --no-shields) every shield loaded
	local want=0
	[[ " $* " == *" --no-shields "* ]] || want=$(ls "$SHIELDS"/*.bpf.o | wc -l)
	for _ in $(seq 600); do
		grep -q "storing events" "$DIR/agent.log" &&
			[ "$(grep -c '^kshield agent: shield ' "$DIR/agent.log")" -ge "$want" ] && { sleep 0.3; return 0; }
		sleep 0.1
	done
	echo "agent did not start:"; cat "$DIR/agent.log"; exit 1
}
agent_stop() {
	kill -TERM "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
	rm -rf "$KSHIELD_BPFFS"		# unpinned: monitor and shields detach
	# their deferred frees (RCU, the ring buffer's and maps' memory) land
	# now, not in the next run (the next round's baseline)
	sleep 1
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
bg_peer() {	# bg_peer CMD...: a peer tool in the background, given time to attach
	"$@" > /dev/null 2>&1 &
	PEER=$!
	sleep "${PEER_SETTLE:-2}"
	kill -0 "$PEER" 2>/dev/null
}
peer_stop() { [ -n "$PEER" ] && { kill "$PEER"; wait "$PEER" 2>/dev/null; }; PEER=; }
EXECSNOOP=$(command -v execsnoop || ls /usr/sbin/execsnoop /usr/sbin/execsnoop-bpfcc 2>/dev/null | head -1)
TCPLIFE=$(command -v tcplife || ls /usr/sbin/tcplife /usr/sbin/tcplife-bpfcc 2>/dev/null | head -1)

busy() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8}' /proc/stat; }	# ticks, all CPUs
ticks_of() { [ -n "$1" ] && [ -r "/proc/$1/stat" ] && sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}' || echo 0; }

# mode_on MODE WORKLOAD / mode_off MODE: what each mode loads; sets WHO,
# the process whose CPU counts with the workload's.
mode_on() {
	WHO=
	case $1 in
	none) ;;
	default) agent_start; WHO=$AGENT ;;
	no-shields) agent_start --no-shields; WHO=$AGENT ;;
	no-flow) agent_start --no-flow; WHO=$AGENT ;;
	base) AGENT_BIN=$BASE; agent_start; AGENT_BIN=$KS; WHO=$AGENT ;;
	auditd) start_auditd || return 1
		if [ "$2" = exec ]; then auditctl -a always,exit -F arch=b64 -S execve >/dev/null
		else auditctl -a always,exit -F arch=b64 -S connect -S accept -S accept4 >/dev/null; fi
		WHO=$AUDITD_PID ;;
	tool) if [ "$2" = exec ]; then [ -n "$EXECSNOOP" ] && bg_peer "$EXECSNOOP"
		else [ -n "$TCPLIFE" ] && bg_peer "$TCPLIFE"; fi || return 1
		WHO=$PEER ;;
	bpftrace) command -v bpftrace >/dev/null || return 1
		if [ "$2" = exec ]; then
			bg_peer bpftrace -e 'tracepoint:sched:sched_process_exec { printf("%d %s\n", pid, comm); }'
		else
			bg_peer bpftrace -e 'tracepoint:sock:inet_sock_set_state /args->newstate == 1/ { printf("%d %d\n", args->sport, args->dport); }'
		fi || return 1
		WHO=$PEER ;;
	esac
}
mode_off() {
	case $1 in
	default|no-shields|no-flow|base) agent_stop ;;
	auditd) stop_auditd ;;
	tool|bpftrace) peer_stop ;;
	esac
}
label() {
	case $1 in
	none) echo "no monitor" ;;
	default) echo "kshield (default config)" ;;
	no-shields) echo "kshield --no-shields" ;;
	no-flow) echo "kshield --no-flow" ;;
	base) echo "base: $(basename "$(dirname "$(dirname "$BASE")")") (default)" ;;
	auditd) [ "$2" = exec ] && echo "auditd (execve rule)" || echo "auditd (connect/accept)" ;;
	tool) [ "$2" = exec ] && echo "libbpf-tools execsnoop" || echo "libbpf-tools tcplife" ;;
	bpftrace) echo "bpftrace (printf per event)" ;;
	esac
}

# stored KIND PID WANT: rows of KIND by PID in the store, waiting (at most
# 5 s) for the agent's last batch to commit.
stored() {
	local n=0
	for _ in $(seq 50); do
		n=$(count "SELECT count(*) FROM events WHERE kind = '$1' AND pid = $2")
		[ "$n" -ge "$3" ] && break
		sleep 0.1
	done
	echo "$n"
}

# settle: after a workload, 1 s, and on until WHO (the agent or peer) has
# used no CPU for 300 ms (at most 5 s): its drain of what the workload
# made counts in machine CPU however late it comes. Reading /proc costs
# nothing that would count against it.
settle() {
	local t=0 prev cur
	sleep 1
	[ -n "$WHO" ] || return 0
	prev=$(ticks_of "$WHO")
	while [ "$t" -lt 40 ]; do
		sleep 0.3; t=$((t + 3))
		cur=$(ticks_of "$WHO")
		[ "$cur" = "$prev" ] && return 0
		prev=$cur
	done
}

# storms WORKLOAD CMD...: ROUNDS rounds; in each, every mode once (none
# first), ratios against that round's none. Prints a table.
storms() {
	local wl=$1; shift
	local modes="none $MODES" m r w c pid b0 b1 a0 a1 lost0 rows
	[ "$PEERS" = 1 ] && modes="$modes auditd tool bpftrace"
	declare -A RW RC RA AW AC AM CHECK SKIP
	for r in $(seq "$ROUNDS"); do
		local bw bc bm ba
		for m in $modes; do
			[ -n "${SKIP[$m]:-}" ] && continue
			mode_on "$m" "$wl" || { SKIP[$m]=1; mode_off "$m"; continue; }
			case $m in default|no-shields|no-flow|base) lost0=$(lost_total) ;; esac
			# the fastest of REPS back-to-back runs, each figure on its
			# own: a neighbour's burst only ever adds time
			local k w= c= mc= ac= w1 c1 mc1 ac1 pids=
			for k in $(seq "$REPS"); do
				b0=$(busy); a0=$(ticks_of "$WHO")
				read -r w1 c1 pid < <("$@")
				settle		# the agent's (or peer's) drain, within machine CPU
				b1=$(busy); a1=$(ticks_of "$WHO")
				mc1=$(awk -v a="$b0" -v b="$b1" -v hz="$HZ" 'BEGIN {print (b - a) / hz}')
				ac1=$(awk -v c="$c1" -v a="$a0" -v b="$a1" -v hz="$HZ" 'BEGIN {print c + (b - a) / hz}')
				w=$(least "$w" "$w1"); c=$(least "$c" "$c1")
				mc=$(least "$mc" "$mc1"); ac=$(least "$ac" "$ac1")
				pids+="$pid "
			done
			if [ "$m" = none ]; then
				bw=$w; bc=$c; bm=$mc; ba=$ac
			else
				RW[$m]+="$(ratio "$w" "$bw") "; RC[$m]+="$(ratio "$mc" "$bm") "
				RA[$m]+="$(ratio "$ac" "$ba") "
			fi
			AW[$m]+="$w "; AC[$m]+="$c "; AM[$m]+="$mc "
			case $m in default|no-shields|no-flow|base)
				[ "$wl" = connect ] && agent_rss "$m"
				rows=
				for pid in $pids; do rows+="$(store_check "$wl" "$pid"); "; done
				CHECK[$m]+="r$r: $rows lost $(( $(lost_total) - lost0 ));  "
			esac
			mode_off "$m"
		done
	done
	printf '  %-28s %8s %8s %8s   %s
' "median of $ROUNDS, best of $REPS" "wall" "machine" "attrib." "(wall s, machine CPU s)"
	for m in $modes; do
		local mw mm
		mw=$(echo "${AW[$m]:-}" | tr ' ' '\n' | grep . | median)
		mm=$(echo "${AM[$m]:-}" | tr ' ' '\n' | grep . | median)
		if [ -n "${SKIP[$m]:-}" ]; then
			printf '  %-28s not installed\n' "$(label "$m" "$wl")"
		elif [ "$m" = none ]; then
			printf '  %-28s %8s %8s %8s   (%.3f s, %.3f s)\n' "$(label "$m" "$wl")" 1 1 1 "$mw" "$mm"
		else
			printf '  %-28s %7.2fx %7.2fx %7.2fx   (%.3f s, %.3f s)\n' "$(label "$m" "$wl")" \
				"$(echo "${RW[$m]}" | tr ' ' '\n' | grep . | median)" \
				"$(echo "${RC[$m]}" | tr ' ' '\n' | grep . | median)" \
				"$(echo "${RA[$m]}" | tr ' ' '\n' | grep . | median)" "$mw" "$mm"
		fi
	done
	printf '  per round, wall ratio of the default config: %s\n' "${RW[default]:-}"
	for m in $MODES; do
		printf '  stored, %s: %s\n' "$m" "${CHECK[$m]:-}"
	done
}

# store_check WORKLOAD PID: what the agent stored of that run.
store_check() {
	case $1 in
	exec) local n=0
		for _ in $(seq 50); do	# the last batch commits up to 500 ms after its drain
			n=$(count "SELECT count(*) FROM events WHERE kind = 'exec' AND binary = '/bin/true' AND ppid = $2")
			[ "$n" -ge "$N_EXEC" ] && break
			sleep 0.1
		done
		echo "exec $n/$N_EXEC" ;;
	connect) echo "connect $(stored connect "$2" "$N_CONN")/$N_CONN accept $(stored accept "$2" "$N_CONN")/$N_CONN" ;;
	flow) echo "connect $(stored connect "$2" "$N_CONN")/$N_CONN accept $(stored accept "$2" "$N_CONN")/$N_CONN flow $(stored flow "$2" $((2 * N_CONN)))/$((2 * N_CONN))" ;;
	esac
}

# agent_rss MODE: the agent's resident kB (VmRSS), the part in bpf-map
# mappings (the ring buffer: the monitor sizes it, not the agent), and of
# the rest, anonymous (heap, stacks) and file-backed (binary, libraries).
declare -A RSS RINGRSS ANONRSS
agent_rss() {
	RSS[$1]=$(awk '/VmRSS/ {print $2}' "/proc/$AGENT/status")
	read -r "RINGRSS[$1]" "ANONRSS[$1]" < <(awk '/^[0-9a-f]/ {m=($6 ~ /bpf-map/); a=($6 == "" || $6 ~ /^\[/)}
		/^Rss:/ {if (m) r+=$2; else if (a) n+=$2} END {print r+0, n+0}' "/proc/$AGENT/smaps")
}
RSS_TARGET_KB=20480	# issue 17: under 20 MB, ring buffer excluded

# hook_costs WORKLOAD CMD...: with the default configuration loaded, every
# program's runs and run time during CMD.
hook_costs() {
	local wl=$1 out cpu
	shift
	mapfile -t links < <(find "$KSHIELD_BPFFS" -name 'link_*' | sort)
	out=$("$B/bpf_runtime" "${links[@]}" -- "$@" 2>"$DIR/rt") || { echo "  bpf_runtime failed: $(cat "$DIR/rt")"; return; }
	cpu=$(echo "$out" | awk '{print $2}')
	paste <(printf '%s\n' "${links[@]}" | sed "s|$KSHIELD_BPFFS/||; s|/link_| |") "$DIR/rt" |
		awk -v w="$wl" -v cpu="$cpu" '$4 > 0 {t += $5; printf "  %-7s %-24s %-18s %9d runs %6.0f ns/call %5.2f%%\n", w, $1, $2, $4, $5 / $4, 100 * $5 / 1e9 / cpu}
		END {printf "  %-7s all programs: %.1f ms of %.3f s workload CPU = %.1f%%\n", w, t / 1e6, cpu, 100 * t / 1e9 / cpu}'
}

if [ -z "$ONLY" ] || [ "$ONLY" = exec ]; then
	echo "== 1. exec storm: $N_EXEC x fork+exec /bin/true, $ROUNDS rounds ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
	REPS=${REPS_EXEC:-1} storms exec "$B/exec_storm" "$N_EXEC"
fi
if [ -z "$ONLY" ] || [ "$ONLY" = connect ]; then
	echo "== 2. loopback TCP connect/accept storm: $N_CONN connections, $ROUNDS rounds (load $(cut -d' ' -f1 /proc/loadavg))"
	storms connect "$B/connect_storm" "$N_CONN"
	for m in "${!RSS[@]}"; do
		own=$((RSS[$m] - RINGRSS[$m]))
		printf '  agent RSS during the storm (last round), %s: %d kB, of which %d kB the mapped ring buffer; %d kB without it (%d kB heap and stacks, %d kB binary and libraries): %s the %d kB target\n' \
			"$m" "${RSS[$m]}" "${RINGRSS[$m]}" "$own" "${ANONRSS[$m]}" "$((own - ANONRSS[$m]))" \
			"$( [ "$own" -lt "$RSS_TARGET_KB" ] && echo under || echo OVER)" "$RSS_TARGET_KB"
	done
fi
if [ -z "$ONLY" ] || [ "$ONLY" = flow ]; then
	echo "== 2b. the same storm, $FLOW_BYTES bytes per connection (a flow each end): agent modes, $ROUNDS rounds"
	PEERS=0 MODES="default${BASE:+ base}" storms flow "$B/connect_storm" "$N_CONN" "$FLOW_BYTES"
fi
if [ -z "$ONLY" ] || [ "$ONLY" = cost ]; then
	echo "== 2c. per-hook cost, default configuration (kernel BPF statistics; other traffic on the host counts too)"
	agent_start
	hook_costs exec "$B/exec_storm" "$N_EXEC"
	hook_costs connect "$B/connect_storm" "$N_CONN"
	hook_costs flow "$B/connect_storm" "$N_CONN" "$FLOW_BYTES"
	agent_stop
	if [ -n "$BASE" ]; then
		echo "  -- the same with BASE=$BASE"
		AGENT_BIN=$BASE; agent_start; AGENT_BIN=$KS
		hook_costs exec "$B/exec_storm" "$N_EXEC"
		hook_costs connect "$B/connect_storm" "$N_CONN"
		hook_costs flow "$B/connect_storm" "$N_CONN" "$FLOW_BYTES"
		agent_stop
	fi
fi
[ -n "$ONLY" ] && exit 0

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
