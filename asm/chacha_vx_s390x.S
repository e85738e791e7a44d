/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ChaCha20 keystream kernel for the s390x vector facility (z13 and later),
 * RFC 8439 section 2.3 (20 rounds, little-endian output on a big-endian
 * machine).
 *
 * void chacharng_chacha_blocks_vx(uint8_t *out,              r2
 *                                 const uint32_t state[16],   r3
 *                                 size_t nblocks);            r4
 *
 * Writes exactly nblocks * 64 bytes of keystream to |out| (any alignment)
 * for block counters state[12], state[12] + 1, ... modulo 2^32; state[13]
 * never receives a carry.  Reads state[0..15] and nothing else of the
 * caller's.  nblocks == 0 returns before touching anything.
 *
 * Why this shape.  The vector facility has a rotate with an immediate
 * count (verllf), so a quarter-round step is three instructions that need
 * no scratch register: x += y; z ^= x; z <<<= r.  Blocks laid out
 * "vertically" (register i holds state word i of four blocks, one block a
 * lane) then cost 24 instructions per block and double round, against 30
 * for a block laid out by rows, which also needs vsldb to line up the
 * diagonals.  Four vertical blocks give four independent chains of three
 * dependent instructions per step; the main pass runs two groups of four
 * blocks side by side, v0-v15 and v16-v31, so that eight chains keep the
 * vector pipes fed even where an instruction's latency is longer than the
 * two cycles LLVM's z15 and z16 models give it (with those, four chains
 * already fill both pipes, and the two shapes cost the same per block:
 * tools/mca-vx.sh).  Every register is in use, none spare.
 *
 *   - 8 or more blocks to do: the eight-block pass.  After the rounds the
 *     second group is parked in the output itself, in the 256 bytes its
 *     blocks will occupy (vstm), the first group is finished with v16-v31
 *     as scratch, and the second is brought back (vlm) and finished the
 *     same way.  No stack scratch.
 *   - 1 to 7 blocks: four-block passes on v0-v15, the last one storing
 *     only the blocks asked for.
 *
 * Finishing four blocks: add the input words (vlrepf broadcasts; the
 * counter word from r5 plus the lane offsets), then a 4x4 transpose per
 * row of the state, vmrhf/vmrlf and one vperm per output register.  The
 * vperm does the byte order as well: its masks pick each 32-bit word's
 * bytes in reverse, so the big-endian lanes come out as RFC 8439's
 * little-endian words.  vlbr/vstbr would do that in the load or store, but
 * they need the z15 vector-enhancements facility 2; vperm is z13.
 *
 * ABI (s390x ELF): r2-r4 arguments; r0, r1 and r5 scratch (loop count,
 * constants, counter); no other general register is written.  f8-f15,
 * which overlay the leftmost halves of v8-v15, are callee-saved: they are
 * kept in the caller's register save area, in the slots of r6-r13 (offsets
 * 48-111 from r15), which this function never otherwise uses; no frame of
 * its own.  Clobbers CC and v0-v31.
 *
 * On exit v0-v31 are cleared with vzero before f8-f15 are restored (the
 * restore writes only the leftmost halves of v8-v15), and r5 (the last
 * counter) is cleared.  The save area holds only the caller's own register
 * values; there is no other stack use.
 *
 * The keyed batch (chacharng_chacha_blocks_key_vx) is chacha_keyed.c's
 * two calls, the key block and then the others: a refill's 17 blocks take
 * three passes (8, 8 and one of four) that way or in one call.
 *
 * The labels chacha_vx_mca_* mark the round loops for tools/mca-vx.sh,
 * which feeds them to llvm-mca; they are local symbols, not entry points.
 */
#include "asm_common.h"

    .machine "z13"

/* Offsets into .Lvx_consts */
#define INC0 0   /* lane offsets of the counter, first group */
#define INC4 16  /* ... second group */
#define MASKH 32 /* vperm: words 0-1 of each source, bytes reversed */
#define MASKL 48 /* vperm: words 2-3 of each source, bytes reversed */

/* d += s (vaf) or d ^= s (vx) for four register pairs, each number + o. */
.macro OP4 insn, o, d0, s0, d1, s1, d2, s2, d3, s3
    \insn   \d0 + \o, \d0 + \o, \s0 + \o
    \insn   \d1 + \o, \d1 + \o, \s1 + \o
    \insn   \d2 + \o, \d2 + \o, \s2 + \o
    \insn   \d3 + \o, \d3 + \o, \s3 + \o
.endm

/* z <<<= r for four registers, each number + o. */
.macro ROTL4 o, r, z0, z1, z2, z3
    .irp    z, \z0, \z1, \z2, \z3
    verllf  \z + \o, \z + \o, \r
    .endr
.endm

/*
 * One quarter-round step on four columns: x += y; z ^= x; z <<<= r.  The
 * arguments are register numbers in the first group; with g = 1 the same
 * step runs on the second group (register + 16), interleaved.
 */
.macro STEP g, x0, y0, z0, x1, y1, z1, x2, y2, z2, x3, y3, z3, r
    .irp    o, 0, 16
    .if     \o == 0 || \g
    OP4     vaf, \o, \x0, \y0, \x1, \y1, \x2, \y2, \x3, \y3
    .endif
    .endr
    .irp    o, 0, 16
    .if     \o == 0 || \g
    OP4     vx, \o, \z0, \x0, \z1, \x1, \z2, \x2, \z3, \x3
    .endif
    .endr
    .irp    o, 0, 16
    .if     \o == 0 || \g
    ROTL4   \o, \r, \z0, \z1, \z2, \z3
    .endif
    .endr
.endm

/* Four quarter rounds (a, b, c, d) side by side, in one or both groups. */
.macro QROUND g, a0, b0, c0, d0, a1, b1, c1, d1, a2, b2, c2, d2, a3, b3, c3, d3
    STEP    \g, \a0, \b0, \d0, \a1, \b1, \d1, \a2, \b2, \d2, \a3, \b3, \d3, 16
    STEP    \g, \c0, \d0, \b0, \c1, \d1, \b1, \c2, \d2, \b2, \c3, \d3, \b3, 12
    STEP    \g, \a0, \b0, \d0, \a1, \b1, \d1, \a2, \b2, \d2, \a3, \b3, \d3, 8
    STEP    \g, \c0, \d0, \b0, \c1, \d1, \b1, \c2, \d2, \b2, \c3, \d3, \b3, 7
.endm

/* Ten double rounds; the loop between the chacha_vx_mca_<name> labels. */
.macro ROUNDS g, name
    lhi     %r0, 10
chacha_vx_mca_\name\()_begin:
    QROUND  \g, 0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15
    QROUND  \g, 0, 5, 10, 15, 1, 6, 11, 12, 2, 7, 8, 13, 3, 4, 9, 14
    brct    %r0, chacha_vx_mca_\name\()_begin
chacha_vx_mca_\name\()_end:
.endm

/*
 * Load the state into the first group (g = 0) or both: word i broadcast
 * into v(i) and v(i + 16), the counter word r5 + the lane offsets.
 */
.macro LOAD_STATE g
    vlvgf   %v16, %r5, 0
    vrepf   %v16, %v16, 0
    vl      %v17, INC0(%r1)
    vaf     %v12, %v16, %v17
.if \g
    vl      %v17, INC4(%r1)
    vaf     %v28, %v16, %v17
.endif
    .irp    i, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15
    vlrepf  \i, 4 * \i(%r3)
    .endr
.if \g
    .irp    i, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15
    vlr     \i + 16, \i
    .endr
.endif
.endm

/*
 * Turn the four blocks in v0-v15 (after the rounds) into keystream: add
 * the input words, with lane offsets |inc| for the counter, transpose and
 * reverse the bytes of each word.  Block j's rows end up in v(j), v(4 + j),
 * v(8 + j), v(12 + j).  v16-v31 are scratch.
 */
.macro FINISH4 inc
    vlvgf   %v16, %r5, 0
    vrepf   %v16, %v16, 0
    vl      %v17, \inc(%r1)
    vaf     %v16, %v16, %v17
    vaf     %v12, %v12, %v16
    .irp    i, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15
    vlrepf  \i + 16, 4 * \i(%r3)
    .endr
    .irp    i, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15
    vaf     \i, \i, \i + 16
    .endr
    vl      %v30, MASKH(%r1)
    vl      %v31, MASKL(%r1)
    .irp    r, 0, 4, 8, 12
    vmrhf   %v16, \r, \r + 1
    vmrhf   %v17, \r + 2, \r + 3
    vmrlf   %v18, \r, \r + 1
    vmrlf   %v19, \r + 2, \r + 3
    vperm   \r, %v16, %v17, %v30
    vperm   \r + 1, %v16, %v17, %v31
    vperm   \r + 2, %v18, %v19, %v30
    vperm   \r + 3, %v18, %v19, %v31
    .endr
.endm

/* Store block j of a finished group (FINISH4) at |off| + 64 * j(r2). */
.macro STORE_BLOCK j, off
    vst     \j, \off + 64 * \j(%r2)
    vst     \j + 4, \off + 64 * \j + 16(%r2)
    vst     \j + 8, \off + 64 * \j + 32(%r2)
    vst     \j + 12, \off + 64 * \j + 48(%r2)
.endm

    .section .rodata
    .balign 16
.Lvx_consts:
    .long   0, 1, 2, 3
    .long   4, 5, 6, 7
    .byte   3, 2, 1, 0, 7, 6, 5, 4, 19, 18, 17, 16, 23, 22, 21, 20
    .byte   11, 10, 9, 8, 15, 14, 13, 12, 27, 26, 25, 24, 31, 30, 29, 28

    .text
    .balign 16
FUNC_BEGIN(chacharng_chacha_blocks_vx)
    clgijne %r4, 0, .Lvx_start
    br      %r14
.Lvx_start:
    /*
     * f8-f15 into the r6-r13 slots of the caller's register save area.
     * CFI names them by DWARF number (f8 24, f9 28, f10 25, ... f15 31,
     * the ABI's order): the assembler numbers %fN as 16 + N.
     */
    .irp    f, 8, 9, 10, 11, 12, 13, 14, 15
    std     %f\f, 48 + 8 * (\f - 8)(%r15)
    .cfi_offset 24 + (\f - 8) / 2 + 4 * ((\f - 8) % 2), 48 + 8 * (\f - 8) - 160
    .endr
    larl    %r1, .Lvx_consts
    l       %r5, 4 * 12(%r3)

.Lvx_pass8:
    clgijl  %r4, 8, .Lvx_pass4
    LOAD_STATE 1
    ROUNDS  1, pass8
    /* park the second group where its blocks go */
    vstm    %v16, %v31, 256(%r2)
    FINISH4 INC0
    .irp    j, 0, 1, 2, 3
    STORE_BLOCK \j, 0
    .endr
    vlm     %v0, %v15, 256(%r2)
    FINISH4 INC4
    .irp    j, 0, 1, 2, 3
    STORE_BLOCK \j, 256
    .endr
    alfi    %r5, 8
    la      %r2, 512(%r2)
    aghi    %r4, -8
    j       .Lvx_pass8

.Lvx_pass4:
    clgije  %r4, 0, .Lvx_done
    LOAD_STATE 0
    ROUNDS  0, pass4
    FINISH4 INC0
    STORE_BLOCK 0, 0
    clgije  %r4, 1, .Lvx_done
    STORE_BLOCK 1, 0
    clgije  %r4, 2, .Lvx_done
    STORE_BLOCK 2, 0
    clgije  %r4, 3, .Lvx_done
    STORE_BLOCK 3, 0
    alfi    %r5, 4
    la      %r2, 256(%r2)
    aghi    %r4, -4
    j       .Lvx_pass4

.Lvx_done:
    /* keystream, key words and counters in every vector register */
    .irp    i, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
    vzero   \i
    vzero   \i + 16
    .endr
    /* the counter of the last pass */
    lghi    %r5, 0
    .irp    f, 8, 9, 10, 11, 12, 13, 14, 15
    ld      %f\f, 48 + 8 * (\f - 8)(%r15)
    .cfi_restore 24 + (\f - 8) / 2 + 4 * ((\f - 8) % 2)
    .endr
    br      %r14
FUNC_END(chacharng_chacha_blocks_vx)
