/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Generator states packed several to a secret mapping (secpage.h), so that
 * a context costs a slot rather than two pages and, once the pool is warm,
 * no system call: a released slot is wiped and handed out again, and its
 * mapping stays until chacha_pool_trim() (provider teardown), because
 * munmap in a threaded process interrupts every CPU.
 *
 * The bookkeeping is on the heap, never in the secret mappings, so a
 * wipe-on-fork child finds it intact, describing exactly the slots its own
 * copies of the parent's contexts hold.  It takes no lock: a child made by
 * _Fork or clone, which run no atfork handler, can never find the pool
 * held by a thread that did not come along.
 */
#ifndef CHACHARNG_STATEPOOL_H
#define CHACHARNG_STATEPOOL_H

#include <stddef.h>

#include "secpage.h"

/* Largest state a slot holds; chacha_pool_get() refuses a larger one. */
#define CHACHA_POOL_SLOT_BYTES 1152

/*
 * Bytes of one mapping (rounded up to a whole page), holding as many slots
 * as fit, at most 64: 14 slots with 4 KiB pages.  One mmap per 14 states.
 */
#define CHACHA_POOL_CHUNK_BYTES 16384

struct chacha_pool_chunk;

/*
 * A zeroed slot of |size| bytes for secrets.  *|mode| receives how a fork
 * is noticed for it and *|home| what chacha_pool_put() needs back.  NULL
 * if no slot is free and no new mapping can be made.
 */
void *chacha_pool_get(size_t size, enum chacha_fork_mode *mode,
                      struct chacha_pool_chunk **home);

/* Wipe |p| (from chacha_pool_get) and make its slot free again. */
void chacha_pool_put(void *p, struct chacha_pool_chunk *home);

/*
 * Unmap every mapping none of whose slots is in use (provider teardown).
 * Safe while other threads get and put.
 */
void chacha_pool_trim(void);

#endif
