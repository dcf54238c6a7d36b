#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sysnr.sh - syscall numbers for the SDK's tables (bpf/sdk/fit.bpf.h), read
# from the kernel UAPI headers the cross compilers install (setup.sh and
# setup-arm64.sh: x86-64, i386, arm64 and AArch32 EABI).
#
#   scripts/sysnr.sh NAME...   the four #define lines of each syscall NAME,
#                              one per table; "(-1)" where an ABI lacks it
#   scripts/sysnr.sh --check   every KS_NR_* and KS_NR32_* of fit.bpf.h
#                              against the headers (run by make test-host);
#                              exit 1 on a mismatch
set -uo pipefail
cd "$(dirname "$0")/.."

declare -A hdr=(
	[x86]=/usr/include/x86_64-linux-gnu/asm/unistd_64.h
	[i386]=/usr/i686-linux-gnu/include/asm/unistd_32.h
	[arm64]=/usr/aarch64-linux-gnu/include/asm-generic/unistd.h
	[arm]=/usr/arm-linux-gnueabihf/include/asm/unistd-eabi.h
)
for a in "${!hdr[@]}"; do
	[ -r "${hdr[$a]}" ] || { echo "sysnr: ${hdr[$a]} missing: run scripts/setup.sh and scripts/setup-arm64.sh" >&2; exit 2; }
done

# nr ABI NAME: the number, or -1. arm64's generic table names a few calls
# __NR3264_* (mmap, sendfile, ...); the SDK calls 64-bit sendfile sendfile64.
nr() {
	local n=$2 v
	for c in "$n" "${n%64}"; do
		v=$(sed -En "s/^#define __NR(3264)?_$c[[:space:]]+\(?(__NR_SYSCALL_BASE ?\+ ?)?([0-9]+)\)?.*/\3/p" "${hdr[$1]}" | head -1)
		[ -n "$v" ] && { echo "$v"; return; }
	done
	echo -1
}

if [ "${1:-}" != --check ]; then
	[ $# -gt 0 ] || { sed -n '2,/^set /{/^set /d;s/^# \{0,1\}//;p}' "$0"; exit 2; }
	for n in "$@"; do
		for t in "arm64 KS_NR_" "x86 KS_NR_" "arm KS_NR32_" "i386 KS_NR32_"; do
			read -r a p <<<"$t"
			v=$(nr "$a" "$n")
			printf '%-8s #define %s%s\t%s\n' "$a:" "$p" "$n" "$([ "$v" = -1 ] && echo '(-1)' || echo "$v")"
		done
	done
	exit 0
fi

# --check: each table is an #if defined(__TARGET_ARCH_arm64) ... #else ...
# #endif block of fit.bpf.h (arm64 first, x86 second).
bad=0 n=0
while read -r arch kind name val; do
	case $arch$kind in
	arm64native) a=arm64 ;; x86native) a=x86 ;; arm6432) a=arm ;; x8632) a=i386 ;;
	esac
	want=$(nr "$a" "$name")
	val=${val//[()]/}
	n=$((n + 1))
	if [ "$val" != "$want" ]; then
		echo "sysnr: ${kind/native/} $name on $a: fit.bpf.h says $val, ${hdr[$a]} says $want"
		bad=1
	fi
done < <(awk '
	/^#if defined\(__TARGET_ARCH_arm64\)/ { arch = "arm64"; next }
	/^#else/ && arch == "arm64" { arch = "x86"; next }
	/^#endif/ { arch = ""; next }
	arch != "" && $1 == "#define" && $2 ~ /^KS_NR32_/ { sub(/^KS_NR32_/, "", $2); print arch, "32", $2, $3 }
	arch != "" && $1 == "#define" && $2 ~ /^KS_NR_/ { sub(/^KS_NR_/, "", $2); print arch, "native", $2, $3 }
' bpf/sdk/fit.bpf.h)
[ $bad = 0 ] && echo "sysnr: the $n syscall numbers of bpf/sdk/fit.bpf.h match the kernel headers"
exit $bad
