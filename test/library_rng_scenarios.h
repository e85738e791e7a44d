/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the t_library_rng scenarios share: the checks t_library_rng.c
 * defines, and the scenarios library_rng_app.c defines.  Every scenario
 * runs in a process of its own and returns 1 if libcrypto ended up as it
 * should, saying on stderr what it saw otherwise.
 */
#ifndef CHACHARNG_LIBRARY_RNG_SCENARIOS_H
#define CHACHARNG_LIBRARY_RNG_SCENARIOS_H

#include <openssl/core.h>
#include <openssl/provider.h>

#define CHACHA "CHACHA20-DRBG @ chacharng"
#define CTR "CTR-DRBG @ default"
#define HASH "HASH-DRBG @ default"

/* One line on stderr. */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* |p| (if not NULL) is unloaded when the scenario ends; returns |p|. */
OSSL_PROVIDER *keep(OSSL_PROVIDER *p);
/* OSSL_PROVIDER_load, kept; says why on failure. */
OSSL_PROVIDER *load(OSSL_LIB_CTX *lc, const char *name);
/* RAND_bytes works on |lc| and its three DRBGs are |want|. */
int library_drbg_is(OSSL_LIB_CTX *lc, const char *want);
/* RAND_bytes on |lc| fails. */
int rand_fails(OSSL_LIB_CTX *lc);
/* An explicit CHACHA20-DRBG context on |lc| generates. */
int explicit_fetch_works(OSSL_LIB_CTX *lc);
/* The same, instantiated with |params| (may be NULL). */
int explicit_fetch_with(OSSL_LIB_CTX *lc, const OSSL_PARAM params[]);

/* library_rng_app.c */
int sc_app_choice_alone(void);
int sc_app_choice_then_default(void);
int sc_app_choice_opt_out(void);
int sc_app_config_then_default(void);
int sc_app_config_opt_out(void);
int sc_try_load_no_fallback(void);
int sc_errors_long_data(void);
int sc_errors_mark_kept(void);
int sc_errors_full_queue(void);
int sc_properties_unterminated(void);
int sc_reload(void);
int sc_reload_beside_default(void);
int sc_load_beside_thread(void);
int sc_pin_released_at_cleanup(void);

#endif
