/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hex strings as the tests write their vectors: pairs of digits, either
 * case, no separators.  OpenSSL-free (the s390x stage builds it).
 */
#ifndef CHACHARNG_TEST_HEX_H
#define CHACHARNG_TEST_HEX_H

#include <stddef.h>

/*
 * Decode |hex| into |out| (room for |cap| bytes).  Returns the number of
 * bytes written, or (size_t)-1 if |hex| has an odd length, a character
 * that is not a hex digit, or decodes to more than |cap| bytes.
 */
size_t tu_unhex(unsigned char *out, size_t cap, const char *hex);

/*
 * As tu_unhex(), into a newly allocated buffer (never NULL on success,
 * even when |hex| is empty).  Returns 1 and sets *|out| and *|outlen|, or
 * 0 on a malformed string or allocation failure.
 */
int tu_unhex_alloc(const char *hex, unsigned char **out, size_t *outlen);

#endif
