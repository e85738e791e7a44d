/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a kernel leaves in the registers it may clobber: rd_call() calls a
 * chacha_blocks_fn and, before anything else runs, stores every
 * call-clobbered general and vector register into |dump|.  Written in
 * assembly (regdump.c), as C cannot see registers; available on x86_64
 * (rax, rcx, rdx, rsi, rdi, r8-r11, xmm0-xmm15, and ymm0-15 or zmm0-31
 * and k0-k7 where the CPU has them), aarch64 (x0-x18, v0-v31 whole: the
 * upper halves of v8-v15 are not preserved either), s390x (r0-r5, v0-v31
 * whole: only f8-f15, the left halves of v8-v15, are preserved),
 * little-endian ppc64 (r0, r3-r12, v0-v19, vs0-vs13 whole: only the FPR
 * halves of vs14-vs31 are preserved, and those the kernels leave alone)
 * and riscv64 (ra, t0-t6, a0-a7, v0-v31: no vector register is preserved).
 */
#ifndef CHACHARNG_REGDUMP_H
#define CHACHARNG_REGDUMP_H

#include <stddef.h>
#include <stdint.h>

#include "chacha.h"

#if defined(__x86_64__) && defined(__ELF__)
/* xmm0-15, the general registers, zmm0-31 (or ymm0-15), k0-k7 */
#define RD_WORDS (16 * 4 + 9 * 2 + 32 * 16 + 8 * 2)
#elif defined(__aarch64__) && defined(__ELF__)
#define RD_WORDS (20 * 2 + 32 * 4) /* x0-x18, a pad word pair, v0-v31 */
#elif defined(__s390x__) && defined(__ELF__)
#define RD_WORDS (6 * 2 + 32 * 4) /* r0-r5, v0-v31 whole */
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__) && defined(__ELF__)
/*
 * r0, r3-r12, a pad word pair, v0-v19, vs0-vs13; then the callee-saved
 * v20-v31 (RD_VR_SAVED of them from word RD_VR_AT on, four words each):
 * rd_call() sets every word of v(20 + i) to rd_vr_pattern(i) before the
 * call, dumps them after it, and gives the caller back its own.
 */
#define RD_VR_SAVED 12
#define RD_VR_AT (12 * 2 + 34 * 4)
#define RD_WORDS (RD_VR_AT + RD_VR_SAVED * 4)
#define rd_vr_pattern(i) ((uint32_t)(i) + 1)
/* A careless kernel: computes nothing, returns with v25 changed. */
chacha_blocks_fn rd_vr_clobbering_kernel;
#elif defined(__riscv) && __riscv_xlen == 64 && defined(__ELF__)
/*
 * ra, t0-t6, a0-a7 (16 doublewords), then v0-v31 up to VLEN 1024 (the
 * first 128 bytes of each register; zero where VLEN is shorter, and
 * nothing where the CPU has no vector unit).
 */
#define RD_WORDS (16 * 2 + 32 * 32)
#endif

#ifdef RD_WORDS
/* 1 if this CPU runs the dump (s390x: it clears and stores v0-v31, which
 * takes the vector facility), else 0. */
int rd_usable(void);

/* Call |fn|(|out|, |state|, |nblocks|), then dump the registers. */
void rd_call(chacha_blocks_fn *fn, uint8_t *out, const uint32_t *state,
             size_t nblocks, uint32_t dump[RD_WORDS]);

/* A careless kernel: computes nothing, leaves key words in a vector register. */
chacha_blocks_fn rd_leaky_kernel;
#endif

#if defined(__x86_64__) && defined(__ELF__)
/* The wider registers this CPU has, which rd_call() dumps too. */
#define RD_HAS_YMM 1u /* AVX: ymm0-15 */
#define RD_HAS_ZMM 2u /* AVX-512F: zmm0-31, k0-k7 */
extern uint32_t rd_features;
/* A careless kernel: leaves key words in the upper half of ymm9 only (AVX). */
chacha_blocks_fn rd_leaky_wide_kernel;
#endif

#if defined(__x86_64__) && defined(__ELF__)
/* Callee-saved general registers: rbx, rbp, r12-r15. */
#define RD_SAVED 6
#define RD_SAVED_NAMES "rbx, rbp and r12-r15"
#define RD_CLOBBERED_NAME "r13"
#elif defined(__s390x__) && defined(__ELF__)
/* Callee-saved: r6-r13 (saved[0..7]) and f8-f15 (saved[8..15]). */
#define RD_SAVED 16
#define RD_SAVED_NAMES "r6-r13 and f8-f15"
#define RD_CLOBBERED_NAME "f12"
#define RD_KEYED 1
#endif

#ifdef RD_SAVED
/*
 * Call |fn|(|out|, |state|, |nblocks|) with each callee-saved register
 * holding a distinct pattern (rd_saved_pattern(i) for register i), then
 * store what they hold after the call into |saved|.
 */
void rd_call_saved(chacha_blocks_fn *fn, uint8_t *out, const uint32_t *state,
                   size_t nblocks, uint64_t saved[RD_SAVED]);

/* The pattern rd_call_saved puts into callee-saved register |i|. */
#define rd_saved_pattern(i)                                                    \
    (0x5a17c3e90b2d4f60ull + 0x0101010101010101ull * (i))

/* A careless kernel: computes nothing, returns with RD_CLOBBERED_NAME
 * changed. */
chacha_blocks_fn rd_clobbering_kernel;
#endif

#if defined(__x86_64__) && defined(__ELF__)
#define RD_KEYED 1
#endif

#ifdef RD_KEYED
/* The keyed batch: as rd_call() and rd_call_saved(), for
 * |fn|(|key|, |out|, |state|, |nblocks|). */
void rd_call_key(chacha_blocks_key_fn *fn, uint8_t *key, uint8_t *out,
                 const uint32_t *state, size_t nblocks,
                 uint32_t dump[RD_WORDS]);
void rd_call_key_saved(chacha_blocks_key_fn *fn, uint8_t *key, uint8_t *out,
                       const uint32_t *state, size_t nblocks,
                       uint64_t saved[RD_SAVED]);
#endif

#endif
