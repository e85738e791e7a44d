#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# llvm-mca estimates for the aarch64 NEON kernel, beside OpenSSL's figures.
# No aarch64 hardware is needed: these are the estimates of LLVM's
# scheduling models for four cores, not measurements.
#
#   Round loops: the instructions between the local symbols
#   chacha_neon_mca_<name>_begin and _end of the built object, run by
#   llvm-mca for 100 iterations.  Cycles per iteration are turned into
#   cycles per byte by the 32-bit lane additions one iteration does (an
#   add of .4s counts 4, an add of a w register 1); a 64-byte block needs
#   20 rounds x 4 quarter rounds x 4 additions = 320, so
#   c/B = cycles per iteration x 320 / (additions x 64).
#
#   Whole calls: the kernel is linked into a small static program that
#   calls it once with 1 and with 16 blocks; qemu-aarch64 records every
#   instruction the call executes, and llvm-mca runs that trace once.
#   "before" is the four-block NEON kernel this one replaced, measured
#   the same way (tools/mca-neon.sh --calls OLD.o).
#
# Usage: tools/mca-neon.sh [--tap] [--calls] [OBJECT]
#   OBJECT   the built kernel, asm/chacha_neon_aarch64.lo or a .o; without
#            it, $abs_top_builddir/asm/chacha_neon_aarch64.lo and --tap
#            (how make check runs it)
#   --tap    print TAP: per model, one point that fails if the eight-block
#            pass is slower than OpenSSL's best path, one that fails if the
#            six-block pass is slower than OpenSSL's path for short
#            requests (4xNEON+1xIALU), and one per whole call that fails if
#            it costs more than before
#   --calls  only the whole-call estimates (for another kernel's object)
# Environment: LLVM_MCA, LLVM_OBJDUMP, LLVM_NM (default the -19 tools),
# MCA_CC (aarch64 C compiler for the call driver, default cc) and
# MCA_QEMU (default "qemu-aarch64 -L /").  Exits 0 with a message, or 77
# under --tap, when the object or llvm-mca is not there.
set -u

tap=0
calls_only=0
while [ $# -gt 0 ]; do
    case $1 in
    --tap) tap=1 ;;
    --calls) calls_only=1 ;;
    -*) echo "usage: $0 [--tap] [--calls] [OBJECT]" >&2; exit 2 ;;
    *) break ;;
    esac
    shift
done
if [ $# -eq 0 ]; then
    tap=1
    obj=${abs_top_builddir:-.}/asm/chacha_neon_aarch64.lo
else
    obj=$1
fi
mca=${LLVM_MCA:-llvm-mca-19}
objdump=${LLVM_OBJDUMP:-llvm-objdump-19}
nm=${LLVM_NM:-llvm-nm-19}
cc=${MCA_CC:-cc}
qemu=${MCA_QEMU:-qemu-aarch64 -L /}

models="neoverse-n1 neoverse-v1 neoverse-v2 cortex-a72"
# OpenSSL's NEON ChaCha20 (crypto/chacha/asm/chacha-armv8.pl) by the same
# estimate, for its 4xNEON+1xIALU path (below 512 bytes) and its
# 6xNEON+2xIALU path (from 512 bytes); constants, not recomputed here.
openssl_4x1() {
    case $1 in
    neoverse-n1) echo 2.00 ;; neoverse-v1) echo 1.81 ;;
    neoverse-v2) echo 1.75 ;; cortex-a72) echo 2.88 ;;
    esac
}
openssl_6x2() {
    case $1 in
    neoverse-n1) echo 2.15 ;; neoverse-v1) echo 1.33 ;;
    neoverse-v2) echo 1.29 ;; cortex-a72) echo 2.89 ;;
    esac
}
# The four-block kernel before this one, whole calls, cycles (1 / 16 blocks).
before_calls() {
    case $1 in
    neoverse-n1) echo "696 2740" ;; neoverse-v1) echo "586 2188" ;;
    neoverse-v2) echo "584 2053" ;; cortex-a72) echo "1007 3962" ;;
    esac
}

points=0
failed=0
say() {
    if [ "$tap" = 1 ]; then
        echo "# $*"
    else
        echo "$*"
    fi
}
point() {   # point OK DESCRIPTION
    points=$((points + 1))
    if [ "$1" = 1 ]; then
        echo "ok $points - $2"
    else
        echo "not ok $points - $2"
        failed=$((failed + 1))
    fi
}
skip_all() {
    if [ "$tap" = 1 ]; then
        echo "1..0 # SKIP $*"
        exit 77
    fi
    echo "mca: skipped: $*"
    exit 0
}

command -v "$mca" >/dev/null 2>&1 || skip_all "$mca not found (Debian: llvm-19)"
command -v "$objdump" >/dev/null 2>&1 || skip_all "$objdump not found"
command -v "$nm" >/dev/null 2>&1 || skip_all "$nm not found"
[ -f "$obj" ] || skip_all "no $obj: not an aarch64 build with the NEON kernel"
case $obj in
*.lo)
    # libtool object: the real one is named inside
    o=$(sed -n "s/^pic_object='\\(.*\\)'/\\1/p" "$obj")
    [ -n "$o" ] && [ "$o" != none ] \
        || o=$(sed -n "s/^non_pic_object='\\(.*\\)'/\\1/p" "$obj")
    obj=$(dirname "$obj")/$o ;;
esac
[ -f "$obj" ] || skip_all "no $obj"
"$objdump" -f "$obj" 2>/dev/null | grep -q 'aarch64' \
    || skip_all "$obj is not an aarch64 object"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Address of symbol $2 in object $1 (hex, 0x-prefixed), empty if absent.
sym() {
    "$nm" "$1" | awk -v s="$2" '$3 == s { print "0x" $1; exit }'
}

# Disassemble [$2, $3) of $1 as llvm-mca input: one instruction a line,
# comments dropped, every address operand (branch targets, adrp pages)
# replaced by a label at the top, so the text assembles on its own.
listing() {
    echo ".Lmca_top:"
    "$objdump" -d --no-show-raw-insn --no-leading-addr \
        --start-address="$2" --stop-address="$3" "$1" \
        | awk -F'\t' 'NF >= 3 && $1 ~ /^ *$/ { print $2 "\t" $3 }' \
        | sed -e 's://.*$::' -e 's/[[:space:]]*$//' \
              -e 's/0x[0-9a-f]* <[^>]*>/.Lmca_top/'
}

# Cycles per iteration of the loop in file $2 on model $1.
loop_cycles() {
    "$mca" -mtriple=aarch64 -mcpu="$1" -iterations=100 "$2" 2>/dev/null \
        | awk '/^Total Cycles:/ { printf "%.2f", $3 / 100 }'
}

# 32-bit lane additions in the loop in file $1.
lane_adds() {
    awk -F'\t' '$1 == "add" {
        if ($2 ~ /^v[0-9]+\.4s/) n += 4
        else if ($2 ~ /^v[0-9]+\.2s/) n += 2
        else if ($2 ~ /^w[0-9]+,/) n += 1
    } END { print n + 0 }' "$1"
}

cpb() { # cycles lane-additions -> cycles per byte
    awk -v c="$1" -v n="$2" 'BEGIN { printf "%.2f", c * 320 / (n * 64) }'
}

le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'; }

if [ "$calls_only" = 0 ]; then
    found=$("$nm" "$obj" | sed -n 's/.* chacha_neon_mca_\(.*\)_begin$/\1/p')
    # widest first, then any others
    loops=$(for l in pass8 pass6 single; do
                echo "$found" | grep -qx "$l" && echo "$l"; done
            echo "$found" | grep -vx -e pass8 -e pass6 -e single)
    # Without the eight-block pass's markers there is nothing to check,
    # which is a failure.
    case " ${loops//$'\n'/ } " in
    *" pass8 "*) ;;
    *)  if [ "$tap" = 1 ]; then
            point 0 "round loop markers chacha_neon_mca_pass8_begin/_end in $obj"
        else
            say "no round loop markers chacha_neon_mca_pass8_begin/_end in $obj"
        fi ;;
    esac
    say "llvm-mca-19 estimates (not measurements), cycles per byte of the"
    say "round loop: cycles per iteration x 320 / (32-bit lane additions x 64)"
    for l in $loops; do
        f=$work/$l.s
        listing "$obj" "$(sym "$obj" "chacha_neon_mca_${l}_begin")" \
            "$(sym "$obj" "chacha_neon_mca_${l}_end")" > "$f"
        n=$(lane_adds "$f")
        say ""
        case $l in
        pass8) say "loop 'pass8' (8 blocks: 6 NEON + 2 integer, 7 blocks or more)" ;;
        pass6) say "loop 'pass6' (6 blocks: 4 NEON + 2 integer, 3 to 6 blocks)" ;;
        single) say "loop 'single' (1 block on the integer pipes, 1 or 2 blocks)" ;;
        *) say "loop '$l'" ;;
        esac
        # One block alone is not a per-byte path: no OpenSSL columns.
        if [ "$l" = single ]; then
            say "$(printf '%-12s %7s %7s' model cycles c/B)"
        else
            say "$(printf '%-12s %7s %7s %10s %10s' model cycles ours \
                'OpenSSL' 'OpenSSL')"
            say "$(printf '%-12s %7s %7s %10s %10s' '' /iter c/B \
                '4xN+1xI' '6xN+2xI')"
        fi
        for m in $models; do
            c=$(loop_cycles "$m" "$f")
            [ -n "$c" ] || { echo "llvm-mca failed on $f for $m" >&2; exit 1; }
            ours=$(cpb "$c" "$n")
            if [ "$l" = single ]; then
                say "$(printf '%-12s %7s %7s' "$m" "$c" "$ours")"
                continue
            fi
            a=$(openssl_4x1 "$m")
            b=$(openssl_6x2 "$m")
            say "$(printf '%-12s %7s %7s %10s %10s' "$m" "$c" "$ours" "$a" "$b")"
            [ "$tap" = 1 ] || continue
            # The eight-block pass must match OpenSSL's best path on each
            # model; the six-block pass, which serves requests below 448
            # bytes, OpenSSL's path for requests below 512 bytes.
            case $l in
            pass8)
                best=$a
                le "$b" "$a" && best=$b
                le "$ours" "$best"
                point $((1 - $?)) "$m: pass8 round loop $ours c/B <= OpenSSL's best $best" ;;
            pass6)
                le "$ours" "$a"
                point $((1 - $?)) "$m: pass6 round loop $ours c/B <= OpenSSL's 4xNEON+1xIALU $a" ;;
            esac
        done
    done
fi

# Whole calls, from an executed-instruction trace.
calls() {
    local drv=$work/call lo hi a size name n m c before b1 b16
    cat > "$work/call.c" <<'EOF'
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
void chacharng_chacha_blocks_neon(uint8_t *, const uint32_t *, size_t);
int main(int argc, char **argv)
{
    static uint8_t out[16 * 64];
    uint32_t state[16] = { 0x61707865, 0x3320646e, 0x79622d32, 0x6b206574 };
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1;

    chacharng_chacha_blocks_neon(out, state, n > 16 ? 16 : n);
    return out[0] == 0x5a;
}
EOF
    if ! $cc -O1 -static -o "$drv" "$work/call.c" "$obj" 2>"$work/cc.err"; then
        say "whole calls: skipped: $cc cannot link a static aarch64 program"
        return
    fi
    if ! $qemu -singlestep -d nochain,exec -D "$work/t1" "$drv" 1 \
        >/dev/null 2>&1; then
        say "whole calls: skipped: cannot trace with $qemu"
        return
    fi
    # The kernel's code: from its first entry to the end of the last one.
    lo=
    hi=0
    while read -r a size _ name; do
        case $name in chacharng_chacha_blocks_neon* | chacha_neon_blocks_by) ;;
            *) continue ;;
        esac
        a=$((0x$a))
        [ -z "$lo" ] || [ "$a" -lt "$lo" ] && lo=$a
        [ $((a + 0x$size)) -gt "$hi" ] && hi=$((a + 0x$size))
    done < <("$nm" -S "$drv")
    [ -n "$lo" ] || { say "whole calls: skipped: no kernel in $drv"; return; }
    "$objdump" -d --no-show-raw-insn --start-address="$lo" \
        --stop-address="$hi" "$drv" \
        | awk -F'\t' '$1 ~ /^ *[0-9a-f]+: *$/ {
            a = $1; gsub(/[ :]/, "", a); print a "\t" $2 "\t" $3 }' \
        | sed -e 's://.*$::' -e 's/[[:space:]]*$//' \
              -e 's/0x[0-9a-f]* <[^>]*>/.Lmca_top/' > "$work/text"
    say ""
    say "whole calls, cycles (llvm-mca on the instructions one call executes)"
    if [ "$calls_only" = 1 ]; then
        say "$(printf '%-12s %8s %8s' model '1 block' '16 blocks')"
    else
        say "$(printf '%-12s %14s %14s' model '1 block' '16 blocks')"
        say "$(printf '%-12s %14s %14s' '' 'before after' 'before after')"
    fi
    for n in 1 16; do
        $qemu -singlestep -d nochain,exec -D "$work/t$n" "$drv" "$n" \
            >/dev/null 2>&1
        { echo ".Lmca_top:"
          awk -F'\t' 'NR == FNR { insn[$1] = $2 "\t" $3; next }
              /^Trace/ { split($0, f, "/"); a = f[2]; sub(/^0*/, "", a)
                         if (a in insn) print insn[a] }' \
              "$work/text" "$work/t$n"; } > "$work/call$n.s"
    done
    for m in $models; do
        local row=""
        for n in 1 16; do
            c=$("$mca" -mtriple=aarch64 -mcpu="$m" -iterations=1 \
                "$work/call$n.s" 2>/dev/null | awk '/^Total Cycles:/ { print $3 }')
            if [ "$calls_only" = 1 ]; then
                row="$row$(printf ' %8s' "$c")"
                continue
            fi
            read -r b1 b16 <<< "$(before_calls "$m")"
            if [ "$n" = 1 ]; then before=$b1; else before=$b16; fi
            row="$row$(printf ' %6s %7s' "$before" "$c")"
            if [ "$tap" = 1 ]; then
                le "$c" "$before"
                point $((1 - $?)) "$m: $n-block call $c cycles <= $before before"
            fi
        done
        say "$(printf '%-12s' "$m")$row"
    done
}
calls

if [ "$tap" = 1 ]; then
    echo "1..$points"
    [ "$failed" = 0 ]
fi
