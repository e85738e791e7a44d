/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rd_call() and rd_leaky_kernel() (see regdump.h), one assembly body per
 * architecture.  rd_call keeps |dump| in a callee-saved register across the
 * call and stores the registers right after it returns.  Before the call
 * it clears every register it dumps but the arguments and the kernel's
 * address: what the test's own code left there (a kernel that uses few
 * registers never overwrites it) must not be taken for the kernel's.
 */
#if defined(__s390x__)
#include <sys/auxv.h>
#endif

#include "regdump.h"

#ifdef RD_WORDS
int rd_usable(void)
{
#if defined(__s390x__)
    return (getauxval(AT_HWCAP) & HWCAP_S390_VXRS) != 0;
#else
    return 1;
#endif
}
#endif

#if defined(__x86_64__) && defined(__ELF__)
#include <cpuid.h>

uint32_t rd_features;

/* Asked apart from chacha/cpu.c, so that the check does not take the
 * word of the code it checks. */
static __attribute__((constructor)) void rd_find_features(void)
{
    unsigned int a, b, c, d, lo, hi;

    if (__get_cpuid_max(0, NULL) < 7)
        return;
    __cpuid(1, a, b, c, d);
    if (!(c & bit_OSXSAVE) || !(c & bit_AVX))
        return;
    __asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 0x6) != 0x6)
        return;
    rd_features = RD_HAS_YMM;
    __cpuid_count(7, 0, a, b, c, d);
    if ((lo & 0xe0) == 0xe0 && (b & bit_AVX512F))
        rd_features |= RD_HAS_ZMM;
}
#endif

#if defined(__x86_64__) && defined(__ELF__)
/*
 * The parts rd_call and rd_call_key share: clear the scratch registers
 * the arguments left alone and every xmm register, call the kernel in rax,
 * store the registers into the dump that rbx holds, return.
 */
/*
 * The registers wider than xmm0-15, cleared before the call where the
 * CPU has them (rd_features: AVX, AVX-512F) and dumped after it, from
 * byte RD_WIDE_AT of the dump: zmm0-31 whole (64 bytes each; with AVX
 * alone ymm0-15, 32 bytes each in the same places), then k0-k7 (8 bytes
 * each, the low 16 bits stored).
 */
#define RD_CLEAR_WIDE                                                          \
    "  testl $2, rd_features(%rip)\n"                                          \
    "  jz 1f\n"                                                                \
    "  vpxord %zmm16, %zmm16, %zmm16\n"                                        \
    "  vpxord %zmm17, %zmm17, %zmm17\n"                                        \
    "  vpxord %zmm18, %zmm18, %zmm18\n"                                        \
    "  vpxord %zmm19, %zmm19, %zmm19\n"                                        \
    "  vpxord %zmm20, %zmm20, %zmm20\n"                                        \
    "  vpxord %zmm21, %zmm21, %zmm21\n"                                        \
    "  vpxord %zmm22, %zmm22, %zmm22\n"                                        \
    "  vpxord %zmm23, %zmm23, %zmm23\n"                                        \
    "  vpxord %zmm24, %zmm24, %zmm24\n"                                        \
    "  vpxord %zmm25, %zmm25, %zmm25\n"                                        \
    "  vpxord %zmm26, %zmm26, %zmm26\n"                                        \
    "  vpxord %zmm27, %zmm27, %zmm27\n"                                        \
    "  vpxord %zmm28, %zmm28, %zmm28\n"                                        \
    "  vpxord %zmm29, %zmm29, %zmm29\n"                                        \
    "  vpxord %zmm30, %zmm30, %zmm30\n"                                        \
    "  vpxord %zmm31, %zmm31, %zmm31\n"                                        \
    "  kxorw %k0, %k0, %k0\n"                                                  \
    "  kxorw %k1, %k1, %k1\n"                                                  \
    "  kxorw %k2, %k2, %k2\n"                                                  \
    "  kxorw %k3, %k3, %k3\n"                                                  \
    "  kxorw %k4, %k4, %k4\n"                                                  \
    "  kxorw %k5, %k5, %k5\n"                                                  \
    "  kxorw %k6, %k6, %k6\n"                                                  \
    "  kxorw %k7, %k7, %k7\n"                                                  \
    "1:\n"                                                                     \
    "  testl $1, rd_features(%rip)\n"                                          \
    "  jz 2f\n"                                                                \
    "  vzeroall\n"                                                             \
    "2:\n"

#define RD_DUMP_WIDE                                                           \
    "  testl $2, rd_features(%rip)\n"                                          \
    "  jz 3f\n"                                                                \
    "  vmovdqu64 %zmm0, 328(%rbx)\n"                                           \
    "  vmovdqu64 %zmm1, 392(%rbx)\n"                                           \
    "  vmovdqu64 %zmm2, 456(%rbx)\n"                                           \
    "  vmovdqu64 %zmm3, 520(%rbx)\n"                                           \
    "  vmovdqu64 %zmm4, 584(%rbx)\n"                                           \
    "  vmovdqu64 %zmm5, 648(%rbx)\n"                                           \
    "  vmovdqu64 %zmm6, 712(%rbx)\n"                                           \
    "  vmovdqu64 %zmm7, 776(%rbx)\n"                                           \
    "  vmovdqu64 %zmm8, 840(%rbx)\n"                                           \
    "  vmovdqu64 %zmm9, 904(%rbx)\n"                                           \
    "  vmovdqu64 %zmm10, 968(%rbx)\n"                                          \
    "  vmovdqu64 %zmm11, 1032(%rbx)\n"                                         \
    "  vmovdqu64 %zmm12, 1096(%rbx)\n"                                         \
    "  vmovdqu64 %zmm13, 1160(%rbx)\n"                                         \
    "  vmovdqu64 %zmm14, 1224(%rbx)\n"                                         \
    "  vmovdqu64 %zmm15, 1288(%rbx)\n"                                         \
    "  vmovdqu64 %zmm16, 1352(%rbx)\n"                                         \
    "  vmovdqu64 %zmm17, 1416(%rbx)\n"                                         \
    "  vmovdqu64 %zmm18, 1480(%rbx)\n"                                         \
    "  vmovdqu64 %zmm19, 1544(%rbx)\n"                                         \
    "  vmovdqu64 %zmm20, 1608(%rbx)\n"                                         \
    "  vmovdqu64 %zmm21, 1672(%rbx)\n"                                         \
    "  vmovdqu64 %zmm22, 1736(%rbx)\n"                                         \
    "  vmovdqu64 %zmm23, 1800(%rbx)\n"                                         \
    "  vmovdqu64 %zmm24, 1864(%rbx)\n"                                         \
    "  vmovdqu64 %zmm25, 1928(%rbx)\n"                                         \
    "  vmovdqu64 %zmm26, 1992(%rbx)\n"                                         \
    "  vmovdqu64 %zmm27, 2056(%rbx)\n"                                         \
    "  vmovdqu64 %zmm28, 2120(%rbx)\n"                                         \
    "  vmovdqu64 %zmm29, 2184(%rbx)\n"                                         \
    "  vmovdqu64 %zmm30, 2248(%rbx)\n"                                         \
    "  vmovdqu64 %zmm31, 2312(%rbx)\n"                                         \
    "  kmovw %k0, 2376(%rbx)\n"                                                \
    "  kmovw %k1, 2384(%rbx)\n"                                                \
    "  kmovw %k2, 2392(%rbx)\n"                                                \
    "  kmovw %k3, 2400(%rbx)\n"                                                \
    "  kmovw %k4, 2408(%rbx)\n"                                                \
    "  kmovw %k5, 2416(%rbx)\n"                                                \
    "  kmovw %k6, 2424(%rbx)\n"                                                \
    "  kmovw %k7, 2432(%rbx)\n"                                                \
    "  vzeroupper\n"                                                           \
    "  jmp 4f\n"                                                               \
    "3:\n"                                                                     \
    "  testl $1, rd_features(%rip)\n"                                          \
    "  jz 4f\n"                                                                \
    "  vmovdqu %ymm0, 328(%rbx)\n"                                             \
    "  vmovdqu %ymm1, 392(%rbx)\n"                                             \
    "  vmovdqu %ymm2, 456(%rbx)\n"                                             \
    "  vmovdqu %ymm3, 520(%rbx)\n"                                             \
    "  vmovdqu %ymm4, 584(%rbx)\n"                                             \
    "  vmovdqu %ymm5, 648(%rbx)\n"                                             \
    "  vmovdqu %ymm6, 712(%rbx)\n"                                             \
    "  vmovdqu %ymm7, 776(%rbx)\n"                                             \
    "  vmovdqu %ymm8, 840(%rbx)\n"                                             \
    "  vmovdqu %ymm9, 904(%rbx)\n"                                             \
    "  vmovdqu %ymm10, 968(%rbx)\n"                                            \
    "  vmovdqu %ymm11, 1032(%rbx)\n"                                           \
    "  vmovdqu %ymm12, 1096(%rbx)\n"                                           \
    "  vmovdqu %ymm13, 1160(%rbx)\n"                                           \
    "  vmovdqu %ymm14, 1224(%rbx)\n"                                           \
    "  vmovdqu %ymm15, 1288(%rbx)\n"                                           \
    "  vzeroupper\n"                                                           \
    "4:\n"

#define RD_CLEAR_CALL_DUMP                                                     \
    "  xor %r9d, %r9d\n"                                                       \
    "  xor %r10d, %r10d\n"                                                     \
    "  xor %r11d, %r11d\n"                                                     \
    "  pxor %xmm0, %xmm0\n"                                                    \
    "  pxor %xmm1, %xmm1\n"                                                    \
    "  pxor %xmm2, %xmm2\n"                                                    \
    "  pxor %xmm3, %xmm3\n"                                                    \
    "  pxor %xmm4, %xmm4\n"                                                    \
    "  pxor %xmm5, %xmm5\n"                                                    \
    "  pxor %xmm6, %xmm6\n"                                                    \
    "  pxor %xmm7, %xmm7\n"                                                    \
    "  pxor %xmm8, %xmm8\n"                                                    \
    "  pxor %xmm9, %xmm9\n"                                                    \
    "  pxor %xmm10, %xmm10\n"                                                  \
    "  pxor %xmm11, %xmm11\n"                                                  \
    "  pxor %xmm12, %xmm12\n"                                                  \
    "  pxor %xmm13, %xmm13\n"                                                  \
    "  pxor %xmm14, %xmm14\n"                                                  \
    "  pxor %xmm15, %xmm15\n" RD_CLEAR_WIDE "  call *%rax\n"                   \
    "  movdqu %xmm0, 0(%rbx)\n"                                                \
    "  movdqu %xmm1, 16(%rbx)\n"                                               \
    "  movdqu %xmm2, 32(%rbx)\n"                                               \
    "  movdqu %xmm3, 48(%rbx)\n"                                               \
    "  movdqu %xmm4, 64(%rbx)\n"                                               \
    "  movdqu %xmm5, 80(%rbx)\n"                                               \
    "  movdqu %xmm6, 96(%rbx)\n"                                               \
    "  movdqu %xmm7, 112(%rbx)\n"                                              \
    "  movdqu %xmm8, 128(%rbx)\n"                                              \
    "  movdqu %xmm9, 144(%rbx)\n"                                              \
    "  movdqu %xmm10, 160(%rbx)\n"                                             \
    "  movdqu %xmm11, 176(%rbx)\n"                                             \
    "  movdqu %xmm12, 192(%rbx)\n"                                             \
    "  movdqu %xmm13, 208(%rbx)\n"                                             \
    "  movdqu %xmm14, 224(%rbx)\n"                                             \
    "  movdqu %xmm15, 240(%rbx)\n"                                             \
    "  mov %rax, 256(%rbx)\n"                                                  \
    "  mov %rcx, 264(%rbx)\n"                                                  \
    "  mov %rdx, 272(%rbx)\n"                                                  \
    "  mov %rsi, 280(%rbx)\n"                                                  \
    "  mov %rdi, 288(%rbx)\n"                                                  \
    "  mov %r8, 296(%rbx)\n"                                                   \
    "  mov %r9, 304(%rbx)\n"                                                   \
    "  mov %r10, 312(%rbx)\n"                                                  \
    "  mov %r11, 320(%rbx)\n" RD_DUMP_WIDE "  pop %rbx\n"                      \
    "  ret\n"

/* The callee-saved registers set to rd_saved_pattern(), then the call. */
#define RD_PATTERN_CALL                                                        \
    "  movabs $0x5a17c3e90b2d4f60, %rbx\n"                                     \
    "  movabs $0x5b18c4ea0c2e5061, %rbp\n"                                     \
    "  movabs $0x5c19c5eb0d2f5162, %r12\n"                                     \
    "  movabs $0x5d1ac6ec0e305263, %r13\n"                                     \
    "  movabs $0x5e1bc7ed0f315364, %r14\n"                                     \
    "  movabs $0x5f1cc8ee10325465, %r15\n"                                     \
    "  call *%rax\n"

/* Those registers into the array at |reg| (just popped), then return. */
#define RD_STORE_SAVED(reg)                                                    \
    "  mov %rbx, 0(%" reg ")\n"                                                \
    "  mov %rbp, 8(%" reg ")\n"                                                \
    "  mov %r12, 16(%" reg ")\n"                                               \
    "  mov %r13, 24(%" reg ")\n"                                               \
    "  mov %r14, 32(%" reg ")\n"                                               \
    "  mov %r15, 40(%" reg ")\n"                                               \
    "  pop %r15\n"                                                             \
    "  pop %r14\n"                                                             \
    "  pop %r13\n"                                                             \
    "  pop %r12\n"                                                             \
    "  pop %rbp\n"                                                             \
    "  pop %rbx\n"                                                             \
    "  ret\n"

/* rdi fn, rsi out, rdx state, rcx nblocks, r8 dump */
__asm__(".pushsection .text\n"
        ".globl rd_call\n"
        ".type rd_call, @function\n"
        "rd_call:\n"
        "  push %rbx\n" /* also aligns rsp to 16 for the call */
        "  mov %r8, %rbx\n"
        "  mov %rdi, %rax\n"
        "  mov %rsi, %rdi\n"
        "  mov %rdx, %rsi\n"
        "  mov %rcx, %rdx\n"
        "  xor %ecx, %ecx\n"
        "  xor %r8d, %r8d\n" RD_CLEAR_CALL_DUMP ".size rd_call, .-rd_call\n"
        ".globl rd_leaky_kernel\n"
        ".type rd_leaky_kernel, @function\n"
        "rd_leaky_kernel:\n"
        "  movdqu 16(%rsi), %xmm5\n"
        "  ret\n"
        ".size rd_leaky_kernel, .-rd_leaky_kernel\n"
        ".globl rd_leaky_wide_kernel\n"
        ".type rd_leaky_wide_kernel, @function\n"
        "rd_leaky_wide_kernel:\n"
        "  vinsertf128 $1, 16(%rsi), %ymm9, %ymm9\n"
        "  ret\n"
        ".size rd_leaky_wide_kernel, .-rd_leaky_wide_kernel\n"
        ".popsection\n");

/*
 * rdi fn, rsi out, rdx state, rcx nblocks, r8 saved.  The caller's
 * callee-saved registers and |saved| stay in the frame: seven pushes
 * leave rsp 16-byte aligned for the call.
 */
__asm__(".pushsection .text\n"
        ".globl rd_call_saved\n"
        ".type rd_call_saved, @function\n"
        "rd_call_saved:\n"
        "  push %rbx\n"
        "  push %rbp\n"
        "  push %r12\n"
        "  push %r13\n"
        "  push %r14\n"
        "  push %r15\n"
        "  push %r8\n"
        "  mov %rdi, %rax\n"
        "  mov %rsi, %rdi\n"
        "  mov %rdx, %rsi\n"
        "  mov %rcx, %rdx\n" RD_PATTERN_CALL "  pop %r8\n" RD_STORE_SAVED(
            "r8") ".size rd_call_saved, .-rd_call_saved\n"
                  ".globl rd_clobbering_kernel\n"
                  ".type rd_clobbering_kernel, @function\n"
                  "rd_clobbering_kernel:\n"
                  "  not %r13\n"
                  "  ret\n"
                  ".size rd_clobbering_kernel, .-rd_clobbering_kernel\n"
                  ".popsection\n");
/* rdi fn, rsi key, rdx out, rcx state, r8 nblocks, r9 dump */
__asm__(".pushsection .text\n"
        ".globl rd_call_key\n"
        ".type rd_call_key, @function\n"
        "rd_call_key:\n"
        "  push %rbx\n"
        "  mov %r9, %rbx\n"
        "  mov %rdi, %rax\n"
        "  mov %rsi, %rdi\n"
        "  mov %rdx, %rsi\n"
        "  mov %rcx, %rdx\n"
        "  mov %r8, %rcx\n"
        "  xor %r8d, %r8d\n" RD_CLEAR_CALL_DUMP
        ".size rd_call_key, .-rd_call_key\n"
        ".popsection\n");

/* rdi fn, rsi key, rdx out, rcx state, r8 nblocks, r9 saved */
__asm__(".pushsection .text\n"
        ".globl rd_call_key_saved\n"
        ".type rd_call_key_saved, @function\n"
        "rd_call_key_saved:\n"
        "  push %rbx\n"
        "  push %rbp\n"
        "  push %r12\n"
        "  push %r13\n"
        "  push %r14\n"
        "  push %r15\n"
        "  push %r9\n"
        "  mov %rdi, %rax\n"
        "  mov %rsi, %rdi\n"
        "  mov %rdx, %rsi\n"
        "  mov %rcx, %rdx\n"
        "  mov %r8, %rcx\n" RD_PATTERN_CALL "  pop %r9\n" RD_STORE_SAVED(
            "r9") ".size rd_call_key_saved, .-rd_call_key_saved\n"
                  ".popsection\n");
#elif defined(__aarch64__) && defined(__ELF__)
/*
 * x0 fn, x1 out, x2 state, x3 nblocks, x4 dump; bti c is a no-op without
 * BTI.  d8-d15 are the caller's, kept in the frame while v8-v15 are cleared.
 */
__asm__(".pushsection .text\n"
        ".globl rd_call\n"
        ".type rd_call, %function\n"
        "rd_call:\n"
        "  hint 34\n"
        "  stp x29, x30, [sp, #-96]!\n"
        "  str x19, [sp, #16]\n"
        "  stp d8, d9, [sp, #32]\n"
        "  stp d10, d11, [sp, #48]\n"
        "  stp d12, d13, [sp, #64]\n"
        "  stp d14, d15, [sp, #80]\n"
        "  mov x29, sp\n"
        "  mov x19, x4\n"
        "  mov x16, x0\n"
        "  mov x0, x1\n"
        "  mov x1, x2\n"
        "  mov x2, x3\n"
        "  mov x3, xzr\n"
        "  mov x4, xzr\n"
        "  mov x5, xzr\n"
        "  mov x6, xzr\n"
        "  mov x7, xzr\n"
        "  mov x8, xzr\n"
        "  mov x9, xzr\n"
        "  mov x10, xzr\n"
        "  mov x11, xzr\n"
        "  mov x12, xzr\n"
        "  mov x13, xzr\n"
        "  mov x14, xzr\n"
        "  mov x15, xzr\n"
        "  mov x17, xzr\n"
        "  mov x18, xzr\n"
        "  movi v0.16b, #0\n"
        "  movi v1.16b, #0\n"
        "  movi v2.16b, #0\n"
        "  movi v3.16b, #0\n"
        "  movi v4.16b, #0\n"
        "  movi v5.16b, #0\n"
        "  movi v6.16b, #0\n"
        "  movi v7.16b, #0\n"
        "  movi v8.16b, #0\n"
        "  movi v9.16b, #0\n"
        "  movi v10.16b, #0\n"
        "  movi v11.16b, #0\n"
        "  movi v12.16b, #0\n"
        "  movi v13.16b, #0\n"
        "  movi v14.16b, #0\n"
        "  movi v15.16b, #0\n"
        "  movi v16.16b, #0\n"
        "  movi v17.16b, #0\n"
        "  movi v18.16b, #0\n"
        "  movi v19.16b, #0\n"
        "  movi v20.16b, #0\n"
        "  movi v21.16b, #0\n"
        "  movi v22.16b, #0\n"
        "  movi v23.16b, #0\n"
        "  movi v24.16b, #0\n"
        "  movi v25.16b, #0\n"
        "  movi v26.16b, #0\n"
        "  movi v27.16b, #0\n"
        "  movi v28.16b, #0\n"
        "  movi v29.16b, #0\n"
        "  movi v30.16b, #0\n"
        "  movi v31.16b, #0\n"
        "  blr x16\n"
        "  stp x0, x1, [x19, #0]\n"
        "  stp x2, x3, [x19, #16]\n"
        "  stp x4, x5, [x19, #32]\n"
        "  stp x6, x7, [x19, #48]\n"
        "  stp x8, x9, [x19, #64]\n"
        "  stp x10, x11, [x19, #80]\n"
        "  stp x12, x13, [x19, #96]\n"
        "  stp x14, x15, [x19, #112]\n"
        "  stp x16, x17, [x19, #128]\n"
        "  str x18, [x19, #144]\n"
        "  stp q0, q1, [x19, #160]\n"
        "  stp q2, q3, [x19, #192]\n"
        "  stp q4, q5, [x19, #224]\n"
        "  stp q6, q7, [x19, #256]\n"
        "  stp q8, q9, [x19, #288]\n"
        "  stp q10, q11, [x19, #320]\n"
        "  stp q12, q13, [x19, #352]\n"
        "  stp q14, q15, [x19, #384]\n"
        "  stp q16, q17, [x19, #416]\n"
        "  stp q18, q19, [x19, #448]\n"
        "  stp q20, q21, [x19, #480]\n"
        "  stp q22, q23, [x19, #512]\n"
        "  stp q24, q25, [x19, #544]\n"
        "  stp q26, q27, [x19, #576]\n"
        "  stp q28, q29, [x19, #608]\n"
        "  stp q30, q31, [x19, #640]\n"
        "  ldp d8, d9, [sp, #32]\n"
        "  ldp d10, d11, [sp, #48]\n"
        "  ldp d12, d13, [sp, #64]\n"
        "  ldp d14, d15, [sp, #80]\n"
        "  ldr x19, [sp, #16]\n"
        "  ldp x29, x30, [sp], #96\n"
        "  ret\n"
        ".size rd_call, .-rd_call\n"
        ".globl rd_leaky_kernel\n"
        ".type rd_leaky_kernel, %function\n"
        "rd_leaky_kernel:\n"
        "  hint 34\n"
        "  ldr q5, [x1, #16]\n"
        "  ret\n"
        ".size rd_leaky_kernel, .-rd_leaky_kernel\n"
        ".popsection\n");
#elif defined(__s390x__) && defined(__ELF__)
/*
 * Assembler macros for the four functions below, which share one frame:
 * r6-r15 in the caller's save area, then 224 bytes (232 with a saved
 * pointer at 224) below: the 160-byte save area the kernel may use and
 * f8-f15 at 160.  The vector instructions need z13 whatever -march.
 *
 * rd_fprs OP, BASE, REG: OP (std or ld) f8-f15 at BASE + 0, 8, ... 56
 * from REG.  rd_enter FRAME: save and make the frame.  rd_dump_after_call:
 * with the kernel in r1 and its arguments in place, clear v0-v31, call,
 * store r0-r5 and v0-v31 at r7, return.  rd_load_patterns: every
 * callee-saved register from rd_saved_patterns.  rd_saved_after_call:
 * call r1, store r6-r13 and f8-f15 where 224 in the frame points, return.
 */
__asm__(".machine push\n"
        ".machine z13\n"
        ".macro rd_fprs op, base, reg\n"
        "  .irp f, 8, 9, 10, 11, 12, 13, 14, 15\n"
        "  \\op %f\\f, \\base + 8 * (\\f - 8)(\\reg)\n"
        "  .endr\n"
        ".endm\n"
        ".macro rd_enter frame\n"
        "  stmg %r6, %r15, 48(%r15)\n"
        "  aghi %r15, -\\frame\n"
        "  rd_fprs std, 160, %r15\n"
        ".endm\n"
        ".macro rd_leave frame\n"
        "  rd_fprs ld, 160, %r15\n"
        "  lmg %r6, %r15, \\frame + 48(%r15)\n"
        "  br %r14\n"
        ".endm\n"
        ".macro rd_dump_after_call\n"
        "  lghi %r0, 0\n"
        "  .irp i, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15\n"
        "  vzero \\i\n"
        "  vzero \\i + 16\n"
        "  .endr\n"
        "  basr %r14, %r1\n"
        "  stmg %r0, %r5, 0(%r7)\n"
        "  vstm %v0, %v15, 48(%r7)\n"
        "  vstm %v16, %v31, 304(%r7)\n"
        "  rd_leave 224\n"
        ".endm\n"
        ".macro rd_load_patterns\n"
        "  larl %r14, rd_saved_patterns\n"
        "  lmg %r6, %r13, 0(%r14)\n"
        "  rd_fprs ld, 64, %r14\n"
        ".endm\n"
        ".macro rd_saved_after_call\n"
        "  basr %r14, %r1\n"
        "  lg %r1, 224(%r15)\n"
        "  stmg %r6, %r13, 0(%r1)\n"
        "  rd_fprs std, 64, %r1\n"
        "  rd_leave 232\n"
        ".endm\n"
        ".machine pop\n"
        ".pushsection .rodata\n"
        ".balign 8\n"
        "rd_saved_patterns:\n"
        "  .irp i, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15\n"
        "  .quad 0x5a17c3e90b2d4f60 + 0x0101010101010101 * \\i\n"
        "  .endr\n"
        ".popsection\n");

/*
 * rd_call: r2 fn, r3 out, r4 state, r5 nblocks, r6 dump.
 * rd_call_key: r2 fn, r3 key, r4 out, r5 state, r6 nblocks, the dump at
 * 160 in the caller's frame (the sixth argument).
 */
__asm__(".pushsection .text\n"
        ".machine push\n"
        ".machine z13\n"
        ".globl rd_call\n"
        ".type rd_call, @function\n"
        "rd_call:\n"
        "  rd_enter 224\n"
        "  lgr %r7, %r6\n"
        "  lgr %r1, %r2\n"
        "  lgr %r2, %r3\n"
        "  lgr %r3, %r4\n"
        "  lgr %r4, %r5\n"
        "  lghi %r5, 0\n"
        "  rd_dump_after_call\n"
        ".size rd_call, .-rd_call\n"
        ".globl rd_call_key\n"
        ".type rd_call_key, @function\n"
        "rd_call_key:\n"
        "  lg %r1, 160(%r15)\n"
        "  rd_enter 224\n"
        "  lgr %r7, %r1\n"
        "  lgr %r1, %r2\n"
        "  lgr %r2, %r3\n"
        "  lgr %r3, %r4\n"
        "  lgr %r4, %r5\n"
        "  lgr %r5, %r6\n"
        "  rd_dump_after_call\n"
        ".size rd_call_key, .-rd_call_key\n"
        ".globl rd_leaky_kernel\n"
        ".type rd_leaky_kernel, @function\n"
        "rd_leaky_kernel:\n"
        "  vl %v5, 16(%r3)\n"
        "  br %r14\n"
        ".size rd_leaky_kernel, .-rd_leaky_kernel\n"
        ".machine pop\n"
        ".popsection\n");

/*
 * rd_call_saved: r2 fn, r3 out, r4 state, r5 nblocks, r6 saved.
 * rd_call_key_saved: r2 fn, r3 key, r4 out, r5 state, r6 nblocks, saved
 * at 160 in the caller's frame.  The kernel is entered with every
 * callee-saved register holding its own pattern.
 */
__asm__(".pushsection .text\n"
        ".globl rd_call_saved\n"
        ".type rd_call_saved, @function\n"
        "rd_call_saved:\n"
        "  rd_enter 232\n"
        "  stg %r6, 224(%r15)\n"
        "  lgr %r1, %r2\n"
        "  lgr %r2, %r3\n"
        "  lgr %r3, %r4\n"
        "  lgr %r4, %r5\n"
        "  rd_load_patterns\n"
        "  rd_saved_after_call\n"
        ".size rd_call_saved, .-rd_call_saved\n"
        ".globl rd_call_key_saved\n"
        ".type rd_call_key_saved, @function\n"
        "rd_call_key_saved:\n"
        "  lg %r1, 160(%r15)\n"
        "  rd_enter 232\n"
        "  stg %r1, 224(%r15)\n"
        "  lgr %r1, %r2\n"
        "  lgr %r2, %r3\n"
        "  lgr %r3, %r4\n"
        "  lgr %r4, %r5\n"
        "  lgr %r5, %r6\n"
        "  rd_load_patterns\n"
        "  rd_saved_after_call\n"
        ".size rd_call_key_saved, .-rd_call_key_saved\n"
        ".globl rd_clobbering_kernel\n"
        ".type rd_clobbering_kernel, @function\n"
        "rd_clobbering_kernel:\n"
        "  lzdr %f12\n"
        "  br %r14\n"
        ".size rd_clobbering_kernel, .-rd_clobbering_kernel\n"
        ".popsection\n");
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__) && defined(__ELF__)
/*
 * r3 fn, r4 out, r5 state, r6 nblocks, r7 dump.  A 240-byte frame: the
 * ABI's 32 bytes (TOC save at 24), r31 (the dump across the call) at 32,
 * the caller's v20-v31 from 48, given back at the end.  The kernel is
 * called through ctr with its address in r12, as ELFv2 asks.  No TOC is
 * used here, so there is one entry point.  The dump: r0, r3-r12 and a
 * zero pad doubleword, then v0-v19, vs0-vs13, v20-v31, 16 bytes each.
 * rd_vr_clobbering_kernel() zeroes v25 and returns.
 */
__asm__(".pushsection .text\n"
        ".globl rd_call\n"
        ".type rd_call, @function\n"
        "rd_call:\n"
        "  mflr 0\n"
        "  std 0, 16(1)\n"
        "  stdu 1, -240(1)\n"
        "  std 2, 24(1)\n"
        "  std 31, 32(1)\n"
        "  mr 31, 7\n"
        "  li 8, 48\n"
        "  stxvd2x 52, 1, 8\n"
        "  li 8, 64\n"
        "  stxvd2x 53, 1, 8\n"
        "  li 8, 80\n"
        "  stxvd2x 54, 1, 8\n"
        "  li 8, 96\n"
        "  stxvd2x 55, 1, 8\n"
        "  li 8, 112\n"
        "  stxvd2x 56, 1, 8\n"
        "  li 8, 128\n"
        "  stxvd2x 57, 1, 8\n"
        "  li 8, 144\n"
        "  stxvd2x 58, 1, 8\n"
        "  li 8, 160\n"
        "  stxvd2x 59, 1, 8\n"
        "  li 8, 176\n"
        "  stxvd2x 60, 1, 8\n"
        "  li 8, 192\n"
        "  stxvd2x 61, 1, 8\n"
        "  li 8, 208\n"
        "  stxvd2x 62, 1, 8\n"
        "  li 8, 224\n"
        "  stxvd2x 63, 1, 8\n"
        "  vspltisw 20, 1\n"
        "  vspltisw 21, 2\n"
        "  vspltisw 22, 3\n"
        "  vspltisw 23, 4\n"
        "  vspltisw 24, 5\n"
        "  vspltisw 25, 6\n"
        "  vspltisw 26, 7\n"
        "  vspltisw 27, 8\n"
        "  vspltisw 28, 9\n"
        "  vspltisw 29, 10\n"
        "  vspltisw 30, 11\n"
        "  vspltisw 31, 12\n"
        "  mr 12, 3\n"
        "  mtctr 12\n"
        "  mr 3, 4\n"
        "  mr 4, 5\n"
        "  mr 5, 6\n"
        "  li 0, 0\n"
        "  li 6, 0\n"
        "  li 7, 0\n"
        "  li 8, 0\n"
        "  li 9, 0\n"
        "  li 10, 0\n"
        "  li 11, 0\n"
        "  vspltisw 0, 0\n"
        "  vspltisw 1, 0\n"
        "  vspltisw 2, 0\n"
        "  vspltisw 3, 0\n"
        "  vspltisw 4, 0\n"
        "  vspltisw 5, 0\n"
        "  vspltisw 6, 0\n"
        "  vspltisw 7, 0\n"
        "  vspltisw 8, 0\n"
        "  vspltisw 9, 0\n"
        "  vspltisw 10, 0\n"
        "  vspltisw 11, 0\n"
        "  vspltisw 12, 0\n"
        "  vspltisw 13, 0\n"
        "  vspltisw 14, 0\n"
        "  vspltisw 15, 0\n"
        "  vspltisw 16, 0\n"
        "  vspltisw 17, 0\n"
        "  vspltisw 18, 0\n"
        "  vspltisw 19, 0\n"
        "  xxlxor 0, 0, 0\n"
        "  xxlxor 1, 1, 1\n"
        "  xxlxor 2, 2, 2\n"
        "  xxlxor 3, 3, 3\n"
        "  xxlxor 4, 4, 4\n"
        "  xxlxor 5, 5, 5\n"
        "  xxlxor 6, 6, 6\n"
        "  xxlxor 7, 7, 7\n"
        "  xxlxor 8, 8, 8\n"
        "  xxlxor 9, 9, 9\n"
        "  xxlxor 10, 10, 10\n"
        "  xxlxor 11, 11, 11\n"
        "  xxlxor 12, 12, 12\n"
        "  xxlxor 13, 13, 13\n"
        "  bctrl\n"
        "  ld 2, 24(1)\n"
        "  std 0, 0(31)\n"
        "  std 3, 8(31)\n"
        "  std 4, 16(31)\n"
        "  std 5, 24(31)\n"
        "  std 6, 32(31)\n"
        "  std 7, 40(31)\n"
        "  std 8, 48(31)\n"
        "  std 9, 56(31)\n"
        "  std 10, 64(31)\n"
        "  std 11, 72(31)\n"
        "  std 12, 80(31)\n"
        "  li 8, 0\n"
        "  std 8, 88(31)\n"
        "  li 8, 96\n"
        "  stxvw4x 32, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 33, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 34, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 35, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 36, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 37, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 38, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 39, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 40, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 41, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 42, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 43, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 44, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 45, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 46, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 47, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 48, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 49, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 50, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 51, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 0, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 1, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 2, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 3, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 4, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 5, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 6, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 7, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 8, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 9, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 10, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 11, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 12, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 13, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 52, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 53, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 54, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 55, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 56, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 57, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 58, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 59, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 60, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 61, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 62, 31, 8\n"
        "  addi 8, 8, 16\n"
        "  stxvw4x 63, 31, 8\n"
        "  li 8, 48\n"
        "  lxvd2x 52, 1, 8\n"
        "  li 8, 64\n"
        "  lxvd2x 53, 1, 8\n"
        "  li 8, 80\n"
        "  lxvd2x 54, 1, 8\n"
        "  li 8, 96\n"
        "  lxvd2x 55, 1, 8\n"
        "  li 8, 112\n"
        "  lxvd2x 56, 1, 8\n"
        "  li 8, 128\n"
        "  lxvd2x 57, 1, 8\n"
        "  li 8, 144\n"
        "  lxvd2x 58, 1, 8\n"
        "  li 8, 160\n"
        "  lxvd2x 59, 1, 8\n"
        "  li 8, 176\n"
        "  lxvd2x 60, 1, 8\n"
        "  li 8, 192\n"
        "  lxvd2x 61, 1, 8\n"
        "  li 8, 208\n"
        "  lxvd2x 62, 1, 8\n"
        "  li 8, 224\n"
        "  lxvd2x 63, 1, 8\n"
        "  ld 31, 32(1)\n"
        "  addi 1, 1, 240\n"
        "  ld 0, 16(1)\n"
        "  mtlr 0\n"
        "  blr\n"
        ".size rd_call, .-rd_call\n"
        ".globl rd_leaky_kernel\n"
        ".type rd_leaky_kernel, @function\n"
        "rd_leaky_kernel:\n"
        "  li 6, 16\n"
        "  lxvw4x 37, 4, 6\n"
        "  blr\n"
        ".size rd_leaky_kernel, .-rd_leaky_kernel\n"
        ".globl rd_vr_clobbering_kernel\n"
        ".type rd_vr_clobbering_kernel, @function\n"
        "rd_vr_clobbering_kernel:\n"
        "  vspltisw 25, 0\n"
        "  blr\n"
        ".size rd_vr_clobbering_kernel, .-rd_vr_clobbering_kernel\n"
        ".popsection\n");
#elif defined(__riscv) && __riscv_xlen == 64 && defined(__ELF__)
#include <sys/auxv.h>

/*
 * a0 fn, a1 out, a2 state, a3 nblocks, a4 dump, a5 nonzero when the CPU
 * has the vector extension (the vector part is skipped otherwise: its
 * instructions would trap).  s1 keeps the dump and s2 the flag across the
 * call; ra and s1-s2 are kept in the frame.
 */
void rd_call_riscv(chacha_blocks_fn *fn, uint8_t *out, const uint32_t *state,
                   size_t nblocks, uint32_t dump[RD_WORDS], long vector);

__asm__(".pushsection .text\n"
        ".option push\n"
        ".option arch, +v\n"
        ".globl rd_call_riscv\n"
        ".hidden rd_call_riscv\n"
        ".type rd_call_riscv, @function\n"
        "rd_call_riscv:\n"
        "  addi sp, sp, -32\n"
        "  sd ra, 0(sp)\n"
        "  sd s1, 8(sp)\n"
        "  sd s2, 16(sp)\n"
        "  mv s1, a4\n"
        "  mv s2, a5\n"
        "  mv t6, a0\n"
        "  mv a0, a1\n"
        "  mv a1, a2\n"
        "  mv a2, a3\n"
        "  li a3, 0\n"
        "  li a4, 0\n"
        "  li a5, 0\n"
        "  li a6, 0\n"
        "  li a7, 0\n"
        "  li t0, 0\n"
        "  li t1, 0\n"
        "  li t2, 0\n"
        "  li t3, 0\n"
        "  li t4, 0\n"
        "  li t5, 0\n"
        "  beqz s2, 1f\n"
        "  vsetvli t0, zero, e8, m8, ta, ma\n"
        "  vmv.v.i v0, 0\n"
        "  vmv.v.i v8, 0\n"
        "  vmv.v.i v16, 0\n"
        "  vmv.v.i v24, 0\n"
        "  li t0, 0\n"
        "1:\n"
        "  jalr t6\n"
        "  sd ra, 0(s1)\n"
        "  sd t0, 8(s1)\n"
        "  sd t1, 16(s1)\n"
        "  sd t2, 24(s1)\n"
        "  sd t3, 32(s1)\n"
        "  sd t4, 40(s1)\n"
        "  sd t5, 48(s1)\n"
        "  sd t6, 56(s1)\n"
        "  sd a0, 64(s1)\n"
        "  sd a1, 72(s1)\n"
        "  sd a2, 80(s1)\n"
        "  sd a3, 88(s1)\n"
        "  sd a4, 96(s1)\n"
        "  sd a5, 104(s1)\n"
        "  sd a6, 112(s1)\n"
        "  sd a7, 120(s1)\n"
        "  beqz s2, 2f\n"
        /* each group of eight registers: its first 1024 bytes at most */
        "  li t1, 1024\n"
        "  vsetvli t0, t1, e8, m8, ta, ma\n"
        "  addi t2, s1, 128\n"
        "  vse8.v v0, (t2)\n"
        "  add t2, t2, t1\n"
        "  vse8.v v8, (t2)\n"
        "  add t2, t2, t1\n"
        "  vse8.v v16, (t2)\n"
        "  add t2, t2, t1\n"
        "  vse8.v v24, (t2)\n"
        "2:\n"
        "  ld ra, 0(sp)\n"
        "  ld s1, 8(sp)\n"
        "  ld s2, 16(sp)\n"
        "  addi sp, sp, 32\n"
        "  ret\n"
        ".size rd_call_riscv, .-rd_call_riscv\n"
        ".globl rd_leaky_kernel\n"
        ".type rd_leaky_kernel, @function\n"
        "rd_leaky_kernel:\n"
        "  lwu t1, 16(a1)\n"
        "  lwu t2, 20(a1)\n"
        "  lwu t3, 24(a1)\n"
        "  lwu t4, 28(a1)\n"
        "  ret\n"
        ".size rd_leaky_kernel, .-rd_leaky_kernel\n"
        ".option pop\n"
        ".popsection\n");

void rd_call(chacha_blocks_fn *fn, uint8_t *out, const uint32_t *state,
             size_t nblocks, uint32_t dump[RD_WORDS])
{
    /* AT_HWCAP's V bit: the kernel saves vector state for this process */
    long vector = (getauxval(AT_HWCAP) >> ('V' - 'A')) & 1;

    rd_call_riscv(fn, out, state, nblocks, dump, vector);
}
#endif
