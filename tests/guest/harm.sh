#!/bin/sh
# harm.sh - do no harm, on a guest kernel: matrix check `harm`
# (matrix/kernels.list), sourced by matrix/init after the shield tests.
# Syscalls that no shield cares about (getppid, read+write of /dev/zero ->
# /dev/null at 512 B, stat), timed by syscall_loop (bench/syscall_loop.c)
# with nothing loaded and with every bundled shield loaded, alternating,
# two rounds; the least of each; then the monitor alone (the agent with
# --no-shields) against none right after it, and that it recorded a BPF
# load by another process. Prints one "KSHIELD-CHECK harm <json>" line:
# the ratios, the variants that loaded, how the monitor saw its syscalls,
# and ok when a shield loaded, every workload ran both ways and the
# monitor recorded. The
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
# The monitor (the agent without shields), the same workloads against
# none; and that it still records: a BPF program loaded by someone else
# is a 'bpf' event (a watched syscall, by fentry/fexit or tracepoint).
for w in getppid rw512 stat; do eval "m_$w=; n_$w="; done
kshield agent --no-shields --store /tmp/harm.db > /tmp/harm-agent.log 2>&1 &
HA=$!
i=0; while ! grep -q "storing events\|error" /tmp/harm-agent.log && [ $i -lt 300 ]; do sleep 0.2; i=$((i+1)); done
for w in getppid rw512 stat; do eval "m_$w=\$(loop $w)"; done
kshield shield load /shields/cve-2024-0582.bpf.o >/dev/null 2>&1
kshield shield unload cve-2024-0582 >/dev/null 2>&1
sleep 1
kill -TERM $HA; wait $HA
for w in getppid rw512 stat; do eval "n_$w=\$(loop $w)"; done
monsys=$(sed -n 's/.*syscalls by \([a-z/]*\);.*/\1/p' /tmp/harm-agent.log | head -1)
bpfev=$(kshield -j hunt --store /tmp/harm.db --sql "SELECT count(*) AS n FROM events WHERE kind = 'bpf'" 2>>/tmp/harm.err | sed -n 's/.*"n":\([0-9]*\).*/\1/p')
tag "KSHIELD-LOG harm agent:" </tmp/harm-agent.log

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a > 0 && b > 0) printf "%.3f", a / b; else print "null"}'; }
ok=false
[ "$loaded" -gt 0 ] && [ -n "$b_getppid" ] && [ -n "$l_getppid" ] && [ -n "$b_rw512" ] &&
	[ -n "$l_rw512" ] && [ -n "$b_stat" ] && [ -n "$l_stat" ] && [ -n "$m_getppid" ] &&
	[ -n "$monsys" ] && [ "${bpfev:-0}" -ge 1 ] && ok=true
echo "KSHIELD-CHECK harm {\"ok\": $ok, \"shields\": $nshields, \"loaded\": $loaded, \"refused\": \"${refused# }\", \"variants\": \"${variants% }\", \"dispatcher\": \"$dispatch\", \"getppid\": $(ratio "$l_getppid" "$b_getppid"), \"rw512\": $(ratio "$l_rw512" "$b_rw512"), \"stat\": $(ratio "$l_stat" "$b_stat"), \"monitor\": {\"syscalls_by\": \"${monsys:-?}\", \"bpf_events\": ${bpfev:-0}, \"getppid\": $(ratio "$m_getppid" "$n_getppid"), \"rw512\": $(ratio "$m_rw512" "$n_rw512"), \"stat\": $(ratio "$m_stat" "$n_stat")}, \"ns\": {\"getppid\": [${b_getppid:-0}, ${l_getppid:-0}], \"rw512\": [${b_rw512:-0}, ${l_rw512:-0}], \"stat\": [${b_stat:-0}, ${l_stat:-0}]}, \"seconds\": $(awk "BEGIN {print $(up) - $t0}")}"
tag "KSHIELD-LOG harm:" </tmp/harm.err
