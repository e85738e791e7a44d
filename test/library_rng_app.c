/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The t_library_rng scenarios about what the application owns: its own
 * DRBG choice (the documented residual: chacharng cannot read it back),
 * its provider set, its error queue, and what a reload, a second thread
 * and OPENSSL_cleanup leave.  Each runs in a process of its own, driven by
 * t_library_rng.c.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <openssl/rand.h>

#include "library_rng_scenarios.h"

/*
 * The application's own DRBG choice, made before chacharng is loaded, by
 * RAND_set_DRBG_type or by a [random] section of a config file the
 * application loaded itself: libcrypto has no call that reads it back, so
 * chacharng loaded alone replaces it (the residual README and chacharng(7)
 * document), and CHACHARNG_LIBRARY_RNG=no keeps it as stock libcrypto does.
 */
static int choose_hash_drbg(void)
{
    if (RAND_set_DRBG_type(NULL, "HASH-DRBG", NULL, NULL, "SHA2-256"))
        return 1;
    say("RAND_set_DRBG_type failed");
    return 0;
}

/* chosen, chacharng alone: the choice is not seen, CHACHA20-DRBG */
int sc_app_choice_alone(void)
{
    return choose_hash_drbg() && load(NULL, "chacharng") != NULL
           && library_drbg_is(NULL, CHACHA);
}

/* chosen, chacharng loaded, default loaded: the give-back ends at CTR-DRBG */
int sc_app_choice_then_default(void)
{
    return choose_hash_drbg() && load(NULL, "chacharng") != NULL
           && explicit_fetch_works(NULL) && load(NULL, "default") != NULL
           && library_drbg_is(NULL, CTR);
}

/* the same opted out: RAND_bytes fails alone, then default gives HASH-DRBG */
int sc_app_choice_opt_out(void)
{
    return choose_hash_drbg() && load(NULL, "chacharng") != NULL
           && rand_fails(NULL) && explicit_fetch_works(NULL)
           && load(NULL, "default") != NULL && library_drbg_is(NULL, HASH);
}

/*
 * The oldest error of the queue is USER |reason| with |text|, raised from
 * this file at |line|: taken.
 */
static int next_error_is(int reason, const char *text, int line)
{
    const char *data, *file;
    int flags, at;
    unsigned long e = ERR_get_error_all(&file, &at, NULL, &data, &flags);

    return ERR_GET_LIB(e) == ERR_LIB_USER && ERR_GET_REASON(e) == reason
           && (flags & ERR_TXT_STRING) != 0 && strcmp(data, text) == 0
           && strstr(file, "library_rng_app.c") != NULL && at == line;
}

/*
 * The application loads a config file of its own naming HASH-DRBG, then
 * chacharng and default: CTR-DRBG (the residual), or HASH-DRBG opted out.
 */
static int app_config_then_default(const char *want)
{
    static const char conf[] = "openssl_conf = app_init\n"
                               "[app_init]\n"
                               "random = app_random\n"
                               "[app_random]\n"
                               "random = HASH-DRBG\n"
                               "digest = SHA2-256\n";
    const char *tmp = getenv("TMPDIR");
    char path[4096];
    OPENSSL_INIT_SETTINGS *set = OPENSSL_INIT_new();
    int fd, ok;

    snprintf(path, sizeof(path), "%s/t_library_rng.XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    fd = mkstemp(path);

    ok = fd >= 0 && write(fd, conf, sizeof(conf) - 1) == sizeof(conf) - 1;
    if (fd >= 0)
        close(fd);
    ok = ok && set != NULL && OPENSSL_INIT_set_config_filename(set, path)
         && OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CONFIG, set);
    if (fd >= 0)
        unlink(path);
    OPENSSL_INIT_free(set);
    if (!ok) {
        say("the application's config file did not load");
        ERR_print_errors_fp(stderr);
        return 0;
    }
    return load(NULL, "chacharng") != NULL && explicit_fetch_works(NULL)
           && load(NULL, "default") != NULL && library_drbg_is(NULL, want);
}

int sc_app_config_then_default(void)
{
    return app_config_then_default(CTR);
}

int sc_app_config_opt_out(void)
{
    return app_config_then_default(HASH);
}

/*
 * OSSL_PROVIDER_try_load(NULL, "chacharng", 0): the application keeps no
 * fallback, so chacharng is the only active provider and MD5 is not
 * fetchable.  (Listing the providers now activates nothing: the load has
 * turned the fallbacks off.)
 */
static int list_provider(OSSL_PROVIDER *p, void *arg)
{
    char *names = arg;
    size_t n = strlen(names);

    snprintf(names + n, 256 - n, "%s%s", n > 0 ? " " : "",
             OSSL_PROVIDER_get0_name(p));
    return 1;
}

int sc_try_load_no_fallback(void)
{
    char active[256] = "";
    EVP_MD *md;

    if (keep(OSSL_PROVIDER_try_load(NULL, "chacharng", 0)) == NULL)
        return 0;
    OSSL_PROVIDER_do_all(NULL, list_provider, active);
    if (strcmp(active, "chacharng") != 0) {
        say("active providers: \"%s\", expected \"chacharng\"", active);
        return 0;
    }
    md = EVP_MD_fetch(NULL, "MD5", NULL);
    EVP_MD_free(md);
    ERR_clear_error();
    if (md != NULL) {
        say("MD5 is fetchable, though no provider of it was asked for");
        return 0;
    }
    return library_drbg_is(NULL, CHACHA);
}

/*
 * The application's error queue across a load that succeeds: every entry
 * comes back as it was, its data (however long) and its marks included.
 */
#define LONG_DATA 3000
#define FULL_QUEUE 15 /* ERR_NUM_ERRORS - 1: the most a queue holds */

static int queue_is_empty(const char *when)
{
    if (ERR_peek_error() == 0)
        return 1;
    say("errors left %s:", when);
    ERR_print_errors_fp(stderr);
    return 0;
}

int sc_errors_long_data(void)
{
    static char text[LONG_DATA + 1];
    int line;

    memset(text, 'x', LONG_DATA);
    line = __LINE__ + 1;
    ERR_raise(ERR_LIB_USER, 41);
    ERR_add_error_data(1, text); /* no format buffer: any length */
    if (load(NULL, "chacharng") == NULL)
        return 0;
    if (!next_error_is(41, text, line)) {
        say("the application's %d-byte error data changed across the load",
            LONG_DATA);
        return 0;
    }
    return queue_is_empty("after the load") && library_drbg_is(NULL, CHACHA);
}

int sc_errors_mark_kept(void)
{
    int line = __LINE__ + 1;
    ERR_raise_data(ERR_LIB_USER, 41, "before the application's mark");
    ERR_set_mark();
    if (load(NULL, "chacharng") == NULL)
        return 0;
    if (!ERR_pop_to_mark()) {
        say("the application's mark is gone: ERR_pop_to_mark() returned 0");
        return 0;
    }
    if (!next_error_is(41, "before the application's mark", line)) {
        say("the error before the application's mark is gone");
        return 0;
    }
    return queue_is_empty("after the mark") && library_drbg_is(NULL, CHACHA);
}

int sc_errors_full_queue(void)
{
    char text[FULL_QUEUE][32];
    int line[FULL_QUEUE], i;

    for (i = 0; i < FULL_QUEUE; i++) {
        snprintf(text[i], sizeof(text[i]), "application error %d", i + 1);
        line[i] = __LINE__ + 1;
        ERR_raise_data(ERR_LIB_USER, 100 + i, "%s", text[i]);
    }
    if (load(NULL, "chacharng") == NULL)
        return 0;
    for (i = 0; i < FULL_QUEUE; i++) {
        if (!next_error_is(100 + i, text[i], line[i])) {
            say("entry %d of %d is not the application's own", i + 1,
                FULL_QUEUE);
            ERR_print_errors_fp(stderr);
            return 0;
        }
    }
    return queue_is_empty("after the load") && library_drbg_is(NULL, CHACHA);
}

/*
 * An application's context of chacharng loaded alone, instantiated with a
 * "properties" string (the key libcrypto names its own DRBGs' fetches by)
 * that has no NUL and ends where an unmapped page begins, given as a UTF8
 * string and as a UTF8 pointer: it is read within its data_size (as
 * chacharng(7) says of strings), the context generates, and libcrypto's
 * DRBGs are still chacharng's.
 */
int sc_properties_unterminated(void)
{
    static const char text[] = "provider=chacharng";
    size_t n = sizeof(text) - 1, page = (size_t)sysconf(_SC_PAGESIZE);
    char *map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *s;
    OSSL_PARAM p[2] = { OSSL_PARAM_END, OSSL_PARAM_END };
    int ok;

    if (map == MAP_FAILED || mprotect(map + page, page, PROT_NONE) != 0) {
        say("guard page: %s", strerror(errno));
        return 0;
    }
    s = map + page - n;
    memcpy(s, text, n);
    p[0] = OSSL_PARAM_construct_utf8_string("properties", s, n);
    ok = load(NULL, "chacharng") != NULL && explicit_fetch_with(NULL, p);
    p[0] = OSSL_PARAM_construct_utf8_string("properties", s + 1, n - 1);
    ok = ok && explicit_fetch_with(NULL, p);
    p[0] = OSSL_PARAM_construct_utf8_ptr("properties", &s, n);
    ok = ok && explicit_fetch_with(NULL, p);
    munmap(map, 2 * page);
    return ok && library_drbg_is(NULL, CHACHA);
}

/* loaded alone, unloaded, default loaded, chacharng again: not alone now */
int sc_reload_beside_default(void)
{
    OSSL_PROVIDER *cc = OSSL_PROVIDER_load(NULL, "chacharng");

    if (cc == NULL)
        return 0;
    OSSL_PROVIDER_unload(cc);
    return load(NULL, "default") != NULL && load(NULL, "chacharng") != NULL
           && explicit_fetch_works(NULL) && library_drbg_is(NULL, CTR);
}

/* loaded alone, unloaded, loaded again: RAND_bytes as after the first */
int sc_reload(void)
{
    OSSL_PROVIDER *cc = OSSL_PROVIDER_load(NULL, "chacharng");

    if (cc == NULL)
        return 0;
    OSSL_PROVIDER_unload(cc);
    return load(NULL, "chacharng") != NULL && library_drbg_is(NULL, CHACHA);
}

/*
 * chacharng loaded while a second thread runs (it waits on a pipe): that
 * thread could be reading libcrypto's DRBG settings, so they stay as they
 * are, and RAND_bytes fails as stock libcrypto's does with no default
 * provider.
 */
static void *wait_for_eof(void *arg)
{
    int *fd = arg;
    char c;

    while (read(*fd, &c, 1) < 0 && errno == EINTR)
        ;
    return NULL;
}

int sc_load_beside_thread(void)
{
    pthread_t t;
    int fd[2], ok;

    if (pipe(fd) != 0 || pthread_create(&t, NULL, wait_for_eof, &fd[0]) != 0)
        return 0;
    ok = load(NULL, "chacharng") != NULL;
    close(fd[1]);
    pthread_join(t, NULL);
    close(fd[0]);
    return ok && rand_fails(NULL) && explicit_fetch_works(NULL);
}

/*
 * The library DRBG made from chacharng's name keeps chacharng active after
 * the application's unload; OPENSSL_cleanup (at exit) must still release
 * that activation, so that chacharng's teardown runs (the debug line says
 * so) and nothing of it is left behind.
 */
int sc_pin_released_at_cleanup(void)
{
    OSSL_PROVIDER *cc = OSSL_PROVIDER_load(NULL, "chacharng");
    unsigned char buf[16];
    int ok = cc != NULL && RAND_bytes(buf, sizeof(buf)) > 0;

    if (cc != NULL)
        OSSL_PROVIDER_unload(cc);
    return ok;
}
