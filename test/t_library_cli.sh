#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Whole-library checks through the openssl command: with the shipped
# configs, key generation, a self-signed certificate and a TLS 1.3
# handshake on 127.0.0.1 all run on chacharng's randomness.  On OpenSSL
# 3.5+ the random-provider config is checked too, including a config that
# activates nothing but chacharng, so only our random_bytes can serve
# RAND_bytes; before 3.5 those checks are skipped with the reason, and the
# random-provider sample must be refused.  Prints TAP, plan at the end.
#
# Environment (set by `make check`): OPENSSL, OPENSSL_MODULES,
# abs_top_srcdir, abs_top_builddir.

set -u

: "${abs_top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${abs_top_builddir:=$abs_top_srcdir}"
: "${OPENSSL:=openssl}"
: "${OPENSSL_MODULES:=$abs_top_builddir/.libs}"
export OPENSSL_MODULES
unset CHACHARNG_DEBUG CHACHARNG_IMPL

read -r -a ossl_cmd <<<"$OPENSSL"
sample=$abs_top_builddir/openssl.cnf.sample
rp_sample=$abs_top_builddir/openssl-random-provider.cnf.sample

tmp=$(mktemp -d "${TMPDIR:-/tmp}/chacharng-lib.XXXXXX") || {
    echo "Bail out! cannot create a temporary directory"
    exit 1
}
server_pid=
cleanup() {
    # only the server this script started
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

# ------------------------------------------------------------------------
# TAP
# ------------------------------------------------------------------------
# shellcheck source=test/tap.sh
. "$abs_top_srcdir/test/tap.sh"
# run (test/tap.sh) runs openssl, given at most a minute
run_prefix=(timeout 60 "${ossl_cmd[@]}")

succeeded() {
    [ "$rc" -eq 0 ] || { why="expected success"; return 1; }
}

failed() {
    [ "$rc" -ne 0 ] || { why="expected failure"; return 1; }
}

# has TAG out|err REGEX
has() {
    grep -Eq -- "$3" "$tmp/$1.$2" || { why="$1.$2 lacks /$3/"; return 1; }
}

# count TAG REGEX N: stdout has exactly N lines matching REGEX.
count() {
    local n

    n=$(grep -Ec -- "$2" "$tmp/$1.out")
    [ "$n" -eq "$3" ] || { why="$n lines match /$2/, expected $3"; return 1; }
}

# ------------------------------------------------------------------------
# What are we testing?
# ------------------------------------------------------------------------
: >"$tmp/empty.cnf"
run version OPENSSL_CONF="$tmp/empty.cnf" -- version
ver=$(sed -n 's/^OpenSSL \([0-9][0-9]*\)\.\([0-9][0-9]*\).*/\1 \2/p' \
    "$tmp/version.out")
read -r major minor <<<"${ver:-0 0}"
diag "$(cat "$tmp/version.out")" "modules: $OPENSSL_MODULES"
if [ ! -r "$sample" ] || [ ! -r "$rp_sample" ]; then
    echo "Bail out! missing $sample or $rp_sample"
    exit 1
fi
if [ "$major" -gt 3 ] || { [ "$major" -eq 3 ] && [ "$minor" -ge 5 ]; }; then
    has_rp=1
else
    has_rp=
    no_rp="OpenSSL $major.$minor has no random provider (3.5+)"
fi

# ------------------------------------------------------------------------
# The whole-library checks, for one config ($1) labelled $2.
# ------------------------------------------------------------------------

# tls CONFIG LABEL: a TLS 1.3 handshake between s_server and s_client on
# 127.0.0.1 with the certificate made above.  The server runs in -www mode
# (it answers one HTTP request with a page describing the session), so
# data goes both ways without holding its stdin open.  Retries on another
# port if the one picked is taken.
tls() {
    local cnf=$1 label=$2 port attempt

    for attempt in 1 2 3 4 5; do
        port=$((20000 + (RANDOM * 7 + attempt * 131) % 40000))
        OPENSSL_CONF=$cnf timeout 60 "${ossl_cmd[@]}" s_server \
            -accept "127.0.0.1:$port" -naccept 1 -tls1_3 -www \
            -cert "$tmp/$label-cert.pem" -key "$tmp/$label-ec.pem" \
            >"$tmp/$label-server.out" 2>"$tmp/$label-server.err" </dev/null &
        server_pid=$!
        # wait (at most 10 s) until it listens, or gives up
        for _ in $(seq 100); do
            grep -q '^ACCEPT' "$tmp/$label-server.out" && break
            kill -0 "$server_pid" 2>/dev/null || break
            sleep 0.1
        done
        grep -q '^ACCEPT' "$tmp/$label-server.out" && break
        kill "$server_pid" 2>/dev/null
        wait "$server_pid" 2>/dev/null
        server_pid=
        # a port in use is the only reason to try again
        grep -qi 'in use' "$tmp/$label-server.err" || break
    done
    last=$label-tls
    if [ -z "$server_pid" ]; then
        cp "$tmp/$label-server.out" "$tmp/$label-tls.out"
        cp "$tmp/$label-server.err" "$tmp/$label-tls.err"
        rc=1
        why="s_server did not start listening"
        return 1
    fi
    printf 'GET / HTTP/1.0\r\n\r\n' |
        OPENSSL_CONF=$cnf timeout 30 "${ossl_cmd[@]}" s_client \
            -connect "127.0.0.1:$port" -tls1_3 -brief -ign_eof \
            -CAfile "$tmp/$label-cert.pem" -verify_return_error \
            >"$tmp/$label-tls.out" 2>"$tmp/$label-tls.err"
    rc=$?
    # the server exits after its one connection; never wait for long
    for _ in $(seq 50); do
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
    done
    kill "$server_pid" 2>/dev/null
    wait "$server_pid" 2>/dev/null
    server_pid=
    succeeded &&
        has "$label-tls" err "^Protocol version: TLSv1.3" &&
        has "$label-tls" err "^Verification: OK" &&
        has "$label-tls" out "^HTTP/1.0 200 ok" &&
        has "$label-tls" out "^New, TLSv1.3, Cipher is "
}

whole_library() {
    local cnf=$1 label=$2

    run "$label-inst" OPENSSL_CONF="$cnf" -- list -random-instances
    succeeded && count "$label-inst" '^[ \t]+CHACHA20-DRBG @ chacharng$' 3 &&
        has "$label-inst" out '^primary:$' &&
        has "$label-inst" out '^public:$' &&
        has "$label-inst" out '^private:$'
    verdict "$label: list -random-instances shows CHACHA20-DRBG @ chacharng three times (primary, public, private)"

    run "$label-rand1" OPENSSL_CONF="$cnf" -- rand -hex 32
    cp "$tmp/$label-rand1.out" "$tmp/$label-rand1.keep"
    run "$label-rand2" OPENSSL_CONF="$cnf" -- rand -hex 32
    succeeded && grep -Eqx '[0-9a-f]{64}' "$tmp/$label-rand2.out" &&
        grep -Eqx '[0-9a-f]{64}' "$tmp/$label-rand1.keep" &&
        ! cmp -s "$tmp/$label-rand1.keep" "$tmp/$label-rand2.out"
    verdict "$label: openssl rand -hex 32 twice: 64 hex digits, different each time"

    run "$label-ec" OPENSSL_CONF="$cnf" -- genpkey -algorithm EC \
        -pkeyopt ec_paramgen_curve:P-256 -out "$tmp/$label-ec.pem"
    succeeded && run "$label-ecchk" OPENSSL_CONF="$cnf" -- pkey -in "$tmp/$label-ec.pem" \
        -noout -check && succeeded && has "$label-ecchk" out "valid"
    verdict "$label: genpkey EC P-256, and pkey -check finds the key valid"

    run "$label-rsa" OPENSSL_CONF="$cnf" -- genpkey -algorithm RSA \
        -pkeyopt rsa_keygen_bits:2048 -out "$tmp/$label-rsa.pem"
    succeeded && run "$label-rsachk" OPENSSL_CONF="$cnf" -- pkey -in "$tmp/$label-rsa.pem" \
        -noout -check && succeeded && has "$label-rsachk" out "valid"
    verdict "$label: genpkey RSA 2048, and pkey -check finds the key valid"

    run "$label-ed" OPENSSL_CONF="$cnf" -- genpkey -algorithm ED25519 \
        -out "$tmp/$label-ed.pem"
    succeeded && run "$label-edtxt" OPENSSL_CONF="$cnf" -- pkey -in "$tmp/$label-ed.pem" \
        -noout -text && succeeded && has "$label-edtxt" out "ED25519"
    verdict "$label: genpkey ED25519"

    run "$label-req" OPENSSL_CONF="$cnf" -- req -x509 -new -key "$tmp/$label-ec.pem" \
        -subj "/CN=127.0.0.1" -days 2 -out "$tmp/$label-cert.pem"
    succeeded && run "$label-verify" OPENSSL_CONF="$cnf" -- verify \
        -CAfile "$tmp/$label-cert.pem" "$tmp/$label-cert.pem" &&
        succeeded && has "$label-verify" out ": OK$"
    verdict "$label: req -x509 makes a self-signed certificate that verifies"

    tls "$cnf" "$label"
    verdict "$label: TLS 1.3 handshake between s_server and s_client on 127.0.0.1, the server's page comes back"
}

whole_library "$sample" "openssl.cnf.sample"

# ------------------------------------------------------------------------
# The random provider (3.5+).
# ------------------------------------------------------------------------

# The sample minus its random_provider line, and configs that activate
# chacharng alone, with and without random_provider.
only_head='config_diagnostics = 1
openssl_conf = openssl_init
[openssl_init]
random = random_sect
providers = provider_sect
[provider_sect]
chacharng = chacharng_sect
[chacharng_sect]
activate = 1
[random_sect]'
printf '%s\nrandom_provider = chacharng\n' "$only_head" >"$tmp/only.cnf"
printf '%s\n' "$only_head" >"$tmp/none.cnf"
# the sample with its two [openssl_init] lines the other way round
awk '/^random = chacharng_random_sect$/ { held = $0; next }
     { print }
     /^providers = provider_sect$/ && held != "" { print held; held = "" }' \
    "$rp_sample" >"$tmp/swapped.cnf"

if [ -z "$has_rp" ]; then
    # 3.0-3.4 know no random_provider key: the sample must be refused
    # loudly (config_diagnostics), which is why it is a separate file.
    run rp-old OPENSSL_CONF="$rp_sample" -- rand -hex 16
    failed && has rp-old err "random_provider|unknown name"
    verdict "openssl-random-provider.cnf.sample is refused by OpenSSL $major.$minor (unknown random_provider key)"
    for what in "list -random-instances" "rand" "genpkey EC" "genpkey RSA" \
        "genpkey ED25519" "req -x509" "TLS 1.3" \
        "random_bytes path in use" "only random_provider: rand works" \
        "only random_provider: chacharng failing to load fails rand" \
        "no random_provider: no RAND at all"; do
        skip "random provider sample: $what: $no_rp"
    done
else
    skip "refusal of the random-provider sample: OpenSSL $major.$minor knows random_provider"
    whole_library "$rp_sample" "random-provider"

    run rp-dbg OPENSSL_CONF="$rp_sample" CHACHARNG_DEBUG=1 -- rand -hex 16
    succeeded && has rp-dbg err "^chacharng: random provider path in use$"
    verdict "random-provider sample: rand goes through chacharng's random_bytes (debug line)"

    run only OPENSSL_CONF="$tmp/only.cnf" CHACHARNG_DEBUG=1 -- rand -hex 16
    succeeded && grep -Eqx '[0-9a-f]{32}' "$tmp/only.out" &&
        has only err "^chacharng: random provider path in use$"
    verdict "only chacharng active, only random_provider set (no DRBG exists): rand works"

    run only-bogus OPENSSL_CONF="$tmp/only.cnf" CHACHARNG_IMPL=nosuch-kernel -- rand -hex 16
    failed && [ ! -s "$tmp/only-bogus.out" ]
    verdict "the same config with chacharng failing to load: rand fails, prints nothing"

    run none OPENSSL_CONF="$tmp/none.cnf" -- rand -hex 16
    failed && [ ! -s "$tmp/none.out" ]
    verdict "the same config without random_provider: rand fails (the bytes above were ours)"

    # The order of [openssl_init] (see the sample): report what this
    # version does with random after providers, without judging it.
    run swapped OPENSSL_CONF="$tmp/swapped.cnf" -- rand -hex 16
    if [ "$rc" -eq 0 ]; then
        diag "random after providers: rand works on OpenSSL $major.$minor"
    else
        diag "random after providers: rand fails on OpenSSL $major.$minor:"
        show_file "$tmp/swapped.err"
    fi
fi

# ------------------------------------------------------------------------
# The samples keep the system configuration (they include the openssl.cnf
# of `openssl version -d`): req -x509 gives the same extensions as with
# the system file, a CA made that way verifies a leaf it signed, and the
# part meant for merging, appended to a copy of the system file, works
# there without including itself.
# ------------------------------------------------------------------------
run osdir OPENSSL_CONF="$tmp/empty.cnf" -- version -d
sysdir=$(sed -n 's/^OPENSSLDIR: "\(.*\)"$/\1/p' "$tmp/osdir.out")
syscnf=$sysdir/openssl.cnf

# extensions TAG: the X509v3 extension names of $tmp/TAG.pem, one a line.
extensions() {
    env OPENSSL_CONF="$tmp/empty.cnf" "${ossl_cmd[@]}" x509 -in "$tmp/$1.pem" \
        -noout -text 2>/dev/null |
        sed -n 's/^ *\(X509v3 [A-Za-z ]*\):.*/\1/p' | sort
}

# keeps_system CONFIG LABEL
keeps_system() {
    local cnf=$1 label=$2 want got list

    grep -qxF ".include $syscnf" "$cnf"
    verdict "$label: includes $syscnf, the file openssl version -d names"

    run "$label-sysca" OPENSSL_CONF="$syscnf" -- req -x509 -new -key "$tmp/ks-ca.pem" \
        -subj "/CN=chacharng test CA" -days 2 -out "$tmp/$label-sysca.pem"
    want=$(extensions "$label-sysca")
    list=$(echo "$want" | tr '\n' ',' | sed 's/,$//; s/,/, /g')
    run "$label-ca" OPENSSL_CONF="$cnf" -- req -x509 -new -key "$tmp/ks-ca.pem" \
        -subj "/CN=chacharng test CA" -days 2 -out "$tmp/$label-ca.pem"
    got=$(extensions "$label-ca")
    if ! succeeded || [ -z "$got" ] || [ "$got" != "$want" ]; then
        why="extensions with the sample: ${got:-none}; with the system file: ${want:-none}"
        false
    fi
    verdict "$label: req -x509 gives the system file's extensions (${list:-none})"

    run "$label-csr" OPENSSL_CONF="$cnf" -- req -new -key "$tmp/ks-leaf.pem" \
        -subj "/CN=leaf.example" -out "$tmp/$label-leaf.csr" &&
        run "$label-sign" OPENSSL_CONF="$cnf" -- x509 -req -in "$tmp/$label-leaf.csr" \
            -CA "$tmp/$label-ca.pem" -CAkey "$tmp/ks-ca.pem" -days 1 \
            -extfile "$tmp/leaf-ext.cnf" -out "$tmp/$label-leaf.pem" &&
        run "$label-leafv" OPENSSL_CONF="$cnf" -- verify -CAfile "$tmp/$label-ca.pem" \
            "$tmp/$label-leaf.pem"
    succeeded && has "$label-leafv" out ": OK$"
    verdict "$label: a leaf signed by that CA verifies"

    # the merge: the system file, then the sample from its marker on
    cp "$syscnf" "$tmp/$label-merged.cnf" &&
        sed -n '/^# ---- chacharng: merge from here/,$p' "$cnf" \
            >>"$tmp/$label-merged.cnf"
    run "$label-minst" OPENSSL_CONF="$tmp/$label-merged.cnf" -- list -random-instances
    succeeded && count "$label-minst" '^[ \t]+CHACHA20-DRBG @ chacharng$' 3 &&
        ! grep -q "^\.include.*$(basename "$syscnf")" "$tmp/$label-merged.cnf"
    verdict "$label: its merge part appended to the system file: CHACHA20-DRBG three times, no include of itself"

    run "$label-mca" OPENSSL_CONF="$tmp/$label-merged.cnf" -- req -x509 -new \
        -key "$tmp/ks-ca.pem" -subj "/CN=chacharng test CA" -days 2 \
        -out "$tmp/$label-mca.pem"
    got=$(extensions "$label-mca")
    succeeded && [ "$got" = "$want" ]
    verdict "$label: the merged system file keeps its req -x509 extensions"
}

if [ -z "$sysdir" ] || [ ! -r "$syscnf" ]; then
    for what in include extensions leaf merge merge-ext; do
        skip "samples keep the system config ($what): no $syscnf here"
    done
else
    diag "system configuration: $syscnf"
    # a leaf as a server's: v3, not a CA, with a name
    printf '%s\n' 'basicConstraints = CA:FALSE' \
        'subjectAltName = DNS:leaf.example' >"$tmp/leaf-ext.cnf"
    run ks-ca OPENSSL_CONF="$tmp/empty.cnf" -- genpkey -algorithm EC \
        -pkeyopt ec_paramgen_curve:P-256 -out "$tmp/ks-ca.pem"
    run ks-leaf OPENSSL_CONF="$tmp/empty.cnf" -- genpkey -algorithm EC \
        -pkeyopt ec_paramgen_curve:P-256 -out "$tmp/ks-leaf.pem"
    keeps_system "$sample" "openssl.cnf.sample"
    if [ -n "$has_rp" ]; then
        keeps_system "$rp_sample" "random-provider sample"
        run rp-mdbg OPENSSL_CONF="$tmp/random-provider sample-merged.cnf" \
            CHACHARNG_DEBUG=1 -- rand -hex 16
        succeeded && has rp-mdbg err "^chacharng: random provider path in use$"
        verdict "random-provider merge part in the system file: random before providers holds, rand goes through random_bytes"
    else
        for what in include extensions leaf merge merge-ext merge-rp; do
            skip "random-provider sample keeps the system config ($what): $no_rp"
        done
    fi
fi

echo "1..$points"
[ "$failures" -eq 0 ]
