/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The seed sources of DESIGN.md section 4, as values of the generator's
 * source interface (chacha_drbg.h): the parent RAND (under its lock), else
 * the core's entropy upcall, else getrandom(2).  The generator decides when
 * to ask; this file only answers.  Nothing here calls RAND_bytes or EVP on
 * the application's library context: when chacharng is libcrypto's own
 * DRBG that would recurse.
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "rand_local.h"
#include "reasons.h"
#include "seed.h"
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

        *counter = chacha_drbg_reseed_counter(parent->drbg);
        return 1;
    }
    params[0] =
        OSSL_PARAM_construct_uint(OSSL_DRBG_PARAM_RESEED_COUNTER, counter);
    params[1] = OSSL_PARAM_construct_end();
    return ctx->parent_get_ctx_params(ctx->parent, params)
           && OSSL_PARAM_modified(&params[0]);
}

static int parent_counter(CHACHARNG_RAND_CTX *ctx, unsigned int *counter)
{
    int ok;

    if (ctx->parent_get_ctx_params == NULL || !lock_parent(ctx))
        return 0;
    ok = parent_counter_locked(ctx, counter);
    unlock_parent(ctx);
    return ok;
}

/* chacha_drbg_get_seed_fn of a context with a parent: |arg| is the context. */
static int seed_from_parent(void *arg, uint8_t *out, size_t len, int pred_res,
                            unsigned int *mark)
{
    CHACHARNG_RAND_CTX *ctx = arg;
    unsigned char *buf = NULL;
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
    n = ctx->parent_get_seed(ctx->parent, &buf, CHACHA_DRBG_STRENGTH, len, len,
                             pred_res, NULL, 0);
    if (n >= len && buf != NULL)
        memcpy(out, buf, len);
    /* the parent owns buf; only a parent with clear_seed wants it back */
    if (buf != NULL && ctx->parent_clear_seed != NULL)
        ctx->parent_clear_seed(ctx->parent, buf, n);
    /*
     * Remember the parent's counter as it is *after* handing out the seed:
     * if that made the parent reseed, reading it earlier would make us
     * follow a reseed we have already absorbed, on every call.
     */
    if (n >= len)
        (void)parent_counter_locked(ctx, mark);
    unlock_parent(ctx);
    if (n < len || buf == NULL) {
        CHACHARNG_RAISE(ctx->provctx, CHACHARNG_R_ENTROPY_SOURCE_FAILED,
                        "parent gave %zu of %zu seed bytes", n, len);
        return 0;
    }
    return 1;
}

/*
 * chacha_drbg_moved_fn of a context whose parent is not ours: 1 if its
 * reseed counter is no longer |mark| (a parent without one never moves).
 */
static int foreign_parent_moved(void *arg, unsigned int mark)
{
    unsigned int counter;

    return parent_counter(arg, &counter) && counter != mark;
}

static int seed_from_core(const CHACHARNG_PROV_CTX *prov, uint8_t *out,
                          size_t len)
{
    unsigned char *buf = NULL;
    size_t n;

    n = prov->get_entropy(prov->handle, &buf, CHACHA_DRBG_STRENGTH, len, len);
    if (n >= len && buf != NULL)
        memcpy(out, buf, len);
    if (buf != NULL)
        prov->cleanup_entropy(prov->handle, buf, n);
    if (n < len || buf == NULL) {
        CHACHARNG_RAISE(prov, CHACHARNG_R_ENTROPY_SOURCE_FAILED,
                        "core entropy upcall gave %zu of %zu bytes", n, len);
        return 0;
    }
    return 1;
}

static int seed_from_getrandom(const CHACHARNG_PROV_CTX *prov, uint8_t *out,
                               size_t len)
{
    size_t got = 0;

    while (got < len) {
        ssize_t r = getrandom(out + got, len - got, 0);

        if (r < 0) {
            if (errno == EINTR)
                continue;
            CHACHARNG_RAISE(prov, CHACHARNG_R_ENTROPY_SOURCE_FAILED,
                            "getrandom: %s", strerror(errno));
            /* a partial seed is no seed */
            chacha_wipe(out, len);
            return 0;
        }
        got += (size_t)r;
    }
    return 1;
}

/*
 * chacha_drbg_get_seed_fn of a generator without a parent: |arg| is the
 * provider context.  Nothing to follow, so |mark| is left alone.
 */
static int seed_from_os(void *arg, uint8_t *out, size_t len, int pred_res,
                        unsigned int *mark)
{
    const CHACHARNG_PROV_CTX *prov = arg;

    (void)pred_res; /* every read of the OS source is fresh */
    (void)mark;
    if (prov->get_entropy != NULL)
        return seed_from_core(prov, out, len);
    return seed_from_getrandom(prov, out, len);
}

/* ------------------------------------------------------------------------
 * The sources, as the generator's interface
 * ------------------------------------------------------------------------ */

void chacharng_seed_source_os(CHACHARNG_PROV_CTX *prov,
                              struct chacha_drbg_source *src)
{
    *src = (struct chacha_drbg_source){
        .get = seed_from_os,
        .arg = prov,
    };
}

void chacharng_seed_source(CHACHARNG_RAND_CTX *ctx,
                           struct chacha_drbg_source *src)
{
    if (ctx->parent == NULL) {
        chacharng_seed_source_os(ctx->provctx, src);
        return;
    }
    *src = (struct chacha_drbg_source){ .get = seed_from_parent, .arg = ctx };
    if (chacharng_parent_is_ours(ctx)) {
        const CHACHARNG_RAND_CTX *parent = ctx->parent;

        /* followed inline: one atomic load per request */
        src->counter = chacha_drbg_reseed_counter_at(parent->drbg);
    } else {
        src->moved = foreign_parent_moved;
    }
}
