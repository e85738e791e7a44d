#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Every kernel entry stands alone (DESIGN.md section 6): in each asm/*.S
# file the compiler targets, assembled as the build does, every direct
# jump, branch or call of every function lands inside that same function
# or on the first instruction of a function (a call or tail call through
# the ABI), never behind another function's labels, where it would run
# on that function's register conventions and rely on that function's
# clearing.  A static check, so it holds on every CPU, including those
# that cannot run a kernel (the AVX-512 ones on a machine without it).
# It reads the object before linking: a jump to a local label is resolved
# there, a call or jump to a global symbol is a relocation that this check
# does not follow (the kernels call other functions only at their start).
# The s390x, ppc64el and riscv64 kernels are not covered here.
#
# Environment (set by `make check`): CC, abs_top_srcdir.  Skips where the
# compiler targets neither x86_64 nor aarch64 or binutils are missing.

set -u

: "${abs_top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${CC:=cc}"
# shellcheck source=test/tap.sh
. "$abs_top_srcdir/test/tap.sh"

read -r -a cc_cmd <<<"$CC"
macros=$("${cc_cmd[@]}" -dM -E - </dev/null 2>/dev/null)
case $macros in
    *__x86_64__*) arch=x86_64 ;;
    *__aarch64__*) arch=aarch64 ;;
    *)
        skip "kernel entries: $CC targets no architecture with assembly kernels"
        finish
        ;;
esac
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

# "START SIZE NAME" (hex start, decimal size) of each function in $1.
functions() {
    "$readelf" -sW "$1" | awk '$4 == "FUNC" { print $2, $3, $8 }'
}

# The mnemonics of direct jumps, branches and calls (x86 prefixes aside).
case $arch in
    x86_64) jumps='^(j[a-z]+|call)$' ;;
    aarch64) jumps='^(b|b\.[a-z]+|bl|cbn?z|tbn?z)$' ;;
esac

# "ADDRESS TARGET" (hex) of each direct jump, branch or call in object $1
# (the whole text: --disassemble=FUNCTION would stop at a label that is a
# local symbol), whose target objdump shows as "address <symbol...>".
branches() {
    local dis
    dis=$("$objdump" -d --no-show-raw-insn "$1") || return 1
    printf '%s\n' "$dis" \
        | awk -v jumps="$jumps" '
            { sub(/[ \t]*\/\/.*$/, "") } # the aarch64 condition aliases
            /^ *[0-9a-f]+:\t/ && /[0-9a-f]+ <[^>]*>$/ {
                m = 2
                while ($m == "bnd" || $m == "notrack")
                    m++
                if ($m !~ jumps)
                    next
                at = $1
                sub(/:$/, "", at)
                print at, $(NF - 1)
            }'
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
    starts=" "
    while read -r start _ _; do
        starts="$starts$((16#$start)) "
    done <"$tmp/functions"
    # a disassembler that read nothing would let every function pass
    if ! branches "$obj" >"$tmp/branches" || [ ! -s "$tmp/branches" ]; then
        not_ok "$base: $objdump found no jumps or branches to check"
        continue
    fi
    while read -r start size name; do
        lo=$((16#$start))
        hi=$((lo + size))
        if [ "$size" -eq 0 ]; then
            not_ok "$base: $name has no size (.size missing): its jumps cannot be placed"
            continue
        fi
        n=0
        stray=
        while read -r at target; do
            a=$((16#$at))
            if [ "$a" -lt "$lo" ] || [ "$a" -ge "$hi" ]; then
                continue
            fi
            n=$((n + 1))
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
