# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# shellcheck disable=SC2154,SC2034 # the variables of chacharngctl, which sources this and reads the f_* ones
#
# chacharngctl: reading and editing openssl.cnf (sourced by chacharngctl).
# It uses the main script's variables and functions (work, target,
# child, die).

# ------------------------------------------------------------------------
# Reading and editing the file
# ------------------------------------------------------------------------
# What the file means is asked of libcrypto (chacharng-probe conf): the
# sections that openssl_conf and nodejs_conf reach, with every value.
# Where lines go, and which lines are chacharngctl's own, is the job of
# the awk program; the lines it adds carry a digest of their text, so a
# line of the administrator's is never taken for one of them.

# view FILE: libcrypto's reading of FILE (chacharng-probe conf), sorted;
# fails with libcrypto's message when it cannot read it.
view() {
    child "$PROBE" conf "$1" >"$work/view.raw" 2>"$work/view.err" || {
        cat "$work/view.err"
        return 1
    }
    LC_ALL=C sort -u "$work/view.raw"
}

# from_view VIEW KIND PATH: the section or value at PATH in VIEW
from_view() {
    printf '%s\n' "$1" | awk -v k="$2" -v p="$3" '
        $1 == k && $2 == p { sub(/^[A-Z] [^ ]* (= )?/, ""); print; exit }'
}

# sign TEXT: the digest an added line carries
sign() {
    printf 'chacharngctl\n%s' "$1" | sha256sum | cut -c1-16
}

# owned_lines FILE: the numbers of the lines chacharngctl added to FILE,
# those whose digest matches their text (or, from an earlier
# chacharngctl, see legacy_lines), on one line
owned_lines() {
    l_own=$(digest_lines "$1")
    if [ -n "$l_own" ]; then
        printf '%s' "$l_own"
    else
        legacy_lines "$1"
    fi
}

# digest_lines FILE: the numbers of the lines whose digest matches their
# text, on one line
digest_lines() {
    cr=$(printf '\r')
    grep -a -n " # chacharngctl:[0-9a-f]\{16\}$cr\{0,1\}\$" "$1" |
        while IFS= read -r l; do
            n=${l%%:*} rest=${l#*:}
            rest=${rest%"$cr"}
            [ "$(sign "${rest% # chacharngctl:*}")" = "${rest##*# chacharngctl:}" ] &&
                printf '%s ' "$n"
        done
}

# legacy_lines FILE: the numbers of the lines an earlier chacharngctl
# added (ending in "# chacharngctl" with no digest), on one line, but
# only when taking exactly those out gives the backup it kept byte for
# byte: the record that they are its own.
legacy_lines() {
    l_cr=$(printf '\r')
    l_bak=$target.chacharngctl.bak
    [ -f "$l_bak" ] || return 0
    l_nums=$(grep -a -n " # chacharngctl$l_cr\{0,1\}\$" "$1" | cut -d: -f1 | tr '\n' ' ')
    [ -n "$l_nums" ] || return 0
    l_nonl=0
    [ -n "$(tail -c 1 "$1")" ] && l_nonl=1
    awk -v job=strip -v owned="$l_nums" -v input_nonl="$l_nonl" -f "$AWK_FILE" "$1" \
        >"$work/legacy" 2>/dev/null &&
        cmp -s "$work/legacy" "$l_bak" && printf '%s' "$l_nums"
}

# sign_lines FILE: FILE with each "# chacharngctl:@SIG@" made a digest
sign_lines() {
    grep -a -n ' # chacharngctl:@SIG@' "$1" | while IFS= read -r l; do
        n=${l%%:*} rest=${l#*:}
        printf '%ss/:@SIG@/:%s/\n' "$n" "$(sign "${rest% # chacharngctl:@SIG@*}")"
    done >"$work/sign.sed"
    sed -f "$work/sign.sed" "$1"
}

awk_job() { # JOB FILE [VAR=VALUE...]
    job=$1 file=$2
    shift 2
    owned=$(owned_lines "$file")
    if [ "$job" = add ]; then
        awk -v job=add -v FILE="$target" -v owned="$owned" "$@" -f "$AWK_FILE" "$file" "$file"
    else
        # awk ends every line it prints with a newline; tell it when the
        # input's last line has none
        input_nonl=0
        [ -s "$file" ] && [ -n "$(tail -c 1 "$file")" ] && input_nonl=1
        awk -v job="$job" -v FILE="$target" -v input_nonl="$input_nonl" \
            -v owned="$owned" "$@" -f "$AWK_FILE" "$file"
    fi
}

# Load the facts about $1 (the target or a copy of it) into f_*
# variables: chacharngctl's own lines, and libcrypto's reading ($f_view).
f_marks=0 f_rpmark=0 f_nodemark=0 f_view='' f_chacharng='' f_nodejs='' f_node_ok=''
read_facts() {
    facts=$(awk_job facts "$1") || die "cannot read $target"
    eval "$facts"
    f_view=$(view "$1") || f_view=
    f_chacharng=$(from_view "$f_view" S openssl_conf.providers.chacharng)
    [ -n "$f_chacharng" ] || f_chacharng=$(from_view "$f_view" V openssl_conf.providers.chacharng)
    f_nodejs=$(printf '%s\n' "$f_view" | awk '$2 == "nodejs_conf" { print $3; exit }')
    f_node_ok=
    if [ "$(from_view "$f_view" V nodejs_conf.providers.chacharng.activate)" = 1 ] &&
        [ "$(from_view "$f_view" V nodejs_conf.random.random)" = CHACHA20-DRBG ]; then
        f_node_ok=1
    fi
}
