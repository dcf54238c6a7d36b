#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Shields on inlined functions (issue 9): what probing every copy costs, as
# ratios against baselines measured in the same run, and what probing the
# symbol alone misses.
#  - per call: the inline fixture making N calls of ks_check through its
#    inlined copy in path_d, untraced vs under `kshield sites trace` (all
#    five copies probed); the trace's fixed cost (DWARF resolution, BPF
#    load, attach) is measured with 0 calls and subtracted;
#  - resolution: `kshield sites list` on the fixture vs `eu-readelf` merely
#    dumping the same DWARF (the floor for reading it at all);
#  - the trap floor: one int3 delivered as SIGTRAP (bench/trap_cost.c), the
#    mechanism under every uprobe hit; on a guest where traps are slow, the
#    per-call cost is mostly this;
#  - coverage: bpftrace on the symbol ks_check vs kshield on every copy.
set -euo pipefail
cd "$(dirname "$0")/.."
KS=$(realpath "${KSHIELD:-build/kshield}")
N=${N:-20000}
tmp=$(mktemp -d)
trap 'rm -rf $tmp' EXIT
src=tests/fixtures/inline
gcc -O2 -g -I$src $src/target.c $src/paths.c -o $tmp/t
gcc -O2 bench/trap_cost.c -o $tmp/trap

hyperfine -N --warmup 2 --runs ${RUNS:-10} --export-csv "$tmp/calls.csv" \
	"$tmp/t d$N" \
	"$KS sites trace $tmp/t:ks_check -- $tmp/t d$N" \
	"$KS sites trace $tmp/t:ks_check -- $tmp/t d0" \
	"$KS sites list $tmp/t:ks_check" \
	"eu-readelf --debug-dump=info $tmp/t" >/dev/null

awk -F, -v n=$N 'NR > 1 { gsub(/"/, "", $1); m[NR-1] = $2 * 1000; name[NR-1] = $1 }
END {
	for (i = 1; i <= 5; i++) printf "%-60.60s mean %8.2f ms\n", name[i], m[i]
	base = m[1] / n * 1e6; traced = (m[2] - m[3]) / n * 1e6
	printf "per call: untraced %.1f ns, probed %.1f ns; ratio probed / untraced: %.1f\n", base, traced, traced / base
	printf "ratio trace fixed cost (0 calls) / untraced run of %d calls: %.2f\n", n, m[3] / m[1]
	printf "ratio sites list / eu-readelf DWARF dump: %.2f\n", m[4] / m[5]
}' "$tmp/calls.csv" > $tmp/out
cat $tmp/out
trap_ns=$($tmp/trap $N)
awk -v t=$trap_ns '/^per call/ { printf "int3 trap floor %.1f ns; ratio probed call / bare trap: %.2f\n", t, $7 / t }' $tmp/out

hits=$($KS -j sites trace $tmp/t:ks_check -- $tmp/t d1000 a b c ptr 2>/dev/null |
	python3 -c 'import json,sys; print(sum(s["hits"] for s in json.load(sys.stdin)["sites"]))')
if command -v bpftrace >/dev/null; then
	sym=$(bpftrace -e "uprobe:$tmp/t:ks_check { @n = count(); }" -c "$tmp/t d1000 a b c ptr" 2>/dev/null |
		awk '/@n:/ { print $2 }')
	echo "calls 1004: kshield saw $hits, bpftrace on the symbol saw ${sym:-0}"
else
	echo "calls 1004: kshield saw $hits (bpftrace not installed: no symbol-only comparison)"
fi
