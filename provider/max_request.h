/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The max_request shortcut.  EVP_RAND_generate asks for max_request alone,
 * as a size_t, on every call, so get_ctx_params answers that query before
 * anything else, and only for a key whose text is "max_request": a caller
 * may reuse one key buffer for every key.  Comparing that text costs about
 * a tenth of a 4-byte request, so one key is known by its address instead:
 * EVP's, a string literal in libcrypto's read-only data.  Once its text
 * has been checked there, that address holds "max_request" for as long as
 * libcrypto stays mapped, and it stays mapped longer than this module (it
 * is one of its dependencies).
 *
 * The checks are inline, so that get_ctx_params stays a leaf with no frame
 * on EVP's query; max_request.c finds the address once.
 */
#ifndef CHACHARNG_MAX_REQUEST_H
#define CHACHARNG_MAX_REQUEST_H

#include <stddef.h>

#include <openssl/core.h>
#include <openssl/core_names.h>

#include "base.h"

/* EVP's key, once its text and place are checked; NULL until then. */
extern const char *chacharng_max_request_key
    __attribute__((visibility("hidden")));

/* 1 if |key| is the address known to hold "max_request". */
static inline int chacharng_max_request_known(const char *key)
{
    return key == __atomic_load_n(&chacharng_max_request_key, __ATOMIC_RELAXED);
}

/*
 * 1 if |key| is "max_request".  Byte by byte, stopping at the first
 * difference, so a shorter key is never read past its NUL.
 */
static inline int chacharng_max_request_is(const char *key)
{
    static const char want[] = OSSL_RAND_PARAM_MAX_REQUEST;
    size_t i;

#pragma GCC unroll 16
    for (i = 0; i < sizeof(want); i++)
        if (key[i] != want[i])
            return 0;
    return 1;
}

/* Answer |p|, a size_t of EVP's query, with CHACHARNG_MAX_REQUEST. */
static inline void chacharng_max_request_answer(OSSL_PARAM *p)
{
    *(size_t *)p->data = CHACHARNG_MAX_REQUEST;
    p->return_size = sizeof(size_t);
}

/*
 * |p|'s key reads "max_request": answer it, and remember its address if
 * it lies in libcrypto's read-only data.  Returns 1.  Out of line, so
 * that the lookup stays off the path of a known key.
 */
int chacharng_max_request_by_text(OSSL_PARAM *p) __attribute__((noinline));

#endif
