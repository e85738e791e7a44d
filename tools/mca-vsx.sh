#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# llvm-mca estimates for the ppc64el VSX kernel's round loops, beside
# OpenSSL's loops on the same models.  No POWER hardware is needed: these
# are the estimates of LLVM's POWER8, POWER9 and POWER10 scheduling
# models (pwr8, pwr9, pwr10), not measurements.
#
# A round loop is the text between the local symbols chacha_vsx_mca_x8_N
# (or _x4_N) and chacha_vsx_mca_x8_end_N inside the entry
# chacharng_chacha_blocks_vsx of the built object: one double round of
# eight (four) blocks.  llvm-mca runs it for 100 iterations; ten
# iterations make the blocks, so c/B = cycles per iteration x 10 / (blocks
# x 64), the blocks counted from the loop itself (one vadduwm adds four
# lanes, and a block takes 32 additions a double round).
#
# OpenSSL's figures are constants, found the same way from the machine
# code Debian ships, not from its source: libcrypto.so.3 of Debian 13's
# libssl3t64 for ppc64el (OpenSSL 3.5.7), disassembled with
# llvm-objdump-19, each round loop (the code from a bdnz's target to the
# bdnz) fed to llvm-mca-19 for 200 iterations.  OpenSSL runs its 4xVSX
# loop (chacha-ppc.pl, 4 blocks a double round: 48.04 cycles on pwr8,
# 48.02 on pwr9 and pwr10) on POWER8 and POWER9, and its 8-block POWER10
# loop (chachap10-ppc.pl: 54.03 cycles on pwr10) on POWER10; below 256
# bytes POWER10 takes a 4-block loop of the same 48.02 cycles.  Debian
# 12's OpenSSL 3.0.22 has the same 4xVSX loop and no POWER10 one.
#
# The kernel takes its eight-block pass on POWER10 only, its four-block
# pass everywhere else, so those are the pairs checked; the eight-block
# loop on pwr8 and pwr9 is shown for the record.
#
# Usage: tools/mca-vsx.sh [--tap] [OBJECT]
#   OBJECT  asm/chacha_vsx_ppc64le.lo or a .o; without it the build's own
#           ($abs_top_builddir) and --tap, which is how make check runs it
#   --tap   TAP output: the loop the kernel runs on each model must be
#           at least as fast as OpenSSL's loop there: the four-block loop
#           against OpenSSL's 4-block ones on all three models, the
#           eight-block loop against OpenSSL's POWER10 loop on pwr10
# Environment: LLVM_MCA, LLVM_OBJDUMP, LLVM_NM (default: the -19 tools).
# Exits 0 with a note (77 under --tap) when the tools or the object are
# missing.
set -u

mca=${LLVM_MCA:-llvm-mca-19}
objdump=${LLVM_OBJDUMP:-llvm-objdump-19}
nm=${LLVM_NM:-llvm-nm-19}

# OpenSSL's cycles per byte on model $1 where our $2-block loop runs:
# cycles per double round x 10 / (blocks x 64).
openssl_cpb() {
    case "$1:$2" in
    pwr10:8) echo 1.055 ;;
    pwr8:*) echo 1.877 ;;
    *) echo 1.876 ;;
    esac
}

tap=0
[ "${1:-}" = --tap ] && { tap=1; shift; }
if [ $# -eq 0 ]; then
    tap=1
    obj=${abs_top_builddir:-.}/asm/chacha_vsx_ppc64le.lo
else
    obj=$1
fi

npoints=0
nfailed=0
note() {
    if [ "$tap" = 1 ]; then printf '# %s\n' "$*"; else printf '%s\n' "$*"; fi
}
verdict() { # verdict TRUE|FALSE TEXT
    npoints=$((npoints + 1))
    if "$1"; then
        printf 'ok %d - %s\n' "$npoints" "$2"
    else
        printf 'not ok %d - %s\n' "$npoints" "$2"
        nfailed=$((nfailed + 1))
    fi
}
give_up() {
    if [ "$tap" = 0 ]; then
        printf 'mca-vsx: skipped: %s\n' "$*"
        exit 0
    fi
    printf '1..0 # SKIP %s\n' "$*"
    exit 77
}

for tool in "$mca" "$objdump" "$nm"; do
    command -v "$tool" >/dev/null 2>&1 || give_up "no $tool (Debian: llvm-19)"
done
[ -f "$obj" ] || give_up "no $obj: not a ppc64el build with the VSX kernel"
if [ "${obj%.lo}" != "$obj" ]; then
    # a libtool object names the real one: the PIC one if built
    real=$(sed -n "s/^pic_object='\\(.*\\)'/\\1/p" "$obj")
    if [ -z "$real" ] || [ "$real" = none ]; then
        real=$(sed -n "s/^non_pic_object='\\(.*\\)'/\\1/p" "$obj")
    fi
    obj=$(dirname "$obj")/$real
fi
[ -f "$obj" ] || give_up "no $obj"
"$objdump" -f "$obj" 2>/dev/null | grep -q 'elf64-powerpcle' \
    || give_up "$obj is not a little-endian ppc64 object"

tmpdir=$(mktemp -d)
trap 'rm -rf "$tmpdir"' EXIT

# The entry's address range, then the loop markers inside it: $1 = x8
# or x4, printed as "0xBEGIN 0xEND".
entry_lo=
entry_hi=
while read -r addr size _ name; do
    [ "$name" = chacharng_chacha_blocks_vsx ] || continue
    entry_lo=$((0x$addr))
    entry_hi=$((0x$addr + 0x$size))
done < <("$nm" -S --defined-only "$obj")
[ -n "$entry_lo" ] || give_up "no chacharng_chacha_blocks_vsx in $obj"
marker() { # marker KIND
    local addr name begin='' end=''
    while read -r addr _ name; do
        if [ $((0x$addr)) -lt "$entry_lo" ] || [ $((0x$addr)) -ge "$entry_hi" ]; then
            continue
        fi
        case $name in
        chacha_vsx_mca_"$1"_end_*) end=0x$addr ;;
        chacha_vsx_mca_"$1"_*) begin=0x$addr ;;
        esac
    done < <("$nm" --defined-only "$obj")
    [ -n "$begin" ] && [ -n "$end" ] && echo "$begin $end"
}

# The loop as llvm-mca input: the branch back names a label on line one.
loop_text() { # loop_text BEGIN END
    printf '.Lloop:\n'
    "$objdump" -d --no-show-raw-insn --no-leading-addr \
        --start-address="$1" --stop-address="$2" "$obj" \
        | awk -F'\t' '$1 ~ /^ +$/ && NF > 1 { print $2 " " $3 }' \
        | sed 's/0x[0-9a-f]* <[^>]*>/.Lloop/'
}

note "llvm-mca-19 estimates, not measurements: cycles per byte of the"
note "VSX kernel's round loops and of OpenSSL's loop on the same model"
note "$(printf '%-6s %-30s %8s %7s %8s %7s' model loop cycles c/B OpenSSL ratio)"
for kind in x8 x4; do
    read -r from to <<<"$(marker "$kind")"
    if [ -z "${to:-}" ]; then
        [ "$tap" = 1 ] && verdict false "round loop markers of the $kind pass"
        continue
    fi
    loop_text "$from" "$to" > "$tmpdir/$kind.s"
    blocks=$(grep -c '^vadduwm' "$tmpdir/$kind.s")
    blocks=$((blocks / 8))
    for model in pwr8 pwr9 pwr10; do
        cycles=$("$mca" -mtriple=powerpc64le-linux-gnu -mcpu="$model" \
            -iterations=100 "$tmpdir/$kind.s" 2>/dev/null \
            | awk '$1 == "Total" && $2 == "Cycles:" { print $3 / 100 }')
        [ -n "$cycles" ] || { echo "llvm-mca failed on the $kind loop" >&2; exit 1; }
        if [ "$kind" = x8 ]; then theirs=$(openssl_cpb "$model" 8); else
            theirs=$(openssl_cpb "$model" 4); fi
        read -r ours ratio faster <<<"$(awk -v c="$cycles" -v b="$blocks" \
            -v o="$theirs" 'BEGIN { v = c * 10 / (b * 64)
                printf "%.3f %.2f %s", v, o / v, (v <= o) ? "true" : "false" }')"
        note "$(printf '%-6s %-30s %8s %7s %8s %6sx' "$model" \
            "$kind ($blocks blocks a double round)" "$cycles" "$ours" "$theirs" "$ratio")"
        [ "$tap" = 1 ] || continue
        # the eight-block pass runs on POWER10 only
        [ "$kind" = x4 ] || [ "$model" = pwr10 ] || continue
        verdict "$faster" "$model: $kind round loop $ours c/B, OpenSSL's $theirs: ${ratio}x"
    done
done

if [ "$tap" = 1 ]; then
    printf '1..%d\n' "$npoints"
    [ "$nfailed" -eq 0 ]
fi
