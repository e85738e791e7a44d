/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What each fork-detection mode costs per call (`make bench-fork`, not a
 * test).  Each mode runs in a process of its own that loads the module
 * with this executable's madvise and __register_atfork (interpose.c)
 * standing in for a kernel with wipe-on-fork, one without it, and a
 * process whose atfork registration fails, exactly as t_fork_modes sets
 * them up.  Times EVP_RAND_generate of 4 and 16 bytes, the random-provider
 * path (random_bytes, through the module's dispatch table) of 16 bytes,
 * and getpid() alone; nanoseconds per call of CLOCK_MONOTONIC, median of
 * RUNS runs.
 */
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/core_dispatch.h>
#include <openssl/evp.h>
#include <openssl/provider.h>

#include "interpose.h"
#include "provutil.h"

#ifndef OSSL_FUNC_PROVIDER_RANDOM_BYTES
#define OSSL_FUNC_PROVIDER_RANDOM_BYTES 1032
#endif

#define RUNS 7
#define CALLS 200000

typedef int random_bytes_fn(void *provctx, int which, void *buf, size_t n,
                            unsigned int strength);

static struct pu_env env;
static EVP_RAND_CTX *ctx;
static random_bytes_fn *random_bytes;
static void *rb_provctx;
static volatile unsigned char sink;

enum what { EVP4, EVP16, RB16, GETPID, NWHAT };

static const char *const what_name[NWHAT] = { "EVP_RAND_generate(4)",
                                              "EVP_RAND_generate(16)",
                                              "random_bytes(16)", "getpid()" };

static double now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Nanoseconds per call of one run of |w|, or -1 if a call failed. */
static double one_run(enum what w)
{
    unsigned char buf[16];
    double t0 = now_ns();
    int i, ok = 1;

    for (i = 0; i < CALLS; i++) {
        switch (w) {
        case EVP4:
            ok &= EVP_RAND_generate(ctx, buf, 4, 0, 0, NULL, 0);
            break;
        case EVP16:
            ok &= EVP_RAND_generate(ctx, buf, 16, 0, 0, NULL, 0);
            break;
        case RB16:
            ok &= random_bytes(rb_provctx, 0, buf, 16, 0);
            break;
        case GETPID:
        default:
            buf[0] = (unsigned char)getpid();
            break;
        }
        sink ^= buf[0];
    }
    return ok ? (now_ns() - t0) / CALLS : -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double median_ns(enum what w)
{
    double t[RUNS];
    int i;

    for (i = 0; i < RUNS; i++)
        if ((t[i] = one_run(w)) < 0)
            return -1;
    qsort(t, RUNS, sizeof(t[0]), cmp_double);
    return t[RUNS / 2];
}

struct mode {
    const char *name;
    enum ip_madvise_mode madvise;
    int atfork_fails;
};

static void measure(const struct mode *m)
{
    const OSSL_DISPATCH *d;
    int w;

    ip_madvise_mode(m->madvise);
    ip_atfork_fail(m->atfork_fails);
    if (!pu_env_init(&env) || !ip_attach_module()
        || (ctx = pu_drbg_ready(&env, NULL)) == NULL) {
        fprintf(stderr, "bench-fork: cannot load and seed chacharng\n");
        exit(1);
    }
    for (d = OSSL_PROVIDER_get0_dispatch(env.prov); d->function_id != 0; d++)
        if (d->function_id == OSSL_FUNC_PROVIDER_RANDOM_BYTES)
            random_bytes = (random_bytes_fn *)d->function;
    rb_provctx = OSSL_PROVIDER_get0_provider_ctx(env.prov);
    printf("%-34s", m->name);
    for (w = 0; w < NWHAT; w++) {
        double ns = w == RB16 && random_bytes == NULL ? -1 : median_ns(w);

        if (ns < 0)
            printf(" %22s", "-");
        else
            printf(" %22.1f", ns);
    }
    printf("\n");
    EVP_RAND_CTX_free(ctx);
    pu_env_free(&env);
}

int main(void)
{
    static const struct mode modes[] = {
        { "wipe-on-fork (as found)", IP_MADVISE_REAL, 0 },
        { "atfork + getpid (no wipe-on-fork)", IP_MADVISE_NO_WIPEONFORK, 0 },
        { "getpid (no atfork either)", IP_MADVISE_NO_WIPEONFORK, 1 },
    };
    size_t i;
    int w;

    printf("ns per call (CLOCK_MONOTONIC), median of %d runs of %d calls\n",
           RUNS, CALLS);
    printf("%-34s", "mode");
    for (w = 0; w < NWHAT; w++)
        printf(" %22s", what_name[w]);
    printf("\n");
    fflush(stdout);
    for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        pid_t pid = fork();
        int status;

        if (pid == 0) {
            measure(&modes[i]);
            fflush(stdout);
            _exit(0);
        }
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)
            || WEXITSTATUS(status) != 0)
            return 1;
    }
    return 0;
}
