/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A heap for libcrypto that catches what plain glibc lets pass: every
 * block carries a tag, a freed block is kept in quarantine (its memory is
 * not reused for a while), and a second free of a block, or a free of a
 * pointer libcrypto never got from here, aborts the process with a
 * message.  Installed with
 * CRYPTO_set_mem_functions, so it must come before libcrypto's first
 * allocation: call it first thing in main.  The sanitizer and valgrind
 * runs still see every allocation (the blocks come from malloc).
 */
#ifndef CHACHARNG_CHECKED_HEAP_H
#define CHACHARNG_CHECKED_HEAP_H

/* Returns 1 if libcrypto now allocates from the checked heap. */
int ch_install(void);

#endif
