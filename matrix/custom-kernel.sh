#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# custom-kernel.sh NAME - build a kernel of our own making (issue 27) from
# Debian's linux-source-6.1 into the matrix cache, once, and print the
# directory it is kept in (the layout matrix/kver.sh reads, like a package
# unpacked by matrix/fetch.sh).
#
# NAME picks the config: `make tinyconfig`, then matrix/custom/BASE.config
# (BASE: NAME up to its first '-'), then matrix/custom/NAME.config if NAME
# has a suffix, merged by scripts/kconfig/merge_config.sh and completed by
# `make olddefconfig`. Every value a fragment asks for must be in the final
# .config (a dependency Kconfig dropped is an error here, not a surprise in
# the guest). CONFIG_LOCALVERSION is -kshield-NAME, so the guest's
# `uname -r` names the config.
#
# The vulnerable family (BASE vulnerable, issue 35) is built from the source
# with every shields/*/unfix.patch applied in name order (each shield's bug
# put back), in a copy of its own (src-VERSION-unfix/: hard links to the
# pristine tree, which the other families build from and which stays
# pristine; a file a patch touches is replaced, never written through).
# The patches' hash is part of the cache key (NAME/unfix; NAME/patches lists
# them): a new or changed patch rebuilds, incrementally, in the kept object
# tree. A patch that does not apply stops the build, naming the shield.
#
# The cache ($KSHIELD_MATRIX_CACHE/custom/NAME/) holds bzImage, vmlinux
# (DWARF 5 kept, as a build farm keeps it), System.map, config, build-id
# (the GNU build ID, as the guest reads it from /sys/kernel/notes),
# BUILD-ID.btf (the whole vmlinux's BTF, detached: pahole
# --btf_encode_detached, from package dwarves), source (the package
# version built), and boot/vmlinuz-KVER with an empty
# lib/modules/KVER/ (modules.builtin, depmod'ed) for matrix/kver.sh and
# matrix/initramfs.sh: every module a shield's metadata names is built in
# or missing. A directory with all of them is used as it is; the object
# tree build-NAME/ beside it is kept for a rebuild after a fragment
# changes (delete NAME/ to rebuild).
#
# Cost on this 2-core machine shared with other builds (nice -n 10,
# make -j2, load average 3-5), measured 2026-12-05 (build-time in the
# cache says each one's):
#   appliance           from scratch 8 min 14 s (476 s make, 13 s unpack,
#                       3 s pahole); a fragment change of three options
#                       rebuilt incrementally in 307 s
#   appliance-override  seeded from appliance's object tree (cp -a): 413 s;
#                       nearly every object is rebuilt (linux/module.h
#                       depends on FUNCTION_ERROR_INJECTION), the seed saves
#                       the host tools and objtool; finishing an
#                       interrupted build of it took 1025 s at load
#                       average 13 (09:15-09:32)
#   appliance-override with the function tracer (FUNCTION_TRACER,
#                       DYNAMIC_FTRACE): every object is rebuilt (each
#                       function gets its ftrace entry): 3522 s of make at
#                       load average 5-13 (09:38-10:36), then 55 s to
#                       relink and cache it
#   vulnerable          (KASAN, DWARF 5 and BTF, the function tracer, nine
#                       unfix patches) from scratch 5210 s of make (87 min
#                       wall, 21:37-23:04 on 2026-12-07, load average
#                       5-114; about 100 objects of two aborted attempts,
#                       before the config lost ACPI/PCI/VT/XFRM/RxRPC, were
#                       in the object tree), 8 s BTF and cache; one patch
#                       changed (a comment added to cve-2022-0847's hunk:
#                       lib/iov_iter.o, then vmlinux relinked with its BTF
#                       and kallsyms) rebuilt incrementally in 514 s of make
#                       + 11 s (23:10-23:19, beside two TCG guests);
#                       bzImage 4.4 MB, vmlinux 135 MB, BTF 2.4 MB
# vmlinux 139 MB (DWARF 5; 15 MB without it), bzImage 3.1 MB, BTF 2.9 MB.
# The build ID differs from build to build (the version string has the
# build's date and number): the BTF is always made from this build's vmlinux.
# The package's own install needs root (apt-get install linux-source-6.1);
# `make matrix` calls this through matrix/fetch.sh for packages named
# custom-NAME. The quick matrix has no custom row, so `make test` never
# builds a kernel.
set -euo pipefail

name=${1:?usage: custom-kernel.sh NAME}
[[ $name =~ ^[a-z0-9]+(-[a-z0-9]+)*$ ]] || { echo "custom-kernel: bad name '$name'" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
cache=${KSHIELD_MATRIX_CACHE:-/var/cache/kshield-matrix}/custom
pkg=linux-source-6.1
base=${name%%-*}
frags=("$here/custom/$base.config")
[ "$base" = "$name" ] || frags+=("$here/custom/$name.config")
for f in "${frags[@]}"; do
	[ -f "$f" ] || { echo "custom-kernel: $name: no config fragment $f" >&2; exit 2; }
done

d=$cache/$name
o=$cache/build-$name
die() { echo "custom-kernel: $name: $*" >&2; exit 1; }
# The vulnerable family gets the shields' bugs put back: every
# shields/*/unfix.patch, in name order. Their hash is part of the cache key
# (the file unfix in the cached directory), so a new or changed patch
# rebuilds (incrementally: the object tree is kept).
patches=()
unfix=none
if [ "$base" = vulnerable ]; then
	top=$(cd "$here/.." && pwd)
	for p in "$top"/shields/*/unfix.patch; do
		if [ -f "$p" ]; then patches+=("$p"); fi
	done
	if [ ${#patches[@]} -gt 0 ]; then unfix=$(for p in "${patches[@]}"; do
		echo "$(basename "$(dirname "$p")") $(sha256sum <"$p" | cut -c1-64)"
	done | sha256sum | cut -c1-16); fi
fi
cached() {
	local bid
	[ "$(cat "$d/unfix" 2>/dev/null || echo none)" = "$unfix" ] || return 1
	bid=$(cat "$d/build-id" 2>/dev/null) || return 1
	for f in bzImage vmlinux System.map config source "$bid.btf"; do
		[ -s "$d/$f" ] || return 1
	done
	compgen -G "$d/boot/vmlinuz-*" >/dev/null
}
if cached; then echo "$d"; exit 0; fi

mkdir -p "$cache"
exec 9>"$cache/lock"
flock 9
if cached; then echo "$d"; exit 0; fi
# Everything below prints to stderr: stdout is the directory only.
exec 3>&1 1>&2

# The source: Debian's package, unpacked once per version.
if ! ver=$(dpkg-query -W -f '${Version}' "$pkg" 2>/dev/null) || [ ! -f "/usr/src/$pkg.tar.xz" ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$pkg" >/dev/null ||
		die "apt-get install $pkg failed (needs root and the bookworm-security index)"
	ver=$(dpkg-query -W -f '${Version}' "$pkg")
fi
command -v pahole >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q dwarves >/dev/null ||
	die "pahole missing: apt-get install dwarves"
# The vulnerable family applies the shields' unfix.patch files.
command -v patch >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q patch >/dev/null ||
	die "patch missing: apt-get install patch"
src=$cache/src-$ver/$pkg
if [ ! -f "$src/Makefile" ]; then
	rm -rf "$cache/src-$ver"
	mkdir -p "$cache/src-$ver"
	tar -xJf "/usr/src/$pkg.tar.xz" -C "$cache/src-$ver" || die "cannot unpack /usr/src/$pkg.tar.xz"
fi
# The vulnerable family builds from its own copy of the source (hard
# links to the pristine tree, which the other families build from and
# which stays pristine): each file the patches touch, now or at the last
# build, is made again from the pristine one with the patches applied, and
# replaced (a new inode, a new mtime) only where its text changed, so Kbuild
# rebuilds the objects of those files only.
if [ "$base" = vulnerable ]; then
	psrc=$cache/src-$ver-unfix/$pkg
	if [ ! -f "$psrc/Makefile" ]; then
		rm -rf "$cache/src-$ver-unfix"
		mkdir -p "$cache/src-$ver-unfix"
		cp -al "$src" "$psrc" || die "cannot link $src into $psrc"
		: >"$psrc/.kshield-unfix-files"
	fi
	stage=$(mktemp -d "$cache/unfix.XXXXXX")
	trap 'rm -rf "$stage"' EXIT
	files=$( { cat "$psrc/.kshield-unfix-files"
		for p in "${patches[@]}"; do sed -n 's|^+++ [^/]*/\([^\t ]*\).*|\1|p' "$p"; done; } | sort -u)
	for f in $files; do
		[ -f "$src/$f" ] || die "a patch names $f, not in $pkg $ver"
		mkdir -p "$stage/$(dirname "$f")"
		cp "$src/$f" "$stage/$f"
	done
	for p in "${patches[@]}"; do
		shield=$(basename "$(dirname "$p")")
		patch -p1 -s -N -f --no-backup-if-mismatch -r - -d "$stage" <"$p" >"$stage/.patch.log" 2>&1 ||
			die "shields/$shield/unfix.patch does not apply to $pkg $ver: $(head -1 "$stage/.patch.log")"
	done
	for f in $files; do
		cmp -s "$stage/$f" "$psrc/$f" && continue
		cp "$stage/$f" "$psrc/$f.unfix-new" && mv "$psrc/$f.unfix-new" "$psrc/$f"
		echo "custom-kernel: $name: $f changed" >&2
	done
	echo "$files" >"$psrc/.kshield-unfix-files"
	src=$psrc
fi
# A config that differs from a built base only by a few options rebuilds
# only the objects those options reach (Kbuild's per-option dependencies).
if [ ! -d "$o" ] && [ "$base" != "$name" ] && [ -f "$cache/build-$base/vmlinux" ]; then
	cp -a "$cache/build-$base" "$o"
fi
mkdir -p "$o"

t0=$(date +%s)
k() { nice -n 10 make -C "$src" O="$o" ARCH=x86_64 -j2 "$@"; }
k -s tinyconfig >/dev/null
printf 'CONFIG_LOCALVERSION="-kshield-%s"\nCONFIG_LOCALVERSION_AUTO=n\n' "$name" >"$o/kshield-name.config"
(cd "$src" && ARCH=x86_64 scripts/kconfig/merge_config.sh -m -O "$o" "$o/.config" \
	"${frags[@]}" "$o/kshield-name.config" >/dev/null)
k -s olddefconfig >/dev/null
# Each requested value must have landed (=n as "is not set").
missing=$(cat "${frags[@]}" | sed -n 's/^\(CONFIG_[A-Z0-9_]*\)=\(.*\)$/\1 \2/p' |
	while read -r opt val; do
		if [ "$val" = n ]; then
			grep -qx "# $opt is not set" "$o/.config" || ! grep -q "^$opt=" "$o/.config" || echo "$opt=n"
		else
			grep -qx "$opt=$val" "$o/.config" || echo "$opt=$val"
		fi
	done)
[ -z "$missing" ] || die "Kconfig dropped $(echo $missing) (a dependency is off)"
k bzImage vmlinux >"$o/build.log" 2>&1 || die "kernel build failed: $(tail -3 "$o/build.log" | tr '\n' ' ')"
t1=$(date +%s)

kver=$(cat "$o/include/config/kernel.release")
bid=$(readelf -n "$o/vmlinux" | sed -n 's/^ *Build ID: *//p')
[ -n "$bid" ] || die "vmlinux has no GNU build ID"
rm -rf "$d.tmp"
mkdir -p "$d.tmp/boot" "$d.tmp/lib/modules/$kver/kernel"
cp "$o/arch/x86/boot/bzImage" "$d.tmp/bzImage"
cp "$o/vmlinux" "$d.tmp/vmlinux"
cp "$o/System.map" "$d.tmp/System.map"
cp "$o/.config" "$d.tmp/config"
ln "$d.tmp/bzImage" "$d.tmp/boot/vmlinuz-$kver"
echo "$bid" >"$d.tmp/build-id"
echo "$pkg $ver" >"$d.tmp/source"
echo "$unfix" >"$d.tmp/unfix"
for p in "${patches[@]}"; do echo "${p#"$top/"}"; done >"$d.tmp/patches"
# modules.builtin: initramfs.sh's modprobe --show-depends says "builtin"
# for what the shields' metadata names and this kernel has built in.
cp "$o/modules.builtin" "$o/modules.builtin.modinfo" "$d.tmp/lib/modules/$kver/" 2>/dev/null || true
: >"$d.tmp/lib/modules/$kver/modules.order"
depmod -b "$d.tmp" "$kver"
pahole --btf_encode_detached="$d.tmp/$bid.btf" "$d.tmp/vmlinux" && chmod 0644 "$d.tmp/$bid.btf" ||
	die "pahole could not encode BTF from vmlinux's DWARF"
t2=$(date +%s)
echo "$((t1 - t0)) s build, $((t2 - t1)) s BTF and cache, $(date -u +%FT%TZ)" >"$d.tmp/build-time"
rm -rf "$d"
mv "$d.tmp" "$d"
echo "custom-kernel: $name: $kver, build ID $bid, built in $((t1 - t0)) s" >&2
echo "$d" >&3
