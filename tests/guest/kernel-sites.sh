#!/bin/sh
# kernel-sites.sh - shields on an inlined kernel function, in a guest whose
# kernel has kprobes (matrix check "ksites", `make matrix-dbg`). Sourced by
# matrix/init. Needs kshield, /bin/ksites-drv (tests/guest/ksites-drv.c),
# /fixtures/kernel-sites.bpf.o, the sites manifest made on the host in
# /etc/kshield/sites/<build-id>.json and one of another build in
# /etc/kshield/sites-other/.
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
#   bench-bare, bench-kprobe, bench-bare2
#                      ns per open+close: bare, with the shield, bare again
#   mismatch           sites list with only another build's manifest (must fail)
#   mismatch-load      the shield loaded with it (must fail)
KINDS="open openat creat open32 openat32 creat32"
FN=do_sys_open

# json STEP CMD...: CMD's JSON (stdout, or its error line on stderr).
json() {
	step=$1; shift
	out=$("$@" 2>/tmp/ksites.err)
	[ -n "$out" ] || out=$(grep '^{' /tmp/ksites.err | tail -1)
	echo "KSHIELD-SITES $step ${out:-null}"
}

export KSHIELD_SITES_DIR=/etc/kshield/sites
json debuginfo kshield -j debuginfo kernel
json list kshield -j sites list kernel:$FN
for k in $KINDS; do
	json trace-$k kshield -j sites trace kernel:$FN -- ksites-drv $k /tmp/ksites-t-$k
	json symbol-$k kshield -j sites trace kernel:$FN --symbol -- ksites-drv $k /tmp/ksites-s-$k
done

# Bench (TCG, so ratios only): open+close of one file, bare, then with the
# fixture shield's kprobe at every copy, then bare again.
echo "KSHIELD-SITES bench-bare $(ksites-drv open /tmp/ksites-bench 20000)"
json load kshield -j shield load /fixtures/kernel-sites.bpf.o
echo "KSHIELD-SITES bench-kprobe $(ksites-drv open /tmp/ksites-bench 20000)"
for k in $KINDS; do
	ksites-drv $k /tmp/ksites-kill >/dev/null 2>&1
	echo "KSHIELD-SITES kill-$k {\"status\": $?}"
	ksites-drv $k /tmp/ksites-ok-$k >/dev/null 2>&1
	echo "KSHIELD-SITES ok-$k {\"status\": $?}"
done
kshield shield unload kernel-sites-fixture 2>/dev/null
echo "KSHIELD-SITES bench-bare2 $(ksites-drv open /tmp/ksites-bench 20000)"

export KSHIELD_SITES_DIR=/etc/kshield/sites-other
json mismatch kshield -j sites list kernel:$FN
json mismatch-load kshield -j shield load /fixtures/kernel-sites.bpf.o
kshield shield unload kernel-sites-fixture 2>/dev/null
unset KSHIELD_SITES_DIR
