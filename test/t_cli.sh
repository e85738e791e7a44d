#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Command-line tests: drive the `openssl` program against the freshly built
# provider and check what it prints (listings, random bytes, error messages),
# with the shipped openssl.cnf.sample, copies of it, and the broken configs
# in test/cli/.  Prints TAP with the plan at the end; exits 1 if any point
# failed.
#
# Environment (set by `make check`): OPENSSL (the openssl command, may carry
# a wrapper such as an emulator), OPENSSL_MODULES (the directory holding
# chacharng.so), abs_top_srcdir, abs_top_builddir.  CHACHARNG_IMPL, if set,
# pins the kernel for every check that does not set it on purpose; if it is
# unset, the per-kernel checks run once for each kernel the build and CPU
# have.

set -u

: "${abs_top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${abs_top_builddir:=$abs_top_srcdir}"
: "${OPENSSL:=openssl}"
# Load the module from the build tree, also where a config activates it.
: "${OPENSSL_MODULES:=$abs_top_builddir/.libs}"
export OPENSSL_MODULES
# The script decides where the debug line is wanted.
unset CHACHARNG_DEBUG

# OPENSSL may be "emulator path/to/openssl": split it into words once.
read -r -a ossl_cmd <<<"$OPENSSL"
moddir=$OPENSSL_MODULES
sample=$abs_top_builddir/openssl.cnf.sample
fixtures=$abs_top_srcdir/test/cli
forced=${CHACHARNG_IMPL-}
all_kernels="generic sse2 ssse3 avx2 avx512 neon vsx"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/chacharng-cli.XXXXXX") || {
    echo "Bail out! cannot create a temporary directory"
    exit 1
}
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# An empty file as OPENSSL_CONF: no system openssl.cnf, no providers but
# the ones the command line names.
empty=$tmp/empty.cnf
: >"$empty"

# ------------------------------------------------------------------------
# TAP helpers
# ------------------------------------------------------------------------
# shellcheck source=test/tap.sh
. "$abs_top_srcdir/test/tap.sh"

# ------------------------------------------------------------------------
# Running openssl
# ------------------------------------------------------------------------
# run (test/tap.sh) runs openssl
run_prefix=("${ossl_cmd[@]}")

# Predicates on the last run; each sets $why when it says no.
status_ok() {
    [ "$rc" -eq 0 ] || { why="expected success"; return 1; }
}

status_fail() {
    [ "$rc" -ne 0 ] || { why="expected a non-zero exit status"; return 1; }
}

# has TAG FILE-SUFFIX EXTENDED-REGEX
has() {
    grep -Eq -- "$3" "$tmp/$1.$2" || {
        why="$1.$2 lacks /$3/"
        return 1
    }
}

lacks() {
    if grep -Eq -- "$3" "$tmp/$1.$2"; then
        why="$1.$2 has /$3/"
        return 1
    fi
}

empty_out() {
    [ ! -s "$tmp/$1.out" ] || { why="expected no output on stdout"; return 1; }
}

# size TAG N: stdout is exactly N bytes.
size_is() {
    local n

    n=$(wc -c <"$tmp/$1.out")
    n=$((n + 0))
    [ "$n" -eq "$2" ] || { why="got $n bytes, expected $2"; return 1; }
}

# hex_line TAG NCHARS: stdout is one line of NCHARS lowercase hex digits.
hex_line() {
    if [ "$(wc -l <"$tmp/$1.out")" -ne 1 ] ||
        ! grep -Eqx "[0-9a-f]{$2}" "$tmp/$1.out"; then
        why="expected one line of $2 hex digits"
        return 1
    fi
}

# instances TAG [KERNEL]: `list -random-instances` shows CHACHA20-DRBG @
# chacharng under each of the primary, public and private headings (and
# impl 'KERNEL' there, if given).
instances() {
    local bad

    bad=$(awk -v impl="${2-}" '
        /^[a-z]+:$/ { sect = substr($0, 1, length($0) - 1); next }
        /^[ \t]+CHACHA20-DRBG @ chacharng$/ { alg[sect]++ }
        impl != "" && $0 ~ "^[ \t]+impl: '\''" impl "'\''$" { im[sect]++ }
        END {
            n = split("primary public private", s, " ")
            for (i = 1; i <= n; i++) {
                if (alg[s[i]] != 1)
                    printf "%s: no CHACHA20-DRBG @ chacharng; ", s[i]
                if (impl != "" && im[s[i]] != 1)
                    printf "%s: no impl %s; ", s[i], impl
            }
        }' "$tmp/$1.out")
    [ -z "$bad" ] || { why=$bad; return 1; }
}

# differ FILE1 FILE2: the two outputs are not the same.
differ() {
    if cmp -s "$1" "$2"; then
        why="the same output twice"
        return 1
    fi
}

# debug_kernel TAG KERNEL: stderr has the load-time debug line naming KERNEL.
debug_kernel() {
    has "$1" err "^chacharng: using the $2 ChaCha20 kernel$"
}

# A copy of the sample config with `impl = VALUE` in [chacharng_sect].
config_with_impl() {
    local out=$tmp/impl-$1.cnf

    awk -v impl="$1" '
        { print }
        $0 == "[chacharng_sect]" { print "impl = " impl }' "$sample" >"$out"
    grep -qx "impl = $1" "$out" || return 1
    echo "$out"
}

# ------------------------------------------------------------------------
# 0. What are we testing?
# ------------------------------------------------------------------------
run version OPENSSL_CONF="$empty" -- version
diag "openssl: $(cat "$tmp/version.out" "$tmp/version.err")"
diag "modules: $moddir"

if [ ! -r "$sample" ] || [ ! -d "$fixtures" ]; then
    echo "Bail out! missing $sample or $fixtures"
    exit 1
fi

# If CHACHARNG_IMPL is forced (the kernel matrix) and this CPU or build
# cannot run that kernel, every check below would only repeat that; skip
# the whole script and say why.
if [ -n "$forced" ]; then
    case " $all_kernels " in
    *" $forced "*) ;;
    *)
        echo "Bail out! CHACHARNG_IMPL=$forced is not a kernel name"
        exit 1
        ;;
    esac
    run probe OPENSSL_CONF="$empty" -- \
        list -providers -provider-path "$moddir" -provider chacharng
    if [ "$rc" -ne 0 ] &&
        grep -q "CHACHARNG_IMPL=$forced: this CPU or OS cannot run it" \
            "$tmp/probe.err"; then
        skip "kernel $forced: not supported by this CPU"
        echo "1..$points"
        exit 0
    fi
    if [ "$rc" -ne 0 ] &&
        grep -q "CHACHARNG_IMPL=$forced: no such kernel in this build" \
            "$tmp/probe.err"; then
        skip "kernel $forced: not in this build"
        echo "1..$points"
        exit 0
    fi
fi

# ------------------------------------------------------------------------
# 1. The algorithm is registered, with its parameters.
# ------------------------------------------------------------------------
run gens OPENSSL_CONF="$empty" -- \
    list -random-generators -provider-path "$moddir" -provider chacharng
status_ok && has gens out "^[ \t]+CHACHA20-DRBG @ chacharng$"
verdict "list -random-generators shows CHACHA20-DRBG @ chacharng"

# The gettable and settable blocks of the verbose listing, by name.
params_ok() {
    local got set p

    got=$(awk '/retrievable operation parameters:/ { on = 1; next }
               /operation parameters:/ { on = 0 }
               on { sub(/^[ \t]+/, ""); sub(/:.*/, ""); print }' \
        "$tmp/gensv.out" | sort | tr '\n' ' ')
    set=$(awk '/settable operation parameters:/ { on = 1; next }
               /parameters:/ { on = 0 }
               on { sub(/^[ \t]+/, ""); sub(/:.*/, ""); print }' \
        "$tmp/gensv.out" | sort | tr '\n' ' ')
    for p in impl max_request reseed_requests reseed_time_interval \
        reseed_counter reseed_time state strength max_perslen max_adinlen; do
        case " $got" in
        *" $p "*) ;;
        *) why="gettable params lack $p (got: $got)"; return 1 ;;
        esac
    done
    for p in impl reseed_requests reseed_time_interval; do
        case " $set" in
        *" $p "*) ;;
        *) why="settable params lack $p (got: $set)"; return 1 ;;
        esac
    done
}
run gensv OPENSSL_CONF="$empty" -- list -random-generators -verbose \
    -provider-path "$moddir" -provider chacharng
status_ok && has gensv out "^[ \t]+CHACHA20-DRBG @ chacharng$" && params_ok
verdict "list -random-generators -verbose: gettable impl, reseed_requests, max_request, ...; settable impl, reseed_*"

# ------------------------------------------------------------------------
# 2. The provider itself: name, status, version, build info.
# ------------------------------------------------------------------------
# The version the build was configured with, to compare against.
version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' \
    "$abs_top_builddir/config.h" 2>/dev/null)
if [ -n "$version" ]; then
    version_re=$(printf '%s' "$version" | sed 's/\./\\./g')
else
    version=x.y.z
    version_re='[0-9]+\.[0-9]+(\.[0-9]+)?'
fi

run provs OPENSSL_CONF="$empty" -- \
    list -providers -verbose -provider-path "$moddir" -provider chacharng
status_ok && has provs out "^  chacharng$" &&
    has provs out "^[ \t]+name: chacharng$" &&
    has provs out "^[ \t]+status: active$" &&
    has provs out "^[ \t]+version: $version_re$" &&
    has provs out "^[ \t]+build info: chacharng .*\(kernels:( [a-z0-9]+)* generic\)$"
verdict "list -providers -verbose: chacharng, name chacharng, status active, version $version"

# The kernels compiled in, from the build info line.
build_kernels=$(sed -n 's/.*(kernels: \([a-z0-9 ]*\)).*/\1/p' \
    "$tmp/provs.out" | head -n 1)
diag "kernels in this build: ${build_kernels:-?}"

in_build() {
    case " $build_kernels " in
    *" $1 "*) return 0 ;;
    esac
    return 1
}

# ------------------------------------------------------------------------
# 3. openssl rand through the sample config.
# ------------------------------------------------------------------------
run hex1 OPENSSL_CONF="$sample" -- \
    rand -provider-path "$moddir" -provider chacharng -hex 32
status_ok && hex_line hex1 64
verdict "rand -hex 32 with the sample config prints 64 hex digits"
cp "$tmp/hex1.out" "$tmp/hex1.keep"
run hex2 OPENSSL_CONF="$sample" -- \
    rand -provider-path "$moddir" -provider chacharng -hex 32
status_ok && hex_line hex2 64 && differ "$tmp/hex1.keep" "$tmp/hex2.out"
verdict "a second rand -hex 32 prints different bytes"

run mib OPENSSL_CONF="$sample" -- \
    rand -provider-path "$moddir" -provider chacharng 1048576
status_ok && size_is mib 1048576
verdict "rand 1048576 gives exactly 1048576 bytes"
cp "$tmp/mib.out" "$tmp/mib.keep"

# Above max_request (1 MiB): the request is split; no part may repeat.
not_repeating() {
    if cmp -s -n 1048576 -i 0:1048576 "$tmp/big.out" "$tmp/big.out"; then
        why="the first two MiB are equal"
        return 1
    fi
    if cmp -s -n 1048576 "$tmp/big.out" "$tmp/mib.keep"; then
        why="two processes gave the same first MiB"
        return 1
    fi
}
run big OPENSSL_CONF="$sample" -- \
    rand -provider-path "$moddir" -provider chacharng 5000000
status_ok && size_is big 5000000 && not_repeating
verdict "rand 5000000 (above max_request) gives exactly 5000000 non-repeating bytes"

# ------------------------------------------------------------------------
# 4. The sample config makes chacharng libcrypto's DRBG.
# ------------------------------------------------------------------------
run inst OPENSSL_CONF="$sample" -- list -random-instances
status_ok && instances inst "$forced"
verdict "list -random-instances with the sample config: CHACHA20-DRBG @ chacharng for primary, public, private"

# ------------------------------------------------------------------------
# 5. The bytes of `openssl rand` really come from chacharng: if the
#    provider cannot load, rand must fail rather than fall back.
# ------------------------------------------------------------------------
run bogus OPENSSL_CONF="$sample" CHACHARNG_IMPL=nosuch-kernel -- rand -hex 16
status_fail && empty_out bogus && has bogus err "CHACHA20-DRBG|unable to fetch"
verdict "sample config, CHACHARNG_IMPL=nosuch-kernel: rand fails, prints no bytes"

dbg_kernel_ok() {
    local k

    k=$(sed -n 's/^chacharng: using the \([a-z0-9]*\) ChaCha20 kernel$/\1/p' \
        "$tmp/dbg.err")
    [ -n "$k" ] || { why="no debug line"; return 1; }
    in_build "$k" || { why="kernel $k is not in the build info"; return 1; }
    [ -z "$forced" ] || [ "$k" = "$forced" ] || {
        why="kernel $k, but CHACHARNG_IMPL=$forced"
        return 1
    }
}
run dbg OPENSSL_CONF="$sample" CHACHARNG_DEBUG=1 -- rand -hex 16
status_ok && hex_line dbg 32 && dbg_kernel_ok
verdict "sample config, CHACHARNG_DEBUG=1: rand works and stderr says which kernel"

# ------------------------------------------------------------------------
# 6. Broken configs fail loudly (all carry config_diagnostics = 1).
# ------------------------------------------------------------------------
run badalg OPENSSL_CONF="$fixtures/bad-random-alg.cnf" -- rand -hex 16
status_fail && empty_out badalg && has badalg err "NOSUCH-DRBG"
verdict "config with random = NOSUCH-DRBG: rand fails with an error naming it"

run badprop OPENSSL_CONF="$fixtures/bad-random-props.cnf" -- rand -hex 16
status_fail && empty_out badprop && has badprop err "provider=nosuch"
verdict "config with properties = provider=nosuch: rand fails with an error naming it"

# OpenSSL counts a provider that fails to activate as non-fatal; the
# [random] section asking for chacharng is what must make this fail.
run badmod OPENSSL_CONF="$fixtures/bad-module.cnf" -- rand -hex 16
status_fail && empty_out badmod && has badmod err "CHACHA20-DRBG"
verdict "config with module = a missing file: rand fails, error names CHACHA20-DRBG"
run badmodl OPENSSL_CONF="$fixtures/bad-module.cnf" -- list -providers
lacks badmodl out "^  chacharng$"
verdict "config with module = a missing file: chacharng is not listed as loaded"

run badref OPENSSL_CONF="$fixtures/bad-section-ref.cnf" -- rand -hex 16
status_fail && empty_out badref && has badref err "no_such_random_sect"
verdict "config referring to a missing section: rand fails with an error naming it"

run badkey OPENSSL_CONF="$fixtures/bad-init-key.cnf" -- rand -hex 16
status_fail && empty_out badkey && has badkey err "rnadom"
verdict "config with a typo in [openssl_init]: rand fails with an error naming it"

# A file OpenSSL cannot parse: it cannot read config_diagnostics from it
# and drops the whole file (3.0 to 3.6 do).  Accept that or a loud
# failure; what must not happen is part of it taking effect.
unparsable_ok() {
    if [ "$rc" -ne 0 ]; then
        [ -s "$tmp/syntax.err" ] || { why="failed without a message"; return 1; }
        return 0
    fi
    run syntaxi OPENSSL_CONF="$fixtures/bad-syntax.cnf" -- list -random-instances
    if grep -q "@ chacharng" "$tmp/syntaxi.out"; then
        why="part of the unparsable file was applied"
        return 1
    fi
    diag "note: OpenSSL ignored the unparsable config as a whole"
}
run syntax OPENSSL_CONF="$fixtures/bad-syntax.cnf" -- rand -hex 16
unparsable_ok
verdict "unparsable config: rand fails loudly or OpenSSL ignores the whole file"

# ------------------------------------------------------------------------
# 7. The `impl` key of the provider's config section.
# ------------------------------------------------------------------------
if cfg_generic=$(config_with_impl generic) &&
    cfg_nosuch=$(config_with_impl nosuch); then
    run cfgg -u CHACHARNG_IMPL OPENSSL_CONF="$cfg_generic" \
        CHACHARNG_DEBUG=1 -- list -random-instances
    status_ok && instances cfgg generic && debug_kernel cfgg generic
    verdict "impl = generic in the config: all three instances use generic"

    run cfgn -u CHACHARNG_IMPL OPENSSL_CONF="$cfg_nosuch" -- rand -hex 16
    status_fail && empty_out cfgn && has cfgn err "CHACHA20-DRBG"
    verdict "impl = nosuch in the config: loading fails, rand fails"
    run cfgnl -u CHACHARNG_IMPL OPENSSL_CONF="$cfg_nosuch" -- list -providers
    lacks cfgnl out "^  chacharng$" && has cfgnl out "^  default$"
    verdict "impl = nosuch in the config: chacharng is not listed as loaded, default is"

    # The environment wins both ways: it rescues a bad key and breaks a
    # good one.
    run envw OPENSSL_CONF="$cfg_nosuch" CHACHARNG_IMPL=generic -- \
        list -random-instances
    status_ok && instances envw generic
    verdict "impl = nosuch in the config, CHACHARNG_IMPL=generic: loads, uses generic"
    run envl OPENSSL_CONF="$cfg_generic" CHACHARNG_IMPL=nosuch-kernel -- \
        rand -hex 16
    status_fail && empty_out envl
    verdict "impl = generic in the config, CHACHARNG_IMPL=nosuch-kernel: rand fails"
else
    not_ok "copy the sample config with an impl key (no [chacharng_sect] line?)"
fi

# ------------------------------------------------------------------------
# 8. A bogus CHACHARNG_IMPL makes loading fail, with a message naming it.
# ------------------------------------------------------------------------
run envbad OPENSSL_CONF="$empty" CHACHARNG_IMPL=nosuch-kernel -- \
    list -providers -provider-path "$moddir" -provider chacharng
status_fail && has envbad err "nosuch-kernel" &&
    lacks envbad out "^  chacharng$"
verdict "CHACHARNG_IMPL=nosuch-kernel: list -providers -provider chacharng fails naming the kernel"

# ------------------------------------------------------------------------
# 8b. The literal command (DESIGN.md section 8): no config at all, chacharng
#     the only provider, so it names CHACHA20-DRBG as the library DRBG;
#     in every other case libcrypto or the config keeps its choice.
# ------------------------------------------------------------------------
# instances_are TAG ALG@PROV: primary, public and private all show it.
instances_are() {
    local n

    n=$(grep -Ec "^[ \t]+$2\$" "$tmp/$1.out")
    [ "$n" -eq 3 ] || { why="$2 shown $n times, expected 3"; return 1; }
}

run lit OPENSSL_CONF="$empty" CHACHARNG_DEBUG=1 -- \
    rand -provider chacharng -hex 32
status_ok && hex_line lit 64 &&
    has lit err "^chacharng: CHACHA20-DRBG named as the library DRBG"
verdict "rand -provider chacharng -hex 32, no config, OPENSSL_MODULES: 64 hex digits from CHACHA20-DRBG"

run litpp -u OPENSSL_MODULES OPENSSL_CONF="$empty" -- \
    rand -provider-path "$moddir" -provider chacharng -hex 32
status_ok && hex_line litpp 64
verdict "rand -provider-path DIR -provider chacharng -hex 32 (no OPENSSL_MODULES): 64 hex digits"

run litinst OPENSSL_CONF="$empty" -- list -random-instances -provider chacharng
status_ok && instances litinst "$forced"
verdict "list -random-instances -provider chacharng: CHACHA20-DRBG @ chacharng for primary, public, private"

run litcd OPENSSL_CONF="$empty" -- \
    list -random-instances -provider chacharng -provider default
status_ok && instances_are litcd "CTR-DRBG @ default" && lacks litcd out "@ chacharng"
verdict "-provider chacharng -provider default: the library DRBG stays CTR-DRBG @ default"

run litdc OPENSSL_CONF="$empty" -- \
    list -random-instances -provider default -provider chacharng
status_ok && instances_are litdc "CTR-DRBG @ default" && lacks litdc out "@ chacharng"
verdict "-provider default -provider chacharng: the library DRBG stays CTR-DRBG @ default"

run litdr OPENSSL_CONF="$empty" -- \
    rand -provider chacharng -provider default -hex 16
status_ok && hex_line litdr 32
verdict "rand -provider chacharng -provider default -hex 16 works (CTR-DRBG)"

run litno OPENSSL_CONF="$empty" CHACHARNG_LIBRARY_RNG=no -- \
    rand -provider chacharng -hex 16
status_fail && empty_out litno && has litno err "CTR-DRBG"
verdict "CHACHARNG_LIBRARY_RNG=no: rand -provider chacharng fails asking for CTR-DRBG"

# A config with its own [random] section decides, even with chacharng
# loaded from the command line.
cfg_random=$tmp/random-hash.cnf
printf '%s\n' 'openssl_conf = init' '[init]' 'random = rand_sect' \
    '[rand_sect]' 'random = HASH-DRBG' 'digest = SHA256' >"$cfg_random"
run litcfgr OPENSSL_CONF="$cfg_random" -- rand -provider chacharng -hex 16
status_fail && empty_out litcfgr && has litcfgr err "HASH-DRBG"
verdict "config [random] random = HASH-DRBG, -provider chacharng: rand asks for HASH-DRBG, not chacharng"

# Activated from a config file without a [random] section: the config
# decides, so libcrypto keeps CTR-DRBG (and fails with nothing to supply it).
cfg_only=$tmp/only-chacharng.cnf
printf '%s\n' 'openssl_conf = init' '[init]' 'providers = prov_sect' \
    '[prov_sect]' 'chacharng = cc_sect' '[cc_sect]' 'activate = 1' >"$cfg_only"
run litcfga OPENSSL_CONF="$cfg_only" CHACHARNG_DEBUG=1 -- rand -hex 16
status_fail && empty_out litcfga && has litcfga err "CTR-DRBG" &&
    has litcfga err "library DRBG from the config file: libcrypto's default, CTR-DRBG"
verdict "chacharng activated by a config without [random]: never named, rand asks for CTR-DRBG"

# ------------------------------------------------------------------------
# 9. Each kernel the build has, forced through CHACHARNG_IMPL.
# ------------------------------------------------------------------------
if [ -n "$forced" ]; then
    kernels=$forced
else
    kernels=
    for k in $all_kernels; do
        if in_build "$k"; then
            kernels="$kernels $k"
        else
            diag "kernel $k: not in this build"
        fi
    done
fi

for k in $kernels; do
    run "k-$k-load" OPENSSL_CONF="$empty" CHACHARNG_IMPL="$k" \
        CHACHARNG_DEBUG=1 -- list -providers -provider-path "$moddir" \
        -provider chacharng
    if [ "$rc" -ne 0 ] &&
        grep -q "CHACHARNG_IMPL=$k: this CPU or OS cannot run it" \
            "$tmp/k-$k-load.err"; then
        skip "kernel $k: not supported by this CPU"
        continue
    fi
    status_ok && has "k-$k-load" out "^[ \t]+status: active$" &&
        debug_kernel "k-$k-load" "$k"
    verdict "[$k] CHACHARNG_IMPL=$k: the provider loads with that kernel"

    run "k-$k-inst" OPENSSL_CONF="$sample" CHACHARNG_IMPL="$k" -- \
        list -random-instances
    status_ok && instances "k-$k-inst" "$k"
    verdict "[$k] list -random-instances: primary, public, private use $k"

    run "k-$k-hex" OPENSSL_CONF="$sample" CHACHARNG_IMPL="$k" \
        CHACHARNG_DEBUG=1 -- rand -hex 32
    status_ok && hex_line "k-$k-hex" 64 &&
        debug_kernel "k-$k-hex" "$k"
    verdict "[$k] rand -hex 32 prints 64 hex digits from $k"

    run "k-$k-big" OPENSSL_CONF="$sample" CHACHARNG_IMPL="$k" -- \
        rand 1048577
    status_ok && size_is "k-$k-big" 1048577
    verdict "[$k] rand 1048577 gives exactly 1048577 bytes"

    run "k-$k-lit" OPENSSL_CONF="$empty" CHACHARNG_IMPL="$k" -- \
        list -random-instances -provider chacharng
    status_ok && instances "k-$k-lit" "$k"
    verdict "[$k] list -random-instances -provider chacharng, no config: all three use $k"
done

echo "1..$points"
[ "$failures" -eq 0 ]
