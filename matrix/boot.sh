#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# boot.sh ARCH KERNEL INITRD LSM LOG - boot one kernel-matrix guest under
# QEMU and leave its whole serial console in LOG. KERNEL is a vmlinuz, or a
# package tree unpacked by matrix/fetch.sh (its vmlinuz found by
# matrix/kver.sh in either Debian layout: boot/vmlinuz-KVER, or
# usr/lib/modules/KVER/vmlinuz from 6.19 on).
#
# Exit 0 when the guest reached KSHIELD-DONE (matrix/init); otherwise exit 1
# and print one line saying why: timed out (before or after init started),
# kernel panic (its message), or no boot (QEMU's own error, or the last
# console line). The per-VM timeout is $KSHIELD_MATRIX_TIMEOUT seconds
# (default 300 on x86_64, 600 on aarch64: generous, because TCG on a shared
# 2-core machine runs 5-10x slower than on an idle one; a hang still ends).
#
# x86_64 guests try KVM first and fall back to TCG when KVM is missing or
# dies (on this machine kind /dev/kvm exists but KVM stops with an internal
# error); the verdict is remembered per host kernel in the matrix cache so
# later boots do not pay for the failed attempt. aarch64 guests are TCG.
# KSHIELD_MATRIX_APPEND adds kernel parameters, KSHIELD_MATRIX_CPU replaces
# -cpu max, KSHIELD_MATRIX_QEMU adds QEMU options (all for experiments).
set -euo pipefail

arch=${1:?usage: boot.sh ARCH VMLINUZ INITRD LSM LOG}
kernel=${2:?}
initrd=${3:?}
lsm=${4:?}
log=${5:?}
sigs=
if [ -d "$kernel" ]; then
	# Modules fetched from the pool without an index checksum (fetch.sh):
	# the kernel loads only those signed by its own build.
	[ -f "$kernel/.unindexed" ] && sigs=module.sig_enforce=1
	k=$("$(dirname "$0")/kver.sh" "$kernel" 2>&1) || { echo "no boot: $k"; exit 1; }
	kernel=${k##* }
fi
cache=${KSHIELD_MATRIX_CACHE:-/var/cache/kshield-matrix}
append="quiet loglevel=2 panic=-1 lsm=$lsm $sigs ${KSHIELD_MATRIX_APPEND:-}"

case $arch in
x86_64)
	qemu=(qemu-system-x86_64 -cpu "${KSHIELD_MATRIX_CPU:-max}" -m 512 -smp 1)
	# no_timer_check: under TCG on a loaded host the IO-APIC timer check can
	# miss its ticks and panic ("IO-APIC + timer doesn't work"); seen in CI.
	append="console=ttyS0 no_timer_check $append"
	timeout=${KSHIELD_MATRIX_TIMEOUT:-300}
	;;
aarch64)
	# pauth-impdef: QEMU's default pointer-authentication algorithm (QARMA)
	# is emulated so slowly that boots take ~4x longer; the implementation-
	# defined one keeps PAC instructions working at a fraction of the cost.
	qemu=(qemu-system-aarch64 -M virt -cpu "${KSHIELD_MATRIX_CPU:-max,pauth-impdef=on}" -m 1024 -smp 1)
	append="console=ttyAMA0 $append"
	timeout=${KSHIELD_MATRIX_TIMEOUT:-600}
	;;
*) echo "no boot: unknown arch $arch"; exit 1 ;;
esac
# shellcheck disable=SC2206 # options, split on purpose
qemu+=(${KSHIELD_MATRIX_QEMU:-} -nographic -no-reboot -kernel "$kernel" -initrd "$initrd" -append "$append")

run() {	# run SECONDS ACCEL...: boot once, console to $log; returns qemu's status
	local rc=0 t=$1
	shift
	timeout -k 5 "$t" "${qemu[@]}" "$@" </dev/null >"$log" 2>&1 || rc=$?
	return $rc
}

accel_file=$cache/accel-$(uname -r)
rc=0
if [ "$arch" = x86_64 ] && [ -w /dev/kvm ] && [ "$(cat "$accel_file" 2>/dev/null)" != tcg ]; then
	# A working KVM reaches init in a second or two; a broken one either
	# stops at once or hangs, so it gets 30 s, not the whole timeout.
	run $((timeout < 30 ? timeout : 30)) -accel kvm || rc=$?
	if grep -q '^KSHIELD-BOOT' "$log"; then
		echo kvm >"$accel_file"
	else
		echo tcg >"$accel_file"
		rc=0
		run "$timeout" -accel tcg || rc=$?
	fi
else
	run "$timeout" -accel tcg || rc=$?
fi

grep -q '^KSHIELD-DONE' "$log" && exit 0

# Why not: the last meaningful console line is the best witness.
# (firmware escape codes and QEMU's own "terminating on signal" left out)
clean() { tr -d '\r' | sed -e 's/\x1b\[[0-9;?]*[a-zA-Z]//g' -e 's/\x1bc//g'; }
last=$(grep -av -e '^KSHIELD-' -e 'terminating on signal' "$log" | clean |
	sed '/^[[:space:]]*$/d' | tail -1 | cut -c1-200)
panic=$(grep -a -m1 'Kernel panic' "$log" | clean | sed 's/^.*Kernel panic/Kernel panic/' | cut -c1-200 || true)
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	if grep -q '^KSHIELD-BOOT' "$log"; then
		echo "timed out after ${timeout}s while testing; last line: $(grep -a '^KSHIELD-' "$log" | tail -1 | cut -c1-200)"
	else
		echo "timed out after ${timeout}s before init ran; last console line: ${last:-none}"
	fi
elif [ -n "$panic" ]; then
	echo "kernel panic: $panic"
elif grep -q '^KSHIELD-BOOT' "$log"; then
	echo "guest stopped before finishing (qemu status $rc); last console line: ${last:-none}"
else
	echo "no boot (qemu status $rc): ${last:-no console output}"
fi
exit 1
