#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Shield benchmarks (issue 2), figures as ratios against baselines measured in
# the same run, because these machines are noisy:
#  1. load-to-enforcing latency of fixture-sockopt (tests/fixtures: the
#     cgroup/setsockopt shield cve-2021-22555 had until it dropped it) (median of 20 loads, as
#     reported by the loader: open -> attached and pinned), against
#     `bpftool prog loadall` of the same object (load + pin, no attach);
#  2. cost on the hooked call: a tight setsockopt loop with the shield
#     attached vs without, and with a no-op cgroup/setsockopt program (the
#     floor of the kernel's cgroup sockopt path) for comparison.
set -euo pipefail
cd "$(dirname "$0")/.."
KS=${KSHIELD:-build/kshield}
OBJ=build/tests/fixtures/sockopt-shield.bpf.o
export KSHIELD_BPFFS=/sys/fs/bpf/ks-bench-shield-$$
LOOP=build/bench/setsockopt_loop
N=${N:-1000000}
trap '$KS shield unload fixture-sockopt >/dev/null 2>&1 || true; rm -rf $KSHIELD_BPFFS /sys/fs/bpf/ks-bench-bpftool' EXIT

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "== load-to-enforcing latency (20 loads each)"
ks=$(for i in $(seq 20); do
	$KS -j shield load $OBJ | sed -E 's/.*"load_ms":([0-9.]+).*/\1/'
	$KS shield unload fixture-sockopt
done | median)
bt=$(for i in $(seq 20); do
	s=$(date +%s%N); bpftool prog loadall $OBJ /sys/fs/bpf/ks-bench-bpftool 2>/dev/null || true
	e=$(date +%s%N); rm -rf /sys/fs/bpf/ks-bench-bpftool; echo "scale=3; ($e-$s)/1000000" | bc
done | median)
printf 'kshield load (choose variant, attach, pin): median %.1f ms\n' "$ks"
printf 'bpftool prog loadall (load+pin, no attach):  median %.1f ms\n' "$bt"
printf 'ratio kshield/bpftool: %.2f\n' "$(echo "scale=4; $ks/$bt" | bc)"

echo "== setsockopt loop, $N calls: shield attached vs not"
csv=$(mktemp)
# One --prepare per command, in order: unload before each "without" run,
# (re)load before each "with" run.
NOOP=build/bench/noop_sockopt.bpf.o
CG=$(awk '$3=="cgroup2"{print $2; exit}' /proc/mounts)
# The no-op program is attached before each of its runs: detach it before
# every run (and at the end), or each run leaves one more attached.
NOOP_OFF="bpftool cgroup detach $CG setsockopt pinned /sys/fs/bpf/ks-bench-noop 2>/dev/null; rm -f /sys/fs/bpf/ks-bench-noop"
hyperfine -N --warmup 2 --runs 10 --export-csv "$csv" \
	--prepare "sh -c '$NOOP_OFF; $KS shield unload fixture-sockopt 2>/dev/null || true'" \
	--prepare "sh -c '$NOOP_OFF; $KS shield load $OBJ'" \
	--prepare "sh -c '$NOOP_OFF; $KS shield unload fixture-sockopt; bpftool prog load $NOOP /sys/fs/bpf/ks-bench-noop && bpftool cgroup attach $CG setsockopt pinned /sys/fs/bpf/ks-bench-noop multi'" \
	--command-name without --command-name with --command-name noop \
	"$LOOP $N" "$LOOP $N" "$LOOP $N" >/dev/null
sh -c "$NOOP_OFF" || true
without=$(awk -F, '$1=="without"{print $2}' "$csv")
with=$(awk -F, '$1=="with"{print $2}' "$csv")
noop=$(awk -F, '$1=="noop"{print $2}' "$csv")
rm -f "$csv"
printf 'without shield: %.1f ms, with shield: %.1f ms, ratio with/without: %.3f (%.0f ns per call added)\n' \
	"$(echo "$without*1000" | bc)" "$(echo "$with*1000" | bc)" \
	"$(echo "scale=4; $with/$without" | bc)" "$(echo "scale=2; ($with-$without)*1000000000/$N" | bc)"
printf 'no-op cgroup/setsockopt program: %.1f ms, ratio noop/without: %.3f; shield/noop: %.3f\n' \
	"$(echo "$noop*1000" | bc)" "$(echo "scale=4; $noop/$without" | bc)" "$(echo "scale=4; $with/$noop" | bc)"
