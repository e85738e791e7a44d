/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kmix.c: whether generators mix kernel bytes into their key (DESIGN.md
 * sections 2 and 3), chosen at load and per context.  The mixing itself
 * is chacha/kmix.h's.
 */
#ifndef CHACHARNG_KMIX_CHOICE_H
#define CHACHARNG_KMIX_CHOICE_H

#include "base.h"
#include "settings.h"

/*
 * Read the `kernel_mix` config key and CHACHARNG_KERNEL_MIX (which wins)
 * into |prov|, and find out once what `auto` means here.  Returns 1, or 0
 * with an error raised for a value other than auto, on or off.
 */
int chacharng_kmix_choose(CHACHARNG_PROV_CTX *prov,
                          const struct chacharng_setting *kernel_mix);
/*
 * Whether a new generator mixes by default: for context |ctx| (its parent
 * already noted), or for a random-provider generator when |ctx| is NULL.
 */
int chacharng_kmix_default(const CHACHARNG_PROV_CTX *prov,
                           const CHACHARNG_RAND_CTX *ctx);

#endif
