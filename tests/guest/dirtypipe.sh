#!/bin/sh
# SPDX-License-Identifier: MIT
# dirtypipe.sh - matrix check `dpprobe`, sourced by matrix/init: what no
# Debian kernel lets the shield tests show for cve-2022-0847, whose bug is
# fixed in every kernel served (its own check never fires there).
# 1. The state reads: the two probes (matrix/fixtures/dirtypipe-probe-*:
#    the shield's source with its last test turned to a state a fixed
#    kernel has) each go through `kshield test`; a probe refused with a hit,
#    benign untouched, is one KSHIELD-CHECK dpprobe line (a shield test's
#    JSON). Loaded outside the shield's kernel window (KSHIELD_FIT_RELEASE).
# 2. The cost where it loads: bench/one_shield.sh on the shield itself
#    (KSHIELD_FIT_RELEASE again), ratios against nothing loaded, as
#    KSHIELD-LOG dpcost lines.
for n in anon file; do
	KSHIELD_FIT_RELEASE=5.10 kshield test "dirtypipe-probe-$n" --dir /shields \
		--object "/fixtures/dirtypipe-probe-$n.bpf.o" -j 2>/tmp/err | tag "KSHIELD-CHECK dpprobe"
	tag "KSHIELD-LOG dpprobe:" </tmp/err
done
KSHIELD_FIT_RELEASE=5.10 KSHIELD=kshield LOOP=syscall_loop N=${DP_COST_N:-20000} \
	sh /tests/one_shield.sh /shields/cve-2022-0847.bpf.o "${DP_COST_ROUNDS:-3}" 2>&1 |
	tag "KSHIELD-LOG dpcost:"
