#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# kver.sh KDIR - where a kernel unpacked by matrix/fetch.sh keeps its parts,
# in either of Debian's layouts: one line "KVER MODROOT VMLINUZ".
#   up to 6.18: linux-image-KVER holds boot/vmlinuz-KVER and
#               lib/modules/KVER/ (usr/lib/modules/KVER/ in newer packages)
#   6.19 on:    linux-binary-KVER holds usr/lib/modules/KVER/vmlinuz,
#               linux-modules-KVER the modules beside it
# MODROOT is the directory whose lib/modules/KVER holds the modules (KDIR or
# KDIR/usr: what depmod -b and modprobe -d want), "-" when the tree has no
# modules at all. Exit 1, with a message
# naming what is missing, when there is no vmlinuz or no modules.
set -euo pipefail
kdir=${1:?usage: kver.sh KDIR}
kver= root=
for r in "$kdir/usr" "$kdir"; do
	for m in "$r"/lib/modules/*/; do
		[ -d "$m/kernel" ] || continue
		kver=$(basename "$m") root=$r
		break 2
	done
done
vmlinuz=
for v in "$kdir/boot/vmlinuz-$kver" "$kdir/usr/lib/modules/$kver/vmlinuz" \
	"$kdir/lib/modules/$kver/vmlinuz" "$kdir"/boot/vmlinuz-* "$kdir"/usr/lib/modules/*/vmlinuz; do
	[ -f "$v" ] && { vmlinuz=$v; break; }
done
# No modules (the archive serves linux-binary-KVER but not linux-modules-KVER
# for some split kernels: 6.19, 7.0, 7.1 here): KVER from vmlinuz, MODROOT "-".
if [ -z "$kver" ] && [ -n "$vmlinuz" ]; then
	case $vmlinuz in
	*/boot/vmlinuz-*) kver=${vmlinuz##*/vmlinuz-} ;;
	*) kver=$(basename "$(dirname "$vmlinuz")") ;;
	esac
	root=-
fi
[ -n "$kver" ] || { echo "kver: no lib/modules/KVER/kernel under $kdir or $kdir/usr" >&2; exit 1; }
[ -n "$vmlinuz" ] || { echo "kver: no vmlinuz for $kver under $kdir (boot/, usr/lib/modules/$kver/)" >&2; exit 1; }
echo "$kver $root $vmlinuz"
