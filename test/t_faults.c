/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fault injection (DESIGN.md section 4, "fail closed"): every way the
 * entropy source can fail -- a parent that errs or hands back a short seed,
 * a chacharng parent that is itself out of entropy, the core's entropy
 * upcall failing or coming up short, getrandom(2) failing -- must leave the
 * DRBG in the error state with a chacharng error on the queue and not one
 * byte written, and a later generate must recover once the source is back.
 * Allocation failures (the state page's mmap, the context's malloc/calloc,
 * the lock) must fail the call cleanly.  The per-thread generators of the
 * random-provider path (random_bytes) get the same treatment.
 *
 * Nothing here needs a hook in the provider.  The core upcalls are replaced
 * by loading the module through OSSL_PROVIDER_add_builtin with an init
 * wrapper that edits the core's dispatch table; getrandom, mmap and the
 * allocator are interposed by this executable (interpose.c, -rdynamic).
 */
#define _GNU_SOURCE

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>

#include "capture.h"
#include "errq.h"
#include "interpose.h"
#include "provutil.h"
#include "testutil.h"

#define SEED_BYTES 48
#define SENTINEL 0xa5
#define OUTLEN 200

/* ---------------------------------------------------------------------- */
/* Helpers                                                                */
/* ---------------------------------------------------------------------- */

/*
 * Drain the error queue; 1 if it held an error raised by chacharng whose
 * reason string contains |reason| and whose detail text contains |detail|
 * (NULL: any reason, any detail).  A miss shows the queue.
 */
static int err_has(const char *reason, const char *detail)
{
    return tu_err_find(PU_PROVIDER, reason != NULL ? reason : "", detail, 0);
}

static int all_bytes(const unsigned char *p, size_t n, unsigned char b)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (p[i] != b)
            return 0;
    return 1;
}

static int state_of(EVP_RAND_CTX *ctx)
{
    return EVP_RAND_get_state(ctx);
}

/*
 * Generate OUTLEN bytes into a sentinel-filled buffer.  Returns the call's
 * result; *|untouched| says whether the buffer still holds only sentinel.
 */
static int gen(EVP_RAND_CTX *ctx, unsigned char *out, int pred_res,
               int *untouched)
{
    int r;

    memset(out, SENTINEL, OUTLEN);
    r = EVP_RAND_generate(ctx, out, OUTLEN, 256, pred_res, NULL, 0);
    *untouched = all_bytes(out, OUTLEN, SENTINEL);
    return r;
}

/* A failed generate: 0, nothing written, error state, a chacharng error. */
static void expect_gen_fails(EVP_RAND_CTX *ctx, int pred_res,
                             const char *detail, const char *what)
{
    unsigned char out[OUTLEN];
    int untouched, r;

    ERR_clear_error();
    r = gen(ctx, out, pred_res, &untouched);
    tu_ok(r == 0 && untouched && state_of(ctx) == EVP_RAND_STATE_ERROR
              && err_has("entropy source failed", detail),
          "%s: generate fails, writes nothing, state error, clear error "
          "(ret %d, untouched %d, state %d)",
          what, r, untouched, state_of(ctx));
}

/* A recovering generate: 1, output written, ready. */
static int expect_gen_recovers(EVP_RAND_CTX *ctx, unsigned char *out,
                               const char *what)
{
    int untouched, r;

    ERR_clear_error();
    r = gen(ctx, out, 0, &untouched);
    return tu_ok(r == 1 && !untouched && state_of(ctx) == EVP_RAND_STATE_READY,
                 "%s: source back, generate recovers (ret %d, state %d)", what,
                 r, state_of(ctx));
}

/* Point a TEST-RAND at |len| bytes of |seed| (|len| may be 0). */
static int test_seed(EVP_RAND_CTX *t, const unsigned char *seed, size_t len)
{
    unsigned char copy[256];
    OSSL_PARAM p[2];

    if (len > 0)
        memcpy(copy, seed, len);
    p[0] = OSSL_PARAM_construct_octet_string(OSSL_RAND_PARAM_TEST_ENTROPY, copy,
                                             len);
    p[1] = OSSL_PARAM_construct_end();
    return EVP_RAND_CTX_set_params(t, p);
}

static EVP_RAND_CTX *test_parent(OSSL_LIB_CTX *libctx, unsigned int strength)
{
    EVP_RAND *r = EVP_RAND_fetch(libctx, "TEST-RAND", "provider=default");
    EVP_RAND_CTX *t = r != NULL ? EVP_RAND_CTX_new(r, NULL) : NULL;

    EVP_RAND_free(r);
    if (t == NULL || !pu_set_uint(t, OSSL_RAND_PARAM_STRENGTH, strength)
        || !EVP_RAND_instantiate(t, 0, 0, NULL, 0, NULL)) {
        EVP_RAND_CTX_free(t);
        return NULL;
    }
    return t;
}

static EVP_RAND_CTX *drbg_new(OSSL_LIB_CTX *libctx, EVP_RAND_CTX *parent)
{
    EVP_RAND *r = EVP_RAND_fetch(libctx, PU_ALG, PU_PROPQ);
    EVP_RAND_CTX *c = r != NULL ? EVP_RAND_CTX_new(r, parent) : NULL;

    EVP_RAND_free(r);
    return c;
}

/*
 * Kernel mixing off in |ctx|: for comparing streams and counting the
 * entropy source's getrandom calls, whatever CHACHARNG_KERNEL_MIX says.
 */
static EVP_RAND_CTX *mix_off(EVP_RAND_CTX *ctx)
{
    int zero = 0;
    OSSL_PARAM p[2];

    p[0] = OSSL_PARAM_construct_int("kernel_mix", &zero);
    p[1] = OSSL_PARAM_construct_end();
    if (ctx != NULL && !EVP_RAND_CTX_set_params(ctx, p)) {
        EVP_RAND_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

static int instantiate(EVP_RAND_CTX *ctx)
{
    return EVP_RAND_instantiate(ctx, 256, 0, NULL, 0, NULL);
}

/* ---------------------------------------------------------------------- */
/* Library contexts: normal load, and two add_builtin wrappers            */
/* ---------------------------------------------------------------------- */

static OSSL_provider_init_fn *real_init;

/* The fake core entropy upcall's behaviour and bookkeeping. */
enum core_mode { CORE_REAL, CORE_FAIL, CORE_SHORT };
static enum core_mode core_mode;
static chacharng_get_entropy_fn *real_get_entropy;
static chacharng_cleanup_entropy_fn *real_cleanup_entropy;
static unsigned long core_calls;
static long core_outstanding; /* buffers handed out, not yet cleaned up */

#define CORE_SHORT_BYTES 20

static size_t fake_get_entropy(const OSSL_CORE_HANDLE *handle,
                               unsigned char **pout, int entropy,
                               size_t min_len, size_t max_len)
{
    unsigned char *buf, *real = NULL;
    size_t n;

    core_calls++;
    if (core_mode == CORE_FAIL)
        return 0;
    if (core_mode == CORE_SHORT) {
        buf = OPENSSL_malloc(CORE_SHORT_BYTES);
        if (buf == NULL)
            return 0;
        memset(buf, 0x5c, CORE_SHORT_BYTES);
        *pout = buf;
        core_outstanding++;
        return CORE_SHORT_BYTES;
    }
    /* real entropy, but in a buffer of ours, so cleanups can be counted */
    n = real_get_entropy(handle, &real, entropy, min_len, max_len);
    if (n == 0 || real == NULL)
        return 0;
    buf = OPENSSL_malloc(n);
    if (buf != NULL)
        memcpy(buf, real, n);
    real_cleanup_entropy(handle, real, n);
    if (buf == NULL)
        return 0;
    *pout = buf;
    core_outstanding++;
    return n;
}

static void fake_cleanup_entropy(const OSSL_CORE_HANDLE *handle,
                                 unsigned char *buf, size_t len)
{
    (void)handle;
    core_outstanding--;
    OPENSSL_clear_free(buf, len);
}

#define MAX_IN 256
static OSSL_DISPATCH edited_in[MAX_IN];

/*
 * Copy the core's dispatch table, dropping (|replace| == 0) or replacing
 * (|replace| == 1) the entropy upcalls, then run the module's real init.
 */
static int wrapped_init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
                        const OSSL_DISPATCH **out, void **provctx, int replace)
{
    size_t n = 0;

    for (; in->function_id != 0 && n < MAX_IN - 1; in++) {
        switch (in->function_id) {
        case OSSL_FUNC_GET_ENTROPY:
        case OSSL_FUNC_GET_USER_ENTROPY:
            /* prefer the user pair, as the provider does */
            if (real_get_entropy == NULL
                || in->function_id == OSSL_FUNC_GET_USER_ENTROPY)
                real_get_entropy = (chacharng_get_entropy_fn *)in->function;
            if (replace) {
                edited_in[n].function_id = in->function_id;
                edited_in[n++].function = (void (*)(void))fake_get_entropy;
            }
            break;
        case OSSL_FUNC_CLEANUP_ENTROPY:
        case OSSL_FUNC_CLEANUP_USER_ENTROPY:
            if (real_cleanup_entropy == NULL
                || in->function_id == OSSL_FUNC_CLEANUP_USER_ENTROPY)
                real_cleanup_entropy =
                    (chacharng_cleanup_entropy_fn *)in->function;
            if (replace) {
                edited_in[n].function_id = in->function_id;
                edited_in[n++].function = (void (*)(void))fake_cleanup_entropy;
            }
            break;
        default:
            edited_in[n++] = *in;
            break;
        }
    }
    edited_in[n].function_id = 0;
    edited_in[n].function = NULL;
    /* keeps the random-provider entry point, if exported, in cap_kept */
    return cap_init_and_keep(real_init, handle, edited_in, out, provctx);
}

static int init_fake_upcall(const OSSL_CORE_HANDLE *handle,
                            const OSSL_DISPATCH *in, const OSSL_DISPATCH **out,
                            void **provctx)
{
    return wrapped_init(handle, in, out, provctx, 1);
}

static int init_no_upcall(const OSSL_CORE_HANDLE *handle,
                          const OSSL_DISPATCH *in, const OSSL_DISPATCH **out,
                          void **provctx)
{
    return wrapped_init(handle, in, out, provctx, 0);
}

/* ---------------------------------------------------------------------- */
/* The tests                                                              */
/* ---------------------------------------------------------------------- */

static unsigned char seed[SEED_BYTES];

/* A TEST-RAND parent that errs, comes up short, or is too weak. */
static void test_parent_faults(struct pu_env *e)
{
    EVP_RAND_CTX *t = test_parent(e->libctx, 256), *c = NULL, *ref = NULL;
    EVP_RAND_CTX *weak = NULL;
    unsigned char out[OUTLEN], want[OUTLEN];
    int r;

    if (!tu_ok(t != NULL, "TEST-RAND parent"))
        return;
    c = mix_off(drbg_new(e->libctx, t));
    if (!tu_ok(c != NULL, "child of TEST-RAND"))
        goto end;

    /* the parent has no seed at all: get_seed returns 0 */
    ERR_clear_error();
    r = instantiate(c);
    tu_ok(r == 0 && state_of(c) == EVP_RAND_STATE_ERROR
              && err_has("entropy source failed", "parent gave 0 of 48"),
          "parent with no seed: instantiate fails into the error state");
    expect_gen_fails(c, 0, "parent gave 0 of 48", "parent with no seed");

    /* a seed one byte short */
    test_seed(t, seed, SEED_BYTES - 1);
    expect_gen_fails(c, 0, "parent gave 47 of 48", "parent one byte short");

    /* the parent recovers: the retry is a fresh instantiate from it */
    test_seed(t, seed, SEED_BYTES);
    if (expect_gen_recovers(c, out, "parent")) {
        ref = mix_off(drbg_new(e->libctx, t));
        r = ref != NULL && instantiate(ref)
            && EVP_RAND_generate(ref, want, OUTLEN, 256, 0, NULL, 0);
        tu_ok(r && memcmp(out, want, OUTLEN) == 0,
              "parent: the recovered output is that of a fresh instantiate "
              "from the same seed");
    }

    /* a running DRBG whose parent fails at an explicit reseed */
    test_seed(t, NULL, 0);
    ERR_clear_error();
    r = EVP_RAND_reseed(c, 0, NULL, 0, NULL, 0);
    tu_ok(r == 0 && state_of(c) == EVP_RAND_STATE_ERROR
              && err_has("entropy source failed", NULL),
          "ready DRBG, parent fails at reseed: reseed fails into error");
    expect_gen_fails(c, 0, NULL, "after the failed reseed");
    test_seed(t, seed, SEED_BYTES);
    expect_gen_recovers(c, out, "after the failed reseed");

    /* an automatic reseed (reseed_requests) that cannot get entropy */
    tu_ok(pu_set_uint(c, OSSL_DRBG_PARAM_RESEED_REQUESTS, 2)
              && EVP_RAND_reseed(c, 0, NULL, 0, NULL, 0),
          "reseed_requests = 2, freshly reseeded");
    test_seed(t, NULL, 0);
    r = EVP_RAND_generate(c, out, 16, 256, 0, NULL, 0);
    r = r && EVP_RAND_generate(c, out, 16, 256, 0, NULL, 0);
    tu_ok(r, "two calls are served on the current seed");
    expect_gen_fails(c, 0, NULL,
                     "third call needs a reseed the parent "
                     "cannot feed");
    test_seed(t, seed, SEED_BYTES);
    expect_gen_recovers(c, out, "automatic reseed");
    pu_set_uint(c, OSSL_DRBG_PARAM_RESEED_REQUESTS, 65536);

    /* prediction resistance with a failing parent */
    test_seed(t, NULL, 0);
    expect_gen_fails(c, 1, NULL, "prediction resistance, parent failing");
    test_seed(t, seed, SEED_BYTES);
    expect_gen_recovers(c, out, "prediction resistance");

    /* a parent below 256 bits is refused, whatever it would hand out */
    weak = test_parent(e->libctx, 128);
    EVP_RAND_CTX_free(c);
    c = weak != NULL ? drbg_new(e->libctx, weak) : NULL;
    if (weak != NULL)
        test_seed(weak, seed, SEED_BYTES);
    ERR_clear_error();
    r = c != NULL && instantiate(c);
    tu_ok(c != NULL && r == 0 && state_of(c) == EVP_RAND_STATE_ERROR
              && err_has("parent strength below 256", NULL),
          "parent of strength 128: instantiate refused");
    if (c != NULL) {
        ERR_clear_error();
        memset(out, SENTINEL, OUTLEN);
        r = EVP_RAND_generate(c, out, OUTLEN, 256, 0, NULL, 0);
        tu_ok(r == 0 && all_bytes(out, OUTLEN, SENTINEL) && err_has(NULL, NULL),
              "parent of strength 128: generate writes nothing");
    }

end:
    EVP_RAND_CTX_free(ref);
    EVP_RAND_CTX_free(c);
    EVP_RAND_CTX_free(weak);
    EVP_RAND_CTX_free(t);
}

/* The core entropy upcall failing, short, and a chacharng parent on it. */
static void test_core_faults(struct pu_env *e)
{
    EVP_RAND_CTX *c = drbg_new(e->libctx, NULL), *root = NULL, *kid = NULL;
    unsigned char out[OUTLEN];
    int r;

    if (!tu_ok(c != NULL, "context on the edited core"))
        return;
    core_calls = 0;
    core_mode = CORE_FAIL;
    ERR_clear_error();
    r = instantiate(c);
    tu_ok(r == 0 && core_calls > 0 && state_of(c) == EVP_RAND_STATE_ERROR
              && err_has("entropy source failed",
                         "core entropy upcall gave 0 of 48"),
          "core upcall fails: instantiate fails into the error state "
          "(%lu upcalls)",
          core_calls);
    expect_gen_fails(c, 0, "gave 0 of 48", "core upcall fails");

    core_mode = CORE_SHORT;
    expect_gen_fails(c, 0, "gave 20 of 48", "core upcall short");
    tu_ok(core_outstanding == 0,
          "core upcall short: the short buffer was handed back to cleanup");

    core_mode = CORE_REAL;
    expect_gen_recovers(c, out, "core upcall");

    core_mode = CORE_FAIL;
    ERR_clear_error();
    r = EVP_RAND_reseed(c, 0, NULL, 0, NULL, 0);
    tu_ok(r == 0 && state_of(c) == EVP_RAND_STATE_ERROR
              && err_has("entropy source failed", NULL),
          "core upcall fails at reseed: error state");
    expect_gen_fails(c, 1, NULL, "core upcall fails, prediction resistance");
    core_mode = CORE_REAL;
    expect_gen_recovers(c, out, "core upcall, after reseed failure");

    /* a chain: root on the core, child on the root */
    root = drbg_new(e->libctx, NULL);
    kid = root != NULL ? drbg_new(e->libctx, root) : NULL;
    r = kid != NULL && instantiate(root) && instantiate(kid);
    if (tu_ok(r, "chacharng parent and child instantiated")) {
        core_mode = CORE_FAIL;
        ERR_clear_error();
        r = EVP_RAND_reseed(root, 0, NULL, 0, NULL, 0);
        tu_ok(r == 0 && state_of(root) == EVP_RAND_STATE_ERROR,
              "parent cannot reseed: parent in error state");
        expect_gen_fails(kid, 1, NULL, "child of a parent out of entropy");
        core_mode = CORE_REAL;
        expect_gen_recovers(kid, out, "child of a parent out of entropy");
        tu_ok(state_of(root) == EVP_RAND_STATE_READY,
              "the parent recovered on the child's demand");
    }
    tu_ok(core_outstanding == 0,
          "every core entropy buffer went back to cleanup_entropy");
    EVP_RAND_CTX_free(kid);
    EVP_RAND_CTX_free(root);
    EVP_RAND_CTX_free(c);
}

/* No core upcall: getrandom(2) is the source; make it fail. */
static void test_getrandom_faults(struct pu_env *e)
{
    EVP_RAND_CTX *c = mix_off(drbg_new(e->libctx, NULL)), *d = NULL;
    unsigned char out[OUTLEN];
    unsigned long calls;
    int r;

    if (!tu_ok(c != NULL, "context without entropy upcalls"))
        return;
    ip_getrandom_reset_calls();
    ip_getrandom_mode(IP_GETRANDOM_FAIL);
    ERR_clear_error();
    r = instantiate(c);
    calls = ip_getrandom_calls();
    tu_ok(r == 0 && calls > 0 && state_of(c) == EVP_RAND_STATE_ERROR
              && err_has("entropy source failed", "getrandom"),
          "getrandom fails: instantiate fails into the error state "
          "(%lu calls)",
          calls);
    expect_gen_fails(c, 0, "getrandom", "getrandom fails");
    ip_getrandom_mode(IP_GETRANDOM_REAL);
    expect_gen_recovers(c, out, "getrandom");

    ip_getrandom_mode(IP_GETRANDOM_FAIL);
    expect_gen_fails(c, 1, "getrandom",
                     "getrandom fails, prediction resistance");
    ip_getrandom_mode(IP_GETRANDOM_REAL);
    expect_gen_recovers(c, out, "getrandom, prediction resistance");

    /* transient conditions are not failures */
    d = mix_off(drbg_new(e->libctx, NULL));
    ip_getrandom_mode(IP_GETRANDOM_EINTR);
    ERR_clear_error();
    r = d != NULL && instantiate(d);
    tu_ok(r && state_of(d) == EVP_RAND_STATE_READY,
          "getrandom interrupted once (EINTR): retried, instantiate works");
    ip_getrandom_reset_calls();
    ip_getrandom_mode(IP_GETRANDOM_SHORT);
    r = d != NULL && EVP_RAND_reseed(d, 0, NULL, 0, NULL, 0);
    calls = ip_getrandom_calls();
    tu_ok(r && calls >= SEED_BYTES,
          "getrandom returning 1 byte at a time: the seed is completed "
          "(%lu calls)",
          calls);
    ip_getrandom_mode(IP_GETRANDOM_REAL);
    EVP_RAND_CTX_free(d);
    EVP_RAND_CTX_free(c);
}

/* ---- the random-provider path (random_bytes), called directly -------- */

struct rb_call {
    int which, ret, untouched, err;
    unsigned int fail_alloc;
};

/* One random_bytes call of OUTLEN bytes, optionally in a new thread. */
static void *rb_call_run(void *arg)
{
    struct rb_call *c = arg;
    unsigned char out[OUTLEN];

    memset(out, SENTINEL, OUTLEN);
    ERR_clear_error();
    if (c->fail_alloc != 0)
        ip_fail_alloc(c->fail_alloc);
    c->ret =
        cap_kept.random_bytes(cap_kept.provctx, c->which, out, OUTLEN, 256);
    ip_fail_alloc(0);
    c->untouched = all_bytes(out, OUTLEN, SENTINEL);
    /* a failure must say why; a success leaves nothing to read */
    c->err = c->ret != 1 && err_has(NULL, NULL);
    ERR_clear_error();
    return NULL;
}

static void rb_call_in_thread(struct rb_call *c)
{
    pthread_t th;

    if (pthread_create(&th, NULL, rb_call_run, c) != 0) {
        c->ret = -1;
        return;
    }
    pthread_join(th, NULL);
}

/*
 * A fresh thread's first random_bytes must fail closed while the source
 * (set up by |fail| and undone by |heal|) is down, and work after.
 */
static void test_random_bytes(const char *what, void (*fail)(void),
                              void (*heal)(void))
{
    struct rb_call c = { 0, 0, 0, 0, 0 };

    if (cap_kept.random_bytes == NULL) {
        tu_skip("%s: the provider exports no random_bytes", what);
        return;
    }
    fail();
    rb_call_in_thread(&c);
    tu_ok(c.ret == 0 && c.untouched && c.err,
          "random_bytes, %s: a new thread's first call fails, writes "
          "nothing, raises an error (ret %d)",
          what, c.ret);
    heal();
    rb_call_in_thread(&c);
    tu_ok(c.ret == 1 && !c.untouched,
          "random_bytes, %s: source back, the next thread is served", what);
    /* this thread's generator, seeded while the source works */
    rb_call_run(&c);
    fail();
    rb_call_run(&c);
    tu_ok(c.ret == 1 && !c.untouched,
          "random_bytes, %s: a generator seeded before the failure keeps "
          "serving until its reseed is due",
          what);
    heal();
}

static void core_down(void)
{
    core_mode = CORE_FAIL;
}

static void core_up(void)
{
    core_mode = CORE_REAL;
}

static void getrandom_down(void)
{
    ip_getrandom_mode(IP_GETRANDOM_FAIL);
}

static void getrandom_up(void)
{
    ip_getrandom_mode(IP_GETRANDOM_REAL);
}

/*
 * States come from a pool of mappings, several slots each, so a new
 * context maps nothing while a slot is free.  Take contexts until one
 * needs a new mapping, which is made to fail: the pool is then full, and
 * the next state anyone asks for needs mmap.  *|full| says it got there.
 */
#define MAX_HELD 256

static EVP_RAND *held_alg;

static size_t take_free_slots(EVP_RAND_CTX **held, int *full)
{
    size_t n = 0;

    *full = 0;
    while (n < MAX_HELD) {
        ip_fail_mmap(1);
        held[n] = EVP_RAND_CTX_new(held_alg, NULL);
        if (held[n] == NULL) {
            *full = ip_mmap_fired();
            break;
        }
        n++;
    }
    ip_fail_mmap(0);
    ERR_clear_error();
    return n;
}

static void release_slots(EVP_RAND_CTX **held, size_t n)
{
    while (n > 0)
        EVP_RAND_CTX_free(held[--n]);
}

/* Allocation failures on the random_bytes path. */
static void test_random_bytes_alloc(void)
{
    struct rb_call c = { 0, 0, 0, 0, 0 };
    EVP_RAND_CTX *held[MAX_HELD];
    unsigned int nth;
    size_t n;
    int sites = 0, full;

    if (cap_kept.random_bytes == NULL) {
        tu_skip("random_bytes allocation failures: not exported");
        return;
    }
    /* each allocation of a new thread's first call, failed in turn */
    for (nth = 1; nth < 8; nth++) {
        c.fail_alloc = nth;
        ip_fail_mmap(0);
        rb_call_in_thread(&c);
        if (c.ret == 1)
            break;
        sites++;
        tu_ok(c.ret == 0 && c.untouched && c.err,
              "random_bytes: allocation %u of a new thread fails cleanly", nth);
    }
    tu_ok(c.ret == 1 && sites >= 1,
          "random_bytes: %d allocation sites tested, then served", sites);
    c.fail_alloc = 0;
    n = take_free_slots(held, &full);
    ip_fail_mmap(1);
    rb_call_in_thread(&c);
    tu_ok(full && c.ret == 0 && c.untouched && c.err && ip_mmap_fired(),
          "random_bytes: no free state slot (%zu taken) and no new mapping: "
          "fails cleanly",
          n);
    ip_fail_mmap(0);
    release_slots(held, n);
    rb_call_in_thread(&c);
    tu_ok(c.ret == 1, "random_bytes: mapping works again: served");
}

static void test_alloc_faults(struct pu_env *e)
{
    EVP_RAND *rand = EVP_RAND_fetch(e->libctx, PU_ALG, PU_PROPQ);
    EVP_RAND_CTX *c, *parent = NULL, *held[MAX_HELD];
    unsigned char out[OUTLEN];
    unsigned int nth;
    size_t n;
    int r, sites = 0, full;

    if (!tu_ok(rand != NULL, "fetch for the allocation tests"))
        return;

    /* the state pool: every free slot taken, then a new mapping fails */
    n = take_free_slots(held, &full);
    ip_fail_mmap(1);
    ERR_clear_error();
    c = EVP_RAND_CTX_new(rand, NULL);
    tu_ok(full && c == NULL && ip_mmap_fired()
              && err_has("out of memory", "state"),
          "no free state slot (%zu taken), mmap of a new chunk fails: newctx "
          "fails with a clear error",
          n);
    ip_fail_mmap(0);
    EVP_RAND_CTX_free(c);
    release_slots(held, n);

    /*
     * Each malloc/calloc the module makes in newctx, failed in turn, until
     * an armed failure is no longer reached.
     */
    for (nth = 1; nth < 16; nth++) {
        ip_fail_alloc(nth);
        ERR_clear_error();
        c = EVP_RAND_CTX_new(rand, NULL);
        if (!ip_alloc_fired()) {
            ip_fail_alloc(0);
            tu_ok(c != NULL, "newctx with no allocation failure works");
            EVP_RAND_CTX_free(c);
            break;
        }
        ip_fail_alloc(0);
        sites++;
        tu_ok(c == NULL && err_has("out of memory", NULL),
              "allocation %u of newctx fails: newctx fails with a clear "
              "error",
              nth);
        EVP_RAND_CTX_free(c);
    }
    tu_ok(sites >= 2, "newctx has %d allocation sites tested (>= 2)", sites);

    /* the lock of enable_locking */
    c = EVP_RAND_CTX_new(rand, NULL);
    if (tu_ok(c != NULL && instantiate(c), "context for the lock test")) {
        ip_fail_alloc(1);
        ERR_clear_error();
        r = EVP_RAND_enable_locking(c);
        tu_ok(r == 0 && ip_alloc_fired() && err_has("out of memory", "lock"),
              "enable_locking cannot allocate: fails with a clear error");
        ip_fail_alloc(0);
        r = EVP_RAND_generate(c, out, OUTLEN, 256, 0, NULL, 0);
        tu_ok(r == 1, "the context still works unlocked");
        tu_ok(EVP_RAND_enable_locking(c) == 1
                  && EVP_RAND_generate(c, out, OUTLEN, 256, 0, NULL, 0),
              "enable_locking works once memory is back");
    }
    EVP_RAND_CTX_free(c);

    /* a child whose chacharng parent cannot allocate its lock */
    parent = EVP_RAND_CTX_new(rand, NULL);
    if (tu_ok(parent != NULL && instantiate(parent), "parent for the child "
                                                     "lock test")) {
        ip_fail_alloc(1);
        ERR_clear_error();
        c = EVP_RAND_CTX_new(rand, parent);
        tu_ok(c == NULL && ip_alloc_fired() && ERR_peek_error() != 0,
              "child creation when the parent cannot lock: NULL and an error");
        ip_fail_alloc(0);
        EVP_RAND_CTX_free(c);
    }
    EVP_RAND_CTX_free(parent);
    EVP_RAND_free(rand);
}

static void body(void)
{
    struct pu_env plain, fake, bare;
    char path[4096];
    size_t i;

    for (i = 0; i < sizeof(seed); i++)
        seed[i] = (unsigned char)(0x30 + i);

    if (!tu_ok(pu_env_init_builtin(&plain, NULL),
               "default and chacharng loaded"))
        return;
    if (!tu_ok(ip_attach_module(), "the module is mapped and found"))
        return;
    real_init = cap_module_init(path, sizeof(path));
    if (!tu_ok(real_init != NULL, "OSSL_provider_init found in %s", path))
        return;

    held_alg = EVP_RAND_fetch(plain.libctx, PU_ALG, PU_PROPQ);
    test_parent_faults(&plain);
    test_alloc_faults(&plain);

    if (tu_ok(pu_env_init_builtin(&fake, init_fake_upcall),
              "provider loaded with a replaced core entropy upcall")
        && tu_ok(real_get_entropy != NULL && real_cleanup_entropy != NULL,
                 "the core offered an entropy upcall to replace")) {
        test_core_faults(&fake);
        test_random_bytes("core upcall fails", core_down, core_up);
        test_random_bytes_alloc();
        tu_ok(core_outstanding == 0,
              "random_bytes: every core entropy buffer went back");
    }
    pu_env_free(&fake);

    if (tu_ok(pu_env_init_builtin(&bare, init_no_upcall),
              "provider loaded with no core entropy upcall")) {
        test_getrandom_faults(&bare);
        test_random_bytes("getrandom fails", getrandom_down, getrandom_up);
    }
    pu_env_free(&bare);

    EVP_RAND_free(held_alg);
    pu_env_free(&plain);
}

int main(void)
{
    return tu_main_once(body);
}
