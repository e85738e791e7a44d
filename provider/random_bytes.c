/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The OpenSSL 3.5+ random-provider path (DESIGN.md section 7): with
 * `random_provider = chacharng`, RAND_bytes and RAND_priv_bytes call
 * chacharng_random_bytes() directly, with no DRBG chain and no lock in
 * libcrypto's RAND layer.  Each thread gets its own generator per `which`
 * (public, private), so the hot path takes no lock at all.  Older libcrypto
 * ignores the dispatch entry: then only the per-instance bookkeeping at
 * provider init and teardown runs (unless a caller fetches random_bytes
 * from the dispatch table itself).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prov.h"
#include "statepool.h"
#include "wipe.h"

/*
 * Ownership and lifetime
 * ----------------------
 * One pthread key serves every provider instance (one per library context
 * that loads chacharng).  Its value, per thread, is that thread's struct
 * rb_table: an array indexed by the instance's number, each entry that
 * thread's struct rb_thread for the instance (up to two generators, each in
 * its own wipe-on-fork page, chacha_drbg).  Instance numbers are handed out
 * at provider init, lowest free first, and reused after teardown, so a
 * table is never longer than the most instances alive at once (rounded up
 * to a word of the allocator's bitmap), and nothing limits how many there
 * are: one key serves them all, made once and never deleted.
 *
 * The hot path reads the key, the table and the entry without locking;
 * only the owning thread ever grows its table.  rb_lock guards everything
 * else: growing a table, the per-instance list of records, the number
 * allocator, and every hand-over between a thread and teardown.  A record
 * is reachable from exactly two places, its thread's table and its
 * instance's list, and whoever unlinks it from both under rb_lock (the
 * thread's exit, or the instance's teardown) wipes and frees it: never
 * both, never neither, so no generator is leaked or left unwiped, whichever
 * comes first.
 *
 * The module stays resident
 * -------------------------
 * A thread's key destructor can already be running when the provider is
 * torn down and the module unloaded: it may have been entered before
 * teardown starts, and it is still executing module code (unlocking,
 * wiping, returning) after its last touch of shared state, so no amount of
 * waiting in teardown can tell when the module is really left.  The module
 * is therefore linked -z nodelete (Makefile.am): dlclose never unmaps it,
 * the destructor and the atfork handlers stay valid for the life of the
 * process, and so does the state below, which a later load (in any
 * library context) finds as it was left: the key, the lock, the once-only
 * atfork registration and a number allocator with every number of a torn
 * down instance free again, every table entry for it cleared.  The cost
 * is the module's pages after the last unload.
 *
 * A thread that is inside RAND_bytes while its library context is being
 * freed is a use-after-free in the application, as it is for libcrypto's
 * own per-thread DRBGs; nothing here tries to survive it.
 */

#ifndef OSSL_PROV_RANDOM_PUBLIC
#define OSSL_PROV_RANDOM_PUBLIC 0
#define OSSL_PROV_RANDOM_PRIVATE 1
#endif

/* One thread's generators for one provider instance. */
struct rb_thread {
    struct chacha_drbg *gen[2]; /* [which]; created on first use */
    struct rb_table *owner;     /* the thread's table, which points here */
    size_t index;               /* the instance's number: our entry there */
    /* the instance's list, under rb_lock */
    struct rb_thread *next, **pprev;
};

/* One thread's records, by instance number: the value of rb_key. */
struct rb_table {
    size_t len;
    struct rb_thread **at; /* entries written under rb_lock */
};

static pthread_mutex_t rb_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t rb_once = PTHREAD_ONCE_INIT;
static pthread_key_t rb_key;
static int rb_key_made; /* set once, under rb_lock; read lock-free */

/* Instance numbers in use: one bit each, under rb_lock. */
static unsigned long *rb_numbers;
static size_t rb_number_words;

#define RB_WORD_BITS (8 * sizeof(unsigned long))

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

/* Take |t| out of its instance's list and its thread's table.  Requires rb_lock. */
static void rb_unlink(struct rb_thread *t)
{
    *t->pprev = t->next;
    if (t->next != NULL)
        t->next->pprev = t->pprev;
    __atomic_store_n(&t->owner->at[t->index], NULL, __ATOMIC_RELAXED);
}

/*
 * The key's destructor: the thread is exiting.  Its records still in the
 * table are its to free; teardown has already taken (and freed) the rest.
 */
static void rb_table_exit(void *arg)
{
    struct rb_table *tab = arg;
    struct rb_thread *mine = NULL, *t;
    size_t i;
    int none_left;

    pthread_mutex_lock(&rb_lock);
    for (i = 0; i < tab->len; i++) {
        if ((t = tab->at[i]) == NULL)
            continue;
        rb_unlink(t);
        t->next = mine;
        mine = t;
    }
    pthread_mutex_unlock(&rb_lock);
    if (mine == NULL) {
        free(tab->at);
        free(tab);
        return;
    }
    /* unreachable from anywhere else now: free them unlocked */
    for (; mine != NULL; mine = t) {
        t = mine->next;
        rb_thread_free(mine);
    }
    free(tab->at);
    free(tab);
    /*
     * A teardown that ran while this thread was leaving found these
     * generators' slots still taken and left their mappings; with no
     * instance left, nobody else will unmap them.
     */
    pthread_mutex_lock(&rb_lock);
    for (i = 0; i < rb_number_words && rb_numbers[i] == 0; i++)
        ;
    none_left = i == rb_number_words;
    pthread_mutex_unlock(&rb_lock);
    if (none_left)
        chacha_pool_trim();
}

/*
 * This thread's table, made or grown to hold entry |index|.  Requires
 * rb_lock and rb_key.  Returns NULL if memory runs out.
 */
static struct rb_table *rb_table_get(size_t index)
{
    struct rb_table *tab = pthread_getspecific(rb_key);
    struct rb_thread **at;
    size_t len;

    if (tab == NULL) {
        if ((tab = calloc(1, sizeof(*tab))) == NULL)
            return NULL;
        if (pthread_setspecific(rb_key, tab) != 0) {
            free(tab);
            return NULL;
        }
    }
    if (index < tab->len)
        return tab;
    /* room for every instance number in use, and a few more */
    len = rb_number_words * RB_WORD_BITS;
    if (len <= index)
        len = index + 1;
    if ((at = calloc(len, sizeof(*at))) == NULL)
        return NULL;
    if (tab->len > 0)
        memcpy(at, tab->at, tab->len * sizeof(*at));
    free(tab->at);
    tab->at = at;
    tab->len = len;
    return tab;
}

/* This thread's record for |prov|, or NULL.  Lock-free. */
static struct rb_thread *rb_thread_find(const CHACHARNG_PROV_CTX *prov)
{
    const struct rb_table *tab;

    if (!__atomic_load_n(&rb_key_made, __ATOMIC_ACQUIRE)
        || (tab = pthread_getspecific(rb_key)) == NULL
        || prov->rb.index >= tab->len)
        return NULL;
    return __atomic_load_n(&tab->at[prov->rb.index], __ATOMIC_RELAXED);
}

/*
 * A record for this thread and |prov|, in both the thread's table and the
 * instance's list.  Returns NULL with an error raised on failure.
 */
static struct rb_thread *rb_thread_new(CHACHARNG_PROV_CTX *prov)
{
    struct rb_table *tab;
    struct rb_thread *t;

    pthread_once(&rb_once, rb_init_once);
    if ((t = calloc(1, sizeof(*t))) == NULL) {
        CHACHARNG_RAISE(prov, CHACHARNG_R_OUT_OF_MEMORY, "random_bytes");
        return NULL;
    }
    pthread_mutex_lock(&rb_lock);
    if (!rb_key_made) {
        /* made once and never deleted: the module stays resident */
        if (pthread_key_create(&rb_key, rb_table_exit) != 0) {
            pthread_mutex_unlock(&rb_lock);
            free(t);
            CHACHARNG_RAISE(prov, CHACHARNG_R_OUT_OF_MEMORY,
                            "random_bytes: no pthread key left");
            return NULL;
        }
        __atomic_store_n(&rb_key_made, 1, __ATOMIC_RELEASE);
    }
    if ((tab = rb_table_get(prov->rb.index)) == NULL) {
        pthread_mutex_unlock(&rb_lock);
        free(t);
        CHACHARNG_RAISE(prov, CHACHARNG_R_OUT_OF_MEMORY,
                        "random_bytes: per-thread table");
        return NULL;
    }
    t->owner = tab;
    t->index = prov->rb.index;
    t->next = prov->rb.threads;
    t->pprev = &prov->rb.threads;
    if (t->next != NULL)
        t->next->pprev = &t->next;
    prov->rb.threads = t;
    __atomic_store_n(&tab->at[t->index], t, __ATOMIC_RELAXED);
    if (!prov->rb.announced && getenv("CHACHARNG_DEBUG") != NULL)
        fprintf(stderr, "chacharng: random provider path in use\n");
    prov->rb.announced = 1;
    pthread_mutex_unlock(&rb_lock);
    return t;
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
    CHACHARNG_PROV_CTX *prov = vprov;
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
    if ((t = rb_thread_find(prov)) == NULL && (t = rb_thread_new(prov)) == NULL)
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

        if (chacha_drbg_reseed_due(d) && !rb_reseed(prov, d))
            return 0;
        chacha_drbg_generate(d, buf, chunk, NULL, 0);
        buf += chunk;
        n -= chunk;
    } while (n > 0);
    return 1;
}

int chacharng_random_init(CHACHARNG_PROV_CTX *prov)
{
    size_t w;
    int bit;

    pthread_mutex_lock(&rb_lock);
    for (w = 0; w < rb_number_words && rb_numbers[w] == ~0UL; w++)
        continue;
    if (w == rb_number_words) {
        size_t words = rb_number_words > 0 ? 2 * rb_number_words : 1;
        unsigned long *grown = realloc(rb_numbers, words * sizeof(*grown));

        if (grown == NULL) {
            pthread_mutex_unlock(&rb_lock);
            CHACHARNG_RAISE(prov, CHACHARNG_R_OUT_OF_MEMORY,
                            "random_bytes: instance numbers");
            return 0;
        }
        memset(grown + rb_number_words, 0,
               (words - rb_number_words) * sizeof(*grown));
        rb_numbers = grown;
        rb_number_words = words;
    }
    /* the lowest free number, so every thread's table stays short */
    bit = __builtin_ctzl(~rb_numbers[w]);
    rb_numbers[w] |= 1UL << bit;
    prov->rb.index = w * RB_WORD_BITS + (size_t)bit;
    prov->rb.threads = NULL;
    prov->rb.announced = 0;
    pthread_mutex_unlock(&rb_lock);
    return 1;
}

void chacharng_random_teardown(CHACHARNG_PROV_CTX *prov)
{
    struct rb_thread *list, *t;
    size_t index = prov->rb.index;

    pthread_mutex_lock(&rb_lock);
    /*
     * Take every live thread's record for this instance out of its table:
     * the threads go on, and a later instance with this number must find
     * their entries empty.
     */
    list = prov->rb.threads;
    for (t = list; t != NULL; t = t->next)
        __atomic_store_n(&t->owner->at[index], NULL, __ATOMIC_RELAXED);
    prov->rb.threads = NULL;
    rb_numbers[index / RB_WORD_BITS] &= ~(1UL << (index % RB_WORD_BITS));
    pthread_mutex_unlock(&rb_lock);
    /* unreachable from anywhere else now: free them unlocked */
    for (; list != NULL; list = t) {
        t = list->next;
        rb_thread_free(list);
    }
}
