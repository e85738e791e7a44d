/* SPDX-License-Identifier: Apache-2.0 */
/*
 * random_provider.c: the OpenSSL 3.5+ random-provider path (DESIGN.md
 * section 7).
 */
#ifndef CHACHARNG_RANDOM_PROVIDER_H
#define CHACHARNG_RANDOM_PROVIDER_H

#include <stddef.h>

#include <openssl/core_dispatch.h>

#include "base.h"

typedef int chacharng_random_bytes_fn(void *provctx, int which, void *buf,
                                      size_t n, unsigned int strength);
#ifdef OSSL_FUNC_PROVIDER_RANDOM_BYTES
/* 3.5+ headers: the table entry is type-checked against theirs */
_Static_assert(__builtin_types_compatible_p(OSSL_FUNC_provider_random_bytes_fn,
                                            chacharng_random_bytes_fn),
               "random_bytes signature differs from libcrypto's");
#else
/* 3.0-3.4 headers lack the id; their libcrypto ignores the entry */
#define OSSL_FUNC_PROVIDER_RANDOM_BYTES 1032
#endif
/*
 * RAND_bytes (|which| 0) and RAND_priv_bytes (1) when chacharng is the
 * random provider: |n| bytes from this thread's generator for |which|.
 * Lock-free after a thread's first call.  Returns 1 on success, 0 with an
 * error raised.
 */
chacharng_random_bytes_fn chacharng_random_bytes;
/*
 * Give |prov| its number on the random-provider path (provider init).
 * Returns 1 on success, 0 with an error raised.
 */
int chacharng_random_init(CHACHARNG_PROV_CTX *prov);
/* Wipe and unmap every thread's generators of |prov| (provider teardown). */
void chacharng_random_teardown(CHACHARNG_PROV_CTX *prov);

#endif
