/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE /* RTLD_NEXT */

#include "race_window.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <sys/random.h>
#include <sys/types.h>
#include <time.h>

#include <openssl/provider.h>

/* the tree builds with -fvisibility=hidden; these must reach the linker */
#define RW_EXPORT __attribute__((visibility("default")))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int armed, open_now, closed, done;
static int do_all_left; /* do_all calls until the window, 0: none */
static pthread_t target;

void rw_arm(pthread_t thread, int nth_do_all)
{
    pthread_mutex_lock(&lock);
    target = thread;
    do_all_left = nth_do_all;
    armed = 1;
    open_now = closed = done = 0;
    pthread_mutex_unlock(&lock);
}

/* In the armed thread: stop here if this call opens the window. */
static void window(int is_do_all)
{
    struct timespec until;

    pthread_mutex_lock(&lock);
    if (armed && pthread_equal(pthread_self(), target)) {
        /* do_all opens it only at the |nth_do_all|-th call, if asked */
        if (is_do_all && (do_all_left == 0 || --do_all_left > 0)) {
            pthread_mutex_unlock(&lock);
            return;
        }
        armed = 0;
        open_now = 1;
        pthread_cond_broadcast(&cond);
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 10; /* a hung partner must not hang the test */
        while (!closed)
            if (pthread_cond_timedwait(&cond, &lock, &until) == ETIMEDOUT)
                break;
    }
    pthread_mutex_unlock(&lock);
}

int rw_wait_open(int seconds)
{
    struct timespec until;
    int is_open;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += seconds;
    pthread_mutex_lock(&lock);
    while (!open_now && !done)
        if (pthread_cond_timedwait(&cond, &lock, &until) == ETIMEDOUT)
            break;
    is_open = open_now;
    pthread_mutex_unlock(&lock);
    return is_open;
}

void rw_done(void)
{
    pthread_mutex_lock(&lock);
    done = 1;
    armed = 0;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

void rw_close(void)
{
    pthread_mutex_lock(&lock);
    closed = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

typedef int do_all_fn(OSSL_LIB_CTX *, int (*)(OSSL_PROVIDER *, void *), void *);
typedef ssize_t getrandom_fn(void *, size_t, unsigned int);
typedef int getentropy_fn(void *, size_t);

RW_EXPORT int OSSL_PROVIDER_do_all(OSSL_LIB_CTX *ctx,
                                   int (*cb)(OSSL_PROVIDER *provider,
                                             void *cbdata),
                                   void *cbdata)
{
    do_all_fn *real = (do_all_fn *)dlsym(RTLD_NEXT, "OSSL_PROVIDER_do_all");

    window(1);
    return real(ctx, cb, cbdata);
}

RW_EXPORT ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
    getrandom_fn *real = (getrandom_fn *)dlsym(RTLD_NEXT, "getrandom");

    window(0);
    return real(buf, len, flags);
}

typedef OSSL_PROVIDER *try_load_fn(OSSL_LIB_CTX *, const char *, int);

RW_EXPORT OSSL_PROVIDER *OSSL_PROVIDER_try_load(OSSL_LIB_CTX *ctx,
                                                const char *name,
                                                int retain_fallbacks)
{
    try_load_fn *real =
        (try_load_fn *)dlsym(RTLD_NEXT, "OSSL_PROVIDER_try_load");

    window(0);
    return real(ctx, name, retain_fallbacks);
}

RW_EXPORT int getentropy(void *buf, size_t len)
{
    getentropy_fn *real = (getentropy_fn *)dlsym(RTLD_NEXT, "getentropy");

    window(0);
    return real(buf, len);
}
