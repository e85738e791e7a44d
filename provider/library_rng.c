/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The literal command (DESIGN.md section 8): `openssl rand -provider
 * chacharng` with no config.  `-provider X` turns off the implicit default
 * provider, and libcrypto then fetches CTR-DRBG for its primary DRBG and
 * fails.  So, when chacharng is loaded as the only provider of the default
 * library context, it names CHACHA20-DRBG as that context's DRBG
 * (RAND_set_DRBG_type), and gives the name back if another provider comes
 * before the primary DRBG exists.  It never registers under another
 * algorithm's name, and it does nothing at all in a private or child
 * library context, when a config file activated it or has a [random]
 * section, when the application chose a DRBG of its own, when the
 * libcrypto that loaded it is not the one it is linked with, or with
 * CHACHARNG_LIBRARY_RNG=no.
 *
 * Nothing here runs on the generate path.
 */
#define _GNU_SOURCE /* dladdr */

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* glibc 2.32+: false from the first thread the process ever created on */
#if defined(__has_include)
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define CHACHARNG_HAVE_LIBC_SINGLE_THREADED 1
#endif
#endif

#include <openssl/conf.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/provider.h>
#include <openssl/rand.h>

#include "base.h"
#include "debug.h"
#include "library_rng.h"

#define LIBRARY_RNG_PROPQ "provider=" CHACHARNG_NAME

/*
 * libcrypto's own flag (crypto/cryptlib.h, the same value from 3.0 on):
 * OPENSSL_init_crypto with it only reports whether libcrypto is up, and
 * raises no error once OPENSSL_cleanup has begun.
 */
#ifndef OPENSSL_INIT_BASE_ONLY
#define OPENSSL_INIT_BASE_ONLY 0x00040000L
#endif

/*
 * The rule, and why
 * -----------------
 * RAND_set_DRBG_type takes no lock: it frees the stored name, properties,
 * cipher and digest strings and stores copies of ours.  libcrypto reads
 * those strings, without a lock of the setter's, whenever it creates a
 * DRBG of the chain: the primary (inside RAND_get0_primary, under its RAND
 * lock) and every thread's first public and private DRBG (after the
 * primary exists, when RAND_set_DRBG_type refuses).  And OPENSSL_cleanup
 * frees the strings, and the whole RAND state, before it tears down the
 * providers.  So chacharng changes the setting only
 *
 *   - in a process that has one thread, the thread running our code: then
 *     no other thread can be inside libcrypto reading the strings, and
 *     this thread is not (we are called from OSSL_PROVIDER_load, from a
 *     provider's activation or deactivation, or from our teardown, never
 *     from inside a DRBG's creation);
 *   - before the primary DRBG exists (RAND_set_DRBG_type refuses after);
 *   - never once OPENSSL_cleanup has begun.
 *
 * The name is set at load (provider init), when chacharng is the only
 * active provider, and given back when another provider is activated or
 * chacharng is unloaded before any primary used it.  Where a give-back
 * would race another thread, the name stays: chacharng keeps serving
 * RAND_bytes (one whole CHACHA20-DRBG chain) rather than touch strings
 * another thread may hold.  chacharng(7) lists what this leaves.
 *
 * Once libcrypto has made its primary from our name, the name can never
 * change again, and every new thread's public and private DRBG is fetched
 * by it.  An application's OSSL_PROVIDER_unload would then leave new
 * threads unable to fetch CHACHA20-DRBG, whatever it loads next.  So at
 * that moment chacharng keeps one activation of its own (the pin): it stays
 * active, and its DRBGs fetchable, until OPENSSL_cleanup, whose first step
 * (an OPENSSL_atexit handler) drops the pin before libcrypto frees
 * anything.
 *
 * An application's own choice (its RAND_set_DRBG_type, or the [random]
 * section of a config file it loaded itself) made before it loads us is
 * read back from the failed fetch it makes libcrypto raise
 * (stored_choice()), and left as it is.  What that cannot see: an explicit
 * CTR-DRBG without properties, a cipher or digest chosen alone, and a
 * choice made after we were loaded alone (our give-back runs inside another
 * provider's activation, where the core holds locks a fetch needs).
 * CHACHARNG_LIBRARY_RNG=no is the way out there.
 */

struct chacharng_library_rng {
    pthread_mutex_t lock;
    OSSL_LIB_CTX *libctx; /* our own libcrypto's default context */
    const OSSL_CORE_HANDLE *handle;
    OSSL_FUNC_provider_deregister_child_cb_fn *deregister;
    char *self_name; /* the name we were loaded by, to pin ourselves */
    int named;       /* CHACHA20-DRBG is the stored DRBG name, by us */
    int closed;      /* the primary exists: nothing left to decide */
};

/* Our activation kept after the primary was made from our name. */
static pthread_mutex_t pin_lock = PTHREAD_MUTEX_INITIALIZER;
static OSSL_PROVIDER *pin;

static int env_opted_out(void)
{
    const char *v = getenv("CHACHARNG_LIBRARY_RNG");

    return v != NULL
           && (strcmp(v, "no") == 0 || strcmp(v, "0") == 0
               || strcmp(v, "off") == 0 || strcmp(v, "false") == 0);
}

/*
 * 1 if this process has exactly one thread, the caller.  The C library
 * knows for sure while the process never started a thread (and is right
 * under qemu-user, whose own helper threads the kernel counts too);
 * after that, the kernel's count in /proc/self/stat (field 20) decides.
 * Anything unreadable, and qemu-user's 0 there, counts as "more than one".
 */
static int single_threaded(void)
{
    char buf[1024], *p;
    ssize_t n;
    int fd, field;

#ifdef CHACHARNG_HAVE_LIBC_SINGLE_THREADED
    if (__libc_single_threaded)
        return 1;
#endif
    fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    /* the command name, field 2, may hold blanks and parentheses */
    if ((p = strrchr(buf, ')')) == NULL)
        return 0;
    for (field = 2; field < 20; field++) {
        p = strchr(p + 1, ' ');
        if (p == NULL)
            return 0;
    }
    return strtol(p + 1, NULL, 10) == 1;
}

/*
 * 1 once OPENSSL_cleanup has begun: libcrypto then refuses every
 * initialisation, and its RAND state may already be freed.
 */
static int cleanup_begun(void)
{
    return OPENSSL_init_crypto(OPENSSL_INIT_BASE_ONLY, NULL) == 0;
}

/*
 * The core's answer to core_get_libctx is an OSSL_LIB_CTX only when the
 * libcrypto that loaded us is the one we are linked with
 * (provider-base(7)); a static libcrypto in the application, or a second
 * copy of libcrypto.so, hands us a context of its own, opaque to ours.
 * So before that pointer means anything: the core's upcall must live in
 * the same loaded object as the OSSL_LIB_CTX_get0_global_default our
 * module calls (dladdr compares the load bases).  A canonical PLT address
 * in a non-PIE executable can make this say no for the same libcrypto;
 * that only keeps chacharng out, never in.
 */
static int same_libcrypto(OSSL_FUNC_core_get_libctx_fn *get_libctx)
{
    Dl_info core, ours;

    return get_libctx != NULL && dladdr((void *)get_libctx, &core) != 0
           && dladdr((void *)OSSL_LIB_CTX_get0_global_default, &ours) != 0
           && core.dli_fbase == ours.dli_fbase;
}

/*
 * Our libcrypto's default library context if the core loaded us into it,
 * else NULL (a private or child context).  The core hands out the context
 * as the loader gave it: OSSL_PROVIDER_load(NULL, ...) and the default
 * context's config give NULL, which means the default context.  Requires
 * same_libcrypto().
 */
static OSSL_LIB_CTX *default_libctx(const OSSL_CORE_HANDLE *handle,
                                    OSSL_FUNC_core_get_libctx_fn *get_libctx)
{
    OPENSSL_CORE_CTX *theirs = get_libctx(handle);
    OSSL_LIB_CTX *dflt = OSSL_LIB_CTX_get0_global_default();

    if (theirs == NULL || (void *)theirs == (void *)dflt)
        return dflt;
    return NULL;
}

/*
 * 1 if a config file activated us.  libcrypto's provider config module
 * hands every key of the provider's section to core_get_params, the
 * `activate` key included, and nothing else sets that key: so a config
 * activation is exactly "core_get_params knows `activate`" (whatever its
 * value; 3.0 activates on any).  A section that only defines chacharng for
 * a later OSSL_PROVIDER_load has no `activate`, and that load is the
 * application's, as on the command line.  The name we were loaded by goes
 * into *|self_name| (a copy, or NULL).
 */
static int activated_by_config(const CHACHARNG_PROV_CTX *prov, char **self_name)
{
    char *activate = NULL, *name = NULL;
    OSSL_PARAM params[3];
    int ok;

    *self_name = NULL;
    if (prov->core_get_params == NULL)
        return 0;
    params[0] = OSSL_PARAM_construct_utf8_ptr("activate", &activate, 0);
    params[1] =
        OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_CORE_PROV_NAME, &name, 0);
    params[2] = OSSL_PARAM_construct_end();
    ok = prov->core_get_params(prov->handle, params);
    if (ok && name != NULL)
        *self_name = strdup(name);
    return ok && activate != NULL;
}

/*
 * The `random` key of the default config file's [random] section (the
 * file libcrypto loads into the default context: OPENSSL_CONF, else
 * OPENSSLDIR/openssl.cnf), into |buf|; "" if the section is there without
 * that key.  Returns 1 if the file has a `random` section at all: then the
 * config chose the DRBG, not us.  A file that does not parse counts as
 * having none (libcrypto applied none of it).
 */
static int config_random(char *buf, size_t len)
{
    char *file = CONF_get1_default_config_file();
    CONF *conf = NCONF_new(NULL);
    const char *init, *sect, *name;
    int found = 0;

    buf[0] = '\0';
    ERR_set_mark();
    if (file != NULL && conf != NULL && NCONF_load(conf, file, NULL) > 0) {
        init = NCONF_get_string(conf, NULL, "openssl_conf");
        sect = init != NULL ? NCONF_get_string(conf, init, "random") : NULL;
        found = sect != NULL;
        name = found ? NCONF_get_string(conf, sect, "random") : NULL;
        if (name != NULL)
            snprintf(buf, len, "%s", name);
    }
    ERR_pop_to_mark();
    NCONF_free(conf);
    OPENSSL_free(file);
    return found;
}

/*
 * What libcrypto would make its primary DRBG from now: the stored name
 * (or "CTR-DRBG" where none is stored) and whether properties are stored.
 * A provider cannot read that setting back, but libcrypto names both in
 * the error it raises when the primary's fetch fails, and here it must
 * fail: we run in our init, before the core has activated us, and no other
 * provider is active (alone()).  RAND_get0_primary keeps nothing of a
 * failed attempt, so it tries again at the application's first RAND call.
 *
 * The thread's error queue is the probe's scratch: what the application
 * left in it is taken out first and raised again afterwards, the same
 * codes, places and texts in the same order (marks it set are not kept).
 * Returns 1 with |name| filled in, 0 if the error did not say (a wording
 * this libcrypto does not use), -1 if there is a primary: made before,
 * from a provider unloaded since, or now after all (then from the
 * application's choice).
 */
#define SAVED_ERRORS 16 /* ERR_NUM_ERRORS: a queue holds no more */

struct saved_error {
    unsigned long code;
    int line, has_data;
    char *file, *func, *data;
};

static size_t save_errors(struct saved_error *e)
{
    const char *file, *func, *data;
    int line, flags;
    unsigned long code;
    size_t n = 0;

    while (n < SAVED_ERRORS
           && (code = ERR_get_error_all(&file, &line, &func, &data, &flags))
                  != 0) {
        /* the queue's own copies are reused by the next error: copy now */
        e[n].code = code;
        e[n].line = line;
        e[n].has_data = (flags & ERR_TXT_STRING) != 0 && data[0] != '\0';
        e[n].file = strdup(file);
        e[n].func = strdup(func);
        e[n].data = e[n].has_data ? strdup(data) : NULL;
        n++;
    }
    return n;
}

static void restore_errors(struct saved_error *e, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        ERR_new();
        ERR_set_debug(e[i].file, e[i].line, e[i].func);
        if (e[i].has_data && e[i].data != NULL)
            ERR_set_error(ERR_GET_LIB(e[i].code), ERR_GET_REASON(e[i].code),
                          "%s", e[i].data);
        else
            ERR_set_error(ERR_GET_LIB(e[i].code), ERR_GET_REASON(e[i].code),
                          NULL);
        free(e[i].file);
        free(e[i].func);
        free(e[i].data);
    }
}

/* "<context>, Algorithm (NAME : ID), Properties (PROPS)" (evp_fetch.c) */
static int fetch_error_says(const char *data, char *name, size_t len,
                            int *has_props)
{
    static const char alg[] = "Algorithm (", props[] = "), Properties (";
    const char *a = strstr(data, alg), *colon, *p;

    if (a == NULL)
        return 0;
    a += sizeof(alg) - 1;
    colon = strstr(a, " : ");
    p = strstr(a, props);
    if (colon == NULL || p == NULL || colon > p)
        return 0;
    snprintf(name, len, "%.*s", (int)(colon - a), a);
    *has_props = strcmp(p + sizeof(props) - 1, "<null>)") != 0;
    return 1;
}

static int stored_choice(OSSL_LIB_CTX *libctx, char *name, size_t len,
                         int *has_props)
{
    struct saved_error saved[SAVED_ERRORS];
    size_t nsaved = save_errors(saved);
    const char *data;
    unsigned long e;
    int flags, seen = 0, found = 0;

    if (RAND_get0_primary(libctx) != NULL) {
        found = -1;
    } else {
        /* the fetch error that libcrypto's "unable to fetch drbg" follows */
        while ((e = ERR_get_error_all(NULL, NULL, NULL, &data, &flags)) != 0) {
            if (found)
                continue; /* the rest is only emptied */
            if ((flags & ERR_TXT_STRING) != 0)
                seen = fetch_error_says(data, name, len, has_props);
            else if (ERR_GET_LIB(e) == ERR_LIB_RAND
                     && ERR_GET_REASON(e) == RAND_R_UNABLE_TO_FETCH_DRBG)
                found = seen;
        }
    }
    restore_errors(saved, nsaved);
    return found;
}

struct census {
    int others;
};

static int count_provider(OSSL_PROVIDER *p, void *arg)
{
    struct census *c = arg;

    (void)p;
    c->others++;
    return 1;
}

/*
 * 1 if no other provider of |libctx| is active.  Called from our init,
 * before the core has put us in its store and with none of its locks
 * held; OSSL_PROVIDER_do_all first activates the fallback (default)
 * provider where the application kept it (OSSL_PROVIDER_try_load with
 * retain_fallbacks), as libcrypto's own first fetch would.
 */
static int alone(OSSL_LIB_CTX *libctx)
{
    struct census c = { 0 };

    return OSSL_PROVIDER_do_all(libctx, count_provider, &c) && c.others == 0;
}

/*
 * Make the stored DRBG name ours (|want| 1) or libcrypto's default again
 * (0), because of |why| (for CHACHARNG_DEBUG).  Requires lr->lock and the
 * rule above (one thread, no cleanup).  A refusal means the primary
 * exists.
 */
static void set_name(struct chacharng_library_rng *lr, int want,
                     const char *why)
{
    int ok;

    ERR_set_mark();
    if (want)
        ok = RAND_set_DRBG_type(lr->libctx, CHACHARNG_ALG_NAME,
                                LIBRARY_RNG_PROPQ, NULL, NULL);
    else
        ok = RAND_set_DRBG_type(lr->libctx, NULL, NULL, NULL, NULL);
    ERR_pop_to_mark();
    if (!ok) {
        lr->closed = 1;
        return;
    }
    lr->named = want;
    CHACHARNG_DEBUG_LOG("%s (%s)",
                        want ? "CHACHA20-DRBG named as the library DRBG"
                             : "library DRBG name given back",
                        why);
}

/*
 * An event after which libcrypto should no longer find our name: give it
 * back, where the rule allows.  Takes lr->lock.
 */
static void give_back(struct chacharng_library_rng *lr, const char *why)
{
    if (cleanup_begun())
        return; /* libcrypto frees the name itself, with its RAND state */
    pthread_mutex_lock(&lr->lock);
    if (lr->named && !lr->closed) {
        if (single_threaded())
            set_name(lr, 0, why);
        else
            CHACHARNG_DEBUG_LOG("library DRBG name kept (%s, but another "
                                "thread may be reading it)",
                                why);
    }
    pthread_mutex_unlock(&lr->lock);
}

/* Core callback: |p| was activated in our library context. */
static int provider_activated(const OSSL_CORE_HANDLE *p, void *cbdata)
{
    struct chacharng_library_rng *lr = cbdata;

    if (p != lr->handle)
        give_back(lr, "another provider was activated");
    return 1;
}

/* Core callback: |p| was deactivated; if it is us, we are gone. */
static int provider_deactivated(const OSSL_CORE_HANDLE *p, void *cbdata)
{
    struct chacharng_library_rng *lr = cbdata;

    if (p == lr->handle)
        give_back(lr, "chacharng was deactivated");
    return 1;
}

static int global_props_changed(const char *props, void *cbdata)
{
    (void)props;
    (void)cbdata;
    return 1;
}

/* Why libcrypto's choice stays as it is, or NULL if we may name ours. */
static const char *left_alone_because(CHACHARNG_PROV_CTX *prov,
                                      OSSL_FUNC_core_get_libctx_fn *get_libctx,
                                      OSSL_LIB_CTX **libctx, char **self_name)
{
    static char why[192];
    char random[64];
    int has_random, has_props = 0;

    /* the order matters: nothing of ours touches a foreign core's context */
    if (!same_libcrypto(get_libctx))
        return "left alone (loaded by a libcrypto other than the one "
               "chacharng is linked with)";
    if ((*libctx = default_libctx(prov->handle, get_libctx)) == NULL)
        return "left alone (a private or child library context)";
    if (env_opted_out())
        return "left alone (CHACHARNG_LIBRARY_RNG opts out)";
    has_random = config_random(random, sizeof(random));
    if (activated_by_config(prov, self_name) || has_random) {
        /* the config decides: say what it chose (chacharngctl enable) */
        snprintf(why, sizeof(why), "from the config file: %s (%s)",
                 random[0] != '\0' ? random : "libcrypto's default, CTR-DRBG",
                 has_random ? "its random section"
                            : "chacharng was activated from it, and it has "
                              "no random section");
        return why;
    }
    if (!single_threaded())
        return "left alone (more than one thread: another may be reading "
               "libcrypto's DRBG settings)";
    if (!alone(*libctx))
        return "left alone (another provider is active)";
    switch (stored_choice(*libctx, random, sizeof(random), &has_props)) {
    case 1:
        if (strcasecmp(random, "CTR-DRBG") == 0 && !has_props)
            return NULL; /* nothing chosen, or libcrypto's default by name */
        snprintf(why, sizeof(why), "left alone (the application chose %s%s)",
                 random, has_props ? " with properties" : "");
        return why;
    case -1:
        return "left alone (libcrypto's primary DRBG exists already)";
    default:
        return "left alone (libcrypto did not say which DRBG it would "
               "make)";
    }
}

int chacharng_library_rng_init(CHACHARNG_PROV_CTX *prov,
                               const OSSL_DISPATCH *in)
{
    struct chacharng_library_rng *lr;
    OSSL_FUNC_core_get_libctx_fn *get_libctx = NULL;
    OSSL_FUNC_provider_register_child_cb_fn *reg = NULL;
    OSSL_FUNC_provider_deregister_child_cb_fn *dereg = NULL;
    OSSL_LIB_CTX *libctx = NULL;
    char *self_name = NULL;
    const char *why;

    for (; in != NULL && in->function_id != 0; in++) {
        if (in->function_id == OSSL_FUNC_CORE_GET_LIBCTX)
            get_libctx = OSSL_FUNC_core_get_libctx(in);
        else if (in->function_id == OSSL_FUNC_PROVIDER_REGISTER_CHILD_CB)
            reg = OSSL_FUNC_provider_register_child_cb(in);
        else if (in->function_id == OSSL_FUNC_PROVIDER_DEREGISTER_CHILD_CB)
            dereg = OSSL_FUNC_provider_deregister_child_cb(in);
    }
    why = left_alone_because(prov, get_libctx, &libctx, &self_name);
    if (why == NULL && (reg == NULL || dereg == NULL || self_name == NULL))
        why = "left alone (the core has no provider callbacks)";
    if (why != NULL) {
        CHACHARNG_DEBUG_LOG("library DRBG %s", why);
        free(self_name);
        return 1;
    }
    lr = calloc(1, sizeof(*lr));
    if (lr == NULL || pthread_mutex_init(&lr->lock, NULL) != 0) {
        free(lr);
        free(self_name);
        return 1; /* the provider works without it */
    }
    lr->libctx = libctx;
    lr->handle = prov->handle;
    lr->self_name = self_name;
    if (!reg(prov->handle, provider_activated, provider_deactivated,
             global_props_changed, lr)) {
        pthread_mutex_destroy(&lr->lock);
        free(lr->self_name);
        free(lr);
        return 1;
    }
    lr->deregister = dereg;
    prov->library_rng = lr;
    pthread_mutex_lock(&lr->lock);
    set_name(lr, 1, "the only provider");
    pthread_mutex_unlock(&lr->lock);
    return 1;
}

int chacharng_library_rng_made(const CHACHARNG_PROV_CTX *prov,
                               const OSSL_PARAM params[])
{
    const OSSL_PARAM *p;
    const char *props = NULL;

    if (prov->library_rng == NULL || params == NULL)
        return 0;
    p = OSSL_PARAM_locate_const(params, OSSL_DRBG_PARAM_PROPERTIES);
    return p != NULL && OSSL_PARAM_get_utf8_string_ptr(p, &props)
           && props != NULL && strcmp(props, LIBRARY_RNG_PROPQ) == 0;
}

/* First step of OPENSSL_cleanup: drop the pin while libcrypto is whole. */
static void release_pin(void)
{
    OSSL_PROVIDER *p;

    pthread_mutex_lock(&pin_lock);
    p = pin;
    pin = NULL;
    pthread_mutex_unlock(&pin_lock);
    if (p != NULL)
        OSSL_PROVIDER_unload(p); /* the core's store still holds us */
}

void chacharng_library_rng_primary(CHACHARNG_PROV_CTX *prov)
{
    struct chacharng_library_rng *lr = prov->library_rng;
    OSSL_PROVIDER *p;
    int first;

    if (lr == NULL)
        return;
    pthread_mutex_lock(&lr->lock);
    first = lr->named && !lr->closed;
    lr->closed = 1; /* the name is libcrypto's for good now */
    pthread_mutex_unlock(&lr->lock);
    if (!first)
        return;
    /*
     * We run inside RAND_get0_primary, under libcrypto's RAND lock; finding
     * and activating a provider takes only the store's and the provider's
     * own locks, which libcrypto does not hold here.
     */
    pthread_mutex_lock(&pin_lock);
    if (pin == NULL) {
        ERR_set_mark();
        p = OSSL_PROVIDER_try_load(lr->libctx, lr->self_name, 1);
        ERR_pop_to_mark();
        /* the handler lives in this module, which the pin keeps loaded */
        if (p != NULL && !OPENSSL_atexit(release_pin)) {
            OSSL_PROVIDER_unload(p);
            p = NULL;
        }
        pin = p;
        if (p != NULL)
            CHACHARNG_DEBUG_LOG("the library DRBG is CHACHA20-DRBG for good: "
                                "chacharng stays active until "
                                "OPENSSL_cleanup");
    }
    pthread_mutex_unlock(&pin_lock);
}

void chacharng_library_rng_teardown(CHACHARNG_PROV_CTX *prov)
{
    struct chacharng_library_rng *lr = prov->library_rng;

    if (lr == NULL)
        return;
    lr->deregister(lr->handle);
    /* unloaded before any primary was made: do not leave our name behind */
    give_back(lr, "chacharng was unloaded");
    pthread_mutex_destroy(&lr->lock);
    free(lr->self_name);
    free(lr);
    prov->library_rng = NULL;
}
