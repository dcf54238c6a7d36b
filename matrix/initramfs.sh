#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# initramfs.sh KDIR STAGE OUT CHECKS - build a guest initramfs (uncompressed
# newc cpio: nothing for the guest to decompress under TCG) for the kernel
# unpacked in KDIR (matrix/fetch.sh), staging it in STAGE.
#
# It holds busybox ($BUSYBOX, statically linked, of the guest's arch), the
# statically linked kshield ($KSHIELD_STATIC), the shield objects
# ($SHIELDS/*.bpf.o), the check fixtures ($FIXTURES) when CHECKS asks for
# them, matrix/init as /init, and the kernel modules each shield's test
# needs: the shields' "modules" metadata, resolved with the package's own
# modules.dep (modprobe -d KDIR --show-depends) into load order, and
# decompressed here because busybox insmod may not read .ko.xz. A module
# the package lacks, or has built in, is listed for the guest to report.
# $TEST_SHIELD (run.sh --shield), when set, is the shield (or comma list) the guest
# tests (/etc/kshield/shield); empty: every shield.
set -euo pipefail

kdir=${1:?usage: initramfs.sh KDIR STAGE OUT CHECKS}
stage=${2:?}
out=${3:?}
checks=${4:--}
here=$(cd "$(dirname "$0")" && pwd)
: "${BUSYBOX:?}" "${KSHIELD_STATIC:?}" "${SHIELDS:?}"

# The kernel's version and module root in either package layout (kver.sh);
# in the image the modules are always at /lib/modules/KVER.
read -r kver mroot _ < <("$here/kver.sh" "$kdir") || exit 1
[ -n "$kver" ] || exit 1
mdir=lib/modules/$kver

rm -rf "$stage"
mkdir -p "$stage"/{bin,sbin,dev,proc,sys,tmp,run,etc/kshield,shields,fixtures,"$mdir"}
cp "$BUSYBOX" "$stage/bin/busybox"
cp "$KSHIELD_STATIC" "$stage/bin/kshield"
# Its DWARF is a third of the image and nothing in the guest reads it: about
# 0.5 s less to load and unpack per TCG boot. (Shield objects stay as built:
# they are what is being proven.) binutils of the binary's own architecture:
# llvm-strip refuses static glibc binaries (.rela.plt without a symtab link).
case $(readelf -h "$stage/bin/kshield" | sed -n 's/^ *Machine: *//p') in
AArch64) strip_=aarch64-linux-gnu-strip ;;
*) strip_=strip ;;
esac
$strip_ --strip-debug "$stage/bin/kshield" 2>/dev/null || true
cp "$here/init" "$stage/init"
chmod 0755 "$stage/init" "$stage/bin/busybox" "$stage/bin/kshield"
mknod -m 0600 "$stage/dev/console" c 5 1
cp "$SHIELDS"/*.bpf.o "$stage/shields/"
# The shields' 32-bit test programs (<name>/compat/<prog>.i386 or .arm, see
# the Makefile): kshield test runs them for the compat trigger paths.
for c in "$SHIELDS"/*/compat/*; do
	[ -f "$c" ] || continue
	rel=${c#"$SHIELDS"/}
	mkdir -p "$stage/shields/$(dirname "$rel")"
	cp "$c" "$stage/shields/$rel"
done
echo "$checks" >"$stage/etc/kshield/checks"
# A kernel built without BTF (matrix/custom-kernel.sh) carries its BTF
# beside it, named by its build ID: where kshield looks for external BTF
# (btf_dir, default /var/lib/kshield/btf). $MATRIX_BTF_DIR: that btf_dir
# instead, as a host made it (e.g. `kshield fleet btf` from a shield's signed
# bundle: <build-id>.btf and its .btf.from).
if [ -n "${MATRIX_BTF_DIR:-}" ]; then
	mkdir -p "$stage/var/lib/kshield/btf"
	cp "$MATRIX_BTF_DIR"/* "$stage/var/lib/kshield/btf/"
elif [ -s "$kdir/build-id" ] && bid=$(cat "$kdir/build-id") && [ -s "$kdir/$bid.btf" ]; then
	mkdir -p "$stage/var/lib/kshield/btf"
	cp "$kdir/$bid.btf" "$stage/var/lib/kshield/btf/"
fi
echo "${TEST_SHIELD:-}" >"$stage/etc/kshield/shield"

# The "modules" metadata of an object (comma list), one name per line.
modules_of() {
	readelf -p .kshield "$1" 2>/dev/null |
		sed -n 's/^ *\[ *[0-9a-f]*\] *modules=//p' | tr ',' '\n' | sed '/^$/d'
}

objs=("$SHIELDS"/*.bpf.o)
# Check ksites (make matrix-dbg): the kernel inline-site test, its syscall
# driver, its fixture shield and the sites manifests made on the host
# ($KSITES: sites/ for the real builds, sites-other/ a manifest of another
# build under each kernel's name, for the refusal; sites-forged/ and
# sites-unsigned/ refused by signature, keys/ the trusted key; the driver and fixture
# per arch in x86_64/ and aarch64/).
if [[ ,$checks, == *,ksites,* ]]; then
	: "${KSITES:?check ksites needs KSITES (made by matrix/dbg.sh)}"
	mkdir -p "$stage/tests"
	cp "$here/../tests/guest/kernel-sites.sh" "$stage/tests/"
	arch_=x86_64
	[ "$strip_" = strip ] || arch_=aarch64
	cp "$KSITES/$arch_/ksites-drv" "$stage/bin/"
	cp "$KSITES/$arch_/kernel-sites.bpf.o" "$stage/fixtures/"
	cp -r "$KSITES/sites" "$KSITES/sites-other" "$KSITES/sites-forged" \
		"$KSITES/sites-unsigned" "$KSITES/keys" "$stage/etc/kshield/"
fi
if [[ ,$checks, == *,flow,* ]]; then
	mkdir -p "$stage/tests"
	cp "$here/../tests/guest/monitor-flow.sh" "$stage/tests/"
	cp "$(dirname "$KSHIELD_STATIC")/flowgen" "$stage/bin/"
fi
if [[ ,$checks, == *,guardagent,* ]]; then
	mkdir -p "$stage/tests"
	cp "$here/../tests/guest/guard-agent.sh" "$stage/tests/"
fi
if [[ ,$checks, == *,harm,* ]]; then
	mkdir -p "$stage/tests"
	cp "$here/../tests/guest/harm.sh" "$stage/tests/"
	cp "$(dirname "$KSHIELD_STATIC")/syscall_loop" "$stage/bin/"
	# bpftool and its libraries, where the host has one of the guest's
	# arch: the check lists the programs attached to file_permission
	if [ "$strip_" = strip ] && bp=$(command -v bpftool); then
		cp "$bp" "$stage/bin/bpftool"
		ldd "$bp" | awk '/=> \// {print $3} /^[ \t]*\/lib/ {print $1}' | while read -r l; do
			mkdir -p "$stage$(dirname "$l")"
			cp -L "$l" "$stage$l"
		done
	fi
	# its "default" mode runs the agent as packaged
	cp "$here/../packaging/kshield.conf" "$stage/etc/kshield/harm-default.conf"
	# rounds (tests/guest/harm.sh): an arm64 round under TCG takes 3-4x
	# an x86-64 one; KSHIELD_HARM_ROUNDS for experiments
	rounds=5
	[ "$strip_" = strip ] || rounds=3
	echo "HARM_ROUNDS=${KSHIELD_HARM_ROUNDS:-$rounds}" >"$stage/etc/kshield/harm.env"
	# harmgap (kernels.list): the goal is a known gap on this row
	[[ ,$checks, != *,harmgap,* ]] || echo "HARM_GAP=1" >>"$stage/etc/kshield/harm.env"
	# KSHIELD_HARM_ALONE: the shields timed one by one instead of
	# tests/guest/harm.sh's default (a new file_permission shield's cost)
	[ -z "${KSHIELD_HARM_ALONE:-}" ] ||
		echo "HARM_ALONE=\"$KSHIELD_HARM_ALONE\"" >>"$stage/etc/kshield/harm.env"
fi
if [[ ,$checks, == *,selinux,* ]]; then
	mkdir -p "$stage/tests"
	cp "$here/../tests/guest/selinux.sh" "$stage/tests/"
	cp "$(dirname "$KSHIELD_STATIC")/mount_context" "$stage/bin/"
	secilc -M true -c 33 -f /dev/null -o "$stage/etc/kshield/selinux.policy" \
		"$here/selinux/minimal.cil" || { echo "initramfs: secilc failed on matrix/selinux/minimal.cil" >&2; exit 1; }
fi
if [[ ,$checks, == *,dpprobe,* ]]; then
	mkdir -p "$stage/tests"
	cp "$here/../tests/guest/dirtypipe.sh" "$here/../bench/one_shield.sh" "$stage/tests/"
	cp "$(dirname "$KSHIELD_STATIC")/syscall_loop" "$stage/bin/"
	cp "$FIXTURES"/dirtypipe-probe-*.bpf.o "$stage/fixtures/"
fi
if [[ ,$checks, == *,notramp,* || ,$checks, == *,nokprobe,* ]]; then
	cp "$(dirname "$KSHIELD_STATIC")/notramp" "$stage/bin/"
	cp "$FIXTURES"/notramp.bpf.o "$FIXTURES"/notramp-kprobe.bpf.o "$stage/fixtures/"
fi
if [[ ,$checks, == *,broken,* || ,$checks, == *,broken-as-shield,* ]]; then
	cp "$FIXTURES/broken-shield.bpf.o" "$stage/fixtures/"
	readelf -p .kshield "$FIXTURES/broken-shield.bpf.o" |
		sed -n 's/^ *\[ *[0-9a-f]*\] *name=//p' >"$stage/fixtures/broken-shield.name"
	objs+=("$FIXTURES/broken-shield.bpf.o")
fi

: >"$stage/etc/kshield/modules.load"
: >"$stage/etc/kshield/modules.missing"
declare -A seen=()
# In the metadata's order (a module may need one listed before it at init,
# beyond what modules.dep knows), each name once.
for m in $(for o in "${objs[@]}"; do modules_of "$o"; done | awk '!seen[$0]++'); do
	if [ "$mroot" = - ] || ! deps=$(modprobe -d "$mroot" -S "$kver" --show-depends "$m" 2>/dev/null); then
		echo "$m" >>"$stage/etc/kshield/modules.missing"
		continue
	fi
	while read -r kind path _; do
		[ "$kind" = insmod ] || continue	# "builtin NAME": nothing to load
		rel=${path#"$mroot/$mdir/"}
		rel=${rel%.xz}
		rel=${rel%.zst}
		[ -z "${seen[$rel]:-}" ] || continue
		seen[$rel]=1
		mkdir -p "$(dirname "$stage/$mdir/$rel")"
		case $path in
		*.xz) xz -dc "$path" >"$stage/$mdir/$rel" ;;
		*.zst) zstd -qdc "$path" >"$stage/$mdir/$rel" ;;
		*) cp "$path" "$stage/$mdir/$rel" ;;
		esac
		echo "$rel" >>"$stage/etc/kshield/modules.load"
	done <<<"$deps"
done
# modules.dep for what is in the image, so a request_module() in the guest
# (crypto templates, netfilter families) finds busybox modprobe's way.
[ "$mroot" = - ] || cp "$mroot/$mdir"/modules.builtin* "$mroot/$mdir/modules.order" "$stage/$mdir/" 2>/dev/null || true
depmod -b "$stage" "$kver"

(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$out.tmp"
mv "$out.tmp" "$out"
