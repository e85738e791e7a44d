/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The state pool (see statepool.h): a slot pool (slotpool.h) whose
 * mappings are secret pages (secpage.h), each of whose records carries
 * how a fork is noticed for it.
 */
#include "statepool.h"

#include <unistd.h>

#include "slotpool.h"

/*
 * A mapping's modes in its record's word: whether a refused wipe-on-fork
 * is worth asking for again, and the mode obtained.
 */
#define MODES(retry, mode) ((retry) << 4 | (int)(mode))
#define MODES_RETRY(m) (((m) >> 4) & 1)
#define MODES_MODE(m) ((enum chacha_fork_mode)((m)&0xf))

static void shape(struct chacha_slotpool_shape *sh)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    size_t len = (CHACHA_POOL_CHUNK_BYTES + pg - 1) / pg * pg;
    size_t n = len / CHACHA_POOL_SLOT_BYTES;

    sh->slot_bytes = CHACHA_POOL_SLOT_BYTES;
    sh->span_bytes = len;
    sh->per_span = sh->slots = n > 64 ? 64 : (unsigned int)n;
}

static void *map(size_t len, int *tag)
{
    enum chacha_fork_mode mode;
    int transient;
    void *p = chacha_secpage_alloc(len, &mode, &transient);

    *tag = MODES(transient, mode);
    return p;
}

static struct chacha_slotpool pool = { shape, map, chacha_secpage_free, NULL };

/*
 * The fork mode of a slot just taken in |c|.  A mapping whose wipe-on-fork
 * was refused for a passing reason (a transient madvise error) asks again
 * for each new owner, so that one error costs one context its wipe-on-fork,
 * not every context the mapping will ever hold; the owners already there
 * keep their fallback, which stays correct under wipe-on-fork too.
 */
static enum chacha_fork_mode chunk_mode(struct chacha_slotpool_map *c)
{
    int m = chacha_slotpool_tag(c), transient;

    if (!MODES_RETRY(m))
        return MODES_MODE(m);
    if (chacha_secpage_retry_wipeonfork(
            chacha_slotpool_base(c), chacha_slotpool_len(&pool), &transient)) {
        chacha_slotpool_set_tag(c, MODES(0, CHACHA_FORK_WIPEONFORK));
        return CHACHA_FORK_WIPEONFORK;
    }
    if (!transient)
        chacha_slotpool_set_tag(c, MODES(0, MODES_MODE(m)));
    return MODES_MODE(m);
}

void *chacha_pool_get(size_t size, enum chacha_fork_mode *mode,
                      struct chacha_slotpool_map **home)
{
    void *p;

    if (size > CHACHA_POOL_SLOT_BYTES)
        return NULL;
    p = chacha_slotpool_get(&pool, home);
    if (p != NULL)
        *mode = chunk_mode(*home);
    return p;
}

void chacha_pool_put(void *p, struct chacha_slotpool_map *home)
{
    chacha_slotpool_put(&pool, p, home);
}

void chacha_pool_trim(void)
{
    chacha_slotpool_trim(&pool);
}
