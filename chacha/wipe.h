/* SPDX-License-Identifier: Apache-2.0 */
/*
 * chacha_wipe(): the one secure-zero helper of the project.  A plain memset
 * of memory that is about to die may be removed by the compiler; the empty
 * asm with a memory clobber makes the stores observable, as explicit_bzero
 * does, without depending on a libc that has it.
 */
#ifndef CHACHARNG_WIPE_H
#define CHACHARNG_WIPE_H

#include <string.h>

static inline void chacha_wipe(void *p, size_t n)
{
    if (n == 0)
        return;
    memset(p, 0, n);
    __asm__ __volatile__("" : : "r"(p) : "memory");
}

#endif
