/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The EVP_RAND entry points of CHACHA20-DRBG and their dispatch table.
 *
 * Locking follows OpenSSL's DRBGs: the EVP layer calls our lock/unlock
 * around every entry point, so nothing here takes our own lock (a child
 * calling get_seed or get_ctx_params already holds it).  We take only the
 * parent's lock, around calls into the parent.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "kmix_choice.h"
#include "library_rng.h"
#include "rand.h"
#include "rand_local.h"
#include "reasons.h"

static OSSL_FUNC_rand_newctx_fn chacharng_rand_newctx;
static OSSL_FUNC_rand_freectx_fn chacharng_rand_freectx;
static OSSL_FUNC_rand_instantiate_fn chacharng_rand_instantiate;
static OSSL_FUNC_rand_uninstantiate_fn chacharng_rand_uninstantiate;
static OSSL_FUNC_rand_generate_fn chacharng_rand_generate;
static OSSL_FUNC_rand_reseed_fn chacharng_rand_reseed;
static OSSL_FUNC_rand_enable_locking_fn chacharng_rand_enable_locking;
static OSSL_FUNC_rand_lock_fn chacharng_rand_lock;
static OSSL_FUNC_rand_unlock_fn chacharng_rand_unlock;
static OSSL_FUNC_rand_verify_zeroization_fn chacharng_rand_verify_zeroization;
static OSSL_FUNC_rand_get_seed_fn chacharng_rand_get_seed;
static OSSL_FUNC_rand_clear_seed_fn chacharng_rand_clear_seed;

static void *chacharng_rand_newctx(void *provctx, void *parent,
                                   const OSSL_DISPATCH *parent_dispatch)
{
    CHACHARNG_PROV_CTX *prov = provctx;
    CHACHARNG_RAND_CTX *ctx = calloc(1, sizeof(*ctx));
    struct chacha_drbg_source src;

    if (ctx == NULL) {
        CHACHARNG_RAISE(prov, CHACHARNG_R_OUT_OF_MEMORY, "newctx");
        return NULL;
    }
    ctx->provctx = prov;
    ctx->state = EVP_RAND_STATE_UNINITIALISED;
    if (parent != NULL && parent_dispatch != NULL) {
        const OSSL_DISPATCH *d = parent_dispatch;

        ctx->parent = parent;
#define PARENT_FN(name, id)                                                    \
    OSSL_FUNC_rand_##name(chacharng_dispatch_find(d, OSSL_FUNC_RAND_##id))
        ctx->parent_get_seed = PARENT_FN(get_seed, GET_SEED);
        ctx->parent_clear_seed = PARENT_FN(clear_seed, CLEAR_SEED);
        ctx->parent_get_ctx_params = PARENT_FN(get_ctx_params, GET_CTX_PARAMS);
        ctx->parent_set_ctx_params = PARENT_FN(set_ctx_params, SET_CTX_PARAMS);
        ctx->parent_lock = PARENT_FN(lock, LOCK);
        ctx->parent_unlock = PARENT_FN(unlock, UNLOCK);
        ctx->parent_enable_locking = PARENT_FN(enable_locking, ENABLE_LOCKING);
#undef PARENT_FN
    }
    /* the generator's source and mixing both depend on the parent */
    chacharng_seed_source(ctx, &src);
    ctx->drbg =
        chacharng_drbg_new(prov, chacharng_kmix_default(prov, ctx), &src);
    if (ctx->drbg == NULL) {
        free(ctx);
        return NULL;
    }
    return ctx;
}

static void chacharng_rand_freectx(void *vctx)
{
    CHACHARNG_RAND_CTX *ctx = vctx;

    if (ctx == NULL)
        return;
    chacha_drbg_free(ctx->drbg); /* wipes the state page */
    if (ctx->lock != NULL) {
        pthread_mutex_destroy(ctx->lock);
        free(ctx->lock);
    }
    free(ctx);
}

/*
 * Instantiate from scratch: fresh entropy then |pers|.  Requires the lock
 * (if any) to be held.  Returns 1 on success, 0 on failure with the state
 * set to error.
 */
static int instantiate_locked(CHACHARNG_RAND_CTX *ctx, int pred_res,
                              const unsigned char *pers, size_t perslen)
{
    unsigned int strength = 0;

    if (ctx->parent != NULL) {
        if (!chacharng_seed_parent_strength(ctx, &strength)
            || strength < CHACHA_DRBG_STRENGTH) {
            CHACHARNG_RAISE(ctx->provctx, CHACHARNG_R_PARENT_STRENGTH_TOO_LOW,
                            "parent strength %u, need %d", strength,
                            CHACHA_DRBG_STRENGTH);
            ctx->state = EVP_RAND_STATE_ERROR;
            return 0;
        }
    }
    if (!chacha_drbg_instantiate_fresh(ctx->drbg, pred_res, pers, perslen)) {
        /* fail closed: no output until a seed is had */
        ctx->state = EVP_RAND_STATE_ERROR;
        return 0;
    }
    ctx->state = EVP_RAND_STATE_READY;
    return 1;
}

static int chacharng_rand_instantiate(void *vctx, unsigned int strength,
                                      int prediction_resistance,
                                      const unsigned char *pstr,
                                      size_t pstr_len,
                                      const OSSL_PARAM params[])
{
    CHACHARNG_RAND_CTX *ctx = vctx;

    if (ctx->state != EVP_RAND_STATE_UNINITIALISED) {
        CHACHARNG_RAISE(ctx->provctx,
                        ctx->state == EVP_RAND_STATE_ERROR
                            ? CHACHARNG_R_IN_ERROR_STATE
                            : CHACHARNG_R_ALREADY_INSTANTIATED,
                        "instantiate");
        return 0;
    }
    if (!chacharng_strength_ok(ctx->provctx, strength))
        return 0;
    if (pstr == NULL)
        pstr_len = 0; /* as OpenSSL's DRBGs: NULL means empty */
    if (pstr_len > CHACHARNG_MAX_INPUT) {
        CHACHARNG_RAISE(ctx->provctx, CHACHARNG_R_PERSONALISATION_TOO_LONG,
                        "%zu bytes, at most %zu", pstr_len,
                        CHACHARNG_MAX_INPUT);
        return 0;
    }
    /* params[] apply only to an instantiate that is not refused */
    if (!chacharng_rand_set_ctx_params(ctx, params))
        return 0;
    ctx->library_made = chacharng_library_rng_made(ctx->provctx, params);
    return instantiate_locked(ctx, prediction_resistance, pstr, pstr_len);
}

static int chacharng_rand_uninstantiate(void *vctx)
{
    CHACHARNG_RAND_CTX *ctx = vctx;

    chacha_drbg_wipe(ctx->drbg);
    ctx->state = EVP_RAND_STATE_UNINITIALISED;
    return 1;
}

/*
 * Get READY: an error state first tries a fresh instantiate (no
 * personalization, as OpenSSL's DRBGs restart).  Returns 1 if ready.
 */
static int ensure_ready(CHACHARNG_RAND_CTX *ctx)
{
    if (ctx->state == EVP_RAND_STATE_READY)
        return 1;
    if (ctx->state == EVP_RAND_STATE_ERROR) {
        chacha_drbg_wipe(ctx->drbg);
        if (instantiate_locked(ctx, 0, NULL, 0))
            return 1;
        CHACHARNG_RAISE(ctx->provctx, CHACHARNG_R_IN_ERROR_STATE,
                        "recovery failed");
        return 0;
    }
    CHACHARNG_RAISE(ctx->provctx, CHACHARNG_R_NOT_INSTANTIATED, "use");
    return 0;
}

static int check_input_len(CHACHARNG_RAND_CTX *ctx, size_t len, int reason)
{
    if (len <= CHACHARNG_MAX_INPUT)
        return 1;
    CHACHARNG_RAISE(ctx->provctx, reason, "%zu bytes, at most %zu", len,
                    CHACHARNG_MAX_INPUT);
    return 0;
}

static int chacharng_rand_reseed(void *vctx, int prediction_resistance,
                                 const unsigned char *ent, size_t ent_len,
                                 const unsigned char *adin, size_t adin_len)
{
    CHACHARNG_RAND_CTX *ctx = vctx;

    if (ent == NULL)
        ent_len = 0;
    if (adin == NULL)
        adin_len = 0;
    if (!check_input_len(ctx, ent_len, CHACHARNG_R_ENTROPY_INPUT_TOO_LONG)
        || !check_input_len(ctx, adin_len,
                            CHACHARNG_R_ADDITIONAL_INPUT_TOO_LONG))
        return 0;
    if (!ensure_ready(ctx))
        return 0;
    if (chacha_drbg_reseed_fresh(ctx->drbg, prediction_resistance, ent, ent_len,
                                 adin, adin_len))
        return 1;
    ctx->state = EVP_RAND_STATE_ERROR;
    return 0;
}

/*
 * The generator's request, made an EVP answer: a failed seed source (the
 * generator is wiped then) leaves the context in the error state.
 */
static __attribute__((noinline, cold)) int
request_failed(CHACHARNG_RAND_CTX *ctx)
{
    ctx->state = EVP_RAND_STATE_ERROR;
    return 0;
}

static inline int request(CHACHARNG_RAND_CTX *ctx, unsigned char *out,
                          size_t outlen, int pred_res,
                          const unsigned char *adin, size_t adinlen)
{
    if (chacha_drbg_request(ctx->drbg, out, outlen, pred_res, adin, adinlen))
        return 1;
    return request_failed(ctx);
}

/*
 * generate with the checks of DESIGN.md section 5 spelled out: a strength
 * above ours, a request above max_request, oversized additional input, a
 * context not READY (an error state first tries to recover).  Out of line:
 * every request that passes them all takes chacharng_rand_generate()'s
 * one test instead.  Requires the lock.  Returns 1 with |outlen| bytes in
 * |out|, or 0 with an error raised.
 */
static __attribute__((noinline)) int
generate_checked(CHACHARNG_RAND_CTX *ctx, unsigned char *out, size_t outlen,
                 unsigned int strength, int pred_res, const unsigned char *adin,
                 size_t adinlen)
{
    if (adin == NULL)
        adinlen = 0; /* as OpenSSL's DRBGs: NULL means empty */
    if (!chacharng_strength_ok(ctx->provctx, strength))
        return 0;
    if (outlen > CHACHARNG_MAX_REQUEST) {
        CHACHARNG_RAISE(ctx->provctx, CHACHARNG_R_REQUEST_TOO_LARGE,
                        "%zu bytes, at most %zu", outlen,
                        CHACHARNG_MAX_REQUEST);
        return 0;
    }
    if (!check_input_len(ctx, adinlen, CHACHARNG_R_ADDITIONAL_INPUT_TOO_LONG)
        || !ensure_ready(ctx))
        return 0;
    return request(ctx, out, outlen, pred_res, adin, adinlen);
}

/*
 * generate, for EVP: a request that passes every check goes straight to
 * the generator's request path, which decides on a reseed and serves
 * (inline, from the buffer, for most small requests).  NULL additional
 * input with a length takes the checked path, which treats it as empty.
 */
static int chacharng_rand_generate(void *vctx, unsigned char *out,
                                   size_t outlen, unsigned int strength,
                                   int prediction_resistance,
                                   const unsigned char *adin, size_t adin_len)
{
    CHACHARNG_RAND_CTX *ctx = vctx;

    if (__builtin_expect(
            ctx->state != EVP_RAND_STATE_READY
                || strength > CHACHA_DRBG_STRENGTH
                || outlen > CHACHARNG_MAX_REQUEST
                || (adin_len != 0
                    && (adin == NULL || adin_len > CHACHARNG_MAX_INPUT)),
            0))
        return generate_checked(ctx, out, outlen, strength,
                                prediction_resistance, adin, adin_len);
    return request(ctx, out, outlen, prediction_resistance, adin, adin_len);
}

static int chacharng_rand_enable_locking(void *vctx)
{
    CHACHARNG_RAND_CTX *ctx = vctx;

    if (ctx->lock == NULL) {
        pthread_mutex_t *m = malloc(sizeof(*m));

        if (m == NULL || pthread_mutex_init(m, NULL) != 0) {
            free(m);
            CHACHARNG_RAISE(ctx->provctx, CHACHARNG_R_OUT_OF_MEMORY, "lock");
            return 0;
        }
        ctx->lock = m;
    }
    if (ctx->library_made)
        chacharng_library_rng_primary(ctx->provctx);
    if (ctx->parent != NULL && ctx->parent_enable_locking != NULL
        && !ctx->parent_enable_locking(ctx->parent)) {
        CHACHARNG_RAISE(ctx->provctx, CHACHARNG_R_PARENT_LOCKING_FAILED,
                        "enable_locking");
        return 0;
    }
    return 1;
}

static int chacharng_rand_lock(void *vctx)
{
    CHACHARNG_RAND_CTX *ctx = vctx;

    return ctx->lock == NULL || pthread_mutex_lock(ctx->lock) == 0;
}

static void chacharng_rand_unlock(void *vctx)
{
    CHACHARNG_RAND_CTX *ctx = vctx;

    if (ctx->lock != NULL)
        pthread_mutex_unlock(ctx->lock);
}

static int chacharng_rand_verify_zeroization(void *vctx)
{
    CHACHARNG_RAND_CTX *ctx = vctx;

    return ctx->state != EVP_RAND_STATE_READY
           && chacha_drbg_is_zeroized(ctx->drbg);
}

/*
 * As a parent: hand a child max(ceil(entropy/8), min_len) bytes, capped at
 * max_len, of our output.  Called with our lock already held by the child.
 */
static size_t chacharng_rand_get_seed(void *vctx, unsigned char **pout,
                                      int entropy, size_t min_len,
                                      size_t max_len, int prediction_resistance,
                                      const unsigned char *adin,
                                      size_t adin_len)
{
    CHACHARNG_RAND_CTX *ctx = vctx;
    size_t n = entropy > 0 ? ((size_t)entropy + 7) / 8 : 0;
    unsigned char *buf;

    if (n < min_len)
        n = min_len;
    if (n > max_len)
        n = max_len;
    if (n == 0)
        return 0;
    buf = OPENSSL_secure_malloc(n);
    if (buf == NULL) {
        CHACHARNG_RAISE(ctx->provctx, CHACHARNG_R_OUT_OF_MEMORY, "get_seed");
        return 0;
    }
    if (!generate_checked(ctx, buf, n, 0, prediction_resistance, adin,
                          adin_len)) {
        OPENSSL_secure_clear_free(buf, n);
        return 0;
    }
    *pout = buf;
    return n;
}

static void chacharng_rand_clear_seed(void *vctx, unsigned char *out,
                                      size_t outlen)
{
    /* the child's seed */
    OPENSSL_secure_clear_free(out, outlen);
}

const OSSL_DISPATCH chacharng_rand_functions[] = {
    { OSSL_FUNC_RAND_NEWCTX, (void (*)(void))chacharng_rand_newctx },
    { OSSL_FUNC_RAND_FREECTX, (void (*)(void))chacharng_rand_freectx },
    { OSSL_FUNC_RAND_INSTANTIATE, (void (*)(void))chacharng_rand_instantiate },
    { OSSL_FUNC_RAND_UNINSTANTIATE,
      (void (*)(void))chacharng_rand_uninstantiate },
    { OSSL_FUNC_RAND_GENERATE, (void (*)(void))chacharng_rand_generate },
    { OSSL_FUNC_RAND_RESEED, (void (*)(void))chacharng_rand_reseed },
    { OSSL_FUNC_RAND_ENABLE_LOCKING,
      (void (*)(void))chacharng_rand_enable_locking },
    { OSSL_FUNC_RAND_LOCK, (void (*)(void))chacharng_rand_lock },
    { OSSL_FUNC_RAND_UNLOCK, (void (*)(void))chacharng_rand_unlock },
    { OSSL_FUNC_RAND_GETTABLE_CTX_PARAMS,
      (void (*)(void))chacharng_rand_gettable_ctx_params },
    { OSSL_FUNC_RAND_SETTABLE_CTX_PARAMS,
      (void (*)(void))chacharng_rand_settable_ctx_params },
    { OSSL_FUNC_RAND_GET_CTX_PARAMS,
      (void (*)(void))chacharng_rand_get_ctx_params },
    { OSSL_FUNC_RAND_SET_CTX_PARAMS,
      (void (*)(void))chacharng_rand_set_ctx_params },
    { OSSL_FUNC_RAND_VERIFY_ZEROIZATION,
      (void (*)(void))chacharng_rand_verify_zeroization },
    { OSSL_FUNC_RAND_GET_SEED, (void (*)(void))chacharng_rand_get_seed },
    { OSSL_FUNC_RAND_CLEAR_SEED, (void (*)(void))chacharng_rand_clear_seed },
    { 0, NULL }
};
