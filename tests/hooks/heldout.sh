#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/hooks/heldout.sh - `kshield hooks` on bugs it was not built around:
# for each row of tests/hooks/heldout.txt (fix functions of CVEs outside the
# shield library, each with the hook chosen before the finder was run),
# the expected hook must be among the first 5 rows on the Debian -dbg
# builds of 6.1.0-47 and 6.12.111 where the function exists, for at least
# 90% of the rows of each kernel. Run by `make test-heldout`.
#
#   tests/hooks/heldout.sh [--min PERCENT] [--top N] [--table]
#
# --table prints only the table (function, expected, rank per kernel).
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
ks=${KSHIELD:-$here/build/kshield}
list=$here/tests/hooks/heldout.txt
rels="6.1.0-47-cloud-amd64 6.12.111+deb12-cloud-amd64"
min=90 top=5 table=0
while [ $# -gt 0 ]; do
	case $1 in
	--min) min=$2; shift 2 ;;
	--top) top=$2; shift 2 ;;
	--table) table=1; shift ;;
	*) echo "heldout: unknown argument $1 (try --min PERCENT, --top N, --table)" >&2; exit 2 ;;
	esac
done

for rel in $rels; do
	"$here/matrix/dbgtree.sh" "linux-image-$rel" >/dev/null || { echo "heldout: no -dbg tree for $rel" >&2; exit 1; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
t0=$(date +%s.%N)
# one query per (function, kernel), two at a time
grep -v '^#' "$list" | awk -F' *[|] *' 'NF >= 3 { print $1 }' >"$tmp/funcs"
for rel in $rels; do
	sed "s/\$/ $rel/" "$tmp/funcs"
done | xargs -P 2 -n 2 sh -c '"$0" hooks "$2" --kernel "$3" -j >"$1/$2@$3.json" 2>"$1/$2@$3.err"; echo $? >"$1/$2@$3.rc"' "$ks" "$tmp"
secs=$(echo "$(date +%s.%N) - $t0" | bc | cut -c1-5)

fail=0
printf '%-28s %-36s' FUNCTION EXPECTED
for rel in $rels; do printf ' %6s' "${rel%%-*}"; done
echo
declare -A ok total
while IFS='|' read -r fn cve want why; do
	fn=$(echo $fn) want=$(echo $want)
	case $fn in ''|'#'*) continue ;; esac
	k=${want%%:*} name=${want#*:}
	printf '%-28s %-36s' "$fn" "$want"
	for rel in $rels; do
		base=$tmp/$fn@$rel
		if [ "$(cat "$base.rc")" != 0 ]; then
			if grep -q "not built in this kernel" "$base.err"; then
				printf ' %6s' absent
			else
				printf ' %6s' error; fail=1
				echo "heldout: $fn on $rel: $(head -1 "$base.err")" >>"$tmp/errors"
			fi
			continue
		fi
		total[$rel]=$(( ${total[$rel]:-0} + 1 ))
		rank=$(jq -r --arg k "$k" --arg n "$name" \
			'[.kernels[0].rows[] | select(.kind == $k and .name == $n) | .rank][0] // 0' "$base.json")
		if [ "$rank" -ge 1 ] && [ "$rank" -le "$top" ]; then
			ok[$rel]=$(( ${ok[$rel]:-0} + 1 ))
		fi
		printf ' %6s' "$([ "$rank" = 0 ] && echo - || echo "$rank")"
	done
	echo
done <"$list"
[ -f "$tmp/errors" ] && cat "$tmp/errors" >&2
for rel in $rels; do
	n=${total[$rel]:-0} k=${ok[$rel]:-0}
	pct=$(( n ? 100 * k / n : 0 ))
	verdict=pass
	if [ "$n" -eq 0 ] || [ $(( 100 * k )) -lt $(( min * n )) ]; then
		verdict=FAIL
		[ $table = 1 ] || fail=1
	fi
	echo "heldout: $rel: expected hook in the first $top rows for $k of $n ($pct%, want >= $min%): $verdict"
done
echo "heldout: $(wc -l <"$tmp/funcs") functions x 2 kernels in $secs s: $([ $fail = 0 ] && echo pass || echo FAIL)"
exit $fail
