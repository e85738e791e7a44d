#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The x86_64 kernels claim exactly the CET protection they were built for:
# each .S file is assembled with -fcf-protection=none, branch, return and
# full, and the GNU property note (readelf -n) must name IBT exactly when
# branch protection was asked (__CET__ bit 0) and SHSTK exactly when return
# protection was (bit 1); every global function starts with endbr64 exactly
# when IBT is claimed.  A note claiming IBT over a function without endbr64
# makes a CET-enforcing process die on the first indirect call into it.
#
# Environment (set by `make check`): CC, abs_top_srcdir.  Skips where the
# compiler does not target x86_64 or readelf/objdump are missing.

set -u

: "${abs_top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${CC:=cc}"
# shellcheck source=test/tap.sh
. "$abs_top_srcdir/test/tap.sh"

read -r -a cc_cmd <<<"$CC"
if ! "${cc_cmd[@]}" -dM -E - </dev/null 2>/dev/null | grep -q '__x86_64__'; then
    skip "CET notes: $CC does not target x86_64"
    finish
fi
if ! command -v readelf >/dev/null || ! command -v objdump >/dev/null; then
    skip "CET notes: readelf or objdump not installed (binutils)"
    finish
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/chacharng-cet.XXXXXX") || {
    echo "Bail out! cannot create a temporary directory"
    exit 1
}
trap 'rm -rf "$tmp"' EXIT

# The x86 feature list of the object's property note, or "none".
features() {
    local f
    f=$(readelf -n "$1" 2>/dev/null \
        | sed -n 's/^[[:space:]]*Properties: x86 feature: //p')
    echo "${f:-none}"
}

# Global functions of the object that do not start with endbr64.
without_endbr() {
    local fn
    for fn in $(readelf -sW "$1" | awk '$4 == "FUNC" && $5 == "GLOBAL" { print $8 }'); do
        objdump -d --no-show-raw-insn "--disassemble=$fn" "$1" \
            | awk -v fn="$fn" '
                /^[0-9a-f]+ <.*>:$/ { inside = 1; next }
                inside && /:/ { if ($2 != "endbr64") print fn; exit }'
    done
}

# Global functions of the object that start with endbr64.
with_endbr() {
    local fn
    for fn in $(readelf -sW "$1" | awk '$4 == "FUNC" && $5 == "GLOBAL" { print $8 }'); do
        objdump -d --no-show-raw-insn "--disassemble=$fn" "$1" \
            | awk -v fn="$fn" '
                /^[0-9a-f]+ <.*>:$/ { inside = 1; next }
                inside && /:/ { if ($2 == "endbr64") print fn; exit }'
    done
}

for src in "$abs_top_srcdir"/asm/*_x86_64.S; do
    base=$(basename "$src" .S)
    for prot in none branch return full; do
        obj=$tmp/$base-$prot.o
        case $prot in
            none) want=none ibt=0 ;;
            branch) want=IBT ibt=1 ;;
            return) want=SHSTK ibt=0 ;;
            full) want="IBT, SHSTK" ibt=1 ;;
        esac
        if ! "${cc_cmd[@]}" -fcf-protection=$prot -I"$abs_top_srcdir/asm" \
            -c "$src" -o "$obj" 2>"$tmp/err"; then
            not_ok "$base -fcf-protection=$prot: does not assemble: $(head -1 "$tmp/err")"
            continue
        fi
        got=$(features "$obj")
        if [ "$got" = "$want" ]; then
            ok "$base -fcf-protection=$prot: property note says $want"
        else
            not_ok "$base -fcf-protection=$prot: property note says $got, want $want"
        fi
        if [ "$ibt" = 1 ]; then
            bad=$(without_endbr "$obj")
            what="every global function starts with endbr64"
        else
            bad=$(with_endbr "$obj")
            what="no endbr64 where IBT is not claimed"
        fi
        if [ -z "$bad" ]; then
            ok "$base -fcf-protection=$prot: $what"
        else
            not_ok "$base -fcf-protection=$prot: $what; offending: $bad"
        fi
    done
done
finish
