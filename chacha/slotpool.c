/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The slot allocator (see slotpool.h).  Every field another thread may
 * read while it changes is atomic, and a slot is claimed by
 * compare-and-swap on its bit, so a thread stopped anywhere (or left
 * behind by _Fork) costs at worst a slot or a mapping that the child never
 * uses, never a wrong owner.
 *
 * A record is never freed, only retired: trim claims every slot of an idle
 * mapping at once (the bitmap goes from 0 to all ones, which no claim can
 * race with), clears the record's address, unmaps it and marks the record
 * retired; a later get that needs a new mapping revives a retired record
 * before it makes a new one, so records stay as many as the most mappings
 * ever alive.  A slot goes back to the record it came from, never to one
 * found by its address.
 */
#include "slotpool.h"

#include <stdint.h>
#include <stdlib.h>

#include "wipe.h"

/* The bitmap of a retired mapping, or of one being set up. */
#define ALL_TAKEN (~(uint64_t)0)

enum { LIVE, RETIRED, REVIVING };

struct chacha_slotpool_map {
    struct chacha_slotpool_map *next; /* fixed before it is published */
    unsigned char *base;              /* atomic; NULL while retired */
    int tag;                          /* atomic; the owner's word */
    int life;                         /* atomic; LIVE, RETIRED or REVIVING */
    uint64_t used;                    /* atomic; bit i: slot i is taken */
};

static size_t map_len(const struct chacha_slotpool_shape *sh)
{
    return (sh->slots + sh->per_span - 1) / sh->per_span * sh->span_bytes;
}

static uint64_t slots_mask(const struct chacha_slotpool_shape *sh)
{
    return sh->slots >= 64 ? ALL_TAKEN : ((uint64_t)1 << sh->slots) - 1;
}

/* Claim a free slot of |m|; -1 if none. */
static int claim(struct chacha_slotpool_map *m, uint64_t mask)
{
    uint64_t u = __atomic_load_n(&m->used, __ATOMIC_ACQUIRE);

    while ((~u & mask) != 0) {
        unsigned int i = (unsigned int)__builtin_ctzll(~u & mask);

        if (__atomic_compare_exchange_n(&m->used, &u, u | (uint64_t)1 << i, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return (int)i;
    }
    return -1;
}

/* Map into |m| with slot 0 taken; 1 on success. */
static int map_into(struct chacha_slotpool *pool,
                    const struct chacha_slotpool_shape *sh,
                    struct chacha_slotpool_map *m)
{
    int tag = 0;
    unsigned char *p = pool->map(map_len(sh), &tag);

    if (p == NULL)
        return 0;
    __atomic_store_n(&m->base, p, __ATOMIC_RELAXED);
    __atomic_store_n(&m->tag, tag, __ATOMIC_RELAXED);
    __atomic_store_n(&m->life, LIVE, __ATOMIC_RELAXED);
    /* publishes base and tag to every claim() that sees a free bit */
    __atomic_store_n(&m->used, 1, __ATOMIC_RELEASE);
    return 1;
}

/* A new mapping, its slot 0 taken by the caller; NULL if none. */
static struct chacha_slotpool_map *grow(struct chacha_slotpool *pool,
                                        const struct chacha_slotpool_shape *sh)
{
    struct chacha_slotpool_map *m;

    for (m = __atomic_load_n(&pool->maps, __ATOMIC_ACQUIRE); m != NULL;
         m = m->next) {
        int life = RETIRED;

        if (__atomic_compare_exchange_n(&m->life, &life, REVIVING, 0,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            if (map_into(pool, sh, m))
                return m;
            __atomic_store_n(&m->life, RETIRED, __ATOMIC_RELEASE);
            return NULL;
        }
    }
    m = calloc(1, sizeof(*m));
    if (m == NULL)
        return NULL;
    m->used = ALL_TAKEN;
    if (!map_into(pool, sh, m)) {
        free(m);
        return NULL;
    }
    m->next = __atomic_load_n(&pool->maps, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&pool->maps, &m->next, m, 0,
                                        __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        ;
    return m;
}

void *chacha_slotpool_get(struct chacha_slotpool *pool,
                          struct chacha_slotpool_map **home)
{
    struct chacha_slotpool_shape sh;
    struct chacha_slotpool_map *m;
    uint64_t mask;
    int i = -1;

    pool->shape(&sh);
    if (sh.slots == 0 || sh.per_span == 0)
        return NULL;
    mask = slots_mask(&sh);
    for (m = __atomic_load_n(&pool->maps, __ATOMIC_ACQUIRE); m != NULL;
         m = m->next)
        if ((i = claim(m, mask)) >= 0)
            break;
    if (m == NULL) {
        m = grow(pool, &sh);
        if (m == NULL)
            return NULL;
        i = 0;
    }
    *home = m;
    return __atomic_load_n(&m->base, __ATOMIC_RELAXED)
           + (size_t)i / sh.per_span * sh.span_bytes
           + (size_t)i % sh.per_span * sh.slot_bytes;
}

/* Wipe slot |p| of |m| and free it; 0 if |p| is not one of |m|'s. */
static int put_into(const struct chacha_slotpool_shape *sh,
                    struct chacha_slotpool_map *m, unsigned char *p)
{
    unsigned char *base = __atomic_load_n(&m->base, __ATOMIC_RELAXED);
    /* as integers: |p| may lie in another mapping altogether */
    uintptr_t at = (uintptr_t)p, from = (uintptr_t)base;
    size_t off;

    if (base == NULL || at < from || at - from >= map_len(sh))
        return 0;
    off = (size_t)(at - from);
    /* the next owner, in this process or a fork child, starts from zero */
    chacha_wipe(p, sh->slot_bytes);
    __atomic_and_fetch(
        &m->used,
        ~((uint64_t)1 << (off / sh->span_bytes * sh->per_span
                          + off % sh->span_bytes / sh->slot_bytes)),
        __ATOMIC_RELEASE);
    return 1;
}

void chacha_slotpool_put(struct chacha_slotpool *pool, void *p,
                         struct chacha_slotpool_map *home)
{
    struct chacha_slotpool_shape sh;

    if (p == NULL)
        return;
    pool->shape(&sh);
    put_into(&sh, home, p);
}

void chacha_slotpool_trim(struct chacha_slotpool *pool)
{
    struct chacha_slotpool_shape sh;
    struct chacha_slotpool_map *m;

    pool->shape(&sh);
    for (m = __atomic_load_n(&pool->maps, __ATOMIC_ACQUIRE); m != NULL;
         m = m->next) {
        uint64_t idle = 0;
        unsigned char *base;

        if (!__atomic_compare_exchange_n(&m->used, &idle, ALL_TAKEN, 0,
                                         __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            continue;
        base = __atomic_load_n(&m->base, __ATOMIC_RELAXED);
        /*
         * The record lets go of the addresses before the kernel does: once
         * unmapped, they may be given to a mapping that another thread
         * revives or makes, and nothing may then take them for this one's.
         */
        __atomic_store_n(&m->base, NULL, __ATOMIC_SEQ_CST);
        pool->unmap(base, map_len(&sh));
        __atomic_store_n(&m->life, RETIRED, __ATOMIC_RELEASE);
    }
}

void *chacha_slotpool_base(const struct chacha_slotpool_map *m)
{
    return __atomic_load_n(&m->base, __ATOMIC_RELAXED);
}

size_t chacha_slotpool_len(const struct chacha_slotpool *pool)
{
    struct chacha_slotpool_shape sh;

    pool->shape(&sh);
    return map_len(&sh);
}

int chacha_slotpool_tag(const struct chacha_slotpool_map *m)
{
    return __atomic_load_n(&m->tag, __ATOMIC_RELAXED);
}

void chacha_slotpool_set_tag(struct chacha_slotpool_map *m, int tag)
{
    __atomic_store_n(&m->tag, tag, __ATOMIC_RELAXED);
}
