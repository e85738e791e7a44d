/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The SSSE3 and SSE2 kernels against the EVP ChaCha20 of a CPU without
 * AVX2.  Those kernels run where the CPU has no AVX2, and there
 * libcrypto's ChaCha20 is its own 4-block SSSE3 code, not the 8-block AVX2
 * code the bench's chacha20 column measures on an AVX2 CPU.  libcrypto
 * reads its CPU mask (OPENSSL_ia32cap, openssl-env(7)) once, when it
 * starts, so this side of the comparison runs in a child: the bench itself
 * again, with AVX2 and AVX-512 masked, measuring DRBG[ssse3], DRBG[sse2]
 * and EVP ChaCha20 side by side in one request table.
 */
#ifndef CHACHARNG_BENCH_NARROW_H
#define CHACHARNG_BENCH_NARROW_H

#include <stddef.h>

/* What libcrypto is told in the child: CPUID(7).EBX bits 5 (AVX2) and 16
 * (AVX-512F) off, the first word untouched. */
#define BENCH_NARROW_IA32CAP ":~0x10020"

/*
 * Run the child (|quick|: with -q) on the columns |cols| (a -c list of
 * "ssse3", "sse2" and "chacha20") and keep its medians, MB/s, for the |n|
 * request sizes |lens|.  Returns 1, or 0 with the reason in |why| (|whyn|
 * bytes).
 */
int bench_narrow_run(int quick, const char *cols, const size_t *lens, size_t n,
                     char *why, size_t whyn);

/*
 * The child's median for column |title| ("ssse3", "sse2" or "chacha20")
 * at |lens|[|k|], or -1 if it was not measured.
 */
double bench_narrow_cell(const char *title, size_t k);

#endif
