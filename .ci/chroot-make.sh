#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Make the base chroots of the Debian SUITEs that are missing, side by
# side, as .ci/chroot-lib.sh's ensure_chroot does (debootstrap, root, the
# network).  A debootstrap mostly waits on its downloads, one at a time,
# so several at once end sooner.  .ci/test-all.sh starts this in the
# background at the beginning of a run, beside the CPU-bound host stages;
# the chroot stages find their chroots made, or wait on the lock of one
# still being made.  It decides nothing: a stage whose chroot is still
# missing tries again and reports the failure as it always did.
# RESULTS_DIR gets the debootstrap logs, SUITE.out (what it printed) and
# SUITE.time (seconds); the exit status is the number of chroots that
# could not be made.
#
# Usage: .ci/chroot-make.sh RESULTS_DIR SUITE...
set -u

# shellcheck source-path=SCRIPTDIR
# shellcheck source=chroot-lib.sh
. "$(dirname "$0")/chroot-lib.sh" || exit 1
if [ $# -lt 2 ]; then
    echo "usage: $0 RESULTS_DIR SUITE..." >&2
    exit 2
fi
results=$(realpath "$1")
shift

pids=()
for suite in "$@"; do
    (
        start=$SECONDS
        ensure_chroot "$suite" "$chroot_dir/$suite"
        st=$?
        echo $((SECONDS - start)) >"$results/$suite.time"
        exit $st
    ) >"$results/$suite.out" 2>&1 &
    pids+=($!)
done
bad=0
for pid in "${pids[@]}"; do
    wait "$pid" || bad=$((bad + 1))
done
for suite in "$@"; do
    cat "$results/$suite.out"
done
exit "$bad"
