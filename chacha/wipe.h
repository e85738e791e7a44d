/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The project's wiping helpers, in one place:
 *
 *  - chacha_wipe(): the one secure-zero helper.  A plain memset of memory
 *    that is about to die may be removed by the compiler; the empty asm
 *    with a memory clobber makes the stores observable, as explicit_bzero
 *    does, without depending on a libc that has it.
 *  - chacha_wipe_stack(): zeroes the stack just below the calling frame,
 *    where the functions it called kept their frames.  C cannot name the
 *    slots a compiler spills locals to, so code whose locals hold key
 *    material runs in a callee and its caller wipes after it.
 *  - CHACHA_CLEAR_REGS: a function attribute that makes the function zero
 *    every call-clobbered register it used (general and vector) on return,
 *    where the compiler offers it (GCC 11+ on x86_64, aarch64, s390x and
 *    others; not clang up to 14).  Callee-saved registers are restored from
 *    the caller anyway.
 *  - chacha_scrub_regs(): zeroes every call-clobbered register (general
 *    and vector, at the width the CPU has: ymm, zmm16-31 and the opmasks
 *    where the OS saves them) from assembly, whatever code wrote them,
 *    on x86_64 and aarch64 (scrub_regs.c); elsewhere it does nothing.
 *    Called after the last call of a function that handled secrets and
 *    called code it does not own (a memcpy may be a sanitizer's).
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

/*
 * Bytes chacha_wipe_stack() zeroes: well above the deepest frame it cleans
 * up after (the C kernel's: 224 bytes with GCC 12 -O2 on x86_64, 128 at
 * -O0 on aarch64; a leaf may also use the 128-byte x86_64 red zone), so
 * other compilers and flags fit.  t_drbg_stack checks it on each build.
 */
#define CHACHA_WIPE_STACK_BYTES 1024

/* Must not be inlined: its frame has to overlay the frames just gone. */
static __attribute__((noinline, unused)) void chacha_wipe_stack(void)
{
    unsigned char area[CHACHA_WIPE_STACK_BYTES];

    chacha_wipe(area, sizeof(area));
}

#if defined(__has_attribute)
#if __has_attribute(zero_call_used_regs)
#define CHACHA_CLEAR_REGS __attribute__((zero_call_used_regs("used")))
#endif
#endif
#ifndef CHACHA_CLEAR_REGS
#define CHACHA_CLEAR_REGS
#endif

void chacha_scrub_regs(void);

#endif
