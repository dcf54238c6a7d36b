#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# faults.sh - faults under load (issue 28): the agent in its default
# configuration takes RATE events a second (bench/load.sh: half execs, half
# connections; default 3125, half the rated load bench/rated.sh measured),
# a trigger loop (bench/trigger_loop: socket(AF_RXRPC), which the
# cve-2026-43500 shield refuses) runs throughout, and one fault is injected
# per step. Each step prints the events the load made, what the agent
# received, stored and did not store, the ring-buffer losses (its own
# counters, `kshield stats`), the load's events found in the store, and the
# trigger attempts that got through (lapses). A step fails when any of the
# load's events is neither stored nor counted (lost, not stored), when a
# trigger got through, or on its own check:
#   sigstop   SIGSTOP of the agent for STOP_S (60) s: the ring buffer
#             overflows, the losses are counted, the agent catches up
#             after SIGCONT (the time it took is printed);
#   truncate  the agent stopped, the store checkpointed (as an aged store
#             is: all in the main file) and cut to half its size: the
#             agent moves it aside, says so, starts a new store;
#   pages     the same with PAGES (20) random 8 KiB pages overwritten;
#   readonly  the store's filesystem (ext4 on a loop device of its own,
#             errors=remount-ro) goes read-only the way ext4 does after an
#             error (its trigger_fs_error), stays so RO_S (20) s, then is
#             checked (e2fsck) and mounted again: events counted as not
#             stored meanwhile, stored again once it is writable;
#   oom       the agent in a memory cgroup (v1 memory.limit_in_bytes, set
#             before it starts, as systemd's MemoryMax), made the OOM
#             killer's pick (its oom_score_adj 1000: the hog can't lower
#             its own, CAP_SYS_RESOURCE is not ours), and a hog allocates
#             until the kernel kills it; the agent is restarted, adopts the
#             pins and reads again what the killed one had read but not
#             committed; enforcement never stopped;
#   shipdown  the agent ships its store (--fleet: a loopback 3-node NATS
#             JetStream cluster and PostgreSQL 15, tests/fleet/cluster.sh,
#             with `kshield collect` writing PostgreSQL; a new store, so that
#             only this step's rows ship), and NATS and PostgreSQL are both
#             stopped for SHIP_DOWN_S (600) s, then started again: the
#             shipped-up-to mark must not move while they are down, and once
#             they are back every row stored up to the end of the load must
#             reach PostgreSQL exactly once (the rows stored during the
#             outage printed apart); the backlog's shipping time is printed.
# The wall-clock steps are not here: they move the host's clock, which other
# sessions share (tests/test_agent.c t18 steps the agent's clock alone).
# Knobs: RATE, STOP_S, RO_S, PAGES, SHIP_DOWN_S, STEPS ("sigstop truncate
# pages readonly oom shipdown"), KSHIELD_BPFFS (/sys/fs/bpf/ks-bench-faults-<pid>). Run it as root under
# `flock /tmp/kshield-host.lock`.
set -uo pipefail
cd "$(dirname "$0")/.."
export KSHIELD_BPFFS=${KSHIELD_BPFFS:-/sys/fs/bpf/ks-bench-faults-$$}
RATE=${RATE:-3125}
STOP_S=${STOP_S:-60}
RO_S=${RO_S:-20}
PAGES=${PAGES:-20}
SHIP_DOWN_S=${SHIP_DOWN_S:-600}
STEPS=${STEPS:-"sigstop truncate pages readonly oom shipdown"}
DIR=$(mktemp -d /var/tmp/ks-bench-faults.XXXXXX)
FS=$DIR/fs		# the store's own filesystem (readonly step)
IMG=$DIR/fs.img
STORE=$FS/events.db
CG=/sys/fs/cgroup/memory/ks-bench-faults-$$
CLUSTER=		# NATS + PostgreSQL of the shipdown step
COLLECT=
TRIG=
HOG=
FAILED=0
. bench/load.sh

cleanup() {
	[ -n "$TRIG" ] && kill "$TRIG" 2>/dev/null
	[ -n "$HOG" ] && kill "$HOG" 2>/dev/null
	load_kill
	agent_stop
	[ -n "$COLLECT" ] && kill "$COLLECT" 2>/dev/null && wait "$COLLECT" 2>/dev/null
	[ -n "$CLUSTER" ] && { tests/fleet/cluster.sh stop "$CLUSTER" > /dev/null 2>&1; rm -rf "$CLUSTER"; }
	umount -l "$FS" 2>/dev/null
	[ -d "$CG" ] && { cat "$CG/tasks" 2>/dev/null | while read -r p; do echo "$p" > /sys/fs/cgroup/memory/cgroup.procs; done; rmdir "$CG"; }
	rm -rf "$KSHIELD_BPFFS" "$DIR"
}
trap cleanup EXIT

# storm_rows: the load's events found in the store (execs and exits of the
# exec storms' children, connects and accepts of the connect storm), read
# from the pids each storm printed.
storm_rows() {
	local ex cn
	ex=$(cat "$DIR"/load.exec.* | awk '{printf "%s%s", s, $3; s = ","}')
	cn=$(awk '{print $3}' "$DIR/load.conn")
	sqlite3 "$STORE" "SELECT (SELECT count(*) FROM events WHERE kind IN ('exec', 'exit') AND ppid IN ($ex))
		+ (SELECT count(*) FROM events WHERE kind IN ('connect', 'accept') AND pid = $cn)" 2>/dev/null || echo 0
}
trig_start() { "$B/trigger_loop" 20 > "$DIR/trig" & TRIG=$!; }
trig_stop() {
	kill -INT "$TRIG"; wait "$TRIG"; TRIG=
	read -r _ TRIES _ _ _ LAPSES <<< "$(tail -1 "$DIR/trig")"
}

# step_begin SECS: counters, trigger loop and load for SECS seconds
step_begin() {
	read -r R0 S0 U0 L0 <<< "$(stats)"
	local execs conns x=${EXEC_SHARE:-0.5}
	execs=$(awk -v r="$RATE" -v s="$1" -v x="$x" -v p="${EXEC_PROCS:-2}" 'BEGIN {e = r * x / 2 / p; printf "%d", int(e * s) * p}')
	conns=$(awk -v r="$RATE" -v s="$1" -v x="$x" 'BEGIN {printf "%d", int(r * (1 - x) / 2 * s)}')
	MADE=$((2 * execs + 2 * conns))
	rm -f "$DIR"/load.*
	trig_start
	load_start "$RATE" "$1"
}
# step_end NAME [CHECK_ROWS]: wait, settle, print the figures; the load's
# rows are checked against the store unless CHECK_ROWS is 0 (a store moved
# aside keeps the rows stored before).
step_end() {
	local name=$1 rows_ok=${2:-1} rows verdict=ok
	load_wait
	CATCHUP=$(settle)
	trig_stop
	read -r R1 S1 U1 L1 <<< "$(stats)"
	RECV=$((R1 - R0 + ${RECV_EXTRA:-0})) STOR=$((S1 - S0 + ${STOR_EXTRA:-0}))
	UNST=$((U1 - U0 + ${UNST_EXTRA:-0})) LOST=$((L1 - L0))
	rows=$(storm_rows)
	# every event the agent received is stored or counted as not stored,
	# or in its open batch (at most 8192 rows, 500 ms: the host's
	# background keeps one open at each reading); exact at the end
	# (the agent's "stopped:" line)
	PEND=$((RECV - STOR - UNST))
	[ "${PEND#-}" -gt 8192 ] && verdict="received $RECV, stored $STOR + not stored $UNST: $PEND apart"
	# every event the load made is in the store or counted (lost, not
	# stored); the counters also hold the host's background
	if [ "$rows_ok" = 1 ] && [ "$rows" -lt "$MADE" ] && [ $((rows + LOST + UNST)) -lt "$MADE" ]; then
		verdict="the load made $MADE, $rows stored, $LOST lost, $UNST not stored: $((MADE - rows - LOST - UNST)) missing"
	fi
	[ "$LAPSES" != 0 ] && verdict="$LAPSES triggers got through"
	[ -n "${STEP_FAIL:-}" ] && verdict=$STEP_FAIL
	printf "%-9s %8d %8d %8d %8d %8d %8s %6d/%-6d %5ss  %s\n" "$name" "$MADE" "$RECV" "$STOR" "$UNST" \
		"$LOST" "$([ "$rows_ok" = 1 ] && echo "$rows" || echo -)" "$LAPSES" "$TRIES" "$CATCHUP" "$verdict"
	[ "$verdict" = ok ] || FAILED=1
	STEP_FAIL= RECV_EXTRA= STOR_EXTRA= UNST_EXTRA=
}
log_since() { tail -n +$(($1 + 1)) "$DIR/agent.log"; }
log_lines() { wc -l < "$DIR/agent.log"; }

step_sigstop() {
	step_begin $((STOP_S + 20))
	sleep 5
	kill -STOP "$AGENT"
	sleep "$STOP_S"
	kill -CONT "$AGENT"
	step_end sigstop
	[ "$LOST" -gt 0 ] || { echo "  sigstop: the ring buffer did not overflow in $STOP_S s at $RATE/s"; FAILED=1; }
}

# corrupt HOW: stop the agent, checkpoint the store into its main file
# (an aged store: the WAL is at most 16 MiB of it), damage it, continue.
corrupt() {
	local n0 sz
	step_begin 20
	sleep 5
	n0=$(log_lines)
	kill -STOP "$AGENT"
	sqlite3 "$STORE" "PRAGMA wal_checkpoint(TRUNCATE)" > /dev/null
	sz=$(stat -c %s "$STORE")
	case $1 in
	truncate) truncate -s $((sz / 2)) "$STORE" ;;
	pages) for _ in $(seq "$PAGES"); do
			dd if=/dev/urandom of="$STORE" bs=8192 count=1 seek=$((RANDOM % (sz / 8192))) \
				conv=notrunc status=none
		done ;;
	esac
	kill -CONT "$AGENT"
	for _ in $(seq 100); do log_since "$n0" | grep -q "moved the corrupt" && break; sleep 0.1; done
	log_since "$n0" | grep -q "moved the corrupt" || STEP_FAIL="the corrupt store was not moved aside"
	ls "$STORE".corrupt-* > /dev/null 2>&1 || STEP_FAIL="the corrupt store was not kept"
	step_end "$1" 0
	log_since "$n0" | sed 's/^/  /'
	rm -f "$STORE".corrupt-*
}
step_truncate() { corrupt truncate; }
step_pages() { corrupt pages; }

fs_mount() { mount -o loop,errors=remount-ro "$IMG" "$FS"; }
step_readonly() {
	local n0 dev
	step_begin $((RO_S + 20))
	sleep 5
	n0=$(log_lines)
	dev=$(basename "$(losetup -j "$IMG" | cut -d: -f1)")
	echo 1 > "/sys/fs/ext4/$dev/trigger_fs_error"	# ext4: error, journal aborted, read-only
	sleep "$RO_S"
	# what an administrator does: unmount, check, mount again
	umount -l "$FS"
	e2fsck -fy "$IMG" > /dev/null 2>&1
	fs_mount
	for _ in $(seq 100); do log_since "$n0" | grep -q "recovered" && break; sleep 0.1; done
	step_end readonly
	log_since "$n0" | sed 's/^/  /'
	[ "$UNST" -gt 0 ] || echo "  readonly: nothing counted as not stored in $RO_S s"
	log_since "$n0" | grep -q "store: recovered" || { echo "  readonly: no recovery"; FAILED=1; }
}

# the agent as systemd would start it under MemoryMax: in the cgroup first
agent_start_in_cg() {
	mkdir -p "$CG"
	echo "${OOM_LIMIT:-256M}" > "$CG/memory.limit_in_bytes"
	echo $$ > "$CG/cgroup.procs"	# the agent (a child) starts in it
	agent_start
	echo $$ > /sys/fs/cgroup/memory/cgroup.procs	# this shell and the load do not
}
step_oom() {
	local n0 n1 old st ra sa ua
	agent_stop
	agent_start_in_cg
	step_begin 30
	sleep 5
	n0=$(log_lines)
	old=$AGENT
	# the agent the OOM killer's pick; the hog in the cgroup stops once
	# the agent is gone
	echo 1000 > "/proc/$old/oom_score_adj"
	python3 -c '
import os, sys, time
open(sys.argv[1] + "/cgroup.procs", "w").write(str(os.getpid()))
hog = []
for _ in range(256):    # 2 GiB at most
    try:
        os.kill(int(sys.argv[2]), 0)
    except ProcessLookupError:
        break
    hog.append(bytearray(8 << 20))
    time.sleep(0.01)
' "$CG" "$old" &
	HOG=$!
	wait "$HOG"; HOG=
	kill -0 "$old" 2>/dev/null && { STEP_FAIL="the OOM killer did not kill the agent"; kill -TERM "$old"; }
	wait "$old" 2>/dev/null; st=$?
	dmesg 2>/dev/null | grep -i "killed process $old" | tail -1 | sed 's/^/  /'
	[ "$st" = 137 ] || STEP_FAIL="the agent ended with status $st, not SIGKILL"
	# what the killed agent had settled (stored, or counted as not
	# stored) when it last gave ring space back: the rest it had read is
	# still in the ring, for the next agent
	read -r ra sa ua _ <<< "$(stats)"
	RECV_EXTRA=$((sa + ua)) STOR_EXTRA=$sa UNST_EXTRA=$ua
	echo "  killed with $((ra - sa - ua)) events read and not committed: left in the ring for the next agent"
	AGENT=
	sleep 2		# systemd's RestartSec
	n1=$(log_lines)
	agent_start_in_cg
	log_since "$n1" | grep -q "monitor adopted" || STEP_FAIL="the restart did not adopt the monitor"
	log_since "$n1" | grep -E "monitor|shield cve-2026-43500" | sed 's/^/  /'
	step_end oom
}

# shipdown: the agent ships (--fleet), NATS and PostgreSQL both stopped for
# SHIP_DOWN_S s under the load, then started again.
sql1() { sqlite3 "$STORE" "$1" 2>/dev/null; }
ship_mark() { sql1 "SELECT upto FROM fleet_shipped WHERE host = '$SHIP_HOST'" | grep . || echo 0; }
store_top() { sql1 "SELECT rowid FROM events ORDER BY rowid DESC LIMIT 1" | grep . || echo 0; }
# pg_rows LO HI: "rows|distinct" of this host's events with LO <= seq <= HI
pg_rows() {
	psql "$PG_CONNINFO" -Atc "SELECT count(*), count(DISTINCT seq) FROM ks_events
		WHERE host = '$SHIP_HOST' AND seq BETWEEN $1 AND $2" 2>/dev/null || echo "0|0"
}
step_shipdown() {
	local n0 t_down t_up m_down b_down m_up top t0 caught landed mark st_all st_out pg_all pg_out
	CLUSTER=$(mktemp -d /var/tmp/ks-bench-faults-c.XXXXXX)
	chmod 755 "$CLUSTER"	# PostgreSQL runs as postgres
	tests/fleet/cluster.sh start "$CLUSTER/c" > /dev/null 2>&1 ||
		{ echo "  shipdown: can't start NATS and PostgreSQL (scripts/setup.sh installs them)"; FAILED=1; return; }
	. "$CLUSTER/c/env"
	SHIP_HOST=ks-bench-faults-$$
	"$KS" fleet status --nats "$NATS_URLS" > /dev/null	# the buckets: host credentials can't create them
	"$KS" shield keygen "$CLUSTER/signer" > /dev/null && mkdir -p "$CLUSTER/keys" &&
		cp "$CLUSTER/signer.pub" "$CLUSTER/keys/"
	"$KS" collect --pg "$PG_CONNINFO" --nats "$NATS_URLS" > "$DIR/collect.log" 2>&1 &
	COLLECT=$!
	# a new store: this step's rows only (the earlier steps' would ship first)
	agent_stop
	rm -f "$STORE" "$STORE"-wal "$STORE"-shm
	agent_start --fleet "$HOST_URLS" --keys "$CLUSTER/keys" --state "$CLUSTER/state" --host "$SHIP_HOST"
	n0=$(log_lines)
	step_begin $((SHIP_DOWN_S + 40))
	sleep 10
	t_down=$(date +%s%N)
	tests/fleet/cluster.sh nats-stop "$CLUSTER/c" 1 2 3
	tests/fleet/cluster.sh pg-stop "$CLUSTER/c"
	m_down=$(ship_mark)
	b_down=$(sql1 "SELECT count(*) FROM events WHERE rowid > $m_down")
	sleep "$SHIP_DOWN_S"
	m_up=$(ship_mark)
	tests/fleet/cluster.sh pg-start "$CLUSTER/c"
	tests/fleet/cluster.sh nats-start "$CLUSTER/c" 1 2 3 > /dev/null
	t_up=$(date +%s%N)
	# the backlog (every row stored while they were down) shipped, under
	# the load that goes on
	top=$(store_top) t0=$SECONDS caught=-
	for _ in $(seq 600); do
		[ "$(ship_mark)" -ge "$top" ] && { caught=$((SECONDS - t0)); break; }
		sleep 1
	done
	step_end shipdown
	# every row stored by the end of the load, shipped and in PostgreSQL
	top=$(store_top)
	st_all=$(sql1 "SELECT count(*) FROM events WHERE rowid <= $top")
	t0=$SECONDS landed=-
	for _ in $(seq 600); do
		[ "$(ship_mark)" -ge "$top" ] && [ "$(pg_rows 0 "$top" | cut -d'|' -f1)" -ge "$st_all" ] &&
			{ landed=$((SECONDS - t0)); break; }
		kill -0 "$COLLECT" 2> /dev/null || { echo "  shipdown: kshield collect died:"; FAILED=1; break; }
		sleep 1
	done
	st_out=$(sql1 "SELECT count(*) FROM events WHERE rowid BETWEEN $t_down AND $t_up")
	pg_all=$(pg_rows 0 "$top")
	pg_out=$(pg_rows "$t_down" "$t_up")
	echo "  NATS and PostgreSQL down $(( (t_up - t_down) / 1000000000 )) s ($SHIP_DOWN_S s, and stopping and starting them); mark $m_down when they stopped ($b_down rows above it), $m_up before they started ($([ "$m_down" = "$m_up" ] && echo "did not move" || echo MOVED))"
	echo "  stored $st_all rows up to the end of the load, $st_out of them while down; in PostgreSQL (rows|distinct): $pg_all, $pg_out of those while down"
	echo "  the backlog shipped $caught s after they were back (the mark at the last row stored then); after the load, all in PostgreSQL in $landed s"
	log_since "$n0" | grep -i "store:\|fleet\|nats\|ship" | sed 's/^/  /' | head -10
	tail -4 "$DIR/collect.log" | sed 's/^/  collect: /'
	[ "$m_down" = "$m_up" ] || { echo "  shipdown: the mark moved while NATS was down"; FAILED=1; }
	[ "$pg_all" = "$st_all|$st_all" ] && [ "$pg_out" = "$st_out|$st_out" ] ||
		{ echo "  shipdown: PostgreSQL does not hold every stored row exactly once"; FAILED=1; }
	kill "$COLLECT"; wait "$COLLECT" 2>/dev/null; COLLECT=
	agent_stop
	agent_start
	tests/fleet/cluster.sh stop "$CLUSTER/c" > /dev/null 2>&1
	rm -rf "$CLUSTER"; CLUSTER=
}

mkdir -p "$FS"
truncate -s 2G "$IMG" && mkfs.ext4 -q -F "$IMG" && fs_mount || { echo "can't make the store's filesystem"; exit 1; }
rm -rf "$KSHIELD_BPFFS"
agent_start
echo "faults at $RATE events/s, default config, trigger loop every 20 ms (socket(AF_RXRPC), cve-2026-43500)"
printf "%-9s %8s %8s %8s %8s %8s %8s %13s %6s  %s\n" step made received stored unstored lost "rows" "lapses/tries" catchup verdict
for s in $STEPS; do
	"step_$s"
done
agent_stop
# exact once the agent has drained and committed
tail -1 "$DIR/agent.log" | sed 's/^/  /'
tail -1 "$DIR/agent.log" | awk '/stopped:/ {exit !($4 == $7 + $9)}' || { echo "  received != stored + not stored"; FAILED=1; }
exit $FAILED
