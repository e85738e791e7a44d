/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Provider entry, the top floor: OSSL_provider_init, the algorithm query,
 * provider params, error reasons and teardown.  What every file shares is
 * in base.c.  The kernel is chosen here, once: detect the CPU, apply
 * the `impl` config key or the CHACHARNG_IMPL environment variable (which
 * wins), self-test the choice against RFC 8439, and refuse to load if a
 * forced kernel is missing or any kernel fails.  Both settings are read
 * once (settings.c) and applied here and in kmix.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/params.h>

#include "config.h"
#include "base.h"
#include "debug.h"
#include "kmix.h"
#include "kmix_choice.h"
#include "library_rng.h"
#include "rand.h"
#include "rand_params.h"
#include "random_provider.h"
#include "reasons.h"
#include "settings.h"
#include "statepool.h"

static OSSL_FUNC_provider_gettable_params_fn chacharng_prov_gettable_params;
static OSSL_FUNC_provider_get_params_fn chacharng_prov_get_params;
static OSSL_FUNC_provider_query_operation_fn chacharng_prov_query;
static OSSL_FUNC_provider_get_reason_strings_fn chacharng_prov_reasons;
static OSSL_FUNC_provider_teardown_fn chacharng_prov_teardown;

/* ------------------------------------------------------------------------
 * Errors: the reason strings (base.c raises them)
 * ------------------------------------------------------------------------ */

/* OpenSSL prints the library name, "chacharng", before each of these. */
static const OSSL_ITEM reason_strings[] = {
    { CHACHARNG_R_NOT_INSTANTIATED, "DRBG not instantiated" },
    { CHACHARNG_R_ALREADY_INSTANTIATED, "DRBG already instantiated" },
    { CHACHARNG_R_IN_ERROR_STATE, "DRBG in error state" },
    { CHACHARNG_R_STRENGTH_TOO_HIGH, "requested strength above 256 bits" },
    { CHACHARNG_R_PERSONALISATION_TOO_LONG, "personalization string too long" },
    { CHACHARNG_R_ADDITIONAL_INPUT_TOO_LONG, "additional input too long" },
    { CHACHARNG_R_ENTROPY_INPUT_TOO_LONG, "entropy input too long" },
    { CHACHARNG_R_REQUEST_TOO_LARGE, "request larger than max_request" },
    { CHACHARNG_R_PARENT_STRENGTH_TOO_LOW, "parent strength below 256 bits" },
    { CHACHARNG_R_ENTROPY_SOURCE_FAILED, "entropy source failed" },
    { CHACHARNG_R_INVALID_PARAMETER, "invalid parameter value" },
    { CHACHARNG_R_UNKNOWN_IMPL, "unknown ChaCha20 kernel" },
    { CHACHARNG_R_IMPL_NOT_SUPPORTED, "ChaCha20 kernel not supported here" },
    { CHACHARNG_R_SELFTEST_FAILED, "ChaCha20 kernel self-test failed" },
    { CHACHARNG_R_OUT_OF_MEMORY, "out of memory" },
    { CHACHARNG_R_PARENT_LOCKING_FAILED, "parent could not enable locking" },
    { 0, NULL }
};

static const OSSL_ITEM *chacharng_prov_reasons(void *provctx)
{
    return reason_strings;
}

/* ------------------------------------------------------------------------
 * The algorithm query and provider parameters
 * ------------------------------------------------------------------------ */

static const OSSL_ALGORITHM rand_algorithms[] = {
    { CHACHARNG_ALG_NAME, CHACHARNG_ALG_PROPS, chacharng_rand_functions,
      "arc4random-style ChaCha20 DRBG with fast key erasure" },
    { NULL, NULL, NULL, NULL }
};

static const OSSL_ALGORITHM *
chacharng_prov_query(void *provctx, int operation_id, int *no_cache)
{
    if (operation_id != OSSL_OP_RAND) {
        *no_cache = 0;
        return NULL;
    }
    (void)provctx;
    *no_cache = 0;
    return rand_algorithms;
}

/*
 * The provider's gettable parameters, from one table as in rand_params.c:
 * PROV_GETTABLE gives both the list and the answers, in that order.
 */
typedef int prov_answer_fn(OSSL_PARAM *p, const CHACHARNG_PROV_CTX *prov);

static int answer_name(OSSL_PARAM *p, const CHACHARNG_PROV_CTX *prov)
{
    return chacharng_param_set_utf8(p, CHACHARNG_NAME);
}

static int answer_version(OSSL_PARAM *p, const CHACHARNG_PROV_CTX *prov)
{
    return chacharng_param_set_utf8(p, PACKAGE_VERSION);
}

static int answer_buildinfo(OSSL_PARAM *p, const CHACHARNG_PROV_CTX *prov)
{
    return chacharng_param_set_utf8(p, chacharng_buildinfo());
}

static int answer_status(OSSL_PARAM *p, const CHACHARNG_PROV_CTX *prov)
{
    return OSSL_PARAM_set_int(p, 1);
}

static int answer_impl(OSSL_PARAM *p, const CHACHARNG_PROV_CTX *prov)
{
    return chacharng_param_set_utf8(p, prov->impl->name);
}

/* X(definition, answer) for every gettable key, in the listed order. */
/* clang-format off */
#define PROV_GETTABLE(X)                                                       \
    X(OSSL_PARAM_DEFN(OSSL_PROV_PARAM_NAME, OSSL_PARAM_UTF8_PTR, NULL, 0),     \
      answer_name)                                                             \
    X(OSSL_PARAM_DEFN(OSSL_PROV_PARAM_VERSION, OSSL_PARAM_UTF8_PTR, NULL, 0),  \
      answer_version)                                                          \
    X(OSSL_PARAM_DEFN(OSSL_PROV_PARAM_BUILDINFO, OSSL_PARAM_UTF8_PTR, NULL,    \
                      0),                                                      \
      answer_buildinfo)                                                        \
    X(OSSL_PARAM_DEFN(OSSL_PROV_PARAM_STATUS, OSSL_PARAM_INTEGER, NULL, 0),    \
      answer_status)                                                           \
    X(OSSL_PARAM_DEFN("impl", OSSL_PARAM_UTF8_PTR, NULL, 0), answer_impl)
/* clang-format on */

/* clang-format off */
static const OSSL_PARAM prov_gettable[] = {
    PROV_GETTABLE(CHACHARNG_PARAM_DEFINITION) OSSL_PARAM_END
};
/* clang-format on */

/* clang-format off */
static prov_answer_fn *const prov_gettable_answers[] = {
    PROV_GETTABLE(CHACHARNG_PARAM_HANDLER)
};
/* clang-format on */

static const OSSL_PARAM *chacharng_prov_gettable_params(void *provctx)
{
    return prov_gettable;
}

static int chacharng_prov_get_params(void *vprov, OSSL_PARAM params[])
{
    const CHACHARNG_PROV_CTX *prov = vprov;
    OSSL_PARAM *p;
    size_t i;

    for (i = 0;
         i < sizeof(prov_gettable_answers) / sizeof(prov_gettable_answers[0]);
         i++) {
        p = OSSL_PARAM_locate(params, prov_gettable[i].key);
        if (p != NULL && !prov_gettable_answers[i](p, prov))
            return chacharng_param_refused(prov, p, &prov_gettable[i]);
    }
    return 1;
}

static void chacharng_prov_teardown(void *vprov)
{
    chacharng_library_rng_teardown(vprov);
    chacharng_random_teardown(vprov);
    /* every state of this instance is back in the pool: unmap idle chunks */
    chacha_pool_trim();
    chacha_kmix_trim();
    free(vprov);
}

static const OSSL_DISPATCH prov_functions[] = {
    { OSSL_FUNC_PROVIDER_TEARDOWN, (void (*)(void))chacharng_prov_teardown },
    { OSSL_FUNC_PROVIDER_GETTABLE_PARAMS,
      (void (*)(void))chacharng_prov_gettable_params },
    { OSSL_FUNC_PROVIDER_GET_PARAMS,
      (void (*)(void))chacharng_prov_get_params },
    { OSSL_FUNC_PROVIDER_QUERY_OPERATION,
      (void (*)(void))chacharng_prov_query },
    { OSSL_FUNC_PROVIDER_GET_REASON_STRINGS,
      (void (*)(void))chacharng_prov_reasons },
    { OSSL_FUNC_PROVIDER_RANDOM_BYTES, (void (*)(void))chacharng_random_bytes },
    { 0, NULL }
};

/* ------------------------------------------------------------------------
 * Load: the kernel, kernel mixing, and OSSL_provider_init
 * ------------------------------------------------------------------------ */

/*
 * Pick the kernel: a forced one must exist in this build and run on this
 * CPU, else loading fails; otherwise the best supported.  Returns 1 on
 * success, 0 with an error raised.
 */
static int choose_impl(CHACHARNG_PROV_CTX *prov,
                       const struct chacharng_setting *set)
{
    const char *name = set->value;
    const struct chacha_impl *impl;

    if (name != NULL) {
        impl = chacharng_impl_find(prov, set->origin, name, strlen(name));
        if (impl == NULL)
            return 0;
    } else {
        impl = chacha_impl_best();
    }
    if (!chacha_impl_selftest(impl)) {
        CHACHARNG_RAISE(prov, CHACHARNG_R_SELFTEST_FAILED,
                        "kernel %s gives wrong RFC 8439 output", impl->name);
        return 0;
    }
    prov->impl = impl;
    CHACHARNG_DEBUG_LOG("using the %s ChaCha20 kernel", impl->name);
    return 1;
}

__attribute__((visibility("default"))) int
OSSL_provider_init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
                   const OSSL_DISPATCH **out, void **provctx)
{
    CHACHARNG_PROV_CTX *prov = calloc(1, sizeof(*prov));
    chacharng_get_entropy_fn *get_entropy = NULL, *get_user_entropy = NULL;
    chacharng_cleanup_entropy_fn *cleanup = NULL, *cleanup_user = NULL;
    struct chacharng_settings settings;

    chacharng_debug_init();
    if (prov == NULL)
        return 0;
    prov->handle = handle;
#define CORE_FN(name, id)                                                      \
    OSSL_FUNC_core_##name(chacharng_dispatch_find(in, OSSL_FUNC_CORE_##id))
#define ENTROPY_FN(type, id)                                                   \
    ((chacharng_##type##_fn *)chacharng_dispatch_find(in, OSSL_FUNC_##id)      \
         ->function)
    prov->core_get_params = CORE_FN(get_params, GET_PARAMS);
    prov->core_new_error = CORE_FN(new_error, NEW_ERROR);
    prov->core_set_error_debug = CORE_FN(set_error_debug, SET_ERROR_DEBUG);
    prov->core_vset_error = CORE_FN(vset_error, VSET_ERROR);
    get_entropy = ENTROPY_FN(get_entropy, GET_ENTROPY);
    cleanup = ENTROPY_FN(cleanup_entropy, CLEANUP_ENTROPY);
    get_user_entropy = ENTROPY_FN(get_entropy, GET_USER_ENTROPY);
    cleanup_user = ENTROPY_FN(cleanup_entropy, CLEANUP_USER_ENTROPY);
#undef CORE_FN
#undef ENTROPY_FN
    /* the user-entropy pair honours a configured seed source (3.1.4+) */
    if (get_user_entropy != NULL && cleanup_user != NULL) {
        prov->get_entropy = get_user_entropy;
        prov->cleanup_entropy = cleanup_user;
    } else if (get_entropy != NULL && cleanup != NULL) {
        prov->get_entropy = get_entropy;
        prov->cleanup_entropy = cleanup;
    }

    chacharng_settings_read(prov, &settings);
    if (!choose_impl(prov, &settings.impl)
        || !chacharng_kmix_choose(prov, &settings.kernel_mix)
        || !chacharng_random_init(prov)) {
        free(prov);
        return 0;
    }
    chacharng_library_rng_init(prov, in);
    *out = prov_functions;
    *provctx = prov;
    return 1;
}
