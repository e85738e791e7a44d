/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Portable ChaCha20 block function, RFC 8439 section 2.3.  The reference
 * every SIMD kernel is checked against, and the kernel used on targets
 * without one (big-endian included: bytes are stored explicitly little-endian).
 */
#include "chacha.h"
#include "wipe.h"

#define ROTL32(v, n) (((v) << (n)) | ((v) >> (32 - (n))))

/* One add-xor-rotate step of RFC 8439's quarter round: a += b, d ^= a,
 * d <<<= r. */
#define ARX(a, b, d, r)                                                        \
    do {                                                                       \
        a += b;                                                                \
        d ^= a;                                                                \
        d = ROTL32(d, r);                                                      \
    } while (0)

#define QUARTERROUND(a, b, c, d)                                               \
    do {                                                                       \
        ARX(a, b, d, 16);                                                      \
        ARX(c, d, b, 12);                                                      \
        ARX(a, b, d, 8);                                                       \
        ARX(c, d, b, 7);                                                       \
    } while (0)

static inline void store32_le(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline uint32_t load32_le(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16
           | (uint32_t)p[3] << 24;
}

/* The key passes through registers here: they are zeroed on return. */
CHACHA_CLEAR_REGS
void chacha_state_init(uint32_t state[16], const uint8_t key[32],
                       uint32_t counter, const uint8_t nonce[12])
{
    int i;

    state[0] = 0x61707865; /* "expand 32-byte k" */
    state[1] = 0x3320646e;
    state[2] = 0x79622d32;
    state[3] = 0x6b206574;
    for (i = 0; i < 8; i++)
        state[4 + i] = load32_le(key + 4 * i);
    state[CHACHA_COUNTER_WORD] = counter;
    for (i = 0; i < 3; i++)
        state[13 + i] = load32_le(nonce + 4 * i);
}

/*
 * The block function proper.  Its locals hold the key, the nonce and every
 * round of every block; the compiler keeps them in registers and in spill
 * slots of its own choosing, so the frame is wiped by the caller below
 * (chacha_wipe_stack) and the registers are zeroed by it too
 * (chacha_scrub_regs), whatever the compiler, its flags or a sanitizer
 * made of this function and the calls in it.  On targets other than
 * x86_64 and aarch64 only CHACHA_CLEAR_REGS is left (the registers this
 * function used, where the compiler offers it): portable C cannot reach
 * the others.
 */
static __attribute__((noinline)) CHACHA_CLEAR_REGS void
blocks_unwiped(uint8_t *out, const uint32_t state[16], size_t nblocks)
{
    uint32_t x[16];
    uint32_t counter = state[CHACHA_COUNTER_WORD];
    int i;

    while (nblocks-- > 0) {
        for (i = 0; i < 16; i++)
            x[i] = state[i];
        x[CHACHA_COUNTER_WORD] = counter;
        for (i = 0; i < 10; i++) {
            QUARTERROUND(x[0], x[4], x[8], x[12]);
            QUARTERROUND(x[1], x[5], x[9], x[13]);
            QUARTERROUND(x[2], x[6], x[10], x[14]);
            QUARTERROUND(x[3], x[7], x[11], x[15]);
            QUARTERROUND(x[0], x[5], x[10], x[15]);
            QUARTERROUND(x[1], x[6], x[11], x[12]);
            QUARTERROUND(x[2], x[7], x[8], x[13]);
            QUARTERROUND(x[3], x[4], x[9], x[14]);
        }
        for (i = 0; i < 16; i++)
            store32_le(out + 4 * i, x[i] + (i == 12 ? counter : state[i]));
        out += CHACHA_BLOCK_BYTES;
        counter++; /* wraps modulo 2^32; word 13 is never touched */
    }
    /* x held a keystream block and the key mixed into it */
    chacha_wipe(x, sizeof(x));
}

void chacharng_chacha_blocks_generic(uint8_t *out, const uint32_t state[16],
                                     size_t nblocks)
{
    if (nblocks == 0)
        return;
    blocks_unwiped(out, state, nblocks);
    /* the spill slots of blocks_unwiped: state words and final rounds */
    chacha_wipe_stack();
    /* its registers and those of what it called (a sanitizer's memset) */
    chacha_scrub_regs();
}
