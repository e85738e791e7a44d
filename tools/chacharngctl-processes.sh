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

# maps_report: one line per process, "PID DEV INO DELETED PATH": DEV
# (MAJOR:MINOR, decimal) and INO of the chacharng.so it maps; "PID - - -
# libcrypto" when it maps libcrypto but no chacharng.so; "PID - - -
# unreadable" when its maps cannot be read (another user's, or a
# non-dumpable process as root of a user namespace).
maps_report() {
    for d in /proc/[0-9]*; do
        printf 'PID %s\n' "${d#/proc/}"
        if ! cat "$d/maps" 2>/dev/null; then
            [ -d "$d" ] && echo UNREADABLE
        fi
    done | awk '
        function hex(s,   i, n) {
            n = 0; s = tolower(s)
            for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
            return n
        }
        function flush() {
            if (pid == "") return
            if (unreadable) print pid, "-", "-", "-", "unreadable"
            else if (mod != "") print pid, dev, ino, del, mod
            else if (crypto) print pid, "-", "-", "-", "libcrypto"
        }
        $1 == "PID" { flush(); pid = $2; mod = ""; crypto = 0; unreadable = 0; next }
        $1 == "UNREADABLE" { unreadable = 1; next }
        {
            path = $6; for (i = 7; i <= NF; i++) path = path " " $i
            d = sub(/ \(deleted\)$/, "", path)
            if (path ~ /\/chacharng\.so$/ && mod == "") {
                mod = path; ino = $5; del = d
                split($4, mm, ":"); dev = hex(mm[1]) ":" hex(mm[2])
            } else if (path ~ /\/libcrypto\.so[.0-9]*$/) crypto = 1
        }
        END { flush() }'
}

# started_before PID TIME: PID started before TIME (seconds since the
# epoch, with a fraction), by its start time in /proc/PID/stat; clearly
# before: more than two clock ticks, the start time's resolution.
started_before() {
    awk -v pid="$1" -v t="$2" -v hz="$hz" -v btime="$btime" '
        { sub(/^.*\) /, ""); split($0, f, " "); s = btime + f[20] / hz; exit !(s + 2 / hz < t) }' \
        "/proc/$1/stat" 2>/dev/null
}

# cmd_processes full|brief: what each running process has mapped, and which
# to restart; brief: the process list only.
cmd_processes() {
    cur=$(module_path "$target")
    cur_id=$(stat -L -c '%Hd:%Ld %i' "$cur" 2>/dev/null) || cur_id=
    changed=$(stat -c %.9Z "$target" 2>/dev/null) || changed=0
    hz=$(getconf CLK_TCK 2>/dev/null) || hz=100
    # the boot time to a fraction of a second (btime in /proc/stat is
    # whole seconds, too coarse beside the file's change time)
    btime=$(awk -v now="$(date +%s.%N)" '{ printf "%.3f\n", now - $1 }' /proc/uptime)
    # whether libcrypto, reading the file now, loads chacharng
    loads=
    [ -n "$f_chacharng" ] && loads=1
    if [ "$1" = full ]; then
        if [ -n "$cur_id" ]; then
            echo "module now: $cur (device ${cur_id% *}, inode ${cur_id#* })"
        else
            echo "module now: $cur (missing)"
        fi
        echo "$target last changed: $(date -d "@${changed%.*}" '+%F %T %Z' 2>/dev/null || echo unknown)"
    fi
    maps_report >"$work/maps"
    stale=0 off=0 n=0
    echo "processes with chacharng mapped:"
    while read -r pid dev ino del path; do
        case $path in libcrypto | unreadable) continue ;; esac
        n=$((n + 1))
        comm=$(cat "/proc/$pid/comm" 2>/dev/null) || comm='?'
        if [ "$del" = 1 ] && [ -z "$loads" ] && started_before "$pid" "$changed"; then
            what="a deleted copy (replaced or removed since it started), and $target no longer loads chacharng: restart it to stop using chacharng"
            off=$((off + 1))
        elif [ "$del" = 1 ]; then
            what="a deleted copy (replaced or removed since it started): restart it"
            stale=$((stale + 1))
        elif [ "$path" != "$cur" ]; then
            what="another copy"
        elif [ "$dev $ino" != "$cur_id" ]; then
            what="an older copy: restart it"
            stale=$((stale + 1))
        elif [ -z "$loads" ] && started_before "$pid" "$changed"; then
            what="the module now installed, loaded before $target last changed (which no longer loads it): restart it to stop using chacharng"
            off=$((off + 1))
        elif [ -z "$loads" ]; then
            what="the module now installed, which $target does not load (the program loads it itself)"
        else
            what="the module now installed"
        fi
        printf '  %-7s %-15s %s: %s\n' "$pid" "$comm" "$path" "$what"
    done <"$work/maps"
    [ "$n" -gt 0 ] || echo "  none"
    echo "processes with libcrypto but no chacharng mapped:"
    m=0 before=0
    while read -r pid dev ino del path; do
        [ "$path" = libcrypto ] || continue
        m=$((m + 1))
        comm=$(cat "/proc/$pid/comm" 2>/dev/null) || comm='?'
        what=
        if [ -n "$loads" ]; then
            if started_before "$pid" "$changed"; then
                what="started before $target last changed: restart it to use chacharng"
                before=$((before + 1))
            else
                what="started since: it draws no random bytes yet, or reads another file or section"
            fi
        fi
        printf '  %-7s %-15s %s\n' "$pid" "$comm" "$what" | sed 's/ *$//'
    done <"$work/maps"
    [ "$m" -gt 0 ] || echo "  none"
    u=0
    while read -r pid dev ino del path; do
        [ "$path" = unreadable ] || continue
        [ "$u" -gt 0 ] || echo "processes whose maps cannot be read here (what they use is unknown):"
        u=$((u + 1))
        comm=$(cat "/proc/$pid/comm" 2>/dev/null) || comm='?'
        printf '  %-7s %s\n' "$pid" "$comm"
    done <"$work/maps"
    [ "$1" = full ] || return 0
    count_note "$stale" "still run an old chacharng: restart them (a reload is not" \
        "enough where the master process stays, as nginx's does)"
    count_note "$off" "still draw from chacharng, which $target no longer loads:" \
        "restart them (a reload is not enough where the master process stays)"
    count_note "$before" "started before the last change to $target to restart" \
        "for it to reach them"
    count_note "$u" "whose maps cannot be read: run as root (outside any user" \
        "namespace) to see them"
}

# count_note N TEXT MORE: "N process(es) TEXT", then MORE, where N > 0.
count_note() {
    [ "$1" -gt 0 ] || return 0
    echo "$1 process(es) $2"
    echo "$3"
}

# restart_note: what a change means for programs already running.
restart_note() {
    info "programs already running keep the generator they had until they are restarted;"
    info "a reload is not enough where the master process stays (nginx): see '$prog status --processes'"
}
