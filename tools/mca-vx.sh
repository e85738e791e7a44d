#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The s390x vector kernel's round loops against OpenSSL's, by llvm-mca's
# scheduling models of z15 (arch13) and z16 (arch14).  These are the
# model's estimates, not measurements: no s390x hardware is needed.
#
# Each loop (the code between the local symbols chacha_vx_mca_<name>_begin
# and _end of the built object, one double round of every block of the
# pass) runs for 100 iterations.  Its cycles per byte are
#   cycles per iteration x 10 double rounds / (blocks x 64 bytes),
# and the blocks of a pass are its vaf (32-bit add, four lanes) count / 8:
# a double round adds 32 words per block.
#
# OpenSSL's figures are constants, measured once the same way on Debian
# 12's libcrypto.so.3 for s390x (libssl3 3.0.20-1~deb12u2, built from
# crypto/chacha/asm/chacha-s390x.pl): its round loops disassembled with
# llvm-objdump-19 --mcpu=z16, the 4x vertical pass (0x12c6ca-0x12c90e,
# requests up to 256 bytes) and the 6x pass by rows (0x12cd20-0x12d15c,
# longer requests), fed to llvm-mca-19 the same way.
#
# Usage: tools/mca-vx.sh [--tap] [OBJECT]
#   OBJECT  asm/chacha_vx_s390x.lo or a .o; without it the build's own
#           ($abs_top_builddir) and --tap, as make check runs it
#   --tap   one TAP point per model and loop: the eight-block pass must
#           be no slower than OpenSSL's faster pass and faster than its
#           long-request pass; the four-block pass no slower than
#           OpenSSL's 4x
# Environment: LLVM_MCA, LLVM_OBJDUMP, LLVM_NM (default: the -19 tools).
# Without them or the object: a message, exit 0 (77 under --tap).
set -u

MODELS="z15 z16"

# OpenSSL's cycles per byte on model $1: "4x 6x".
openssl_cpb() {
    case $1 in
    z15 | z16) echo "1.8766 2.3448" ;;
    esac
}

tap=0
if [ "${1:-}" = --tap ]; then
    tap=1
    shift
fi
if [ $# -eq 0 ]; then
    tap=1
    set -- "${abs_top_builddir:-.}/asm/chacha_vx_s390x.lo"
fi
object=$1
mca=${LLVM_MCA:-llvm-mca-19}
objdump=${LLVM_OBJDUMP:-llvm-objdump-19}
nm=${LLVM_NM:-llvm-nm-19}

n_points=0
n_failed=0

report() {
    [ "$tap" = 1 ] && set -- "# $*"
    printf '%s\n' "$*"
}

give_up() {
    if [ "$tap" = 1 ]; then
        echo "1..0 # SKIP $*"
        exit 77
    fi
    echo "mca-vx: skipped: $*"
    exit 0
}

# verdict 0|1 TEXT: one TAP point (1 = holds)
verdict() {
    n_points=$((n_points + 1))
    [ "$1" = 1 ] || n_failed=$((n_failed + 1))
    [ "$tap" = 1 ] || return 0
    if [ "$1" = 1 ]; then
        echo "ok $n_points - [vx] $2"
    else
        echo "not ok $n_points - [vx] $2"
    fi
}

# The real object behind a libtool .lo ($1), or $1 itself.
real_object() {
    local pic
    case $1 in
    *.lo)
        pic=$(sed -n "s/^pic_object='\\(.*\\)'/\\1/p" "$1")
        if [ -z "$pic" ] || [ "$pic" = none ]; then
            pic=$(sed -n "s/^non_pic_object='\\(.*\\)'/\\1/p" "$1")
        fi
        echo "$(dirname "$1")/$pic" ;;
    *) echo "$1" ;;
    esac
}

# Loop $2 of object $1 as llvm-mca input, its back branch aimed at its top.
loop_source() {
    local from to
    from=$("$nm" "$1" | awk -v s="chacha_vx_mca_$2_begin" '$3 == s { print "0x" $1 }')
    to=$("$nm" "$1" | awk -v s="chacha_vx_mca_$2_end" '$3 == s { print "0x" $1 }')
    [ -n "$from" ] && [ -n "$to" ] || return 1
    echo "top:"
    "$objdump" -d --mcpu=z13 --no-show-raw-insn --no-leading-addr \
        --start-address="$from" --stop-address="$to" "$1" \
        | awk -F'\t' 'NF >= 3 && $1 ~ /^ *$/ {
            if ($2 == "brct") sub(/, .*/, ", top", $3)
            print $2 "\t" $3 }'
}

# Cycles per byte of loop file $2 on model $1.
loop_cpb() {
    local cycles adds
    cycles=$("$mca" -mtriple=s390x -mcpu="$1" -iterations=100 "$2" 2>/dev/null \
        | awk '/^Total Cycles:/ { print $3 / 100 }')
    adds=$(grep -c '^vaf' "$2")
    [ -n "$cycles" ] && [ "$adds" -gt 0 ] || return 1
    awk -v c="$cycles" -v a="$adds" \
        'BEGIN { printf "%s %.4f %d", c, c * 10 / (a / 8 * 64), a / 8 }'
}

at_most() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'; }
below() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 < b + 0) }'; }

for tool in "$mca" "$objdump" "$nm"; do
    command -v "$tool" >/dev/null 2>&1 || give_up "$tool not found (Debian: llvm-19)"
done
[ -f "$object" ] || give_up "no $object: not an s390x build with the vector kernel"
object=$(real_object "$object")
[ -f "$object" ] || give_up "no $object"
"$objdump" -f "$object" 2>/dev/null | grep -q s390 \
    || give_up "$object is not an s390x object"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

report "llvm-mca-19 estimates (not measurements), round loops, cycles per byte"
report "$(printf '%-5s %-6s %6s %9s %7s %12s %12s' model loop blocks \
    cycles/it c/B 'OpenSSL 4x' 'OpenSSL 6x')"
for loop in pass8 pass4; do
    if ! loop_source "$object" "$loop" > "$scratch/$loop.s"; then
        report "no chacha_vx_mca_${loop}_begin/_end in $object"
        verdict 0 "round loop $loop marked in $object"
        continue
    fi
    for model in $MODELS; do
        read -r four six <<< "$(openssl_cpb "$model")"
        if ! read -r cycles cpb blocks <<< "$(loop_cpb "$model" "$scratch/$loop.s")" \
            || [ -z "$cpb" ]; then
            report "llvm-mca failed on $loop for $model"
            verdict 0 "$model: llvm-mca runs the $loop loop"
            continue
        fi
        report "$(printf '%-5s %-6s %6s %9s %7s %12s %12s' "$model" "$loop" \
            "$blocks" "$cycles" "$cpb" "$four" "$six")"
        if [ "$loop" = pass8 ]; then
            at_most "$cpb" "$four"
            verdict $((1 - $?)) "$model: pass8 $cpb c/B <= OpenSSL's 4x $four"
            below "$cpb" "$six"
            verdict $((1 - $?)) "$model: pass8 $cpb c/B < OpenSSL's 6x $six"
        else
            at_most "$cpb" "$four"
            verdict $((1 - $?)) "$model: pass4 $cpb c/B <= OpenSSL's 4x $four"
        fi
    done
done

if [ "$tap" = 1 ]; then
    echo "1..$n_points"
fi
[ "$n_failed" = 0 ]
