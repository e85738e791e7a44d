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
# /var/tmp/chacharng-chroots) and are made there if missing, as
# .ci/chroot-lib.sh describes (root and the network, about a minute each).
set -u

# shellcheck source-path=SCRIPTDIR
# shellcheck source=chroot-lib.sh
. "$(dirname "$0")/chroot-lib.sh" || exit 1
chroot_args "$@"
shift 2

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
    chroot_makeable "$suite" "$dir" || return 0
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
