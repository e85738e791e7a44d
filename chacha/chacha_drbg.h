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
 * all zero = not seeded.
 */
struct chacha_drbg_secret {
    uint32_t state[16];   /* constants, K, counter (always 0 at rest), N */
    uint8_t ks[CHACHA_DRBG_KS_BYTES]; /* last refill; unread bytes at the end */
    size_t avail;         /* unread bytes: ks[KS_BYTES - avail .. KS_BYTES) */
    uint64_t calls;       /* generate calls served since the last (re)seed */
    uint64_t bytes;       /* bytes produced since the last (re)seed */
    time_t seed_time;     /* wall-clock time of the last (re)seed */
    uint32_t fork_gen;    /* chacha_fork_generation() at (re)seed (fallbacks) */
    pid_t pid;            /* getpid() at (re)seed (fallbacks) */
    uint32_t seeded;      /* CHACHA_DRBG_SEEDED, or 0 in a fork child */
};

/*
 * Kernel mixing (DESIGN.md section 3): fill |g| with CHACHA_KEY_BYTES fresh
 * bytes from the kernel's generator without ever blocking.  Returns 1, or 0
 * if none could be had (that refill then goes on unmixed).
 */
typedef int chacha_drbg_mix_fn(uint8_t g[CHACHA_KEY_BYTES]);

struct chacha_drbg {
    struct chacha_drbg_secret *s;
    struct chacha_pool_chunk *home; /* the mapping that holds s */
    const struct chacha_impl *impl;
    enum chacha_fork_mode fork_mode;
    unsigned int reseed_requests; /* 0 = no limit on calls per seed */
    time_t reseed_interval;       /* seconds; 0 = no time limit */
    chacha_drbg_mix_fn *kernel_mix; /* NULL: kernel mixing off */
    unsigned int mix_failures;      /* kernel reads that failed (atomic) */
};

/* Allocate a generator using kernel |impl|.  Returns NULL on failure. */
struct chacha_drbg *chacha_drbg_new(const struct chacha_impl *impl);

/* Wipe and release everything. |d| may be NULL. */
void chacha_drbg_free(struct chacha_drbg *d);

/*
 * Seed from scratch: K = 0, N = 0, then absorb(|e| || |pers|).  Resets the
 * call and byte counts and the seed time.
 */
void chacha_drbg_instantiate(struct chacha_drbg *d, const uint8_t *e,
                             size_t elen, const uint8_t *pers, size_t perslen);

/* absorb(|ent| || |e| || |adin|) into the current state; resets counts. */
void chacha_drbg_reseed(struct chacha_drbg *d, const uint8_t *ent,
                        size_t entlen, const uint8_t *e, size_t elen,
                        const uint8_t *adin, size_t adinlen);

/*
 * 1 if a reseed must come before the next call: fork, never seeded, the
 * call limit, the 16 MiB byte limit, or the time interval (|now| is
 * time(NULL), passed in so the caller decides whether to read the clock).
 */
int chacha_drbg_reseed_due(const struct chacha_drbg *d, time_t now);

/* 1 if the state is seeded in this process (not wiped by fork or uninstantiate). */
int chacha_drbg_is_seeded(const struct chacha_drbg *d);

/*
 * absorb(|adin|), then write |n| bytes to |out| and count one call.  The
 * caller has already decided that no reseed is due.
 */
void chacha_drbg_generate(struct chacha_drbg *d, uint8_t *out, size_t n,
                          const uint8_t *adin, size_t adinlen);

#define CHACHA_DRBG_SEEDED 0x5eed5eedu

/*
 * The small-request fast path: serve |n| bytes from the buffer if they are
 * all there and no reseed is due, with |now| read only when a time limit is
 * set.  Returns 1 if served, 0 (nothing done) if the caller must take the
 * full path.  Same output as chacha_drbg_generate() with no additional input.
 */
static inline int chacha_drbg_generate_fast(struct chacha_drbg *d,
                                            uint8_t *out, size_t n)
{
    struct chacha_drbg_secret *s = d->s;
    uint8_t *p;
    size_t i;

    /*
     * chacha_drbg_reseed_due() in brief, for the common wipe-on-fork case
     * only: calling it here costs a few nanoseconds per request (its fork
     * checks call out of line), a fifth of the whole path.
     */
    if (n > s->avail || s->seeded != CHACHA_DRBG_SEEDED
        || d->fork_mode != CHACHA_FORK_WIPEONFORK
        || (d->reseed_requests != 0 && s->calls >= d->reseed_requests)
        || s->bytes >= CHACHA_DRBG_RESEED_BYTES)
        return 0;
    if (d->reseed_interval != 0) {
        time_t now = time(NULL);

        if (now < s->seed_time || now - s->seed_time >= d->reseed_interval)
            return 0;
    }
    s->calls++;
    s->bytes += n;
    p = s->ks + CHACHA_DRBG_KS_BYTES - s->avail;
    s->avail -= n;
    /*
     * Small sizes copy two overlapping words rather than call libc; the
     * bytes handed out are zeroed (the caller's copy is the only one).
     */
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
        memset(p, 0, n); /* handed out; the buffer outlives this call */
    }
    return 1;
}

/* Wipe all secret state (uninstantiate); the generator is unseeded after. */
void chacha_drbg_wipe(struct chacha_drbg *d);

/* 1 if every byte of the secret state is zero. */
int chacha_drbg_is_zeroized(const struct chacha_drbg *d);

#endif
