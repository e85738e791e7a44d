/* SPDX-License-Identifier: Apache-2.0 */
/*
 * settings.c: the provider's config keys and the environment variables
 * that override them, read once at load.
 */
#ifndef CHACHARNG_SETTINGS_H
#define CHACHARNG_SETTINGS_H

#include "base.h"

/*
 * A setting's value (NULL: unset) and where it came from: the environment
 * variable's name, "config key <key>", or "default".
 */
struct chacharng_setting {
    const char *value;
    const char *origin;
};
struct chacharng_settings {
    struct chacharng_setting impl;       /* impl, CHACHARNG_IMPL */
    struct chacharng_setting kernel_mix; /* kernel_mix, CHACHARNG_KERNEL_MIX */
};
/*
 * Read every setting into |s|: the config keys of |prov|'s section in one
 * core_get_params call, each overridden by its environment variable when
 * that is set and not empty.  The strings live as long as the provider.
 */
void chacharng_settings_read(const CHACHARNG_PROV_CTX *prov,
                             struct chacharng_settings *s);

#endif
