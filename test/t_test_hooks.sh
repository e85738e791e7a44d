#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The secure-page fault-injection hooks (chacha_secpage_force_mode and
# chacha_secpage_fail_next, with the state they keep) exist only in the test
# build of chacha/, libchacha_testing: the module that ships has neither the
# functions nor their variables, in its dynamic or its full symbol table.
# The test build must show them, which proves the search would find them.
#
# Environment (set by `make check`): abs_top_srcdir, abs_top_builddir.  Skips where nm is
# missing or the module carries no symbol table.

set -u

: "${abs_top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${abs_top_builddir:=$abs_top_srcdir}"
# shellcheck source=test/tap.sh
. "$abs_top_srcdir/test/tap.sh"

module=$abs_top_builddir/.libs/chacharng.so
testing=$abs_top_builddir/.libs/libchacha_testing.a
hooks='chacha_secpage_force_mode|chacha_secpage_fail_next|forced_mode|fail_next|chacha_kmix_force_syscall|forced_syscall'

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
found=$(hook_symbols "$testing")
case $found in
*chacha_secpage_force_mode*chacha_secpage_fail_next* \
    | *chacha_secpage_fail_next*chacha_secpage_force_mode*)
    ok "the test build libchacha_testing has both hooks ($found)" ;;
*)
    not_ok "the test build libchacha_testing lacks hooks (found: ${found:-none})" ;;
esac
finish
