/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Library context, context construction, parameter and error-queue helpers
 * for the provider tests (see provutil.h).
 */
#include "provutil.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/params.h>

#include "chacha.h"
#include "errq.h"
#include "testutil.h"

/* Print and drop the error queue, so a setup failure explains itself. */
static void dump_errors(void)
{
    (void)pu_err_from_provider(1);
}

int pu_env_init(struct pu_env *env)
{
    return pu_env_init_builtin(env, NULL);
}

int pu_env_init_builtin(struct pu_env *env, OSSL_provider_init_fn *init)
{
    memset(env, 0, sizeof(*env));
    env->libctx = OSSL_LIB_CTX_new();
    if (env->libctx == NULL) {
        tu_diag("OSSL_LIB_CTX_new failed");
        goto err;
    }
    if (init != NULL
        && !OSSL_PROVIDER_add_builtin(env->libctx, PU_PROVIDER, init)) {
        tu_diag("cannot register the built-in %s", PU_PROVIDER);
        goto err;
    }
    env->deflt = OSSL_PROVIDER_load(env->libctx, "default");
    if (env->deflt == NULL) {
        tu_diag("cannot load the default provider");
        goto err;
    }
    env->prov = OSSL_PROVIDER_load(env->libctx, PU_PROVIDER);
    if (env->prov == NULL) {
        tu_diag("cannot load provider %s (OPENSSL_MODULES=%s)", PU_PROVIDER,
                getenv("OPENSSL_MODULES") != NULL ? getenv("OPENSSL_MODULES")
                                                  : "(unset)");
        goto err;
    }
    env->rand = EVP_RAND_fetch(env->libctx, PU_ALG, PU_PROPQ);
    if (env->rand == NULL) {
        tu_diag("cannot fetch %s with \"%s\"", PU_ALG, PU_PROPQ);
        goto err;
    }
    env->test_rand =
        EVP_RAND_fetch(env->libctx, "TEST-RAND", "provider=default");
    if (env->test_rand == NULL) {
        tu_diag("cannot fetch TEST-RAND from the default provider");
        goto err;
    }
    return 1;

err:
    dump_errors();
    pu_env_free(env);
    return 0;
}

void pu_env_free(struct pu_env *env)
{
    EVP_RAND_free(env->test_rand);
    EVP_RAND_free(env->rand);
    if (env->prov != NULL)
        OSSL_PROVIDER_unload(env->prov);
    if (env->deflt != NULL)
        OSSL_PROVIDER_unload(env->deflt);
    OSSL_LIB_CTX_free(env->libctx);
    memset(env, 0, sizeof(*env));
}

int pu_test_parent_set_seed(EVP_RAND_CTX *parent, const unsigned char *seed,
                            size_t seedlen)
{
    OSSL_PARAM params[2];
    unsigned char *copy;
    int ret;

    /*
     * OSSL_PARAM takes a non-const buffer even for input; TEST-RAND keeps
     * its own copy, so hand it a temporary one instead of casting.
     */
    copy = malloc(seedlen > 0 ? seedlen : 1);
    if (copy == NULL)
        return 0;
    if (seedlen > 0)
        memcpy(copy, seed, seedlen);
    params[0] = OSSL_PARAM_construct_octet_string(OSSL_RAND_PARAM_TEST_ENTROPY,
                                                  copy, seedlen);
    params[1] = OSSL_PARAM_construct_end();
    ret = EVP_RAND_CTX_set_params(parent, params);
    free(copy);
    return ret;
}

EVP_RAND_CTX *pu_test_parent(struct pu_env *env, unsigned int strength,
                             const unsigned char *seed, size_t seedlen)
{
    EVP_RAND_CTX *parent;
    OSSL_PARAM params[2];

    parent = EVP_RAND_CTX_new(env->test_rand, NULL);
    if (parent == NULL)
        return NULL;
    params[0] = OSSL_PARAM_construct_uint(OSSL_RAND_PARAM_STRENGTH, &strength);
    params[1] = OSSL_PARAM_construct_end();
    if (!EVP_RAND_CTX_set_params(parent, params)
        || !pu_test_parent_set_seed(parent, seed, seedlen)
        || !EVP_RAND_instantiate(parent, 0, 0, NULL, 0, NULL)) {
        dump_errors();
        EVP_RAND_CTX_free(parent);
        return NULL;
    }
    return parent;
}

EVP_RAND_CTX *pu_drbg_new(struct pu_env *env, EVP_RAND_CTX *parent)
{
    EVP_RAND_CTX *ctx = EVP_RAND_CTX_new(env->rand, parent);

    if (ctx == NULL)
        dump_errors();
    return ctx;
}

EVP_RAND_CTX *pu_drbg_ready(struct pu_env *env, EVP_RAND_CTX *parent)
{
    EVP_RAND_CTX *ctx = pu_drbg_new(env, parent);

    if (ctx == NULL)
        return NULL;
    if (!EVP_RAND_instantiate(ctx, PU_STRENGTH, 0, NULL, 0, NULL)) {
        dump_errors();
        EVP_RAND_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

EVP_RAND_CTX *pu_mix_off(EVP_RAND_CTX *ctx)
{
    if (ctx != NULL && !pu_set_int(ctx, "kernel_mix", 0)) {
        dump_errors();
        EVP_RAND_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

/* Run a one-element get and insist that the provider filled it in. */
static int get_one(EVP_RAND_CTX *ctx, OSSL_PARAM *p)
{
    OSSL_PARAM params[2];

    params[0] = *p;
    params[1] = OSSL_PARAM_construct_end();
    if (!EVP_RAND_CTX_get_params(ctx, params))
        return 0;
    return OSSL_PARAM_modified(&params[0]);
}

int pu_get_int(EVP_RAND_CTX *ctx, const char *key, int *val)
{
    OSSL_PARAM p = OSSL_PARAM_construct_int(key, val);

    return get_one(ctx, &p);
}

int pu_get_uint(EVP_RAND_CTX *ctx, const char *key, unsigned int *val)
{
    OSSL_PARAM p = OSSL_PARAM_construct_uint(key, val);

    return get_one(ctx, &p);
}

int pu_get_size_t(EVP_RAND_CTX *ctx, const char *key, size_t *val)
{
    OSSL_PARAM p = OSSL_PARAM_construct_size_t(key, val);

    return get_one(ctx, &p);
}

int pu_get_time_t(EVP_RAND_CTX *ctx, const char *key, time_t *val)
{
    OSSL_PARAM p = OSSL_PARAM_construct_time_t(key, val);

    return get_one(ctx, &p);
}

int pu_get_utf8(EVP_RAND_CTX *ctx, const char *key, char *buf, size_t buflen)
{
    OSSL_PARAM p;

    if (buflen == 0)
        return 0;
    memset(buf, 0, buflen);
    p = OSSL_PARAM_construct_utf8_string(key, buf, buflen);
    /* keep room for a terminator whatever the provider writes */
    p.data_size = buflen - 1;
    return get_one(ctx, &p);
}

static int set_one(EVP_RAND_CTX *ctx, OSSL_PARAM p)
{
    OSSL_PARAM params[2];

    params[0] = p;
    params[1] = OSSL_PARAM_construct_end();
    return EVP_RAND_CTX_set_params(ctx, params);
}

int pu_set_int(EVP_RAND_CTX *ctx, const char *key, int val)
{
    return set_one(ctx, OSSL_PARAM_construct_int(key, &val));
}

int pu_set_uint(EVP_RAND_CTX *ctx, const char *key, unsigned int val)
{
    return set_one(ctx, OSSL_PARAM_construct_uint(key, &val));
}

int pu_set_size_t(EVP_RAND_CTX *ctx, const char *key, size_t val)
{
    return set_one(ctx, OSSL_PARAM_construct_size_t(key, &val));
}

int pu_set_time_t(EVP_RAND_CTX *ctx, const char *key, time_t val)
{
    return set_one(ctx, OSSL_PARAM_construct_time_t(key, &val));
}

int pu_set_utf8(EVP_RAND_CTX *ctx, const char *key, const char *val)
{
    /*
     * The OSSL_PARAM API takes a non-const buffer even for input; the
     * provider only reads it.  Copy rather than cast the const away.
     */
    char buf[256];
    size_t len = strlen(val);

    if (len >= sizeof(buf))
        return 0;
    memcpy(buf, val, len + 1);
    return set_one(ctx, OSSL_PARAM_construct_utf8_string(key, buf, len));
}

int pu_err_from_provider(int verbose)
{
    return tu_err_find(PU_PROVIDER, "", NULL,
                       TU_ERR_QUIET | (verbose ? TU_ERR_VERBOSE : 0u));
}

void pu_err_clear(void)
{
    ERR_clear_error();
}

void pu_pattern(unsigned char *buf, size_t len, unsigned int tag)
{
    uint32_t x = 0x9e3779b9u ^ (tag * 0x85ebca6bu);
    size_t i;

    /* xorshift32: cheap, deterministic, never all-zero */
    for (i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        buf[i] = (unsigned char)(x >> 24);
    }
}

int pu_all_bytes(const unsigned char *buf, size_t len, unsigned char byte)
{
    size_t i;

    for (i = 0; i < len; i++)
        if (buf[i] != byte)
            return 0;
    return 1;
}
