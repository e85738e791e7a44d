/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Secret pages with fork protection (see secpage.h).  The madvise probe runs
 * once: qemu-user and some sandboxes return success for any advice without
 * doing anything, which would leave a forked child with its parent's key, so
 * an advice value no kernel knows must fail with EINVAL before
 * MADV_WIPEONFORK is trusted.
 */
#include "secpage.h"

#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include "wipe.h"

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif
#ifndef MADV_DONTDUMP
#define MADV_DONTDUMP 16
#endif

/* Far above any advice Linux defines: a kernel that acts on madvise says EINVAL. */
#define MADV_BOGUS 0x7ff1

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int madvise_honoured;
static int atfork_registered;
static uint32_t fork_generation;
static enum chacha_fork_mode forced_mode;
static unsigned int fail_next;

static void bump_fork_generation(void)
{
    __atomic_add_fetch(&fork_generation, 1, __ATOMIC_RELAXED);
}

static void probe(void)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    void *p = mmap(NULL, pg, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (p != MAP_FAILED) {
        madvise_honoured = madvise(p, pg, MADV_BOGUS) != 0 && errno == EINVAL;
        munmap(p, pg);
    }
    atfork_registered = pthread_atfork(NULL, NULL, bump_fork_generation) == 0;
}

int chacha_secpage_madvise_works(void)
{
    pthread_once(&probe_once, probe);
    return madvise_honoured;
}

uint32_t chacha_fork_generation(void)
{
    return __atomic_load_n(&fork_generation, __ATOMIC_RELAXED);
}

void chacha_secpage_force_mode(enum chacha_fork_mode mode)
{
    forced_mode = mode;
}

void chacha_secpage_fail_next(unsigned int n)
{
    fail_next = n;
}

static size_t round_to_pages(size_t len)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);

    return (len + pg - 1) / pg * pg;
}

void *chacha_secpage_alloc(size_t len, enum chacha_fork_mode *mode)
{
    void *p;

    pthread_once(&probe_once, probe);
    if (fail_next > 0) {
        fail_next--;
        return NULL;
    }
    len = round_to_pages(len);
    p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
             -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    /* keep keys out of core dumps; best effort, nothing depends on it */
    (void)madvise(p, len, MADV_DONTDUMP);

    if ((forced_mode == 0 || forced_mode == CHACHA_FORK_WIPEONFORK)
        && madvise_honoured && madvise(p, len, MADV_WIPEONFORK) == 0)
        *mode = CHACHA_FORK_WIPEONFORK;
    else if ((forced_mode == 0 || forced_mode == CHACHA_FORK_ATFORK)
             && atfork_registered)
        *mode = CHACHA_FORK_ATFORK;
    else
        *mode = CHACHA_FORK_GETPID;
    return p;
}

void chacha_secpage_free(void *p, size_t len)
{
    if (p == NULL)
        return;
    len = round_to_pages(len);
    /* the whole mapping held generator secrets */
    chacha_wipe(p, len);
    munmap(p, len);
}
