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
# an admin's edit between enable and disable, no final newline, disable
# of a file with two names (written in place), and the status diagnosis
# of a configured module that cannot load.  Prints TAP.
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
: "${CHACHARNG_CTL_LIB:=$abs_top_srcdir/tools}"
export OPENSSL OPENSSL_MODULES CHACHARNG_PROBE CHACHARNG_CTL_LIB
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

# copy_for_other_user DIR: chacharngctl, its parts and the probe in
# DIR/lib, which another user can read wherever the build tree is
copy_for_other_user() {
    mkdir -p "$1/lib"
    cp "$ctl" "$CHACHARNG_CTL_LIB"/chacharngctl.awk "$CHACHARNG_CTL_LIB"/chacharngctl-*.sh \
        "$CHACHARNG_PROBE" "$1/lib/"
    chmod -R a+rX "$1/lib"
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

# a setting appended at the end of the file after enable (the commonest
# edit: echo ... >>openssl.cnf) lands in the section the file ended in,
# which chacharngctl's lines open again last: disable takes them out,
# refusing nothing, and the setting stays where it was read
cp "$orig" "$cnf"
ctl enabled --config "$cnf" enable
echo 'Options = ServerPreference' >>"$cnf"
{ cat "$orig" && echo 'Options = ServerPreference'; } >"$tmp/append.expected"
last=append-disable
ctl "$last" --config "$cnf" disable
expect "a setting appended after enable: disable takes only chacharng's lines out" \
    eval '[ "$rc" = 0 ] && cmp -s "$cnf" "$tmp/append.expected"'

# enable again after an administrator's line inside chacharng's section,
# which rewriting chacharng's lines would move into the section above:
# refused by libcrypto's reading of the file as it is, file and backup
# left alone
cp "$orig" "$cnf"
ctl enabled --config "$cnf" enable
sed -i '/^\[chacharng_sect\]/a impl = generic' "$cnf"
cp "$cnf" "$tmp/reenable.edited"
last=reenable-edited
ctl "$last" --config "$cnf" enable
expect "enable again, an admin's line in chacharng's section: refused by libcrypto's reading" \
    eval '[ "$rc" = 1 ] && grep -q "would change more than chacharng" "$tmp/$last.out" &&
        grep -q "impl = generic" "$tmp/$last.out"'
expect "enable again, an admin's line in chacharng's section: file and backup unchanged" \
    eval 'cmp -s "$cnf" "$tmp/reenable.edited" && cmp -s "$cnf.chacharngctl.bak" "$orig"'

# status after one of chacharngctl's lines was taken out by hand (the
# random one): the provider still loads, RAND_bytes is CTR-DRBG's, and
# status says so and fails
cp "$orig" "$cnf"
ctl enabled --config "$cnf" enable
sed -i '/^random = chacharng_random_sect /d' "$cnf"
last=status-random-gone
ctl "$last" --config "$cnf" status
expect "status, chacharngctl's random line taken out: a problem, RAND_bytes not from chacharng" \
    eval '[ "$rc" = 1 ] && grep -q "^PROBLEM: .*RAND_bytes does not come from" "$tmp/$last.out"'

# lines of an earlier chacharngctl (no digest): its own when taking them
# out gives its backup byte for byte, and only then
for nl in with without; do
    if [ "$nl" = with ]; then cp "$orig" "$tmp/legacy.orig"; else head -c -1 "$orig" >"$tmp/legacy.orig"; fi
    cp "$tmp/legacy.orig" "$cnf"
    ctl enabled --config "$cnf" enable
    sed -i 's/ # chacharngctl:[0-9a-f]\{16\}$/ # chacharngctl/' "$cnf"
    last=legacy-$nl
    ctl "$last" --config "$cnf" disable
    expect "lines of an earlier chacharngctl, $nl a final newline: disable, byte for byte" \
        eval '[ "$rc" = 0 ] && cmp -s "$cnf" "$tmp/legacy.orig"'
done
cp "$orig" "$cnf"
ctl enabled --config "$cnf" enable
sed -i 's/ # chacharngctl:[0-9a-f]\{16\}$/ # chacharngctl/' "$cnf"
echo '# added by the admin' >>"$cnf"
cp "$cnf" "$tmp/legacy.edited"
last=legacy-edited
ctl "$last" --config "$cnf" disable
expect "lines of an earlier chacharngctl, the file edited since: not taken for its own" \
    eval '[ "$rc" = 0 ] && cmp -s "$cnf" "$tmp/legacy.edited" && grep -q "still loads chacharng" "$tmp/$last.out"'

# no newline at the end of the file
head -c -1 "$orig" >"$tmp/nonl.orig"
cp "$tmp/nonl.orig" "$cnf"
last=nonl
ctl "$last" --config "$cnf" enable
expect "no final newline: enable" eval '[ "$rc" = 0 ] && from_chacharng "$cnf" public'
ctl "$last" --config "$cnf" disable
expect "no final newline: disable, byte for byte" cmp "$cnf" "$tmp/nonl.orig"

# a NUL byte in a comment (libcrypto reads the file): chacharngctl's
# lines are found as text all the same, signed by enable and taken out by
# disable
{ printf '# x\000\n' && cat "$orig"; } >"$tmp/nul.orig"
cp "$tmp/nul.orig" "$cnf"
last=nul
ctl "$last" --config "$cnf" enable
expect "a NUL byte in the file: enable signs every line it adds" \
    eval '[ "$rc" = 0 ] && ! grep -a -q "@SIG@" "$cnf" && from_chacharng "$cnf" public'
ctl "$last" --config "$cnf" disable
expect "a NUL byte in the file: disable, byte for byte" \
    eval '[ "$rc" = 0 ] && cmp -s "$cnf" "$tmp/nul.orig"'

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
        copy_for_other_user "$tmp/ro"
        setpriv --reuid=65534 --regid=65534 --clear-groups \
            env TMPDIR="$tmp/ro" CHACHARNG_CTL_LIB="$tmp/ro/lib" CHACHARNG_PROBE="$tmp/ro/lib/chacharng-probe" \
            sh "$tmp/ro/lib/chacharngctl" --config "$tmp/ro/openssl.cnf" enable >"$tmp/$last.out" 2>&1
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

# ------------------------------------------------------------------------
# config shapes libcrypto reads its own way (test/ctl/shapes): each one is
# checked before and after through libcrypto's reading (chacharng-probe conf)
# ------------------------------------------------------------------------
shapes=$abs_top_srcdir/test/ctl/shapes
mkdir -p "$tmp/shapes"
for f in "$shapes"/*.inc; do
    cp "$f" "$tmp/shapes/"
done
# reading FILE: libcrypto's reading of FILE, sorted
reading() {
    "$CHACHARNG_PROBE" conf "$1" | LC_ALL=C sort
}
# kept_reading BEFORE AFTER: every line of BEFORE is still in AFTER
kept_reading() {
    [ -z "$(LC_ALL=C comm -23 "$1" "$2")" ] || {
        LC_ALL=C comm -23 "$1" "$2" | sed "s/^/# lost: /"
        return 1
    }
}
# shape NAME OUTCOME NODE: enable on test/ctl/shapes/NAME.cnf; OUTCOME
# "enabled" or the text of the refusal; NODE "covered" (chacharngctl's
# own nodejs_conf) or the section of the file's own nodejs_conf
shape() {
    local name=$1 outcome=$2 node_sect=$3 f=$tmp/shapes/$1.cnf
    sed "s|@DIR@|$tmp/shapes|g" "$shapes/$name.cnf" >"$tmp/shapes/$name.orig"
    cp "$tmp/shapes/$name.orig" "$f"
    reading "$f" >"$tmp/shapes/$name.before"
    last=shape-$name-status0
    ctl "$last" --config "$f" status
    if [ "$outcome" = enabled ]; then
        expect "shape $name: status before enable says not enabled" grep -q '^enabled: no$' "$tmp/$last.out"
    fi
    last=shape-$name
    ctl "$last" --config "$f" enable
    reading "$f" >"$tmp/shapes/$name.after"
    if [ "$outcome" != enabled ]; then
        expect "shape $name: refused ($outcome)" \
            eval '[ "$rc" = 1 ] && grep -q "$outcome" "$tmp/$last.out"'
        expect "shape $name: refused: file unchanged" cmp "$f" "$tmp/shapes/$name.orig"
        return
    fi
    expect "shape $name: enable" [ "$rc" = 0 ]
    expect "shape $name: libcrypto reads every setting it read before" \
        kept_reading "$tmp/shapes/$name.before" "$tmp/shapes/$name.after"
    expect "shape $name: libcrypto reaches chacharng's provider and random sections" \
        eval 'grep -qx "V openssl_conf.providers.chacharng.activate = 1" "$tmp/shapes/$name.after" &&
            grep -qx "V openssl_conf.random.random = CHACHA20-DRBG" "$tmp/shapes/$name.after"'
    expect "shape $name: a fresh RAND_bytes from chacharng" from_chacharng "$f" public
    last=shape-$name-status
    ctl "$last" --config "$f" status
    expect "shape $name: status says enabled" grep -q '^enabled: yes, by chacharngctl' "$tmp/$last.out"
    if [ "$node_sect" = covered ]; then
        expect "shape $name: libcrypto gives Node.js chacharng, and status says so" \
            eval 'grep -qx "V nodejs_conf.providers.chacharng.activate = 1" "$tmp/shapes/$name.after" &&
                grep -q "^Node.js: covered" "$tmp/$last.out"'
    else
        expect "shape $name: status names the section Node.js reads, [$node_sect]" \
            grep -q "^Node.js: not covered: it reads \[$node_sect\]" "$tmp/$last.out"
    fi
    last=shape-$name-disable
    ctl "$last" --config "$f" disable
    expect "shape $name: disable, byte for byte" cmp "$f" "$tmp/shapes/$name.orig"
}
shape bom enabled covered
shape default-header enabled site_node
shape new-oids enabled covered
shape continued-key enabled covered
shape comment-backslash enabled covered
shape node-quoted enabled site_node
shape node-var enabled site_node
shape node-continued enabled site_node
shape include-node enabled covered
shape admin-mark enabled covered
shape crlf enabled covered
shape include-tls "named by openssl_conf, is not in" -
shape include-hand "already configured by hand" -
last=shape-include-hand-status
ctl "$last" --config "$tmp/shapes/include-hand.cnf" status
expect "shape include-hand: status says configured by hand" \
    grep -q '^enabled: configured by hand' "$tmp/$last.out"
cp "$tmp/shapes/crlf.orig" "$tmp/shapes/crlf.cnf"
ctl crlf --config "$tmp/shapes/crlf.cnf" enable
expect "shape crlf: every line enable adds ends in CR LF" \
    eval '[ "$(grep -c "$(printf "\r")\$" "$tmp/shapes/crlf.cnf")" = "$(wc -l <"$tmp/shapes/crlf.cnf")" ]'

# ------------------------------------------------------------------------
# the user's file in every message
# ------------------------------------------------------------------------
# a section that comes from an .include: refused, naming the file
printf '[site_init]\nalg_section = site_evp\n[site_evp]\n' >"$tmp/site.inc"
{
    echo "openssl_conf = site_init"
    echo ".include $tmp/site.inc"
    sed -n '/^\[/,$p' "$orig"
} >"$tmp/inc.orig"
cp "$tmp/inc.orig" "$cnf"
last=include
ctl "$last" --config "$cnf" enable
expect "section in an .include: refused, naming the file" \
    eval '[ "$rc" = 1 ] && grep -q "\[site_init\], named by openssl_conf, is not in $cnf " "$tmp/$last.out"'
expect "section in an .include: no scratch path in the message" \
    eval '! grep -q "chacharngctl\.[A-Za-z0-9]*/" "$tmp/$last.out"'
expect "section in an .include: file unchanged" cmp "$cnf" "$tmp/inc.orig"

# ------------------------------------------------------------------------
# what the new file keeps: owner, mode, ACL, extended attributes, links
# ------------------------------------------------------------------------
# attrs FILE: owner, group, mode, ACL and every extended attribute
attrs() {
    stat -c '%u %g %a' "$1"
    getfacl -cp "$1" 2>/dev/null
    getfattr -d -m - -e hex "$1" 2>/dev/null | sed '/^# file:/d'
}
if command -v setfacl >/dev/null && command -v setfattr >/dev/null &&
    cp "$orig" "$tmp/acl.cnf" && setfacl -m u:nobody:r-- "$tmp/acl.cnf" 2>/dev/null &&
    setfattr -n user.chacharng.test -v kept "$tmp/acl.cnf" 2>/dev/null; then
    cnf=$tmp/acl.cnf
    chmod 0640 "$cnf"
    [ "$(id -u)" = 0 ] && chown 65534:0 "$cnf"
    cp "$cnf" "$tmp/acl.orig"
    attrs "$cnf" >"$tmp/acl.attrs"
    last=acl-enable
    ctl "$last" --config "$cnf" enable
    expect "ACL and xattr: enable" [ "$rc" = 0 ]
    expect "ACL and xattr: owner, mode, ACL and attributes kept by enable" \
        eval 'attrs "$cnf" | diff "$tmp/acl.attrs" - >&2'
    last=acl-disable
    ctl "$last" --config "$cnf" disable
    expect "ACL and xattr: disable, byte for byte" cmp "$cnf" "$tmp/acl.orig"
    expect "ACL and xattr: owner, mode, ACL and attributes kept by disable" \
        eval 'attrs "$cnf" | diff "$tmp/acl.attrs" - >&2'
    expect "ACL and xattr: the backup keeps them too" \
        eval 'attrs "$cnf.chacharngctl.bak" | diff "$tmp/acl.attrs" - >&2'
    cnf=$tmp/edge.cnf
else
    for _ in 1 2 3 4 5; do
        skip "ACL and xattr: setfacl/setfattr (packages acl, attr) missing or not supported here"
    done
fi

# a hard link: replacing the file would split it from its other name
cp "$orig" "$cnf"
rm -f "$tmp/edge.link"
ln "$cnf" "$tmp/edge.link"
last=hardlink
ctl "$last" --config "$cnf" enable
expect "hard link: refused, saying so" \
    eval '[ "$rc" = 1 ] && grep -q "hard link" "$tmp/$last.out" && grep -q "$cnf" "$tmp/$last.out"'
expect "hard link: file unchanged, still one file with two names" \
    eval 'cmp -s "$cnf" "$orig" && [ "$(stat -c %h "$cnf")" = 2 ] && [ "$cnf" -ef "$tmp/edge.link" ]'
rm -f "$tmp/edge.link"

# disable with nothing of its own to remove succeeds, whatever the file:
# package removal runs it
last=disable-missing
ctl "$last" --config "$tmp/no-such.cnf" disable
expect "disable, no such file: success, nothing to do" \
    eval '[ "$rc" = 0 ] && [ ! -e "$tmp/no-such.cnf" ]'
cp "$orig" "$cnf"
ln "$cnf" "$tmp/edge.link"
last=disable-hardlink
ctl "$last" --config "$cnf" disable
expect "disable, hard link, not enabled: success, file unchanged" \
    eval '[ "$rc" = 0 ] && cmp -s "$cnf" "$orig" && [ "$cnf" -ef "$tmp/edge.link" ]'
rm -f "$tmp/edge.link"

# disable on an enabled file with two names (package removal with a
# hard-linked /etc/ssl/openssl.cnf): written in place, so that no name
# keeps activating a module that is about to go
cp "$orig" "$cnf"
ctl enabled --config "$cnf" enable
cp "$cnf" "$tmp/linked.enabled"
ln "$cnf" "$tmp/edge.link"
before_id=$(stat -c '%d %i %h %u %g %a' "$cnf")
last=disable-hardlink-enabled
ctl "$last" --config "$cnf" disable
expect "disable, hard link, enabled: success, chacharng's lines gone, byte for byte" \
    eval '[ "$rc" = 0 ] && cmp -s "$cnf" "$orig"'
expect "disable, hard link, enabled: the other name shows the same file" \
    eval '[ "$cnf" -ef "$tmp/edge.link" ] && cmp -s "$tmp/edge.link" "$cnf" &&
        ! grep -q "# chacharngctl" "$tmp/edge.link"'
expect "disable, hard link, enabled: same inode, link count, owner and mode" \
    eval '[ "$(stat -c "%d %i %h %u %g %a" "$cnf")" = "$before_id" ]'
expect "disable, hard link, enabled: the backup is the file as it was" \
    cmp "$cnf.chacharngctl.bak" "$tmp/linked.enabled"
expect "disable, hard link, enabled: no scratch file left beside it" \
    eval '[ -z "$(find "$tmp" -maxdepth 1 -name ".chacharngctl.*")" ]'
rm -f "$tmp/edge.link"

# ... but only after the checks of a file with one name: an edit of the
# administrator's inside chacharng's section, which taking the lines out
# would move elsewhere, is still refused, the file left byte for byte
cp "$orig" "$cnf"
ctl enabled --config "$cnf" enable
sed '/^\[chacharng_sect\]/a impl = generic' "$cnf" >"$tmp/linked.edit"
cat "$tmp/linked.edit" >"$cnf"
ln "$cnf" "$tmp/edge.link"
before_id=$(stat -c '%d %i %h' "$cnf")
last=disable-hardlink-refused
ctl "$last" --config "$cnf" disable
expect "disable, hard link, would change more: refused by libcrypto's reading" \
    eval '[ "$rc" = 1 ] && grep -q "would change more than chacharng" "$tmp/$last.out" &&
        grep -q "no longer read: openssl_conf.providers.chacharng.impl = generic" "$tmp/$last.out"'
expect "disable, hard link, would change more: file unchanged, same inode, two names" \
    eval 'cmp -s "$cnf" "$tmp/linked.edit" && [ "$(stat -c "%d %i %h" "$cnf")" = "$before_id" ] &&
        [ "$cnf" -ef "$tmp/edge.link" ]'
rm -f "$tmp/edge.link"

# the in-place write fails half-way (truncate fails once, after dd has
# written the new bytes over the old): the file is put back from the
# backup, in place, and disable fails, saying so
mkdir -p "$tmp/trunc-shim"
real_truncate=$(command -v truncate)
{
    echo '#!/bin/sh'
    printf 'if [ ! -e "%s" ]; then\n' "$tmp/trunc-shim/done"
    printf '    : >"%s"\n' "$tmp/trunc-shim/done"
    echo '    echo "truncate: No space left on device" >&2'
    echo '    exit 1'
    echo 'fi'
    printf 'exec "%s" "$@"\n' "$real_truncate"
} >"$tmp/trunc-shim/truncate"
chmod +x "$tmp/trunc-shim/truncate"
cp "$orig" "$cnf"
ctl enabled --config "$cnf" enable
cp "$cnf" "$tmp/linked.enabled"
ln "$cnf" "$tmp/edge.link"
# shellcheck disable=SC2034 # read by the checks
before_id=$(stat -c '%d %i %h' "$cnf")
rm -f "$tmp/trunc-shim/done"
last=disable-hardlink-restored
PATH=$tmp/trunc-shim:$PATH ctl "$last" --config "$cnf" disable
expect "disable, hard link, the write fails: refused, saying the file was put back" \
    eval '[ "$rc" = 1 ] && [ -e "$tmp/trunc-shim/done" ] && grep -q "put back" "$tmp/$last.out"'
expect "disable, hard link, the write fails: file as it was, same inode, two names" \
    eval 'cmp -s "$cnf" "$tmp/linked.enabled" && [ "$(stat -c "%d %i %h" "$cnf")" = "$before_id" ] &&
        [ "$cnf" -ef "$tmp/edge.link" ]'
rm -f "$tmp/edge.link"
ctl "$last-again" --config "$cnf" disable

# the write fails half-way and so does putting it back (truncate fails
# once, then dd writes nothing on its second call, the put-back): disable
# fails, calls the file damaged, and the remedy it prints (a copy of the
# backup in place) gives back the file as it was, every name kept
mkdir -p "$tmp/dd-shim"
real_dd=$(command -v dd)
{
    echo '#!/bin/sh'
    printf 'if [ -e "%s" ]; then\n' "$tmp/dd-shim/once"
    echo '    echo "dd: error writing: No space left on device" >&2'
    echo '    exit 1'
    echo 'fi'
    printf ': >"%s"\n' "$tmp/dd-shim/once"
    printf 'exec "%s" "$@"\n' "$real_dd"
} >"$tmp/dd-shim/dd"
chmod +x "$tmp/dd-shim/dd"
cp "$orig" "$cnf"
ctl enabled --config "$cnf" enable
cp "$cnf" "$tmp/linked.enabled"
ln "$cnf" "$tmp/edge.link"
# shellcheck disable=SC2034 # read by the checks
before_id=$(stat -c '%d %i %h' "$cnf")
rm -f "$tmp/trunc-shim/done" "$tmp/dd-shim/once"
last=disable-hardlink-damaged
PATH=$tmp/dd-shim:$tmp/trunc-shim:$PATH ctl "$last" --config "$cnf" disable
expect "disable, hard link, write and put-back fail: refused, the file called damaged, the remedy named" \
    eval '[ "$rc" = 1 ] && [ -e "$tmp/dd-shim/once" ] && [ -e "$tmp/trunc-shim/done" ] &&
        grep -q "is damaged" "$tmp/$last.out" &&
        grep -qF "cat $cnf.chacharngctl.bak >$cnf" "$tmp/$last.out"'
expect "disable, hard link, write and put-back fail: the file is neither as it was nor as asked" \
    eval '! cmp -s "$cnf" "$tmp/linked.enabled" && ! cmp -s "$cnf" "$orig"'
expect "disable, hard link, write and put-back fail: the backup is the file as it was" \
    cmp "$cnf.chacharngctl.bak" "$tmp/linked.enabled"
cat "$cnf.chacharngctl.bak" >"$cnf"
expect "disable, hard link, damaged: the printed remedy restores it, same inode, two names" \
    eval 'cmp -s "$cnf" "$tmp/linked.enabled" && [ "$(stat -c "%d %i %h" "$cnf")" = "$before_id" ] &&
        cmp -s "$tmp/edge.link" "$tmp/linked.enabled"'
rm -f "$tmp/edge.link"
ctl "$last-again" --config "$cnf" disable
expect "disable, after the remedy: success, chacharng's lines gone" \
    eval '[ "$rc" = 0 ] && cmp -s "$cnf" "$orig"'

# the backup's name a symlink to a directory (--config in a directory
# others can write): the backup replaces the symlink, never lands inside
mkdir -p "$tmp/bakdir"
cp "$orig" "$cnf"
rm -f "$cnf.chacharngctl.bak"
ln -s "$tmp/bakdir" "$cnf.chacharngctl.bak"
last=bak-symlink
ctl "$last" --config "$cnf" enable
expect "backup name a symlink to a directory: the backup is a file in its place, nothing in the directory" \
    eval '[ "$rc" = 0 ] && [ ! -L "$cnf.chacharngctl.bak" ] && cmp -s "$cnf.chacharngctl.bak" "$orig" &&
        [ -z "$(ls -A "$tmp/bakdir")" ]'
ctl "$last-disable" --config "$cnf" disable

# ------------------------------------------------------------------------
# another writer: a lock across read-check-replace, a compare before it
# ------------------------------------------------------------------------
# A writer that holds the lock (on the directory, as chacharngctl(8)
# says) when enable or disable starts, and writes only once chacharngctl
# waits for that lock (a blocked flock on the directory in /proc/locks):
# chacharngctl must read the file after it gets the lock, and so keep
# the line.
# hold_lock: take the lock in the background ($holder), and return once
# it is held
hold_lock() {
    local ino
    ino=$(stat -c %i "$tmp")
    rm -f "$tmp/held"
    flock -x "$tmp" sh -c '
        : >"$3"
        for _ in $(seq 600); do
            grep -Eq "^[0-9]+: -> FLOCK .*:$2 " /proc/locks && break
            sleep 0.05
        done
        echo "# written under the lock" >>"$1"' sh "$cnf" "$ino" "$tmp/held" &
    holder=$!
    while [ ! -e "$tmp/held" ] && kill -0 "$holder" 2>/dev/null; do
        sleep 0.05
    done
}
for step in enable disable; do
    cp "$orig" "$cnf"
    [ "$step" = disable ] && ctl enabled --config "$cnf" enable
    cp "$orig" "$tmp/lock.expected"
    [ "$step" = enable ] && cp "$cnf" "$tmp/lock.expected"
    echo "# written under the lock" >>"$tmp/lock.expected"
    hold_lock
    last=lock-$step
    ctl "$last" --config "$cnf" "$step"
    wait "$holder"
    if [ "$step" = enable ]; then
        expect "a writer holding the lock: enable waits for it and keeps its line" \
            eval '[ "$rc" = 0 ] && grep -qx "# written under the lock" "$cnf" && from_chacharng "$cnf" public'
        ctl lock-disable --config "$cnf" disable
        expect "a writer holding the lock: then disable gives back the file with that line" \
            cmp "$cnf" "$tmp/lock.expected"
    else
        expect "a writer holding the lock: disable waits for it and keeps its line" \
            eval '[ "$rc" = 0 ] && cmp -s "$cnf" "$tmp/lock.expected"'
    fi
done

# A writer that takes no lock, between chacharngctl's read and its
# rename (an awk that appends to the file as soon as chacharngctl's first
# awk run is over): refused, that writer's line kept, nothing else changed.
mkdir -p "$tmp/shim"
real_awk=$(command -v awk)
{
    echo '#!/bin/sh'
    printf '"%s" "$@"\n' "$real_awk"
    echo 'st=$?'
    printf 'if [ ! -e "%s" ]; then\n' "$tmp/shim/done"
    printf '    : >"%s"\n' "$tmp/shim/done"
    echo '    echo "# written meanwhile" >>"$CTL_VICTIM"'
    echo 'fi'
    echo 'exit $st'
} >"$tmp/shim/awk"
chmod +x "$tmp/shim/awk"
for step in enable disable; do
    cp "$orig" "$cnf"
    if [ "$step" = disable ]; then
        ctl enabled --config "$cnf" enable
    fi
    cp "$cnf" "$tmp/race.expected"
    echo '# written meanwhile' >>"$tmp/race.expected"
    rm -f "$tmp/shim/done"
    last=race-$step
    CTL_VICTIM=$cnf PATH=$tmp/shim:$PATH ctl "$last" --config "$cnf" "$step"
    expect "a writer between read and rename: $step refused" \
        eval '[ "$rc" = 1 ] && [ -e "$tmp/shim/done" ] && grep -q "$cnf changed" "$tmp/$last.out"'
    expect "a writer between read and rename: $step keeps its line, changes nothing else" \
        cmp "$cnf" "$tmp/race.expected"
done

# ------------------------------------------------------------------------
# Node.js: reads the section nodejs_conf names, not openssl_conf
# ------------------------------------------------------------------------
# with a node that links the system libcrypto (Debian's nodejs package;
# a node with its own OpenSSL built in never reads this file's providers)
node_bin=$(command -v nodejs || command -v node)
# shellcheck disable=SC2016 # JavaScript
node_js='require("crypto").randomBytes(16);
const m = require("fs").readFileSync("/proc/self/maps", "utf8");
console.log(/\/chacharng\.so$/m.test(m) ? "chacharng mapped" : "chacharng not mapped")'
# node_maps: what a node under $cnf has mapped after crypto.randomBytes
node_maps() {
    OPENSSL_CONF=$cnf "$node_bin" -e "$node_js" 2>&1
}
if [ -n "$node_bin" ] && ldd "$node_bin" 2>/dev/null | grep -q 'libcrypto\.so\.3 => /'; then
    cp "$orig" "$cnf"
    last=node-enable
    ctl "$last" --config "$cnf" enable
    expect "Node.js ($($node_bin --version)): crypto.randomBytes draws with chacharng mapped after enable" \
        eval '[ "$(node_maps)" = "chacharng mapped" ]'
    last=node-status
    ctl "$last" --config "$cnf" status
    expect "Node.js: status says it is covered" grep -q '^Node.js: covered' "$tmp/$last.out"
    last=node-disable
    ctl "$last" --config "$cnf" disable
    expect "Node.js: not mapped after disable" \
        eval '[ "$(node_maps)" = "chacharng not mapped" ]'
else
    for _ in 1 2 3; do
        skip "Node.js: no node linked with the system libcrypto (Debian's nodejs package) here"
    done
fi
# an administrator's own nodejs_conf: left alone, and said so
{
    echo "nodejs_conf = site_node"
    cat "$orig"
    printf '[site_node]\nssl_conf = site_node_ssl\n[site_node_ssl]\n'
} >"$tmp/node.orig"
cp "$tmp/node.orig" "$cnf"
last=node-own
ctl "$last" --config "$cnf" enable
expect "Node.js with its own nodejs_conf: enable warns that it leaves it alone" \
    eval '[ "$rc" = 0 ] && grep -q "Node.js reads \[site_node\]" "$tmp/$last.out" && grep -qx "nodejs_conf = site_node" "$cnf"'
ctl "$last" --config "$cnf" disable
expect "Node.js with its own nodejs_conf: disable, byte for byte" cmp "$cnf" "$tmp/node.orig"

# ------------------------------------------------------------------------
# status --processes: what running processes have mapped
# ------------------------------------------------------------------------
# wait_mapped PID: until PID maps a chacharng.so (at most 10 s)
wait_mapped() {
    for _ in $(seq 100); do
        grep -q '/chacharng\.so' "/proc/$1/maps" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
mkdir -p "$tmp/pmods"
cp "$abs_top_builddir/.libs/chacharng.so" "$tmp/pmods/chacharng.so"
cp "$orig" "$cnf"
# two processes that stay, however slow this machine is: one with
# chacharng loaded, one without, each reading a FIFO that this script
# holds open (fds 7 and 8) until it closes it below
mkfifo "$tmp/hold-with" "$tmp/hold-without"
$OPENSSL dgst -provider-path "$tmp/pmods" -provider chacharng -provider default <"$tmp/hold-with" >/dev/null 2>&1 &
with=$!
OPENSSL_CONF=/dev/null $OPENSSL dgst <"$tmp/hold-without" >/dev/null 2>&1 &
without=$!
exec 7>"$tmp/hold-with" 8>"$tmp/hold-without"
if wait_mapped "$with"; then
    last=processes
    OPENSSL_MODULES=$tmp/pmods ctl "$last" --config "$cnf" status --processes
    expect "status --processes: a process with the module now installed" \
        eval '[ "$rc" = 0 ] && grep -Eq "^  $with +openssl +$tmp/pmods/chacharng.so: the module now installed" "$tmp/$last.out"'
    expect "status --processes: a process with libcrypto and no chacharng" \
        eval 'sed -n "/^processes with libcrypto but no chacharng/,\$p" "$tmp/$last.out" | grep -Eq "^  $without +openssl$"'
    # an upgrade replaces the file by rename: the running copy is deleted
    cp "$tmp/pmods/chacharng.so" "$tmp/pmods/.new" && mv -f "$tmp/pmods/.new" "$tmp/pmods/chacharng.so"
    last=processes-upgraded
    OPENSSL_MODULES=$tmp/pmods ctl "$last" --config "$cnf" status --processes
    expect "status --processes after an upgrade: the process runs a deleted copy, restart it" \
        eval 'grep -Eq "^  $with +openssl +$tmp/pmods/chacharng.so: a deleted copy .*restart it$" "$tmp/$last.out" &&
            grep -q "^1 process(es) still run an old chacharng" "$tmp/$last.out"'
    # a process started before enable, with libcrypto and no chacharng:
    # told to restart, by its start time and the file's change time
    last=processes-enabled
    OPENSSL_MODULES=$tmp/pmods ctl "$last.enable" --config "$cnf" enable
    OPENSSL_MODULES=$tmp/pmods ctl "$last" --config "$cnf" status --processes
    expect "status --processes after enable: a process started before it is told to restart" \
        eval 'grep -Eq "^  $without +openssl +started before $cnf last changed: restart it" "$tmp/$last.out"'
    # a process started while enabled goes on drawing from chacharng
    # after disable: told so, and to restart
    mkfifo "$tmp/hold-enabled"
    OPENSSL_CONF=$cnf OPENSSL_MODULES=$tmp/pmods $OPENSSL dgst <"$tmp/hold-enabled" >/dev/null 2>&1 &
    enabled=$!
    exec 6>"$tmp/hold-enabled"
    if wait_mapped "$enabled"; then
        OPENSSL_MODULES=$tmp/pmods ctl "$last.disable" --config "$cnf" disable
        last=processes-disabled
        OPENSSL_MODULES=$tmp/pmods ctl "$last" --config "$cnf" status --processes
        expect "status --processes after disable: a process started while enabled still has chacharng: restart it" \
            eval 'grep -Eq "^  $enabled +openssl +$tmp/pmods/chacharng.so: .*no longer loads it.: restart it" "$tmp/$last.out"'
        last=processes-only
        OPENSSL_MODULES=$tmp/pmods ctl "$last" --config "$cnf" status --processes-only
        expect "status --processes-only: the process list alone" \
            eval '[ "$(head -n 1 "$tmp/$last.out")" = "processes with chacharng mapped:" ] &&
                grep -Eq "^  $enabled +openssl" "$tmp/$last.out" && ! grep -q "^RAND_bytes" "$tmp/$last.out"'
    else
        not_ok "status --processes: a process under the enabled file never mapped the module"
        skip "status --processes-only: no process to look at"
    fi
    exec 6>&-
    wait "$enabled" 2>/dev/null
    # processes whose maps cannot be read are listed as such, not left out
    if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
        mkdir -m 1777 "$tmp/unreadable"
        chmod 0755 "$tmp"
        cp "$cnf" "$tmp/unreadable/openssl.cnf"
        chmod 0644 "$tmp/unreadable/openssl.cnf"
        last=processes-unreadable
        copy_for_other_user "$tmp/unreadable"
        setpriv --reuid=65534 --regid=65534 --clear-groups \
            env TMPDIR="$tmp/unreadable" OPENSSL_MODULES="$tmp/pmods" CHACHARNG_CTL_LIB="$tmp/unreadable/lib" \
            CHACHARNG_PROBE="$tmp/unreadable/lib/chacharng-probe" sh "$tmp/unreadable/lib/chacharngctl" \
            --config "$tmp/unreadable/openssl.cnf" status --processes >"$tmp/$last.out" 2>&1
        expect "status --processes as another user: a process it cannot read is listed as such" \
            eval 'sed -n "/^processes whose maps cannot be read/,\$p" "$tmp/$last.out" | grep -Eq "^  $with +openssl$"'
    else
        skip "status --processes, unreadable maps: need root and setpriv"
    fi
else
    not_ok "status --processes: openssl dgst -provider chacharng never mapped the module"
    for _ in 1 2 3 4 5 6; do
        skip "status --processes: no process to look at"
    done
fi
exec 7>&- 8>&-
kill "$with" "$without" 2>/dev/null
wait "$with" "$without" 2>/dev/null
last=enable-restart
cp "$orig" "$cnf"
ctl "$last" --config "$cnf" enable
expect "enable says running programs keep their generator until restarted, and that reload may not do" \
    eval 'grep -q "until they are restarted" "$tmp/$last.out" && grep -q "reload is not enough" "$tmp/$last.out"'
ctl "$last" --config "$cnf" disable
expect "disable says it too" grep -q "until they are restarted" "$tmp/$last.out"

# ------------------------------------------------------------------------
# as root: a full file system, and the system file
# ------------------------------------------------------------------------
# inns SCRIPT ARG...: bash -c SCRIPT ARG... in a mount namespace of its own
inns() {
    unshare -m --propagation private bash -c "$@"
}
if [ "$(id -u)" = 0 ] && inns 'mount -t tmpfs none "$1"' sh "$tmp" 2>/dev/null; then
    can_mount=1
else
    can_mount=
fi

if [ -n "$can_mount" ]; then
    # The file's directory full: enable and disable fail, naming the
    # write and the file; then TMPDIR full.  Nothing changed.
    mkdir -p "$tmp/full" "$tmp/fulltmp"
    export ctl tmp orig
    inns '
        mount -t tmpfs -o size=256k none "$tmp/full" || exit 1
        cp "$orig" "$tmp/full/openssl.cnf"
        sh "$ctl" --config "$tmp/full/openssl.cnf" enable >/dev/null 2>&1
        cp "$tmp/full/openssl.cnf" "$tmp/full.enabled"
        dd if=/dev/zero of="$tmp/full/fill" bs=1k 2>/dev/null
        sh "$ctl" --config "$tmp/full/openssl.cnf" disable >"$tmp/full-disable.out" 2>&1
        echo $? >"$tmp/full-disable.rc"
        cmp -s "$tmp/full/openssl.cnf" "$tmp/full.enabled"; echo $? >"$tmp/full-disable.cmp"
        rm -f "$tmp/full/fill"
        sh "$ctl" --config "$tmp/full/openssl.cnf" disable >/dev/null 2>&1
        rm -f "$tmp/full/openssl.cnf.chacharngctl.bak"
        dd if=/dev/zero of="$tmp/full/fill" bs=1k 2>/dev/null
        sh "$ctl" --config "$tmp/full/openssl.cnf" enable >"$tmp/full-enable.out" 2>&1
        echo $? >"$tmp/full-enable.rc"
        cmp -s "$tmp/full/openssl.cnf" "$orig"; echo $? >"$tmp/full-enable.cmp"
        ls -A "$tmp/full" >"$tmp/full-enable.ls"
        rm -f "$tmp/full/fill"
        mount -t tmpfs -o size=8k none "$tmp/fulltmp" || exit 1
        dd if=/dev/zero of="$tmp/fulltmp/fill" bs=1k 2>/dev/null
        TMPDIR=$tmp/fulltmp sh "$ctl" --config "$tmp/full/openssl.cnf" enable >"$tmp/full-tmpdir.out" 2>&1
        echo $? >"$tmp/full-tmpdir.rc"
        cmp -s "$tmp/full/openssl.cnf" "$orig"; echo $? >"$tmp/full-tmpdir.cmp"
    '
    for step in disable enable tmpdir; do
        last=full-$step
        expect "full file system ($step): refused, naming the file, the write and the reason" \
            eval '[ "$(cat "$tmp/$last.rc")" = 1 ] && grep -q "$tmp/full/openssl.cnf" "$tmp/$last.out" &&
                grep -q "cannot write" "$tmp/$last.out" && grep -q "No space left on device" "$tmp/$last.out" &&
                ! grep -q "cannot read" "$tmp/$last.out"'
        expect "full file system ($step): file unchanged" [ "$(cat "$tmp/$last.cmp")" = 0 ]
    done
    expect "full file system: no scratch file left beside the file" \
        eval '[ "$(cat "$tmp/full-enable.ls")" = "$(printf "fill\nopenssl.cnf")" ]'

    # a file that cannot be replaced (bind-mounted, as in a container: a
    # rename onto it fails): disable fails with the file unchanged, and the
    # backup is still the file from before enable
    cp "$orig" "$tmp/bind.cnf"
    sh "$ctl" --config "$tmp/bind.cnf" enable >/dev/null 2>&1
    cp "$tmp/bind.cnf" "$tmp/bind.enabled"
    # shellcheck disable=SC2016 # for the namespace's shell
    inns 'mount --bind "$1" "$1" || exit 99
        exec sh "$2" --config "$1" disable' sh "$tmp/bind.cnf" "$ctl" >"$tmp/bind-disable.out" 2>&1
    rc=$?
    last=bind-disable
    expect "a file that cannot be replaced: disable fails, the file unchanged" \
        eval '[ "$rc" = 1 ] && grep -q "cannot replace" "$tmp/$last.out" && cmp -s "$tmp/bind.cnf" "$tmp/bind.enabled"'
    expect "a file that cannot be replaced: the backup is still the file from before enable, no scratch file left" \
        eval 'cmp -s "$tmp/bind.cnf.chacharngctl.bak" "$orig" && [ -z "$(find "$tmp" -maxdepth 1 -name ".chacharngctl.*")" ]'

    # The system file, in a namespace where copies of the system's
    # openssl.cnf directory and module directory stand in for them.
    sysdir=$($OPENSSL version -d | sed 's/^[^"]*"//; s/"$//')
    sysdir=$(dirname "$(readlink -f "$sysdir/openssl.cnf")")
    sysmods=$($OPENSSL version -m | sed 's/^[^"]*"//; s/"$//')
    mkdir -p "$tmp/sys/etc" "$tmp/sys/mods"
    cp -a "$sysdir/." "$tmp/sys/etc/"
    cp -a "$sysmods/." "$tmp/sys/mods/"
    rm -f "$tmp/sys/mods/chacharng.so" "$tmp/sys/etc/openssl.cnf.chacharngctl.bak"
    cp "$tmp/sys/etc/openssl.cnf" "$tmp/sys.orig"
    export sysdir sysmods
    # shellcheck disable=SC2016 # for the namespace's shell
    onsys='mount --bind "$tmp/sys/etc" "$sysdir" && mount --bind "$tmp/sys/mods" "$sysmods" || exit 99'
    # sys NAME [VAR=VALUE...] -- ARG...: chacharngctl ARG... on the
    # stand-in system, in a plain environment with only the given
    # variables added (and CHACHARNG_PROBE: the probe is not installed)
    sys() {
        local name=$1
        local -a envs=()
        shift
        while [ "$1" != -- ]; do
            envs+=("$1")
            shift
        done
        shift
        inns "$onsys"'
            exec "$@"' sh env -i PATH="$PATH" OPENSSL="$OPENSSL" CHACHARNG_PROBE="$CHACHARNG_PROBE" CHACHARNG_CTL_LIB="$CHACHARNG_CTL_LIB" \
            ${envs[@]+"${envs[@]}"} sh "$ctl" "$@" >"$tmp/$name.out" 2>&1
        rc=$?
        last=$name
    }
    # sys_run ARG...: ARG... in a plain environment on the stand-in system
    sys_run() {
        inns "$onsys"'
            exec env -i "$@"' sh "$@"
    }
    sys_rand() {
        sys_run CHACHARNG_DEBUG=1 "$CHACHARNG_PROBE" public 2>&1 | grep -qx 'public CHACHA20-DRBG chacharng'
    }

    sys sys-modules OPENSSL_MODULES="$OPENSSL_MODULES" -- enable --ignore-multiarch
    expect "system file, OPENSSL_MODULES at a build tree, module not installed: refused" \
        eval '[ "$rc" = 1 ] && cmp -s "$tmp/sys/etc/openssl.cnf" "$tmp/sys.orig"'
    expect "system file, OPENSSL_MODULES at a build tree: the message names the variable and the module tried" \
        eval 'grep -q "OPENSSL_MODULES" "$tmp/$last.out" && grep -q "module tried: $sysmods/chacharng.so" "$tmp/$last.out"'
    expect "system file: a plain process still has its RNG" \
        eval 'sys_run "$(command -v "$OPENSSL")" rand -hex 8 >/dev/null 2>&1'

    cp "$abs_top_builddir/.libs/chacharng.so" "$tmp/sys/mods/"
    sys sys-impl CHACHARNG_IMPL=nosuchkernel OPENSSL_MODULES="$tmp/nowhere" -- enable --ignore-multiarch
    expect "system file, module installed, CHACHARNG_IMPL and OPENSSL_MODULES set wrong: enable checks without them" \
        eval '[ "$rc" = 0 ] && ! cmp -s "$tmp/sys/etc/openssl.cnf" "$tmp/sys.orig"'
    expect "system file: enable names the variables it left out of the checks" \
        eval 'grep -q "CHACHARNG_IMPL" "$tmp/$last.out" && grep -q "OPENSSL_MODULES" "$tmp/$last.out"'
    expect "system file: a plain process draws from chacharng" sys_rand
    sys sys-status LD_LIBRARY_PATH="$tmp/nowhere" CHACHARNG_IMPL=nosuchkernel -- status
    expect "system file: status answers for a plain process, naming what it left out" \
        eval '[ "$rc" = 0 ] && grep -q "^RAND_bytes: the DRBG chain, CHACHA20-DRBG @ chacharng$" "$tmp/$last.out" &&
            grep -q "LD_LIBRARY_PATH" "$tmp/$last.out"'
    sys sys-disable OPENSSL_MODULES="$tmp/nowhere" -- disable
    expect "system file: disable, byte for byte" \
        eval '[ "$rc" = 0 ] && cmp -s "$tmp/sys/etc/openssl.cnf" "$tmp/sys.orig"'

    # Debian 13's file (its providers section names [default_sect]) and
    # a relative .include that only the caller's working directory has,
    # which activates the default provider: the system file is read from
    # /, as services start, where libcrypto skips the missing include, so
    # enable still activates the default provider those programs have
    mkdir -p "$tmp/cwd"
    printf '[default_sect]\nactivate = 1\n' >"$tmp/cwd/local.cnf"
    { cat "$stock/trixie.cnf" && printf '.include local.cnf\n'; } >"$tmp/sys/etc/openssl.cnf"
    cp "$tmp/sys/etc/openssl.cnf" "$tmp/sys.cwd"
    cd "$tmp/cwd" || exit 1
    sys sys-cwd -- enable --ignore-multiarch
    cd - >/dev/null || exit 1
    expect "system file, a relative .include in the caller's directory: enable" [ "$rc" = 0 ]
    expect "system file, a relative .include in the caller's directory: a plain process keeps the default provider" \
        eval 'sys_run "$(command -v "$OPENSSL")" genpkey -algorithm ed25519 >/dev/null 2>&1 && sys_rand'
    cd "$tmp/cwd" || exit 1
    sys sys-cwd-disable -- disable
    cd - >/dev/null || exit 1
    expect "system file, a relative .include in the caller's directory: disable, byte for byte" \
        eval '[ "$rc" = 0 ] && cmp -s "$tmp/sys/etc/openssl.cnf" "$tmp/sys.cwd"'
else
    for _ in $(seq 20); do
        skip "full file system and the system file: need root and mount namespaces"
    done
fi

echo "1..$points"
[ "$failures" -eq 0 ]
