/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Entropy for (re)seeding, in the order of DESIGN.md section 4: the parent
 * RAND (under its lock), else the core's entropy upcall, else getrandom(2).
 * Nothing here calls RAND_bytes or EVP on the application's library
 * context: when chacharng is libcrypto's own DRBG that would recurse.
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "rand_local.h"
#include "wipe.h"

static int lock_parent(CHACHARNG_RAND_CTX *ctx)
{
    return ctx->parent_lock == NULL || ctx->parent_lock(ctx->parent);
}

static void unlock_parent(CHACHARNG_RAND_CTX *ctx)
{
    if (ctx->parent_unlock != NULL)
        ctx->parent_unlock(ctx->parent);
}

int chacharng_seed_parent_strength(CHACHARNG_RAND_CTX *ctx,
                                   unsigned int *strength)
{
    OSSL_PARAM params[2];
    int ok;

    if (ctx->parent_get_ctx_params == NULL)
        return 0;
    params[0] = OSSL_PARAM_construct_uint(OSSL_RAND_PARAM_STRENGTH, strength);
    params[1] = OSSL_PARAM_construct_end();
    if (!lock_parent(ctx))
        return 0;
    ok = ctx->parent_get_ctx_params(ctx->parent, params)
         && OSSL_PARAM_modified(&params[0]);
    unlock_parent(ctx);
    return ok;
}

/* The parent's reseed counter; requires the parent's lock. */
static int parent_counter_locked(CHACHARNG_RAND_CTX *ctx, unsigned int *counter)
{
    OSSL_PARAM params[2];

    if (ctx->parent_get_ctx_params == NULL)
        return 0;
    /* our own kind of parent: its counter is one atomic load away */
    if (chacharng_parent_is_ours(ctx)) {
        CHACHARNG_RAND_CTX *parent = ctx->parent;

        *counter = __atomic_load_n(&parent->reseed_counter, __ATOMIC_RELAXED);
        return 1;
    }
    params[0] =
        OSSL_PARAM_construct_uint(OSSL_DRBG_PARAM_RESEED_COUNTER, counter);
    params[1] = OSSL_PARAM_construct_end();
    return ctx->parent_get_ctx_params(ctx->parent, params)
           && OSSL_PARAM_modified(&params[0]);
}

int chacharng_seed_parent_counter(CHACHARNG_RAND_CTX *ctx,
                                  unsigned int *counter)
{
    int ok;

    if (ctx->parent_get_ctx_params == NULL || !lock_parent(ctx))
        return 0;
    ok = parent_counter_locked(ctx, counter);
    unlock_parent(ctx);
    return ok;
}

static int seed_from_parent(CHACHARNG_RAND_CTX *ctx, unsigned char *out,
                            int pred_res)
{
    unsigned char *buf = NULL;
    unsigned int counter;
    size_t n;

    if (ctx->parent_get_seed == NULL) {
        CHACHARNG_RAISE(ctx->provctx, CHACHARNG_R_ENTROPY_SOURCE_FAILED,
                        "parent has no get_seed");
        return 0;
    }
    if (!lock_parent(ctx)) {
        CHACHARNG_RAISE(ctx->provctx, CHACHARNG_R_ENTROPY_SOURCE_FAILED,
                        "cannot lock parent");
        return 0;
    }
    n = ctx->parent_get_seed(ctx->parent, &buf, CHACHA_DRBG_STRENGTH,
                             CHACHA_DRBG_SEED_BYTES, CHACHA_DRBG_SEED_BYTES,
                             pred_res, NULL, 0);
    if (n >= CHACHA_DRBG_SEED_BYTES && buf != NULL)
        memcpy(out, buf, CHACHA_DRBG_SEED_BYTES);
    /* the parent owns buf; only a parent with clear_seed wants it back */
    if (buf != NULL && ctx->parent_clear_seed != NULL)
        ctx->parent_clear_seed(ctx->parent, buf, n);
    /*
     * Remember the parent's counter as it is *after* handing out the seed:
     * if that made the parent reseed, reading it earlier would make us
     * follow a reseed we have already absorbed, on every call.
     */
    if (n >= CHACHA_DRBG_SEED_BYTES && parent_counter_locked(ctx, &counter))
        ctx->parent_reseed_counter = counter;
    unlock_parent(ctx);
    if (n < CHACHA_DRBG_SEED_BYTES || buf == NULL) {
        CHACHARNG_RAISE(ctx->provctx, CHACHARNG_R_ENTROPY_SOURCE_FAILED,
                        "parent gave %zu of %d seed bytes", n,
                        CHACHA_DRBG_SEED_BYTES);
        return 0;
    }
    return 1;
}

static int seed_from_core(const CHACHARNG_PROV_CTX *prov, unsigned char *out)
{
    unsigned char *buf = NULL;
    size_t n;

    n = prov->get_entropy(prov->handle, &buf, CHACHA_DRBG_STRENGTH,
                          CHACHA_DRBG_SEED_BYTES, CHACHA_DRBG_SEED_BYTES);
    if (n >= CHACHA_DRBG_SEED_BYTES && buf != NULL)
        memcpy(out, buf, CHACHA_DRBG_SEED_BYTES);
    if (buf != NULL)
        prov->cleanup_entropy(prov->handle, buf, n);
    if (n < CHACHA_DRBG_SEED_BYTES || buf == NULL) {
        CHACHARNG_RAISE(prov, CHACHARNG_R_ENTROPY_SOURCE_FAILED,
                        "core entropy upcall gave %zu of %d bytes", n,
                        CHACHA_DRBG_SEED_BYTES);
        return 0;
    }
    return 1;
}

static int seed_from_getrandom(const CHACHARNG_PROV_CTX *prov,
                               unsigned char *out)
{
    size_t got = 0;

    while (got < CHACHA_DRBG_SEED_BYTES) {
        ssize_t r = getrandom(out + got, CHACHA_DRBG_SEED_BYTES - got, 0);

        if (r < 0) {
            if (errno == EINTR)
                continue;
            CHACHARNG_RAISE(prov, CHACHARNG_R_ENTROPY_SOURCE_FAILED,
                            "getrandom: %s", strerror(errno));
            /* a partial seed is no seed */
            chacha_wipe(out, CHACHA_DRBG_SEED_BYTES);
            return 0;
        }
        got += (size_t)r;
    }
    return 1;
}

int chacharng_seed_os(const CHACHARNG_PROV_CTX *prov, unsigned char *out)
{
    if (prov->get_entropy != NULL)
        return seed_from_core(prov, out);
    return seed_from_getrandom(prov, out);
}

int chacharng_seed_get(CHACHARNG_RAND_CTX *ctx, unsigned char *out,
                       int prediction_resistance)
{
    if (ctx->parent != NULL)
        return seed_from_parent(ctx, out, prediction_resistance);
    return chacharng_seed_os(ctx->provctx, out);
}

/* ------------------------------------------------------------------------
 * Seeding a generator: fetch, absorb, wipe, record
 * ------------------------------------------------------------------------ */

int chacharng_seed_drbg(const CHACHARNG_PROV_CTX *prov, CHACHARNG_RAND_CTX *ctx,
                        struct chacha_drbg *d,
                        const struct chacharng_seed_input *in)
{
    unsigned char e[CHACHA_DRBG_SEED_BYTES];
    int ok;

    ok = ctx != NULL ? chacharng_seed_get(ctx, e, in->prediction_resistance)
                     : chacharng_seed_os(prov, e);
    if (!ok) {
        /* fail closed: no output until a seed is had */
        chacha_drbg_wipe(d);
        if (ctx != NULL)
            ctx->state = EVP_RAND_STATE_ERROR;
        return 0;
    }
    if (in->instantiate)
        chacha_drbg_instantiate(d, e, sizeof(e), in->pers, in->perslen);
    else
        chacha_drbg_reseed(d, in->ent, in->entlen, e, sizeof(e), in->adin,
                           in->adinlen);
    /* the seed is in the key now */
    chacha_wipe(e, sizeof(e));
    /* (the parent's counter was noted when it handed out E, under its lock) */
    if (ctx != NULL) {
        __atomic_add_fetch(&ctx->reseed_counter, 1, __ATOMIC_RELAXED);
        ctx->reseed_time = chacha_drbg_seed_time(d);
    }
    return 1;
}
