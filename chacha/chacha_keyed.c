/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The keyed batch of chacha.h for every kernel that has no entry of its
 * own: the key block by one call of the kernel, the other blocks by a
 * second call on a copy of the state with the counter one on.  The copy
 * holds the key, so it is wiped before returning.  Same bytes as the
 * kernel's own nblocks + 1 blocks; no speed of its own.
 */
#include <string.h>

#include "config.h"
#include "chacha.h"
#include "wipe.h"

/*
 * The copy's words pass through registers, the memcpy's too (a sanitizer's
 * or the C library's, in any vector register): all zeroed after the last
 * call (chacha_scrub_regs).
 */
CHACHA_CLEAR_REGS
void chacha_blocks_key_via(chacha_blocks_fn *blocks, uint8_t *key, uint8_t *out,
                           const uint32_t state[16], size_t nblocks)
{
    uint32_t next[CHACHA_STATE_WORDS];

    blocks(key, state, 1);
    if (nblocks == 0) {
        chacha_scrub_regs();
        return;
    }
    memcpy(next, state, sizeof(next));
    next[CHACHA_COUNTER_WORD] = state[CHACHA_COUNTER_WORD] + 1; /* mod 2^32 */
    blocks(out, next, nblocks);
    /* the key and nonce words of the copy */
    chacha_wipe(next, sizeof(next));
    chacha_scrub_regs();
}

#define KEYED_VIA(isa)                                                         \
    void chacharng_chacha_blocks_key_##isa(                                    \
        uint8_t *key, uint8_t *out, const uint32_t state[16], size_t nblocks)  \
    {                                                                          \
        chacha_blocks_key_via(chacharng_chacha_blocks_##isa, key, out, state,  \
                              nblocks);                                        \
    }

KEYED_VIA(generic)
#if CHACHARNG_HAVE_NEON_ASM
KEYED_VIA(neon)
KEYED_VIA(neon_x8)
KEYED_VIA(neon_x6)
KEYED_VIA(neon_x1)
#endif
#if CHACHARNG_HAVE_VX_ASM
KEYED_VIA(vx)
#endif
#if CHACHARNG_HAVE_RVV_ASM
KEYED_VIA(rvv)
KEYED_VIA(rvv_vmadd)
KEYED_VIA(rvv_vror)
#endif
