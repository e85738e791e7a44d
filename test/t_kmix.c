/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kernel mixing through libcrypto (DESIGN.md sections 2 and 3): the
 * `kernel_mix` and `kernel_mix_failures` ctx params, what `auto` picks here
 * (checked against an independent reading of the C library and the vDSO)
 * and under which parents, CHACHARNG_KERNEL_MIX and the `kernel_mix` config
 * key with the environment winning, exactly one 32-byte GRND_NONBLOCK
 * getrandom per refill and per direct request with mixing on (none off),
 * on the EVP path and on the random-provider path, and failing kernel reads
 * (ENOSYS, EAGAIN, EINTR) that never fail a generate, are counted and are
 * reported under CHACHARNG_DEBUG.  getrandom is interposed (interpose.c);
 * seeding comes from the core's entropy upcall, which is libcrypto's own,
 * so every getrandom the module makes here is a mixing read.
 */
#define _GNU_SOURCE

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/params.h>

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
 * What `auto` should pick, worked out apart from the provider: glibc's
 * version, and the vDSO looked up through the dynamic linker, which lists
 * it under its soname.  Returns 1 (on), 0 (off) or -1 (cannot tell), with
 * the reasons in |why|.
 */
static int expected_auto(char *why, size_t n, int *libc_ok)
{
    unsigned int major = 0, minor = 0;
    void *vdso;
    int sym;

    *libc_ok = 0;
#ifdef __GLIBC__
    if (sscanf(gnu_get_libc_version(), "%u.%u", &major, &minor) == 2)
        *libc_ok = major > 2 || (major == 2 && minor >= 41);
#endif
    vdso = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (vdso == NULL) {
        snprintf(why, n, "glibc %u.%u, no vDSO found by dlopen", major, minor);
        return *libc_ok ? -1 : 0;
    }
    sym = dlsym(vdso, "__vdso_getrandom") != NULL
          || dlsym(vdso, "__kernel_getrandom") != NULL;
    dlclose(vdso);
    snprintf(why, n, "glibc %u.%u, vDSO getrandom %s", major, minor,
             sym ? "exported" : "absent");
    return *libc_ok && sym;
}

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
    char why[128];
    int libc_ok, want = expected_auto(why, sizeof(why), &libc_ok);

    tu_diag("auto here: %s", why);
    if (want < 0) {
        tu_skip("auto: cannot tell independently whether the vDSO serves "
                "getrandom (%s)",
                why);
    } else {
        TU_OK(plain != NULL && mix_of(plain) == want,
              "auto, no parent: kernel mixing %s (%s; got %d)",
              want ? "on" : "off", why, mix_of(plain));
    }
    if (libc_ok && want == 0)
        tu_skip("auto on needs a kernel whose vDSO exports getrandom (6.11+"
                " x86_64, 6.12+ aarch64); this one does not");
    else if (!libc_ok)
        tu_diag("auto on needs glibc 2.41 or later: not tested here");

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
    if (want >= 0)
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
static void count_reads(EVP_RAND_CTX *ctx, int on, const char *what)
{
    size_t avail = 0, i;
    unsigned long want = 0, calls, mix;
    unsigned int failures = 1;
    int ok = 1;

    ip_getrandom_reset_calls();
    for (i = 0; i < NPATTERN; i++) {
        want += model_reads(&avail, pattern[i]);
        ok &= EVP_RAND_generate(ctx, big, pattern[i], PU_STRENGTH, 0, NULL, 0);
    }
    /* prediction resistance: the reseed empties the buffer, then a refill */
    avail = 0;
    want += model_reads(&avail, 10);
    ok &= EVP_RAND_generate(ctx, big, 10, PU_STRENGTH, 1, NULL, 0);
    calls = ip_getrandom_calls();
    mix = ip_getrandom_mix_calls();
    if (!on)
        want = 0;
    TU_OK(ok && calls == want && mix == calls,
          "%s, mixing %s: %lu getrandom calls, %lu of 32 bytes with "
          "GRND_NONBLOCK (want %lu: one per refill and direct request)",
          what, on ? "on" : "off", calls, mix, want);
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

/* The random-provider entry point, captured from an add_builtin load. */
static OSSL_provider_init_fn *real_init;
static chacharng_random_bytes_fn *random_bytes;
static void *random_provctx;

static int capture_init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
                        const OSSL_DISPATCH **out, void **provctx)
{
    const OSSL_DISPATCH *d;

    if (!real_init(handle, in, out, provctx))
        return 0;
    random_bytes = NULL;
    for (d = *out; d->function_id != 0; d++)
        if (d->function_id == OSSL_FUNC_PROVIDER_RANDOM_BYTES)
            random_bytes = (chacharng_random_bytes_fn *)d->function;
    random_provctx = *provctx;
    return 1;
}

/* The random-provider generators follow the provider's setting. */
static void test_random_bytes(void)
{
    const char *dir = getenv("OPENSSL_MODULES");
    char path[4096];
    void *h;
    int on;

    snprintf(path, sizeof(path), "%s/chacharng.so", dir != NULL ? dir : ".");
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    real_init = h != NULL
                    ? (OSSL_provider_init_fn *)dlsym(h, "OSSL_provider_init")
                    : NULL;
    if (!TU_OK(real_init != NULL, "OSSL_provider_init found in %s", path))
        return;
    for (on = 1; on >= 0; on--) {
        OSSL_LIB_CTX *lc = OSSL_LIB_CTX_new();
        OSSL_PROVIDER *p = NULL;
        size_t avail = 0, i;
        unsigned long want = 0, calls, mix;
        int ok = 1;

        setenv(ENV_KMIX, on ? "on" : "off", 1);
        if (lc != NULL
            && OSSL_PROVIDER_add_builtin(lc, "chacharng-builtin", capture_init))
            p = OSSL_PROVIDER_load(lc, "chacharng-builtin");
        unsetenv(ENV_KMIX);
        if (p == NULL || random_bytes == NULL || !ip_attach_module()) {
            tu_skip("random_bytes, %s=%s: not exported by this build", ENV_KMIX,
                    on ? "on" : "off");
        } else {
            ip_getrandom_reset_calls();
            for (i = 0; i < NPATTERN; i++) {
                want += model_reads(&avail, pattern[i]);
                ok &= random_bytes(random_provctx, 0, big, pattern[i], 256);
            }
            calls = ip_getrandom_calls();
            mix = ip_getrandom_mix_calls();
            if (!on)
                want = 0;
            TU_OK(ok && calls == want && mix == calls,
                  "random_bytes, %s=%s: %lu getrandom calls, %lu shaped as "
                  "mixing reads (want %lu)",
                  ENV_KMIX, on ? "on" : "off", calls, mix, want);
        }
        if (p != NULL)
            OSSL_PROVIDER_unload(p);
        OSSL_LIB_CTX_free(lc);
    }
    dlclose(h);
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

/* Under CHACHARNG_DEBUG a failed read says so on stderr. */
static void test_debug_line(void)
{
    struct pu_env e;
    EVP_RAND_CTX *c;
    char path[4096], line[512];
    const char *dir = getenv("TMPDIR");
    int fd, saved, seen = 0;
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
        while (fgets(line, sizeof(line), f) != NULL)
            if (strstr(line, "chacharng: kernel mixing skipped") != NULL)
                seen = 1;
        fclose(f);
    }
    unlink(path);
    TU_OK(seen, "CHACHARNG_DEBUG: a failed kernel read prints a line");
}

static void body(void)
{
    struct pu_env env;

    if (!TU_OK(env_with(&env, NULL), "default and chacharng loaded, %s unset",
               ENV_KMIX))
        return;
    test_params(&env);
    test_auto(&env);
    test_counts(&env);
    test_failures(&env);
    test_env();
    test_config();
    test_random_bytes();
    test_debug_line();
    pu_env_free(&env);
}

int main(void)
{
    return tu_main_per_impl(body);
}
