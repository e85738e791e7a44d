/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An independent model of the CHACHA20-DRBG construction (DESIGN.md
 * section 3) and of the reseed rules that decide which bytes come out
 * (section 4), written on OpenSSL's own EVP ChaCha20 so that neither our
 * kernels nor our generator code take part in computing expected bytes.
 * The known-answer driver (t_kat) runs it beside the provider.  It needs
 * libcrypto: the OpenSSL-free tests (t_drbg, which the s390x stage runs)
 * keep their pinned values instead.
 *
 * The numbers are written out here, not taken from the product's headers,
 * so that a wrong value there still fails a test.
 */
#ifndef CHACHARNG_TEST_DRBG_MODEL_H
#define CHACHARNG_TEST_DRBG_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

/* The constants of the construction and the interface (DESIGN.md 3-5). */
#define MODEL_SEED_LEN 48
#define MODEL_KEY_LEN 32
#define MODEL_NONCE_LEN 12
#define MODEL_BLOCK_LEN 64
#define MODEL_CHUNK_LEN (MODEL_KEY_LEN + MODEL_NONCE_LEN)
#define MODEL_REFILL_BLOCKS 16
#define MODEL_BUF_LEN ((MODEL_REFILL_BLOCKS - 1) * MODEL_BLOCK_LEN)
#define MODEL_MAX_REQUEST ((size_t)1 << 20)
#define MODEL_RESEED_BYTES ((uint64_t)16 << 20)
#define MODEL_DEFAULT_RESEED_REQUESTS 65536u
#define MODEL_STRENGTH 256
#define MODEL_MAX_ADIN 65536

struct model {
    const EVP_CIPHER *chacha20; /* EVP ChaCha20 of the default provider */
    EVP_CIPHER_CTX *cctx;
    unsigned char key[MODEL_KEY_LEN];
    unsigned char nonce[MODEL_NONCE_LEN];
    unsigned char buf[MODEL_BUF_LEN]; /* unread bytes are the last |avail| */
    size_t avail;
    unsigned char seed[MODEL_SEED_LEN]; /* what the parent hands out */
    unsigned int reseed_requests;       /* 0 = no limit */
    uint64_t calls;                     /* provider calls since the last seed */
    uint64_t bytes;                     /* bytes produced since the last seed */
    unsigned int seeds;                 /* instantiate + reseeds */
    int failed;                         /* an EVP call of the model failed */
};

/*
 * A model whose parent hands out |seed| at every (re)seed, computing with
 * |chacha20| (which must outlive it).  1 on success.
 */
int model_init(struct model *m, const EVP_CIPHER *chacha20,
               const unsigned char seed[MODEL_SEED_LEN]);

void model_free(struct model *m);

/*
 * |len| bytes of the keystream of (K, N) starting at block |ctr|, i.e. a
 * prefix of KS(K, N, ctr, ceil(len / 64)).  OpenSSL takes the counter as
 * the first four IV bytes (little-endian) and the nonce as the other twelve;
 * encrypting zeros in place yields the bare keystream.
 */
void model_ks(struct model *m, uint32_t ctr, unsigned char *out, size_t len);

/* absorb(ent || E || adin) as one absorb; E is the parent's 48 bytes. */
void model_reseed(struct model *m, const unsigned char *ent, size_t entlen,
                  const unsigned char *adin, size_t adinlen);

/* K = 0, N = 0, empty buffer, then absorb(E || pers). */
void model_instantiate(struct model *m, const unsigned char *pers,
                       size_t perslen);

/*
 * One call of the provider's generate entry point (n <= max_request).  The
 * reseed conditions are the ones a test here can reach: prediction
 * resistance, the call limit and the 16 MiB mark.  The time interval (an
 * hour by default) is never reached by a test run, and TEST-RAND has no
 * reseed_counter for a child to follow.
 */
void model_provider_generate(struct model *m, unsigned char *out, size_t n,
                             int pred_res, const unsigned char *adin,
                             size_t adinlen);

/*
 * EVP_RAND_generate as libcrypto's evp_rand_generate_locked() drives the
 * provider: chunks of at most max_request, each handed the same additional
 * input, prediction resistance passed with the first chunk only.  A
 * zero-length request never reaches the provider at all.
 */
void model_evp_generate(struct model *m, unsigned char *out, size_t n,
                        int pred_res, const unsigned char *adin,
                        size_t adinlen);

#endif
