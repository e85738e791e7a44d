/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helper of t_library_rng, not a test by itself: a program with libcrypto
 * linked in statically, so that the chacharng module it loads (linked
 * with the shared libcrypto) is called by a core that is not its own.
 * provider-base(7): the context the core hands out is then opaque to the
 * module, which must leave the library DRBG alone.  Exits 0 when RAND_bytes
 * still fails (nothing named CHACHA20-DRBG here) and an explicit fetch of
 * CHACHA20-DRBG works (the module did load and run); t_library_rng checks
 * the module's CHACHARNG_DEBUG line besides.
 */
#include <stdio.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <openssl/rand.h>

int main(void)
{
    OSSL_PROVIDER *prov = OSSL_PROVIDER_load(NULL, "chacharng");
    EVP_RAND *r;
    EVP_RAND_CTX *ctx = NULL;
    unsigned char buf[32];
    int ok;

    if (prov == NULL) {
        fprintf(stderr, "cannot load chacharng\n");
        ERR_print_errors_fp(stderr);
        return 1;
    }
    if (RAND_bytes(buf, sizeof(buf)) > 0) {
        fprintf(stderr, "RAND_bytes succeeded: the library DRBG was taken\n");
        return 1;
    }
    ERR_clear_error();
    r = EVP_RAND_fetch(NULL, "CHACHA20-DRBG", "provider=chacharng");
    ctx = r != NULL ? EVP_RAND_CTX_new(r, NULL) : NULL;
    ok = ctx != NULL && EVP_RAND_instantiate(ctx, 256, 0, NULL, 0, NULL)
         && EVP_RAND_generate(ctx, buf, sizeof(buf), 256, 0, NULL, 0);
    if (!ok) {
        fprintf(stderr, "explicit CHACHA20-DRBG failed\n");
        ERR_print_errors_fp(stderr);
    }
    EVP_RAND_CTX_free(ctx);
    EVP_RAND_free(r);
    OSSL_PROVIDER_unload(prov);
    return ok ? 0 : 1;
}
