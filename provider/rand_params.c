/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CHACHA20-DRBG context parameters.  Types follow OpenSSL's own DRBGs so
 * that libcrypto and applications can read them the same way.  Unknown keys
 * are ignored (libcrypto sends cipher/digest/properties depending on the
 * version); a known key with missing data, a wrong type, an unusable size
 * or an out-of-range value fails the whole call with an error and changes
 * nothing.  Strings are read within their data_size.  An answer the
 * caller's buffer cannot take fails with return_size set.
 */
#include <stdint.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "kmix.h"
#include "max_request.h"
#include "rand_local.h"
#include "rand_params.h"
#include "reasons.h"

#define PARAM_IMPL "impl"
/* Longer than any kernel's name: how far a NUL-terminated impl is read. */
#define IMPL_NAME_BOUND 16

/* ------------------------------------------------------------------------
 * Kernel mixing (DESIGN.md section 3): `kernel_mix`, an int 0 or 1, is
 * settable and gettable; `kernel_mix_failures`, a uint, counts the kernel
 * reads that failed, so that a forced `on` never falls back unseen.
 * ------------------------------------------------------------------------ */
#define PARAM_KERNEL_MIX "kernel_mix"
#define PARAM_KERNEL_MIX_FAILURES "kernel_mix_failures"

static int get_ctx_params_slow(CHACHARNG_RAND_CTX *ctx, OSSL_PARAM params[])
    __attribute__((noinline));

int chacharng_rand_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
    OSSL_PARAM *p = params;
    const char *key;

    /* EVP's query is answered by a leaf with no frame */
    if (p != NULL && (key = p[0].key) != NULL && p[1].key == NULL
        && p[0].data_type == OSSL_PARAM_UNSIGNED_INTEGER
        && p[0].data_size == sizeof(size_t) && p[0].data != NULL) {
        if (chacharng_max_request_known(key)) {
            chacharng_max_request_answer(p);
            return 1;
        }
        if (chacharng_max_request_is(key))
            return chacharng_max_request_by_text(p);
    }
    return get_ctx_params_slow(vctx, params);
}

/* ------------------------------------------------------------------------
 * Answers: what get_ctx_params writes into the caller's array
 * ------------------------------------------------------------------------ */

/*
 * OSSL_PARAM_set_utf8_string fills a buffer of exactly the string's length
 * and leaves out the NUL; a caller printing it reads past its buffer.
 * That is refused here, as EVP_PKEY_get_utf8_string_param refuses it, with
 * return_size the smallest data_size that works (OSSL_PARAM(3): the
 * minimum size required), so that a caller who allocates what a refusal
 * names succeeds next time.  A size query (NULL data) gets the length
 * without the NUL, as from OpenSSL's own answers.
 */
int chacharng_param_set_utf8(OSSL_PARAM *p, const char *s)
{
    size_t len = strlen(s);

    if (p->data_type == OSSL_PARAM_UTF8_PTR)
        return OSSL_PARAM_set_utf8_ptr(p, s);
    if (p->data_type != OSSL_PARAM_UTF8_STRING)
        return 0;
    p->return_size = len;
    if (p->data == NULL)
        return 1; /* the caller asks for the length */
    if (p->data_size <= len) {
        p->return_size = len + 1;
        return 0;
    }
    memcpy(p->data, s, len + 1);
    return 1;
}

int chacharng_param_refused(const CHACHARNG_PROV_CTX *prov, const OSSL_PARAM *p,
                            const OSSL_PARAM *def)
{
    if (p->data_type != def->data_type)
        CHACHARNG_RAISE(prov, CHACHARNG_R_INVALID_PARAMETER,
                        "%s: a buffer of type %u cannot take the answer, "
                        "of type %u",
                        p->key, p->data_type, def->data_type);
    else
        CHACHARNG_RAISE(prov, CHACHARNG_R_INVALID_PARAMETER,
                        "%s: a buffer of %zu bytes cannot take the answer "
                        "(it needs %zu)",
                        p->key, p->data_size, p->return_size);
    return 0;
}

/* ------------------------------------------------------------------------
 * The gettable parameters, from one table
 *
 * RAND_GETTABLE lists each key with its OSSL_PARAM definition and the
 * function that answers it.  The list gettable_ctx_params returns and the
 * loop in get_ctx_params are both made from it, so they cannot drift
 * apart; keys are answered in the table's order.  OpenSSL's setters used
 * by the answers refuse a buffer of the wrong type or one too small for
 * the value, setting return_size to the size needed; each refusal raises
 * our error too.
 * ------------------------------------------------------------------------ */

typedef int rand_answer_fn(OSSL_PARAM *p, const CHACHARNG_RAND_CTX *ctx);

static int answer_state(OSSL_PARAM *p, const CHACHARNG_RAND_CTX *ctx)
{
    return OSSL_PARAM_set_int(p, ctx->state);
}

static int answer_strength(OSSL_PARAM *p, const CHACHARNG_RAND_CTX *ctx)
{
    return OSSL_PARAM_set_uint(p, CHACHA_DRBG_STRENGTH);
}

static int answer_max_request_slow(OSSL_PARAM *p, const CHACHARNG_RAND_CTX *ctx)
{
    return OSSL_PARAM_set_size_t(p, CHACHARNG_MAX_REQUEST);
}

static int answer_reseed_requests(OSSL_PARAM *p, const CHACHARNG_RAND_CTX *ctx)
{
    unsigned int requests;
    time_t interval;

    chacha_drbg_get_policy(ctx->drbg, &requests, &interval);
    return OSSL_PARAM_set_uint(p, requests);
}

static int answer_reseed_interval(OSSL_PARAM *p, const CHACHARNG_RAND_CTX *ctx)
{
    unsigned int requests;
    time_t interval;

    chacha_drbg_get_policy(ctx->drbg, &requests, &interval);
    return OSSL_PARAM_set_time_t(p, interval);
}

static int answer_reseed_counter(OSSL_PARAM *p, const CHACHARNG_RAND_CTX *ctx)
{
    return OSSL_PARAM_set_uint(p, chacha_drbg_reseed_counter(ctx->drbg));
}

static int answer_reseed_time(OSSL_PARAM *p, const CHACHARNG_RAND_CTX *ctx)
{
    return OSSL_PARAM_set_time_t(p, chacha_drbg_seed_time(ctx->drbg));
}

/* max_perslen and max_adinlen */
static int answer_max_input(OSSL_PARAM *p, const CHACHARNG_RAND_CTX *ctx)
{
    return OSSL_PARAM_set_size_t(p, CHACHARNG_MAX_INPUT);
}

static int answer_impl(OSSL_PARAM *p, const CHACHARNG_RAND_CTX *ctx)
{
    return chacharng_param_set_utf8(p, chacha_drbg_impl(ctx->drbg)->name);
}

static int answer_kernel_mix(OSSL_PARAM *p, const CHACHARNG_RAND_CTX *ctx)
{
    return OSSL_PARAM_set_int(p, chacha_drbg_kernel_mix_on(ctx->drbg));
}

static int answer_kernel_mix_failures(OSSL_PARAM *p,
                                      const CHACHARNG_RAND_CTX *ctx)
{
    return OSSL_PARAM_set_uint(p, chacha_drbg_mix_failures(ctx->drbg));
}

/* X(definition, answer) for every gettable key, in the listed order. */
/* clang-format off */
#define RAND_GETTABLE(X)                                                       \
    X(OSSL_PARAM_int(OSSL_RAND_PARAM_STATE, NULL), answer_state)               \
    X(OSSL_PARAM_uint(OSSL_RAND_PARAM_STRENGTH, NULL), answer_strength)        \
    X(OSSL_PARAM_size_t(OSSL_RAND_PARAM_MAX_REQUEST, NULL),                    \
      answer_max_request_slow)                                                 \
    X(OSSL_PARAM_uint(OSSL_DRBG_PARAM_RESEED_REQUESTS, NULL),                  \
      answer_reseed_requests)                                                  \
    X(OSSL_PARAM_time_t(OSSL_DRBG_PARAM_RESEED_TIME_INTERVAL, NULL),           \
      answer_reseed_interval)                                                  \
    X(OSSL_PARAM_uint(OSSL_DRBG_PARAM_RESEED_COUNTER, NULL),                   \
      answer_reseed_counter)                                                   \
    X(OSSL_PARAM_time_t(OSSL_DRBG_PARAM_RESEED_TIME, NULL),                    \
      answer_reseed_time)                                                      \
    X(OSSL_PARAM_size_t(OSSL_DRBG_PARAM_MAX_PERSLEN, NULL), answer_max_input)  \
    X(OSSL_PARAM_size_t(OSSL_DRBG_PARAM_MAX_ADINLEN, NULL), answer_max_input)  \
    X(OSSL_PARAM_utf8_string(PARAM_IMPL, NULL, 0), answer_impl)                \
    X(OSSL_PARAM_int(PARAM_KERNEL_MIX, NULL), answer_kernel_mix)               \
    X(OSSL_PARAM_uint(PARAM_KERNEL_MIX_FAILURES, NULL),                        \
      answer_kernel_mix_failures)
/* clang-format on */

/* clang-format off */
static const OSSL_PARAM gettable[] = {
    RAND_GETTABLE(CHACHARNG_PARAM_DEFINITION) OSSL_PARAM_END
};
/* clang-format on */

/* clang-format off */
static rand_answer_fn *const gettable_answers[] = {
    RAND_GETTABLE(CHACHARNG_PARAM_HANDLER)
};
/* clang-format on */

static int get_ctx_params_slow(CHACHARNG_RAND_CTX *ctx, OSSL_PARAM params[])
{
    OSSL_PARAM *p;
    size_t i;

    if (params == NULL)
        return 1;
    for (i = 0; i < sizeof(gettable_answers) / sizeof(gettable_answers[0]);
         i++) {
        p = OSSL_PARAM_locate(params, gettable[i].key);
        if (p != NULL && !gettable_answers[i](p, ctx))
            return chacharng_param_refused(ctx->provctx, p, &gettable[i]);
    }
    return 1;
}

/* ------------------------------------------------------------------------
 * Settings: what set_ctx_params (and instantiate) read from the caller
 * ------------------------------------------------------------------------ */

/*
 * A number must carry data: OpenSSL 3.0's getters dereference NULL data
 * and read a data_size of 0 as the value 0 (which would switch a reseed
 * limit off).  Any other size is read within its bounds by OpenSSL.
 */
static int has_number(const CHACHARNG_PROV_CTX *prov, const OSSL_PARAM *p)
{
    if (p->data != NULL && p->data_size != 0)
        return 1;
    CHACHARNG_RAISE(prov, CHACHARNG_R_INVALID_PARAMETER, "%s has %s", p->key,
                    p->data == NULL ? "NULL data" : "data_size 0");
    return 0;
}

int chacharng_param_text(const OSSL_PARAM *p, size_t ptr_bound, const char **s,
                         size_t *len)
{
    size_t bound = p->data_size;

    switch (p->data_type) {
    case OSSL_PARAM_UTF8_STRING:
        *s = p->data;
        break;
    case OSSL_PARAM_UTF8_PTR:
        *s = p->data != NULL ? *(const char *const *)p->data : NULL;
        if (bound == 0)
            bound = ptr_bound;
        break;
    default:
        *s = NULL;
        return 0;
    }
    if (*s == NULL)
        return 0;
    *len = strnlen(*s, bound);
    return 1;
}

/* The impl string of |p| (chacharng_param_text), or an error raised. */
static int impl_text(const CHACHARNG_PROV_CTX *prov, const OSSL_PARAM *p,
                     const char **s, size_t *len)
{
    if (chacharng_param_text(p, IMPL_NAME_BOUND, s, len))
        return 1;
    if (p->data_type != OSSL_PARAM_UTF8_STRING
        && p->data_type != OSSL_PARAM_UTF8_PTR)
        CHACHARNG_RAISE(prov, CHACHARNG_R_INVALID_PARAMETER,
                        "impl must be a UTF8 string (type %u)", p->data_type);
    else
        CHACHARNG_RAISE(prov, CHACHARNG_R_INVALID_PARAMETER,
                        "impl has no string (%s)",
                        p->data == NULL ? "NULL data" : "NULL pointer");
    return 0;
}

/*
 * The settable parameters, from one table as the gettable ones: each key
 * with its definition and the function that validates it into a struct
 * rand_settings.  set_ctx_params reads every key present into a copy of
 * the current settings and commits the copy only when all of them are
 * valid, so a failure changes nothing.  Each reader returns 1, or 0 with
 * an error raised.
 */
struct rand_settings {
    unsigned int reseed_requests;
    time_t reseed_interval;
    const struct chacha_impl *impl;
    int kernel_mix;
};

typedef int rand_setting_fn(const CHACHARNG_PROV_CTX *prov, const OSSL_PARAM *p,
                            struct rand_settings *to);

static int read_reseed_requests(const CHACHARNG_PROV_CTX *prov,
                                const OSSL_PARAM *p, struct rand_settings *to)
{
    if (!has_number(prov, p))
        return 0;
    if (!OSSL_PARAM_get_uint(p, &to->reseed_requests)) {
        CHACHARNG_RAISE(prov, CHACHARNG_R_INVALID_PARAMETER,
                        "%s must be an unsigned int", p->key);
        return 0;
    }
    return 1;
}

static int read_reseed_interval(const CHACHARNG_PROV_CTX *prov,
                                const OSSL_PARAM *p, struct rand_settings *to)
{
    if (!has_number(prov, p))
        return 0;
    if (!OSSL_PARAM_get_time_t(p, &to->reseed_interval)
        || to->reseed_interval < 0) {
        CHACHARNG_RAISE(prov, CHACHARNG_R_INVALID_PARAMETER,
                        "%s must be a non-negative time_t", p->key);
        return 0;
    }
    return 1;
}

static int read_impl(const CHACHARNG_PROV_CTX *prov, const OSSL_PARAM *p,
                     struct rand_settings *to)
{
    const struct chacha_impl *impl;
    const char *s;
    size_t len;

    if (!impl_text(prov, p, &s, &len)
        || (impl = chacharng_impl_find(prov, PARAM_IMPL, s, len)) == NULL)
        return 0;
    to->impl = impl;
    return 1;
}

static int read_kernel_mix(const CHACHARNG_PROV_CTX *prov, const OSSL_PARAM *p,
                           struct rand_settings *to)
{
    int v;

    if (!has_number(prov, p))
        return 0;
    if (!OSSL_PARAM_get_int(p, &v) || (v != 0 && v != 1)) {
        CHACHARNG_RAISE(prov, CHACHARNG_R_INVALID_PARAMETER,
                        "%s must be an int, 0 or 1", p->key);
        return 0;
    }
    to->kernel_mix = v;
    return 1;
}

/* X(definition, reader) for every settable key, in the listed order. */
/* clang-format off */
#define RAND_SETTABLE(X)                                                       \
    X(OSSL_PARAM_uint(OSSL_DRBG_PARAM_RESEED_REQUESTS, NULL),                  \
      read_reseed_requests)                                                    \
    X(OSSL_PARAM_time_t(OSSL_DRBG_PARAM_RESEED_TIME_INTERVAL, NULL),           \
      read_reseed_interval)                                                    \
    X(OSSL_PARAM_utf8_string(PARAM_IMPL, NULL, 0), read_impl)                  \
    X(OSSL_PARAM_int(PARAM_KERNEL_MIX, NULL), read_kernel_mix)
/* clang-format on */

/* clang-format off */
static const OSSL_PARAM settable[] = {
    RAND_SETTABLE(CHACHARNG_PARAM_DEFINITION) OSSL_PARAM_END
};
/* clang-format on */

/* clang-format off */
static rand_setting_fn *const settable_readers[] = {
    RAND_SETTABLE(CHACHARNG_PARAM_HANDLER)
};
/* clang-format on */

int chacharng_rand_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
    CHACHARNG_RAND_CTX *ctx = vctx;
    struct rand_settings to;
    const OSSL_PARAM *p;
    size_t i;

    if (params == NULL)
        return 1;
    chacha_drbg_get_policy(ctx->drbg, &to.reseed_requests, &to.reseed_interval);
    to.impl = chacha_drbg_impl(ctx->drbg);
    to.kernel_mix = chacha_drbg_kernel_mix_on(ctx->drbg);
    /* validate everything first, so a failure changes nothing */
    for (i = 0; i < sizeof(settable_readers) / sizeof(settable_readers[0]);
         i++) {
        p = OSSL_PARAM_locate_const(params, settable[i].key);
        if (p != NULL && !settable_readers[i](ctx->provctx, p, &to))
            return 0;
    }
    chacha_drbg_set_policy(ctx->drbg, to.reseed_requests, to.reseed_interval);
    chacha_drbg_set_impl(ctx->drbg, to.impl);
    chacha_drbg_set_kernel_mix(ctx->drbg,
                               to.kernel_mix ? &chacha_kmix_mixer : NULL);
    return 1;
}

const OSSL_PARAM *chacharng_rand_gettable_ctx_params(void *vctx, void *provctx)
{
    return gettable;
}

const OSSL_PARAM *chacharng_rand_settable_ctx_params(void *vctx, void *provctx)
{
    return settable;
}
