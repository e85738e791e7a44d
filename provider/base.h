/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The provider-wide types: the provider context (core upcalls, the kernel
 * chosen at load), and base.c's errors and the checks every generator
 * shares.  base.c, the floor everything stands on, calls none of
 * the other files; each of those has a header of its own beside it, and
 * the RAND context's internals are in rand_local.h.
 */
#ifndef CHACHARNG_BASE_H
#define CHACHARNG_BASE_H

#include <openssl/core.h>
#include <openssl/core_dispatch.h>

#include "chacha.h"
#include "chacha_drbg.h"

#define CHACHARNG_NAME "chacharng"
#define CHACHARNG_ALG_NAME "CHACHA20-DRBG"
#define CHACHARNG_ALG_PROPS "provider=chacharng,fips=no"
#define CHACHARNG_MAX_REQUEST CHACHA_DRBG_MAX_REQUEST
#define CHACHARNG_MAX_INPUT ((size_t)65536) /* pers, adin, reseed entropy */

/* Core upcalls added after 3.0; 3.0 headers lack the ids. */
#ifndef OSSL_FUNC_GET_USER_ENTROPY
#define OSSL_FUNC_CLEANUP_USER_ENTROPY 96
#define OSSL_FUNC_GET_USER_ENTROPY 98
#endif

typedef size_t chacharng_get_entropy_fn(const OSSL_CORE_HANDLE *handle,
                                        unsigned char **pout, int entropy,
                                        size_t min_len, size_t max_len);
typedef void chacharng_cleanup_entropy_fn(const OSSL_CORE_HANDLE *handle,
                                          unsigned char *buf, size_t len);

/* The `kernel_mix` setting: config key, or CHACHARNG_KERNEL_MIX. */
enum chacharng_kmix {
    CHACHARNG_KMIX_AUTO = 0, /* on where the kernel's vDSO has getrandom */
    CHACHARNG_KMIX_ON,
    CHACHARNG_KMIX_OFF
};

struct rp_instance;
struct chacharng_library_rng;
/* An EVP_RAND context of CHACHA20-DRBG; rand_local.h has its fields. */
typedef struct chacharng_rand_ctx CHACHARNG_RAND_CTX;

typedef struct chacharng_prov_ctx {
    const OSSL_CORE_HANDLE *handle;
    const struct chacha_impl *impl; /* chosen once, at load */
    enum chacharng_kmix kernel_mix; /* chosen once, at load */
    int kernel_mix_vdso;            /* auto's answer: the vDSO route exists */
    struct rp_instance *rp; /* random_provider.c's: this instance there */
    OSSL_FUNC_core_get_params_fn *core_get_params;
    OSSL_FUNC_core_new_error_fn *core_new_error;
    OSSL_FUNC_core_set_error_debug_fn *core_set_error_debug;
    OSSL_FUNC_core_vset_error_fn *core_vset_error;
    chacharng_get_entropy_fn *get_entropy;
    chacharng_cleanup_entropy_fn *cleanup_entropy;
    struct chacharng_library_rng
        *library_rng; /* NULL: never the library DRBG */
} CHACHARNG_PROV_CTX;

/* ------------------------------------------------------------------------
 * base.c: errors and the checks every generator shares
 * ------------------------------------------------------------------------ */
void chacharng_prov_raise(const CHACHARNG_PROV_CTX *prov, int reason,
                          const char *file, int line, const char *func,
                          const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* |reason| is one of reasons.h's CHACHARNG_R_*. */
#define CHACHARNG_RAISE(prov, reason, ...)                                     \
    chacharng_prov_raise((prov), (reason), __FILE__, __LINE__, __func__,       \
                         __VA_ARGS__)

/*
 * Refuse a request for more than CHACHA_DRBG_STRENGTH bits.  Returns 1 if
 * |strength| can be served, else 0 with an error raised.
 */
int chacharng_strength_ok(const CHACHARNG_PROV_CTX *prov,
                          unsigned int strength);
/*
 * A new generator on |prov|'s kernel, mixing as |kernel_mix| says, seeded
 * from |src|, its state in a pool slot.  Returns NULL with an error raised
 * if no slot can be had.
 */
struct chacha_drbg *chacharng_drbg_new(const CHACHARNG_PROV_CTX *prov,
                                       int kernel_mix,
                                       const struct chacha_drbg_source *src);
/* The package and the kernels compiled in, for messages and `buildinfo`. */
const char *chacharng_buildinfo(void);
/*
 * The kernel named by the |len| bytes at |name| (no NUL needed), which
 * must be compiled in and run here.  |origin| says where the name came
 * from ("CHACHARNG_IMPL", "config key impl", "impl") for the error.
 * Returns NULL with an error raised otherwise.
 */
const struct chacha_impl *chacharng_impl_find(const CHACHARNG_PROV_CTX *prov,
                                              const char *origin,
                                              const char *name, size_t len);

/*
 * The entry for function |id| in a dispatch table (NULL: none), or an
 * entry whose function is NULL if the table has none: for the
 * OSSL_FUNC_*() accessors, which read ->function.
 */
const OSSL_DISPATCH *chacharng_dispatch_find(const OSSL_DISPATCH *table,
                                             int id);

#endif
