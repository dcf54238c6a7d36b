#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# arm64-vmlinux-h.sh PACKAGE - print a vmlinux.h for arm64 BPF builds, made
# from the BTF inside a Debian arm64 kernel package (fetched into the matrix
# cache by matrix/fetch.sh).
#
# Why: the host's /sys/kernel/btf/vmlinux describes x86-64, and BPF code
# that reads registers (BPF_KPROBE arguments, bpf_task_pt_regs, uprobe and
# syscall-entry variants) needs arm64's struct user_pt_regs / pt_regs; CO-RE
# fixes field offsets at load time but cannot invent a type the header lacks.
#
# How: Debian's arm64 vmlinuz is an uncompressed Image whose .BTF section is
# a plain blob (magic 0xeB9F, version 1, 24-byte header giving the type and
# string lengths); it is cut out at the first offset whose header is
# self-consistent and dumped with `bpftool btf dump ... format c`.
set -euo pipefail

pkg=${1:?usage: arm64-vmlinux-h.sh PACKAGE}
here=$(cd "$(dirname "$0")" && pwd)
kdir=$("$here/fetch.sh" aarch64 "$pkg")
img=$(ls "$kdir"/boot/vmlinuz-* | head -1)
case $(head -c2 "$img" | od -An -tx1 | tr -d ' ') in
1f8b) tmp=$(mktemp); trap 'rm -f "$tmp"' EXIT; zcat "$img" >"$tmp"; img=$tmp ;;
esac

btf=$(mktemp)
trap 'rm -f "$btf" ${tmp:+"$tmp"}' EXIT
for off in $(grep -abo $'\x9f\xeb\x01' "$img" | cut -d: -f1); do
	# flags byte 0, then hdr_len type_off type_len str_off str_len (u32 LE)
	read -r flags hdr type_off type_len str_off str_len < <(
		{ od -An -j $((off + 3)) -N 1 -tu1 "$img"; od -An -j $((off + 4)) -N 20 -tu4 "$img"; } |
			tr '\n' ' '; echo)
	[ "$flags" = 0 ] && [ "$hdr" = 24 ] && [ "$type_off" = 0 ] && [ "$str_off" = "$type_len" ] || continue
	[ "$type_len" -gt 100000 ] || continue
	dd if="$img" of="$btf" bs=1M iflag=skip_bytes,count_bytes skip="$off" \
		count=$((hdr + str_off + str_len)) status=none
	bpftool btf dump file "$btf" format c
	exit 0
done
echo "arm64-vmlinux-h: no BTF blob found in $img ($pkg)" >&2
exit 1
