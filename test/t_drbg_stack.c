/* SPDX-License-Identifier: Apache-2.0 */
/*
 * No key, nonce or keystream is left in dead stack (DESIGN.md section 4),
 * checked on the kernels and the generator core alone, with no OpenSSL, so
 * the cross targets run it too (big-endian s390x: the C and vector kernels).
 *
 * Each operation runs below a painted stack area (stackscan.c); afterwards
 * the words it wrote there are searched for: the key and nonce words of
 * every state a kernel was called on, the final-round words of every block
 * it computed (block word minus input word: with the output they give the
 * key), the output words themselves, the seed, and the state and unread
 * buffer left behind.  The constant words and the counter are public and
 * not searched for.  The registers a kernel may clobber are searched for
 * the same words right after it returns (regdump.c: x86_64, aarch64, s390x
 * and ppc64el), and on x86_64 the callee-saved general registers must come
 * back as the caller left them (the one-block integer path saves six of
 * them), on ppc64el the callee-saved vector registers v20-v31 (the
 * eight-block pass uses them).  The
 * generator runs on a recording kernel that calls the real one and notes
 * each call's state and output, so the needles cover every block an
 * absorb, refill or direct request made.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chacha_drbg.h"
#include "regdump.h"
#include "stackscan.h"
#include "testutil.h"

#define LOG_CALLS 64
#define LOG_BLOCKS 512

static const struct chacha_impl *real;
static struct {
    uint32_t st[16];
    size_t nblocks; /* blocks logged (at most what fitted in ks_log) */
    size_t ks_at;   /* where its blocks start in ks_log */
} calls[LOG_CALLS];
static uint8_t ks_log[LOG_BLOCKS * CHACHA_BLOCK_BYTES];
static size_t ncalls, nblocks_logged;

static void recording_blocks(uint8_t *out, const uint32_t state[16],
                             size_t nblocks)
{
    size_t room = LOG_BLOCKS - nblocks_logged;

    real->blocks(out, state, nblocks);
    if (ncalls == LOG_CALLS)
        return;
    memcpy(calls[ncalls].st, state, sizeof(calls[ncalls].st));
    calls[ncalls].nblocks = nblocks < room ? nblocks : room;
    calls[ncalls].ks_at = nblocks_logged;
    memcpy(ks_log + nblocks_logged * CHACHA_BLOCK_BYTES, out,
           calls[ncalls].nblocks * CHACHA_BLOCK_BYTES);
    nblocks_logged += calls[ncalls].nblocks;
    ncalls++;
}

/* The keyed batch, recorded as the two calls it stands for. */
static void recording_blocks_key(uint8_t *key, uint8_t *out,
                                 const uint32_t state[16], size_t nblocks)
{
    static uint32_t st[16]; /* off the stack: the test must leave none */
    size_t room;

    real->blocks_key(key, out, state, nblocks);
    memcpy(st, state, sizeof(st));
    room = LOG_BLOCKS - nblocks_logged;
    if (ncalls == LOG_CALLS || room == 0)
        return;
    memcpy(calls[ncalls].st, st, sizeof(st));
    calls[ncalls].nblocks = 1;
    calls[ncalls].ks_at = nblocks_logged;
    memcpy(ks_log + nblocks_logged * CHACHA_BLOCK_BYTES, key,
           CHACHA_BLOCK_BYTES);
    nblocks_logged++;
    ncalls++;
    room--;
    if (ncalls == LOG_CALLS || nblocks == 0)
        return;
    st[CHACHA_COUNTER_WORD]++;
    memcpy(calls[ncalls].st, st, sizeof(st));
    calls[ncalls].nblocks = nblocks < room ? nblocks : room;
    calls[ncalls].ks_at = nblocks_logged;
    memcpy(ks_log + nblocks_logged * CHACHA_BLOCK_BYTES, out,
           calls[ncalls].nblocks * CHACHA_BLOCK_BYTES);
    nblocks_logged += calls[ncalls].nblocks;
    ncalls++;
}

static struct chacha_impl recording;

/* Everything an operation reads and writes lives here, off the stack. */
static struct op {
    const char *what;
    struct chacha_drbg *d;
    uint32_t st[16];
    size_t n, adinlen, elen;
    size_t off; /* the kernel's output at out + off: 0, or unaligned */
    int kind;
} op;
enum {
    KERNEL,
    KERNEL_KEY,
    INSTANTIATE,
    GENERATE,
    GENERATE_FAST,
    RESEED,
    PLANT
};
static uint8_t out[12000], seed[CHACHA_DRBG_SEED_BYTES], adin[60];
static uint8_t keyblk[CHACHA_BLOCK_BYTES];
static struct ss_snapshot snap;
static struct ss_needles needles;

/* A careless callee: leaves the key words of the state in its frame. */
static __attribute__((noinline)) void plant(const uint32_t st[16])
{
    volatile uint32_t frame[16];
    int i;

    for (i = 0; i < 16; i++)
        frame[i] = st[i];
    __asm__ __volatile__("" : : "r"(frame) : "memory");
}

/*
 * A kernel call from a frame that leaves one public mark in the painted
 * area.  A kernel may use no stack at all (the SIMD kernels' short paths
 * keep everything in registers), and then writes nothing there; the mark
 * shows that the call still ran where the scan looks, below it.
 */
static __attribute__((noinline)) void marked_kernel_call(void)
{
    volatile uint32_t mark = 0x6d61726bu; /* "mark", no secret */

    if (op.kind == KERNEL_KEY)
        real->blocks_key(keyblk, out, op.st, op.n);
    else
        real->blocks(out + op.off, op.st, op.n);
    __asm__ __volatile__("" : : "r"(&mark) : "memory");
}

/* The needles of a keyed batch from |st|: block 0 in |key|, then |out|. */
static void add_keyed_blocks(const uint32_t st[16], const uint8_t *key,
                             const uint8_t *o, size_t n)
{
    static uint32_t next[16];

    ss_add_blocks(&needles, st, key, 1);
    memcpy(next, st, sizeof(next));
    next[CHACHA_COUNTER_WORD]++;
    ss_add_blocks(&needles, next, o, n);
}

static void run_op(void *arg)
{
    (void)arg;
    switch (op.kind) {
    case KERNEL:
    case KERNEL_KEY:
        marked_kernel_call();
        break;
    case INSTANTIATE:
        chacha_drbg_instantiate(op.d, seed, op.elen, adin, op.adinlen);
        break;
    case GENERATE:
        chacha_drbg_generate(op.d, out, op.n, adin, op.adinlen);
        break;
    case GENERATE_FAST:
        chacha_drbg_request(op.d, out, op.n, 0, NULL, 0);
        break;
    case RESEED:
        chacha_drbg_reseed(op.d, adin, 10, seed, op.elen, adin + 10,
                           op.adinlen);
        break;
    case PLANT:
        plant(op.st);
        break;
    }
}

/* Run |op| below the painted area and check what it left there. */
static void check_op(int expect_hit)
{
    struct chacha_drbg_secret *s = op.d != NULL ? op.d->s : NULL;
    size_t i, before, after, where = 0, written;
    uint32_t what = 0;

    ncalls = nblocks_logged = 0;
    needles.n = 0;
    if (s != NULL)
        ss_add_state(&needles, s->state);
    ss_run(run_op, NULL, &snap);

    /* the needles are made only now: their making must not be scanned */
    if (op.kind == KERNEL || op.kind == KERNEL_KEY || op.kind == PLANT) {
        ss_add_state(&needles, op.st);
        if (op.kind == KERNEL)
            ss_add_blocks(&needles, op.st, out + op.off, op.n);
        if (op.kind == KERNEL_KEY)
            add_keyed_blocks(op.st, keyblk, out, op.n);
    }
    for (i = 0; i < ncalls; i++) {
        ss_add_state(&needles, calls[i].st);
        ss_add_blocks(&needles, calls[i].st,
                      ks_log + calls[i].ks_at * CHACHA_BLOCK_BYTES,
                      calls[i].nblocks);
    }
    if (op.kind == INSTANTIATE || op.kind == RESEED)
        ss_add_bytes(&needles, seed, op.elen);
    if (s != NULL) {
        ss_add_state(&needles, s->state);
        ss_add_bytes(&needles, s->ks + CHACHA_DRBG_KS_BYTES - s->avail,
                     s->avail & ~(size_t)3);
    }

    before = ss_hits(snap.before, &needles, &where, &what);
    after = ss_hits(snap.after, &needles, &where, &what);
    written = ss_written(snap.after);
    if (expect_hit) {
        TU_OK(before == 0 && after > 0,
              "%s: the scan finds what a careless callee leaves (%zu of "
              "%zu words written)",
              op.what, after, written);
        return;
    }
    if (after != 0)
        tu_diag("%s: %zu secret words among %zu written, first %08x at "
                "%zu bytes below the caller",
                op.what, after, written, (unsigned)what, where);
    TU_OK(before == 0 && after == 0 && written > 0,
          "%s: no key, nonce, final-round or keystream word in dead stack "
          "(%zu needles, %zu words written, %zu calls)",
          op.what, needles.n, written, ncalls);
}

static void test_kernel(void)
{
    static const size_t sizes[] = { 1, 4, 16, 67 };
    /* each path of a keyed batch: alone, beside one pass, then the rest */
    static const size_t key_sizes[] = { 0, 3, 6, 15, 16, 17, 40, 67 };
    uint8_t key[32], nonce[12];
    size_t i;
    char what[64];

    for (i = 0; i < sizeof(key); i++)
        key[i] = (uint8_t)(0x91 + 29 * i);
    for (i = 0; i < sizeof(nonce); i++)
        nonce[i] = (uint8_t)(0x47 + 13 * i);
    memset(&op, 0, sizeof(op));
    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        chacha_state_init(op.st, key, (uint32_t)i * 1000, nonce);
        op.kind = KERNEL;
        op.n = sizes[i];
        snprintf(what, sizeof(what), "%s kernel, %zu blocks", real->name,
                 sizes[i]);
        op.what = what;
        check_op(0);
    }
    /* an unaligned |out|, which a kernel may serve through a stack buffer */
    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        chacha_state_init(op.st, key, (uint32_t)i * 1000 + 33, nonce);
        op.kind = KERNEL;
        op.n = sizes[i];
        op.off = 1;
        snprintf(what, sizeof(what), "%s kernel, %zu blocks to out + 1",
                 real->name, sizes[i]);
        op.what = what;
        check_op(0);
    }
    op.off = 0;
    for (i = 0; i < sizeof(key_sizes) / sizeof(key_sizes[0]); i++) {
        chacha_state_init(op.st, key, (uint32_t)i * 1000 + 77, nonce);
        op.kind = KERNEL_KEY;
        op.n = key_sizes[i];
        snprintf(what, sizeof(what), "%s keyed batch, 1 + %zu blocks",
                 real->name, key_sizes[i]);
        op.what = what;
        check_op(0);
    }
    op.kind = PLANT;
    op.what = "planted state";
    check_op(1);
}

#ifdef RD_WORDS
/* Secret words of the call in |dump|; the first one in |*what|. */
static size_t reg_hits(const uint32_t *dump, uint32_t *what)
{
    size_t i, j, hits = 0;

    for (i = 0; i < RD_WORDS; i++)
        for (j = 0; j < needles.n; j++)
            if (dump[i] == needles.w[j] && hits++ == 0)
                *what = dump[i];
    return hits;
}

#ifdef RD_SAVED
/* 1 if |fn| returns every callee-saved general register unchanged. */
static int saved_kept(chacha_blocks_fn *fn, const uint32_t *st, size_t n)
{
    uint64_t saved[RD_SAVED];
    size_t i;
    int ok = 1;

    rd_call_saved(fn, out, st, n, saved);
    for (i = 0; i < RD_SAVED; i++)
        if (saved[i] != rd_saved_pattern(i)) {
            tu_diag("callee-saved register %zu: %016llx, expected %016llx", i,
                    (unsigned long long)saved[i],
                    (unsigned long long)rd_saved_pattern(i));
            ok = 0;
        }
    return ok;
}
#endif

#ifdef RD_VR_SAVED
/* 1 if |dump| shows v20-v31 as rd_call() set them before the call. */
static int vr_kept(const uint32_t *dump)
{
    size_t i, j;

    for (i = 0; i < RD_VR_SAVED; i++)
        for (j = 0; j < 4; j++)
            if (dump[RD_VR_AT + 4 * i + j] != rd_vr_pattern(i)) {
                tu_diag("v%zu word %zu: %08x, expected %08x", 20 + i, j,
                        (unsigned)dump[RD_VR_AT + 4 * i + j],
                        (unsigned)rd_vr_pattern(i));
                return 0;
            }
    return 1;
}
#endif

static void test_registers(void)
{
    /* 3: every register set of the SIMD kernels' short-call paths */
    static const size_t sizes[] = { 1, 3, 16 };
#ifdef RD_KEYED
    static const size_t key_sizes[] = { 0, 3, 6, 15, 16, 17, 40 };
#endif
    static uint32_t dump[RD_WORDS];
    uint8_t key[32], nonce[12];
    uint32_t what = 0;
    size_t i, hits;

    if (!rd_usable()) {
        tu_skip("register check: the dump needs the vector facility");
        return;
    }
    for (i = 0; i < sizeof(key); i++)
        key[i] = (uint8_t)(0x6b + 41 * i);
    for (i = 0; i < sizeof(nonce); i++)
        nonce[i] = (uint8_t)(0xa9 + 17 * i);
    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        chacha_state_init(op.st, key, 7, nonce);
        rd_call(real->blocks, out, op.st, sizes[i], dump);
        needles.n = 0;
        ss_add_state(&needles, op.st);
        ss_add_blocks(&needles, op.st, out, sizes[i]);
        hits = reg_hits(dump, &what);
        if (hits != 0)
            tu_diag("%s kernel, %zu blocks: %zu secret words in registers, "
                    "first %08x",
                    real->name, sizes[i], hits, (unsigned)what);
        TU_OK(hits == 0,
              "%s kernel, %zu blocks: no key, nonce, final-round "
              "or keystream word left in a call-clobbered register",
              real->name, sizes[i]);
#ifdef RD_VR_SAVED
        TU_OK(vr_kept(dump),
              "%s kernel, %zu blocks: v20-v31 come back as the caller left "
              "them",
              real->name, sizes[i]);
#endif
#ifdef RD_SAVED
        TU_OK(saved_kept(real->blocks, op.st, sizes[i]),
              "%s kernel, %zu blocks: " RD_SAVED_NAMES " come back as the "
              "caller left them",
              real->name, sizes[i]);
#endif
    }
#ifdef RD_KEYED
    for (i = 0; i < sizeof(key_sizes) / sizeof(key_sizes[0]); i++) {
        uint64_t saved[RD_SAVED];
        size_t r, bad_saved = 0;

        chacha_state_init(op.st, key, 9, nonce);
        rd_call_key(real->blocks_key, keyblk, out, op.st, key_sizes[i], dump);
        needles.n = 0;
        ss_add_state(&needles, op.st);
        add_keyed_blocks(op.st, keyblk, out, key_sizes[i]);
        hits = reg_hits(dump, &what);
        if (hits != 0)
            tu_diag("%s keyed batch, 1 + %zu blocks: %zu secret words in "
                    "registers, first %08x",
                    real->name, key_sizes[i], hits, (unsigned)what);
        TU_OK(hits == 0,
              "%s keyed batch, 1 + %zu blocks: no secret word left in a "
              "call-clobbered register",
              real->name, key_sizes[i]);
        rd_call_key_saved(real->blocks_key, keyblk, out, op.st, key_sizes[i],
                          saved);
        for (r = 0; r < RD_SAVED; r++)
            bad_saved += saved[r] != rd_saved_pattern(r);
        TU_OK(bad_saved == 0,
              "%s keyed batch, 1 + %zu blocks: " RD_SAVED_NAMES " come "
              "back as the caller left them",
              real->name, key_sizes[i]);
    }
#endif
#ifdef RD_VR_SAVED
    rd_call(rd_vr_clobbering_kernel, out, op.st, 1, dump);
    TU_OK(!vr_kept(dump), "the v20-v31 check finds a kernel that changes v25");
#endif
#ifdef RD_SAVED
    TU_OK(!saved_kept(rd_clobbering_kernel, op.st, 1),
          "the callee-saved check finds a kernel that "
          "changes " RD_CLOBBERED_NAME);
#endif
    /* a fresh key, so words the calls above left cannot count here */
    key[0] ^= 0xff;
    chacha_state_init(op.st, key, 7, nonce);
    rd_call(rd_leaky_kernel, out, op.st, 1, dump);
    needles.n = 0;
    ss_add_state(&needles, op.st);
    TU_OK(reg_hits(dump, &what) >= 4,
          "the register check finds key words a careless kernel leaves");
#ifdef RD_HAS_YMM
    if ((rd_features & RD_HAS_YMM) == 0) {
        tu_skip("register check of ymm upper halves: no AVX");
        return;
    }
    key[0] ^= 0xff;
    chacha_state_init(op.st, key, 7, nonce);
    rd_call(rd_leaky_wide_kernel, out, op.st, 1, dump);
    needles.n = 0;
    ss_add_state(&needles, op.st);
    TU_OK(reg_hits(dump, &what) >= 4,
          "the register check finds key words a careless kernel leaves in "
          "the upper half of a ymm register");
#endif
}
#else
static void test_registers(void)
{
    tu_skip("register check: no register dump for this architecture");
}
#endif

static void test_generator(void)
{
    struct chacha_drbg *d = chacha_drbg_new(&recording, NULL, NULL);
    size_t i;

    if (!TU_OK(d != NULL, "new generator"))
        return;
    for (i = 0; i < sizeof(seed); i++)
        seed[i] = (uint8_t)(0x1d + 71 * i);
    for (i = 0; i < sizeof(adin); i++)
        adin[i] = (uint8_t)(0xe4 ^ (5 * i));
    memset(&op, 0, sizeof(op));
    op.d = d;

    op.kind = INSTANTIATE;
    op.elen = sizeof(seed);
    op.adinlen = 20;
    op.what = "instantiate (absorb of seed and personalization)";
    check_op(0);

    op.kind = GENERATE;
    op.adinlen = 0;
    op.n = 100;
    op.what = "generate 100 bytes (refill)";
    check_op(0);

    op.kind = GENERATE_FAST;
    op.n = 16;
    op.what = "generate 16 bytes (fast path, from the buffer)";
    check_op(0);

    op.kind = GENERATE;
    op.n = 50;
    op.adinlen = sizeof(adin);
    op.what = "generate 50 bytes with additional input (absorb, refill)";
    check_op(0);

    op.adinlen = 0;
    op.n = 3000;
    op.what = "generate 3000 bytes (direct, a keyed batch and a last block)";
    check_op(0);

    op.n = sizeof(out);
    op.what = "generate 12000 bytes (direct, a keyed batch and a last block)";
    check_op(0);

    op.n = 1024;
    op.what = "generate 1024 bytes (direct, one keyed batch)";
    check_op(0);

    op.kind = RESEED;
    op.adinlen = 5;
    op.what = "reseed";
    check_op(0);

    chacha_drbg_free(d);
}

static void body(void)
{
    const char *why;

    real = tu_impl_under_test();
    recording = *real;
    recording.blocks = recording_blocks;
    recording.blocks_key = recording_blocks_key;
    test_registers();
    if (!ss_possible(&why)) {
        tu_skip("dead-stack scan: %s", why);
        return;
    }
    test_kernel();
    test_generator();
}

int main(void)
{
    return tu_main_per_impl(body);
}
