/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The literal command (DESIGN.md section 8): `openssl rand -provider
 * chacharng` with no config.  `-provider X` turns off the implicit default
 * provider, and libcrypto then fetches CTR-DRBG for its primary DRBG and
 * fails.  So, while chacharng is the only provider of the default library
 * context, it names CHACHA20-DRBG as that context's DRBG
 * (RAND_set_DRBG_type), and takes the name back as soon as any other
 * provider is there.  It never registers under another algorithm's name,
 * and it does nothing at all in a private or child library context, when a
 * config file activated it or has a [random] section, when the libcrypto
 * that loaded it is not the one it is linked with, or with
 * CHACHARNG_LIBRARY_RNG=no.
 *
 * Nothing here runs on the generate path: the decision is taken in the
 * OSSL_OP_RAND query only.
 */
#define _GNU_SOURCE /* dladdr */

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/conf.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/provider.h>
#include <openssl/rand.h>

#include "base.h"

/*
 * When libcrypto asks, and what it does with the answer
 * -----------------------------------------------------
 * The first RAND_bytes of a library context creates its primary DRBG
 * (RAND_get0_primary, under the context's RAND lock): it fetches SEED-SRC,
 * then the DRBG whose name RAND_set_DRBG_type stored, CTR-DRBG if none.
 * Each fetch that misses libcrypto's method cache asks every active
 * provider's query_operation for OSSL_OP_RAND, and the SEED-SRC fetch comes
 * before the DRBG name is read.  So a RAND query is the moment to decide.
 *
 * One query is not enough: an application may load chacharng alone, fetch
 * CHACHA20-DRBG (a RAND query while alone), then load the default provider
 * and call RAND_bytes.  Its RNG must stay CTR-DRBG.  So RAND queries are
 * answered with no_cache = 1 while the decision is open: libcrypto then
 * asks again at every RAND fetch it has not cached, the SEED-SRC fetch of
 * the primary included, and the decision is taken again each time.  Once
 * RAND_set_DRBG_type refuses (the primary exists), it is closed.
 *
 * Nor are queries enough to give the name back: an application that
 * fetched CHACHA20-DRBG alone and then unloads chacharng is never queried
 * again, and its RAND_bytes with the default provider would ask for a
 * CHACHA20-DRBG nobody offers.  So chacharng also registers the core's
 * provider callbacks (the ones child library contexts are built on):
 * libcrypto calls them when any provider of the context is activated, and
 * when one is deactivated, ourselves included.  Either event gives the name
 * back; the next query decides again.
 *
 * Locking: the core calls those callbacks holding its provider-store lock,
 * and OSSL_PROVIDER_do_all takes it, so |lock| is never held across
 * do_all.  A query that saw "alone" applies it only if no event came in
 * between (|events| unchanged).  RAND_set_DRBG_type frees and replaces
 * libcrypto's strings without a lock: our calls are serialized by |lock|
 * and made only when the decision flips; libcrypto reads the strings under
 * its RAND lock, inside which the primary's own SEED-SRC fetch (and so our
 * query) runs.
 */

struct chacharng_library_rng {
    pthread_mutex_t lock;
    OSSL_LIB_CTX *libctx; /* our own libcrypto's default context */
    const OSSL_CORE_HANDLE *handle;
    OSSL_FUNC_provider_deregister_child_cb_fn *deregister;
    unsigned long events; /* provider activations and our deactivation */
    int named;            /* CHACHA20-DRBG is the stored DRBG name, by us */
    int closed;           /* the primary exists: nothing left to decide */
};

static int env_opted_out(void)
{
    const char *v = getenv("CHACHARNG_LIBRARY_RNG");

    return v != NULL
           && (strcmp(v, "no") == 0 || strcmp(v, "0") == 0
               || strcmp(v, "off") == 0 || strcmp(v, "false") == 0);
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
 * application's, as on the command line.
 */
static int activated_by_config(const CHACHARNG_PROV_CTX *prov)
{
    char *value = NULL;
    OSSL_PARAM params[2];

    if (prov->core_get_params == NULL)
        return 0;
    params[0] = OSSL_PARAM_construct_utf8_ptr("activate", &value, 0);
    params[1] = OSSL_PARAM_construct_end();
    return prov->core_get_params(prov->handle, params) && value != NULL;
}

/*
 * 1 if the default config file (OPENSSL_CONF, else OPENSSLDIR/openssl.cnf:
 * the one libcrypto loads into the default context) has a `random` key in
 * its init section: then the config chose the DRBG, not us.  A file that
 * does not parse counts as having none (libcrypto applied none of it).
 */
static int config_has_random(void)
{
    char *file = CONF_get1_default_config_file();
    CONF *conf = NCONF_new(NULL);
    const char *init;
    int found = 0;

    ERR_set_mark();
    if (file != NULL && conf != NULL && NCONF_load(conf, file, NULL) > 0) {
        init = NCONF_get_string(conf, NULL, "openssl_conf");
        found = init != NULL && NCONF_get_string(conf, init, "random") != NULL;
    }
    ERR_pop_to_mark();
    NCONF_free(conf);
    OPENSSL_free(file);
    return found;
}

static void set_name(struct chacharng_library_rng *lr, int want,
                     const char *why);

/* An event that may end "alone": give the name back.  Takes lr->lock. */
static void provider_event(struct chacharng_library_rng *lr, const char *why)
{
    pthread_mutex_lock(&lr->lock);
    lr->events++;
    if (lr->named && !lr->closed)
        set_name(lr, 0, why);
    pthread_mutex_unlock(&lr->lock);
}

/* Core callback: |p| was activated in our library context. */
static int provider_activated(const OSSL_CORE_HANDLE *p, void *cbdata)
{
    struct chacharng_library_rng *lr = cbdata;

    if (p != lr->handle)
        provider_event(lr, "another provider was activated");
    return 1;
}

/* Core callback: |p| was deactivated; if it is us, we are gone. */
static int provider_deactivated(const OSSL_CORE_HANDLE *p, void *cbdata)
{
    struct chacharng_library_rng *lr = cbdata;

    if (p == lr->handle)
        provider_event(lr, "chacharng was deactivated");
    return 1;
}

static int global_props_changed(const char *props, void *cbdata)
{
    return 1;
}

int chacharng_library_rng_init(CHACHARNG_PROV_CTX *prov,
                               const OSSL_DISPATCH *in)
{
    struct chacharng_library_rng *lr;
    OSSL_FUNC_core_get_libctx_fn *get_libctx = NULL;
    OSSL_FUNC_provider_register_child_cb_fn *reg = NULL;
    OSSL_FUNC_provider_deregister_child_cb_fn *dereg = NULL;
    OSSL_LIB_CTX *libctx = NULL;
    const char *why = NULL;

    for (; in != NULL && in->function_id != 0; in++) {
        if (in->function_id == OSSL_FUNC_CORE_GET_LIBCTX)
            get_libctx = OSSL_FUNC_core_get_libctx(in);
        else if (in->function_id == OSSL_FUNC_PROVIDER_REGISTER_CHILD_CB)
            reg = OSSL_FUNC_provider_register_child_cb(in);
        else if (in->function_id == OSSL_FUNC_PROVIDER_DEREGISTER_CHILD_CB)
            dereg = OSSL_FUNC_provider_deregister_child_cb(in);
    }
    /* the order matters: nothing of ours touches a foreign core's context */
    if (!same_libcrypto(get_libctx))
        why =
            "loaded by a libcrypto other than the one chacharng is linked with";
    else if ((libctx = default_libctx(prov->handle, get_libctx)) == NULL)
        why = "a private or child library context";
    else if (env_opted_out())
        why = "CHACHARNG_LIBRARY_RNG opts out";
    else if (activated_by_config(prov))
        why = "activated from a config file";
    else if (config_has_random())
        why = "the config file has a random section";
    else if (reg == NULL || dereg == NULL)
        why = "the core has no provider callbacks";
    if (why != NULL) {
        CHACHARNG_DEBUG_LOG("library DRBG left alone (%s)", why);
        return 1;
    }
    lr = calloc(1, sizeof(*lr));
    if (lr == NULL || pthread_mutex_init(&lr->lock, NULL) != 0) {
        free(lr);
        return 1; /* the provider works without it */
    }
    lr->libctx = libctx;
    lr->handle = prov->handle;
    if (!reg(prov->handle, provider_activated, provider_deactivated,
             global_props_changed, lr)) {
        pthread_mutex_destroy(&lr->lock);
        free(lr);
        return 1;
    }
    lr->deregister = dereg;
    prov->library_rng = lr;
    return 1;
}

struct census {
    const void *self; /* our provider context */
    int ours, others;
};

static int count_provider(OSSL_PROVIDER *p, void *arg)
{
    struct census *c = arg;

    if (OSSL_PROVIDER_get0_provider_ctx(p) == c->self)
        c->ours++;
    else
        c->others++;
    return 1;
}

/* 1 if this instance of chacharng is the only active provider of |lr|. */
static int alone(const CHACHARNG_PROV_CTX *prov,
                 const struct chacharng_library_rng *lr)
{
    struct census c = { prov, 0, 0 };

    return OSSL_PROVIDER_do_all(lr->libctx, count_provider, &c) && c.ours == 1
           && c.others == 0;
}

/*
 * Make the stored DRBG name ours (|want| 1) or libcrypto's default again
 * (0), because of |why| (for CHACHARNG_DEBUG).  Requires lr->lock.  A
 * refusal means the primary exists.
 */
static void set_name(struct chacharng_library_rng *lr, int want,
                     const char *why)
{
    int ok;

    ERR_set_mark();
    if (want)
        ok = RAND_set_DRBG_type(lr->libctx, CHACHARNG_ALG_NAME,
                                "provider=" CHACHARNG_NAME, NULL, NULL);
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

int chacharng_library_rng_query(CHACHARNG_PROV_CTX *prov)
{
    struct chacharng_library_rng *lr = prov->library_rng;
    unsigned long events;
    int open, want;

    if (lr == NULL)
        return 0;
    pthread_mutex_lock(&lr->lock);
    open = !lr->closed;
    events = lr->events;
    pthread_mutex_unlock(&lr->lock);
    if (!open)
        return 0;
    want = alone(prov, lr); /* takes the core's store lock: not under ours */
    pthread_mutex_lock(&lr->lock);
    if (!lr->closed && lr->events == events && want != lr->named)
        set_name(lr, want,
                 want ? "the only provider" : "another provider is active");
    open = !lr->closed;
    pthread_mutex_unlock(&lr->lock);
    return open;
}

void chacharng_library_rng_teardown(CHACHARNG_PROV_CTX *prov)
{
    struct chacharng_library_rng *lr = prov->library_rng;

    if (lr == NULL)
        return;
    lr->deregister(lr->handle);
    /* unloaded before any primary was made: do not leave our name behind */
    if (lr->named && !lr->closed)
        set_name(lr, 0, "chacharng was unloaded");
    pthread_mutex_destroy(&lr->lock);
    free(lr);
    prov->library_rng = NULL;
}
