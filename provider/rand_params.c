/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CHACHA20-DRBG context parameters.  Types follow OpenSSL's own DRBGs so
 * that libcrypto and applications can read them the same way.  Unknown keys
 * are ignored (libcrypto sends cipher/digest/properties depending on the
 * version); a known key with a wrong type or an out-of-range value fails
 * the whole call and changes nothing.
 */
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "prov.h"

#define PARAM_IMPL "impl"

/*
 * EVP_RAND_generate asks for max_request on every call with the same
 * string constant: remember its address so that hot query is answered
 * before any strcmp.  A stale or racing value only costs the slow path.
 */
static const char *max_request_key;

int chacharng_param_set_utf8(OSSL_PARAM *p, const char *s)
{
    if (p->data_type == OSSL_PARAM_UTF8_PTR)
        return OSSL_PARAM_set_utf8_ptr(p, s);
    return OSSL_PARAM_set_utf8_string(p, s);
}

/* ------------------------------------------------------------------------
 * Kernel mixing (DESIGN.md section 3): `kernel_mix`, an int 0 or 1, is
 * settable and gettable; `kernel_mix_failures`, a uint, counts the kernel
 * reads that failed, so that a forced `on` never falls back unseen.
 * ------------------------------------------------------------------------ */
#define PARAM_KERNEL_MIX "kernel_mix"
#define PARAM_KERNEL_MIX_FAILURES "kernel_mix_failures"

static int get_kernel_mix(CHACHARNG_RAND_CTX *ctx, OSSL_PARAM params[])
{
    OSSL_PARAM *p;

    p = OSSL_PARAM_locate(params, PARAM_KERNEL_MIX);
    if (p != NULL && !OSSL_PARAM_set_int(p, ctx->drbg->kernel_mix != NULL))
        return 0;
    p = OSSL_PARAM_locate(params, PARAM_KERNEL_MIX_FAILURES);
    if (p != NULL
        && !OSSL_PARAM_set_uint(p, __atomic_load_n(&ctx->drbg->mix_failures,
                                                   __ATOMIC_RELAXED)))
        return 0;
    return 1;
}

/*
 * Validate the kernel_mix of |params|, if any, into *|on|.  Returns 1, or
 * 0 with an error raised (and *|on| unchanged).
 */
static int parse_kernel_mix(CHACHARNG_RAND_CTX *ctx,
                            const OSSL_PARAM params[], int *on)
{
    const OSSL_PARAM *p = OSSL_PARAM_locate_const(params, PARAM_KERNEL_MIX);
    int v;

    if (p == NULL)
        return 1;
    if (!OSSL_PARAM_get_int(p, &v) || (v != 0 && v != 1)) {
        CHACHARNG_RAISE(ctx->provctx, CHACHARNG_R_INVALID_PARAMETER,
                        "%s must be an int, 0 or 1", p->key);
        return 0;
    }
    *on = v;
    return 1;
}

/* ---------------------------------------------------------------------- */

static int get_ctx_params_slow(CHACHARNG_RAND_CTX *ctx, OSSL_PARAM params[])
    __attribute__((noinline));

int chacharng_rand_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
    OSSL_PARAM *p = params;

    /* kept free of calls so that it compiles to a leaf with no frame */
    if (p != NULL && p[0].key != NULL
        && p[0].key == __atomic_load_n(&max_request_key, __ATOMIC_RELAXED)
        && p[1].key == NULL && p[0].data_type == OSSL_PARAM_UNSIGNED_INTEGER
        && p[0].data_size == sizeof(size_t) && p[0].data != NULL) {
        *(size_t *)p[0].data = CHACHARNG_MAX_REQUEST;
        p[0].return_size = sizeof(size_t);
        return 1;
    }
    return get_ctx_params_slow(vctx, params);
}

static int get_ctx_params_slow(CHACHARNG_RAND_CTX *ctx, OSSL_PARAM params[])
{
    OSSL_PARAM *p;

    if (params == NULL)
        return 1;
    p = OSSL_PARAM_locate(params, OSSL_RAND_PARAM_MAX_REQUEST);
    if (p != NULL) {
        if (!OSSL_PARAM_set_size_t(p, CHACHARNG_MAX_REQUEST))
            return 0;
        __atomic_store_n(&max_request_key, p->key, __ATOMIC_RELAXED);
    }
    p = OSSL_PARAM_locate(params, OSSL_RAND_PARAM_STATE);
    if (p != NULL && !OSSL_PARAM_set_int(p, ctx->state))
        return 0;
    p = OSSL_PARAM_locate(params, OSSL_RAND_PARAM_STRENGTH);
    if (p != NULL && !OSSL_PARAM_set_uint(p, CHACHA_DRBG_STRENGTH))
        return 0;
    p = OSSL_PARAM_locate(params, OSSL_DRBG_PARAM_RESEED_REQUESTS);
    if (p != NULL && !OSSL_PARAM_set_uint(p, ctx->drbg->reseed_requests))
        return 0;
    p = OSSL_PARAM_locate(params, OSSL_DRBG_PARAM_RESEED_TIME_INTERVAL);
    if (p != NULL && !OSSL_PARAM_set_time_t(p, ctx->drbg->reseed_interval))
        return 0;
    p = OSSL_PARAM_locate(params, OSSL_DRBG_PARAM_RESEED_COUNTER);
    if (p != NULL
        && !OSSL_PARAM_set_uint(p, __atomic_load_n(&ctx->reseed_counter,
                                                   __ATOMIC_RELAXED)))
        return 0;
    p = OSSL_PARAM_locate(params, OSSL_DRBG_PARAM_RESEED_TIME);
    if (p != NULL && !OSSL_PARAM_set_time_t(p, ctx->reseed_time))
        return 0;
    p = OSSL_PARAM_locate(params, OSSL_DRBG_PARAM_MAX_PERSLEN);
    if (p != NULL && !OSSL_PARAM_set_size_t(p, CHACHARNG_MAX_INPUT))
        return 0;
    p = OSSL_PARAM_locate(params, OSSL_DRBG_PARAM_MAX_ADINLEN);
    if (p != NULL && !OSSL_PARAM_set_size_t(p, CHACHARNG_MAX_INPUT))
        return 0;
    p = OSSL_PARAM_locate(params, PARAM_IMPL);
    if (p != NULL && !chacharng_param_set_utf8(p, ctx->drbg->impl->name))
        return 0;
    if (!get_kernel_mix(ctx, params))
        return 0;
    return 1;
}

int chacharng_rand_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
    CHACHARNG_RAND_CTX *ctx = vctx;
    const OSSL_PARAM *p;
    unsigned int requests = ctx->drbg->reseed_requests;
    time_t interval = ctx->drbg->reseed_interval;
    const struct chacha_impl *impl = ctx->drbg->impl;
    int kernel_mix = ctx->drbg->kernel_mix != NULL;

    if (params == NULL)
        return 1;
    /* validate everything first, so a failure changes nothing */
    p = OSSL_PARAM_locate_const(params, OSSL_DRBG_PARAM_RESEED_REQUESTS);
    if (p != NULL && !OSSL_PARAM_get_uint(p, &requests)) {
        CHACHARNG_RAISE(ctx->provctx, CHACHARNG_R_INVALID_PARAMETER,
                        "%s must be an unsigned int", p->key);
        return 0;
    }
    p = OSSL_PARAM_locate_const(params, OSSL_DRBG_PARAM_RESEED_TIME_INTERVAL);
    if (p != NULL && (!OSSL_PARAM_get_time_t(p, &interval) || interval < 0)) {
        CHACHARNG_RAISE(ctx->provctx, CHACHARNG_R_INVALID_PARAMETER,
                        "%s must be a non-negative time_t", p->key);
        return 0;
    }
    p = OSSL_PARAM_locate_const(params, PARAM_IMPL);
    if (p != NULL) {
        const char *name = NULL;

        if (!OSSL_PARAM_get_utf8_string_ptr(p, &name)) {
            CHACHARNG_RAISE(ctx->provctx, CHACHARNG_R_INVALID_PARAMETER,
                            "impl must be a UTF8 string");
            return 0;
        }
        impl = chacha_impl_by_name(name);
        if (impl == NULL) {
            CHACHARNG_RAISE(ctx->provctx, CHACHARNG_R_UNKNOWN_IMPL, "impl=%s",
                            name);
            return 0;
        }
        if (!chacha_impl_supported(impl)) {
            CHACHARNG_RAISE(ctx->provctx, CHACHARNG_R_IMPL_NOT_SUPPORTED,
                            "impl=%s", name);
            return 0;
        }
    }
    if (!parse_kernel_mix(ctx, params, &kernel_mix))
        return 0;
    ctx->drbg->reseed_requests = requests;
    ctx->drbg->reseed_interval = interval;
    ctx->drbg->impl = impl;
    chacharng_kmix_set(ctx->drbg, kernel_mix);
    return 1;
}

static const OSSL_PARAM gettable[] = {
    OSSL_PARAM_int(OSSL_RAND_PARAM_STATE, NULL),
    OSSL_PARAM_uint(OSSL_RAND_PARAM_STRENGTH, NULL),
    OSSL_PARAM_size_t(OSSL_RAND_PARAM_MAX_REQUEST, NULL),
    OSSL_PARAM_uint(OSSL_DRBG_PARAM_RESEED_REQUESTS, NULL),
    OSSL_PARAM_time_t(OSSL_DRBG_PARAM_RESEED_TIME_INTERVAL, NULL),
    OSSL_PARAM_uint(OSSL_DRBG_PARAM_RESEED_COUNTER, NULL),
    OSSL_PARAM_time_t(OSSL_DRBG_PARAM_RESEED_TIME, NULL),
    OSSL_PARAM_size_t(OSSL_DRBG_PARAM_MAX_PERSLEN, NULL),
    OSSL_PARAM_size_t(OSSL_DRBG_PARAM_MAX_ADINLEN, NULL),
    OSSL_PARAM_utf8_string(PARAM_IMPL, NULL, 0),
    OSSL_PARAM_int(PARAM_KERNEL_MIX, NULL),
    OSSL_PARAM_uint(PARAM_KERNEL_MIX_FAILURES, NULL),
    OSSL_PARAM_END
};

static const OSSL_PARAM settable[] = {
    OSSL_PARAM_uint(OSSL_DRBG_PARAM_RESEED_REQUESTS, NULL),
    OSSL_PARAM_time_t(OSSL_DRBG_PARAM_RESEED_TIME_INTERVAL, NULL),
    OSSL_PARAM_utf8_string(PARAM_IMPL, NULL, 0),
    OSSL_PARAM_int(PARAM_KERNEL_MIX, NULL),
    OSSL_PARAM_END
};

const OSSL_PARAM *chacharng_rand_gettable_ctx_params(void *vctx,
                                                     void *provctx)
{
    return gettable;
}

const OSSL_PARAM *chacharng_rand_settable_ctx_params(void *vctx,
                                                     void *provctx)
{
    return settable;
}
