# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
#
# What the Debian chroot stages (.ci/chroot-matrix.sh,
# .ci/chroot-install.sh, .ci/deb.sh) share; sourced by them, not run.
#
# Their command line is TARBALL RESULTS_DIR SUITE... (chroot_args).  The
# base chroots live in $CHACHARNG_CHROOT_DIR/SUITE (default
# /var/tmp/chacharng-chroots) and are made there if missing
# (ensure_chroot), with
#   debootstrap --variant=minbase --include=<build tools, libssl-dev,
#   openssl> SUITE DIR $CHACHARNG_DEBIAN_MIRROR
# which needs root and the network (about a minute each).  Commands run
# in a chroot (in_chroot) see /proc, mounted inside a private mount
# namespace so that it vanishes with the run even if it fails or is
# killed; where unshare is unavailable it is mounted directly and
# unmounted on exit.  $CHACHARNG_CHROOT_TIMEOUT (default 1200 seconds)
# bounds each build and test run.  On exit the work directory $work, if
# set, is removed.

chroot_dir=${CHACHARNG_CHROOT_DIR:-/var/tmp/chacharng-chroots}
# nodejs: t_ctl.sh checks that Debian's Node.js (nodejs_conf) is covered
chroot_packages=gcc,make,autoconf,automake,libtool,pkg-config,libssl-dev,openssl,nodejs
debian_mirror=${CHACHARNG_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# shellcheck disable=SC2034 # for the scripts that source this
jobs=$(nproc 2>/dev/null || echo 2)
# Bound each build and test run; a hang must not stall CI.
limit=${CHACHARNG_CHROOT_TIMEOUT:-1200}

# chroot_args ARG...: check the command line TARBALL RESULTS_DIR SUITE...
# and set $tarball and $results from it (the caller shifts the two away),
# or exit 2 with the usage.
chroot_args() {
    if [ $# -lt 3 ]; then
        echo "usage: $0 TARBALL RESULTS_DIR SUITE..." >&2
        exit 2
    fi
    # shellcheck disable=SC2034 # for the scripts that source this
    tarball=$(realpath "$1")
    results=$(realpath "$2")
}

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

# chroot_makeable SUITE DIR: whether DIR is there or debootstrap is, to
# make it; if neither, SUITE is skipped, saying so.
chroot_makeable() {
    if [ ! -d "$2" ] && ! command -v debootstrap >/dev/null; then
        echo "no chroot in $2 and debootstrap is not installed" \
            >"$results/$1.skip"
        return 1
    fi
}

# ensure_chroot SUITE DIR: make the chroot for SUITE in DIR unless it is
# there; fails if it cannot.  A half-made one is built aside and only
# moved into place when debootstrap succeeded.  Holding DIR.lock while
# doing so lets a stage wait for the chroot that .ci/chroot-make.sh is
# making in the background, instead of starting a second debootstrap
# into the same place.
ensure_chroot() {
    local suite=$1 dir=$2 lock st

    if [ -x "$dir/usr/bin/openssl" ] && [ -x "$dir/usr/bin/make" ]; then
        return 0
    fi
    mkdir -p "$chroot_dir" || return 1
    exec {lock}>"$dir.lock" || return 1
    if ! flock -n "$lock"; then
        echo "--- $suite: waiting for the chroot being made in $dir"
        # bounded as every chroot step is: a stuck debootstrap fails here
        if ! flock -w "$limit" "$lock"; then
            echo "--- $suite: still being made after $limit s; giving up"
            exec {lock}>&-
            return 1
        fi
    fi
    make_chroot "$suite" "$dir"
    st=$?
    exec {lock}>&-
    return $st
}

# make_chroot SUITE DIR: ensure_chroot's work, under its lock.
make_chroot() {
    local suite=$1 dir=$2

    if [ -x "$dir/usr/bin/openssl" ] && [ -x "$dir/usr/bin/make" ]; then
        return 0
    fi
    if ! command -v debootstrap >/dev/null; then
        echo "--- $suite: no complete chroot in $dir, no debootstrap to make one"
        return 1
    fi
    echo "--- debootstrap $suite into $dir"
    rm -rf "$dir.new"
    if ! debootstrap --variant=minbase --include="$chroot_packages" \
        "$suite" "$dir.new" "$debian_mirror" \
        >"$results/$suite.debootstrap.log" 2>&1; then
        echo "debootstrap $suite failed; the end of its log:"
        tail -n 20 "$results/$suite.debootstrap.log"
        rm -rf "$dir.new"
        return 1
    fi
    rm -rf "$dir" && mv "$dir.new" "$dir"
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
