# SPDX-License-Identifier: Apache-2.0
#
# TAP test points for the shell tests (sourced): numbered ok / not ok /
# skip lines and the counters the caller turns into a plan and exit code.
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
