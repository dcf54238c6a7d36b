#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `kshield probe` cost (issue 2: it runs in every kernel-matrix guest), as
# ratios against baselines measured in the same run:
#  - `bpftool feature probe kernel`: the usual way to ask a kernel what BPF
#    it supports (loads a tiny program per type and a probe per helper, but
#    attaches nothing);
#  - `kshield probe ringbuf`: process start, kernel facts and one map, the
#    floor under the full probe.
set -euo pipefail
cd "$(dirname "$0")/.."
KS=${KSHIELD:-build/kshield}
csv=$(mktemp)
trap 'rm -f $csv' EXIT

hyperfine -N --warmup 2 --runs ${RUNS:-20} --export-csv "$csv" \
	"$KS probe -j" \
	"bpftool feature probe kernel" \
	"$KS probe ringbuf -j" >/dev/null

awk -F, 'NR > 1 { gsub(/"/, "", $1); mean[NR-1] = $2 * 1000; name[NR-1] = $1 }
END {
	for (i = 1; i <= 3; i++) printf "%-34s mean %7.1f ms\n", name[i], mean[i]
	printf "ratio kshield probe / bpftool feature probe: %.2f\n", mean[1] / mean[2]
	printf "ratio kshield probe / floor (probe ringbuf):  %.2f\n", mean[1] / mean[3]
}' "$csv"
