#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# selftest.sh [DIR] - test the kernel matrix itself, on the output of a
# matrix run that just happened (DIR, default build/matrix; `make
# matrix-quick` runs this after matrix/run.sh --quick). Each check can fail:
#
#  1. broken shield: some boot ran the check "broken" (a shield that never
#     refuses its trigger, matrix/fixtures/broken-shield.bpf.c); its row must
#     exist, say trigger_refused=false, and be marked failed (expected-fail).
#  2. the same guest output, read as an ordinary shield result (the tag the
#     guest prints for the check "broken-as-shield"), must give a row with
#     status "fail" and make the matrix's verdict (verdict.jq) fail: a matrix
#     that passed it could not tell a broken shield from a working one.
#  3. bpf left out of lsm=: the "nobpf" boot's probe must show no BPF LSM,
#     and every shield row there must say what happened to its LSM variant:
#     unavailable with the fallback that took over (or none), or a
#     check-failed row when the LSM variant loaded anyway (it cannot enforce
#     there, so the matrix must not count it as a pass).
#  4. every selected kernel produced a rows.json, and results.json agrees.
#  5. path coverage, on a guest's real result line altered two ways: a path
#     the variant claims to prevent that went through (runner error removed)
#     must give a failed row and a failing verdict; a path the variant does
#     not cover must give a "partial" row, never "pass"; a path whose case
#     is not written yet (KS_CASE_TODO, as `kshield shield new` leaves it)
#     must give a "todo" row and a failing verdict.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$here/../build/matrix}
fails=0
ok() { echo "matrix selftest: ok   $*"; }
bad() { echo "matrix selftest: FAIL $*"; fails=$((fails + 1)); }

res=$dir/results.json
[ -s "$res" ] || { echo "matrix selftest: no $res (run matrix/run.sh first)"; exit 1; }

# 1.
n=$(jq '[.[] | select(.check == "broken")] | length' "$res")
if [ "$n" -gt 0 ]; then
	if jq -e '[.[] | select(.check == "broken")]
		  | all(.status == "expected-fail" and .trigger_refused == false and .variant != null)' \
		"$res" >/dev/null; then
		ok "1 broken shield marked failed in $n boot(s): $(jq -r '[.[] | select(.check == "broken")][0].error' "$res")"
	else
		bad "1 broken shield row not marked failed: $(jq -c '[.[] | select(.check == "broken") | {kernel, status, variant, trigger_refused, error}]' "$res")"
	fi
else
	bad "1 no boot ran the broken-shield check (kernels.list: checks column 'broken')"
fi

# 2.
checked=0
for rows in "$dir"/rows/*/rows.json; do
	[ -f "$rows" ] || continue
	d=$(dirname "$rows")
	grep -aq '^KSHIELD-CHECK broken ' "$d/console.log" 2>/dev/null || continue
	checked=1
	k=$(jq -r .kernel.kernel "$rows")
	got=$(sed -n 's/^KSHIELD-CHECK broken /KSHIELD-RESULT /p' "$d/console.log" |
		jq -R -n -f "$here/rows.jq" --arg arch "$(jq -r .kernel.arch "$rows")" \
			--arg package x --arg flavour x --arg checks - --arg kernel "$k" \
			--arg lsm x --arg error "" --arg wall 0 | jq '.rows')
	if [ "$(jq -r '.[0].status' <<<"$got")" = fail ] &&
		! jq -e -f "$here/verdict.jq" <<<"$got" >/dev/null; then
		ok "2 broken shield as an ordinary row on $k: status fail, matrix verdict fails"
	else
		bad "2 broken shield as an ordinary row on $k was not failed: $(jq -c . <<<"$got")"
	fi
	break
done
[ $checked = 1 ] || bad "2 no console output of a broken-shield check to read"

# 3.
n=0
for rows in "$dir"/rows/*+nobpf/rows.json; do
	[ -f "$rows" ] || continue
	n=$((n + 1))
	k=$(jq -r .kernel.kernel "$rows")
	if jq -e '.kernel.probe != null and .kernel.probe.hooks.lsm == false
		  and ((.kernel.probe.lsms // []) | index("bpf")) == null' "$rows" >/dev/null; then
		ok "3 $k: probe reports no BPF LSM ($(jq -c .kernel.probe.lsms "$rows"); lsm hook: $(jq -r '.kernel.probe.hook_errors.lsm // "-"' "$rows"))"
	else
		bad "3 $k: probe does not show BPF LSM off: $(jq -c '{lsms: .kernel.probe.lsms, lsm: .kernel.probe.hooks.lsm, error: .kernel.error}' "$rows")"
	fi
	# Rows whose shield has an LSM variant must carry the verdict on it.
	unexplained=$(jq -c '[.rows[] | select(.shield != null)
		| select([.tried[]? | select(.variant | startswith("lsm"))] | length > 0)
		| select(.lsm_unavailable == null and .status != "check-failed")
		| {shield, variant, status}]' "$rows")
	if [ "$unexplained" = "[]" ]; then
		ok "3 $k: every LSM variant reported: $(jq -r '[.rows[] | select(.shield != null and (.tried | length) > 0)
			| "\(.shield): \(if .lsm_unavailable then "lsm unavailable, fallback \(.fallback)" elif .status == "check-failed" then "LSM variant loaded anyway (\(.status))" else "no lsm variant" end)"] | join("; ")' "$rows")"
	else
		bad "3 $k: LSM variant outcome not reported for $unexplained"
	fi
done
[ $n -gt 0 ] || bad "3 no boot with bpf left out of lsm= (kernels.list: checks column 'nobpf')"

# 4.
nk=$(jq length "$dir/kernels.json")
nr=$(ls "$dir"/rows/*/rows.json 2>/dev/null | wc -l)
if [ "$nk" -gt 0 ] && [ "$nk" = "$nr" ] &&
	jq -e --slurpfile k "$dir/kernels.json" '[.[].kernel] | unique | length == ($k[0] | length)' "$res" >/dev/null; then
	ok "4 $nk kernels, each with rows in results.json"
else
	bad "4 kernels.json ($nk), rows/ ($nr) and results.json disagree"
fi

# 5.
checked=0
for rows in "$dir"/rows/*/rows.json; do
	[ -f "$rows" ] || continue
	d=$(dirname "$rows")
	line=$(grep -a '^KSHIELD-RESULT ' "$d/console.log" 2>/dev/null |
		sed 's/^KSHIELD-RESULT //' | jq -c 'select(.error == null and .trigger_refused == true
			and ([.paths[]? | select(.coverage == "prevents")] | length) > 0)' 2>/dev/null | head -1)
	[ -n "$line" ] || continue
	checked=1
	k=$(jq -r .kernel.kernel "$rows")
	rowsof() {
		sed 's/^/KSHIELD-RESULT /' | jq -R -n -f "$here/rows.jq" --arg arch x --arg package x \
			--arg flavour x --arg checks - --arg kernel "$k" --arg lsm x --arg error "" \
			--arg wall 0 | jq '.rows'
	}
	through=$(jq -c '(.paths | map(select(.coverage == "prevents")) | first | .name) as $n
		| .paths |= map(if .name == $n then .enforce = "passed" | .hit = false else . end)' <<<"$line" | rowsof)
	uncovered=$(jq -c '(.paths | map(select(.coverage == "prevents")) | first | .name) as $n
		| .paths |= map(if .name == $n then .coverage = "none" | .status = "not-covered" else . end)
		| .partial = true | .coverage_note = "\(.variant): \($n) not covered"' <<<"$line" | rowsof)
	todo=$(jq -c '(.paths | map(select(.coverage == "prevents")) | first | .name) as $n
		| .paths |= map(if .name == $n then .status = "not-written" | .enforce = null
				| .coverage = null | .why = "not written yet" else . end)
		| .todo = [$n] | .error = "not written yet: \($n) (test.c)"' <<<"$line" | rowsof)
	s=$(jq -r '.[0].shield' <<<"$through")
	if [ "$(jq -r '.[0].status' <<<"$through")" = fail ] &&
		! jq -e -f "$here/verdict.jq" <<<"$through" >/dev/null; then
		ok "5 $s on $k, a prevented path altered to go through: status fail, verdict fails ($(jq -r '.[0].error' <<<"$through"))"
	else
		bad "5 $s on $k, a prevented path that went through was not failed: $(jq -c '.[0] | {status, error}' <<<"$through")"
	fi
	if [ "$(jq -r '.[0].status' <<<"$uncovered")" = partial ]; then
		ok "5 $s on $k, a path altered to not covered: status partial"
	else
		bad "5 $s on $k, an uncovered path did not make the row partial: $(jq -c '.[0] | {status, error}' <<<"$uncovered")"
	fi
	if [ "$(jq -r '.[0].status' <<<"$todo")" = todo ] &&
		! jq -e -f "$here/verdict.jq" <<<"$todo" >/dev/null; then
		ok "5 $s on $k, a path altered to not written yet: status todo, verdict fails"
	else
		bad "5 $s on $k, a path not written yet did not fail the row: $(jq -c '.[0] | {status, error}' <<<"$todo")"
	fi
	break
done
[ $checked = 1 ] || bad "5 no guest result with a prevented path to alter"

[ $fails = 0 ]
