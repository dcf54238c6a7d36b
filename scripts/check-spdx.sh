#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check-spdx.sh [--apply] - every source file names its licence on an SPDX
# line in its first three lines, and the licence its folder calls for
# (LICENSE says why):
#   GPL-2.0-only               what loads into the kernel: bpf/, *.bpf.c,
#                              *.bpf.h (the BPF side uses GPL-only helpers)
#   LGPL-2.1 OR BSD-2-Clause   headers shared by the BPF side and user space:
#                              include/kshield/, shields/*/*.h
#   MIT                        everything else: user space, tests, scripts
# Source files: *.c *.h *.sh *.py *.jq, Makefiles, and tracked files that
# start with "#!". Kernel patches (*.patch) carry the kernel's licence and
# are not checked. --apply adds the line where it is missing (after a
# shebang; "//" in .c files, "/* */" in headers, "#" in the rest).
set -euo pipefail
cd "$(dirname "$0")/.."
apply=0
[ "${1:-}" = --apply ] && apply=1

licence_of() {
	case $1 in
	*.patch) echo - ;;
	bpf/*|*.bpf.c|*.bpf.h) echo GPL-2.0-only ;;
	include/kshield/*.h|shields/*/*.h) echo "LGPL-2.1 OR BSD-2-Clause" ;;
	*) echo MIT ;;
	esac
}
is_source() {
	case $1 in
	*.c|*.h|*.sh|*.py|*.jq|Makefile|*.mk) return 0 ;;
	*.md|*.png|*.csv|*.patch|*.json|*.tsv) return 1 ;;
	esac
	[ "$(head -c2 "$1" 2>/dev/null)" = '#!' ]
}

fail=0 n=0
while IFS= read -r -d '' f; do
	[ -f "$f" ] && is_source "$f" || continue
	want=$(licence_of "$f")
	[ "$want" = - ] && continue
	n=$((n + 1))
	have=$(head -3 "$f" | sed -n 's/.*SPDX-License-Identifier: *\(.*[^ */]\) *\(\*\/\)\? *$/\1/p' | head -1)
	[ "$have" = "$want" ] && continue
	if [ $apply = 1 ] && [ -z "$have" ]; then
		case $f in
		*.c) line="// SPDX-License-Identifier: $want" ;;
		*.h) line="/* SPDX-License-Identifier: $want */" ;;
		*) line="# SPDX-License-Identifier: $want" ;;
		esac
		if [ "$(head -c2 "$f")" = '#!' ]; then
			sed -i "1a $line" "$f"
		else
			sed -i "1i $line" "$f"
		fi
		continue
	fi
	if [ -z "$have" ]; then
		echo "check-spdx: $f has no SPDX-License-Identifier line in its first 3 lines: add '$want' (scripts/check-spdx.sh --apply)" >&2
	else
		echo "check-spdx: $f says '$have', its folder's licence is '$want' (see LICENSE)" >&2
	fi
	fail=1
done < <(git ls-files -z)
[ $fail = 0 ] && [ $apply = 0 ] && echo "check-spdx: $n source files, each with its SPDX line"
exit $fail
