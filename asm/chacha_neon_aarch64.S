/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ChaCha20 keystream kernel for aarch64 Advanced SIMD (NEON), RFC 8439
 * section 2.3 (20 rounds, section 2.3 block function, little-endian output).
 *
 * void chacharng_chacha_blocks_neon(uint8_t *out,            x0
 *                                   const uint32_t state[16], x1
 *                                   size_t nblocks);          x2
 *
 * Writes exactly nblocks * 64 bytes of keystream to |out| (any alignment)
 * for block counters state[12], state[12] + 1, ... modulo 2^32; state[13]
 * never receives a carry.  Reads state[0..15] once and nothing else.
 *
 * ABI (AAPCS64): leaf function, lr is never written, so it is PAC-clean as
 * it stands; LANDING_PAD is the first instruction for BTI.  Clobbers x0-x4,
 * NZCV, v0-v7 and v16-v26.  v8-v15 are used as well; the callee-saved low
 * halves d8-d15 are kept in a 64-byte stack frame (with CFI) and restored.
 * No other stack use.  nblocks == 0 returns before touching anything.
 *
 * Layout: four blocks per iteration, "vertical": one vector register holds
 * the same state word of four consecutive blocks, so a quarter round is
 * plain lane-wise arithmetic and the counter vector dup(state[12]) +
 * {0,1,2,3} wraps modulo 2^32 per lane with no carry, as the contract
 * wants.  Rotations: rev32 .8h for 16, tbl for 8, shl + sri for 12 and 7.
 * Each 4x4 group of words is transposed in place with zip1/zip2, and the
 * words are assigned to registers so that afterwards block j sits in
 * v(4j)..v(4j+3), ready for one four-register st1 per block.
 *
 * Tail: a final batch of 1..3 blocks is computed as four and only the
 * blocks asked for are stored, straight from registers: there is no stack
 * buffer and nothing is written past out + nblocks * 64.
 *
 * On exit every vector register that held key material, keystream or
 * counters is cleared: v0-v7 and v16-v25 with movi, and the upper halves of
 * v8-v15 by the d8-d15 restore (a write to a D register zeroes bits 64-127,
 * and on SVE hardware the rest of the Z register).  v26 only ever holds a
 * public shuffle constant and v27-v31 are never touched.  The only stack
 * scratch is the saved d8-d15, which are the caller's values, not secrets,
 * so there is nothing there to wipe.  The clearing costs 18 single-cycle
 * instructions per call, against about 1200 per four-block batch.
 */
#include "asm_common.h"

    .arch armv8-a

/*
 * Word w of the state lives in register v(4 * (w % 4) + w / 4) during the
 * rounds.  After the in-place transposition of group g = {words 4g..4g+3},
 * which live in v(g), v(4+g), v(8+g), v(12+g), block j's row g lands in
 * v(4j+g), so each block ends up in four consecutive registers.
 */

/*
 * Four independent quarter rounds, step by step, so that each group of four
 * instructions has no dependency inside it.  Arguments are register
 * numbers: (a, b, c, d) of quarter rounds 0..3.  v16-v19 are the scratch
 * for the eor that feeds each shl/sri rotation.
 */
.macro QROUND4 a0, b0, c0, d0, a1, b1, c1, d1, a2, b2, c2, d2, a3, b3, c3, d3
    /* a += b; d ^= a; d <<<= 16 */
    add     v\a0\().4s, v\a0\().4s, v\b0\().4s
    add     v\a1\().4s, v\a1\().4s, v\b1\().4s
    add     v\a2\().4s, v\a2\().4s, v\b2\().4s
    add     v\a3\().4s, v\a3\().4s, v\b3\().4s
    eor     v\d0\().16b, v\d0\().16b, v\a0\().16b
    eor     v\d1\().16b, v\d1\().16b, v\a1\().16b
    eor     v\d2\().16b, v\d2\().16b, v\a2\().16b
    eor     v\d3\().16b, v\d3\().16b, v\a3\().16b
    rev32   v\d0\().8h, v\d0\().8h
    rev32   v\d1\().8h, v\d1\().8h
    rev32   v\d2\().8h, v\d2\().8h
    rev32   v\d3\().8h, v\d3\().8h
    /* c += d; b ^= c; b <<<= 12 */
    add     v\c0\().4s, v\c0\().4s, v\d0\().4s
    add     v\c1\().4s, v\c1\().4s, v\d1\().4s
    add     v\c2\().4s, v\c2\().4s, v\d2\().4s
    add     v\c3\().4s, v\c3\().4s, v\d3\().4s
    eor     v16.16b, v\b0\().16b, v\c0\().16b
    eor     v17.16b, v\b1\().16b, v\c1\().16b
    eor     v18.16b, v\b2\().16b, v\c2\().16b
    eor     v19.16b, v\b3\().16b, v\c3\().16b
    shl     v\b0\().4s, v16.4s, #12
    shl     v\b1\().4s, v17.4s, #12
    shl     v\b2\().4s, v18.4s, #12
    shl     v\b3\().4s, v19.4s, #12
    sri     v\b0\().4s, v16.4s, #20
    sri     v\b1\().4s, v17.4s, #20
    sri     v\b2\().4s, v18.4s, #20
    sri     v\b3\().4s, v19.4s, #20
    /* a += b; d ^= a; d <<<= 8 (byte shuffle: one instruction, no scratch) */
    add     v\a0\().4s, v\a0\().4s, v\b0\().4s
    add     v\a1\().4s, v\a1\().4s, v\b1\().4s
    add     v\a2\().4s, v\a2\().4s, v\b2\().4s
    add     v\a3\().4s, v\a3\().4s, v\b3\().4s
    eor     v\d0\().16b, v\d0\().16b, v\a0\().16b
    eor     v\d1\().16b, v\d1\().16b, v\a1\().16b
    eor     v\d2\().16b, v\d2\().16b, v\a2\().16b
    eor     v\d3\().16b, v\d3\().16b, v\a3\().16b
    tbl     v\d0\().16b, {v\d0\().16b}, v26.16b
    tbl     v\d1\().16b, {v\d1\().16b}, v26.16b
    tbl     v\d2\().16b, {v\d2\().16b}, v26.16b
    tbl     v\d3\().16b, {v\d3\().16b}, v26.16b
    /* c += d; b ^= c; b <<<= 7 */
    add     v\c0\().4s, v\c0\().4s, v\d0\().4s
    add     v\c1\().4s, v\c1\().4s, v\d1\().4s
    add     v\c2\().4s, v\c2\().4s, v\d2\().4s
    add     v\c3\().4s, v\c3\().4s, v\d3\().4s
    eor     v16.16b, v\b0\().16b, v\c0\().16b
    eor     v17.16b, v\b1\().16b, v\c1\().16b
    eor     v18.16b, v\b2\().16b, v\c2\().16b
    eor     v19.16b, v\b3\().16b, v\c3\().16b
    shl     v\b0\().4s, v16.4s, #7
    shl     v\b1\().4s, v17.4s, #7
    shl     v\b2\().4s, v18.4s, #7
    shl     v\b3\().4s, v19.4s, #7
    sri     v\b0\().4s, v16.4s, #25
    sri     v\b1\().4s, v17.4s, #25
    sri     v\b2\().4s, v18.4s, #25
    sri     v\b3\().4s, v19.4s, #25
.endm

/*
 * Transpose the 4x4 group held in va, vb, vc, vd (lane j = block j) so that
 * va..vd hold the group's four words of block 0..3 respectively.
 */
.macro TRANSPOSE4 a, b, c, d
    zip1    v16.4s, v\a\().4s, v\b\().4s
    zip2    v17.4s, v\a\().4s, v\b\().4s
    zip1    v18.4s, v\c\().4s, v\d\().4s
    zip2    v19.4s, v\c\().4s, v\d\().4s
    zip1    v\a\().2d, v16.2d, v18.2d
    zip2    v\b\().2d, v16.2d, v18.2d
    zip1    v\c\().2d, v17.2d, v19.2d
    zip2    v\d\().2d, v17.2d, v19.2d
.endm

    .text
    .p2align 5
FUNC_BEGIN(chacharng_chacha_blocks_neon)
    LANDING_PAD
    cbz     x2, .Lreturn

    stp     d8, d9, [sp, #-64]!
    .cfi_def_cfa_offset 64
    .cfi_offset d8, -64
    .cfi_offset d9, -56
    stp     d10, d11, [sp, #16]
    .cfi_offset d10, -48
    .cfi_offset d11, -40
    stp     d12, d13, [sp, #32]
    .cfi_offset d12, -32
    .cfi_offset d13, -24
    stp     d14, d15, [sp, #48]
    .cfi_offset d14, -16
    .cfi_offset d15, -8

    /*
     * v20-v23 = state rows 0-3.  Element-typed loads here and byte-typed
     * stores below keep the lanes right whatever the byte order.
     */
    ld1     {v20.4s, v21.4s, v22.4s, v23.4s}, [x1]
    adrp    x4, .Lneon_consts
    add     x4, x4, :lo12:.Lneon_consts
    ld1     {v24.4s}, [x4], #16             /* {0, 1, 2, 3} */
    ld1     {v26.16b}, [x4]                 /* rotate-left-8 byte shuffle */

    /*
     * v24 = counters of the current four blocks; it is added to word 12
     * before the transposition, so row 3 of the state is added afterwards
     * with its counter lane zeroed (v23).  v25 steps the counters by four.
     */
    dup     v25.4s, v23.s[0]
    add     v24.4s, v24.4s, v25.4s
    movi    v25.4s, #4
    mov     v23.s[0], wzr

.Lbatch:
    dup     v0.4s, v20.s[0]
    dup     v4.4s, v20.s[1]
    dup     v8.4s, v20.s[2]
    dup     v12.4s, v20.s[3]
    dup     v1.4s, v21.s[0]
    dup     v5.4s, v21.s[1]
    dup     v9.4s, v21.s[2]
    dup     v13.4s, v21.s[3]
    dup     v2.4s, v22.s[0]
    dup     v6.4s, v22.s[1]
    dup     v10.4s, v22.s[2]
    dup     v14.4s, v22.s[3]
    mov     v3.16b, v24.16b
    dup     v7.4s, v23.s[1]
    dup     v11.4s, v23.s[2]
    dup     v15.4s, v23.s[3]

    mov     w3, #10
.Ldoubleround:
    /* columns: words (0,4,8,12) (1,5,9,13) (2,6,10,14) (3,7,11,15) */
    QROUND4 0, 1, 2, 3,  4, 5, 6, 7,  8, 9, 10, 11,  12, 13, 14, 15
    /* diagonals: words (0,5,10,15) (1,6,11,12) (2,7,8,13) (3,4,9,14) */
    QROUND4 0, 5, 10, 15,  4, 9, 14, 3,  8, 13, 2, 7,  12, 1, 6, 11
    subs    w3, w3, #1
    b.ne    .Ldoubleround

    /* Feed-forward of the per-block counters; lane-wise, so no carry. */
    add     v3.4s, v3.4s, v24.4s
    add     v24.4s, v24.4s, v25.4s

    TRANSPOSE4 0, 4, 8, 12
    TRANSPOSE4 1, 5, 9, 13
    TRANSPOSE4 2, 6, 10, 14
    TRANSPOSE4 3, 7, 11, 15

    /* Block j is now v(4j)..v(4j+3); add the input state row by row. */
    add     v0.4s, v0.4s, v20.4s
    add     v4.4s, v4.4s, v20.4s
    add     v8.4s, v8.4s, v20.4s
    add     v12.4s, v12.4s, v20.4s
    add     v1.4s, v1.4s, v21.4s
    add     v5.4s, v5.4s, v21.4s
    add     v9.4s, v9.4s, v21.4s
    add     v13.4s, v13.4s, v21.4s
    add     v2.4s, v2.4s, v22.4s
    add     v6.4s, v6.4s, v22.4s
    add     v10.4s, v10.4s, v22.4s
    add     v14.4s, v14.4s, v22.4s
    add     v3.4s, v3.4s, v23.4s
    add     v7.4s, v7.4s, v23.4s
    add     v11.4s, v11.4s, v23.4s
    add     v15.4s, v15.4s, v23.4s

    subs    x2, x2, #4
    b.lo    .Ltail                          /* fewer than four were left */
    st1     {v0.16b, v1.16b, v2.16b, v3.16b}, [x0], #64
    st1     {v4.16b, v5.16b, v6.16b, v7.16b}, [x0], #64
    st1     {v8.16b, v9.16b, v10.16b, v11.16b}, [x0], #64
    st1     {v12.16b, v13.16b, v14.16b, v15.16b}, [x0], #64
    b.ne    .Lbatch                         /* flags still from the subs */
    b       .Lclear

.Ltail:
    /* x2 = remaining - 4, remaining in 1..3: store just those blocks. */
    add     x2, x2, #4
    st1     {v0.16b, v1.16b, v2.16b, v3.16b}, [x0], #64
    cmp     x2, #2
    b.lo    .Lclear
    st1     {v4.16b, v5.16b, v6.16b, v7.16b}, [x0], #64
    b.eq    .Lclear
    st1     {v8.16b, v9.16b, v10.16b, v11.16b}, [x0]

.Lclear:
    movi    v0.16b, #0
    movi    v1.16b, #0
    movi    v2.16b, #0
    movi    v3.16b, #0
    movi    v4.16b, #0
    movi    v5.16b, #0
    movi    v6.16b, #0
    movi    v7.16b, #0
    movi    v16.16b, #0
    movi    v17.16b, #0
    movi    v18.16b, #0
    movi    v19.16b, #0
    movi    v20.16b, #0
    movi    v21.16b, #0
    movi    v22.16b, #0
    movi    v23.16b, #0
    movi    v24.16b, #0
    movi    v25.16b, #0

    /* Restoring d8-d15 also zeroes the keystream in v8-v15's upper halves. */
    ldp     d10, d11, [sp, #16]
    ldp     d12, d13, [sp, #32]
    ldp     d14, d15, [sp, #48]
    ldp     d8, d9, [sp], #64
    .cfi_restore d8
    .cfi_restore d9
    .cfi_restore d10
    .cfi_restore d11
    .cfi_restore d12
    .cfi_restore d13
    .cfi_restore d14
    .cfi_restore d15
    .cfi_def_cfa_offset 0
.Lreturn:
    ret
FUNC_END(chacharng_chacha_blocks_neon)

    .section .rodata
    .p2align 4
.Lneon_consts:
    /* lane offsets of the four block counters */
    .long   0, 1, 2, 3
    /*
     * tbl indices for a 32-bit rotate left by 8: result byte k of each word
     * is source byte k - 1 (mod 4) of the same word.
     */
    .byte   3, 0, 1, 2,  7, 4, 5, 6,  11, 8, 9, 10,  15, 12, 13, 14
