/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The project's wiping helpers, in one place:
 *
 *  - chacha_wipe(): the one secure-zero helper.  A plain memset of memory
 *    that is about to die may be removed by the compiler; the empty asm
 *    with a memory clobber makes the stores observable, as explicit_bzero
 *    does, without depending on a libc that has it.
 *  - chacha_wipe_stack(): zeroes the stack just below the calling frame,
 *    where the functions it called kept their frames.  C cannot name the
 *    slots a compiler spills locals to, so code whose locals hold key
 *    material runs in a callee and its caller wipes after it.
 *  - CHACHA_CLEAR_REGS: a function attribute that makes the function zero
 *    every call-clobbered register it used (general and vector) on return,
 *    where the compiler offers it (GCC 11+ on x86_64, aarch64, s390x and
 *    others; not clang up to 14).  Callee-saved registers are restored from
 *    the caller anyway.
 *  - chacha_clear_regs(): where the attribute is missing, zeroes the
 *    call-clobbered registers from an asm statement instead (x86_64:
 *    rax, rcx, rdx, rsi, rdi, r8-r11, xmm0-xmm15; aarch64: x0-x17,
 *    v0-v7, v16-v31), to be called right after the function that held
 *    the secrets returned.  Elsewhere it does nothing.
 */
#ifndef CHACHARNG_WIPE_H
#define CHACHARNG_WIPE_H

#include <string.h>

static inline void chacha_wipe(void *p, size_t n)
{
    if (n == 0)
        return;
    memset(p, 0, n);
    __asm__ __volatile__("" : : "r"(p) : "memory");
}

/*
 * Bytes chacha_wipe_stack() zeroes: well above the deepest frame it cleans
 * up after (the C kernel's: 224 bytes with GCC 12 -O2 on x86_64, 128 at
 * -O0 on aarch64; a leaf may also use the 128-byte x86_64 red zone), so
 * other compilers and flags fit.  t_drbg_stack checks it on each build.
 */
#define CHACHA_WIPE_STACK_BYTES 1024

/* Must not be inlined: its frame has to overlay the frames just gone. */
static __attribute__((noinline, unused)) void chacha_wipe_stack(void)
{
    unsigned char area[CHACHA_WIPE_STACK_BYTES];

    chacha_wipe(area, sizeof(area));
}

#if defined(__has_attribute)
#if __has_attribute(zero_call_used_regs)
#define CHACHA_CLEAR_REGS __attribute__((zero_call_used_regs("used")))
#endif
#endif
#ifdef CHACHA_CLEAR_REGS
#define chacha_clear_regs() ((void)0)
#else
#define CHACHA_CLEAR_REGS
#if defined(__x86_64__)
static inline void chacha_clear_regs(void)
{
    __asm__ __volatile__(
        "xorl %%eax, %%eax\n\txorl %%ecx, %%ecx\n\txorl %%edx, %%edx\n\t"
        "xorl %%esi, %%esi\n\txorl %%edi, %%edi\n\txorl %%r8d, %%r8d\n\t"
        "xorl %%r9d, %%r9d\n\txorl %%r10d, %%r10d\n\txorl %%r11d, %%r11d\n\t"
        "pxor %%xmm0, %%xmm0\n\tpxor %%xmm1, %%xmm1\n\t"
        "pxor %%xmm2, %%xmm2\n\tpxor %%xmm3, %%xmm3\n\t"
        "pxor %%xmm4, %%xmm4\n\tpxor %%xmm5, %%xmm5\n\t"
        "pxor %%xmm6, %%xmm6\n\tpxor %%xmm7, %%xmm7\n\t"
        "pxor %%xmm8, %%xmm8\n\tpxor %%xmm9, %%xmm9\n\t"
        "pxor %%xmm10, %%xmm10\n\tpxor %%xmm11, %%xmm11\n\t"
        "pxor %%xmm12, %%xmm12\n\tpxor %%xmm13, %%xmm13\n\t"
        "pxor %%xmm14, %%xmm14\n\tpxor %%xmm15, %%xmm15"
        :
        :
        : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "xmm0",
          "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
          "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "cc",
          "memory");
}
#elif defined(__aarch64__)
static inline void chacha_clear_regs(void)
{
    __asm__ __volatile__(
        "mov x0, xzr\n\tmov x1, xzr\n\tmov x2, xzr\n\tmov x3, xzr\n\t"
        "mov x4, xzr\n\tmov x5, xzr\n\tmov x6, xzr\n\tmov x7, xzr\n\t"
        "mov x8, xzr\n\tmov x9, xzr\n\tmov x10, xzr\n\tmov x11, xzr\n\t"
        "mov x12, xzr\n\tmov x13, xzr\n\tmov x14, xzr\n\tmov x15, xzr\n\t"
        "mov x16, xzr\n\tmov x17, xzr\n\t"
        "movi v0.16b, #0\n\tmovi v1.16b, #0\n\tmovi v2.16b, #0\n\t"
        "movi v3.16b, #0\n\tmovi v4.16b, #0\n\tmovi v5.16b, #0\n\t"
        "movi v6.16b, #0\n\tmovi v7.16b, #0\n\tmovi v16.16b, #0\n\t"
        "movi v17.16b, #0\n\tmovi v18.16b, #0\n\tmovi v19.16b, #0\n\t"
        "movi v20.16b, #0\n\tmovi v21.16b, #0\n\tmovi v22.16b, #0\n\t"
        "movi v23.16b, #0\n\tmovi v24.16b, #0\n\tmovi v25.16b, #0\n\t"
        "movi v26.16b, #0\n\tmovi v27.16b, #0\n\tmovi v28.16b, #0\n\t"
        "movi v29.16b, #0\n\tmovi v30.16b, #0\n\tmovi v31.16b, #0"
        :
        :
        : "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10",
          "x11", "x12", "x13", "x14", "x15", "x16", "x17", "v0", "v1", "v2",
          "v3", "v4", "v5", "v6", "v7", "v16", "v17", "v18", "v19", "v20",
          "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30",
          "v31", "cc", "memory");
}
#else
#define chacha_clear_regs() ((void)0)
#endif
#endif

#endif
