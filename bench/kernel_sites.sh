#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Kernel shields on inlined functions (issue 9), in a QEMU TCG guest (this
# host has no kprobes): open+close of one file, 20000 times, bare vs with
# the fixture shield's kprobe at each of do_sys_open's copies (the 64-bit
# open reaches the one inlined in __x64_sys_open), 3 runs each in the same
# boot, printed as the ratio of the fastest runs. TCG inflates both sides (a kprobe is an int3 trap emulated by QEMU):
# read the ratio, never the nanoseconds, and not as a hardware figure.
# Runs `matrix/dbg.sh` (downloads the -dbg package on first use, ~280 MB).
#   bench/kernel_sites.sh [ROW-REGEX]    default: 6.1.0-47-cloud
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/kshield-bench-ksites}
matrix/dbg.sh --only "${1:-6.1.0-47-cloud}" --out "$out" >"$out.log" 2>&1 || true
jq -r '.[] | select(.check == "ksites") |
	if .bench_ns.bare == null then "\(.kernel): no bench figures (\(.error // "see the log"))"
	else (.bench_ns.bare | min) as $b | (.bench_ns.kprobe | min) as $k |
	"\(.kernel) (QEMU TCG): open+close, fastest of 3 runs of 20000: bare \($b) ns " +
	"(runs \(.bench_ns.bare | join(", "))), with a kprobe at every copy of do_sys_open \($k) ns " +
	"(runs \(.bench_ns.kprobe | join(", "))): x\($k / $b * 100 | round / 100)" +
	" (\(.kprobes_optimized) of \(.kprobes_listed) kprobes optimised into jumps)"
	end' "$out/results.json"
