/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kernel mixing (DESIGN.md section 3), the part that needs no OpenSSL: the
 * read of 32 bytes from the kernel's generator that a generator calls
 * before each refill and direct request, and the one-time check behind
 * `auto` (does this process get getrandom from the vDSO?).  Reading the
 * setting (config key, environment) is the provider's.
 */
#ifndef CHACHARNG_KMIX_H
#define CHACHARNG_KMIX_H

#include <stddef.h>
#include <stdint.h>

#include "chacha.h"

/*
 * Fill |g| with CHACHA_KEY_BYTES from getrandom(GRND_NONBLOCK).  Returns 1,
 * or 0 if none could be had: never blocks, never fails its caller.  A
 * chacha_drbg_mix_fn (chacha_drbg.h).
 */
int chacha_kmix_getrandom(uint8_t g[CHACHA_KEY_BYTES]);

/*
 * Called after the 1st, 2nd, 4th, 8th ... failed read in this process with
 * the read's errno (0: a short read) and the failure count: seen, never a
 * flood.  NULL (the default) reports nothing.  Set once, at load.
 */
typedef void chacha_kmix_report_fn(int err, unsigned long failures);
void chacha_kmix_set_report(chacha_kmix_report_fn *report);

/*
 * 1 if both the C library and the kernel serve getrandom from the vDSO
 * here, which is what `auto` turns mixing on for.  |why| (|n| bytes)
 * receives what was found, for a debug line.  Asks what the C library and
 * the kernel are, never how fast getrandom is.
 */
int chacha_kmix_vdso_available(char *why, size_t n);

#endif
