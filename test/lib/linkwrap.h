/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The core's system calls wrapped at link time, for the OpenSSL-free tests
 * that link chacha/ into the executable (t_drbg, t_pool): linked with
 * LINKWRAP_LDOPTS (Makefile.am: -Wl,--wrap= for mmap, munmap, madvise and
 * pthread_atfork), every call the executable's own objects make to those
 * lands here first.  This works the same in a static link (the s390x
 * stage) and a dynamic one, and chacha/ has no test hook: the tests count
 * its calls, and give it the kernel or the C library it would meet
 * elsewhere, from outside.  What the C library calls internally is left
 * alone.  OpenSSL-free.
 */
#ifndef CHACHARNG_TEST_LINKWRAP_H
#define CHACHARNG_TEST_LINKWRAP_H

#include "secpage.h"

/* mmap, munmap and madvise calls so far, each into its pointer if not NULL. */
void lw_calls(unsigned long *mmaps, unsigned long *munmaps,
              unsigned long *madvises);

/*
 * Leave the code under test |best| as its best fork mode, as other systems
 * would: CHACHA_FORK_ATFORK makes madvise(MADV_WIPEONFORK) fail with EINVAL
 * (a kernel before 4.14), CHACHA_FORK_GETPID also makes pthread_atfork
 * fail with ENOMEM, CHACHA_FORK_WIPEONFORK restores the real calls.  Only
 * later mappings are affected (chacha_pool_trim() before, so that the pool
 * hands out no slot of an earlier one), and a registered atfork handler
 * stays registered: getpid mode can be reached only before any mapping has
 * fallen back to the atfork handler.
 */
void lw_limit_fork_mode(enum chacha_fork_mode best);

/*
 * Make the |nth| (1-based) mmap from now fail with ENOMEM; 0 disarms.
 * lw_mmap_fired() says whether the armed failure happened.
 */
void lw_fail_mmap(unsigned int nth);
int lw_mmap_fired(void);

/*
 * Run |hook|(|base|, |len|) once, in the thread of the next munmap, right
 * after the real munmap returned: the caller is held there, between the
 * kernel's unmapping and whatever it does next, for as long as |hook|
 * runs.  NULL disarms.
 */
void lw_after_munmap(void (*hook)(void *base, size_t len));

/*
 * Place the next mmap at |at| (MAP_FIXED_NOREPLACE: it fails rather than
 * replace a mapping), as the kernel may on its own when |at| was just
 * unmapped; NULL disarms.
 */
void lw_place_mmap(void *at);

#endif
