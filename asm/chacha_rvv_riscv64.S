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
 * Blocks in lanes.  Vector register v<w> holds state word w of VL blocks
 * (e32, LMUL 1), so a quarter round is plain lane-wise arithmetic and the
 * four quarter rounds of a half round run side by side.  One code serves
 * any VLEN from 128 bits up: vsetvli grants VL = min(blocks left, VLEN/32,
 * 16) blocks a pass (4 at VLEN 128, 16 from VLEN 512); 16 is the cap
 * because the stack buffer below holds 16 blocks.  The lanes' counters are
 * state[12] + done + vid (wrapping in e32 arithmetic, no carry).
 *
 * Rotations.  With Zvkb, one vror.vi each (emitted as its encoding, so
 * that assemblers without Zvkb, such as binutils 2.40, still build this
 * file).  Without it, x <<< r is x * 2^r + (x >> (32 - r)) modulo 2^32:
 * a vsrl.vi into a scratch register and a vmadd.vx, two instructions
 * where vsll + vsrl + vor are three; the multiplier 2^r sits in t0-t3.
 *
 * Stores.  A 4-byte aligned |out| takes two strided segment stores a pass
 * (vssseg8e32, words 0-7 and 8-15 of each block at a 64-byte stride).  An
 * unaligned |out| would make those e32 accesses misaligned, which RVV lets
 * hardware trap on, so the pass goes to a 1024-byte stack buffer with the
 * same stores and is copied out with byte loads and stores (e8).
 *
 * Entries.  chacharng_chacha_blocks_rvv takes the vror path when the word
 * chacharng_rvv_vror is nonzero (set by chacha_cpu_features() from
 * riscv_hwprobe), the vmadd path otherwise.  _rvv_vmadd and _rvv_vror
 * take one path always (kernel tests only: chacha_impl_variants()).  Each
 * entry is a whole function of its own, expanded from the same macros.
 *
 * ABI (RISC-V LP64 psABI): leaf function, ra untouched, no callee-saved
 * register written (s0-s11 never used); clobbers a0-a7, t0-t6, v0-v31,
 * vl and vtype (all caller-saved).  A 1024-byte frame, with CFI.
 *
 * On exit every register that held key material, keystream or counters
 * is cleared: v0-v31 (four whole-group vmv.v.i at e8, LMUL 8), a1-a7 and
 * t0-t6; the stack buffer, if this call wrote it, is zeroed too.
 *
 * The labels chacha_rvv_mca_<path>_begin and _end mark the round loops of
 * the forced-path entries for tools/mca-rvv.sh, which feeds them to
 * llvm-mca; they are local symbols, not entry points.
 */
#include "asm_common.h"

    .option arch, +v

/* Bytes of the stack buffer: 16 blocks, the widest pass. */
#define BUF_BYTES 1024

/* vror.vi vd, vs2, imm (Zvkb; imm < 32 here), unmasked. */
.macro VRORI vd, vs2, imm
    .4byte 0x52003057 | (\vs2 << 20) | ((\imm) << 15) | (\vd << 7)
.endm

/*
 * z <<<= r for four registers (numbers z0-z3): vror.vi if \vror, else the
 * vsrl + vmadd pair with scratch v16-v19 and 2^r in register \m.
 */
.macro ROT4 z0, z1, z2, z3, r, m, vror
.if \vror
    VRORI \z0, \z0, (32 - \r)
    VRORI \z1, \z1, (32 - \r)
    VRORI \z2, \z2, (32 - \r)
    VRORI \z3, \z3, (32 - \r)
.else
    vsrl.vi v16, v\z0, 32 - \r
    vsrl.vi v17, v\z1, 32 - \r
    vsrl.vi v18, v\z2, 32 - \r
    vsrl.vi v19, v\z3, 32 - \r
    vmadd.vx v\z0, \m, v16
    vmadd.vx v\z1, \m, v17
    vmadd.vx v\z2, \m, v18
    vmadd.vx v\z3, \m, v19
.endif
.endm

/* One step of four quarter rounds: x += y; z ^= x; z <<<= r. */
.macro STEP x0, y0, z0, x1, y1, z1, x2, y2, z2, x3, y3, z3, r, m, vror
    vadd.vv v\x0, v\x0, v\y0
    vadd.vv v\x1, v\x1, v\y1
    vadd.vv v\x2, v\x2, v\y2
    vadd.vv v\x3, v\x3, v\y3
    vxor.vv v\z0, v\z0, v\x0
    vxor.vv v\z1, v\z1, v\x1
    vxor.vv v\z2, v\z2, v\x2
    vxor.vv v\z3, v\z3, v\x3
    ROT4 \z0, \z1, \z2, \z3, \r, \m, \vror
.endm

/* Four quarter rounds on (a, b, c, d) word numbers, side by side. */
.macro QROUND4 a0, b0, c0, d0, a1, b1, c1, d1, a2, b2, c2, d2, a3, b3, c3, d3, vror
    STEP \a0, \b0, \d0, \a1, \b1, \d1, \a2, \b2, \d2, \a3, \b3, \d3, 16, t0, \vror
    STEP \c0, \d0, \b0, \c1, \d1, \b1, \c2, \d2, \b2, \c3, \d3, \b3, 12, t1, \vror
    STEP \a0, \b0, \d0, \a1, \b1, \d1, \a2, \b2, \d2, \a3, \b3, \d3, 8, t2, \vror
    STEP \c0, \d0, \b0, \c1, \d1, \b1, \c2, \d2, \b2, \c3, \d3, \b3, 7, t3, \vror
.endm

/* The ten double rounds; a5 counts them.  \mark names the mca labels. */
.macro ROUNDS vror, mark
    li      a5, 10
.ifnb \mark
chacha_rvv_mca_\mark\()_begin:
.endif
1:
    QROUND4 0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, \vror
    QROUND4 0, 5, 10, 15, 1, 6, 11, 12, 2, 7, 8, 13, 3, 4, 9, 14, \vror
    addi    a5, a5, -1
    bnez    a5, 1b
.ifnb \mark
chacha_rvv_mca_\mark\()_end:
.endif
.endm

/* v<w> = state word w in every lane (w != 12). */
.macro SPLAT w
    lw      t4, 4 * \w(a1)
    vmv.v.x v\w, t4
.endm

/* v<w> += state word w (w != 12): the feed-forward. */
.macro FEED w
    lw      t4, 4 * \w(a1)
    vadd.vx v\w, v\w, t4
.endm

/*
 * One pass: VL = a4 blocks from counter a3 (v20 = lane index), stored at
 * a0 (or through the stack buffer when a7 != 0).  Leaves a0, a3, a2
 * advanced.
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
    vadd.vx v12, v20, a3
    ROUNDS  \vror, \mark
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
    vadd.vx v12, v12, a3
    vadd.vv v12, v12, v20
    slli    t6, a4, 6               /* bytes this pass */
    bnez    a7, 2f
    vssseg8e32.v v0, (a0), a6
    addi    t4, a0, 32
    vssseg8e32.v v8, (t4), a6
    add     a0, a0, t6
    j       4f
2:  /* unaligned |out|: through the stack buffer, then bytewise */
    vssseg8e32.v v0, (sp), a6
    addi    t4, sp, 32
    vssseg8e32.v v8, (t4), a6
    mv      t4, sp
3:
    vsetvli t5, t6, e8, m8, ta, ma
    vle8.v  v0, (t4)
    vse8.v  v0, (a0)
    add     t4, t4, t5
    add     a0, a0, t5
    sub     t6, t6, t5
    bnez    t6, 3b
4:
    add     a3, a3, a4
    sub     a2, a2, a4
.endm

/* VL for the next pass: a4 = min(a2, 16, VLEN/32) blocks, e32, LMUL 1. */
.macro SETVL
    li      t5, 16
    mv      t4, a2
    bleu    a2, t5, 5f
    mv      t4, t5
5:
    vsetvli a4, t4, e32, m1, ta, ma
.endm

/* The whole body after the entry checks: passes until a2 is 0. */
.macro BODY vror, mark
6:
    SETVL
    PASS    \vror, \mark
    bnez    a2, 6b
.endm

/* Entry: frame, constants; nothing is touched for nblocks == 0. */
.macro ENTER
    beqz    a2, 9f
    addi    sp, sp, -BUF_BYTES
    .cfi_adjust_cfa_offset BUF_BYTES
    andi    a7, a0, 3               /* nonzero: |out| is not 4-aligned */
    li      a6, 64                  /* segment stride: one block */
    lw      a3, 48(a1)              /* the first block's counter */
    li      t0, 1 << 16
    li      t1, 1 << 12
    li      t2, 1 << 8
    li      t3, 1 << 7
.endm

/* Exit: clear the vector registers, the buffer if used, the GPRs. */
.macro LEAVE
    vsetvli t5, zero, e8, m8, ta, ma
    vmv.v.i v0, 0
    vmv.v.i v8, 0
    vmv.v.i v16, 0
    vmv.v.i v24, 0
    beqz    a7, 8f
    /* keystream of the last unaligned passes */
    mv      t4, sp
    li      t6, BUF_BYTES
7:
    vsetvli t5, t6, e8, m8, ta, ma
    vse8.v  v0, (t4)
    add     t4, t4, t5
    sub     t6, t6, t5
    bnez    t6, 7b
8:
    addi    sp, sp, BUF_BYTES
    .cfi_adjust_cfa_offset -BUF_BYTES
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
    lla     t4, chacharng_rvv_vror
    lw      t4, 0(t4)
    bnez    t4, 10f
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
