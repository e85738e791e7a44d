/* SPDX-License-Identifier: Apache-2.0 */
/*
 * chacharng as the random generator of all of libcrypto, used as
 * applications use it: RAND_bytes and RAND_priv_bytes.
 *
 * Part 1, every OpenSSL version: the default library context configured by
 * openssl.cnf.sample.  The primary, public and private DRBGs must be
 * CHACHA20-DRBG from chacharng; many threads and forked children must
 * never see a repeated block; reseeding the primary must make its children
 * reseed; per-thread DRBGs must be freed when their threads exit.
 *
 * Part 2, OpenSSL 3.5+ (skipped before, with the reason): library contexts
 * configured by openssl-random-provider.cnf.sample, where RAND_bytes calls
 * chacharng's random_bytes directly.  Generators are counted through the
 * wipe-on-fork pages they live in (/proc/self/smaps "wf"): one per thread
 * and per RAND_bytes/RAND_priv_bytes, none left after thread exit or
 * provider teardown.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <openssl/conf.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <openssl/rand.h>

#include "chacha.h"
#include "chacha_drbg.h"
#include "errq.h"
#include "records.h"
#include "secpage.h"
#include "split.h"
#include "statepool.h"
#include "testutil.h"

#define REC TU_REC /* outputs are compared record by record */
#define NTHREADS 8
#define NCALLS 400 /* per thread; lengths 16..64 */
#define NKIDS 16   /* forked children per fork test */
#define SHORT_THREADS 2000
#define SHORT_BATCH 50
#define TD_THREADS 4 /* threads alive across provider teardown */
#define BIG (3 * ((size_t)1 << 20) + 100) /* crosses max_request twice */

static const char *builddir;
static int have_wf;    /* the kernel honours MADV_WIPEONFORK */
static long gen_bytes; /* mapped bytes of one generator */

/* ------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------ */

/* RAND_bytes or RAND_priv_bytes, on |lc| or (NULL) the default context. */
static int draw(OSSL_LIB_CTX *lc, int priv, unsigned char *buf, size_t len)
{
    if (lc == NULL)
        return priv ? RAND_priv_bytes(buf, (int)len)
                    : RAND_bytes(buf, (int)len);
    return priv ? RAND_priv_bytes_ex(lc, buf, len, 0)
                : RAND_bytes_ex(lc, buf, len, 0);
}

/*
 * Bytes of this process's memory in wipe-on-fork mappings: chacharng maps
 * every generator that way and nothing else in the process does, so this
 * counts live generators without any hook in the provider.  The one other
 * kind, glibc 2.41+'s per-thread vDSO getrandom states (reached through
 * kernel mixing), is MAP_DROPPABLE ("dp") and kept for reuse after a
 * thread exits: it is left out.  -1 if /proc/self/smaps cannot be read.
 */
static long wf_bytes(void)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[1024];
    long size = 0, total = 0, kb;

    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL) {
        if (sscanf(line, "Size: %ld kB", &kb) == 1) {
            size = kb;
        } else if (strncmp(line, "VmFlags:", 8) == 0) {
            char *tok, *save = NULL;
            int wf = 0, dp = 0;

            for (tok = strtok_r(line + 8, " \n", &save); tok != NULL;
                 tok = strtok_r(NULL, " \n", &save)) {
                wf |= strcmp(tok, "wf") == 0;
                dp |= strcmp(tok, "dp") == 0;
            }
            if (wf && !dp)
                total += size;
        }
    }
    fclose(f);
    return total * 1024;
}

/*
 * Seeded generator states in this process: the slots of the module's
 * wipe-on-fork mappings that are not all zero (a freed state is wiped).
 * Mappings are CHACHA_POOL_CHUNK_BYTES (page-rounded) each; the kernel may
 * merge neighbours into one VMA, so each VMA is walked chunk by chunk.
 */
static long wf_states(void)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    size_t chunk = (CHACHA_POOL_CHUNK_BYTES + pg - 1) / pg * pg;
    size_t slots = chunk / CHACHA_POOL_SLOT_BYTES;
    char line[1024];
    unsigned long lo = 0, hi = 0, a, b;
    long total = 0;

    if (f == NULL)
        return -1;
    if (slots > 64)
        slots = 64;
    while (fgets(line, sizeof(line), f) != NULL) {
        if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') != NULL
            && strncmp(line, "VmFlags", 7) != 0) {
            lo = a;
            hi = b;
        } else if (strncmp(line, "VmFlags:", 8) == 0) {
            char *tok, *save = NULL;
            int wf = 0, dp = 0;
            unsigned long c;
            size_t i;

            for (tok = strtok_r(line + 8, " \n", &save); tok != NULL;
                 tok = strtok_r(NULL, " \n", &save)) {
                wf |= strcmp(tok, "wf") == 0;
                dp |= strcmp(tok, "dp") == 0;
            }
            if (!wf || dp)
                continue;
            for (c = lo; c + chunk <= hi; c += chunk)
                for (i = 0; i < slots; i++) {
                    const volatile unsigned char *q =
                        (const unsigned char *)c + i * CHACHA_POOL_SLOT_BYTES;
                    unsigned char acc = 0;
                    size_t j;

                    for (j = 0; j < CHACHA_POOL_SLOT_BYTES; j++)
                        acc |= q[j];
                    total += acc != 0;
                }
        }
    }
    fclose(f);
    return total;
}

static int openssl_at_least(unsigned int major, unsigned int minor)
{
    return OPENSSL_version_major() > major
           || (OPENSSL_version_major() == major
               && OPENSSL_version_minor() >= minor);
}

static char *path_in_builddir(const char *name)
{
    size_t n = strlen(builddir) + strlen(name) + 2;
    char *p = malloc(n);

    if (p != NULL)
        snprintf(p, n, "%s/%s", builddir, name);
    return p;
}

/* A library context configured by |file|; NULL (with diagnostics) if not. */
static OSSL_LIB_CTX *ctx_from_config(const char *file)
{
    OSSL_LIB_CTX *lc = OSSL_LIB_CTX_new();

    if (lc != NULL && OSSL_LIB_CTX_load_config(lc, file))
        return lc;
    tu_diag("cannot load %s into a new library context:", file);
    tu_err_print();
    OSSL_LIB_CTX_free(lc);
    return NULL;
}

/* Write |text| to a new file in $TMPDIR (or /tmp); returns its name. */
static char *temp_config(const char *text)
{
    const char *dir = getenv("TMPDIR");
    size_t len = strlen(text), n;
    char *name;
    int fd;

    if (dir == NULL || *dir == '\0')
        dir = "/tmp";
    n = strlen(dir) + sizeof("/chacharng-lib.XXXXXX");
    if ((name = malloc(n)) == NULL)
        return NULL;
    snprintf(name, n, "%s/chacharng-lib.XXXXXX", dir);
    if ((fd = mkstemp(name)) < 0) {
        free(name);
        return NULL;
    }
    if (write(fd, text, len) != (ssize_t)len) {
        close(fd);
        unlink(name);
        free(name);
        return NULL;
    }
    close(fd);
    return name;
}

/* ------------------------------------------------------------------------
 * Threads
 * ------------------------------------------------------------------------ */

struct job {
    OSSL_LIB_CTX *lc;
    unsigned int id;
    struct tu_recs recs;
    int failed;
    pthread_barrier_t *hold; /* teardown test: wait twice before exiting */
};

static void *draw_many(void *arg)
{
    struct job *j = arg;
    unsigned char buf[64];
    unsigned int i;

    for (i = 0; i < NCALLS; i++) {
        size_t len = REC * (1 + (i + j->id) % 4);

        if (draw(j->lc, (int)(i & 1), buf, len) != 1
            || !tu_recs_add(&j->recs, buf, len))
            j->failed++;
    }
    return NULL;
}

/* Draw once from each generator; with |hold|, stay alive until released. */
static void *draw_once(void *arg)
{
    struct job *j = arg;
    unsigned char buf[REC];

    if (draw(j->lc, 0, buf, sizeof(buf)) != 1
        || draw(j->lc, 1, buf, sizeof(buf)) != 1)
        j->failed++;
    if (j->hold != NULL) {
        pthread_barrier_wait(j->hold);
        pthread_barrier_wait(j->hold);
    }
    return NULL;
}

/* NTHREADS threads draw at once; every block of theirs and ours distinct. */
static void test_threads(OSSL_LIB_CTX *lc, const char *mode)
{
    struct job jobs[NTHREADS];
    pthread_t th[NTHREADS];
    struct tu_recs all = { 0 };
    unsigned char buf[64];
    int started = 0, failed = 0, i;

    memset(jobs, 0, sizeof(jobs));
    for (i = 0; i < NTHREADS; i++) {
        jobs[i].lc = lc;
        jobs[i].id = (unsigned int)i;
        if (pthread_create(&th[i], NULL, draw_many, &jobs[i]) == 0)
            started++;
        else
            jobs[i].failed = -1;
    }
    /* the main thread draws at the same time */
    for (i = 0; i < NCALLS; i++) {
        if (draw(lc, i & 1, buf, sizeof(buf)) != 1
            || !tu_recs_add(&all, buf, 64))
            failed++;
    }
    for (i = 0; i < NTHREADS; i++) {
        if (jobs[i].failed < 0)
            continue;
        pthread_join(th[i], NULL);
        failed += jobs[i].failed;
        if (!tu_recs_add(&all, jobs[i].recs.p, jobs[i].recs.n * REC))
            failed++;
        tu_recs_free(&jobs[i].recs);
    }
    if (failed)
        tu_err_print();
    TU_OK(started == NTHREADS && failed == 0,
          "%s: %d threads and the main thread, %d calls each, all succeed",
          mode, NTHREADS, NCALLS);
    TU_OK(tu_recs_distinct(&all, mode),
          "%s: no 16-byte block repeats across %zu blocks from %d threads",
          mode, all.n, NTHREADS + 1);
    tu_recs_free(&all);
}

/*
 * SHORT_THREADS threads, SHORT_BATCH at a time, each drawing from both
 * generators once; none may be left seeded when they have exited, and the
 * state pool grows to what one batch holds at once, not with every thread.
 */
static void test_short_threads(OSSL_LIB_CTX *lc, const char *mode)
{
    struct job jobs[SHORT_BATCH];
    pthread_t th[SHORT_BATCH];
    long before, after, bytes_before, grown, bound;
    int done = 0, failed = 0, i, n;

    if (!have_wf) {
        tu_skip("%s: generator count: MADV_WIPEONFORK not honoured here", mode);
        return;
    }
    before = wf_states();
    bytes_before = wf_bytes();
    while (done < SHORT_THREADS) {
        memset(jobs, 0, sizeof(jobs));
        for (n = 0; n < SHORT_BATCH; n++) {
            jobs[n].lc = lc;
            if (pthread_create(&th[n], NULL, draw_once, &jobs[n]) != 0)
                break;
        }
        for (i = 0; i < n; i++) {
            pthread_join(th[i], NULL);
            failed += jobs[i].failed;
        }
        if (n == 0) {
            failed++;
            break;
        }
        done += n;
    }
    after = wf_states();
    grown = wf_bytes() - bytes_before;
    /*
     * Without reuse the pool would grow by two states for every thread.
     * One batch at a time needs 2 * SHORT_BATCH, but a loaded machine has
     * been seen to hold up to four batches' worth at once; a tenth of the
     * no-reuse growth still tells the two apart by far.
     */
    bound = (2 * SHORT_THREADS / 10
                 / (CHACHA_POOL_CHUNK_BYTES / CHACHA_POOL_SLOT_BYTES)
             + 2)
            * CHACHA_POOL_CHUNK_BYTES;
    if (failed)
        tu_err_print();
    TU_OK(failed == 0 && done >= SHORT_THREADS && before >= 0 && after == before
              && grown <= bound,
          "%s: %d short-lived threads leave no generator behind "
          "(seeded states %ld before, %ld after; pool grew %ld bytes, "
          "at most %ld)",
          mode, done, before, after, grown, bound);
}

/* ------------------------------------------------------------------------
 * Fork
 * ------------------------------------------------------------------------ */

struct fork_job {
    OSSL_LIB_CTX *lc;
    int fds[2]; /* the pipe to the parent */
};

/* In a fork child: 64 public and 64 private bytes, sent to the parent. */
static int child_draws(void *arg)
{
    const struct fork_job *job = arg;
    unsigned char buf[128];
    int ok;

    close(job->fds[0]);
    ok = draw(job->lc, 0, buf, 64) == 1 && draw(job->lc, 1, buf + 64, 64) == 1
         && tu_write_full(job->fds[1], buf, 128);
    return ok ? 0 : 1;
}

/*
 * Prime both generators (so bytes sit buffered), fork NKIDS children that
 * each draw 64 public and 64 private bytes, then draw as much again in
 * the parent.  A child that replayed its parent's state would repeat.
 */
static void test_fork(OSSL_LIB_CTX *lc, const char *mode)
{
    struct tu_recs all = { 0 };
    unsigned char buf[128];
    int k, failed = 0;

    if (draw(lc, 0, buf, 100) != 1 || draw(lc, 1, buf, 100) != 1)
        failed++;
    for (k = 0; k < NKIDS; k++) {
        struct fork_job job = { lc, { -1, -1 } };
        pid_t pid;
        int got;

        if (pipe(job.fds) != 0) {
            failed++;
            break;
        }
        pid = tu_split(TU_SPLIT_FORK, child_draws, &job, NULL, 0);
        if (pid < 0) {
            close(job.fds[0]);
            close(job.fds[1]);
            failed++;
            break;
        }
        close(job.fds[1]);
        got = tu_read_full(job.fds[0], buf, 128);
        close(job.fds[0]);
        if (!tu_wait_ok(pid) || !got) {
            failed++;
            continue;
        }
        if (!tu_recs_add(&all, buf, 128))
            failed++;
    }
    if (draw(lc, 0, buf, 64) != 1 || draw(lc, 1, buf + 64, 64) != 1
        || !tu_recs_add(&all, buf, 128))
        failed++;
    if (failed)
        tu_err_print();
    TU_OK(failed == 0, "%s: %d forked children draw 64+64 bytes each", mode,
          NKIDS);
    TU_OK(failed == 0 && tu_recs_distinct(&all, mode),
          "%s: children never repeat each other or the parent after fork",
          mode);
    tu_recs_free(&all);
}

/* ------------------------------------------------------------------------
 * Part 1: the DRBG chain of the default context (openssl.cnf.sample)
 * ------------------------------------------------------------------------ */

static int get_uint_param(EVP_RAND_CTX *ctx, const char *key, unsigned int *val)
{
    OSSL_PARAM p[2];

    p[0] = OSSL_PARAM_construct_uint(key, val);
    p[1] = OSSL_PARAM_construct_end();
    return EVP_RAND_CTX_get_params(ctx, p) && OSSL_PARAM_modified(&p[0]);
}

static int is_ours(EVP_RAND_CTX *ctx)
{
    const EVP_RAND *r = ctx != NULL ? EVP_RAND_CTX_get0_rand(ctx) : NULL;

    return r != NULL && strcmp(EVP_RAND_get0_name(r), "CHACHA20-DRBG") == 0
           && strcmp(OSSL_PROVIDER_get0_name(EVP_RAND_get0_provider(r)),
                     "chacharng")
                  == 0;
}

static void test_chain(void)
{
    EVP_RAND_CTX *primary = RAND_get0_primary(NULL);
    EVP_RAND_CTX *pub = RAND_get0_public(NULL);
    EVP_RAND_CTX *priv = RAND_get0_private(NULL);
    unsigned int c_pri[2], c_pub[3], c_priv[3];
    unsigned char buf[32];
    char impl[32] = "";
    OSSL_PARAM p[2];
    int ok;

    TU_OK(is_ours(primary),
          "chain: the primary DRBG is CHACHA20-DRBG @ chacharng");
    TU_OK(is_ours(pub), "chain: the public DRBG is CHACHA20-DRBG @ chacharng");
    TU_OK(is_ours(priv),
          "chain: the private DRBG is CHACHA20-DRBG @ chacharng");
    if (primary == NULL || pub == NULL || priv == NULL) {
        tu_err_print();
        return;
    }
    p[0] = OSSL_PARAM_construct_utf8_string("impl", impl, sizeof(impl));
    p[1] = OSSL_PARAM_construct_end();
    ok = EVP_RAND_CTX_get_params(primary, p);
    TU_OK(ok && strcmp(impl, tu_expected_impl()) == 0,
          "chain: the primary runs the %s kernel (reports '%s')",
          tu_expected_impl(), impl);
    TU_OK(RAND_status() == 1, "chain: RAND_status() is 1");

    ok = RAND_bytes(buf, 16) == 1 && RAND_priv_bytes(buf, 16) == 1
         && get_uint_param(primary, "reseed_counter", &c_pri[0])
         && get_uint_param(pub, "reseed_counter", &c_pub[0])
         && get_uint_param(priv, "reseed_counter", &c_priv[0])
         && RAND_bytes(buf, 16) == 1 && RAND_priv_bytes(buf, 16) == 1
         && get_uint_param(pub, "reseed_counter", &c_pub[1])
         && get_uint_param(priv, "reseed_counter", &c_priv[1]);
    TU_OK(ok && c_pub[1] == c_pub[0] && c_priv[1] == c_priv[0],
          "chain: without a cause the children do not reseed "
          "(public %u -> %u, private %u -> %u)",
          c_pub[0], c_pub[1], c_priv[0], c_priv[1]);
    ok = ok && EVP_RAND_reseed(primary, 0, NULL, 0, NULL, 0) == 1
         && get_uint_param(primary, "reseed_counter", &c_pri[1]);
    TU_OK(ok && c_pri[1] != c_pri[0],
          "chain: EVP_RAND_reseed on the primary moves its reseed_counter "
          "(%u -> %u)",
          c_pri[0], c_pri[1]);
    ok = ok && RAND_bytes(buf, 16) == 1 && RAND_priv_bytes(buf, 16) == 1
         && get_uint_param(pub, "reseed_counter", &c_pub[2])
         && get_uint_param(priv, "reseed_counter", &c_priv[2]);
    TU_OK(ok && c_pub[2] != c_pub[1],
          "chain: the public DRBG follows its parent, the primary "
          "(reseed_counter %u -> %u)",
          c_pub[1], c_pub[2]);
    TU_OK(ok && c_priv[2] != c_priv[1],
          "chain: the private DRBG follows its parent, the primary "
          "(reseed_counter %u -> %u)",
          c_priv[1], c_priv[2]);
    if (!ok)
        tu_err_print();
}

static void part_chain(void)
{
    char *sample = path_in_builddir("openssl.cnf.sample");
    OPENSSL_INIT_SETTINGS *set = OPENSSL_INIT_new();
    int ok;

    /* the default context reads the sample, as OPENSSL_CONF=... would */
    ok = sample != NULL && set != NULL
         && OPENSSL_INIT_set_config_filename(set, sample)
         && OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CONFIG, set);
    OPENSSL_INIT_free(set);
    if (!TU_OK(ok,
               "chain: openssl.cnf.sample loads (config_diagnostics = 1)")) {
        tu_err_print();
        free(sample);
        return;
    }
    free(sample);
    test_chain();
    test_threads(NULL, "chain");
    test_fork(NULL, "chain");
    test_short_threads(NULL, "chain");
}

/* ------------------------------------------------------------------------
 * Part 2: the random provider (openssl-random-provider.cnf.sample, 3.5+)
 * ------------------------------------------------------------------------ */

/* What part 2 would check; each is skipped with the reason on 3.0-3.4. */
static const char *const rp_checks[] = {
    "random provider: the sample loads",
    "random provider: RAND_bytes makes one generator for this thread",
    "random provider: RAND_priv_bytes makes a second generator",
    "random provider: later calls make no more generators",
    "random provider: public and private streams differ",
    "random provider: strength 256 is served",
    "random provider: strength 257 is refused with chacharng's error",
    "random provider: a 3 MiB request is served in 1 MiB pieces",
    "random provider: threads (2 checks)",
    "random provider: fork (2 checks)",
    "random provider: short-lived threads leave no generator",
    "random provider: teardown unmaps live threads' generators (3 checks)",
    "random provider: only chacharng, only random_provider (3 checks)",
    "random provider: RAND_set1_random_provider",
};

static void test_generators(OSSL_LIB_CTX *lc)
{
    unsigned char a[64], b[64];
    long base = wf_states(), d1, d2, d3;
    int i, ok;

    if (!have_wf) {
        for (i = 0; i < 3; i++)
            tu_skip("random provider: generator count: MADV_WIPEONFORK not "
                    "honoured here");
    } else {
        ok = RAND_bytes_ex(lc, a, sizeof(a), 0) == 1;
        d1 = wf_states() - base;
        TU_OK(ok && d1 == 1,
              "random provider: RAND_bytes makes one generator for this "
              "thread (%ld seeded states more)",
              d1);
        ok = RAND_priv_bytes_ex(lc, b, sizeof(b), 0) == 1;
        d2 = wf_states() - base;
        TU_OK(ok && d2 == 2,
              "random provider: RAND_priv_bytes makes a second generator, "
              "its own (%ld seeded states more)",
              d2);
        for (i = 0; ok && i < 1000; i++)
            ok = RAND_bytes_ex(lc, a, 1 + i % 64, 0) == 1
                 && RAND_priv_bytes_ex(lc, b, 1 + i % 64, 0) == 1;
        d3 = wf_states() - base;
        TU_OK(ok && d3 == d2,
              "random provider: 2000 more calls make no more generators "
              "(%ld bytes mapped)",
              d3);
    }
    ok = RAND_bytes_ex(lc, a, sizeof(a), 0) == 1
         && RAND_priv_bytes_ex(lc, b, sizeof(b), 0) == 1;
    TU_OK(ok && memcmp(a, b, sizeof(a)) != 0,
          "random provider: RAND_bytes and RAND_priv_bytes give different "
          "bytes");
}

static void test_requests(OSSL_LIB_CTX *lc)
{
    unsigned char buf[32];
    unsigned char *big = malloc(BIG);
    struct tu_recs r = { 0 };
    int ok;

    ERR_clear_error();
    TU_OK(RAND_bytes_ex(lc, buf, sizeof(buf), 256) == 1,
          "random provider: strength 256 is served");
    ok = RAND_bytes_ex(lc, buf, sizeof(buf), 257) == 1;
    TU_OK(!ok
              && tu_err_find(NULL, "strength", NULL,
                             TU_ERR_EITHER | TU_ERR_QUIET),
          "random provider: strength 257 is refused with chacharng's error");
    ok = RAND_priv_bytes_ex(lc, buf, sizeof(buf), 257) == 1;
    TU_OK(!ok
              && tu_err_find(NULL, "strength", NULL,
                             TU_ERR_EITHER | TU_ERR_QUIET),
          "random provider: RAND_priv_bytes refuses strength 257 too");

    ok = big != NULL && RAND_bytes_ex(lc, big, BIG, 0) == 1
         && tu_recs_add(&r, big, BIG);
    TU_OK(ok && tu_recs_distinct(&r, "big request"),
          "random provider: a %zu-byte request (3 pieces of max_request and "
          "a tail) has no repeated or zero block",
          (size_t)BIG);
    tu_recs_free(&r);
    free(big);
}

/*
 * TD_THREADS threads draw from a second context and stay alive while that
 * context is freed: teardown must unmap their generators, and the threads
 * must then exit without a destructor running into freed state.
 */
static void test_teardown(const char *sample)
{
    OSSL_LIB_CTX *lc2;
    struct job jobs[TD_THREADS];
    pthread_t th[TD_THREADS];
    pthread_barrier_t hold;
    long base, base_bytes, live, after, after_bytes;
    int i, n = 0, failed = 0;

    if (!have_wf) {
        for (i = 0; i < 3; i++)
            tu_skip("random provider: teardown: MADV_WIPEONFORK not "
                    "honoured here");
        return;
    }
    lc2 = ctx_from_config(sample);
    base = wf_states();
    base_bytes = wf_bytes();
    pthread_barrier_init(&hold, NULL, TD_THREADS + 1);
    memset(jobs, 0, sizeof(jobs));
    for (i = 0; lc2 != NULL && i < TD_THREADS; i++) {
        jobs[i].lc = lc2;
        jobs[i].hold = &hold;
        if (pthread_create(&th[i], NULL, draw_once, &jobs[i]) != 0)
            break;
        n++;
    }
    if (n != TD_THREADS) {
        /* cannot run the test without every thread at the barrier */
        tu_ok(0, "random provider: teardown: %d of %d threads started", n,
              TD_THREADS);
        pthread_barrier_destroy(&hold);
        OSSL_LIB_CTX_free(lc2);
        return;
    }
    pthread_barrier_wait(&hold);
    live = wf_states() - base;
    for (i = 0; i < n; i++)
        failed += jobs[i].failed;
    TU_OK(failed == 0 && live == 2 * TD_THREADS,
          "random provider: %d live threads hold %d generators (%ld seeded "
          "states)",
          TD_THREADS, 2 * TD_THREADS, live);
    OSSL_LIB_CTX_free(lc2);
    after = wf_states() - base;
    after_bytes = wf_bytes() - base_bytes;
    /* teardown also unmaps idle mappings older than |base_bytes| */
    TU_OK(after == 0 && after_bytes <= 0,
          "random provider: freeing the library context wipes them and "
          "unmaps the mappings made for them while the threads live (%ld "
          "states, %ld bytes more than before)",
          after, after_bytes);
    pthread_barrier_wait(&hold);
    for (i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    TU_OK(wf_states() - base == 0 && wf_bytes() - base_bytes <= 0,
          "random provider: the threads then exit cleanly, nothing left");
    pthread_barrier_destroy(&hold);
}

/*
 * Only chacharng is active, so there is no DRBG to fall back on: RAND_bytes
 * works only if libcrypto calls our random_bytes.  The same config without
 * random_provider must then have no RAND at all.
 */
static void test_only_random_provider(void)
{
    static const char head[] = "config_diagnostics = 1\n"
                               "openssl_conf = openssl_init\n"
                               "[openssl_init]\n"
                               "random = random_sect\n"
                               "providers = provider_sect\n"
                               "[provider_sect]\n"
                               "chacharng = chacharng_sect\n"
                               "[chacharng_sect]\n"
                               "activate = 1\n"
                               "[random_sect]\n";
    char text[sizeof(head) + 64];
    char *with, *without;
    OSSL_LIB_CTX *lc;
    EVP_RAND *ctr;
    unsigned char a[32], b[32];
    int ok;

    snprintf(text, sizeof(text), "%srandom_provider = chacharng\n", head);
    with = temp_config(text);
    snprintf(text, sizeof(text), "%s", head);
    without = temp_config(text);

    lc = with != NULL ? ctx_from_config(with) : NULL;
    ok = lc != NULL && RAND_bytes_ex(lc, a, sizeof(a), 0) == 1
         && RAND_priv_bytes_ex(lc, b, sizeof(b), 0) == 1;
    TU_OK(ok, "random provider: with only chacharng loaded and only "
              "random_provider set, RAND_bytes and RAND_priv_bytes work");
    if (!ok)
        tu_err_print();
    ERR_set_mark();
    ctr = lc != NULL ? EVP_RAND_fetch(lc, "CTR-DRBG", NULL) : NULL;
    TU_OK(lc != NULL && ctr == NULL,
          "random provider: ... and that context has no CTR-DRBG to fall "
          "back on");
    EVP_RAND_free(ctr);
    ERR_pop_to_mark();
    OSSL_LIB_CTX_free(lc);

    lc = without != NULL ? ctx_from_config(without) : NULL;
    ERR_set_mark();
    TU_OK(lc != NULL && RAND_bytes_ex(lc, a, sizeof(a), 0) != 1,
          "random provider: the same config without random_provider has "
          "no working RAND_bytes (so the bytes above were chacharng's)");
    ERR_pop_to_mark();
    OSSL_LIB_CTX_free(lc);
    if (with != NULL)
        unlink(with);
    if (without != NULL)
        unlink(without);
    free(with);
    free(without);
}

/*
 * The same without a config file: a context with only chacharng loaded has
 * no DRBG to fetch, until RAND_set1_random_provider makes RAND_bytes ours.
 */
static void test_set1_random_provider(void)
{
#if OPENSSL_VERSION_NUMBER >= 0x30500000L
    OSSL_LIB_CTX *lc = OSSL_LIB_CTX_new();
    OSSL_PROVIDER *p = lc != NULL ? OSSL_PROVIDER_load(lc, "chacharng") : NULL;
    unsigned char a[32];
    int before, after;

    ERR_set_mark();
    before = p != NULL && RAND_bytes_ex(lc, a, sizeof(a), 0) == 1;
    ERR_pop_to_mark();
    after = p != NULL && RAND_set1_random_provider(lc, p)
            && RAND_bytes_ex(lc, a, sizeof(a), 0) == 1
            && RAND_priv_bytes_ex(lc, a, sizeof(a), 0) == 1;
    if (!after)
        tu_err_print();
    TU_OK(p != NULL && !before && after,
          "random provider: RAND_set1_random_provider turns a context with "
          "only chacharng loaded from no RAND_bytes (%d) to a working one "
          "(%d)",
          before, after);
    if (p != NULL)
        OSSL_PROVIDER_unload(p);
    OSSL_LIB_CTX_free(lc);
#else
    tu_skip("random provider: RAND_set1_random_provider: built against "
            "OpenSSL headers older than 3.5");
#endif
}

static void part_random_provider(void)
{
    char *sample;
    OSSL_LIB_CTX *lc;
    size_t i;

    if (!openssl_at_least(3, 5)) {
        for (i = 0; i < sizeof(rp_checks) / sizeof(rp_checks[0]); i++)
            tu_skip("%s: OpenSSL %u.%u has no random provider (3.5+)",
                    rp_checks[i], OPENSSL_version_major(),
                    OPENSSL_version_minor());
        return;
    }
    sample = path_in_builddir("openssl-random-provider.cnf.sample");
    lc = sample != NULL ? ctx_from_config(sample) : NULL;
    if (!TU_OK(lc != NULL, "random provider: the sample loads into a new "
                           "library context (config_diagnostics = 1)")) {
        free(sample);
        return;
    }
    test_generators(lc);
    test_requests(lc);
    test_threads(lc, "random provider");
    test_fork(lc, "random provider");
    test_short_threads(lc, "random provider");
    test_teardown(sample);
    test_only_random_provider();
    test_set1_random_provider();
    OSSL_LIB_CTX_free(lc);
    free(sample);
}

/* ---------------------------------------------------------------------- */

static void body(void)
{
    long pg = sysconf(_SC_PAGESIZE);

    builddir = getenv("abs_top_builddir");
    if (builddir == NULL)
        builddir = ".";
    have_wf = chacha_secpage_madvise_works() && wf_bytes() >= 0;
    gen_bytes = ((long)sizeof(struct chacha_drbg_secret) + pg - 1) / pg * pg;
    tu_diag("%s; generator pages %ld bytes; wipe-on-fork %s",
            OpenSSL_version(OPENSSL_VERSION), gen_bytes,
            have_wf ? "honoured" : "not honoured");
    part_chain();
    part_random_provider();
}

int main(void)
{
    return tu_main_per_impl(body);
}
