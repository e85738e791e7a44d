# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# shellcheck disable=SC2154 # the variables of chacharngctl, which sources this
#
# chacharngctl: what a configuration does, tried in child processes
# (sourced by chacharngctl).

# ------------------------------------------------------------------------
# What a configuration does, tried in a child process
# ------------------------------------------------------------------------

# Names of the active providers under config $1, one per line.
active_providers() {
    child OPENSSL_CONF="$1" "$OPENSSL" list -providers 2>/dev/null |
        awk '/^  [^ ]/ { name = $1 } /^    status: active/ { print name }'
}

# The module file libcrypto tries for chacharng under config $1.
module_path() {
    m=$(from_view "$(view "$1")" V openssl_conf.providers.chacharng.module)
    if [ -n "$m" ]; then
        printf '%s\n' "$m"
    elif [ "$clean" = 0 ] && [ -n "${OPENSSL_MODULES:-}" ]; then
        printf '%s/chacharng.so\n' "$OPENSSL_MODULES"
    else
        printf '%s/chacharng.so\n' "$(modules_dir)"
    fi
}

# Why chacharng does not load under config $1: prints the module path
# tried and the reason, as libcrypto's loader gives it.
diagnose_module() {
    path=$(module_path "$1")
    echo "  module tried: $path"
    if [ ! -e "$path" ]; then
        echo "  reason: no such file"
        return
    fi
    err=$(child OPENSSL_CONF=/dev/null "$OPENSSL" list -providers \
        -provider "$path" 2>&1 >/dev/null)
    if [ -z "$err" ]; then
        echo "  reason: the module loads alone, so its settings in $target make its"
        if [ "$clean" = 1 ]; then
            echo "  initialisation fail (an impl key?)"
        else
            echo "  initialisation fail (an impl key? CHACHARNG_IMPL in the environment?)"
        fi
        return
    fi
    # PID:error:CODE:LIBRARY:FUNCTION:REASON:FILE:LINE:DATA -> the first
    # error's data (the dlopen message, chacharng's own text) or reason
    printf '%s\n' "$err" | awk -F: '$2 == "error" {
        data = $9; for (i = 10; i <= NF; i++) data = data ":" $i
        sub(/^filename\([^)]*\): /, "", data)
        print "  reason: " (data != "" ? data : $6); exit }'
}

# check_config CANDIDATE RP BEFORE: prints nothing and succeeds when,
# under CANDIDATE, RAND_bytes and RAND_priv_bytes work and come from
# chacharng (through the random provider if RP=1), and every provider
# in BEFORE (a list of names) is still active; else says why and fails.
check_config() {
    cand=$1 rp=$2 before=$3 out=$work/check.out err=$work/check.err
    if ! child OPENSSL_CONF="$cand" "$OPENSSL" list -providers >"$out" 2>"$err"; then
        echo "OpenSSL rejects the new file:"
        sed 's/^/  /' "$err"
        return 1
    fi
    now=$(active_providers "$cand")
    if ! printf '%s\n' "$now" | grep -qx chacharng; then
        echo "chacharng does not load under the new file:"
        diagnose_module "$cand"
        return 1
    fi
    for p in $before; do
        if ! printf '%s\n' "$now" | grep -qx "$p"; then
            echo "the $p provider, active now, would no longer be active"
            return 1
        fi
    done
    [ -x "$PROBE" ] || { echo "cannot run $PROBE (set CHACHARNG_PROBE)"; return 1; }
    for which in public private; do
        fn=RAND_bytes
        [ "$which" = private ] && fn=RAND_priv_bytes
        if ! child CHACHARNG_DEBUG=1 OPENSSL_CONF="$cand" "$PROBE" "$which" \
            >"$out" 2>"$err"; then
            echo "$fn fails under the new file:"
            grep -v '^chacharng: ' "$err" | sed 's/^/  /'
            return 1
        fi
        for role in primary "$which"; do
            got=$(awk -v r="$role" '$1 == r { print $2 " @ " $3 }' "$out")
            if [ "$got" != "CHACHA20-DRBG @ chacharng" ]; then
                echo "$fn would not come from chacharng: the $role DRBG would be ${got:-none}"
                return 1
            fi
        done
        if [ "$rp" = 1 ] && ! grep -q 'random provider path in use' "$err"; then
            echo "$fn would not go through chacharng as the random provider"
            return 1
        fi
    done
    return 0
}

# Every libcrypto of another architecture reads the same file: it needs
# its own chacharng module, or its programs lose their RNG.  Prints the
# multiarch directories lacking one.
foreign_without_module() {
    own=$(readlink -f "$(modules_dir)")
    seen=
    for lib in /usr/lib/*/libcrypto.so.3 /lib/*/libcrypto.so.3; do
        [ -f "$lib" ] || continue
        d=$(dirname "$(readlink -f "$lib")")
        case " $seen " in *" $d "*) continue ;; esac
        seen="$seen $d"
        [ "$(readlink -f "$d/ossl-modules" 2>/dev/null)" = "$own" ] && continue
        [ -e "$d/ossl-modules/chacharng.so" ] || printf '%s\n' "$d"
    done
}

# same_reading BEFORE AFTER RP NODE NEED [REV]: libcrypto's readings
# (view) of the file without and with chacharng's lines.  Succeeds when
# they differ only by what those lines set: chacharng's provider and
# random sections (RP=1: the random provider too), and, with NODE=1, a
# nodejs_conf of its own whose sections are those of openssl_conf.  With
# NEED=1, those settings must also be reached.  Else prints what differs
# and fails; REV=1 (disable: AFTER is the file as it is) names each
# difference as seen going from AFTER to BEFORE.
same_reading() {
    printf '%s\n' "$1" >"$work/view.before"
    printf '%s\n' "$2" >"$work/view.after"
    awk -v rp="$3" -v node="$4" -v need="$5" -v rev="${6:-0}" '
        function ours(l) {
            sub(/ nodejs_conf/, " openssl_conf", l)
            return l == "S openssl_conf chacharng_init" ||
                l ~ /^S openssl_conf\.(random|providers) [^ ]+$/ ||
                l == "S openssl_conf.providers.chacharng chacharng_sect" ||
                l == "V openssl_conf.providers.chacharng.activate = 1" ||
                l == "S openssl_conf.providers.default chacharng_default_sect" ||
                l ~ /^V openssl_conf\.providers\.default\.activate = / ||
                l ~ /^V openssl_conf\.random\.(random|properties|random_provider) = /
        }
        function mirrored(l) {
            if (node && l == "S nodejs_conf chacharng_nodejs_init") return 1
            if (l !~ /^[SV] nodejs_conf\./) return 0
            sub(/ nodejs_conf/, " openssl_conf", l)
            return (l in after)
        }
        function say(what, l) {
            sub(/^[SVM] /, "", l)
            printf "  %s: %s\n", what, l
            bad = 1
        }
        FNR == NR { if ($0 != "") before[$0] = 1; next }
        $0 != "" { after[$0] = 1 }
        END {
            for (l in before)
                if (!(l in after) && !ours(l))
                    say(rev ? "newly read" : "no longer read", l)
            for (l in after)
                if (!(l in before) && !ours(l) && !mirrored(l))
                    say(rev ? "no longer read" : "newly read", l)
            if (need) {
                want["V openssl_conf.providers.chacharng.activate = 1"]
                want["V openssl_conf.random.random = CHACHA20-DRBG"]
                want["V openssl_conf.random.properties = provider=chacharng"]
                if (rp) want["V openssl_conf.random.random_provider = chacharng"]
                for (l in want) {
                    if (!(l in after)) say("not reached", l)
                    m = l; sub(/ openssl_conf/, " nodejs_conf", m)
                    if (node && !(m in after)) say("not reached", m)
                }
            }
            exit bad
        }' "$work/view.before" "$work/view.after"
}
