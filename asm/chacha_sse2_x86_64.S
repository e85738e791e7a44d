/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ChaCha20 keystream kernel for x86_64, SSE2 only: the x86_64 baseline, so
 * no pshufb and nothing newer (RFC 8439 section 2.3: 20 rounds, 64-byte
 * blocks, little-endian words).
 *
 * void chacharng_chacha_blocks_sse2(uint8_t *out,          rdi
 *                                   const uint32_t st[16], rsi
 *                                   size_t nblocks);       rdx
 *
 * Writes nblocks * 64 bytes of keystream to out (any alignment, stored with
 * movdqu) for block counters st[12], st[12] + 1, ... modulo 2^32; st[13]
 * never receives a carry.  Reads only st[0..15] and the constant table
 * below, writes only out[0 .. nblocks * 64).  nblocks == 0 returns at once.
 * out must not overlap st (chacha.h: overlapping buffers are outside the
 * contract, and the kernels disagree on what they produce).
 *
 * Clobbers: rax, rcx, rdx, rsi, rdi, r8-r11, flags, xmm0-xmm15 (all
 * returned zeroed where they held key or keystream).  Stack use: none for
 * 2..3 blocks; for 1 block the integer path (chacha_block_x86_64.h) saves
 * rbx, rbp and r12-r15 with push/pop and keeps two state words and the two
 * pointers in a 32-byte frame; else a 584-byte frame (rsp - 584, 16-byte
 * aligned) holding, above 64 bytes that only the keyed batch below uses,
 * the input words broadcast to four lanes and the working state of a
 * 4-block batch.  CFI describes every frame, and every byte
 * left below the caller's rsp is overwritten with zeros before returning.
 *
 * Layout: "vertical" -- an xmm register holds one state word of four
 * consecutive blocks, so a quarter round is lane-wise arithmetic.
 * Rotations: by 16 with pshuflw/pshufhw (swap the 16-bit halves of each
 * word), the others with shift left, shift right and or.
 *
 * Batches:
 *   - a call for 1 block (absorb, the rekey block of a direct request):
 *     the integer registers (chacha_block_x86_64.h, no vector register):
 *     such a call is one dependency chain, and on cores with two-cycle
 *     vector operations (Zen 5) the one-cycle integer ALUs run it
 *     in about half the row path's time;
 *   - a call for 2..3 blocks: the row path below (one block as four row
 *     registers), all in registers: such calls are latency-bound, and a
 *     vertical batch would compute four;
 *   - 4 blocks and more: one 4-block state at a time, in registers but
 *     for word 11 (a "c" word in both column and diagonal rounds), kept
 *     in the frame so that a register is left for the rotate scratch.
 *     Two interleaved states (half their words in the frame, read as
 *     memory operands) had the best single time, but on a Zen 3 (AMD
 *     EPYC, family 25 model 1) sharing its core with other work their
 *     median was 1.13 to 1.34 times that of one state a batch, from 8
 *     blocks to 1024.
 * After the feed-forward a 4x4 word transpose per group of four words
 * turns columns into 16-byte pieces of blocks.  A partial batch computes
 * all its blocks but stores only those asked for (branching on the count),
 * so nothing outside out[] is written.  Counters are per-lane 32-bit paddd,
 * which wraps modulo 2^32 without carrying into word 13.
 *
 * On exit every xmm register is zeroed and the frame is wiped, as they
 * held key material and keystream.
 */
#include "asm_common.h"

/*
 * asm/chacha_ssse3_x86_64.S assembles this file again with
 * CHACHARNG_KERNEL_SSSE3 set: the same kernel with SSSE3's pshufb for the
 * rotations by 16 and by 8 (one instruction each, where SSE2 takes two
 * and four), as chacharng_chacha_blocks_ssse3 and _key_ssse3.  This
 * file's own object has no pshufb: SSE2 is the x86_64 baseline.
 */
#ifndef CHACHARNG_KERNEL_SSSE3
#define CHACHARNG_KERNEL_SSSE3 0
#endif
#if CHACHARNG_KERNEL_SSSE3
#define KERNEL_BLOCKS chacharng_chacha_blocks_ssse3
#define KERNEL_KEY chacharng_chacha_blocks_key_ssse3
#else
#define KERNEL_BLOCKS chacharng_chacha_blocks_sse2
#define KERNEL_KEY chacharng_chacha_blocks_key_sse2
#endif

#if defined(__x86_64__) && defined(__ELF__)

#include "chacha_block_x86_64.h"

        .section .rodata
        .p2align 4
/* Lane k of a batch uses counter base + k. */
.Liota:
        .long 0, 1, 2, 3
/* The keyed batch's batch X: the blocks after the key block. */
.Liota1:
        .long 1, 2, 3, 4
/* Counter distance between consecutive 4-block batches. */
.Lfour:
        .long 4, 4, 4, 4
/* Counter distance between consecutive blocks of the row path. */
.Lone:
        .long 1, 0, 0, 0
#if CHACHARNG_KERNEL_SSSE3
/* pshufb patterns: rotate every 32-bit word left by 16 / by 8 (memory
 * operands of a non-VEX instruction: 16-byte aligned). */
        .p2align 4
.Lrot16:
        .byte 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13
.Lrot8:
        .byte 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14
#endif

        .text

/*
 * Frame layout (offsets from rsp after the prologue).  The first 64 bytes
 * are the keyed batch's integer frame (chacha_block_x86_64.h's B1_C,
 * B1_OUT and B1_ST at 0..32, then K_*): the key block's rounds use them
 * beside the vector batch, whose words start above them.  Either entry
 * comes in with rsp 8 modulo 16 (the keyed one after six pushes), so a
 * frame of 16k + 8 bytes leaves it 16-byte aligned.
 */
#define KF      64              /* the keyed batch's integer frame */
#define BC      KF              /* st[i] in all four lanes; word 12 = counters */
#define XS      (KF + 256)      /* the batch's state, one vector a word */
#define FRAME   (KF + 520)      /* KF + 512 used + 8 for the alignment */
#define W(base, i) ((base) + 16 * (i))

/* x = rotl32(x, n) through scratch t (the SSSE3 build: by 8, one pshufb). */
.macro ROTL n, x, t
#if CHACHARNG_KERNEL_SSSE3
        .if \n == 8
        pshufb  .Lrot8(%rip), %xmm\x
        .exitm
        .endif
#endif
        movdqa  %xmm\x, %xmm\t
        pslld   $\n, %xmm\x
        psrld   $(32 - \n), %xmm\t
        por     %xmm\t, %xmm\x
.endm

/* x = rotl32(x, 16): swap the 16-bit halves of every word. */
.macro ROTL16 x
#if CHACHARNG_KERNEL_SSSE3
        pshufb  .Lrot16(%rip), %xmm\x
#else
        pshuflw $0xb1, %xmm\x, %xmm\x
        pshufhw $0xb1, %xmm\x, %xmm\x
#endif
.endm

/*
 * Single path: word i in xmm i, except word 11, which stays in the frame
 * and is updated through xmm11, also the rotate scratch (the live ranges
 * never overlap).  Four quarter rounds interleaved step by step; the
 * fourth one's c word is word 11.
 */
.macro QR4 a0,b0,c0,d0, a1,b1,c1,d1, a2,b2,c2,d2, a3,b3,d3
        paddd   %xmm\b0, %xmm\a0
        paddd   %xmm\b1, %xmm\a1
        paddd   %xmm\b2, %xmm\a2
        paddd   %xmm\b3, %xmm\a3
        pxor    %xmm\a0, %xmm\d0
        pxor    %xmm\a1, %xmm\d1
        pxor    %xmm\a2, %xmm\d2
        pxor    %xmm\a3, %xmm\d3
        ROTL16  \d0
        ROTL16  \d1
        ROTL16  \d2
        ROTL16  \d3

        paddd   %xmm\d0, %xmm\c0
        paddd   %xmm\d1, %xmm\c1
        paddd   %xmm\d2, %xmm\c2
        movdqa  %xmm\d3, %xmm11
        paddd   W(XS, 11)(%rsp), %xmm11
        movdqa  %xmm11, W(XS, 11)(%rsp)
        pxor    %xmm\c0, %xmm\b0
        pxor    %xmm\c1, %xmm\b1
        pxor    %xmm\c2, %xmm\b2
        pxor    %xmm11, %xmm\b3
        ROTL    12, \b0, 11
        ROTL    12, \b1, 11
        ROTL    12, \b2, 11
        ROTL    12, \b3, 11

        paddd   %xmm\b0, %xmm\a0
        paddd   %xmm\b1, %xmm\a1
        paddd   %xmm\b2, %xmm\a2
        paddd   %xmm\b3, %xmm\a3
        pxor    %xmm\a0, %xmm\d0
        pxor    %xmm\a1, %xmm\d1
        pxor    %xmm\a2, %xmm\d2
        pxor    %xmm\a3, %xmm\d3
        ROTL    8, \d0, 11
        ROTL    8, \d1, 11
        ROTL    8, \d2, 11
        ROTL    8, \d3, 11

        paddd   %xmm\d0, %xmm\c0
        paddd   %xmm\d1, %xmm\c1
        paddd   %xmm\d2, %xmm\c2
        movdqa  %xmm\d3, %xmm11
        paddd   W(XS, 11)(%rsp), %xmm11
        movdqa  %xmm11, W(XS, 11)(%rsp)
        pxor    %xmm\c0, %xmm\b0
        pxor    %xmm\c1, %xmm\b1
        pxor    %xmm\c2, %xmm\b2
        pxor    %xmm11, %xmm\b3
        ROTL    7, \b0, 11
        ROTL    7, \b1, 11
        ROTL    7, \b2, 11
        ROTL    7, \b3, 11
.endm

/*
 * Transpose four registers a, b, c, d (words w..w+3 of blocks 0..3, one
 * block per lane) with scratch t.  Afterwards block 0's words w..w+3 are
 * in a, block 1's in d, block 2's in t, block 3's in c; b is free.
 */
.macro TRANSPOSE4 a, b, c, d, t
        movdqa  %xmm\a, %xmm\t
        punpckldq %xmm\b, %xmm\a        /* a0 b0 a1 b1 */
        punpckhdq %xmm\b, %xmm\t        /* a2 b2 a3 b3 */
        movdqa  %xmm\c, %xmm\b
        punpckldq %xmm\d, %xmm\c        /* c0 d0 c1 d1 */
        punpckhdq %xmm\d, %xmm\b        /* c2 d2 c3 d3 */
        movdqa  %xmm\a, %xmm\d
        punpcklqdq %xmm\c, %xmm\a       /* a0 b0 c0 d0 */
        punpckhqdq %xmm\c, %xmm\d       /* a1 b1 c1 d1 */
        movdqa  %xmm\t, %xmm\c
        punpcklqdq %xmm\b, %xmm\t       /* a2 b2 c2 d2 */
        punpckhqdq %xmm\b, %xmm\c       /* a3 b3 c3 d3 */
.endm

/*
 * Store the 16-byte pieces at byte offset off of blocks 0..rcx-1 (rcx is
 * 1..4).  For a full batch the branches always fall through and are
 * perfectly predicted; in a partial batch they keep the stores inside out[].
 */
.macro STORE4 off, r0, r1, r2, r3
        movdqu  %xmm\r0, \off(%rdi)
        cmpl    $1, %ecx
        je      9f
        movdqu  %xmm\r1, 64+\off(%rdi)
        cmpl    $2, %ecx
        je      9f
        movdqu  %xmm\r2, 128+\off(%rdi)
        cmpl    $3, %ecx
        je      9f
        movdqu  %xmm\r3, 192+\off(%rdi)
9:
.endm

/*
 * Feed-forward, transpose and store the 4-block batch whose final state
 * is in the frame at XS and whose input words and counters are in BC, to
 * out.  rcx = number of its blocks to store.
 */
.macro OUTPUT
        .irp    g, 0, 1, 2, 3
        movdqa  W(XS, 4 * \g)(%rsp), %xmm0
        movdqa  W(XS, 4 * \g + 1)(%rsp), %xmm1
        movdqa  W(XS, 4 * \g + 2)(%rsp), %xmm2
        movdqa  W(XS, 4 * \g + 3)(%rsp), %xmm3
        paddd   W(BC, 4 * \g)(%rsp), %xmm0
        paddd   W(BC, 4 * \g + 1)(%rsp), %xmm1
        paddd   W(BC, 4 * \g + 2)(%rsp), %xmm2
        paddd   W(BC, 4 * \g + 3)(%rsp), %xmm3
        TRANSPOSE4 0, 1, 2, 3, 4
        STORE4  (16*\g), 0, 3, 4, 2
        .endr
.endm

/*
 * Row path (2..3 blocks): "horizontal" -- a block is four registers, one
 * row of the 4x4 state each (a = words 0..3, b = 4..7, c = 8..11,
 * d = 12..15), so a column round is lane-wise arithmetic on the rows and a
 * diagonal round is the same after rotating rows a, c and d across lanes
 * (pshufd).  Leaving b, the row each round ends on, where it is keeps the
 * shuffles off the dependency chain.  One block is a single chain (add,
 * xor, rotate, four times a round), too short to fill the vector pipes;
 * two or three blocks run interleaved in about the time of one, and below
 * four blocks this beats computing a full vertical batch of four.
 *
 * x += y; z ^= x; z <<<= r, for each block given (x, y, z register
 * numbers; blocks 1 and 2 may be left out).  xmm12..14 are the rotate
 * scratch of blocks 0..2.
 */
.macro HSTEP r, x0,y0,z0, x1,y1,z1, x2,y2,z2
        paddd   %xmm\y0, %xmm\x0
        .ifnb   \x1
        paddd   %xmm\y1, %xmm\x1
        .endif
        .ifnb   \x2
        paddd   %xmm\y2, %xmm\x2
        .endif
        pxor    %xmm\x0, %xmm\z0
        .ifnb   \x1
        pxor    %xmm\x1, %xmm\z1
        .endif
        .ifnb   \x2
        pxor    %xmm\x2, %xmm\z2
        .endif
        HROT    \r, \z0, 12
        .ifnb   \x1
        HROT    \r, \z1, 13
        .endif
        .ifnb   \x2
        HROT    \r, \z2, 14
        .endif
.endm

.macro HROT r, x, t
        .if \r == 16
        ROTL16  \x
        .else
        ROTL    \r, \x, \t
        .endif
.endm

/* Rotate rows a, c, d of each block given by ia, ic, id (pshufd). */
.macro HSHUF ia, ic, id, a0,c0,d0, a1,c1,d1, a2,c2,d2
        .irp    r, \a0, \a1, \a2
        .ifnb   \r
        pshufd  $\ia, %xmm\r, %xmm\r
        .endif
        .endr
        .irp    r, \c0, \c1, \c2
        .ifnb   \r
        pshufd  $\ic, %xmm\r, %xmm\r
        .endif
        .endr
        .irp    r, \d0, \d1, \d2
        .ifnb   \r
        pshufd  $\id, %xmm\r, %xmm\r
        .endif
        .endr
.endm

/*
 * One column round and one diagonal round.  Into the diagonal round, lane
 * i of a moves to i + 1 (0x93), c to i - 1 (0x39) and d to i + 2 (0x4e):
 * lane i then holds words i - 1, 4 + i, 8 + i + 1, 12 + i + 2, one
 * diagonal quarter round.  The inverse shuffles restore the columns.
 */
.macro HDROUND a0,b0,c0,d0, a1,b1,c1,d1, a2,b2,c2,d2
        HSTEP   16, \a0,\b0,\d0, \a1,\b1,\d1, \a2,\b2,\d2
        HSTEP   12, \c0,\d0,\b0, \c1,\d1,\b1, \c2,\d2,\b2
        HSTEP   8, \a0,\b0,\d0, \a1,\b1,\d1, \a2,\b2,\d2
        HSTEP   7, \c0,\d0,\b0, \c1,\d1,\b1, \c2,\d2,\b2
        HSHUF   0x93, 0x39, 0x4e, \a0,\c0,\d0, \a1,\c1,\d1, \a2,\c2,\d2
        HSTEP   16, \a0,\b0,\d0, \a1,\b1,\d1, \a2,\b2,\d2
        HSTEP   12, \c0,\d0,\b0, \c1,\d1,\b1, \c2,\d2,\b2
        HSTEP   8, \a0,\b0,\d0, \a1,\b1,\d1, \a2,\b2,\d2
        HSTEP   7, \c0,\d0,\b0, \c1,\d1,\b1, \c2,\d2,\b2
        HSHUF   0x39, 0x93, 0x4e, \a0,\c0,\d0, \a1,\c1,\d1, \a2,\c2,\d2
.endm

/* The 20 rounds of the row path; ecx counts double rounds. */
.macro HROUNDS q:vararg
        movl    $10, %ecx
        .p2align 4
1:
        HDROUND \q
        decl    %ecx
        jnz     1b
.endm

/*
 * Feed-forward and store block j (rows in registers a, b, c, d): its input
 * is st[] with j added to the counter (xmm15 = .Lone once j > 0; paddd
 * wraps modulo 2^32 in that lane alone).  st[] may be unaligned.
 */
.macro HOUT j, a, b, c, d
        movdqu  0(%rsi), %xmm12
        movdqu  16(%rsi), %xmm13
        movdqu  32(%rsi), %xmm14
        paddd   %xmm12, %xmm\a
        paddd   %xmm13, %xmm\b
        paddd   %xmm14, %xmm\c
        movdqu  48(%rsi), %xmm12
        .rept   \j
        paddd   %xmm15, %xmm12
        .endr
        paddd   %xmm12, %xmm\d
        movdqu  %xmm\a, 64*\j(%rdi)
        movdqu  %xmm\b, 64*\j+16(%rdi)
        movdqu  %xmm\c, 64*\j+32(%rdi)
        movdqu  %xmm\d, 64*\j+48(%rdi)
.endm

/*
 * Broadcast every input word at rsi to four lanes (BC), once per call;
 * the counters are st[12] + the lanes of table ctr.
 */
.macro BROADCAST ctr
        movdqu  0(%rsi), %xmm0
        movdqu  16(%rsi), %xmm1
        movdqu  32(%rsi), %xmm2
        movdqu  48(%rsi), %xmm3
        .irp    r, 0, 1, 2, 3
        pshufd  $0x00, %xmm\r, %xmm4
        pshufd  $0x55, %xmm\r, %xmm5
        pshufd  $0xaa, %xmm\r, %xmm6
        pshufd  $0xff, %xmm\r, %xmm7
        movdqa  %xmm4, W(BC, 4 * \r)(%rsp)
        movdqa  %xmm5, W(BC, 4 * \r + 1)(%rsp)
        movdqa  %xmm6, W(BC, 4 * \r + 2)(%rsp)
        movdqa  %xmm7, W(BC, 4 * \r + 3)(%rsp)
        .endr
        movdqa  W(BC, 12)(%rsp), %xmm4
        paddd   \ctr(%rip), %xmm4
        movdqa  %xmm4, W(BC, 12)(%rsp)
.endm

/*
 * Single path, set-up: the input words from BC (word 11 also in the
 * frame); after the rounds, all words to the frame for OUTPUT.
 */
.macro SINGLE_LOAD
        .irp    w, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
        movdqa  W(BC, \w)(%rsp), %xmm\w
        .endr
        movdqa  %xmm11, W(XS, 11)(%rsp)
.endm
.macro SINGLE_COLUMNS
        QR4     0,4,8,12, 1,5,9,13, 2,6,10,14, 3,7,15
.endm
.macro SINGLE_DIAGONALS
        QR4     0,5,10,15, 2,7,8,13, 3,4,9,14, 1,6,12
.endm
.macro SINGLE_SPILL
        .irp    w, 0,1,2,3,4,5,6,7,8,9,10,12,13,14,15
        movdqa  %xmm\w, W(XS, \w)(%rsp)
        .endr
.endm

/* rcx = min(rdx - off, 4): blocks of a batch to store (rdx > off). */
.macro BATCH_COUNT off
        leaq    -\off(%rdx), %rcx
        movl    $4, %r8d
        cmpq    %r8, %rcx
        cmovaq  %r8, %rcx
.endm

/*
 * The vector batches for rdx >= 1 blocks to out = rdi, the input words
 * and the first counters in BC: one 4-block state at a time, in
 * registers but for word 11 (a final batch of 1..3 computes four and
 * stores those asked for).  Ends at .Lbatches_done\sfx (\sfx keeps the
 * labels of an expansion apart).
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
        addq    $256, %rdi
        movdqa  W(BC, 12)(%rsp), %xmm0
        paddd   .Lfour(%rip), %xmm0
        movdqa  %xmm0, W(BC, 12)(%rsp)
        jmp     .Lsingle\sfx
.Lbatches_done\sfx:
.endm

/*
 * Zero every xmm register and the vector part of the frame (KF .. KF +
 * 512): nothing derived from the key may outlive the call.
 */
.macro WIPE_BATCHES
        .irp    i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
        pxor    %xmm\i, %xmm\i
        .endr
        .irp    i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
        movdqa  %xmm0, KF + 16 * \i(%rsp)
        movdqa  %xmm0, KF + 256 + 16 * \i(%rsp)
        .endr
.endm

FUNC_BEGIN(KERNEL_BLOCKS)
        LANDING_PAD
        testq   %rdx, %rdx
        jz      .Lreturn
        cmpq    $1, %rdx
        je      .Lblock1
        cmpq    $3, %rdx
        jbe     .Lrows

        subq    $FRAME, %rsp
        .cfi_adjust_cfa_offset FRAME
        BROADCAST .Liota
        BATCHES _main
        /* The first KF bytes are the keyed batch's; this entry leaves them
         * untouched. */
        WIPE_BATCHES
        addq    $FRAME, %rsp
        .cfi_adjust_cfa_offset -FRAME
.Lreturn:
        ret

        /* 2..3 blocks: the row path, in registers only (no frame). */
.Lrows:
        movdqu  0(%rsi), %xmm0
        movdqu  16(%rsi), %xmm1
        movdqu  32(%rsi), %xmm2
        movdqu  48(%rsi), %xmm3
        movdqa  .Lone(%rip), %xmm15
        movdqa  %xmm0, %xmm4
        movdqa  %xmm1, %xmm5
        movdqa  %xmm2, %xmm6
        movdqa  %xmm3, %xmm7
        paddd   %xmm15, %xmm7
        cmpl    $2, %edx
        je      .Lrows2
        movdqa  %xmm0, %xmm8
        movdqa  %xmm1, %xmm9
        movdqa  %xmm2, %xmm10
        movdqa  %xmm7, %xmm11
        paddd   %xmm15, %xmm11
        HROUNDS 0,1,2,3, 4,5,6,7, 8,9,10,11
        HOUT    2, 8, 9, 10, 11
        jmp     .Lrows_out1
.Lrows2:
        HROUNDS 0,1,2,3, 4,5,6,7
.Lrows_out1:
        HOUT    1, 4, 5, 6, 7
        HOUT    0, 0, 1, 2, 3
        .irp    i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
        pxor    %xmm\i, %xmm\i
        .endr
        ret

        /* One block: the integer registers (chacha_block_x86_64.h). */
.Lblock1:
        CHACHA_BLOCK1_GPR
FUNC_END(KERNEL_BLOCKS)

/*
 * void chacharng_chacha_blocks_key_sse2(uint8_t *key,          rdi
 *                                       uint8_t *out,          rsi
 *                                       const uint32_t st[16], rdx
 *                                       size_t nblocks);       rcx
 *
 * The keyed batch of chacha.h: block st[12] to key[0..64), nblocks blocks
 * from st[12] + 1 to out.  The key block runs on the integer registers
 * (chacha_block_x86_64.h) inside the rounds of the single-path state that
 * makes blocks st[12] + 1 .. st[12] + 4: the vector rounds use no general
 * register, and the integer ALUs they leave idle run the key block's
 * chain beside them.  Blocks past the fourth come from a call of the main
 * kernel (.Lkey_rest), so no request size pays for the key block alone;
 * for nblocks == 0 it runs alone.
 *
 * Frame: rbx, rbp and r12-r15 pushed, then the main kernel's frame, whose
 * first KF bytes hold the integer block's frame and the saved pointers
 * and count (K_*); CFI describes every step.  Everything below the
 * caller's rsp that the call wrote is zeroed before returning (the main
 * kernel wipes its own frame), and so are the registers that held key or
 * keystream; out, st and nblocks-derived
 * values may remain in rcx, rdx, rsi, rdi and r8.
 */

        .p2align 5
FUNC_BEGIN(KERNEL_KEY)
        LANDING_PAD
        B1_PUSH
        subq    $FRAME, %rsp
        .cfi_adjust_cfa_offset FRAME
        K_SAVE_ARGS
        movq    %rdx, %rbp
        testq   %rcx, %rcx
        jz      .Lkey_alone

        /* Counters st[12] + 1 .. st[12] + 4 for batch X (mod 2^32). */
        movq    %rdx, %rsi
        BROADCAST .Liota1
        SINGLE_LOAD
        B1_LOAD                         /* ebp counts double rounds */
        K_DROUNDS
        B1_FINISH                       /* key[0..64); rax = 0 */
        SINGLE_SPILL
        movq    K_VOUT(%rsp), %rdi
        movq    K_N(%rsp), %rdx

        /* Blocks 1..4 of out: as many of them as asked for. */
        BATCH_COUNT 0
        OUTPUT
        cmpq    $4, %rdx
        ja      .Lkey_rest
        WIPE_BATCHES
        jmp     .Lkey_out

        /*
         * Blocks 5 on: a call of the main kernel on a copy of st with the
         * counter 5 on (mod 2^32), kept in the frame, which is wiped
         * after; the main kernel wipes its own.  rsp is 16-byte aligned
         * here, as a call expects.
         */
.Lkey_rest:
        movq    K_ST(%rsp), %rsi
        movdqu  0(%rsi), %xmm0
        movdqu  16(%rsi), %xmm1
        movdqu  32(%rsi), %xmm2
        movdqu  48(%rsi), %xmm3
        movdqa  %xmm0, XS(%rsp)
        movdqa  %xmm1, XS + 16(%rsp)
        movdqa  %xmm2, XS + 32(%rsp)
        movdqa  %xmm3, XS + 48(%rsp)
        movl    48(%rsi), %eax
        addl    $5, %eax
        movl    %eax, XS + 48(%rsp)
        addq    $256, %rdi
        subq    $4, %rdx
        leaq    XS(%rsp), %rsi
        call    KERNEL_BLOCKS
        WIPE_BATCHES
        jmp     .Lkey_out

        /* No other block: the key block alone. */
.Lkey_alone:
        B1_BODY                         /* rax = 0 */

.Lkey_out:
        xorl    %eax, %eax
        movq    %rax, K_VOUT(%rsp)
        movq    %rax, K_N(%rsp)
        movq    %rax, K_ST(%rsp)
        addq    $FRAME, %rsp
        .cfi_adjust_cfa_offset -FRAME
        B1_POP
        ret
FUNC_END(KERNEL_KEY)

#endif
