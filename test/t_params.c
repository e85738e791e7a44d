/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CHACHA20-DRBG parameters through the public EVP_RAND API (DESIGN.md
 * sections 2, 4 and 5): the gettable and settable lists and their types,
 * every default, the values that move (state, reseed_counter, reseed_time),
 * the settable ones and what they change, the per-context kernel switch,
 * rejected values that must leave the old one in place, params[] given to
 * instantiate, provider-level parameters, verify_zeroization, and answers
 * that follow the key's text wherever the caller keeps it.
 */
#define _POSIX_C_SOURCE 200809L

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>

#include "chacha.h"
#include "provutil.h"
#include "testutil.h"

#define MAX_REQUEST ((size_t)1 << 20)
#define MAX_INLEN ((size_t)65536)
#define DEFAULT_REQUESTS 65536u
#define DEFAULT_INTERVAL ((time_t)3600)

static struct pu_env env;

struct param_desc {
    const char *key;
    unsigned int type;
    size_t size; /* 0: any size (strings) */
};

/* Types as OpenSSL's own DRBGs declare them. */
static const struct param_desc gettables[] = {
    { OSSL_RAND_PARAM_STATE, OSSL_PARAM_INTEGER, sizeof(int) },
    { OSSL_RAND_PARAM_STRENGTH, OSSL_PARAM_UNSIGNED_INTEGER,
      sizeof(unsigned int) },
    { OSSL_RAND_PARAM_MAX_REQUEST, OSSL_PARAM_UNSIGNED_INTEGER,
      sizeof(size_t) },
    { OSSL_DRBG_PARAM_RESEED_REQUESTS, OSSL_PARAM_UNSIGNED_INTEGER,
      sizeof(unsigned int) },
    { OSSL_DRBG_PARAM_RESEED_TIME_INTERVAL, OSSL_PARAM_INTEGER,
      sizeof(time_t) },
    { OSSL_DRBG_PARAM_RESEED_COUNTER, OSSL_PARAM_UNSIGNED_INTEGER,
      sizeof(unsigned int) },
    { OSSL_DRBG_PARAM_RESEED_TIME, OSSL_PARAM_INTEGER, sizeof(time_t) },
    { OSSL_DRBG_PARAM_MAX_PERSLEN, OSSL_PARAM_UNSIGNED_INTEGER,
      sizeof(size_t) },
    { OSSL_DRBG_PARAM_MAX_ADINLEN, OSSL_PARAM_UNSIGNED_INTEGER,
      sizeof(size_t) },
    { "impl", OSSL_PARAM_UTF8_STRING, 0 },
};

static const struct param_desc settables[] = {
    { OSSL_DRBG_PARAM_RESEED_REQUESTS, OSSL_PARAM_UNSIGNED_INTEGER,
      sizeof(unsigned int) },
    { OSSL_DRBG_PARAM_RESEED_TIME_INTERVAL, OSSL_PARAM_INTEGER,
      sizeof(time_t) },
    { "impl", OSSL_PARAM_UTF8_STRING, 0 },
};

/* Check that |list| declares every entry of |want| with the right type. */
static void check_list(const char *what, const OSSL_PARAM *list,
                       const struct param_desc *want, size_t n)
{
    size_t i;

    if (!TU_OK(list != NULL, "%s: list present", what))
        return;
    for (i = 0; i < n; i++) {
        const OSSL_PARAM *p = OSSL_PARAM_locate_const(list, want[i].key);

        if (!TU_OK(p != NULL, "%s: lists \"%s\"", what, want[i].key))
            continue;
        TU_OK(p->data_type == want[i].type
                  && (want[i].size == 0 || p->data_size == want[i].size),
              "%s: \"%s\" has type %u size %zu (got type %u size %zu)", what,
              want[i].key, want[i].type, want[i].size, p->data_type,
              p->data_size);
    }
}

static void test_fetch_and_lists(void)
{
    EVP_RAND *r;
    EVP_RAND_CTX *ctx;
    const OSSL_PROVIDER *p;

    r = EVP_RAND_fetch(env.libctx, PU_ALG, "provider=chacharng,fips=no");
    TU_OK(r != NULL, "fetch %s with provider=chacharng,fips=no", PU_ALG);
    p = r != NULL ? EVP_RAND_get0_provider(r) : NULL;
    TU_OK(p != NULL && strcmp(OSSL_PROVIDER_get0_name(p), PU_PROVIDER) == 0,
          "fetched algorithm belongs to provider %s", PU_PROVIDER);
    TU_OK(r != NULL && EVP_RAND_is_a(r, PU_ALG), "EVP_RAND_is_a(%s)", PU_ALG);
    EVP_RAND_free(r);

    /* the algorithm must not claim to be FIPS: "fips=no" is a property */
    r = EVP_RAND_fetch(env.libctx, PU_ALG, "provider=chacharng,fips=yes");
    TU_OK(r == NULL, "fetch with fips=yes finds nothing");
    EVP_RAND_free(r);
    pu_err_clear();

    check_list("EVP_RAND_gettable_ctx_params",
               EVP_RAND_gettable_ctx_params(env.rand), gettables,
               sizeof(gettables) / sizeof(gettables[0]));
    check_list("EVP_RAND_settable_ctx_params",
               EVP_RAND_settable_ctx_params(env.rand), settables,
               sizeof(settables) / sizeof(settables[0]));

    ctx = pu_drbg_new(&env, NULL);
    if (!TU_OK(ctx != NULL, "new context for the list checks"))
        return;
    check_list("EVP_RAND_CTX_gettable_params",
               EVP_RAND_CTX_gettable_params(ctx), gettables,
               sizeof(gettables) / sizeof(gettables[0]));
    check_list("EVP_RAND_CTX_settable_params",
               EVP_RAND_CTX_settable_params(ctx), settables,
               sizeof(settables) / sizeof(settables[0]));
    EVP_RAND_CTX_free(ctx);
}

/* Defaults of a context seeded from the core (no parent). */
static void test_defaults(void)
{
    EVP_RAND_CTX *ctx;
    int state = -1, ok;
    unsigned int u = 0;
    size_t sz = 0;
    time_t t = 0, before, after;
    char impl[64];

    ctx = pu_drbg_new(&env, NULL);
    if (!TU_OK(ctx != NULL, "new context without parent"))
        return;

    ok = pu_get_int(ctx, OSSL_RAND_PARAM_STATE, &state);
    TU_OK(ok && state == EVP_RAND_STATE_UNINITIALISED,
          "state is UNINITIALISED before instantiate (got %d)", state);
    TU_OK(EVP_RAND_verify_zeroization(ctx) == 1,
          "verify_zeroization is 1 on a fresh context");
    /* fixed limits are readable before instantiate: EVP needs max_request */
    ok = pu_get_size_t(ctx, OSSL_RAND_PARAM_MAX_REQUEST, &sz);
    TU_OK(ok && sz == MAX_REQUEST,
          "max_request is 1 MiB before instantiate (got %zu)", sz);

    before = time(NULL);
    if (!TU_OK(EVP_RAND_instantiate(ctx, PU_STRENGTH, 0, NULL, 0, NULL),
               "instantiate from the core's entropy")) {
        pu_err_from_provider(1);
        EVP_RAND_CTX_free(ctx);
        return;
    }
    after = time(NULL);

    state = -1;
    ok = pu_get_int(ctx, OSSL_RAND_PARAM_STATE, &state);
    TU_OK(ok && state == EVP_RAND_STATE_READY,
          "state is READY after instantiate (got %d)", state);
    TU_OK(EVP_RAND_get_state(ctx) == EVP_RAND_STATE_READY,
          "EVP_RAND_get_state agrees");
    ok = pu_get_uint(ctx, OSSL_RAND_PARAM_STRENGTH, &u);
    TU_OK(ok && u == 256, "strength is 256 (got %u)", u);
    TU_OK(EVP_RAND_get_strength(ctx) == 256, "EVP_RAND_get_strength is 256");
    sz = 0;
    ok = pu_get_size_t(ctx, OSSL_RAND_PARAM_MAX_REQUEST, &sz);
    TU_OK(ok && sz == MAX_REQUEST, "max_request is 1048576 (got %zu)", sz);
    u = 0;
    ok = pu_get_uint(ctx, OSSL_DRBG_PARAM_RESEED_REQUESTS, &u);
    TU_OK(ok && u == DEFAULT_REQUESTS,
          "reseed_requests defaults to 65536 (got %u)", u);
    ok = pu_get_time_t(ctx, OSSL_DRBG_PARAM_RESEED_TIME_INTERVAL, &t);
    TU_OK(ok && t == DEFAULT_INTERVAL,
          "reseed_time_interval defaults to 3600 (got %lld)", (long long)t);
    sz = 0;
    ok = pu_get_size_t(ctx, OSSL_DRBG_PARAM_MAX_PERSLEN, &sz);
    TU_OK(ok && sz == MAX_INLEN, "max_perslen is 65536 (got %zu)", sz);
    sz = 0;
    ok = pu_get_size_t(ctx, OSSL_DRBG_PARAM_MAX_ADINLEN, &sz);
    TU_OK(ok && sz == MAX_INLEN, "max_adinlen is 65536 (got %zu)", sz);
    t = 0;
    ok = pu_get_time_t(ctx, OSSL_DRBG_PARAM_RESEED_TIME, &t);
    TU_OK(ok && t >= before && t <= after,
          "reseed_time is the instantiate time (got %lld, window %lld..%lld)",
          (long long)t, (long long)before, (long long)after);
    ok = pu_get_utf8(ctx, "impl", impl, sizeof(impl));
    TU_OK(ok && strcmp(impl, tu_expected_impl()) == 0,
          "impl is \"%s\" (got \"%s\")", tu_expected_impl(), impl);
    TU_OK(EVP_RAND_verify_zeroization(ctx) == 0,
          "verify_zeroization is 0 while instantiated");

    TU_OK(EVP_RAND_uninstantiate(ctx) == 1, "uninstantiate");
    state = -1;
    ok = pu_get_int(ctx, OSSL_RAND_PARAM_STATE, &state);
    TU_OK(ok && state == EVP_RAND_STATE_UNINITIALISED,
          "state is UNINITIALISED after uninstantiate (got %d)", state);
    TU_OK(EVP_RAND_verify_zeroization(ctx) == 1,
          "verify_zeroization is 1 after uninstantiate");

    /* a context can be seeded again after uninstantiate */
    TU_OK(EVP_RAND_instantiate(ctx, PU_STRENGTH, 0, NULL, 0, NULL) == 1,
          "instantiate again after uninstantiate");
    TU_OK(EVP_RAND_verify_zeroization(ctx) == 0,
          "verify_zeroization is 0 once seeded again");
    EVP_RAND_CTX_free(ctx);
}

static int gen(EVP_RAND_CTX *ctx, unsigned char *out, size_t n)
{
    return EVP_RAND_generate(ctx, out, n, 0, 0, NULL, 0);
}

/* reseed_counter, or UINT_MAX (and a diagnostic) if it cannot be read. */
static unsigned int counter(EVP_RAND_CTX *ctx)
{
    unsigned int c = 0;

    if (!pu_get_uint(ctx, OSSL_DRBG_PARAM_RESEED_COUNTER, &c)) {
        tu_diag("cannot read reseed_counter");
        return UINT_MAX;
    }
    return c;
}

/* reseed_time, or -1 (and a diagnostic) if it cannot be read. */
static time_t seed_time(EVP_RAND_CTX *ctx)
{
    time_t t = 0;

    if (!pu_get_time_t(ctx, OSSL_DRBG_PARAM_RESEED_TIME, &t)) {
        tu_diag("cannot read reseed_time");
        return -1;
    }
    return t;
}

/*
 * reseed_counter and reseed_time move on instantiate and every reseed,
 * explicit or automatic; reseed_requests and reseed_time_interval decide
 * when an automatic one happens.  An unreadable counter reads as UINT_MAX,
 * which no "went up" check can pass.
 */
static void test_counters(void)
{
    unsigned char seed[PU_SEED_BYTES], out[64];
    EVP_RAND_CTX *parent, *ctx = NULL;
    unsigned int c0, c1, c2;
    time_t t0, t1, before, after;
    int i, ok;

    pu_pattern(seed, sizeof(seed), 1);
    parent = pu_test_parent(&env, PU_STRENGTH, seed, sizeof(seed));
    if (!TU_OK(parent != NULL, "TEST-RAND parent"))
        return;
    ctx = pu_drbg_new(&env, parent);
    if (!TU_OK(ctx != NULL, "context with TEST-RAND parent"))
        goto end;

    c0 = counter(ctx);
    TU_OK(c0 != UINT_MAX, "reseed_counter readable before instantiate (%u)",
          c0);
    if (!TU_OK(EVP_RAND_instantiate(ctx, PU_STRENGTH, 0, NULL, 0, NULL),
               "instantiate from TEST-RAND"))
        goto end;
    c1 = counter(ctx);
    TU_OK(c1 != UINT_MAX && c1 > c0,
          "instantiate bumps reseed_counter (%u -> %u)", c0, c1);
    ok = gen(ctx, out, sizeof(out)) && gen(ctx, out, sizeof(out));
    c2 = counter(ctx);
    TU_OK(ok && c2 == c1,
          "generate without a due reseed keeps reseed_counter (%u -> %u)", c1,
          c2);

    t0 = seed_time(ctx);
    TU_OK(t0 > 0, "reseed_time after instantiate (%lld)", (long long)t0);
    before = time(NULL);
    TU_OK(EVP_RAND_reseed(ctx, 0, NULL, 0, NULL, 0) == 1, "explicit reseed");
    after = time(NULL);
    c2 = counter(ctx);
    TU_OK(c2 != UINT_MAX && c2 > c1,
          "explicit reseed bumps reseed_counter (%u -> %u)", c1, c2);
    t1 = seed_time(ctx);
    TU_OK(t1 >= t0 && t1 >= before && t1 <= after,
          "reseed sets reseed_time (%lld, window %lld..%lld)", (long long)t1,
          (long long)before, (long long)after);

    /* reseed_requests = 2: two calls per seed, the third reseeds first */
    TU_OK(pu_set_uint(ctx, OSSL_DRBG_PARAM_RESEED_REQUESTS, 2) == 1,
          "set reseed_requests to 2");
    TU_OK(EVP_RAND_reseed(ctx, 0, NULL, 0, NULL, 0) == 1,
          "reseed to restart the call count");
    c1 = counter(ctx);
    ok = gen(ctx, out, 16) && gen(ctx, out, 16);
    c2 = counter(ctx);
    TU_OK(ok && c1 != UINT_MAX && c2 == c1,
          "reseed_requests=2: calls 1 and 2 use the same seed (%u -> %u)", c1,
          c2);
    ok = gen(ctx, out, 16);
    c1 = counter(ctx);
    TU_OK(ok && c1 != UINT_MAX && c1 > c2,
          "reseed_requests=2: call 3 reseeds first (%u -> %u)", c2, c1);
    ok = gen(ctx, out, 16);
    c2 = counter(ctx);
    TU_OK(ok && c2 == c1,
          "reseed_requests=2: call 4 uses the new seed (%u -> %u)", c1, c2);

    /* 0 switches both limits off */
    TU_OK(pu_set_uint(ctx, OSSL_DRBG_PARAM_RESEED_REQUESTS, 0) == 1
              && pu_set_time_t(ctx, OSSL_DRBG_PARAM_RESEED_TIME_INTERVAL, 0)
                     == 1,
          "set reseed_requests and reseed_time_interval to 0");
    c1 = counter(ctx);
    for (i = 0; i < 10; i++)
        if (!gen(ctx, out, 16))
            break;
    c2 = counter(ctx);
    TU_OK(i == 10 && c1 != UINT_MAX && c2 == c1,
          "with both limits 0, ten calls do not reseed (%u -> %u)", c1, c2);

    /* reseed_time_interval = 1: a call two seconds later reseeds first */
    TU_OK(pu_set_time_t(ctx, OSSL_DRBG_PARAM_RESEED_TIME_INTERVAL, 1) == 1,
          "set reseed_time_interval to 1");
    TU_OK(EVP_RAND_reseed(ctx, 0, NULL, 0, NULL, 0) == 1,
          "reseed to restart the clock");
    c1 = counter(ctx);
    t0 = seed_time(ctx);
    sleep(2);
    ok = gen(ctx, out, 16);
    c2 = counter(ctx);
    TU_OK(ok && c2 != UINT_MAX && c2 > c1,
          "reseed_time_interval=1: a call 2 s later reseeds (%u -> %u)", c1,
          c2);
    t1 = seed_time(ctx);
    TU_OK(t0 > 0 && t1 > t0,
          "the automatic reseed moves reseed_time (%lld -> %lld)",
          (long long)t0, (long long)t1);

end:
    EVP_RAND_CTX_free(ctx);
    EVP_RAND_CTX_free(parent);
}

/*
 * The error state: a reseed that cannot get 48 bytes of entropy must leave
 * the context in EVP_RAND_STATE_ERROR (fail closed), and a generate once
 * entropy is back re-instantiates it.
 */
/*
 * A child must not follow a parent reseed that its own seeding caused: a
 * chacharng parent that reseeds on every call (reseed_requests = 1) hands
 * the child a seed and reseeds while doing so; the child, once seeded,
 * must then serve its calls without reseeding again and again.
 */
static void test_no_reseed_cascade(void)
{
    EVP_RAND_CTX *parent, *child = NULL;
    unsigned char out[32];
    unsigned int c0, c1;
    int i, ok = 1;

    parent = pu_drbg_new(&env, NULL);
    if (!TU_OK(
            parent != NULL
                && pu_set_uint(parent, OSSL_DRBG_PARAM_RESEED_REQUESTS, 1)
                && EVP_RAND_instantiate(parent, PU_STRENGTH, 0, NULL, 0, NULL),
            "chacharng parent reseeding on every call"))
        goto end;
    child = pu_drbg_ready(&env, parent);
    if (!TU_OK(child != NULL, "chacharng child of that parent"))
        goto end;
    TU_OK(EVP_RAND_reseed(child, 0, NULL, 0, NULL, 0) == 1,
          "explicit reseed of the child");
    c0 = counter(child);
    for (i = 0; i < 5; i++)
        ok &= gen(child, out, sizeof(out));
    c1 = counter(child);
    TU_OK(ok && c0 != UINT_MAX && c1 == c0,
          "five child calls after its reseed reseed nothing (%u -> %u)", c0,
          c1);
end:
    EVP_RAND_CTX_free(child);
    EVP_RAND_CTX_free(parent);
}

static void test_error_state(void)
{
    unsigned char seed[PU_SEED_BYTES], out[32];
    EVP_RAND_CTX *parent, *ctx = NULL;
    int state = -1, ok;

    pu_pattern(seed, sizeof(seed), 2);
    parent = pu_test_parent(&env, PU_STRENGTH, seed, sizeof(seed));
    if (!TU_OK(parent != NULL, "TEST-RAND parent"))
        return;
    ctx = pu_drbg_ready(&env, parent);
    if (!TU_OK(ctx != NULL, "instantiated context"))
        goto end;

    /* starve the parent: 16 bytes is less than one seed */
    TU_OK(pu_test_parent_set_seed(parent, seed, 16), "parent now has 16 bytes");
    pu_err_clear();
    TU_OK(EVP_RAND_reseed(ctx, 0, NULL, 0, NULL, 0) == 0,
          "reseed fails when the parent gives 16 bytes");
    TU_OK(pu_err_from_provider(1), "the failed reseed raised a %s error",
          PU_PROVIDER);
    ok = pu_get_int(ctx, OSSL_RAND_PARAM_STATE, &state);
    TU_OK(ok && state == EVP_RAND_STATE_ERROR,
          "state is ERROR after the entropy failure (got %d)", state);
    memset(out, 0xa5, sizeof(out));
    ok = gen(ctx, out, sizeof(out));
    TU_OK(ok == 0 && pu_all_bytes(out, sizeof(out), 0xa5),
          "generate in the error state without entropy fails, no output");
    TU_OK(pu_err_from_provider(1), "... with a %s error", PU_PROVIDER);

    TU_OK(pu_test_parent_set_seed(parent, seed, sizeof(seed)),
          "parent has 48 bytes again");
    TU_OK(gen(ctx, out, sizeof(out)) == 1,
          "generate in the error state re-instantiates and succeeds");
    state = -1;
    ok = pu_get_int(ctx, OSSL_RAND_PARAM_STATE, &state);
    TU_OK(ok && state == EVP_RAND_STATE_READY, "state is READY again (got %d)",
          state);

end:
    pu_err_clear();
    EVP_RAND_CTX_free(ctx);
    EVP_RAND_CTX_free(parent);
}

/*
 * Set |key| with |params| (expected to be refused), then check the error
 * and that the previous value |old| (read as |kind|) is still in place.
 */
enum kind { K_UINT, K_TIME };

static void expect_refused(EVP_RAND_CTX *ctx, const OSSL_PARAM *params,
                           enum kind kind, long long old, const char *what)
{
    unsigned int u = 0;
    time_t t = 0;
    long long now;
    int ok;

    pu_err_clear();
    TU_OK(EVP_RAND_CTX_set_params(ctx, params) == 0, "%s is rejected", what);
    TU_OK(pu_err_from_provider(1), "... with a %s error", PU_PROVIDER);
    if (kind == K_UINT) {
        ok = pu_get_uint(ctx, params[0].key, &u);
        now = u;
    } else {
        ok = pu_get_time_t(ctx, params[0].key, &t);
        now = (long long)t;
    }
    TU_OK(ok && now == old, "... and %s is still %lld (got %lld)",
          params[0].key, old, now);
    pu_err_clear();
}

/* Settable values are read back; rejected ones leave the old value. */
static void test_set_and_reject(void)
{
    EVP_RAND_CTX *ctx;
    unsigned int u = 0;
    time_t t = 0, tneg = -5;
    OSSL_PARAM params[2];
    char sbuf[] = "100";
    uint64_t big64 = (uint64_t)UINT_MAX + 1;
    int ineg = -1, ok;

    ctx = pu_drbg_ready(&env, NULL);
    if (!TU_OK(ctx != NULL, "instantiated context"))
        return;

    ok = pu_set_uint(ctx, OSSL_DRBG_PARAM_RESEED_REQUESTS, 1000)
         && pu_get_uint(ctx, OSSL_DRBG_PARAM_RESEED_REQUESTS, &u);
    TU_OK(ok && u == 1000, "reseed_requests set to 1000 reads back (%u)", u);
    ok = pu_set_uint(ctx, OSSL_DRBG_PARAM_RESEED_REQUESTS, UINT_MAX)
         && pu_get_uint(ctx, OSSL_DRBG_PARAM_RESEED_REQUESTS, &u);
    TU_OK(ok && u == UINT_MAX, "reseed_requests accepts UINT_MAX (%u)", u);
    /* OSSL_PARAM converts between integer types; a positive int is fine */
    ok = pu_set_int(ctx, OSSL_DRBG_PARAM_RESEED_REQUESTS, 500)
         && pu_get_uint(ctx, OSSL_DRBG_PARAM_RESEED_REQUESTS, &u);
    TU_OK(ok && u == 500, "reseed_requests given as int 500 reads back (%u)",
          u);
    ok = pu_set_time_t(ctx, OSSL_DRBG_PARAM_RESEED_TIME_INTERVAL, 42)
         && pu_get_time_t(ctx, OSSL_DRBG_PARAM_RESEED_TIME_INTERVAL, &t);
    TU_OK(ok && t == 42, "reseed_time_interval set to 42 reads back (%lld)",
          (long long)t);

    params[1] = OSSL_PARAM_construct_end();

    /* wrong type: a string where a number belongs */
    params[0] = OSSL_PARAM_construct_utf8_string(
        OSSL_DRBG_PARAM_RESEED_REQUESTS, sbuf, strlen(sbuf));
    expect_refused(ctx, params, K_UINT, 500,
                   "reseed_requests as the utf8 string \"100\"");
    params[0] =
        OSSL_PARAM_construct_int(OSSL_DRBG_PARAM_RESEED_REQUESTS, &ineg);
    expect_refused(ctx, params, K_UINT, 500, "reseed_requests = -1 (int)");
    params[0] =
        OSSL_PARAM_construct_uint64(OSSL_DRBG_PARAM_RESEED_REQUESTS, &big64);
    expect_refused(ctx, params, K_UINT, 500,
                   "reseed_requests = UINT_MAX + 1 (uint64)");
#if SIZE_MAX > UINT_MAX
    {
        size_t bigsz = (size_t)UINT_MAX + 1;

        params[0] = OSSL_PARAM_construct_size_t(OSSL_DRBG_PARAM_RESEED_REQUESTS,
                                                &bigsz);
        expect_refused(ctx, params, K_UINT, 500,
                       "reseed_requests = UINT_MAX + 1 (size_t)");
    }
#endif

    params[0] = OSSL_PARAM_construct_time_t(
        OSSL_DRBG_PARAM_RESEED_TIME_INTERVAL, &tneg);
    expect_refused(ctx, params, K_TIME, 42,
                   "reseed_time_interval = -5 (time_t)");
    params[0] =
        OSSL_PARAM_construct_int(OSSL_DRBG_PARAM_RESEED_TIME_INTERVAL, &ineg);
    expect_refused(ctx, params, K_TIME, 42, "reseed_time_interval = -1 (int)");
    params[0] = OSSL_PARAM_construct_utf8_string(
        OSSL_DRBG_PARAM_RESEED_TIME_INTERVAL, sbuf, strlen(sbuf));
    expect_refused(ctx, params, K_TIME, 42,
                   "reseed_time_interval as the utf8 string \"100\"");

    EVP_RAND_CTX_free(ctx);
}

/* Keys libcrypto sends to every DRBG are ignored, not refused. */
static void test_unknown_keys(void)
{
    EVP_RAND_CTX *ctx;
    OSSL_PARAM params[7];
    char cipher[] = "AES-256-CTR", digest[] = "SHA256", mac[] = "HMAC";
    char props[] = "provider=default", pname[] = "default", junk[] = "x";
    unsigned int u = 0;
    int ok;

    ctx = pu_drbg_new(&env, NULL);
    if (!TU_OK(ctx != NULL, "new context"))
        return;
    params[0] =
        OSSL_PARAM_construct_utf8_string(OSSL_DRBG_PARAM_CIPHER, cipher, 0);
    params[1] =
        OSSL_PARAM_construct_utf8_string(OSSL_DRBG_PARAM_DIGEST, digest, 0);
    params[2] = OSSL_PARAM_construct_utf8_string(OSSL_DRBG_PARAM_MAC, mac, 0);
    params[3] =
        OSSL_PARAM_construct_utf8_string(OSSL_DRBG_PARAM_PROPERTIES, props, 0);
    params[4] = OSSL_PARAM_construct_utf8_string("provider-name", pname, 0);
    params[5] = OSSL_PARAM_construct_utf8_string("no-such-key", junk, 0);
    params[6] = OSSL_PARAM_construct_end();

    TU_OK(EVP_RAND_CTX_set_params(ctx, params) == 1,
          "set_params with cipher/digest/mac/properties/provider-name and an "
          "unknown key succeeds");
    TU_OK(EVP_RAND_instantiate(ctx, PU_STRENGTH, 0, NULL, 0, params) == 1,
          "instantiate with those keys in params[] succeeds");
    ok = pu_get_uint(ctx, OSSL_DRBG_PARAM_RESEED_REQUESTS, &u);
    TU_OK(ok && u == DEFAULT_REQUESTS,
          "ignored keys leave reseed_requests at its default (%u)", u);

    /* get_params must not fail just because a key is unknown either */
    {
        OSSL_PARAM gp[3];
        int dummy = 7, state = -1;

        gp[0] = OSSL_PARAM_construct_int("no-such-key", &dummy);
        gp[1] = OSSL_PARAM_construct_int(OSSL_RAND_PARAM_STATE, &state);
        gp[2] = OSSL_PARAM_construct_end();
        TU_OK(EVP_RAND_CTX_get_params(ctx, gp) == 1
                  && state == EVP_RAND_STATE_READY && dummy == 7
                  && !OSSL_PARAM_modified(&gp[0]),
              "get_params with an unknown key still fills the known ones");
    }
    pu_err_clear();
    EVP_RAND_CTX_free(ctx);
}

/* params[] given to instantiate are applied like set_params. */
static void test_instantiate_params(void)
{
    EVP_RAND_CTX *ctx;
    OSSL_PARAM params[4];
    unsigned int req = 77, u = 0;
    time_t ival = 99, t = 0;
    char impl[] = "generic", got[64] = "";
    int bad = -1, state = -1, ok;

    ctx = pu_drbg_new(&env, NULL);
    if (!TU_OK(ctx != NULL, "new context"))
        return;
    params[0] =
        OSSL_PARAM_construct_uint(OSSL_DRBG_PARAM_RESEED_REQUESTS, &req);
    params[1] = OSSL_PARAM_construct_time_t(
        OSSL_DRBG_PARAM_RESEED_TIME_INTERVAL, &ival);
    params[2] = OSSL_PARAM_construct_utf8_string("impl", impl, 0);
    params[3] = OSSL_PARAM_construct_end();
    TU_OK(EVP_RAND_instantiate(ctx, PU_STRENGTH, 0, NULL, 0, params) == 1,
          "instantiate with reseed_requests, interval and impl in params[]");
    ok = pu_get_uint(ctx, OSSL_DRBG_PARAM_RESEED_REQUESTS, &u);
    TU_OK(ok && u == 77, "instantiate applied reseed_requests = 77 (%u)", u);
    ok = pu_get_time_t(ctx, OSSL_DRBG_PARAM_RESEED_TIME_INTERVAL, &t);
    TU_OK(ok && t == 99, "instantiate applied reseed_time_interval = 99 (%lld)",
          (long long)t);
    ok = pu_get_utf8(ctx, "impl", got, sizeof(got));
    TU_OK(ok && strcmp(got, "generic") == 0,
          "instantiate applied impl = generic (\"%s\")", got);
    EVP_RAND_CTX_free(ctx);

    /* an invalid value in params[] fails the instantiate */
    ctx = pu_drbg_new(&env, NULL);
    if (!TU_OK(ctx != NULL, "new context"))
        return;
    params[0] = OSSL_PARAM_construct_int(OSSL_DRBG_PARAM_RESEED_REQUESTS, &bad);
    params[1] = OSSL_PARAM_construct_end();
    pu_err_clear();
    TU_OK(EVP_RAND_instantiate(ctx, PU_STRENGTH, 0, NULL, 0, params) == 0,
          "instantiate with reseed_requests = -1 in params[] fails");
    TU_OK(pu_err_from_provider(1), "... with a %s error", PU_PROVIDER);
    ok = pu_get_int(ctx, OSSL_RAND_PARAM_STATE, &state);
    TU_OK(ok && state != EVP_RAND_STATE_READY,
          "... and the context is not READY (state %d)", state);
    pu_err_clear();
    EVP_RAND_CTX_free(ctx);
}

/*
 * impl per context: every kernel this CPU runs can be chosen and read back,
 * and because the construction is normative the bytes do not change when
 * the kernel does, even mid-stream.  Unknown or unsupported names fail.
 */
static void test_impl_switch(void)
{
    const struct chacha_impl *list;
    size_t n, i, nsup = 0;
    unsigned char seed[PU_SEED_BYTES];
    unsigned char ref[4000], out[4000];
    /* call sizes that cross refills and the direct (> 960 byte) path */
    static const size_t sizes[] = { 1, 100, 960, 961, 1500, 478 };
    EVP_RAND_CTX *parent = NULL, *rctx = NULL, *ctx = NULL;
    char got[64] = "";
    size_t off, k;

    list = chacha_impl_list(&n);
    pu_pattern(seed, sizeof(seed), 3);
    parent = pu_test_parent(&env, PU_STRENGTH, seed, sizeof(seed));
    if (!TU_OK(parent != NULL, "TEST-RAND parent"))
        return;

    /* reference stream from the kernel the provider chose at load */
    rctx = pu_mix_off(pu_drbg_ready(&env, parent));
    if (!TU_OK(rctx != NULL, "reference context"))
        goto end;
    for (off = 0, k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        if (!gen(rctx, ref + off, sizes[k]))
            break;
        off += sizes[k];
    }
    if (!TU_OK(k == sizeof(sizes) / sizeof(sizes[0]),
               "reference stream of %zu bytes", off))
        goto end;

    for (i = 0; i < n; i++) {
        int ok = 1;

        if (!chacha_impl_supported(&list[i])) {
            ctx = pu_drbg_new(&env, parent);
            pu_err_clear();
            TU_OK(ctx != NULL && pu_set_utf8(ctx, "impl", list[i].name) == 0,
                  "impl = %s (not supported by this CPU) is refused",
                  list[i].name);
            pu_err_clear();
            EVP_RAND_CTX_free(ctx);
            ctx = NULL;
            continue;
        }
        nsup++;
        /* same seed, this kernel chosen before instantiate */
        ctx = pu_mix_off(pu_drbg_new(&env, parent));
        if (!TU_OK(ctx != NULL, "context for impl %s", list[i].name))
            continue;
        ok = pu_set_utf8(ctx, "impl", list[i].name) == 1
             && pu_get_utf8(ctx, "impl", got, sizeof(got));
        TU_OK(ok && strcmp(got, list[i].name) == 0,
              "impl = %s set before instantiate reads back (\"%s\")",
              list[i].name, got);
        ok = EVP_RAND_instantiate(ctx, PU_STRENGTH, 0, NULL, 0, NULL);
        for (off = 0, k = 0; ok && k < sizeof(sizes) / sizeof(sizes[0]); k++) {
            ok = gen(ctx, out, sizes[k])
                 && memcmp(out, ref + off, sizes[k]) == 0;
            off += sizes[k];
        }
        TU_OK(ok, "impl %s produces the same stream as impl %s", list[i].name,
              tu_expected_impl());
        /* still the chosen kernel after use */
        ok = pu_get_utf8(ctx, "impl", got, sizeof(got));
        TU_OK(ok && strcmp(got, list[i].name) == 0,
              "impl still reads %s after generating (\"%s\")", list[i].name,
              got);
        EVP_RAND_CTX_free(ctx);
        ctx = NULL;
    }
    TU_OK(nsup >= 1, "%zu kernel(s) usable on this CPU", nsup);

    /* switch kernels between calls of one stream */
    ctx = pu_mix_off(pu_drbg_ready(&env, parent));
    if (TU_OK(ctx != NULL, "context for mid-stream switching")) {
        int ok = 1;
        size_t which = 0;

        for (off = 0, k = 0; ok && k < sizeof(sizes) / sizeof(sizes[0]); k++) {
            /* next supported kernel, round robin */
            while (!chacha_impl_supported(&list[which % n]))
                which++;
            ok = pu_set_utf8(ctx, "impl", list[which % n].name)
                 && gen(ctx, out, sizes[k])
                 && memcmp(out, ref + off, sizes[k]) == 0;
            which++;
            off += sizes[k];
        }
        TU_OK(ok, "switching impl between calls keeps the stream");
    }

    /* an unknown name fails and leaves the kernel alone */
    if (ctx != NULL) {
        char before[64] = "";
        int ok;

        pu_get_utf8(ctx, "impl", before, sizeof(before));
        pu_err_clear();
        TU_OK(pu_set_utf8(ctx, "impl", "no-such-kernel") == 0,
              "impl = no-such-kernel is rejected");
        TU_OK(pu_err_from_provider(1), "... with a %s error", PU_PROVIDER);
        ok = pu_get_utf8(ctx, "impl", got, sizeof(got));
        TU_OK(ok && strcmp(got, before) == 0,
              "... and impl is still \"%s\" (\"%s\")", before, got);
        pu_err_clear();
        TU_OK(pu_set_utf8(ctx, "impl", "") == 0, "impl = \"\" is rejected");
        pu_err_clear();
    }

end:
    EVP_RAND_CTX_free(ctx);
    EVP_RAND_CTX_free(rctx);
    EVP_RAND_CTX_free(parent);
}

/* Algorithm-level and provider-level parameters. */
static void test_provider_params(void)
{
    OSSL_PARAM params[7];
    char *name = NULL, *version = NULL, *buildinfo = NULL;
    int status = 0, dummy = 5;
    char impl[64] = "";
    const OSSL_PARAM *list;
    static const char *const keys[] = { OSSL_PROV_PARAM_NAME,
                                        OSSL_PROV_PARAM_VERSION,
                                        OSSL_PROV_PARAM_BUILDINFO,
                                        OSSL_PROV_PARAM_STATUS, "impl" };
    size_t i;

    /* EVP_RAND_get_params: nothing is required, but it must not fail */
    params[0] = OSSL_PARAM_construct_int("no-such-key", &dummy);
    params[1] = OSSL_PARAM_construct_end();
    TU_OK(EVP_RAND_get_params(env.rand, params) == 1 && dummy == 5,
          "EVP_RAND_get_params with an unknown key succeeds");

    list = OSSL_PROVIDER_gettable_params(env.prov);
    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        TU_OK(list != NULL && OSSL_PARAM_locate_const(list, keys[i]) != NULL,
              "provider gettable params list \"%s\"", keys[i]);

    params[0] = OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_NAME, &name, 0);
    params[1] =
        OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_VERSION, &version, 0);
    params[2] =
        OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_BUILDINFO, &buildinfo, 0);
    params[3] = OSSL_PARAM_construct_int(OSSL_PROV_PARAM_STATUS, &status);
    params[4] =
        OSSL_PARAM_construct_utf8_string("impl", impl, sizeof(impl) - 1);
    params[5] = OSSL_PARAM_construct_end();
    TU_OK(OSSL_PROVIDER_get_params(env.prov, params) == 1,
          "OSSL_PROVIDER_get_params");
    TU_OK(OSSL_PARAM_modified(&params[0]) && name != NULL && *name != '\0',
          "provider name: \"%s\"", name != NULL ? name : "(null)");
    TU_OK(OSSL_PARAM_modified(&params[1]) && version != NULL
              && *version != '\0',
          "provider version: \"%s\"", version != NULL ? version : "(null)");
    TU_OK(OSSL_PARAM_modified(&params[2]) && buildinfo != NULL
              && *buildinfo != '\0',
          "provider buildinfo: \"%s\"",
          buildinfo != NULL ? buildinfo : "(null)");
    TU_OK(OSSL_PARAM_modified(&params[3]) && status == 1,
          "provider status is 1 (got %d)", status);
    TU_OK(OSSL_PARAM_modified(&params[4])
              && strcmp(impl, tu_expected_impl()) == 0,
          "provider impl is \"%s\" (got \"%s\")", tu_expected_impl(), impl);
    TU_OK(OSSL_PROVIDER_self_test(env.prov) == 1, "OSSL_PROVIDER_self_test");
}

/*
 * Every answer depends on the key's text, not on where it is stored: a
 * caller that writes one key after another into the same buffer gets each
 * key's own value, and nothing for a key the provider does not know.  Once
 * with nothing in between (the buffer's address was the last max_request
 * query answered), once with EVP_RAND_generate's own max_request query
 * between the reads.
 */
static void test_key_buffer_reuse(void)
{
    static const struct {
        const char *key;
        size_t want; /* 0: unknown, must stay unmodified */
    } seq[] = {
        { OSSL_RAND_PARAM_MAX_REQUEST, MAX_REQUEST },
        { OSSL_DRBG_PARAM_MAX_ADINLEN, MAX_INLEN },
        { OSSL_RAND_PARAM_MAX_REQUEST, MAX_REQUEST },
        { OSSL_RAND_PARAM_STRENGTH, 256 },
        { OSSL_RAND_PARAM_MAX_REQUEST, MAX_REQUEST },
        { OSSL_DRBG_PARAM_MAX_PERSLEN, MAX_INLEN },
        { OSSL_RAND_PARAM_MAX_REQUEST, MAX_REQUEST },
        { "no-such-key", 0 },
        { OSSL_RAND_PARAM_MAX_REQUEST, MAX_REQUEST },
        { "max_requesT", 0 },
        { "max_request_", 0 },
        { "max_reques", 0 },
        { OSSL_RAND_PARAM_MAX_REQUEST, MAX_REQUEST },
    };
    EVP_RAND_CTX *ctx;
    unsigned char out[16];
    char key[32];
    OSSL_PARAM p[2];
    size_t i, v;
    int round, ok;

    ctx = pu_drbg_ready(&env, NULL);
    if (!TU_OK(ctx != NULL, "instantiated context"))
        return;
    for (round = 0; round < 2; round++) {
        for (i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
            if (round == 1 && !gen(ctx, out, sizeof(out)))
                TU_OK(0, "generate before \"%s\"", seq[i].key);
            memset(key, 0, sizeof(key));
            strcpy(key, seq[i].key);
            v = 12345;
            p[0] = OSSL_PARAM_construct_size_t(key, &v);
            p[1] = OSSL_PARAM_construct_end();
            ok = EVP_RAND_CTX_get_params(ctx, p);
            if (seq[i].want != 0)
                TU_OK(ok && OSSL_PARAM_modified(&p[0]) && v == seq[i].want,
                      "%s\"%s\" in a reused key buffer reads %zu (got %zu)",
                      round == 1 ? "after a generate, " : "", seq[i].key,
                      seq[i].want, v);
            else
                TU_OK(ok && !OSSL_PARAM_modified(&p[0]) && v == 12345,
                      "%s\"%s\" in a reused key buffer is left alone "
                      "(got %zu%s)",
                      round == 1 ? "after a generate, " : "", seq[i].key, v,
                      OSSL_PARAM_modified(&p[0]) ? ", marked modified" : "");
        }
    }
    pu_err_clear();
    EVP_RAND_CTX_free(ctx);
}

/*
 * A string answer's sizes, for a context's and the provider's "impl": a
 * size query (NULL data) gets the string's length without the NUL, as
 * OpenSSL's own answers; a buffer of just that length has no room for
 * the NUL and is refused with return_size the size that works, so that
 * asking, allocating return_size and asking again ends in the answer.
 */
static int get_string(EVP_RAND_CTX *ctx, OSSL_PARAM *p)
{
    OSSL_PARAM params[2] = { *p, OSSL_PARAM_END };
    int ok = ctx != NULL ? EVP_RAND_CTX_get_params(ctx, params)
                         : OSSL_PROVIDER_get_params(env.prov, params);

    *p = params[0];
    return ok;
}

static void string_sizes(EVP_RAND_CTX *ctx, const char *what)
{
    char want[64] = "", buf[64];
    OSSL_PARAM p = OSSL_PARAM_construct_utf8_string("impl", want, sizeof(want));
    size_t len, asked;
    int ok;

    if (!TU_OK(get_string(ctx, &p) == 1, "%s: impl read", what))
        return;
    len = strlen(want);
    p = OSSL_PARAM_construct_utf8_string("impl", NULL, 0);
    ok = get_string(ctx, &p);
    TU_OK(ok && p.return_size == len,
          "%s: a size query gets the length without the NUL (%zu, want %zu)",
          what, p.return_size, len);
    asked = p.return_size;
    if (!TU_OK(asked < sizeof(buf), "%s: a size that fits the test's buffer",
               what))
        return;

    memset(buf, 'x', sizeof(buf));
    p = OSSL_PARAM_construct_utf8_string("impl", buf, asked);
    pu_err_clear();
    ok = get_string(ctx, &p);
    TU_OK(ok == 0, "%s: a buffer of %zu bytes (no room for the NUL) is refused",
          what, asked);
    TU_OK(pu_err_from_provider(1), "... with a %s error", PU_PROVIDER);
    TU_OK(p.return_size == len + 1 && buf[0] == 'x',
          "... return_size says what works (%zu, want %zu) and the buffer "
          "is untouched",
          p.return_size, len + 1);
    pu_err_clear();

    asked = p.return_size;
    p = OSSL_PARAM_construct_utf8_string("impl", buf, asked);
    ok = asked < sizeof(buf) && get_string(ctx, &p);
    TU_OK(ok && strcmp(buf, want) == 0,
          "%s: a buffer of that return_size (%zu) takes \"%s\"", what, asked,
          want);
}

static void test_string_sizes(void)
{
    EVP_RAND_CTX *ctx = pu_drbg_ready(&env, NULL);

    if (TU_OK(ctx != NULL, "context for the string sizes"))
        string_sizes(ctx, "context");
    string_sizes(NULL, "provider");
    EVP_RAND_CTX_free(ctx);
}

static void body(void)
{
    if (!TU_OK(pu_env_init(&env), "load default and %s into a new libctx",
               PU_PROVIDER))
        return;
    test_fetch_and_lists();
    test_defaults();
    test_counters();
    test_no_reseed_cascade();
    test_error_state();
    test_set_and_reject();
    test_unknown_keys();
    test_instantiate_params();
    test_impl_switch();
    test_provider_params();
    test_key_buffer_reuse();
    test_string_sizes();
    pu_env_free(&env);
}

int main(void)
{
    return tu_main_per_impl(body);
}
