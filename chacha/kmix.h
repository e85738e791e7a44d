/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kernel mixing (DESIGN.md section 3), the part that needs no OpenSSL: the
 * read of 16 bytes from the kernel's generator that a generator makes
 * before each refill and direct request, by one of two routes (the vDSO's
 * getrandom where the kernel exports it, called directly whatever the C
 * library, else the getrandom system call), and the answer behind `auto`.
 * Reading the setting (config key, environment) is the provider's.
 */
#ifndef CHACHARNG_KMIX_H
#define CHACHARNG_KMIX_H

#include <stddef.h>
#include <stdint.h>

#include "chacha.h"
#include "chacha_drbg.h"

/*
 * The mixer the provider gives its generators (chacha_drbg.h).  Its read
 * fills |g| with CHACHA_DRBG_MIX_BYTES from the kernel with GRND_NONBLOCK and
 * returns 1, or 0 if none could be had: it never blocks and never fails
 * its caller.  On the vDSO route *|slot| holds the generator's own vDSO
 * state, taken at its first read and given back, wiped, by its release.
 */
extern const struct chacha_drbg_mixer chacha_kmix_mixer;

/*
 * The system call route alone, whatever the vDSO offers: what
 * chacha_kmix_mixer falls back to, as a mixer of its own (it keeps no
 * slot), for a generator that must not use the vDSO.
 */
extern const struct chacha_drbg_mixer chacha_kmix_syscall_mixer;

/* The two halves of chacha_kmix_mixer. */
int chacha_kmix_getrandom(void **slot, uint8_t g[CHACHA_DRBG_MIX_BYTES]);
void chacha_kmix_release(void *slot);

/* The vDSO state that |slot| (kept by chacha_kmix_getrandom()) holds, or
 * NULL if it reads by the system call: for the tests, which look at it. */
void *chacha_kmix_state(void *slot);

/*
 * Called after the 1st, 2nd, 4th, 8th ... failed read in this process with
 * the read's errno (0: a short read) and the failure count: seen, never a
 * flood.  NULL (the default) reports nothing.  Set once, at load.
 */
typedef void chacha_kmix_report_fn(int err, unsigned long failures);
void chacha_kmix_set_report(chacha_kmix_report_fn *report);

enum chacha_kmix_route {
    CHACHA_KMIX_SYSCALL, /* getrandom(2) through the C library */
    CHACHA_KMIX_VDSO     /* the vDSO's getrandom, called directly */
};

/*
 * The route this process reads by, found once: the vDSO one if the vDSO
 * exports getrandom and answers its parameters query with a state that
 * fits in a page.  |why| (|n| bytes) receives what was found, for a debug
 * line.  A read whose vDSO state cannot be had, or whose vDSO call fails,
 * still goes to the system call.
 */
enum chacha_kmix_route chacha_kmix_route(char *why, size_t n);

/*
 * 1 if this process has the vDSO route, which is what `auto` turns mixing
 * on for: a read then costs about what a ChaCha20 block does, not a
 * system call.  Asks what the kernel offers, never how fast it is.
 */
int chacha_kmix_vdso_available(char *why, size_t n);

/*
 * Unmap every mapping of vDSO states none of which is taken (provider
 * teardown).  Safe while other threads read and release.
 */
void chacha_kmix_trim(void);

#endif
