/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Misuse of CHACHA20-DRBG (DESIGN.md sections 4 and 5): calls in the wrong
 * state, strength above 256, oversized personalization, additional input
 * and reseed entropy, a weak or starved parent, and a request above
 * max_request made directly on the provider's dispatch table.  Each must
 * fail with an error raised by chacharng itself and write nothing; the
 * output buffer is pre-filled with a pattern to prove it.  Also checks that
 * the lengths at the limit are accepted and that a NULL pointer with a
 * non-zero length counts as empty input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>

#include "provutil.h"
#include "testutil.h"

#define PAT 0x5a
#define OUTLEN 64
#define MAX_INLEN ((size_t)65536)

static struct pu_env env;

/* 65537 bytes of input for the oversized cases, MAX_INLEN for the limit */
static unsigned char big[MAX_INLEN + 1];

/* A failed call: returned 0, wrote nothing, left a chacharng error. */
static void expect_fail(int ret, const unsigned char *out, size_t outlen,
                        const char *what)
{
    TU_OK(ret == 0, "%s fails", what);
    if (out != NULL)
        TU_OK(pu_all_bytes(out, outlen, PAT),
              "%s writes nothing to the output", what);
    TU_OK(pu_err_from_provider(1), "%s raises a %s error", what,
          PU_PROVIDER);
}

static int gen(EVP_RAND_CTX *ctx, unsigned char *out, size_t n)
{
    memset(out, PAT, n);
    return EVP_RAND_generate(ctx, out, n, PU_STRENGTH, 0, NULL, 0);
}

static int state_of(EVP_RAND_CTX *ctx)
{
    int state = -1;

    if (!pu_get_int(ctx, OSSL_RAND_PARAM_STATE, &state))
        return -1;
    return state;
}

/* A TEST-RAND parent holding the seed for |tag|, with strength 256. */
static EVP_RAND_CTX *parent_for(unsigned int tag)
{
    unsigned char seed[PU_SEED_BYTES];

    pu_pattern(seed, sizeof(seed), tag);
    return pu_test_parent(&env, PU_STRENGTH, seed, sizeof(seed));
}

static void test_state_misuse(void)
{
    unsigned char out[OUTLEN];
    EVP_RAND_CTX *ctx;
    int st;

    ctx = pu_drbg_new(&env, NULL);
    if (!TU_OK(ctx != NULL, "new context"))
        return;

    pu_err_clear();
    expect_fail(gen(ctx, out, sizeof(out)), out, sizeof(out),
                "generate before instantiate");
    st = state_of(ctx);
    TU_OK(st == EVP_RAND_STATE_UNINITIALISED,
          "... and the context stays UNINITIALISED (state %d)", st);
    pu_err_clear();
    expect_fail(EVP_RAND_reseed(ctx, 0, NULL, 0, NULL, 0), NULL, 0,
                "reseed before instantiate");

    if (!TU_OK(EVP_RAND_instantiate(ctx, PU_STRENGTH, 0, NULL, 0, NULL),
               "instantiate")) {
        EVP_RAND_CTX_free(ctx);
        return;
    }
    pu_err_clear();
    expect_fail(EVP_RAND_instantiate(ctx, PU_STRENGTH, 0, NULL, 0, NULL),
                NULL, 0, "instantiate on an instantiated context");
    st = state_of(ctx);
    TU_OK(st == EVP_RAND_STATE_READY,
          "... and the context is still READY (state %d)", st);
    TU_OK(gen(ctx, out, sizeof(out)) == 1
          && !pu_all_bytes(out, sizeof(out), PAT),
          "... and still generates");

    TU_OK(EVP_RAND_uninstantiate(ctx) == 1, "uninstantiate");
    pu_err_clear();
    expect_fail(gen(ctx, out, sizeof(out)), out, sizeof(out),
                "generate after uninstantiate");
    pu_err_clear();
    expect_fail(EVP_RAND_reseed(ctx, 0, NULL, 0, NULL, 0), NULL, 0,
                "reseed after uninstantiate");
    pu_err_clear();
    EVP_RAND_CTX_free(ctx);
}

static void test_strength(void)
{
    unsigned char out[OUTLEN];
    EVP_RAND_CTX *ctx;
    int st;

    ctx = pu_drbg_new(&env, NULL);
    if (!TU_OK(ctx != NULL, "new context"))
        return;
    pu_err_clear();
    expect_fail(EVP_RAND_instantiate(ctx, 257, 0, NULL, 0, NULL), NULL, 0,
                "instantiate with strength 257");
    st = state_of(ctx);
    TU_OK(st != EVP_RAND_STATE_READY,
          "... and the context is not READY (state %d)", st);
    pu_err_clear();
    TU_OK(gen(ctx, out, sizeof(out)) == 0
          && pu_all_bytes(out, sizeof(out), PAT),
          "... and generate then fails without output");
    pu_err_clear();
    /* a refused argument must not poison the context */
    TU_OK(EVP_RAND_instantiate(ctx, PU_STRENGTH, 0, NULL, 0, NULL) == 1,
          "instantiate with strength 256 afterwards succeeds");
    pu_err_clear();

    memset(out, PAT, sizeof(out));
    expect_fail(EVP_RAND_generate(ctx, out, sizeof(out), 257, 0, NULL, 0),
                out, sizeof(out), "generate with strength 257");
    TU_OK(gen(ctx, out, sizeof(out)) == 1
          && !pu_all_bytes(out, sizeof(out), PAT),
          "... and generate with strength 256 still works");
    pu_err_clear();
    EVP_RAND_CTX_free(ctx);
}

/* Personalization, additional input and reseed entropy: 65536 is the cap. */
static void test_oversized_inputs(void)
{
    unsigned char out[OUTLEN];
    EVP_RAND_CTX *ctx;
    int st, ret;

    pu_pattern(big, sizeof(big), 11);

    ctx = pu_drbg_new(&env, NULL);
    if (!TU_OK(ctx != NULL, "new context"))
        return;
    pu_err_clear();
    expect_fail(EVP_RAND_instantiate(ctx, PU_STRENGTH, 0, big, MAX_INLEN + 1,
                                     NULL),
                NULL, 0, "instantiate with 65537 bytes of personalization");
    st = state_of(ctx);
    TU_OK(st != EVP_RAND_STATE_READY,
          "... and the context is not READY (state %d)", st);
    pu_err_clear();
    TU_OK(gen(ctx, out, sizeof(out)) == 0
          && pu_all_bytes(out, sizeof(out), PAT),
          "... and generate then fails without output");
    pu_err_clear();
    ret = EVP_RAND_instantiate(ctx, PU_STRENGTH, 0, big, MAX_INLEN, NULL);
    TU_OK(ret == 1, "instantiate with 65536 bytes of personalization works");
    if (!ret) {
        pu_err_from_provider(1);
        EVP_RAND_CTX_free(ctx);
        return;
    }

    memset(out, PAT, sizeof(out));
    pu_err_clear();
    expect_fail(EVP_RAND_generate(ctx, out, sizeof(out), PU_STRENGTH, 0, big,
                                  MAX_INLEN + 1),
                out, sizeof(out), "generate with 65537 bytes of adin");
    st = state_of(ctx);
    TU_OK(st == EVP_RAND_STATE_READY,
          "... and the context is still READY (state %d)", st);
    memset(out, PAT, sizeof(out));
    TU_OK(EVP_RAND_generate(ctx, out, sizeof(out), PU_STRENGTH, 0, big,
                            MAX_INLEN) == 1
          && !pu_all_bytes(out, sizeof(out), PAT),
          "generate with 65536 bytes of adin works");
    pu_err_clear();

    expect_fail(EVP_RAND_reseed(ctx, 0, NULL, 0, big, MAX_INLEN + 1), NULL, 0,
                "reseed with 65537 bytes of adin");
    TU_OK(EVP_RAND_reseed(ctx, 0, NULL, 0, big, MAX_INLEN) == 1,
          "reseed with 65536 bytes of adin works");
    pu_err_clear();

    expect_fail(EVP_RAND_reseed(ctx, 0, big, MAX_INLEN + 1, NULL, 0), NULL, 0,
                "reseed with 65537 bytes of caller entropy");
    TU_OK(EVP_RAND_reseed(ctx, 0, big, MAX_INLEN, NULL, 0) == 1,
          "reseed with 65536 bytes of caller entropy works");
    pu_err_clear();

    st = state_of(ctx);
    TU_OK(st == EVP_RAND_STATE_READY && gen(ctx, out, sizeof(out)) == 1,
          "the context still generates after the refused inputs (state %d)",
          st);
    pu_err_clear();
    EVP_RAND_CTX_free(ctx);
}

/*
 * A parent that is too weak or cannot deliver a full 48-byte seed: the
 * instantiate fails cleanly and nothing is ever generated from the state.
 */
static void bad_parent(unsigned int strength, size_t seedlen,
                       const char *what)
{
    unsigned char seed[PU_SEED_BYTES], out[OUTLEN];
    EVP_RAND_CTX *parent, *ctx = NULL;
    char desc[128];
    int st;

    pu_pattern(seed, sizeof(seed), 12);
    parent = pu_test_parent(&env, strength, seed, seedlen);
    if (!TU_OK(parent != NULL, "TEST-RAND as %s", what))
        return;
    ctx = pu_drbg_new(&env, parent);
    if (!TU_OK(ctx != NULL, "context under %s", what))
        goto end;
    pu_err_clear();
    snprintf(desc, sizeof(desc), "instantiate under %s", what);
    expect_fail(EVP_RAND_instantiate(ctx, PU_STRENGTH, 0, NULL, 0, NULL),
                NULL, 0, desc);
    st = state_of(ctx);
    TU_OK(st == EVP_RAND_STATE_ERROR || st == EVP_RAND_STATE_UNINITIALISED,
          "... and the state is ERROR or UNINITIALISED (state %d)", st);
    pu_err_clear();
    expect_fail(gen(ctx, out, sizeof(out)), out, sizeof(out),
                "... then generate");
    pu_err_clear();
    TU_OK(EVP_RAND_verify_zeroization(ctx) == 1,
          "... and no key material is left (verify_zeroization)");
 end:
    pu_err_clear();
    EVP_RAND_CTX_free(ctx);
    EVP_RAND_CTX_free(parent);
}

static void test_bad_parents(void)
{
    bad_parent(128, PU_SEED_BYTES, "a strength-128 parent");
    bad_parent(255, PU_SEED_BYTES, "a strength-255 parent");
    bad_parent(PU_STRENGTH, 16, "a parent with 16 bytes of seed");
    bad_parent(PU_STRENGTH, PU_SEED_BYTES - 1,
               "a parent with 47 bytes of seed");
    bad_parent(PU_STRENGTH, 0, "a parent with no seed bytes");
}

/* 1 if the colon-separated |names| contains |want| (case-insensitively). */
static int names_contain(const char *names, const char *want)
{
    size_t wlen = strlen(want);
    const char *p = names;

    while (p != NULL && *p != '\0') {
        const char *end = strchr(p, ':');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);

        if (len == wlen && OPENSSL_strncasecmp(p, want, len) == 0)
            return 1;
        p = end != NULL ? end + 1 : NULL;
    }
    return 0;
}

/*
 * EVP_RAND_generate splits every request into max_request pieces, so the
 * provider's own bound is unreachable through EVP.  OSSL_PROVIDER_query_
 * operation hands out the very dispatch table libcrypto uses, with the
 * provider context libcrypto created: call generate through it with
 * max_request + 1 bytes, as a caller that skips the EVP layer would.
 */
static void test_direct_max_request(void)
{
    const OSSL_ALGORITHM *algs, *a;
    const OSSL_DISPATCH *f, *fns = NULL;
    OSSL_FUNC_rand_newctx_fn *newctx = NULL;
    OSSL_FUNC_rand_freectx_fn *freectx = NULL;
    OSSL_FUNC_rand_instantiate_fn *instantiate = NULL;
    OSSL_FUNC_rand_uninstantiate_fn *uninstantiate = NULL;
    OSSL_FUNC_rand_generate_fn *generate = NULL;
    OSSL_FUNC_rand_get_ctx_params_fn *get_ctx_params = NULL;
    OSSL_PARAM params[2];
    int no_cache = 0, ret;
    void *vctx = NULL;
    size_t maxreq = 0;
    unsigned char *buf = NULL;

    algs = OSSL_PROVIDER_query_operation(env.prov, OSSL_OP_RAND, &no_cache);
    for (a = algs; a != NULL && a->algorithm_names != NULL; a++) {
        if (names_contain(a->algorithm_names, PU_ALG)) {
            fns = a->implementation;
            break;
        }
    }
    if (!TU_OK(fns != NULL, "provider's RAND table lists %s", PU_ALG))
        goto end;
    for (f = fns; f->function_id != 0; f++) {
        switch (f->function_id) {
        case OSSL_FUNC_RAND_NEWCTX:
            newctx = OSSL_FUNC_rand_newctx(f);
            break;
        case OSSL_FUNC_RAND_FREECTX:
            freectx = OSSL_FUNC_rand_freectx(f);
            break;
        case OSSL_FUNC_RAND_INSTANTIATE:
            instantiate = OSSL_FUNC_rand_instantiate(f);
            break;
        case OSSL_FUNC_RAND_UNINSTANTIATE:
            uninstantiate = OSSL_FUNC_rand_uninstantiate(f);
            break;
        case OSSL_FUNC_RAND_GENERATE:
            generate = OSSL_FUNC_rand_generate(f);
            break;
        case OSSL_FUNC_RAND_GET_CTX_PARAMS:
            get_ctx_params = OSSL_FUNC_rand_get_ctx_params(f);
            break;
        }
    }
    if (!TU_OK(newctx != NULL && freectx != NULL && instantiate != NULL
               && uninstantiate != NULL && generate != NULL
               && get_ctx_params != NULL,
               "dispatch table has the entry points the direct test needs"))
        goto end;

    vctx = newctx(OSSL_PROVIDER_get0_provider_ctx(env.prov), NULL, NULL);
    if (!TU_OK(vctx != NULL, "direct newctx"))
        goto end;
    if (!TU_OK(instantiate(vctx, PU_STRENGTH, 0, NULL, 0, NULL) == 1,
               "direct instantiate"))
        goto end;
    params[0] = OSSL_PARAM_construct_size_t(OSSL_RAND_PARAM_MAX_REQUEST,
                                            &maxreq);
    params[1] = OSSL_PARAM_construct_end();
    ret = get_ctx_params(vctx, params);
    if (!TU_OK(ret == 1 && maxreq > 0 && maxreq < ((size_t)1 << 28),
               "direct get_ctx_params: max_request = %zu", maxreq))
        goto end;
    buf = malloc(maxreq + 1);
    if (!TU_OK(buf != NULL, "buffer of max_request + 1 bytes"))
        goto end;

    memset(buf, PAT, maxreq + 1);
    pu_err_clear();
    expect_fail(generate(vctx, buf, maxreq + 1, PU_STRENGTH, 0, NULL, 0),
                buf, maxreq + 1, "direct generate of max_request + 1 bytes");
    TU_OK(generate(vctx, buf, maxreq, PU_STRENGTH, 0, NULL, 0) == 1
          && !pu_all_bytes(buf + maxreq - 64, 64, PAT)
          && buf[maxreq] == PAT,
          "direct generate of exactly max_request bytes works");
    uninstantiate(vctx);

 end:
    pu_err_clear();
    free(buf);
    if (vctx != NULL)
        freectx(vctx);
    if (algs != NULL)
        OSSL_PROVIDER_unquery_operation(env.prov, OSSL_OP_RAND, algs);
}

/* Through EVP the same large request is split and must succeed. */
static void test_evp_splits(void)
{
    EVP_RAND_CTX *ctx;
    size_t len = ((size_t)2 << 20) + 100;
    unsigned char *buf = malloc(len);

    ctx = pu_drbg_ready(&env, NULL);
    if (TU_OK(ctx != NULL && buf != NULL, "context and a 2 MiB buffer")) {
        memset(buf, PAT, len);
        TU_OK(EVP_RAND_generate(ctx, buf, len, PU_STRENGTH, 0, NULL, 0) == 1
              && !pu_all_bytes(buf, 64, PAT)
              && !pu_all_bytes(buf + len - 64, 64, PAT),
              "EVP_RAND_generate of 2 MiB + 100 bytes (split by EVP) works");
    }
    pu_err_clear();
    free(buf);
    EVP_RAND_CTX_free(ctx);
}

/*
 * NULL with a non-zero length is empty input, never dereferenced: the
 * output equals the one from a twin context given real empty input, and
 * differs from a third one given actual bytes (so the comparison can fail).
 */
static void test_null_inputs(void)
{
    unsigned char a[OUTLEN], b[OUTLEN], c[OUTLEN];
    const unsigned char one[1] = { 0x01 };
    EVP_RAND_CTX *pa = NULL, *pb = NULL, *pc = NULL;
    EVP_RAND_CTX *ca = NULL, *cb = NULL, *cc = NULL;
    int ra, rb, rc;

    pa = parent_for(21);
    pb = parent_for(21);
    pc = parent_for(21);
    if (!TU_OK(pa != NULL && pb != NULL && pc != NULL,
               "three TEST-RAND parents with the same seed"))
        goto end;
    ca = pu_mix_off(pu_drbg_new(&env, pa));
    cb = pu_mix_off(pu_drbg_new(&env, pb));
    cc = pu_mix_off(pu_drbg_new(&env, pc));
    if (!TU_OK(ca != NULL && cb != NULL && cc != NULL, "three contexts"))
        goto end;

    /* personalization */
    ra = EVP_RAND_instantiate(ca, PU_STRENGTH, 0, NULL, 10, NULL);
    rb = EVP_RAND_instantiate(cb, PU_STRENGTH, 0, NULL, 0, NULL);
    rc = EVP_RAND_instantiate(cc, PU_STRENGTH, 0, one, 1, NULL);
    TU_OK(ra == 1 && rb == 1 && rc == 1,
          "instantiate with pers (NULL, 10), (NULL, 0) and 1 byte");
    ra = gen(ca, a, sizeof(a));
    rb = gen(cb, b, sizeof(b));
    rc = gen(cc, c, sizeof(c));
    TU_OK(ra && rb && memcmp(a, b, sizeof(a)) == 0,
          "pers (NULL, 10) gives the same output as no pers");
    TU_OK(rc && memcmp(a, c, sizeof(a)) != 0,
          "a 1-byte pers changes the output");

    /* additional input on generate */
    memset(a, PAT, sizeof(a));
    memset(b, PAT, sizeof(b));
    memset(c, PAT, sizeof(c));
    ra = EVP_RAND_generate(ca, a, sizeof(a), PU_STRENGTH, 0, NULL, 10);
    rb = EVP_RAND_generate(cb, b, sizeof(b), PU_STRENGTH, 0, NULL, 0);
    TU_OK(ra == 1 && rb == 1 && memcmp(a, b, sizeof(a)) == 0,
          "generate with adin (NULL, 10) equals adin (NULL, 0)");
    /* bring cc's stream back in line before comparing against it */
    EVP_RAND_uninstantiate(cc);
    rc = EVP_RAND_instantiate(cc, PU_STRENGTH, 0, NULL, 0, NULL)
         && gen(cc, c, sizeof(c))
         && EVP_RAND_generate(cc, c, sizeof(c), PU_STRENGTH, 0, one, 1);
    TU_OK(rc == 1 && memcmp(a, c, sizeof(a)) != 0,
          "a 1-byte adin changes the output");

    /* caller entropy and adin on reseed */
    ra = EVP_RAND_reseed(ca, 0, NULL, 10, NULL, 10);
    rb = EVP_RAND_reseed(cb, 0, NULL, 0, NULL, 0);
    TU_OK(ra == 1 && rb == 1,
          "reseed with (NULL, 10) entropy and adin, and with nothing");
    ra = gen(ca, a, sizeof(a));
    rb = gen(cb, b, sizeof(b));
    TU_OK(ra && rb && memcmp(a, b, sizeof(a)) == 0,
          "... gives the same output afterwards");

 end:
    pu_err_clear();
    EVP_RAND_CTX_free(ca);
    EVP_RAND_CTX_free(cb);
    EVP_RAND_CTX_free(cc);
    EVP_RAND_CTX_free(pa);
    EVP_RAND_CTX_free(pb);
    EVP_RAND_CTX_free(pc);
}

static void body(void)
{
    if (!TU_OK(pu_env_init(&env), "load default and %s into a new libctx",
               PU_PROVIDER))
        return;
    test_state_misuse();
    test_strength();
    test_oversized_inputs();
    test_bad_parents();
    test_direct_max_request();
    test_evp_splits();
    test_null_inputs();
    pu_env_free(&env);
}

int main(void)
{
    return tu_main_per_impl(body);
}
