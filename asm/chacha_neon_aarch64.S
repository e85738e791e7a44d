/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ChaCha20 keystream kernel for aarch64 Advanced SIMD (NEON) plus the
 * integer pipes, RFC 8439 section 2.3 (20 rounds, little-endian output).
 *
 * void chacharng_chacha_blocks_neon(uint8_t *out,            x0
 *                                   const uint32_t state[16], x1
 *                                   size_t nblocks);          x2
 *
 * Writes exactly nblocks * 64 bytes of keystream to |out| (any alignment)
 * for block counters state[12], state[12] + 1, ... modulo 2^32; state[13]
 * never receives a carry.  Reads state[0..15] and nothing else of the
 * caller's.  nblocks == 0 returns before touching anything.
 *
 * Why this shape.  A quarter round is a chain of add, eor and rotate with
 * no parallelism inside it, and NEON has no rotate: 12 and 7 take a shl and
 * an sri, which on Neoverse N1 and Cortex-A72 share one shift pipe, while
 * the integer pipes sit idle; on Neoverse V1 and V2 there are pipes to
 * spare, and the chains themselves are the limit.  So one pass computes
 * eight blocks as three kinds of independent work, interleaved step by step
 * so that every kind of pipe is fed at once:
 *
 *   - four blocks "vertically" in v0-v15: register v(4 * (w % 4) + w / 4)
 *     holds state word w of the four blocks, so a quarter round is plain
 *     lane-wise arithmetic and four of them run side by side;
 *   - two blocks "horizontally" in v16-v19 and v20-v23: one register per
 *     state row, the four quarter rounds of a round in one instruction, and
 *     the diagonals lined up with ext between the two half rounds;
 *   - two blocks, one after the other, in 32-bit general registers: the
 *     integer pipes do two double rounds of one block while NEON does one,
 *     so over the ten NEON double rounds they finish two blocks.
 *
 * Rotations: rev32 .8h for 16 and tbl (index table in v24) for 8, one
 * instruction each on any vector pipe; shl + sri for 12 and 7; ror for the
 * integer blocks.
 *
 * Block order within a pass, from the pass's first counter c: integer
 * blocks c, c + 1, vertical blocks c + 2 .. c + 5, horizontal blocks
 * c + 6, c + 7.  Which work a request gets, by the blocks still to do:
 *
 *   - 7 or more: the eight-block pass;
 *   - 3..6: a six-block pass, the same without the horizontal blocks,
 *     which costs about two thirds of an eight-block one;
 *   - 1 or 2 (an absorb is one): the integer pipes alone, one block at a
 *     time, a third of an eight-block pass per block and no vector work.
 *
 * A pass asked for fewer blocks than it computes stores only those, in the
 * order above, so the integer blocks (stored in the middle of the rounds)
 * are always wanted.  Nothing is ever written past out + nblocks * 64, and
 * there is no stack buffer.
 *
 * Variants, for the kernel tests only (chacha_impl_variants()): the
 * entries chacharng_chacha_blocks_neon_x8, _x6 and _x1 take the same
 * arguments and use the eight-block pass, the six-block pass or the
 * integer path for every block (a pass down to a last one of one block).
 *
 * ABI (AAPCS64): leaf function, lr is never written, so it is PAC-clean as
 * it stands; LANDING_PAD is the first instruction of every entry for BTI.
 * A 128-byte frame (with CFI) keeps the callee-saved d8-d15 and x19-x26;
 * x18 is never touched.  Clobbers x0-x17, NZCV, v0-v7 and v16-v31.
 *
 * On exit every register that held key material, keystream or counters is
 * cleared: x3-x17 and w19-w26 (the latter by their restore), v0-v7 and
 * v16-v31 with movi, and the upper halves of v8-v15 by the d8-d15 restore
 * (a write to a D register zeroes bits 64-127, and on SVE hardware the rest
 * of the Z register).  The frame holds only the caller's own register
 * values, so there is no stack scratch to wipe.
 *
 * The labels chacha_neon_mca_* mark the round loops for tools/mca-neon.sh,
 * which feeds them to llvm-mca; they are local symbols, not entry points.
 */
#include "asm_common.h"

    .arch armv8-a

/* Integer-pipe state words g0-g15 (w18 is the platform register). */
g0  .req w5
g1  .req w6
g2  .req w7
g3  .req w8
g4  .req w9
g5  .req w10
g6  .req w11
g7  .req w12
g8  .req w13
g9  .req w14
g10 .req w15
g11 .req w16
g12 .req w17
g13 .req w19
g14 .req w20
g15 .req w21

/*
 * One step of four vertical quarter rounds: x += y; z ^= x; z <<<= r, with
 * (x, y, z) = (a, b, d) for r = 16, 8 and (c, d, b) for r = 12, 7.
 * Arguments are register numbers.  v25-v28 hold the eor that feeds a
 * shl/sri pair.
 */
.macro VSTEP x0, y0, z0, x1, y1, z1, x2, y2, z2, x3, y3, z3, r
    add     v\x0\().4s, v\x0\().4s, v\y0\().4s
    add     v\x1\().4s, v\x1\().4s, v\y1\().4s
    add     v\x2\().4s, v\x2\().4s, v\y2\().4s
    add     v\x3\().4s, v\x3\().4s, v\y3\().4s
.if \r == 16 || \r == 8
    eor     v\z0\().16b, v\z0\().16b, v\x0\().16b
    eor     v\z1\().16b, v\z1\().16b, v\x1\().16b
    eor     v\z2\().16b, v\z2\().16b, v\x2\().16b
    eor     v\z3\().16b, v\z3\().16b, v\x3\().16b
.if \r == 16
    rev32   v\z0\().8h, v\z0\().8h
    rev32   v\z1\().8h, v\z1\().8h
    rev32   v\z2\().8h, v\z2\().8h
    rev32   v\z3\().8h, v\z3\().8h
.else
    tbl     v\z0\().16b, {v\z0\().16b}, v24.16b
    tbl     v\z1\().16b, {v\z1\().16b}, v24.16b
    tbl     v\z2\().16b, {v\z2\().16b}, v24.16b
    tbl     v\z3\().16b, {v\z3\().16b}, v24.16b
.endif
.else
    eor     v25.16b, v\z0\().16b, v\x0\().16b
    eor     v26.16b, v\z1\().16b, v\x1\().16b
    eor     v27.16b, v\z2\().16b, v\x2\().16b
    eor     v28.16b, v\z3\().16b, v\x3\().16b
    shl     v\z0\().4s, v25.4s, #\r
    shl     v\z1\().4s, v26.4s, #\r
    shl     v\z2\().4s, v27.4s, #\r
    shl     v\z3\().4s, v28.4s, #\r
    sri     v\z0\().4s, v25.4s, #(32 - \r)
    sri     v\z1\().4s, v26.4s, #(32 - \r)
    sri     v\z2\().4s, v27.4s, #(32 - \r)
    sri     v\z3\().4s, v28.4s, #(32 - \r)
.endif
.endm

/*
 * The same step for the two horizontal blocks, whose rows a, b, c, d are
 * v16-v19 and v20-v23: (x0, y0, z0) are register numbers in the first,
 * (x1, y1, z1) in the second.  v29 and v30 are the shl/sri scratch.
 */
.macro HSTEP x0, y0, z0, x1, y1, z1, r
    add     v\x0\().4s, v\x0\().4s, v\y0\().4s
    add     v\x1\().4s, v\x1\().4s, v\y1\().4s
.if \r == 16 || \r == 8
    eor     v\z0\().16b, v\z0\().16b, v\x0\().16b
    eor     v\z1\().16b, v\z1\().16b, v\x1\().16b
.if \r == 16
    rev32   v\z0\().8h, v\z0\().8h
    rev32   v\z1\().8h, v\z1\().8h
.else
    tbl     v\z0\().16b, {v\z0\().16b}, v24.16b
    tbl     v\z1\().16b, {v\z1\().16b}, v24.16b
.endif
.else
    eor     v29.16b, v\z0\().16b, v\x0\().16b
    eor     v30.16b, v\z1\().16b, v\x1\().16b
    shl     v\z0\().4s, v29.4s, #\r
    shl     v\z1\().4s, v30.4s, #\r
    sri     v\z0\().4s, v29.4s, #(32 - \r)
    sri     v\z1\().4s, v30.4s, #(32 - \r)
.endif
.endm

/*
 * Rotate the horizontal rows b, c, d left by 1, 2, 3 words (n = 4) so that
 * the diagonals become columns, or back (n = 12).
 */
.macro HSHUFFLE n
    ext     v17.16b, v17.16b, v17.16b, #\n
    ext     v21.16b, v21.16b, v21.16b, #\n
    ext     v18.16b, v18.16b, v18.16b, #8
    ext     v22.16b, v22.16b, v22.16b, #8
    ext     v19.16b, v19.16b, v19.16b, #(16 - \n)
    ext     v23.16b, v23.16b, v23.16b, #(16 - \n)
.endm

/* One step of four integer quarter rounds, as VSTEP (rotate right 32 - r). */
.macro GSTEP x0, y0, z0, x1, y1, z1, x2, y2, z2, x3, y3, z3, r
    add     \x0, \x0, \y0
    add     \x1, \x1, \y1
    add     \x2, \x2, \y2
    add     \x3, \x3, \y3
    eor     \z0, \z0, \x0
    eor     \z1, \z1, \x1
    eor     \z2, \z2, \x2
    eor     \z3, \z3, \x3
    ror     \z0, \z0, #(32 - \r)
    ror     \z1, \z1, #(32 - \r)
    ror     \z2, \z2, #(32 - \r)
    ror     \z3, \z3, #(32 - \r)
.endm

/* Integer column steps: quarter rounds (0,4,8,12) (1,5,9,13) ... */
.macro GCOL_AB r
    GSTEP g0, g4, g12,  g1, g5, g13,  g2, g6, g14,  g3, g7, g15,  \r
.endm
.macro GCOL_CD r
    GSTEP g8, g12, g4,  g9, g13, g5,  g10, g14, g6,  g11, g15, g7,  \r
.endm
/* Integer diagonal steps: (0,5,10,15) (1,6,11,12) (2,7,8,13) (3,4,9,14) */
.macro GDIAG_AB r
    GSTEP g0, g5, g15,  g1, g6, g12,  g2, g7, g13,  g3, g4, g14,  \r
.endm
.macro GDIAG_CD r
    GSTEP g10, g15, g5,  g11, g12, g6,  g8, g13, g7,  g9, g14, g4,  \r
.endm

/* One integer double round. */
.macro GDOUBLEROUND
    GCOL_AB 16
    GCOL_CD 12
    GCOL_AB 8
    GCOL_CD 7
    GDIAG_AB 16
    GDIAG_CD 12
    GDIAG_AB 8
    GDIAG_CD 7
.endm

/*
 * One double round of the NEON blocks (the horizontal ones only if wide is
 * 1) and two of the integer block.  Each NEON step is followed by two
 * integer steps, so the integer block does a whole double round during
 * each NEON half round.  Vertical words:
 * columns (v0,v1,v2,v3) (v4,v5,v6,v7) (v8,v9,v10,v11) (v12,v13,v14,v15),
 * diagonals (v0,v5,v10,v15) (v4,v9,v14,v3) (v8,v13,v2,v7) (v12,v1,v6,v11).
 */
.macro PASS_DOUBLEROUND wide
    VSTEP   0, 1, 3,  4, 5, 7,  8, 9, 11,  12, 13, 15,  16
.if \wide
    HSTEP   16, 17, 19,  20, 21, 23, 16
.endif
    GCOL_AB 16
    GCOL_CD 12
    VSTEP   2, 3, 1,  6, 7, 5,  10, 11, 9,  14, 15, 13,  12
.if \wide
    HSTEP   18, 19, 17,  22, 23, 21, 12
.endif
    GCOL_AB 8
    GCOL_CD 7
    VSTEP   0, 1, 3,  4, 5, 7,  8, 9, 11,  12, 13, 15,  8
.if \wide
    HSTEP   16, 17, 19,  20, 21, 23, 8
.endif
    GDIAG_AB 16
    GDIAG_CD 12
    VSTEP   2, 3, 1,  6, 7, 5,  10, 11, 9,  14, 15, 13,  7
.if \wide
    HSTEP   18, 19, 17,  22, 23, 21, 7
    HSHUFFLE 4
.endif
    GDIAG_AB 8
    GDIAG_CD 7

    VSTEP   0, 5, 15,  4, 9, 3,  8, 13, 7,  12, 1, 11,  16
.if \wide
    HSTEP   16, 17, 19,  20, 21, 23, 16
.endif
    GCOL_AB 16
    GCOL_CD 12
    VSTEP   10, 15, 5,  14, 3, 9,  2, 7, 13,  6, 11, 1,  12
.if \wide
    HSTEP   18, 19, 17,  22, 23, 21, 12
.endif
    GCOL_AB 8
    GCOL_CD 7
    VSTEP   0, 5, 15,  4, 9, 3,  8, 13, 7,  12, 1, 11,  8
.if \wide
    HSTEP   16, 17, 19,  20, 21, 23, 8
.endif
    GDIAG_AB 16
    GDIAG_CD 12
    VSTEP   10, 15, 5,  14, 3, 9,  2, 7, 13,  6, 11, 1,  7
.if \wide
    HSTEP   18, 19, 17,  22, 23, 21, 7
    HSHUFFLE 12
.endif
    GDIAG_AB 8
    GDIAG_CD 7
.endm

/* Load the integer block with counter wc: g0-g15 = state, g12 = wc. */
.macro GLOAD wc
    ldp     g0, g1, [x1]
    ldp     g2, g3, [x1, #8]
    ldp     g4, g5, [x1, #16]
    ldp     g6, g7, [x1, #24]
    ldp     g8, g9, [x1, #32]
    ldp     g10, g11, [x1, #40]
    mov     g12, \wc
    ldr     g13, [x1, #52]
    ldp     g14, g15, [x1, #56]
.endm

/* Add the input state (counter wc) and store the block at [xd]. */
.macro GSTORE xd, wc
    ldp     w3, w22, [x1]
    add     g0, g0, w3
    add     g1, g1, w22
    ldp     w3, w22, [x1, #8]
    add     g2, g2, w3
    add     g3, g3, w22
    stp     g0, g1, [\xd]
    ldp     w3, w22, [x1, #16]
    add     g4, g4, w3
    add     g5, g5, w22
    stp     g2, g3, [\xd, #8]
    ldp     w3, w22, [x1, #24]
    add     g6, g6, w3
    add     g7, g7, w22
    stp     g4, g5, [\xd, #16]
    ldp     w3, w22, [x1, #32]
    add     g8, g8, w3
    add     g9, g9, w22
    stp     g6, g7, [\xd, #24]
    ldp     w3, w22, [x1, #40]
    add     g10, g10, w3
    add     g11, g11, w22
    stp     g8, g9, [\xd, #32]
    ldp     w3, w22, [x1, #52]
    add     g12, g12, \wc
    add     g13, g13, w3
    stp     g10, g11, [\xd, #40]
    add     g14, g14, w22
    ldr     w3, [x1, #60]
    add     g15, g15, w3
    stp     g12, g13, [\xd, #48]
    stp     g14, g15, [\xd, #56]
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

/*
 * One pass from counter w4 at x0, x2 >= 1 blocks left: eight blocks if
 * wide is 1, else six (no horizontal blocks).  Stores min(x2, 8 or 6)
 * blocks, then advances x0, w4 and x2 (to 0 if it was the last pass).
 */
.macro PASS wide, name
    /*
     * Vertical blocks: each word broadcast, word 12 = c + 2 + {0, 1, 2, 3}.
     * Horizontal blocks: the state rows, counters c + 6 and c + 7.
     * Element-typed loads and byte-typed stores keep the lanes right.
     */
    ld1     {v16.4s, v17.4s, v18.4s, v19.4s}, [x1]
    add     w3, w4, #2
    dup     v3.4s, w3
    add     v3.4s, v3.4s, v31.4s
    dup     v0.4s, v16.s[0]
    dup     v4.4s, v16.s[1]
    dup     v8.4s, v16.s[2]
    dup     v12.4s, v16.s[3]
    dup     v1.4s, v17.s[0]
    dup     v5.4s, v17.s[1]
    dup     v9.4s, v17.s[2]
    dup     v13.4s, v17.s[3]
    dup     v2.4s, v18.s[0]
    dup     v6.4s, v18.s[1]
    dup     v10.4s, v18.s[2]
    dup     v14.4s, v18.s[3]
    dup     v7.4s, v19.s[1]
    dup     v11.4s, v19.s[2]
    dup     v15.4s, v19.s[3]
.if \wide
    mov     v20.16b, v16.16b
    mov     v21.16b, v17.16b
    mov     v22.16b, v18.16b
    mov     v23.16b, v19.16b
    add     w3, w4, #6
    mov     v19.s[0], w3
    add     w3, w4, #7
    mov     v23.s[0], w3
.endif

    /* First integer block: counter c, stored at x23 = out. */
    mov     w24, w4
    mov     x23, x0
    GLOAD   w24
.Lhalf_\name:
    mov     w3, #5
    .p2align 4
chacha_neon_mca_\name\()_begin:
    PASS_DOUBLEROUND \wide
    subs    w3, w3, #1
    b.ne    chacha_neon_mca_\name\()_begin
chacha_neon_mca_\name\()_end:

    /* Halfway: the first integer block is done and the second starts. */
    cmp     x23, x0
    b.ne    .Lsecond_\name
    GSTORE  x23, w24
    add     x23, x0, #64
    add     w24, w4, #1
    GLOAD   w24
    b       .Lhalf_\name
.Lsecond_\name:
    cmp     x2, #2
    b.lo    .Lneon_\name                    /* a forced pass of one block */
    GSTORE  x23, w24
.Lneon_\name:

    ld1     {v25.4s, v26.4s, v27.4s, v28.4s}, [x1]
.if \wide
    /* Horizontal blocks: add the state rows with their counters. */
    add     v16.4s, v16.4s, v25.4s
    add     v17.4s, v17.4s, v26.4s
    add     v18.4s, v18.4s, v27.4s
    add     v20.4s, v20.4s, v25.4s
    add     v21.4s, v21.4s, v26.4s
    add     v22.4s, v22.4s, v27.4s
    add     w3, w4, #6
    mov     v28.s[0], w3
    add     v19.4s, v19.4s, v28.4s
    add     w3, w4, #7
    mov     v28.s[0], w3
    add     v23.4s, v23.4s, v28.4s
    add     x3, x0, #384
    cmp     x2, #7
    b.lo    .Lhorizontal_done_\name
    st1     {v16.16b, v17.16b, v18.16b, v19.16b}, [x3], #64
    b.eq    .Lhorizontal_done_\name
    st1     {v20.16b, v21.16b, v22.16b, v23.16b}, [x3]
.Lhorizontal_done_\name:
.endif

    /*
     * Vertical blocks: the counters go into word 12 before the
     * transposition, the rest of the state (counter lane zeroed) after.
     */
    add     w3, w4, #2
    dup     v29.4s, w3
    add     v29.4s, v29.4s, v31.4s
    add     v3.4s, v3.4s, v29.4s
    mov     v28.s[0], wzr

    TRANSPOSE4 0, 4, 8, 12
    TRANSPOSE4 1, 5, 9, 13
    TRANSPOSE4 2, 6, 10, 14
    TRANSPOSE4 3, 7, 11, 15

    /* Block j is now v(4j)..v(4j+3); add the input state row by row. */
    add     v0.4s, v0.4s, v25.4s
    add     v4.4s, v4.4s, v25.4s
    add     v8.4s, v8.4s, v25.4s
    add     v12.4s, v12.4s, v25.4s
    add     v1.4s, v1.4s, v26.4s
    add     v5.4s, v5.4s, v26.4s
    add     v9.4s, v9.4s, v26.4s
    add     v13.4s, v13.4s, v26.4s
    add     v2.4s, v2.4s, v27.4s
    add     v6.4s, v6.4s, v27.4s
    add     v10.4s, v10.4s, v27.4s
    add     v14.4s, v14.4s, v27.4s
    add     v3.4s, v3.4s, v28.4s
    add     v7.4s, v7.4s, v28.4s
    add     v11.4s, v11.4s, v28.4s
    add     v15.4s, v15.4s, v28.4s

    add     x3, x0, #128
    cmp     x2, #6
    b.lo    .Lvertical_part_\name
    st1     {v0.16b, v1.16b, v2.16b, v3.16b}, [x3], #64
    st1     {v4.16b, v5.16b, v6.16b, v7.16b}, [x3], #64
    st1     {v8.16b, v9.16b, v10.16b, v11.16b}, [x3], #64
    st1     {v12.16b, v13.16b, v14.16b, v15.16b}, [x3]
    b       .Lvertical_done_\name
.Lvertical_part_\name:
    /* 1..5 blocks in this pass: vertical block j is block 2 + j. */
    cmp     x2, #3
    b.lo    .Lvertical_done_\name
    st1     {v0.16b, v1.16b, v2.16b, v3.16b}, [x3], #64
    b.eq    .Lvertical_done_\name
    st1     {v4.16b, v5.16b, v6.16b, v7.16b}, [x3], #64
    cmp     x2, #5
    b.lo    .Lvertical_done_\name
    st1     {v8.16b, v9.16b, v10.16b, v11.16b}, [x3]
.Lvertical_done_\name:

.if \wide
    subs    x2, x2, #8
    add     x0, x0, #512
    add     w4, w4, #8
.else
    subs    x2, x2, #6
    add     x0, x0, #384
    add     w4, w4, #6
.endif
    csel    x2, x2, xzr, hi                 /* blocks left, 0 if none */
.endm

    .text
    .p2align 5
/*
 * void chacha_neon_blocks_by(uint8_t *out, const uint32_t state[16],
 *                            size_t nblocks, size_t int_max,
 *                            size_t six_max);     x0-x4
 *
 * The kernel proper, a local function with the public entries' first
 * three arguments and two more: int_max, the largest remainder that goes
 * to the integer path, and six_max, the largest that takes a six-block
 * rather than an eight-block pass (0: never; all ones: always).  Each
 * entry below sets those two and branches to it as a tail call, so no
 * entry runs code behind another's labels, and this function clears what
 * it used itself.
 */
    .type   chacha_neon_blocks_by, %function
chacha_neon_blocks_by:
    .cfi_startproc
    cbz     x2, .Lreturn

    stp     d8, d9, [sp, #-128]!
    .cfi_def_cfa_offset 128
    .cfi_offset d8, -128
    .cfi_offset d9, -120
    stp     d10, d11, [sp, #16]
    .cfi_offset d10, -112
    .cfi_offset d11, -104
    stp     d12, d13, [sp, #32]
    .cfi_offset d12, -96
    .cfi_offset d13, -88
    stp     d14, d15, [sp, #48]
    .cfi_offset d14, -80
    .cfi_offset d15, -72
    stp     x19, x20, [sp, #64]
    .cfi_offset x19, -64
    .cfi_offset x20, -56
    stp     x21, x22, [sp, #80]
    .cfi_offset x21, -48
    .cfi_offset x22, -40
    stp     x23, x24, [sp, #96]
    .cfi_offset x23, -32
    .cfi_offset x24, -24
    stp     x25, x26, [sp, #112]
    .cfi_offset x25, -16
    .cfi_offset x26, -8

    mov     x25, x3                         /* integer path up to x25 */
    mov     x26, x4                         /* six-block pass up to x26 */
    ldr     w4, [x1, #48]                   /* w4 = counter of next block */
    cmp     x2, x25
    b.ls    .Lsingle                        /* no vector work at all */

    adrp    x3, .Lneon_consts
    add     x3, x3, :lo12:.Lneon_consts
    ld1     {v31.4s}, [x3], #16             /* {0, 1, 2, 3} */
    ld1     {v24.16b}, [x3]                 /* rotate-left-8 byte shuffle */

.Lpass:
    cmp     x2, x26
    b.ls    .Lpass6
    PASS    1, pass8
    b       .Lpass_done
.Lpass6:
    PASS    0, pass6
.Lpass_done:
    cmp     x2, x25
    b.hi    .Lpass

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
    movi    v26.16b, #0
    movi    v27.16b, #0
    movi    v28.16b, #0
    movi    v29.16b, #0
    movi    v30.16b, #0
    movi    v31.16b, #0
    cbz     x2, .Lclear

.Lsingle:
    /* x2 >= 1 blocks, one at a time on the integer pipes alone. */
    GLOAD   w4
    mov     w3, #10
    .p2align 4
chacha_neon_mca_single_begin:
    GDOUBLEROUND
    subs    w3, w3, #1
    b.ne    chacha_neon_mca_single_begin
chacha_neon_mca_single_end:
    GSTORE  x0, w4
    add     x0, x0, #64
    add     w4, w4, #1
    subs    x2, x2, #1
    b.ne    .Lsingle

.Lclear:
    mov     x3, xzr
    mov     x4, xzr
    mov     x5, xzr
    mov     x6, xzr
    mov     x7, xzr
    mov     x8, xzr
    mov     x9, xzr
    mov     x10, xzr
    mov     x11, xzr
    mov     x12, xzr
    mov     x13, xzr
    mov     x14, xzr
    mov     x15, xzr
    mov     x16, xzr
    mov     x17, xzr

    /*
     * Restoring d8-d15 also zeroes the keystream in v8-v15's upper halves;
     * restoring x19-x26 replaces the integer block's words.
     */
    ldp     x19, x20, [sp, #64]
    ldp     x21, x22, [sp, #80]
    ldp     x23, x24, [sp, #96]
    ldp     x25, x26, [sp, #112]
    ldp     d10, d11, [sp, #16]
    ldp     d12, d13, [sp, #32]
    ldp     d14, d15, [sp, #48]
    ldp     d8, d9, [sp], #128
    .cfi_restore x19
    .cfi_restore x20
    .cfi_restore x21
    .cfi_restore x22
    .cfi_restore x23
    .cfi_restore x24
    .cfi_restore x25
    .cfi_restore x26
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
    .cfi_endproc
    .size   chacha_neon_blocks_by, .-chacha_neon_blocks_by

/*
 * The public entry: int_max 2 and six_max 6, the cheapest choice for each
 * size by the estimates.  The others are for the kernel tests.
 */
FUNC_BEGIN(chacharng_chacha_blocks_neon)
    LANDING_PAD
    mov     x3, #2
    mov     x4, #6
    b       chacha_neon_blocks_by
FUNC_END(chacharng_chacha_blocks_neon)

FUNC_BEGIN(chacharng_chacha_blocks_neon_x8)
    LANDING_PAD
    mov     x3, #0
    mov     x4, #0
    b       chacha_neon_blocks_by
FUNC_END(chacharng_chacha_blocks_neon_x8)

FUNC_BEGIN(chacharng_chacha_blocks_neon_x6)
    LANDING_PAD
    mov     x3, #0
    mov     x4, #-1
    b       chacha_neon_blocks_by
FUNC_END(chacharng_chacha_blocks_neon_x6)

FUNC_BEGIN(chacharng_chacha_blocks_neon_x1)
    LANDING_PAD
    mov     x3, #-1
    mov     x4, #0
    b       chacha_neon_blocks_by
FUNC_END(chacharng_chacha_blocks_neon_x1)

    .section .rodata
    .p2align 4
.Lneon_consts:
    /* lane offsets of the four vertical block counters */
    .long   0, 1, 2, 3
    /*
     * tbl indices for a 32-bit rotate left by 8: result byte k of each word
     * is source byte k - 1 (mod 4) of the same word.
     */
    .byte   3, 0, 1, 2,  7, 4, 5, 6,  11, 8, 9, 10,  15, 12, 13, 14
