/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Dead-stack scanning (see stackscan.h).  The frame layout it relies on:
 *
 *   ss_run          calls ss_call, then ss_copy
 *     ss_call       a frame with a 1 KiB gap; calls ss_paint, then fn
 *       ss_paint    a 16 KiB local area, painted; its frame is where fn's
 *       fn          frames (and those of everything fn calls) will be
 *     ss_copy       runs in ss_call's old frame, above the gap, so copying
 *                   the area never overwrites what fn left there
 *
 * All of them are noinline and the calls go through volatile pointers, so
 * the compiler can neither merge the frames nor elide the reads.
 */
#include "stackscan.h"

#include <stdlib.h>
#include <string.h>

#if defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif
#define GAP 1024

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SS_SANITIZER 1
#endif
#endif
#ifndef SS_SANITIZER
#define SS_SANITIZER 0
#endif

int ss_possible(const char **why)
{
    const char *pre = getenv("LD_PRELOAD");

    if (SS_SANITIZER) {
        *why = "built with a sanitizer (locals live on a fake stack)";
        return 0;
    }
    /* memcheck preloads vgpreload_*.so into the program it runs */
    if (pre != NULL && strstr(pre, "vgpreload") != NULL) {
        *why = "under valgrind (reading below the stack pointer is an error)";
        return 0;
    }
    return 1;
}

/* A pattern no secret word matches by design: a fixed odd-multiplier walk. */
static uint32_t pattern(size_t i)
{
    return (uint32_t)(i + 1) * 0x9e3779b9u ^ 0x5bd1e995u;
}

size_t ss_written(const uint32_t area[SS_WORDS])
{
    size_t i, n = 0;

    for (i = 0; i < SS_WORDS; i++)
        n += area[i] != pattern(i);
    return n;
}

static uintptr_t area_lo; /* lowest address of the painted area */

static NOINLINE void ss_paint(void)
{
    volatile uint32_t area[SS_WORDS];
    size_t i;

    for (i = 0; i < SS_WORDS; i++)
        area[i] = pattern(i);
    area_lo = (uintptr_t)area;
}

static void ss_nothing(void *arg)
{
    (void)arg;
}

static NOINLINE void ss_call(void (*fn)(void *), void *arg)
{
    void (*volatile paint)(void) = ss_paint;
    void (*volatile call)(void *) = fn;
    volatile unsigned char gap[GAP];

    gap[0] = 0;
    paint();
    call(arg);
    /* keeps the frame (and the gap) alive across the calls: no tail call */
    __asm__ __volatile__("" : : "r"(gap) : "memory");
}

static NOINLINE void ss_copy(uint32_t *dst)
{
    const volatile uint32_t *src = (const volatile uint32_t *)area_lo;
    size_t i;

    for (i = 0; i < SS_WORDS; i++)
        dst[i] = src[i];
}

void ss_run(void (*fn)(void *), void *arg, struct ss_snapshot *snap)
{
    void (*volatile call)(void (*)(void *), void *) = ss_call;
    void (*volatile copy)(uint32_t *) = ss_copy;

    call(ss_nothing, NULL);
    copy(snap->before);
    call(fn, arg);
    copy(snap->after);
}

/* Too common in stack frames to mean anything as a match. */
static int trivial(uint32_t w)
{
    return w < 0x10000u || w > 0xffff0000u;
}

void ss_add(struct ss_needles *nd, uint32_t w)
{
    if (!trivial(w) && nd->n < sizeof(nd->w) / sizeof(nd->w[0]))
        nd->w[nd->n++] = w;
}

static uint32_t load_le(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16
           | (uint32_t)p[3] << 24;
}

void ss_add_bytes(struct ss_needles *nd, const void *p, size_t len)
{
    const uint8_t *b = p;
    size_t i;

    for (i = 0; i + 4 <= len; i += 4) {
        uint32_t raw, le = load_le(b + i);

        memcpy(&raw, b + i, 4);
        ss_add(nd, raw);
        if (le != raw)
            ss_add(nd, le);
    }
}

void ss_add_state(struct ss_needles *nd, const uint32_t st[16])
{
    int i;

    for (i = 4; i < 12; i++)
        ss_add(nd, st[i]);
    for (i = 13; i < 16; i++)
        ss_add(nd, st[i]);
}

void ss_add_blocks(struct ss_needles *nd, const uint32_t st[16],
                   const uint8_t *ks, size_t nblocks)
{
    size_t b;
    int i;

    for (b = 0; b < nblocks; b++) {
        const uint8_t *blk = ks + 64 * b;

        for (i = 0; i < 16; i++) {
            uint32_t in = i == 12 ? (uint32_t)(st[12] + b) : st[i];

            ss_add(nd, load_le(blk + 4 * i) - in);
        }
        ss_add_bytes(nd, blk, 64);
    }
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    return x < y ? -1 : x > y;
}

size_t ss_hits(const uint32_t area[SS_WORDS], const struct ss_needles *nd,
               size_t *where, uint32_t *what)
{
    static uint32_t sorted[sizeof(nd->w) / sizeof(nd->w[0])];
    size_t i, hits = 0;

    memcpy(sorted, nd->w, nd->n * sizeof(sorted[0]));
    qsort(sorted, nd->n, sizeof(sorted[0]), cmp_u32);
    for (i = 0; i < SS_WORDS; i++) {
        if (area[i] == pattern(i)
            || bsearch(&area[i], sorted, nd->n, sizeof(sorted[0]), cmp_u32)
                   == NULL)
            continue;
        if (hits++ == 0) {
            *where = (SS_WORDS - i) * 4;
            *what = area[i];
        }
    }
    return hits;
}
