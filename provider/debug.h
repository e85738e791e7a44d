/* SPDX-License-Identifier: Apache-2.0 */
/*
 * debug.c: the CHACHARNG_DEBUG output.  chacharng_debug_init() reads the
 * variable at each provider load; when it is set, CHACHARNG_DEBUG_LOG
 * prints one line, "chacharng: " and its printf-style arguments, to
 * stderr.  chacharng_debug_enabled() says whether it is on, for callers
 * that must do work before they print.
 */
#ifndef CHACHARNG_DEBUG_H
#define CHACHARNG_DEBUG_H

void chacharng_debug_init(void);
int chacharng_debug_enabled(void);
void chacharng_debug_log(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
#define CHACHARNG_DEBUG_LOG(...)                                               \
    do {                                                                       \
        if (chacharng_debug_enabled())                                         \
            chacharng_debug_log(__VA_ARGS__);                                  \
    } while (0)

#endif
