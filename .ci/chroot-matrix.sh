#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The OpenSSL version matrix: `make check` of a release tarball inside
# debootstrap chroots of Debian releases that ship other OpenSSL versions
# than the host (trixie: 3.5, sid: 3.6).  Building from the tarball also
# proves it is complete.  For each SUITE it writes, into RESULTS_DIR,
# SUITE.log (the automake test-suite.log) and SUITE.version (`openssl
# version` inside), or SUITE.skip holding the reason it could not run.
#
# Usage: .ci/chroot-matrix.sh TARBALL RESULTS_DIR SUITE...
# (CHACHARNG_CONFIGURE_FLAGS adds ./configure arguments.)
#
# Chroots live in $CHACHARNG_CHROOT_DIR/SUITE (default
# /var/tmp/chacharng-chroots) and are made there if missing, with
#   debootstrap --variant=minbase --include=<build tools, libssl-dev,
#   openssl> SUITE DIR
# which needs root and the network (about a minute each).  /proc is
# mounted inside a private mount namespace, so it vanishes with the run
# even if it fails or is killed; where unshare is unavailable it is
# mounted directly and unmounted on exit.
set -u

if [ $# -lt 3 ]; then
    echo "usage: $0 TARBALL RESULTS_DIR SUITE..." >&2
    exit 2
fi
tarball=$(realpath "$1")
results=$(realpath "$2")
shift 2
chroot_dir=${CHACHARNG_CHROOT_DIR:-/var/tmp/chacharng-chroots}
packages=gcc,make,autoconf,automake,libtool,pkg-config,libssl-dev,openssl
mirror=${CHACHARNG_DEBIAN_MIRROR:-http://deb.debian.org/debian}
jobs=$(nproc 2>/dev/null || echo 2)
# Bound each build and test run; a hang must not stall CI.
limit=${CHACHARNG_CHROOT_TIMEOUT:-1200}

# A private mount namespace, if this system lets us make one.
use_unshare=
if command -v unshare >/dev/null &&
    unshare --mount --propagation private true 2>/dev/null; then
    use_unshare=1
fi

# Cleanup state for the direct-mount fallback and the work directory.
mounted_proc=
work=
unmount_proc() {
    if [ -n "$mounted_proc" ]; then
        umount "$mounted_proc" 2>/dev/null || umount -l "$mounted_proc"
        mounted_proc=
    fi
}
cleanup() {
    unmount_proc
    if [ -n "$work" ]; then
        rm -rf "$work"
        work=
    fi
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

# Make the chroot for suite $1 in $2 unless it is there.  A half-made one
# is built aside and only moved into place when debootstrap succeeded.
ensure_chroot() {
    local suite=$1 dir=$2

    if [ -x "$dir/usr/bin/openssl" ] && [ -x "$dir/usr/bin/make" ]; then
        return 0
    fi
    echo "--- debootstrap $suite into $dir"
    mkdir -p "$chroot_dir" || return 1
    rm -rf "$dir.new"
    if ! debootstrap --variant=minbase --include="$packages" "$suite" \
        "$dir.new" "$mirror" >"$results/$suite.debootstrap.log" 2>&1; then
        echo "debootstrap $suite failed; the end of its log:"
        tail -n 20 "$results/$suite.debootstrap.log"
        rm -rf "$dir.new"
        return 1
    fi
    rm -rf "$dir"
    mv "$dir.new" "$dir"
}

# in_chroot DIR SECONDS CMD [ARG...]: `bash -c CMD bash ARG...` as root in
# chroot DIR with /proc mounted, killed (with everything it started) after
# SECONDS.
in_chroot() {
    local dir=$1 limit=$2 cmd=$3 st

    shift 3
    if [ -n "$use_unshare" ]; then
        # the mount exists only in the new namespace and dies with it
        # shellcheck disable=SC2016 # expanded by the inner shell
        timeout "$limit" unshare --mount --propagation private -- /bin/sh -c '
            dir=$1
            shift
            mount -t proc proc "$dir/proc" || exit 1
            exec chroot "$dir" /usr/bin/env -i \
                PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
                /bin/bash -c "$@"' sh "$dir" "$cmd" bash "$@"
        return
    fi
    if ! mountpoint -q "$dir/proc"; then
        mount -t proc proc "$dir/proc" || return 1
        mounted_proc=$dir/proc
    fi
    timeout "$limit" chroot "$dir" /usr/bin/env -i \
        PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
        /bin/bash -c "$cmd" bash "$@"
    st=$?
    unmount_proc
    return $st
}

# The commands run inside the chroot, in the unpacked tree ($1), with $2
# jobs and the extra configure arguments after that.
# shellcheck disable=SC2016 # expanded inside the chroot
build_and_check='cd "$1" && jobs=$2 && shift 2 &&
    ./configure -q --enable-werror "$@" && make -j"$jobs" &&
    make -j"$jobs" check'

run_suite() {
    local suite=$1 dir=$chroot_dir/$1 src rel st

    rm -f "$results/$suite.log" "$results/$suite.skip" \
        "$results/$suite.version"
    if [ "$(id -u)" -ne 0 ]; then
        echo "needs root (debootstrap, chroot, mount)" >"$results/$suite.skip"
        return
    fi
    if [ ! -d "$dir" ] && ! command -v debootstrap >/dev/null; then
        echo "no chroot in $dir and debootstrap is not installed" \
            >"$results/$suite.skip"
        return
    fi
    ensure_chroot "$suite" "$dir" || return

    # a fresh directory per run: other runs may share the chroot
    work=$(mktemp -d "$dir/root/chacharng-matrix.XXXXXX") || return
    tar -xf "$tarball" -C "$work" || return
    src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n 1)
    rel=/root/${src#"$dir"/root/}
    in_chroot "$dir" 60 'openssl version' >"$results/$suite.version" 2>&1
    echo "--- $suite, $(cat "$results/$suite.version"):" \
        "configure, make, make check"
    # shellcheck disable=SC2086 # word splitting wanted
    in_chroot "$dir" "$limit" "$build_and_check" "$rel" "$jobs" \
        ${CHACHARNG_CONFIGURE_FLAGS-} >"$results/$suite.build.log" 2>&1
    st=$?
    echo "    exit status $st"
    if [ -f "$src/test-suite.log" ]; then
        cp "$src/test-suite.log" "$results/$suite.log"
        grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR):' "$src/test-suite.log" |
            sed 's/^/    /'
        # what failed, with the reason
        grep -hE '^(not ok|ERROR)' "$src"/test/*.log 2>/dev/null | head -n 20
    else
        echo "    no test-suite.log; the end of the build log:"
        tail -n 30 "$results/$suite.build.log" | sed 's/^/    /'
    fi
    rm -rf "$work"
    work=
}

for suite in "$@"; do
    run_suite "$suite"
done
