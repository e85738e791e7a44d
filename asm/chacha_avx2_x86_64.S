/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ChaCha20 keystream kernel for x86_64 with AVX2, RFC 8439 section 2.3.
 *
 * void chacharng_chacha_blocks_avx2(uint8_t *out,          rdi
 *                                   const uint32_t st[16], rsi
 *                                   size_t nblocks);       rdx
 *
 * Writes nblocks * 64 bytes of keystream to out (any alignment) for block
 * counters st[12], st[12] + 1, ... modulo 2^32 (no carry into st[13]).
 * Reads only st[0..15] and the constants below, writes only
 * out[0 .. nblocks * 64).
 *
 * Layout: 8 blocks per iteration, "vertical": ymm register i holds state
 * word i of the 8 blocks; the counter vector is st[12] + {0..7} (vpaddd
 * wraps per lane).  Rotates by 16 and 8 are one vpshufb each; rotates by
 * 12 and 7 need a scratch register, so around them the a0 word is parked
 * in a stack slot.  After the feed-forward a 4x4 transpose inside each
 * 128-bit lane gives 16-byte pieces of blocks j (low lane) and j + 4
 * (high lane).  A final 1..7 blocks are computed as 8 into a stack buffer
 * and only the blocks asked for are copied out.
 *
 * Clobbers: rax, rcx, rdx, rsi, rdi, r8, flags, ymm0-ymm15.  Stack: rbp is
 * saved, then a 32-byte aligned frame of 1312 bytes (input state, the
 * parking slot, transpose scratch, tail buffer).  Before returning the
 * frame is zeroed and vzeroall clears every ymm register (and serves as
 * the vzeroupper the ABI expects), since they held key and keystream.
 */
#include "asm_common.h"

#if defined(__x86_64__) && defined(__ELF__)

        .section .rodata
        .p2align 5
.Lavx2_lane_ctr:
        .long 0, 1, 2, 3, 4, 5, 6, 7
.Lavx2_eight:
        .long 8, 8, 8, 8, 8, 8, 8, 8
/* vpshufb masks rotating each 32-bit word left by 16 and by 8 */
.Lavx2_rot16:
        .byte 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13
        .byte 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13
.Lavx2_rot8:
        .byte 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14
        .byte 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14

/* Frame layout (offsets from the aligned rsp). */
#define S(i)    (32 * (i))      /* input state, one vector per word */
#define PARK    512             /* a0 while b words rotate */
#define T(i)    (544 + 32 * (i))/* x8..x15 during the transpose */
#define TAIL    800             /* 8 blocks for a final partial batch */
#define FRAME   1312

        .text

/* x = x <<< n, with t as scratch. */
.macro ROTL n, x, t
        vpsrld  $(32 - \n), \x, \t
        vpslld  $\n, \x, \x
        vpor    \t, \x, \x
.endm

/* Four quarter rounds side by side on (a_i, b_i, c_i, d_i), i = 0..3. */
.macro QUARTERS a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3, d0, d1, d2, d3
        vpaddd  \b0, \a0, \a0
        vpaddd  \b1, \a1, \a1
        vpaddd  \b2, \a2, \a2
        vpaddd  \b3, \a3, \a3
        vpxor   \a0, \d0, \d0
        vpxor   \a1, \d1, \d1
        vpxor   \a2, \d2, \d2
        vpxor   \a3, \d3, \d3
        vpshufb .Lavx2_rot16(%rip), \d0, \d0
        vpshufb .Lavx2_rot16(%rip), \d1, \d1
        vpshufb .Lavx2_rot16(%rip), \d2, \d2
        vpshufb .Lavx2_rot16(%rip), \d3, \d3
        vpaddd  \d0, \c0, \c0
        vpaddd  \d1, \c1, \c1
        vpaddd  \d2, \c2, \c2
        vpaddd  \d3, \c3, \c3
        vpxor   \c0, \b0, \b0
        vpxor   \c1, \b1, \b1
        vpxor   \c2, \b2, \b2
        vpxor   \c3, \b3, \b3
        vmovdqa \c3, PARK(%rsp)
        ROTL    12, \b0, \c3
        ROTL    12, \b1, \c3
        ROTL    12, \b2, \c3
        ROTL    12, \b3, \c3
        vmovdqa PARK(%rsp), \c3
        vpaddd  \b0, \a0, \a0
        vpaddd  \b1, \a1, \a1
        vpaddd  \b2, \a2, \a2
        vpaddd  \b3, \a3, \a3
        vpxor   \a0, \d0, \d0
        vpxor   \a1, \d1, \d1
        vpxor   \a2, \d2, \d2
        vpxor   \a3, \d3, \d3
        vpshufb .Lavx2_rot8(%rip), \d0, \d0
        vpshufb .Lavx2_rot8(%rip), \d1, \d1
        vpshufb .Lavx2_rot8(%rip), \d2, \d2
        vpshufb .Lavx2_rot8(%rip), \d3, \d3
        vpaddd  \d0, \c0, \c0
        vpaddd  \d1, \c1, \c1
        vpaddd  \d2, \c2, \c2
        vpaddd  \d3, \c3, \c3
        vpxor   \c0, \b0, \b0
        vpxor   \c1, \b1, \b1
        vpxor   \c2, \b2, \b2
        vpxor   \c3, \b3, \b3
        vmovdqa \c3, PARK(%rsp)
        ROTL    7, \b0, \c3
        ROTL    7, \b1, \c3
        ROTL    7, \b2, \c3
        ROTL    7, \b3, \c3
        vmovdqa PARK(%rsp), \c3
.endm

/*
 * Transpose word vectors r0..r3 inside each 128-bit lane and store the
 * 16-byte pieces: lane 0 of result j goes to block j, lane 1 to block
 * j + 4, at byte offset off within the block.  t0, t1 are scratch; xr1,
 * xt0, xr3, xr0 name the xmm halves of r1, t0, r3, r0.
 */
.macro TRANSPOSE_STORE r0, r1, r2, r3, t0, t1, xr0, xr1, xr3, xt0, off
        vpunpckldq  \r1, \r0, \t0       /* r0[0] r1[0] r0[1] r1[1] per lane */
        vpunpckhdq  \r1, \r0, \r0       /* r0[2] r1[2] r0[3] r1[3] */
        vpunpckldq  \r3, \r2, \t1       /* r2[0] r3[0] r2[1] r3[1] */
        vpunpckhdq  \r3, \r2, \r2       /* r2[2] r3[2] r2[3] r3[3] */
        vpunpcklqdq \t1, \t0, \r1       /* blocks 0 | 4 */
        vpunpckhqdq \t1, \t0, \t0       /* blocks 1 | 5 */
        vpunpcklqdq \r2, \r0, \r3       /* blocks 2 | 6 */
        vpunpckhqdq \r2, \r0, \r0       /* blocks 3 | 7 */
        vmovdqu     \xr1, (\off + 0 * 64)(%r8)
        vmovdqu     \xt0, (\off + 1 * 64)(%r8)
        vmovdqu     \xr3, (\off + 2 * 64)(%r8)
        vmovdqu     \xr0, (\off + 3 * 64)(%r8)
        vextracti128 $1, \r1, (\off + 4 * 64)(%r8)
        vextracti128 $1, \t0, (\off + 5 * 64)(%r8)
        vextracti128 $1, \r3, (\off + 6 * 64)(%r8)
        vextracti128 $1, \r0, (\off + 7 * 64)(%r8)
.endm

        .p2align 5
FUNC_BEGIN(chacharng_chacha_blocks_avx2)
        LANDING_PAD
        testq   %rdx, %rdx
        jz      .Lavx2_return
        pushq   %rbp
        .cfi_adjust_cfa_offset 8
        .cfi_offset %rbp, -16
        movq    %rsp, %rbp
        .cfi_def_cfa_register %rbp
        subq    $FRAME, %rsp
        andq    $-32, %rsp

        /* Broadcast each input word across a vector. */
        .irp i, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
        vpbroadcastd (4 * \i)(%rsi), %ymm0
        vmovdqa %ymm0, S(\i)(%rsp)
        .endr
        vmovdqa S(12)(%rsp), %ymm0
        vpaddd  .Lavx2_lane_ctr(%rip), %ymm0, %ymm0
        vmovdqa %ymm0, S(12)(%rsp)

.Lavx2_batch:
        .irp i, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
        vmovdqa S(\i)(%rsp), %ymm\i
        .endr
        movl    $10, %eax
.Lavx2_double_round:
        QUARTERS %ymm0, %ymm1, %ymm2, %ymm3, %ymm4, %ymm5, %ymm6, %ymm7, \
                 %ymm8, %ymm9, %ymm10, %ymm11, %ymm12, %ymm13, %ymm14, %ymm15
        QUARTERS %ymm0, %ymm1, %ymm2, %ymm3, %ymm5, %ymm6, %ymm7, %ymm4, \
                 %ymm10, %ymm11, %ymm8, %ymm9, %ymm15, %ymm12, %ymm13, %ymm14
        decl    %eax
        jnz     .Lavx2_double_round

        /* Feed-forward: add the input state. */
        .irp i, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
        vpaddd  S(\i)(%rsp), %ymm\i, %ymm\i
        .endr

        /* Full batch straight to out; a partial one through TAIL. */
        movq    %rdi, %r8
        cmpq    $8, %rdx
        jae     1f
        leaq    TAIL(%rsp), %r8
1:
        .irp i, 8, 9, 10, 11, 12, 13, 14, 15
        vmovdqa %ymm\i, T(\i - 8)(%rsp)
        .endr
        TRANSPOSE_STORE %ymm0, %ymm1, %ymm2, %ymm3, %ymm8, %ymm9, \
                        %xmm0, %xmm1, %xmm3, %xmm8, 0
        TRANSPOSE_STORE %ymm4, %ymm5, %ymm6, %ymm7, %ymm8, %ymm9, \
                        %xmm4, %xmm5, %xmm7, %xmm8, 16
        .irp i, 0, 1, 2, 3, 4, 5, 6, 7
        vmovdqa T(\i)(%rsp), %ymm\i
        .endr
        TRANSPOSE_STORE %ymm0, %ymm1, %ymm2, %ymm3, %ymm8, %ymm9, \
                        %xmm0, %xmm1, %xmm3, %xmm8, 32
        TRANSPOSE_STORE %ymm4, %ymm5, %ymm6, %ymm7, %ymm8, %ymm9, \
                        %xmm4, %xmm5, %xmm7, %xmm8, 48

        cmpq    $8, %rdx
        jb      .Lavx2_tail
        vmovdqa S(12)(%rsp), %ymm0
        vpaddd  .Lavx2_eight(%rip), %ymm0, %ymm0
        vmovdqa %ymm0, S(12)(%rsp)
        addq    $512, %rdi
        subq    $8, %rdx
        jnz     .Lavx2_batch
        jmp     .Lavx2_wipe

.Lavx2_tail:
        /* copy the 1..7 blocks asked for */
        movq    %rdx, %rcx
        shlq    $6, %rcx
        leaq    TAIL(%rsp), %rsi
        rep movsb

.Lavx2_wipe:
        /* The frame held the key, the state and keystream: zero it all. */
        vpxor   %xmm0, %xmm0, %xmm0
        xorl    %eax, %eax
2:
        vmovdqa %ymm0, (%rsp, %rax)
        addq    $32, %rax
        cmpq    $FRAME, %rax
        jb      2b
        vzeroall
        movq    %rbp, %rsp
        popq    %rbp
        .cfi_def_cfa %rsp, 8
        .cfi_restore %rbp
.Lavx2_return:
        ret
FUNC_END(chacharng_chacha_blocks_avx2)

#endif
