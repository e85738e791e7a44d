/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Every ChaCha20 kernel compiled in, checked with no OpenSSL at all (so this
 * also runs on cross targets under qemu): RFC 8439 vectors, every batch size
 * against the portable kernel with canaries on both sides of misaligned
 * output, the 2^32 counter wrap, and a chained checksum pinned in the source;
 * the keyed batch (block 0 to a buffer of its own) likewise.
 * A kernel that picks between paths by request size is checked once as it
 * is and once per path forced (chacha_impl_variants()).  Kernels the CPU
 * lacks are reported as skipped.  Where the caller knows which kernel the
 * CPU must get (an emulated CPU with or without a vector unit), it names it
 * in CHACHARNG_TEST_BEST, and a kernel or path the CPU must be able to run
 * in CHACHARNG_TEST_RUNS; the detection is checked against them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__s390x__)
#include <sys/auxv.h>
#endif

#include "config.h"
#include "chacha.h"
#include "hex.h"
#include "rfc8439.h"
#include "testutil.h"

#define CANARY 64
#define CANARY_BYTE 0xa5
/* Every block count up to MAX_BLOCKS; at all 64 output offsets up to
 * ALL_OFFSETS_BLOCKS, at a few beyond. */
#define MAX_BLOCKS 200
#define ALL_OFFSETS_BLOCKS 80

static void check_rfc(const struct chacha_impl *impl)
{
    uint8_t key[32], nonce[12], want[128], got[128], ct[128];
    uint32_t state[16];
    size_t i, n;

    for (i = 0; i < rfc8439_nblocks; i++) {
        tu_unhex(key, sizeof(key), rfc8439_blocks[i].key);
        tu_unhex(nonce, sizeof(nonce), rfc8439_blocks[i].nonce);
        n = tu_unhex(want, sizeof(want), rfc8439_blocks[i].keystream);
        chacha_state_init(state, key, rfc8439_blocks[i].counter, nonce);
        impl->blocks(got, state, 1);
        TU_OK(memcmp(got, want, n) == 0, "%s: RFC 8439 %s", impl->name,
              rfc8439_blocks[i].what);
    }

    tu_unhex(key, sizeof(key), rfc8439_blocks[0].key);
    tu_unhex(nonce, sizeof(nonce), "000000000000004a00000000");
    n = tu_unhex(ct, sizeof(ct), rfc8439_sunscreen_ct);
    chacha_state_init(state, key, 1, nonce);
    impl->blocks(got, state, 2);
    for (i = 0; i < n; i++)
        got[i] ^= (uint8_t)rfc8439_sunscreen[i];
    TU_OK(n == strlen(rfc8439_sunscreen) && memcmp(got, ct, n) == 0,
          "%s: RFC 8439 2.4.2 encryption (two blocks)", impl->name);
}

static int canaries_intact(const uint8_t *buf, size_t before, size_t len)
{
    size_t i;

    for (i = 0; i < before; i++)
        if (buf[i] != CANARY_BYTE)
            return 0;
    for (i = before + len; i < before + len + CANARY; i++)
        if (buf[i] != CANARY_BYTE)
            return 0;
    return 1;
}

/*
 * Every block count 0..MAX_BLOCKS plus a few large ones, at several output
 * misalignments and counters (two of which wrap mid-batch), against the
 * portable kernel, with canaries on both sides.
 */
static void check_cross(const struct chacha_impl *impl)
{
    static const uint32_t counters[] = {
        0, 1, 0x7fffffffu, 0xfffffff0u, 0xfffffffeu, 0xffffffffu
    };
    static const size_t big[] = { 255, 256, 1000, 1023, 1024, 16384 };
    size_t maxlen = 16384 * 64, off, n, ci, i, bad_data = 0, bad_canary = 0;
    size_t cases = 0;
    uint8_t *buf = malloc(maxlen + 2 * CANARY + 64), *ref = malloc(maxlen);
    uint8_t key[32], nonce[12];
    uint32_t state[16];

    if (!TU_OK(buf != NULL && ref != NULL, "%s: allocate", impl->name))
        goto end;
    for (i = 0; i < 32; i++)
        key[i] = (uint8_t)(i * 7 + 3);
    for (i = 0; i < 12; i++)
        nonce[i] = (uint8_t)(0xf0 - i);

    for (ci = 0; ci < sizeof(counters) / sizeof(counters[0]); ci++) {
        chacha_state_init(state, key, counters[ci], nonce);
        chacharng_chacha_blocks_generic(ref, state, 16384);
        for (n = 0; n <= MAX_BLOCKS + sizeof(big) / sizeof(big[0]); n++) {
            size_t nb = n <= MAX_BLOCKS ? n : big[n - MAX_BLOCKS - 1];

            for (off = 0; off < 64; off += (nb > ALL_OFFSETS_BLOCKS ? 21 : 1)) {
                memset(buf, CANARY_BYTE, CANARY + off + nb * 64 + CANARY);
                impl->blocks(buf + CANARY + off, state, nb);
                cases++;
                if (memcmp(buf + CANARY + off, ref, nb * 64) != 0) {
                    if (bad_data++ == 0)
                        tu_diag("%s: wrong output, counter %#x, %zu blocks, "
                                "offset %zu",
                                impl->name, counters[ci], nb, off);
                }
                if (!canaries_intact(buf, CANARY + off, nb * 64)) {
                    if (bad_canary++ == 0)
                        tu_diag("%s: canary hit, counter %#x, %zu blocks, "
                                "offset %zu",
                                impl->name, counters[ci], nb, off);
                }
            }
        }
    }
    TU_OK(bad_data == 0,
          "%s: %zu batches equal the portable kernel (all "
          "sizes 0..%d and large, 64 alignments, counter wrap)",
          impl->name, cases, MAX_BLOCKS);
    TU_OK(bad_canary == 0, "%s: no write outside the output (%zu batches)",
          impl->name, cases);

    /* the state is input only */
    {
        uint32_t copy[16];

        chacha_state_init(state, key, 0xfffffffbu, nonce);
        memcpy(copy, state, sizeof(copy));
        impl->blocks(buf, state, 37);
        TU_OK(memcmp(copy, state, sizeof(copy)) == 0,
              "%s: state left unchanged", impl->name);
    }
end:
    free(buf);
    free(ref);
}

/*
 * The keyed batch (chacha.h): block 0 to |key|, the next |nblocks| to
 * |out|, for every count 0..MAX_BLOCKS and a few large ones, at counters
 * that wrap at every position of the first blocks, both buffers
 * misaligned independently and guarded by canaries, the state unchanged.
 */
static void check_cross_key(const struct chacha_impl *impl)
{
    static const uint32_t counters[] = { 0, 0x7fffffffu, 0xfffffff0u,
                                         0xfffffffeu, 0xffffffffu };
    static const size_t big[] = { 255, 256, 1023, 1024, 4096 };
    size_t maxblocks = 4097, n, ci, i, ko, oo, cases = 0, bad = 0;
    uint8_t *buf = malloc(maxblocks * 64 + 2 * CANARY + 64);
    uint8_t *ref = malloc(maxblocks * 64);
    uint8_t kbuf[2 * CANARY + 128], key[32], nonce[12];
    uint32_t state[16], copy[16];

    if (!TU_OK(buf != NULL && ref != NULL, "%s: allocate", impl->name))
        goto end;
    for (i = 0; i < 32; i++)
        key[i] = (uint8_t)(i * 11 + 5);
    for (i = 0; i < 12; i++)
        nonce[i] = (uint8_t)(0x3c ^ (i * 7));
    for (ci = 0; ci < sizeof(counters) / sizeof(counters[0]); ci++) {
        chacha_state_init(state, key, counters[ci], nonce);
        memcpy(copy, state, sizeof(copy));
        chacharng_chacha_blocks_generic(ref, state, maxblocks);
        for (n = 0; n <= MAX_BLOCKS + sizeof(big) / sizeof(big[0]); n++) {
            size_t nb = n <= MAX_BLOCKS ? n : big[n - MAX_BLOCKS - 1];
            size_t step = nb > ALL_OFFSETS_BLOCKS ? 29 : 7;

            for (ko = 0, oo = 0; oo < 64; oo += step, ko = (ko + 13) % 64) {
                memset(buf, CANARY_BYTE, CANARY + oo + nb * 64 + CANARY);
                memset(kbuf, CANARY_BYTE, sizeof(kbuf));
                impl->blocks_key(kbuf + CANARY + ko, buf + CANARY + oo, state,
                                 nb);
                cases++;
                if (memcmp(kbuf + CANARY + ko, ref, 64) == 0
                    && memcmp(buf + CANARY + oo, ref + 64, nb * 64) == 0
                    && canaries_intact(buf, CANARY + oo, nb * 64)
                    && canaries_intact(kbuf, CANARY + ko, 64)
                    && memcmp(copy, state, sizeof(copy)) == 0)
                    continue;
                if (bad++ == 0)
                    tu_diag("%s: keyed batch wrong, counter %#x, %zu blocks, "
                            "key offset %zu, output offset %zu",
                            impl->name, counters[ci], nb, ko, oo);
            }
        }
    }
    TU_OK(bad == 0,
          "%s: %zu keyed batches (0..%d blocks and large, counter wrap, "
          "misaligned, canaries) equal the portable kernel",
          impl->name, cases, MAX_BLOCKS);
end:
    free(buf);
    free(ref);
}

/*
 * nblocks == 0 is part of the contract (DESIGN.md section 6): nothing is
 * written, not even at |out| itself, and |state| is left as it was.
 */
static void check_zero_blocks(const struct chacha_impl *impl)
{
    uint8_t buf[2 * CANARY + 64], key[32], nonce[12];
    uint32_t state[16], copy[16];
    size_t off, i, touched = 0, state_changed = 0;

    for (i = 0; i < 32; i++)
        key[i] = (uint8_t)(0x5c ^ i);
    for (i = 0; i < 12; i++)
        nonce[i] = (uint8_t)(0x3a + i);
    for (off = 0; off < 64; off++) {
        chacha_state_init(state, key, 0xfffffff0u + (uint32_t)off % 32, nonce);
        memcpy(copy, state, sizeof(copy));
        memset(buf, CANARY_BYTE, sizeof(buf));
        impl->blocks(buf + CANARY + off, state, 0);
        for (i = 0; i < sizeof(buf); i++)
            touched += buf[i] != CANARY_BYTE;
        state_changed += memcmp(copy, state, sizeof(copy)) != 0;
    }
    TU_OK(touched == 0,
          "%s: nblocks 0 writes nothing (%zu guard bytes "
          "changed over 64 alignments)",
          impl->name, touched);
    TU_OK(state_changed == 0, "%s: nblocks 0 leaves the state unchanged",
          impl->name);
}

/*
 * SUPERCOP-style chained checksum: each output is folded back into the key,
 * so one pinned value covers every batch size 0..299 and counter near the
 * wrap in sequence.  The value was computed independently with OpenSSL's
 * ChaCha20 (no wrap is reached, so its counter carry does not matter).
 */
static void check_checksum(const struct chacha_impl *impl)
{
    static const char pinned[] =
        "23d145c8c55e18a1393f2fb90ef932d4580c9da96d24e05e259dc29a77ef8c11";
    uint8_t key[32] = { 0 }, nonce[12] = { 0 }, want[32];
    uint8_t *out = malloc(300 * 64);
    uint32_t state[16];
    size_t n, i;

    if (!TU_OK(out != NULL, "%s: allocate", impl->name))
        return;
    for (n = 0; n < 300; n++) {
        chacha_state_init(state, key, (uint32_t)(0xffffffffu - n * 3), nonce);
        impl->blocks(out, state, n);
        for (i = 0; i < n * 64; i++)
            key[i % 32] ^= out[i];
        nonce[n % 12] ^= (uint8_t)n;
    }
    tu_unhex(want, sizeof(want), pinned);
    if (!TU_OK(memcmp(key, want, 32) == 0, "%s: chained checksum", impl->name))
        tu_diag_hex("got", key, 32);
    free(out);
}

/*
 * Short calls, the ones absorb and rekey make (the SIMD kernels take a
 * path of their own below a full vertical batch): 1..SHORT_MAX blocks with
 * the 2^32 wrap at every block position of the call, and at counters
 * 0x7fffffff + k (no wrap), each against the portable kernel, at three
 * misalignments and with canaries.
 */
#define SHORT_MAX 9

static void check_short_wrap(const struct chacha_impl *impl)
{
    uint8_t buf[2 * CANARY + 64 + SHORT_MAX * 64], ref[SHORT_MAX * 64];
    uint8_t key[32], nonce[12];
    uint32_t state[16];
    size_t nb, k, off, i, cases = 0, bad = 0;
    int base;

    for (i = 0; i < 32; i++)
        key[i] = (uint8_t)(0xa5 ^ (i * 13));
    for (i = 0; i < 12; i++)
        nonce[i] = (uint8_t)(i * 29 + 1);
    for (nb = 1; nb <= SHORT_MAX; nb++)
        for (base = 0; base < 2; base++)
            for (k = 0; k <= nb; k++) {
                /* base 0: block k has counter 0; base 1: no wrap */
                uint32_t ctr = (base ? 0x7fffffffu : 0u) - (uint32_t)k;

                chacha_state_init(state, key, ctr, nonce);
                chacharng_chacha_blocks_generic(ref, state, nb);
                for (off = 0; off < 64; off += 31) {
                    memset(buf, CANARY_BYTE, sizeof(buf));
                    impl->blocks(buf + CANARY + off, state, nb);
                    cases++;
                    if (memcmp(buf + CANARY + off, ref, nb * 64) == 0
                        && canaries_intact(buf, CANARY + off, nb * 64))
                        continue;
                    if (bad++ == 0)
                        tu_diag("%s: wrong or stray bytes, counter %#x, "
                                "%zu blocks, offset %zu",
                                impl->name, ctr, nb, off);
                }
            }
    TU_OK(bad == 0,
          "%s: %zu short calls (1..%d blocks, the wrap at every "
          "block) equal the portable kernel",
          impl->name, cases, SHORT_MAX);
}

static void check_kernel(const struct chacha_impl *impl)
{
    check_rfc(impl);
    check_cross(impl);
    check_short_wrap(impl);
    check_cross_key(impl);
    check_zero_blocks(impl);
    check_checksum(impl);
    TU_OK(chacha_impl_selftest(impl), "%s: built-in self-test", impl->name);
}

/*
 * The kernel chosen for this CPU, against the platform's own report read
 * here rather than through cpu.c: on s390x the vector kernel where the
 * kernel says the vector facility is there (unless the build left it
 * out), the C kernel where it is not.
 */
static void check_choice(void)
{
#if defined(__s390x__)
#if !defined(CHACHARNG_HAVE_VX_ASM) || CHACHARNG_HAVE_VX_ASM
    const int vx_built = 1;
#else
    const int vx_built = 0;
#endif
    int vx = (getauxval(AT_HWCAP) & HWCAP_S390_VXRS) != 0;
    const char *want = vx && vx_built ? "vx" : "generic";
    const char *got = chacha_impl_best()->name;

    TU_OK(strcmp(got, want) == 0,
          "s390x, vector facility %s: best kernel %s (want %s)",
          vx ? "present" : "absent", got, want);
#endif
}

/* 1 if the compiled-in kernel or path called |name| can run here. */
static int runs_here(const char *name)
{
    const struct chacha_impl *list, *variants;
    size_t n, i, nv, v;

    list = chacha_impl_list(&n);
    for (i = 0; i < n; i++) {
        if (strcmp(list[i].name, name) == 0)
            return chacha_impl_supported(&list[i]);
        variants = chacha_impl_variants(&list[i], &nv);
        for (v = 0; v < nv; v++)
            if (strcmp(variants[v].name, name) == 0)
                return chacha_impl_supported(&variants[v]);
    }
    return 0;
}

static void body(void)
{
    const struct chacha_impl *list;
    const char *want_best = getenv("CHACHARNG_TEST_BEST");
    const char *want_runs = getenv("CHACHARNG_TEST_RUNS");
    size_t n;

    list = chacha_impl_list(&n);
    TU_OK(n >= 1 && strcmp(list[n - 1].name, "generic") == 0,
          "kernel list ends with generic");
    TU_OK(chacha_impl_selftest(chacha_impl_best()),
          "self-test of the best kernel (%s)", chacha_impl_best()->name);
    check_choice();
    if (want_best != NULL && *want_best != '\0')
        TU_OK(strcmp(chacha_impl_best()->name, want_best) == 0,
              "the CPU gets kernel %s (detected: %s)", want_best,
              chacha_impl_best()->name);
    if (want_runs != NULL)
        TU_OK(runs_here(want_runs), "the CPU can run kernel %s", want_runs);
    tu_each_kernel_path(check_kernel);
}

int main(void)
{
    return tu_main_once(body);
}
