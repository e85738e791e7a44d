/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The random-provider path (random_bytes, DESIGN.md section 7) across
 * provider unload, and with many library contexts at once.
 *
 * - Threads that draw and then exit while the main thread unloads the
 *   provider and frees its library context: their thread-exit destructors
 *   run while the provider is torn down, and no module code may run after
 *   the module is gone.  The module is therefore linked to stay resident;
 *   that is checked on the loaded object (DF_1_NODELETE), and then the
 *   race is run for many rounds.  Every generator mapped in a round must
 *   be wiped and unmapped by its end, whichever side freed it.
 * - Load again after unload, in one and then two library contexts: the
 *   module's static state outlives the first load and must serve later
 *   ones, including threads that outlived an earlier provider instance,
 *   and fork.
 * - 64 library contexts at once, and thousands created and freed in turn
 *   (more than a process has pthread keys); and a first call that finds no
 *   pthread key left fails cleanly and is served once one is free.
 *
 * random_bytes is reached through the provider's dispatch table
 * (OSSL_PROVIDER_get0_dispatch), which works on every OpenSSL version;
 * on 3.5+ the same checks also go through RAND_bytes_ex after
 * RAND_set1_random_provider.  Generators are observed through the mmap
 * and munmap calls the module makes (interpose.c).
 *
 * CHACHARNG_UNLOAD_ROUNDS overrides the number of race rounds.  Under
 * valgrind the race and the loop run shorter (the plain, sanitizer and
 * chroot runs keep the full counts).
 */
#define _GNU_SOURCE

#include <dlfcn.h>
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/core_dispatch.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/provider.h>
#include <openssl/rand.h>

#include "capture.h"
#include "errq.h"
#include "interpose.h"
#include "provutil.h"
#include "records.h"
#include "split.h"
#include "testutil.h"

#define RACE_THREADS 64
#define RACE_ROUNDS 200 /* per kernel */
#define MANY_CTX 64     /* library contexts alive at once */
#define MANY_THREADS 2  /* threads drawing from all of them */
#define LOOP_CTX 1500   /* contexts made and freed in turn (> 1024 keys) */
/* memcheck runs threads one at a time, some 50 times slower: fewer there */
#define VG_RACE_ROUNDS 4
#define VG_LOOP_CTX 64
#define REC TU_REC /* outputs are compared record by record */

/* One loaded chacharng instance: its own library context. */
struct inst {
    OSSL_LIB_CTX *lc;
    OSSL_PROVIDER *p;
    chacharng_random_bytes_fn *rb;
    void *provctx;
    int via_rand; /* draw through RAND_bytes_ex (3.5+) */
};

/* How the tests reach random_bytes. */
struct route {
    const char *name;
    int via_rand;
};

static const struct route routes[] = {
    { "dispatch table", 0 },
    { "RAND_bytes_ex", 1 },
};

/* ------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------ */

static int route_available(const struct route *r)
{
#if OPENSSL_VERSION_NUMBER >= 0x30500000L
    return !r->via_rand || OPENSSL_version_major() > 3
           || OPENSSL_version_minor() >= 5;
#else
    return !r->via_rand;
#endif
}

static void route_skip(const struct route *r, const char *what)
{
    tu_skip("%s (%s): needs OpenSSL 3.5+ headers and library (%u.%u here)",
            what, r->name, OPENSSL_version_major(), OPENSSL_version_minor());
}

/* Load chacharng into a new library context; 0 with diagnostics if not. */
static int inst_open(struct inst *in, int via_rand)
{
    memset(in, 0, sizeof(*in));
    in->via_rand = via_rand;
    if ((in->lc = OSSL_LIB_CTX_new()) == NULL
        || (in->p = OSSL_PROVIDER_load(in->lc, "chacharng")) == NULL)
        goto fail;
    in->rb = cap_random_bytes(OSSL_PROVIDER_get0_dispatch(in->p));
    in->provctx = OSSL_PROVIDER_get0_provider_ctx(in->p);
    if (in->rb == NULL) {
        tu_diag("chacharng exports no random_bytes");
        goto fail;
    }
#if OPENSSL_VERSION_NUMBER >= 0x30500000L
    if (via_rand && !RAND_set1_random_provider(in->lc, in->p))
        goto fail;
#endif
    return 1;

fail:
    tu_err_print();
    if (in->p != NULL)
        OSSL_PROVIDER_unload(in->p);
    OSSL_LIB_CTX_free(in->lc);
    memset(in, 0, sizeof(*in));
    return 0;
}

/* Unload the provider and free its library context, as applications do. */
static void inst_close(struct inst *in)
{
    if (in->p != NULL)
        OSSL_PROVIDER_unload(in->p);
    OSSL_LIB_CTX_free(in->lc);
    memset(in, 0, sizeof(*in));
}

static int inst_draw(const struct inst *in, int which, unsigned char *buf,
                     size_t n)
{
    if (in->via_rand)
        return which ? RAND_priv_bytes_ex(in->lc, buf, n, 0) == 1
                     : RAND_bytes_ex(in->lc, buf, n, 0) == 1;
    return in->rb(in->provctx, which, buf, n, 0) == 1;
}

/* The loaded chacharng module as the dynamic linker sees it. */
struct modinfo {
    int mapped;
    ElfW(Addr) base;
    unsigned long flags_1; /* DT_FLAGS_1 */
};

static int find_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct modinfo *mi = arg;
    const ElfW(Dyn) * dyn;
    int i;

    (void)size;
    if (info->dlpi_name == NULL
        || strstr(info->dlpi_name, "chacharng.so") == NULL)
        return 0;
    mi->mapped = 1;
    mi->base = info->dlpi_addr;
    for (i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
            continue;
        dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        for (; dyn->d_tag != DT_NULL; dyn++)
            if (dyn->d_tag == DT_FLAGS_1)
                mi->flags_1 = (unsigned long)dyn->d_un.d_val;
    }
    return 1;
}

static struct modinfo module_info(void)
{
    struct modinfo mi = { 0, 0, 0 };

    dl_iterate_phdr(find_module, &mi);
    return mi;
}

/*
 * Check what the module mapped since the last reset: at least |min|
 * mappings, none still mapped, each wiped before munmap.  Then forget
 * them.  Returns 1 if all is well; counts go to the out parameters.
 */
static int mappings_clean(size_t min, size_t *total, size_t *live,
                          size_t *dirty)
{
    const struct ip_mapping *m;
    size_t n = ip_mappings(&m), i;

    *total = n;
    *live = *dirty = 0;
    for (i = 0; i < n; i++) {
        if (m[i].live)
            ++*live;
        else if (!m[i].zero_at_unmap)
            ++*dirty;
    }
    ip_mappings_reset();
    return n >= min && *live == 0 && *dirty == 0;
}

/*
 * The fewest mappings |gens| generators can have needed: the module packs
 * states into mappings of at most 64 slots each and reuses freed slots.
 */
#define MIN_MAPS(gens) (((size_t)(gens) + 63) / 64)

/* Live mappings the module made since the last reset. */
static size_t mappings_live(void)
{
    const struct ip_mapping *m;
    size_t n = ip_mappings(&m), i, live = 0;

    for (i = 0; i < n; i++)
        live += m[i].live != 0;
    return live;
}

/* ------------------------------------------------------------------------
 * The module stays resident
 * ------------------------------------------------------------------------ */

static void test_resident(void)
{
    struct inst in;
    struct modinfo mi;
    ElfW(Addr) base;
    const char *pre = getenv("LD_PRELOAD");

    if (pre != NULL && strstr(pre, "nodlclose") != NULL)
        tu_diag("a no-op dlclose is preloaded: no module is ever unmapped "
                "here, so the race below cannot reach unmapped code");
    if (!tu_ok(inst_open(&in, 0), "resident: chacharng loads"))
        return;
    mi = module_info();
    base = mi.base;
    TU_OK(mi.mapped && (mi.flags_1 & DF_1_NODELETE),
          "resident: the module is marked DF_1_NODELETE (DT_FLAGS_1 0x%lx)",
          mi.flags_1);
    inst_close(&in);
    mi = module_info();
    TU_OK(mi.mapped && mi.base == base,
          "resident: after OSSL_PROVIDER_unload and OSSL_LIB_CTX_free the "
          "module is still mapped, at the same address");
}

/* ------------------------------------------------------------------------
 * Threads exiting while the provider is unloaded
 * ------------------------------------------------------------------------ */

struct racer {
    const struct inst *in;
    unsigned int *arrived;
    int ok;
};

static void *race_thread(void *arg)
{
    struct racer *r = arg;
    unsigned char buf[2048];

    r->ok = inst_draw(r->in, 0, buf, 32) && inst_draw(r->in, 1, buf, 32)
            && inst_draw(r->in, 0, buf, sizeof(buf));
    __atomic_add_fetch(r->arrived, 1, __ATOMIC_RELEASE);
    /* returning runs this thread's key destructors, racing the unload */
    return NULL;
}

static unsigned int race_rounds(void)
{
    const char *e = getenv("CHACHARNG_UNLOAD_ROUNDS");

    if (e != NULL && atoi(e) > 0)
        return (unsigned int)atoi(e);
    return tu_under_valgrind() ? VG_RACE_ROUNDS : RACE_ROUNDS;
}

static void test_race(const struct route *route)
{
    struct racer rs[RACE_THREADS];
    pthread_t th[RACE_THREADS];
    unsigned int rounds = race_rounds(), round, arrived;
    unsigned long served = 0, maps = 0, bad_rounds = 0;
    int i, n, failed = 0;

    if (!route_available(route)) {
        route_skip(route, "unload race");
        return;
    }
    ip_mappings_reset();
    for (round = 0; round < rounds && !failed; round++) {
        struct inst in;
        size_t total = 0, live = 0, dirty = 0;

        if (!inst_open(&in, route->via_rand)) {
            failed = 1;
            break;
        }
        ip_attach_module();
        arrived = 0;
        for (n = 0; n < RACE_THREADS; n++) {
            rs[n].in = &in;
            rs[n].arrived = &arrived;
            rs[n].ok = 0;
            if (pthread_create(&th[n], NULL, race_thread, &rs[n]) != 0)
                break;
        }
        /* everyone has drawn; most are exiting right now */
        while (__atomic_load_n(&arrived, __ATOMIC_ACQUIRE) != (unsigned int)n)
            sched_yield();
        inst_close(&in);
        for (i = 0; i < n; i++) {
            pthread_join(th[i], NULL);
            served += rs[i].ok != 0;
        }
        if (n != RACE_THREADS)
            failed = 1;
        if (!mappings_clean(1, &total, &live, &dirty)) {
            if (bad_rounds++ == 0)
                tu_diag("round %u: %zu state mappings, %zu still mapped, "
                        "%zu unmapped unwiped",
                        round, total, live, dirty);
        }
        maps += total;
    }
    TU_OK(!failed && served == (unsigned long)rounds * RACE_THREADS,
          "unload race (%s): %u rounds of %d threads drawing, then exiting "
          "while the provider unloads: %lu served",
          route->name, rounds, RACE_THREADS, served);
    TU_OK(!failed && bad_rounds == 0,
          "unload race (%s): every generator of every round wiped and "
          "unmapped, whoever freed it (%lu mappings, %lu bad rounds)",
          route->name, maps, bad_rounds);
}

/* ------------------------------------------------------------------------
 * Load again after unload
 * ------------------------------------------------------------------------ */

/*
 * A thread that outlives provider instances: it draws whenever the main
 * thread asks, from whatever instance is current.
 */
struct survivor {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const struct inst *in; /* draw from this, then set it NULL */
    int quit, ok;
    struct tu_recs recs;
};

static void *survivor_thread(void *arg)
{
    struct survivor *s = arg;
    unsigned char buf[64];

    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (s->in == NULL && !s->quit)
            pthread_cond_wait(&s->cv, &s->mu);
        if (s->quit)
            break;
        if (!inst_draw(s->in, 0, buf, sizeof(buf))
            || !inst_draw(s->in, 1, buf + 32, 32)
            || !tu_recs_add(&s->recs, buf, sizeof(buf)))
            s->ok = 0;
        s->in = NULL;
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Have |s| draw from |in| and wait until it has. */
static void survivor_draw(struct survivor *s, const struct inst *in)
{
    pthread_mutex_lock(&s->mu);
    s->in = in;
    pthread_cond_broadcast(&s->cv);
    while (s->in != NULL)
        pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
}

struct fork_job {
    const struct inst *a, *b;
    int fd; /* where the child's bytes go */
};

/* In a fork child: 32 public and 32 private bytes from each instance. */
static int child_draws(void *arg)
{
    const struct fork_job *job = arg;
    unsigned char buf[128];
    int ok = inst_draw(job->a, 0, buf, 32) && inst_draw(job->a, 1, buf + 32, 32)
             && inst_draw(job->b, 0, buf + 64, 32)
             && inst_draw(job->b, 1, buf + 96, 32)
             && tu_write_full(job->fd, buf, sizeof(buf));

    return ok ? 0 : 1;
}

/* A forked child draws from both; its bytes go back through a pipe. */
static int fork_draw(const struct inst *a, const struct inst *b,
                     struct tu_recs *r)
{
    struct fork_job job = { a, b, -1 };
    unsigned char buf[128];
    int fds[2], got;
    pid_t pid;

    if (pipe(fds) != 0)
        return 0;
    job.fd = fds[1];
    pid = tu_split(TU_SPLIT_FORK, child_draws, &job, NULL, 0);
    close(fds[1]);
    got = pid > 0 && tu_read_full(fds[0], buf, sizeof(buf));
    close(fds[0]);
    return tu_wait_ok(pid) && got && tu_recs_add(r, buf, sizeof(buf));
}

static void test_reload(const struct route *route)
{
    struct survivor s;
    struct inst a, b, c;
    struct tu_recs all = { 0 };
    unsigned char buf[64];
    pthread_t th;
    size_t total = 0, live = 0, dirty = 0, before;
    int ok, clean, i;

    if (!route_available(route)) {
        for (i = 0; i < 5; i++)
            route_skip(route, "reload");
        return;
    }
    memset(&s, 0, sizeof(s));
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.cv, NULL);
    s.ok = 1;
    ip_mappings_reset();

    /* one instance; a thread uses it and stays alive after its unload */
    ok = inst_open(&a, route->via_rand);
    ip_attach_module();
    if (!tu_ok(ok && pthread_create(&th, NULL, survivor_thread, &s) == 0,
               "reload (%s): loaded again after unload, thread started",
               route->name)) {
        if (ok)
            inst_close(&a);
        return;
    }
    survivor_draw(&s, &a);
    ok = s.ok && inst_draw(&a, 0, buf, 32) && inst_draw(&a, 1, buf + 32, 32)
         && tu_recs_add(&all, buf, 64);
    inst_close(&a);
    clean = mappings_clean(MIN_MAPS(4), &total, &live, &dirty);
    TU_OK(ok && clean,
          "reload (%s): unload while a thread that drew lives: its "
          "generators and ours wiped and unmapped (%zu mapped, %zu live, "
          "%zu unwiped)",
          route->name, total, live, dirty);

    /* two instances at once; the same thread draws from both */
    ok = inst_open(&b, route->via_rand) && inst_open(&c, route->via_rand);
    before = mappings_live();
    survivor_draw(&s, &b);
    survivor_draw(&s, &c);
    ok = ok && s.ok && mappings_live() >= before + MIN_MAPS(4);
    for (i = 0; ok && i < 4; i++)
        ok = inst_draw(i & 1 ? &c : &b, i >> 1, buf, sizeof(buf))
             && tu_recs_add(&all, buf, sizeof(buf));
    TU_OK(ok,
          "reload (%s): two new library contexts; the surviving "
          "thread gets fresh generators in each (%zu live mappings)",
          route->name, mappings_live());
    if (!ok)
        tu_err_print();
    TU_OK(ok && fork_draw(&b, &c, &all) && fork_draw(&b, &c, &all),
          "reload (%s): forked children draw from both", route->name);

    pthread_mutex_lock(&s.mu);
    s.quit = 1;
    pthread_cond_broadcast(&s.cv);
    pthread_mutex_unlock(&s.mu);
    pthread_join(th, NULL);
    ok = ok && s.ok && tu_recs_add(&all, s.recs.p, s.recs.n * REC);
    inst_close(&b);
    inst_close(&c);
    clean = mappings_clean(MIN_MAPS(8), &total, &live, &dirty);
    TU_OK(ok && clean,
          "reload (%s): the thread exits, both contexts freed: every "
          "generator wiped and unmapped (%zu mapped, %zu live, %zu unwiped)",
          route->name, total, live, dirty);
    TU_OK(ok && tu_recs_distinct(&all, "outputs"),
          "reload (%s): no 16-byte block repeats across %zu from every "
          "instance, thread and child",
          route->name, all.n);
    tu_recs_free(&all);
    tu_recs_free(&s.recs);
    pthread_cond_destroy(&s.cv);
    pthread_mutex_destroy(&s.mu);
}

/* ------------------------------------------------------------------------
 * Many library contexts
 * ------------------------------------------------------------------------ */

struct many_job {
    struct inst *ins;
    int n, ok;
    struct tu_recs recs;
};

static void *many_thread(void *arg)
{
    struct many_job *j = arg;
    unsigned char buf[32];
    int i;

    j->ok = 1;
    for (i = 0; i < j->n; i++)
        if (!inst_draw(&j->ins[i], i & 1, buf, sizeof(buf))
            || !tu_recs_add(&j->recs, buf, sizeof(buf)))
            j->ok = 0;
    return NULL;
}

static void test_many(const struct route *route)
{
    struct inst *ins = calloc(MANY_CTX, sizeof(*ins));
    struct many_job jobs[MANY_THREADS];
    pthread_t th[MANY_THREADS];
    struct tu_recs all = { 0 };
    unsigned char buf[32];
    size_t total = 0, live = 0, dirty = 0;
    int opened = 0, drawn = 0, started = 0, ok = 1, i;

    if (!route_available(route)) {
        for (i = 0; i < 3; i++)
            route_skip(route, "many contexts");
        free(ins);
        return;
    }
    ip_mappings_reset();
    for (i = 0; ins != NULL && i < MANY_CTX; i++) {
        if (!inst_open(&ins[i], route->via_rand))
            break;
        opened++;
        ip_attach_module();
        if (!inst_draw(&ins[i], 0, buf, sizeof(buf))
            || !tu_recs_add(&all, buf, sizeof(buf))) {
            tu_diag("context %d of %d: random_bytes fails:", i + 1, MANY_CTX);
            tu_err_print();
            break;
        }
        drawn++;
    }
    TU_OK(opened == MANY_CTX && drawn == MANY_CTX,
          "many contexts (%s): %d library contexts at once, each served "
          "(%d served)",
          route->name, MANY_CTX, drawn);
    memset(jobs, 0, sizeof(jobs));
    for (i = 0; i < MANY_THREADS; i++) {
        jobs[i].ins = ins;
        jobs[i].n = opened;
        if (pthread_create(&th[i], NULL, many_thread, &jobs[i]) != 0)
            break;
        started++;
    }
    for (i = 0; i < started; i++) {
        pthread_join(th[i], NULL);
        ok = ok && jobs[i].ok
             && tu_recs_add(&all, jobs[i].recs.p, jobs[i].recs.n * REC);
        tu_recs_free(&jobs[i].recs);
    }
    TU_OK(started == MANY_THREADS && ok && tu_recs_distinct(&all, "outputs"),
          "many contexts (%s): %d threads draw from all %d, then exit; no "
          "block repeats among %zu",
          route->name, MANY_THREADS, opened, all.n);
    for (i = 0; i < opened; i++)
        inst_close(&ins[i]);
    ok = mappings_clean(MIN_MAPS(MANY_CTX * (1 + MANY_THREADS)), &total, &live,
                        &dirty);
    TU_OK(ok,
          "many contexts (%s): all freed, every generator wiped and "
          "unmapped (%zu mapped, %zu live, %zu unwiped)",
          route->name, total, live, dirty);
    tu_recs_free(&all);
    free(ins);
}

/* The same context slot used LOOP_CTX times over, from two threads. */
static void *loop_thread(void *arg)
{
    struct many_job *j = arg;
    unsigned char buf[32];

    j->ok = inst_draw(j->ins, 1, buf, sizeof(buf));
    return NULL;
}

static void test_loop(const struct route *route)
{
    struct many_job job;
    unsigned char buf[32];
    size_t total = 0, live = 0, dirty = 0;
    unsigned long bad = 0;
    int i, served = 0, count = tu_under_valgrind() ? VG_LOOP_CTX : LOOP_CTX;

    if (!route_available(route)) {
        route_skip(route, "contexts in a loop");
        return;
    }
    ip_mappings_reset();
    for (i = 0; i < count; i++) {
        struct inst in;
        pthread_t th;
        int ok;

        if (!inst_open(&in, route->via_rand))
            break;
        ip_attach_module();
        memset(&job, 0, sizeof(job));
        job.ins = &in;
        ok = inst_draw(&in, 0, buf, sizeof(buf))
             && pthread_create(&th, NULL, loop_thread, &job) == 0;
        if (ok) {
            pthread_join(th, NULL);
            ok = job.ok;
        }
        if (!ok) {
            tu_diag("context %d: random_bytes fails:", i + 1);
            tu_err_print();
            inst_close(&in);
            break;
        }
        served++;
        inst_close(&in);
        if (!mappings_clean(MIN_MAPS(2), &total, &live, &dirty))
            bad++;
    }
    TU_OK(served == count && bad == 0,
          "contexts in a loop (%s): %d made, used from two threads and "
          "freed in turn; all served, nothing left mapped or unwiped "
          "(%d served, %lu bad)",
          route->name, count, served, bad);
}

/* ------------------------------------------------------------------------
 * No pthread key left
 * ------------------------------------------------------------------------ */

/*
 * The process's first random_bytes call finds every pthread key taken: it
 * must fail with an error, and succeed once a key is free again.  Runs
 * first, before anything here has made the module's key.
 */
static void test_no_keys(void)
{
    enum { CAP = 4 * PTHREAD_KEYS_MAX };
    pthread_key_t *keys = malloc(CAP * sizeof(*keys));
    struct inst in;
    unsigned char buf[32];
    int n = 0, n_taken, failed, said, served;

    if (!tu_ok(keys != NULL && inst_open(&in, 0), "no keys: chacharng loads")) {
        free(keys);
        return;
    }
    /* libcrypto makes its error queue's own key on first use: before */
    ERR_clear_error();
    while (n < CAP && pthread_key_create(&keys[n], NULL) == 0)
        n++;
    failed = !inst_draw(&in, 0, buf, sizeof(buf));
    said = tu_err_find(NULL, NULL, "pthread key", TU_ERR_QUIET);
    n_taken = n;
    while (n > 0)
        pthread_key_delete(keys[--n]);
    served = inst_draw(&in, 0, buf, sizeof(buf));
    TU_OK(failed && said,
          "no keys: with every pthread key taken, random_bytes fails with "
          "an error saying so (failed %d, said %d, %d keys taken)",
          failed, said, n_taken);
    TU_OK(served, "no keys: a key free again, random_bytes is served");
    if (!served)
        tu_err_print();
    inst_close(&in);
    free(keys);
}

/* ---------------------------------------------------------------------- */

static void body(void)
{
    size_t i;

    test_no_keys();
    test_resident();
    for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        test_race(&routes[i]);
        test_reload(&routes[i]);
        test_many(&routes[i]);
        test_loop(&routes[i]);
    }
}

int main(void)
{
    return tu_main_per_impl(body);
}
