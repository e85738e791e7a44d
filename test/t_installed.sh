#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The installed module, as a user meets it: after `make install` into
# libcrypto's own modules directory, with the system's own openssl.cnf and
# no OPENSSL_MODULES, no -provider-path, no OPENSSL_CONF.  Not part of
# `make check` (it needs the module installed system-wide, so it runs in a
# throw-away chroot: .ci/chroot-install.sh).  Prints TAP, plan at the end.
#
# Usage: test/t_installed.sh BUILDDIR   (a configured and installed tree)
set -u

builddir=${1:?usage: $0 BUILDDIR}
unset OPENSSL_MODULES OPENSSL_CONF CHACHARNG_DEBUG CHACHARNG_IMPL \
    CHACHARNG_LIBRARY_RNG

# shellcheck source=test/tap.sh
. "$(dirname "$0")/tap.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/chacharng-inst.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

three() {
    [ "$(grep -Ec "^[ $(printf '\t')]+$2\$" "$tmp/$1.out")" -eq 3 ]
}

moddir=$(pkg-config --variable=modulesdir libcrypto)
echo "# $(openssl version); module $moddir/chacharng.so; config $(openssl version -d)"

[ -f "$moddir/chacharng.so" ]
verdict "chacharng.so is installed in libcrypto's modulesdir ($moddir)"

run rand -- openssl rand -provider chacharng -hex 32
grep -Eqx '[0-9a-f]{64}' "$tmp/rand.out"
verdict "openssl rand -provider chacharng -hex 32, as typed: 64 hex digits"
sed 's/^/# /' "$tmp/rand.out"

run inst -- openssl list -random-instances -provider chacharng
three inst "CHACHA20-DRBG @ chacharng"
verdict "openssl list -random-instances -provider chacharng: CHACHA20-DRBG @ chacharng as primary, public, private"

run cdef -- openssl list -random-instances -provider chacharng -provider default
three cdef "CTR-DRBG @ default"
verdict "-provider chacharng -provider default: CTR-DRBG @ default stays"

run dc -- openssl list -random-instances -provider default -provider chacharng
three dc "CTR-DRBG @ default"
verdict "-provider default -provider chacharng: CTR-DRBG @ default stays"

run no -- env CHACHARNG_LIBRARY_RNG=no openssl rand -provider chacharng -hex 16
[ ! -s "$tmp/no.out" ] && grep -q "CTR-DRBG" "$tmp/no.err"
verdict "CHACHARNG_LIBRARY_RNG=no: rand -provider chacharng fails asking for CTR-DRBG"

# Every application case, against the installed module.
run lib -- env OPENSSL_MODULES="$moddir" "$builddir/test/t_library_rng"
n_ok=$(grep -c '^ok' "$tmp/lib.out")
n_bad=$(grep -c '^not ok' "$tmp/lib.out")
grep -q '^1\.\.[1-9]' "$tmp/lib.out" && [ "$n_bad" -eq 0 ]
verdict "t_library_rng against the installed module: $n_ok ok, $n_bad not ok"
grep '^not ok\|SKIP' "$tmp/lib.out" | sed 's/^/# /'

# The installed samples, with the installed module.
# where make install put them: ask make, which expands the variables
samples=$(make -s -C "$builddir" print-samplesdir 2>/dev/null)
run sinst -- env OPENSSL_CONF="$samples/openssl.cnf.sample" openssl list -random-instances
three sinst "CHACHA20-DRBG @ chacharng"
verdict "installed openssl.cnf.sample ($samples): CHACHA20-DRBG @ chacharng three times"

echo "1..$points"
[ "$failures" -eq 0 ]
