/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fork detection in every mode, the way a user's process meets it
 * (DESIGN.md section 4).  Each mode runs in a process of its own that loads
 * the module as an application would, with this executable's madvise and
 * __register_atfork (interpose.c) playing the system: a kernel that honours
 * MADV_WIPEONFORK, one that predates it, qemu-user (madvise accepted and
 * ignored), and a process where atfork registration fails.  In each, a
 * seeded generator -- an EVP context and a random-provider generator
 * (chacharng_random_bytes, reached through the module's dispatch table) --
 * is split by fork(), _Fork(), clone() without CLONE_VM and
 * syscall(SYS_fork), from the main thread and from another thread; every
 * 16-byte block of the parent's and the children's output must be
 * distinct.
 *
 * A _Fork or clone child of a multi-threaded parent may only rely on what
 * is async-signal-safe after the split, unless no other thread holds a
 * lock: here the only other thread at a split is the main thread, waiting
 * in pthread_join, outside libcrypto and chacharng.
 *
 * Also here: a madvise probe that could not run (the first mmap fails, or
 * madvise fails transiently) is retried by the next allocation; and, where
 * root may make pid namespaces and write ns_last_pid, children whose pid
 * equals the one their state was seeded under, which only wipe-on-fork and
 * the atfork generation can tell apart (chacharng(7) documents the rest).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/core_dispatch.h>
#include <openssl/evp.h>
#include <openssl/provider.h>

#include "capture.h"
#include "interpose.h"
#include "provutil.h"
#include "records.h"
#include "secpage.h"
#include "split.h"
#include "testutil.h"

#define KIDS 12         /* children per split kind, path and thread */
#define KIDS_VALGRIND 2 /* under memcheck, where each split costs ~0.4 s */
#define SMALL 32        /* bytes each side takes after a split */
#define REC TU_REC      /* outputs are compared record by record */
#define STACK_BYTES (1 << 20) /* a clone child's stack */

/* ---------------------------------------------------------------------- */
/* Ways of splitting a process (split.h)                                  */
/* ---------------------------------------------------------------------- */

/* Only fork() runs the atfork handlers. */
static int split_runs_atfork(enum tu_split how)
{
    return how == TU_SPLIT_FORK;
}

static unsigned char *child_stack;
static int under_valgrind;
static int kids = KIDS;

/*
 * Where a clone child's stack starts.  clone() writes to the new stack
 * before the split, in the caller's memory: a clone child that clones
 * again (the pid namespace tests) hands its own child the lower half.
 */
static void *clone_stack_top(void)
{
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    uintptr_t lo = (uintptr_t)child_stack;

    if (child_stack == NULL)
        return NULL;
    if (here >= lo && here < lo + STACK_BYTES)
        return child_stack + STACK_BYTES / 2;
    return child_stack + STACK_BYTES;
}

/*
 * Split the process |how| (plus |clone_flags| for clone); the child runs
 * |job| and exits with its result.  Returns the child's pid, or -1.
 */
static pid_t split(enum tu_split how, tu_job *job, int clone_flags)
{
    return tu_split(how, job, NULL,
                    how == TU_SPLIT_CLONE ? clone_stack_top() : NULL,
                    clone_flags);
}

/* ---------------------------------------------------------------------- */
/* The two generators: an EVP context and the random-provider path        */
/* ---------------------------------------------------------------------- */

enum path { PATH_EVP, PATH_RANDOM, NPATH };

static const char *const path_name[NPATH] = { "EVP_RAND_generate",
                                              "random_bytes" };

static struct pu_env env;
static EVP_RAND_CTX *evp_ctx;
static chacharng_random_bytes_fn *random_bytes;
static void *rb_provctx;

static int draw(enum path path, unsigned char *out, size_t n)
{
    if (path == PATH_EVP)
        return EVP_RAND_generate(evp_ctx, out, n, 0, 0, NULL, 0) == 1;
    /* which = public, strength 0: as RAND_bytes asks */
    return random_bytes(rb_provctx, 0, out, n, 0) == 1;
}

/* ---------------------------------------------------------------------- */
/* Splitting a seeded generator                                           */
/* ---------------------------------------------------------------------- */

/* One run: a path, a way of splitting, and where the output goes. */
static struct {
    enum path path;
    enum tu_split how;
    int fd;              /* the children's end of the pipe */
    unsigned char *recs; /* parent before, |kids| children, parent after */
    int ok;              /* every child reported and exited 0 */
} run;

static int child_draws(void *arg)
{
    unsigned char buf[SMALL];

    (void)arg;
    return draw(run.path, buf, SMALL) && tu_write_full(run.fd, buf, SMALL) ? 0
                                                                           : 1;
}

/*
 * The splitting thread: take SMALL bytes (so the buffer holds unread
 * keystream at the split), make |kids| children one after another from that
 * state, each taking SMALL bytes, then take SMALL bytes again.
 */
static void *split_and_draw(void *arg)
{
    int p[2], k;

    (void)arg;
    run.ok = draw(run.path, run.recs, SMALL);
    for (k = 0; k < kids && run.ok; k++) {
        pid_t pid;

        if (pipe(p) != 0) {
            run.ok = 0;
            break;
        }
        run.fd = p[1];
        pid = split(run.how, child_draws, 0);
        close(p[1]);
        run.ok =
            pid > 0 && tu_read_full(p[0], run.recs + (1 + k) * SMALL, SMALL);
        close(p[0]);
        run.ok = tu_wait_ok(pid) && run.ok;
    }
    run.ok = run.ok && draw(run.path, run.recs + (1 + kids) * SMALL, SMALL);
    return NULL;
}

static void test_split(enum path path, enum tu_split how, int other_thread,
                       const char *mode)
{
    size_t nrec = (size_t)(kids + 2) * (SMALL / REC), rep;
    const char *where = other_thread ? "another thread" : "the main thread";
    const char *why;
    pthread_t th;

    if (!tu_split_available(how, child_stack, &why)) {
        tu_skip("%s: %s: %s", mode, tu_split_name(how), why);
        return;
    }
    memset(&run, 0, sizeof(run));
    run.path = path;
    run.how = how;
    run.recs = calloc(nrec, REC);
    if (!TU_OK(run.recs != NULL, "record buffer"))
        return;
    if (!other_thread)
        split_and_draw(NULL);
    else if (pthread_create(&th, NULL, split_and_draw, NULL) == 0)
        pthread_join(th, NULL); /* this thread waits outside the library */
    TU_OK(run.ok, "%s: %s: %s from %s: parent and %d children drew %d bytes",
          mode, path_name[path], tu_split_name(how), where, kids, SMALL);
    rep = tu_count_repeats(run.recs, nrec);
    TU_OK(rep == 0,
          "%s: %s: %s from %s: parent (before, after) and children "
          "distinct (%zu repeats in %zu blocks)",
          mode, path_name[path], tu_split_name(how), where, rep, nrec);
    free(run.recs);
}

/* ---------------------------------------------------------------------- */
/* Children whose pid equals the recorded one (root only)                  */
/* ---------------------------------------------------------------------- */

/*
 * Results of one same-pid experiment, sent back to the test through a
 * pipe: the parent's bytes after the split, the child's, and the pids.
 */
struct same_pid {
    int ran; /* 1 ran; 0 could not (why in |why|) */
    char why[120];
    pid_t parent_pid, child_pid;
    unsigned char parent[SMALL], child[SMALL];
};

static struct same_pid result;
static int result_fd, go_fd;

static int child_reports(void *arg)
{
    (void)arg;
    result.ran = 1;
    result.child_pid = getpid();
    return draw(run.path, result.child, SMALL)
                   && tu_write_full(result_fd, &result, sizeof(result))
               ? 0
               : 1;
}

/*
 * Inside a new pid namespace: this process is pid 1.  Seed a generator,
 * split |how| into yet another new namespace (clone with CLONE_NEWPID, or
 * unshare then fork: the child is pid 1 again), and compare.
 */
static int pid1_parent(void *arg)
{
    int p[2];
    pid_t pid;

    (void)arg;
    result.parent_pid = getpid();
    /* a new process: this first draw reseeds, under pid 1 */
    if (!draw(run.path, result.parent, SMALL) || pipe(p) != 0)
        return 1;
    result_fd = p[1];
    if (run.how == TU_SPLIT_CLONE) {
        pid = split(TU_SPLIT_CLONE, child_reports, CLONE_NEWPID);
    } else {
        if (unshare(CLONE_NEWPID) != 0)
            return 1;
        pid = split(run.how, child_reports, 0);
    }
    close(p[1]);
    if (pid < 0 || !tu_read_full(p[0], &result, sizeof(result))
        || !tu_wait_ok(pid))
        return 1;
    /* the child's report carries its pid; add what this side drew */
    if (!draw(run.path, result.parent, SMALL))
        return 1;
    result.parent_pid = getpid();
    result.ran = 1;
    return tu_write_full(run.fd, &result, sizeof(result)) ? 0 : 1;
}

/*
 * Inside a new pid namespace, as its init: a seeder S seeds a generator
 * and splits |how| into C; S takes SMALL bytes, reports them and exits.
 * Once S is reaped, C makes the namespace hand out S's pid next (through
 * ns_last_pid) and splits again: the grandchild has the pid the state was
 * seeded under and the state S had at the first split.
 */
static int reuse_child(void *arg)
{
    pid_t seeder = result.parent_pid, pid;
    char go, num[32];
    int fd, n;

    (void)arg;
    if (!tu_read_full(go_fd, &go, 1))
        return 1;
    fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
    n = snprintf(num, sizeof(num), "%d", (int)seeder - 1);
    if (fd < 0 || write(fd, num, (size_t)n) != n) {
        result.ran = 0;
        snprintf(result.why, sizeof(result.why),
                 "cannot write /proc/sys/kernel/ns_last_pid: %s",
                 strerror(errno));
        if (fd >= 0)
            close(fd);
        return tu_write_full(result_fd, &result, sizeof(result)) ? 0 : 1;
    }
    close(fd);
    pid = split(run.how, child_reports, 0);
    return tu_wait_ok(pid) ? 0 : 1;
}

static int reuse_seeder(void *arg)
{
    pid_t pid;

    (void)arg;
    result.parent_pid = getpid();
    /* a new process: this first draw reseeds, under this pid */
    if (!draw(run.path, result.child, SMALL))
        return 1;
    pid = split(run.how, reuse_child, 0);
    if (pid < 0 || !draw(run.path, result.parent, SMALL))
        return 1;
    result.ran = 1;
    return tu_write_full(result_fd, &result, sizeof(result)) ? 0 : 1;
}

static int reuse_init(void *arg)
{
    int go[2], rep[2];
    pid_t seeder;
    struct same_pid theirs;

    (void)arg;
    if (pipe(go) != 0 || pipe(rep) != 0)
        return 1;
    go_fd = go[0];
    result_fd = rep[1];
    /* the seeder itself comes from a plain fork */
    seeder = split(TU_SPLIT_FORK, reuse_seeder, 0);
    /* the children hold the other ends: a dead one ends a read */
    close(go[0]);
    close(rep[1]);
    /* the seeder's report, then it is gone and its pid is free */
    if (seeder < 0 || !tu_read_full(rep[0], &result, sizeof(result))
        || !tu_wait_ok(seeder))
        return 1;
    if (!tu_write_full(go[1], "g", 1)
        || !tu_read_full(rep[0], &theirs, sizeof(theirs)))
        return 1;
    if (!theirs.ran) {
        result.ran = 0;
        memcpy(result.why, theirs.why, sizeof(result.why));
    } else {
        result.child_pid = theirs.child_pid;
        memcpy(result.child, theirs.child, SMALL);
    }
    /* C is reparented to this init; reap it */
    while (waitpid(-1, NULL, 0) > 0)
        ;
    return tu_write_full(run.fd, &result, sizeof(result)) ? 0 : 1;
}

/*
 * Run |entry| as pid 1 of a new pid namespace; its report arrives in
 * |res|.  Returns 1 if it ran, 0 with a reason in res->why if not.
 */
static int in_new_pid_namespace(tu_job *entry, struct same_pid *res)
{
    int p[2], saved;
    pid_t pid;

    memset(res, 0, sizeof(*res));
    memset(&result, 0, sizeof(result));
    if (pipe(p) != 0) {
        snprintf(res->why, sizeof(res->why), "pipe: %s", strerror(errno));
        return 0;
    }
    run.fd = p[1];
    pid = split(TU_SPLIT_CLONE, entry, CLONE_NEWPID);
    saved = errno;
    close(p[1]);
    if (pid < 0) {
        snprintf(res->why, sizeof(res->why),
                 "clone(CLONE_NEWPID) fails here (%s): it needs root, "
                 "and an emulator may refuse it",
                 strerror(saved));
        close(p[0]);
        return 0;
    }
    if (!tu_read_full(p[0], res, sizeof(*res))) {
        snprintf(res->why, sizeof(res->why), "the namespace's init failed");
        res->ran = -1;
    }
    close(p[0]);
    if (!tu_wait_ok(pid) && res->ran == 1)
        res->ran = -1;
    return res->ran == 1;
}

/*
 * Whether a child with its parent's pid can be told apart in |mode|: by
 * wipe-on-fork always, by the atfork generation only after fork(); the
 * rest is the residual chacharng(7) documents.
 */
static int same_pid_detectable(int wipeonfork, int atfork, enum tu_split how)
{
    return wipeonfork || (atfork && split_runs_atfork(how));
}

static void report_same_pid(const char *mode, const char *what, enum path path,
                            enum tu_split how, int detectable, int ran,
                            const struct same_pid *r)
{
    int same;

    if (ran != 1) {
        if (r->ran == -1)
            TU_OK(0, "%s: %s, %s, %s: %s", mode, what, path_name[path],
                  tu_split_name(how), r->why[0] ? r->why : "failed");
        else
            tu_skip("%s: %s, %s, %s: %s", mode, what, path_name[path],
                    tu_split_name(how), r->why);
        return;
    }
    if (r->child_pid != r->parent_pid) {
        tu_skip("%s: %s, %s: the child got pid %d, not %d", mode, what,
                tu_split_name(how), (int)r->child_pid, (int)r->parent_pid);
        return;
    }
    same = memcmp(r->parent, r->child, SMALL) == 0;
    if (detectable)
        TU_OK(!same,
              "%s: %s, %s, %s: child with pid %d (as its parent) draws "
              "other bytes",
              mode, what, path_name[path], tu_split_name(how),
              (int)r->child_pid);
    else
        tu_diag("%s: %s, %s, %s: residual of chacharng(7): the child with "
                "pid %d %s its parent's bytes",
                mode, what, path_name[path], tu_split_name(how),
                (int)r->child_pid, same ? "repeats" : "does not repeat");
}

static void test_same_pid(const char *mode, int wipeonfork, int atfork)
{
    static const enum tu_split kinds[] = { TU_SPLIT_FORK, TU_SPLIT_UFORK,
                                           TU_SPLIT_CLONE };
    struct same_pid r;
    const char *why;
    size_t i;
    int path, ran;

    if (under_valgrind) {
        /* slow there, and about logic that the native run checks */
        tu_skip("%s: same-pid children: not under valgrind", mode);
        return;
    }
    for (path = 0; path < NPATH; path++) {
        for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
            enum tu_split how = kinds[i];
            int det = same_pid_detectable(wipeonfork, atfork, how);

            if (!tu_split_available(how, child_stack, &why)) {
                tu_skip("%s: same pid, %s: %s", mode, tu_split_name(how), why);
                continue;
            }
            run.path = (enum path)path;
            run.how = how;
            ran = in_new_pid_namespace(pid1_parent, &r);
            report_same_pid(mode,
                            "pid-1 parent, child in a new pid "
                            "namespace",
                            (enum path)path, how, det, ran, &r);
            if (how == TU_SPLIT_CLONE)
                continue; /* the reused pid needs no third variant */
            run.path = (enum path)path;
            run.how = how;
            ran = in_new_pid_namespace(reuse_init, &r);
            report_same_pid(mode, "reused pid", (enum path)path, how, det, ran,
                            &r);
        }
    }
}

/* ---------------------------------------------------------------------- */
/* The modes                                                               */
/* ---------------------------------------------------------------------- */

/*
 * Does the newest state page the module mapped carry "wf" in smaps?  The
 * vDSO's getrandom states (kernel mixing) are not state pages.
 */
static int newest_page_wipes(int *found)
{
    const struct ip_mapping *m;
    size_t n = ip_mappings(&m);
    char flags[256];

    *found = 0;
    while (n > 0
           && (!m[n - 1].live
               || (m[n - 1].flags & IP_MAP_TYPE) == IP_MAP_DROPPABLE))
        n--;
    if (n == 0 || !ip_smaps_vmflags(m[n - 1].addr, flags, sizeof(flags)))
        return 0;
    *found = 1;
    return ip_vmflags_has(flags, "wf");
}

static int find_random_bytes(void)
{
    random_bytes = cap_random_bytes(OSSL_PROVIDER_get0_dispatch(env.prov));
    rb_provctx = OSSL_PROVIDER_get0_provider_ctx(env.prov);
    return random_bytes != NULL;
}

struct mode {
    const char *name;
    enum ip_madvise_mode madvise;
    int atfork_fails;
};

static const struct mode modes[] = {
    { "as found", IP_MADVISE_REAL, 0 },
    { "kernel without MADV_WIPEONFORK", IP_MADVISE_NO_WIPEONFORK, 0 },
    { "qemu-user (madvise ignored)", IP_MADVISE_IGNORED, 0 },
    { "no wipe-on-fork, atfork registration fails", IP_MADVISE_NO_WIPEONFORK,
      1 },
};

/* Whether this kernel acts on madvise, from this executable's own probe. */
static int kernel_wipes;

static void wipe_seen(const char *mode, const char *what, int want)
{
    int found, wf;

    if (!kernel_wipes) {
        /* qemu-user accepts any madvise and does nothing, smaps included */
        tu_skip("%s: %s: this kernel ignores madvise, no flag to see", mode,
                what);
        return;
    }
    wf = newest_page_wipes(&found);
    if (TU_OK(found, "%s: %s: state page found in smaps", mode, what))
        TU_OK(wf == want, "%s: %s: state page %s wipe-on-fork", mode, what,
              want ? "is" : "is not");
}

/* The body of one mode's process. */
static void mode_process(const struct mode *md)
{
    int want_wf = md->madvise == IP_MADVISE_REAL && kernel_wipes;
    unsigned char b[SMALL];
    int path, how, other;

    ip_madvise_mode(md->madvise);
    ip_atfork_fail(md->atfork_fails);
    if (!TU_OK(pu_env_init(&env), "%s: default and %s loaded", md->name,
               PU_PROVIDER)
        || !TU_OK(ip_attach_module(), "%s: module found", md->name))
        return;
    evp_ctx = pu_drbg_ready(&env, NULL);
    if (!TU_OK(evp_ctx != NULL, "%s: context seeded", md->name))
        return;
    wipe_seen(md->name, "EVP context", want_wf);
    if (find_random_bytes() && draw(PATH_RANDOM, b, sizeof(b)))
        wipe_seen(md->name, "random_bytes generator", want_wf);
    tu_diag("%s: %lu atfork registrations by the module", md->name,
            ip_atfork_registered());

    for (path = 0; path < NPATH; path++) {
        if (path == PATH_RANDOM && random_bytes == NULL) {
            tu_skip("%s: the module exports no random_bytes", md->name);
            continue;
        }
        for (how = 0; how < TU_NSPLIT; how++)
            for (other = 0; other < 2; other++)
                test_split((enum path)path, (enum tu_split)how, other,
                           md->name);
    }
    test_same_pid(md->name, want_wf, !md->atfork_fails);
    EVP_RAND_CTX_free(evp_ctx);
    pu_env_free(&env);
}

/*
 * A probe that could not run is tried again.  |madvise_fails| 0: the
 * module's first mmap fails; 1: its first madvise (other than
 * MADV_DONTDUMP) fails with EAGAIN.  Either may spoil one allocation, never
 * a later one, on the EVP path and on the random-provider path.
 */
static void probe_retry_process(int madvise_fails)
{
    const char *what = madvise_fails ? "madvise fails with EAGAIN once"
                                     : "the first mmap fails";
    EVP_RAND_CTX *first, *second;
    unsigned char b[SMALL];

    if (!kernel_wipes) {
        tu_skip("%s: this kernel does not honour madvise", what);
        return;
    }
    if (!TU_OK(pu_env_init(&env), "%s: providers loaded", what)
        || !TU_OK(ip_attach_module(), "%s: module found", what))
        return;
    if (madvise_fails)
        ip_madvise_mode(IP_MADVISE_EAGAIN_ONCE);
    else
        ip_fail_mmap(1);
    first = pu_drbg_new(&env, NULL);
    if (!madvise_fails) {
        TU_OK(ip_mmap_fired(), "%s: it did (the first context was %s)", what,
              first != NULL ? "made" : "refused");
        ip_fail_mmap(0);
    }
    second = pu_drbg_new(&env, NULL);
    if (TU_OK(second != NULL, "%s: the next context is made", what))
        wipe_seen(what, "the next context", 1);
    EVP_RAND_CTX_free(first);
    EVP_RAND_CTX_free(second);
    pu_env_free(&env);

    /* a fresh module state for the random-provider path */
    if (!TU_OK(pu_env_init(&env), "%s: providers loaded again", what)
        || !TU_OK(ip_attach_module(), "%s: module found again", what))
        return;
    if (!find_random_bytes()) {
        tu_skip("%s: the module exports no random_bytes", what);
        pu_env_free(&env);
        return;
    }
    if (madvise_fails)
        ip_madvise_mode(IP_MADVISE_EAGAIN_ONCE);
    else
        ip_fail_mmap(1);
    /* one context takes the failure, the thread's generator comes next */
    first = pu_drbg_new(&env, NULL);
    ip_fail_mmap(0);
    if (TU_OK(draw(PATH_RANDOM, b, sizeof(b)),
              "%s: random_bytes served after it", what))
        wipe_seen(what, "the random_bytes generator made after it", 1);
    EVP_RAND_CTX_free(first);
    pu_env_free(&env);
}

/* ---------------------------------------------------------------------- */
/* One process per mode, its TAP relayed                                  */
/* ---------------------------------------------------------------------- */

static const char *after_prefix(const char *line)
{
    const char *p = strstr(line, "] ");

    return p != NULL ? p + 2 : line;
}

struct own_process {
    void (*fn)(const void *);
    const void *arg;
    int fds[2];
};

/* The fresh process: its TAP goes into the pipe. */
static int own_process_child(void *arg)
{
    const struct own_process *op = arg;

    close(op->fds[0]);
    dup2(op->fds[1], STDOUT_FILENO);
    close(op->fds[1]);
    op->fn(op->arg);
    fflush(stdout);
    return tu_failures ? 1 : 0;
}

/*
 * Run |fn| in a fresh process (which loads the module itself, so nothing
 * of this process's choices leaks in) and count its test points here.
 */
static void in_own_process(const char *what, void (*fn)(const void *),
                           const void *arg)
{
    struct own_process op = { fn, arg, { -1, -1 } };
    char line[4096];
    FILE *in;
    pid_t pid;

    fflush(stdout);
    if (!TU_OK(pipe(op.fds) == 0, "%s: pipe", what))
        return;
    pid = tu_split(TU_SPLIT_FORK, own_process_child, &op, NULL, 0);
    close(op.fds[1]);
    in = fdopen(op.fds[0], "r");
    while (in != NULL && fgets(line, sizeof(line), in) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, "ok", 2) == 0 && strstr(line, "# SKIP ") != NULL)
            tu_skip("%s", strstr(line, "# SKIP ") + 7);
        else if (strncmp(line, "ok", 2) == 0)
            tu_ok(1, "%s", after_prefix(line));
        else if (strncmp(line, "not ok", 6) == 0)
            tu_ok(0, "%s", after_prefix(line));
        else
            printf("%s\n", line);
    }
    if (in != NULL)
        fclose(in);
    TU_OK(tu_wait_exit(pid, NULL) >= 0, "%s: its process ran to the end", what);
}

static void run_mode(const void *arg)
{
    mode_process(arg);
}

static void run_probe_retry(const void *arg)
{
    probe_retry_process(*(const int *)arg);
}

static void body(void)
{
    static const int mmap_fails = 0, madvise_fails = 1;
    size_t i;

    /* a child stuck in a lock that crossed a split fails the run */
    alarm(900);
    under_valgrind = tu_under_valgrind();
    if (under_valgrind)
        kids = KIDS_VALGRIND;
    child_stack = tu_split_stack_new(STACK_BYTES);
    /* this executable's own copy of the probe, as the oracle */
    kernel_wipes = chacha_secpage_madvise_works();
    tu_diag("kernel honours MADV_WIPEONFORK: %s", kernel_wipes ? "yes" : "no");
    for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
        in_own_process(modes[i].name, run_mode, &modes[i]);
    in_own_process("the first mmap fails", run_probe_retry, &mmap_fails);
    in_own_process("madvise fails once", run_probe_retry, &madvise_fails);
    alarm(0);
}

int main(void)
{
    return tu_main_per_impl(body);
}
