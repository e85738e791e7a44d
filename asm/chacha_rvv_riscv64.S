/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ChaCha20 keystream kernel for the RISC-V vector extension (RVV 1.0),
 * RFC 8439 section 2.3 (20 rounds, little-endian output).
 *
 * void chacharng_chacha_blocks_rvv(uint8_t *out,            a0
 *                                  const uint32_t state[16], a1
 *                                  size_t nblocks);          a2
 *
 * Writes exactly nblocks * 64 bytes of keystream to |out| (any alignment)
 * for block counters state[12], state[12] + 1, ... modulo 2^32; state[13]
 * never receives a carry.  Reads state[0..15] and nothing else of the
 * caller's.  nblocks == 0 returns before touching anything.
 *
 * Blocks in lanes, and one beside them.  Vector register v<w> holds state
 * word w of VL blocks (e32, LMUL 1), so a quarter round is plain lane-wise
 * arithmetic and the four quarter rounds of a half round run side by side.
 * One code serves any VLEN from 128 bits up: vsetvli grants VL = min(blocks
 * left - 1, VLEN/32, 16) a pass (4 at VLEN 128, 16 from VLEN 512).  Beside
 * the vector work, instruction by instruction, the integer registers do
 * one more block: the vector pipes cannot issue every cycle, the integer
 * pipes are otherwise idle, so that block comes almost free (OpenSSL's
 * RVV ChaCha20 does the same).  A pass's blocks, from its counter c: the
 * integer block c, then lanes c + 1 .. c + VL; the last block of a request
 * can be the integer one alone (VL = 0).  Counters wrap in 32-bit
 * arithmetic, with no carry.
 *
 * Rotations.  Where the CPU has Zvkb (and Zbb), one vror.vi each and
 * roriw for the integer block; vror.vi is emitted as its encoding, so that
 * assemblers without Zvkb, such as binutils 2.40, still build this file.
 * Without Zvkb, x <<< r is x * 2^r + (x >> (32 - r)) modulo 2^32: a
 * vsrl.vi into a scratch register and a vmadd.vx, two instructions where
 * vsll + vsrl + vor are three (2^r sits in t0-t3); the integer block takes
 * slliw + srliw + or, with no extension beyond the base ISA.
 *
 * Stores.  A 4-byte aligned |out| takes sw for the integer block and two
 * strided segment stores (vssseg8e32, words 0-7 and 8-15 of each block at
 * a 64-byte stride) for the lanes.  An unaligned |out| would make those
 * accesses misaligned, which RISC-V lets hardware trap on, so the pass
 * goes to a 17-block stack buffer the same way and is copied out with
 * byte loads and stores (e8).
 *
 * Entries.  chacharng_chacha_blocks_rvv takes the vror path when the word
 * chacharng_rvv_vror is nonzero (set by chacha_cpu_features() from
 * riscv_hwprobe), the vmadd path otherwise.  _rvv_vmadd and _rvv_vror
 * take one path always (kernel tests only: chacha_impl_variants()).  Each
 * entry is a whole function of its own, expanded from the same macros.
 *
 * ABI (RISC-V LP64 psABI): a 1200-byte frame (with CFI): the buffer, then
 * ra and s0-s11, which hold the integer block's words and are restored on
 * exit; gp and tp are never touched.  Clobbers a1-a7, t0-t6, v0-v31, vl
 * and vtype (all caller-saved).
 *
 * On exit every register that held key material, keystream or counters
 * is cleared: v0-v31 (four whole-group vmv.v.i at e8, LMUL 8), ra and
 * s0-s11 by their restore, a1-a7 and t0-t6; the stack buffer, if this call
 * wrote it (unaligned |out|), is zeroed too.
 *
 * The labels chacha_rvv_mca_<path>_begin and _end mark the round loops of
 * the forced-path entries for tools/mca-rvv.sh, which feeds them to
 * llvm-mca; they are local symbols, not entry points.
 */
#include "asm_common.h"

    .option arch, +v, +zbb

/* The stack frame: a buffer of 17 blocks, then ra and s0-s11. */
#define BUF_BYTES 1088
#define SAVE_AT BUF_BYTES
#define FRAME 1200

/* vror.vi vd, vs2, imm (Zvkb; imm < 32 here), unmasked. */
.macro VRORI vd, vs2, imm
    .4byte 0x52003057 | (\vs2 << 20) | ((\imm) << 15) | (\vd << 7)
.endm

/*
 * z <<<= r for the integer block: Zbb's roriw on the vror path (which
 * runs only where Zbb is there too), else three instructions with scratch
 * register \t.
 */
.macro SROT z, r, t, vror
.if \vror
    roriw   \z, \z, 32 - \r
.else
    slliw   \t, \z, \r
    srliw   \z, \z, 32 - \r
    or      \z, \z, \t
.endif
.endm

/*
 * z <<<= r for four vector registers (numbers z0-z3), vror.vi if \vror,
 * else the vsrl + vmadd pair with scratch v16-v19 and 2^r in register \m;
 * the integer block's four rotations (Z0-Z3) between them.
 */
.macro ROT4 z0, z1, z2, z3, Z0, Z1, Z2, Z3, r, m, vror
.if \vror
    VRORI   \z0, \z0, (32 - \r)
    SROT    \Z0, \r, a6, \vror
    VRORI   \z1, \z1, (32 - \r)
    SROT    \Z1, \r, a7, \vror
    VRORI   \z2, \z2, (32 - \r)
    SROT    \Z2, \r, a6, \vror
    VRORI   \z3, \z3, (32 - \r)
    SROT    \Z3, \r, a7, \vror
.else
    vsrl.vi v16, v\z0, 32 - \r
    SROT    \Z0, \r, a6, \vror
    vsrl.vi v17, v\z1, 32 - \r
    SROT    \Z1, \r, a7, \vror
    vsrl.vi v18, v\z2, 32 - \r
    SROT    \Z2, \r, a6, \vror
    vsrl.vi v19, v\z3, 32 - \r
    SROT    \Z3, \r, a7, \vror
    vmadd.vx v\z0, \m, v16
    vmadd.vx v\z1, \m, v17
    vmadd.vx v\z2, \m, v18
    vmadd.vx v\z3, \m, v19
.endif
.endm

/*
 * One step of four quarter rounds, x += y; z ^= x; z <<<= r, on the vector
 * blocks (register numbers x0, y0, z0, ...) and beside it on the integer
 * block (register names X0, Y0, Z0, ...).
 */
.macro STEP x0, y0, z0, x1, y1, z1, x2, y2, z2, x3, y3, z3, X0, Y0, Z0, X1, Y1, Z1, X2, Y2, Z2, X3, Y3, Z3, r, m, vror
    vadd.vv v\x0, v\x0, v\y0
    add     \X0, \X0, \Y0
    vadd.vv v\x1, v\x1, v\y1
    add     \X1, \X1, \Y1
    vadd.vv v\x2, v\x2, v\y2
    add     \X2, \X2, \Y2
    vadd.vv v\x3, v\x3, v\y3
    add     \X3, \X3, \Y3
    vxor.vv v\z0, v\z0, v\x0
    xor     \Z0, \Z0, \X0
    vxor.vv v\z1, v\z1, v\x1
    xor     \Z1, \Z1, \X1
    vxor.vv v\z2, v\z2, v\x2
    xor     \Z2, \Z2, \X2
    vxor.vv v\z3, v\z3, v\x3
    xor     \Z3, \Z3, \X3
    ROT4    \z0, \z1, \z2, \z3, \Z0, \Z1, \Z2, \Z3, \r, \m, \vror
.endm

/* Four quarter rounds on (a, b, c, d), vector numbers then integer names. */
.macro QROUND4 a0, b0, c0, d0, a1, b1, c1, d1, a2, b2, c2, d2, a3, b3, c3, d3, A0, B0, C0, D0, A1, B1, C1, D1, A2, B2, C2, D2, A3, B3, C3, D3, vror
    STEP \a0, \b0, \d0, \a1, \b1, \d1, \a2, \b2, \d2, \a3, \b3, \d3, \A0, \B0, \D0, \A1, \B1, \D1, \A2, \B2, \D2, \A3, \B3, \D3, 16, t0, \vror
    STEP \c0, \d0, \b0, \c1, \d1, \b1, \c2, \d2, \b2, \c3, \d3, \b3, \C0, \D0, \B0, \C1, \D1, \B1, \C2, \D2, \B2, \C3, \D3, \B3, 12, t1, \vror
    STEP \a0, \b0, \d0, \a1, \b1, \d1, \a2, \b2, \d2, \a3, \b3, \d3, \A0, \B0, \D0, \A1, \B1, \D1, \A2, \B2, \D2, \A3, \B3, \D3, 8, t2, \vror
    STEP \c0, \d0, \b0, \c1, \d1, \b1, \c2, \d2, \b2, \c3, \d3, \b3, \C0, \D0, \B0, \C1, \D1, \B1, \C2, \D2, \B2, \C3, \D3, \B3, 7, t3, \vror
.endm

/* A double round: the columns, then the diagonals. */
.macro DROUND vror
    QROUND4 0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, s0, s4, s8, ra, s1, s5, s9, t4, s2, s6, s10, t5, s3, s7, s11, t6, \vror
    QROUND4 0, 5, 10, 15, 1, 6, 11, 12, 2, 7, 8, 13, 3, 4, 9, 14, s0, s5, s10, t6, s1, s6, s11, ra, s2, s7, s8, t4, s3, s4, s9, t5, \vror
.endm

/*
 * The ten double rounds, two an iteration (the loop's own two
 * instructions are a cost the dispatch-bound cores feel); a5 counts them.  The integer block's words 0-15
 * are s0-s11, ra, t4, t5, t6.  \mark names the mca labels.
 */
.macro ROUNDS vror, mark
    li      a5, 5
.ifnb \mark
chacha_rvv_mca_\mark\()_begin:
.endif
1:
    DROUND  \vror
    DROUND  \vror
    addi    a5, a5, -1
    bnez    a5, 1b
.ifnb \mark
chacha_rvv_mca_\mark\()_end:
.endif
.endm

/* v<w> = state word w in every lane (w != 12). */
.macro SPLAT w
    lw      a6, 4 * \w(a1)
    vmv.v.x v\w, a6
.endm

/* v<w> += state word w (w != 12): the vector blocks' feed-forward. */
.macro FEED w
    lw      a7, 4 * \w(a1)
    vadd.vx v\w, v\w, a7
.endm

/* The integer block's word w += state word w, stored at a6 + 4w. */
.macro SFEED w, reg
    lw      a7, 4 * \w(a1)
    add     \reg, \reg, a7
    sw      \reg, 4 * \w(a6)
.endm

/*
 * One pass: the integer block for counter a3 and VL = a4 vector blocks
 * for a3 + 1 + lane (v20 = lane index), stored in that order at a0, or
 * through the stack buffer when a0 is not 4-aligned.  Advances a0, a2
 * and a3 by the pass.
 */
.macro PASS vror, mark
    SPLAT 0
    SPLAT 1
    SPLAT 2
    SPLAT 3
    SPLAT 4
    SPLAT 5
    SPLAT 6
    SPLAT 7
    SPLAT 8
    SPLAT 9
    SPLAT 10
    SPLAT 11
    SPLAT 13
    SPLAT 14
    SPLAT 15
    vid.v   v20
    addi    a6, a3, 1
    vadd.vx v12, v20, a6
    lw      s0, 0(a1)
    lw      s1, 4(a1)
    lw      s2, 8(a1)
    lw      s3, 12(a1)
    lw      s4, 16(a1)
    lw      s5, 20(a1)
    lw      s6, 24(a1)
    lw      s7, 28(a1)
    lw      s8, 32(a1)
    lw      s9, 36(a1)
    lw      s10, 40(a1)
    lw      s11, 44(a1)
    mv      ra, a3
    lw      t4, 52(a1)
    lw      t5, 56(a1)
    lw      t6, 60(a1)
    ROUNDS  \vror, \mark
    /* where this pass's blocks go: |out|, or the buffer when unaligned */
    mv      a6, a0
    andi    a7, a0, 3
    beqz    a7, 2f
    mv      a6, sp
2:
    SFEED 0, s0
    SFEED 1, s1
    SFEED 2, s2
    SFEED 3, s3
    SFEED 4, s4
    SFEED 5, s5
    SFEED 6, s6
    SFEED 7, s7
    SFEED 8, s8
    SFEED 9, s9
    SFEED 10, s10
    SFEED 11, s11
    add     ra, ra, a3
    sw      ra, 48(a6)
    SFEED 13, t4
    SFEED 14, t5
    SFEED 15, t6
    addi    a6, a6, 64
    FEED 0
    FEED 1
    FEED 2
    FEED 3
    FEED 4
    FEED 5
    FEED 6
    FEED 7
    FEED 8
    FEED 9
    FEED 10
    FEED 11
    FEED 13
    FEED 14
    FEED 15
    addi    a7, a3, 1
    vadd.vx v12, v12, a7
    vadd.vv v12, v12, v20
    li      t6, 64                  /* segment stride: one block */
    vssseg8e32.v v0, (a6), t6
    addi    t4, a6, 32
    vssseg8e32.v v8, (t4), t6
    addi    t5, a4, 1
    slli    t5, t5, 6               /* bytes this pass */
    andi    a7, a0, 3
    bnez    a7, 3f
    add     a0, a0, t5
    j       4f
3:  /* unaligned |out|: the buffer copied out bytewise */
    mv      t4, sp
13:
    vsetvli t6, t5, e8, m8, ta, ma
    vle8.v  v0, (t4)
    vse8.v  v0, (a0)
    add     t4, t4, t6
    add     a0, a0, t6
    sub     t5, t5, t6
    bnez    t5, 13b
4:
    addi    a4, a4, 1
    add     a3, a3, a4
    sub     a2, a2, a4
.endm

/* VL for the next pass: a4 = min(a2 - 1, 16, VLEN/32) blocks (0 for the
 * last block alone), e32, LMUL 1. */
.macro SETVL
    addi    a7, a2, -1
    li      a6, 16
    bleu    a7, a6, 5f
    mv      a7, a6
5:
    vsetvli a4, a7, e32, m1, ta, ma
.endm

/* The whole body after the entry checks: passes until a2 is 0. */
.macro BODY vror, mark
6:
    SETVL
    PASS    \vror, \mark
    bnez    a2, 6b
.endm

/* Save (op sd) or restore (op ld) ra and s0-s11 in the frame. */
.macro SAVED op
    \op     ra, SAVE_AT(sp)
    \op     s0, SAVE_AT + 8(sp)
    \op     s1, SAVE_AT + 16(sp)
    \op     s2, SAVE_AT + 24(sp)
    \op     s3, SAVE_AT + 32(sp)
    \op     s4, SAVE_AT + 40(sp)
    \op     s5, SAVE_AT + 48(sp)
    \op     s6, SAVE_AT + 56(sp)
    \op     s7, SAVE_AT + 64(sp)
    \op     s8, SAVE_AT + 72(sp)
    \op     s9, SAVE_AT + 80(sp)
    \op     s10, SAVE_AT + 88(sp)
    \op     s11, SAVE_AT + 96(sp)
.endm

/* Entry: frame, constants; nothing is touched for nblocks == 0. */
.macro ENTER
    beqz    a2, 9f
    addi    sp, sp, -FRAME
    .cfi_adjust_cfa_offset FRAME
    SAVED   sd
    .cfi_rel_offset ra, SAVE_AT
    .cfi_rel_offset s0, SAVE_AT + 8
    .cfi_rel_offset s1, SAVE_AT + 16
    .cfi_rel_offset s2, SAVE_AT + 24
    .cfi_rel_offset s3, SAVE_AT + 32
    .cfi_rel_offset s4, SAVE_AT + 40
    .cfi_rel_offset s5, SAVE_AT + 48
    .cfi_rel_offset s6, SAVE_AT + 56
    .cfi_rel_offset s7, SAVE_AT + 64
    .cfi_rel_offset s8, SAVE_AT + 72
    .cfi_rel_offset s9, SAVE_AT + 80
    .cfi_rel_offset s10, SAVE_AT + 88
    .cfi_rel_offset s11, SAVE_AT + 96
    lw      a3, 48(a1)              /* the first block's counter */
    li      t0, 1 << 16
    li      t1, 1 << 12
    li      t2, 1 << 8
    li      t3, 1 << 7
.endm

/*
 * Exit: clear the vector registers and the buffer if this call wrote it;
 * the restore of ra and s0-s11 clears the integer block's words from them,
 * then the other registers are cleared.
 */
.macro LEAVE
    vsetvli t5, zero, e8, m8, ta, ma
    vmv.v.i v0, 0
    vmv.v.i v8, 0
    vmv.v.i v16, 0
    vmv.v.i v24, 0
    andi    a7, a0, 3
    beqz    a7, 8f
    /* keystream of the last unaligned pass */
    mv      t4, sp
    li      t6, BUF_BYTES
7:
    vsetvli t5, t6, e8, m8, ta, ma
    vse8.v  v0, (t4)
    add     t4, t4, t5
    sub     t6, t6, t5
    bnez    t6, 7b
8:
    SAVED   ld
    .cfi_restore ra
    .cfi_restore s0
    .cfi_restore s1
    .cfi_restore s2
    .cfi_restore s3
    .cfi_restore s4
    .cfi_restore s5
    .cfi_restore s6
    .cfi_restore s7
    .cfi_restore s8
    .cfi_restore s9
    .cfi_restore s10
    .cfi_restore s11
    addi    sp, sp, FRAME
    .cfi_adjust_cfa_offset -FRAME
    li      a1, 0
    li      a2, 0
    li      a3, 0
    li      a4, 0
    li      a5, 0
    li      a6, 0
    li      a7, 0
    li      t0, 0
    li      t1, 0
    li      t2, 0
    li      t3, 0
    li      t4, 0
    li      t5, 0
    li      t6, 0
9:
    ret
.endm

    .text
    .p2align 2
FUNC_BEGIN(chacharng_chacha_blocks_rvv)
    ENTER
    lla     a6, chacharng_rvv_vror
    lw      a6, 0(a6)
    bnez    a6, 10f
    BODY    0
    j       11f
10:
    BODY    1
11:
    LEAVE
FUNC_END(chacharng_chacha_blocks_rvv)

    .p2align 2
FUNC_BEGIN(chacharng_chacha_blocks_rvv_vmadd)
    ENTER
    BODY    0, vmadd
    LEAVE
FUNC_END(chacharng_chacha_blocks_rvv_vmadd)

    .p2align 2
FUNC_BEGIN(chacharng_chacha_blocks_rvv_vror)
    ENTER
    BODY    1, vror
    LEAVE
FUNC_END(chacharng_chacha_blocks_rvv_vror)
