#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install what kshield needs to build, test and run, from Debian packages only.
# Idempotent: packages already present are not reinstalled; apt-get update runs
# first only when something is missing. Mounts bpffs and tracefs when absent.
#   scripts/setup.sh            build + test + run dependencies
#   KSHIELD_ARM64=1 scripts/setup.sh   also the arm64 cross toolchain and libs
set -euo pipefail

pkgs=(
  make gcc binutils git pkg-config clang-19 llvm-19 bpftool
  libbpf-dev libelf-dev zlib1g-dev libzstd-dev libsqlite3-dev libjson-c-dev libdw-dev
  libcriterion-dev libsodium-dev
  qemu-system-x86 busybox-static cpio xz-utils kmod iproute2 util-linux
  hyperfine sqlite3 iptables strace bc
  dwz debuginfod libdebuginfod-dev elfutils liblzma-dev libbz2-dev
  nats-server libnats-dev postgresql-15 libpq-dev
  pahole   # (was dwarves, now transitional) tests/test_btf.c (t06 --btf_encode_detached), matrix/custom-kernel.sh
  jq   # matrix/: reads the guests' JSON result lines
  secilc   # matrix/: compiles the selinux check's policy (matrix/selinux/minimal.cil)
  libmicrohttpd-dev   # kshield agent --metrics (HTTP /metrics)
  prometheus curl     # tests/test_metrics.c: the real server scrapes the agent; curl asks its API
  chromium chromium-driver   # make test-fleet-ui: the fleet page in a real browser (tests/ui/)
  gnuplot-nox   # bench/soak.sh: the PNG of RSS, store size and events/s
  # static i386 test programs for the compat paths (shields/*/compat/*.c);
  # not gcc-multilib: it would remove the aarch64 cross compiler
  gcc-i686-linux-gnu libc6-dev-i386-cross
  debhelper dpkg-dev man-db systemd   # tests/test_install.c: .deb build, unit and man page checks
)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

# apt-get update runs first, as CI demands; skip it only when nothing is missing.
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup: all packages present"
fi

# Kernel filesystems the loader and tests need.
mountpoint -q /sys/fs/bpf 2>/dev/null || mount -t bpf bpf /sys/fs/bpf
if ! grep -q ' tracefs ' /proc/mounts; then
  mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || \
    mount -t tracefs tracefs /sys/kernel/debug/tracing
fi
# arm64 matrix rows only (matrix/run.sh also calls it when it needs it).
if [ "${KSHIELD_ARM64:-}" = 1 ]; then bash "$(dirname "$0")/setup-arm64.sh"; fi
echo "setup: done"
