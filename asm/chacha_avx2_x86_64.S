/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ChaCha20 keystream kernel for x86_64 with AVX2 (RFC 8439 section 2.3:
 * 20 rounds, 64-byte blocks, little-endian words).
 *
 * void chacharng_chacha_blocks_avx2(uint8_t *out,          rdi
 *                                   const uint32_t st[16], rsi
 *                                   size_t nblocks);       rdx
 *
 * Writes nblocks * 64 bytes of keystream to out (any alignment, stored with
 * vmovdqu/vextracti128) for block counters st[12], st[12] + 1, ... modulo
 * 2^32; st[13] never receives a carry.  Reads only st[0..15] and the
 * constant table below, writes only out[0 .. nblocks * 64).  nblocks == 0
 * returns at once.  out must not overlap st (chacha.h: overlapping buffers
 * are outside the contract, and the kernels disagree on what they produce).
 *
 * Clobbers: rax, rcx, rdx, rsi, rdi, r8-r11, flags, ymm0-ymm15 (all
 * returned zeroed where they held key or keystream; the vector paths end
 * in vzeroall, which also leaves the upper halves clean as vzeroupper
 * would, and the one-block path touches no vector register).  Stack use:
 * none for 2..4 blocks; for 1 block the integer path
 * (chacha_block_x86_64.h) saves rbx, rbp and r12-r15 with push/pop and
 * keeps two state words and the two pointers in a 32-byte frame (CFI
 * describes both); else rsp is saved in r11 (the CFA register meanwhile),
 * aligned down to 32 bytes and lowered by 608 bytes: 64 bytes that only
 * the keyed batch below uses, then the working state of an 8-block batch
 * and its counter vector.  Every byte left below the
 * caller's rsp is overwritten with zeros before returning.
 *
 * Layout: "vertical" -- ymm register i holds state word i of eight
 * consecutive blocks, so a quarter round is lane-wise arithmetic.
 * Rotations by 16 and 8 are one vpshufb each, by 12 and 7 shift, shift, or.
 *
 * Batches:
 *   - a call for 1 block (absorb, the rekey block of a direct request):
 *     the integer registers (chacha_block_x86_64.h, shared with the SSE2
 *     and AVX-512 kernels): such a call is one dependency chain, and on
 *     cores with two-cycle vector operations (Zen 5) the one-cycle
 *     integer ALUs run it in about half the row path's time;
 *   - a call for 2..4 blocks: the row path below (two blocks as four row
 *     registers), all in registers: such calls are latency-bound, and a
 *     vertical batch would compute eight;
 *   - 5 blocks and more: one 8-block state at a time, in registers but
 *     for word 11 (a "c" word in both column and diagonal rounds), kept
 *     in the frame so a register is left for the rotate scratch.  Two
 *     interleaved states (thirty-two words, half of them in the frame
 *     and read as memory operands) had the best single time, but on a
 *     Zen 3 (AMD EPYC, family 25 model 1) sharing its core with other
 *     work their median was 1.13 to 1.45 times one state's, from 16
 *     blocks (a refill) to 1024 (0.90 with the core to themselves),
 *     while one state ran at EVP ChaCha20's speed either way.
 * After the feed-forward a 4x4 word transpose inside each 128-bit lane
 * turns a group of four words into 16-byte pieces of blocks k (low lane)
 * and k + 4 (high lane), stored without any cross-lane shuffle.  A partial
 * batch computes all its blocks but stores only those asked for (branching
 * on the count), so nothing outside out[] is written.  Counters are
 * per-lane 32-bit vpaddd, which wraps modulo 2^32 without carrying into
 * word 13.
 *
 * On exit every ymm register is zeroed and the stack area is wiped, as
 * they held key material and keystream.
 */
#include "asm_common.h"

#if defined(__x86_64__) && defined(__ELF__)

#include "chacha_block_x86_64.h"

        .section .rodata
        .p2align 5
/* vpshufb patterns: rotate every 32-bit word left by 16 / by 8. */
.Lrot16:
        .byte 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13
        .byte 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13
.Lrot8:
        .byte 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14
        .byte 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14
/* Lane k of a batch uses counter base + k. */
.Liota:
        .long 0, 1, 2, 3, 4, 5, 6, 7
/* The keyed batch's batch X: the blocks after the key block. */
.Liota1:
        .long 1, 2, 3, 4, 5, 6, 7, 8
/* Counter distance between consecutive 8-block batches. */
.Leight:
        .long 8, 8, 8, 8, 8, 8, 8, 8
/* Row path: counter offsets of the two blocks in a register pair's lanes,
 * and the distance from one pair to the next. */
.Lrowctr:
        .long 0, 0, 0, 0, 1, 0, 0, 0
.Lrowtwo:
        .long 2, 0, 0, 0, 2, 0, 0, 0

        .text

/*
 * Work area layout (offsets from the 32-byte aligned rsp).  The first 64
 * bytes are the keyed batch's integer frame (chacha_block_x86_64.h's
 * B1_C, B1_OUT and B1_ST at 0..32, then K_*): the key block's rounds use
 * them beside the vector batch, whose words start above them.
 */
#define KF      64              /* the keyed batch's integer frame */
#define XS      KF              /* the batch's state, one vector a word */
#define CTR     (KF + 512)      /* the batch's block counters */
#define AREA    (KF + 544)
#define W(base, i) ((base) + 32 * (i))

/* x = rotl32(x, n) through scratch t. */
.macro ROTL n, x, t
        vpslld  $\n, %ymm\x, %ymm\t
        vpsrld  $(32 - \n), %ymm\x, %ymm\x
        vpor    %ymm\t, %ymm\x, %ymm\x
.endm

/*
 * Single path: sixteen words in registers except word 11, which stays in
 * the frame and is updated through ymm11, also the rotate scratch.  Four
 * quarter rounds interleaved step by step.
 */
.macro QR4 a0,b0,c0,d0, a1,b1,c1,d1, a2,b2,c2,d2, a3,b3,d3
        vpaddd  %ymm\b0, %ymm\a0, %ymm\a0
        vpaddd  %ymm\b1, %ymm\a1, %ymm\a1
        vpaddd  %ymm\b2, %ymm\a2, %ymm\a2
        vpaddd  %ymm\b3, %ymm\a3, %ymm\a3
        vpxor   %ymm\a0, %ymm\d0, %ymm\d0
        vpxor   %ymm\a1, %ymm\d1, %ymm\d1
        vpxor   %ymm\a2, %ymm\d2, %ymm\d2
        vpxor   %ymm\a3, %ymm\d3, %ymm\d3
        vpshufb .Lrot16(%rip), %ymm\d0, %ymm\d0
        vpshufb .Lrot16(%rip), %ymm\d1, %ymm\d1
        vpshufb .Lrot16(%rip), %ymm\d2, %ymm\d2
        vpshufb .Lrot16(%rip), %ymm\d3, %ymm\d3

        vpaddd  %ymm\d0, %ymm\c0, %ymm\c0
        vpaddd  %ymm\d1, %ymm\c1, %ymm\c1
        vpaddd  %ymm\d2, %ymm\c2, %ymm\c2
        vpaddd  W(XS, 11)(%rsp), %ymm\d3, %ymm11
        vmovdqa %ymm11, W(XS, 11)(%rsp)
        vpxor   %ymm\c0, %ymm\b0, %ymm\b0
        vpxor   %ymm\c1, %ymm\b1, %ymm\b1
        vpxor   %ymm\c2, %ymm\b2, %ymm\b2
        vpxor   %ymm11, %ymm\b3, %ymm\b3
        ROTL    12, \b0, 11
        ROTL    12, \b1, 11
        ROTL    12, \b2, 11
        ROTL    12, \b3, 11

        vpaddd  %ymm\b0, %ymm\a0, %ymm\a0
        vpaddd  %ymm\b1, %ymm\a1, %ymm\a1
        vpaddd  %ymm\b2, %ymm\a2, %ymm\a2
        vpaddd  %ymm\b3, %ymm\a3, %ymm\a3
        vpxor   %ymm\a0, %ymm\d0, %ymm\d0
        vpxor   %ymm\a1, %ymm\d1, %ymm\d1
        vpxor   %ymm\a2, %ymm\d2, %ymm\d2
        vpxor   %ymm\a3, %ymm\d3, %ymm\d3
        vpshufb .Lrot8(%rip), %ymm\d0, %ymm\d0
        vpshufb .Lrot8(%rip), %ymm\d1, %ymm\d1
        vpshufb .Lrot8(%rip), %ymm\d2, %ymm\d2
        vpshufb .Lrot8(%rip), %ymm\d3, %ymm\d3

        vpaddd  %ymm\d0, %ymm\c0, %ymm\c0
        vpaddd  %ymm\d1, %ymm\c1, %ymm\c1
        vpaddd  %ymm\d2, %ymm\c2, %ymm\c2
        vpaddd  W(XS, 11)(%rsp), %ymm\d3, %ymm11
        vmovdqa %ymm11, W(XS, 11)(%rsp)
        vpxor   %ymm\c0, %ymm\b0, %ymm\b0
        vpxor   %ymm\c1, %ymm\b1, %ymm\b1
        vpxor   %ymm\c2, %ymm\b2, %ymm\b2
        vpxor   %ymm11, %ymm\b3, %ymm\b3
        ROTL    7, \b0, 11
        ROTL    7, \b1, 11
        ROTL    7, \b2, 11
        ROTL    7, \b3, 11
.endm

/*
 * Transpose four registers a, b, c, d (words w..w+3, one block per lane)
 * inside each 128-bit lane, with scratch t.  Afterwards the low lane of c
 * holds block 0's words w..w+3 and its high lane block 4's; likewise a
 * blocks 1/5, t blocks 2/6, d blocks 3/7.  b is free.
 */
.macro TRANSPOSE4 a, b, c, d, t
        vpunpckldq %ymm\b, %ymm\a, %ymm\t       /* a0 b0 a1 b1 */
        vpunpckhdq %ymm\b, %ymm\a, %ymm\b       /* a2 b2 a3 b3 */
        vpunpckldq %ymm\d, %ymm\c, %ymm\a       /* c0 d0 c1 d1 */
        vpunpckhdq %ymm\d, %ymm\c, %ymm\d       /* c2 d2 c3 d3 */
        vpunpcklqdq %ymm\a, %ymm\t, %ymm\c      /* a0 b0 c0 d0 */
        vpunpckhqdq %ymm\a, %ymm\t, %ymm\a      /* a1 b1 c1 d1 */
        vpunpcklqdq %ymm\d, %ymm\b, %ymm\t      /* a2 b2 c2 d2 */
        vpunpckhqdq %ymm\d, %ymm\b, %ymm\d      /* a3 b3 c3 d3 */
.endm

/*
 * Store the 16-byte pieces at byte offset off of blocks 0..rcx-1 (rcx is
 * 1..8); r0..r3 hold blocks 0..3 in their low lanes, 4..7 in their high
 * lanes.  For a full batch the branches always fall through and are
 * perfectly predicted; in a partial batch they keep the stores inside out[].
 */
.macro STORE8 off, r0, r1, r2, r3
        vmovdqu %xmm\r0, \off(%rdi)
        cmpl    $1, %ecx
        je      9f
        vmovdqu %xmm\r1, 64+\off(%rdi)
        cmpl    $2, %ecx
        je      9f
        vmovdqu %xmm\r2, 128+\off(%rdi)
        cmpl    $3, %ecx
        je      9f
        vmovdqu %xmm\r3, 192+\off(%rdi)
        cmpl    $4, %ecx
        je      9f
        vextracti128 $1, %ymm\r0, 256+\off(%rdi)
        cmpl    $5, %ecx
        je      9f
        vextracti128 $1, %ymm\r1, 320+\off(%rdi)
        cmpl    $6, %ecx
        je      9f
        vextracti128 $1, %ymm\r2, 384+\off(%rdi)
        cmpl    $7, %ecx
        je      9f
        vextracti128 $1, %ymm\r3, 448+\off(%rdi)
9:
.endm

/* r += st[w] in every lane (the batch's counters for w = 12), through
 * scratch t. */
.macro FFW w, r, t
        .if \w == 12
        vpaddd  CTR(%rsp), %ymm\r, %ymm\r
        .else
        vpbroadcastd 4*\w(%rsi), %ymm\t
        vpaddd  %ymm\t, %ymm\r, %ymm\r
        .endif
.endm

/*
 * Feed-forward, transpose and store the 8-block batch whose final state
 * is in the frame at XS and whose counters are in CTR, to out.  rcx =
 * number of its blocks to store.
 */
.macro OUTPUT
        .irp    g, 0, 1, 2, 3
        vmovdqa W(XS, 4 * \g)(%rsp), %ymm0
        vmovdqa W(XS, 4 * \g + 1)(%rsp), %ymm1
        vmovdqa W(XS, 4 * \g + 2)(%rsp), %ymm2
        vmovdqa W(XS, 4 * \g + 3)(%rsp), %ymm3
        FFW     (4 * \g), 0, 4
        FFW     (4 * \g + 1), 1, 5
        FFW     (4 * \g + 2), 2, 6
        FFW     (4 * \g + 3), 3, 7
        TRANSPOSE4 0, 1, 2, 3, 4
        STORE8  (16*\g), 2, 0, 4, 3
        .endr
.endm

/*
 * Row path (2..4 blocks): "horizontal" -- each 128-bit lane holds one row
 * of a block's 4x4 state (a = words 0..3, b = 4..7, c = 8..11,
 * d = 12..15), the low lane block k and the high lane block k + 1, so four
 * ymm registers are two blocks.  A column round is lane-wise arithmetic on
 * the rows and a diagonal round the same after rotating rows a, c and d
 * within each lane (vpshufd); leaving b, the row each round ends on, in
 * place keeps the shuffles off the dependency chain.  A block pair is one
 * chain of add, xor, rotate, too short to fill the vector pipes, so a
 * second pair (blocks 2 and 3) runs interleaved at little cost; below five
 * blocks this beats an 8-block vertical batch.  Register sets: ymm0-3 and
 * ymm4-7 the two pairs, ymm8-11 the input rows at the end, ymm12 and 13
 * rotate scratch, ymm14 and 15 the vpshufb patterns.
 *
 * x += y; z ^= x; z <<<= r, for each pair given (the second may be left
 * out).
 */
.macro YSTEP r, x0,y0,z0, x1,y1,z1
        vpaddd  %ymm\y0, %ymm\x0, %ymm\x0
        .ifnb   \x1
        vpaddd  %ymm\y1, %ymm\x1, %ymm\x1
        .endif
        vpxor   %ymm\x0, %ymm\z0, %ymm\z0
        .ifnb   \x1
        vpxor   %ymm\x1, %ymm\z1, %ymm\z1
        .endif
        YROT    \r, \z0, 12
        .ifnb   \x1
        YROT    \r, \z1, 13
        .endif
.endm

.macro YROT r, x, t
        .if \r == 16
        vpshufb %ymm14, %ymm\x, %ymm\x
        .elseif \r == 8
        vpshufb %ymm15, %ymm\x, %ymm\x
        .else
        vpslld  $\r, %ymm\x, %ymm\t
        vpsrld  $(32 - \r), %ymm\x, %ymm\x
        vpor    %ymm\t, %ymm\x, %ymm\x
        .endif
.endm

/* Rotate rows a, c, d of each pair given by ia, ic, id (vpshufd). */
.macro YSHUF ia, ic, id, a0,c0,d0, a1,c1,d1
        .irp    r, \a0, \a1
        .ifnb   \r
        vpshufd $\ia, %ymm\r, %ymm\r
        .endif
        .endr
        .irp    r, \c0, \c1
        .ifnb   \r
        vpshufd $\ic, %ymm\r, %ymm\r
        .endif
        .endr
        .irp    r, \d0, \d1
        .ifnb   \r
        vpshufd $\id, %ymm\r, %ymm\r
        .endif
        .endr
.endm

/*
 * One column round and one diagonal round.  Into the diagonal round, word
 * i of a moves to i + 1 (0x93), c to i - 1 (0x39) and d to i + 2 (0x4e):
 * position i then holds words i - 1, 4 + i, 8 + i + 1, 12 + i + 2, one
 * diagonal quarter round.  The inverse shuffles restore the columns.
 */
.macro YDROUND a0,b0,c0,d0, a1,b1,c1,d1
        YSTEP   16, \a0,\b0,\d0, \a1,\b1,\d1
        YSTEP   12, \c0,\d0,\b0, \c1,\d1,\b1
        YSTEP   8, \a0,\b0,\d0, \a1,\b1,\d1
        YSTEP   7, \c0,\d0,\b0, \c1,\d1,\b1
        YSHUF   0x93, 0x39, 0x4e, \a0,\c0,\d0, \a1,\c1,\d1
        YSTEP   16, \a0,\b0,\d0, \a1,\b1,\d1
        YSTEP   12, \c0,\d0,\b0, \c1,\d1,\b1
        YSTEP   8, \a0,\b0,\d0, \a1,\b1,\d1
        YSTEP   7, \c0,\d0,\b0, \c1,\d1,\b1
        YSHUF   0x39, 0x93, 0x4e, \a0,\c0,\d0, \a1,\c1,\d1
.endm

/* The 20 rounds of the row path; ecx counts double rounds. */
.macro YROUNDS q:vararg
        movl    $10, %ecx
        .p2align 4
1:
        YDROUND \q
        decl    %ecx
        jnz     1b
.endm

/* Store block j from the low (L = 0) or high (L = 1) lanes of a..d. */
.macro YSTORE j, L, a, b, c, d
        .if \L == 0
        vmovdqu %xmm\a, 64*\j(%rdi)
        vmovdqu %xmm\b, 64*\j+16(%rdi)
        vmovdqu %xmm\c, 64*\j+32(%rdi)
        vmovdqu %xmm\d, 64*\j+48(%rdi)
        .else
        vextracti128 $1, %ymm\a, 64*\j(%rdi)
        vextracti128 $1, %ymm\b, 64*\j+16(%rdi)
        vextracti128 $1, %ymm\c, 64*\j+32(%rdi)
        vextracti128 $1, %ymm\d, 64*\j+48(%rdi)
        .endif
.endm

/*
 * Single path, set-up: the words of st in every lane (word 11 also in the
 * frame, the counters from CTR); after the rounds, all words to the
 * frame for OUTPUT.
 */
.macro SINGLE_LOAD
        .irp    w, 0,1,2,3,4,5,6,7,8,9,10,11,13,14,15
        vpbroadcastd 4*\w(%rsi), %ymm\w
        .endr
        vmovdqa %ymm11, W(XS, 11)(%rsp)
        vmovdqa CTR(%rsp), %ymm12
.endm
.macro SINGLE_COLUMNS
        QR4     0,4,8,12, 1,5,9,13, 2,6,10,14, 3,7,15
.endm
.macro SINGLE_DIAGONALS
        QR4     0,5,10,15, 2,7,8,13, 3,4,9,14, 1,6,12
.endm
.macro SINGLE_SPILL
        .irp    w, 0,1,2,3,4,5,6,7,8,9,10,12,13,14,15
        vmovdqa %ymm\w, W(XS, \w)(%rsp)
        .endr
.endm

/* rcx = min(rdx - off, 8): blocks of a batch to store (rdx > off). */
.macro BATCH_COUNT off
        leaq    -\off(%rdx), %rcx
        movl    $8, %r8d
        cmpq    %r8, %rcx
        cmovaq  %r8, %rcx
.endm

/*
 * The vector batches for rdx >= 1 blocks to out = rdi from st = rsi, the
 * counters of the first eight in CTR, the aligned frame in place: one
 * 8-block state at a time, in registers but for word 11 (a final batch of
 * 1..7 computes eight and stores those asked for).  Ends at
 * .Lbatches_done\sfx (\sfx keeps the labels of an expansion apart).
 */
.macro BATCHES sfx
        .p2align 4
.Lsingle\sfx:
        SINGLE_LOAD
        movl    $10, %r8d
        .p2align 4
.Lsingle_dround\sfx:
        SINGLE_COLUMNS
        SINGLE_DIAGONALS
        decl    %r8d
        jnz     .Lsingle_dround\sfx
        SINGLE_SPILL
        BATCH_COUNT 0
        OUTPUT
        subq    %rcx, %rdx
        jz      .Lbatches_done\sfx
        addq    $512, %rdi
        vmovdqa CTR(%rsp), %ymm0
        vpaddd  .Leight(%rip), %ymm0, %ymm0
        vmovdqa %ymm0, CTR(%rsp)
        jmp     .Lsingle\sfx
.Lbatches_done\sfx:
.endm

/*
 * Zero the vector part of the work area (KF .. AREA) and every ymm
 * register: nothing derived from the key may outlive the call.
 */
.macro WIPE_BATCHES
        vpxor   %xmm0, %xmm0, %xmm0
        .irp    i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16
        vmovdqa %ymm0, KF + 32 * \i(%rsp)
        .endr
        vzeroall
.endm

FUNC_BEGIN(chacharng_chacha_blocks_avx2)
        LANDING_PAD
        testq   %rdx, %rdx
        jz      .Lreturn
        cmpq    $1, %rdx
        je      .Lblock1
        cmpq    $4, %rdx
        jbe     .Lrows

        /* r11 keeps the entry rsp (and is the CFA base meanwhile), so no
         * callee-saved register is needed for the aligned frame. */
        movq    %rsp, %r11
        .cfi_def_cfa_register %r11
        andq    $-32, %rsp
        subq    $AREA, %rsp

        vpbroadcastd 48(%rsi), %ymm0
        vpaddd  .Liota(%rip), %ymm0, %ymm0
        vmovdqa %ymm0, CTR(%rsp)

        BATCHES _main
        /* The first KF bytes are the keyed batch's; this entry leaves them
         * untouched. */
        WIPE_BATCHES

        movq    %r11, %rsp
        .cfi_def_cfa_register %rsp
.Lreturn:
        ret

        /* 2..4 blocks: the row path, in registers only (no frame). */
.Lrows:
        vbroadcasti128 0(%rsi), %ymm8
        vbroadcasti128 16(%rsi), %ymm9
        vbroadcasti128 32(%rsi), %ymm10
        vbroadcasti128 48(%rsi), %ymm11
        vpaddd  .Lrowctr(%rip), %ymm11, %ymm11
        vmovdqa .Lrot16(%rip), %ymm14
        vmovdqa .Lrot8(%rip), %ymm15
        vmovdqa %ymm8, %ymm0
        vmovdqa %ymm9, %ymm1
        vmovdqa %ymm10, %ymm2
        vmovdqa %ymm11, %ymm3
        cmpl    $2, %edx
        jbe     .Lrows1
        vmovdqa %ymm8, %ymm4
        vmovdqa %ymm9, %ymm5
        vmovdqa %ymm10, %ymm6
        vpaddd  .Lrowtwo(%rip), %ymm11, %ymm7
        YROUNDS 0,1,2,3, 4,5,6,7
        vpaddd  %ymm8, %ymm4, %ymm4
        vpaddd  %ymm9, %ymm5, %ymm5
        vpaddd  %ymm10, %ymm6, %ymm6
        vpaddd  .Lrowtwo(%rip), %ymm11, %ymm12
        vpaddd  %ymm12, %ymm7, %ymm7
        YSTORE  2, 0, 4, 5, 6, 7
        cmpl    $3, %edx
        je      .Lrows_out
        YSTORE  3, 1, 4, 5, 6, 7
        jmp     .Lrows_out
.Lrows1:
        YROUNDS 0,1,2,3
.Lrows_out:
        vpaddd  %ymm8, %ymm0, %ymm0
        vpaddd  %ymm9, %ymm1, %ymm1
        vpaddd  %ymm10, %ymm2, %ymm2
        vpaddd  %ymm11, %ymm3, %ymm3
        YSTORE  0, 0, 0, 1, 2, 3
        YSTORE  1, 1, 0, 1, 2, 3        /* at least 2 blocks here */
        /* ymm0-15 held key words and keystream. */
        vzeroall
        ret

        /* One block: the integer registers (chacha_block_x86_64.h). */
.Lblock1:
        CHACHA_BLOCK1_GPR
FUNC_END(chacharng_chacha_blocks_avx2)

/*
 * void chacharng_chacha_blocks_key_avx2(uint8_t *key,          rdi
 *                                       uint8_t *out,          rsi
 *                                       const uint32_t st[16], rdx
 *                                       size_t nblocks);       rcx
 *
 * The keyed batch of chacha.h: block st[12] to key[0..64), nblocks blocks
 * from st[12] + 1 to out.  The key block runs on the integer registers
 * (chacha_block_x86_64.h) inside the rounds of the single-path state that
 * makes blocks st[12] + 1 .. st[12] + 8: the vector rounds use no general
 * register, and the integer ALUs they leave idle run the key block's
 * chain beside them.  Blocks past the eighth come from a call of the main
 * kernel (.Lkey_rest), so no request size pays for the key block alone;
 * for nblocks == 0 it runs alone.
 *
 * Frame: rbx, rbp and r12-r15 pushed (CFI follows every push), then the
 * 32-byte aligned work area of the main kernel, whose first KF bytes hold
 * the integer block's frame and the saved pointers, count and rsp
 * (K_*).  While the area is in place the CFA is read from K_RSP (a DWARF
 * expression: every general register is a state word then).  Everything
 * below the caller's rsp that the call wrote is zeroed before returning
 * (the main kernel wipes its own frame), and so are the registers that
 * held key or keystream; out, st and nblocks-derived values may remain in
 * rcx, rdx, rsi, rdi and r8.
 */
#define K_RSP   56              /* rsp after the pushes */
/* The CFA is K_RSP's value + 56 (six pushes and the return address). */
#define K_CFA_FROM_FRAME                                                       \
        .cfi_escape 0x0f, 5, 0x77, K_RSP, 0x06, 0x23, 56

        .p2align 5
FUNC_BEGIN(chacharng_chacha_blocks_key_avx2)
        LANDING_PAD
        B1_PUSH
        movq    %rsp, %r11
        .cfi_def_cfa_register %r11
        andq    $-32, %rsp
        subq    $AREA, %rsp
        movq    %r11, K_RSP(%rsp)
        K_CFA_FROM_FRAME
        K_SAVE_ARGS
        testq   %rcx, %rcx
        jz      .Lkey_alone

        /* Counters st[12] + 1 .. st[12] + 8 for batch X (mod 2^32). */
        movq    %rdx, %rsi
        vpbroadcastd 48(%rsi), %ymm0
        vpaddd  .Liota1(%rip), %ymm0, %ymm0
        vmovdqa %ymm0, CTR(%rsp)
        SINGLE_LOAD
        movq    %rsi, %rbp
        B1_LOAD                         /* ebp counts double rounds */
        K_DROUNDS
        B1_FINISH                       /* key[0..64); rax = 0 */
        SINGLE_SPILL
        movq    K_ST(%rsp), %rsi
        movq    K_VOUT(%rsp), %rdi
        movq    K_N(%rsp), %rdx

        /* Blocks 1..8 of out: as many of them as asked for. */
        BATCH_COUNT 0
        OUTPUT
        cmpq    $8, %rdx
        ja      .Lkey_rest
        WIPE_BATCHES
        jmp     .Lkey_out

        /*
         * Blocks 9 on: a call of the main kernel on a copy of st with the
         * counter 9 on (mod 2^32), kept in the work area, which is wiped
         * after; the main kernel wipes its own frame.
         */
.Lkey_rest:
        vmovdqu 0(%rsi), %ymm0
        vmovdqu 32(%rsi), %ymm1
        vmovdqa %ymm0, XS(%rsp)
        vmovdqa %ymm1, XS + 32(%rsp)
        movl    48(%rsi), %eax
        addl    $9, %eax
        movl    %eax, XS + 48(%rsp)
        addq    $512, %rdi
        subq    $8, %rdx
        leaq    XS(%rsp), %rsi
        call    chacharng_chacha_blocks_avx2
        WIPE_BATCHES
        jmp     .Lkey_out

        /* No other block: the key block alone. */
.Lkey_alone:
        movq    %rdx, %rbp
        B1_BODY                         /* rax = 0 */

.Lkey_out:
        /* The saved pointers and count, then the saved rsp (read first:
         * the CFA moves to r11 meanwhile). */
        xorl    %eax, %eax
        movq    %rax, K_VOUT(%rsp)
        movq    %rax, K_N(%rsp)
        movq    %rax, K_ST(%rsp)
        movq    K_RSP(%rsp), %r11
        .cfi_def_cfa %r11, 56
        movq    %rax, K_RSP(%rsp)
        movq    %r11, %rsp
        .cfi_def_cfa %rsp, 56
        xorl    %r11d, %r11d
        B1_POP
        ret
FUNC_END(chacharng_chacha_blocks_key_avx2)

#endif
