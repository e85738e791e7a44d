/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Dead-stack scanning for the zeroization tests (OpenSSL-free, so the
 * cross targets run it too).  ss_run() paints a large stack area below its
 * own frame with a known pattern, calls the code under test from there, and
 * copies the area afterwards: every word that no longer holds the pattern
 * was written by that call and is left behind in dead stack.  The tests then
 * look for secret words (needles) among those.
 *
 * Words are compared whole and aligned: spill slots and copies of state
 * words are 4-byte aligned on every ABI.  Values too common in stack frames
 * by themselves (small counts, sizes, -1) are never used as needles.
 */
#ifndef CHACHARNG_STACKSCAN_H
#define CHACHARNG_STACKSCAN_H

#include <stddef.h>
#include <stdint.h>

#define SS_BYTES 16384
#define SS_WORDS (SS_BYTES / 4)

struct ss_snapshot {
    uint32_t before[SS_WORDS]; /* the area after painting, nothing called */
    uint32_t after[SS_WORDS];  /* the area after the call under test */
};

/*
 * 1 if dead stack can be read meaningfully in this process; else 0 with
 * |*why| set (sanitizers keep locals on a separate fake stack and move data
 * through the stack themselves; memcheck forbids reading below the stack
 * pointer).
 */
int ss_possible(const char **why);

/* Paint, call |fn|(|arg|) from below a gap, copy the area into |snap|. */
void ss_run(void (*fn)(void *), void *arg, struct ss_snapshot *snap);

/* Words of |area| that differ from the paint pattern. */
size_t ss_written(const uint32_t area[SS_WORDS]);

struct ss_needles {
    uint32_t w[8192];
    size_t n;
};

/* Add |w| unless it is too common to mean anything. */
void ss_add(struct ss_needles *nd, uint32_t w);

/*
 * Add the 4-byte pieces of |p| (|len| a multiple of 4), both as stored and
 * as the little-endian words they encode (different on big-endian hosts,
 * where a kernel holds the word and stores its bytes reversed).
 */
void ss_add_bytes(struct ss_needles *nd, const void *p, size_t len);

/* The secret words of an RFC 8439 state: key 4..11 and nonce 13..15. */
void ss_add_state(struct ss_needles *nd, const uint32_t st[16]);

/*
 * The final-round words of |nblocks| blocks of keystream |ks| made from
 * |st| with counters st[12], st[12] + 1, ...: x[i] = block word i minus the
 * input word i (with the output they give the key), and the output words.
 */
void ss_add_blocks(struct ss_needles *nd, const uint32_t st[16],
                   const uint8_t *ks, size_t nblocks);

/*
 * Number of written words of |area| equal to a needle; the first one found
 * is described in |*where| (byte offset below the top of the area) and
 * |*what|.
 */
size_t ss_hits(const uint32_t area[SS_WORDS], const struct ss_needles *nd,
               size_t *where, uint32_t *what);

#endif
