/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A reproducible race between two threads, with no hook in the module:
 * the test executable (linked with -rdynamic) defines getrandom,
 * getentropy, OSSL_PROVIDER_do_all and OSSL_PROVIDER_try_load itself (a
 * provider calls the last inside libcrypto's RAND_get0_primary when it
 * keeps itself active), so the dynamic linker binds
 * libcrypto's and the module's calls to these; each forwards to the real
 * function.  Armed for one thread, the chosen call in that thread stops
 * there (once) until the other thread has done its part: the window opens
 * exactly where that call sits, inside libcrypto's or the module's work.
 */
#ifndef CHACHARNG_RACE_WINDOW_H
#define CHACHARNG_RACE_WINDOW_H

#include <pthread.h>

/*
 * Open the window in |thread| at its |nth_do_all|-th OSSL_PROVIDER_do_all
 * (0: never) or at its first getrandom, getentropy or
 * OSSL_PROVIDER_try_load, whichever comes first.
 */
void rw_arm(pthread_t thread, int nth_do_all);
/*
 * In the other thread: wait until the armed thread is in the window or
 * |done| becomes non-zero (read under the window's lock; the armed thread
 * sets it through rw_done), at most |seconds|.  Returns 1 if the window is
 * open.
 */
int rw_wait_open(int seconds);
/* The armed thread's work is over (it never reached the window). */
void rw_done(void);
/* Let the armed thread go on (the other thread's part is done). */
void rw_close(void);

#endif
