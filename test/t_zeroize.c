/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Zeroization, seen from outside the provider (DESIGN.md section 4): the
 * state page of a CHACHA20-DRBG context is found by watching the module's
 * mmap calls (interpose.c), then read directly.  Checked:
 *
 *  - the page is excluded from core dumps (VmFlags "dd" in /proc/self/smaps)
 *    and, where the kernel honours it, wiped in fork children ("wf", and
 *    the child really reads zeros);
 *  - bytes handed out are wiped from the buffer, the key that made them is
 *    gone, the direct path leaves no keystream behind;
 *  - uninstantiate leaves the page all zero (and verify_zeroization agrees),
 *    free unmaps it all zero, also when a thread frees and exits, and the
 *    per-thread generators of the random_bytes fast path are wiped when
 *    their thread exits;
 *  - no seed, key, nonce, final-round or keystream word is left in dead
 *    stack below the caller after instantiate and generate, refill and
 *    direct, with and without a reseed (stackscan.c; skipped under
 *    sanitizers and valgrind, which object to reading dead stack or move
 *    data through it).
 *
 * Runs once per kernel: the stack check is about each kernel's spills.
 */
#define _GNU_SOURCE

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>

#include "capture.h"
#include "chacha_drbg.h"
#include "interpose.h"
#include "provutil.h"
#include "split.h"
#include "stackscan.h"
#include "testutil.h"

#define WIN 8 /* bytes: a random 8-byte match by chance is 2^-64 per place */

static struct pu_env env; /* default and chacharng, both algorithms */

/* Output buffers live here, not on the stack the stack check reads. */
static unsigned char out1[8192], out2[8192];
static unsigned char seed[CHACHA_DRBG_SEED_BYTES];

/* ---------------------------------------------------------------------- */
/* Helpers                                                                */
/* ---------------------------------------------------------------------- */

/* 1 if any |WIN|-byte window of |needle| occurs anywhere in |hay|. */
static int any_window_in(const unsigned char *hay, size_t hlen,
                         const unsigned char *needle, size_t nlen)
{
    size_t i, j;

    for (j = 0; j + WIN <= nlen; j++)
        for (i = 0; i + WIN <= hlen; i++)
            if (hay[i] == needle[j] && memcmp(hay + i, needle + j, WIN) == 0)
                return 1;
    return 0;
}

/* Number of mappings recorded so far (to find the ones a call makes). */
static size_t mark(void)
{
    const struct ip_mapping *m;

    return ip_mappings(&m);
}

/*
 * States come from a pool: mappings of several slots, reused after a
 * context is freed, unmapped only when the provider is unloaded.  To watch
 * one state from its first byte, take every free slot with held contexts
 * (until one would need a new mapping, which is made to fail); the next
 * state is then the first slot of a mapping of its own, as
 * new_state_page() expects.  release_pool() frees the held contexts.
 */
#define MAX_HELD 256

static EVP_RAND_CTX *held[MAX_HELD];
static size_t nheld;

static int fill_pool(void)
{
    int full = 0;

    while (nheld < MAX_HELD) {
        ip_fail_mmap(1);
        held[nheld] = EVP_RAND_CTX_new(env.rand, NULL);
        if (held[nheld] == NULL) {
            full = ip_mmap_fired();
            break;
        }
        nheld++;
    }
    ip_fail_mmap(0);
    ERR_clear_error();
    if (!full)
        tu_diag("the state pool could not be filled (%zu held)", nheld);
    return full;
}

static void release_pool(void)
{
    while (nheld > 0)
        EVP_RAND_CTX_free(held[--nheld]);
}

/*
 * The single live state-sized mapping made since |from|, or NULL (with a
 * diagnostic) if there is not exactly one.
 */
static const struct ip_mapping *new_state_page(size_t from)
{
    const struct ip_mapping *m, *found = NULL;
    size_t n = ip_mappings(&m), i, count = 0;

    for (i = from; i < n; i++) {
        if (m[i].live && m[i].len >= sizeof(struct chacha_drbg_secret)) {
            found = &m[i];
            count++;
        }
    }
    if (count != 1) {
        tu_diag("%zu new state-sized mappings, expected 1", count);
        return NULL;
    }
    return found;
}

/*
 * 1 if every mapping the module made since |from| is now either unmapped
 * having been zero at munmap, or (if |live_ok|) still mapped and all zero.
 */
static int all_gone_zero(size_t from, int live_ok, size_t *count)
{
    const struct ip_mapping *m;
    size_t n = ip_mappings(&m), i;
    int ok = 1;

    *count = n - from;
    for (i = from; i < n; i++) {
        if (m[i].live) {
            if (!live_ok || !ip_all_zero(m[i].addr, m[i].len)) {
                tu_diag("mapping %p (%zu bytes) %s", (void *)m[i].addr,
                        m[i].len,
                        live_ok ? "still holds data" : "still mapped");
                ok = 0;
            }
        } else if (!m[i].zero_at_unmap) {
            tu_diag("mapping %p (%zu bytes) was unmapped with data in it",
                    (void *)m[i].addr, m[i].len);
            ok = 0;
        }
    }
    return ok;
}

static EVP_RAND_CTX *test_parent(void)
{
    EVP_RAND_CTX *t = EVP_RAND_CTX_new(env.test_rand, NULL);
    unsigned int strength = 256;
    unsigned char copy[sizeof(seed)];
    OSSL_PARAM p[3];

    memcpy(copy, seed, sizeof(seed));
    p[0] = OSSL_PARAM_construct_uint(OSSL_RAND_PARAM_STRENGTH, &strength);
    p[1] = OSSL_PARAM_construct_octet_string(OSSL_RAND_PARAM_TEST_ENTROPY, copy,
                                             sizeof(copy));
    p[2] = OSSL_PARAM_construct_end();
    if (t == NULL || !EVP_RAND_CTX_set_params(t, p)
        || !EVP_RAND_instantiate(t, 0, 0, NULL, 0, NULL)) {
        EVP_RAND_CTX_free(t);
        return NULL;
    }
    return t;
}

/* ---------------------------------------------------------------------- */
/* Tests                                                                  */
/* ---------------------------------------------------------------------- */

static void test_state_page(void)
{
    const struct ip_mapping *page;
    struct chacha_drbg_secret *s;
    EVP_RAND_CTX *ctx;
    char flags[256];
    unsigned char old_key[CHACHA_KEY_BYTES], rest[CHACHA_DRBG_BUF_BYTES];
    size_t from, avail, n;
    int ok;

    fill_pool();
    from = mark();
    ctx = EVP_RAND_CTX_new(env.rand, NULL);
    page = ctx != NULL ? new_state_page(from) : NULL;
    release_pool();
    if (!tu_ok(page != NULL, "with the pool full, newctx maps one state "
                             "chunk and takes its first slot"))
        goto end;
    s = (struct chacha_drbg_secret *)page->addr;

    ok = ip_smaps_vmflags(page->addr, flags, sizeof(flags));
    if (chacha_secpage_madvise_works()) {
        tu_ok(ok && ip_vmflags_has(flags, "dd"),
              "state page excluded from core dumps (VmFlags:%s)", flags);
        tu_ok(ok && ip_vmflags_has(flags, "wf"),
              "state page wiped on fork (VmFlags:%s)", flags);
    } else {
        /* qemu-user accepts any madvise and does nothing */
        tu_skip("this kernel ignores madvise: no dump-exclusion flag to see");
        tu_skip("this kernel ignores madvise: no wipe-on-fork flag to see");
    }

    if (!tu_ok(EVP_RAND_instantiate(ctx, 256, 0, NULL, 0, NULL)
                   && !ip_all_zero(s, sizeof(*s)),
               "instantiated: the page holds a state"))
        goto end;

    /* first generate: one refill, 100 bytes handed out from its front */
    EVP_RAND_generate(ctx, out1, 100, 256, 0, NULL, 0);
    avail = s->avail;
    tu_ok(avail == CHACHA_DRBG_BUF_BYTES - 100
              && ip_all_zero(s->ks, CHACHA_BLOCK_BYTES + 100),
          "100 bytes out: rekey block and the 100 bytes wiped, %zu left "
          "(want %d)",
          avail, CHACHA_DRBG_BUF_BYTES - 100);
    tu_ok(!any_window_in(page->addr, page->len, out1, 100),
          "no handed-out byte is left anywhere in the page");

    /* the layout really is what was checked: the rest is the next output */
    memcpy(rest, s->ks + CHACHA_DRBG_KS_BYTES - avail, avail);
    memcpy(old_key, s->state + 4, sizeof(old_key));
    EVP_RAND_generate(ctx, out2, avail, 256, 0, NULL, 0);
    tu_ok(memcmp(out2, rest, avail) == 0 && s->avail == 0
              && ip_all_zero(s->ks, sizeof(s->ks)),
          "draining the buffer serves exactly its bytes and wipes them all");

    /* the next byte needs a refill: the key that made the buffer goes */
    EVP_RAND_generate(ctx, out1, 1, 256, 0, NULL, 0);
    tu_ok(!any_window_in(page->addr, page->len, old_key, sizeof(old_key)),
          "after a refill no part of the old key is in the page");

    /* direct path: nothing of the keystream stays behind */
    n = s->avail + 5000;
    EVP_RAND_generate(ctx, out1, n, 256, 0, NULL, 0);
    tu_ok(s->avail == 0 && ip_all_zero(s->ks, sizeof(s->ks))
              && !any_window_in(page->addr, page->len, out1, n),
          "a %zu-byte request leaves no keystream in the page", n);

    tu_ok(EVP_RAND_verify_zeroization(ctx) == 0,
          "verify_zeroization says no while seeded");
    EVP_RAND_uninstantiate(ctx);
    tu_ok(ip_all_zero(page->addr, page->len)
              && EVP_RAND_verify_zeroization(ctx) == 1,
          "uninstantiate: every byte of the page is zero, "
          "verify_zeroization agrees");

    if (!tu_ok(EVP_RAND_instantiate(ctx, 256, 0, NULL, 0, NULL)
                   && EVP_RAND_generate(ctx, out1, 10, 256, 0, NULL, 0),
               "instantiated again"))
        goto end;
    EVP_RAND_CTX_free(ctx);
    ctx = NULL;
    tu_ok(page->live && ip_all_zero(page->addr, page->len),
          "free: the seeded slot is wiped, its chunk kept for reuse");
    ok = all_gone_zero(from, 1, &n);
    tu_ok(ok, "free: all %zu mappings the context made are all zero", n);

end:
    EVP_RAND_CTX_free(ctx);
}

struct zero_job {
    const struct ip_mapping *page;
    EVP_RAND_CTX *ctx;
};

/* In a fork child: 0 if the state page reads as all zero. */
static int child_sees_zero(void *arg)
{
    const struct zero_job *job = arg;
    int zero = ip_all_zero(job->page->addr, job->page->len);

    /* leave nothing for a leak checker watching the child */
    EVP_RAND_CTX_free(job->ctx);
    return zero ? 0 : 1;
}

static void test_fork_child_sees_zero(void)
{
    const struct ip_mapping *page;
    struct zero_job job;
    EVP_RAND_CTX *ctx;
    size_t from;

    if (!chacha_secpage_madvise_works()) {
        tu_skip("this kernel ignores madvise: fork children keep the page");
        return;
    }
    fill_pool();
    from = mark();
    ctx = EVP_RAND_CTX_new(env.rand, NULL);
    page = ctx != NULL ? new_state_page(from) : NULL;
    release_pool();
    if (!tu_ok(page != NULL && EVP_RAND_instantiate(ctx, 256, 0, NULL, 0, NULL)
                   && EVP_RAND_generate(ctx, out1, 10, 256, 0, NULL, 0),
               "seeded context for the fork check")) {
        EVP_RAND_CTX_free(ctx);
        return;
    }
    job.page = page;
    job.ctx = ctx;
    tu_ok(tu_wait_ok(tu_split(TU_SPLIT_FORK, child_sees_zero, &job, NULL, 0)),
          "a fork child reads the state page as all zero");
    tu_ok(!ip_all_zero(page->addr, page->len),
          "while the parent keeps its state");
    EVP_RAND_CTX_free(ctx);
}

struct thread_job {
    size_t from;
    int ok;
};

static void *thread_uses_ctx(void *arg)
{
    struct thread_job *job = arg;
    EVP_RAND_CTX *ctx = EVP_RAND_CTX_new(env.rand, NULL);

    job->ok = ctx != NULL && EVP_RAND_instantiate(ctx, 256, 0, NULL, 0, NULL)
              && EVP_RAND_generate(ctx, out1, 300, 256, 0, NULL, 0);
    EVP_RAND_CTX_free(ctx);
    return NULL;
}

static void test_thread_exit_ctx(void)
{
    struct thread_job job = { 0, 0 };
    pthread_t th;
    size_t n = 0;

    fill_pool();
    job.from = mark();
    if (!tu_ok(pthread_create(&th, NULL, thread_uses_ctx, &job) == 0,
               "thread started"))
        return;
    pthread_join(th, NULL);
    release_pool();
    job.ok = job.ok && all_gone_zero(job.from, 1, &n);
    tu_ok(job.ok && n >= 1,
          "a thread's own context: its %zu mapping(s) all zero after the "
          "thread exits",
          n);
}

/* ---- the random_bytes fast path, when the provider has one ---------- */

struct rb_job {
    int which, ok, leaked;
};

static void *thread_random_bytes(void *arg)
{
    struct rb_job *job = arg;
    const struct ip_mapping *m;
    size_t n, i;
    int k;

    job->ok = 1;
    for (k = 0; k < 4; k++)
        job->ok &=
            cap_kept.random_bytes(cap_kept.provctx, job->which, out2 + 1000 * k,
                                  k == 3 ? 2500 : 100, 256)
            == 1;
    /* the bytes just handed out are nowhere in the module's pages */
    n = ip_mappings(&m);
    for (i = 0; i < n; i++)
        if (m[i].live && any_window_in(m[i].addr, m[i].len, out2, 400))
            job->leaked = 1;
    return NULL;
}

static void test_dead_stack_random_bytes(void);

static void test_thread_exit_random_bytes(void)
{
    OSSL_LIB_CTX *lc = OSSL_LIB_CTX_new();
    OSSL_PROVIDER *p = NULL;
    char path[4096];
    int which;

    if (lc != NULL && cap_module_init(path, sizeof(path)) != NULL
        && OSSL_PROVIDER_add_builtin(lc, "chacharng", cap_init))
        p = OSSL_PROVIDER_load(lc, "chacharng");
    if (!tu_ok(p != NULL, "provider loaded through an init that keeps its "
                          "dispatch table"))
        goto end;
    if (cap_kept.random_bytes == NULL) {
        tu_skip("the provider exports no random_bytes fast path");
        goto end;
    }
    for (which = 0; which < 2; which++) {
        struct rb_job job = { which, 0, 0 };
        size_t from, n = 0;
        pthread_t th;

        fill_pool();
        from = mark();
        if (pthread_create(&th, NULL, thread_random_bytes, &job) != 0) {
            release_pool();
            tu_ok(0, "thread started");
            continue;
        }
        pthread_join(th, NULL);
        release_pool();
        tu_ok(job.ok && !job.leaked,
              "random_bytes (which=%d): served, handed-out bytes not kept",
              which);
        job.ok = all_gone_zero(from, 1, &n);
        tu_ok(job.ok && n >= 1,
              "random_bytes (which=%d): the thread exits, its %zu "
              "mapping(s) all zero",
              which, n);
    }
    test_dead_stack_random_bytes();

end:
    if (p != NULL)
        OSSL_PROVIDER_unload(p);
    OSSL_LIB_CTX_free(lc);
}

/* ---- nothing secret in dead stack ------------------------------------ */

/*
 * A model of the construction (DESIGN.md section 3) on the C kernel of the
 * test's own copy of chacha/, run after the scan: it gives every state a
 * call ran on and every block it computed, so the needles are the key and
 * nonce words, final-round words and keystream of exactly that call.  The
 * model's resulting state is checked against the page, so the needles are
 * known to be the right ones.
 */
static struct ss_needles needles;
static struct ss_snapshot snap;
static uint8_t model_ks[192 * CHACHA_BLOCK_BYTES]; /* the largest call */

static void model_blocks(uint32_t st[16], size_t nblocks)
{
    ss_add_state(&needles, st);
    chacharng_chacha_blocks_generic(model_ks, st, nblocks);
    ss_add_blocks(&needles, st, model_ks, nblocks);
    /* block 0 is the next key and nonce, in every path */
    chacha_state_init(st, model_ks, 0, model_ks + CHACHA_KEY_BYTES);
}

static void model_absorb(uint32_t st[16], const uint8_t *data, size_t len)
{
    size_t i, take;

    for (; len > 0; data += take, len -= take) {
        take = len < CHACHA_DRBG_ABSORB_CHUNK ? len : CHACHA_DRBG_ABSORB_CHUNK;
        ss_add_state(&needles, st);
        chacharng_chacha_blocks_generic(model_ks, st, 1);
        ss_add_blocks(&needles, st, model_ks, 1);
        for (i = 0; i < take; i++)
            model_ks[i] ^= data[i];
        chacha_state_init(st, model_ks, 0, model_ks + CHACHA_KEY_BYTES);
    }
}

/* A generate of |n| bytes with |avail| buffered: what the kernel made. */
static void model_generate(uint32_t st[16], size_t avail, size_t n)
{
    size_t r = n - (n < avail ? n : avail);

    if (r == 0)
        return;
    if (r > CHACHA_DRBG_BUF_BYTES)
        model_blocks(st, 1 + (r + CHACHA_BLOCK_BYTES - 1) / CHACHA_BLOCK_BYTES);
    else
        model_blocks(st, CHACHA_DRBG_REFILL_BLOCKS);
}

static struct {
    EVP_RAND_CTX *ctx;
    size_t n;
    int instantiate, pred_res, random_bytes;
} evp_op;

static void run_evp_op(void *arg)
{
    (void)arg;
    if (evp_op.random_bytes)
        cap_kept.random_bytes(cap_kept.provctx, 0, out1, evp_op.n, 256);
    else if (evp_op.instantiate)
        EVP_RAND_instantiate(evp_op.ctx, 256, 0, NULL, 0, NULL);
    else
        EVP_RAND_generate(evp_op.ctx, out1, evp_op.n, 256, evp_op.pred_res,
                          NULL, 0);
}

/*
 * Run one EVP call below a painted stack area and look for every secret
 * word it handled among the words it left there.
 */
static void dead_stack_op(struct chacha_drbg_secret *s, const char *what)
{
    uint32_t st[16];
    size_t avail = s->avail, before, after, where = 0;
    uint32_t found = 0;

    memcpy(st, s->state, sizeof(st));
    ss_run(run_evp_op, NULL, &snap);

    needles.n = 0;
    if (evp_op.instantiate || evp_op.pred_res) {
        if (evp_op.instantiate) {
            static const uint8_t zero[CHACHA_KEY_BYTES];

            chacha_state_init(st, zero, 0, zero);
        }
        ss_add_bytes(&needles, seed, sizeof(seed));
        model_absorb(st, seed, sizeof(seed));
        avail = 0;
    }
    if (!evp_op.instantiate)
        model_generate(st, avail, evp_op.n);
    ss_add_state(&needles, s->state);
    ss_add_bytes(&needles, s->ks + CHACHA_DRBG_KS_BYTES - s->avail,
                 s->avail & ~(size_t)3);

    before = ss_hits(snap.before, &needles, &where, &found);
    after = ss_hits(snap.after, &needles, &where, &found);
    if (after != 0)
        tu_diag("%s: %zu secret words among %zu written, first %08x at %zu "
                "bytes below the caller",
                what, after, ss_written(snap.after), (unsigned)found, where);
    tu_ok(memcmp(st, s->state, sizeof(st)) == 0 && before == 0 && after == 0,
          "%s leaves no key, nonce, final-round or keystream word in dead "
          "stack (%zu needles, %zu words written)",
          what, needles.n, ss_written(snap.after));
}

/*
 * The random_bytes fast path: the calling thread's own generator, found
 * by the mapping its first call makes.  Requires the provider loaded by
 * test_thread_exit_random_bytes().
 */
static void test_dead_stack_random_bytes(void)
{
    const struct ip_mapping *page;
    struct chacha_drbg_secret *s;
    const char *why;
    size_t from;

    if (!ss_possible(&why)) {
        tu_skip("dead-stack scan: %s", why);
        return;
    }
    fill_pool();
    from = mark();
    page = cap_kept.random_bytes(cap_kept.provctx, 0, out1, 16, 256) == 1
               ? new_state_page(from)
               : NULL;
    release_pool();
    if (!tu_ok(page != NULL, "random_bytes: this thread's generator found"))
        return;
    s = (struct chacha_drbg_secret *)page->addr;
    evp_op.random_bytes = 1;
    evp_op.n = s->avail + 10;
    dead_stack_op(s, "random_bytes, buffer drained and refilled");
    evp_op.n = 16;
    dead_stack_op(s, "random_bytes, 16 bytes from the buffer");
    evp_op.n = 3000;
    dead_stack_op(s, "random_bytes, 3000 bytes (direct)");
    evp_op.random_bytes = 0;
}

static void test_dead_stack(void)
{
    EVP_RAND_CTX *t = NULL, *ctx = NULL;
    const struct ip_mapping *page;
    struct chacha_drbg_secret *s;
    const char *why;
    size_t from;

    if (!ss_possible(&why)) {
        tu_skip("dead-stack scan: %s", why);
        return;
    }
    t = test_parent();
    fill_pool();
    from = mark();
    ctx = t != NULL ? EVP_RAND_CTX_new(env.rand, t) : NULL;
    page = ctx != NULL ? new_state_page(from) : NULL;
    release_pool();
    if (!tu_ok(page != NULL, "context on a TEST-RAND parent"))
        goto end;
    s = (struct chacha_drbg_secret *)page->addr;
    evp_op.ctx = ctx;

    evp_op.instantiate = 1;
    dead_stack_op(s, "instantiate");
    evp_op.instantiate = 0;
    evp_op.n = 64;
    dead_stack_op(s, "generate 64 bytes (refill)");
    evp_op.n = 1;
    dead_stack_op(s, "generate 1 byte (from the buffer)");
    evp_op.n = 3000;
    dead_stack_op(s, "generate 3000 bytes (direct)");
    evp_op.n = sizeof(out1);
    dead_stack_op(s, "generate 8192 bytes (direct, into the output)");
    evp_op.n = 100;
    evp_op.pred_res = 1;
    dead_stack_op(s, "generate with prediction resistance (reseed, refill)");
    evp_op.pred_res = 0;

end:
    EVP_RAND_CTX_free(ctx);
    EVP_RAND_CTX_free(t);
}

static void body(void)
{
    size_t i;

    for (i = 0; i < sizeof(seed); i++)
        seed[i] = (unsigned char)(0xc3 ^ (i * 37));
    if (!tu_ok(pu_env_init(&env), "providers loaded, algorithms fetched"))
        return;
    if (!tu_ok(ip_attach_module(), "the module is mapped and found"))
        return;

    test_state_page();
    test_fork_child_sees_zero();
    test_thread_exit_ctx();
    test_thread_exit_random_bytes();
    test_dead_stack();

    pu_env_free(&env);
}

int main(void)
{
    /*
     * The dead-stack checks take their needles from a model of the
     * construction, which kernel mixing (on under `auto` where the vDSO
     * serves getrandom) makes unpredictable: the environment wins over
     * every other setting, for the EVP contexts and the random_bytes
     * generators alike.
     */
    setenv("CHACHARNG_KERNEL_MIX", "off", 1);
    return tu_main_per_impl(body);
}
