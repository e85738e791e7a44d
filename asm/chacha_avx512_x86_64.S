/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ChaCha20 keystream kernel for x86_64 with AVX-512F and AVX-512VL
 * (RFC 8439 section 2.3: 20 rounds, 64-byte blocks, little-endian words).
 *
 * void chacharng_chacha_blocks_avx512(uint8_t *out,          rdi
 *                                     const uint32_t st[16], rsi
 *                                     size_t nblocks);       rdx
 *
 * Writes nblocks * 64 bytes of keystream to out (any alignment) for block
 * counters st[12], st[12] + 1, ... modulo 2^32; st[13] never receives a
 * carry.  Reads only st[0..15] and the constant table below, writes only
 * out[0 .. nblocks * 64).  nblocks == 0 returns at once.  out must not
 * overlap st (chacha.h: overlapping buffers are outside the contract, and
 * the kernels disagree on what they produce).
 *
 * Clobbers: rax, rcx, rdx, rsi, rdi, r8-r11, flags, zmm0-zmm31 (all
 * returned zeroed where they held key or keystream).  Stack use: the
 * 32-block path parks two vector registers of keystream in the 128-byte
 * red zone below rsp (allowed in a leaf function by the SysV ABI); the
 * one-block path (chacha_block_x86_64.h) saves rbx, rbp and r12-r15 with
 * push/pop and keeps two state words and the two pointers in a 32-byte
 * frame (CFI describes both); every byte it or the red-zone scratch leaves
 * below the caller's rsp is overwritten with zeros before returning.
 *
 * Layout: "vertical" -- vector register i holds state word i of N
 * independent blocks, so a quarter round is plain lane-wise arithmetic and
 * each rotate is one vprold.  After the rounds and the feed-forward, a
 * 16x16 word transpose (unpack dwords, unpack qwords, then two
 * vshufi32x4 steps across 128-bit lanes) turns columns into blocks.
 *
 *   - 32 blocks per iteration: two independent 16-block states in zmm0-15
 *     and zmm16-31, so the dependent chains of one state hide the latency
 *     of the other's; a final 17..31 blocks also run one such batch;
 *   - 9..16 blocks: one 16-block batch in zmm registers;
 *   - 5..8 blocks: one 8-block batch in ymm registers;
 *   - a final 1..4 blocks: one 4-block batch in xmm registers;
 *   - a call for 2..4 blocks: the row path below, two blocks as four row
 *     registers (ymm0-12 only, so vzeroall clears it; no stack): such
 *     calls are latency-bound, and a vertical batch would compute four;
 *   - a call for 1 block (absorb, the rekey block of a direct request):
 *     the integer registers (chacha_block_x86_64.h, shared with the
 *     SSE2 and AVX2 kernels), which on Zen 5 take half the row
 *     path's time: a 1-cycle add, xor or rotate against a 2-cycle vector
 *     operation on a chain that is all there is to wait for.
 * The keyed batch of a direct request (chacharng_chacha_blocks_key_avx512,
 * after the main kernel) runs the key block on the integer registers
 * inside the rounds of the 16-block or the 32-block batch that makes the
 * caller's first blocks, so it costs no more than those blocks alone.
 * A partial batch stores only the blocks asked for.  Blocks are never
 * split, so no masked stores are needed: surplus blocks are not written.
 * Counters are per-lane 32-bit additions, which wrap modulo 2^32 without
 * carrying into word 13.
 *
 * On exit every vector register that held key or keystream is zeroed
 * (vpxord on zmm16-31, then vzeroall for zmm0-15, which also serves as the
 * vzeroupper the ABI expects) and the red-zone scratch is wiped.  Opmask
 * registers are not used.
 */
#include "asm_common.h"

#if defined(__x86_64__) && defined(__ELF__)

#include "chacha_block_x86_64.h"

        .section .rodata
        .p2align 6
/* Lane offsets added to the broadcast counter: block k of a batch uses
 * counter st[12] + k.  vpaddd wraps modulo 2^32 per lane, which is exactly
 * the required no-carry behaviour. */
.Liota:
        .long 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
        .long 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
/* Row path: counter offsets of the two blocks in a register pair's lanes,
 * and the distance from one pair to the next. */
.Lrowctr:
        .long 0, 0, 0, 0, 1, 0, 0, 0
.Lrowtwo:
        .long 2, 0, 0, 0, 2, 0, 0, 0

        .text

/*
 * x += y, four times, on register numbers of width w.  {evex} keeps the
 * xmm/ymm forms of vpaddd and vpbroadcastd on their AVX-512VL encoding, so
 * the kernel needs exactly the F+VL features the dispatcher checks, not
 * AVX2 as well (only vzeroall is VEX-encoded).
 */
.macro ADD4 w, x0, y0, x1, y1, x2, y2, x3, y3
        {evex} vpaddd %\w\()mm\y0, %\w\()mm\x0, %\w\()mm\x0
        {evex} vpaddd %\w\()mm\y1, %\w\()mm\x1, %\w\()mm\x1
        {evex} vpaddd %\w\()mm\y2, %\w\()mm\x2, %\w\()mm\x2
        {evex} vpaddd %\w\()mm\y3, %\w\()mm\x3, %\w\()mm\x3
.endm

/* x ^= y, four times. */
.macro XOR4 w, x0, y0, x1, y1, x2, y2, x3, y3
        vpxord  %\w\()mm\y0, %\w\()mm\x0, %\w\()mm\x0
        vpxord  %\w\()mm\y1, %\w\()mm\x1, %\w\()mm\x1
        vpxord  %\w\()mm\y2, %\w\()mm\x2, %\w\()mm\x2
        vpxord  %\w\()mm\y3, %\w\()mm\x3, %\w\()mm\x3
.endm

/* x = rotl32(x, n), four times. */
.macro ROT4 w, n, x0, x1, x2, x3
        vprold  $\n, %\w\()mm\x0, %\w\()mm\x0
        vprold  $\n, %\w\()mm\x1, %\w\()mm\x1
        vprold  $\n, %\w\()mm\x2, %\w\()mm\x2
        vprold  $\n, %\w\()mm\x3, %\w\()mm\x3
.endm

/*
 * Four independent quarter rounds (RFC 8439 section 2.1), interleaved step
 * by step so that each dependent instruction has three others to hide its
 * latency behind.
 */
.macro QR4 w, a0,b0,c0,d0, a1,b1,c1,d1, a2,b2,c2,d2, a3,b3,c3,d3
        ADD4    \w, \a0,\b0, \a1,\b1, \a2,\b2, \a3,\b3
        XOR4    \w, \d0,\a0, \d1,\a1, \d2,\a2, \d3,\a3
        ROT4    \w, 16, \d0, \d1, \d2, \d3
        ADD4    \w, \c0,\d0, \c1,\d1, \c2,\d2, \c3,\d3
        XOR4    \w, \b0,\c0, \b1,\c1, \b2,\c2, \b3,\c3
        ROT4    \w, 12, \b0, \b1, \b2, \b3
        ADD4    \w, \a0,\b0, \a1,\b1, \a2,\b2, \a3,\b3
        XOR4    \w, \d0,\a0, \d1,\a1, \d2,\a2, \d3,\a3
        ROT4    \w, 8, \d0, \d1, \d2, \d3
        ADD4    \w, \c0,\d0, \c1,\d1, \c2,\d2, \c3,\d3
        XOR4    \w, \b0,\c0, \b1,\c1, \b2,\c2, \b3,\c3
        ROT4    \w, 7, \b0, \b1, \b2, \b3
.endm

/* One column round and one diagonal round (RFC 8439 section 2.3). */
.macro DROUND w
        QR4     \w, 0,4,8,12, 1,5,9,13, 2,6,10,14, 3,7,11,15
        QR4     \w, 0,5,10,15, 1,6,11,12, 2,7,8,13, 3,4,9,14
.endm

/* Register r = st[i] in every lane; r += st[i] in every lane. */
.macro BCAST w, i, r
        {evex} vpbroadcastd 4*\i(%rsi), %\w\()mm\r
.endm

.macro FFW w, bc, i, r
        vpaddd 4*\i(%rsi){1to\bc}, %\w\()mm\r, %\w\()mm\r
.endm

/*
 * Load the state into registers 0..15, one word per register, with lane
 * k's counter set to r8d + k.  Broadcasts come straight from st[] each
 * batch: a load port is idle here, while keeping copies in registers would
 * take the registers the transpose needs.
 */
.macro LOADSTATE w
        .irp    i, 0,1,2,3,4,5,6,7,8,9,10,11,13,14,15
        BCAST   \w, \i, \i
        .endr
        vpbroadcastd %r8d, %\w\()mm12
        {evex} vpaddd .Liota(%rip), %\w\()mm12, %\w\()mm12
.endm

/* The second 16 blocks of a 32-block batch, in zmm16-31, counters
 * r8d + 16 .. r8d + 31. */
.macro LOADSTATE_HI
        BCAST   z, 0, 16
        BCAST   z, 1, 17
        BCAST   z, 2, 18
        BCAST   z, 3, 19
        BCAST   z, 4, 20
        BCAST   z, 5, 21
        BCAST   z, 6, 22
        BCAST   z, 7, 23
        BCAST   z, 8, 24
        BCAST   z, 9, 25
        BCAST   z, 10, 26
        BCAST   z, 11, 27
        BCAST   z, 13, 29
        BCAST   z, 14, 30
        BCAST   z, 15, 31
        vpbroadcastd %r8d, %zmm28
        vpaddd .Liota+64(%rip), %zmm28, %zmm28
.endm

.macro FEEDFWD_HI
        FFW     z, 16, 0, 16
        FFW     z, 16, 1, 17
        FFW     z, 16, 2, 18
        FFW     z, 16, 3, 19
        FFW     z, 16, 4, 20
        FFW     z, 16, 5, 21
        FFW     z, 16, 6, 22
        FFW     z, 16, 7, 23
        FFW     z, 16, 8, 24
        FFW     z, 16, 9, 25
        FFW     z, 16, 10, 26
        FFW     z, 16, 11, 27
        FFW     z, 16, 13, 29
        FFW     z, 16, 14, 30
        FFW     z, 16, 15, 31
.endm

/* The 20 rounds; eax counts double rounds. */
.macro ROUNDS w
        movl    $10, %eax
        .p2align 4
1:
        DROUND  \w
        decl    %eax
        jnz     1b
.endm

/*
 * 20 rounds on two independent 16-block states, zmm0-15 and zmm16-31.
 * Within one state a round is four dependency chains of twelve
 * instructions; where vector integer operations take two cycles, one state
 * leaves half the vector pipes idle, and the second state fills them.
 * Alternating whole half-rounds measured faster than interleaving the two
 * states instruction by instruction.
 */
.macro ROUNDS32
        movl    $10, %eax
        .p2align 4
1:
        QR4     z, 0,4,8,12, 1,5,9,13, 2,6,10,14, 3,7,11,15
        QR4     z, 16,20,24,28, 17,21,25,29, 18,22,26,30, 19,23,27,31
        QR4     z, 0,5,10,15, 1,6,11,12, 2,7,8,13, 3,4,9,14
        QR4     z, 16,21,26,31, 17,22,27,28, 18,23,24,29, 19,20,25,30
        decl    %eax
        jnz     1b
.endm

/*
 * Feed-forward: add the input state back.  The embedded broadcast reads
 * st[i] directly; the counter vector is rebuilt in register 16, which the
 * rounds leave free.
 */
.macro FEEDFWD w, bc
        .irp    i, 0,1,2,3,4,5,6,7,8,9,10,11,13,14,15
        FFW     \w, \bc, \i, \i
        .endr
        vpbroadcastd %r8d, %\w\()mm16
        {evex} vpaddd .Liota(%rip), %\w\()mm16, %\w\()mm16
        {evex} vpaddd %\w\()mm16, %\w\()mm12, %\w\()mm12
.endm

/*
 * First two transpose steps for words x0..x3 (one group of four state
 * words), using t0..t3 as temporaries.  Afterwards register xj holds, in
 * each 128-bit lane L, the four words of block 4L + j, in order.  This is
 * already the full transpose for 4 blocks.
 */
.macro UNPACK4 w, x0, x1, x2, x3, t0, t1, t2, t3
        vpunpckldq  %\w\()mm\x1, %\w\()mm\x0, %\w\()mm\t0
        vpunpckhdq  %\w\()mm\x1, %\w\()mm\x0, %\w\()mm\t1
        vpunpckldq  %\w\()mm\x3, %\w\()mm\x2, %\w\()mm\t2
        vpunpckhdq  %\w\()mm\x3, %\w\()mm\x2, %\w\()mm\t3
        vpunpcklqdq %\w\()mm\t2, %\w\()mm\t0, %\w\()mm\x0
        vpunpckhqdq %\w\()mm\t2, %\w\()mm\t0, %\w\()mm\x1
        vpunpcklqdq %\w\()mm\t3, %\w\()mm\t1, %\w\()mm\x2
        vpunpckhqdq %\w\()mm\t3, %\w\()mm\t1, %\w\()mm\x3
.endm

.macro UNPACK16 w
        UNPACK4 \w, 0, 1, 2, 3, 16, 17, 18, 19
        UNPACK4 \w, 4, 5, 6, 7, 20, 21, 22, 23
        UNPACK4 \w, 8, 9, 10, 11, 24, 25, 26, 27
        UNPACK4 \w, 12, 13, 14, 15, 28, 29, 30, 31
.endm

/*
 * zmm: after UNPACK16, register 4g + j holds words 4g..4g+3 of block
 * 4L + j in lane L.  Block 4L + j is lane L of registers j, 4+j, 8+j,
 * 12+j: a 4x4 transpose of 128-bit lanes, done with two vshufi32x4 steps.
 * Results land back in the source registers: block 4L + j in zmm(4L + j).
 */
.macro LANES4 u0, u1, u2, u3, v0, v1, v2, v3
        vshufi32x4 $0x44, %zmm\u1, %zmm\u0, %zmm\v0  /* u0.L0 u0.L1 u1.L0 u1.L1 */
        vshufi32x4 $0xee, %zmm\u1, %zmm\u0, %zmm\v1  /* u0.L2 u0.L3 u1.L2 u1.L3 */
        vshufi32x4 $0x44, %zmm\u3, %zmm\u2, %zmm\v2
        vshufi32x4 $0xee, %zmm\u3, %zmm\u2, %zmm\v3
        vshufi32x4 $0x88, %zmm\v2, %zmm\v0, %zmm\u0  /* lane 0 of u0..u3 */
        vshufi32x4 $0xdd, %zmm\v2, %zmm\v0, %zmm\u1  /* lane 1 */
        vshufi32x4 $0x88, %zmm\v3, %zmm\v1, %zmm\u2  /* lane 2 */
        vshufi32x4 $0xdd, %zmm\v3, %zmm\v1, %zmm\u3  /* lane 3 */
.endm

.macro LANES16
        LANES4  0, 4, 8, 12, 16, 17, 18, 19
        LANES4  1, 5, 9, 13, 20, 21, 22, 23
        LANES4  2, 6, 10, 14, 24, 25, 26, 27
        LANES4  3, 7, 11, 15, 28, 29, 30, 31
.endm

/*
 * The same two transpose stages with only two temporaries p and q, for the
 * 32-block batch where the other 30 registers are all live.  Each pair of
 * results is written over inputs whose last use has just passed; the
 * result of block 4L + j lands in register
 *   j = 0: x2,  j = 1: x3,  j = 2: x0,  j = 3: x1.
 */
.macro UNPACK4_2T x0, x1, x2, x3, p, q
        vpunpckldq  %zmm\x1, %zmm\x0, %zmm\p
        vpunpckhdq  %zmm\x1, %zmm\x0, %zmm\q
        vpunpckldq  %zmm\x3, %zmm\x2, %zmm\x0
        vpunpckhdq  %zmm\x3, %zmm\x2, %zmm\x1
        vpunpcklqdq %zmm\x0, %zmm\p, %zmm\x2
        vpunpckhqdq %zmm\x0, %zmm\p, %zmm\x3
        vpunpcklqdq %zmm\x1, %zmm\q, %zmm\x0
        vpunpckhqdq %zmm\x1, %zmm\q, %zmm\x1
.endm

/* Lane transpose of u0..u3 (word groups 0..3 of blocks 4L + j) with two
 * temporaries, storing blocks j, 4+j, 8+j, 12+j as soon as they exist. */
.macro LANES4_2T j, u0, u1, u2, u3, p, q
        vshufi32x4 $0x44, %zmm\u1, %zmm\u0, %zmm\p
        vshufi32x4 $0xee, %zmm\u1, %zmm\u0, %zmm\q
        vshufi32x4 $0x44, %zmm\u3, %zmm\u2, %zmm\u0
        vshufi32x4 $0xee, %zmm\u3, %zmm\u2, %zmm\u1
        vshufi32x4 $0x88, %zmm\u0, %zmm\p, %zmm\u2
        vshufi32x4 $0xdd, %zmm\u0, %zmm\p, %zmm\u3
        vshufi32x4 $0x88, %zmm\u1, %zmm\q, %zmm\u0
        vshufi32x4 $0xdd, %zmm\u1, %zmm\q, %zmm\u1
        vmovdqu32 %zmm\u2, 64*\j(%rdi)
        vmovdqu32 %zmm\u3, 64*(4+\j)(%rdi)
        vmovdqu32 %zmm\u0, 64*(8+\j)(%rdi)
        vmovdqu32 %zmm\u1, 64*(12+\j)(%rdi)
.endm

/*
 * ymm: block 4L + j is lane L of registers j, 4+j (words 0..7) and 8+j,
 * 12+j (words 8..15).  Block b goes to ymm(16 + 2b) and ymm(17 + 2b).
 */
.macro HALVES2 j, b0lo, b0hi, b1lo, b1hi, j4, j8, j12
        vshufi32x4 $0, %ymm\j4, %ymm\j, %ymm\b0lo
        vshufi32x4 $0, %ymm\j12, %ymm\j8, %ymm\b0hi
        vshufi32x4 $3, %ymm\j4, %ymm\j, %ymm\b1lo
        vshufi32x4 $3, %ymm\j12, %ymm\j8, %ymm\b1hi
.endm

.macro HALVES8
        HALVES2 0, 16, 17, 24, 25, 4, 8, 12
        HALVES2 1, 18, 19, 26, 27, 5, 9, 13
        HALVES2 2, 20, 21, 28, 29, 6, 10, 14
        HALVES2 3, 22, 23, 30, 31, 7, 11, 15
.endm

/* Store one block from its register(s). */
.macro STORE_Z b
        vmovdqu32 %zmm\b, 64*\b(%rdi)
.endm

.macro STORE_Y b, lo, hi
        vmovdqu32 %ymm\lo, 64*\b(%rdi)
        vmovdqu32 %ymm\hi, 64*\b+32(%rdi)
.endm

/* xmm: block j is registers j, 4+j, 8+j, 12+j. */
.macro STORE_X b, r0, r1, r2, r3
        vmovdqu32 %xmm\r0, 64*\b(%rdi)
        vmovdqu32 %xmm\r1, 64*\b+16(%rdi)
        vmovdqu32 %xmm\r2, 64*\b+32(%rdi)
        vmovdqu32 %xmm\r3, 64*\b+48(%rdi)
.endm

/* Leave for label \done unless more than \b blocks were asked for. */
.macro NEED b, done
        cmpq    $\b, %rdx
        jbe     \done
.endm

/*
 * The end of a two-state pass, all 32 registers live: the feed-forward of
 * both states (two of the upper state's registers parked in the red zone
 * to get temporaries), the lower state transposed and stored with those
 * two alone, then the upper state's blocks 16 + b from zmm(16 + b), as
 * many as were asked for, leaving for \done once they are stored.
 */
.macro PAIR_FINISH done
        FEEDFWD_HI
        vmovdqu64 %zmm30, -64(%rsp)
        vmovdqu64 %zmm31, -128(%rsp)
        vpbroadcastd %r8d, %zmm31
        vpaddd .Liota(%rip), %zmm31, %zmm30
        vpaddd .Liota+64(%rip), %zmm31, %zmm31
        vpaddd %zmm30, %zmm12, %zmm12
        vpaddd %zmm31, %zmm28, %zmm28
        .irp    i, 0,1,2,3,4,5,6,7,8,9,10,11,13,14,15
        FFW     z, 16, \i, \i
        .endr
        UNPACK4_2T 0, 1, 2, 3, 30, 31
        UNPACK4_2T 4, 5, 6, 7, 30, 31
        UNPACK4_2T 8, 9, 10, 11, 30, 31
        UNPACK4_2T 12, 13, 14, 15, 30, 31
        LANES4_2T 0, 2, 6, 10, 14, 30, 31
        LANES4_2T 1, 3, 7, 11, 15, 30, 31
        LANES4_2T 2, 0, 4, 8, 12, 30, 31
        LANES4_2T 3, 1, 5, 9, 13, 30, 31

        /* Upper state: zmm0-15 are free now; block 16 + b ends in
         * zmm(16 + b). */
        vmovdqu64 -64(%rsp), %zmm30
        vmovdqu64 -128(%rsp), %zmm31
        UNPACK4 z, 16, 17, 18, 19, 0, 1, 2, 3
        UNPACK4 z, 20, 21, 22, 23, 4, 5, 6, 7
        UNPACK4 z, 24, 25, 26, 27, 8, 9, 10, 11
        UNPACK4 z, 28, 29, 30, 31, 12, 13, 14, 15
        LANES4  16, 20, 24, 28, 0, 1, 2, 3
        LANES4  17, 21, 25, 29, 4, 5, 6, 7
        LANES4  18, 22, 26, 30, 8, 9, 10, 11
        LANES4  19, 23, 27, 31, 12, 13, 14, 15
        STORE_Z 16
        .irp    b, 17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
        NEED    \b, \done
        STORE_Z \b
        .endr
.endm

/*
 * Row path (2..4 blocks): "horizontal" -- each 128-bit lane holds one row
 * of a block's 4x4 state (a = words 0..3, b = 4..7, c = 8..11,
 * d = 12..15), the low lane block k and the high lane block k + 1, so four
 * ymm registers are two blocks.  A column round is lane-wise arithmetic on
 * the rows and a diagonal round the same after rotating rows a, c and d
 * within each lane (vpshufd); leaving b, the row each round ends on, in
 * place keeps the shuffles off the dependency chain, which is then add,
 * xor, vprold, four times a round.  That chain leaves the vector pipes
 * mostly idle, so a second pair (blocks 2 and 3) runs interleaved at
 * little cost, and below five blocks this beats a vertical batch.  ymm
 * rather than zmm: a 2-block call is latency-bound either way, and
 * 256-bit operations keep the core out of its 512-bit power state.
 * Registers: ymm0-3 and ymm4-7 the two pairs, ymm8-11 the input rows,
 * ymm12 the second pair's counter row at the end.
 *
 * x += y; z ^= x; z <<<= r, for each pair given (the second may be left
 * out).
 */
.macro RSTEP r, x0,y0,z0, x1,y1,z1
        {evex} vpaddd %ymm\y0, %ymm\x0, %ymm\x0
        .ifnb   \x1
        {evex} vpaddd %ymm\y1, %ymm\x1, %ymm\x1
        .endif
        vpxord  %ymm\x0, %ymm\z0, %ymm\z0
        .ifnb   \x1
        vpxord  %ymm\x1, %ymm\z1, %ymm\z1
        .endif
        vprold  $\r, %ymm\z0, %ymm\z0
        .ifnb   \x1
        vprold  $\r, %ymm\z1, %ymm\z1
        .endif
.endm

/* Rotate rows a, c, d of each pair given by ia, ic, id (vpshufd). */
.macro RSHUF ia, ic, id, a0,c0,d0, a1,c1,d1
        .irp    r, \a0, \a1
        .ifnb   \r
        {evex} vpshufd $\ia, %ymm\r, %ymm\r
        .endif
        .endr
        .irp    r, \c0, \c1
        .ifnb   \r
        {evex} vpshufd $\ic, %ymm\r, %ymm\r
        .endif
        .endr
        .irp    r, \d0, \d1
        .ifnb   \r
        {evex} vpshufd $\id, %ymm\r, %ymm\r
        .endif
        .endr
.endm

/*
 * One column round and one diagonal round.  Into the diagonal round, word
 * i of a moves to i + 1 (0x93), c to i - 1 (0x39) and d to i + 2 (0x4e):
 * position i then holds words i - 1, 4 + i, 8 + i + 1, 12 + i + 2, one
 * diagonal quarter round.  The inverse shuffles restore the columns.
 */
.macro RDROUND a0,b0,c0,d0, a1,b1,c1,d1
        RSTEP   16, \a0,\b0,\d0, \a1,\b1,\d1
        RSTEP   12, \c0,\d0,\b0, \c1,\d1,\b1
        RSTEP   8, \a0,\b0,\d0, \a1,\b1,\d1
        RSTEP   7, \c0,\d0,\b0, \c1,\d1,\b1
        RSHUF   0x93, 0x39, 0x4e, \a0,\c0,\d0, \a1,\c1,\d1
        RSTEP   16, \a0,\b0,\d0, \a1,\b1,\d1
        RSTEP   12, \c0,\d0,\b0, \c1,\d1,\b1
        RSTEP   8, \a0,\b0,\d0, \a1,\b1,\d1
        RSTEP   7, \c0,\d0,\b0, \c1,\d1,\b1
        RSHUF   0x39, 0x93, 0x4e, \a0,\c0,\d0, \a1,\c1,\d1
.endm

/* The 20 rounds of the row path; eax counts double rounds. */
.macro RROUNDS q:vararg
        movl    $10, %eax
        .p2align 4
1:
        RDROUND \q
        decl    %eax
        jnz     1b
.endm

/* Store block j from the low (L = 0) or high (L = 1) lanes of a..d. */
.macro RSTORE j, L, a, b, c, d
        .if \L == 0
        vmovdqu32 %xmm\a, 64*\j(%rdi)
        vmovdqu32 %xmm\b, 64*\j+16(%rdi)
        vmovdqu32 %xmm\c, 64*\j+32(%rdi)
        vmovdqu32 %xmm\d, 64*\j+48(%rdi)
        .else
        vextracti32x4 $1, %ymm\a, 64*\j(%rdi)
        vextracti32x4 $1, %ymm\b, 64*\j+16(%rdi)
        vextracti32x4 $1, %ymm\c, 64*\j+32(%rdi)
        vextracti32x4 $1, %ymm\d, 64*\j+48(%rdi)
        .endif
.endm

/*
 * Everything a call for more than 4 blocks does after its entry: rdi =
 * out, rsi = st, rdx = blocks left (at least 1), r8d = their first
 * counter, rsp as at the function's entry; from .L<p>_loop32 when more
 * than 16 are left, else from .L<p>_tail.  Ends by zeroing zmm0-31 and
 * the red zone, and returns.
 * Expanded once in each function that needs it, with its own label
 * prefix |p|, so that no function jumps into another's labels.
 */
.macro BULK p
        /*
         * 32 blocks per iteration; also serves a final 17..31 blocks, whose
         * surplus blocks are simply not stored.  rdx >= 17 here.
         */
        .p2align 5
.L\p\()_loop32:
        LOADSTATE z
        LOADSTATE_HI
        ROUNDS32

        /*
         * All 32 registers are live.  Finish the upper state's feed-forward
         * and park two of its registers (keystream now) in the red zone to
         * get temporaries; the lower state is then transposed and stored
         * with those two alone.
         */
        PAIR_FINISH .L\p\()_done

        cmpq    $32, %rdx
        jbe     .L\p\()_done
        addq    $2048, %rdi
        addl    $32, %r8d               /* wraps modulo 2^32, as required */
        subq    $32, %rdx
        cmpq    $16, %rdx
        ja      .L\p\()_loop32

.L\p\()_tail:
        cmpq    $8, %rdx
        ja      .L\p\()_tail16
        cmpq    $4, %rdx
        ja      .L\p\()_tail8

        /* 1..4 blocks: one xmm batch of four. */
        LOADSTATE x
        ROUNDS  x
        FEEDFWD x, 4
        UNPACK16 x
        STORE_X 0, 0, 4, 8, 12
        NEED    1, .L\p\()_done
        STORE_X 1, 1, 5, 9, 13
        NEED    2, .L\p\()_done
        STORE_X 2, 2, 6, 10, 14
        NEED    3, .L\p\()_done
        STORE_X 3, 3, 7, 11, 15
        jmp     .L\p\()_done

        /* 5..8 blocks: one ymm batch of eight. */
.L\p\()_tail8:
        LOADSTATE y
        ROUNDS  y
        FEEDFWD y, 8
        UNPACK16 y
        HALVES8
        STORE_Y 0, 16, 17
        STORE_Y 1, 18, 19
        STORE_Y 2, 20, 21
        STORE_Y 3, 22, 23
        STORE_Y 4, 24, 25
        NEED    5, .L\p\()_done
        STORE_Y 5, 26, 27
        NEED    6, .L\p\()_done
        STORE_Y 6, 28, 29
        NEED    7, .L\p\()_done
        STORE_Y 7, 30, 31
        jmp     .L\p\()_done

        /* 9..16 blocks: one zmm batch of sixteen. */
.L\p\()_tail16:
        LOADSTATE z
        ROUNDS  z
        FEEDFWD z, 16
        UNPACK16 z
        LANES16
        .irp    b, 0,1,2,3,4,5,6,7,8
        STORE_Z \b
        .endr
        .irp    b, 9,10,11,12,13,14,15
        NEED    \b, .L\p\()_done
        STORE_Z \b
        .endr

.L\p\()_done:
        /* zmm0-31 held key words and keystream: zero them all.  An xmm
         * write zeroes the whole zmm register; vzeroall covers zmm0-15 and
         * leaves the upper state clean like vzeroupper.  The red zone may
         * hold two registers of keystream from the 32-block path. */
        .irp    i, 16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
        vpxord  %xmm\i, %xmm\i, %xmm\i
        .endr
        vmovdqu64 %zmm16, -64(%rsp)
        vmovdqu64 %zmm16, -128(%rsp)
        vzeroall
        ret
.endm

        .p2align 6
FUNC_BEGIN(chacharng_chacha_blocks_avx512)
        LANDING_PAD
        testq   %rdx, %rdx
        jz      .Lnothing               /* no vector register touched yet */
        cmpq    $1, %rdx
        je      .Lblock1
        cmpq    $4, %rdx
        jbe     .Lrows
        movl    48(%rsi), %r8d          /* st[12]: counter of the next batch */
        cmpq    $16, %rdx
        jbe     .Lm_tail
        BULK    m                       /* from its .Lm_loop32 */

.Lnothing:
        ret

        /* 2..4 blocks: the row path, ymm0-12 only, no stack. */
.Lrows:
        vbroadcasti32x4 0(%rsi), %ymm8
        vbroadcasti32x4 16(%rsi), %ymm9
        vbroadcasti32x4 32(%rsi), %ymm10
        vbroadcasti32x4 48(%rsi), %ymm11
        {evex} vpaddd .Lrowctr(%rip), %ymm11, %ymm11
        vmovdqa32 %ymm8, %ymm0
        vmovdqa32 %ymm9, %ymm1
        vmovdqa32 %ymm10, %ymm2
        vmovdqa32 %ymm11, %ymm3
        cmpl    $2, %edx
        jbe     .Lrows1
        vmovdqa32 %ymm8, %ymm4
        vmovdqa32 %ymm9, %ymm5
        vmovdqa32 %ymm10, %ymm6
        {evex} vpaddd .Lrowtwo(%rip), %ymm11, %ymm7
        RROUNDS 0,1,2,3, 4,5,6,7
        {evex} vpaddd %ymm8, %ymm4, %ymm4
        {evex} vpaddd %ymm9, %ymm5, %ymm5
        {evex} vpaddd %ymm10, %ymm6, %ymm6
        {evex} vpaddd .Lrowtwo(%rip), %ymm11, %ymm12
        {evex} vpaddd %ymm12, %ymm7, %ymm7
        RSTORE  2, 0, 4, 5, 6, 7
        cmpl    $3, %edx
        je      .Lrows_out
        RSTORE  3, 1, 4, 5, 6, 7
        jmp     .Lrows_out
.Lrows1:
        RROUNDS 0,1,2,3
.Lrows_out:
        {evex} vpaddd %ymm8, %ymm0, %ymm0
        {evex} vpaddd %ymm9, %ymm1, %ymm1
        {evex} vpaddd %ymm10, %ymm2, %ymm2
        {evex} vpaddd %ymm11, %ymm3, %ymm3
        RSTORE  0, 0, 0, 1, 2, 3
        RSTORE  1, 1, 0, 1, 2, 3        /* at least 2 blocks here */
        /* Only ymm0-12 were written here: vzeroall clears them all. */
        vzeroall
        ret

        /* One block: the integer registers (chacha_block_x86_64.h). */
.Lblock1:
        CHACHA_BLOCK1_GPR
FUNC_END(chacharng_chacha_blocks_avx512)

/*
 * void chacharng_chacha_blocks_key_avx512(uint8_t *key,          rdi
 *                                         uint8_t *out,          rsi
 *                                         const uint32_t st[16], rdx
 *                                         size_t nblocks);       rcx
 *
 * The keyed batch of chacha.h: block st[12] to key[0..64), nblocks blocks
 * from st[12] + 1 to out.  The key block runs on the integer registers
 * (chacha_block_x86_64.h) and, for 1..16 blocks, inside the rounds of
 * the one zmm batch that makes the others: that batch is a latency-bound
 * chain that leaves the integer ALUs idle, so the key block costs next to
 * nothing.  For 0 blocks it runs alone; for more than 16 inside the
 * rounds of the first 32-block batch, and the blocks after those take
 * this function's own copy of the main kernel's loop and tails (BULK),
 * with rsp back at its entry value.  The function stands alone: it jumps
 * to no label of another and clears everything it used itself.  Stack:
 * the one-block path's six saved registers and a 64-byte frame (its two
 * words of c and the two pointers, then out, nblocks and st), all zeroed
 * before returning on every path, and the red zone as the main kernel's.
 * Registers on exit as for the main kernel.
 */
#define K_FRAME 64

        .p2align 6
FUNC_BEGIN(chacharng_chacha_blocks_key_avx512)
        LANDING_PAD
        B1_PUSH
        subq    $K_FRAME, %rsp
        .cfi_adjust_cfa_offset K_FRAME
        K_SAVE_ARGS
        testq   %rcx, %rcx
        jz      .Lkey_alone
        cmpq    $16, %rcx
        ja      .Lkey_pair

        /* The zmm batch for blocks st[12] + 1 ..., then the key block's
         * words, on top of the batch's free integer registers. */
        movq    %rdx, %rsi
        movl    48(%rsi), %r8d
        incl    %r8d                    /* wraps modulo 2^32 */
        LOADSTATE z
        movq    %rsi, %rbp
        B1_LOAD
        .p2align 4
1:
        QR4     z, 0,4,8,12, 1,5,9,13, 2,6,10,14, 3,7,11,15
        B1_COLUMNS
        QR4     z, 0,5,10,15, 1,6,11,12, 2,7,8,13, 3,4,9,14
        B1_DIAGONALS
        decl    %ebp
        jnz     1b
        B1_FINISH
        movq    K_ST(%rsp), %rsi
        movl    48(%rsi), %r8d
        incl    %r8d
        movq    K_VOUT(%rsp), %rdi
        movq    K_N(%rsp), %rdx
        FEEDFWD z, 16
        UNPACK16 z
        LANES16
        STORE_Z 0
        .irp    b, 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
        NEED    \b, .Lkey_stored
        STORE_Z \b
        .endr
.Lkey_stored:
        /* As .Ldone: zmm0-31 held key words and keystream. */
        .irp    i, 16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
        vpxord  %xmm\i, %xmm\i, %xmm\i
        .endr
        vzeroall
        xorl    %eax, %eax
        movq    %rax, K_VOUT(%rsp)
        movq    %rax, K_N(%rsp)
        movq    %rax, K_ST(%rsp)
        addq    $K_FRAME, %rsp
        .cfi_adjust_cfa_offset -K_FRAME
        B1_POP
        ret
        .cfi_adjust_cfa_offset K_FRAME + B1_SAVED

        /* No other block: the key block alone.  B1_FINISH leaves rax 0. */
.Lkey_alone:
        movq    %rdx, %rbp
        B1_BODY
        movq    %rax, K_VOUT(%rsp)
        movq    %rax, K_N(%rsp)
        movq    %rax, K_ST(%rsp)
        addq    $K_FRAME, %rsp
        .cfi_adjust_cfa_offset -K_FRAME
        B1_POP
        ret
        .cfi_adjust_cfa_offset K_FRAME + B1_SAVED

        /*
         * More than 16 blocks: the first 32 as the main kernel's 32-block
         * batch (two 16-block states), with the key block's rounds in
         * between; its integer registers are as idle there.  The rest, if
         * any, from this function's BULK below.
         */
.Lkey_pair:
        movq    %rdx, %rsi
        movl    48(%rsi), %r8d
        incl    %r8d                    /* wraps modulo 2^32 */
        LOADSTATE z
        LOADSTATE_HI
        movq    %rsi, %rbp
        B1_LOAD
        .p2align 4
1:
        QR4     z, 0,4,8,12, 1,5,9,13, 2,6,10,14, 3,7,11,15
        B1_COLUMNS
        QR4     z, 16,20,24,28, 17,21,25,29, 18,22,26,30, 19,23,27,31
        QR4     z, 0,5,10,15, 1,6,11,12, 2,7,8,13, 3,4,9,14
        B1_DIAGONALS
        QR4     z, 16,21,26,31, 17,22,27,28, 18,23,24,29, 19,20,25,30
        decl    %ebp
        jnz     1b
        B1_FINISH
        movq    K_ST(%rsp), %rsi
        movl    48(%rsi), %r8d
        incl    %r8d
        movq    K_VOUT(%rsp), %rdi
        movq    K_N(%rsp), %rdx

        /* From here as the main kernel's loop after its rounds, the red
         * zone below the frame parking two registers. */
        PAIR_FINISH .Lkey_pair_stored
.Lkey_pair_stored:
        /* The red-zone copies: keystream. */
        vpxord  %xmm16, %xmm16, %xmm16
        vmovdqu64 %zmm16, -64(%rsp)
        vmovdqu64 %zmm16, -128(%rsp)
        xorl    %eax, %eax
        movq    %rax, K_VOUT(%rsp)
        movq    %rax, K_N(%rsp)
        movq    %rax, K_ST(%rsp)
        addq    $K_FRAME, %rsp
        .cfi_adjust_cfa_offset -K_FRAME
        B1_POP
        cmpq    $32, %rdx
        jbe     .Lk_done                /* zeroes zmm0-31, returns */
        addq    $2048, %rdi
        addl    $32, %r8d               /* wraps modulo 2^32 */
        subq    $32, %rdx
        cmpq    $16, %rdx
        ja      .Lk_loop32
        jmp     .Lk_tail
        /* The blocks after the first 32: this function's own copy of the
         * main kernel's loop and tails. */
        BULK    k
FUNC_END(chacharng_chacha_blocks_key_avx512)

#endif
