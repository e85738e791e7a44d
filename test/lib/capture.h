/* SPDX-License-Identifier: Apache-2.0 */
/*
 * chacharng loaded through OSSL_PROVIDER_add_builtin with an init of the
 * test's own, so that the test can call the entry points libcrypto would
 * (the 3.5+ random_bytes) straight from the module's dispatch table, on
 * any OpenSSL version.
 */
#ifndef CHACHARNG_TEST_CAPTURE_H
#define CHACHARNG_TEST_CAPTURE_H

#include <stddef.h>

#include <openssl/core.h>

#include "provutil.h"

/* What the last init that went through cap_init_and_keep() returned. */
struct cap_kept {
    chacharng_random_bytes_fn *random_bytes; /* NULL: not exported */
    void *provctx;
};
extern struct cap_kept cap_kept;

/*
 * The module's own OSSL_provider_init, from chacharng.so in
 * OPENSSL_MODULES (dlopen'd once and kept); the path tried goes to
 * |path| (|n| bytes).  NULL if the module or the symbol is not found.
 */
OSSL_provider_init_fn *cap_module_init(char *path, size_t n);

/*
 * The random_bytes entry of the dispatch table |d| (a provider's out
 * table), or NULL if it has none.
 */
chacharng_random_bytes_fn *cap_random_bytes(const OSSL_DISPATCH *d);

/*
 * Run |init| (the module's, with whatever core table |in| the test made)
 * and keep its random_bytes and provider context in cap_kept.
 */
int cap_init_and_keep(OSSL_provider_init_fn *init,
                      const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
                      const OSSL_DISPATCH **out, void **provctx);

/*
 * An init for OSSL_PROVIDER_add_builtin: the module's own init
 * (cap_module_init() must have found it), keeping what cap_kept holds.
 */
OSSL_provider_init_fn cap_init;

#endif
