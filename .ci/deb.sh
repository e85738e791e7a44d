#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The Debian package, end to end, per Debian release: build the .deb from
# the release tarball in a copy of that release's chroot
# (`dpkg-buildpackage -us -uc -b`; `lintian --pedantic -E -I` on the .changes where the
# host's lintian is of the same release), install it with apt into
# another, clean copy, and run there, each a counted check:
#   installing changes no configuration;
#   the literal `openssl rand -provider chacharng -hex 32` (no path);
#   `chacharngctl enable`, `status`, RAND_bytes/RAND_priv_bytes of a fresh
#   process from CHACHA20-DRBG (3.5+: again with --random-provider,
#   through the random provider);
#   `chacharngctl disable` and a byte compare of /etc/ssl/openssl.cnf;
#   a libcrypto of another architecture without the module: refused;
#   the module gone while enabled: what programs say, and `status`
#   naming the module and the reason;
#   `enable`, then `apt-get remove`: the file is the stock one again and
#   `openssl rand -hex 8` and an SSL_CTX (`openssl ciphers`) still work;
#   `apt-get purge` takes chacharngctl's backup away;
#   `apt-get remove` while openssl.cnf would still load chacharng after
#   disable: refused, package, module and RAND kept;
#   on the suites in $CHACHARNG_DEB_QA, piuparts and autopkgtest (below).
# For each SUITE it writes RESULTS_DIR/SUITE.log (test-suite.log form,
# counted by test-all.sh), RESULTS_DIR/SUITE.out (every command with its
# output) and RESULTS_DIR/SUITE.version, or RESULTS_DIR/SUITE.skip.
#
# Usage: .ci/deb.sh TARBALL RESULTS_DIR SUITE...
#
# The base chroots are $CHACHARNG_CHROOT_DIR/SUITE (default
# /var/tmp/chacharng-chroots), shared with .ci/chroot-matrix.sh and made
# as .ci/chroot-lib.sh says if missing; they are only ever copied (cp -a),
# never changed.  Installing the Build-Depends (apt-get build-dep) into the
# build copy uses the chroot's own package lists and the network.  The
# package's own `make check` is not rerun here (DEB_BUILD_OPTIONS=nocheck):
# the other stages run it on every release.
set -u

# ------------------------------------------------------------------------
# Inside a test chroot: `deb.sh --inside` runs the checks on the
# installed package and prints "PASS: name" / "FAIL: name" lines, each
# command echoed with its output.
# ------------------------------------------------------------------------
inside() {
    local stock=/root/stock.cnf cnf=/etc/ssl/openssl.cnf rp='' out moddir fn
    export LANG=C.UTF-8

    pass() { echo "PASS: $*"; }
    fail() { echo "FAIL: $*"; }
    # show CMD: echo it, run it, show its output (stdout and stderr)
    show() {
        echo "\$ $*"
        out=$("$@" 2>&1)
        st=$?
        [ -n "$out" ] && printf '%s\n' "$out"
        [ "$st" = 0 ] || echo "(exit status $st)"
        return "$st"
    }
    verdict() { # NAME: pass if the last status was 0
        if [ "$1" = 0 ]; then pass "$2"; else fail "$2"; fi
    }
    chain_ok() {
        [ "$(openssl list -random-instances 2>/dev/null |
            grep -c '^  CHACHA20-DRBG @ chacharng$')" = 3 ]
    }

    openssl version
    case $(openssl version) in "OpenSSL 3."[0-4].*) ;; *) rp=1 ;; esac
    moddir=$(pkg-config --variable=modulesdir libcrypto 2>/dev/null ||
        openssl version -m | sed 's/.*"\(.*\)"/\1/')

    cmp -s "$cnf" "$stock"
    verdict $? "installing changed no configuration"
    [ -f "$moddir/chacharng.so" ]
    verdict $? "module installed in $moddir"

    show openssl rand -provider chacharng -hex 32 &&
        printf '%s\n' "$out" | grep -qxE '[0-9a-f]{64}'
    verdict $? "literal: openssl rand -provider chacharng -hex 32"
    show openssl list -random-instances -provider chacharng
    [ "$(printf '%s\n' "$out" | grep -c '^  CHACHA20-DRBG @ chacharng$')" = 3 ]
    verdict $? "literal: -provider chacharng alone: primary, public, private are CHACHA20-DRBG"

    for mode in chain ${rp:+random-provider}; do
        if [ "$mode" = chain ]; then
            show chacharngctl enable
        else
            show chacharngctl enable --random-provider
        fi
        verdict $? "chacharngctl enable ($mode)"
        show chacharngctl status
        verdict $? "chacharngctl status ($mode)"
        show openssl list -random-instances
        chain_ok
        verdict $? "fresh process: DRBG chain is CHACHA20-DRBG @ chacharng ($mode)"
        for which in public private; do
            fn=RAND_bytes
            [ "$which" = private ] && fn=RAND_priv_bytes
            show env CHACHARNG_DEBUG=1 \
                /usr/libexec/chacharng/chacharng-probe "$which" &&
                printf '%s\n' "$out" | grep -qx "$which CHACHA20-DRBG chacharng"
            verdict $? "fresh process: $fn from CHACHA20-DRBG @ chacharng ($mode)"
            if [ "$mode" = random-provider ]; then
                printf '%s\n' "$out" | grep -q 'random provider path in use'
                verdict $? "fresh process: $fn through the random provider"
            fi
        done
        if [ "$mode" = random-provider ]; then
            show env CHACHARNG_DEBUG=1 openssl rand -hex 16
            printf '%s\n' "$out" | grep -q 'random provider path in use'
            verdict $? "fresh process: openssl rand through the random provider"
        fi
        show chacharngctl disable
        verdict $? "chacharngctl disable ($mode)"
        show cmp "$cnf" "$stock"
        verdict $? "after disable: $cnf byte for byte the stock file ($mode)"
    done

    # a libcrypto of another architecture, without its chacharng module
    mkdir -p /usr/lib/aarch64-linux-gnu
    cp "$(readlink -f "$(dirname "$moddir")/libcrypto.so.3")" \
        /usr/lib/aarch64-linux-gnu/libcrypto.so.3
    show chacharngctl enable
    [ $? = 1 ] && cmp -s "$cnf" "$stock"
    verdict $? "multiarch: refused while aarch64's libcrypto has no module"
    rm -rf /usr/lib/aarch64-linux-gnu

    # configured, and the module gone (removed by force): the symptoms,
    # and status naming the cause
    chacharngctl --quiet enable
    mv "$moddir/chacharng.so" /root/chacharng.so.aside
    show openssl rand -hex 8
    printf '%s\n' "$out" | grep -q 'unable to fetch drbg'
    verdict $? "module gone: openssl rand says unable to fetch drbg"
    show chacharngctl status
    [ $? = 1 ] && printf '%s\n' "$out" |
        grep -q "module tried: $moddir/chacharng.so" &&
        printf '%s\n' "$out" | grep -q 'reason: no such file'
    verdict $? "module gone: status names the module path and the reason"
    mv /root/chacharng.so.aside "$moddir/chacharng.so"

    # a process started while enabled, to be named at removal and after
    # disable
    mkfifo /root/hold
    openssl dgst </root/hold >/dev/null 2>&1 &
    holder=$!
    exec 7>/root/hold
    show chacharngctl status --processes-only
    printf '%s\n' "$out" | grep -Eq "^  $holder +openssl +$moddir/chacharng.so: the module now installed$"
    verdict $? "status --processes-only: a process started while enabled has the module now installed"

    # removal while enabled
    show env DEBIAN_FRONTEND=noninteractive apt-get remove -y chacharng
    verdict $? "apt-get remove chacharng (while enabled)"
    printf '%s\n' "$out" | grep -q "openssl.cnf no longer loads chacharng" &&
        printf '%s\n' "$out" | grep -Eq "^  $holder +openssl +$moddir/chacharng.so"
    verdict $? "apt-get remove (while enabled): says openssl.cnf was restored, and names the process that still maps the module"
    exec 7>&-
    wait "$holder"
    show cmp "$cnf" "$stock"
    verdict $? "after removal: $cnf byte for byte the stock file"
    [ ! -e "$moddir/chacharng.so" ]
    verdict $? "after removal: module gone"
    show openssl rand -hex 8
    verdict $? "after removal: openssl rand -hex 8"
    show openssl ciphers -s -tls1_3
    verdict $? "after removal: SSL_CTX_new (openssl ciphers)"
    show env DEBIAN_FRONTEND=noninteractive apt-get purge -y chacharng &&
        [ ! -e "$cnf.chacharngctl.bak" ] && cmp -s "$cnf" "$stock"
    verdict $? "apt-get purge: chacharngctl's backup gone, $cnf the stock file"

    # removal while openssl.cnf would still load chacharng after disable
    # (a line added inside chacharngctl's section, which taking its lines
    # out would move, so disable refuses): refused, nothing removed, RAND
    # still works; with that line gone, the removal restores the stock file
    DEBIAN_FRONTEND=noninteractive apt-get install -y /root/chacharng_*.deb >/dev/null 2>&1
    chacharngctl --quiet enable
    sed -i '/^\[chacharng_sect\]/a impl = generic' "$cnf"
    ! show env DEBIAN_FRONTEND=noninteractive apt-get remove -y chacharng &&
        printf '%s\n' "$out" | grep -q "still loads chacharng"
    verdict $? "apt-get remove while $cnf still loads chacharng: refused, saying why"
    dpkg-query -W -f='${Status}' chacharng | grep -q 'install ok installed' &&
        [ -e "$moddir/chacharng.so" ]
    verdict $? "apt-get remove refused: the package and its module stay"
    show openssl rand -hex 8
    verdict $? "apt-get remove refused: openssl rand -hex 8 still works"
    sed -i '/^impl = generic$/d' "$cnf"
    show env DEBIAN_FRONTEND=noninteractive apt-get remove -y chacharng &&
        cmp -s "$cnf" "$stock"
    verdict $? "apt-get remove, the added line gone again: removed, $cnf the stock file"

    # removal never fails because of chacharngctl: never enabled, with
    # openssl.cnf hard-linked, then missing
    for shape in hard-linked missing; do
        DEBIAN_FRONTEND=noninteractive apt-get install -y /root/chacharng_*.deb >/dev/null 2>&1
        if [ "$shape" = hard-linked ]; then
            ln "$cnf" /root/openssl.cnf.link
        else
            mv "$cnf" /root/openssl.cnf.aside
        fi
        show env DEBIAN_FRONTEND=noninteractive apt-get remove -y chacharng
        verdict $? "apt-get remove, never enabled, $cnf $shape: succeeds"
        if [ "$shape" = hard-linked ]; then
            rm -f /root/openssl.cnf.link
        else
            mv /root/openssl.cnf.aside "$cnf"
        fi
        cmp -s "$cnf" "$stock"
        verdict $? "apt-get remove, never enabled, $cnf $shape: $cnf unchanged"
    done
}

if [ "${1:-}" = --inside ]; then
    inside
    exit 0
fi

# ------------------------------------------------------------------------
# On the host
# ------------------------------------------------------------------------
# shellcheck source-path=SCRIPTDIR
# shellcheck source=chroot-lib.sh
. "$(dirname "$0")/chroot-lib.sh" || exit 1
chroot_args "$@"
shift 2
self=$(realpath "$0")
# the copies (on the base chroots' file system, so cp -a is quick)
copies_dir=${CHACHARNG_COPIES_DIR:-$(dirname "$chroot_dir")}

# The summary test-all.sh counts, from the PASS:/FAIL: lines of $2.
write_log() {
    local log=$1 out=$2 p f

    p=$(grep -c '^PASS: ' "$out")
    f=$(grep -c '^FAIL: ' "$out")
    {
        printf '# TOTAL: %d\n# PASS:  %d\n# SKIP:  0\n# XFAIL: 0\n' \
            $((p + f)) "$p"
        printf '# FAIL:  %d\n# XPASS: 0\n# ERROR: 0\n\n' "$f"
        grep -E '^(PASS|FAIL): ' "$out"
    } >"$log"
}

# Debian's own checks, on the suites in $CHACHARNG_DEB_QA (default:
# bookworm and trixie; 185 s and 168-299 s on 2 cores, 2026-12-01):
#   piuparts: install, remove and purge in a clean copy of the base
#   chroot, nothing left behind; then an upgrade from an older package
#   built from the same source with a lower version (0.1.0~older1, from a
#   local repository that piuparts sees as part of the archive), remove,
#   purge;
#   autopkgtest: debian/tests on the installed package, in another clean
#   copy (the chroot runner, with /proc mounted in a private namespace).
qa_suites=${CHACHARNG_DEB_QA:-bookworm trixie}

# debian_piuparts SUITE DEB OLD REPO OUT: install, remove, purge; upgrade
debian_piuparts() {
    local suite=$1 deb=$2 old=$3 repo=$4 o=$5

    : >"$o"
    echo "\$ piuparts $(basename "$deb") (upgrade from $(basename "$old"))" >>"$o"
    # (apt 3, from Debian 13 on, leaves the directory that
    # dpkg-preconfigure extracts config scripts into; Debian 12's piuparts
    # does not know it)
    if timeout "$limit" piuparts -d "$suite" -m "$debian_mirror" \
        -b "$work/base.tgz" --bindmount "$repo" \
        --ignore=/var/cache/debconf/tmp.ci/ \
        --extra-repo "deb [trusted=yes] file://$repo ./" \
        -l "$results/$suite.piuparts.log" "$deb" >/dev/null 2>&1; then
        echo "PASS: piuparts: install, remove, purge ($suite)" >>"$o"
    else
        echo "FAIL: piuparts: install, remove, purge ($suite)" >>"$o"
        grep -E '^[0-9:.]* (ERROR|FAIL)' "$results/$suite.piuparts.log" | tail -n 20 >>"$o"
    fi
    grep -E 'INFO: (PASS|FAIL)' "$results/$suite.piuparts.log" | sed 's/^/  /' >>"$o"
    if grep -q 'Candidate: .*~older1' "$results/$suite.piuparts.log" &&
        grep -q 'INFO: PASS: Installation, upgrade and purging tests\.$' "$results/$suite.piuparts.log"; then
        echo "PASS: piuparts: upgrade from $(basename "$old"), remove, purge ($suite)" >>"$o"
    else
        echo "FAIL: piuparts: upgrade from $(basename "$old"), remove, purge ($suite)" >>"$o"
    fi
}

# debian_autopkgtest SUITE BASE DEB SRC OUT: debian/tests, in a copy of BASE
debian_autopkgtest() {
    local suite=$1 base=$2 deb=$3 src=$4 o=$5 at

    : >"$o"
    at=$work/autopkgtest
    cp -a "$base" "$at" || return
    echo "\$ autopkgtest $(basename "$deb") chacharng-*/ -- chroot" >>"$o"
    # shellcheck disable=SC2016 # the inner shell's arguments
    if unshare -m --propagation private sh -c '
        mount -t proc proc "$1/proc" &&
            exec timeout "$2" autopkgtest "$3" "$4" -- chroot "$1"' \
        sh "$at" "$limit" "$deb" "$src" >"$results/$suite.autopkgtest.log" 2>&1; then
        echo "PASS: autopkgtest: debian/tests ($suite)" >>"$o"
    else
        echo "FAIL: autopkgtest: debian/tests ($suite)" >>"$o"
    fi
    grep -E '^(system-wide|s_client|---|FAIL)' "$results/$suite.autopkgtest.log" | sed 's/^/  /' >>"$o"
}

# debian_qa SUITE BASE BUILD DEB OUT
debian_qa() {
    local suite=$1 base=$2 build=$3 deb=$4 out=$5 src old repo t0

    case " $qa_suites " in *" $suite "*) ;; *) return 0 ;; esac
    src=$(ls -d "$build"/root/src/chacharng-*/)
    if ! command -v piuparts >/dev/null || ! command -v autopkgtest >/dev/null; then
        echo "FAIL: piuparts and autopkgtest installed (.ci/deps.sh --all)" >>"$out"
        return
    fi
    echo "--- $suite: piuparts and autopkgtest"
    t0=$SECONDS
    # shellcheck disable=SC2016 # expanded inside the chroot
    if in_chroot "$build" "$limit" '
        cd /root/src/chacharng-*/ || exit 1
        sed -i "1s/^chacharng (\([^)]*\))/chacharng (\1~older1)/" debian/changelog &&
            DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc -b' \
        >"$results/$suite.build-older.log" 2>&1 &&
        old=$(ls "$build"/root/src/chacharng_*~older1_*.deb); then
        echo "PASS: an older package from the same source ($(basename "$old"))" >>"$out"
    else
        echo "FAIL: an older package from the same source" >>"$out"
        tail -n 20 "$results/$suite.build-older.log" >>"$out"
        return
    fi
    repo=$work/repo
    mkdir -p "$repo" && cp "$old" "$repo/" &&
        (cd "$repo" && dpkg-scanpackages . /dev/null >Packages 2>/dev/null) &&
        tar -C "$base" -czf "$work/base.tgz" . || return
    # piuparts and autopkgtest work in copies of their own and mostly wait
    # on dpkg and the archive, so they run side by side; each reports into
    # a file of its own, appended in order once both are done.
    debian_piuparts "$suite" "$deb" "$old" "$repo" "$out.piuparts" &
    debian_autopkgtest "$suite" "$base" "$deb" "$src" "$out.autopkgtest"
    wait $!
    cat "$out.piuparts" "$out.autopkgtest" >>"$out"
    rm -f "$out.piuparts" "$out.autopkgtest"
    echo "  (older build, piuparts and autopkgtest: $((SECONDS - t0)) s)" >>"$out"
}

run_suite() {
    local suite=$1 base=$chroot_dir/$1 build test deb out=$results/$1.out

    rm -f "$results/$suite".{log,skip,version,out}
    if [ "$(id -u)" -ne 0 ]; then
        echo "needs root (chroot, mount, apt)" >"$results/$suite.skip"
        return
    fi
    if [ -z "$use_unshare" ]; then
        echo "no private mount namespace (unshare)" >"$results/$suite.skip"
        return
    fi
    chroot_makeable "$suite" "$base" || return 0
    ensure_chroot "$suite" "$base" || {
        echo "FAIL: debootstrap $suite" >"$out"
        write_log "$results/$suite.log" "$out"
        return
    }
    work=$(mktemp -d "$copies_dir/chacharng-deb-$suite.XXXXXX") || return
    build=$work/build
    test=$work/test
    : >"$out"

    # --- build, in a copy with the Build-Depends of debian/control added
    echo "--- $suite: building the package"
    cp -a "$base" "$build" || return
    mkdir -p "$build/root/src"
    tar -xf "$tarball" -C "$build/root/src" || return
    # shellcheck disable=SC2016 # expanded inside the chroot
    if in_chroot "$build" "$limit" '
        export DEBIAN_FRONTEND=noninteractive
        cd /root/src/chacharng-* || exit 1
        { apt-get install -y --no-install-recommends build-essential fakeroot &&
            apt-get build-dep -y --no-install-recommends ./; } \
            >/root/apt.log 2>&1 || { tail -n 20 /root/apt.log; exit 1; }
        DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc -b' \
        >"$results/$suite.build.log" 2>&1; then
        echo "PASS: dpkg-buildpackage -us -uc -b ($suite)" >>"$out"
    else
        echo "FAIL: dpkg-buildpackage -us -uc -b ($suite)" >>"$out"
        tail -n 30 "$results/$suite.build.log" >>"$out"
        write_log "$results/$suite.log" "$out"
        cleanup
        return
    fi
    deb=$(ls "$build"/root/src/chacharng_*.deb)
    # lintian of the release the host runs (Debian 12 on CI)
    if command -v lintian >/dev/null &&
        grep -q "VERSION_CODENAME=$suite" /etc/os-release; then
        echo "\$ lintian --pedantic -E -I $(basename "$build"/root/src/chacharng_*.changes)" >>"$out"
        if lintian --pedantic -E -I "$build"/root/src/chacharng_*.changes \
            >"$work/lintian.out" 2>&1 &&
            ! grep -qE '^[EWIPX]: ' "$work/lintian.out"; then
            echo "PASS: lintian --pedantic: no tag but those overridden with a reason ($suite)" >>"$out"
        else
            echo "FAIL: lintian --pedantic: no tag but those overridden with a reason ($suite)" >>"$out"
        fi
        cat "$work/lintian.out" >>"$out"
    fi

    # --- install and test, in a clean copy
    echo "--- $suite: installing into a clean copy and testing"
    cp -a "$base" "$test" || return
    cp "$deb" "$test/root/" || return
    cp "$self" "$test/root/deb.sh" || return
    cp "$test/etc/ssl/openssl.cnf" "$test/root/stock.cnf" || return
    in_chroot "$test" "$limit" 'openssl version' >"$results/$suite.version" 2>&1
    # shellcheck disable=SC2016 # expanded inside the chroot
    in_chroot "$test" "$limit" '
        cd /root || exit 1
        echo "\$ apt-get install ./$1"
        DEBIAN_FRONTEND=noninteractive apt-get install -y "./$1" \
            >/root/apt.log 2>&1 &&
            echo "PASS: apt-get install the .deb into a clean chroot" ||
            { tail -n 20 /root/apt.log; echo "FAIL: apt-get install"; exit 0; }
        cd /root && bash /root/deb.sh --inside' "$(basename "$deb")" \
        >>"$out" 2>&1
    debian_qa "$suite" "$base" "$build" "$deb" "$out"
    write_log "$results/$suite.log" "$out"
    # every command with its output, for the record
    sed 's/^/    /' "$out"
    cleanup
}

for suite in "$@"; do
    run_suite "$suite"
done
exit 0
