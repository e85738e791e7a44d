#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Make the base chroots of the Debian SUITEs that are missing, one after
# the other, as .ci/chroot-lib.sh's ensure_chroot does (debootstrap,
# root, the network).  .ci/test-all.sh starts it in the background at the
# beginning of a run: debootstrap mostly waits on the archive, so it costs
# the CPU-bound host stages little, and the chroot stages find their
# chroots made (or wait on the lock for the one still being made).  It
# decides nothing: a stage whose chroot is still missing tries again and
# reports the failure as it always did.  RESULTS_DIR gets the
# debootstrap logs and SUITE.time (seconds); the exit status is the
# number of chroots that could not be made.
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

bad=0
for suite in "$@"; do
    start=$SECONDS
    ensure_chroot "$suite" "$chroot_dir/$suite" || bad=$((bad + 1))
    echo $((SECONDS - start)) >"$results/$suite.time"
done
exit "$bad"
