/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The generator core (chacha/chacha_drbg.c) alone, with no OpenSSL: a fixed
 * seed gives pinned output, fast key erasure (the old key is nowhere in the
 * state after a generate), handed-out bytes are wiped, the buffer rekeys
 * when drained, the reseed policy fires when it should, every fork mode
 * makes a child reseed however the child was made (fork, _Fork, clone
 * without CLONE_VM, the raw fork system call), a failed mapping fails
 * cleanly, a simulated VM snapshot clone repeats at most the unread
 * buffer when kernel mixing is on, by the vDSO route and by the system
 * call route (chacha/kmix.c), the vDSO states are one per generator, never
 * cross a page, are wiped when given back and in a fork child and are
 * reused, and the kernel's bytes reach the key,
 * and the request path applies its one predicate at every boundary
 * (calls, 16 MiB with bytes buffered, prediction resistance, a parent that
 * moved, a failing source).  Runs once per kernel through the per-kernel
 * runner.
 */
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "chacha_drbg.h"
#include "kmix.h"
#include "hex.h"
#include "linkwrap.h"
#include "split.h"
#include "statepool.h"
#include "testutil.h"

static struct chacha_drbg *seeded_drbg(void)
{
    uint8_t seed[CHACHA_DRBG_SEED_BYTES];
    struct chacha_drbg *d = chacha_drbg_new(tu_impl_under_test(), NULL, NULL);
    size_t i;

    if (d == NULL)
        return NULL;
    for (i = 0; i < sizeof(seed); i++)
        seed[i] = (uint8_t)i;
    chacha_drbg_instantiate(d, seed, sizeof(seed), NULL, 0);
    return d;
}

/* Pinned values come from a model of DESIGN.md section 3 on OpenSSL's ChaCha20. */
static void test_pinned(void)
{
    uint8_t want[64], got[2000];
    struct chacha_drbg *d = seeded_drbg();

    if (!TU_OK(d != NULL, "new generator"))
        return;
    chacha_drbg_generate(d, got, 64, NULL, 0);
    tu_unhex(
        want, sizeof(want),
        "c0522d44072cd173b35e4dfae606898f149d753f0d464cf3a181493e18e3bef3"
        "f5cb870748f82f113487e515dd73d23148dec4f52844a39da764abd003a5c8d2");
    TU_OK(memcmp(got, want, 64) == 0, "seed 00..2f: first 64 bytes pinned");
    chacha_drbg_generate(d, got, 2000, NULL, 0);
    tu_unhex(
        want, sizeof(want),
        "3c111f4cbde53ebd158d19dec35c6feb06124d737d118b964dd1db6d3b4f5390");
    TU_OK(memcmp(got + 2000 - 32, want, 32) == 0,
          "then 2000 bytes (direct path): last 32 pinned");
    chacha_drbg_generate(d, got, 5, NULL, 0);
    tu_unhex(want, sizeof(want), "8dc21a6f33");
    TU_OK(memcmp(got, want, 5) == 0, "then 5 bytes pinned");
    chacha_drbg_free(d);
}

static int contains(const void *hay, size_t hlen, const void *needle,
                    size_t nlen)
{
    const uint8_t *h = hay;
    size_t i;

    for (i = 0; i + nlen <= hlen; i++)
        if (memcmp(h + i, needle, nlen) == 0)
            return 1;
    return 0;
}

static int all_zero(const uint8_t *p, size_t n)
{
    while (n-- > 0)
        if (*p++ != 0)
            return 0;
    return 1;
}

static void test_erasure(void)
{
    struct chacha_drbg *d = seeded_drbg();
    struct chacha_drbg_secret *s;
    uint32_t old_key[8];
    static uint8_t big_out[64 * 64 + 100]; /* 64 blocks and a partial one */
    uint8_t out[3000];
    size_t sizes[] = { 1, 100, 959, 960, 961, 2500 }, i;
    int key_gone = 1, wiped = 1, empty_after_direct;

    if (!TU_OK(d != NULL, "new generator"))
        return;
    s = d->s;
    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        size_t before_avail = s->avail, pos;

        memcpy(old_key, s->state + 4, sizeof(old_key));
        pos = CHACHA_DRBG_KS_BYTES - before_avail;
        chacha_drbg_generate(d, out, sizes[i], NULL, 0);
        /* a request that drains the buffer must have moved the key */
        if (sizes[i] > before_avail
            && contains(s, sizeof(*s), old_key, sizeof(old_key)))
            key_gone = 0;
        /* bytes served from the old buffer position are zero now */
        if (sizes[i] <= before_avail && !all_zero(s->ks + pos, sizes[i]))
            wiped = 0;
        /* the rekey block (block 0) is always wiped */
        if (!all_zero(s->ks, CHACHA_BLOCK_BYTES))
            wiped = 0;
    }
    TU_OK(key_gone, "after a refill the old key appears nowhere in the state");
    TU_OK(wiped, "handed-out bytes and the rekey block are wiped");

    chacha_drbg_generate(d, out, 10, NULL, 0);
    chacha_drbg_generate(d, out, 2000, NULL, 0); /* buffer drained + direct */
    /* the stack scratch of the direct path is t_drbg_stack's to check */
    empty_after_direct = s->avail == 0 && all_zero(s->ks, sizeof(s->ks));
    chacha_drbg_generate(d, out, 10, NULL, 0);
    chacha_drbg_generate(d, big_out, sizeof(big_out), NULL, 0);
    empty_after_direct &= s->avail == 0 && all_zero(s->ks, sizeof(s->ks));
    TU_OK(empty_after_direct, "after the direct path no keystream is left");

    memcpy(old_key, s->state + 4, sizeof(old_key));
    chacha_drbg_generate(d, out, 3, (const uint8_t *)"adin", 4);
    TU_OK(!contains(s, sizeof(*s), old_key, sizeof(old_key))
              && s->avail == CHACHA_DRBG_BUF_BYTES - 3,
          "additional input rekeys and empties the buffer before serving");

    TU_OK(!chacha_drbg_is_zeroized(d), "seeded state is not zero");
    chacha_drbg_wipe(d);
    TU_OK(chacha_drbg_is_zeroized(d) && !chacha_drbg_is_seeded(d),
          "wipe zeroes every byte and unseeds");
    chacha_drbg_free(d);
}

static void test_rekey_interval(void)
{
    struct chacha_drbg *d = seeded_drbg();
    uint32_t key[8];
    uint8_t out[960];
    int moved_early = 0, moved_late;
    size_t i;

    if (!TU_OK(d != NULL, "new generator"))
        return;
    chacha_drbg_generate(d, out, 1, NULL, 0); /* first refill */
    memcpy(key, d->s->state + 4, sizeof(key));
    for (i = 1; i < CHACHA_DRBG_BUF_BYTES; i++) {
        chacha_drbg_generate(d, out, 1, NULL, 0);
        if (memcmp(key, d->s->state + 4, sizeof(key)) != 0)
            moved_early = 1;
    }
    chacha_drbg_generate(d, out, 1, NULL, 0);
    moved_late = memcmp(key, d->s->state + 4, sizeof(key)) != 0;
    TU_OK(!moved_early && moved_late,
          "key held for exactly 960 one-byte calls, then moves");
    chacha_drbg_free(d);
}

static void test_policy(void)
{
    struct chacha_drbg *d = seeded_drbg();
    static uint8_t big[1 << 20];
    uint8_t out[16], e[CHACHA_DRBG_SEED_BYTES] = { 1 };
    time_t t0;
    int i, due_early = 0;

    if (!TU_OK(d != NULL, "new generator"))
        return;
    t0 = chacha_drbg_seed_time(d);
    TU_OK(!chacha_drbg_reseed_due_at(d, 0, t0), "fresh seed: no reseed due");

    chacha_drbg_set_policy(d, 3, CHACHA_DRBG_DEFAULT_RESEED_INTERVAL);
    for (i = 0; i < 3; i++) {
        due_early |= chacha_drbg_reseed_due_at(d, 0, t0);
        chacha_drbg_generate(d, out, i == 1 ? 0 : 16, NULL, 0);
    }
    TU_OK(!due_early && chacha_drbg_reseed_due_at(d, 0, t0),
          "reseed_requests=3: three calls (one empty) served, fourth due");
    chacha_drbg_reseed(d, NULL, 0, e, sizeof(e), NULL, 0);
    TU_OK(!chacha_drbg_reseed_due_at(d, 0, chacha_drbg_seed_time(d)),
          "reseed resets the call count");

    chacha_drbg_set_policy(d, 0, CHACHA_DRBG_DEFAULT_RESEED_INTERVAL);
    for (i = 0; i < 15; i++)
        chacha_drbg_generate(d, big, sizeof(big), NULL, 0);
    due_early = chacha_drbg_reseed_due_at(d, 0, chacha_drbg_seed_time(d));
    chacha_drbg_generate(d, big, sizeof(big) - 1, NULL, 0);
    chacha_drbg_generate(d, big, 1, NULL, 0);
    TU_OK(!due_early
              && chacha_drbg_reseed_due_at(d, 0, chacha_drbg_seed_time(d)),
          "due at 16 MiB produced, not before");

    chacha_drbg_reseed(d, NULL, 0, e, sizeof(e), NULL, 0);
    t0 = chacha_drbg_seed_time(d);
    chacha_drbg_set_policy(d, 0, 10);
    TU_OK(!chacha_drbg_reseed_due_at(d, 0, t0 + 9)
              && chacha_drbg_reseed_due_at(d, 0, t0 + 10)
              && chacha_drbg_reseed_due_at(d, 0, t0 - 1),
          "interval 10 s: due at +10 s and when the clock goes back");
    chacha_drbg_set_policy(d, 0, 0);
    TU_OK(!chacha_drbg_reseed_due_at(d, 0, t0 + 100000),
          "interval 0: no limit");
    chacha_drbg_free(d);
}

#define STACK_BYTES (256 * 1024)

/* What a child reports: '1' if it must reseed before its first output. */
static struct chacha_drbg *child_drbg;
static int child_fd;

static int child_reports(void *arg)
{
    char due = (char)('0' + chacha_drbg_reseed_due(child_drbg, 0));

    (void)arg;
    return tu_write_full(child_fd, &due, 1) ? 0 : 2;
}

/*
 * A seeded generator whose page uses fork mode |mode|, or NULL, reported:
 * as a skip where the kernel cannot wipe on fork, else as a failure.  The
 * better modes are taken away by the link-time wrappers (linkwrap.h).
 */
static struct chacha_drbg *seeded_drbg_in_mode(enum chacha_fork_mode mode,
                                               const char *name)
{
    struct chacha_drbg *d;

    chacha_pool_trim(); /* no free slot left in a mapping of another mode */
    lw_limit_fork_mode(mode);
    d = seeded_drbg();
    lw_limit_fork_mode(CHACHA_FORK_WIPEONFORK);
    if (!TU_OK(d != NULL, "new generator (%s)", name))
        return NULL;
    if (d->fork_mode != mode) {
        if (mode == CHACHA_FORK_WIPEONFORK)
            tu_skip("fork mode %s: kernel does not honour madvise here", name);
        else
            TU_OK(0, "fork mode %s: the generator got mode %d instead", name,
                  (int)d->fork_mode);
        chacha_drbg_free(d);
        return NULL;
    }
    return d;
}

/*
 * Each fork mode, each way of making a child: the child must see a reseed
 * due, the parent not.
 */
static void test_fork_mode(enum chacha_fork_mode mode, const char *name,
                           unsigned char *stack)
{
    struct chacha_drbg *d;
    int pipefd[2], how;
    char child_due;
    pid_t pid;

    if ((d = seeded_drbg_in_mode(mode, name)) == NULL)
        return;
    TU_OK(d->fork_mode == mode, "fork mode %s in use", name);
    for (how = 0; how < TU_NSPLIT; how++) {
        if (!tu_split_available((enum tu_split)how, stack, NULL)) {
            tu_skip("fork mode %s: %s not available", name,
                    tu_split_name((enum tu_split)how));
            continue;
        }
        child_due = '?';
        if (pipe(pipefd) != 0) {
            TU_OK(0, "pipe");
            break;
        }
        child_drbg = d;
        child_fd = pipefd[1];
        pid = tu_split((enum tu_split)how, child_reports, NULL,
                       stack != NULL ? stack + STACK_BYTES : NULL, 0);
        close(pipefd[1]);
        if (pid < 0 || !tu_read_full(pipefd[0], &child_due, 1))
            child_due = '?';
        close(pipefd[0]);
        /* reaped; what the child saw is the check */
        tu_wait_exit(pid, NULL);
        TU_OK(child_due == '1', "fork mode %s: a child made by %s must reseed",
              name, tu_split_name((enum tu_split)how));
    }
    TU_OK(!chacha_drbg_reseed_due(d, 0), "fork mode %s: the parent need not",
          name);
    chacha_drbg_free(d);
}

/*
 * In the child: make the pid the state was seeded under this child's own,
 * as a reused pid or a pid-1 child in a new pid namespace would, then
 * report as child_reports() does.
 */
static int child_reports_same_pid(void *arg)
{
    child_drbg->s->pid = getpid();
    return child_reports(arg);
}

/*
 * A fork() child whose pid equals the recorded one, without root: only
 * wipe-on-fork and the atfork generation can tell it from its parent, so
 * in those modes it must reseed.  (getpid mode alone cannot: chacharng(7)
 * documents that residual case.)
 */
static void test_same_pid(enum chacha_fork_mode mode, const char *name)
{
    struct chacha_drbg *d;
    int pipefd[2];
    char child_due = '?';
    pid_t pid;

    if ((d = seeded_drbg_in_mode(mode, name)) == NULL)
        return;
    if (pipe(pipefd) != 0) {
        TU_OK(0, "pipe");
        chacha_drbg_free(d);
        return;
    }
    child_drbg = d;
    child_fd = pipefd[1];
    pid = tu_split(TU_SPLIT_FORK, child_reports_same_pid, NULL, NULL, 0);
    close(pipefd[1]);
    if (pid < 0 || !tu_read_full(pipefd[0], &child_due, 1))
        child_due = '?';
    close(pipefd[0]);
    tu_wait_exit(pid, NULL);
    TU_OK(child_due == '1',
          "fork mode %s: a fork() child with the recorded pid must reseed",
          name);
    chacha_drbg_free(d);
}

/* In the child: 0 if reseed(E) of the inherited |arg| gives instantiate(E). */
static int child_reseeds(void *arg)
{
    static const uint8_t e[CHACHA_DRBG_SEED_BYTES] = { 0xe5, 0xee, 0xd };
    struct chacha_drbg *d = arg;
    uint8_t got[100], want[100];
    struct chacha_drbg *fresh =
        chacha_drbg_new(tu_impl_under_test(), NULL, NULL);

    if (fresh == NULL)
        return 2;
    chacha_drbg_reseed(d, NULL, 0, e, sizeof(e), NULL, 0);
    chacha_drbg_generate(d, got, sizeof(got), NULL, 0);
    chacha_drbg_instantiate(fresh, e, sizeof(e), NULL, 0);
    chacha_drbg_generate(fresh, want, sizeof(want), NULL, 0);
    chacha_drbg_free(fresh);
    chacha_drbg_free(d);
    return memcmp(got, want, sizeof(got)) == 0 ? 0 : 1;
}

/*
 * "Seeded" means seeded in this process, in every fork mode: a fork child's
 * reseed with E starts from K = 0, N = 0 like instantiate(E), so it gives
 * what a wipe-on-fork child gives, and nothing of the inherited key.
 */
static void test_fork_child_reseed(enum chacha_fork_mode mode, const char *name)
{
    struct chacha_drbg *d;

    if ((d = seeded_drbg_in_mode(mode, name)) == NULL)
        return;
    TU_OK(tu_wait_ok(tu_split(TU_SPLIT_FORK, child_reseeds, d, NULL, 0)),
          "fork mode %s: a child's reseed(E) gives what instantiate(E) gives",
          name);
    chacha_drbg_free(d);
}

/* ------------------------------------------------------------------------
 * A simulated VM snapshot clone (kernel mixing, DESIGN.md section 3)
 * ------------------------------------------------------------------------ */

#define CLONE_STRETCH ((size_t)256 << 10)

/* A kernel read that always fails. */
static int mix_fails(void **slot, uint8_t g[CHACHA_DRBG_MIX_BYTES])
{
    (void)slot;
    memset(g, 0x77, CHACHA_DRBG_MIX_BYTES); /* debris the core must not use */
    return 0;
}

static const struct chacha_drbg_mixer failing_mixer = { mix_fails, NULL };

/* |total| bytes from |d| in |req|-byte requests, as the provider serves them. */
static void draw(struct chacha_drbg *d, uint8_t *out, size_t total, size_t req)
{
    size_t off, n;

    for (off = 0; off < total; off += n) {
        n = total - off < req ? total - off : req;
        chacha_drbg_request(d, out + off, n, 0, NULL, 0);
    }
}

/*
 * Where the last 8-byte window at which |a| and |b| agree starts, or -1 if
 * none does.  Past the bytes the clones share, a window agrees by chance
 * with probability 2^-64; one that straddles the end of the shared bytes
 * may agree by chance in its last few bytes.
 */
static long last_match(const uint8_t *a, const uint8_t *b, size_t n)
{
    long last = -1;
    size_t i;

    for (i = 0; i + 8 <= n; i++)
        if (memcmp(a + i, b + i, 8) == 0)
            last = (long)i;
    return last;
}

/*
 * Seed a generator, draw |used| bytes, then copy its whole secret state
 * into a second one, as restoring one snapshot twice would.  Both then
 * serve CLONE_STRETCH bytes in |req|-byte requests.  Returns where the
 * last 8-byte window at which the two outputs agree starts (-1: none,
 * -2: set-up failed); *|unread| is what the buffer held at the snapshot,
 * *|same| whether the two outputs are identical.
 */
static long clone_run(const struct chacha_drbg_mixer *mix, size_t used,
                      size_t req, size_t *unread, unsigned int *failures,
                      int *same)
{
    static uint8_t a[CLONE_STRETCH], b[CLONE_STRETCH], pre[2048];
    struct chacha_drbg *d1 = seeded_drbg();
    struct chacha_drbg *d2 = chacha_drbg_new(tu_impl_under_test(), NULL, NULL);
    long last = -2;

    *same = 0;
    *unread = 0;
    if (d1 == NULL || d2 == NULL)
        goto out;
    chacha_drbg_set_kernel_mix(d1, mix);
    chacha_drbg_set_kernel_mix(d2, mix);
    chacha_drbg_generate(d1, pre, used, NULL, 0);
    memcpy(d2->s, d1->s, sizeof(*d1->s)); /* the snapshot, restored twice */
    *unread = d1->s->avail;
    draw(d1, a, sizeof(a), req);
    draw(d2, b, sizeof(b), req);
    last = last_match(a, b, sizeof(a));
    *same = memcmp(a, b, sizeof(a)) == 0;
    *failures = chacha_drbg_mix_failures(d1) + chacha_drbg_mix_failures(d2);
out:
    chacha_drbg_free(d1);
    chacha_drbg_free(d2);
    return last;
}

/* The clone test with mixing through |mixer|, by route |how|. */
static void test_clone(const struct chacha_drbg_mixer *mixer, const char *how)
{
    static const size_t reqs[] = { 4, 16, 1024, 65536 };
    /* 959 bytes unread (the most a call leaves), 860, and 0 (direct path) */
    static const size_t used[] = { 1, 100, 961 };
    size_t i, j, unread;
    unsigned int failures = 0;
    int same = 0;
    long last;

    for (i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
        clone_run(NULL, 100, reqs[i], &unread, &failures, &same);
        TU_OK(same,
              "clone, mixing off, %zu-byte requests: identical for %zu KiB",
              reqs[i], CLONE_STRETCH >> 10);
        for (j = 0; j < sizeof(used) / sizeof(used[0]); j++) {
            last =
                clone_run(mixer, used[j], reqs[i], &unread, &failures, &same);
            /* every agreeing window starts inside the unread buffer */
            TU_OK(last >= -1 && last < (long)unread
                      && unread < CHACHA_DRBG_BUF_BYTES && failures == 0,
                  "clone, mixing on (%s), %zu-byte requests, %zu bytes unread"
                  " at the snapshot: no common 8-byte run from there on (last"
                  " starts at %ld), %u failed reads",
                  how, reqs[i], unread, last, failures);
        }
    }
    clone_run(&failing_mixer, 100, 1024, &unread, &failures, &same);
    TU_OK(same && failures > 0,
          "clone, every kernel read failing: counted (%u), output as with "
          "mixing off",
          failures);
}

/* ------------------------------------------------------------------------
 * Both routes of chacha/kmix.c, and the vDSO states it hands out
 * ------------------------------------------------------------------------ */

/* chacha_kmix_mixer, watched: the state the last read used, the releases. */
static void *watched_state;
static unsigned long watched_releases;

static int mix_watched(void **slot, uint8_t g[CHACHA_DRBG_MIX_BYTES])
{
    int ok = chacha_kmix_getrandom(slot, g);

    watched_state = chacha_kmix_state(*slot);
    return ok;
}

static void release_watched(void *slot)
{
    watched_releases++;
    chacha_kmix_release(slot);
}

static const struct chacha_drbg_mixer watched_mixer = { mix_watched,
                                                        release_watched };

struct fork_state {
    void *slot;
    uint8_t *state;
    size_t bytes;
};

/* In a child: the copy of the state reads zero, and the vDSO re-keys it. */
static int child_state_rekeys(void *arg)
{
    struct fork_state *f = arg;
    uint8_t g[CHACHA_DRBG_MIX_BYTES];
    void *slot = f->slot;

    if (!all_zero(f->state, f->bytes))
        return 1;
    if (!chacha_kmix_getrandom(&slot, g) || slot != f->slot
        || chacha_kmix_state(slot) != f->state)
        return 2;
    return all_zero(f->state, f->bytes) ? 3 : 0;
}

static void test_vdso_states(size_t bytes, unsigned char *stack)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uint8_t g[CHACHA_DRBG_MIX_BYTES], h[CHACHA_DRBG_MIX_BYTES], out[2000];
    void *a = NULL, *b = NULL, *c = NULL;
    uint8_t *sa, *sb;
    struct fork_state f;
    struct chacha_drbg *d;
    enum tu_split how;
    int ok;

    ok = chacha_kmix_getrandom(&a, g) && chacha_kmix_getrandom(&b, h);
    sa = chacha_kmix_state(a);
    sb = chacha_kmix_state(b);
    TU_OK(ok && sa != NULL && sb != NULL && sa != sb
              && (uintptr_t)sa % page + bytes <= page
              && (uintptr_t)sb % page + bytes <= page,
          "vDSO route: two slots get two %zu-byte states, neither crossing a"
          " page",
          bytes);
    if (sa == NULL || sb == NULL)
        return;
    TU_OK(!all_zero(sa, bytes) && !all_zero(sb, bytes)
              && memcmp(g, h, sizeof(g)) != 0,
          "vDSO route: the vDSO keyed the states it was given");
    f.slot = a;
    f.state = sa;
    f.bytes = bytes;
    for (how = 0; how < TU_NSPLIT; how++) {
        const char *why;

        if (!tu_split_available(how, stack, &why)) {
            tu_skip("vDSO state in a %s child: %s", tu_split_name(how), why);
            continue;
        }
        TU_OK(
            tu_wait_ok(tu_split(how, child_state_rekeys, &f,
                                stack != NULL ? stack + STACK_BYTES : NULL, 0)),
            "vDSO route, %s child: its copy of the state reads zero and the"
            " vDSO re-keys it in the same slot",
            tu_split_name(how));
    }
    chacha_kmix_release(a);
    TU_OK(all_zero(sa, bytes), "vDSO route: a released state is wiped");
    ok = chacha_kmix_getrandom(&c, g);
    TU_OK(ok && chacha_kmix_state(c) == sa,
          "vDSO route: a released state is handed out again (no new mapping)");
    chacha_kmix_release(b);
    chacha_kmix_release(c);

    d = seeded_drbg();
    if (!TU_OK(d != NULL, "a generator for the mixer's slot"))
        return;
    watched_state = NULL;
    watched_releases = 0;
    chacha_drbg_set_kernel_mix(d, &watched_mixer);
    chacha_drbg_generate(d, g, sizeof(g), NULL, 0);
    a = watched_state;
    TU_OK(a != NULL && !all_zero((const uint8_t *)a, bytes)
              && watched_releases == 0,
          "vDSO route: a generator takes its state at its first mix");
    chacha_drbg_generate(d, out, 100, NULL, 0);  /* from the buffer */
    chacha_drbg_generate(d, out, 2000, NULL, 0); /* refill, then direct */
    TU_OK(watched_state == a && chacha_drbg_mix_failures(d) == 0,
          "vDSO route: ... and keeps it for every later mix");
    chacha_drbg_set_kernel_mix(d, NULL);
    TU_OK(watched_releases == 1 && all_zero((const uint8_t *)a, bytes),
          "vDSO route: turning mixing off gives the state back, wiped");
    chacha_drbg_set_kernel_mix(d, &watched_mixer);
    chacha_drbg_generate(d, out, sizeof(out), NULL, 0);
    a = watched_state;
    chacha_drbg_free(d);
    TU_OK(watched_releases == 2 && a != NULL
              && all_zero((const uint8_t *)a, bytes),
          "vDSO route: freeing the generator gives its state back, wiped");
}

/*
 * A kernel read by |mix| writes CHACHA_DRBG_MIX_BYTES and not one byte
 * more: the bytes after them in a larger buffer keep their canary.
 */
static int read_is_exact(const struct chacha_drbg_mixer *mix)
{
    uint8_t g[2 * CHACHA_KEY_BYTES];
    void *slot = NULL;
    size_t i, canaries = 0;
    int ok;

    memset(g, 0xc5, sizeof(g));
    ok = mix->read(&slot, g);
    if (mix->release != NULL)
        mix->release(slot);
    for (i = 0; i < sizeof(g); i++)
        canaries += g[i] == 0xc5;
    /* the read's own bytes are all 0xc5 with probability 2^-128 */
    for (i = CHACHA_DRBG_MIX_BYTES; i < sizeof(g); i++)
        ok = ok && g[i] == 0xc5;
    return ok && canaries < sizeof(g);
}

static void test_routes(void)
{
    unsigned char *stack = tu_split_stack_new(STACK_BYTES);
    uint8_t g[CHACHA_DRBG_MIX_BYTES];
    void *slot = NULL;
    char why[128];
    size_t bytes = 0;
    int ok;

    if (chacha_kmix_route(why, sizeof(why)) == CHACHA_KMIX_VDSO) {
        tu_diag("kernel mixing route: %s", why);
        TU_OK(sscanf(why, "vDSO %*s %zu-byte states", &bytes) == 1 && bytes > 0,
              "vDSO route: the state size is known (%s)", why);
        test_vdso_states(bytes, stack);
        test_clone(&chacha_kmix_mixer, "the vDSO");
    } else {
        tu_skip("kernel mixing through the vDSO: %s", why);
    }
    slot = NULL;
    ok = chacha_kmix_syscall_mixer.read(&slot, g);
    TU_OK(ok && slot == NULL && chacha_kmix_syscall_mixer.release == NULL,
          "system call route: a read works and takes no vDSO state");
    test_clone(&chacha_kmix_syscall_mixer, "the system call");
    TU_OK(read_is_exact(&chacha_kmix_mixer)
              && read_is_exact(&chacha_kmix_syscall_mixer),
          "either route: a kernel read is %d bytes (128 bits), no more",
          CHACHA_DRBG_MIX_BYTES);
    tu_split_stack_free(stack, STACK_BYTES);
}

/*
 * The kernel's bytes reach the key: with a kernel read that returns a
 * known G, the refill after 100 bytes equals that of an unmixed twin
 * whose key had G XORed in by hand (state words 4..7, the first 16 bytes
 * of K, little-endian).
 */
static const uint8_t known_g[CHACHA_DRBG_MIX_BYTES] = {
    0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
    0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10
};

static int mix_known(void **slot, uint8_t g[CHACHA_DRBG_MIX_BYTES])
{
    (void)slot;
    memcpy(g, known_g, CHACHA_DRBG_MIX_BYTES);
    return 1;
}

static const struct chacha_drbg_mixer known_mixer = { mix_known, NULL };

static void test_mix_reaches_key(void)
{
    struct chacha_drbg *m = seeded_drbg(), *t = seeded_drbg(),
                       *u = seeded_drbg();
    uint8_t a[2000], b[2000], c[2000];
    size_t i;

    if (!TU_OK(m != NULL && t != NULL && u != NULL, "three generators"))
        goto out;
    chacha_drbg_set_kernel_mix(m, &known_mixer);
    /* the first refill: mixed in m, by hand in t, not at all in u */
    for (i = 0; i < CHACHA_DRBG_MIX_BYTES / 4; i++)
        t->s->state[4 + i] ^= (uint32_t)known_g[4 * i]
                              | (uint32_t)known_g[4 * i + 1] << 8
                              | (uint32_t)known_g[4 * i + 2] << 16
                              | (uint32_t)known_g[4 * i + 3] << 24;
    chacha_drbg_generate(m, a, 100, NULL, 0);
    chacha_drbg_generate(t, b, 100, NULL, 0);
    chacha_drbg_generate(u, c, 100, NULL, 0);
    TU_OK(memcmp(a, b, 100) == 0 && memcmp(a, c, 100) != 0,
          "kernel mixing: a refill's key is K ^ G, G as the kernel gave it");
    /* a direct request mixes too: twice by hand, as m mixes twice more */
    for (i = 0; i < CHACHA_DRBG_MIX_BYTES / 4; i++)
        t->s->state[4 + i] ^= (uint32_t)known_g[4 * i]
                              | (uint32_t)known_g[4 * i + 1] << 8
                              | (uint32_t)known_g[4 * i + 2] << 16
                              | (uint32_t)known_g[4 * i + 3] << 24;
    chacha_drbg_generate(m, a, 1900, NULL, 0); /* 860 buffered, direct rest */
    chacha_drbg_generate(t, b, 1900, NULL, 0);
    TU_OK(memcmp(a, b, 1900) == 0,
          "kernel mixing: a direct request's key is K ^ G too");
out:
    chacha_drbg_free(m);
    chacha_drbg_free(t);
    chacha_drbg_free(u);
}

/* ------------------------------------------------------------------------
 * The request path: one predicate, every trigger, the source's seeds
 * ------------------------------------------------------------------------ */

/* A seed source for the core alone: numbered seeds, a counter to follow. */
struct test_source {
    unsigned int gets, fail, pred_res_seen;
    unsigned int counter;             /* a foreign parent's reseed counter */
    const struct chacha_drbg *parent; /* or one of ours */
};

static void numbered_seed(uint8_t *buf, size_t len, unsigned int n)
{
    size_t i;

    for (i = 0; i < len; i++)
        buf[i] = (uint8_t)(n * 31 + i);
}

static int ts_get(void *arg, uint8_t *buf, size_t len, int pred_res,
                  unsigned int *mark)
{
    struct test_source *ts = arg;

    if (ts->fail)
        return 0;
    numbered_seed(buf, len, ++ts->gets);
    ts->pred_res_seen += pred_res != 0;
    *mark = ts->parent != NULL ? chacha_drbg_reseed_counter(ts->parent)
                               : ts->counter;
    return 1;
}

static int ts_moved(void *arg, unsigned int mark)
{
    return ((struct test_source *)arg)->counter != mark;
}

/*
 * |d| with |ts| as its source, against a twin |ref| driven through the
 * mechanism: serve |n| bytes through the request path; the twin reseeds
 * with the next numbered seed if |want_reseed|.  1 if the bytes and the
 * number of seeds agree.
 */
static int request_step(struct chacha_drbg *d, struct test_source *ts,
                        struct chacha_drbg *ref, size_t n, int pred_res,
                        int want_reseed)
{
    static uint8_t got[CHACHA_DRBG_MAX_REQUEST], want[CHACHA_DRBG_MAX_REQUEST];
    uint8_t e[CHACHA_DRBG_SEED_BYTES];
    unsigned int before = ts->gets;

    if (!chacha_drbg_request(d, got, n, pred_res, NULL, 0))
        return 0;
    if (want_reseed) {
        numbered_seed(e, sizeof(e), before + 1);
        chacha_drbg_reseed(ref, NULL, 0, e, sizeof(e), NULL, 0);
    }
    chacha_drbg_generate(ref, want, n, NULL, 0);
    return ts->gets == before + (want_reseed != 0) && memcmp(got, want, n) == 0;
}

/* A source-seeded generator and its mechanism twin, both from seed 1. */
static int request_pair(struct test_source *ts, int foreign,
                        const struct chacha_drbg *parent,
                        struct chacha_drbg **d, struct chacha_drbg **ref)
{
    struct chacha_drbg_source src = { .get = ts_get, .arg = ts };
    uint8_t e[CHACHA_DRBG_SEED_BYTES];

    if (foreign)
        src.moved = ts_moved;
    if (parent != NULL)
        src.counter = chacha_drbg_reseed_counter_at(parent);
    memset(ts, 0, sizeof(*ts));
    ts->parent = parent;
    *d = chacha_drbg_new(tu_impl_under_test(), NULL, &src);
    *ref = chacha_drbg_new(tu_impl_under_test(), NULL, NULL);
    if (*d == NULL || *ref == NULL
        || !chacha_drbg_instantiate_fresh(*d, 0, NULL, 0))
        return 0;
    numbered_seed(e, sizeof(e), 1);
    chacha_drbg_instantiate(*ref, e, sizeof(e), NULL, 0);
    return 1;
}

static void test_request_path(void)
{
    struct chacha_drbg *d = NULL, *ref = NULL, *parent = seeded_drbg();
    struct test_source ts;
    int ok;
    size_t i;

    /* 16 MiB passed with the next request's bytes buffered */
    ok = request_pair(&ts, 0, NULL, &d, &ref);
    chacha_drbg_set_policy(d, 0, 0);
    chacha_drbg_set_policy(ref, 0, 0);
    for (i = 0; i < 15 && ok; i++)
        ok = request_step(d, &ts, ref, CHACHA_DRBG_MAX_REQUEST, 0, 0);
    ok = ok && request_step(d, &ts, ref, CHACHA_DRBG_MAX_REQUEST - 100, 0, 0)
         && request_step(d, &ts, ref, 200, 0, 0) && d->s->avail == 760;
    TU_OK(ok, "16 MiB + 100 bytes served from one seed, 760 buffered");
    TU_OK(request_step(d, &ts, ref, 16, 0, 1)
              && request_step(d, &ts, ref, 16, 0, 0),
          "16 MiB passed: a request the buffer holds reseeds first, once");

    /* calls: reseed_requests = 2, small requests */
    chacha_drbg_set_policy(d, 2, 0);
    chacha_drbg_set_policy(ref, 2, 0);
    /* two calls (16, 16) were served since the last seed */
    TU_OK(request_step(d, &ts, ref, 5, 0, 1)
              && request_step(d, &ts, ref, 0, 0, 0)
              && request_step(d, &ts, ref, 5, 0, 1)
              && request_step(d, &ts, ref, 5, 0, 0),
          "reseed_requests = 2: the third call of a seed reseeds first, a "
          "zero-length call counts");

    /* prediction resistance, bytes buffered, passed on to the source */
    TU_OK(request_step(d, &ts, ref, 5, 1, 1) && ts.pred_res_seen == 1,
          "prediction resistance: buffered bytes are not served, the source "
          "is asked with it");

    /* a foreign parent's counter, through moved() */
    chacha_drbg_free(d);
    chacha_drbg_free(ref);
    ok = request_pair(&ts, 1, NULL, &d, &ref);
    ok = ok && request_step(d, &ts, ref, 5, 0, 0);
    ts.counter++;
    TU_OK(ok && request_step(d, &ts, ref, 5, 0, 1)
              && request_step(d, &ts, ref, 5, 0, 0),
          "a parent that moved (moved()): the next request reseeds, once");

    /* one of ours as the parent, its counter read inline */
    chacha_drbg_free(d);
    chacha_drbg_free(ref);
    ok = parent != NULL && request_pair(&ts, 0, parent, &d, &ref);
    ok = ok && request_step(d, &ts, ref, 5, 0, 0)
         && request_step(d, &ts, ref, 5, 0, 0);
    if (parent != NULL) {
        static const uint8_t e[CHACHA_DRBG_SEED_BYTES] = { 9 };

        chacha_drbg_reseed(parent, NULL, 0, e, sizeof(e), NULL, 0);
    }
    TU_OK(ok && request_step(d, &ts, ref, 5, 0, 1)
              && request_step(d, &ts, ref, 5, 0, 0),
          "a chacha_drbg parent that reseeded: the next request reseeds, once");

    /* fail closed: a failing source wipes, and the next request retries */
    ts.fail = 1;
    chacha_drbg_set_policy(d, 1, 0);
    chacha_drbg_set_policy(ref, 1, 0);
    TU_OK(!chacha_drbg_request(d, ref->s->ks, 5, 0, NULL, 0)
              && chacha_drbg_is_zeroized(d),
          "a failing source: the request fails and the state is wiped");
    chacha_drbg_free(d);
    chacha_drbg_free(ref);
    chacha_drbg_free(parent);
}

static void body(void)
{
    struct chacha_drbg *d;
    unsigned char *stack;

    tu_diag("kernel %s, madvise honoured: %d", tu_impl_under_test()->name,
            chacha_secpage_madvise_works());
    /*
     * The fork modes first, getpid mode before the others: a mapping that
     * falls back to the atfork handler registers it for good, and where
     * madvise is ignored (qemu-user) every mapping does.
     */
    stack = tu_split_stack_new(STACK_BYTES);
    test_fork_mode(CHACHA_FORK_GETPID, "getpid", stack);
    test_fork_child_reseed(CHACHA_FORK_GETPID, "getpid");
    test_fork_mode(CHACHA_FORK_ATFORK, "atfork", stack);
    test_same_pid(CHACHA_FORK_ATFORK, "atfork");
    test_fork_child_reseed(CHACHA_FORK_ATFORK, "atfork");
    test_fork_mode(CHACHA_FORK_WIPEONFORK, "wipe-on-fork", stack);
    test_same_pid(CHACHA_FORK_WIPEONFORK, "wipe-on-fork");
    test_fork_child_reseed(CHACHA_FORK_WIPEONFORK, "wipe-on-fork");
    tu_split_stack_free(stack, STACK_BYTES);
    test_pinned();
    test_erasure();
    test_rekey_interval();
    test_policy();
    test_routes();
    test_mix_reaches_key();
    test_request_path();

    chacha_pool_trim(); /* no free slot: the next generator needs a mapping */
    lw_fail_mmap(1);
    d = chacha_drbg_new(tu_impl_under_test(), NULL, NULL);
    TU_OK(d == NULL && lw_mmap_fired(),
          "a failed mapping makes chacha_drbg_new fail");
    lw_fail_mmap(0);
    chacha_drbg_free(d);
}

int main(void)
{
    return tu_main_per_impl(body);
}
