/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Seed reads on the random-provider path (DESIGN.md sections 4 and 7),
 * counted at the core's entropy upcall, which this test wraps: a request
 * larger than max_request is served as max_request calls, each one under
 * the reseed policy, so one random_bytes (and, on 3.5+, one RAND_bytes_ex
 * under that provider) of more than 16 MiB reads a second seed inside the
 * request; and a small request whose bytes are buffered still reseeds
 * first once 16 MiB have been produced.  The module is loaded with
 * OSSL_PROVIDER_add_builtin so that its `in` table can be wrapped.
 */
#define _GNU_SOURCE

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include <openssl/provider.h>
#include <openssl/rand.h>

#include "testutil.h"

/* Written out, not taken from the product's headers (see drbg_model.h). */
#define MIB ((size_t)1 << 20)
#define RESEED_BYTES (16 * MIB)
#define BUILTIN "chacharng-builtin"

/* Core upcalls added after 3.0; 3.0 headers lack the ids. */
#ifndef OSSL_FUNC_GET_USER_ENTROPY
#define OSSL_FUNC_GET_USER_ENTROPY 98
#endif
#ifndef OSSL_FUNC_PROVIDER_RANDOM_BYTES
#define OSSL_FUNC_PROVIDER_RANDOM_BYTES 1032
#endif

typedef size_t get_entropy_fn(const OSSL_CORE_HANDLE *handle,
                              unsigned char **pout, int entropy, size_t min_len,
                              size_t max_len);
typedef int random_bytes_fn(void *provctx, int which, void *buf, size_t n,
                            unsigned int strength);
typedef int set1_random_provider_fn(OSSL_LIB_CTX *ctx, OSSL_PROVIDER *prov);

static OSSL_provider_init_fn *real_init;
static random_bytes_fn *random_bytes;
static void *random_provctx;

/* The core's entropy upcalls, wrapped to count the seeds handed out. */
static get_entropy_fn *real_get_entropy, *real_get_user_entropy;
static unsigned long seed_reads;

static size_t count_get_entropy(const OSSL_CORE_HANDLE *handle,
                                unsigned char **pout, int entropy,
                                size_t min_len, size_t max_len)
{
    seed_reads++;
    return real_get_entropy(handle, pout, entropy, min_len, max_len);
}

static size_t count_get_user_entropy(const OSSL_CORE_HANDLE *handle,
                                     unsigned char **pout, int entropy,
                                     size_t min_len, size_t max_len)
{
    seed_reads++;
    return real_get_user_entropy(handle, pout, entropy, min_len, max_len);
}

#define MAX_IN 128

static int wrapped_init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
                        const OSSL_DISPATCH **out, void **provctx)
{
    static OSSL_DISPATCH table[MAX_IN];
    const OSSL_DISPATCH *d;
    size_t i;

    for (i = 0; in[i].function_id != 0 && i + 1 < MAX_IN; i++) {
        table[i] = in[i];
        if (in[i].function_id == OSSL_FUNC_GET_ENTROPY) {
            real_get_entropy = (get_entropy_fn *)in[i].function;
            table[i].function = (void (*)(void))count_get_entropy;
        } else if (in[i].function_id == OSSL_FUNC_GET_USER_ENTROPY) {
            real_get_user_entropy = (get_entropy_fn *)in[i].function;
            table[i].function = (void (*)(void))count_get_user_entropy;
        }
    }
    table[i].function_id = 0;
    table[i].function = NULL;
    if (!real_init(handle, table, out, provctx))
        return 0;
    random_bytes = NULL;
    for (d = *out; d->function_id != 0; d++)
        if (d->function_id == OSSL_FUNC_PROVIDER_RANDOM_BYTES)
            random_bytes = (random_bytes_fn *)d->function;
    random_provctx = *provctx;
    return 1;
}

static unsigned char big[17 * MIB + 100];

/* |n| bytes from the public generator; 1 on success. */
static int rb(size_t n)
{
    return random_bytes(random_provctx, 0, big, n, 256);
}

/* One request of 17 MiB: the 17th max_request call reseeds first. */
static void test_one_large_request(void)
{
    int ok;

    seed_reads = 0;
    ok = rb(17 * MIB);
    TU_OK(ok && seed_reads == 2,
          "random_bytes of 17 MiB: 2 seed reads within the request (%lu)",
          seed_reads);
    seed_reads = 0;
    ok = rb(15 * MIB);
    TU_OK(ok && seed_reads == 0,
          "then 15 MiB more: none, 16 MiB are not yet reached (%lu)",
          seed_reads);
    ok = rb(2 * MIB);
    TU_OK(ok && seed_reads == 1,
          "then 2 MiB: one, before the call that finds 16 MiB (%lu)",
          seed_reads);
}

/*
 * 16 MiB passed while the next request's bytes are buffered: that request
 * must reseed rather than serve them.
 */
static void test_small_request_after_mark(void)
{
    int ok;

    /* the other generator, fresh: its first request is its first seed */
    seed_reads = 0;
    ok = random_bytes(random_provctx, 1, big, 100, 256)
         && random_bytes(random_provctx, 1, big, RESEED_BYTES - 200, 256)
         && random_bytes(random_provctx, 1, big, 200, 256);
    TU_OK(ok && seed_reads == 1,
          "16 MiB + 100 bytes in three requests, 760 left buffered: "
          "one seed (%lu)",
          seed_reads);
    ok = random_bytes(random_provctx, 1, big, 16, 256);
    TU_OK(ok && seed_reads == 2,
          "then 16 bytes, which the buffer holds: reseeded first (%lu)",
          seed_reads);
    ok = random_bytes(random_provctx, 1, big, 16, 256);
    TU_OK(ok && seed_reads == 2, "and the next 16 bytes: no further seed (%lu)",
          seed_reads);
}

/* RAND_bytes_ex under `random_provider`: the same, through libcrypto. */
static void test_rand_bytes(OSSL_LIB_CTX *lc, OSSL_PROVIDER *p)
{
    set1_random_provider_fn *set1 = (set1_random_provider_fn *)dlsym(
        RTLD_DEFAULT, "RAND_set1_random_provider");
    int ok;

    if (set1 == NULL) {
        tu_skip("RAND_bytes_ex: no random_provider before OpenSSL 3.5");
        return;
    }
    if (!TU_OK(set1(lc, p), "RAND_set1_random_provider(%s)", BUILTIN))
        return;
    /*
     * This thread's public generator, as test_one_large_request() left it:
     * 2 MiB since its seed.  10 MiB more leave it at 12 MiB, and the fifth
     * max_request call of the 17 MiB request finds 16 MiB.
     */
    seed_reads = 0;
    ok = RAND_bytes_ex(lc, big, 10 * MIB, 0) == 1;
    TU_OK(ok && seed_reads == 0, "RAND_bytes_ex of 10 MiB: no seed read (%lu)",
          seed_reads);
    ok = RAND_bytes_ex(lc, big, 17 * MIB, 0) == 1;
    TU_OK(ok && seed_reads == 1,
          "then RAND_bytes_ex of 17 MiB: one seed read within it (%lu)",
          seed_reads);
}

static void body(void)
{
    const char *dir = getenv("OPENSSL_MODULES");
    OSSL_LIB_CTX *lc;
    OSSL_PROVIDER *p = NULL;
    char path[4096];
    void *h;

    snprintf(path, sizeof(path), "%s/chacharng.so", dir != NULL ? dir : ".");
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    real_init = h != NULL
                    ? (OSSL_provider_init_fn *)dlsym(h, "OSSL_provider_init")
                    : NULL;
    if (!TU_OK(real_init != NULL, "OSSL_provider_init found in %s", path))
        return;
    lc = OSSL_LIB_CTX_new();
    if (lc != NULL && OSSL_PROVIDER_add_builtin(lc, BUILTIN, wrapped_init))
        p = OSSL_PROVIDER_load(lc, BUILTIN);
    if (!TU_OK(
            p != NULL && random_bytes != NULL
                && (real_get_entropy != NULL || real_get_user_entropy != NULL),
            "loaded as %s, random_bytes and an entropy upcall found",
            BUILTIN)) {
        OSSL_LIB_CTX_free(lc);
        dlclose(h);
        return;
    }
    test_one_large_request();
    test_small_request_after_mark();
    test_rand_bytes(lc, p);
    OSSL_PROVIDER_unload(p);
    OSSL_LIB_CTX_free(lc);
    dlclose(h);
}

int main(void)
{
    return tu_main_once(body);
}
