/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The "all outputs distinct" check of the fork, thread and library tests:
 * output is cut into 16-byte records, and no record may equal another or
 * be all zero (what a failed or skipped draw leaves behind).
 * OpenSSL-free.
 */
#ifndef CHACHARNG_TEST_RECORDS_H
#define CHACHARNG_TEST_RECORDS_H

#include <stddef.h>

#define TU_REC 16 /* bytes per record */

/*
 * Number of the |nrec| records at |recs| that equal another one or are
 * all zero.  Sorts |recs|.
 */
size_t tu_count_repeats(unsigned char *recs, size_t nrec);

/* A growing set of records. */
struct tu_recs {
    unsigned char *p;
    size_t n, cap;
};

/* Append the whole records of |buf| (|len| / TU_REC of them); 0 on ENOMEM. */
int tu_recs_add(struct tu_recs *r, const unsigned char *buf, size_t len);

/*
 * 1 if no record of |r| repeats or is all zero; otherwise 0, with the
 * first offender shown as a diagnostic labelled |what|.  Sorts |r|.
 */
int tu_recs_distinct(struct tu_recs *r, const char *what);

void tu_recs_free(struct tu_recs *r);

#endif
