#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# aarch64 branch protection of the module (configure adds
# -mbranch-protection=standard where the compiler takes it):
#
#  - statically, every object linked into chacharng.so carries the BTI and
#    PAC properties in its GNU property note, and every global function
#    starts with a landing pad (bti c, or paciasp, which is one).  The .so
#    itself cannot show the note on Debian 12, whose crt objects have none.
#  - at run time, a program with its own _start and no C library (a normal
#    -z force-bti program dies in the crt objects before main) calls the
#    built NEON kernel through blr, linked with -z force-bti, under
#    qemu-aarch64 -cpu max: it must give the right block.  A copy of the
#    kernel assembled without branch protection must die of SIGILL there,
#    which shows the check can fail.
#
# Environment (set by `make check`): CC, abs_top_srcdir, abs_top_builddir;
# QEMU_AARCH64 (default qemu-aarch64).  Skips where CC does not target
# aarch64 or the tools are missing.

set -u

: "${abs_top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${abs_top_builddir:=$abs_top_srcdir}"
: "${CC:=cc}"
: "${QEMU_AARCH64:=qemu-aarch64}"
# shellcheck source=test/tap.sh
. "$abs_top_srcdir/test/tap.sh"

read -r -a cc_cmd <<<"$CC"
if ! "${cc_cmd[@]}" -dM -E - </dev/null 2>/dev/null | grep -q '__aarch64__'; then
    skip "BTI: $CC does not target aarch64"
    finish
fi
if ! "${cc_cmd[@]}" -mbranch-protection=standard -Werror -c -x c /dev/null \
    -o /dev/null 2>/dev/null; then
    skip "BTI: $CC does not take -mbranch-protection=standard"
    finish
fi
objdump=
for tool in "$("${cc_cmd[@]}" -dumpmachine)-objdump" llvm-objdump-19 llvm-objdump; do
    if command -v "$tool" >/dev/null; then
        objdump=$tool
        break
    fi
done
if ! command -v readelf >/dev/null || [ -z "$objdump" ]; then
    skip "BTI: readelf or an aarch64 objdump is not installed"
    finish
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/chacharng-bti.XXXXXX") || {
    echo "Bail out! cannot create a temporary directory"
    exit 1
}
trap 'rm -rf "$tmp"' EXIT

# The PIC object a libtool .lo file names.
lo_object() {
    local pic
    pic=$(sed -n "s/^pic_object='\(.*\)'$/\1/p" "$1")
    [ -n "$pic" ] && [ "$pic" != none ] && echo "$(dirname "$1")/$pic"
}

# Global functions of an object whose first instruction is no landing pad.
no_pad() {
    local fn first
    for fn in $(readelf -sW "$1" | awk '$4 == "FUNC" && $5 == "GLOBAL" { print $8 }'); do
        first=$("$objdump" -d --no-show-raw-insn "--disassemble=$fn" "$1" \
            | awk '/^[0-9a-f]+ <.*>:$/ { inside = 1; next }
                   inside && /:/ { $1 = ""; sub(/^ +/, ""); print; exit }')
        case $first in
            "bti"*c* | paciasp* | pacibsp*) ;;
            *) echo "$fn ($first)" ;;
        esac
    done
}

# ---- static: notes and pads of every object of the module -------------
objects=()
for lo in "$abs_top_builddir"/chacha/*.lo "$abs_top_builddir"/asm/*.lo \
    "$abs_top_builddir"/provider/*.lo; do
    [ -f "$lo" ] || continue
    obj=$(lo_object "$lo") && [ -f "$obj" ] && objects+=("$obj")
done
if [ "${#objects[@]}" -eq 0 ]; then
    not_ok "BTI: no objects of the module found under $abs_top_builddir"
fi
for obj in "${objects[@]}"; do
    name=${obj#"$abs_top_builddir"/}
    feat=$(readelf -n "$obj" 2>/dev/null \
        | sed -n 's/^[[:space:]]*Properties: AArch64 feature: //p')
    if grep -qw BTI <<<"$feat" && grep -qw PAC <<<"$feat"; then
        ok "$name: property note says $feat"
    else
        not_ok "$name: property note says '${feat:-nothing}', want BTI, PAC"
    fi
    bad=$(no_pad "$obj" | paste -sd, -)
    if [ -z "$bad" ]; then
        ok "$name: every global function starts with a landing pad"
    else
        not_ok "$name: global functions without a landing pad: $bad"
    fi
done

# ---- run time: an indirect call into the NEON kernel under BTI ---------
neon=
[ -f "$abs_top_builddir/asm/chacha_neon_aarch64.lo" ] \
    && neon=$(lo_object "$abs_top_builddir/asm/chacha_neon_aarch64.lo")
if [ -z "$neon" ] || [ ! -f "$neon" ]; then
    skip "BTI run time: this build has no NEON kernel"
    finish
fi
if ! command -v "$QEMU_AARCH64" >/dev/null; then
    skip "BTI run time: $QEMU_AARCH64 not installed"
    finish
fi
ulimit -c 0
link=(-nostdlib -static -ffreestanding -fno-stack-protector -fno-builtin -O2
      -mbranch-protection=standard "-Wl,-z,force-bti")

# $1 program, $2 kernel object, $3 exit status wanted, $4 what it shows
run_case() {
    local status
    if ! "${cc_cmd[@]}" "${link[@]}" -o "$tmp/$1" \
        "$abs_top_srcdir/test/bti_start.c" "$2" 2>"$tmp/err"; then
        not_ok "$4: does not link: $(grep -v 'warning: BTI turned on' "$tmp/err" | head -1)"
        return
    fi
    if ! readelf -n "$tmp/$1" | grep -q 'AArch64 feature: BTI'; then
        not_ok "$4: the program is not marked BTI, so the check proves nothing"
        return
    fi
    # in a subshell whose stderr (and "Illegal instruction" line) is hushed
    status=$( ("$QEMU_AARCH64" -cpu max "$tmp/$1"; echo $?) 2>/dev/null)
    if [ "$status" -eq "$3" ]; then
        ok "$4 (exit status $status)"
    else
        not_ok "$4: exit status $status, want $3"
    fi
}

run_case bti-built "$neon" 0 \
    "the built NEON kernel, called through blr with BTI enforced, gives the RFC 8439 block"
if "${cc_cmd[@]}" -c -I"$abs_top_srcdir/asm" \
    "$abs_top_srcdir/asm/chacha_neon_aarch64.S" -o "$tmp/padless.o"; then
    # 128 + SIGILL, as the shell reports a child killed by it
    run_case bti-padless "$tmp/padless.o" 132 \
        "a NEON kernel assembled without landing pads dies of SIGILL there"
else
    not_ok "the NEON kernel does not assemble without branch protection"
fi
finish
