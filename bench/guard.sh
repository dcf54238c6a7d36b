#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What the tamper guard costs the syscalls it watches (issue 6), as ratios
# against the same loop measured in the same run without the guard:
# create+unlink of a file, kill(self, 0), and a bpf() map lookup, each N
# times (bench/guard_syscalls.c). On this host the guard loads its
# recording variant (tracepoints on unlinkat, kill, tgkill, bpf: no BPF LSM);
# with BPF LSM the hooks are inode_unlink, task_kill and bpf instead.
# The guard is loaded in a scratch bpffs root and removed afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
KS=$(realpath "${KSHIELD:-build/kshield}")
N=${N:-200000}
root=/sys/fs/bpf/ks-bench-guard-$$
tmp=$(mktemp -d)
cleanup() { KSHIELD_BPFFS=$root "$KS" guard off --token "$tmp/tok" >/dev/null 2>&1 || true; rm -rf "$root" "$tmp"; }
trap cleanup EXIT
gcc -O2 bench/guard_syscalls.c -o $tmp/loop

run() {	# run LABEL: hyperfine the three loops, CSV in $tmp/LABEL.csv
	hyperfine -N --warmup 2 --runs ${RUNS:-10} --export-csv "$tmp/$1.csv" \
		"$tmp/loop unlink $N" "$tmp/loop kill $N" "$tmp/loop bpf $N" >/dev/null
}

run base
# turning it off again takes a token signed by a key it recorded at load
mkdir "$tmp/keys" && "$KS" shield keygen "$tmp/k" >/dev/null && cp "$tmp/k.pub" "$tmp/keys/"
"$KS" guard token --key "$tmp/k.key" --out "$tmp/tok" guard-off
KSHIELD_BPFFS=$root "$KS" guard load --keys "$tmp/keys" >/dev/null
variant=$(KSHIELD_BPFFS=$root "$KS" -j guard status | sed -n 's/.*"variant":"\([a-z]*\)".*/\1/p')
run guard
KSHIELD_BPFFS=$root "$KS" guard off --token "$tmp/tok" >/dev/null
KSHIELD_BPFFS=$root "$KS" guard unload >/dev/null

echo "guard variant: $variant, N=$N per loop"
paste -d, "$tmp/base.csv" "$tmp/guard.csv" | awk -F, -v n=$N 'NR > 1 {
	split($1, w, " "); b = $2 * 1e9 / n; g = $(NF/2 + 2) * 1e9 / n
	printf "%-7s base %7.1f ns/op, guarded %7.1f ns/op, ratio guarded / base: %.2f\n", w[2], b, g, g / b
}'
