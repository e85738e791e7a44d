/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kernel mixing through libcrypto (DESIGN.md sections 2 and 3): the
 * `kernel_mix` and `kernel_mix_failures` ctx params, what `auto` picks here
 * (on exactly where the vDSO route exists, whatever the C library) and
 * under which parents, CHACHARNG_KERNEL_MIX and the `kernel_mix` config
 * key with the environment winning, exactly one 16-byte GRND_NONBLOCK
 * read per refill and per direct request with mixing on (none off), on
 * the EVP path and on the random-provider path, by the route expected,
 * and failing kernel reads (ENOSYS, EAGAIN, EINTR) that never fail a
 * generate, are counted and are reported under CHACHARNG_DEBUG, as is the
 * route.  getrandom and getauxval are interposed (interpose.c): each
 * route runs in a process of its own, with the kernel's vDSO, with none
 * (the system call route), or with a stand-in vDSO that counts the reads
 * and passes them on to the kernel's, fails them (the module must fall
 * back to the system call) or refuses its parameters query; a failed
 * mapping for vDSO states falls back too.  Seeding comes from the core's
 * entropy upcall, which is libcrypto's own, so every getrandom the module
 * makes here is a mixing read.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/params.h>

#include "chacha_drbg.h"
#include "capture.h"
#include "errq.h"
#include "interpose.h"
#include "provutil.h"
#include "testutil.h"

#define KMIX "kernel_mix"
#define KMIX_FAILURES "kernel_mix_failures"
#define ENV_KMIX "CHACHARNG_KERNEL_MIX"
#define BUF_BYTES 960 /* one refill's output */
#define MAX_REQUEST ((size_t)1 << 20)

/* ---------------------------------------------------------------------- */
/* Helpers                                                                */
/* ---------------------------------------------------------------------- */

/* Drain the error queue; 1 if some entry's detail text contains |text|. */
static int err_text_has(const char *text)
{
    return tu_err_find(NULL, NULL, text, TU_ERR_QUIET);
}

static int mix_of(EVP_RAND_CTX *ctx)
{
    int v = -1;

    return pu_get_int(ctx, KMIX, &v) ? v : -1;
}

/* A fresh environment loaded with CHACHARNG_KERNEL_MIX = |value| (NULL: unset). */
static int env_with(struct pu_env *env, const char *value)
{
    int ok;

    if (value != NULL)
        setenv(ENV_KMIX, value, 1);
    else
        unsetenv(ENV_KMIX);
    ok = pu_env_init(env);
    unsetenv(ENV_KMIX);
    return ok && ip_attach_module();
}

/*
 * The route under test in this process: the vDSO getauxval shows the
 * module, whether the module should find the vDSO route (so `auto` is on),
 * and where its reads should go.
 */
struct route_case {
    const char *name;
    enum ip_vdso_mode mode;
    int vdso_route; /* the module reads by the vDSO (-1: as the kernel) */
    int counted;    /* reads reach the stand-in, which counts them */
    int syscalls;   /* reads reach the getrandom system call (-1: ditto) */
};

static const struct route_case cases[] = {
    { "the kernel's vDSO", IP_VDSO_REAL, -1, 0, -1 },
    { "no vDSO", IP_VDSO_NONE, 0, 0, 1 },
    { "a counting vDSO", IP_VDSO_COUNTING, 1, 1, 0 },
    { "a vDSO whose reads fail", IP_VDSO_FAILING, 1, 1, 1 },
    { "a vDSO refusing its query", IP_VDSO_NO_PARAMS, 0, 0, 1 },
};

static struct route_case rc; /* this process's, resolved */

/*
 * How many kernel reads a request of |n| bytes makes with mixing on, from
 * the buffer accounting of DESIGN.md section 3 (EVP splits at max_request).
 */
static unsigned long model_reads(size_t *avail, size_t n)
{
    unsigned long reads = 0;

    do {
        size_t chunk = n < MAX_REQUEST ? n : MAX_REQUEST;
        size_t take = chunk < *avail ? chunk : *avail, r = chunk - take;

        *avail -= take;
        if (r > 0) {
            reads++; /* one refill or one direct request */
            if (r <= BUF_BYTES)
                *avail = BUF_BYTES - r;
        }
        n -= chunk;
    } while (n > 0);
    return reads;
}

static const size_t pattern[] = {
    1,   959,  1,    4,     16,          16,
    16,  1024, 4000, 65536, MAX_REQUEST, 2 * MAX_REQUEST + 100,
    960, 961,  0,    3,
};
#define NPATTERN (sizeof(pattern) / sizeof(pattern[0]))

static unsigned char big[2 * ((size_t)1 << 20) + 100];

/* ---------------------------------------------------------------------- */
/* The parameters                                                         */
/* ---------------------------------------------------------------------- */

static void test_params(struct pu_env *env)
{
    const OSSL_PARAM *g = EVP_RAND_gettable_ctx_params(env->rand);
    const OSSL_PARAM *s = EVP_RAND_settable_ctx_params(env->rand);
    const OSSL_PARAM *p;
    EVP_RAND_CTX *ctx = pu_drbg_new(env, NULL);
    OSSL_PARAM ip[2];
    unsigned int failures = 99;
    int one = 1, before, ok;

    p = OSSL_PARAM_locate_const(g, KMIX);
    TU_OK(p != NULL && p->data_type == OSSL_PARAM_INTEGER
              && p->data_size == sizeof(int),
          "gettable: kernel_mix, an int");
    p = OSSL_PARAM_locate_const(g, KMIX_FAILURES);
    TU_OK(p != NULL && p->data_type == OSSL_PARAM_UNSIGNED_INTEGER
              && p->data_size == sizeof(unsigned int),
          "gettable: kernel_mix_failures, a uint");
    p = OSSL_PARAM_locate_const(s, KMIX);
    TU_OK(p != NULL && p->data_type == OSSL_PARAM_INTEGER,
          "settable: kernel_mix, an int");
    if (!TU_OK(ctx != NULL, "context for the parameter checks"))
        return;
    ok = pu_get_uint(ctx, KMIX_FAILURES, &failures);
    TU_OK(ok && failures == 0, "kernel_mix_failures starts at 0 (%u)",
          failures);
    TU_OK(pu_set_int(ctx, KMIX, 1) && mix_of(ctx) == 1,
          "kernel_mix = 1 reads back");
    TU_OK(pu_set_int(ctx, KMIX, 0) && mix_of(ctx) == 0,
          "kernel_mix = 0 reads back");
    before = mix_of(ctx);
    pu_err_clear();
    TU_OK(!pu_set_int(ctx, KMIX, 2) && err_text_has("kernel_mix must be"),
          "kernel_mix = 2 is rejected with a clear error");
    TU_OK(!pu_set_int(ctx, KMIX, -1) && err_text_has("kernel_mix must be"),
          "kernel_mix = -1 is rejected with a clear error");
    TU_OK(!pu_set_utf8(ctx, KMIX, "on") && err_text_has("kernel_mix must be"),
          "kernel_mix as the string \"on\" is rejected");
    TU_OK(mix_of(ctx) == before, "... and kernel_mix is unchanged (%d)",
          mix_of(ctx));
    ip[0] = OSSL_PARAM_construct_int(KMIX, &one);
    ip[1] = OSSL_PARAM_construct_end();
    TU_OK(EVP_RAND_instantiate(ctx, PU_STRENGTH, 0, NULL, 0, ip)
              && mix_of(ctx) == 1,
          "kernel_mix = 1 in instantiate's params[] is applied");
    EVP_RAND_CTX_free(ctx);
}

/* ---------------------------------------------------------------------- */
/* What auto picks, and where                                             */
/* ---------------------------------------------------------------------- */

static void test_auto(struct pu_env *env)
{
    EVP_RAND_CTX *plain = pu_drbg_new(env, NULL), *test = NULL, *kid = NULL;
    EVP_RAND_CTX *top = NULL, *ctr = NULL, *src = NULL, *c = NULL;
    EVP_RAND *r;
    int want = rc.vdso_route;

    TU_OK(plain != NULL && mix_of(plain) == want,
          "%s: auto, no parent: kernel mixing %s (got %d)", rc.name,
          want ? "on" : "off", mix_of(plain));
    if (rc.mode == IP_VDSO_REAL && !want)
        tu_skip("auto on with the kernel's own vDSO needs one that exports "
                "getrandom (6.11+ x86_64, 6.12+ aarch64); this one does not");

    test = pu_test_parent(env, PU_STRENGTH, NULL, 0);
    c = test != NULL ? pu_drbg_new(env, test) : NULL;
    TU_OK(c != NULL && mix_of(c) == 0,
          "auto under a TEST-RAND parent: off (%d)", c ? mix_of(c) : -1);
    EVP_RAND_CTX_free(c);

    top = pu_drbg_new(env, NULL);
    if (top != NULL && pu_set_int(top, KMIX, 1)) {
        kid = pu_drbg_new(env, top);
        TU_OK(kid != NULL && mix_of(kid) == 1,
              "auto under a chacharng parent with mixing on: on");
        EVP_RAND_CTX_free(kid);
    }
    if (top != NULL && pu_set_int(top, KMIX, 0)) {
        kid = pu_drbg_new(env, top);
        TU_OK(kid != NULL && mix_of(kid) == 0,
              "auto under a chacharng parent with mixing off: off");
        EVP_RAND_CTX_free(kid);
    }

    r = EVP_RAND_fetch(env->libctx, "CTR-DRBG", "provider=default");
    ctr = r != NULL ? EVP_RAND_CTX_new(r, NULL) : NULL;
    EVP_RAND_free(r);
    c = ctr != NULL ? pu_drbg_new(env, ctr) : NULL;
    TU_OK(c != NULL && mix_of(c) == 0, "auto under a CTR-DRBG parent: off");
    EVP_RAND_CTX_free(c);

    /* an entropy source, as libcrypto's own primary DRBG has */
    r = EVP_RAND_fetch(env->libctx, "SEED-SRC", "provider=default");
    src = r != NULL ? EVP_RAND_CTX_new(r, NULL) : NULL;
    EVP_RAND_free(r);
    c = src != NULL ? pu_drbg_new(env, src) : NULL;
    TU_OK(c != NULL && mix_of(c) == want,
          "auto under a SEED-SRC parent: as with no parent (%d)",
          c ? mix_of(c) : -1);
    EVP_RAND_CTX_free(c);
    pu_err_clear();
    EVP_RAND_CTX_free(src);
    EVP_RAND_CTX_free(ctr);
    EVP_RAND_CTX_free(top);
    EVP_RAND_CTX_free(test);
    EVP_RAND_CTX_free(plain);
}

/* CHACHARNG_KERNEL_MIX at load: on and off everywhere, junk refused. */
static void test_env(void)
{
    struct pu_env e;
    EVP_RAND_CTX *c, *t, *k;
    static const char *const values[] = { "on", "off" };
    size_t i;

    for (i = 0; i < 2; i++) {
        int want = i == 0;

        if (!TU_OK(env_with(&e, values[i]), "loaded with %s=%s", ENV_KMIX,
                   values[i]))
            continue;
        c = pu_drbg_new(&e, NULL);
        t = pu_test_parent(&e, PU_STRENGTH, NULL, 0);
        k = t != NULL ? pu_drbg_new(&e, t) : NULL;
        TU_OK(c != NULL && k != NULL && mix_of(c) == want && mix_of(k) == want,
              "%s=%s: %s with no parent and under TEST-RAND", ENV_KMIX,
              values[i], values[i]);
        EVP_RAND_CTX_free(k);
        EVP_RAND_CTX_free(t);
        EVP_RAND_CTX_free(c);
        pu_env_free(&e);
    }
    setenv(ENV_KMIX, "maybe", 1);
    pu_err_clear();
    {
        OSSL_LIB_CTX *lc = OSSL_LIB_CTX_new();
        OSSL_PROVIDER *p =
            lc != NULL ? OSSL_PROVIDER_load(lc, PU_PROVIDER) : NULL;

        TU_OK(lc != NULL && p == NULL
                  && err_text_has(ENV_KMIX "=maybe: expected auto, on or off"),
              "%s=maybe: the provider refuses to load, saying why", ENV_KMIX);
        if (p != NULL)
            OSSL_PROVIDER_unload(p);
        OSSL_LIB_CTX_free(lc);
    }
    unsetenv(ENV_KMIX);
}

/*
 * A config whose chacharng section has `kernel_mix = |value|`, loaded into
 * a new library context; the mixing of a parentless context, or -1 if
 * the provider did not load (its error then stays on the queue).
 */
static int config_mix(const char *value)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    OSSL_LIB_CTX *lc = NULL;
    EVP_RAND *r = NULL;
    EVP_RAND_CTX *c = NULL;
    FILE *f;
    int fd, got = -1;

    snprintf(path, sizeof(path), "%s/t_kmix-XXXXXX",
             dir != NULL && *dir != '\0' ? dir : "/tmp");
    if ((fd = mkstemp(path)) < 0 || (f = fdopen(fd, "w")) == NULL)
        return -2;
    fprintf(f,
            "config_diagnostics = 1\nopenssl_conf = init\n"
            "[init]\nproviders = provs\n"
            "[provs]\nchacharng = cc\n"
            "[cc]\nactivate = 1\nkernel_mix = %s\n",
            value);
    fclose(f);
    lc = OSSL_LIB_CTX_new();
    if (lc != NULL && OSSL_LIB_CTX_load_config(lc, path)
        && (r = EVP_RAND_fetch(lc, PU_ALG, PU_PROPQ)) != NULL
        && (c = EVP_RAND_CTX_new(r, NULL)) != NULL)
        got = mix_of(c);
    EVP_RAND_CTX_free(c);
    EVP_RAND_free(r);
    OSSL_LIB_CTX_free(lc);
    unlink(path);
    return got;
}

static void test_config(void)
{
    int got;

    unsetenv(ENV_KMIX);
    got = config_mix("on");
    TU_OK(got == 1, "config kernel_mix = on: on (%d)", got);
    got = config_mix("off");
    TU_OK(got == 0, "config kernel_mix = off: off (%d)", got);
    setenv(ENV_KMIX, "off", 1);
    got = config_mix("on");
    TU_OK(got == 0, "config kernel_mix = on, %s=off: the environment wins (%d)",
          ENV_KMIX, got);
    setenv(ENV_KMIX, "on", 1);
    got = config_mix("maybe");
    TU_OK(got == 1,
          "config kernel_mix = maybe, %s=on: the environment wins (%d)",
          ENV_KMIX, got);
    unsetenv(ENV_KMIX);
    pu_err_clear();
    got = config_mix("maybe");
    TU_OK(got == -1,
          "config kernel_mix = maybe: the provider refuses to "
          "load (%d)",
          got);
    /* 3.0 loads the config anyway and drops the activation error */
    if (err_text_has("config key kernel_mix=maybe: expected auto, on or off"))
        TU_OK(1, "... and the error says why");
    else
        tu_diag("this libcrypto drops the provider's activation error");
    pu_err_clear();
}

/* ---------------------------------------------------------------------- */
/* One kernel read per refill and per direct request                      */
/* ---------------------------------------------------------------------- */

/* Run the request pattern on |ctx|; expect |on| reads as the model says. */
/*
 * The reads since the last reset went where the route sends them: |want|
 * of them, to the system call and to the stand-in vDSO as the route says,
 * all shaped as mixing reads.
 */
static int reads_as_routed(unsigned long want, char *got, size_t n)
{
    unsigned long calls = ip_getrandom_calls(), mix = ip_getrandom_mix_calls();
    unsigned long vmix, vcalls = ip_vdso_calls(&vmix);
    unsigned long want_sys = rc.syscalls ? want : 0;
    unsigned long want_vdso = rc.counted ? want : 0;

    snprintf(got, n,
             "%s: %lu getrandom calls, %lu vDSO reads, %lu and %lu of them"
             " shaped as mixing reads (want %lu and %lu)",
             rc.name, calls, vcalls, mix, vmix, want_sys, want_vdso);
    return calls == want_sys && mix == calls && vcalls == want_vdso
           && vmix == vcalls;
}

static void reset_reads(void)
{
    ip_getrandom_reset_calls();
    ip_vdso_reset_calls();
}

static void count_reads(EVP_RAND_CTX *ctx, int on, const char *what)
{
    size_t avail = 0, i;
    unsigned long want = 0;
    unsigned int failures = 1;
    char got[256];
    int ok = 1;

    reset_reads();
    for (i = 0; i < NPATTERN; i++) {
        want += model_reads(&avail, pattern[i]);
        ok &= EVP_RAND_generate(ctx, big, pattern[i], PU_STRENGTH, 0, NULL, 0);
    }
    /* prediction resistance: the reseed empties the buffer, then a refill */
    avail = 0;
    want += model_reads(&avail, 10);
    ok &= EVP_RAND_generate(ctx, big, 10, PU_STRENGTH, 1, NULL, 0);
    if (!on)
        want = 0;
    ok &= reads_as_routed(want, got, sizeof(got));
    TU_OK(ok,
          "%s, mixing %s, one read per refill and direct request, of %d "
          "bytes with GRND_NONBLOCK: %s",
          what, on ? "on" : "off", CHACHA_DRBG_MIX_BYTES, got);
    ok = pu_get_uint(ctx, KMIX_FAILURES, &failures);
    TU_OK(ok && failures == 0, "%s, mixing %s: no failed reads (%u)", what,
          on ? "on" : "off", failures);
}

static void test_counts(struct pu_env *env)
{
    EVP_RAND_CTX *c;
    int on;

    for (on = 1; on >= 0; on--) {
        c = pu_drbg_new(env, NULL);
        if (!TU_OK(
                c != NULL && pu_set_int(c, KMIX, on)
                    && EVP_RAND_instantiate(c, PU_STRENGTH, 0, NULL, 0, NULL),
                "context with kernel_mix = %d", on))
            continue;
        count_reads(c, on, "EVP_RAND_generate");
        EVP_RAND_CTX_free(c);
    }
}

/* The random-provider generators follow the provider's setting. */
static void test_random_bytes(void)
{
    char path[4096];
    int on;

    if (!TU_OK(cap_module_init(path, sizeof(path)) != NULL,
               "OSSL_provider_init found in %s", path))
        return;
    for (on = 1; on >= 0; on--) {
        OSSL_LIB_CTX *lc = OSSL_LIB_CTX_new();
        OSSL_PROVIDER *p = NULL;
        size_t avail = 0, i;
        unsigned long want = 0;
        char got[256];
        int ok = 1;

        setenv(ENV_KMIX, on ? "on" : "off", 1);
        if (lc != NULL
            && OSSL_PROVIDER_add_builtin(lc, "chacharng-builtin", cap_init))
            p = OSSL_PROVIDER_load(lc, "chacharng-builtin");
        unsetenv(ENV_KMIX);
        if (p == NULL || cap_kept.random_bytes == NULL || !ip_attach_module()) {
            tu_skip("random_bytes, %s=%s: not exported by this build", ENV_KMIX,
                    on ? "on" : "off");
        } else {
            reset_reads();
            for (i = 0; i < NPATTERN; i++) {
                want += model_reads(&avail, pattern[i]);
                ok &= cap_kept.random_bytes(cap_kept.provctx, 0, big,
                                            pattern[i], 256);
            }
            if (!on)
                want = 0;
            ok &= reads_as_routed(want, got, sizeof(got));
            TU_OK(ok, "random_bytes, %s=%s: %s", ENV_KMIX, on ? "on" : "off",
                  got);
        }
        if (p != NULL)
            OSSL_PROVIDER_unload(p);
        OSSL_LIB_CTX_free(lc);
    }
}

/* ---------------------------------------------------------------------- */
/* Failing kernel reads                                                   */
/* ---------------------------------------------------------------------- */

static void test_failures(struct pu_env *env)
{
    static const struct {
        int err;
        const char *name;
    } errs[] = { { ENOSYS, "ENOSYS" },
                 { EAGAIN, "EAGAIN" },
                 { EINTR, "EINTR" } };
    size_t i, k;

    for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
        EVP_RAND_CTX *c = pu_drbg_new(env, NULL);
        size_t avail = 0;
        unsigned long want = 0;
        unsigned int failures = 0;
        int ok = 1, written = 1;

        if (!TU_OK(
                c != NULL && pu_set_int(c, KMIX, 1)
                    && EVP_RAND_instantiate(c, PU_STRENGTH, 0, NULL, 0, NULL),
                "context with kernel_mix = 1"))
            continue;
        pu_err_clear();
        ip_getrandom_fail_with(errs[i].err);
        for (k = 0; k < NPATTERN; k++) {
            if (pattern[k] == 0)
                continue;
            want += model_reads(&avail, pattern[k]);
            memset(big, 0xa5, pattern[k]);
            ok &=
                EVP_RAND_generate(c, big, pattern[k], PU_STRENGTH, 0, NULL, 0);
            /* from 4 bytes on, all 0xa5 by chance is 2^-32 at worst */
            written &=
                pattern[k] < 4
                || !pu_all_bytes(big, pattern[k] < 16 ? pattern[k] : 16, 0xa5);
        }
        ip_getrandom_fail_with(0);
        TU_OK(ok && written && ERR_peek_error() == 0
                  && EVP_RAND_get_state(c) == EVP_RAND_STATE_READY,
              "getrandom failing with %s: every generate succeeds, writes, "
              "raises nothing",
              errs[i].name);
        ok = pu_get_uint(c, KMIX_FAILURES, &failures);
        TU_OK(ok && failures == want,
              "getrandom failing with %s: kernel_mix_failures counts each "
              "skipped read (%u, want %lu)",
              errs[i].name, failures, want);
        EVP_RAND_CTX_free(c);
    }
}

/*
 * Under CHACHARNG_DEBUG the load says which route reads, and a failed
 * read says so on stderr.
 */
static void test_debug_line(void)
{
    struct pu_env e;
    EVP_RAND_CTX *c;
    char path[4096], line[512];
    const char *dir = getenv("TMPDIR");
    const char *route =
        rc.vdso_route ? "; route: vDSO " : "; route: getrandom system call";
    int fd, saved, seen = 0, said_route = 0;
    FILE *f;

    snprintf(path, sizeof(path), "%s/t_kmix-err-XXXXXX",
             dir != NULL && *dir != '\0' ? dir : "/tmp");
    fflush(stderr);
    if ((fd = mkstemp(path)) < 0 || (saved = dup(STDERR_FILENO)) < 0) {
        TU_OK(0, "temporary file for stderr");
        return;
    }
    dup2(fd, STDERR_FILENO);
    setenv("CHACHARNG_DEBUG", "1", 1);
    if (env_with(&e, "on")) {
        c = pu_drbg_ready(&e, NULL);
        ip_getrandom_fail_with(ENOSYS);
        if (c != NULL)
            EVP_RAND_generate(c, big, 100, PU_STRENGTH, 0, NULL, 0);
        ip_getrandom_fail_with(0);
        EVP_RAND_CTX_free(c);
        pu_env_free(&e);
    }
    unsetenv("CHACHARNG_DEBUG");
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    close(fd);
    if ((f = fopen(path, "r")) != NULL) {
        while (fgets(line, sizeof(line), f) != NULL) {
            if (strstr(line, "chacharng: kernel mixing skipped") != NULL)
                seen = 1;
            if (strstr(line, "chacharng: kernel mixing on (") != NULL
                && strstr(line, route) != NULL)
                said_route = 1;
        }
        fclose(f);
    }
    unlink(path);
    TU_OK(said_route, "%s, CHACHARNG_DEBUG: the load names the route (\"%s\")",
          rc.name, route + 2);
    if (rc.syscalls)
        TU_OK(seen, "CHACHARNG_DEBUG: a failed kernel read prints a line");
}

/*
 * Once mappings can be had again, a generator whose state could not be
 * had goes back to the vDSO within KMIX_STATE_RETRY reads (kmix.c tries
 * again every that many stateless reads in the process), rather than
 * reading by the system call for the rest of its life.
 */
#define KMIX_STATE_RETRY 64
static void returns_to_vdso(EVP_RAND_CTX *c)
{
    unsigned long vmix, calls;
    size_t i;
    int ok = 1;

    reset_reads();
    for (i = 0; i < 2 * KMIX_STATE_RETRY; i++)
        ok &= EVP_RAND_generate(c, big, 4096, PU_STRENGTH, 0, NULL, 0);
    calls = ip_getrandom_mix_calls();
    (void)ip_vdso_calls(&vmix);
    TU_OK(ok && vmix > 0 && calls + vmix == 2 * KMIX_STATE_RETRY
              && calls <= KMIX_STATE_RETRY,
          "mappings work again: the generator is back on the vDSO within %d "
          "reads (%lu system calls, %lu vDSO reads of %d)",
          KMIX_STATE_RETRY, calls, vmix, 2 * KMIX_STATE_RETRY);
}

/*
 * A vDSO state that cannot be mapped: the generator reads by the system
 * call instead.  New generators take states until one needs a new
 * mapping, whose mmap fails.
 */
static void test_mmap_fallback(struct pu_env *env)
{
    EVP_RAND_CTX *c[200];
    size_t n, i;
    unsigned long want;
    unsigned int failures = 1;
    char got[256];
    int ok = 0, fired = 0;

    for (n = 0; n < sizeof(c) / sizeof(c[0]) && !fired; n++) {
        c[n] = pu_drbg_new(env, NULL);
        if (c[n] == NULL || !pu_set_int(c[n], KMIX, 1)
            || !EVP_RAND_instantiate(c[n], PU_STRENGTH, 0, NULL, 0, NULL))
            break;
        reset_reads();
        ip_fail_mmap(1);
        ok = EVP_RAND_generate(c[n], big, 16, PU_STRENGTH, 0, NULL, 0);
        fired = ip_mmap_fired();
        ip_fail_mmap(0);
    }
    if (!TU_OK(fired,
               "%s: generators took states until one needed a new "
               "mapping (%zu generators)",
               rc.name, n))
        goto out;
    /* the failed one: its first mix, then a direct request, by the system */
    ok &= EVP_RAND_generate(c[n - 1], big, 4096, PU_STRENGTH, 0, NULL, 0);
    rc.syscalls = 1;
    rc.counted = 0;
    want = 2;
    ok &= reads_as_routed(want, got, sizeof(got));
    ok &= pu_get_uint(c[n - 1], KMIX_FAILURES, &failures) && failures == 0;
    TU_OK(ok,
          "the mapping for a vDSO state fails: that generator mixes by the "
          "system call, with no failed read (%s)",
          got);
    returns_to_vdso(c[n - 1]);
out:
    for (i = 0; i < n; i++)
        EVP_RAND_CTX_free(c[i]);
    pu_err_clear();
}

/* Every test, on the route of case |i|, in this process. */
static void run_route(size_t i)
{
    struct pu_env env;

    rc = cases[i];
    if (rc.mode == IP_VDSO_REAL) {
        rc.vdso_route = ip_vdso_real_available();
        rc.syscalls = !rc.vdso_route;
    }
    if (!ip_vdso_mode(rc.mode)) {
        tu_skip("kernel mixing with %s: needs the kernel's own vDSO "
                "getrandom, which this kernel does not export",
                rc.name);
        return;
    }
    if (!TU_OK(env_with(&env, NULL),
               "%s: default and chacharng loaded, %s "
               "unset",
               rc.name, ENV_KMIX))
        return;
    if (rc.mode == IP_VDSO_REAL) {
        test_params(&env);
        test_env();
        test_config();
    }
    test_auto(&env);
    test_counts(&env);
    if (rc.syscalls)
        test_failures(&env);
    test_random_bytes();
    test_debug_line();
    if (rc.mode == IP_VDSO_COUNTING)
        test_mmap_fallback(&env);
    pu_env_free(&env);
}

static void run_case(void *arg)
{
    run_route(*(const size_t *)arg);
}

/* Each route in a child of its own: the module finds its route once. */
static void body(void)
{
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        tu_run_child(cases[i].name, run_case, &i);
}

int main(void)
{
    return tu_main_per_impl(body);
}
