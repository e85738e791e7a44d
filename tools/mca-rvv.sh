#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# llvm-mca estimates of the riscv64 RVV kernel's round loops beside
# OpenSSL's own RVV ChaCha20 loops, for LLVM's scheduling models of two
# SiFive cores.  Estimates of those models, not measurements: no RISC-V
# hardware is needed.
#
# Both loops carry VLEN/32 blocks in vector lanes (the kernel at most 16)
# plus one block on the integer pipes; an iteration is one double round
# of OpenSSL's, two of the kernel's (32 vadd.vv each).  So
#   c/B = cycles per iteration x 10 / (double rounds x blocks x 64).
# The loops are taken between the local symbols chacha_rvv_mca_<path>_begin
# and _end of the object and run for 100 iterations, with e32 and LMUL 1
# declared to llvm-mca (the loops themselves set neither).
#
# OpenSSL's figures are constants measured the same way on the loops of
# OpenSSL 3.5's chacha-riscv64-v-zbb.pl as Debian 13 ships them
# (libssl3t64 3.5.9-1~deb13u1, riscv64: libcrypto.so.3 disassembled with
# llvm-objdump-19 --mattr=+v,+zbb,+zvkb, one double-round loop each):
#   without Zvkb (vsll/vsrl/vor):  sifive-x280 480.03 cycles for 17 blocks,
#                                  sifive-p670 112.03 cycles for 5 blocks;
#   with Zvkb (vror.vi):           sifive-p670 48.54 cycles for 5 blocks
#                                  (LLVM's sifive-x280 model has no Zvkb).
#
# Usage: tools/mca-rvv.sh [OBJECT]
#   OBJECT  the built kernel, asm/chacha_rvv_riscv64.lo or a .o (default
#           $abs_top_builddir/asm/chacha_rvv_riscv64.lo)
# Environment: LLVM_MCA, LLVM_OBJDUMP, LLVM_NM (default the -19 tools).
# Prints the table; exits 0 with a message when a tool or the object is
# missing.
set -u

obj=${1:-${abs_top_builddir:-.}/asm/chacha_rvv_riscv64.lo}
mca=${LLVM_MCA:-llvm-mca-19}
objdump=${LLVM_OBJDUMP:-llvm-objdump-19}
nm=${LLVM_NM:-llvm-nm-19}

# model VLEN (bits) of LLVM's scheduling model
vlen_of() {
    case $1 in sifive-x280) echo 512 ;; sifive-p670) echo 128 ;; esac
}
# OpenSSL's c/B for model $1, path $2 (vmadd: its vsll/vsrl/vor loop,
# vror: its Zvkb loop); "-" where the model cannot run that loop.
openssl_cpb() {
    case $1/$2 in
    sifive-x280/vmadd) echo 4.41 ;; # 480.03 x 10 / (17 x 64)
    sifive-p670/vmadd) echo 3.50 ;; # 112.03 x 10 / (5 x 64)
    sifive-p670/vror) echo 1.52 ;;  # 48.54 x 10 / (5 x 64)
    *) echo - ;;
    esac
}

for tool in "$mca" "$objdump" "$nm"; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "mca-rvv: skipped: $tool not found (Debian: llvm-19)"
        exit 0
    fi
done
if [ "${obj%.lo}" != "$obj" ] && [ -f "$obj" ]; then
    obj=$(dirname "$obj")/$(sed -n "s/^pic_object='\\(.*\\)'/\\1/p" "$obj")
fi
if [ ! -f "$obj" ]; then
    echo "mca-rvv: skipped: no $obj (not a riscv64 build with the RVV kernel)"
    exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The loop of path $1 as llvm-mca input, its back branch to a label.
loop_text() {
    local range
    # both addresses from one symbol table read: "0xBEGIN 0xEND"
    range=$("$nm" "$obj" | awk -v b="chacha_rvv_mca_$1_begin" \
        -v e="chacha_rvv_mca_$1_end" '$3 == b { f = "0x" $1 }
            $3 == e { t = "0x" $1 }
            END { if (f != "" && t != "") print f, t }')
    [ -n "$range" ] || return 1
    printf '# LLVM-MCA-RISCV-LMUL M1\n# LLVM-MCA-RISCV-SEW E32\n.Lloop:\n'
    "$objdump" -d --mattr=+v,+zvkb --no-show-raw-insn --no-leading-addr \
        --start-address="${range% *}" --stop-address="${range#* }" "$obj" \
        | awk -F'\t' 'NF >= 3 && $1 ~ /^ *$/ { print $2 "\t" $3 }' \
        | sed -e 's/0x[0-9a-f]* <[^>]*>/.Lloop/'
}

echo "llvm-mca-19 estimates (LLVM scheduling models, not measurements):"
echo "cycles per byte of the round loop,"
echo "cycles/iteration x 10 / (double rounds/iteration x blocks x 64)"
printf '%-12s %-6s %5s %7s %7s %8s %7s\n' model path VLEN blocks ours OpenSSL ratio
for path in vmadd vror; do
    if ! loop_text "$path" > "$work/$path.s"; then
        echo "mca-rvv: no chacha_rvv_mca_${path}_begin/_end in $obj" >&2
        exit 1
    fi
    rounds=$(awk -F'\t' '$1 == "vadd.vv" { n++ } END { print n / 32 }' \
        "$work/$path.s")
    for model in sifive-x280 sifive-p670; do
        vlen=$(vlen_of "$model")
        blocks=$((vlen / 32 > 16 ? 17 : vlen / 32 + 1))
        cycles=$("$mca" -mtriple=riscv64 -mcpu="$model" -iterations=100 \
            "$work/$path.s" 2>/dev/null | awk '/^Total Cycles:/ { print $3 / 100 }')
        if [ -z "$cycles" ]; then
            printf '%-12s %-6s %5s %7s %7s %8s %7s\n' "$model" "$path" \
                "$vlen" "$blocks" - - "(model lacks the instructions)"
            continue
        fi
        theirs=$(openssl_cpb "$model" "$path")
        awk -v m="$model" -v p="$path" -v v="$vlen" -v b="$blocks" \
            -v c="$cycles" -v o="$theirs" -v d="$rounds" 'BEGIN {
            ours = c * 10 / (d * b * 64)
            r = (o == "-") ? "-" : sprintf("%.2fx", o / ours)
            printf "%-12s %-6s %5s %7s %7.2f %8s %7s\n", m, p, v, b, ours, o, r
        }'
    done
done
