#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# kv-put-raw.sh - put FILE's bytes at KEY of JetStream KV bucket BUCKET with
# a plain NATS publish to $KV.BUCKET.KEY, bypassing kshield: the fleet
# tests' way to tamper with the objects bucket (a value under a sha256 key
# that is not the sha256 of its bytes), as someone with write access to
# the bucket could.
#
#   kv-put-raw.sh nats://USER:PASS@HOST:PORT BUCKET KEY FILE
set -euo pipefail

url=${1:?URL} bucket=${2:?BUCKET} key=${3:?KEY} file=${4:?FILE}
hostport=${url#nats://}
creds=${hostport%@*}
hostport=${hostport#*@}
user=${creds%%:*}
pass=${creds#*:}
size=$(stat -c %s "$file")

exec 3<>"/dev/tcp/${hostport%:*}/${hostport#*:}"
IFS= read -r info <&3	# INFO {...}
case "$info" in INFO*) ;; *) echo "kv-put-raw.sh: not a NATS server: $info" >&2; exit 1 ;; esac
{
	printf 'CONNECT {"user":"%s","pass":"%s","verbose":false,"pedantic":false,"headers":true}\r\n' \
		"$user" "$pass"
	printf 'PUB $KV.%s.%s %d\r\n' "$bucket" "$key" "$size"
	cat "$file"
	printf '\r\nPING\r\n'
} >&3
while IFS= read -r -t 5 line <&3; do
	case "$line" in
	PONG*) exit 0 ;;
	-ERR*) echo "kv-put-raw.sh: $line" >&2; exit 1 ;;
	esac
done
echo "kv-put-raw.sh: no answer from $hostport" >&2
exit 1
