/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CHACHARNG_DEBUG output: one line per message on stderr, read from the
 * environment at each provider load.  It stands below everything in
 * provider/ and calls nothing there.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "base.h"
#include "debug.h"

static int debug_on; /* CHACHARNG_DEBUG, read at each provider load */

void chacharng_debug_init(void)
{
    __atomic_store_n(&debug_on, getenv("CHACHARNG_DEBUG") != NULL,
                     __ATOMIC_RELAXED);
}

int chacharng_debug_enabled(void)
{
    return __atomic_load_n(&debug_on, __ATOMIC_RELAXED);
}

void chacharng_debug_log(const char *fmt, ...)
{
    char line[256];
    va_list ap;

    if (!chacharng_debug_enabled())
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    /* one write per line, so that threads' lines do not interleave */
    fprintf(stderr, CHACHARNG_NAME ": %s\n", line);
}
