#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/time-to-shield.sh SHIELD - the machine part of "a CVE lands, the
# fleet is shielded", timed step by step on this machine:
#
#   build    the shield's object and the kshield that carries its test
#            (shields/SHIELD/ touched first: what an edit costs)
#   host     `kshield test SHIELD` on this machine's kernel
#   matrix   `matrix/run.sh --shield SHIELD` on every row of
#            matrix/kernels.list (TTS_MATRIX="--quick" for the quick rows);
#            warm when every row's kernel is in the cache already (the
#            script says which it was: a cold run is mostly downloads)
#   sign     the object and its proven summary (kshield shield proven)
#   deploy   `fleet deploy --gated` to TTS_CP (1000) control-plane agents
#            on a loopback NATS cluster (tests/fleet/cluster.sh) until all
#            report enforcing: each verifies the object, its signature and
#            the proven summary for its kernel (this one's, from the
#            matrix's host row), no kernel load (bench/fleet.sh measures
#            real agents)
# Prints one line per phase with its seconds and share, and the total
# against the 10-minute goal. The human part (choosing the hook, writing
# the shield and its test) is in each shield's README.
# Env: TTS_MATRIX (extra run.sh options), TTS_CP (1000), TTS_WAIT (600 s),
# TTS_KEEP (copy the work directory there), KSHIELD_MATRIX_CACHE.
set -euo pipefail
cd "$(dirname "$0")/.."
S=${1:-cve-2026-31431}	# `make bench` runs it without one
[ -f "shields/$S/shield.bpf.c" ] || { echo "time-to-shield: no shields/$S/shield.bpf.c" >&2; exit 2; }
CP=${TTS_CP:-1000}
K=$PWD/build/kshield
D=$(mktemp -d /tmp/ks-tts.XXXXXX)
chmod 755 "$D"
pids=()
cleanup() {
	[ -z "${TTS_KEEP:-}" ] || cp -r "$D" "$TTS_KEEP"
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	tests/fleet/cluster.sh stop "$D/c" >/dev/null 2>&1 || true
	rm -rf "$D"
}
trap cleanup EXIT
ms() { date +%s%3N; }
declare -A took
order=()
phase() {	# phase NAME CMD...: run CMD, keep its time, stop on failure
	local name=$1 t0 rc=0
	shift
	t0=$(ms)
	"$@" >"$D/$name.log" 2>&1 || rc=$?
	took[$name]=$(($(ms) - t0))
	order+=("$name")
	if [ $rc != 0 ]; then
		echo "time-to-shield: $name failed (rc=$rc) after ${took[$name]} ms; its log:" >&2
		tail -20 "$D/$name.log" >&2
		exit 1
	fi
}

echo "== time to shield: $S ($(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
# Warm or cold: every row's kernel already in the cache?
cache=${KSHIELD_MATRIX_CACHE:-/var/cache/kshield-matrix}
cold=0
while read -r arch pkg _ quick _; do
	case $arch in x86_64|aarch64) ;; *) continue ;; esac
	[ "$pkg" != host ] || continue
	[[ " ${TTS_MATRIX:-} " != *" --quick "* ]] || [ "$quick" = yes ] || continue
	if [[ $pkg == custom-* ]]; then
		[ -d "$cache/custom/${pkg#custom-}" ] || cold=$((cold + 1))
	else
		compgen -G "$cache/unpacked/$pkg-*" >/dev/null || cold=$((cold + 1))
	fi
done < <(sed 's/#.*//' matrix/kernels.list)

touch "shields/$S/shield.bpf.c" "shields/$S"/test*.c
phase build make -j"$(nproc)" --no-print-directory all static
# "n/a" on this kernel (the bug cannot exist here) is no failure: the
# matrix is the proof.
host_test() {
	local rc=0
	"$K" test "$S" | tee "$D/host.out" || rc=$?
	[ $rc = 0 ] || { [ $rc = 1 ] && grep -q ' n/a' "$D/host.out" && ! grep -qE ' (fail|FAIL)' "$D/host.out"; }
}
phase host host_test
phase matrix matrix/run.sh ${TTS_MATRIX:-} --shield "$S" --out "$D/matrix"
"$K" shield keygen "$D/signer" >/dev/null
mkdir -p "$D/trust" "$D/ship"
cp "$D/signer.pub" "$D/trust/"
cp "build/shields/$S.bpf.o" "$D/ship/"
sign() {
	"$K" shield sign "$D/ship/$S.bpf.o" --key "$D/signer.key" &&
	"$K" shield proven "$D/matrix/results.json" --out "$D/proven" --key "$D/signer.key" &&
	cp "$D/proven/$S.proven.json"* "$D/ship/"
}
phase sign sign

tests/fleet/cluster.sh start "$D/c" >/dev/null
# shellcheck disable=SC1091
. "$D/c/env"
export KSHIELD_FLEET_KEY="$D/signer.key"
"$K" fleet status --nats "$NATS_URLS" >/dev/null	# creates the buckets
setsid "$K" fleet agent --control-plane --instances "$CP" --gated --nats "$HOST_URLS" \
	--keys "$D/trust" --host cp >"$D/cp.log" 2>&1 &
pids+=($!)
for _ in $(seq 900); do
	n=$("$K" -j fleet hosts --nats "$NATS_URLS" 2>/dev/null | jq length 2>/dev/null || echo 0)
	[ "$n" -ge "$CP" ] && break
	sleep 0.2
done
deploy() {
	"$K" fleet deploy "$D/ship/$S.bpf.o" --key "$D/signer.key" --keys "$D/trust" --gated \
		--hosts 'cp-*' --nats "$NATS_URLS" &&
	"$K" fleet wait "$S" --count "$CP" --timeout "${TTS_WAIT:-600}" --nats "$NATS_URLS" ||
	{ "$K" fleet status "$S" --nats "$NATS_URLS"; tail -5 "$D/cp.log"; false; }
}
phase deploy deploy

total=0
for p in "${order[@]}"; do total=$((total + took[$p])); done
for p in "${order[@]}"; do
	printf '%-8s %8.1f s  %4.0f%%\n' "$p" "$(echo "${took[$p]} / 1000" | bc -l)" \
		"$(echo "100 * ${took[$p]} / $total" | bc -l)"
done
printf 'total    %8.1f s  (goal < 600 s; matrix cache %s; %d control-plane agents)\n' \
	"$(echo "$total / 1000" | bc -l)" "$([ "${cold:-0}" = 0 ] && echo warm || echo "cold for $cold rows")" "$CP"
