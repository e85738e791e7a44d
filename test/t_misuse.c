/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Misuse of CHACHA20-DRBG (DESIGN.md sections 4 and 5): calls in the wrong
 * state, strength above 256, oversized personalization, additional input
 * and reseed entropy, a weak or starved parent, and a request above
 * max_request made directly on the provider's dispatch table.  Each must
 * fail with an error raised by chacharng itself and write nothing; the
 * output buffer is pre-filled with a pattern to prove it.  Also checks that
 * the lengths at the limit are accepted and that a NULL pointer with a
 * non-zero length counts as empty input.  Then malformed parameters, in
 * and out: missing data, wrong types, unusable sizes, strings without a
 * NUL and return buffers that are too small, for every key.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>

#include "chacha.h"
#include "errq.h"
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
        TU_OK(pu_all_bytes(out, outlen, PAT), "%s writes nothing to the output",
              what);
    TU_OK(pu_err_from_provider(1), "%s raises a %s error", what, PU_PROVIDER);
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
    expect_fail(EVP_RAND_instantiate(ctx, PU_STRENGTH, 0, NULL, 0, NULL), NULL,
                0, "instantiate on an instantiated context");
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
    expect_fail(EVP_RAND_generate(ctx, out, sizeof(out), 257, 0, NULL, 0), out,
                sizeof(out), "generate with strength 257");
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
    expect_fail(
        EVP_RAND_instantiate(ctx, PU_STRENGTH, 0, big, MAX_INLEN + 1, NULL),
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
    TU_OK(
        EVP_RAND_generate(ctx, out, sizeof(out), PU_STRENGTH, 0, big, MAX_INLEN)
                == 1
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
static void bad_parent(unsigned int strength, size_t seedlen, const char *what)
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
    expect_fail(EVP_RAND_instantiate(ctx, PU_STRENGTH, 0, NULL, 0, NULL), NULL,
                0, desc);
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
    params[0] =
        OSSL_PARAM_construct_size_t(OSSL_RAND_PARAM_MAX_REQUEST, &maxreq);
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
    expect_fail(generate(vctx, buf, maxreq + 1, PU_STRENGTH, 0, NULL, 0), buf,
                maxreq + 1, "direct generate of max_request + 1 bytes");
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

/* ------------------------------------------------------------------------
 * Malformed parameters (DESIGN.md section 5).  Every OSSL_PARAM the
 * provider reads is refused with a chacharng error, and changes nothing,
 * when its data is missing, of the wrong type, of an unusable size or out
 * of range; strings are read within data_size and never past it.  What the
 * provider writes into a caller's array fails cleanly, with return_size
 * set, when the caller's buffer is of the wrong type or too small.
 * ------------------------------------------------------------------------ */

#define R_INVALID "invalid parameter value"
#define R_UNKNOWN_IMPL "unknown ChaCha20 kernel"
#define REQUESTS OSSL_DRBG_PARAM_RESEED_REQUESTS
#define INTERVAL OSSL_DRBG_PARAM_RESEED_TIME_INTERVAL

/* Drain the error queue; 1 if it held a chacharng error with reason |reason|. */
static int err_reason_is(const char *reason)
{
    return tu_err_find(PU_PROVIDER, reason, NULL, TU_ERR_EXACT);
}

/*
 * Two pages, the second inaccessible: bytes copied to the end of the first
 * make any read past them fault, with or without a sanitizer.
 */
struct guard {
    unsigned char *map;
    size_t page;
};

static int guard_init(struct guard *g)
{
    long page = sysconf(_SC_PAGESIZE);

    g->page = page > 0 ? (size_t)page : 4096;
    g->map = mmap(NULL, 2 * g->page, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g->map == MAP_FAILED) {
        g->map = NULL;
        return 0;
    }
    if (mprotect(g->map + g->page, g->page, PROT_NONE) != 0) {
        munmap(g->map, 2 * g->page);
        g->map = NULL;
        return 0;
    }
    return 1;
}

static void *guard_put(struct guard *g, const void *bytes, size_t n)
{
    unsigned char *at = g->map + g->page - n;

    memcpy(at, bytes, n);
    return at;
}

static void guard_free(struct guard *g)
{
    if (g->map != NULL)
        munmap(g->map, 2 * g->page);
    g->map = NULL;
}

/* The three settable values of a context. */
struct settings {
    unsigned int requests;
    time_t interval;
    char impl[32];
};

static int read_settings(EVP_RAND_CTX *ctx, struct settings *s)
{
    memset(s, 0, sizeof(*s));
    return pu_get_uint(ctx, REQUESTS, &s->requests)
           && pu_get_time_t(ctx, INTERVAL, &s->interval)
           && pu_get_utf8(ctx, "impl", s->impl, sizeof(s->impl));
}

static int same_settings(EVP_RAND_CTX *ctx, const struct settings *want)
{
    struct settings now;

    if (!read_settings(ctx, &now)) {
        tu_diag("cannot read the settings back");
        return 0;
    }
    if (now.requests == want->requests && now.interval == want->interval
        && strcmp(now.impl, want->impl) == 0)
        return 1;
    tu_diag("settings %u/%lld/%s, want %u/%lld/%s", now.requests,
            (long long)now.interval, now.impl, want->requests,
            (long long)want->interval, want->impl);
    return 0;
}

/* A supported kernel other than |not|, or |not| if there is none. */
static const char *other_impl(const char * not )
{
    const struct chacha_impl *list;
    size_t n, i;

    list = chacha_impl_list(&n);
    for (i = 0; i < n; i++)
        if (chacha_impl_supported(&list[i]) && strcmp(list[i].name, not ) != 0)
            return list[i].name;
    return not ;
}

/*
 * |bad| must be refused with |reason| wherever a params[] reaches the
 * provider: set_params on a ready context; set_params with a valid change
 * of another key ahead of it in the same array (which must not be applied
 * either); and instantiate, which must leave the context unseeded.
 */
static void expect_refused(const OSSL_PARAM *bad, const char *reason,
                           const char *what)
{
    EVP_RAND_CTX *ctx;
    struct settings before;
    OSSL_PARAM params[3];
    unsigned int seven = 7;
    time_t tseven = 7;
    int st;

    ctx = pu_drbg_ready(&env, NULL);
    if (!TU_OK(ctx != NULL && pu_set_uint(ctx, REQUESTS, 500)
                   && pu_set_time_t(ctx, INTERVAL, 42)
                   && read_settings(ctx, &before),
               "%s: a ready context with reseed_requests 500, interval 42",
               what))
        goto end;
    params[0] = *bad;
    params[1] = OSSL_PARAM_construct_end();
    pu_err_clear();
    TU_OK(EVP_RAND_CTX_set_params(ctx, params) == 0, "set_params with %s fails",
          what);
    TU_OK(err_reason_is(reason), "... with \"%s\"", reason);
    TU_OK(same_settings(ctx, &before), "... and changes nothing");

    if (strcmp(bad->key, REQUESTS) == 0)
        params[0] = OSSL_PARAM_construct_time_t(INTERVAL, &tseven);
    else
        params[0] = OSSL_PARAM_construct_uint(REQUESTS, &seven);
    params[1] = *bad;
    params[2] = OSSL_PARAM_construct_end();
    pu_err_clear();
    TU_OK(EVP_RAND_CTX_set_params(ctx, params) == 0 && err_reason_is(reason)
              && same_settings(ctx, &before),
          "set_params with %s = 7, then %s, fails and applies neither",
          params[0].key, what);
    EVP_RAND_CTX_free(ctx);

    ctx = pu_drbg_new(&env, NULL);
    if (!TU_OK(ctx != NULL && read_settings(ctx, &before), "%s: a new context",
               what))
        goto end;
    params[0] = *bad;
    params[1] = OSSL_PARAM_construct_end();
    pu_err_clear();
    TU_OK(EVP_RAND_instantiate(ctx, PU_STRENGTH, 0, NULL, 0, params) == 0,
          "instantiate with %s in params[] fails", what);
    TU_OK(err_reason_is(reason), "... with \"%s\"", reason);
    st = state_of(ctx);
    TU_OK(st == EVP_RAND_STATE_UNINITIALISED && same_settings(ctx, &before),
          "... and leaves the context unseeded and unchanged (state %d)", st);
end:
    pu_err_clear();
    EVP_RAND_CTX_free(ctx);
}

/*
 * |good| must be applied, by set_params and by instantiate: afterwards its
 * key reads back as |num| (a number key) or |name| (impl).
 */
static void expect_applied(const OSSL_PARAM *good, long long num,
                           const char *name, const char *what)
{
    EVP_RAND_CTX *ctx;
    OSSL_PARAM params[2];
    struct settings s;
    int round, ok;

    params[0] = *good;
    params[1] = OSSL_PARAM_construct_end();
    for (round = 0; round < 2; round++) {
        ctx = pu_drbg_new(&env, NULL);
        pu_err_clear();
        ok = ctx != NULL
             && (round == 0 ? EVP_RAND_CTX_set_params(ctx, params)
                            : EVP_RAND_instantiate(ctx, PU_STRENGTH, 0, NULL, 0,
                                                   params))
             && read_settings(ctx, &s);
        if (ok && strcmp(good->key, REQUESTS) == 0)
            ok = (long long)s.requests == num;
        else if (ok && strcmp(good->key, INTERVAL) == 0)
            ok = (long long)s.interval == num;
        else if (ok)
            ok = strcmp(s.impl, name) == 0;
        TU_OK(ok, "%s with %s is applied (%u/%lld/%s)",
              round == 0 ? "set_params" : "instantiate", what, s.requests,
              (long long)s.interval, s.impl);
        if (!ok)
            pu_err_from_provider(1);
        EVP_RAND_CTX_free(ctx);
    }
}

static OSSL_PARAM raw_param(const char *key, unsigned int type, void *data,
                            size_t size)
{
    OSSL_PARAM p = OSSL_PARAM_construct_end();

    p.key = key;
    p.data_type = type;
    p.data = data;
    p.data_size = size;
    return p;
}

/* The two number keys: each class of malformed value, and short sizes. */
static void test_bad_numbers(struct guard *g)
{
    static const char *const keys[] = { REQUESTS, INTERVAL };
    unsigned char wide[16], oct[8] = { 1, 0, 0, 0, 0, 0, 0, 0 };
    char text[] = "100", *textp = text;
    unsigned int u = 100;
    time_t t = 100;
    double half = 2.5, neg = -1.0;
    uint16_t u16 = 1000;
    int8_t s8 = 5;
    char what[128];
    OSSL_PARAM p;
    size_t k;

    for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        const char *key = keys[k];
        unsigned int type =
            k == 0 ? OSSL_PARAM_UNSIGNED_INTEGER : OSSL_PARAM_INTEGER;
        void *native = k == 0 ? (void *)&u : (void *)&t;
        size_t size = k == 0 ? sizeof(u) : sizeof(t);

        snprintf(what, sizeof(what), "%s with NULL data", key);
        p = raw_param(key, type, NULL, size);
        expect_refused(&p, R_INVALID, what);

        snprintf(what, sizeof(what), "%s with data_size 0", key);
        p = raw_param(key, type, native, 0);
        expect_refused(&p, R_INVALID, what);

        snprintf(what, sizeof(what), "%s as an octet string", key);
        p = raw_param(key, OSSL_PARAM_OCTET_STRING, oct, sizeof(oct));
        expect_refused(&p, R_INVALID, what);

        snprintf(what, sizeof(what), "%s as a utf8 pointer to \"100\"", key);
        p = OSSL_PARAM_construct_utf8_ptr(key, &textp, 0);
        expect_refused(&p, R_INVALID, what);

        /* 2^120 + 1 in either byte order */
        memset(wide, 0, sizeof(wide));
        wide[0] = wide[15] = 1;
        snprintf(what, sizeof(what), "%s as a 16-byte integer above 2^64", key);
        p = raw_param(key, type, wide, sizeof(wide));
        expect_refused(&p, R_INVALID, what);

        snprintf(what, sizeof(what), "%s = %s (double)", key,
                 k == 0 ? "2.5" : "-1.0");
        p = OSSL_PARAM_construct_double(key, k == 0 ? &half : &neg);
        expect_refused(&p, R_INVALID, what);

        /* a short integer is read within its own size, at a page end */
        if (k == 0) {
            snprintf(what, sizeof(what), "%s as a 2-byte integer 1000", key);
            p = raw_param(key, type, guard_put(g, &u16, sizeof(u16)),
                          sizeof(u16));
            expect_applied(&p, 1000, NULL, what);
        } else {
            snprintf(what, sizeof(what), "%s as a 1-byte integer 5", key);
            p = raw_param(key, type, guard_put(g, &s8, sizeof(s8)), sizeof(s8));
            expect_applied(&p, 5, NULL, what);
        }
    }
}

/*
 * impl: missing data or pointer, wrong types, and strings that are read
 * only within data_size (the OSSL_PARAM convention: data_size is the
 * length, a NUL inside it ends the string early, and none is needed).
 */
static void test_bad_impl(struct guard *g)
{
    const char *cur = tu_expected_impl(), *to = other_impl(cur);
    size_t tolen = strlen(to);
    char buf[32], *nullp = NULL, *ptr = buf, what[128];
    unsigned int num = 1;
    OSSL_PARAM p;

    snprintf(buf, sizeof(buf), "%s", to);

    p = OSSL_PARAM_construct_utf8_string("impl", NULL, 0);
    expect_refused(&p, R_INVALID, "impl as a utf8 string with NULL data");
    p = raw_param("impl", OSSL_PARAM_UTF8_STRING, NULL, 8);
    expect_refused(&p, R_INVALID,
                   "impl as a utf8 string with NULL data and size 8");
    p = OSSL_PARAM_construct_utf8_ptr("impl", &nullp, 0);
    expect_refused(&p, R_INVALID, "impl as a utf8 pointer that is NULL");
    p = raw_param("impl", OSSL_PARAM_UTF8_PTR, NULL, 0);
    expect_refused(&p, R_INVALID, "impl as a utf8 pointer with NULL data");
    p = OSSL_PARAM_construct_uint("impl", &num);
    expect_refused(&p, R_INVALID, "impl as an unsigned integer");
    p = OSSL_PARAM_construct_octet_string("impl", buf, tolen);
    expect_refused(&p, R_INVALID, "impl as an octet string");

    /* the bytes past data_size spell a kernel name: they must not count */
    snprintf(what, sizeof(what), "impl \"%s\" with data_size 0", to);
    p = OSSL_PARAM_construct_utf8_string("impl", buf, 0);
    p.data_size = 0;
    expect_refused(&p, R_UNKNOWN_IMPL, what);
    snprintf(what, sizeof(what), "impl \"%s\" with data_size %zu", to,
             tolen - 1);
    p = OSSL_PARAM_construct_utf8_string("impl", buf, tolen - 1);
    expect_refused(&p, R_UNKNOWN_IMPL, what);
    snprintf(what, sizeof(what), "impl as a pointer to \"%s\", data_size %zu",
             to, tolen - 1);
    p = OSSL_PARAM_construct_utf8_ptr("impl", &ptr, tolen - 1);
    expect_refused(&p, R_UNKNOWN_IMPL, what);

    /* accepted: no NUL at all, right before an inaccessible page */
    snprintf(what, sizeof(what), "impl \"%s\" unterminated at a page end", to);
    p = OSSL_PARAM_construct_utf8_string("impl", guard_put(g, to, tolen),
                                         tolen);
    expect_applied(&p, 0, to, what);
    snprintf(what, sizeof(what), "impl \"%s\" in a %zu-byte buffer", to,
             sizeof(buf));
    p = OSSL_PARAM_construct_utf8_string("impl", buf, sizeof(buf));
    expect_applied(&p, 0, to, what);
    snprintf(what, sizeof(what), "impl as a pointer to \"%s\"", to);
    p = OSSL_PARAM_construct_utf8_ptr("impl", &ptr, 0);
    expect_applied(&p, 0, to, what);
    snprintf(what, sizeof(what), "impl as a pointer to \"%s\", data_size %zu",
             to, tolen);
    p = OSSL_PARAM_construct_utf8_ptr("impl", &ptr, tolen);
    expect_applied(&p, 0, to, what);
}

/*
 * kernel_mix: an int, 0 or 1.  Missing data, a zero size, other types and
 * other values are refused, and nothing changes.
 */
static void test_bad_kernel_mix(void)
{
    static const char key[] = "kernel_mix";
    unsigned char oct[4] = { 1, 0, 0, 0 };
    char text[] = "1", *textp = text;
    int one = 1, two = 2, minus = -1;
    OSSL_PARAM p;

    p = raw_param(key, OSSL_PARAM_INTEGER, NULL, sizeof(int));
    expect_refused(&p, R_INVALID, "kernel_mix with NULL data");
    p = raw_param(key, OSSL_PARAM_INTEGER, &one, 0);
    expect_refused(&p, R_INVALID, "kernel_mix with data_size 0");
    p = raw_param(key, OSSL_PARAM_OCTET_STRING, oct, sizeof(oct));
    expect_refused(&p, R_INVALID, "kernel_mix as an octet string");
    p = OSSL_PARAM_construct_utf8_ptr(key, &textp, 0);
    expect_refused(&p, R_INVALID, "kernel_mix as a utf8 pointer to \"1\"");
    p = OSSL_PARAM_construct_int(key, &two);
    expect_refused(&p, R_INVALID, "kernel_mix = 2");
    p = OSSL_PARAM_construct_int(key, &minus);
    expect_refused(&p, R_INVALID, "kernel_mix = -1");
}

static void test_bad_set_params(void)
{
    struct guard g;

    if (!TU_OK(guard_init(&g), "a page followed by an inaccessible one"))
        return;
    test_bad_numbers(&g);
    test_bad_impl(&g);
    test_bad_kernel_mix();
    guard_free(&g);
}

/*
 * instantiate refuses a strength above 256 before it applies its params[]:
 * a failed call changes nothing.
 */
static void test_refused_instantiate_keeps_params(void)
{
    EVP_RAND_CTX *ctx;
    struct settings before;
    OSSL_PARAM params[2];
    unsigned int nine = 9;

    ctx = pu_drbg_new(&env, NULL);
    if (!TU_OK(ctx != NULL && read_settings(ctx, &before), "new context"))
        return;
    params[0] = OSSL_PARAM_construct_uint(REQUESTS, &nine);
    params[1] = OSSL_PARAM_construct_end();
    pu_err_clear();
    expect_fail(EVP_RAND_instantiate(ctx, PU_STRENGTH + 1, 0, NULL, 0, params),
                NULL, 0, "instantiate at strength 257 with reseed_requests 9");
    TU_OK(same_settings(ctx, &before),
          "... and reseed_requests is not applied");
    pu_err_clear();
    EVP_RAND_CTX_free(ctx);
}

/* Both kinds of get: a context's parameters and the provider's own. */
typedef int get_fn(void *obj, OSSL_PARAM params[]);

static int get_ctx(void *obj, OSSL_PARAM params[])
{
    return EVP_RAND_CTX_get_params(obj, params);
}

static int get_prov(void *obj, OSSL_PARAM params[])
{
    return OSSL_PROVIDER_get_params(obj, params);
}

static int get_one(get_fn *get, void *obj, OSSL_PARAM *p)
{
    OSSL_PARAM params[2];
    int ret;

    params[0] = *p;
    params[1] = OSSL_PARAM_construct_end();
    pu_err_clear();
    ret = get(obj, params);
    *p = params[0];
    return ret;
}

/*
 * A get of |key| into |p| (pointing into |buf|, |buflen| bytes, pre-filled
 * with PAT) must fail with an invalid-parameter error, write nothing, and
 * set return_size to |need| unless |need| is 0.
 */
static void expect_get_refused(get_fn *get, void *obj, OSSL_PARAM p,
                               const unsigned char *buf, size_t buflen,
                               size_t need, const char *what)
{
    int ret = get_one(get, obj, &p);

    TU_OK(ret == 0, "get %s fails", what);
    TU_OK(err_reason_is(R_INVALID), "... with \"%s\"", R_INVALID);
    TU_OK(pu_all_bytes(buf, buflen, PAT), "... and writes nothing");
    if (need != 0)
        TU_OK(p.return_size == need, "... and sets return_size to %zu (%zu)",
              need, p.return_size);
}

/*
 * Every class of unusable request for a number |key| of |type| and |size|
 * bytes: NULL data (a size query, which succeeds), a buffer of the wrong
 * type, a utf8 pointer, and a 1-byte buffer (enough only for values up to
 * 255).
 */
static void check_get_number(get_fn *get, void *obj, const char *key,
                             unsigned int type, size_t size)
{
    unsigned char buf[32];
    char *ptr, what[96];
    int64_t val = -1;
    OSSL_PARAM p;
    int ret;

    memset(buf, 0, sizeof(buf));
    p = raw_param(key, type, buf, size);
    ret = get_one(get, obj, &p);
    if (!TU_OK(ret == 1 && OSSL_PARAM_modified(&p)
                   && OSSL_PARAM_get_int64(&p, &val) && val >= 0,
               "get %s as its own type (%lld)", key, (long long)val))
        return;

    p = raw_param(key, type, NULL, size);
    ret = get_one(get, obj, &p);
    TU_OK(ret == 1 && p.return_size == size,
          "get %s with NULL data answers the size (%zu)", key, p.return_size);

    memset(buf, PAT, sizeof(buf));
    snprintf(what, sizeof(what), "%s as a utf8 string", key);
    expect_get_refused(get, obj,
                       raw_param(key, OSSL_PARAM_UTF8_STRING, buf, 16), buf,
                       sizeof(buf), 0, what);
    memset(buf, PAT, sizeof(buf));
    ptr = (char *)buf + 8;
    p = OSSL_PARAM_construct_utf8_ptr(key, &ptr, 0);
    ret = get_one(get, obj, &p);
    TU_OK(ret == 0 && err_reason_is(R_INVALID) && ptr == (char *)buf + 8,
          "get %s as a utf8 pointer fails and leaves the pointer", key);

    memset(buf, PAT, sizeof(buf));
    p = raw_param(key, OSSL_PARAM_UNSIGNED_INTEGER, buf, 1);
    if (val <= 255) {
        ret = get_one(get, obj, &p);
        TU_OK(ret == 1 && buf[0] == val && pu_all_bytes(buf + 1, 31, PAT),
              "get %s (%lld) into 1 byte fits, and writes only that byte", key,
              (long long)val);
    } else {
        snprintf(what, sizeof(what), "%s (%lld) into 1 byte", key,
                 (long long)val);
        expect_get_refused(get, obj, p, buf, sizeof(buf), size, what);
    }
}

/*
 * The same for a string |key| whose value is |want|: a buffer without room
 * for the NUL, a 3-byte one, and one of a number type are refused, the
 * first two with return_size the size that works (the NUL counted); NULL
 * data answers the length; a utf8 pointer and a big enough buffer work.
 */
static void check_get_string(get_fn *get, void *obj, const char *key,
                             const char *want)
{
    unsigned char buf[64];
    size_t len = strlen(want);
    char *ptr = NULL, what[96];
    OSSL_PARAM p;
    int ret;

    if (!TU_OK(len + 1 < sizeof(buf), "%s fits the test buffer", key))
        return;
    p = OSSL_PARAM_construct_utf8_string(key, NULL, 0);
    ret = get_one(get, obj, &p);
    TU_OK(ret == 1 && p.return_size == len,
          "get %s with NULL data answers the length (%zu)", key, p.return_size);

    memset(buf, PAT, sizeof(buf));
    snprintf(what, sizeof(what), "%s into %zu bytes (no room for the NUL)", key,
             len);
    expect_get_refused(get, obj,
                       OSSL_PARAM_construct_utf8_string(key, (char *)buf, len),
                       buf, sizeof(buf), len + 1, what);
    snprintf(what, sizeof(what), "%s into 3 bytes", key);
    expect_get_refused(get, obj,
                       OSSL_PARAM_construct_utf8_string(key, (char *)buf, 3),
                       buf, sizeof(buf), len + 1, what);
    snprintf(what, sizeof(what), "%s as an unsigned integer", key);
    expect_get_refused(get, obj,
                       raw_param(key, OSSL_PARAM_UNSIGNED_INTEGER, buf, 8), buf,
                       sizeof(buf), 0, what);

    memset(buf, PAT, sizeof(buf));
    p = OSSL_PARAM_construct_utf8_string(key, (char *)buf, len + 1);
    ret = get_one(get, obj, &p);
    TU_OK(ret == 1 && memcmp(buf, want, len + 1) == 0 && p.return_size == len
              && pu_all_bytes(buf + len + 1, sizeof(buf) - len - 1, PAT),
          "get %s into %zu bytes gives \"%s\" and its NUL, nothing more", key,
          len + 1, want);
    p = OSSL_PARAM_construct_utf8_ptr(key, &ptr, 0);
    ret = get_one(get, obj, &p);
    TU_OK(ret == 1 && ptr != NULL && strcmp(ptr, want) == 0
              && p.return_size == len,
          "get %s as a utf8 pointer gives \"%s\"", key, want);
}

static void test_bad_get_params(void)
{
    static const struct {
        const char *key;
        unsigned int type;
        size_t size;
    } numbers[] = {
        { OSSL_RAND_PARAM_STATE, OSSL_PARAM_INTEGER, sizeof(int) },
        { OSSL_RAND_PARAM_STRENGTH, OSSL_PARAM_UNSIGNED_INTEGER,
          sizeof(unsigned int) },
        { OSSL_RAND_PARAM_MAX_REQUEST, OSSL_PARAM_UNSIGNED_INTEGER,
          sizeof(size_t) },
        { REQUESTS, OSSL_PARAM_UNSIGNED_INTEGER, sizeof(unsigned int) },
        { INTERVAL, OSSL_PARAM_INTEGER, sizeof(time_t) },
        { OSSL_DRBG_PARAM_RESEED_COUNTER, OSSL_PARAM_UNSIGNED_INTEGER,
          sizeof(unsigned int) },
        { OSSL_DRBG_PARAM_RESEED_TIME, OSSL_PARAM_INTEGER, sizeof(time_t) },
        { OSSL_DRBG_PARAM_MAX_PERSLEN, OSSL_PARAM_UNSIGNED_INTEGER,
          sizeof(size_t) },
        { OSSL_DRBG_PARAM_MAX_ADINLEN, OSSL_PARAM_UNSIGNED_INTEGER,
          sizeof(size_t) },
    };
    static const char *const prov_strings[] = { OSSL_PROV_PARAM_NAME,
                                                OSSL_PROV_PARAM_VERSION,
                                                OSSL_PROV_PARAM_BUILDINFO,
                                                "impl" };
    EVP_RAND_CTX *ctx;
    OSSL_PARAM p;
    char *value;
    size_t i;

    ctx = pu_drbg_ready(&env, NULL);
    if (!TU_OK(ctx != NULL, "instantiated context"))
        return;
    for (i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++)
        check_get_number(get_ctx, ctx, numbers[i].key, numbers[i].type,
                         numbers[i].size);
    check_get_string(get_ctx, ctx, "impl", tu_expected_impl());
    EVP_RAND_CTX_free(ctx);

    check_get_number(get_prov, env.prov, OSSL_PROV_PARAM_STATUS,
                     OSSL_PARAM_INTEGER, sizeof(int));
    for (i = 0; i < sizeof(prov_strings) / sizeof(prov_strings[0]); i++) {
        value = NULL;
        p = OSSL_PARAM_construct_utf8_ptr(prov_strings[i], &value, 0);
        if (TU_OK(get_one(get_prov, env.prov, &p) == 1 && value != NULL,
                  "provider %s: \"%s\"", prov_strings[i],
                  value != NULL ? value : "(null)"))
            check_get_string(get_prov, env.prov, prov_strings[i], value);
    }
    pu_err_clear();
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
    test_bad_set_params();
    test_refused_instantiate_keeps_params();
    test_bad_get_params();
    pu_env_free(&env);
}

int main(void)
{
    return tu_main_per_impl(body);
}
