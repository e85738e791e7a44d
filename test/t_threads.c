/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CHACHA20-DRBG under threads (DESIGN.md sections 4 and 5): eight threads
 * share one context with EVP_RAND_enable_locking while some of them also
 * reseed it and read its parameters; eight threads each seed and use a
 * context of their own; and eight per-thread contexts draw their seeds from
 * one shared chacharng parent, as libcrypto's public/private DRBGs do from
 * the primary.  Every output is recorded by its first 16 bytes, and all
 * records must be distinct; nothing may fail, crash or deadlock.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>

#include "provutil.h"
#include "records.h"
#include "testutil.h"

#define NTHREADS 8
#define NCALLS 2000
#define MINLEN 16
#define MAXLEN 100
#define REC TU_REC        /* outputs are compared record by record */
#define RESEED_EVERY 97   /* even threads in the shared case */
#define PARAMS_EVERY 89   /* odd threads in the shared case */
#define CHILD_REQUESTS 16 /* chain case: children reseed from the top often */

static struct pu_env env;

enum mode { SHARED, OWN, CHAIN };

struct job {
    enum mode mode;
    unsigned int id;
    EVP_RAND_CTX *shared; /* SHARED: the context; CHAIN: the parent */
    unsigned char *rec;   /* NCALLS records of REC bytes */
    size_t failures;      /* failed generate/reseed/get calls */
    size_t reseeds;       /* explicit reseeds that succeeded */
    int setup_ok;
};

/* Lengths vary per call so refills and buffer positions interleave. */
static uint32_t next_rand(uint32_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    return *x;
}

static void *worker(void *arg)
{
    struct job *job = arg;
    EVP_RAND_CTX *ctx = NULL;
    unsigned char out[MAXLEN];
    uint32_t x = 0x2545f491u * (job->id + 1);
    unsigned int i;

    if (job->mode == SHARED) {
        ctx = job->shared;
    } else {
        /* contexts are born and seeded concurrently on purpose */
        ctx = pu_drbg_new(&env, job->mode == CHAIN ? job->shared : NULL);
        if (ctx == NULL)
            return NULL;
        if (job->mode == CHAIN
            && !pu_set_uint(ctx, OSSL_DRBG_PARAM_RESEED_REQUESTS,
                            CHILD_REQUESTS)) {
            EVP_RAND_CTX_free(ctx);
            return NULL;
        }
        if (!EVP_RAND_instantiate(ctx, PU_STRENGTH, 0, NULL, 0, NULL)) {
            EVP_RAND_CTX_free(ctx);
            return NULL;
        }
    }
    job->setup_ok = 1;

    for (i = 0; i < NCALLS; i++) {
        size_t len = MINLEN + next_rand(&x) % (MAXLEN - MINLEN + 1);

        if (EVP_RAND_generate(ctx, out, len, 0, 0, NULL, 0) != 1) {
            job->failures++;
            memset(job->rec + (size_t)i * REC, 0, REC);
            continue;
        }
        memcpy(job->rec + (size_t)i * REC, out, REC);

        if (job->mode != SHARED)
            continue;
        /* other callers of the same lock while generates are in flight */
        if (job->id % 2 == 0 && i % RESEED_EVERY == RESEED_EVERY - 1) {
            if (EVP_RAND_reseed(ctx, 0, NULL, 0, NULL, 0) == 1)
                job->reseeds++;
            else
                job->failures++;
        } else if (job->id % 2 == 1 && i % PARAMS_EVERY == PARAMS_EVERY - 1) {
            unsigned int c;

            if (!pu_get_uint(ctx, OSSL_DRBG_PARAM_RESEED_COUNTER, &c)
                || EVP_RAND_get_state(ctx) != EVP_RAND_STATE_READY)
                job->failures++;
        }
    }
    if (job->mode != SHARED)
        EVP_RAND_CTX_free(ctx);
    return NULL;
}

/* Run NTHREADS workers in |mode|; return the total explicit reseeds. */
static size_t run_threads(enum mode mode, EVP_RAND_CTX *shared,
                          const char *what)
{
    struct job jobs[NTHREADS];
    pthread_t tids[NTHREADS];
    size_t nrec = (size_t)NTHREADS * NCALLS, failures = 0, reseeds = 0, rep;
    unsigned char *recs = calloc(nrec, REC);
    int started = 0, setup = 0, t;

    if (!TU_OK(recs != NULL, "%s: record buffer", what))
        return 0;
    for (t = 0; t < NTHREADS; t++) {
        memset(&jobs[t], 0, sizeof(jobs[t]));
        jobs[t].mode = mode;
        jobs[t].id = (unsigned int)t;
        jobs[t].shared = shared;
        jobs[t].rec = recs + (size_t)t * NCALLS * REC;
    }
    for (t = 0; t < NTHREADS; t++)
        if (pthread_create(&tids[t], NULL, worker, &jobs[t]) == 0)
            started++;
        else
            break;
    for (t = 0; t < started; t++)
        pthread_join(tids[t], NULL);
    for (t = 0; t < NTHREADS; t++) {
        setup += jobs[t].setup_ok;
        failures += jobs[t].failures;
        reseeds += jobs[t].reseeds;
    }
    TU_OK(started == NTHREADS, "%s: %d of %d threads started", what, started,
          NTHREADS);
    TU_OK(setup == NTHREADS, "%s: %d of %d threads had a seeded context", what,
          setup, NTHREADS);
    TU_OK(failures == 0, "%s: %zu failed calls in %d x %d", what, failures,
          NTHREADS, NCALLS);
    rep = tu_count_repeats(recs, nrec);
    TU_OK(rep == 0,
          "%s: %zu outputs distinct by their first %d bytes "
          "(%zu repeats)",
          what, nrec, REC, rep);
    free(recs);
    return reseeds;
}

static void test_shared(void)
{
    EVP_RAND_CTX *ctx = pu_drbg_ready(&env, NULL);
    unsigned int before = 0, after = 0;
    size_t reseeds;
    int ok;

    if (!TU_OK(ctx != NULL, "shared: context seeded from the core"))
        return;
    if (TU_OK(EVP_RAND_enable_locking(ctx) == 1, "shared: enable_locking")) {
        ok = pu_get_uint(ctx, OSSL_DRBG_PARAM_RESEED_COUNTER, &before);
        reseeds = run_threads(SHARED, ctx, "shared context");
        ok = ok && pu_get_uint(ctx, OSSL_DRBG_PARAM_RESEED_COUNTER, &after);
        /* each locked reseed counts once: none lost, none extra */
        TU_OK(ok && reseeds > 0 && after - before == reseeds,
              "shared: reseed_counter moved by the %zu explicit reseeds "
              "(%u -> %u)",
              reseeds, before, after);
    }
    EVP_RAND_CTX_free(ctx);
}

static void test_own(void)
{
    run_threads(OWN, NULL, "own contexts");
}

static void test_chain(void)
{
    EVP_RAND_CTX *top = pu_drbg_ready(&env, NULL);

    if (!TU_OK(top != NULL, "chain: top context seeded from the core"))
        return;
    if (TU_OK(EVP_RAND_enable_locking(top) == 1, "chain: enable_locking"))
        run_threads(CHAIN, top, "contexts under one shared parent");
    EVP_RAND_CTX_free(top);
}

/*
 * Children made and freed under a locked chacharng parent while another
 * thread switches the parent's kernel_mix on and off: a new child follows
 * its parent's choice, read while the parent may be changing it, so every
 * child must read back 0 or 1 and nothing may fail (under ThreadSanitizer
 * an unordered read of the choice fails the run).
 */
#define MIX_SWITCHES 2000
#define MIX_CHILDREN 2000

struct switcher {
    EVP_RAND_CTX *parent;
    size_t failures;
};

static void *switch_mix(void *arg)
{
    struct switcher *sw = arg;
    int i;

    for (i = 0; i < MIX_SWITCHES; i++)
        if (pu_set_int(sw->parent, "kernel_mix", i & 1) != 1)
            sw->failures++;
    return NULL;
}

static void test_mix_switch(void)
{
    struct switcher sw = { NULL, 0 };
    size_t bad = 0, made = 0;
    pthread_t tid;
    int i, v, started;

    sw.parent = pu_drbg_ready(&env, NULL);
    if (!TU_OK(sw.parent != NULL && EVP_RAND_enable_locking(sw.parent) == 1,
               "mixing switched: locked parent"))
        goto end;
    started = pthread_create(&tid, NULL, switch_mix, &sw) == 0;
    for (i = 0; i < MIX_CHILDREN; i++) {
        EVP_RAND_CTX *child = pu_drbg_new(&env, sw.parent);

        if (child != NULL) {
            made++;
            if (!pu_get_int(child, "kernel_mix", &v) || (v != 0 && v != 1))
                bad++;
        }
        EVP_RAND_CTX_free(child);
    }
    if (started)
        pthread_join(tid, NULL);
    TU_OK(started && sw.failures == 0,
          "mixing switched: %d switches on the parent (%zu failed)",
          MIX_SWITCHES, sw.failures);
    TU_OK(made == MIX_CHILDREN && bad == 0,
          "mixing switched: %zu of %d children made meanwhile, %zu without "
          "a 0 or 1 choice",
          made, MIX_CHILDREN, bad);
end:
    EVP_RAND_CTX_free(sw.parent);
}

static void body(void)
{
    /* a deadlock fails the run instead of hanging it */
    alarm(900);
    if (!TU_OK(pu_env_init(&env), "load default and %s into a new libctx",
               PU_PROVIDER))
        return;
    test_shared();
    test_own();
    test_chain();
    test_mix_switch();
    pu_env_free(&env);
    alarm(0);
}

int main(void)
{
    return tu_main_per_impl(body);
}
