#!/bin/sh
# SPDX-License-Identifier: MIT
# allow.sh - manage the userns-policy shield's allow-list with bpftool.
#   allow.sh add PATH...     allow these executables to create user namespaces
#   allow.sh del PATH...     remove them
#   allow.sh list            show the entries (raw)
# The map exists once the shield has been loaded (it is pinned by name and
# survives reloads). Root of the bpffs tree: $KSHIELD_BPFFS or
# /sys/fs/bpf/kshield. Entries are keyed by the kernel's device number and
# the inode of PATH (see allow.h); the value is PATH's file name. Replacing a
# binary (package upgrade) gives it a new inode: add it again.
set -eu
root=${KSHIELD_BPFFS:-/sys/fs/bpf/kshield}
map=$root/maps/ks_userns_allow

# hex bytes of an unsigned little-endian integer of $2 bytes
le() { v=$1; n=$2; out=""; i=0
  while [ $i -lt $n ]; do out="$out $(printf '%02x' $((v & 255)))"; v=$((v >> 8)); i=$((i + 1)); done
  echo "$out"; }

key() {
  dev=$(stat -L -c '%d' "$1"); ino=$(stat -L -c '%i' "$1")
  # glibc's dev_t encoding -> the kernel's (major << 20 | minor)
  major=$(( ((dev >> 8) & 0xfff) | ((dev >> 32) & ~0xfff) ))
  minor=$(( (dev & 0xff) | ((dev >> 12) & ~0xff) ))
  echo "hex $(le $(( (major << 20) | minor )) 4) $(le 0 4) $(le $ino 8)"
}

val() {
  name=$(basename "$(readlink -f "$1")")
  hex=$(printf '%s' "$name" | head -c 63 | od -An -tx1 | tr -s ' \n' '  ')
  pad=$((64 - $(printf '%s' "$name" | head -c 63 | wc -c)))
  echo "hex $hex $(i=0; while [ $i -lt $pad ]; do printf '00 '; i=$((i + 1)); done)"
}

cmd=${1:-}; [ $# -gt 0 ] && shift
case $cmd in
add) for p; do bpftool map update pinned "$map" key $(key "$p") value $(val "$p"); echo "allowed $p"; done ;;
del) for p; do bpftool map delete pinned "$map" key $(key "$p"); echo "removed $p"; done ;;
list) bpftool map dump pinned "$map" ;;
*) sed -n '2,10p' "$0"; exit 2 ;;
esac
