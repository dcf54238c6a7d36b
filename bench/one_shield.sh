#!/bin/sh
# SPDX-License-Identifier: MIT
# one_shield.sh - what one shield costs, as ratios against nothing loaded
# in the same round, modes alternating (issue 24: a shield must cost
# nothing to a syscall it does not care about, and little to one it does):
#   bench/one_shield.sh OBJECT [ROUNDS]
# Workloads (bench/syscall_loop.c, least of 3 runs each): getppid,
# read+write of /dev/zero -> /dev/null at 512 B (rw512), 512 B written into
# a pipe and read back (pipe512), 512 B blocks through a pipe to a reader
# process (pipexfer: `dd bs=512 | cat`). Prints one line per round and
# workload, then "median WORK RATIO (min-max)". POSIX sh: it runs in the
# matrix guests' busybox too. The environment reaches the loader
# (KSHIELD_FIT_RELEASE loads a shield outside its kernel window, to
# measure what it costs where it does load).
# Knobs: KSHIELD (kshield binary), LOOP (syscall_loop), N (200000), WORK,
# BASE (objects loaded in both modes: the shield's cost on top of them,
# e.g. another tp shield that already attaches the syscall dispatcher).
set -u
OBJ=${1:?usage: one_shield.sh OBJECT [ROUNDS]}
ROUNDS=${2:-3}
KS=${KSHIELD:-build/kshield}
LOOP=${LOOP:-build/bench/syscall_loop}
N=${N:-200000}
WORK=${WORK:-"getppid rw512 pipe512 pipexfer"}
NAME=$("$KS" shield info "$OBJ" | sed -n 's/^name  *//p')
RES=$(mktemp /tmp/ks-one-shield.XXXXXX)

[ -n "$NAME" ] || { echo "one_shield: can't read the name of $OBJ" >&2; exit 1; }
for b in ${BASE:-}; do
	"$KS" shield load "$b" >/dev/null || { echo "one_shield: base $b does not load" >&2; exit 1; }
done
"$LOOP" getppid 10 1 >/dev/null || { echo "one_shield: $LOOP does not run" >&2; exit 1; }
"$KS" shield unload "$NAME" >/dev/null 2>&1
if ! "$KS" shield load "$OBJ" >/dev/null; then
	echo "one_shield: $NAME does not load here (set KSHIELD_FIT_RELEASE to load it outside its window)" >&2
	exit 1
fi
echo "variant $("$KS" shield list | awk -v n="$NAME" '$1 == n {print $3}')"
"$KS" shield unload "$NAME" >/dev/null
for r in $(seq 1 "$ROUNDS"); do
	for w in $WORK; do
		base=$("$LOOP" "$w" "$N" 3) || { echo "one_shield: $w failed" >&2; exit 1; }
		"$KS" shield load "$OBJ" >/dev/null || exit 1
		with=$("$LOOP" "$w" "$N" 3) || { echo "one_shield: $w failed with $NAME" >&2; exit 1; }
		"$KS" shield unload "$NAME" >/dev/null
		ratio=$(awk -v a="$with" -v b="$base" 'BEGIN {printf "%.3f", a / b}')
		echo "round $r $w none ${base}ns $NAME ${with}ns ${ratio}x"
		echo "$w $ratio" >>"$RES"
	done
done
for w in $WORK; do
	grep "^$w " "$RES" | awk '{print $2}' | sort -n |
		awk -v w="$w" '{v[NR] = $1} END {printf "median %s %.3fx (%.3f-%.3f)\n", w, v[int((NR + 1) / 2)], v[1], v[NR]}'
done
rm -f "$RES"
for b in ${BASE:-}; do
	"$KS" shield unload "$("$KS" shield info "$b" | sed -n 's/^name  *//p')" >/dev/null
done
