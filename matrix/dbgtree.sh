#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dbgtree.sh - the whole -dbg tree of a kernel package (vmlinux and every
# module with DWARF), for `kshield hooks --kernel RELEASE`.
#
#   matrix/dbgtree.sh linux-image-RELEASE
#
# Downloads linux-image-RELEASE-dbg (SHA256 checked against the package
# index, cached in $KSHIELD_MATRIX_CACHE/debs like matrix/dbg.sh), extracts
# it whole into $KSHIELD_MATRIX_CACHE/dbgtree/linux-image-RELEASE/ (about
# 1.7 GB; download ~10 s, extraction ~60 s) and prints that directory. A
# tree already there is used as it is.
set -uo pipefail

cache=${KSHIELD_MATRIX_CACHE:-/var/cache/kshield-matrix}
case ${1:-} in
-h|--help|help|"") sed -n '2,/^set /{/^set /d;s/^# \{0,1\}//;p}' "$0"; [ -n "${1:-}" ]; exit ;;
esac
pkg=$1
rel=${pkg#linux-image-}
tree=$cache/dbgtree/$pkg
now() { date +%s.%N; }
secs() { printf '%.1f' "$(echo "$2 - $1" | bc)"; }

have_tree() { ls "$tree"/usr/lib/debug/boot/vmlinux-"$rel" >/dev/null 2>&1 && [ -d "$tree/usr/lib/debug/lib/modules/$rel" ]; }
if have_tree; then
	echo "$tree"
	exit 0
fi
# One fetch per package at a time: two at once (kshield hooks beside
# tests/hooks/bar.sh) removed each other's half-extracted tree.
mkdir -p "$cache/dbgtree"
exec 9>"$cache/dbgtree/$pkg.lock"
flock 9
if have_tree; then
	echo "$tree"
	exit 0
fi
darch=amd64
[[ $pkg == *-arm64 ]] && darch=arm64
info=$(apt-cache show --no-all-versions "$pkg-dbg:$darch" 2>/dev/null) ||
	{ echo "dbgtree: $pkg-dbg not in the package index (apt-get update?)" >&2; exit 1; }
sha=$(awk '/^SHA256:/ { print $2; exit }' <<<"$info")
ver=$(awk '/^Version:/ { print $2; exit }' <<<"$info")
parch=$(awk '/^Architecture:/ { print $2; exit }' <<<"$info")
mkdir -p "$cache/debs" "$cache/dbgtree"
deb=$cache/debs/$pkg-dbg_${ver//:/%3a}_$parch.deb
t0=$(now)
if ! [ -f "$deb" ] || [ "$(sha256sum "$deb" | cut -d' ' -f1)" != "$sha" ]; then
	rm -f "$deb"
	(cd "$cache/debs" && apt-get download -q "$pkg-dbg:$darch" >/dev/null 2>&1) ||
		{ echo "dbgtree: apt-get download $pkg-dbg failed" >&2; exit 1; }
	[ "$(sha256sum "$deb" | cut -d' ' -f1)" = "$sha" ] ||
		{ echo "dbgtree: $deb does not match the index SHA256" >&2; exit 1; }
fi
t1=$(now)
rm -rf "$tree.tmp" && mkdir -p "$tree.tmp"
dpkg-deb -x "$deb" "$tree.tmp" || { echo "dbgtree: can't extract $deb" >&2; rm -rf "$tree.tmp"; exit 1; }
t2=$(now)
rm -rf "$tree" && mv "$tree.tmp" "$tree"
echo "dbgtree: $pkg-dbg: download $(secs "$t0" "$t1") s, extract $(secs "$t1" "$t2") s ($(du -sm "$tree" | cut -f1) MB)" >&2
echo "$tree"
