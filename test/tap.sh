# SPDX-License-Identifier: Apache-2.0
#
# The shell tests' TAP helpers, and theirs alone (sourced): numbered ok /
# not ok / skip lines and their counters, diagnostics, running a command
# with its output kept for the checks, a test point from the checks'
# verdict, and the plan and exit status at the end.
# shellcheck shell=bash

points=0
failures=0

ok() {
    points=$((points + 1))
    echo "ok $points - $*"
}

not_ok() {
    points=$((points + 1))
    failures=$((failures + 1))
    echo "not ok $points - $*"
}

skip() {
    points=$((points + 1))
    echo "ok $points - # SKIP $*"
}

# diag [TEXT...]: each line of TEXT, or of stdin when there is none, as a
# TAP diagnostic.
diag() {
    if [ $# -eq 0 ]; then
        sed 's/^/# /'
    else
        printf '%s\n' "$@" | sed 's/^/# /'
    fi
}

# show_file FILE: the start of FILE as diagnostics (a hex dump if binary).
show_file() {
    if [ ! -s "$1" ]; then
        diag "  (nothing)"
    elif grep -qI '' "$1"; then
        sed -n '1,15s/^/#   /p' "$1"
    else
        diag "  $(wc -c <"$1") bytes, starting:"
        od -An -tx1 -N32 "$1" | sed 's/^/#  /'
    fi
}

# run TAG [NAME=VALUE ...] -- ARG...: run "${run_prefix[@]}" ARG... with
# the NAME=VALUE settings in its environment; stdout goes to $tmp/TAG.out,
# stderr to $tmp/TAG.err, the exit status to $rc.  The caller sets tmp and,
# for a command that every run shares (openssl, say), run_prefix.
run_prefix=()
rc=0
why=
last=
run() {
    local -a envs=()

    last=$1
    shift
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do
        envs+=("$1")
        shift
    done
    shift
    # shellcheck disable=SC2154 # tmp is the caller's
    env ${envs[@]+"${envs[@]}"} ${run_prefix[@]+"${run_prefix[@]}"} "$@" \
        >"$tmp/$last.out" 2>"$tmp/$last.err"
    rc=$?
    why=
}

# verdict DESCRIPTION: one test point, decided by the exit status of the
# command just before (typically predicates on the last run, which set
# $why when they say no).  A failure shows why, and the last run's status
# and output.
verdict() {
    local st=$?

    if [ "$st" -eq 0 ]; then
        ok "$1"
    else
        not_ok "$1"
        [ -n "$why" ] && diag "$why"
        if [ -n "$last" ]; then
            diag "exit status $rc; stdout:"
            show_file "$tmp/$last.out"
            diag "stderr:"
            show_file "$tmp/$last.err"
        fi
    fi
    why=
}

# finish: the plan, and the exit status the test points call for.
finish() {
    echo "1..$points"
    [ "$failures" -eq 0 ]
    exit
}
