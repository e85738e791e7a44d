/* SPDX-License-Identifier: Apache-2.0
 *
 * chacharng-probe: what chacharngctl(8) runs in a child process to learn
 * what a configuration really does.  It loads the configuration named by
 * OPENSSL_CONF, makes exactly one RAND_bytes or RAND_priv_bytes call, and
 * then prints the DRBG that libcrypto keeps for that call.  It never
 * decides whether the answer is right: the script does.
 *
 * The random provider of OpenSSL 3.5+ is invisible from here (the DRBG
 * chain still exists beside it).  chacharng prints "random provider path
 * in use" on its first random_bytes call when CHACHARNG_DEBUG is set, and
 * the RAND call below is the first thing that can make one, so the
 * script reads that line from stderr.
 *
 * `chacharng-probe conf FILE` prints libcrypto's reading of FILE instead
 * (probe-conf.c).
 */
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <openssl/rand.h>

#include "probe-conf.h"

/* Print "LABEL NAME PROVIDER" for the DRBG |ctx| (NAME and PROVIDER are
 * "-" when there is none). */
static void print_drbg(const char *label, EVP_RAND_CTX *ctx)
{
    const EVP_RAND *rand = ctx != NULL ? EVP_RAND_CTX_get0_rand(ctx) : NULL;
    const OSSL_PROVIDER *prov =
        rand != NULL ? EVP_RAND_get0_provider(rand) : NULL;

    printf("%s %s %s\n", label, rand != NULL ? EVP_RAND_get0_name(rand) : "-",
           prov != NULL ? OSSL_PROVIDER_get0_name(prov) : "-");
}

int main(int argc, char **argv)
{
    unsigned char buf[32];
    int private, ok;

    if (argc == 3 && strcmp(argv[1], "conf") == 0)
        return probe_conf(argv[2]);
    if (argc != 2
        || (strcmp(argv[1], "public") != 0
            && strcmp(argv[1], "private") != 0)) {
        fprintf(stderr, "usage: chacharng-probe public|private\n"
                        "       chacharng-probe conf FILE\n");
        return 2;
    }
    private = strcmp(argv[1], "private") == 0;
    if (!OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CONFIG, NULL)) {
        printf("config failed\n");
        ERR_print_errors_fp(stderr);
        return 1;
    }
    ok = private ? RAND_priv_bytes(buf, sizeof(buf))
                 : RAND_bytes(buf, sizeof(buf));
    OPENSSL_cleanse(buf, sizeof(buf));
    if (ok != 1) {
        printf("rand failed\n");
        ERR_print_errors_fp(stderr);
        return 1;
    }
    printf("rand ok\n");
    print_drbg("primary", RAND_get0_primary(NULL));
    print_drbg(private ? "private" : "public",
               private ? RAND_get0_private(NULL) : RAND_get0_public(NULL));
    return 0;
}
