/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ChaCha20 keystream kernel for x86_64 with SSSE3: the SSE2 kernel
 * (chacha_sse2_x86_64.S, which documents the contract, frame and batches)
 * with pshufb for the rotations by 16 and by 8.  Every x86_64 CPU with
 * SSSE3 and without AVX2 runs this one: a quarter round is 18 vector
 * instructions instead of 22, with the rotations OpenSSL's own 4-block
 * ChaCha20 uses on such CPUs.
 *
 * void chacharng_chacha_blocks_ssse3(uint8_t *out, const uint32_t st[16],
 *                                    size_t nblocks);
 * void chacharng_chacha_blocks_key_ssse3(uint8_t *key, uint8_t *out,
 *                                        const uint32_t st[16],
 *                                        size_t nblocks);
 */
#define CHACHARNG_KERNEL_SSSE3 1
#include "chacha_sse2_x86_64.S"
