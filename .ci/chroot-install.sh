#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The installed module, as a user meets it: in a throw-away copy of each
# Debian chroot (bookworm: OpenSSL 3.0, trixie: 3.5, sid: 3.6), build the
# release tarball, `make install` it into libcrypto's own modules
# directory, and run test/t_installed.sh (the literal `openssl rand
# -provider chacharng`, with no path or config, and the library-DRBG cases
# against the installed module).  The CI host itself is never installed
# into.
#
# The copy is an overlay over the shared chroot in
# $CHACHARNG_CHROOT_DIR/SUITE (default /var/tmp/chacharng-chroots; made as
# .ci/chroot-lib.sh says if missing): writes go to a temporary upper
# directory that is thrown away, so the shared chroot is never changed
# and nothing is copied.  Without overlayfs the chroot is copied instead
# (cp -a, slower).
#
# For each SUITE it writes RESULTS_DIR/SUITE.log (TAP with automake-style
# "# PASS:" summary lines, which .ci/test-all.sh counts), SUITE.version, or
# SUITE.skip with the reason it could not run.
#
# Usage: .ci/chroot-install.sh TARBALL RESULTS_DIR SUITE...
set -u

# shellcheck source-path=SCRIPTDIR
# shellcheck source=chroot-lib.sh
. "$(dirname "$0")/chroot-lib.sh" || exit 1
chroot_args "$@"
shift 2

# Inside the chroot: build, install, test.  $1 the unpacked tree, $2 jobs.
# shellcheck disable=SC2016 # expanded inside the chroot
inside='set -u
    cd "$1" &&
    ./configure -q --enable-werror >/root/build.log 2>&1 &&
    make -j"$2" >>/root/build.log 2>&1 &&
    make -j"$2" test/t_library_rng >>/root/build.log 2>&1 &&
    make install >>/root/build.log 2>&1 || {
        echo "Bail out! build or install failed; the end of its log:"
        tail -n 20 /root/build.log | sed "s/^/# /"
        exit 1
    }
    bash test/t_installed.sh "$PWD"'

# run_root DIR: run $inside as root in chroot DIR (with /proc), a fresh
# mount namespace that dies with the run.  With overlayfs, DIR is the
# lower layer and never written.
run_root() {
    local lower=$1 mode=$2

    # shellcheck disable=SC2016 # expanded by the inner shell
    timeout "$limit" unshare --mount --propagation private -- /bin/bash -c '
        lower=$1 work=$2 mode=$3 tarball=$4 jobs=$5 inside=$6
        if [ "$mode" = overlay ]; then
            root=$work/merged
            mkdir -p "$work/up" "$work/ovl" "$root" &&
                mount -t overlay overlay \
                    -o "lowerdir=$lower,upperdir=$work/up,workdir=$work/ovl" \
                    "$root" || exit 1
        else
            root=$work/copy
        fi
        # unpacked from outside: a minbase chroot has no xz
        src=$(mktemp -d "$root/root/chacharng-install.XXXXXX") &&
            tar -xf "$tarball" -C "$src" &&
            mount -t proc proc "$root/proc" || exit 1
        tree=$(cd "$src" && ls -d chacharng-*/) || exit 1
        exec chroot "$root" /usr/bin/env -i \
            PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
            LANG=C.UTF-8 /bin/bash -c "$inside" bash \
            "/root/${src#"$root"/root/}/$tree" "$jobs"
    ' sh "$lower" "$work" "$mode" "$tarball" "$jobs" "$inside"
}

overlay_works() {
    local d

    d=$(mktemp -d) || return 1
    mkdir -p "$d/l" "$d/u" "$d/w" "$d/m"
    unshare --mount --propagation private -- mount -t overlay overlay \
        -o "lowerdir=$d/l,upperdir=$d/u,workdir=$d/w" "$d/m" 2>/dev/null
    local st=$?
    rm -rf "$d"
    return $st
}

mode=copy
[ -n "$use_unshare" ] && overlay_works && mode=overlay

for suite in "$@"; do
    dir=$chroot_dir/$suite
    rm -f "$results/$suite.log" "$results/$suite.skip" "$results/$suite.version"
    if [ "$(id -u)" -ne 0 ]; then
        echo "needs root (chroot, mount)" >"$results/$suite.skip"
        continue
    fi
    if ! ensure_chroot "$suite" "$dir"; then
        echo "no chroot in $dir, and debootstrap could not make one" \
            >"$results/$suite.skip"
        continue
    fi
    chroot "$dir" openssl version >"$results/$suite.version" 2>&1
    echo "--- $suite, $(cat "$results/$suite.version"): make install into" \
        "a throw-away $mode of the chroot, test/t_installed.sh"
    work=$(mktemp -d "${TMPDIR:-/var/tmp}/chacharng-install.XXXXXX") || exit 1
    if [ "$mode" = copy ]; then
        cp -a "$dir" "$work/copy" || { cleanup; continue; }
    fi
    run_root "$dir" "$mode" >"$results/$suite.tap" 2>&1
    echo "    exit status $?"
    cleanup
    # the TAP, then the summary lines test-all.sh counts
    p=$(grep -Ec '^ok [0-9]+ - ' "$results/$suite.tap" | head -n 1)
    s=$(grep -Ec '^ok [0-9]+ - # SKIP' "$results/$suite.tap")
    f=$(grep -Ec '^not ok ' "$results/$suite.tap")
    grep -q '^1\.\.[0-9]' "$results/$suite.tap" || f=$((f + 1))
    {
        cat "$results/$suite.tap"
        echo "# PASS: $((p - s))"
        echo "# SKIP: $s"
        echo "# FAIL: $f"
    } >"$results/$suite.log"
    grep -E '^(not ok|Bail out)' "$results/$suite.tap" | head -n 20
    sed -n 's/^# PASS:/    PASS:/p; s/^# FAIL:/    FAIL:/p' "$results/$suite.log"
done
