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
# --as PATH FILE checks one FILE written elsewhere as if it were the
# tracked PATH (tests/unit/test_scaffold.c: what `kshield shield new`
# writes into shields/NAME/).
set -euo pipefail
as=
if [ "${1:-}" = --as ]; then
	[ $# = 3 ] || { echo "usage: check-spdx.sh --as PATH FILE" >&2; exit 2; }
	[ -f "$3" ] || { echo "check-spdx: $3: no such file" >&2; exit 1; }
	as=$2
	file=$(realpath "$3")
fi
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
# $1: the path (its name decides), $2: the file to read (a shebang)
is_source() {
	case $1 in
	*.c|*.h|*.sh|*.py|*.jq|Makefile|*.mk) return 0 ;;
	*.md|*.png|*.csv|*.patch|*.json|*.tsv) return 1 ;;
	esac
	[ "$(head -c2 "$2" 2>/dev/null)" = '#!' ]
}

# List the files to check, NUL-separated, as "PATH FILE" pairs.
files() {
	if [ -n "$as" ]; then
		printf '%s\0%s\0' "$as" "$file"
	else
		git ls-files -z | while IFS= read -r -d '' f; do printf '%s\0%s\0' "$f" "$f"; done
	fi
}

fail=0 n=0
while IFS= read -r -d '' p && IFS= read -r -d '' f; do
	[ -f "$f" ] && is_source "$p" "$f" || continue
	want=$(licence_of "$p")
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
done < <(files)
[ $fail = 0 ] && [ $apply = 0 ] && echo "check-spdx: $n source files, each with its SPDX line"
exit $fail
