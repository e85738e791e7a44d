/* SPDX-License-Identifier: Apache-2.0 */
#include "records.h"

#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static const unsigned char zero_rec[TU_REC];

static int rec_cmp(const void *a, const void *b)
{
    return memcmp(a, b, TU_REC);
}

/* 1 if record |i| of the sorted |recs| is all zero or equals the one before. */
static int rec_bad(const unsigned char *recs, size_t i)
{
    const unsigned char *r = recs + i * TU_REC;

    return memcmp(r, zero_rec, TU_REC) == 0
           || (i > 0 && memcmp(r, r - TU_REC, TU_REC) == 0);
}

size_t tu_count_repeats(unsigned char *recs, size_t nrec)
{
    size_t i, rep = 0;

    qsort(recs, nrec, TU_REC, rec_cmp);
    for (i = 0; i < nrec; i++)
        rep += (size_t)rec_bad(recs, i);
    return rep;
}

int tu_recs_add(struct tu_recs *r, const unsigned char *buf, size_t len)
{
    size_t k = len / TU_REC;

    if (r->n + k > r->cap) {
        size_t cap = (r->n + k) * 2 + 64;
        unsigned char *p = realloc(r->p, cap * TU_REC);

        if (p == NULL)
            return 0;
        r->p = p;
        r->cap = cap;
    }
    memcpy(r->p + r->n * TU_REC, buf, k * TU_REC);
    r->n += k;
    return 1;
}

int tu_recs_distinct(struct tu_recs *r, const char *what)
{
    size_t i;

    qsort(r->p, r->n, TU_REC, rec_cmp);
    for (i = 0; i < r->n; i++)
        if (rec_bad(r->p, i)) {
            tu_diag("%s: record %zu of %zu repeats or is all zero", what, i,
                    r->n);
            tu_diag_hex("record", r->p + i * TU_REC, TU_REC);
            return 0;
        }
    return 1;
}

void tu_recs_free(struct tu_recs *r)
{
    free(r->p);
    memset(r, 0, sizeof(*r));
}
