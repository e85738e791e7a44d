/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pages for generator state: private anonymous mappings that are left out of
 * core dumps and, where the kernel really honours it, wiped in a fork child
 * (MADV_WIPEONFORK), whatever made the child.  Where it does not, a split
 * is detected by a generation counter bumped in a pthread_atfork child
 * handler (fork() only) together with getpid() (every split that changes
 * the pid), and by getpid() alone if the handler cannot be registered.
 */
#ifndef CHACHARNG_SECPAGE_H
#define CHACHARNG_SECPAGE_H

#include <stddef.h>
#include <stdint.h>

enum chacha_fork_mode {
    CHACHA_FORK_WIPEONFORK = 1, /* the kernel zeroes the page in the child */
    CHACHA_FORK_ATFORK = 2,     /* compare chacha_fork_generation() and
                                 * getpid(): a syscall per request */
    CHACHA_FORK_GETPID = 3      /* compare getpid() alone */
};

/*
 * Map |len| bytes (rounded up to whole pages) of zeroed memory for secrets.
 * *|mode| receives how a fork will be noticed for this mapping;
 * *|transient| is 1 if wipe-on-fork was wanted and refused for a reason
 * that may pass (see chacha_secpage_retry_wipeonfork).  Returns NULL if
 * the mapping fails.
 */
void *chacha_secpage_alloc(size_t len, enum chacha_fork_mode *mode,
                           int *transient);

/*
 * Ask again for wipe-on-fork on a mapping from chacha_secpage_alloc() that
 * got a fallback mode with *|transient| set.  Returns 1 if granted (the
 * mapping is now CHACHA_FORK_WIPEONFORK); else sets *|transient| as above.
 */
int chacha_secpage_retry_wipeonfork(void *p, size_t len, int *transient);

/* Wipe and unmap a mapping from chacha_secpage_alloc(). */
void chacha_secpage_free(void *p, size_t len);

/* Incremented in every fork child (atfork fallback). */
uint32_t chacha_fork_generation(void);

/*
 * 1 if the kernel honours madvise(), probed now on a scratch page (for
 * tests; allocations probe their own pages); 0 if not or if it cannot tell.
 */
int chacha_secpage_madvise_works(void);

#endif
