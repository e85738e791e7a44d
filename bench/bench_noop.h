/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NOOP-RAND and NOOP-RAND-STD: EVP_RANDs whose entry points do nothing, in
 * a provider built into the benchmark.  Timing EVP_RAND_generate on it gives libcrypto's
 * own cost per call, the floor under every provider's small requests.
 */
#ifndef CHACHARNG_BENCH_NOOP_H
#define CHACHARNG_BENCH_NOOP_H

#include <stddef.h>

#include <openssl/evp.h>

/*
 * An instantiated context of |name|, "NOOP-RAND" (answers max_request
 * without reading the key) or "NOOP-RAND-STD" (answers it through
 * OSSL_PARAM_locate, as OpenSSL's DRBGs do), in |libctx| (the provider is
 * added as a built-in and loaded on the first call).  NULL with the
 * reason in |err| on failure.
 */
EVP_RAND_CTX *bench_noop_ctx(OSSL_LIB_CTX *libctx, const char *name, char *err,
                             size_t n);

#endif
