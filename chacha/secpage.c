/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Secret pages with fork protection (see secpage.h).  qemu-user and some
 * sandboxes return success for any madvise advice without doing anything,
 * which would leave a forked child with its parent's key, so each new
 * mapping first asks for an advice value no kernel knows, on itself, and
 * trusts MADV_WIPEONFORK only if that fails with EINVAL.  Probing the page
 * being set up, rather than a scratch page once per process, means the
 * probe cannot fail to run for want of memory, and nothing is remembered:
 * a transient error costs that one mapping its wipe-on-fork, never a later
 * one.
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

/* The child handler's registration: none yet (or failed), under way, done. */
enum { ATFORK_NONE, ATFORK_BUSY, ATFORK_DONE };

static int atfork_state;
static uint32_t fork_generation;

static void bump_fork_generation(void)
{
    __atomic_add_fetch(&fork_generation, 1, __ATOMIC_RELAXED);
}

/*
 * 1 once the atfork child handler is registered.  A failed registration
 * (ENOMEM) is tried again by the next allocation.  No lock: a lock held
 * by another thread at fork would stay held in the child.  A thread that
 * finds another one registering goes without, and so does a child forked
 * in the middle of it; both fall back to getpid() alone.
 */
static int atfork_registered(void)
{
    int st = __atomic_load_n(&atfork_state, __ATOMIC_ACQUIRE);

    if (st == ATFORK_DONE)
        return 1;
    if (st != ATFORK_NONE
        || !__atomic_compare_exchange_n(&atfork_state, &st, ATFORK_BUSY, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return 0;
    st = pthread_atfork(NULL, NULL, bump_fork_generation) == 0 ? ATFORK_DONE
                                                               : ATFORK_NONE;
    __atomic_store_n(&atfork_state, st, __ATOMIC_RELEASE);
    return st == ATFORK_DONE;
}

/*
 * 1 if the kernel acts on madvise() for |p|: it rejects advice it does not
 * know.  Success means the call was ignored (an emulator); any error other
 * than EINVAL means it could not tell this time.
 */
static int madvise_honoured(void *p, size_t len)
{
    return madvise(p, len, MADV_BOGUS) != 0 && errno == EINVAL;
}

int chacha_secpage_madvise_works(void)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    void *p = mmap(NULL, pg, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int r;

    if (p == MAP_FAILED)
        return 0;
    r = madvise_honoured(p, pg);
    munmap(p, pg);
    return r;
}

uint32_t chacha_fork_generation(void)
{
    return __atomic_load_n(&fork_generation, __ATOMIC_RELAXED);
}

static size_t round_to_pages(size_t len)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);

    return (len + pg - 1) / pg * pg;
}

/*
 * Ask for wipe-on-fork on |p|: 1 if granted.  *|transient| is set if it was
 * refused for a reason that may pass (an error other than the kernel's
 * EINVAL), so that asking again later is worth a system call.
 */
static int ask_wipeonfork(void *p, size_t len, int *transient)
{
    int r = madvise(p, len, MADV_BOGUS), err = errno;

    *transient = 0;
    if (r == 0)
        return 0; /* an emulator that ignores every advice */
    if (err != EINVAL) {
        *transient = 1; /* the probe could not tell this time */
        return 0;
    }
    if (madvise(p, len, MADV_WIPEONFORK) == 0)
        return 1;
    *transient = errno != EINVAL; /* EINVAL: a kernel older than 4.14 */
    return 0;
}

void *chacha_secpage_alloc(size_t len, enum chacha_fork_mode *mode,
                           int *transient)
{
    void *p;

    *transient = 0;
    len = round_to_pages(len);
    p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
             0);
    if (p == MAP_FAILED)
        return NULL;
    /* keep keys out of core dumps; best effort, nothing depends on it */
    (void)madvise(p, len, MADV_DONTDUMP);

    if (ask_wipeonfork(p, len, transient))
        *mode = CHACHA_FORK_WIPEONFORK;
    else if (atfork_registered())
        *mode = CHACHA_FORK_ATFORK;
    else
        *mode = CHACHA_FORK_GETPID;
    return p;
}

int chacha_secpage_retry_wipeonfork(void *p, size_t len, int *transient)
{
    return ask_wipeonfork(p, round_to_pages(len), transient);
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
