/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Generator states packed several to a secret mapping (secpage.h), so that
 * a context costs a slot rather than two pages and, once the pool is warm,
 * no system call: a released slot is wiped and handed out again, and its
 * mapping stays until chacha_pool_trim() (provider teardown), because
 * munmap in a threaded process interrupts every CPU.
 *
 * The slots are a slot pool's (slotpool.h): its bookkeeping is on the
 * heap, so a wipe-on-fork child finds it intact, and it takes no lock.
 */
#ifndef CHACHARNG_STATEPOOL_H
#define CHACHARNG_STATEPOOL_H

#include <stddef.h>

#include "secpage.h"
#include "slotpool.h"

/* Largest state a slot holds; chacha_pool_get() refuses a larger one. */
#define CHACHA_POOL_SLOT_BYTES 1152

/*
 * Bytes of one mapping (rounded up to a whole page), holding as many slots
 * as fit, at most 64: 14 slots with 4 KiB pages.  One mmap per 14 states.
 */
#define CHACHA_POOL_CHUNK_BYTES 16384

/*
 * A zeroed slot of |size| bytes for secrets.  *|mode| receives how a fork
 * is noticed for it and *|home| what chacha_pool_put() needs back.  NULL
 * if no slot is free and no new mapping can be made.
 */
void *chacha_pool_get(size_t size, enum chacha_fork_mode *mode,
                      struct chacha_slotpool_map **home);

/* Wipe |p| (from chacha_pool_get) and make its slot free again. */
void chacha_pool_put(void *p, struct chacha_slotpool_map *home);

/*
 * Unmap every mapping none of whose slots is in use (provider teardown).
 * Safe while other threads get and put.
 */
void chacha_pool_trim(void);

#endif
