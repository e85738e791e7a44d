#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The shape of the source tree that keeps it easy to read: README.md is a
# front door of at most 300 lines that still starts with the two set-up
# commands, the manual's parts live in doc/, provider/base.h holds only
# what every provider file shares, and no function is too long to take in
# at once (60 lines in chacha/ and provider/, 80 in bench/ and tools/).
#
# Environment (set by `make check`): abs_top_srcdir.

set -u

: "${abs_top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
# shellcheck source=test/tap.sh
. "$abs_top_srcdir/test/tap.sh"
cd "$abs_top_srcdir" || exit 1

# at_most WHAT FILE LIMIT: FILE has at most LIMIT lines.
at_most() {
    local n
    n=$(wc -l <"$2")
    if [ "$n" -le "$3" ]; then
        ok "$1: $2 has $n lines (at most $3)"
    else
        not_ok "$1: $2 has $n lines, more than $3"
    fi
}

at_most "front door" README.md 300
at_most "shared declarations only" provider/base.h 120

for cmd in \
    '.ci/deps.sh && autoreconf -fi && ./configure && make && openssl rand -provider-path .libs -provider chacharng -hex 32' \
    '.ci/deps.sh --all && .ci/test-all.sh'; do
    if grep -qxF -- "$cmd" README.md; then
        ok "README.md gives the command: $cmd"
    else
        not_ok "README.md lacks the command line: $cmd"
    fi
done

for f in doc/kernels.md doc/performance.md doc/testing.md doc/performance.png; do
    if [ -s "$f" ]; then
        ok "$f is there"
    else
        not_ok "$f is missing or empty"
    fi
done
if grep -qs '^!\[.*\](performance.png)' doc/performance.md; then
    ok "doc/performance.md shows its picture"
else
    not_ok "doc/performance.md does not show performance.png"
fi

# Functions in the house style: the definition starts at column 0, its
# body opens with "{" alone on a line and closes with "}" alone.  Prints
# "LINES FILE:LINE NAME" for each function longer than $1 lines.
long_functions() {
    local limit=$1
    shift
    awk -v limit="$limit" '
        FNR == 1 { head = 0 }
        /^[A-Za-z_]/ && !/^(static )?(const )?struct [A-Za-z_0-9]* \{$/ {
            head = FNR; text = $0
        }
        /^\{$/ && head > 0 { start = head; name = text; inside = 1 }
        /^\}/ && inside {
            inside = 0
            if (FNR - start + 1 > limit) {
                sub(/\(.*/, "", name)
                n = split(name, w, /[ *]+/)
                printf "%d %s:%d %s\n", FNR - start + 1, FILENAME, start, w[n]
            }
        }' "$@"
}

check_lengths() {
    local limit=$1 where=$2 long
    shift 2
    long=$(long_functions "$limit" "$@")
    if [ -z "$long" ]; then
        ok "no function in $where is over $limit lines"
    else
        not_ok "functions in $where over $limit lines:"
        diag "$long"
    fi
}

check_lengths 60 "chacha/ and provider/" chacha/*.c provider/*.c
check_lengths 80 "bench/ and tools/" bench/*.c tools/*.c

finish
