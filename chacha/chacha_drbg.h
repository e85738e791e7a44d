/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The arc4random-style ChaCha20 generator of DESIGN.md section 3 and its
 * whole request path: the reseed policy of section 4 (every trigger, in one
 * predicate), fetching a seed through the source the caller gives it,
 * absorbing, serving.  Free of OpenSSL types.  The caller serialises
 * access; nothing here blocks or allocates on the generate path, and no
 * system call is made there but the source's (when a reseed is due) and,
 * with kernel mixing on, one non-blocking read of the kernel's generator
 * per refill and per direct request.
 */
#ifndef CHACHARNG_CHACHA_DRBG_H
#define CHACHARNG_CHACHA_DRBG_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "chacha.h"
#include "secpage.h"
#include "statepool.h"

#define CHACHA_DRBG_REFILL_BLOCKS 16
#define CHACHA_DRBG_KS_BYTES (CHACHA_DRBG_REFILL_BLOCKS * CHACHA_BLOCK_BYTES)
#define CHACHA_DRBG_BUF_BYTES (CHACHA_DRBG_KS_BYTES - CHACHA_BLOCK_BYTES)
#define CHACHA_DRBG_ABSORB_CHUNK (CHACHA_KEY_BYTES + CHACHA_NONCE_BYTES)
#define CHACHA_DRBG_SEED_BYTES 48
#define CHACHA_DRBG_STRENGTH 256
#define CHACHA_DRBG_RESEED_BYTES ((uint64_t)16 << 20)
#define CHACHA_DRBG_DEFAULT_RESEED_REQUESTS 65536u
#define CHACHA_DRBG_DEFAULT_RESEED_INTERVAL 3600
/* The most one generate call serves; larger requests are served as calls
 * of this size (EVP_RAND_generate splits at max_request the same way). */
#define CHACHA_DRBG_MAX_REQUEST ((size_t)1 << 20)

/*
 * Everything secret, in a slot of a wipe-on-fork mapping (statepool.h):
 * all zero = not seeded.  The inline path reads ks, avail, the counts,
 * seed_time and seeded; the other fields share the slot so that one wipe
 * covers every secret.
 */
struct chacha_drbg_secret {
    uint32_t state[16]; /* constants, K, counter (always 0 at rest), N */
    uint8_t ks[CHACHA_DRBG_KS_BYTES]; /* last refill; unread bytes at the end */
    size_t avail;      /* unread bytes: ks[KS_BYTES - avail .. KS_BYTES) */
    uint64_t calls;    /* generate calls served since the last (re)seed */
    uint64_t bytes;    /* bytes produced since the last (re)seed */
    time_t seed_time;  /* wall-clock time of the last (re)seed */
    uint32_t fork_gen; /* chacha_fork_generation() at (re)seed (fallbacks) */
    pid_t pid;         /* getpid() at (re)seed (fallbacks) */
    uint32_t seeded;   /* CHACHA_DRBG_SEEDED, or 0 in a fork child */
};

/*
 * Kernel mixing (DESIGN.md section 3): a mixer's read(|slot|, |g|) fills
 * |g| with CHACHA_DRBG_MIX_BYTES fresh bytes from the kernel's generator
 * without ever blocking, and returns 1, or 0 if none could be had (that
 * refill then goes on unmixed).  *|slot| is the generator's own word for its mixer:
 * NULL when the mixer is set, kept between reads (kmix.c keeps the
 * generator's vDSO state there), and handed to release() (if not NULL)
 * when the generator is freed or given another mixer.  A generator is
 * never read by two threads at once, so neither is its slot.  kmix.h has
 * the mixer the provider uses.
 */
/*
 * 128 bits, XORed into the first 16 bytes of K (DESIGN.md section 3: the
 * read size goes by cost).  The vDSO refills its own batch of keystream
 * every few reads, so a 16-byte read costs markedly less than a 32-byte
 * one (the kmix table of `make bench` shows a read's time).
 */
#define CHACHA_DRBG_MIX_BYTES 16
typedef int chacha_drbg_mix_fn(void **slot, uint8_t g[CHACHA_DRBG_MIX_BYTES]);
typedef void chacha_drbg_mix_release_fn(void *slot);
struct chacha_drbg_mixer {
    chacha_drbg_mix_fn *read;
    chacha_drbg_mix_release_fn *release;
};

/*
 * Where a generator's seeds come from: filled in by its owner (the
 * provider: a parent RAND, the core's entropy upcall, getrandom) and
 * copied at chacha_drbg_new().
 *
 * get(arg, buf, len, pred_res, mark) writes |len| (= CHACHA_DRBG_SEED_BYTES)
 * fresh bytes to |buf| and returns 1, or returns 0 (having raised its own
 * error) with nothing usable in |buf|.  |pred_res| is passed on to a
 * parent.  If the source has a reseed counter to follow (a parent's), get
 * stores in *|mark| its value as of the seed just handed out, read in the
 * same critical section as the seed.
 *
 * The parent moved when its counter differs from the mark of our last
 * seeding: read inline through |counter| when it points at one (another
 * chacha_drbg's, chacha_drbg_reseed_counter_at()), else asked of
 * moved(arg, mark) when that is set; with neither, never.
 */
typedef int chacha_drbg_get_seed_fn(void *arg, uint8_t *buf, size_t len,
                                    int pred_res, unsigned int *mark);
typedef int chacha_drbg_moved_fn(void *arg, unsigned int mark);
struct chacha_drbg_source {
    chacha_drbg_get_seed_fn *get;
    chacha_drbg_moved_fn *moved;
    const unsigned int *counter;
    void *arg;
};

/*
 * The part of a generator that the inline code below (the reseed predicate
 * and chacha_drbg_request()) reads without a call; the rest (kernel,
 * kernel mixing) is chacha_drbg.c's alone.  Callers use the functions, never
 * these fields.
 */
struct chacha_drbg {
    struct chacha_drbg_secret *s;
    enum chacha_fork_mode fork_mode;
    unsigned int reseed_requests; /* 0 = no limit on calls per seed */
    time_t reseed_interval;       /* seconds; 0 = no time limit */
    struct chacha_drbg_source src;
    unsigned int parent_mark;    /* the source's counter at our last seed */
    unsigned int reseed_counter; /* bumped per (re)seed (atomic) */
};

/*
 * Allocate a generator using kernel |impl|, mixing with |mix| (NULL: off)
 * and seeded from |src| (copied; NULL: no source, so every reseed the
 * request path finds due fails).  Returns NULL on failure.
 */
struct chacha_drbg *chacha_drbg_new(const struct chacha_impl *impl,
                                    const struct chacha_drbg_mixer *mix,
                                    const struct chacha_drbg_source *src);

/* Wipe and release everything. |d| may be NULL. */
void chacha_drbg_free(struct chacha_drbg *d);

/*
 * The reseed policy of DESIGN.md section 4: a reseed is due after
 * |reseed_requests| calls (0: no limit) and after |reseed_interval| seconds
 * (0: no limit).  New generators have 65536 calls and 3600 seconds.
 */
void chacha_drbg_set_policy(struct chacha_drbg *d, unsigned int reseed_requests,
                            time_t reseed_interval);
void chacha_drbg_get_policy(const struct chacha_drbg *d,
                            unsigned int *reseed_requests,
                            time_t *reseed_interval);

/* The kernel that computes the keystream (a new one applies at once). */
const struct chacha_impl *chacha_drbg_impl(const struct chacha_drbg *d);
void chacha_drbg_set_impl(struct chacha_drbg *d,
                          const struct chacha_impl *impl);

/*
 * Kernel mixing: |mix| (kept by reference) reads before every refill and
 * direct request, NULL turns mixing off; the old mixer's slot is released.  chacha_drbg_mix_failures() counts the calls that
 * returned 0, over the generator's life.
 */
void chacha_drbg_set_kernel_mix(struct chacha_drbg *d,
                                const struct chacha_drbg_mixer *mix);
int chacha_drbg_kernel_mix_on(const struct chacha_drbg *d);
unsigned int chacha_drbg_mix_failures(const struct chacha_drbg *d);

/* time(NULL) at the last instantiate or reseed. */
time_t chacha_drbg_seed_time(const struct chacha_drbg *d);

/*
 * The count of seedings (instantiate and every reseed) over the
 * generator's life, which children follow: its value, and where a child's
 * source can read it inline (struct chacha_drbg_source's |counter|).
 */
unsigned int chacha_drbg_reseed_counter(const struct chacha_drbg *d);
const unsigned int *chacha_drbg_reseed_counter_at(const struct chacha_drbg *d);

/* ------------------------------------------------------------------------
 * The request path: what every front door calls
 * ------------------------------------------------------------------------ */

/*
 * Instantiate from a seed of the source: K = 0, N = 0, absorb(E || |pers|).
 * Returns 1, or 0 with the generator wiped (not seeded) if the source
 * failed.
 */
int chacha_drbg_instantiate_fresh(struct chacha_drbg *d, int pred_res,
                                  const uint8_t *pers, size_t perslen);

/*
 * Reseed from a seed E of the source: absorb(|ent| || E || |adin|), as
 * chacha_drbg_reseed().  Returns 1, or 0 with the generator wiped if the
 * source failed.
 */
int chacha_drbg_reseed_fresh(struct chacha_drbg *d, int pred_res,
                             const uint8_t *ent, size_t entlen,
                             const uint8_t *adin, size_t adinlen);

/*
 * The out-of-line part of chacha_drbg_request(): serve |n| bytes as calls
 * of at most CHACHA_DRBG_MAX_REQUEST, each preceded by the reseed
 * predicate (and a reseed from the source, absorbing |adin|, when it
 * holds; otherwise |adin| is absorbed alone).  Returns 1, or 0 with the
 * generator wiped if a reseed was due and the source failed; bytes of
 * earlier calls may then have been written.
 */
int chacha_drbg_request_slow(struct chacha_drbg *d, uint8_t *out, size_t n,
                             int pred_res, const uint8_t *adin, size_t adinlen);

/* ------------------------------------------------------------------------
 * The mechanism, with the entropy given: chacha_drbg.c's request path and
 * the core's own tests only.  None of these decides anything.
 * ------------------------------------------------------------------------ */

/*
 * Seed from scratch: K = 0, N = 0, then absorb(|fresh_entropy| || |pers|).
 * Resets the call and byte counts and the seed time.
 */
void chacha_drbg_instantiate(struct chacha_drbg *d,
                             const uint8_t *fresh_entropy, size_t fresh_len,
                             const uint8_t *pers, size_t perslen);

/*
 * absorb(|caller_entropy| || |fresh_entropy| || |adin|), as reseed(E, adin)
 * of DESIGN.md section 3: |caller_entropy| is what the application passed
 * to reseed (usually nothing), |fresh_entropy| the 48 bytes E from the
 * entropy source.  A generator that is not seeded (see
 * chacha_drbg_is_seeded()) starts from K = 0, N = 0 as instantiate does,
 * so a fork child never builds on the key it inherited.  Resets the counts.
 */
void chacha_drbg_reseed(struct chacha_drbg *d, const uint8_t *caller_entropy,
                        size_t caller_len, const uint8_t *fresh_entropy,
                        size_t fresh_len, const uint8_t *adin, size_t adinlen);

/*
 * absorb(|adin|), then write |n| bytes to |out| and count one call, with no
 * reseed decision: chacha_drbg_request() is the front door.
 */
void chacha_drbg_generate(struct chacha_drbg *d, uint8_t *out, size_t n,
                          const uint8_t *adin, size_t adinlen);

/* Wipe all secret state (uninstantiate); the generator is unseeded after. */
void chacha_drbg_wipe(struct chacha_drbg *d);

/* 1 if every byte of the secret state is zero. */
int chacha_drbg_is_zeroized(const struct chacha_drbg *d);

/* ------------------------------------------------------------------------
 * Inline: the reseed decision and the small-request path
 * ------------------------------------------------------------------------ */

#define CHACHA_DRBG_SEEDED 0x5eed5eedu

/*
 * The fallback fork checks (atfork generation, getpid), out of line: they
 * make a system call anyway.  Only for chacha_drbg_is_seeded().
 */
int chacha_drbg_same_process_fallback(const struct chacha_drbg *d);

/*
 * 1 if the generator is seeded in this process: instantiated or reseeded,
 * not wiped since, and no fork since.  "Seeded" means this and nothing
 * else, everywhere.  Under wipe-on-fork a child's page reads all zero, so
 * the flag alone answers, inline; the fallback modes also ask the process.
 */
static inline int chacha_drbg_is_seeded(const struct chacha_drbg *d)
{
    if (d->s->seeded != CHACHA_DRBG_SEEDED)
        return 0;
    return d->fork_mode == CHACHA_FORK_WIPEONFORK
           || chacha_drbg_same_process_fallback(d);
}

/*
 * 1 if the source's counter moved since our last seeding (see the source).
 * A source with neither a counter nor moved() gets our own mark as its
 * counter at chacha_drbg_new(), so one load answers "never" for it too.
 */
static inline int chacha_drbg_parent_moved(const struct chacha_drbg *d)
{
    if (__builtin_expect(d->src.counter != NULL, 1))
        return __atomic_load_n(d->src.counter, __ATOMIC_RELAXED)
               != d->parent_mark;
    return d->src.moved(d->src.arg, d->parent_mark);
}

/*
 * The reseed predicate, the one definition of DESIGN.md section 4: a
 * reseed must come before the next call if prediction resistance is asked
 * (|pred_res|), or the generator is not seeded (never, wiped or forked),
 * or it has served reseed_requests calls or 16 MiB since its last seeding,
 * or the reseed interval is over (or the clock went back), or the parent
 * moved.  The clock is |now|, or time(2) if |read_clock|, read only when a
 * time limit is set and nothing cheaper has answered already; the parent
 * is asked last, as the dearest.  Callers use the two forms below.
 */
static inline int chacha_drbg_due(const struct chacha_drbg *d, int pred_res,
                                  int read_clock, time_t now)
{
    const struct chacha_drbg_secret *s = d->s;

    if (pred_res || !chacha_drbg_is_seeded(d)
        || (d->reseed_requests != 0 && s->calls >= d->reseed_requests)
        || s->bytes >= CHACHA_DRBG_RESEED_BYTES)
        return 1;
    if (d->reseed_interval != 0) {
        if (read_clock)
            now = time(NULL);
        if (now < s->seed_time || now - s->seed_time >= d->reseed_interval)
            return 1;
    }
    return chacha_drbg_parent_moved(d);
}

/* The predicate at time |now| (tests set the clock this way). */
static inline int chacha_drbg_reseed_due_at(const struct chacha_drbg *d,
                                            int pred_res, time_t now)
{
    return chacha_drbg_due(d, pred_res, 0, now);
}

/* The predicate now, for every request. */
static inline int chacha_drbg_reseed_due(const struct chacha_drbg *d,
                                         int pred_res)
{
    return chacha_drbg_due(d, pred_res, 1, 0);
}

/* Count one generate call of |n| bytes toward the reseed limits. */
static inline void chacha_drbg_count(struct chacha_drbg_secret *s, size_t n)
{
    s->calls++;
    s->bytes += n;
}

/*
 * Hand out the |n| <= avail bytes at the buffer front to |out| and zero
 * them there: the caller's copy is the only one left.  Plain stores are
 * enough, as in memcpy_and_zero_src() of Linux's vDSO getrandom: the buffer
 * outlives the call, so no compiler may drop them.  Small sizes copy two
 * overlapping words rather than call libc.
 */
/*
 * The |n| bytes at |p| (|w| <= |n| <= 2 |w|, |w| a constant 4 or 8) to
 * |out| as two overlapping |w|-byte words, then zeroed.
 */
static inline void chacha_drbg_take_words(uint8_t *out, uint8_t *p, size_t n,
                                          size_t w)
{
    uint64_t head = 0, tail = 0;

    memcpy(&head, p, w);
    memcpy(&tail, p + n - w, w);
    memcpy(out, &head, w);
    memcpy(out + n - w, &tail, w);
    memset(p, 0, w);
    memset(p + n - w, 0, w);
}

static inline void chacha_drbg_take_buffered(struct chacha_drbg_secret *s,
                                             uint8_t *out, size_t n)
{
    uint8_t *p = s->ks + CHACHA_DRBG_KS_BYTES - s->avail;
    size_t i;

    s->avail -= n;
    if (n >= 8 && n <= 16) {
        chacha_drbg_take_words(out, p, n, 8);
    } else if (n >= 4 && n < 8) {
        chacha_drbg_take_words(out, p, n, 4);
    } else if (n < 4) {
        for (i = 0; i < n; i++) {
            out[i] = p[i];
            p[i] = 0;
        }
    } else {
        memcpy(out, p, n);
        memset(p, 0, n);
    }
}

/*
 * The request, the one entry of every front door: |n| bytes to |out| as
 * generate(n, adin) of DESIGN.md section 3, with the reseed policy and
 * prediction resistance (|pred_res|) applied.  A small request with no
 * additional input, whose bytes are all buffered and for which the
 * predicate finds no reseed due, is served here, inline: under wipe-on-fork
 * and with no parent to ask, nothing leaves the inline code then but
 * time(2), and that only when a time limit is set.  Everything else is
 * chacha_drbg_request_slow()'s, which decides again (once per seed, the
 * predicate holds twice).  Returns 1, or 0 as chacha_drbg_request_slow().
 */
static inline int chacha_drbg_request(struct chacha_drbg *d, uint8_t *out,
                                      size_t n, int pred_res,
                                      const uint8_t *adin, size_t adinlen)
{
    struct chacha_drbg_secret *s = d->s;

    if (n <= s->avail && adinlen == 0 && !pred_res) {
        if (__builtin_expect(!chacha_drbg_reseed_due(d, 0), 1)) {
            chacha_drbg_count(s, n);
            chacha_drbg_take_buffered(s, out, n);
            return 1;
        }
        /*
         * The arguments known here written as constants, so that only
         * |d|, |out| and |n| must live across the clock read.
         */
        return chacha_drbg_request_slow(d, out, n, 0, NULL, 0);
    }
    return chacha_drbg_request_slow(d, out, n, pred_res, adin, adinlen);
}

#endif
