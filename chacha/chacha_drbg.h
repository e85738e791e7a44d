/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The arc4random-style ChaCha20 generator of DESIGN.md section 3, with the
 * reseed policy of section 4, free of OpenSSL types.  The caller supplies
 * entropy and serialises access; this file never blocks or allocates on
 * the generate path, and makes no system call there unless kernel mixing is
 * on (then the provider's callback reads the kernel's generator, without
 * blocking, once per refill and per direct request).
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
/* Direct requests up to this many blocks (plus the rekey block) are made in
 * one kernel call through scratch on the stack: SIMD kernels pay a fixed
 * latency per call that would otherwise dominate requests of a few KiB. */
#define CHACHA_DRBG_WIDE_BLOCKS 64
#define CHACHA_DRBG_SEED_BYTES 48
#define CHACHA_DRBG_STRENGTH 256
#define CHACHA_DRBG_RESEED_BYTES ((uint64_t)16 << 20)
#define CHACHA_DRBG_DEFAULT_RESEED_REQUESTS 65536u
#define CHACHA_DRBG_DEFAULT_RESEED_INTERVAL 3600

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
 * Kernel mixing (DESIGN.md section 3): fill |g| with CHACHA_KEY_BYTES fresh
 * bytes from the kernel's generator without ever blocking.  Returns 1, or 0
 * if none could be had (that refill then goes on unmixed).
 */
typedef int chacha_drbg_mix_fn(uint8_t g[CHACHA_KEY_BYTES]);

/*
 * The part of a generator that the inline code below (the reseed decision
 * and chacha_drbg_generate_fast()) reads without a call; the rest (kernel,
 * kernel mixing) is chacha_drbg.c's alone.  Callers use the functions, never
 * these fields.
 */
struct chacha_drbg {
    struct chacha_drbg_secret *s;
    enum chacha_fork_mode fork_mode;
    unsigned int reseed_requests; /* 0 = no limit on calls per seed */
    time_t reseed_interval;       /* seconds; 0 = no time limit */
};

/* Allocate a generator using kernel |impl|.  Returns NULL on failure. */
struct chacha_drbg *chacha_drbg_new(const struct chacha_impl *impl);

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
 * Kernel mixing: |mix| is called before every refill and direct request,
 * NULL turns mixing off (the default).  chacha_drbg_mix_failures() counts
 * the calls that returned 0, over the generator's life.
 */
void chacha_drbg_set_kernel_mix(struct chacha_drbg *d, chacha_drbg_mix_fn *mix);
int chacha_drbg_kernel_mix_on(const struct chacha_drbg *d);
unsigned int chacha_drbg_mix_failures(const struct chacha_drbg *d);

/* time(NULL) at the last instantiate or reseed. */
time_t chacha_drbg_seed_time(const struct chacha_drbg *d);

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
 * absorb(|adin|), then write |n| bytes to |out| and count one call.  The
 * caller has already decided that no reseed is due.
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
 * The reseed decision, the one definition, in two parts: a reseed must come
 * before the next call if chacha_drbg_due_untimed() or
 * chacha_drbg_due_timed() says so.  The untimed part: the generator is not
 * seeded (never, wiped or forked), or has served reseed_requests calls, or
 * 16 MiB.
 */
static inline int chacha_drbg_due_untimed(const struct chacha_drbg *d)
{
    const struct chacha_drbg_secret *s = d->s;

    return !chacha_drbg_is_seeded(d)
           || (d->reseed_requests != 0 && s->calls >= d->reseed_requests)
           || s->bytes >= CHACHA_DRBG_RESEED_BYTES;
}

/*
 * The timed part: a reseed interval of |interval| seconds (0: no time
 * limit) since the seeding recorded in |s| is over at |now|, or the clock
 * went backwards.
 */
static inline int chacha_drbg_due_timed(const struct chacha_drbg_secret *s,
                                        time_t interval, time_t now)
{
    return interval != 0
           && (now < s->seed_time || now - s->seed_time >= interval);
}

/* 1 if a reseed is due before the next call, at time |now|. */
static inline int chacha_drbg_reseed_due_at(const struct chacha_drbg *d,
                                            time_t now)
{
    return chacha_drbg_due_untimed(d)
           || chacha_drbg_due_timed(d->s, d->reseed_interval, now);
}

/*
 * The same at the current time, for every generate path: the clock is read
 * last, and only if a time limit is set.  |s| is kept in a local so that
 * the compiler need not load it again after the call.
 */
static inline int chacha_drbg_reseed_due(const struct chacha_drbg *d)
{
    const struct chacha_drbg_secret *s = d->s;
    time_t now;

    if (chacha_drbg_due_untimed(d))
        return 1;
    if (d->reseed_interval == 0)
        return 0;
    now = time(NULL);
    return chacha_drbg_due_timed(s, d->reseed_interval, now);
}

/*
 * Hand out the |n| <= avail bytes at the buffer front to |out| and zero
 * them there: the caller's copy is the only one left.  Plain stores are
 * enough, as in memcpy_and_zero_src() of Linux's vDSO getrandom: the buffer
 * outlives the call, so no compiler may drop them.  Small sizes copy two
 * overlapping words rather than call libc.
 */
static inline void chacha_drbg_take_buffered(struct chacha_drbg_secret *s,
                                             uint8_t *out, size_t n)
{
    uint8_t *p = s->ks + CHACHA_DRBG_KS_BYTES - s->avail;
    size_t i;

    s->avail -= n;
    if (n >= 8 && n <= 16) {
        uint64_t head, tail;

        memcpy(&head, p, 8);
        memcpy(&tail, p + n - 8, 8);
        memcpy(out, &head, 8);
        memcpy(out + n - 8, &tail, 8);
        memset(p, 0, 8);
        memset(p + n - 8, 0, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t head, tail;

        memcpy(&head, p, 4);
        memcpy(&tail, p + n - 4, 4);
        memcpy(out, &head, 4);
        memcpy(out + n - 4, &tail, 4);
        memset(p, 0, 4);
        memset(p + n - 4, 0, 4);
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
 * The small-request path: serve |n| bytes from the buffer if they are all
 * there and no reseed is due.  Returns 1 if served, 0 (nothing done) if
 * the caller must take the full path.  Same output as chacha_drbg_generate()
 * with no additional input.  Under wipe-on-fork nothing here leaves the
 * inline code but time(2), and that only when a time limit is set.
 */
static inline int chacha_drbg_generate_fast(struct chacha_drbg *d, uint8_t *out,
                                            size_t n)
{
    struct chacha_drbg_secret *s = d->s;

    if (n > s->avail || chacha_drbg_reseed_due(d))
        return 0;
    s->calls++;
    s->bytes += n;
    chacha_drbg_take_buffered(s, out, n);
    return 1;
}

#endif
