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
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base.h"
#include "debug.h"
#include "kmix.h"
#include "kmix_choice.h"
#include "random_provider.h"
#include "reasons.h"
#include "seed.h"
#include "statepool.h"

/*
 * Ownership and lifetime
 * ----------------------
 * One pthread key serves every provider instance (one per library context
 * that loads chacharng).  Its value, per thread, is that thread's struct
 * rp_table: an array indexed by the instance's number, each entry that
 * thread's struct rp_thread for the instance (up to two generators, each in
 * its own wipe-on-fork page, chacha_drbg).  Instance numbers are handed out
 * at provider init, lowest free first, and reused after teardown, so a
 * table is never longer than the most instances alive at once (rounded up
 * to a word of the allocator's bitmap), and nothing limits how many there
 * are: one key serves them all, made once and never deleted.
 *
 * The hot path reads the key, the table and the entry without locking;
 * only the owning thread ever grows its table.  rp_lock guards everything
 * else: growing a table, the per-instance list of records, the number
 * allocator, and every hand-over between a thread and teardown.  A record
 * is reachable from exactly two places, its thread's table and its
 * instance's list, and whoever unlinks it from both under rp_lock (the
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
struct rp_thread {
    struct chacha_drbg *gen[2]; /* [which]; created on first use */
    struct rp_table *owner;     /* the thread's table, which points here */
    size_t index;               /* the instance's number: our entry there */
    /* the instance's list, under rp_lock */
    struct rp_thread *next, **pprev;
};

/* One thread's records, by instance number: the value of rp_key. */
struct rp_table {
    size_t len;
    struct rp_thread **at; /* entries written under rp_lock */
};

static pthread_mutex_t rp_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t rp_once = PTHREAD_ONCE_INIT;
static pthread_key_t rp_key;
static int rp_key_made; /* set once, under rp_lock; read lock-free */

/* This instance on the random-provider path (the provider context's rp). */
struct rp_instance {
    size_t index;              /* our entry in every thread's table */
    struct rp_thread *threads; /* the threads' records, under rp_lock */
    int announced;             /* CHACHARNG_DEBUG line printed */
};

/* Instance numbers in use: one bit each, under rp_lock. */
static unsigned long *rp_numbers;
static size_t rp_number_words;

#define RP_WORD_BITS (8 * sizeof(unsigned long))

/* ------------------------------------------------------------------------
 * Per-thread records: fork safety, tables, lookup and creation
 * ------------------------------------------------------------------------ */

/*
 * A fork must not find rp_lock held by a thread that does not exist in the
 * child: hold it across fork, as libc does for its own locks.
 */
static void rp_prefork(void)
{
    pthread_mutex_lock(&rp_lock);
}

static void rp_postfork(void)
{
    pthread_mutex_unlock(&rp_lock);
}

static void rp_init_once(void)
{
    (void)pthread_atfork(rp_prefork, rp_postfork, rp_postfork);
}

static void rp_thread_free(struct rp_thread *t)
{
    int i;

    /* wipes and unmaps the thread's keys, nonces and buffers */
    for (i = 0; i < 2; i++)
        chacha_drbg_free(t->gen[i]);
    free(t);
}

/* Take |t| out of its instance's list and its thread's table.  Requires rp_lock. */
static void rp_unlink(struct rp_thread *t)
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
static void rp_table_exit(void *arg)
{
    struct rp_table *tab = arg;
    struct rp_thread *mine = NULL, *t;
    size_t i;
    int none_left;

    pthread_mutex_lock(&rp_lock);
    for (i = 0; i < tab->len; i++) {
        if ((t = tab->at[i]) == NULL)
            continue;
        rp_unlink(t);
        t->next = mine;
        mine = t;
    }
    pthread_mutex_unlock(&rp_lock);
    if (mine == NULL) {
        free(tab->at);
        free(tab);
        return;
    }
    /* unreachable from anywhere else now: free them unlocked */
    for (; mine != NULL; mine = t) {
        t = mine->next;
        rp_thread_free(mine);
    }
    free(tab->at);
    free(tab);
    /*
     * A teardown that ran while this thread was leaving found these
     * generators' slots still taken and left their mappings; with no
     * instance left, nobody else will unmap them.
     */
    pthread_mutex_lock(&rp_lock);
    for (i = 0; i < rp_number_words && rp_numbers[i] == 0; i++)
        ;
    none_left = i == rp_number_words;
    pthread_mutex_unlock(&rp_lock);
    if (none_left) {
        chacha_pool_trim();
        chacha_kmix_trim();
    }
}

/*
 * This thread's table, made or grown to hold entry |index|.  Requires
 * rp_lock and rp_key.  Returns NULL if memory runs out.
 */
static struct rp_table *rp_table_get(size_t index)
{
    struct rp_table *tab = pthread_getspecific(rp_key);
    struct rp_thread **at;
    size_t len;

    if (tab == NULL) {
        if ((tab = calloc(1, sizeof(*tab))) == NULL)
            return NULL;
        if (pthread_setspecific(rp_key, tab) != 0) {
            free(tab);
            return NULL;
        }
    }
    if (index < tab->len)
        return tab;
    /* room for every instance number in use, and a few more */
    len = rp_number_words * RP_WORD_BITS;
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
static struct rp_thread *rp_thread_find(const CHACHARNG_PROV_CTX *prov)
{
    const struct rp_table *tab;

    if (!__atomic_load_n(&rp_key_made, __ATOMIC_ACQUIRE)
        || (tab = pthread_getspecific(rp_key)) == NULL
        || prov->rp->index >= tab->len)
        return NULL;
    return __atomic_load_n(&tab->at[prov->rp->index], __ATOMIC_RELAXED);
}

/*
 * A record for this thread and |prov|, in both the thread's table and the
 * instance's list.  Returns NULL with an error raised on failure.
 */
static struct rp_thread *rp_thread_new(CHACHARNG_PROV_CTX *prov)
{
    struct rp_table *tab;
    struct rp_thread *t;

    pthread_once(&rp_once, rp_init_once);
    if ((t = calloc(1, sizeof(*t))) == NULL) {
        CHACHARNG_RAISE(prov, CHACHARNG_R_OUT_OF_MEMORY, "random_bytes");
        return NULL;
    }
    pthread_mutex_lock(&rp_lock);
    if (!rp_key_made) {
        /* made once and never deleted: the module stays resident */
        if (pthread_key_create(&rp_key, rp_table_exit) != 0) {
            pthread_mutex_unlock(&rp_lock);
            free(t);
            CHACHARNG_RAISE(prov, CHACHARNG_R_OUT_OF_MEMORY,
                            "random_bytes: no pthread key left");
            return NULL;
        }
        __atomic_store_n(&rp_key_made, 1, __ATOMIC_RELEASE);
    }
    if ((tab = rp_table_get(prov->rp->index)) == NULL) {
        pthread_mutex_unlock(&rp_lock);
        free(t);
        CHACHARNG_RAISE(prov, CHACHARNG_R_OUT_OF_MEMORY,
                        "random_bytes: per-thread table");
        return NULL;
    }
    t->owner = tab;
    t->index = prov->rp->index;
    t->next = prov->rp->threads;
    t->pprev = &prov->rp->threads;
    if (t->next != NULL)
        t->next->pprev = &t->next;
    prov->rp->threads = t;
    __atomic_store_n(&tab->at[t->index], t, __ATOMIC_RELAXED);
    if (!prov->rp->announced)
        CHACHARNG_DEBUG_LOG("random provider path in use");
    prov->rp->announced = 1;
    pthread_mutex_unlock(&rp_lock);
    return t;
}

/* ------------------------------------------------------------------------
 * Serving a request
 * ------------------------------------------------------------------------ */

/*
 * This thread's generator for |which|, seeded from the OS source (the
 * random-provider path has no parent) as its first request finds due.
 */
static struct chacha_drbg *rp_gen_new(CHACHARNG_PROV_CTX *prov,
                                      struct rp_thread *t, int which)
{
    struct chacha_drbg_source src;
    struct chacha_drbg *d;

    chacharng_seed_source_os(prov, &src);
    d = chacharng_drbg_new(prov, chacharng_kmix_default(prov, NULL), &src);
    if (d == NULL)
        return NULL;
    pthread_mutex_lock(&rp_lock);
    t->gen[which] = d;
    pthread_mutex_unlock(&rp_lock);
    return d;
}

int chacharng_random_bytes(void *vprov, int which, void *vbuf, size_t n,
                           unsigned int strength)
{
    CHACHARNG_PROV_CTX *prov = vprov;
    unsigned char *buf = vbuf;
    struct rp_thread *t;
    struct chacha_drbg *d;

    if (!chacharng_strength_ok(prov, strength))
        return 0;
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
    if ((t = rp_thread_find(prov)) == NULL && (t = rp_thread_new(prov)) == NULL)
        return 0;
    if ((d = t->gen[which]) == NULL && (d = rp_gen_new(prov, t, which)) == NULL)
        return 0;
    /*
     * libcrypto hands the whole request over: the generator serves it as
     * max_request calls, as EVP_RAND_generate would split it, each one
     * counted by the reseed policy (a zero-length request is one call).
     * A failed seed leaves |d| unseeded, so the next request tries again.
     */
    return chacha_drbg_request(d, buf, n, 0, NULL, 0);
}

/* ------------------------------------------------------------------------
 * Instances: a number at provider init, every record freed at teardown
 * ------------------------------------------------------------------------ */

int chacharng_random_init(CHACHARNG_PROV_CTX *prov)
{
    struct rp_instance *rp = calloc(1, sizeof(*rp));
    size_t w;
    int bit;

    if (rp == NULL) {
        CHACHARNG_RAISE(prov, CHACHARNG_R_OUT_OF_MEMORY, "random_bytes");
        return 0;
    }
    pthread_mutex_lock(&rp_lock);
    for (w = 0; w < rp_number_words && rp_numbers[w] == ~0UL; w++)
        continue;
    if (w == rp_number_words) {
        size_t words = rp_number_words > 0 ? 2 * rp_number_words : 1;
        unsigned long *grown = realloc(rp_numbers, words * sizeof(*grown));

        if (grown == NULL) {
            pthread_mutex_unlock(&rp_lock);
            free(rp);
            CHACHARNG_RAISE(prov, CHACHARNG_R_OUT_OF_MEMORY,
                            "random_bytes: instance numbers");
            return 0;
        }
        memset(grown + rp_number_words, 0,
               (words - rp_number_words) * sizeof(*grown));
        rp_numbers = grown;
        rp_number_words = words;
    }
    /* the lowest free number, so every thread's table stays short */
    bit = __builtin_ctzl(~rp_numbers[w]);
    rp_numbers[w] |= 1UL << bit;
    rp->index = w * RP_WORD_BITS + (size_t)bit;
    prov->rp = rp;
    pthread_mutex_unlock(&rp_lock);
    return 1;
}

void chacharng_random_teardown(CHACHARNG_PROV_CTX *prov)
{
    struct rp_thread *list, *t;
    size_t index = prov->rp->index;

    pthread_mutex_lock(&rp_lock);
    /*
     * Take every live thread's record for this instance out of its table:
     * the threads go on, and a later instance with this number must find
     * their entries empty.
     */
    list = prov->rp->threads;
    for (t = list; t != NULL; t = t->next)
        __atomic_store_n(&t->owner->at[index], NULL, __ATOMIC_RELAXED);
    prov->rp->threads = NULL;
    rp_numbers[index / RP_WORD_BITS] &= ~(1UL << (index % RP_WORD_BITS));
    pthread_mutex_unlock(&rp_lock);
    /* unreachable from anywhere else now: free them unlocked */
    for (; list != NULL; list = t) {
        t = list->next;
        rp_thread_free(list);
    }
    free(prov->rp);
    prov->rp = NULL;
}
