/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Every ChaCha20 kernel, and each of its size-selected paths forced
 * (chacha_impl_variants()), against a ChaCha20 that is not ours: OpenSSL's
 * EVP ChaCha20 from the default provider (IV = 32-bit little-endian counter
 * || 96-bit nonce), for every block count 1..200, a few large ones, and
 * several counters, through the plain and the keyed entry (block 0 to a
 * buffer of its own).  OpenSSL carries a counter overflow into the nonce,
 * which the construction forbids, so at the 2^32 wrap the reference is
 * built in two EVP calls: up to the wrap, then from counter 0 with the
 * same nonce.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "chacha.h"
#include "testutil.h"

#define SMALL_BLOCKS 200

static OSSL_LIB_CTX *libctx;
static EVP_CIPHER *chacha;

/* |nblocks| of reference keystream at |counter|, wrapping without carry. */
static int evp_keystream(uint8_t *out, const uint8_t key[32],
                         const uint8_t nonce[12], uint32_t counter,
                         size_t nblocks)
{
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    uint8_t iv[16];
    size_t done = 0;
    int ok = c != NULL, len;

    while (ok && done < nblocks) {
        size_t run = nblocks - done;
        uint64_t to_wrap = (uint64_t)1 << 32;

        to_wrap -= counter;
        if (run > to_wrap)
            run = (size_t)to_wrap;
        iv[0] = (uint8_t)counter;
        iv[1] = (uint8_t)(counter >> 8);
        iv[2] = (uint8_t)(counter >> 16);
        iv[3] = (uint8_t)(counter >> 24);
        memcpy(iv + 4, nonce, 12);
        memset(out + done * 64, 0, run * 64);
        ok = EVP_EncryptInit_ex2(c, chacha, key, iv, NULL)
             && EVP_EncryptUpdate(c, out + done * 64, &len, out + done * 64,
                                  (int)(run * 64))
             && (size_t)len == run * 64;
        done += run;
        counter += (uint32_t)run;
    }
    EVP_CIPHER_CTX_free(c);
    return ok;
}

static void check_impl(const struct chacha_impl *impl)
{
    static const uint32_t counters[] = {
        0, 1, 0x12345678u, 0xffffffc0u, 0xfffffffdu, 0xffffffffu
    };
    /* block counts checked after every one of 1..SMALL_BLOCKS */
    static const size_t big[] = { 257, 1024, 4099, 16384 };
    uint8_t *got = malloc(16384 * 64 + 7), *want = malloc(16384 * 64);
    uint8_t key[32], nonce[12], keyblk[64 + 5];
    uint32_t state[16];
    size_t ci, si, i, nb, cases = 0, bad = 0, evp_bad = 0;

    if (!TU_OK(got != NULL && want != NULL, "%s: allocate", impl->name))
        goto end;
    for (ci = 0; ci < sizeof(counters) / sizeof(counters[0]); ci++) {
        for (i = 0; i < 32; i++)
            key[i] = (uint8_t)(ci * 31 + i * 5);
        for (i = 0; i < 12; i++)
            nonce[i] = (uint8_t)(ci + i * 11);
        chacha_state_init(state, key, counters[ci], nonce);
        for (si = 0; si < SMALL_BLOCKS + sizeof(big) / sizeof(big[0]); si++) {
            size_t off = (si * 3) % 8; /* misaligned output too */

            nb = si < SMALL_BLOCKS ? si + 1 : big[si - SMALL_BLOCKS];
            if (!evp_keystream(want, key, nonce, counters[ci], nb)) {
                evp_bad++;
                continue;
            }
            impl->blocks(got + off, state, nb);
            cases++;
            if (memcmp(got + off, want, nb * 64) != 0 && bad++ == 0)
                tu_diag("%s: differs from EVP at counter %#x, %zu blocks",
                        impl->name, counters[ci], nb);
            /* the keyed batch: block 0 apart, nb - 1 blocks after it */
            impl->blocks_key(keyblk + (si % 5), got + off + 1, state, nb - 1);
            cases++;
            if ((memcmp(keyblk + (si % 5), want, 64) != 0
                 || memcmp(got + off + 1, want + 64, (nb - 1) * 64) != 0)
                && bad++ == 0)
                tu_diag("%s: keyed batch differs from EVP at counter %#x, "
                        "%zu blocks",
                        impl->name, counters[ci], nb);
        }
    }
    TU_OK(evp_bad == 0, "%s: OpenSSL EVP ChaCha20 reference computed",
          impl->name);
    TU_OK(cases > 0 && bad == 0,
          "%s: equals OpenSSL EVP ChaCha20 in %zu cases (counters incl. "
          "2^32 wrap, 1..%d and up to 16384 blocks)",
          impl->name, cases, SMALL_BLOCKS);
end:
    free(got);
    free(want);
}

static void body(void)
{
    libctx = OSSL_LIB_CTX_new();
    chacha = libctx != NULL ? EVP_CIPHER_fetch(libctx, "ChaCha20", NULL) : NULL;
    if (!TU_OK(chacha != NULL, "fetch OpenSSL's ChaCha20"))
        goto end;
    tu_each_kernel_path(check_impl);
end:
    EVP_CIPHER_free(chacha);
    OSSL_LIB_CTX_free(libctx);
}

int main(void)
{
    return tu_main_once(body);
}
