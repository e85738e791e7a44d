#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# chacharngctl on copies of the stock openssl.cnf of Debian 12, 13 and
# unstable (test/ctl/), with the OpenSSL this runs on: enable, status, a
# fresh process's RAND_bytes and RAND_priv_bytes from CHACHA20-DRBG (3.5+:
# also through the random provider), enable twice, disable and a byte
# compare; then the cases that must be refused with the file left as it
# was (fips=yes, random_provider before 3.5, a module that cannot load, a
# read-only file, random after providers), an existing [random] section,
# an admin's edit between enable and disable, no final newline, and the
# status diagnosis of a configured module that cannot load.  Prints TAP.
#
# Environment (set by `make check`): OPENSSL, OPENSSL_MODULES,
# CHACHARNG_PROBE, abs_top_srcdir, abs_top_builddir.

# the checks are strings for eval, expanded when they run
# shellcheck disable=SC2016
set -u

: "${abs_top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${abs_top_builddir:=$abs_top_srcdir}"
: "${OPENSSL:=openssl}"
: "${OPENSSL_MODULES:=$abs_top_builddir/.libs}"
: "${CHACHARNG_PROBE:=$abs_top_builddir/tools/chacharng-probe}"
export OPENSSL OPENSSL_MODULES CHACHARNG_PROBE
unset CHACHARNG_DEBUG CHACHARNG_IMPL OPENSSL_CONF

ctl=$abs_top_builddir/tools/chacharngctl
stock=$abs_top_srcdir/test/ctl

# shellcheck source=test/tap.sh
. "$abs_top_srcdir/test/tap.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/chacharng-ctl.XXXXXX") || {
    echo "Bail out! cannot create a temporary directory"
    exit 1
}
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

if [ -n "${CHACHARNG_SANITIZERS:-}" ]; then
    # the probe links the system libcrypto only, with no ASan runtime of
    # its own, and OPENSSL is then a preload wrapper: nothing new to test
    echo "1..0 # SKIP chacharngctl under the sanitizer build"
    exit 0
fi

ver=$($OPENSSL version -v | sed -n 's/.*Library: OpenSSL \([0-9]*\.[0-9]*\).*/\1/p')
[ -n "$ver" ] || ver=$($OPENSSL version -v | sed -n 's/^OpenSSL \([0-9]*\.[0-9]*\).*/\1/p')
case $ver in 3.[0-4]) rp_ok= ;; *) rp_ok=1 ;; esac
echo "# OpenSSL $ver, random provider: ${rp_ok:-no}"

# ctl NAME ARG...: chacharngctl ARG..., status in $rc, and stdout and
# stderr in $tmp/NAME.out as one stream (its messages go to stderr, and
# the checks read them in order with its report); test/tap.sh's run keeps
# the two apart.
ctl() {
    local name=$1
    shift
    sh "$ctl" "$@" >"$tmp/$name.out" 2>&1
    rc=$?
}

# expect DESC CONDITION...: a test point; on failure show the last output
last=
expect() {
    local desc=$1
    shift
    if "$@"; then
        ok "$desc"
    else
        not_ok "$desc"
        [ -n "$last" ] && [ -f "$tmp/$last.out" ] && diag <"$tmp/$last.out"
    fi
}

# from_chacharng CNF WHICH [rp]: a fresh process's RAND_bytes (public) or
# RAND_priv_bytes (private) under CNF succeeds from CHACHA20-DRBG @
# chacharng (rp: through the random provider)
from_chacharng() {
    local out
    out=$(CHACHARNG_DEBUG=1 OPENSSL_CONF=$1 "$CHACHARNG_PROBE" "$2" 2>&1) ||
        return 1
    printf '%s\n' "$out" | grep -qx "$2 CHACHA20-DRBG chacharng" || return 1
    if [ "${3:-}" = rp ]; then
        printf '%s\n' "$out" | grep -q 'random provider path in use'
    else
        ! printf '%s\n' "$out" | grep -q 'random provider path in use'
    fi
}

# chain_is_chacharng CNF: openssl list -random-instances shows
# CHACHA20-DRBG @ chacharng as primary, public and private
chain_is_chacharng() {
    [ "$(OPENSSL_CONF=$1 $OPENSSL list -random-instances 2>/dev/null |
        grep -c '^  CHACHA20-DRBG @ chacharng$')" = 3 ]
}

has_default() {
    OPENSSL_CONF=$1 $OPENSSL list -providers 2>/dev/null | grep -qx '  default'
}

# ------------------------------------------------------------------------
# the stock files: enable, status, RAND, enable again, disable
# ------------------------------------------------------------------------
for dist in bookworm trixie sid; do
    cnf=$tmp/$dist.cnf
    cp "$stock/$dist.cnf" "$cnf"
    last=$dist-enable
    ctl "$last" --config "$cnf" enable
    expect "$dist: enable" [ "$rc" = 0 ]
    expect "$dist: enable changed the file" eval '! cmp -s "$cnf" "$stock/$dist.cnf"'
    expect "$dist: default provider still active" has_default "$cnf"
    expect "$dist: DRBG chain is CHACHA20-DRBG @ chacharng" chain_is_chacharng "$cnf"
    expect "$dist: fresh RAND_bytes from chacharng" from_chacharng "$cnf" public
    expect "$dist: fresh RAND_priv_bytes from chacharng" from_chacharng "$cnf" private
    last=$dist-status
    ctl "$last" --config "$cnf" status
    expect "$dist: status" [ "$rc" = 0 ]
    expect "$dist: status says enabled" grep -q '^enabled: yes, by chacharngctl (DRBG chain)$' "$tmp/$last.out"
    expect "$dist: status names the chain" grep -q '^RAND_bytes: the DRBG chain, CHACHA20-DRBG @ chacharng$' "$tmp/$last.out"
    cp "$cnf" "$tmp/$dist.enabled"
    last=$dist-enable2
    ctl "$last" --config "$cnf" enable
    expect "$dist: enable twice changes nothing" \
        eval '[ "$rc" = 0 ] && cmp -s "$cnf" "$tmp/$dist.enabled" && grep -q "already enabled" "$tmp/$last.out"'
    expect "$dist: backup is the stock file" cmp -s "$cnf.chacharngctl.bak" "$stock/$dist.cnf"
    last=$dist-disable
    ctl "$last" --config "$cnf" disable
    expect "$dist: disable" [ "$rc" = 0 ]
    expect "$dist: disable gives the stock file back, byte for byte" cmp "$cnf" "$stock/$dist.cnf"
    ctl "$dist-disable2" --config "$cnf" disable
    expect "$dist: disable twice changes nothing" eval '[ "$rc" = 0 ] && cmp -s "$cnf" "$stock/$dist.cnf"'

    last=$dist-rp
    ctl "$last" --config "$cnf" enable --random-provider
    if [ -n "$rp_ok" ]; then
        expect "$dist: enable --random-provider" [ "$rc" = 0 ]
        expect "$dist: RAND_bytes through the random provider" from_chacharng "$cnf" public rp
        expect "$dist: RAND_priv_bytes through the random provider" from_chacharng "$cnf" private rp
        ctl "$last" --config "$cnf" status
        expect "$dist: status names the random provider" \
            grep -q '^RAND_priv_bytes: chacharng, through the random provider' "$tmp/$last.out"
        last=$dist-rp-off
        ctl "$last" --config "$cnf" enable
        expect "$dist: enable without --random-provider drops it again" \
            eval '[ "$rc" = 0 ] && from_chacharng "$cnf" public && cmp -s "$cnf" "$tmp/$dist.enabled"'
        ctl "$last" --config "$cnf" disable
        expect "$dist: disable after switching modes: stock file" cmp "$cnf" "$stock/$dist.cnf"
    else
        expect "$dist: --random-provider refused before 3.5" \
            eval '[ "$rc" = 1 ] && grep -q "needs OpenSSL 3.5" "$tmp/$last.out"'
        expect "$dist: refused: file unchanged" cmp "$cnf" "$stock/$dist.cnf"
    fi
done

# ------------------------------------------------------------------------
# edge cases, on the file of the distribution closest to this OpenSSL
# ------------------------------------------------------------------------
case $ver in 3.0) base=bookworm ;; 3.5) base=trixie ;; *) base=sid ;; esac
orig=$stock/$base.cnf
cnf=$tmp/edge.cnf

# an existing [random] section (ahead of providers) keeps its lines
awk '{ print } /^\[openssl_init\]/ { print "random = site_random" }' "$orig" >"$tmp/random.orig"
printf '\n[site_random]\nrandom = CTR-DRBG\ncipher = AES-256-CTR\n' >>"$tmp/random.orig"
cp "$tmp/random.orig" "$cnf"
last=random-enable
ctl "$last" --config "$cnf" enable
expect "existing [random]: enable" [ "$rc" = 0 ]
expect "existing [random]: RAND_bytes from chacharng" from_chacharng "$cnf" public
expect "existing [random]: RAND_priv_bytes from chacharng" from_chacharng "$cnf" private
expect "existing [random]: its own lines are kept" grep -qx 'random = CTR-DRBG' "$cnf"
if [ -n "$rp_ok" ]; then
    ctl "$last" --config "$cnf" enable --random-provider
    expect "existing [random]: --random-provider" \
        eval '[ "$rc" = 0 ] && from_chacharng "$cnf" public rp'
fi
ctl "$last" --config "$cnf" disable
expect "existing [random]: disable, byte for byte" cmp "$cnf" "$tmp/random.orig"

# random after providers: the 3.5+ trap, refused with --random-provider
if [ -n "$rp_ok" ]; then
    awk '{ print } /^\[openssl_init\]/ { print "providers = provider_sect"; print "random = site_random" }' \
        "$stock/bookworm.cnf" >"$tmp/order.orig"
    printf '\n[provider_sect]\ndefault = default_sect\n[default_sect]\nactivate = 1\n[site_random]\nrandom = CTR-DRBG\n' \
        >>"$tmp/order.orig"
    cp "$tmp/order.orig" "$cnf"
    last=order
    ctl "$last" --config "$cnf" enable --random-provider
    expect "random after providers: refused" \
        eval '[ "$rc" = 1 ] && grep -q "random comes after providers" "$tmp/$last.out"'
    expect "random after providers: file unchanged" cmp "$cnf" "$tmp/order.orig"
fi

# default_properties = fips=yes parses, but then nothing serves RAND
awk '{ print } /^\[openssl_init\]/ { print "alg_section = site_evp" }' "$orig" >"$tmp/fips.orig"
printf '\n[site_evp]\ndefault_properties = fips=yes\n' >>"$tmp/fips.orig"
cp "$tmp/fips.orig" "$cnf"
last=fips
ctl "$last" --config "$cnf" enable
expect "fips=yes: refused" eval '[ "$rc" = 1 ] && grep -q "refusing to enable" "$tmp/$last.out"'
expect "fips=yes: the message says RAND fails" grep -q 'RAND_bytes fails under the new file' "$tmp/$last.out"
expect "fips=yes: file unchanged" cmp "$cnf" "$tmp/fips.orig"
expect "fips=yes: no scratch file left beside it" \
    eval '[ -z "$(find "$tmp" -name ".chacharngctl.*")" ]'

# the old README recipe made chacharng_sect by hand: refused, unchanged
awk '{ print } /^\[openssl_init\]/ { print "providers = provider_sect" }' "$stock/bookworm.cnf" >"$tmp/hand.orig"
printf '\n[provider_sect]\ndefault = default_sect\nchacharng = chacharng_sect\n[default_sect]\nactivate = 1\n[chacharng_sect]\nactivate = 1\n' \
    >>"$tmp/hand.orig"
cp "$tmp/hand.orig" "$cnf"
last=hand
ctl "$last" --config "$cnf" enable
expect "configured by hand: refused" eval '[ "$rc" = 1 ] && grep -q "already configured by hand" "$tmp/$last.out"'
expect "configured by hand: file unchanged" cmp "$cnf" "$tmp/hand.orig"

# a module that cannot load: enable refuses and names the path tried
cp "$orig" "$cnf"
last=nomodule
OPENSSL_MODULES=$tmp/nowhere ctl "$last" --config "$cnf" enable
expect "module missing: refused" eval '[ "$rc" = 1 ] && grep -q "refusing to enable" "$tmp/$last.out"'
expect "module missing: names the module path" grep -q "module tried: $tmp/nowhere/chacharng.so" "$tmp/$last.out"
expect "module missing: file unchanged" cmp "$cnf" "$orig"

# status when configured but not loadable: path and reason
ctl enabled --config "$cnf" enable
mkdir -p "$tmp/broken" && echo 'not a module' >"$tmp/broken/chacharng.so"
last=status-missing
OPENSSL_MODULES=$tmp/nowhere ctl "$last" --config "$cnf" status
expect "status, module missing: exit 1" [ "$rc" = 1 ]
expect "status, module missing: path and reason" \
    eval 'grep -q "module tried: $tmp/nowhere/chacharng.so" "$tmp/$last.out" && grep -q "reason: no such file" "$tmp/$last.out"'
expect "status, module missing: RAND_bytes fails" grep -q '^RAND_bytes: FAILS' "$tmp/$last.out"
last=status-broken
OPENSSL_MODULES=$tmp/broken ctl "$last" --config "$cnf" status
expect "status, module broken: dlopen's reason" \
    eval '[ "$rc" = 1 ] && grep -q "module tried: $tmp/broken/chacharng.so" "$tmp/$last.out" && grep -q "reason: .*file too short" "$tmp/$last.out"'
last=status-impl
CHACHARNG_IMPL=nosuchkernel ctl "$last" --config "$cnf" status
expect "status, provider init fails: chacharng's reason" \
    eval '[ "$rc" = 1 ] && grep -q "reason: CHACHARNG_IMPL=nosuchkernel" "$tmp/$last.out"'
ctl disabled --config "$cnf" disable
expect "disable works while the module cannot load" cmp "$cnf" "$orig"

# an admin's edit in between: only chacharng's lines go
cp "$orig" "$cnf"
ctl enabled --config "$cnf" enable
sed -i 's/^default_days[ \t]*=.*/default_days = 30/' "$cnf"
echo '# added by the admin' >>"$cnf"
sed 's/^default_days[ \t]*=.*/default_days = 30/' "$orig" >"$tmp/admin.expected"
echo '# added by the admin' >>"$tmp/admin.expected"
ctl disabled --config "$cnf" disable
expect "edit in between: only chacharng's lines removed" cmp "$cnf" "$tmp/admin.expected"

# no newline at the end of the file
head -c -1 "$orig" >"$tmp/nonl.orig"
cp "$tmp/nonl.orig" "$cnf"
last=nonl
ctl "$last" --config "$cnf" enable
expect "no final newline: enable" eval '[ "$rc" = 0 ] && from_chacharng "$cnf" public'
ctl "$last" --config "$cnf" disable
expect "no final newline: disable, byte for byte" cmp "$cnf" "$tmp/nonl.orig"

# a read-only file: root may replace it and the mode stays; anyone else
# is refused even where the directory would allow the rename
mkdir -m 1777 "$tmp/ro"
cp "$orig" "$tmp/ro/openssl.cnf"
chmod 0444 "$tmp/ro/openssl.cnf"
if [ "$(id -u)" = 0 ]; then
    last=ro-root
    ctl "$last" --config "$tmp/ro/openssl.cnf" enable
    expect "read-only, root: enabled, mode kept" \
        eval '[ "$rc" = 0 ] && [ "$(stat -c %a "$tmp/ro/openssl.cnf")" = 444 ]'
    ctl "$last" --config "$tmp/ro/openssl.cnf" disable
    expect "read-only, root: disabled, mode kept" \
        eval 'cmp -s "$tmp/ro/openssl.cnf" "$orig" && [ "$(stat -c %a "$tmp/ro/openssl.cnf")" = 444 ]'
    if command -v setpriv >/dev/null; then
        chown 65534:65534 "$tmp/ro/openssl.cnf"
        chmod 0755 "$tmp"
        last=ro-user
        # a copy the other user can read wherever the build tree is
        cp "$ctl" "$tmp/ro/chacharngctl"
        setpriv --reuid=65534 --regid=65534 --clear-groups \
            env TMPDIR="$tmp/ro" sh "$tmp/ro/chacharngctl" --config "$tmp/ro/openssl.cnf" enable >"$tmp/$last.out" 2>&1
        rc=$?
        expect "read-only, other user: refused" \
            eval '[ "$rc" = 1 ] && grep -q "read-only for you: nothing changed" "$tmp/$last.out"'
        expect "read-only, other user: file unchanged" cmp "$tmp/ro/openssl.cnf" "$orig"
    else
        skip "read-only as another user: setpriv not installed"
        skip "read-only as another user: setpriv not installed"
    fi
else
    last=ro-user
    ctl "$last" --config "$tmp/ro/openssl.cnf" enable
    expect "read-only: refused" eval '[ "$rc" = 1 ] && grep -q "read-only for you" "$tmp/$last.out"'
    expect "read-only: file unchanged" cmp "$tmp/ro/openssl.cnf" "$orig"
fi

echo "1..$points"
[ "$failures" -eq 0 ]
