#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Install what chacharng needs on Debian 12 (or newer), and only what is
# missing.  `deps.sh` is enough to build and run; `deps.sh --all` adds what
# the whole test suite uses (valgrind, clang/libFuzzer, cross compilers and
# qemu, debootstrap, statistical batteries, shellcheck, and what builds and
# checks the Debian package: debhelper, dpkg-dev, fakeroot, lintian), and
# python3-matplotlib for `make plot` (the bench itself needs nothing more).
set -eu

build_pkgs=(build-essential autoconf autoconf-archive automake libtool
            pkg-config libssl-dev openssl)
test_pkgs=(valgrind clang clang-format libclang-rt-14-dev shellcheck dieharder rng-tools5
           groff-base debootstrap qemu-user gcc-aarch64-linux-gnu
           libc6-dev-arm64-cross gcc-s390x-linux-gnu libc6-dev-s390x-cross
           libssl-dev:arm64 llvm-19
           gcc-powerpc64le-linux-gnu libc6-dev-ppc64el-cross libssl-dev:ppc64el
           gcc-riscv64-linux-gnu libc6-dev-riscv64-cross
           debhelper dpkg-dev fakeroot lintian acl attr
           piuparts autopkgtest
           python3-matplotlib)

want=("${build_pkgs[@]}")
if [ "${1:-}" = "--all" ]; then
    want+=("${test_pkgs[@]}")
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
    as_root=(sudo)
fi

# the foreign architectures whose libssl-dev co-installs with the host's
# on Debian 12 (arm64, ppc64el; not s390x, whose security updates lag)
for arch in arm64 ppc64el; do
    case " ${want[*]} " in
    *":$arch "*)
        if ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
            "${as_root[@]}" dpkg --add-architecture "$arch"
            need_update=1
        fi ;;
    esac
done

missing=()
for p in "${want[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null \
        | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done

if [ ${#missing[@]} -gt 0 ] || [ -n "${need_update:-}" ]; then
    "${as_root[@]}" apt-get update
fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}"
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y --no-install-recommends "${missing[@]}"
fi

# Debian 13's qemu-user, unpacked aside, for the RVV kernel's Zvkb path
# (.ci/qemu-trixie.sh); without it that one run is skipped, not failed.
if [ "${1:-}" = "--all" ]; then
    bash "$(dirname "$0")/qemu-trixie.sh" \
        || echo "deps: Debian 13's qemu-user not fetched: the Zvkb run skips"
fi
