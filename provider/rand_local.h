/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The internals of a CHACHA20-DRBG EVP_RAND context, shared by the files
 * that implement it (rand.c, rand_params.c, seed.c) and by kmix.c, which
 * lets a child follow a chacharng parent's mixing choice.  Everything
 * provider-wide is in base.h.  The generator keeps its own reseed counter
 * and time, and the mark of its parent's counter.
 */
#ifndef CHACHARNG_RAND_LOCAL_H
#define CHACHARNG_RAND_LOCAL_H

#include <pthread.h>
#include <time.h>

#include <openssl/core_dispatch.h>

#include "base.h"

struct chacharng_rand_ctx {
    CHACHARNG_PROV_CTX *provctx;
    struct chacha_drbg *drbg;
    pthread_mutex_t *lock; /* NULL until enable_locking */
    int state;             /* EVP_RAND_STATE_* */
    int library_made;      /* made by libcrypto from our stored name */

    /* Parent RAND, if any, and the entry points it exported. */
    void *parent;
    OSSL_FUNC_rand_get_seed_fn *parent_get_seed;
    OSSL_FUNC_rand_clear_seed_fn *parent_clear_seed;
    OSSL_FUNC_rand_get_ctx_params_fn *parent_get_ctx_params;
    OSSL_FUNC_rand_set_ctx_params_fn *parent_set_ctx_params;
    OSSL_FUNC_rand_lock_fn *parent_lock;
    OSSL_FUNC_rand_unlock_fn *parent_unlock;
    OSSL_FUNC_rand_enable_locking_fn *parent_enable_locking;
};

/* ------------------------------------------------------------------------
 * rand_params.c: the context's parameters
 * ------------------------------------------------------------------------ */
OSSL_FUNC_rand_get_ctx_params_fn chacharng_rand_get_ctx_params;
OSSL_FUNC_rand_set_ctx_params_fn chacharng_rand_set_ctx_params;
OSSL_FUNC_rand_gettable_ctx_params_fn chacharng_rand_gettable_ctx_params;
OSSL_FUNC_rand_settable_ctx_params_fn chacharng_rand_settable_ctx_params;

/*
 * 1 if |ctx|'s parent is a CHACHA20-DRBG of this module, whose context
 * may then be read directly: known by its get_ctx_params, which no other
 * RAND exports.
 */
static inline int chacharng_parent_is_ours(const CHACHARNG_RAND_CTX *ctx)
{
    return ctx->parent_get_ctx_params == chacharng_rand_get_ctx_params;
}

/* ------------------------------------------------------------------------
 * seed.c: the parent's side of seeding
 * ------------------------------------------------------------------------ */
/*
 * The seed source of |ctx|'s generator, into |src|: its parent (whose
 * reseeds it then follows), or with no parent chacharng_seed_source_os().
 * The parent must already be noted in |ctx|.
 */
void chacharng_seed_source(CHACHARNG_RAND_CTX *ctx,
                           struct chacha_drbg_source *src);
/* Read the parent's strength; returns 1 and sets *|strength| on success. */
int chacharng_seed_parent_strength(CHACHARNG_RAND_CTX *ctx,
                                   unsigned int *strength);

#endif
