/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The state pool (see statepool.h).  Mappings are "chunks" of a few pages,
 * each described by a heap record with a bitmap of the slots in use.
 * Every field another thread may read while it changes is atomic, and a
 * slot is claimed by compare-and-swap on its bit, so nothing here waits:
 * a thread stopped anywhere (or left behind by _Fork) costs at worst a
 * slot or a mapping that the child never uses, never a wrong owner.
 *
 * A record is never freed, only retired: trim claims every slot of an idle
 * chunk at once (the bitmap goes from 0 to all ones, which no allocation
 * can race with), unmaps it and marks the record retired; a later
 * allocation that needs a new mapping revives a retired record before it
 * makes a new one, so records stay as many as the most chunks ever alive.
 */
#include "statepool.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "wipe.h"

/* The bitmap of a retired chunk, or of one being set up. */
#define ALL_TAKEN (~(uint64_t)0)

enum { LIVE, RETIRED, REVIVING };

/*
 * A chunk's modes in one word: whether a refused wipe-on-fork is worth
 * asking for again, and the mode obtained.
 */
#define MODES(retry, mode) ((retry) << 4 | (int)(mode))
#define MODES_RETRY(m) (((m) >> 4) & 1)
#define MODES_MODE(m) ((enum chacha_fork_mode)((m)&0xf))

struct chacha_pool_chunk {
    struct chacha_pool_chunk *next; /* fixed before the record is published */
    unsigned char *base;            /* atomic; NULL while retired */
    int modes;                      /* atomic; see MODES() */
    int life;                       /* atomic; LIVE, RETIRED or REVIVING */
    uint64_t used;                  /* atomic; bit i: slot i is taken */
};

static struct chacha_pool_chunk *chunks; /* atomic; newest first */

static size_t chunk_len(void)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);

    return (CHACHA_POOL_CHUNK_BYTES + pg - 1) / pg * pg;
}

static unsigned int chunk_slots(void)
{
    size_t n = chunk_len() / CHACHA_POOL_SLOT_BYTES;

    return n > 64 ? 64 : (unsigned int)n;
}

static uint64_t full_mask(void)
{
    unsigned int n = chunk_slots();

    return n == 64 ? ALL_TAKEN : ((uint64_t)1 << n) - 1;
}

static void *slot_of(struct chacha_pool_chunk *c, unsigned int i)
{
    return __atomic_load_n(&c->base, __ATOMIC_RELAXED)
           + (size_t)i * CHACHA_POOL_SLOT_BYTES;
}

/* Claim a free slot of |c|; -1 if none. */
static int claim(struct chacha_pool_chunk *c, uint64_t mask)
{
    uint64_t u = __atomic_load_n(&c->used, __ATOMIC_ACQUIRE);

    while ((~u & mask) != 0) {
        unsigned int i = (unsigned int)__builtin_ctzll(~u & mask);

        if (__atomic_compare_exchange_n(&c->used, &u, u | (uint64_t)1 << i, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return (int)i;
    }
    return -1;
}

/* Map a chunk into |c| with slot 0 taken; 1 on success. */
static int map_into(struct chacha_pool_chunk *c)
{
    enum chacha_fork_mode mode;
    int transient;
    unsigned char *p = chacha_secpage_alloc(chunk_len(), &mode, &transient);

    if (p == NULL)
        return 0;
    __atomic_store_n(&c->base, p, __ATOMIC_RELAXED);
    __atomic_store_n(&c->modes, MODES(transient, mode), __ATOMIC_RELAXED);
    __atomic_store_n(&c->life, LIVE, __ATOMIC_RELAXED);
    /* publishes base and modes to every claim() that sees a free bit */
    __atomic_store_n(&c->used, 1, __ATOMIC_RELEASE);
    return 1;
}

/* A new chunk, its slot 0 taken by the caller; NULL if out of memory. */
static struct chacha_pool_chunk *grow(void)
{
    struct chacha_pool_chunk *c;

    for (c = __atomic_load_n(&chunks, __ATOMIC_ACQUIRE); c != NULL;
         c = c->next) {
        int life = RETIRED;

        if (__atomic_compare_exchange_n(&c->life, &life, REVIVING, 0,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            if (map_into(c))
                return c;
            __atomic_store_n(&c->life, RETIRED, __ATOMIC_RELEASE);
            return NULL;
        }
    }
    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->used = ALL_TAKEN;
    if (!map_into(c)) {
        free(c);
        return NULL;
    }
    c->next = __atomic_load_n(&chunks, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&chunks, &c->next, c, 0,
                                        __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        ;
    return c;
}

/*
 * The fork mode of a slot just claimed in |c|.  A chunk whose wipe-on-fork
 * was refused for a passing reason (a transient madvise error) asks again
 * for each new owner, so that one error costs one context its wipe-on-fork,
 * not every context the chunk will ever hold; the owners already there
 * keep their fallback, which stays correct under wipe-on-fork too.
 */
static enum chacha_fork_mode chunk_mode(struct chacha_pool_chunk *c)
{
    int m = __atomic_load_n(&c->modes, __ATOMIC_RELAXED), transient;

    if (!MODES_RETRY(m))
        return MODES_MODE(m);
    if (chacha_secpage_retry_wipeonfork(
            __atomic_load_n(&c->base, __ATOMIC_RELAXED), chunk_len(),
            &transient)) {
        __atomic_store_n(&c->modes, MODES(0, CHACHA_FORK_WIPEONFORK),
                         __ATOMIC_RELAXED);
        return CHACHA_FORK_WIPEONFORK;
    }
    if (!transient)
        __atomic_store_n(&c->modes, MODES(0, MODES_MODE(m)), __ATOMIC_RELAXED);
    return MODES_MODE(m);
}

void *chacha_pool_get(size_t size, enum chacha_fork_mode *mode,
                      struct chacha_pool_chunk **home)
{
    uint64_t mask = full_mask();
    struct chacha_pool_chunk *c;
    int i = -1;

    if (size > CHACHA_POOL_SLOT_BYTES || chunk_slots() == 0)
        return NULL;
    for (c = __atomic_load_n(&chunks, __ATOMIC_ACQUIRE); c != NULL; c = c->next)
        if ((i = claim(c, mask)) >= 0)
            break;
    if (c == NULL) {
        c = grow();
        if (c == NULL)
            return NULL;
        i = 0;
    }
    *mode = chunk_mode(c);
    *home = c;
    return slot_of(c, (unsigned int)i);
}

void chacha_pool_put(void *p, struct chacha_pool_chunk *home)
{
    size_t i;

    if (p == NULL)
        return;
    i = (size_t)((unsigned char *)p
                 - __atomic_load_n(&home->base, __ATOMIC_RELAXED))
        / CHACHA_POOL_SLOT_BYTES;
    /* the next owner, in this process or a fork child, starts from zero */
    chacha_wipe(p, CHACHA_POOL_SLOT_BYTES);
    __atomic_and_fetch(&home->used, ~((uint64_t)1 << i), __ATOMIC_RELEASE);
}

void chacha_pool_trim(void)
{
    struct chacha_pool_chunk *c;

    for (c = __atomic_load_n(&chunks, __ATOMIC_ACQUIRE); c != NULL;
         c = c->next) {
        uint64_t idle = 0;

        if (!__atomic_compare_exchange_n(&c->used, &idle, ALL_TAKEN, 0,
                                         __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            continue;
        chacha_secpage_free(__atomic_load_n(&c->base, __ATOMIC_RELAXED),
                            chunk_len());
        __atomic_store_n(&c->base, NULL, __ATOMIC_RELAXED);
        __atomic_store_n(&c->life, RETIRED, __ATOMIC_RELEASE);
    }
}
