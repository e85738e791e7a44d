# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# shellcheck disable=SC2154 # the variables of chacharngctl, which sources this
#
# chacharngctl: replacing the file under a lock, with its attributes
# (sourced by chacharngctl).

# ------------------------------------------------------------------------
# Replacing the file
# ------------------------------------------------------------------------
# enable and disable hold an flock(2) lock on the target's directory from
# before they read the file to after they replace it (the directory, not
# the file: the rename replaces the file's inode), so two runs never
# interleave.  They work on a snapshot, and replace the file only if it
# is still the snapshot, byte for byte and inode for inode.  A writer
# that takes no lock can still slip in between that last look and the
# rename; chacharngctl(8) says so.

# lock_target: take the lock, waiting up to a minute for another holder.
lock_target() {
    command -v flock >/dev/null ||
        die "flock (util-linux) is missing: cannot lock $dir; $target unchanged"
    (: <"$dir") 2>/dev/null ||
        die "cannot open $dir to lock it: $target unchanged"
    exec 9<"$dir"
    flock -w 60 9 ||
        die "another program has held the lock on $dir (for $target) for a minute: $target unchanged"
}

# snapshot [in-place]: $work/orig, the target as read now, $orig_id, its
# inode, and $links, its number of names.  A file with several names is
# refused unless in-place is given (disable: see write_in_place).
snapshot() {
    [ -r "$target" ] || die "cannot read $target: permission denied"
    links=$(stat -c %h "$target") || die "cannot stat $target"
    if [ "$links" -gt 1 ] && [ "${1:-}" != in-place ]; then
        die "$target has $links names (hard links): a new file in its place would leave the other names with the old one.  Nothing changed; remove the other links, or edit the file by hand."
    fi
    orig_id=$(stat -c '%d %i' "$target")
    err=$(cp "$target" "$work/orig" 2>&1) ||
        die "cannot write a copy of $target in $work: $(reason "$err"): nothing changed"
}

# still_as_read: the target is the snapshot still.
still_as_read() {
    [ "$(stat -c '%d %i' "$target" 2>/dev/null)" = "$orig_id" ] &&
        cmp -s "$target" "$work/orig"
}

# attrs FILE: owner, group, mode and every extended attribute (ACLs and
# security labels are extended attributes) of FILE.
attrs() {
    stat -c '%u %g %a' "$1"
    if command -v getfattr >/dev/null; then
        getfattr -h -d -m - -e hex "$1" 2>/dev/null | sed '/^# file:/d'
    fi
}

# scratch_copy WHAT CONTENT: a new file beside the target, with the
# target's owner, mode, ACL and extended attributes, holding CONTENT;
# prints its name.  On failure, $work/why says why (WHAT names the file).
scratch_copy() {
    exec 3>"$work/why"
    f=$(mktemp "$dir/.chacharngctl.XXXXXX" 2>/dev/null) || {
        echo "cannot create $1 in $dir (read-only?)" >&3
        return 1
    }
    printf '%s\n' "$f"
    preserve=mode,ownership,xattr
    command -v selinuxenabled >/dev/null && selinuxenabled && preserve=$preserve,context
    if ! err=$(cp --attributes-only --preserve=$preserve "$target" "$f" 2>&1) ||
        [ "$(attrs "$f")" != "$(attrs "$target")" ]; then
        echo "cannot give $1 the owner, mode, ACL and extended attributes of $target${err:+: $(reason "$err")}" >&3
        return 1
    fi
    if ! err=$(cat "$2" 2>&1 >"$f") || ! err=$(sync "$f" 2>&1); then
        echo "cannot write $1 ($f): $(reason "$err")" >&3
        return 1
    fi
}

# $beside: the new file (content CONTENT) beside the target, or a clear
# refusal.
make_beside() {
    [ -w "$target" ] || die "$target is read-only for you: nothing changed"
    beside=$(scratch_copy "the new $target" "$1") || {
        [ -n "$beside" ] && rm -f "$beside"
        beside=
        die "$(cat "$work/why"): nothing changed"
    }
}

# install_file: $beside takes the target's place by rename(2) (a file
# with several names: its content is written in place), the old file
# (the snapshot, with the target's attributes) becoming the backup
# first; only if the target is still what was read.  Until the target
# is replaced, an earlier backup is kept aside ($bak_old), and put back
# if the target cannot be replaced: a change that did not happen leaves
# the backup of the last one that did.
install_file() {
    bak=$target.chacharngctl.bak
    bak_new=$(scratch_copy "the backup $bak" "$work/orig") || {
        [ -n "$bak_new" ] && rm -f "$bak_new"
        bak_new=
        die "$(cat "$work/why"): nothing changed"
    }
    still_as_read ||
        die "$target changed while $prog worked on it (another program wrote it): nothing changed; run $prog again"
    if [ -e "$bak" ] || [ -L "$bak" ]; then
        if ! bak_old=$(mktemp "$dir/.chacharngctl.XXXXXX" 2>/dev/null) ||
            ! mv -f -T "$bak" "$bak_old"; then
            [ -n "$bak_old" ] && rm -f "$bak_old"
            bak_old=
            die "cannot keep a backup in $bak: $target unchanged"
        fi
    fi
    mv -f -T "$bak_new" "$bak" ||
        die "cannot keep a backup in $bak: $target unchanged"
    bak_new=
    if [ "$links" -gt 1 ]; then
        # its failures name the new backup as the way back
        drop_old_backup
        write_in_place
        rm -f "$beside"
    else
        mv -f "$beside" "$target" || die "cannot replace $target: $target unchanged"
        drop_old_backup
    fi
    beside=
}

# The target was replaced: the earlier backup set aside goes.
drop_old_backup() {
    [ -n "$bak_old" ] && rm -f "$bak_old"
    bak_old=
}

# On exit before the target was replaced: the earlier backup goes back
# under its name (cleanup).
restore_old_backup() {
    [ -n "$bak_old" ] || return 0
    mv -f -T "$bak_old" "$target.chacharngctl.bak" 2>/dev/null ||
        warn "the earlier backup of $target is in $bak_old"
    bak_old=
}

# ------------------------------------------------------------------------
# Writing in place: disable on a file with several names
# ------------------------------------------------------------------------
# rename(2) is atomic, but it gives the new inode to one name only: the
# file's other names (hard links) would keep the old content.  enable
# refuses such a file, and nothing changes.  disable cannot refuse:
# package removal runs it, and a name left activating a module that is
# about to be removed makes every program's RAND_bytes fail.  So disable,
# and only disable, writes such a file in place, once it has passed
# every check of the rename path (the new file tried beside it, the
# backup written, the file still the snapshot).  In place is not atomic:
# a program starting meanwhile may read part new, part old content, and
# a crash may leave that mix; the compare afterwards and the backup are
# the remedy.
#
# dd conv=notrunc over the old bytes, then truncate to the new length,
# rather than `cat new >target`: taking lines out only shortens the
# file, so the overwrite reuses blocks the file already has and truncate
# only frees, while O_TRUNC frees them first and, on a full file system
# (/ often runs full during package operations), could leave the file
# empty or cut.  (A copy-on-write file system needs new blocks either
# way; the compare catches what that breaks.)

# overwrite FROM: the target's bytes made FROM's, in place, on disk.
overwrite() {
    dd if="$1" of="$target" conv=notrunc bs=65536 status=none 2>&1 &&
        truncate -s "$(stat -c %s "$1")" "$target" 2>&1 &&
        sync "$target" 2>&1
}

# write_in_place: the target's content made $beside's (the content the
# checks read), then compared; on any failure, put back from the
# snapshot (the backup's bytes, in our own directory, where no other
# user can change them since), and a loud failure.  Whether it is back
# is the compare's answer: putting back the longer old content needs no
# truncate, so that step may fail and the file still be whole.
write_in_place() {
    err=$(overwrite "$beside") && cmp -s "$target" "$beside" && return 0
    why=${err:+: $(reason "$err")}
    cmp -s "$target" "$work/orig" &&
        die "cannot write $target in place$why: $target unchanged"
    overwrite "$work/orig" >/dev/null
    if cmp -s "$target" "$work/orig"; then
        die "writing $target in place failed$why: it was put back as it was (the same as $target.chacharngctl.bak)"
    fi
    die "writing $target in place failed$why, and so did putting it back: $target is damaged.  Its content before is in $target.chacharngctl.bak; copy it back in place, which keeps every name: cat $target.chacharngctl.bak >$target"
}
