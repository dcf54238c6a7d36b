#!/bin/sh
# harm.sh - do no harm, on a guest kernel: matrix check `harm`
# (matrix/kernels.list), sourced by matrix/init after the shield tests.
# Syscalls that no shield cares about (getppid, read+write of /dev/zero ->
# /dev/null at 512 B, stat), timed by syscall_loop (bench/syscall_loop.c)
# with nothing loaded and with every bundled shield loaded, alternating,
# two rounds; the least of each. Prints one "KSHIELD-CHECK harm <json>"
# line: the ratios, the variants that loaded, and ok when every shield
# that has a variant here loaded and every workload ran both ways. The
# ratios are reported, not judged: under TCG a neighbour's burst is enough
# to move them (bench/harm.sh is where they are compared).
t0=$(up)
N=${HARM_N:-20000}
loop() { syscall_loop "$1" "$N" 3 2>/dev/null; }
unload_all() {
	for d in "$KSHIELD_BPFFS"/shields/*/; do
		[ -d "$d" ] && kshield shield unload "$(basename "$d")" >/dev/null 2>&1
	done
}
unload_all
nshields=$(ls /shields/*.bpf.o | wc -l)
loaded=0; refused=""
for f in /shields/*.bpf.o; do
	if kshield shield load "$f" >/dev/null 2>>/tmp/harm.err; then
		loaded=$((loaded + 1))
	else
		refused="$refused $(basename "$f" .bpf.o)"
	fi
done
variants=$(kshield -j shield list 2>/dev/null | tr '{' '\n' | sed -n 's/.*"name":"\([^"]*\)".*"variant":"\([^"]*\)".*/\1=\2/p' | tr '\n' ' ')
dispatch=$(kshield status 2>/dev/null | sed -n 's/^syscalls: *//p')
unload_all
best() { awk -v a="$1" -v b="$2" 'BEGIN {print (a == "" || b + 0 < a + 0) ? b : a}'; }
for w in getppid rw512 stat; do eval "b_$w=; l_$w="; done
for r in 1 2; do
	for w in getppid rw512 stat; do eval "b_$w=\$(best \"\$b_$w\" \"\$(loop $w)\")"; done
	for f in /shields/*.bpf.o; do kshield shield load "$f" >/dev/null 2>&1; done
	for w in getppid rw512 stat; do eval "l_$w=\$(best \"\$l_$w\" \"\$(loop $w)\")"; done
	unload_all
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a > 0 && b > 0) printf "%.3f", a / b; else print "null"}'; }
ok=false
[ "$loaded" -gt 0 ] && [ -n "$b_getppid" ] && [ -n "$l_getppid" ] && [ -n "$b_rw512" ] &&
	[ -n "$l_rw512" ] && [ -n "$b_stat" ] && [ -n "$l_stat" ] && ok=true
echo "KSHIELD-CHECK harm {\"ok\": $ok, \"shields\": $nshields, \"loaded\": $loaded, \"refused\": \"${refused# }\", \"variants\": \"${variants% }\", \"dispatcher\": \"$dispatch\", \"getppid\": $(ratio "$l_getppid" "$b_getppid"), \"rw512\": $(ratio "$l_rw512" "$b_rw512"), \"stat\": $(ratio "$l_stat" "$b_stat"), \"ns\": {\"getppid\": [${b_getppid:-0}, ${l_getppid:-0}], \"rw512\": [${b_rw512:-0}, ${l_rw512:-0}], \"stat\": [${b_stat:-0}, ${l_stat:-0}]}, \"seconds\": $(awk "BEGIN {print $(up) - $t0}")}"
tag "KSHIELD-LOG harm:" </tmp/harm.err
