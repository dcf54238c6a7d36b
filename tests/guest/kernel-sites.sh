#!/bin/sh
# SPDX-License-Identifier: MIT
# kernel-sites.sh - shields on an inlined kernel function, in a guest whose
# kernel has kprobes (matrix check "ksites", `make matrix-dbg`). Sourced by
# matrix/init. Needs kshield, /bin/ksites-drv (tests/guest/ksites-drv.c),
# /fixtures/kernel-sites.bpf.o, the sites manifest made on the host in
# /etc/kshield/sites/<build-id>.json and one of another build in
# /etc/kshield/sites-other/, all signed by the key in /etc/kshield/keys
# (required here: KSHIELD_SITES_KEYS); a forged copy (one offset moved,
# signature kept) in sites-forged/ and an unsigned one in sites-unsigned/.
#
# Prints "KSHIELD-SITES <step> <kshield's JSON>" lines; matrix/rows.jq turns
# them into the row of check "ksites" and its verdict:
#   debuginfo          kshield debuginfo kernel (build ID, kprobes, manifest)
#   list               every copy of do_sys_open, from the manifest
#   trace-KIND         hits per copy while ksites-drv KIND runs (its pid only)
#   symbol-KIND        hits of one kprobe on the do_sys_open symbol, same run
#   load               the fixture shield loaded (one kprobe per copy)
#   kill-KIND          {"status": N}: ksites-drv KIND /tmp/ksites-kill (137: killed)
#   ok-KIND            {"status": N}: the same on another file (0: untouched)
#   kprobes            {"listed", "optimized", "site_pins"}: /sys/kernel/debug/kprobes/list
#                      and the shield's link_<prog>__site<N> pins
#   stats              kshield shield list (kills counted)
#   bench              {"bare": [ns...], "kprobe": [ns...]} per open+close
#   mismatch           sites list with only another build's manifest (must fail)
#   mismatch-load      the shield loaded with it (must fail)
#   forged-load        the shield loaded with the forged manifest (must fail: bad signature)
#   unsigned-load      the shield loaded with the unsigned manifest (must fail: unsigned)
# arm64 has openat only (open, creat and the compat paths need AArch32).
case $(uname -m) in
x86_64) KINDS="open openat creat open32 openat32 creat32" ;;
*) KINDS="openat" ;;
esac
FN=do_sys_open

# json STEP CMD...: CMD's JSON (stdout, or its error line on stderr).
json() {
	step=$1; shift
	out=$("$@" 2>/tmp/ksites.err)
	[ -n "$out" ] || out=$(grep '^{' /tmp/ksites.err | tail -1)
	echo "KSHIELD-SITES $step ${out:-null}"
}

export KSHIELD_SITES_KEYS=/etc/kshield/keys
export KSHIELD_SITES_DIR=/etc/kshield/sites
json debuginfo kshield -j debuginfo kernel
json list kshield -j sites list kernel:$FN
for k in $KINDS; do
	json trace-$k kshield -j sites trace kernel:$FN -- ksites-drv $k /tmp/ksites-t-$k
	json symbol-$k kshield -j sites trace kernel:$FN --symbol -- ksites-drv $k /tmp/ksites-s-$k
done

# Bench (TCG, so ratios only): ns per open+close of one file, 3 runs bare
# (one before the shield, two after) and 3 with the fixture shield's kprobe
# at every copy; the host compares the fastest of each (the least disturbed
# by a shared machine).
ns() { ksites-drv openat /tmp/ksites-bench 20000 | sed 's/.*"ns_per_call": \([0-9]*\).*/\1/'; }
bare=$(ns)
json load kshield -j shield load /fixtures/kernel-sites.bpf.o
probed="$(ns), $(ns), $(ns)"
# The kernel's own view: our kprobes, and how many it optimised into jumps.
# (grep -c prints 0 and fails when nothing matches: arm64 has no optprobes)
l=/sys/kernel/debug/kprobes/list
listed=$(grep -c . $l 2>/dev/null)
opt=$(grep -c OPTIMIZED $l 2>/dev/null)
pins=$(ls /sys/fs/bpf/kshield/shields/kernel-sites-fixture 2>/dev/null | grep -c '__site')
echo "KSHIELD-SITES kprobes {\"listed\": ${listed:-0}, \"optimized\": ${opt:-0}, \"site_pins\": ${pins:-0}}"
for k in $KINDS; do
	ksites-drv $k /tmp/ksites-kill >/dev/null 2>&1
	echo "KSHIELD-SITES kill-$k {\"status\": $?}"
	ksites-drv $k /tmp/ksites-ok-$k >/dev/null 2>&1
	echo "KSHIELD-SITES ok-$k {\"status\": $?}"
done
json stats kshield -j shield list
kshield shield unload kernel-sites-fixture 2>/dev/null
echo "KSHIELD-SITES bench {\"bare\": [$bare, $(ns), $(ns)], \"kprobe\": [$probed]}"

export KSHIELD_SITES_DIR=/etc/kshield/sites-other
json mismatch kshield -j sites list kernel:$FN
json mismatch-load kshield -j shield load /fixtures/kernel-sites.bpf.o
kshield shield unload kernel-sites-fixture 2>/dev/null
for d in forged unsigned; do
	export KSHIELD_SITES_DIR=/etc/kshield/sites-$d
	json $d-load kshield -j shield load /fixtures/kernel-sites.bpf.o
	kshield shield unload kernel-sites-fixture 2>/dev/null
done
unset KSHIELD_SITES_DIR KSHIELD_SITES_KEYS
