/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ChaCha20 block kernels (RFC 8439 section 2.3) and the table that picks one.
 *
 * A kernel writes raw keystream; it never XORs with input, never keeps state
 * between calls and never touches anything but |out| and |state|.  This header
 * is OpenSSL-free so the kernels can be tested, fuzzed and benchmarked alone.
 */
#ifndef CHACHARNG_CHACHA_H
#define CHACHARNG_CHACHA_H

#include <stddef.h>
#include <stdint.h>

#define CHACHA_BLOCK_BYTES 64
#define CHACHA_KEY_BYTES 32
#define CHACHA_NONCE_BYTES 12
#define CHACHA_STATE_WORDS 16
/* The state word holding the 32-bit block counter (RFC 8439 section 2.3). */
#define CHACHA_COUNTER_WORD 12

/* CPU feature bits that a kernel may need (see cpu.c). */
#define CHACHA_CPU_SSE2 (1u << 0)
#define CHACHA_CPU_SSSE3 (1u << 10) /* pshufb */
#define CHACHA_CPU_AVX2 (1u << 1)
#define CHACHA_CPU_AVX512 (1u << 2) /* AVX-512F + VL, OS saves zmm state */
#define CHACHA_CPU_NEON (1u << 3)
#define CHACHA_CPU_VX (1u << 5) /* s390x vector facility, OS saves v0-v31 */
/* Register state the OS saves, whatever the kernels use (x86_64): ymm
 * upper halves (AVX), zmm16-31 and the opmasks (AVX-512F). */
#define CHACHA_CPU_YMM_STATE (1u << 8)
#define CHACHA_CPU_ZMM_STATE (1u << 9)
/* ppc64el: VSX and the ISA 2.07 vector crypto category (vpermxor) */
#define CHACHA_CPU_VSX (1u << 4)
#define CHACHA_CPU_RVV (1u << 6)  /* RVV 1.0, enabled by the kernel */
#define CHACHA_CPU_ZVKB (1u << 7) /* Zvkb's vror, and Zbb beside it */

/*
 * Kernel contract: write |nblocks| * 64 keystream bytes to |out| (any
 * alignment), for block counters state[12], state[12] + 1, ... taken modulo
 * 2^32 with no carry into state[13].  |state| is the RFC 8439 state as host
 * words: constants, key, counter, nonce.  |nblocks| may be 0: nothing is
 * written then.  |out| must not overlap |state|: kernels read |state| at
 * different times (the C kernel again for every block), so overlapping
 * buffers would give different bytes from each kernel.
 */
typedef void chacha_blocks_fn(uint8_t *out, const uint32_t state[16],
                              size_t nblocks);

/*
 * Keyed batch, the shape of a direct request (DESIGN.md section 3): write
 * block state[12] to |key| (64 bytes) and |nblocks| blocks for counters
 * state[12] + 1, state[12] + 2, ... (modulo 2^32, no carry) to |out|: the
 * bytes a chacha_blocks_fn writes for |nblocks| + 1 blocks, the first one
 * sent elsewhere.  |nblocks| may be 0 (|key| alone is written).  |key|,
 * |out| and |state| must not overlap; any alignment.  A kernel with an
 * entry of its own computes the key block beside the others; the rest
 * use chacha_blocks_key_via(), two calls of their blocks function.
 */
typedef void chacha_blocks_key_fn(uint8_t *key, uint8_t *out,
                                  const uint32_t state[16], size_t nblocks);

chacha_blocks_fn chacharng_chacha_blocks_generic;
chacha_blocks_fn chacharng_chacha_blocks_sse2;
chacha_blocks_fn chacharng_chacha_blocks_ssse3;
chacha_blocks_fn chacharng_chacha_blocks_avx2;
chacha_blocks_fn chacharng_chacha_blocks_avx512;
chacha_blocks_fn chacharng_chacha_blocks_neon;
/* The NEON kernel's size-selected paths, each forced (kernel tests only). */
chacha_blocks_fn chacharng_chacha_blocks_neon_x8;
chacha_blocks_fn chacharng_chacha_blocks_neon_x6;
chacha_blocks_fn chacharng_chacha_blocks_neon_x1;
chacha_blocks_fn chacharng_chacha_blocks_vx;
chacha_blocks_fn chacharng_chacha_blocks_vsx;
/* The VSX kernel's eight- and four-block passes, each forced (kernel tests
 * only); the kernel itself takes eight-block passes where
 * chacharng_vsx_wide is nonzero (cpu.c: POWER10). */
chacha_blocks_fn chacharng_chacha_blocks_vsx_x8;
chacha_blocks_fn chacharng_chacha_blocks_vsx_x4;
extern unsigned int chacharng_vsx_wide;
chacha_blocks_fn chacharng_chacha_blocks_rvv;
/* The RVV kernel's rotation paths, each forced (kernel tests only). */
chacha_blocks_fn chacharng_chacha_blocks_rvv_vmadd;
chacha_blocks_fn chacharng_chacha_blocks_rvv_vror;

chacha_blocks_key_fn chacharng_chacha_blocks_key_generic;
chacha_blocks_key_fn chacharng_chacha_blocks_key_sse2;
chacha_blocks_key_fn chacharng_chacha_blocks_key_ssse3;
chacha_blocks_key_fn chacharng_chacha_blocks_key_avx2;
chacha_blocks_key_fn chacharng_chacha_blocks_key_avx512;
chacha_blocks_key_fn chacharng_chacha_blocks_key_neon;
chacha_blocks_key_fn chacharng_chacha_blocks_key_neon_x8;
chacha_blocks_key_fn chacharng_chacha_blocks_key_neon_x6;
chacha_blocks_key_fn chacharng_chacha_blocks_key_neon_x1;
chacha_blocks_key_fn chacharng_chacha_blocks_key_vx;
chacha_blocks_key_fn chacharng_chacha_blocks_key_vsx;
chacha_blocks_key_fn chacharng_chacha_blocks_key_vsx_x8;
chacha_blocks_key_fn chacharng_chacha_blocks_key_vsx_x4;
chacha_blocks_key_fn chacharng_chacha_blocks_key_rvv;
chacha_blocks_key_fn chacharng_chacha_blocks_key_rvv_vmadd;
chacha_blocks_key_fn chacharng_chacha_blocks_key_rvv_vror;

/*
 * Nonzero when the RVV kernel may use Zvkb's vror: written by
 * chacha_cpu_features(), read by chacharng_chacha_blocks_rvv on entry.
 */
extern uint32_t chacharng_rvv_vror;

/* A keyed batch through |blocks|: the key block, then the others. */
void chacha_blocks_key_via(chacha_blocks_fn *blocks, uint8_t *key, uint8_t *out,
                           const uint32_t state[16], size_t nblocks);

struct chacha_impl {
    const char *name;       /* "generic", "sse2", "ssse3", "avx2", ... */
    uint32_t needs;         /* CHACHA_CPU_* bits the kernel requires */
    size_t blocks_per_iter; /* widest batch the kernel computes at once */
    chacha_blocks_fn *blocks;
    chacha_blocks_key_fn *blocks_key; /* same bytes, block 0 apart */
};

/* Load the RFC 8439 state from a 32-byte key, a counter and a 12-byte nonce. */
void chacha_state_init(uint32_t state[16], const uint8_t key[32],
                       uint32_t counter, const uint8_t nonce[12]);

/* CPU features detected at run time (CHACHA_CPU_* bits). */
uint32_t chacha_cpu_features(void);

/*
 * All kernels compiled into this build, best first, ending with "generic".
 * *|n| receives the count.  Kernels the CPU lacks are listed too: check
 * chacha_impl_supported() before calling one.
 */
const struct chacha_impl *chacha_impl_list(size_t *n);

/*
 * For the kernel tests: the paths that |impl| chooses between by request
 * size, each as a kernel of its own that takes that path for every request
 * (same |needs|).  *|n| receives the count, 0 for a kernel with one path.
 * Never for the provider: it always runs |impl| itself.
 */
const struct chacha_impl *chacha_impl_variants(const struct chacha_impl *impl,
                                               size_t *n);

/* 1 if the CPU (and OS) can run |impl|, else 0. */
int chacha_impl_supported(const struct chacha_impl *impl);

/* The compiled-in kernel called |name|, or NULL. */
const struct chacha_impl *chacha_impl_by_name(const char *name);

/* The best kernel the CPU supports (never NULL: "generic" always works). */
const struct chacha_impl *chacha_impl_best(void);

/*
 * Check |impl| against the RFC 8439 section 2.3.2 and A.1 vectors, over
 * batch sizes that reach every code path of a wide kernel.  Returns 1 if it
 * gives the right bytes, 0 otherwise.
 */
int chacha_impl_selftest(const struct chacha_impl *impl);

#endif
