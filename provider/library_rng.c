/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The literal command (DESIGN.md section 8): `openssl rand -provider
 * chacharng` with no config.  Loaded as the only provider of the default
 * library context, chacharng names CHACHA20-DRBG as its DRBG
 * (RAND_set_DRBG_type), and gives the name back if another provider comes
 * before the primary DRBG exists.  It never registers under another
 * algorithm's name.  Nothing here runs on the generate path.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/provider.h>
#include <openssl/rand.h>

#include "base.h"
#include "library_facts.h"
#include "debug.h"
#include "library_rng.h"
#include "rand_params.h"

#define LIBRARY_RNG_PROPQ "provider=" CHACHARNG_NAME

/*
 * The rule, and why
 * -----------------
 * RAND_set_DRBG_type takes no lock: it frees the stored name, properties,
 * cipher and digest strings and stores copies of ours.  libcrypto reads
 * them, without a lock of the setter's, whenever it creates a DRBG of the
 * chain, and OPENSSL_cleanup frees them before it tears the providers
 * down.  So chacharng changes the setting only in a process with one
 * thread, the one running our code, and only from our init (the name) and
 * from the core's note that another provider was activated (the
 * give-back): that note comes from OSSL_PROVIDER_load and the config
 * module, never from inside a fetch (libcrypto activates its fallback
 * silently).  The core's note of our own deactivation gives it back too,
 * as long as libcrypto has no primary yet: it comes from
 * OSSL_PROVIDER_unload, and from OPENSSL_cleanup, which frees the RAND
 * state first and which an OPENSSL_atexit handler of ours announces, so
 * nothing runs then.  Nothing runs at a teardown.
 *
 * The facts are documented ones (library_facts.c).  Which providers are
 * active comes from registering for the core's provider events: the core
 * calls us for each one already active and activates nothing, where
 * OSSL_PROVIDER_do_all would switch on the fallback of an application that
 * asked for none.  Under OSSL_PROVIDER_try_load(..., 1) the fallback comes
 * up at libcrypto's first fetch, unseen, and the name stays while chacharng
 * is active (it serves that fetch).  An
 * application's own RAND_set_DRBG_type made before it loads chacharng
 * alone cannot be read back, and is replaced.  CHACHARNG_LIBRARY_RNG=no
 * is the way out of both (chacharng(7)).
 *
 * Once libcrypto made its primary from our name, every new thread's DRBGs
 * are fetched by it for good: chacharng then keeps one activation of its
 * own (the pin) until OPENSSL_cleanup's first step (OPENSSL_atexit).
 */

struct chacharng_library_rng {
    pthread_mutex_t lock;
    OSSL_LIB_CTX *libctx; /* our own libcrypto's default context */
    const OSSL_CORE_HANDLE *handle;
    OSSL_FUNC_provider_deregister_child_cb_fn *deregister;
    char *self_name; /* the name we were loaded by, to pin ourselves */
    int counting;    /* the census at registration runs */
    int others;      /* other active providers, as the core's notes tell */
    int named;       /* CHACHA20-DRBG is the stored DRBG name, by us */
    int unloaded;    /* the name went back with our own deactivation */
    int closed;      /* the primary exists: nothing left to decide */
};

/* Our activation kept after the primary was made from our name. */
static pthread_mutex_t pin_lock = PTHREAD_MUTEX_INITIALIZER;
static OSSL_PROVIDER *pin;

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
 * OPENSSL_cleanup frees the RAND state before it deactivates providers, so
 * a note of the core may change the name only while cleanup has not begun:
 * an OPENSSL_atexit handler (the first step of OPENSSL_cleanup; the module
 * is never unmapped, -z nodelete) tells, and without one a deactivation
 * changes nothing.
 */
static int cleanup_watched, cleanup_begun;

static void note_cleanup(void)
{
    __atomic_store_n(&cleanup_begun, 1, __ATOMIC_RELAXED);
}

/* Once per process, while naming (one thread, under an error mark). */
static void watch_cleanup(void)
{
    if (!cleanup_watched && OPENSSL_atexit(note_cleanup))
        cleanup_watched = 1;
}

/* set_name from a note of the core, where the rule allows; lr->lock held. */
static void change_name(struct chacharng_library_rng *lr, int want,
                        const char *why)
{
    if (__atomic_load_n(&cleanup_begun, __ATOMIC_RELAXED))
        return;
    ERR_set_mark();
    if (chacharng_single_threaded())
        set_name(lr, want, why);
    else
        CHACHARNG_DEBUG_LOG("library DRBG name %s (%s, but another thread "
                            "may be reading it)",
                            want ? "left to libcrypto" : "kept", why);
    ERR_pop_to_mark();
}

/*
 * Core callback: |p| was activated (or was active when we registered: the
 * census).  Another provider takes the name back; chacharng activated
 * again, after its own deactivation gave the name back, takes it again if
 * it is still the only provider (as a first load would).
 */
static int provider_activated(const OSSL_CORE_HANDLE *p, void *cbdata)
{
    struct chacharng_library_rng *lr = cbdata;

    pthread_mutex_lock(&lr->lock);
    if (p != lr->handle)
        lr->others++;
    if (lr->counting || lr->closed) {
        /* the census; or the primary exists */
    } else if (p != lr->handle) {
        if (lr->named)
            change_name(lr, 0, "another provider was activated");
    } else if (lr->unloaded && lr->others == 0) {
        lr->unloaded = 0;
        change_name(lr, 1, "activated again, the only provider");
    }
    pthread_mutex_unlock(&lr->lock);
    return 1;
}

/*
 * Core callback: |p| was deactivated.  Our own deactivation (an unload)
 * before libcrypto made its primary gives the name back: a fallback
 * default, which libcrypto activates without telling other providers,
 * would otherwise never take it, and RAND would fail for good.
 */
static int provider_deactivated(const OSSL_CORE_HANDLE *p, void *cbdata)
{
    struct chacharng_library_rng *lr = cbdata;

    pthread_mutex_lock(&lr->lock);
    if (p != lr->handle) {
        if (lr->others > 0)
            lr->others--;
    } else if (cleanup_watched && lr->named && !lr->closed) {
        change_name(lr, 0, "chacharng was deactivated");
        lr->unloaded = !lr->named;
    }
    pthread_mutex_unlock(&lr->lock);
    return 1;
}

/* Core callback with nothing to do: the global properties changed. */
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
    if (!chacharng_same_libcrypto(get_libctx))
        return "left alone (loaded by a libcrypto other than the one "
               "chacharng is linked with)";
    if ((*libctx = chacharng_default_libctx(prov->handle, get_libctx)) == NULL)
        return "left alone (a private or child library context)";
    if (chacharng_library_rng_opted_out())
        return "left alone (CHACHARNG_LIBRARY_RNG opts out)";
    if (chacharng_config_has_random())
        return "from the config file (its random section)";
    if (chacharng_activated_by_config(prov, self_name))
        return "from the config file: libcrypto's default, CTR-DRBG "
               "(chacharng was activated from it, and it has no random "
               "section)";
    if (!chacharng_single_threaded())
        return "left alone (more than one thread: another may be reading "
               "libcrypto's DRBG settings)";
    if (*self_name == NULL)
        return "left alone (the core did not say chacharng's name)";
    return NULL;
}

/* Register for the core's provider events: that is the census too. */
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

/* The three core upcalls we use, from |in|; each NULL if not there. */
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

/* After the checks: the census, and the name if we are alone. */
static const char *
name_if_alone(CHACHARNG_PROV_CTX *prov, OSSL_LIB_CTX *libctx,
              OSSL_FUNC_provider_register_child_cb_fn *reg,
              OSSL_FUNC_provider_deregister_child_cb_fn *dereg,
              char **self_name)
{
    struct chacharng_library_rng *lr;

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
    watch_cleanup();
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
        why = name_if_alone(prov, libctx, reg, dereg, &self_name);
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
    const char *props;
    size_t len;

    if (prov->library_rng == NULL || params == NULL)
        return 0;
    /* the caller's string, read no further than it says it goes */
    p = OSSL_PARAM_locate_const(params, OSSL_DRBG_PARAM_PROPERTIES);
    return p != NULL
           && chacharng_param_text(p, sizeof(LIBRARY_RNG_PROPQ), &props, &len)
           && len == sizeof(LIBRARY_RNG_PROPQ) - 1
           && memcmp(props, LIBRARY_RNG_PROPQ, len) == 0;
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
 * Keep one activation of ours until OPENSSL_cleanup.  We run under
 * libcrypto's RAND lock, which finding and activating a provider never takes.
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
