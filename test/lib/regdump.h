/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a kernel leaves in the registers it may clobber: rd_call() calls a
 * chacha_blocks_fn and, before anything else runs, stores every
 * call-clobbered general and vector register into |dump|.  Written in
 * assembly (regdump.c), as C cannot see registers; available on x86_64
 * (rax, rcx, rdx, rsi, rdi, r8-r11, xmm0-xmm15), aarch64 (x0-x18,
 * v0-v31 whole: the upper halves of v8-v15 are not preserved either) and
 * riscv64 (ra, t0-t6, a0-a7, v0-v31: no vector register is preserved).
 */
#ifndef CHACHARNG_REGDUMP_H
#define CHACHARNG_REGDUMP_H

#include <stddef.h>
#include <stdint.h>

#include "chacha.h"

#if defined(__x86_64__) && defined(__ELF__)
#define RD_WORDS (16 * 4 + 9 * 2)
#elif defined(__aarch64__) && defined(__ELF__)
#define RD_WORDS (20 * 2 + 32 * 4) /* x0-x18, a pad word pair, v0-v31 */
#elif defined(__riscv) && __riscv_xlen == 64 && defined(__ELF__)
/*
 * ra, t0-t6, a0-a7 (16 doublewords), then v0-v31 up to VLEN 1024 (the
 * first 128 bytes of each register; zero where VLEN is shorter, and
 * nothing where the CPU has no vector unit).
 */
#define RD_WORDS (16 * 2 + 32 * 32)
#endif

#ifdef RD_WORDS
/* Call |fn|(|out|, |state|, |nblocks|), then dump the registers. */
void rd_call(chacha_blocks_fn *fn, uint8_t *out, const uint32_t *state,
             size_t nblocks, uint32_t dump[RD_WORDS]);

/* A careless kernel: computes nothing, leaves key words in a vector register. */
chacha_blocks_fn rd_leaky_kernel;
#endif

#if defined(__x86_64__) && defined(__ELF__)
/* Callee-saved general registers: rbx, rbp, r12-r15. */
#define RD_SAVED 6
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

/* A careless kernel: computes nothing, returns with r13 changed. */
chacha_blocks_fn rd_clobbering_kernel;

/* The keyed batch: as rd_call() and rd_call_saved(), for
 * |fn|(|key|, |out|, |state|, |nblocks|). */
#define RD_KEYED 1
void rd_call_key(chacha_blocks_key_fn *fn, uint8_t *key, uint8_t *out,
                 const uint32_t *state, size_t nblocks,
                 uint32_t dump[RD_WORDS]);
void rd_call_key_saved(chacha_blocks_key_fn *fn, uint8_t *key, uint8_t *out,
                       const uint32_t *state, size_t nblocks,
                       uint64_t saved[RD_SAVED]);
#endif

#endif
