/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The OpenSSL 3.5+ random-provider path (DESIGN.md section 7): with
 * `random_provider = chacharng`, RAND_bytes and RAND_priv_bytes call
 * chacharng_random_bytes() directly, with no DRBG chain and no lock in
 * libcrypto's RAND layer.  Each thread gets its own generator per `which`
 * (public, private), so the hot path takes no lock at all.  Older libcrypto
 * ignores the dispatch entry and nothing here ever runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prov.h"
#include "wipe.h"

/*
 * Ownership and lifetime
 * ----------------------
 * A provider instance (one per library context that loads chacharng) gets a
 * slot the first time random_bytes is called for it.  The slot holds a
 * pthread key whose value, per thread, is that thread's struct rb_thread:
 * up to two generators, each in its own wipe-on-fork page (chacha_drbg).
 *
 * The hot path reads the slot and the key without locking.  rb_lock guards
 * only the per-slot registry of rb_thread records, which is touched when a
 * thread's record is created, when a thread exits (the key's destructor)
 * and at provider teardown.  Teardown wipes and unmaps every thread's
 * generators and deletes the key, so no destructor can later run for it
 * (the module may be unloaded right after).
 *
 * A thread that is inside RAND_bytes while its library context is being
 * freed is a use-after-free in the application, as it is for libcrypto's
 * own per-thread DRBGs; nothing here tries to survive it.
 */

#ifndef OSSL_PROV_RANDOM_PUBLIC
#define OSSL_PROV_RANDOM_PUBLIC 0
#define OSSL_PROV_RANDOM_PRIVATE 1
#endif

/* Library contexts that can use the random-provider path at the same time. */
#define RB_MAX_INSTANCES 16

struct rb_thread {
    struct chacha_drbg *gen[2]; /* [which]; created on first use */
    struct rb_thread *next;     /* the slot's registry, under rb_lock */
};

struct rb_slot {
    /*
     * The provider instance served, or NULL for a free slot.  Written
     * under rb_lock, read without it: a slot is published (release) only
     * after its key exists, and unpublished before the key is deleted.
     */
    const CHACHARNG_PROV_CTX *prov;
    pthread_key_t key;
    struct rb_thread *threads;
};

static struct rb_slot slots[RB_MAX_INSTANCES];
static pthread_mutex_t rb_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t rb_once = PTHREAD_ONCE_INIT;

/* ---------------------------------------------------------------------- */

/*
 * A fork must not find rb_lock held by a thread that does not exist in the
 * child: hold it across fork, as libc does for its own locks.
 */
static void rb_prefork(void)
{
    pthread_mutex_lock(&rb_lock);
}

static void rb_postfork(void)
{
    pthread_mutex_unlock(&rb_lock);
}

static void rb_init_once(void)
{
    (void)pthread_atfork(rb_prefork, rb_postfork, rb_postfork);
}

static void rb_thread_free(struct rb_thread *t)
{
    int i;

    /* wipes and unmaps the thread's keys, nonces and buffers */
    for (i = 0; i < 2; i++)
        chacha_drbg_free(t->gen[i]);
    free(t);
}

/* Unlink |t| from the registry it is in, if any.  Requires rb_lock. */
static int rb_unlink(struct rb_thread *t)
{
    size_t i;
    struct rb_thread **pp;

    /*
     * Search by address, never dereferencing |t| before it is found:
     * teardown may have freed it while this thread was exiting.
     */
    for (i = 0; i < RB_MAX_INSTANCES; i++) {
        for (pp = &slots[i].threads; *pp != NULL; pp = &(*pp)->next) {
            if (*pp == t) {
                *pp = t->next;
                return 1;
            }
        }
    }
    return 0;
}

/* The key's destructor: the thread is exiting. */
static void rb_thread_exit(void *arg)
{
    struct rb_thread *t = arg;
    int found;

    pthread_mutex_lock(&rb_lock);
    found = rb_unlink(t);
    pthread_mutex_unlock(&rb_lock);
    /* unlinked, so teardown can no longer reach it: free it unlocked */
    if (found)
        rb_thread_free(t);
}

/* The slot serving |prov|, or NULL.  Lock-free. */
static struct rb_slot *rb_find_slot(const CHACHARNG_PROV_CTX *prov)
{
    size_t i;

    for (i = 0; i < RB_MAX_INSTANCES; i++)
        if (__atomic_load_n(&slots[i].prov, __ATOMIC_ACQUIRE) == prov)
            return &slots[i];
    return NULL;
}

/*
 * Find or make the slot for |prov|, then a record for this thread.
 * Returns NULL with an error raised on failure.
 */
static struct rb_thread *rb_thread_new(const CHACHARNG_PROV_CTX *prov)
{
    struct rb_slot *s;
    struct rb_thread *t;
    size_t i;

    pthread_once(&rb_once, rb_init_once);
    t = calloc(1, sizeof(*t));
    if (t == NULL) {
        CHACHARNG_RAISE(prov, CHACHARNG_R_OUT_OF_MEMORY, "random_bytes");
        return NULL;
    }
    pthread_mutex_lock(&rb_lock);
    s = rb_find_slot(prov);
    for (i = 0; s == NULL && i < RB_MAX_INSTANCES; i++) {
        if (slots[i].prov != NULL)
            continue;
        if (pthread_key_create(&slots[i].key, rb_thread_exit) != 0)
            break;
        s = &slots[i];
        s->threads = NULL;
        __atomic_store_n(&s->prov, prov, __ATOMIC_RELEASE);
        if (getenv("CHACHARNG_DEBUG") != NULL)
            fprintf(stderr, "chacharng: random provider path in use\n");
    }
    if (s == NULL || pthread_setspecific(s->key, t) != 0) {
        pthread_mutex_unlock(&rb_lock);
        free(t);
        CHACHARNG_RAISE(prov, CHACHARNG_R_OUT_OF_MEMORY,
                        "no room for per-thread generators (at most %d "
                        "library contexts)", RB_MAX_INSTANCES);
        return NULL;
    }
    t->next = s->threads;
    s->threads = t;
    pthread_mutex_unlock(&rb_lock);
    return t;
}

/* This thread's record for |prov|, made on first use. */
static struct rb_thread *rb_thread_get(const CHACHARNG_PROV_CTX *prov)
{
    struct rb_slot *s = rb_find_slot(prov);
    struct rb_thread *t;

    if (s != NULL && (t = pthread_getspecific(s->key)) != NULL)
        return t;
    return rb_thread_new(prov);
}

/* ---------------------------------------------------------------------- */

/*
 * (Re)seed |d|: a generator that is not seeded in this process (new, or
 * wiped by fork) is instantiated from fresh entropy alone; a seeded one
 * absorbs it on top of its key.  On failure |d| is wiped, so it stays
 * unseeded and the next call tries again: nothing unseeded is ever output.
 */
static int rb_reseed(const CHACHARNG_PROV_CTX *prov, struct chacha_drbg *d)
{
    unsigned char e[CHACHA_DRBG_SEED_BYTES];

    if (!chacharng_seed_os(prov, e)) {
        chacha_drbg_wipe(d);
        return 0;
    }
    if (chacha_drbg_is_seeded(d))
        chacha_drbg_reseed(d, NULL, 0, e, sizeof(e), NULL, 0);
    else
        chacha_drbg_instantiate(d, e, sizeof(e), NULL, 0);
    /* the seed is in the key now */
    chacha_wipe(e, sizeof(e));
    return 1;
}

static struct chacha_drbg *rb_gen_new(const CHACHARNG_PROV_CTX *prov,
                                      struct rb_thread *t, int which)
{
    struct chacha_drbg *d = chacha_drbg_new(prov->impl);

    if (d == NULL) {
        CHACHARNG_RAISE(prov, CHACHARNG_R_OUT_OF_MEMORY,
                        "cannot map the state page");
        return NULL;
    }
    chacharng_kmix_set(d, chacharng_kmix_default(prov, NULL));
    pthread_mutex_lock(&rb_lock);
    t->gen[which] = d;
    pthread_mutex_unlock(&rb_lock);
    return d;
}

int chacharng_random_bytes(void *vprov, int which, void *vbuf, size_t n,
                           unsigned int strength)
{
    const CHACHARNG_PROV_CTX *prov = vprov;
    unsigned char *buf = vbuf;
    struct rb_thread *t;
    struct chacha_drbg *d;

    if (strength > CHACHA_DRBG_STRENGTH) {
        CHACHARNG_RAISE(prov, CHACHARNG_R_STRENGTH_TOO_HIGH, "requested %u",
                        strength);
        return 0;
    }
    if (which != OSSL_PROV_RANDOM_PUBLIC && which != OSSL_PROV_RANDOM_PRIVATE) {
        CHACHARNG_RAISE(prov, CHACHARNG_R_INVALID_PARAMETER,
                        "random_bytes: which = %d", which);
        return 0;
    }
    if (buf == NULL && n != 0) {
        CHACHARNG_RAISE(prov, CHACHARNG_R_INVALID_PARAMETER,
                        "random_bytes: NULL buffer");
        return 0;
    }
    if ((t = rb_thread_get(prov)) == NULL)
        return 0;
    if ((d = t->gen[which]) == NULL && (d = rb_gen_new(prov, t, which)) == NULL)
        return 0;
    /* most requests are small: straight from the buffer if nothing is due */
    if (chacha_drbg_generate_fast(d, buf, n))
        return 1;

    /*
     * libcrypto hands the whole request over; serve it in max_request
     * pieces as EVP_RAND_generate would, each counting as one call of the
     * reseed policy.  A zero-length request is one call too.
     */
    do {
        size_t chunk = n < CHACHARNG_MAX_REQUEST ? n : CHACHARNG_MAX_REQUEST;
        /* only read the clock when a time limit is set */
        time_t now = d->reseed_interval != 0 ? time(NULL) : 0;

        if (chacha_drbg_reseed_due(d, now) && !rb_reseed(prov, d))
            return 0;
        chacha_drbg_generate(d, buf, chunk, NULL, 0);
        buf += chunk;
        n -= chunk;
    } while (n > 0);
    return 1;
}

void chacharng_random_teardown(const CHACHARNG_PROV_CTX *prov)
{
    struct rb_slot *s;
    struct rb_thread *t, *next;

    pthread_mutex_lock(&rb_lock);
    s = rb_find_slot(prov);
    if (s == NULL) {
        pthread_mutex_unlock(&rb_lock);
        return;
    }
    __atomic_store_n(&s->prov, NULL, __ATOMIC_RELEASE);
    /* no destructor may run into this module once it is unloaded */
    pthread_key_delete(s->key);
    t = s->threads;
    s->threads = NULL;
    pthread_mutex_unlock(&rb_lock);
    for (; t != NULL; t = next) {
        next = t->next;
        rb_thread_free(t);
    }
}
