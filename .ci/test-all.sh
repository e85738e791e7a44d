#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The whole test suite: installs what the tests need, builds with -Werror,
# runs `make check` and every other stage, and prints one summary line
# counted from the test results of all stages:
#   N passed, N failed, N skipped
# Stages that cannot run here (no tool, wrong CPU) count as skipped and say
# why.  Exit status is non-zero if anything failed.
#
# Usage: .ci/test-all.sh [--quick]   (--quick: only the host build and make check)
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
quick=
[ "${1:-}" = "--quick" ] && quick=1
jobs=$(nproc 2>/dev/null || echo 2)

passed=0
failed=0
skipped=0
results=()

# Each stage's heading says when it starts, so a slow stage shows in the log.
note() { printf '\n=== %s  [%d s]\n' "$*" "$SECONDS"; }

# Add the counts of an automake test-suite.log ($2) to the totals under
# stage name $1; a missing log means the stage broke before testing.
count_log() {
    local stage=$1 log=$2 p f s n k
    if [ ! -f "$log" ] || ! grep -q '^# PASS:' "$log"; then
        failed=$((failed + 1))
        results+=("$stage: FAILED before any test ran")
        return
    fi
    p=$(sed -n 's/^# PASS: *\([0-9]*\).*/\1/p' "$log" | head -n 1)
    s=$(sed -n 's/^# SKIP: *\([0-9]*\).*/\1/p' "$log" | head -n 1)
    f=0
    for k in FAIL XPASS ERROR; do
        n=$(sed -n "s/^# $k: *\([0-9]*\).*/\1/p" "$log" | head -n 1)
        f=$((f + ${n:-0}))
    done
    passed=$((passed + ${p:-0}))
    failed=$((failed + f))
    skipped=$((skipped + ${s:-0}))
    results+=("$stage: ${p:-0} passed, $f failed, ${s:-0} skipped")
    # the log goes away with its stage: show what failed while it is here
    if [ "$f" -gt 0 ]; then
        printf '\n--- %s: what failed\n' "$stage"
        grep -E '^(FAIL|ERROR|XPASS):|^==[0-9]+== ' "$log" | head -n 80
    fi
}

# A single pass/fail check (a build, distcheck, a lint): $1 name, rest command.
check() {
    local name=$1
    shift
    if "$@"; then
        passed=$((passed + 1))
        results+=("$name: passed")
    else
        failed=$((failed + 1))
        results+=("$name: FAILED")
    fi
}

skip() {
    skipped=$((skipped + 1))
    results+=("$1: skipped ($2)")
}

bootstrap() {
    [ -x configure ] || autoreconf -fi
}

# Count what a stage script wrote for one of its runs, NAME in the results
# directory $2: NAME.skip (the reason) or NAME.log; $1 the stage's name.
stage_result() {
    local stage=$1 dir=$2 name=$3
    if [ -f "$dir/$name.skip" ]; then
        skip "$stage" "$(cat "$dir/$name.skip")"
    else
        count_log "$stage" "$dir/$name.log"
    fi
}

# Print the release tarball the stages build from: the one an earlier
# stage made, else a new one; fail if there is none.
dist_tarball() {
    local tarballs=(chacharng-*.tar.xz)
    [ -f "${tarballs[0]}" ] || { make dist >/dev/null; tarballs=(chacharng-*.tar.xz); }
    [ -f "${tarballs[0]}" ] && echo "${tarballs[0]}"
}

# chroot_stage SCRIPT LABEL WHAT SUITE...: run .ci/SCRIPT on the tarball
# for the Debian SUITEs and count each as "LABEL (OpenSSL N, Debian SUITE
# chroot)"; without a tarball, the one failure "make dist (for WHAT)".
chroot_stage() {
    local script=$1 label=$2 what=$3 dir tarball
    shift 3
    dir=$(mktemp -d)
    if tarball=$(dist_tarball); then
        bash ".ci/$script" "$tarball" "$dir" "$@"
        chroot_count "$label" "$dir" "$@"
    else
        check "make dist (for $what)" false
    fi
    rm -rf "$dir"
}

# chroot_count LABEL DIR SUITE...: count what a chroot stage wrote in DIR.
chroot_count() {
    local label=$1 dir=$2 suite ver
    shift 2
    for suite in "$@"; do
        ver=$(sed -n 's/^OpenSSL \([0-9.]*\).*/\1/p' \
            "$dir/$suite.version" 2>/dev/null)
        stage_result "$label (OpenSSL ${ver:-?}, Debian $suite chroot)" \
            "$dir" "$suite"
    done
}

# --- the base chroots of the Debian stages, made in the background ----
# debootstrap (4-10 minutes per release on a fresh 2-core machine) mostly
# waits on the archive, so it runs while the CPU-bound stages below do;
# the chroot stages wait on its lock for a chroot still being made, and
# make one themselves (and report it) if it failed here
# (.ci/chroot-make.sh).
chroots_pid=
if [ -z "$quick" ] && [ "$(id -u)" -eq 0 ] && command -v debootstrap >/dev/null; then
    chroots_dir=$(mktemp -d)
    # niced: where the stages keep both cores busy, they go first
    nice -n 10 bash .ci/chroot-make.sh "$chroots_dir" trixie sid bookworm \
        >"$chroots_dir/out" 2>&1 &
    chroots_pid=$!
fi

# Report (not count: the stages using the chroots do) what the background
# debootstrap did, once it is done.
chroots_report() {
    local suite
    [ -n "$chroots_pid" ] || return 0
    wait "$chroots_pid"
    printf '\n--- base chroots made in the background (exit status %d):\n' $?
    cat "$chroots_dir/out"
    for suite in trixie sid bookworm; do
        [ -f "$chroots_dir/$suite.time" ] &&
            echo "$suite: $(cat "$chroots_dir/$suite.time") s"
    done
    rm -rf "$chroots_dir"
    chroots_pid=
}

# --- host build, make check ---------------------------------------------
note "host build (OpenSSL $(pkg-config --modversion libcrypto)) and make check"
bootstrap
if [ ! -f Makefile ] || ! grep -q -- '--enable-werror' config.status 2>/dev/null; then
    ./configure --enable-werror
fi
make -j"$jobs"
rm -f test-suite.log
make -j"$jobs" check
count_log "make check (host)" test-suite.log

if [ -z "$quick" ]; then
    # --- distcheck: the tarball is complete, builds out of tree, installs
    # and uninstalls cleanly.  Its tests are the kernel group and every
    # shell test (the ones that need files besides the programs); the
    # OpenSSL matrix below runs the whole suite from the same tarball.
    note "make distcheck"
    # make, not the shell, expands the groups
    # shellcheck disable=SC2016
    check "make distcheck" make -j"$jobs" distcheck \
        DISTCHECK_CONFIGURE_FLAGS=--enable-werror \
        TESTS='$(kernel_tests) $(script_tests)'

    # --- other configurations and architectures, from the tarball --------
    note "variant builds, aarch64 (qemu), s390x big-endian (qemu), ppc64el (qemu)"
    results_dir=$(mktemp -d)
    rm -f chacharng-*.tar.xz
    if make dist >/dev/null && tarball=$(ls chacharng-*.tar.xz); then
        bash .ci/cross.sh "$tarball" "$results_dir" variants aarch64 s390x \
            ppc64el riscv64
        for r in disable-asm disable-avx512 disable-avx512-avx2 \
                 disable-all-isas aarch64 s390x \
                 ppc64el ppc64el-power8 ppc64el-power10; do
            stage_result "$r" "$results_dir" "$r"
        done
        stage_result s390x-novx "$results_dir" s390x-novx
        # RVV under qemu-riscv64: each vector length, and no vector unit
        for r in vlen128 vlen256 vlen512 vlen1024 novector zvkb; do
            stage_result "riscv64 rvv $r" "$results_dir" "riscv64-$r"
        done
    else
        check "make dist" false
    fi
    rm -rf "$results_dir"

    # --- the OpenSSL matrix: make check of the tarball in debootstrap
    # chroots of Debian 13 (OpenSSL 3.5) and unstable (3.6), counted per
    # version.  Chroots are made in $CHACHARNG_CHROOT_DIR if missing.
    note "OpenSSL 3.5 (Debian trixie) and 3.6 (Debian sid) in chroots"
    chroot_stage chroot-matrix.sh "make check" "the OpenSSL matrix" trixie sid

    # --- the installed module, as typed: `make install` of the tarball into
    # a throw-away overlay of each chroot (never this host), then the
    # literal `openssl rand -provider chacharng` and the library-DRBG cases
    note "installed module: OpenSSL 3.0 / 3.5 / 3.6 (Debian bookworm / trixie / sid chroots)"
    chroot_stage chroot-install.sh "installed module" \
        "the installed-module stage" bookworm trixie sid

    chroots_report

    # --- the Debian package (counted below) starts now and runs beside
    # the hardening stages: alone it keeps about one core busy (bookworm:
    # 273 s of CPU in 300 s), the rest waiting on apt, dpkg and the
    # archive, which the hardening stages fill (on 2 cores, 2026-12-02:
    # 1263 s for both together, against 970 + 517 s one after the other).
    # Its output is shown under its own heading when both are done.
    deb_dir=$(mktemp -d)
    deb_pid=
    deb_start=$SECONDS
    if tarball=$(dist_tarball); then
        ( bash .ci/deb.sh "$tarball" "$deb_dir" bookworm trixie sid
          echo $((SECONDS - deb_start)) >"$deb_dir/stage.time" ) \
            >"$deb_dir/stage.out" 2>&1 &
        deb_pid=$!
    fi

    # --- hardening: sanitizers, valgrind, ThreadSanitizer, fuzzing -------
    # Each stage builds the tarball in a directory of its own and is
    # bounded in time (.ci/hardening.sh); the stage name shows its time.
    note "hardening: ASan+UBSan, valgrind, ThreadSanitizer, libFuzzer, man page"
    hard_dir=$(mktemp -d)
    if tarball=$(dist_tarball); then
        bash .ci/hardening.sh "$tarball" "$hard_dir" \
            sanitizers valgrind tsan fuzz manpage
        for s in "sanitizers:make check (ASan+UBSan)" \
                 "valgrind:make check-valgrind (memcheck)" \
                 "tsan:thread tests (ThreadSanitizer)" \
                 "fuzz:libFuzzer (${FUZZ_SECONDS:-60} s)" \
                 "manpage:man page (groff -ww)"; do
            r=${s%%:*}
            stage_result \
                "${s#*:} [$(cat "$hard_dir/$r.time" 2>/dev/null || echo ?) s]" \
                "$hard_dir" "$r"
        done
    else
        check "make dist (for the hardening stages)" false
    fi
    rm -rf "$hard_dir"

    # --- the Debian package: built in a copy of each release's chroot,
    # installed with apt into a clean copy, chacharngctl and removal
    # tested there (.ci/deb.sh), counted per release
    note "Debian package: build, install, chacharngctl, remove (12, 13, unstable)"
    if [ -n "$deb_pid" ]; then
        wait "$deb_pid"
        cat "$deb_dir/stage.out"
        echo "(the Debian package stage took $(cat "$deb_dir/stage.time" 2>/dev/null || echo ?) s, beside the hardening stages)"
        chroot_count "Debian package" "$deb_dir" bookworm trixie sid
    else
        check "make dist (for the Debian package)" false
    fi
    rm -rf "$deb_dir"

    # --- C style: every C file as .clang-format says (clang-format 14) ----
    if command -v clang-format >/dev/null; then
        check "make check-style (clang-format)" make check-style
    else
        skip "make check-style" "clang-format not installed"
    fi

    # --- shell scripts -----------------------------------------------------
    if command -v shellcheck >/dev/null; then
        check "shellcheck" shellcheck .ci/run .ci/*.sh test/*.sh tools/*.sh debian/prerm debian/postinst debian/postrm
        check "shellcheck (chacharngctl, with the parts it sources)" shellcheck -s sh -x -P tools tools/chacharngctl.in
    else
        skip "shellcheck" "shellcheck not installed"
    fi
fi

note "results (the whole run took $SECONDS s)"
printf '%s\n' "${results[@]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
