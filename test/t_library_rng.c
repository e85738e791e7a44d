/* SPDX-License-Identifier: Apache-2.0 */
/*
 * When chacharng names CHACHA20-DRBG as the library DRBG of the default
 * library context (provider/library_rng.c, DESIGN.md section 8), and when
 * it must not: every scenario an application can run into, each in a
 * process of its own (libcrypto's RAND state lives once per process), as
 * this program re-executed with the scenario's name, libcrypto allocating
 * from test/lib/checked_heap.c (a double free aborts).  A scenario exits 0
 * when libcrypto ended up with the generator it should have, 1 otherwise,
 * and says on stderr what it saw.
 *
 * The decision does not depend on the ChaCha20 kernel, so this runs once,
 * not per kernel.  It needs OPENSSL_MODULES pointing at the built module
 * (make check sets it).  Where programs of the build's architecture need
 * an emulator (qemu-user without binfmt_misc: .ci/cross.sh), that command
 * is given in CHACHARNG_TEST_EMULATOR, words separated by blanks, and the
 * processes are run through it.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/core_dispatch.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <openssl/rand.h>

#include "checked_heap.h"
#include "library_rng_scenarios.h"
#include "race_window.h"
#include "split.h"
#include "testutil.h"

#define TWO_THREAD_ROUNDS 100
#define MAX_EMULATOR_WORDS 8

static const char *self; /* this program, to re-execute */

/* ------------------------------------------------------------------------
 * What a scenario checks, in its own process
 * ------------------------------------------------------------------------ */

void say(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/*
 * The providers a scenario loaded, unloaded when it ends (newest first),
 * as a well-behaved application does: a provider loaded and never
 * unloaded is not freed when the process exits, and the leak checkers of
 * the sanitizer and valgrind runs say so.
 */
static OSSL_PROVIDER *loaded[8];
static size_t nloaded;

OSSL_PROVIDER *keep(OSSL_PROVIDER *p)
{
    if (p != NULL && nloaded < sizeof(loaded) / sizeof(loaded[0]))
        loaded[nloaded++] = p;
    return p;
}

static void unload_kept(void)
{
    while (nloaded > 0)
        OSSL_PROVIDER_unload(loaded[--nloaded]);
}

OSSL_PROVIDER *load(OSSL_LIB_CTX *lc, const char *name)
{
    OSSL_PROVIDER *p = keep(OSSL_PROVIDER_load(lc, name));

    if (p == NULL) {
        say("cannot load %s", name);
        ERR_print_errors_fp(stderr);
    }
    return p;
}

/* "ALG @ PROVIDER" of |ctx| into |buf|. */
static const char *describe(EVP_RAND_CTX *ctx, char *buf, size_t len)
{
    EVP_RAND *r = ctx != NULL ? EVP_RAND_CTX_get0_rand(ctx) : NULL;

    if (r == NULL)
        snprintf(buf, len, "(none)");
    else
        snprintf(buf, len, "%s @ %s", EVP_RAND_get0_name(r),
                 OSSL_PROVIDER_get0_name(EVP_RAND_get0_provider(r)));
    return buf;
}

/*
 * RAND_bytes and RAND_priv_bytes on |lc| succeed, and the primary, public
 * and private DRBGs are all |want| ("ALG @ PROVIDER").
 */
int library_drbg_is(OSSL_LIB_CTX *lc, const char *want)
{
    unsigned char buf[32];
    EVP_RAND_CTX *ctxs[3];
    const char *names[3] = { "primary", "public", "private" };
    char got[128];
    int i, ok = 1;

    if (RAND_bytes_ex(lc, buf, sizeof(buf), 0) <= 0
        || RAND_priv_bytes_ex(lc, buf, sizeof(buf), 0) <= 0) {
        say("RAND_bytes failed:");
        ERR_print_errors_fp(stderr);
        return 0;
    }
    ctxs[0] = RAND_get0_primary(lc);
    ctxs[1] = RAND_get0_public(lc);
    ctxs[2] = RAND_get0_private(lc);
    for (i = 0; i < 3; i++) {
        describe(ctxs[i], got, sizeof(got));
        if (strcmp(got, want) != 0) {
            say("%s DRBG is %s, expected %s", names[i], got, want);
            ok = 0;
        }
    }
    return ok;
}

/* RAND_bytes on |lc| fails: nothing took the library DRBG over. */
int rand_fails(OSSL_LIB_CTX *lc)
{
    unsigned char buf[16];
    char got[128];

    if (RAND_bytes_ex(lc, buf, sizeof(buf), 0) > 0) {
        say("RAND_bytes succeeded from %s; it must fail",
            describe(RAND_get0_primary(lc), got, sizeof(got)));
        return 0;
    }
    ERR_clear_error();
    return 1;
}

/* An explicit CHACHA20-DRBG context on |lc| generates. */
int explicit_fetch_with(OSSL_LIB_CTX *lc, const OSSL_PARAM params[])
{
    EVP_RAND *r = EVP_RAND_fetch(lc, "CHACHA20-DRBG", "provider=chacharng");
    EVP_RAND_CTX *ctx = r != NULL ? EVP_RAND_CTX_new(r, NULL) : NULL;
    unsigned char buf[32];
    int ok = ctx != NULL && EVP_RAND_instantiate(ctx, 256, 0, NULL, 0, params)
             && EVP_RAND_generate(ctx, buf, sizeof(buf), 256, 0, NULL, 0);

    if (!ok) {
        say("explicit CHACHA20-DRBG fetch or generate failed");
        ERR_print_errors_fp(stderr);
    }
    EVP_RAND_CTX_free(ctx);
    EVP_RAND_free(r);
    return ok;
}

int explicit_fetch_works(OSSL_LIB_CTX *lc)
{
    return explicit_fetch_with(lc, NULL);
}

/* The C example of README.md, as printed there (it unloads at the end). */
static int readme_example(int unload)
{
    OSSL_PROVIDER *prov = OSSL_PROVIDER_load(NULL, "chacharng");
    EVP_RAND *rand =
        EVP_RAND_fetch(NULL, "CHACHA20-DRBG", "provider=chacharng");
    EVP_RAND_CTX *ctx = EVP_RAND_CTX_new(rand, NULL);
    unsigned char buf[32];
    int ok;

    EVP_RAND_free(rand);
    ok = ctx != NULL && EVP_RAND_instantiate(ctx, 256, 0, NULL, 0, NULL)
         && EVP_RAND_generate(ctx, buf, sizeof(buf), 256, 0, NULL, 0);
    EVP_RAND_CTX_free(ctx);
    if (unload)
        OSSL_PROVIDER_unload(prov);
    else
        keep(prov); /* until the scenario ends */
    if (!ok)
        say("the README example failed");
    return ok;
}

static int sc_alone(void)
{
    return load(NULL, "chacharng") != NULL && library_drbg_is(NULL, CHACHA);
}

static int sc_default_first(void)
{
    return load(NULL, "default") != NULL && load(NULL, "chacharng") != NULL
           && explicit_fetch_works(NULL) && library_drbg_is(NULL, CTR);
}

static int sc_chacharng_first(void)
{
    return load(NULL, "chacharng") != NULL && load(NULL, "default") != NULL
           && explicit_fetch_works(NULL) && library_drbg_is(NULL, CTR);
}

/* the primary outlives its provider: chacharng, loaded alone, leaves it */
static int sc_primary_outlives_default(void)
{
    OSSL_PROVIDER *dflt = OSSL_PROVIDER_load(NULL, "default");
    unsigned char buf[16];
    int ok = dflt != NULL && RAND_bytes(buf, sizeof(buf)) > 0
             && RAND_priv_bytes(buf, sizeof(buf)) > 0;

    if (dflt != NULL)
        OSSL_PROVIDER_unload(dflt);
    return ok && load(NULL, "chacharng") != NULL && library_drbg_is(NULL, CTR);
}

/* chacharng alone at the first RAND query, default loaded afterwards */
static int sc_readme_then_default(void)
{
    return readme_example(1) && load(NULL, "default") != NULL
           && library_drbg_is(NULL, CTR);
}

static int sc_readme_kept_then_default(void)
{
    return readme_example(0) && load(NULL, "default") != NULL
           && library_drbg_is(NULL, CTR);
}

/* the implicit default provider is activated by any fetch */
static int sc_implicit_default_first(void)
{
    EVP_MD *md = EVP_MD_fetch(NULL, "SHA256", NULL);
    int ok = md != NULL;

    EVP_MD_free(md);
    return ok && load(NULL, "chacharng") != NULL && library_drbg_is(NULL, CTR);
}

/* the fallback default provider is active, as the application kept it */
static int md5_fetchable(void)
{
    EVP_MD *md = EVP_MD_fetch(NULL, "MD5", NULL);

    EVP_MD_free(md);
    if (md == NULL)
        say("MD5 is not fetchable: the fallback default provider is not "
            "active");
    return md != NULL;
}

/*
 * OSSL_PROVIDER_try_load(NULL, "chacharng", 1): chacharng is the only
 * active provider at its load; libcrypto activates its fallback at its
 * first fetch without telling any provider (chacharng(7) says so).
 */
static int sc_try_load_retain(void)
{
    return keep(OSSL_PROVIDER_try_load(NULL, "chacharng", 1)) != NULL
           && library_drbg_is(NULL, CHACHA) && md5_fetchable();
}

/*
 * The same, unloaded before anything drew from RAND: the name goes back
 * with chacharng's deactivation, so RAND_bytes comes from the fallback
 * default, which libcrypto activates without telling other providers.
 */
static int sc_try_load_retain_unloaded(void)
{
    OSSL_PROVIDER *cc = OSSL_PROVIDER_try_load(NULL, "chacharng", 1);

    if (cc == NULL)
        return 0;
    OSSL_PROVIDER_unload(cc);
    return library_drbg_is(NULL, CTR);
}

static int sc_try_load_retain_opt_out(void)
{
    return keep(OSSL_PROVIDER_try_load(NULL, "chacharng", 1)) != NULL
           && library_drbg_is(NULL, CTR) && md5_fetchable();
}

static int sc_rand_before_load(void)
{
    unsigned char buf[16];

    return RAND_bytes(buf, sizeof(buf)) > 0 && load(NULL, "chacharng") != NULL
           && library_drbg_is(NULL, CTR);
}

static int sc_opt_out(void)
{
    return load(NULL, "chacharng") != NULL && rand_fails(NULL)
           && explicit_fetch_works(NULL);
}

/* unloaded before any RAND_bytes: the name it took must not outlive it */
static int sc_unloaded_alone(void)
{
    return readme_example(1) && rand_fails(NULL)
           && load(NULL, "default") != NULL && library_drbg_is(NULL, CTR);
}

static int sc_private_ctx(void)
{
    OSSL_LIB_CTX *lc = OSSL_LIB_CTX_new();
    int ok = lc != NULL && load(lc, "chacharng") != NULL && rand_fails(lc)
             && explicit_fetch_works(lc)
             /* and the default context is untouched */
             && library_drbg_is(NULL, CTR);

    unload_kept(); /* chacharng of |lc|, while |lc| is still there */
    OSSL_LIB_CTX_free(lc);
    return ok;
}

/*
 * A child library context is made by a provider; this builtin one makes
 * one at init, so chacharng (loaded before it) gets a child instance.
 */
static OSSL_LIB_CTX *child;

static void childmaker_teardown(void *provctx)
{
    OSSL_LIB_CTX_free(provctx);
}

static const OSSL_DISPATCH childmaker_functions[] = {
    { OSSL_FUNC_PROVIDER_TEARDOWN, (void (*)(void))childmaker_teardown },
    { 0, NULL }
};

static int childmaker_init(const OSSL_CORE_HANDLE *handle,
                           const OSSL_DISPATCH *in, const OSSL_DISPATCH **out,
                           void **provctx)
{
    child = OSSL_LIB_CTX_new_child(handle, in);
    if (child == NULL)
        return 0;
    *out = childmaker_functions;
    *provctx = child;
    return 1;
}

/* childmaker is unloaded first when the scenario ends, |child| with it */
static int sc_child_ctx(void)
{
    return load(NULL, "chacharng") != NULL
           && OSSL_PROVIDER_add_builtin(NULL, "childmaker", childmaker_init)
           && load(NULL, "childmaker") != NULL && explicit_fetch_works(child)
           && rand_fails(child);
}

struct racer {
    pthread_barrier_t *start;
    int ok;
};

static void *race(void *arg)
{
    struct racer *r = arg;
    unsigned char buf[32];

    pthread_barrier_wait(r->start);
    r->ok = RAND_bytes(buf, sizeof(buf)) > 0;
    return NULL;
}

/* two threads make the process's first RAND call at the same moment */
static int sc_two_threads(void)
{
    pthread_barrier_t start;
    struct racer r[2] = { { &start, 0 }, { &start, 0 } };
    pthread_t t[2];
    int i, ok = 1;

    if (load(NULL, "chacharng") == NULL
        || pthread_barrier_init(&start, NULL, 2) != 0)
        return 0;
    for (i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, race, &r[i]) != 0)
            return 0;
    for (i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        if (!r[i].ok) {
            say("thread %d: RAND_bytes failed", i);
            ERR_print_errors_fp(stderr);
            ok = 0;
        }
    }
    pthread_barrier_destroy(&start);
    return ok && library_drbg_is(NULL, CHACHA);
}

/*
 * The README example trimmed, as an application may end: chacharng loaded
 * alone, CHACHA20-DRBG fetched and used, no RAND_bytes, and main returns
 * without unloading.  Exit then runs OPENSSL_cleanup, which frees the RAND
 * state before it tears the providers down; nothing of chacharng's may
 * touch that state then (the checked heap aborts on a double free).  The
 * provider stays reachable from here, so the leak checkers do not count
 * the application's own missing unload.
 */
static OSSL_PROVIDER *never_unloaded;

static int sc_exit_without_unload(void)
{
    never_unloaded = OSSL_PROVIDER_load(NULL, "chacharng");
    return never_unloaded != NULL && explicit_fetch_works(NULL);
}

/*
 * The first RAND call of the process in one thread while another thread
 * loads the default provider, or unloads chacharng, right inside it: the
 * window opens in the RAND thread at its second OSSL_PROVIDER_do_all (a
 * provider's RAND query inside the primary DRBG's fetch) or at its first
 * entropy read (inside the primary's instantiate), whichever comes first.
 */
struct first_rand {
    pthread_barrier_t start;
    int ok;
};

static void *first_rand_thread(void *arg)
{
    struct first_rand *fr = arg;

    pthread_barrier_wait(&fr->start);
    fr->ok = library_drbg_is(NULL, CHACHA);
    rw_done();
    return NULL;
}

/* RAND_bytes and RAND_priv_bytes succeed in a thread started now. */
static void *new_thread_rand(void *arg)
{
    int *ok = arg;
    unsigned char buf[32];

    *ok = RAND_bytes(buf, sizeof(buf)) > 0
          && RAND_priv_bytes(buf, sizeof(buf)) > 0;
    if (!*ok) {
        say("RAND_bytes failed in a new thread:");
        ERR_print_errors_fp(stderr);
    }
    return NULL;
}

static int rand_in_new_thread(void)
{
    pthread_t t;
    int ok = 0;

    if (pthread_create(&t, NULL, new_thread_rand, &ok) != 0)
        return 0;
    pthread_join(t, NULL);
    return ok;
}

static int race_first_rand(int unload)
{
    struct first_rand fr = { .ok = 0 };
    OSSL_PROVIDER *cc = OSSL_PROVIDER_load(NULL, "chacharng");
    pthread_t a;
    int ok;

    if (cc == NULL || pthread_barrier_init(&fr.start, NULL, 2) != 0
        || pthread_create(&a, NULL, first_rand_thread, &fr) != 0)
        return 0;
    rw_arm(a, 2);
    pthread_barrier_wait(&fr.start);
    if (!rw_wait_open(30))
        say("the RAND thread finished before the window opened");
    if (unload)
        OSSL_PROVIDER_unload(cc);
    else
        keep(cc);
    ok = load(NULL, "default") != NULL;
    rw_close();
    pthread_join(a, NULL);
    pthread_barrier_destroy(&fr.start);
    if (!fr.ok)
        say("the thread making the first RAND call did not get one whole "
            "CHACHA20-DRBG chain");
    return ok && fr.ok && rand_in_new_thread();
}

static int sc_race_load_default(void)
{
    return race_first_rand(0);
}

static int sc_race_unload(void)
{
    return race_first_rand(1);
}

/*
 * chacharng alone makes the primary, is unloaded, default is loaded: new
 * threads still get their public and private DRBGs.
 */
static int sc_unload_then_new_thread(void)
{
    OSSL_PROVIDER *cc = OSSL_PROVIDER_load(NULL, "chacharng");
    unsigned char buf[16];
    int ok = cc != NULL && RAND_bytes(buf, sizeof(buf)) > 0;

    if (cc != NULL)
        OSSL_PROVIDER_unload(cc);
    return ok && load(NULL, "default") != NULL && rand_in_new_thread();
}

/* ------------------------------------------------------------------------
 * The driver: each scenario in a fresh process
 * ------------------------------------------------------------------------ */

struct scenario {
    const char *name;
    int (*run)(void);
    const char *env; /* CHACHARNG_LIBRARY_RNG for the run, or NULL */
    /* CHACHARNG_DEBUG lines expected, in this order, '|' between them; or
     * NULL */
    const char *debug_says;
    const char *what;
};

static const struct scenario scenarios[] = {
    { "alone", sc_alone, NULL, "named as the library DRBG",
      "chacharng alone: RAND_bytes and RAND_priv_bytes come from "
      "CHACHA20-DRBG" },
    { "default-first", sc_default_first, NULL, NULL,
      "default, then chacharng, CHACHA20-DRBG fetched: the library DRBG stays "
      "CTR-DRBG" },
    { "chacharng-first", sc_chacharng_first, NULL, NULL,
      "chacharng, then default, CHACHA20-DRBG fetched: the library DRBG stays "
      "CTR-DRBG" },
    { "readme-then-default", sc_readme_then_default, NULL, "name given back",
      "README example (chacharng alone, fetched, unloaded), then default: "
      "CTR-DRBG" },
    { "readme-kept-then-default", sc_readme_kept_then_default, NULL,
      "name given back",
      "README example without the unload, then default: CTR-DRBG" },
    { "implicit-default-first", sc_implicit_default_first, NULL, NULL,
      "implicit default provider active before chacharng: CTR-DRBG" },
    { "try-load-retain", sc_try_load_retain, NULL, "named as the library DRBG",
      "OSSL_PROVIDER_try_load(NULL, \"chacharng\", 1): CHACHA20-DRBG, the "
      "fallback default active" },
    { "try-load-retain-unloaded", sc_try_load_retain_unloaded, NULL,
      "named as the library DRBG|name given back",
      "OSSL_PROVIDER_try_load(NULL, \"chacharng\", 1), unloaded: the name "
      "goes back, RAND_bytes from the fallback default's CTR-DRBG" },
    { "try-load-retain-opt-out", sc_try_load_retain_opt_out, "no",
      "left alone (CHACHARNG_LIBRARY_RNG opts out)",
      "the same with CHACHARNG_LIBRARY_RNG=no: CTR-DRBG" },
    { "rand-before-load", sc_rand_before_load, NULL, NULL,
      "RAND_bytes before chacharng was loaded: CTR-DRBG" },
    { "primary-outlives-default", sc_primary_outlives_default, NULL,
      "left alone (libcrypto's primary DRBG exists already)",
      "default loaded, RAND_bytes, default unloaded, chacharng alone: the "
      "primary stays CTR-DRBG" },
    { "unloaded-alone", sc_unloaded_alone, NULL, "name given back",
      "chacharng fetched alone and unloaded: RAND_bytes fails, default then "
      "gives CTR-DRBG" },
    { "opt-out", sc_opt_out, "no",
      "left alone (CHACHARNG_LIBRARY_RNG opts out)",
      "CHACHARNG_LIBRARY_RNG=no: chacharng alone leaves RAND_bytes failing" },
    { "private-ctx", sc_private_ctx, NULL,
      "left alone (a private or child library context)",
      "a private OSSL_LIB_CTX: its RAND_bytes still fails, the default context "
      "is untouched" },
    { "child-ctx", sc_child_ctx, NULL, NULL,
      "a child library context: chacharng is there, its RAND_bytes still "
      "fails" },
    { "two-threads", sc_two_threads, NULL, "named as the library DRBG",
      NULL /* looped below */ },
    { "exit-without-unload", sc_exit_without_unload, NULL,
      "named as the library DRBG",
      "README example alone, then exit without unload or RAND call: "
      "OPENSSL_cleanup runs, no double free" },
    { "race-load-default", sc_race_load_default, NULL,
      "named as the library DRBG",
      "first RAND call in one thread while another loads default inside it: "
      "no freed string read, one whole chain, new threads work" },
    { "race-unload", sc_race_unload, NULL, "named as the library DRBG",
      "first RAND call in one thread while another unloads chacharng inside "
      "it: no freed string read, then default loaded, new threads work" },
    { "app-choice-alone", sc_app_choice_alone, NULL,
      "named as the library DRBG",
      "RAND_set_DRBG_type(HASH-DRBG), chacharng alone: not seen, "
      "CHACHA20-DRBG (the documented residual)" },
    { "app-choice-then-default", sc_app_choice_then_default, NULL,
      "name given back",
      "RAND_set_DRBG_type(HASH-DRBG), chacharng, default: CTR-DRBG (the "
      "documented residual)" },
    { "app-choice-opt-out", sc_app_choice_opt_out, "no",
      "left alone (CHACHARNG_LIBRARY_RNG opts out)",
      "the same with CHACHARNG_LIBRARY_RNG=no: RAND_bytes fails alone, "
      "HASH-DRBG once default is loaded" },
    { "app-config-then-default", sc_app_config_then_default, NULL,
      "name given back",
      "the application's own config file names HASH-DRBG, chacharng and "
      "default loaded: CTR-DRBG (the documented residual)" },
    { "app-config-opt-out", sc_app_config_opt_out, "no",
      "left alone (CHACHARNG_LIBRARY_RNG opts out)",
      "the same with CHACHARNG_LIBRARY_RNG=no: HASH-DRBG" },
    { "try-load-no-fallback", sc_try_load_no_fallback, NULL,
      "named as the library DRBG",
      "OSSL_PROVIDER_try_load(NULL, \"chacharng\", 0): only chacharng "
      "active, no MD5, CHACHA20-DRBG" },
    { "errors-long-data", sc_errors_long_data, NULL,
      "named as the library DRBG",
      "an application error with 3000 bytes of data: the same after the "
      "load" },
    { "errors-mark-kept", sc_errors_mark_kept, NULL,
      "named as the library DRBG",
      "the application's ERR_set_mark before the load: its ERR_pop_to_mark "
      "after it keeps its earlier error" },
    { "errors-full-queue", sc_errors_full_queue, NULL,
      "named as the library DRBG",
      "15 application errors (a full queue): all kept, in order, across the "
      "load" },
    { "properties-unterminated", sc_properties_unterminated, NULL,
      "named as the library DRBG",
      "alone, an application's context instantiated with a properties "
      "string without NUL at the end of a page: read within its data_size" },
    { "reload", sc_reload, NULL, "named as the library DRBG",
      "loaded alone, unloaded, loaded again: RAND_bytes from CHACHA20-DRBG" },
    { "reload-beside-default", sc_reload_beside_default, NULL,
      "named as the library DRBG|name given back",
      "loaded alone, unloaded, default loaded, chacharng loaded again: "
      "CTR-DRBG stays" },
    { "load-beside-thread", sc_load_beside_thread, NULL,
      "left alone (more than one thread",
      "loaded while a second thread runs: left alone, RAND_bytes fails as "
      "stock libcrypto's" },
    { "pin-released-at-cleanup", sc_pin_released_at_cleanup, NULL,
      "chacharng stays active until OPENSSL_cleanup"
      "|chacharng's library DRBG state freed",
      "alone, RAND_bytes, unloaded, exit: OPENSSL_cleanup releases "
      "chacharng's own activation, its teardown runs" },
    { "unload-then-new-thread", sc_unload_then_new_thread, NULL,
      "named as the library DRBG",
      "alone, RAND_bytes, chacharng unloaded, default loaded: RAND_bytes "
      "works in a new thread" },
};

static const struct scenario *find(const char *name)
{
    size_t i;

    for (i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
        if (strcmp(scenarios[i].name, name) == 0)
            return &scenarios[i];
    return NULL;
}

/*
 * In a child: execute |prog| with |arg| (or none), through the emulator
 * of CHACHARNG_TEST_EMULATOR if that is set.  Returns only on failure.
 */
static void exec_program(const char *prog, const char *arg)
{
    /* copies, as execv takes strings it could change */
    static char words[512], progbuf[4096], argbuf[64];
    char *argv[MAX_EMULATOR_WORDS + 3], *w;
    const char *emulator = getenv("CHACHARNG_TEST_EMULATOR");
    int n = 0;

    if (emulator != NULL) {
        snprintf(words, sizeof(words), "%s", emulator);
        for (w = strtok(words, " \t"); w != NULL && n < MAX_EMULATOR_WORDS;
             w = strtok(NULL, " \t"))
            argv[n++] = w;
    }
    snprintf(progbuf, sizeof(progbuf), "%s", prog);
    argv[n++] = progbuf;
    if (arg != NULL) {
        snprintf(argbuf, sizeof(argbuf), "%s", arg);
        argv[n++] = argbuf;
    }
    argv[n] = NULL;
    if (argv[0] != progbuf)
        execvp(argv[0], argv); /* the emulator, found on PATH */
    else
        execv(progbuf, argv);
    fprintf(stderr, "cannot execute %s: %s\n", argv[0], strerror(errno));
}

struct spawn_job {
    const char *prog, *arg, *optout;
    int fd[2]; /* the pipe its stderr goes into */
};

/* In the child: its environment and stderr set, |prog| executed. */
static int spawn_child(void *arg)
{
    const struct spawn_job *job = arg;

    dup2(job->fd[1], 2);
    close(job->fd[0]);
    close(job->fd[1]);
    setenv("CHACHARNG_DEBUG", "1", 1);
    if (job->optout != NULL)
        setenv("CHACHARNG_LIBRARY_RNG", job->optout, 1);
    else
        unsetenv("CHACHARNG_LIBRARY_RNG");
    exec_program(job->prog, job->arg);
    return 127;
}

/*
 * Run |prog| with |arg| (or none), with CHACHARNG_DEBUG set and
 * CHACHARNG_LIBRARY_RNG set to |optout| or unset; its stderr goes into
 * |err| (NUL-terminated, cut at |errlen|).  Returns the exit status, or -1.
 */
static int spawn(const char *prog, const char *arg, const char *optout,
                 char *err, size_t errlen)
{
    struct spawn_job job = { prog, arg, optout, { -1, -1 } };
    int *fd = job.fd;
    size_t n = 0;
    ssize_t k;
    pid_t pid;

    if (pipe(fd) != 0
        || (pid = tu_split(TU_SPLIT_FORK, spawn_child, &job, NULL, 0)) < 0)
        return -1;
    close(fd[1]);
    while (n + 1 < errlen && (k = read(fd[0], err + n, errlen - 1 - n)) != 0) {
        if (k < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        n += (size_t)k;
    }
    err[n] = '\0';
    close(fd[0]);
    return tu_wait_exit(pid, NULL);
}

/* Show a child's stderr as TAP diagnostics. */
static void diag_text(const char *text)
{
    const char *p = text, *nl;

    while (*p != '\0') {
        nl = strchr(p, '\n');
        tu_diag("  %.*s", nl != NULL ? (int)(nl - p) : (int)strlen(p), p);
        if (nl == NULL)
            break;
        p = nl + 1;
    }
}

/* 1 if |err| says each '|'-separated part of |says|, in that order. */
static int says_in_order(const char *err, const char *says)
{
    const char *at = err;

    while (*says != '\0') {
        const char *bar = strchr(says, '|');
        size_t n = bar != NULL ? (size_t)(bar - says) : strlen(says);
        char part[256];

        if (n >= sizeof(part))
            return 0;
        memcpy(part, says, n);
        part[n] = '\0';
        at = strstr(at, part);
        if (at == NULL)
            return 0;
        at += n;
        says += n + (bar != NULL);
    }
    return 1;
}

static int run_one(const struct scenario *s, char *err, size_t errlen)
{
    int st = spawn(self, s->name, s->env, err, errlen);

    if (st != 0)
        return 0;
    if (s->debug_says != NULL && !says_in_order(err, s->debug_says))
        return 0;
    /* where nothing may be named, nothing must say it was */
    if (s->debug_says == NULL && strstr(err, "named as the library") != NULL
        && strstr(err, "given back") == NULL)
        return 0;
    return 1;
}

static void body(void)
{
    static char err[16384];
    const char *dir_end = strrchr(self, '/');
    char foreign[4096];
    size_t i;
    int round, rounds;

    for (i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
        const struct scenario *s = &scenarios[i];

        if (s->what == NULL)
            continue;
        if (!tu_ok(run_one(s, err, sizeof(err)), "%s", s->what))
            diag_text(err);
    }

    /* every process is slow under valgrind: fewer rounds there */
    rounds = tu_under_valgrind() ? 3 : TWO_THREAD_ROUNDS;
    for (round = 0; round < rounds; round++)
        if (!run_one(find("two-threads"), err, sizeof(err)))
            break;
    if (!tu_ok(round == rounds,
               "two threads making the first RAND call at once, %d processes: "
               "both succeed, CHACHA20-DRBG",
               rounds)) {
        tu_diag("round %d failed", round);
        diag_text(err);
    }

    /*
     * A libcrypto other than the module's own: t_library_foreign links
     * libcrypto statically and loads the module, which pulls in the shared
     * one.  If the detection breaks, the debug line changes.
     */
    snprintf(foreign, sizeof(foreign), "%.*st_library_foreign",
             dir_end != NULL ? (int)(dir_end - self + 1) : 0, self);
    if (access(foreign, X_OK) != 0) {
        tu_skip(
            "no static libcrypto at build time: t_library_foreign not built");
    } else {
        int st = spawn(foreign, NULL, NULL, err, sizeof(err));

        if (!tu_ok(st == 0
                       && strstr(err, "left alone (loaded by a libcrypto other "
                                      "than the one chacharng is linked with)")
                              != NULL,
                   "loaded by a static libcrypto: detected as foreign, "
                   "RAND_bytes untouched, CHACHA20-DRBG still fetchable"))
            diag_text(err);
    }
}

int main(int argc, char **argv)
{
    self = argv[0];
    if (argc == 2) {
        const struct scenario *s = find(argv[1]);
        int ok;

        if (s == NULL) {
            say("no scenario %s", argv[1]);
            return 2;
        }
        /* every scenario: libcrypto allocates from the checked heap */
        if (!ch_install()) {
            say("libcrypto allocated before the checked heap was installed");
            return 1;
        }
        ok = s->run();
        unload_kept();
        return ok ? 0 : 1;
    }
    if (getenv("OPENSSL_MODULES") == NULL) {
        printf("1..0 # SKIP OPENSSL_MODULES is not set (run through make "
               "check)\n");
        return 0;
    }
    return tu_main_once(body);
}
