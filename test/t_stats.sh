#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Statistical batteries on the raw CHACHA20-DRBG output stream (tools/rawout),
# once per kernel the build and CPU have (or only CHACHARNG_IMPL when set):
#
#  - rngtest (FIPS 140-2) on 2000 blocks of 20000 bits.  A true random
#    source fails about 0.074% of blocks (measured over 50000 blocks: 36),
#    so a handful of failures is normal; more than 8 in 2000 (expected 1.5;
#    chance 2.5e-5) fails the check.
#  - a short dieharder subset (birthdays, bitstream, count-the-1s, runs,
#    STS monobit, byte distribution; a few seconds each).  FAILED fails.
#    WEAK (p < 0.005 or p > 0.995) happens to a good generator once in 100
#    results, so a WEAK test is run again on fresh output, up to twice;
#    WEAK three times in a row fails (chance 1e-6 per result).
#
# The full `dieharder -a` is `make check-stats` (tools/check-stats.sh).
# Prints TAP; a missing tool or a sanitizer build reports skips, not passes.

set -u

: "${abs_top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${abs_top_builddir:=$abs_top_srcdir}"
: "${OPENSSL_MODULES:=$abs_top_builddir/.libs}"
export OPENSSL_MODULES
unset CHACHARNG_DEBUG

rawout=$abs_top_builddir/tools/rawout
blocks=2000
max_fips_failures=8
dieharder_tests="0 4 8 15 100 205"
limit=180 # seconds per battery run; a slow machine fails loudly, not hangs

# shellcheck source=test/tap.sh
. "$abs_top_srcdir/test/tap.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/chacharng-stats.XXXXXX") || {
    echo "Bail out! cannot create a temporary directory"
    exit 1
}
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# The stream of kernel $1 on stdout; its stderr is kept for diagnostics.
stream() {
    CHACHARNG_IMPL=$1 "$rawout" -i "$1" 2>"$tmp/rawout.err"
}

run_rngtest() {
    local k=$1 out=$tmp/rngtest.out fails succ

    stream "$k" | timeout "$limit" rngtest -c "$blocks" >"$out" 2>&1
    succ=$(sed -n 's/^rngtest: FIPS 140-2 successes: *//p' "$out")
    fails=$(sed -n 's/^rngtest: FIPS 140-2 failures: *//p' "$out")
    if [ -z "$succ" ] || [ -z "$fails" ] \
        || [ $((succ + fails)) -ne "$blocks" ]; then
        not_ok "[$k] rngtest: no verdict on $blocks blocks"
        diag <"$out"
        diag <"$tmp/rawout.err"
    elif [ "$fails" -le "$max_fips_failures" ]; then
        ok "[$k] rngtest FIPS 140-2: $fails of $blocks blocks failed" \
            "(at most $max_fips_failures expected)"
    else
        not_ok "[$k] rngtest FIPS 140-2: $fails of $blocks blocks failed" \
            "(at most $max_fips_failures expected)"
        grep 'FIPS 140-2(' "$out" | diag
    fi
}

# One dieharder test; prints its result lines (name|ntup|...|assessment)
# to $tmp/dh.out and the worst assessment (PASSED < WEAK < FAILED, or
# NONE when nothing came out) on stdout.
dieharder_once() {
    local k=$1 d=$2

    stream "$k" | timeout "$limit" dieharder -g 200 -d "$d" 2>&1 \
        | awk -F'|' 'NF >= 6 && $6 ~ /PASSED|WEAK|FAILED/' >"$tmp/dh.out"
    if grep -q FAILED "$tmp/dh.out"; then
        echo FAILED
    elif grep -q WEAK "$tmp/dh.out"; then
        echo WEAK
    elif grep -q PASSED "$tmp/dh.out"; then
        echo PASSED
    else
        echo NONE
    fi
}

run_dieharder() {
    local k=$1 d=$2 verdict name again

    verdict=$(dieharder_once "$k" "$d")
    name=$(awk -F'|' 'NR == 1 { gsub(/ /, "", $1); print $1 }' "$tmp/dh.out")
    for again in 1 2; do
        [ "$verdict" = WEAK ] || break
        diag <"$tmp/dh.out"
        echo "# WEAK: dieharder -d $d again on fresh output ($again of 2)"
        verdict=$(dieharder_once "$k" "$d")
        [ "$verdict" = WEAK ] && [ "$again" = 2 ] && verdict="WEAK 3 times"
    done
    case $verdict in
    PASSED) ok "[$k] dieharder -d $d ($name): PASSED" ;;
    NONE)
        not_ok "[$k] dieharder -d $d: no result (timed out or broken stream)"
        diag <"$tmp/rawout.err"
        ;;
    *)
        not_ok "[$k] dieharder -d $d ($name): $verdict"
        diag <"$tmp/dh.out"
        ;;
    esac
}

if [ ! -x "$rawout" ]; then
    echo "Bail out! $rawout not built"
    exit 1
fi
if [ -n "${CHACHARNG_IMPL:-}" ]; then
    kernels=$CHACHARNG_IMPL
else
    kernels=$("$rawout" -l) || {
        echo "Bail out! rawout -l failed"
        exit 1
    }
fi

for k in $kernels; do
    if [ -n "${CHACHARNG_SANITIZERS:-}" ]; then
        skip "[$k] statistics: sanitizer build (the plain build runs them)"
        continue
    fi
    if command -v rngtest >/dev/null; then
        run_rngtest "$k"
    else
        skip "[$k] rngtest not installed (rng-tools5)"
    fi
    for d in $dieharder_tests; do
        if command -v dieharder >/dev/null; then
            run_dieharder "$k" "$d"
        else
            skip "[$k] dieharder -d $d: dieharder not installed"
        fi
    done
done

echo "1..$points"
[ "$failures" -eq 0 ]
