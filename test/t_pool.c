/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The state pool (chacha/statepool.c) under the generator: states packed
 * several to a mapping, released slots wiped and reused with no system
 * call, and fork safety in every mode while other threads make and free
 * generators.  The core's mmap, munmap and madvise calls are counted, and
 * the fallback fork modes reached, through the link-time wrappers of
 * test/lib/linkwrap.c.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "chacha.h"
#include "chacha_drbg.h"
#include "linkwrap.h"
#include "secpage.h"
#include "split.h"
#include "statepool.h"
#include "testutil.h"

/* ---- system calls of the core, counted ------------------------------- */

static unsigned long syscalls(void)
{
    unsigned long m, u, a;

    lw_calls(&m, &u, &a);
    return m + u + a;
}

static unsigned long mmaps(void)
{
    unsigned long m;

    lw_calls(&m, NULL, NULL);
    return m;
}

static unsigned long munmaps(void)
{
    unsigned long u;

    lw_calls(NULL, &u, NULL);
    return u;
}

/* ---- helpers ---------------------------------------------------------- */

#define MANY 42 /* three mappings' worth with 4 KiB pages */

static const struct chacha_impl *impl_under_test(void)
{
    const char *name = getenv("CHACHARNG_IMPL");
    const struct chacha_impl *impl = name ? chacha_impl_by_name(name) : NULL;

    return impl != NULL ? impl : chacha_impl_best();
}

static struct chacha_drbg *seeded(uint8_t tag)
{
    uint8_t seed[CHACHA_DRBG_SEED_BYTES], out[32];
    struct chacha_drbg *d = chacha_drbg_new(impl_under_test(), NULL, NULL);

    if (d == NULL)
        return NULL;
    memset(seed, tag, sizeof(seed));
    chacha_drbg_instantiate(d, seed, sizeof(seed), NULL, 0);
    chacha_drbg_generate(d, out, sizeof(out), NULL, 0);
    return d;
}

static int all_zero(const void *p, size_t n)
{
    const volatile uint8_t *c = p;
    uint8_t acc = 0;

    while (n-- > 0)
        acc |= *c++;
    return acc == 0;
}

static int overlaps(const void *a, const void *b)
{
    const uint8_t *x = a, *y = b;

    return x < y + sizeof(struct chacha_drbg_secret)
           && y < x + sizeof(struct chacha_drbg_secret);
}

/* ---- packing and reuse ------------------------------------------------ */

static void test_packing_and_reuse(void)
{
    struct chacha_drbg *d[MANY];
    void *slot[MANY];
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), i, j;
    unsigned long maps0, calls0, maps_used, calls_reuse;
    int distinct = 1, made = 1, wiped = 1, reused = 1;

    chacha_pool_trim(); /* start from no mapping at all */
    maps0 = mmaps();
    for (i = 0; i < MANY; i++) {
        d[i] = seeded((uint8_t)i);
        made &= d[i] != NULL;
        slot[i] = d[i] != NULL ? (void *)d[i]->s : NULL;
    }
    if (!TU_OK(made, "%d generators made", MANY))
        return;
    maps_used = mmaps() - maps0;
    for (i = 0; i < MANY; i++)
        for (j = i + 1; j < MANY; j++)
            distinct &= !overlaps(slot[i], slot[j]);
    TU_OK(distinct, "no two generators share any byte of state");
    TU_OK(maps_used >= 1 && maps_used * 3 <= MANY
              && maps_used * pg <= (size_t)MANY * pg / 3,
          "%d states in %lu mappings: at least 3 states a mapping, each "
          "mapping at most %zu pages of %zu bytes",
          MANY, maps_used, (size_t)(CHACHA_POOL_CHUNK_BYTES + pg - 1) / pg, pg);

    calls0 = syscalls();
    for (i = 0; i < MANY; i++) {
        chacha_drbg_free(d[i]);
        /* the mapping stays, so the slot can be read: it must be zero */
        wiped &= all_zero(slot[i], sizeof(struct chacha_drbg_secret));
    }
    TU_OK(wiped, "a freed state is wiped at once, every byte");
    for (i = 0; i < MANY; i++) {
        int known = 0;

        d[i] = seeded((uint8_t)(i + 100));
        for (j = 0; d[i] != NULL && j < MANY; j++)
            known |= (void *)d[i]->s == slot[j];
        reused &= known;
    }
    calls_reuse = syscalls() - calls0;
    TU_OK(reused, "new generators reuse the freed slots");
    TU_OK(calls_reuse == 0,
          "freeing %d and making %d again: %lu mmap/munmap/madvise calls", MANY,
          MANY, calls_reuse);
    for (i = 0; i < MANY; i++)
        chacha_drbg_free(d[i]);

    calls0 = syscalls();
    for (i = 0; i < 10000; i++)
        chacha_drbg_free(seeded((uint8_t)i));
    TU_OK(syscalls() - calls0 == 0,
          "10000 generators made, used and freed in turn: %lu calls",
          syscalls() - calls0);

    maps0 = munmaps();
    chacha_pool_trim();
    TU_OK(munmaps() - maps0 == maps_used,
          "trim with no generator left unmaps all %lu mappings (%lu)",
          maps_used, munmaps() - maps0);
    d[0] = seeded(1);
    TU_OK(d[0] != NULL, "a generator after trim maps again");
    chacha_drbg_free(d[0]);
    chacha_pool_trim();
}

/* ---- fork from several threads while others make and free ------------- */

#define CHURNERS 3
#define FORKERS 3
#define FORKS 15
#define FORKS_VALGRIND 3 /* each child is a whole memcheck process */
#define HOLD 8
#define REG_MAX (CHURNERS * HOLD + FORKERS * 4)

/* Every state some thread holds, seeded; the child checks against it. */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static void *reg[REG_MAX];
static int stop;

static void reg_set(void *p, void *q)
{
    size_t i;

    pthread_mutex_lock(&reg_lock);
    for (i = 0; i < REG_MAX; i++)
        if (reg[i] == p) {
            reg[i] = q;
            break;
        }
    pthread_mutex_unlock(&reg_lock);
}

/* a consistent registry in the child: no thread is mid-update at fork */
static void reg_prepare(void)
{
    pthread_mutex_lock(&reg_lock);
}

static void reg_release(void)
{
    pthread_mutex_unlock(&reg_lock);
}

static void *churn(void *arg)
{
    struct chacha_drbg *held[HOLD] = { 0 };
    unsigned int i = 0;

    (void)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        unsigned int k = i++ % HOLD;

        if (held[k] != NULL) {
            reg_set(held[k]->s, NULL);
            chacha_drbg_free(held[k]);
        }
        held[k] = seeded((uint8_t)i);
        if (held[k] != NULL)
            reg_set(NULL, held[k]->s);
    }
    for (i = 0; i < HOLD; i++)
        if (held[i] != NULL) {
            reg_set(held[i]->s, NULL);
            chacha_drbg_free(held[i]);
        }
    return NULL;
}

/*
 * In a child: the parent's states read as unseeded (the mode's own check),
 * and 40 new generators are all distinct from them and from each other.
 * Returns an exit code: 0 good, 1 a parent state still seeded, 2 a slot
 * handed out twice or one the parent held, 3 no generator.
 */
static int child_checks(struct chacha_drbg **own, size_t nown)
{
    struct chacha_drbg *fresh[40];
    size_t i, j;
    int rc = 0;

    for (i = 0; i < nown; i++)
        if (own[i] != NULL && chacha_drbg_is_seeded(own[i]))
            rc = 1;
    for (i = 0; i < 40 && rc == 0; i++) {
        fresh[i] = seeded((uint8_t)(200 + i));
        if (fresh[i] == NULL) {
            rc = 3;
            break;
        }
        for (j = 0; j < REG_MAX; j++)
            if (reg[j] != NULL && overlaps(reg[j], fresh[i]->s))
                rc = 2;
        for (j = 0; j < i; j++)
            if (overlaps(fresh[j]->s, fresh[i]->s))
                rc = 2;
    }
    while (i-- > 0)
        chacha_drbg_free(fresh[i]);
    return rc;
}

struct forker {
    int bad[4]; /* by exit code */
    int forks;
};

/* A fork child of forker(): the checks, on the 4 generators |arg| holds. */
static int forker_child(void *arg)
{
    alarm(20);
    tu_child_of_threads();
    return child_checks(arg, 4);
}

static int forks_each(void)
{
    return tu_under_valgrind() ? FORKS_VALGRIND : FORKS;
}

static void *forker(void *arg)
{
    struct forker *f = arg;
    struct chacha_drbg *own[4];
    int k, forks = forks_each();

    for (k = 0; k < 4; k++) {
        own[k] = seeded((uint8_t)(k + 50));
        if (own[k] != NULL)
            reg_set(NULL, own[k]->s);
    }
    for (k = 0; k < forks; k++) {
        int rc = tu_wait_exit(
            tu_split(TU_SPLIT_FORK, forker_child, own, NULL, 0), NULL);

        if (rc >= 0 && rc < 4)
            f->bad[rc]++;
        else
            f->bad[3]++;
        f->forks++;
    }
    for (k = 0; k < 4; k++)
        if (own[k] != NULL) {
            reg_set(own[k]->s, NULL);
            chacha_drbg_free(own[k]);
        }
    return NULL;
}

/* 1 if a generator made now gets fork mode |mode|. */
static int new_generator_in(enum chacha_fork_mode mode)
{
    struct chacha_drbg *d = seeded(1);
    int in = d != NULL && d->fork_mode == mode;

    chacha_drbg_free(d);
    return in;
}

/*
 * Forks from threads while others make and free generators, with |mode| the
 * best fork mode available (CHACHA_FORK_WIPEONFORK: the automatic choice).
 */
static void test_fork_threads(enum chacha_fork_mode mode, const char *name)
{
    pthread_t ch[CHURNERS], fk[FORKERS];
    struct forker f[FORKERS];
    int i, ok = 1, seen = 0, parent_seeded = 0, twice = 0, failed = 0;

    chacha_pool_trim(); /* the next mappings get |mode| at best */
    lw_limit_fork_mode(mode);
    if (mode != CHACHA_FORK_WIPEONFORK && !new_generator_in(mode))
        TU_OK(0, "%s: a new generator is in that mode", name);
    __atomic_store_n(&stop, 0, __ATOMIC_RELEASE);
    memset(f, 0, sizeof(f));
    for (i = 0; i < CHURNERS; i++)
        ok &= pthread_create(&ch[i], NULL, churn, NULL) == 0;
    for (i = 0; i < FORKERS; i++)
        ok &= pthread_create(&fk[i], NULL, forker, &f[i]) == 0;
    if (!TU_OK(ok, "%s: threads started", name))
        abort();
    for (i = 0; i < FORKERS; i++)
        pthread_join(fk[i], NULL);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (i = 0; i < CHURNERS; i++)
        pthread_join(ch[i], NULL);
    for (i = 0; i < FORKERS; i++) {
        seen += f[i].forks;
        parent_seeded += f[i].bad[1];
        twice += f[i].bad[2];
        failed += f[i].bad[3];
    }
    TU_OK(seen == FORKERS * forks_each() && failed == 0,
          "%s: %d forks from %d threads while %d threads make and free "
          "generators: every child ran its checks (%d failed)",
          name, seen, FORKERS, CHURNERS, failed);
    TU_OK(parent_seeded == 0,
          "%s: no child found a parent's state still seeded (%d did)", name,
          parent_seeded);
    TU_OK(twice == 0,
          "%s: no child was handed a slot a parent thread held, or one "
          "slot twice (%d were)",
          name, twice);
    lw_limit_fork_mode(CHACHA_FORK_WIPEONFORK);
    chacha_pool_trim();
}

/* ---- _Fork: no handler runs ------------------------------------------- */

static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cv = PTHREAD_COND_INITIALIZER;
static int idle_ready, idle_quit;

/* Holds generators, then sits outside the module until told to quit. */
static void *idler(void *arg)
{
    struct chacha_drbg **d = arg;
    int i;

    for (i = 0; i < 4; i++) {
        d[i] = seeded((uint8_t)(i + 9));
        chacha_drbg_free(seeded((uint8_t)i)); /* a free slot, too */
    }
    pthread_mutex_lock(&idle_lock);
    idle_ready = 1;
    pthread_cond_broadcast(&idle_cv);
    while (!idle_quit)
        pthread_cond_wait(&idle_cv, &idle_lock);
    pthread_mutex_unlock(&idle_lock);
    return NULL;
}

/* The _Fork child: the checks, on the 5 generators |arg| holds. */
static int ufork_child(void *arg)
{
    alarm(10); /* a deadlock shows as SIGALRM */
    return child_checks(arg, 5);
}

static void test_underscore_fork(void)
{
    struct chacha_drbg *theirs[4] = { 0 }, *mine, *own[5];
    pthread_t th;
    int status, rc, i;

    if (!tu_split_available(TU_SPLIT_UFORK, NULL, NULL)) {
        tu_skip("_Fork: needs glibc 2.34");
        tu_skip("_Fork: needs glibc 2.34");
        return;
    }
    mine = seeded(77);
    idle_ready = idle_quit = 0;
    if (!TU_OK(mine != NULL && pthread_create(&th, NULL, idler, theirs) == 0,
               "_Fork: generators held by this thread and another"))
        return;
    pthread_mutex_lock(&idle_lock);
    while (!idle_ready)
        pthread_cond_wait(&idle_cv, &idle_lock);
    pthread_mutex_unlock(&idle_lock);
    for (i = 0; i < 4; i++) {
        reg_set(NULL, theirs[i]->s);
        own[1 + i] = theirs[i];
    }
    reg_set(NULL, mine->s);
    own[0] = mine;
    rc = tu_wait_exit(tu_split(TU_SPLIT_UFORK, ufork_child, own, NULL, 0),
                      &status);
    TU_OK(rc >= 0,
          "_Fork child with another thread alive (idle) finished, no "
          "deadlock (status 0x%x)",
          status);
    TU_OK(rc == 0,
          "_Fork child: parent states unseeded, new ones distinct from them "
          "and each other (exit %d)",
          rc);
    pthread_mutex_lock(&idle_lock);
    idle_quit = 1;
    pthread_cond_broadcast(&idle_cv);
    pthread_mutex_unlock(&idle_lock);
    pthread_join(th, NULL);
    for (i = 0; i < 4; i++) {
        reg_set(theirs[i]->s, NULL);
        chacha_drbg_free(theirs[i]);
    }
    reg_set(mine->s, NULL);
    chacha_drbg_free(mine);
    chacha_pool_trim();
}

static void body(void)
{
    static int registered;

    if (!registered) {
        registered = pthread_atfork(reg_prepare, reg_release, reg_release) == 0;
        if (!TU_OK(registered, "test atfork handlers registered"))
            return;
    }
    /*
     * getpid mode first: a mapping that falls back to the atfork handler
     * (as every one does where madvise is ignored) registers it for good
     */
    test_fork_threads(CHACHA_FORK_GETPID, "getpid mode");
    test_fork_threads(CHACHA_FORK_ATFORK, "atfork mode");
    test_fork_threads(CHACHA_FORK_WIPEONFORK, "automatic mode");
    test_packing_and_reuse();
    test_underscore_fork();
}

int main(void)
{
    return tu_main_per_impl(body);
}
