#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run.sh - the kernel matrix: prove every shield on real kernels.
#
#   matrix/run.sh [--quick] [--list FILE] [--only REGEX] [--shield NAME[,NAME...]] [--jobs N] [--out DIR]
#
# For each row of matrix/kernels.list (only quick=yes rows with --quick;
# only rows whose package or label matches REGEX with --only): fetch the
# Debian kernel package into the cache (matrix/fetch.sh), build an initramfs
# (matrix/initramfs.sh), boot it under QEMU (matrix/boot.sh), and read the
# tagged lines matrix/init printed (matrix/rows.jq). The "host" row runs
# `kshield test --all -j` on this machine's kernel instead. With --shield
# NAME each guest (and the host row) runs `kshield test NAME -j` only: one
# shield proven on every row selected (the guard and the rows' checks still
# run), as for a shield just written; several, comma-separated, are tested
# one after the other in the same boot:
#   matrix/run.sh --quick --shield cve-2022-0492
#
# Output (DIR, default build/matrix): a table kernel x shield, boot-to-result
# times per kernel, coverage.md (matrix/coverage.jq), results.json (one object per kernel x shield: kernel, arch,
# shield, variant, trigger_refused, benign_ok, load_ms, error, status, ...)
# and kernels.json (one object per boot: times, probe, log).
# Exit status 1 when any row failed or a check of the matrix itself did not
# hold; "unprotected" and "n/a" rows are shown apart and are not passes.
#
# Inputs from the build (`make all static build/matrix/fixtures/broken-shield.bpf.o`;
# `make matrix-quick` and `make matrix` build them before they run this):
# build/static/kshield, build/shields/*.bpf.o, build/matrix/fixtures/*.bpf.o
# (the rows whose checks name broken or broken-as-shield); for aarch64 rows the
# same under build/arm64/ (make static-arm64: cross-built, shields compiled
# for arm64).
# Environment: KSHIELD_MATRIX_CACHE (default /var/cache/kshield-matrix),
# KSHIELD_MATRIX_TIMEOUT (seconds per VM), KSHIELD_MATRIX_JOBS (VMs at once,
# default 2), BUILD (default build), MATRIX_BTF_DIR (the btf_dir kernels
# without BTF get instead of their own full BTF: matrix/initramfs.sh).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
build=$(cd "$top" && mkdir -p "${BUILD:-build}" && cd "${BUILD:-build}" && pwd)
out=$build/matrix
list=$here/kernels.list
quick=0
only=
shield=
jobs=${KSHIELD_MATRIX_JOBS:-2}
export KSHIELD_MATRIX_CACHE=${KSHIELD_MATRIX_CACHE:-/var/cache/kshield-matrix}

while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 ;;
	--list) list=$2; shift ;;
	--only) only=$2; shift ;;
	--shield) [ -z "$shield" ] || { echo "matrix: --shield given twice: one list a run (none: every shield)" >&2; exit 2; }
		shield=$2; shift ;;
	--out) out=$2; shift ;;
	--jobs) jobs=$2; shift ;;
	-h|--help|help) sed -n '2,/^set /{/^set /d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) echo "matrix: unknown option '$1' (see matrix/run.sh --help)" >&2; exit 2 ;;
	esac
	shift
done

# --shield: the object must be built (make all static; its test.c is linked
# into kshield, so kshield must be rebuilt after the shield is added).
# NAME,NAME,...: those shields, one test each, in one boot.
for s in ${shield//,/ }; do
	[[ $s =~ ^[a-z0-9][a-z0-9._-]*$ ]] ||
		{ echo "matrix: bad shield name '$s'" >&2; exit 2; }
	[ -f "$build/shields/$s.bpf.o" ] ||
		{ echo "matrix: no $build/shields/$s.bpf.o: run 'make all static' first" >&2; exit 2; }
done
# The test command's selectors: each shield, or all of them.
test_sels=(--all)
[ -z "$shield" ] || test_sels=(${shield//,/ })

# Rows: arch package flavour quick checks, comments and blanks dropped.
mapfile -t rows < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$list" |
	awk -v q=$quick 'NF >= 5 && (!q || $4 == "yes") { print $1, $2, $3, $4, $5 }')
label_of() {	# label ARCH PACKAGE CHECKS
	local l=${2#linux-image-}
	[ "$2" = host ] && l=host-$(uname -r)
	[[ ,$3, == *,nobpf,* ]] && l="$l+nobpf"
	[[ ,$3, == *,notramp,* ]] && l="$l+notramp"
	[[ ,$3, == *,nokprobe,* ]] && l="$l+nokprobe"
	echo "$l"
}
sel=()
for r in "${rows[@]}"; do
	read -r a p f q c <<<"$r"
	l=$(label_of "$a" "$p" "$c")
	[ -z "$only" ] || [[ $p =~ $only || $l =~ $only ]] || continue
	sel+=("$a $p $f $c $l")
done
[ ${#sel[@]} -gt 0 ] || { echo "matrix: no rows selected from $list" >&2; exit 2; }

t_start=$(date +%s.%N)
mkdir -p "$out" && out=$(cd "$out" && pwd)
rm -rf "$out"/rows "$out"/results.json "$out"/kernels.json
mkdir -p "$out/rows"

# Per-arch inputs; aarch64 ones are built on demand (cross toolchain).
need_arm64=0
for s in "${sel[@]}"; do [[ $s == aarch64\ * ]] && need_arm64=1; done
if [ $need_arm64 = 1 ]; then
	bash "$top/scripts/setup-arm64.sh" || { echo "matrix: arm64 set-up failed" >&2; exit 1; }
	make -C "$top" --no-print-directory BUILD="$build" static-arm64 ||
		{ echo "matrix: arm64 build failed" >&2; exit 1; }
	"$here/fetch.sh" aarch64 busybox-static >/dev/null ||
		{ echo "matrix: busybox-static:arm64 not available" >&2; exit 1; }
fi
inputs_of() {	# sets kshield_bin shields busybox for ARCH
	case $1 in
	x86_64)
		kshield_bin=$build/static/kshield shields=$build/shields
		busybox=$(command -v busybox) ;;
	aarch64)
		kshield_bin=$build/arm64/static/kshield shields=$build/arm64/shields
		busybox=$("$here/fetch.sh" aarch64 busybox-static)/bin/busybox ;;
	esac
}

lsm_of() {	# the boot's lsm=: measured working set, bpf dropped for nobpf, selinux added for the selinux check
	local l=lockdown,capability,landlock
	[[ ,$1, == *,selinux,* ]] && l=$l,selinux
	[[ ,$1, == *,nobpf,* ]] || l=$l,bpf
	echo "$l"
}

rows_jq() {	# rows_jq ARCH PKG FLAVOUR CHECKS LABEL LSM ERROR WALL <lines >json
	jq -R -n -f "$here/rows.jq" --arg arch "$1" --arg package "$2" --arg flavour "$3" \
		--arg checks "$4" --arg kernel "$5" --arg lsm "$6" --arg error "$7" --arg wall "$8"
}

# The host kernel, natively, under a bpffs root of its own.
run_host() {	# ARCH PKG FLAVOUR CHECKS LABEL
	local d=$out/rows/$5 t0 t1 root=/sys/fs/bpf/ks-matrix-$$
	mkdir -p "$d"
	t0=$(date +%s.%N)
	{
		echo "KSHIELD-BOOT 0"
		KSHIELD_BPFFS=$root "$build/kshield" probe -j 2>/dev/null | sed 's/^/KSHIELD-PROBE /'
		: >"$d/stderr"
		for s in "${test_sels[@]}"; do
			KSHIELD_BPFFS=$root "$build/kshield" test "$s" --dir "$build/shields" -j 2>>"$d/stderr"
		done | sed 's/^/KSHIELD-RESULT /'
		sed 's/^/KSHIELD-LOG test: /' "$d/stderr"
		echo "KSHIELD-DONE $(echo "$(date +%s.%N) - $t0" | bc)"
	} >"$d/console.log"
	rm -rf "$root"
	t1=$(date +%s.%N)
	rows_jq "$1" "$2" "$3" "$4" "$5" "" "" "$(echo "$t1 - $t0" | bc)" <"$d/console.log" >"$d/rows.json"
}

# Seconds a boot may take: boot.sh's default, plus what the harm check's
# rounds take under TCG on a busy 2-core machine (tests/guest/harm.sh loads
# every shield and starts the agent twice a round: about 80 s of wall time
# a round on x86-64, 250 s on arm64).
# A KASAN kernel (custom-vulnerable) runs 2-3x slower under TCG: 1800 s
# (its notramp and nokprobe rows timed out at 900 s, 3 and 7 shields short).
timeout_of() {	# ARCH CHECKS PACKAGE
	local t
	if [ -n "${KSHIELD_MATRIX_TIMEOUT:-}" ]; then echo "$KSHIELD_MATRIX_TIMEOUT"; return; fi
	t=300; [ "$1" = aarch64 ] && t=600
	[[ ${3:-} == custom-vulnerable* ]] && t=1800
	if [[ ,$2, == *,harm,* ]]; then
		if [ "$1" = aarch64 ]; then t=$((t + ${KSHIELD_HARM_ROUNDS:-3} * 250))
		else t=$((t + ${KSHIELD_HARM_ROUNDS:-5} * 80)); fi
	fi
	echo "$t"
}

# One kernel package under QEMU.
run_guest() {	# ARCH PKG FLAVOUR CHECKS LABEL
	local d=$out/rows/$5 kdir err="" t0 t1 kshield_bin shields busybox
	mkdir -p "$d"
	: >"$d/console.log"
	t0=$(date +%s.%N)
	if ! kdir=$("$here/fetch.sh" "$1" "$2" 2>"$d/fetch.err"); then
		err="package not available: $(tail -1 "$d/fetch.err")"
	else
		inputs_of "$1"
		if ! BUSYBOX=$busybox KSHIELD_STATIC=$kshield_bin SHIELDS=$shields \
			TEST_SHIELD=$shield FIXTURES=$build/matrix/fixtures \
			"$here/initramfs.sh" "$kdir" "$d/root" "$d/initrd" "$4" 2>"$d/initramfs.err"; then
			err="initramfs: $(tail -1 "$d/initramfs.err")"
		else
			t0=$(date +%s.%N)
			err=$(KSHIELD_MATRIX_TIMEOUT=$(timeout_of "$1" "$4" "$2") "$here/boot.sh" "$1" "$kdir" "$d/initrd" \
				"$(lsm_of "$4")" "$d/console.log")
		fi
	fi
	t1=$(date +%s.%N)
	rows_jq "$1" "$2" "$3" "$4" "$5" "$(lsm_of "$4")" "$err" "$(echo "$t1 - $t0" | bc)" \
		<"$d/console.log" >"$d/rows.json"
}

# Fetch every package first, one at a time: rows sharing a package must not
# unpack it twice at once, and downloads are network-bound anyway.
for s in "${sel[@]}"; do
	read -r a p f c l <<<"$s"
	[ "$p" = host ] && continue
	"$here/fetch.sh" "$a" "$p" >/dev/null 2>&1 || true	# run_guest reports the failure
done

echo "matrix: ${#sel[@]} kernel rows, $jobs at a time (cache $KSHIELD_MATRIX_CACHE)"
# Start order: the host (natively, alone), then aarch64 boots (the slowest,
# so they do not start last), then x86_64. Results are merged in list order.
order=()
for s in "${sel[@]}"; do [[ $s == *\ host\ * ]] && order+=("$s"); done
for s in "${sel[@]}"; do [[ $s == aarch64\ * && $s != *\ host\ * ]] && order+=("$s"); done
for s in "${sel[@]}"; do [[ $s != aarch64\ * && $s != *\ host\ * ]] && order+=("$s"); done
running=0
for s in "${order[@]}"; do
	read -r a p f c l <<<"$s"
	if [ "$p" = host ]; then
		run_host "$a" "$p" "$f" "$c" "$l"	# alone: it shares this machine's cores
		continue
	fi
	run_guest "$a" "$p" "$f" "$c" "$l" &
	running=$((running + 1))
	if [ $running -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait

# Merge in list order.
for s in "${sel[@]}"; do
	read -r a p f c l <<<"$s"
	cat "$out/rows/$l/rows.json"
done | jq -s 'map(.rows) | add' >"$out/results.json"
for s in "${sel[@]}"; do
	read -r a p f c l <<<"$s"
	cat "$out/rows/$l/rows.json"
done | jq -s 'map(.kernel)' >"$out/kernels.json"

jq -r -f "$here/table.jq" --slurpfile kernels "$out/kernels.json" "$out/results.json"
# The coverage table (kernel x shield: variant, status, vulnerable), printed
# and kept beside the results; `make matrix` copies it to docs/coverage.md.
jq -r -f "$here/coverage.jq" --rawfile live "$here/live-bugs.tsv" "$out/results.json" >"$out/coverage.md"
echo
cat "$out/coverage.md"
echo "matrix: results in $out/results.json, coverage table in $out/coverage.md"
echo "matrix: $(jq length "$out/kernels.json") boots, $(printf '%.0f' "$(echo "$(date +%s.%N) - $t_start" | bc)") s"
jq -e -f "$here/verdict.jq" "$out/results.json" >/dev/null
