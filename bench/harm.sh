#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Do no harm (issue 24): what syscalls no shield cares about cost with
# kshield loaded, as ratios against nothing loaded, measured in the same
# round, modes alternating:
#   none        nothing of kshield attached (checked: bpftool link show),
#   floor       empty programs on raw_tp/sys_enter and raw_tp/sys_exit
#               (bench/noop_syscall.bpf.c): what the kernel charges for
#               any syscall hook, the least a tp-only kernel can cost,
#   floor1      the empty sys_enter program alone (what a kshield with no
#               program on sys_exit would pay),
#   s11         the bundled shields loaded (`kshield shield load`),
#   s55, s110   the same plus 4 and 9 renamed copies of each (the cost of
#               an unrelated syscall must not grow with the shield count;
#               where a limit stops a set, the largest set that loaded is
#               measured and the limit named),
#   agent       the agent as `make run` starts it (monitor, flows, guard,
#               every bundled shield),
# and the workloads: getppid, read+write of /dev/zero -> /dev/null at 512 B
# and 4 KiB, stat, and `find /usr -xdev` (bench/syscall_loop.c; find by
# wall time). Per mode and workload: the least of RUNS runs and, over
# ROUNDS rounds, the median ratio and the range; then the agent's ratios
# to floor1 and floor, round by round (issue 38: at most 1.05x floor1).
# Per round it also reads the kernel's own run time of the program on
# sys_enter (BPF statistics, run_time_ns / run_cnt during RT_N getppid
# calls): the empty program's in floor1 and floor, the dispatcher's in
# the other modes; less noisy than wall time on a shared machine. The
# dispatcher's excess over the empty program is its own body: for a
# syscall nobody hooks, one bit (docs/syscall-dispatch.md).
# Knobs: ROUNDS (3), N (syscalls per run, 200000), RT_N (200000), MODES,
# WORK.
set -uo pipefail
cd "$(dirname "$0")/.."
KS=$(readlink -f "${KSHIELD:-build/kshield}")
LOOP=build/bench/syscall_loop
SHIELDS=${SHIELDS_DIR:-build/shields}
export KSHIELD_BPFFS=/sys/fs/bpf/ks-bench-harm-$$
ROUNDS=${ROUNDS:-3}
N=${N:-200000}
MODES=${MODES:-"floor1 floor s11 s55 s110 agent"}
RT_N=${RT_N:-200000}
WORK=${WORK:-"getppid rw512 rw4k stat find"}
DIR=$(mktemp -d /var/tmp/ks-bench-harm.XXXXXX)
AGENT=

[ -x "$LOOP" ] || { echo "harm: $LOOP missing: run make bench (or make $LOOP)"; exit 1; }
[ -x build/bench/bpf_runtime ] || { echo "harm: build/bench/bpf_runtime missing: run make bench"; exit 1; }
if [[ " $MODES " == *" agent "* ]] && { [[ " $MODES " != *" floor1 "* ]] || [[ " $MODES " != *" floor "* ]]; }; then
	echo "harm: MODES has agent without floor1 and floor: the agent's ratios to the floor need both (MODES=\"floor1 floor agent\")"
	exit 1
fi
[[ " ${MODES} " != *" floor"* ]] || { [ -x build/bench/rawtp_attach ] && [ -f build/bench/noop_syscall.bpf.o ]; } ||
	{ echo "harm: build/bench/rawtp_attach or noop_syscall.bpf.o missing: run make bench"; exit 1; }
cleanup() {
	[ -n "$AGENT" ] && kill -TERM "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	unload_all
	rm -rf "$KSHIELD_BPFFS" "$DIR"
}
trap cleanup EXIT

# Copies of every shield under other names of the same length (the name
# is in the metadata and in the object's read-only data): k<NN><rest>.
make_copies() {
	local n=$1 i f name new
	mkdir -p "$DIR/copies"
	for i in $(seq 1 "$n"); do
		for f in "$SHIELDS"/*.bpf.o; do
			name=$(basename "$f" .bpf.o)
			new=$(printf 'k%02d%s' "$i" "${name:3}")
			[ -f "$DIR/copies/$new.bpf.o" ] && continue
			LC_ALL=C perl -pe "s/\Q$name\E/$new/g" "$f" > "$DIR/copies/$new.bpf.o"
		done
	done
}

attached() { bpftool link show 2>/dev/null | grep -c . ; }
unload_all() {
	[ -d "$KSHIELD_BPFFS/shields" ] || return 0
	for d in "$KSHIELD_BPFFS"/shields/*/; do
		[ -d "$d" ] && "$KS" shield unload "$(basename "$d")" >/dev/null 2>&1
	done
	rm -rf "$KSHIELD_BPFFS"
	sleep 1	# deferred frees land before the next baseline
}
LOADED=0
load_set() {	# load_set COPIES: the bundled shields and COPIES copies of each
	local f
	LOADED=0
	for f in "$SHIELDS"/*.bpf.o; do
		"$KS" shield load "$f" >/dev/null 2>>"$DIR/load.err" && LOADED=$((LOADED + 1))
	done
	for i in $(seq 1 "$1"); do
		for f in "$DIR"/copies/k$(printf %02d "$i")*.bpf.o; do
			"$KS" shield load "$f" >/dev/null 2>>"$DIR/load.err" && LOADED=$((LOADED + 1))
		done
	done
}
agent_start() {
	rm -rf "$KSHIELD_BPFFS"
	"$KS" agent --config packaging/kshield.conf --shields-dir "$SHIELDS" \
		--store "$DIR/events.db" > "$DIR/agent.log" 2>&1 &
	AGENT=$!
	local want; want=$(ls "$SHIELDS"/*.bpf.o | wc -l)
	for _ in $(seq 600); do
		grep -q "storing events" "$DIR/agent.log" &&
			[ "$(grep -c '^kshield agent: shield ' "$DIR/agent.log")" -ge "$want" ] && { sleep 0.5; return 0; }
		sleep 0.1
	done
	echo "harm: the agent did not start:"; cat "$DIR/agent.log"; exit 1
}
agent_stop() { kill -TERM "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=; rm -rf "$KSHIELD_BPFFS"; sleep 1; }

run_work() {	# run_work WORK: ns per call (find: ms)
	case $1 in
	find)	local t0 t1; t0=$(date +%s%N); find /usr -xdev > /dev/null 2>&1; t1=$(date +%s%N)
		echo $(( (t1 - t0) / 1000000 )) ;;
	*)	"$LOOP" "$1" "$N" 3 ;;
	esac
}

floor_on() {	# floor_on 1|2: the empty sys_enter program, and sys_exit's with 2
	local d="$KSHIELD_BPFFS/floor"
	mkdir -p "$d" && bpftool prog loadall build/bench/noop_syscall.bpf.o "$d" &&
		build/bench/rawtp_attach "$d/noop_enter" sys_enter "$d/link_enter" &&
		{ [ "$1" = 1 ] || build/bench/rawtp_attach "$d/noop_exit" sys_exit "$d/link_exit"; } ||
		{ echo "harm: the empty sys_enter/sys_exit programs did not attach"; exit 1; }
}
# The kernel's run time of kshield's programs on sys_enter in mode $1
# during RT_N getppid calls, in ns per call: the empty program's (floor
# modes), else the dispatcher's, every segment's program attached summed
# (ks_sys_enter, ks_sys_enter_1, ...: a chain past 32 programs anywhere
# puts one more on every syscall). Empty when the mode has none.
rt_getppid() {
	local pins out
	case $1 in
	floor*)	pins=("$KSHIELD_BPFFS/floor/link_enter") ;;
	none)	return 0 ;;
	*)	mapfile -t pins < <(ls "$KSHIELD_BPFFS"/dispatch/link_ks_sys_enter* 2>/dev/null) ;;
	esac
	[ "${#pins[@]}" -gt 0 ] && [ -e "${pins[0]}" ] || return 0
	out=$(build/bench/bpf_runtime "${pins[@]}" -- "$LOOP" getppid "$RT_N" 1 2>&1 >/dev/null) ||
		{ echo "harm: bpf_runtime failed in mode $1: $out" >&2; exit 1; }
	echo "$out" | awk 'NR == 1 {n = $2} {t += $3} END {if (n > 0) printf "%.1f\n", t / n; exit !(n > 0)}' ||
		{ echo "harm: the program on sys_enter did not run in mode $1 ($out)" >&2; exit 1; }
	[ "${#pins[@]}" -gt 1 ] && echo "round $r: $1: ${#pins[@]} dispatcher programs on sys_enter (chains past 32 programs)" >&2
	return 0
}
mode_on() {
	case $1 in
	none)	;;
	floor)	floor_on 2 ;;
	floor1)	floor_on 1 ;;
	s11)	load_set 0 ;;
	s55)	load_set 4 ;;
	s110)	load_set 9 ;;
	agent)	agent_start ;;
	esac
}
mode_off() {
	[ "$1" = agent ] && agent_stop
	[[ "$1" == floor* ]] && { rm -rf "$KSHIELD_BPFFS"; sleep 1; }
	[ "$1" != none ] && unload_all
	return 0
}

echo "harm: make copies (9 of each shield)"
make_copies 9
base_links=$(attached)
[ "$base_links" -eq 0 ] || echo "harm: warning: $base_links BPF links attached before the run (bpftool link show): the baseline is not clean"
declare -A R RT
for r in $(seq 1 "$ROUNDS"); do
	for m in none $MODES; do
		mode_on "$m"
		[ "$m" = none ] && [ "$(attached)" -ne "$base_links" ] && { echo "harm: links attached in mode none"; exit 1; }
		[[ "$m" == floor* ]] && echo "round $r: $m: empty programs on sys_enter$([ "$m" = floor ] && echo " and sys_exit")"
		[ "$m" != none ] && [ "$m" != agent ] && [[ "$m" != floor* ]] && echo "round $r: $m: $LOADED shields loaded, $(attached) links, $("$KS" status 2>/dev/null | grep "^syscalls:")"
		for w in $WORK; do
			v=$(run_work "$w")
			[ -n "$v" ] && [ "$v" != 0 ] || { echo "harm: $w did not run in mode $m"; exit 1; }
			R[$r,$m,$w]=$v
		done
		RT[$r,$m]=$(rt_getppid "$m") || exit 1
		mode_off "$m"
	done
done
[ -s "$DIR/load.err" ] && { echo "harm: loads refused (the largest set that loads is measured):"; sort "$DIR/load.err" | uniq -c | sed 's/^/  /' | head -5; }

# What a write() to /dev/null runs, with the agent's default configuration:
# every program kshield attached or put into the syscall dispatcher, its
# runs and run time during 100000 read+write pairs (kernel BPF statistics).
if [[ " $MODES " == *" agent "* ]] && [ -x build/bench/bpf_runtime ]; then
	agent_start
	mapfile -t pins < <(find "$KSHIELD_BPFFS" \( -name 'link_*' -o -name 'prog_*' \) | sort)
	echo; echo "per hook during 100000 read+write pairs of 4 KiB (/dev/zero -> /dev/null), default configuration:"
	"$(pwd)/build/bench/bpf_runtime" "${pins[@]}" -- "$LOOP" rw4k 100000 1 >/dev/null 2>"$DIR/rt" ||
		echo "  bpf_runtime failed: $(cat "$DIR/rt")"
	paste <(printf '%s\n' "${pins[@]}" | sed "s|$KSHIELD_BPFFS/||") "$DIR/rt" |
		awk '$3 > 0 {printf "  %-56s %9d runs %7.0f ns/run\n", $1, $3, $4 / $3; n++}
		     END {if (!n) print "  no program ran"}'
	echo "  ($(echo "${pins[@]}" | wc -w) programs attached or dispatched; those that did not run are not listed;"
	echo "   a dispatcher's time includes the chain it ran: the kernel counts a tail-called program in its caller)"
	agent_stop
fi

printf '\n%-8s' "workload"; for m in none $MODES; do printf ' %-24s' "$m"; done; echo
for w in $WORK; do
	printf '%-8s' "$w"
	for m in none $MODES; do
		if [ "$m" = none ]; then
			vals=$(for r in $(seq 1 "$ROUNDS"); do echo "${R[$r,none,$w]}"; done | sort -g | tr '\n' ' ')
			printf ' %-24s' "$(echo $vals | awk '{print $1 "-" $NF}')$( [ "$w" = find ] && echo ms || echo ns)"
			continue
		fi
		ratios=$(for r in $(seq 1 "$ROUNDS"); do awk -v a="${R[$r,$m,$w]}" -v b="${R[$r,none,$w]}" 'BEGIN {printf "%.2f\n", a / b}'; done | sort -g)
		med=$(echo "$ratios" | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}')
		printf ' %-24s' "${med}x ($(echo "$ratios" | head -1)-$(echo "$ratios" | tail -1))"
	done
	echo
done

# med_range: "median (least-most)" of the numbers on stdin, with unit $1.
med_range() {
	sort -g | awk -v u="$1" '{a[NR] = $1} END {
		if (!NR) exit 1
		m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		printf "%.2f%s (%.2f-%.2f)", m, u, a[1], a[NR]}'
}
ratios() {	# ratios MODE BASE WORK: MODE over BASE, round by round
	for r in $(seq 1 "$ROUNDS"); do
		awk -v a="${R[$r,$1,$3]:-}" -v b="${R[$r,$2,$3]:-}" 'BEGIN {if (a > 0 && b > 0) printf "%.3f\n", a / b}'
	done
}
if [[ " $MODES " == *" agent "* ]]; then
	echo; echo "the agent against the kernel's floor, same rounds (median (range) of the per-round ratios):"
	printf '%-8s %-24s %-24s\n' workload "agent / floor1" "agent / floor"
	for w in $WORK; do
		a=$(ratios agent floor1 "$w" | med_range x) && b=$(ratios agent floor "$w" | med_range x) ||
			{ echo "harm: no ratio of the agent to floor1 or floor for $w"; exit 1; }
		[ "$(ratios agent floor1 "$w" | wc -l)" -eq "$ROUNDS" ] && [ "$(ratios agent floor "$w" | wc -l)" -eq "$ROUNDS" ] ||
			{ echo "harm: a round without the agent, floor1 or floor timing for $w"; exit 1; }
		printf '%-8s %-24s %-24s\n' "$w" "$a" "$b"
	done
fi
echo; echo "kshield's programs on sys_enter, kernel run time per getppid during $RT_N calls (median (range) over $ROUNDS rounds):"
for m in $MODES; do
	vals=$(for r in $(seq 1 "$ROUNDS"); do [ -n "${RT[$r,$m]:-}" ] && echo "${RT[$r,$m]}"; done)
	if [ -z "$vals" ]; then
		printf '  %-7s nothing on sys_enter\n' "$m"
		continue
	fi
	line=$(echo "$vals" | med_range " ns")
	if [[ "$m" != floor* ]] && [[ " $MODES " == *" floor1 "* ]]; then
		d=$(for r in $(seq 1 "$ROUNDS"); do
			awk -v a="${RT[$r,$m]:-}" -v b="${RT[$r,floor1]:-}" 'BEGIN {if (a != "" && b != "") printf "%.1f\n", a - b}'
		done | med_range " ns") && line="$line; over floor1's empty program: $d"
	fi
	printf '  %-7s %s %s\n' "$m" "$([[ "$m" == floor* ]] && echo "noop_enter  " || echo "ks_sys_enter")" "$line"
done
if [[ " $MODES " == *" agent "* ]] && [ -z "${RT[1,agent]:-}" ]; then
	echo "harm: the agent put no dispatcher on sys_enter here: nothing to compare with the empty program"
fi
echo "($(uname -r), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), 32-bit syscalls run: $("$LOOP" int80))"
