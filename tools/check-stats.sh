#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# `make check-stats`: the full statistical battery on one kernel's raw
# live CHACHA20-DRBG stream (tools/rawout with no seed: seeded from the
# system, fresh every run, so its verdicts are draws, unlike the fixed-seed
# ones of test/t_stats.sh in `make check`).  Slow: dieharder -a takes about
# an hour.  Usage: check-stats.sh [KERNEL]   (default: the provider's choice)
#
#  1. rngtest on 200000 FIPS 140-2 blocks (500 MB).  A true random source
#     fails about 0.074% of blocks, 148 expected; outside 95..210 (five
#     standard deviations, chance about 2e-6) fails, too few as well as
#     too many: a stream tuned to pass would show it.
#  2. dieharder -a.  Every result that is not PASSED is run once more on
#     fresh output (same test, same ntuple).  Any FAILED after that, or
#     more than one WEAK (expected: 0.01), fails.
#
# Writes dieharder-KERNEL.log (the raw runs) and stats-KERNEL.txt (the
# summary, also printed) in the current directory.

set -u

: "${abs_top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${OPENSSL_MODULES:=$abs_top_builddir/.libs}"
export OPENSSL_MODULES
unset CHACHARNG_DEBUG

rawout=$abs_top_builddir/tools/rawout
kernel=${1:-}
blocks=200000
fips_lo=95
fips_hi=210

for tool in rngtest dieharder; do
    command -v "$tool" >/dev/null || {
        echo "check-stats: $tool is not installed" >&2
        exit 1
    }
done
if [ -z "$kernel" ]; then
    kernel=$("$rawout" -n 1 2>&1 >/dev/null | sed -n 's/.*kernel //p')
fi
[ -n "$kernel" ] || {
    echo "check-stats: cannot start $rawout" >&2
    exit 1
}

log=dieharder-$kernel.log
summary=stats-$kernel.txt
stream() {
    CHACHARNG_IMPL=$kernel "$rawout" -i "$kernel" 2>/dev/null
}

status=0
start=$(date +%s)
{
    echo "chacharng statistical battery: kernel $kernel"
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); $(dieharder -h 2>&1 \
        | sed -n 's/.*\(dieharder version [0-9.]*\).*/\1/p' | head -n 1);" \
        "rngtest $(rngtest -V 2>&1 | sed -n 's/^rngtest //p' | head -n 1)"
} >"$summary"

# --- rngtest ------------------------------------------------------------
fips=$(stream | rngtest -c "$blocks" 2>&1)
fails=$(printf '%s\n' "$fips" | sed -n 's/^rngtest: FIPS 140-2 failures: *//p')
if [ -z "$fails" ]; then
    echo "rngtest: no result" >>"$summary"
    status=1
else
    verdict=ok
    if [ "$fails" -lt "$fips_lo" ] || [ "$fails" -gt "$fips_hi" ]; then
        verdict="OUT OF RANGE"
        status=1
    fi
    {
        echo "rngtest FIPS 140-2: $fails of $blocks blocks failed" \
            "(expected about 148, accepted $fips_lo..$fips_hi): $verdict"
        printf '%s\n' "$fips" \
            | sed -n 's/^rngtest: FIPS 140-2(2001-10-10) /  /p'
    } >>"$summary"
fi

# --- dieharder -a ---------------------------------------------------------
stream | dieharder -g 200 -a >"$log" 2>&1
results=$(awk -F'|' 'NF >= 6 && $6 ~ /PASSED|WEAK|FAILED/' "$log")
total=$(printf '%s\n' "$results" | grep -c .)
passed=$(printf '%s\n' "$results" | grep -c PASSED)
weak_first=$(printf '%s\n' "$results" | grep -c WEAK)
failed_first=$(printf '%s\n' "$results" | grep -c FAILED)

# Rerun every non-PASSED result once: test name and ntuple from its line.
weak=0
failed=0
reruns=
while IFS='|' read -r name ntup _ _ p verdict; do
    name=$(echo "$name" | tr -d ' ')
    ntup=$(echo "$ntup" | tr -d ' ')
    verdict=$(echo "$verdict" | tr -d ' ')
    [ "$verdict" = PASSED ] && continue
    echo "--- rerun: $name ntup $ntup (was $verdict, p=$p)" >>"$log"
    again=$(stream | dieharder -g 200 -d "$name" -n "$ntup" 2>&1 \
        | tee -a "$log" \
        | awk -F'|' 'NF >= 6 && $6 ~ /PASSED|WEAK|FAILED/ { v = $6 }
                     END { gsub(/ /, "", v); print v }')
    p=$(echo "$p" | tr -d ' ')
    reruns="$reruns
  $name (ntup $ntup): $verdict p=$p, rerun: ${again:-none}"
    case $again in
    PASSED) ;;
    WEAK) weak=$((weak + 1)) ;;
    *) failed=$((failed + 1)) ;;
    esac
done <<<"$results"

if [ "$total" -eq 0 ] || [ "$failed" -gt 0 ] || [ "$weak" -gt 1 ]; then
    status=1
fi
{
    echo "dieharder -a: $total results; first run: $passed PASSED," \
        "$weak_first WEAK, $failed_first FAILED"
    [ -n "$reruns" ] && echo "non-PASSED results, each run once more:$reruns"
    echo "after reruns: $weak WEAK, $failed FAILED (accepted: 0 FAILED," \
        "at most 1 WEAK)"
    echo "run time: $(( ($(date +%s) - start) / 60 )) min;" \
        "verdict: $([ "$status" -eq 0 ] && echo PASS || echo FAIL)"
} >>"$summary"

cat "$summary"
exit "$status"
