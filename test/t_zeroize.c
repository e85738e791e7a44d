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
 *  - no seed, key or keystream is left in dead stack below the caller
 *    after instantiate and generate (skipped under sanitizers and valgrind,
 *    which object to reading dead stack or move data through it).
 *
 * Runs once per kernel: the stack check is about each kernel's spills.
 */
#define _GNU_SOURCE

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>

#include "chacha_drbg.h"
#include "interpose.h"
#include "testutil.h"

#ifndef OSSL_FUNC_PROVIDER_RANDOM_BYTES
#define OSSL_FUNC_PROVIDER_RANDOM_BYTES 1032
#endif

/* Sanitizer runtimes move data through the stack on their own account. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif
#ifndef UNDER_SANITIZER
#define UNDER_SANITIZER 0
#endif

#define ALG "CHACHA20-DRBG"
#define PROPQ "provider=chacharng"
#define WIN 8 /* bytes: a random 8-byte match by chance is 2^-64 per place */
#define STACK_SCAN 16384

typedef int random_bytes_fn(void *provctx, int which, void *buf, size_t n,
                            unsigned int strength);

static OSSL_LIB_CTX *libctx;
static OSSL_PROVIDER *deflt, *prov;
static EVP_RAND *rand_alg, *test_rand;

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
    EVP_RAND_CTX *t = EVP_RAND_CTX_new(test_rand, NULL);
    unsigned int strength = 256;
    unsigned char copy[sizeof(seed)];
    OSSL_PARAM p[3];

    memcpy(copy, seed, sizeof(seed));
    p[0] = OSSL_PARAM_construct_uint(OSSL_RAND_PARAM_STRENGTH, &strength);
    p[1] = OSSL_PARAM_construct_octet_string(OSSL_RAND_PARAM_TEST_ENTROPY,
                                             copy, sizeof(copy));
    p[2] = OSSL_PARAM_construct_end();
    if (t == NULL || !EVP_RAND_CTX_set_params(t, p)
        || !EVP_RAND_instantiate(t, 0, 0, NULL, 0, NULL)) {
        EVP_RAND_CTX_free(t);
        return NULL;
    }
    return t;
}

/* ---------------------------------------------------------------------- */
/* Dead-stack scan                                                        */
/* ---------------------------------------------------------------------- */

static int stack_scan_possible(void)
{
    const char *pre = getenv("LD_PRELOAD");

    /* memcheck preloads vgpreload_*.so into the program it runs */
    return !UNDER_SANITIZER
           && (pre == NULL || strstr(pre, "vgpreload") == NULL);
}

/* Make sure the stack pages the scan reads are mapped. */
static __attribute__((noinline)) void prefault_stack(void)
{
    volatile unsigned char pad[STACK_SCAN + 4096];
    size_t i;

    for (i = 0; i < sizeof(pad); i++)
        pad[i] = 0;
}

/*
 * 1 if a |WIN|-byte window of |secret| is in the dead stack below this
 * frame, where the callees of the caller just ran.  Must be called right
 * after the call under test, from the same frame.
 */
static __attribute__((noinline)) int secret_in_dead_stack(
    const unsigned char *secret, size_t len)
{
    uintptr_t top = (uintptr_t)__builtin_frame_address(0);
    static unsigned char copy[STACK_SCAN];
    const volatile unsigned char *src;
    size_t i;

    src = (const volatile unsigned char *)(top - STACK_SCAN);
    /* copy first: the search must not run over its own frame's data */
    for (i = 0; i < STACK_SCAN; i++)
        copy[i] = src[i];
    return any_window_in(copy, STACK_SCAN, secret, len);
}

/* Leave |secret| in this function's frame, as a careless callee would. */
static __attribute__((noinline)) void plant_secret(const unsigned char *secret,
                                                   size_t len)
{
    volatile unsigned char frame[256];
    size_t i;

    for (i = 0; i < len && i < sizeof(frame); i++)
        frame[i] = secret[i];
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
    size_t from = mark(), avail, n;
    int ok;

    ctx = EVP_RAND_CTX_new(rand_alg, NULL);
    page = ctx != NULL ? new_state_page(from) : NULL;
    if (!tu_ok(page != NULL, "newctx maps one state page"))
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
    tu_ok(!page->live && page->zero_at_unmap,
          "free: the seeded page is unmapped, all zero when unmapped");
    ok = all_gone_zero(from, 0, &n);
    tu_ok(ok, "free: all %zu mappings the context made are gone, all zero",
          n);

 end:
    EVP_RAND_CTX_free(ctx);
}

static void test_fork_child_sees_zero(void)
{
    const struct ip_mapping *page;
    EVP_RAND_CTX *ctx;
    size_t from = mark();
    int status = -1;
    pid_t pid;

    if (!chacha_secpage_madvise_works()) {
        tu_skip("this kernel ignores madvise: fork children keep the page");
        return;
    }
    ctx = EVP_RAND_CTX_new(rand_alg, NULL);
    page = ctx != NULL ? new_state_page(from) : NULL;
    if (!tu_ok(page != NULL
                   && EVP_RAND_instantiate(ctx, 256, 0, NULL, 0, NULL)
                   && EVP_RAND_generate(ctx, out1, 10, 256, 0, NULL, 0),
               "seeded context for the fork check")) {
        EVP_RAND_CTX_free(ctx);
        return;
    }
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        int zero = ip_all_zero(page->addr, page->len);

        /* leave nothing for a leak checker watching the child */
        EVP_RAND_CTX_free(ctx);
        _exit(zero ? 0 : 1);
    }
    if (pid > 0)
        waitpid(pid, &status, 0);
    tu_ok(pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
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
    EVP_RAND_CTX *ctx = EVP_RAND_CTX_new(rand_alg, NULL);

    job->ok = ctx != NULL && EVP_RAND_instantiate(ctx, 256, 0, NULL, 0, NULL)
              && EVP_RAND_generate(ctx, out1, 300, 256, 0, NULL, 0);
    EVP_RAND_CTX_free(ctx);
    return NULL;
}

static void test_thread_exit_ctx(void)
{
    struct thread_job job = { mark(), 0 };
    pthread_t th;
    size_t n = 0;

    if (!tu_ok(pthread_create(&th, NULL, thread_uses_ctx, &job) == 0,
               "thread started"))
        return;
    pthread_join(th, NULL);
    job.ok = job.ok && all_gone_zero(job.from, 0, &n);
    tu_ok(job.ok && n >= 1,
          "a thread's own context: its %zu mapping(s) gone, all zero, "
          "after the thread exits",
          n);
}

/* ---- the random_bytes fast path, when the provider has one ---------- */

static OSSL_provider_init_fn *real_init;
static random_bytes_fn *random_bytes;
static void *rb_provctx;

static int capture_init(const OSSL_CORE_HANDLE *handle,
                        const OSSL_DISPATCH *in, const OSSL_DISPATCH **out,
                        void **provctx)
{
    const OSSL_DISPATCH *d;

    if (!real_init(handle, in, out, provctx))
        return 0;
    for (d = *out; d->function_id != 0; d++)
        if (d->function_id == OSSL_FUNC_PROVIDER_RANDOM_BYTES)
            random_bytes = (random_bytes_fn *)d->function;
    rb_provctx = *provctx;
    return 1;
}

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
        job->ok &= random_bytes(rb_provctx, job->which, out2 + 1000 * k,
                                k == 3 ? 2500 : 100, 256) == 1;
    /* the bytes just handed out are nowhere in the module's pages */
    n = ip_mappings(&m);
    for (i = 0; i < n; i++)
        if (m[i].live && any_window_in(m[i].addr, m[i].len, out2, 400))
            job->leaked = 1;
    return NULL;
}

static void test_thread_exit_random_bytes(void)
{
    OSSL_LIB_CTX *lc = OSSL_LIB_CTX_new();
    OSSL_PROVIDER *p = NULL;
    const char *dir = getenv("OPENSSL_MODULES");
    char path[4096];
    void *h;
    int which;

    snprintf(path, sizeof(path), "%s/chacharng.so", dir != NULL ? dir : ".");
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    real_init = h != NULL ? (OSSL_provider_init_fn *)dlsym(
                                h, "OSSL_provider_init")
                          : NULL;
    if (lc != NULL && real_init != NULL
        && OSSL_PROVIDER_add_builtin(lc, "chacharng", capture_init))
        p = OSSL_PROVIDER_load(lc, "chacharng");
    if (!tu_ok(p != NULL, "provider loaded through an init that keeps its "
                          "dispatch table"))
        goto end;
    if (random_bytes == NULL) {
        tu_skip("the provider exports no random_bytes fast path");
        goto end;
    }
    for (which = 0; which < 2; which++) {
        struct rb_job job = { which, 0, 0 };
        size_t from = mark(), n = 0;
        pthread_t th;

        if (pthread_create(&th, NULL, thread_random_bytes, &job) != 0) {
            tu_ok(0, "thread started");
            continue;
        }
        pthread_join(th, NULL);
        tu_ok(job.ok && !job.leaked,
              "random_bytes (which=%d): served, handed-out bytes not kept",
              which);
        job.ok = all_gone_zero(from, 0, &n);
        tu_ok(job.ok,
              "random_bytes (which=%d): the thread exits, its %zu "
              "mapping(s) unmapped, all zero",
              which, n);
    }

 end:
    if (p != NULL)
        OSSL_PROVIDER_unload(p);
    OSSL_LIB_CTX_free(lc);
    if (h != NULL)
        dlclose(h);
}

/* ---- nothing secret in dead stack ------------------------------------ */

static void test_dead_stack(void)
{
    EVP_RAND_CTX *t = NULL, *ctx = NULL;
    const struct ip_mapping *page;
    struct chacha_drbg_secret *s;
    unsigned char *key_before, *ks_tail;
    static unsigned char old_key[CHACHA_KEY_BYTES], new_key[CHACHA_KEY_BYTES];
    static unsigned char buffered[CHACHA_DRBG_BUF_BYTES];
    size_t from, avail;
    int found;

    if (!stack_scan_possible()) {
        tu_skip("dead-stack scan: not under a sanitizer or valgrind");
        return;
    }
    t = test_parent();
    from = mark();
    ctx = t != NULL ? EVP_RAND_CTX_new(rand_alg, t) : NULL;
    page = ctx != NULL ? new_state_page(from) : NULL;
    if (!tu_ok(page != NULL, "context on a TEST-RAND parent"))
        goto end;
    s = (struct chacha_drbg_secret *)page->addr;

    /* the scan must be able to see what a careless callee leaves */
    prefault_stack();
    plant_secret(seed, sizeof(seed));
    found = secret_in_dead_stack(seed, sizeof(seed));
    tu_ok(found, "the dead-stack scan finds a planted secret");

    prefault_stack();
    EVP_RAND_instantiate(ctx, 256, 0, NULL, 0, NULL);
    found = secret_in_dead_stack(seed, sizeof(seed));
    tu_ok(!found, "instantiate leaves no part of the seed in dead stack");

    /* a refill: the kernel runs on the old key and makes the new one */
    key_before = (unsigned char *)(s->state + 4);
    memcpy(old_key, key_before, sizeof(old_key));
    prefault_stack();
    EVP_RAND_generate(ctx, out1, 64, 256, 0, NULL, 0);
    found = secret_in_dead_stack(old_key, sizeof(old_key));
    memcpy(new_key, s->state + 4, sizeof(new_key));
    avail = s->avail;
    ks_tail = s->ks + CHACHA_DRBG_KS_BYTES - avail;
    memcpy(buffered, ks_tail, avail);
    tu_ok(!found, "generate (refill) leaves no part of the old key in dead "
                  "stack");
    prefault_stack();
    EVP_RAND_generate(ctx, out1, 1, 256, 0, NULL, 0);
    found = secret_in_dead_stack(new_key, sizeof(new_key))
            || secret_in_dead_stack(buffered + 1, avail - 1);
    tu_ok(!found, "generate leaves neither the current key nor buffered "
                  "keystream in dead stack");

    /* the direct path writes to the caller: nothing on the stack either */
    memcpy(old_key, s->state + 4, sizeof(old_key));
    prefault_stack();
    EVP_RAND_generate(ctx, out2, 6000, 256, 0, NULL, 0);
    found = secret_in_dead_stack(old_key, sizeof(old_key))
            || secret_in_dead_stack((unsigned char *)(s->state + 4),
                                    CHACHA_KEY_BYTES)
            || secret_in_dead_stack(out2 + 6000 - 64, 64);
    tu_ok(!found, "the direct path leaves no key or output in dead stack");

 end:
    EVP_RAND_CTX_free(ctx);
    EVP_RAND_CTX_free(t);
}

static void body(void)
{
    size_t i;

    for (i = 0; i < sizeof(seed); i++)
        seed[i] = (unsigned char)(0xc3 ^ (i * 37));
    libctx = OSSL_LIB_CTX_new();
    deflt = libctx != NULL ? OSSL_PROVIDER_load(libctx, "default") : NULL;
    prov = libctx != NULL ? OSSL_PROVIDER_load(libctx, "chacharng") : NULL;
    rand_alg = prov != NULL ? EVP_RAND_fetch(libctx, ALG, PROPQ) : NULL;
    test_rand = deflt != NULL ? EVP_RAND_fetch(libctx, "TEST-RAND",
                                               "provider=default")
                              : NULL;
    if (!tu_ok(rand_alg != NULL && test_rand != NULL,
               "providers loaded, algorithms fetched")) {
        ERR_print_errors_fp(stdout);
        return;
    }
    if (!tu_ok(ip_attach_module(), "the module is mapped and found"))
        return;

    test_state_page();
    test_fork_child_sees_zero();
    test_thread_exit_ctx();
    test_thread_exit_random_bytes();
    test_dead_stack();

    EVP_RAND_free(test_rand);
    EVP_RAND_free(rand_alg);
    OSSL_PROVIDER_unload(prov);
    OSSL_PROVIDER_unload(deflt);
    OSSL_LIB_CTX_free(libctx);
}

int main(void)
{
    return tu_main_per_impl(body);
}
