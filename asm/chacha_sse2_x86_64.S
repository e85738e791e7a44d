/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ChaCha20 keystream kernel for x86_64, pure SSE2 (the x86_64 baseline: no
 * pshufb or later), RFC 8439 section 2.3.
 *
 * void chacharng_chacha_blocks_sse2(uint8_t *out,          rdi
 *                                   const uint32_t st[16], rsi
 *                                   size_t nblocks);       rdx
 *
 * Writes nblocks * 64 bytes of keystream to out (any alignment) for block
 * counters st[12], st[12] + 1, ... modulo 2^32 (no carry into st[13]).
 * Reads only st[0..15] and the constant below, writes only
 * out[0 .. nblocks * 64).
 *
 * Layout: 4 blocks per iteration, "vertical": xmm register i holds state
 * word i of the 4 blocks, so quarter rounds are lane-wise and the counter
 * vector is st[12] + {0,1,2,3} (paddd wraps per lane, as required).  All
 * 16 registers hold state; a rotate needs one scratch register, so around
 * each rotate the one word not involved is parked in a stack slot.  Rotate
 * by 16 is pshuflw/pshufhw, the others shift, shift, or.  A 4x4 transpose
 * then turns columns back into blocks.  A final 1..3 blocks are computed
 * as 4 into a stack buffer and only the blocks asked for are copied out.
 *
 * Clobbers: rax, rcx, rdx, rsi, rdi, r8, flags, xmm0-xmm15.  Stack: rbp is
 * saved, then a 16-byte aligned frame of 672 bytes (input state, the
 * parking slot, transpose scratch and the tail buffer).  Before returning
 * the whole frame and all 16 xmm registers are zeroed, since they held the
 * key and keystream.
 */
#include "asm_common.h"

#if defined(__x86_64__) && defined(__ELF__)

        .section .rodata
        .p2align 4
.Lsse2_lane_ctr:
        .long 0, 1, 2, 3
.Lsse2_four:
        .long 4, 4, 4, 4

/* Frame layout (offsets from the aligned rsp). */
#define S(i)    (16 * (i))      /* input state, one vector per word */
#define PARK    256             /* the word set aside around a rotate */
#define T(i)    (272 + 16 * (i))/* x8..x15 during the transpose */
#define TAIL    400             /* 4 blocks for a final partial batch */
#define FRAME   672

        .text

/* x = x <<< n, with t as scratch. */
.macro ROTL n, x, t
        movdqa  \x, \t
        pslld   $\n, \x
        psrld   $(32 - \n), \t
        por     \t, \x
.endm

/* x = x <<< 16: swap the 16-bit halves of each word. */
.macro ROT16 x
        pshuflw $0xb1, \x, \x
        pshufhw $0xb1, \x, \x
.endm

/*
 * Four quarter rounds side by side on (a_i, b_i, c_i, d_i), i = 0..3.
 * While the b words rotate, a0 is parked and its register is the scratch;
 * while the d words rotate by 8, c0 is parked.
 */
.macro QUARTERS a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3, d0, d1, d2, d3
        paddd   \b0, \a0
        paddd   \b1, \a1
        paddd   \b2, \a2
        paddd   \b3, \a3
        pxor    \a0, \d0
        pxor    \a1, \d1
        pxor    \a2, \d2
        pxor    \a3, \d3
        ROT16   \d0
        ROT16   \d1
        ROT16   \d2
        ROT16   \d3
        paddd   \d0, \c0
        paddd   \d1, \c1
        paddd   \d2, \c2
        paddd   \d3, \c3
        pxor    \c0, \b0
        pxor    \c1, \b1
        pxor    \c2, \b2
        pxor    \c3, \b3
        movdqa  \c3, PARK(%rsp)
        ROTL    12, \b0, \c3
        ROTL    12, \b1, \c3
        ROTL    12, \b2, \c3
        ROTL    12, \b3, \c3
        movdqa  PARK(%rsp), \c3
        paddd   \b0, \a0
        paddd   \b1, \a1
        paddd   \b2, \a2
        paddd   \b3, \a3
        pxor    \a0, \d0
        pxor    \a1, \d1
        pxor    \a2, \d2
        pxor    \a3, \d3
        movdqa  \a3, PARK(%rsp)
        ROTL    8, \d0, \a3
        ROTL    8, \d1, \a3
        ROTL    8, \d2, \a3
        ROTL    8, \d3, \a3
        movdqa  PARK(%rsp), \a3
        paddd   \d0, \c0
        paddd   \d1, \c1
        paddd   \d2, \c2
        paddd   \d3, \c3
        pxor    \c0, \b0
        pxor    \c1, \b1
        pxor    \c2, \b2
        pxor    \c3, \b3
        movdqa  \c3, PARK(%rsp)
        ROTL    7, \b0, \c3
        ROTL    7, \b1, \c3
        ROTL    7, \b2, \c3
        ROTL    7, \b3, \c3
        movdqa  PARK(%rsp), \c3
.endm

/*
 * Transpose four word vectors r0..r3 (lane j = block j) into the 16-byte
 * pieces of four blocks and store them at dst + j*64 + off; t0, t1 scratch.
 */
.macro TRANSPOSE_STORE r0, r1, r2, r3, t0, t1, off
        movdqa     \r0, \t0
        punpckldq  \r1, \t0             /* r0[0] r1[0] r0[1] r1[1] */
        punpckhdq  \r1, \r0             /* r0[2] r1[2] r0[3] r1[3] */
        movdqa     \r2, \t1
        punpckldq  \r3, \t1             /* r2[0] r3[0] r2[1] r3[1] */
        punpckhdq  \r3, \r2             /* r2[2] r3[2] r2[3] r3[3] */
        movdqa     \t0, \r1
        punpcklqdq \t1, \r1             /* block 0 */
        punpckhqdq \t1, \t0             /* block 1 */
        movdqa     \r0, \r3
        punpcklqdq \r2, \r3             /* block 2 */
        punpckhqdq \r2, \r0             /* block 3 */
        movdqu     \r1, (\off + 0)(%r8)
        movdqu     \t0, (\off + 64)(%r8)
        movdqu     \r3, (\off + 128)(%r8)
        movdqu     \r0, (\off + 192)(%r8)
.endm

        .p2align 5
FUNC_BEGIN(chacharng_chacha_blocks_sse2)
        LANDING_PAD
        testq   %rdx, %rdx
        jz      .Lsse2_return
        pushq   %rbp
        .cfi_adjust_cfa_offset 8
        .cfi_offset %rbp, -16
        movq    %rsp, %rbp
        .cfi_def_cfa_register %rbp
        subq    $FRAME, %rsp
        andq    $-16, %rsp

        /* Broadcast each input word across a vector. */
        .irp i, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
        movd    (4 * \i)(%rsi), %xmm0
        pshufd  $0, %xmm0, %xmm0
        movdqa  %xmm0, S(\i)(%rsp)
        .endr
        movdqa  S(12)(%rsp), %xmm0
        paddd   .Lsse2_lane_ctr(%rip), %xmm0
        movdqa  %xmm0, S(12)(%rsp)

.Lsse2_batch:
        .irp i, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
        movdqa  S(\i)(%rsp), %xmm\i
        .endr
        movl    $10, %eax
.Lsse2_double_round:
        QUARTERS %xmm0, %xmm1, %xmm2, %xmm3, %xmm4, %xmm5, %xmm6, %xmm7, \
                 %xmm8, %xmm9, %xmm10, %xmm11, %xmm12, %xmm13, %xmm14, %xmm15
        QUARTERS %xmm0, %xmm1, %xmm2, %xmm3, %xmm5, %xmm6, %xmm7, %xmm4, \
                 %xmm10, %xmm11, %xmm8, %xmm9, %xmm15, %xmm12, %xmm13, %xmm14
        decl    %eax
        jnz     .Lsse2_double_round

        /* Feed-forward: add the input state. */
        .irp i, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
        paddd   S(\i)(%rsp), %xmm\i
        .endr

        /* Full batch straight to out; a partial one through TAIL. */
        movq    %rdi, %r8
        cmpq    $4, %rdx
        jae     1f
        leaq    TAIL(%rsp), %r8
1:
        .irp i, 8, 9, 10, 11, 12, 13, 14, 15
        movdqa  %xmm\i, T(\i - 8)(%rsp)
        .endr
        TRANSPOSE_STORE %xmm0, %xmm1, %xmm2, %xmm3, %xmm8, %xmm9, 0
        TRANSPOSE_STORE %xmm4, %xmm5, %xmm6, %xmm7, %xmm8, %xmm9, 16
        .irp i, 0, 1, 2, 3, 4, 5, 6, 7
        movdqa  T(\i)(%rsp), %xmm\i
        .endr
        TRANSPOSE_STORE %xmm0, %xmm1, %xmm2, %xmm3, %xmm8, %xmm9, 32
        TRANSPOSE_STORE %xmm4, %xmm5, %xmm6, %xmm7, %xmm8, %xmm9, 48

        cmpq    $4, %rdx
        jb      .Lsse2_tail
        movdqa  S(12)(%rsp), %xmm0
        paddd   .Lsse2_four(%rip), %xmm0
        movdqa  %xmm0, S(12)(%rsp)
        addq    $256, %rdi
        subq    $4, %rdx
        jnz     .Lsse2_batch
        jmp     .Lsse2_wipe

.Lsse2_tail:
        /* copy the 1..3 blocks asked for */
        movq    %rdx, %rcx
        shlq    $6, %rcx
        leaq    TAIL(%rsp), %rsi
        rep movsb

.Lsse2_wipe:
        /* The frame held the key, the state and keystream: zero it all. */
        pxor    %xmm0, %xmm0
        xorl    %eax, %eax
2:
        movdqa  %xmm0, (%rsp, %rax)
        addq    $16, %rax
        cmpq    $FRAME, %rax
        jb      2b
        .irp i, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
        pxor    %xmm\i, %xmm\i
        .endr
        movq    %rbp, %rsp
        popq    %rbp
        .cfi_def_cfa %rsp, 8
        .cfi_restore %rbp
.Lsse2_return:
        ret
FUNC_END(chacharng_chacha_blocks_sse2)

#endif
