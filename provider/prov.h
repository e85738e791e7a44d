/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The provider's shared types: the provider context (core upcalls, the
 * kernel chosen at load), the RAND context, error reasons and the few
 * functions the provider/ files call across each other.
 */
#ifndef CHACHARNG_PROV_H
#define CHACHARNG_PROV_H

#include <pthread.h>
#include <time.h>

#include <openssl/core.h>
#include <openssl/core_dispatch.h>

#include "chacha.h"
#include "chacha_drbg.h"

#define CHACHARNG_NAME "chacharng"
#define CHACHARNG_ALG_NAME "CHACHA20-DRBG"
#define CHACHARNG_ALG_PROPS "provider=chacharng,fips=no"
#define CHACHARNG_MAX_REQUEST ((size_t)1 << 20)
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
    CHACHARNG_KMIX_AUTO = 0, /* on where the vDSO serves getrandom */
    CHACHARNG_KMIX_ON,
    CHACHARNG_KMIX_OFF
};

struct rb_thread;
struct chacharng_library_rng;

typedef struct chacharng_prov_ctx {
    const OSSL_CORE_HANDLE *handle;
    const struct chacha_impl *impl; /* chosen once, at load */
    enum chacharng_kmix kernel_mix; /* chosen once, at load */
    int kernel_mix_vdso;            /* auto's answer: glibc and vDSO agree */
    /* random_bytes.c: this instance on the random-provider path */
    struct {
        size_t index;              /* our entry in every thread's table */
        struct rb_thread *threads; /* the threads' records, under rb_lock */
        int announced;             /* CHACHARNG_DEBUG line printed */
    } rb;
    OSSL_FUNC_core_get_params_fn *core_get_params;
    OSSL_FUNC_core_new_error_fn *core_new_error;
    OSSL_FUNC_core_set_error_debug_fn *core_set_error_debug;
    OSSL_FUNC_core_vset_error_fn *core_vset_error;
    chacharng_get_entropy_fn *get_entropy;
    chacharng_cleanup_entropy_fn *cleanup_entropy;
    struct chacharng_library_rng *library_rng; /* NULL: never the library DRBG */
} CHACHARNG_PROV_CTX;

typedef struct chacharng_rand_ctx {
    CHACHARNG_PROV_CTX *provctx;
    struct chacha_drbg *drbg;
    pthread_mutex_t *lock;       /* NULL until enable_locking */
    int state;                   /* EVP_RAND_STATE_* */
    unsigned int reseed_counter; /* bumped per (re)seed; children follow it */
    time_t reseed_time;

    /* Parent RAND, if any, and the entry points it exported. */
    void *parent;
    OSSL_FUNC_rand_get_seed_fn *parent_get_seed;
    OSSL_FUNC_rand_clear_seed_fn *parent_clear_seed;
    OSSL_FUNC_rand_get_ctx_params_fn *parent_get_ctx_params;
    OSSL_FUNC_rand_set_ctx_params_fn *parent_set_ctx_params;
    OSSL_FUNC_rand_lock_fn *parent_lock;
    OSSL_FUNC_rand_unlock_fn *parent_unlock;
    OSSL_FUNC_rand_enable_locking_fn *parent_enable_locking;
    unsigned int parent_reseed_counter; /* at our last (re)seed */
} CHACHARNG_RAND_CTX;

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

/* prov.c */
void chacharng_prov_raise(const CHACHARNG_PROV_CTX *prov, int reason,
                          const char *file, int line, const char *func,
                          const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
#define CHACHARNG_RAISE(prov, reason, ...)                                     \
    chacharng_prov_raise((prov), (reason), __FILE__, __LINE__, __func__,       \
                         __VA_ARGS__)

/* rand.c */
extern const OSSL_DISPATCH chacharng_rand_functions[];

/* rand_params.c */
OSSL_FUNC_rand_get_ctx_params_fn chacharng_rand_get_ctx_params;
OSSL_FUNC_rand_set_ctx_params_fn chacharng_rand_set_ctx_params;
OSSL_FUNC_rand_gettable_ctx_params_fn chacharng_rand_gettable_ctx_params;
OSSL_FUNC_rand_settable_ctx_params_fn chacharng_rand_settable_ctx_params;
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

/* seed.c */
/*
 * Fill |out| with CHACHA_DRBG_SEED_BYTES of fresh entropy for |ctx|: from
 * the parent, else the core, else getrandom(2).  Requires ctx's own lock to
 * be held if it is locked.  Returns 1 on success, 0 (with an error raised)
 * on failure.
 */
int chacharng_seed_get(CHACHARNG_RAND_CTX *ctx, unsigned char *out,
                       int prediction_resistance);
/*
 * Fill |out| with CHACHA_DRBG_SEED_BYTES from the core's entropy upcall,
 * else getrandom(2): the source of every generator without a parent.
 * Returns 1 on success, 0 (with an error raised) on failure.
 */
int chacharng_seed_os(const CHACHARNG_PROV_CTX *prov, unsigned char *out);
/* Read the parent's strength; returns 1 and sets *|strength| on success. */
int chacharng_seed_parent_strength(CHACHARNG_RAND_CTX *ctx,
                                   unsigned int *strength);
/*
 * Read the parent's reseed counter into *|counter|.  Returns 0 when the
 * parent has none (then it never triggers a reseed).
 */
int chacharng_seed_parent_counter(CHACHARNG_RAND_CTX *ctx,
                                  unsigned int *counter);

/* ------------------------------------------------------------------------
 * kmix.c: kernel mixing (DESIGN.md sections 2 and 3)
 * ------------------------------------------------------------------------ */
/*
 * Read the `kernel_mix` config key and CHACHARNG_KERNEL_MIX (which wins)
 * into |prov|, and find out once what `auto` means here.  Returns 1, or 0
 * with an error raised for a value other than auto, on or off.
 */
int chacharng_kmix_choose(CHACHARNG_PROV_CTX *prov);
/*
 * Whether a new generator mixes by default: for context |ctx| (its parent
 * already noted), or for a random-provider generator when |ctx| is NULL.
 */
int chacharng_kmix_default(const CHACHARNG_PROV_CTX *prov,
                           const CHACHARNG_RAND_CTX *ctx);
/* Turn kernel mixing of |d| on (|on| != 0) or off. */
void chacharng_kmix_set(struct chacha_drbg *d, int on);
/* The core's callback: 32 bytes from getrandom(GRND_NONBLOCK), or 0. */
chacha_drbg_mix_fn chacharng_kmix_read;

/* ------------------------------------------------------------------------
 * random_bytes.c: the OpenSSL 3.5+ random-provider path (DESIGN.md sec. 7)
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
 * Decide, from the core's upcalls |in|, whether |prov| may ever name
 * CHACHA20-DRBG as its library context's DRBG.  Always returns 1: the
 * provider works either way.
 */
int chacharng_library_rng_init(CHACHARNG_PROV_CTX *prov,
                               const OSSL_DISPATCH *in);
/*
 * Called on every OSSL_OP_RAND query: name CHACHA20-DRBG while |prov| is
 * the only active provider and the primary DRBG does not exist, give the
 * name back when another provider is active.  Returns the no_cache answer:
 * 1 while the decision is still open.
 */
int chacharng_library_rng_query(CHACHARNG_PROV_CTX *prov);
/* Give back a name that no primary DRBG used yet; free the state. */
void chacharng_library_rng_teardown(CHACHARNG_PROV_CTX *prov);

#endif
