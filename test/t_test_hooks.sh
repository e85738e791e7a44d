#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# chacha/ has no test hook: the tests take fork modes away and make
# mappings fail from outside, by wrapping its system calls
# (test/lib/linkwrap.c, test/lib/interpose.c).  Neither the module that
# ships nor libchacha, the core the tests link, has a function or variable
# of a forced mode or an injected failure, in a dynamic or a full symbol
# table.
#
# Environment (set by `make check`): abs_top_srcdir, abs_top_builddir.  Skips where nm is
# missing or the module carries no symbol table.

set -u

: "${abs_top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${abs_top_builddir:=$abs_top_srcdir}"
# shellcheck source=test/tap.sh
. "$abs_top_srcdir/test/tap.sh"

module=$abs_top_builddir/.libs/chacharng.so
core=$abs_top_builddir/.libs/libchacha.a
hooks='chacha_secpage_(force_mode|fail_next|requested_mode|injected_failure)|forced_mode|fail_next|chacha_kmix_force_syscall|forced_syscall'

# The hook symbols that nm (with its arguments) lists for a file.
hook_symbols() {
    nm "$@" 2>/dev/null | awk '{ print $NF }' | grep -Ex "$hooks" | sort -u \
        | paste -sd ' ' -
}

if ! command -v nm >/dev/null; then
    skip "test hooks: nm not installed (binutils)"
    finish
fi
if ! nm "$module" 2>/dev/null | grep -q ' chacha_secpage_alloc$'; then
    skip "test hooks: $module has no symbol table to search"
    finish
fi

found=$(hook_symbols -D "$module")
if [ -z "$found" ]; then
    ok "chacharng.so exports no test hook"
else
    not_ok "chacharng.so exports test hooks: $found"
fi
found=$(hook_symbols "$module")
if [ -z "$found" ]; then
    ok "chacharng.so has no test hook or hook state, not even a local one"
else
    not_ok "chacharng.so holds test hooks: $found"
fi
found=$(hook_symbols "$core")
if [ -z "$found" ] && nm "$core" 2>/dev/null | grep -q ' chacha_secpage_alloc$'; then
    ok "libchacha, the core the tests link, has no test hook either"
else
    not_ok "libchacha holds test hooks or cannot be searched: ${found:-no symbols}"
fi
finish
