/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A program with no C library for the BTI run-time check (t_bti.sh): its
 * own _start calls the NEON kernel through a function pointer (blr, an
 * indirect branch that must land on a BTI pad once the linker turned BTI on
 * with -z force-bti), checks one RFC 8439 section 2.3.2 block and exits 0
 * if it is right, 1 if not.  A kernel without its landing pad never
 * returns: the branch faults with SIGILL.
 */
#include <stddef.h>
#include <stdint.h>

void chacharng_chacha_blocks_neon(uint8_t *out, const uint32_t state[16],
                                  size_t nblocks);

static __attribute__((noreturn)) void sys_exit(long code)
{
    register long x0 __asm__("x0") = code;
    register long x8 __asm__("x8") = 93; /* exit */

    __asm__ __volatile__("svc #0" : : "r"(x0), "r"(x8) : "memory");
    for (;;)
        ;
}

void _start(void);

void _start(void)
{
    static const uint32_t state[16] = {
        0x61707865, 0x3320646e, 0x79622d32, 0x6b206574, 0x03020100, 0x07060504,
        0x0b0a0908, 0x0f0e0d0c, 0x13121110, 0x17161514, 0x1b1a1918, 0x1f1e1d1c,
        0x00000001, 0x09000000, 0x4a000000, 0x00000000,
    };
    static const uint8_t want[16] = { 0x10, 0xf1, 0xe7, 0xe4, 0xd1, 0x3b,
                                      0x59, 0x15, 0x50, 0x0f, 0xdd, 0x1f,
                                      0xa3, 0x20, 0x71, 0xc4 };
    void (*volatile kernel)(uint8_t *, const uint32_t *, size_t) =
        chacharng_chacha_blocks_neon;
    volatile uint8_t out[64];
    long bad = 0;
    int i;

    kernel((uint8_t *)out, state, 1);
    for (i = 0; i < 16; i++)
        bad |= out[i] ^ want[i];
    sys_exit(bad != 0);
}
