/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Theory of operation
 * -------------------
 * The state is a ChaCha20 key K and nonce N, kept as a ready RFC 8439 state
 * (counter word always 0 at rest), plus the keystream of the last refill.
 * A refill computes 16 blocks under (K, N) at counters 0..15; block 0 at
 * once becomes the next K||N (its first 44 bytes) and is wiped, so the key
 * that made any output byte is gone before that byte is returned (fast key
 * erasure).  The other 15 blocks, 960 bytes, are served oldest first and
 * every byte is wiped as it is handed out.
 *
 * Requests larger than the buffer skip it: one block rekeys, the following
 * blocks are written straight into the caller's memory (one kernel call
 * for both, no copy), then the key moves.
 *
 * Kernel mixing, when the caller turned it on: immediately before the
 * keystream of a refill or of a direct request is computed, K ^= G, where
 * G is 16 fresh bytes from the kernel (getrandom(2), never blocking) that
 * go into the first 16 bytes of K, and G is wiped.  Two restored copies of one memory snapshot therefore part
 * ways at the first refill after the restore, so at most the 960 unread
 * buffered bytes repeat, and only if the kernel's own generator diverged
 * between them.  A failed read skips the step and is counted; it never
 * fails the call.  Off, the output is exactly that of the plain
 * construction.
 *
 * Seeding material is absorbed 44 bytes at a time: each chunk is XORed into
 * a fresh block 0 and the result becomes K||N.  Any absorb empties the
 * buffer, so no byte computed under an old key survives new input.
 *
 * A reseed is due when prediction resistance is asked, after
 * reseed_requests calls, after 16 MiB, after the reseed interval, when the
 * parent (the seed source) reseeded since we last did, and after fork.
 * The request path decides it with one predicate, chacha_drbg_reseed_due(),
 * before each call it serves, fetches the seed through the source its
 * owner gave it, and bumps the counts in one place (chacha_drbg_count()
 * for calls and bytes, mark_seeded() for a seeding).  A child is seen in
 * one of three ways
 * (secpage.c): the wipe-on-fork page reads all zero in the child, so
 * "seeded" is false, whatever made the child; or, without wipe-on-fork,
 * the atfork generation moved (fork() only) or getpid() changed (every
 * split into a new pid); or getpid() alone where no atfork handler could
 * be registered.  The predicate is inline in the header so that the
 * small-request path makes no call to take it; a child that reseeds starts
 * from K = 0, N = 0, in every mode.
 */
#include "chacha_drbg.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wipe.h"

_Static_assert(sizeof(struct chacha_drbg_secret) <= CHACHA_POOL_SLOT_BYTES,
               "a state fits a pool slot");

/*
 * The whole generator: the part that chacha_drbg.h shows, for the inline
 * path, then what only this file reads.  A struct chacha_drbg * always
 * points at the |shown| member of one of these.
 */
struct drbg_whole {
    struct chacha_drbg shown; /* first, so the two pointers are one */
    const struct chacha_impl *impl;
    struct chacha_slotpool_map *home; /* the mapping that holds shown.s */
    const struct chacha_drbg_mixer *kernel_mix; /* NULL: mixing off */
    void *mix_slot;            /* the mixer's word for this generator */
    unsigned int mix_failures; /* kernel reads that failed (atomic) */
};

static struct drbg_whole *whole(struct chacha_drbg *d)
{
    return (struct drbg_whole *)d;
}

static const struct drbg_whole *whole_const(const struct chacha_drbg *d)
{
    return (const struct drbg_whole *)d;
}

struct chacha_drbg *chacha_drbg_new(const struct chacha_impl *impl,
                                    const struct chacha_drbg_mixer *mix,
                                    const struct chacha_drbg_source *src)
{
    struct drbg_whole *w = calloc(1, sizeof(*w));
    struct chacha_drbg *d;

    if (w == NULL)
        return NULL;
    d = &w->shown;
    d->s = chacha_pool_get(sizeof(*d->s), &d->fork_mode, &w->home);
    if (d->s == NULL) {
        free(w);
        return NULL;
    }
    w->impl = impl;
    w->kernel_mix = mix;
    if (src != NULL)
        d->src = *src;
    if (d->src.counter == NULL && d->src.moved == NULL)
        d->src.counter = &d->parent_mark; /* never moves */
    d->reseed_requests = CHACHA_DRBG_DEFAULT_RESEED_REQUESTS;
    d->reseed_interval = CHACHA_DRBG_DEFAULT_RESEED_INTERVAL;
    return d;
}

void chacha_drbg_set_policy(struct chacha_drbg *d, unsigned int reseed_requests,
                            time_t reseed_interval)
{
    d->reseed_requests = reseed_requests;
    d->reseed_interval = reseed_interval;
}

void chacha_drbg_get_policy(const struct chacha_drbg *d,
                            unsigned int *reseed_requests,
                            time_t *reseed_interval)
{
    *reseed_requests = d->reseed_requests;
    *reseed_interval = d->reseed_interval;
}

const struct chacha_impl *chacha_drbg_impl(const struct chacha_drbg *d)
{
    return whole_const(d)->impl;
}

void chacha_drbg_set_impl(struct chacha_drbg *d, const struct chacha_impl *impl)
{
    whole(d)->impl = impl;
}

/* Give the mixer's word for this generator back, if it kept one. */
static void release_mix_slot(struct drbg_whole *w)
{
    if (w->kernel_mix != NULL && w->kernel_mix->release != NULL)
        w->kernel_mix->release(w->mix_slot);
    w->mix_slot = NULL;
}

void chacha_drbg_set_kernel_mix(struct chacha_drbg *d,
                                const struct chacha_drbg_mixer *mix)
{
    struct drbg_whole *w = whole(d);

    if (mix == w->kernel_mix)
        return;
    release_mix_slot(w);
    w->kernel_mix = mix;
}

int chacha_drbg_kernel_mix_on(const struct chacha_drbg *d)
{
    return whole_const(d)->kernel_mix != NULL;
}

unsigned int chacha_drbg_mix_failures(const struct chacha_drbg *d)
{
    return __atomic_load_n(&whole_const(d)->mix_failures, __ATOMIC_RELAXED);
}

time_t chacha_drbg_seed_time(const struct chacha_drbg *d)
{
    return d->s->seed_time;
}

unsigned int chacha_drbg_reseed_counter(const struct chacha_drbg *d)
{
    return __atomic_load_n(&d->reseed_counter, __ATOMIC_RELAXED);
}

const unsigned int *chacha_drbg_reseed_counter_at(const struct chacha_drbg *d)
{
    return &d->reseed_counter;
}

void chacha_drbg_free(struct chacha_drbg *d)
{
    if (d == NULL)
        return;
    release_mix_slot(whole(d));
    chacha_pool_put(d->s, whole(d)->home); /* wipes the slot */
    free(whole(d));
}

/* K||N = X[0..44), then wipe X, which held the new key. */
static void set_key_nonce(struct chacha_drbg_secret *s, uint8_t x[64])
{
    chacha_state_init(s->state, x, 0, x + CHACHA_KEY_BYTES);
    chacha_wipe(x, CHACHA_BLOCK_BYTES);
}

struct piece {
    const uint8_t *p;
    size_t len;
};

/*
 * absorb() of the concatenation of |n| pieces, 44 bytes at a time across
 * piece boundaries.  Block 0 of ks is free scratch: it only ever holds a
 * rekey block, wiped as soon as it is used.
 */
static void absorb(struct chacha_drbg *d, const struct piece *pc, size_t n)
{
    struct chacha_drbg_secret *s = d->s;
    uint8_t *x = s->ks;
    size_t total = 0, i, off = 0, fill;

    for (i = 0; i < n; i++)
        total += pc[i].len;
    if (total == 0)
        return;

    i = 0;
    while (total > 0) {
        whole(d)->impl->blocks(x, s->state, 1);
        for (fill = 0; fill < CHACHA_DRBG_ABSORB_CHUNK && total > 0;) {
            size_t take;

            while (off == pc[i].len) {
                i++;
                off = 0;
            }
            take = pc[i].len - off;
            if (take > CHACHA_DRBG_ABSORB_CHUNK - fill)
                take = CHACHA_DRBG_ABSORB_CHUNK - fill;
            for (size_t j = 0; j < take; j++)
                x[fill + j] ^= pc[i].p[off + j];
            fill += take;
            off += take;
            total -= take;
        }
        set_key_nonce(s, x);
    }
    /* unread keystream was made under the key just replaced */
    chacha_wipe(s->ks, sizeof(s->ks));
    s->avail = 0;
}

static void mark_seeded(struct chacha_drbg *d)
{
    struct chacha_drbg_secret *s = d->s;

    s->calls = 0;
    s->bytes = 0;
    s->seed_time = time(NULL);
    /* children compare it with the mark they took at their last seeding */
    __atomic_add_fetch(&d->reseed_counter, 1, __ATOMIC_RELAXED);
    if (d->fork_mode != CHACHA_FORK_WIPEONFORK) {
        /* both fallback signals, whichever the mode checks */
        s->fork_gen = chacha_fork_generation();
        s->pid = getpid();
    }
    s->seeded = CHACHA_DRBG_SEEDED;
}

/* K = 0, N = 0, empty buffer; whatever a previous seeding left goes first. */
static void start_from_zero(struct chacha_drbg *d)
{
    static const uint8_t zero[CHACHA_KEY_BYTES];

    chacha_drbg_wipe(d);
    chacha_state_init(d->s->state, zero, 0, zero);
}

/* Seed bytes and new keys pass through registers: zeroed on return. */
CHACHA_CLEAR_REGS
void chacha_drbg_instantiate(struct chacha_drbg *d,
                             const uint8_t *fresh_entropy, size_t fresh_len,
                             const uint8_t *pers, size_t perslen)
{
    struct piece pc[2] = { { fresh_entropy, fresh_len }, { pers, perslen } };

    start_from_zero(d);
    absorb(d, pc, 2);
    mark_seeded(d);
}

CHACHA_CLEAR_REGS
void chacha_drbg_reseed(struct chacha_drbg *d, const uint8_t *caller_entropy,
                        size_t caller_len, const uint8_t *fresh_entropy,
                        size_t fresh_len, const uint8_t *adin, size_t adinlen)
{
    struct piece pc[3] = { { caller_entropy, caller_len },
                           { fresh_entropy, fresh_len },
                           { adin, adinlen } };

    /*
     * Wiped, never seeded or a fork child: the same start in every fork
     * mode (a wipe-on-fork child's page is all zero, constants included).
     */
    if (!chacha_drbg_is_seeded(d))
        start_from_zero(d);
    absorb(d, pc, 3);
    mark_seeded(d);
}

int chacha_drbg_same_process_fallback(const struct chacha_drbg *d)
{
    const struct chacha_drbg_secret *s = d->s;

    switch (d->fork_mode) {
    case CHACHA_FORK_WIPEONFORK:
        /* a child of any kind would have found the page zeroed */
        return 1;
    case CHACHA_FORK_ATFORK:
        /* fork() ran the handler, even into a child with our old pid */
        if (s->fork_gen != chacha_fork_generation())
            return 0;
        /*
         * _Fork(), clone() without CLONE_VM and syscall(SYS_fork) run no
         * handler: the pid tells those.  It is asked every time, because
         * a cached pid would be stale in exactly those children (glibc
         * dropped its own cache in 2.25 for that reason).
         */
        /* fall through */
    case CHACHA_FORK_GETPID:
    default:
        return s->pid == getpid();
    }
}

/* K ^= G, G fresh from the kernel, if kernel mixing is on (see the top). */
static void mix_kernel(struct chacha_drbg *d)
{
    struct drbg_whole *w = whole(d);
    uint8_t g[CHACHA_DRBG_MIX_BYTES];
    uint32_t *k = d->s->state + 4;
    size_t i;

    if (w->kernel_mix == NULL)
        return;
    if (w->kernel_mix->read(&w->mix_slot, g)) {
        for (i = 0; i < CHACHA_DRBG_MIX_BYTES / 4; i++)
            k[i] ^= (uint32_t)g[4 * i] | (uint32_t)g[4 * i + 1] << 8
                    | (uint32_t)g[4 * i + 2] << 16
                    | (uint32_t)g[4 * i + 3] << 24;
    } else {
        __atomic_add_fetch(&w->mix_failures, 1, __ATOMIC_RELAXED);
    }
    /* the kernel's bytes, now part of the key (or a failed read's debris) */
    chacha_wipe(g, sizeof(g));
}

static void refill(struct chacha_drbg *d)
{
    struct chacha_drbg_secret *s = d->s;

    mix_kernel(d);
    whole(d)->impl->blocks(s->ks, s->state, CHACHA_DRBG_REFILL_BLOCKS);
    set_key_nonce(s, s->ks);
    s->avail = CHACHA_DRBG_BUF_BYTES;
}

/*
 * Serve |r| > 960 bytes: block 0 is the next key, blocks 1.. go straight
 * into |out|, in one keyed-batch call (chacha.h), so that a kernel can
 * compute the key block beside the caller's and no keystream passes
 * through a copy.  The key block and a final partial block go to the
 * (empty) buffer, wiped there.
 */
static void generate_direct(struct chacha_drbg *d, uint8_t *out, size_t r)
{
    struct chacha_drbg_secret *s = d->s;
    size_t full = r / CHACHA_BLOCK_BYTES, tail = r % CHACHA_BLOCK_BYTES;
    uint8_t *y = s->ks, *last = s->ks + CHACHA_BLOCK_BYTES;

    mix_kernel(d);
    whole(d)->impl->blocks_key(y, out, s->state, full);
    if (tail != 0) {
        s->state[CHACHA_COUNTER_WORD] = (uint32_t)(1 + full);
        whole(d)->impl->blocks(last, s->state, 1);
        memcpy(out + full * CHACHA_BLOCK_BYTES, last, tail);
        /* keystream that nobody will be handed */
        chacha_wipe(last, CHACHA_BLOCK_BYTES);
    }
    set_key_nonce(s, y); /* also puts the counter word back to 0 */
}

CHACHA_CLEAR_REGS
void chacha_drbg_generate(struct chacha_drbg *d, uint8_t *out, size_t n,
                          const uint8_t *adin, size_t adinlen)
{
    struct chacha_drbg_secret *s = d->s;
    size_t take;

    if (adinlen != 0) {
        struct piece pc = { adin, adinlen };

        absorb(d, &pc, 1);
    }
    chacha_drbg_count(s, n);

    take = n < s->avail ? n : s->avail;
    chacha_drbg_take_buffered(s, out, take);
    n -= take;
    if (n == 0)
        return;
    out += take;
    if (n > CHACHA_DRBG_BUF_BYTES) {
        generate_direct(d, out, n);
    } else {
        refill(d);
        chacha_drbg_take_buffered(s, out, n);
    }
}

void chacha_drbg_wipe(struct chacha_drbg *d)
{
    /* keys, nonce, buffered keystream, counters */
    chacha_wipe(d->s, sizeof(*d->s));
}

int chacha_drbg_is_zeroized(const struct chacha_drbg *d)
{
    const volatile uint8_t *p = (const volatile uint8_t *)d->s;
    uint8_t acc = 0;
    size_t i;

    for (i = 0; i < sizeof(*d->s); i++)
        acc |= p[i];
    return acc == 0;
}

/* ------------------------------------------------------------------------
 * The request path: the source's seed, absorbed, then the request served
 * ------------------------------------------------------------------------ */

/*
 * Fetch E from the source into |e|, noting the source's counter as of E.
 * Returns 1, or 0 with |d| wiped: fail closed, nothing unseeded is output
 * and the next request tries again.
 */
static int fetch_seed(struct chacha_drbg *d, uint8_t e[CHACHA_DRBG_SEED_BYTES],
                      int pred_res)
{
    unsigned int mark = d->parent_mark;

    if (d->src.get == NULL
        || !d->src.get(d->src.arg, e, CHACHA_DRBG_SEED_BYTES, pred_res,
                       &mark)) {
        /* a failed source's debris, if any */
        chacha_wipe(e, CHACHA_DRBG_SEED_BYTES);
        chacha_drbg_wipe(d);
        return 0;
    }
    d->parent_mark = mark;
    return 1;
}

int chacha_drbg_instantiate_fresh(struct chacha_drbg *d, int pred_res,
                                  const uint8_t *pers, size_t perslen)
{
    uint8_t e[CHACHA_DRBG_SEED_BYTES];

    if (!fetch_seed(d, e, pred_res))
        return 0;
    chacha_drbg_instantiate(d, e, sizeof(e), pers, perslen);
    /* the seed, now in the key */
    chacha_wipe(e, sizeof(e));
    return 1;
}

int chacha_drbg_reseed_fresh(struct chacha_drbg *d, int pred_res,
                             const uint8_t *ent, size_t entlen,
                             const uint8_t *adin, size_t adinlen)
{
    uint8_t e[CHACHA_DRBG_SEED_BYTES];

    if (!fetch_seed(d, e, pred_res))
        return 0;
    chacha_drbg_reseed(d, ent, entlen, e, sizeof(e), adin, adinlen);
    /* the seed, now in the key */
    chacha_wipe(e, sizeof(e));
    return 1;
}

int chacha_drbg_request_slow(struct chacha_drbg *d, uint8_t *out, size_t n,
                             int pred_res, const uint8_t *adin, size_t adinlen)
{
    do {
        size_t chunk =
            n < CHACHA_DRBG_MAX_REQUEST ? n : CHACHA_DRBG_MAX_REQUEST;

        if (chacha_drbg_reseed_due(d, pred_res)) {
            if (!chacha_drbg_reseed_fresh(d, pred_res, NULL, 0, adin, adinlen))
                return 0;
            /* absorbed once, by the reseed */
            chacha_drbg_generate(d, out, chunk, NULL, 0);
        } else {
            chacha_drbg_generate(d, out, chunk, adin, adinlen);
        }
        out += chunk;
        n -= chunk;
    } while (n > 0);
    return 1;
}
