/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The provider-wide types: the provider context (core upcalls, the kernel
 * chosen at load), error reasons, debug output, and the functions the
 * provider/ files call across each other, each under the file that
 * defines it.  base.c, the floor everything stands on, calls none of the
 * others.  The RAND context's internals are in rand_local.h.
 */
#ifndef CHACHARNG_BASE_H
#define CHACHARNG_BASE_H

#include <pthread.h>
#include <time.h>

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

/* Reasons reported through the core's error upcalls (prov.c has the text). */
enum {
    CHACHARNG_R_NOT_INSTANTIATED = 1,
    CHACHARNG_R_ALREADY_INSTANTIATED,
    CHACHARNG_R_IN_ERROR_STATE,
    CHACHARNG_R_STRENGTH_TOO_HIGH,
    CHACHARNG_R_PERSONALISATION_TOO_LONG,
    CHACHARNG_R_ADDITIONAL_INPUT_TOO_LONG,
    CHACHARNG_R_ENTROPY_INPUT_TOO_LONG,
    CHACHARNG_R_REQUEST_TOO_LARGE,
    CHACHARNG_R_PARENT_STRENGTH_TOO_LOW,
    CHACHARNG_R_ENTROPY_SOURCE_FAILED,
    CHACHARNG_R_INVALID_PARAMETER,
    CHACHARNG_R_UNKNOWN_IMPL,
    CHACHARNG_R_IMPL_NOT_SUPPORTED,
    CHACHARNG_R_SELFTEST_FAILED,
    CHACHARNG_R_OUT_OF_MEMORY,
    CHACHARNG_R_PARENT_LOCKING_FAILED
};

/* ------------------------------------------------------------------------
 * base.c: errors, debug output and the checks every generator shares
 * ------------------------------------------------------------------------ */
void chacharng_prov_raise(const CHACHARNG_PROV_CTX *prov, int reason,
                          const char *file, int line, const char *func,
                          const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
#define CHACHARNG_RAISE(prov, reason, ...)                                     \
    chacharng_prov_raise((prov), (reason), __FILE__, __LINE__, __func__,       \
                         __VA_ARGS__)

/*
 * CHACHARNG_DEBUG: chacharng_debug_init() reads it at each provider load;
 * when it is set, CHACHARNG_DEBUG_LOG
 * prints one line, "chacharng: " and its printf-style arguments, to
 * stderr.  chacharng_debug_enabled() says whether it is on, for callers
 * that must do work before they print.
 */
void chacharng_debug_init(void);
int chacharng_debug_enabled(void);
void chacharng_debug_log(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
#define CHACHARNG_DEBUG_LOG(...)                                               \
    do {                                                                       \
        if (chacharng_debug_enabled())                                         \
            chacharng_debug_log(__VA_ARGS__);                                  \
    } while (0)

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
/*
 * The kernel named by the |len| bytes at |name| (no NUL needed), which
 * must be compiled in and run here.  |origin| says where the name came
 * from ("CHACHARNG_IMPL", "config key impl", "impl") for the error.
 * Returns NULL with an error raised otherwise.
 */
/* The package and the kernels compiled in, for messages and `buildinfo`. */
const char *chacharng_buildinfo(void);
const struct chacha_impl *chacharng_impl_find(const CHACHARNG_PROV_CTX *prov,
                                              const char *origin,
                                              const char *name, size_t len);

/* ------------------------------------------------------------------------
 * settings.c: the config keys and their environment variables, at load
 * ------------------------------------------------------------------------ */
/*
 * A setting's value (NULL: unset) and where it came from: the environment
 * variable's name, "config key <key>", or "default".
 */
struct chacharng_setting {
    const char *value;
    const char *origin;
};
struct chacharng_settings {
    struct chacharng_setting impl;       /* impl, CHACHARNG_IMPL */
    struct chacharng_setting kernel_mix; /* kernel_mix, CHACHARNG_KERNEL_MIX */
};
/*
 * Read every setting into |s|: the config keys of |prov|'s section in one
 * core_get_params call, each overridden by its environment variable when
 * that is set and not empty.  The strings live as long as the provider.
 */
void chacharng_settings_read(const CHACHARNG_PROV_CTX *prov,
                             struct chacharng_settings *s);

/* ------------------------------------------------------------------------
 * rand.c: the EVP_RAND entry points of CHACHA20-DRBG
 * ------------------------------------------------------------------------ */
extern const OSSL_DISPATCH chacharng_rand_functions[];

/*
 * The entry for function |id| in a dispatch table (NULL: none), or an
 * entry whose function is NULL if the table has none: for the
 * OSSL_FUNC_*() accessors, which read ->function.
 */
const OSSL_DISPATCH *chacharng_dispatch_find(const OSSL_DISPATCH *table,
                                             int id);

/* ------------------------------------------------------------------------
 * rand_params.c: answers in the caller's OSSL_PARAM, shared with prov.c
 * ------------------------------------------------------------------------ */
/*
 * Answer |p| with the string |s|: a UTF8_PTR gets the pointer, a
 * UTF8_STRING a copy with its NUL, NULL data only the length.  return_size
 * is the length without the NUL.  Returns 0 for any other type and for a
 * buffer without room for the NUL.
 */
int chacharng_param_set_utf8(OSSL_PARAM *p, const char *s);
/* Raise the error for an answer |p| could not take; returns 0. */
int chacharng_param_refused(const CHACHARNG_PROV_CTX *prov,
                            const OSSL_PARAM *p);

/* ------------------------------------------------------------------------
 * seed.c: the seed sources, as the generator's source interface
 * ------------------------------------------------------------------------ */
/*
 * The source of every generator without a parent, into |src|: the core's
 * entropy upcall, else getrandom(2).  Its errors are raised on |prov|.
 */
void chacharng_seed_source_os(CHACHARNG_PROV_CTX *prov,
                              struct chacha_drbg_source *src);

/* ------------------------------------------------------------------------
 * kmix.c: kernel mixing (DESIGN.md sections 2 and 3)
 * ------------------------------------------------------------------------ */
/*
 * Read the `kernel_mix` config key and CHACHARNG_KERNEL_MIX (which wins)
 * into |prov|, and find out once what `auto` means here.  Returns 1, or 0
 * with an error raised for a value other than auto, on or off.
 */
int chacharng_kmix_choose(CHACHARNG_PROV_CTX *prov,
                          const struct chacharng_setting *kernel_mix);
/*
 * Whether a new generator mixes by default: for context |ctx| (its parent
 * already noted), or for a random-provider generator when |ctx| is NULL.
 */
int chacharng_kmix_default(const CHACHARNG_PROV_CTX *prov,
                           const CHACHARNG_RAND_CTX *ctx);

/* ------------------------------------------------------------------------
 * random_provider.c: the OpenSSL 3.5+ random-provider path (DESIGN.md
 * sec. 7)
 * ------------------------------------------------------------------------ */
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

/* ------------------------------------------------------------------------
 * library_rng.c: CHACHA20-DRBG as the library DRBG of `-provider chacharng`
 * alone (DESIGN.md sec. 8)
 * ------------------------------------------------------------------------ */
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

/*
 * The parameter tables (prov.c, rand_params.c) are X-macro lists of
 * (definition, handler) pairs; these two pick one column, so that the
 * OSSL_PARAM array a caller sees and the handlers that serve it come from
 * the same list and cannot drift apart.
 */
#define CHACHARNG_PARAM_DEFINITION(definition, handler) definition,
#define CHACHARNG_PARAM_HANDLER(definition, handler) handler,

#endif
