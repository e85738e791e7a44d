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
#define _GNU_SOURCE /* dl_iterate_phdr */

#include <link.h>
#include <stdint.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "prov.h"

#define PARAM_IMPL "impl"
/* Longer than any kernel's name: how far a NUL-terminated impl is read. */
#define IMPL_NAME_BOUND 16

/* ------------------------------------------------------------------------
 * The max_request shortcut
 *
 * EVP_RAND_generate asks for max_request alone, as a size_t, on every
 * call, so that query is answered before anything else, and only for a key
 * whose text is "max_request": a caller may reuse one key buffer for every
 * key.  Comparing that text costs about a tenth of a 4-byte request, so
 * one key is known by its address instead: EVP's, a string literal in
 * libcrypto's read-only data.  Once its text has been checked there, that
 * address holds "max_request" for as long as libcrypto stays mapped, and
 * it stays mapped longer than this module (it is one of its dependencies).
 * ------------------------------------------------------------------------ */

/* How many key addresses are ever looked up in the loader's tables. */
#define RO_LOOKUPS 16

static const char *ro_max_request_key; /* text checked, immutable */
static const char *ro_last_tried;      /* the last address looked up */
static unsigned int ro_lookups;

struct ro_probe {
    uintptr_t key; /* the key's address */
    uintptr_t lib; /* an address inside libcrypto */
    int found;     /* 1: the key lies in a read-only segment of libcrypto */
};

static int find_ro_key(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct ro_probe *pr = arg;
    int i, has_lib = 0, key_ro = 0;

    (void)size;
    for (i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;

        if (ph->p_type != PT_LOAD)
            continue;
        if (pr->lib >= lo && pr->lib < hi)
            has_lib = 1;
        if (pr->key >= lo && pr->key < hi
            && hi - pr->key >= sizeof(OSSL_RAND_PARAM_MAX_REQUEST))
            key_ro = (ph->p_flags & PF_W) == 0;
    }
    if (!has_lib)
        return 0; /* not libcrypto: go on */
    pr->found = key_ro;
    return 1;
}

/*
 * Until an address is known, remember |key| (whose text is "max_request")
 * if it lies in libcrypto's read-only data; a bounded number of addresses
 * is looked up, so callers with keys of their own never pay for it twice.
 */
static void ro_key_consider(const char *key)
{
    struct ro_probe pr = { (uintptr_t)key, (uintptr_t)&OSSL_PARAM_locate, 0 };

    if (__atomic_load_n(&ro_max_request_key, __ATOMIC_RELAXED) != NULL
        || key == __atomic_load_n(&ro_last_tried, __ATOMIC_RELAXED)
        || __atomic_fetch_add(&ro_lookups, 1, __ATOMIC_RELAXED) >= RO_LOOKUPS)
        return;
    __atomic_store_n(&ro_last_tried, key, __ATOMIC_RELAXED);
    dl_iterate_phdr(find_ro_key, &pr);
    if (pr.found)
        __atomic_store_n(&ro_max_request_key, key, __ATOMIC_RELAXED);
}

static void answer_max_request(OSSL_PARAM *p)
{
    *(size_t *)p->data = CHACHARNG_MAX_REQUEST;
    p->return_size = sizeof(size_t);
}

/* |p|'s key reads "max_request": answer it, and consider its address. */
static __attribute__((noinline)) int answer_by_text(OSSL_PARAM *p)
{
    ro_key_consider(p->key);
    answer_max_request(p);
    return 1;
}

/*
 * 1 if |key| is "max_request".  Byte by byte, stopping at the first
 * difference, so a shorter key is never read past its NUL.
 */
static inline int is_max_request(const char *key)
{
    static const char want[] = OSSL_RAND_PARAM_MAX_REQUEST;
    size_t i;

#pragma GCC unroll 16
    for (i = 0; i < sizeof(want); i++)
        if (key[i] != want[i])
            return 0;
    return 1;
}

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
        if (key == __atomic_load_n(&ro_max_request_key, __ATOMIC_RELAXED)) {
            answer_max_request(p);
            return 1;
        }
        if (is_max_request(key))
            return answer_by_text(p);
    }
    return get_ctx_params_slow(vctx, params);
}

/* ------------------------------------------------------------------------
 * Answers: what get_ctx_params writes into the caller's array
 * ------------------------------------------------------------------------ */

/*
 * OSSL_PARAM_set_utf8_string fills a buffer of exactly the string's length
 * and leaves out the NUL; a caller printing it reads past its buffer.
 * That is refused here, as EVP_PKEY_get_utf8_string_param refuses it.
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
    if (p->data_size <= len)
        return 0;
    memcpy(p->data, s, len + 1);
    return 1;
}

int chacharng_param_refused(const CHACHARNG_PROV_CTX *prov,
                            const OSSL_PARAM *p)
{
    CHACHARNG_RAISE(prov, CHACHARNG_R_INVALID_PARAMETER,
                    "%s: a buffer of type %u and %zu bytes cannot take the "
                    "answer (%zu bytes)",
                    p->key, p->data_type, p->data_size, p->return_size);
    return 0;
}

/*
 * OpenSSL's setters refuse a buffer of the wrong type or one too small for
 * the value, setting return_size to the size needed; each refusal raises
 * our error too.
 */
static int get_ctx_params_slow(CHACHARNG_RAND_CTX *ctx, OSSL_PARAM params[])
{
    const CHACHARNG_PROV_CTX *prov = ctx->provctx;
    OSSL_PARAM *p;
    unsigned int requests;
    time_t interval;

    if (params == NULL)
        return 1;
    chacha_drbg_get_policy(ctx->drbg, &requests, &interval);
    p = OSSL_PARAM_locate(params, OSSL_RAND_PARAM_MAX_REQUEST);
    if (p != NULL && !OSSL_PARAM_set_size_t(p, CHACHARNG_MAX_REQUEST))
        return chacharng_param_refused(prov, p);
    p = OSSL_PARAM_locate(params, OSSL_RAND_PARAM_STATE);
    if (p != NULL && !OSSL_PARAM_set_int(p, ctx->state))
        return chacharng_param_refused(prov, p);
    p = OSSL_PARAM_locate(params, OSSL_RAND_PARAM_STRENGTH);
    if (p != NULL && !OSSL_PARAM_set_uint(p, CHACHA_DRBG_STRENGTH))
        return chacharng_param_refused(prov, p);
    p = OSSL_PARAM_locate(params, OSSL_DRBG_PARAM_RESEED_REQUESTS);
    if (p != NULL && !OSSL_PARAM_set_uint(p, requests))
        return chacharng_param_refused(prov, p);
    p = OSSL_PARAM_locate(params, OSSL_DRBG_PARAM_RESEED_TIME_INTERVAL);
    if (p != NULL && !OSSL_PARAM_set_time_t(p, interval))
        return chacharng_param_refused(prov, p);
    p = OSSL_PARAM_locate(params, OSSL_DRBG_PARAM_RESEED_COUNTER);
    if (p != NULL
        && !OSSL_PARAM_set_uint(p, __atomic_load_n(&ctx->reseed_counter,
                                                   __ATOMIC_RELAXED)))
        return chacharng_param_refused(prov, p);
    p = OSSL_PARAM_locate(params, OSSL_DRBG_PARAM_RESEED_TIME);
    if (p != NULL && !OSSL_PARAM_set_time_t(p, ctx->reseed_time))
        return chacharng_param_refused(prov, p);
    p = OSSL_PARAM_locate(params, OSSL_DRBG_PARAM_MAX_PERSLEN);
    if (p != NULL && !OSSL_PARAM_set_size_t(p, CHACHARNG_MAX_INPUT))
        return chacharng_param_refused(prov, p);
    p = OSSL_PARAM_locate(params, OSSL_DRBG_PARAM_MAX_ADINLEN);
    if (p != NULL && !OSSL_PARAM_set_size_t(p, CHACHARNG_MAX_INPUT))
        return chacharng_param_refused(prov, p);
    p = OSSL_PARAM_locate(params, PARAM_IMPL);
    if (p != NULL
        && !chacharng_param_set_utf8(p, chacha_drbg_impl(ctx->drbg)->name))
        return chacharng_param_refused(prov, p);
    p = OSSL_PARAM_locate(params, PARAM_KERNEL_MIX);
    if (p != NULL
        && !OSSL_PARAM_set_int(p, chacha_drbg_kernel_mix_on(ctx->drbg)))
        return chacharng_param_refused(prov, p);
    p = OSSL_PARAM_locate(params, PARAM_KERNEL_MIX_FAILURES);
    if (p != NULL
        && !OSSL_PARAM_set_uint(p, chacha_drbg_mix_failures(ctx->drbg)))
        return chacharng_param_refused(prov, p);
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

/*
 * The impl string of |p| as |*s| and its length: a UTF8_STRING is its
 * data_size bytes, or fewer up to a NUL (no NUL is needed); a UTF8_PTR
 * points to data_size bytes read the same way, or with data_size 0 to a
 * NUL-terminated string.  Nothing past those bounds is read.
 */
static int impl_text(const CHACHARNG_PROV_CTX *prov, const OSSL_PARAM *p,
                     const char **s, size_t *len)
{
    size_t bound = p->data_size;

    switch (p->data_type) {
    case OSSL_PARAM_UTF8_STRING:
        *s = p->data;
        break;
    case OSSL_PARAM_UTF8_PTR:
        *s = p->data != NULL ? *(const char *const *)p->data : NULL;
        if (bound == 0)
            bound = IMPL_NAME_BOUND;
        break;
    default:
        CHACHARNG_RAISE(prov, CHACHARNG_R_INVALID_PARAMETER,
                        "impl must be a UTF8 string (type %u)", p->data_type);
        return 0;
    }
    if (*s == NULL) {
        CHACHARNG_RAISE(prov, CHACHARNG_R_INVALID_PARAMETER,
                        "impl has no string (%s)",
                        p->data == NULL ? "NULL data" : "NULL pointer");
        return 0;
    }
    *len = strnlen(*s, bound);
    return 1;
}

/* The compiled-in kernel named by the |len| bytes at |s|, or NULL. */
static const struct chacha_impl *impl_by_text(const char *s, size_t len)
{
    const struct chacha_impl *list;
    size_t n, i;

    list = chacha_impl_list(&n);
    for (i = 0; i < n; i++)
        if (strlen(list[i].name) == len && memcmp(list[i].name, s, len) == 0)
            return &list[i];
    return NULL;
}

static int read_impl(const CHACHARNG_PROV_CTX *prov, const OSSL_PARAM *p,
                     const struct chacha_impl **impl)
{
    const char *s;
    size_t len;

    if (!impl_text(prov, p, &s, &len))
        return 0;
    *impl = impl_by_text(s, len);
    if (*impl == NULL) {
        /* at most 32 bytes of a wrong name go into the message */
        CHACHARNG_RAISE(prov, CHACHARNG_R_UNKNOWN_IMPL, "impl=%.*s",
                        len < 32 ? (int)len : 32, s);
        return 0;
    }
    if (!chacha_impl_supported(*impl)) {
        CHACHARNG_RAISE(prov, CHACHARNG_R_IMPL_NOT_SUPPORTED, "impl=%s",
                        (*impl)->name);
        return 0;
    }
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
    if (!has_number(ctx->provctx, p))
        return 0;
    if (!OSSL_PARAM_get_int(p, &v) || (v != 0 && v != 1)) {
        CHACHARNG_RAISE(ctx->provctx, CHACHARNG_R_INVALID_PARAMETER,
                        "%s must be an int, 0 or 1", p->key);
        return 0;
    }
    *on = v;
    return 1;
}

int chacharng_rand_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
    CHACHARNG_RAND_CTX *ctx = vctx;
    const CHACHARNG_PROV_CTX *prov = ctx->provctx;
    const OSSL_PARAM *p;
    unsigned int requests;
    time_t interval;
    const struct chacha_impl *impl = chacha_drbg_impl(ctx->drbg);
    int kernel_mix = chacha_drbg_kernel_mix_on(ctx->drbg);

    if (params == NULL)
        return 1;
    chacha_drbg_get_policy(ctx->drbg, &requests, &interval);
    /* validate everything first, so a failure changes nothing */
    p = OSSL_PARAM_locate_const(params, OSSL_DRBG_PARAM_RESEED_REQUESTS);
    if (p != NULL && !has_number(prov, p))
        return 0;
    if (p != NULL && !OSSL_PARAM_get_uint(p, &requests)) {
        CHACHARNG_RAISE(prov, CHACHARNG_R_INVALID_PARAMETER,
                        "%s must be an unsigned int", p->key);
        return 0;
    }
    p = OSSL_PARAM_locate_const(params, OSSL_DRBG_PARAM_RESEED_TIME_INTERVAL);
    if (p != NULL && !has_number(prov, p))
        return 0;
    if (p != NULL && (!OSSL_PARAM_get_time_t(p, &interval) || interval < 0)) {
        CHACHARNG_RAISE(prov, CHACHARNG_R_INVALID_PARAMETER,
                        "%s must be a non-negative time_t", p->key);
        return 0;
    }
    p = OSSL_PARAM_locate_const(params, PARAM_IMPL);
    if (p != NULL && !read_impl(prov, p, &impl))
        return 0;
    if (!parse_kernel_mix(ctx, params, &kernel_mix))
        return 0;
    chacha_drbg_set_policy(ctx->drbg, requests, interval);
    chacha_drbg_set_impl(ctx->drbg, impl);
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
