#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/hooks/bar.sh - `kshield hooks` on real kernels' DWARF: for each
# bundled shield of a kernel bug, the finder, given the shield's
# fix_function, must list the shield's own hook among its first rows on
# the Debian -dbg builds of 6.1.0-47 and 6.12.111 (the matrix's dbg cache;
# matrix/dbgtree.sh fills it when missing). Run by `make test-host`.
#
# Each row: shield, release, the row expected (kind:name), the worst rank
# allowed, and whether it is one of the shield's own hooks ("own") or a
# known gap ("gap: why"): a gap row holds the finder to what it finds today
# (so a regression still fails) while saying the bar is not met there.
# "absent" rows expect the functions not to be built in that kernel.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
ks=${KSHIELD:-$here/build/kshield}
export KSHIELD_SHIELDS=${KSHIELD_SHIELDS:-$here/build/shields}
r61=6.1.0-47-cloud-amd64
r612=6.12.111+deb12-cloud-amd64

table="
cve-2021-22555 $r61  lsm:socket_setsockopt       5 own
cve-2021-22555 $r612 absent                      0 own: x_tables compat translation not built in 6.12 (CONFIG_NETFILTER_XTABLES_COMPAT off)
cve-2022-0185  $r61  lsm:fs_context_parse_param  5 own
cve-2022-0185  $r612 lsm:fs_context_parse_param  5 own
cve-2022-2588  $r61  lsm:netlink_send            5 own
cve-2022-2588  $r612 lsm:netlink_send            5 own
cve-2023-32233 $r61  lsm:netlink_send            5 own
cve-2023-32233 $r612 lsm:netlink_send            5 own
cve-2024-0582  $r61  syscall:io_uring_register   5 own
cve-2024-0582  $r612 lsm:mmap_file               5 own
cve-2024-1086  $r61  lsm:netlink_send            5 own
cve-2024-1086  $r612 lsm:netlink_send            5 own
cve-2026-31431 $r61  lsm:socket_recvmsg          5 gap: the fix changed the recvmsg side; the shield refuses the splice that feeds it (socket_sendmsg, file_permission), not on a path to the changed code
cve-2026-31431 $r612 lsm:socket_recvmsg          5 gap: as on 6.1
cve-2026-43284 $r61  lsm:socket_sendmsg          5 own
cve-2026-43284 $r612 lsm:socket_sendmsg          5 own
cve-2026-43500 $r61  absent                      0 own: rxrpc is not in Debian's cloud flavour
cve-2026-43500 $r612 absent                      0 own: rxrpc is not in Debian's cloud flavour
cve-2022-0847  $r61  syscall:io_submit            6 gap: the shield's nearest hook is its tp io_submit (6); its file_permission is unlisted (the call sits in rw_verify_area, one out-of-line call off the path, where the finder does not look), and it refuses the write that merges, not the splice-side path to the changed code
cve-2022-0847  $r612 absent                      0 own: the pipe iov_iter (copy_page_to_iter_pipe, push_pipe) is gone by 6.12; the shield loads only before 5.17
cve-2022-0492  $r61  lsm:fs_context_parse_param  5 own
cve-2022-0492  $r612 lsm:fs_context_parse_param  5 own
cve-2022-1015  $r61  lsm:netlink_send            5 own
cve-2022-1015  $r612 lsm:netlink_send            5 own
cve-2022-32250 $r61  lsm:netlink_send            5 own
cve-2022-32250 $r612 lsm:netlink_send            5 own
cve-2021-4034  $r61  syscall:execve              5 gap: a user-space bug; fix_function is the kernel's argc hardening, and the shield's hooks (bprm_creds_from_file, sched_process_exec) run inside it, not on a path to it
cve-2021-4034  $r612 syscall:execve              5 gap: as on 6.1
"

for rel in $r61 $r612; do
	"$here/matrix/dbgtree.sh" "linux-image-$rel" >/dev/null || { echo "hooks-bar: no -dbg tree for $rel" >&2; exit 1; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0 t0=$(date +%s.%N)
printf '%-15s %-27s %-28s %5s %6s  %s\n' SHIELD KERNEL EXPECTED RANK SECS VERDICT
while read -r shield rel want maxrank kind rest; do
	[ -n "$shield" ] || continue
	n=$((n + 1))
	out=$tmp/$shield-$rel.json
	s0=$(date +%s.%N)
	"$ks" hooks --shield "$shield" --kernel "$rel" -j >"$out" 2>"$tmp/err"
	rc=$?
	secs=$(echo "$(date +%s.%N) - $s0" | bc)
	if [ "$want" = absent ]; then
		if [ $rc -ne 0 ] && grep -q "not built in this kernel" "$tmp/err"; then
			verdict="ok (absent: ${rest:-})"
		else
			verdict="FAIL: expected the functions to be absent, got rc $rc"; fail=1
		fi
		printf '%-15s %-27s %-28s %5s %6.1f  %s\n' "$shield" "$rel" "$want" - "$secs" "$verdict"
		continue
	fi
	if [ $rc -ne 0 ]; then
		printf '%-15s %-27s %-28s %5s %6.1f  FAIL: %s\n' "$shield" "$rel" "$want" - "$secs" "$(cat "$tmp/err")"
		fail=1
		continue
	fi
	k=${want%%:*} name=${want#*:}
	rank=$(jq -r --arg k "$k" --arg n "$name" \
		'[.kernels[0].rows[] | select(.kind == $k and .name == $n) | .rank][0] // 0' "$out")
	own=$(jq -r --arg k "$k" --arg n "$name" \
		'[.shield.hooks[] | select(.kind == $k and .name == $n)] | length' "$out")
	if [ "$rank" -lt 1 ] || [ "$rank" -gt "$maxrank" ]; then
		verdict="FAIL: rank $rank, want 1..$maxrank; first rows: $(jq -r '[.kernels[0].rows[:5][] | "\(.kind):\(.name)"] | join(" ")' "$out"); lost: $(jq -r '.kernels[0].lost[:2] | join("; ")' "$out")"
		fail=1
	elif [ "$kind" = own ] && [ "$own" -eq 0 ]; then
		verdict="FAIL: $want is not one of the shield's hooks"; fail=1
	elif [ "$kind" = own ]; then
		verdict="ok (the shield's own hook)"
	else
		verdict="known ${kind%:} ${rest}"
	fi
	printf '%-15s %-27s %-28s %5s %6.1f  %s\n' "$shield" "$rel" "$want" "$rank" "$secs" "$verdict"
done <<<"$table"
echo "hooks-bar: $n rows in $(echo "$(date +%s.%N) - $t0" | bc | cut -c1-5) s: $([ $fail = 0 ] && echo pass || echo FAIL)"
exit $fail
