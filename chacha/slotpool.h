/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fixed-size slots carved out of mappings of a few pages, handed out and
 * taken back without a lock: the allocator under the generator states
 * (statepool.c, in secret pages) and the vDSO's getrandom states (kmix.c,
 * in the mappings the kernel asks for).  Each owner says how its mappings
 * are made and shaped; the bookkeeping is this file's.
 *
 * The bookkeeping is a heap record per mapping, never inside a mapping, so
 * a fork child whose mappings were wiped (or dropped) finds it intact,
 * describing exactly the slots its own copies of the parent's objects
 * hold.  Nothing here waits: a slot is claimed by compare-and-swap on its
 * bit, so a child made by _Fork or clone, which runs no atfork handler,
 * never finds the pool held by a thread that did not come along.  A
 * released slot is wiped and handed out again; a mapping stays until
 * chacha_slotpool_trim(), because munmap in a threaded process interrupts
 * every CPU.
 */
#ifndef CHACHARNG_SLOTPOOL_H
#define CHACHARNG_SLOTPOOL_H

#include <stddef.h>

/*
 * How an owner's mappings are laid out: slots of |slot_bytes|, |per_span|
 * of them packed from the start of each |span_bytes| (so that none crosses
 * a span: a page for the vDSO's states), |slots| (1..64) to a mapping,
 * which is as many spans as that takes.
 */
struct chacha_slotpool_shape {
    size_t slot_bytes;
    size_t span_bytes;
    unsigned int per_span;
    unsigned int slots;
};

/* One mapping's record, on the heap; never freed, only retired. */
struct chacha_slotpool_map;

struct chacha_slotpool {
    /* The owner's, fixed before first use. */
    /* The layout; asked at every call, so it may be found at run time. */
    void (*shape)(struct chacha_slotpool_shape *sh);
    /*
     * A new mapping of |len| bytes, or NULL; *|tag| receives the owner's
     * word about it, kept in its record (chacha_slotpool_tag()).
     */
    void *(*map)(size_t len, int *tag);
    void (*unmap)(void *base, size_t len);
    /* The pool's own. */
    struct chacha_slotpool_map *maps; /* atomic; newest first */
};

/*
 * A slot of |pool| (zero if the owner's mappings start zeroed), its
 * mapping's record in *|home|; NULL if no slot is free and no mapping can
 * be made.
 */
void *chacha_slotpool_get(struct chacha_slotpool *pool,
                          struct chacha_slotpool_map **home);

/*
 * Wipe slot |p| (from chacha_slotpool_get(); NULL: nothing) and make it
 * free again.  |home| is the record chacha_slotpool_get() gave with it:
 * a slot is never looked up by its address, which a trim may be handing
 * from one mapping to another at that moment.
 */
void chacha_slotpool_put(struct chacha_slotpool *pool, void *p,
                         struct chacha_slotpool_map *home);

/*
 * Unmap every mapping none of whose slots is taken (provider teardown).
 * Safe while other threads get and put.
 */
void chacha_slotpool_trim(struct chacha_slotpool *pool);

/* A mapping's address and bytes, and the owner's word about it (atomic). */
void *chacha_slotpool_base(const struct chacha_slotpool_map *m);
size_t chacha_slotpool_len(const struct chacha_slotpool *pool);
int chacha_slotpool_tag(const struct chacha_slotpool_map *m);
void chacha_slotpool_set_tag(struct chacha_slotpool_map *m, int tag);

#endif
