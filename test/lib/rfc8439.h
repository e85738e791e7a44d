/* SPDX-License-Identifier: Apache-2.0 */
/*
 * RFC 8439 ChaCha20 vectors, as hex strings.  OpenSSL-free.
 */
#ifndef CHACHARNG_TEST_RFC8439_H
#define CHACHARNG_TEST_RFC8439_H

#include <stddef.h>
#include <stdint.h>

/* One block-function vector: key, nonce, counter, expected keystream. */
struct rfc8439_block {
    const char *what, *key, *nonce;
    uint32_t counter;
    const char *keystream;
};

/* [0] is section 2.3.2, the block function's example; then appendix A.1. */
extern const struct rfc8439_block rfc8439_blocks[];
extern const size_t rfc8439_nblocks;

/*
 * Section 2.4.2: the sunscreen plaintext, and its ciphertext under
 * rfc8439_blocks[0]'s key, nonce 000000000000004a00000000, counter 1.
 */
extern const char rfc8439_sunscreen[];
extern const char rfc8439_sunscreen_ct[];

#endif
