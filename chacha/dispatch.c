/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The table of compiled-in kernels, best first, and the self-test that a
 * kernel must pass before it is used.  Which kernels exist is a build-time
 * matter (configure's assembler probes); which may run is a run-time one
 * (chacha_cpu_features()).  Nothing here is on the generate path.
 */
#include <string.h>

#include "config.h"
#include "chacha.h"
#include "wipe.h"

static const struct chacha_impl impls[] = {
#if CHACHARNG_HAVE_AVX512_ASM
    { "avx512", CHACHA_CPU_AVX512, 32, chacharng_chacha_blocks_avx512,
      chacharng_chacha_blocks_key_avx512 },
#endif
#if CHACHARNG_HAVE_AVX2_ASM
    { "avx2", CHACHA_CPU_AVX2, 16, chacharng_chacha_blocks_avx2,
      chacharng_chacha_blocks_key_avx2 },
#endif
#if CHACHARNG_HAVE_SSE2_ASM
    /* the SSE2 kernel assembled with pshufb (asm/chacha_ssse3_x86_64.S) */
    { "ssse3", CHACHA_CPU_SSSE3, 8, chacharng_chacha_blocks_ssse3,
      chacharng_chacha_blocks_key_ssse3 },
    { "sse2", CHACHA_CPU_SSE2, 8, chacharng_chacha_blocks_sse2,
      chacharng_chacha_blocks_key_sse2 },
#endif
#if CHACHARNG_HAVE_NEON_ASM
    { "neon", CHACHA_CPU_NEON, 8, chacharng_chacha_blocks_neon,
      chacharng_chacha_blocks_key_neon },
#endif
#if CHACHARNG_HAVE_VX_ASM
    { "vx", CHACHA_CPU_VX, 8, chacharng_chacha_blocks_vx,
      chacharng_chacha_blocks_key_vx },
#endif
#if CHACHARNG_HAVE_VSX_ASM
    { "vsx", CHACHA_CPU_VSX, 8, chacharng_chacha_blocks_vsx,
      chacharng_chacha_blocks_key_vsx },
#endif
#if CHACHARNG_HAVE_RVV_ASM
    { "rvv", CHACHA_CPU_RVV, 17, chacharng_chacha_blocks_rvv,
      chacharng_chacha_blocks_key_rvv },
#endif
    { "generic", 0, 1, chacharng_chacha_blocks_generic,
      chacharng_chacha_blocks_key_generic },
};

#define NIMPLS (sizeof(impls) / sizeof(impls[0]))

#if CHACHARNG_HAVE_NEON_ASM
/*
 * The NEON kernel runs passes of eight blocks (six in NEON registers, two
 * on the integer pipes) or six (four and two), and one or two last blocks
 * on the integer pipes only.
 */
static const struct chacha_impl neon_variants[] = {
    { "neon/x8", CHACHA_CPU_NEON, 8, chacharng_chacha_blocks_neon_x8,
      chacharng_chacha_blocks_key_neon_x8 },
    { "neon/x6", CHACHA_CPU_NEON, 6, chacharng_chacha_blocks_neon_x6,
      chacharng_chacha_blocks_key_neon_x6 },
    { "neon/x1", CHACHA_CPU_NEON, 1, chacharng_chacha_blocks_neon_x1,
      chacharng_chacha_blocks_key_neon_x1 },
};
#endif

#if CHACHARNG_HAVE_VSX_ASM
/* The VSX kernel runs four-block passes, and on POWER10 eight-block ones
 * while five or more blocks are left. */
static const struct chacha_impl vsx_variants[] = {
    { "vsx/x8", CHACHA_CPU_VSX, 8, chacharng_chacha_blocks_vsx_x8,
      chacharng_chacha_blocks_key_vsx_x8 },
    { "vsx/x4", CHACHA_CPU_VSX, 4, chacharng_chacha_blocks_vsx_x4,
      chacharng_chacha_blocks_key_vsx_x4 },
};
#endif

#if CHACHARNG_HAVE_RVV_ASM
/* The RVV kernel rotates with Zvkb's vror where it may, else vsrl + vmadd. */
static const struct chacha_impl rvv_variants[] = {
    { "rvv/vmadd", CHACHA_CPU_RVV, 17, chacharng_chacha_blocks_rvv_vmadd,
      chacharng_chacha_blocks_key_rvv_vmadd },
    { "rvv/vror", CHACHA_CPU_RVV | CHACHA_CPU_ZVKB, 17,
      chacharng_chacha_blocks_rvv_vror, chacharng_chacha_blocks_key_rvv_vror },
};
#endif

const struct chacha_impl *chacha_impl_list(size_t *n)
{
    *n = NIMPLS;
    return impls;
}

const struct chacha_impl *chacha_impl_variants(const struct chacha_impl *impl,
                                               size_t *n)
{
#if CHACHARNG_HAVE_NEON_ASM
    if (impl->blocks == chacharng_chacha_blocks_neon) {
        *n = sizeof(neon_variants) / sizeof(neon_variants[0]);
        return neon_variants;
    }
#endif
#if CHACHARNG_HAVE_VSX_ASM
    if (impl->blocks == chacharng_chacha_blocks_vsx) {
        *n = sizeof(vsx_variants) / sizeof(vsx_variants[0]);
        return vsx_variants;
    }
#endif
#if CHACHARNG_HAVE_RVV_ASM
    if (impl->blocks == chacharng_chacha_blocks_rvv) {
        *n = sizeof(rvv_variants) / sizeof(rvv_variants[0]);
        return rvv_variants;
    }
#endif
    (void)impl;
    *n = 0;
    return NULL;
}

int chacha_impl_supported(const struct chacha_impl *impl)
{
    return (chacha_cpu_features() & impl->needs) == impl->needs;
}

const struct chacha_impl *chacha_impl_by_name(const char *name)
{
    size_t i;

    for (i = 0; i < NIMPLS; i++)
        if (strcmp(impls[i].name, name) == 0)
            return &impls[i];
    return NULL;
}

const struct chacha_impl *chacha_impl_best(void)
{
    size_t i;

    for (i = 0; i < NIMPLS; i++)
        if (chacha_impl_supported(&impls[i]))
            return &impls[i];
    return &impls[NIMPLS - 1];
}

/* RFC 8439 section 2.3.2: key 00..1f, nonce 00:00:00:09:00:00:00:4a:00..,
 * block counter 1. */
static const uint8_t rfc_2_3_2[] =
    "\x10\xf1\xe7\xe4\xd1\x3b\x59\x15\x50\x0f\xdd\x1f\xa3\x20\x71\xc4"
    "\xc7\xd1\xf4\xc7\x33\xc0\x68\x03\x04\x22\xaa\x9a\xc3\xd4\x6c\x4e"
    "\xd2\x82\x64\x46\x07\x9f\xaa\x09\x14\xc2\xd7\x05\xd9\x8b\x02\xa2"
    "\xb5\x12\x9c\xd1\xde\x16\x4e\xb9\xcb\xd0\x83\xe8\xa2\x50\x3c\x4e";

/* RFC 8439 appendix A.1, test vector #1: all-zero key and nonce, counter 0. */
static const uint8_t rfc_a_1_1[] =
    "\x76\xb8\xe0\xad\xa0\xf1\x3d\x90\x40\x5d\x6a\xe5\x53\x86\xbd\x28"
    "\xbd\xd2\x19\xb8\xa0\x8d\xed\x1a\xa8\x36\xef\xcc\x8b\x77\x0d\xc7"
    "\xda\x41\x59\x7c\x51\x57\x48\x8d\x77\x24\xe0\x3f\xb8\xd8\x4a\x37"
    "\x6a\x43\xb8\xf4\x15\x18\xa1\x1c\xc3\x87\xb6\x69\xb2\xee\x65\x86";

/* (Each string above is its 64 bytes and a NUL, which no compare reads.) */

/* Widest batch checked: two full iterations of a 16-block kernel plus tail. */
#define SELFTEST_MAX_BLOCKS 35

/* The two RFC 8439 blocks through |blocks|.  Returns 1 if both match. */
static int rfc_vectors_ok(chacha_blocks_fn *blocks)
{
    static const uint8_t zero[32];
    uint8_t key[32], got[64];
    uint8_t nonce[12] = { 0, 0, 0, 0x09, 0, 0, 0, 0x4a, 0, 0, 0, 0 };
    uint32_t state[16];
    int i, ok = 1;

    for (i = 0; i < 32; i++)
        key[i] = (uint8_t)i;
    chacha_state_init(state, key, 1, nonce);
    blocks(got, state, 1);
    ok &= memcmp(got, rfc_2_3_2, 64) == 0;

    chacha_state_init(state, zero, 0, zero);
    blocks(got, state, 1);
    ok &= memcmp(got, rfc_a_1_1, 64) == 0;
    return ok;
}

int chacha_impl_selftest(const struct chacha_impl *impl)
{
    static const uint8_t key[32] = { 0x42, 0x17 }, nonce[12] = { 0x99 };
    uint8_t got[SELFTEST_MAX_BLOCKS * 64], want[SELFTEST_MAX_BLOCKS * 64];
    uint32_t state[16];
    size_t n;
    int ok;

    ok = rfc_vectors_ok(chacharng_chacha_blocks_generic);
    if (impl->blocks != chacharng_chacha_blocks_generic)
        ok &= rfc_vectors_ok(impl->blocks);

    /*
     * Every batch size up to SELFTEST_MAX_BLOCKS against the vector-checked
     * portable kernel, from a counter that wraps mid-batch, so each wide
     * iteration and each tail path of a SIMD kernel runs once.
     */
    chacha_state_init(state, key, 0xfffffff0u, nonce);
    chacharng_chacha_blocks_generic(want, state, SELFTEST_MAX_BLOCKS);
    for (n = 1; n <= SELFTEST_MAX_BLOCKS; n++) {
        impl->blocks(got, state, n);
        ok &= memcmp(got, want, n * 64) == 0;
    }
    /* The keyed batch: block 0 apart, then the others, same bytes. */
    for (n = 0; n < SELFTEST_MAX_BLOCKS; n++) {
        impl->blocks_key(got, got + 64, state, n);
        ok &= memcmp(got, want, (n + 1) * 64) == 0;
    }
    /* keystream of a fixed public key: nothing secret to wipe here */
    return ok;
}
