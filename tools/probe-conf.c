/* SPDX-License-Identifier: Apache-2.0
 *
 * `chacharng-probe conf FILE`: what libcrypto's own reader makes of FILE,
 * for a plain process (the section named by openssl_conf) and for Node.js
 * (the section named by nodejs_conf).  chacharngctl(8) compares this
 * listing before and after each edit: its own parser never has to know
 * about .include, continuations, quoting, ${var} or a byte-order mark,
 * because NCONF_load() applies all of them exactly as the config modules
 * will.
 *
 * One line per fact, each starting with a kind:
 *   S PATH SECTION   the key at PATH names SECTION, which exists
 *   M PATH SECTION   the key at PATH names SECTION as a module section,
 *                    and there is no such section
 *   V PATH = VALUE   a value at PATH
 * PATH is the chain of key names from the root (openssl_conf or
 * nodejs_conf), so it does not depend on what the sections are called.
 */
#include <stdio.h>
#include <string.h>

#include <openssl/conf.h>
#include <openssl/err.h>

#include "probe-conf.h"

/* Deep enough for ssl_conf -> system_default -> its commands, and for
 * engines -> an engine -> a section of its own; bounds a cycle. */
#define MAX_DEPTH 4

/* Keys of the init section whose value must be a section: a missing one
 * is printed as such (the config modules then fail or do nothing). */
static int is_module_key(const char *name)
{
    static const char *const keys[] = { "providers",   "random",  "ssl_conf",
                                        "alg_section", "engines", "oid_section",
                                        "stbl_section" };
    size_t i;

    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (strcmp(name, keys[i]) == 0)
            return 1;
    return 0;
}

/* Print every value under |section|, reached through |path|, and follow
 * each value that names a section. */
static void walk(const CONF *conf, const char *path, const char *section,
                 int depth)
{
    STACK_OF(CONF_VALUE) *values = NCONF_get_section(conf, section);
    char sub[1024];
    int i;

    ERR_clear_error();
    if (values == NULL)
        return;
    for (i = 0; i < sk_CONF_VALUE_num(values); i++) {
        const CONF_VALUE *v = sk_CONF_VALUE_value(values, i);

        if ((size_t)snprintf(sub, sizeof(sub), "%s.%s", path, v->name)
            >= sizeof(sub))
            continue;
        if (depth < MAX_DEPTH && NCONF_get_section(conf, v->value) != NULL) {
            printf("S %s %s\n", sub, v->value);
            walk(conf, sub, v->value, depth + 1);
        } else if (depth == 1 && is_module_key(v->name)) {
            printf("M %s %s\n", sub, v->value);
        } else {
            printf("V %s = %s\n", sub, v->value);
        }
        ERR_clear_error();
    }
}

/* The tree under the section the default section's |root| key names. */
static void walk_root(const CONF *conf, const char *root)
{
    const char *init = NCONF_get_string(conf, NULL, root);

    ERR_clear_error();
    if (init == NULL)
        return;
    if (NCONF_get_section(conf, init) == NULL) {
        printf("M %s %s\n", root, init);
        ERR_clear_error();
        return;
    }
    printf("S %s %s\n", root, init);
    walk(conf, root, init, 1);
}

int probe_conf(const char *file)
{
    CONF *conf = NCONF_new(NULL);
    long line = 0;

    if (conf == NULL) {
        fprintf(stderr, "chacharng-probe: out of memory\n");
        return 1;
    }
    if (NCONF_load(conf, file, &line) <= 0) {
        if (line > 0)
            fprintf(stderr, "%s, line %ld: libcrypto cannot parse it\n", file,
                    line);
        ERR_print_errors_fp(stderr);
        NCONF_free(conf);
        return 1;
    }
    walk_root(conf, "openssl_conf");
    walk_root(conf, "nodejs_conf");
    NCONF_free(conf);
    return 0;
}
