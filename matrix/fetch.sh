#!/usr/bin/env bash
# fetch.sh ARCH PACKAGE - bring one Debian package into the matrix cache and
# print the directory it is unpacked in.
#
# The cache ($KSHIELD_MATRIX_CACHE, default /var/cache/kshield-matrix) lives
# outside the source tree and is re-used between runs: debs/ holds the .deb
# files as apt-get downloaded them, unpacked/<package>-<sha256:12>/ their
# `dpkg -x` trees. A cached .deb is used only when its SHA256 matches the one
# apt's package index gives for the package (so a half-written or stale file
# is downloaded again), and every download is checked the same way. Kernel
# packages get `depmod` run on their tree so modprobe can resolve module
# dependencies on the host.
#
# ARCH is the guest's uname -m (x86_64, aarch64); it selects the Debian
# architecture (amd64, arm64). On failure the message names the package and
# the exit status is non-zero.
set -euo pipefail

arch=${1:?usage: fetch.sh ARCH PACKAGE}
pkg=${2:?usage: fetch.sh ARCH PACKAGE}
cache=${KSHIELD_MATRIX_CACHE:-/var/cache/kshield-matrix}

case $arch in
x86_64) darch=amd64 ;;
aarch64) darch=arm64 ;;
*) echo "fetch: unknown arch '$arch' for $pkg" >&2; exit 2 ;;
esac

die() { echo "fetch: $pkg ($darch): $*" >&2; exit 1; }

mkdir -p "$cache/debs" "$cache/unpacked"

# What the index says: file name and hash of the candidate version.
info=$(apt-cache show --no-all-versions "$pkg:$darch" 2>/dev/null) ||
	die "not in the package index (apt-cache show found nothing; apt-get update, or dpkg --add-architecture $darch?)"
sha=$(awk '/^SHA256:/ { print $2; exit }' <<<"$info")
ver=$(awk '/^Version:/ { print $2; exit }' <<<"$info")
parch=$(awk '/^Architecture:/ { print $2; exit }' <<<"$info")
[ -n "$sha" ] && [ -n "$ver" ] && [ -n "$parch" ] || die "package index has no SHA256/Version/Architecture"
# The name apt-get download gives the file (an epoch's ':' becomes %3a).
file=${pkg}_${ver//:/%3a}_$parch.deb
deb=$cache/debs/$file
dir=$cache/unpacked/$pkg-${sha:0:12}

if [ -f "$dir/.unpacked" ]; then
	echo "$dir"
	exit 0
fi

check() { [ -f "$deb" ] && [ "$(sha256sum "$deb" | cut -d' ' -f1)" = "$sha" ]; }

if ! check; then
	rm -f "$deb"
	# apt-get download writes into the current directory.
	(cd "$cache/debs" && apt-get download -q "$pkg:$darch" >/dev/null 2>"$cache/debs/.err.$$") || {
		err=$(grep -E '^(E|W):' "$cache/debs/.err.$$" | head -3 | tr '\n' ' ')
		rm -f "$cache/debs/.err.$$"
		die "apt-get download failed: ${err:-unknown error}"
	}
	rm -f "$cache/debs/.err.$$"
	check || die "downloaded $file does not match the index SHA256 $sha"
fi

rm -rf "$dir.tmp"
dpkg -x "$deb" "$dir.tmp" || die "dpkg -x $file failed"
for m in "$dir.tmp"/lib/modules/*/; do
	[ -d "$m" ] || continue
	depmod -b "$dir.tmp" "$(basename "$m")" || die "depmod failed"
done
touch "$dir.tmp/.unpacked"
rm -rf "$dir"
mv "$dir.tmp" "$dir"
echo "$dir"
