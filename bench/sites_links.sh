#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Shields on functions with many inlined copies: what one link per copy
# costs. A generated target has ks_many() inlined into N callers (N = 5, 64,
# 300 by default); for each N, the many-sites fixture shield is loaded and
# unloaded (a uprobe link per copy, pinned) and `sites trace` attaches,
# runs one call and detaches, 3 times each. Prints the fastest of 3 as a
# ratio to N = 5 measured in the same run (never absolute times as a
# figure to keep: the host is shared).
#   bench/sites_links.sh [N...]          needs `make` and the test fixtures
set -euo pipefail
cd "$(dirname "$0")/.."
ks=$PWD/build/kshield
obj=$PWD/build/tests/fixtures/many-sites.bpf.o
[ -x "$ks" ] && [ -f "$obj" ] || { echo "bench: run make and make build/tests/fixtures/many-sites.bpf.o first" >&2; exit 2; }
dir=/tmp/kshield-many-sites		# the fixture shield's target path
root=/sys/fs/bpf/ks-bench-sites-$$
export KSHIELD_BPFFS=$root
trap 'rm -rf "$dir" "$root"' EXIT
ns=("$@")
[ $# -gt 0 ] || ns=(5 64 300)

gen() {	# gen N: dir/t with ks_many() inlined into caller_0..caller_N-1
	{
		printf '#include <stdio.h>\n#include <stdlib.h>\n'
		printf 'static inline __attribute__((always_inline)) int ks_many(int code, int n)\n'
		printf '{ if (code == 2) printf("copy %%d\\n", n); return code * 7 + n; }\n'
		for ((i = 0; i < $1; i++)); do
			printf '__attribute__((noinline)) int caller_%d(int c) { return ks_many(c, %d) ^ %d; }\n' $i $i $((i * 13))
		done
		printf 'static int (*const callers[])(int) = {\n'
		for ((i = 0; i < $1; i++)); do printf 'caller_%d,\n' $i; done
		printf '};\nint main(int argc, char **argv)\n{ int i = argc > 1 ? atoi(argv[1]) : 0;\n'
		printf '  printf("%%d\\n", callers[i %% %d](argc > 2 ? atoi(argv[2]) : 0)); return 0; }\n' $1
	} >"$dir/many.c"
	gcc -O2 -g "$dir/many.c" -o "$dir/t"
}

ms() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N); echo $(((t1 - t0) / 1000000)); }
min3() { printf '%s\n' "$@" | sort -n | head -1; }

declare -A load unload trace
for n in "${ns[@]}"; do
	rm -rf "$dir" && mkdir -p "$dir" "$root" && gen "$n"
	copies=$("$ks" -j sites list "$dir/t:ks_many" | jq '.sites | length')
	[ "$copies" = "$n" ] || { echo "bench: $n callers gave $copies copies" >&2; exit 1; }
	l=() u=() t=()
	for r in 1 2 3; do
		l+=("$(ms "$ks" shield load "$obj")")
		pins=$(ls "$root/shields/many-sites-fixture" | grep -c '__site')
		[ "$pins" = "$n" ] || { echo "bench: $pins pins for $n copies" >&2; exit 1; }
		u+=("$(ms "$ks" shield unload many-sites-fixture)")
		t+=("$(ms "$ks" sites trace "$dir/t:ks_many" -- "$dir/t" 0 1)")
	done
	load[$n]=$(min3 "${l[@]}") unload[$n]=$(min3 "${u[@]}") trace[$n]=$(min3 "${t[@]}")
	echo "N=$n copies: load ${l[*]} ms, unload ${u[*]} ms, trace (attach+run+detach) ${t[*]} ms"
done
b=${ns[0]}
for n in "${ns[@]}"; do
	awk -v n="$n" -v b="$b" -v l="${load[$n]}" -v lb="${load[$b]}" -v u="${unload[$n]}" \
		-v ub="${unload[$b]}" -v t="${trace[$n]}" -v tb="${trace[$b]}" 'BEGIN {
		printf "N=%s vs N=%s (fastest of 3): load x%.2f, unload x%.2f, sites trace x%.2f\n",
			n, b, l / (lb ? lb : 1), u / (ub ? ub : 1), t / (tb ? tb : 1) }'
done
