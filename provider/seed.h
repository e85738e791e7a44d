/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seed.c: the seed sources, as the generator's source interface.  The
 * parent's side of seeding, which reads a context, is in rand_local.h.
 */
#ifndef CHACHARNG_SEED_H
#define CHACHARNG_SEED_H

#include "base.h"
#include "chacha_drbg.h"

/*
 * The source of every generator without a parent, into |src|: the core's
 * entropy upcall, else getrandom(2).  Its errors are raised on |prov|.
 */
void chacharng_seed_source_os(CHACHARNG_PROV_CTX *prov,
                              struct chacha_drbg_source *src);

#endif
