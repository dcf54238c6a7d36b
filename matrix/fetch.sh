#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
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
# The package index is the matrix's own, never the machine's: apt/ in the
# cache holds a sources list naming bullseye, bookworm (and -updates,
# -backports), trixie (and -backports), sid and their security suites, for
# amd64 and arm64, on the mirror the machine's own sources name; its lists
# directory, state and cache (APT_CONFIG=apt/apt.conf; the machine's
# apt.conf.d, proxies included, still applies). `apt-get update` of that
# index runs when it is missing, older than a day ($KSHIELD_MATRIX_INDEX_AGE
# seconds), or once when a package is not found; under a lock, so parallel
# fetches share one update. A package already unpacked since the last update
# is found by name without asking apt (KSHIELD_MATRIX_UPDATE=1 asks anyway). bookworm is the default release (busybox-static
# and other unversioned packages come from it).
#
# From 6.19 on Debian splits a kernel: linux-image-KVER is only a dependency
# package: vmlinuz is in linux-binary-KVER (at usr/lib/modules/KVER/vmlinuz),
# the modules in linux-modules-KVER, modules.builtin and the config in
# linux-base-KVER. For a linux-image-* package whose index entry depends on
# those, all of them are unpacked into one tree.
# matrix/kver.sh finds vmlinuz and the modules in either layout.
#
# A package named custom-NAME is no Debian package: matrix/custom-kernel.sh
# builds it from linux-source-6.1 (once; the first time takes minutes).
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

# custom-NAME: a kernel of our own making, built once into the cache by
# matrix/custom-kernel.sh (x86_64 only), in the layout matrix/kver.sh reads.
case $pkg in
custom-*)
	[ "$arch" = x86_64 ] || die "custom kernels are built for x86_64 only"
	exec "$(dirname "$0")/custom-kernel.sh" "${pkg#custom-}"
	;;
esac

mkdir -p "$cache/debs" "$cache/unpacked" "$cache/apt"

aptd=$cache/apt
# Warm cache: the tree fetched for this name while the index was as it is
# now (by-name/ is written after each unpack; an index update newer than
# the entry sends the name through apt again). apt-cache over seven suites
# costs 5-40 s of a loaded 2-core machine per call; this costs nothing.
# complete DIR: an unpacked tree fit for use. A split kernel's tree made
# before fetch.sh looked in the pool (binary, no modules, and no note that
# the pool had none) is made again.
complete() {
	[ -f "$1/.unpacked" ] || return 1
	compgen -G "$1/usr/share/doc/linux-binary-*" >/dev/null || return 0
	[ -f "$1/.nomodules" ] && return 0
	compgen -G "$1/usr/lib/modules/*/kernel" >/dev/null || compgen -G "$1/lib/modules/*/kernel" >/dev/null
}
byname=$cache/unpacked/by-name/$darch/$pkg
if [ -z "${KSHIELD_MATRIX_UPDATE:-}" ] && [ -f "$byname" ] &&
	! [ "$aptd/lists/.updated" -nt "$byname" ]; then
	dir=$(cat "$byname")
	if complete "$dir"; then
		echo "$dir"
		exit 0
	fi
fi

# --- The matrix's own apt configuration --------------------------------------
# The mirrors the machine's own sources name (Debian's and its security
# archive), deb.debian.org when they name none.
mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null |
	awk '$2 !~ /-security$/ && $1 ~ /debian\/?$/ { print $1; exit }')
secmirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null |
	awk '$2 ~ /-security$/ { print $1; exit }')
mirror=${mirror:-http://deb.debian.org/debian/}
secmirror=${secmirror:-http://deb.debian.org/debian-security/}
opts="arch=amd64,arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg"
sources=$(
	echo "# written by kshield matrix/fetch.sh: the matrix's own index, never the machine's"
	for s in bullseye bookworm bookworm-updates bookworm-backports trixie trixie-backports sid; do
		echo "deb [$opts] $mirror $s main"
	done
	for s in bullseye-security bookworm-security trixie-security; do
		echo "deb [$opts] $secmirror $s main"
	done
)
mkdir -p "$aptd/lists/partial" "$aptd/sources.list.d" "$aptd/preferences.d" "$aptd/cache"
[ "$(cat "$aptd/sources.list" 2>/dev/null)" = "$sources" ] || {
	echo "$sources" >"$aptd/sources.list.$$"
	mv "$aptd/sources.list.$$" "$aptd/sources.list"
}
cat >"$aptd/apt.conf.$$" <<CONF
Dir::Etc::SourceList "$aptd/sources.list";
Dir::Etc::SourceParts "$aptd/sources.list.d";
Dir::Etc::PreferencesParts "$aptd/preferences.d";
Dir::Etc::Preferences "$aptd/preferences";
Dir::State::Lists "$aptd/lists";
Dir::Cache "$aptd/cache";
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
APT::Architectures { "amd64"; "arm64"; };
APT::Default-Release "bookworm";
Acquire::Languages "none";
CONF
cmp -s "$aptd/apt.conf.$$" "$aptd/apt.conf" 2>/dev/null && rm -f "$aptd/apt.conf.$$" ||
	mv "$aptd/apt.conf.$$" "$aptd/apt.conf"
export APT_CONFIG=$aptd/apt.conf

# update [force]: apt-get update of the own index when it is missing, stale
# or the sources changed (or always with "force", at most once a minute).
update() {
	(
		flock 9
		local stamp=$aptd/lists/.updated age now
		now=$(date +%s)
		age=$((now - $(stat -c %Y "$stamp" 2>/dev/null || echo 0)))
		if [ -f "$stamp" ] && cmp -s "$stamp" "$aptd/sources.list"; then
			[ "${1:-}" = force ] && [ $age -ge 60 ] || [ $age -ge "${KSHIELD_MATRIX_INDEX_AGE:-86400}" ] || exit 0
		fi
		apt-get update -q >"$aptd/update.log" 2>&1 || {
			echo "fetch: apt-get update of the matrix index failed: $(grep -E '^(E|W):' "$aptd/update.log" | head -3 | tr '\n' ' ')" >&2
			exit 1
		}
		cp "$aptd/sources.list" "$stamp"
	) 9>"$aptd/lock"
}
update || die "no package index (see $aptd/update.log)"

# index PKG: the candidate's index entry.
index() { apt-cache show --no-all-versions "$1:$darch" 2>/dev/null; }
info=$(index "$pkg") || { update force && info=$(index "$pkg"); } ||
	die "not in the package index (apt-cache show found nothing in the matrix's own index, $aptd/sources.list)"

# fetch1 PKG INFO: the .deb of PKG in debs/, SHA256 checked; prints its path.
fetch1() {
	local p=$1 info=$2 sha ver parch file deb
	sha=$(awk '/^SHA256:/ { print $2; exit }' <<<"$info")
	ver=$(awk '/^Version:/ { print $2; exit }' <<<"$info")
	parch=$(awk '/^Architecture:/ { print $2; exit }' <<<"$info")
	[ -n "$sha" ] && [ -n "$ver" ] && [ -n "$parch" ] || die "package index has no SHA256/Version/Architecture for $p"
	# The name apt-get download gives the file (an epoch's ':' becomes %3a).
	file=${p}_${ver//:/%3a}_$parch.deb
	deb=$cache/debs/$file
	check() { [ -f "$deb" ] && [ "$(sha256sum "$deb" | cut -d' ' -f1)" = "$sha" ]; }
	if ! check; then
		rm -f "$deb"
		# apt-get download writes into the current directory.
		(cd "$cache/debs" && apt-get download -q "$p:$darch=$ver" >/dev/null 2>"$cache/debs/.err.$$") || {
			err=$(grep -E '^(E|W):' "$cache/debs/.err.$$" | head -3 | tr '\n' ' ')
			rm -f "$cache/debs/.err.$$"
			die "apt-get download $p failed: ${err:-unknown error}"
		}
		rm -f "$cache/debs/.err.$$"
		check || die "downloaded $file does not match the index SHA256 $sha"
	fi
	echo "$deb"
}

# fetch_pool PKG IMAGEINFO: PKG (a linux-modules-/linux-base- package of the
# same build as the image, so the image's version) from the archive's pool,
# where the index no longer lists it: no index SHA256 to check it against.
# Its modules are checked instead by the guest kernel itself: each carries
# the build's signature (an ephemeral key built into that very vmlinuz,
# which did come through the index), and boot.sh boots such a tree with
# module.sig_enforce=1, so a module of any other origin is refused. Prints
# the .deb's path; nothing (status 1) when the pool has no such file.
fetch_pool() {
	local p=$1 ver file deb url
	ver=$(awk '/^Version:/ { print $2; exit }' <<<"$2")
	file=${p}_${ver//:/%3a}_$darch.deb
	deb=$cache/debs/$file
	url=${mirror%/}/pool/main/l/linux/${p}_${ver#*:}_$darch.deb
	if ! [ -s "$deb" ]; then
		/usr/lib/apt/apt-helper download-file "$url" "$deb.part" >/dev/null 2>&1 || {
			rm -f "$deb.part"
			echo "fetch: $p ($darch): not in the index nor in the pool ($url)" >&2
			return 1
		}
		dpkg-deb -I "$deb.part" >/dev/null 2>&1 || { rm -f "$deb.part"; return 1; }
		mv "$deb.part" "$deb"
	fi
	echo "$deb"
}
unindexed=()
nomodules=

sha=$(awk '/^SHA256:/ { print $2; exit }' <<<"$info")
[ -n "$sha" ] || die "package index has no SHA256"
dir=$cache/unpacked/$pkg-${sha:0:12}

remember() { mkdir -p "${byname%/*}" && echo "$dir" >"$byname.$$" && mv "$byname.$$" "$byname"; }
if complete "$dir"; then
	remember
	echo "$dir"
	exit 0
fi

debs=("$(fetch1 "$pkg" "$info")")
# The split kernel (6.19+): the binary, modules and base (modules.builtin,
# config) packages the image depends on.
if [[ $pkg == linux-image-* ]]; then
	for dep in $(awk '/^Depends:/ { sub(/^Depends: */, ""); print; exit }' <<<"$info" |
		tr ',|' '\n\n' | awk '{ print $1 }' | grep -E '^linux-(binary|modules|base)-[0-9]' || true); do
		dinfo=$(index "$dep") || die "depends on $dep, which is not in the index"
		if ! grep -q '^SHA256:' <<<"$dinfo"; then
			# Not in the index: a virtual package (6.18's linux-base-KVER
			# is one), or, for 6.19, 7.0 and 7.1, the modules and base
			# packages the archive's index dropped when the linux source
			# moved on, while the pool still serves them.
			[[ $dep == linux-modules-* || $dep == linux-base-* ]] || continue
			deb=$(fetch_pool "$dep" "$info") || { nomodules=1; continue; }
			debs+=("$deb")
			unindexed+=("$dep")
		else
			debs+=("$(fetch1 "$dep" "$dinfo")")
		fi
	done
fi

rm -rf "$dir.tmp"
for deb in "${debs[@]}"; do
	dpkg -x "$deb" "$dir.tmp" || die "dpkg -x $(basename "$deb") failed"
done
for base in "$dir.tmp" "$dir.tmp/usr"; do	# lib/modules or usr/lib/modules
	for m in "$base"/lib/modules/*/; do
		[ -d "$m/kernel" ] || continue
		depmod -b "$base" "$(basename "$m")" || die "depmod failed"
	done
done
# Packages from the pool without an index entry: boot.sh enforces module
# signatures for this tree.
[ ${#unindexed[@]} -eq 0 ] || printf '%s\n' "${unindexed[@]}" >"$dir.tmp/.unindexed"
[ -z "$nomodules" ] || touch "$dir.tmp/.nomodules"
touch "$dir.tmp/.unpacked"
rm -rf "$dir"
mv "$dir.tmp" "$dir"
remember
echo "$dir"
