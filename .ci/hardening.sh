#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The hardening stages of .ci/test-all.sh, each built from the release
# tarball in a directory of its own (the source tree is configured in
# place, so it cannot host other builds):
#
#   sanitizers  ./configure --enable-sanitizers; make check (ASan + UBSan,
#               no recovery; the CLI tests preload the ASan runtime into
#               the system openssl)
#   valgrind    make check-valgrind (the C tests under memcheck, AVX2 kernel)
#   tsan        ./configure --enable-tsan; the thread tests
#   fuzz        make fuzz for FUZZ_SECONDS (default 60) seconds
#   manpage     doc/chacharng.7 and doc/chacharngctl.8 format with no
#               groff warning
#
# For each STAGE it writes RESULTS_DIR/STAGE.log, an automake
# test-suite.log (or a summary in the same format for single checks),
# or RESULTS_DIR/STAGE.skip holding the reason it could not run, and
# RESULTS_DIR/STAGE.time (seconds).  Every stage is bounded by `timeout`.
#
# Usage: .ci/hardening.sh TARBALL RESULTS_DIR STAGE...
set -u

if [ $# -lt 3 ]; then
    echo "usage: $0 TARBALL RESULTS_DIR STAGE..." >&2
    exit 2
fi
tarball=$(realpath "$1")
results=$(realpath "$2")
shift 2
jobs=$(nproc 2>/dev/null || echo 2)
fuzz_seconds=${FUZZ_SECONDS:-60}

work=$(mktemp -d "${TMPDIR:-/tmp}/chacharng-hardening.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

# A fresh tree from the tarball in $work/$1, configured with the rest of
# the arguments and built; prints its path.  Output goes to $work/$1.out.
build() {
    local name=$1 dir

    shift
    mkdir -p "$work/$name" || return 1
    tar -xf "$tarball" -C "$work/$name" || return 1
    dir=$(echo "$work/$name"/chacharng-*)
    (
        cd "$dir" \
            && ./configure --enable-werror "$@" \
            && make -j"$jobs"
    ) >"$work/$name.out" 2>&1 || {
        echo "build ($name) failed:" >&2
        tail -n 30 "$work/$name.out" >&2
        return 1
    }
    echo "$dir"
}

# A one-check result in test-suite.log form, so test-all.sh counts it the
# same way; $2 is pass or fail, the rest is kept as the log's body.
single_result() {
    local out=$1 verdict=$2 p=0 f=0

    shift 2
    if [ "$verdict" = pass ]; then p=1; else f=1; fi
    {
        printf '# TOTAL: 1\n# PASS:  %d\n# SKIP:  0\n# XFAIL: 0\n' "$p"
        printf '# FAIL:  %d\n# XPASS: 0\n# ERROR: 0\n\n' "$f"
        printf '%s\n' "$@"
    } >"$out"
}

# The plain build that valgrind and fuzz share, made by the first of
# them; on failure the next one tries again.
plain_dir=
plain_build() {
    [ -n "$plain_dir" ] || plain_dir=$(build plain)
}

# needs TOOL STAGE: whether TOOL is installed; if not, STAGE is skipped.
needs() {
    command -v "$1" >/dev/null && return 0
    echo "$1 not installed" >"$results/$2.skip"
    return 1
}

run_stage() {
    local stage=$1 dir t

    case $stage in
    sanitizers)
        dir=$(build asan --enable-sanitizers) || return 0
        (cd "$dir" && timeout 900 make -j"$jobs" check >/dev/null 2>&1)
        cp "$dir/test-suite.log" "$results/$stage.log" 2>/dev/null
        ;;
    valgrind)
        needs valgrind "$stage" && plain_build || return 0
        # the C tests only: the shell tests run the system openssl
        # (make, not the shell, expands the list)
        # shellcheck disable=SC2016
        (cd "$plain_dir" && timeout 1800 make -j"$jobs" check-valgrind \
            TESTS='$(check_PROGRAMS)' >/dev/null 2>&1)
        cp "$plain_dir/test-suite-memcheck.log" "$results/$stage.log" \
            2>/dev/null
        ;;
    tsan)
        dir=$(build tsan --enable-tsan) || {
            if grep -q "cannot build with" "$work/tsan.out"; then
                echo "the compiler cannot build with -fsanitize=thread" \
                    >"$results/$stage.skip"
            fi
            return 0
        }
        # the tests that run threads (make expands the group)
        # shellcheck disable=SC2016
        (cd "$dir" \
            && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
                timeout 600 make -j"$jobs" check TESTS='$(thread_tests)' \
                >/dev/null 2>&1)
        cp "$dir/test-suite.log" "$results/$stage.log" 2>/dev/null
        ;;
    fuzz)
        needs clang "$stage" && plain_build || return 0
        if (cd "$plain_dir" \
            && timeout $((fuzz_seconds + 300)) make fuzz \
                FUZZ_TIME="$fuzz_seconds" >fuzz.out 2>&1); then
            single_result "$results/$stage.log" pass \
                "$(grep -E '^(stat::|Done)' "$plain_dir/fuzz.out")"
        else
            single_result "$results/$stage.log" fail \
                "$(tail -n 60 "$plain_dir/fuzz.out")"
        fi
        ;;
    manpage)
        needs groff "$stage" || return 0
        dir=$(dirname "$0")/..
        t=$(for page in "$dir/doc/chacharng.7" "$dir/doc/chacharngctl.8"; do
            groff -man -ww -z "$page" 2>&1 | sed "s|^|${page##*/}: |"
        done)
        if [ -z "$t" ]; then
            single_result "$results/$stage.log" pass
        else
            single_result "$results/$stage.log" fail "$t"
        fi
        ;;
    *)
        echo "unknown stage $stage" >&2
        return 1
        ;;
    esac
}

for stage in "$@"; do
    start=$(date +%s)
    run_stage "$stage"
    echo $(($(date +%s) - start)) >"$results/$stage.time"
done
exit 0
