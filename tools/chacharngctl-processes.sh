# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# shellcheck disable=SC2154 # the variables of chacharngctl, which sources this
#
# chacharngctl: what running processes use, for status --processes
# (sourced by chacharngctl).

# ------------------------------------------------------------------------
# What running processes use (status --processes)
# ------------------------------------------------------------------------
# A process reads openssl.cnf once, when libcrypto initialises, and keeps
# the module it loaded then until it exits: `enable` and `disable`, and a
# package upgrade that replaces the module file, reach only processes
# started afterwards.  /proc/PID/maps shows what each one has: a mapped
# chacharng.so, "(deleted)" when the file was replaced or removed since.

# maps_report: "PID INODE DELETED PATH" for each process mapping a
# chacharng.so, and "PID - - libcrypto" for each one mapping libcrypto
# but no chacharng.so; the processes whose maps can be read.
maps_report() {
    for m in /proc/[0-9]*/maps; do
        p=${m#/proc/}
        printf 'PID %s\n' "${p%/maps}"
        cat "$m" 2>/dev/null
    done | awk '
        function flush() {
            if (pid == "") return
            if (mod != "") print pid, ino, del, mod
            else if (crypto) print pid, "-", "-", "libcrypto"
        }
        $1 == "PID" { flush(); pid = $2; mod = ""; crypto = 0; next }
        {
            path = $6; for (i = 7; i <= NF; i++) path = path " " $i
            d = sub(/ \(deleted\)$/, "", path)
            if (path ~ /\/chacharng\.so$/ && mod == "") { mod = path; ino = $5; del = d }
            else if (path ~ /\/libcrypto\.so[.0-9]*$/) crypto = 1
        }
        END { flush() }'
}

cmd_processes() {
    cur=$(module_path "$target")
    cur_ino=$(stat -L -c %i "$cur" 2>/dev/null) || cur_ino=
    if [ -n "$cur_ino" ]; then
        echo "module now: $cur (inode $cur_ino)"
    else
        echo "module now: $cur (missing)"
    fi
    [ "$(id -u)" = 0 ] ||
        echo "(not root: only your own processes can be seen)"
    maps_report >"$work/maps"
    stale=0 n=0
    echo "processes with chacharng mapped:"
    while read -r pid ino del path; do
        [ "$path" = libcrypto ] && continue
        n=$((n + 1))
        comm=$(cat "/proc/$pid/comm" 2>/dev/null) || comm='?'
        if [ "$del" = 1 ]; then
            what="a deleted copy (replaced or removed since it started): restart it"
            stale=$((stale + 1))
        elif [ "$path" != "$cur" ]; then
            what="another copy"
        elif [ "$ino" != "$cur_ino" ]; then
            what="an older copy: restart it"
            stale=$((stale + 1))
        else
            what="the module now installed"
        fi
        printf '  %-7s %-15s %s: %s\n' "$pid" "$comm" "$path" "$what"
    done <"$work/maps"
    [ "$n" -gt 0 ] || echo "  none"
    echo "processes with libcrypto but no chacharng mapped:"
    m=0
    while read -r pid ino del path; do
        [ "$path" = libcrypto ] || continue
        m=$((m + 1))
        comm=$(cat "/proc/$pid/comm" 2>/dev/null) || comm='?'
        printf '  %-7s %s\n' "$pid" "$comm"
    done <"$work/maps"
    [ "$m" -gt 0 ] || echo "  none"
    if [ "$m" -gt 0 ] && [ "$f_marks" -gt 0 ]; then
        echo "  (started before enable, not reading $target (Node.js reads its own"
        echo "  section), or not drawing random bytes yet: libcrypto loads providers"
        echo "  at its first use)"
    fi
    if [ "$stale" -gt 0 ]; then
        echo "$stale process(es) still run an old chacharng: restart them (a reload is not"
        echo "enough where the master process stays, as nginx's does)"
    fi
}

# restart_note: what a change means for programs already running.
restart_note() {
    info "programs already running keep the generator they had until they are restarted;"
    info "a reload is not enough where the master process stays (nginx): see '$prog status --processes'"
}
