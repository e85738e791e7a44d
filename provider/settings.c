/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The provider's settings, read once at load: every key of our section in
 * openssl.cnf in one core_get_params call (as pkcs11-provider reads its
 * own), then the environment variable of each, which wins when set and
 * not empty.  What a value means is for the file that applies it.
 */
#include <stdlib.h>

#include <openssl/params.h>

#include "base.h"
#include "settings.h"

/* One setting: its config key, how errors name that key, its variable. */
struct setting {
    const char *key, *config_origin, *env;
    struct chacharng_setting *out;
};

void chacharng_settings_read(const CHACHARNG_PROV_CTX *prov,
                             struct chacharng_settings *s)
{
    const struct setting all[] = {
        { "impl", "config key impl", "CHACHARNG_IMPL", &s->impl },
        { "kernel_mix", "config key kernel_mix", "CHACHARNG_KERNEL_MIX",
          &s->kernel_mix },
    };
    enum { N = sizeof(all) / sizeof(all[0]) };
    char *config[N] = { NULL };
    OSSL_PARAM params[N + 1];
    const char *v;
    size_t i;

    for (i = 0; i < N; i++)
        params[i] = OSSL_PARAM_construct_utf8_ptr(all[i].key, &config[i], 0);
    params[N] = OSSL_PARAM_construct_end();
    /* no upcall, or a failed one: as if the section had none of the keys */
    if (prov->core_get_params == NULL
        || !prov->core_get_params(prov->handle, params))
        for (i = 0; i < N; i++)
            config[i] = NULL;
    for (i = 0; i < N; i++) {
        if ((v = getenv(all[i].env)) != NULL && *v != '\0') {
            all[i].out->value = v;
            all[i].out->origin = all[i].env;
        } else if (config[i] != NULL && *config[i] != '\0') {
            all[i].out->value = config[i];
            all[i].out->origin = all[i].config_origin;
        } else {
            all[i].out->value = NULL;
            all[i].out->origin = "default";
        }
    }
}
