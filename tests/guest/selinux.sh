#!/bin/sh
# SPDX-License-Identifier: MIT
# selinux.sh - matrix check `selinux` (matrix/kernels.list), sourced by
# matrix/init after the shield tests, on a boot with selinux in lsm=
# (matrix/run.sh): an fmod_ret program that says "no decision" with
# anything but 0 makes the kernel skip every other LSM's hook. On
# security_fs_context_parse_param that sends SELinux's mount parameters to
# the file system, which refuses them: labelled mounts break on SELinux
# hosts whose kernels lack BPF LSM (issue 24). Loads the matrix's policy
# (matrix/selinux/minimal.cil, compiled on the host), mounts a tmpfs with
# context= by fsconfig and by mount(2) (mount_context), with nothing loaded
# and then with every bundled shield loaded, and prints one
# "KSHIELD-CHECK selinux <json>" line: ok when the policy loaded and both
# ways gave the mount its label both times.
t0=$(up)
ctx=system_u:object_r:tmpfs_t:s0
policy=false
mkdir -p /sys/fs/selinux
mount -t selinuxfs selinuxfs /sys/fs/selinux 2>>/tmp/selinux.err
if [ -w /sys/fs/selinux/load ] && cat /etc/kshield/selinux.policy >/sys/fs/selinux/load 2>>/tmp/selinux.err; then
	policy=true
fi
[ "$policy" = true ] || dmesg | grep -i selinux | tail -5 >>/tmp/selinux.err
enforce=$(cat /sys/fs/selinux/enforce 2>/dev/null)
for d in "$KSHIELD_BPFFS"/shields/*/; do
	[ -d "$d" ] && kshield shield unload "$(basename "$d")" >/dev/null 2>&1
done
none=$(mount_context "$ctx" /tmp/selinux-mnt 2>>/tmp/selinux.err)
loaded=0
for f in /shields/*.bpf.o; do
	kshield shield load "$f" >/dev/null 2>>/tmp/selinux.err && loaded=$((loaded + 1))
done
variants=$(kshield -j shield list 2>/dev/null | tr '{' '\n' | sed -n 's/.*"name":"\([^"]*\)".*"variant":"\([^"]*\)".*/\1=\2/p' | tr '\n' ' ')
with=$(mount_context "$ctx" /tmp/selinux-mnt 2>>/tmp/selinux.err)
for d in "$KSHIELD_BPFFS"/shields/*/; do
	[ -d "$d" ] && kshield shield unload "$(basename "$d")" >/dev/null 2>&1
done
ok=false
case "$none$with" in
'{"ok": true'*'{"ok": true'*) [ "$policy" = true ] && [ "$loaded" -gt 0 ] && ok=true ;;
esac
echo "KSHIELD-CHECK selinux {\"ok\": $ok, \"policy_loaded\": $policy, \"enforce\": \"${enforce:-?}\", \"loaded\": $loaded, \"variants\": \"${variants% }\", \"none\": ${none:-null}, \"shields\": ${with:-null}, \"seconds\": $(awk "BEGIN {print $(up) - $t0}")}"
tag "KSHIELD-LOG selinux:" </tmp/selinux.err
