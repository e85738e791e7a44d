/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NOOP-RAND (bench_noop.h): the least an EVP_RAND can be.  It exports the
 * same entry points as CHACHA20-DRBG where libcrypto calls them on every
 * generate (lock, unlock, get_ctx_params, generate), so that libcrypto
 * takes the same path for both, and each does nothing: generate leaves the
 * buffer as it is, get_ctx_params answers every size_t query with 1 MiB
 * without reading the key (EVP_RAND_generate asks only for max_request).
 * NOOP-RAND-STD is the same but answers max_request the way OpenSSL's own
 * DRBGs do (OSSL_PARAM_locate, OSSL_PARAM_set_size_t): the floor of a
 * provider written in the usual style.  Not generators: they exist only
 * for `make bench`.
 */
#include <stdio.h>
#include <string.h>

#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/params.h>
#include <openssl/provider.h>

#include "bench_noop.h"

#define NOOP_PROVIDER "bench-noop"

static int noop_ctx_dummy; /* every context is this one address */

static OSSL_FUNC_rand_newctx_fn noop_newctx;
static OSSL_FUNC_rand_freectx_fn noop_freectx;
static OSSL_FUNC_rand_instantiate_fn noop_instantiate;
static OSSL_FUNC_rand_uninstantiate_fn noop_uninstantiate;
static OSSL_FUNC_rand_generate_fn noop_generate;
static OSSL_FUNC_rand_enable_locking_fn noop_enable_locking;
static OSSL_FUNC_rand_lock_fn noop_lock;
static OSSL_FUNC_rand_unlock_fn noop_unlock;
static OSSL_FUNC_rand_gettable_ctx_params_fn noop_gettable_ctx_params;
static OSSL_FUNC_rand_get_ctx_params_fn noop_get_ctx_params;

static void *noop_newctx(void *provctx, void *parent,
                         const OSSL_DISPATCH *parent_calls)
{
    (void)provctx;
    (void)parent;
    (void)parent_calls;
    return &noop_ctx_dummy;
}

static void noop_freectx(void *vctx)
{
    (void)vctx;
}

static int noop_instantiate(void *vctx, unsigned int strength, int pred_res,
                            const unsigned char *pstr, size_t pstr_len,
                            const OSSL_PARAM params[])
{
    (void)vctx;
    (void)strength;
    (void)pred_res;
    (void)pstr;
    (void)pstr_len;
    (void)params;
    return 1;
}

static int noop_uninstantiate(void *vctx)
{
    (void)vctx;
    return 1;
}

static int noop_generate(void *vctx, unsigned char *out, size_t outlen,
                         unsigned int strength, int pred_res,
                         const unsigned char *adin, size_t adin_len)
{
    (void)vctx;
    (void)out;
    (void)outlen;
    (void)strength;
    (void)pred_res;
    (void)adin;
    (void)adin_len;
    return 1;
}

static int noop_enable_locking(void *vctx)
{
    (void)vctx;
    return 1;
}

static int noop_lock(void *vctx)
{
    (void)vctx;
    return 1;
}

static void noop_unlock(void *vctx)
{
    (void)vctx;
}

static const OSSL_PARAM noop_gettable[] = {
    OSSL_PARAM_size_t(OSSL_RAND_PARAM_MAX_REQUEST, NULL),
    OSSL_PARAM_END,
};

static const OSSL_PARAM *noop_gettable_ctx_params(void *vctx, void *provctx)
{
    (void)vctx;
    (void)provctx;
    return noop_gettable;
}

static int noop_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
    OSSL_PARAM *p;

    (void)vctx;
    for (p = params; p->key != NULL; p++)
        if (p->data_type == OSSL_PARAM_UNSIGNED_INTEGER
            && p->data_size == sizeof(size_t) && p->data != NULL) {
            *(size_t *)p->data = (size_t)1 << 20;
            p->return_size = sizeof(size_t);
        }
    return 1;
}

static OSSL_FUNC_rand_get_ctx_params_fn noop_std_get_ctx_params;

static int noop_std_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
    OSSL_PARAM *p = OSSL_PARAM_locate(params, OSSL_RAND_PARAM_MAX_REQUEST);

    (void)vctx;
    return p == NULL || OSSL_PARAM_set_size_t(p, (size_t)1 << 20);
}

/* The two tables differ only in their get_ctx_params. */
static const OSSL_DISPATCH noop_rand_functions[] = {
    { OSSL_FUNC_RAND_NEWCTX, (void (*)(void))noop_newctx },
    { OSSL_FUNC_RAND_FREECTX, (void (*)(void))noop_freectx },
    { OSSL_FUNC_RAND_INSTANTIATE, (void (*)(void))noop_instantiate },
    { OSSL_FUNC_RAND_UNINSTANTIATE, (void (*)(void))noop_uninstantiate },
    { OSSL_FUNC_RAND_GENERATE, (void (*)(void))noop_generate },
    { OSSL_FUNC_RAND_ENABLE_LOCKING, (void (*)(void))noop_enable_locking },
    { OSSL_FUNC_RAND_LOCK, (void (*)(void))noop_lock },
    { OSSL_FUNC_RAND_UNLOCK, (void (*)(void))noop_unlock },
    { OSSL_FUNC_RAND_GETTABLE_CTX_PARAMS,
      (void (*)(void))noop_gettable_ctx_params },
    { OSSL_FUNC_RAND_GET_CTX_PARAMS, (void (*)(void))noop_get_ctx_params },
    { 0, NULL },
};

static const OSSL_DISPATCH noop_std_rand_functions[] = {
    { OSSL_FUNC_RAND_NEWCTX, (void (*)(void))noop_newctx },
    { OSSL_FUNC_RAND_FREECTX, (void (*)(void))noop_freectx },
    { OSSL_FUNC_RAND_INSTANTIATE, (void (*)(void))noop_instantiate },
    { OSSL_FUNC_RAND_UNINSTANTIATE, (void (*)(void))noop_uninstantiate },
    { OSSL_FUNC_RAND_GENERATE, (void (*)(void))noop_generate },
    { OSSL_FUNC_RAND_ENABLE_LOCKING, (void (*)(void))noop_enable_locking },
    { OSSL_FUNC_RAND_LOCK, (void (*)(void))noop_lock },
    { OSSL_FUNC_RAND_UNLOCK, (void (*)(void))noop_unlock },
    { OSSL_FUNC_RAND_GETTABLE_CTX_PARAMS,
      (void (*)(void))noop_gettable_ctx_params },
    { OSSL_FUNC_RAND_GET_CTX_PARAMS, (void (*)(void))noop_std_get_ctx_params },
    { 0, NULL },
};

static const OSSL_ALGORITHM noop_rands[] = {
    { "NOOP-RAND", "provider=" NOOP_PROVIDER, noop_rand_functions,
      "an EVP_RAND that does nothing, for benchmarks" },
    { "NOOP-RAND-STD", "provider=" NOOP_PROVIDER, noop_std_rand_functions,
      "NOOP-RAND answering max_request with OSSL_PARAM_locate" },
    { NULL, NULL, NULL, NULL },
};

static const OSSL_ALGORITHM *noop_query(void *provctx, int operation_id,
                                        int *no_cache)
{
    (void)provctx;
    *no_cache = 0;
    return operation_id == OSSL_OP_RAND ? noop_rands : NULL;
}

static const OSSL_DISPATCH noop_provider_functions[] = {
    { OSSL_FUNC_PROVIDER_QUERY_OPERATION, (void (*)(void))noop_query },
    { 0, NULL },
};

static int noop_provider_init(const OSSL_CORE_HANDLE *handle,
                              const OSSL_DISPATCH *in,
                              const OSSL_DISPATCH **out, void **provctx)
{
    (void)handle;
    (void)in;
    *out = noop_provider_functions;
    *provctx = &noop_ctx_dummy;
    return 1;
}

EVP_RAND_CTX *bench_noop_ctx(OSSL_LIB_CTX *libctx, const char *name, char *err,
                             size_t n)
{
    EVP_RAND *rand;
    EVP_RAND_CTX *ctx;

    if (!OSSL_PROVIDER_available(libctx, NOOP_PROVIDER)
        && (!OSSL_PROVIDER_add_builtin(libctx, NOOP_PROVIDER,
                                       noop_provider_init)
            || OSSL_PROVIDER_load(libctx, NOOP_PROVIDER) == NULL)) {
        snprintf(err, n, "loading the built-in %s provider failed",
                 NOOP_PROVIDER);
        ERR_clear_error();
        return NULL;
    }
    rand = EVP_RAND_fetch(libctx, name, "provider=" NOOP_PROVIDER);
    ctx = rand != NULL ? EVP_RAND_CTX_new(rand, NULL) : NULL;
    EVP_RAND_free(rand);
    if (ctx == NULL || !EVP_RAND_instantiate(ctx, 256, 0, NULL, 0, NULL)) {
        snprintf(err, n, "%s set-up failed", name);
        EVP_RAND_CTX_free(ctx);
        ERR_clear_error();
        return NULL;
    }
    return ctx;
}
