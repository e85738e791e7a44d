/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fork safety of CHACHA20-DRBG (DESIGN.md section 4): after fork() a child
 * must never repeat the parent's stream, neither fresh keystream nor bytes
 * that were already buffered when it was forked.  A context seeded from the
 * core is used by hundreds of forked children (in small batches), by
 * children forked mid-buffer, by grandchildren, and through a
 * chacharng-under-chacharng chain as libcrypto builds them; every output is
 * sent back through a pipe and all 16-byte blocks must be distinct.  Each
 * case runs with and without EVP_RAND_enable_locking.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "provutil.h"
#include "records.h"
#include "split.h"
#include "testutil.h"

#define NCHILD 300      /* children forked from one context */
#define BATCH 20        /* at most this many alive at once */
#define SMALL 32        /* bytes each child generates in the main case */
#define REC TU_REC      /* outputs are compared record by record */
#define MIDBUF_SKIP 100 /* bytes taken before the mid-buffer fork */
#define MIDBUF_LEN 848  /* what each side takes after it (53 blocks) */
#define MIDBUF_KIDS 8
#define GRAND_KIDS 10
#define CHAIN_KIDS 100

static struct pu_env env;

/* What a forked child does with the context; writes its bytes to |fd|. */
typedef int child_fn(EVP_RAND_CTX *ctx, int fd, size_t len);

/*
 * What run_job() does in a child: close |other| (the parent's end of the
 * pipe, or -1), then |fn| on |ctx| with |fd| and |len|.
 */
struct child_job {
    child_fn *fn;
    EVP_RAND_CTX *ctx;
    int fd, other;
    size_t len;
};

static int gen(EVP_RAND_CTX *ctx, unsigned char *out, size_t n)
{
    return EVP_RAND_generate(ctx, out, n, 0, 0, NULL, 0);
}

static int run_job(void *arg)
{
    const struct child_job *job = arg;

    if (job->other >= 0)
        close(job->other);
    return job->fn(job->ctx, job->fd, job->len) ? 0 : 1;
}

/* Child: |len| bytes from the inherited context, sent to the parent. */
static int child_plain(EVP_RAND_CTX *ctx, int fd, size_t len)
{
    unsigned char buf[MIDBUF_LEN];

    if (len > sizeof(buf) || !gen(ctx, buf, len))
        return 0;
    return tu_write_full(fd, buf, len);
}

/*
 * Child that forks again: the grandchild sends its |len| bytes first, then
 * the child sends one output from before and one from after that fork.
 */
static int child_grand(EVP_RAND_CTX *ctx, int fd, size_t len)
{
    struct child_job grand = { child_plain, ctx, fd, -1, SMALL };
    unsigned char before[SMALL], after[SMALL];

    if (len != SMALL || !gen(ctx, before, SMALL))
        return 0;
    if (!tu_wait_ok(tu_split(TU_SPLIT_FORK, run_job, &grand, NULL, 0)))
        return 0;
    if (!gen(ctx, after, SMALL))
        return 0;
    return tu_write_full(fd, before, SMALL) && tu_write_full(fd, after, SMALL);
}

/*
 * Fork |n| children, at most BATCH at a time, each running |fn| on |ctx|
 * and sending |per_child| bytes; store them at |out|.  Returns how many
 * children delivered everything and exited 0.
 */
static size_t fork_children(EVP_RAND_CTX *ctx, size_t n, child_fn *fn,
                            size_t len, size_t per_child, unsigned char *out)
{
    pid_t pids[BATCH];
    int fds[BATCH];
    size_t done = 0, good = 0, i, k;

    while (done < n) {
        size_t batch = n - done < BATCH ? n - done : BATCH;

        for (k = 0; k < batch; k++) {
            struct child_job job = { fn, ctx, -1, -1, len };
            int p[2];

            pids[k] = -1;
            fds[k] = -1;
            if (pipe(p) != 0)
                continue;
            job.fd = p[1];
            job.other = p[0];
            pids[k] = tu_split(TU_SPLIT_FORK, run_job, &job, NULL, 0);
            close(p[1]);
            if (pids[k] < 0)
                close(p[0]);
            else
                fds[k] = p[0];
        }
        for (k = 0; k < batch; k++) {
            int ok;

            if (pids[k] < 0)
                continue;
            i = done + k;
            ok = tu_read_full(fds[k], out + i * per_child, per_child);
            close(fds[k]);
            if (tu_wait_ok(pids[k]) && ok)
                good++;
            else
                memset(out + i * per_child, 0, per_child);
        }
        done += batch;
    }
    return good;
}

/* A context seeded from the core, with locking if |locked|. */
static EVP_RAND_CTX *new_ctx(int locked, const char *mode)
{
    EVP_RAND_CTX *ctx = pu_drbg_ready(&env, NULL);

    if (!TU_OK(ctx != NULL, "%s: context seeded from the core", mode))
        return NULL;
    if (locked
        && !TU_OK(EVP_RAND_enable_locking(ctx) == 1, "%s: enable_locking",
                  mode)) {
        EVP_RAND_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

/*
 * What a case starts from: room for |nrec| records, zeroed, in *|recs| and
 * a context from new_ctx() in *|ctx|.  1 with both; 0 with neither.
 */
static int start_case(size_t nrec, int locked, const char *mode,
                      unsigned char **recs, EVP_RAND_CTX **ctx)
{
    *ctx = NULL;
    *recs = calloc(nrec, REC);
    if (!TU_OK(*recs != NULL, "%s: record buffer", mode))
        return 0;
    *ctx = new_ctx(locked, mode);
    if (*ctx == NULL) {
        free(*recs);
        *recs = NULL;
        return 0;
    }
    return 1;
}

/*
 * Many children from one context: each child's 32 bytes, the parent's
 * output from before the forks and the parent's next output after them
 * must all be distinct.
 */
static void test_many_children(int locked, const char *mode)
{
    size_t nrec = (NCHILD + 2) * (SMALL / REC), good, rep;
    unsigned char *recs;
    EVP_RAND_CTX *ctx;
    int ok;

    if (!start_case(nrec, locked, mode, &recs, &ctx))
        return;
    ok = gen(ctx, recs, SMALL);
    TU_OK(ok, "%s: parent generates %d bytes before forking", mode, SMALL);
    good = fork_children(ctx, NCHILD, child_plain, SMALL, SMALL, recs + SMALL);
    TU_OK(good == NCHILD, "%s: %zu of %d children generated and reported", mode,
          good, NCHILD);
    ok = gen(ctx, recs + (NCHILD + 1) * SMALL, SMALL);
    TU_OK(ok, "%s: parent generates again after the forks", mode);
    rep = tu_count_repeats(recs, nrec);
    TU_OK(rep == 0,
          "%s: %zu blocks from %d children and the parent (before and "
          "after) are distinct (%zu repeats)",
          mode, nrec, NCHILD, rep);
    EVP_RAND_CTX_free(ctx);
    free(recs);
}

/*
 * Fork while the parent holds buffered keystream: the children must not be
 * handed the bytes the parent will hand out next.
 */
static void test_mid_buffer(int locked, const char *mode)
{
    size_t nrec = (MIDBUF_KIDS + 1) * (MIDBUF_LEN / REC), good, rep;
    unsigned char *recs;
    unsigned char skip[MIDBUF_SKIP];
    EVP_RAND_CTX *ctx;
    int ok;

    if (!start_case(nrec, locked, mode, &recs, &ctx))
        return;
    ok = gen(ctx, skip, sizeof(skip));
    TU_OK(ok, "%s: parent takes %d bytes, leaving the rest buffered", mode,
          MIDBUF_SKIP);
    good = fork_children(ctx, MIDBUF_KIDS, child_plain, MIDBUF_LEN, MIDBUF_LEN,
                         recs);
    TU_OK(good == MIDBUF_KIDS,
          "%s: %zu of %d mid-buffer children generated %d bytes", mode, good,
          MIDBUF_KIDS, MIDBUF_LEN);
    ok = gen(ctx, recs + MIDBUF_KIDS * MIDBUF_LEN, MIDBUF_LEN);
    TU_OK(ok, "%s: parent takes its next %d bytes", mode, MIDBUF_LEN);
    rep = tu_count_repeats(recs, nrec);
    TU_OK(rep == 0,
          "%s: no 16-byte block is shared between the parent's buffered "
          "bytes and the children's (%zu repeats in %zu)",
          mode, rep, nrec);
    EVP_RAND_CTX_free(ctx);
    free(recs);
}

/* Children that fork again: three generations, all outputs distinct. */
static void test_grandchildren(int locked, const char *mode)
{
    size_t per = 3 * SMALL;
    size_t nrec = (GRAND_KIDS * per + SMALL) / REC, good, rep;
    unsigned char *recs;
    EVP_RAND_CTX *ctx;
    int ok;

    if (!start_case(nrec, locked, mode, &recs, &ctx))
        return;
    good = fork_children(ctx, GRAND_KIDS, child_grand, SMALL, per, recs);
    TU_OK(good == GRAND_KIDS,
          "%s: %zu of %d children and their own children reported", mode, good,
          GRAND_KIDS);
    ok = gen(ctx, recs + GRAND_KIDS * per, SMALL);
    TU_OK(ok, "%s: parent generates after the forks", mode);
    rep = tu_count_repeats(recs, nrec);
    TU_OK(rep == 0,
          "%s: parent, children (before and after their fork) and "
          "grandchildren are distinct (%zu repeats)",
          mode, rep);
    EVP_RAND_CTX_free(ctx);
    free(recs);
}

/*
 * A chacharng context under a chacharng parent, as libcrypto chains its
 * primary and public DRBGs: after fork both levels must move on.
 */
static void test_chain(int locked, const char *mode)
{
    size_t nrec = (CHAIN_KIDS + 2) * (SMALL / REC), good, rep;
    unsigned char *recs = calloc(nrec, REC);
    EVP_RAND_CTX *top = NULL, *ctx = NULL;
    int ok;

    if (!TU_OK(recs != NULL, "%s: record buffer", mode))
        return;
    top = pu_drbg_ready(&env, NULL);
    if (!TU_OK(top != NULL, "%s chain: top context seeded from the core", mode))
        goto end;
    ctx = pu_drbg_ready(&env, top);
    if (!TU_OK(ctx != NULL, "%s chain: context under the top one", mode))
        goto end;
    /* enable_locking on the child also locks the parent (DESIGN.md 5) */
    if (locked
        && !TU_OK(EVP_RAND_enable_locking(ctx) == 1, "%s chain: enable_locking",
                  mode))
        goto end;
    ok = gen(ctx, recs, SMALL);
    TU_OK(ok, "%s chain: generate before forking", mode);
    good =
        fork_children(ctx, CHAIN_KIDS, child_plain, SMALL, SMALL, recs + SMALL);
    TU_OK(good == CHAIN_KIDS, "%s chain: %zu of %d children reported", mode,
          good, CHAIN_KIDS);
    ok = gen(ctx, recs + (CHAIN_KIDS + 1) * SMALL, SMALL);
    TU_OK(ok, "%s chain: generate after the forks", mode);
    rep = tu_count_repeats(recs, nrec);
    TU_OK(rep == 0, "%s chain: all outputs distinct (%zu repeats)", mode, rep);
end:
    EVP_RAND_CTX_free(ctx);
    EVP_RAND_CTX_free(top);
    free(recs);
}

static void body(void)
{
    static const struct {
        int locked;
        const char *name;
    } modes[] = { { 0, "unlocked" }, { 1, "locked" } };
    size_t m;

    /* a hung child (deadlock in a lock taken across fork) fails the run */
    alarm(900);
    if (!TU_OK(pu_env_init(&env), "load default and %s into a new libctx",
               PU_PROVIDER))
        return;
    for (m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
        test_many_children(modes[m].locked, modes[m].name);
        test_mid_buffer(modes[m].locked, modes[m].name);
        test_grandchildren(modes[m].locked, modes[m].name);
        test_chain(modes[m].locked, modes[m].name);
    }
    pu_env_free(&env);
    alarm(0);
}

int main(void)
{
    return tu_main_per_impl(body);
}
