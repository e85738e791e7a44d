/* SPDX-License-Identifier: Apache-2.0 */
/*
 * chacha_scrub_regs() (wipe.h): zeroes every call-clobbered register at
 * the full width the CPU has, whoever wrote it last.  The C kernel's
 * entries end with it, because the functions they call are not theirs to
 * vouch for: under ASan, TSan or valgrind a memcpy of the state is the
 * sanitizer's or the C library's, which moves the key through ymm (AVX)
 * or ymm16-31 (AVX-512) registers that the compiler's own clearing
 * (CHACHA_CLEAR_REGS: only the registers a function itself used) never
 * sees.  Written in assembly because C cannot name registers; on targets
 * other than x86_64 and aarch64 it does nothing.
 */
#include "chacha.h"
#include "wipe.h"

#if defined(__x86_64__) && defined(__ELF__)

_Static_assert(CHACHA_CPU_YMM_STATE == 0x100 && CHACHA_CPU_ZMM_STATE == 0x200,
               "the bits the assembly below tests");

/*
 * rdi: the CHACHA_CPU_* bits.  General registers rax, rcx, rdx, rsi, rdi,
 * r8-r11; then zmm16-31 and k0-k7 where the OS saves them; vzeroall (ymm0-15
 * whole, and zmm0-15 with them) where AVX is on, else pxor of xmm0-15.
 * The flags (a comparison of public bits) are all it leaves behind.
 */
__asm__(".pushsection .text\n"
        ".type chacharng_scrub_regs_x86_64, @function\n"
        "chacharng_scrub_regs_x86_64:\n"
#ifdef __CET__
        "  endbr64\n"
#endif
        "  test $0x200, %edi\n" /* CHACHA_CPU_ZMM_STATE */
        "  jz 1f\n"
        "  vpxord %zmm16, %zmm16, %zmm16\n"
        "  vpxord %zmm17, %zmm17, %zmm17\n"
        "  vpxord %zmm18, %zmm18, %zmm18\n"
        "  vpxord %zmm19, %zmm19, %zmm19\n"
        "  vpxord %zmm20, %zmm20, %zmm20\n"
        "  vpxord %zmm21, %zmm21, %zmm21\n"
        "  vpxord %zmm22, %zmm22, %zmm22\n"
        "  vpxord %zmm23, %zmm23, %zmm23\n"
        "  vpxord %zmm24, %zmm24, %zmm24\n"
        "  vpxord %zmm25, %zmm25, %zmm25\n"
        "  vpxord %zmm26, %zmm26, %zmm26\n"
        "  vpxord %zmm27, %zmm27, %zmm27\n"
        "  vpxord %zmm28, %zmm28, %zmm28\n"
        "  vpxord %zmm29, %zmm29, %zmm29\n"
        "  vpxord %zmm30, %zmm30, %zmm30\n"
        "  vpxord %zmm31, %zmm31, %zmm31\n"
        "  kxorw %k0, %k0, %k0\n"
        "  kxorw %k1, %k1, %k1\n"
        "  kxorw %k2, %k2, %k2\n"
        "  kxorw %k3, %k3, %k3\n"
        "  kxorw %k4, %k4, %k4\n"
        "  kxorw %k5, %k5, %k5\n"
        "  kxorw %k6, %k6, %k6\n"
        "  kxorw %k7, %k7, %k7\n"
        "1:\n"
        "  test $0x100, %edi\n" /* CHACHA_CPU_YMM_STATE */
        "  jz 2f\n"
        "  vzeroall\n"
        "  jmp 3f\n"
        "2:\n"
        "  pxor %xmm0, %xmm0\n"
        "  pxor %xmm1, %xmm1\n"
        "  pxor %xmm2, %xmm2\n"
        "  pxor %xmm3, %xmm3\n"
        "  pxor %xmm4, %xmm4\n"
        "  pxor %xmm5, %xmm5\n"
        "  pxor %xmm6, %xmm6\n"
        "  pxor %xmm7, %xmm7\n"
        "  pxor %xmm8, %xmm8\n"
        "  pxor %xmm9, %xmm9\n"
        "  pxor %xmm10, %xmm10\n"
        "  pxor %xmm11, %xmm11\n"
        "  pxor %xmm12, %xmm12\n"
        "  pxor %xmm13, %xmm13\n"
        "  pxor %xmm14, %xmm14\n"
        "  pxor %xmm15, %xmm15\n"
        "3:\n"
        "  xor %eax, %eax\n"
        "  xor %ecx, %ecx\n"
        "  xor %edx, %edx\n"
        "  xor %esi, %esi\n"
        "  xor %edi, %edi\n"
        "  xor %r8d, %r8d\n"
        "  xor %r9d, %r9d\n"
        "  xor %r10d, %r10d\n"
        "  xor %r11d, %r11d\n"
        "  ret\n"
        ".size chacharng_scrub_regs_x86_64, .-chacharng_scrub_regs_x86_64\n"
        ".popsection\n");

void chacharng_scrub_regs_x86_64(uint32_t features);

/* Which registers exist is asked once; the answer never changes. */
static uint32_t scrub_features(void)
{
    static uint32_t known; /* atomic; 0: not asked yet (SSE2 is always on) */
    uint32_t f = __atomic_load_n(&known, __ATOMIC_RELAXED);

    if (f == 0) {
        f = chacha_cpu_features();
        __atomic_store_n(&known, f, __ATOMIC_RELAXED);
    }
    return f;
}

void chacha_scrub_regs(void)
{
    chacharng_scrub_regs_x86_64(scrub_features());
}

#elif defined(__aarch64__) && defined(__ELF__)

/*
 * x0-x17 and v0-v7, v16-v31 whole; of v8-v15 only the upper halves, as
 * their lower halves (d8-d15) belong to the caller.  Writing a v register
 * also zeroes the rest of its SVE z register.
 */
__asm__(".pushsection .text\n"
        ".type chacharng_scrub_regs_aarch64, %function\n"
        "chacharng_scrub_regs_aarch64:\n"
#if defined(__ARM_FEATURE_BTI_DEFAULT) && __ARM_FEATURE_BTI_DEFAULT
        "  hint #34\n" /* bti c */
#endif
        "  movi v0.16b, #0\n  movi v1.16b, #0\n  movi v2.16b, #0\n"
        "  movi v3.16b, #0\n  movi v4.16b, #0\n  movi v5.16b, #0\n"
        "  movi v6.16b, #0\n  movi v7.16b, #0\n"
        "  mov v8.d[1], xzr\n  mov v9.d[1], xzr\n  mov v10.d[1], xzr\n"
        "  mov v11.d[1], xzr\n  mov v12.d[1], xzr\n  mov v13.d[1], xzr\n"
        "  mov v14.d[1], xzr\n  mov v15.d[1], xzr\n"
        "  movi v16.16b, #0\n  movi v17.16b, #0\n  movi v18.16b, #0\n"
        "  movi v19.16b, #0\n  movi v20.16b, #0\n  movi v21.16b, #0\n"
        "  movi v22.16b, #0\n  movi v23.16b, #0\n  movi v24.16b, #0\n"
        "  movi v25.16b, #0\n  movi v26.16b, #0\n  movi v27.16b, #0\n"
        "  movi v28.16b, #0\n  movi v29.16b, #0\n  movi v30.16b, #0\n"
        "  movi v31.16b, #0\n"
        "  mov x0, xzr\n  mov x1, xzr\n  mov x2, xzr\n  mov x3, xzr\n"
        "  mov x4, xzr\n  mov x5, xzr\n  mov x6, xzr\n  mov x7, xzr\n"
        "  mov x8, xzr\n  mov x9, xzr\n  mov x10, xzr\n  mov x11, xzr\n"
        "  mov x12, xzr\n  mov x13, xzr\n  mov x14, xzr\n  mov x15, xzr\n"
        "  mov x16, xzr\n  mov x17, xzr\n"
        "  ret\n"
        ".size chacharng_scrub_regs_aarch64, .-chacharng_scrub_regs_aarch64\n"
        ".popsection\n");

void chacharng_scrub_regs_aarch64(void);

void chacha_scrub_regs(void)
{
    chacharng_scrub_regs_aarch64();
}

#else

void chacha_scrub_regs(void)
{
}

#endif
