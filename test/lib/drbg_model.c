/* SPDX-License-Identifier: Apache-2.0 */
/* The model of the construction on EVP ChaCha20 (see drbg_model.h). */
#include "drbg_model.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "testutil.h"

int model_init(struct model *m, const EVP_CIPHER *chacha20,
               const unsigned char seed[MODEL_SEED_LEN])
{
    memset(m, 0, sizeof(*m));
    memcpy(m->seed, seed, MODEL_SEED_LEN);
    m->reseed_requests = MODEL_DEFAULT_RESEED_REQUESTS;
    m->chacha20 = chacha20;
    m->cctx = EVP_CIPHER_CTX_new();
    return m->cctx != NULL;
}

void model_free(struct model *m)
{
    EVP_CIPHER_CTX_free(m->cctx);
    OPENSSL_cleanse(m, sizeof(*m));
}

void model_ks(struct model *m, uint32_t ctr, unsigned char *out, size_t len)
{
    unsigned char iv[16];
    size_t done, piece;
    int outl;

    iv[0] = (unsigned char)ctr;
    iv[1] = (unsigned char)(ctr >> 8);
    iv[2] = (unsigned char)(ctr >> 16);
    iv[3] = (unsigned char)(ctr >> 24);
    memcpy(iv + 4, m->nonce, MODEL_NONCE_LEN);
    memset(out, 0, len);
    if (!EVP_EncryptInit_ex2(m->cctx, m->chacha20, m->key, iv, NULL)) {
        m->failed = 1;
        return;
    }
    /* EVP_EncryptUpdate takes an int length: feed it bounded pieces */
    for (done = 0; done < len; done += piece) {
        piece = tu_min_size(len - done, (size_t)1 << 24);
        if (!EVP_EncryptUpdate(m->cctx, out + done, &outl, out + done,
                               (int)piece)
            || (size_t)outl != piece) {
            m->failed = 1;
            return;
        }
    }
}

/* K = X[0..32), N = X[32..44); the caller's block is wiped afterwards. */
static void model_set_kn(struct model *m, unsigned char *x)
{
    memcpy(m->key, x, MODEL_KEY_LEN);
    memcpy(m->nonce, x + MODEL_KEY_LEN, MODEL_NONCE_LEN);
    OPENSSL_cleanse(x, MODEL_BLOCK_LEN);
}

static void model_absorb(struct model *m, const unsigned char *data, size_t len)
{
    unsigned char x[MODEL_BLOCK_LEN];
    size_t off, n, i;

    if (len == 0)
        return;
    for (off = 0; off < len; off += n) {
        n = tu_min_size(len - off, MODEL_CHUNK_LEN);
        model_ks(m, 0, x, MODEL_BLOCK_LEN);
        for (i = 0; i < n; i++)
            x[i] ^= data[off + i];
        model_set_kn(m, x);
    }
    OPENSSL_cleanse(m->buf, sizeof(m->buf));
    m->avail = 0;
}

static void model_refill(struct model *m)
{
    unsigned char x[MODEL_REFILL_BLOCKS * MODEL_BLOCK_LEN];

    model_ks(m, 0, x, sizeof(x));
    memcpy(m->buf, x + MODEL_BLOCK_LEN, MODEL_BUF_LEN);
    model_set_kn(m, x);
    OPENSSL_cleanse(x, sizeof(x));
    m->avail = MODEL_BUF_LEN;
}

/* Take |n| bytes from the buffer front; the caller checked n <= avail. */
static void model_take(struct model *m, unsigned char *out, size_t n)
{
    unsigned char *front = m->buf + (MODEL_BUF_LEN - m->avail);

    memcpy(out, front, n);
    OPENSSL_cleanse(front, n);
    m->avail -= n;
}

/* The serving half of generate, after the reseed-or-absorb step. */
static void model_serve(struct model *m, unsigned char *out, size_t n)
{
    size_t first = tu_min_size(n, m->avail), r = n - first;

    model_take(m, out, first);
    out += first;
    if (r == 0)
        return;
    if (r > MODEL_BUF_LEN) {
        unsigned char y[MODEL_BLOCK_LEN];

        /* Y = KS(K, N, 0, 1); blocks 1.. go straight out; rekey from Y */
        model_ks(m, 0, y, MODEL_BLOCK_LEN);
        model_ks(m, 1, out, r);
        model_set_kn(m, y);
        return;
    }
    model_refill(m);
    model_take(m, out, r);
}

void model_reseed(struct model *m, const unsigned char *ent, size_t entlen,
                  const unsigned char *adin, size_t adinlen)
{
    size_t len = entlen + MODEL_SEED_LEN + adinlen;
    unsigned char *cat = tu_xmalloc(len);

    if (entlen != 0)
        memcpy(cat, ent, entlen);
    memcpy(cat + entlen, m->seed, MODEL_SEED_LEN);
    if (adinlen != 0)
        memcpy(cat + entlen + MODEL_SEED_LEN, adin, adinlen);
    model_absorb(m, cat, len);
    OPENSSL_cleanse(cat, len);
    free(cat);
    m->calls = 0;
    m->bytes = 0;
    m->seeds++;
}

void model_instantiate(struct model *m, const unsigned char *pers,
                       size_t perslen)
{
    size_t len = MODEL_SEED_LEN + perslen;
    unsigned char *cat = tu_xmalloc(len);

    memset(m->key, 0, sizeof(m->key));
    memset(m->nonce, 0, sizeof(m->nonce));
    OPENSSL_cleanse(m->buf, sizeof(m->buf));
    m->avail = 0;
    memcpy(cat, m->seed, MODEL_SEED_LEN);
    if (perslen != 0)
        memcpy(cat + MODEL_SEED_LEN, pers, perslen);
    model_absorb(m, cat, len);
    OPENSSL_cleanse(cat, len);
    free(cat);
    m->calls = 0;
    m->bytes = 0;
    m->seeds++;
}

void model_provider_generate(struct model *m, unsigned char *out, size_t n,
                             int pred_res, const unsigned char *adin,
                             size_t adinlen)
{
    int due = pred_res
              || (m->reseed_requests != 0 && m->calls >= m->reseed_requests)
              || m->bytes >= MODEL_RESEED_BYTES;

    if (due)
        model_reseed(m, NULL, 0, adin, adinlen);
    else
        model_absorb(m, adin, adinlen);
    model_serve(m, out, n);
    m->calls++;
    m->bytes += n;
}

void model_evp_generate(struct model *m, unsigned char *out, size_t n,
                        int pred_res, const unsigned char *adin, size_t adinlen)
{
    size_t chunk;

    for (; n > 0; n -= chunk, out += chunk) {
        chunk = tu_min_size(n, MODEL_MAX_REQUEST);
        model_provider_generate(m, out, chunk, pred_res, adin, adinlen);
        pred_res = 0;
    }
}
