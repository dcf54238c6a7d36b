#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dbg.sh - `make matrix-dbg`: shields on inlined kernel functions, proven on
# real kernels. Not part of `make test`: each kernel needs its -dbg package
# (about 280-320 MB), which CI should not download on every run.
#
#   matrix/dbg.sh [--only REGEX] [--out DIR]
#
# For each package of $KSHIELD_DBG_ROWS (default: Debian's 6.1.0-47 and
# 6.12.111 cloud kernels, x86_64, and 6.1.0-47 cloud arm64): download PACKAGE-dbg (SHA256 checked
# against the package index, cached in $KSHIELD_MATRIX_CACHE/debs), extract
# only usr/lib/debug/boot/vmlinux-* (cached in dbg/<package>-<sha:12>/),
# resolve every copy of do_sys_open from its DWARF here on the host and
# export the sites manifest (`kshield sites export`). Then matrix/run.sh
# boots each kernel with check "ksites": tests/guest/kernel-sites.sh counts
# hits per copy for each syscall path, compares a kprobe on the symbol
# alone, kills each path with the fixture shield, and is refused another
# build's manifest (the other row's; with one row, this row's manifest with
# its build ID altered), and refused a forged or unsigned manifest (the
# guest requires manifests signed by a key made here). Prints download,
# extraction and resolution times,
# then the matrix table; results in DIR (default build/matrix-dbg).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
build=$(cd "$top" && mkdir -p "${BUILD:-build}" && cd "${BUILD:-build}" && pwd)
out=$build/matrix-dbg
only=
cache=${KSHIELD_MATRIX_CACHE:-/var/cache/kshield-matrix}
rows=${KSHIELD_DBG_ROWS:-"linux-image-6.1.0-47-cloud-amd64 linux-image-6.12.111+deb12-cloud-amd64 linux-image-6.1.0-47-cloud-arm64"}
fn=do_sys_open

while [ $# -gt 0 ]; do
	case $1 in
	--only) only=$2; shift ;;
	--out) out=$2; shift ;;
	-h|--help|help) sed -n '2,/^set /{/^set /d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) echo "matrix-dbg: unknown option '$1' (see matrix/dbg.sh --help)" >&2; exit 2 ;;
	esac
	shift
done
mkdir -p "$out" "$cache/debs" "$cache/dbg" && out=$(cd "$out" && pwd)
ks=$out/ksites
rm -rf "$ks" && mkdir -p "$ks/sites" "$ks/sites-other" "$ks/by-pkg"
now() { date +%s.%N; }
secs() { printf '%.1f' "$(echo "$2 - $1" | bc)"; }

# vmlinux_of PKG: the -dbg package's vmlinux, downloaded and extracted once.
vmlinux_of() {
	local pkg=$1-dbg darch=amd64 info sha ver parch deb dir t0 t1 t2
	[[ $1 == *-arm64 ]] && darch=arm64
	info=$(apt-cache show --no-all-versions "$pkg:$darch" 2>/dev/null) ||
		{ echo "matrix-dbg: $pkg not in the package index (apt-get update?)" >&2; return 1; }
	sha=$(awk '/^SHA256:/ { print $2; exit }' <<<"$info")
	ver=$(awk '/^Version:/ { print $2; exit }' <<<"$info")
	parch=$(awk '/^Architecture:/ { print $2; exit }' <<<"$info")
	deb=$cache/debs/${pkg}_${ver//:/%3a}_$parch.deb
	dir=$cache/dbg/$1-${sha:0:12}
	if ! ls "$dir"/vmlinux-* >/dev/null 2>&1; then
		t0=$(now)
		if ! [ -f "$deb" ] || [ "$(sha256sum "$deb" | cut -d' ' -f1)" != "$sha" ]; then
			rm -f "$deb"
			(cd "$cache/debs" && apt-get download -q "$pkg:$darch" >/dev/null 2>&1) ||
				{ echo "matrix-dbg: apt-get download $pkg failed" >&2; return 1; }
			[ "$(sha256sum "$deb" | cut -d' ' -f1)" = "$sha" ] ||
				{ echo "matrix-dbg: $deb does not match the index SHA256" >&2; return 1; }
		fi
		t1=$(now)
		rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
		dpkg-deb --fsys-tarfile "$deb" |
			tar -x -C "$dir.tmp" --wildcards --strip-components=5 './usr/lib/debug/boot/vmlinux-*' ||
			{ echo "matrix-dbg: no usr/lib/debug/boot/vmlinux-* in $deb" >&2; return 1; }
		t2=$(now)
		rm -rf "$dir" && mv "$dir.tmp" "$dir"
		echo "matrix-dbg: $pkg: download $(secs "$t0" "$t1") s ($(($(stat -c %s "$deb") / 1000000)) MB), extract vmlinux $(secs "$t1" "$t2") s ($(($(stat -c %s "$dir"/vmlinux-*) / 1000000)) MB)" >&2
	else
		echo "matrix-dbg: $pkg: cached in $dir" >&2
	fi
	ls "$dir"/vmlinux-* | head -1
}

list=$out/kernels.list
: >"$list"
ids=()
for pkg in $rows; do
	[ -z "$only" ] || [[ $pkg =~ $only ]] || continue
	v=$(vmlinux_of "$pkg") || exit 1
	t0=$(now)
	"$build/kshield" sites export "kernel:$fn" --vmlinux "$v" -o "$ks/by-pkg/$pkg.json" ||
		{ echo "matrix-dbg: resolving $fn in $v failed" >&2; exit 1; }
	t1=$(now)
	id=$(jq -r .build_id "$ks/by-pkg/$pkg.json")
	cp "$ks/by-pkg/$pkg.json" "$ks/sites/$id.json"
	echo "matrix-dbg: $pkg: $fn resolved in $(secs "$t0" "$t1") s: $(jq '.functions[0].sites | length' "$ks/sites/$id.json") copies, $(jq '[.functions[0].sites[] | select(.probeable)] | length' "$ks/sites/$id.json") probeable; manifest $(stat -c %s "$ks/sites/$id.json") bytes (vmlinux $(($(stat -c %s "$v") / 1000000)) MB)"
	ids+=("$id")
	arch=x86_64
	[[ $pkg == *-arm64 ]] && arch=aarch64
	echo "$arch $pkg cloud yes ksites" >>"$list"
done
[ ${#ids[@]} -gt 0 ] || { echo "matrix-dbg: no rows selected" >&2; exit 2; }

# Another build's manifest under each kernel's own name: the next row's, or
# with a single row its own with the build ID altered.
for i in "${!ids[@]}"; do
	if [ ${#ids[@]} -gt 1 ]; then
		cp "$ks/sites/${ids[$(((i + 1) % ${#ids[@]}))]}.json" "$ks/sites-other/${ids[$i]}.json"
	else
		jq '.build_id |= (split("") | reverse | join(""))' "$ks/sites/${ids[$i]}.json" \
			>"$ks/sites-other/${ids[$i]}.json"
	fi
done

# Manifests signed (the guest requires signatures: KSHIELD_SITES_KEYS), and
# for the refusals: each kernel's manifest with one offset moved by a byte
# under its original signature (forged), and unsigned.
mkdir -p "$ks/keys" "$ks/sites-forged" "$ks/sites-unsigned"
"$build/kshield" shield keygen "$ks/signer" >/dev/null && cp "$ks/signer.pub" "$ks/keys/" ||
	{ echo "matrix-dbg: can't make a signing key" >&2; exit 1; }
for id in "${ids[@]}"; do
	for d in sites sites-other; do
		"$build/kshield" sites sign "$ks/$d/$id.json" --key "$ks/signer.key" >/dev/null ||
			{ echo "matrix-dbg: can't sign $ks/$d/$id.json" >&2; exit 1; }
	done
	jq '(.functions[0].sites | map(.probeable) | index(true)) as $i
	    | .functions[0].sites[$i].symbol_offset += 1' "$ks/sites/$id.json" >"$ks/sites-forged/$id.json"
	cp "$ks/sites/$id.json.sig" "$ks/sites-forged/"
	cp "$ks/sites/$id.json" "$ks/sites-unsigned/"
done

# The driver and the fixture shield, per arch (an arm64 object for arm64's
# pt_regs; run.sh sets up the cross toolchain and arm64 build first).
mkdir -p "$ks/x86_64" "$ks/aarch64"
gcc -O2 -Wall -static -no-pie "$top/tests/guest/ksites-drv.c" -o "$ks/x86_64/ksites-drv" ||
	{ echo "matrix-dbg: can't build ksites-drv" >&2; exit 1; }
cp "$build/tests/fixtures/kernel-sites.bpf.o" "$ks/x86_64/" ||
	{ echo "matrix-dbg: build the fixture first (make matrix-dbg does)" >&2; exit 1; }
if grep -q '^aarch64 ' "$list"; then
	bash "$top/scripts/setup-arm64.sh" >/dev/null || { echo "matrix-dbg: arm64 set-up failed" >&2; exit 1; }
	make -C "$top" --no-print-directory BUILD="$build" "$build/arm64/vmlinux.h" >/dev/null &&
		make -C "$top" --no-print-directory BUILD="$build/arm64" ARCH=arm64 \
			CC=aarch64-linux-gnu-gcc "$build/arm64/tests/fixtures/kernel-sites.bpf.o" >/dev/null &&
		cp "$build/arm64/tests/fixtures/kernel-sites.bpf.o" "$ks/aarch64/" &&
		aarch64-linux-gnu-gcc -O2 -Wall -static -no-pie "$top/tests/guest/ksites-drv.c" \
			-o "$ks/aarch64/ksites-drv" ||
		{ echo "matrix-dbg: can't build the arm64 fixture or driver" >&2; exit 1; }
fi

t0=$(now)
KSITES=$ks "$here/run.sh" --list "$list" --out "$out"
rc=$?
echo "matrix-dbg: guests $(secs "$t0" "$(now)") s"
jq -r '.[] | select(.check == "ksites") | "matrix-dbg: \(.kernel): \(.status); \(.sites) copies (\(.probeable) probeable); hits " +
	([.hits | to_entries[] | "\(.key)=\([.value[] | "\(.caller)#\(.id):\(.hits)"] | join("+"))"] | join(" ")) +
	"; symbol kprobe " + ([.symbol_hits | to_entries[] | "\(.key)=\(.value)"] | join(" ")) +
	"; killed \(.killed | join(",")); other build refused: \(.mismatch_refused)/\(.mismatch_load_refused); forged/unsigned manifest refused: \(.forged_refused)/\(.unsigned_refused)" +
	(if .bench_ns.bare then "; open+close (TCG, fastest of 3) \(.bench_ns.bare | min) ns bare, \(.bench_ns.kprobe | min) ns with the shield: x\((.bench_ns.kprobe | min) / (.bench_ns.bare | min) * 100 | round / 100)" else "" end) +
	(if .error then "; error: \(.error)" else "" end)' "$out/results.json"
exit $rc
