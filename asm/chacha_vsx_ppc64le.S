/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ChaCha20 keystream kernel for little-endian POWER8 and later (ISA 2.07
 * VMX/VSX with the vector crypto category), RFC 8439 section 2.3.
 *
 * void chacharng_chacha_blocks_vsx(uint8_t *out,              r3
 *                                  const uint32_t state[16],  r4
 *                                  size_t nblocks);           r5
 * void chacharng_chacha_blocks_key_vsx(uint8_t *key,          r3
 *                                      uint8_t *out,          r4
 *                                      const uint32_t state[16], r5
 *                                      size_t nblocks);       r6
 *
 * The contract is chacha.h's: nblocks * 64 bytes of keystream (the keyed
 * entry: one block to |key|, nblocks to |out|) for counters state[12],
 * state[12] + 1, ... modulo 2^32 with no carry into state[13]; any output
 * alignment; nothing of the caller's read but state[0..15]; nblocks == 0
 * writes nothing.
 *
 * Why this shape.  Blocks are computed "vertically": register w of a
 * group holds state word w of four blocks, one per lane, so a quarter
 * round is lane-wise arithmetic with four independent chains per group.
 * Rotations by 16 and 8 are whole bytes, so vpermxor (vector crypto)
 * does the xor and the rotation in one instruction, on the permute pipe,
 * leaving only 12 and 7 to vrlw.  Two passes:
 *
 *   - eight blocks (two groups, all 32 vector registers): twice the
 *     independent chains of a four-block loop, which POWER10 needs to
 *     keep its pipes busy; taken for 5 or more blocks on POWER10 only
 *     (chacharng_vsx_wide, set by chacha_cpu_features()), since on
 *     POWER8 and POWER9 the moves below cost more than the chains gain.  The 33rd register a step needs (its rotation
 *     amount or permute control) is found by keeping one word of the
 *     second group in a VSX register while its row is idle: row a is not
 *     used by the c += d; b ^= c; b <<<= r steps, row c not by the
 *     a += b; d ^= a; d <<<= r ones, so words 3 and 11 of the second
 *     group take turns in v19.
 *   - four blocks (one group, v0-v19, no callee-saved register touched):
 *     every pass on POWER8 and POWER9; on POWER10 for requests of four
 *     blocks or fewer, and the tail of longer ones.
 *
 * Each pass stores only the blocks still wanted, so nothing is written
 * past the end of the output and there is no stack buffer.  Stores are
 * stxvw4x: in little-endian mode it writes each word least significant
 * byte first, which is ChaCha's byte order, at any alignment.
 *
 * Variants, for the kernel tests only (chacha_impl_variants()): the _x8
 * entries take the eight-block pass for every request, the _x4 entries
 * the four-block one.
 *
 * ABI (ELFv2): leaf functions with no TOC use and no frame.  v20-v31 are
 * callee-saved: when an eight-block pass runs they are kept in the
 * 288-byte protected zone below r1 and put back on exit, so that zone
 * holds only the caller's own values.  Clobbers r0, r3-r12, ctr, cr0,
 * cr1, v0-v19 and vs0-vs9; lr is put back as it came.
 *
 * On exit every register that held key material, keystream or counters
 * is cleared: v0-v19 with vxor, vs0-vs9 with xxlxor, v20-v31 by their
 * restore, and the general registers with li.
 *
 * The labels chacha_vsx_mca_* mark the round loops for tools/mca-vsx.sh,
 * which feeds them to llvm-mca; they are local symbols, not entry points.
 */
#include "asm_common.h"

#if defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)

    .machine power8
    .abiversion 2
    .text
    /* cpu.c's flag, read PC-relative: it must bind inside the module */
    .hidden chacharng_vsx_wide

/* General registers of the bodies. */
#define P 7     /* where the next block goes */
#define O 8     /* where the block after it goes (the rest follow on) */
#define ST 9    /* the state */
#define N 10    /* blocks not yet given to a pass */
#define M 6     /* blocks the current pass still has to store */
#define I16 3   /* 16, 32 and 48: row offsets for indexed loads and stores */
#define I32 4
#define I48 5
#define SAVED 12 /* 1 once v20-v31 are in the protected zone */
#define TMP 11

/*
 * The state words of a group as VR numbers, word 0 first.  Group A is
 * v0-v15.  Group B has v16-v30 but v19 twice: words 3 (row a) and 11
 * (row c) take turns there, the other kept in vs8 (word 3) or vs9
 * (word 11).  v31 holds each step's permute control or rotation amount.
 */
#define GA 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
#define GB 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 19, 27, 28, 29, 30

/*
 * a += b; d ^= a; d <<<= 16 or 8 for four quarter rounds at once:
 * vpermxor with control |k| does the xor and the byte rotation together.
 */
.macro ABD a0, b0, d0, a1, b1, d1, a2, b2, d2, a3, b3, d3, k
    vadduwm \a0, \a0, \b0
    vadduwm \a1, \a1, \b1
    vadduwm \a2, \a2, \b2
    vadduwm \a3, \a3, \b3
    vpermxor \d0, \d0, \a0, \k
    vpermxor \d1, \d1, \a1, \k
    vpermxor \d2, \d2, \a2, \k
    vpermxor \d3, \d3, \a3, \k
.endm

/* c += d; b ^= c; b <<<= 12 or 7 (|r| holds the amount in every lane). */
.macro CDB c0, d0, b0, c1, d1, b1, c2, d2, b2, c3, d3, b3, r
    vadduwm \c0, \c0, \d0
    vadduwm \c1, \c1, \d1
    vadduwm \c2, \c2, \d2
    vadduwm \c3, \c3, \d3
    vxor \b0, \b0, \c0
    vxor \b1, \b1, \c1
    vxor \b2, \b2, \c2
    vxor \b3, \b3, \c3
    vrlw \b0, \b0, \r
    vrlw \b1, \b1, \r
    vrlw \b2, \b2, \r
    vrlw \b3, \b3, \r
.endm

/* The two kinds of step over a group's columns, then its diagonals. */
.macro COL_ABD x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15, k
    ABD \x0, \x4, \x12, \x1, \x5, \x13, \x2, \x6, \x14, \x3, \x7, \x15, \k
.endm
.macro COL_CDB x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15, r
    CDB \x8, \x12, \x4, \x9, \x13, \x5, \x10, \x14, \x6, \x11, \x15, \x7, \r
.endm
.macro DIA_ABD x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15, k
    ABD \x0, \x5, \x15, \x1, \x6, \x12, \x2, \x7, \x13, \x3, \x4, \x14, \k
.endm
.macro DIA_CDB x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15, r
    CDB \x10, \x15, \x5, \x11, \x12, \x6, \x8, \x13, \x7, \x9, \x14, \x4, \r
.endm

/* Group B's shared v19 (vs51) handed from row a to row c and back. */
.macro TO_ROW_C
    xxlor 8, 51, 51
    xxlor 51, 9, 9
.endm
.macro TO_ROW_A
    xxlor 9, 51, 51
    xxlor 51, 8, 8
.endm

/*
 * Half a double round of the eight-block pass (|abd|, |cdb|: the column
 * or the diagonal steps).  It starts and ends with row a's word in v19;
 * the permute controls come from vs4 and vs5.
 */
.macro HALF8 abd, cdb
    xxlor 63, 4, 4
    \abd GA, 31
    \abd GB, 31
    TO_ROW_C
    vspltisw 31, 12
    \cdb GA, 31
    \cdb GB, 31
    TO_ROW_A
    xxlor 63, 5, 5
    \abd GA, 31
    \abd GB, 31
    TO_ROW_C
    vspltisw 31, 7
    \cdb GA, 31
    \cdb GB, 31
    TO_ROW_A
.endm

/* Half a double round of the four-block pass: permute controls in v16
 * and v17, rotation amounts 12 and 7 in v18 and v19. */
.macro HALF4 abd, cdb
    \abd GA, 16
    \cdb GA, 18
    \abd GA, 17
    \cdb GA, 19
.endm

/* v|vr| = state word |w| (vs0-vs3 hold the state rows) in every lane. */
.macro SPLAT vr, w
    xxspltw 32+\vr, (\w) / 4, (\w) % 4
.endm

/* A group's sixteen words from the state; |ctr|: VSR with its counters. */
.macro LOAD_GROUP x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15, ctr
    SPLAT \x0, 0
    SPLAT \x1, 1
    SPLAT \x2, 2
    SPLAT \x3, 3
    SPLAT \x4, 4
    SPLAT \x5, 5
    SPLAT \x6, 6
    SPLAT \x7, 7
    SPLAT \x8, 8
    SPLAT \x9, 9
    SPLAT \x10, 10
    SPLAT \x11, 11
    xxlor 32+\x12, \ctr, \ctr
    SPLAT \x13, 13
    SPLAT \x14, 14
    SPLAT \x15, 15
.endm

/* v|vr| += state word |w| in every lane, through the free VR |t|. */
.macro ADD_WORD vr, w, t
    SPLAT \t, \w
    vadduwm \vr, \vr, \t
.endm

/*
 * x0-x3 hold one state word each, lane j for block j; afterwards x2, t,
 * x0 and x1 hold those four words of blocks 0, 1, 2 and 3, and x3 is free.
 */
.macro TRANSPOSE x0, x1, x2, x3, t
    vmrghw \t, \x0, \x1
    vmrglw \x1, \x0, \x1
    vmrghw \x0, \x2, \x3
    vmrglw \x3, \x2, \x3
    xxpermdi 32+\x2, 32+\t, 32+\x0, 0
    xxpermdi 32+\t, 32+\t, 32+\x0, 3
    xxpermdi 32+\x0, 32+\x1, 32+\x3, 0
    xxpermdi 32+\x1, 32+\x1, 32+\x3, 3
.endm

/* One block's rows to P; P = O, O += 64; to |done| when M reaches 0. */
.macro STORE_BLOCK r0, r1, r2, r3, done
    stxvw4x 32+\r0, 0, P
    stxvw4x 32+\r1, P, I16
    stxvw4x 32+\r2, P, I32
    stxvw4x 32+\r3, P, I48
    mr P, O
    addi O, O, 64
    addic. M, M, -1
    beq \done
.endm

/*
 * The end of a pass for one group: the input added back (|ctr|: VSR with
 * the group's counters), the words turned into blocks, and its blocks
 * stored while M lasts.  |t| is a free VR.  Falls through after four
 * blocks; goes to |done| when M runs out.
 */
.macro FINISH x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15, t, ctr, done
    ADD_WORD \x0, 0, \t
    ADD_WORD \x1, 1, \t
    ADD_WORD \x2, 2, \t
    ADD_WORD \x3, 3, \t
    ADD_WORD \x4, 4, \t
    ADD_WORD \x5, 5, \t
    ADD_WORD \x6, 6, \t
    ADD_WORD \x7, 7, \t
    ADD_WORD \x8, 8, \t
    ADD_WORD \x9, 9, \t
    ADD_WORD \x10, 10, \t
    ADD_WORD \x11, 11, \t
    xxlor 32+\t, \ctr, \ctr
    vadduwm \x12, \x12, \t
    ADD_WORD \x13, 13, \t
    ADD_WORD \x14, 14, \t
    ADD_WORD \x15, 15, \t
    TRANSPOSE \x0, \x1, \x2, \x3, \t
    TRANSPOSE \x4, \x5, \x6, \x7, \x3
    TRANSPOSE \x8, \x9, \x10, \x11, \x7
    TRANSPOSE \x12, \x13, \x14, \x15, \x11
    STORE_BLOCK \x2, \x6, \x10, \x14, \done
    STORE_BLOCK \t, \x3, \x7, \x11, \done
    STORE_BLOCK \x0, \x4, \x8, \x12, \done
    STORE_BLOCK \x1, \x5, \x9, \x13, \done
.endm

/* vs|dst| = vs|src| + |k| in every lane, through v|t| and v|u|. */
.macro ADD_LANES dst, src, k, t, u
    xxlor 32+\t, \src, \src
    vspltisw \u, \k
    vadduwm \t, \t, \u
    xxlor \dst, 32+\t, 32+\t
.endm

/*
 * The body of an entry.  On entry P, O, ST and N are set (the first block
 * to P, the others from O on; N >= 1 blocks in all).  |wide|: 0 for four-
 * block passes only, 8 for eight-block passes only, 5 for eight-block
 * passes while 5 or more blocks remain, then four-block ones.
 */
.macro BODY wide
    li I16, 16
    li I32, 32
    li I48, 48
    li SAVED, 0
    lxvw4x 0, 0, ST
    lxvw4x 1, ST, I16
    lxvw4x 2, ST, I32
    lxvw4x 3, ST, I48

    /*
     * Permute controls for rotations by 16 (vs4) and 8 (vs5): byte i of
     * the result is byte ctl[i] of the word's source, and a control byte
     * names the source twice (high nibble: vA, low nibble: vB).  The byte
     * indices 0-15 (lvsl at an aligned address) rotated as words are the
     * sources, then doubled into both nibbles.
     */
    li TMP, 0
    lvsl 0, 0, TMP
    vspltisw 1, -16
    vrlw 2, 0, 1
    vspltisw 1, 8
    vrlw 3, 0, 1
    vspltisb 1, 4
    vslb 4, 2, 1
    vor 2, 2, 4
    vslb 4, 3, 1
    vor 3, 3, 4
    xxlor 4, 34, 34
    xxlor 5, 35, 35

    /* vs6: the next pass's counters, state[12] + j in lane j (mod 2^32). */
    vspltisw 0, 0
    vspltisw 1, 1
    vsldoi 2, 0, 1, 4
    vsldoi 3, 0, 1, 8
    vsldoi 4, 0, 1, 12
    vadduwm 2, 2, 3
    vadduwm 2, 2, 4
    xxspltw 32+3, 3, 0
    vadduwm 2, 2, 3
    xxlor 6, 34, 34

.if \wide == 5
    /*
     * cr1.eq: no eight-block passes.  On POWER8 and POWER9 the four-block
     * loop is the faster one per block, so they are taken only where
     * chacha_cpu_features() found POWER10 (chacharng_vsx_wide, reached
     * PC-relative: the kernel needs no TOC).
     */
    mflr 0
    bcl 20, 31, .Lpc_\@
.Lpc_\@:
    mflr TMP
    mtlr 0
    addis TMP, TMP, (chacharng_vsx_wide - .Lpc_\@)@ha
    lwz TMP, (chacharng_vsx_wide - .Lpc_\@)@l(TMP)
    cmpwi 1, TMP, 0
    cmpldi N, 5
    blt .Lpass_\@
    beq 1, .Lpass_\@
.endif
.if \wide != 0
    /* v20-v31 are the caller's: keep them in the protected zone */
    addi TMP, 1, -192
    stxvd2x 52, 0, TMP
    stxvd2x 53, TMP, I16
    stxvd2x 54, TMP, I32
    stxvd2x 55, TMP, I48
    addi TMP, TMP, 64
    stxvd2x 56, 0, TMP
    stxvd2x 57, TMP, I16
    stxvd2x 58, TMP, I32
    stxvd2x 59, TMP, I48
    addi TMP, TMP, 64
    stxvd2x 60, 0, TMP
    stxvd2x 61, TMP, I16
    stxvd2x 62, TMP, I32
    stxvd2x 63, TMP, I48
    li SAVED, 1
.endif

.Lpass_\@:
.if \wide == 5
    cmpldi N, 5
    blt .Lpass4_\@
    beq 1, .Lpass4_\@
.endif
.if \wide != 0
    /* eight blocks, M = min(N, 8) of them stored */
    li M, 8
    cmpld N, M
    bge 1f
    mr M, N
1:
    subf N, M, N
    LOAD_GROUP GA, 6
    ADD_LANES 7, 6, 4, 19, 31
    /* group B: word 3 in v19 first, word 11 in vs9 */
    LOAD_GROUP 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 31, 27, 28, 29, 30, 7
    xxlor 9, 63, 63
    li TMP, 10
    mtctr TMP
    .p2align 4
chacha_vsx_mca_x8_\@:
    HALF8 COL_ABD, COL_CDB
    HALF8 DIA_ABD, DIA_CDB
    bdnz chacha_vsx_mca_x8_\@
chacha_vsx_mca_x8_end_\@:
    FINISH GA, 31, 6, .Lpassdone8_\@
    /* group B, with word 3 from v19 moved to v0 and word 11 to v1 */
    vor 0, 19, 19
    xxlor 33, 9, 9
    FINISH 16, 17, 18, 0, 20, 21, 22, 23, 24, 25, 26, 1, 27, 28, 29, 30, 2, 7, .Lpassdone8_\@
.Lpassdone8_\@:
    /* the next pass's counters: eight on */
    ADD_LANES 6, 6, 8, 0, 1
    b .Lpassdone_\@
.endif

.if \wide != 8
.Lpass4_\@:
    /* four blocks, M = min(N, 4) of them stored */
    li M, 4
    cmpld N, M
    bge 1f
    mr M, N
1:
    subf N, M, N
    LOAD_GROUP GA, 6
    xxlor 48, 4, 4
    xxlor 49, 5, 5
    vspltisw 18, 12
    vspltisw 19, 7
    li TMP, 10
    mtctr TMP
    .p2align 4
chacha_vsx_mca_x4_\@:
    HALF4 COL_ABD, COL_CDB
    HALF4 DIA_ABD, DIA_CDB
    bdnz chacha_vsx_mca_x4_\@
chacha_vsx_mca_x4_end_\@:
    FINISH GA, 16, 6, .Lpassdone4_\@
.Lpassdone4_\@:
    /* the next pass's counters: four on */
    ADD_LANES 6, 6, 4, 0, 1
.endif

.Lpassdone_\@:
    cmpldi N, 0
    bne .Lpass_\@

.Lout_\@:
    /* clear what held keystream, key words or counters */
    .irp v, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19
    vxor \v, \v, \v
    .endr
    .irp x, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9
    xxlxor \x, \x, \x
    .endr
    cmpldi SAVED, 0
    beq 2f
    addi TMP, 1, -192
    lxvd2x 52, 0, TMP
    lxvd2x 53, TMP, I16
    lxvd2x 54, TMP, I32
    lxvd2x 55, TMP, I48
    addi TMP, TMP, 64
    lxvd2x 56, 0, TMP
    lxvd2x 57, TMP, I16
    lxvd2x 58, TMP, I32
    lxvd2x 59, TMP, I48
    addi TMP, TMP, 64
    lxvd2x 60, 0, TMP
    lxvd2x 61, TMP, I16
    lxvd2x 62, TMP, I32
    lxvd2x 63, TMP, I48
2:
    .irp r, 0, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
    li \r, 0
    .endr
    blr
.endm

/* Entry: out, state, nblocks.  The first block to out, the rest after. */
.macro ENTRY_BLOCKS name, wide
    .p2align 5
FUNC_BEGIN(\name)
    cmpldi 5, 0
    beqlr
    mr P, 3
    addi O, 3, 64
    mr ST, 4
    mr N, 5
    BODY \wide
FUNC_END(\name)
.endm

/* Entry: key, out, state, nblocks.  The first block to key, the rest to
 * out: nblocks + 1 blocks in all. */
.macro ENTRY_BLOCKS_KEY name, wide
    .p2align 5
FUNC_BEGIN(\name)
    mr P, 3
    mr O, 4
    mr ST, 5
    addi N, 6, 1
    BODY \wide
FUNC_END(\name)
.endm

ENTRY_BLOCKS chacharng_chacha_blocks_vsx, 5
ENTRY_BLOCKS_KEY chacharng_chacha_blocks_key_vsx, 5
ENTRY_BLOCKS chacharng_chacha_blocks_vsx_x8, 8
ENTRY_BLOCKS_KEY chacharng_chacha_blocks_key_vsx_x8, 8
ENTRY_BLOCKS chacharng_chacha_blocks_vsx_x4, 0
ENTRY_BLOCKS_KEY chacharng_chacha_blocks_key_vsx_x4, 0

#endif
