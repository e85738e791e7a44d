# SPDX-License-Identifier: Apache-2.0
#
# chacharngctl's editor of openssl.cnf: where lines go, and which lines
# are its own.  What the file means (which section openssl_conf and
# nodejs_conf name, what each holds, .include, ${var}, quoting) comes from
# libcrypto's own reading (chacharng-probe conf), passed in as L_*
# variables; this program only finds places in the text, and chacharngctl
# checks the result through libcrypto again.
#
# job=strip  the file without the lines enable added
# job=facts  NAME=VALUE lines about chacharngctl's own lines
# job=add    the file with chacharng enabled (rp=1: random provider too,
#            want_default=1: keep the default provider active); refuses
#            with a message on stderr and exit status 3.  Reads the file
#            twice (first pass: places, second: output).
#
# Its own lines are those whose numbers are in `owned` (chacharngctl
# checks the digest each one carries).  The lines it adds end in
# "# chacharngctl:@SIG@", which chacharngctl replaces with the digest.
#
# Lines are joined as libcrypto joins them: one ending in a backslash
# goes on with the next (a comment too), and a leading UTF-8 byte-order
# mark is skipped.

function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t\r]+$/, "", s); return s }
function uncomment(s) { sub(/#.*/, "", s); return trim(s) }
# owned, as the keys of own[] (BEGIN): one lookup a line, not a regex
function is_owned(n) { return (n in own) }
function refuse(msg) { print "chacharngctl: " msg > "/dev/stderr"; failed = 1; exit 3 }

# pass 1: the places of the sections and keys written in this file; a
# logical line (continuations joined) counts at its last physical line
function scan(line, n,   s, k) {
    if (n == 1) { sub(/^\357\273\277/, "", line); if (line ~ /\r$/) eol = "\r" }
    if (is_owned(n)) {
        marks++
        if (line ~ /^random_provider = chacharng /) rpmark = 1
        if (line ~ /^nodejs_conf = /) nodemark = 1
        return
    }
    sub(/\r$/, "", line)
    if (cont) line = held_text line
    if (line ~ /\\$/) { held_text = substr(line, 1, length(line) - 1); cont = 1; return }
    cont = 0
    s = uncomment(line)
    if (s ~ /^\[[ \t]*[^][ \t]+[ \t]*\]$/) {
        sect = s; gsub(/[][ \t]/, "", sect)
        if (sect == "default") sect = ""
        if (!(sect in hdr)) hdr[sect] = n
        last[sect] = n
        return
    }
    if (s !~ /=/) return
    k = trim(substr(s, 1, index(s, "=") - 1))
    have[sect, k] = 1
    if (sect != "") last[sect] = n
}

function emit(at, text) { ins[at] = ins[at] text " " MARK ":@SIG@" eol "\n" }
function block_line(text) { block = block text " " MARK ":@SIG@" eol "\n" }

function plan(   p, d, r, name, ours) {
    init = L_init; p = L_p; r = L_r; d = L_d
    if (init != "" && !(init in hdr))
        refuse("[" init "], named by openssl_conf, is not in " FILE " (an .include?): edit it by hand")
    if (p != "" && !(p in hdr))
        refuse("[" p "], named by providers in [" init "], is not in " FILE " (an .include?): edit it by hand")
    if (r != "" && !(r in hdr))
        refuse("[" r "], named by random in [" init "], is not in " FILE " (an .include?): edit it by hand")
    if (L_hand != "")
        refuse("chacharng is already configured by hand in [" p "] as libcrypto reads " FILE " (chacharng = " L_hand "): remove those lines first")
    split("chacharng_init chacharng_provider_sect chacharng_default_sect chacharng_sect chacharng_random_sect chacharng_nodejs_init", ours, " ")
    for (name in ours)
        if (ours[name] in hdr)
            refuse("section [" ours[name] "] already exists in " FILE ": remove it first")
    if (rp && L_random_late)
        refuse("in [" init "] of " FILE ", random comes after providers; OpenSSL 3.5+ then unloads the random provider again: move the random line above the providers line")

    if (init == "") {
        # no init section: ours, named from the top of the file, where
        # no section header or .include can have come before
        emit(0, "openssl_conf = chacharng_init")
        block_line("[chacharng_init]")
        block_line("random = chacharng_random_sect")
        block_line("providers = chacharng_provider_sect")
    } else {
        # at the top of the init section: random must precede providers
        if (r == "") emit(hdr[init], "random = chacharng_random_sect")
        if (p == "") emit(hdr[init], "providers = chacharng_provider_sect")
    }
    if (p == "") {
        block_line("[chacharng_provider_sect]")
        if (want_default) block_line("default = chacharng_default_sect")
        block_line("chacharng = chacharng_sect")
        if (want_default) { block_line("[chacharng_default_sect]"); block_line("activate = 1") }
    } else {
        emit(last[p], "chacharng = chacharng_sect")
        if (want_default && d != "") {
            if (!(d in hdr))
                refuse("[" d "], the default provider section, is not in " FILE " (an .include?): edit it by hand")
            if (!L_dact) emit(last[d], "activate = 1")
        } else if (want_default) {
            emit(last[p], "default = chacharng_default_sect")
            block_line("[chacharng_default_sect]")
            block_line("activate = 1")
        }
    }
    block_line("[chacharng_sect]")
    block_line("activate = 1")
    if (r == "") {
        r = "chacharng_random_sect"
        block_line("[chacharng_random_sect]")
        block_line("random = CHACHA20-DRBG")
        block_line("properties = provider=chacharng")
        if (rp) block_line("random_provider = chacharng")
    } else {
        emit(last[r], "random = CHACHA20-DRBG")
        emit(last[r], "properties = provider=chacharng")
        if (rp) emit(last[r], "random_provider = chacharng")
    }
    # Node.js reads the section named by nodejs_conf, never openssl_conf
    # (unless started with --openssl-shared-config): give it one of its
    # own with the same providers and random sections and nothing else,
    # so that it gets chacharng and none of the other settings it means
    # to stay away from.  A nodejs_conf of the administrator is left alone.
    if (!L_node) {
        emit(0, "nodejs_conf = chacharng_nodejs_init")
        block_line("[chacharng_nodejs_init]")
        block_line("random = " r)
        block_line("providers = " (p == "" ? "chacharng_provider_sect" : p))
    }
    # Last, the section the file ended in, opened again: a line appended
    # to the file later lands where it would have without these lines,
    # so taking them out does not move it.
    block_line("[" (sect == "" ? "default" : sect) "]")
    tail = block
    block = ""
    block_line("# Lines ending in \"" MARK ":\" and a digest were added by chacharngctl enable;")
    block_line("# chacharngctl disable removes exactly these lines.")
    tail = block tail
    block = ""
    if (nonl) { block_line("# (no newline at the end of the line above these)"); tail = tail block }
}

BEGIN {
    MARK = "# chacharngctl"; sect = ""; eol = ""
    n_own = split(owned, own_list, " ")
    for (i = 1; i <= n_own; i++) own[own_list[i] + 0] = 1
}
job == "strip" {
    if (is_owned(FNR)) {
        if (FNR == 1 && substr($0, 1, 3) == "\357\273\277") bom = "\357\273\277"
        if ($0 ~ /^# \(no newline at the end of the line above these\) /) nonl_seen = 1
        next
    }
    if (have_line) printf "%s\n", held
    held = bom $0; bom = ""; have_line = 1
    next
}
job == "facts" { scan($0, FNR); next }
job == "add" && FNR == NR { scan($0, FNR); next }
job == "add" {
    if (!planned) { plan(); planned = 1 }
    line = $0
    if (FNR == 1 && (0 in ins)) {
        if (substr(line, 1, 3) == "\357\273\277") { printf "\357\273\277"; line = substr(line, 4) }
        printf "%s", ins[0]
    }
    print line
    if (FNR in ins) printf "%s", ins[FNR]
    next
}
END {
    if (failed) exit 3
    if (job == "strip" && have_line) printf (nonl_seen || input_nonl ? "%s" : "%s\n"), held
    if (job == "facts") printf "f_marks=%d\nf_rpmark=%d\nf_nodemark=%d\n", marks, rpmark, nodemark
    if (job == "add") {
        if (!planned) { plan(); planned = 1 }
        if (FNR == 0 && (0 in ins)) printf "%s", ins[0]
        printf "%s", tail
    }
}
