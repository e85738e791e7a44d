#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# A newer qemu-user beside Debian 12's, for what qemu 7.2 cannot emulate:
# RISC-V's Zvkb (the RVV kernel's vror path) and riscv_hwprobe (which
# reports it).  Debian 13's qemu-user package is downloaded from the
# Debian archive, checked against the archive keyring, and unpacked (not
# installed) into $CHACHARNG_QEMU_DIR (default /var/tmp/chacharng-qemu);
# its emulators are static-pie programs, so they run on Debian 12.  Does
# nothing when they are there already.  .ci/cross.sh riscv64 uses
# $CHACHARNG_QEMU_DIR/usr/bin/qemu-riscv64 where it exists.
#
# Usage: .ci/qemu-trixie.sh
set -eu

dir=${CHACHARNG_QEMU_DIR:-/var/tmp/chacharng-qemu}
[ -x "$dir/usr/bin/qemu-riscv64" ] && exit 0

arch=$(dpkg --print-architecture)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial"
echo "deb [arch=$arch signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
    "http://deb.debian.org/debian trixie main" > "$work/sources.list"
# apt on a private list and cache: the host's own apt state stays as it is
apt_private=(-o "Dir::Etc::sourcelist=$work/sources.list"
             -o Dir::Etc::sourceparts=/nonexistent
             -o "Dir::State::Lists=$work/lists"
             -o "Dir::Cache=$work/cache"
             -o "APT::Architecture=$arch" -o "APT::Architectures=$arch"
             -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
apt-get "${apt_private[@]}" -qq update
(cd "$work" && apt-get "${apt_private[@]}" -qq download qemu-user)
mkdir -p "$dir.new"
dpkg-deb -x "$work"/qemu-user_*.deb "$dir.new"
rm -rf "$dir"
mv "$dir.new" "$dir"
"$dir/usr/bin/qemu-riscv64" --version | head -n 1
