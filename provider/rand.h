/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rand.c: the EVP_RAND entry points of CHACHA20-DRBG, as one dispatch
 * table for the provider's query.
 */
#ifndef CHACHARNG_RAND_H
#define CHACHARNG_RAND_H

#include <openssl/core.h>

extern const OSSL_DISPATCH chacharng_rand_functions[];

#endif
