/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The facts the library-DRBG decision reads (library_facts.c); see
 * library_rng.c for the decision itself.
 */
#ifndef CHACHARNG_LIBRARY_FACTS_H
#define CHACHARNG_LIBRARY_FACTS_H

#include <openssl/core_dispatch.h>

#include "base.h"

/* 1 if CHACHARNG_LIBRARY_RNG says no (no, 0, off, false). */
int chacharng_library_rng_opted_out(void);
/* 1 if this process has exactly one thread, the caller. */
int chacharng_single_threaded(void);
/* 1 if the core's |get_libctx| lies in the libcrypto we are linked with. */
int chacharng_same_libcrypto(OSSL_FUNC_core_get_libctx_fn *get_libctx);
/*
 * Our libcrypto's default library context if the core loaded us into it,
 * else NULL.  Requires chacharng_same_libcrypto().
 */
OSSL_LIB_CTX *
chacharng_default_libctx(const OSSL_CORE_HANDLE *handle,
                         OSSL_FUNC_core_get_libctx_fn *get_libctx);
/*
 * 1 if a config file activated |prov|; the name it was loaded by goes into
 * *|self_name| (a malloc'd copy, or NULL).
 */
int chacharng_activated_by_config(const CHACHARNG_PROV_CTX *prov,
                                  char **self_name);
/* 1 if the default config file has a `random` section in its init section. */
int chacharng_config_has_random(void);

#endif
