# SPDX-License-Identifier: MIT
# load.sh - what bench/rated.sh and bench/faults.sh share (sourced): the
# agent in its default configuration on a bpffs root and store of the
# bench's own, its counters, and a steady exec + connect load.
#
# The load: RATE events a second, EXEC_SHARE (0.5) of them from execs
# (exec_storm: an exec and an exit record each, in EXEC_PROCS processes so
# that no one of them is the limit), the rest from loopback connections
# (connect_storm: a connect and an accept record each), paced
# (bench/pace.h) for SECS seconds.

KS=$(readlink -f "${KSHIELD:-build/kshield}")
B=build/bench
SHIELDS=${SHIELDS_DIR:-build/shields}
AGENT=
LOAD_PIDS=()

# agent_start [ARGS]: packaging/kshield.conf (monitor, flows, every bundled
# shield), metrics off (the port is the host's: another agent may hold it).
agent_start() {
	local n0 want
	n0=$(cat "$DIR/agent.log" 2>/dev/null | wc -l)
	"$KS" agent --config packaging/kshield.conf --shields-dir "$SHIELDS" --store "$STORE" \
		--metrics off "$@" >> "$DIR/agent.log" 2>&1 &
	AGENT=$!
	want=$(ls "$SHIELDS"/*.bpf.o | wc -l)	# one line each, loaded or not
	for _ in $(seq 600); do
		tail -n +$((n0 + 1)) "$DIR/agent.log" | grep -q "storing events\|store:" &&
			[ "$(tail -n +$((n0 + 1)) "$DIR/agent.log" | grep -c '^kshield agent: shield ')" -ge "$want" ] &&
			{ sleep 0.3; return 0; }
		kill -0 "$AGENT" 2>/dev/null || break
		sleep 0.1
	done
	echo "agent did not start:"; tail -n +$((n0 + 1)) "$DIR/agent.log"; exit 1
}
agent_stop() { [ -n "$AGENT" ] && kill -TERM "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null; AGENT=; }

# cpu_ticks PID: user + system clock ticks of PID so far.
cpu_ticks() { [ -r "/proc/$1/stat" ] && sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}' || echo 0; }

# stats: "received stored unstored lost" from the agent's own counters
# (pinned mon_agent, ks_lost: `kshield stats`).
stats() {
	"$KS" -j stats --store "$STORE" 2>/dev/null | python3 -c '
import json, sys
s = json.load(sys.stdin); a = s["agent"]
print(a["received"], a["stored"], a["unstored"], s["lost"]["total"])'
}

# load_start RATE SECS: the load in the background; its pids in LOAD_PIDS,
# each prints "wall cpu pid" to $DIR/load.<pid>.
load_start() {
	local rate=$1 secs=$2 procs=${EXEC_PROCS:-2}
	local execs conns
	execs=$(awk -v r="$rate" -v p="$procs" -v x="${EXEC_SHARE:-0.5}" 'BEGIN {printf "%.3f", r * x / 2 / p}')
	conns=$(awk -v r="$rate" -v x="${EXEC_SHARE:-0.5}" 'BEGIN {printf "%.3f", r * (1 - x) / 2}')
	LOAD_PIDS=()
	for i in $(seq "$procs"); do
		"$B/exec_storm" "$(awk -v e="$execs" -v s="$secs" 'BEGIN {printf "%d", e * s}')" "$execs" \
			> "$DIR/load.exec.$i" &
		LOAD_PIDS+=($!)
	done
	"$B/connect_storm" "$(awk -v c="$conns" -v s="$secs" 'BEGIN {printf "%d", c * s}')" 0 "$conns" \
		> "$DIR/load.conn" &
	LOAD_PIDS+=($!)
}
# load_wait: wait for the load (not in a subshell: it waits for this
# shell's children); WALL is the longest wall time of its parts.
load_wait() {
	wait "${LOAD_PIDS[@]}"
	LOAD_PIDS=()
	WALL=$(cat "$DIR"/load.* | awk '$1 > w {w = $1} END {print w + 0}')
}
load_kill() { [ ${#LOAD_PIDS[@]} -gt 0 ] && kill "${LOAD_PIDS[@]}" 2>/dev/null; wait "${LOAD_PIDS[@]}" 2>/dev/null; LOAD_PIDS=(); }

# settle: wait until the agent has caught up: received grows by less than
# SETTLE_RATE (5000) a second (the host's own background, other sessions'
# tests, runs at a few hundred to a few thousand a second), at most 120 s.
# Prints the seconds it took.
settle() {
	local prev cur t0=$SECONDS
	prev=$(stats | awk '{print $1}')
	for _ in $(seq 120); do
		sleep 1
		cur=$(stats | awk '{print $1}')
		[ $((cur - prev)) -lt "${SETTLE_RATE:-5000}" ] && break
		prev=$cur
	done
	echo $((SECONDS - t0))
}
