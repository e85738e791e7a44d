/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every provider/ file shares, below all of them: raising an error
 * through the core's upcalls, the strength check,
 * a new generator's state, and the kernel lookup by name.  It calls
 * nothing in provider/ and is called by everything there.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "config.h"
#include "kmix.h"
#include "reasons.h"

/* ------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------ */

void chacharng_prov_raise(const CHACHARNG_PROV_CTX *prov, int reason,
                          const char *file, int line, const char *func,
                          const char *fmt, ...)
{
    va_list ap;

    if (prov == NULL || prov->core_new_error == NULL
        || prov->core_vset_error == NULL)
        return;
    prov->core_new_error(prov->handle);
    if (prov->core_set_error_debug != NULL)
        prov->core_set_error_debug(prov->handle, file, line, func);
    va_start(ap, fmt);
    prov->core_vset_error(prov->handle, (uint32_t)reason, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------------------
 * The checks every generator shares
 * ------------------------------------------------------------------------ */

int chacharng_strength_ok(const CHACHARNG_PROV_CTX *prov, unsigned int strength)
{
    if (strength <= CHACHA_DRBG_STRENGTH)
        return 1;
    CHACHARNG_RAISE(prov, CHACHARNG_R_STRENGTH_TOO_HIGH, "requested %u",
                    strength);
    return 0;
}

struct chacha_drbg *chacharng_drbg_new(const CHACHARNG_PROV_CTX *prov,
                                       int kernel_mix,
                                       const struct chacha_drbg_source *src)
{
    struct chacha_drbg *d = chacha_drbg_new(
        prov->impl, kernel_mix ? &chacha_kmix_mixer : NULL, src);

    if (d == NULL)
        CHACHARNG_RAISE(prov, CHACHARNG_R_OUT_OF_MEMORY,
                        "cannot map the state page");
    return d;
}

/* ------------------------------------------------------------------------
 * Kernels by name
 * ------------------------------------------------------------------------ */

const char *chacharng_buildinfo(void)
{
    return PACKAGE_STRING " (kernels:"
#if CHACHARNG_HAVE_AVX512_ASM
                          " avx512"
#endif
#if CHACHARNG_HAVE_AVX2_ASM
                          " avx2"
#endif
#if CHACHARNG_HAVE_SSE2_ASM
                          " ssse3 sse2"
#endif
#if CHACHARNG_HAVE_NEON_ASM
                          " neon"
#endif
#if CHACHARNG_HAVE_VX_ASM
                          " vx"
#endif
#if CHACHARNG_HAVE_VSX_ASM
                          " vsx"
#endif
#if CHACHARNG_HAVE_RVV_ASM
                          " rvv"
#endif
                          " generic)";
}

const struct chacha_impl *chacharng_impl_find(const CHACHARNG_PROV_CTX *prov,
                                              const char *origin,
                                              const char *name, size_t len)
{
    const struct chacha_impl *list;
    size_t n, i;

    list = chacha_impl_list(&n);
    for (i = 0; i < n; i++)
        if (strlen(list[i].name) == len && memcmp(list[i].name, name, len) == 0)
            break;
    if (i == n) {
        /* at most 32 bytes of a wrong name go into the message */
        CHACHARNG_RAISE(prov, CHACHARNG_R_UNKNOWN_IMPL,
                        "%s=%.*s: no such kernel in this build (%s)", origin,
                        len < 32 ? (int)len : 32, name, chacharng_buildinfo());
        return NULL;
    }
    if (!chacha_impl_supported(&list[i])) {
        CHACHARNG_RAISE(prov, CHACHARNG_R_IMPL_NOT_SUPPORTED,
                        "%s=%s: this CPU or OS cannot run it", origin,
                        list[i].name);
        return NULL;
    }
    return &list[i];
}

const OSSL_DISPATCH *chacharng_dispatch_find(const OSSL_DISPATCH *table, int id)
{
    static const OSSL_DISPATCH none = { 0, NULL };

    for (; table != NULL && table->function_id != 0; table++)
        if (table->function_id == id)
            return table;
    return &none;
}
