#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check-layers.sh - the layers of the code, checked by `make test`:
#  1. code under src/lib never includes a command header (src/cmd/*.h);
#  2. it never writes to stdout or stderr itself (it returns errors
#     through err.h and says things through log.h, whose log.c is the one
#     exception);
#  3. inside src/lib, a subsystem includes headers of its own and of the
#     subsystems before it in ORDER below, never of one after it (headers
#     are included by bare name, every folder is on the include path, and
#     header names are unique across folders: the name says the folder).
# Prints each offending line; exit 1 if there is any.
set -uo pipefail
cd "$(dirname "$0")/.."

# The library's subsystems, lowest first: each may use those before it.
ORDER="base bpffs debuginfo kernel meta events store trust sites hooks dispatch guard
       monitor shield shieldtest selfdefence metrics fleet"

bad=0
cmd_hdrs=$(cd src/cmd && ls *.h | paste -sd'|')
if out=$(grep -nE "#include \"($cmd_hdrs)\"" -r src/lib); then
	echo "check-layers: library code includes a command header:"; echo "$out"; bad=1
fi
# printf-family and friends aimed at the standard streams.
pat='(^|[^a-z_])(printf|vprintf|puts|putchar|perror)\(|f(v?printf|puts|putc|write)\([^;]*\b(stdout|stderr)\b'
if out=$(grep -nE "$pat" -r src/lib --include='*.c' | grep -v '^src/lib/base/log\.c:'); then
	echo "check-layers: library code writes to stdout/stderr (return an error, or use ks_log):"; echo "$out"; bad=1
fi

# rank of each subsystem, folder of each header
declare -A rank folder
i=0
for s in $ORDER; do rank[$s]=$i; i=$((i + 1)); done
for d in src/lib/*/; do
	s=$(basename "$d")
	if [ -z "${rank[$s]+x}" ]; then
		echo "check-layers: src/lib/$s is not in the subsystem order: add it to ORDER in $0"; bad=1
	fi
	for h in "$d"*.h; do
		[ -e "$h" ] || continue
		n=$(basename "$h")
		if [ -n "${folder[$n]+x}" ]; then
			echo "check-layers: $n is in both src/lib/${folder[$n]} and src/lib/$s: header names are unique"; bad=1
		fi
		folder[$n]=$s
	done
done
maps=$(for s in "${!rank[@]}"; do echo "r $s ${rank[$s]}"; done
      for n in "${!folder[@]}"; do echo "f $n ${folder[$n]}"; done)
up=$(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' src/lib/*/*.[ch] |
     awk -v maps="$maps" '
	BEGIN {
		n = split(maps, m, "\n")
		for (i = 1; i <= n; i++) {
			split(m[i], w, " ")
			if (w[1] == "r") rank[w[2]] = w[3]; else folder[w[2]] = w[3]
		}
	}
	{
		split($0, p, ":"); file = p[1]; line = p[2]
		h = $0; sub(/^[^"]*"/, "", h); sub(/".*/, "", h)
		from = file; sub(/\/[^\/]*$/, "", from); sub(/.*\//, "", from)
		to = folder[h]
		if (to != "" && (from in rank) && (to in rank) && rank[to] + 0 > rank[from] + 0)
			printf "%s:%s: %s includes %s of %s, a higher subsystem\n", file, line, from, h, to
	}')
if [ -n "$up" ]; then
	echo "check-layers: an include climbs the library's order ($(echo $ORDER)):"
	echo "$up"; bad=1
fi
[ $bad = 0 ] && echo "check-layers: src/lib includes no command header, prints nothing, and each subsystem includes only its own and lower ones"
exit $bad
