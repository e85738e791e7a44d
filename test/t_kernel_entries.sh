#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Every kernel entry stands alone (DESIGN.md section 6): in each asm/*.S
# file the compiler targets (x86_64, aarch64, s390x, ppc64le, riscv64),
# assembled as the build does, every direct jump, branch or call of every
# function lands inside that same function or on the first instruction of
# a function (a call or tail call through the ABI), never behind another
# function's labels, where it would run on that function's register
# conventions and rely on that function's clearing.  On ppc64le a
# function's local entry point (ELFv2 .localentry) counts as its first
# instruction: a branch from the same module enters there.  A static
# check, so it holds on every CPU, including those that cannot run a
# kernel (the AVX-512 ones on a machine without it), and it runs on the
# build host even in a cross build, never under an emulator.  Each file
# names the ISA level it needs (.machine on s390x and ppc64le, .option
# arch on riscv64), so the compiler's defaults assemble what the build
# assembles, with no -march of its own.
# It reads the object before linking: a jump to a local label is resolved
# there; a call or jump to a global symbol is a relocation (on ppc64le
# also a branch to any function with a local entry point), followed to
# the symbol and its addend: it must land on a function of the file at its
# start (or local entry), or on an outside symbol itself.  Indirect jumps
# and calls (through a register or memory) are not followed, nor is code
# outside every function (on ppc64le the branch over the nops that align
# the next one).
#
# Environment (set by `make check`): CC, abs_top_srcdir.  Skips where the
# compiler targets no architecture with assembly kernels or binutils are
# missing.

set -u

: "${abs_top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${CC:=cc}"
# shellcheck source=test/tap.sh
. "$abs_top_srcdir/test/tap.sh"

read -r -a cc_cmd <<<"$CC"
macros=$("${cc_cmd[@]}" -dM -E - </dev/null 2>/dev/null)
# defines MACRO [VALUE]: the compiler predefines MACRO (as VALUE).
defines() {
    printf '%s\n' "$macros" | grep -qx "#define $1 ${2:-.*}"
}
# the suffix of the kernel files for that target, asm/*_ARCH.S
if defines __x86_64__; then
    arch=x86_64
elif defines __aarch64__; then
    arch=aarch64
elif defines __s390x__; then
    arch=s390x
elif defines __powerpc64__ && defines __LITTLE_ENDIAN__; then
    arch=ppc64le
elif defines __riscv && defines __riscv_xlen 64; then
    arch=riscv64
else
    skip "kernel entries: $CC targets no architecture with assembly kernels"
    finish
fi
# the target's binutils: a cross compiler's own, else the host's
machine=$("${cc_cmd[@]}" -dumpmachine 2>/dev/null)
objdump=objdump
readelf=readelf
if command -v "$machine-objdump" >/dev/null; then
    objdump=$machine-objdump
    readelf=$machine-readelf
fi
if ! command -v "$objdump" >/dev/null || ! command -v "$readelf" >/dev/null; then
    skip "kernel entries: $objdump or $readelf not installed (binutils)"
    finish
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/chacharng-entries.XXXXXX") || {
    echo "Bail out! cannot create a temporary directory"
    exit 1
}
trap 'rm -rf "$tmp"' EXIT

# "START SIZE LOCAL NAME" of each function in $1: hex start, decimal size,
# and the offset of its ELFv2 local entry point (ppc64le; readelf shows it
# in the Other column as "[<localentry>: 8]"), else 0.  The name is the
# last field: that column, like [VARIANT_CC], can come before it.
functions() {
    "$readelf" -sW "$1" | awk '
        $4 == "FUNC" {
            entry = 0
            if (match($0, /<localentry>: [0-9]+/))
                entry = substr($0, RSTART + 14, RLENGTH - 14)
            print $2, $3, entry, $NF
        }'
}

# The mnemonics of direct jumps, branches and calls as objdump prints them
# (x86 prefixes aside).  Each list takes in the forms the ISA has beyond
# those in today's kernels, so that a new kernel is covered too.
case $arch in
    x86_64) jumps='^(j[a-z]+|call)$' ;;
    aarch64) jumps='^(b|b\.[a-z]+|bl|cbn?z|tbn?z)$' ;;
    # j, jg and every jCOND/jgCOND (brc and brcl with their masks), the
    # calls bras and brasl, the loop branches brct[g|h] and brx*, and the
    # compare-and-branch forms c[l][g]rj and c[l][g]ij with a condition
    s390x) jumps='^(j[a-z]*|brcl?|brasl?|brct[gh]?|brx(hg?|le|lg)|cl?g?[ri]j[a-z]*)$' ;;
    # b, bc and every extended form: conditions (beq, bnl, bso...), CTR
    # loops (bdnz, bdzt...), with l (link), a (absolute) and a +/- hint;
    # the indirect ones end in lr, ctr or tar and match none of these
    ppc64le) jumps='^b(c|dn?z[tf]?|lt|le|eq|ge|gt|nl|ne|ng|so|ns|un|nu|t|f)?l?a?[+-]?$' ;;
    # j, jal and the conditional branches with their pseudo-instructions
    # (objdump prints the compressed c.j, c.beqz and c.bnez without "c.")
    riscv64) jumps='^(c\.)?(j|jal|b(eq|ne|lt|ge|ltu|geu|gt|le|gtu|leu)|b(eq|ne|le|ge|lt|gt)z)$' ;;
esac

# How far past its symbol a relocated branch lands, from the addend the
# relocation carries: the x86_64 rel32 is counted from the end of its
# 4-byte field, the s390x halfword offset from the instruction, 2 bytes
# before its field; elsewhere the addend is the offset.
case $arch in
    x86_64) reloc_bias=4 ;;
    s390x) reloc_bias=-2 ;;
    *) reloc_bias=0 ;;
esac

# Each direct jump, branch or call in object $1 (the whole text:
# --disassemble=FUNCTION would stop at a label that is a local symbol):
# "ADDRESS TARGET" (hex) where objdump shows the target as "address
# <symbol...>", the last operand (after the registers or condition that
# some ISAs put before it, "a2,8 <f+0x6>"); or, where a relocation to a
# symbol that is not a local label or a section fills the instruction in,
# "ADDRESS @ SYMBOL ADDEND" (ADDEND decimal, as the relocation has it),
# since the target objdump shows then is only the unrelocated field.
branches() {
    local dis
    dis=$("$objdump" -dr --no-show-raw-insn "$1") || return 1
    printf '%s\n' "$dis" \
        | awk -v jumps="$jumps" '
            function hexval(h,    v, i) {
                v = 0
                for (i = 1; i <= length(h); i++)
                    v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
                return v
            }
            function flush() {
                if (pending != "")
                    print pending
                pending = ""
            }
            # a relocation line, "   4c: R_X86_64_PLT32  f-0x4"
            /^[ \t]+[0-9a-f]+: R_/ {
                if (pending == "")
                    next
                sym = $3
                add = 0
                if (match(sym, /[-+]0x[0-9a-f]+$/)) {
                    add = hexval(substr(sym, RSTART + 3))
                    if (substr(sym, RSTART, 1) == "-")
                        add = -add
                    sym = substr(sym, 1, RSTART - 1)
                }
                # local labels (.L..., riscv64 .L9^B1) and sections are
                # resolved in the object: the shown target stands
                if (sym !~ /^\./)
                    pending = pending_at " @ " sym " " add
                flush()
                next
            }
            { flush() }
            # the aarch64 condition aliases; the x86_64 and riscv64 notes
            # of an address an instruction computes, "# 4e <f+0x4c>"
            { sub(/[ \t]*\/\/.*$/, ""); sub(/[ \t]+#[ \t].*$/, "") }
            /^ *[0-9a-f]+:\t/ && /[0-9a-f]+ <[^>]*>$/ {
                m = 2
                while ($m == "bnd" || $m == "notrack")
                    m++
                if ($m !~ jumps)
                    next
                at = $1
                sub(/:$/, "", at)
                to = $(NF - 1)
                sub(/.*,/, "", to)
                pending = at " " to
                pending_at = at
            }
            END { flush() }'
}

for src in "$abs_top_srcdir"/asm/*_"$arch".S; do
    base=$(basename "$src" .S)
    obj=$tmp/$base.o
    if ! "${cc_cmd[@]}" -I"$abs_top_srcdir/asm" -c "$src" -o "$obj" \
        2>"$tmp/err"; then
        not_ok "$base: does not assemble: $(head -1 "$tmp/err")"
        continue
    fi
    functions "$obj" >"$tmp/functions"
    funcs=$(cat "$tmp/functions")
    # where a jump may enter a function: its start, and its local entry
    starts=" "
    while read -r start _ entry _; do
        starts="$starts$((16#$start)) $((16#$start + entry)) "
    done <"$tmp/functions"
    # a disassembler that read nothing would let every function pass
    if ! branches "$obj" >"$tmp/branches" || [ ! -s "$tmp/branches" ]; then
        not_ok "$base: $objdump found no jumps or branches to check"
        continue
    fi
    while read -r start size _ name; do
        lo=$((16#$start))
        hi=$((lo + size))
        if [ "$size" -eq 0 ]; then
            not_ok "$base: $name has no size (.size missing): its jumps cannot be placed"
            continue
        fi
        n=0
        stray=
        while read -r at target sym addend; do
            a=$((16#$at))
            if [ "$a" -lt "$lo" ] || [ "$a" -ge "$hi" ]; then
                continue
            fi
            n=$((n + 1))
            if [ "$target" = @ ]; then
                # a relocated branch: onto a function of this file at its
                # start or local entry, or onto an outside symbol itself
                off=$((addend + reloc_bias))
                entry=$(printf '%s\n' "$funcs" | awk -v s="$sym" '$4 == s { print $1, $3 }')
                if [ -z "$entry" ]; then
                    [ "$off" -eq 0 ] || stray="$stray 0x$at->$sym+$off"
                    continue
                fi
                read -r _ sentry <<<"$entry"
                if [ "$off" -ne 0 ] && [ "$off" -ne "$sentry" ]; then
                    stray="$stray 0x$at->$sym+$off"
                fi
                continue
            fi
            t=$((16#$target))
            if [ "$t" -ge "$lo" ] && [ "$t" -lt "$hi" ]; then
                continue
            fi
            case $starts in *" $t "*) continue ;; esac
            stray="$stray 0x$at->0x$target"
        done <"$tmp/branches"
        if [ -z "$stray" ]; then
            ok "$base: $name: its $n jumps and branches stay inside it or" \
                "enter a function at its start"
        else
            not_ok "$base: $name: jumps into another function's body:$stray"
        fi
    done <"$tmp/functions"
done
finish
