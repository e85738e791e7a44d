/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The literal command (DESIGN.md section 8): `openssl rand -provider
 * chacharng` with no config.  `-provider X` turns off the implicit default
 * provider, and libcrypto then fetches CTR-DRBG for its primary DRBG and
 * fails.  So, when chacharng is loaded as the only provider of the default
 * library context, it names CHACHA20-DRBG as that context's DRBG
 * (RAND_set_DRBG_type), and gives the name back if another provider comes
 * before the primary DRBG exists.  It decides from documented facts only,
 * never registers under another algorithm's name, and does nothing at all
 * in a private or child library context, when a config file activated it
 * or has a [random] section, when the libcrypto that loaded it is not the
 * one it is linked with, or with CHACHARNG_LIBRARY_RNG=no.
 *
 * Nothing here runs on the generate path.
 */
#define _GNU_SOURCE /* dladdr */

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
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

#define LIBRARY_RNG_PROPQ "provider=" CHACHARNG_NAME

/*
 * The rule, and why
 * -----------------
 * RAND_set_DRBG_type takes no lock: it frees the stored name, properties,
 * cipher and digest strings and stores copies of ours.  libcrypto reads
 * those strings, without a lock of the setter's, whenever it creates a
 * DRBG of the chain, and OPENSSL_cleanup frees them before it tears the
 * providers down.  So chacharng changes the setting only in a process
 * with one thread, the one running our code, and only from two places:
 * our init (the name) and another provider's activation (the give-back;
 * libcrypto's own fallback activation inside RAND_get0_primary happens at
 * its seed-source fetch, before it reads the name).  Nothing runs from a
 * deactivation or a teardown, so nothing touches the RAND state that
 * OPENSSL_cleanup frees first, and a reload finds the name still there.
 *
 * The facts, all documented: which providers are active comes from the
 * core's provider_register_child_cb, which calls us for every provider
 * already active and activates nothing (a census with OSSL_PROVIDER_do_all
 * would switch on the fallbacks of an application that turned them off);
 * the thread count, the environment and the config file through NCONF.
 * Whatever those calls raise is removed with ERR_set_mark/ERR_pop_to_mark,
 * and the config file is read only if it exists, so that a full queue of
 * the application's loses nothing.
 *
 * An application's own RAND_set_DRBG_type made before it loads chacharng
 * alone cannot be seen (no call reads it back): chacharng replaces it.
 * CHACHARNG_LIBRARY_RNG=no is the way out (chacharng(7)).
 *
 * Once libcrypto has made its primary from our name, the name can never
 * change again, and every new thread's public and private DRBG is fetched
 * by it.  So chacharng then keeps one activation of its own (the pin): it
 * stays active until OPENSSL_cleanup, whose first step (an OPENSSL_atexit
 * handler) drops the pin before libcrypto frees anything.
 */

struct chacharng_library_rng {
    pthread_mutex_t lock;
    OSSL_LIB_CTX *libctx; /* our own libcrypto's default context */
    const OSSL_CORE_HANDLE *handle;
    OSSL_FUNC_provider_deregister_child_cb_fn *deregister;
    char *self_name; /* the name we were loaded by, to pin ourselves */
    int counting;    /* the census at registration runs */
    int others;      /* other active providers the census saw */
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
 * else NULL (a private or child context).  OSSL_PROVIDER_load(NULL, ...)
 * and the default context's config hand out NULL, the default context.
 */
static OSSL_LIB_CTX *default_libctx(const OSSL_CORE_HANDLE *handle,
                                    OSSL_FUNC_core_get_libctx_fn *get_libctx)
{
    OPENSSL_CORE_CTX *theirs = get_libctx(handle);
    OSSL_LIB_CTX *dflt = OSSL_LIB_CTX_get0_global_default();

    return theirs == NULL || (void *)theirs == (void *)dflt ? dflt : NULL;
}

/*
 * 1 if a config file activated us: libcrypto's provider config module
 * hands every key of the provider's section to core_get_params, the
 * `activate` key included, and nothing else sets that key.  The name we
 * were loaded by goes into *|self_name| (a copy, or NULL).
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
 * The value of |name| in |section| of |conf|, or NULL.  NCONF_get_string
 * raises an error for a key that is not there; a section's list does not.
 */
static const char *conf_value(const CONF *conf, const char *section,
                              const char *name)
{
    STACK_OF(CONF_VALUE) *values = NCONF_get_section(conf, section);
    int i;

    for (i = 0; values != NULL && i < sk_CONF_VALUE_num(values); i++)
        if (strcmp(sk_CONF_VALUE_value(values, i)->name, name) == 0)
            return sk_CONF_VALUE_value(values, i)->value;
    return NULL;
}

/*
 * 1 if the default config file (OPENSSL_CONF, else OPENSSLDIR/openssl.cnf)
 * has a `random` section in its init section: then the config chose the
 * DRBG, not us.  A missing or unparsable file has none (libcrypto applied
 * none of it); a missing one is not even opened, so it raises nothing.
 */
static int config_has_random(void)
{
    char *file = CONF_get1_default_config_file();
    CONF *conf = NULL;
    const char *init;
    int found = 0;

    if (file != NULL && access(file, R_OK) == 0
        && (conf = NCONF_new(NULL)) != NULL && NCONF_load(conf, file, NULL) > 0) {
        init = conf_value(conf, "default", "openssl_conf");
        found = init != NULL && conf_value(conf, init, "random") != NULL;
    }
    NCONF_free(conf);
    OPENSSL_free(file);
    return found;
}

/*
 * Make the stored DRBG name ours (|want| 1) or libcrypto's default again
 * (0), because of |why| (for CHACHARNG_DEBUG).  Requires lr->lock, one
 * thread, and the caller's error mark.  A refusal means the primary exists.
 */
static void set_name(struct chacharng_library_rng *lr, int want,
                     const char *why)
{
    int ok;

    if (want)
        ok = RAND_set_DRBG_type(lr->libctx, CHACHARNG_ALG_NAME,
                                LIBRARY_RNG_PROPQ, NULL, NULL);
    else
        ok = RAND_set_DRBG_type(lr->libctx, NULL, NULL, NULL, NULL);
    if (!ok) {
        lr->closed = 1;
        CHACHARNG_DEBUG_LOG("library DRBG left alone (libcrypto's primary "
                            "DRBG exists already)");
        return;
    }
    lr->named = want;
    CHACHARNG_DEBUG_LOG("%s (%s)",
                        want ? "CHACHA20-DRBG named as the library DRBG"
                             : "library DRBG name given back",
                        why);
}

/*
 * Core callback: |p| was activated in our library context (or was active
 * when we registered: the census).  Another provider takes the name back,
 * where the rule allows.
 */
static int provider_activated(const OSSL_CORE_HANDLE *p, void *cbdata)
{
    struct chacharng_library_rng *lr = cbdata;

    if (p == lr->handle)
        return 1;
    pthread_mutex_lock(&lr->lock);
    if (lr->counting) {
        lr->others++;
    } else if (lr->named && !lr->closed) {
        ERR_set_mark();
        if (single_threaded())
            set_name(lr, 0, "another provider was activated");
        else
            CHACHARNG_DEBUG_LOG("library DRBG name kept (another provider "
                                "was activated, but another thread may be "
                                "reading it)");
        ERR_pop_to_mark();
    }
    pthread_mutex_unlock(&lr->lock);
    return 1;
}

/* Core callbacks with nothing to do: a deactivation, global properties. */
static int provider_deactivated(const OSSL_CORE_HANDLE *p, void *cbdata)
{
    (void)p;
    (void)cbdata;
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
    /* the order matters: nothing of ours touches a foreign core's context */
    if (!same_libcrypto(get_libctx))
        return "left alone (loaded by a libcrypto other than the one "
               "chacharng is linked with)";
    if ((*libctx = default_libctx(prov->handle, get_libctx)) == NULL)
        return "left alone (a private or child library context)";
    if (env_opted_out())
        return "left alone (CHACHARNG_LIBRARY_RNG opts out)";
    if (config_has_random())
        return "from the config file (its random section)";
    if (activated_by_config(prov, self_name))
        return "from the config file: libcrypto's default, CTR-DRBG "
               "(chacharng was activated from it, and it has no random "
               "section)";
    if (!single_threaded())
        return "left alone (more than one thread: another may be reading "
               "libcrypto's DRBG settings)";
    if (*self_name == NULL)
        return "left alone (the core did not say chacharng's name)";
    return NULL;
}

/*
 * Register for the core's provider events; the registration itself is the
 * census.  Returns the state, or NULL (then nothing is registered).
 */
static struct chacharng_library_rng *
watch_providers(CHACHARNG_PROV_CTX *prov, OSSL_LIB_CTX *libctx,
                OSSL_FUNC_provider_register_child_cb_fn *reg,
                OSSL_FUNC_provider_deregister_child_cb_fn *dereg)
{
    struct chacharng_library_rng *lr = calloc(1, sizeof(*lr));

    if (lr == NULL || pthread_mutex_init(&lr->lock, NULL) != 0) {
        free(lr);
        return NULL;
    }
    lr->libctx = libctx;
    lr->handle = prov->handle;
    lr->deregister = dereg;
    lr->counting = 1;
    if (!reg(prov->handle, provider_activated, provider_deactivated,
             global_props_changed, lr)) {
        pthread_mutex_destroy(&lr->lock);
        free(lr);
        return NULL;
    }
    lr->counting = 0;
    return lr;
}

static void free_state(struct chacharng_library_rng *lr)
{
    pthread_mutex_destroy(&lr->lock);
    free(lr->self_name);
    free(lr);
}

/* The core's upcall |id| from |in|, or NULL. */
static OSSL_FUNC_core_get_libctx_fn *
find_upcalls(const OSSL_DISPATCH *in,
             OSSL_FUNC_provider_register_child_cb_fn **reg,
             OSSL_FUNC_provider_deregister_child_cb_fn **dereg)
{
    OSSL_FUNC_core_get_libctx_fn *get_libctx = NULL;

    *reg = NULL;
    *dereg = NULL;
    for (; in != NULL && in->function_id != 0; in++) {
        if (in->function_id == OSSL_FUNC_CORE_GET_LIBCTX)
            get_libctx = OSSL_FUNC_core_get_libctx(in);
        else if (in->function_id == OSSL_FUNC_PROVIDER_REGISTER_CHILD_CB)
            *reg = OSSL_FUNC_provider_register_child_cb(in);
        else if (in->function_id == OSSL_FUNC_PROVIDER_DEREGISTER_CHILD_CB)
            *dereg = OSSL_FUNC_provider_deregister_child_cb(in);
    }
    return get_libctx;
}

/* After the checks: the census, and the name if we are alone.  */
static const char *name_if_alone(CHACHARNG_PROV_CTX *prov,
                                 OSSL_LIB_CTX *libctx, const OSSL_DISPATCH *in,
                                 char **self_name)
{
    OSSL_FUNC_provider_register_child_cb_fn *reg;
    OSSL_FUNC_provider_deregister_child_cb_fn *dereg;
    struct chacharng_library_rng *lr;

    find_upcalls(in, &reg, &dereg);
    if (reg == NULL || dereg == NULL)
        return "left alone (the core has no provider callbacks)";
    if ((lr = watch_providers(prov, libctx, reg, dereg)) == NULL)
        return "left alone (no memory for the provider callbacks)";
    if (lr->others > 0) {
        dereg(prov->handle);
        free_state(lr);
        return "left alone (another provider is active)";
    }
    lr->self_name = *self_name;
    *self_name = NULL;
    prov->library_rng = lr;
    pthread_mutex_lock(&lr->lock);
    set_name(lr, 1, "the only provider");
    pthread_mutex_unlock(&lr->lock);
    return NULL;
}

int chacharng_library_rng_init(CHACHARNG_PROV_CTX *prov,
                               const OSSL_DISPATCH *in)
{
    OSSL_FUNC_provider_register_child_cb_fn *reg;
    OSSL_FUNC_provider_deregister_child_cb_fn *dereg;
    OSSL_FUNC_core_get_libctx_fn *get_libctx = find_upcalls(in, &reg, &dereg);
    OSSL_LIB_CTX *libctx = NULL;
    char *self_name = NULL;
    const char *why;

    /* before anything that can raise: the application's queue stays as is */
    ERR_set_mark();
    why = left_alone_because(prov, get_libctx, &libctx, &self_name);
    if (why == NULL)
        why = name_if_alone(prov, libctx, in, &self_name);
    ERR_pop_to_mark();
    if (why != NULL)
        CHACHARNG_DEBUG_LOG("library DRBG %s", why);
    free(self_name);
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

/*
 * Keep one activation of ours until OPENSSL_cleanup.  We run inside
 * RAND_get0_primary, under libcrypto's RAND lock; finding and activating a
 * provider takes only the store's and the provider's own locks.
 */
static void take_pin(struct chacharng_library_rng *lr)
{
    OSSL_PROVIDER *p;

    pthread_mutex_lock(&pin_lock);
    if (pin == NULL) {
        ERR_set_mark();
        p = OSSL_PROVIDER_try_load(lr->libctx, lr->self_name, 1);
        /* the handler lives in this module, which the pin keeps loaded */
        if (p != NULL && !OPENSSL_atexit(release_pin)) {
            OSSL_PROVIDER_unload(p);
            p = NULL;
        }
        ERR_pop_to_mark();
        pin = p;
        if (p != NULL)
            CHACHARNG_DEBUG_LOG("the library DRBG is CHACHA20-DRBG for good: "
                                "chacharng stays active until "
                                "OPENSSL_cleanup");
    }
    pthread_mutex_unlock(&pin_lock);
}

void chacharng_library_rng_primary(CHACHARNG_PROV_CTX *prov)
{
    struct chacharng_library_rng *lr = prov->library_rng;
    int first;

    if (lr == NULL)
        return;
    pthread_mutex_lock(&lr->lock);
    first = lr->named && !lr->closed;
    lr->closed = 1; /* the name is libcrypto's for good now */
    pthread_mutex_unlock(&lr->lock);
    if (first)
        take_pin(lr);
}

void chacharng_library_rng_teardown(CHACHARNG_PROV_CTX *prov)
{
    struct chacharng_library_rng *lr = prov->library_rng;

    if (lr == NULL)
        return;
    lr->deregister(lr->handle);
    free_state(lr);
    prov->library_rng = NULL;
    CHACHARNG_DEBUG_LOG("chacharng's library DRBG state freed");
}
