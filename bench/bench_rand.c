/* SPDX-License-Identifier: Apache-2.0 */
/*
 * RAND_bytes as applications see it, per OpenSSL configuration: libcrypto's
 * default (CTR-DRBG), chacharng as the DRBG chain (openssl.cnf.sample) and,
 * on OpenSSL 3.5+, chacharng as the random provider
 * (openssl-random-provider.cnf.sample); with getrandom(2) as the yardstick.
 * chacharng's random_bytes is also called through the provider's dispatch
 * table (OSSL_PROVIDER_get0_dispatch), which works on every version: the
 * path itself, without libcrypto's RAND layer, with one and with many
 * library contexts loaded.
 * Each configuration runs in a forked child, so each gets a fresh default
 * library context.  Not a test: `make bench-rand` builds and runs it.
 *
 * Usage: bench_rand [-q] SRCDIR   (-q: shorter runs)
 */
#define _POSIX_C_SOURCE 200809L
/* RAND_get_rand_method() is measured on its own: the lock RAND_bytes takes */
#define OPENSSL_SUPPRESS_DEPRECATED

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/core_dispatch.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/provider.h>
#include <openssl/rand.h>

#ifndef OSSL_FUNC_PROVIDER_RANDOM_BYTES
#define OSSL_FUNC_PROVIDER_RANDOM_BYTES 1032
#endif
#include "bench_cpu.h"

#define MAX_THREADS 2
#define REPEATS 5 /* best of */

static double run_seconds = 0.3;

enum source { SRC_RAND_BYTES, SRC_GETRANDOM, SRC_METHOD, SRC_DISPATCH };

typedef int random_bytes_fn(void *provctx, int which, void *buf, size_t n,
                            unsigned int strength);
static random_bytes_fn *rb_fn; /* SRC_DISPATCH: chacharng's random_bytes */
static void *rb_provctx;

struct run {
    enum source src;
    size_t len;
    unsigned long calls;
    int failed;
    pthread_barrier_t *start;
    double t0, t1; /* when this thread started and finished */
};

static double now_sec(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int one_call(enum source src, unsigned char *buf, size_t len)
{
    if (src == SRC_RAND_BYTES)
        return RAND_bytes(buf, (int)len) == 1;
    if (src == SRC_METHOD)
        return RAND_get_rand_method() != NULL;
    if (src == SRC_DISPATCH)
        return rb_fn(rb_provctx, 0, buf, len, 0) == 1;
    return getrandom(buf, len, 0) == (ssize_t)len;
}

/* Call the source for run_seconds, in batches so the clock costs nothing. */
static void *worker(void *arg)
{
    struct run *r = arg;
    unsigned char buf[64];
    double t0, t;
    unsigned long n = 0;
    int i;

    pthread_barrier_wait(r->start);
    t0 = now_sec();
    do {
        for (i = 0; i < 4096; i++)
            if (!one_call(r->src, buf, r->len))
                r->failed = 1;
        n += 4096;
        t = now_sec();
    } while (t - t0 < run_seconds && !r->failed);
    r->calls = n;
    r->t0 = t0;
    r->t1 = t;
    return NULL;
}

/*
 * Calls per second of |nthreads| threads together (best of REPEATS): all
 * calls over the wall time from the first start to the last finish, so
 * threads that did not really run at the same time do not add up.
 * Negative on failure.
 */
static double rate(enum source src, size_t len, int nthreads)
{
    double best = 0;
    int rep, i;

    for (rep = 0; rep < REPEATS; rep++) {
        struct run runs[MAX_THREADS];
        pthread_t th[MAX_THREADS];
        pthread_barrier_t start;
        double first = 0, last = 0, wall, calls = 0;

        pthread_barrier_init(&start, NULL, (unsigned int)nthreads);
        memset(runs, 0, sizeof(runs));
        for (i = 0; i < nthreads; i++) {
            runs[i].src = src;
            runs[i].len = len;
            runs[i].start = &start;
            if (pthread_create(&th[i], NULL, worker, &runs[i]) != 0)
                return -1;
        }
        for (i = 0; i < nthreads; i++) {
            pthread_join(th[i], NULL);
            if (runs[i].failed)
                return -1;
            calls += (double)runs[i].calls;
            if (i == 0 || runs[i].t0 < first)
                first = runs[i].t0;
            if (i == 0 || runs[i].t1 > last)
                last = runs[i].t1;
        }
        wall = last - first;
        pthread_barrier_destroy(&start);
        if (calls / wall > best)
            best = calls / wall;
    }
    return best;
}

/* ------------------------------------------------------------------------
 * One configuration per child; results come back as "key value" lines.
 * ------------------------------------------------------------------------ */

struct config {
    const char *key; /* short name used in the result lines */
    const char *label;
    const char *file; /* OPENSSL_CONF, relative to srcdir; NULL: none */
    int min_minor;    /* needs OpenSSL 3.<min_minor> */
    int contexts;     /* > 0: random_bytes through the dispatch table of
                          the last of this many library contexts */
};

static const struct config configs[] = {
    { "default", "libcrypto default (CTR-DRBG)", NULL, 0, 0 },
    { "chain", "chacharng DRBG chain (openssl.cnf.sample)",
      "openssl.cnf.sample", 0, 0 },
    { "provider",
      "chacharng random provider "
      "(openssl-random-provider.cnf.sample)",
      "openssl-random-provider.cnf.sample", 5, 0 },
    { "dispatch",
      "chacharng random_bytes via the dispatch table, "
      "1 library context",
      NULL, 0, 1 },
    { "dispatch16",
      "chacharng random_bytes via the dispatch table, "
      "the 16th of 16 library contexts",
      NULL, 0, 16 },
};

/* Load chacharng into |n| new library contexts; serve from the last. */
static int load_dispatch(int n)
{
    const OSSL_DISPATCH *d;
    OSSL_PROVIDER *p = NULL;
    int i;

    for (i = 0; i < n; i++) {
        OSSL_LIB_CTX *lc = OSSL_LIB_CTX_new();

        /* kept loaded until the child exits */
        if (lc == NULL || (p = OSSL_PROVIDER_load(lc, "chacharng")) == NULL)
            return 0;
    }
    for (d = OSSL_PROVIDER_get0_dispatch(p); d != NULL && d->function_id; d++)
        if (d->function_id == OSSL_FUNC_PROVIDER_RANDOM_BYTES)
            rb_fn = (random_bytes_fn *)d->function;
    rb_provctx = OSSL_PROVIDER_get0_provider_ctx(p);
    return rb_fn != NULL;
}

static void measure_dispatch(const struct config *c, FILE *out)
{
    unsigned char buf[16];

    if (!load_dispatch(c->contexts) || !one_call(SRC_DISPATCH, buf, 16)) {
        ERR_print_errors_fp(stderr);
        fprintf(out, "%s.error 1\n", c->key);
        return;
    }
    fprintf(out, "%s.r16 %.0f\n", c->key, rate(SRC_DISPATCH, 16, 1));
    fprintf(out, "%s.r16x2 %.0f\n", c->key, rate(SRC_DISPATCH, 16, 2));
    fprintf(out, "%s.r4 %.0f\n", c->key, rate(SRC_DISPATCH, 4, 1));
    fflush(out);
}

static void measure_config(const struct config *c, const char *srcdir,
                           FILE *out)
{
    char path[4096];
    unsigned char buf[16];

    if (c->contexts > 0) {
        measure_dispatch(c, out);
        return;
    }
    if (c->file != NULL) {
        snprintf(path, sizeof(path), "%s/%s", srcdir, c->file);
        setenv("OPENSSL_CONF", path, 1);
    } else {
        /* no config at all: what an application gets by default */
        setenv("OPENSSL_CONF", "/dev/null", 1);
    }
    if (!OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CONFIG, NULL)
        || RAND_bytes(buf, sizeof(buf)) != 1) {
        ERR_print_errors_fp(stderr);
        fprintf(out, "%s.error 1\n", c->key);
        return;
    }
    fprintf(out, "%s.r16 %.0f\n", c->key, rate(SRC_RAND_BYTES, 16, 1));
    fprintf(out, "%s.r16x2 %.0f\n", c->key, rate(SRC_RAND_BYTES, 16, 2));
    fprintf(out, "%s.r4 %.0f\n", c->key, rate(SRC_RAND_BYTES, 4, 1));
    fprintf(out, "%s.m1 %.0f\n", c->key, rate(SRC_METHOD, 0, 1));
    fprintf(out, "%s.m2 %.0f\n", c->key, rate(SRC_METHOD, 0, 2));
    fflush(out);
}

struct result {
    char key[64];
    double value;
};

static struct result results[64];
static size_t nresults;

static double get(const char *key)
{
    size_t i;

    for (i = 0; i < nresults; i++)
        if (strcmp(results[i].key, key) == 0)
            return results[i].value;
    return -1;
}

static void run_config(const struct config *c, const char *srcdir)
{
    int fds[2], status;
    pid_t pid;
    FILE *in;
    char line[256];

    fflush(stdout);
    if (pipe(fds) != 0 || (pid = fork()) < 0) {
        perror("bench_rand");
        exit(1);
    }
    if (pid == 0) {
        FILE *out = fdopen(fds[1], "w");

        close(fds[0]);
        measure_config(c, srcdir, out);
        fclose(out);
        _exit(0);
    }
    close(fds[1]);
    in = fdopen(fds[0], "r");
    while (fgets(line, sizeof(line), in) != NULL && nresults < 64) {
        if (sscanf(line, "%63s %lf", results[nresults].key,
                   &results[nresults].value)
            == 2)
            nresults++;
    }
    fclose(in);
    waitpid(pid, &status, 0);
}

static void row(const char *what, const char *key)
{
    double r = get(key);

    if (r > 0)
        printf("  %-44s %8.1f ns/call %12.0f calls/s\n", what, 1e9 / r, r);
    else
        printf("  %-44s (failed)\n", what);
}

static void ratio(const char *what, const char *num, const char *den)
{
    double a = get(num), b = get(den);

    if (a > 0 && b > 0)
        printf("  %-44s %8.2fx\n", what, a / b);
}

int main(int argc, char **argv)
{
    const char *srcdir = ".";
    size_t i;
    int minor = (int)OPENSSL_version_minor();
    char key[64], what[64], cpu[512];
    const char *fn;

    for (i = 1; i < (size_t)argc; i++) {
        if (strcmp(argv[i], "-q") == 0)
            run_seconds = 0.05;
        else
            srcdir = argv[i];
    }
    bench_cpu_describe(cpu, sizeof(cpu));
    printf("cpu: %s\n", cpu);
    printf("%s; %ld CPUs online; best of %d runs of %.2f s\n",
           OpenSSL_version(OPENSSL_VERSION), sysconf(_SC_NPROCESSORS_ONLN),
           REPEATS, run_seconds);
    results[nresults].value = rate(SRC_GETRANDOM, 4, 1);
    strcpy(results[nresults++].key, "getrandom.r4");
    row("getrandom(2), 4 bytes (libc; vDSO if it has it)", "getrandom.r4");

    for (i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
        const struct config *c = &configs[i];

        if (OPENSSL_version_major() == 3 && minor < c->min_minor) {
            printf("%s: needs OpenSSL 3.%d\n", c->label, c->min_minor);
            continue;
        }
        run_config(c, srcdir);
        printf("%s:\n", c->label);
        snprintf(key, sizeof(key), "%s.error", c->key);
        if (get(key) > 0) {
            printf("  (this configuration does not load)\n");
            continue;
        }
        fn = c->contexts > 0 ? "random_bytes" : "RAND_bytes";
        snprintf(key, sizeof(key), "%s.r16", c->key);
        snprintf(what, sizeof(what), "%s(16), 1 thread", fn);
        row(what, key);
        snprintf(key, sizeof(key), "%s.r16x2", c->key);
        snprintf(what, sizeof(what), "%s(16), 2 threads (sum)", fn);
        row(what, key);
        snprintf(key, sizeof(key), "%s.r4", c->key);
        snprintf(what, sizeof(what), "%s(4), 1 thread", fn);
        row(what, key);
        if (c->contexts > 0)
            continue;
        snprintf(key, sizeof(key), "%s.m1", c->key);
        row("libcrypto's RAND_get_rand_method(), 1 thread", key);
        snprintf(key, sizeof(key), "%s.m2", c->key);
        row("libcrypto's RAND_get_rand_method(), 2 threads", key);
    }
    printf("ratios:\n");
    ratio("chain vs default, RAND_bytes(16)", "chain.r16", "default.r16");
    ratio("provider vs default, RAND_bytes(16)", "provider.r16", "default.r16");
    ratio("provider, 2 threads vs 1, RAND_bytes(16)", "provider.r16x2",
          "provider.r16");
    ratio("chain, 2 threads vs 1, RAND_bytes(16)", "chain.r16x2", "chain.r16");
    ratio("default, 2 threads vs 1, RAND_bytes(16)", "default.r16x2",
          "default.r16");
    ratio("RAND_get_rand_method, 2 threads vs 1", "default.m2", "default.m1");
    ratio("provider RAND_bytes(4) vs getrandom(4)", "provider.r4",
          "getrandom.r4");
    ratio("chain RAND_bytes(4) vs getrandom(4)", "chain.r4", "getrandom.r4");
    ratio("random_bytes(16), 16th of 16 contexts vs 1", "dispatch16.r16",
          "dispatch.r16");
    ratio("random_bytes(16), 2 threads vs 1", "dispatch.r16x2", "dispatch.r16");
    return 0;
}
