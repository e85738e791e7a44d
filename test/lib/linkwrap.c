/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The link-time wrappers of linkwrap.h.  With -Wl,--wrap=NAME the linker
 * sends the executable's calls of NAME to __wrap_NAME and resolves
 * __real_NAME to the C library's NAME.
 */
#include "linkwrap.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/types.h>

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000 /* Linux 4.17 */
#endif

void *__real_mmap(void *, size_t, int, int, int, off_t);
int __real_munmap(void *, size_t);
int __real_madvise(void *, size_t, int);
int __real_pthread_atfork(void (*)(void), void (*)(void), void (*)(void));
void *__wrap_mmap(void *, size_t, int, int, int, off_t);
int __wrap_munmap(void *, size_t);
int __wrap_madvise(void *, size_t, int);
int __wrap_pthread_atfork(void (*)(void), void (*)(void), void (*)(void));

static unsigned long n_mmap, n_munmap, n_madvise;
static int no_wipeonfork, atfork_fails;
static unsigned int mmap_countdown;
static int mmap_fired;
static void (*munmap_hook)(void *, size_t);
static void *mmap_at;

void lw_after_munmap(void (*hook)(void *base, size_t len))
{
    __atomic_store_n(&munmap_hook, hook, __ATOMIC_SEQ_CST);
}

void lw_place_mmap(void *at)
{
    __atomic_store_n(&mmap_at, at, __ATOMIC_SEQ_CST);
}

void lw_calls(unsigned long *mmaps, unsigned long *munmaps,
              unsigned long *madvises)
{
    if (mmaps != NULL)
        *mmaps = __atomic_load_n(&n_mmap, __ATOMIC_RELAXED);
    if (munmaps != NULL)
        *munmaps = __atomic_load_n(&n_munmap, __ATOMIC_RELAXED);
    if (madvises != NULL)
        *madvises = __atomic_load_n(&n_madvise, __ATOMIC_RELAXED);
}

void lw_limit_fork_mode(enum chacha_fork_mode best)
{
    __atomic_store_n(&no_wipeonfork, best != CHACHA_FORK_WIPEONFORK,
                     __ATOMIC_SEQ_CST);
    __atomic_store_n(&atfork_fails, best == CHACHA_FORK_GETPID,
                     __ATOMIC_SEQ_CST);
}

void lw_fail_mmap(unsigned int nth)
{
    __atomic_store_n(&mmap_fired, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&mmap_countdown, nth, __ATOMIC_SEQ_CST);
}

int lw_mmap_fired(void)
{
    return __atomic_load_n(&mmap_fired, __ATOMIC_SEQ_CST);
}

void *__wrap_mmap(void *a, size_t len, int prot, int flags, int fd, off_t off)
{
    unsigned int n = __atomic_load_n(&mmap_countdown, __ATOMIC_SEQ_CST);
    void *at;

    __atomic_add_fetch(&n_mmap, 1, __ATOMIC_RELAXED);
    /* the thread that counts the armed call down to 0 fails it */
    while (n != 0) {
        if (__atomic_compare_exchange_n(&mmap_countdown, &n, n - 1, 0,
                                        __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
            if (n == 1) {
                __atomic_store_n(&mmap_fired, 1, __ATOMIC_SEQ_CST);
                errno = ENOMEM;
                return MAP_FAILED;
            }
            break;
        }
    }
    at = __atomic_exchange_n(&mmap_at, NULL, __ATOMIC_SEQ_CST);
    if (at != NULL) {
        a = at;
        flags |= MAP_FIXED_NOREPLACE;
    }
    return __real_mmap(a, len, prot, flags, fd, off);
}

int __wrap_munmap(void *a, size_t len)
{
    void (*hook)(void *, size_t);
    int r;

    __atomic_add_fetch(&n_munmap, 1, __ATOMIC_RELAXED);
    r = __real_munmap(a, len);
    hook = __atomic_exchange_n(&munmap_hook, NULL, __ATOMIC_SEQ_CST);
    if (hook != NULL)
        hook(a, len);
    return r;
}

int __wrap_madvise(void *a, size_t len, int advice)
{
    __atomic_add_fetch(&n_madvise, 1, __ATOMIC_RELAXED);
    if (advice == MADV_WIPEONFORK
        && __atomic_load_n(&no_wipeonfork, __ATOMIC_SEQ_CST)) {
        errno = EINVAL;
        return -1;
    }
    return __real_madvise(a, len, advice);
}

int __wrap_pthread_atfork(void (*prepare)(void), void (*parent)(void),
                          void (*child)(void))
{
    if (__atomic_load_n(&atfork_fails, __ATOMIC_SEQ_CST))
        return ENOMEM; /* pthread_atfork returns the error number */
    return __real_pthread_atfork(prepare, parent, child);
}
