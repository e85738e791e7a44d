/* SPDX-License-Identifier: Apache-2.0 */
#include "checked_heap.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#define TAG_LIVE UINT64_C(0x4c495645c0ffee01)
#define TAG_FREED UINT64_C(0x46524545deadbe02)
#define QUARANTINE 4096

/* The header keeps the payload 16-byte aligned, as malloc's is. */
struct head {
    uint64_t tag;
    uint64_t size;
};

/* Freed blocks, still reachable from here (no leak reports), oldest first. */
static struct head *quarantine[QUARANTINE];
static size_t next_out;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void die(const char *what, const void *p, const char *file, int line)
{
    fprintf(stderr, "checked heap: %s %p (freed from %s:%d)\n", what, p,
            file != NULL ? file : "?", line);
    abort();
}

static void *ch_malloc(size_t n, const char *file, int line)
{
    struct head *h = malloc(sizeof(*h) + n);

    (void)file;
    (void)line;
    if (h == NULL)
        return NULL;
    h->tag = TAG_LIVE;
    h->size = n;
    return h + 1;
}

static void ch_free(void *p, const char *file, int line)
{
    struct head *h, *old;

    if (p == NULL)
        return;
    h = (struct head *)p - 1;
    if (h->tag == TAG_FREED)
        die("double free of", p, file, line);
    if (h->tag != TAG_LIVE)
        die("free of a block it did not hand out:", p, file, line);
    /*
     * The bytes stay as they were: code that frees a stale pointer read
     * from a freed block then meets the tag (poisoned bytes would hide the
     * second free behind a garbage pointer).  The sanitizer and valgrind
     * runs see the reads.
     */
    h->tag = TAG_FREED;
    pthread_mutex_lock(&lock);
    old = quarantine[next_out];
    quarantine[next_out] = h;
    next_out = (next_out + 1) % QUARANTINE;
    pthread_mutex_unlock(&lock);
    free(old);
}

static void *ch_realloc(void *p, size_t n, const char *file, int line)
{
    struct head *h;
    void *q;

    if (p == NULL)
        return ch_malloc(n, file, line);
    h = (struct head *)p - 1;
    if (h->tag != TAG_LIVE)
        die("realloc of a freed block", p, file, line);
    if ((q = ch_malloc(n, file, line)) == NULL)
        return NULL;
    memcpy(q, p, h->size < n ? h->size : n);
    ch_free(p, file, line);
    return q;
}

int ch_install(void)
{
    return CRYPTO_set_mem_functions(ch_malloc, ch_realloc, ch_free);
}
