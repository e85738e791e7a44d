/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Write the raw CHACHA20-DRBG output stream to stdout, for the statistical
 * batteries (rngtest, dieharder -g 200).  The DRBG is loaded exactly as an
 * application would load it (OPENSSL_MODULES, no parent, so it seeds from
 * the core's entropy source) and is driven with a mix of request sizes, so
 * the stream covers the buffered path, refills and the direct path.
 *
 *   rawout [-i KERNEL] [-n BYTES] [-s SEED]   stream (forever without -n)
 *   rawout -l                       list the kernels this CPU can run
 *
 * With -s, SEED (96 hex digits, 48 bytes) makes the stream a fixed one:
 * the parent is TEST-RAND handing out those bytes at every (re)seed, and
 * kernel mixing and the time-based reseed are off, so the stream is a
 * function of SEED alone, in the construction the known-answer tests pin
 * byte for byte (test/t_kat.c), the same on every kernel.  A battery's
 * verdict on it replays exactly.
 *
 * The kernel is the provider's choice (CHACHARNG_IMPL applies), or the one
 * given with -i, set through the `impl` context parameter and read back.
 * It is named on stderr.  A closed pipe ends the stream quietly.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>

#include "chacha.h"

#define MAX_CALL 65536

static int list_kernels(void)
{
    const struct chacha_impl *list;
    size_t n, i;

    list = chacha_impl_list(&n);
    for (i = 0; i < n; i++)
        if (chacha_impl_supported(&list[i]))
            printf("%s\n", list[i].name);
    return 0;
}

/*
 * Request sizes: mostly large (the batteries need a lot of data), with a
 * share of small and buffer-edge sizes so every path of the generator
 * contributes to the stream.
 */
static size_t next_size(uint32_t *x)
{
    static const size_t edges[] = { 1, 63, 64, 65, 959, 960, 961, 1024 };
    uint32_t r;

    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    r = *x;
    if ((r & 7) == 0)
        return edges[(r >> 3) % (sizeof(edges) / sizeof(edges[0]))];
    if ((r & 7) == 1)
        return 1 + (r >> 3) % 200;
    return 4096 + (r >> 3) % (MAX_CALL - 4096 + 1);
}

static int write_all(const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(STDOUT_FILENO, p, n);

        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno == EPIPE ? 0 : -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 1;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: rawout [-i KERNEL] [-n BYTES] [-s SEED] | rawout -l\n");
    exit(2);
}

#define SEED_BYTES 48

/* The 48 bytes of |hex| into |seed|; 1 on success. */
static int parse_seed(const char *hex, unsigned char seed[SEED_BYTES])
{
    size_t i;
    unsigned int b;

    if (strlen(hex) != 2 * SEED_BYTES)
        return 0;
    for (i = 0; i < SEED_BYTES; i++) {
        if (sscanf(hex + 2 * i, "%2x", &b) != 1)
            return 0;
        seed[i] = (unsigned char)b;
    }
    return 1;
}

/* A TEST-RAND context (default provider) handing out |seed|, or NULL. */
static EVP_RAND_CTX *fixed_parent(OSSL_LIB_CTX *libctx,
                                  unsigned char seed[SEED_BYTES])
{
    EVP_RAND *test_rand = EVP_RAND_fetch(libctx, "TEST-RAND", NULL);
    EVP_RAND_CTX *parent =
        test_rand != NULL ? EVP_RAND_CTX_new(test_rand, NULL) : NULL;
    unsigned int strength = 256;
    OSSL_PARAM p[3];

    EVP_RAND_free(test_rand);
    if (parent == NULL)
        return NULL;
    p[0] = OSSL_PARAM_construct_uint(OSSL_RAND_PARAM_STRENGTH, &strength);
    p[1] = OSSL_PARAM_construct_octet_string(OSSL_RAND_PARAM_TEST_ENTROPY, seed,
                                             SEED_BYTES);
    p[2] = OSSL_PARAM_construct_end();
    if (!EVP_RAND_CTX_set_params(parent, p)
        || !EVP_RAND_instantiate(parent, strength, 0, NULL, 0, NULL)) {
        EVP_RAND_CTX_free(parent);
        return NULL;
    }
    return parent;
}

/* No kernel mixing, no time-based reseed: nothing but |ctx|'s seed. */
static int fix_stream(EVP_RAND_CTX *ctx)
{
    int no_mix = 0;
    time_t no_interval = 0;
    OSSL_PARAM p[3];

    p[0] = OSSL_PARAM_construct_int("kernel_mix", &no_mix);
    p[1] = OSSL_PARAM_construct_time_t(OSSL_DRBG_PARAM_RESEED_TIME_INTERVAL,
                                       &no_interval);
    p[2] = OSSL_PARAM_construct_end();
    return EVP_RAND_CTX_set_params(ctx, p);
}

/* What the stream is drawn from: chacharng in a library context of its
 * own, under a fixed TEST-RAND parent when a seed is given. */
struct source {
    OSSL_LIB_CTX *libctx;
    OSSL_PROVIDER *prov, *deflt;
    EVP_RAND *rand;
    EVP_RAND_CTX *parent, *ctx;
};

/* Load CHACHA20-DRBG as an application would, under |seed|'s fixed parent
 * unless |seed| is NULL.  Returns 1, or 0 with a message. */
static int source_open(struct source *src, unsigned char *seed)
{
    memset(src, 0, sizeof(*src));
    src->libctx = OSSL_LIB_CTX_new();
    src->prov = src->libctx != NULL
                    ? OSSL_PROVIDER_load(src->libctx, "chacharng")
                    : NULL;
    src->rand = src->prov != NULL ? EVP_RAND_fetch(src->libctx, "CHACHA20-DRBG",
                                                   "provider=chacharng")
                                  : NULL;
    if (src->rand != NULL && seed != NULL) {
        src->deflt = OSSL_PROVIDER_load(src->libctx, "default");
        src->parent =
            src->deflt != NULL ? fixed_parent(src->libctx, seed) : NULL;
    }
    if (src->rand != NULL && (seed == NULL || src->parent != NULL))
        src->ctx = EVP_RAND_CTX_new(src->rand, src->parent);
    if (src->ctx != NULL && seed != NULL && !fix_stream(src->ctx)) {
        EVP_RAND_CTX_free(src->ctx);
        src->ctx = NULL;
    }
    if (src->ctx == NULL) {
        fprintf(stderr,
                "rawout: cannot load CHACHA20-DRBG "
                "(OPENSSL_MODULES=%s)\n",
                getenv("OPENSSL_MODULES") ? getenv("OPENSSL_MODULES") : "");
        return 0;
    }
    return 1;
}

/*
 * Set kernel |want| (NULL: the provider's choice), instantiate, and read
 * back the kernel in use, which must be |want|.  Returns 1, or 0 with a
 * message.
 */
static int source_start(struct source *src, const char *want)
{
    char impl[32] = "";
    OSSL_PARAM p[2];

    p[1] = OSSL_PARAM_construct_end();
    if (want != NULL) {
        char copy[32];

        snprintf(copy, sizeof(copy), "%s", want);
        p[0] = OSSL_PARAM_construct_utf8_string("impl", copy, 0);
        if (!EVP_RAND_CTX_set_params(src->ctx, p)) {
            fprintf(stderr, "rawout: kernel %s refused\n", want);
            return 0;
        }
    }
    if (!EVP_RAND_instantiate(src->ctx, 256, 0, NULL, 0, NULL))
        return 0;
    p[0] = OSSL_PARAM_construct_utf8_string("impl", impl, sizeof(impl));
    if (!EVP_RAND_CTX_get_params(src->ctx, p)
        || (want != NULL && strcmp(impl, want) != 0)) {
        fprintf(stderr, "rawout: kernel in use is \"%s\", not \"%s\"\n", impl,
                want != NULL ? want : "?");
        return 0;
    }
    fprintf(stderr, "rawout: CHACHA20-DRBG, kernel %s\n", impl);
    return 1;
}

/*
 * Write |limit| bytes (0: until the reader goes away) in requests of
 * next_size()'s mix.  Returns 1 at the end, 0 with a message on failure.
 */
static int source_stream(struct source *src, unsigned long long limit)
{
    static unsigned char buf[MAX_CALL];
    unsigned long long done = 0;
    uint32_t x = 0x2545f491u;

    for (;;) {
        size_t n = next_size(&x);
        int w;

        if (limit != 0 && n > limit - done)
            n = (size_t)(limit - done);
        if (!EVP_RAND_generate(src->ctx, buf, n, 256, 0, NULL, 0)) {
            fprintf(stderr, "rawout: generate failed\n");
            return 0;
        }
        w = write_all(buf, n);
        if (w < 0) {
            perror("rawout: write");
            return 0;
        }
        if (w == 0)
            return 1; /* the reader has all it wanted */
        done += n;
        if (limit != 0 && done >= limit)
            return 1;
    }
}

static void source_close(struct source *src)
{
    EVP_RAND_CTX_free(src->ctx);
    EVP_RAND_CTX_free(src->parent);
    EVP_RAND_free(src->rand);
    if (src->prov != NULL)
        OSSL_PROVIDER_unload(src->prov);
    if (src->deflt != NULL)
        OSSL_PROVIDER_unload(src->deflt);
    OSSL_LIB_CTX_free(src->libctx);
}

int main(int argc, char **argv)
{
    const char *want = NULL;
    unsigned char seed[SEED_BYTES];
    unsigned char *fixed = NULL;
    unsigned long long limit = 0;
    struct source src;
    int opt, ok;

    while ((opt = getopt(argc, argv, "i:n:s:l")) != -1) {
        switch (opt) {
        case 'i':
            want = optarg;
            break;
        case 'n':
            limit = strtoull(optarg, NULL, 0);
            break;
        case 's':
            if (!parse_seed(optarg, seed))
                usage();
            fixed = seed;
            break;
        case 'l':
            return list_kernels();
        default:
            usage();
        }
    }
    if (optind != argc)
        usage();
    /* a reader that stops early is the normal end for a battery */
    signal(SIGPIPE, SIG_IGN);

    ok = source_open(&src, fixed) && source_start(&src, want)
         && source_stream(&src, limit);
    if (!ok)
        ERR_print_errors_fp(stderr);
    source_close(&src);
    return ok ? 0 : 1;
}
