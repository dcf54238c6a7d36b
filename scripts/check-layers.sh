#!/usr/bin/env bash
# check-layers.sh - the boundary between commands and the library, checked
# by `make test`: code under src/lib never includes a command header
# (src/cmd/*.h) and never writes to stdout or stderr itself (it returns
# errors through err.h and says things through log.h, whose log.c is the
# one exception). Prints each offending line; exit 1 if there is any.
set -uo pipefail
cd "$(dirname "$0")/.."

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
[ $bad = 0 ] && echo "check-layers: src/lib includes no command header and prints nothing"
exit $bad
