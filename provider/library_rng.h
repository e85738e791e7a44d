/* SPDX-License-Identifier: Apache-2.0 */
/*
 * library_rng.c: CHACHA20-DRBG as the library DRBG of `-provider
 * chacharng` alone (DESIGN.md section 8).
 */
#ifndef CHACHARNG_LIBRARY_RNG_H
#define CHACHARNG_LIBRARY_RNG_H

#include <openssl/core.h>

#include "base.h"

/*
 * Decide, from the core's upcalls |in|, whether |prov| names CHACHA20-DRBG
 * as its library context's DRBG, and name it if so.  Always returns 1: the
 * provider works either way.
 */
int chacharng_library_rng_init(CHACHARNG_PROV_CTX *prov,
                               const OSSL_DISPATCH *in);
/*
 * 1 if instantiate |params| show a DRBG that libcrypto made from the name
 * |prov| stored (its `properties` are the ones we stored with it).
 */
int chacharng_library_rng_made(const CHACHARNG_PROV_CTX *prov,
                               const OSSL_PARAM params[]);
/*
 * libcrypto enabled locking on such a DRBG: it is the primary, and the
 * name is fixed for good.  Keeps |prov| active until OPENSSL_cleanup.
 */
void chacharng_library_rng_primary(CHACHARNG_PROV_CTX *prov);
/* Give back a name that no primary DRBG used yet; free the state. */
void chacharng_library_rng_teardown(CHACHARNG_PROV_CTX *prov);

#endif
