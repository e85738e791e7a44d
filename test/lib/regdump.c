/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rd_call() and rd_leaky_kernel() (see regdump.h), one assembly body per
 * architecture.  rd_call keeps |dump| in a callee-saved register across the
 * call and stores the registers right after it returns.  Before the call
 * it clears every register it dumps but the arguments and the kernel's
 * address: what the test's own code left there (a kernel that uses few
 * registers never overwrites it) must not be taken for the kernel's.
 */
#include "regdump.h"

#if defined(__x86_64__) && defined(__ELF__)
/*
 * The parts rd_call and rd_call_key share: clear the scratch registers
 * the arguments left alone and every xmm register, call the kernel in rax,
 * store the registers into the dump that rbx holds, return.
 */
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
    "  pxor %xmm15, %xmm15\n"                                                  \
    "  call *%rax\n"                                                           \
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
    "  mov %r11, 320(%rbx)\n"                                                  \
    "  pop %rbx\n"                                                             \
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
