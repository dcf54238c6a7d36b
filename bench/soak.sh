#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Soak (issue 28): the agent in its default configuration
# (packaging/kshield.conf: monitor, flows, every bundled shield) under a
# steady mixed load for DURATION seconds, with retention and max_size set
# small so that deletion runs all the time. 2 hours stand for days; the
# 10-minute form (the default) is the same run with every period scaled.
#
# The load, each loop in the background until the end:
#   execs      bench/exec_storm EXEC_N (fork + exec /bin/true), every second
#   connects   bench/connect_storm CONN_N: loopback connect + accept
#   flows      bench/connect_storm FLOW_N FLOW_BYTES: flows with bytes
#   shield     every SHIELD_EVERY s, one hit of a shield in audit and one
#              of a shield enforcing: unshare(CLONE_NEWUSER) as nobody
#              (userns-policy, audit in the default config: it runs) and
#              socket(AF_RXRPC) (cve-2026-43500, enforcing: refused, by
#              SIGKILL for its tp variant). A mode switched to audit needs
#              a token while the guard is on, so each keeps its mode
#   hunts      kshield hunt: new-binaries, shield-hits, userns, exfil,
#              binary in turn, every HUNT_EVERY s
#   reloads    SIGHUP every RELOAD_EVERY s (the config rewritten first)
# The store: retention RETENTION (30 s) and max_size MAX_SIZE (4M), both
# small, so that deletion runs all the time (by age and by size).
# Every SAMPLE seconds one CSV row: the agent's RSS and open fds, store file
# and max_size, WAL, the oldest event's age and retention, received,
# stored, not stored, pending (in the open batch), ring-buffer losses, the
# agent's CPU, events/s, shield hits (from its /metrics and /proc).
# Periods for DURATION=7200: SAMPLE 60, RELOAD_EVERY 600, HUNT_EVERY 180,
# scaled down linearly (floors 5, 30, 15) for shorter runs.
#
# Fails (exit 1, one line) on: growth that does not level off (RSS, fds,
# WAL, store file: the last third's max above the middle third's by more
# than a tolerance); the store and WAL over twice max_size; an event
# unaccounted for (received != stored + not stored once drained, fewer
# exec, connect or flow records received + lost than the load made (flows:
# one from each end of a connection with bytes), more pending
# than one batch); the oldest event older than retention allows; an
# enforced trigger not refused; a failed hunt or reload; no load (no
# events, no shield hits in either mode). Draws soak.png (gnuplot): RSS,
# store size, events/s.
#
# Knobs: DURATION (600), OUT (directory for soak.csv, soak.png, agent.log;
# default a new one under /var/tmp), MAX_SIZE, RETENTION, SAMPLE,
# RELOAD_EVERY, HUNT_EVERY, EXEC_N (100), CONN_N (200), FLOW_N (50),
# FLOW_BYTES (16384), SHIELD_EVERY (1), METRICS (127.0.0.1:19477),
# KSHIELD_BPFFS (/sys/fs/bpf/ks-bench-soak-<pid>). Loads BPF: run it as
# `flock /tmp/kshield-host.lock bench/soak.sh`.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
KS=$(readlink -f "${KSHIELD:-build/kshield}")
B=$(readlink -f build/bench)
SHIELDS=$(readlink -f "${SHIELDS_DIR:-build/shields}")
export KSHIELD_BPFFS=${KSHIELD_BPFFS:-/sys/fs/bpf/ks-bench-soak-$$}
DURATION=${DURATION:-600}
scaled() { awk -v d="$DURATION" -v full="$1" -v floor="$2" 'BEGIN {v = int(full * d / 7200); print v < floor ? floor : v}'; }
SAMPLE=${SAMPLE:-$(scaled 60 5)}
RELOAD_EVERY=${RELOAD_EVERY:-$(scaled 600 30)}
HUNT_EVERY=${HUNT_EVERY:-$(scaled 180 15)}
RETENTION=${RETENTION:-30}
MAX_SIZE=${MAX_SIZE:-4M}
EXEC_N=${EXEC_N:-100}
CONN_N=${CONN_N:-200}
FLOW_N=${FLOW_N:-50}
FLOW_BYTES=${FLOW_BYTES:-16384}
SHIELD_EVERY=${SHIELD_EVERY:-1}
METRICS=${METRICS:-127.0.0.1:19477}
OUT=${OUT:-$(mktemp -d /var/tmp/ks-soak.XXXXXX)}
mkdir -p "$OUT"
OUT=$(readlink -f "$OUT")
STORE=$OUT/events.db
CONF=$OUT/kshield.conf
CSV=$OUT/soak.csv
LOG=$OUT/agent.log
PNG=$OUT/soak.png
AGENT=
LOADS=()

die() { echo "soak: FAIL: $*"; exit 1; }
for f in "$KS" "$B/exec_storm" "$B/connect_storm"; do
	[ -x "$f" ] || die "$f missing: make && make build/bench/exec_storm build/bench/connect_storm"
done
command -v gnuplot >/dev/null || die "gnuplot missing: scripts/setup.sh installs gnuplot-nox"
[ "$DURATION" -ge $((9 * SAMPLE)) ] || die "DURATION $DURATION s is under 9 samples of $SAMPLE s: no thirds to compare"

cleanup() {
	for p in "${LOADS[@]}"; do kill "$p" 2>/dev/null; done
	wait "${LOADS[@]}" 2>/dev/null
	[ -n "$AGENT" ] && kill -TERM "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	rm -rf "$KSHIELD_BPFFS"		# unpinned: monitor and shields detach
	rm -f "$OUT/run"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# The default config with the soak's store, bpffs, metrics port, small
# retention and cap.
write_conf() {
	sed -E -e "s|^store = .*|store = $STORE|" -e "s|^bpffs = .*|bpffs = $KSHIELD_BPFFS|" \
		-e "s|^shields_dir = .*|shields_dir = $SHIELDS|" -e "s|^retention = .*|retention = ${RETENTION}s|" \
		-e "s|^# max_size = .*|max_size = $MAX_SIZE|" -e "s|^metrics = .*|metrics = $METRICS|" \
		packaging/kshield.conf > "$CONF.tmp" && mv "$CONF.tmp" "$CONF"
}

# ---- the agent ----
rm -rf "$KSHIELD_BPFFS"
rm -f "$STORE" "$STORE-wal" "$STORE-shm"
write_conf
"$KS" agent --check --config "$CONF" > "$OUT/check.log" 2>&1 || die "config refused: $(tail -1 "$OUT/check.log")"
"$KS" agent --config "$CONF" > "$LOG" 2>&1 &
AGENT=$!
want=$(ls "$SHIELDS"/*.bpf.o | wc -l)
for _ in $(seq 600); do
	grep -q "storing events" "$LOG" && grep -q "metrics: serving" "$LOG" &&
		[ "$(grep -c '^kshield agent: shield ' "$LOG")" -ge "$want" ] && break
	kill -0 "$AGENT" 2>/dev/null || die "agent exited at start: $(tail -1 "$LOG")"
	sleep 0.1
done
grep -q "metrics: serving" "$LOG" || die "agent did not start in 60 s (metrics at $METRICS?): $(tail -1 "$LOG")"

# ---- the load ----
touch "$OUT/run"
running() { [ -e "$OUT/run" ]; }
exec_loop() { local n=0; while running; do "$B/exec_storm" "$EXEC_N" >/dev/null && n=$((n + EXEC_N)); echo "$n" > "$OUT/exec.n"; sleep 1; done; }
conn_loop() {	# conn_loop NAME N [BYTES]
	local name=$1 per=$2 n=0; shift 2
	while running; do "$B/connect_storm" "$per" "$@" >/dev/null && n=$((n + per)); echo "$n" > "$OUT/$name.n"; sleep 1; done
}
# The audited trigger must run (exit 0), the enforced one must not: an
# AF_RXRPC socket that was made (exit 0) or not refused is a lapse.
shield_loop() {
	local ran=0 refused=0 lapsed=0 rc
	while running; do
		setpriv --reuid 65534 --regid 65534 --clear-groups unshare -U true && ran=$((ran + 1))
		perl -e 'socket(S, 33, 2, 0) or exit($!{EPERM} ? 1 : 2)'; rc=$?
		case $rc in 0|2) lapsed=$((lapsed + 1)) ;; *) refused=$((refused + 1)) ;; esac
		echo "$ran $refused $lapsed" > "$OUT/shield.n"
		sleep "$SHIELD_EVERY"
	done
}
exec_loop & LOADS+=($!)
conn_loop conn "$CONN_N" & LOADS+=($!)
conn_loop flow "$FLOW_N" "$FLOW_BYTES" & LOADS+=($!)
shield_loop 2>/dev/null & LOADS+=($!)	# no "Killed" lines

# ---- sampling, hunts, reloads ----
scrape() { curl -s --max-time 10 "http://$METRICS/metrics"; }
# metric NAME: the sum over its labels
metric() { awk -v n="$1" '$1 == n || index($1, n "{") == 1 {s += $2} END {printf "%.0f", s}' <<< "$M"; }
metric_f() { awk -v n="$1" '$1 == n {print $2}' <<< "$M"; }
# hits SHIELD VERDICT...: its hits with any of those verdicts
hits() {
	awk -v sh="$1" -v vs=" ${*:2} " 'index($1, "kshield_shield_hits_total{shield=\"" sh "\"") == 1 {
		v = $1; sub(/.*verdict="/, "", v); sub(/".*/, "", v); if (index(vs, " " v " ")) s += $2}
		END {print s + 0}' <<< "$M"
}
size_of() { stat -c %s "$1" 2>/dev/null || echo 0; }
# the store's bookkeeping beside the events: clock steps and loss notes
# (retention must bound them too), and interned binary paths (one per
# path ever run: they grow with the machine's distinct paths, not time)
side_rows() {
	sqlite3 -readonly -separator , "$STORE" "SELECT (SELECT count(*) FROM clock)
		+ (SELECT count(*) FROM losses), (SELECT count(*) FROM binaries)" 2>/dev/null || echo ","
}
# seconds since boot: the schedule holds if someone steps the wall clock
mono() { cut -d. -f1 /proc/uptime; }
max_bytes=$(awk -v s="$MAX_SIZE" 'BEGIN {u = substr(s, length(s)); v = s + 0; print v * (u == "K" ? 1024 : u == "M" ? 1048576 : u == "G" ? 1073741824 : 1)}')

# hunts in turn: the store-wide scans and one selective (indexed) query
HUNTS=("new-binaries" "shield-hits" "userns" "exfil --include-loopback --bytes 1K" "binary --binary /usr/bin/true")
echo "t_s,rss_kb,fds,store_bytes,max_size,wal_bytes,oldest_age_s,retention_s,received,stored,unstored,pending,lost,cpu_s,events_per_s,hits_audit,hits_enforce,hunts,reloads,side_rows,binaries" > "$CSV"
echo "soak: $DURATION s, sample $SAMPLE s, reload every $RELOAD_EVERY s, hunt every $HUNT_EVERY s," \
	"retention ${RETENTION}s, max_size $MAX_SIZE; output $OUT"

T0=$(mono)
next_sample=$T0 next_hunt=$((T0 + HUNT_EVERY)) next_reload=$((T0 + RELOAD_EVERY))
prev_recv="" prev_t=$T0 hunts=0 reloads=0 fails=()
sample() {
	local now=$1 rss fds db wal oldest age recv stored unstored lost cpu rate pending
	M=$(scrape) || { fails+=("metrics scrape failed at t=$((now - T0)) s"); return; }
	echo "$M" > "$OUT/metrics.last"
	rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$AGENT/status" 2>/dev/null)
	fds=$(ls "/proc/$AGENT/fd" 2>/dev/null | wc -l)
	db=$(size_of "$STORE"); wal=$(size_of "$STORE-wal")
	oldest=$(metric_f kshield_store_oldest_event_timestamp_seconds)
	age=$(awk -v o="${oldest:-0}" -v n="$(date +%s.%N)" 'BEGIN {printf "%.1f", (o > 0) ? n - o : 0}')
	recv=$(metric kshield_events_received_total); stored=$(metric kshield_events_stored_total)
	unstored=$(metric kshield_events_unstored_total); lost=$(metric kshield_ringbuf_lost_total)
	cpu=$(metric_f process_cpu_seconds_total)
	pending=$((recv - stored - unstored))
	rate=$(awk -v a="$recv" -v b="${prev_recv:-$recv}" -v t="$((now - prev_t))" 'BEGIN {printf "%.1f", (t > 0) ? (a - b) / t : 0}')
	prev_recv=$recv prev_t=$now
	echo "$((now - T0)),$rss,$fds,$db,$max_bytes,$wal,$age,$RETENTION,$recv,$stored,$unstored,$pending,$lost,$cpu,$rate,$(hits userns-policy audited),$(hits cve-2026-43500 refused killed),$hunts,$reloads,$(side_rows)" >> "$CSV"
	# a batch is at most KS_STORE_BATCH rows: more pending is a leak
	[ "$pending" -ge 0 ] && [ "$pending" -le 4096 ] ||
		fails+=("t=$((now - T0)) s: received $recv, stored $stored, not stored $unstored: $pending unaccounted")
	# retention runs every 10 s (RETAIN_MS) and a sample may land just before it
	awk -v a="$age" -v r="$RETENTION" 'BEGIN {exit !(a > r + 10 + 5)}' &&
		fails+=("t=$((now - T0)) s: oldest event ${age} s old, retention ${RETENTION} s")
}
while :; do
	now=$(mono)
	[ "$now" -ge $((T0 + DURATION)) ] && break
	kill -0 "$AGENT" 2>/dev/null || die "agent died at t=$((now - T0)) s: $(tail -1 "$LOG")"
	if [ "$now" -ge "$next_sample" ]; then
		sample "$now"
		next_sample=$((next_sample + SAMPLE))
	fi
	if [ "$now" -ge "$next_hunt" ]; then
		h=${HUNTS[hunts % ${#HUNTS[@]}]}
		# shellcheck disable=SC2086 # NAME and its options
		"$KS" hunt $h --store "$STORE" --since 1h > "$OUT/hunt.out" 2>&1 ||
			fails+=("hunt $h failed: $(tail -1 "$OUT/hunt.out")")
		hunts=$((hunts + 1)) next_hunt=$((next_hunt + HUNT_EVERY))
	fi
	if [ "$now" -ge "$next_reload" ]; then
		write_conf
		kill -HUP "$AGENT"
		reloads=$((reloads + 1)) next_reload=$((next_reload + RELOAD_EVERY))
	fi
	sleep 1
done

# ---- drain and account ----
rm -f "$OUT/run"
wait "${LOADS[@]}" 2>/dev/null; LOADS=()
# The last records reach the store. This loop makes records of its own
# (curl's exec, connect, the agent's accept, exits of sleep and awk) that
# may sit in the agent's open batch at any scrape, so "nothing pending"
# is luck: drained means that everything received up to the previous
# scrape is now stored or counted not stored. The exact check is the
# agent's own count at exit, below.
pending=1 prev_recv=
for _ in $(seq 30); do
	sleep 1
	M=$(scrape)
	recv=$(metric kshield_events_received_total)
	done_n=$(($(metric kshield_events_stored_total) + $(metric kshield_events_unstored_total)))
	pending=$((recv - done_n))
	[ -n "$prev_recv" ] && [ "$done_n" -ge "$prev_recv" ] && { pending=0; break; }
	prev_recv=$recv
done
sample "$(mono)"
M=$(scrape)
recv_exec=$(awk '$1 == "kshield_events_received_total{kind=\"exec\"}" {print $2}' <<< "$M")
lost_exec=$(awk '$1 == "kshield_ringbuf_lost_total{kind=\"exec\"}" {print $2}' <<< "$M")
recv_conn=$(awk '$1 == "kshield_events_received_total{kind=\"connect\"}" {print $2}' <<< "$M")
lost_conn=$(awk '$1 == "kshield_ringbuf_lost_total{kind=\"connect\"}" {print $2}' <<< "$M")
recv_flow=$(awk '$1 == "kshield_events_received_total{kind=\"flow\"}" {print $2}' <<< "$M")
lost_flow=$(awk '$1 == "kshield_ringbuf_lost_total{kind=\"flow\"}" {print $2}' <<< "$M")
read -r ran refused lapsed < "$OUT/shield.n"
hits_audit=$(hits userns-policy audited) hits_enforce=$(hits cve-2026-43500 refused killed)
made_exec=$(cat "$OUT/exec.n") made_flow=$(cat "$OUT/flow.n")
made_conn=$(($(cat "$OUT/conn.n") + made_flow))
kill -TERM "$AGENT"; wait "$AGENT"; rc=$?; AGENT=
read -r f_recv f_stored f_unstored < <(sed -nE 's/.*stopped: ([0-9]+) events received, ([0-9]+) stored, ([0-9]+) not stored.*/\1 \2 \3/p' "$LOG")
[ "$rc" = 0 ] || fails+=("the agent exited $rc at SIGTERM")
[ -n "$f_recv" ] || fails+=("the agent's last line gave no counts: $(tail -1 "$LOG")")
[ "${f_recv:-0}" = $((${f_stored:-0} + ${f_unstored:-0})) ] ||
	fails+=("at exit: received $f_recv != stored $f_stored + not stored $f_unstored")
[ "$pending" = 0 ] || fails+=("$pending records still pending 30 s after the load stopped (not even those received a scrape before were all stored)")
# every exec and connection of the load was received or counted as lost
# (other processes on the machine only add records)
[ "$((recv_exec + lost_exec))" -ge "$made_exec" ] ||
	fails+=("$made_exec execs made, $recv_exec exec records received + $lost_exec lost")
[ "$((recv_conn + lost_conn))" -ge "$made_conn" ] ||
	fails+=("$made_conn connections made, $recv_conn connect records received + $lost_conn lost")
# a connection that moved bytes both ways: a flow record from each end
[ "$((recv_flow + lost_flow))" -ge "$((2 * made_flow))" ] ||
	fails+=("$made_flow connections moved bytes, $recv_flow flow records received + $lost_flow lost (want 2 each)")
[ "${f_recv:-0}" -gt 0 ] && [ "$made_exec" -gt 0 ] && [ "$made_conn" -gt 0 ] ||
	fails+=("the load did not run: $made_exec execs, $made_conn connections, ${f_recv:-0} events received")
[ "$lapsed" = 0 ] || fails+=("enforcement lapsed: $lapsed AF_RXRPC sockets were not refused")
[ "$ran" -gt 0 ] && [ "$refused" -gt 0 ] && [ "$hits_audit" -ge "$ran" ] && [ "$hits_enforce" -ge "$refused" ] ||
	fails+=("shield triggers: $ran audited runs ($hits_audit hits), $refused refused ($hits_enforce hits)")
[ "$reloads" -gt 0 ] && [ "$hunts" -gt 0 ] || fails+=("$reloads reloads, $hunts hunts")
grep -q "config: .*keeping the previous one" "$LOG" && fails+=("a reload was refused: $(grep -m1 'config: ' "$LOG")")

# growth COLUMN NAME FRACTION SLACK: the last third's max may exceed the
# middle third's max by FRACTION of it plus SLACK (the column's unit)
growth() {
	awk -F, -v c="$1" -v name="$2" -v f="$3" -v s="$4" '
		NR > 1 {v[++n] = $c}
		END {
			for (i = int(n / 3) + 1; i <= int(2 * n / 3); i++) if (v[i] > mid) mid = v[i]
			for (i = int(2 * n / 3) + 1; i <= n; i++) if (v[i] > last) last = v[i]
			if (last > mid * (1 + f) + s) printf "%s grows: %s in the last third, %s in the middle one\n", name, last, mid
		}' "$CSV"
}
while read -r col name frac slack; do
	g=$(growth "$col" "$name" "$frac" "$slack")
	[ -n "$g" ] && fails+=("$g")
done <<- EOF
	2 rss_kb 0.05 1024
	3 fds 0 2
	4 store_bytes 0.10 262144
	6 wal_bytes 0.10 262144
	20 side_rows 0.10 10
EOF

# the store on disk (file and WAL) within twice max_size once it filled
# (the cap is applied every 10 s: what comes in meanwhile is over it)
over=$(awk -F, 'NR > 1 {t[++n] = $1; d[n] = $4 + $6; m = $5}
	END {for (i = int(n / 3) + 1; i <= n; i++) if (d[i] > 2 * m) {
		printf "store file + WAL %d bytes at t=%d s, max_size %d", d[i], t[i], m; exit}}' "$CSV")
[ -n "$over" ] && fails+=("$over")

# ---- figures and the plot ----
summary=$(awk -F, 'NR == 2 {r0 = $2; f0 = $3; s0 = $4; w0 = $6; c0 = $14; t0 = $1}
	NR > 1 {r1 = $2; f1 = $3; s1 = $4; w1 = $6; lost = $13; cpu = $14; t = $1; recv = $9
		if ($15 > 0) {rs += $15; rn++}}
	END {printf "RSS %.1f -> %.1f MB, fds %d -> %d, store %.2f -> %.2f MB, WAL %.2f -> %.2f MB, " \
		"%d events (%.0f/s), %d lost, agent CPU %.1f s after its start (%.1f%% of one CPU)",
		r0 / 1024, r1 / 1024, f0, f1, s0 / 1048576, s1 / 1048576, w0 / 1048576, w1 / 1048576,
		recv, rn ? rs / rn : 0, lost, cpu - c0, (t > t0) ? 100 * (cpu - c0) / (t - t0) : 0}' "$CSV")
gnuplot <<- EOF > "$OUT/gnuplot.log" 2>&1 || echo "soak: gnuplot failed: $(tail -1 "$OUT/gnuplot.log")"
	set terminal pngcairo size 1000,900 noenhanced
	set output "$PNG"
	set datafile separator ","
	set key autotitle columnhead top left
	set grid
	set yrange [0:*]
	set multiplot layout 3,1 title "kshield soak: $DURATION s, retention ${RETENTION}s, max_size $MAX_SIZE"
	set ylabel "MB"
	plot "$CSV" using 1:(\$2/1024) with lines lw 2 title "agent RSS"
	set offsets 0, 0, graph 0.15, 0	# max_size on the top border is not seen
	plot "$CSV" using 1:(\$4/1048576) with lines lw 2 title "store file", \
	     "" using 1:(\$6/1048576) with lines lw 2 title "WAL", \
	     "" using 1:(\$5/1048576) with lines dt 2 title "max\\_size"
	set offsets 0, 0, 0, 0
	set ylabel "events/s"
	set y2tics
	set y2range [0:*]
	set xlabel "seconds"
	plot "$CSV" using 1:15 with lines lw 2 title "received/s", \
	     "" using 1:13 with lines lw 2 axes x1y2 title "ring-buffer losses (total, right axis)"
	unset multiplot
EOF
echo "soak: $summary; $made_exec execs, $made_conn connections, shield hits $hits_audit audited $hits_enforce enforced," \
	"$recv_flow flow records, $hunts hunts, $reloads reloads"
echo "soak: csv $CSV, plot $PNG"
[ ${#fails[@]} -eq 0 ] || { echo "soak: FAIL: ${fails[0]}${fails[1]:+ (and $((${#fails[@]} - 1)) more: ${fails[*]:1})}"; exit 1; }
echo "soak: ok: no growth past the middle of the run, every event accounted for"
