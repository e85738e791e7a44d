/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One ChaCha20 block in the general-purpose registers, shared by the x86_64
 * kernels (SSE2, AVX2, AVX-512) for their one-block calls: absorb and the
 * rekey block of a direct request.  Such a call is nothing but the chain of
 * 20 rounds; on cores where a dependent vector operation takes two cycles
 * (Zen 5) a row-layout vector path pays about twice what the same
 * chain costs on the one-cycle integer ALUs.  No vector register is used
 * (so the SSE2 kernel stays SSE2 and no vzeroupper is needed here).
 *
 * The parts (B1_PUSH, B1_LOAD, B1_COLUMNS, B1_DIAGONALS, B1_FINISH,
 * B1_POP) also let a kernel run the block's rounds between those of a
 * vector batch (the keyed batches): the vector rounds use no general
 * register, so the two chains overlap.
 *
 * Include after asm_common.h, inside the x86_64/ELF block, then expand
 * CHACHA_BLOCK1_GPR once, at a label the kernel jumps to when nblocks is 1,
 * where rsp is still the entry rsp (CFA = rsp + 8) and nothing has been
 * touched but flags.  In: rdi = out (any alignment), rsi = st[16].  Writes
 * out[0..64) = block st[12] (no counter arithmetic at all: one block needs
 * none), reads only st[0..15], and returns (the expansion ends in ret).
 *
 * Words: a = eax, ebx, ecx, edx; b = r8d-r11d; d = r12d-r15d; two words of
 * c in esi and edi, the other two in the frame, swapped in after each pair
 * of quarter rounds (fifteen usable registers cannot hold sixteen words and
 * a loop counter).  The two pairs of a half round are independent, so
 * renaming runs all four chains at once though the code has two at a time.
 *
 * Stack: rbx, rbp, r12-r15 are pushed and popped (CFI describes every
 * step), then a 32-byte frame holds two words of c and the two pointers.
 * Before returning, the clobbered registers that held state or keystream
 * (rax, rcx, rdx, rsi, rdi, r8-r11) are zeroed, and all 80 bytes used
 * below the caller's rsp (the frame and the six saved-register slots,
 * which hold the caller's values) are overwritten with zeros.
 */
#ifndef CHACHARNG_CHACHA_BLOCK_X86_64_H
#define CHACHARNG_CHACHA_BLOCK_X86_64_H

/* Frame above the six saved registers (offsets from rsp). */
#define B1_C(i) (4 * ((i) - 8)) /* words 8..11 while out of esi/edi */
#define B1_OUT 16
#define B1_ST 24
#define B1_FRAME 32
#define B1_SAVED 48             /* rbx, rbp, r12-r15 */

/* Two independent quarter rounds, interleaved. */
.macro B1_QR2 a0,b0,c0,d0, a1,b1,c1,d1
        addl    \b0, \a0
        addl    \b1, \a1
        xorl    \a0, \d0
        xorl    \a1, \d1
        roll    $16, \d0
        roll    $16, \d1
        addl    \d0, \c0
        addl    \d1, \c1
        xorl    \c0, \b0
        xorl    \c1, \b1
        roll    $12, \b0
        roll    $12, \b1
        addl    \b0, \a0
        addl    \b1, \a1
        xorl    \a0, \d0
        xorl    \a1, \d1
        roll    $8, \d0
        roll    $8, \d1
        addl    \d0, \c0
        addl    \d1, \c1
        xorl    \c0, \b0
        xorl    \c1, \b1
        roll    $7, \b0
        roll    $7, \b1
.endm

/* Save rbx, rbp and r12-r15 (CFI follows every push). */
.macro B1_PUSH
        pushq   %rbx
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %rbx, 0
        pushq   %rbp
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %rbp, 0
        pushq   %r12
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %r12, 0
        pushq   %r13
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %r13, 0
        pushq   %r14
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %r14, 0
        pushq   %r15
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %r15, 0
.endm

/*
 * Restore them; then the six saved slots, now below rsp (a leaf may write
 * there), which held the caller's registers, get rax, which must be 0.
 */
.macro B1_POP
        popq    %r15
        .cfi_adjust_cfa_offset -8
        .cfi_restore %r15
        popq    %r14
        .cfi_adjust_cfa_offset -8
        .cfi_restore %r14
        popq    %r13
        .cfi_adjust_cfa_offset -8
        .cfi_restore %r13
        popq    %r12
        .cfi_adjust_cfa_offset -8
        .cfi_restore %r12
        popq    %rbp
        .cfi_adjust_cfa_offset -8
        .cfi_restore %rbp
        popq    %rbx
        .cfi_adjust_cfa_offset -8
        .cfi_restore %rbx
        movq    %rax, -8(%rsp)
        movq    %rax, -16(%rsp)
        movq    %rax, -24(%rsp)
        movq    %rax, -32(%rsp)
        movq    %rax, -40(%rsp)
        movq    %rax, -48(%rsp)
.endm

/*
 * Load the state at rbp into the block's registers (c10, c11 into the
 * frame), with out and st already in the frame; then ebp counts double
 * rounds.
 */
.macro B1_LOAD
        movl    40(%rbp), %esi
        movl    44(%rbp), %edi
        movl    %esi, B1_C(10)(%rsp)
        movl    %edi, B1_C(11)(%rsp)
        movl    0(%rbp), %eax
        movl    4(%rbp), %ebx
        movl    8(%rbp), %ecx
        movl    12(%rbp), %edx
        movl    16(%rbp), %r8d
        movl    20(%rbp), %r9d
        movl    24(%rbp), %r10d
        movl    28(%rbp), %r11d
        movl    32(%rbp), %esi
        movl    36(%rbp), %edi
        movl    48(%rbp), %r12d
        movl    52(%rbp), %r13d
        movl    56(%rbp), %r14d
        movl    60(%rbp), %r15d
        movl    $10, %ebp
.endm

/* The column round: c8, c9 in esi, edi; then c10, c11. */
.macro B1_COLUMNS
        B1_QR2  %eax,%r8d,%esi,%r12d, %ebx,%r9d,%edi,%r13d
        movl    %esi, B1_C(8)(%rsp)
        movl    %edi, B1_C(9)(%rsp)
        movl    B1_C(10)(%rsp), %esi
        movl    B1_C(11)(%rsp), %edi
        B1_QR2  %ecx,%r10d,%esi,%r14d, %edx,%r11d,%edi,%r15d
.endm

/* The diagonal round: (0,5,10,15), (1,6,11,12) with c10, c11 still in
 * esi, edi; then (2,7,8,13), (3,4,9,14). */
.macro B1_DIAGONALS
        B1_QR2  %eax,%r9d,%esi,%r15d, %ebx,%r10d,%edi,%r12d
        movl    %esi, B1_C(10)(%rsp)
        movl    %edi, B1_C(11)(%rsp)
        movl    B1_C(8)(%rsp), %esi
        movl    B1_C(9)(%rsp), %edi
        B1_QR2  %ecx,%r11d,%esi,%r13d, %edx,%r8d,%edi,%r14d
.endm

/*
 * Feed-forward and store (c8, c9 are in esi, edi here), then zero every
 * clobbered register, which held state or keystream, and the frame's
 * words and pointers; rax is 0 afterwards.
 */
.macro B1_FINISH
        movq    B1_ST(%rsp), %rbp
        addl    0(%rbp), %eax
        addl    4(%rbp), %ebx
        addl    8(%rbp), %ecx
        addl    12(%rbp), %edx
        addl    16(%rbp), %r8d
        addl    20(%rbp), %r9d
        addl    24(%rbp), %r10d
        addl    28(%rbp), %r11d
        addl    32(%rbp), %esi
        addl    36(%rbp), %edi
        addl    48(%rbp), %r12d
        addl    52(%rbp), %r13d
        addl    56(%rbp), %r14d
        addl    60(%rbp), %r15d
        movq    B1_OUT(%rsp), %rbp
        movl    %eax, 0(%rbp)
        movl    %ebx, 4(%rbp)
        movl    %ecx, 8(%rbp)
        movl    %edx, 12(%rbp)
        movl    %r8d, 16(%rbp)
        movl    %r9d, 20(%rbp)
        movl    %r10d, 24(%rbp)
        movl    %r11d, 28(%rbp)
        movl    %esi, 32(%rbp)
        movl    %edi, 36(%rbp)
        movl    B1_C(10)(%rsp), %esi
        movl    B1_C(11)(%rsp), %edi
        movq    B1_ST(%rsp), %rax
        addl    40(%rax), %esi
        addl    44(%rax), %edi
        movl    %esi, 40(%rbp)
        movl    %edi, 44(%rbp)
        movl    %r12d, 48(%rbp)
        movl    %r13d, 52(%rbp)
        movl    %r14d, 56(%rbp)
        movl    %r15d, 60(%rbp)

        /* Every clobbered register below held state or keystream; the
         * callee-saved ones get the caller's values back. */
        xorl    %eax, %eax
        xorl    %ecx, %ecx
        xorl    %edx, %edx
        xorl    %esi, %esi
        xorl    %edi, %edi
        xorl    %r8d, %r8d
        xorl    %r9d, %r9d
        xorl    %r10d, %r10d
        xorl    %r11d, %r11d
        movq    %rax, B1_C(8)(%rsp)
        movq    %rax, B1_C(10)(%rsp)
        movq    %rax, B1_OUT(%rsp)
        movq    %rax, B1_ST(%rsp)
.endm

/* One whole block, rbp pointing at the state: load, rounds, finish. */
.macro B1_BODY
        B1_LOAD
        .p2align 4
1:
        B1_COLUMNS
        B1_DIAGONALS
        decl    %ebp
        jnz     1b
        B1_FINISH
.endm

.macro CHACHA_BLOCK1_GPR
        B1_PUSH
        subq    $B1_FRAME, %rsp
        .cfi_adjust_cfa_offset B1_FRAME
        movq    %rdi, B1_OUT(%rsp)
        movq    %rsi, B1_ST(%rsp)
        movq    %rsi, %rbp
        B1_BODY
        addq    $B1_FRAME, %rsp
        .cfi_adjust_cfa_offset -B1_FRAME
        B1_POP
        ret
.endm

/*
 * Keyed entries (chacha_blocks_key_fn: rdi key, rsi out, rdx st, rcx
 * nblocks): where each keeps its arguments in its frame, above the
 * one-block path's own words, and the store of them on entry.  B1_FINISH
 * finds the key buffer and st at B1_OUT and B1_ST.
 */
#define K_VOUT 32 /* out */
#define K_N 40    /* nblocks */
#define K_ST 48   /* st */

.macro K_SAVE_ARGS
        movq    %rdi, B1_OUT(%rsp)
        movq    %rdx, B1_ST(%rsp)
        movq    %rsi, K_VOUT(%rsp)
        movq    %rcx, K_N(%rsp)
        movq    %rdx, K_ST(%rsp)
.endm

/*
 * The double rounds of a keyed entry's first vector batch with the key
 * block's on the integer registers between their halves (B1_LOAD set ebp
 * to the count); the kernel defines SINGLE_COLUMNS and SINGLE_DIAGONALS.
 */
.macro K_DROUNDS
        .p2align 4
.Lkey_dround:
        SINGLE_COLUMNS
        B1_COLUMNS
        SINGLE_DIAGONALS
        B1_DIAGONALS
        decl    %ebp
        jnz     .Lkey_dround
.endm

#endif
