/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared helpers for the tests that drive chacharng through libcrypto.
 *
 * Every test builds its own OSSL_LIB_CTX with the "default" provider (for
 * TEST-RAND, the deterministic parent) and "chacharng" loaded, so nothing
 * depends on the system's openssl.cnf.  The module is found through
 * OPENSSL_MODULES, which the test environment points at the build tree.
 */
#ifndef CHACHARNG_PROVUTIL_H
#define CHACHARNG_PROVUTIL_H

#include <stddef.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/provider.h>

#include "base.h"
#include "random_provider.h" /* its dispatch id and function type */

/* The names the product registers (provider/base.h). */
#define PU_PROVIDER CHACHARNG_NAME
#define PU_ALG CHACHARNG_ALG_NAME
#define PU_PROPQ "provider=" CHACHARNG_NAME
#define PU_STRENGTH 256u
#define PU_SEED_BYTES 48 /* entropy per (re)seed, DESIGN.md section 3 */

struct pu_env {
    OSSL_LIB_CTX *libctx;
    OSSL_PROVIDER *deflt; /* "default": TEST-RAND */
    OSSL_PROVIDER *prov;  /* "chacharng" */
    EVP_RAND *rand;       /* CHACHA20-DRBG from chacharng */
    EVP_RAND *test_rand;  /* TEST-RAND from default */
};

/*
 * Create a fresh library context, load both providers and fetch both
 * algorithms.  Returns 1 on success; on failure prints the OpenSSL error
 * queue as diagnostics, frees what was made and returns 0.
 */
int pu_env_init(struct pu_env *env);

/*
 * As pu_env_init(), with "chacharng" registered first as a built-in
 * provider started by |init| (when not NULL), which then takes the place
 * of the module: a test wraps the module's own OSSL_provider_init to edit
 * what the core offers it.
 */
int pu_env_init_builtin(struct pu_env *env, OSSL_provider_init_fn *init);
void pu_env_free(struct pu_env *env);

/*
 * An instantiated TEST-RAND whose get_seed hands out |seed| (|seedlen|
 * bytes, may be 0) and which reports |strength|.  NULL on failure.
 */
EVP_RAND_CTX *pu_test_parent(struct pu_env *env, unsigned int strength,
                             const unsigned char *seed, size_t seedlen);

/* Replace a TEST-RAND's seed bytes.  Returns 1 on success. */
int pu_test_parent_set_seed(EVP_RAND_CTX *parent, const unsigned char *seed,
                            size_t seedlen);

/* A new, uninstantiated CHACHA20-DRBG context (|parent| may be NULL). */
EVP_RAND_CTX *pu_drbg_new(struct pu_env *env, EVP_RAND_CTX *parent);

/* As pu_drbg_new(), then instantiated at strength 256 with no pers. */
EVP_RAND_CTX *pu_drbg_ready(struct pu_env *env, EVP_RAND_CTX *parent);

/*
 * Turn kernel mixing off in |ctx| (which may be NULL), for tests that
 * compare output streams: those must not depend on CHACHARNG_KERNEL_MIX or
 * on what `auto` picks here.  Returns |ctx|, or NULL (freeing it) if the
 * provider refused.
 */
EVP_RAND_CTX *pu_mix_off(EVP_RAND_CTX *ctx);

/*
 * Read one context parameter as the given C type.  Each returns 1 only if
 * the get call succeeded *and* the provider actually wrote the value (a
 * provider that ignores the key must not pass as "value 0").
 */
int pu_get_int(EVP_RAND_CTX *ctx, const char *key, int *val);
int pu_get_uint(EVP_RAND_CTX *ctx, const char *key, unsigned int *val);
int pu_get_size_t(EVP_RAND_CTX *ctx, const char *key, size_t *val);
int pu_get_time_t(EVP_RAND_CTX *ctx, const char *key, time_t *val);
int pu_get_utf8(EVP_RAND_CTX *ctx, const char *key, char *buf, size_t buflen);

/* Set one context parameter given as the named C type; returns the result. */
int pu_set_int(EVP_RAND_CTX *ctx, const char *key, int val);
int pu_set_uint(EVP_RAND_CTX *ctx, const char *key, unsigned int val);
int pu_set_size_t(EVP_RAND_CTX *ctx, const char *key, size_t val);
int pu_set_time_t(EVP_RAND_CTX *ctx, const char *key, time_t val);
int pu_set_utf8(EVP_RAND_CTX *ctx, const char *key, const char *val);

/*
 * Drain the calling thread's error queue.  Returns 1 if it held at least
 * one entry raised by chacharng itself: library name "chacharng" and a
 * non-empty reason string registered by the provider.  Every entry is
 * printed as a diagnostic when |verbose| is set.
 */
int pu_err_from_provider(int verbose);

/* Drop whatever is on the error queue (before a call whose errors we test). */
void pu_err_clear(void);

/* Fill |buf| with a deterministic pattern that depends on |tag|. */
void pu_pattern(unsigned char *buf, size_t len, unsigned int tag);

/* 1 if every byte of |buf| equals |byte|. */
int pu_all_bytes(const unsigned char *buf, size_t len, unsigned char byte);

#endif
