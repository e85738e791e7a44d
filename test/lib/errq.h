/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The OpenSSL error queue as the tests read it: shown as TAP diagnostics,
 * or searched for the entry a refused call must have raised.  Both drain
 * the calling thread's queue.
 */
#ifndef CHACHARNG_TEST_ERRQ_H
#define CHACHARNG_TEST_ERRQ_H

/* Show every entry as a diagnostic line, and empty the queue. */
void tu_err_print(void);

/* tu_err_find() flags */
#define TU_ERR_EXACT 1u   /* the reason string equals |reason| */
#define TU_ERR_EITHER 2u  /* |reason| may be in the reason or the detail */
#define TU_ERR_QUIET 4u   /* no diagnostics when nothing matches */
#define TU_ERR_VERBOSE 8u /* every entry as a diagnostic, match or not */

/*
 * 1 if some entry matches all of: its library is |lib|, its reason string
 * is non-empty and contains |reason| (equals it with TU_ERR_EXACT; "" asks
 * for any registered reason), its detail text contains |detail|.  A NULL criterion matches anything.
 * Unless TU_ERR_QUIET, a miss shows what the queue held, so a failing
 * test point explains itself.
 */
int tu_err_find(const char *lib, const char *reason, const char *detail,
                unsigned int flags);

#endif
