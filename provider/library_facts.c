/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the library-DRBG decision (library_rng.c) reads, each from a
 * documented source with no side effect on libcrypto: the thread count,
 * the environment, which libcrypto loaded us and into which context, the
 * core's view of our config section, and the default config file through
 * NCONF.  None of these raises an error on a normal path; the caller keeps
 * a mark for the rest.  Nothing here decides or changes anything.
 */
#define _GNU_SOURCE /* dladdr */

#include <dlfcn.h>
#include <fcntl.h>
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
#include <openssl/params.h>
#include <openssl/crypto.h>

#include "library_facts.h"

int chacharng_library_rng_opted_out(void)
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
int chacharng_single_threaded(void)
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
int chacharng_same_libcrypto(OSSL_FUNC_core_get_libctx_fn *get_libctx)
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
OSSL_LIB_CTX *chacharng_default_libctx(const OSSL_CORE_HANDLE *handle,
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
int chacharng_activated_by_config(const CHACHARNG_PROV_CTX *prov,
                                  char **self_name)
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
int chacharng_config_has_random(void)
{
    char *file = CONF_get1_default_config_file();
    CONF *conf = NULL;
    const char *init;
    int found = 0;

    if (file != NULL && access(file, R_OK) == 0
        && (conf = NCONF_new(NULL)) != NULL
        && NCONF_load(conf, file, NULL) > 0) {
        init = conf_value(conf, "default", "openssl_conf");
        found = init != NULL && conf_value(conf, init, "random") != NULL;
    }
    NCONF_free(conf);
    OPENSSL_free(file);
    return found;
}
