#!/usr/bin/env bash
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
# ROUNDS rounds, the median ratio and the range.
# Knobs: ROUNDS (3), N (syscalls per run, 200000), MODES, WORK.
set -uo pipefail
cd "$(dirname "$0")/.."
KS=$(readlink -f "${KSHIELD:-build/kshield}")
LOOP=build/bench/syscall_loop
SHIELDS=${SHIELDS_DIR:-build/shields}
export KSHIELD_BPFFS=/sys/fs/bpf/ks-bench-harm
ROUNDS=${ROUNDS:-3}
N=${N:-200000}
MODES=${MODES:-"floor s11 s55 s110 agent"}
WORK=${WORK:-"getppid rw512 rw4k stat find"}
DIR=$(mktemp -d /var/tmp/ks-bench-harm.XXXXXX)
AGENT=

[ -x "$LOOP" ] || { echo "harm: $LOOP missing: run make bench (or make $LOOP)"; exit 1; }
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
declare -A R
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
