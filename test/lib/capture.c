/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Loading chacharng through an init of the test's own (see capture.h).
 */
#include "capture.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

struct cap_kept cap_kept;

static OSSL_provider_init_fn *module_init;

OSSL_provider_init_fn *cap_module_init(char *path, size_t n)
{
    const char *dir = getenv("OPENSSL_MODULES");
    void *h;

    snprintf(path, n, "%s/chacharng.so", dir != NULL ? dir : ".");
    if (module_init == NULL) {
        /* kept open: the module's code must outlive every provider */
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        module_init =
            h != NULL ? (OSSL_provider_init_fn *)dlsym(h, "OSSL_provider_init")
                      : NULL;
    }
    return module_init;
}

chacharng_random_bytes_fn *cap_random_bytes(const OSSL_DISPATCH *d)
{
    chacharng_random_bytes_fn *fn = NULL;

    for (; d != NULL && d->function_id != 0; d++)
        if (d->function_id == OSSL_FUNC_PROVIDER_RANDOM_BYTES)
            fn = (chacharng_random_bytes_fn *)d->function;
    return fn;
}

int cap_init_and_keep(OSSL_provider_init_fn *init,
                      const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
                      const OSSL_DISPATCH **out, void **provctx)
{
    if (!init(handle, in, out, provctx))
        return 0;
    cap_kept.random_bytes = cap_random_bytes(*out);
    cap_kept.provctx = *provctx;
    return 1;
}

int cap_init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
             const OSSL_DISPATCH **out, void **provctx)
{
    if (module_init == NULL)
        return 0;
    return cap_init_and_keep(module_init, handle, in, out, provctx);
}
