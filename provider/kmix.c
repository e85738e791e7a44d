/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kernel mixing as a setting (DESIGN.md sections 2 and 3): the `kernel_mix`
 * config key and CHACHARNG_KERNEL_MIX, what `auto` means here (on where
 * chacha/kmix.c found the vDSO route, whatever the C library), and the
 * choice each new generator is created with.  The read itself, by either
 * route, is chacha/kmix.c's, called by the generator.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/params.h>

#include "debug.h"
#include "kmix.h"
#include "kmix_choice.h"
#include "rand_local.h"
#include "reasons.h"

/* ------------------------------------------------------------------------
 * The setting, at load
 * ------------------------------------------------------------------------ */

/* Under CHACHARNG_DEBUG, chacha/kmix.c reports some failed reads here. */
static void report_failure(int err, unsigned long n)
{
    chacharng_debug_log("kernel mixing skipped: getrandom gave %s"
                        " (failure %lu in this process)",
                        err != 0 ? strerror(err) : "a short read", n);
}

int chacharng_kmix_choose(CHACHARNG_PROV_CTX *prov,
                          const struct chacharng_setting *kernel_mix)
{
    const char *v = kernel_mix->value, *origin = kernel_mix->origin;
    char why[128];

    if (v == NULL || strcmp(v, "auto") == 0) {
        prov->kernel_mix = CHACHARNG_KMIX_AUTO;
    } else if (strcmp(v, "on") == 0) {
        prov->kernel_mix = CHACHARNG_KMIX_ON;
    } else if (strcmp(v, "off") == 0) {
        prov->kernel_mix = CHACHARNG_KMIX_OFF;
    } else {
        CHACHARNG_RAISE(prov, CHACHARNG_R_INVALID_PARAMETER,
                        "%s=%s: expected auto, on or off", origin, v);
        return 0;
    }
    prov->kernel_mix_vdso = chacha_kmix_vdso_available(why, sizeof(why));
    chacha_kmix_set_report(chacharng_debug_enabled() ? report_failure : NULL);
    CHACHARNG_DEBUG_LOG("kernel mixing %s (%s; route: %s)",
                        prov->kernel_mix == CHACHARNG_KMIX_ON    ? "on"
                        : prov->kernel_mix == CHACHARNG_KMIX_OFF ? "off"
                        : prov->kernel_mix_vdso                  ? "auto: on"
                                                                 : "auto: off",
                        v != NULL ? origin : "default", why);
    return 1;
}

/* ------------------------------------------------------------------------
 * Per generator
 * ------------------------------------------------------------------------ */

int chacharng_kmix_default(const CHACHARNG_PROV_CTX *prov,
                           const CHACHARNG_RAND_CTX *ctx)
{
    if (prov->kernel_mix != CHACHARNG_KMIX_AUTO)
        return prov->kernel_mix == CHACHARNG_KMIX_ON;
    if (ctx == NULL || ctx->parent == NULL)
        return prov->kernel_mix_vdso;
    /*
     * A chacharng parent: follow its choice, so a chain agrees.  Read under
     * the parent's lock, under which set_ctx_params changes it (OpenSSL's
     * DRBGs read their parent's strength the same way when made).
     */
    if (chacharng_parent_is_ours(ctx)) {
        const CHACHARNG_RAND_CTX *parent = ctx->parent;
        int on;

        if (ctx->parent_lock != NULL && !ctx->parent_lock(ctx->parent))
            return prov->kernel_mix_vdso;
        on = chacha_drbg_kernel_mix_on(parent->drbg);
        if (ctx->parent_unlock != NULL)
            ctx->parent_unlock(ctx->parent);
        return on;
    }
    /*
     * An entropy source (SEED-SRC, JITTER) has no settable parameters:
     * nothing can make it repeat, so it counts as no parent.  Any other
     * parent (TEST-RAND, CTR-DRBG) may be deterministic on purpose.
     */
    return ctx->parent_set_ctx_params == NULL && prov->kernel_mix_vdso;
}
