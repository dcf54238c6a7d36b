#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What the arm64 rows of the kernel matrix need, installed only when they are
# requested (make test runs it: sysnr.sh --check reads the AArch32 headers;
# matrix/run.sh calls this when its selection holds an aarch64
# row; `KSHIELD_ARM64=1 scripts/setup.sh` runs it too): the arm64 foreign
# architecture, the aarch64 cross compiler and the arm64 static libraries
# kshield links (they install beside the amd64 ones), and qemu-system-aarch64.
# busybox for the guest is not installed (busybox-static:arm64 would replace
# the host's): matrix/fetch.sh downloads and unpacks it into the cache.
# Idempotent, like scripts/setup.sh.
set -euo pipefail

pkgs=(
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm
  gcc-arm-linux-gnueabihf libc6-dev-armhf-cross   # AArch32 compat test programs
  libbpf-dev:arm64 libelf-dev:arm64 zlib1g-dev:arm64 libzstd-dev:arm64
  libsqlite3-dev:arm64 libjson-c-dev:arm64 libsodium-dev:arm64
  libdw-dev:arm64 liblzma-dev:arm64 libbz2-dev:arm64
)

export DEBIAN_FRONTEND=noninteractive
updated=0
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "setup-arm64: adding the arm64 architecture"
  dpkg --add-architecture arm64
  apt-get update -qq
  updated=1
fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup-arm64: installing ${missing[*]}"
  [ $updated = 1 ] || apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup-arm64: all packages present"
fi
